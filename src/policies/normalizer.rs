//! Observation normalizer: running mean/variance (Welford / Chan merge) stored as buffers
//! inside the network's `VarStore`, so it travels with every checkpoint and every parameter
//! broadcast.
//!
//! Deviation from the reference (roadrunner `Net.normalize_state`), on purpose: the reference
//! starts from `M2 = 1, n = 1` and aliases the old mean, giving `var = (1 + Σ(s - m_new)²)/(k+1)`.
//! Here the statistics are textbook: after `k` samples, `mean` and `var` are exactly the batch
//! mean and (population) variance. With no samples the normalizer is the identity.
//! `std` is floored at [`STD_FLOOR`] so constant inputs (e.g. a zero command) do not blow up.
//!
//! **Clipping.** With a clip `c` the normalized input is clamped to `[−c, c]` (rsl_rl and
//! Isaac Lab clip too, at 100 by default). gait's default is 5 (`--obs-clip`): an input whose
//! training distribution was (near) constant has a floored std, so a real reading of it
//! elsewhere arrives at thousands of σ (the lab model's shin spring read at up to 89 σ, its
//! speed at 3800 σ, and drove the actions to 30-200 rad); at 5 σ it cannot push the first
//! layer further than any ordinary 5 σ excursion, which for a Gaussian input is one reading in
//! 1.7 million.

use anyhow::{ensure, Result};
use tch::{nn, Kind, Tensor};

/// Smallest standard deviation used to scale an input.
pub const STD_FLOOR: f64 = 1e-3;

/// Plain-data running statistics (what prenormalization and `--update-norm` compute).
#[derive(Debug, Clone, PartialEq)]
pub struct RunningStats {
    /// Per-input mean.
    pub mean: Vec<f64>,
    /// Population variance.
    pub var: Vec<f64>,
    /// Samples seen.
    pub count: f64,
}

/// An input whose statistics an env fixes instead of measuring them
/// (`crate::envs::EnvSchedule::fixed_inputs`): what it reads is bounded and known, while a
/// prenormalization sees only what its first steps happened to meet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedInput {
    /// Its index in the observation.
    pub index: usize,
    /// The mean it is normalized by.
    pub mean: f64,
    /// The standard deviation it is normalized by (> 0).
    pub std: f64,
}

impl RunningStats {
    /// Sets the statistics of each of `fixed`'s inputs (one beyond the observation is left
    /// alone); the others are kept.
    pub fn fix(&mut self, fixed: &[FixedInput]) {
        for f in fixed {
            if let (Some(mean), Some(var)) = (self.mean.get_mut(f.index), self.var.get_mut(f.index))
            {
                (*mean, *var) = (f.mean, f.std * f.std);
            }
        }
    }

    /// Empty statistics for `dim` inputs.
    pub fn new(dim: usize) -> Self {
        Self { mean: vec![0.0; dim], var: vec![1.0; dim], count: 0.0 }
    }

    /// Merges a row-major batch of `rows.len() / dim` samples (Chan et al. parallel update).
    pub fn update(&mut self, rows: &[f32]) {
        let dim = self.mean.len();
        let n = (rows.len() / dim) as f64;
        if n == 0.0 {
            return;
        }
        let mut b_mean = vec![0.0f64; dim];
        for row in rows.chunks_exact(dim) {
            for (m, &x) in b_mean.iter_mut().zip(row) {
                *m += x as f64;
            }
        }
        b_mean.iter_mut().for_each(|m| *m /= n);
        let mut b_m2 = vec![0.0f64; dim];
        for row in rows.chunks_exact(dim) {
            for ((m2, &x), &m) in b_m2.iter_mut().zip(row).zip(&b_mean) {
                let d = x as f64 - m;
                *m2 += d * d;
            }
        }
        let total = self.count + n;
        for i in 0..dim {
            let a_m2 = if self.count > 0.0 { self.var[i] * self.count } else { 0.0 };
            let delta = b_mean[i] - self.mean[i];
            let mean = self.mean[i] + delta * n / total;
            let m2 = a_m2 + b_m2[i] + delta * delta * self.count * n / total;
            self.mean[i] = if self.count > 0.0 { mean } else { b_mean[i] };
            self.var[i] = m2 / total;
        }
        self.count = total;
    }
}

