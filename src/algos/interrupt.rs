//! Graceful stop on Ctrl-C / SIGTERM. The binary's signal handler sets [`STOP`]; samplers
//! abandon their trajectories at the next step, the training loop abandons the iteration in
//! progress (the run directory still holds the previous one, complete) and returns.

use std::sync::atomic::{AtomicBool, Ordering};

use thiserror::Error;

/// Set once a stop was requested.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Whether a stop (Ctrl-C, SIGTERM) was requested.
pub fn requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Returned by collection when a stop was requested.
#[derive(Debug, Error)]
#[error("interrupted")]
pub struct Interrupted;
