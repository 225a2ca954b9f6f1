//! The training perturbations and the robot's sensing: randomized dynamics, sensor latency and
//! IMU bias, and the pushes (training's own, or `gait eval --push`'s), each scaled by the
//! perturbations' strength at this point of training.

use rand::Rng;

use super::CassieEnv;
use crate::envs::cassie::critic_obs::LastPush;
use crate::envs::cassie::robot::Dynamics;
use crate::envs::Pushes;

/// The lab model's total mass (kg): a push of speed change `v` is an impulse of `ROBOT_MASS·v`.
const ROBOT_MASS: f32 = 33.312;

/// Seconds between pushes at evaluation (`gait eval --push`, training's evaluations): U(2, 5),
/// whatever a run trained with, so every run is measured alike. Training pushes come every
/// U(`push_every`, 2.5 `push_every`) s.
const PUSH_EVERY: std::ops::Range<f64> = 2.0..5.0;
/// How the episode's sensors differ from the simulator's state: drawn at every reset.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Sensing {
    /// Observation latency (s): the robot state observed at a step's end is the one this
    /// long before it (to the nearest substep, at most the whole step).
    pub(super) latency: f64,
    /// A constant tilt of the observed orientation about roll and pitch (rad).
    pub(super) tilt: [f32; 2],
    /// A constant offset of the observed angular velocity (rad/s, body frame).
    pub(super) gyro: [f32; 3],
}

impl CassieEnv {
    /// The episode's dynamics: nominal, or randomized in training episodes with
    /// `dynamics_randomization` (evaluations, `gait eval` included, run the nominal model, as the
    /// reference's eval does). The floor's friction is the configured factor in both.
    pub(super) fn draw_dynamics(&mut self) -> Dynamics {
        // At the default 1.0 every product below is the factor it multiplies, bit for bit, so
        // runs from before the setting replay.
        let floor = self.config.friction as f32;
        if !self.config.dynamics_randomization || self.training.is_none() {
            return Dynamics { friction: floor, ..Dynamics::default() };
        }
        // Every range scaled by the perturbations' strength at this point of training.
        let k = self.robustness() as f32;
        let rng = &mut self.rng;
        let mut d = Dynamics::default();
        // Ranges: the reference's, narrowed where its full width cost a 30-minute run its
        // tracking (1 m/s commanded, 0.62 walked on MuJoCo; docs/notebook/cassie-runs.md):
        // masses ±15 % (not ±25 %), damping ×0.5-2 (not ×0.5-3.5), encoder offsets ±0.02 rad
        // (not ±0.05), slope ±0.03 rad (not ±0.05).
        for s in &mut d.mass_scale {
            *s = 1.0 + k * rng.gen_range(-0.15..0.15);
        }
        for c in d.com_offset.iter_mut().flatten() {
            *c = k * rng.gen_range(-0.01..0.01);
        }
        let centered = self.config.dr_centered;
        for s in &mut d.damping_scale {
            *s = if centered {
                2f32.powf(k * rng.gen_range(-1.0..1.0))
            } else {
                1.0 + k * rng.gen_range(-0.5..1.0)
            };
        }
        d.friction = floor * (1.0 + k * rng.gen_range(-0.2..0.2));
        // The reference drew the slope from the friction range (±0.2 rad).
        d.slope = [k * rng.gen_range(-0.03..0.03), k * rng.gen_range(-0.03..0.03)];
        // The reference drew 3-6 cycles at 2 kHz (1.5-3 ms); as a time, 2-4 ms at any rate.
        d.delay = 0.003 + k * rng.gen_range(-0.001..0.001);
        d.efficiency = if centered {
            1.0 + k * rng.gen_range(-0.05..0.05)
        } else {
            1.0 - k * rng.gen_range(0.0..0.1)
        };
        for n in &mut d.encoder_noise {
            *n = k * rng.gen_range(-0.02..0.02);
        }
        d.spring_scale = 1.0 + k * rng.gen_range(-0.2..0.2);
        d
    }

