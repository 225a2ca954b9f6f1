#[test]
fn commands_outside_the_limits_are_refused_and_change_nothing() {
    let mut e = CassieEnv::new(CassieConfig::default());
    e.set_command(&[0.5, 0.0, 0.0]).unwrap();
    for bad in [
        [f32::NAN, 0.0, 0.0],
        [f32::INFINITY, 0.0, 0.0],
        [4.5, 0.0, 0.0],
        [0.0, -2.5, 0.0],
        [0.0, 0.0, 4.0],
    ] {
        let err = e.set_command(&bad).unwrap_err();
        assert!(matches!(err, CommandError::OutOfRange { .. }), "{bad:?}: {err}");
    }
    assert_eq!(e.set_command(&[1.0]), Err(CommandError::Arity { expected: 3, got: 1 }));
    assert_eq!(e.fixed_command, Some(Command { x: 0.5, y: 0.0, turn: 0.0 }));
    e.set_command(&[-4.0, 2.0, 3.0]).unwrap();
}

use super::outcome::{FOOT_LIFT, FOOT_SLIDE};
use super::*;
use crate::envs::cassie::commands::FORWARD_SPEEDS;
use crate::envs::cassie::height_scan;
use crate::envs::cassie::layout::HISTORY_FRAME;
use crate::envs::cassie::reward::RewardKind;
use crate::envs::cassie::{CommandKind, Models, ReferenceKind, SimKind};
use crate::envs::{CourseLeg, Drawable, MirrorIndices, StageGate, TerrainArg};

fn env() -> CassieEnv {
    CassieEnv::new(CassieConfig::default())
}

/// The two tasks the physical tests run on: the walking defaults (500 Hz, reference gait,
/// velocity observed) and the reference's env at 2 kHz.
fn tasks() -> [CassieConfig; 2] {
    [CassieConfig::default(), CassieConfig::roadrunner()]
}

/// Angular and joint velocities, and the pelvis velocity, in the observation; in a history
/// frame (from `history_at` on), the robot state's velocities.
fn is_velocity(i: usize, history_at: usize, scan_at: usize) -> bool {
    let state_velocity =
        |i: usize| (4..7).contains(&i) || (17..27).contains(&i) || (31..35).contains(&i);
    if i >= scan_at {
        return false;
    }
    if i >= history_at {
        let j = (i - history_at) % HISTORY_FRAME;
        return j < 35 && state_velocity(j);
    }
    state_velocity(i) || i >= 44
}

/// From mirrored initial states, mirrored actions give mirrored observations: the model,
/// the PD loop, the observation and the reference's mirror lists agree. Poses, commands and
/// clock match to 1e-3 (measured ≤ 2e-4). Velocities match to 0.03 rad/s (measured ≤ 2e-2,
/// at foot impacts): the single-iteration contact solver visits the left foot's contacts
/// before the right's, so an impact's velocity jump is not computed bit-symmetrically.
/// Both tasks, each with both clocks; the walking one also checks the reference gait and
/// the velocity observation's mirror entries against the physics, at 500 Hz and with the
/// tight 2 kHz tolerances at 2 kHz. At 500 Hz an impact's velocity jump comes in 4x larger
/// impulses, computed no more symmetrically: measured ≤ 1.6e-3 (positions) and 6.4e-2 rad/s
/// (velocities, one spike at a touchdown) over the 50 steps, against ≤ 8.8e-4 and 2.3e-2 at
/// 2 kHz; a wrong mirror entry is off by tenths from the first step.
#[test]
fn mirrored_actions_from_a_mirrored_state_give_mirrored_observations() {
    let [walk, roadrunner] = tasks();
    let walk_2khz = CassieConfig { sim_dt: Some(0.0005), ..walk.clone() };
    let omni = CassieConfig { reference: ReferenceKind::Omni, ..walk.clone() };
    let privileged = CassieConfig { privileged_critic: true, ..walk.clone() };
    let placement = CassieConfig { foot_placement: 0.35, ..omni.clone() };
    let history = CassieConfig {
        history: 2,
        obs: ObsKind::Reference,
        privileged_critic: true,
        ..omni.clone()
    };
    let estimate = CassieConfig { obs: ObsKind::Estimate, foot_placement: 0.35, ..omni.clone() };
    // The scan after the history, on the flat floor (its columns' swap is checked in
    // `height_scan`'s tests; rapier's heightfield contacts are not mirror-exact at impacts).
    let scan = CassieConfig { height_scan: true, ..history.clone() };
    let all = [walk, walk_2khz, omni, roadrunner, privileged, placement, history, estimate, scan];
    for config in all {
        mirror_check(config.clone());
        mirror_check(CassieConfig { full_clock: true, ..config });
    }
}

/// The same check on the lab's MuJoCo model, at its 2 kHz and at 500 Hz, over the first
/// 0.5 s: the lab's model is not exactly mirror-symmetric (its reset achilles-rod quaternions
/// differ left to right in the third digit, and its pair list has right tarsus against left
/// foot but not the mirrored pair), so after impacts the two runs part ways (0.75 rad/s by
/// step 35). Measured over 25 steps: ≤ 6.0e-4 (positions) and 5.0e-3 rad/s (velocities) at
/// both rates; a wrong mirror entry is off by tenths from the first step.
#[test]
fn mirrored_actions_give_mirrored_observations_on_mujoco() {
    let walk = CassieConfig { sim: Models::one(SimKind::Mujoco), ..CassieConfig::default() };
    let walk_500 = CassieConfig { sim_dt: Some(0.002), ..walk.clone() };
    for config in [walk, walk_500] {
        mirror_check(config.clone());
        mirror_check(CassieConfig { full_clock: true, ..config });
    }
}

