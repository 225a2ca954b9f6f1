//! Cassie's settings (`[env.cassie]` in a config file, `--policy-rate` ... as flags) and the
//! observation layouts.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use crate::settings::Range;

use super::commands::CommandKind;
use super::curriculum::TERRAIN_PROMOTE;
use super::physics::{self, Models, SimKind};
use super::reference::{self, Gait, ReferenceKind};
use super::reward::{ProgressKind, RewardKind, TurnKind, WALK_CLEARANCE};
use super::stage::Stage;
use crate::envs::terrain::TerrainKind;

/// What the policy observes beyond the reference's layout (`--obs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ObsKind {
    /// §7.3's layout plus the pelvis linear velocity in its heading frame (x forward, y left,
    /// z up): a feed-forward policy cannot infer its speed from one frame of joint states,
    /// and legged_gym, Isaac Lab and MJX all observe it.
    #[default]
    Velocity,
    /// The reference's layout only (44 or 46 values).
    Reference,
    /// The reference's layout plus the pelvis velocity as a robot's state estimator gives it
    /// (leg kinematics, low-passed by `velocity_lag`; `estimator.rs`), not the simulator's.
    Estimate,
}

impl ObsKind {
    /// Whether the observation ends with a pelvis velocity (true or estimated).
    pub fn observes_velocity(self) -> bool {
        matches!(self, ObsKind::Velocity | ObsKind::Estimate)
    }
}

/// `velocity_lag`'s default (s): a filter a little slower than a policy step.
pub const DEFAULT_VELOCITY_LAG: f64 = 0.03;

/// `velocity_lag`'s default, for run files from before the setting.
fn default_velocity_lag() -> f64 {
    DEFAULT_VELOCITY_LAG
}

/// `terrain_difficulty`'s default: the middle of each kind's range.
const DEFAULT_TERRAIN_DIFFICULTY: f64 = 0.5;

/// [`DEFAULT_TERRAIN_DIFFICULTY`] for serde (run files from before the setting ran on the flat
/// floor, where it means nothing).
fn default_terrain_difficulty() -> f64 {
    DEFAULT_TERRAIN_DIFFICULTY
}

/// `forward_reach`'s default, [`reference::HIP_PITCH_PER_SPEED`], which is also what older run
/// files without the key trained with.
fn default_forward_reach() -> f64 {
    reference::HIP_PITCH_PER_SPEED as f64
}

/// `terrain_promote`'s default, which older run files without the key trained with.
fn default_terrain_promote() -> f64 {
    TERRAIN_PROMOTE
}

/// The top of the held forward speed (m/s) that `terrain_forward` draws from; also what older
/// run files without the key trained with.
pub const TERRAIN_FORWARD_MAX: f64 = 0.8;

fn default_terrain_forward_max() -> f64 {
    TERRAIN_FORWARD_MAX
}

/// `clearance`'s default, which is also what older run files without the key trained with.
fn default_clearance() -> f64 {
    WALK_CLEARANCE
}

/// The gait cycle (s) of the walking reference without `full_gait` or `cadence`.
pub const FIXED_CYCLE: f64 = 0.7;

