//! `--env cassie` end to end: a short mirrored training run writes a complete run directory
//! whose Mirror Loss is logged, `gait eval` runs the result under a fixed command, and the
//! env's flags are recorded and inherited.

mod common;

use common::{csv_column, eval_pretrained, gait, only_run, stderr, stdout, trained_cartpole};
use std::path::{Path, PathBuf};

#[test]
fn cassie_trains_with_mirror_loss_and_evaluates() {
    let dir = tempfile::tempdir().unwrap();
    let logdir = dir.path().to_str().unwrap();
    let o = gait(&[
        "train",
        "ppo",
        "--env",
        "cassie",
        "--mirror",
        "1.0",
        "--timesteps",
        "800",
        "--num-steps",
        "400",
        "--traj-len",
        "60",
        "--prenormalize-steps",
        "100",
        "--batch-size",
        "64",
        "--eval-freq",
        "1",
        "--num-eval-eps",
        "1",
        "--workers",
        "2",
        "--full-clock",
        "--logdir",
        logdir,
    ]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("env 'cassie' preset:"), "{out}");
    assert!(out.contains("done: 2 iterations"), "{out}");

    let run = only_run(&only_run(&dir.path().join("cassie")));
    for file in
        ["actor.safetensors", "critic_latest.safetensors", "experiment.info", "progress.csv"]
    {
        assert!(run.join(file).exists(), "{file} missing in {}", run.display());
    }
    let mirror = csv_column(&run.join("progress.csv"), "Optimizer/Mirror Loss");
    assert_eq!(mirror.len(), 2);
    for m in mirror {
        let m = m.expect("mirror loss logged");
        assert!(m.is_finite() && m > 0.0 && m < 10.0, "mirror loss {m}");
    }
    let info = std::fs::read_to_string(run.join("experiment.info")).unwrap();
    assert!(info.contains("full_clock: true") && info.contains("policy_rate: 50"), "{info}");
    assert!(info.contains("reference: omni") && info.contains("reward: walk"), "{info}");
    // Evaluating iterations log the walking scalars (one episode, at the first eval command,
    // 1 m/s), alongside Test/Return; every iteration logs the std.
    let test_return = csv_column(&run.join("progress.csv"), "Test/Return");
    assert!(test_return.iter().any(Option::is_some), "an iteration evaluated: {test_return:?}");
    for col in ["Test/Forward Speed", "Test/Lateral Speed", "Test/Velocity Error"] {
        let values = csv_column(&run.join("progress.csv"), col);
        for (v, r) in values.iter().zip(&test_return) {
            assert_eq!(v.is_some(), r.is_some(), "{col} logged exactly when evaluating");
            assert!(v.is_none_or(f64::is_finite), "{col}: {values:?}");
        }
    }
    let std = csv_column(&run.join("progress.csv"), "Policy/Std");
    assert!(std.iter().all(|v| v.is_some_and(|s| (s - 0.2).abs() < 1e-6)), "{std:?}");
    // The share of inputs the normalizer clipped, every iteration, a share.
    let clipped = csv_column(&run.join("progress.csv"), "Policy/Clipped Inputs");
    assert!(clipped.iter().all(|v| v.is_some_and(|s| (0.0..=1.0).contains(&s))), "{clipped:?}");

    let path = run.to_str().unwrap();
    let o = gait(&[
        "eval",
        "--path",
        path,
        "--episodes",
        "1",
        "--traj-len",
        "20",
        "--command",
        "1,0,0",
    ]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("x_vel") && out.contains("left_force"), "reward terms reported: {out}");
    assert!(out.contains("forward_speed") && out.contains("pelvis_height"), "metrics: {out}");
    let episode = out.lines().find(|l| l.starts_with("episode")).unwrap();
    assert!(episode.contains("forward_speed"), "per-episode speeds: {episode}");
}

