//! Cassie's critic observation (`--privileged-critic`): what the critic alone reads in
//! training, so that it can tell a push or a heavier robot from a bad action.
//!
//! Layout: the policy's observation without its noise (the same values and order, so the
//! policy's mirror list applies to that part), then [`EXTRAS`] values a robot cannot sense:
//!
//! | at | value |
//! |---|---|
//! | 0 | pelvis height (m) |
//! | 1, 2 | left, right foot height (m) |
//! | 3, 4 | left, right foot contact force / the robot's weight |
//! | 5 | the episode's physics: 1 MuJoCo (the lab's model), 0 rapier |
//! | 6 | contact friction factor |
//! | 7 | mean mass factor |
//! | 8 | mean joint damping factor |
//! | 9 | torque delay (ms) |
//! | 10 | torque efficiency |
//! | 11 | spring stiffness factor |
//! | 12 | seconds since the last push (capped at [`PUSH_MEMORY`]; the cap without one) |
//! | 13, 14 | the last push's speed change (m/s) along the pelvis heading and to its left, 0 after [`PUSH_MEMORY`] |
//!
//! When the policy does not observe the pelvis velocity (`--obs reference`), [`HIDDEN`] more
//! follow: the true pelvis velocity in its heading frame (forward, left, up; m/s) and the
//! episode's sensing latency (ms), what a robot's policy must infer and the critic need not.
//!
//! The randomized parameters are episode constants; per-body and per-joint factors enter as
//! their means, which keeps the layout left/right symmetric (a per-side factor would need the
//! mirror to swap bodies the policy never sees).

use rapier3d::glamx::Vec3;

use super::physics::Physics;
use super::reward;
use crate::envs::cassie::robot::Dynamics;
use crate::envs::mirror::{MirrorError, MirrorIndices};

/// Values after the noise-free policy observation.
pub const EXTRAS: usize = 15;

/// Values after [`EXTRAS`] when the policy does not observe the pelvis velocity.
pub const HIDDEN: usize = 4;

/// Seconds a push is remembered: the time-since-push input saturates there and the push's
/// speed change reads 0 after it (a push's effect on the gait is over within about a stride).
pub const PUSH_MEMORY: f32 = 2.0;

/// The robot's weight (N) the contact forces are divided by.
const WEIGHT: f32 = 33.312 * 9.81;

/// The last push of an episode: when (s after the episode start) and its speed change (m/s,
/// world frame, horizontal).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LastPush {
    pub at: f32,
    pub dv: [f32; 2],
}

/// Writes the [`EXTRAS`] values into `out` at episode time `now` (s).
pub fn write_extras(
    out: &mut [f32],
    sim: &dyn Physics,
    ground: [f32; 3],
    dynamics: &Dynamics,
    push: Option<LastPush>,
    now: f32,
) {
    debug_assert_eq!(out.len(), EXTRAS);
    let sites = [sim.foot_site(0), sim.foot_site(1)];
    let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len() as f32;
    let (since, dv) = match push {
        Some(p) if now - p.at < PUSH_MEMORY => {
            let yaw = reward::yaw(sim.base_rotation());
            (now - p.at, reward::planar_in_heading(Vec3::new(p.dv[0], p.dv[1], 0.0), yaw))
        }
        _ => (PUSH_MEMORY, [0.0; 2]),
    };
    out.copy_from_slice(&[
        sim.base_position().z - ground[0],
        sites[0].0.z - ground[1],
        sites[1].0.z - ground[2],
        sim.foot_force(0).length() / WEIGHT,
        sim.foot_force(1).length() / WEIGHT,
        if super::physics::backend(sim.kind()).springs { 1.0 } else { 0.0 },
        dynamics.friction,
        mean(&dynamics.mass_scale),
        mean(&dynamics.damping_scale),
        dynamics.delay * 1e3,
        dynamics.efficiency,
        dynamics.spring_scale,
        since,
        dv[0],
        dv[1],
    ]);
}

/// Writes the [`HIDDEN`] values into `out`: the true pelvis velocity in its heading frame and
/// the sensing latency `latency` (s) in ms.
pub fn write_hidden(out: &mut [f32], sim: &dyn Physics, latency: f64) {
    debug_assert_eq!(out.len(), HIDDEN);
    out[..3].copy_from_slice(&reward::in_own_heading(sim.base_linvel(), sim.base_rotation()));
    out[3] = (latency * 1e3) as f32;
}

/// The critic observation's mirror list: the policy's (`policy`, `n` values) for the
/// noise-free part, then the extras: the feet and their forces swap, the push's lateral speed
/// change is negated, the rest is kept; with `hidden`, the [`HIDDEN`] values, the lateral
/// velocity negated.
pub fn mirror(policy: &MirrorIndices, hidden: bool) -> Result<MirrorIndices, MirrorError> {
    let n = policy.len();
    let mut list: Vec<f64> = policy
        .source()
        .iter()
        .zip(policy.sign())
        .map(|(&i, &s)| if i == 0 { 0.01 * s as f64 } else { s as f64 * i as f64 })
        .collect();
    let at = |k: usize| (n + k) as f64;
    list.extend([at(0), at(2), at(1), at(4), at(3)]);
    list.extend((5..=13).map(at));
    list.push(-at(14));
    let mut len = n + EXTRAS;
    if hidden {
        let at = |k: usize| (n + EXTRAS + k) as f64;
        list.extend([at(0), -at(1), at(2), at(3)]);
        len += HIDDEN;
    }
    MirrorIndices::with_len(&list, len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envs::cassie::mirror_lists;

    #[test]
    fn the_mirror_keeps_the_policy_part_and_swaps_the_feet() {
        let policy = mirror_lists::observation(false, true, 0, false).unwrap();
        let m = mirror(&policy, false).unwrap();
        let n = policy.len();
        assert_eq!(m.len(), n + EXTRAS);
        let x: Vec<f32> = (0..n + EXTRAS).map(|i| i as f32 + 100.0).collect();
        let (mut a, mut b) = (vec![0.0; n], vec![0.0; n + EXTRAS]);
        policy.apply(&x[..n], &mut a);
        m.apply(&x, &mut b);
        assert_eq!(&b[..n], &a[..], "the noise-free policy part mirrors as the policy's");
        let e = |k: usize| x[n + k];
        assert_eq!(&b[n..n + 5], &[e(0), e(2), e(1), e(4), e(3)], "height kept, feet swapped");
        assert_eq!(&b[n + 5..n + 14], &x[n + 5..n + 14], "model and push timing kept");
        assert_eq!(b[n + 14], -e(14), "the push's lateral speed change negated");
    }

    #[test]
    fn the_hidden_velocity_mirrors_its_lateral_part() {
        let policy = mirror_lists::observation(false, false, 0, false).unwrap();
        let m = mirror(&policy, true).unwrap();
        let n = policy.len() + EXTRAS;
        assert_eq!(m.len(), n + HIDDEN);
        let x: Vec<f32> = (0..n + HIDDEN).map(|i| i as f32 + 100.0).collect();
        let mut b = vec![0.0; n + HIDDEN];
        m.apply(&x, &mut b);
        assert_eq!(&b[n..], &[x[n], -x[n + 1], x[n + 2], x[n + 3]]);
    }
}