crate::settings! {
    /// Cassie's settings (`[env.cassie]`, flags `--policy-rate` ...). A field missing from an
    /// older `experiment.json` takes the value that run trained with (the reference task), not
    /// today's default, so old runs rebuild the env they learned on; config files never reach
    /// these serde defaults (they change only the keys they name,
    /// `TrainConfig::merged_with_toml`).
    #[serde(default, deny_unknown_fields)]
    pub struct CassieConfig("Env: cassie") {
        /// Physics: one backend (`rapier`: gait's rapier3d model; `mujoco`: MuJoCo on the
        /// lab's cassie_fast.xml) or a mix, each episode on one model drawn by its share:
        /// `BACKEND[@DT][:SHARE]` joined by `+` (`rapier+mujoco@0.004`; `mixed` =
        /// `rapier+mujoco`). A model without `@DT` runs at `sim_dt`. Runs from before the
        /// setting existed trained on rapier.
        sim: Models = Models::default();
        /// Policy steps per second (Hz); physics substeps per step = round(sim rate / policy
        /// rate). Below 1 Hz a policy step is more physics than any controller means (1e-300 Hz
        /// was 5e302 substeps: one step that never ended), and 1 Hz bounds a step to 1 s of
        /// simulated time.
        policy_rate: f64 = 50.0,
            Range::Within { lo: 1.0, hi: 2000.0, what: "a policy rate in [1, 2000] Hz" };
        /// Physics timestep (s) of every model without its own `@DT`; unset: the first
        /// model's default ([`SimKind::default_dt`]: 0.002 = 500 Hz on rapier, where the
        /// physical tests hold as at 2 kHz; 0.0005 = the lab's 2 kHz on MuJoCo). An unset value
        /// is left out of TOML files (`sim_dt = 0.0005` sets it).
        sim_dt: Option<f64> = None,
            Range::Within { lo: 1e-5, hi: 0.01, what: "a timestep in [0.00001, 0.01] s" };
        /// When mixing, the models' shares of the training episodes once the perturbations
        /// have begun (`--robust-start`, after its gate), one per model in `sim`'s order;
        /// empty: `sim`'s shares throughout. Evaluations keep `sim`'s. Why: the late stage is
        /// where walking speeds settle; the steps before it draw exactly as without it. The
        /// walking preset leaves it empty (D-002).
        #[serde(default)]
        robust_shares: Vec<f64> = Vec::new(), Range::Unit;
        /// Reward function.
        reward: RewardKind = RewardKind::Walk;
        /// Reference gait added to the PD targets (the action is a residual on it).
        #[serde(default = "legacy_reference")]
        reference: ReferenceKind = ReferenceKind::Clock;
        /// Command distribution.
        #[serde(default = "legacy_commands")]
        commands: CommandKind = CommandKind::Forward;
        /// Observation layout.
        #[serde(default = "legacy_obs")]
        obs: ObsKind = ObsKind::Velocity;
        /// With `--obs estimate`: the time constant (s) of the velocity estimator's low-pass
        /// filter, its lag behind the robot (0: none).
        #[serde(default = "default_velocity_lag")]
        velocity_lag: f64 = DEFAULT_VELOCITY_LAG,
            Range::Within { lo: 0.0, hi: 1.0, what: "a time constant in [0, 1] s" };
        /// Observe one clock per leg (46 inputs) instead of one shared clock (44).
        full_clock: bool = false;
        /// Past policy steps appended to the observation, newest first: each the robot state as
        /// it was observed then (35 values, its noise and latency included) and the action the
        /// policy answered it with (10). Why: memory without a recurrent update, so a policy
        /// without a velocity input can tell its speed from how its joints moved.
        #[serde(default)]
        history: usize = 0,
            Range::Within { lo: 0.0, hi: 16.0, what: "a number of past steps in [0, 16]" };
        /// Randomize the gait (swing ratio, cycle time, period shifts) with every new command.
        full_gait: bool = false;
        /// The gait cycle's shortening per m/s of forward command past 0.5 m/s (s per m/s):
        /// the cycle is `0.7 − this × clamp(|x| − 0.5, 0, 1)` s, so a faster command steps more
        /// often as well as farther (0.6 s at 1 m/s with 0.2). 0: a fixed 0.7 s cycle. Why: at
        /// the fixed cycle the walkers had two gaits, a slow one whose speed saturated near 0.7
        /// m/s and a fast one that overshot (`ch2-c0` at 3.78M steps on rapier: 0.60 m/s at a
        /// 0.8 command, 0.70 at 1.2; later 0.71 at 0.8 and 0.94 at 0.9). Not with `full_gait`,
        /// which draws the cycle.
        #[serde(default)]
        cadence: f64 = 0.0,
            Range::Within { lo: 0.0, hi: 0.4, what: "a cycle slope in [0, 0.4] s per m/s" };
        /// Randomize dynamics at every training reset (damping, masses, COMs, friction, slope,
        /// encoder offsets, torque delay and efficiency, spring stiffness) and jitter the
        /// policy rate by 0-5 Hz per step; evaluations run the nominal model.
        dynamics_randomization: bool = false;
        /// Push the pelvis every 2-5 s (in training: `push_every`) by a speed change of up to
        /// this (m/s; 0: no pushes): in a random horizontal direction, U(0, push) m/s for the
        /// whole robot (an impulse of 33.3 kg times that, held for one policy step). 5 m/s is
        /// a blow no robot of this size stands.
        #[serde(default)]
        push: f64 = 0.0, Range::PUSH_SPEED;
        /// Seconds between training pushes, at least: the next comes U(this, 2.5 × this) s
        /// later (evaluations keep U(2, 5) s, so runs are measured alike).
        push_every: f64 = 2.0,
            Range::Within { lo: 0.1, hi: 60.0, what: "an interval in [0.1, 60] s" };
        /// With a value above 0, once the perturbations have begun, a forward command
        /// (`--commands forward`) is held U(this, 2 × this) s instead of 5-10 s, so most
        /// episodes change speed while walking; 0: 5-10 s throughout. Why: a walker that had
        /// only held one speed per episode did not slow down when told (`pretrained/cassie-walk`
        /// on MuJoCo: 4 s at 1.2 m/s, then 0.90 m/s for 6 s at a 0.6 command it walks at 0.69
        /// from rest), and ran away past 1 m/s over 10-30 s. From the perturbations on, so the
        /// runs learn to walk as before (identical rows until then).
        #[serde(default)]
        command_hold: f64 = 0.0,
            Range::Within { lo: 0.0, hi: 60.0, what: "a hold in [0, 60] s" };
        /// Training steps before pushes, randomized dynamics and observation noise begin: a
        /// policy first learns to walk, then to be perturbed. Perturbed from the first step,
        /// runs marched in place or stayed short (D-003).
        #[serde(default)]
        robust_start: u64 = 0, Range::Natural;
        /// Training steps over which the perturbations then grow linearly to full strength
        /// (the pushes' top speed to `push`, the randomization ranges and the noise to theirs;
        /// 0: at once).
        #[serde(default)]
        robust_ramp: u64 = 0, Range::Natural;
        /// Training steps before the pushes begin, when they should not begin with the other
        /// perturbations; unset: with them, at `robust_start`. They wait for the same gate and
        /// grow over the same `robust_ramp`. Why: randomized dynamics and noise
        /// held back the omnidirectional stage, while pushes need more steps than fit after
        /// it; this lets pushes run during that stage (D-004).
        #[serde(default)]
        push_start: Option<u64> = None, Range::Natural;
        /// With a value above 0, the perturbations wait, from `robust_start` steps on, for the
        /// first training evaluation whose forward speed at the fastest evaluation command
        /// (`Test/Forward Speed`) reaches this (m/s), and ramp from there; 0: they begin at
        /// `robust_start`. Why: a seed still marching in place when
        /// the perturbations begin keeps marching under them (D-005). A run has one gate: with [`Self::omni_start_speed`] at the
        /// same speed the two stages share it ([`Self::stage_gate`]).
        #[serde(default)]
        robust_start_speed: f64 = 0.0,
            Range::Within { lo: 0.0, hi: 2.0, what: "a speed in [0, 2] m/s" };
        /// Gaussian noise on training observations, in multiples of gait's noise levels
        /// (`NOISE_STD`, docs/cassie.md "Sim-to-sim"; 0: none). Evaluations never add it.
        #[serde(default)]
        obs_noise: f64 = 0.0,
            Range::Within { lo: 0.0, hi: 10.0, what: "a noise scale in [0, 10]" };
        /// Standard deviation (m/s) of the noise on the observed pelvis velocity at
        /// `obs_noise = 1`; it scales with `obs_noise` as `NOISE_STD`'s levels do. Only
        /// with `--obs velocity`.
        velocity_noise: f64 = REFERENCE_VELOCITY_NOISE,
            Range::Within { lo: 0.0, hi: 1.0, what: "a velocity noise in [0, 1] m/s" };
        /// Standard deviation (rad, about each body axis) of the random small rotation applied
        /// to the observed pelvis orientation at `obs_noise = 1`; it scales with `obs_noise` as
        /// `NOISE_STD`'s levels do. Why a setting of its own: it is the largest level
        /// relative to what a sidestep's lean shows, and it wore rapier's sidesteps down
        /// (D-006).
        orientation_noise: f64 = REFERENCE_ORIENTATION_NOISE,
            Range::Within { lo: 0.0, hi: 0.5, what: "an orientation noise in [0, 0.5] rad" };
        /// The reference gait's stepping gain at a standing command, in [0, 1]: 0 stands still
        /// (both feet planted), 1 steps in place with the walking knee fold, so a standing
        /// robot that is pushed is already stepping and can catch itself (D-007).
        #[serde(default)]
        step_in_place: f64 = 0.0,
            Range::Within { lo: 0.0, hi: 1.0, what: "a stepping gain in [0, 1]" };
        /// In training, step in place only with the pushes: the standing command's stepping
        /// gain grows from 0 with the pushes' strength (their start, gate and ramp) to
        /// `step_in_place`; evaluations and exported controllers use `step_in_place`. Why:
        /// stepping in place is there to catch pushes, and from the first step it cost the
        /// backward and sideways walking (D-008).
        #[serde(default)]
        step_in_place_with_pushes: bool = false;
        /// Raw weight of the walking reward's posture term (pelvis roll and pitch; 0: none):
        /// `upright` is exp(−tilt²/0.02) on the roll and pitch together; the other raw weights
        /// sum to 1.45 and the reward is divided by the sum with this one, so its maximum stays
        /// 1.
        #[serde(default)]
        upright: f64 = 0.0,
            Range::Within { lo: 0.0, hi: 1.0, what: "a posture weight in [0, 1]" };
        /// Pelvis height (m) below which the walking reward's `height` term pays less (0: no
        /// term): exp(−max(0, this − z)²/0.0025), raw weight 0.10 beside the others (so the
        /// maximum stays 1), z the pelvis height the 0.65 m termination reads. One-sided: a
        /// crouch costs, standing taller earns nothing. Why: a crouched gait
        /// ran slower on rapier than on MuJoCo at the same command (D-009). The serde default
        /// stays 0, what runs before the setting trained with.
        #[serde(default)]
        height_target: f64 = 0.0,
            Range::Within { lo: 0.0, hi: 1.2, what: "a pelvis height in [0, 1.2] m" };
        /// Raw weight of the walking reward's `slide` term (0: none): exp(−s/0.05) on `s`, the
        /// summed horizontal speed (m/s) of the feet bearing more than 10 N (the `foot_slide`
        /// metric), beside the other raw weights (so the maximum stays 1), as Isaac Lab's
        /// `feet_slide` penalty. Why: the walking policies sidestep by shuffling, and rapier's
        /// stiffer contacts turn a shuffle into a slide; a foot that must not slide has to step
        /// (D-010).
        #[serde(default)]
        slide_penalty: f64 = 0.0,
            Range::Within { lo: 0.0, hi: 1.0, what: "a slide weight in [0, 1]" };
        /// The walking reward's swing-foot clearance target (m above the ground under the
        /// foot): its `clearance` terms pay exp(−4·s·max(0, 1 − h/this)²) for a swing foot at
        /// height h (s the swing value), which at 0.1 is exp(−400·s·max(0, 0.1 − h)²). Why:
        /// a blind robot meets a riser it cannot see with its swing foot, so the foot must
        /// already be above it (D-063).
        #[serde(default = "default_clearance")]
        clearance: f64 = default_clearance(),
            Range::Within { lo: 0.02, hi: 0.4, what: "a clearance in [0.02, 0.4] m" };
        /// What the walking reward subtracts on the step that ends in a fall (not at the
        /// trajectory limit), against its per-step maximum of 1; the reference rewards
        /// (`vonmises`, `linear`) have none. The fall already costs the value of the walking
        /// it ends (about 80 at discount 0.99); 5 adds what five perfect steps earn. Why a
        /// setting: under pushes, how much more a fall should cost is the question (D-045).
        fall_penalty: f64 = f64::from(crate::envs::cassie::reward::WALK_FALL_PENALTY),
            Range::Within { lo: 0.0, hi: 1000.0, what: "a fall penalty in [0, 1000]" };
        /// The fall penalty once the pushes have begun, and in evaluations (which push at
        /// full strength); unset: `fall_penalty` throughout. A large one from the first step
        /// makes standing the safe answer before walking is learned (D-045).
        #[serde(default)]
        pushed_fall_penalty: Option<f64> = None,
            Range::Within { lo: 0.0, hi: 1000.0, what: "a fall penalty in [0, 1000]" };
        /// The floor's friction as a factor of each model's own (1: rapier's coefficient 1.0,
        /// the sliding friction of `cassie_fast.xml`'s floor pairs on MuJoCo); training's
        /// randomized ±20 % (`dynamics_randomization`) is drawn around it. Mostly for
        /// `gait eval --friction`: a gait that depends on sliding shows it here (D-010). Below 0.01 no foot holds; above 5 no floor grips so.
        friction: f64 = 1.0,
            Range::Within { lo: 0.01, hi: 5.0, what: "a friction factor in [0.01, 5]" };
        /// The walking reward's progress term past the command: flat (clip, runs before the
        /// setting existed) or falling again (peak).
        #[serde(default)]
        progress: ProgressKind = ProgressKind::Clip;
        /// Training steps over which omnidirectional commands grow from a fifth of all commands
        /// to all (the rest straight ahead or stand); 0: all from the start. So walking is
        /// learned before turning and sidestepping; the fifth keeps every command input varied
        /// from the start, so the observation normalizer never sees a constant one. Evaluations
        /// draw omnidirectional commands throughout. Without it a run marched in place (D-011).
        #[serde(default)]
        omni_ramp: u64 = 0, Range::Natural;
        /// Training steps of `forward` commands (that distribution and its 5-10 s holds)
        /// before an omnidirectional distribution begins (0: from the start). Why: forward runs walk
        /// within a few million steps where omnidirectional runs from scratch marched in
        /// place (D-012). The prenormalization draws commands as evaluations do, so the normalizer still sees
        /// every command input vary. [`Self::omni_ramp`] and [`Self::omni_axes_start`] count
        /// from the run's first step, not from this one.
        #[serde(default)]
        omni_start: u64 = 0, Range::Natural;
        /// With a value above 0, the omnidirectional stage waits, from `omni_start` steps on,
        /// for the first training evaluation whose forward speed at the fastest evaluation
        /// command (`Test/Forward Speed`) reaches this (m/s); 0: it begins at `omni_start`.
        /// Why: a fixed start can come before a seed has
        /// any forward walking to build on (D-013). With [`Self::robust_start_speed`] at the
        /// same speed, the perturbations wait for the same evaluation.
        #[serde(default)]
        omni_start_speed: f64 = 0.0,
            Range::Within { lo: 0.0, hi: 2.0, what: "a speed in [0, 2] m/s" };
        /// The share of omnidirectional commands drawn along one signed axis (forward,
        /// backward, left, right, turn left, turn right, equally likely; magnitude uniform from
        /// 0.1 to the range's end), the rest from the five modes. 0: the modes alone (runs
        /// before the setting).
        #[serde(default)]
        omni_axes: f64 = 0.0, Range::Unit;
        /// Training steps before `omni_axes` applies (the modes alone until then): forward
        /// walking first, then every axis, in one run. With the axes from the start a run
        /// marched in place; a walker continued with them walked every way (D-014). Evaluations draw with the share.
        #[serde(default)]
        omni_axes_start: u64 = 0, Range::Natural;
        /// How the walking reward tracks the turn: the integrated heading (roadrunner's, runs
        /// before the setting existed), or the yaw rate in the robot's own frame.
        #[serde(default)]
        turn_reward: TurnKind = TurnKind::Heading;
        /// The reference gait's hip pitch per m/s of forward command (rad·s/m): the swing leg
        /// reaches forward by this × x × its swing value. Why a setting: at 0.25 the walkers'
        /// slow gait saturated near 0.7 m/s and the faster commands took a second gait that
        /// overshot ("Two gaits" in docs/cassie.md); the A/B of a longer reach.
        #[serde(default = "default_forward_reach")]
        forward_reach: f64 = default_forward_reach(),
            Range::Within { lo: 0.0, hi: 2.0, what: "a hip pitch gain in [0, 2] rad·s/m" };
        /// The omni reference gait's hip roll per m/s of lateral command (rad·s/m): the swing
        /// leg swings away from the commanded side by this × y × its swing value. 0.3 moved a
        /// walking robot 0.03-0.04 m/s sideways at y = 0.3 (`reference.rs`).
        lateral_reach: f64 = 0.3,
            Range::Within { lo: 0.0, hi: 2.0, what: "a hip roll gain in [0, 2] rad·s/m" };
        /// The command size (m/s of planar speed, or rad/s of turn) from which the reference
        /// gait takes a full step: its stepping gain is size / this, at most 1, and the walking
        /// reward's swing and stance terms scale with it. Below it the swing knee folds less, the
        /// swing foot earns less for clearance and pays part of the stance foot's speed penalty,
        /// so a 0.2 m/s sidestep at 0.3 stepped at two thirds (`reference.rs`). 0.1, the size
        /// below which a drawn command is 0, steps fully at every command that moves.
        full_step_speed: f64 = reference::FULL_STEP_SPEED,
            Range::Within { lo: 0.05, hi: 2.0, what: "a speed in [0.05, 2] m/s" };
        /// Training steps before `full_step_speed` applies, waiting as the perturbations do for
        /// their gate (`robust_start_speed`); until then the reference gait steps fully from
        /// 0.3 m/s, the walking stage's value. Evaluations and exported controllers use
        /// `full_step_speed` throughout; prenormalization, before the first step, the walking
        /// stage's value, so before its start a run trains as it would without the change, bit
        /// for bit, and a branch of a run from before the start trains what the run from
        /// scratch would (until 2026-12-03 prenormalization took `full_step_speed`, so such a
        /// run differed from its first row). Until the omnidirectional stage the two values
        /// train alike: the forward stage's commands are 0 or at least 0.3 m/s. Why: from
        /// scratch the full step cost other commands; from the perturbations' start it met
        /// every command (D-015). 0: from the first step.
        #[serde(default)]
        full_step_start: u64 = 0, Range::Natural;
        /// Raibert's foot placement in the reference gait (rad·s/m): the swing leg's hip roll
        /// and pitch reach this × (observed pelvis velocity − command), and the stepping gain
        /// rises with the error past 0.2 m/s, so a pushed robot steps where the push carries
        /// it (`reference.rs`). 0.35 ≈ the capture point's √(h/g) = 0.29 s over a 0.8 m leg.
        /// Needs the velocity input (`--obs velocity`) and a reference gait. 0: none.
        #[serde(default)]
        foot_placement: f64 = 0.0,
            Range::Within { lo: 0.0, hi: 2.0, what: "a foot placement gain in [0, 2] rad·s/m" };
        /// Give the critic what a robot cannot sense (an asymmetric actor-critic): the
        /// observation without its noise, the pelvis and feet heights, the foot forces, the
        /// episode's physics and randomized model, and the last push (`critic_obs.rs`). Only
        /// training reads the critic, so the policy, its inputs and its exports are unchanged.
        #[serde(default)]
        privileged_critic: bool = false;
        /// Centre the randomized damping and torque efficiency on the nominal model, which
        /// evaluations run: damping ×2^U(−1, 1) (0.5-2, median 1) instead of ×U(0.5, 2) (mean
        /// 1.25), efficiency U(0.95, 1.05) instead of U(0.9, 1.0). Why: a policy's speed at a
        /// command follows the damping, so ranges harder on average than the nominal model
        /// train a gait that runs fast in evaluation (D-016).
        #[serde(default)]
        dr_centered: bool = false;
        /// Sensing latency of training episodes (s): each draws U(0, this), scaled as the
        /// other perturbations ramp in, and observes the robot as it was that long before the
        /// step ended (to the nearest physics substep, at most one policy step). Why: the lab's
        /// hardware loop acts on an estimator's reading that lags the motors. 0: none.
        #[serde(default)]
        latency: f64 = 0.0,
            Range::Within { lo: 0.0, hi: 0.05, what: "a latency in [0, 0.05] s" };
        /// Sensing latency of every episode that is not training's (s): evaluations,
        /// `gait eval --latency`, `gait check --latency`. Same rules as `latency`.
        #[serde(default)]
        eval_latency: f64 = 0.0,
            Range::Within { lo: 0.0, hi: 0.05, what: "a latency in [0, 0.05] s" };
        /// IMU bias of training episodes: each draws a constant tilt of the observed pelvis
        /// orientation, U(±this) rad about roll and pitch, and a gyro offset, U(±this) rad/s
        /// per axis, scaled as `obs_noise` is. Why: an estimator's orientation drifts by about a
        /// degree and holds it over an episode, which zero-mean noise never teaches. 0: none.
        #[serde(default)]
        imu_bias: f64 = 0.0,
            Range::Within { lo: 0.0, hi: 0.2, what: "an IMU bias in [0, 0.2] rad" };
        /// Sensor noise of every episode that is not training's, in multiples of the
        /// reference's levels (`NOISE_STD`, orientation 0.05 rad, velocity 0.1 m/s, whatever
        /// the run trained with, so every run is checked alike), with the IMU bias at
        /// `imu_bias` times this: `gait eval --sensor-noise`, `gait check --sensor-noise`. 0:
        /// exact sensors.
        #[serde(default)]
        eval_noise: f64 = 0.0,
            Range::Within { lo: 0.0, hi: 10.0, what: "a noise scale in [0, 10]" };
        /// The ground of every episode: the flat floor, or a terrain drawn anew each episode
        /// from the env's seed and laid along its heading (rough ground, a 5-15° slope up and
        /// down, a flight of stairs up and down or down and up, random single steps, or each
        /// episode one of these or the flat floor: mix), the same on both models. The policy
        /// does not see it unless `height_scan`.
        #[serde(default)]
        terrain: TerrainKind = TerrainKind::Flat;
        /// The terrain's difficulty in [0, 1]: bumps of 2-5 cm, slopes of 5-15°, risers of
        /// 5-20 cm, single steps of 3-17 cm. Training episodes draw theirs uniformly up to it
        /// times the terrain stage's strength (`terrain_start`, `terrain_ramp`), so easy ground
        /// stays in the mix; evaluations run it exactly.
        #[serde(default = "default_terrain_difficulty")]
        terrain_difficulty: f64 = DEFAULT_TERRAIN_DIFFICULTY, Range::Unit;
        /// Training steps on the flat floor before the terrain begins (behind the
        /// perturbations' gate when `robust_start_speed` sets one). Why: stairs ask for a gait
        /// to adapt, which a robot that cannot walk yet does not have (D-043).
        #[serde(default)]
        terrain_start: u64 = 0, Range::Natural;
        /// Training steps over which the terrain's top difficulty grows from 0 to
        /// `terrain_difficulty` (0: at once).
        #[serde(default)]
        terrain_ramp: u64 = 0, Range::Natural;
        /// Adaptive terrain levels in place of the ramp's draw: each kind of the ground (rough,
        /// slope, stairs, flights) has a level in [0, 1], raised by 0.05 after an iteration in
        /// which at least `terrain_promote` of its episodes passed (no fall, and at least half
        /// the commanded distance along the ground; an episode asked for less than 1 m along it
        /// counts only if it fell) and lowered by 0.05 when at most half did; an episode's
        /// difficulty is `terrain_difficulty` times a draw from its kind's top quarter below
        /// the level. Logged per kind in `progress.csv`, kept in the resume state. Why: under
        /// the ramp's uniform draw the steepest stairs are rare and the same for a kind the
        /// policy has learned as for one it has not (D-050).
        #[serde(default)]
        terrain_levels: bool = false;
        /// The share of a kind's training episodes that must pass for its level to go up
        /// (`terrain_levels`; it goes down at half or fewer). Why: at 0.8 a level stays where
        /// 50-80 % of the noisy, pushed training episodes pass, below what the policy climbs
        /// without them; legged_gym's per-robot rule holds each robot near half (D-065).
        #[serde(default = "default_terrain_promote")]
        terrain_promote: f64 = TERRAIN_PROMOTE,
            Range::Within { lo: 0.55, hi: 1.0, what: "a share in [0.55, 1]" };
        /// Share of training episodes on ground laid along the heading (a slope, stairs,
        /// flights) that walk into it: their command, held the whole episode, is forward at
        /// U(0.3, `terrain_forward_max`) m/s. 0: they take the run's commands, redrawn every
        /// 2 s in any direction. Why: with those, few episodes meet the stairs at a climbing
        /// speed (D-062).
        #[serde(default)]
        terrain_forward: f64 = 0.0, Range::Unit;
        /// The top of those held forward speeds (m/s). Why: held below the run's fastest
        /// commands, they loosen its tracking above the top (D-069).
        #[serde(default = "default_terrain_forward_max")]
        terrain_forward_max: f64 = TERRAIN_FORWARD_MAX,
            Range::Within { lo: 0.3, hi: 1.5, what: "a speed in [0.3, 1.5] m/s" };
        /// Observe the ground's height around the pelvis (`height_scan.rs`: 13 × 5 points from
        /// 0.3 m behind to 0.9 m ahead and 0.2 m either side, in the pelvis's heading frame),
        /// appended after the history, with 2 cm of noise per value at a noise scale of 1 and
        /// a fixed normalization (1.0 ± 0.2 m, so ±5σ spans its 0-2 m; D-066). Why:
        /// for robots with perception; the walkers are blind by default, as the lab's stair
        /// policy was (D-061).
        #[serde(default)]
        height_scan: bool = false;
    }
}

