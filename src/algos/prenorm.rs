//! Prenormalization (`--prenorm --prenormalize-steps N`, roadrunner `train_normalizer`): before
//! training, run the policy's deterministic action plus N(0, 1) noise per dimension for N steps
//! (episodes capped at `--traj-len`, recurrent state reset per episode), and use the visited
//! states' mean and variance as the observation normalizer of both actor and critic. The
//! reset state of every episode counts; the final next-state does not. An env whose critic
//! has its own observation gets that one's statistics from the same states, for the critic.
//!
//! Deviation, on purpose: the reference updates the normalizer while it runs, so its policy
//! sees changing inputs during the rollout; here the rollout runs with the policy as it is and
//! the statistics are set once at the end (same states, simpler to reason about and test).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use tch::Tensor;

use super::rollout::{Flow, Rollout};
use super::seeding::{derive, stream};
use crate::envs::Env;
use crate::policies::{Actor, RunningStats};

/// The statistics prenormalization gathers.
#[derive(Debug, Clone, PartialEq)]
pub struct Prenormalized {
    /// Of the policy's observations.
    pub actor: RunningStats,
    /// Of the critic's own observations, for envs that give it one.
    pub critic: Option<RunningStats>,
}

/// Runs the noisy policy for `steps` steps and returns the visited states' statistics;
/// `on_steps(n)` is called after each episode with the steps visited so far. The env runs
/// as [`Walking::set_prenormalizing`](crate::envs::Walking::set_prenormalizing) says, and is left as it was given (not prenormalizing).
pub fn prenormalize(
    env: &mut dyn Env,
    actor: &Actor,
    steps: usize,
    traj_len: usize,
    seed: u64,
    on_steps: &mut dyn FnMut(usize),
) -> anyhow::Result<Prenormalized> {
    if let Some(walking) = env.walking_mut() {
        walking.set_prenormalizing(true);
    }
    // One closure, so that every exit (an error, an interrupt) passes the reset below.
    let stats = (|| -> anyhow::Result<Prenormalized> {
        let _no_grad = tch::no_grad_guard();
        let (obs_dim, act_dim) = (env.observation_size(), env.action_size());
        let mut stats = RunningStats::new(obs_dim);
        let critic_dim = env.critic().map_or(0, |c| c.critic_observation_size());
        let mut critic = (critic_dim > 0).then(|| RunningStats::new(critic_dim));
        let mut noise = ChaCha8Rng::seed_from_u64(derive(seed, &[stream::PRENORM]));
        let mut visited = 0usize;
        let mut episode = 0u64;
        let mut rollout = Rollout::new();
        while visited < steps {
            env.seed(derive(seed, &[stream::PRENORM, episode]));
            episode += 1;
            let mut hidden = None;
            rollout.episode(
                env,
                traj_len,
                &mut |_, _| Ok(Flow::Continue),
                &mut |_, obs, action| {
                    if visited == steps {
                        return Ok(Flow::Stop);
                    }
                    // Ctrl-C and SIGTERM end prenormalization too (it can take minutes).
                    if super::interrupt::requested() {
                        return Err(super::interrupt::Interrupted.into());
                    }
                    stats.update(obs);
                    visited += 1;
                    let (mean, _) = actor.step(&Tensor::from_slice(obs), &mut hidden);
                    mean.copy_data(action, act_dim);
                    for a in action.iter_mut() {
                        let z: f32 = StandardNormal.sample(&mut noise);
                        *a += z;
                    }
                    Ok(Flow::Continue)
                },
                &mut |tr, _| {
                    if let Some(c) = &mut critic {
                        c.update(tr.critic_obs);
                    }
                    Ok(Flow::Continue)
                },
            )?;
            on_steps(visited);
        }
        Ok(Prenormalized { actor: stats, critic })
    })();
    if let Some(walking) = env.walking_mut() {
        walking.set_prenormalizing(false);
    }
    stats
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envs::CartPole;
    use crate::policies::{NetSpec, Nonlinearity, StdSpec};

    /// The statistics are the empirical mean and variance of exactly the states the noisy
    /// policy visits, replayed here independently.
    #[test]
    fn gives_the_empirical_mean_and_std_of_the_visited_states() {
        let spec = NetSpec {
            nonlinearity: Nonlinearity::Tanh,
            std: StdSpec::Fixed(vec![0.1]),
            ..NetSpec::ff(4, 1, &[8])
        };
        tch::manual_seed(0);
        let actor = Actor::new(&spec, tch::Device::Cpu);
        let stats = prenormalize(&mut CartPole::new(), &actor, 300, 50, 9, &mut |_| {}).unwrap();
        assert_eq!(stats.critic, None, "cartpole's critic reads the policy's observation");
        let stats = stats.actor;
        assert_eq!(stats.count, 300.0);

        let mut env = CartPole::new();
        let mut noise = ChaCha8Rng::seed_from_u64(derive(9, &[stream::PRENORM]));
        let mut states: Vec<[f64; 4]> = Vec::new();
        let mut episode = 0;
        while states.len() < 300 {
            env.seed(derive(9, &[stream::PRENORM, episode]));
            episode += 1;
            let mut obs = env.reset().to_vec();
            for _ in 0..50 {
                if states.len() == 300 {
                    break;
                }
                states.push([obs[0] as f64, obs[1] as f64, obs[2] as f64, obs[3] as f64]);
                let mean = tch::no_grad(|| actor.mean(&Tensor::from_slice(&obs)));
                let z: f32 = StandardNormal.sample(&mut noise);
                let a = mean.double_value(&[0]) as f32 + z;
                let step = env.step(&[a]);
                obs = step.obs.to_vec();
                if step.done {
                    break;
                }
            }
        }
        assert!(episode > 1, "several episodes were needed");
        for d in 0..4 {
            let m = states.iter().map(|s| s[d]).sum::<f64>() / 300.0;
            let v = states.iter().map(|s| (s[d] - m).powi(2)).sum::<f64>() / 300.0;
            assert!((stats.mean[d] - m).abs() < 1e-9, "mean {d}: {} vs {m}", stats.mean[d]);
            assert!((stats.var[d] - v).abs() < 1e-9, "var {d}: {} vs {v}", stats.var[d]);
            assert!(v > 0.0);
        }
    }

    /// A staged full step (`--full-step-start`) prenormalizes as the run without it, at the
    /// run's first step's gait, so that a branch of a run from before the start trains what
    /// the run from scratch would; without a start the full step is in force from the first
    /// step, and the statistics differ.
    #[test]
    fn a_staged_full_step_prenormalizes_as_the_run_without_it() {
        use crate::envs::cassie::{CassieConfig, CassieEnv, CommandKind, ReferenceKind};
        let omni = CassieConfig {
            reference: ReferenceKind::Omni,
            commands: CommandKind::OmniWalk,
            ..CassieConfig::default()
        };
        // One actor for the three runs: torch's seed is global, and tests run side by side.
        let probe = CassieEnv::new(omni.clone());
        let (obs, act) = (probe.observation_size(), probe.action_size());
        let spec = NetSpec { std: StdSpec::Fixed(vec![0.2; act]), ..NetSpec::ff(obs, act, &[16]) };
        let actor = Actor::new(&spec, tch::Device::Cpu);
        let stats = |config: CassieConfig| {
            let mut env = CassieEnv::new(config);
            prenormalize(&mut env, &actor, 300, 100, 3, &mut |_| {}).unwrap().actor
        };
        let plain = stats(omni.clone());
        let staged =
            CassieConfig { full_step_speed: 0.1, full_step_start: 7_000_000, ..omni.clone() };
        let staged = stats(staged);
        let full = stats(CassieConfig { full_step_speed: 0.1, ..omni });
        assert_eq!(plain, staged);
        assert_ne!(
            plain, full,
            "a full step from the first step changes what prenormalization visits"
        );
    }
}
