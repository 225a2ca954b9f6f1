//! Where commands write what a user asked for (`eval --gif` and `--record`, `plot --out`): one
//! check for every such output, made before any work is done, so a typo costs nothing.
//!
//! An output is written only to a new path or over an existing **regular file** (never a
//! symbolic link, device, pipe or directory: the atomic rename would replace the node itself,
//! and as root `--gif /dev/full` would replace the machine's device), with its format's
//! extension, in an existing directory, never over a file of a run directory, and never to the
//! path of another output of the same command. Errors name the path as the user typed it.

use std::path::{Path, PathBuf};

use crate::config::UsageError;
use crate::logging::RUN_FILES;

/// One output of a command.
#[derive(Debug, Clone, Copy)]
pub struct Output<'a> {
    /// The flag that names it (`--gif`), for messages.
    pub flag: &'static str,
    pub path: &'a Path,
    /// Accepted extensions, lowercase, the first one the canonical one.
    pub extensions: &'static [&'static str],
}

impl Output<'_> {
    fn refuse(&self, why: impl std::fmt::Display) -> UsageError {
        UsageError(format!("{} {}: {why}", self.flag, self.path.display()))
    }

    /// The checks of one output alone; returns its directory and file name.
    fn check(&self) -> Result<(PathBuf, std::ffi::OsString), UsageError> {
        let ext = self.path.extension().map(|e| e.to_string_lossy().to_lowercase());
        if !ext.as_deref().is_some_and(|e| self.extensions.contains(&e)) {
            return Err(self.refuse(format!(
                "give a file name ending in .{} (the format is taken from it)",
                self.extensions[0]
            )));
        }
        let Some(name) = self.path.file_name() else {
            return Err(self.refuse("give a file name"));
        };
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.is_dir() {
            return Err(self.refuse("give a file name in an existing directory"));
        }
        // The directory must take a file: the atomic write's temp file, made and removed now.
        match crate::fsutil::create_temp(self.path) {
            Ok(probe) => {
                let _ = std::fs::remove_file(&probe);
            }
            Err(e) => return Err(self.refuse(format!("cannot be written there: {e}"))),
        }
        match std::fs::symlink_metadata(self.path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(self.refuse(
                    "is a symbolic link; gait writes only to a new path or over a regular file",
                ));
            }
            Ok(meta) if !meta.is_file() => {
                return Err(self.refuse(
                    "is not a regular file (a directory, device or pipe); gait writes only to a \
                     new path or over a regular file",
                ));
            }
            Ok(_) if is_run_file(&dir, name) => {
                return Err(self.refuse(format!(
                    "is a file of the run directory {}; write the output elsewhere",
                    dir.display()
                )));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(self.refuse(format!("cannot be checked: {e}"))),
        }
        Ok((dir.canonicalize().unwrap_or(dir), name.to_os_string()))
    }
}

/// Whether `dir/name` is one of the files gait keeps in a run directory.
fn is_run_file(dir: &Path, name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    dir.join(crate::logging::EXPERIMENT_JSON).is_file()
        && (RUN_FILES.contains(&name.as_ref()) || name.starts_with("events.out.tfevents"))
}

/// Checks every output of one command, and that no two share a path.
pub fn check(outputs: &[Output]) -> Result<(), UsageError> {
    let mut seen: Vec<((PathBuf, std::ffi::OsString), &Output)> = Vec::new();
    for output in outputs {
        let key = output.check()?;
        if let Some((_, other)) = seen.iter().find(|(k, _)| *k == key) {
            return Err(output.refuse(format!("is also {}'s path; give each its own", other.flag)));
        }
        seen.push((key, output));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIF: &[&str] = &["gif"];
    const HTML: &[&str] = &["html", "htm"];

    fn one(flag: &'static str, path: &Path, extensions: &'static [&'static str]) -> String {
        match check(&[Output { flag, path, extensions }]) {
            Ok(()) => "ok".into(),
            Err(e) => e.0,
        }
    }

    #[test]
    fn only_new_paths_and_regular_files_with_the_right_extension_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(one("--gif", &d.join("new.gif"), GIF), "ok");
        std::fs::write(d.join("old.gif"), b"x").unwrap();
        assert_eq!(one("--gif", &d.join("old.gif"), GIF), "ok");
        assert_eq!(one("--record", &d.join("Page.HTM"), HTML), "ok");
        // Device nodes and links made inside the temp dir, never the machine's own.
        let node = d.join("full.gif");
        let made = std::process::Command::new("mknod")
            .arg(&node)
            .args(["c", "1", "7"])
            .status()
            .is_ok_and(|s| s.success());
        if made {
            assert!(one("--gif", &node, GIF).contains("is not a regular file"));
        } else {
            // Without CAP_MKNOD a FIFO is the special file at hand.
            let fifo = std::ffi::CString::new(node.to_str().unwrap()).unwrap();
            // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
            assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
            assert!(one("--gif", &node, GIF).contains("is not a regular file"));
        }
        std::os::unix::fs::symlink("/proc/self/fd/1", d.join("stdout.gif")).unwrap();
        assert!(one("--gif", &d.join("stdout.gif"), GIF).contains("symbolic link"));
        std::fs::create_dir(d.join("dir.gif")).unwrap();
        assert!(one("--gif", &d.join("dir.gif"), GIF).contains("not a regular file"));
        assert!(one("--gif", &d.join("walk"), GIF).contains("ending in .gif"));
        assert!(one("--gif", &d.join("walk.png"), GIF).contains("ending in .gif"));
        assert!(one("--gif", &d.join("no/such/walk.gif"), GIF).contains("existing directory"));
        let msg = one("--gif", &d.join("walk.html"), GIF);
        assert!(msg.starts_with(&format!("--gif {}", d.join("walk.html").display())), "{msg}");
    }

    #[test]
    fn a_run_directory_file_or_a_shared_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("experiment.json"), b"{}").unwrap();
        std::fs::write(d.join("actor.safetensors"), b"x").unwrap();
        // The extension check already refuses a checkpoint; the run-file check stands behind it.
        assert!(one("--gif", &d.join("actor.safetensors"), GIF).contains("ending in .gif"));
        assert!(
            one("--x", &d.join("actor.safetensors"), &["safetensors"]).contains("run directory")
        );
        assert_eq!(one("--gif", &d.join("walk.gif"), GIF), "ok", "a new file in a run dir is fine");
        let x = d.join("x.gif");
        let err = check(&[
            Output { flag: "--gif", path: &x, extensions: GIF },
            Output { flag: "--record", path: &d.join("./x.gif"), extensions: &["gif"] },
        ])
        .unwrap_err();
        assert!(err.0.contains("is also --gif's path"), "{}", err.0);
    }
}
