//! RMSprop with inspectable state (A2C's optimizer), on a [`FlatParams`] buffer: PyTorch's
//! `torch.optim.RMSprop` without momentum, centering or weight decay:
//! `s ← α s + (1−α) g²`, `p ← p − lr · g / (√s + ε)`.

use std::collections::HashMap;

use anyhow::Result;
use tch::{nn::VarStore, Tensor};

use super::flat_params::FlatParams;

pub struct RmsProp {
    params: FlatParams,
    /// The running mean of squared gradients.
    square_avg: Tensor,
    lr: f64,
    alpha: f64,
    eps: f64,
}

impl RmsProp {
    pub fn new(vs: &VarStore, lr: f64, alpha: f64, eps: f64) -> Self {
        let params = FlatParams::new(vs);
        let square_avg = params.zeros();
        Self { params, square_avg, lr, alpha, eps }
    }

    /// Sets the learning rate of the next steps (the running mean stays).
    pub fn set_lr(&mut self, lr: f64) {
        self.lr = lr;
    }

    pub fn zero_grad(&mut self) {
        self.params.zero_grad();
    }

    /// Clips the joint gradient L2 norm to `max` ([`FlatParams::clipped_grad`]), then takes
    /// one RMSprop step.
    pub fn clip_and_step(&mut self, max: f64) {
        let g = self.params.clipped_grad(max);
        tch::no_grad(|| {
            let _ = self.square_avg.g_mul_scalar_(self.alpha);
            let _ = self.square_avg.addcmul_(&(&g * (1.0 - self.alpha)), &g);
            if self.lr == 0.0 {
                return;
            }
            // p − lr·g/(√s + ε) = p + g/d with d = −(√s + ε)/lr (tch's addcdiv_ has no value).
            let mut denom = self.square_avg.sqrt();
            let _ = denom.g_add_scalar_(self.eps);
            let _ = denom.g_mul_scalar_(-1.0 / self.lr);
            let _ = self.params.flat_mut().addcdiv_(&g, &denom);
        });
    }

    /// The first parameter (by name) holding a NaN or infinity after a step, if any.
    pub fn first_non_finite_param(&self) -> Option<&str> {
        self.params.first_non_finite()
    }

    /// The state as named tensors: `square_avg/<param>`.
    pub fn state(&self) -> Vec<(String, Tensor)> {
        self.params.named("square_avg", &self.square_avg)
    }

    /// Restores a state saved by [`RmsProp::state`]. Nothing changes on error.
    pub fn load_state(&mut self, state: &HashMap<String, Tensor>) -> Result<()> {
        let square_avg = self.params.unnamed("square_avg", state)?;
        tch::no_grad(|| self.square_avg.copy_(&square_avg));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::flat_params::test_model as model;
    use tch::nn::{self, Module, OptimizerConfig};
    use tch::Kind;

    /// Matches libtorch's own RMSprop step for step, gradient clipping included, and its
    /// state survives a save and load.
    #[test]
    fn matches_libtorch_rmsprop_and_round_trips() {
        // The seeded weights and data, whatever other tests draw meanwhile.
        let _init = crate::algos::seeding::INIT_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        tch::manual_seed(1);
        let vs_a = VarStore::new(tch::Device::Cpu);
        let net_a = model(&vs_a);
        let mut vs_b = VarStore::new(tch::Device::Cpu);
        let net_b = model(&vs_b);
        vs_b.copy(&vs_a).unwrap();
        let mut ours = RmsProp::new(&vs_a, 7e-3, 0.99, 1e-5);
        let cfg = nn::RmsProp { alpha: 0.99, eps: 1e-5, wd: 0.0, momentum: 0.0, centered: false };
        let mut theirs = cfg.build(&vs_b, 7e-3).unwrap();
        let x = Tensor::randn([16, 3], (Kind::Float, tch::Device::Cpu));
        let y = Tensor::randn([16, 2], (Kind::Float, tch::Device::Cpu));
        for _ in 0..25 {
            ours.zero_grad();
            (net_a.forward(&x) - &y).square().mean(Kind::Float).backward();
            ours.clip_and_step(0.1);
            theirs.zero_grad();
            (net_b.forward(&x) - &y).square().mean(Kind::Float).backward();
            theirs.clip_grad_norm(0.1);
            theirs.step();
        }
        for (name, a) in vs_a.variables() {
            let b = &vs_b.variables()[&name];
            let diff = (&a - b).abs().max().double_value(&[]);
            assert!(diff < 1e-5, "{name}: {diff}");
        }
        let saved: HashMap<String, Tensor> =
            ours.state().into_iter().map(|(k, t)| (k, t.copy())).collect();
        let mut other = RmsProp::new(&vs_a, 7e-3, 0.99, 1e-5);
        other.load_state(&saved).unwrap();
        assert!(ours.square_avg.equal(&other.square_avg));
        let mut missing = saved;
        missing.remove("square_avg/b.bias");
        let err = other.load_state(&missing).unwrap_err().to_string();
        assert!(err.contains("lacks 'square_avg/b.bias'"), "{err}");
    }
}
