//! Gymnasium's MuJoCo tasks (v5) as gait envs, `--env gym/Hopper-v5`: the models Gymnasium
//! ships (`assets/gymnasium-mujoco`, copied from its wheel by `scripts/gym_assets.sh`), run by the
//! same MuJoCo 3.17.0 gait links for Cassie, with Gymnasium's observation, reward terms (as
//! `info`), termination, reset noise and frame skip at its default keyword arguments. The
//! 1000-step truncation is the episode length (`traj_len`) of each task's preset.
//!
//! Actions are clipped to the task's action space (Gymnasium's `Box` from the actuators'
//! `ctrlrange`) before they reach the model and the control cost: Gymnasium's `ClipAction`
//! wrapper, which cleanrl, Tianshou (`bound_action_method="clip"`) and Stable-Baselines3 all put
//! between a Gaussian policy and these envs. Without it the control cost is charged on samples
//! MuJoCo clamps anyway (Humanoid's range is ±0.4), a penalty none of the published baselines
//! trained under (decision D-049).
//!
//! Step for step the same as Gymnasium's: from the same state, with the same actions, the
//! observations, rewards and terminations agree (`tests/gym.rs` steps both). What differs:
//! gait's observations and rewards are `f32` (Gymnasium's `f64`), and its reset noise is drawn
//! from gait's own seeded generator, not NumPy's.

use mujoco_rs::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{Env, RewardTerm, Step};

mod config;
mod tasks;
pub use config::GymConfig;
pub use tasks::{Task, TASKS};

/// A Gymnasium MuJoCo task as a gait env.
pub struct GymEnv {
    task: Task,
    data: MjData<Box<MjModel>>,
    /// The model's initial `qpos`/`qvel` (Gymnasium's `init_qpos`, `init_qvel`).
    init_qpos: Vec<f64>,
    init_qvel: Vec<f64>,
    obs: Vec<f32>,
    info: Vec<RewardTerm>,
    rng: ChaCha8Rng,
    /// `qpos` and `qvel` after the last reset, for tests that start another simulator there.
    start: (Vec<f64>, Vec<f64>),
    /// Seconds per env step: the model's timestep times the frame skip.
    dt: f64,
    /// The indices of the bodies the task reads by name ([`Task::named`]).
    ids: Vec<usize>,
    /// The action space, `[low, high]` per actuator (`ctrlrange` as `f32`, as Gymnasium's `Box`).
    bounds: Vec<[f32; 2]>,
    /// The last action after clipping to `bounds` (kept to step without allocating).
    clipped: Vec<f32>,
    /// Whether the observation holds the bodies' contact forces (tasks that have them).
    contact_forces: bool,
}

// SAFETY: an `MjData` with its boxed `MjModel` is owned data with no thread affinity; each env
// is used by one thread at a time (gait's samplers move an env to its worker, never share it).
unsafe impl Send for GymEnv {}

impl GymEnv {
    /// The task's env at Gymnasium's default keyword arguments; its model compiled from the
    /// shipped XML.
    pub fn new(task: Task) -> anyhow::Result<Self> {
        Self::with(task, &GymConfig::default())
    }

