//! The env catalog: `--env NAME` → constructor and settings section ([`ENVS`], one row per
//! env), and the env-specific settings the trainer asks about through [`EnvSchedule`].
//! (Training presets are typed functions in `crate::config::presets`.)

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::cassie::{CassieConfig, CassieEnv};
use super::gym::{GymEnv, Task};
use super::{CartPole, Env, EnvFactory, MountainCar, Pendulum};

/// Env-specific settings (the reference's "Env arguments" group), one section per env that has
/// any. Recorded in `experiment.json` so `gait eval` and `--previous` rebuild the same env.
/// An env with settings has a field here and an [`EnvSection`] in its catalog row; changing
/// one env's settings for another env is refused ([`EnvConfig::check_for`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvConfig {
    /// `[env.cassie]`.
    #[serde(default)]
    pub cassie: CassieConfig,
}

impl EnvConfig {
    /// Every env section's settings, under `path` (`env.cassie.sim_dt`), from the catalog.
    pub fn settings(path: &str, out: &mut Vec<crate::settings::Declared>) {
        for section in ENVS.iter().filter_map(|spec| spec.section.as_ref()) {
            (section.declare)(&format!("{path}.{}", section.key), out);
        }
    }

    /// `env`'s settings as the trainer asks of them, if it has a section.
    fn schedule(&self, env: &str) -> Option<&dyn EnvSchedule> {
        spec(env).ok()?.section.as_ref().map(|section| (section.schedule)(self))
    }

    /// The curriculum gate of `env`'s settings, if its curriculum waits on an evaluation.
    pub fn stage_gate_for(&self, env: &str) -> Option<super::StageGate> {
        self.schedule(env)?.stage_gate()
    }

    /// The training step from which `env`'s training distribution stops changing (0 for an
    /// env without a curriculum; `None` while a gate it waits for is closed).
    pub fn settled_from(&self, env: &str, stage_from: Option<u64>) -> Option<u64> {
        self.schedule(env).map_or(Some(0), |s| s.settled_from(stage_from))
    }

    /// The strength of `env`'s training perturbations after `timesteps` of a run whose gated
    /// stage began at `stage_from`, in [0, 1]; `None` for an env without a perturbation
    /// schedule.
    pub fn perturbation_strength(
        &self,
        env: &str,
        timesteps: u64,
        stage_from: Option<u64>,
    ) -> Option<f64> {
        self.schedule(env)?.perturbation_strength(timesteps, stage_from)
    }

    /// `env`'s own section is checked as a whole; another env's section that differs from its
    /// defaults is refused, naming its first changed setting as a flag (each setting's range
    /// is checked with the others', [`crate::config::TrainConfig::validate`]).
    pub fn check_for(&self, env: &str) -> Result<(), String> {
        for spec in ENVS {
            let Some(section) = &spec.section else { continue };
            if spec.name == env {
                (section.schedule)(self).check()?;
            } else if let Some(changed) = (section.changed)(self) {
                return Err(format!(
                    "--{changed} only applies to --env {}, not '{env}'",
                    spec.name
                ));
            }
        }
        Ok(())
    }
}

/// What the trainer asks of an env's settings section: whether its values go together, and
/// the shape of its curriculum (an env's own managers decide what a stage does; the runner
/// only needs when it opens and when the training distribution stops changing).
pub trait EnvSchedule {
    /// Refuses combinations of the section's values that cannot run (one message).
    fn check(&self) -> Result<(), String>;
    /// The curriculum stage an evaluation opens, if any.
    fn stage_gate(&self) -> Option<super::StageGate> {
        None
    }
    /// The training step from which the training distribution stops changing, given when the
    /// gated stage began (`None`: a gate it waits for is still closed).
    fn settled_from(&self, _stage_from: Option<u64>) -> Option<u64> {
        Some(0)
    }
    /// The strength of the training perturbations after `timesteps`, in [0, 1]; `None`
    /// without a perturbation schedule.
    fn perturbation_strength(&self, _timesteps: u64, _stage_from: Option<u64>) -> Option<f64> {
        None
    }
    /// Turns off the preset's values that cannot run with what the user chose in a fresh run,
    /// instead of refusing the run; a note for each (none: nothing gives way).
    fn give_way(&mut self, _user: &UserChoices) -> Vec<String> {
        Vec::new()
    }
    /// The same for a run continued with `--previous`, whose values are that run's.
    fn give_way_continued(&mut self, _user: &UserChoices) -> Vec<String> {
        Vec::new()
    }
    /// Applies an evaluation's physics and sensing override (`gait eval --sim ...`) and says
    /// what runs where, or refuses it (one message); `None`: the env has no physics models or
    /// sensors to override.
    fn apply_physics(&mut self, _over: &super::PhysicsOverride) -> Option<Result<String, String>> {
        None
    }
}

