//! What a step amounts to: the reward, whether the robot fell, and the foot metrics the
//! evaluations report.

use rapier3d::glamx::EulerRot;

use super::CassieEnv;
use crate::envs::cassie::reward::{self, RewardInputs, RewardKind};
use crate::envs::cassie::robot::N;

/// [`CassieEnv::fall`]'s bounds: the lowest pelvis height (m) and the largest |roll| and |pitch|.
const MIN_HEIGHT: f32 = 0.65;
const MAX_TILT: f32 = 20.0 * std::f32::consts::PI / 180.0;

/// Where [`CassieEnv::measure_feet`] writes in the metrics: `foot_slide` (which the reward's
/// `slide` term also reads) and `foot_lift`.
pub(super) const FOOT_SLIDE: usize = 4;
pub(super) const FOOT_LIFT: usize = 5;

/// The contact force (N) from which a foot counts as loaded for the `foot_slide` metric: 3 %
/// of the robot's weight (327 N), so a foot that only grazes the ground is not counted.
const FOOT_LOADED: f32 = 10.0;

impl CassieEnv {
    /// The evaluation's foot metrics after a step of `elapsed` seconds: `foot_slide`, the
    /// summed horizontal speed (m/s) of the foot sites that were loaded (a contact force over
    /// [`FOOT_LOADED`]) both before and after the step, and `foot_lift`, how far the higher foot
    /// site is above the lower one (m). Why: a sidestep can be a shuffle, a foot dragged along
    /// the ground instead of lifted (docs/notebook/cassie-runs.md: on rapier the trailing foot
    /// slid the whole way), and the speeds alone do not show it. Training steps skip this
    /// unless the reward's `slide` term (`--slide-penalty`) reads it; evaluations read it as
    /// a metric.
    pub(super) fn measure_feet(&mut self, elapsed: f32) {
        let sites = [self.sim.foot_site(0).0, self.sim.foot_site(1).0];
        let mut slide = 0.0;
        for (side, site) in sites.into_iter().enumerate() {
            let loaded = self.sim.foot_force(side).length() > FOOT_LOADED;
            if let (true, Some(before)) = (loaded, self.loaded_feet[side]) {
                slide += (site - before).truncate().length() / elapsed;
            }
            self.loaded_feet[side] = loaded.then_some(site);
        }
        self.metrics[FOOT_SLIDE].1 = slide;
        self.metrics[FOOT_LIFT].1 = (sites[0].z - sites[1].z).abs();
    }

    pub(super) fn reward(&mut self, action: &[f32; N]) -> f32 {
        let sim = &self.sim;
        let foot = |side| {
            let (lin, ang) = sim.foot_velocity(side);
            (lin.length_squared() + ang.length_squared()).sqrt()
        };
        let sites = [sim.foot_site(0), sim.foot_site(1)];
        let vm = self.clock.von_mises();
        let lin = self.clock.linear(0.2);
        let swing = self.clock.linear(0.7);
        let inputs = RewardInputs {
            command: [self.command.x as f32, self.command.y as f32],
            target_heading: self.heading as f32,
            base_rotation: sim.base_rotation(),
            base_linvel: sim.base_linvel(),
            base_angvel: sim.base_angvel(),
            base_acceleration: sim.base_acceleration(),
            foot_force: [sim.foot_force(0), sim.foot_force(1)],
            foot_speed: [foot(0), foot(1)],
            foot_height: [0, 1].map(|k| sites[k].0.z - self.ground_under(sites[k].0)),
            foot_rotation: [sites[0].1, sites[1].1],
            von_mises: [vm[0] as f32, vm[1] as f32],
            stepping_gain: self.stepping_gain,
            upright_weight: self.config.upright as f32,
            base_height: self.pelvis_height(),
            height_target: self.config.height_target as f32,
            foot_slide: self.metrics[FOOT_SLIDE].1,
            slide_weight: self.config.slide_penalty as f32,
            clearance: self.config.clearance as f32,
            clearance_scale: reward::clearance_scale(self.config.clearance),
            progress: self.config.progress,
            turn: self.command.turn as f32,
            turn_reward: self.config.turn_reward,
            linear_clock: [lin[0] as f32, lin[1] as f32],
            linear_swing_clock: [swing[0] as f32, swing[1] as f32],
            action: *action,
            last_action: self.last_action,
            torque: *sim.applied_torques(),
            torque_limit: self.torque_limits,
        };
        match self.config.reward {
            RewardKind::Walk => reward::walk(&inputs, &mut self.terms),
            RewardKind::Vonmises => reward::von_mises(&inputs, &mut self.terms),
            RewardKind::Linear => reward::linear(&inputs, &mut self.terms),
        }
    }

    /// The ground's height (m) under world point `p`: the episode's terrain, or the floor at 0.
    pub(super) fn ground_under(&self, p: rapier3d::glamx::Vec3) -> f32 {
        match &self.terrain {
            Some(field) => field
                .height_at(p.x, p.y)
                .unwrap_or_else(|| crate::envs::terrain::floor_under(field.range()[0])),
            None => 0.0,
        }
    }

    /// The pelvis's height (m) above the ground under it.
    pub(super) fn pelvis_height(&self) -> f32 {
        let p = self.sim.base_position();
        p.z - self.ground_under(p)
    }

    /// Fell: |roll| or |pitch| > 20°, pelvis below 0.65 m (above the ground under it), or a heel spring touching anything
    /// (knee walking). The linear reward also ends episodes scoring below 0.4, as the
    /// reference's does. Returns which, first match in that order.
    pub(super) fn fall(&self, reward: f32) -> Option<Fall> {
        let (_, pitch, roll) = self.sim.base_rotation().to_euler(EulerRot::ZYX);
        if roll.abs() > MAX_TILT {
            Some(Fall::Roll)
        } else if pitch.abs() > MAX_TILT {
            Some(Fall::Pitch)
        } else if self.pelvis_height() < MIN_HEIGHT {
            Some(Fall::Low)
        } else if self.sim.knee_contact() {
            Some(Fall::Knee)
        } else if self.config.reward == RewardKind::Linear && reward < 0.4 {
            Some(Fall::Reward)
        } else {
            None
        }
    }
}

/// Which of [`CassieEnv::fall`]'s conditions ended an episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fall {
    Roll,
    Pitch,
    Low,
    Knee,
    Reward,
}

impl Fall {
    pub(super) fn describe(self) -> &'static str {
        match self {
            Self::Roll => "pelvis roll beyond 20°",
            Self::Pitch => "pelvis pitch beyond 20°",
            Self::Low => "pelvis below 0.65 m",
            Self::Knee => "heel spring touching",
            Self::Reward => "reward below 0.4",
        }
    }
}
