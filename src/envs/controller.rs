//! What a robot controller needs beyond the network to run a policy: the observation and
//! action layouts, the rate, and how an action becomes PD targets. `gait export` writes it as
//! the sidecar `FILE.json` beside the model; `gait eval --onnx` builds its PD targets from it
//! alone, which is the test that it is complete.

use serde::{Deserialize, Serialize};

/// An env's controller, as [`crate::envs::Env::controller`] describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControllerSpec {
    /// Policy steps per second (Hz).
    pub policy_rate_hz: f64,
    /// Observation entries in input order (what the raw, unnormalized `obs` holds).
    pub observation: Vec<String>,
    /// Action entries in output order.
    pub actions: Vec<String>,
    /// How actions become PD targets; `None`: the action is applied as it is (classic-control
    /// envs: a force or torque).
    pub pd: Option<PdTargets>,
    /// Observation entries that hold the same value at every step of this policy (Cassie's
    /// swing ratios and period shifts): what a controller feeds there. Sidecars written before
    /// the field list none.
    #[serde(default)]
    pub constant_inputs: Vec<ConstantInput>,
}

/// An observation entry a controller fills with a constant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConstantInput {
    /// The entry's index in the observation.
    pub index: usize,
    /// Its value.
    pub value: f32,
}

impl ControllerSpec {
    /// The controller of an env whose actions are applied as they are (a force, a torque):
    /// `obs_dim` inputs and `act_dim` outputs by index, no PD targets.
    pub fn plain(obs_dim: usize, act_dim: usize, policy_rate_hz: f64) -> Self {
        Self {
            policy_rate_hz,
            observation: (0..obs_dim).map(|i| format!("obs[{i}]")).collect(),
            actions: (0..act_dim).map(|i| format!("action[{i}] (applied as it is)")).collect(),
            pd: None,
            constant_inputs: Vec::new(),
        }
    }
}

/// `target[k] = action[k] + neutral[k] + reference[k]`, tracked by a PD controller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PdTargets {
    /// The formula, in words.
    pub formula: String,
    /// Joint angles of the neutral stance (rad), action order.
    pub neutral: Vec<f32>,
    /// Joint-side stiffness (N·m/rad) and damping (N·m·s/rad), action order.
    pub kp: Vec<f32>,
    /// Joint-side damping (N·m·s/rad), action order.
    pub kd: Vec<f32>,
    /// Joint-side torque limit (N·m) at low speed, action order.
    pub torque_limit: Vec<f32>,
    /// Joint speed (rad/s) at which the torque limit reaches 0 (the motor's no-load speed over
    /// its gear ratio), action order: the limit is `torque_limit` up to half this speed and
    /// falls linearly to 0 at it. Sidecars written before the field ran with Cassie's motors.
    #[serde(default = "cassie_no_load_speed")]
    pub no_load_speed: Vec<f32>,
    /// The PD law and torque limit as the simulator applies it, in words.
    pub pd_law: String,
    /// Seconds between a torque's computation and its reaching the joint (the motors' and
    /// the lab's `torque_delay_cycles`); sidecars written before the field ran with 0.003.
    #[serde(default = "nominal_torque_delay")]
    pub torque_delay: f32,
    /// A clock-synced reference gait added to the targets; `None`: no reference.
    pub reference: Option<ReferenceGait>,
}

/// Cassie's joint no-load speeds (rad/s), which every sidecar written before
/// [`PdTargets::no_load_speed`] ran with.
fn cassie_no_load_speed() -> Vec<f32> {
    // (no-load rpm, gear) of the hip roll, hip yaw, hip pitch, knee and foot motors.
    let leg = [(2900.0, 25.0), (2900.0, 25.0), (1300.0, 16.0), (1300.0, 16.0), (5500.0, 50.0)];
    let speed = |(rpm, gear): (f32, f32)| rpm * 2.0 * std::f32::consts::PI / 60.0 / gear;
    leg.iter().chain(&leg).map(|&m| speed(m)).collect()
}

