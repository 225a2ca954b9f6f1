use super::*;

fn tilt_deg(q: Quat) -> f32 {
    let up = q * Vec3::Z;
    up.z.clamp(-1.0, 1.0).acos().to_degrees()
}

/// Constant PD at the neutral stance (the facts sheet's standing test). MuJoCo's Cassie
/// sags and tips over: z 0.902 / 0.755 / 0.530 m at 0.2 / 0.6 / 1.0 s, lying at 0.167 m
/// from 1.4 s. This model (measured 0.918 / 0.820 / 0.668, lying at 0.167) matches the
/// first figure and the final pose; in between it sags less and tips about 0.1 s later,
/// because its shin and heel springs are rigid (the facts sheet's rigid prototype did the
/// same: 0.932 at 0.25 s, 0.671 at 1.0 s). The bounds below pin those numbers, at the
/// lab's 2 kHz and at the walking preset's 500 Hz (measured 0.917 / 0.818 / 0.661, lying
/// at 0.167: within 1 cm of 2 kHz at every 0.2 s sample).
#[test]
fn constant_pd_stance_sags_and_tips_over_like_mujoco() {
    let desc = Description::cassie();
    let mut curves = Vec::new();
    for dt in [0.0005f32, 0.002] {
        let mut sim = CassieSim::new(&desc, &Dynamics::default(), dt, 0.0);
        let targets = desc.neutral_stance();
        let mut z = Vec::new();
        for _ in 0..10 {
            sim.step(&targets, (0.2 / dt).round() as usize);
            z.push(sim.base_position().z);
        }
        let tilt = tilt_deg(sim.base_rotation());
        println!("dt {dt}: z at 0.2 s steps: {z:.3?}, tilt at 2 s {tilt:.0} deg");
        assert!((z[0] - 0.902).abs() < 0.06, "dt {dt}: z(0.2 s) = {}", z[0]);
        assert!((z[2] - 0.755).abs() < 0.1, "dt {dt}: z(0.6 s) = {}", z[2]);
        assert!((z[4] - 0.530).abs() < 0.16, "dt {dt}: z(1.0 s) = {}", z[4]);
        assert!((z[9] - 0.167).abs() < 0.02, "dt {dt}: z(2.0 s) = {}", z[9]);
        assert!(tilt > 60.0, "dt {dt}: lying down at 2 s: tilt {tilt}");
        curves.push(z);
    }
    for (a, b) in curves[0].iter().zip(&curves[1]) {
        assert!((a - b).abs() < 0.03, "500 Hz vs 2 kHz fall curves: {curves:.3?}");
    }
}

/// Random targets around the stance, as `gait bench env` drives the robot.
fn random_targets(desc: &Description, rng: &mut impl rand::Rng) -> [f32; N] {
    let mut t = desc.neutral_stance();
    t.iter_mut().for_each(|x| *x += rng.gen_range(-1.0..1.0));
    t
}

