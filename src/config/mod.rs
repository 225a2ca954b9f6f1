//! The training configuration: one typed, serializable [`TrainConfig`] with defaults.
//!
//! The sections follow what each part of the trainer reads: [`RunConfig`] (what to train, where
//! to log, for how long), [`SamplerConfig`], [`PpoConfig`], [`NetConfig`], [`EvalConfig`] and
//! [`EnvConfig`]. Defaults follow roadrunner (`train.py`, `algo/ppo.py:add_algo_args`,
//! `nn_factory.add_nn_parser`), deviations documented on each field; [`presets`] holds the
//! per-env values that replace them. The command line (`crate::cli`) is the only place that
//! knows flags: it layers defaults, preset or `--previous` run, `--config FILE.toml`, then the
//! typed flags.
//!
//! Each setting is declared once, as one row of its section's [`settings!`](macro@crate::settings)
//! table (`setting.rs`): its doc, type, default and range. A setting is a *leaf* named by its
//! path (`ppo.kl`, `env.cassie.sim_dt`), so two sections may hold settings of the same name;
//! its flag is its name with dashes (`--kl`; [`flag_names`] for names two sections share).
//! [`TrainConfig::settings`], [`TrainConfig::leaves`] and [`TrainConfig::with_leaves`] are the
//! walks over them.

mod document;
mod legacy;
mod migrate;
pub mod presets;
mod sections;
mod special;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

pub use legacy::from_legacy_args;
pub use migrate::migrate;
pub use sections::{EvalConfig, NetConfig, RunConfig, SamplerConfig};

pub use crate::algos::catalog::{Algo, AlgoConfig};
pub use crate::algos::symmetry::Mirroring;
pub use crate::algos::PpoConfig;
// For the `settings!` and `choice_settings!` expansions.
pub use special::{BackpropWorkers, SaveFreq};

use crate::envs::EnvConfig;
use crate::policies::{Arch, NetSpec, StdSpec};
use crate::settings::{flag_names, Declared};

pub use crate::settings::UsageError;

/// Where the optimizer runs (samplers always run on CPU).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    /// The CPU.
    Cpu,
    /// The first CUDA device.
    Cuda,
}

/// What a fixed std's decay (`--std-decay`) follows (`--std-schedule`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum StdSchedule {
    /// The run's steps over `--timesteps`, as `--lr-decay` does.
    #[default]
    Steps,
    /// The env's perturbation strength (Cassie's `--robust-*` gate and ramp): the std stays at
    /// `--std` until the perturbations begin and reaches (1 − decay) of it as they reach full
    /// strength, so a seed that learns to walk late still explores at full noise until it
    /// walks.
    Perturbations,
    /// The std stays at `--std` until the env's training distribution stops changing (Cassie:
    /// the perturbations at full strength, behind their gate; other envs: step 0) and then falls
    /// linearly to (1 − decay) of it at `--timesteps`. Why: a policy trained at a fixed std tunes
    /// its speed to that noise (the walking preset's weights ran 1 m/s 0.1-0.25 m/s faster
    /// without σ 0.2 than with it), and the earlier, steeper decays of `perturbations` and
    /// `steps` left the walkers slow. Not in the walking preset: decayed to 0.13 from 8M
    /// (`sds`) its three seeds met 113 of 120 checked cells against the preset's 117
    /// (docs/cassie.md, "Why 1 m/s runs fast").
    Settled,
}

/// What chooses the best-eval weights (`--best-by`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum BestBy {
    /// The highest `Test/Return` (the reference's rule).
    #[default]
    Return,
    /// Among the evaluations after the training distribution settled
    /// (`--best-after-settled`), the lowest `Test/Tracking Error`: every eval command on every
    /// physics model, pushed only with `--selection-push`, scored by how far each axis is from
    /// the command in the task's tolerances (`crate::algos::tracking::Selection::error`);
    /// before that, `Return`.
    /// Needs an env with eval commands. Why: the highest return was no better than any other
    /// late checkpoint at tracking commands (docs/cassie.md, "Choosing the weights").
    Tracking,
    /// As `Tracking`, but the most `Test/Cells Within` first (cells whose every selection
    /// episode stayed within the task's bounds), the lowest `Test/Tracking Error` among equal
    /// counts. Why: the mean error can prefer a checkpoint that misses one cell by a lot to one
    /// that meets every cell (docs/cassie.md, "Choosing the weights").
    Cells,
    /// No pick: every evaluation replaces the best, so the run's policy is its last evaluated
    /// weights (at most `eval_freq` iterations before the end). Why: under 1 m/s pushes
    /// neither rule picked better weights than the last ones, and the learning rate has
    /// decayed by then (D-040).
    Last,
}

