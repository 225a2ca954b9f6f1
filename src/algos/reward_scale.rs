//! The returns' running statistics, and the two ways a run uses them.
//!
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
//!
//! Value-target normalization (`--normalize-returns`), as Tianshou's PPO does it
//! (`rew_norm`): the critic predicts returns in units of σ, the running std of every GAE-λ
//! return so far; GAE runs on the raw rewards and `σ · value`, the critic's targets are the
//! returns divided by the σ its values were in, and the statistics then take the iteration's
//! raw returns. The advantages stay in the rewards' units. Tianshou updates the statistics
//! again at every recomputation of the advantages (each epoch's pass counts the same steps
//! again); here they are updated once per iteration and the critic keeps one σ for the whole
//! update, which weighs every step alike as Tianshou's repeated counts do.

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

    /// σ, the returns' std: √(var + ε); 1 before any step.
    pub fn std(&self) -> f64 {
        1.0 / self.scale()
    }

    /// `--normalize-returns`: computes `buffer`'s returns again with its values read in units
    /// of the σ so far ([`Buffer::rescale_values`]), then adds its raw GAE-λ returns to the
    /// statistics.
    pub fn normalize_buffer(&mut self, buffer: &mut Buffer) {
        buffer.rescale_values(self.std());
        let raw: Vec<f32> = buffer.raw_returns().map(|g| g as f32).collect();
        self.0.update(&raw);
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
    fn normalized_returns_are_raw_gae_over_the_old_std_and_the_stats_take_the_raw_returns() {
        let (gamma, lambda) = (0.9, 0.95);
        let trajs: [(&[f32], f32); 2] = [(&[1.0, 40.0, -2.0], 0.0), (&[3.0, 4.0], 0.7)];
        let raw = buffer(&trajs, gamma, lambda);
        let mut stats = ReturnStats::default();
        let mut b = raw.clone();
        stats.normalize_buffer(&mut b);
        // Before any step σ = 1: the returns are the raw ones, which the statistics now hold.
        assert_eq!(b.returns, raw.returns);
        assert_eq!(stats.0.count, 5.0);
        let sigma = stats.std();
        assert!(sigma > 1.0, "{sigma}");
        // Next iteration: values (0.1·t in the buffer) and the bootstrap read as multiples of
        // σ, GAE on raw rewards, targets divided by σ; advantages back in reward units.
        let mut b = raw.clone();
        stats.normalize_buffer(&mut b);
        let mut scaled = Vec::new();
        for (rewards, terminal) in trajs {
            let mut want = Buffer::new(1, 1, gamma, lambda);
            for (t, &r) in rewards.iter().enumerate() {
                want.push(&[0.0], &[0.0], r, (0.1 * t as f64 * sigma) as f32);
            }
            want.end_trajectory((terminal as f64 * sigma) as f32);
            scaled.extend(want.returns.iter().zip(&want.values).map(|(&g, &v)| (g, v)));
        }
        for (k, (&got, &(g, v))) in b.returns.iter().zip(&scaled).enumerate() {
            assert!((got as f64 - g as f64 / sigma).abs() < 1e-5, "return {k}");
            let adv = b.advantages()[k];
            assert!((adv - (g - v)).abs() < 1e-4, "advantage {k}: {adv} against {}", g - v);
        }
        assert_eq!(stats.0.count, 10.0);
        assert_eq!(b.ep_returns, raw.ep_returns);
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
