//! `summary.json`: how a run ended, written once when `gait train` stops, whatever the reason.
//!
//! A finished run records its final evaluation; an interrupted one where it stopped; a failed
//! one the error. `gait eval` and `--previous` read it to explain a run directory that holds no
//! usable checkpoint (e.g. a run whose first update diverged), instead of a bare "file not
//! found".

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::fsutil::write_atomic;

pub const SUMMARY_JSON: &str = "summary.json";

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Reached `--timesteps`; the final weights were evaluated.
    Completed,
    /// Stopped by Ctrl-C/SIGTERM; the run dir holds the last complete iteration.
    Interrupted,
    /// Stopped at `--time-limit`; the run dir holds the last complete iteration.
    #[serde(rename = "time-limit")]
    TimeLimit,
    /// Stopped by an error; the run dir holds the last complete iteration, if any.
    Failed,
}

/// The contents of `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// How the run ended.
    pub status: RunStatus,
    /// Iterations completed and saved.
    pub iterations: u64,
    /// Train steps collected.
    pub total_timesteps: u64,
    /// Wall-clock seconds.
    pub elapsed_s: f64,
    /// `Test/Return` of the evaluation that chose the best-eval weights: the highest, or
    /// with `--best-by tracking` or `cells` the one of the best selection.
    pub best_test_return: Option<f64>,
    /// With `--best-by tracking` or `cells`, the best-eval weights' `Test/Tracking Error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_tracking_error: Option<f64>,
    /// With `--best-by tracking` or `cells`, the best-eval weights' `Test/Cells Within`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_cells_within: Option<u64>,
    /// Deterministic evaluation of the final weights (completed runs with `--num-eval-eps`).
    pub final_eval: Option<FinalEval>,
    /// The error that stopped a failed run.
    pub error: Option<String>,
}

/// The final evaluation of a completed run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinalEval {
    pub episodes: usize,
    pub mean_return: f64,
    pub mean_length: f64,
    /// Env speed metrics at the fixed eval commands (e.g. `Test/Forward Speed`).
    pub metrics: std::collections::BTreeMap<String, f64>,
}

impl RunSummary {
    /// Writes it to `dir/summary.json`, atomically.
    pub fn save(&self, dir: &Path) -> Result<()> {
        // serde_json writes NaN as null; every float here is finite or None anyway.
        let json = serde_json::to_string_pretty(self)?;
        write_atomic(&dir.join(SUMMARY_JSON), json.as_bytes())
    }

    /// The summary of a run directory, if it has a readable one.
    pub fn load(dir: &Path) -> Option<Self> {
        let text = crate::fsutil::read_text(&dir.join(SUMMARY_JSON)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Why a failed run left no usable state: `"; the run failed: ERROR"`, or empty.
    pub fn failure_note(dir: &Path) -> String {
        match Self::load(dir) {
            Some(Self { status: RunStatus::Failed, error: Some(e), iterations, .. }) => {
                format!("; the run failed after {iterations} complete iteration(s): {e}")
            }
            _ => String::new(),
        }
    }
}
