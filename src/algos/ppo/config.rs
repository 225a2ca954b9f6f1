//! PPO's settings section, `[algo.ppo]`: one [`settings!`](macro@crate::settings) row per setting.
//! Defaults follow roadrunner (`algo/ppo.py:add_algo_args`), deviations documented on each row.

use crate::algos::catalog::AlgoSettings;
use crate::algos::symmetry::Mirroring;
use crate::policies::Arch;
use crate::settings::Range;

crate::settings! {
    /// PPO's hyperparameters (`gait train ppo`).
    #[serde(deny_unknown_fields)]
    pub struct PpoConfig("PPO") {
        /// Actor Adam learning rate.
        a_lr: f64 = 1e-4, Range::Positive;
        /// Critic Adam learning rate.
        c_lr: f64 = 1e-4, Range::Positive;
        /// Both learning rates fall linearly with the run's steps, from `a_lr`/`c_lr` at step 0
        /// to (1 − this) of them at `--timesteps` (0: constant). Why: under Cassie's
        /// perturbations the speed at a command drifted between snapshots; smaller late steps
        /// keep what was learned (D-018). A continuation with a larger `--timesteps` stretches
        /// the schedule: its rate is the one of its own step count and target.
        #[serde(default)]
        lr_decay: f64 = 0.0, Range::Unit;
        /// Adam epsilon (both optimizers).
        eps: f64 = 1e-6, Range::Positive;
        /// KL(new‖old) threshold for early stopping the update.
        kl: f64 = 0.02, Range::Positive;
        /// Entropy bonus coefficient.
        entropy_coeff: f64 = 0.0, Range::NonNegativeF32;
        /// Ratio clip ε.
        clip: f64 = 0.2, Range::PositiveF32;
        /// Value-loss clipping (PPO2's, and cleanrl's `clip_vloss`): the critic's loss is the
        /// larger of its squared error and that of its new value moved at most this far from
        /// its value at collection (0: plain squared error).
        #[serde(default)]
        value_clip: f64 = 0.0, Range::NonNegativeF32;
        /// Advantages standardized over the iteration's buffer (mean 0, std 1) before the
        /// surrogate, as roadrunner and cleanrl do; `false` keeps them in reward units, as
        /// Tianshou's MuJoCo PPO (`norm_adv=0`) does.
        #[serde(default = "advantages_normalized")]
        normalize_advantages: bool = true;
        /// Before every pass over the buffer but the first, the critic values the buffer's
        /// states and trajectory ends again and the returns and advantages are computed anew
        /// (Andrychowicz et al. 2021, §3.5; Tianshou's `recompute_adv`). Feed-forward nets
        /// without `--mirror-augment` only.
        #[serde(default)]
        recompute_advantages: bool = false;
        /// Coefficient of a penalty on the action mean beyond ±1.1, squared and summed over the
        /// action (rl_games' bounds loss; 0 disables). Why: where an env clips actions, a
        /// mean past the bound gets no gradient back from the clipped samples and drifts.
        #[serde(default)]
        bound_loss: f64 = 0.0, Range::NonNegativeF32;
        /// Max gradient L2 norm, per network.
        grad_clip: f64 = 0.05, Range::PositiveF32;
        /// Minibatch size: states for a feed-forward net; whole trajectories for an LSTM (an
        /// iteration holds about `num_steps / traj_len` of them, more with early ends).
        batch_size: usize = 64, Range::Count;
        /// Passes over the buffer per iteration.
        epochs: usize = 3, Range::Count;
        /// Mirror-loss coefficient (0 disables). A float, unlike the reference's int flag;
        /// default 0 (the reference's is 1) so envs without mirror lists train as they are.
        mirror: f64 = 0.0, Range::NonNegativeF32;
        /// Mirror data augmentation: mirrored copies of the states/actions join every minibatch
        /// (needs the env's mirror lists; combinable with --mirror).
        mirror_augment: bool = false;
    }
}

/// The default of `normalize_advantages` for configs saved before the setting existed.
fn advantages_normalized() -> bool {
    true
}

impl PpoConfig {
    /// Why `recompute_advantages` cannot run with these settings and a net of `arch`, if it
    /// cannot: it values the flat buffer, which recurrent minibatches and mirrored copies do
    /// not use.
    pub fn recompute_conflict(&self, arch: Arch) -> Option<String> {
        let other = match (arch, self.mirror_augment) {
            _ if !self.recompute_advantages => return None,
            (Arch::Lstm, _) => "a recurrent net (--arch lstm)",
            (_, true) => "--mirror-augment",
            _ => return None,
        };
        Some(format!(
            "--recompute-advantages works with feed-forward nets without --mirror-augment \
             (this run has {other})"
        ))
    }

    /// Whether the networks see mirrored states (mirror loss or augmentation).
    pub fn uses_mirror(&self) -> bool {
        self.mirror > 0.0 || self.mirror_augment
    }
}

impl AlgoSettings for PpoConfig {
    fn mirroring(&self) -> Mirroring {
        Mirroring { mirror: self.mirror, mirror_augment: self.mirror_augment }
    }
}
