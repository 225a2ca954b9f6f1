//! The physics seam under the Cassie task: what the task reads from and does to a simulated
//! Cassie, whatever simulates it.
//!
//! The task ([`super::env`]) computes the observation, the reference gait, the PD targets, the
//! reward and the termination; a [`Physics`] runs the substeps, with the lab's PD and motor model
//! ([`super::robot::motor::Drive`], the same code for every backend) applied each substep. Two backends:
//!
//! * [`SimKind::Rapier`]: gait's own lumped 13-body rapier3d model ([`rapier`]); its shin
//!   and heel springs are rigid, so the shins read 0.
//! * [`SimKind::Mujoco`]: MuJoCo 3.17 on the lab's own `cassie_fast.xml` ([`mujoco`]),
//!   with its shin and heel springs and the closed achilles and plantar-rod loops.
//!
//! Conventions, the same on both: the world is z-up; the pelvis origin is the lab's `qpos[0:3]`
//! (1.01 m high at reset); joint angles are absolute (the lab's `qpos`, right leg in the lab's
//! sign convention); the order of motors is the policy's (left roll, yaw, pitch, knee, foot, then
//! right); the passive joints are `[L shin, L tarsus, R shin, R tarsus]`.

mod backends;
mod models;
pub(crate) mod mujoco;
pub(crate) mod rapier;

use clap::ValueEnum;
use rapier3d::glamx::{Quat, Vec3};
use serde::{Deserialize, Serialize};

use super::robot::motor::Motor;
use super::robot::{Dynamics, N};
use crate::envs::{BodyPose, BodyShape};

pub(crate) use backends::{backend, build};
pub use models::{Model, Models};

/// A physics backend (`--sim`'s names; a run's [`Models`] mixes them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum SimKind {
    /// gait's rapier3d model: a rigid lumped 13-body tree, the achilles loop as a joint coupling.
    #[default]
    Rapier,
    /// MuJoCo 3.17 on the lab's `cassie_fast.xml` (springs and closed loops as the lab has them).
    Mujoco,
}

impl SimKind {
    /// The physics timestep (s) when none is set: the backend's (`physics/backends.rs`).
    pub fn default_dt(self) -> f64 {
        backend(self).default_dt
    }

    /// The `--sim` name: the backend's row's (`physics/backends.rs`).
    pub fn name(self) -> &'static str {
        backend(self).name
    }
}

/// The pelvis speed (m/s) past which a state is a blown-up simulation ([`Physics::blew_up`]):
/// four times the fastest the task asks for (a 2 m/s command with a 5 m/s push on top, the
/// largest `--push`), and beyond any fall (a free fall from the 1 m stance reaches 4.4 m/s).
pub const MAX_PELVIS_SPEED: f32 = 28.0;

/// The pelvis spin (rad/s) past which a state is a blown-up simulation: ten turns a second.
pub const MAX_PELVIS_SPIN: f32 = 20.0 * std::f32::consts::PI;

/// A simulated Cassie, as the task sees it. Implementations keep no per-step allocation.
pub trait Physics: Send {
    /// Which simulator this is.
    fn kind(&self) -> SimKind;

    /// Starts a new episode: the lab's reset pose yawed by `heading` about the vertical, at
    /// rest, with `dynamics`; the torque delay ring cleared.
    fn reset(&mut self, dynamics: &Dynamics, heading: f32);

    /// Runs `substeps` physics steps holding the PD `targets` (absolute joint angles, policy
    /// order), the PD and motor model applied every substep.
    fn step(&mut self, targets: &[f32; N], substeps: usize);

    /// The physics timestep (s) the episode runs at.
    fn timestep(&self) -> f64;

    /// Runs at `dt` (s) from the next [`Physics::reset`] on. Why: a run may train MuJoCo at
    /// its own timestep (`--sim rapier+mujoco@0.004`) but scores its selection episodes at the timestep `gait eval` runs
    /// (`CassieEnv`'s eval models), where the same weights walk up to 0.14 m/s faster.
    fn set_timestep(&mut self, dt: f64);

    /// The last [`Physics::step`] blew up: the simulator found a non-finite state and reset it
    /// (MuJoCo's bad qpos / qvel / qacc warnings, after which it restarts the model from
    /// `qpos0`). What that step left is no transition of the robot, so the episode ends before
    /// it. A reset clears it. Rapier never resets a state; its non-finite values reach the
    /// observation, which the sampler refuses.
    fn diverged(&self) -> bool {
        false
    }

