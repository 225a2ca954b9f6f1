//! What the page and the server say to each other over the WebSocket, as JSON objects with a
//! `type` field. The page sends [`Input`]s; the server sends a [`Role`] on connecting, a
//! [`Scene`] at every new episode (and to every new page), a [`Step`] per policy step and a
//! [`Refused`] when an input was not taken.

use serde::{Deserialize, Serialize};

use crate::envs::BodyShape;
use crate::replay::{Frame, Ground};

/// What a page asks for. Only the driving page's inputs are taken. `seq` is the page's own
/// count, echoed as [`Step::ack`] once the env runs it (the page times its inputs with it).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Input {
    /// Run this command `[x m/s, y m/s, turn rad/s]` from the next step on (clamped to the
    /// policy's trained range).
    Command { command: [f32; 3], seq: u64 },
    /// Push the robot by this speed change (world x, y; m/s) at the next step.
    Push { dv: [f32; 2], seq: u64 },
    /// End the episode and start a new one.
    Reset { seq: u64 },
    /// Walk on this ground from a new episode on: `KIND[:DIFFICULTY]` as `--terrain` takes it.
    Ground { terrain: String, seq: u64 },
}

impl Input {
    /// The page's count for this input.
    pub fn seq(&self) -> u64 {
        match self {
            Self::Command { seq, .. }
            | Self::Push { seq, .. }
            | Self::Reset { seq }
            | Self::Ground { seq, .. } => *seq,
        }
    }
}

/// Sent once to each page when it connects: whether it drives or watches.
#[derive(Debug, Serialize)]
pub struct Role {
    /// Always "role".
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// "drive" or "watch".
    pub role: &'static str,
}

/// What the page needs to draw an episode and drive it; sent at every new episode and to
/// every page that connects.
#[derive(Debug, Serialize)]
pub struct Scene {
    /// Always "scene".
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The env's name.
    pub env: String,
    /// What is driven (the checkpoint or the ONNX file).
    pub policy: String,
    /// Simulated seconds per step.
    pub dt: f32,
    /// Simulated seconds per wall-clock second.
    pub speed: f64,
    /// The bodies, in the order of every step's poses.
    pub bodies: Vec<BodyShape>,
    /// The trained range of each command entry, `[low, high]` for x, y and turn.
    pub range: [[f32; 2]; 3],
    /// The grounds the page may choose (`KIND` names; empty: only the flat floor).
    pub terrains: Vec<&'static str>,
    /// The ground now, `KIND[:DIFFICULTY]`.
    pub terrain: String,
    /// The episode's count since the server started.
    pub episode: u64,
    /// The ground around the start, when it is not the flat floor.
    pub ground: Option<Ground>,
    /// How the previous episode ended ("fell: ...", "reset", "ground changed"); none for the
    /// first.
    pub ended: Option<String>,
    /// The previous episode's length (s).
    pub ended_after: Option<f32>,
}

/// One policy step, after it was taken.
#[derive(Debug, Serialize)]
pub struct Step<'a> {
    /// Always "step".
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The episode's count.
    pub episode: u64,
    /// The step's index in the episode.
    pub t: u64,
    /// Poses, contacts, speeds and reward, as a replay frame holds them.
    pub frame: &'a Frame,
    /// The command the step ran.
    pub command: [f32; 3],
    /// The gait cycle's phase in [0, 1), for envs with a clock.
    pub phase: Option<f32>,
    /// The push this step applied (world `dv`, m/s), if it applied one.
    pub push: Option<[f32; 2]>,
    /// The last driving input the env has taken ([`Input`]'s `seq`; 0 before any).
    pub ack: u64,
    /// How far the loop lags behind its real-time schedule (ms): 0 when it keeps up.
    pub behind_ms: f32,
}

/// An input the server did not take, and why.
#[derive(Debug, Serialize)]
pub struct Refused {
    /// Always "refused".
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The input's `seq` (0 if it could not be read).
    pub seq: u64,
    /// Why.
    pub why: String,
}
