//! Per-env training presets: typed functions that replace the global defaults with values
//! that suit one env. `gait train` applies them under a config file and typed flags (which
//! always win), prints what they set, and `train ppo --help` lists them.

use super::{BestBy, TrainConfig};
use crate::envs::cassie::config::EVEN_MUJOCO_SHARE;
use crate::envs::cassie::{CommandKind, ProgressKind, ReferenceKind, SimKind};
use crate::policies::Nonlinearity;

/// Applies the preset of `config.run.env` (none for an env without one).
pub fn apply(config: &mut TrainConfig) {
    match config.run.env.as_str() {
        "cassie" => cassie(config),
        "cartpole" => cartpole(config),
        "pendulum" => pendulum(config),
        "mountaincar" => mountaincar(config),
        _ => {}
    }
}

/// What `env`'s preset changes, as `(leaf, value)` pairs in declaration order.
pub fn changes(env: &str) -> Vec<(String, serde_json::Value)> {
    let mut base = TrainConfig::default();
    base.run.env = env.to_string();
    let preset = TrainConfig::for_env(env).leaves();
    base.leaves().into_iter().zip(preset).filter(|(a, b)| a != b).map(|(_, b)| b).collect()
}

/// The leaf of the walking preset's perturbation gate (`--robust-start-speed`).
const PERTURBATION_GATE: &str = "env.cassie.robust_start_speed";

/// The leaf of the walking preset's omnidirectional gate (`--omni-start-speed`).
const OMNI_GATE: &str = "env.cassie.omni_start_speed";

/// The leaf of the walking preset's MuJoCo timestep when mixing (`--mujoco-dt`).
const MUJOCO_DT: &str = "env.cassie.mujoco_dt";

/// The leaf of the walking preset's share of MuJoCo episodes when mixing (`--mujoco-share`).
const MUJOCO_SHARE: &str = "env.cassie.mujoco_share";

/// The leaf of the share of MuJoCo episodes once the perturbations begin
/// (`--robust-mujoco-share`).
const ROBUST_MUJOCO_SHARE: &str = "env.cassie.robust_mujoco_share";

/// The leaf of the walking preset's speed-dependent cycle (`--cadence`).
const CADENCE: &str = "env.cassie.cadence";

/// Turns off preset settings that the user's own settings cannot run with, and says so; a
/// setting the user typed (or named in `--config`) is never touched, so typed together the
/// two are still refused by validation.
/// * The two stage gates (perturbations, every direction) wait for an evaluation, and a run
///   has one gate, so with `--num-eval-eps 0` both give way, and with the user's own speed for
///   one of them the other does (each stage then begins at its own start, as before the
///   gates) instead of refusing a run the user asked for plainly; at the same speed the two
///   stages share it.
/// * `--mujoco-dt`, `--mujoco-share` and `--robust-mujoco-share` set MuJoCo's timestep and
///   share of the episodes when mixing models, so with `--sim rapier` or `--sim mujoco` the
///   preset's give way (that model runs at `--sim-dt`).
/// * The cadence sets the cycle from the command and `--full-gait` draws it at random, so
///   with `--full-gait` the preset's cadence gives way (a fixed cycle, as before it).
pub fn give_way(config: &mut TrainConfig, set_by_user: impl Fn(&str) -> bool) -> Vec<String> {
    if config.run.env != "cassie" {
        return Vec::new();
    }
    let mut notes = gate_gives_way(config, &set_by_user);
    notes.extend(cadence_gives_way(config, &set_by_user));
    notes.extend(mixing_gives_way(config, &set_by_user));
    notes
}

/// The stage gates' part of [`give_way`]: a note for each preset gate it turned off. The
/// perturbations' gate gives way first (as it did before the preset had an omnidirectional
/// gate); the omnidirectional one then gives way only to no evaluations or to the user's own
/// perturbation gate at another speed.
fn gate_gives_way(config: &mut TrainConfig, set_by_user: impl Fn(&str) -> bool) -> Vec<String> {
    let no_evals = config.eval.num_eval_eps == 0;
    let cassie = &mut config.env.cassie;
    let mut notes = Vec::new();
    let conflict = cassie.gate_conflict().is_some();
    if cassie.robust_start_speed > 0.0 && !set_by_user(PERTURBATION_GATE) && (no_evals || conflict)
    {
        let speed = std::mem::take(&mut cassie.robust_start_speed);
        let begins = format!("the perturbations begin at --robust-start {}", cassie.robust_start);
        notes.push(gate_off_note("robust", speed, "omni", no_evals, &begins));
    }
    let conflict = cassie.gate_conflict().is_some();
    if cassie.omni_gate().is_some() && !set_by_user(OMNI_GATE) && (no_evals || conflict) {
        let speed = std::mem::take(&mut cassie.omni_start_speed);
        let begins = format!("every direction begins at --omni-start {}", cassie.omni_start);
        notes.push(gate_off_note("omni", speed, "robust", no_evals, &begins));
    }
    notes
}

