//! `--env cassie`: Cassie on the rapier3d model of `sim.rs`, with two tasks behind flags.
//!
//! * The walking task (the defaults): 500 Hz physics, a clock-synced reference gait under the
//!   action ([`super::reference`]), the walking reward ([`super::reward::walk`]) with a fall
//!   penalty, forward commands held for most of an episode, and the pelvis velocity observed.
//! * The reference's LocomotionClockEnv (roadrunner §7.2-7.8): `--sim-dt 0.0005 --reference
//!   none --reward vonmises --commands omni --obs reference`.
//!
//! Per policy step: PD targets = action + neutral offset + reference offset;
//! `round(sim rate / policy rate)` substeps (10 at 500 Hz / 50 Hz); reward; termination; the
//! clock advances; new commands when their hold time is up (and a new gait with
//! `--full-gait`). Observation layout: §7.3's 44 values (46 with `--full-clock`), then with
//! `--obs velocity` the pelvis linear velocity in its heading (yaw) frame, 3 more.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rapier3d::glamx::Vec3;

use super::clock::GaitClock;
use super::commands::Command;
use super::config::{CassieConfig, ObsKind, FIXED_CYCLE};
use super::critic_obs::{self, LastPush};
use super::estimator::VelocityEstimator;
use super::physics::{self, Physics, SimKind};
use super::reward::{self, TurnKind};
use crate::envs::cassie::curriculum::{TrackRun, LEVEL_SPREAD};
use crate::envs::cassie::layout;
use crate::envs::cassie::robot::description::Description;
use crate::envs::cassie::robot::motor::Motor;
use crate::envs::cassie::robot::Dynamics;
use crate::envs::cassie::robot::N;
use crate::envs::controller::PdTargets;
use crate::envs::levels::Levels;
use crate::envs::terrain::{course_ground, Heightfield, Stretch, TerrainKind, TerrainSpec, MIXED};
use crate::envs::{
    CommandError, Drawable, Env, Mirrored, PrivilegedCritic, Pushes, RewardTerm, Step, Walking,
};
use outcome::Fall;
use perturbations::Sensing;

/// Commands `gait eval --command` accepts: `(name, |limit|, unit)` for x, y and turn. Wider
/// than either training distribution (so out-of-distribution speeds can be probed) but within
/// what the robot could mean: Cassie's record is about 4 m/s.
const COMMAND_LIMITS: [(&str, f32, &str); 3] =
    [("x", 4.0, "m/s"), ("y", 2.0, "m/s"), ("turn", std::f32::consts::PI, "rad/s")];

