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
//!   ([`crate::logging::metrics`]).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use super::interrupt::{self, Interrupted};
use super::runner::{Runner, SetupEvents};
use crate::config::{TrainConfig, TrainJob, UsageError};
use crate::logging::summary::FinalEval;
use crate::logging::{self, RunStatus, RunSummary};
use crate::policies::{NetSpec, StdSpec};

pub use crate::logging::metrics::{PROGRESS_COLUMNS, TIMING_COLUMNS};

/// How the loop reports to the terminal.
#[derive(Debug, Clone, Copy, Default)]
pub struct TrainOptions {
    /// No per-iteration lines and no progress bar (tests).
    pub quiet: bool,
}

#[derive(Debug, Clone)]
pub struct TrainOutcome {
    pub run_dir: PathBuf,
    pub iterations: u64,
    pub total_timesteps: u64,
    pub best_test_return: Option<f64>,
    /// Mean return of the deterministic evaluation of the final weights.
    pub final_test_return: Option<f64>,
    pub final_test_len: Option<f64>,
    /// That evaluation in full (also in `summary.json`).
    pub final_eval: Option<FinalEval>,
    /// True when Ctrl-C/SIGTERM stopped the run early.
    pub interrupted: bool,
}

/// Builds the network spec for an env of the given sizes.
pub fn net_spec(
    config: &TrainConfig,
    obs_dim: usize,
    act_dim: usize,
) -> Result<NetSpec, UsageError> {
    let net = &config.net;
    if net.arch == crate::policies::Arch::Lstm && net.layers.windows(2).any(|w| w[0] != w[1]) {
        let layers: Vec<String> = net.layers.iter().map(usize::to_string).collect();
        return Err(UsageError(format!(
            "--arch lstm needs equal --layers widths (one stacked LSTM), got {}",
            layers.join(",")
        )));
    }
    let values = if let Some(array) = &net.std_array {
        if array.len() != act_dim {
            return Err(UsageError(format!(
                "--std-array has {} values but env '{}' has {act_dim} action{}",
                array.len(),
                config.run.env,
                if act_dim == 1 { "" } else { "s" }
            )));
        }
        array.iter().map(|&s| s as f32).collect()
    } else {
        vec![net.std as f32; act_dim]
    };
    let std = if net.learn_std {
        StdSpec::Learned
    } else if net.learn_log_std {
        StdSpec::LogParam(values)
    } else {
        StdSpec::Fixed(values)
    };
    Ok(NetSpec {
        obs_dim,
        act_dim,
        arch: net.arch,
        layers: net.layers.clone(),
        nonlinearity: net.nonlinearity,
        std,
        obs_clip: (net.obs_clip > 0.0).then_some(net.obs_clip as f32),
    })
}

/// The most sampler workers per available core. Each worker is a thread with its own env
/// and network copy; far past the core count they only add switching (1000 workers on 2 cores
/// ran 7x slower than 2) and, in the millions, exhaust threads.
pub const MAX_WORKERS_PER_CORE: usize = 16;

/// Bytes per parameter the process holds: actor+critic as f32 parameters, gradients, the
/// optimizer's flat copy and two Adam moments (5 x 4), the f64 broadcast snapshot (8), plus
/// one f32 copy per sampler worker (added by [`check_resources`]).
const BYTES_PER_PARAM: u128 = 5 * 4 + 8;

/// Bytes per buffered step beyond its observation and action floats: reward, value, return,
/// advantage, log-probability and bookkeeping, and the whole row copied once more into the
/// optimizer's tensors (the factor 2 in [`check_resources`]).
const BUFFER_EXTRA_FLOATS: u128 = 8;

/// Checks the worker count, the networks' memory and the experience buffer's (`buffer_steps`
/// steps per iteration) before anything is allocated or created; returns a warning for
/// oversubscribed workers.
pub fn check_resources(
    spec: &NetSpec,
    workers: usize,
    cores: usize,
    buffer_steps: usize,
    available_bytes: Option<u128>,
) -> Result<Option<String>, UsageError> {
    let cap = MAX_WORKERS_PER_CORE * cores;
    if workers > cap {
        return Err(UsageError(format!(
            "--workers {workers} is more than {MAX_WORKERS_PER_CORE} per core ({cores} cores, \
             at most {cap}); past the core count extra workers only slow sampling down"
        )));
    }
    let params = spec.num_params();
    let needed = params * (BYTES_PER_PARAM + 4 * workers as u128);
    if let Some(available) = available_bytes {
        if needed > available {
            let layers: Vec<String> = spec.layers.iter().map(usize::to_string).collect();
            return Err(UsageError(format!(
                "--layers {}: the actor and critic have {params:.3e} parameters, about {:.1} GB \
                 with {workers} workers, more than the {:.1} GB of memory available",
                layers.join(","),
                needed as f64 / 1e9,
                available as f64 / 1e9,
            )));
        }
        let row = (spec.obs_dim + spec.act_dim) as u128 + BUFFER_EXTRA_FLOATS;
        let buffer = buffer_steps as u128 * row * 4 * 2;
        if needed + buffer > available {
            return Err(UsageError(format!(
                "--num-steps {buffer_steps}: one iteration's experience takes about {:.1} GB, \
                 more than the {:.1} GB of memory available besides the networks",
                buffer as f64 / 1e9,
                available.saturating_sub(needed) as f64 / 1e9,
            )));
        }
    }
    Ok((workers > cores).then(|| {
        format!(
            "warning: --workers {workers} on {cores} cores: sampling is fastest with one worker \
             per core; results do not depend on the worker count"
        )
    }))
}

