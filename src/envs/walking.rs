//! The walking task's controls, a capability an env offers through [`Env::walking`](super::Env::walking): the
//! commands it is judged on, scripted courses, pushes, the physics models its episodes draw
//! among, and a curriculum stage an evaluation opens. The sampler, the training evaluation,
//! the selection, `gait eval` and `gait check` reach them there; an env that is no walking task
//! (cartpole) has none of them and is not asked.

use super::cassie::SimKind;
use super::levels::{Levels, TrackOutcome};
use super::CommandError;

/// Which pushes an env applies ([`Walking::set_push`]); a push is a speed change of the whole
/// robot (m/s) in a random horizontal direction, at the env's push times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pushes {
    /// The env's own training pushes (its config, its schedule).
    Own,
    /// The env's own pushes at full strength, without a training schedule: training-time
    /// evaluations, so that `Test/Return` measures the robustness the run trains for, the same
    /// way at every iteration.
    Full,
    /// Each push U(0, v): the training distribution of `--push v` (`gait eval --push v`;
    /// `UpTo(0)` turns pushes off, what evaluations run).
    UpTo(f32),
    /// Every push exactly v (`gait eval --push v --push-exact`).
    Exactly(f32),
}

/// `gait eval --sim/--sim-dt/--friction/--latency/--sensor-noise` (and `gait check`'s cells):
/// run a walking policy on another physics backend, timestep or floor, or with the sensors a
/// robot has; an env's settings section applies it ([`super::EnvSchedule::apply_physics`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhysicsOverride {
    /// The backend; another one than the run's starts from that backend's default timestep.
    pub sim: Option<SimKind>,
    /// The timestep (s), already range-checked.
    pub sim_dt: Option<f64>,
    /// The floor's friction factor (`CassieConfig::friction`), already range-checked; unset:
    /// the run's (1, the models' own, unless it trained on another floor).
    pub friction: Option<f64>,
    /// Sensing latency (s, `CassieConfig::eval_latency`), already range-checked; unset: none.
    pub latency: Option<f64>,
    /// Sensor noise and IMU bias in multiples of the reference's levels
    /// (`CassieConfig::eval_noise`), already range-checked; unset: exact sensors.
    pub sensor_noise: Option<f64>,
    /// The ground and its difficulty in [0, 1] (`CassieConfig::terrain`); unset: the flat
    /// floor.
    pub terrain: Option<TerrainArg>,
}

/// `--terrain KIND[:DIFFICULTY]`: a kind of ground and its difficulty in [0, 1] (0.5 unless
/// given).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TerrainArg {
    /// The kind of ground.
    pub kind: crate::envs::terrain::TerrainKind,
    /// Its difficulty in [0, 1].
    pub difficulty: f64,
}

impl std::str::FromStr for TerrainArg {
    type Err = String;

    /// `stairs`, `stairs:0.8`.
    fn from_str(s: &str) -> Result<Self, String> {
        use clap::ValueEnum;
        let (kind, difficulty) = match s.split_once(':') {
            Some((kind, d)) => (kind, Some(d)),
            None => (s, None),
        };
        let kind =
            crate::envs::terrain::TerrainKind::from_str(kind.trim(), false).map_err(|_| {
                format!(
                "'{s}': a terrain is flat, rough, slope, stairs, flights, upstairs, downstairs or mix, then :DIFFICULTY \
                 in [0, 1] if you like"
            )
            })?;
        let difficulty = match difficulty {
            None => 0.5,
            Some(d) => match d.trim().parse::<f64>() {
                Ok(v) if (0.0..=1.0).contains(&v) => v,
                _ => return Err(format!("'{s}': the difficulty after ':' is a number in [0, 1]")),
            },
        };
        Ok(Self { kind, difficulty })
    }
}

