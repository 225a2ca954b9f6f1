//! A network's trainable parameters as views into one contiguous buffer, the ground both
//! hand-written optimizers ([`super::adam::Adam`], [`super::rmsprop::RmsProp`]) stand on.
//!
//! tch's optimizers live inside libtorch and expose no state, which would force a resume to
//! restart them from zero (the reference does). Re-pointing every parameter (`set_data`) to a
//! slice of one buffer also makes a step (gradient clip included) a dozen tensor ops on flat
//! vectors instead of a dozen per parameter tensor: the per-op dispatch cost dominates small
//! networks.

use std::collections::{BTreeMap, HashMap};

use anyhow::{Context, Result};
use tch::{nn::VarStore, Tensor};

/// The trainable parameters of a [`VarStore`], sorted by name, each a view into one buffer.
pub struct FlatParams {
    /// The parameters by name; each is a view into `flat`.
    params: Vec<(String, Tensor)>,
    /// `(offset, numel)` of each parameter in `flat`.
    spans: Vec<(i64, i64)>,
    /// Every parameter's values, end to end.
    flat: Tensor,
}

impl FlatParams {
    /// Re-points the trainable parameters of `vs` into one buffer (their values unchanged).
    pub fn new(vs: &VarStore) -> Self {
        let mut params: Vec<(String, Tensor)> = vs
            .variables()
            .into_iter()
            .filter(|(_, t)| t.requires_grad())
            .collect::<BTreeMap<_, _>>()
            .into_iter()
            .collect();
        let mut spans = Vec::with_capacity(params.len());
        let mut offset = 0;
        for (_, p) in &params {
            spans.push((offset, p.numel() as i64));
            offset += p.numel() as i64;
        }
        let flat = tch::no_grad(|| {
            let pieces: Vec<Tensor> =
                params.iter().map(|(_, p)| p.detach().reshape([-1])).collect();
            let flat = Tensor::cat(&pieces, 0);
            for ((_, p), &(off, n)) in params.iter_mut().zip(&spans) {
                let size = p.size();
                p.set_data(&flat.narrow(0, off, n).view(size.as_slice()));
            }
            flat
        });
        Self { params, spans, flat }
    }

    /// The values, end to end (a step updates them in place).
    pub fn flat_mut(&mut self) -> &mut Tensor {
        &mut self.flat
    }

    /// A zero buffer of the parameters' size: an optimizer's per-parameter state.
    pub fn zeros(&self) -> Tensor {
        self.flat.zeros_like()
    }

    /// Zeroes every parameter's gradient.
    pub fn zero_grad(&mut self) {
        for (_, p) in &mut self.params {
            p.zero_grad();
        }
    }

    /// The gradients end to end, their joint L2 norm clipped to `max` (PyTorch's
    /// `clip_grad_norm_`: coefficient `max / (norm + 1e-6)`, only when below 1). A parameter
    /// without a gradient counts as zeros. No host sync: the coefficient stays a tensor.
    pub fn clipped_grad(&self, max: f64) -> Tensor {
        tch::no_grad(|| {
            let grads: Vec<Tensor> = self
                .params
                .iter()
                .map(|(_, p)| {
                    let g = p.grad();
                    if g.defined() {
                        g.reshape([-1])
                    } else {
                        p.zeros_like().reshape([-1])
                    }
                })
                .collect();
            let mut g = Tensor::cat(&grads, 0);
            let coef = (g.norm() + 1e-6).reciprocal() * max;
            let _ = g.g_mul_(&coef.clamp_max(1.0));
            g
        })
    }

    /// The first parameter (by name) holding a NaN or infinity, if any. One reduction over the
    /// buffer (one host sync); the per-parameter search runs only when it fails.
    pub fn first_non_finite(&self) -> Option<&str> {
        if crate::policies::all_finite(&self.flat) {
            return None;
        }
        self.params
            .iter()
            .find(|(_, p)| !crate::policies::all_finite(p))
            .map(|(name, _)| name.as_str())
    }

    /// A per-parameter state buffer (`like` [`Self::zeros`]) as named tensors in each
    /// parameter's shape: `<prefix>/<param>`.
    pub fn named(&self, prefix: &str, buffer: &Tensor) -> Vec<(String, Tensor)> {
        let views = self.params.iter().zip(&self.spans);
        views
            .map(|((name, p), &(off, n))| {
                let size = p.size();
                (format!("{prefix}/{name}"), buffer.narrow(0, off, n).view(size.as_slice()))
            })
            .collect()
    }

    /// The buffer [`Self::named`] saved under `prefix`: every parameter's entry present, in
    /// its shape and finite, or an error naming the first that is not.
    pub fn unnamed(&self, prefix: &str, state: &HashMap<String, Tensor>) -> Result<Tensor> {
        let mut pieces = Vec::with_capacity(self.params.len());
        for (name, p) in &self.params {
            let key = format!("{prefix}/{name}");
            let t = state.get(&key).with_context(|| format!("optimizer state lacks '{key}'"))?;
            anyhow::ensure!(
                t.size() == p.size(),
                "optimizer state '{key}' has shape {:?}, the parameter {:?}",
                t.size(),
                p.size()
            );
            anyhow::ensure!(
                crate::policies::all_finite(t),
                "optimizer state of '{name}' holds a NaN or infinity"
            );
            pieces.push(t.to_kind(p.kind()).to_device(p.device()).reshape([-1]));
        }
        Ok(Tensor::cat(&pieces, 0))
    }
}

/// A two-layer net for the optimizers' tests (Adam's and RMSprop's, against libtorch's own).
#[cfg(test)]
pub(super) fn test_model(vs: &VarStore) -> tch::nn::Sequential {
    let root = vs.root();
    tch::nn::seq()
        .add(tch::nn::linear(&root / "a", 3, 8, Default::default()))
        .add_fn(|x| x.tanh())
        .add(tch::nn::linear(&root / "b", 8, 2, Default::default()))
}
