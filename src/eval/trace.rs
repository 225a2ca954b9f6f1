//! `gait eval --trace FILE.csv`: every step of every episode as one CSV row, the golden trace a
//! deployer checks a controller against (feed its `obs` columns to the exported model, compare
//! the actions; or run the controller on the same model from the same start and compare the
//! poses).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;

use crate::config::UsageError;
use crate::envs::{BodyPose, Env};

/// Rows a trace may hold: 200 episodes of 1000 steps, about 150 MB of CSV for Cassie, all held
/// in memory until the file is written in one piece.
pub const MAX_TRACE_ROWS: u128 = 200_000;

/// The rows of a trace, held until it is written.
pub struct Trace {
    csv: String,
    /// Whether rows carry the first body's pose (envs that describe their bodies).
    posed: bool,
    /// The first body's pose at the start of the step about to be taken.
    pose: Option<BodyPose>,
    poses: Vec<BodyPose>,
}

impl Trace {
    /// A trace of `env`'s steps: its header now, the rows as they come. Refuses, before any
    /// step, one of more than [`MAX_TRACE_ROWS`] rows.
    pub fn new(env: &dyn Env, episodes: usize, traj_len: usize) -> Result<Self, UsageError> {
        let rows = episodes as u128 * traj_len as u128;
        if rows > MAX_TRACE_ROWS {
            return Err(UsageError(format!(
                "--trace: {episodes} episodes of up to {traj_len} steps would be {rows} rows; \
                 a trace holds at most {MAX_TRACE_ROWS}"
            )));
        }
        let mut csv = String::from("episode,step");
        for i in 0..env.observation_size() {
            let _ = write!(csv, ",obs_{i}");
        }
        for i in 0..env.action_size() {
            let _ = write!(csv, ",action_{i}");
        }
        csv.push_str(",reward,done");
        let posed = env.bodies().is_some();
        if posed {
            csv.push_str(",base_x,base_y,base_z,base_qx,base_qy,base_qz,base_qw");
        }
        csv.push('\n');
        Ok(Self { csv, posed, pose: None, poses: Vec::new() })
    }

    /// Notes the first body's pose of `env` now (after a reset or a step).
    pub fn observe(&mut self, env: &dyn Env) {
        if let Some(bodies) = env.bodies().filter(|_| self.posed) {
            bodies.body_poses(&mut self.poses);
            self.pose = self.poses.first().copied();
        }
    }

    /// One row: step `t` of `episode`, the observation the policy saw, the action the env
    /// took, the reward, whether the step ended the episode, and the pose at the step's start.
    pub fn row(
        &mut self,
        episode: usize,
        t: usize,
        obs: &[f32],
        action: &[f32],
        reward: f32,
        done: bool,
    ) {
        let csv = &mut self.csv;
        let _ = write!(csv, "{episode},{t}");
        for v in obs.iter().chain(action).chain([&reward]) {
            // `{}` of an f32 is the shortest text that reads back as the same f32.
            let _ = write!(csv, ",{v}");
        }
        let _ = write!(csv, ",{}", u8::from(done));
        if self.posed {
            let BodyPose { position: p, rotation: q } =
                self.pose.unwrap_or(BodyPose { position: [f32::NAN; 3], rotation: [f32::NAN; 4] });
            for v in p.iter().chain(&q) {
                let _ = write!(csv, ",{v}");
            }
        }
        csv.push('\n');
    }

    /// Writes the trace to `path` in one piece (a reader never sees half of it).
    pub fn write(&self, path: &Path) -> Result<()> {
        crate::fsutil::write_atomic(path, self.csv.as_bytes())
    }

    /// Rows so far.
    pub fn rows(&self) -> usize {
        self.csv.lines().count().saturating_sub(1)
    }
}
