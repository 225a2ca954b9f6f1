//! What must agree across MPI ranks for their numbers to be the same ([`Fingerprint`]), and
//! each rank's own command line, which must be rank 0's but for its `--workers`.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::TrainConfig;
use crate::envs;

/// What must agree across ranks for their numbers to be the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// gait's version.
    pub gait_version: String,
    /// The commit gait was built from.
    pub git_commit: String,
    /// SHA-256 of the run's config.
    pub config_sha256: String,
    /// The env's name.
    pub env: String,
    /// SHA-256 of a short seeded rollout of the env (observations and rewards as bits): the
    /// same binary on a CPU that computes other floats shows here.
    pub rollout_sha256: String,
    /// The rank's own command line without the program and its per-node `--workers`: every
    /// rank runs the same command, so one typed differently (another `--seed`, a flag only one
    /// node has) is refused instead of silently following rank 0's.
    pub command: String,
}

/// This process's command line (program name dropped) without its `--workers` count, and
/// that count when given: each rank's own, a per-node number of sampler threads.
pub(super) fn own_command() -> (String, Option<Result<usize, String>>) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut kept = Vec::with_capacity(args.len());
    let mut workers = None;
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let value = match arg.strip_prefix("--workers") {
            Some("") => it.next().unwrap_or_default(),
            Some(v) if v.starts_with('=') => v[1..].to_string(),
            _ => {
                kept.push(arg);
                continue;
            }
        };
        let parsed = crate::settings::Range::Count
            .parse(&value)
            .map(|n| n as usize)
            .map_err(|e| format!("--workers: {e}"));
        workers = Some(parsed);
    }
    (kept.join(" "), workers)
}

impl Fingerprint {
    pub(super) fn of(config: &TrainConfig) -> Result<Self> {
        let json = serde_json::to_string(config).context("serializing the config")?;
        let mut env = envs::make(&config.run.env, &config.env)?;
        env.seed(12_345);
        let mut hash = Sha256::new();
        let obs = env.reset().to_vec();
        obs.iter().for_each(|x| hash.update(x.to_bits().to_le_bytes()));
        let zeros = vec![0.0; env.action_size()];
        for _ in 0..50 {
            let s = env.step(&zeros);
            s.obs.iter().for_each(|x| hash.update(x.to_bits().to_le_bytes()));
            hash.update(s.reward.to_bits().to_le_bytes());
            if s.done {
                env.reset();
            }
        }
        let mut rollout: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        // Test-only: a rank told to differ (the mismatch test).
        if let Some(salt) = std::env::var_os("GAIT_TEST_FINGERPRINT_SALT") {
            rollout.push_str(&salt.to_string_lossy());
        }
        Ok(Self {
            gait_version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: option_env!("GAIT_GIT_COMMIT").unwrap_or("unknown").to_string(),
            config_sha256: Sha256::digest(json.as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
            env: config.run.env.clone(),
            rollout_sha256: rollout,
            command: own_command().0,
        })
    }

    /// What differs from `other`, in words (empty when nothing does).
    pub(super) fn differences(&self, other: &Self) -> Vec<String> {
        let fields = [
            ("gait version", &self.gait_version, &other.gait_version),
            ("git commit", &self.git_commit, &other.git_commit),
            ("config", &self.config_sha256, &other.config_sha256),
            ("env", &self.env, &other.env),
            ("seeded reference rollout", &self.rollout_sha256, &other.rollout_sha256),
            ("command line (--workers aside)", &self.command, &other.command),
        ];
        fields
            .iter()
            .filter(|(_, a, b)| a != b)
            .map(|(what, a, b)| format!("{what}: {b} here, {a} on rank 0"))
            .collect()
    }
}
