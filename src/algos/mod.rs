//! PPO: trajectory buffer, sampler actors, the optimizer and the training loop.

mod adam;
mod buffer;
pub mod interrupt;
mod ppo;
pub mod prenorm;
pub mod resume;
pub mod sampler;
pub mod seeding;
pub mod tracking;
pub mod train;

pub use buffer::Buffer;
pub use ppo::{Batch, Losses, OptimStats, PPOOptim, PpoHyper};
pub use sampler::{AlgoSampler, CollectRequest, Collected, PolicySnapshot, SamplerPool};
pub use tracking::EvalEpisode;