/// Which commands a selection (`--best-by tracking` or `cells`) runs on every physics model
/// (`--selection-commands`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SelectionCommands {
    /// The env's eval commands (Cassie's walking task: one side of each mirrored pair, 7 of
    /// the task's 10 commands); the runs before the setting.
    #[default]
    Eval,
    /// The eval commands and their mirror images that are not eval commands themselves
    /// (Cassie: y and turn negated, so the walking task's 10 commands). Needs an env with a
    /// command mirror. Why: the mirror loss makes a policy nearly symmetric, not exactly, and
    /// the side the selection never ran was where picks missed (D-022).
    Mirrored,
}

impl BestBy {
    /// Whether this rule scores settled evaluations by their selection episodes.
    pub fn selects(self) -> bool {
        matches!(self, BestBy::Tracking | BestBy::Cells)
    }
}

/// Everything `gait train ALGO` needs besides where it starts from (see [`Start`]). Written and
/// read as a document of sections (`document.rs`): `[sampler]`, `[ppo]`, `[algo.NAME]`, `[net]`,
/// `[eval]`, `[run]`, `[env.NAME]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrainConfig {
    /// `[sampler]`.
    pub sampler: SamplerConfig,
    /// Each algorithm's own settings (its catalog row's section): `[ppo]`, `[algo.NAME]`.
    pub algo: AlgoConfig,
    /// `[net]`.
    pub net: NetConfig,
    /// `[eval]`.
    pub eval: EvalConfig,
    /// `[run]`.
    pub run: RunConfig,
    /// `[env.NAME]`, one section per env with settings.
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
            critic_nonlinearity: net.critic_nonlinearity,
            std,
            obs_clip: (net.obs_clip > 0.0).then_some(net.obs_clip as f32),
            critic_obs_dim: None,
            init: net.init,
        })
    }
}

/// What `gait train ppo` runs: a config and where it starts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrainJob {
    /// The settings.
    pub config: TrainConfig,
    /// Fresh, or continuing a run.
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
    Continue {
        /// The run directory.
        dir: PathBuf,
        /// Which of its weights.
        weights: Weights,
    },
}

