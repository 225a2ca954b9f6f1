//! `gait train ppo` flags and how they become a [`TrainJob`].
//!
//! Every setting flag is an `Option` (or a switch) named after its config leaf, so "typed on the
//! command line" is simply "present". The effective config is layered, later layers winning:
//! defaults → the env preset, or the `--previous` run's config → `--config FILE.toml` → typed
//! flags. Flag names and spellings follow roadrunner (`train.py`, `algo/ppo.py`,
//! `nn_factory.py`); help shows the global defaults, and `--print-config` the effective values.

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;
use serde_json::Value;

use crate::config::checks::{
    count, non_negative_f32, positive_f32, positive_f64, positive_usize, unit_interval,
};
use crate::config::{
    presets, BackpropWorkers, DeviceKind, SaveFreq, Start, TrainConfig, TrainJob, UsageError,
    Weights,
};
use crate::envs::cassie::{
    CassieConfig, CommandKind, ObsKind, ProgressKind, ReferenceKind, RewardKind, SimKind, TurnKind,
};
use crate::policies::{Arch, Nonlinearity};

/// `s` as a number that passes `check` (the one range check flags and config files share).
fn number_in(s: &str, check: fn(f64) -> Result<f64, String>) -> Result<f64, String> {
    s.parse::<f64>().map_err(|_| format!("'{s}' is not a number")).and_then(check)
}

fn policy_rate(s: &str) -> Result<f64, String> {
    number_in(s, CassieConfig::check_policy_rate)
}

pub(super) fn upright(s: &str) -> Result<f64, String> {
    number_in(s, CassieConfig::check_upright)
}

pub(super) fn step_in_place(s: &str) -> Result<f64, String> {
    number_in(s, CassieConfig::check_step_in_place)
}

pub(super) fn obs_noise(s: &str) -> Result<f64, String> {
    number_in(s, CassieConfig::check_obs_noise)
}

pub(super) fn push(s: &str) -> Result<f64, String> {
    number_in(s, CassieConfig::check_push)
}

pub(super) fn sim_dt(s: &str) -> Result<f64, String> {
    number_in(s, CassieConfig::check_sim_dt)
}

/// Flags of `gait train ppo`. Setting flags serialize under their config leaf names.
#[derive(Debug, Clone, Default, Serialize, Args)]
pub struct TrainFlags {
    /// Read settings from this TOML file (the format of `--print-config` and of a run's
    /// config.toml). Keys it names override the preset or the --previous run; typed flags
    /// override the file.
    #[arg(long, value_name = "FILE.toml", help_heading = "Run")]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Print the effective config (presets, --previous, --config and flags applied) as TOML
    /// and exit without training.
    #[arg(long, help_heading = "Run")]
    #[serde(skip)]
    pub print_config: bool,
    /// Continue from this run directory: networks, normalizer, Adam states, iteration and
    /// counters; settings not typed take the previous run's values.
    #[arg(long, help_heading = "Run")]
    #[serde(skip)]
    pub previous: Option<PathBuf>,
    /// With --previous: start from its best-eval weights (actor/critic.safetensors) with fresh
    /// Adam state, instead of its latest state.
    #[arg(long, requires = "previous", help_heading = "Run")]
    #[serde(skip)]
    pub previous_best: bool,

    /// Environment to train on (alias: the reference's --env-name).
    #[arg(long, alias = "env-name", help_heading = "Run")]
    pub env: Option<String>,
    /// Seeds network init, env resets, action noise and minibatch order.
    #[arg(long, help_heading = "Run")]
    pub seed: Option<u64>,
    /// Log root; runs go to LOGDIR/ENV/RUN/TIMESTAMP.
    #[arg(long, help_heading = "Run")]
    pub logdir: Option<PathBuf>,
    /// Run folder name (default: a hash of the settings plus -seedN).
    #[arg(long, help_heading = "Run")]
    pub run_name: Option<String>,
    /// Stop once this many training steps were collected.
    #[arg(long, value_parser = count, help_heading = "Run")]
    pub timesteps: Option<u64>,
    /// Device for the optimizer; samplers always run on CPU.
    #[arg(long, value_enum, help_heading = "Run")]
    pub device: Option<DeviceKind>,
    /// libtorch threads for the optimizer (1 is fastest for small nets on 2 cores; -1: time
    /// 1..=cores threads at start and use the fastest).
    #[arg(long, allow_negative_numbers = true, help_heading = "Run")]
    pub backprop_workers: Option<BackpropWorkers>,
    /// Also save actor_{itr}/critic_{itr} every N iterations (0 or -1: never).
    #[arg(long, allow_negative_numbers = true, help_heading = "Run")]
    pub save_freq: Option<SaveFreq>,

