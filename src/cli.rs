//! The `gait` command tree, and how env presets become defaults.

use std::ffi::OsString;

use clap::parser::ValueSource;
use clap::{CommandFactory, Parser, Subcommand};

use crate::bench::{BenchEnvArgs, BenchOptimizeArgs};
use crate::config::{PpoArgs, UsageError};
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
    /// Run a trained policy deterministically and report returns and reward terms.
    Eval(crate::eval::EvalArgs),
    /// Benchmarks that print machine-readable `key=value` results.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Draw a run's learning curves (progress.csv, timing.csv) into a PNG.
    Plot(crate::plot::PlotArgs),
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

/// The parsed command line plus notes for the user (applied presets, inherited flags,
/// warnings about flags that differ from a `--previous` run).
#[derive(Debug)]
pub struct Parsed {
    pub cli: Cli,
    pub notes: Vec<String>,
}

/// Flags of a `--previous` run that are never inherited.
const NOT_INHERITED: &[&str] = &["previous", "previous_best", "run_name"];

/// `PpoArgs` as `(id, command-line words)`, one entry per flag with a value.
fn flag_words(args: &PpoArgs) -> Vec<(String, Vec<OsString>)> {
    args.values()
        .into_iter()
        .map(|(key, value)| {
            let flag = format!("--{}", key.replace('_', "-"));
            let words: Vec<String> = match value {
                serde_json::Value::Null | serde_json::Value::Bool(false) => vec![],
                serde_json::Value::Bool(true) => vec![flag],
                serde_json::Value::String(v) => vec![flag, v],
                serde_json::Value::Array(items) => {
                    let parts: Vec<String> = items
                        .iter()
                        .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                        .collect();
                    vec![flag, parts.join(",")]
                }
                other => vec![flag, other.to_string()],
            };
            (key, words.into_iter().map(OsString::from).collect())
        })
        .collect()
}

/// Inserts `extra` words right after the `ppo` token.
fn with_inserted(argv: &[OsString], extra: Vec<OsString>) -> Vec<OsString> {
    let at = argv.iter().position(|a| a == "ppo").map_or(argv.len(), |i| i + 1);
    let mut out = argv[..at].to_vec();
    out.extend(extra);
    out.extend_from_slice(&argv[at..]);
    out
}

/// The command tree with help that depends on the registry: `--env` lists the envs, and
/// `train ppo --help` ends with each env's preset (the defaults it replaces).
pub fn command() -> clap::Command {
    let names: Vec<&str> = envs::ENVS.iter().map(|e| e.name).collect();
    let mut presets = String::from(
        "Env presets: an env replaces these defaults for flags you do not type (gait prints \
         the ones it applied; `--previous` values take precedence):",
    );
    for spec in envs::ENVS {
        let flags: Vec<String> = spec.preset.iter().map(|(f, v)| format!("--{f} {v}")).collect();
        presets.push_str(&format!("\n  {}: {}", spec.name, flags.join(", ")));
    }
    Cli::command().mut_subcommand("train", |train| {
        train.mut_subcommand("ppo", |ppo| {
            ppo.mut_arg("env", |a| {
                a.help(format!(
                    "Environment to train on: {} (alias: the reference's --env-name)",
                    names.join(", ")
                ))
            })
            .after_help(presets)
        })
    })
}

