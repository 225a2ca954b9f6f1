//! Run directories: `logdir/<env>/<run name or args hash>/<timestamp>/`.
//!
//! Unlike the reference (minute-resolution names, `exist_ok=True`, a first run without a
//! timestamp), every run gets its own fresh directory: the timestamp has seconds, and the leaf is
//! created with `create_dir`, which fails rather than reuse an existing one (a `-2`, `-3`, ...
//! suffix is tried next). Nothing in an earlier run directory is ever opened for writing.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Creates and returns a new, empty run directory.
pub fn create_run_dir(logdir: &Path, env: &str, run: &str) -> Result<PathBuf> {
    let parent = logdir.join(env).join(run);
    fs::create_dir_all(&parent).with_context(|| {
        format!("cannot create the run directory under --logdir {}", logdir.display())
    })?;
    let stamp = chrono::Local::now().format("%Y-%m-%d_%H-%M-%S").to_string();
    create_unique(&parent, &stamp)
}

/// Creates the directory for a run continued from `previous`, named
/// `<previous name>-cont-<timestamp>` (the reference's scheme): beside `previous`, or inside
/// `under` when given (a `--logdir` typed with `--previous`). `previous` is never written.
pub fn create_continuation_dir(previous: &Path, under: Option<&Path>) -> Result<PathBuf> {
    let previous = previous
        .canonicalize()
        .with_context(|| format!("resolving --previous {}", previous.display()))?;
    let (Some(parent), Some(leaf)) = (previous.parent(), previous.file_name()) else {
        anyhow::bail!("--previous {} has no parent directory", previous.display());
    };
    let parent = match under {
        Some(dir) => {
            fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the run directory {}", dir.display()))?;
            dir
        }
        None => parent,
    };
    let stamp = chrono::Local::now().format("%Y-%m-%d_%H-%M-%S");
    create_unique(parent, &format!("{}-cont-{stamp}", leaf.to_string_lossy()))
}

/// Creates `parent/base`, or `parent/base-2`, `-3`, ... if taken; never reuses a directory.
fn create_unique(parent: &Path, base: &str) -> Result<PathBuf> {
    for n in 1.. {
        let name = if n == 1 { base.to_string() } else { format!("{base}-{n}") };
        let dir = parent.join(name);
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("cannot create run directory {}", dir.display()))
            }
        }
    }
    unreachable!("the suffix loop only ends by returning")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_reuses_a_directory() {
        let root = tempfile::tempdir().unwrap();
        let a = create_run_dir(root.path(), "cartpole", "x").unwrap();
        let b = create_run_dir(root.path(), "cartpole", "x").unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with(root.path().join("cartpole").join("x")));
    }
}
