//! PPO behind the [`Algorithm`] seam: the trait's calls mapped onto [`PpoOptim`]'s own.

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::Result;
use rand_chacha::ChaCha8Rng;
use tch::Tensor;

use super::PpoOptim;
use crate::algos::algorithm::{decay_scale, Algorithm};
use crate::algos::Buffer;
use crate::logging::metrics::UpdateMetrics;
use crate::policies::{Actor, Critic};

impl Algorithm for PpoOptim {
    fn actor(&self) -> &Actor {
        PpoOptim::actor(self)
    }

    fn actor_mut(&mut self) -> &mut Actor {
        PpoOptim::actor_mut(self)
    }

    fn critic(&self) -> &Critic {
        PpoOptim::critic(self)
    }

    fn critic_mut(&mut self) -> &mut Critic {
        PpoOptim::critic_mut(self)
    }

    fn optimizer_state(&self) -> Vec<(String, Tensor)> {
        PpoOptim::optimizer_state(self)
    }

    fn load_optimizer_state(&mut self, state: &HashMap<String, Tensor>) -> Result<()> {
        PpoOptim::load_optimizer_state(self, state)
    }

    fn set_progress(&mut self, steps: u64, timesteps: u64) {
        let scale = decay_scale(self.hp().lr_decay, steps, timesteps);
        PpoOptim::set_lr_scale(self, scale)
    }

    fn set_dump_dir(&mut self, dir: PathBuf) {
        PpoOptim::set_dump_dir(self, dir)
    }

    fn update(&mut self, buffer: &Buffer, rng: &mut ChaCha8Rng) -> Result<UpdateMetrics> {
        let stats = self.optimize(buffer, rng)?;
        Ok(UpdateMetrics {
            actor_loss: stats.actor_loss,
            critic_loss: stats.critic_loss,
            mirror_loss: stats.mirror_loss,
            kl: stats.kl,
            minibatches: stats.minibatches,
            early_stopped: stats.early_stopped,
        })
    }
}