/// The note of a preset gate (`--{stage}-start-speed`) turned off: for want of evaluations, or
/// for the user's own gate (`--{other}-start-speed`) at another speed; `begins` says when its
/// stage starts instead.
fn gate_off_note(stage: &str, speed: f64, other: &str, no_evals: bool, begins: &str) -> String {
    let reason = if no_evals {
        "--num-eval-eps 0 runs no evaluation to wait for".to_string()
    } else {
        format!("--{other}-start-speed sets this run's one gate at another speed")
    };
    format!("note: the preset's --{stage}-start-speed {speed} is off ({reason}); {begins}")
}

/// The mixing settings' part of [`give_way`], also applied to a `--previous` mixed run
/// continued on one model: on one model (`--sim rapier` or `--sim mujoco`) a `--mujoco-dt`,
/// `--mujoco-share` or `--robust-mujoco-share` the user did not type has nothing to set, so
/// the timestep goes (that model runs at `--sim-dt` or its default) and the shares return to
/// their defaults; a note for each it turned off.
pub fn mixing_gives_way(
    config: &mut TrainConfig,
    set_by_user: impl Fn(&str) -> bool,
) -> Vec<String> {
    let cassie = &mut config.env.cassie;
    let mut notes = Vec::new();
    if cassie.sim == SimKind::Mixed {
        return notes;
    }
    let one = format!("--sim {} trains one model", cassie.sim.name());
    if !set_by_user(MUJOCO_DT) {
        if let Some(dt) = cassie.mujoco_dt.take() {
            notes.push(format!(
                "note: --mujoco-dt {dt} is off ({one}, at --sim-dt {})",
                cassie.sim_dt()
            ));
        }
    }
    if !set_by_user(MUJOCO_SHARE) && cassie.mujoco_share != EVEN_MUJOCO_SHARE {
        let share = std::mem::replace(&mut cassie.mujoco_share, EVEN_MUJOCO_SHARE);
        notes.push(format!("note: --mujoco-share {share} is off ({one})"));
    }
    if !set_by_user(ROBUST_MUJOCO_SHARE) {
        if let Some(share) = cassie.robust_mujoco_share.take() {
            notes.push(format!("note: --robust-mujoco-share {share} is off ({one})"));
        }
    }
    notes
}

/// The cadence's part of [`give_way`]: its note, if it turned the cadence off.
fn cadence_gives_way(
    config: &mut TrainConfig,
    set_by_user: impl Fn(&str) -> bool,
) -> Option<String> {
    let cassie = &mut config.env.cassie;
    if cassie.cadence == 0.0 || !cassie.full_gait || set_by_user(CADENCE) {
        return None;
    }
    let cadence = std::mem::take(&mut cassie.cadence);
    Some(format!(
        "note: the preset's --cadence {cadence} is off (--full-gait draws the gait cycle); the \
         cycle is drawn with every command"
    ))
}