impl PhysicsOverride {
    /// Whether it overrides nothing.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// One leg of a scripted course ([`Walking::set_course`]): a command held from policy step
/// `start` of the episode on (the first leg's `start` is 0, later ones strictly increase).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CourseLeg {
    /// The policy step the leg starts at.
    pub start: u32,
    /// Its command `[x, y, turn]` (m/s, m/s, rad/s).
    pub command: [f32; 3],
    /// The ground laid from where the leg begins ([`course_stretches`]); `None`: the ground of
    /// the leg before it goes on (the flat floor for the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ground: Option<TerrainArg>,
}

/// The ground of a course whose legs name some ([`CourseLeg::ground`]), at `dt` seconds per
/// policy step, as stretches along the start heading: a leg's ground begins where the legs
/// before it would carry the robot if it walked its commands' forward speeds exactly (the sum
/// of forward speed × seconds; turns and sidesteps move nothing along the heading). Empty when
/// no leg names a ground. Refused: a ground that starts no farther than the one before it
/// (the legs between them walk nowhere along the heading), and `mix` (a course names its
/// kinds).
pub fn course_stretches(
    legs: &[CourseLeg],
    dt: f32,
) -> Result<Vec<crate::envs::terrain::Stretch>, CommandError> {
    let mut stretches: Vec<crate::envs::terrain::Stretch> = Vec::new();
    let mut along = 0.0f32;
    for (i, leg) in legs.iter().enumerate() {
        if let Some(ground) = leg.ground {
            if ground.kind == crate::envs::terrain::TerrainKind::Mix {
                return Err(CommandError::CourseGround(format!(
                    "leg {}: a course names its ground's kind (mix draws one per episode)",
                    i + 1
                )));
            }
            if let Some(last) = stretches.last().filter(|last| along <= last.start + 1e-3) {
                return Err(CommandError::CourseGround(format!(
                    "leg {}'s ground would begin {along:.2} m along the heading, not past the \
                     ground before it (from {:.2} m): the legs between must walk forward",
                    i + 1,
                    last.start
                )));
            }
            stretches.push(crate::envs::terrain::Stretch {
                start: along,
                kind: ground.kind,
                difficulty: ground.difficulty as f32,
            });
        }
        if let Some(next) = legs.get(i + 1) {
            along += next.start.saturating_sub(leg.start) as f32 * dt * leg.command[0];
        }
    }
    Ok(stretches)
}

/// How the next episode of a walking env begins, as data: what the sampler's jobs (training,
/// evaluation, selection) differ by. [`Walking::begin_episode`] applies it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpisodePlan {
    /// A command held for the whole episode; `None`: the env's own draws.
    pub command: Option<[f32; 3]>,
    /// The physics model to run (`< eval_models()`); `None`: drawn.
    pub model: Option<usize>,
    /// The pushes.
    pub pushes: Pushes,
    /// The train step at which the run's gated stage began (`None`: not yet).
    pub stage_from: Option<u64>,
    /// The adaptive curriculum's levels ([`super::levels`]; all 0 without one).
    pub levels: Levels,
}

