//! The training configuration: one typed, serializable [`TrainConfig`] with defaults. No flags
//! here: value enums derive `clap::ValueEnum` only so that help can list their values.
//!
//! The sections follow what each part of the trainer reads: [`RunConfig`] (what to train, where
//! to log, for how long), [`SamplerConfig`], [`PpoConfig`], [`NetConfig`], [`EvalConfig`] and
//! [`EnvConfig`]. Defaults follow roadrunner (`train.py`, `algo/ppo.py:add_algo_args`,
//! `nn_factory.add_nn_parser`), deviations documented on each field; [`presets`] holds the
//! per-env values that replace them. The command line (`crate::cli`) is the only place that
//! knows flags: it layers defaults, preset or `--previous` run, `--config FILE.toml`, then the
//! typed flags.
//!
//! Every setting is a *leaf* with a unique name (`kl`, `traj_len`, `sim_dt`): the flag is the
//! leaf's name with dashes, and `experiment.info` lists leaves. [`TrainConfig::leaves`] and
//! [`TrainConfig::with_leaves`] are the one walk over them.

pub mod checks;
mod legacy;
pub mod presets;
mod special;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

pub use checks::Range;
pub use legacy::from_legacy_args;
pub use special::{BackpropWorkers, SaveFreq};

use crate::envs::EnvConfig;
use crate::policies::{Arch, NetSpec, Nonlinearity, StdSpec};

/// A bad setting or combination: reported as a usage error (exit code 2).
#[derive(Debug, Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Where the optimizer runs (samplers always run on CPU).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    Cpu,
    Cuda,
}

/// Everything `gait train ppo` needs besides where it starts from (see [`Start`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainConfig {
    pub sampler: SamplerConfig,
    pub ppo: PpoConfig,
    pub net: NetConfig,
    pub eval: EvalConfig,
    pub run: RunConfig,
    pub env: EnvConfig,
}

impl NetConfig {
    /// The network these settings build for an env (`env` names it in errors) with
    /// `obs_dim` inputs and `act_dim` actions.
    pub fn spec(&self, env: &str, obs_dim: usize, act_dim: usize) -> Result<NetSpec, UsageError> {
        let net = self;
        if net.arch == Arch::Lstm && net.layers.windows(2).any(|w| w[0] != w[1]) {
            let layers: Vec<String> = net.layers.iter().map(usize::to_string).collect();
            return Err(UsageError(format!(
                "--arch lstm needs equal --layers widths (one stacked LSTM), got {}",
                layers.join(",")
            )));
        }
        let values = if let Some(array) = &net.std_array {
            if array.len() != act_dim {
                return Err(UsageError(format!(
                    "--std-array has {} values but env '{}' has {act_dim} action{}",
                    array.len(),
                    env,
                    if act_dim == 1 { "" } else { "s" }
                )));
            }
            array.iter().map(|&s| s as f32).collect()
        } else {
            vec![net.std as f32; act_dim]
        };
        let std = if net.learn_std {
            StdSpec::Learned
        } else if net.learn_log_std {
            StdSpec::LogParam(values)
        } else {
            StdSpec::Fixed(values)
        };
        Ok(NetSpec {
            obs_dim,
            act_dim,
            arch: net.arch,
            layers: net.layers.clone(),
            nonlinearity: net.nonlinearity,
            std,
            obs_clip: (net.obs_clip > 0.0).then_some(net.obs_clip as f32),
        })
    }
}

/// What to train, how long, and where the run goes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Environment to train on.
    pub env: String,
    /// Seeds network init, env resets, action noise and minibatch order.
    pub seed: u64,
    /// Log root; runs go to LOGDIR/ENV/RUN/TIMESTAMP.
    pub logdir: PathBuf,
    /// Run folder name (None: a hash of the settings plus -seedN).
    pub run_name: Option<String>,
    /// Stop once this many training steps were collected.
    pub timesteps: u64,
    /// Device for the optimizer.
    pub device: DeviceKind,
    /// libtorch threads for the optimizer (1 is fastest for small nets on 2 cores; -1:
    /// measure 1..=cores at start and take the fastest).
    pub backprop_workers: BackpropWorkers,
    /// Also save actor_{itr}/critic_{itr} every N iterations (0 or -1: never).
    pub save_freq: SaveFreq,
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            env: "cartpole".into(),
            seed: 0,
            logdir: "logs".into(),
            run_name: None,
            timesteps: 100_000_000,
            device: DeviceKind::Cpu,
            backprop_workers: BackpropWorkers::ONE,
            save_freq: SaveFreq::Off,
        }
    }
}

