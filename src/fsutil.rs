//! Crash-safe file writes: write a temp file beside the target, fsync it, rename over the
//! target, fsync the directory. A reader (or a resumed run after kill -9) sees the old file or
//! the new one, never a torn one.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// A temp path in the same directory, keeping the extension (tch picks the format from it):
/// `.NAME.PID-RANDOM.tmp.EXT`. The process id lets [`sweep_stale_temps`] tell a dead writer's
/// file; the random part makes the name unguessable, so nobody can plant a link at it.
pub(crate) fn temp_path(target: &Path) -> PathBuf {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = target.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    let random: u64 = rand::random();
    target.with_file_name(format!(".{name}.{}-{random:016x}.tmp{ext}", std::process::id()))
}

/// Creates a new temp file for `target` ([`temp_path`]) exclusively (`O_EXCL`: never through
/// an existing file or a link someone planted), and returns its path.
pub(crate) fn create_temp(target: &Path) -> std::io::Result<PathBuf> {
    let mut last = None;
    for _ in 0..8 {
        let tmp = temp_path(target);
        match fs::OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(_) => return Ok(tmp),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free temp name")))
}

/// How [`write_atomic_with`] puts the finished file in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Install {
    /// Replace whatever regular file is there (rename).
    Replace,
    /// Only where nothing is: a concurrent writer that got there first makes this one fail
    /// (a hard link, which the system refuses over an existing name), so "exists; give
    /// --force" cannot be raced past.
    New,
}

/// Calls `write` with a temp path, then atomically moves the result to `target`. Errors name
/// `target`, never the hidden temp file: the temp file is created here first, so a place that
/// cannot be written (`/proc`, a read-only or full disk) is reported as the operating system
/// says it, about the path the caller was given.
pub fn write_atomic_with(target: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    write_atomic_as(target, Install::Replace, write)
}

/// [`write_atomic_with`], putting the file in place as `install` says.
pub fn write_atomic_as(
    target: &Path,
    install: Install,
    write: impl FnOnce(&Path) -> Result<()>,
) -> Result<()> {
    let tmp = match create_temp(target) {
        Ok(tmp) => tmp,
        Err(e) => anyhow::bail!("writing {}: {e}", target.display()),
    };
    // What a killed writer of this same file left (a second Ctrl-C during a GIF, kill -9 during
    // an export): nothing else would ever remove it.
    sweep_stale_temps_of(target);
    let result = write(&tmp).and_then(|()| {
        File::open(&tmp)
            .and_then(|f| f.sync_all())
            .with_context(|| format!("syncing {}", tmp.display()))?;
        match install {
            Install::Replace => fs::rename(&tmp, target)
                .with_context(|| format!("renaming {} to {}", tmp.display(), target.display()))?,
            Install::New => {
                fs::hard_link(&tmp, target).map_err(|e| match e.kind() {
                    std::io::ErrorKind::AlreadyExists => anyhow::anyhow!(
                        "{} appeared while it was being written (another writer); nothing \
                         was replaced",
                        target.display()
                    ),
                    _ => anyhow::Error::from(e),
                })?;
                let _ = fs::remove_file(&tmp);
            }
        }
        if let Some(dir) = target.parent() {
            // Best effort: some filesystems refuse to open a directory for syncing.
            let _ = File::open(dir).and_then(|d| d.sync_all());
        }
        Ok(())
    });
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(|e| {
        // The operating system's reason when there is one (a full disk), else the writer's.
        let io = e.chain().find_map(|c| c.downcast_ref::<std::io::Error>());
        match io.map(ToString::to_string).or_else(|| os_reason(&format!("{e:#}"))) {
            Some(reason) => anyhow::anyhow!("writing {}: {reason}", target.display()),
            None => e.context(format!("writing {}", target.display())),
        }
    })
}

/// The operating-system error inside an encoder's error text, as the system words it. The
/// image encoders behind plotters report I/O failures only as `Debug` text
/// (`GifEncodingError(Io(Os { code: 28, .. }))`, `... (os error 28)`), which is no message for
/// a user; the error code in it is.
fn os_reason(text: &str) -> Option<String> {
    let code = ["code: ", "os error "].iter().find_map(|marker| {
        let at = text.find(marker)? + marker.len();
        let digits: String = text[at..].chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<i32>().ok()
    })?;
    Some(std::io::Error::from_raw_os_error(code).to_string())
}

