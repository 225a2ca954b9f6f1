//! Sampling over MPI ranks (`--features mpi`), on loopback with `mpirun --oversubscribe`:
//! the same `progress.csv` as one process, a rank that dies or hangs ends the job within
//! seconds naming it (and `--previous` then continues exactly), and ranks that differ are
//! refused by name.
#![cfg(feature = "mpi")]

mod common;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use common::{gait, only_run, stderr, stdout};

/// `mpirun -np N` of `gait ARGS` (loopback TCP, allowed as root, oversubscribed), each
/// `(variable, value)` exported to every rank; `mpmd` adds a second app context of one rank
/// with its own variable (a rank that differs).
fn mpirun(n: usize, env: &[(&str, &str)], args: &[&str], mpmd: Option<(&str, &str)>) -> Output {
    let mut cmd = std::process::Command::new("mpirun");
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    cmd.args(["--oversubscribe", "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "lo"]);
    for (k, v) in env {
        cmd.args(["-x", &format!("{k}={v}")]);
    }
    cmd.args(["-np", &n.to_string(), env!("CARGO_BIN_EXE_gait")]).args(args);
    if let Some((k, v)) = mpmd {
        cmd.args([":", "-np", "1", "-x", &format!("{k}={v}"), env!("CARGO_BIN_EXE_gait")])
            .args(args);
    }
    cmd.output().expect("mpirun (scripts/setup_test.sh installs Open MPI)")
}

fn train_args<'a>(env: &'a str, logdir: &'a str, run: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["train", "ppo", "--env", env, "--workers", "2", "--seed", "3"];
    a.extend(["--logdir", logdir, "--run-name", run]);
    a.extend_from_slice(extra);
    a
}

fn progress(logdir: &Path, env: &str, run: &str) -> Vec<u8> {
    std::fs::read(only_run(&logdir.join(env).join(run)).join("progress.csv")).unwrap()
}

/// Trains on 3 ranks and in one process; asserts equal `progress.csv`s and returns it.
fn same_numbers_on_three_ranks(env: &str, extra: &[&str]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let logdir = dir.path().to_str().unwrap();
    let o = mpirun(3, &[], &train_args(env, logdir, "ranks", extra), None);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("sampling on 3 MPI ranks"), "{}", stdout(&o));
    let o = gait(&train_args(env, logdir, "one", extra));
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let (ranks, one) = (progress(dir.path(), env, "ranks"), progress(dir.path(), env, "one"));
    assert!(ranks.len() > 200);
    assert_eq!(String::from_utf8_lossy(&ranks), String::from_utf8_lossy(&one));
    ranks
}

#[test]
fn three_ranks_give_the_numbers_of_one_process_cartpole() {
    same_numbers_on_three_ranks("cartpole", &["--timesteps", "24000"]);
}

#[test]
fn three_ranks_give_the_numbers_of_one_process_cassie() {
    // Settled from the first step, so every evaluation also runs the preset's selection
    // episodes (`--best-by cells`, the mirrored commands) across the ranks. Selection episodes
    // of 20 steps, longer than the train and eval ones (10), as the preset's (1000 against
    // 400): some of them outlive 10 steps (a tracking error below the fall's 4), so a rank
    // that cut them at the train length (as ranks did before 2026-12-03) would score falls.
    let mut args = common::SETTLED_FROM_THE_START.to_vec();
    args.extend([
        "--timesteps",
        "3000",
        "--num-steps",
        "1000",
        "--traj-len",
        "10",
        "--prenormalize-steps",
        "200",
        "--num-eval-eps",
        "3",
        "--eval-freq",
        "1",
        "--selection-len",
        "20",
        "--selection-commands",
        "mirrored",
    ]);
    let rows = same_numbers_on_three_ranks("cassie", &args);
    let scores = common::column(&common::csv_rows_of(&rows), "Test/Tracking Error");
    let scores: Vec<f64> = scores.into_iter().flatten().collect();
    assert!(scores.len() >= 2, "{}", String::from_utf8_lossy(&rows));
    assert!(scores.iter().all(|&s| s < 4.0), "some episodes outlive 10 steps: {scores:?}");
}