    /// Sampler actors (default: available cores). Results do not depend on it.
    #[arg(long, value_parser = positive_usize, help_heading = "Sampler")]
    pub workers: Option<usize>,
    /// Minimum train steps per iteration (whole episodes, so it overshoots).
    #[arg(long, value_parser = positive_usize, help_heading = "Sampler")]
    pub num_steps: Option<usize>,
    /// Maximum episode length (train and eval).
    #[arg(long, value_parser = positive_usize, help_heading = "Sampler")]
    pub traj_len: Option<usize>,

    /// Discount γ.
    #[arg(long, value_parser = unit_interval, help_heading = "PPO")]
    pub discount: Option<f64>,
    /// GAE λ.
    #[arg(long, value_parser = unit_interval, help_heading = "PPO")]
    pub gae_lambda: Option<f64>,
    /// Actor Adam learning rate.
    #[arg(long, value_parser = positive_f64, help_heading = "PPO")]
    pub a_lr: Option<f64>,
    /// Critic Adam learning rate.
    #[arg(long, value_parser = positive_f64, help_heading = "PPO")]
    pub c_lr: Option<f64>,
    /// Adam epsilon (both optimizers).
    #[arg(long, value_parser = positive_f64, help_heading = "PPO")]
    pub eps: Option<f64>,
    /// KL(new‖old) threshold for early stopping the update.
    #[arg(long, value_parser = positive_f64, help_heading = "PPO")]
    pub kl: Option<f64>,
    /// Entropy bonus coefficient.
    #[arg(long, value_parser = non_negative_f32, help_heading = "PPO")]
    pub entropy_coeff: Option<f64>,
    /// Ratio clip ε.
    #[arg(long, value_parser = positive_f32, help_heading = "PPO")]
    pub clip: Option<f64>,
    /// Max gradient L2 norm, per network.
    #[arg(long, value_parser = positive_f32, help_heading = "PPO")]
    pub grad_clip: Option<f64>,
    /// Minibatch size in states.
    #[arg(long, value_parser = positive_usize, help_heading = "PPO")]
    pub batch_size: Option<usize>,
    /// Passes over the buffer per iteration.
    #[arg(long, value_parser = positive_usize, help_heading = "PPO")]
    pub epochs: Option<usize>,
    /// Mirror-loss coefficient (0 disables). A float, unlike the reference's int flag.
    #[arg(long, value_parser = non_negative_f32, help_heading = "PPO")]
    pub mirror: Option<f64>,
    /// Mirror data augmentation: mirrored copies of the states/actions join every minibatch
    /// (needs the env's mirror lists; combinable with --mirror).
    #[arg(long, help_heading = "PPO", num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub mirror_augment: Option<bool>,
    /// Before training, fill the observation normalizer from --prenormalize-steps steps of the
    /// policy with N(0,1) action noise (fresh runs only; skipped with --previous).
    #[arg(long, help_heading = "PPO", num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub prenorm: Option<bool>,
    /// Steps for --prenorm.
    #[arg(long, value_parser = positive_usize, help_heading = "PPO")]
    pub prenormalize_steps: Option<usize>,
    /// Keep updating the normalizer from every iteration's training states.
    #[arg(long, help_heading = "PPO", num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub update_norm: Option<bool>,

