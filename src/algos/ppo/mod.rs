//! `PpoOptim`: the PPO update (roadrunner `algo/ppo.py` §3), feed-forward.
//!
//! Per minibatch: clipped surrogate, 0.5·MSE critic, entropy bonus, optional mirror loss;
//! backward; per-network gradient-norm clip; actor Adam step and critic Adam step. KL(new‖old)
//! is measured on the pre-step distribution and its running maximum over the call is checked
//! after every minibatch: above `--kl` the update stops (the offending step stays applied).
//! Any non-finite loss or input writes a diagnostic dump and fails with a clear error.
//!
//! The actor and the critic share no parameter and no graph, so the critic's half of every
//! minibatch (its loss, backward and Adam step) runs on a second thread beside the actor's, in
//! lockstep: both losses are checked before either network steps, and the KL stop ends both
//! after the same minibatch. Every tensor op is the one the sequential loop ran, on the same
//! inputs, so the numbers are bit for bit the sequential ones (a test pins it). Why: on the
//! 2-core machine the samplers wait while the update runs, so its second core sat idle for
//! about a third of every Cassie iteration (docs/benchmarks.md).

mod actor;
mod algorithm;
mod config;

use std::path::PathBuf;
use std::sync::mpsc;

use anyhow::{bail, Context, Result};
use rand::Rng;
use tch::{Device, Kind, Tensor};

use super::adam::Adam;
pub use super::batch::Batch;
use super::batch::{critic_loss_clipped, non_finite, BatchOptions, CriticInputs};
use super::symmetry::{MirrorTensors, Symmetry};
use super::Buffer;
use crate::policies::{all_finite, strip_prefix, Actor, Critic, NetSpec};
use actor::{actor_losses, ActorHalf};
pub use config::PpoConfig;

/// Means over the minibatches actually run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OptimStats {
    /// Surrogate loss including the entropy term (as the reference logs it).
    pub actor_loss: f64,
    /// Mean critic (value) loss.
    pub critic_loss: f64,
    /// Mean mirror loss (0 without `--mirror`).
    pub mirror_loss: f64,
    /// Mean KL(new‖old) over the minibatches (each measured before its step).
    pub kl: f64,
    /// Minibatches the update ran.
    pub minibatches: usize,
    /// Real (unpadded) steps passed through the update, summed over minibatches.
    pub samples: usize,
    /// True when the KL threshold stopped the update early.
    pub early_stopped: bool,
}

impl OptimStats {
    /// Adds one minibatch: its `[actor, critic, mirror]` losses, KL and mask.
    fn add(&mut self, losses: [f64; 3], kl: f64, mask: &Tensor) {
        self.actor_loss += losses[0];
        self.critic_loss += losses[1];
        self.mirror_loss += losses[2];
        self.kl += kl;
        self.minibatches += 1;
        self.samples += mask.sum(Kind::Float).double_value(&[]) as usize;
    }

    /// The sums over minibatches turned into means.
    fn means(mut self) -> Self {
        let k = self.minibatches.max(1) as f64;
        self.actor_loss /= k;
        self.critic_loss /= k;
        self.mirror_loss /= k;
        self.kl /= k;
        self
    }
}

/// One minibatch's rows of the full batch: `ids` along the batch dimension, and for recurrent
/// nets the first `steps` time steps (the longest trajectory in it).
#[derive(Clone)]
struct Selection {
    ids: Vec<i64>,
    steps: Option<i64>,
}

impl Selection {
    /// The rows `ids` of the originals (there are `originals`), with their mirrored copies
    /// (which sit after the originals) when `augment`; for recurrent nets up to the longest of
    /// their trajectories (`lengths`).
    fn of(
        mut ids: Vec<i64>,
        augment: bool,
        originals: usize,
        recurrent: bool,
        lengths: &[usize],
    ) -> Self {
        if augment {
            let shifted: Vec<i64> = ids.iter().map(|i| i + originals as i64).collect();
            ids.extend(shifted);
        }
        let steps = recurrent.then(|| {
            ids.iter().map(|&k| lengths[k as usize % originals]).max().unwrap_or(0) as i64
        });
        Self { ids, steps }
    }

    /// The rows of `x` (an index tensor built once per side with [`Selection::index`]).
    fn apply(&self, x: &Tensor, idx: &Tensor) -> Tensor {
        match self.steps {
            Some(t) => x.index_select(1, idx).narrow(0, 0, t),
            None => x.index_select(0, idx),
        }
    }

    fn index(&self, device: Device) -> Tensor {
        Tensor::from_slice(&self.ids).to_device(device)
    }
}

