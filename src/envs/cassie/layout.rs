//! The sizes of the observation's parts that more than one module lays out: the env writes
//! them, the controller description names them, the mirror lists index them.

use crate::envs::cassie::config::CassieConfig;
use crate::envs::cassie::height_scan;
use crate::envs::cassie::robot::N;

/// The number of values of the robot-state part of the observation (orientation, angular
/// velocity, motors, passive joints), which the latency delays.
pub const ROBOT_STATE: usize = 35;

/// The values of one past step in the observation's history (`--history`): the robot state as
/// observed, then the action.
pub const HISTORY_FRAME: usize = ROBOT_STATE + N;

/// The observation's length for `config`: 44 (46 with the full clock), plus 3 with a velocity
/// input, plus [`HISTORY_FRAME`] per past step of `--history`, plus [`height_scan::LEN`] with
/// `--height-scan`.
pub fn observation_len(config: &CassieConfig) -> usize {
    scan_at(config) + if config.height_scan { height_scan::LEN } else { 0 }
}

/// Where the height scan begins (`--height-scan`): after the history.
pub fn scan_at(config: &CassieConfig) -> usize {
    history_at(config) + config.history * HISTORY_FRAME
}

/// Where the history's frames begin: after the task part and the velocity input, which are
/// the three values before it.
pub fn history_at(config: &CassieConfig) -> usize {
    let base = if config.full_clock { 46 } else { 44 };
    base + if config.obs.observes_velocity() { 3 } else { 0 }
}