/// The largest `|a - b|` over two equally long sequences.
fn max_abs_diff<'a>(
    a: impl IntoIterator<Item = &'a f32>,
    b: impl IntoIterator<Item = &'a f32>,
) -> f32 {
    a.into_iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// The vendored rapier's patched multibody (vendor/rapier3d/GAIT_PATCH.md) against
/// rapier's original dense code, on the states of a random-target run at both physics
/// rates (falls and ground contacts included):
/// - the body Jacobians (built on ancestor columns only) are bit-identical;
/// - the composite-rigid-body mass matrix equals the sum of dense quadforms to f32
///   rounding, entry by entry relative to its diagonal;
/// - the gyroscopic + Coriolis part (`acc − plain`, built by composites too) equals the
///   dense one. It is `∝ dt`, so it is compared at `dt = 1 s`, where it is of the order of
///   the inertia itself, and not lost in the rounding of the sum.
#[test]
fn the_patched_mass_matrices_match_the_dense_ones_on_random_states() {
    use rand::SeedableRng;
    let desc = Description::cassie();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let (mut checked, mut worst_m, mut worst_c) = (0, 0.0f32, 0.0f32);
    for dt in [0.0005f32, 0.002] {
        let mut sim = CassieSim::new(&desc, &Dynamics::default(), dt, 0.3);
        for step in 0..150 {
            sim.step(&random_targets(&desc, &mut rng), (0.02 / dt).round() as usize);
            if step % 5 != 0 {
                continue;
            }
            let mb = sim.multibody();
            let jacobians = [false, true].map(|dense| mb.body_jacobians_by(dense));
            assert!(jacobians[0] == jacobians[1], "dt {dt}, step {step}: Jacobians differ");
            let [sparse, dense] =
                [false, true].map(|dense| mb.mass_matrices(dt, &sim.world.bodies, dense));
            let n = dense.0.nrows();
            for r in 0..n {
                for c in 0..n {
                    let scale = (dense.0[(r, r)] * dense.0[(c, c)]).sqrt();
                    let err = (sparse.0[(r, c)] - dense.0[(r, c)]).abs() / scale;
                    let acc_err = (sparse.1[(r, c)] - dense.1[(r, c)]).abs() / scale;
                    worst_m = worst_m.max(err).max(acc_err);
                }
            }
            let [sparse, dense] =
                [false, true].map(|dense| mb.mass_matrices(1.0, &sim.world.bodies, dense));
            let (cs, cd) = (&sparse.1 - &sparse.0, &dense.1 - &dense.0);
            let err = (&cs - &cd).amax() / cd.amax();
            assert!(cd.amax() > 0.1 * dense.0.amax(), "a real Coriolis term");
            worst_c = worst_c.max(err);
            checked += 1;
        }
    }
    println!("worst relative error: mass matrices {worst_m:e}, Coriolis part {worst_c:e}");
    assert!(worst_m < 1e-5, "mass matrices: {worst_m:e}");
    assert!(worst_c < 1e-4, "gyroscopic and Coriolis part: {worst_c:e}");
    assert_eq!(checked, 60);
}

/// The vendored rapier skips the start-of-step forward kinematics when nothing it reads changed
/// since the solver's own at the end of the previous step. Running it afresh before every
/// substep instead gives bit-identical states: random targets for 6 s at both rates, falls
/// and ground impacts included.
#[test]
fn skipping_unchanged_kinematics_changes_nothing() {
    use rand::SeedableRng;
    let desc = Description::cassie();
    for dt in [0.0005f32, 0.002] {
        let substeps = (0.02 / dt).round() as usize;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
        let targets: Vec<[f32; N]> = (0..300).map(|_| random_targets(&desc, &mut rng)).collect();
        let [skipping, fresh] = [false, true].map(|fresh| {
            let mut sim = CassieSim::new(&desc, &Dynamics::default(), dt, 0.2);
            sim.set_fresh_kinematics(fresh);
            let mut states = Vec::new();
            for t in &targets {
                sim.step(t, substeps);
                states.extend(sim.body_states().into_iter().map(f32::to_bits));
            }
            (states, sim.base_position())
        });
        assert!(skipping.0 == fresh.0, "dt {dt}: the skipped kinematics changed the motion");
        assert!(skipping.1.z < 0.5, "dt {dt}: the robot fell, so impacts were part of the run");
    }
}

/// The same random targets run with the patched multibody and with rapier's original
/// code paths (`set_reference_paths`): after one substep the states agree to f32
/// rounding, and after eight policy steps (80 substeps at 500 Hz, 320 at 2 kHz, ground
/// contacts included) they are still within 1e-4.
#[test]
fn a_run_with_the_patched_multibody_matches_the_dense_one() {
    use rand::SeedableRng;
    let desc = Description::cassie();
    for (trial, dt) in [0.0005f32, 0.002, 0.002].into_iter().enumerate() {
        let substeps = (0.02 / dt).round() as usize;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(trial as u64);
        let targets: Vec<[f32; N]> = (0..8).map(|_| random_targets(&desc, &mut rng)).collect();
        let [a, b] = [false, true].map(|dense| {
            let mut sim = CassieSim::new(&desc, &Dynamics::default(), dt, 0.0);
            let id = sim.multibody;
            let (mb, _) = sim.world.multibody_joints.get_mut(id).expect("robot");
            mb.set_reference_paths(dense);
            sim.step(&targets[0], 1);
            let first = sim.body_states();
            sim.step(&targets[0], substeps - 1);
            for t in &targets[1..] {
                sim.step(t, substeps);
            }
            (sim, first)
        });
        let one = max_abs_diff(&a.1, &b.1);
        let end = max_abs_diff(&a.0.body_states(), &b.0.body_states());
        let motors = max_abs_diff(&a.0.true_motor_positions(), &b.0.true_motor_positions());
        println!("trial {trial}, dt {dt}: after one substep {one:e}, after 8 steps {end:e}");
        assert!(one < 1e-6, "trial {trial}, dt {dt}: one substep: {one:e}");
        assert!(end < 1e-4 && motors < 1e-4, "trial {trial}, dt {dt}: {end:e} {motors:e}");
        assert!(a.0.base_position().distance(Vec3::new(0.0, 0.0, 1.0)) > 1e-3, "it moved");
    }
}

#[test]
fn the_torque_delay_is_a_time_at_any_physics_rate() {
    let d = Dynamics::default();
    assert_eq!(d.delay_substeps(0.0005), 6, "the lab's 6 cycles at 2 kHz");
    assert_eq!(d.delay_substeps(0.002), 2, "3 ms at 500 Hz");
    assert_eq!(d.delay_substeps(0.001), 3);
}

#[test]
fn pd_holds_the_stance_of_a_robot_hanging_in_the_air() {
    // No contacts: with the pelvis pinned in the air the PD keeps the legs near their
    // targets, a sign and gain check of the explicit torques.
    let desc = Description::cassie();
    let mut sim = CassieSim::new(&desc, &Dynamics::default(), 0.0005, 0.0);
    let mut targets = desc.neutral_stance();
    targets[3] += 0.3; // left knee
    targets[8] += 0.3; // right knee
    for _ in 0..400 {
        let base = &mut sim.world.bodies[sim.base];
        base.set_linvel(Vec3::ZERO, false);
        base.set_angvel(Vec3::ZERO, false);
        base.set_translation(Vec3::new(0.0, 0.0, 2.0), false);
        sim.step(&targets, 1);
    }
    let q = sim.true_motor_positions();
    for k in 0..N {
        // Gravity on the shank pulls against kp; the error stays below 0.1 rad.
        assert!((q[k] - targets[k]).abs() < 0.1, "joint {k}: {} vs {}", q[k], targets[k]);
    }
}

/// Rapier never resets a state, so a force no robot meets (1 MN on the pelvis for 20 ms)
/// leaves a finite state hundreds of m/s fast: the plausibility bound reports it as blown up
/// ([`Physics::blew_up`]), and a reset clears it.
#[test]
fn a_thrown_pelvis_is_a_blown_up_state() {
    let desc = Description::cassie();
    let targets = desc.neutral_stance();
    let mut sim = CassieSim::new(&desc, &Dynamics::default(), 0.002, 0.0);
    sim.step(&targets, 10);
    assert!(!sim.blew_up(), "a nominal step");
    sim.set_push(Vec3::new(1e6, 0.0, 0.0));
    sim.step(&targets, 10);
    let speed = sim.base_linvel().length();
    assert!(speed.is_finite() && speed > 100.0, "the push threw the pelvis: {speed} m/s");
    assert!(sim.blew_up(), "{speed} m/s is no robot's");
    sim.reset(&Dynamics::default(), 0.0);
    sim.step(&targets, 10);
    assert!(!sim.blew_up(), "the reset cleared it");
}

/// Standing on a heightfield's flat part is standing on the floor: the same pelvis height,
/// and about as many contact points for the solver. Each point costs the multibody solver a
/// solve with its mass matrix; before the patch's coalescing (`GAIT_PATCH.md`, change 10) and
/// with the floor 1 cm under the field, the field gave 31 points a step against the floor's
/// 7.4, and a terrain episode cost about 1.5× what it does now.
#[test]
fn a_heightfield_plane_is_as_few_contacts_as_the_floor() {
    use crate::envs::terrain::{TerrainKind, TerrainSpec};
    let desc = Arc::new(Description::cassie());
    let stand = |kind: TerrainKind| {
        let field = (kind != TerrainKind::Flat)
            .then(|| Arc::new(TerrainSpec { kind, difficulty: 0.5, seed: 3 }.build(0.0)));
        let mut sim = CassieSim::build(desc.clone(), &Dynamics::default(), 0.002, 0.0, field);
        let targets = desc.neutral_stance();
        let mut points = 0;
        for _ in 0..100 {
            sim.step(&targets, 1);
            let pairs = sim.world.narrow_phase.contact_pairs();
            points += pairs
                .flat_map(|p| p.solver_manifolds())
                .map(|m| m.data.solver_contacts.len())
                .sum::<usize>();
        }
        (points as f64 / 100.0, sim.base_position().z)
    };
    let (floor, z_floor) = stand(TerrainKind::Flat);
    // The slope begins 1 m ahead: the robot stands on the field's flat part.
    let (field, z_field) = stand(TerrainKind::Slope);
    println!(
        "points per step: floor {floor:.1}, field {field:.1}; pelvis z {z_floor:.4} / {z_field:.4}"
    );
    assert!(floor >= 4.0, "both feet down: {floor}");
    assert!(field <= 1.5 * floor, "field {field} points a step against the floor's {floor}");
    assert!(
        (z_floor - z_field).abs() < 0.005,
        "pelvis z {z_floor} on the floor, {z_field} on the field"
    );
}
