//! `gait train ppo`: checks a [`TrainJob`] before anything is allocated, drives a [`Runner`]
//! with a progress bar and one terminal line per iteration, and writes `summary.json` however
//! the run ends.
//!
//! Deviations from the reference, on purpose:
//! * exactly `num_eval_eps` eval episodes whenever an iteration evaluates (never NaN);
//! * after the last iteration the final weights are evaluated, printed and returned, outside
//!   the per-iteration rows, so a run stopped and continued with `--previous` produces the same
//!   rows as an uninterrupted one;
//! * `Time/Timesteps per Second (FULL)` uses the steps actually collected;
//! * wall-clock scalars go to `timing.csv`, everything else to `progress.csv`
//!   (`logging::metrics`).

use std::path::PathBuf;

use anyhow::Result;

use super::interrupt::{self, Interrupted};
use super::runner::Runner;
use super::setup::SetupEvents;
use crate::config::{TrainConfig, TrainJob};
use crate::logging::summary::FinalEval;
use crate::logging::{self, RunStatus};

pub use crate::logging::metrics::{
    progress_columns, PROGRESS_COLUMNS, TIMING_COLUMNS, WALKING_COLUMNS,
};

/// What a finished [`train`] reports.
#[derive(Debug, Clone)]
pub struct TrainOutcome {
    /// The run directory.
    pub run_dir: PathBuf,
    /// Iterations completed.
    pub iterations: u64,
    /// Train steps collected in all.
    pub total_timesteps: u64,
    /// `Test/Return` of the evaluation that chose the best-eval weights.
    pub best_test_return: Option<f64>,
    /// Mean return of the deterministic evaluation of the final weights.
    pub final_test_return: Option<f64>,
    /// Mean episode length of that evaluation.
    pub final_test_len: Option<f64>,
    /// That evaluation in full (also in `summary.json`).
    pub final_eval: Option<FinalEval>,
    /// Why the run stopped before `--timesteps`, saved and resumable (`None`: it finished).
    pub stopped: Option<Stop>,
}

/// Why a run stopped before `--timesteps`; either way its dir holds the last complete
/// iteration, and `--previous` continues it exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// `--time-limit`.
    TimeLimit,
}

/// Where [`train`] reports: set-up events, lines for the user and progress in steps. The
/// CLI's terminal (a progress bar with lines above it) implements it; [`Quiet`] says nothing
/// but warnings.
pub trait TrainReport: SetupEvents {
    /// A line for the user: the run dir, one per iteration, the final evaluation.
    fn say(&mut self, line: &str);
    /// Training steps collected so far (capped at `--timesteps`).
    fn progress(&mut self, _steps: u64) {}
    /// The run is over: clear any live display before the last lines.
    fn finish(&mut self) {}
}

/// A [`TrainReport`] that prints only set-up warnings (tests, library users with their own
/// logging).
#[derive(Debug, Default)]
pub struct Quiet;

impl SetupEvents for Quiet {}

impl TrainReport for Quiet {
    fn say(&mut self, _line: &str) {}
}

/// Trains as `job` says (its algorithm is `job.config.run.algo`, PPO or A2C), reporting to `report`; `command` is recorded in
/// `experiment.json`.
pub fn train(
    job: &TrainJob,
    command: Vec<String>,
    report: &mut dyn TrainReport,
) -> Result<TrainOutcome> {
    // The runner checks the config, the worker count and the memory before allocating.
    let config = &job.config;
    let mut runner = start_runner(config, &job.start, command, report)?;
    // From here on the run dir exists: however the run ends, `summary.json` says how.
    let result = drive(&mut runner, report, job.start.previous());
    report.finish();
    let state = runner.state();
    let status = match &result {
        Ok(o) => match o.stopped {
            Some(Stop::Interrupted) => RunStatus::Interrupted,
            Some(Stop::TimeLimit) => RunStatus::TimeLimit,
            None => RunStatus::Completed,
        },
        Err(_) => RunStatus::Failed,
    };
    let summary = state.summary(
        status,
        runner.elapsed_s(),
        result.as_ref().ok().and_then(|o| o.final_eval.clone()),
        result.as_ref().err().map(|e| format!("{e:#}")),
    );
    if let Err(e) = summary.save(runner.run_dir()) {
        crate::stdio::eline(format!(
            "warning: cannot write {}: {e:#}",
            runner.run_dir().join(logging::summary::SUMMARY_JSON).display()
        ));
    }
    result
}

/// The runner, sampling on this machine, or with `--features mpi` under an MPI launcher of
/// more than one rank, on every rank ([`super::sampler::mpi`]).
fn start_runner(
    config: &TrainConfig,
    start: &crate::config::Start,
    command: Vec<String>,
    report: &mut dyn TrainReport,
) -> Result<Runner> {
    #[cfg(feature = "mpi")]
    if mpi_ranks() > 1 {
        use super::sampler::mpi::MpiSampler;
        report.say(&format!("sampling on {} MPI ranks (rank 0 learns and samples)", mpi_ranks()));
        // Every rank builds its envs from the registry (`config.run.env`).
        config.validate()?;
        let env = crate::envs::factory(&config.run.env, &config.env)?;
        return Runner::start_with(
            config,
            env,
            start,
            command,
            report,
            &|config, _, spec, workers| Ok(Box::new(MpiSampler::connect(config, spec, workers)?)),
        );
    }
    Runner::start(config, start, command, report)
}

/// The MPI world's size (1 without a launcher).
#[cfg(feature = "mpi")]
fn mpi_ranks() -> i32 {
    if mpi::environment::is_initialized() {
        super::sampler::mpi::rank_and_size().1
    } else {
        1
    }
}

