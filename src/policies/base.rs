//! The shared trunk of actors and critics: a feed-forward stack or a stacked LSTM.
//!
//! Shapes: feed-forward takes `[.., obs]`. The LSTM takes time-major sequences `[T, B, obs]`
//! starting from a zero state (training: each trajectory replays from its start), or one step
//! `[obs]` with a carried [`Hidden`] state (rollouts; `None` = episode start).

use tch::nn::{self, Module, RNN};

use tch::Tensor;

use super::layers::{hidden_stack, Nonlinearity};
use super::{Arch, NetSpec};

/// Recurrent state carried between rollout steps, `(h, c)` per layer (`None` at an episode
/// start).
pub type Hidden = Option<Vec<(Tensor, Tensor)>>;

/// One layer's weights (`weight_ih`, `weight_hh`, `bias_ih`, `bias_hh`), shared with the
/// `VarStore`, for single-step rollouts.
type CellWeights = [Tensor; 4];

#[derive(Debug)]
pub enum Base {
    Ff { layers: Vec<nn::Linear>, act: Nonlinearity },
    Lstm { lstm: nn::LSTM, cells: Vec<CellWeights>, hidden: i64 },
}

impl Base {
    /// `inputs` values in; `act` is the hidden activation for feed-forward stacks (unused by
    /// the LSTM, which, as in the reference, has no activation after it).
    pub fn new(path: &nn::Path, spec: &NetSpec, inputs: usize, act: Nonlinearity) -> Self {
        match spec.arch {
            Arch::Ff => Base::Ff { layers: hidden_stack(path, inputs, &spec.layers), act },
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
                let lstm = nn::lstm(path / "lstm", inputs as i64, hidden, cfg);
                let lp = path / "lstm";
                let var = |name: String| {
                    lp.get(&name).unwrap_or_else(|| panic!("nn::lstm registered {name}"))
                };
                let cells = (0..spec.layers.len())
                    .map(|l| {
                        [
                            var(format!("weight_ih_l{l}")),
                            var(format!("weight_hh_l{l}")),
                            var(format!("bias_ih_l{l}")),
                            var(format!("bias_hh_l{l}")),
                        ]
                    })
                    .collect();
                Base::Lstm { lstm, cells, hidden }
            }
        }
    }

    pub fn is_recurrent(&self) -> bool {
        matches!(self, Base::Lstm { .. })
    }

    /// Whole input: `[.., obs]` (FF) or `[T, B, obs]` from a zero state (LSTM).
    pub fn forward(&self, x: &Tensor) -> Tensor {
        match self {
            Base::Ff { layers, act } => {
                layers.iter().fold(x.shallow_clone(), |h, l| act.apply(&l.forward(&h)))
            }
            // Not `RNN::seq`: it sizes the zero state from dim 0, which is time here.
            Base::Lstm { lstm, .. } => lstm.seq_init(x, &lstm.zero_state(x.size()[1])).0,
        }
    }

    /// One rollout step on `[obs]`, carrying `hidden`; returns `[latent]`.
    pub fn step(&self, x: &Tensor, hidden: &mut Hidden) -> Tensor {
        match self {
            Base::Ff { .. } => self.forward(x),
            // One `lstm_cell` per layer: far less dispatch than a length-1 `at::lstm` call, and
            // the same gate layout (i, f, g, o), so it matches the sequence forward exactly.
            Base::Lstm { cells, hidden: h_dim, .. } => {
                let state = hidden.get_or_insert_with(|| {
                    let zeros = || Tensor::zeros([1, *h_dim], (x.kind(), x.device()));
                    cells.iter().map(|_| (zeros(), zeros())).collect()
                });
                let mut input = x.view([1, -1]);
                for ([w_ih, w_hh, b_ih, b_hh], (h, c)) in cells.iter().zip(state.iter_mut()) {
                    let (h2, c2) = input.lstm_cell(&[&*h, &*c], w_ih, w_hh, Some(b_ih), Some(b_hh));
                    input = h2.shallow_clone();
                    (*h, *c) = (h2, c2);
                }
                input.view([-1])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::{Actor, Critic, StdSpec};
    use tch::{Device, Kind};

    /// Rollout steps with carried state give exactly what the training-time sequence forward
    /// gives for the same trajectory.
    #[test]
    fn lstm_steps_match_the_sequence_forward() {
        let spec = NetSpec {
            arch: Arch::Lstm,
            nonlinearity: Nonlinearity::Tanh,
            std: StdSpec::Learned,
            ..NetSpec::ff(5, 3, &[16, 16])
        };
        tch::manual_seed(11);
        let actor = Actor::new(&spec, Device::Cpu);
        let critic = Critic::new(&spec, Device::Cpu);
        let seq = Tensor::randn([7, 1, 5], (Kind::Float, Device::Cpu));
        let (mean, std) = actor.distribution(&seq);
        let values = critic.value(&seq);
        let (mut ha, mut hc): (Hidden, Hidden) = (None, None);
        for t in 0..7 {
            let (m, s) = actor.step(&seq.get(t).get(0), &mut ha);
            let v = critic.value_step(&seq.get(t).get(0), &mut hc);
            let dm = (m - mean.get(t).get(0)).abs().max().double_value(&[]);
            let ds = (s - std.get(t).get(0)).abs().max().double_value(&[]);
            let dv = (v - values.get(t).get(0)).abs().max().double_value(&[]);
            assert!(dm < 1e-6 && ds < 1e-6 && dv < 1e-6, "step {t}: {dm} {ds} {dv}");
        }
    }

    /// A trajectory's values from one batched forward (what the samplers compute after each
    /// episode) are the per-step values, for feed-forward and recurrent critics.
    #[test]
    fn a_trajectorys_batched_values_match_its_step_values() {
        for arch in [Arch::Ff, Arch::Lstm] {
            let spec = NetSpec { arch, ..NetSpec::ff(5, 3, &[16, 16]) };
            tch::manual_seed(12);
            let critic = Critic::new(&spec, Device::Cpu);
            let obs: Vec<f32> = (0..7 * 5).map(|i| ((i * 37 % 11) as f32 - 5.0) / 3.0).collect();
            let batched = critic.trajectory_values(&obs, 5);
            assert_eq!(batched.len(), 7);
            let mut h: Hidden = None;
            for (t, v) in batched.iter().enumerate() {
                let x = Tensor::from_slice(&obs[t * 5..(t + 1) * 5]);
                let step = critic.value_step(&x, &mut h).double_value(&[0]) as f32;
                assert!((step - v).abs() < 1e-5, "{arch:?} step {t}: {step} vs {v}");
            }
        }
    }
}
