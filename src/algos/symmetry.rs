//! Left-right symmetry in one place (rsl_rl's `extensions/symmetry.py`): which mirror lists a
//! run uses, the mirror tensors of the optimizer, the mirror error behind the mirror loss
//! (`PpoOptim::losses` weighs it: coefficient × 4 × its masked mean), mirror data
//! augmentation, and the mirror-symmetric normalizer statistics.

use tch::{Device, Kind, Tensor};

use crate::envs::{Env, MirrorIndices};
use crate::policies::{Actor, RunningStats};
use crate::settings::UsageError;

/// The mirror settings of a run's algorithm, what a [`Symmetry`] is built for: the mirror
/// loss's coefficient and whether mirrored copies augment the batch (PPO's `--mirror`,
/// `--mirror-augment`; none for A2C).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Mirroring {
    /// The mirror loss's coefficient (0: none).
    pub mirror: f64,
    /// Mirrored copies of every step join the batch.
    pub mirror_augment: bool,
}

/// The mirror lists of a run that uses them (mirror loss or augmentation): observations,
/// actions and, for an env whose critic has its own observation, that one's.
#[derive(Debug, Clone)]
pub struct Symmetry {
    obs: MirrorIndices,
    act: MirrorIndices,
    critic: Option<MirrorIndices>,
}

impl Symmetry {
    /// The lists of an env whose critic reads the policy's observation.
    pub fn new(obs: MirrorIndices, act: MirrorIndices) -> Self {
        Self { obs, act, critic: None }
    }

    /// The same, with the mirror list of the critic's own observation.
    pub fn with_critic(self, critic: MirrorIndices) -> Self {
        Self { critic: Some(critic), ..self }
    }

    /// The env's lists when `ppo` uses them; a mirror setting with an env that has no lists is
    /// a usage error, and so is mirror augmentation for an env whose critic observation has
    /// none.
    pub fn for_env(
        env: &dyn Env,
        mirroring: Mirroring,
        name: &str,
    ) -> Result<Option<Self>, UsageError> {
        let ppo = mirroring;
        let lists =
            env.mirror().map(|m| (m.observation_mirror_indices(), m.action_mirror_indices()));
        let symmetry = match lists.unwrap_or((None, None)) {
            (Some(obs), Some(act)) if ppo.mirror > 0.0 || ppo.mirror_augment => Self::new(obs, act),
            (Some(_), Some(_)) => return Ok(None),
            _ if ppo.mirror > 0.0 => {
                return Err(UsageError(format!(
                    "--mirror {} needs mirror lists, and env '{name}' has none (use --mirror 0)",
                    ppo.mirror
                )))
            }
            _ if ppo.mirror_augment => {
                return Err(UsageError(format!(
                    "--mirror-augment needs mirror lists, and env '{name}' has none"
                )))
            }
            _ => return Ok(None),
        };
        match env.mirror().and_then(|m| m.critic_observation_mirror_indices()) {
            Some(critic) => Ok(Some(symmetry.with_critic(critic))),
            None if ppo.mirror_augment && env.critic().is_some() => Err(UsageError(format!(
                "--mirror-augment needs a mirror list for the critic's observation, and \
                     env '{name}' has none"
            ))),
            None => Ok(Some(symmetry)),
        }
    }

    /// The observation and action lists.
    pub fn lists(&self) -> (&MirrorIndices, &MirrorIndices) {
        (&self.obs, &self.act)
    }

    /// The critic observation's list, when the critic has its own observation.
    pub fn critic(&self) -> Option<&MirrorIndices> {
        self.critic.as_ref()
    }

    /// With a symmetry, the networks see mirrored states, so the normalizer's statistics are
    /// made mirror-symmetric (the statistics of the data together with its mirror image);
    /// without one they pass through.
    pub fn symmetrize(symmetry: Option<&Self>, stats: RunningStats) -> RunningStats {
        match symmetry {
            Some(s) => symmetrized(&stats, &s.obs),
            None => stats,
        }
    }

    /// [`Symmetry::symmetrize`] for the statistics of the critic's own observation (passed
    /// through without its list).
    pub fn symmetrize_critic(symmetry: Option<&Self>, stats: RunningStats) -> RunningStats {
        match symmetry.and_then(Self::critic) {
            Some(list) => symmetrized(&stats, list),
            None => stats,
        }
    }
}