/// A commanded locomotion task. Commands are `[x, y, turn]` (m/s, m/s, rad/s) in the commanded
/// heading's frame.
pub trait Walking {
    /// Sets the next episode up as `plan` says, whatever the previous episode was set to: the
    /// one call the sampler makes before each episode. Refuses (with what it could not take) a
    /// model or command the env does not have; an env that cannot be pushed runs unpushed.
    fn begin_episode(&mut self, plan: &EpisodePlan) -> Result<(), CommandError> {
        self.set_eval_model(plan.model)?;
        match &plan.command {
            Some(command) => self.set_command(command)?,
            None => self.clear_command(),
        }
        let _ = self.set_push(plan.pushes);
        self.set_stage(plan.stage_from);
        self.set_levels(&plan.levels);
        Ok(())
    }
    /// Sets the task command (e.g. x velocity, y velocity, turn rate) for `gait eval --command`.
    /// Refuses (and changes nothing) values the env cannot mean, NaN and infinities included.
    fn set_command(&mut self, command: &[f32]) -> Result<(), CommandError>;
    /// Changes the command now, inside the running episode (the next step runs it), and
    /// holds it for the episodes that follow: live driving (`gait play`). Refuses (and changes
    /// nothing) as [`Walking::set_command`] does.
    fn steer(&mut self, _command: &[f32]) -> Result<(), CommandError> {
        Err(CommandError::Unsupported)
    }
    /// Pushes the robot during the next step by the speed change `dv` (world x and y, m/s),
    /// as a training push of that size would (`gait play`'s push key). Refused by envs that
    /// cannot be pushed, and for a change that is not finite or above 5 m/s.
    fn push_now(&mut self, _dv: [f32; 2]) -> Result<(), CommandError> {
        Err(CommandError::Unsupported)
    }
    /// The range each command entry `[x, y, turn]` is trained over, `[low, high]` (the
    /// distribution the run's episodes draw from), so that live driving keeps to it; `None`:
    /// not known (live driving then keeps to what [`Walking::steer`] accepts).
    fn command_range(&self) -> Option<[[f32; 2]; 3]> {
        None
    }
    /// Where the gait cycle is, in [0, 1), for envs with a gait clock.
    fn gait_phase(&self) -> Option<f32> {
        None
    }
    /// Returns to drawing commands from the env's own distribution (undoes
    /// [`Walking::set_command`] and [`Walking::set_course`]).
    fn clear_command(&mut self) {}
    /// Runs every following episode through `course`: each leg's command from its first step
    /// on, the last one held after the course ends (`gait eval --course`). Refuses (and changes
    /// nothing) as [`Walking::set_command`] does, for an empty course too.
    fn set_course(&mut self, _course: &[CourseLeg]) -> Result<(), CommandError> {
        Err(CommandError::Unsupported)
    }
    /// The pushes of the episodes that follow ([`Pushes`]). Refused by envs that cannot be
    /// pushed.
    fn set_push(&mut self, _pushes: Pushes) -> Result<(), CommandError> {
        Err(CommandError::Unsupported)
    }
    /// `true`: the episodes that follow are prenormalization's, before a run's first training
    /// step. They are evaluation episodes ([`Env::set_training`](super::Env::set_training) `None`), except that a setting
    /// the run stages to begin later acts as it does at the run's first step, so that a staged
    /// change (Cassie's `--full-step-start`) leaves the run before its start exactly as it was
    /// without the change. Command draws stay the evaluation's, so the normalizer sees every
    /// command input vary. `false` (the state of a new env): as before.
    fn set_prenormalizing(&mut self, _on: bool) {}
    /// The train step at which the run's gated stage began (`None`: not yet), for envs whose
    /// curriculum waits on an evaluation ([`StageGate`]). Called by the sampler before every
    /// episode, with [`Env::set_training`](super::Env::set_training).
    fn set_stage(&mut self, _from: Option<u64>) {}
    /// The adaptive curriculum's levels for the episodes that follow ([`super::levels`]), for
    /// envs whose settings give a [`LevelRule`](super::levels::LevelRule). Called by the
    /// sampler before every episode.
    fn set_levels(&mut self, _levels: &Levels) {}
    /// How the training episode that just ended went on its track, for the adaptive
    /// curriculum; `None`: no track (no rule, an evaluation, or the flat floor of a mix).
    fn track_outcome(&self) -> Option<TrackOutcome> {
        None
    }
    /// Fixed commands the training-time evaluation cycles through (eval episode `i` runs
    /// command `i % n`), so that its speed metrics compare across iterations. Empty: the
    /// env's own draws.
    fn eval_commands(&self) -> &'static [[f32; 3]];
    /// The mirror image of a command, for an env whose task is mirror-symmetric (Cassie: y and
    /// turn negate under the sagittal mirror, as its mirror loss assumes); `None`: no mirror.
    /// `--selection-commands mirrored` adds the images of the eval commands to the selection
    /// (`crate::algos::tracking::selection_commands`).
    fn mirror_command(&self, _command: [f32; 3]) -> Option<[f32; 3]> {
        None
    }
    /// How many physics models the env's episodes draw among (Cassie with `--sim rapier+mujoco`: 2,
    /// gait's rapier model and the lab's MuJoCo model), so that the selection episodes of
    /// `--best-by tracking` and `cells` run every eval command on every model.
    fn eval_models(&self) -> usize {
        1
    }
    /// The name of physics model `model` (`< eval_models()`), for the selection's per-cell
    /// table (`selection.csv`).
    fn eval_model_name(&self, _model: usize) -> &'static str {
        "default"
    }
    /// `Some(k)`, `k < eval_models()`: the episodes that follow run on model `k` instead of
    /// drawing one (the draw is still made, so every other draw stays where it was); `None`:
    /// drawn again. An env with one model accepts only `None` and `Some(0)`.
    fn set_eval_model(&mut self, model: Option<usize>) -> Result<(), CommandError> {
        match model {
            None | Some(0) => Ok(()),
            Some(_) => Err(CommandError::Unsupported),
        }
    }
}

