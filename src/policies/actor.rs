//! Gaussian actor: `μ = means(base(normalize(s)))`, σ fixed or learned.

use serde::{Deserialize, Serialize};
use tch::{nn, nn::Module, Device, Tensor};

use super::base::{Base, Hidden};
use super::layers::linear;
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
    base: Base,
    means: nn::Linear,
    std: StdHead,
}

impl Actor {
    pub fn new(spec: &NetSpec, device: Device) -> Self {
        let vs = nn::VarStore::new(device);
        let root = vs.root();
        let norm = Normalizer::new(&root, spec.obs_dim);
        let base = Base::new(&root, spec, spec.nonlinearity);
        let latent = spec.layers.last().copied().unwrap_or(spec.obs_dim);
        let means = linear(&root / "means", latent, spec.act_dim);
        let std = match &spec.std {
            StdSpec::Fixed(values) => {
                let t = root.add("std", Tensor::from_slice(values).to_device(device), false);
                StdHead::Fixed(t)
            }
            StdSpec::Learned => StdHead::Learned(linear(&root / "log_stds", latent, spec.act_dim)),
        };
        Self { vs, spec: spec.clone(), norm, base, means, std }
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

    pub fn is_recurrent(&self) -> bool {
        self.base.is_recurrent()
    }

    fn heads(&self, h: &Tensor) -> (Tensor, Tensor) {
        let mean = self.means.forward(h);
        let std = match &self.std {
            StdHead::Fixed(s) => s.shallow_clone(),
            StdHead::Learned(l) => l.forward(h).clamp(-3.0, 0.5).exp(),
        };
        (mean, std)
    }

    /// Mean and standard deviation of the action distribution, for `[.., obs]` (feed-forward)
    /// or time-major sequences `[T, B, obs]` from a zero state (LSTM); the std broadcasts
    /// against the mean.
    pub fn distribution(&self, obs: &Tensor) -> (Tensor, Tensor) {
        self.heads(&self.base.forward(&self.norm.forward(obs)))
    }

    /// Deterministic action (the mean), shapes as [`Actor::distribution`].
    pub fn mean(&self, obs: &Tensor) -> Tensor {
        self.distribution(obs).0
    }

    /// One rollout step on `[obs]`, carrying the recurrent state (ignored when feed-forward).
    pub fn step(&self, obs: &Tensor, hidden: &mut Hidden) -> (Tensor, Tensor) {
        self.heads(&self.base.step(&self.norm.forward(obs), hidden))
    }
}
