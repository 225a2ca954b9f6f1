//! Value critic: `V = critic_last_layer(relu-MLP(normalize(s)))`.

use tch::{nn, nn::Module, Device, Tensor};

use super::layers::{hidden_stack, linear};
use super::{NetSpec, Nonlinearity, Normalizer};

#[derive(Debug)]
pub struct Critic {
    vs: nn::VarStore,
    norm: Normalizer,
    hidden: Vec<nn::Linear>,
    last: nn::Linear,
}

impl Critic {
    pub fn new(spec: &NetSpec, device: Device) -> Self {
        let vs = nn::VarStore::new(device);
        let root = vs.root();
        let norm = Normalizer::new(&root, spec.obs_dim);
        let hidden = hidden_stack(&root, spec.obs_dim, &spec.layers);
        let latent = spec.layers.last().copied().unwrap_or(spec.obs_dim);
        let last = linear(&root / "critic_last_layer", latent, 1);
        Self { vs, norm, hidden, last }
    }

    pub fn var_store(&self) -> &nn::VarStore {
        &self.vs
    }

    pub fn var_store_mut(&mut self) -> &mut nn::VarStore {
        &mut self.vs
    }

    pub fn normalizer_mut(&mut self) -> &mut Normalizer {
        &mut self.norm
    }

    /// Values `[.., 1]` for a `[.., obs_dim]` batch.
    pub fn value(&self, obs: &Tensor) -> Tensor {
        let mut h = self.norm.forward(obs);
        for layer in &self.hidden {
            h = Nonlinearity::Relu.apply(&layer.forward(&h));
        }
        self.last.forward(&h)
    }
}
