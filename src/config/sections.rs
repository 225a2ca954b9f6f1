//! The trainer's sections, one [`settings!`](crate::settings) row per setting: what to train
//! ([`RunConfig`]), [`SamplerConfig`], [`NetConfig`], [`EvalConfig`]; each algorithm's own
//! section is in its folder (`crate::algos::catalog`). Defaults
//! follow roadrunner (`train.py`, `algo/ppo.py:add_algo_args`, `nn_factory.add_nn_parser`),
//! deviations documented on each row.

use std::path::PathBuf;

use super::{Algo, BackpropWorkers, BestBy, DeviceKind, SaveFreq, SelectionCommands, StdSchedule};
use crate::policies::{Arch, Nonlinearity, WeightInit};
use crate::settings::Range;

/// `resume_freq`'s default, which run files from before the setting kept.
fn no_resume_states() -> SaveFreq {
    SaveFreq::Off
}

crate::settings! {
    /// What to train, how long, and where the run goes.
    #[serde(deny_unknown_fields)]
    pub struct RunConfig("Run") {
        /// Environment to train on.
        env: String = "cartpole".into();
        /// The learning algorithm: set by `gait train ppo` or `gait train a2c`, not a flag.
        #[serde(default)]
        algo: Algo = Algo::default();
        /// Seeds network init, env resets, action noise and minibatch order.
        seed: u64 = 0;
        /// Log root; runs go to LOGDIR/ENV/RUN/TIMESTAMP.
        logdir: PathBuf = "logs".into();
        /// Run folder name (unset: a hash of the settings plus -seedN).
        run_name: Option<String> = None;
        /// Stop once this many training steps were collected.
        timesteps: u64 = 100_000_000, Range::Count;
        /// Device for the optimizer; samplers always run on CPU.
        device: DeviceKind = DeviceKind::Cpu;
        /// libtorch threads for the optimizer (1 is fastest for small nets on 2 cores; -1: time
        /// 1..=cores threads at start and use the fastest).
        backprop_workers: BackpropWorkers = BackpropWorkers::ONE;
        /// Also save actor_{itr}/critic_{itr} every N iterations (0 or -1: never).
        save_freq: SaveFreq = SaveFreq::Off;
        /// Also keep the exact resume state after every N-th iteration (resume_{itr}, about
        /// 2 MB for Cassie; 0 or -1: only the latest), so that `--previous RUN
        /// --previous-iteration ITR` can branch from it: an A/B from a mid-run state.
        #[serde(default = "no_resume_states")]
        resume_freq: SaveFreq = SaveFreq::Off;
        /// Stop once an iteration ends this many minutes of training wall clock into this
        /// invocation (`Time/Elapsed`, set-up excluded), saved and resumable, with exit code 4
        /// (0: no limit). A continuation inherits it and counts its own minutes. Why: a cluster
        /// job has a wall-clock limit, and the next job continues with `--previous`; and a
        /// task bounded in training time (a policy within 45 minutes) is what such a run keeps
        /// as its best-eval weights.
        #[serde(default)]
        time_limit: f64 = 0.0,
            Range::Within { lo: 0.0, hi: 1e6, what: "a number of minutes in [0, 1e6]" };
    }
}

crate::settings! {
    /// How experience is collected, and its returns and advantages (the samplers compute them
    /// per trajectory).
    #[serde(deny_unknown_fields)]
    pub struct SamplerConfig("Sampler") {
        /// Maximum episode length (train and eval).
        traj_len: usize = 300, Range::Count;
        /// Minimum train steps per iteration (whole episodes, so it overshoots).
        num_steps: usize = 2000, Range::Count;
        /// Sampler actors (unset: available cores). Results do not depend on it.
        workers: Option<usize> = None, Range::Count;
        /// Discount γ.
        discount: f64 = 0.99, Range::Unit;
        /// GAE λ.
        gae_lambda: f64 = 1.0, Range::Unit;
        /// Divide rewards by the running std of the discounted return (over every train step
        /// so far) and clip them to ±10 before the advantages and the critic's targets, as
        /// Gymnasium's `NormalizeReward` does; logged returns stay unscaled. Updated once per
        /// iteration, so any worker count gives the same numbers.
        #[serde(default)]
        scale_rewards: bool = false;
        /// Train the critic on returns divided by the running std of every GAE-λ return so
        /// far, reading its values back in the rewards' units before GAE (Tianshou's
        /// `rew_norm`): unit-scale critic targets, advantages in the rewards' own units. Not
        /// with scale_rewards.
        #[serde(default)]
        normalize_returns: bool = false;
    }
}