/// The actor's thread to the critic's: compute this minibatch's loss, or step on it.
enum ToCritic {
    Loss(Selection),
    Step,
    /// Value every state of the full batch and every trajectory's last state.
    Values,
    /// New targets (returns, values at collection) for the passes that follow.
    Targets(Tensor, Tensor),
}

/// The critic's thread to the actor's: the minibatch's loss (its value, and the tensor for a
/// diagnostic dump), then after a step the first non-finite parameter, if any.
enum FromCritic {
    Loss(f64, Tensor),
    Stepped(Option<String>),
    /// The values of the full batch's states and of the trajectories' last states.
    Values(Vec<f32>, Vec<f32>),
}

/// The critic's half of [`PpoOptim::optimize`], run on its own thread by [`CriticHalf::serve`].
struct CriticHalf<'a> {
    /// `&mut` though only read: a shared reference would need the critic to be `Sync`, which
    /// libtorch tensors are not.
    critic: &'a mut Critic,
    opt: &'a mut Adam,
    /// The full batch's critic inputs; each minibatch selects its rows.
    full: CriticInputs,
    /// The critic's observations of the trajectories' last states, `[trajectories, dim]`
    /// (`--recompute-advantages` only).
    last_states: Option<Tensor>,
    /// The gradient clip and the value clip.
    hp: &'a PpoConfig,
    /// The actor's thread's libtorch thread count.
    threads: i32,
    device: Device,
}

impl CriticHalf<'_> {
    /// For every minibatch the actor's thread names: its loss, then (once both losses are
    /// finite) its backward and Adam step. Ends when the actor's thread hangs up (the update
    /// finished, stopped or failed).
    fn serve(mut self, inbox: mpsc::Receiver<ToCritic>, outbox: mpsc::Sender<FromCritic>) {
        // libtorch's intra-op settings are partly per thread (OpenMP's and MKL's): the
        // caller's, as the sequential loop ran.
        tch::set_num_threads(self.threads);
        let mut loss = None;
        while let Ok(msg) = inbox.recv() {
            let reply = match msg {
                ToCritic::Loss(sel) => {
                    let idx = sel.index(self.device);
                    let batch = CriticInputs {
                        states: sel.apply(&self.full.states, &idx),
                        returns: sel.apply(&self.full.returns, &idx),
                        old_values: sel.apply(&self.full.old_values, &idx),
                        mask: sel.apply(&self.full.mask, &idx),
                    };
                    let l = critic_loss_clipped(self.critic, &batch, self.hp.value_clip);
                    let reply = FromCritic::Loss(l.double_value(&[]), l.detach());
                    loss = Some(l);
                    reply
                }
                ToCritic::Step => {
                    let Some(l) = loss.take() else { break };
                    self.opt.zero_grad();
                    l.backward();
                    self.opt.clip_and_step(self.hp.grad_clip);
                    FromCritic::Stepped(self.opt.first_non_finite_param().map(str::to_string))
                }
                ToCritic::Values => {
                    let Some(last) = &self.last_states else { break };
                    let values = |x: &Tensor| {
                        let v = tch::no_grad(|| self.critic.value(x)).flatten(0, -1);
                        Vec::<f32>::try_from(v).unwrap_or_default()
                    };
                    FromCritic::Values(values(&self.full.states), values(last))
                }
                ToCritic::Targets(returns, old_values) => {
                    self.full.returns = returns;
                    self.full.old_values = old_values;
                    continue;
                }
            };
            if outbox.send(reply).is_err() {
                break;
            }
        }
    }
}

/// Loss terms of one batch (scalars), the per-step log-probabilities, and KL(new‖old).
pub struct Losses {
    /// Clipped surrogate loss.
    pub actor: Tensor,
    /// The penalties beside the surrogate: −coefficient × entropy, plus the bounds loss on
    /// the action mean (`bound_loss`).
    pub penalties: Tensor,
    /// Mirror loss (0 without it).
    pub mirror: Tensor,
    /// Critic loss.
    pub critic: Tensor,
    /// KL(new‖old) over the batch.
    pub kl: f64,
    /// Per-step log-probabilities under the new policy.
    pub logp: Tensor,
}

/// PPO's optimizer: the actor and critic with their Adam states, the clipped surrogate, KL early stop and the mirror loss.
pub struct PpoOptim {
    actor: Actor,
    critic: Critic,
    actor_opt: Adam,
    critic_opt: Adam,
    hp: PpoConfig,
    device: Device,
    mirror: Option<MirrorTensors>,
    /// Where a non-finite batch is dumped (the run directory).
    dump_dir: Option<PathBuf>,
}

