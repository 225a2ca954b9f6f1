use super::*;
use crate::envs::cassie::robot::description::Description;

fn tilt_deg(q: Quat) -> f32 {
    let up = q * Vec3::Z;
    up.z.clamp(-1.0, 1.0).acos().to_degrees()
}

/// The facts sheet's constant-PD standing test on the lab's model: targets = the neutral
/// stance, the lab's gains, 2 kHz. MuJoCo's Cassie sags and tips: pelvis 0.902 / 0.795 /
/// 0.755 m at 0.2 / 0.4 / 0.6 s. Matching those within 5 mm pins this backend as the lab's
/// model with gait's PD (torque, delay, limit, implicit kd) applied as the lab applies it.
#[test]
fn constant_pd_fall_curve_reproduces_the_labs_figures() {
    let desc = Description::cassie();
    let mut sim = MujocoCassie::new(0.0005);
    let targets = desc.neutral_stance();
    let mut z = Vec::new();
    for _ in 0..3 {
        sim.step(&targets, 400);
        z.push(sim.base_position().z);
    }
    println!(
        "MuJoCo fall curve: z at 0.2/0.4/0.6 s {z:.4?}, tilt {:.1} deg",
        tilt_deg(sim.base_rotation())
    );
    for (got, want) in z.iter().zip([0.902, 0.795, 0.755]) {
        assert!((got - want).abs() < 0.005, "z {z:?} against the lab's 0.902 / 0.795 / 0.755");
    }
}

/// The lab's model at 2 ms after one nominal step of the neutral stance (checked to be no
/// blow-up, [`Physics::blew_up`], MuJoCo's resets included), then one more step under a
/// pelvis force of `force` N along x; with the targets it held.
fn pushed_after_a_nominal_step(force: f64) -> (MujocoCassie, [f32; N]) {
    let targets = Description::cassie().neutral_stance();
    let mut sim = MujocoCassie::new(0.002);
    sim.reset(&Dynamics::default(), 0.0);
    sim.step(&targets, 10);
    assert!(!sim.blew_up(), "a nominal step");
    sim.set_push(Vec3::new(force as f32, 0.0, 0.0));
    sim.step(&targets, 10);
    (sim, targets)
}

/// A force MuJoCo cannot integrate (pelvis acceleration beyond its 1e10 bound) makes it reset
/// the model to `qpos0` mid-step: the step reports it, stops stepping, and a reset clears it.
#[test]
fn a_state_mujoco_resets_is_reported_until_the_next_reset() {
    let (mut sim, targets) = pushed_after_a_nominal_step(1e12);
    assert!(sim.diverged(), "MuJoCo reset a non-finite acceleration");
    assert_eq!(sim.substeps, 11, "no substep after the reset");
    sim.reset(&Dynamics::default(), 0.0);
    assert!(!sim.diverged());
    sim.step(&targets, 10);
    assert!(!sim.diverged(), "the push is gone with the reset");
}

/// A push MuJoCo integrates without complaint (a 100 kN force: 3e3 m/s² on the 33 kg robot,
/// far below its 1e10 bound) throws the pelvis to tens of m/s in 20 ms, and no bad-state
/// counter moves: the plausibility bound reports that state as blown up, and a reset clears it.
#[test]
fn a_state_mujoco_keeps_but_no_robot_reaches_is_blown_up() {
    let (mut sim, targets) = pushed_after_a_nominal_step(1e5);
    let speed = sim.base_linvel().length();
    assert!(!sim.diverged(), "MuJoCo kept the state ({speed} m/s)");
    assert!(speed > 40.0, "the push threw the pelvis: {speed} m/s");
    assert!(sim.blew_up(), "{speed} m/s is no robot's");
    sim.reset(&Dynamics::default(), 0.0);
    sim.step(&targets, 10);
    assert!(!sim.blew_up(), "the reset cleared it");
}
