//! Pendulum swing-up (Gym `Pendulum-v1` dynamics).
//!
//! Observation `[cos θ, sin θ, θ̇]`; action 1 value, clipped to [-1, 1] and scaled to ±2 N·m.
//! Reward `-(θ² + 0.1 θ̇² + 0.001 u²)` with θ wrapped to [-π, π]; no termination, so episodes
//! end at `--traj-len` and are bootstrapped. Harder than cart-pole for PPO (a swing-up needs
//! ~100k steps); kept as a second, non-terminating test env.

use std::f32::consts::PI;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{Env, MirrorIndices, Mirrored, Step};

const MAX_SPEED: f32 = 8.0;
const MAX_TORQUE: f32 = 2.0;
const DT: f32 = 0.05;
const G: f32 = 10.0;
const M: f32 = 1.0;
const L: f32 = 1.0;

/// The inverted pendulum swing-up (gym's `Pendulum`).
#[derive(Debug)]
pub struct Pendulum {
    theta: f32,
    theta_dot: f32,
    obs: [f32; 3],
    rng: ChaCha8Rng,
}

impl Default for Pendulum {
    fn default() -> Self {
        Self::new()
    }
}

fn wrap_angle(x: f32) -> f32 {
    (x + PI).rem_euclid(2.0 * PI) - PI
}

impl Pendulum {
    /// A pendulum hanging at rest.
    pub fn new() -> Self {
        Self { theta: 0.0, theta_dot: 0.0, obs: [1.0, 0.0, 0.0], rng: ChaCha8Rng::seed_from_u64(0) }
    }

    fn observe(&mut self) {
        self.obs = [self.theta.cos(), self.theta.sin(), self.theta_dot];
    }
}

impl Env for Pendulum {
    fn observation_size(&self) -> usize {
        3
    }

    fn action_size(&self) -> usize {
        1
    }

    fn seed(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }

    fn reset(&mut self) -> &[f32] {
        self.theta = self.rng.gen_range(-PI..PI);
        self.theta_dot = self.rng.gen_range(-1.0..1.0);
        self.observe();
        &self.obs
    }

    fn step(&mut self, action: &[f32]) -> Step<'_> {
        let u = MAX_TORQUE * action[0].clamp(-1.0, 1.0);
        let th = wrap_angle(self.theta);
        let cost = th * th + 0.1 * self.theta_dot * self.theta_dot + 0.001 * u * u;
        let acc = 3.0 * G / (2.0 * L) * self.theta.sin() + 3.0 / (M * L * L) * u;
        self.theta_dot = (self.theta_dot + acc * DT).clamp(-MAX_SPEED, MAX_SPEED);
        self.theta += self.theta_dot * DT;
        self.observe();
        Step { obs: &self.obs, reward: -cost, done: false, info: &[] }
    }

    fn mirror(&self) -> Option<&dyn Mirrored> {
        Some(self)
    }
}

impl Mirrored for Pendulum {
    fn observation_mirror_indices(&self) -> Option<MirrorIndices> {
        MirrorIndices::new(&[0.0, -1.0, -2.0]).ok()
    }

    fn action_mirror_indices(&self) -> Option<MirrorIndices> {
        MirrorIndices::new(&[-0.1]).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reward_is_zero_only_upright_at_rest() {
        let mut p = Pendulum::new();
        p.theta = 0.0;
        p.theta_dot = 0.0;
        assert_eq!(p.step(&[0.0]).reward, 0.0);
        p.theta = PI;
        p.theta_dot = 0.0;
        assert!(p.step(&[0.0]).reward < -9.0);
    }
}
