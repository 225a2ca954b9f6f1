//! Networks on tch: Gaussian actors and value critics, each owning its `VarStore` with the
//! observation normalizer inside (so checkpoints and broadcasts always carry it).

mod actor;
mod base;
mod critic;
mod fast;
mod layers;
pub(crate) mod normalizer;
mod params;

pub use actor::{Actor, StdSpec};
pub use base::Hidden;
pub use critic::Critic;
pub use fast::FastActor;
pub use layers::{Arch, Nonlinearity, WeightInit};
pub use normalizer::{Normalizer, RunningStats};
pub use params::{
    all_finite, first_non_finite, load_checkpoint, load_named, read_tensors, save_checkpoint,
    strip_prefix, CheckpointError, NonFiniteSave, ParamSnapshot,
};

use serde::{Deserialize, Serialize};

/// Everything needed to rebuild an actor/critic pair with the same parameter shapes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetSpec {
    /// Observation size.
    pub obs_dim: usize,
    /// Action size.
    pub act_dim: usize,
    /// Feed-forward or LSTM.
    pub arch: Arch,
    /// Hidden layer widths.
    pub layers: Vec<usize>,
    /// Hidden activation of the actor.
    pub nonlinearity: Nonlinearity,
    /// Hidden activation of the critic (runs from before the setting load as ReLU, what the
    /// reference's critic uses; always written, as `init`).
    #[serde(default)]
    pub critic_nonlinearity: Nonlinearity,
    /// The action standard deviation.
    pub std: StdSpec,
    /// Normalized observations are clipped to ±this (None: not clipped; runs from before the
    /// clip load as None).
    #[serde(default)]
    pub obs_clip: Option<f32>,
    /// The critic's own observation size, when the env gives the critic more than the policy
    /// sees (an asymmetric critic, [`crate::envs::PrivilegedCritic::critic_observation_size`]); None: the
    /// critic reads the policy's observation (every run before the setting existed).
    #[serde(default)]
    pub critic_obs_dim: Option<usize>,
    /// How the linear layers' weights start (runs from before the setting load as uniform;
    /// always written: the MPI transport's encoding has no optional fields).
    #[serde(default)]
    pub init: WeightInit,
}

impl NetSpec {
    /// A feed-forward spec with ReLU hidden layers and a fixed std of 0.13 per action (the
    /// config's defaults); other specs refine it with struct update syntax.
    pub fn ff(obs_dim: usize, act_dim: usize, layers: &[usize]) -> Self {
        Self {
            obs_dim,
            act_dim,
            arch: Arch::Ff,
            layers: layers.to_vec(),
            nonlinearity: Nonlinearity::Relu,
            critic_nonlinearity: Nonlinearity::Relu,
            std: StdSpec::Fixed(vec![0.13; act_dim]),
            obs_clip: None,
            critic_obs_dim: None,
            init: WeightInit::Uniform,
        }
    }

    /// The critic's input size: its own observation's, or the policy's.
    pub fn critic_dim(&self) -> usize {
        self.critic_obs_dim.unwrap_or(self.obs_dim)
    }

    /// Parameters of the actor plus the critic (weights and biases; an LSTM layer counts its
    /// four gates). Computed from the widths, before anything is allocated, so a network too
    /// large for the machine is refused with numbers instead of dying in libtorch.
    pub fn num_params(&self) -> u128 {
        let widths = |inputs: usize, out: usize| {
            let mut w: Vec<u128> = vec![inputs as u128];
            w.extend(self.layers.iter().map(|&l| l as u128));
            w.push(out as u128);
            w
        };
        let count = |w: &[u128]| -> u128 {
            w.windows(2)
                .enumerate()
                .map(|(i, p)| {
                    let recurrent = self.arch == Arch::Lstm && i + 2 < w.len();
                    if recurrent {
                        4 * (p[0] + p[1] + 2) * p[1]
                    } else {
                        (p[0] + 1) * p[1]
                    }
                })
                .sum()
        };
        count(&widths(self.obs_dim, self.act_dim))
            + count(&widths(self.critic_dim(), 1))
            + self.act_dim as u128
    }
}

impl std::fmt::Display for NetSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let layers: Vec<String> = self.layers.iter().map(usize::to_string).collect();
        write!(
            f,
            "obs {}, act {}, {:?} {} {:?}, std {:?}",
            self.obs_dim,
            self.act_dim,
            self.arch,
            layers.join("x"),
            self.nonlinearity,
            self.std
        )?;
        match self.critic_obs_dim {
            Some(n) => write!(f, ", critic obs {n}"),
            None => Ok(()),
        }
    }
}
