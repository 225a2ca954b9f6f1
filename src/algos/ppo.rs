//! `PPOOptim`: the PPO update (roadrunner `algo/ppo.py` §3), feed-forward.
//!
//! Per minibatch: clipped surrogate, 0.5·MSE critic, entropy bonus, optional mirror loss;
//! backward; per-network gradient-norm clip; actor Adam step, then critic Adam step. KL(new‖old)
//! is measured on the pre-step distribution and its running maximum over the call is checked
//! after every minibatch: above `--kl` the update stops (the offending step stays applied).
//! Any non-finite loss or input writes a diagnostic dump and fails with a clear error.

use std::f64::consts::PI;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use rand::Rng;
use tch::{Device, Kind, Tensor};

use super::adam::Adam;
use super::Buffer;
use crate::envs::MirrorIndices;
use crate::policies::{Actor, Critic, NetSpec};

/// Optimizer hyper-parameters (`--a-lr`, `--c-lr`, `--eps`, `--clip`, ...).
#[derive(Debug, Clone)]
pub struct PpoHyper {
    pub a_lr: f64,
    pub c_lr: f64,
    pub eps: f64,
    pub epochs: usize,
    pub batch_size: usize,
    pub clip: f64,
    pub kl: f64,
    pub entropy_coeff: f64,
    pub grad_clip: f64,
    pub mirror: f64,
}

/// Means over the minibatches actually run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OptimStats {
    /// Surrogate loss including the entropy term (as the reference logs it).
    pub actor_loss: f64,
    pub critic_loss: f64,
    pub mirror_loss: f64,
    pub kl: f64,
    pub minibatches: usize,
    /// True when the KL threshold stopped the update early.
    pub early_stopped: bool,
}

/// Mirror lists as index/sign tensors on the optimizer's device.
struct MirrorTensors {
    obs_src: Tensor,
    obs_sign: Tensor,
    act_src: Tensor,
    act_sign: Tensor,
}

fn mirror(x: &Tensor, src: &Tensor, sign: &Tensor) -> Tensor {
    x.index_select(-1, src) * sign
}

impl MirrorTensors {
    fn new(obs: &MirrorIndices, act: &MirrorIndices, device: Device) -> Self {
        let idx = |m: &MirrorIndices| {
            let v: Vec<i64> = m.source().iter().map(|&i| i as i64).collect();
            (
                Tensor::from_slice(&v).to_device(device),
                Tensor::from_slice(m.sign()).to_device(device),
            )
        };
        let ((obs_src, obs_sign), (act_src, act_sign)) = (idx(obs), idx(act));
        Self { obs_src, obs_sign, act_src, act_sign }
    }
}

pub struct PPOOptim {
    actor: Actor,
    critic: Critic,
    actor_opt: Adam,
    critic_opt: Adam,
    hp: PpoHyper,
    device: Device,
    mirror: Option<MirrorTensors>,
    /// Where a non-finite batch is dumped (the run directory).
    dump_dir: Option<PathBuf>,
}

fn log_prob(actions: &Tensor, mean: &Tensor, std: &Tensor) -> Tensor {
    let var = std * std;
    let lp = -(actions - mean).square() / (&var * 2.0) - std.log() - 0.5 * (2.0 * PI).ln();
    lp.sum_dim_intlist(-1, true, Kind::Float)
}

fn is_finite(t: &Tensor) -> bool {
    t.isfinite().all().int64_value(&[]) != 0
}

impl PPOOptim {
    /// `mirror` is required when `hp.mirror > 0`.
    pub fn new(
        spec: &NetSpec,
        hp: PpoHyper,
        device: Device,
        mirror: Option<(&MirrorIndices, &MirrorIndices)>,
    ) -> Result<Self> {
        let actor = Actor::new(spec, device);
        let critic = Critic::new(spec, device);
        let actor_opt = Adam::new(actor.var_store(), hp.a_lr, hp.eps);
        let critic_opt = Adam::new(critic.var_store(), hp.c_lr, hp.eps);
        let mirror = match (hp.mirror > 0.0, mirror) {
            (false, _) => None,
            (true, Some((obs, act))) => Some(MirrorTensors::new(obs, act, device)),
            (true, None) => {
                bail!("--mirror {} needs observation and action mirror lists", hp.mirror)
            }
        };
        Ok(Self { actor, critic, actor_opt, critic_opt, hp, device, mirror, dump_dir: None })
    }