/// Cassie's walking task over one physics backend: observation, commands, clock, reference gait, reward, termination, perturbations.
pub struct CassieEnv {
    config: CassieConfig,
    offset: [f32; N],
    torque_limits: [f32; N],
    /// The episode's physics.
    sim: Box<dyn Physics>,
    /// Its timestep (s), as configured: the substeps and push durations read this f64, not
    /// the simulator's own copy (rapier keeps an f32, whose rounding would move every push).
    dt: f64,
    /// The run's other models (those of [`CassieConfig::sim`] beside the episode's), each
    /// swapped in when an episode draws it.
    spare: Vec<Box<dyn Physics>>,
    /// [`Walking::set_eval_model`](crate::envs::Walking::set_eval_model): the model the next episodes run on instead of the drawn one.
    forced_model: Option<SimKind>,
    rng: ChaCha8Rng,
    clock: GaitClock,
    command: Command,
    fixed_command: Option<Command>,
    /// A training episode's own command, held until it ends (`terrain_forward`).
    episode_command: Option<Command>,
    /// [`Walking::set_course`](crate::envs::Walking::set_course): `(first step, command)` per leg, in order; empty without one.
    course: Vec<(u32, Command)>,
    /// The course's ground ([`crate::envs::course_stretches`]); empty: none (the run's
    /// `terrain`, or the flat floor).
    course_ground: Vec<Stretch>,
    redraw_every: u32,
    steps: u32,
    /// Commanded heading (rad): random at reset, integrated from the turn command.
    heading: f64,
    last_action: Option<[f32; N]>,
    /// This step's reference-gait offsets (zero with `--reference none`).
    reference: [f32; N],
    /// This step's stepping gain (the reference's and the clock rewards').
    stepping_gain: f32,
    obs: Vec<f32>,
    /// The critic's own observation (`--privileged-critic`; empty without it).
    critic_obs: Vec<f32>,
    /// The episode's dynamics (read by the critic observation).
    dynamics: Dynamics,
    /// The episode's last push.
    last_push: Option<LastPush>,
    /// [`Walking::set_push`](crate::envs::Walking::set_push): `gait eval --push` and evaluations (no pushes).
    pushes: Pushes,
    /// `Some(train steps so far)` in training episodes ([`Env::set_training`]).
    training: Option<u64>,
    /// The step at which the run's gated stage began ([`Walking::set_stage`](crate::envs::Walking::set_stage)).
    stage_from: Option<u64>,
    /// [`Walking::set_prenormalizing`](crate::envs::Walking::set_prenormalizing): the reference gait is the run's first step's.
    prenormalizing: bool,
    /// The policy step of the next push, and whether the last step pushed.
    next_push: u32,
    pushing: bool,
    /// [`Walking::push_now`](crate::envs::Walking::push_now): a push asked for at the next
    /// step (world `[vx, vy]`, m/s).
    asked_push: Option<[f32; 2]>,
    /// What ended the episode at the last step.
    fell: Option<Fall>,
    /// [`Env::drive_targets`]: actions are the PD targets themselves.
    targets_input: bool,
    /// [`Env::drive_targets`]'s torque delay (s), in place of the drawn dynamics' one.
    torque_delay: Option<f32>,
    /// The episode's ground beyond the floor (`--terrain`).
    terrain: Option<Arc<Heightfield>>,
    /// The adaptive terrain levels ([`Walking::set_levels`](crate::envs::Walking::set_levels)).
    levels: Levels,
    /// A training episode on a kind with a level (`--terrain-levels`): what its outcome is
    /// judged by.
    track_run: Option<TrackRun>,
    terms: Vec<RewardTerm>,
    metrics: [RewardTerm; 6],
    /// Each foot site's position after the last step if the foot was loaded then
    /// (`measure_feet`); `None` in the air and at an episode's start.
    loaded_feet: [Option<Vec3>; 2],
    /// The episode's sensing: latency and IMU bias ([`Sensing`]).
    sensing: Sensing,
    /// The pelvis velocity a robot would estimate (`--obs estimate`).
    estimator: VelocityEstimator,
}

/// How the episode's sensors differ from the simulator's state: drawn at every reset.
impl CassieEnv {
    /// The task with these settings.
    pub fn new(config: CassieConfig) -> Self {
        let desc = Description::cassie();
        let offset = desc.neutral_stance();
        let torque_limits: Vec<f32> = desc.motors().map(|(.., m)| m.gear * m.ctrl_limit).collect();
        let mut spare = physics::build(&config.sim, |backend| config.dt_of(backend));
        let sim = spare.remove(0);
        let dt = config.dt_of(sim.kind());
        let clock = GaitClock::new(FIXED_CYCLE, config.policy_rate, [0.5, 0.5], [0.0, 0.5], 0.1);
        let obs_len = layout::observation_len(&config);
        let estimator = VelocityEstimator::new(config.velocity_lag);
        let hidden = if config.obs == ObsKind::Velocity { 0 } else { critic_obs::HIDDEN };
        let critic_len =
            if config.privileged_critic { obs_len + critic_obs::EXTRAS + hidden } else { 0 };
        Self {
            config,
            offset,
            torque_limits: torque_limits.try_into().expect("10 motors"),
            dt,
            sim,
            spare,
            forced_model: None,
            rng: ChaCha8Rng::seed_from_u64(0),
            clock,
            command: Command { x: 0.0, y: 0.0, turn: 0.0 },
            fixed_command: None,
            episode_command: None,
            course: Vec::new(),
            course_ground: Vec::new(),
            redraw_every: 100,
            steps: 0,
            heading: 0.0,
            last_action: None,
            reference: [0.0; N],
            stepping_gain: 0.0,
            obs: vec![0.0; obs_len],
            critic_obs: vec![0.0; critic_len],
            dynamics: Dynamics::default(),
            last_push: None,
            pushes: Pushes::Own,
            training: None,
            prenormalizing: false,
            stage_from: None,
            next_push: u32::MAX,
            pushing: false,
            asked_push: None,
            fell: None,
            targets_input: false,
            torque_delay: None,
            terrain: None,
            levels: Levels::default(),
            track_run: None,
            terms: Vec::with_capacity(16),
            metrics: [
                ("forward_speed", 0.0),
                ("lateral_speed", 0.0),
                ("yaw_rate", 0.0),
                ("pelvis_height", 0.0),
                ("foot_slide", 0.0),
                ("foot_lift", 0.0),
            ],
            loaded_feet: [None; 2],
            sensing: Sensing::default(),
            estimator,
        }
    }