/// Cassie's walking preset, chosen for a 2-core machine: the reference nets and PPO constants
/// with 10k-step iterations, 8 s trajectories, std 0.2, grad clip 0.5 and γ = 0.99 (D-023).
fn cassie(c: &mut TrainConfig) {
    c.sampler.traj_len = 400;
    c.sampler.num_steps = 10_000;
    c.net.layers = vec![256, 256];
    c.net.std = 0.2;
    c.ppo.a_lr = 3e-4;
    c.ppo.c_lr = 3e-4;
    c.ppo.grad_clip = 0.5;
    c.sampler.discount = 0.99;
    c.sampler.gae_lambda = 0.95;
    c.ppo.batch_size = 128;
    c.ppo.epochs = 3;
    c.eval.eval_freq = 10;
    c.eval.num_eval_eps = 8;
    c.net.prenorm = true;
    c.net.prenormalize_steps = 2000;
    c.ppo.mirror = 1.0;
    // Learning rates decayed to a tenth, so the last weights keep what was learned (D-018).
    c.ppo.lr_decay = 0.9;
    // Robustness: both models, randomized dynamics, observation noise and pushes once walking
    // has been learned, a level pelvis to spend the tilt budget on pushes (D-024).
    let cassie = &mut c.env.cassie;
    cassie.sim = SimKind::Mixed;
    cassie.dynamics_randomization = true;
    cassie.obs_noise = 1.0;
    // The orientation's noise off: it wore rapier's sidesteps down (D-006).
    cassie.orientation_noise = 0.0;
    cassie.push = 0.6;
    // Training pushes every U(1, 2.5) s, twice as often as checks push (D-025).
    cassie.push_every = 1.0;
    // The perturbations wait for an evaluation that walks at 0.4 m/s (D-005).
    cassie.robust_start_speed = 0.4;
    cassie.upright = 0.10;
    // A pelvis-height term with its target below a walking seed's height (D-009).
    cassie.height_target = 0.76;
    // A cycle that quickens past 0.5 m/s, so faster commands step more often (D-026).
    cassie.cadence = 0.2;
    omnidirectional(c);
}

/// Walking in every direction: the lab's five command modes over x −0.5..1.5 m/s, y ±0.3 m/s,
/// turn ±0.5 rad/s with the reference gait's hip roll and yaw, in three stages of one run —
/// forward commands until an evaluation walks at 0.4 m/s (D-012, D-013), then every direction
/// with half the commands along one signed axis (D-027), then the perturbations from 7M steps
/// over 1M (D-004); MuJoCo at 4 ms when mixing, rapier at its 2 ms (D-001).
fn omnidirectional(c: &mut TrainConfig) {
    c.run.timesteps = 13_000_000;
    let cassie = &mut c.env.cassie;
    cassie.commands = CommandKind::OmniWalk;
    cassie.reference = ReferenceKind::Omni;
    cassie.progress = ProgressKind::Peak;
    cassie.omni_start = 2_000_000;
    cassie.omni_start_speed = 0.4;
    cassie.omni_axes = 0.5;
    cassie.robust_start = 7_000_000;
    cassie.robust_ramp = 1_000_000;
    cassie.mujoco_dt = Some(0.004);
    // The swing hip pitch 0.6 rad per m/s of forward command, both ways (D-028).
    cassie.forward_reach = 0.6;
    // The pick from 3M steps at full perturbation strength on (D-019).
    c.eval.best_after_settled = 3_000_000;
    // The pick: most cells within on both models, then the tracking score (D-029).
    c.eval.best_by = BestBy::Cells;
    // Three episodes a cell, each scored by its worst, on MuJoCo at the lab's 0.5 ms (D-021).
    c.eval.selection_episodes = 3;
    // The pick's episodes pushed as `gait check --push 0.45` pushes (D-030).
    c.eval.selection_push = 0.45;
}

/// Small nets and short runs for the classic-control test envs.
fn classic(c: &mut TrainConfig, traj_len: usize, timesteps: u64, std: f64, lrs: (f64, f64)) {
    c.sampler.traj_len = traj_len;
    c.sampler.num_steps = 4000;
    c.run.timesteps = timesteps;
    c.net.layers = vec![64, 64];
    c.net.nonlinearity = Nonlinearity::Tanh;
    c.net.std = std;
    (c.ppo.a_lr, c.ppo.c_lr) = lrs;
    c.ppo.grad_clip = 0.5;
    c.sampler.gae_lambda = 0.95;
    c.eval.eval_freq = 10;
    c.eval.num_eval_eps = 8;
}

fn cartpole(c: &mut TrainConfig) {
    classic(c, 400, 100_000, 0.5, (3e-4, 1e-3));
    c.ppo.epochs = 5;
    c.eval.eval_freq = 5;
}

fn pendulum(c: &mut TrainConfig) {
    classic(c, 200, 300_000, 0.5, (1e-3, 1e-3));
    c.sampler.discount = 0.95;
    c.ppo.epochs = 10;
}