#[test]
fn a_rank_that_dies_or_hangs_ends_the_job_within_seconds_and_the_run_continues_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let logdir = dir.path().to_str().unwrap();
    let steps = ["--timesteps", "32000"];
    for (fault, needle) in [
        // The launcher ends the job and names the process: `[[job,1],2]`, exit code 3.
        ("exit@2:3", ",2]"),
        // gait's deadline: rank 1 stops answering.
        ("hang@1:3", "rank 1"),
    ] {
        let run = format!("fault-{}", &fault[..4]);
        let start = Instant::now();
        let o = mpirun(
            3,
            &[("GAIT_TEST_FAULT", fault)],
            &train_args("cartpole", logdir, &run, &steps),
            None,
        );
        let took = start.elapsed();
        assert!(!o.status.success(), "{fault}: {}", stdout(&o));
        assert!(took < Duration::from_secs(15), "{fault}: took {took:?}");
        let all = format!("{}{}", stdout(&o), stderr(&o));
        assert!(all.contains(needle), "{fault}: {all}");
        // The run dir holds the iterations before the fault; --previous finishes the run.
        let broken = only_run(&dir.path().join("cartpole").join(&run));
        let o = gait(&[
            "train",
            "ppo",
            "--previous",
            broken.to_str().unwrap(),
            "--logdir",
            logdir,
            "--run-name",
            &format!("{run}-cont"),
            "--workers",
            "2",
        ]);
        assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
        let whole = {
            let o = gait(&train_args("cartpole", logdir, &format!("{run}-whole"), &steps));
            assert!(o.status.success(), "{}", stderr(&o));
            String::from_utf8(progress(dir.path(), "cartpole", &format!("{run}-whole"))).unwrap()
        };
        let cont =
            String::from_utf8(progress(dir.path(), "cartpole", &format!("{run}-cont"))).unwrap();
        let rows = |s: &str| s.lines().skip(1).map(str::to_string).collect::<Vec<_>>();
        let (whole, cont) = (rows(&whole), rows(&cont));
        assert!(!cont.is_empty() && whole.ends_with(&cont), "{fault}: {cont:?} vs {whole:?}");
    }
}

#[test]
fn ranks_that_differ_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let logdir = dir.path().to_str().unwrap();
    let args = train_args("cartpole", logdir, "odd", &["--timesteps", "8000"]);
    let o = mpirun(2, &[], &args, Some(("GAIT_TEST_FINGERPRINT_SALT", "x")));
    assert!(!o.status.success(), "{}", stdout(&o));
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(all.contains("rank 2") && all.contains("seeded reference rollout"), "{all}");
}

/// Each rank reads its own command line: its `--workers` is its node's count (recorded in
/// `experiment.json`), a bad one ends the job naming the rank, and any other difference from
/// rank 0's command (here another `--seed`) is refused by name instead of being ignored.
#[test]
fn each_rank_takes_its_own_workers_and_must_otherwise_run_rank_0s_command() {
    let dir = tempfile::tempdir().unwrap();
    let logdir = dir.path().to_str().unwrap();
    let run = |name: &str, second: &[&str]| {
        let args = train_args("cartpole", logdir, name, &["--timesteps", "4000"]);
        let mut cmd = std::process::Command::new("mpirun");
        cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        cmd.args(["--oversubscribe", "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include"]);
        cmd.args(["lo", "-np", "1", env!("CARGO_BIN_EXE_gait")]).args(&args);
        cmd.args([":", "-np", "1", env!("CARGO_BIN_EXE_gait")]).args(&args).args(second);
        cmd.output().expect("mpirun")
    };
    let o = run("three", &["--workers", "3"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let exp =
        gait::logging::Experiment::load(&only_run(&dir.path().join("cartpole/three"))).unwrap();
    assert_eq!(exp.ranks, Some(vec![2, 3]), "rank 1 runs its own --workers");
    let o = run("zero", &["--workers", "0"]);
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(
        !o.status.success() && all.contains("MPI rank 1") && all.contains("--workers"),
        "{all}"
    );
    let o = run("seed", &["--seed", "9"]);
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(!o.status.success(), "{all}");
    assert!(all.contains("rank 1") && all.contains("command line (--workers aside)"), "{all}");
}