/// How experience is collected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplerConfig {
    /// Maximum episode length (train and eval).
    pub traj_len: usize,
    /// Minimum train steps per iteration (whole episodes, so it overshoots).
    pub num_steps: usize,
    /// Sampler actors (None: available cores). Results do not depend on it.
    pub workers: Option<usize>,
}

impl Default for SamplerConfig {
    fn default() -> Self {
        Self { traj_len: 300, num_steps: 2000, workers: None }
    }
}

/// PPO's hyperparameters, GAE's included (the samplers compute advantages per trajectory).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PpoConfig {
    /// Discount γ.
    pub discount: f64,
    /// GAE λ.
    pub gae_lambda: f64,
    /// Actor Adam learning rate.
    pub a_lr: f64,
    /// Critic Adam learning rate.
    pub c_lr: f64,
    /// Adam epsilon (both optimizers).
    pub eps: f64,
    /// KL(new‖old) threshold for early stopping the update.
    pub kl: f64,
    /// Entropy bonus coefficient.
    pub entropy_coeff: f64,
    /// Ratio clip ε.
    pub clip: f64,
    /// Max gradient L2 norm, per network.
    pub grad_clip: f64,
    /// Minibatch size in states (FF) or the state budget of a trajectory minibatch (LSTM).
    pub batch_size: usize,
    /// Passes over the buffer per iteration.
    pub epochs: usize,
    /// Mirror-loss coefficient (0 disables). A float, unlike the reference's int flag; default 0
    /// (the reference's is 1) so envs without mirror lists train as they are.
    pub mirror: f64,
    /// Mirror data augmentation: mirrored copies of the states/actions join every minibatch.
    pub mirror_augment: bool,
    /// Before training, fill the observation normalizer from `prenormalize_steps` steps of the
    /// policy with N(0,1) action noise (fresh runs only).
    pub prenorm: bool,
    /// Steps for `prenorm`.
    pub prenormalize_steps: usize,
    /// Keep updating the normalizer from every iteration's training states (after the update,
    /// so each update sees the statistics its data was sampled with). The reference's flag of
    /// this name is dead code.
    pub update_norm: bool,
}

impl Default for PpoConfig {
    fn default() -> Self {
        Self {
            discount: 0.99,
            gae_lambda: 1.0,
            a_lr: 1e-4,
            c_lr: 1e-4,
            eps: 1e-6,
            kl: 0.02,
            entropy_coeff: 0.0,
            clip: 0.2,
            grad_clip: 0.05,
            batch_size: 64,
            epochs: 3,
            mirror: 0.0,
            mirror_augment: false,
            prenorm: false,
            prenormalize_steps: 100,
            update_norm: false,
        }
    }
}

impl PpoConfig {
    /// Whether the networks see mirrored states (mirror loss or augmentation).
    pub fn uses_mirror(&self) -> bool {
        self.mirror > 0.0 || self.mirror_augment
    }
}

/// The actor and critic networks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetConfig {
    pub arch: Arch,
    /// Hidden layer widths.
    pub layers: Vec<usize>,
    /// Actor hidden activation (the critic uses ReLU).
    pub nonlinearity: Nonlinearity,
    /// Fixed action standard deviation.
    pub std: f64,
    /// One std per action dim; overrides `std`.
    pub std_array: Option<Vec<f64>>,
    /// Learn a state-dependent std head instead of a fixed std (the reference's).
    pub learn_std: bool,
    /// Learn one state-independent log-std per action, starting at `std` (or `std_array`).
    #[serde(default)]
    pub learn_log_std: bool,
    /// Clip each normalized observation to ±`obs_clip` standard deviations (0: no clip), so one
    /// input far outside the training distribution cannot drive the actions anywhere. 5 by
    /// default (see `policies::normalizer`); runs from before the setting load without a clip.
    #[serde(default)]
    pub obs_clip: f64,
}

impl Default for NetConfig {
    fn default() -> Self {
        Self {
            arch: Arch::Ff,
            layers: vec![256, 256],
            nonlinearity: Nonlinearity::Relu,
            std: 0.13,
            std_array: None,
            learn_std: false,
            learn_log_std: false,
            obs_clip: 5.0,
        }
    }
}

/// The deterministic evaluation during training.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalConfig {
    /// Episodes per evaluating iteration (0: never evaluate).
    pub num_eval_eps: usize,
    /// Evaluate every N iterations (also after a new best train return, and at the end).
    pub eval_freq: usize,
    /// Evaluate only once the mean train episode length exceeded RATIO * traj_len.
    pub min_eplen_ratio_eval: f64,
}