/// Parses `argv`. For `gait train ppo`, flags the user did not type take (in order of
/// precedence) the `--previous` run's values, else the env preset's, else the global defaults.
/// Errors: `clap::Error` (print with `.exit()`), `UsageError`, or a runtime error.
pub fn parse(argv: &[OsString]) -> anyhow::Result<Parsed> {
    let matches = command().try_get_matches_from(argv)?;
    let cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches)?;
    let Command::Train(TrainCommand::Ppo(args)) = &cli.command else {
        return Ok(Parsed { cli, notes: Vec::new() });
    };
    let ppo = matches
        .subcommand_matches("train")
        .and_then(|m| m.subcommand_matches("ppo"))
        .expect("train ppo was parsed");
    let typed = |id: &str| ppo.value_source(id) == Some(ValueSource::CommandLine);
    let mut extra: Vec<OsString> = Vec::new();
    let mut notes = Vec::new();

    if let Some(prev_dir) = &args.previous {
        let prev = crate::logging::load_previous(prev_dir)?;
        if typed("env") && args.env != prev.args.env {
            return Err(UsageError(format!(
                "--previous {} is a run of env '{}', not '{}'",
                prev_dir.display(),
                prev.args.env,
                args.env
            ))
            .into());
        }
        for (id, words) in flag_words(&prev.args) {
            if !NOT_INHERITED.contains(&id.as_str()) && !typed(&id) {
                extra.extend(words);
            }
        }
        // Typed flags were checked above, so a failure here comes from a stored value.
        let cli2 = Cli::try_parse_from(with_inserted(argv, extra)).map_err(|e| {
            let message = e.to_string();
            let first = message.lines().next().unwrap_or_default();
            anyhow::anyhow!(
                "--previous {}: its experiment.json holds a value this gait refuses ({}); fix \
                 the file or type the flag",
                prev_dir.display(),
                first.trim_start_matches("error: ")
            )
        })?;
        let Command::Train(TrainCommand::Ppo(new)) = &cli2.command else { unreachable!() };
        let old_flat = prev.args.values();
        for (key, value) in new.values() {
            if NOT_INHERITED.contains(&key.as_str()) || key == "workers" {
                continue;
            }
            let old = old_flat.iter().find(|(k, _)| *k == key).map(|(_, v)| v.clone());
            if old.as_ref() != Some(&value) {
                let show = |v: Option<&serde_json::Value>| {
                    v.map_or("(new flag)".to_string(), |v| {
                        v.to_string().trim_matches('"').to_string()
                    })
                };
                notes.push(format!(
                    "warning: {key}: {} -> {}",
                    show(old.as_ref()),
                    show(Some(&value))
                ));
            }
        }
        return Ok(Parsed { cli: cli2, notes });
    }

    // An unknown env is reported later, with the list of available ones.
    let Ok(spec) = envs::spec(&args.env) else { return Ok(Parsed { cli, notes }) };
    let mut applied = Vec::new();
    for (flag, value) in spec.preset {
        if typed(&flag.replace('-', "_")) {
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
        return Ok(Parsed { cli, notes });
    }
    notes.push(format!("env '{}' preset: {}", args.env, applied.join(" ")));
    // The preset flags only name flags the user did not give, so nothing typed is overridden.
    Ok(Parsed { cli: Cli::try_parse_from(with_inserted(argv, extra))?, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ppo(args: &[&str]) -> (PpoArgs, Vec<String>) {
        let argv: Vec<OsString> = args.iter().map(OsString::from).collect();
        let parsed = parse(&argv).unwrap();
        let applied: Vec<String> = parsed
            .notes
            .iter()
            .flat_map(|n| n.split(' ').map(str::to_string).collect::<Vec<_>>())
            .collect();
        match parsed.cli.command {
            Command::Train(TrainCommand::Ppo(a)) => (*a, applied),
            _ => panic!("not train ppo"),
        }
    }

    #[test]
    fn preset_fills_defaults_but_never_overrides_typed_flags() {
        let (a, applied) =
            ppo(&["gait", "train", "ppo", "--env", "cartpole", "--num-steps", "999"]);
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
            let err = parse(&argv).err().unwrap_or_else(|| panic!("{bad:?} accepted"));
            let err = err.downcast_ref::<clap::Error>().expect("a clap error");
            assert_eq!(err.exit_code(), 2, "{bad:?}");
        }
    }

    #[test]
    fn reference_flag_spellings_are_accepted() {
        let (a, _) = ppo(&["gait", "train", "ppo", "--env-name", "pendulum", "--learn-stddev"]);
        assert_eq!(a.env, "pendulum");
        assert!(a.learn_std);
        assert_eq!(a.traj_len, 200, "the pendulum preset follows the aliased env");
    }

    #[test]
    fn counts_accept_scientific_notation() {
        let (a, _) = ppo(&["gait", "train", "ppo", "--timesteps", "2e5", "--num-steps", "1e4"]);
        assert_eq!((a.timesteps, a.num_steps), (200_000, 10_000));
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
        let flags: Vec<String> = Cli::command()
            .find_subcommand("train")
            .and_then(|t| t.find_subcommand("ppo"))
            .expect("train ppo")
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
                    if let Command::Train(TrainCommand::Ppo(args)) = parsed.cli.command {
                        // The checks `gait train` runs before allocating anything.
                        if args.validate().is_ok() && envs::spec(&args.env).is_ok() {
                            let _ = crate::algos::train::net_spec(&args, 40, 10).map(|spec| {
                                crate::algos::train::check_resources(&spec, 2, 2, Some(1 << 34))
                            });
                        }
                    }
                }
            });
            assert!(result.is_ok(), "case {case} panicked: {argv:?}");
        }
    }
}
