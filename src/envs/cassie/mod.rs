//! Cassie: the bipedal robot of the Oregon State reference, one task over two physics backends.
//!
//! * `physics`: the seam: what the task reads from and does to a simulated Cassie
//!   ([`Physics`]), the per-episode `physics::Dynamics`, `--sim` ([`SimKind`]).
//! * `description`: gait's own robot as data (lumped 13-body model, joints, motors, colliders).
//! * `sim`: the rapier world built from it (`--sim rapier`, the default).
//! * `mujoco`: the lab's `cassie_fast.xml` on MuJoCo 3.17 (`--sim mujoco`).
//! * `motor`: the PD and motor model both backends apply each substep (`motor::Drive`):
//!   speed-dependent torque limits, the torque-delay ring, efficiency, encoder offsets.
//! * `env`: the LocomotionClockEnv task (observation, commands, clock,
//!   termination, DR); `config`: its settings (`[env.cassie]`).
//! * `reward`: the walking reward and the reference's von Mises and linear clock rewards.
//! * `reference`: the clock-synced reference gait under the action.
//! * `critic_obs`: what the critic alone reads with `--privileged-critic`.
//! * `clock`, `commands`, `vonmises`, `mirror_lists`: the task's pieces.

pub(crate) mod clock;
pub(crate) mod commands;
pub(crate) mod config;
pub(crate) mod controller;
pub(crate) mod critic_obs;
pub(crate) mod description;
pub(crate) mod env;
pub(crate) mod estimator;
pub(crate) mod layout;
pub(crate) mod mirror_lists;
pub(crate) mod motor;
pub(crate) mod mujoco;
pub(crate) mod physics;
pub(crate) mod reference;
pub(crate) mod reward;
pub(crate) mod sim;
pub(crate) mod vonmises;

pub use commands::CommandKind;
pub use config::{CassieConfig, ObsKind};
pub use env::CassieEnv;
pub use mujoco::route_messages as route_mujoco_messages;
pub use physics::{Physics, SimKind};
pub use reference::ReferenceKind;
pub use reward::{ProgressKind, RewardKind, TurnKind};