/// What the user chose, as an env's preset must respect it ([`EnvSchedule::give_way`]).
pub struct UserChoices<'a> {
    /// Whether the run evaluates at all (`--num-eval-eps 0` does not, so no gate can open).
    pub evaluates: bool,
    /// Whether the user set the section's setting `leaf` (`robust_start_speed`), in a config
    /// file or as a flag: such a value never gives way.
    pub typed: &'a dyn Fn(&str) -> bool,
}

/// An env's settings section: its key under `[env]` and how the config reaches it.
pub struct EnvSection {
    /// `[env.KEY]`, and the middle of its settings' paths (`env.cassie.sim_dt`).
    pub key: &'static str,
    /// Declares the section's settings under a path.
    pub declare: fn(&str, &mut Vec<crate::settings::Declared>),
    /// The section in a config, as the trainer asks of it.
    pub schedule: fn(&EnvConfig) -> &dyn EnvSchedule,
    /// The same, to let the preset's values give way ([`EnvSchedule::give_way`]).
    pub schedule_mut: fn(&mut EnvConfig) -> &mut dyn EnvSchedule,
    /// The section's first setting that differs from its default, as a flag name.
    pub changed: fn(&EnvConfig) -> Option<String>,
}

/// The first setting of `section` that differs from its default, with dashes (`sim-dt`).
fn first_change<S: Serialize + Default + PartialEq>(section: &S) -> Option<String> {
    if *section == S::default() {
        return None;
    }
    let ours = serde_json::to_value(section).unwrap_or_default();
    let defaults = serde_json::to_value(S::default()).unwrap_or_default();
    let changed = ours
        .as_object()
        .and_then(|m| m.iter().find(|(k, v)| defaults.get(k.as_str()) != Some(*v)))
        .map_or_else(String::new, |(k, _)| k.replace('_', "-"));
    Some(changed)
}