fn mirror_check(config: CassieConfig) {
    let (mut a, mut b) = (CassieEnv::new(config.clone()), CassieEnv::new(config.clone()));
    let (mo, ma): (MirrorIndices, MirrorIndices) =
        (a.observation_mirror_indices().unwrap(), a.action_mirror_indices().unwrap());
    a.set_command(&[0.6, 0.2, 0.3]).unwrap();
    b.set_command(&[0.6, -0.2, -0.3]).unwrap();
    a.seed(1);
    b.seed(1);
    a.reset_with_heading(0.0);
    b.reset_with_heading(0.0);
    // The mirrored clock: half a cycle later (2-value clock), or the legs' period shifts
    // swapped (full clock); either way b's right leg swings when a's left leg does.
    let t = a.cycle_time();
    a.set_phase(0.1);
    if config.full_clock {
        b.set_phase(0.1);
        b.set_shifts([0.5, 0.0]);
    } else {
        b.set_phase(0.1 + t / 2.0);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (mut act, mut mirrored_act) = ([0.0f32; N], [0.0f32; N]);
    let mut expected = vec![0.0f32; a.observation_size()];
    let (mut worst_pos, mut worst_vel) = (0.0f32, 0.0f32);
    let (pos_tol, vel_tol, steps) = match (config.sim.first(), config.sim_dt() > 0.001) {
        (SimKind::Rapier, true) => (2.5e-3, 0.1, 50),
        (SimKind::Rapier, false) => (1e-3, 0.03, 50),
        (SimKind::Mujoco, _) => (1e-3, 0.02, 25),
    };
    // Foot placement feeds the observed velocity back into the targets, so the physics'
    // last-digit asymmetries grow from step to step: the first 25 steps (a sign error in a
    // placement term is off by tenths within a step or two of the first swing).
    let steps = if config.foot_placement > 0.0 { 25 } else { steps };
    for step in 0..steps {
        act.iter_mut().for_each(|x| *x = rng.gen_range(-0.2..0.2));
        ma.apply(&act, &mut mirrored_act);
        let oa = a.step(&act).obs.to_vec();
        let ob = b.step(&mirrored_act).obs.to_vec();
        mo.apply(&oa, &mut expected);
        if let Some(mc) = a.critic_observation_mirror_indices() {
            // The critic's extras that are positions: the pelvis and both feet heights (the
            // noise-free policy part is the observation, checked below).
            let mut critic = vec![0.0; mc.len()];
            mc.apply(a.critic_observation(), &mut critic);
            let n = oa.len();
            let heights = critic[n..n + 3].iter().zip(&b.critic_observation()[n..n + 3]);
            for (k, (x, y)) in heights.enumerate() {
                assert!((x - y).abs() < pos_tol, "step {step} critic extra {k}: {x} vs {y}");
            }
        }
        let scan_at = oa.len() - if config.height_scan { height_scan::LEN } else { 0 };
        let history_at = scan_at - config.history * HISTORY_FRAME;
        for (i, (x, y)) in expected.iter().zip(&ob).enumerate() {
            let err = (x - y).abs();
            if is_velocity(i, history_at, scan_at) {
                worst_vel = worst_vel.max(err);
                assert!(err < vel_tol, "step {step} obs[{i}]: mirrored {x} vs {y}");
            } else {
                worst_pos = worst_pos.max(err);
                assert!(err < pos_tol, "step {step} obs[{i}]: mirrored {x} vs {y}");
            }
        }
    }
    println!(
        "{} dt {} full clock {}: mirror error over {steps} steps: positions {worst_pos:.1e}, velocities {worst_vel:.1e}",
        config.sim, config.sim_dt(), config.full_clock
    );
}

/// An `experiment.json` from before the walking task rebuilds the task it trained on.
#[test]
fn older_run_files_load_as_the_reference_task() {
    let old =
        r#"{"policy_rate": 50.0, "sim_dt": 0.0005, "reward": "vonmises", "full_clock": false}"#;
    let config: CassieConfig = serde_json::from_str(old).unwrap();
    assert_eq!(config, CassieConfig::roadrunner());
    let new: CassieConfig =
        serde_json::from_str(&serde_json::to_string(&CassieConfig::default()).unwrap()).unwrap();
    assert_eq!(new, CassieConfig::default());
}

#[test]
fn same_seed_replays_bit_identically() {
    for sim in [SimKind::Rapier, SimKind::Mujoco] {
        let config = CassieConfig {
            sim: Models::one(sim),
            dynamics_randomization: true,
            obs_noise: 1.0,
            push: 1.0,
            ..CassieConfig::default()
        };
        assert_eq!(replay(&config), replay(&config), "{sim:?}");
    }
}

/// One seeded run's observations, rewards and resets, as bits.
fn replay(config: &CassieConfig) -> Vec<u32> {
    let run = || {
        let mut e = CassieEnv::new(config.clone());
        e.seed(3);
        e.set_training(Some(0)); // training episodes: randomized dynamics, noise, pushes
        let mut out: Vec<u32> = e.reset().iter().map(|x| x.to_bits()).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for _ in 0..150 {
            let act: Vec<f32> = (0..N).map(|_| rng.gen_range(-0.5..0.5)).collect();
            let s = e.step(&act);
            out.extend(s.obs.iter().map(|x| x.to_bits()));
            out.push(s.reward.to_bits());
            if s.done {
                out.extend(e.reset().iter().map(|x| x.to_bits()));
            }
        }
        out
    };
    run()
}

/// One joint state, both backends: the reset pose at a heading, with the same commands and
/// clock, gives the same observation entry by entry (to 1e-5: the f64 MuJoCo state read as
/// f32). Then the physics differs, within documented bounds.
#[test]
fn both_backends_observe_one_joint_state_alike() {
    let observe = |sim| {
        let mut e =
            CassieEnv::new(CassieConfig { sim: Models::one(sim), ..CassieConfig::default() });
        e.set_command(&[0.7, 0.1, 0.2]).unwrap();
        e.seed(4);
        e.reset_with_heading(0.8).to_vec()
    };
    let (rapier, mujoco) = (observe(SimKind::Rapier), observe(SimKind::Mujoco));
    assert_eq!(rapier.len(), mujoco.len());
    for (i, (r, m)) in rapier.iter().zip(&mujoco).enumerate() {
        assert!((r - m).abs() < 1e-5, "obs[{i}]: rapier {r}, mujoco {m}");
    }
    // Standing 0.1 s on zero actions, the two physics stay close (measured: joint angles
    // within 0.024 rad, the knees; velocities within 0.36 rad/s, the tarsi), and only the
    // lab's model reads its springs: its shins move (0.12 rad/s), rapier's read exactly 0.
    let stand = |sim| {
        let mut e =
            CassieEnv::new(CassieConfig { sim: Models::one(sim), ..CassieConfig::default() });
        e.set_command(&[0.0, 0.0, 0.0]).unwrap();
        e.seed(4);
        e.reset_with_heading(0.8);
        for _ in 0..4 {
            e.step(&[0.0; N]);
        }
        e.step(&[0.0; N]).obs.to_vec()
    };
    let (rapier, mujoco) = (stand(SimKind::Rapier), stand(SimKind::Mujoco));
    let shins = [27usize, 29, 31, 33];
    for (i, (r, m)) in rapier.iter().zip(&mujoco).enumerate() {
        if shins.contains(&i) {
            assert_eq!(*r, 0.0, "rapier's shins are rigid");
        } else {
            let tol = if is_velocity(i, usize::MAX, usize::MAX) { 0.5 } else { 0.05 };
            assert!((r - m).abs() < tol, "obs[{i}] standing: rapier {r}, mujoco {m}");
        }
    }
    assert!(mujoco[31].abs() > 0.05 && mujoco[33].abs() > 0.05, "the lab's shin springs move");
}

/// The facts sheet's stress test: targets = neutral ± U(0.3) every policy step for 10 s,
/// falls included. Joint limits hold, nothing goes non-finite, contacts stay shallow, the
/// tarsus follows the knee, and every reward term stays within [0, weight].
#[test]
fn random_targets_for_ten_seconds_stay_physical() {
    let desc = Description::cassie();
    let mujoco = CassieConfig { sim: Models::one(SimKind::Mujoco), ..CassieConfig::default() };
    let runs =
        tasks().into_iter().chain([mujoco]).flat_map(|t| [(1, false, t.clone()), (2, true, t)]);
    for (seed, dr, task) in runs {
        let dt = task.sim_dt();
        let walk = task.reward == RewardKind::Walk;
        let mut e = CassieEnv::new(CassieConfig { dynamics_randomization: dr, ..task.clone() });
        e.seed(seed);
        e.set_training(Some(0));
        e.reset();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut deepest, mut worst_limit, mut worst_coupling) = (0.0f32, 0.0f32, 0.0f32);
        for _ in 0..500 {
            let act: Vec<f32> = (0..N).map(|_| rng.gen_range(-0.3..0.3)).collect();
            let s = e.step(&act);
            assert!(s.obs.iter().all(|x| x.is_finite()) && s.reward.is_finite());
            for (name, value) in s.info {
                // Walk's progress term is signed (walking backwards costs).
                let progress = walk && *name == "progress";
                let low = if progress { -0.45 / 1.45 } else { 0.0 };
                let high = match (walk, progress) {
                    (true, true) => 0.45 / 1.45,
                    (true, false) => 0.15 / 1.45,
                    _ => 0.15 / 1.1,
                };
                assert!((low - 1e-6..=high + 1e-6).contains(value), "{name} = {value}");
            }
            let sim = e.sim();
            deepest = deepest.max(sim.max_penetration());
            let q = sim.true_motor_positions();
            for (k, (_, _, joint, _)) in desc.motors().enumerate() {
                let [lo, hi] = joint.range.unwrap();
                worst_limit = worst_limit.max(lo - q[k]).max(q[k] - hi);
            }
            for side in 0..2 {
                let (knee, tarsus) = sim.knee_tarsus(side);
                let reset = desc.legs[side][4].joint.reset;
                let coupled = reset - 0.9889 * (knee - desc.legs[side][3].joint.reset);
                // The lab's loop passes through the shin and heel springs: their deflection
                // moves the tarsus off the rigid coupling (0.11 rad under constant PD, with
                // shin −0.033 and heel −0.046 rad). What is left unexplained is the error.
                let springs = match sim.spring_deflections(side) {
                    Some([shin, heel]) => 2.5 * (shin.abs() + heel.abs()),
                    None => 0.0,
                };
                worst_coupling = worst_coupling.max((tarsus - coupled).abs() - springs);
            }
        }
        println!("{} dt {dt} dr={dr}: penetration {deepest:.4} m, limit overshoot {worst_limit:.4} rad, coupling error {worst_coupling:.2e} rad", task.sim);
        assert!(deepest < 0.005, "penetration {deepest}");
        assert!(worst_limit < 0.02, "limit overshoot {worst_limit} rad");
        // rapier: the coupling is a joint constraint (measured ≤ 6.6e-4); MuJoCo: a soft
        // equality loop through springs, beyond what the springs explain ≤ 1.1e-2 measured.
        let coupling_tol = if task.sim.first() == SimKind::Mujoco { 0.02 } else { 1e-3 };
        assert!(worst_coupling < coupling_tol, "tarsus coupling error {worst_coupling}");
    }
}

#[test]
fn standing_still_at_reset_is_not_done_and_observes_the_reset_pose() {
    let mut e = CassieEnv::new(CassieConfig::roadrunner());
    e.seed(0);
    let obs = e.reset_with_heading(1.0).to_vec();
    assert_eq!(obs.len(), 44);
    assert!((obs[0] - 1.0).abs() < 1e-6, "heading-relative quaternion is identity: {obs:?}");
    let offset = Description::cassie().neutral_stance();
    for k in 0..N {
        assert!((obs[7 + k] - offset[k]).abs() < 1e-5);
    }
    assert!((obs[28] - 1.4267).abs() < 1e-5 && (obs[30] - 1.4267).abs() < 1e-5);
    let s = e.step(&[0.0; N]);
    assert!(!s.done);
    assert!(s.reward > 0.0 && s.reward <= 1.0);

    let mut w = env();
    w.seed(0);
    let obs = w.reset_with_heading(1.0).to_vec();
    assert_eq!(obs.len(), 47, "walking task observes the pelvis velocity");
    assert_eq!(&obs[44..47], &[0.0; 3], "at rest");
}

/// The omnidirectional reference alone (zero residual, 1 s) moves the robot the way the
/// command asks: a sidestep command to that side, a turn command about that sense, where the
/// forward-only reference does neither.
#[test]
fn the_omni_reference_steps_sideways_and_turns_as_commanded() {
    let probe = |reference: ReferenceKind, command: [f32; 3]| {
        let mut e = CassieEnv::new(CassieConfig { reference, ..CassieConfig::default() });
        e.set_command(&command).unwrap();
        e.seed(3);
        e.reset_with_heading(0.0);
        let (mut lateral, mut yaw) = (0.0, 0.0);
        for _ in 0..50 {
            e.step(&[0.0; N]);
            lateral += e.metrics[1].1 / 50.0;
            yaw += e.metrics[2].1 / 50.0;
        }
        (lateral, yaw)
    };
    // Without a residual the robot tips over within about a second whatever the command
    // (measured: 0.55 m/s sideways, −0.49 rad/s with the forward-only reference), so each
    // probe is compared with the forward-only reference's on the same command. Measured: the
    // sidestep adds +0.13 / −0.16 m/s, the turn ±0.11 rad/s.
    for sign in [1.0, -1.0] {
        let (lateral, _) = probe(ReferenceKind::Omni, [0.0, 0.3 * sign, 0.0]);
        let (_, yaw) = probe(ReferenceKind::Omni, [0.0, 0.0, 0.5 * sign]);
        let (clock_lateral, _) = probe(ReferenceKind::Clock, [0.0, 0.3 * sign, 0.0]);
        let (_, clock_yaw) = probe(ReferenceKind::Clock, [0.0, 0.0, 0.5 * sign]);
        println!(
            "sign {sign}: lateral {lateral:.3} (clock {clock_lateral:.3}) m/s, yaw rate {yaw:.3} (clock {clock_yaw:.3}) rad/s"
        );
        assert!((lateral - clock_lateral) * sign > 0.06, "sidestep {sign}");
        assert!((yaw - clock_yaw) * sign > 0.06, "turn {sign}");
    }
}

/// A standing command puts nothing on top of the neutral stance, at every phase: the PD
/// targets are the stance plus the action, as with `--reference none`.
#[test]
fn a_standing_command_leaves_the_stance_to_the_policy() {
    let mut e = env();
    e.set_command(&[0.0, 0.0, 0.0]).unwrap();
    e.seed(4);
    e.reset();
    for _ in 0..40 {
        e.step(&[0.0; N]);
        assert_eq!(e.reference, [0.0; N]);
    }
    e.set_command(&[1.0, 0.0, 0.0]).unwrap();
    e.reset();
    let mut moved = 0.0f32;
    for _ in 0..40 {
        e.step(&[0.0; N]);
        moved = moved.max(e.reference[3].abs().max(e.reference[8].abs()));
    }
    assert!(moved > 0.4, "walking command folds the swing knee: {moved}");
}

