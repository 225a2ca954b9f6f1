//! Same seed -> identical numbers. Trajectories are seeded per job, not per worker, so this
//! holds for different worker counts too; a different seed gives different numbers.

mod common;

use gait::algos::train::{train, Quiet};

/// The tests of this file train one after the other. Two trainings optimizing at the same time
/// in one process once gave optimizer losses 1e-9 apart in CI (libtorch's threading and BLAS
/// state is process-wide); `gait train` runs one training per process, and the resume tests,
/// which compare rows across separate processes, hold the promise there.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn progress(dir: &std::path::Path, flags: &[&str]) -> String {
    let args = common::quick(dir, flags);
    let out = train(&args, vec![], &mut Quiet).unwrap();
    std::fs::read_to_string(out.run_dir.join("progress.csv")).unwrap()
}

#[test]
fn same_seed_gives_identical_progress_csv() {
    let _serial = one_at_a_time();
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

/// The runner's sampler seam: a runner whose experience comes through another `Collect` (here a
/// wrapper that records every request and forwards it, as a remote sampler would) logs the
/// same rows as `train` with local samplers, one request per iteration.
#[test]
fn a_runner_through_another_sampler_logs_the_same_rows() {
    let _serial = one_at_a_time();
    use std::sync::{Arc, Mutex};

    use gait::algos::runner::Runner;
    use gait::algos::{Collect, LocalSampler};
    use gait::algos::{CollectRequest, Collected, PolicySnapshot};

    struct Recording {
        inner: LocalSampler,
        seen: Arc<Mutex<Vec<(u64, usize)>>>,
    }
    impl Collect for Recording {
        fn collect(
            &mut self,
            request: &CollectRequest,
            policy: Arc<PolicySnapshot>,
            on_steps: &mut dyn FnMut(usize),
        ) -> anyhow::Result<Collected> {
            self.seen.lock().unwrap().push((request.iteration, request.num_eval));
            self.inner.collect(request, policy, on_steps)
        }
    }

    let dir = tempfile::tempdir().unwrap();
    let expected = progress(dir.path(), &["--timesteps", "12000", "--seed", "7", "--workers", "2"]);
    let mut job = common::quick(dir.path(), &["--timesteps", "12000", "--seed", "7"]);
    job.config.sampler.workers = Some(2);
    job.config.run.run_name = Some("seam".into());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let make = move |c: &gait::config::TrainConfig,
                     env: &gait::envs::EnvFactory,
                     spec: &gait::policies::NetSpec,
                     w: usize| {
        let inner = LocalSampler::spawn(env, c, spec, w)?;
        Ok(Box::new(Recording { inner, seen: Arc::clone(&log) }) as Box<dyn Collect>)
    };
    let env = gait::envs::factory(&job.config.run.env, &job.config.env).unwrap();
    let mut runner =
        Runner::start_with(&job.config, env, &job.start, vec![], &mut (), &make).unwrap();
    while !runner.is_done() {
        runner.iterate(&mut |_| {}).unwrap();
    }
    let rows = std::fs::read_to_string(runner.run_dir().join("progress.csv")).unwrap();
    assert_eq!(rows, expected);
    let seen = seen.lock().unwrap().clone();
    let iterations: Vec<u64> = seen.iter().map(|(i, _)| *i).collect();
    assert_eq!(iterations, (0..runner.state().iteration).collect::<Vec<_>>());
    assert!(seen.iter().any(|(_, eval)| *eval > 0), "evaluating iterations ask for eval episodes");
}

/// A run whose simulation keeps blowing up stops with one clear error: a sampler that reports
/// more than half of an iteration's train episodes blown up, three iterations in a row, ends the
/// run at the third, before that iteration is saved; two in a row and then one without do not.
#[test]
fn a_run_that_keeps_blowing_up_stops_with_an_error() {
    let _serial = one_at_a_time();
    use std::sync::Arc;

    use gait::algos::runner::Runner;
    use gait::algos::{Collect, CollectRequest, Collected, LocalSampler, PolicySnapshot};

    /// Reports every train episode of the listed iterations blown up.
    struct BlowingUp {
        inner: LocalSampler,
        at: Vec<u64>,
    }
    impl Collect for BlowingUp {
        fn collect(
            &mut self,
            request: &CollectRequest,
            policy: Arc<PolicySnapshot>,
            on_steps: &mut dyn FnMut(usize),
        ) -> anyhow::Result<Collected> {
            let mut collected = self.inner.collect(request, policy, on_steps)?;
            if self.at.contains(&request.iteration) {
                collected.physics_resets = collected.train.num_trajs();
            }
            Ok(collected)
        }
    }

    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, at: Vec<u64>| {
        let mut job = common::quick(dir.path(), &["--timesteps", "28000", "--seed", "7"]);
        job.config.run.run_name = Some(name.into());
        let make = move |c: &gait::config::TrainConfig,
                         env: &gait::envs::EnvFactory,
                         spec: &gait::policies::NetSpec,
                         w: usize| {
            let inner = LocalSampler::spawn(env, c, spec, w)?;
            Ok(Box::new(BlowingUp { inner, at: at.clone() }) as Box<dyn Collect>)
        };
        let env = gait::envs::factory(&job.config.run.env, &job.config.env).unwrap();
        let mut runner =
            Runner::start_with(&job.config, env, &job.start, vec![], &mut (), &make).unwrap();
        while !runner.is_done() {
            if let Err(e) = runner.iterate(&mut |_| {}) {
                return (runner.state().iteration, Some(format!("{e:#}")));
            }
        }
        (runner.state().iteration, None)
    };
    let (stopped_at, error) = run("steady", vec![1, 2, 3, 4]);
    assert_eq!(stopped_at, 3, "iterations 0-2 saved, the third blown-up one not");
    let error = error.expect("the run stops");
    assert!(error.contains("for 3 iterations in a row") && error.contains("lower its timestep"));
    let (iterations, error) = run("broken", vec![1, 2, 4, 5]);
    assert_eq!((iterations, error), (7, None), "two in a row do not stop a run");
}

/// `--scale-rewards` and `--normalize-returns` update their statistics once per iteration
/// from the assembled buffer, so the worker count still changes nothing; and each changes the
/// critic's targets (the losses).
#[test]
fn return_statistics_are_the_same_on_any_worker_count_and_change_the_update() {
    let _serial = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let plain = progress(dir.path(), &["--timesteps", "12000", "--seed", "5", "--workers", "2"]);
    // The first iteration collects with the same weights: the same train return, other losses.
    fn first(csv: &str) -> Vec<&str> {
        csv.lines().nth(1).unwrap().split(',').take(4).collect()
    }
    for flag in ["--scale-rewards", "--normalize-returns"] {
        let base = ["--timesteps", "12000", "--seed", "5", flag];
        let a = progress(dir.path(), &[&base[..], &["--workers", "2"]].concat());
        let b = progress(dir.path(), &[&base[..], &["--workers", "1"]].concat());
        assert_eq!(a, b, "{flag}: worker count changed the numbers");
        assert_eq!(first(&a), first(&plain), "{flag} changed what was collected");
        assert_ne!(a, plain, "{flag} changed nothing");
    }
}

/// `--eval-on-best-train false` evaluates at multiples of `--eval-freq` only, and evaluations
/// draw from streams of their own: the training columns, and every evaluation both runs made,
/// are the default run's.
#[test]
fn evaluating_only_at_the_frequency_changes_nothing_else() {
    let _serial = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let base = ["--timesteps", "16000", "--num-steps", "1000", "--seed", "5", "--eval-freq", "3"];
    let base = [&base[..], &["--num-eval-eps", "2"]].concat();
    let every = common::csv_rows_of(progress(dir.path(), &base).as_bytes());
    let only = [&base[..], &["--eval-on-best-train", "false"]].concat();
    let only = common::csv_rows_of(progress(dir.path(), &only).as_bytes());
    assert_eq!(every.len(), only.len());
    let on_freq: Vec<bool> = common::column(&every, "Iteration")
        .iter()
        .map(|i| (i.unwrap() as u64).is_multiple_of(3))
        .collect();
    let (a, b) = (common::column(&every, "Test/Return"), common::column(&only, "Test/Return"));
    assert!(
        a.iter().zip(&on_freq).any(|(t, &f)| t.is_some() && !f),
        "the default run never evaluated between multiples of --eval-freq: nothing is tested"
    );
    assert!(b.iter().filter(|t| t.is_some()).count() >= 2, "{b:?}");
    for ((a, b), &f) in a.iter().zip(&b).zip(&on_freq) {
        match f {
            true => assert_eq!(a, b, "an evaluation at the frequency changed"),
            false => assert_eq!(*b, None, "evaluated between multiples of --eval-freq"),
        }
    }
    for name in ["Train/Return", "Train/Episode Length", "Optimizer/Actor Loss", "Optimizer/KL"] {
        assert_eq!(common::column(&every, name), common::column(&only, name), "{name}");
    }
}
