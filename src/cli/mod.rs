//! The command line: the only layer that knows flags. It parses `argv` into an [`Action`]
//! with typed settings ([`crate::config`]) that the library runs.

mod commands;
mod terminal;
mod train;

pub use terminal::Terminal;

use std::ffi::OsString;

use clap::{CommandFactory, Parser, Subcommand};

pub use commands::{
    BenchEnvFlags, BenchOptimizeFlags, CheckFlags, EvalFlags, ExportFlags, PhysicsFlags, PlayFlags,
    PlotFlags,
};
pub use train::{
    flag_of, resolve, shown, EnvSettings, Scope, SettingFlags, StartFlags, TrainCommand, TrainFlags,
};

use crate::bench::{BenchEnvOptions, BenchOptimizeOptions};
use crate::check::CheckOptions;
use crate::config::{presets, Algo, TrainConfig, TrainJob};
use crate::envs;
use crate::eval::EvalOptions;
use crate::export::ExportOptions;
use crate::play::PlayOptions;
use crate::plot::PlotOptions;

#[derive(Debug, Parser)]
#[command(
    name = "gait",
    version,
    about = "Train legged robots to walk with reinforcement learning"
)]
/// `gait`'s command line.
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// `gait`'s subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Train a policy.
    #[command(subcommand)]
    Train(TrainCommand),
    /// Run a trained policy deterministically and report returns and reward terms.
    Eval(EvalFlags),
    /// Drive a trained walking policy live from a browser page: a local server steps it in
    /// real time and the page steers it with the keyboard or a gamepad, pushes it and changes
    /// the ground.
    Play(PlayFlags),
    /// Check a walking policy on the task's commands, on each physics model: every cell
    /// (command, model) within the task's bounds in every episode, no fall. Exit code 3 when a
    /// cell is not.
    Check(CheckFlags),
    /// Write a trained policy as ONNX or TorchScript, with its controller description
    /// (observation and action layouts, rate, PD targets and gains) beside it.
    Export(ExportFlags),
    /// Benchmarks that print machine-readable `key=value` results.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Draw a run's learning curves (progress.csv, timing.csv) into a PNG.
    Plot(PlotFlags),
}

/// `gait bench`'s benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Env steps per second on one core with random actions, resets included.
    Env(BenchEnvFlags),
    /// PPO update throughput on a synthetic 50k-step buffer (3 epochs, 1 libtorch thread; the
    /// critic's half on its own thread, as in training).
    Optimize(BenchOptimizeFlags),
}

/// What the command line asks for, settings resolved.
#[derive(Debug)]
pub enum Action {
    /// `train ppo`: train this job.
    Train(Box<TrainJob>),
    /// `train ppo --print-config`: print this config as TOML and exit.
    PrintConfig(Box<TrainConfig>),
    /// `eval`.
    Eval(EvalOptions),
    /// `play`.
    Play(PlayOptions),
    /// `check`.
    Check(CheckOptions),
    /// `export`.
    Export(ExportOptions),
    /// `bench env`.
    BenchEnv(BenchEnvOptions),
    /// `bench optimize`.
    BenchOptimize(BenchOptimizeOptions),
    /// `plot`.
    Plot(PlotOptions),
}

/// The parsed command line plus notes for the user (applied presets, settings that differ
/// from a `--previous` run).
#[derive(Debug)]
pub struct Parsed {
    /// What to run.
    pub action: Action,
    /// Lines to print before running it.
    pub notes: Vec<String>,
}

/// The command tree with help that depends on the registry and the config: `--env` lists the
/// envs, every setting flag shows its global default, and `train ppo --help` ends with each
/// env's preset (the defaults it replaces).
pub fn command() -> clap::Command {
    let names: Vec<&str> = envs::ENVS.iter().map(|e| e.name).collect();
    let help = format!(
        "Environment to train on: {} (alias: the reference's --env-name) [default: cartpole]",
        names.join(", ")
    );
    Cli::command().mut_subcommand("train", |train| {
        Algo::all().fold(train, |train, algo| {
            train.mut_subcommand(algo.name(), |cmd| {
                cmd.mut_arg("run.env", |a| a.help(help.clone()).long_help(help.clone()))
                    .after_help(presets_help(algo))
            })
        })
    })
}