crate::settings! {
    /// The actor and critic networks.
    #[serde(deny_unknown_fields)]
    pub struct NetConfig("Network") {
        /// Network architecture.
        arch: Arch = Arch::Ff;
        /// Hidden layer widths, comma-separated.
        layers: Vec<usize> = vec![256, 256], Range::Count;
        /// Actor hidden activation.
        nonlinearity: Nonlinearity = Nonlinearity::Relu;
        /// Critic hidden activation: ReLU as the reference's critic, or tanh as cleanrl's.
        #[serde(default)]
        critic_nonlinearity: Nonlinearity = Nonlinearity::Relu;
        /// How the linear layers' weights start: uniform (PyTorch's default, the reference's)
        /// or orthogonal (gain √2 hidden, 0.01 action means, 1 value; cleanrl's).
        #[serde(default)]
        init: WeightInit = WeightInit::Uniform;
        /// Fixed action standard deviation.
        std: f64 = 0.13, Range::PositiveF32;
        /// One std per action dim, comma-separated; overrides --std.
        std_array: Option<Vec<f64>> = None, Range::PositiveF32;
        /// Learn a state-dependent std head instead of a fixed std (the reference's).
        learn_std: bool = false;
        /// Learn one state-independent log-std per action, starting at --std (or --std-array);
        /// saved and resumed with the weights, logged as Policy/Std.
        #[serde(default)]
        learn_log_std: bool = false;
        /// Clip normalized observations to ±N standard deviations (0: no clip), so one input
        /// far outside the training distribution cannot drive the actions anywhere. 5 by default
        /// (see `policies::normalizer`); runs from before the setting load without a clip.
        #[serde(default)]
        obs_clip: f64 = 5.0, Range::NonNegativeF32;
        /// Before training, fill the observation normalizer from --prenormalize-steps steps of
        /// the policy with N(0,1) action noise (fresh runs only; skipped with --previous).
        prenorm: bool = false;
        /// Steps for --prenorm.
        prenormalize_steps: usize = 100, Range::Count;
        /// Keep updating the normalizer from every iteration's training states. It is updated
        /// after the update, so each update sees the statistics its data was sampled with. The
        /// reference's flag of this name is dead code.
        update_norm: bool = false;
        /// A fixed action std (`--std`) falls linearly with the run's steps, from `--std` at
        /// step 0 to (1 − this) of it at `--timesteps` (0: constant), the same schedule as
        /// `lr_decay`. Why: evaluation and deployment run the mean action, but a policy trained
        /// at one std tunes its speed to that much noise; Cassie's policies trained at a fixed
        /// 0.2 walked 0.1-0.45 m/s faster without it than with it, and on MuJoCo seed 2 sped up
        /// until it fell (docs/cassie.md "The noise the policy walks with"). Needs a fixed std.
        #[serde(default)]
        std_decay: f64 = 0.0, Range::Unit;
        /// What `std_decay` follows: `steps` (over `--timesteps`), `perturbations` (the env's
        /// perturbation ramp, from its gate to full strength) or `settled` (from the step the
        /// env's training distribution settles to `--timesteps`).
        #[serde(default)]
        std_schedule: StdSchedule = StdSchedule::Steps;
    }
}

