use std::ffi::OsString;
use std::process::ExitCode;

use gait::algos::train::{train_ppo, TrainOptions};
use gait::cli::{self, BenchCommand, Command, TrainCommand};
use gait::config::UsageError;

fn main() -> ExitCode {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let (cli, applied) = match cli::parse(&argv) {
        Ok(parsed) => parsed,
        Err(e) => e.exit(),
    };
    let result = match cli.command {
        Command::Train(TrainCommand::Ppo(args)) => {
            if !applied.is_empty() {
                println!("env '{}' preset: {}", args.env, applied.join(" "));
            }
            let command = argv
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            train_ppo(&args, command, TrainOptions::default()).map(|_| ())
        }
        Command::Bench(BenchCommand::Env(args)) => gait::bench::bench_env(&args).map(|_| ()),
        Command::Bench(BenchCommand::Optimize(args)) => {
            gait::bench::bench_optimize(&args).map(|_| ())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            if e.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