/// The end of `gait train ALGO --help`: each env's preset, the settings of `algo`'s
/// subcommand it replaces.
fn presets_help(algo: Algo) -> String {
    let mut out = String::from(
        "Env presets: an env replaces these defaults for settings you do not give as a flag or \
         in a --config file (gait prints the ones it applied; a --previous run's values take \
         precedence):",
    );
    for spec in envs::ENVS {
        let flags: Vec<String> = presets::changes(spec.name)
            .iter()
            .filter(|(k, _)| train::of_algorithm(algo, k))
            .map(|(k, v)| match v {
                serde_json::Value::Bool(true) => format!("--{}", flag_of(k)),
                v => format!("--{} {}", flag_of(k), shown(v)),
            })
            .collect();
        out.push_str(&format!("\n  {}: {}", spec.name, flags.join(", ")));
    }
    out
}

/// `gait train ALGO`'s action: train, or print the config.
fn train_action(flags: &TrainFlags) -> anyhow::Result<Parsed> {
    let (job, notes) = resolve(flags)?;
    let action = if flags.start.print_config {
        Action::PrintConfig(Box::new(job.config))
    } else {
        Action::Train(Box::new(job))
    };
    Ok(Parsed { action, notes })
}

/// Parses `argv`. For `gait train ALGO`, settings are layered (see [`resolve`]).
/// Errors: `clap::Error` (print with `.exit()`), `UsageError`, or a runtime error.
pub fn parse(argv: &[OsString]) -> anyhow::Result<Parsed> {
    let matches = command().try_get_matches_from(argv)?;
    let cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches)?;
    let action = match cli.command {
        Command::Train(TrainCommand(flags)) => return train_action(&flags),
        Command::Eval(args) => Action::Eval(args.options()),
        Command::Play(args) => Action::Play(args.options()),
        Command::Check(args) => Action::Check(args.options()?),
        Command::Export(args) => Action::Export(args.options()),
        Command::Bench(BenchCommand::Env(args)) => Action::BenchEnv(args.options()?),
        Command::Bench(BenchCommand::Optimize(args)) => Action::BenchOptimize(args.options()?),
        Command::Plot(args) => Action::Plot(args.options()),
    };
    Ok(Parsed { action, notes: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envs::cassie::CassieConfig;

    fn ppo(args: &[&str]) -> (TrainConfig, Vec<String>) {
        let argv: Vec<OsString> = args.iter().map(OsString::from).collect();
        let parsed = parse(&argv).unwrap();
        let applied: Vec<String> = parsed
            .notes
            .iter()
            .flat_map(|n| n.split(' ').map(str::to_string).collect::<Vec<_>>())
            .collect();
        match parsed.action {
            Action::Train(job) => (job.config, applied),
            other => panic!("not train ppo: {other:?}"),
        }
    }

    /// The `train ppo` subcommand as clap built it.
    fn train_ppo_command() -> clap::Command {
        Cli::command()
            .find_subcommand("train")
            .and_then(|t| t.find_subcommand("ppo"))
            .expect("train ppo")
            .clone()
    }

    /// Every setting is a flag of `gait train ppo` or `gait train a2c` (shared ones of both),
    /// except `run.algo`, which the subcommand is; no algorithm's own settings are the other's.
    #[test]
    fn every_setting_has_exactly_one_flag() {
        let ppo = subcommand_leaves("ppo");
        let a2c = subcommand_leaves("a2c");
        assert!(ppo.iter().all(|k| !k.starts_with("algo.")), "{ppo:?}");
        assert!(a2c.iter().all(|k| !k.starts_with("ppo.")), "{a2c:?}");
        let mut flags: Vec<String> = ppo.into_iter().chain(a2c).collect();
        flags.push("run.algo".into());
        flags.sort();
        flags.dedup();
        let mut leaves: Vec<String> =
            TrainConfig::default().leaves().into_iter().map(|(k, _)| k).collect();
        leaves.sort();
        assert_eq!(flags, leaves);
    }

    /// The setting paths `gait train ALGO` takes as flags.
    fn subcommand_leaves(algo: &str) -> Vec<String> {
        command()
            .find_subcommand("train")
            .and_then(|t| t.find_subcommand(algo))
            .expect("train subcommand")
            .get_arguments()
            .map(|a| a.get_id().to_string())
            .filter(|id| {
                ![
                    "config",
                    "print_config",
                    "previous",
                    "previous_best",
                    "previous_iteration",
                    "help",
                ]
                .contains(&id.as_str())
            })
            .collect()
    }

    /// Typed flags beat a config file, which beats the preset; the file's keys are not
    /// reported as preset values.
    #[test]
    fn flags_override_the_config_file_which_overrides_the_preset() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.toml");
        std::fs::write(&file, "[run]\nenv = \"cartpole\"\n[ppo]\nkl = 0.01\nepochs = 7\n").unwrap();
        let path = file.to_str().unwrap();
        let (c, applied) = ppo(&["gait", "train", "ppo", "--config", path, "--epochs", "9"]);
        assert_eq!((c.ppo().kl, c.ppo().epochs), (0.01, 9));
        assert_eq!(c.sampler.traj_len, 400, "the cartpole preset");
        assert!(!applied.iter().any(|p| p.starts_with("epochs")), "{applied:?}");
        let printed = c.to_toml();
        let (again, _) = {
            std::fs::write(&file, &printed).unwrap();
            ppo(&["gait", "train", "ppo", "--config", path])
        };
        assert_eq!(again, c, "a printed config reproduces the run's settings");
        std::fs::write(&file, "[ppo]\nkl = -1.0\n").unwrap();
        let argv: Vec<OsString> =
            ["gait", "train", "ppo", "--config", path].iter().map(OsString::from).collect();
        let err = parse(&argv).unwrap_err();
        assert!(err.downcast_ref::<crate::config::UsageError>().is_some(), "{err}");
        assert!(err.to_string().contains("--kl -1"), "{err}");
    }

    #[test]
    fn preset_fills_defaults_but_never_overrides_typed_flags() {
        let (a, applied) =
            ppo(&["gait", "train", "ppo", "--env", "cartpole", "--num-steps", "999"]);
        assert_eq!(a.sampler.num_steps, 999);
        assert_eq!(a.sampler.traj_len, 400, "preset value");
        assert_eq!(a.net.layers, vec![64, 64]);
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
            let err = parse(&argv).err().unwrap_or_else(|| panic!("{bad:?} accepted"));
            let err = err.downcast_ref::<clap::Error>().expect("a clap error");
            assert_eq!(err.exit_code(), 2, "{bad:?}");
        }
    }

    #[test]
    fn reference_flag_spellings_are_accepted() {
        let (a, _) = ppo(&["gait", "train", "ppo", "--env-name", "pendulum", "--learn-stddev"]);
        assert_eq!(a.run.env, "pendulum");
        assert!(a.net.learn_std);
        assert_eq!(a.sampler.traj_len, 200, "the pendulum preset follows the aliased env");
    }

    #[test]
    fn a_switch_can_turn_a_preset_off() {
        let (on, _) = ppo(&["gait", "train", "ppo", "--env", "cassie"]);
        assert!(
            on.net.prenorm && on.env.get::<CassieConfig>().dynamics_randomization,
            "the cassie preset"
        );
        let (off, _) = ppo(&[
            "gait",
            "train",
            "ppo",
            "--env",
            "cassie",
            "--prenorm",
            "false",
            "--dynamics-randomization",
            "false",
            "--full-clock",
        ]);
        assert!(!off.net.prenorm && !off.env.get::<CassieConfig>().dynamics_randomization);
        assert!(off.env.get::<CassieConfig>().full_clock, "a bare switch is true");
    }

    #[test]
    fn counts_accept_scientific_notation() {
        let (a, _) = ppo(&["gait", "train", "ppo", "--timesteps", "2e5", "--num-steps", "1e4"]);
        assert_eq!((a.run.timesteps, a.sampler.num_steps), (200_000, 10_000));
    }

    #[test]
    fn help_lists_the_envs_and_their_presets() {
        let help = command()
            .find_subcommand_mut("train")
            .and_then(|t| t.find_subcommand_mut("ppo"))
            .expect("train ppo")
            .render_long_help()
            .to_string();
        assert!(help.contains("cassie, cartpole, pendulum, mountaincar"), "{help}");
        assert!(help.contains("Env presets"), "{help}");
        assert!(help.contains("cassie: --traj-len 400"), "{help}");
    }

    /// Random argument vectors (flags with numbers, NaN, infinities, empty and huge values,
    /// garbage) never panic the parser or the checks that follow it: every one is accepted or
    /// refused with an error.
    #[test]
    fn random_argument_vectors_never_panic() {
        use rand::{seq::SliceRandom, Rng, SeedableRng};
        let flags: Vec<String> = train_ppo_command()
            .get_arguments()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect();
        let values = [
            "0",
            "1",
            "-1",
            "0.5",
            "1e4",
            "1e400",
            "-1e-400",
            "nan",
            "NaN",
            "inf",
            "-inf",
            "",
            "18446744073709551616",
            "99999999999999999999999",
            "1,2",
            "64,64,64",
            ",",
            "x",
            "..",
            "/",
            "cassie",
            "cartpole",
            "lstm",
            "true",
            "\u{0}",
            "1e-45",
            "4294967296",
        ];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for case in 0..3000 {
            let mut argv: Vec<OsString> = vec!["gait".into(), "train".into(), "ppo".into()];
            for _ in 0..rng.gen_range(0..6) {
                argv.push(flags.choose(&mut rng).expect("flags").into());
                if rng.gen_bool(0.8) {
                    argv.push((*values.choose(&mut rng).expect("values")).into());
                }
            }
            let result = std::panic::catch_unwind(|| {
                if let Ok(parsed) = parse(&argv) {
                    if let Action::Train(job) = parsed.action {
                        // The checks `gait train` runs before allocating anything.
                        let _ = job.config.net.spec(&job.config.run.env, 40, 10).map(|spec| {
                            crate::algos::resources::check_resources(
                                &spec,
                                2,
                                2,
                                1000,
                                Some(1 << 34),
                            )
                        });
                    }
                }
            });
            assert!(result.is_ok(), "case {case} panicked: {argv:?}");
        }
    }

    /// The audit's round 2 surface, at random: config files with random sections, keys (the
    /// real leaves and others) and values of every TOML type (huge, NaN, nested, wrong); bench
    /// flags; output paths. Each is accepted or refused with a one-line message, never a panic.
    #[test]
    fn random_config_files_bench_flags_and_output_paths_never_panic() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let dir = tempfile::tempdir().expect("temp dir");
        random_config_files(&mut rng, dir.path());
        random_bench_flags(&mut rng);
        random_output_paths(&mut rng, dir.path());
    }

    /// Values of every TOML type for the random config files: huge, NaN, nested, wrong.
    const TOML_VALUES: &[&str] = &[
        "0",
        "1",
        "-1",
        "1e308",
        "-1e308",
        "1e39",
        "nan",
        "inf",
        "-inf",
        "0.0005",
        "9223372036854775807",
        "\"cassie\"",
        "\"mujoco\"",
        "\"\"",
        "[]",
        "[64, 64]",
        "[1e39]",
        "[nan]",
        "{ a = 1 }",
        "true",
        "false",
        "\"\\u0000\"",
        "[[1]]",
        "1979-05-27",
    ];

    /// Config files with random sections, keys and values: each accepted or refused with a
    /// one-line message, never a panic, and both kinds occur.
    fn random_config_files(rng: &mut rand_chacha::ChaCha8Rng, dir: &std::path::Path) {
        use rand::{seq::SliceRandom, Rng};
        // The settings' names as a file's section holds them (`kl` under `[ppo]`).
        let mut keys: Vec<String> =
            TrainConfig::settings().into_iter().map(|d| d.setting.name.to_string()).collect();
        keys.extend(["nope", "env", "cassie", "x y", "\"q\""].map(String::from));
        let sections = ["run", "sampler", "ppo", "net", "eval", "env.cassie", "env", "bogus", ""];
        let file = dir.join("c.toml");
        let (mut accepted, mut refused) = (0, 0);
        for case in 0..1500 {
            let mut text = String::new();
            for _ in 0..rng.gen_range(0..4) {
                let section = sections.choose(rng).expect("sections");
                if !section.is_empty() {
                    text.push_str(&format!("[{section}]\n"));
                }
                for _ in 0..rng.gen_range(0..4) {
                    let key = keys.choose(rng).expect("keys");
                    let value = TOML_VALUES.choose(rng).expect("values");
                    text.push_str(&format!("{key} = {value}\n"));
                }
            }
            if rng.gen_bool(0.05) {
                text.push_str("[broken\n");
            }
            std::fs::write(&file, &text).expect("write the config");
            let argv: Vec<OsString> = ["gait", "train", "ppo", "--config"]
                .map(OsString::from)
                .into_iter()
                .chain([file.clone().into()])
                .collect();
            let result = std::panic::catch_unwind(|| match parse(&argv) {
                Ok(parsed) => {
                    if let Action::Train(job) = parsed.action {
                        let _ = job.config.net.spec(&job.config.run.env, 40, 10).map(|spec| {
                            crate::algos::resources::check_resources(
                                &spec,
                                2,
                                2,
                                1000,
                                Some(1 << 34),
                            )
                        });
                    }
                    String::new()
                }
                Err(e) => format!("{e:#}"),
            });
            let message = result.unwrap_or_else(|_| panic!("case {case} panicked:\n{text}"));
            if message.is_empty() {
                accepted += 1;
            } else {
                refused += 1;
            }
            assert!(
                !message.contains('\n') && message.len() < 600,
                "case {case}: {message:?}\n{text}"
            );
        }
        // Both kinds occur, so the generator reaches past the parser.
        assert!(accepted > 100 && refused > 100, "accepted {accepted}, refused {refused}");
    }

    /// `gait bench` with random flags and values parses or refuses, never panics.
    fn random_bench_flags(rng: &mut rand_chacha::ChaCha8Rng) {
        use rand::{seq::SliceRandom, Rng};
        let bench_values =
            ["0", "-1", "nan", "inf", "1e20", "1e9", "5", "16,8", "8,8", "lstm", "x", ""];
        let bench_flags =
            ["--seconds", "--steps", "--env", "--sim", "--sim-dt", "--policy-rate", "--push"];
        let optimize_flags = ["--arch", "--layers", "--batch-size", "--mirror"];
        for case in 0..1500 {
            let (sub, flags): (&str, &[&str]) = if rng.gen_bool(0.5) {
                ("env", &bench_flags)
            } else {
                ("optimize", &optimize_flags)
            };
            let mut argv: Vec<OsString> = vec!["gait".into(), "bench".into(), sub.into()];
            if sub == "env" && rng.gen_bool(0.8) {
                argv.extend(["--env".into(), "cartpole".into()]);
            }
            for _ in 0..rng.gen_range(0..4) {
                argv.push(flags.choose(rng).expect("flags").into());
                argv.push((*bench_values.choose(rng).expect("values")).into());
            }
            let result = std::panic::catch_unwind(|| parse(&argv).is_ok());
            assert!(result.is_ok(), "bench case {case} panicked: {argv:?}");
        }
    }

    /// Random output paths are accepted or refused with a one-line message, never a panic.
    fn random_output_paths(rng: &mut rand_chacha::ChaCha8Rng, dir: &std::path::Path) {
        use rand::{seq::SliceRandom, Rng};
        let names = [
            "w.gif",
            "w.GIF",
            "w",
            "w.png",
            ".gif",
            "..",
            "/",
            "/proc/x.gif",
            "/dev/null",
            "a/b/c.gif",
            "\u{0}.gif",
            "x.html",
        ];
        for case in 0..500 {
            let mut path = dir.to_path_buf();
            for _ in 0..rng.gen_range(0..3) {
                path.push(names.choose(rng).expect("names"));
            }
            let result = std::panic::catch_unwind(|| {
                crate::outputs::check(&[crate::outputs::Output {
                    flag: "--gif",
                    path: &path,
                    extensions: &["gif"],
                }])
            });
            match result {
                Ok(Err(e)) => assert!(!e.0.contains('\n'), "path case {case}: {}", e.0),
                Ok(Ok(())) => {}
                Err(_) => panic!("path case {case} panicked: {path:?}"),
            }
        }
    }
}
