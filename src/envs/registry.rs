//! The env catalog: `--env NAME` → constructor, settings section and preset ([`ENVS`], one
//! row per env). The sections themselves, and what the trainer asks of them, are
//! `super::sections`.
//! (Training presets are typed functions in `crate::config::presets`.)

use thiserror::Error;

use super::cassie::{migrate_config, CassieConfig, CassieEnv};
use super::gym::{GymConfig, GymEnv, Task};
use super::{CartPole, Env, EnvConfig, EnvFactory, EnvSection, MountainCar, Pendulum};

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
        make: |config| Ok(Box::new(CassieEnv::new(config.get::<CassieConfig>().clone()))),
        preset: include_str!("cassie/preset.toml"),
        section: Some(EnvSection::of::<CassieConfig>("cassie").migrating(migrate_config)),
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
        preset: include_str!("presets/gym-halfcheetah.toml"),
    },
    EnvSpec {
        name: "gym/Ant-v5",
        about: "Gymnasium Ant-v5 (MuJoCo): a four-legged ant, forward",
        make: |config| Ok(Box::new(GymEnv::with(Task::Ant, config.get::<GymConfig>())?)),
        section: Some(EnvSection::of::<GymConfig>("gym")),
        preset: include_str!("presets/gym.toml"),
    },
    EnvSpec {
        name: "gym/Humanoid-v5",
        about: "Gymnasium Humanoid-v5 (MuJoCo): a 3D humanoid, forward",
        make: |config| Ok(Box::new(GymEnv::with(Task::Humanoid, config.get::<GymConfig>())?)),
        section: Some(EnvSection::of::<GymConfig>("gym")),
        preset: include_str!("presets/gym.toml"),
    },
    EnvSpec {
        name: "gym/HumanoidStandup-v5",
        about: "Gymnasium HumanoidStandup-v5 (MuJoCo): a 3D humanoid, from lying to standing",
        make: |config| {
            Ok(Box::new(GymEnv::with(Task::HumanoidStandup, config.get::<GymConfig>())?))
        },
        section: Some(EnvSection::of::<GymConfig>("gym")),
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

/// [`super::EnvSchedule::apply_physics`] on the section of env `name` in `config`; `None` for an env
/// without physics models (or unknown).
pub fn apply_physics(
    name: &str,
    config: &mut EnvConfig,
    over: &super::PhysicsOverride,
) -> Option<Result<String, String>> {
    config.schedule_mut(name)?.apply_physics(over)
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
