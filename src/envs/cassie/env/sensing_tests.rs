//! Tests of the sensing a robot has: observation latency, sensor noise outside training and
//! the IMU bias.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::envs::cassie::layout::{HISTORY_FRAME, ROBOT_STATE};
use crate::envs::cassie::Models;

/// `steps` policy steps of one seeded evaluation episode at a forward command, with seeded
/// random actions: each step's observation and reward.
fn run(config: &CassieConfig, steps: usize) -> Vec<(Vec<f32>, f32)> {
    let mut e = CassieEnv::new(config.clone());
    e.set_command(&[0.5, 0.0, 0.0]).unwrap();
    e.seed(7);
    let first = e.reset_with_heading(0.3).to_vec();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut out = vec![(first, 0.0)];
    for _ in 0..steps {
        let act: Vec<f32> = (0..N).map(|_| rng.gen_range(-0.3..0.3)).collect();
        let s = e.step(&act);
        out.push((s.obs.to_vec(), s.reward));
    }
    out
}

/// A whole policy step of latency (20 ms at 50 Hz) observes the robot state of the step
/// before, exactly; half a step observes neither; and the robot does what it did without
/// latency (the split step is the same physics: the rewards, which read the true state, are
/// bit-identical), on both backends.
#[test]
fn latency_observes_the_robot_as_it_was_and_changes_no_physics() {
    for sim in [SimKind::Rapier, SimKind::Mujoco] {
        let exact = CassieConfig { sim: Models::one(sim), ..CassieConfig::default() };
        let step = 1.0 / exact.policy_rate;
        let clean = run(&exact, 30);
        let whole = run(&CassieConfig { eval_latency: step, ..exact.clone() }, 30);
        let half = run(&CassieConfig { eval_latency: step / 2.0, ..exact.clone() }, 30);
        for k in 1..=30 {
            assert_eq!(whole[k].1.to_bits(), clean[k].1.to_bits(), "{sim:?} reward at {k}");
            assert_eq!(half[k].1.to_bits(), clean[k].1.to_bits(), "{sim:?} reward at {k}");
            // The sensed part (robot state, observed velocity) lags; the task part does not.
            let n = clean[k].0.len();
            let sensed = |v: &[f32]| [&v[..ROBOT_STATE], &v[n - 3..]].concat();
            assert_eq!(sensed(&whole[k].0), sensed(&clean[k - 1].0), "{sim:?} {k}");
            assert_eq!(whole[k].0[ROBOT_STATE..n - 3], clean[k].0[ROBOT_STATE..n - 3], "{k}");
            let differs = |a: &[f32], b: &[f32]| a.iter().zip(b).any(|(x, y)| x != y);
            assert!(differs(&half[k].0[7..17], &clean[k].0[7..17]), "{sim:?} {k}");
            assert!(differs(&half[k].0[7..17], &clean[k - 1].0[7..17]), "{sim:?} {k}");
        }
    }
}

/// Training episodes draw their latency up to `latency`, scaled by the perturbations'
/// strength; other episodes run at `eval_latency` exactly; a latency above one policy step is
/// refused by the settings check.
#[test]
fn training_draws_the_latency_and_evaluations_take_theirs() {
    let config = CassieConfig { latency: 0.02, eval_latency: 0.005, ..CassieConfig::default() };
    let mut e = CassieEnv::new(config.clone());
    e.seed(1);
    e.set_training(Some(0));
    let drawn: Vec<f64> = (0..200)
        .map(|_| {
            e.reset();
            e.sensing.latency
        })
        .collect();
    assert!(drawn.iter().all(|l| (0.0..=0.02).contains(l)), "{drawn:?}");
    let mean = drawn.iter().sum::<f64>() / drawn.len() as f64;
    assert!((0.008..0.012).contains(&mean), "U(0, 20 ms) mean {mean}");
    e.set_training(None);
    e.reset();
    assert_eq!(e.sensing.latency, 0.005);
    // Before the perturbations begin, none.
    let late = CassieConfig { robust_start: 1000, ..config.clone() };
    let mut e = CassieEnv::new(late);
    e.set_training(Some(0));
    e.reset();
    assert_eq!(e.sensing.latency, 0.0);
    let long = CassieConfig { latency: 0.021, ..CassieConfig::default() };
    let err = long.check().unwrap_err();
    assert!(err.contains("--latency 0.021 is longer than one policy step"), "{err}");
}