/// The normalizer buffers of one network: `obs_norm.mean`, `obs_norm.std` (f32, used in the
/// forward pass) and `obs_norm.count` (f64).
#[derive(Debug)]
pub struct Normalizer {
    mean: Tensor,
    std: Tensor,
    count: Tensor,
    clip: Option<f64>,
}

impl Normalizer {
    /// A normalizer of `dim` inputs under `path` (mean 0, std 1 until filled), clipping at ±`clip`.
    pub fn new(path: &nn::Path, dim: usize, clip: Option<f32>) -> Self {
        let p = path.sub("obs_norm");
        let dim = dim as i64;
        let mean = p.zeros_no_train("mean", &[dim]);
        let std = p.ones_no_train("std", &[dim]);
        let count = p.add("count", Tensor::zeros([1], (Kind::Double, p.device())), false);
        Self { mean, std, count, clip: clip.map(f64::from) }
    }

    /// `(x - mean) / std`, clamped to ±clip when there is one; broadcasts over leading dims.
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let z = (x - &self.mean) / &self.std;
        match self.clip {
            Some(c) => z.clamp(-c, c),
            None => z,
        }
    }

    /// Its mean, std and clip, for a copy that normalizes without libtorch
    /// ([`super::fast::FastActor`]).
    pub(super) fn parts(&self) -> (&Tensor, &Tensor, Option<f64>) {
        (&self.mean, &self.std, self.clip)
    }

    /// The share of the values of the row-major `rows` that its forward pass clips (beyond
    /// ±clip after normalizing with the statistics it holds now); `None` without a clip.
    pub fn clipped_share(&self, rows: &[f32]) -> Option<f64> {
        let clip = self.clip? as f32;
        let (mean, std) = (to_f32_vec(&self.mean), to_f32_vec(&self.std));
        if rows.is_empty() {
            return Some(0.0);
        }
        let clipped: usize = rows
            .chunks_exact(mean.len())
            .map(|row| {
                row.iter()
                    .zip(mean.iter().zip(&std))
                    .filter(|(&x, (&m, &s))| ((x - m) / s).abs() > clip)
                    .count()
            })
            .sum();
        Some(clipped as f64 / rows.len() as f64)
    }

    /// Its statistics.
    pub fn stats(&self) -> RunningStats {
        let mean: Vec<f64> = to_f64_vec(&self.mean);
        let var = to_f64_vec(&self.std).iter().map(|s| s * s).collect();
        let count = to_f64_vec(&self.count)[0];
        RunningStats { mean, var, count }
    }

    /// Sets its statistics (refused when sizes differ or a value is not finite).
    pub fn set_stats(&mut self, stats: &RunningStats) -> Result<()> {
        let dim = self.mean.size()[0] as usize;
        ensure!(
            stats.mean.len() == dim && stats.var.len() == dim,
            "normalizer statistics have {} entries, the network expects {dim}",
            stats.mean.len()
        );
        ensure!(
            stats.mean.iter().chain(&stats.var).all(|v| v.is_finite()) && stats.count.is_finite(),
            "normalizer statistics hold a NaN or infinity (count {})",
            stats.count
        );
        let device = self.mean.device();
        let std: Vec<f32> = if stats.count > 0.0 {
            stats.var.iter().map(|v| (v.sqrt()).max(STD_FLOOR) as f32).collect()
        } else {
            vec![1.0; dim]
        };
        let mean: Vec<f32> = stats.mean.iter().map(|&m| m as f32).collect();
        tch::no_grad(|| {
            self.mean.copy_(&Tensor::from_slice(&mean).to_device(device));
            self.std.copy_(&Tensor::from_slice(&std).to_device(device));
            self.count.copy_(&Tensor::from_slice(&[stats.count]).to_device(device));
        });
        Ok(())
    }
}

pub(crate) fn to_f64_vec(t: &Tensor) -> Vec<f64> {
    let t = t.to_device(tch::Device::Cpu).to_kind(Kind::Double).flatten(0, -1);
    Vec::<f64>::try_from(&t).expect("a CPU double tensor converts to Vec<f64>")
}

