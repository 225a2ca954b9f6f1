//! What a run leaves on disk: the files, a loadable experiment.json, a valid TensorBoard
//! stream with the reference tag names, CSV tables, and checkpoints that load strictly.

mod common;

use std::collections::BTreeSet;

use gait::algos::train::{progress_columns, train, Quiet, TIMING_COLUMNS, WALKING_COLUMNS};
use gait::envs::cassie::CassieConfig;
use gait::logging::{read_events, Experiment, NumberedWeights};
use gait::logging::{EventWhat, ValueKind};
use gait::policies::{load_checkpoint, Actor, CheckpointError, Critic};
use tch::Device;

#[test]
fn run_dir_holds_experiment_tensorboard_csv_and_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let args = common::quick(dir.path(), &["--timesteps", "12000", "--save-freq", "2"]);
    let out = train(&args, vec!["gait".into(), "test".into()], &mut Quiet).unwrap();
    let run = &out.run_dir;
    // logdir/env/run/timestamp
    let rel = run.strip_prefix(dir.path()).unwrap();
    assert_eq!(rel.components().count(), 3, "{rel:?}");
    assert!(rel.starts_with("cartpole"));

    for f in [
        "experiment.json",
        "experiment.info",
        "progress.csv",
        "timing.csv",
        "actor.safetensors",
        "critic.safetensors",
        "actor_latest.safetensors",
        "critic_latest.safetensors",
        "actor_0.safetensors",
        "critic_2.safetensors",
    ] {
        assert!(run.join(f).is_file(), "missing {f}");
    }

    // experiment.json round-trips to the effective args (preset applied, workers resolved).
    let exp = Experiment::load(run).unwrap();
    let mut expected = args.config.clone();
    expected.sampler.workers = exp.config.sampler.workers;
    assert!(expected.sampler.workers.is_some());
    assert_eq!(exp.config, expected);
    assert_eq!(exp.net, exp.config.net.spec(&exp.config.run.env, 4, 1).unwrap());
    let again: Experiment = serde_json::from_str(&serde_json::to_string(&exp).unwrap()).unwrap();
    assert_eq!(again, exp);
    // It says what its numbered weights hold; a file written before the key reads as the old
    // kind (weights after the update).
    assert_eq!(exp.numbered_weights, NumberedWeights::Scored);
    let mut old: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("experiment.json")).unwrap())
            .unwrap();
    assert_eq!(old["numbered_weights"], "scored");
    old.as_object_mut().unwrap().remove("numbered_weights");
    let old: Experiment = serde_json::from_value(old).unwrap();
    assert_eq!(old.numbered_weights, NumberedWeights::AfterUpdate);
    let info = std::fs::read_to_string(run.join("experiment.info")).unwrap();
    let keys: Vec<&str> = info.lines().map(|l| l.split(": ").next().unwrap()).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "experiment.info is sorted");
    assert!(info.contains("num_steps: 4000\n") && info.contains("env: cartpole\n"), "{info}");

    // TensorBoard: one file, every record's CRCs valid, the expected scalar tags per iteration.
    let tb: Vec<_> = std::fs::read_dir(run)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("events.out.tfevents."))
        .collect();
    assert_eq!(tb.len(), 1);
    let events = read_events(&tb[0]).unwrap();
    assert_eq!(events[0].what, Some(EventWhat::FileVersion("brain.Event:2".into())));
    let mut tags = BTreeSet::new();
    let mut steps = BTreeSet::new();
    for e in &events[1..] {
        let Some(EventWhat::Summary(s)) = &e.what else { panic!("not a summary") };
        for v in &s.value {
            if let Some(ValueKind::SimpleValue(x)) = v.value {
                tags.insert(v.tag.clone());
                steps.insert(e.step);
                if v.tag == "Time/Total Timesteps" {
                    assert!(x > 0.0);
                }
            }
        }
    }
    // Cartpole is no walking task: the walking scalars stay out of its events and columns.
    let columns = progress_columns(false);
    assert!(WALKING_COLUMNS.iter().all(|c| !columns.contains(c)));
    let header = std::fs::read_to_string(run.join("progress.csv")).unwrap();
    assert_eq!(header.lines().next().unwrap(), columns.join(","));
    let expected_tags: BTreeSet<String> = columns
        .iter()
        .chain(TIMING_COLUMNS)
        .filter(|t| **t != "Iteration")
        .map(|t| t.to_string())
        .collect();
    assert_eq!(tags, expected_tags);
    for tag in ["Train/Return", "Test/Return", "Optimizer/KL", "Time/Timesteps per Second (FULL)"] {
        assert!(tags.contains(tag), "{tag}");
    }
    assert_eq!(steps, (0..out.iterations as i64).collect());

    // CSV: a header plus one row per iteration, in both tables.
    assert_eq!(common::csv_rows(&run.join("progress.csv")).len() as u64, out.iterations + 1);
    assert_eq!(common::csv_rows(&run.join("timing.csv")).len() as u64, out.iterations + 1);
    let totals = common::csv_column(&run.join("progress.csv"), "Time/Total Timesteps");
    assert_eq!(totals.last().unwrap().unwrap() as u64, out.total_timesteps);

    // Checkpoints load strictly into networks of the recorded shape...
    let mut actor = Actor::new(&exp.net, Device::Cpu);
    load_checkpoint(actor.var_store_mut(), &run.join("actor_latest.safetensors")).unwrap();
    let stats = actor.normalizer().stats();
    assert_eq!(stats.count, 0.0, "no prenormalization: identity normalizer saved");
    let mut critic = Critic::new(&exp.net, Device::Cpu);
    load_checkpoint(critic.var_store_mut(), &run.join("critic.safetensors")).unwrap();
    // ...and refuse other shapes or corrupt files with a message naming the problem.
    let mut wide = exp.net.clone();
    wide.layers = vec![32, 32];
    let mut other = Actor::new(&wide, Device::Cpu);
    let err = load_checkpoint(other.var_store_mut(), &run.join("actor.safetensors")).unwrap_err();
    assert!(matches!(err, CheckpointError::Mismatch { .. }), "{err}");
    assert!(err.to_string().contains("[32, 4]") && err.to_string().contains("[64, 4]"), "{err}");
    let corrupt = dir.path().join("corrupt.safetensors");
    let bytes = std::fs::read(run.join("actor.safetensors")).unwrap();
    std::fs::write(&corrupt, &bytes[..bytes.len() / 2]).unwrap();
    let err = load_checkpoint(actor.var_store_mut(), &corrupt).unwrap_err();
    assert!(matches!(err, CheckpointError::Unreadable { .. }), "{err}");
}

