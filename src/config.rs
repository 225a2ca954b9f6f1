//! `gait train ppo` arguments: one unified, serializable config (the reference splits it into
//! four namespaces and breaks on the split). Flag names and defaults follow roadrunner
//! (`train.py`, `algo/ppo.py:add_algo_args`, `nn_factory.add_nn_parser`), with the deviations
//! documented on each field. Per-env presets (see `envs::ENVS`) replace defaults for flags the
//! user did not type.

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::envs::EnvArgs;
use crate::policies::{Arch, Nonlinearity};

/// A bad flag value or combination: reported as a usage error (exit code 2).
#[derive(Debug, Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Where the optimizer runs (samplers always run on CPU).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum DeviceArg {
    Cpu,
    Cuda,
}

fn positive_f64(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("'{s}' is not a positive number")),
    }
}

fn non_negative_f64(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("'{s}' is not a number >= 0")),
    }
}

fn unit_interval(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a number in [0, 1]")),
    }
}

/// Positive integers, in plain or scientific notation (`10000`, `1e4`), like [`count`].
pub(crate) fn positive_usize(s: &str) -> Result<usize, String> {
    count(s)
        .ok()
        .and_then(|v| usize::try_from(v).ok())
        .ok_or_else(|| format!("'{s}' is not a positive whole number (e.g. 2000 or 1e4)"))
}

/// Counts like `1e8` or `100000`.
fn count(s: &str) -> Result<u64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 1.0 && v.fract() == 0.0 && v < 1e19 => Ok(v as u64),
        _ => Err(format!("'{s}' is not a positive whole number (e.g. 100000 or 1e8)")),
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Args)]
pub struct PpoArgs {
    /// Environment to train on (alias: the reference's --env-name).
    #[arg(long, alias = "env-name", default_value = "cartpole", help_heading = "Run")]
    pub env: String,
    /// Seeds network init, env resets, action noise and minibatch order.
    #[arg(long, default_value_t = 0, help_heading = "Run")]
    pub seed: u64,
    /// Log root; runs go to LOGDIR/ENV/RUN/TIMESTAMP.
    #[arg(long, default_value = "logs", help_heading = "Run")]
    pub logdir: PathBuf,
    /// Run folder name (default: a hash of the arguments plus -seedN).
    #[arg(long, help_heading = "Run")]
    pub run_name: Option<String>,
    /// Maximum episode length (train and eval).
    #[arg(long, default_value = "300", value_parser = positive_usize, help_heading = "Run")]
    pub traj_len: usize,
    /// Stop once this many training steps were collected.
    #[arg(long, default_value = "1e8", value_parser = count, help_heading = "Run")]
    pub timesteps: u64,
    /// Sampler actors (default: available cores). Results do not depend on it.
    #[arg(long, value_parser = positive_usize, help_heading = "Run")]
    pub workers: Option<usize>,
    /// Device for the optimizer; samplers always run on CPU.
    #[arg(long, value_enum, default_value_t = DeviceArg::Cpu, help_heading = "Run")]
    pub device: DeviceArg,
    /// libtorch threads for the optimizer (1 is fastest for small nets on 2 cores).
    #[arg(long, default_value = "1", value_parser = positive_usize, help_heading = "Run")]
    pub backprop_workers: usize,
    /// Continue from this run directory: networks, normalizer, Adam states, iteration and
    /// counters; flags not given on the command line take the previous run's values.
    #[arg(long, help_heading = "Run")]
    pub previous: Option<PathBuf>,
    /// With --previous: start from its best-eval weights (actor/critic.safetensors) with fresh
    /// Adam state, instead of its latest state.
    #[arg(long, requires = "previous", help_heading = "Run")]
    pub previous_best: bool,
    /// Also save actor_{itr}/critic_{itr} every N iterations (0: never).
    #[arg(long, default_value_t = 0, help_heading = "Run")]
    pub save_freq: usize,

    /// Minimum train steps per iteration (whole episodes, so it overshoots).
    #[arg(long, default_value = "2000", value_parser = positive_usize, help_heading = "PPO")]
    pub num_steps: usize,
    /// Deterministic evaluation episodes per evaluating iteration (0: never evaluate).
    #[arg(long, default_value_t = 50, help_heading = "PPO")]
    pub num_eval_eps: usize,
    /// Evaluate every N iterations (also after a new best train return, and at the end).
    #[arg(long, default_value = "200", value_parser = positive_usize, help_heading = "PPO")]
    pub eval_freq: usize,
    /// Evaluate only once the mean train episode length exceeded RATIO * traj-len.
    #[arg(long, default_value = "0", value_parser = unit_interval, help_heading = "PPO")]
    pub min_eplen_ratio_eval: f64,
    /// Discount γ.
    #[arg(long, default_value = "0.99", value_parser = unit_interval, help_heading = "PPO")]
    pub discount: f64,
    /// GAE λ.
    #[arg(long, default_value = "1.0", value_parser = unit_interval, help_heading = "PPO")]
    pub gae_lambda: f64,
    /// Actor Adam learning rate.
    #[arg(long, default_value = "1e-4", value_parser = positive_f64, help_heading = "PPO")]
    pub a_lr: f64,
    /// Critic Adam learning rate.
    #[arg(long, default_value = "1e-4", value_parser = positive_f64, help_heading = "PPO")]
    pub c_lr: f64,
    /// Adam epsilon (both optimizers).
    #[arg(long, default_value = "1e-6", value_parser = positive_f64, help_heading = "PPO")]
    pub eps: f64,
    /// KL(new‖old) threshold for early stopping the update.
    #[arg(long, default_value = "0.02", value_parser = positive_f64, help_heading = "PPO")]
    pub kl: f64,
    /// Entropy bonus coefficient.
    #[arg(long, default_value = "0", value_parser = non_negative_f64, help_heading = "PPO")]
    pub entropy_coeff: f64,
    /// Ratio clip ε.
    #[arg(long, default_value = "0.2", value_parser = positive_f64, help_heading = "PPO")]
    pub clip: f64,
    /// Max gradient L2 norm, per network.
    #[arg(long, default_value = "0.05", value_parser = positive_f64, help_heading = "PPO")]
    pub grad_clip: f64,
    /// Minibatch size in states.
    #[arg(long, default_value = "64", value_parser = positive_usize, help_heading = "PPO")]
    pub batch_size: usize,
    /// Passes over the buffer per iteration.
    #[arg(long, default_value = "3", value_parser = positive_usize, help_heading = "PPO")]
    pub epochs: usize,
    /// Mirror-loss coefficient (0 disables). A float, unlike the reference's int flag. Default 0
    /// (the reference's is 1) so envs without mirror lists train without extra flags.
    #[arg(long, default_value = "0", value_parser = non_negative_f64, help_heading = "PPO")]
    pub mirror: f64,