    /// Its settings.
    pub fn config(&self) -> &CassieConfig {
        &self.config
    }

    /// The simulator, for tests and diagnostics.
    pub fn sim(&self) -> &dyn Physics {
        self.sim.as_ref()
    }

    /// Draws the episode's ground (`--terrain`) along `heading` and gives it to the physics:
    /// its kind (one of [`MIXED`] with `mix`), its difficulty (training: uniform up to the
    /// setting's times the terrain stage's strength, or with `--terrain-levels` the setting's
    /// times a draw from the top [`LEVEL_SPREAD`] below the kind's level; the flat floor
    /// before the stage; else the setting's) and its seed, in that order from the env's
    /// generator.
    fn draw_terrain(&mut self, heading: f32) -> TerrainKind {
        let mut kind = self.config.terrain;
        if kind == TerrainKind::Mix {
            kind = MIXED[self.rng.gen_range(0..MIXED.len())];
        }
        let top = self.config.terrain_difficulty;
        self.track_run = None;
        let difficulty = match self.training {
            Some(t) => {
                let strength = self.config.terrain_stage().strength(t, self.stage_from);
                if strength == 0.0 {
                    kind = TerrainKind::Flat;
                }
                let u = self.rng.gen_range(0.0..=1.0);
                match kind.track().filter(|_| self.config.terrain_levels) {
                    Some(track) => {
                        self.track_run = Some(TrackRun::new(track, heading));
                        let level = self.levels.of(track as usize) as f64;
                        top * (level - LEVEL_SPREAD * u).max(0.0)
                    }
                    None => u * top * strength,
                }
            }
            None => top,
        };
        let seed = self.rng.gen();
        let field = (kind != TerrainKind::Flat).then(|| {
            Arc::new(TerrainSpec { kind, difficulty: difficulty as f32, seed }.build(heading))
        });
        self.sim.set_terrain(field.clone());
        self.terrain = field;
        kind
    }

    /// The episode's ground along `heading`: a course's own where it names one, else the
    /// run's `terrain` ([`Self::draw_terrain`]), else the flat floor. Returns the kind drawn
    /// (the flat floor for a course's ground, which its legs command).
    fn lay_ground(&mut self, heading: f32) -> TerrainKind {
        if !self.course_ground.is_empty() {
            self.track_run = None;
            let field = Arc::new(course_ground(&self.course_ground, self.rng.gen(), heading));
            self.sim.set_terrain(Some(field.clone()));
            self.terrain = Some(field);
            TerrainKind::Flat
        } else if self.config.terrain != TerrainKind::Flat {
            self.draw_terrain(heading)
        } else {
            if self.terrain.is_some() {
                self.sim.set_terrain(None);
                self.terrain = None;
            }
            TerrainKind::Flat
        }
    }

    /// With `terrain_forward`, a training episode on `ground` laid along the heading walks
    /// into it: by that share, a forward command at U(0.3, `terrain_forward_max`) m/s held
    /// until the episode ends. Draws nothing otherwise, so runs without the setting keep their
    /// streams.
    fn walk_into(&mut self, ground: TerrainKind) {
        let share = self.config.terrain_forward;
        if share == 0.0 || self.training.is_none() || !ground.along_heading() {
            return;
        }
        if self.rng.gen::<f64>() < share {
            let x = self.rng.gen_range(0.3..=self.config.terrain_forward_max);
            self.command = Command { x, y: 0.0, turn: 0.0 };
            self.episode_command = Some(self.command);
            self.retime_clock();
        }
    }

    /// Adds this step's command to the distance a terrain-levels episode was asked to walk
    /// along its ground ([`TrackRun::ask`]).
    fn ask_track(&mut self) {
        if let Some(run) = &mut self.track_run {
            let dt = 1.0 / self.config.policy_rate as f32;
            run.ask([self.command.x as f32, self.command.y as f32], self.heading as f32, dt);
        }
    }

    /// Makes `model` (one of the run's) the episode's physics.
    fn swap_in(&mut self, model: SimKind) {
        if self.sim.kind() != model {
            let other = self.spare.iter_mut().find(|s| s.kind() == model);
            std::mem::swap(&mut self.sim, other.expect("a model of the run"));
        }
    }

    /// Sets the clock phase (s) — for tests that need two envs at related phases.
    pub fn set_phase(&mut self, phase: f64) {
        self.clock.set_phase(phase);
        self.write_obs();
    }

