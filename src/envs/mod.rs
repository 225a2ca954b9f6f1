//! Environments: the [`Env`] trait, the registry that maps `--env NAME` to a constructor, and
//! the environments themselves.
//!
//! An `Env` owns its observation buffer and hands out borrowed slices, so the sampler's hot
//! loop does not allocate per step.

pub(crate) mod bodies;
mod cartpole;
pub mod cassie;
pub(crate) mod controller;
pub mod gym;
pub mod levels;
pub(crate) mod mirror;
mod mountaincar;
mod pendulum;
mod registry;
mod sections;
pub mod terrain;
mod walking;

pub use bodies::{BodyPose, BodyShape, Drawable, Primitive};
pub use cartpole::CartPole;
pub use controller::{ConstantInput, ControllerSpec, PdTargets, ReferenceGait};
pub use mirror::{MirrorIndices, Mirrored};
pub use mountaincar::MountainCar;
pub use pendulum::Pendulum;
pub use registry::{
    apply_physics, available, factory, has_physics_models, make, spec, EnvSpec, UnknownEnv, ENVS,
};
pub use sections::{migrate_sections, EnvConfig, EnvSchedule, EnvSection, UserChoices};
pub use walking::{
    course_stretches, CourseLeg, EpisodePlan, PhysicsOverride, Pushes, StageGate, TerrainArg,
    Walking,
};

/// Builds one fresh env. The runner calls it once to read the sizes and mirror lists, and once
/// per sampler worker, so an env of your own trains without being registered
/// (`Runner::start_with`, `examples/custom_env.rs`); `gait` resolves `--env NAME` to one
/// ([`factory`]).
pub type EnvFactory = std::sync::Arc<dyn Fn() -> anyhow::Result<Box<dyn Env>> + Send + Sync>;

/// One named reward component, reported for logs and `gait eval`.
pub type RewardTerm = (&'static str, f32);

/// What [`Env::step`] returns. Borrowed from the env: copy what you keep before stepping again.
#[derive(Debug)]
pub struct Step<'a> {
    /// The observation after the step.
    pub obs: &'a [f32],
    /// The reward of the step.
    pub reward: f32,
    /// True when the episode terminated (fell, failed). A trajectory cut by the time limit is
    /// *not* done: the sampler bootstraps it with the critic's value.
    pub done: bool,
    /// Per-term breakdown of `reward` (empty for envs without terms).
    pub info: &'a [RewardTerm],
}

/// Why an env refused a command or a setting ([`Walking::set_command`], [`Walking::set_push`],
/// [`Env::drive_targets`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CommandError {
    /// The env takes no commands.
    #[error("this env takes no commands")]
    Unsupported,
    /// A course's legs do not start at 0 and increase.
    #[error("a course needs at least one leg, the first from step 0, each later one later")]
    CourseSteps,
    /// A course's ground cannot be laid ([`course_stretches`]).
    #[error("course ground: {0}")]
    CourseGround(String),
    #[error("command {name} = {value} is outside [{min}, {max}] {unit}")]
    /// A command component outside the env's range.
    OutOfRange {
        /// The component (`x`, `push`).
        name: &'static str,
        /// The value given.
        value: f32,
        /// The least accepted.
        min: f32,
        /// The largest accepted.
        max: f32,
        /// Its unit.
        unit: &'static str,
    },
    #[error("a command takes {expected} values, got {got}")]
    /// The wrong number of command values.
    Arity {
        /// The env's command size.
        expected: usize,
        /// Values given.
        got: usize,
    },
}