/// The process id in a temp name made by [`temp_path`] (`.NAME.PID-RANDOM.tmp[.EXT]`, or
/// `.NAME.PID.tmp[.EXT]` as versions before the random part wrote), if `name` is one.
fn temp_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?;
    let (before, after) = rest.rsplit_once(".tmp")?;
    if !(after.is_empty() || after.starts_with('.')) {
        return None;
    }
    let (_, owner) = before.rsplit_once('.')?;
    let (pid, random) = owner.split_once('-').unwrap_or((owner, ""));
    if !random.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    pid.parse().ok()
}

/// Whether a process with this id exists (it may belong to someone else: then it is alive).
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else { return false };
    // SAFETY: kill with signal 0 sends nothing; it only checks that the process exists.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    exists || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Removes temp files that a killed gait process left in `dir` (a kill -9 between writing a
/// temp file and renaming it), and returns their paths. Temp files of live processes stay.
pub fn sweep_stale_temps(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    let entries = fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = temp_owner(&name) else { continue };
        if pid != std::process::id() && !process_alive(pid) && entry.path().is_file() {
            fs::remove_file(entry.path())
                .with_context(|| format!("removing stale temp file {}", entry.path().display()))?;
            removed.push(entry.path());
        }
    }
    Ok(removed)
}

