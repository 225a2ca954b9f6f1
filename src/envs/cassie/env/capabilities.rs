//! What the Cassie task offers beyond the [`Env`](crate::envs::Env) core: the walking task's
//! controls ([`Walking`]: commands, courses, pushes, its two physics models, the gated stage),
//! its mirror lists, the privileged critic's observation and its drawable bodies.

use super::{CassieEnv, COMMAND_LIMITS};
use crate::envs::cassie::commands::{Command, CommandKind};
use crate::envs::cassie::config::{CassieConfig, ObsKind};
use crate::envs::cassie::{critic_obs, mirror_lists};
use crate::envs::levels::{Levels, TrackOutcome};
use crate::envs::{
    CommandError, CourseLeg, Drawable, MirrorIndices, Mirrored, PrivilegedCritic, Pushes, Walking,
};

/// The largest push [`Walking::push_now`] takes (m/s), as `--push`'s range.
const MAX_ASKED_PUSH: f32 = 5.0;

/// A command `gait eval` may give, checked against [`COMMAND_LIMITS`].
fn checked_command(command: &[f32]) -> Result<Command, CommandError> {
    let [x, y, turn] = command else {
        return Err(CommandError::Arity { expected: 3, got: command.len() });
    };
    for (&(name, limit, unit), &value) in COMMAND_LIMITS.iter().zip([x, y, turn]) {
        if !value.is_finite() || value.abs() > limit {
            return Err(CommandError::OutOfRange { name, value, min: -limit, max: limit, unit });
        }
    }
    Ok(Command { x: *x as f64, y: *y as f64, turn: *turn as f64 })
}

impl Walking for CassieEnv {
    fn set_command(&mut self, command: &[f32]) -> Result<(), CommandError> {
        self.fixed_command = Some(checked_command(command)?);
        self.course.clear();
        self.course_ground.clear();
        Ok(())
    }

    fn steer(&mut self, command: &[f32]) -> Result<(), CommandError> {
        let command = checked_command(command)?;
        self.fixed_command = Some(command);
        self.course.clear();
        self.course_ground.clear();
        if self.command != command {
            self.command = command;
            self.retime_clock();
        }
        Ok(())
    }

    fn push_now(&mut self, dv: [f32; 2]) -> Result<(), CommandError> {
        let speed = dv[0].hypot(dv[1]);
        if !(speed.is_finite() && speed <= MAX_ASKED_PUSH) {
            return Err(CommandError::OutOfRange {
                name: "push",
                value: speed,
                min: 0.0,
                max: MAX_ASKED_PUSH,
                unit: "m/s",
            });
        }
        self.asked_push = Some(dv);
        Ok(())
    }

    /// The run's command distribution's ranges ([`CommandKind::ranges`]).
    fn command_range(&self) -> Option<[[f32; 2]; 3]> {
        Some(self.config.commands.ranges())
    }

    fn gait_phase(&self) -> Option<f32> {
        Some((self.clock.phase() / self.clock.cycle_time()) as f32)
    }

    fn set_course(&mut self, course: &[CourseLeg]) -> Result<(), CommandError> {
        let legs = course
            .iter()
            .map(|leg| Ok((leg.start, checked_command(&leg.command)?)))
            .collect::<Result<Vec<_>, CommandError>>()?;
        let ordered = legs.windows(2).all(|w| w[0].0 < w[1].0);
        let first = match legs.first() {
            Some(&(0, first)) if ordered => first,
            _ => return Err(CommandError::CourseSteps),
        };
        let ground = crate::envs::course_stretches(course, 1.0 / self.config.policy_rate as f32)?;
        self.fixed_command = Some(first);
        self.course = legs;
        self.course_ground = ground;
        Ok(())
    }

    fn clear_command(&mut self) {
        self.fixed_command = None;
        self.course.clear();
        self.course_ground.clear();
    }

    fn set_stage(&mut self, from: Option<u64>) {
        self.stage_from = from;
    }

    fn set_levels(&mut self, levels: &Levels) {
        self.levels = *levels;
    }

    /// Training episodes on a kind with a level (`--terrain-levels`) only.
    fn track_outcome(&self) -> Option<TrackOutcome> {
        let run = self.track_run.as_ref().filter(|_| self.training.is_some())?;
        let at = self.sim.base_position();
        let passed = run.passed([at.x, at.y], self.fell.is_some())?;
        Some(TrackOutcome { track: run.track, passed })
    }