/// A curriculum stage that begins at an evaluation rather than at a step count: the first
/// training evaluation at or after `not_before` train steps whose `Test/Forward Speed` reaches
/// `forward_speed` opens it. The runner decides (evaluations are deterministic, so the stage
/// starts at the same step for any worker or rank count), keeps the step in the resume state
/// and tells every env through [`Walking::set_stage`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageGate {
    /// Train steps before which no evaluation opens it.
    pub not_before: u64,
    /// `Test/Forward Speed` (m/s) that opens it.
    pub forward_speed: f64,
    /// The flag that asked for it, for messages (`--omni-start-speed`).
    pub setting: &'static str,
}

impl StageGate {
    /// Whether an evaluation measuring `forward_speed` after `timesteps` train steps opens it.
    pub fn opens(&self, timesteps: u64, forward_speed: Option<f64>) -> bool {
        timesteps >= self.not_before && forward_speed.is_some_and(|v| v >= self.forward_speed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envs::terrain::{Stretch, TerrainKind};

    fn leg(start: u32, x: f32, ground: Option<TerrainKind>) -> CourseLeg {
        let ground = ground.map(|kind| TerrainArg { kind, difficulty: 0.5 });
        CourseLeg { start, command: [x, 0.0, 0.3], ground }
    }

    /// A leg's ground begins where the legs before it walk to at their forward speeds; legs
    /// without one lay none; `mix` and a ground that starts no farther than the one before it
    /// are refused.
    #[test]
    fn course_ground_starts_where_the_legs_before_it_walk_to() {
        let dt = 0.02;
        let legs = [
            leg(0, 0.5, None),
            leg(100, 1.0, Some(TerrainKind::Upstairs)),
            leg(150, -0.5, None),
            leg(200, 1.0, Some(TerrainKind::Rough)),
        ];
        let got = course_stretches(&legs, dt).unwrap();
        let want = [
            Stretch { start: 1.0, kind: TerrainKind::Upstairs, difficulty: 0.5 },
            Stretch { start: 1.5, kind: TerrainKind::Rough, difficulty: 0.5 },
        ];
        assert_eq!(got.len(), 2);
        for (g, w) in got.iter().zip(&want) {
            assert!((g.start - w.start).abs() < 1e-5 && g.kind == w.kind, "{got:?}");
        }
        assert!(course_stretches(&[leg(0, 0.5, None)], dt).unwrap().is_empty());
        let mix = [leg(0, 0.5, Some(TerrainKind::Mix))];
        assert!(
            matches!(course_stretches(&mix, dt), Err(CommandError::CourseGround(m)) if m.contains("leg 1"))
        );
        let nowhere =
            [leg(0, 0.0, Some(TerrainKind::Rough)), leg(50, 0.5, Some(TerrainKind::Slope))];
        let e = course_stretches(&nowhere, dt).unwrap_err().to_string();
        assert!(e.contains("leg 2's ground would begin 0.00 m"), "{e}");
    }
}