/// `--push`: pushes come every 2-5 s (100-250 policy steps at 50 Hz), each an impulse of
/// 33.3 kg · v in a horizontal direction held for one step, on both backends; the pelvis takes
/// a speed change of about v, and without pushes nothing is pushed.
#[test]
fn pushes_come_every_two_to_five_seconds_and_move_the_robot() {
    for sim in [SimKind::Rapier, SimKind::Mujoco] {
        let mut e =
            CassieEnv::new(CassieConfig { sim: Models::one(sim), ..CassieConfig::default() });
        e.set_command(&[0.0, 0.0, 0.0]).unwrap();
        e.set_push(Pushes::Exactly(1.0)).unwrap();
        e.seed(2);
        e.reset_with_heading(0.0);
        let (mut pushes, mut gains) = (Vec::new(), Vec::new());
        for step in 0..400u32 {
            let before = e.sim().base_linvel();
            e.step(&[0.0; N]);
            if e.pushing {
                pushes.push(step);
                let dv = e.sim().base_linvel() - before;
                gains.push((dv.x * dv.x + dv.y * dv.y).sqrt());
            }
        }
        println!("{sim:?}: pushes at {pushes:?}, pelvis speed change {gains:?}");
        assert!(pushes.len() >= 2, "{sim:?}: {pushes:?}");
        assert!((100..=250).contains(&(pushes[0] + 1)), "{sim:?}: first push at {pushes:?}");
        for w in pushes.windows(2) {
            assert!((100..=250).contains(&(w[1] - w[0])), "{sim:?}: pushes at {pushes:?}");
        }
        for g in gains {
            // Measured: 1.00 and 0.97 m/s (rapier), 1.17 and 1.14 m/s (MuJoCo).
            assert!((0.8..1.4).contains(&g), "{sim:?}: a 1 m/s push changed the pelvis by {g}");
        }
    }
    // No pushes without --push, nor in an evaluation (Some(0)) of a push-trained config; its
    // own pushes (None) again in training.
    let pushed = CassieConfig { push: 1.0, ..CassieConfig::default() };
    for (config, setting, expect) in [
        (CassieConfig::default(), Pushes::Own, false),
        (pushed.clone(), Pushes::UpTo(0.0), false),
        (pushed, Pushes::Own, true),
    ] {
        let mut e = CassieEnv::new(config);
        e.set_push(setting).unwrap();
        e.set_command(&[0.0, 0.0, 0.0]).unwrap();
        e.seed(2);
        e.reset_with_heading(0.0);
        let mut any = false;
        for _ in 0..300 {
            e.step(&[0.0; N]);
            any |= e.pushing;
        }
        assert_eq!(any, expect, "push setting {setting:?}");
    }
}

/// `--foot-placement`: after a push a standing robot's reference steps (the swing knee folds)
/// and its swing hip reaches along the push, read from the observed velocity; without foot
/// placement the standing reference stays zero through the same push.
#[test]
fn foot_placement_steps_toward_a_push() {
    for placement in [0.0, 0.35] {
        let config = CassieConfig { foot_placement: placement, ..CassieConfig::default() };
        let mut e = CassieEnv::new(config);
        e.set_command(&[0.0, 0.0, 0.0]).unwrap();
        e.set_push(Pushes::Exactly(1.0)).unwrap();
        e.seed(2);
        e.reset_with_heading(0.0);
        let (mut fold, mut along) = (0.0f32, 0.0f32);
        let mut pushed_at = None;
        for step in 0..300u32 {
            e.step(&[0.0; N]);
            if e.pushing && pushed_at.is_none() {
                pushed_at = Some((step, e.last_push.expect("a push").dv));
            }
            if let Some((at, dv)) = pushed_at {
                if step > at && step <= at + 10 {
                    fold = fold.max(e.reference[3].abs().max(e.reference[8].abs()));
                    // The swing hips' reach (roll toward +y, pitch forward) against the push
                    // direction (heading 0: world x forward, y left).
                    let reach = [e.reference[2] + e.reference[7], e.reference[0] + e.reference[5]];
                    along = along.max(reach[0] * dv[0] + reach[1] * dv[1]);
                }
            }
        }
        assert!(pushed_at.is_some(), "a push within 300 steps");
        if placement == 0.0 {
            assert_eq!((fold, along), (0.0, 0.0), "no placement: the standing reference is zero");
        } else {
            assert!(fold > 0.3, "the pushed robot steps: knee fold {fold}");
            assert!(along > 0.05, "the swing foot reaches along the push: {along}");
        }
    }
}

/// `--sim rapier+mujoco`: episodes run on both simulators, drawn from the seeded generator (the same
/// seed, the same sequence), and each episode's observations come from the drawn one.
#[test]
fn mixed_physics_draws_a_simulator_per_episode_from_the_seed() {
    let kinds = |seed| {
        let mut e =
            CassieEnv::new(CassieConfig { sim: models("mixed"), ..CassieConfig::default() });
        e.seed(seed);
        (0..12)
            .map(|_| {
                e.reset();
                e.sim().kind()
            })
            .collect::<Vec<_>>()
    };
    let a = kinds(1);
    assert_eq!(a, kinds(1));
    assert!(a.contains(&SimKind::Rapier) && a.contains(&SimKind::Mujoco), "{a:?}");
    assert_ne!(a, kinds(2));
    let mut e = CassieEnv::new(CassieConfig { sim: models("mixed"), ..CassieConfig::default() });
    e.seed(1);
    for kind in a {
        e.reset();
        for _ in 0..5 {
            e.step(&[0.0; N]);
        }
        // Only MuJoCo's shins move.
        assert_eq!(e.obs[31] != 0.0, kind == SimKind::Mujoco, "{kind:?}");
    }
}

/// A model's share is the chance of its training episodes: 0.2 for MuJoCo is about a fifth of
/// 200 episodes (a binomial draw: 40 ± 3σ = 40 ± 17), and the models' order is theirs.
#[test]
fn a_share_is_the_chance_of_the_model_s_episodes() {
    let mujoco_episodes = |sim: &str| {
        let mut e = CassieEnv::new(CassieConfig { sim: models(sim), ..CassieConfig::default() });
        e.seed(3);
        (0..200)
            .filter(|_| {
                e.reset();
                e.sim().kind() == SimKind::Mujoco
            })
            .count()
    };
    let fifth = mujoco_episodes("rapier+mujoco:0.2");
    assert!((23..=57).contains(&fifth), "{fifth} of 200");
    let fifth = mujoco_episodes("mujoco:0.2+rapier");
    assert!((23..=57).contains(&fifth), "{fifth} of 200, MuJoCo first");
    assert_eq!(mujoco_episodes("mujoco"), 200);
}

/// `--robust-shares` replace the shares in training once the perturbations have begun:
/// before them (and in evaluations, which are not training) the models come episode for
/// episode as without them, so a branch at the perturbations' start changes the shares alone.
#[test]
fn the_robust_shares_take_over_once_the_perturbations_begin() {
    let models = |late: Vec<f64>, training: Option<u64>| {
        let mut e = CassieEnv::new(CassieConfig {
            sim: models("mixed"),
            robust_start: 1000,
            robust_ramp: 500,
            robust_shares: late,
            ..CassieConfig::default()
        });
        e.seed(5);
        e.set_training(training);
        (0..100)
            .map(|_| {
                e.reset();
                e.sim().kind() == SimKind::Mujoco
            })
            .collect::<Vec<bool>>()
    };
    for before in [Some(0), Some(1000), None] {
        assert_eq!(models(vec![1.0, 0.0], before), models(vec![], before), "{before:?}");
    }
    assert!(models(vec![], Some(1001)).contains(&true), "the even share draws MuJoCo too");
    assert!(!models(vec![1.0, 0.0], Some(1001)).contains(&true), "rapier only once perturbed");
    assert!(models(vec![0.0, 1.0], Some(5000)).iter().all(|&m| m), "MuJoCo only at full");
    let alone = CassieConfig { robust_shares: vec![0.6, 0.4], ..CassieConfig::default() };
    assert!(alone.check().unwrap_err().contains("--robust-shares"));
}

/// Selection episodes (`--best-by tracking`) force the model: 0 rapier, 1 MuJoCo, whatever
/// the seed draws; the draw is still made, so the episodes after a forced one start as they
/// would have (same models, same first observation); one model alone accepts only model 0.
#[test]
fn a_forced_model_runs_every_episode_on_it_and_leaves_the_other_draws_alone() {
    let mixed = || CassieEnv::new(CassieConfig { sim: models("mixed"), ..CassieConfig::default() });
    let mut e = mixed();
    assert_eq!(e.eval_models(), 2);
    for (model, kind) in [(0, SimKind::Rapier), (1, SimKind::Mujoco)] {
        e.set_eval_model(Some(model)).unwrap();
        e.seed(1);
        for _ in 0..6 {
            e.reset();
            assert_eq!(e.sim().kind(), kind);
        }
    }
    assert!(e.set_eval_model(Some(2)).is_err());
    // Forced for one episode, then drawn again: the next episodes match an env never forced.
    let (mut forced, mut free) = (mixed(), mixed());
    forced.seed(3);
    free.seed(3);
    forced.set_eval_model(Some(1)).unwrap();
    forced.reset();
    free.reset();
    forced.set_eval_model(None).unwrap();
    for _ in 0..6 {
        let obs = forced.reset().to_vec();
        assert_eq!(obs, free.reset());
        assert_eq!(forced.sim().kind(), free.sim().kind());
    }
    let mut alone = CassieEnv::new(CassieConfig::default());
    assert_eq!(alone.eval_models(), 1);
    assert!(alone.set_eval_model(Some(0)).is_ok() && alone.set_eval_model(Some(1)).is_err());
}

/// `mujoco@DT`: in a mix, MuJoCo steps at its own timestep and rapier keeps `sim_dt`; each
/// model takes the substeps of its own timestep, so a policy step is 20 ms of simulated time
/// on both (10 substeps at 4 ms would be 40 ms).
#[test]
fn a_model_of_a_mix_may_step_at_its_own_timestep() {
    let config = CassieConfig { sim: models("rapier+mujoco@0.004"), ..CassieConfig::default() };
    assert_eq!((config.dt_of(SimKind::Rapier), config.dt_of(SimKind::Mujoco)), (0.002, 0.004));
    let steps = |kind| substeps(config.dt_of(kind), 50.0);
    assert_eq!((steps(SimKind::Rapier), steps(SimKind::Mujoco)), (10, 5));
    let mut e = CassieEnv::new(config.clone());
    e.seed(1);
    let mut seen = Vec::new();
    for _ in 0..8 {
        e.reset();
        let start = e.sim().time();
        for _ in 0..5 {
            e.step(&[0.0; N]);
        }
        assert!((e.sim().time() - start - 0.1).abs() < 1e-6, "{:?}", e.sim().kind());
        seen.push(e.sim().kind());
    }
    assert!(seen.contains(&SimKind::Rapier) && seen.contains(&SimKind::Mujoco), "{seen:?}");
    let fast = CassieConfig { sim: models("rapier+mujoco@0.006"), ..config };
    assert!(fast.check().unwrap_err().contains("--sim rapier+mujoco@0.006: MuJoCo"));
}

