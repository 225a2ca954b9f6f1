//! Cassie's settings (`[env.cassie]` in a config file, `--policy-rate` ... as flags) and the
//! observation layouts.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use super::commands::CommandKind;
use super::physics::SimKind;
use super::reference::ReferenceKind;
use super::reward::{ProgressKind, RewardKind, TurnKind};

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
}

/// Cassie's settings (`[env.cassie]`, flags `--policy-rate` ...). A field missing from an older
/// `experiment.json` takes the value that run trained with (the reference task), not today's
/// default, so old runs rebuild the env they learned on; config files never reach these serde
/// defaults (they change only the keys they name, `TrainConfig::merged_with_toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CassieConfig {
    /// Physics backend: gait's rapier3d model, or MuJoCo on the lab's `cassie_fast.xml`. Runs
    /// from before the setting existed trained on rapier.
    pub sim: SimKind,
    /// Policy steps per second (Hz); physics substeps per step = round(sim rate / policy rate).
    pub policy_rate: f64,
    /// Physics timestep (s); unset: the backend's default ([`SimKind::default_dt`]: 0.002 =
    /// 500 Hz on rapier, where the physical tests hold as at 2 kHz; 0.0005 = the lab's 2 kHz
    /// on MuJoCo). An unset value is left out of TOML files (`sim_dt = 0.0005` sets it).
    pub sim_dt: Option<f64>,
    /// Reward function.
    pub reward: RewardKind,
    /// Reference gait added to the PD targets (the action is a residual on it).
    #[serde(default = "legacy_reference")]
    pub reference: ReferenceKind,
    /// Command distribution.
    #[serde(default = "legacy_commands")]
    pub commands: CommandKind,
    /// Observation layout.
    #[serde(default = "legacy_obs")]
    pub obs: ObsKind,
    /// Observe one clock per leg (46 inputs) instead of one shared clock (44).
    pub full_clock: bool,
    /// Randomize the gait (swing ratio, cycle time, period shifts) with every new command.
    pub full_gait: bool,
    /// Randomize dynamics at every training reset (damping, masses, COMs, friction, slope,
    /// encoder offsets, torque delay and efficiency, spring stiffness) and jitter the policy
    /// rate by 0-5 Hz per step; evaluations run the nominal model.
    pub dynamics_randomization: bool,
    /// Push the pelvis every 2-5 s, in a random horizontal direction, by a speed change of
    /// U(0, push) m/s for the whole robot (an impulse of 33.3 kg · that, held for one policy
    /// step); 0: no pushes.
    #[serde(default)]
    pub push: f64,
    /// Training steps before the training perturbations begin (pushes, randomized dynamics,
    /// observation noise): a policy first learns to walk, then to be perturbed. From scratch,
    /// pushes from the first step kept one run marching in place and randomized dynamics with
    /// noise held another to a third of the episode length at 1.7M steps (`docs/cassie-runs.md`).
    #[serde(default)]
    pub robust_start: u64,
    /// Training steps over which the perturbations then grow linearly to full strength (the
    /// pushes' top speed to `push`, the randomization ranges and the noise to theirs; 0: at
    /// once).
    #[serde(default)]
    pub robust_ramp: u64,
    /// Per-step Gaussian noise on training observations, as a multiple of [`NOISE_STD`]'s
    /// standard deviations (0: none). Evaluations never add it.
    #[serde(default)]
    pub obs_noise: f64,
    /// The reference gait's stepping gain at a standing command, in [0, 1]: 0 stands still
    /// (both feet planted), 1 steps in place with the walking knee fold, so a standing robot
    /// that is pushed is already stepping and can catch itself (`docs/cassie-runs.md`,
    /// `robustC-s0`: standing, pushes of exactly 0.5 m/s fell 3 of 5 episodes; walking, none).
    #[serde(default)]
    pub step_in_place: f64,
    /// Raw weight of the walking reward's posture term `upright`, exp(−tilt²/0.02) on the
    /// pelvis's roll and pitch together (0: none; the other raw weights sum to 1.45 and the
    /// reward is divided by the sum with this one, so its maximum stays 1).
    #[serde(default)]
    pub upright: f64,
    /// The walking reward's `progress` shape past the command: flat (`clip`, runs before the
    /// setting existed) or falling again (`peak`).
    #[serde(default)]
    pub progress: ProgressKind,
    /// Training steps over which an omnidirectional distribution's share of the commands grows
    /// from a fifth to all of them, the rest drawn from `forward` (straight ahead or stand), so
    /// that walking is learned before turning and sidestepping; 0: omnidirectional from the
    /// first step. The fifth keeps every command input varied from the start, so the
    /// observation normalizer never sees a constant one. Evaluations draw omnidirectional
    /// commands throughout. Measured: `omniA-s0`, without it, still marched in place at 3.9M
    /// steps (forward 0.0-0.17 m/s at the 1 m/s eval command).
    #[serde(default)]
    pub omni_ramp: u64,
    /// How the walking reward tracks the turn command: the integrated heading (roadrunner's,
    /// runs before the setting existed) or the yaw rate in the robot's own frame.
    #[serde(default)]
    pub turn_reward: TurnKind,
}

/// Observation noise at `obs_noise = 1`: standard deviations of the pelvis orientation (rad,
/// about each body axis), pelvis angular velocity (rad/s), motor angles (rad), motor speeds
/// (rad/s), passive joint angles (rad) and speeds (rad/s): the reference's run_ppo values
/// (roadrunner.md §1.6, §7.3); then the pelvis linear velocity (m/s), which a robot gets from a state
/// estimator rather than an encoder.
pub const NOISE_STD: [f32; 7] = [0.05, 0.1, 0.01, 0.1, 0.01, 0.1, 0.1];

