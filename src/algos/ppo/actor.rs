//! The actor's half of a PPO minibatch: its losses (clipped surrogate, penalties, mirror loss,
//! KL) and its step, in lockstep with the critic's thread (`CriticHalf`, in the parent module).

use std::f64::consts::PI;
use std::sync::mpsc;

use anyhow::Result;
use tch::{Device, Kind, Tensor};

use super::{blame, lost, FromCritic, OptimStats, PpoConfig, Selection, ToCritic};
use crate::algos::adam::Adam;
use crate::algos::batch::{diverged, kl_from_old, log_prob, masked_mean, non_finite, Batch};
use crate::algos::symmetry::MirrorTensors;
use crate::policies::Actor;

/// The actor's half of the update, on the caller's thread: per minibatch its losses, then a
/// step once the critic's thread (driven through the channels) has its loss and has stepped.
pub(super) struct ActorHalf<'a> {
    pub(super) actor: &'a Actor,
    pub(super) opt: &'a mut Adam,
    pub(super) hp: &'a PpoConfig,
    pub(super) mirror: Option<&'a MirrorTensors>,
    pub(super) device: Device,
    pub(super) dump_dir: Option<&'a std::path::Path>,
    pub(super) to_critic: &'a mpsc::Sender<ToCritic>,
    pub(super) from_critic: &'a mpsc::Receiver<FromCritic>,
}

impl ActorHalf<'_> {
    /// One minibatch of both nets: both losses checked before either steps, then both steps
    /// checked for a non-finite parameter. Adds the minibatch to `stats`; returns its KL.
    /// `at` is (epoch, minibatch) for a divergence's error.
    pub(super) fn minibatch(
        &mut self,
        full: &Batch,
        sel: Selection,
        at: (usize, usize),
        stats: &mut OptimStats,
    ) -> Result<f64> {
        let hp = self.hp;
        self.to_critic.send(ToCritic::Loss(sel.clone())).map_err(|_| lost())?;
        let idx = sel.index(self.device);
        let batch = full.select(|x| sel.apply(x, &idx));
        let losses = actor_losses(self.actor, hp, self.mirror, self.device, &batch);
        let Ok(FromCritic::Loss(critic_value, critic_tensor)) = self.from_critic.recv() else {
            return Err(lost());
        };
        let values = read_losses(&losses, critic_value, &critic_tensor, &batch, self.dump_dir)?;
        self.to_critic.send(ToCritic::Step).map_err(|_| lost())?;
        self.opt.zero_grad();
        (&losses.actor + &losses.penalties + &losses.mirror).backward();
        self.opt.clip_and_step(hp.grad_clip);
        let Ok(FromCritic::Stepped(critic_bad)) = self.from_critic.recv() else {
            return Err(lost());
        };
        // Finite losses can still produce a non-finite step (a huge learning rate overflows
        // f32): caught here, before anything is saved or sampled.
        let actor_bad = self.opt.first_non_finite_param();
        if let Some((net, param, lr)) = blame(actor_bad, critic_bad.as_deref(), hp) {
            return Err(diverged("PPO", self.dump_dir, net, param, lr, at, &batch));
        }
        stats.add(values, losses.kl, &batch.mask);
        Ok(losses.kl)
    }
}

/// The actor's loss terms of one batch: [`Losses`] without the critic's.
pub(super) struct ActorLosses {
    pub(super) actor: Tensor,
    pub(super) penalties: Tensor,
    pub(super) mirror: Tensor,
    pub(super) kl: f64,
    pub(super) logp: Tensor,
}

/// Where the bounds loss (`bound_loss`) starts: a little past the ±1 action space of most
/// envs, so a mean inside it is never penalized (rl_games' `soft_bound`).
const SOFT_BOUND: f64 = 1.1;

/// The clipped surrogate, penalties, mirror loss and KL(new‖old) of one batch.
pub(super) fn actor_losses(
    actor: &Actor,
    hp: &PpoConfig,
    mirror: Option<&MirrorTensors>,
    device: Device,
    b: &Batch,
) -> ActorLosses {
    let denom = b.mask.sum(Kind::Float);
    let masked_mean = |x: &Tensor| masked_mean(x, &b.mask, &denom);
    let per_step = |x: &Tensor| {
        let a = x.size().last().copied().unwrap_or(1) as f64;
        x.sum_dim_intlist(-1, true, Kind::Float) / a
    };
    let (mean, std) = actor.distribution(&b.states);
    let std = std.expand_as(&mean);
    let logp = log_prob(&b.actions, &mean, &std);
    // Padding gets ratio 1 (and advantage 0), as in the reference.
    let ratio = ((&logp - &b.old_logp) * &b.mask).exp();
    let surrogate = (&ratio * &b.advantages)
        .min_other(&(ratio.clamp(1.0 - hp.clip, 1.0 + hp.clip) * &b.advantages));
    let loss = -masked_mean(&surrogate);
    let entropy = per_step(&(std.log() + 0.5 + 0.5 * (2.0 * PI).ln()));
    let mut penalties = -hp.entropy_coeff * masked_mean(&entropy);
    if hp.bound_loss > 0.0 {
        // rl_games' bounds loss: the squared excess of the mean beyond ±SOFT_BOUND, summed over
        // the action's entries.
        let excess = (mean.abs() - SOFT_BOUND).clamp_min(0.0);
        let per_step = excess.square().sum_dim_intlist(-1, true, Kind::Float);
        penalties += hp.bound_loss * masked_mean(&per_step);
    }
    let mirror_loss = match (mirror, &b.mirror_states) {
        // Masked, unlike the reference, which averages padding in.
        (Some(m), Some(ms)) => hp.mirror * 4.0 * masked_mean(&m.error(actor, &mean, ms)),
        _ => Tensor::zeros([], (Kind::Float, device)),
    };
    let kl = kl_from_old(b, &mean, &std);
    ActorLosses { actor: loss, penalties, mirror: mirror_loss, kl, logp }
}

/// The minibatch's actor, critic and mirror losses as numbers, read back for the statistics
/// anyway; only a non-finite one pays for the full per-tensor diagnosis (a dump in `dump_dir`).
fn read_losses(
    losses: &ActorLosses,
    critic_value: f64,
    critic_tensor: &Tensor,
    batch: &Batch,
    dump_dir: Option<&std::path::Path>,
) -> Result<[f64; 3]> {
    let values = [
        (&losses.actor + &losses.penalties).double_value(&[]),
        critic_value,
        losses.mirror.double_value(&[]),
    ];
    if values.iter().any(|l| !l.is_finite()) {
        let mut tensors = batch.inputs();
        tensors.extend([
            ("log_probs", &losses.logp),
            ("actor_loss", &losses.actor),
            ("critic_loss", critic_tensor),
            ("mirror_loss", &losses.mirror),
        ]);
        return Err(non_finite("PPO", dump_dir, &tensors));
    }
    Ok(values)
}