    /// The state the last [`Physics::step`] left is no robot's: [`Physics::diverged`], or a
    /// pelvis faster than `MAX_PELVIS_SPEED` or spinning faster than `MAX_PELVIS_SPIN`
    /// (or not finite). Why: a contact can throw a model to thousands of m/s without a
    /// non-finite value, which MuJoCo's bad-state check (|qvel| > 1e10) never sees; about one
    /// training evaluation in a hundred logged a `Test/Velocity Error` of 10-145 m/s that way
    /// (docs/notebook/cassie-runs.md). The episode ends before such a step, as before a MuJoCo reset.
    fn blew_up(&self) -> bool {
        let fast = |v: Vec3, max: f32| !v.is_finite() || v.length() > max;
        self.diverged()
            || fast(self.base_linvel(), MAX_PELVIS_SPEED)
            || fast(self.base_angvel(), MAX_PELVIS_SPIN)
    }

    /// Drives the joints with `motors` (policy order) from the next reset on: their PD gains,
    /// torque limits and damping.
    fn set_motors(&mut self, motors: [Motor; N]);

    /// The ground from the next reset on: `terrain` on the floor, or the flat floor alone.
    fn set_terrain(&mut self, terrain: Option<std::sync::Arc<crate::envs::terrain::Heightfield>>);

    /// A world-frame force (N) on the pelvis COM, applied every substep from now until it is
    /// set again (zero: none; a reset clears it). Pushes are impulses held this way.
    fn set_push(&mut self, force: Vec3);

    /// Simulated time since the reset (s).
    fn time(&self) -> f64;

    /// World position of the pelvis origin (the lab's `qpos[0:3]`).
    fn base_position(&self) -> Vec3;

    /// Pelvis orientation (world frame).
    fn base_rotation(&self) -> Quat;

    /// World-frame linear velocity of the pelvis origin (the lab's `qvel[0:3]`).
    fn base_linvel(&self) -> Vec3;

    /// World-frame angular velocity of the pelvis.
    fn base_angvel(&self) -> Vec3;

    /// Pelvis acceleration over the last substep, MuJoCo's `objectAcceleration` convention:
    /// `[angular (3), linear (3)]`, world frame, gravity included (reads +9.81 z at rest).
    fn base_acceleration(&self) -> [f32; 6];

    /// Motor angles as the encoders read them (true − noise), policy order.
    fn motor_positions(&self, out: &mut [f32]);

    /// Motor velocities (rad/s), action order, into `out`.
    fn motor_velocities(&self, out: &mut [f32]);

    /// [L shin, L tarsus, R shin, R tarsus] angles as measured (true − noise).
    fn passive_positions(&self, out: &mut [f32]);

    /// Passive joint velocities (rad/s) into `out`.
    fn passive_velocities(&self, out: &mut [f32]);

    /// Joint-side torques applied during the last substep (after delay and efficiency).
    fn applied_torques(&self) -> &[f32; N];

    /// Sum of contact forces on a foot during the last substep (N, world frame, on the foot).
    fn foot_force(&self, side: usize) -> Vec3;

    /// `[linear, angular]` world velocity of a foot's COM.
    fn foot_velocity(&self, side: usize) -> (Vec3, Vec3);

    /// World pose of the foot site (the lab's `foot-mid`): position, and the foot's rotation
    /// since the unyawed reset pose (identity there).
    fn foot_site(&self, side: usize) -> (Vec3, Quat);

    /// Whether a heel spring touches anything (knee walking).
    fn knee_contact(&self) -> bool;

    /// The drawable bodies with their shapes in body frames, for pictures.
    fn body_shapes(&self) -> Vec<BodyShape>;

    /// Each body's world pose, in [`Physics::body_shapes`] order (cleared first).
    fn body_poses(&self, out: &mut Vec<BodyPose>);

    /// Whether each body touches anything now, in [`Physics::body_shapes`] order.
    fn body_contacts(&self, out: &mut Vec<bool>);

    /// True motor angles (no encoder offsets), for physical checks.
    fn true_motor_positions(&self) -> [f32; N];

    /// True (knee, tarsus) angles of a leg, for the achilles-coupling check.
    fn knee_tarsus(&self, side: usize) -> (f32, f32);

    /// Deepest penetration among the current contacts (m, ≥ 0).
    fn max_penetration(&self) -> f32;

    /// A leg's [shin, heel-spring] deflections (rad), for models that have the springs.
    fn spring_deflections(&self, _side: usize) -> Option<[f32; 2]> {
        None
    }
}

#[cfg(test)]
mod terrain_tests;
