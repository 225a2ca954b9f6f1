//! The lab's motor model (`set_PD` + `set_torque`, roadrunner §7.2): per 2 kHz substep
//! `τ = kp·(target − q_measured)`, a speed-dependent torque limit, a torque-delay ring, and an
//! efficiency factor. kd is not here: it is the joint's implicit damping in the simulator.

use super::dims::{Dynamics, N, PASSIVE};

/// An electric motor behind a gearbox, as the lab's `set_torque` models it. The robot
/// description holds one per actuated joint; this module knows what they mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Motor {
    pub gear: f32,
    /// Motor-side torque limit (N·m); the joint-side limit is `gear · ctrl_limit`.
    pub ctrl_limit: f32,
    /// No-load speed (rpm, motor side).
    pub max_rpm: f32,
    pub kp: f32,
    /// Applied as implicit per-DoF damping, as the lab writes kd into `dof_damping`.
    pub kd: f32,
}

impl Motor {
    /// The joint speed (rad/s) at which the torque limit reaches 0: the no-load speed over the
    /// gear ratio.
    pub fn joint_no_load_speed(&self) -> f32 {
        self.max_rpm * 2.0 * std::f32::consts::PI / 60.0 / self.gear
    }

    /// The joint-side torque limit at low speed (N·m).
    pub fn joint_torque_limit(&self) -> f32 {
        self.gear * self.ctrl_limit
    }

    /// This motor with the joint-side PD a controller description gives (`gait eval --onnx`
    /// with an edited sidecar): stiffness `kp`, damping `kd`, torque limit `limit` (N·m) and
    /// no-load joint speed `speed` (rad/s), behind the same gear. Values equal to this motor's
    /// own leave it bit for bit as it is.
    pub fn with_joint_pd(&self, kp: f32, kd: f32, limit: f32, speed: f32) -> Self {
        let mut m = Motor { kp, kd, ..*self };
        if limit != self.joint_torque_limit() {
            m.ctrl_limit = limit / self.gear;
        }
        if speed != self.joint_no_load_speed() {
            m.max_rpm = speed * self.gear * 60.0 / (2.0 * std::f32::consts::PI);
        }
        m
    }
}

/// Motor-side torque limit at joint speed `qd`: full torque up to half the no-load speed,
/// falling linearly to 0 at the no-load speed (`clip(2·c − (2c/ω_max)·|ω|, 0, c)`).
pub fn torque_limit(m: &Motor, qd: f32) -> f32 {
    let omega_max = m.max_rpm * 2.0 * std::f32::consts::PI / 60.0;
    let motor_speed = (m.gear * qd).abs();
    (2.0 * m.ctrl_limit - 2.0 * m.ctrl_limit / omega_max * motor_speed).clamp(0.0, m.ctrl_limit)
}

/// Joint-side torque for a PD target: `kp·(target − q)`, limited to ±`torque_limit`·gear.
///
/// The lab bounds only the positive side with the speed-dependent limit (`np.minimum`) and lets
/// MuJoCo's ctrlrange bound the negative side statically; gait applies the speed-dependent limit
/// to both signs, which keeps the robot's torque model left/right symmetric.
pub fn pd_torque(m: &Motor, target: f32, q: f32, qd: f32) -> f32 {
    let limit = torque_limit(m, qd);
    (m.kp * (target - q) / m.gear).clamp(-limit, limit) * m.gear
}

/// Torques wait `delay` substeps before they reach the joints (the lab's `torque_delay_cycles`
/// ring; 7 cycles = 6 substeps = 3 ms by default).
#[derive(Debug, Clone)]
pub struct TorqueDelay {
    ring: Vec<[f32; N]>,
    next: usize,
}

impl TorqueDelay {
    pub fn new(delay_substeps: usize) -> Self {
        Self { ring: vec![[0.0; N]; delay_substeps], next: 0 }
    }

    /// Pushes this substep's torques and returns the ones to apply now.
    pub fn push(&mut self, torque: [f32; N]) -> [f32; N] {
        if self.ring.is_empty() {
            return torque;
        }
        let out = std::mem::replace(&mut self.ring[self.next], torque);
        self.next = (self.next + 1) % self.ring.len();
        out
    }
}

