//! `gait play`: drive a trained policy live from a browser page. A local server steps the env
//! in real time at the policy rate (one thread, `live`) and streams every step's body poses,
//! contacts, command and measured speeds to the pages over a WebSocket (`server`); the page
//! (`assets/play.html`, the replay page's three.js scene) sends the keyboard's and the
//! gamepad's commands, pushes, resets and the ground back. The first page to connect drives,
//! later ones watch; the driver's page closing, or Ctrl-C, ends the server.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use anyhow::{Context, Result};

use crate::config::UsageError;
use crate::envs::PhysicsOverride;
use crate::eval::{Driven, Source};

mod live;
mod messages;
mod server;

/// What `gait play` runs (flags: `crate::cli::PlayFlags`).
#[derive(Debug, Clone, PartialEq)]
pub struct PlayOptions {
    /// The policy: a run's checkpoint, or an exported ONNX file.
    pub source: Source,
    /// Another physics, floor or ground than the run's, as `gait eval` takes them.
    pub physics: PhysicsOverride,
    /// The address to listen on (127.0.0.1 unless asked).
    pub host: IpAddr,
    /// The port (0: any free one; the address printed names it).
    pub port: u16,
    /// Simulated seconds per wall-clock second (1: real time; 0.25: slow motion).
    pub speed: f64,
    /// Seeds each episode's initial state (episode k: the k-th seed derived from it).
    pub seed: u64,
}

/// The slowest and fastest `--speed`.
pub const SPEED_RANGE: std::ops::RangeInclusive<f64> = 0.05..=4.0;

/// How `gait play` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlayEnd {
    /// The driving page closed.
    PageClosed,
    /// Ctrl-C or SIGTERM.
    Interrupted,
}

/// Serves the page until the driving page closes or a stop is requested; prints the address.
pub fn run_play(options: &PlayOptions, out: &mut impl Write) -> Result<PlayEnd> {
    // Everything a bad flag can refuse is refused before the port is taken.
    let driven = Driven::new(&options.source, options.physics)?;
    let walking = driven.env.walking().is_some() && driven.env.bodies().is_some();
    if !walking {
        return Err(UsageError(format!(
            "gait play drives walking envs whose bodies can be drawn (Cassie); the policy is for \
             '{}'",
            driven.env_name
        ))
        .into());
    }
    crate::replay::ensure_pages_supported()?;
    let page = crate::replay::page_with_scene(PAGE)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .context("starting the server's runtime")?;
    let addr = SocketAddr::new(options.host, options.port);
    let listener = runtime.block_on(tokio::net::TcpListener::bind(addr)).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::AddrInUse => format!(
                "port {} is in use on {} (another gait play or server?): pick another with \
                 --port, or --port 0 for any free one",
                options.port, options.host
            ),
            std::io::ErrorKind::AddrNotAvailable => {
                format!("--host {}: not an address of this machine", options.host)
            }
            std::io::ErrorKind::PermissionDenied => format!(
                "--port {}: not allowed to listen there (ports below 1024 need privileges)",
                options.port
            ),
            _ => format!("listening on {addr}: {e}"),
        };
        UsageError(why)
    })?;
    let bound = listener.local_addr().context("reading the address listened on")?;
    writeln!(out, "driving {} on '{}'", driven.checkpoint.display(), driven.env_name)?;
    if let Some(line) = &driven.physics {
        writeln!(out, "{line}")?;
    }
    if !options.host.is_loopback() {
        writeln!(
            out,
            "listening on {} (not loopback): anyone who can reach this machine can watch, and \
             the first page drives",
            options.host
        )?;
    }
    writeln!(out, "open http://{bound}/ in a browser (Ctrl-C stops)")?;
    out.flush()?;
    let hub = Arc::new(live::Hub::new());
    let sim = live::spawn(driven, options.clone(), hub.clone())?;
    let served = runtime.block_on(server::serve(listener, page, hub.clone()));
    hub.stop();
    let ended = sim.join().map_err(|_| anyhow::anyhow!("the simulation thread panicked"))?;
    served?;
    let ended = ended?;
    if ended == PlayEnd::Interrupted {
        writeln!(out, "stopped (interrupted)")?;
    } else {
        writeln!(out, "stopped: the driving page closed")?;
    }
    Ok(ended)
}

/// The page template (`/*GAIT_THREE_JS*/` and friends replaced by [`crate::replay::page_with_scene`]).
const PAGE: &str = include_str!("../../assets/play.html");
