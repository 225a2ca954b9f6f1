//! The README's commands work as written. Every line of every `sh` block in README.md is either
//! run here, made cheap (training cut to a few thousand steps, evaluations to short episodes,
//! benchmarks to a fixed small workload) but otherwise as typed, in a scratch directory that
//! holds `pretrained/`, `scripts/` and `configs/` like a checkout; or listed in [`NOT_RUN`] with what covers
//! it. A README command in neither place fails the test, and so does a stale [`NOT_RUN`] entry,
//! so the two cannot drift apart.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Commands the test does not run, each with what runs it instead.
const NOT_RUN: &[(&str, &str)] = &[
    ("make train", "its recipe is `gait train ppo --env cassie` (checked below), which runs here"),
    (
        "make train-forward",
        "its recipe is `gait train ppo --config configs/cassie-forward.toml` (checked below)",
    ),
    (
        "make train-terrain",
        "its script, `scripts/train_terrain.sh` (checked below), runs below for two iterations \
         and is rerun to continue",
    ),
    ("make test", "CI itself: `.ci/run` runs it (checked below)"),
    (
        "gait play --path pretrained/cassie-walk",
        "serves until its page closes: tests/play.rs runs it on a free port and drives it from \
         headless Chromium",
    ),
    (
        "cargo build --release --features mpi",
        "`make test` builds and tests with `--features mpi` (checked below)",
    ),
    (
        "cargo run --release --example custom_env",
        "`make test` runs it (with `--features mpi`, checked below); it fails unless it beats random",
    ),
    (
        "mpirun --host node1,node2,node3 -np 3 target/release/gait train ppo --env cassie --workers 31",
        "needs three hosts: tests/mpi.rs runs `mpirun -np 3` with the same `gait train` on loopback",
    ),
    (
        "srun --mpi=pmix target/release/gait train ppo --env cassie --workers 31 --num-steps 100000",
        "needs a Slurm cluster: the PMI/PMIx launcher detection is the same code path as mpirun's",
    ),
];

/// The command lines of README.md's `sh` blocks, comments stripped.
fn readme_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in readme.lines() {
        if line.starts_with("```") {
            in_sh = !in_sh && line.trim() == "```sh";
            continue;
        }
        if in_sh {
            let cmd = line.split(" #").next().unwrap_or("").trim();
            if !cmd.is_empty() && !cmd.starts_with('#') {
                out.push(cmd.to_string());
            }
        }
    }
    out
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Sets `--flag value` in `args`: replaces an existing value or appends the pair.
fn set_flag(args: &mut Vec<String>, flag: &str, value: &str) {
    match args.iter().position(|a| a == flag) {
        Some(i) => args[i + 1] = value.to_string(),
        None => args.extend([flag.to_string(), value.to_string()]),
    }
}

/// `cmd` made cheap: fewer steps and episodes, the rest as typed.
fn cheap(cmd: &str, run: &str) -> String {
    let cmd = cmd
        .replace("logs/cassie/RUN/STAMP", run)
        .replace("RUN_DIR", run)
        .split(' ')
        .map(|w| if w == "RUN" { run } else { w })
        .collect::<Vec<_>>()
        .join(" ");
    let (main, redirect) = match cmd.split_once(" > ") {
        Some((m, r)) => (m.to_string(), format!(" > {r}")),
        None => (cmd.clone(), String::new()),
    };
    let mut args: Vec<String> = main.split_whitespace().map(String::from).collect();
    let has = |args: &[String], f: &str| args.iter().any(|a| a == f);
    match (args.first().map(String::as_str), args.get(1).map(String::as_str)) {
        (Some("gait"), Some("train")) if !has(&args, "--help") && !has(&args, "--print-config") => {
            let steps = if has(&args, "--previous") { "2000" } else { "1000" };
            set_flag(&mut args, "--timesteps", steps);
            for (flag, value) in [
                ("--num-steps", "500"),
                ("--traj-len", "50"),
                ("--prenormalize-steps", "50"),
                ("--num-eval-eps", "1"),
                ("--eval-freq", "1"),
                ("--workers", "1"),
                // Every iteration's weights kept, for `gait eval --iteration`.
                ("--save-freq", "1"),
            ] {
                set_flag(&mut args, flag, value);
            }
        }
        (Some("gait"), Some("eval" | "check")) => {
            set_flag(&mut args, "--traj-len", "30");
            set_flag(&mut args, "--episodes", "1");
            if has(&args, "--iteration") {
                // The cheap run's last iteration (its 1000 steps are two of 500).
                set_flag(&mut args, "--iteration", "1");
            }
        }
        (Some("gait"), Some("bench")) if args.get(2).map(String::as_str) == Some("env") => {
            set_flag(&mut args, "--steps", "200");
        }
        _ => {}
    }
    format!("{}{redirect}", args.join(" "))
}

/// Runs `cmd` with bash in `dir`, `gait` on the PATH; panics with its output unless it exits 0
/// (or, for `gait check`, 3: it ran, and a cell of the cheap run or cheap episodes missed).
fn run(dir: &Path, bin: &Path, cmd: &str) -> String {
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new("bash")
        .args(["-c", cmd])
        .current_dir(dir)
        .env("PATH", path)
        .env("GAIT_CHECK_EPISODES", "1")
        .env("GAIT_CHECK_STEPS", "20")
        .output()
        .expect("run bash");
    let (o, e) = (common::stdout(&out), common::stderr(&out));
    let checked = cmd.starts_with("gait check") && out.status.code() == Some(3);
    assert!(out.status.success() || checked, "`{cmd}` failed ({}):\n{o}\n{e}", out.status);
    o + &e
}

