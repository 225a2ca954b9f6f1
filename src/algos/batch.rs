//! A batch of training data as tensors, and what every actor-critic update computes from it:
//! log-probabilities, masked means, the critic's loss, and the errors for non-finite values.

use std::f64::consts::PI;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tch::{Device, Kind, Tensor};

use super::symmetry::MirrorTensors;
use super::Buffer;
use crate::policies::{all_finite, Actor, Critic};

/// How [`Batch::of`] builds a batch.
#[derive(Clone, Copy, Default)]
pub struct BatchOptions<'a> {
    /// The env's mirror lists as tensors, when the update mirrors.
    pub mirror: Option<&'a MirrorTensors>,
    /// Mirrored copies of every step join the batch (`--mirror-augment`).
    pub augment: bool,
    /// The mirrored observations ride along for a mirror loss.
    pub mirror_loss: bool,
    /// Advantages normalized over the batch (PPO) instead of as computed (A2C).
    pub normalize_advantages: bool,
}

/// One batch of training data: `[B, dim]` (feed-forward) or time-major `[T, B, dim]`
/// (recurrent, zero-padded), with a `[.., 1]` mask that is 1 on real steps.
pub struct Batch {
    /// Observations.
    pub states: Tensor,
    /// The critic's own observations (None: it reads `states`).
    pub critic_states: Option<Tensor>,
    /// Actions taken.
    pub actions: Tensor,
    /// Discounted returns (the critic's targets).
    pub returns: Tensor,
    /// The critic's values at collection (for value-loss clipping).
    pub old_values: Tensor,
    /// Advantages (normalized per batch, for PPO).
    pub advantages: Tensor,
    /// Log-probabilities of the actions under the sampling policy.
    pub old_logp: Tensor,
    /// The sampling policy's action means (for KL).
    pub old_mean: Tensor,
    /// The sampling policy's standard deviations (for KL).
    pub old_std: Tensor,
    /// The mirrored observations, when the mirror loss or augmentation is on.
    pub mirror_states: Option<Tensor>,
    /// 1 on real steps, 0 on padding.
    pub mask: Tensor,
}

impl Batch {
    /// The training inputs by name: what a non-finite check inspects and a diagnostic dump
    /// holds.
    pub fn inputs(&self) -> Vec<(&'static str, &Tensor)> {
        let mut inputs = vec![("states", &self.states)];
        inputs.extend(self.critic_states.as_ref().map(|c| ("critic_states", c)));
        inputs.extend([
            ("actions", &self.actions),
            ("returns", &self.returns),
            ("advantages", &self.advantages),
            ("old_log_probs", &self.old_logp),
            ("mask", &self.mask),
        ]);
        inputs
    }

    /// The critic's inputs: its own observation (or the policy's), the returns and the mask.
    pub fn critic_inputs(&self) -> CriticInputs {
        CriticInputs {
            states: self.critic_states.as_ref().unwrap_or(&self.states).shallow_clone(),
            returns: self.returns.shallow_clone(),
            old_values: self.old_values.shallow_clone(),
            mask: self.mask.shallow_clone(),
        }
    }

    /// The same selection applied to every field.
    pub fn select(&self, f: impl Fn(&Tensor) -> Tensor) -> Batch {
        Batch {
            states: f(&self.states),
            critic_states: self.critic_states.as_ref().map(&f),
            actions: f(&self.actions),
            returns: f(&self.returns),
            old_values: f(&self.old_values),
            advantages: f(&self.advantages),
            old_logp: f(&self.old_logp),
            old_mean: f(&self.old_mean),
            old_std: f(&self.old_std),
            mirror_states: self.mirror_states.as_ref().map(&f),
            mask: f(&self.mask),
        }
    }
}

