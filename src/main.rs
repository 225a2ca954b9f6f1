#![warn(clippy::too_many_lines)]

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use gait::algos::train::{train, Stop};
use gait::cli::{self, Action};
use gait::config::UsageError;
use gait::stdio::{eline, Stdout};

fn main() -> ExitCode {
    gait::malloc_tuning::tune();
    gait::envs::cassie::route_mujoco_messages();
    // Under an MPI launcher (`--features mpi`): MPI lives as long as `main`, ranks above 0 of a
    // training serve sampler jobs, and rank 0 releases them however it ends.
    #[cfg(feature = "mpi")]
    let _universe = gait::algos::mpi::init();
    #[cfg(feature = "mpi")]
    if _universe.is_some() {
        let (rank, size) = gait::algos::mpi::rank_and_size();
        if rank > 0 && std::env::args().nth(1).as_deref() == Some("train") {
            // Rank 0 answers Ctrl-C for the job; a serving rank waits for its stop message.
            install_signal_handler("stopping: rank 0 saves the run", SECOND_TRAIN);
            return match gait::algos::mpi::serve() {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => report(e.context(format!("MPI rank {rank}"))),
            };
        }
        if rank == 0 && size > 1 {
            let code = run();
            gait::algos::mpi::release_servers();
            return code;
        }
    }
    run()
}

/// The command line's action, start to exit code.
fn run() -> ExitCode {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let parsed = match cli::parse(&argv) {
        Ok(parsed) => parsed,
        Err(e) => match e.downcast::<clap::Error>() {
            // Printed and returned, not `exit()`ed, so that MPI is finalized on the way out.
            Ok(clap_error) => {
                let _ = clap_error.print();
                return ExitCode::from(clap_error.exit_code().clamp(0, 255) as u8);
            }
            Err(e) => return report(e),
        },
    };
    for note in &parsed.notes {
        // `--print-config` output is a TOML file: its notes go to stderr.
        if matches!(parsed.action, Action::PrintConfig(_)) {
            eline(note);
        } else {
            let _ = writeln!(std::io::stdout(), "{note}");
        }
    }
    run_action(parsed.action, &argv)
}

