//! Cassie's locomotion rewards: the reference's two (roadrunner §7.6), where each term is
//! `w · exp(−s · q)` for a cost `q ≥ 0`, so it lies in `[0, w]`, and the reward is their sum;
//! and gait's walking reward ([`walk`], the default), built so that walking beats standing.
//!
//! Deviations from the reference, on purpose:
//! * von Mises reward: the weights are normalized over the terms this robot emits (sum 1.1), not
//!   over every JSON entry including Digit's arm term (sum 1.2), so a perfect step scores 1.0,
//!   not 0.917. The zero-weight `hop_symmetry` term is left out.
//! * Linear-clock reward: `base_rotvel` penalizes the pelvis angular speed (the reference took
//!   the norm of an empty slice and always scored 0), and the velocity target is rotated by the
//!   base yaw as in the von Mises reward (the reference used the commanded heading there).
//! * Both rewards read the contact forces and foot velocities of the last substep, as the
//!   reference's 50 Hz trackers effectively do at 36-40 substeps per policy step.

use clap::ValueEnum;
use rapier3d::glamx::{Quat, Vec3};
use serde::{Deserialize, Serialize};

use crate::envs::RewardTerm;

/// Which reward `--reward` selects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum RewardKind {
    /// Velocity tracking with far-reaching slope, straight-line and heading terms, swing-foot
    /// clearance, the clock terms gated by the command, and a fall penalty (`walk`).
    #[default]
    Walk,
    /// `locomotion_vonmises_clock_reward`: feet forces/speeds gated by a von Mises swing clock.
    Vonmises,
    /// `locomotion_linear_clock_reward`: piecewise-linear clock, foot height and more penalties.
    Linear,
}

impl RewardKind {
    /// Reward added when an episode ends in a fall (not at the trajectory limit): −`penalty`
    /// for `walk` (`fall_penalty`, 5 by default: what about 5 steps of perfect walking earn);
    /// the reference rewards have none.
    pub fn termination_reward(self, penalty: f32) -> f32 {
        match self {
            Self::Walk => -penalty,
            Self::Vonmises | Self::Linear => 0.0,
        }
    }
}

/// How the walking reward's `progress` term pays for forward speed `v` at a walking command
/// `c` (`--progress`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ProgressKind {
    /// `clip(v/c, −1, 1)`: rises to the command, then flat, so only the speed kernels pull an
    /// overshoot back (runs before the setting existed).
    #[default]
    Clip,
    /// `clip(1 − |1 − v/c|, −1, 1)`: the same up to the command, then falling as fast as it
    /// rose, so 20 % over the command pays what 20 % under it does.
    Peak,
}

impl ProgressKind {
    /// The progress term's value (before its weight) at `ratio = v/c`.
    pub fn value(self, ratio: f32) -> f32 {
        match self {
            Self::Clip => ratio.clamp(-1.0, 1.0),
            Self::Peak => (1.0 - (1.0 - ratio).abs()).clamp(-1.0, 1.0),
        }
    }
}

/// How the walking reward tracks the turn command (`--turn-reward`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum TurnKind {
    /// roadrunner's: the commanded heading integrates the turn command; the policy observes its
    /// orientation relative to it and `orientation` pays for facing it.
    #[default]
    Heading,
    /// Isaac Lab's and legged_gym's: the commanded frame is the robot's own heading (so the
    /// command is in the body frame and no heading error accumulates), and a `yaw_rate` term
    /// 0.15·exp(−(ω_z − turn)²/0.25) pays for turning at the commanded rate (the reward is
    /// divided by 1.60 instead of 1.45, so its maximum stays 1).
    Rate,
}

/// The raw weight of the `yaw_rate` term of [`TurnKind::Rate`].
pub const YAW_RATE_WEIGHT: f32 = 0.15;

/// The walking reward's default fall penalty (its per-step maximum is 1).
pub const WALK_FALL_PENALTY: f32 = 5.0;