    /// The episode's latency and IMU bias: training's drawn up to `latency` and `imu_bias`
    /// (scaled by the perturbations' strength), every other episode's latency exactly
    /// `eval_latency` and bias drawn up to `imu_bias · eval_noise`. Draws nothing where both
    /// are zero, so runs without them replay draw for draw.
    pub(super) fn draw_sensing(&mut self) -> Sensing {
        let (latency, bias) = match self.training {
            Some(_) => {
                let k = self.robustness();
                (self.config.latency * k, self.config.imu_bias * self.config.obs_noise * k)
            }
            None => (self.config.eval_latency, self.config.imu_bias * self.config.eval_noise),
        };
        let rng = &mut self.rng;
        let latency = match (self.training, latency > 0.0) {
            (Some(_), true) => rng.gen_range(0.0..=latency),
            _ => latency,
        };
        let b = bias as f32;
        let mut draw = || if b > 0.0 { rng.gen_range(-b..=b) } else { 0.0 };
        Sensing { latency, tilt: [draw(), draw()], gyro: [draw(), draw(), draw()] }
    }

    /// The sensor noise's scale now, in multiples of its levels: training's `obs_noise`
    /// (ramped with the perturbations), every other episode's `eval_noise`.
    pub(super) fn noise_scale(&self) -> f64 {
        match self.training {
            Some(_) => self.config.obs_noise * self.robustness(),
            None => self.config.eval_noise,
        }
    }

    /// The training perturbations' strength now ([`CassieConfig::robustness_at`]; full outside
    /// training, where only `gait eval --push` can ask for them).
    pub(super) fn robustness(&self) -> f64 {
        self.training.map_or(1.0, |t| self.config.robustness_at(t, self.stage_from))
    }

    /// Whether this is training with the perturbations begun (after `--robust-start` and its
    /// gate): when the late stage's settings (command holds, the late MuJoCo share) apply.
    pub(super) fn perturbed(&self) -> bool {
        self.training.is_some() && self.robustness() > 0.0
    }

    /// The pushes' top speed (m/s) in force: `gait eval --push`'s, else the config's scaled by
    /// the perturbations' strength.
    pub(super) fn push_speed(&self) -> f32 {
        match self.pushes {
            Pushes::Own => {
                let strength =
                    self.training.map_or(1.0, |t| self.config.push_strength_at(t, self.stage_from));
                (self.config.push * strength) as f32
            }
            Pushes::Full => self.config.push as f32,
            Pushes::UpTo(v) | Pushes::Exactly(v) => v,
        }
    }

    /// The policy step of the next push after `now` (none without pushes).
    pub(super) fn schedule_push(&mut self, now: u32) {
        let every = match self.pushes {
            Pushes::Own => self.config.push_every..2.5 * self.config.push_every,
            Pushes::Full | Pushes::UpTo(_) | Pushes::Exactly(_) => PUSH_EVERY,
        };
        self.next_push = if self.push_speed() > 0.0 {
            now + (self.rng.gen_range(every) * self.config.policy_rate).round().max(1.0) as u32
        } else {
            u32::MAX
        };
    }

    /// Starts or ends a push before a policy step of `duration` seconds: a push is the
    /// impulse `ROBOT_MASS · v` in a random horizontal direction (or the one
    /// [`Walking::push_now`](crate::envs::Walking::push_now) asked for), held for that one step.
    pub(super) fn update_push(&mut self, duration: f32) {
        if self.pushing {
            self.sim.set_push(rapier3d::glamx::Vec3::ZERO);
            self.pushing = false;
        }
        let asked = self.asked_push.take();
        if asked.is_none() && self.steps != self.next_push {
            return;
        }
        // (direction cosine, sine, speed); the force is computed as it always was, so that
        // runs without asked pushes keep their numbers to the bit.
        let (c, s, speed) = match asked {
            Some([x, y]) => {
                let speed = x.hypot(y);
                if speed > 0.0 {
                    (x / speed, y / speed, speed)
                } else {
                    (1.0, 0.0, 0.0)
                }
            }
            None => {
                let speed = match self.pushes {
                    Pushes::Exactly(v) => v,
                    Pushes::Own | Pushes::Full | Pushes::UpTo(_) => {
                        self.rng.gen_range(0.0..=self.push_speed())
                    }
                };
                let angle = self.rng.gen_range(0.0..std::f32::consts::TAU);
                let (s, c) = angle.sin_cos();
                self.schedule_push(self.steps);
                (c, s, speed)
            }
        };
        let force = ROBOT_MASS * speed / duration;
        self.sim.set_push(rapier3d::glamx::Vec3::new(c * force, s * force, 0.0));
        self.pushing = true;
        let at = self.steps as f32 / self.config.policy_rate as f32;
        self.last_push = Some(LastPush { at, dv: [c * speed, s * speed] });
    }
}
