//! One sampler actor: an env and a copy of the actor and critic on a worker thread, running
//! one whole-trajectory job at a time ([`AlgoSampler::run`]).

use std::sync::atomic::Ordering;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::step::{act, check_finite, trajectory_values};
use super::{episode, Job, JobKind, PolicySnapshot, Trajectory};
use crate::algos::rollout::{EpisodeEnd, Flow, Rollout};
use crate::algos::seeding::{derive, stream};
use crate::algos::{Buffer, EvalEpisode};
use crate::envs::Env;
use crate::policies::{Actor, Critic, FastActor, Hidden};

/// One sampler actor (the reference's `AlgoSampler`): one env and one actor/critic copy,
/// living on its own thread; driven through [`SamplerPool`](super::SamplerPool).
pub struct AlgoSampler {
    pub(super) id: usize,
    pub(super) env: Box<dyn Env>,
    pub(super) actor: Actor,
    /// The actor's plain-Rust copy for train jobs (`None` where the actor has none),
    /// renewed with every new policy version.
    pub(super) fast: Option<FastActor>,
    pub(super) critic: Critic,
    pub(super) version: Option<u64>,
    pub(super) discount: f64,
    pub(super) gae_lambda: f64,
    pub(super) rollout: Rollout,
    pub(super) std: Vec<f32>,
}

impl AlgoSampler {
    fn sync(&mut self, policy: &PolicySnapshot) -> Result<()> {
        if self.version != Some(policy.version) {
            policy.actor.load_into(self.actor.var_store_mut())?;
            policy.critic.load_into(self.critic.var_store_mut())?;
            self.fast = self.actor.fast();
            self.version = Some(policy.version);
        }
        Ok(())
    }

    pub(super) fn run(
        &mut self,
        Job { spec: job, policy, cancel_above }: &Job,
    ) -> Result<Option<Trajectory>> {
        self.sync(policy)?;
        let _no_grad = tch::no_grad_guard();
        let start = Instant::now();
        let (obs_dim, act_dim) = (self.env.observation_size(), self.env.action_size());
        let train = job.kind == JobKind::Train;
        let mut noise = ChaCha8Rng::seed_from_u64(derive(job.seed, &[stream::ACTION_NOISE]));
        let critic_dim = self.env.critic().map_or(0, |c| c.critic_observation_size());
        let own_critic = critic_dim > 0;
        let mut buffer = Buffer::new(obs_dim, act_dim, self.discount, self.gae_lambda)
            .with_critic_dim(critic_dim);
        self.env.seed(job.seed);
        let command = episode::begin(self.env.as_mut(), job)?;
        self.env.set_training(train.then_some(job.timesteps));
        let mut metric_sums: Vec<(&'static str, f64)> = Vec::new();
        // Recurrent state starts at zero with every episode and is carried step by step.
        let mut actor_h: Hidden = None;
        let (actor, std) = (&self.actor, &mut self.std);
        // Train jobs step the plain-Rust copy where there is one; evaluations keep the torch
        // forward (`policies::fast`).
        let mut fast = self.fast.as_mut().filter(|_| train);
        if let Some(fast) = fast.as_deref_mut() {
            fast.reset();
        }
        // The copy's std does not depend on the state: once per episode.
        if let Some(fast) = &fast {
            std.copy_from_slice(fast.std());
        }
        let end = self.rollout.episode(
            self.env.as_mut(),
            job.max_len,
            &mut |obs, _| check_finite(obs, "initial observation").map(|()| Flow::Continue),
            &mut |t, obs, action| {
                if (train && job.id > cancel_above.load(Ordering::Relaxed))
                    || crate::algos::interrupt::requested()
                {
                    return Ok(Flow::Stop);
                }
                let noise = train.then_some(&mut noise);
                act(fast.as_deref_mut(), actor, &mut actor_h, obs, action, std, noise)
                    .with_context(|| format!("at step {t}"))?;
                Ok(Flow::Continue)
            },
            &mut |tr, env| {
                if !tr.reward.is_finite() {
                    bail!("env returned a non-finite reward ({}) at step {}", tr.reward, tr.t);
                }
                // The values come after the episode, in one batched forward (below).
                buffer.push(tr.obs, tr.action, tr.reward, 0.0);
                if own_critic {
                    buffer.push_critic_state(tr.critic_obs);
                }
                check_finite(tr.next_obs, "observation")
                    .with_context(|| format!("at step {}", tr.t))?;
                if !train {
                    crate::algos::tracking::add_metrics(&mut metric_sums, env.metrics());
                }
                Ok(Flow::Continue)
            },
        )?;
        if end.stopped {
            return Ok(None);
        }
        let episode = (!train).then(|| {
            let n = buffer.len().max(1) as f64;
            let metrics = metric_sums.iter().map(|&(k, v)| (k.to_string(), v / n)).collect();
            EvalEpisode { command, metrics, steps: buffer.len(), cut: end.diverged }
        });
        self.close(&mut buffer, train, &end)?;
        let seconds = start.elapsed().as_secs_f64();
        Ok(Some(Trajectory { buffer, seconds, diverged: end.diverged, episode }))
    }

    /// Closes the episode's trajectory in `buffer`: a training one with the critic's values
    /// and its bootstrap, an evaluation one with none.
    fn close(&mut self, buffer: &mut Buffer, train: bool, end: &EpisodeEnd) -> Result<()> {
        if train {
            // The critic reads its own observation of each state an action was chosen from
            // (the policy's, for envs without one), then of the state the episode ended in.
            // Terminated: 0. Cut by the time limit, or before a step whose simulation blew up:
            // bootstrap with the critic's value of the last state.
            let values = trajectory_values(&self.critic, buffer, self.rollout.critic_obs())?;
            let (steps, last) = values.split_at(buffer.len());
            buffer.end_train_trajectory(steps, self.rollout.critic_obs(), last[0], !end.done);
            buffer.outcomes.extend(self.env.walking().and_then(|w| w.track_outcome()));
        } else {
            buffer.end_trajectory(0.0);
        }
        Ok(())
    }
}