    /// Replaces the gait's period shifts [L, R], keeping cycle, swing and phase.
    pub fn set_shifts(&mut self, shift: [f64; 2]) {
        let phase = self.clock.phase();
        self.clock = GaitClock::new(
            self.clock.cycle_time(),
            self.config.policy_rate,
            self.clock.swing(),
            shift,
            0.1,
        );
        self.clock.set_phase(phase);
        self.write_obs();
    }

    /// The clock's cycle time (s).
    pub fn cycle_time(&self) -> f64 {
        self.clock.cycle_time()
    }

    /// Resets with the commanded heading `heading` instead of a random one (tests).
    pub fn reset_with_heading(&mut self, heading: f64) -> &[f32] {
        self.start_episode(Some(heading));
        &self.obs
    }

    fn start_episode(&mut self, heading: Option<f64>) {
        self.episode_command = None;
        self.renew_clock();
        let phase = self.rng.gen_range(0.0..self.clock.cycle_time());
        self.clock.set_phase(phase);
        self.redraw_every = self.redraw_interval();
        self.new_command();
        self.retime_clock();
        let mut dynamics = self.draw_dynamics();
        if let Some(delay) = self.torque_delay {
            dynamics.delay = delay;
        }
        let heading = match heading {
            Some(h) => h,
            None => self.rng.gen_range(-std::f64::consts::PI..std::f64::consts::PI),
        };
        self.heading = heading;
        if self.config.sim.is_mix() {
            // The episode's model by the shares, `robust_shares` once the perturbations have
            // begun where set (drawn even when a selection episode forces the model, so the
            // draws after it do not move).
            let late = !self.config.robust_shares.is_empty() && self.perturbed();
            let late = late.then_some(self.config.robust_shares.as_slice());
            let drawn = self.config.sim.draw(late, &mut self.rng);
            let drawn = self.config.sim.models()[drawn].backend;
            self.swap_in(self.forced_model.unwrap_or(drawn));
        }
        // A forced model is a selection episode, which scores the weights as `gait eval --sim`
        // runs them: at the model's own default timestep, not training's.
        let kind = self.sim.kind();
        self.dt = match self.forced_model {
            Some(_) => kind.default_dt(),
            None => self.config.dt_of(kind),
        };
        self.sim.set_timestep(self.dt);
        let ground = self.lay_ground(heading as f32);
        self.walk_into(ground);
        self.sim.reset(&dynamics, heading as f32);
        if let Some(run) = &mut self.track_run {
            let start = self.sim.base_position();
            run.start_at([start.x, start.y]);
        }
        self.dynamics = dynamics;
        self.sensing = self.draw_sensing();
        self.estimator.reset(self.sim.base_linvel());
        self.steps = 0;
        self.pushing = false;
        self.asked_push = None;
        self.last_push = None;
        self.fell = None;
        self.schedule_push(0);
        self.last_action = None;
        self.loaded_feet = [None; 2];
        self.write_obs();
        self.fill_history();
    }
}

/// Physics substeps per policy step at `rate` Hz with timestep `dt` (s): at least one.
pub(crate) fn substeps(dt: f64, rate: f64) -> usize {
    ((1.0 / dt) / rate).round().max(1.0) as usize
}

impl Env for CassieEnv {
    fn observation_size(&self) -> usize {
        self.obs.len()
    }

    fn action_size(&self) -> usize {
        N
    }

    fn seed(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }

    fn reset(&mut self) -> &[f32] {
        self.start_episode(None);
        &self.obs
    }

