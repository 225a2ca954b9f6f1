//! Run directories and everything written into them: experiment files, TensorBoard events,
//! CSV scalar tables. Checkpoints are written by `policies::save_checkpoint`.

pub(crate) mod experiment;
pub(crate) mod metrics;
mod run_dir;
pub(crate) mod summary;
mod table;
pub(crate) mod tensorboard;

pub use experiment::{
    config_hash_name, load_previous, load_run, Experiment, NumberedWeights, EXPERIMENT_JSON,
    FORMAT as EXPERIMENT_FORMAT,
};

/// The files gait keeps in a run directory (besides `events.out.tfevents.*`): no output of a
/// command may be written over one of them (checked by `outputs`, for `gait eval --gif` and the other outputs).
pub const RUN_FILES: [&str; 13] = [
    "actor.safetensors",
    "actor_latest.safetensors",
    "critic.safetensors",
    "critic_latest.safetensors",
    "resume.safetensors",
    experiment::EXPERIMENT_JSON,
    experiment::EXPERIMENT_INFO,
    experiment::CONFIG_TOML,
    summary::SUMMARY_JSON,
    "progress.csv",
    "timing.csv",
    SELECTION_CSV,
    "training_error.safetensors",
];
/// The per-cell scores of a run's selections ([`SelectionTable`]).
pub const SELECTION_CSV: &str = "selection.csv";

pub use run_dir::{create_continuation_dir, create_run_dir};
pub use summary::{RunStatus, RunSummary};
pub use table::{ScalarTable, SelectionRow, SelectionTable};
pub use tensorboard::{read_events, EventWhat, EventWriter, ValueKind};
