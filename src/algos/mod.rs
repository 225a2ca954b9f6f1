//! PPO: trajectory buffer, sampler actors, the optimizer, the runner and the training loop.

mod adam;
mod autotune;
mod buffer;
pub mod checkpoint;
pub mod interrupt;
mod ppo;
pub mod prenorm;
pub mod resources;
pub mod rollout;
pub mod runner;
pub mod sampler;
pub mod seeding;
pub mod symmetry;
pub mod tracking;
pub mod train;

pub use buffer::Buffer;
pub use ppo::{Batch, Losses, OptimStats, PpoOptim};
pub use sampler::{AlgoSampler, CollectRequest, Collected, PolicySnapshot, SamplerPool};
pub use tracking::EvalEpisode;
