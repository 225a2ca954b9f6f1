//! gait: train legged robots to walk with PPO, in one typed binary.
//!
//! The modules read top-down; only [`cli`] knows flags, and nothing below it imports it:
//! * [`cli`]: the command line, resolved into typed settings and options;
//! * [`settings`](mod@settings): each setting declared once (field, default, doc, range), for any section;
//! * [`config`]: `TrainConfig` (sections with defaults, per-env presets, TOML files);
//! * [`algos`]: the `Runner` and the training loop, sampler actors, the episode rollout, the
//!   trajectory buffer, `PpoOptim`, symmetry, checkpoints;
//! * [`envs`]: the `Env` trait, the registry and the environments;
//! * [`policies`]: Gaussian actors and critics on tch, with their observation normalizer;
//! * [`logging`]: run directories, experiment files, the metrics, TensorBoard events, CSV
//!   tables;
//! * [`eval`], [`play`], [`replay`], [`plot`], [`bench`](mod@bench): the other commands.

#![warn(missing_docs)]
// Functions stay under 80 lines (clippy.toml); the longer ones left are marked to be split.
#![warn(clippy::too_many_lines)]

pub mod algos;
pub mod bench;
pub mod check;
pub mod cli;
pub mod config;
pub mod course;
pub mod envs;
pub mod eval;
pub mod export;
pub(crate) mod fsutil;
pub mod logging;
pub mod malloc_tuning;
pub(crate) mod outputs;
pub mod play;
pub mod plot;
pub mod policies;
pub mod replay;
pub mod settings;
pub mod stdio;
