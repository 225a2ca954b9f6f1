//! The lab's motor model (`set_PD` + `set_torque`, roadrunner §7.2): per 2 kHz substep
//! `τ = kp·(target − q_measured)`, a speed-dependent torque limit, a torque-delay ring, and an
//! efficiency factor. kd is not here: it is the joint's implicit damping in the simulator.

/// Number of actuated joints.
pub const N: usize = 10;

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
