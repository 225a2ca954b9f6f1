//! Gymnasium's MuJoCo tasks as gait envs, step for step against Gymnasium itself
//! (`scripts/gym_compare.py`, the pinned `gymnasium` and `mujoco` wheels of the test venv).

mod common;

use gait::envs::gym::{GymConfig, GymEnv, Task, TASKS};
use gait::envs::Env;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

/// Steps each task recorded per episode, on past a termination (both simulators go on from
/// the same state, so the comparison covers fallen and flying states too).
const STEPS: usize = 300;

/// One recorded episode of `task`: gait's start state, its actions (uniform in ±1.2, beyond
/// every task's action space, so the clipping is exercised too) and what each step returned.
fn record(env: &mut GymEnv, task: &str, seed: u64) -> Value {
    env.seed(seed);
    let obs0 = env.reset().to_vec();
    let (qpos, qvel) = env.start_state();
    let (qpos, qvel) = (qpos.to_vec(), qvel.to_vec());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let (mut actions, mut steps) = (Vec::new(), Vec::new());
    for _ in 0..STEPS {
        let action: Vec<f32> = (0..env.action_size()).map(|_| rng.gen_range(-1.2..1.2)).collect();
        let step = env.step(&action);
        let info: serde_json::Map<String, Value> =
            step.info.iter().map(|&(k, v)| (k.to_string(), json!(v))).collect();
        let done = step.done;
        steps.push(
            json!({ "obs": step.obs, "reward": step.reward, "terminated": done, "info": info }),
        );
        actions.push(action);
    }
    json!({ "task": task, "qpos": qpos, "qvel": qvel, "obs0": obs0, "actions": actions, "steps": steps })
}

#[test]
fn every_task_steps_as_gymnasium_steps_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    for task in TASKS {
        let mut env = GymEnv::new(task).unwrap();
        for seed in [1, 2] {
            cases.push(record(&mut env, task.gymnasium_id(), seed));
        }
    }
    // The keyword argument gait takes ([`GymConfig`]), away from its default.
    let without = GymConfig { include_cfrc_ext_in_observation: false };
    for task in [Task::Ant, Task::Humanoid, Task::HumanoidStandup] {
        let mut env = GymEnv::with(task, &without).unwrap();
        let mut case = record(&mut env, task.gymnasium_id(), 3);
        case["kwargs"] = json!({ "include_cfrc_ext_in_observation": false });
        cases.push(case);
    }
    let file = dir.path().join("gait.json");
    std::fs::write(&file, serde_json::to_string(&cases).unwrap()).unwrap();
    let python = common::cache_dir().join("onnx-1.32.0/bin/python");
    assert!(python.is_file(), "{} is missing: run scripts/setup_onnx.sh", python.display());
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gym_compare.py");
    let o = std::process::Command::new(python).arg(script).arg(&file).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), cases.len());
    for (line, case) in lines.iter().zip(&cases) {
        // gait's observations and rewards are f32: within a few of its ulps of Gymnasium's f64.
        for what in ["obs", "reward", "terms"] {
            let worst = line["worst"][what].as_f64().unwrap();
            assert!(worst < 1e-6, "{}: {what} deviates by {worst:e}: {line}", case["task"]);
        }
        assert!(line["termination_mismatch"].is_null(), "{line}");
        let recorded = case["steps"].as_array().unwrap().len() as u64;
        assert_eq!(line["steps"].as_u64().unwrap(), recorded, "{line}");
        eprintln!("{line}");
    }
}

/// An action beyond the action space steps as the action clipped to it (reward included: the
/// control cost is charged on what reached the model), and the bounds are the `ctrlrange`s.
#[test]
fn actions_are_clipped_to_the_action_space() {
    for task in TASKS {
        let [mut wild, mut tame] = [GymEnv::new(task).unwrap(), GymEnv::new(task).unwrap()];
        let bounds = wild.action_bounds().to_vec();
        assert_eq!(bounds.len(), wild.action_size(), "{}", task.name());
        assert!(bounds.iter().all(|&[lo, hi]| lo < hi), "{}: {bounds:?}", task.name());
        let over: Vec<f32> = bounds.iter().enumerate().map(|(i, b)| 3.0 * b[i % 2]).collect();
        let clipped: Vec<f32> = bounds.iter().enumerate().map(|(i, b)| b[i % 2]).collect();
        wild.reset();
        tame.reset();
        let (a, b) = (wild.step(&over), tame.step(&clipped));
        assert_eq!((a.obs, a.reward, a.done), (b.obs, b.reward, b.done), "{}", task.name());
        assert_eq!(a.info, b.info, "{}", task.name());
    }
}
