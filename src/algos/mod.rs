//! Learning: the algorithms (one row each in `catalog.rs`; PPO, A2C), trajectory buffer, sampler
//! actors, the runner and the training loop.

pub mod a2c;
mod adam;
pub mod algorithm;
mod autotune;
mod batch;
mod buffer;
pub mod catalog;
pub(crate) mod checkpoint;
mod flat_params;
mod grow;
pub mod interrupt;
mod ppo;
pub(crate) mod prenorm;
pub(crate) mod resources;
mod reward_scale;
mod rmsprop;
pub(crate) mod rollout;
pub mod runner;
pub(crate) mod sampler;
pub(crate) mod seeding;
mod selection;
mod setup;
pub use setup::SetupEvents;
pub(crate) mod symmetry;
pub(crate) mod tracking;
pub mod train;

pub use algorithm::Algorithm;
pub use buffer::Buffer;
pub use ppo::{Batch, Losses, OptimStats, PpoConfig, PpoOptim};
pub use resources::{available_cores, resolve_device};
#[cfg(feature = "mpi")]
pub use sampler::mpi;
pub use sampler::{
    local_sampler, AlgoSampler, Collect, CollectRequest, Collected, LocalSampler, MakeSampler,
    PolicySnapshot, SamplerPool,
};
pub use symmetry::Symmetry;
pub use tracking::EvalEpisode;