/// Which weights a continued run starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Weights {
    /// The latest state, Adam included: an exact continuation.
    Latest,
    /// The best-eval weights (`actor/critic.safetensors`) with fresh Adam state.
    Best,
    /// The exact state after this iteration, Adam included, which the run kept
    /// (`--resume-freq`): a branch from the middle of the run.
    Iteration(u64),
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
    /// A key the config does not have (its dotted path).
    #[error("unknown setting '{0}'")]
    UnknownKey(String),
    /// A value of the wrong type or out of range.
    #[error("{key}: {reason}")]
    BadValue {
        /// The setting's path.
        key: String,
        /// Why.
        reason: String,
    },
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

    /// Every setting with its path (`ppo.kl`) and its section's help heading, sections in
    /// the order of `--help`.
    pub fn settings() -> Vec<Declared> {
        let mut out = Vec::new();
        Declared::section::<RunConfig>("run", &mut out);
        Declared::section::<SamplerConfig>("sampler", &mut out);
        AlgoConfig::settings(&mut out);
        Declared::section::<NetConfig>("net", &mut out);
        Declared::section::<EvalConfig>("eval", &mut out);
        EnvConfig::settings("env", &mut out);
        out
    }

    /// The settings whose values differ from `before`'s, as `(path, before's value, this
    /// value)` in this config's [`Self::leaves`] order; `None`: a setting `before` lacks.
    pub fn changed_from(&self, before: &TrainConfig) -> Vec<(String, Option<Value>, Value)> {
        let old: std::collections::HashMap<String, Value> = before.leaves().into_iter().collect();
        self.leaves()
            .into_iter()
            .filter_map(|(key, value)| {
                let was = old.get(&key);
                (was != Some(&value)).then(|| (key, was.cloned(), value))
            })
            .collect()
    }

    /// Every setting as `(path, value)`, in serialization order.
    pub fn leaves(&self) -> Vec<(String, Value)> {
        fn walk(map: &serde_json::Map<String, Value>, path: &str, out: &mut Vec<(String, Value)>) {
            for (key, value) in map {
                let full = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                match value {
                    Value::Object(inner) => walk(inner, &full, out),
                    other => out.push((full, other.clone())),
                }
            }
        }
        let mut out = Vec::new();
        if let Ok(Value::Object(map)) = serde_json::to_value(self) {
            walk(&map, "", &mut out);
        }
        out
    }

    /// This config with the leaves at the given paths replaced. Unknown paths and values of the
    /// wrong type are refused, naming the path; nothing is changed on error.
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
        let mut doc = serde_json::to_value(table).map_err(|e| syntax(e.to_string()))?;
        migrate(&mut doc);
        let base = serde_json::to_value(Self::default()).expect("a config serializes");
        let mut values = Vec::new();
        collect_overrides(&base, &doc, "", &mut values)?;
        Ok(values)
    }

    /// The config as a TOML document (`--print-config`, the run dir's `config.toml`).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a config is TOML-representable")
    }

    /// The run's algorithm's mirror settings ([`Mirroring`]).
    pub fn mirroring(&self) -> Mirroring {
        self.algo.mirroring(self.run.algo)
    }

    /// PPO's settings (`[algo.ppo]`), whatever the run's algorithm.
    pub fn ppo(&self) -> &PpoConfig {
        self.algo.get()
    }

    /// The same, to change them.
    pub fn ppo_mut(&mut self) -> &mut PpoConfig {
        self.algo.get_mut()
    }

    /// Cross-setting and range checks (the same ranges the flags enforce), and that `run.env`
    /// is a registered env.
    pub fn validate(&self) -> Result<(), UsageError> {
        self.check(true)
    }

    /// Notes on settings that are valid but rarely meant: an LSTM's `batch_size` counts whole
    /// trajectories, so a batch at least as large as an iteration's trajectories makes each
    /// epoch one minibatch (one gradient step), whatever the number suggests.
    pub fn advice(&self) -> Vec<String> {
        let (p, s) = (self.ppo(), &self.sampler);
        let trajectories = s.num_steps.div_ceil(s.traj_len.max(1));
        if self.net.arch == Arch::Lstm && p.batch_size >= trajectories {
            return vec![format!(
                "note: with --arch lstm, --batch-size {} counts whole trajectories, and an \
                 iteration of --num-steps {} at --traj-len {} holds about {trajectories}: each \
                 epoch is one minibatch, one gradient step",
                p.batch_size, s.num_steps, s.traj_len
            )];
        }
        Vec::new()
    }

    /// [`Self::validate`] without looking `run.env` up in the registry: the checks for a run
    /// of an env given as a factory ([`crate::algos::runner::Runner::start_with`]), where the
    /// name only names the run's folder.
    pub fn validate_settings(&self) -> Result<(), UsageError> {
        self.check(false)
    }

    fn check(&self, registered: bool) -> Result<(), UsageError> {
        let (s, p, n, r) = (&self.sampler, self.ppo(), &self.net, &self.run);
        let tree = serde_json::to_value(self).expect("a config serializes");
        let declared = Self::settings();
        let flags = flag_names(&declared);
        for (d, flag) in declared.iter().zip(&flags) {
            let value = d.path.split('.').try_fold(&tree, |v, key| v.get(key));
            if let Some(value) = value {
                d.setting.check(value).map_err(|e| UsageError(format!("--{flag} {e}")))?;
            }
        }
        if n.layers.is_empty() {
            return Err(UsageError("--layers: give at least one width".into()));
        }
        returns_conflict(s)?;
        if n.learn_std && n.learn_log_std {
            return Err(UsageError("--learn-std and --learn-log-std exclude each other".into()));
        }
        if self.net.std_schedule == StdSchedule::Perturbations
            && self.env.perturbation_strength(&r.env, 0, None).is_none()
        {
            return Err(UsageError(format!(
                "--std-schedule perturbations: env '{}' has no perturbation schedule",
                r.env
            )));
        }
        if self.net.std_decay > 0.0 && (n.learn_std || n.learn_log_std) {
            return Err(UsageError(
                "--std-decay schedules a fixed std; it cannot run with --learn-std or \
                 --learn-log-std, whose std the PPO loss learns"
                    .into(),
            ));
        }
        if let Some(conflict) = p.recompute_conflict(n.arch) {
            return Err(UsageError(conflict));
        }
        if registered {
            crate::envs::spec(&r.env).map_err(|e| UsageError(e.to_string()))?;
        }
        self.env.check_for(&r.env).map_err(UsageError)?;
        if let Some(gate) = self.env.stage_gate_for(&r.env) {
            if self.eval.num_eval_eps == 0 {
                return Err(UsageError(format!(
                    "{} waits for an evaluation, and --num-eval-eps 0 runs none",
                    gate.setting
                )));
            }
        }
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

/// The slot of the leaf at `path` (`ppo.kl`) in a serialized config.
fn find_leaf<'a>(tree: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let slot = path.split('.').try_fold(tree, |v, key| v.as_object_mut()?.get_mut(key))?;
    (!slot.is_object()).then_some(slot)
}