/// `MemAvailable` from `/proc/meminfo` (Linux), in bytes.
pub(crate) fn available_memory() -> Option<u128> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u128 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The terminal: a progress bar, and lines printed above it (nothing when quiet).
struct Terminal {
    bar: ProgressBar,
    quiet: bool,
}

impl Terminal {
    fn new(total: u64, quiet: bool) -> Self {
        let bar = if quiet {
            ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden())
        } else {
            ProgressBar::new(total)
        };
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30}] {human_pos}/{human_len} steps ({rate}, ETA {eta}) {msg}",
            )
            .expect("a valid progress template")
            .with_key("rate", |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.0} steps/s", state.per_sec());
            })
            .progress_chars("=> "),
        );
        Self { bar, quiet }
    }

    fn say(&self, line: String) {
        if !self.quiet {
            // Ignore a closed stdout (e.g. piped into `head`): training goes on.
            self.bar.suspend(|| {
                let _ = writeln!(std::io::stdout(), "{line}");
            });
        }
    }
}

impl SetupEvents for Terminal {
    fn warning(&mut self, line: &str) {
        self.bar.suspend(|| crate::stdio::eline(line));
    }

    fn prenorm(&mut self, n: usize, total: usize) {
        self.bar.set_message(if n == 0 {
            format!("prenormalizing ({total} steps)")
        } else if n < total {
            format!("prenormalizing ({n}/{total})")
        } else {
            String::new()
        });
    }
}

