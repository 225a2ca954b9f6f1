//! Run directories and everything written into them: experiment files, TensorBoard events,
//! CSV scalar tables. Checkpoints are written by `policies::save_checkpoint`.

pub mod experiment;
pub mod metrics;
mod run_dir;
pub mod summary;
mod table;
pub mod tensorboard;

pub use experiment::{config_hash_name, load_previous, load_run, Experiment};
pub use run_dir::{create_continuation_dir, create_run_dir};
pub use summary::{RunStatus, RunSummary};
pub use table::ScalarTable;
pub use tensorboard::{read_events, EventWriter};