/// The leaves a (partial) document sets, checked against the config's shape.
/// A TOML parse error on one line: where, then why (toml's own text spans five lines with a
/// caret snippet that echoes the offending line, 100 MB for a 50 MB line).
fn toml_reason(e: &toml::de::Error, text: &str) -> String {
    let mut message: String = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
    // toml parses integers as i64 and blames "u64" for one above it: say the real limit.
    if message.contains("value was too large") {
        message = format!("a whole number above {} (TOML integers are 64-bit signed)", i64::MAX);
    }
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
            Some(_) => out.push((full, value.clone())),
        }
    }
    Ok(())
}

/// `--scale-rewards` and `--normalize-returns` together: each puts the critic's targets on a
/// running std of the returns.
fn returns_conflict(s: &SamplerConfig) -> Result<(), UsageError> {
    if s.scale_rewards && s.normalize_returns {
        return Err(UsageError(
            "--scale-rewards and --normalize-returns exclude each other: each puts the \
             critic's targets on the returns' running std"
                .into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envs::cassie::CassieConfig;
    use crate::settings::plain_alias;

    /// An LSTM batch of at least an iteration's trajectories is noted (one minibatch an epoch);
    /// a smaller one, or the same number for a feed-forward net (states), is not.
    #[test]
    fn an_lstm_batch_as_large_as_an_iteration_is_noted() {
        let mut c = TrainConfig::for_env("cassie");
        c.ppo_mut().batch_size = 1000;
        assert!(c.advice().is_empty(), "states for a feed-forward net");
        c.net.arch = Arch::Lstm;
        let notes = c.advice();
        assert!(notes[0].contains("holds about 25"), "{notes:?}");
        c.ppo_mut().batch_size = 8;
        assert!(c.advice().is_empty());
    }

    #[test]
    fn every_leaf_is_declared_once_and_flags_are_unique() {
        let declared = TrainConfig::settings();
        let mut paths: Vec<String> = declared.iter().map(|d| d.path.clone()).collect();
        let mut leaves: Vec<String> =
            TrainConfig::default().leaves().into_iter().map(|(k, _)| k).collect();
        paths.sort_unstable();
        leaves.sort_unstable();
        assert_eq!(paths, leaves, "each field of the config is one declared setting");
        let mut flags = flag_names(&declared);
        flags.sort_unstable();
        let before = flags.len();
        flags.dedup();
        assert_eq!(before, flags.len(), "two settings share a flag: {flags:?}");
    }

    /// Two sections may declare settings of the same name: their keys differ by section, and
    /// their flags are qualified (the first keeping the plain name as an alias).
    #[test]
    fn a_name_two_sections_share_gets_qualified_flags() {
        crate::settings! {
            /// A second robot's section.
            #[serde(deny_unknown_fields)]
            pub struct Other("Env: other") {
                /// Its own timestep.
                sim_dt: Option<f64> = None;
            }
        }
        let mut declared = TrainConfig::settings();
        Declared::section::<Other>("env.other", &mut declared);
        let flags = flag_names(&declared);
        let at = |path: &str| declared.iter().position(|d| d.path == path).unwrap();
        let (cassie, other) = (at("env.cassie.sim_dt"), at("env.other.sim_dt"));
        assert_eq!((&*flags[cassie], &*flags[other]), ("cassie-sim-dt", "other-sim-dt"));
        assert_eq!(plain_alias(&declared, cassie).as_deref(), Some("sim-dt"));
        assert_eq!(plain_alias(&declared, other), None);
        assert_eq!(flags[at("ppo.kl")], "kl");
        assert_eq!(plain_alias(&declared, at("ppo.kl")), None);
    }

    #[test]
    fn toml_round_trips_and_a_partial_file_changes_only_what_it_names() {
        let config = TrainConfig::for_env("cassie");
        let text = config.to_toml();
        assert_eq!(TrainConfig::default().merged_with_toml(&text).unwrap(), config);
        let changed = config.merged_with_toml("[ppo]\nkl = 0.01\n[env.cassie]\nsim_dt = 0.0005\n");
        let changed = changed.unwrap();
        assert_eq!(changed.ppo().kl, 0.01);
        assert_eq!(changed.env.get::<CassieConfig>().sim_dt, Some(0.0005));
        assert_eq!(changed.sampler, config.sampler, "the preset is kept");
    }

    /// Run files from before `--best-by` continue choosing by return, and with the setting
    /// turned on, a selection episode of 1000 steps (not 0), one per cell, on the eval
    /// commands alone (the cells their scores counted).
    #[test]
    fn an_eval_section_from_before_the_tracking_score_reads_its_defaults() {
        let old = "num_eval_eps = 8\neval_freq = 10\nmin_eplen_ratio_eval = 0.0\n";
        let eval: EvalConfig = toml::from_str(old).unwrap();
        assert_eq!((eval.best_by, eval.selection_len), (BestBy::Return, 1000));
        assert_eq!(eval.selection_episodes, 1);
        assert_eq!(eval.selection_commands, SelectionCommands::Eval);
        assert_eq!(eval.selection_push, 0.0);
    }

    #[test]
    fn a_file_with_a_typo_or_a_wrong_type_is_refused_by_name() {
        let base = TrainConfig::default();
        let err = base.merged_with_toml("[ppo]\nkll = 0.01\n").unwrap_err().to_string();
        assert!(err.contains("ppo.kll"), "{err}");
        let err = base.merged_with_toml("[ppo]\nkl = \"big\"\n").unwrap_err().to_string();
        assert!(err.starts_with("ppo.kl:"), "{err}");
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
        let both = "[sampler]\nscale_rewards = true\nnormalize_returns = true\n";
        let err = TrainConfig::default().merged_with_toml(both).unwrap().validate().unwrap_err();
        assert!(err.to_string().contains("exclude each other"), "{err}");
    }

    /// A std schedule needs something to schedule: a fixed std, and for `perturbations` an env
    /// with a perturbation ramp (cartpole has none).
    #[test]
    fn a_std_schedule_without_a_fixed_std_or_perturbations_is_refused() {
        let file = "[net]\nstd_decay = 0.5\nstd_schedule = \"perturbations\"\n";
        let cassie = TrainConfig::for_env("cassie").merged_with_toml(file).unwrap();
        assert!(cassie.validate().is_ok());
        let err = TrainConfig::default().merged_with_toml(file).unwrap().validate().unwrap_err();
        assert!(err.to_string().contains("no perturbation schedule"), "{err}");
        let learned = cassie.merged_with_toml("[net]\nlearn_log_std = true\n").unwrap();
        assert!(learned.validate().unwrap_err().to_string().contains("fixed std"));
    }
}