impl Default for EvalConfig {
    fn default() -> Self {
        Self { num_eval_eps: 50, eval_freq: 200, min_eplen_ratio_eval: 0.0 }
    }
}

/// What `gait train ppo` runs: a config and where it starts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrainJob {
    pub config: TrainConfig,
    pub start: Start,
}

/// Where a training starts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Start {
    /// New networks (and prenormalization when configured).
    #[default]
    Fresh,
    /// Continue the run in `dir`: networks, normalizer, Adam states, iteration and counters.
    Continue { dir: PathBuf, weights: Weights },
}

/// Which weights a continued run starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Weights {
    /// The latest state, Adam included: an exact continuation.
    Latest,
    /// The best-eval weights (`actor/critic.safetensors`) with fresh Adam state.
    Best,
}

impl Start {
    /// The run directory continued from, if any.
    pub fn previous(&self) -> Option<&Path> {
        match self {
            Start::Fresh => None,
            Start::Continue { dir, .. } => Some(dir),
        }
    }
}

/// Why a config file or a set of leaf values was refused.
#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("unknown setting '{0}'")]
    UnknownKey(String),
    #[error("{key}: {reason}")]
    BadValue { key: String, reason: String },
}

impl TrainConfig {
    /// The defaults with `env`'s preset applied (unknown envs keep the defaults; they are
    /// refused by [`TrainConfig::validate`]).
    pub fn for_env(env: &str) -> Self {
        let mut config = Self::default();
        config.run.env = env.to_string();
        presets::apply(&mut config);
        config
    }

    /// Every setting as `(leaf name, value)`, in declaration order.
    pub fn leaves(&self) -> Vec<(String, Value)> {
        fn walk(map: &serde_json::Map<String, Value>, out: &mut Vec<(String, Value)>) {
            for (key, value) in map {
                match value {
                    Value::Object(inner) => walk(inner, out),
                    other => out.push((key.clone(), other.clone())),
                }
            }
        }
        let mut out = Vec::new();
        if let Ok(Value::Object(map)) = serde_json::to_value(self) {
            walk(&map, &mut out);
        }
        out
    }

    /// This config with the named leaves replaced. Unknown names and values of the wrong type
    /// are refused, naming the leaf; nothing is changed on error.
    pub fn with_leaves(&self, values: &[(String, Value)]) -> Result<Self, ConfigError> {
        let mut tree = serde_json::to_value(self).expect("a config serializes");
        for (key, value) in values {
            let slot =
                find_leaf(&mut tree, key).ok_or_else(|| ConfigError::UnknownKey(key.clone()))?;
            *slot = value.clone();
            // Checked per leaf so the error names it (the config is small).
            serde_json::from_value::<Self>(tree.clone())
                .map_err(|e| ConfigError::BadValue { key: key.clone(), reason: e.to_string() })?;
        }
        Ok(serde_json::from_value(tree).expect("checked above"))
    }

    /// This config with a TOML document's settings on top: only the keys the file names
    /// change, so a file holding `[ppo] kl = 0.01` keeps everything else (the env preset, a
    /// `--previous` run's values).
    pub fn merged_with_toml(&self, text: &str) -> Result<Self, ConfigError> {
        self.with_leaves(&Self::leaves_in_toml(text)?)
    }

    /// The `(leaf, value)` pairs a TOML document sets. Unknown sections and keys are refused
    /// with their dotted path; value types are checked by [`TrainConfig::with_leaves`].
    pub fn leaves_in_toml(text: &str) -> Result<Vec<(String, Value)>, ConfigError> {
        let syntax = |reason: String| ConfigError::BadValue { key: "TOML".into(), reason };
        let table =
            toml::from_str::<toml::Table>(text).map_err(|e| syntax(toml_reason(&e, text)))?;
        non_finite_floats(&table, "")?;
        let doc = serde_json::to_value(table).map_err(|e| syntax(e.to_string()))?;
        let base = serde_json::to_value(Self::default()).expect("a config serializes");
        let mut values = Vec::new();
        collect_overrides(&base, &doc, "", &mut values)?;
        Ok(values)
    }

