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
        format!(
            "cannot create the run directory under --logdir {}",
            logdir.display()
        )
    })?;
    let stamp = chrono::Local::now().format("%Y-%m-%d_%H-%M-%S").to_string();
    for n in 1.. {
        let name = if n == 1 {
            stamp.clone()
        } else {
            format!("{stamp}-{n}")
        };
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