/// The IMU bias is a constant of the episode within its range, drawn again at each reset,
/// scaled by `obs_noise` in training and by `eval_noise` elsewhere (none without either), and
/// it turns the observed orientation and offsets the observed angular velocity.
#[test]
fn the_imu_bias_is_an_episode_constant_of_its_size() {
    let bias = CassieConfig { imu_bias: 0.05, obs_noise: 1.0, ..CassieConfig::default() };
    let mut e = CassieEnv::new(bias.clone());
    e.seed(2);
    e.set_training(Some(0));
    let mut seen = Vec::new();
    for _ in 0..20 {
        e.reset();
        let s = e.sensing;
        assert!(s.tilt.iter().chain(&s.gyro).all(|b| b.abs() <= 0.05), "{s:?}");
        for _ in 0..5 {
            e.step(&[0.0; N]);
            assert_eq!(e.sensing, s, "constant over the episode");
        }
        seen.push(s.gyro[0]);
    }
    seen.dedup();
    assert_eq!(seen.len(), 20, "drawn again at each reset");
    // Outside training: none unless `eval_noise` asks; then at `imu_bias × eval_noise`.
    e.set_training(None);
    e.reset();
    assert_eq!(e.sensing, Sensing::default());
    let mut e = CassieEnv::new(CassieConfig { eval_noise: 2.0, ..bias.clone() });
    e.seed(2);
    let max = (0..50)
        .map(|_| {
            e.reset();
            e.sensing.gyro.iter().fold(0f32, |m, b| m.max(b.abs()))
        })
        .fold(0f32, f32::max);
    assert!((0.08..=0.1).contains(&max), "bias up to 0.1: {max}");
    // The gyro bias is what the observed angular velocity is offset by: a clean env and one
    // given a bias, from the same state.
    let mut a = CassieEnv::new(CassieConfig::default());
    let mut b = CassieEnv::new(CassieConfig::default());
    for env in [&mut a, &mut b] {
        env.set_command(&[0.0, 0.0, 0.0]).unwrap();
        env.seed(4);
    }
    let clean = a.reset_with_heading(0.0).to_vec();
    b.reset_with_heading(0.0);
    b.sensing = Sensing { latency: 0.0, tilt: [0.0; 2], gyro: [0.01, -0.02, 0.03] };
    b.write_obs();
    let seen = b.obs.clone();
    for (i, g) in [0.01, -0.02, 0.03].into_iter().enumerate() {
        assert!((seen[4 + i] - clean[4 + i] - g).abs() < 1e-6, "gyro {i}");
    }
}

/// `eval_noise` adds the reference's noise levels outside training, whatever the run trained
/// with: about σ = 0.01 rad on the motor angles at 1.
#[test]
fn eval_noise_is_the_reference_noise_outside_training() {
    let exact = run(&CassieConfig::default(), 40);
    let noisy =
        run(&CassieConfig { eval_noise: 1.0, orientation_noise: 0.0, ..Default::default() }, 40);
    let d: Vec<f32> =
        noisy.iter().zip(&exact).flat_map(|(a, b)| (7..17).map(move |i| a.0[i] - b.0[i])).collect();
    let sd = (d.iter().map(|x| x * x).sum::<f32>() / d.len() as f32).sqrt();
    assert!((0.008..0.012).contains(&sd), "motor angle noise σ {sd}");
    let q: Vec<f32> = noisy.iter().zip(&exact).map(|(a, b)| a.0[1] - b.0[1]).collect();
    assert!(q.iter().any(|x| x.abs() > 1e-3), "the reference's orientation noise, not the run's 0");
}

/// `--history 2` appends the last two steps, newest first: after a reset both frames hold the
/// first observed robot state and no action; after each step the newest frame holds the robot
/// state the policy was shown and the action it answered with, and the older frame the one
/// before. The current part of the observation is the run without history's, value for value,
/// and so are the rewards: the history observes, it changes nothing.
#[test]
fn the_history_holds_the_last_steps_observations_and_actions_newest_first() {
    let plain = CassieConfig { obs: ObsKind::Reference, ..CassieConfig::default() };
    let config = CassieConfig { history: 2, ..plain.clone() };
    let (with, without) = (run(&config, 6), run(&plain, 6));
    let at = without[0].0.len();
    assert_eq!(with[0].0.len(), at + 2 * HISTORY_FRAME);
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let actions: Vec<Vec<f32>> =
        (0..6).map(|_| (0..N).map(|_| rng.gen_range(-0.3..0.3)).collect()).collect();
    for (t, ((obs, reward), (plain_obs, plain_reward))) in with.iter().zip(&without).enumerate() {
        assert_eq!(&obs[..at], &plain_obs[..], "step {t}: the current part");
        assert_eq!(reward, plain_reward, "step {t}: the reward");
        for (k, frame) in obs[at..].chunks(HISTORY_FRAME).enumerate() {
            // The frame k + 1 steps ago: its state and the action taken from it.
            let (state, action) = match t.checked_sub(k + 1) {
                Some(past) => (&without[past].0[..ROBOT_STATE], actions[past].as_slice()),
                None => (&without[0].0[..ROBOT_STATE], &[0.0; N][..]),
            };
            assert_eq!(&frame[..ROBOT_STATE], state, "step {t} frame {k}: the state");
            assert_eq!(&frame[ROBOT_STATE..], action, "step {t} frame {k}: the action");
        }
    }
}

