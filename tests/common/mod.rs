//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::ffi::OsString;
use std::path::Path;

use gait::cli::{self, Action};
use gait::config::TrainJob;

/// Parses a `gait train ppo ...` command line exactly as the binary does (presets included).
pub fn ppo_args(flags: &[&str]) -> TrainJob {
    let mut argv: Vec<OsString> = ["gait", "train", "ppo"].iter().map(OsString::from).collect();
    argv.extend(flags.iter().map(OsString::from));
    match cli::parse(&argv).expect("valid flags").action {
        Action::Train(job) => *job,
        other => panic!("parsed {other:?}"),
    }
}

/// Fast training flags for cartpole under `logdir`.
pub fn quick(logdir: &Path, extra: &[&str]) -> TrainJob {
    let logdir = logdir.to_str().expect("utf-8 temp path");
    let mut flags = vec!["--env", "cartpole", "--logdir", logdir];
    flags.extend_from_slice(extra);
    ppo_args(&flags)
}

/// Rows of a CSV file as strings (header first).
pub fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    records(csv::ReaderBuilder::new().has_headers(false).from_path(path).expect("csv"))
}

/// Rows of CSV bytes (a file read before its directory went away) as strings (header first).
pub fn csv_rows_of(bytes: &[u8]) -> Vec<Vec<String>> {
    records(csv::ReaderBuilder::new().has_headers(false).from_reader(bytes))
}

fn records<R: std::io::Read>(mut reader: csv::Reader<R>) -> Vec<Vec<String>> {
    reader.records().map(|r| r.expect("row").iter().map(str::to_string).collect()).collect()
}

/// Column `name` of a CSV file, parsed (empty cells are None).
pub fn csv_column(path: &Path, name: &str) -> Vec<Option<f64>> {
    column(&csv_rows(path), name)
}

/// Column `name` of CSV rows with their header first, parsed (empty cells are None).
pub fn column(rows: &[Vec<String>], name: &str) -> Vec<Option<f64>> {
    let col = rows[0].iter().position(|c| c == name).unwrap_or_else(|| panic!("no column {name}"));
    rows[1..].iter().map(|r| r[col].parse().ok()).collect()
}

/// Every file under `dir` with its bytes, to prove a command changed nothing.
pub fn snapshot(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    fn walk(p: &Path, out: &mut std::collections::BTreeMap<std::path::PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(p).expect("readable dir").flatten() {
            let path = e.path();
            if path.is_dir() {
                out.insert(path.clone(), Vec::new());
                walk(&path, out);
            } else {
                out.insert(path.clone(), std::fs::read(&path).expect("readable file"));
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, &mut out);
    out
}

/// Runs the `gait` binary.
pub fn gait(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_gait")).args(args).output().expect("run gait")
}

/// The one continuation (`RUN-cont-STAMP`) that `--previous run` wrote beside `run` (not a
/// continuation of that continuation, nor of a sibling).
pub fn continuation_of(run: &Path) -> std::path::PathBuf {
    let parent = run.parent().expect("a run dir has a parent");
    let prefix = format!("{}-cont-", run.file_name().unwrap().to_str().unwrap());
    let cont: Vec<_> = std::fs::read_dir(parent)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.strip_prefix(&prefix).is_some_and(|stamp| !stamp.contains("-cont-"))
        })
        .collect();
    assert_eq!(cont.len(), 1, "one continuation dir beside the previous one: {cont:?}");
    cont[0].clone()
}

/// The single run directory directly below `logdir/env/run`.
pub fn only_run(parent: &Path) -> std::path::PathBuf {
    let dirs: Vec<_> = std::fs::read_dir(parent).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

pub fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `gait eval` of the shipped walking policy at 1 m/s straight ahead for `episodes` episodes
/// of `traj_len` steps, with `extra` flags (`--gif FILE`, `--record FILE`); panics if it fails.
pub fn eval_pretrained(episodes: &str, traj_len: &str, extra: &[&str]) -> std::process::Output {
    let walk = pretrained_walk();
    let mut args = vec!["eval", "--path", walk.to_str().expect("utf-8 path")];
    args.extend(["--command", "1,0,0", "--episodes", episodes, "--traj-len", traj_len]);
    args.extend_from_slice(extra);
    let o = gait(&args);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    o
}

/// The shipped walking policy (`pretrained/cassie-walk`).
pub fn pretrained_walk() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("pretrained/cassie-walk")
}

/// Runs `gait train ppo --env cartpole --logdir LOGDIR --run-name RUN EXTRA...`.
pub fn train_cartpole(logdir: &Path, run: &str, extra: &[&str]) -> std::process::Output {
    let l = logdir.to_str().expect("utf-8 temp path");
    let mut argv = vec!["train", "ppo", "--env", "cartpole", "--logdir", l, "--run-name", run];
    argv.extend_from_slice(extra);
    gait(&argv)
}

/// [`train_cartpole`], which must succeed; returns the run directory.
pub fn trained_cartpole(logdir: &Path, run: &str, extra: &[&str]) -> std::path::PathBuf {
    let o = train_cartpole(logdir, run, extra);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    only_run(&logdir.join("cartpole").join(run))
}

/// Starts a cartpole run that would go on for hours (stdout and stderr piped).
pub fn spawn_cartpole(logdir: &Path, run: &str) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_gait"))
        .args(["train", "ppo", "--env", "cartpole", "--timesteps", "1e9", "--num-steps", "1000"])
        .args(["--logdir", logdir.to_str().expect("utf-8 temp path"), "--run-name", run])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn gait")
}

/// The per-user cache the set-up scripts install into: `$GAIT_CACHE`, else
/// `${XDG_CACHE_HOME:-~/.cache}/gait`.
pub fn cache_dir() -> std::path::PathBuf {
    std::env::var_os("GAIT_CACHE").map(std::path::PathBuf::from).unwrap_or_else(|| {
        let home = || std::path::PathBuf::from(std::env::var_os("HOME").expect("HOME"));
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| home().join(".cache"));
        base.join("gait")
    })
}

/// Cassie's walking preset with its training distribution settled from the first step (no
/// gated curriculum, no perturbation ramp, `--best-after-settled 0`), so that every
/// evaluation of a small run is a settled one and runs `--best-by tracking`'s selection
/// episodes.
pub const SETTLED_FROM_THE_START: &[&str] = &[
    "--omni-start",
    "0",
    "--omni-start-speed",
    "0",
    "--robust-start",
    "0",
    "--robust-ramp",
    "0",
    "--robust-start-speed",
    "0",
    "--best-after-settled",
    "0",
];

/// Blue and red pixels (the legs) of a PNG inside a window given as fractions of its height
/// (`rows`) and width (`cols`): the replay and play pages draw the left leg blue and the right
/// red, and neither the sky nor the ground has either colour.
pub fn leg_pixels(png_bytes: &[u8], rows: [f64; 2], cols: [f64; 2]) -> (usize, usize) {
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let (w, h) = (info.width as usize, info.height as usize);
    let at = |n: usize, f: f64| (n as f64 * f) as usize;
    let (mut blue, mut red) = (0, 0);
    for y in at(h, rows[0])..at(h, rows[1]) {
        for x in at(w, cols[0])..at(w, cols[1]) {
            let p = &buf[channels * (y * w + x)..channels * (y * w + x) + 3];
            let (r, g, b) = (p[0] as i32, p[1] as i32, p[2] as i32);
            blue += (b > r + 60 && b > g + 30) as usize;
            red += (r > g + 60 && r > b + 60) as usize;
        }
    }
    (blue, red)
}