impl Batch {
    /// The whole buffer as one batch (`[N, dim]`, or `[T, trajectories, dim]` padded when
    /// recurrent), with the sampling policy's distribution computed once, before any update.
    pub fn of(buffer: &Buffer, actor: &Actor, device: Device, options: BatchOptions<'_>) -> Batch {
        let n = buffer.returns.len();
        let (obs_dim, act_dim) = (buffer.obs_dim(), buffer.act_dim());
        let dev = device;
        let adv = buffer.training_advantages(options.normalize_advantages);
        let recurrent = actor.is_recurrent();
        let ids: Vec<usize> = (0..buffer.num_trajs()).collect();
        // Leading dims: [N] steps, or [T, trajectories] padded and time-major.
        let lead: Vec<i64> = if recurrent {
            vec![buffer.max_len(&ids) as i64, ids.len() as i64]
        } else {
            vec![n as i64]
        };
        let tensor = |field: &[f32], dim: usize| {
            let data =
                if recurrent { buffer.pad(field, dim, &ids) } else { field[..n * dim].to_vec() };
            let mut shape = lead.clone();
            shape.push(dim as i64);
            Tensor::from_slice(&data).view(shape.as_slice()).to_device(dev)
        };
        let states = tensor(&buffer.states, obs_dim);
        let critic_states = buffer.has_critic_states().then(|| {
            let (field, dim) = buffer.critic_view();
            tensor(field, dim)
        });
        let actions = tensor(&buffer.actions, act_dim);
        let returns = tensor(&buffer.returns, 1);
        let old_values = tensor(&buffer.values, 1);
        let advantages = tensor(&adv, 1);
        let mask = if recurrent {
            let mut shape = lead.clone();
            shape.push(1);
            Tensor::from_slice(&buffer.mask(&ids)).view(shape.as_slice()).to_device(dev)
        } else {
            Tensor::ones([n as i64, 1], (Kind::Float, dev))
        };
        let fields = [states, actions, returns, advantages, mask];
        let augmented = options.mirror.filter(|_| options.augment);
        let ([states, actions, returns, advantages, mask], critic_states) = match augmented {
            Some(m) => (
                m.augment(fields, recurrent),
                critic_states.map(|c| m.augment_critic(c, recurrent)),
            ),
            None => (fields, critic_states),
        };
        // A mirrored copy's value is its original's, as its return is.
        let old_values = match augmented {
            Some(_) => Tensor::cat(&[&old_values, &old_values], if recurrent { 1 } else { 0 }),
            None => old_values,
        };
        let (old_mean, old_std, old_logp) = tch::no_grad(|| {
            let (m, s) = actor.distribution(&states);
            let lp = log_prob(&actions, &m, &s);
            let s = s.expand_as(&m).contiguous();
            (m, s, lp)
        });
        let mirror_states = options.mirror.filter(|_| options.mirror_loss).map(|m| m.obs(&states));
        Batch {
            states,
            critic_states,
            actions,
            returns,
            old_values,
            advantages,
            old_logp,
            old_mean,
            old_std,
            mirror_states,
            mask,
        }
    }
}

impl Buffer {
    /// The critic's observations of the trajectories' last states (`Buffer::last_states`) as
    /// a `[trajectories, dim]` tensor.
    pub fn last_states_tensor(&self, device: Device) -> Tensor {
        let dim = self.critic_view().1 as i64;
        Tensor::from_slice(&self.last_states).view([-1, dim]).to_device(device)
    }
}

/// What the critic's update reads of a batch, as handles of its own (shallow copies), so the
/// critic's thread holds them while the actor's reads the full [`Batch`].
pub struct CriticInputs {
    /// The critic's observations.
    pub states: Tensor,
    /// Its targets.
    pub returns: Tensor,
    /// Its values at collection.
    pub old_values: Tensor,
    /// 1 on real steps.
    pub mask: Tensor,
}

/// `mean(x)` over real (mask = 1) steps.
pub fn masked_mean(x: &Tensor, mask: &Tensor, denom: &Tensor) -> Tensor {
    (x * mask).sum(Kind::Float) / denom
}

/// The critic loss `0.5·mean((returns − V)²)` over real steps (PPO's).
pub fn critic_loss(critic: &Critic, b: &CriticInputs) -> Tensor {
    critic_loss_scaled(critic, b, 0.5)
}

/// `coeff·mean((returns − V)²)` over real steps.
pub fn critic_loss_scaled(critic: &Critic, b: &CriticInputs, coeff: f64) -> Tensor {
    let denom = b.mask.sum(Kind::Float);
    let values = critic.value(&b.states);
    coeff * masked_mean(&(&b.returns - values).square(), &b.mask, &denom)
}

