//! `--reference`: a clock-synced reference gait added to the PD targets, so that the policy's
//! action is a residual on a stepping motion instead of on a static stance.
//!
//! Why: with joint noise around a standing pose, no amount of reward shaping made our Cassie
//! take a first coordinated step (docs/cassie.md "Results", docs/notebook/: five reward variants
//! stood for 1.7-2.6M steps). With this reference it walked after about 1.3M steps. Peers do the
//! same (humanoid-gym's `target_joint_pos_scale`/`use_ref_actions`, JVRC's and RSS-2020's
//! reference motions).
//!
//! Per leg, with `s` that leg's von Mises swing value (≈ 0 in stance, ≈ 1 in swing) and the
//! command `(x, y, turn)`:
//! * hip pitch `+0.25·x·s` (rad): the swing leg reaches forward (backward for `x < 0`), further
//!   at higher speed;
//! * with `--reference omni`, hip roll `−0.3·y·s`: the swing leg swings away from the
//!   commanded side, and its reaction carries the pelvis toward it (a positive roll moves
//!   either foot to the robot's left, so both legs take the same sign);
//! * with `--reference omni`, hip yaw `+0.35·turn·(s − 0.5)`: the swing foot turns toward the
//!   commanded turn and the stance leg twists the other way, turning the pelvis over it;
//! * knee `−0.5·g·s` with the stepping gain `g = min(1, max(‖(x, y)‖, |turn|) / 0.3)`: the swing
//!   leg folds and lifts its foot whenever the command asks the robot to move;
//! * with `--foot-placement K` (Raibert's foot placement, the capture point's step): hip
//!   roll `+K·e_y·s` and hip pitch `+K·e_x·s`, with `e` the observed pelvis velocity minus
//!   the command in the pelvis's heading frame, so a pushed robot's swing foot lands toward
//!   where the push carries it; and the stepping gain rises with `‖e‖` past a deadband, so a
//!   pushed standing robot steps;
//! * nothing else. A standing command (`x = y = turn = 0`) gives `g = step_in_place` (the
//!   config's floor on `g`): 0, no offset at all, so standing means standing; 1, the knee folds
//!   as in walking and the robot steps in place, ready to catch a push.
//!
//! Roll and yaw were chosen by measurement, not kinematic intuition (the
//! `the_omni_reference_steps_sideways_and_turns_as_commanded` probe, and the forward-trained
//! policy of 2026-11-25, walking at 0.5 m/s with the command's y and turn hidden from it, 2 × 150
//! steps, lateral / yaw-rate means): roll `+0.3·y·s` (the swing foot reaching toward the
//! command) moved the walking robot *against* the command (y = ±0.3 → ∓0.03-0.04 m/s),
//! `−0.3·y·s` with it (±0.03-0.04), `±0.3·y·(s − 0.5)` not at all (≤ 0.01); yaw
//! `+0.35·turn·s` and `+0.35·turn·(s − 0.5)` both turned the walker at ±0.44-0.46 rad/s for
//! ±0.5 (the policy's own heading correction alone: ±0.37-0.40; the opposite sign: 0.35), and
//! from rest `(s − 0.5)` turned both ways alike (±0.11 rad/s over the first second) where `s`
//! did not (+0.09 / +0.02). Sizes: 0.3 rad of roll at 0.3 m/s and 0.35 of yaw at 0.5 rad/s
//! (0.17 rad, the turn of one 0.35 s step) match the forward reach's 0.25 rad at 1 m/s.
//!
//! Mirror symmetry: the mirrored state has the legs' swing values swapped (half a cycle later),
//! `y` and `turn` negated; pitch and knee keep their sign in the action mirror list, roll and
//! yaw change it, and `g` is even in `y` and `turn`, so the mirrored reference is exactly the
//! reference of the mirrored state (tested below and by the env's physical mirror test).

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use super::commands::Command;
use crate::envs::cassie::robot::N;