/// Everything a reward reads, gathered by the env after the policy step's last substep.
#[derive(Debug, Clone)]
pub struct RewardInputs {
    /// Commanded `[x, y]` velocity (m/s, heading frame) and the commanded heading.
    pub command: [f32; 2],
    pub target_heading: f32,
    pub base_rotation: Quat,
    pub base_linvel: Vec3,
    pub base_angvel: Vec3,
    /// `[angular, linear]`, gravity included.
    pub base_acceleration: [f32; 6],
    pub foot_force: [Vec3; 2],
    pub foot_speed: [f32; 2],
    pub foot_height: [f32; 2],
    pub foot_rotation: [Quat; 2],
    /// Von Mises swing values [L, R] (≈ 1 in swing).
    pub von_mises: [f32; 2],
    /// The stepping gain (0 standing, 1 walking; see `reference::Gait::stepping_gain`).
    pub stepping_gain: f32,
    /// Raw weight of the walking reward's posture term `upright` (`--upright`; 0: none).
    pub upright_weight: f32,
    /// The pelvis height (m, as the termination reads it) and the `height` term's target
    /// (`--height-target`; 0: no term).
    pub base_height: f32,
    pub height_target: f32,
    /// The loaded feet's summed horizontal speed (m/s, the `foot_slide` metric) and the raw
    /// weight of the `slide` term (`--slide-penalty`; 0: no term, and `foot_slide` unread).
    pub foot_slide: f32,
    pub slide_weight: f32,
    /// The swing-foot clearance target (m, `--clearance`) and the `clearance` terms' kernel
    /// scale 4/target² ([`clearance_scale`]).
    pub clearance: f32,
    pub clearance_scale: f32,
    /// The `progress` term's shape (`--progress`).
    pub progress: ProgressKind,
    /// The commanded turn rate (rad/s) and how it is tracked (`--turn-reward`).
    pub turn: f32,
    pub turn_reward: TurnKind,
    /// `linear_clock(0.2)` and `linear_clock(0.7)` [L, R].
    pub linear_clock: [f32; 2],
    pub linear_swing_clock: [f32; 2],
    pub action: [f32; 10],
    /// `None` at an episode's first step.
    pub last_action: Option<[f32; 10]>,
    /// Joint-side applied torques and their limits.
    pub torque: [f32; 10],
    pub torque_limit: [f32; 10],
}

/// `1 − ⟨q1, q2⟩²`: 0 for equal orientations, 1 for a half turn apart.
pub fn quaternion_distance(a: Quat, b: Quat) -> f32 {
    1.0 - a.dot(b).powi(2)
}

/// Heading (yaw) of a z-up orientation.
pub fn yaw(q: Quat) -> f32 {
    (2.0 * (q.w * q.z + q.x * q.y)).atan2(1.0 - 2.0 * (q.y * q.y + q.z * q.z))
}

/// `[forward, lateral]` components of `v` in the frame of `heading` (rad about z): the one
/// rotation behind the walking reward, the observed pelvis velocity and the speed metrics.
pub fn planar_in_heading(v: Vec3, heading: f32) -> [f32; 2] {
    let (s, c) = heading.sin_cos();
    [c * v.x + s * v.y, -s * v.x + c * v.y]
}

/// `[forward, lateral, up]` components of the pelvis velocity `v` in the frame of its own
/// heading (the yaw of `rotation`): the velocity input and the privileged critic's.
pub fn in_own_heading(v: Vec3, rotation: Quat) -> [f32; 3] {
    let [forward, lateral] = planar_in_heading(v, yaw(rotation));
    [forward, lateral, v.z]
}

/// Velocity errors `|v − target|` along world x and y, the command rotated by the base yaw.
fn velocity_errors(inp: &RewardInputs) -> [f32; 2] {
    let (s, c) = yaw(inp.base_rotation).sin_cos();
    let [x, y] = inp.command;
    let target = [c * x - s * y, s * x + c * y];
    [(inp.base_linvel.x - target[0]).abs(), (inp.base_linvel.y - target[1]).abs()]
}

fn ctrl_change(inp: &RewardInputs) -> f32 {
    match inp.last_action {
        Some(last) => inp.action.iter().zip(last).map(|(a, b)| (a - b).abs()).sum::<f32>() / 10.0,
        None => 0.0,
    }
}

fn term(out: &mut Vec<RewardTerm>, name: &'static str, weight: f32, scale: f32, cost: f32) {
    out.push((name, weight * (-scale * cost).exp()));
}

/// The von Mises clock reward; writes its terms into `out` and returns their sum.
pub fn von_mises(inp: &RewardInputs, out: &mut Vec<RewardTerm>) -> f32 {
    out.clear();
    const TOTAL: f32 = 1.1;
    let dead = |q: f32, zone: f32| if q < zone { 0.0 } else { q };
    let [ex, ey] = velocity_errors(inp);
    term(out, "x_vel", 0.15 / TOTAL, 2.0, dead(ex, 0.05));
    term(out, "y_vel", 0.10 / TOTAL, 2.0, dead(ey, 0.05));
    let target = Quat::from_rotation_z(inp.target_heading);
    let orientation = dead(quaternion_distance(inp.base_rotation, target), 5e-3)
        + quaternion_distance(inp.foot_rotation[0], target)
        + quaternion_distance(inp.foot_rotation[1], target);
    term(out, "orientation", 0.15 / TOTAL, 30.0, orientation);
    let vm = inp.von_mises;
    term(out, "left_force", 0.10 / TOTAL, 0.01, vm[0] * inp.foot_force[0].length());
    term(out, "right_force", 0.10 / TOTAL, 0.01, vm[1] * inp.foot_force[1].length());
    term(out, "left_speed", 0.10 / TOTAL, 1.0, (1.0 - vm[0]) * inp.foot_speed[0]);
    term(out, "right_speed", 0.10 / TOTAL, 1.0, (1.0 - vm[1]) * inp.foot_speed[1]);
    let stable: f32 = inp.base_acceleration.iter().map(|a| a.abs()).sum();
    term(out, "stable_base", 0.10 / TOTAL, 0.01, stable);
    term(out, "ctrl_penalty", 0.10 / TOTAL, 8.0, ctrl_change(inp));
    let torque: f32 = inp.torque.iter().zip(inp.torque_limit).map(|(t, l)| t.abs() / l).sum();
    term(out, "trq_penalty", 0.10 / TOTAL, 1.0, torque);
    out.iter().map(|t| t.1).sum()
}