/// Selection episodes score the weights as `gait eval --sim` runs them: a forced model steps
/// at its own default timestep (MuJoCo 0.5 ms, 40 substeps a policy step), not at training's
/// `mujoco@0.004`; the episodes drawn after it step at the training timesteps again.
#[test]
fn a_forced_model_runs_at_the_timestep_gait_eval_uses() {
    let config = CassieConfig { sim: models("rapier+mujoco@0.004"), ..CassieConfig::default() };
    let mut e = CassieEnv::new(config);
    e.seed(2);
    for (model, kind, dt) in [(1, SimKind::Mujoco, 0.0005), (0, SimKind::Rapier, 0.002)] {
        e.set_eval_model(Some(model)).unwrap();
        e.reset();
        assert_eq!(e.sim().kind(), kind);
        assert!((e.sim().timestep() - dt).abs() < 1e-8, "{kind:?}: {}", e.sim().timestep());
        let start = e.sim().time();
        e.step(&[0.0; N]);
        assert!((e.sim().time() - start - 0.02).abs() < 1e-9, "one policy step is 20 ms");
    }
    e.set_eval_model(None).unwrap();
    let mut seen = Vec::new();
    for _ in 0..8 {
        e.reset();
        let want = if e.sim().kind() == SimKind::Mujoco { 0.004 } else { 0.002 };
        assert!((e.sim().timestep() - want).abs() < 1e-8, "{}", e.sim().timestep());
        seen.push(e.sim().kind());
    }
    assert!(seen.contains(&SimKind::Mujoco), "{seen:?}");
}

/// `robust_start` / `robust_ramp`: nothing before the start, then a linear rise to full.
#[test]
fn perturbations_start_after_walking_and_ramp_to_full() {
    let c = CassieConfig { robust_start: 1000, robust_ramp: 500, ..CassieConfig::default() };
    let at: Vec<f64> =
        [0, 999, 1000, 1250, 1500, 10_000].map(|t| c.robustness_at(t, None)).to_vec();
    assert_eq!(at, [0.0, 0.0, 0.0, 0.5, 1.0, 1.0]);
    let at_once = CassieConfig { robust_start: 1000, ..CassieConfig::default() };
    assert_eq!((at_once.robustness_at(999, None), at_once.robustness_at(1000, None)), (0.0, 1.0));
    assert_eq!(c.robustness_at(1250, Some(5_000)), 0.5, "no gate: a stage does not move it");
}

/// `push_start`: the pushes on their own start, behind the same gate and ramp, while the
/// randomized model and the noise keep `robust_start`; the training distribution settles once
/// both are at full strength.
#[test]
fn pushes_may_begin_before_the_other_perturbations() {
    let config = CassieConfig {
        robust_start: 7_000,
        robust_ramp: 1_000,
        robust_start_speed: 0.4,
        push_start: Some(2_000),
        push: 0.45,
        obs_noise: 1.0,
        dynamics_randomization: true,
        ..CassieConfig::default()
    };
    assert_eq!(config.stage_gate().expect("a gate").not_before, 2_000, "from the pushes' start");
    let pushes = |t| config.push_strength_at(t, Some(2_500));
    assert_eq!([2_499, 2_500, 3_000, 3_500, 9_000].map(pushes), [0.0, 0.0, 0.5, 1.0, 1.0]);
    assert_eq!(config.push_strength_at(9_000, None), 0.0, "the gate still closed");
    assert_eq!(config.robustness_at(6_999, Some(2_500)), 0.0, "the rest wait for robust_start");
    assert_eq!(config.robustness_at(7_500, Some(2_500)), 0.5);
    assert_eq!(config.settled_from(Some(2_500)), Some(8_000));
    let late = CassieConfig { push_start: Some(9_000), ..config.clone() };
    assert_eq!(late.settled_from(Some(2_500)), Some(10_000), "the later of the two");
    // The env: pushes at the pushes' strength, the rest at the others'.
    let mut e = CassieEnv::new(config.clone());
    e.seed(4);
    e.set_training(Some(3_000));
    e.set_stage(Some(2_500));
    e.reset();
    assert_eq!((e.push_speed(), e.robustness()), (0.225, 0.0));
    // Unset, the pushes keep robust_start: the same schedule as before the setting.
    let unset = CassieConfig { push_start: None, ..config };
    for t in [0, 6_999, 7_000, 7_500, 9_000] {
        assert_eq!(unset.push_strength_at(t, Some(2_500)), unset.robustness_at(t, Some(2_500)));
    }
    assert_eq!(unset.stage_gate().expect("a gate").not_before, 7_000);
    // The fall penalty follows the pushes' stage when `pushed_fall_penalty` is set, and
    // evaluations (which push at full strength) take it.
    let pushed = CassieConfig { pushed_fall_penalty: Some(50.0), ..unset.clone() };
    let penalty = |t| pushed.fall_penalty_at(t, Some(2_500));
    assert_eq!([Some(6_999), Some(7_000), None].map(penalty), [5.0, 50.0, 50.0]);
    assert_eq!(pushed.fall_penalty_at(Some(9_000), None), 5.0, "the gate still closed");
    assert_eq!([Some(9_000), None].map(|t| unset.fall_penalty_at(t, None)), [5.0, 5.0]);
}

/// The env's reference stepping gain at `command` after a reset, `training` steps into a run
/// whose gated stage opened at `stage_from` (`None`: an evaluation).
fn stepping_gain_at(
    config: &CassieConfig,
    command: [f32; 3],
    training: Option<u64>,
    stage_from: u64,
) -> f32 {
    let mut e = CassieEnv::new(config.clone());
    e.set_command(&command).unwrap();
    e.seed(3);
    e.set_training(training);
    e.set_stage(Some(stage_from));
    e.reset_with_heading(0.0);
    e.update_reference();
    e.stepping_gain
}

/// `step_in_place_with_pushes`: in training the standing command's stepping gain is 0 until
/// the pushes begin (behind their gate) and grows with their strength to `step_in_place`;
/// evaluations use `step_in_place` throughout; unset, the gain is `step_in_place` from the
/// first step, as before the setting. The env's own stepping gain at a standing command
/// follows, and the distribution settles only once the stepping is full.
#[test]
fn stepping_in_place_may_grow_with_the_pushes() {
    let config = CassieConfig {
        reference: ReferenceKind::Omni,
        commands: CommandKind::OmniWalk,
        robust_start: 7_000,
        robust_ramp: 1_000,
        robust_start_speed: 0.4,
        push: 0.6,
        step_in_place: 0.5,
        step_in_place_with_pushes: true,
        ..CassieConfig::default()
    };
    let at = |t| config.step_in_place_at(Some(t), Some(2_500));
    assert_eq!([0, 6_999, 7_000, 7_500, 8_000, 9_000].map(at), [0.0, 0.0, 0.0, 0.25, 0.5, 0.5]);
    assert_eq!(config.step_in_place_at(Some(9_000), None), 0.0, "the gate still closed");
    assert_eq!(config.step_in_place_at(None, None), 0.5, "evaluations: the full gain");
    let unset = CassieConfig { step_in_place_with_pushes: false, ..config.clone() };
    assert_eq!(unset.step_in_place_at(Some(0), None), 0.5, "unset: from the first step");
    // Without pushes the stepping still waits for their schedule, and the run settles after it.
    let no_pushes = CassieConfig { push: 0.0, ..config.clone() };
    assert_eq!(no_pushes.settled_from(Some(2_500)), Some(8_000));
    // The env's stepping gain at a standing command, before, during and after the ramp.
    let gain = |training| stepping_gain_at(&config, [0.0, 0.0, 0.0], training, 2_500);
    assert_eq!([gain(Some(6_000)), gain(Some(7_500)), gain(Some(9_000))], [0.0, 0.25, 0.5]);
    assert_eq!(gain(None), 0.5);
}

/// `robust_start_speed`: the perturbations wait for the step the runner's gate opened at and
/// ramp from there, never before `robust_start`; the env's strength (which scales its pushes,
/// noise and randomized model) follows; a run has one gate, which two stages may share.
#[test]
fn gated_perturbations_begin_where_the_runner_opened_them() {
    let config = CassieConfig {
        robust_start: 1000,
        robust_ramp: 500,
        robust_start_speed: 0.3,
        push: 1.0,
        obs_noise: 1.0,
        dynamics_randomization: true,
        ..CassieConfig::default()
    };
    let gate = config.stage_gate().expect("a gate");
    assert_eq!(
        gate,
        StageGate { not_before: 1000, forward_speed: 0.3, setting: "--robust-start-speed" }
    );
    assert_eq!(config.robustness_at(50_000, None), 0.0, "not opened: none");
    let opened = |t| config.robustness_at(t, Some(4_000));
    assert_eq!([3_999, 4_000, 4_250, 4_500].map(opened), [0.0, 0.0, 0.5, 1.0]);
    assert_eq!(config.robustness_at(1_250, Some(600)), 0.5, "never before robust_start");
    // The env: no perturbation before the gate opens, full strength after.
    let mut e = CassieEnv::new(config.clone());
    e.seed(4);
    e.set_training(Some(50_000));
    e.reset();
    assert_eq!((e.push_speed(), e.robustness()), (0.0, 0.0));
    e.set_stage(Some(4_000));
    e.reset();
    assert_eq!((e.push_speed(), e.robustness()), (1.0, 1.0));
    // One gate per run: two stages share it at one speed.
    let both =
        CassieConfig { commands: CommandKind::OmniWalk, omni_start_speed: 0.4, ..config.clone() };
    assert!(both.check().expect_err("two speeds").contains("share one evaluation gate"));
    let shared = CassieConfig { omni_start: 3_000, omni_start_speed: 0.3, ..both };
    shared.check().unwrap();
    let gate = shared.stage_gate().expect("one gate");
    assert_eq!((gate.not_before, gate.forward_speed), (1_000, 0.3), "the earlier start");
    // Opened at 2000: the perturbations from there, the omnidirectional commands from 3000.
    assert_eq!(shared.robustness_at(2_250, Some(2_000)), 0.5);
    assert_eq!(shared.commands_at(Some(2_999), Some(2_000)), CommandKind::Forward);
    assert_eq!(shared.commands_at(Some(3_000), Some(2_000)), CommandKind::OmniWalk);
    assert_eq!(shared.settled_from(Some(2_000)), Some(3_000));
    let forward = CassieConfig { omni_start_speed: 0.4, ..config };
    assert!(forward.check().is_ok(), "forward commands have no omnidirectional gate");
    assert_eq!(forward.stage_gate().map(|g| g.setting), Some("--robust-start-speed"));
}