    /// Network architecture.
    #[arg(long, value_enum, help_heading = "Network")]
    pub arch: Option<Arch>,
    /// Hidden layer widths, comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = positive_usize, help_heading = "Network")]
    pub layers: Option<Vec<usize>>,
    /// Actor hidden activation (the critic uses ReLU).
    #[arg(long, value_enum, help_heading = "Network")]
    pub nonlinearity: Option<Nonlinearity>,
    /// Fixed action standard deviation.
    #[arg(long, value_parser = positive_f32, help_heading = "Network")]
    pub std: Option<f64>,
    /// One std per action dim, comma-separated; overrides --std.
    #[arg(long, value_delimiter = ',', value_parser = positive_f32, help_heading = "Network")]
    pub std_array: Option<Vec<f64>>,
    /// Learn a state-dependent std head instead of a fixed std (the reference's).
    #[arg(
        long,
        alias = "learn-stddev",
        help_heading = "Network",
        conflicts_with = "learn_log_std",
        num_args = 0..=1,
        default_missing_value = "true",
        value_name = "BOOL"
    )]
    pub learn_std: Option<bool>,
    /// Learn one state-independent log-std per action, starting at --std (or --std-array);
    /// saved and resumed with the weights, logged as Policy/Std.
    #[arg(long, help_heading = "Network", num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub learn_log_std: Option<bool>,
    /// Clip normalized observations to ±N standard deviations (0: no clip).
    #[arg(long, value_parser = non_negative_f32, help_heading = "Network")]
    pub obs_clip: Option<f64>,

    /// Deterministic evaluation episodes per evaluating iteration (0: never evaluate).
    #[arg(long, help_heading = "Eval")]
    pub num_eval_eps: Option<usize>,
    /// Evaluate every N iterations (also after a new best train return, and at the end).
    #[arg(long, value_parser = positive_usize, help_heading = "Eval")]
    pub eval_freq: Option<usize>,
    /// Evaluate only once the mean train episode length exceeded RATIO * traj-len.
    #[arg(long, value_parser = unit_interval, help_heading = "Eval")]
    pub min_eplen_ratio_eval: Option<f64>,

    #[command(flatten, next_help_heading = "Env: cassie")]
    pub cassie: CassieFlags,
}

/// `[env.cassie]` as flags.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Args)]
pub struct CassieFlags {
    /// Physics: gait's rapier3d model, MuJoCo on the lab's cassie_fast.xml, or mixed (each
    /// episode on one of the two).
    #[arg(long, value_enum)]
    pub sim: Option<SimKind>,
    /// Policy steps per second (Hz); physics substeps per step = round(sim rate / policy rate).
    #[arg(long, value_parser = policy_rate)]
    pub policy_rate: Option<f64>,
    /// Physics timestep (s) [default: 0.002 (500 Hz) on rapier, the lab's 0.0005 (2 kHz) on
    /// mujoco].
    #[arg(long, value_parser = sim_dt)]
    pub sim_dt: Option<f64>,
    /// Reward function.
    #[arg(long, value_enum)]
    pub reward: Option<RewardKind>,
    /// Reference gait added to the PD targets (the action is a residual on it).
    #[arg(long, value_enum)]
    pub reference: Option<ReferenceKind>,
    /// Command distribution.
    #[arg(long, value_enum)]
    pub commands: Option<CommandKind>,
    /// Observation layout.
    #[arg(long, value_enum)]
    pub obs: Option<ObsKind>,
    /// Observe one clock per leg (46 inputs) instead of one shared clock (44).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub full_clock: Option<bool>,
    /// Randomize the gait (swing ratio, cycle time, period shifts) with every new command.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub full_gait: Option<bool>,
    /// Randomize dynamics at every training reset (damping, masses, COMs, friction, slope,
    /// encoder offsets, torque delay and efficiency, spring stiffness) and jitter the policy
    /// rate by 0-5 Hz per step; evaluations run the nominal model.
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub dynamics_randomization: Option<bool>,
    /// Push the pelvis every 2-5 s by a speed change of up to this (m/s; 0: no pushes).
    #[arg(long, value_parser = push)]
    pub push: Option<f64>,
    /// Training steps before pushes, randomized dynamics and observation noise begin.
    #[arg(long, value_parser = count)]
    pub robust_start: Option<u64>,
    /// Training steps over which they then grow to full strength.
    #[arg(long, value_parser = count)]
    pub robust_ramp: Option<u64>,
    /// Gaussian noise on training observations, in multiples of gait's noise levels
    /// (docs/cassie.md "Sim-to-sim"; 0: none).
    #[arg(long, value_parser = obs_noise)]
    pub obs_noise: Option<f64>,
    /// The reference gait's stepping gain at a standing command, in [0, 1]: 0 stands still, 1
    /// steps in place.
    #[arg(long, value_parser = step_in_place)]
    pub step_in_place: Option<f64>,
    /// Raw weight of the walking reward's posture term (pelvis roll and pitch; 0: none).
    #[arg(long, value_parser = upright)]
    pub upright: Option<f64>,
    /// The walking reward's progress term past the command: flat (clip) or falling (peak).
    #[arg(long, value_enum)]
    pub progress: Option<ProgressKind>,
    /// Training steps over which omnidirectional commands grow from a fifth of all commands to
    /// all (the rest straight ahead); 0: all from the start.
    #[arg(long, value_parser = count)]
    pub omni_ramp: Option<u64>,
    /// How the walking reward tracks the turn: the integrated heading, or the yaw rate.
    #[arg(long, value_enum)]
    pub turn_reward: Option<TurnKind>,
}

