//! Each Gymnasium v5 task's definition at its default keyword arguments: model, frame skip,
//! reset, observation, reward terms and termination, as `gymnasium/envs/mujoco/*_v5.py`
//! (gymnasium 1.2.2) computes them.

use mujoco_rs::prelude::*;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

/// The simulation a task reads.
pub type Data = MjData<Box<MjModel>>;

/// A Gymnasium MuJoCo task gait runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// `InvertedPendulum-v5`: balance a pole on a cart.
    InvertedPendulum,
    /// `InvertedDoublePendulum-v5`: balance two poles on a cart.
    InvertedDoublePendulum,
    /// `Reacher-v5`: bring a two-link arm's fingertip to a random target.
    Reacher,
    /// `Pusher-v5`: push an object to a goal with a seven-joint arm.
    Pusher,
    /// `Swimmer-v5`: a three-link swimmer, forward.
    Swimmer,
    /// `Hopper-v5`: a one-legged hopper, forward.
    Hopper,
    /// `Walker2d-v5`: a planar biped, forward.
    Walker2d,
    /// `HalfCheetah-v5`: a planar cheetah, forward; never terminates.
    HalfCheetah,
    /// `Ant-v5`: a four-legged ant, forward.
    Ant,
    /// `Humanoid-v5`: a 3D humanoid, forward.
    Humanoid,
    /// `HumanoidStandup-v5`: a 3D humanoid, from lying to standing; never terminates.
    HumanoidStandup,
}

/// Every task, in the registry's order.
pub const TASKS: [Task; 11] = [
    Task::InvertedPendulum,
    Task::InvertedDoublePendulum,
    Task::Reacher,
    Task::Pusher,
    Task::Swimmer,
    Task::Hopper,
    Task::Walker2d,
    Task::HalfCheetah,
    Task::Ant,
    Task::Humanoid,
    Task::HumanoidStandup,
];

/// What one step earned: the reward, its terms (as [`Task::info_names`] names them) and
/// whether the episode terminated.
pub struct Outcome {
    pub reward: f64,
    pub terms: [f64; 4],
    pub terminated: bool,
}

/// The forward tasks' reward weights and health bounds.
struct Forward {
    ctrl_cost: f64,
    /// `healthy_reward` (0: the task has none and never terminates).
    healthy: f64,
    z: (f64, f64),
    angle: (f64, f64),
    /// Hopper's bound on every state entry after the first two (`healthy_state_range`).
    state: Option<(f64, f64)>,
    /// The observed velocities clipped to ±10.
    clip_velocity: bool,
    /// Positions left out of the observation (x; x and y for the swimmer).
    skipped: usize,
}

/// Writes an observation entry by entry (as `f32`), allocating nothing.
struct Writer<'a> {
    out: &'a mut [f32],
    at: usize,
}

impl Writer<'_> {
    fn push(&mut self, v: f64) {
        self.out[self.at] = v as f32;
        self.at += 1;
    }

    fn extend(&mut self, values: impl IntoIterator<Item = impl std::borrow::Borrow<f64>>) {
        for v in values {
            self.push(*v.borrow());
        }
    }
}

