//! Reward scaling by a running std of the discounted return (`--scale-rewards`), as
//! Gymnasium's `NormalizeReward` and Stable-Baselines3's `VecNormalize` do it: each step's
//! reward is divided by the std of `G_t = γ G_{t−1} + r_t` (restarted with every episode) over
//! every train step so far, then clipped to ±[`REWARD_CLIP`].
//!
//! Those wrappers update the statistics step by step as each env steps, so their scale
//! depends on how envs interleave. Here the learner updates them once per iteration, from the
//! iteration's buffer in trajectory order (the order every transport assembles, whatever the
//! worker or rank count), and rescales that buffer's returns before the update: the same seed
//! gives the same numbers on any number of workers, and the statistics live in the resume
//! state so a resumed run scales as an uninterrupted one.

use super::buffer::Buffer;
use crate::policies::RunningStats;

/// The scaled reward's bound, the wrappers' default `clip_reward`.
pub const REWARD_CLIP: f64 = 10.0;

/// The wrappers' ε under the square root.
const EPSILON: f64 = 1e-8;

/// The mean and population variance of every discounted return seen: the observation
/// normalizer's [`RunningStats`] with one input, merged batch by batch as `RunningMeanStd` is.
#[derive(Debug, Clone, PartialEq)]
pub struct ReturnStats(pub RunningStats);

impl Default for ReturnStats {
    fn default() -> Self {
        Self(RunningStats::new(1))
    }
}

impl ReturnStats {
    /// Adds the discounted returns of every step of `buffer`'s finished trajectories.
    pub fn update(&mut self, buffer: &Buffer, discount: f64) {
        let mut returns = Vec::with_capacity(buffer.len());
        for k in 0..buffer.num_trajs() {
            let mut g = 0.0f64;
            for &r in &buffer.rewards[buffer.traj_idx[k]..buffer.traj_idx[k + 1]] {
                g = discount * g + r as f64;
                returns.push(g as f32);
            }
        }
        self.0.update(&returns);
    }

    /// The factor rewards are multiplied by: 1/√(var + ε); 1 before any step.
    pub fn scale(&self) -> f64 {
        if self.0.count < 1.0 {
            return 1.0;
        }
        1.0 / (self.0.var[0] + EPSILON).sqrt()
    }

    /// Adds `buffer`'s returns to the statistics, then computes its returns again from scaled
    /// rewards ([`Buffer::rescale_rewards`]).
    pub fn scale_buffer(&mut self, buffer: &mut Buffer, discount: f64) {
        self.update(buffer, discount);
        buffer.rescale_rewards(self.scale(), REWARD_CLIP);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(trajs: &[(&[f32], f32)], discount: f64, lambda: f64) -> Buffer {
        let mut b = Buffer::new(1, 1, discount, lambda);
        for (rewards, terminal) in trajs {
            for (t, &r) in rewards.iter().enumerate() {
                b.push(&[t as f32], &[0.0], r, 0.1 * t as f32);
            }
            b.end_trajectory(*terminal);
        }
        b
    }

    #[test]
    fn the_statistics_are_those_of_the_discounted_returns_restarted_per_episode() {
        let b = buffer(&[(&[1.0, 2.0], 0.0), (&[3.0], 0.5)], 0.5, 0.9);
        let mut stats = ReturnStats::default();
        assert_eq!(stats.scale(), 1.0);
        stats.update(&b, 0.5);
        // G = [1, 0.5·1 + 2 = 2.5] and [3]: mean 13/6, population variance of the three.
        let g = [1.0f64, 2.5, 3.0];
        let mean = g.iter().sum::<f64>() / 3.0;
        let var = g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 3.0;
        let got = &stats.0;
        assert!((got.mean[0] - mean).abs() < 1e-12 && (got.var[0] - var).abs() < 1e-12);
        assert_eq!(got.count, 3.0);
        assert!((stats.scale() - 1.0 / (var + EPSILON).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn rescaling_recomputes_the_returns_from_scaled_clipped_rewards_and_keeps_the_raw_ones() {
        let raw = buffer(&[(&[1.0, 40.0, -2.0], 0.0), (&[3.0, 4.0], 0.7)], 0.9, 0.95);
        let mut b = raw.clone();
        b.rescale_rewards(0.5, REWARD_CLIP);
        // The same buffer built from the scaled, clipped rewards (40 · 0.5 = 20 → 10).
        let mut want = buffer(&[(&[0.5, 10.0, -1.0], 0.0), (&[1.5, 2.0], 0.7)], 0.9, 0.95);
        assert_eq!(b.returns, want.returns);
        assert_eq!((&b.rewards, &b.ep_returns), (&raw.rewards, &raw.ep_returns));
        // Scale 1 without clipping reproduces the buffer as collected.
        want = raw.clone();
        want.rescale_rewards(1.0, f64::INFINITY);
        assert_eq!(want.returns, raw.returns);
    }
}