/// `--height-scan` appends the pelvis's height above the ground at the scan's points: the
/// observation before it and the rewards are the run's without it, value for value; on the
/// flat floor every point reads the pelvis height; over a step up ahead along the episode's
/// heading, the rows beyond it read less by the riser. With the sensor noise the values differ
/// from the exact ones by the scan's few centimetres.
#[test]
fn the_height_scan_reads_the_ground_and_changes_nothing_else() {
    use crate::envs::cassie::height_scan::{self, FORWARD, LATERAL, NOISE_STD};
    use crate::envs::terrain::Heightfield;
    use std::sync::Arc;
    let plain = CassieConfig { obs: ObsKind::Reference, history: 1, ..CassieConfig::default() };
    let config = CassieConfig { height_scan: true, ..plain.clone() };
    let (with, without) = (run(&config, 6), run(&plain, 6));
    let at = without[0].0.len();
    for (t, ((obs, reward), (plain_obs, plain_reward))) in with.iter().zip(&without).enumerate() {
        assert_eq!(obs.len(), at + height_scan::LEN);
        assert_eq!(&obs[..at], &plain_obs[..], "step {t}: the rest of the observation");
        assert_eq!(reward, plain_reward, "step {t}: the reward");
    }
    let mut e = CassieEnv::new(config.clone());
    e.seed(7);
    e.reset_with_heading(0.3);
    let z = e.sim().base_position().z;
    assert!(e.obs[at..].iter().all(|&v| (v - z).abs() < 1e-5), "{:?} vs {z}", &e.obs[at..]);
    // A step up of 0.15 m from 0.45 m ahead along the episode's heading, read by the scan
    // (the physics keeps its floor; only the observation is checked).
    let (s, c) = 0.3f32.sin_cos();
    let mut field = Heightfield::flat(0.04, 101, 101);
    field.fill(|x, y| if c * x + s * y >= 0.45 { 0.15 } else { 0.0 });
    let step = |env: &mut CassieEnv| {
        env.terrain = Some(Arc::new(field.clone()));
        env.write_obs();
        env.obs[at..].to_vec()
    };
    // The rows clear of the edge by more than a cell's interpolation (the pelvis stands within
    // a few centimetres of the origin).
    let expected = |env: &CassieEnv| -> Vec<Option<f32>> {
        let z = env.sim().base_position().z;
        let rows = FORWARD.iter().map(|&f| match f {
            f if f <= 0.3 => Some(z),
            f if f >= 0.6 => Some(z - 0.15),
            _ => None,
        });
        rows.flat_map(|v| [v; LATERAL.len()]).collect()
    };
    let scan = step(&mut e);
    for (k, (v, want)) in scan.iter().zip(expected(&e)).enumerate() {
        assert!(want.is_none_or(|w| (v - w).abs() < 1e-5), "point {k}: {v} vs {want:?}");
    }
    let mut n = CassieEnv::new(CassieConfig { eval_noise: 1.0, ..config });
    n.seed(7);
    n.reset_with_heading(0.3);
    let scan = step(&mut n);
    let errors: Vec<f32> =
        scan.iter().zip(expected(&n)).filter_map(|(v, want)| Some(v - want?)).collect();
    let rms = (errors.iter().map(|e| e * e).sum::<f32>() / errors.len() as f32).sqrt();
    assert!(rms > 0.5 * NOISE_STD && rms < 2.0 * NOISE_STD, "noise rms {rms}");
}

/// `--obs estimate` observes the leg-odometry estimate, not the simulator's velocity: over a
/// robot's first second on the reference gait (it falls after about 50 steps without a policy)
/// the estimate follows the true velocity in the same frame (mean error measured 0.014 m/s
/// without a filter) but differs from it step by step, and lags more with a slower filter.
#[test]
fn the_velocity_estimate_follows_the_robot_with_a_real_estimators_errors() {
    let walk = |obs: ObsKind, lag: f64| {
        let config = CassieConfig {
            obs,
            velocity_lag: lag,
            reference: crate::envs::cassie::ReferenceKind::Omni,
            ..CassieConfig::default()
        };
        let mut e = CassieEnv::new(config);
        e.set_command(&[0.6, 0.0, 0.0]).unwrap();
        e.seed(3);
        e.reset_with_heading(0.0);
        let at = e.velocity_at();
        (0..45).map(|_| e.step(&[0.0; N]).obs[at]).collect::<Vec<f32>>()
    };
    let truth = walk(ObsKind::Velocity, 0.0);
    let error = |lag: f64| {
        let est = walk(ObsKind::Estimate, lag);
        est.iter().zip(&truth).map(|(e, t)| (e - t).abs()).sum::<f32>() / truth.len() as f32
    };
    let (fast, slow) = (error(0.0), error(0.2));
    eprintln!("mean |estimate - truth|: {fast:.3} m/s without a filter, {slow:.3} at 0.2 s");
    assert!(truth.iter().any(|&v| v > 0.5), "the robot moves: {truth:?}");
    assert!(fast > 1e-4 && fast < 0.08, "an estimate that follows: {fast}");
    assert!(slow > 2.0 * fast, "a slower filter lags more: {slow} vs {fast}");
}
