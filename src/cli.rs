//! The `gait` command tree, and how env presets become defaults.

use std::ffi::OsString;

use clap::parser::ValueSource;
use clap::{CommandFactory, Parser, Subcommand};

use crate::bench::{BenchEnvArgs, BenchOptimizeArgs};
use crate::config::PpoArgs;
use crate::envs;

#[derive(Debug, Parser)]
#[command(
    name = "gait",
    version,
    about = "Train legged robots to walk with reinforcement learning"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Train a policy.
    #[command(subcommand)]
    Train(TrainCommand),
    /// Benchmarks that print machine-readable `key=value` results.
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(Debug, Subcommand)]
pub enum TrainCommand {
    /// Proximal Policy Optimization.
    #[command(allow_negative_numbers = true)]
    Ppo(Box<PpoArgs>),
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Env steps per second on one core with random actions, resets included.
    Env(BenchEnvArgs),
    /// PPO update throughput on a synthetic 50k-step buffer (3 epochs, 1 thread).
    Optimize(BenchOptimizeArgs),
}

/// Parses `argv`, letting the chosen env's preset replace defaults of `gait train ppo` flags the
/// user did not type. Returns the parsed CLI and the `flag=value` presets that were applied.
pub fn parse(argv: &[OsString]) -> Result<(Cli, Vec<String>), clap::Error> {
    let matches = Cli::command().try_get_matches_from(argv)?;
    let cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches)?;
    let Command::Train(TrainCommand::Ppo(args)) = &cli.command else {
        return Ok((cli, Vec::new()));
    };
    // An unknown env is reported later, with the list of available ones.
    let Ok(spec) = envs::spec(&args.env) else {
        return Ok((cli, Vec::new()));
    };
    let ppo = matches
        .subcommand_matches("train")
        .and_then(|m| m.subcommand_matches("ppo"))
        .expect("train ppo was parsed");
    let mut extra: Vec<OsString> = Vec::new();
    let mut applied = Vec::new();
    for (flag, value) in spec.preset {
        let id = flag.replace('-', "_");
        if ppo.value_source(&id) == Some(ValueSource::CommandLine) {
            continue;
        }
        applied.push(format!("{flag}={value}"));
        match *value {
            "true" => extra.push(format!("--{flag}").into()),
            "false" => {}
            v => extra.extend([format!("--{flag}").into(), OsString::from(v)]),
        }
    }
    if extra.is_empty() {
        return Ok((cli, applied));
    }
    // Re-parse with the preset flags inserted right after `ppo`; they only name flags the user
    // did not give, so nothing the user typed is overridden.
    let at = argv
        .iter()
        .position(|a| a == "ppo")
        .map_or(argv.len(), |i| i + 1);
    let mut argv2 = argv[..at].to_vec();
    argv2.extend(extra);
    argv2.extend_from_slice(&argv[at..]);
    Ok((Cli::try_parse_from(argv2)?, applied))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ppo(args: &[&str]) -> (PpoArgs, Vec<String>) {
        let argv: Vec<OsString> = args.iter().map(OsString::from).collect();
        let (cli, applied) = parse(&argv).unwrap();
        match cli.command {
            Command::Train(TrainCommand::Ppo(a)) => (*a, applied),
            _ => panic!("not train ppo"),
        }
    }

    #[test]
    fn preset_fills_defaults_but_never_overrides_typed_flags() {
        let (a, applied) = ppo(&[
            "gait",
            "train",
            "ppo",
            "--env",
            "cartpole",
            "--num-steps",
            "999",
        ]);
        assert_eq!(a.num_steps, 999);
        assert_eq!(a.traj_len, 400, "preset value");
        assert_eq!(a.layers, vec![64, 64]);
        assert!(applied.contains(&"traj-len=400".to_string()));
        assert!(!applied.iter().any(|p| p.starts_with("num-steps")));
    }

    #[test]
    fn bad_values_are_usage_errors() {
        for bad in [
            &["--kl", "0"][..],
            &["--a-lr", "-1"],
            &["--batch-size", "0"],
            &["--workers", "0"],
            &["--epochs", "0"],
            &["--layers", "64,x"],
            &["--timesteps", "1.5"],
            &["--discount", "1.5"],
        ] {
            let mut argv = vec!["gait", "train", "ppo"];
            argv.extend_from_slice(bad);
            let argv: Vec<OsString> = argv.iter().map(OsString::from).collect();
            let err = parse(&argv)
                .err()
                .unwrap_or_else(|| panic!("{bad:?} accepted"));
            assert_eq!(err.exit_code(), 2, "{bad:?}");
        }
    }

    #[test]
    fn timesteps_accept_scientific_notation() {
        let (a, _) = ppo(&["gait", "train", "ppo", "--timesteps", "2e5"]);
        assert_eq!(a.timesteps, 200_000);
    }
}