impl PpoOptim {
    /// `mirror` is required when `hp.mirror > 0` or `hp.mirror_augment`; augmentation with a
    /// critic observation of its own (`spec.critic_obs_dim`) needs that one's list too.
    pub fn new(
        spec: &NetSpec,
        hp: PpoConfig,
        device: Device,
        mirror: Option<&Symmetry>,
    ) -> Result<Self> {
        if let Some(conflict) = hp.recompute_conflict(spec.arch) {
            bail!(conflict);
        }
        let actor = Actor::new(spec, device);
        let critic = Critic::new(spec, device);
        let actor_opt = Adam::new(actor.var_store(), hp.a_lr, hp.eps);
        let critic_opt = Adam::new(critic.var_store(), hp.c_lr, hp.eps);
        let mirror = match (hp.uses_mirror(), mirror) {
            (false, _) => None,
            (true, Some(symmetry)) => {
                if hp.mirror_augment && spec.critic_obs_dim.is_some() && symmetry.critic().is_none()
                {
                    bail!("--mirror-augment needs a mirror list for the critic's own observation");
                }
                Some(MirrorTensors::new(symmetry, device))
            }
            (true, None) => {
                bail!("--mirror {} needs observation and action mirror lists", hp.mirror)
            }
        };
        Ok(Self { actor, critic, actor_opt, critic_opt, hp, device, mirror, dump_dir: None })
    }

    /// Scales both learning rates to `scale` × `a_lr` / `c_lr` for the next updates
    /// (`--lr-decay`).
    pub fn set_lr_scale(&mut self, scale: f64) {
        self.actor_opt.set_lr(self.hp.a_lr * scale);
        self.critic_opt.set_lr(self.hp.c_lr * scale);
    }

    /// Its hyperparameters.
    pub fn hp(&self) -> &PpoConfig {
        &self.hp
    }

    /// Where a diverged update dumps its batch (`training_error.safetensors`).
    pub fn set_dump_dir(&mut self, dir: PathBuf) {
        self.dump_dir = Some(dir);
    }

    /// The actor being trained.
    pub fn actor(&self) -> &Actor {
        &self.actor
    }

    /// The critic being trained.
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

    /// Restores what [`PpoOptim::optimizer_state`] saved (keys with their prefixes).
    pub fn load_optimizer_state(
        &mut self,
        state: &std::collections::HashMap<String, Tensor>,
    ) -> Result<()> {
        self.actor_opt
            .load_state(&strip_prefix(state, "actor_adam/"))
            .context("actor optimizer state")?;
        self.critic_opt
            .load_state(&strip_prefix(state, "critic_adam/"))
            .context("critic optimizer state")
    }

    /// The actor, mutably (restoring a checkpoint, prenormalization).
    pub fn actor_mut(&mut self) -> &mut Actor {
        &mut self.actor
    }

    /// The critic, mutably.
    pub fn critic_mut(&mut self) -> &mut Critic {
        &mut self.critic
    }

