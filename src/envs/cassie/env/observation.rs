//! What the robot observes: the observation's layout (the robot state, the task part, the
//! velocity input, the history), reading it from the simulator, and the sensors' noise and
//! bias on it.

use rand::Rng;
use rand_distr::StandardNormal;
use rapier3d::glamx::{EulerRot, Quat, Vec3};

use super::CassieEnv;
use crate::envs::cassie::config::{
    ObsKind, NOISE_STD, REFERENCE_ORIENTATION_NOISE, REFERENCE_VELOCITY_NOISE,
};
use crate::envs::cassie::critic_obs;
use crate::envs::cassie::height_scan;
use crate::envs::cassie::layout::{self, HISTORY_FRAME, ROBOT_STATE};
use crate::envs::cassie::reward;
use crate::envs::cassie::robot::N;
use crate::envs::cassie::robot::PASSIVE;

impl CassieEnv {
    /// Where the velocity input begins (`--obs velocity`): the three values before the history.
    pub(super) fn velocity_at(&self) -> usize {
        layout::history_at(&self.config) - 3
    }

    /// Shifts the history by one policy step and writes its newest frame: the robot state the
    /// policy has just been shown and `action`, its answer. Allocation-free.
    pub(super) fn push_history(&mut self, action: &[f32; N]) {
        let at = layout::history_at(&self.config);
        let end = layout::scan_at(&self.config);
        let (now, history) = self.obs[..end].split_at_mut(at);
        if history.is_empty() {
            return;
        }
        history.copy_within(..history.len() - HISTORY_FRAME, HISTORY_FRAME);
        history[..ROBOT_STATE].copy_from_slice(&now[..ROBOT_STATE]);
        history[ROBOT_STATE..HISTORY_FRAME].copy_from_slice(action);
    }

    /// Fills every frame of the history with the episode's first observed robot state and no
    /// action, as a robot's controller starts; the critic's copy follows.
    pub(super) fn fill_history(&mut self) {
        let at = layout::history_at(&self.config);
        let end = layout::scan_at(&self.config);
        let (now, history) = self.obs[..end].split_at_mut(at);
        for frame in history.chunks_exact_mut(HISTORY_FRAME) {
            frame[..ROBOT_STATE].copy_from_slice(&now[..ROBOT_STATE]);
            frame[ROBOT_STATE..].fill(0.0);
        }
        if !self.critic_obs.is_empty() {
            self.critic_obs[at..at + history.len()].copy_from_slice(history);
        }
    }

    /// The observation of roadrunner §7.3: robot state 0..35 (quaternion, angular velocity,
    /// motors, passive joints), then commands 35..38, gait 38..42 and clock 42..44 (..46);
    /// then with `--obs velocity` the pelvis velocity in its heading frame.
    pub(super) fn write_obs(&mut self) {
        self.sense();
        self.write_task_obs();
    }

    /// The sensed part of the observation, read from the simulator now: the robot state
    /// (0..35), with `--height-scan` the ground's heights around the pelvis, and with `--obs
    /// velocity` the pelvis velocity in its heading frame.
    pub(super) fn sense(&mut self) {
        let o = &mut self.obs;
        let heading = Quat::from_rotation_z(self.heading as f32);
        let q = self.sim.base_rotation();
        let mut rel = heading.inverse() * q;
        if rel.w < 0.0 {
            rel = -rel;
        }
        o[0..4].copy_from_slice(&[rel.w, rel.x, rel.y, rel.z]);
        let omega = q.inverse() * self.sim.base_angvel(); // body frame, as MuJoCo's qvel[3:6]
        o[4..7].copy_from_slice(&omega.to_array());
        self.sim.motor_positions(&mut o[7..17]);
        self.sim.motor_velocities(&mut o[17..27]);
        self.sim.passive_positions(&mut o[27..27 + PASSIVE]);
        self.sim.passive_velocities(&mut o[31..ROBOT_STATE]);
        if self.config.height_scan {
            let at = layout::scan_at(&self.config);
            let mut scan = [0.0; height_scan::LEN];
            let yaw = reward::yaw(q);
            let p = self.sim.base_position();
            height_scan::write(&mut scan, p, yaw, |x, y| self.ground_under(Vec3::new(x, y, 0.0)));
            self.obs[at..].copy_from_slice(&scan);
        }
        let velocity = match self.config.obs {
            ObsKind::Velocity => self.sim.base_linvel(),
            ObsKind::Estimate => {
                let elapsed = (1.0 / self.config.policy_rate) as f32;
                self.estimator.update(self.sim.as_ref(), elapsed)
            }
            ObsKind::Reference => return,
        };
        let at = self.velocity_at();
        self.obs[at..at + 3].copy_from_slice(&reward::in_own_heading(velocity, q));
    }

