//! Gaussian actor: `μ = means(base(normalize(s)))`, σ fixed or learned.

use serde::{Deserialize, Serialize};
use tch::{nn, nn::Module, Device, Tensor};

use super::base::{Base, Hidden};
use super::fast::FastActor;
use super::layers::linear;
use super::normalizer::to_f32_vec;
use super::{NetSpec, Normalizer};

/// How the action standard deviation is produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StdSpec {
    /// Fixed σ per action dim (`--std` / `--std-array`), stored as the buffer `std`.
    Fixed(Vec<f32>),
    /// State-dependent σ = exp(clamp(log_stds(h), -3, 0.5)) (`--learn-std`, the reference's).
    Learned,
    /// State-independent σ = exp(clamp(log_std, -5, 0.5)), one trainable `log_std` per action
    /// dim starting at ln(`init`) (`--learn-log-std`, rsl_rl's and Isaac Lab's choice): the
    /// exploration level is learned by the PPO loss, without the head's ≈1 rad start.
    LogParam(Vec<f32>),
}

#[derive(Debug)]
enum StdHead {
    Fixed(Tensor),
    Learned(nn::Linear),
    LogParam(Tensor),
}

/// Feed-forward Gaussian policy.
#[derive(Debug)]
pub struct Actor {
    vs: nn::VarStore,
    spec: NetSpec,
    norm: Normalizer,
    base: Base,
    means: nn::Linear,
    std: StdHead,
}

impl Actor {
    /// A fresh actor for `spec` on `device`.
    pub fn new(spec: &NetSpec, device: Device) -> Self {
        let vs = nn::VarStore::new(device);
        let root = vs.root();
        let norm = Normalizer::new(&root, spec.obs_dim, spec.obs_clip);
        let base = Base::new(&root, spec, spec.obs_dim, spec.nonlinearity);
        let latent = spec.layers.last().copied().unwrap_or(spec.obs_dim);
        let means = linear(&root / "means", latent, spec.act_dim);
        let std = match &spec.std {
            StdSpec::Fixed(values) => {
                let t = root.add("std", Tensor::from_slice(values).to_device(device), false);
                StdHead::Fixed(t)
            }
            StdSpec::Learned => StdHead::Learned(linear(&root / "log_stds", latent, spec.act_dim)),
            StdSpec::LogParam(init) => {
                let log: Vec<f32> = init.iter().map(|s| s.ln()).collect();
                let t = root.add("log_std", Tensor::from_slice(&log).to_device(device), true);
                StdHead::LogParam(t)
            }
        };
        spec.init.apply(&vs);
        Self { vs, spec: spec.clone(), norm, base, means, std }
    }

    /// Its network's shape.
    pub fn spec(&self) -> &NetSpec {
        &self.spec
    }

    /// Its variables.
    pub fn var_store(&self) -> &nn::VarStore {
        &self.vs
    }

    /// Its variables, mutably.
    pub fn var_store_mut(&mut self) -> &mut nn::VarStore {
        &mut self.vs
    }

    /// Its observation normalizer.
    pub fn normalizer(&self) -> &Normalizer {
        &self.norm
    }

    /// Its observation normalizer, mutably.
    pub fn normalizer_mut(&mut self) -> &mut Normalizer {
        &mut self.norm
    }

    /// Whether it is an LSTM.
    pub fn is_recurrent(&self) -> bool {
        self.base.is_recurrent()
    }

    fn heads(&self, h: &Tensor) -> (Tensor, Tensor) {
        let mean = self.means.forward(h);
        let std = match &self.std {
            StdHead::Fixed(s) => s.shallow_clone(),
            StdHead::Learned(l) => l.forward(h).clamp(-3.0, 0.5).exp(),
            StdHead::LogParam(log) => log.clamp(-5.0, 0.5).exp(),
        };
        (mean, std)
    }

    /// Sets a fixed std to `scale` times the spec's (`--std-decay`); `false`, changing nothing,
    /// for a learned std, whose value the PPO loss owns.
    pub fn scale_fixed_std(&mut self, scale: f64) -> bool {
        let (StdHead::Fixed(std), StdSpec::Fixed(initial)) = (&mut self.std, &self.spec.std) else {
            return false;
        };
        let _guard = tch::no_grad_guard();
        let scaled: Vec<f32> = initial.iter().map(|&s| (s as f64 * scale) as f32).collect();
        std.copy_(&Tensor::from_slice(&scaled).to_device(std.device()));
        true
    }

