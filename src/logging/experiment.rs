//! `experiment.json` (machine-loadable: every argument, the network spec, the env sizes; the
//! reference's `experiment.pkl`) and `experiment.info` (one sorted `key: value` line per
//! argument, for humans).

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::{from_legacy_args, Start, TrainConfig, UsageError};
use crate::fsutil::write_atomic;
use crate::policies::NetSpec;

/// The run's settings and start, as gait reads them back.
pub const EXPERIMENT_JSON: &str = "experiment.json";
pub const EXPERIMENT_INFO: &str = "experiment.info";
pub const CONFIG_TOML: &str = "config.toml";

/// A run's `experiment.json`: its config, start, network and provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ExperimentFile")]
pub struct Experiment {
    /// The layout of this file: [`FORMAT`] for files this gait writes; files without it are
    /// format 1, whose settings [`crate::config::migrate`] moves to today's sections.
    pub format: u32,
    /// The gait version that wrote it.
    pub gait_version: String,
    /// The git commit gait was built from (absent for builds outside a git checkout and in
    /// runs written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_commit: Option<String>,
    /// Whether that checkout had uncommitted changes to tracked files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_dirty: Option<bool>,
    /// The command line as typed.
    pub command: Vec<String>,
    /// The effective config (preset, file and flags applied, worker count resolved).
    pub config: TrainConfig,
    /// Where the run started (a continuation names the run it continued).
    pub start: Start,
    /// The network the config built.
    pub net: NetSpec,
    /// Sampler workers per MPI rank, rank 0 first (runs sampled over MPI ranks only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<Vec<usize>>,
    /// The optimizer thread count `--backprop-workers -1` measured and used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backprop_threads: Option<usize>,
    /// What the run's numbered weights (`actor_N`, `--save-freq`) hold.
    pub numbered_weights: NumberedWeights,
}

/// What a run's numbered weights `actor_N` / `critic_N` (`--save-freq`) hold. Recorded because
/// it changed: a scan of a run's checkpoints with `gait check --iteration N` against its
/// `selection.csv` needs to know which weights row N scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NumberedWeights {
    /// Runs written before 2026-12-03 (no `numbered_weights` in `experiment.json`): the weights
    /// after iteration N's update, which row N + 1 of `progress.csv` scored.
    #[default]
    AfterUpdate,
    /// The weights iteration N collected with, which row N of `progress.csv` and
    /// `selection.csv` scored (`actor.safetensors` is the best row's file, byte for byte).
    Scored,
}

/// The layout of `experiment.json` this gait writes: 2 since settings moved out of `[ppo]`
/// (`crate::config::migrate` lists them).
pub const FORMAT: u32 = 2;

/// The format of files written before the field.
fn first_format() -> u32 {
    1
}

/// `experiment.json` as stored: today's `config` + `start`, or the flat `args` of runs written
/// before the sectioned config (`crate::config::from_legacy_args`).
#[derive(Deserialize)]
struct ExperimentFile {
    #[serde(default = "first_format")]
    format: u32,
    gait_version: String,
    #[serde(default)]
    git_commit: Option<String>,
    #[serde(default)]
    git_dirty: Option<bool>,
    command: Vec<String>,
    #[serde(default)]
    config: Option<serde_json::Value>,
    #[serde(default)]
    start: Option<Start>,
    #[serde(default)]
    args: Option<serde_json::Value>,
    #[serde(default)]
    ranks: Option<Vec<usize>>,
    #[serde(default)]
    backprop_threads: Option<usize>,
    #[serde(default)]
    numbered_weights: NumberedWeights,
    net: NetSpec,
}

impl TryFrom<ExperimentFile> for Experiment {
    type Error = String;

