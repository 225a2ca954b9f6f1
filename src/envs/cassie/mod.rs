//! Cassie: the bipedal robot of the Oregon State reference, one task over two physics backends.
//!
//! * `robot`: Cassie itself: its sizes and the per-episode `Dynamics` (`robot::dims`), gait's
//!   own robot as data (`robot::description`: lumped 13-body model, joints, motors, colliders),
//!   and the PD and motor model every backend applies each substep (`robot::motor::Drive`:
//!   speed-dependent torque limits, the torque-delay ring, efficiency, encoder offsets).
//! * `physics`: the seam: what the task reads from and does to a simulated Cassie
//!   ([`Physics`]), `--sim` ([`SimKind`]), and its backends: `physics::rapier`, the rapier world
//!   built from the description (`--sim rapier`, the default), and `physics::mujoco`, the lab's
//!   `cassie_fast.xml` on MuJoCo 3.17 (`--sim mujoco`), listed once in `physics::backends`.
//! * `env`: the LocomotionClockEnv task (observation, commands, clock,
//!   termination, DR); `config`: its settings (`[env.cassie]`).
//! * `reward`: the walking reward and the reference's von Mises and linear clock rewards.
//! * `reference`: the clock-synced reference gait under the action.
//! * `critic_obs`: what the critic alone reads with `--privileged-critic`; `height_scan`: the
//!   ground's heights around the pelvis, an actor input for robots with perception.
//! * `preset.toml`: the walking preset, as data; `give_way`: which of its settings turn off
//!   for the user's own.
//! * `eval_physics`: the model, timestep, floor and sensing `gait eval` asks for.
//! * `clock`, `commands`, `vonmises`, `mirror_lists`: the task's pieces.

pub(crate) mod clock;
pub(crate) mod commands;
pub(crate) mod config;
pub(crate) mod controller;
pub(crate) mod critic_obs;
mod curriculum;
pub(crate) mod env;
pub(crate) mod estimator;
mod eval_physics;
mod give_way;
pub(crate) mod height_scan;
pub(crate) mod layout;
mod migrate;
pub(crate) mod mirror_lists;
pub(crate) mod physics;
pub(crate) mod reference;
pub(crate) mod reward;
pub(crate) mod robot;
pub(crate) mod stage;
pub(crate) mod vonmises;

pub use commands::CommandKind;
pub use config::{CassieConfig, ObsKind};
pub use env::CassieEnv;
pub use migrate::migrate_config;
pub use physics::mujoco::route_messages as route_mujoco_messages;
pub use physics::{Model, Models, Physics, SimKind};
pub use reference::ReferenceKind;
pub use reward::{ProgressKind, RewardKind, TurnKind};

impl crate::envs::EnvSchedule for CassieConfig {
    fn check(&self) -> Result<(), String> {
        CassieConfig::check(self)
    }

    fn stage_gate(&self) -> Option<crate::envs::StageGate> {
        CassieConfig::stage_gate(self)
    }

    fn settled_from(&self, stage_from: Option<u64>) -> Option<u64> {
        CassieConfig::settled_from(self, stage_from)
    }

    /// [`CassieConfig::robustness_at`].
    fn perturbation_strength(&self, timesteps: u64, stage_from: Option<u64>) -> Option<f64> {
        Some(self.robustness_at(timesteps, stage_from))
    }

    fn level_rule(&self) -> Option<crate::envs::levels::LevelRule> {
        CassieConfig::level_rule(self)
    }

    fn observation_names(&self) -> Option<Vec<String>> {
        Some(controller::observation(self))
    }

    /// The height scan's values, at `height_scan::NORM` (D-066).
    fn fixed_inputs(&self) -> Vec<crate::policies::normalizer::FixedInput> {
        if !self.height_scan {
            return Vec::new();
        }
        let at = layout::scan_at(self);
        let [mean, std] = height_scan::NORM;
        (at..at + height_scan::LEN)
            .map(|index| crate::policies::normalizer::FixedInput { index, mean, std })
            .collect()
    }

    fn give_way(&mut self, user: &crate::envs::UserChoices) -> Vec<String> {
        give_way::fresh(self, user)
    }

    fn give_way_continued(&mut self, user: &crate::envs::UserChoices) -> Vec<String> {
        give_way::mixing(self, user).into_iter().collect()
    }

    fn apply_physics(
        &mut self,
        over: &crate::envs::PhysicsOverride,
    ) -> Option<Result<String, String>> {
        Some(eval_physics::apply(self, over))
    }
}