crate::choice_settings!(
    RewardKind,
    ReferenceKind,
    CommandKind,
    ObsKind,
    ProgressKind,
    TurnKind,
    TerrainKind
);

/// Observation noise at `obs_noise = 1`: standard deviations of the pelvis angular velocity
/// (rad/s), motor angles (rad), motor speeds (rad/s), passive joint angles (rad) and speeds
/// (rad/s): the reference's run_ppo values (roadrunner.md §1.6, §7.3). The pelvis
/// orientation's (`orientation_noise`, default the reference's 0.05 rad) and linear
/// velocity's (`velocity_noise`, from a state estimator rather than an encoder) are settings.
pub const NOISE_STD: [f32; 5] = [0.1, 0.01, 0.1, 0.01, 0.1];

/// The reference's orientation and pelvis-velocity noise levels (rad, m/s) at scale 1: what
/// non-training episodes use with `eval_noise` (the defaults of `orientation_noise` and
/// `velocity_noise`).
pub const REFERENCE_ORIENTATION_NOISE: f64 = 0.05;
/// See [`REFERENCE_ORIENTATION_NOISE`].
pub const REFERENCE_VELOCITY_NOISE: f64 = 0.1;

fn legacy_reference() -> ReferenceKind {
    ReferenceKind::None
}

