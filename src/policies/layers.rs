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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Nonlinearity {
    /// max(0, x).
    #[default]
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

/// How the linear layers' weights start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum WeightInit {
    /// PyTorch's default, W, b ~ U(±1/√fan_in) (the reference's).
    #[default]
    Uniform,
    /// Orthogonal weights and zero biases, gain √2 in the hidden layers, 0.01 on the action
    /// means and 1 on the value (cleanrl's and the MuJoCo PPO baselines').
    Orthogonal,
}

impl WeightInit {
    /// Re-initializes `vs`'s linear layers as this init says (nothing for `Uniform`, which
    /// the layers were built with): hidden layers (`layers.*`) at gain √2, the action means
    /// and a learned std head at 0.01, the value layer at 1; LSTM cells and the normalizer
    /// are left as they are.
    pub fn apply(self, vs: &nn::VarStore) {
        if self == Self::Uniform {
            return;
        }
        let _guard = tch::no_grad_guard();
        let mut variables: Vec<(String, Tensor)> = vs.variables().into_iter().collect();
        // The same draws in the same order on every run: by name.
        variables.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, mut t) in variables {
            let gain = if name.starts_with("means.") || name.starts_with("log_stds.") {
                0.01
            } else if name.starts_with("critic_last_layer.") {
                1.0
            } else if name.contains("layers.") {
                std::f64::consts::SQRT_2
            } else {
                continue;
            };
            if name.ends_with(".bias") {
                let _ = t.zero_();
            } else if name.ends_with(".weight") {
                let init = nn::Init::Orthogonal { gain };
                let fresh = nn::init(init, &t.size(), t.device());
                t.copy_(&fresh);
            }
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