/// Iterations until the configured timesteps (or a stop request), then the final evaluation.
fn drive(
    runner: &mut Runner,
    report: &mut dyn TrainReport,
    previous: Option<&std::path::Path>,
) -> Result<TrainOutcome> {
    let run_dir = runner.run_dir().to_path_buf();
    report.progress(runner.state().total_timesteps.min(runner.config().run.timesteps));
    report.say(&format!("run dir: {}", run_dir.display()));
    if let Some(prev) = previous {
        let state = runner.state();
        report.say(&format!(
            "continuing {} from iteration {} ({} steps)",
            prev.display(),
            state.iteration,
            state.total_timesteps
        ));
    }
    let first_iteration = runner.state().iteration;
    let stopped = iterate(runner, report)?;
    let state = runner.state().clone();
    let outcome = TrainOutcome {
        run_dir: run_dir.clone(),
        iterations: state.iteration,
        total_timesteps: state.total_timesteps,
        best_test_return: state.best_test,
        final_test_return: None,
        final_test_len: None,
        final_eval: None,
        stopped,
    };
    let again = format!("gait train {} --previous", runner.config().run.algo.name());
    if stopped == Some(Stop::Interrupted) && state.iteration == first_iteration {
        stopped_before_first(&run_dir, previous, &again, report);
        return Ok(outcome);
    }
    if let Some(stop) = stopped {
        report.finish();
        let why = match stop {
            Stop::Interrupted => "interrupted".to_string(),
            Stop::TimeLimit => format!(
                "time limit: {} min of training reached after {:.1} min",
                runner.config().run.time_limit,
                runner.elapsed_s() / 60.0
            ),
        };
        report.say(&format!(
            "{why}: {} holds iteration {} complete; continue with:\n  {again} {}",
            run_dir.display(),
            state.iteration as i64 - 1,
            run_dir.display()
        ));
        return Ok(outcome);
    }
    let final_eval = match runner.final_eval() {
        Err(e) if e.is::<Interrupted>() => {
            // Every iteration is saved: only the final evaluation's report is lost.
            report.finish();
            report.say(&format!(
                "interrupted during the final evaluation: {} holds all {} iterations, saved \
                 (`gait eval --path {}` evaluates them)",
                run_dir.display(),
                state.iteration,
                run_dir.display()
            ));
            return Ok(TrainOutcome { stopped: Some(Stop::Interrupted), ..outcome });
        }
        other => other?,
    };
    report_done(runner, final_eval.as_ref(), report);
    Ok(TrainOutcome {
        final_test_return: final_eval.as_ref().map(|e| e.mean_return),
        final_test_len: final_eval.as_ref().map(|e| e.mean_length),
        final_eval,
        ..outcome
    })
}

/// Runs iterations until the run is done; why it stopped before, if it did (a stop request,
/// or `--time-limit`).
fn iterate(runner: &mut Runner, report: &mut dyn TrainReport) -> Result<Option<Stop>> {
    let timesteps = runner.config().run.timesteps;
    let limit_s = runner.config().run.time_limit * 60.0;
    while !runner.is_done() {
        match runner.iterate(&mut |total| report.progress(total.min(timesteps))) {
            Ok(iteration) => {
                report.progress(iteration.total_timesteps.min(timesteps));
                report.say(&iteration.terminal_line());
            }
            Err(e) if e.is::<Interrupted>() => return Ok(Some(Stop::Interrupted)),
            Err(e) => return Err(e),
        }
        if interrupt::requested() {
            return Ok(Some(Stop::Interrupted));
        }
        if limit_s > 0.0 && runner.elapsed_s() >= limit_s && !runner.is_done() {
            return Ok(Some(Stop::TimeLimit));
        }
    }
    Ok(None)
}

/// A stop before the first iteration completed: nothing to continue from, so the run dir (ours,
/// made moments ago, holding no result of its own; a continuation's holds the best weights
/// copied from the run it continues) is removed, and the run before is named to continue from.
fn stopped_before_first(
    run_dir: &std::path::Path,
    previous: Option<&std::path::Path>,
    again: &str,
    report: &mut dyn TrainReport,
) {
    report.finish();
    let removed = std::fs::remove_dir_all(run_dir).is_ok();
    let left = if removed {
        format!(" (the run dir {} was removed)", run_dir.display())
    } else {
        format!("; {} holds no checkpoint", run_dir.display())
    };
    let again = previous.map_or(String::new(), |prev| {
        format!("; continue from the run before with:\n  {again} {}", prev.display())
    });
    report.say(&format!(
        "interrupted before the first iteration completed: nothing was saved{left}{again}"
    ));
}

/// The final evaluation's line and the run's closing line.
fn report_done(runner: &Runner, final_eval: Option<&FinalEval>, report: &mut dyn TrainReport) {
    let state = runner.state();
    if let Some(eval) = final_eval {
        let speeds: String = eval.metrics.iter().map(|(k, v)| format!(", {k} {v:.3}")).collect();
        report.say(&format!(
            "final eval of the last weights ({} episodes): return {:.2}, episode length {:.1}{speeds}",
            eval.episodes, eval.mean_return, eval.mean_length
        ));
    }
    let selection = state.best_selection.map_or(String::new(), |s| {
        let cells = s.cells.map_or(String::new(), |n| format!(", {n} cells within"));
        format!(", tracking error {:.3}{cells}", s.error)
    });
    report.say(&format!(
        "done: {} iterations, {} steps in {:.1} s; best-eval weights: Test/Return \
         {}{selection}; run dir {}",
        state.iteration,
        state.total_timesteps,
        runner.elapsed_s(),
        state.best_test.map_or("-".to_string(), |b| format!("{b:.2}")),
        runner.run_dir().display()
    ));
}