fn legacy_commands() -> CommandKind {
    CommandKind::Omni
}

fn legacy_obs() -> ObsKind {
    ObsKind::Reference
}

impl CassieConfig {
    /// The reference's LocomotionClockEnv: 2 kHz, no reference gait, the von Mises reward,
    /// omnidirectional commands, its observation layout.
    pub fn roadrunner() -> Self {
        Self {
            sim_dt: Some(0.0005),
            reward: RewardKind::Vonmises,
            reference: ReferenceKind::None,
            commands: CommandKind::Omni,
            obs: ObsKind::Reference,
            ..Self::default()
        }
    }
}

impl CassieConfig {
    /// The training step from which the training distribution stops changing, in a run whose
    /// gated stage began at `stage_from`: the perturbations at full strength and the
    /// omnidirectional commands, their ramp, their axis share and the full step
    /// ([`Self::full_step_start`]) all begun; 0 without a
    /// curriculum, `None` while a gate it waits for is still closed. A value past the run's
    /// `--timesteps` (`robust_start = 50e6`) is never reached. The runner keeps the best-eval
    /// weights among evaluations from here on (`crate::algos::Runner`): the episodes that
    /// pick them (`--best-by tracking` or `cells`) run the nominal model, without pushes
    /// unless `--selection-push` asks for them, so before the perturbations a policy that has
    /// not yet paid for robustness scores highest (D-017). The evaluations' own `Test/*`
    /// episodes push at the run's top push speed from the first iteration on.
    pub fn settled_from(&self, stage_from: Option<u64>) -> Option<u64> {
        let perturbed = self.dynamics_randomization || self.obs_noise > 0.0;
        let robust = if perturbed { self.robust_stage().full_from(stage_from)? } else { 0 };
        let stepping = self.step_in_place_with_pushes && self.step_in_place > 0.0;
        let pushes = match self.push > 0.0 || stepping {
            true => self.push_stage().full_from(stage_from)?,
            false => 0,
        };
        let omni = match self.commands {
            CommandKind::Omni | CommandKind::OmniWalk => {
                self.omni_stage().start(stage_from)?.max(self.omni_ramp).max(self.omni_axes_start)
            }
            CommandKind::Forward => 0,
        };
        let full_step = self.full_step_stage().start(stage_from)?;
        Some(robust.max(pushes).max(omni).max(full_step))
    }