/// The statistics of the data together with its mirror image (`mirror` = the observation
/// mirror list): exactly what [`RunningStats::update`] would give after seeing every sample
/// and its mirrored copy.
///
/// Why: with mirror losses the network sees mirrored states, and statistics from one side
/// only can put them far outside the normalized range. Cassie's period shifts, for example,
/// are the constants [0, 0.5]: their std is floored at 1e-3, and the mirrored state (shifts
/// [0.5, 0]) would reach the network as ±500. Symmetric statistics make the normalizer commute
/// with the mirror, as the robot does.
pub fn symmetrized(stats: &RunningStats, mirror: &MirrorIndices) -> RunningStats {
    let (src, sign) = (mirror.source(), mirror.sign());
    let mut out = stats.clone();
    for i in 0..stats.mean.len() {
        let mirrored = sign[i] as f64 * stats.mean[src[i]];
        out.mean[i] = 0.5 * (stats.mean[i] + mirrored);
        let half_gap = 0.5 * (stats.mean[i] - mirrored);
        out.var[i] = 0.5 * (stats.var[i] + stats.var[src[i]]) + half_gap * half_gap;
    }
    out
}

/// Mirror lists as index/sign tensors on the optimizer's device.
pub struct MirrorTensors {
    obs_src: Tensor,
    obs_sign: Tensor,
    act_src: Tensor,
    act_sign: Tensor,
    /// The critic observation's list, when it has its own.
    critic: Option<(Tensor, Tensor)>,
}

impl MirrorTensors {
    pub fn new(symmetry: &Symmetry, device: Device) -> Self {
        let idx = |m: &MirrorIndices| {
            let v: Vec<i64> = m.source().iter().map(|&i| i as i64).collect();
            (
                Tensor::from_slice(&v).to_device(device),
                Tensor::from_slice(m.sign()).to_device(device),
            )
        };
        let ((obs_src, obs_sign), (act_src, act_sign)) = (idx(&symmetry.obs), idx(&symmetry.act));
        let critic = symmetry.critic.as_ref().map(idx);
        Self { obs_src, obs_sign, act_src, act_sign, critic }
    }

    /// Mirrored critic observations: with the critic's own list, or the observation list when
    /// the critic reads the policy's observation.
    pub fn critic_obs(&self, x: &Tensor) -> Tensor {
        match &self.critic {
            Some((src, sign)) => x.index_select(-1, src) * sign,
            None => self.obs(x),
        }
    }

    /// Mirrored observations (last dimension).
    pub fn obs(&self, x: &Tensor) -> Tensor {
        x.index_select(-1, &self.obs_src) * &self.obs_sign
    }

    /// Mirrored actions (last dimension).
    pub fn act(&self, x: &Tensor) -> Tensor {
        x.index_select(-1, &self.act_src) * &self.act_sign
    }

    /// Per-step mirror error `mean_a (μ(s) − M_a(μ(M_s(s))))²`, shape `[.., 1]`, from the
    /// actor's means at the states (`mean`) and the mirrored states; the target is detached.
    /// Recurrent: the whole mirrored trajectories run through the network.
    pub fn error(&self, actor: &Actor, mean: &Tensor, mirror_states: &Tensor) -> Tensor {
        let target = tch::no_grad(|| self.act(&actor.mean(mirror_states)));
        let dims = mean.size().last().copied().unwrap_or(1) as f64;
        (mean - target).square().sum_dim_intlist(-1, true, Kind::Float) / dims
    }

    /// Mirror data augmentation: `[states, actions, returns, advantages, mask]` with the
    /// mirrored copy of every state/action appended (along the batch dimension, 1 for
    /// time-major recurrent batches), with the same returns, advantages and mask.
    pub fn augment(&self, [s, a, r, adv, mask]: [Tensor; 5], recurrent: bool) -> [Tensor; 5] {
        let dim = if recurrent { 1 } else { 0 };
        let cat = |x: &Tensor, y: Tensor| Tensor::cat(&[x, &y], dim);
        [
            cat(&s, self.obs(&s)),
            cat(&a, self.act(&a)),
            cat(&r, r.shallow_clone()),
            cat(&adv, adv.shallow_clone()),
            cat(&mask, mask.shallow_clone()),
        ]
    }

    /// [`MirrorTensors::augment`] for the critic's own observations.
    pub fn augment_critic(&self, c: Tensor, recurrent: bool) -> Tensor {
        Tensor::cat(&[&c, &self.critic_obs(&c)], if recurrent { 1 } else { 0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetrized_stats_equal_the_stats_of_data_plus_its_mirror() {
        let mirror = crate::envs::MirrorIndices::new(&[1.0, 0.1, -2.0]).unwrap();
        let rows: Vec<f32> = vec![1.0, 5.0, 2.0, 3.0, 4.0, -1.0, 0.5, 0.0, 7.0];
        let mut data = RunningStats::new(3);
        data.update(&rows);
        let mut both = RunningStats::new(3);
        both.update(&rows);
        both.update(&mirror.apply_rows(&rows));
        let sym = symmetrized(&data, &mirror);
        for i in 0..3 {
            assert!((sym.mean[i] - both.mean[i]).abs() < 1e-9, "{sym:?} vs {both:?}");
            assert!((sym.var[i] - both.var[i]).abs() < 1e-9, "{sym:?} vs {both:?}");
        }
        assert!(sym.mean[2].abs() < 1e-12, "a negated self-mirrored input has mean 0");
    }
}
