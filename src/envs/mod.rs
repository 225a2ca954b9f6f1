//! Environments: the [`Env`] trait, the registry that maps `--env NAME` to a constructor, and
//! the environments themselves.
//!
//! An `Env` owns its observation buffer and hands out borrowed slices, so the sampler's hot
//! loop does not allocate per step.

pub(crate) mod bodies;
mod cartpole;
pub mod cassie;
pub(crate) mod controller;
pub(crate) mod mirror;
mod mountaincar;
mod pendulum;
mod registry;

pub use bodies::{BodyPose, BodyShape, Primitive};
pub use cartpole::CartPole;
pub use controller::ControllerSpec;
pub use mirror::MirrorIndices;
pub use mountaincar::MountainCar;
pub use pendulum::Pendulum;
pub use registry::{available, factory, make, spec, EnvConfig, EnvSpec, UnknownEnv, ENVS};

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

/// Which pushes an env applies ([`Env::set_push`]); a push is a speed change of the whole
/// robot (m/s) in a random horizontal direction, at the env's push times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pushes {
    /// The env's own training pushes (its config, its schedule).
    Own,
    /// The env's own pushes at full strength, without a training schedule: training-time
    /// evaluations, so that `Test/Return` measures the robustness the run trains for, the same
    /// way at every iteration.
    Full,
    /// Each push U(0, v): the training distribution of `--push v` (`gait eval --push v`;
    /// `UpTo(0)` turns pushes off, what evaluations run).
    UpTo(f32),
    /// Every push exactly v (`gait eval --push v --push-exact`).
    Exactly(f32),
}

/// Why [`Env::set_command`] refused a command.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CommandError {
    /// The env takes no commands.
    #[error("this env takes no commands")]
    Unsupported,
    /// A course's legs do not start at 0 and increase.
    #[error("a course needs at least one leg, the first from step 0, each later one later")]
    CourseSteps,
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