/// The step from which the training distribution stops changing (the best-eval phase): full
/// perturbation strength (from the gate when there is one), the omnidirectional stage and its
/// ramp and axes begun; 0 without a curriculum; unknown while a gate is closed.
#[test]
fn the_training_distribution_settles_at_full_perturbations_and_the_last_command_stage() {
    assert_eq!(CassieConfig::default().settled_from(None), Some(0), "no curriculum");
    let robust = CassieConfig {
        robust_start: 1000,
        robust_ramp: 500,
        push: 0.45,
        ..CassieConfig::default()
    };
    assert_eq!(robust.settled_from(None), Some(1500));
    let quiet = CassieConfig { push: 0.0, ..robust.clone() };
    assert_eq!(quiet.settled_from(None), Some(0), "robust_start without perturbations");
    let gated = CassieConfig { robust_start_speed: 0.4, ..robust };
    assert_eq!(gated.settled_from(None), None, "the gate is closed");
    assert_eq!(gated.settled_from(Some(4000)), Some(4500));
    assert_eq!(gated.settled_from(Some(10)), Some(1500), "never before robust_start");
    let omni = CassieConfig {
        commands: CommandKind::OmniWalk,
        omni_start: 2000,
        omni_ramp: 3000,
        omni_axes_start: 2500,
        ..CassieConfig::default()
    };
    assert_eq!(omni.settled_from(None), Some(3000));
    let omni_gated = CassieConfig { omni_start_speed: 0.4, omni_ramp: 0, ..omni };
    assert_eq!(
        (omni_gated.settled_from(None), omni_gated.settled_from(Some(7000))),
        (None, Some(7000))
    );
    let preset = crate::config::TrainConfig::for_env("cassie").env.get::<CassieConfig>().clone();
    // The preset's perturbations begin at 7M (or at a later gate) and ramp over 1M.
    assert_eq!(preset.settled_from(Some(2_040_000)), Some(8_000_000));
    assert_eq!(preset.settled_from(Some(7_500_000)), Some(8_500_000));
}

/// `full_step_start`: the walking stage steps fully from 0.3 m/s; from the start (behind the
/// perturbations' gate) the stepping gain uses `full_step_speed`, as evaluations and exported
/// controllers do throughout; the training distribution settles no earlier than the switch.
#[test]
fn the_full_step_speed_switches_at_its_start_behind_the_gate() {
    let config = CassieConfig {
        reference: ReferenceKind::Omni,
        commands: CommandKind::OmniWalk,
        full_step_speed: 0.1,
        full_step_start: 7_000,
        robust_start_speed: 0.4,
        ..CassieConfig::default()
    };
    let at = |t, gate| config.full_step_speed_at(t, gate);
    assert_eq!([at(Some(6_999), Some(10)), at(Some(7_000), Some(10))], [0.3, 0.1]);
    assert_eq!(at(Some(9_000), None), 0.3, "the gate still closed");
    assert_eq!(at(Some(8_000), Some(8_500)), 0.3, "never before the gate opened");
    assert_eq!(at(None, None), 0.1, "evaluations: the final value");
    let from_the_first = CassieConfig { full_step_start: 0, ..config.clone() };
    assert_eq!(from_the_first.full_step_speed_at(Some(0), None), 0.1, "0: from the first step");
    assert_eq!(config.settled_from(Some(10)), Some(7_000));
    assert_eq!(config.settled_from(None), None);
    assert_eq!(from_the_first.settled_from(None), Some(0));
    // The env's stepping gain at a 0.2 m/s sidestep: two thirds before the switch, full after.
    let gain = |training| stepping_gain_at(&config, [0.0, 0.2, 0.0], training, 10);
    let (before, after, eval) = (gain(Some(6_000)), gain(Some(7_000)), gain(None));
    assert!((before - 2.0 / 3.0).abs() < 1e-6, "before the switch: {before}");
    assert_eq!((after, eval), (1.0, 1.0));
}

/// One 60-step episode's observations and pelvis heights under `training`.
fn episode(config: &CassieConfig, training: Option<u64>) -> (Vec<Vec<f32>>, Vec<f32>) {
    let mut e = CassieEnv::new(config.clone());
    e.set_command(&[0.0, 0.0, 0.0]).unwrap();
    e.seed(5);
    e.set_training(training);
    let mut obs = vec![e.reset_with_heading(0.0).to_vec()];
    let mut heights = Vec::new();
    for _ in 0..60 {
        obs.push(e.step(&[0.0; N]).obs.to_vec());
        heights.push(e.sim().base_position().z);
    }
    (obs, heights)
}

/// Observation noise and randomized dynamics act in training episodes once the ramp has begun,
/// never in evaluations (`set_training(None)`, what `gait eval` runs), and the noise has the
/// documented size: the observed motor angles stray from the true ones by about σ = 0.01 rad,
/// the observed pelvis velocity by `velocity_noise`, the orientation by `orientation_noise`.
#[test]
fn noise_and_randomization_only_in_training_and_at_their_size() {
    let nominal = CassieConfig::default();
    let robust = CassieConfig {
        dynamics_randomization: true,
        obs_noise: 1.0,
        robust_start: 1000,
        ..CassieConfig::default()
    };
    let (clean, clean_z) = episode(&nominal, None);
    assert_eq!(episode(&robust, None), (clean.clone(), clean_z.clone()), "evaluation");
    let (before, before_z) = episode(&robust, Some(999));
    assert_eq!((&before, &before_z), (&clean, &clean_z), "before robust_start");
    // Noise alone: the same physics, observations off by the noise.
    let noisy = CassieConfig { obs_noise: 1.0, ..CassieConfig::default() };
    let (seen, seen_z) = episode(&noisy, Some(0));
    assert_eq!(seen_z, clean_z, "noise changes what is seen, not what happens");
    // The root-mean-square of the seen inputs' deviation from the clean ones, over `inputs`.
    let rms = |seen: &[Vec<f32>], inputs: std::ops::Range<usize>| {
        let d: Vec<f32> = seen
            .iter()
            .zip(&clean)
            .flat_map(|(a, b)| inputs.clone().map(move |i| a[i] - b[i]))
            .collect();
        (d.iter().map(|x| x * x).sum::<f32>() / d.len() as f32).sqrt()
    };
    let sd = rms(&seen, 7..17);
    assert!((0.008..0.012).contains(&sd), "motor angle noise σ {sd}");
    // The same deviation in a training episode of another configuration.
    let sd_with = |config: &CassieConfig, inputs| rms(&episode(config, Some(0)).0, inputs);
    // The observed pelvis velocity's noise is `velocity_noise`, on its own: 0 leaves it exact.
    let velocity = seen[0].len() - 3..seen[0].len();
    let sd = rms(&seen, velocity.clone());
    assert!((0.08..0.12).contains(&sd), "velocity noise σ {sd}");
    let sd = sd_with(&CassieConfig { velocity_noise: 0.3, ..noisy.clone() }, velocity.clone());
    assert!((0.24..0.36).contains(&sd), "velocity noise σ {sd}");
    let exact = CassieConfig { velocity_noise: 0.0, ..noisy.clone() };
    assert_eq!(sd_with(&exact, velocity), 0.0);
    // The orientation's noise is `orientation_noise`: a rotation of σ per axis, so the seen
    // quaternion's vector part strays by about σ/2 per component; 0 leaves it exact.
    let sd = rms(&seen, 1..4);
    assert!((0.02..0.03).contains(&sd), "orientation noise σ/2 {sd}");
    let sd = sd_with(&CassieConfig { orientation_noise: 0.2, ..noisy.clone() }, 1..4);
    assert!((0.08..0.12).contains(&sd), "orientation noise σ/2 {sd}");
    assert_eq!(sd_with(&CassieConfig { orientation_noise: 0.0, ..noisy.clone() }, 1..4), 0.0);
    // A run from before the settings (neither in its experiment.json) trained at 0.1 and 0.05.
    let old: CassieConfig = serde_json::from_str("{}").unwrap();
    assert_eq!((old.velocity_noise, old.orientation_noise), (0.1, 0.05));
    // Randomized dynamics: another robot, another trajectory.
    let dr = CassieConfig { dynamics_randomization: true, ..CassieConfig::default() };
    assert_ne!(episode(&dr, Some(0)).1, clean_z);
}

/// A fall names its cause (what `gait eval` prints), and a new episode clears it.
#[test]
fn a_fall_names_what_ended_it() {
    let mut e = env();
    e.seed(1);
    e.reset();
    assert_eq!(e.termination(), None);
    let mut why = None;
    for _ in 0..200 {
        // Knees folded hard: the robot collapses.
        let mut a = [0.0; N];
        a[3] = -1.5;
        a[8] = -1.5;
        if e.step(&a).done {
            why = e.termination();
            break;
        }
    }
    let why = why.expect("the robot fell");
    assert!(
        ["pelvis roll", "pelvis pitch", "pelvis below", "heel spring"]
            .iter()
            .any(|w| why.starts_with(w)),
        "{why}"
    );
    e.reset();
    assert_eq!(e.termination(), None);
}

/// `omni_axes_start`: no pure-axis share before it in training, the full share from it on
/// and in evaluations.
#[test]
fn the_axis_share_starts_at_its_step() {
    let config = CassieConfig { omni_axes: 0.5, omni_axes_start: 1_000, ..CassieConfig::default() };
    assert_eq!(config.omni_axes_at(Some(999)), 0.0);
    assert_eq!(config.omni_axes_at(Some(1_000)), 0.5);
    assert_eq!(config.omni_axes_at(None), 0.5);
    assert_eq!(CassieConfig::default().omni_axes_at(Some(5)), 0.0);
}

/// `omni_ramp`: at the first training step a fifth of the commands are omnidirectional (so
/// sideways and turn commands are never constant), after the ramp all of them; evaluations
/// draw them all throughout.
#[test]
fn the_omni_ramp_starts_with_a_fifth_of_omnidirectional_commands() {
    let config = CassieConfig {
        commands: CommandKind::OmniWalk,
        omni_ramp: 1_000_000,
        ..CassieConfig::default()
    };
    assert_eq!(config.omni_share_at(0), 0.2);
    assert!((config.omni_share_at(500_000) - 0.6).abs() < 1e-12);
    assert_eq!(config.omni_share_at(2_000_000), 1.0);
    let share = |training: Option<u64>| {
        let mut e = CassieEnv::new(config.clone());
        e.seed(9);
        e.set_training(training);
        let n = 2000;
        let sideways = (0..n)
            .filter(|_| {
                e.new_command();
                e.command.y != 0.0 || e.command.turn != 0.0 || e.command.x < 0.0
            })
            .count();
        sideways as f64 / n as f64
    };
    // An omni-walk command is sideways, turning or backward with probability about 0.62.
    let (early, late, eval) = (share(Some(0)), share(Some(1_000_000)), share(None));
    assert!((early - 0.2 * late).abs() < 0.04, "early {early}, late {late}");
    assert!(late > 0.5 && (late - eval).abs() < 0.05, "late {late}, eval {eval}");
}

