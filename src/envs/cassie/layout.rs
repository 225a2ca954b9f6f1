//! The sizes of the observation's parts that more than one module lays out: the env writes
//! them, the controller description names them, the mirror lists index them.

use crate::envs::cassie::robot::N;

/// The number of values of the robot-state part of the observation (orientation, angular
/// velocity, motors, passive joints), which the latency delays.
pub const ROBOT_STATE: usize = 35;

/// The values of one past step in the observation's history (`--history`): the robot state as
/// observed, then the action.
pub const HISTORY_FRAME: usize = ROBOT_STATE + N;
