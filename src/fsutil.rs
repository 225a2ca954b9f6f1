//! Crash-safe file writes: write a temp file beside the target, fsync it, rename over the
//! target, fsync the directory. A reader (or a resumed run after kill -9) sees the old file or
//! the new one, never a torn one.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Temp path in the same directory, keeping the extension (tch picks the format from it).
fn temp_path(target: &Path) -> PathBuf {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = target.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    target.with_file_name(format!(".{name}.{}.tmp{ext}", std::process::id()))
}

/// Calls `write` with a temp path, then atomically moves the result to `target`.
pub fn write_atomic_with(target: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let tmp = temp_path(target);
    let result = write(&tmp).and_then(|()| {
        File::open(&tmp)
            .and_then(|f| f.sync_all())
            .with_context(|| format!("syncing {}", tmp.display()))?;
        fs::rename(&tmp, target)
            .with_context(|| format!("renaming {} to {}", tmp.display(), target.display()))?;
        if let Some(dir) = target.parent() {
            // Best effort: some filesystems refuse to open a directory for syncing.
            let _ = File::open(dir).and_then(|d| d.sync_all());
        }
        Ok(())
    });
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Atomically replaces `target` with `bytes`.
pub fn write_atomic(target: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(target, |tmp| {
        fs::write(tmp, bytes).with_context(|| format!("writing {}", tmp.display()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.json");
        write_atomic(&target, b"one").unwrap();
        write_atomic(&target, b"two").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        // A failing writer leaves the old file untouched.
        let err = write_atomic_with(&target, |_| anyhow::bail!("boom"));
        assert!(err.is_err());
        assert_eq!(fs::read(&target).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
