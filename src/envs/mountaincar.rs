//! Continuous mountain car (Gym `MountainCarContinuous-v0` dynamics).
//!
//! Observation `[position, velocity]`; action 1 value, clipped to [-1, 1] as the engine force.
//! Reward `100` on reaching the goal (position ≥ 0.45, which terminates) minus `0.1 a²` per
//! step. The valley is not left/right symmetric (the goal is on one side), so this env has no
//! mirror lists: it is the test case for features that need them.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{Env, Step};

const MIN_POSITION: f32 = -1.2;
const MAX_POSITION: f32 = 0.6;
const MAX_SPEED: f32 = 0.07;
const GOAL_POSITION: f32 = 0.45;
const POWER: f32 = 0.0015;

/// The continuous mountain car (Moore; gym's `MountainCarContinuous`).
#[derive(Debug)]
pub struct MountainCar {
    state: [f32; 2],
    rng: ChaCha8Rng,
}

impl Default for MountainCar {
    fn default() -> Self {
        Self::new()
    }
}

impl MountainCar {
    /// A car at the valley's bottom.
    pub fn new() -> Self {
        Self { state: [-0.5, 0.0], rng: ChaCha8Rng::seed_from_u64(0) }
    }
}

impl Env for MountainCar {
    fn observation_size(&self) -> usize {
        2
    }

    fn action_size(&self) -> usize {
        1
    }

    fn seed(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }

    fn reset(&mut self) -> &[f32] {
        self.state = [self.rng.gen_range(-0.6..-0.4), 0.0];
        &self.state
    }

    fn step(&mut self, action: &[f32]) -> Step<'_> {
        let force = action[0].clamp(-1.0, 1.0);
        let [mut position, mut velocity] = self.state;
        velocity += force * POWER - 0.0025 * (3.0 * position).cos();
        velocity = velocity.clamp(-MAX_SPEED, MAX_SPEED);
        position = (position + velocity).clamp(MIN_POSITION, MAX_POSITION);
        if position == MIN_POSITION && velocity < 0.0 {
            velocity = 0.0;
        }
        self.state = [position, velocity];
        let done = position >= GOAL_POSITION;
        let reward = if done { 100.0 } else { 0.0 } - 0.1 * force * force;
        Step { obs: &self.state, reward, done, info: &[] }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pumping_energy_reaches_the_goal() {
        let mut env = MountainCar::new();
        env.seed(0);
        env.reset();
        // Push in the direction of motion: the classic energy-pumping controller.
        for t in 0..1000 {
            let v = env.state[1];
            let step = env.step(&[if v >= 0.0 { 1.0 } else { -1.0 }]);
            if step.done {
                assert!(step.reward > 99.0);
                return;
            }
            assert!(t < 999, "never reached the goal");
        }
    }
}