/// Which reference gait `--reference` selects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ReferenceKind {
    /// Hip-pitch and knee offsets in sync with the gait clock, scaled by the command: forward
    /// and backward only (runs before omnidirectional walking).
    #[default]
    Clock,
    /// `clock` plus hip roll and hip yaw for the lateral and turn commands: every direction.
    Omni,
    /// No reference: PD targets are the neutral stance plus the action (roadrunner's env).
    None,
}

/// Hip-pitch amplitude per m/s of forward command (rad·s/m) at the default `--forward-reach`.
pub const HIP_PITCH_PER_SPEED: f32 = 0.25;
/// Hip-roll amplitude per m/s of lateral command (rad·s/m) at the default `--lateral-reach`.
#[cfg(test)]
const HIP_ROLL_PER_SPEED: f32 = -0.3;

/// The hip-roll amplitude per m/s of lateral command for a `--lateral-reach` of `reach`
/// (rad·s/m). Negative: the swing leg swings away from the commanded side (measured, see the
/// module doc).
pub fn hip_roll_per_speed(reach: f64) -> f32 {
    -(reach as f32)
}
/// Hip-yaw amplitude per rad/s of turn command (rad·s/rad).
pub const HIP_YAW_PER_TURN: f32 = 0.35;
/// Knee fold at full stepping gain (rad, negative folds the leg).
pub const KNEE_FOLD: f32 = -0.5;
/// Command magnitude (m/s or rad/s) at which the stepping gain reaches 1, at the default
/// `--full-step-speed` (what runs before the setting trained with).
pub const FULL_STEP_SPEED: f64 = 0.3;

/// Index of hip roll, yaw, pitch and knee within one leg's five motors (roll, yaw, pitch,
/// knee, foot).
const HIP_ROLL: usize = 0;
const HIP_YAW: usize = 1;
const HIP_PITCH: usize = 2;
const KNEE: usize = 3;

/// The velocity error (m/s) below which the foot placement leaves the stepping gain alone:
/// twice the training noise on the observed velocity (σ 0.1 m/s, `velocity_noise`), so a standing
/// robot does not step at noise.
pub const PLACEMENT_DEADBAND: f32 = 0.2;

/// The reference gait's settings, from the env's config.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gait {
    /// Which reference (`--reference`).
    pub kind: ReferenceKind,
    /// The stepping gain's floor at a standing command (`--step-in-place`).
    pub floor: f32,
    /// The omni reference's hip roll per m/s of lateral command ([`hip_roll_per_speed`]).
    pub roll_per_speed: f32,
    /// The hip pitch per m/s of forward command (`--forward-reach`).
    pub pitch_per_speed: f32,
    /// The command size from which the step is full (`--full-step-speed`).
    pub full_step_speed: f32,
    /// The foot placement gain (rad·s/m, `--foot-placement`): hip roll and pitch per m/s of
    /// velocity error; 0: none.
    pub placement: f32,
}

impl Gait {
    /// Stepping gain `g ∈ [floor, 1]` of a command: `floor` (`step_in_place`) for standing, 1
    /// from 0.3 m/s (or rad/s) up; with foot placement, also 1 from a velocity error `error`
    /// of 0.3 m/s past [`PLACEMENT_DEADBAND`].
    pub fn stepping_gain(&self, command: &Command, error: [f32; 2]) -> f32 {
        let planar = (command.x * command.x + command.y * command.y).sqrt() as f32;
        let mut asked = planar.max(command.turn.abs() as f32);
        if self.placement > 0.0 {
            asked = asked.max(error[0].hypot(error[1]) - PLACEMENT_DEADBAND);
        }
        (asked / self.full_step_speed).clamp(self.floor, 1.0)
    }