/// A run directory written before the sectioned config (flat `args` in `experiment.json`: the
/// walking policy shipped until 2026-11-24, `tests/fixtures/legacy-run`) still loads, as the
/// task it trained: gait's rapier model, the walking reward and reference gait, its 6M steps.
#[test]
fn a_run_written_before_the_sectioned_config_loads() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/legacy-run");
    let exp = Experiment::load(&dir).unwrap();
    assert_eq!(exp.config.run.env, "cassie");
    assert_eq!(exp.config.run.timesteps, 6_000_000);
    assert_eq!(exp.config.run.run_name.as_deref(), Some("f0"));
    let cassie = &exp.config.env.get::<CassieConfig>();
    assert_eq!(cassie.sim.to_string(), "rapier", "runs before --sim: rapier");
    assert_eq!(cassie.reference, gait::envs::cassie::ReferenceKind::Clock);
    assert_eq!((cassie.push, cassie.upright), (0.0, 0.0), "no perturbations, no posture term");
    assert_eq!(exp.net, exp.config.net.spec("cassie", 47, 10).unwrap());
}

/// `--best-by last`: the run's policy is its last evaluated weights (the ones its last
/// evaluation row scored, which `--save-freq 1` keeps as `actor_N`), whatever they scored.
#[test]
fn best_by_last_keeps_the_last_evaluated_weights() {
    let dir = tempfile::tempdir().unwrap();
    let flags =
        ["--timesteps", "12000", "--save-freq", "1", "--eval-freq", "1", "--best-by", "last"];
    let out = train(&common::quick(dir.path(), &flags), vec!["gait".into()], &mut Quiet).unwrap();
    let run = &out.run_dir;
    let returns = common::csv_column(&run.join("progress.csv"), "Test/Return");
    let last = returns.iter().rposition(Option::is_some).expect("an evaluation");
    assert!(last >= 2, "{returns:?}");
    let read = |name: &str| std::fs::read(run.join(name)).unwrap();
    assert!(read("actor.safetensors") == read(&format!("actor_{last}.safetensors")));
    assert!(read("actor.safetensors") != read(&format!("actor_{}.safetensors", last - 1)));
}
