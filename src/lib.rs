//! gait: train legged robots to walk with PPO, in one typed binary.
//!
//! * [`algos`]: the trajectory buffer, sampler actors, `PpoOptim` and the training loop;
//! * [`envs`]: the `Env` trait, the registry and the environments;
//! * [`policies`]: Gaussian actors and critics on tch, with their observation normalizer;
//! * [`logging`]: run directories, experiment files, TensorBoard events, CSV tables.

pub mod algos;
pub mod bench;
pub mod cli;
pub mod config;
pub mod envs;
pub mod eval;
pub mod fsutil;
pub mod logging;
pub mod malloc_tuning;
pub mod plot;
pub mod policies;
pub mod replay;