/// `t`'s values as `f32`, flattened (the float twin of [`to_f64_vec`]).
pub(crate) fn to_f32_vec(t: &Tensor) -> Vec<f32> {
    let t = t.to_device(tch::Device::Cpu).to_kind(Kind::Float).flatten(0, -1);
    Vec::<f32>::try_from(&t).expect("a CPU float tensor converts to Vec<f32>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_stats_equal_batch_mean_and_variance() {
        let data: Vec<f32> = (0..300).map(|i| ((i * 37 % 101) as f32).sin() * 3.0 + 1.0).collect();
        let dim = 3;
        let mut stats = RunningStats::new(dim);
        // Uneven chunks, including single rows, must give the same result as one batch.
        for chunk in [&data[..3], &data[3..60], &data[60..63], &data[63..]] {
            stats.update(chunk);
        }
        assert_eq!(stats.count, 100.0);
        for d in 0..dim {
            let col: Vec<f64> = data.iter().skip(d).step_by(dim).map(|&x| x as f64).collect();
            let mean = col.iter().sum::<f64>() / 100.0;
            let var = col.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 100.0;
            assert!((stats.mean[d] - mean).abs() < 1e-9, "mean {d}");
            assert!((stats.var[d] - var).abs() < 1e-9, "var {d}");
        }
    }

    #[test]
    fn fixed_inputs_keep_their_statistics_and_the_others_are_untouched() {
        let mut stats = RunningStats::new(3);
        stats.update(&[1.0, 2.0, 3.0, 3.0, 6.0, 9.0]);
        let before = stats.clone();
        let fixed = [FixedInput { index: 1, mean: 1.0, std: 0.2 }];
        stats.fix(&fixed);
        assert_eq!((stats.mean[1], stats.var[1]), (1.0, 0.2 * 0.2));
        assert_eq!((stats.mean[0], stats.var[0]), (before.mean[0], before.var[0]));
        assert_eq!((stats.mean[2], stats.var[2]), (before.mean[2], before.var[2]));
        // An index beyond the observation is ignored, not a panic.
        stats.fix(&[FixedInput { index: 3, mean: 0.0, std: 1.0 }]);
        assert_eq!(stats.mean.len(), 3);
    }

    #[test]
    fn normalizer_is_identity_until_updated_then_standardizes() {
        let vs = nn::VarStore::new(tch::Device::Cpu);
        let mut norm = Normalizer::new(&vs.root(), 2, None);
        let x = Tensor::from_slice(&[3.0f32, -4.0]);
        assert_eq!(Vec::<f32>::try_from(norm.forward(&x)).unwrap(), vec![3.0, -4.0]);
        let mut stats = RunningStats::new(2);
        stats.update(&[1.0, 10.0, 3.0, 10.0]);
        norm.set_stats(&stats).unwrap();
        let y = Vec::<f32>::try_from(norm.forward(&x)).unwrap();
        // mean (2, 10), std (1, floor) -> ((3-2)/1, (-4-10)/1e-3)
        assert!((y[0] - 1.0).abs() < 1e-6);
        assert!((y[1] + 14.0 / STD_FLOOR as f32).abs() < 1e-2);
        assert_eq!(norm.stats().count, 2.0);
    }

    /// The clipped share counts the values beyond ±clip σ under the statistics held, none
    /// without a clip.
    #[test]
    fn the_clipped_share_counts_values_beyond_the_clip() {
        let vs = nn::VarStore::new(tch::Device::Cpu);
        let mut stats = RunningStats::new(2);
        stats.update(&[-1.0, 0.0, 1.0, 0.0]); // mean (0, 0), std (1, floor)
        let mut clipped = Normalizer::new(&vs.root(), 2, Some(5.0));
        clipped.set_stats(&stats).unwrap();
        let rows = [0.5, 0.0, 6.0, 0.0, -5.5, 0.01, 4.9, -0.001];
        assert_eq!(clipped.clipped_share(&rows), Some(3.0 / 8.0));
        let mut open = Normalizer::new(&vs.root(), 2, None);
        open.set_stats(&stats).unwrap();
        assert_eq!(open.clipped_share(&rows), None);
    }
}