    /// The rest of the observation (command, gait, clock), the critic's copy, then the
    /// sensors' noise and bias on the sensed part.
    pub(super) fn write_task_obs(&mut self) {
        // The ground under the pelvis and the feet, which the critic's heights are above.
        let ground = match self.critic_obs.is_empty() {
            true => [0.0; 3],
            false => [
                self.ground_under(self.sim.base_position()),
                self.ground_under(self.sim.foot_site(0).0),
                self.ground_under(self.sim.foot_site(1).0),
            ],
        };
        let o = &mut self.obs;
        let c = self.command;
        o[35..38].copy_from_slice(&[c.x as f32, c.y as f32, c.turn as f32]);
        let swing = self.clock.swing();
        let shift = self.clock.shift();
        o[38..42].copy_from_slice(&[
            swing[0] as f32,
            1.0 - swing[0] as f32,
            shift[0] as f32,
            shift[1] as f32,
        ]);
        if self.config.full_clock {
            let clk = self.clock.input_full_clock();
            for (dst, v) in o[42..46].iter_mut().zip(clk) {
                *dst = v as f32;
            }
        } else {
            let clk = self.clock.input_clock();
            o[42] = clk[0] as f32;
            o[43] = clk[1] as f32;
        }
        if !self.critic_obs.is_empty() {
            let (clean, extras) = self.critic_obs.split_at_mut(o.len());
            let (extras, hidden) = extras.split_at_mut(critic_obs::EXTRAS);
            clean.copy_from_slice(o);
            if !hidden.is_empty() {
                critic_obs::write_hidden(hidden, self.sim.as_ref(), self.sensing.latency);
            }
            let now = self.steps as f32 / self.config.policy_rate as f32;
            critic_obs::write_extras(
                extras,
                self.sim.as_ref(),
                ground,
                &self.dynamics,
                self.last_push,
                now,
            );
        }
        if self.noise_scale() > 0.0 {
            self.add_obs_noise();
        }
        if self.sensing.tilt != [0.0; 2] || self.sensing.gyro != [0.0; 3] {
            self.add_imu_bias();
        }
    }

    /// Turns the observed orientation by the episode's constant tilt and offsets the observed
    /// angular velocity by its gyro bias ([`Sensing`]).
    pub(super) fn add_imu_bias(&mut self) {
        let o = &mut self.obs;
        let [roll, pitch] = self.sensing.tilt;
        let tilt = Quat::from_euler(EulerRot::XYZ, roll, pitch, 0.0);
        let mut rel = Quat::from_xyzw(o[1], o[2], o[3], o[0]) * tilt;
        if rel.w < 0.0 {
            rel = -rel;
        }
        o[0..4].copy_from_slice(&[rel.w, rel.x, rel.y, rel.z]);
        for (x, b) in o[4..7].iter_mut().zip(self.sensing.gyro) {
            *x += b;
        }
    }

    /// Adds [`NOISE_STD`]·`obs_noise` Gaussian noise to the robot-state part of the
    /// observation: the orientation turned by a random small rotation, the rest additive.
    pub(super) fn add_obs_noise(&mut self) {
        let scale = self.noise_scale() as f32;
        let [s_angvel, s_mpos, s_mvel, s_jpos, s_jvel] = NOISE_STD.map(|s| s * scale);
        let (rot, linvel) = match self.training {
            Some(_) => (self.config.orientation_noise, self.config.velocity_noise),
            None => (REFERENCE_ORIENTATION_NOISE, REFERENCE_VELOCITY_NOISE),
        };
        let s_rot = rot as f32 * scale;
        let s_linvel = linvel as f32 * scale;
        let velocity = self.config.obs.observes_velocity().then(|| self.velocity_at());
        let rng = &mut self.rng;
        let mut n = |sd: f32| sd * rng.sample::<f32, _>(StandardNormal);
        let o = &mut self.obs;
        let turn = Quat::from_euler(EulerRot::XYZ, n(s_rot), n(s_rot), n(s_rot));
        let mut rel = Quat::from_xyzw(o[1], o[2], o[3], o[0]) * turn;
        if rel.w < 0.0 {
            rel = -rel;
        }
        o[0..4].copy_from_slice(&[rel.w, rel.x, rel.y, rel.z]);
        let parts = [
            (4..7, s_angvel),
            (7..17, s_mpos),
            (17..27, s_mvel),
            (27..27 + PASSIVE, s_jpos),
            (31..31 + PASSIVE, s_jvel),
        ];
        for (range, sd) in parts {
            o[range].iter_mut().for_each(|x| *x += n(sd));
        }
        if let Some(at) = velocity {
            o[at..at + 3].iter_mut().for_each(|x| *x += n(s_linvel));
        }
        if self.config.height_scan {
            let s_scan = height_scan::NOISE_STD * scale;
            let at = layout::scan_at(&self.config);
            o[at..].iter_mut().for_each(|x| *x += n(s_scan));
        }
    }

    /// The observed pelvis velocity minus the command, `[forward, lateral]` (m/s): what the
    /// policy sees (noise included), so a robot controller computes the same from its input.
    /// Zero without a velocity input (foot placement requires one, `CassieConfig::check`).
    pub(super) fn velocity_error(&self) -> [f32; 2] {
        if !self.config.obs.observes_velocity() {
            return [0.0; 2];
        }
        let at = self.velocity_at();
        [self.obs[at] - self.command.x as f32, self.obs[at + 1] - self.command.y as f32]
    }
}