/// The newest run directory below `logs/ENV`.
fn newest_run(logs: &Path) -> PathBuf {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(logs)
        .expect("logs/ENV")
        .flatten()
        .flat_map(|run| std::fs::read_dir(run.path()).into_iter().flatten().flatten())
        .map(|stamp| stamp.path())
        .filter(|p| p.join("progress.csv").is_file())
        .collect();
    runs.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
    runs.pop().expect("a run directory")
}

#[test]
fn every_readme_command_runs_as_written_or_is_covered_by_a_named_test() {
    let commands = readme_commands();
    assert!(commands.len() >= 30, "found only {} commands in README.md", commands.len());
    for (cmd, _) in NOT_RUN {
        assert!(commands.iter().any(|c| c == cmd), "NOT_RUN lists `{cmd}`, which README lacks");
    }
    // What the NOT_RUN entries lean on.
    let makefile = std::fs::read_to_string(repo().join("Makefile")).unwrap();
    assert!(makefile.contains("./target/release/gait train ppo --env cassie\n"), "{makefile}");
    assert!(
        makefile.contains("./target/release/gait train ppo --config configs/cassie-forward.toml\n"),
        "{makefile}"
    );
    assert!(commands.iter().any(|c| c == "gait train ppo --config configs/cassie-forward.toml"));
    assert!(makefile.contains("train-terrain: build\n\t./scripts/train_terrain.sh\n"));
    assert!(makefile.contains("cargo test --release --features mpi"), "{makefile}");
    assert!(
        makefile.contains("cargo run --release --features mpi --example custom_env"),
        "{makefile}"
    );
    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    assert!(ci.lines().any(|l| l.trim() == "exec make test"), "{ci}");
    assert!(commands.iter().any(|c| c == "gait train ppo --env cassie"));

    // A scratch checkout: the shipped policy and the scripts, `gait` on the PATH.
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    for link in ["pretrained", "scripts", "target", "configs"] {
        std::os::unix::fs::symlink(repo().join(link), work.join(link)).unwrap();
    }
    let bin = work.join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_gait"), bin.join("gait")).unwrap();

    // The run the RUN placeholders name: the README's first training command, made cheap.
    let first = &commands[0];
    assert!(first.starts_with("gait train ppo --env cassie"), "{first}");
    run(work, &bin, &cheap(first, ""));
    let run_dir = newest_run(&work.join("logs/cassie"));
    let run_str = run_dir.to_str().unwrap().to_string();

    for cmd in &commands[1..] {
        if NOT_RUN.iter().any(|(c, _)| c == cmd) {
            continue;
        }
        let line = cheap(cmd, &run_str);
        if line.starts_with("tensorboard ") {
            // The server shows what TensorBoard's own reader reads from the event files.
            let python = common::cache_dir().join("tensorboard-2.21.0/bin/python");
            assert!(python.is_file(), "{}: run scripts/setup_tensorboard.sh", python.display());
            let check = format!("{} scripts/check_tensorboard.py {run_str}", python.display());
            let out = run(work, &bin, &check);
            assert!(out.contains("ok: all reference tags present"), "{out}");
            continue;
        }
        let out = run(work, &bin, &line);
        // Files the command names as outputs exist and are not empty.
        let words: Vec<&str> = line.split_whitespace().collect();
        for w in words.windows(2) {
            if matches!(w[0], "--gif" | "--record" | "--out" | ">") {
                let f = work.join(w[1]);
                let len = std::fs::metadata(&f).map(|m| m.len()).unwrap_or(0);
                assert!(len > 0, "`{line}` did not write {}\n{out}", f.display());
            }
        }
        if line.starts_with("gait eval") {
            assert!(out.contains("episode   0: return"), "`{line}`:\n{out}");
        }
        if line.starts_with("gait check") {
            assert!(out.contains("\nwithin: "), "`{line}`:\n{out}");
        }
        if line.starts_with("gait plot") {
            assert!(run_dir.join("progress.png").is_file(), "`{line}`:\n{out}");
        }
    }

    // `make train-terrain`: the shipped walker (13,001,268 steps) continued for two short
    // iterations, then rerun to continue that run. Its weights are the terrain run's own, not
    // the walker's that a flat pick would keep (D-068).
    let terrain = |steps: &str| {
        let flags = "--num-steps 500 --traj-len 50 --eval-freq 1 --num-eval-eps 1 --workers 1";
        run(work, &bin, &format!("TIMESTEPS={steps} GAIT=gait scripts/train_terrain.sh {flags}"))
    };
    let runs = work.join("logs/cassie/cassie-terrain");
    terrain("13002000");
    let first = newest_run(&work.join("logs/cassie"));
    assert!(first.starts_with(&runs), "{}", first.display());
    let weights = |dir: &Path| std::fs::read(dir.join("actor.safetensors")).unwrap();
    assert_ne!(weights(&first), weights(&repo().join("pretrained/cassie-walk")));
    let out = terrain("13003000");
    let second = newest_run(&work.join("logs/cassie"));
    assert_ne!(second, first, "{out}");
    let rows = std::fs::read_to_string(second.join("progress.csv")).unwrap();
    assert_eq!(rows.lines().nth(1).and_then(|r| r.split(',').next()), Some("1279"), "{rows}");
}
