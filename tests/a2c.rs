//! A2C behind the algorithm seam: `gait train a2c` learns cart-pole, continues exactly, keeps
//! to its own settings, and is never continued by another algorithm.

mod common;

use std::ffi::OsString;
use std::path::Path;

use common::{gait, only_run, stderr, stdout};
use gait::algos::train::{train, Quiet};
use gait::cli::{self, Action};

fn data_rows(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap().lines().skip(1).map(str::to_string).collect()
}

/// A fresh `gait train a2c` cart-pole run under `logdir` named `run`.
fn a2c(logdir: &Path, run: &str, extra: &[&str]) -> std::path::PathBuf {
    let logs = logdir.to_str().unwrap();
    let mut args = vec!["train", "a2c", "--env", "cartpole", "--logdir", logs, "--run-name", run];
    args.extend_from_slice(extra);
    let o = gait(&args);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    only_run(&logdir.join("cartpole").join(run))
}

/// At 60k steps of 500-step iterations (120 updates) the final eval return was 105-400 over
/// seeds 1-8 on the 2-core host (a random policy: about 20); the first training iteration's
/// return is a random policy's.
#[test]
fn a2c_learns_cartpole_for_two_seeds() {
    let dir = tempfile::tempdir().unwrap();
    for seed in ["1", "3"] {
        let logs = dir.path().to_str().unwrap();
        let argv = ["gait", "train", "a2c", "--env", "cartpole", "--logdir", logs, "--seed", seed];
        let mut argv: Vec<OsString> = argv.iter().map(OsString::from).collect();
        argv.extend(["--timesteps", "60000", "--num-steps", "500"].map(OsString::from));
        let Action::Train(job) = cli::parse(&argv).unwrap().action else { panic!("a train job") };
        assert_eq!(job.config.run.algo, gait::config::Algo::named("a2c").unwrap());
        let out = train(&job, vec![], &mut Quiet).unwrap();
        let final_eval = out.final_test_return.expect("the final weights are evaluated");
        let first =
            common::csv_column(&out.run_dir.join("progress.csv"), "Train/Return")[0].unwrap();
        eprintln!("seed {seed}: first train {first:.1}, final eval {final_eval:.1}");
        assert!(final_eval > 80.0 && final_eval > 3.0 * first, "seed {seed}: {final_eval:.1}");
    }
}

/// Two iterations continued by two more equal four (the RMSprop states are saved and
/// restored), and the run records its algorithm, which another algorithm cannot continue.
#[test]
fn a2c_continues_exactly_and_only_as_a2c() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path();
    let flags = ["--num-steps", "500", "--seed", "2", "--num-eval-eps", "2", "--eval-freq", "1"];
    let full = a2c(logs, "full", &[&flags[..], &["--timesteps", "2000"]].concat());
    let part = a2c(logs, "part", &[&flags[..], &["--timesteps", "1000"]].concat());
    let o = gait(&["train", "a2c", "--previous", part.to_str().unwrap(), "--timesteps", "2000"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let cont = common::continuation_of(&part);
    let rows = [data_rows(&part.join("progress.csv")), data_rows(&cont.join("progress.csv"))];
    assert_eq!(rows.concat(), data_rows(&full.join("progress.csv")), "the continuation diverged");
    let exp = gait::logging::Experiment::load(&full).unwrap();
    assert_eq!(exp.config.run.algo, gait::config::Algo::named("a2c").unwrap());

    let o = gait(&["train", "ppo", "--previous", full.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("trained with a2c: continue it with `gait train a2c`"));
    // Each subcommand takes its own algorithm's flags by their plain names, not the other's.
    let o = gait(&["train", "a2c", "--kl", "0.01", "--print-config"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = gait(&["train", "ppo", "--alpha", "0.9", "--print-config"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = gait(&["train", "a2c", "--lr", "0.001", "--print-config"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let config = stdout(&o);
    assert!(config.contains("algo = \"a2c\"") && config.contains("lr = 0.001"), "{config}");
    // A stopped A2C run names its own subcommand to continue with.
    let logs_arg = logs.to_str().unwrap();
    let limited = ["--time-limit", "1e-5", "--timesteps", "2000", "--num-steps", "500"];
    let mut args = vec!["train", "a2c", "--env", "cartpole", "--logdir", logs_arg];
    args.extend(["--run-name", "limited"].iter().chain(&limited));
    let o = gait(&args);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let run = only_run(&logs.join("cartpole").join("limited"));
    let again = format!("gait train a2c --previous {}", run.display());
    assert!(stdout(&o).contains(&again), "{}", stdout(&o));
}

/// A run file written before the settings moved out of `[ppo]` (format 1: no `format`, the
/// discount and the normalizer under `ppo`) loads with them in their sections.
#[test]
fn a_run_file_from_before_the_moves_loads_into_todays_sections() {
    let dir = tempfile::tempdir().unwrap();
    let run = common::trained_cartpole(dir.path(), "old", &["--timesteps", "4000"]);
    let path = run.join("experiment.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let config = doc["config"].as_object_mut().unwrap();
    let discount = config["sampler"].as_object_mut().unwrap().remove("discount").unwrap();
    let prenorm = config["net"].as_object_mut().unwrap().remove("prenorm").unwrap();
    config["ppo"].as_object_mut().unwrap().insert("discount".into(), 0.5.into());
    config["ppo"].as_object_mut().unwrap().insert("prenorm".into(), prenorm.clone());
    config.get_mut("run").unwrap().as_object_mut().unwrap().remove("algo");
    doc.as_object_mut().unwrap().remove("format");
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    assert_ne!(discount, serde_json::json!(0.5));
    let exp = gait::logging::Experiment::load(&run).unwrap();
    assert_eq!(exp.config.sampler.discount, 0.5);
    assert_eq!(serde_json::json!(exp.config.net.prenorm), prenorm);
    assert_eq!(exp.config.run.algo, gait::config::Algo::default());
    assert_eq!(exp.format, gait::logging::EXPERIMENT_FORMAT);
    // A file from a newer gait is refused, naming the format.
    doc["format"] = 99.into();
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    let err = format!("{:#}", gait::logging::Experiment::load(&run).unwrap_err());
    assert!(err.contains("format 99 is newer"), "{err}");
}
