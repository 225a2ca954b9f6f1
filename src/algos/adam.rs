//! Adam with inspectable state, so a resumed run continues with the same moments: PyTorch's
//! `torch.optim.Adam` (no weight decay, no amsgrad) on a [`FlatParams`] buffer:
//! `m ← lerp(m, g, 1−β1)`, `v ← β2 v + (1−β2) g²`,
//! `p ← p − lr/(1−β1ᵗ) · m / (√v / √(1−β2ᵗ) + ε)`.

use std::collections::HashMap;

use anyhow::{Context, Result};
use tch::{nn::VarStore, Kind, Tensor};

use super::flat_params::FlatParams;

pub struct Adam {
    params: FlatParams,
    m: Tensor,
    v: Tensor,
    step: i64,
    lr: f64,
    beta1: f64,
    beta2: f64,
    eps: f64,
}

impl Adam {
    pub fn new(vs: &VarStore, lr: f64, eps: f64) -> Self {
        let params = FlatParams::new(vs);
        let (m, v) = (params.zeros(), params.zeros());
        Self { params, m, v, step: 0, lr, beta1: 0.9, beta2: 0.999, eps }
    }

    /// Sets the learning rate of the next steps (the moments and step count stay).
    pub fn set_lr(&mut self, lr: f64) {
        self.lr = lr;
    }

    pub fn zero_grad(&mut self) {
        self.params.zero_grad();
    }

    /// Clips the joint gradient L2 norm to `max` ([`FlatParams::clipped_grad`]), then takes
    /// one Adam step.
    pub fn clip_and_step(&mut self, max: f64) {
        self.step += 1;
        let t = self.step as i32;
        let bias1 = 1.0 - self.beta1.powi(t);
        let bias2_sqrt = (1.0 - self.beta2.powi(t)).sqrt();
        let step_size = self.lr / bias1;
        let g = self.params.clipped_grad(max);
        tch::no_grad(|| {
            let _ = self.m.lerp_(&g, 1.0 - self.beta1);
            let _ = self.v.g_mul_scalar_(self.beta2);
            let _ = self.v.addcmul_(&(&g * (1.0 - self.beta2)), &g);
            // A zero rate (the end of `--lr-decay 1`) moves nothing; the division below
            // would be by zero.
            if step_size == 0.0 {
                return;
            }
            // p − step·m/(√v/b2 + ε) = p + m/d with d = −(√v/b2 + ε)/step, so one in-place
            // addcdiv finishes the step (tch's addcdiv_ has no `value`).
            let mut denom = self.v.sqrt();
            let _ = denom.g_mul_scalar_(-1.0 / (bias2_sqrt * step_size));
            let _ = denom.g_add_scalar_(-self.eps / step_size);
            let _ = self.params.flat_mut().addcdiv_(&self.m, &denom);
        });
    }

    /// The first parameter (by name) holding a NaN or infinity after a step, if any.
    pub fn first_non_finite_param(&self) -> Option<&str> {
        self.params.first_non_finite()
    }

    /// The state as named tensors: `m/<param>`, `v/<param>`, `step`.
    pub fn state(&self) -> Vec<(String, Tensor)> {
        let mut out = self.params.named("m", &self.m);
        out.extend(self.params.named("v", &self.v));
        out.push(("step".to_string(), Tensor::from_slice(&[self.step])));
        out
    }

    /// Restores a state saved by [`Adam::state`]; every moment must be present with the
    /// parameter's shape. Nothing changes on error.
    pub fn load_state(&mut self, state: &HashMap<String, Tensor>) -> Result<()> {
        let m = self.params.unnamed("m", state)?;
        let v = self.params.unnamed("v", state)?;
        let step = state.get("step").context("optimizer state lacks 'step'")?;
        let step = step.to_kind(Kind::Int64).int64_value(&[0]);
        anyhow::ensure!(step >= 0, "optimizer state has a negative step count ({step})");
        self.step = step;
        tch::no_grad(|| {
            self.m.copy_(&m);
            self.v.copy_(&v);
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::flat_params::test_model as model;
    use tch::nn::{self, Module, OptimizerConfig};

    /// Matches libtorch's own Adam step for step, gradient clipping included.
    #[test]
    fn matches_libtorch_adam() {
        tch::manual_seed(1);
        let vs_a = VarStore::new(tch::Device::Cpu);
        let net_a = model(&vs_a);
        let mut vs_b = VarStore::new(tch::Device::Cpu);
        let net_b = model(&vs_b);
        vs_b.copy(&vs_a).unwrap();
        let mut ours = Adam::new(&vs_a, 1e-2, 1e-6);
        let cfg = nn::Adam { beta1: 0.9, beta2: 0.999, wd: 0.0, eps: 1e-6, amsgrad: false };
        let mut theirs = cfg.build(&vs_b, 1e-2).unwrap();
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
            assert!(diff < 1e-6, "{name}: {diff}");
        }
    }

    #[test]
    fn state_round_trips() {
        let vs = VarStore::new(tch::Device::Cpu);
        let net = model(&vs);
        let mut adam = Adam::new(&vs, 1e-2, 1e-6);
        let x = Tensor::ones([4, 3], (Kind::Float, tch::Device::Cpu));
        adam.zero_grad();
        net.forward(&x).sum(Kind::Float).backward();
        adam.clip_and_step(10.0);
        let saved: HashMap<String, Tensor> =
            adam.state().into_iter().map(|(k, t)| (k, t.copy())).collect();
        let mut other = Adam::new(&vs, 1e-2, 1e-6);
        other.load_state(&saved).unwrap();
        assert_eq!(other.step, 1);
        assert!(adam.m.equal(&other.m) && adam.v.equal(&other.v));
        let mut missing: HashMap<String, Tensor> =
            saved.iter().map(|(k, t)| (k.clone(), t.shallow_clone())).collect();
        missing.remove("v/a.weight");
        let err = other.load_state(&missing).unwrap_err().to_string();
        assert!(err.contains("lacks 'v/a.weight'"), "{err}");
    }
}