/// The torque delay every sidecar written before [`PdTargets::torque_delay`] ran with (s).
fn nominal_torque_delay() -> f32 {
    0.003
}

/// The reference gait: per leg, `hip_roll += hip_roll_per_speed · y · s`,
/// `hip_yaw += hip_yaw_per_turn · turn · (s − 0.5)`, `hip_pitch += hip_pitch_per_speed · x · s` and
/// `knee += knee_fold · g · s`, with `s` the leg's swing value and
/// `g = clip(max(‖(x, y)‖, |turn|) / full_step_speed, min_gain, 1)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReferenceGait {
    /// The formula, in words.
    pub formula: String,
    /// Hip pitch per m/s of forward command (rad).
    pub hip_pitch_per_speed: f32,
    /// Sidecars written before omnidirectional walking mean 0 (no roll offset).
    #[serde(default)]
    pub hip_roll_per_speed: f32,
    /// Sidecars written before omnidirectional walking mean 0 (no yaw offset).
    #[serde(default)]
    pub hip_yaw_per_turn: f32,
    /// Knee fold at the swing peak (rad).
    pub knee_fold: f32,
    /// Speed (m/s) from which the full step is taken.
    pub full_step_speed: f32,
    /// The stepping gain's floor: 0 stands still at a standing command, 1 steps in place.
    /// Sidecars written before it existed mean 0.
    #[serde(default)]
    pub min_gain: f32,
    /// Action indices of each leg's hip roll, hip yaw, hip pitch and knee, `[left, right]`
    /// (roll and yaw: Cassie's, for sidecars written before they were recorded).
    #[serde(default = "cassie_hip_roll")]
    pub hip_roll: [usize; 2],
    /// Action indices of the hip yaw joints [left, right].
    #[serde(default = "cassie_hip_yaw")]
    pub hip_yaw: [usize; 2],
    /// Action indices of the hip pitch joints [left, right].
    pub hip_pitch: [usize; 2],
    /// Action indices of the knee joints [left, right].
    pub knee: [usize; 2],
    /// Observation indices of the command `x, y, turn`.
    pub command: [usize; 3],
    /// The gait clock's cycle time T (s); the phase φ advances 1/policy_rate per step.
    /// With `cadence`, the cycle at forward commands up to 0.5 m/s.
    pub cycle_time: f64,
    /// The cycle's shortening per m/s of forward command past 0.5 m/s (s per m/s): at command
    /// x the cycle is `cycle_time − cadence · clamp(|x| − 0.5, 0, 1)`, and a command change
    /// keeps the phase's share of the cycle (`φ/T`). Sidecars written before it existed
    /// mean 0 (a fixed cycle).
    #[serde(default)]
    pub cadence: f64,
    /// Observation indices of the clock input `[sin, cos](2πφ/T)`, from which the phase is
    /// recovered as `φ = T · atan2(sin, cos) / 2π` (mod T).
    pub clock: [usize; 2],
    /// Each leg's swing value at `φ = T · i / (n − 1)`, `i = 0..n`, `[left, right]`; between
    /// entries, linear interpolation.
    pub swing_table: [Vec<f64>; 2],
    /// Foot placement gain (rad·s/m): with `e = (observed forward, lateral pelvis velocity) −
    /// (x, y)`, `hip_roll += foot_placement · e_y · s`, `hip_pitch += foot_placement · e_x · s`,
    /// and `g = clip(max(hypot(x, y), |turn|, ‖e‖ − placement_deadband) / full_step_speed,
    /// min_gain, 1)`. Sidecars written before it existed mean 0 (none).
    #[serde(default)]
    pub foot_placement: f32,
    /// The velocity error (m/s) below which foot placement leaves the stepping gain alone.
    #[serde(default)]
    pub placement_deadband: f32,
    /// Observation indices of the pelvis velocity `[forward, lateral]`; `None` without foot
    /// placement.
    #[serde(default)]
    pub velocity: Option<[usize; 2]>,
}

