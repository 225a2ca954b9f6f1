//! `--previous`: exact continuation, arg inheritance, kill -9 and Ctrl-C safety, `gait eval`,
//! and bad `--previous` inputs that change nothing.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{gait, only_run, snapshot, spawn_cartpole, stderr, stdout, trained_cartpole};

fn data_rows(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap().lines().skip(1).map(str::to_string).collect()
}

#[test]
fn three_plus_two_iterations_equal_five() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path();
    // The cartpole preset collects ~4000 steps per iteration: 12000 -> 3 iterations.
    let full = trained_cartpole(logs, "full", &["--timesteps", "20000", "--seed", "4"]);
    let first = trained_cartpole(logs, "part", &["--timesteps", "12000", "--seed", "4"]);
    let before = snapshot(&first);
    let o = gait(&["train", "ppo", "--previous", first.to_str().unwrap(), "--timesteps", "20000"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains("warning: timesteps: 12000 -> 20000"), "{out}");
    assert!(out.contains("from iteration 3"), "{out}");
    assert_eq!(snapshot(&first), before, "the previous run dir was modified");

    let cont = common::continuation_of(&first);
    let full_rows = data_rows(&full.join("progress.csv"));
    let first_rows = data_rows(&first.join("progress.csv"));
    let cont_rows = data_rows(&cont.join("progress.csv"));
    assert_eq!((first_rows.len(), cont_rows.len(), full_rows.len()), (3, 2, 5));
    assert_eq!([first_rows, cont_rows].concat(), full_rows, "resumed run diverged");
    // The continuation holds the uninterrupted run's best-eval weights, carried from the
    // first part (its best came there) or its own, and says so.
    assert_eq!(best_pair(&cont), best_pair(&full), "the best-eval weights differ");
    let err = stderr(&o);
    assert!(err.contains("best-eval weights so far: copied from"), "{err}");

    // Inherited arguments, TensorBoard steps continuing from 3.
    let exp = gait::logging::Experiment::load(&cont).unwrap();
    assert_eq!(exp.config.run.seed, 4);
    assert_eq!(exp.config.net.layers, vec![64, 64]);
    assert_eq!(exp.start.previous(), Some(first.as_path()));
    let tb = std::fs::read_dir(&cont)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().contains("tfevents"))
        .unwrap();
    let steps: Vec<i64> =
        gait::logging::read_events(&tb).unwrap().iter().skip(2).map(|e| e.step).collect();
    assert_eq!(steps, vec![3, 4]);

    // --previous-best starts from the best-eval weights; it runs and names itself a continuation.
    let o = gait(&[
        "train",
        "ppo",
        "--previous",
        first.to_str().unwrap(),
        "--previous-best",
        "--timesteps",
        "16000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(snapshot(&first), before);

    // gait eval on the finished run.
    let o = gait(&["eval", "--path", full.to_str().unwrap(), "--episodes", "3"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(out.lines().filter(|l| l.starts_with("episode")).count(), 3, "{out}");
    assert!(out.contains("mean return") && out.contains("actor.safetensors"), "{out}");
}

/// The returns' statistics (`--scale-rewards`, `--normalize-returns`) travel in the resume
/// state: a continued run scales as an uninterrupted one.
#[test]
fn return_statistics_resume_exactly() {
    for flag in ["--scale-rewards", "--normalize-returns"] {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path();
        let flags = ["--seed", "4", flag];
        let full =
            trained_cartpole(logs, "full", &[&["--timesteps", "20000"][..], &flags].concat());
        let first =
            trained_cartpole(logs, "part", &[&["--timesteps", "12000"][..], &flags].concat());
        let prev = first.to_str().unwrap();
        let o = gait(&["train", "ppo", "--previous", prev, "--timesteps", "20000"]);
        assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
        let cont = common::continuation_of(&first);
        let rows = [data_rows(&first.join("progress.csv")), data_rows(&cont.join("progress.csv"))];
        assert_eq!(rows.concat(), data_rows(&full.join("progress.csv")), "{flag}: diverged");
    }
}

/// `--resume-freq` keeps the exact state after every N-th iteration, and
/// `--previous-iteration` branches from one: the branch's rows are the original's from there.
/// An iteration it did not keep is refused, naming the ones it did, and creates nothing.
#[test]
fn a_branch_from_a_kept_iteration_continues_it_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path();
    let args = ["--timesteps", "16000", "--seed", "4", "--resume-freq", "2"];
    let full = trained_cartpole(logs, "full", &args);
    let kept = |run: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(run)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("resume_"))
            .collect();
        names.sort();
        names
    };
    assert_eq!(kept(&full), ["resume_0.safetensors", "resume_2.safetensors"]);
    let before = snapshot(&full);

    let prev = full.to_str().unwrap();
    let o = gait(&["train", "ppo", "--previous", prev, "--previous-iteration", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("kept no resume state after iteration 1") && err.contains(": 0, 2"));
    assert_eq!(std::fs::read_dir(full.parent().unwrap()).unwrap().count(), 1, "a dir was made");
    let o = gait(&["train", "ppo", "--previous", prev, "--previous-iteration", "0"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains("from iteration 1 ("), "{out}");
    assert_eq!(snapshot(&full), before, "the previous run dir was modified");

    let full_rows = data_rows(&full.join("progress.csv"));
    let branch_rows = data_rows(&common::continuation_of(&full).join("progress.csv"));
    assert_eq!(full_rows.len(), 4);
    assert_eq!(branch_rows, full_rows[1..], "the branch diverged from the run it left");
    assert_eq!(best_pair(&common::continuation_of(&full)), best_pair(&full));

    // A branch from the state after iteration 2, whose best (iteration 2's evaluation) the
    // run replaced at iteration 3: those weights are gone, it says so, and the branch saves
    // its own at iteration 3, the run's.
    let o = gait(&[
        "train",
        "ppo",
        "--previous",
        prev,
        "--previous-iteration",
        "2",
        "--run-name",
        "b2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("the best-eval weights of the state continued from are not in"), "{err}");
    assert_eq!(best_pair(&only_run(&logs.join("cartpole").join("b2"))), best_pair(&full));
}

/// The bytes of run `dir`'s best-eval weights (`actor.safetensors`, `critic.safetensors`).
fn best_pair(dir: &Path) -> [Vec<u8>; 2] {
    ["actor", "critic"].map(|net| {
        let file = dir.join(format!("{net}.safetensors"));
        std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
    })
}

fn wait_for_rows(progress: &Path, rows: usize, child: &mut std::process::Child) {
    let start = Instant::now();
    loop {
        if progress.is_file() && data_rows(progress).len() >= rows {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("training exited early: {status}");
        }
        assert!(start.elapsed() < Duration::from_secs(120), "no progress");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts a long cartpole run in the background and returns it with its run directory.
fn spawn_long(logdir: &Path, run: &str) -> (std::process::Child, std::path::PathBuf) {
    let child = spawn_cartpole(logdir, run);
    let parent = logdir.join("cartpole").join(run);
    while !parent.is_dir() || std::fs::read_dir(&parent).unwrap().count() == 0 {
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, only_run(&parent))
}

#[test]
fn kill_9_mid_run_leaves_a_resumable_dir() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, run) = spawn_long(dir.path(), "k");
    wait_for_rows(&run.join("progress.csv"), 3, &mut child);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let rows = data_rows(&run.join("progress.csv")).len();
    let o = gait(&["train", "ppo", "--previous", run.to_str().unwrap(), "--timesteps", "20000"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    // Resumes at the last complete iteration, or repeats it if the kill hit between its CSV
    // row and its resume state: at most one iteration lost.
    let from: usize = out
        .split("from iteration ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!(from == rows || from + 1 == rows, "resumed from {from}, {rows} rows written");
}

#[test]
fn ctrl_c_saves_and_says_how_to_resume() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, run) = spawn_long(dir.path(), "c");
    wait_for_rows(&run.join("progress.csv"), 2, &mut child);
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let o = child.wait_with_output().unwrap();
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(130), "{out}{}", stderr(&o));
    assert!(out.contains("interrupted:"), "{out}");
    assert!(out.contains(&format!("gait train ppo --previous {}", run.display())), "{out}");
    assert!(run.join("resume.safetensors").is_file());
    let o = gait(&["train", "ppo", "--previous", run.to_str().unwrap(), "--timesteps", "20000"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `--time-limit`: the run stops after the first iteration that ends past the limit, exits 4,
/// says how to continue and records `time-limit` in `summary.json`; its continuation (which
/// inherits the limit, lifted here with `--time-limit 0`) finishes with the rows of a run that
/// never stopped.
#[test]
fn a_time_limit_stops_the_run_resumably_with_exit_4() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path();
    let full = trained_cartpole(logs, "full", &["--timesteps", "12000", "--seed", "4"]);
    let limited = ["--timesteps", "12000", "--seed", "4", "--time-limit", "1e-5"];
    let o = common::train_cartpole(logs, "limited", &limited);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(4), "{out}{}", stderr(&o));
    let run = only_run(&logs.join("cartpole").join("limited"));
    assert!(out.contains("time limit: 0.00001 min of training reached after"), "{out}");
    assert!(out.contains(&format!("gait train ppo --previous {}", run.display())), "{out}");
    let summary = std::fs::read_to_string(run.join("summary.json")).unwrap();
    assert!(summary.contains("\"status\": \"time-limit\""), "{summary}");
    assert_eq!(data_rows(&run.join("progress.csv")).len(), 1, "one iteration");

    let o = gait(&["train", "ppo", "--previous", run.to_str().unwrap(), "--time-limit", "0"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains("warning: time-limit: 0.00001 -> 0"), "{out}");
    let cont = common::continuation_of(&run);
    let rows = [data_rows(&run.join("progress.csv")), data_rows(&cont.join("progress.csv"))];
    assert_eq!(rows.concat(), data_rows(&full.join("progress.csv")), "the stop changed the rows");
    let o = gait(&["train", "ppo", "--env", "cartpole", "--time-limit", "-1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn bad_previous_inputs_fail_clearly_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let good = trained_cartpole(&logs, "good", &["--timesteps", "4000"]);
    // A damaged copy of the run: truncated experiment.json, and one with a corrupt checkpoint.
    let truncated = logs.join("cartpole").join("truncated");
    let corrupt = logs.join("cartpole").join("corrupt");
    for copy in [&truncated, &corrupt] {
        std::fs::create_dir_all(copy).unwrap();
        for e in std::fs::read_dir(&good).unwrap().flatten() {
            std::fs::copy(e.path(), copy.join(e.file_name())).unwrap();
        }
    }
    let json = std::fs::read(truncated.join("experiment.json")).unwrap();
    std::fs::write(truncated.join("experiment.json"), &json[..json.len() / 2]).unwrap();
    let state = std::fs::read(corrupt.join("resume.safetensors")).unwrap();
    std::fs::write(corrupt.join("resume.safetensors"), &state[..state.len() - 100]).unwrap();
    let missing = logs.join("nope");
    let file = good.join("progress.csv");
    let f = file.to_str().unwrap();
    let not_run = logs.join("cartpole");
    let (g, t, c, m, n) = (
        good.to_str().unwrap(),
        truncated.to_str().unwrap(),
        corrupt.to_str().unwrap(),
        missing.to_str().unwrap(),
        not_run.to_str().unwrap(),
    );
    let cases: Vec<(Vec<&str>, i32, String)> = vec![
        (vec!["--previous", m], 2, format!("--previous {m}: no such directory")),
        (vec!["--previous", n], 2, format!("--previous {n} is not a gait run directory")),
        (
            vec!["--previous", f],
            2,
            format!("--previous {f} is a file; give the run directory that holds experiment.json"),
        ),
        (
            vec!["--previous", g, "--env", "pendulum"],
            2,
            "is a run of env 'cartpole', not 'pendulum'".into(),
        ),
        (
            vec!["--previous", g, "--layers", "32,32"],
            2,
            "network mismatch: the previous run has (obs 4, act 1, Ff 64x64".into(),
        ),
        (vec!["--previous", t], 1, "experiment.json is truncated or invalid".into()),
        (vec!["--previous", c], 1, "cannot read checkpoint".into()),
        (vec!["--previous-best"], 2, "--previous <PREVIOUS>".into()),
        (vec!["--env", "mountaincar", "--mirror", "1"], 2, "env 'mountaincar' has none".into()),
    ];
    let before = snapshot(dir.path());
    for (flags, code, message) in &cases {
        let mut argv = vec!["train", "ppo", "--logdir", logs.to_str().unwrap()];
        argv.extend_from_slice(flags);
        let o = gait(&argv);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(*code), "{flags:?}: {err}");
        assert!(err.contains(message.as_str()), "{flags:?}: {err}");
        assert_eq!(
            err.trim().lines().count().min(3),
            if *code == 2 && flags[0] == "--previous-best" { 3 } else { 1 },
            "{flags:?}: one line: {err}"
        );
        assert!(snapshot(dir.path()) == before, "{flags:?} changed files");
    }
    // gait eval on broken run dirs.
    for (path, code, message) in [
        (m, 2, "no such directory"),
        (n, 2, "is not a gait run directory"),
        (f, 2, "is a file; give the run directory"),
        (t, 1, "experiment.json is truncated or invalid"),
    ] {
        let o = gait(&["eval", "--path", path]);
        assert_eq!(o.status.code(), Some(code), "{}", stderr(&o));
        assert!(stderr(&o).contains(message), "{}", stderr(&o));
    }
    assert!(snapshot(dir.path()) == before);
}

/// `--learn-log-std`: σ is trained (its `Policy/Std` column moves away from the start value),
/// saved with the weights and restored by `--previous`: 2 + 2 iterations give the rows of 4.
#[test]
fn learned_log_std_is_logged_trained_and_resumed_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path();
    let flags = ["--learn-log-std", "--seed", "2"];
    let full = trained_cartpole(logs, "full", &[&["--timesteps", "16000"], &flags[..]].concat());
    let first = trained_cartpole(logs, "part", &[&["--timesteps", "8000"], &flags[..]].concat());
    let o = gait(&["train", "ppo", "--previous", first.to_str().unwrap(), "--timesteps", "16000"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let cont = common::continuation_of(&first);
    let rows = |d: &Path| data_rows(&d.join("progress.csv"));
    assert_eq!([rows(&first), rows(&cont)].concat(), rows(&full), "resumed run diverged");

    let std = common::csv_column(&full.join("progress.csv"), "Policy/Std");
    assert_eq!(std.len(), 4);
    let std: Vec<f64> = std.into_iter().map(|s| s.expect("Policy/Std logged")).collect();
    assert!(std.iter().all(|s| s.is_finite() && *s > 0.0), "{std:?}");
    assert!(std.iter().any(|s| (s - 0.5).abs() > 1e-4), "σ never moved from 0.5: {std:?}");
    let exp = gait::logging::Experiment::load(&cont).unwrap();
    assert!(exp.config.net.learn_log_std, "inherited by --previous");
}

/// `--std-decay`: the fixed σ of each iteration is `--std` × (1 − decay × steps before its
/// collection / `--timesteps`), logged as `Policy/Std`, and a continuation with a larger
/// `--timesteps` follows its own stretched schedule from the restored weights (not the σ they
/// were saved with), as `--lr-decay` does.
#[test]
fn a_decaying_std_follows_its_schedule_through_a_continuation() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path();
    let flags = ["--std", "0.5", "--std-decay", "0.8", "--seed", "5", "--timesteps", "16000"];
    let first = trained_cartpole(logs, "first", &flags);
    let o = gait(&["train", "ppo", "--previous", first.to_str().unwrap(), "--timesteps", "24000"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let cont = common::continuation_of(&first);
    let mut before = 0.0f64;
    for (run, timesteps) in [(&first, 16000.0f64), (&cont, 24000.0)] {
        let progress = run.join("progress.csv");
        let steps = common::csv_column(&progress, "Time/Total Timesteps");
        let std = common::csv_column(&progress, "Policy/Std");
        assert!(!std.is_empty());
        for (s, total) in std.iter().zip(&steps) {
            let expected = 0.5 * (1.0 - 0.8 * (before / timesteps).min(1.0));
            let s = s.expect("Policy/Std logged");
            assert!((s - expected).abs() < 1e-6, "σ {s} after {before} steps: {expected} expected");
            before = total.expect("steps logged");
        }
    }
    assert!(before >= 24000.0, "the continuation ran to its target");
}