/// The `(leaf, value)` pairs a serialized flag struct sets: the options given. A switch is an
/// `Option<bool>` (`--prenorm` is `true`, `--prenorm false` turns a preset's `true` off).
pub fn typed_leaves(flags: &impl Serialize) -> Vec<(String, Value)> {
    fn walk(value: &Value, out: &mut Vec<(String, Value)>) {
        let Value::Object(map) = value else { return };
        for (key, value) in map {
            match value {
                Value::Object(_) => walk(value, out),
                Value::Null => {}
                other => out.push((key.clone(), other.clone())),
            }
        }
    }
    let mut out = Vec::new();
    walk(&serde_json::to_value(flags).unwrap_or_default(), &mut out);
    out
}

/// A leaf value as a user would type it: `0.2`, `cassie`, `256,256`.
pub fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(shown).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// The job these flags ask for, plus notes for the user (applied preset, settings that
/// differ from a `--previous` run).
pub fn resolve(flags: &TrainFlags) -> anyhow::Result<(TrainJob, Vec<String>)> {
    let typed = typed_leaves(flags);
    let from_file = match &flags.config {
        Some(path) => TrainConfig::leaves_in_toml(&read_config_file(path)?)
            .map_err(|e| UsageError(format!("--config {}: {e}", path.display())))?,
        None => Vec::new(),
    };
    let set_by_user = |key: &str| typed.iter().chain(&from_file).any(|(k, _)| k == key);
    let layered = |base: &TrainConfig| -> Result<TrainConfig, UsageError> {
        let file = base.with_leaves(&from_file).map_err(|e| {
            let path = flags.config.as_deref().unwrap_or_else(|| std::path::Path::new(""));
            UsageError(format!("--config {}: {e}", path.display()))
        })?;
        file.with_leaves(&typed).map_err(|e| UsageError(e.to_string()))
    };
    let mut notes = Vec::new();

    let Some(dir) = &flags.previous else {
        let env = layered(&TrainConfig::default())?.run.env;
        let applied: Vec<String> = presets::changes(&env)
            .into_iter()
            .filter(|(k, _)| !set_by_user(k))
            .map(|(k, v)| format!("{}={}", k.replace('_', "-"), shown(&v)))
            .collect();
        if !applied.is_empty() {
            notes.push(format!("env '{env}' preset: {}", applied.join(" ")));
        }
        let config = layered(&TrainConfig::for_env(&env))?;
        config.validate()?;
        return Ok((TrainJob { config, start: Start::Fresh }, notes));
    };

    let prev = crate::logging::load_previous(dir)?.config;
    if let Some(env) = flags.env.as_deref().filter(|e| *e != prev.run.env) {
        return Err(UsageError(format!(
            "--previous {} is a run of env '{}', not '{env}'",
            dir.display(),
            prev.run.env
        ))
        .into());
    }
    let mut base = prev.clone();
    base.run.run_name = None;
    let config = layered(&base)?;
    if let Err(e) = config.validate() {
        if prev.validate().is_err() {
            anyhow::bail!(
                "--previous {}: its experiment.json holds a value this gait refuses ({e}); fix \
                 the file or type the flag",
                dir.display()
            );
        }
        return Err(e.into());
    }
    let old = prev.leaves();
    for (key, value) in config.leaves() {
        if key == "run_name" || key == "workers" {
            continue;
        }
        let before = old.iter().find(|(k, _)| *k == key).map(|(_, v)| v);
        if before != Some(&value) {
            notes.push(format!(
                "warning: {key}: {} -> {}",
                before.map_or("(new setting)".into(), shown),
                shown(&value)
            ));
        }
    }
    let weights = if flags.previous_best { Weights::Best } else { Weights::Latest };
    Ok((TrainJob { config, start: Start::Continue { dir: dir.clone(), weights } }, notes))
}

/// The text of `--config FILE`; a missing or unreadable file is a usage error.
fn read_config_file(path: &std::path::Path) -> Result<String, UsageError> {
    crate::fsutil::read_text(path)
        .map_err(|e| UsageError(format!("--config {}: cannot read it: {e}", path.display())))
}
