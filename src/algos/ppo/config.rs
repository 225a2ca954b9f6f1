//! PPO's settings section, `[algo.ppo]`: one [`settings!`](macro@crate::settings) row per setting.
//! Defaults follow roadrunner (`algo/ppo.py:add_algo_args`), deviations documented on each row.

use crate::algos::catalog::AlgoSettings;
use crate::algos::symmetry::Mirroring;
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

impl PpoConfig {
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
