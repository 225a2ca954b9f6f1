//! CSV tables of per-iteration scalars (`progress.csv`, `timing.csv`), one row per iteration,
//! and of the selections' cells (`selection.csv`), flushed after every write so a crashed run
//! keeps its history.

use std::fs::{File, OpenOptions};
use std::path::Path;

use anyhow::{Context, Result};

/// Opens a table's file for writing; it must not exist (a run's tables are never written over).
fn create_new(path: &Path) -> Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))
}

/// A CSV file of scalar columns, one row per iteration, flushed per row.
#[derive(Debug)]
pub struct ScalarTable {
    writer: csv::Writer<File>,
    columns: Vec<&'static str>,
}

impl ScalarTable {
    /// Creates a new table (the file must not exist) with a header row.
    pub fn create(path: &Path, columns: &[&'static str]) -> Result<Self> {
        let mut writer = csv::Writer::from_writer(create_new(path)?);
        writer.write_record(columns)?;
        writer.flush()?;
        Ok(Self { writer, columns: columns.to_vec() })
    }

    /// Writes one row; columns missing from `values` are left empty (e.g. `Test/Return` on
    /// iterations without evaluation).
    pub fn write(&mut self, values: &[(&str, f64)]) -> Result<()> {
        debug_assert!(
            values.iter().all(|(k, _)| self.columns.contains(k)),
            "a scalar without a column"
        );
        let row: Vec<String> = self
            .columns
            .iter()
            .map(|c| {
                values.iter().find(|(k, _)| k == c).map(|(_, v)| v.to_string()).unwrap_or_default()
            })
            .collect();
        self.writer.write_record(&row)?;
        self.writer.flush()?;
        Ok(())
    }
}

/// `selection.csv`: one row per cell of every selection (`--best-by tracking` or `cells`): the
/// iteration and its train steps, the physics model, the command, and the cell's score
/// (`crate::algos::tracking::CellScore`). Deterministic values only, so two runs with the
/// same seed write the same bytes. Why a table of its own: `Test/Cells Within` says how many
/// cells an evaluation met, not which; this says which, at every evaluation, without a check.
#[derive(Debug)]
pub struct SelectionTable {
    writer: csv::Writer<File>,
}

/// One row of [`SelectionTable`].
#[derive(Debug, serde::Serialize)]
pub struct SelectionRow<'a> {
    /// The evaluating iteration.
    pub iteration: u64,
    /// The train steps the evaluated weights had trained on.
    pub timesteps: u64,
    /// The physics model ([`crate::envs::Walking::eval_model_name`]).
    pub model: &'a str,
    /// The command's forward speed (m/s).
    pub x: f32,
    /// Its lateral speed (m/s).
    pub y: f32,
    /// Its turn (rad/s).
    pub turn: f32,
    /// The cell's episodes.
    pub episodes: usize,
    /// Those that fell or were cut.
    pub falls: usize,
    /// The worst episode's error in tolerances.
    pub worst_error: f64,
    /// 1: every episode within the task's bounds (`worst_error` at most 1), else 0.
    pub within: u8,
    /// The episodes' mean forward speed (m/s, commanded frame).
    pub forward: f64,
    /// Their mean lateral speed (m/s).
    pub lateral: f64,
    /// Their mean yaw rate (rad/s); empty for envs without one.
    pub yaw_rate: Option<f64>,
}

impl SelectionTable {
    /// Creates the table (the file must not exist); the header comes with the first row.
    pub fn create(path: &Path) -> Result<Self> {
        Ok(Self { writer: csv::Writer::from_writer(create_new(path)?) })
    }

    /// Writes one evaluation's cells, flushed.
    pub fn write(&mut self, rows: &[SelectionRow]) -> Result<()> {
        for row in rows {
            self.writer.serialize(row)?;
        }
        self.writer.flush()?;
        Ok(())
    }
}