/// Sum of the walking reward's raw weights; [`walk`] divides by it, so its maximum is 1.
const WALK_TOTAL: f32 = 1.45;

/// The walking reward's default swing-foot clearance target (m above the ground; the
/// `clearance` setting).
pub const WALK_CLEARANCE: f64 = 0.1;

/// The `clearance` terms' kernel scale for a target of `clearance` m: 4/clearance², so a foot
/// at a given share of the target earns the same at any target (400 at the default, computed
/// in f64 so that it is exactly 400.0 there and the default's rewards are unchanged).
pub fn clearance_scale(clearance: f64) -> f32 {
    (4.0 / (clearance * clearance)) as f32
}

/// The walking reward (`--reward walk`); writes its terms into `out` and returns their sum,
/// at most 1 per step, plus [`RewardKind::termination_reward`] on a fall (added by the env).
/// Raw weights below, divided by their sum 1.45.
///
/// Every choice answers a measured failure (walking.md §4, docs/notebook/cassie-runs.md):
/// * Speed: `progress` 0.45·clip(v/c, −1, 1) while walking (linear in speed, so its slope
///   never flattens out; [`ProgressKind::Peak`] makes it fall again past the command), or
///   0.45·exp(−‖v − c‖²/0.02) without a forward command (standing: exp(−‖v‖²/0.02); a
///   sidestep: the lateral error); `x_vel`
///   0.15·exp(−e²/0.25), a wide kernel; `x_fine` 0.15·exp(−e²/0.02), a narrow one that pays
///   for the last 0.1 m/s (the wide kernel alone let 0.5 m/s overshoot to 0.75 and standing
///   drift at 0.13). Progress at 0.15 (four runs): the policy first rode
///   the reference forward at 0.5 m/s and fell, then learned to survive by marching in place
///   (forward 0.01 m/s from 0.6-0.8M steps, every time). At 0.45 marching in place
///   earns about half of walking, and the same start kept going forward (0.72 m/s at 1.77M).
/// * `y_vel` 0.10·exp(−e²/0.05) and `orientation` 0.15 (pelvis and feet vs the commanded
///   heading): walking straight (0.5-0.6 m/s sideways drift without them).
/// * Clock terms, 0.05 each per foot: swing-foot force and stance-foot speed as the von Mises
///   reward's, and `clearance` exp(−400·s·max(0, 0.1 − h)²) (the swing foot lifts 10 cm;
///   `--clearance` sets the target, the kernel scaling with it).
///   The swing value `s` is scaled by the command's stepping gain, so a standing command asks
///   for both feet loaded and still.
/// * `stable_base`, `ctrl_penalty`, `trq_penalty`, 0.05 each: the old penalties, small.
///
/// Standing at a 1 m/s command earns about a third of walking and a fall costs 5, so walking
/// pays off from about 2 s of mean survival (pinned by a test), where the von Mises reward
/// needed 8 s.
pub fn walk(inp: &RewardInputs, out: &mut Vec<RewardTerm>) -> f32 {
    out.clear();
    let yaw_weight = match inp.turn_reward {
        TurnKind::Heading => 0.0,
        TurnKind::Rate => YAW_RATE_WEIGHT,
    };
    let height_weight = if inp.height_target > 0.0 { HEIGHT_WEIGHT } else { 0.0 };
    let total = WALK_TOTAL + inp.upright_weight + yaw_weight + height_weight + inp.slide_weight;
    let w = |x: f32| x / total;
    // Forward and lateral velocity in the commanded heading's frame, the frame the command
    // and `gait eval` speak in. (The reference rewards compare world-x and world-y components
    // with the command turned by the base yaw, so with a random heading their "x" term paid a
    // robot standing at 90° to the world x axis; the first walking runs used that and one seed
    // in three stood.)
    let v = inp.base_linvel;
    let [forward, lateral] = planar_in_heading(v, inp.target_heading);
    let (ex, ey) = (forward - inp.command[0], lateral - inp.command[1]);
    term(out, "x_vel", w(0.15), 1.0 / 0.25, ex * ex);
    term(out, "x_fine", w(0.15), 1.0 / 0.02, ex * ex);
    let g = inp.stepping_gain;
    // Without a forward command (standing, turning in place, sidestepping) progress is a
    // narrow kernel on the planar velocity error, which for a standing command is the speed.
    let progress = if g > 0.0 && inp.command[0].abs() > 1e-3 {
        inp.progress.value(forward / inp.command[0])
    } else {
        (-(ex * ex + ey * ey) / 0.02).exp()
    };
    out.push(("progress", w(0.45) * progress));
    term(out, "y_vel", w(0.10), 1.0 / 0.05, ey * ey);
    let target = Quat::from_rotation_z(inp.target_heading);
    let orientation = quaternion_distance(inp.base_rotation, target)
        + quaternion_distance(inp.foot_rotation[0], target)
        + quaternion_distance(inp.foot_rotation[1], target);
    term(out, "orientation", w(0.15), 30.0, orientation);
    let vm = [g * inp.von_mises[0], g * inp.von_mises[1]];
    term(out, "left_force", w(0.05), 0.01, vm[0] * inp.foot_force[0].length());
    term(out, "right_force", w(0.05), 0.01, vm[1] * inp.foot_force[1].length());
    term(out, "left_speed", w(0.05), 1.0, (1.0 - vm[0]) * inp.foot_speed[0]);
    term(out, "right_speed", w(0.05), 1.0, (1.0 - vm[1]) * inp.foot_speed[1]);
    let low = |h: f32| (inp.clearance - h).max(0.0).powi(2);
    let k = inp.clearance_scale;
    term(out, "left_clearance", w(0.05), k, vm[0] * low(inp.foot_height[0]));
    term(out, "right_clearance", w(0.05), k, vm[1] * low(inp.foot_height[1]));
    let stable: f32 = inp.base_acceleration.iter().map(|a| a.abs()).sum();
    term(out, "stable_base", w(0.05), 0.01, stable);
    term(out, "ctrl_penalty", w(0.05), 8.0, ctrl_change(inp));
    let torque: f32 = inp.torque.iter().zip(inp.torque_limit).map(|(t, l)| t.abs() / l).sum();
    term(out, "trq_penalty", w(0.05), 1.0, torque);
    if yaw_weight > 0.0 {
        let e = inp.base_angvel.z - inp.turn;
        term(out, "yaw_rate", w(yaw_weight), 1.0 / 0.25, e * e);
    }
    if inp.upright_weight > 0.0 {
        let t = tilt(inp.base_rotation);
        term(out, "upright", w(inp.upright_weight), 1.0 / UPRIGHT_SCALE, t * t);
    }
    if height_weight > 0.0 {
        let low = (inp.height_target - inp.base_height).max(0.0);
        term(out, "height", w(height_weight), 1.0 / HEIGHT_SCALE, low * low);
    }
    if inp.slide_weight > 0.0 {
        term(out, "slide", w(inp.slide_weight), 1.0 / SLIDE_SCALE, inp.foot_slide);
    }
    out.iter().map(|t| t.1).sum()
}

