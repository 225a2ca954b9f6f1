//! `--env NAME` → constructor, and the env-specific settings. (Training presets are typed
//! functions in `crate::config::presets`.)

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::cassie::{CassieConfig, CassieEnv};
use super::{CartPole, Env, EnvFactory, MountainCar, Pendulum};

/// Env-specific settings (the reference's "Env arguments" group), one section per env that has
/// any. Recorded in `experiment.json` so `gait eval` and `--previous` rebuild the same env.
/// Only Cassie has settings so far; changing them for another env is refused
/// ([`EnvConfig::check_for`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvConfig {
    /// `[env.cassie]`.
    #[serde(default)]
    pub cassie: CassieConfig,
}

impl EnvConfig {
    /// Every env section's settings, under `path` (`env.cassie.sim_dt`): one line per env
    /// section.
    pub fn settings(path: &str, out: &mut Vec<crate::settings::Declared>) {
        crate::settings::Declared::section::<CassieConfig>(&format!("{path}.cassie"), out);
    }

    /// The curriculum gate of `env`'s settings, if its curriculum waits on an evaluation.
    pub fn stage_gate_for(&self, env: &str) -> Option<super::StageGate> {
        (env == "cassie").then(|| self.cassie.stage_gate()).flatten()
    }

    /// The training step from which `env`'s training distribution stops changing (0 for an
    /// env without a curriculum; `None` while a gate it waits for is closed): see
    /// [`CassieConfig::settled_from`].
    pub fn settled_from(&self, env: &str, stage_from: Option<u64>) -> Option<u64> {
        match env {
            "cassie" => self.cassie.settled_from(stage_from),
            _ => Some(0),
        }
    }

    /// The strength of `env`'s training perturbations after `timesteps` of a run whose gated
    /// stage began at `stage_from`, in [0, 1] (Cassie's [`CassieConfig::robustness_at`]);
    /// `None` for an env without a perturbation schedule.
    pub fn perturbation_strength(
        &self,
        env: &str,
        timesteps: u64,
        stage_from: Option<u64>,
    ) -> Option<f64> {
        (env == "cassie").then(|| self.cassie.robustness_at(timesteps, stage_from))
    }

    /// A section of another env that differs from its defaults is refused, naming its first
    /// changed setting as a flag (each setting's range is checked with the others',
    /// [`crate::config::TrainConfig::validate`]).
    pub fn check_for(&self, env: &str) -> Result<(), String> {
        if env == "cassie" {
            return self.cassie.check();
        }
        if self.cassie == CassieConfig::default() {
            return Ok(());
        }
        let ours = serde_json::to_value(&self.cassie).unwrap_or_default();
        let defaults = serde_json::to_value(CassieConfig::default()).unwrap_or_default();
        let changed = ours
            .as_object()
            .and_then(|m| m.iter().find(|(k, v)| defaults.get(k.as_str()) != Some(*v)))
            .map_or_else(String::new, |(k, _)| k.replace('_', "-"));
        Err(format!("--{changed} only applies to --env cassie, not '{env}'"))
    }
}

/// One registered environment.
pub struct EnvSpec {
    /// The `--env` name.
    pub name: &'static str,
    /// One line for help.
    pub about: &'static str,
    /// Builds the env from the config's env sections.
    pub make: fn(&EnvConfig) -> anyhow::Result<Box<dyn Env>>,
}

impl std::fmt::Debug for EnvSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvSpec").field("name", &self.name).finish_non_exhaustive()
    }
}

/// Every environment `--env` accepts.
pub static ENVS: &[EnvSpec] = &[
    EnvSpec {
        name: "cassie",
        about: "Cassie biped (rapier3d, 500 Hz PD): walk straight on command, a gait clock",
        make: |config| Ok(Box::new(CassieEnv::new(config.cassie.clone()))),
    },
    EnvSpec {
        name: "cartpole",
        about: "continuous cart-pole balancing; learns in seconds (test/demo env)",
        make: |_| Ok(Box::new(CartPole::new())),
    },
    EnvSpec {
        name: "pendulum",
        about: "pendulum swing-up (Gym Pendulum-v1 dynamics), no termination",
        make: |_| Ok(Box::new(Pendulum::new())),
    },
    EnvSpec {
        name: "mountaincar",
        about: "continuous mountain car; sparse goal reward, no mirror lists",
        make: |_| Ok(Box::new(MountainCar::new())),
    },
];

/// `--env` named no registered env.
#[derive(Debug, Error)]
#[error("unknown env '{name}'; available: {}", available().join(", "))]
pub struct UnknownEnv {
    /// The name given.
    pub name: String,
}

/// Names of all registered environments.
pub fn available() -> Vec<&'static str> {
    ENVS.iter().map(|s| s.name).collect()
}

/// Looks up an environment by name.
pub fn spec(name: &str) -> Result<&'static EnvSpec, UnknownEnv> {
    ENVS.iter().find(|s| s.name == name).ok_or_else(|| UnknownEnv { name: name.to_string() })
}

/// Builds a fresh environment by name.
pub fn make(name: &str, config: &EnvConfig) -> anyhow::Result<Box<dyn Env>> {
    (spec(name)?.make)(config)
}

/// The factory of the registered env `name` with `config`: the name is resolved once, here.
pub fn factory(name: &str, config: &EnvConfig) -> Result<EnvFactory, UnknownEnv> {
    let make = spec(name)?.make;
    let config = config.clone();
    Ok(std::sync::Arc::new(move || make(&config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_env_lists_the_available_ones() {
        let err = make("walker", &EnvConfig::default()).err().unwrap().to_string();
        assert!(err.contains("unknown env 'walker'"), "{err}");
        assert!(err.contains("cartpole") && err.contains("pendulum"), "{err}");
    }

    #[test]
    fn every_env_has_consistent_mirror_lists() {
        for spec in ENVS {
            let env = (spec.make)(&EnvConfig::default()).unwrap();
            let Some(mirror) = env.mirror() else { continue };
            if let Some(m) = mirror.observation_mirror_indices() {
                assert_eq!(m.len(), env.observation_size(), "{}", spec.name);
            }
            if let Some(m) = mirror.action_mirror_indices() {
                assert_eq!(m.len(), env.action_size(), "{}", spec.name);
            }
        }
    }
}
