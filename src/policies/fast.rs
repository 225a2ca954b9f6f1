//! A plain-Rust copy of a feed-forward actor for the samplers' one-observation-at-a-time
//! forward pass.
//!
//! Why hand-written: a training sampler asks for one action per env step, and libtorch spends
//! most of such a call in per-operator dispatch, not arithmetic. `perf record --call-graph
//! dwarf` of a Cassie training run (2026-11-27) put 8 % of a sampler's samples in
//! `Actor::step`, for a 44 → 256 → 256 → 10 network. The same arithmetic over plain slices
//! took that share down (docs/benchmarks.md).
//!
//! Only train jobs use it: their actions are the mean plus exploration noise, and PPO
//! recomputes every log-probability with the torch actor, so a last-bit difference from
//! libtorch's summation order changes nothing but the sampled numbers themselves. Evaluations
//! and `gait eval` keep the torch forward, so their results stay what they were.

use tch::{nn, Tensor};

use super::layers::Nonlinearity;
use super::normalizer::to_f32_vec;

/// One dense layer, row-major `[out][in]` weights, as `nn::Linear` stores them.
#[derive(Debug, Clone)]
struct Dense {
    weight: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
}

impl Dense {
    fn of(linear: &nn::Linear) -> Self {
        let size = linear.ws.size();
        let bias = linear.bs.as_ref().map_or_else(|| vec![0.0; size[0] as usize], to_f32_vec);
        Self { weight: to_f32_vec(&linear.ws), bias, inputs: size[1] as usize }
    }

    /// `out = W x + b`, each row's dot product in eight lanes (a fixed order, so the result
    /// is the same on every machine, and one the compiler vectorizes).
    fn forward(&self, x: &[f32], out: &mut [f32]) {
        for ((o, row), b) in
            out.iter_mut().zip(self.weight.chunks_exact(self.inputs)).zip(&self.bias)
        {
            *o = dot(row, x) + b;
        }
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let (a8, b8) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a8.remainder().iter().zip(b8.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in a8.zip(b8) {
        for k in 0..8 {
            lanes[k] += x[k] * y[k];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

fn activate(act: Nonlinearity, x: &mut [f32]) {
    for v in x {
        *v = match act {
            Nonlinearity::Relu => v.max(0.0),
            Nonlinearity::Tanh => v.tanh(),
            Nonlinearity::Elu => {
                if *v > 0.0 {
                    *v
                } else {
                    v.exp_m1()
                }
            }
            Nonlinearity::Sigmoid => 1.0 / (1.0 + (-*v).exp()),
        };
    }
}

/// A feed-forward actor with a state-independent std, copied out of its tensors
/// ([`super::Actor::fast`]); [`FastActor::mean`] allocates nothing.
#[derive(Debug, Clone)]
pub struct FastActor {
    norm_mean: Vec<f32>,
    norm_std: Vec<f32>,
    clip: Option<f32>,
    hidden: Vec<Dense>,
    act: Nonlinearity,
    means: Dense,
    std: Vec<f32>,
    /// Two scratch rows as wide as the widest layer.
    scratch: [Vec<f32>; 2],
}

impl FastActor {
    /// Copies the parts; `norm` is the normalizer's `(mean, std, clip)`.
    pub(super) fn new(
        norm: (&Tensor, &Tensor, Option<f64>),
        hidden: &[nn::Linear],
        act: Nonlinearity,
        means: &nn::Linear,
        std: Vec<f32>,
    ) -> Self {
        let hidden: Vec<Dense> = hidden.iter().map(Dense::of).collect();
        let means = Dense::of(means);
        let norm_mean = to_f32_vec(norm.0);
        let width = hidden.iter().map(|d| d.bias.len()).chain([norm_mean.len()]).max().unwrap_or(0);
        Self {
            norm_std: to_f32_vec(norm.1),
            norm_mean,
            clip: norm.2.map(|c| c as f32),
            hidden,
            act,
            means,
            std,
            scratch: [vec![0.0; width], vec![0.0; width]],
        }
    }

    /// The action mean for one observation, written into `out` (one value per action).
    pub fn mean(&mut self, obs: &[f32], out: &mut [f32]) {
        let [a, b] = &mut self.scratch;
        let n = self.norm_mean.len();
        for ((z, &x), (&m, &s)) in
            a[..n].iter_mut().zip(obs).zip(self.norm_mean.iter().zip(&self.norm_std))
        {
            let v = (x - m) / s;
            *z = match self.clip {
                Some(c) => v.clamp(-c, c),
                None => v,
            };
        }
        let (mut input, mut output, mut width) = (a, b, n);
        for layer in &self.hidden {
            let w = layer.bias.len();
            layer.forward(&input[..width], &mut output[..w]);
            activate(self.act, &mut output[..w]);
            std::mem::swap(&mut input, &mut output);
            width = w;
        }
        self.means.forward(&input[..width], out);
    }

    /// The action std (state-independent).
    pub fn std(&self) -> &[f32] {
        &self.std
    }
}
