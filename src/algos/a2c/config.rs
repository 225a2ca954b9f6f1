//! A2C's settings section, `[algo.a2c]`: one [`settings!`](macro@crate::settings) row per setting.

use crate::algos::catalog::AlgoSettings;
use crate::settings::Range;

crate::settings! {
    /// A2C's hyperparameters (`gait train a2c`): the synchronous advantage actor-critic of
    /// pytorch-a2c-ppo-acktr, one RMSprop step per iteration on the whole batch, advantages as
    /// GAE computes them. Defaults are its (and OpenAI baselines').
    #[serde(deny_unknown_fields)]
    pub struct A2cConfig("A2C") {
        /// RMSprop learning rate, actor and critic.
        lr: f64 = 7e-4, Range::Positive;
        /// The learning rate falls linearly with the run's steps to (1 − this) of `lr` at
        /// `--timesteps` (0: constant).
        lr_decay: f64 = 0.0, Range::Unit;
        /// RMSprop smoothing constant α.
        alpha: f64 = 0.99, Range::Unit;
        /// RMSprop ε.
        eps: f64 = 1e-5, Range::Positive;
        /// Entropy bonus coefficient.
        entropy_coeff: f64 = 0.01, Range::NonNegativeF32;
        /// Value-loss coefficient: the critic's loss is this × mean squared error.
        value_coeff: f64 = 0.5, Range::PositiveF32;
        /// Max gradient L2 norm, per network.
        grad_clip: f64 = 0.5, Range::PositiveF32;
        /// Normalize the advantages over the batch (mean 0, std 1), as PPO does; off in the
        /// reference, as Stable-Baselines3's `normalize_advantage` is by default.
        normalize_advantages: bool = false;
    }
}

/// No mirror settings: A2C trains without a mirror loss.
impl AlgoSettings for A2cConfig {}
