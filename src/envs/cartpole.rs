//! Continuous-action cart-pole balancing (Gym `CartPole-v1` dynamics, Barto et al. 1983).
//!
//! Observation `[x, x_dot, theta, theta_dot]`; action 1 value, clipped to [-1, 1] and scaled to a
//! horizontal force of ±10 N. Reward 1 per step alive; the episode terminates when
//! |x| > 2.4 m or |theta| > 12°. A random policy survives ~20 steps; a good one reaches the
//! trajectory limit. Fast (~1 µs a step) and learnable by PPO in seconds, so it is the test and
//! demo env. It is left/right symmetric, so it has mirror lists.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{Env, MirrorIndices, Mirrored, Step};

const GRAVITY: f32 = 9.8;
const MASS_CART: f32 = 1.0;
const MASS_POLE: f32 = 0.1;
const TOTAL_MASS: f32 = MASS_CART + MASS_POLE;
const HALF_LENGTH: f32 = 0.5;
const POLE_MASS_LENGTH: f32 = MASS_POLE * HALF_LENGTH;
const FORCE_MAG: f32 = 10.0;
const TAU: f32 = 0.02;
const X_LIMIT: f32 = 2.4;
const THETA_LIMIT: f32 = 12.0 * std::f32::consts::PI / 180.0;

/// The classic cart-pole balance task (Barto, Sutton and Anderson; gym's `CartPole`).
#[derive(Debug)]
pub struct CartPole {
    state: [f32; 4],
    rng: ChaCha8Rng,
}

impl Default for CartPole {
    fn default() -> Self {
        Self::new()
    }
}

impl CartPole {
    /// A cart-pole at rest.
    pub fn new() -> Self {
        Self { state: [0.0; 4], rng: ChaCha8Rng::seed_from_u64(0) }
    }
}

impl Env for CartPole {
    fn observation_size(&self) -> usize {
        4
    }

    fn action_size(&self) -> usize {
        1
    }

    fn seed(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }

    fn reset(&mut self) -> &[f32] {
        for s in &mut self.state {
            *s = self.rng.gen_range(-0.05..0.05);
        }
        &self.state
    }

    fn step(&mut self, action: &[f32]) -> Step<'_> {
        let force = FORCE_MAG * action[0].clamp(-1.0, 1.0);
        let [x, x_dot, theta, theta_dot] = self.state;
        let (sin, cos) = theta.sin_cos();
        let temp = (force + POLE_MASS_LENGTH * theta_dot * theta_dot * sin) / TOTAL_MASS;
        let theta_acc = (GRAVITY * sin - cos * temp)
            / (HALF_LENGTH * (4.0 / 3.0 - MASS_POLE * cos * cos / TOTAL_MASS));
        let x_acc = temp - POLE_MASS_LENGTH * theta_acc * cos / TOTAL_MASS;
        self.state = [
            x + TAU * x_dot,
            x_dot + TAU * x_acc,
            theta + TAU * theta_dot,
            theta_dot + TAU * theta_acc,
        ];
        let done = self.state[0].abs() > X_LIMIT || self.state[2].abs() > THETA_LIMIT;
        Step { obs: &self.state, reward: 1.0, done, info: &[] }
    }

    fn mirror(&self) -> Option<&dyn Mirrored> {
        Some(self)
    }
}

impl Mirrored for CartPole {
    fn observation_mirror_indices(&self) -> Option<MirrorIndices> {
        MirrorIndices::new(&[-0.1, -1.0, -2.0, -3.0]).ok()
    }

    fn action_mirror_indices(&self) -> Option<MirrorIndices> {
        MirrorIndices::new(&[-0.1]).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn falls_without_control_and_is_seeded() {
        let mut a = CartPole::new();
        let mut b = CartPole::new();
        a.seed(7);
        b.seed(7);
        assert_eq!(a.reset(), b.reset());
        let mut steps = 0;
        loop {
            steps += 1;
            let sa = a.step(&[0.0]);
            let (obs, done) = (sa.obs.to_vec(), sa.done);
            assert_eq!(obs, b.step(&[0.0]).obs);
            if done {
                break;
            }
            assert!(steps < 500, "an uncontrolled pole must fall");
        }
    }

    #[test]
    fn mirrored_state_and_action_give_mirrored_next_state() {
        let (mut a, mut b) = (CartPole::new(), CartPole::new());
        a.state = [0.3, -0.2, 0.05, 0.4];
        b.state = [-0.3, 0.2, -0.05, -0.4];
        for k in 0..20 {
            let u = (k as f32 * 0.37).sin();
            let sa = a.step(&[u]).obs.to_vec();
            let sb = b.step(&[-u]).obs.to_vec();
            let mut m = [0.0; 4];
            a.observation_mirror_indices().unwrap().apply(&sa, &mut m);
            for (x, y) in m.iter().zip(&sb) {
                assert!((x - y).abs() < 1e-5, "{m:?} vs {sb:?}");
            }
        }
    }
}
