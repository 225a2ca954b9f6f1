//! `--env NAME` → constructor, plus per-env training presets.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::cassie::{CassieArgs, CassieEnv};
use super::{CartPole, Env, MountainCar, Pendulum};

/// Env-specific flags (the reference's "Env arguments" group). Recorded in `experiment.json`
/// so `gait eval` and `--previous` rebuild the same env. Only Cassie has flags so far; giving
/// one of them with another env is a usage error ([`EnvArgs::check_for`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, clap::Args)]
pub struct EnvArgs {
    #[command(flatten)]
    #[serde(default)]
    pub cassie: CassieArgs,
}

impl EnvArgs {
    /// Rejects Cassie flags given with another env, naming the first one.
    pub fn check_for(&self, env: &str) -> Result<(), String> {
        if env == "cassie" || self.cassie == CassieArgs::default() {
            return Ok(());
        }
        let defaults = CassieArgs::default();
        let c = &self.cassie;
        let flag = if c.policy_rate != defaults.policy_rate {
            "--policy-rate"
        } else if c.sim_dt != defaults.sim_dt {
            "--sim-dt"
        } else if c.reward != defaults.reward {
            "--reward"
        } else if c.reference != defaults.reference {
            "--reference"
        } else if c.commands != defaults.commands {
            "--commands"
        } else if c.obs != defaults.obs {
            "--obs"
        } else if c.full_clock {
            "--full-clock"
        } else if c.full_gait {
            "--full-gait"
        } else {
            "--dynamics-randomization"
        };
        Err(format!("{flag} only applies to --env cassie, not '{env}'"))
    }
}

/// One registered environment.
pub struct EnvSpec {
    pub name: &'static str,
    pub about: &'static str,
    pub make: fn(&EnvArgs) -> anyhow::Result<Box<dyn Env>>,
    /// Training-flag defaults that suit this env (`("num-steps", "4000")`). They replace the
    /// global defaults for flags the user did not give on the command line; `gait train` prints
    /// them, and the effective values land in `experiment.info`.
    pub preset: &'static [(&'static str, &'static str)],
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
        make: |args| Ok(Box::new(CassieEnv::new(args.cassie.clone()))),
        // Chosen for a 2-core machine (README "Cassie training"): the reference nets and PPO
        // constants, 10k-step iterations (about 3 s here at 500 Hz, not run_ppo's 50k at 80
        // workers), traj-len 400 (8 s) and std 0.2 (the walking A/Bs of walking.md §4; std
        // 0.13 explored too little to leave the standing pose),
        // grad-clip 0.5 (A/B over 10 iterations: episode length 59.7 vs 56.8 with the
        // reference's 0.05; a-lr 1e-3 was unstable), and train.py's γ = 0.99 with run_ppo's
        // λ = 0.95: with run_ppo's γ = 0.95 the 0.4 s horizon cannot see a fall coming, and the
        // policy walked into falls (A/B: episode length 121 vs 95 at 0.5M steps from scratch,
        // 250 vs 135 continuing one run).
        preset: &[
            ("traj-len", "400"),
            ("num-steps", "10000"),
            ("timesteps", "6000000"),
            ("layers", "256,256"),
            ("std", "0.2"),
            ("a-lr", "3e-4"),
            ("c-lr", "3e-4"),
            ("grad-clip", "0.5"),
            ("discount", "0.99"),
            ("gae-lambda", "0.95"),
            ("batch-size", "128"),
            ("epochs", "3"),
            ("eval-freq", "10"),
            ("num-eval-eps", "8"),
            ("prenorm", "true"),
            ("prenormalize-steps", "2000"),
            ("mirror", "1.0"),
        ],
    },
    EnvSpec {
        name: "cartpole",
        about: "continuous cart-pole balancing; learns in seconds (test/demo env)",
        make: |_| Ok(Box::new(CartPole::new())),
        preset: &[
            ("traj-len", "400"),
            ("num-steps", "4000"),
            ("timesteps", "100000"),
            ("layers", "64,64"),
            ("nonlinearity", "tanh"),
            ("std", "0.5"),
            ("a-lr", "3e-4"),
            ("c-lr", "1e-3"),
            ("grad-clip", "0.5"),
            ("gae-lambda", "0.95"),
            ("epochs", "5"),
            ("eval-freq", "5"),
            ("num-eval-eps", "8"),
        ],
    },
    EnvSpec {
        name: "pendulum",
        about: "pendulum swing-up (Gym Pendulum-v1 dynamics), no termination",
        make: |_| Ok(Box::new(Pendulum::new())),
        preset: &[
            ("traj-len", "200"),
            ("num-steps", "4000"),
            ("timesteps", "300000"),
            ("layers", "64,64"),
            ("nonlinearity", "tanh"),
            ("std", "0.5"),
            ("a-lr", "1e-3"),
            ("c-lr", "1e-3"),
            ("grad-clip", "0.5"),
            ("discount", "0.95"),
            ("gae-lambda", "0.95"),
            ("epochs", "10"),
            ("eval-freq", "10"),
            ("num-eval-eps", "8"),
        ],
    },
    EnvSpec {
        name: "mountaincar",
        about: "continuous mountain car; sparse goal reward, no mirror lists",
        make: |_| Ok(Box::new(MountainCar::new())),
        preset: &[
            ("traj-len", "999"),
            ("num-steps", "4000"),
            ("timesteps", "200000"),
            ("layers", "64,64"),
            ("nonlinearity", "tanh"),
            ("std", "0.8"),
            ("a-lr", "3e-4"),
            ("c-lr", "1e-3"),
            ("grad-clip", "0.5"),
            ("gae-lambda", "0.95"),
            ("eval-freq", "10"),
            ("num-eval-eps", "4"),
        ],
    },
];

#[derive(Debug, Error)]
#[error("unknown env '{name}'; available: {}", available().join(", "))]
pub struct UnknownEnv {
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
pub fn make(name: &str, args: &EnvArgs) -> anyhow::Result<Box<dyn Env>> {
    (spec(name)?.make)(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_env_lists_the_available_ones() {
        let err = make("walker", &EnvArgs::default()).err().unwrap().to_string();
        assert!(err.contains("unknown env 'walker'"), "{err}");
        assert!(err.contains("cartpole") && err.contains("pendulum"), "{err}");
    }

    #[test]
    fn every_env_has_consistent_mirror_lists() {
        for spec in ENVS {
            let env = (spec.make)(&EnvArgs::default()).unwrap();
            if let Some(m) = env.observation_mirror_indices() {
                assert_eq!(m.len(), env.observation_size(), "{}", spec.name);
            }
            if let Some(m) = env.action_mirror_indices() {
                assert_eq!(m.len(), env.action_size(), "{}", spec.name);
            }
        }
    }
}
