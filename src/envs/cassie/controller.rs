//! Cassie's controller as data ([`ControllerSpec`]): the observation and action layouts, the PD
//! targets (neutral stance + action + the reference gait) and the motor model's gains, for
//! `gait export`'s sidecar.

use super::clock::GaitClock;
use super::config::{CassieConfig, ObsKind};
use super::height_scan;
use super::layout::{self, ROBOT_STATE};
use super::reference::{self, ReferenceKind};
use super::reward::TurnKind;
use crate::envs::cassie::robot::description::Description;
use crate::envs::cassie::robot::Dynamics;
use crate::envs::controller::{ConstantInput, ControllerSpec, PdTargets, ReferenceGait};

/// The five motors of a leg, in policy order.
const MOTORS: [&str; 5] = ["hip_roll", "hip_yaw", "hip_pitch", "knee", "foot"];
/// The passive joints, in observation order.
const PASSIVE: [&str; 4] = ["left_shin", "left_tarsus", "right_shin", "right_tarsus"];

fn per_motor(what: &str) -> Vec<String> {
    ["left", "right"]
        .iter()
        .flat_map(|side| MOTORS.iter().map(move |m| format!("{side}_{m}_{what}")))
        .collect()
}

/// The observation's entries by name (see `CassieEnv::write_obs`).
pub(crate) fn observation(config: &CassieConfig) -> Vec<String> {
    let heading = match config.turn_reward {
        TurnKind::Heading => {
            "pelvis_quat_w (relative to the commanded heading: the pelvis's yaw at the episode's \
             start, turned by command_turn / policy_rate_hz every policy step)"
        }
        TurnKind::Rate => {
            "pelvis_quat_w (relative to the commanded heading: the pelvis's yaw at the episode's \
             start, then its yaw at the end of every policy step)"
        }
    };
    let mut names: Vec<String> = [
        heading,
        "pelvis_quat_x",
        "pelvis_quat_y",
        "pelvis_quat_z",
        "pelvis_angvel_x (rad/s, body frame)",
        "pelvis_angvel_y",
        "pelvis_angvel_z",
    ]
    .map(String::from)
    .to_vec();
    names.extend(per_motor("pos (rad, encoder)"));
    names.extend(per_motor("vel (rad/s)"));
    names.extend(PASSIVE.iter().map(|j| format!("{j}_pos (rad)")));
    names.extend(PASSIVE.iter().map(|j| format!("{j}_vel (rad/s)")));
    names.extend(
        [
            "command_x (m/s, heading frame)",
            "command_y (m/s)",
            "command_turn (rad/s)",
            "swing_ratio_left",
            "1 - swing_ratio_left",
            "period_shift_left",
            "period_shift_right",
        ]
        .map(String::from),
    );
    if config.full_clock {
        names.extend(
            ["clock_left_sin", "clock_left_cos", "clock_right_sin", "clock_right_cos"]
                .map(String::from),
        );
    } else {
        names.extend(["clock_sin (2πφ/T)", "clock_cos"].map(String::from));
    }
    match config.obs {
        ObsKind::Velocity => names.extend(
            [
                "pelvis_vel_forward (m/s, in the pelvis's own yaw frame)",
                "pelvis_vel_lateral (m/s)",
                "pelvis_vel_up (m/s)",
            ]
            .map(String::from),
        ),
        ObsKind::Estimate => names.extend(
            [
                "pelvis_vel_forward (m/s, in the pelvis's own yaw frame; the state estimator's: pelvis relative \
                 to the stance feet, weighted by their forces, low-passed by velocity_lag s)",
                "pelvis_vel_lateral (m/s, estimated)",
                "pelvis_vel_up (m/s, estimated)",
            ]
            .map(String::from),
        ),
        ObsKind::Reference => {}
    }
    let state = names[..ROBOT_STATE].to_vec();
    let actions = per_motor("action (the policy's output)");
    for step in 1..=config.history {
        let ago = |name: &String| format!("{step}_steps_ago: {name}");
        names.extend(state.iter().chain(&actions).map(ago));
    }
    if config.height_scan {
        names.extend(height_scan::names());
    }
    names
}

