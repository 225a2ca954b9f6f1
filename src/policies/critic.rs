//! Value critic: `V = critic_last_layer(MLP(normalize(s)))`, its hidden activation
//! [`NetSpec::critic_nonlinearity`] (ReLU by default), where `s` is the policy's
//! observation or, with an asymmetric critic, the env's critic observation
//! ([`NetSpec::critic_dim`]).

use tch::{nn, nn::Module, Device, Tensor};

use super::base::{Base, Hidden};
use super::layers::linear;
use super::normalizer::to_f32_vec;
use super::{NetSpec, Normalizer};

/// The value network, with its own observation normalizer.
#[derive(Debug)]
pub struct Critic {
    vs: nn::VarStore,
    norm: Normalizer,
    base: Base,
    last: nn::Linear,
}

impl Critic {
    /// A fresh critic for `spec` on `device`.
    pub fn new(spec: &NetSpec, device: Device) -> Self {
        let vs = nn::VarStore::new(device);
        let root = vs.root();
        let inputs = spec.critic_dim();
        let norm = Normalizer::new(&root, inputs, spec.obs_clip);
        let base = Base::new(&root, spec, inputs, spec.critic_nonlinearity);
        let latent = spec.layers.last().copied().unwrap_or(inputs);
        let last = linear(&root / "critic_last_layer", latent, 1);
        spec.init.apply(&vs);
        Self { vs, norm, base, last }
    }

    /// Its variables.
    pub fn var_store(&self) -> &nn::VarStore {
        &self.vs
    }

    /// Its variables, mutably.
    pub fn var_store_mut(&mut self) -> &mut nn::VarStore {
        &mut self.vs
    }

    /// Its observation normalizer.
    pub fn normalizer(&self) -> &Normalizer {
        &self.norm
    }

    /// Its observation normalizer, mutably.
    pub fn normalizer_mut(&mut self) -> &mut Normalizer {
        &mut self.norm
    }

    /// Values `[.., 1]` for `[.., obs]` (feed-forward) or `[T, B, 1]` for time-major
    /// sequences from a zero state (LSTM).
    pub fn value(&self, obs: &Tensor) -> Tensor {
        self.last.forward(&self.base.forward(&self.norm.forward(obs)))
    }

    /// The values of one trajectory's observations, `obs` flat with `dim` values per step,
    /// from a zero recurrent state, in one batched forward. Why: one call per step spent
    /// about a tenth of a Cassie sampler's time in libtorch's per-call overhead (perf of a
    /// training run, 2026-11-27: `value_step` 11 % of the worker's samples).
    pub fn trajectory_values(&self, obs: &[f32], dim: usize) -> Vec<f32> {
        let (n, d) = ((obs.len() / dim.max(1)) as i64, dim as i64);
        let shape: &[i64] = if self.base.is_recurrent() { &[n, 1, d] } else { &[n, d] };
        let x = Tensor::from_slice(obs).view(shape);
        to_f32_vec(&self.value(&x))
    }

    /// One rollout step on `[obs]` → `[1]`, carrying the recurrent state.
    pub fn value_step(&self, obs: &Tensor, hidden: &mut Hidden) -> Tensor {
        self.last.forward(&self.base.step(&self.norm.forward(obs), hidden))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::{Nonlinearity, ParamSnapshot};

    /// `critic_nonlinearity` changes the critic's hidden activation, nothing else: the same
    /// parameters give other values, and a spec written before the setting loads as ReLU.
    #[test]
    fn the_critic_activation_is_the_specs() {
        let relu_spec = NetSpec::ff(4, 2, &[8, 8]);
        let tanh_spec = NetSpec { critic_nonlinearity: Nonlinearity::Tanh, ..relu_spec.clone() };
        let relu = Critic::new(&relu_spec, Device::Cpu);
        let mut tanh = Critic::new(&tanh_spec, Device::Cpu);
        ParamSnapshot::of(relu.var_store()).load_into(tanh.var_store_mut()).unwrap();
        let obs: Vec<f32> = (0..40).map(|i| (i as f32 * 0.37).sin() * 3.0).collect();
        let (a, b) = (relu.trajectory_values(&obs, 4), tanh.trajectory_values(&obs, 4));
        assert_eq!(a.len(), 10);
        assert!(a.iter().zip(&b).any(|(x, y)| (x - y).abs() > 1e-4), "{a:?} {b:?}");
        let mut old = serde_json::to_value(&relu_spec).unwrap();
        old.as_object_mut().unwrap().remove("critic_nonlinearity");
        let loaded: NetSpec = serde_json::from_value(old).unwrap();
        assert_eq!(loaded.critic_nonlinearity, Nonlinearity::Relu);
    }
}
