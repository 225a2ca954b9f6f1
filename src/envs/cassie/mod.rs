//! Cassie (issue 3): the bipedal robot of the Oregon State reference, simulated with rapier3d.
//!
//! * [`description`]: the robot as data (lumped 13-body model, joints, motors, colliders).
//! * [`sim`]: the rapier world built from it, the PD/motor model applied each substep.
//! * [`motor`]: speed-dependent torque limits and the torque-delay ring.
//! * [`env`](mod@env): the LocomotionClockEnv task (observation, commands, clock,
//!   termination, DR); [`config`]: its settings (`[env.cassie]`).
//! * [`reward`]: the walking reward and the reference's von Mises and linear clock rewards.
//! * [`reference`](mod@reference): the clock-synced reference gait under the action.
//! * [`clock`], [`commands`], [`vonmises`], [`mirror_lists`]: the task's pieces.

pub mod clock;
pub mod commands;
pub mod config;
pub mod description;
pub mod env;
pub mod mirror_lists;
pub mod motor;
pub mod reference;
pub mod reward;
pub mod sim;
pub mod vonmises;

pub use commands::CommandKind;
pub use config::{CassieConfig, ObsKind};
pub use env::CassieEnv;
pub use reference::ReferenceKind;
pub use reward::RewardKind;