    pub fn set_dump_dir(&mut self, dir: PathBuf) {
        self.dump_dir = Some(dir);
    }

    pub fn actor(&self) -> &Actor {
        &self.actor
    }

    pub fn critic(&self) -> &Critic {
        &self.critic
    }

    /// Both Adam states, named `actor_adam/...` and `critic_adam/...`.
    pub fn optimizer_state(&self) -> Vec<(String, Tensor)> {
        let mut out = Vec::new();
        for (prefix, adam) in [("actor_adam", &self.actor_opt), ("critic_adam", &self.critic_opt)] {
            out.extend(adam.state().into_iter().map(|(k, t)| (format!("{prefix}/{k}"), t)));
        }
        out
    }

    /// Restores what [`PPOOptim::optimizer_state`] saved (keys with their prefixes).
    pub fn load_optimizer_state(
        &mut self,
        state: &std::collections::HashMap<String, Tensor>,
    ) -> Result<()> {
        let strip = |prefix: &str| -> std::collections::HashMap<String, Tensor> {
            state
                .iter()
                .filter_map(|(k, t)| {
                    k.strip_prefix(prefix).map(|rest| (rest.to_string(), t.shallow_clone()))
                })
                .collect()
        };
        self.actor_opt.load_state(&strip("actor_adam/")).context("actor optimizer state")?;
        self.critic_opt.load_state(&strip("critic_adam/")).context("critic optimizer state")
    }

    pub fn actor_mut(&mut self) -> &mut Actor {
        &mut self.actor
    }

    pub fn critic_mut(&mut self) -> &mut Critic {
        &mut self.critic
    }

