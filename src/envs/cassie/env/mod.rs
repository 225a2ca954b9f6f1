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

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rapier3d::glamx::{EulerRot, Vec3};

use super::clock::GaitClock;
use super::commands::{Command, CommandKind};
use super::config::{CassieConfig, ObsKind, EVEN_MUJOCO_SHARE, FIXED_CYCLE};
use super::critic_obs::{self, LastPush};
use super::estimator::VelocityEstimator;
use super::physics::{self, Physics, SimKind};
use super::reward::{self, RewardInputs, RewardKind, TurnKind};
use crate::envs::cassie::robot::description::Description;
use crate::envs::cassie::robot::Dynamics;
use crate::envs::cassie::robot::N;
use crate::envs::{
    CommandError, Drawable, Env, Mirrored, PrivilegedCritic, Pushes, RewardTerm, Step, Walking,
};

/// Commands `gait eval --command` accepts: `(name, |limit|, unit)` for x, y and turn. Wider
/// than either training distribution (so out-of-distribution speeds can be probed) but within
/// what the robot could mean: Cassie's record is about 4 m/s.
const COMMAND_LIMITS: [(&str, f32, &str); 3] =
    [("x", 4.0, "m/s"), ("y", 2.0, "m/s"), ("turn", std::f32::consts::PI, "rad/s")];

const MIN_HEIGHT: f32 = 0.65;

/// The lab model's total mass (kg): a push of speed change `v` is an impulse of `ROBOT_MASS·v`.
const ROBOT_MASS: f32 = 33.312;

/// Seconds between pushes at evaluation (`gait eval --push`, training's evaluations): U(2, 5),
/// whatever a run trained with, so every run is measured alike. Training pushes come every
/// U(`push_every`, 2.5 `push_every`) s.
const PUSH_EVERY: std::ops::Range<f64> = 2.0..5.0;
const MAX_TILT: f32 = 20.0 * std::f32::consts::PI / 180.0;

/// Where [`CassieEnv::measure_feet`] writes in the metrics: `foot_slide` (which the reward's
/// `slide` term also reads) and `foot_lift`.
const FOOT_SLIDE: usize = 4;
const FOOT_LIFT: usize = 5;

/// The contact force (N) from which a foot counts as loaded for the `foot_slide` metric: 3 %
/// of the robot's weight (327 N), so a foot that only grazes the ground is not counted.
const FOOT_LOADED: f32 = 10.0;

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
    /// With `--sim mixed`, the other simulator, swapped in when an episode draws it.
    spare: Option<Box<dyn Physics>>,
    /// [`Walking::set_eval_model`](crate::envs::Walking::set_eval_model): the model the next episodes run on instead of the drawn one.
    forced_model: Option<SimKind>,
    rng: ChaCha8Rng,
    clock: GaitClock,
    command: Command,
    fixed_command: Option<Command>,
    /// [`Walking::set_course`](crate::envs::Walking::set_course): `(first step, command)` per leg, in order; empty without one.
    course: Vec<(u32, Command)>,
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
    /// What ended the episode at the last step.
    fell: Option<Fall>,
    /// [`Env::set_targets_input`]: actions are the PD targets themselves.
    targets_input: bool,
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
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Sensing {
    /// Observation latency (s): the robot state observed at a step's end is the one this
    /// long before it (to the nearest substep, at most the whole step).
    latency: f64,
    /// A constant tilt of the observed orientation about roll and pitch (rad).
    tilt: [f32; 2],
    /// A constant offset of the observed angular velocity (rad/s, body frame).
    gyro: [f32; 3],
}