/// Whether `c` could come from the `forward` distribution (straight ahead in its speeds, or
/// standing).
fn is_forward(c: &Command) -> bool {
    c.y == 0.0 && c.turn == 0.0 && (c.x == 0.0 || FORWARD_SPEEDS.contains(&c.x))
}

/// `omni_start`: before it, training draws the `forward` distribution with its long holds;
/// from it on, and in evaluations, the omnidirectional one.
#[test]
fn forward_commands_come_before_the_omni_start() {
    let config = CassieConfig {
        commands: CommandKind::OmniWalk,
        omni_start: 1_000,
        ..CassieConfig::default()
    };
    assert_eq!(config.commands_at(Some(999), None), CommandKind::Forward);
    assert_eq!(config.commands_at(Some(1_000), None), CommandKind::OmniWalk);
    assert_eq!(config.commands_at(None, None), CommandKind::OmniWalk);
    let forward = CassieConfig { omni_start: 1_000, ..CassieConfig::default() };
    assert_eq!(
        forward.commands_at(Some(5), None),
        CommandKind::Forward,
        "forward runs stay forward"
    );
    let mut e = CassieEnv::new(config);
    e.seed(4);
    let mut omni_draws = |training: Option<u64>| {
        e.set_training(training);
        let mut holds = Vec::new();
        let omni = (0..500)
            .filter(|_| {
                e.reset();
                holds.push(e.redraw_every);
                !is_forward(&e.command)
            })
            .count();
        (omni, holds.into_iter().min().unwrap_or(0))
    };
    let (early, early_hold) = omni_draws(Some(999));
    assert_eq!(early, 0, "forward commands only before the start");
    assert!(early_hold >= 250, "forward holds: {early_hold}");
    let (late, late_hold) = omni_draws(Some(1_000));
    assert!(late > 200 && late_hold < 250, "omnidirectional from the start: {late}, {late_hold}");
    let (eval, _) = omni_draws(None);
    assert!(eval > 200, "evaluations draw omnidirectional commands: {eval}");
}

/// `command_hold`: once the perturbations have begun, forward commands are held
/// U(hold, 2 × hold) s; before them, in evaluations and without the setting, 5-10 s. The
/// draws before the perturbations are the same as without the setting.
#[test]
fn command_holds_shorten_with_the_perturbations() {
    let config = CassieConfig {
        command_hold: 2.0,
        robust_start: 1_000,
        obs_noise: 1.0,
        ..CassieConfig::default()
    };
    let holds = |config: &CassieConfig, training: Option<u64>| {
        let mut e = CassieEnv::new(config.clone());
        e.seed(3);
        e.set_training(training);
        (0..200)
            .map(|_| {
                e.reset();
                e.redraw_every
            })
            .collect::<Vec<_>>()
    };
    let range = |h: &[u32]| (*h.iter().min().unwrap(), *h.iter().max().unwrap());
    let plain = CassieConfig { command_hold: 0.0, ..config.clone() };
    assert_eq!(holds(&config, Some(999)), holds(&plain, Some(999)), "unchanged before");
    let (lo, hi) = range(&holds(&config, Some(999)));
    assert!(lo >= 250 && hi < 500, "5-10 s before the perturbations: {lo}-{hi}");
    let (lo, hi) = range(&holds(&config, Some(2_000)));
    assert!(lo >= 100 && hi < 200 && hi - lo > 50, "2-4 s with them: {lo}-{hi}");
    let (lo, _) = range(&holds(&config, None));
    assert!(lo >= 250, "evaluations keep 5-10 s: {lo}");
    let (lo, _) = range(&holds(&plain, Some(2_000)));
    assert!(lo >= 250, "no setting, no change: {lo}");
}

/// `cadence`: the cycle follows the forward command (0.7 s to 0.5 m/s, 0.6 s at 1 m/s and
/// 0.5 s from 1.5 m/s with 0.2), a command change keeps the phase's share of the cycle, and
/// without the setting the cycle stays 0.7 s.
#[test]
fn the_cycle_shortens_with_the_command_and_keeps_its_phase() {
    let config = CassieConfig { cadence: 0.2, ..CassieConfig::default() };
    for (x, cycle) in [(0.0, 0.7), (0.5, 0.7), (-1.0, 0.6), (1.0, 0.6), (2.0, 0.5)] {
        assert!(
            (config.cycle_time_at(x) - cycle).abs() < 1e-12,
            "{x}: {}",
            config.cycle_time_at(x)
        );
    }
    assert_eq!(CassieConfig::default().cycle_time_at(1.2), 0.7);
    let full = CassieConfig { full_gait: true, ..config.clone() };
    assert!(full.check().unwrap_err().contains("--full-gait"));
    let mut e = CassieEnv::new(config);
    e.seed(2);
    e.set_command(&[1.0, 0.0, 0.0]).unwrap();
    e.reset();
    assert!((e.cycle_time() - 0.6).abs() < 1e-12, "{}", e.cycle_time());
    e.set_course(&[
        CourseLeg { start: 0, command: [1.0, 0.0, 0.0], ground: None },
        CourseLeg { start: 7, command: [0.3, 0.0, 0.0], ground: None },
    ])
    .unwrap();
    e.reset();
    for _ in 0..6 {
        e.step(&[0.0; N]);
    }
    let fraction = e.clock.phase() / e.clock.cycle_time();
    let next = (e.clock.phase() + 1.0 / 50.0) / 0.6;
    e.step(&[0.0; N]);
    assert!((e.cycle_time() - 0.7).abs() < 1e-12, "{}", e.cycle_time());
    let after = e.clock.phase() / e.clock.cycle_time();
    assert!((after - next.rem_euclid(1.0)).abs() < 1e-9, "{fraction} → {after}, not {next}");
    // An export's controller states the rule, whatever the command of the moment.
    let reference = e.controller().and_then(|c| c.pd?.reference).expect("a reference gait");
    assert_eq!((reference.cycle_time, reference.cadence), (0.7, 0.2));
}

/// `omni_start_speed`: the omnidirectional stage waits for the step the runner's gate opened
/// at (`Walking::set_stage`), never before `omni_start`; evaluations draw omnidirectional commands
/// throughout; no gate without the setting or for forward commands.
#[test]
fn a_gated_omni_stage_begins_where_the_runner_opened_it() {
    let config = CassieConfig {
        commands: CommandKind::OmniWalk,
        omni_start: 1_000,
        omni_start_speed: 0.4,
        ..CassieConfig::default()
    };
    let gate = config.stage_gate().expect("a gate");
    assert_eq!(
        gate,
        StageGate { not_before: 1_000, forward_speed: 0.4, setting: "--omni-start-speed" }
    );
    assert!(!gate.opens(999, Some(0.9)), "not before omni_start");
    assert!(!gate.opens(5_000, Some(0.39)) && !gate.opens(5_000, None));
    assert!(gate.opens(1_000, Some(0.4)));
    assert_eq!(config.commands_at(Some(5_000), None), CommandKind::Forward, "not opened");
    assert_eq!(config.commands_at(Some(4_999), Some(5_000)), CommandKind::Forward);
    assert_eq!(config.commands_at(Some(5_000), Some(5_000)), CommandKind::OmniWalk);
    assert_eq!(config.commands_at(None, None), CommandKind::OmniWalk, "evaluations");
    let ungated = CassieConfig { omni_start_speed: 0.0, ..config.clone() };
    assert_eq!(ungated.stage_gate(), None);
    assert_eq!(ungated.commands_at(Some(1_000), None), CommandKind::OmniWalk);
    let forward = CassieConfig { omni_start_speed: 0.4, ..CassieConfig::default() };
    assert_eq!(forward.stage_gate(), None, "forward commands have no omnidirectional stage");
    // The env follows the stage it is told.
    let mut e = CassieEnv::new(config);
    e.seed(4);
    e.set_training(Some(6_000));
    let omni = |e: &mut CassieEnv| {
        (0..300)
            .filter(|_| {
                e.reset();
                !is_forward(&e.command)
            })
            .count()
    };
    assert_eq!(omni(&mut e), 0, "before the gate opened");
    e.set_stage(Some(5_000));
    assert!(omni(&mut e) > 100, "after it opened");
}

/// `gait eval --course`: each leg's command from its first step on (observed and followed by
/// the reference gait), the last one held; a course that is empty, out of order, not starting
/// at step 0 or holding a command out of range is refused and changes nothing.
#[test]
fn a_course_switches_commands_at_its_legs() {
    let mut e =
        CassieEnv::new(CassieConfig { reference: ReferenceKind::Omni, ..Default::default() });
    let leg = |start, command| CourseLeg { start, command, ground: None };
    e.set_course(&[leg(0, [1.0, 0.0, 0.0]), leg(5, [0.0, 0.0, 0.4]), leg(8, [0.0, -0.2, 0.0])])
        .unwrap();
    e.seed(1);
    let obs = e.reset().to_vec();
    assert_eq!(&obs[35..38], &[1.0, 0.0, 0.0]);
    let mut seen = Vec::new();
    for _ in 0..12 {
        let obs = e.step(&[0.0; N]).obs;
        seen.push([obs[35], obs[36], obs[37]]);
    }
    // After step t (1-based) the observation holds the command of step t.
    assert_eq!(seen[3], [1.0, 0.0, 0.0]);
    assert_eq!(seen[4], [0.0, 0.0, 0.4], "{seen:?}");
    assert_eq!(seen[7], [0.0, -0.2, 0.0], "{seen:?}");
    assert_eq!(seen[11], [0.0, -0.2, 0.0], "the last leg is held");
    // A new episode starts the course again.
    assert_eq!(&e.reset()[35..38], &[1.0, 0.0, 0.0]);
    for bad in [
        vec![],
        vec![leg(1, [1.0, 0.0, 0.0])],
        vec![leg(0, [1.0, 0.0, 0.0]), leg(0, [0.5, 0.0, 0.0])],
        vec![leg(0, [1.0, 0.0, 0.0]), leg(4, [0.0, 9.0, 0.0])],
    ] {
        assert!(e.set_course(&bad).is_err(), "{bad:?}");
        assert_eq!(&e.reset()[35..38], &[1.0, 0.0, 0.0], "{bad:?} changed nothing");
    }
    e.set_command(&[0.5, 0.0, 0.0]).unwrap();
    e.reset();
    for _ in 0..9 {
        e.step(&[0.0; N]);
    }
    assert_eq!(
        &e.step(&[0.0; N]).obs[35..38],
        &[0.5, 0.0, 0.0],
        "a command (from the next episode) ends the course"
    );
}

