//! Cassie's left/right mirror lists (roadrunner §7.8), in the reference's signed-index encoding.
//!
//! Robot state (35): pelvis quaternion → (w, −x, y, −z); angular velocity → (−roll, pitch,
//! −yaw); motors swap legs with hip roll and yaw negated; passive joints swap legs. Task extras
//! (n = 35): commands keep x and negate y and turn; the swing pair swaps; the 2-value clock is
//! negated (a half-cycle shift) with the period shifts kept; the full clock swaps its L/R pairs
//! and the period shifts swap.
//!
//! A reference bug, fixed: roadrunner negates the 2-value clock *and* swaps the period
//! shifts. Each alone hands the left leg's swing timing to the right leg; both together cancel,
//! so the "mirrored" observation described a state whose left leg still swung first, and with
//! the default shifts [0, 0.5] it was an input (shifts [0.5, 0]) that never occurs in training:
//! the mirror loss constrained the policy only where it is never used. Here the mirror of a
//! reachable state is a reachable state (the env's physical mirror test steps both, with the
//! clock-synced reference gait moving the legs).

use super::height_scan;
use crate::envs::mirror::{MirrorError, MirrorIndices};

const ROBOT_STATE: [f64; 35] = [
    0.01, -1.0, 2.0, -3.0, //
    -4.0, 5.0, -6.0, //
    -12.0, -13.0, 14.0, 15.0, 16.0, -7.0, -8.0, 9.0, 10.0, 11.0, //
    -22.0, -23.0, 24.0, 25.0, 26.0, -17.0, -18.0, 19.0, 20.0, 21.0, //
    29.0, 30.0, 27.0, 28.0, //
    33.0, 34.0, 31.0, 32.0,
];

/// Observation mirror list: 44 entries, or 46 with the full clock; with `velocity` the pelvis
/// velocity follows (x and z kept, y negated), 3 more; then `history` past steps of 45, each
/// the robot state's list and the action's, shifted to the frame; then with `scan` the height
/// scan's columns swapped ([`height_scan::mirror_list`]).
pub fn observation(
    full_clock: bool,
    velocity: bool,
    history: usize,
    scan: bool,
) -> Result<MirrorIndices, MirrorError> {
    let n = ROBOT_STATE.len() as f64;
    let mut list = ROBOT_STATE.to_vec();
    list.extend([n, -(n + 1.0), -(n + 2.0)]); // x, y, turn commands
    list.extend([n + 4.0, n + 3.0]); // swing pair
    if full_clock {
        list.extend([n + 6.0, n + 5.0]); // period shifts swap with the per-leg clocks
        list.extend([n + 9.0, n + 10.0, n + 7.0, n + 8.0]);
    } else {
        list.extend([n + 5.0, n + 6.0]); // period shifts kept: the clock's half turn swaps legs
        list.extend([-(n + 7.0), -(n + 8.0)]);
    }
    if velocity {
        let v = list.len() as f64;
        list.extend([v, -(v + 1.0), v + 2.0]);
    }
    let state = ROBOT_STATE.iter().map(|&v| (v, 0.0));
    let frame: Vec<(f64, f64)> = state.chain(ACTION.iter().map(|&v| (v, n))).collect();
    for _ in 0..history {
        let at = list.len() as f64;
        list.extend(frame.iter().map(|&(v, from)| v.signum() * (v.abs().trunc() + from + at)));
    }
    if scan {
        list.extend(height_scan::mirror_list(list.len()));
    }
    let expected = if full_clock { 46 } else { 44 }
        + if velocity { 3 } else { 0 }
        + history * frame.len()
        + if scan { height_scan::LEN } else { 0 };
    MirrorIndices::with_len(&list, expected)
}

/// The action's list: swap legs, negate hip roll and yaw.
const ACTION: [f64; 10] = [-5.0, -6.0, 7.0, 8.0, 9.0, -0.1, -1.0, 2.0, 3.0, 4.0];

/// Action mirror list: swap legs, negate hip roll and yaw.
pub fn action() -> Result<MirrorIndices, MirrorError> {
    MirrorIndices::with_len(&ACTION, 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_involutions_of_the_right_length() {
        assert_eq!(observation(false, false, 0, false).unwrap().len(), 44);
        assert_eq!(observation(true, false, 0, false).unwrap().len(), 46);
        assert_eq!(observation(false, true, 0, false).unwrap().len(), 47);
        assert_eq!(observation(true, true, 0, false).unwrap().len(), 49);
        assert_eq!(action().unwrap().len(), 10);
    }

    #[test]
    fn mirroring_swaps_legs_and_flips_lateral_quantities() {
        let act = action().unwrap();
        let a: Vec<f32> = (1..=10).map(|i| i as f32).collect();
        let mut m = vec![0.0; 10];
        act.apply(&a, &mut m);
        // Left gets the right leg's values (roll, yaw negated) and vice versa.
        assert_eq!(m, vec![-6.0, -7.0, 8.0, 9.0, 10.0, -1.0, -2.0, 3.0, 4.0, 5.0]);
        let vel = observation(false, true, 0, false).unwrap();
        let s: Vec<f32> = (0..47).map(|i| i as f32 + 100.0).collect();
        let mut o = vec![0.0; 47];
        vel.apply(&s, &mut o);
        assert_eq!(&o[44..47], &[144.0, -145.0, 146.0], "pelvis velocity: y negated");
        let obs = observation(false, false, 0, false).unwrap();
        let s: Vec<f32> = (0..44).map(|i| i as f32 + 100.0).collect();
        let mut o = vec![0.0; 44];
        obs.apply(&s, &mut o);
        assert_eq!(&o[35..38], &[135.0, -136.0, -137.0], "x kept, y and turn negated");
        assert_eq!(&o[42..44], &[-142.0, -143.0], "2-clock negated");
        assert_eq!(&o[40..42], &[140.0, 141.0], "period shifts kept with the 2-clock");
        let full = observation(true, false, 0, false).unwrap();
        let s: Vec<f32> = (0..46).map(|i| i as f32 + 100.0).collect();
        let mut o = vec![0.0; 46];
        full.apply(&s, &mut o);
        assert_eq!(&o[40..46], &[141.0, 140.0, 144.0, 145.0, 142.0, 143.0], "full clock: L/R swap");
        assert_eq!(&o[0..4], &[100.0, -101.0, 102.0, -103.0], "quaternion (w, -x, y, -z)");
        // A history frame mirrors as the robot state and the action do, in its own place.
        let state: Vec<f32> = (0..35).map(|i| i as f32 + 100.0).collect();
        let action: Vec<f32> = (0..10).map(|i| i as f32 + 200.0).collect();
        let now = [state.clone(), vec![0.0; 9]].concat();
        let frame = [state.clone(), action.clone()].concat();
        let s = [now.clone(), frame.clone(), frame].concat();
        let mut o = vec![0.0; s.len()];
        observation(false, false, 2, false).unwrap().apply(&s, &mut o);
        let (mut mirrored_now, mut mirrored_action) = (vec![0.0; 44], vec![0.0; 10]);
        obs.apply(&now, &mut mirrored_now);
        act.apply(&action, &mut mirrored_action);
        let mirrored_frame = [&mirrored_now[..35], &mirrored_action[..]].concat();
        assert_eq!(&o[..44], &mirrored_now[..]);
        assert_eq!(&o[44..89], &mirrored_frame[..], "the newer frame");
        assert_eq!(&o[89..], &mirrored_frame[..], "the older frame");
    }
}
