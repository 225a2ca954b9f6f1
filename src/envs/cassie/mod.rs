//! Cassie (issue 3): the bipedal robot of the Oregon State reference, simulated with rapier3d.
//!
//! * [`description`]: the robot as data (lumped 13-body model, joints, motors, colliders).
//! * [`sim`]: the rapier world built from it, the PD/motor model applied each substep.
//! * [`motor`]: speed-dependent torque limits and the torque-delay ring.
//! * [`env`]: the LocomotionClockEnv task (observation, commands, clock, termination, DR).
//! * [`reward`]: the von Mises and linear clock rewards.
//! * [`clock`], [`commands`], [`vonmises`], [`mirror_lists`]: the task's pieces.

pub mod clock;
pub mod commands;
pub mod description;
pub mod env;
pub mod mirror_lists;
pub mod motor;
pub mod reward;
pub mod sim;
pub mod vonmises;

pub use env::{CassieArgs, CassieEnv};
pub use reward::RewardKind;