    /// The task's env with the keyword arguments of `config`.
    pub fn with(task: Task, config: &GymConfig) -> anyhow::Result<Self> {
        let model = MjModel::from_xml_string(task.xml())
            .map_err(|e| anyhow::anyhow!("MuJoCo refused {}'s model: {e}", task.name()))?;
        let data = MjData::new(Box::new(model));
        let init_qpos = data.qpos().to_vec();
        let init_qvel = data.qvel().to_vec();
        let info = task.info_names().iter().map(|&n| (n, 0.0)).collect();
        let dt = data.model().opt().timestep * task.frame_skip() as f64;
        let ids = task
            .named()
            .iter()
            .map(|name| {
                data.model()
                    .name_to_id(MjtObjBase::mjOBJ_BODY, name)
                    .ok_or_else(|| anyhow::anyhow!("{}'s model has no body '{name}'", task.name()))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let bounds: Vec<[f32; 2]> = data
            .model()
            .actuator_ctrlrange()
            .iter()
            .map(|&[lo, hi]| [lo as f32, hi as f32])
            .collect();
        let mut env = Self {
            clipped: vec![0.0; bounds.len()],
            bounds,
            task,
            data,
            init_qpos,
            init_qvel,
            obs: Vec::new(),
            info,
            rng: ChaCha8Rng::seed_from_u64(0),
            start: (Vec::new(), Vec::new()),
            dt,
            ids,
            contact_forces: config.include_cfrc_ext_in_observation,
        };
        let nbody = env.data.model().ffi().nbody as usize;
        let size = env.task.observation_size(env.nq(), env.nv(), nbody, env.contact_forces);
        env.obs = vec![0.0; size];
        // The observation's size is the task's formula, checked against what it writes.
        env.reset();
        Ok(env)
    }

    fn nq(&self) -> usize {
        self.init_qpos.len()
    }

    fn nv(&self) -> usize {
        self.init_qvel.len()
    }

    /// The action space, `[low, high]` per action entry: what [`Env::step`] clips to.
    pub fn action_bounds(&self) -> &[[f32; 2]] {
        &self.bounds
    }

    /// `qpos` and `qvel` after the last reset.
    pub fn start_state(&self) -> (&[f64], &[f64]) {
        (&self.start.0, &self.start.1)
    }

    /// Sets `qpos` and `qvel` as Gymnasium's `set_state` does (then `mj_forward`) and returns the
    /// observation there.
    pub fn set_state(&mut self, qpos: &[f64], qvel: &[f64]) -> &[f32] {
        self.data.qpos_mut().copy_from_slice(qpos);
        self.data.qvel_mut().copy_from_slice(qvel);
        self.data.forward();
        self.task.observe(&self.data, &self.ids, self.contact_forces, &mut self.obs);
        &self.obs
    }
}

impl Env for GymEnv {
    fn observation_size(&self) -> usize {
        self.obs.len()
    }

    fn action_size(&self) -> usize {
        self.data.ctrl().len()
    }

    fn seed(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }

    /// `mj_resetData`, then the task's initial state ([`Task::reset_state`]).
    fn reset(&mut self) -> &[f32] {
        self.data.reset();
        let (qpos, qvel) = self.task.reset_state(&mut self.rng, &self.init_qpos, &self.init_qvel);
        self.set_state(&qpos, &qvel);
        self.start = (qpos, qvel);
        &self.obs
    }

    /// The action clipped to the action space ([`GymEnv::action_bounds`]), `ctrl =` it, the
    /// task's frame skip of `mj_step`, then its reward (control cost on the clipped action) and
    /// termination.
    fn step(&mut self, action: &[f32]) -> Step<'_> {
        let before = self.task.position(&self.data);
        for ((c, &a), &[lo, hi]) in self.clipped.iter_mut().zip(action).zip(&self.bounds) {
            // A NaN passes through unchanged, as it does `np.clip`.
            *c = if a < lo {
                lo
            } else if a > hi {
                hi
            } else {
                a
            };
        }
        let action = &self.clipped[..];
        for (c, &a) in self.data.ctrl_mut().iter_mut().zip(action) {
            *c = a as f64;
        }
        for _ in 0..self.task.frame_skip() {
            self.data.step();
        }
        // What Gymnasium computes after its steps (the contact forces of `cfrc_ext`).
        self.data.rne_post_constraint();
        self.task.observe(&self.data, &self.ids, self.contact_forces, &mut self.obs);
        let outcome = self.task.outcome(before, &self.data, &self.ids, action, self.dt, &self.obs);
        for ((_, v), term) in self.info.iter_mut().zip(outcome.terms) {
            *v = term as f32;
        }
        Step {
            obs: &self.obs,
            reward: outcome.reward as f32,
            done: outcome.terminated,
            info: &self.info,
        }
    }

    /// The model's timestep times the frame skip (Gymnasium's `dt`).
    fn policy_dt(&self) -> f32 {
        self.dt as f32
    }
}
