//! `--backprop-workers -1`: the optimizer's libtorch thread count, measured at start as the
//! reference's `train.py` describes ("automatically decide the best number of workers for the
//! fastest backprop time"). Each count from 1 to the machine's cores runs the same PPO update
//! (the run's network, one epoch over a synthetic buffer), best of two; the fastest wins, fewer
//! threads on a tie within 5 %. Printed at start and recorded in `experiment.json`.
//!
//! The choice is per machine and moment (on a busy machine fewer threads win), so two runs
//! with `-1` may pick differently; a run's numbers are reproducible with the count it recorded.

use std::time::Instant;

use anyhow::Result;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tch::Device;

use super::buffer::Buffer;
use super::ppo::PpoOptim;
use super::seeding::INIT_LOCK;
use crate::config::PpoConfig;
use crate::policies::NetSpec;

/// Steps in the synthetic buffer: a few minibatches, so the timing takes about a second.
const STEPS: usize = 4096;
/// Trajectory length in it (recurrent nets batch whole trajectories).
const TRAJ: usize = 64;

/// One measured thread count: `(threads, seconds for one update)`.
pub type Timing = (usize, f64);

/// Times one PPO epoch at 1..=`max_threads` threads and returns the fastest count with every
/// timing; libtorch's thread count is left at the choice. Call it before seeding the run's
/// initial weights: building the networks draws from libtorch's global generator (under the
/// runner's init lock, so a training on another thread is not disturbed).
pub fn fastest_backprop_threads(
    spec: &NetSpec,
    hp: &PpoConfig,
    device: Device,
    max_threads: usize,
) -> Result<(usize, Vec<Timing>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut buffer = Buffer::new(spec.obs_dim, spec.act_dim, 0.99, 0.95);
    let mut u = |n: usize| -> Vec<f32> { (0..n).map(|_| rng.gen::<f32>()).collect() };
    while buffer.len() < STEPS {
        for _ in 0..TRAJ {
            let (s, a, r) = (u(spec.obs_dim), u(spec.act_dim), u(2));
            buffer.push(&s, &a, r[0], r[1]);
        }
        buffer.end_trajectory(0.0);
    }
    // One epoch, no KL stop, no mirror loss: the same matrix products as the run's update.
    let hp = PpoConfig {
        epochs: 1,
        kl: f64::INFINITY,
        mirror: 0.0,
        batch_size: hp.batch_size.min(buffer.len()),
        ..hp.clone()
    };
    let mut timings = Vec::new();
    for threads in 1..=max_threads.max(1) {
        tch::set_num_threads(threads as i32);
        let mut optim = {
            let _init = INIT_LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            PpoOptim::new(spec, hp.clone(), device, None)?
        };
        let mut best = f64::INFINITY;
        for _ in 0..2 {
            let start = Instant::now();
            optim.optimize(&buffer, &mut ChaCha8Rng::seed_from_u64(1))?;
            best = best.min(start.elapsed().as_secs_f64());
        }
        timings.push((threads, best));
    }
    let fastest = timings.iter().map(|t| t.1).fold(f64::INFINITY, f64::min);
    let choice = timings.iter().find(|t| t.1 <= fastest * 1.05).map_or(1, |t| t.0);
    tch::set_num_threads(choice as i32);
    Ok((choice, timings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_every_thread_count_and_picks_one_of_them() {
        let spec = NetSpec::ff(8, 2, &[16, 16]);
        let hp = PpoConfig { batch_size: 64, ..PpoConfig::default() };
        let (choice, timings) = fastest_backprop_threads(&spec, &hp, Device::Cpu, 2).unwrap();
        assert_eq!(timings.iter().map(|t| t.0).collect::<Vec<_>>(), [1, 2]);
        assert!(timings.iter().all(|t| t.1.is_finite() && t.1 > 0.0), "{timings:?}");
        let fastest = timings.iter().map(|t| t.1).fold(f64::INFINITY, f64::min);
        let chosen = timings.iter().find(|t| t.0 == choice).unwrap();
        assert!(chosen.1 <= fastest * 1.05, "{choice} of {timings:?}");
        tch::set_num_threads(1);
    }
}