    fn step(&mut self, action: &[f32]) -> Step<'_> {
        let mut a = [0.0; N];
        a.copy_from_slice(&action[..N]);
        self.update_reference();
        let mut targets = [0.0; N];
        for k in 0..N {
            if self.targets_input {
                // The caller built the targets (`gait eval --onnx`); the reward's action terms
                // read the residual they amount to.
                targets[k] = a[k];
                a[k] = targets[k] - self.offset[k] - self.reference[k];
            } else {
                targets[k] = a[k] + self.offset[k] + self.reference[k];
            }
        }
        self.push_history(&a);
        let rate = if self.config.dynamics_randomization && self.training.is_some() {
            self.config.policy_rate + self.robustness() * self.rng.gen_range(0..6) as f64
        } else {
            self.config.policy_rate
        };
        self.ask_track();
        self.heading += self.command.turn / self.config.policy_rate;
        let substeps = substeps(self.dt, rate);
        self.update_push((substeps as f64 * self.dt) as f32);
        let lag = ((self.sensing.latency / self.dt).round() as usize).min(substeps);
        if lag > 0 {
            // The robot as sensed `lag` substeps before the step's end; the task part of the
            // observation (command, clock) is the controller's own and not delayed.
            self.sim.step(&targets, substeps - lag);
            self.sense();
            if !self.sim.diverged() {
                self.sim.step(&targets, lag);
            }
        } else {
            self.sim.step(&targets, substeps);
        }
        if self.config.turn_reward == TurnKind::Rate {
            // The commanded frame is the robot's own heading: the command is in the body frame.
            self.heading = reward::yaw(self.sim.base_rotation()) as f64;
        }
        if self.training.is_none() || self.config.slide_penalty > 0.0 {
            self.measure_feet((substeps as f64 * self.dt) as f32);
        }
        let mut reward = self.reward(&a);
        self.fell = self.fall(reward);
        let done = self.fell.is_some();
        if done {
            let penalty = self.config.fall_penalty_at(self.training, self.stage_from);
            reward += self.config.reward.termination_reward(penalty as f32);
        }
        // Pelvis velocity in the commanded heading's frame (what the command asks for).
        let [forward, lateral] =
            reward::planar_in_heading(self.sim.base_linvel(), self.heading as f32);
        self.metrics[0].1 = forward;
        self.metrics[1].1 = lateral;
        self.metrics[2].1 = self.sim.base_angvel().z;
        self.metrics[3].1 = self.pelvis_height();
        self.steps += 1;
        self.last_action = Some(a);
        self.clock.increment();
        if let Some(&(_, leg)) = self.course.iter().find(|(start, _)| *start == self.steps) {
            self.command = leg;
            self.retime_clock();
        }
        if self.fixed_command.is_none() && self.steps.is_multiple_of(self.redraw_every) {
            self.new_command();
            if self.config.full_gait {
                let phase = self.clock.phase();
                self.renew_clock();
                self.clock.set_phase(phase);
            }
            self.retime_clock();
        }
        if lag == 0 {
            self.sense();
        }
        self.write_task_obs();
        Step { obs: &self.obs, reward, done, info: &self.terms }
    }

    fn diverged(&self) -> bool {
        self.sim.blew_up()
    }

    fn set_training(&mut self, timesteps: Option<u64>) {
        self.training = timesteps;
    }

    fn policy_dt(&self) -> f32 {
        (1.0 / self.config.policy_rate) as f32
    }

    fn metrics(&self) -> &[RewardTerm] {
        &self.metrics
    }

    fn controller(&self) -> Option<crate::envs::ControllerSpec> {
        super::controller::describe(&self.config, &self.clock)
    }

    fn drive_targets(&mut self, pd: &PdTargets) -> Result<(), CommandError> {
        let own = Description::cassie().motor_models();
        let fits =
            [&pd.kp, &pd.kd, &pd.torque_limit, &pd.no_load_speed].iter().all(|v| v.len() == N);
        if !fits {
            return Err(CommandError::Unsupported);
        }
        let motors: [Motor; N] = std::array::from_fn(|k| {
            own[k].with_joint_pd(pd.kp[k], pd.kd[k], pd.torque_limit[k], pd.no_load_speed[k])
        });
        self.sim.set_motors(motors);
        for spare in &mut self.spare {
            spare.set_motors(motors);
        }
        self.torque_delay = Some(pd.torque_delay);
        self.targets_input = true;
        Ok(())
    }

    fn termination(&self) -> Option<&'static str> {
        self.fell.map(Fall::describe)
    }

    fn walking(&self) -> Option<&dyn Walking> {
        Some(self)
    }

    fn walking_mut(&mut self) -> Option<&mut dyn Walking> {
        Some(self)
    }

    fn mirror(&self) -> Option<&dyn Mirrored> {
        Some(self)
    }

    /// With `--privileged-critic` only.
    fn critic(&self) -> Option<&dyn PrivilegedCritic> {
        (!self.critic_obs.is_empty()).then_some(self as &dyn PrivilegedCritic)
    }

    fn bodies(&self) -> Option<&dyn Drawable> {
        Some(self)
    }
}

/// Which of [`CassieEnv::fall`]'s conditions ended an episode.
mod capabilities;
mod observation;
mod outcome;
mod perturbations;
mod task;

#[cfg(test)]
mod sensing_tests;
#[cfg(test)]
mod tests;