    fn try_from(f: ExperimentFile) -> Result<Self, String> {
        if f.format > FORMAT {
            return Err(format!(
                "format {} is newer than this gait reads ({FORMAT}): it was written by gait {}",
                f.format, f.gait_version
            ));
        }
        let (config, start) = match (f.config, f.args) {
            (Some(mut config), _) => {
                crate::config::migrate(&mut config);
                let config = serde_json::from_value(config).map_err(|e| format!("config: {e}"))?;
                (config, f.start.unwrap_or_default())
            }
            (None, Some(args)) => from_legacy_args(&args).map_err(|e| format!("args: {e}"))?,
            (None, None) => return Err("missing field `config`".into()),
        };
        Ok(Self {
            format: FORMAT,
            gait_version: f.gait_version,
            git_commit: f.git_commit,
            git_dirty: f.git_dirty,
            command: f.command,
            config,
            start,
            net: f.net,
            ranks: f.ranks,
            backprop_threads: f.backprop_threads,
            numbered_weights: f.numbered_weights,
        })
    }
}

impl Experiment {
    /// An experiment record for this build of gait.
    pub fn new(command: Vec<String>, config: TrainConfig, start: Start, net: NetSpec) -> Self {
        Self {
            format: FORMAT,
            gait_version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: option_env!("GAIT_GIT_COMMIT").map(str::to_string),
            git_dirty: option_env!("GAIT_GIT_DIRTY").map(|d| d == "true"),
            command,
            config,
            start,
            net,
            ranks: None,
            backprop_threads: None,
            numbered_weights: NumberedWeights::Scored,
        }
    }

    /// Writes `experiment.json`, `experiment.info` and `config.toml` (the effective config,
    /// loadable with `gait train ppo --config`), each atomically.
    pub fn save(&self, dir: &Path) -> Result<()> {
        let json = serde_json::to_string_pretty(self)?;
        write_atomic(&dir.join(EXPERIMENT_JSON), json.as_bytes())?;
        write_atomic(&dir.join(CONFIG_TOML), self.config.to_toml().as_bytes())?;
        write_atomic(&dir.join(EXPERIMENT_INFO), self.info().as_bytes())
    }

    /// Reads `experiment.json` from `dir`.
    pub fn load(dir: &Path) -> Result<Self> {
        let path = dir.join(EXPERIMENT_JSON);
        let text = crate::fsutil::read_text(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
    }

    /// `key: value` lines, sorted by key.
    pub fn info(&self) -> String {
        let mut lines: Vec<String> = self
            .config
            .leaves()
            .into_iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k}: {s}"),
                other => format!("{k}: {other}"),
            })
            .collect();
        if let Some(previous) = self.start.previous() {
            lines.push(format!("previous: {}", previous.display()));
        }
        lines.push(format!("obs_dim: {}", self.net.obs_dim));
        if let Some(critic) = self.net.critic_obs_dim {
            lines.push(format!("critic_obs_dim: {critic}"));
        }
        lines.push(format!("action_dim: {}", self.net.act_dim));
        lines.push(format!("gait_version: {}", self.gait_version));
        if let Some(commit) = &self.git_commit {
            let dirty = if self.git_dirty == Some(true) { " (dirty)" } else { "" };
            lines.push(format!("git_commit: {commit}{dirty}"));
        }
        lines.sort();
        lines.join("\n") + "\n"
    }
}