    /// Writes the reference offsets for swing values `swing` [L, R], `command` and the
    /// velocity error `error` (observed pelvis velocity minus the command, `[forward,
    /// lateral]` in the pelvis's heading frame; read only with foot placement) into `out`
    /// (motor order: left roll, yaw, pitch, knee, foot, then the right leg).
    pub fn offsets(&self, swing: [f32; 2], command: &Command, error: [f32; 2], out: &mut [f32; N]) {
        *out = [0.0; N];
        if self.kind == ReferenceKind::None {
            return;
        }
        let g = self.stepping_gain(command, error);
        let (x, y, turn) = (command.x as f32, command.y as f32, command.turn as f32);
        let (roll, yaw) = match self.kind {
            ReferenceKind::Omni => (self.roll_per_speed, HIP_YAW_PER_TURN),
            ReferenceKind::Clock | ReferenceKind::None => (0.0, 0.0),
        };
        let k = self.placement;
        for (leg, s) in swing.into_iter().enumerate() {
            out[5 * leg + HIP_ROLL] = (roll * y + k * error[1]) * s;
            out[5 * leg + HIP_YAW] = yaw * turn * (s - 0.5);
            out[5 * leg + HIP_PITCH] = (self.pitch_per_speed * x + k * error[0]) * s;
            out[5 * leg + KNEE] = KNEE_FOLD * g * s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envs::cassie::clock::GaitClock;
    use crate::envs::cassie::mirror_lists;

    fn cmd(x: f64, y: f64, turn: f64) -> Command {
        Command { x, y, turn }
    }

    fn gait(kind: ReferenceKind, floor: f32, roll_per_speed: f32) -> Gait {
        Gait {
            kind,
            floor,
            roll_per_speed,
            pitch_per_speed: HIP_PITCH_PER_SPEED,
            full_step_speed: FULL_STEP_SPEED as f32,
            placement: 0.0,
        }
    }

    /// `--forward-reach` sets the swing leg's hip pitch per m/s of forward command, in the
    /// offsets and in an export's controller; the stance leg and the knee are unchanged.
    #[test]
    fn the_forward_reach_scales_the_hip_pitch() {
        let reach = |r: f32| {
            let g = Gait { pitch_per_speed: r, ..gait(ReferenceKind::Clock, 0.0, 0.0) };
            let mut out = [0.0; N];
            g.offsets([1.0, 0.0], &cmd(1.2, 0.0, 0.0), [0.0; 2], &mut out);
            out
        };
        let (base, long) = (reach(HIP_PITCH_PER_SPEED), reach(0.4));
        assert!(
            (base[HIP_PITCH] - 0.25 * 1.2).abs() < 1e-6 && (long[HIP_PITCH] - 0.48).abs() < 1e-6
        );
        assert_eq!((long[5 + HIP_PITCH], long[KNEE]), (base[5 + HIP_PITCH], base[KNEE]));
        let config = crate::envs::cassie::CassieConfig { forward_reach: 0.4, ..Default::default() };
        assert_eq!(config.gait().pitch_per_speed, 0.4);
        let clock = GaitClock::new(0.7, 50.0, [0.5, 0.5], [0.0, 0.5], 0.1);
        let spec =
            crate::envs::cassie::controller::describe(&config, &clock).expect("a controller");
        assert_eq!(spec.pd.and_then(|p| p.reference).map(|r| r.hip_pitch_per_speed), Some(0.4));
    }

    /// `--full-step-speed` sets the command size of the full step: at the default 0.3 a 0.2
    /// m/s sidestep folds the swing knee by two thirds of the full fold, at 0.1 by all of it;
    /// standing stays at the floor, and an export's controller carries the setting.
    #[test]
    fn the_full_step_speed_sets_where_the_step_is_full() {
        let knee = |full: f32| {
            let g = Gait { full_step_speed: full, ..gait(ReferenceKind::Omni, 0.0, -0.3) };
            let mut out = [0.0; N];
            g.offsets([1.0, 0.0], &cmd(0.0, 0.2, 0.0), [0.0; 2], &mut out);
            (out[KNEE], g.stepping_gain(&cmd(0.0, 0.0, 0.0), [0.0; 2]))
        };
        let ((part, stand_a), (full, stand_b)) = (knee(FULL_STEP_SPEED as f32), knee(0.1));
        assert!((part - KNEE_FOLD * 2.0 / 3.0).abs() < 1e-6, "{part}");
        assert!((full - KNEE_FOLD).abs() < 1e-6, "{full}");
        assert_eq!((stand_a, stand_b), (0.0, 0.0));
        let config =
            crate::envs::cassie::CassieConfig { full_step_speed: 0.1, ..Default::default() };
        assert_eq!(config.gait().full_step_speed, 0.1);
        let clock = GaitClock::new(0.7, 50.0, [0.5, 0.5], [0.0, 0.5], 0.1);
        let spec =
            crate::envs::cassie::controller::describe(&config, &clock).expect("a controller");
        assert_eq!(spec.pd.and_then(|p| p.reference).map(|r| r.full_step_speed), Some(0.1));
    }

    #[test]
    fn a_standing_command_gives_no_offset_at_any_phase() {
        let mut clock = GaitClock::new(0.7, 50.0, [0.5, 0.5], [0.0, 0.5], 0.1);
        let mut out = [1.0; N];
        for _ in 0..35 {
            let vm = clock.von_mises();
            gait(ReferenceKind::Clock, 0.0, HIP_ROLL_PER_SPEED).offsets(
                [vm[0] as f32, vm[1] as f32],
                &cmd(0.0, 0.0, 0.0),
                [0.0; 2],
                &mut out,
            );
            assert_eq!(out, [0.0; N]);
            clock.increment();
        }
        gait(ReferenceKind::None, 0.0, HIP_ROLL_PER_SPEED).offsets(
            [1.0, 1.0],
            &cmd(1.0, 0.0, 0.0),
            [0.0; 2],
            &mut out,
        );
        assert_eq!(out, [0.0; N], "--reference none adds nothing");
    }

    /// `step_in_place`: a standing command folds the swing knee by the floor's share of the
    /// walking fold and never reaches forward, so the robot steps in place.
    #[test]
    fn stepping_in_place_folds_the_swing_knee_at_a_standing_command() {
        let mut out = [0.0; N];
        gait(ReferenceKind::Clock, 1.0, HIP_ROLL_PER_SPEED).offsets(
            [1.0, 0.0],
            &cmd(0.0, 0.0, 0.0),
            [0.0; 2],
            &mut out,
        );
        assert_eq!((out[2], out[3]), (0.0, KNEE_FOLD), "{out:?}");
        assert_eq!(&out[5..], &[0.0; 5], "the stance leg gets nothing");
        gait(ReferenceKind::Clock, 0.5, HIP_ROLL_PER_SPEED).offsets(
            [0.0, 1.0],
            &cmd(0.0, 0.0, 0.0),
            [0.0; 2],
            &mut out,
        );
        assert_eq!((out[7], out[8]), (0.0, 0.5 * KNEE_FOLD), "{out:?}");
        // Walking commands are unchanged by the floor.
        let mut walk = [0.0; N];
        gait(ReferenceKind::Clock, 1.0, HIP_ROLL_PER_SPEED).offsets(
            [1.0, 0.0],
            &cmd(1.0, 0.0, 0.0),
            [0.0; 2],
            &mut out,
        );
        gait(ReferenceKind::Clock, 0.0, HIP_ROLL_PER_SPEED).offsets(
            [1.0, 0.0],
            &cmd(1.0, 0.0, 0.0),
            [0.0; 2],
            &mut walk,
        );
        assert_eq!(out, walk);
    }

    #[test]
    fn the_swing_leg_reaches_forward_and_folds_scaled_by_the_command() {
        let mut out = [0.0; N];
        gait(ReferenceKind::Clock, 0.0, HIP_ROLL_PER_SPEED).offsets(
            [1.0, 0.0],
            &cmd(1.0, 0.0, 0.0),
            [0.0; 2],
            &mut out,
        );
        assert_eq!(out[2], 0.25);
        assert_eq!(out[3], -0.5);
        assert_eq!(&out[5..], &[0.0; 5], "the stance leg gets nothing");
        gait(ReferenceKind::Clock, 0.0, HIP_ROLL_PER_SPEED).offsets(
            [1.0, 0.0],
            &cmd(0.15, 0.0, 0.0),
            [0.0; 2],
            &mut out,
        );
        assert!((out[2] - 0.0375).abs() < 1e-6 && (out[3] + 0.25).abs() < 1e-6, "{out:?}");
        // Turning in place steps (knee) without reaching forward (pitch); `clock` turns
        // nothing, `omni` turns the swing foot (yaw) without reaching sideways (roll).
        gait(ReferenceKind::Clock, 0.0, HIP_ROLL_PER_SPEED).offsets(
            [1.0, 0.0],
            &cmd(0.0, 0.0, 0.4),
            [0.0; 2],
            &mut out,
        );
        assert_eq!((out[0], out[1], out[2], out[3]), (0.0, 0.0, 0.0, -0.5));
        gait(ReferenceKind::Omni, 0.0, HIP_ROLL_PER_SPEED).offsets(
            [1.0, 0.0],
            &cmd(0.0, 0.0, 0.4),
            [0.0; 2],
            &mut out,
        );
        assert_eq!((out[0], out[2], out[3]), (0.0, 0.0, -0.5));
        assert!((out[1] - 0.07).abs() < 1e-6 && (out[6] + 0.07).abs() < 1e-6, "{out:?}");
        // A sidestep rolls the swing leg away from the command, both legs the same sign; half
        // way through a swing, half of it; the stance leg gets no roll.
        gait(ReferenceKind::Omni, 0.0, HIP_ROLL_PER_SPEED).offsets(
            [0.5, 0.0],
            &cmd(0.0, -0.3, 0.0),
            [0.0; 2],
            &mut out,
        );
        assert!((out[0] - 0.045).abs() < 1e-6 && out[2] == 0.0 && out[5] == 0.0, "{out:?}");
        gait(ReferenceKind::Omni, 0.0, HIP_ROLL_PER_SPEED).offsets(
            [0.0, 1.0],
            &cmd(0.0, -0.3, 0.0),
            [0.0; 2],
            &mut out,
        );
        assert!((out[5] - 0.09).abs() < 1e-6 && out[0] == 0.0, "{out:?}");
        // `--lateral-reach 0.8`: the same roll, 0.8/0.3 as large.
        gait(ReferenceKind::Omni, 0.0, hip_roll_per_speed(0.8)).offsets(
            [0.0, 1.0],
            &cmd(0.0, -0.3, 0.0),
            [0.0; 2],
            &mut out,
        );
        assert!((out[5] - 0.24).abs() < 1e-6 && out[0] == 0.0, "{out:?}");
        assert_eq!(hip_roll_per_speed(0.3), HIP_ROLL_PER_SPEED, "the default reach");
        // Forward commands get the same offsets from both.
        let mut clock = [0.0; N];
        gait(ReferenceKind::Omni, 0.0, HIP_ROLL_PER_SPEED).offsets(
            [0.7, 0.1],
            &cmd(0.8, 0.0, 0.0),
            [0.0; 2],
            &mut out,
        );
        gait(ReferenceKind::Clock, 0.0, HIP_ROLL_PER_SPEED).offsets(
            [0.7, 0.1],
            &cmd(0.8, 0.0, 0.0),
            [0.0; 2],
            &mut clock,
        );
        assert_eq!(out, clock);
    }

    /// The reference of the mirrored state (legs' swing swapped, y and turn negated) is the
    /// mirror image of the reference, for every phase and a spread of commands.
    #[test]
    fn the_reference_is_mirror_symmetric() {
        let mirror = mirror_lists::action().unwrap();
        let clock = GaitClock::new(0.7, 50.0, [0.5, 0.5], [0.0, 0.5], 0.1);
        let (mut a, mut b, mut mirrored) = ([0.0; N], [0.0; N], [0.0; N]);
        for c in [cmd(1.0, 0.2, 0.3), cmd(0.5, -0.1, 0.0), cmd(0.0, 0.0, -0.4), cmd(-0.3, 0.0, 0.0)]
        {
            let mc = cmd(c.x, -c.y, -c.turn);
            for i in 0..70 {
                let phase = 0.7 * i as f64 / 70.0;
                let s = [clock.von_mises_exact(0, phase), clock.von_mises_exact(1, phase)];
                for (floor, kind) in [0.0, 1.0]
                    .into_iter()
                    .flat_map(|f| [(f, ReferenceKind::Clock), (f, ReferenceKind::Omni)])
                {
                    let (sl, sr) = (s[0] as f32, s[1] as f32);
                    let roll = hip_roll_per_speed(if floor > 0.0 { 0.8 } else { 0.3 });
                    // With foot placement, a velocity error whose lateral part the mirror
                    // negates.
                    for (placement, e) in [(0.0, [0.0, 0.0]), (0.35, [0.4, -0.3])] {
                        let g = Gait { placement, ..gait(kind, floor, roll) };
                        g.offsets([sl, sr], &c, e, &mut a);
                        g.offsets([sr, sl], &mc, [e[0], -e[1]], &mut b);
                        mirror.apply(&a, &mut mirrored);
                        assert_eq!(
                            mirrored, b,
                            "{kind:?}, command {c:?}, phase {phase}, floor {floor}, \
                             placement {placement}"
                        );
                    }
                }
            }
        }
    }

    /// `--foot-placement`: the swing foot reaches along the velocity error (a robot carried
    /// left and back places its foot left and back), the stance leg gets nothing, and a
    /// standing robot starts stepping only past the deadband.
    #[test]
    fn foot_placement_reaches_along_the_velocity_error() {
        let g = Gait { placement: 0.35, ..gait(ReferenceKind::Omni, 0.0, HIP_ROLL_PER_SPEED) };
        let mut out = [0.0; N];
        g.offsets([1.0, 0.0], &cmd(0.0, 0.0, 0.0), [-0.4, 0.6], &mut out);
        assert!((out[0] - 0.21).abs() < 1e-6, "roll toward +y: {out:?}");
        assert!((out[2] + 0.14).abs() < 1e-6, "pitch back: {out:?}");
        assert_eq!(&out[5..], &[0.0; 5], "the stance leg gets nothing");
        // ‖e‖ = 0.72: 0.52 past the deadband, a full step.
        assert_eq!(out[3], KNEE_FOLD);
        // Inside the deadband a standing robot stands; just past it, it begins to fold.
        assert_eq!(g.stepping_gain(&cmd(0.0, 0.0, 0.0), [0.15, -0.1]), 0.0);
        let gain = g.stepping_gain(&cmd(0.0, 0.0, 0.0), [0.0, PLACEMENT_DEADBAND + 0.15]);
        assert!((gain - 0.5).abs() < 1e-5, "{gain}");
        // A walking command's own gain is kept, and without placement the error is ignored.
        assert_eq!(g.stepping_gain(&cmd(1.0, 0.0, 0.0), [0.0, 0.0]), 1.0);
        let plain = gait(ReferenceKind::Omni, 0.0, HIP_ROLL_PER_SPEED);
        assert_eq!(plain.stepping_gain(&cmd(0.0, 0.0, 0.0), [0.0, 2.0]), 0.0);
        plain.offsets([1.0, 0.0], &cmd(0.0, 0.0, 0.0), [-0.4, 0.6], &mut out);
        assert_eq!(out, [0.0; N]);
    }
}