/// Cassie's controller for `config`, with `clock` the gait clock (its swing table). `None`
/// for runs whose gait changes with every command (`full_gait`), which a static description
/// cannot hold.
pub fn describe(config: &CassieConfig, clock: &GaitClock) -> Option<ControllerSpec> {
    if config.full_gait {
        return None;
    }
    let desc = Description::cassie();
    let motors = desc.motor_models();
    let omni = config.reference == ReferenceKind::Omni;
    let reference = (config.reference != ReferenceKind::None).then(|| ReferenceGait {
        formula: "per leg, with s the leg's swing value at the clock phase and the observed \
                  command (x, y, turn): target[hip_roll] += hip_roll_per_speed * y * s; \
                  target[hip_yaw] += hip_yaw_per_turn * turn * (s - 0.5); \
                  target[hip_pitch] += hip_pitch_per_speed * x * s; \
                  target[knee] += knee_fold * g * s, g = clip(max(hypot(x, y), |turn|) / \
                  full_step_speed, min_gain, 1); with foot_placement, see its field"
            .to_string(),
        hip_pitch_per_speed: config.forward_reach as f32,
        hip_roll_per_speed: if omni {
            reference::hip_roll_per_speed(config.lateral_reach)
        } else {
            0.0
        },
        hip_yaw_per_turn: if omni { reference::HIP_YAW_PER_TURN } else { 0.0 },
        knee_fold: reference::KNEE_FOLD,
        full_step_speed: config.full_step_speed as f32,
        min_gain: config.step_in_place as f32,
        hip_roll: [0, 5],
        hip_yaw: [1, 6],
        hip_pitch: [2, 7],
        knee: [3, 8],
        command: [35, 36, 37],
        cycle_time: config.cycle_time_at(0.0),
        cadence: config.cadence,
        clock: [42, 43],
        swing_table: clock.swing_table(),
        foot_placement: config.foot_placement as f32,
        placement_deadband: reference::PLACEMENT_DEADBAND,
        velocity: (config.foot_placement > 0.0).then(|| {
            let n = layout::history_at(config);
            [n - 3, n - 2]
        }),
    });
    Some(ControllerSpec {
        policy_rate_hz: config.policy_rate,
        observation: observation(config),
        actions: per_motor("target_offset (rad)"),
        pd: Some(PdTargets {
            formula: "target[k] = action[k] + neutral[k] + reference[k] (rad, joint side)"
                .to_string(),
            neutral: desc.neutral_stance().to_vec(),
            kp: motors.iter().map(|m| m.kp).collect(),
            kd: motors.iter().map(|m| m.kd).collect(),
            torque_limit: motors.iter().map(|m| m.joint_torque_limit()).collect(),
            no_load_speed: motors.iter().map(|m| m.joint_no_load_speed()).collect(),
            pd_law: "every physics substep: torque = clip(kp * (target - q), -limit(qd), \
                     limit(qd)) - kd * qd, with q and qd the joint's angle and speed and \
                     limit(qd) = torque_limit for |qd| up to no_load_speed / 2, falling \
                     linearly to 0 at |qd| = no_load_speed; the clipped kp term reaches the \
                     joint torque_delay s after it is computed (the kd term is the joint's own \
                     damping, not delayed: MuJoCo's dof_damping); targets held for one policy \
                     step"
                .to_string(),
            torque_delay: Dynamics::default().delay,
            reference,
        }),
        constant_inputs: constant_inputs(clock),
    })
}

/// The gait inputs 38..42 (`CassieEnv::write_task_obs`), constant for a clock of a fixed gait.
fn constant_inputs(clock: &GaitClock) -> Vec<ConstantInput> {
    let (swing, shift) = (clock.swing(), clock.shift());
    let values = [swing[0] as f32, 1.0 - swing[0] as f32, shift[0] as f32, shift[1] as f32];
    values.iter().enumerate().map(|(i, &value)| ConstantInput { index: 38 + i, value }).collect()
}
