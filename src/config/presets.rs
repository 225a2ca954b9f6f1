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

/// Chosen for a 2-core machine (docs/cassie.md "Cassie training"): the reference nets and PPO
/// constants, 10k-step iterations (about 3 s here at 500 Hz, not run_ppo's 50k at 80 workers),
/// traj_len 400 (8 s) and std 0.2 (the walking A/Bs of walking.md §4; std 0.13 explored too
/// little to leave the standing pose), grad_clip 0.5 (A/B over 10 iterations: episode length
/// 59.7 vs 56.8 with the reference's 0.05; a_lr 1e-3 was unstable), and train.py's γ = 0.99
/// with run_ppo's λ = 0.95: with run_ppo's γ = 0.95 the 0.4 s horizon cannot see a fall
/// coming, and the policy walked into falls (A/B: episode length 121 vs 95 at 0.5M steps from
/// scratch, 250 vs 135 continuing one run).
fn cassie(c: &mut TrainConfig) {
    c.sampler.traj_len = 400;
    c.sampler.num_steps = 10_000;
    c.net.layers = vec![256, 256];
    c.net.std = 0.2;
    c.ppo.a_lr = 3e-4;
    c.ppo.c_lr = 3e-4;
    c.ppo.grad_clip = 0.5;
    c.ppo.discount = 0.99;
    c.ppo.gae_lambda = 0.95;
    c.ppo.batch_size = 128;
    c.ppo.epochs = 3;
    c.eval.eval_freq = 10;
    c.eval.num_eval_eps = 8;
    c.ppo.prenorm = true;
    c.ppo.prenormalize_steps = 2000;
    c.ppo.mirror = 1.0;
    // Both learning rates fall linearly to a tenth at `timesteps`: at a constant rate the speed
    // at a command drifted by ±0.2 m/s between snapshots under the perturbations, so the last
    // weights were not the best (`push45-s0`: 1.0 → 0.81-0.83 m/s at the end); decayed, seed 0
    // met every bound at its end (`decay9-s0`, `dg-s0`).
    c.ppo.lr_decay = 0.9;
    // Robustness (docs/cassie.md "Sim-to-sim"): each episode on gait's rapier model or the lab's
    // MuJoCo model; randomized dynamics, observation noise and pushes of up to 0.6 m/s (an
    // impulse of up to 20 N·s on the 33.3 kg robot) once walking has been learned (their start
    // and ramp: [`omnidirectional`]); a posture term keeps the pelvis level, so a push has the
    // whole 20° tilt budget to spend. Pushes of up to 1 m/s (`robustF`, seeds 0-2) met the
    // tracking bounds on seed 0 only; of up to 0.45 m/s (`push45`), issue 23's, on seeds 0 and
    // 1. Walking in every direction, trained with pushes of up to 0.45, seeds 1 and 2 each fell
    // once in the 100 checked episodes pushed as hard (`trk`); trained with up to 0.6, no seed
    // fell in 1200 checked episodes with or without them, for as many tracking cells (`p6`:
    // 117 of 120 on the best-eval weights, as `trk`).
    // The perturbations wait for an evaluation at 0.4 m/s: a seed still marching in place when
    // they begin kept marching under them (`push45-s2`); gated, it walked (`push45G-s2`).
    let cassie = &mut c.env.cassie;
    cassie.sim = SimKind::Mixed;
    cassie.dynamics_randomization = true;
    cassie.obs_noise = 1.0;
    // The orientation's noise off, the rest kept: the reference's 0.05 rad per axis is larger
    // than the roll of a sidestep's weight shift, and under it rapier's sidesteps wore down to
    // ±0.05 m/s, at the edge of the bound (stop 75's `dg-*` arms). Without it, seeds 0-2 from
    // scratch sidestep ±0.08-0.17 m/s there (`on-s0`..`on-s2`, stop 76); without any noise
    // they lost pushed cells (`nn-s1`, `nn-s2`).
    cassie.orientation_noise = 0.0;
    cassie.push = 0.6;
    // Pushes every U(1, 2.5) s in training, twice as often as the default's U(2, 5) s (checks
    // and evaluations keep U(2, 5) s): with the default, seed 0's pick fell standing on rapier
    // under pushes, 4 in 50 episodes (`sp-s0`, the roll past 20°); twice as often it fell in
    // none, and seeds 0-2 met every cell, every pushed cell and the course (`pe1-s0`..`pe1-s2`;
    // seed 0 from scratch, cut by 45 minutes on a slower hour, picked an earlier row: 18 of 20
    // pushed cells, 3 falls in 200 pushed episodes standing and turning where `sp-s0` had 6;
    // with the pick scored from 11M, below, it reached `pe1-s0`'s pick in 44.6 min, `pre80-s0`).
    cassie.push_every = 1.0;
    cassie.robust_start_speed = 0.4;
    cassie.upright = 0.10;
    // A pelvis-height term with its target below seed 0's walking height (0.79 m): seed 1
    // crouched at 0.73-0.77 m without it and missed the bounds (`dg-s1`); with it, seed 1 met
    // them at 20-30 minutes and seed 0 at 30 (`h76-s1`, `h76-s0`). At 0.8 m seed 0 walked taller
    // still and overshot the command (`h80-s0`, `hp-s0`).
    cassie.height_target = 0.76;
    // A longer, quicker stride at speed: the reference's swing hip pitch 0.4 rad per m/s of
    // command (0.25 before) and a cycle that shortens past 0.5 m/s (0.6 s at 1 m/s). At the
    // fixed 0.7 s cycle the walkers had a slow gait that saturated near 0.7 m/s and a fast one
    // that overshot, and seed 2 marched in place to 2.84M steps and did not meet within 30
    // minutes (`h76-s2`); with both it walked by 2.04M and met at 3.0M steps, seed 1 at 3.75M
    // (`rc-s2`, `rc-s1`). Either alone left seed 2 short (`reach4-s2`, `cad2-s2`). That reach
    // is the forward walker's (`configs/cassie-forward.toml` sets it); walking in every
    // direction reaches 0.6 ([`omnidirectional`] sets it, once).
    cassie.cadence = 0.2;
    omnidirectional(c);
}