    /// The config as a TOML document (`--print-config`, the run dir's `config.toml`).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a config is TOML-representable")
    }

    /// Cross-setting and range checks (the same ranges the flags enforce), and that `run.env`
    /// is a registered env.
    pub fn validate(&self) -> Result<(), UsageError> {
        self.check(true)
    }

    /// [`Self::validate`] without looking `run.env` up in the registry: the checks for a run
    /// of an env given as a factory ([`crate::algos::runner::Runner::start_with`]), where the
    /// name only names the run's folder.
    pub fn validate_settings(&self) -> Result<(), UsageError> {
        self.check(false)
    }

    fn check(&self, registered: bool) -> Result<(), UsageError> {
        let bad = |key: &str, v: f64, range: Range| {
            UsageError(format!("--{} {v}: not {}", key.replace('_', "-"), range.phrase()))
        };
        let (s, p, n, e, r) = (&self.sampler, &self.ppo, &self.net, &self.eval, &self.run);
        let checks: [(&str, f64, Range); 22] = [
            ("timesteps", r.timesteps as f64, Range::Count),
            ("num_steps", s.num_steps as f64, Range::Count),
            ("traj_len", s.traj_len as f64, Range::Count),
            ("workers", s.workers.unwrap_or(1) as f64, Range::Count),
            ("discount", p.discount, Range::Unit),
            ("gae_lambda", p.gae_lambda, Range::Unit),
            ("a_lr", p.a_lr, Range::Positive),
            ("c_lr", p.c_lr, Range::Positive),
            ("eps", p.eps, Range::Positive),
            ("kl", p.kl, Range::Positive),
            ("entropy_coeff", p.entropy_coeff, Range::NonNegativeF32),
            ("clip", p.clip, Range::PositiveF32),
            ("grad_clip", p.grad_clip, Range::PositiveF32),
            ("batch_size", p.batch_size as f64, Range::Count),
            ("epochs", p.epochs as f64, Range::Count),
            ("mirror", p.mirror, Range::NonNegativeF32),
            ("prenormalize_steps", p.prenormalize_steps as f64, Range::Count),
            ("std", n.std, Range::PositiveF32),
            ("obs_clip", n.obs_clip, Range::NonNegativeF32),
            ("eval_freq", e.eval_freq as f64, Range::Count),
            ("min_eplen_ratio_eval", e.min_eplen_ratio_eval, Range::Unit),
            ("num_eval_eps", e.num_eval_eps as f64, Range::Natural),
        ];
        for (key, v, range) in checks {
            if !range.holds(v) {
                return Err(bad(key, v, range));
            }
        }
        if n.layers.is_empty() || n.layers.contains(&0) {
            return Err(UsageError("--layers: every width must be a positive whole number".into()));
        }
        if let Some(bad_std) = n.std_array.iter().flatten().find(|v| !Range::PositiveF32.holds(**v))
        {
            return Err(bad("std_array", *bad_std, Range::PositiveF32));
        }
        if n.learn_std && n.learn_log_std {
            return Err(UsageError("--learn-std and --learn-log-std exclude each other".into()));
        }
        if registered {
            crate::envs::spec(&r.env).map_err(|e| UsageError(e.to_string()))?;
        }
        self.env.check_for(&r.env).map_err(UsageError)?;
        if p.batch_size > s.num_steps {
            return Err(UsageError(format!(
                "--batch-size {} is larger than --num-steps {}: no minibatch would be formed",
                p.batch_size, s.num_steps
            )));
        }
        if r.logdir.as_os_str().is_empty() {
            return Err(UsageError("--logdir: give a directory (it is empty)".into()));
        }
        if let Some(name) = r.run_name.as_deref() {
            // One plain folder name, so runs stay inside LOGDIR/ENV/RUN/TIMESTAMP; at most
            // MAX_RUN_NAME bytes, so a continuation's `NAME-cont-TIMESTAMP` folder still fits
            // the 255 bytes a file name may have; no control characters, which would break
            // experiment.info's one setting per line and the printed continue command.
            let plain = !(name.is_empty()
                || name == "."
                || name == ".."
                || name.contains(['/', '\\'])
                || name.chars().any(char::is_control));
            if !plain || name.len() > MAX_RUN_NAME {
                return Err(UsageError(format!(
                    "--run-name '{}' must be a plain folder name of at most {MAX_RUN_NAME} \
                     bytes (not empty, '.' or '..', no '/' or control characters)",
                    name.escape_debug()
                )));
            }
        }
        Ok(())
    }
}

/// The longest `--run-name`, in bytes.
pub const MAX_RUN_NAME: usize = 200;

/// The slot of leaf `key` in a serialized config.
fn find_leaf<'a>(tree: &'a mut Value, key: &str) -> Option<&'a mut Value> {
    let Value::Object(map) = tree else { return None };
    if map.get(key).is_some_and(|v| !v.is_object()) {
        return map.get_mut(key);
    }
    map.values_mut().find_map(|v| if v.is_object() { find_leaf(v, key) } else { None })
}