/// The raw weight of the `height` term (`--height-target`), the posture term's size.
pub const HEIGHT_WEIGHT: f32 = 0.10;

/// The `slide` term's kernel width (m/s): exp(−s/0.05) pays 0.82 at 1 cm/s of loaded-foot
/// speed, 0.55 at 3 cm/s (the slow rapier sidestep's mean) and 0.14 at 10 cm/s.
pub const SLIDE_SCALE: f32 = 0.05;

/// The `height` term's kernel width: exp(−d²/0.0025) pays 0.70 at 3 cm below the target, 0.37
/// at 5 cm and 0.02 at 10 cm.
pub const HEIGHT_SCALE: f32 = 0.0025;

/// The posture term's kernel width: `exp(−tilt²/0.02)` pays 0.68 at 5° of pelvis tilt, 0.22 at
/// 10° and 0.01 at 20°, where an episode ends (the `orientation` term, `exp(−30·(1 − ⟨q, t⟩²))`,
/// still paid 0.79 at 10° and 0.40 at 20°). Measured before it:
/// the pelvis stood pitched back 8-10° and rolled ±8-12° with every step, so half of the 20°
/// budget was spent before any push, and every push that fell the robot tipped it past 20°.
pub const UPRIGHT_SCALE: f32 = 0.02;

/// The pelvis's tilt (rad): the angle between its z axis and the world's (roll and pitch
/// together, yaw ignored).
pub fn tilt(q: Quat) -> f32 {
    (q * Vec3::Z).z.clamp(-1.0, 1.0).acos()
}

/// Desired swing foot height: 0.1 m up to 1 m/s, rising 0.1 m per m/s to 0.3 m at 3 m/s.
fn desired_foot_height(x_command: f32) -> f32 {
    (0.1 + 0.1 * (x_command - 1.0)).clamp(0.1, 0.3)
}