/// One registered environment.
pub struct EnvSpec {
    /// The `--env` name.
    pub name: &'static str,
    /// One line for help.
    pub about: &'static str,
    /// Builds the env from the config's env sections.
    pub make: fn(&EnvConfig) -> anyhow::Result<Box<dyn Env>>,
    /// Its settings section, if it has one.
    pub section: Option<EnvSection>,
    /// Its training preset: a TOML document over the defaults (any section of the config),
    /// under a config file and typed flags; empty for none.
    pub preset: &'static str,
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
        preset: include_str!("cassie/preset.toml"),
        section: Some(EnvSection {
            key: "cassie",
            declare: crate::settings::Declared::section::<CassieConfig>,
            schedule: |config| &config.cassie,
            schedule_mut: |config| &mut config.cassie,
            changed: |config| first_change(&config.cassie),
        }),
    },
    EnvSpec {
        name: "cartpole",
        about: "continuous cart-pole balancing; learns in seconds (test/demo env)",
        make: |_| Ok(Box::new(CartPole::new())),
        section: None,
        preset: include_str!("presets/cartpole.toml"),
    },
    EnvSpec {
        name: "pendulum",
        about: "pendulum swing-up (Gym Pendulum-v1 dynamics), no termination",
        make: |_| Ok(Box::new(Pendulum::new())),
        section: None,
        preset: include_str!("presets/pendulum.toml"),
    },
    EnvSpec {
        name: "mountaincar",
        about: "continuous mountain car; sparse goal reward, no mirror lists",
        make: |_| Ok(Box::new(MountainCar::new())),
        section: None,
        preset: include_str!("presets/mountaincar.toml"),
    },
    EnvSpec {
        name: "gym/InvertedPendulum-v5",
        about: "Gymnasium InvertedPendulum-v5 (MuJoCo): balance a pole on a cart",
        make: |_| Ok(Box::new(GymEnv::new(Task::InvertedPendulum)?)),
        section: None,
        preset: include_str!("presets/gym.toml"),
    },
    EnvSpec {
        name: "gym/InvertedDoublePendulum-v5",
        about: "Gymnasium InvertedDoublePendulum-v5 (MuJoCo): balance two poles on a cart",
        make: |_| Ok(Box::new(GymEnv::new(Task::InvertedDoublePendulum)?)),
        section: None,
        preset: include_str!("presets/gym.toml"),
    },
    EnvSpec {
        name: "gym/Reacher-v5",
        about: "Gymnasium Reacher-v5 (MuJoCo): a two-link arm's fingertip to a random target",
        make: |_| Ok(Box::new(GymEnv::new(Task::Reacher)?)),
        section: None,
        preset: include_str!("presets/gym.toml"),
    },
    EnvSpec {
        name: "gym/Pusher-v5",
        about: "Gymnasium Pusher-v5 (MuJoCo): push an object to a goal with a 7-joint arm",
        make: |_| Ok(Box::new(GymEnv::new(Task::Pusher)?)),
        section: None,
        preset: include_str!("presets/gym.toml"),
    },
    EnvSpec {
        name: "gym/Swimmer-v5",
        about: "Gymnasium Swimmer-v5 (MuJoCo): a three-link swimmer, forward",
        make: |_| Ok(Box::new(GymEnv::new(Task::Swimmer)?)),
        section: None,
        preset: include_str!("presets/gym.toml"),
    },
    EnvSpec {
        name: "gym/Hopper-v5",
        about: "Gymnasium Hopper-v5 (MuJoCo): hop forward on one leg",
        make: |_| Ok(Box::new(GymEnv::new(Task::Hopper)?)),
        section: None,
        preset: include_str!("presets/gym.toml"),
    },
    EnvSpec {
        name: "gym/Walker2d-v5",
        about: "Gymnasium Walker2d-v5 (MuJoCo): walk forward, planar biped",
        make: |_| Ok(Box::new(GymEnv::new(Task::Walker2d)?)),
        section: None,
        preset: include_str!("presets/gym.toml"),
    },
    EnvSpec {
        name: "gym/HalfCheetah-v5",
        about: "Gymnasium HalfCheetah-v5 (MuJoCo): run forward, never terminates",
        make: |_| Ok(Box::new(GymEnv::new(Task::HalfCheetah)?)),
        section: None,
        preset: include_str!("presets/gym.toml"),
    },
    EnvSpec {
        name: "gym/Ant-v5",
        about: "Gymnasium Ant-v5 (MuJoCo): a four-legged ant, forward",
        make: |_| Ok(Box::new(GymEnv::new(Task::Ant)?)),
        section: None,
        preset: include_str!("presets/gym.toml"),
    },
    EnvSpec {
        name: "gym/Humanoid-v5",
        about: "Gymnasium Humanoid-v5 (MuJoCo): a 3D humanoid, forward",
        make: |_| Ok(Box::new(GymEnv::new(Task::Humanoid)?)),
        section: None,
        preset: include_str!("presets/gym.toml"),
    },
    EnvSpec {
        name: "gym/HumanoidStandup-v5",
        about: "Gymnasium HumanoidStandup-v5 (MuJoCo): a 3D humanoid, from lying to standing",
        make: |_| Ok(Box::new(GymEnv::new(Task::HumanoidStandup)?)),
        section: None,
        preset: include_str!("presets/gym.toml"),
    },
];

/// `--env` named no registered env.
#[derive(Debug, Error)]
#[error("unknown env '{name}'; available: {}", available().join(", "))]
pub struct UnknownEnv {
    /// The name given.
    pub name: String,
}

/// [`EnvSchedule::apply_physics`] on the section of env `name` in `config`; `None` for an env
/// without physics models (or unknown).
pub fn apply_physics(
    name: &str,
    config: &mut EnvConfig,
    over: &super::PhysicsOverride,
) -> Option<Result<String, String>> {
    let section = spec(name).ok()?.section.as_ref()?;
    (section.schedule_mut)(config).apply_physics(over)
}

/// Whether env `name` has physics models and sensors an evaluation can choose among
/// (`gait check` runs its cells on them).
pub fn has_physics_models(name: &str) -> bool {
    apply_physics(name, &mut EnvConfig::default(), &super::PhysicsOverride::default()).is_some()
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
