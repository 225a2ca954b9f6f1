//! The seam between the [`super::runner::Runner`] and a learning algorithm (rsl_rl's
//! `alg` behind `OnPolicyRunner`, burn's `PolicyLearner`): the runner collects experience with
//! the algorithm's actor and critic, hands the finished trajectories to [`Algorithm::update`],
//! saves what [`Algorithm::optimizer_state`] returns beside the networks, and logs the
//! `UpdateMetrics` it reports. Nothing outside an algorithm's own module names its type:
//! [`super::catalog::ALGOS`] is the one table of algorithms.

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::Result;
use rand_chacha::ChaCha8Rng;
use tch::Tensor;

use super::Buffer;
use crate::logging::metrics::UpdateMetrics;
use crate::policies::{Actor, Critic, RunningStats};

/// An on-policy actor-critic learner: its networks, their optimizer state and its update.
pub trait Algorithm {
    /// The actor the samplers run, evaluations score and checkpoints keep.
    fn actor(&self) -> &Actor;

    /// The actor, mutably (restoring a checkpoint, a std schedule).
    fn actor_mut(&mut self) -> &mut Actor;

    /// The critic.
    fn critic(&self) -> &Critic;

    /// The critic, mutably (restoring a checkpoint).
    fn critic_mut(&mut self) -> &mut Critic;

    /// Sets the observation normalizers: the actor's to `actor`, the critic's to `critic` (the
    /// statistics of its own observation) or, when the critic reads the policy's observation
    /// (`None`), to `actor` too.
    fn set_normalizers(
        &mut self,
        actor: &RunningStats,
        critic: Option<&RunningStats>,
    ) -> Result<()> {
        self.actor_mut().normalizer_mut().set_stats(actor)?;
        self.critic_mut().normalizer_mut().set_stats(critic.unwrap_or(actor))
    }

    /// The optimizer state an exact continuation needs, as named tensors.
    fn optimizer_state(&self) -> Vec<(String, Tensor)>;

    /// Restores what [`Algorithm::optimizer_state`] saved.
    fn load_optimizer_state(&mut self, state: &HashMap<String, Tensor>) -> Result<()>;

    /// Sets what follows the run's progress (the learning rates' decay) for the iteration
    /// after `steps` of a run of `timesteps`.
    fn set_progress(&mut self, steps: u64, timesteps: u64);

    /// Where a diverged update dumps its batch (the run directory).
    fn set_dump_dir(&mut self, dir: PathBuf);

    /// One update on the finished trajectories of `buffer`, minibatches drawn from `rng`.
    fn update(&mut self, buffer: &Buffer, rng: &mut ChaCha8Rng) -> Result<UpdateMetrics>;
}

/// The factor of the learning rates (`--lr-decay`) and of a fixed std (`--std-decay`) after
/// `steps` of a run of `timesteps`: 1 at the start, falling linearly to `1 − decay` at the end,
/// and no lower past it.
pub fn decay_scale(decay: f64, steps: u64, timesteps: u64) -> f64 {
    let progress = if timesteps == 0 { 1.0 } else { (steps as f64 / timesteps as f64).min(1.0) };
    1.0 - decay * progress
}