    /// The run's models ([`crate::envs::cassie::CassieConfig::sim`]), in their order: 2 with
    /// `--sim rapier+mujoco` (model 0 rapier, 1 MuJoCo).
    fn eval_models(&self) -> usize {
        self.config.sim.models().len()
    }

    fn eval_model_name(&self, model: usize) -> &'static str {
        let models = self.config.sim.models();
        models.get(model).unwrap_or(&models[0]).backend.name()
    }

    fn set_eval_model(&mut self, model: Option<usize>) -> Result<(), CommandError> {
        let models = self.config.sim.models();
        self.forced_model = match model {
            None => None,
            // A run of one model runs it whatever is forced.
            Some(0) if models.len() == 1 => None,
            Some(i) => Some(models.get(i).ok_or(CommandError::Unsupported)?.backend),
        };
        Ok(())
    }

    fn set_prenormalizing(&mut self, on: bool) {
        self.prenormalizing = on;
    }

    fn set_push(&mut self, pushes: Pushes) -> Result<(), CommandError> {
        let speed = match pushes {
            Pushes::Own | Pushes::Full => 0.0,
            Pushes::UpTo(v) | Pushes::Exactly(v) => v,
        };
        // The range of `--push` (its row in CassieConfig), one definition for both.
        let push = <CassieConfig as crate::settings::Section>::setting("push");
        if push.check(&serde_json::Value::from(speed as f64)).is_err() {
            return Err(CommandError::OutOfRange {
                name: "push",
                value: speed,
                min: 0.0,
                max: 5.0,
                unit: "m/s",
            });
        }
        self.pushes = pushes;
        Ok(())
    }

    /// 1.0 and 0.5 m/s straight ahead and standing: the speeds `gait eval` is judged at.
    /// Forward commands: 1.0, 0.5 and 0 m/s. Omnidirectional ones add backward, a sidestep, a
    /// turn in place and a walking turn (one side each: the mirror loss makes the policy
    /// symmetric, and the training evaluation's few episodes go further on more commands).
    fn eval_commands(&self) -> &'static [[f32; 3]] {
        match self.config.commands {
            CommandKind::Forward => &[[1.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, 0.0]],
            CommandKind::Omni | CommandKind::OmniWalk => &[
                [1.0, 0.0, 0.0],
                [0.5, 0.0, 0.0],
                [0.0, 0.0, 0.0],
                [-0.3, 0.0, 0.0],
                [0.0, 0.2, 0.0],
                [0.0, 0.0, 0.4],
                [0.6, 0.0, 0.3],
            ],
        }
    }

    fn mirror_command(&self, [x, y, turn]: [f32; 3]) -> Option<[f32; 3]> {
        // `0.0 - v`, not `-v`: the image of 0 is +0, so images compare and print as typed.
        Some([x, 0.0 - y, 0.0 - turn])
    }
}

impl Mirrored for CassieEnv {
    fn observation_mirror_indices(&self) -> Option<MirrorIndices> {
        let velocity = self.config.obs.observes_velocity();
        let c = &self.config;
        mirror_lists::observation(c.full_clock, velocity, c.history, c.height_scan).ok()
    }

    fn action_mirror_indices(&self) -> Option<MirrorIndices> {
        mirror_lists::action().ok()
    }

    fn critic_observation_mirror_indices(&self) -> Option<MirrorIndices> {
        if self.critic_obs.is_empty() {
            return None;
        }
        let hidden = self.config.obs != ObsKind::Velocity;
        critic_obs::mirror(&Mirrored::observation_mirror_indices(self)?, hidden).ok()
    }
}

impl PrivilegedCritic for CassieEnv {
    fn critic_observation_size(&self) -> usize {
        self.critic_obs.len()
    }

    fn critic_observation(&self) -> &[f32] {
        &self.critic_obs
    }
}

impl Drawable for CassieEnv {
    fn body_shapes(&self) -> Vec<crate::envs::BodyShape> {
        self.sim.body_shapes()
    }

    fn body_poses(&self, out: &mut Vec<crate::envs::BodyPose>) {
        self.sim.body_poses(out);
    }

    fn body_contacts(&self, out: &mut Vec<bool>) {
        self.sim.body_contacts(out);
    }

    fn ground(&self) -> Option<&crate::envs::terrain::Heightfield> {
        self.terrain.as_deref()
    }
}
