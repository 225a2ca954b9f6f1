//! Layer helpers shared by actors and critics.

use serde::{Deserialize, Serialize};
use tch::{nn, Tensor};

/// Network architecture (`--arch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Arch {
    /// Feed-forward (MLP).
    Ff,
    /// Stacked LSTM (all `--layers` equal), then the output heads.
    Lstm,
}

/// Hidden activation (`--nonlinearity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Nonlinearity {
    /// max(0, x).
    Relu,
    /// tanh(x).
    Tanh,
    /// ELU (α = 1).
    Elu,
    /// The logistic function.
    Sigmoid,
}

impl Nonlinearity {
    /// Applies it elementwise.
    pub fn apply(self, x: &Tensor) -> Tensor {
        match self {
            Nonlinearity::Relu => x.relu(),
            Nonlinearity::Tanh => x.tanh(),
            Nonlinearity::Elu => x.elu(),
            Nonlinearity::Sigmoid => x.sigmoid(),
        }
    }
}

/// `Linear(fan_in → fan_out)` with PyTorch's default init, W, b ~ U(±1/√fan_in), which is what
/// the reference effectively uses (its normc init is never called).
pub fn linear(path: nn::Path, fan_in: usize, fan_out: usize) -> nn::Linear {
    let bound = 1.0 / (fan_in as f64).sqrt();
    let init = nn::Init::Uniform { lo: -bound, up: bound };
    let cfg = nn::LinearConfig { ws_init: init, bs_init: Some(init), bias: true };
    nn::linear(path, fan_in as i64, fan_out as i64, cfg)
}

/// Stack of hidden layers named `layers.{i}`.
pub fn hidden_stack(path: &nn::Path, input: usize, widths: &[usize]) -> Vec<nn::Linear> {
    let mut fan_in = input;
    widths
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let l = linear(path / "layers" / i, fan_in, w);
            fan_in = w;
            l
        })
        .collect()
}