    /// The stepping gain's full-step speed after `timesteps` training steps (`None`: outside
    /// training): [`Self::full_step_speed`] once [`Self::full_step_stage`] has begun, before
    /// that the walking stage's `reference::FULL_STEP_SPEED`.
    pub fn full_step_speed_at(&self, timesteps: Option<u64>, stage_from: Option<u64>) -> f64 {
        let begun = |t: u64| self.full_step_stage().begun(t, stage_from);
        match timesteps.is_none_or(begun) {
            true => self.full_step_speed,
            false => reference::FULL_STEP_SPEED,
        }
    }

    /// The reference gait these settings ask for after `timesteps` training steps
    /// ([`Self::full_step_speed_at`]; `None`: outside training, the final gait).
    pub fn gait_at(&self, timesteps: Option<u64>, stage_from: Option<u64>) -> Gait {
        Gait {
            full_step_speed: self.full_step_speed_at(timesteps, stage_from) as f32,
            floor: self.step_in_place_at(timesteps, stage_from) as f32,
            ..self.gait()
        }
    }

    /// The standing command's stepping gain after `timesteps` training steps (`None`: outside
    /// training, [`Self::step_in_place`]): with [`Self::step_in_place_with_pushes`], that gain
    /// times the pushes' strength ([`Self::push_strength_at`]).
    pub fn step_in_place_at(&self, timesteps: Option<u64>, stage_from: Option<u64>) -> f64 {
        match (self.step_in_place_with_pushes, timesteps) {
            (true, Some(t)) => self.step_in_place * self.push_strength_at(t, stage_from),
            _ => self.step_in_place,
        }
    }