    /// Mean σ over action dims for a state-independent std (fixed or `log_std`), for the
    /// `Policy/Std` scalar; `None` for the state-dependent head.
    pub fn mean_std(&self) -> Option<f64> {
        let _guard = tch::no_grad_guard();
        match &self.std {
            StdHead::Fixed(s) => Some(s.mean(tch::Kind::Float).double_value(&[])),
            StdHead::LogParam(log) => {
                Some(log.clamp(-5.0, 0.5).exp().mean(tch::Kind::Float).double_value(&[]))
            }
            StdHead::Learned(_) => None,
        }
    }

    /// Mean and standard deviation of the action distribution, for `[.., obs]` (feed-forward)
    /// or time-major sequences `[T, B, obs]` from a zero state (LSTM); the std broadcasts
    /// against the mean.
    pub fn distribution(&self, obs: &Tensor) -> (Tensor, Tensor) {
        self.heads(&self.base.forward(&self.norm.forward(obs)))
    }

    /// Deterministic action (the mean), shapes as [`Actor::distribution`].
    pub fn mean(&self, obs: &Tensor) -> Tensor {
        self.distribution(obs).0
    }

    /// A plain-Rust copy of this actor for the samplers' per-step forward
    /// ([`FastActor`]); `None` for a state-dependent std, which keeps the torch forward. A
    /// copy: it does not follow later changes to these weights.
    pub fn fast(&self) -> Option<FastActor> {
        let _guard = tch::no_grad_guard();
        let std = match &self.std {
            StdHead::Fixed(s) => to_f32_vec(s),
            StdHead::LogParam(log) => to_f32_vec(&log.clamp(-5.0, 0.5).exp()),
            StdHead::Learned(_) => return None,
        };
        Some(match &self.base {
            Base::Ff { layers, act } => {
                FastActor::new(self.norm.parts(), layers, *act, &self.means, std)
            }
            Base::Lstm { cells, .. } => FastActor::lstm(self.norm.parts(), cells, &self.means, std),
        })
    }

