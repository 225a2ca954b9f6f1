//! Each Gymnasium v5 task's definition at its default keyword arguments: model, frame skip,
//! reset noise, observation, reward terms and termination, as `gymnasium/envs/mujoco/*_v5.py`
//! (gymnasium 1.2.2) computes them.

/// A Gymnasium MuJoCo task gait runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// `InvertedPendulum-v5`: balance a pole on a cart.
    InvertedPendulum,
    /// `Hopper-v5`: a one-legged hopper, forward.
    Hopper,
    /// `Walker2d-v5`: a planar biped, forward.
    Walker2d,
    /// `HalfCheetah-v5`: a planar cheetah, forward; never terminates.
    HalfCheetah,
}

/// Every task, in the registry's order.
pub const TASKS: [Task; 4] =
    [Task::InvertedPendulum, Task::Hopper, Task::Walker2d, Task::HalfCheetah];

/// What one step earned: the reward, its terms (as [`Task::info_names`] names them) and
/// whether the episode terminated.
pub struct Outcome {
    pub reward: f64,
    pub terms: [f64; 3],
    pub terminated: bool,
}

/// The locomotion tasks' reward weights and health bounds.
struct Locomotion {
    ctrl_cost: f64,
    /// `healthy_reward` (0: the task has none and never terminates).
    healthy: f64,
    z: (f64, f64),
    angle: (f64, f64),
    /// Hopper's bound on every state entry after the first two (`healthy_state_range`).
    state: Option<(f64, f64)>,
    /// The observed velocities clipped to ±10.
    clip_velocity: bool,
}

impl Task {
    /// The `--env` name, `gym/NAME-v5`.
    pub fn name(self) -> &'static str {
        match self {
            Self::InvertedPendulum => "gym/InvertedPendulum-v5",
            Self::Hopper => "gym/Hopper-v5",
            Self::Walker2d => "gym/Walker2d-v5",
            Self::HalfCheetah => "gym/HalfCheetah-v5",
        }
    }

    /// Gymnasium's id, `NAME-v5`.
    pub fn gymnasium_id(self) -> &'static str {
        &self.name()["gym/".len()..]
    }

    /// The model Gymnasium's v5 task loads by default.
    pub fn xml(self) -> &'static str {
        match self {
            Self::InvertedPendulum => {
                include_str!("../../../assets/gymnasium-mujoco/inverted_pendulum.xml")
            }
            Self::Hopper => include_str!("../../../assets/gymnasium-mujoco/hopper.xml"),
            Self::Walker2d => include_str!("../../../assets/gymnasium-mujoco/walker2d_v5.xml"),
            Self::HalfCheetah => include_str!("../../../assets/gymnasium-mujoco/half_cheetah.xml"),
        }
    }

    /// MuJoCo steps per env step.
    pub fn frame_skip(self) -> usize {
        match self {
            Self::InvertedPendulum => 2,
            Self::Hopper | Self::Walker2d => 4,
            Self::HalfCheetah => 5,
        }
    }

    /// `reset_noise_scale`.
    pub fn reset_noise(self) -> f64 {
        match self {
            Self::InvertedPendulum => 0.01,
            Self::Hopper | Self::Walker2d => 5e-3,
            Self::HalfCheetah => 0.1,
        }
    }

    /// Whether the velocities' reset noise is `scale · N(0, 1)` (else `U(−scale, scale)`).
    pub fn normal_velocity_noise(self) -> bool {
        self == Self::HalfCheetah
    }

    /// The names of the reward's terms, as Gymnasium's `info` keys.
    pub fn info_names(self) -> &'static [&'static str] {
        match self {
            Self::InvertedPendulum => &["reward_survive"],
            Self::HalfCheetah => &["reward_forward", "reward_ctrl"],
            Self::Hopper | Self::Walker2d => &["reward_forward", "reward_ctrl", "reward_survive"],
        }
    }

    fn locomotion(self) -> Option<Locomotion> {
        match self {
            Self::InvertedPendulum => None,
            Self::Hopper => Some(Locomotion {
                ctrl_cost: 1e-3,
                healthy: 1.0,
                z: (0.7, f64::INFINITY),
                angle: (-0.2, 0.2),
                state: Some((-100.0, 100.0)),
                clip_velocity: true,
            }),
            Self::Walker2d => Some(Locomotion {
                ctrl_cost: 1e-3,
                healthy: 1.0,
                z: (0.8, 2.0),
                angle: (-1.0, 1.0),
                state: None,
                clip_velocity: true,
            }),
            Self::HalfCheetah => Some(Locomotion {
                ctrl_cost: 0.1,
                healthy: 0.0,
                z: (f64::NEG_INFINITY, f64::INFINITY),
                angle: (f64::NEG_INFINITY, f64::INFINITY),
                state: None,
                clip_velocity: false,
            }),
        }
    }

    /// Observation entries for a model with `nq` positions and `nv` velocities.
    pub fn observation_size(self, nq: usize, nv: usize) -> usize {
        match self {
            Self::InvertedPendulum => nq + nv,
            // The x position is left out (`exclude_current_positions_from_observation`).
            _ => nq - 1 + nv,
        }
    }

    /// The observation of the state `qpos`, `qvel`.
    pub fn observe(self, qpos: &[f64], qvel: &[f64], out: &mut [f32]) {
        let (skip, clip) = match self.locomotion() {
            None => (0, false),
            Some(l) => (1, l.clip_velocity),
        };
        let positions = qpos[skip..].iter().copied();
        let velocities = qvel.iter().map(|&v| if clip { v.clamp(-10.0, 10.0) } else { v });
        for (o, v) in out.iter_mut().zip(positions.chain(velocities)) {
            *o = v as f32;
        }
    }

    /// The step from x position `x_before` to the state `qpos`, `qvel` under `action`, `dt`
    /// seconds, observed as `obs`.
    pub fn outcome(
        self,
        x_before: f64,
        qpos: &[f64],
        qvel: &[f64],
        action: &[f32],
        dt: f64,
        obs: &[f32],
    ) -> Outcome {
        let Some(l) = self.locomotion() else {
            // The pole's angle beyond 0.2 rad, or a state that is not finite.
            let terminated = !obs.iter().all(|o| o.is_finite()) || obs[1].abs() > 0.2;
            let reward = if terminated { 0.0 } else { 1.0 };
            return Outcome { reward, terms: [reward, 0.0, 0.0], terminated };
        };
        let x_velocity = (qpos[0] - x_before) / dt;
        let ctrl = l.ctrl_cost * action.iter().map(|&a| (a as f64) * (a as f64)).sum::<f64>();
        let inside = |v: f64, (lo, hi): (f64, f64)| lo < v && v < hi;
        let healthy = inside(qpos[1], l.z)
            && inside(qpos[2], l.angle)
            && l.state.is_none_or(|range| qpos[2..].iter().chain(qvel).all(|&v| inside(v, range)));
        if l.healthy == 0.0 {
            let reward = x_velocity - ctrl;
            return Outcome { reward, terms: [x_velocity, -ctrl, 0.0], terminated: false };
        }
        let survive = if healthy { l.healthy } else { 0.0 };
        let reward = x_velocity + survive - ctrl;
        Outcome { reward, terms: [x_velocity, -ctrl, survive], terminated: !healthy }
    }
}
