//! The binary end to end: a short training run prints per-iteration lines; bad input gets one
//! clear message, the right exit code, and creates nothing.

use std::path::Path;
use std::process::{Command, Output};

fn gait(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gait")).args(args).output().expect("run gait")
}

/// `gait train ppo --env cassie EXTRA --print-config`: the effective settings of a Cassie run.
fn cassie_print_config(extra: &[&str]) -> Output {
    let mut args = vec!["train", "ppo", "--env", "cassie", "--print-config"];
    args.extend(extra);
    gait(&args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tree(dir: &Path) -> Vec<String> {
    fn walk(p: &Path, out: &mut Vec<String>) {
        if let Ok(entries) = std::fs::read_dir(p) {
            for e in entries.flatten() {
                out.push(e.path().display().to_string());
                walk(&e.path(), out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

#[test]
fn train_prints_iterations_and_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let logdir = dir.path().to_str().unwrap();
    let o = gait(&["train", "ppo", "--env", "cartpole", "--timesteps", "8000", "--logdir", logdir]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}{}", out, stderr(&o));
    assert!(out.contains("env 'cartpole' preset:"), "{out}");
    assert!(out.contains("iter    0 |") && out.contains("iter    1 |"), "{out}");
    assert!(out.contains("done: 2 iterations"), "{out}");
    for line in out.lines().filter(|l| l.starts_with("iter ")) {
        assert!(line.chars().count() <= 100, "over 100 columns: {line}");
    }
}

#[test]
fn bad_input_is_one_clear_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let logdir = dir.path().join("logs");
    let l = logdir.to_str().unwrap();
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["--env", "walker"],
            2,
            "unknown env 'walker'; available: cassie, cartpole, pendulum, mountaincar",
        ),
        (&["--kl", "0"], 2, "'0' is not a positive number"),
        (&["--a-lr", "-0.1"], 2, "invalid value '-0.1' for '--a-lr <A_LR>'"),
        (&["--c-lr", "0"], 2, "invalid value '0' for '--c-lr <C_LR>'"),
        (&["--batch-size", "0"], 2, "--batch-size"),
        (&["--epochs", "0"], 2, "--epochs"),
        (&["--workers", "0"], 2, "--workers"),
        (&["--batch-size", "5000", "--num-steps", "100"], 2, "larger than --num-steps"),
        (&["--std-array", "0.1,0.2"], 2, "--std-array has 2 values but env 'cartpole' has 1"),
        (&["--device", "cuda"], 2, "--device cuda: no CUDA GPU"),
        (&["--bogus-flag"], 2, "unexpected argument '--bogus-flag'"),
        (&["--policy-rate", "40"], 2, "--policy-rate only applies to --env cassie, not 'cartpole'"),
        (&["--env", "cassie", "--policy-rate", "0"], 2, "'0' is not a policy rate in [1, 2000] Hz"),
        (&["--env", "cassie", "--sim-dt", "1"], 2, "'1' is not a timestep"),
        (&["--env", "cassie", "--reward", "fast"], 2, "invalid value 'fast' for '--reward"),
        (
            &["--env", "cassie", "--foot-placement", "0.3", "--obs", "reference"],
            2,
            "--foot-placement reads the observed pelvis velocity: it needs --obs velocity",
        ),
        (
            &[
                "--env",
                "cassie",
                "--commands",
                "omni-walk",
                "--omni-start-speed",
                "0.4",
                "--robust-start-speed",
                "0",
                "--num-eval-eps",
                "0",
            ],
            2,
            "--omni-start-speed waits for an evaluation, and --num-eval-eps 0 runs none",
        ),
        (
            &["--env", "cassie", "--robust-start-speed", "0.3", "--num-eval-eps", "0"],
            2,
            "--robust-start-speed waits for an evaluation, and --num-eval-eps 0 runs none",
        ),
        (
            &[
                "--env",
                "cassie",
                "--commands",
                "omni-walk",
                "--omni-start-speed",
                "0.4",
                "--robust-start-speed",
                "0.3",
            ],
            2,
            "--omni-start-speed 0.4 and --robust-start-speed 0.3 share one evaluation gate: set \
             them equal, or set one of them",
        ),
        (
            &["--env", "cassie", "--terrain-levels"],
            2,
            "--terrain-levels moves the levels of the training ground's kinds: it needs \
             --terrain rough, slope, stairs, flights or mix, not flat",
        ),
        (
            &["--env", "cassie", "--foot-placement", "0.3", "--reference", "none"],
            2,
            "--foot-placement shapes the reference gait: it needs --reference clock or omni",
        ),
        (
            &["--arch", "lstm", "--recompute-advantages"],
            2,
            "--recompute-advantages works with feed-forward nets without --mirror-augment \
             (this run has a recurrent net (--arch lstm))",
        ),
        (&["--run-name", ".."], 2, "--run-name '..' must be a plain folder name"),
        (&["--run-name", "."], 2, "--run-name '.' must be a plain folder name"),
        (&["--run-name", "a/b"], 2, "--run-name 'a/b' must be a plain folder name"),
        (&["--workers", "1000000"], 2, "--workers 1000000 is more than 16 per core"),
        (&["--layers", "100000,100000"], 2, "of memory available"),
        (&["--num-steps", "1.5"], 2, "'1.5' is not a positive whole number"),
        (&["--timesteps", "nan"], 2, "'nan' is not a positive whole number"),
        (&["--kl", "inf"], 2, "'inf' is not a positive number"),
    ];
    for (flags, code, message) in cases {
        let mut argv = vec!["train", "ppo", "--logdir", l];
        if !flags.contains(&"--env") {
            argv.extend(["--env", "cartpole"]);
        }
        argv.extend_from_slice(flags);
        let o = gait(&argv);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(*code), "{flags:?}: {err}");
        assert!(err.contains(message), "{flags:?}: {err}");
        assert!(!logdir.exists(), "{flags:?} created {}", logdir.display());
    }
}

#[test]
fn unknown_algo_is_a_usage_error() {
    let o = gait(&["train", "sac", "--env", "cartpole"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unrecognized subcommand 'sac'"), "{}", stderr(&o));
}

#[cfg(unix)]
#[test]
fn unwritable_logdir_is_a_runtime_error_that_changes_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::write(locked.join("keep.txt"), "earlier run").unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    // root ignores permissions; only assert where the directory really is read-only.
    if std::fs::write(locked.join("probe"), "x").is_ok() {
        std::fs::remove_file(locked.join("probe")).unwrap();
        eprintln!("running as root: checking a logdir below a regular file instead");
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let o = gait(&["train", "ppo", "--logdir", file.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("cannot create the run directory under --logdir"),
            "{}",
            stderr(&o)
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
        return;
    }
    let before = tree(&locked);
    let o = gait(&["train", "ppo", "--logdir", locked.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot create the run directory under --logdir"),
        "{}",
        stderr(&o)
    );
    assert_eq!(tree(&locked), before);
}

#[test]
fn bench_commands_print_their_keys() {
    let o = gait(&["bench", "env", "--env", "cartpole", "--seconds", "0.2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let rate: f64 = out
        .lines()
        .find_map(|l| l.strip_prefix("policy_steps_per_s="))
        .expect("policy_steps_per_s key")
        .parse()
        .unwrap();
    assert!(rate > 0.0);
    let o = gait(&["bench", "env", "--env", "cartpole", "--steps", "1000"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("steps=1000 "), "a fixed workload");
    // An unknown env is a usage error, as in `gait train` (audit F6).
    let o = gait(&["bench", "env", "--env", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown env 'nope'"));
}

#[test]
fn eval_and_plot_refuse_bad_values_with_usage_errors() {
    let walk = concat!(env!("CARGO_MANIFEST_DIR"), "/pretrained/cassie-walk");
    let before = common_snapshot(Path::new(walk));
    let cases: &[(&[&str], &str)] = &[
        (&["--command", "nan,0,0"], "--command: command x = NaN is outside [-4, 4] m/s"),
        (&["--command", "inf,0,0"], "--command: command x = inf is outside [-4, 4] m/s"),
        (&["--command", "100,0,0"], "--command: command x = 100 is outside [-4, 4] m/s"),
        (&["--command", "0,0,-9"], "command turn = -9 is outside"),
        (&["--command", "1,0"], "--command takes 3 values x,y,turn, got 2"),
        (&["--command", "1,x,0"], "'1,x,0': numbers x,y,turn"),
        (&["--command", "-0.3,0"], "--command takes 3 values x,y,turn, got 2"),
        (&["--traj-len", "0"], "invalid value '0' for '--traj-len"),
        (&["--episodes", "0"], "invalid value '0' for '--episodes"),
        (
            &["--terrain", "mud"],
            "'mud': a terrain is flat, rough, slope, stairs, flights, upstairs, downstairs or mix",
        ),
        (&["--terrain", "stairs:2"], "'stairs:2': the difficulty after ':' is a number in [0, 1]"),
        (&["--terrain", "stairs:nan"], "the difficulty after ':' is a number in [0, 1]"),
    ];
    for (flags, message) in cases {
        let mut argv = vec!["eval", "--path", walk];
        argv.extend_from_slice(flags);
        let o = gait(&argv);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(message), "{flags:?}: {err}");
        assert!(o.stdout.is_empty(), "{flags:?} ran: {}", String::from_utf8_lossy(&o.stdout));
    }
    // `plot --out` naming a directory: refused, nothing left behind.
    let dir = tempfile::tempdir().unwrap();
    let o = gait(&["plot", walk, "--out", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("give a file name ending in .png"), "{}", stderr(&o));
    assert_eq!(tree(dir.path()), Vec::<String>::new());
    assert!(!dir.path().with_extension("tmp.png").exists(), "a temp file beside --out");
    assert!(common_snapshot(Path::new(walk)) == before, "eval or plot changed the run dir");
}

fn common_snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    tree(dir)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_default();
            (p, bytes)
        })
        .collect()
}

/// `configs/cassie-forward.toml` (`make train-forward`) is exactly the walking preset as it
/// was before it walked in every direction: forward commands and the clock reference, the
/// perturbations (pushes of up to 0.45 m/s) from 2M steps over 1.5M, 6.5M steps, MuJoCo at
/// rapier's 2 ms, the orientation's observation noise at the reference's 0.05 rad (the preset
/// has none since stop 76), training pushes every 2-5 s and an unpushed selection (the preset
/// pushes every 1-2.5 s and scores the pick under pushes since stop 79).
#[test]
fn the_forward_config_is_the_earlier_walking_preset() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/cassie-forward.toml");
    let from_file = gait(&["train", "ppo", "--config", file, "--print-config"]);
    assert!(from_file.status.success(), "{}", stderr(&from_file));
    let flags = [
        "--commands",
        "forward",
        "--reference",
        "clock",
        "--progress",
        "clip",
        "--omni-start",
        "0",
        "--omni-start-speed",
        "0",
        "--omni-axes",
        "0",
        "--push",
        "0.45",
        "--robust-start",
        "2e6",
        "--robust-ramp",
        "1.5e6",
        "--timesteps",
        "6.5e6",
        "--sim",
        "rapier+mujoco@0.002",
        "--forward-reach",
        "0.4",
        "--best-after-settled",
        "0",
        "--orientation-noise",
        "0.05",
        "--push-every",
        "2",
        "--selection-push",
        "0",
    ];
    let from_flags = cassie_print_config(&flags);
    assert!(from_flags.status.success(), "{}", stderr(&from_flags));
    let printed = String::from_utf8_lossy(&from_file.stdout);
    assert_eq!(printed, String::from_utf8_lossy(&from_flags.stdout));
    assert!(
        printed.contains("commands = \"forward\"") && printed.contains("robust_start = 2000000")
    );
    assert!(printed.contains("robust_start_speed = 0.4"), "the preset's gate stays: {printed}");
    assert!(printed.contains("orientation_noise = 0.05"), "as it trained: {printed}");
    assert!(printed.contains("push_every = 2.0\n"), "as it trained: {printed}");
    assert!(printed.contains("selection_push = 0.0\n"), "as it picked: {printed}");
    let preset = cassie_print_config(&[]);
    assert!(preset.status.success(), "{}", stderr(&preset));
    let preset = String::from_utf8_lossy(&preset.stdout);
    assert!(preset.contains("orientation_noise = 0.0\n"), "the preset has none: {preset}");
    assert!(preset.contains("push_every = 1.0\n") && preset.contains("selection_push = 0.45\n"));
}

/// The walking preset's two stage gates (every direction, perturbations) wait for an
/// evaluation, so they give way (with a note) to `--num-eval-eps 0`, and each to the user's
/// own speed for the other; at their own speed the two stages share the gate; typed, a gate
/// is kept and a conflict refused (the cases of `bad_input_is_one_clear_error`).
#[test]
fn the_presets_gate_gives_way_to_the_users_own_settings() {
    let off = |what: &str| format!("note: the preset's --{what}-start-speed 0.4 is off");
    for (extra, robust, omni) in [
        (&["--num-eval-eps", "0"][..], "0.0", "0.0"),
        (&["--omni-start-speed", "0.3"][..], "0.0", "0.3"),
        (&["--robust-start-speed", "0.6"][..], "0.6", "0.0"),
    ] {
        let o = cassie_print_config(extra);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        let printed = String::from_utf8_lossy(&o.stdout);
        assert!(
            printed.contains(&format!("robust_start_speed = {robust}")),
            "{extra:?}: {printed}"
        );
        assert!(printed.contains(&format!("omni_start_speed = {omni}")), "{extra:?}: {printed}");
        for (what, speed) in [("robust", robust), ("omni", omni)] {
            let noted = stderr(&o).contains(&off(what));
            assert_eq!(noted, speed == "0.0", "{extra:?} {what}: {}", stderr(&o));
        }
    }
    for extra in [&[][..], &["--omni-start-speed", "0.4"]] {
        let o = cassie_print_config(extra);
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        let printed = String::from_utf8_lossy(&o.stdout);
        assert!(printed.contains("robust_start_speed = 0.4"), "{printed}");
        assert!(printed.contains("omni_start_speed = 0.4"), "{printed}");
        assert!(!stderr(&o).contains("is off"), "{extra:?}: {}", stderr(&o));
    }
}

/// A mixed run (the preset's, MuJoCo at 4 ms) continued on one model: `--sim` replaces the
/// mix whole, its MuJoCo timestep with it; an older run file's `mujoco_dt` reads as today's
/// `@DT`, and an older config file that sets it without a mix to change is refused by name.
#[test]
fn a_mixed_run_continues_on_one_model() {
    let walk = concat!(env!("CARGO_MANIFEST_DIR"), "/pretrained/cassie-walk");
    let o = gait(&["train", "ppo", "--previous", walk, "--print-config"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let printed = String::from_utf8_lossy(&o.stdout);
    assert!(printed.contains("sim = \"rapier+mujoco@0.004\""), "{printed}");
    let o = gait(&["train", "ppo", "--previous", walk, "--sim", "mujoco", "--print-config"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let printed = String::from_utf8_lossy(&o.stdout);
    assert!(printed.contains("sim = \"mujoco\"") && !printed.contains("0.004"), "{printed}");
    assert!(stderr(&o).contains("sim: rapier+mujoco@0.004 -> mujoco"), "{}", stderr(&o));
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.toml");
    std::fs::write(&old, "[env.cassie]\nmujoco_dt = 0.002\n").unwrap();
    let o = gait(&["train", "ppo", "--env", "cassie", "--config", old.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("env.cassie.mujoco_dt"), "{}", stderr(&o));
}

/// `--print-config` prints the effective settings as TOML and trains nothing; that TOML given
/// back with `--config` reproduces them, typed flags override the file, a run dir stores its
/// `config.toml`, and a bad file is one usage error naming the key.
#[test]
fn config_files_round_trip_and_flags_override_them() {
    let dir = tempfile::tempdir().unwrap();
    let logdir = dir.path().join("logs");
    let l = logdir.to_str().unwrap();
    let o = gait(&["train", "ppo", "--env", "cartpole", "--kl", "0.03", "--print-config"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let printed = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(printed.contains("kl = 0.03") && printed.contains("traj_len = 400"), "{printed}");
    assert!(!logdir.exists());
    let file = dir.path().join("c.toml");
    assert!(stderr(&o).contains("env 'cartpole' preset:"), "notes go to stderr");
    std::fs::write(&file, &printed).unwrap();
    let f = file.to_str().unwrap();
    let o = gait(&["train", "ppo", "--config", f, "--print-config"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), printed, "the printed config reproduces");
    let o = gait(&[
        "train",
        "ppo",
        "--config",
        f,
        "--epochs",
        "2",
        "--timesteps",
        "4000",
        "--logdir",
        l,
        "--run-name",
        "r",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = std::fs::read_dir(logdir.join("cartpole").join("r"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let stored = std::fs::read_to_string(run.join("config.toml")).unwrap();
    assert!(stored.contains("kl = 0.03") && stored.contains("epochs = 2"), "{stored}");
    let info = std::fs::read_to_string(run.join("experiment.info")).unwrap();
    assert!(info.contains("epochs: 2\n") && info.contains("kl: 0.03\n"), "{info}");

    std::fs::write(&file, "[ppo]\nkll = 0.01\n").unwrap();
    let before = tree(dir.path());
    let o = gait(&["train", "ppo", "--config", f, "--logdir", l]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("unknown setting 'ppo.kll'"), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert_eq!(tree(dir.path()), before, "a refused config created files");
    let o = gait(&["train", "ppo", "--config", "/nonexistent/c.toml"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--config /nonexistent/c.toml: cannot read it"), "{}", stderr(&o));
}
