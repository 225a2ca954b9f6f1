//! `A2c`: the synchronous advantage actor-critic of pytorch-a2c-ppo-acktr (`algo/a2c_acktr.py`),
//! one of the designs gait follows, behind the [`Algorithm`] seam.
//!
//! Per iteration, one step on the whole batch: the policy gradient `−mean(log π(a|s) · A)`
//! with A the GAE advantage as the samplers computed it (not normalized), an entropy bonus
//! (the Gaussian's entropy summed over action dims, as the reference's), and the critic's
//! `value_coeff · mean((R − V)²)`; each network's gradient norm clipped and an RMSprop step.
//! Two differences from the reference, both from gait's networks: the actor and the critic
//! share no parameters, so each has its own RMSprop state and gradient clip (the reference
//! clips the shared net's joint norm); and a fixed std (`--std`) has no entropy gradient.
//! KL(new‖old) on the batch after the step is reported as PPO's is, for comparison.

mod config;

use std::collections::HashMap;
use std::f64::consts::PI;
use std::path::PathBuf;

use anyhow::{Context, Result};
use rand_chacha::ChaCha8Rng;
use tch::{Device, Kind, Tensor};

use super::algorithm::{decay_scale, Algorithm};
use super::batch::BatchOptions;
use super::batch::{
    critic_loss_scaled, diverged, kl_from_old, log_prob, masked_mean, non_finite, Batch,
};
use super::rmsprop::RmsProp;
use super::Buffer;
use crate::logging::metrics::UpdateMetrics;
use crate::policies::{strip_prefix, Actor, Critic, NetSpec};
pub use config::A2cConfig;

/// A2C's learner: the actor and critic with their RMSprop states.
pub struct A2c {
    actor: Actor,
    critic: Critic,
    actor_opt: RmsProp,
    critic_opt: RmsProp,
    hp: A2cConfig,
    device: Device,
    /// Where a non-finite batch is dumped (the run directory).
    dump_dir: Option<PathBuf>,
}

impl A2c {
    /// New networks for `spec` on `device` with fresh RMSprop states.
    pub fn new(spec: &NetSpec, hp: A2cConfig, device: Device) -> Self {
        let actor = Actor::new(spec, device);
        let critic = Critic::new(spec, device);
        let actor_opt = RmsProp::new(actor.var_store(), hp.lr, hp.alpha, hp.eps);
        let critic_opt = RmsProp::new(critic.var_store(), hp.lr, hp.alpha, hp.eps);
        Self { actor, critic, actor_opt, critic_opt, hp, device, dump_dir: None }
    }
}

impl Algorithm for A2c {
    fn actor(&self) -> &Actor {
        &self.actor
    }

    fn actor_mut(&mut self) -> &mut Actor {
        &mut self.actor
    }

    fn critic(&self) -> &Critic {
        &self.critic
    }

    fn critic_mut(&mut self) -> &mut Critic {
        &mut self.critic
    }

    /// Both RMSprop states, named `actor_rmsprop/...` and `critic_rmsprop/...`.
    fn optimizer_state(&self) -> Vec<(String, Tensor)> {
        let mut out = Vec::new();
        for (prefix, opt) in
            [("actor_rmsprop", &self.actor_opt), ("critic_rmsprop", &self.critic_opt)]
        {
            out.extend(opt.state().into_iter().map(|(k, t)| (format!("{prefix}/{k}"), t)));
        }
        out
    }

    fn load_optimizer_state(&mut self, state: &HashMap<String, Tensor>) -> Result<()> {
        self.actor_opt
            .load_state(&strip_prefix(state, "actor_rmsprop/"))
            .context("actor optimizer state")?;
        self.critic_opt
            .load_state(&strip_prefix(state, "critic_rmsprop/"))
            .context("critic optimizer state")
    }

    fn set_progress(&mut self, steps: u64, timesteps: u64) {
        let lr = self.hp.lr * decay_scale(self.hp.lr_decay, steps, timesteps);
        self.actor_opt.set_lr(lr);
        self.critic_opt.set_lr(lr);
    }

    fn set_dump_dir(&mut self, dir: PathBuf) {
        self.dump_dir = Some(dir);
    }

    fn update(&mut self, buffer: &Buffer, _rng: &mut ChaCha8Rng) -> Result<UpdateMetrics> {
        let options = BatchOptions {
            normalize_advantages: self.hp.normalize_advantages,
            ..BatchOptions::default()
        };
        let b = Batch::of(buffer, &self.actor, self.device, options);
        let dump_dir = self.dump_dir.as_deref();
        let inputs = b.inputs();
        if inputs.iter().any(|(_, t)| !crate::policies::all_finite(t)) {
            return Err(non_finite("A2C", dump_dir, &inputs));
        }
        let denom = b.mask.sum(Kind::Float);
        let (mean, std) = self.actor.distribution(&b.states);
        let std = std.expand_as(&mean);
        let logp = log_prob(&b.actions, &mean, &std);
        let actor_loss = -masked_mean(&(&logp * &b.advantages), &b.mask, &denom);
        let entropy =
            (std.log() + 0.5 + 0.5 * (2.0 * PI).ln()).sum_dim_intlist(-1, true, Kind::Float);
        let entropy = masked_mean(&entropy, &b.mask, &denom);
        let critic_loss = critic_loss_scaled(&self.critic, &b.critic_inputs(), self.hp.value_coeff);
        let values = [actor_loss.double_value(&[]), critic_loss.double_value(&[])];
        if values.iter().any(|l| !l.is_finite()) {
            let mut tensors = b.inputs();
            tensors.extend([("actor_loss", &actor_loss), ("critic_loss", &critic_loss)]);
            return Err(non_finite("A2C", dump_dir, &tensors));
        }
        self.actor_opt.zero_grad();
        (&actor_loss - self.hp.entropy_coeff * &entropy).backward();
        self.actor_opt.clip_and_step(self.hp.grad_clip);
        self.critic_opt.zero_grad();
        critic_loss.backward();
        self.critic_opt.clip_and_step(self.hp.grad_clip);
        let bad = match (
            self.actor_opt.first_non_finite_param(),
            self.critic_opt.first_non_finite_param(),
        ) {
            (Some(param), _) => Some(("actor", param)),
            (None, Some(param)) => Some(("critic", param)),
            (None, None) => None,
        };
        if let Some((net, param)) = bad {
            let lr = ("--lr", self.hp.lr);
            return Err(diverged("A2C", dump_dir, net, param, lr, (0, 0), &b));
        }
        Ok(UpdateMetrics {
            actor_loss: values[0],
            critic_loss: values[1],
            mirror_loss: 0.0,
            kl: kl_after(&self.actor, &b),
            minibatches: 1,
            early_stopped: false,
        })
    }
}

/// KL(new‖old) over the batch after the step ([`kl_from_old`], as PPO's is measured).
fn kl_after(actor: &Actor, b: &Batch) -> f64 {
    let (mean, std) = tch::no_grad(|| actor.distribution(&b.states));
    kl_from_old(b, &mean, &std.expand_as(&mean))
}

#[cfg(test)]
mod tests;
