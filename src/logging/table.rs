//! CSV tables of per-iteration scalars (`progress.csv`, `timing.csv`), one row per iteration,
//! flushed after every row so a crashed run keeps its history.

use std::fs::{File, OpenOptions};
use std::path::Path;

use anyhow::{Context, Result};

/// A CSV file of scalar columns, one row per iteration, flushed per row.
#[derive(Debug)]
pub struct ScalarTable {
    writer: csv::Writer<File>,
    columns: Vec<&'static str>,
}

impl ScalarTable {
    /// Creates a new table (the file must not exist) with a header row.
    pub fn create(path: &Path, columns: &[&'static str]) -> Result<Self> {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .with_context(|| format!("creating {}", path.display()))?;
        let mut writer = csv::Writer::from_writer(file);
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