/// The linear clock reward; writes its terms into `out` and returns their sum (weights sum 1).
pub fn linear(inp: &RewardInputs, out: &mut Vec<RewardTerm>) -> f32 {
    out.clear();
    let clk = inp.linear_clock;
    let swing = inp.linear_swing_clock;
    for (side, (force_name, pos_name)) in
        [("l_foot_cost_forcevel", "l_foot_cost_pos"), ("r_foot_cost_forcevel", "r_foot_cost_pos")]
            .into_iter()
            .enumerate()
    {
        let forcevel = clk[side] * inp.foot_force[side].length() / 75.0
            + (1.0 - clk[side]) * inp.foot_speed[side];
        term(out, force_name, 0.1, 1.0, forcevel);
        let h = desired_foot_height(inp.command[0]);
        term(out, pos_name, 0.1, 40.0, swing[side] * (h - inp.foot_height[side]).powi(2));
    }
    let [ex, ey] = velocity_errors(inp);
    term(out, "x_vel", 0.1, 2.0, ex);
    term(out, "y_vel", 0.1, 2.0, ey);
    let target = Quat::from_rotation_z(inp.target_heading);
    term(out, "base_orientation", 0.1, 30.0, quaternion_distance(inp.base_rotation, target));
    term(out, "l_foot_orientation", 0.025, 20.0, quaternion_distance(inp.foot_rotation[0], target));
    term(out, "r_foot_orientation", 0.025, 20.0, quaternion_distance(inp.foot_rotation[1], target));
    term(out, "base_rotvel", 0.025, 2.0, inp.base_angvel.length());
    let acc = inp.base_acceleration;
    term(out, "base_transacc", 0.025, 1.0, (acc[3] * acc[3] + acc[4] * acc[4]).sqrt());
    let hips = [0, 1, 5, 6];
    term(out, "action_penalty", 0.1, 1.0, hips.iter().map(|&i| inp.action[i].abs()).sum());
    term(out, "ctrl_penalty", 0.05, 8.0, ctrl_change(inp));
    let hip_torque = hips.iter().map(|&i| inp.torque[i].abs()).sum::<f32>() / 4.0;
    term(out, "trq_penalty", 0.05, 0.075, hip_torque);
    out.iter().map(|t| t.1).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> RewardInputs {
        RewardInputs {
            command: [1.0, 0.0],
            target_heading: 0.0,
            base_rotation: Quat::IDENTITY,
            base_linvel: Vec3::new(1.0, 0.0, 0.0),
            base_angvel: Vec3::ZERO,
            base_acceleration: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            foot_force: [Vec3::ZERO; 2],
            foot_speed: [0.0; 2],
            foot_height: [0.1; 2],
            foot_rotation: [Quat::IDENTITY; 2],
            von_mises: [0.0; 2],
            stepping_gain: 1.0,
            upright_weight: 0.0,
            base_height: 0.8,
            height_target: 0.0,
            foot_slide: 0.0,
            slide_weight: 0.0,
            clearance: WALK_CLEARANCE as f32,
            clearance_scale: clearance_scale(WALK_CLEARANCE),
            progress: ProgressKind::Clip,
            turn: 0.0,
            turn_reward: TurnKind::Heading,
            linear_clock: [0.0; 2],
            linear_swing_clock: [1.0; 2],
            action: [0.0; 10],
            last_action: None,
            torque: [0.0; 10],
            torque_limit: [100.0; 10],
        }
    }

    #[test]
    fn perfect_tracking_scores_one_and_each_term_stays_in_its_weight() {
        let mut terms = Vec::new();
        let r = von_mises(&inputs(), &mut terms);
        assert!((r - 1.0).abs() < 1e-6, "{r}");
        let r = linear(&inputs(), &mut terms);
        assert!((r - 1.0).abs() < 1e-6, "{r}");

        let mut bad = inputs();
        bad.base_linvel = Vec3::new(-3.0, 2.0, 0.0);
        bad.base_rotation = Quat::from_rotation_x(1.0);
        bad.foot_force = [Vec3::new(0.0, 0.0, 400.0); 2];
        bad.von_mises = [0.7, 0.2];
        bad.foot_speed = [2.0, 3.0];
        bad.last_action = Some([1.0; 10]);
        bad.torque = [-100.0; 10];
        let r = von_mises(&bad, &mut terms);
        assert!(r > 0.0 && r < 0.5, "{r}");
        for (name, value) in &terms {
            assert!(*value >= 0.0 && *value <= 0.15 / 1.1 + 1e-6, "{name} {value}");
        }
    }

    /// Mean survival (s) a walking policy needs to be worth as much as standing still at a
    /// 1 m/s command, for reward `f`: V_walk = (r_w − h·P)/(1 − γ(1 − h)) with hazard `h` per
    /// 50 Hz step and fall penalty P, against V_stand = r_s/(1 − γ), γ = 0.99 (the preset's).
    /// r_s averages one clock cycle of standing (both feet loaded with half the weight, still,
    /// on the ground); r_w one cycle of ideal walking (speed on target, the swing foot
    /// unloaded and 10 cm up, the stance foot still).
    fn break_even_seconds(f: fn(&RewardInputs, &mut Vec<RewardTerm>) -> f32, penalty: f32) -> f32 {
        use crate::envs::cassie::clock::GaitClock;
        let clock = GaitClock::new(0.7, 50.0, [0.5, 0.5], [0.0, 0.5], 0.1);
        let mut terms = Vec::new();
        let (mut r_stand, mut r_walk) = (0.0, 0.0);
        let n = 35;
        for i in 0..n {
            let phase = 0.7 * i as f64 / n as f64;
            let vm =
                [clock.von_mises_exact(0, phase) as f32, clock.von_mises_exact(1, phase) as f32];
            let mut stand = inputs();
            stand.base_linvel = Vec3::ZERO;
            stand.von_mises = vm;
            stand.foot_force = [Vec3::new(0.0, 0.0, 160.0); 2];
            stand.foot_height = [0.0; 2];
            stand.torque = [20.0; 10];
            r_stand += f(&stand, &mut terms) / n as f32;
            let mut walk = inputs();
            walk.von_mises = vm;
            walk.foot_force = [
                Vec3::new(0.0, 0.0, 320.0 * (1.0 - vm[0])),
                Vec3::new(0.0, 0.0, 320.0 * (1.0 - vm[1])),
            ];
            walk.foot_height = [0.1 * vm[0], 0.1 * vm[1]];
            walk.torque = [20.0; 10];
            r_walk += f(&walk, &mut terms) / n as f32;
        }
        let gamma = 0.99f32;
        let v_stand = r_stand / (1.0 - gamma);
        // V_walk falls as the hazard grows; bisect for the hazard where it meets V_stand.
        let v_walk = |h: f32| (r_walk - h * penalty) / (1.0 - gamma * (1.0 - h));
        assert!(v_walk(0.0) > v_stand, "walking never beats standing: {r_walk} vs {r_stand}");
        let (mut lo, mut hi) = (0.0f32, 1.0f32);
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if v_walk(mid) > v_stand {
                lo = mid
            } else {
                hi = mid
            }
        }
        println!("r_stand {r_stand:.3}, r_walk {r_walk:.3}, break-even hazard {lo:.4}/step");
        1.0 / lo / 50.0
    }

    #[test]
    fn walking_beats_standing_within_three_seconds_of_survival() {
        let walk_s = break_even_seconds(walk, WALK_FALL_PENALTY);
        let von_mises_s = break_even_seconds(von_mises, 0.0);
        println!("break-even survival: walk {walk_s:.2} s, vonmises {von_mises_s:.2} s");
        assert!(walk_s <= 3.0, "walk reward break-even {walk_s} s");
        assert!(
            von_mises_s > 3.0 * walk_s,
            "the reference reward made standing a trap: {von_mises_s} s"
        );
    }

    #[test]
    fn walking_reward_peaks_at_one_and_pays_for_stillness_when_told_to_stand() {
        let mut terms = Vec::new();
        let r = walk(&inputs(), &mut terms);
        assert!((r - 1.0).abs() < 1e-6, "{r}");
        // Standing command: still and loaded scores 1; stepping in place (a foot moving) or
        // drifting at 0.13 m/s scores less.
        let mut stand = inputs();
        stand.command = [0.0, 0.0];
        stand.stepping_gain = 0.0;
        stand.base_linvel = Vec3::ZERO;
        stand.von_mises = [1.0, 0.0];
        stand.foot_force = [Vec3::new(0.0, 0.0, 160.0); 2];
        stand.foot_height = [0.0; 2];
        assert!((walk(&stand, &mut terms) - 1.0).abs() < 1e-6);
        let mut drift = stand.clone();
        drift.base_linvel = Vec3::new(0.13, 0.0, 0.0);
        assert!(walk(&drift, &mut terms) < 0.9, "{}", walk(&drift, &mut terms));
        let mut shuffle = stand.clone();
        shuffle.foot_speed = [0.5, 0.0];
        assert!(walk(&shuffle, &mut terms) < 0.99);
        // Overshooting 0.5 m/s by 0.25 loses more than a tenth of the reward.
        let mut over = inputs();
        over.command = [0.5, 0.0];
        over.base_linvel = Vec3::new(0.75, 0.0, 0.0);
        assert!(walk(&over, &mut terms) < 0.9, "{}", walk(&over, &mut terms));
    }

    /// `--progress peak` pays what `clip` pays up to the command and falls past it, by as much
    /// as it rose: 1.2 × the command scores what 0.8 × does, and the reward's maximum stays
    /// at the command.
    #[test]
    fn the_peaked_progress_term_falls_past_the_command() {
        let mut terms = Vec::new();
        let progress = |kind: ProgressKind, v: f32, terms: &mut Vec<RewardTerm>| {
            let mut inp = inputs();
            inp.progress = kind;
            inp.base_linvel = Vec3::new(v * inp.command[0], 0.0, 0.0);
            let r = walk(&inp, terms);
            (r, terms.iter().find(|t| t.0 == "progress").expect("the term").1 * 1.45 / 0.45)
        };
        for ratio in [-0.5, 0.0, 0.3, 0.8, 1.0] {
            let (clip, peak) = (
                progress(ProgressKind::Clip, ratio, &mut terms),
                progress(ProgressKind::Peak, ratio, &mut terms),
            );
            assert!((clip.1 - peak.1).abs() < 1e-6, "{ratio}: {clip:?} vs {peak:?}");
        }
        let (at, over, under) = (
            progress(ProgressKind::Peak, 1.0, &mut terms),
            progress(ProgressKind::Peak, 1.2, &mut terms),
            progress(ProgressKind::Peak, 0.8, &mut terms),
        );
        assert!((at.0 - 1.0).abs() < 1e-6 && (at.1 - 1.0).abs() < 1e-6, "{at:?}");
        assert!((over.1 - 0.8).abs() < 1e-5 && (over.1 - under.1).abs() < 1e-5, "{over:?}");
        assert!((progress(ProgressKind::Clip, 1.2, &mut terms).1 - 1.0).abs() < 1e-6);
        assert!(progress(ProgressKind::Peak, 3.5, &mut terms).1 == -1.0, "bounded below");
    }

    /// `--turn-reward rate`: a `yaw_rate` term, the maximum still 1 at the commanded rate, and
    /// 0.15·exp(−0.16/0.25) = 0.53 of its weight 0.4 rad/s off; `heading` has no such term.
    #[test]
    fn the_yaw_rate_term_pays_for_turning_at_the_command() {
        let mut terms = Vec::new();
        let mut turning = inputs();
        turning.turn = 0.4;
        turning.turn_reward = TurnKind::Rate;
        turning.base_angvel = Vec3::new(0.0, 0.0, 0.4);
        assert!((walk(&turning, &mut terms) - 1.0).abs() < 1e-6);
        turning.base_angvel = Vec3::ZERO;
        walk(&turning, &mut terms);
        let got = terms.iter().find(|t| t.0 == "yaw_rate").expect("the term").1 * 1.60 / 0.15;
        assert!((got - (-0.16f32 / 0.25).exp()).abs() < 1e-5, "{got}");
        turning.turn_reward = TurnKind::Heading;
        walk(&turning, &mut terms);
        assert!(terms.iter().all(|t| t.0 != "yaw_rate"));
    }

    /// The posture term: with it the maximum stays 1; it pays by pelvis tilt alone (roll and
    /// pitch alike, yaw not at all), 0.68 / 0.22 / 0.01 of its weight at 5° / 10° / 20°.
    #[test]
    fn the_posture_term_pays_for_a_level_pelvis_and_keeps_the_maximum_at_one() {
        let mut terms = Vec::new();
        let mut level = inputs();
        level.upright_weight = 0.1;
        assert!((walk(&level, &mut terms) - 1.0).abs() < 1e-6);
        let upright = |inp: &RewardInputs, terms: &mut Vec<RewardTerm>| {
            walk(inp, terms);
            terms.iter().find(|t| t.0 == "upright").expect("the term").1 * (1.45 + 0.1) / 0.1
        };
        let deg = std::f32::consts::PI / 180.0;
        for (angle, expected) in [(5.0, 0.68), (10.0, 0.22), (20.0, 0.01)] {
            for rotation in
                [Quat::from_rotation_x(angle * deg), Quat::from_rotation_y(-angle * deg)]
            {
                let mut tilted = level.clone();
                tilted.base_rotation = rotation;
                let got = upright(&tilted, &mut terms);
                assert!((got - expected).abs() < 0.01, "{angle}°: {got}");
            }
        }
        let mut turned = level.clone();
        turned.base_rotation = Quat::from_rotation_z(1.0);
        assert!((upright(&turned, &mut terms) - 1.0).abs() < 1e-6, "yaw is not tilt");
        // Without a weight there is no term and the reward is the one of before.
        walk(&inputs(), &mut terms);
        assert!(terms.iter().all(|t| t.0 != "upright"));
    }

    /// The height term: with it the maximum stays 1; one-sided (at or above the target it pays
    /// its whole weight), 0.70 / 0.37 / 0.02 of it at 3 / 5 / 10 cm below; no term without a
    /// target.
    #[test]
    fn the_height_term_pays_less_for_a_crouch_and_nothing_extra_for_standing_tall() {
        let mut terms = Vec::new();
        let mut tall = inputs();
        tall.height_target = 0.8;
        let height = |inp: &RewardInputs, terms: &mut Vec<RewardTerm>| {
            let total = walk(inp, terms);
            let t = terms.iter().find(|t| t.0 == "height").expect("the term").1;
            (total, t * (1.45 + HEIGHT_WEIGHT) / HEIGHT_WEIGHT)
        };
        for z in [0.8, 0.95] {
            tall.base_height = z;
            let (total, term) = height(&tall, &mut terms);
            assert!((total - 1.0).abs() < 1e-6 && (term - 1.0).abs() < 1e-6, "{z}: {total}");
        }
        for (below, expected) in [(0.03, 0.70), (0.05, 0.37), (0.10, 0.02)] {
            tall.base_height = 0.8 - below;
            let (total, term) = height(&tall, &mut terms);
            assert!((term - expected).abs() < 0.01, "{below} m below: {term}");
            assert!(total < 1.0);
        }
        walk(&inputs(), &mut terms);
        assert!(terms.iter().all(|t| t.0 != "height"));
    }

    /// `--slide-penalty`: the `slide` term pays its whole weight to still feet, 0.82 / 0.55 /
    /// 0.14 of it at 1 / 3 / 10 cm/s of loaded-foot speed, and the maximum stays 1; no term
    /// without a weight.
    #[test]
    fn the_slide_term_pays_less_for_dragged_feet() {
        let mut terms = Vec::new();
        let mut inp = inputs();
        inp.slide_weight = 0.1;
        for (slide, expected) in [(0.0, 1.0), (0.01, 0.82), (0.03, 0.55), (0.10, 0.14)] {
            inp.foot_slide = slide;
            let total = walk(&inp, &mut terms);
            let t = terms.iter().find(|t| t.0 == "slide").expect("the term").1;
            let term = t * (1.45 + 0.1) / 0.1;
            assert!((term - expected).abs() < 0.01, "{slide} m/s: {term}");
            assert!(total <= 1.0 + 1e-6 && (slide > 0.0 || (total - 1.0).abs() < 1e-6));
        }
        inp.slide_weight = 0.0;
        walk(&inp, &mut terms);
        assert!(terms.iter().all(|t| t.0 != "slide"));
    }

    /// `--clearance`: the default's kernel is exactly the old constant 400 (also from an f32
    /// 0.1 widened to f64), so its rewards are unchanged; a swing foot at
    /// half the target earns exp(−1) of the term at any target, and one at the target all of
    /// it.
    #[test]
    fn the_clearance_term_scales_with_its_target() {
        assert_eq!(clearance_scale(WALK_CLEARANCE), 400.0);
        assert_eq!(clearance_scale(f64::from(0.1f32)), 400.0);
        let mut terms = Vec::new();
        let mut inp = inputs();
        inp.von_mises = [1.0, 0.0];
        let left = |inp: &RewardInputs, terms: &mut Vec<RewardTerm>| {
            walk(inp, terms);
            terms.iter().find(|t| t.0 == "left_clearance").expect("the term").1 * 1.45 / 0.05
        };
        for target in [0.1f32, 0.2] {
            inp.clearance = target;
            inp.clearance_scale = clearance_scale(target.into());
            inp.foot_height = [target / 2.0, 0.0];
            let half = left(&inp, &mut terms);
            assert!((half - (-1.0f32).exp()).abs() < 1e-3, "{target}: {half}");
            inp.foot_height = [target, 0.0];
            assert!((left(&inp, &mut terms) - 1.0).abs() < 1e-6, "{target}");
        }
        // The default's foot at 5 cm earns what it earned before the setting.
        inp.clearance = WALK_CLEARANCE as f32;
        inp.clearance_scale = clearance_scale(WALK_CLEARANCE);
        inp.foot_height = [0.05, 0.0];
        let before = (-400.0f32 * 0.05 * 0.05).exp();
        assert!((left(&inp, &mut terms) - before).abs() < 1e-6);
    }

    /// The walking reward's speed terms live in the commanded frame: walking along a heading
    /// of 90° scores as walking along 0°, and standing still scores no speed term at any
    /// heading.
    #[test]
    fn walking_speed_is_measured_along_the_commanded_heading() {
        let mut terms = Vec::new();
        let get = |terms: &Vec<RewardTerm>, k: &str| terms.iter().find(|t| t.0 == k).unwrap().1;
        for heading in [0.0f32, 0.7, std::f32::consts::FRAC_PI_2, -2.5] {
            let mut inp = inputs();
            inp.target_heading = heading;
            inp.base_rotation = Quat::from_rotation_z(heading);
            inp.foot_rotation = [inp.base_rotation; 2];
            inp.base_linvel = Vec3::new(heading.cos(), heading.sin(), 0.0);
            assert!((walk(&inp, &mut terms) - 1.0).abs() < 1e-5, "heading {heading}");
            inp.base_linvel = Vec3::ZERO;
            walk(&inp, &mut terms);
            assert!(
                get(&terms, "x_vel") < 0.02 && get(&terms, "x_fine") < 1e-6,
                "{heading}: {terms:?}"
            );
            assert!((get(&terms, "y_vel") - 0.10 / 1.45).abs() < 1e-6, "{heading}: {terms:?}");
        }
    }

    #[test]
    fn velocity_target_turns_with_the_base() {
        let mut inp = inputs();
        inp.base_rotation = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
        inp.base_linvel = Vec3::new(0.0, 1.0, 0.0); // forward in the base frame
        assert!(velocity_errors(&inp).iter().all(|e| *e < 1e-6));
        assert!((yaw(inp.base_rotation) - std::f32::consts::FRAC_PI_2).abs() < 1e-6);
    }
}