    /// The reference gait these settings ask for, as evaluated and exported.
    pub fn gait(&self) -> Gait {
        Gait {
            kind: self.reference,
            floor: self.step_in_place as f32,
            roll_per_speed: reference::hip_roll_per_speed(self.lateral_reach),
            pitch_per_speed: self.forward_reach as f32,
            full_step_speed: self.full_step_speed as f32,
            placement: self.foot_placement as f32,
        }
    }

    /// Checks across settings (each setting's own range is checked on its own).
    pub fn check(&self) -> Result<(), String> {
        if let Some((omni, robust)) = self.gate_conflict() {
            return Err(format!(
                "--omni-start-speed {omni} and --robust-start-speed {robust} share one \
                 evaluation gate: set them equal, or set one of them"
            ));
        }
        if self.terrain_levels && !self.terrain.has_levels() {
            return Err(format!(
                "--terrain-levels moves the levels of the training ground's kinds: it needs \
                 --terrain rough, slope, stairs, flights or mix, not {}",
                self.terrain.name()
            ));
        }
        if self.terrain_forward_max != TERRAIN_FORWARD_MAX && self.terrain_forward == 0.0 {
            return Err(
                "--terrain-forward-max is the held speeds' top: it needs --terrain-forward".into(),
            );
        }
        if self.terrain_promote != TERRAIN_PROMOTE && !self.terrain_levels {
            return Err("--terrain-promote is the levels' rule: it needs --terrain-levels".into());
        }
        if self.foot_placement > 0.0 && !self.obs.observes_velocity() {
            return Err("--foot-placement reads the observed pelvis velocity: it needs \
                        --obs velocity or estimate"
                .into());
        }
        for model in self.sim.models() {
            let (dt, backend) = (self.dt_of(model.backend), physics::backend(model.backend));
            let Some(max) = backend.max_dt.filter(|&max| dt > max) else { continue };
            let flag = match model.dt {
                Some(_) => format!("--sim {}", self.sim),
                None => format!("--sim-dt {dt}"),
            };
            return Err(format!(
                "{flag}: {} is stable up to {max} s and blows up within two steps beyond it; \
                 give at most {max}",
                backend.about
            ));
        }
        for (name, lag) in [("--latency", self.latency), ("--eval-latency", self.eval_latency)] {
            if lag > 1.0 / self.policy_rate + 1e-9 {
                return Err(format!(
                    "{name} {lag} is longer than one policy step ({} s at --policy-rate {}): \
                     the observation lags by at most one step",
                    1.0 / self.policy_rate,
                    self.policy_rate
                ));
            }
        }
        if self.foot_placement > 0.0 && self.reference == ReferenceKind::None {
            return Err("--foot-placement shapes the reference gait: it needs --reference \
                        clock or omni"
                .into());
        }
        if !self.robust_shares.is_empty() {
            if !self.sim.is_mix() {
                return Err(format!(
                    "--robust-shares splits training episodes among the models of a mix; --sim \
                     {} runs one",
                    self.sim
                ));
            }
            self.sim
                .check_shares(&self.robust_shares)
                .map_err(|e| format!("--robust-shares for --sim {}: {e}", self.sim))?;
        }
        if self.cadence > 0.0 && self.full_gait {
            return Err("--cadence sets the gait cycle from the command and --full-gait draws \
                        it at random: set one of them"
                .into());
        }
        Ok(())
    }