fn sum_of_squares(action: &[f32]) -> f64 {
    action.iter().map(|&a| (a as f64) * (a as f64)).sum()
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

fn minus(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

impl Task {
    /// The `--env` name, `gym/NAME-v5`.
    pub fn name(self) -> &'static str {
        match self {
            Self::InvertedPendulum => "gym/InvertedPendulum-v5",
            Self::InvertedDoublePendulum => "gym/InvertedDoublePendulum-v5",
            Self::Reacher => "gym/Reacher-v5",
            Self::Pusher => "gym/Pusher-v5",
            Self::Swimmer => "gym/Swimmer-v5",
            Self::Hopper => "gym/Hopper-v5",
            Self::Walker2d => "gym/Walker2d-v5",
            Self::HalfCheetah => "gym/HalfCheetah-v5",
            Self::Ant => "gym/Ant-v5",
            Self::Humanoid => "gym/Humanoid-v5",
            Self::HumanoidStandup => "gym/HumanoidStandup-v5",
        }
    }

    /// Gymnasium's id, `NAME-v5`.
    pub fn gymnasium_id(self) -> &'static str {
        &self.name()["gym/".len()..]
    }

    /// The model Gymnasium's v5 task loads by default.
    pub fn xml(self) -> &'static str {
        macro_rules! asset {
            ($file:literal) => {
                include_str!(concat!("../../../assets/gymnasium-mujoco/", $file))
            };
        }
        match self {
            Self::InvertedPendulum => asset!("inverted_pendulum.xml"),
            Self::InvertedDoublePendulum => asset!("inverted_double_pendulum.xml"),
            Self::Reacher => asset!("reacher.xml"),
            Self::Pusher => asset!("pusher_v5.xml"),
            Self::Swimmer => asset!("swimmer.xml"),
            Self::Hopper => asset!("hopper.xml"),
            Self::Walker2d => asset!("walker2d_v5.xml"),
            Self::HalfCheetah => asset!("half_cheetah.xml"),
            Self::Ant => asset!("ant.xml"),
            Self::Humanoid => asset!("humanoid.xml"),
            Self::HumanoidStandup => asset!("humanoidstandup.xml"),
        }
    }

    /// MuJoCo steps per env step.
    pub fn frame_skip(self) -> usize {
        match self {
            Self::InvertedPendulum | Self::Reacher => 2,
            Self::Swimmer | Self::Hopper | Self::Walker2d => 4,
            Self::InvertedDoublePendulum | Self::Pusher | Self::HalfCheetah => 5,
            Self::Ant | Self::Humanoid | Self::HumanoidStandup => 5,
        }
    }

    /// The bodies (or, for the double pendulum, sites) the task reads by name, resolved once.
    pub fn named(self) -> &'static [&'static str] {
        match self {
            Self::Reacher => &["fingertip", "target"],
            Self::Pusher => &["tips_arm", "object", "goal"],
            _ => &[],
        }
    }

    /// The names of the reward's terms, as Gymnasium's `info` keys.
    pub fn info_names(self) -> &'static [&'static str] {
        match self {
            Self::InvertedPendulum => &["reward_survive"],
            Self::InvertedDoublePendulum => {
                &["reward_survive", "distance_penalty", "velocity_penalty"]
            }
            Self::Reacher => &["reward_dist", "reward_ctrl"],
            Self::Pusher => &["reward_dist", "reward_ctrl", "reward_near"],
            Self::Swimmer | Self::HalfCheetah => &["reward_forward", "reward_ctrl"],
            Self::Hopper | Self::Walker2d => &["reward_forward", "reward_ctrl", "reward_survive"],
            Self::Ant => &["reward_forward", "reward_ctrl", "reward_contact", "reward_survive"],
            Self::Humanoid => {
                &["reward_survive", "reward_forward", "reward_ctrl", "reward_contact"]
            }
            Self::HumanoidStandup => &["reward_linup", "reward_quadctrl", "reward_impact"],
        }
    }

    fn forward(self) -> Option<Forward> {
        let open = (f64::NEG_INFINITY, f64::INFINITY);
        let plain = |ctrl_cost, skipped| Forward {
            ctrl_cost,
            healthy: 0.0,
            z: open,
            angle: open,
            state: None,
            clip_velocity: false,
            skipped,
        };
        match self {
            Self::Hopper => Some(Forward {
                ctrl_cost: 1e-3,
                healthy: 1.0,
                z: (0.7, f64::INFINITY),
                angle: (-0.2, 0.2),
                state: Some((-100.0, 100.0)),
                clip_velocity: true,
                skipped: 1,
            }),
            Self::Walker2d => Some(Forward {
                ctrl_cost: 1e-3,
                healthy: 1.0,
                z: (0.8, 2.0),
                angle: (-1.0, 1.0),
                state: None,
                clip_velocity: true,
                skipped: 1,
            }),
            Self::HalfCheetah => Some(plain(0.1, 1)),
            Self::Swimmer => Some(plain(1e-4, 2)),
            _ => None,
        }
    }

    /// Observation entries for a model with `nq` positions, `nv` velocities and `nbody`
    /// bodies (the world included), with or without the bodies' contact forces (`forces`:
    /// Gymnasium's `include_cfrc_ext_in_observation`, read by the tasks that have them).
    pub fn observation_size(self, nq: usize, nv: usize, nbody: usize, forces: bool) -> usize {
        let forces = if forces { 6 * (nbody - 1) } else { 0 };
        match self {
            // Positions without x and y, velocities, each body's clipped contact force.
            Self::Ant => (nq - 2) + nv + forces,
            // ... and each body's inertia and velocity, the actuators' joint forces.
            Self::Humanoid | Self::HumanoidStandup => {
                (nq - 2) + nv + (10 + 6) * (nbody - 1) + (nv - 6) + forces
            }
            Self::InvertedPendulum => nq + nv,
            // The cart's position, sin and cos of the poles' angles, the velocities, the
            // cart's constraint force.
            Self::InvertedDoublePendulum => 1 + 2 * (nq - 1) + nv + 1,
            // cos and sin of the two arm angles, the target's position, two velocities, the
            // fingertip's offset from the target in x and y.
            Self::Reacher => 2 + 2 + (nq - 2) + 2 + 2,
            Self::Pusher => 7 + 7 + 9,
            _ => nq - self.forward().map_or(0, |f| f.skipped) + nv,
        }
    }

    /// The state after `mj_resetData`: the model's initial state with the task's reset noise
    /// (or its random goal), drawn from `rng`.
    pub fn reset_state(
        self,
        rng: &mut ChaCha8Rng,
        init_qpos: &[f64],
        init_qvel: &[f64],
    ) -> (Vec<f64>, Vec<f64>) {
        let uniform = |rng: &mut ChaCha8Rng, base: &[f64], s: f64| -> Vec<f64> {
            base.iter().map(|&b| b + rng.gen_range(-s..s)).collect()
        };
        let normal = |rng: &mut ChaCha8Rng, base: &[f64], s: f64| -> Vec<f64> {
            base.iter().map(|&b| b + s * rng.sample::<f64, _>(StandardNormal)).collect()
        };
        match self {
            Self::InvertedPendulum => {
                (uniform(rng, init_qpos, 0.01), uniform(rng, init_qvel, 0.01))
            }
            Self::InvertedDoublePendulum => {
                // Gymnasium's order: the positions' noise, then the velocities'.
                let qpos = uniform(rng, init_qpos, 0.1);
                (qpos, normal(rng, init_qvel, 0.1))
            }
            Self::Reacher => {
                let mut qpos = uniform(rng, init_qpos, 0.1);
                let goal = loop {
                    let g: [f64; 2] = [rng.gen_range(-0.2..0.2), rng.gen_range(-0.2..0.2)];
                    if (g[0] * g[0] + g[1] * g[1]).sqrt() < 0.2 {
                        break g;
                    }
                };
                let n = qpos.len();
                qpos[n - 2..].copy_from_slice(&goal);
                let mut qvel = uniform(rng, init_qvel, 0.005);
                let m = qvel.len();
                qvel[m - 2..].fill(0.0);
                (qpos, qvel)
            }
            Self::Pusher => {
                let mut qpos = init_qpos.to_vec();
                let cylinder = loop {
                    let c: [f64; 2] = [rng.gen_range(-0.3..0.0), rng.gen_range(-0.2..0.2)];
                    if (c[0] * c[0] + c[1] * c[1]).sqrt() > 0.17 {
                        break c;
                    }
                };
                let n = qpos.len();
                qpos[n - 4..n - 2].copy_from_slice(&cylinder);
                qpos[n - 2..].fill(0.0);
                let mut qvel = uniform(rng, init_qvel, 0.005);
                let m = qvel.len();
                qvel[m - 4..].fill(0.0);
                (qpos, qvel)
            }
            Self::HalfCheetah => (uniform(rng, init_qpos, 0.1), normal(rng, init_qvel, 0.1)),
            Self::Swimmer => (uniform(rng, init_qpos, 0.1), uniform(rng, init_qvel, 0.1)),
            Self::Hopper | Self::Walker2d => {
                (uniform(rng, init_qpos, 5e-3), uniform(rng, init_qvel, 5e-3))
            }
            Self::Ant => (uniform(rng, init_qpos, 0.1), normal(rng, init_qvel, 0.1)),
            Self::Humanoid | Self::HumanoidStandup => {
                (uniform(rng, init_qpos, 1e-2), uniform(rng, init_qvel, 1e-2))
            }
        }
    }

    /// The observation of `d`'s state (`ids`: the [`Task::named`] bodies' indices; `forces`:
    /// as in [`Task::observation_size`]).
    pub fn observe(self, d: &Data, ids: &[usize], forces: bool, out: &mut [f32]) {
        let (qpos, qvel) = (d.qpos(), d.qvel());
        let mut values = Writer { out, at: 0 };
        match self {
            Self::InvertedPendulum => values.extend(qpos.iter().chain(qvel)),
            Self::InvertedDoublePendulum => {
                values.push(qpos[0]);
                values.extend(qpos[1..].iter().map(|q| q.sin()));
                values.extend(qpos[1..].iter().map(|q| q.cos()));
                values.extend(qvel.iter().map(|v| v.clamp(-10.0, 10.0)));
                values.push(d.qfrc_constraint()[0].clamp(-10.0, 10.0));
            }
            Self::Reacher => {
                values.extend(qpos[..2].iter().map(|q| q.cos()));
                values.extend(qpos[..2].iter().map(|q| q.sin()));
                values.extend(&qpos[2..]);
                values.extend(&qvel[..2]);
                let offset = minus(d.xpos()[ids[0]], d.xpos()[ids[1]]);
                values.extend(&offset[..2]);
            }
            Self::Ant => {
                values.extend(&qpos[2..]);
                values.extend(qvel);
                if forces {
                    let forces = d.cfrc_ext()[1..].iter().flatten();
                    values.extend(forces.map(|f| f.clamp(-1.0, 1.0)));
                }
            }
            Self::Humanoid | Self::HumanoidStandup => {
                values.extend(&qpos[2..]);
                values.extend(qvel);
                values.extend(d.cinert()[1..].iter().flatten());
                values.extend(d.cvel()[1..].iter().flatten());
                values.extend(&d.qfrc_actuator()[6..]);
                if forces {
                    values.extend(d.cfrc_ext()[1..].iter().flatten());
                }
            }
            Self::Pusher => {
                values.extend(&qpos[..7]);
                values.extend(&qvel[..7]);
                for &id in ids {
                    values.extend(d.xpos()[id]);
                }
            }
            _ => {
                let f = self.forward().expect("a forward task");
                values.extend(&qpos[f.skipped..]);
                let clip = f.clip_velocity;
                values.extend(qvel.iter().map(|&v| if clip { v.clamp(-10.0, 10.0) } else { v }));
            }
        }
    }

    /// The step from x, y position `before` to `d`'s state under `action`, `dt` seconds,
    /// observed as `obs`.
    pub fn outcome(
        self,
        before: [f64; 2],
        d: &Data,
        ids: &[usize],
        action: &[f32],
        dt: f64,
        obs: &[f32],
    ) -> Outcome {
        match self {
            Self::Ant | Self::Humanoid | Self::HumanoidStandup => {
                return self.body_outcome(before, d, action, dt);
            }
            _ => {}
        }
        let Some(f) = self.forward() else { return self.still_outcome(d, ids, action, obs) };
        let (qpos, qvel) = (d.qpos(), d.qvel());
        let x_velocity = (qpos[0] - before[0]) / dt;
        let ctrl = f.ctrl_cost * sum_of_squares(action);
        let inside = |v: f64, (lo, hi): (f64, f64)| lo < v && v < hi;
        if f.healthy == 0.0 {
            let reward = x_velocity - ctrl;
            return Outcome { reward, terms: [x_velocity, -ctrl, 0.0, 0.0], terminated: false };
        }
        let healthy = inside(qpos[1], f.z)
            && inside(qpos[2], f.angle)
            && f.state.is_none_or(|range| qpos[2..].iter().chain(qvel).all(|&v| inside(v, range)));
        let survive = if healthy { f.healthy } else { 0.0 };
        let reward = x_velocity + survive - ctrl;
        Outcome { reward, terms: [x_velocity, -ctrl, survive, 0.0], terminated: !healthy }
    }

    /// The 3D bodies' step: the ant's torso and the humanoid's centre of mass moving forward
    /// (`before`: their x, y before it), the standing humanoid's height.
    fn body_outcome(self, before: [f64; 2], d: &Data, action: &[f32], dt: f64) -> Outcome {
        let squares = |v: &[[f64; 6]]| v.iter().flatten().map(|f| f * f).sum::<f64>();
        let ctrl_squares: f64 = d.ctrl().iter().map(|c| c * c).sum();
        let qpos = d.qpos();
        match self {
            Self::Ant => {
                let x_velocity = (self.position(d)[0] - before[0]) / dt;
                let clipped = d.cfrc_ext().iter().flatten().map(|f| f.clamp(-1.0, 1.0));
                let contact = 5e-4 * clipped.map(|f| f * f).sum::<f64>();
                let ctrl = 0.5 * sum_of_squares(action);
                let finite = qpos.iter().chain(d.qvel()).all(|v| v.is_finite());
                let healthy = finite && (0.2..=1.0).contains(&qpos[2]);
                let survive = if healthy { 1.0 } else { 0.0 };
                let reward = (x_velocity + survive) - (ctrl + contact);
                let terms = [x_velocity, -ctrl, -contact, survive];
                Outcome { reward, terms, terminated: !healthy }
            }
            Self::Humanoid => {
                let forward = 1.25 * (self.position(d)[0] - before[0]) / dt;
                let healthy = 1.0 < qpos[2] && qpos[2] < 2.0;
                let survive = if healthy { 5.0 } else { 0.0 };
                let ctrl = 0.1 * ctrl_squares;
                let contact = (5e-7 * squares(d.cfrc_ext())).min(10.0);
                let reward = (forward + survive) - (ctrl + contact);
                let terms = [survive, forward, -ctrl, -contact];
                Outcome { reward, terms, terminated: !healthy }
            }
            _ => {
                let up = qpos[2] / d.model().opt().timestep;
                let ctrl = 0.1 * ctrl_squares;
                let impact = (0.5e-6 * squares(d.cfrc_ext())).min(10.0);
                let reward = up - ctrl - impact + 1.0;
                Outcome { reward, terms: [up, -ctrl, -impact, 0.0], terminated: false }
            }
        }
    }

    /// Where a task's forward progress is measured (x, y): the first body's frame for the
    /// ant, the centre of mass for the humanoid (body masses times their inertial frames),
    /// `qpos[0..2]` for the rest.
    pub fn position(self, d: &Data) -> [f64; 2] {
        match self {
            Self::Ant => {
                let p = d.xpos()[1];
                [p[0], p[1]]
            }
            Self::Humanoid | Self::HumanoidStandup => {
                let mass = d.model().body_mass();
                let total: f64 = mass.iter().sum();
                let mut c = [0.0; 2];
                for (m, p) in mass.iter().zip(d.xipos()) {
                    c[0] += m * p[0];
                    c[1] += m * p[1];
                }
                [c[0] / total, c[1] / total]
            }
            _ => [d.qpos()[0], d.qpos().get(1).copied().unwrap_or(0.0)],
        }
    }

    /// The tasks that do not move forward: balancing and reaching.
    fn still_outcome(self, d: &Data, ids: &[usize], action: &[f32], obs: &[f32]) -> Outcome {
        match self {
            Self::InvertedPendulum => {
                // The pole's angle beyond 0.2 rad, or a state that is not finite.
                let terminated = !obs.iter().all(|o| o.is_finite()) || obs[1].abs() > 0.2;
                let reward = if terminated { 0.0 } else { 1.0 };
                Outcome { reward, terms: [reward, 0.0, 0.0, 0.0], terminated }
            }
            Self::InvertedDoublePendulum => {
                let [x, _, y] = d.site_xpos()[0];
                let terminated = y <= 1.0;
                let (v1, v2) = (d.qvel()[1], d.qvel()[2]);
                let dist = 0.01 * x * x + (y - 2.0) * (y - 2.0);
                let vel = 1e-3 * v1 * v1 + 5e-3 * v2 * v2;
                let alive = if terminated { 0.0 } else { 10.0 };
                let reward = alive - dist - vel;
                Outcome { reward, terms: [alive, -dist, -vel, 0.0], terminated }
            }
            Self::Reacher => {
                let dist = -norm(minus(d.xpos()[ids[0]], d.xpos()[ids[1]]));
                let ctrl = -sum_of_squares(action);
                Outcome { reward: dist + ctrl, terms: [dist, ctrl, 0.0, 0.0], terminated: false }
            }
            Self::Pusher => {
                let [tips, object, goal] = [ids[0], ids[1], ids[2]].map(|i| d.xpos()[i]);
                let near = -norm(minus(object, tips)) * 0.5;
                let dist = -norm(minus(object, goal));
                let ctrl = -sum_of_squares(action) * 0.1;
                let reward = dist + ctrl + near;
                Outcome { reward, terms: [dist, ctrl, near, 0.0], terminated: false }
            }
            _ => unreachable!("forward tasks are judged by `outcome`"),
        }
    }
}