fn cassie_hip_roll() -> [usize; 2] {
    [0, 5]
}

fn cassie_hip_yaw() -> [usize; 2] {
    [1, 6]
}

impl ReferenceGait {
    /// The swing values `[left, right]` at phase fraction `f = φ/T ∈ [0, 1)`.
    pub fn swing(&self, f: f64) -> [f64; 2] {
        self.swing_table.clone().map(|table| {
            let last = (table.len() - 1) as f64;
            let x = (f * last).clamp(0.0, last);
            let i = (x.floor() as usize).min(table.len() - 2);
            let w = x - i as f64;
            table[i] + w * (table[i + 1] - table[i])
        })
    }

    /// The reference offsets (action order, `n` actions) for observation `obs`.
    pub fn offsets(&self, obs: &[f32], n: usize) -> Vec<f32> {
        let [x, y, turn] = self.command.map(|i| obs[i]);
        let angle = (obs[self.clock[0]] as f64).atan2(obs[self.clock[1]] as f64);
        let f = (angle / std::f64::consts::TAU).rem_euclid(1.0);
        let s = self.swing(f);
        let e = match self.velocity {
            Some([fwd, lat]) if self.foot_placement > 0.0 => [obs[fwd] - x, obs[lat] - y],
            _ => [0.0; 2],
        };
        let planar = (x * x + y * y).sqrt();
        let mut asked = planar.max(turn.abs());
        if self.foot_placement > 0.0 {
            asked = asked.max(e[0].hypot(e[1]) - self.placement_deadband);
        }
        let g = (asked / self.full_step_speed).clamp(self.min_gain, 1.0);
        let k = self.foot_placement;
        let mut out = vec![0.0; n];
        for leg in 0..2 {
            let s = s[leg] as f32;
            out[self.hip_roll[leg]] = (self.hip_roll_per_speed * y + k * e[1]) * s;
            out[self.hip_yaw[leg]] = self.hip_yaw_per_turn * turn * (s - 0.5);
            out[self.hip_pitch[leg]] = (self.hip_pitch_per_speed * x + k * e[0]) * s;
            out[self.knee[leg]] = self.knee_fold * g * s;
        }
        out
    }
}

/// The largest gain, torque limit or joint speed a sidecar may hold (N·m/rad, N·m·s/rad, N·m,
/// rad/s).
const GAIN_MAX: f32 = 1e5;

impl ControllerSpec {
    /// Whether the description fits a network of `obs_dim` inputs and `act_dim` outputs and
    /// every number is one a controller can run: the layouts' lengths, every array's length,
    /// every index, finite gains, a rate in [1, 2000] Hz, a swing table of at least two
    /// entries. Why: a sidecar is a file a deployer may edit, and `gait eval --onnx` must
    /// refuse one it cannot run rather than cut an array short or index past one.
    pub fn check(&self, obs_dim: usize, act_dim: usize) -> Result<(), String> {
        if !(1.0..=2000.0).contains(&self.policy_rate_hz) {
            return Err(format!("policy_rate_hz {} is not in [1, 2000] Hz", self.policy_rate_hz));
        }
        let lengths = [
            ("observation", self.observation.len(), obs_dim),
            ("actions", self.actions.len(), act_dim),
        ];
        for (name, len, want) in lengths {
            if len != want {
                return Err(format!("{name} names {len} values, the network has {want}"));
            }
        }
        if let Some(c) = self.constant_inputs.iter().find(|c| c.index >= obs_dim) {
            return Err(format!("constant_inputs index {} is past the {obs_dim} inputs", c.index));
        }
        if let Some(c) = self.constant_inputs.iter().find(|c| !c.value.is_finite()) {
            return Err(format!("constant_inputs[{}] is not finite", c.index));
        }
        let Some(pd) = &self.pd else { return Ok(()) };
        for (name, values) in [
            ("neutral", &pd.neutral),
            ("kp", &pd.kp),
            ("kd", &pd.kd),
            ("torque_limit", &pd.torque_limit),
            ("no_load_speed", &pd.no_load_speed),
        ] {
            if values.len() != act_dim {
                return Err(format!(
                    "pd.{name} has {} values, the network has {act_dim} actions",
                    values.len()
                ));
            }
            if values.iter().any(|v| !v.is_finite()) {
                return Err(format!("pd.{name} holds a value that is not finite"));
            }
        }
        // Ranges a joint PD of any robot fits (Cassie's: kp 50-110, kd 5-10, limits 45-195
        // N·m, no-load speeds 11-23 rad/s); past them a hand edit is a typo, not a gain.
        let ranges = [
            ("kp", &pd.kp, 0.0, GAIN_MAX),
            ("kd", &pd.kd, 0.0, GAIN_MAX),
            ("torque_limit", &pd.torque_limit, 0.0, GAIN_MAX),
            ("no_load_speed", &pd.no_load_speed, f32::MIN_POSITIVE, GAIN_MAX),
        ];
        for (name, values, lo, hi) in ranges {
            if let Some(v) = values.iter().find(|v| !(lo..=hi).contains(*v)) {
                return Err(format!("pd.{name} holds {v}, not in [{lo}, {hi}]"));
            }
        }
        if !(0.0..=1.0).contains(&pd.torque_delay) {
            return Err(format!("pd.torque_delay {} is not a delay in [0, 1] s", pd.torque_delay));
        }
        match &pd.reference {
            Some(r) => r.check(obs_dim, act_dim),
            None => Ok(()),
        }
    }
}