fn mountaincar(c: &mut TrainConfig) {
    classic(c, 999, 200_000, 0.8, (3e-4, 1e-3));
    c.eval.num_eval_eps = 4;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_env_has_a_preset_and_presets_are_valid() {
        for spec in crate::envs::ENVS {
            assert!(!changes(spec.name).is_empty(), "{} has no preset", spec.name);
            TrainConfig::for_env(spec.name).validate().unwrap();
        }
    }

    #[test]
    fn the_cassie_preset_sets_what_its_comment_says() {
        let c = TrainConfig::for_env("cassie");
        assert_eq!((c.sampler.traj_len, c.sampler.num_steps), (400, 10_000));
        assert_eq!((c.ppo.mirror, c.net.prenorm, c.net.std), (1.0, true, 0.2));
        assert_eq!((c.ppo.lr_decay, c.env.cassie.robust_start_speed), (0.9, 0.4));
        assert_eq!(c.env.cassie.height_target, 0.76);
        assert_eq!((c.env.cassie.forward_reach, c.env.cassie.cadence), (0.6, 0.2));
        assert_eq!(c.env.cassie.stage_gate().map(|g| g.not_before), Some(2_000_000));
        let cassie = &c.env.cassie;
        assert_eq!(
            (cassie.commands, cassie.reference),
            (CommandKind::OmniWalk, ReferenceKind::Omni)
        );
        assert_eq!(
            (cassie.omni_start, cassie.omni_start_speed, cassie.omni_axes),
            (2_000_000, 0.4, 0.5)
        );
        assert_eq!((cassie.robust_start, cassie.robust_ramp), (7_000_000, 1_000_000));
        assert_eq!((c.run.timesteps, cassie.mujoco_dt), (13_000_000, Some(0.004)));
        assert_eq!(c.eval.best_after_settled, 3_000_000);
        assert_eq!((c.eval.best_by, c.eval.selection_episodes), (BestBy::Cells, 3));
        assert_eq!((cassie.push, cassie.push_every, c.eval.selection_push), (0.6, 1.0, 0.45));
        assert!(cassie.gate_conflict().is_none(), "one gate for both stages");
    }

    #[test]
    fn the_mixing_settings_give_way_to_one_model_unless_typed() {
        let mut mujoco = TrainConfig::for_env("cassie");
        mujoco.env.cassie.sim = SimKind::Mujoco;
        assert!(mujoco.validate().is_err(), "the two together are refused");
        let notes = give_way(&mut mujoco, |k| k == "env.cassie.sim");
        assert!(notes.iter().any(|n| n.contains("--mujoco-dt 0.004 is off (--sim mujoco")));
        assert_eq!(mujoco.env.cassie.mujoco_dt, None);
        mujoco.validate().unwrap();

        let mut typed = TrainConfig::for_env("cassie");
        typed.env.cassie.sim = SimKind::Rapier;
        assert!(give_way(&mut typed, |k| k == MUJOCO_DT).is_empty());
        assert!(typed.validate().is_err(), "a typed --mujoco-dt on one model is refused");

        let mut mixed = TrainConfig::for_env("cassie");
        assert!(give_way(&mut mixed, |_| false).is_empty());
        assert_eq!(mixed.env.cassie.mujoco_dt, Some(0.004));

        // A share other than the default (the preset's, or a continued run's) goes the same way.
        let mut share = TrainConfig::for_env("cassie");
        (share.env.cassie.sim, share.env.cassie.mujoco_share) = (SimKind::Rapier, 0.3);
        let notes = give_way(&mut share, |k| k == "env.cassie.sim");
        assert!(notes
            .iter()
            .any(|n| n == "note: --mujoco-share 0.3 is off (--sim rapier trains one model)"));
        assert_eq!(share.env.cassie.mujoco_share, 0.5);
        share.validate().unwrap();
        let mut typed = TrainConfig::for_env("cassie");
        (typed.env.cassie.sim, typed.env.cassie.mujoco_share) = (SimKind::Rapier, 0.3);
        give_way(&mut typed, |k| k == MUJOCO_SHARE);
        assert!(typed.validate().is_err(), "a typed --mujoco-share on one model is refused");

        // So does the share once perturbed (a continued run's).
        let mut late = TrainConfig::for_env("cassie");
        (late.env.cassie.sim, late.env.cassie.robust_mujoco_share) = (SimKind::Mujoco, Some(0.4));
        let notes = give_way(&mut late, |k| k == "env.cassie.sim");
        let off = "note: --robust-mujoco-share 0.4 is off (--sim mujoco trains one model)";
        assert!(notes.iter().any(|n| n == off), "{notes:?}");
        assert_eq!(late.env.cassie.robust_mujoco_share, None);
        late.validate().unwrap();
        let mut typed = TrainConfig::for_env("cassie");
        (typed.env.cassie.sim, typed.env.cassie.robust_mujoco_share) = (SimKind::Mujoco, Some(0.4));
        give_way(&mut typed, |k| k == ROBUST_MUJOCO_SHARE);
        assert!(typed.validate().is_err(), "a typed --robust-mujoco-share on one model: refused");
    }

    #[test]
    fn the_cadence_gives_way_to_a_full_gait_unless_typed() {
        let mut full = TrainConfig::for_env("cassie");
        full.env.cassie.full_gait = true;
        assert!(full.validate().is_err(), "the two together are refused");
        let notes = give_way(&mut full, |k| k == "env.cassie.full_gait");
        assert!(notes.iter().any(|n| n.contains("--cadence 0.2 is off")), "{notes:?}");
        assert_eq!(full.env.cassie.cadence, 0.0);
        full.validate().unwrap();

        let mut typed = TrainConfig::for_env("cassie");
        typed.env.cassie.full_gait = true;
        assert!(give_way(&mut typed, |k| k == CADENCE).is_empty());
        assert!(typed.validate().is_err(), "a typed cadence with --full-gait is refused");

        let mut plain = TrainConfig::for_env("cassie");
        assert!(give_way(&mut plain, |_| false).is_empty());
        assert_eq!(plain.env.cassie.cadence, 0.2);
    }

    #[test]
    fn the_perturbation_gate_gives_way_to_the_users_settings_only_when_it_must() {
        let typed_nothing = |_: &str| false;
        let mut plain = TrainConfig::for_env("cassie");
        assert!(give_way(&mut plain, typed_nothing).is_empty());
        assert_eq!(plain.env.cassie.robust_start_speed, 0.4);

        let mut no_evals = TrainConfig::for_env("cassie");
        no_evals.eval.num_eval_eps = 0;
        let notes = give_way(&mut no_evals, typed_nothing);
        assert!(
            notes[0].contains("--robust-start-speed 0.4 is off (--num-eval-eps 0"),
            "{notes:?}"
        );
        assert!(notes[1].contains("--omni-start-speed 0.4 is off (--num-eval-eps 0"), "{notes:?}");
        assert_eq!(no_evals.env.cassie.robust_start_speed, 0.0);
        assert_eq!(no_evals.env.cassie.omni_start_speed, 0.0);
        no_evals.validate().unwrap();

        // The user's perturbation gate at another speed: the preset's omnidirectional gate
        // gives way, the typed one stays.
        let mut robust = TrainConfig::for_env("cassie");
        robust.env.cassie.robust_start_speed = 0.6;
        let notes = give_way(&mut robust, |k| k == PERTURBATION_GATE);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("--omni-start-speed 0.4 is off (--robust-start-speed"),
            "{notes:?}"
        );
        assert_eq!(
            (robust.env.cassie.robust_start_speed, robust.env.cassie.omni_start_speed),
            (0.6, 0.0)
        );
        robust.validate().unwrap();

        // The user's omnidirectional gate at the preset's speed shares the one gate; at
        // another speed the preset's gives way.
        let mut shared = TrainConfig::for_env("cassie");
        shared.env.cassie.commands = crate::envs::cassie::CommandKind::OmniWalk;
        shared.env.cassie.omni_start_speed = 0.4;
        assert!(give_way(&mut shared, typed_nothing).is_empty());
        assert_eq!(shared.env.cassie.robust_start_speed, 0.4);
        shared.validate().unwrap();
        let mut omni = shared.clone();
        omni.env.cassie.omni_start_speed = 0.3;
        assert!(give_way(&mut omni, typed_nothing)[0].contains("--omni-start-speed"));
        assert_eq!(omni.env.cassie.robust_start_speed, 0.0);
        omni.validate().unwrap();

        let mut typed = TrainConfig::for_env("cassie");
        typed.eval.num_eval_eps = 0;
        let notes = give_way(&mut typed, |k| k == PERTURBATION_GATE);
        assert!(notes.len() == 1 && notes[0].contains("--omni-start-speed"), "{notes:?}");
        assert_eq!(typed.env.cassie.robust_start_speed, 0.4, "a typed gate is not touched");
        assert!(typed.validate().is_err(), "a typed gate without evaluations is refused");
    }
}