    /// Runs `epochs` passes of minibatches over the finished steps of `buffer`: shuffled
    /// states for feed-forward networks, whole trajectories (time-major, zero-padded, masked)
    /// for recurrent ones, `batch_size` states or trajectories each. The critic's half runs on
    /// a second thread (`CriticHalf`; the module doc says why and why the numbers are the
    /// sequential ones).
    pub fn optimize(&mut self, buffer: &Buffer, rng: &mut impl Rng) -> Result<OptimStats> {
        let mut full = self.full_batch(buffer);
        let inputs = full.inputs();
        if inputs.iter().any(|(_, t)| !all_finite(t)) {
            return Err(non_finite("PPO", self.dump_dir.as_deref(), &inputs));
        }
        let threads = tch::get_num_threads();
        let critic_inputs = full.critic_inputs();
        // `--recompute-advantages`: a copy of the buffer's returns, which each pass recomputes.
        let mut recomputed = self.hp.recompute_advantages.then(|| buffer.returns_only());
        let last_states = recomputed.as_ref().map(|_| buffer.last_states_tensor(self.device));
        let Self { actor, critic, actor_opt, critic_opt, hp, device, mirror, dump_dir } = self;
        let (device, dump_dir) = (*device, dump_dir.as_deref());
        std::thread::scope(|scope| {
            let (to_critic, inbox) = mpsc::channel();
            let (outbox, from_critic) = mpsc::channel();
            let half = CriticHalf {
                critic,
                opt: critic_opt,
                full: critic_inputs,
                last_states,
                hp: &*hp,
                threads,
                device,
            };
            std::thread::Builder::new()
                .name("critic-update".into())
                .spawn_scoped(scope, move || half.serve(inbox, outbox))
                .context("starting the critic's update thread")?;
            let recurrent = actor.is_recurrent();
            let lengths: Vec<usize> = buffer.traj_idx.windows(2).map(|w| w[1] - w[0]).collect();
            let mut side = ActorHalf {
                actor: &*actor,
                opt: actor_opt,
                hp: &*hp,
                mirror: mirror.as_ref(),
                device,
                dump_dir,
                to_critic: &to_critic,
                from_critic: &from_critic,
            };
            let mut stats = OptimStats::default();
            let mut kl_max = 0.0f64;
            'epochs: for epoch in 0..hp.epochs {
                if let Some(local) = recomputed.as_mut().filter(|_| epoch > 0) {
                    let norm = hp.normalize_advantages;
                    recompute_targets(local, &mut full, norm, device, &to_critic, &from_critic)?;
                }
                let batches = if recurrent {
                    buffer.trajectory_batches(hp.batch_size, rng)
                } else {
                    buffer.minibatch_indices(hp.batch_size, rng)
                };
                // With augmentation the mirrored copies sit after the originals in `full`.
                let originals = if recurrent { buffer.num_trajs() } else { buffer.returns.len() };
                for ids in batches {
                    let sel = Selection::of(ids, hp.mirror_augment, originals, recurrent, &lengths);
                    let kl = side.minibatch(&full, sel, (epoch, stats.minibatches), &mut stats)?;
                    kl_max = kl_max.max(kl);
                    if kl_max > hp.kl {
                        stats.early_stopped = true;
                        break 'epochs;
                    }
                }
            }
            Ok(stats.means())
        })
    }

    /// The whole buffer as one batch ([`Batch::of`]), advantages normalized unless the
    /// settings say otherwise.
    pub fn full_batch(&self, buffer: &Buffer) -> Batch {
        let options = BatchOptions {
            mirror: self.mirror.as_ref(),
            augment: self.hp.mirror_augment,
            mirror_loss: self.hp.mirror > 0.0,
            normalize_advantages: self.hp.normalize_advantages,
        };
        Batch::of(buffer, &self.actor, self.device, options)
    }

    /// All loss terms of one batch; every mean runs over real (mask = 1) steps only.
    pub fn losses(&self, b: &Batch) -> Losses {
        let a = actor_losses(&self.actor, &self.hp, self.mirror.as_ref(), self.device, b);
        let critic = critic_loss_clipped(&self.critic, &b.critic_inputs(), self.hp.value_clip);
        Losses {
            actor: a.actor,
            penalties: a.penalties,
            mirror: a.mirror,
            critic,
            kl: a.kl,
            logp: a.logp,
        }
    }
}

/// The error for a critic's thread that hung up or answered out of turn.
fn lost() -> anyhow::Error {
    anyhow::anyhow!("the critic's update thread stopped unexpectedly")
}

/// Which net a non-finite parameter after a step is in (the actor's first), with the
/// parameter's name and the learning rate's flag and value, for the error.
fn blame<'a>(
    actor: Option<&'a str>,
    critic: Option<&'a str>,
    hp: &PpoConfig,
) -> Option<(&'static str, &'a str, (&'static str, f64))> {
    match (actor, critic) {
        (Some(param), _) => Some(("actor", param, ("--a-lr", hp.a_lr))),
        (None, Some(param)) => Some(("critic", param, ("--c-lr", hp.c_lr))),
        (None, None) => None,
    }
}

/// `--recompute-advantages`, before a pass: the critic's thread values `local`'s states and
/// trajectory ends again, and the full batch's returns, advantages (normalized if `normalize`)
/// and values at collection become the ones computed from them, on both threads.
fn recompute_targets(
    local: &mut Buffer,
    full: &mut Batch,
    normalize: bool,
    device: Device,
    to_critic: &mpsc::Sender<ToCritic>,
    from_critic: &mpsc::Receiver<FromCritic>,
) -> Result<()> {
    to_critic.send(ToCritic::Values).map_err(|_| lost())?;
    let Ok(FromCritic::Values(values, last)) = from_critic.recv() else {
        return Err(lost());
    };
    local.recompute_returns(&values, &last);
    let column = |v: &[f32]| Tensor::from_slice(v).view([-1, 1]).to_device(device);
    full.advantages = column(&local.training_advantages(normalize));
    full.returns = column(&local.returns);
    full.old_values = column(&local.values);
    let targets = ToCritic::Targets(full.returns.shallow_clone(), full.old_values.shallow_clone());
    to_critic.send(targets).map_err(|_| lost())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod recurrent_tests;