/// PPO's critic loss with value clipping: `0.5·mean(max((R − V)², (R − V_clip)²))`, `V_clip`
/// the new value moved at most `clip` from the value at collection; `clip` 0: [`critic_loss`].
pub fn critic_loss_clipped(critic: &Critic, b: &CriticInputs, clip: f64) -> Tensor {
    if clip <= 0.0 {
        return critic_loss(critic, b);
    }
    let denom = b.mask.sum(Kind::Float);
    let values = critic.value(&b.states);
    let clipped = &b.old_values + (&values - &b.old_values).clamp(-clip, clip);
    let unclipped = (&b.returns - &values).square();
    let worse = unclipped.maximum(&(&b.returns - clipped).square());
    0.5 * masked_mean(&worse, &b.mask, &denom)
}

/// KL(new‖old) over the batch's real steps: the Gaussians' KL per action dim, averaged over
/// the dims, then over the steps (`std` expanded to `mean`'s shape). Read only, no gradient.
pub fn kl_from_old(b: &Batch, mean: &Tensor, std: &Tensor) -> f64 {
    tch::no_grad(|| {
        let (m, sd) = (mean.detach(), std.detach());
        let per_dim = (&b.old_std / &sd).log()
            + (sd.square() + (&m - &b.old_mean).square()) / (b.old_std.square() * 2.0)
            - 0.5;
        let a = per_dim.size().last().copied().unwrap_or(1) as f64;
        let per_step = per_dim.sum_dim_intlist(-1, true, Kind::Float) / a;
        masked_mean(&per_step, &b.mask, &b.mask.sum(Kind::Float)).double_value(&[])
    })
}

/// The log-probability of `actions` under a diagonal Gaussian, summed over action dims.
pub fn log_prob(actions: &Tensor, mean: &Tensor, std: &Tensor) -> Tensor {
    let var = std * std;
    let lp = -(actions - mean).square() / (&var * 2.0) - std.log() - 0.5 * (2.0 * PI).ln();
    lp.sum_dim_intlist(-1, true, Kind::Float)
}

/// The error for a non-finite batch, naming the tensors and where the dump went.
pub fn non_finite(
    algorithm: &str,
    dump_dir: Option<&Path>,
    tensors: &[(&str, &Tensor)],
) -> anyhow::Error {
    let bad: Vec<&str> = tensors.iter().filter(|(_, t)| !all_finite(t)).map(|(n, _)| *n).collect();
    let dump = match dump_non_finite(dump_dir, tensors) {
        Ok(Some(p)) => format!("; diagnostic dump written to {}", p.display()),
        Ok(None) => String::new(),
        Err(e) => format!("; writing the diagnostic dump failed: {e:#}"),
    };
    anyhow::anyhow!("non-finite values in {} during the {algorithm} update{dump}", bad.join(", "))
}

/// The error for an update that made a parameter non-finite, at `(epoch, minibatch)`. The dump
/// holds the minibatch that drove the step (finite: the losses were checked before it), so
/// the run directory never holds a non-finite value.
pub fn diverged(
    algorithm: &str,
    dump_dir: Option<&Path>,
    net: &str,
    param: &str,
    (flag, lr): (&str, f64),
    (epoch, minibatch): (usize, usize),
    batch: &Batch,
) -> anyhow::Error {
    let dump = match dump_non_finite(dump_dir, &batch.inputs()) {
        Ok(Some(p)) => format!("; the minibatch is in {}", p.display()),
        Ok(None) => String::new(),
        Err(e) => format!("; writing the diagnostic dump failed: {e:#}"),
    };
    anyhow::anyhow!(
        "the {algorithm} update diverged: {net} parameter '{param}' became NaN or infinite \
         (epoch {epoch}, minibatch {minibatch}; {flag} {lr:e} may be too high). Nothing \
         from this update was saved{dump}"
    )
}

fn dump_non_finite(
    dump_dir: Option<&Path>,
    tensors: &[(&str, &Tensor)],
) -> Result<Option<PathBuf>> {
    let Some(dir) = dump_dir else {
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