    /// One rollout step on `[obs]`, carrying the recurrent state (ignored when feed-forward).
    pub fn step(&self, obs: &Tensor, hidden: &mut Hidden) -> (Tensor, Tensor) {
        self.heads(&self.base.step(&self.norm.forward(obs), hidden))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::{Nonlinearity, RunningStats};

    fn spec(std: StdSpec) -> NetSpec {
        NetSpec { nonlinearity: Nonlinearity::Tanh, std, ..NetSpec::ff(3, 2, &[8]) }
    }

    /// The plain-Rust copy gives the torch forward's mean and std, with normalizer
    /// statistics and clipping, for every activation; recurrent actors and a state-dependent
    /// std have none.
    #[test]
    fn the_fast_copy_matches_the_torch_forward() {
        for act in
            [Nonlinearity::Relu, Nonlinearity::Tanh, Nonlinearity::Elu, Nonlinearity::Sigmoid]
        {
            for std in [StdSpec::Fixed(vec![0.2, 0.3]), StdSpec::LogParam(vec![0.4, 0.1])] {
                let spec = NetSpec {
                    nonlinearity: act,
                    std,
                    obs_clip: Some(2.0),
                    ..NetSpec::ff(11, 2, &[32, 17])
                };
                tch::manual_seed(5);
                let mut actor = Actor::new(&spec, Device::Cpu);
                let mut stats = RunningStats::new(11);
                stats.update(
                    &(0..55).map(|i| ((i * 7 % 13) as f32 - 6.0) * 0.3).collect::<Vec<_>>(),
                );
                actor.normalizer_mut().set_stats(&stats).unwrap();
                let mut fast = actor.fast().expect("a feed-forward actor with a fixed std");
                for k in 0..4 {
                    // Some inputs lie far enough out to be clipped.
                    let obs: Vec<f32> =
                        (0..11).map(|i| ((i * 5 + k * 3) % 9) as f32 - 4.0).collect();
                    let (mean, sd) = actor.step(&Tensor::from_slice(&obs), &mut None);
                    let (mean, sd) =
                        (Vec::<f32>::try_from(mean).unwrap(), Vec::<f32>::try_from(sd).unwrap());
                    let mut got = [0.0f32; 2];
                    fast.mean(&obs, &mut got);
                    for (a, b) in got.iter().zip(&mean) {
                        assert!((a - b).abs() < 1e-5, "{act:?}: {got:?} vs {mean:?}");
                    }
                    assert_eq!(fast.std(), &sd[..]);
                }
            }
        }
        assert!(Actor::new(&spec(StdSpec::Learned), Device::Cpu).fast().is_none());
    }

    /// The plain-Rust LSTM copy steps as the torch actor's carried-state rollout does, over
    /// two episodes (its state reset between them), for one and two layers.
    #[test]
    fn the_fast_lstm_copy_matches_the_torch_steps() {
        use crate::policies::{Arch, Hidden};
        for layers in [&[16][..], &[12, 12]] {
            let spec = NetSpec {
                arch: Arch::Lstm,
                std: StdSpec::Fixed(vec![0.2, 0.3]),
                obs_clip: Some(3.0),
                ..NetSpec::ff(7, 2, layers)
            };
            tch::manual_seed(8);
            let mut actor = Actor::new(&spec, Device::Cpu);
            let mut stats = RunningStats::new(7);
            stats.update(&(0..70).map(|i| ((i * 5 % 11) as f32 - 5.0) * 0.4).collect::<Vec<_>>());
            actor.normalizer_mut().set_stats(&stats).unwrap();
            let mut fast = actor.fast().expect("an LSTM with a fixed std");
            for episode in 0..2 {
                fast.reset();
                let mut h: Hidden = None;
                for k in 0..12 {
                    let obs: Vec<f32> = (0..7)
                        .map(|i| ((i * 3 + k * 5 + episode) % 13) as f32 * 0.5 - 3.0)
                        .collect();
                    let (mean, _) = actor.step(&Tensor::from_slice(&obs), &mut h);
                    let mean = Vec::<f32>::try_from(mean).unwrap();
                    let mut got = [0.0f32; 2];
                    fast.mean(&obs, &mut got);
                    for (a, b) in got.iter().zip(&mean) {
                        assert!(
                            (a - b).abs() < 1e-5,
                            "{layers:?} {episode}/{k}: {got:?} vs {mean:?}"
                        );
                    }
                }
            }
        }
    }

    /// `log_std` starts at the given σ for every state, is trainable, and moves with a loss.
    #[test]
    fn learned_log_std_is_state_independent_and_trainable() {
        let actor = Actor::new(&spec(StdSpec::LogParam(vec![0.2, 0.2])), Device::Cpu);
        let obs = Tensor::from_slice(&[0.1f32, -2.0, 3.0, 5.0, 0.0, 1.0]).reshape([2, 3]);
        let (_, std) = actor.distribution(&obs);
        let values: Vec<f32> = std.reshape([-1]).try_into().unwrap();
        assert!(values.iter().all(|v| (v - 0.2).abs() < 1e-6), "{values:?}");
        assert!((actor.mean_std().unwrap() - 0.2).abs() < 1e-6);
        let trainable: Vec<String> = actor
            .var_store()
            .variables()
            .into_iter()
            .filter(|(_, t)| t.requires_grad())
            .map(|(k, _)| k)
            .collect();
        assert!(trainable.contains(&"log_std".to_string()), "{trainable:?}");
        let (_, std) = actor.distribution(&obs);
        std.sum(tch::Kind::Float).backward();
        let grad = actor.var_store().variables()["log_std"].grad();
        assert!(grad.abs().sum(tch::Kind::Float).double_value(&[]) > 0.0);
    }

    /// `--std-decay`: a fixed std scales from the spec's values (not from its current ones, so
    /// the schedule never compounds), travels in the parameter snapshot the samplers load, and
    /// a learned std refuses to be scheduled.
    #[test]
    fn a_fixed_std_scales_from_its_spec_and_reaches_the_samplers() {
        let mut actor = Actor::new(&spec(StdSpec::Fixed(vec![0.2, 0.4])), Device::Cpu);
        assert!(actor.scale_fixed_std(0.5));
        assert!(actor.scale_fixed_std(0.5), "a second call scales the spec's std again");
        let (_, std) = actor.distribution(&Tensor::from_slice(&[0.0f32, 0.0, 0.0]));
        assert_eq!(Vec::<f32>::try_from(std).unwrap(), vec![0.1, 0.2]);
        let mut sampler = Actor::new(&spec(StdSpec::Fixed(vec![0.2, 0.4])), Device::Cpu);
        crate::policies::ParamSnapshot::of(actor.var_store())
            .load_into(sampler.var_store_mut())
            .unwrap();
        assert!((sampler.mean_std().unwrap() - 0.15).abs() < 1e-7);
        let mut learned = Actor::new(&spec(StdSpec::LogParam(vec![0.2, 0.2])), Device::Cpu);
        assert!(!learned.scale_fixed_std(0.5));
        assert!((learned.mean_std().unwrap() - 0.2).abs() < 1e-6, "left alone");
    }

    /// An input whose training distribution was constant (its std floored at 1e-3), read far
    /// out of it, as the lab model's shin springs are by a rigid-model policy: with the clip
    /// the action is exactly the action at +5σ, however wild the reading; without it the
    /// action runs away with the input.
    #[test]
    fn an_out_of_distribution_input_cannot_drive_the_action_past_the_clip() {
        let unclipped = NetSpec::ff(3, 2, &[8]); // ReLU: nothing saturates
        let clipped = NetSpec { obs_clip: Some(5.0), ..unclipped.clone() };
        let stats =
            RunningStats { mean: vec![0.0, 1.0, -2.0], var: vec![1.0, 0.0, 4.0], count: 100.0 };
        // One actor per spec, every reading through the same weights (libtorch's generator is
        // process-global, so two actors built in a parallel test run may differ).
        let actor_of = |s: &NetSpec| {
            let mut actor = Actor::new(s, Device::Cpu);
            actor.normalizer_mut().set_stats(&stats).unwrap();
            actor
        };
        let mean_of = |actor: &Actor, shin: f32| {
            let (mean, _) = actor.distribution(&Tensor::from_slice(&[0.3f32, shin, -1.0]));
            Vec::<f32>::try_from(mean).unwrap()
        };
        let clipped = actor_of(&clipped);
        let at_clip = mean_of(&clipped, 1.0051); // input 1 was always 1.0: std 1e-3, 5.1σ
        for wild in [1.09f32, 40.0, 1e6, f32::MAX] {
            assert_eq!(mean_of(&clipped, wild), at_clip, "reading {wild}");
        }
        assert!(at_clip.iter().all(|a| a.is_finite() && a.abs() < 10.0), "{at_clip:?}");
        // Both signs: whatever the draw, some ReLU is live for one of them.
        let unclipped = actor_of(&unclipped);
        let runaway = [mean_of(&unclipped, 1e6), mean_of(&unclipped, -1e6)].concat();
        let worst = runaway.iter().map(|a| a.abs()).fold(0.0, f32::max);
        assert!(worst > 1e3, "without the clip the action follows the input: {runaway:?}");
    }
}

#[cfg(test)]
mod init_tests {
    use super::*;
    use crate::policies::{Critic, WeightInit};
    use tch::Kind;