/// One leg of a scripted course ([`Env::set_course`]): a command held from policy step
/// `start` of the episode on (the first leg's `start` is 0, later ones strictly increase).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CourseLeg {
    /// The policy step the leg starts at.
    pub start: u32,
    /// Its command `[x, y, turn]` (m/s, m/s, rad/s).
    pub command: [f32; 3],
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
    /// Sets the task command (e.g. x velocity, y velocity, turn rate) for `gait eval --command`.
    /// Refuses (and changes nothing) for envs without commands and for values the env cannot
    /// mean, NaN and infinities included.
    fn set_command(&mut self, _command: &[f32]) -> Result<(), CommandError> {
        Err(CommandError::Unsupported)
    }
    /// Returns to drawing commands from the env's own distribution (undoes
    /// [`Env::set_command`] and [`Env::set_course`]).
    fn clear_command(&mut self) {}
    /// Runs every following episode through `course`: each leg's command from its first step
    /// on, the last one held after the course ends (`gait eval --course`). Refuses (and changes
    /// nothing) as [`Env::set_command`] does, for an empty course too.
    fn set_course(&mut self, _course: &[CourseLeg]) -> Result<(), CommandError> {
        Err(CommandError::Unsupported)
    }
    /// The pushes of the episodes that follow ([`Pushes`]). Refused by envs that cannot be
    /// pushed.
    fn set_push(&mut self, _pushes: Pushes) -> Result<(), CommandError> {
        Err(CommandError::Unsupported)
    }
    /// `Some(t)`: the episodes that follow are training episodes after `t` train steps of the
    /// run (curricula and training-only perturbations such as observation noise read it);
    /// `None`: evaluation episodes (no training perturbations), the state of a new env. Called
    /// by the sampler before every episode.
    fn set_training(&mut self, _timesteps: Option<u64>) {}
    /// `true`: the episodes that follow are prenormalization's, before a run's first training
    /// step. They are evaluation episodes ([`Env::set_training`] `None`), except that a setting
    /// the run stages to begin later acts as it does at the run's first step, so that a staged
    /// change (Cassie's `--full-step-start`) leaves the run before its start exactly as it was
    /// without the change. Command draws stay the evaluation's, so the normalizer sees every
    /// command input vary. `false` (the state of a new env): as before.
    fn set_prenormalizing(&mut self, _on: bool) {}
    /// The train step at which the run's gated stage began (`None`: not yet), for envs whose
    /// curriculum waits on an evaluation ([`StageGate`]). Called by the sampler before every
    /// episode, with [`Env::set_training`].
    fn set_stage(&mut self, _from: Option<u64>) {}
    /// Fixed commands the training-time evaluation cycles through (eval episode `i` runs
    /// command `i % n`), so that its speed metrics compare across iterations. Empty: the
    /// env's own draws.
    fn eval_commands(&self) -> &'static [[f32; 3]] {
        &[]
    }
    /// The mirror image of a command, for an env whose task is mirror-symmetric (Cassie: y and
    /// turn negate under the sagittal mirror, as its mirror loss assumes); `None`: no mirror.
    /// `--selection-commands mirrored` adds the images of the eval commands to the selection
    /// (`crate::algos::tracking::selection_commands`).
    fn mirror_command(&self, _command: [f32; 3]) -> Option<[f32; 3]> {
        None
    }
    /// How many physics models the env's episodes draw among (Cassie with `--sim mixed`: 2,
    /// gait's rapier model and the lab's MuJoCo model), so that the selection episodes of
    /// `--best-by tracking` and `cells` run every eval command on every model.
    fn eval_models(&self) -> usize {
        1
    }
    /// The name of physics model `model` (`< eval_models()`), for the selection's per-cell
    /// table (`selection.csv`).
    fn eval_model_name(&self, _model: usize) -> &'static str {
        "default"
    }
    /// `Some(k)`, `k < eval_models()`: the episodes that follow run on model `k` instead of
    /// drawing one (the draw is still made, so every other draw stays where it was); `None`:
    /// drawn again. An env with one model accepts only `None` and `Some(0)`.
    fn set_eval_model(&mut self, model: Option<usize>) -> Result<(), CommandError> {
        match model {
            None | Some(0) => Ok(()),
            Some(_) => Err(CommandError::Unsupported),
        }
    }
    /// Simulated seconds per step, for pictures played in real time (Gym's classic-control
    /// envs use 0.02).
    fn policy_dt(&self) -> f32 {
        0.02
    }
    /// The env's rigid bodies as drawable shapes, for `gait eval --gif`; `None` for envs that
    /// cannot describe their bodies.
    fn body_shapes(&self) -> Option<Vec<BodyShape>> {
        None
    }
    /// Each body's world pose now, in [`Env::body_shapes`] order (cleared first).
    fn body_poses(&self, out: &mut Vec<BodyPose>) {
        out.clear();
    }
    /// Whether each body is in contact now, in [`Env::body_shapes`] order (cleared first; left
    /// empty by envs that do not know).
    fn body_contacts(&self, out: &mut Vec<bool>) {
        out.clear();
    }
    /// Signed-permutation mirror list for observations (left/right symmetry), if the env has one.
    fn observation_mirror_indices(&self) -> Option<MirrorIndices> {
        None
    }
    /// Values in the critic's own observation; 0 (the default): the critic reads the policy's
    /// observation. An env that knows more than a robot can sense (its true state, the
    /// randomized model, the pushes) gives it to the critic alone: the critic exists only in
    /// training, so the policy stays deployable, and a critic that knows what perturbed the
    /// robot predicts returns better (an asymmetric actor-critic, rsl_rl's `critic`
    /// observation group).
    fn critic_observation_size(&self) -> usize {
        0
    }
    /// The critic's observation of the state the last [`Env::reset`] or [`Env::step`]
    /// returned (`critic_observation_size` values).
    fn critic_observation(&self) -> &[f32] {
        &[]
    }
    /// Signed-permutation mirror list for the critic's own observation, if the env has one
    /// (mirror augmentation needs it).
    fn critic_observation_mirror_indices(&self) -> Option<MirrorIndices> {
        None
    }
    /// Signed-permutation mirror list for actions, if the env has one.
    fn action_mirror_indices(&self) -> Option<MirrorIndices> {
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
    /// `true`: [`Env::step`] takes the PD targets themselves instead of actions (for `gait
    /// eval --onnx`, which builds them from the exported controller description); refused by
    /// envs without PD targets.
    fn set_targets_input(&mut self, _on: bool) -> Result<(), CommandError> {
        Err(CommandError::Unsupported)
    }
    /// Why the last step ended the episode (e.g. Cassie's "pelvis below 0.65 m"), printed by
    /// `gait eval` after a fall; `None` when it did not end it or the env does not say.
    fn termination(&self) -> Option<&'static str> {
        None
    }
}

/// A curriculum stage that begins at an evaluation rather than at a step count: the first
/// training evaluation at or after `not_before` train steps whose `Test/Forward Speed` reaches
/// `forward_speed` opens it. The runner decides (evaluations are deterministic, so the stage
/// starts at the same step for any worker or rank count), keeps the step in the resume state
/// and tells every env through [`Env::set_stage`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageGate {
    /// Train steps before which no evaluation opens it.
    pub not_before: u64,
    /// `Test/Forward Speed` (m/s) that opens it.
    pub forward_speed: f64,
    /// The flag that asked for it, for messages (`--omni-start-speed`).
    pub setting: &'static str,
}

impl StageGate {
    /// Whether an evaluation measuring `forward_speed` after `timesteps` train steps opens it.
    pub fn opens(&self, timesteps: u64, forward_speed: Option<f64>) -> bool {
        timesteps >= self.not_before && forward_speed.is_some_and(|v| v >= self.forward_speed)
    }
}
