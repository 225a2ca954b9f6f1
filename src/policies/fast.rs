//! A plain-Rust copy of an actor (feed-forward or LSTM) for the samplers'
//! one-observation-at-a-time forward pass.
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
        let bias =
            linear.bs.as_ref().map_or_else(|| vec![0.0; linear.ws.size()[0] as usize], to_f32_vec);
        Self::from_parts(&linear.ws, bias)
    }

    /// A `[out][in]` weight tensor and its bias.
    fn from_parts(weight: &Tensor, bias: Vec<f32>) -> Self {
        let inputs = weight.size()[1] as usize;
        Self { weight: to_f32_vec(weight), bias, inputs }
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

/// One LSTM layer, PyTorch's gate layout `(i, f, g, o)`, with its state.
#[derive(Debug, Clone)]
struct LstmLayer {
    input: Dense,
    recurrent: Dense,
    h: Vec<f32>,
    c: Vec<f32>,
    gates: Vec<f32>,
    recurrent_gates: Vec<f32>,
}

impl LstmLayer {
    /// From `[weight_ih, weight_hh, bias_ih, bias_hh]`.
    fn of([w_ih, w_hh, b_ih, b_hh]: &[Tensor; 4]) -> Self {
        let hidden = w_hh.size()[1] as usize;
        Self {
            input: Dense::from_parts(w_ih, to_f32_vec(b_ih)),
            recurrent: Dense::from_parts(w_hh, to_f32_vec(b_hh)),
            h: vec![0.0; hidden],
            c: vec![0.0; hidden],
            gates: vec![0.0; 4 * hidden],
            recurrent_gates: vec![0.0; 4 * hidden],
        }
    }

    /// One step on `x`; the new `h` is [`LstmLayer::h`].
    fn step(&mut self, x: &[f32]) {
        let n = self.h.len();
        self.input.forward(x, &mut self.gates);
        self.recurrent.forward(&self.h, &mut self.recurrent_gates);
        for (g, r) in self.gates.iter_mut().zip(&self.recurrent_gates) {
            *g += r;
        }
        let sigmoid = |v: f32| 1.0 / (1.0 + (-v).exp());
        for k in 0..n {
            let i = sigmoid(self.gates[k]);
            let f = sigmoid(self.gates[n + k]);
            let g = self.gates[2 * n + k].tanh();
            let o = sigmoid(self.gates[3 * n + k]);
            self.c[k] = f * self.c[k] + i * g;
            self.h[k] = o * self.c[k].tanh();
        }
    }

    fn reset(&mut self) {
        self.h.fill(0.0);
        self.c.fill(0.0);
    }
}

/// The hidden part of a [`FastActor`].
#[derive(Debug, Clone)]
enum Trunk {
    Ff { layers: Vec<Dense>, act: Nonlinearity },
    Lstm(Vec<LstmLayer>),
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

/// An actor with a state-independent std, copied out of its tensors
/// ([`super::Actor::fast`]); [`FastActor::mean`] allocates nothing. An LSTM's state is carried
/// from call to call until [`FastActor::reset`] (an episode's start).
#[derive(Debug, Clone)]
pub struct FastActor {
    norm_mean: Vec<f32>,
    norm_std: Vec<f32>,
    clip: Option<f32>,
    trunk: Trunk,
    means: Dense,
    std: Vec<f32>,
    /// Two scratch rows as wide as the widest layer.
    scratch: [Vec<f32>; 2],
}

impl FastActor {
    /// Copies a feed-forward actor; `norm` is the normalizer's `(mean, std, clip)`.
    pub(super) fn new(
        norm: (&Tensor, &Tensor, Option<f64>),
        hidden: &[nn::Linear],
        act: Nonlinearity,
        means: &nn::Linear,
        std: Vec<f32>,
    ) -> Self {
        let layers = hidden.iter().map(Dense::of).collect();
        Self::with_trunk(norm, Trunk::Ff { layers, act }, means, std)
    }

    /// Copies an LSTM actor from its layers' `[weight_ih, weight_hh, bias_ih, bias_hh]`.
    pub(super) fn lstm(
        norm: (&Tensor, &Tensor, Option<f64>),
        cells: &[[Tensor; 4]],
        means: &nn::Linear,
        std: Vec<f32>,
    ) -> Self {
        Self::with_trunk(norm, Trunk::Lstm(cells.iter().map(LstmLayer::of).collect()), means, std)
    }

    fn with_trunk(
        norm: (&Tensor, &Tensor, Option<f64>),
        trunk: Trunk,
        means: &nn::Linear,
        std: Vec<f32>,
    ) -> Self {
        let norm_mean = to_f32_vec(norm.0);
        let widths: Vec<usize> = match &trunk {
            Trunk::Ff { layers, .. } => layers.iter().map(|d| d.bias.len()).collect(),
            Trunk::Lstm(layers) => layers.iter().map(|l| l.h.len()).collect(),
        };
        let width = widths.into_iter().chain([norm_mean.len()]).max().unwrap_or(0);
        Self {
            norm_std: to_f32_vec(norm.1),
            norm_mean,
            clip: norm.2.map(|c| c as f32),
            trunk,
            means: Dense::of(means),
            std,
            scratch: [vec![0.0; width], vec![0.0; width]],
        }
    }

    /// Starts an episode: an LSTM's state back to zero (nothing for a feed-forward actor).
    pub fn reset(&mut self) {
        if let Trunk::Lstm(layers) = &mut self.trunk {
            layers.iter_mut().for_each(LstmLayer::reset);
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
        match &mut self.trunk {
            Trunk::Ff { layers, act } => {
                let (mut input, mut output, mut width) = (a, b, n);
                for layer in layers.iter() {
                    let w = layer.bias.len();
                    layer.forward(&input[..width], &mut output[..w]);
                    activate(*act, &mut output[..w]);
                    std::mem::swap(&mut input, &mut output);
                    width = w;
                }
                self.means.forward(&input[..width], out);
            }
            Trunk::Lstm(layers) => {
                let mut previous: Option<&LstmLayer> = None;
                for layer in layers.iter_mut() {
                    match previous {
                        None => layer.step(&a[..n]),
                        Some(p) => {
                            b[..p.h.len()].copy_from_slice(&p.h);
                            layer.step(&b[..p.h.len()]);
                        }
                    }
                    previous = Some(layer);
                }
                let last = previous.map_or(&a[..n], |l| &l.h[..]);
                self.means.forward(last, out);
            }
        }
    }

    /// The action std (state-independent).
    pub fn std(&self) -> &[f32] {
        &self.std
    }
}