/// A course that names its ground lays it under every episode of the course (here the check's
/// flight up from 1 m along the heading, 8 risers of 15 cm), in the physics too; a refused
/// ground changes nothing; a command ends the course and its ground with the next episode.
#[test]
fn a_course_lays_the_ground_its_legs_name() {
    let mut e = CassieEnv::new(CassieConfig::default());
    let up = TerrainArg { kind: TerrainKind::Upstairs, difficulty: 2.0 / 3.0 };
    let legs = [
        CourseLeg { start: 0, command: [0.5, 0.0, 0.0], ground: None },
        CourseLeg { start: 80, command: [0.5, 0.0, 0.0], ground: Some(up) },
    ];
    e.set_course(&legs).unwrap();
    e.seed(2);
    e.reset();
    let top = |e: &CassieEnv| e.ground().map(|g| g.range()[1]);
    let stairs = top(&e).expect("a ground");
    assert!((stairs - 1.2).abs() < 1e-4, "{stairs}");
    // Under the robot's start the floor is flat; the physics has the same ground.
    let pelvis = e.sim().base_position();
    let field = e.ground().unwrap();
    assert_eq!(field.height_at(pelvis.x, pelvis.y), Some(0.0));
    let mut bad = legs;
    bad[1].ground = Some(TerrainArg { kind: TerrainKind::Mix, difficulty: 0.5 });
    assert!(e.set_course(&bad).is_err());
    e.reset();
    assert_eq!(top(&e), Some(stairs), "the refused course changed nothing");
    e.set_command(&[0.5, 0.0, 0.0]).unwrap();
    e.reset();
    assert!(e.ground().is_none(), "a command ends the course's ground");
}

/// Observations of the policy and of the critic, and the pelvis heights, step by step.
type CriticEpisode = (Vec<Vec<f32>>, Vec<Vec<f32>>, Vec<f32>);

/// One `steps`-step training episode's policy and critic observations and pelvis heights.
fn critic_episode(config: &CassieConfig, pushes: Pushes, steps: usize) -> CriticEpisode {
    let mut e = CassieEnv::new(config.clone());
    e.set_command(&[0.0, 0.0, 0.0]).unwrap();
    e.set_push(pushes).unwrap();
    e.seed(5);
    e.set_training(Some(0));
    let mut obs = vec![e.reset_with_heading(0.0).to_vec()];
    let mut critic = vec![e.critic_observation().to_vec()];
    let mut heights = vec![e.sim().base_position().z];
    for _ in 0..steps {
        obs.push(e.step(&[0.0; N]).obs.to_vec());
        critic.push(e.critic_observation().to_vec());
        heights.push(e.sim().base_position().z);
    }
    (obs, critic, heights)
}

/// `--privileged-critic`: the policy's observation is unchanged; the critic's starts with it
/// without the noise, then reads the heights, the model the episode drew and the last push.
#[test]
fn the_privileged_critic_reads_the_state_without_noise_and_the_perturbations() {
    use crate::envs::cassie::critic_obs::{EXTRAS, PUSH_MEMORY};
    let plain = CassieConfig { obs_noise: 1.0, ..CassieConfig::default() };
    let privileged = CassieConfig { privileged_critic: true, ..plain.clone() };
    let (seen, ..) = critic_episode(&plain, Pushes::Own, 60);
    let (seen_too, critic, heights) = critic_episode(&privileged, Pushes::Own, 60);
    assert_eq!(seen, seen_too, "the policy's observation does not change");
    let (clean, ..) = critic_episode(&CassieConfig::default(), Pushes::Own, 60);
    let n = clean[0].len();
    assert_eq!(CassieEnv::new(privileged.clone()).critic_observation_size(), n + EXTRAS);
    assert!(CassieEnv::new(plain).critic_observation().is_empty());
    for (t, (c, o)) in critic.iter().zip(&clean).enumerate() {
        assert_eq!(&c[..n], &o[..], "step {t}: the critic's part is the noise-free observation");
        let e = &c[n..];
        assert_eq!(e[0], heights[t], "step {t}: the pelvis height");
        assert!(e[1].abs() < 0.2 && e[2].abs() < 0.2, "step {t}: feet heights {e:?}");
        // The nominal model (no randomization asked for) and no push.
        assert_eq!(&e[5..], &[0.0, 1.0, 1.0, 1.0, 3.0, 1.0, 1.0, PUSH_MEMORY, 0.0, 0.0]);
    }
    // 0.2 s in, sinking onto its springs: 1.09 of the weight measured.
    let standing = &critic[10][n..];
    assert!(
        (0.8..1.2).contains(&(standing[3] + standing[4])),
        "feet carry the weight: {standing:?}"
    );

    // Randomized dynamics: the episode's model, constant through the episode.
    let dr = CassieConfig { dynamics_randomization: true, ..privileged.clone() };
    let (_, critic, _) = critic_episode(&dr, Pushes::Own, 60);
    let model = &critic[0][n + 6..n + 12];
    assert_ne!(model, &[1.0, 1.0, 1.0, 3.0, 1.0, 1.0]);
    assert!(critic.iter().all(|c| &c[n + 6..n + 12] == model));

    // Pushes of exactly 1 m/s: remembered for PUSH_MEMORY s, with their full speed change.
    let (_, critic, _) = critic_episode(&privileged, Pushes::Exactly(1.0), 400);
    let pushed: Vec<usize> = (1..critic.len())
        .filter(|&t| critic[t][n + 12] < PUSH_MEMORY && critic[t - 1][n + 12] >= PUSH_MEMORY)
        .collect();
    assert!(!pushed.is_empty(), "a push within 8 s at U(2, 5) s");
    let at = pushed[0];
    assert!((100..=250).contains(&at), "the first push at step {at}");
    let e = &critic[at][n..];
    assert!((e[12] - 0.02).abs() < 1e-6, "the step after the push: {}", e[12]);
    assert!(((e[13] * e[13] + e[14] * e[14]).sqrt() - 1.0).abs() < 1e-4, "{e:?}");
    assert!(critic[..at].iter().all(|c| c[n + 12..] == [PUSH_MEMORY, 0.0, 0.0]));
    // Forgotten PUSH_MEMORY s (100 steps) later, unless another push came first.
    let later = &critic[at + 100][n..];
    assert!(later[12] < 1.99 || later[12..] == [PUSH_MEMORY, 0.0, 0.0], "{later:?}");
    assert!(pushed.len() == 1 || pushed[1] - at >= 100, "{pushed:?}");
}

/// `--dr-centered` draws damping and torque efficiency around the nominal model (median
/// damping ×1, mean efficiency 1), within the same span; without it they stay harder than
/// nominal on average (mean damping ×1.25, efficiency 0.95).
#[test]
fn centered_randomization_is_centred_on_the_nominal_model() {
    let draws = |centered: bool| {
        let config = CassieConfig {
            dynamics_randomization: true,
            dr_centered: centered,
            ..CassieConfig::default()
        };
        let mut e = CassieEnv::new(config);
        e.seed(3);
        e.set_training(Some(10_000_000));
        let (mut damping, mut efficiency) = (Vec::new(), Vec::new());
        for _ in 0..2000 {
            let d = e.draw_dynamics();
            damping.push(d.damping_scale[0]);
            efficiency.push(d.efficiency);
        }
        damping.sort_by(f32::total_cmp);
        let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len() as f32;
        (damping[0], damping[1000], damping[1999], mean(&damping), mean(&efficiency), efficiency)
    };
    let (lo, median, hi, _, eff, effs) = draws(true);
    assert!(lo >= 0.5 && hi <= 2.0 && lo < 0.52 && hi > 1.9, "damping {lo}..{hi}");
    assert!((median - 1.0).abs() < 0.06, "median damping {median}");
    assert!((eff - 1.0).abs() < 0.005, "mean efficiency {eff}");
    assert!(effs.iter().all(|e| (0.95..=1.05).contains(e)));
    let (lo, _, hi, mean, eff, _) = draws(false);
    assert!(lo >= 0.5 && hi <= 2.0, "damping {lo}..{hi}");
    assert!((mean - 1.25).abs() < 0.03 && (eff - 0.95).abs() < 0.005, "{mean} {eff}");
}

/// `--selection-commands mirrored`: the omnidirectional eval commands and their mirror images
/// (y and turn negated) are the walking task's ten commands, as `gait check` runs them, the
/// eval commands first and in their order; no image is a negative zero (it would print as
/// `-0`). `eval`: the eval commands alone. The forward-only commands are their own images.
#[test]
fn the_mirrored_selection_runs_the_walking_tasks_ten_commands() {
    use crate::algos::tracking::selection_commands;
    use crate::config::SelectionCommands;
    let omni =
        CassieEnv::new(CassieConfig { commands: CommandKind::OmniWalk, ..Default::default() });
    let eval = omni.eval_commands();
    let mirrored = selection_commands(&omni, SelectionCommands::Mirrored).unwrap();
    assert_eq!((eval.len(), mirrored.len()), (7, 10));
    assert_eq!(&mirrored[..7], eval);
    let key = |c: &[f32; 3]| c.map(f32::to_bits);
    let mut task: Vec<_> = crate::check::TASK_COMMANDS.iter().map(key).collect();
    let mut seen: Vec<_> = mirrored.iter().map(key).collect();
    task.sort_unstable();
    seen.sort_unstable();
    assert_eq!(seen, task, "bit for bit: no -0.0");
    assert_eq!(omni.mirror_command([0.6, 0.0, 0.3]), Some([0.6, 0.0, -0.3]));
    assert_eq!(selection_commands(&omni, SelectionCommands::Eval).unwrap(), eval);
    let forward = env();
    assert_eq!(forward.config.commands, CommandKind::Forward);
    let images = selection_commands(&forward, SelectionCommands::Mirrored).unwrap();
    assert_eq!(images, forward.eval_commands());
}