crate::settings! {
    /// The deterministic evaluation during training.
    #[serde(deny_unknown_fields)]
    pub struct EvalConfig("Eval") {
        /// Deterministic evaluation episodes per evaluating iteration (0: never evaluate).
        num_eval_eps: usize = 50, Range::Natural;
        /// Evaluate every N iterations (also after a new best train return unless
        /// `eval_on_best_train` is off, and at the end).
        eval_freq: usize = 200, Range::Count;
        /// Also evaluate after an iteration whose train return is a new best (roadrunner's
        /// rule). Why off: where an iteration holds one noisy episode, a new best comes nearly
        /// every early iteration and those evaluations cost a tenth of the run (D-060).
        #[serde(default = "evaluates_on_best_train")]
        eval_on_best_train: bool = true;
        /// Evaluate only once the mean train episode length exceeded RATIO * traj-len.
        min_eplen_ratio_eval: f64 = 0.0, Range::Unit;
        /// Training steps after the env's training distribution settles (Cassie: the
        /// perturbations at full strength) before an evaluation may replace the best-eval
        /// checkpoint; settled evaluations replace unsettled ones (`crate::algos::Runner`).
        /// Why: the first evaluations at full strength, before the policy has trained under
        /// the perturbations, can outscore later weights that withstand them (D-019). 0: from the settling step on
        /// (runs before the setting).
        #[serde(default)]
        best_after_settled: u64 = 0, Range::Natural;
        /// What chooses the best-eval weights: `return` (the highest `Test/Return`),
        /// `tracking` (among settled evaluations, the lowest `Test/Tracking Error`: each eval
        /// command on each physics model, pushed only with `selection_push`) or `cells` (among
        /// settled evaluations, the most `Test/Cells Within`, then the lowest `Test/Tracking
        /// Error`) or `last` (no pick: the last evaluated weights).
        #[serde(default)]
        best_by: BestBy = BestBy::Return;
        /// Steps of each selection episode of `--best-by tracking` or `cells` (1000: the
        /// walking task's 20 s at 50 Hz). Why not `--traj-len`: a policy can speed up slowly
        /// without noise, and 400-step episodes missed it (D-020).
        #[serde(default = "default_selection_len")]
        selection_len: usize = DEFAULT_SELECTION_LEN, Range::Count;
        /// Episodes of each command on each physics model in a selection (`--best-by
        /// tracking` or `cells`), each from its own seed; the score takes each cell's worst, as the
        /// checks do (a cell is within when all its episodes are). Why more than one: one
        /// episode per cell could not tell the checkpoints that met every checked cell from
        /// those that missed one (D-021). 1 for runs
        /// before the setting.
        #[serde(default = "default_selection_episodes")]
        selection_episodes: usize = 1, Range::Count;
        /// The commands of a selection (`--best-by tracking` or `cells`): `eval`, the env's
        /// eval commands, or `mirrored`, those and their mirror images (Cassie: the walking
        /// task's 10 commands, as `gait check` runs them). `eval` for runs before the setting.
        #[serde(default)]
        selection_commands: SelectionCommands = SelectionCommands::Eval;
        /// Push the selection episodes (`--best-by tracking` or `cells`) as `gait check --push
        /// V` does: every 2-5 s, U(0, V) m/s in a random horizontal direction (0: no pushes,
        /// the runs before the setting). Why: the task is judged under pushes too, and weights
        /// chosen on nominal episodes fell where the checks pushed them.
        #[serde(default)]
        selection_push: f64 = 0.0, Range::PUSH_SPEED;
        /// Select (`--best-by tracking` or `cells`) at the evaluations of every Nth evaluation
        /// iteration only (iterations that are multiples of `eval_freq` × N); 1: at every
        /// evaluation. Why: a selection is the dearest part of a robot-grade run's wall clock
        /// (tens of 20 s episodes, half on MuJoCo at 0.5 ms), and its scores under pushes vary
        /// more between evaluations than the pick gains from seeing all of them (D-039).
        #[serde(default = "one")]
        selection_every: u64 = 1, Range::Count;
    }
}

/// `selection_len`'s default, also what run files from before the setting continue with.
const DEFAULT_SELECTION_LEN: usize = 1000;

fn default_selection_len() -> usize {
    DEFAULT_SELECTION_LEN
}

/// `eval_on_best_train`'s default, also what run files from before the setting continue with.
fn evaluates_on_best_train() -> bool {
    true
}

fn default_selection_episodes() -> usize {
    1
}

/// 1, for serde: what run files from before a setting whose default is 1 continue with.
fn one() -> u64 {
    1
}

crate::choice_settings!(
    DeviceKind,
    Arch,
    Nonlinearity,
    WeightInit,
    StdSchedule,
    BestBy,
    SelectionCommands
);