/// Runs what the command line resolved, to its exit code.
fn run_action(action: Action, argv: &[OsString]) -> ExitCode {
    let result = match action {
        Action::Train(job) => {
            install_signal_handler(
                "stopping: abandoning the current iteration (Ctrl-C again to exit at once)",
                SECOND_TRAIN,
            );
            let command = argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
            let mut terminal = gait::cli::Terminal::new(job.config.run.timesteps);
            match train(&job, command, &mut terminal) {
                // Saved and resumable, but not finished: scripts and Slurm must be able to tell.
                Ok(outcome) => match outcome.stopped {
                    Some(Stop::Interrupted) => return ExitCode::from(EXIT_INTERRUPTED),
                    Some(Stop::TimeLimit) => return ExitCode::from(EXIT_TIME_LIMIT),
                    None => Ok(()),
                },
                other => other.map(|_| ()),
            }
        }
        // The TOML is the command's output: a write that fails (a full disk) is an error.
        Action::PrintConfig(config) => {
            let mut out = std::io::stdout().lock();
            out.write_all(config.to_toml().as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| anyhow::anyhow!("--print-config: writing the config to stdout: {e}"))
        }
        Action::Eval(args) => {
            install_signal_handler(
                "stopping: writing what ran (Ctrl-C again to exit at once)",
                SECOND_EVAL,
            );
            match gait::eval::run_eval(&args, &mut Stdout::default()) {
                Ok(summary) if summary.interrupted => return ExitCode::from(EXIT_INTERRUPTED),
                other => other.map(|_| ()),
            }
        }
        Action::Play(args) => {
            install_signal_handler("stopping the server", SECOND_EVAL);
            match gait::play::run_play(&args, &mut Stdout::default()) {
                Ok(gait::play::PlayEnd::Interrupted) => return ExitCode::from(EXIT_INTERRUPTED),
                other => other.map(|_| ()),
            }
        }
        Action::Check(args) => {
            install_signal_handler("stopping: reporting the cells that completed", SECOND_EVAL);
            match gait::check::run_check(&args, &mut Stdout::default()) {
                Ok(report) if report.interrupted => return ExitCode::from(EXIT_INTERRUPTED),
                Ok(report) if !report.passed() => return ExitCode::from(EXIT_CHECK_MISSED),
                other => other.map(|_| ()),
            }
        }
        Action::Export(args) => {
            // A signal during the export waits for its pair of files (model and controller):
            // both are written, or neither.
            install_signal_handler("stopping: after the export's two files", SECOND_EXPORT);
            let result = gait::export::run_export(&args, &mut Stdout::default());
            if result.is_ok() && gait::algos::interrupt::requested() {
                eline("interrupted: the model and its controller were both written");
                return ExitCode::from(EXIT_INTERRUPTED);
            }
            result.map(|_| ())
        }
        Action::BenchEnv(args) => gait::bench::bench_env(&args).map(|_| ()),
        Action::BenchOptimize(args) => gait::bench::bench_optimize(&args).map(|_| ()),
        Action::Plot(args) => gait::plot::run_plot(&args).map(|out| {
            let _ = writeln!(std::io::stdout(), "wrote {}", out.display());
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => report(e),
    }
}

/// Exit code of `gait check` when it ran and a cell is not within the task's bounds (so that
/// a script can tell a failed check from a usage error, 2, or a failure to run, 1).
const EXIT_CHECK_MISSED: u8 = 3;

/// Exit code of a run stopped by Ctrl-C/SIGTERM (128 + SIGINT, what shells report).
const EXIT_INTERRUPTED: u8 = 130;

/// Exit code of a run stopped at `--time-limit` (saved and resumable, not finished), so that a
/// job script can tell it from a finished run (0) and queue the continuation.
const EXIT_TIME_LIMIT: u8 = 4;

/// One line on stderr; exit code 2 for usage errors, 1 for runtime errors, 130 for a stop
/// requested before anything was saved.
fn report(e: anyhow::Error) -> ExitCode {
    if e.chain().any(|c| c.is::<gait::algos::interrupt::Interrupted>()) {
        eline(format_args!("interrupted ({e:#}): nothing was saved"));
        return ExitCode::from(EXIT_INTERRUPTED);
    }
    eline(format_args!("error: {e:#}"));
    if e.downcast_ref::<UsageError>().is_some() {
        ExitCode::from(2)
    } else {
        ExitCode::FAILURE
    }
}

/// The second Ctrl-C's line in training: the run dir holds every iteration that completed.
const SECOND_TRAIN: &str =
    "second interrupt: exiting without waiting (the run dir holds the last complete iteration)";

/// The second Ctrl-C's line in `eval` and `check`, which have no run dir to keep.
const SECOND_EVAL: &str =
    "second interrupt: exiting without waiting (the episodes that ran are not reported)";

/// The second Ctrl-C's line in `export`: its temp files are swept by the next write to the
/// same output.
const SECOND_EXPORT: &str =
    "second interrupt: exiting without waiting (the output may hold the old model or none)";

/// First Ctrl-C/SIGTERM: stop after saving (see `algos::interrupt`), saying `first`; a second
/// one: exit now, saying `second`.
fn install_signal_handler(first: &'static str, second: &'static str) {
    let result = ctrlc::set_handler(move || {
        if gait::algos::interrupt::STOP.swap(true, std::sync::atomic::Ordering::SeqCst) {
            eline(second);
            // `_exit`, not `process::exit`: the latter runs libtorch's static destructors while
            // sampler threads still use it, which segfaulted (exit 139) in 4 of 6 tries. Every
            // file is written atomically, so skipping teardown loses nothing.
            // SAFETY: `_exit` only ends the process; it takes no pointers and cannot return.
            unsafe { libc::_exit(i32::from(EXIT_INTERRUPTED)) };
        }
        eline(first);
    });
    if let Err(e) = result {
        eline(format_args!("warning: cannot install the Ctrl-C handler: {e}"));
    }
}