/// The evaluation's foot metrics (`measure_feet`), on both backends, with zero residual for
/// half a second from reset (the robot settles from the reset pose onto its feet): on ice
/// (`friction` 0.05) the loaded feet slide several times faster than on the nominal ground
/// (1); the walking reference lifts a swing foot; the first step has no slide (no
/// loaded position before it); training steps measure nothing.
#[test]
fn foot_metrics_tell_a_lifted_foot_from_a_dragged_one() {
    let names = env().metrics().iter().map(|m| m.0).collect::<Vec<_>>();
    assert_eq!((names[FOOT_SLIDE], names[FOOT_LIFT]), ("foot_slide", "foot_lift"));
    for sim in [SimKind::Rapier, SimKind::Mujoco] {
        // (mean slide, max lift) over 25 steps, and the first step's slide.
        // The floor through the setting (`gait eval --friction`), as a user sets it.
        let run = |command: [f32; 3], friction: f64, training: Option<u64>| {
            let mut e = CassieEnv::new(CassieConfig {
                sim: Models::one(sim),
                friction,
                ..CassieConfig::default()
            });
            e.set_command(&command).unwrap();
            e.set_training(training);
            e.seed(5);
            e.reset_with_heading(0.0);
            assert_eq!(e.dynamics.friction, friction as f32);
            let (mut slide, mut lift, mut first) = (0.0f32, 0.0f32, None);
            for _ in 0..25 {
                e.step(&[0.0; N]);
                first.get_or_insert(e.metrics[FOOT_SLIDE].1);
                slide += e.metrics[FOOT_SLIDE].1 / 25.0;
                lift = lift.max(e.metrics[FOOT_LIFT].1);
            }
            (slide, lift, first.unwrap())
        };
        let ground = run([0.0; 3], 1.0, None);
        let ice = run([0.0; 3], 0.05, None);
        let walking = run([1.0, 0.0, 0.0], 1.0, None);
        println!("{sim:?}: ground {ground:?}, ice {ice:?}, walking {walking:?}");
        assert!(ice.0 > 3.0 * ground.0, "{sim:?} feet slide on ice: {ice:?} vs {ground:?}");
        assert!(ground.1 < 0.005, "{sim:?} a standing robot keeps its feet down: {ground:?}");
        assert!(walking.1 > 0.03, "{sim:?} the walking reference lifts a foot: {walking:?}");
        assert_eq!((ground.2, ice.2, walking.2), (0.0, 0.0, 0.0), "{sim:?} nothing before");
        assert_eq!(run([1.0, 0.0, 0.0], 1.0, Some(0)), (0.0, 0.0, 0.0), "{sim:?} training");
        // With the reward's `slide` term (`--slide-penalty`) training measures them too, and
        // the term reads the slide: on ice it pays less than on the ground.
        let slide_term = |friction: f64| {
            let config = CassieConfig {
                sim: Models::one(sim),
                slide_penalty: 0.1,
                friction,
                ..CassieConfig::default()
            };
            let mut e = CassieEnv::new(config);
            e.set_command(&[0.0; 3]).unwrap();
            e.set_training(Some(0));
            e.seed(5);
            e.reset_with_heading(0.0);
            let mut paid = 0.0;
            for _ in 0..25 {
                e.step(&[0.0; N]);
                paid += e.terms.iter().find(|t| t.0 == "slide").expect("the term").1;
            }
            paid
        };
        let (ground, ice) = (slide_term(1.0), slide_term(0.05));
        assert!(ice < 0.5 * ground, "{sim:?} slide term: ice {ice}, ground {ground}");
    }
}

/// `friction` scales the floor of every episode: evaluations run it as set, and training's
/// randomized draws (±20 % at full strength) are centred on it, with the same random draws as
/// on the nominal floor, so only the floor moves.
#[test]
fn the_friction_setting_centres_the_drawn_floor() {
    let draws = |friction: f64, training: Option<u64>| {
        let config = CassieConfig {
            friction,
            dynamics_randomization: true,
            robust_start: 0,
            ..CassieConfig::default()
        };
        let mut e = CassieEnv::new(config);
        e.set_training(training);
        e.seed(9);
        (0..20)
            .map(|_| {
                e.reset();
                e.dynamics.clone()
            })
            .collect::<Vec<_>>()
    };
    for d in draws(0.3, None) {
        assert_eq!(d, Dynamics { friction: 0.3, ..Dynamics::default() });
    }
    let full = Some(u64::MAX / 2);
    let (nominal, slippery) = (draws(1.0, full), draws(0.3, full));
    for (n, s) in nominal.iter().zip(&slippery) {
        assert!((0.8..=1.2).contains(&n.friction), "{n:?}");
        assert!((s.friction - 0.3 * n.friction).abs() < 1e-6, "{} vs {}", s.friction, n.friction);
        assert_eq!(
            Dynamics { friction: 0.0, ..s.clone() },
            Dynamics { friction: 0.0, ..n.clone() }
        );
    }
    assert!(nominal.iter().any(|d| d.friction != 1.0), "randomized");
}

/// `--terrain`: an episode's ground is drawn from the env's seed, so the same seed meets the
/// same ground on either model; a new episode draws another; the flat floor draws none. The
/// pelvis's height (metric, fall bound) is above the ground under it.
#[test]
fn a_terrain_episode_meets_the_same_ground_on_either_model() {
    use crate::envs::terrain::TerrainKind;
    let ground = |sim, kind| {
        let config = CassieConfig {
            sim: Models::one(sim),
            terrain: kind,
            terrain_difficulty: 0.7,
            ..CassieConfig::default()
        };
        let mut env = CassieEnv::new(config);
        env.seed(4);
        env.reset();
        let first = env.terrain.clone();
        env.reset();
        let height = env.pelvis_height();
        (first, env.terrain.clone(), height)
    };
    let (rapier, rapier_next, height) = ground(SimKind::Rapier, TerrainKind::Stairs);
    let (mujoco, _, _) = ground(SimKind::Mujoco, TerrainKind::Stairs);
    let (rapier, mujoco) = (rapier.unwrap(), mujoco.unwrap());
    assert_eq!(*rapier, *mujoco, "the same seed, the same ground");
    assert_ne!(*rapier, *rapier_next.unwrap(), "each episode draws its own");
    assert!((height - 1.01).abs() < 1e-3, "reset pose above the flat start: {height}");
    assert!(ground(SimKind::Rapier, TerrainKind::Flat).0.is_none());
}

/// Training's terrain follows its stage: the flat floor before `terrain_start`, then each
/// episode a difficulty drawn up to the setting's times the stage's strength; `mix` draws
/// every kind, the flat floor among them; an evaluation runs the setting's difficulty.
#[test]
fn training_terrain_follows_its_stage_and_mix_draws_every_kind() {
    use crate::envs::terrain::TerrainKind;
    let config = CassieConfig {
        terrain: TerrainKind::Mix,
        terrain_difficulty: 0.8,
        terrain_start: 1000,
        terrain_ramp: 1000,
        ..CassieConfig::default()
    };
    let mut env = CassieEnv::new(config);
    env.seed(9);
    env.set_training(Some(999));
    for _ in 0..5 {
        env.reset();
        assert!(env.terrain.is_none(), "flat before the stage");
    }
    // Half way up the ramp: risers of at most 5 + 15 × 0.4 cm.
    env.set_training(Some(1500));
    let mut kinds = 0;
    for _ in 0..40 {
        env.reset();
        if let Some(field) = &env.terrain {
            kinds += 1;
            let [lo, hi] = field.range();
            assert!(hi - lo < 17.0 * 0.11 + 1e-3 && hi <= 17.0 * 0.11 + 1e-3, "{lo} {hi}");
        }
    }
    assert!((20..40).contains(&kinds), "mix draws the flat floor too: {kinds} of 40 not flat");
    env.set_training(None);
    env.reset();
}

/// `text` as a run's models (`--sim`).
fn models(text: &str) -> Models {
    text.parse().expect("models")
}

/// `terrain_forward`: at share 1 every training episode on stairs walks forward into them at
/// 0.3-0.8 m/s, the command held past the redraws; on rough ground (not laid along the heading)
/// and in evaluations the commands are the run's, in every direction.
#[test]
fn terrain_forward_walks_training_episodes_into_the_stairs() {
    use crate::envs::terrain::TerrainKind;
    let config = |terrain| CassieConfig {
        terrain,
        terrain_forward: 1.0,
        commands: CommandKind::Omni,
        ..CassieConfig::default()
    };
    let mut env = CassieEnv::new(config(TerrainKind::Stairs));
    env.seed(4);
    env.set_training(Some(0));
    for _ in 0..10 {
        env.reset();
        let c = env.command;
        assert!((0.3..=0.8).contains(&c.x) && c.y == 0.0 && c.turn == 0.0, "{c:?}");
        env.new_command();
        assert_eq!(env.command, c, "held past a redraw");
    }
    let sideways = |env: &mut CassieEnv| {
        (0..20).any(|_| {
            env.reset();
            env.command.y != 0.0 || env.command.turn != 0.0
        })
    };
    env.set_training(None);
    assert!(sideways(&mut env), "evaluations keep their commands");
    let mut rough = CassieEnv::new(config(TerrainKind::Rough));
    rough.seed(4);
    rough.set_training(Some(0));
    assert!(sideways(&mut rough), "rough ground keeps the run's commands");
}

/// `terrain_forward_max` raises the top of the held speeds, and needs `terrain_forward`.
#[test]
fn terrain_forward_max_sets_the_top_of_the_held_speeds() {
    use crate::envs::terrain::TerrainKind;
    let config = CassieConfig {
        terrain: TerrainKind::Stairs,
        terrain_forward: 1.0,
        terrain_forward_max: 1.2,
        ..CassieConfig::default()
    };
    config.check().expect("a valid pair");
    let mut env = CassieEnv::new(config.clone());
    env.seed(4);
    env.set_training(Some(0));
    let speeds: Vec<f64> = (0..40)
        .map(|_| {
            env.reset();
            env.command.x
        })
        .collect();
    assert!(speeds.iter().all(|x| (0.3..=1.2).contains(x)), "{speeds:?}");
    assert!(speeds.iter().any(|&x| x > 0.8), "above the old top: {speeds:?}");
    let alone = CassieConfig { terrain_forward: 0.0, ..config };
    let err = alone.check().expect_err("the top without the share");
    assert!(err.contains("--terrain-forward"), "{err}");
}

/// `clearance` reaches the walking reward: the same walking steps on the same seed earn the
/// same everywhere but in the `clearance` terms, which pay less for a higher target.
#[test]
fn the_clearance_setting_sets_the_swing_foot_target() {
    let run = |clearance: f64| {
        let config = CassieConfig { clearance, ..CassieConfig::default() };
        let mut e = CassieEnv::new(config);
        e.set_command(&[0.5, 0.0, 0.0]).unwrap();
        e.seed(3);
        e.reset_with_heading(0.0);
        let (mut clear, mut other) = (0.0, 0.0);
        for _ in 0..50 {
            e.step(&[0.0; N]);
            for (name, value) in &e.terms {
                if name.ends_with("_clearance") {
                    clear += value;
                } else {
                    other += value;
                }
            }
        }
        (clear, other)
    };
    let (low, high) = (run(0.1), run(0.3));
    assert_eq!(low.1, high.1, "only the clearance terms change");
    assert!(high.0 < 0.95 * low.0, "a 30 cm target pays less than 10 cm: {high:?} vs {low:?}");
}