impl CassieEnv {
    /// The task with these settings.
    pub fn new(config: CassieConfig) -> Self {
        let desc = Description::cassie();
        let offset = desc.neutral_stance();
        let torque_limits: Vec<f32> = desc.motors().map(|(.., m)| m.gear * m.ctrl_limit).collect();
        let mut sims = physics::build(config.sim, |backend| config.dt_of(backend));
        let sim = sims.remove(0);
        let spare = sims.pop();
        let dt = config.dt_of(sim.kind());
        let clock = GaitClock::new(FIXED_CYCLE, config.policy_rate, [0.5, 0.5], [0.0, 0.5], 0.1);
        let obs_len = Self::observation_len(&config);
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
            course: Vec::new(),
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
            fell: None,
            targets_input: false,
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

    /// A new gait: the default walk, or with `--full-gait` swing ratios U(0.4, 0.7), cycle time
    /// U(0.6, 1.0) s, and in 30% of draws shifted phases `[U(±0.5), 0.5 + U(±0.5)]`.
    /// The current clock is kept (the caller sets the phase) when the new gait is the same one, so a reset
    /// does not rebuild its von Mises table: without `--full-gait` every gait is the default
    /// walk, and rebuilding it at every reset cost 1.6 % of `gait bench env --env cassie`'s
    /// instructions (callgrind), which resets on every fall.
    fn renew_clock(&mut self) {
        let (cycle, swing, shift) = if self.config.full_gait {
            let swing = self.rng.gen_range(0.4..0.7);
            let cycle = self.rng.gen_range(0.6..1.0);
            let shift = if self.rng.gen::<f64>() < 0.3 {
                [self.rng.gen_range(-0.5..0.5), 0.5 + self.rng.gen_range(-0.5..0.5)]
            } else {
                [0.0, 0.5]
            };
            (cycle, [swing, swing], shift)
        } else {
            (self.config.cycle_time_at(self.command.x), [0.5, 0.5], [0.0, 0.5])
        };
        if !self.clock.is_gait(cycle, self.config.policy_rate, swing, shift, 0.1) {
            self.clock = GaitClock::new(cycle, self.config.policy_rate, swing, shift, 0.1);
        }
    }

    /// The episode's dynamics: nominal, or randomized in training episodes with
    /// `dynamics_randomization` (evaluations, `gait eval` included, run the nominal model, as the
    /// reference's eval does). The floor's friction is the configured factor in both.
    fn draw_dynamics(&mut self) -> Dynamics {
        // At the default 1.0 every product below is the factor it multiplies, bit for bit, so
        // runs from before the setting replay.
        let floor = self.config.friction as f32;
        if !self.config.dynamics_randomization || self.training.is_none() {
            return Dynamics { friction: floor, ..Dynamics::default() };
        }
        // Every range scaled by the perturbations' strength at this point of training.
        let k = self.robustness() as f32;
        let rng = &mut self.rng;
        let mut d = Dynamics::default();
        // Ranges: the reference's, narrowed where its full width cost a 30-minute run its
        // tracking (1 m/s commanded, 0.62 walked on MuJoCo; docs/notebook/cassie-runs.md):
        // masses ±15 % (not ±25 %), damping ×0.5-2 (not ×0.5-3.5), encoder offsets ±0.02 rad
        // (not ±0.05), slope ±0.03 rad (not ±0.05).
        for s in &mut d.mass_scale {
            *s = 1.0 + k * rng.gen_range(-0.15..0.15);
        }
        for c in d.com_offset.iter_mut().flatten() {
            *c = k * rng.gen_range(-0.01..0.01);
        }
        let centered = self.config.dr_centered;
        for s in &mut d.damping_scale {
            *s = if centered {
                2f32.powf(k * rng.gen_range(-1.0..1.0))
            } else {
                1.0 + k * rng.gen_range(-0.5..1.0)
            };
        }
        d.friction = floor * (1.0 + k * rng.gen_range(-0.2..0.2));
        // The reference drew the slope from the friction range (±0.2 rad).
        d.slope = [k * rng.gen_range(-0.03..0.03), k * rng.gen_range(-0.03..0.03)];
        // The reference drew 3-6 cycles at 2 kHz (1.5-3 ms); as a time, 2-4 ms at any rate.
        d.delay = 0.003 + k * rng.gen_range(-0.001..0.001);
        d.efficiency = if centered {
            1.0 + k * rng.gen_range(-0.05..0.05)
        } else {
            1.0 - k * rng.gen_range(0.0..0.1)
        };
        for n in &mut d.encoder_noise {
            *n = k * rng.gen_range(-0.02..0.02);
        }
        d.spring_scale = 1.0 + k * rng.gen_range(-0.2..0.2);
        d
    }

    /// The episode's latency and IMU bias: training's drawn up to `latency` and `imu_bias`
    /// (scaled by the perturbations' strength), every other episode's latency exactly
    /// `eval_latency` and bias drawn up to `imu_bias · eval_noise`. Draws nothing where both
    /// are zero, so runs without them replay draw for draw.
    fn draw_sensing(&mut self) -> Sensing {
        let (latency, bias) = match self.training {
            Some(_) => {
                let k = self.robustness();
                (self.config.latency * k, self.config.imu_bias * self.config.obs_noise * k)
            }
            None => (self.config.eval_latency, self.config.imu_bias * self.config.eval_noise),
        };
        let rng = &mut self.rng;
        let latency = match (self.training, latency > 0.0) {
            (Some(_), true) => rng.gen_range(0.0..=latency),
            _ => latency,
        };
        let b = bias as f32;
        let mut draw = || if b > 0.0 { rng.gen_range(-b..=b) } else { 0.0 };
        Sensing { latency, tilt: [draw(), draw()], gyro: [draw(), draw(), draw()] }
    }

    /// The sensor noise's scale now, in multiples of its levels: training's `obs_noise`
    /// (ramped with the perturbations), every other episode's `eval_noise`.
    fn noise_scale(&self) -> f64 {
        match self.training {
            Some(_) => self.config.obs_noise * self.robustness(),
            None => self.config.eval_noise,
        }
    }

    /// The training perturbations' strength now ([`CassieConfig::robustness_at`]; full outside
    /// training, where only `gait eval --push` can ask for them).
    fn robustness(&self) -> f64 {
        self.training.map_or(1.0, |t| self.config.robustness_at(t, self.stage_from))
    }

    /// Whether this is training with the perturbations begun (after `--robust-start` and its
    /// gate): when the late stage's settings (command holds, the late MuJoCo share) apply.
    fn perturbed(&self) -> bool {
        self.training.is_some() && self.robustness() > 0.0
    }

    /// When mixing, the chance that the episode starting now runs on MuJoCo:
    /// [`CassieConfig::robust_mujoco_share`] in training once the perturbations have begun,
    /// where it is set; `mujoco_share` otherwise.
    fn mujoco_share(&self) -> f64 {
        match self.config.robust_mujoco_share {
            Some(late) if self.perturbed() => late,
            _ => self.config.mujoco_share,
        }
    }

    /// With [`CassieConfig::cadence`], sets the gait cycle for the command now in force,
    /// keeping the phase's fraction of the cycle so the legs carry on where they were.
    fn retime_clock(&mut self) {
        if self.config.cadence > 0.0 && !self.config.full_gait {
            self.clock.retime(self.config.cycle_time_at(self.command.x));
        }
    }

    /// Policy steps between command draws in the episode starting now: the distribution's,
    /// or [`CassieConfig::command_hold`]'s for forward commands once the perturbations have
    /// begun (training only).
    fn redraw_interval(&mut self) -> u32 {
        let kind = self.config.commands_at(self.training, self.stage_from);
        let hold = self.config.command_hold;
        if kind == CommandKind::Forward && hold > 0.0 && self.perturbed() {
            let lo = (hold * self.config.policy_rate).round().max(1.0) as u32;
            self.rng.gen_range(lo..2 * lo)
        } else {
            kind.next_redraw(&mut self.rng)
        }
    }

    /// The pushes' top speed (m/s) in force: `gait eval --push`'s, else the config's scaled by
    /// the perturbations' strength.
    fn push_speed(&self) -> f32 {
        match self.pushes {
            Pushes::Own => {
                let strength =
                    self.training.map_or(1.0, |t| self.config.push_strength_at(t, self.stage_from));
                (self.config.push * strength) as f32
            }
            Pushes::Full => self.config.push as f32,
            Pushes::UpTo(v) | Pushes::Exactly(v) => v,
        }
    }

    /// The policy step of the next push after `now` (none without pushes).
    fn schedule_push(&mut self, now: u32) {
        let every = match self.pushes {
            Pushes::Own => self.config.push_every..2.5 * self.config.push_every,
            Pushes::Full | Pushes::UpTo(_) | Pushes::Exactly(_) => PUSH_EVERY,
        };
        self.next_push = if self.push_speed() > 0.0 {
            now + (self.rng.gen_range(every) * self.config.policy_rate).round().max(1.0) as u32
        } else {
            u32::MAX
        };
    }

    /// Starts or ends a push before a policy step of `duration` seconds: a push is the
    /// impulse `ROBOT_MASS · v` in a random horizontal direction, held for that one step.
    fn update_push(&mut self, duration: f32) {
        if self.pushing {
            self.sim.set_push(rapier3d::glamx::Vec3::ZERO);
            self.pushing = false;
        }
        if self.steps == self.next_push {
            let speed = match self.pushes {
                Pushes::Exactly(v) => v,
                Pushes::Own | Pushes::Full | Pushes::UpTo(_) => {
                    self.rng.gen_range(0.0..=self.push_speed())
                }
            };
            let angle = self.rng.gen_range(0.0..std::f32::consts::TAU);
            let force = ROBOT_MASS * speed / duration;
            let (s, c) = angle.sin_cos();
            self.sim.set_push(rapier3d::glamx::Vec3::new(c * force, s * force, 0.0));
            self.pushing = true;
            let at = self.steps as f32 / self.config.policy_rate as f32;
            self.last_push = Some(LastPush { at, dv: [c * speed, s * speed] });
            self.schedule_push(self.steps);
        }
    }

    fn new_command(&mut self) {
        self.command = match self.fixed_command {
            Some(c) => c,
            None => {
                let kind = match (
                    self.config.commands_at(self.training, self.stage_from),
                    self.training,
                ) {
                    (CommandKind::Omni | CommandKind::OmniWalk, Some(t))
                        if self.config.omni_ramp > 0
                            && self.rng.gen::<f64>() >= self.config.omni_share_at(t) =>
                    {
                        CommandKind::Forward
                    }
                    (kind, _) => kind,
                };
                kind.sample(&mut self.rng, self.config.omni_axes_at(self.training))
            }
        };
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
        self.renew_clock();
        let phase = self.rng.gen_range(0.0..self.clock.cycle_time());
        self.clock.set_phase(phase);
        self.redraw_every = self.redraw_interval();
        self.new_command();
        self.retime_clock();
        let dynamics = self.draw_dynamics();
        let heading = match heading {
            Some(h) => h,
            None => self.rng.gen_range(-std::f64::consts::PI..std::f64::consts::PI),
        };
        self.heading = heading;
        let share = self.mujoco_share();
        if let Some(spare) = &mut self.spare {
            // Mixed physics: MuJoCo for this episode with probability `share` (drawn even
            // when a selection episode forces the model, so the draws after it do not move).
            // One random bit at 1/2, as before the setting, so those runs replay.
            let mujoco = if share == EVEN_MUJOCO_SHARE {
                self.rng.gen::<bool>()
            } else {
                self.rng.gen_bool(share)
            };
            let drawn = if mujoco { SimKind::Mujoco } else { SimKind::Rapier };
            let want = self.forced_model.unwrap_or(drawn);
            if self.sim.kind() != want {
                std::mem::swap(&mut self.sim, spare);
            }
        }
        // A forced model is a selection episode, which scores the weights as `gait eval --sim`
        // runs them: at the model's own timestep, not training's `mujoco_dt`.
        let kind = self.sim.kind();
        self.dt = match self.forced_model {
            Some(_) => kind.default_dt(),
            None => self.config.dt_of(kind),
        };
        self.sim.set_timestep(self.dt);
        self.sim.reset(&dynamics, heading as f32);
        self.dynamics = dynamics;
        self.sensing = self.draw_sensing();
        self.estimator.reset(self.sim.base_linvel());
        self.steps = 0;
        self.pushing = false;
        self.last_push = None;
        self.fell = None;
        self.schedule_push(0);
        self.last_action = None;
        self.loaded_feet = [None; 2];
        self.write_obs();
        self.fill_history();
    }

    /// The reference gait's offsets at the current clock phase and command.
    fn update_reference(&mut self) {
        let vm = self.clock.von_mises();
        let swing = [vm[0] as f32, vm[1] as f32];
        let at = if self.prenormalizing { Some(0) } else { self.training };
        let gait = self.config.gait_at(at, self.stage_from);
        let error = self.velocity_error();
        gait.offsets(swing, &self.command, error, &mut self.reference);
        self.stepping_gain = gait.stepping_gain(&self.command, error);
    }

    /// The evaluation's foot metrics after a step of `elapsed` seconds: `foot_slide`, the
    /// summed horizontal speed (m/s) of the foot sites that were loaded (a contact force over
    /// [`FOOT_LOADED`]) both before and after the step, and `foot_lift`, how far the higher foot
    /// site is above the lower one (m). Why: a sidestep can be a shuffle, a foot dragged along
    /// the ground instead of lifted (docs/notebook/cassie-runs.md: on rapier the trailing foot
    /// slid the whole way), and the speeds alone do not show it. Training steps skip this
    /// unless the reward's `slide` term (`--slide-penalty`) reads it; evaluations read it as
    /// a metric.
    fn measure_feet(&mut self, elapsed: f32) {
        let sites = [self.sim.foot_site(0).0, self.sim.foot_site(1).0];
        let mut slide = 0.0;
        for (side, site) in sites.into_iter().enumerate() {
            let loaded = self.sim.foot_force(side).length() > FOOT_LOADED;
            if let (true, Some(before)) = (loaded, self.loaded_feet[side]) {
                slide += (site - before).truncate().length() / elapsed;
            }
            self.loaded_feet[side] = loaded.then_some(site);
        }
        self.metrics[FOOT_SLIDE].1 = slide;
        self.metrics[FOOT_LIFT].1 = (sites[0].z - sites[1].z).abs();
    }

    fn reward(&mut self, action: &[f32; N]) -> f32 {
        let sim = &self.sim;
        let foot = |side| {
            let (lin, ang) = sim.foot_velocity(side);
            (lin.length_squared() + ang.length_squared()).sqrt()
        };
        let sites = [sim.foot_site(0), sim.foot_site(1)];
        let vm = self.clock.von_mises();
        let lin = self.clock.linear(0.2);
        let swing = self.clock.linear(0.7);
        let inputs = RewardInputs {
            command: [self.command.x as f32, self.command.y as f32],
            target_heading: self.heading as f32,
            base_rotation: sim.base_rotation(),
            base_linvel: sim.base_linvel(),
            base_angvel: sim.base_angvel(),
            base_acceleration: sim.base_acceleration(),
            foot_force: [sim.foot_force(0), sim.foot_force(1)],
            foot_speed: [foot(0), foot(1)],
            foot_height: [sites[0].0.z, sites[1].0.z],
            foot_rotation: [sites[0].1, sites[1].1],
            von_mises: [vm[0] as f32, vm[1] as f32],
            stepping_gain: self.stepping_gain,
            upright_weight: self.config.upright as f32,
            base_height: sim.base_position().z,
            height_target: self.config.height_target as f32,
            foot_slide: self.metrics[FOOT_SLIDE].1,
            slide_weight: self.config.slide_penalty as f32,
            progress: self.config.progress,
            turn: self.command.turn as f32,
            turn_reward: self.config.turn_reward,
            linear_clock: [lin[0] as f32, lin[1] as f32],
            linear_swing_clock: [swing[0] as f32, swing[1] as f32],
            action: *action,
            last_action: self.last_action,
            torque: *sim.applied_torques(),
            torque_limit: self.torque_limits,
        };
        match self.config.reward {
            RewardKind::Walk => reward::walk(&inputs, &mut self.terms),
            RewardKind::Vonmises => reward::von_mises(&inputs, &mut self.terms),
            RewardKind::Linear => reward::linear(&inputs, &mut self.terms),
        }
    }

    /// Fell: |roll| or |pitch| > 20°, pelvis below 0.65 m, or a heel spring touching anything
    /// (knee walking). The linear reward also ends episodes scoring below 0.4, as the
    /// reference's does. Returns which, first match in that order.
    fn fall(&self, reward: f32) -> Option<Fall> {
        let (_, pitch, roll) = self.sim.base_rotation().to_euler(EulerRot::ZYX);
        if roll.abs() > MAX_TILT {
            Some(Fall::Roll)
        } else if pitch.abs() > MAX_TILT {
            Some(Fall::Pitch)
        } else if self.sim.base_position().z < MIN_HEIGHT {
            Some(Fall::Low)
        } else if self.sim.knee_contact() {
            Some(Fall::Knee)
        } else if self.config.reward == RewardKind::Linear && reward < 0.4 {
            Some(Fall::Reward)
        } else {
            None
        }
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
            reward += self.config.reward.termination_reward();
        }
        // Pelvis velocity in the commanded heading's frame (what the command asks for).
        let [forward, lateral] =
            reward::planar_in_heading(self.sim.base_linvel(), self.heading as f32);
        self.metrics[0].1 = forward;
        self.metrics[1].1 = lateral;
        self.metrics[2].1 = self.sim.base_angvel().z;
        self.metrics[3].1 = self.sim.base_position().z;
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

    fn set_targets_input(&mut self, on: bool) -> Result<(), CommandError> {
        self.targets_input = on;
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fall {
    Roll,
    Pitch,
    Low,
    Knee,
    Reward,
}

impl Fall {
    fn describe(self) -> &'static str {
        match self {
            Self::Roll => "pelvis roll beyond 20°",
            Self::Pitch => "pelvis pitch beyond 20°",
            Self::Low => "pelvis below 0.65 m",
            Self::Knee => "heel spring touching",
            Self::Reward => "reward below 0.4",
        }
    }
}

mod capabilities;
mod observation;

#[cfg(test)]
mod sensing_tests;
#[cfg(test)]
mod tests;