/// Why a directory given as a run (`--previous`, `gait eval --path`) cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    #[error("{flag} {dir}: no such directory")]
    Missing { flag: &'static str, dir: String },
    #[error("{flag} {dir} is a file; give the run directory that holds {EXPERIMENT_JSON}")]
    IsFile { flag: &'static str, dir: String },
    #[error("{flag} {dir} is not a gait run directory (no {EXPERIMENT_JSON})")]
    NotARun { flag: &'static str, dir: String },
    #[error("{flag} {dir}: {EXPERIMENT_JSON} is truncated or invalid: {reason}")]
    Invalid { flag: &'static str, dir: String, reason: String },
    #[error("{flag} {dir}: its {EXPERIMENT_JSON} holds a value this gait refuses ({reason})")]
    OutOfRange { flag: &'static str, dir: String, reason: String },
}

/// Loads the experiment of a run directory named by `flag`, telling apart a missing
/// directory, a directory that is not a run, and a damaged `experiment.json`.
pub fn load_run_dir(dir: &Path, flag: &'static str) -> Result<Experiment, RunDirError> {
    let shown = dir.display().to_string();
    if dir.is_file() {
        return Err(RunDirError::IsFile { flag, dir: shown });
    }
    if !dir.is_dir() {
        return Err(RunDirError::Missing { flag, dir: shown });
    }
    if !dir.join(EXPERIMENT_JSON).is_file() {
        return Err(RunDirError::NotARun { flag, dir: shown });
    }
    let exp = Experiment::load(dir).map_err(|e| RunDirError::Invalid {
        flag,
        dir: shown.clone(),
        reason: format!("{:#}", e.root_cause()),
    })?;
    // The checks flags and config files get: a run file edited by hand (a 1e-300 Hz policy
    // rate, a 1 s timestep, a frictionless floor) is refused by every command that runs it as
    // it is. `--previous` checks after the typed flags are layered on (a flag may fix it).
    if flag != PREVIOUS {
        exp.config.validate_settings().map_err(|e| RunDirError::OutOfRange {
            flag,
            dir: shown,
            reason: e.to_string(),
        })?;
    }
    Ok(exp)
}

/// The flag of a run that training continues.
const PREVIOUS: &str = "--previous";

/// `load_run_dir` for a flag naming a run (`--previous`, `gait eval --path`): a missing path,
/// a file, or a directory that is not a run is a usage error (exit 2); a damaged
/// `experiment.json` is a runtime error (exit 1).
pub fn load_run(dir: &Path, flag: &'static str) -> Result<Experiment> {
    load_run_dir(dir, flag).map_err(|e| match e {
        RunDirError::Invalid { .. } | RunDirError::OutOfRange { .. } => anyhow::Error::new(e),
        usage => UsageError(usage.to_string()).into(),
    })
}

/// [`load_run`] for `--previous`.
pub fn load_previous(dir: &Path) -> Result<Experiment> {
    load_run(dir, PREVIOUS)
}

/// The reference's nameless-run folder: a short hash of the settings that define the
/// experiment (all but run name, seed, logdir and workers) plus `-seed<N>`. SHA-256 of the
/// canonical JSON of the sorted leaves, so it is stable across platforms and versions (the
/// reference hashes a Python repr).
pub fn config_hash_name(config: &TrainConfig) -> String {
    const NOT_HASHED: [&str; 5] =
        ["run.run_name", "run.seed", "run.logdir", "run.time_limit", "sampler.workers"];
    let leaves = config.leaves();
    // Keyed by the setting's name, as before settings had paths (so a config hashes as it did),
    // or by its path where two sections share the name.
    let name = |path: &str| path.rsplit('.').next().unwrap_or(path).to_string();
    let shared = |path: &str| leaves.iter().filter(|(k, _)| name(k) == name(path)).count() > 1;
    let leaves: serde_json::Map<String, serde_json::Value> = leaves
        .iter()
        .filter(|(k, _)| !NOT_HASHED.contains(&k.as_str()))
        .map(|(k, v)| (if shared(k) { k.clone() } else { name(k) }, v.clone()))
        .collect();
    let digest = Sha256::digest(serde_json::Value::Object(leaves).to_string().as_bytes());
    let hex: String = digest.iter().take(3).map(|b| format!("{b:02x}")).collect();
    format!("{hex}-seed{}", config.run.seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The folder of a nameless run ignores where and how it runs (name, logdir, workers, time
    /// limit) and the seed (which it names separately), and changes with any setting of the
    /// experiment.
    #[test]
    fn the_hash_name_covers_the_experiment_only() {
        let base = TrainConfig::for_env("cartpole");
        let mut elsewhere = base.clone();
        elsewhere.run.logdir = "/tmp/other".into();
        elsewhere.run.run_name = Some("x".into());
        elsewhere.sampler.workers = Some(7);
        elsewhere.run.time_limit = 45.0;
        assert_eq!(config_hash_name(&base), config_hash_name(&elsewhere));
        let mut seeded = base.clone();
        seeded.run.seed = 4;
        let (a, b) = (config_hash_name(&base), config_hash_name(&seeded));
        assert_eq!(a.split('-').next(), b.split('-').next());
        assert!(b.ends_with("-seed4"), "{b}");
        let mut changed = base.clone();
        changed.ppo_mut().kl = 0.5;
        assert_ne!(config_hash_name(&base), config_hash_name(&changed));
    }
}