/// Removes the temp files of `target` ([`temp_path`]'s names for it) whose writer is dead.
/// Best effort: an output is written whether or not this succeeds.
fn sweep_stale_temps_of(target: &Path) {
    let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else { return };
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let prefix = format!(".{}.", name.to_string_lossy());
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let entry_name = entry.file_name().to_string_lossy().into_owned();
        if !entry_name.starts_with(&prefix) {
            continue;
        }
        let Some(pid) = temp_owner(&entry_name) else { continue };
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if pid != std::process::id() && !process_alive(pid) && is_file {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The most gait reads of a file it parses: a config file (`--config`), a run's JSON, a
/// `progress.csv`. A real one is far smaller (a config under 4 KB, a 100,000-iteration
/// progress.csv about 150 MB); the cap turns `--config /dev/zero` or a CSV linked to it into an
/// error instead of a read that ends when memory does.
pub const MAX_READ: u64 = 512 << 20;

/// Reads `path` as UTF-8 text of at most [`MAX_READ`] bytes.
pub fn read_text(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    File::open(path)?.take(MAX_READ + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_READ {
        return Err(std::io::Error::other(format!(
            "larger than {} MB: not a file gait wrote",
            MAX_READ >> 20
        )));
    }
    Ok(text)
}

/// Atomically replaces `target` with `bytes`.
pub fn write_atomic(target: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(target, |tmp| fs::write(tmp, bytes).map_err(anyhow::Error::from))
}

/// The bytes `write` puts into the file at the path it is given, written to memory (an
/// anonymous `memfd`, on Linux) instead of a disk. Why: libtorch's TorchScript writer aborts
/// the process when the disk fills mid-write (a C++ exception thrown where nothing catches it:
/// exit 134 and a half-written file); from memory the bytes go to disk through
/// [`write_atomic_as`], whose errors are ordinary ones. Elsewhere `write` writes to a file in
/// the system's temporary directory.
pub fn written_in_memory(write: impl FnOnce(&Path) -> Result<()>) -> Result<Vec<u8>> {
    #[cfg(target_os = "linux")]
    {
        use std::io::{Read, Seek};
        use std::os::fd::FromRawFd;
        // SAFETY: a NUL-terminated name and no flags; the returned descriptor is checked, and
        // owned by the `File` from here on.
        let fd = unsafe { libc::memfd_create(c"gait-export".as_ptr(), 0) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error()).context("creating an in-memory file");
        }
        // SAFETY: `fd` is a fresh descriptor nothing else owns.
        let mut file = unsafe { File::from_raw_fd(fd) };
        write(Path::new(&format!("/proc/self/fd/{fd}")))?;
        let mut bytes = Vec::new();
        file.rewind().and_then(|()| file.read_to_end(&mut bytes)).context("reading it back")?;
        Ok(bytes)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let path = std::env::temp_dir().join(format!("gait-export-{}", std::process::id()));
        let result = write(&path).and_then(|()| fs::read(&path).context("reading it back"));
        let _ = fs::remove_file(&path);
        result
    }
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

    #[test]
    fn encoder_errors_are_reported_as_the_system_words_them() {
        let gif = "drawing backend error: GifEncodingError(Io(Os { code: 28, kind: StorageFull, \
                   message: \"No space left on device\" }))";
        assert_eq!(os_reason(gif).unwrap(), "No space left on device (os error 28)");
        let png = "ImageError(IoError(Custom { kind: Other, error: \"No space left on device \
                   (os error 28)\" }))";
        assert_eq!(os_reason(png).unwrap(), "No space left on device (os error 28)");
        assert_eq!(os_reason("no code here"), None);
    }

    #[test]
    fn sweep_removes_temp_files_of_dead_processes_only() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("critic_latest.safetensors");
        let mine = temp_path(&target);
        assert_eq!(
            temp_owner(&mine.file_name().unwrap().to_string_lossy()),
            Some(std::process::id())
        );
        // A pid above the kernel's maximum (2^22) never belongs to a live process.
        let dead = dir.path().join(".critic_latest.safetensors.4194305.tmp.safetensors");
        let dead_no_ext = dir.path().join(".experiment.4194306.tmp");
        let unrelated = dir.path().join(".hidden.1.tmpx");
        for p in [&mine, &dead, &dead_no_ext, &unrelated, &target] {
            fs::write(p, b"x").unwrap();
        }
        let mut removed = sweep_stale_temps(dir.path()).unwrap();
        removed.sort();
        let mut expected = vec![dead.clone(), dead_no_ext.clone()];
        expected.sort();
        assert_eq!(removed, expected);
        assert!(mine.exists() && unrelated.exists() && target.exists());
        assert!(!dead.exists() && !dead_no_ext.exists());
    }

    /// A link planted at a temp name is never written through: the temp file is created
    /// exclusively under a name nobody can guess; and a `New` install refuses a target that
    /// appeared meanwhile, leaving it and no temp file.
    #[test]
    fn temp_files_are_new_files_and_a_new_install_never_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("x.gif");
        let (a, b) = (temp_path(&target), temp_path(&target));
        assert_ne!(a, b, "unguessable");
        let victim = dir.path().join("victim");
        fs::write(&victim, b"precious").unwrap();
        std::os::unix::fs::symlink(&victim, &a).unwrap();
        assert!(fs::OpenOptions::new().write(true).create_new(true).open(&a).is_err());
        write_atomic(&target, b"gif").unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        fs::remove_file(&a).unwrap();
        let err = write_atomic_as(&target, Install::New, |tmp| {
            fs::write(tmp, b"other").map_err(anyhow::Error::from)
        })
        .unwrap_err();
        assert!(format!("{err:#}").contains("appeared while it was being written"), "{err:#}");
        assert_eq!(fs::read(&target).unwrap(), b"gif");
        let left: Vec<_> =
            fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left.len(), 2, "{left:?}");
        let new = dir.path().join("y.onnx");
        write_atomic_as(&new, Install::New, |tmp| {
            fs::write(tmp, b"y").map_err(anyhow::Error::from)
        })
        .unwrap();
        assert_eq!(fs::read(&new).unwrap(), b"y");
        assert_eq!(temp_owner(".y.onnx.123-00ff.tmp.onnx"), Some(123));
        assert_eq!(temp_owner(".y.onnx.123.tmp.onnx"), Some(123));
        assert_eq!(temp_owner(".y.onnx.123-zz.tmp.onnx"), None);
    }

    /// Writing a file removes what a killed writer of the same file left, nothing else.
    #[test]
    fn a_write_sweeps_its_own_stale_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("g.gif");
        let dead = dir.path().join(".g.gif.4194305-00aa.tmp.gif");
        let other = dir.path().join(".h.gif.4194305-00aa.tmp.gif");
        let notes = dir.path().join(".g.gif.notes");
        for p in [&dead, &other, &notes] {
            fs::write(p, b"x").unwrap();
        }
        write_atomic(&target, b"gif").unwrap();
        assert!(!dead.exists() && other.exists() && notes.exists());
    }
}
