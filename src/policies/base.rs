//! The shared trunk of actors and critics: a feed-forward stack or a stacked LSTM.
//!
//! Shapes: feed-forward takes `[.., obs]`. The LSTM takes time-major sequences `[T, B, obs]`
//! starting from a zero state (training: each trajectory replays from its start), or one step
//! `[obs]` with a carried [`Hidden`] state (rollouts; `None` = episode start).

use tch::nn::{self, Module, RNN};
use tch::Tensor;

use super::layers::{hidden_stack, Nonlinearity};
use super::{Arch, NetSpec};

/// Recurrent state carried between rollout steps (`None` at an episode start).
pub type Hidden = Option<nn::LSTMState>;

#[derive(Debug)]
pub enum Base {
    Ff { layers: Vec<nn::Linear>, act: Nonlinearity },
    Lstm(nn::LSTM),
}

impl Base {
    /// `act` is the hidden activation for feed-forward stacks (unused by the LSTM, which, as in
    /// the reference, has no activation after it).
    pub fn new(path: &nn::Path, spec: &NetSpec, act: Nonlinearity) -> Self {
        match spec.arch {
            Arch::Ff => Base::Ff { layers: hidden_stack(path, spec.obs_dim, &spec.layers), act },
            Arch::Lstm => {
                let hidden = spec.layers[0] as i64;
                // PyTorch's nn.LSTM default init: every weight and both biases U(±1/√hidden).
                let bound = 1.0 / (hidden as f64).sqrt();
                let init = nn::Init::Uniform { lo: -bound, up: bound };
                let cfg = nn::RNNConfig {
                    has_biases: true,
                    num_layers: spec.layers.len() as i64,
                    dropout: 0.0,
                    train: false,
                    bidirectional: false,
                    batch_first: false,
                    w_ih_init: init,
                    w_hh_init: init,
                    b_ih_init: Some(init),
                    b_hh_init: Some(init),
                };
                Base::Lstm(nn::lstm(path / "lstm", spec.obs_dim as i64, hidden, cfg))
            }
        }
    }

    pub fn is_recurrent(&self) -> bool {
        matches!(self, Base::Lstm(_))
    }

    /// Whole input: `[.., obs]` (FF) or `[T, B, obs]` from a zero state (LSTM).
    pub fn forward(&self, x: &Tensor) -> Tensor {
        match self {
            Base::Ff { layers, act } => {
                layers.iter().fold(x.shallow_clone(), |h, l| act.apply(&l.forward(&h)))
            }
            // Not `RNN::seq`: it sizes the zero state from dim 0, which is time here.
            Base::Lstm(lstm) => lstm.seq_init(x, &lstm.zero_state(x.size()[1])).0,
        }
    }

    /// One rollout step on `[obs]`, carrying `hidden`; returns `[latent]`.
    pub fn step(&self, x: &Tensor, hidden: &mut Hidden) -> Tensor {
        match self {
            Base::Ff { .. } => self.forward(x),
            Base::Lstm(lstm) => {
                let state = hidden.take().unwrap_or_else(|| lstm.zero_state(1));
                let (out, state) = lstm.seq_init(&x.view([1, 1, -1]), &state);
                *hidden = Some(state);
                out.view([-1])
            }
        }
    }
}