/// Trains with PPO as `job` says; `command` is recorded in `experiment.json`.
pub fn train_ppo(job: &TrainJob, command: Vec<String>, opts: TrainOptions) -> Result<TrainOutcome> {
    // The runner checks the config, the worker count and the memory before allocating.
    let config = &job.config;
    let mut term = Terminal::new(config.run.timesteps, opts.quiet);
    let mut runner = start_runner(config, &job.start, command, &mut term)?;
    // From here on the run dir exists: however the run ends, `summary.json` says how.
    let result = drive(&mut runner, &term, job.start.previous());
    term.bar.finish_and_clear();
    let state = runner.state();
    let summary = RunSummary {
        status: match &result {
            Ok(o) if o.interrupted => RunStatus::Interrupted,
            Ok(_) => RunStatus::Completed,
            Err(_) => RunStatus::Failed,
        },
        iterations: state.iteration,
        total_timesteps: state.total_timesteps,
        elapsed_s: runner.elapsed_s(),
        best_test_return: state.best_test,
        final_eval: result.as_ref().ok().and_then(|o| o.final_eval.clone()),
        error: result.as_ref().err().map(|e| format!("{e:#}")),
    };
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
    term: &mut Terminal,
) -> Result<Runner> {
    #[cfg(feature = "mpi")]
    if mpi_ranks() > 1 {
        use super::sampler::mpi::MpiSampler;
        term.say(format!("sampling on {} MPI ranks (rank 0 learns and samples)", mpi_ranks()));
        return Runner::start_with(config, start, command, term, &|config, spec, workers| {
            Ok(Box::new(MpiSampler::connect(config, spec, workers)?))
        });
    }
    Runner::start(config, start, command, term)
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
    term: &Terminal,
    previous: Option<&std::path::Path>,
) -> Result<TrainOutcome> {
    let run_dir = runner.run_dir().to_path_buf();
    let timesteps = runner.config().run.timesteps;
    term.bar.set_position(runner.state().total_timesteps.min(timesteps));
    term.say(format!("run dir: {}", run_dir.display()));
    if let Some(prev) = previous {
        let state = runner.state();
        term.say(format!(
            "continuing {} from iteration {} ({} steps)",
            prev.display(),
            state.iteration,
            state.total_timesteps
        ));
    }
    let mut interrupted = false;
    while !runner.is_done() {
        let bar = &term.bar;
        match runner.iterate(&mut |total| bar.set_position(total.min(timesteps))) {
            Ok(report) => {
                term.bar.set_position(report.total_timesteps.min(timesteps));
                term.say(report.terminal_line());
            }
            Err(e) if e.is::<Interrupted>() => {
                interrupted = true;
                break;
            }
            Err(e) => return Err(e),
        }
        if interrupt::requested() {
            interrupted = true;
            break;
        }
    }
    let state = runner.state().clone();
    let outcome = TrainOutcome {
        run_dir: run_dir.clone(),
        iterations: state.iteration,
        total_timesteps: state.total_timesteps,
        best_test_return: state.best_test,
        final_test_return: None,
        final_test_len: None,
        final_eval: None,
        interrupted,
    };
    if interrupted && state.iteration == 0 {
        // Nothing to continue from: a run dir without a checkpoint would only be refused by
        // --previous and eval later. It is ours, made moments ago, and holds no result.
        term.bar.finish_and_clear();
        let removed = std::fs::remove_dir_all(&run_dir).is_ok();
        term.say(format!(
            "interrupted before the first iteration completed: nothing was saved{}",
            if removed {
                format!(" (the run dir {} was removed)", run_dir.display())
            } else {
                format!("; {} holds no checkpoint", run_dir.display())
            }
        ));
        return Ok(outcome);
    }
    if interrupted {
        term.bar.finish_and_clear();
        term.say(format!(
            "interrupted: {} holds iteration {} complete; continue with:\n  gait train ppo --previous {}",
            run_dir.display(),
            state.iteration as i64 - 1,
            run_dir.display()
        ));
        return Ok(outcome);
    }
    let final_eval = match runner.final_eval() {
        Err(e) if e.is::<Interrupted>() => {
            return Err(e.context("interrupted during the final evaluation"))
        }
        other => other?,
    };
    if let Some(eval) = &final_eval {
        let speeds: String = eval.metrics.iter().map(|(k, v)| format!(", {k} {v:.3}")).collect();
        term.say(format!(
            "final eval of the last weights ({} episodes): return {:.2}, episode length {:.1}{speeds}",
            eval.episodes, eval.mean_return, eval.mean_length
        ));
    }
    term.say(format!(
        "done: {} iterations, {} steps in {:.1} s; best Test/Return {}; run dir {}",
        state.iteration,
        state.total_timesteps,
        runner.elapsed_s(),
        state.best_test.map_or("-".to_string(), |b| format!("{b:.2}")),
        run_dir.display()
    ));
    Ok(TrainOutcome {
        final_test_return: final_eval.as_ref().map(|e| e.mean_return),
        final_test_len: final_eval.as_ref().map(|e| e.mean_length),
        final_eval,
        ..outcome
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::Arch;

    fn spec(layers: &[usize]) -> NetSpec {
        NetSpec { std: StdSpec::Fixed(vec![0.2; 10]), ..NetSpec::ff(40, 10, layers) }
    }

    #[test]
    fn resources_are_checked_with_numbers_in_the_message() {
        let small = spec(&[256, 256]);
        // Actor 41*256 + 257*256 + 257*10, critic with one output, plus 10 std entries.
        assert_eq!(
            small.num_params(),
            (41 * 256 + 257 * 256 + 257 * 10) + (41 * 256 + 257 * 256 + 257) + 10
        );
        assert_eq!(check_resources(&small, 2, 2, 10_000, Some(1 << 30)).unwrap(), None);
        let warning = check_resources(&small, 3, 2, 10_000, None).unwrap().expect("a warning");
        assert!(warning.contains("--workers 3 on 2 cores"), "{warning}");
        let err = check_resources(&small, 33, 2, 10_000, None).unwrap_err().to_string();
        assert!(
            err.contains("--workers 33 is more than 16 per core (2 cores, at most 32)"),
            "{err}"
        );
        let huge = spec(&[100_000, 100_000]);
        let err =
            check_resources(&huge, 2, 2, 10_000, Some(24_000_000_000)).unwrap_err().to_string();
        assert!(err.contains("--layers 100000,100000"), "{err}");
        assert!(err.contains("GB of memory available") && err.contains("24.0 GB"), "{err}");
        assert!(check_resources(&huge, 2, 2, 10_000, None).is_ok(), "no memory figure, no refusal");
        // The audit's D5: a buffer of 1e15 steps is refused before it grows.
        let err = check_resources(&small, 2, 2, 1_000_000_000_000_000, Some(24_000_000_000))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("--num-steps 1000000000000000: one iteration's"), "{err}");
    }

    /// The estimate matches the networks libtorch builds (up to the std entries, which are a
    /// buffer unless learned).
    #[test]
    fn the_parameter_estimate_matches_the_built_networks() {
        for arch in [Arch::Ff, Arch::Lstm] {
            let mut s = spec(&[32, 32]);
            s.arch = arch;
            let actor = crate::policies::Actor::new(&s, tch::Device::Cpu);
            let critic = crate::policies::Critic::new(&s, tch::Device::Cpu);
            let trainable: i64 = [actor.var_store(), critic.var_store()]
                .iter()
                .flat_map(|vs| vs.trainable_variables())
                .map(|t| t.numel() as i64)
                .sum();
            let estimate = s.num_params() as i64;
            assert!(
                (0..=10).contains(&(estimate - trainable)),
                "{arch:?}: {estimate} vs {trainable}"
            );
        }
    }

    #[test]
    fn lstm_parameters_count_four_gates() {
        let mut s = spec(&[8, 8]);
        s.arch = Arch::Lstm;
        let lstm = |i: u128, h: u128| 4 * (i + h + 2) * h;
        let expected = (lstm(40, 8) + lstm(8, 8) + 9 * 10) + (lstm(40, 8) + lstm(8, 8) + 9) + 10;
        assert_eq!(s.num_params(), expected);
    }
}
