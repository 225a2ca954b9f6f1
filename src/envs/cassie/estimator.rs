//! The pelvis velocity as a robot's state estimator gives it (`--obs estimate`): leg
//! odometry, low-passed.
//!
//! A robot cannot read its pelvis velocity; it computes it. Legged robots' estimators rest on
//! the stance foot: with the foot assumed still, the joint encoders and the IMU give the
//! pelvis's motion relative to it. This estimate is that odometry over the last policy step:
//! the pelvis's displacement minus the stance foot's (the foot-mid site, where the sole meets
//! the ground), over the step's duration, weighted over the feet by their ground forces. So
//! its errors are the real ones: wrong by the foot's own motion when it slips or rolls,
//! blind in flight and when the stance foot changes (it holds the last value, as an estimator
//! without a stance leg falls back on the IMU for a moment), half a step late, and lagging a
//! push by its filter. A first-order low-pass with time constant `lag` smooths it; the
//! observation noise then adds the sensors'.

use rapier3d::glamx::Vec3;

use super::physics::Physics;

/// A foot's ground force (N) above which it is in stance.
const STANCE: f32 = 10.0;

/// What the odometry remembers from its last update.
#[derive(Debug, Clone, Copy)]
struct Previous {
    pelvis: Vec3,
    feet: [Vec3; 2],
    stance: [f32; 2],
}

/// The estimator's state: its last estimate (world frame), the last update's positions and the
/// filter's time constant.
#[derive(Debug, Clone, Copy)]
pub struct VelocityEstimator {
    estimate: Vec3,
    previous: Option<Previous>,
    lag: f32,
}

impl VelocityEstimator {
    /// An estimator whose low-pass filter has the time constant `lag` s (0: none).
    pub fn new(lag: f64) -> Self {
        Self { estimate: Vec3::ZERO, previous: None, lag: lag as f32 }
    }

    /// Starts an episode at the robot's velocity `v` (at rest after a reset).
    pub fn reset(&mut self, v: Vec3) {
        self.estimate = v;
        self.previous = None;
    }

    /// One update from the robot's state now, `elapsed` s after the last one; the new estimate
    /// (world frame, m/s).
    pub fn update(&mut self, sim: &dyn Physics, elapsed: f32) -> Vec3 {
        let now = Previous {
            pelvis: sim.base_position(),
            feet: [sim.foot_site(0).0, sim.foot_site(1).0],
            stance: [0, 1].map(|side| {
                let force = sim.foot_force(side).length();
                if force > STANCE {
                    force
                } else {
                    0.0
                }
            }),
        };
        if let Some(before) = self.previous.filter(|_| elapsed > 0.0) {
            // A foot counts when it stood at both ends of the step.
            let weights = [0, 1].map(|s| now.stance[s].min(before.stance[s]));
            let total = weights[0] + weights[1];
            if total > 0.0 {
                let moved = now.pelvis - before.pelvis;
                let foot = (0..2).fold(Vec3::ZERO, |sum, s| {
                    sum + (now.feet[s] - before.feet[s]) * (weights[s] / total)
                });
                let raw = (moved - foot) / elapsed;
                let gain = elapsed / (self.lag + elapsed);
                self.estimate += (raw - self.estimate) * gain;
            }
        }
        self.previous = Some(now);
        self.estimate
    }
}