impl ReferenceGait {
    /// [`ControllerSpec::check`]'s part for the reference gait.
    fn check(&self, obs_dim: usize, act_dim: usize) -> Result<(), String> {
        let actions = [
            ("hip_roll", self.hip_roll),
            ("hip_yaw", self.hip_yaw),
            ("hip_pitch", self.hip_pitch),
            ("knee", self.knee),
        ];
        for (name, at) in actions {
            if at.iter().any(|&i| i >= act_dim) {
                return Err(format!(
                    "pd.reference.{name} {at:?} indexes past the {act_dim} actions"
                ));
            }
        }
        let mut inputs = vec![("command", self.command.to_vec()), ("clock", self.clock.to_vec())];
        inputs.extend(self.velocity.map(|v| ("velocity", v.to_vec())));
        for (name, at) in inputs {
            if at.iter().any(|&i| i >= obs_dim) {
                return Err(format!(
                    "pd.reference.{name} {at:?} indexes past the {obs_dim} inputs"
                ));
            }
        }
        if self.swing_table.iter().any(|t| t.len() < 2 || t.iter().any(|v| !v.is_finite())) {
            return Err("pd.reference.swing_table needs at least two finite entries per leg".into());
        }
        if !(0.0..=1.0).contains(&self.min_gain) {
            return Err(format!("pd.reference.min_gain {} is not in [0, 1]", self.min_gain));
        }
        let positive =
            [("full_step_speed", self.full_step_speed as f64), ("cycle_time", self.cycle_time)];
        for (name, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("pd.reference.{name} {v} is not a positive number"));
            }
        }
        let gains = [
            self.hip_pitch_per_speed,
            self.hip_roll_per_speed,
            self.hip_yaw_per_turn,
            self.knee_fold,
            self.foot_placement,
            self.placement_deadband,
        ];
        if gains.iter().any(|g| !g.is_finite()) || !self.cadence.is_finite() {
            return Err("pd.reference holds a gain that is not finite".into());
        }
        Ok(())
    }
}

impl PdTargets {
    /// The PD targets for `action` given observation `obs`.
    pub fn targets(&self, obs: &[f32], action: &[f32]) -> Vec<f32> {
        let reference = match &self.reference {
            Some(r) => r.offsets(obs, action.len()),
            None => vec![0.0; action.len()],
        };
        action.iter().zip(&self.neutral).zip(reference).map(|((a, n), r)| a + n + r).collect()
    }
}
