//! Cassie's locomotion rewards (roadrunner §7.6): each term is `w · exp(−s · q)` for a cost `q ≥
//! 0`, so it lies in `[0, w]`, and the reward is their sum.
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
    /// `locomotion_vonmises_clock_reward`: feet forces/speeds gated by a von Mises swing clock.
    #[default]
    Vonmises,
    /// `locomotion_linear_clock_reward`: piecewise-linear clock, foot height and more penalties.
    Linear,
}

/// Everything a reward reads, gathered by the env after the policy step's last substep.
#[derive(Debug, Clone)]
pub struct RewardInputs {
    /// Commanded `[x, y]` velocity (m/s, heading frame) and the commanded heading.
    pub command: [f32; 2],
    pub target_heading: f32,
    pub base_position: Vec3,
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
            base_position: Vec3::new(0.0, 0.0, 1.0),
            base_rotation: Quat::IDENTITY,
            base_linvel: Vec3::new(1.0, 0.0, 0.0),
            base_angvel: Vec3::ZERO,
            base_acceleration: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            foot_force: [Vec3::ZERO; 2],
            foot_speed: [0.0; 2],
            foot_height: [0.1; 2],
            foot_rotation: [Quat::IDENTITY; 2],
            von_mises: [0.0; 2],
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

    #[test]
    fn velocity_target_turns_with_the_base() {
        let mut inp = inputs();
        inp.base_rotation = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
        inp.base_linvel = Vec3::new(0.0, 1.0, 0.0); // forward in the base frame
        assert!(velocity_errors(&inp).iter().all(|e| *e < 1e-6));
        assert!((yaw(inp.base_rotation) - std::f32::consts::FRAC_PI_2).abs() < 1e-6);
    }
}
