//! Gaussian actor: `μ = means(base(normalize(s)))`, σ fixed or learned.

use serde::{Deserialize, Serialize};
use tch::{nn, nn::Module, Device, Tensor};

use super::layers::{hidden_stack, linear};
use super::{NetSpec, Normalizer};

/// How the action standard deviation is produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StdSpec {
    /// Fixed σ per action dim (`--std` / `--std-array`), stored as the buffer `std`.
    Fixed(Vec<f32>),
    /// State-dependent σ = exp(clamp(log_stds(h), -3, 0.5)) (`--learn-std`).
    Learned,
}

#[derive(Debug)]
enum StdHead {
    Fixed(Tensor),
    Learned(nn::Linear),
}

/// Feed-forward Gaussian policy.
#[derive(Debug)]
pub struct Actor {
    vs: nn::VarStore,
    spec: NetSpec,
    norm: Normalizer,
    hidden: Vec<nn::Linear>,
    means: nn::Linear,
    std: StdHead,
}

impl Actor {
    pub fn new(spec: &NetSpec, device: Device) -> Self {
        let vs = nn::VarStore::new(device);
        let root = vs.root();
        let norm = Normalizer::new(&root, spec.obs_dim);
        let hidden = hidden_stack(&root, spec.obs_dim, &spec.layers);
        let latent = spec.layers.last().copied().unwrap_or(spec.obs_dim);
        let means = linear(&root / "means", latent, spec.act_dim);
        let std = match &spec.std {
            StdSpec::Fixed(values) => {
                let t = root.add("std", Tensor::from_slice(values).to_device(device), false);
                StdHead::Fixed(t)
            }
            StdSpec::Learned => StdHead::Learned(linear(&root / "log_stds", latent, spec.act_dim)),
        };
        Self { vs, spec: spec.clone(), norm, hidden, means, std }
    }

    pub fn spec(&self) -> &NetSpec {
        &self.spec
    }

    pub fn var_store(&self) -> &nn::VarStore {
        &self.vs
    }

    pub fn var_store_mut(&mut self) -> &mut nn::VarStore {
        &mut self.vs
    }

    pub fn normalizer(&self) -> &Normalizer {
        &self.norm
    }

    pub fn normalizer_mut(&mut self) -> &mut Normalizer {
        &mut self.norm
    }

    fn latent(&self, obs: &Tensor) -> Tensor {
        let mut h = self.norm.forward(obs);
        for layer in &self.hidden {
            h = self.spec.nonlinearity.apply(&layer.forward(&h));
        }
        h
    }

    /// Mean and standard deviation of the action distribution for a `[.., obs_dim]` batch; the
    /// std broadcasts against the mean.
    pub fn distribution(&self, obs: &Tensor) -> (Tensor, Tensor) {
        let h = self.latent(obs);
        let mean = self.means.forward(&h);
        let std = match &self.std {
            StdHead::Fixed(s) => s.shallow_clone(),
            StdHead::Learned(l) => l.forward(&h).clamp(-3.0, 0.5).exp(),
        };
        (mean, std)
    }

    /// Deterministic action (the mean).
    pub fn mean(&self, obs: &Tensor) -> Tensor {
        self.means.forward(&self.latent(obs))
    }
}