    /// `--init orthogonal`: orthogonal hidden weights at gain √2 (W·Wᵀ = 2·I for a wide layer),
    /// action means at 0.01, the value layer at 1, zero biases; `uniform` is the layers as
    /// built, to the bit.
    #[test]
    fn orthogonal_init_gives_the_baselines_gains() {
        let uniform =
            NetSpec { std: StdSpec::LogParam(vec![1.0; 2]), ..NetSpec::ff(6, 2, &[8, 8]) };
        let orthogonal = NetSpec { init: WeightInit::Orthogonal, ..uniform.clone() };
        // The default touches nothing (the layers keep the init they were built with).
        let plain = Actor::new(&uniform, Device::Cpu);
        let before: Vec<(String, Tensor)> =
            plain.var_store().variables().into_iter().map(|(k, t)| (k, t.copy())).collect();
        WeightInit::Uniform.apply(plain.var_store());
        let after = plain.var_store().variables();
        assert!(before.iter().all(|(k, t)| t.equal(&after[k])));
        let actor = Actor::new(&orthogonal, Device::Cpu);
        let critic = Critic::new(&orthogonal, Device::Cpu);
        let vars = actor.var_store().variables();
        let gram = |w: &Tensor| w.matmul(&w.tr());
        // The first hidden layer is 8 × 6: its columns are orthogonal, WᵀW = 2·I.
        let first = &vars["layers.0.weight"];
        let wtw = first.tr().matmul(first);
        let eye = Tensor::eye(6, (Kind::Float, Device::Cpu));
        assert!((wtw - eye * 2.0).abs().max().double_value(&[]) < 1e-4);
        let means = &vars["means.weight"];
        let eye2 = Tensor::eye(2, (Kind::Float, Device::Cpu));
        assert!((gram(means) - eye2 * 1e-4).abs().max().double_value(&[]) < 1e-7);
        assert_eq!(vars["layers.1.bias"].abs().sum(Kind::Float).double_value(&[]), 0.0);
        let value = &critic.var_store().variables()["critic_last_layer.weight"];
        assert!((gram(value).double_value(&[0, 0]) - 1.0).abs() < 1e-5);
    }
}