/// The lab's PD and motor model for the 10 motors of one episode, the same code under every
/// physics backend: per substep, the PD torque on the *measured* angles (true − encoder offset)
/// with the speed-dependent limit, the delay ring, then the efficiency factor. A backend reads
/// its joints, calls [`Drive::substep`], and applies what it returns as joint torques.
#[derive(Debug, Clone)]
pub struct Drive {
    motors: [Motor; N],
    delay: TorqueDelay,
    efficiency: f32,
    /// Encoder offsets (measured = true − offset): the 10 motors, then the 4 passive joints.
    encoder_noise: [f32; N + PASSIVE],
    applied: [f32; N],
}

impl Drive {
    /// The drive of an episode with `dynamics` at physics step `dt`.
    pub fn new(motors: [Motor; N], dynamics: &Dynamics, dt: f32) -> Self {
        Self {
            motors,
            delay: TorqueDelay::new(dynamics.delay_substeps(dt)),
            efficiency: dynamics.efficiency,
            encoder_noise: dynamics.encoder_noise,
            applied: [0.0; N],
        }
    }

    /// One substep from the motors' true angles `q` and velocities `qd`: returns the
    /// joint-side torques to apply now (delayed, times the efficiency).
    pub fn substep(&mut self, targets: &[f32; N], q: &[f32; N], qd: &[f32; N]) -> &[f32; N] {
        let mut torque = [0.0; N];
        for (k, m) in self.motors.iter().enumerate() {
            torque[k] = pd_torque(m, targets[k], q[k] - self.encoder_noise[k], qd[k]);
        }
        let delayed = self.delay.push(torque);
        for (applied, tau) in self.applied.iter_mut().zip(delayed) {
            *applied = self.efficiency * tau;
        }
        &self.applied
    }

    /// The torques of the last substep.
    pub fn applied(&self) -> &[f32; N] {
        &self.applied
    }

    /// Motor `k`'s encoder reading of the true angle `q`.
    pub fn measured_motor(&self, k: usize, q: f32) -> f32 {
        q - self.encoder_noise[k]
    }

    /// Passive joint `j`'s (L shin, L tarsus, R shin, R tarsus) reading of the true angle `q`.
    pub fn measured_passive(&self, j: usize, q: f32) -> f32 {
        q - self.encoder_noise[N + j]
    }

    pub fn motors(&self) -> &[Motor; N] {
        &self.motors
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNEE: Motor =
        Motor { gear: 16.0, ctrl_limit: 12.2, max_rpm: 1300.0, kp: 110.0, kd: 10.0 };

    #[test]
    fn torque_limit_is_full_to_half_speed_then_falls_to_zero() {
        let omega_max = 1300.0 * 2.0 * std::f32::consts::PI / 60.0 / 16.0; // joint side, 8.5 rad/s
        assert_eq!(torque_limit(&KNEE, 0.0), 12.2);
        assert!((torque_limit(&KNEE, 0.5 * omega_max) - 12.2).abs() < 1e-4);
        assert!((torque_limit(&KNEE, 0.75 * omega_max) - 6.1).abs() < 1e-3);
        assert_eq!(torque_limit(&KNEE, -omega_max * 1.1), 0.0);
        // 195.2 N·m at the joint, both signs.
        assert!((pd_torque(&KNEE, 10.0, 0.0, 0.0) - 195.2).abs() < 1e-3);
        assert!((pd_torque(&KNEE, -10.0, 0.0, 0.0) + 195.2).abs() < 1e-3);
        assert!((pd_torque(&KNEE, 0.1, 0.0, 0.0) - 11.0).abs() < 1e-4);
    }

    #[test]
    fn delay_returns_each_torque_after_the_given_substeps() {
        let mut d = TorqueDelay::new(6);
        let mut out = Vec::new();
        for k in 0..10 {
            out.push(d.push([k as f32; N])[0]);
        }
        assert_eq!(out, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0]);
        assert_eq!(TorqueDelay::new(0).push([5.0; N])[3], 5.0);
    }
}