/// The reference's LocomotionClockEnv stays one set of flags away: 2 kHz, no reference gait,
/// the von Mises reward, omnidirectional commands, its 44-value observation.
#[test]
fn the_reference_task_trains_and_evaluates_from_its_flags() {
    let dir = tempfile::tempdir().unwrap();
    let logdir = dir.path().to_str().unwrap();
    let o = gait(&[
        "train",
        "ppo",
        "--env",
        "cassie",
        "--sim-dt",
        "0.0005",
        "--reference",
        "none",
        "--reward",
        "vonmises",
        "--commands",
        "omni",
        "--obs",
        "reference",
        "--timesteps",
        "300",
        "--num-steps",
        "300",
        "--traj-len",
        "50",
        "--prenormalize-steps",
        "50",
        "--batch-size",
        "64",
        "--num-eval-eps",
        "0",
        // No evaluations, so no gate for the perturbations (the preset's waits for one).
        "--robust-start-speed",
        "0",
        "--workers",
        "1",
        "--logdir",
        logdir,
    ]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let run = only_run(&only_run(&dir.path().join("cassie")));
    let exp = gait::logging::Experiment::load(&run).unwrap();
    assert_eq!(exp.net.obs_dim, 44, "the reference layout");
    let info = std::fs::read_to_string(run.join("experiment.info")).unwrap();
    for line in ["reference: none", "reward: vonmises", "commands: omni", "obs: reference"] {
        assert!(info.contains(line), "{line} in {info}");
    }
    let o = gait(&["eval", "--path", run.to_str().unwrap(), "--episodes", "1", "--traj-len", "10"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("left_force"), "von Mises terms: {}", stdout(&o));
}

/// `gait eval --path RUN --sim SIM --command C --episodes N --traj-len L`, which must succeed:
/// its episode lines.
fn eval_episodes(run: &str, sim: &str, command: &str, episodes: usize, len: usize) -> Vec<String> {
    let (n, len) = (episodes.to_string(), len.to_string());
    let args = ["--path", run, "--sim", sim, "--command", command];
    eval_lines(&[&args[..], &["--episodes", &n, "--traj-len", &len]].concat())
}

/// `gait eval ARGS`, which must succeed: its episode lines.
fn eval_lines(args: &[&str]) -> Vec<String> {
    let o = gait(&[&["eval"], args].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o).lines().filter(|l| l.starts_with("episode")).map(str::to_string).collect()
}

/// The value of `key` (`forward_speed`) in one `gait eval` episode line; panics without it.
fn episode_metric(episode: &str, key: &str) -> f64 {
    episode
        .split(&format!("{key} "))
        .nth(1)
        .and_then(|r| r.split(',').next())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{key} in {episode}"))
}

/// The shipped walking policy evaluates on a fresh clone, and walks in gait's model and on the
/// lab's MuJoCo model: 3 s at 1 m/s without a fall, going at least 0.7 m/s on average (over
/// 10 s it measured 0.88-0.90 on rapier and 0.94-0.97 on MuJoCo, docs/cassie.md Results; the
/// first second includes the start from rest).
#[test]
fn the_pretrained_policy_walks_in_both_simulators() {
    for sim in ["rapier", "mujoco"] {
        let out = stdout(&eval_pretrained("1", "150", &["--sim", sim]));
        let episode = out.lines().find(|l| l.starts_with("episode")).expect("an episode line");
        assert!(episode.contains("length 150"), "{sim}: no fall: {episode}");
        let speed = episode_metric(episode, "forward_speed");
        assert!(speed > 0.7, "{sim}: walks at 1 m/s: {episode}");
    }
}

/// `gait eval --action-noise SD` adds the training-style noise to the shipped policy's actions:
/// seeded (the same seed, the same episodes), different from the deterministic episode, 0 is
/// the deterministic policy, and a negative std is a usage error.
#[test]
fn action_noise_is_seeded_and_perturbs_the_policy() {
    let episodes = |extra: &[&str]| {
        let out = stdout(&eval_pretrained("1", "60", extra));
        out.lines().filter(|l| l.starts_with("episode")).map(str::to_string).collect::<Vec<_>>()
    };
    let deterministic = episodes(&[]);
    let noisy = episodes(&["--action-noise", "0.2"]);
    assert_eq!(noisy, episodes(&["--action-noise", "0.2"]), "seeded");
    assert_ne!(noisy, deterministic, "the noise changes the episode");
    assert_ne!(noisy, episodes(&["--action-noise", "0.2", "--seed", "1"]), "seeded by --seed");
    assert_eq!(episodes(&["--action-noise", "0"]), deterministic);
    let walk = common::pretrained_walk();
    let o = gait(&["eval", "--path", walk.to_str().unwrap(), "--action-noise", "-1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a std"), "{}", stderr(&o));
}

/// `gait eval --friction F` runs the floor at F times each model's own friction and says so:
/// at 0.3 the shipped policy, walking at 1 m/s for 2 s, drags its loaded feet more than three
/// times as fast as on its own floor (measured: `foot_slide` 0.263 against 0.040 m/s on
/// rapier, 0.497 against 0.070 on MuJoCo), on both models; `gait check --friction` runs its
/// cells on the same floor. Outside [0.01, 5] it is a usage error, for `gait check` too.
#[test]
fn eval_runs_the_policy_on_another_floor() {
    for sim in ["rapier", "mujoco"] {
        let run = |extra: &[&str]| {
            let out = stdout(&eval_pretrained("1", "100", &[&["--sim", sim], extra].concat()));
            let episode = out.lines().find(|l| l.starts_with("episode")).expect("an episode");
            let physics = out.lines().find(|l| l.starts_with("physics")).expect("physics line");
            (episode_metric(episode, "foot_slide"), physics.to_string())
        };
        let (own, own_line) = run(&[]);
        let (slippery, line) = run(&["--friction", "0.3"]);
        assert!(!own_line.contains("friction"), "{own_line}");
        assert!(line.contains("floor friction ×0.3"), "{line}");
        assert!(slippery > 3.0 * own, "{sim}: slide {slippery} vs {own}");
    }
    // `gait check --friction` runs its cells on that floor: the row's speed is eval's there.
    let walk = common::pretrained_walk();
    let args = ["--command", "1,0,0", "--episodes", "1", "--traj-len", "100", "--friction", "0.3"];
    let checked = gait(
        &[&["check", "--path", walk.to_str().unwrap(), "--sims", "rapier"], &args[..]].concat(),
    );
    let out = stdout(&checked);
    assert!(out.contains("floor friction: ×0.3 of each model's own"), "{out}");
    let row = out.lines().find(|l| l.starts_with("rapier")).expect("a row");
    let mean: f64 = row.split_whitespace().nth(3).unwrap().parse().unwrap();
    let evaluated = stdout(&gait(
        &[&["eval", "--path", walk.to_str().unwrap(), "--sim", "rapier"], &args[..]].concat(),
    ));
    let episode = evaluated.lines().find(|l| l.starts_with("episode")).expect("an episode");
    assert!((mean - episode_metric(episode, "forward_speed")).abs() < 0.0011, "{row} vs {episode}");
    for (command, value) in [("eval", "0"), ("eval", "6"), ("check", "nan")] {
        let o = gait(&[command, "--path", walk.to_str().unwrap(), "--friction", value]);
        assert_eq!(o.status.code(), Some(2), "{command} {value}: {}", stderr(&o));
        assert!(stderr(&o).contains("not a friction factor in [0.01, 5]"), "{}", stderr(&o));
    }
}

/// `scripts/check_robot.sh RUN OUT` runs the six robot-grade checks (made short here with its
/// extra flags), one summary line each with the check's exit code, and keeps each table in OUT.
#[test]
fn the_robot_checks_script_runs_every_check() {
    let out = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check_robot.sh");
    let walk = common::pretrained_walk();
    let o = std::process::Command::new(script)
        .args([walk.to_str().unwrap(), out.path().to_str().unwrap()])
        .args(["--episodes", "1", "--traj-len", "30", "--sims", "rapier"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    let names = ["nominal", "push-1.0", "push-exact", "latency-20ms", "sensor-noise", "course"];
    assert_eq!(lines.len(), names.len(), "{lines:?}");
    for (line, name) in lines.iter().zip(names) {
        assert!(line.starts_with(name) && line.contains("within: "), "{line}");
        let table = std::fs::read_to_string(out.path().join(format!("{name}.txt"))).unwrap();
        assert!(table.contains("rapier"), "{name}: {table}");
    }
    let latency = std::fs::read_to_string(out.path().join("latency-20ms.txt")).unwrap();
    assert!(latency.contains("sensing latency: 0.02 s"), "{latency}");
}

/// `gait eval --latency S` and `--sensor-noise K` run the policy with a robot's sensing and say
/// so on the physics line; `gait check` takes both and names them; the episode changes with
/// each; a latency longer than one policy step, or outside its range, is a usage error.
#[test]
fn eval_senses_with_latency_and_noise() {
    let run = |extra: &[&str]| {
        let out = stdout(&eval_pretrained("1", "100", &[&["--sim", "rapier"], extra].concat()));
        let episode = out.lines().find(|l| l.starts_with("episode")).expect("an episode");
        let physics = out.lines().find(|l| l.starts_with("physics")).expect("physics line");
        (episode_metric(episode, "forward_speed"), physics.to_string())
    };
    let (exact, line) = run(&[]);
    assert!(!line.contains("sensing") && !line.contains("noise"), "{line}");
    let (lagged, line) = run(&["--latency", "0.02"]);
    assert!(line.contains("sensing latency 0.02 s"), "{line}");
    assert_ne!(lagged, exact);
    let (noisy, line) = run(&["--sensor-noise", "1"]);
    assert!(line.contains("sensor noise ×1 of the reference's"), "{line}");
    assert_ne!(noisy, exact);
    let walk = common::pretrained_walk();
    let walk = walk.to_str().unwrap();
    let args = ["--command", "0.5,0,0", "--episodes", "1", "--traj-len", "50", "--sims", "rapier"];
    let out = stdout(&gait(
        &[&["check", "--path", walk, "--latency", "0.01", "--sensor-noise", "0.5"], &args[..]]
            .concat(),
    ));
    assert!(out.contains("sensing latency: 0.01 s"), "{out}");
    assert!(out.contains("sensor noise: ×0.5 of the reference's levels"), "{out}");
    for (command, flag, value, says) in [
        ("eval", "--latency", "0.03", "longer than one policy step"),
        ("check", "--latency", "0.03", "longer than one policy step"),
        ("eval", "--latency", "-0.01", "not a latency in [0, 0.05] s"),
        ("eval", "--sensor-noise", "11", "not a noise scale in [0, 10]"),
    ] {
        let o = gait(&[command, "--path", walk, flag, value]);
        assert_eq!(o.status.code(), Some(2), "{command} {flag} {value}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
}

/// The shipped walking policy (`pretrained/cassie-walk`, `pe1-s1`: the preset, seed 1)
/// walks backward and sidesteps both ways on gait's model and on the lab's MuJoCo model: 4 s
/// per command without a fall, at least 30 % of the commanded speed on average (these 4 s
/// measured −0.26 / −0.28 m/s backward on rapier / MuJoCo, 0.162-0.171 m/s sideways on rapier
/// and 0.176-0.180 on MuJoCo; over 20 s −0.28 to −0.30 and 0.16-0.18, docs/notebook/cassie-runs.md; the
/// first second includes the start from rest). Standing still would score 0.
#[test]
fn the_pretrained_policy_walks_backward_and_sideways() {
    let omni = common::pretrained_walk();
    for sim in ["rapier", "mujoco"] {
        for (command, axis, goal) in [
            ("-0.3,0,0", "forward_speed", -0.3),
            ("0,0.2,0", "lateral_speed", 0.2),
            ("0,-0.2,0", "lateral_speed", -0.2),
        ] {
            let episodes = eval_episodes(omni.to_str().unwrap(), sim, command, 1, 200);
            let episode = episodes.first().expect("an episode");
            assert!(episode.contains("length 200"), "{sim} {command}: no fall: {episode}");
            let speed = episode_metric(episode, axis);
            assert!(speed / goal > 0.3, "{sim} {command}: {axis} {speed}: {episode}");
        }
    }
}

/// `gait eval --gif`: one episode becomes an animated GIF with one frame per 3 policy steps,
/// each drawing the robot (pixels other than the background, sky and ground, in the middle of
/// the picture, where the camera keeps the pelvis). Envs that cannot describe their bodies
/// refuse with a usage error, before running anything.
#[test]
fn eval_renders_an_episode_as_a_gif() {
    let dir = tempfile::tempdir().unwrap();
    let gif_path = dir.path().join("walk.gif");
    let o = eval_pretrained("2", "60", &["--gif", gif_path.to_str().unwrap()]);
    assert!(stdout(&o).contains("(20 frames of episode 0)"), "{}", stdout(&o));
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut decoder = options.read_info(std::fs::File::open(&gif_path).unwrap()).unwrap();
    assert_eq!((decoder.width(), decoder.height()), (400, 300));
    let mut frames = 0;
    while let Some(frame) = decoder.read_next_frame().unwrap() {
        frames += 1;
        assert_eq!(frame.delay, 6, "3 policy steps of 20 ms, in 1/100 s");
        // The robot: dark or blue pixels in the central third of the picture.
        let (w, h) = (frame.width as usize, frame.height as usize);
        let robot = (h / 4..3 * h / 4)
            .flat_map(|y| (w / 3..2 * w / 3).map(move |x| (x, y)))
            .filter(|&(x, y)| {
                let p = &frame.buffer[4 * (y * w + x)..4 * (y * w + x) + 3];
                p[2] > p[0] + 40 || p.iter().all(|&c| c < 120)
            })
            .count();
        assert!(robot > 500, "frame {frames}: {robot} robot pixels");
    }
    assert_eq!(frames, 20);
    let size = std::fs::metadata(&gif_path).unwrap().len();
    assert!(size < 400_000, "{size} bytes for 20 frames");

    let run = trained_cartpole(&dir.path().join("c"), "c", &["--timesteps", "4000"]);
    let refused = dir.path().join("c.gif");
    let o = gait(&["eval", "--path", run.to_str().unwrap(), "--gif", refused.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("env 'cartpole' cannot describe its bodies"), "{}", stderr(&o));
    assert!(!refused.exists());
}

/// `--sim mujoco` end to end: a short Cassie training on the lab's model, recorded as such,
/// with the same `progress.csv` for 1 and 2 workers; its policy then runs on rapier, and
/// `gait eval --sim mujoco` on the shipped rapier-trained policy says it is a sim-to-sim check.
#[test]
fn cassie_trains_on_mujoco_with_the_same_numbers_for_any_worker_count() {
    let dir = tempfile::tempdir().unwrap();
    let logdir = dir.path().to_str().unwrap();
    let train = |workers: &str, name: &str| {
        let o = gait(&[
            "train",
            "ppo",
            "--env",
            "cassie",
            "--sim",
            "mujoco",
            "--timesteps",
            "2400",
            "--num-steps",
            "800",
            "--traj-len",
            "60",
            "--prenormalize-steps",
            "100",
            "--batch-size",
            "64",
            "--eval-freq",
            "3",
            "--num-eval-eps",
            "1",
            "--seed",
            "3",
            "--workers",
            workers,
            "--run-name",
            name,
            "--logdir",
            logdir,
        ]);
        assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
        let run = only_run(&dir.path().join("cassie").join(name));
        let rows = std::fs::read_to_string(run.join("progress.csv")).unwrap();
        (run, rows)
    };
    let (run, two) = train("2", "two");
    let (_, one) = train("1", "one");
    assert_eq!(two.lines().count(), 4, "{two}");
    assert_eq!(one, two, "the worker count changed MuJoCo's numbers");
    let experiment = std::fs::read_to_string(run.join("experiment.json")).unwrap();
    assert!(experiment.contains("\"sim\": \"mujoco\""), "{experiment}");

    let run = run.to_str().unwrap();
    let o =
        gait(&["eval", "--path", run, "--episodes", "1", "--traj-len", "20", "--sim", "rapier"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("physics: rapier") && out.contains("trained on mujoco"), "{out}");

    let o = gait(&[
        "eval",
        "--path",
        "pretrained/cassie-walk",
        "--sim",
        "mujoco",
        "--command",
        "1,0,0",
        "--episodes",
        "1",
        "--traj-len",
        "50",
    ]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("physics: mujoco (MuJoCo on the lab's cassie_fast.xml), dt 0.0005 s"),
        "{out}"
    );
    assert!(out.contains("trained on a mix (rapier+mujoco@0.004)"), "the shipped policy: {out}");
}

/// `gait eval --course`: an episode runs the whole course (1 s + 0.5 s = 75 steps at 50 Hz),
/// its second leg on the rough ground it names, each leg's settled means are printed, the GIF
/// is drawn for it, and a malformed leg or ground, a ground beside --terrain, or a course given
/// with --command, is a usage error (exit 2) that names the leg and writes nothing.
#[test]
fn eval_runs_a_scripted_course() {
    let dir = tempfile::tempdir().unwrap();
    let walk = common::pretrained_walk();
    let walk = walk.to_str().unwrap();
    let gif_path = dir.path().join("course.gif");
    let gif = gif_path.to_str().unwrap();
    let o = gait(&[
        "eval",
        "--path",
        walk,
        "--episodes",
        "1",
        "--course",
        "1:1,0,0",
        "0.5:0,0,0.4@rough:0.5",
        "--gif",
        gif,
    ]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("length 75,"), "{}", stdout(&o));
    assert!(stdout(&o).contains("yaw_rate"), "{}", stdout(&o));
    assert!(stdout(&o).contains("(25 frames of episode 0)"), "{}", stdout(&o));
    // Each leg's means from its settling time on (a second, at most half the leg).
    for leg in [
        "  leg 0: 0.0-1.0 s at 1,0,0, from 0.5 s: forward_speed ",
        "  leg 1: 1.0-1.5 s at 0,0,0.4, from 1.2 s: forward_speed ",
    ] {
        assert!(stdout(&o).contains(leg), "{leg}: {}", stdout(&o));
    }
    let bad = dir.path().join("bad.gif");
    for (args, message) in [
        (vec!["--course", "1:1,0"], "'1:1,0': a course leg is SECONDS:X,Y,TURN"),
        (vec!["--course", "0:1,0,0"], "a leg lasts more than 0"),
        (vec!["--course", "1:0,9,0"], "--course: command y = 9 is outside"),
        (vec!["--course", "1:1,0,0", "--command", "1,0,0"], "cannot be used with"),
        (vec!["--course", "1:1,0,0", "1:1,0,0@mix"], "course ground: leg 2: a course names"),
        (vec!["--course", "1:1,0,0@stairs:2"], "the difficulty after ':' is a number in [0, 1]"),
        (vec!["--course", "1:1,0,0@rough", "--terrain", "slope"], "give one or the other"),
    ] {
        let mut all =
            vec!["eval", "--path", walk, "--episodes", "1", "--gif", bad.to_str().unwrap()];
        all.extend(args.iter());
        let o = gait(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
        assert!(!bad.exists(), "{args:?} wrote a GIF");
    }
}

/// `--privileged-critic` end to end, with the perturbations it is for (noise, randomized
/// dynamics, pushes from the first step): the run records the critic's own input size, 1 and
/// 2 workers give the same numbers, 2 + 1 iterations continued with `--previous` equal 3, and
/// the policy evaluates as any other (the critic never reaches `gait eval`).
#[test]
fn a_privileged_critic_trains_deterministically_and_resumes_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let logdir = dir.path().to_str().unwrap();
    let train = |extra: &[&str], name: &str| {
        let mut args = vec![
            "train",
            "ppo",
            "--env",
            "cassie",
            "--privileged-critic",
            "--obs-noise",
            "1",
            "--dynamics-randomization",
            "--push",
            "1",
            "--robust-start",
            "0",
            // The preset's gate and decay off: perturbations from step 0, and a continuation
            // to a larger --timesteps keeps the constant rate (a decay would stretch).
            "--robust-start-speed",
            "0",
            "--lr-decay",
            "0",
            "--num-steps",
            "600",
            "--traj-len",
            "60",
            "--prenormalize-steps",
            "100",
            "--batch-size",
            "64",
            "--eval-freq",
            "2",
            "--num-eval-eps",
            "1",
            "--seed",
            "2",
            "--run-name",
            name,
            "--logdir",
            logdir,
        ];
        args.extend_from_slice(extra);
        let o = gait(&args);
        assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
        let run = only_run(&dir.path().join("cassie").join(name));
        let rows = std::fs::read_to_string(run.join("progress.csv")).unwrap();
        (run, rows)
    };
    let (full, rows) = train(&["--timesteps", "1800", "--workers", "2"], "full");
    let (_, one) = train(&["--timesteps", "1800", "--workers", "1"], "one");
    assert_eq!(rows.lines().count(), 4, "{rows}");
    assert_eq!(one, rows, "the worker count changed the numbers");
    let info = std::fs::read_to_string(full.join("experiment.info")).unwrap();
    assert!(info.contains("critic_obs_dim: 62"), "47 noise-free + 15 privileged: {info}");

    let (part, first) = train(&["--timesteps", "1200", "--workers", "2"], "part");
    let o = gait(&["train", "ppo", "--previous", part.to_str().unwrap(), "--timesteps", "1800"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let cont = common::continuation_of(&part);
    let rest = std::fs::read_to_string(cont.join("progress.csv")).unwrap();
    let joined: Vec<&str> = first.lines().chain(rest.lines().skip(1)).collect::<Vec<_>>();
    assert_eq!(joined, rows.lines().collect::<Vec<_>>(), "the continuation diverged");

    let o =
        gait(&["eval", "--path", full.to_str().unwrap(), "--episodes", "1", "--traj-len", "20"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
}

/// `--terrain-levels` end to end, continuing the shipped walker on the mix: each kind's level
/// is a `progress.csv` column, starts at 0 and moves with how the kind's episodes went (the
/// walker crosses the easiest slopes); 1 and 2 workers log the same numbers, and a run
/// continued with `--previous` carries the levels on exactly (they are in the resume state).
#[test]
fn adaptive_terrain_levels_move_deterministically_and_resume_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let walker = concat!(env!("CARGO_MANIFEST_DIR"), "/pretrained/cassie-walk");
    // Each continuation writes its `-cont-` dir beside the run it continues: a copy per run.
    let copy = |name: &str| {
        let to = dir.path().join(name).join("walker");
        std::fs::create_dir_all(&to).unwrap();
        for entry in std::fs::read_dir(walker).unwrap().flatten() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
        to
    };
    let train = |previous: &Path, timesteps: &str, workers: &str| {
        let o = gait(&[
            "train",
            "ppo",
            "--previous",
            previous.to_str().unwrap(),
            "--terrain",
            "mix",
            "--terrain-levels",
            "--terrain-difficulty",
            "1",
            "--terrain-start",
            "0",
            // A constant rate: the part run's smaller --timesteps would stretch a decay.
            "--lr-decay",
            "0",
            // Iterations of 40 episodes of 150 steps: about 8 per kind, and long enough for
            // the commands to ask for a metre or more along the ground.
            "--num-steps",
            "6000",
            "--traj-len",
            "150",
            "--eval-freq",
            "100",
            "--num-eval-eps",
            "1",
            "--timesteps",
            timesteps,
            "--workers",
            workers,
        ]);
        assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
        let cont = common::continuation_of(previous);
        let rows = std::fs::read_to_string(cont.join("progress.csv")).unwrap();
        (cont, rows, stderr(&o))
    };
    // The walker stopped at 13,001,268 steps: three more iterations. Its best-eval weights
    // scored the flat task, so the terrain run does not carry them, and says why.
    let (_, rows, err) = train(&copy("two"), "13019000", "2");
    assert!(err.contains("scored another task (env.cassie.terrain: \"flat\" -> \"mix\""), "{err}");
    assert!(!err.contains("copied from"), "{err}");
    let (_, one, _) = train(&copy("one"), "13019000", "1");
    assert_eq!(one, rows, "the worker count changed the numbers");
    let mut lines = rows.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let kinds = ["Rough", "Slope", "Stairs", "Flights"];
    let columns: Vec<usize> = kinds
        .iter()
        .map(|k| header.iter().position(|h| *h == format!("Terrain/Level {k}")).unwrap())
        .collect();
    let levels: Vec<Vec<f64>> = lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            columns.iter().map(|&c| cells[c].parse().unwrap()).collect()
        })
        .collect();
    assert_eq!(levels.len(), 3, "{rows}");
    assert_eq!(levels[0], vec![0.0; 4], "every kind starts at its easiest ground");
    assert!(levels.last().unwrap().iter().any(|&l| l > 0.0), "no level moved: {levels:?}");
    assert!(levels.iter().flatten().all(|&l| (0.0..=1.0).contains(&l)), "{levels:?}");

    let (part, first, _) = train(&copy("part"), "13013000", "2");
    let (cont, rest, err) = train(&part, "13019000", "2");
    assert!(!err.contains("another task"), "the same settings are the same task: {err}");
    let joined: Vec<&str> = first.lines().chain(rest.lines().skip(1)).collect::<Vec<_>>();
    assert_eq!(joined, rows.lines().collect::<Vec<_>>(), "the continuation diverged");

    // The levels are training's: the run evaluates on the flat floor and on any ground.
    for ground in [&[][..], &["--terrain", "upstairs"][..]] {
        let mut args = vec!["eval", "--path", cont.to_str().unwrap(), "--episodes", "1"];
        args.extend_from_slice(&["--traj-len", "20"]);
        args.extend_from_slice(ground);
        let o = gait(&args);
        assert!(o.status.success(), "{ground:?}: {}{}", stdout(&o), stderr(&o));
    }
}

/// A blind walker continues into a height-scan run (`--previous ... --height-scan`): the
/// scan's inputs start with zero weights, so with learning rates that move nothing the policy
/// walks the flat floor exactly as the walker does (the same evaluation line, bit for bit),
/// and its new inputs' normalizer is the scan's fixed one (1.0 ± 0.2 m).
/// An observation changed in the middle (`--full-clock`) is still refused.
#[test]
fn a_blind_walker_grows_a_height_scan() {
    let dir = tempfile::tempdir().unwrap();
    let walker = dir.path().join("walker");
    std::fs::create_dir_all(&walker).unwrap();
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/pretrained/cassie-walk");
    for entry in std::fs::read_dir(shipped).unwrap().flatten() {
        std::fs::copy(entry.path(), walker.join(entry.file_name())).unwrap();
    }
    let w = walker.to_str().unwrap();
    // The walker stopped at 13,001,268 steps: one more 600-step iteration.
    let grow = |extra: &[&str]| {
        // Learning rates too small to move a weight: one update leaves the policy as it was.
        let mut args = vec!["train", "ppo", "--previous", w, "--height-scan", "--a-lr", "1e-30"];
        args.extend_from_slice(&["--c-lr", "1e-30", "--num-steps", "600", "--traj-len", "60"]);
        args.extend_from_slice(&["--prenormalize-steps", "200", "--eval-freq", "100"]);
        args.extend_from_slice(&["--timesteps", "13001800"]);
        args.extend_from_slice(extra);
        gait(&args)
    };
    let o = grow(&["--full-clock"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("may only append inputs after the previous"), "{}", stderr(&o));
    let o = grow(&[]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let grown = common::continuation_of(&walker);
    let info = std::fs::read_to_string(grown.join("experiment.info")).unwrap();
    assert!(info.contains("obs_dim: 112"), "47 + the 65-point scan: {info}");
    let get = |name: &str| latest_actor_tensor(&grown, name);
    let (mean, std) = (get("obs_norm.mean"), get("obs_norm.std"));
    assert!(mean[47..].iter().zip(&std[47..]).all(|m| m == (&1.0, &0.2)), "{mean:?} {std:?}");
    let first = get("layers.0.weight");
    assert!(first.chunks(112).all(|row| row[47..].iter().all(|&x| x.abs() < 1e-20)));
    let eval = |run: &Path| {
        let run = run.to_str().unwrap();
        eval_lines(&["--path", run, "--latest", "--episodes", "1", "--traj-len", "100"])
    };
    assert_eq!(eval(&grown), eval(&walker), "the scan changed the walker's steps");
}

/// The height scan's normalizer is fixed in a fresh run too, through the prenormalization and
/// every `--update-norm` after it, while the other inputs' statistics follow the data.
#[test]
fn the_height_scans_normalizer_stays_fixed_under_update_norm() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["--height-scan", "--update-norm", "--timesteps", "1200"];
    let (run, _, _) = small_gated_run(dir.path(), &args, "scan");
    let get = |name: &str| latest_actor_tensor(&run, name);
    let (mean, std) = (get("obs_norm.mean"), get("obs_norm.std"));
    assert_eq!(mean.len(), 112, "47 + the 65-point scan");
    assert!(mean[47..].iter().zip(&std[47..]).all(|m| m == (&1.0, &0.2)), "{mean:?} {std:?}");
    assert!(std[..47].iter().all(|&s| s != 1.0 && s != 0.2), "measured: {std:?}");
}

/// The tensor `name` of `run`'s latest actor weights, flattened.
fn latest_actor_tensor(run: &Path, name: &str) -> Vec<f32> {
    let actor = tch::Tensor::read_safetensors(run.join("actor_latest.safetensors")).unwrap();
    let t = &actor.iter().find(|(n, _)| n == name).unwrap().1;
    Vec::<f32>::try_from(t.flatten(0, -1)).unwrap()
}

/// A small Cassie run for the gate tests: `args` on top of 600-step iterations of 60-step
/// episodes, an evaluation every iteration, seed 3, as `name` under `dir`; its run directory,
/// `progress.csv` and stderr.
fn small_gated_run(dir: &Path, args: &[&str], name: &str) -> (PathBuf, String, String) {
    let logdir = dir.to_str().unwrap();
    let mut all = vec!["train", "ppo", "--env", "cassie", "--num-steps", "600", "--traj-len", "60"];
    all.extend([
        // A constant rate: the continuations here run to a larger --timesteps, which would
        // stretch the preset's decay.
        "--lr-decay",
        "0",
        // The reference of before the preset's longer reach and cadence: these tests need an
        // early evaluation that moves forward at 1 m/s to set a gate from, and seed 3's first
        // evaluations do with it (with the preset's they drift back 0.01-0.08 m/s).
        "--forward-reach",
        "0.25",
        "--cadence",
        "0",
        "--prenormalize-steps",
        "100",
        "--batch-size",
        "64",
        "--eval-freq",
        "1",
        "--num-eval-eps",
        "1",
        "--seed",
        "3",
        "--run-name",
        name,
        "--logdir",
        logdir,
    ]);
    all.extend_from_slice(args);
    let o = gait(&all);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let run = only_run(&dir.join("cassie").join(name));
    let rows = std::fs::read_to_string(run.join("progress.csv")).unwrap();
    (run, rows, stderr(&o))
}

/// The step a gate opens at in a run whose gate never opened (`closed`): the best
/// `Test/Forward Speed` of its first four evaluations (the first iteration has none), the row
/// it is in, and that row's steps; rows after it remain.
fn gate_from(closed: &Path) -> (String, usize, u64) {
    let speeds = csv_column(&closed.join("progress.csv"), "Test/Forward Speed");
    let steps = csv_column(&closed.join("progress.csv"), "Time/Total Timesteps");
    let evaluated: Vec<(usize, f64)> =
        speeds.iter().enumerate().filter_map(|(i, v)| v.map(|v| (i, v))).collect();
    assert!(evaluated.len() >= 4 && speeds.len() > evaluated[3].0 + 1, "{speeds:?}");
    let (at, best) =
        evaluated[..4].iter().copied().fold((0, f64::MIN), |a, b| if b.1 > a.1 { b } else { a });
    assert!(best > 0.0, "the 1 m/s evaluation moves forward: {speeds:?}");
    (format!("{best}"), at, steps[at].unwrap() as u64)
}

/// `--omni-start-speed`: the runner opens the omnidirectional stage at the first evaluation
/// whose `Test/Forward Speed` reaches the setting; until then the run is the one whose gate
/// never opens, after it the commands change. The stage's step is the same for any worker
/// count and survives a resume.
#[test]
fn a_gated_curriculum_opens_at_its_evaluation_and_resumes_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let train = |speed: &str, extra: &[&str], name: &str| {
        let mut args = vec![
            "--commands",
            "omni-walk",
            "--reference",
            "omni",
            "--omni-start-speed",
            speed,
            // From the first step on (the preset's stage waits for 2M steps as well).
            "--omni-start",
            "0",
            "--robust-start-speed",
            "0",
        ];
        args.extend_from_slice(extra);
        small_gated_run(dir.path(), &args, name)
    };
    let six = ["--timesteps", "3600", "--workers", "2"];
    let (closed, closed_rows, log) = train("2", &six, "closed");
    assert!(!log.contains("curriculum:"), "{log}");
    let (gate, at, opened) = gate_from(&closed);
    let steps = csv_column(&closed.join("progress.csv"), "Time/Total Timesteps");
    let (open, open_rows, log) = train(&gate, &six, "open");
    assert!(log.contains(&format!("the next stage begins at {opened} steps")), "{log}");
    let (closed_lines, open_lines): (Vec<_>, Vec<_>) =
        (closed_rows.lines().collect(), open_rows.lines().collect());
    assert_eq!(open_lines[..at + 2], closed_lines[..at + 2], "the same run until the gate");
    assert_ne!(open_lines[at + 2..], closed_lines[at + 2..], "the commands changed after it");
    let (_, one_rows, _) = train(&gate, &["--timesteps", "3600", "--workers", "1"], "one");
    assert_eq!(one_rows, open_rows, "the worker count changed the numbers");

    // A run stopped right after the iteration whose evaluation opened the gate continues
    // exactly (rows remain after it: `gate_from`).
    let part_steps = format!("{}", steps[at].unwrap() as u64);
    let (part, first, _) = train(&gate, &["--timesteps", &part_steps, "--workers", "2"], "part");
    let o = gait(&["train", "ppo", "--previous", part.to_str().unwrap(), "--timesteps", "3600"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let rest = std::fs::read_to_string(common::continuation_of(&part).join("progress.csv"));
    let joined: Vec<String> =
        first.lines().chain(rest.unwrap().lines().skip(1)).map(String::from).collect();
    assert_eq!(joined, open_lines, "the continuation diverged");
    let _ = open;
}

/// `--robust-start-speed`: the perturbations (here pushes, noise and randomized dynamics at
/// full strength at once) wait for the evaluation that opens the gate; until then the run is
/// the one whose gate never opens, after it the perturbations change it.
#[test]
fn gated_perturbations_begin_at_their_evaluation() {
    let dir = tempfile::tempdir().unwrap();
    let train = |speed: &str, name: &str| {
        let args = [
            "--robust-start-speed",
            speed,
            "--robust-start",
            "0",
            "--robust-ramp",
            "0",
            "--timesteps",
            "3600",
        ];
        small_gated_run(dir.path(), &args, name)
    };
    let (closed, closed_rows, log) = train("2", "closed");
    assert!(!log.contains("curriculum:"), "{log}");
    let (gate, at, opened) = gate_from(&closed);
    let (_, open_rows, log) = train(&gate, "open");
    assert!(log.contains(&format!("the next stage begins at {opened} steps")), "{log}");
    let (closed_lines, open_lines): (Vec<_>, Vec<_>) =
        (closed_rows.lines().collect(), open_rows.lines().collect());
    assert_eq!(open_lines[..at + 2], closed_lines[..at + 2], "the same run until the gate");
    assert_ne!(open_lines[at + 2..], closed_lines[at + 2..], "perturbed after it");
}

/// `--best-by tracking` end to end: with the training distribution settled from the first
/// step (no curriculum, `--best-after-settled 0`), every evaluation also runs the 7 eval
/// commands on both models and logs `Test/Tracking Error`; the best-eval weights are those
/// the lowest one scored (saved every iteration here, so they can be compared); 1 and 2
/// workers log the same numbers. `selection.csv` holds each evaluation's cells, which make
/// up its `Test/Cells Within` and `Test/Tracking Error`. `--best-by cells` trains the same
/// numbers and keeps the weights of the most `Test/Cells Within`; `--selection-commands
/// mirrored` scores the walking task's 10 commands on both models and changes nothing else.
/// An env without eval commands refuses either setting (exit 2).
#[test]
fn the_tracking_score_chooses_the_best_eval_weights() {
    let dir = tempfile::tempdir().unwrap();
    let logdir = dir.path().to_str().unwrap();
    let train_with = |workers: &str, name: &str, by: &str, extra: &[&str]| {
        let mut args = vec!["train", "ppo", "--env", "cassie", "--best-by", by];
        args.extend_from_slice(extra);
        args.extend_from_slice(common::SETTLED_FROM_THE_START);
        args.extend([
            "--num-steps",
            "600",
            "--traj-len",
            "40",
            "--prenormalize-steps",
            "100",
            "--batch-size",
            "64",
            "--eval-freq",
            "1",
            "--num-eval-eps",
            "1",
            "--selection-len",
            "50",
            "--timesteps",
            "2400",
            "--save-freq",
            "1",
            "--seed",
            "4",
            "--workers",
            workers,
            "--run-name",
            name,
            "--logdir",
            logdir,
        ]);
        let o = gait(&args);
        assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
        only_run(&dir.path().join("cassie").join(name))
    };
    let train = |workers: &str, name: &str, by: &str| train_with(workers, name, by, &[]);
    let run = train("2", "two", "tracking");
    let progress = run.join("progress.csv");
    let errors = csv_column(&progress, "Test/Tracking Error");
    let scored: Vec<(usize, f64)> =
        errors.iter().enumerate().filter_map(|(i, e)| e.map(|e| (i, e))).collect();
    assert!(scored.len() >= 3, "{errors:?}");
    assert!(scored.iter().all(|(_, e)| e.is_finite() && *e > 0.0), "{errors:?}");
    // `Test/Cells Within` counts the 14 cells (7 commands × 2 models) within the bounds, on
    // exactly the rows that have a score; with all 14 within, the mean error is at most 1.
    let within = csv_column(&progress, "Test/Cells Within");
    assert_eq!(within.len(), errors.len());
    for (w, e) in within.iter().zip(&errors) {
        assert_eq!(w.is_some(), e.is_some(), "{within:?} {errors:?}");
        if let (Some(w), Some(e)) = (w, e) {
            assert!(w.fract() == 0.0 && (0.0..=14.0).contains(w), "{within:?}");
            assert!(*w < 14.0 || *e <= 1.0, "{within:?} {errors:?}");
        }
    }
    // Row k scored the weights iteration k collected with, which `--save-freq` keeps as
    // actor_k (those of every other row differ).
    let (best_row, _) =
        scored.iter().copied().fold((0, f64::MAX), |a, b| if b.1 < a.1 { b } else { a });
    let best_is_row = |run: &Path, row: usize| {
        let best = std::fs::read(run.join("actor.safetensors")).unwrap();
        let kept = |k: usize| std::fs::read(run.join(format!("actor_{k}.safetensors"))).unwrap();
        assert!(best == kept(row), "actor.safetensors is not row {row}'s weights");
        assert!(best != kept(row + 1) && (row == 0 || best != kept(row - 1)), "one row's");
        let summary = std::fs::read_to_string(run.join("summary.json")).unwrap();
        let summary: serde_json::Value = serde_json::from_str(&summary).unwrap();
        let (error, cells) = (errors[row].unwrap(), within[row].unwrap());
        let kept = summary["best_tracking_error"].as_f64().expect("summary.json names the score");
        assert!((kept - error).abs() < 1e-9, "{kept} vs {error}");
        assert_eq!(summary["best_cells_within"].as_f64(), Some(cells), "{summary}");
    };
    best_is_row(&run, best_row);
    let one = train("1", "one", "tracking");
    let rows = |run: &Path| std::fs::read_to_string(run.join("progress.csv")).unwrap();
    assert_eq!(rows(&one), rows(&run), "the worker count changed the numbers");
    let table = |run: &Path| std::fs::read_to_string(run.join("selection.csv")).unwrap();
    assert_eq!(table(&one), table(&run), "the worker count changed the cells");

    // `selection.csv`: the 14 cells of every scored row, in cell order (the 7 eval commands
    // on rapier, then on MuJoCo), whose `within` count and mean worst error are the row's.
    let cells_of = |run: &Path| {
        let text = table(run);
        let mut lines = text.lines();
        let header = lines.next().unwrap();
        assert_eq!(
            header,
            "iteration,timesteps,model,x,y,turn,episodes,falls,worst_error,within,forward,\
             lateral,yaw_rate"
        );
        lines.map(|l| l.split(',').map(str::to_owned).collect::<Vec<_>>()).collect::<Vec<_>>()
    };
    let cell_rows = cells_of(&run);
    assert_eq!(cell_rows.len(), 14 * scored.len(), "{cell_rows:?}");
    for (&(row, error), evaluation) in scored.iter().zip(cell_rows.chunks(14)) {
        let models: Vec<&str> = evaluation.iter().map(|c| c[2].as_str()).collect();
        assert_eq!(models, [["rapier"; 7], ["mujoco"; 7]].concat());
        // Row k is iteration k (row 0: iteration 0).
        assert!(evaluation.iter().all(|c| c[0] == row.to_string()), "{evaluation:?}");
        let worst: Vec<f64> = evaluation.iter().map(|c| c[8].parse().unwrap()).collect();
        let mean = worst.iter().sum::<f64>() / 14.0;
        assert!((mean - error).abs() < 1e-9, "{mean} vs {error}");
        let n = evaluation.iter().filter(|c| c[9] == "1").count();
        assert_eq!(Some(n as f64), within[row], "{evaluation:?}");
        assert!(evaluation.iter().all(|c| (c[9] == "1") == (c[8].parse::<f64>().unwrap() <= 1.0)));
    }

    // `--best-by cells` trains the same numbers and keeps the weights of the most cells
    // within, the lowest error among those (the first of equals).
    let cells = train("2", "cells", "cells");
    assert_eq!(rows(&cells), rows(&run), "the rule changed the training");
    let (cells_row, _) = scored.iter().fold((0, (-1.0, 0.0)), |a, &(row, error)| {
        let key = (within[row].unwrap(), -error);
        if key > a.1 {
            (row, key)
        } else {
            a
        }
    });
    best_is_row(&cells, cells_row);

    // `--selection-commands mirrored`: the same training and evaluation, 20 cells (the
    // walking task's 10 commands on each model) in `selection.csv`.
    let mirrored = train_with("2", "mirrored", "cells", &["--selection-commands", "mirrored"]);
    let without_selection = |run: &Path| {
        let rows = common::csv_rows_of(rows(run).as_bytes());
        let keep: Vec<usize> = (0..rows[0].len())
            .filter(|&i| {
                !["Test/Tracking Error", "Test/Cells Within"].contains(&rows[0][i].as_str())
            })
            .collect();
        rows.iter()
            .map(|r| keep.iter().map(|&i| r[i].clone()).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    };
    assert_eq!(without_selection(&mirrored), without_selection(&run));
    let cell_rows = cells_of(&mirrored);
    assert_eq!(cell_rows.len(), 20 * scored.len(), "{cell_rows:?}");
    let mut commands: Vec<String> = cell_rows[..10].iter().map(|c| c[3..6].join(",")).collect();
    commands.sort();
    assert_eq!(
        commands,
        [
            "-0.3,0.0,0.0",
            "0.0,-0.2,0.0",
            "0.0,0.0,-0.4",
            "0.0,0.0,0.0",
            "0.0,0.0,0.4",
            "0.0,0.2,0.0",
            "0.5,0.0,0.0",
            "0.6,0.0,-0.3",
            "0.6,0.0,0.3",
            "1.0,0.0,0.0"
        ]
    );

    // `--selection-every 2`: the same training and evaluations; selections only at the even
    // iterations (`--eval-freq 1`), each the cells it scored in the full run; the best
    // weights the most cells within among those.
    let sparse = train_with("2", "sparse", "cells", &["--selection-every", "2"]);
    assert_eq!(without_selection(&sparse), without_selection(&run));
    let sparse_within = csv_column(&sparse.join("progress.csv"), "Test/Cells Within");
    for (row, (w, full)) in sparse_within.iter().zip(&within).enumerate() {
        let expected = if row % 2 == 0 { *full } else { None };
        assert_eq!(*w, expected, "row {row}: {sparse_within:?} {within:?}");
    }
    let sparse_rows = cells_of(&sparse);
    assert!(
        !sparse_rows.is_empty()
            && sparse_rows.iter().all(|c| c[0].parse::<u64>().unwrap() % 2 == 0)
    );
    let (sparse_row, _) =
        scored.iter().filter(|(row, _)| row % 2 == 0).fold((0, (-1.0, 0.0)), |a, &(row, error)| {
            let key = (within[row].unwrap(), -error);
            if key > a.1 {
                (row, key)
            } else {
                a
            }
        });
    best_is_row(&sparse, sparse_row);

    // `--best-by last`: no selection episodes, the same training and evaluations (the
    // selection draws from its own seeds), the last evaluated weights kept.
    let last = train("2", "last", "last");
    assert_eq!(without_selection(&last), without_selection(&run));
    let returns = csv_column(&last.join("progress.csv"), "Test/Return");
    let row = returns.iter().rposition(Option::is_some).unwrap();
    let read = |name: String| std::fs::read(last.join(name)).unwrap();
    assert!(read("actor.safetensors".into()) == read(format!("actor_{row}.safetensors")));
    assert!(!last.join("selection.csv").exists() || table(&last).lines().count() <= 1);

    for by in ["tracking", "cells"] {
        let o = gait(&["train", "ppo", "--env", "cartpole", "--best-by", by, "--logdir", logdir]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let refusal = format!("--best-by {by}: env 'cartpole' has no eval commands");
        assert!(stderr(&o).contains(&refusal), "{}", stderr(&o));
        assert!(!dir.path().join("cartpole").exists(), "nothing written");
    }
}

/// `gait check`: one row per command on each model, in order, each row's means those of
/// `gait eval` with the same command, model and episodes; the table is the same for one
/// worker or two; the exit code is 0 exactly when every cell is within (3 otherwise); bad
/// commands, missing weights and non-walking runs are usage errors (2) before any output.
#[test]
fn check_judges_each_command_on_each_model_as_eval_measures_it() {
    let walk = common::pretrained_walk();
    let walk = walk.to_str().unwrap();
    let check = |workers: &str| {
        gait(&[
            "check",
            "--path",
            walk,
            "--command",
            "0.5,0,0",
            "--command",
            "-0.3,0,0",
            "--sims",
            "rapier,mujoco",
            "--episodes",
            "2",
            "--traj-len",
            "100",
            "--workers",
            workers,
        ])
    };
    let (one, two) = (check("1"), check("2"));
    assert!(matches!(two.status.code(), Some(0 | 3)), "{}{}", stdout(&two), stderr(&two));
    assert_eq!(stdout(&one), stdout(&two), "the worker count changed the table");
    assert_eq!(one.status.code(), two.status.code());
    let out = stdout(&two);
    let rows: Vec<&str> =
        out.lines().filter(|l| l.starts_with("rapier") || l.starts_with("mujoco")).collect();
    let cells: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| {
            let w: Vec<&str> = r.split_whitespace().collect();
            (w[0], w[1])
        })
        .collect();
    assert_eq!(
        cells,
        [
            ("rapier", "0.5,0,0"),
            ("rapier", "-0.3,0,0"),
            ("mujoco", "0.5,0,0"),
            ("mujoco", "-0.3,0,0")
        ],
        "{out}"
    );
    // Each row's mean forward speed is the mean of `gait eval`'s two episodes.
    for (row, (sim, command)) in rows.iter().zip(&cells) {
        let episodes = eval_episodes(walk, sim, command, 2, 100);
        let speeds: Vec<f64> =
            episodes.iter().map(|l| episode_metric(l, "forward_speed")).collect();
        assert_eq!(speeds.len(), 2, "{episodes:?}");
        let mean: f64 = row.split_whitespace().nth(3).unwrap().parse().unwrap();
        assert!((mean - (speeds[0] + speeds[1]) / 2.0).abs() < 0.0011, "{row} vs {episodes:?}");
    }
    let within = rows.iter().filter(|r| r.ends_with(" yes")).count();
    let summary = out.lines().last().unwrap();
    assert!(summary.starts_with(&format!("within: {within} of 4 cells; falls: ")), "{out}");
    assert_eq!(two.status.code(), Some(if within == 4 { 0 } else { 3 }), "{out}");

    let o = gait(&["check", "--path", walk, "--command", "1,0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim(), "error: --command takes 3 values x,y,turn, got 2");
    // Refusals that need the env or the run (a command past the env's range after a valid one,
    // weights that were never saved) come before the first line too: one error, no table.
    for (flags, error) in [
        (
            ["--command", "1,0,0", "--command", "0,9,0"],
            "error: --command: command y = 9 is outside [-2, 2] m/s",
        ),
        (["--command", "1,0,0", "--iteration", "99999"], "error: --iteration 99999: "),
    ] {
        let mut args = vec!["check", "--path", walk];
        args.extend(flags);
        let o = gait(&args);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", stderr(&o));
        assert!(stderr(&o).starts_with(error), "{flags:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert_eq!(stdout(&o), "", "{flags:?}: nothing ran");
    }
    let dir = tempfile::tempdir().unwrap();
    let cartpole = trained_cartpole(dir.path(), "c", &["--timesteps", "1000"]);
    let o = gait(&["check", "--path", cartpole.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("env 'cartpole' has no physics models"), "{}", stderr(&o));
    assert_eq!(stdout(&o), "", "nothing ran");
}

/// `gait check --course`: one cell per leg on each model, each leg's means those that
/// `gait eval --course` prints for the leg.
#[test]
fn check_judges_a_course_leg_by_leg_as_eval_measures_it() {
    let walk = common::pretrained_walk();
    let walk = walk.to_str().unwrap();
    let course = ["2:0.5,0,0", "2:0,0,0.4", "1:0,0,0"];
    let mut args = vec!["check", "--path", walk, "--sims", "rapier", "--episodes", "1", "--course"];
    args.extend(course);
    let o = gait(&args);
    assert!(matches!(o.status.code(), Some(0 | 3)), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("rapier")).collect();
    assert_eq!(rows.len(), 3, "{out}");
    let mut args = vec!["eval", "--path", walk, "--sim", "rapier", "--episodes", "1", "--course"];
    args.extend(course);
    let e = gait(&args);
    assert!(e.status.success(), "{}", stderr(&e));
    let eval_out = stdout(&e);
    let legs: Vec<&str> = eval_out.lines().filter(|l| l.starts_with("  leg ")).collect();
    assert_eq!(legs.len(), 3, "{eval_out}");
    for (k, (row, leg)) in rows.iter().zip(&legs).enumerate() {
        let w: Vec<&str> = row.split_whitespace().collect();
        assert_eq!((w[1], w[2]), (k.to_string().as_str(), course[k].split(':').nth(1).unwrap()));
        let mean: f64 = w[5].parse().unwrap();
        let settled = leg.split(": ").last().unwrap();
        let eval_mean = episode_metric(&format!(" {settled}"), "yaw_rate");
        let yaw: f64 = w[9].parse().unwrap();
        assert!((yaw - eval_mean).abs() < 0.0011, "{row} vs {leg}");
        let forward = episode_metric(&format!(" {settled}"), "forward_speed");
        assert!((mean - forward).abs() < 0.0011, "{row} vs {leg}");
    }
    let within = rows.iter().filter(|r| r.ends_with(" yes")).count();
    assert!(
        out.ends_with(&format!("within: {within} of 3 cells; falls: 0 of 1 episodes\n")),
        "{out}"
    );
}

/// The older spellings, `scripts/check_omni.sh` and `scripts/check_course.sh` with their
/// environment variables, print what `gait check` prints for the same settings.
#[test]
fn the_check_scripts_are_gait_check() {
    let walk = common::pretrained_walk();
    let walk = walk.to_str().unwrap();
    let script = |name: &str, vars: &[(&str, &str)]| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/");
        let o = std::process::Command::new("bash")
            .arg(format!("{path}{name}"))
            .args([walk, "--latest"])
            .envs(vars.iter().copied())
            .output()
            .expect("run the script");
        assert!(matches!(o.status.code(), Some(0 | 3)), "{name}: {}", stderr(&o));
        stdout(&o)
    };
    let omni = script(
        "check_omni.sh",
        &[
            ("GAIT_CHECK_EPISODES", "1"),
            ("GAIT_CHECK_STEPS", "20"),
            ("GAIT_CHECK_SIMS", "rapier"),
            ("GAIT_CHECK_COMMANDS", "1,0,0 -0.3,0,0"),
        ],
    );
    let o = gait(&[
        "check",
        "--path",
        walk,
        "--latest",
        "--episodes",
        "1",
        "--traj-len",
        "20",
        "--sims",
        "rapier",
        "--command",
        "1,0,0",
        "--command",
        "-0.3,0,0",
    ]);
    assert_eq!(omni, stdout(&o));
    assert!(omni.contains("\nrapier  -0.3,0,0 "), "{omni}");
    let course = script(
        "check_course.sh",
        &[
            ("GAIT_CHECK_EPISODES", "1"),
            ("GAIT_CHECK_SIMS", "rapier"),
            ("GAIT_COURSE", "1:0.5,0,0 1:0,0,0"),
        ],
    );
    let o = gait(&[
        "check",
        "--path",
        walk,
        "--latest",
        "--episodes",
        "1",
        "--sims",
        "rapier",
        "--course",
        "1:0.5,0,0",
        "1:0,0,0",
    ]);
    assert_eq!(course, stdout(&o));
    assert!(course.contains("a course of 2 legs"), "{course}");
}

/// `gait check --terrains`: one row per ground, command and model, in the task's order, each
/// judged by its ground's rule: 1.2 s cannot cross a flight of stairs, so those cells miss and
/// the check exits 3; the task does not mix with held commands.
#[test]
fn the_terrain_task_has_a_cell_per_ground_and_command() {
    let walk = common::pretrained_walk();
    let walk = walk.to_str().unwrap();
    let args = ["--episodes", "1", "--traj-len", "60", "--sims", "rapier", "--workers", "2"];
    let o = gait(&[&["check", "--path", walk, "--terrains"], &args[..]].concat());
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(3), "{out}{}", stderr(&o));
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("rapier")).collect();
    let grounds: Vec<&str> = rows.iter().map(|r| r.split_whitespace().nth(3).unwrap()).collect();
    let mut want = vec!["upstairs:0.667", "downstairs:0.667", "flights:1"];
    want.extend(["rough:0.667"; 10]);
    want.push("slope:0.5");
    assert_eq!(grounds, want, "{out}");
    for row in &rows[..2] {
        let fields: Vec<&str> = row.split_whitespace().collect();
        assert_eq!((fields[4], *fields.last().unwrap()), ("0/1", "no"), "{row}");
    }
    assert!(out.contains("stairs up and down (15 cm risers, 30 cm treads, flights of 8)"), "{out}");
    let o = gait(&["check", "--path", walk, "--terrains", "--command", "1,0,0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