/// The leaves a (partial) document sets, checked against the config's shape.
/// A TOML parse error on one line: where, then why (toml's own text spans five lines with a
/// caret snippet that echoes the offending line, 100 MB for a 50 MB line).
fn toml_reason(e: &toml::de::Error, text: &str) -> String {
    let mut message: String = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
    if message.len() > 200 {
        let cut = (0..=200).rev().find(|&i| message.is_char_boundary(i)).unwrap_or(0);
        message.truncate(cut);
        message.push_str("...");
    }
    match e.span() {
        Some(span) => {
            let before = &text.as_bytes()[..span.start.min(text.len())];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
            format!("line {line}, column {column}: {message}")
        }
        None => message,
    }
}

/// Refuses `nan` and `inf` in a config file by name (JSON, which the leaves pass through, has
/// no such numbers: they became `null` and a misleading "invalid type: null").
fn non_finite_floats(table: &toml::Table, path: &str) -> Result<(), ConfigError> {
    for (key, value) in table {
        let full = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
        match value {
            toml::Value::Float(f) if !f.is_finite() => {
                return Err(ConfigError::BadValue {
                    key: full,
                    reason: format!("{f} is not a finite number"),
                })
            }
            toml::Value::Table(inner) => non_finite_floats(inner, &full)?,
            toml::Value::Array(items) => {
                if let Some(f) =
                    items.iter().filter_map(toml::Value::as_float).find(|f| !f.is_finite())
                {
                    return Err(ConfigError::BadValue {
                        key: full,
                        reason: format!("{f} is not a finite number"),
                    });
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn collect_overrides(
    base: &Value,
    doc: &Value,
    path: &str,
    out: &mut Vec<(String, Value)>,
) -> Result<(), ConfigError> {
    let (Value::Object(base), Value::Object(doc)) = (base, doc) else {
        return Err(ConfigError::BadValue { key: path.into(), reason: "expected a table".into() });
    };
    for (key, value) in doc {
        let full = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
        match base.get(key) {
            None => return Err(ConfigError::UnknownKey(full)),
            Some(inner @ Value::Object(_)) => collect_overrides(inner, value, &full, out)?,
            Some(_) if value.is_object() => {
                return Err(ConfigError::BadValue {
                    key: full,
                    reason: "is a value, not a table".into(),
                })
            }
            Some(_) => out.push((key.clone(), value.clone())),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaf_names_are_unique() {
        let leaves = TrainConfig::default().leaves();
        let mut names: Vec<&str> = leaves.iter().map(|(k, _)| k.as_str()).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "two settings share a name: {names:?}");
    }

    #[test]
    fn toml_round_trips_and_a_partial_file_changes_only_what_it_names() {
        let config = TrainConfig::for_env("cassie");
        let text = config.to_toml();
        assert_eq!(TrainConfig::default().merged_with_toml(&text).unwrap(), config);
        let changed = config.merged_with_toml("[ppo]\nkl = 0.01\n[env.cassie]\nsim_dt = 0.0005\n");
        let changed = changed.unwrap();
        assert_eq!(changed.ppo.kl, 0.01);
        assert_eq!(changed.env.cassie.sim_dt, Some(0.0005));
        assert_eq!(changed.sampler, config.sampler, "the preset is kept");
    }

    #[test]
    fn a_file_with_a_typo_or_a_wrong_type_is_refused_by_name() {
        let base = TrainConfig::default();
        let err = base.merged_with_toml("[ppo]\nkll = 0.01\n").unwrap_err().to_string();
        assert!(err.contains("ppo.kll"), "{err}");
        let err = base.merged_with_toml("[ppo]\nkl = \"big\"\n").unwrap_err().to_string();
        assert!(err.starts_with("kl:"), "{err}");
        let err = base.merged_with_toml("ppo = 3\n").unwrap_err().to_string();
        assert!(err.contains("ppo"), "{err}");
        assert!(base.merged_with_toml("[ppo\n").is_err());
    }

    #[test]
    fn validate_applies_the_flag_ranges_to_file_values() {
        let config = TrainConfig::default().merged_with_toml("[ppo]\nkl = 0.0\n").unwrap();
        assert!(config.validate().unwrap_err().to_string().contains("--kl 0"));
        let config = TrainConfig::default().merged_with_toml("[net]\nlayers = []\n").unwrap();
        assert!(config.validate().is_err());
        assert!(TrainConfig::for_env("cassie").validate().is_ok());
    }
}