    /// The gait cycle (s) at forward command `x` without `full_gait` ([`Self::cadence`]).
    pub fn cycle_time_at(&self, x: f64) -> f64 {
        FIXED_CYCLE - self.cadence * (x.abs() - 0.5).clamp(0.0, 1.0)
    }

    /// The share of pure-axis commands after `timesteps` training steps (`None`: an
    /// evaluation) ([`Self::omni_axes`], [`Self::omni_axes_start`]).
    pub fn omni_axes_at(&self, timesteps: Option<u64>) -> f64 {
        match timesteps {
            Some(t) if !Stage::at(self.omni_axes_start).begun(t, None) => 0.0,
            _ => self.omni_axes,
        }
    }

    /// The command distribution after `timesteps` training steps (`None`: an evaluation,
    /// which draws from `commands` throughout), in a run whose gated stage began at
    /// `stage_from`: forward commands until [`Self::omni_stage`] begins.
    pub fn commands_at(&self, timesteps: Option<u64>, stage_from: Option<u64>) -> CommandKind {
        match (self.commands, timesteps) {
            (CommandKind::Omni | CommandKind::OmniWalk, Some(t))
                if !self.omni_stage().begun(t, stage_from) =>
            {
                CommandKind::Forward
            }
            (kind, _) => kind,
        }
    }

    /// The share of omnidirectional commands after `timesteps` training steps ([`Self::omni_ramp`]).
    pub fn omni_share_at(&self, timesteps: u64) -> f64 {
        match self.omni_ramp {
            0 => 1.0,
            ramp => 0.2 + 0.8 * (timesteps as f64 / ramp as f64).min(1.0),
        }
    }

    /// The physics timestep (s) of a model without its own: `sim_dt`, or the first model's
    /// default.
    pub fn sim_dt(&self) -> f64 {
        self.sim_dt.unwrap_or(self.sim.first().default_dt())
    }

    /// The timestep (s) of `backend`, one of this config's models: its own `@DT`, else
    /// [`Self::sim_dt`].
    pub fn dt_of(&self, backend: SimKind) -> f64 {
        self.sim.get(backend).and_then(|m| m.dt).unwrap_or(self.sim_dt())
    }
}
