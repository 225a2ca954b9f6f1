//! Same seed -> identical numbers. Trajectories are seeded per job, not per worker, so this
//! holds for different worker counts too; a different seed gives different numbers.

mod common;

use gait::algos::train::{train_ppo, TrainOptions};

fn progress(dir: &std::path::Path, flags: &[&str]) -> String {
    let args = common::quick(dir, flags);
    let out = train_ppo(&args, vec![], TrainOptions { quiet: true }).unwrap();
    std::fs::read_to_string(out.run_dir.join("progress.csv")).unwrap()
}

#[test]
fn same_seed_gives_identical_progress_csv() {
    let dir = tempfile::tempdir().unwrap();
    let base = ["--timesteps", "16000", "--seed", "5"];
    let a = progress(dir.path(), &[&base[..], &["--workers", "2"]].concat());
    let b = progress(dir.path(), &[&base[..], &["--workers", "2"]].concat());
    assert_eq!(a, b);
    assert!(a.lines().count() >= 4, "{a}");
    let c = progress(dir.path(), &[&base[..], &["--workers", "1"]].concat());
    assert_eq!(a, c, "worker count changed the numbers");
    let d = progress(dir.path(), &["--timesteps", "16000", "--seed", "6", "--workers", "2"]);
    assert_ne!(a, d, "a different seed gave the same run");
}
