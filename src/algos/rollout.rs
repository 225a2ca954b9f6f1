//! The one episode loop: reset, then act → step → visit until the env terminates, the length
//! limit is reached, or a callback stops it. The sampler workers, prenormalization, `gait eval`
//! and `gait bench env` all run their episodes through [`Rollout::episode`]; they differ only
//! in how they act and what they record.
//!
//! The buffers (observation, next observation, action, reward terms) live in the [`Rollout`]
//! and are reused, so a step allocates nothing.

use anyhow::Result;

use crate::envs::{Env, RewardTerm};

/// `start(first_obs, env)`: runs once after the reset.
pub type OnStart<'a> = dyn FnMut(&[f32], &dyn Env) -> Result<Flow> + 'a;
/// `act(t, obs, action)`: fills the action (it starts as the previous step's action).
pub type Act<'a> = dyn FnMut(usize, &[f32], &mut [f32]) -> Result<Flow> + 'a;
/// `visit(transition, env)`: records the step.
pub type Visit<'a> = dyn FnMut(&Transition, &dyn Env) -> Result<Flow> + 'a;

/// Whether the loop goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// End the episode now (cancelled job, step budget reached).
    Stop,
}

/// One step as the visitor sees it. The env is passed beside it for its metrics and bodies.
#[derive(Debug)]
pub struct Transition<'a> {
    /// Step index within the episode.
    pub t: usize,
    /// The observation the action was chosen from.
    pub obs: &'a [f32],
    /// The critic's observation of the same state: the env's own
    /// ([`PrivilegedCritic::critic_observation`](crate::envs::PrivilegedCritic::critic_observation)), or `obs` for envs without one.
    pub critic_obs: &'a [f32],
    pub action: &'a [f32],
    pub reward: f32,
    /// The env terminated (not a time-limit cut); the visitors so far read the episode's end
    /// from [`EpisodeEnd`], the rollout test from here.
    #[cfg_attr(not(test), allow(dead_code))]
    pub done: bool,
    pub next_obs: &'a [f32],
    pub info: &'a [RewardTerm],
}

/// How an episode ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpisodeEnd {
    /// Steps taken.
    pub steps: usize,
    /// The env terminated at the last step.
    pub done: bool,
    /// A callback stopped the episode.
    pub stopped: bool,
    /// The env's simulation blew up on the step after the last one ([`Env::diverged`]): that
    /// step was not visited, and the episode is cut (not done) at the last good state.
    pub diverged: bool,
}

/// Reusable episode buffers for one env.
#[derive(Debug, Default)]
pub struct Rollout {
    obs: Vec<f32>,
    next: Vec<f32>,
    /// The critic's observations of `obs` and `next` (empty for envs without one).
    critic: Vec<f32>,
    critic_next: Vec<f32>,
    action: Vec<f32>,
    info: Vec<RewardTerm>,
}

impl Rollout {
    pub fn new() -> Self {
        Self::default()
    }

    /// The critic's observation ([`Transition::critic_obs`]) of the state the next action is
    /// chosen from: after an episode, of its last state, for bootstrapping a cut trajectory.
    pub fn critic_obs(&self) -> &[f32] {
        if self.critic.is_empty() {
            &self.obs
        } else {
            &self.critic
        }
    }

    /// Runs one episode from `env.reset()`, for at most `max_len` steps.
    ///
    /// * `start(first_obs, env)` runs once after the reset;
    /// * `act(t, obs, action)` fills the action (it starts as the previous step's action);
    /// * `visit(transition, env)` records the step.
    ///
    /// Any of them may stop the episode ([`Flow::Stop`]) or fail it (the error is returned).
    pub fn episode(
        &mut self,
        env: &mut dyn Env,
        max_len: usize,
        start: &mut OnStart,
        act: &mut Act,
        visit: &mut Visit,
    ) -> Result<EpisodeEnd> {
        self.action.resize(env.action_size(), 0.0);
        self.obs.clear();
        self.obs.extend_from_slice(env.reset());
        let own_critic = env.critic().is_some();
        self.critic.clear();
        if let Some(critic) = env.critic() {
            self.critic.extend_from_slice(critic.critic_observation());
        }
        let mut end = EpisodeEnd { steps: 0, done: false, stopped: false, diverged: false };
        if start(&self.obs, &*env)? == Flow::Stop {
            end.stopped = true;
            return Ok(end);
        }
        for t in 0..max_len {
            if act(t, &self.obs, &mut self.action)? == Flow::Stop {
                end.stopped = true;
                return Ok(end);
            }
            let step = env.step(&self.action);
            let (reward, done) = (step.reward, step.done);
            self.next.clear();
            self.next.extend_from_slice(step.obs);
            self.info.clear();
            self.info.extend_from_slice(step.info);
            if env.diverged() {
                // `obs` (and the critic's) stay the last good state, which a cut bootstraps.
                end.diverged = true;
                return Ok(end);
            }
            self.critic_next.clear();
            if let Some(critic) = env.critic() {
                self.critic_next.extend_from_slice(critic.critic_observation());
            }
            end.steps = t + 1;
            let transition = Transition {
                t,
                obs: &self.obs,
                critic_obs: if own_critic { &self.critic } else { &self.obs },
                action: &self.action,
                reward,
                done,
                next_obs: &self.next,
                info: &self.info,
            };
            let flow = visit(&transition, &*env)?;
            std::mem::swap(&mut self.obs, &mut self.next);
            std::mem::swap(&mut self.critic, &mut self.critic_next);
            if done {
                end.done = true;
                return Ok(end);
            }
            if flow == Flow::Stop {
                end.stopped = true;
                return Ok(end);
            }
        }
        Ok(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envs::CartPole;

    /// The helper's loop equals a hand-written one: same observations, rewards and end.
    #[test]
    fn an_episode_matches_the_hand_written_loop() {
        let act = |t: usize, obs: &[f32], a: &mut [f32]| {
            a[0] = (t as f32 * 0.37).sin() - obs[0];
        };
        let mut env = CartPole::new();
        env.seed(3);
        let mut expected = Vec::new();
        let mut obs = env.reset().to_vec();
        let mut action = [0.0f32];
        for t in 0..500 {
            act(t, &obs, &mut action);
            let step = env.step(&action);
            expected.push((obs.clone(), step.reward, step.done));
            obs = step.obs.to_vec();
            if step.done {
                break;
            }
        }
        env.seed(3);
        let mut got = Vec::new();
        let end = Rollout::new()
            .episode(
                &mut env,
                500,
                &mut |_, _| Ok(Flow::Continue),
                &mut |t, obs, a| {
                    act(t, obs, a);
                    Ok(Flow::Continue)
                },
                &mut |tr, _| {
                    got.push((tr.obs.to_vec(), tr.reward, tr.done));
                    Ok(Flow::Continue)
                },
            )
            .unwrap();
        assert_eq!(got, expected);
        assert_eq!(
            (end.steps, end.done, end.stopped),
            (expected.len(), expected.last().unwrap().2, false)
        );
        let stopped = Rollout::new()
            .episode(
                &mut env,
                500,
                &mut |_, _| Ok(Flow::Continue),
                &mut |t, _, _| Ok(if t == 3 { Flow::Stop } else { Flow::Continue }),
                &mut |_, _| Ok(Flow::Continue),
            )
            .unwrap();
        assert_eq!((stopped.steps, stopped.stopped), (3, true));
    }
}