/// A continuous-control environment with `f32` observations and actions.
///
/// Contract:
/// * [`Env::seed`] fully determines every later random draw of the env (resets, noise), so a
///   seeded env replays bit-identically.
/// * [`Env::reset`] starts a new episode and returns the first observation.
/// * Actions are unbounded `f32`s as a Gaussian policy emits them; each env clips or scales them
///   to its actuator range and documents how.
pub trait Env: Send {
    /// Observation size.
    fn observation_size(&self) -> usize;
    /// Action size.
    fn action_size(&self) -> usize;
    /// Re-seeds the env's random generator.
    fn seed(&mut self, seed: u64);
    /// Starts an episode and returns its first observation.
    fn reset(&mut self) -> &[f32];
    /// Applies one action.
    fn step(&mut self, action: &[f32]) -> Step<'_>;
    /// The last step's simulation blew up: the simulator reset its state (MuJoCo does on a
    /// non-finite acceleration), or left one no robot can be in (Cassie: a pelvis faster than
    /// 28 m/s, `Physics::blew_up`): that step is no transition. The episode loop ends the episode
    /// before it, as a cut, not a termination: the trajectory keeps the steps before and is
    /// bootstrapped from the last good state. Cleared by the next reset.
    fn diverged(&self) -> bool {
        false
    }
    /// `Some(t)`: the episodes that follow are training episodes after `t` train steps of the
    /// run (curricula and training-only perturbations such as observation noise read it);
    /// `None`: evaluation episodes (no training perturbations), the state of a new env. Called
    /// by the sampler before every episode.
    fn set_training(&mut self, _timesteps: Option<u64>) {}
    /// Simulated seconds per step, for pictures played in real time (Gym's classic-control
    /// envs use 0.02).
    fn policy_dt(&self) -> f32 {
        0.02
    }
    /// The walking task's controls (commands, courses, pushes, physics models, a gated
    /// curriculum), for envs that are one; `None` (the default) for any other.
    fn walking(&self) -> Option<&dyn Walking> {
        None
    }
    /// [`Env::walking`], to change its settings.
    fn walking_mut(&mut self) -> Option<&mut dyn Walking> {
        None
    }
    /// The env's left/right mirror lists, for the mirror loss and augmentation; `None` (the
    /// default): no symmetry.
    fn mirror(&self) -> Option<&dyn Mirrored> {
        None
    }
    /// The critic's own observation, for envs that give it more than the policy senses;
    /// `None` (the default): the critic reads the policy's observation.
    fn critic(&self) -> Option<&dyn PrivilegedCritic> {
        None
    }
    /// The env's rigid bodies, for pictures (`gait eval --gif`, the replay page); `None` (the
    /// default) for envs that cannot describe them.
    fn bodies(&self) -> Option<&dyn Drawable> {
        None
    }
    /// Physical quantities of the last step that are not reward terms (e.g. Cassie's speed
    /// along the commanded heading), averaged and printed by `gait eval`. Envs that report
    /// `forward_speed` and `lateral_speed` (m/s, in the commanded frame) get the walking
    /// scalars `Test/Forward Speed`, `Test/Lateral Speed` and `Test/Velocity Error` at every
    /// training evaluation (`algos::tracking`).
    fn metrics(&self) -> &[RewardTerm] {
        &[]
    }
    /// The controller around the policy (layouts, rate, PD targets), for `gait export`: by
    /// default the observation and the actions as they are, at the env's policy rate, no PD
    /// ([`ControllerSpec::plain`]); `None` for an env that has a controller it cannot describe.
    fn controller(&self) -> Option<ControllerSpec> {
        let rate = f64::from(1.0 / self.policy_dt());
        Some(ControllerSpec::plain(self.observation_size(), self.action_size(), rate))
    }
    /// From now on [`Env::step`] takes the PD targets themselves instead of actions, tracked
    /// with `pd`'s gains, torque limits and delay (for `gait eval --onnx`, which builds the
    /// targets from the exported controller description and drives the joints as it says);
    /// refused by envs without PD targets.
    fn drive_targets(&mut self, _pd: &PdTargets) -> Result<(), CommandError> {
        Err(CommandError::Unsupported)
    }
    /// Why the last step ended the episode (e.g. Cassie's "pelvis below 0.65 m"), printed by
    /// `gait eval` after a fall; `None` when it did not end it or the env does not say.
    fn termination(&self) -> Option<&'static str> {
        None
    }
}

/// An env's observation for the critic alone: what it knows beyond what a robot can sense (its
/// true state, the randomized model, the pushes). The critic exists only in training, so the
/// policy stays deployable, and a critic that knows what perturbed the robot predicts returns
/// better (an asymmetric actor-critic, rsl_rl's `critic` observation group).
pub trait PrivilegedCritic {
    /// Values in the critic's observation (at least 1).
    fn critic_observation_size(&self) -> usize;
    /// The critic's observation of the state the last [`Env::reset`] or [`Env::step`]
    /// returned (`critic_observation_size` values).
    fn critic_observation(&self) -> &[f32];
}