fn legacy_reference() -> ReferenceKind {
    ReferenceKind::None
}

fn legacy_commands() -> CommandKind {
    CommandKind::Omni
}

fn legacy_obs() -> ObsKind {
    ObsKind::Reference
}

impl Default for CassieConfig {
    fn default() -> Self {
        Self {
            sim: SimKind::Rapier,
            policy_rate: 50.0,
            sim_dt: None,
            reward: RewardKind::Walk,
            reference: ReferenceKind::Clock,
            commands: CommandKind::Forward,
            obs: ObsKind::Velocity,
            full_clock: false,
            full_gait: false,
            dynamics_randomization: false,
            push: 0.0,
            robust_start: 0,
            robust_ramp: 0,
            obs_noise: 0.0,
            step_in_place: 0.0,
            upright: 0.0,
            progress: ProgressKind::Clip,
            omni_ramp: 0,
            turn_reward: TurnKind::Heading,
        }
    }
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

/// `v` when it is finite and in `range`, else `'v' is not WHAT` (`what` names the range).
fn within(v: f64, range: std::ops::RangeInclusive<f64>, what: &str) -> Result<f64, String> {
    if v.is_finite() && range.contains(&v) {
        Ok(v)
    } else {
        Err(format!("'{v}' is not {what}"))
    }
}

impl CassieConfig {
    /// `policy_rate` in [1, 2000] Hz (the flag's parser and config files both use it). Below
    /// 1 Hz a policy step is more physics than any controller means (1e-300 Hz was 5e302
    /// substeps: one step that never ended), and 1 Hz bounds a step to 1 s of simulated time.
    pub fn check_policy_rate(v: f64) -> Result<f64, String> {
        within(v, 1.0..=2000.0, "a policy rate in [1, 2000] Hz")
    }

    /// `sim_dt` in [1e-5, 0.01] s.
    pub fn check_sim_dt(v: f64) -> Result<f64, String> {
        within(v, 1e-5..=0.01, "a timestep in [0.00001, 0.01] s")
    }

    /// `push` in [0, 5] m/s (5 m/s is a blow no robot of this size stands).
    pub fn check_push(v: f64) -> Result<f64, String> {
        within(v, 0.0..=5.0, "a push speed in [0, 5] m/s")
    }

    /// `obs_noise` in [0, 10] standard deviations of [`NOISE_STD`].
    pub fn check_obs_noise(v: f64) -> Result<f64, String> {
        within(v, 0.0..=10.0, "a noise scale in [0, 10]")
    }

    /// `upright` in [0, 1] (a raw weight beside the others' 1.45).
    pub fn check_upright(v: f64) -> Result<f64, String> {
        within(v, 0.0..=1.0, "a posture weight in [0, 1]")
    }

    /// `step_in_place` in [0, 1] (a fraction of the walking knee fold).
    pub fn check_step_in_place(v: f64) -> Result<f64, String> {
        within(v, 0.0..=1.0, "a stepping gain in [0, 1]")
    }

    /// The range checks of [`Self::check_policy_rate`], [`Self::check_sim_dt`],
    /// [`Self::check_push`], [`Self::check_obs_noise`], [`Self::check_step_in_place`] and
    /// [`Self::check_upright`].
    pub fn validate(&self) -> Result<(), String> {
        Self::check_step_in_place(self.step_in_place)
            .map_err(|e| format!("--step-in-place: {e}"))?;
        Self::check_upright(self.upright).map_err(|e| format!("--upright: {e}"))?;
        Self::check_push(self.push).map_err(|e| format!("--push: {e}"))?;
        Self::check_obs_noise(self.obs_noise).map_err(|e| format!("--obs-noise: {e}"))?;
        Self::check_policy_rate(self.policy_rate).map_err(|e| format!("--policy-rate: {e}"))?;
        if let Some(dt) = self.sim_dt {
            Self::check_sim_dt(dt).map_err(|e| format!("--sim-dt: {e}"))?;
        }
        Ok(())
    }
}

impl CassieConfig {
    /// The strength of the training perturbations after `timesteps` training steps, in
    /// [0, 1]: 0 before `robust_start`, then rising linearly over `robust_ramp` steps to 1.
    pub fn robustness_at(&self, timesteps: u64) -> f64 {
        if timesteps < self.robust_start {
            0.0
        } else if self.robust_ramp == 0 {
            1.0
        } else {
            ((timesteps - self.robust_start) as f64 / self.robust_ramp as f64).min(1.0)
        }
    }

    /// The share of omnidirectional commands after `timesteps` training steps ([`Self::omni_ramp`]).
    pub fn omni_share_at(&self, timesteps: u64) -> f64 {
        match self.omni_ramp {
            0 => 1.0,
            ramp => 0.2 + 0.8 * (timesteps as f64 / ramp as f64).min(1.0),
        }
    }

    /// The physics timestep (s): `sim_dt`, or the backend's default.
    pub fn sim_dt(&self) -> f64 {
        self.sim_dt.unwrap_or(self.sim.default_dt())
    }

    /// Physics substeps per policy step at `rate` Hz.
    pub(crate) fn substeps(&self, rate: f64) -> usize {
        ((1.0 / self.sim_dt()) / rate).round().max(1.0) as usize
    }
}