    /// Runs `epochs` passes of shuffled minibatches over the finished steps of `buffer`.
    pub fn optimize(&mut self, buffer: &Buffer, rng: &mut impl Rng) -> Result<OptimStats> {
        let n = buffer.returns.len() as i64;
        let (obs_dim, act_dim) = (buffer.obs_dim() as i64, buffer.act_dim() as i64);
        let dev = self.device;
        let states = Tensor::from_slice(&buffer.states[..(n * obs_dim) as usize])
            .view([n, obs_dim])
            .to_device(dev);
        let actions = Tensor::from_slice(&buffer.actions[..(n * act_dim) as usize])
            .view([n, act_dim])
            .to_device(dev);
        let returns = Tensor::from_slice(&buffer.returns).view([n, 1]).to_device(dev);
        let advantages =
            Tensor::from_slice(&buffer.normalized_advantages()).view([n, 1]).to_device(dev);
        let (old_mean, old_std, old_logp) = tch::no_grad(|| {
            let (m, s) = self.actor.distribution(&states);
            let lp = log_prob(&actions, &m, &s);
            (m, s.expand([n, act_dim], false).contiguous(), lp)
        });
        let mirror_states = self.mirror.as_ref().map(|m| mirror(&states, &m.obs_src, &m.obs_sign));

        let mut stats = OptimStats::default();
        let mut kl_max = 0.0f64;
        'epochs: for _ in 0..self.hp.epochs {
            for batch in buffer.minibatch_indices(self.hp.batch_size, rng) {
                let idx = Tensor::from_slice(&batch).to_device(dev);
                let pick = |t: &Tensor| t.index_select(0, &idx);
                let (s, a, ret, adv) =
                    (pick(&states), pick(&actions), pick(&returns), pick(&advantages));
                let (o_mean, o_std, o_logp) = (pick(&old_mean), pick(&old_std), pick(&old_logp));

                let (mean, std) = self.actor.distribution(&s);
                let logp = log_prob(&a, &mean, &std);
                let ratio = (&logp - &o_logp).exp();
                let surrogate = (&ratio * &adv)
                    .min_other(&(ratio.clamp(1.0 - self.hp.clip, 1.0 + self.hp.clip) * &adv));
                let actor_loss = -surrogate.mean(Kind::Float);
                // Entropy of a diagonal Gaussian per dim, averaged over actions and the batch.
                let entropy = (std.log() + 0.5 + 0.5 * (2.0 * PI).ln())
                    .expand([batch.len() as i64, act_dim], false)
                    .mean(Kind::Float);
                let entropy_pen = -self.hp.entropy_coeff * &entropy;
                let mirror_loss = match (&self.mirror, &mirror_states) {
                    (Some(m), Some(ms)) => {
                        let target = tch::no_grad(|| {
                            mirror(&self.actor.mean(&pick(ms)), &m.act_src, &m.act_sign)
                        });
                        self.hp.mirror * 4.0 * (&mean - target).square().mean(Kind::Float)
                    }
                    _ => Tensor::zeros([], (Kind::Float, dev)),
                };
                let values = self.critic.value(&s);
                let critic_loss: Tensor = 0.5 * (&ret - values).square().mean(Kind::Float);
                let kl = tch::no_grad(|| {
                    let (m, sd) = (mean.detach(), std.detach());
                    ((&o_std / &sd).log()
                        + (sd.square() + (&m - &o_mean).square()) / (o_std.square() * 2.0)
                        - 0.5)
                        .mean(Kind::Float)
                        .double_value(&[])
                });

                // Losses are read back for the statistics anyway; only a non-finite one pays
                // for the full per-tensor diagnosis.
                let losses = [
                    (&actor_loss + &entropy_pen).double_value(&[]),
                    critic_loss.double_value(&[]),
                    mirror_loss.double_value(&[]),
                ];
                if losses.iter().any(|l| !l.is_finite()) {
                    return Err(self.non_finite(&[
                        ("states", &s),
                        ("actions", &a),
                        ("returns", &ret),
                        ("advantages", &adv),
                        ("log_probs", &logp),
                        ("old_log_probs", &o_logp),
                        ("actor_loss", &actor_loss),
                        ("critic_loss", &critic_loss),
                        ("mirror_loss", &mirror_loss),
                    ]));
                }

                self.actor_opt.zero_grad();
                (&actor_loss + &entropy_pen + &mirror_loss).backward();
                self.actor_opt.clip_grad_norm(self.hp.grad_clip);
                self.actor_opt.step();
                self.critic_opt.zero_grad();
                critic_loss.backward();
                self.critic_opt.clip_grad_norm(self.hp.grad_clip);
                self.critic_opt.step();

                stats.actor_loss += losses[0];
                stats.critic_loss += losses[1];
                stats.mirror_loss += losses[2];
                stats.kl += kl;
                stats.minibatches += 1;
                kl_max = kl_max.max(kl);
                if kl_max > self.hp.kl {
                    stats.early_stopped = true;
                    break 'epochs;
                }
            }
        }
        let k = stats.minibatches.max(1) as f64;
        stats.actor_loss /= k;
        stats.critic_loss /= k;
        stats.mirror_loss /= k;
        stats.kl /= k;
        Ok(stats)
    }

    /// The error for a non-finite batch, naming the tensors and where the dump went.
    fn non_finite(&self, tensors: &[(&str, &Tensor)]) -> anyhow::Error {
        let bad: Vec<&str> =
            tensors.iter().filter(|(_, t)| !is_finite(t)).map(|(n, _)| *n).collect();
        let dump = match self.dump_non_finite(tensors) {
            Ok(Some(p)) => format!("; diagnostic dump written to {}", p.display()),
            Ok(None) => String::new(),
            Err(e) => format!("; writing the diagnostic dump failed: {e:#}"),
        };
        anyhow::anyhow!("non-finite values in {} during the PPO update{dump}", bad.join(", "))
    }

    fn dump_non_finite(&self, tensors: &[(&str, &Tensor)]) -> Result<Option<PathBuf>> {
        let Some(dir) = &self.dump_dir else {
            return Ok(None);
        };
        let path = dir.join("training_error.safetensors");
        let named: Vec<(&str, Tensor)> =
            tensors.iter().map(|(n, t)| (*n, t.detach().to_device(Device::Cpu))).collect();
        crate::fsutil::write_atomic_with(&path, |tmp| {
            Tensor::write_safetensors(&named, tmp).context("writing the dump")
        })?;
        Ok(Some(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::{Arch, Nonlinearity, StdSpec};
    use rand::SeedableRng;

    fn spec() -> NetSpec {
        NetSpec {
            obs_dim: 2,
            act_dim: 1,
            arch: Arch::Ff,
            layers: vec![16],
            nonlinearity: Nonlinearity::Tanh,
            std: StdSpec::Fixed(vec![0.3]),
        }
    }

    fn hyper(kl: f64) -> PpoHyper {
        PpoHyper {
            a_lr: 1e-3,
            c_lr: 1e-3,
            eps: 1e-6,
            epochs: 3,
            batch_size: 8,
            clip: 0.2,
            kl,
            entropy_coeff: 0.0,
            grad_clip: 1.0,
            mirror: 0.0,
        }
    }

    fn buffer(reward: f32) -> Buffer {
        let mut b = Buffer::new(2, 1, 0.99, 0.95);
        for t in 0..64 {
            let x = t as f32 / 64.0;
            b.push(&[x, -x], &[x - 0.5], if t == 10 { reward } else { x }, 0.0);
        }
        b.end_trajectory(0.0);
        b
    }

    #[test]
    fn update_lowers_the_critic_loss() {
        tch::manual_seed(0);
        let mut optim = PPOOptim::new(&spec(), hyper(f64::INFINITY), Device::Cpu, None).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
        let b = buffer(0.5);
        let first = optim.optimize(&b, &mut rng).unwrap();
        assert_eq!(first.minibatches, 3 * 8);
        let mut last = first.clone();
        for _ in 0..20 {
            last = optim.optimize(&b, &mut rng).unwrap();
        }
        assert!(last.critic_loss < 0.5 * first.critic_loss, "{first:?} -> {last:?}");
    }

    #[test]
    fn kl_threshold_stops_the_update_early() {
        tch::manual_seed(0);
        let mut optim = PPOOptim::new(&spec(), hyper(1e-12), Device::Cpu, None).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
        let stats = optim.optimize(&buffer(0.5), &mut rng).unwrap();
        assert!(stats.early_stopped);
        // The first minibatch measures KL 0 (nothing changed yet); the second exceeds it.
        assert_eq!(stats.minibatches, 2);
    }

    #[test]
    fn non_finite_batch_fails_with_a_dump() {
        let dir = tempfile::tempdir().unwrap();
        let mut optim = PPOOptim::new(&spec(), hyper(0.02), Device::Cpu, None).unwrap();
        optim.set_dump_dir(dir.path().to_path_buf());
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
        let err = optim.optimize(&buffer(f32::NAN), &mut rng).unwrap_err().to_string();
        assert!(err.contains("non-finite values in returns, advantages"), "{err}");
        let dump = dir.path().join("training_error.safetensors");
        assert!(err.contains(&dump.display().to_string()), "{err}");
        let tensors = Tensor::read_safetensors(&dump).unwrap();
        assert!(tensors.iter().any(|(n, _)| n == "returns"));
    }

    #[test]
    fn mirror_without_lists_is_refused() {
        let mut hp = hyper(0.02);
        hp.mirror = 1.0;
        let err = PPOOptim::new(&spec(), hp, Device::Cpu, None).err().unwrap().to_string();
        assert!(err.contains("needs observation and action mirror lists"), "{err}");
    }
}