/// Walking in every direction (docs/cassie.md "Walking in every direction", issue 27): the
/// lab's five command modes over x −0.5..1.5 m/s, y ±0.3 m/s, turn ±0.5 rad/s, with the
/// reference gait's hip roll and yaw, in three stages of one run. Each answers a measured
/// failure (`docs/cassie-runs.md`, omnidirectional section):
/// * forward commands first, until an evaluation walks at 0.4 m/s from 2M steps on: every
///   direction from scratch marched in place to 4.9-7.4M steps (`omniE-s0`, `omniG-s0`);
/// * then every direction, half of those commands along one signed axis (pure backward and
///   sidestep commands are otherwise 2 % and 7 % of all, and were not learned, `omniE-s0`;
///   why not more: `omni_axes` below);
/// * the perturbations (pushes, randomized dynamics, noise) from 7M steps over 1M: during
///   the middle stage they held backward and sideways walking back (`omniQ-s0`, `omniX-s0`),
///   and half a million steps of them at the end were not enough for pushes (`omniU-s0`: 3 of
///   10 commands under pushes, `omniD4-s0` with 5M: 10 of 10 on MuJoCo);
/// * MuJoCo at 4 ms when mixing (`mujoco_dt`), rapier at its 2 ms: 13M steps fit the
///   45-minute budget on a 2-core machine, and the MuJoCo-trained half still walks on the
///   lab's 0.5 ms model.
fn omnidirectional(c: &mut TrainConfig) {
    c.run.timesteps = 13_000_000;
    let cassie = &mut c.env.cassie;
    cassie.commands = CommandKind::OmniWalk;
    cassie.reference = ReferenceKind::Omni;
    cassie.progress = ProgressKind::Peak;
    cassie.omni_start = 2_000_000;
    cassie.omni_start_speed = 0.4;
    // Half along one signed axis. At one in two some streams miss backward and sideways
    // walking in the middle stage (`m4-s1`, the Intel host's seeds 0 and 2); three in four
    // rescued `m4-s1`'s state at the gate (`ax75-s1`: 20 of 20, where a reroll found 2 of 8
    // diagnostic cells) and met 20 of 20 on seeds 0 and 1 from scratch, but seed 2 then
    // walked 0.82 m/s at the 1 m/s command (`ax75-s2`: 18 of 20), where the three seeds at
    // 0.5 met 20 of 20 each on the AMD hosts (`cells-s0`..`s2`; seed 0's stream reproduced bit
    // for bit on the slower one, `pre1-s0`): not the preset.
    cassie.omni_axes = 0.5;
    cassie.robust_start = 7_000_000;
    cassie.robust_ramp = 1_000_000;
    cassie.mujoco_dt = Some(0.004);
    // The swing hip pitch 0.6 rad per m/s of forward command (the forward walker's 0.4), both
    // ways: 0.18 rad at −0.3 m/s. At 0.4 seed 1 never walked backward, with 3M more steps
    // before the perturbations either (`walkG-s1`, `walkG-s1-r10`: −0.01 m/s at 7M, −0.05 at
    // 10M); at 0.6 it walked backward by 7M (−0.22) and met every command (`fr6-s1`).
    cassie.forward_reach = 0.6;
    // The best-eval checkpoint from 3M steps at full perturbation strength on (11M here, of
    // 13M): `fr6-s2`'s was the first evaluation at full strength (8.05M) and met 12 of 20 under
    // pushes, its last weights 19; `fr6-s0`'s and `fr6-s1`'s came from 12.84M and 11.21M.
    // 3M rather than 2M because each scored evaluation runs 42 selection episodes (about 14 s
    // on this host's 2 cores), and in the preset's three seeds none of the ten between 10M and
    // 11M was picked, while seed 0's fell under pushes at six of them (`pre79-s0`): skipping
    // them brings the 45-minute run about 140 s further (docs/cassie-runs.md, stop 80).
    c.eval.best_after_settled = 3_000_000;
    // Among those, the weights that track the eval commands best on both models: the highest
    // `Test/Return` was no better than any other late checkpoint at tracking (`fswk-s1`: 19 of
    // 20 cells, where 5 of its 29 checkpoints from 10M steps on met all 20), and the tracking
    // score put the checkpoints that met all 20 near the top (docs/cassie.md, "Choosing the
    // weights"). Ranked by the cells within first, the task's own criterion, then by that
    // score: on the preset's three seeds it keeps the same weights as the score alone (`cells`
    // runs, byte for byte); where they differed (`sds2`, two runs) the score alone kept a 13-of-14
    // evaluation beside 14-of-14 ones.
    c.eval.best_by = BestBy::Cells;
    // Three episodes of each cell, each cell scored by its worst, on MuJoCo at the lab's
    // 0.5 ms: one episode at training's 4 ms could not tell a checkpoint that met every
    // checked cell from one that missed a cell (docs/cassie.md, "Choosing the weights").
    c.eval.selection_episodes = 3;
    // Those episodes pushed as `gait check --push 0.45` pushes, so the pick is scored on what
    // the checks ask: `pe1-s0`'s pushed selection saw falls at 8 of its 29 settled evaluations
    // (rows 990-1060, 1140, 1260), and its pick (row 1230) met all 20 pushed cells.
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
    c.ppo.gae_lambda = 0.95;
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
    c.ppo.discount = 0.95;
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
        assert_eq!((c.ppo.mirror, c.ppo.prenorm, c.net.std), (1.0, true, 0.2));
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