    /// Before training, fill the observation normalizer from --prenormalize-steps steps of the
    /// policy with N(0,1) action noise (fresh runs only; skipped with --previous).
    #[arg(long, help_heading = "PPO")]
    pub prenorm: bool,
    /// Steps for --prenorm.
    #[arg(long, default_value = "100", value_parser = positive_usize, help_heading = "PPO")]
    pub prenormalize_steps: usize,
    /// Keep updating the normalizer from every iteration's training states (after the update,
    /// so each PPO update sees the statistics its data was sampled with). The reference's flag
    /// of this name is dead code.
    #[arg(long, help_heading = "PPO")]
    pub update_norm: bool,

    /// Mirror data augmentation: mirrored copies of the states/actions join every minibatch
    /// (needs the env's mirror lists; combinable with --mirror).
    #[arg(long, help_heading = "PPO")]
    pub mirror_augment: bool,

    /// Network architecture.
    #[arg(long, value_enum, default_value_t = Arch::Ff, help_heading = "Network")]
    pub arch: Arch,
    /// Hidden layer widths.
    #[arg(
        long,
        default_value = "256,256",
        value_delimiter = ',',
        value_parser = positive_usize,
        help_heading = "Network"
    )]
    pub layers: Vec<usize>,
    /// Actor hidden activation (the critic uses ReLU).
    #[arg(long, value_enum, default_value_t = Nonlinearity::Relu, help_heading = "Network")]
    pub nonlinearity: Nonlinearity,
    /// Fixed action standard deviation.
    #[arg(long, default_value = "0.13", value_parser = positive_f64, help_heading = "Network")]
    pub std: f64,
    /// One std per action dim, comma-separated; overrides --std.
    #[arg(long, value_delimiter = ',', value_parser = positive_f64, help_heading = "Network")]
    pub std_array: Option<Vec<f64>>,
    /// Learn a state-dependent std head instead of a fixed std (the reference's).
    #[arg(
        long,
        alias = "learn-stddev",
        help_heading = "Network",
        conflicts_with = "learn_log_std"
    )]
    pub learn_std: bool,
    /// Learn one state-independent log-std per action, starting at --std (or --std-array);
    /// saved and resumed with the weights, logged as Policy/Std.
    #[arg(long, help_heading = "Network")]
    #[serde(default)]
    pub learn_log_std: bool,

    #[command(flatten, next_help_heading = "Env")]
    #[serde(default)]
    pub env_args: EnvArgs,
}

impl PpoArgs {
    /// Every argument as `(field name, value)`, with the env arguments flattened in beside the
    /// others (their field names are their flag ids too). The one walk that `experiment.info`,
    /// `--previous` inheritance and its change warnings all use.
    pub fn values(&self) -> Vec<(String, serde_json::Value)> {
        fn walk(
            map: &serde_json::Map<String, serde_json::Value>,
            out: &mut Vec<(String, serde_json::Value)>,
        ) {
            for (key, value) in map {
                match value {
                    serde_json::Value::Object(inner) => walk(inner, out),
                    other => out.push((key.clone(), other.clone())),
                }
            }
        }
        let mut out = Vec::new();
        if let Ok(serde_json::Value::Object(map)) = serde_json::to_value(self) {
            walk(&map, &mut out);
        }
        out
    }

    /// Cross-flag checks clap cannot express.
    pub fn validate(&self) -> Result<(), UsageError> {
        self.env_args.check_for(&self.env).map_err(UsageError)?;
        if self.batch_size > self.num_steps {
            return Err(UsageError(format!(
                "--batch-size {} is larger than --num-steps {}: no minibatch would be formed",
                self.batch_size, self.num_steps
            )));
        }
        if let Some(name) = self.run_name.as_deref() {
            // One plain folder name, so runs stay inside LOGDIR/ENV/RUN/TIMESTAMP.
            if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
                return Err(UsageError(format!(
                    "--run-name '{name}' must be a plain folder name (not empty, '.' or '..', \
                     no '/')"
                )));
            }
        }
        Ok(())
    }
}
