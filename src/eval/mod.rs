//! `gait eval`: run a trained policy deterministically (or with `--action-noise`) and report
//! returns, lengths and per-reward-term means.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use tch::Tensor;

use crate::algos::tracking::EvalEpisode;
use crate::config::UsageError;
use crate::course::LegOutcome;
use crate::envs::{self, CommandError, CourseLeg, EnvConfig, PhysicsOverride, Pushes};
use crate::outputs::Output;
use crate::policies::Actor;
use crate::replay::Replay;

mod episodes;
mod onnx;
pub mod trace;

use onnx::{OnnxActions, OnnxTargets};

/// What `gait eval` runs (flags: `crate::cli::EvalFlags`).
#[derive(Debug, Clone, PartialEq)]
pub struct EvalOptions {
    /// The policy: a run's checkpoint, or an exported ONNX file.
    pub source: Source,
    /// Episodes to run.
    pub episodes: usize,
    /// Maximum episode length (None: the run's `traj_len`).
    pub traj_len: Option<usize>,
    /// Fixed command `x,y,turn` for envs that take commands.
    pub command: Option<Vec<f32>>,
    /// A scripted course instead: each leg's duration (s) and command.
    pub course: Option<Vec<CourseSegment>>,
    /// Seeds the episodes' initial states.
    pub seed: u64,
    /// Render the first episode as an animated GIF here.
    pub gif: Option<PathBuf>,
    /// Write every episode as a self-contained 3D replay page here.
    pub record: Option<PathBuf>,
    /// Write every step as a CSV row here ([`trace`]).
    pub trace: Option<PathBuf>,
    /// Another physics for a Cassie run than it trained on (the sim-to-sim check).
    pub physics: PhysicsOverride,
    /// Pushes every 2-5 s of up to this speed change (m/s), as training's `--push`.
    pub push: Option<f32>,
    /// Every push exactly `push` instead.
    pub push_exact: bool,
    /// Gaussian noise of this std added to every raw action (0: the deterministic policy).
    pub action_noise: f32,
}

/// One leg of `gait eval --course`: a command held for `seconds`, and the ground laid from
/// where it begins ([`crate::envs::course_stretches`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CourseSegment {
    /// How long the command holds (s).
    pub seconds: f64,
    /// The command `[x, y, turn]`.
    pub command: [f32; 3],
    /// The ground from this leg on (`@KIND[:DIFFICULTY]`); `None`: the leg before's goes on.
    pub ground: Option<envs::TerrainArg>,
}

impl std::str::FromStr for CourseSegment {
    type Err = String;

    /// `SECONDS:X,Y,TURN[@KIND[:DIFFICULTY]]`, e.g. `4:0.6,0,0.3` or `6:0.5,0,0@upstairs:0.67`.
    fn from_str(s: &str) -> Result<Self, String> {
        let usage = || {
            format!(
                "'{s}': a course leg is SECONDS:X,Y,TURN, e.g. 4:0.6,0,0.3, with @KIND[:DIFFICULTY] \
                 after it for the ground from there on, e.g. 6:0.5,0,0@upstairs:0.67"
            )
        };
        let (leg, ground) = match s.split_once('@') {
            Some((leg, ground)) => (leg, Some(ground.parse::<envs::TerrainArg>()?)),
            None => (s, None),
        };
        let (seconds, command) = leg.split_once(':').ok_or_else(usage)?;
        let seconds: f64 = seconds.trim().parse().map_err(|_| usage())?;
        if !(seconds.is_finite() && seconds > 0.0 && seconds <= 3600.0) {
            return Err(format!("'{s}': a leg lasts more than 0 and at most 3600 s"));
        }
        let values = command
            .split(',')
            .map(|v| v.trim().parse::<f32>().map_err(|_| usage()))
            .collect::<Result<Vec<_>, _>>()?;
        let [x, y, turn] = values[..] else { return Err(usage()) };
        Ok(Self { seconds, command: [x, y, turn], ground })
    }
}

/// A course's legs with their first policy steps at `dt` seconds per step (each leg at least
/// one step), and the course's length in steps.
pub fn course_legs(
    course: &[CourseSegment],
    dt: f32,
) -> Result<(Vec<CourseLeg>, usize), UsageError> {
    let mut start = 0u32;
    let mut legs = Vec::with_capacity(course.len());
    for segment in course {
        legs.push(CourseLeg { start, command: segment.command, ground: segment.ground });
        let steps = (segment.seconds / dt as f64).round().max(1.0);
        start = u32::try_from(steps as u64).ok().and_then(|n| start.checked_add(n)).ok_or_else(
            || {
                UsageError(format!(
                    "--course: the legs add up to more than {} policy steps ({:.0} days at this \
                     rate)",
                    u32::MAX,
                    u32::MAX as f64 * dt as f64 / 86400.0
                ))
            },
        )?;
    }
    Ok((legs, start as usize))
}

/// Where `gait eval`'s policy comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A run directory (`--path`) and which of its weights.
    Run {
        /// The run directory.
        path: PathBuf,
        /// Best-eval, latest or a saved iteration's.
        weights: crate::export::ActorCheckpoint,
    },
    /// An exported ONNX file (`--onnx`), run by ONNX Runtime, its PD targets built from its
    /// sidecar alone (the proof that the sidecar is complete).
    Onnx(PathBuf),
}

/// A policy as `gait eval` steps it.
trait EvalPolicy: Send {
    /// A new episode (recurrent state to zero).
    fn reset(&mut self);
    /// What the env is given for `obs`: the deterministic action, or PD targets; `noise`
    /// perturbs the raw action first.
    fn act(&mut self, obs: &[f32], noise: &mut ActionNoise, action: &mut [f32]) -> Result<()>;
}

/// `gait eval --action-noise SD`: N(0, SD²) on every raw action, as training samples its
/// actions around the mean (the preset's fixed std is 0.2), from a generator seeded per
/// episode, so a noisy evaluation is as repeatable as a deterministic one. Why: a policy tunes
/// its gait to the noise it trained with, and evaluation runs the mean; with the noise added
/// back, the two can be told apart (docs/cassie.md "The noise the policy walks with").
struct ActionNoise {
    std: f32,
    rng: ChaCha8Rng,
}

impl ActionNoise {
    fn new(std: f32, seed: u64) -> Self {
        Self { std, rng: ChaCha8Rng::seed_from_u64(seed) }
    }

    fn perturb(&mut self, action: &mut [f32]) {
        if self.std > 0.0 {
            for a in action {
                *a += self.std * self.rng.sample::<f32, _>(StandardNormal);
            }
        }
    }
}

/// A run's actor on libtorch.
struct TchPolicy {
    actor: Actor,
    hidden: crate::policies::Hidden,
}

impl EvalPolicy for TchPolicy {
    fn reset(&mut self) {
        self.hidden = None;
    }

    fn act(&mut self, obs: &[f32], noise: &mut ActionNoise, action: &mut [f32]) -> Result<()> {
        let (mean, _) = self.actor.step(&Tensor::from_slice(obs), &mut self.hidden);
        mean.copy_data(action, action.len());
        noise.perturb(action);
        Ok(())
    }
}

/// The policy to evaluate, with the env it ran in.
struct Loaded {
    env: String,
    env_config: EnvConfig,
    net: crate::policies::NetSpec,
    /// The default episode length (the run's `traj_len`).
    traj_len: usize,
    policy: Box<dyn EvalPolicy>,
    /// What is evaluated (a checkpoint or the ONNX file), for the report.
    file: PathBuf,
    /// What the report says about the file ([`crate::export::numbered_weights_note`]).
    note: Option<String>,
    /// The flag that named it, for messages.
    flag: &'static str,
    /// The PD the env drives the targets with, when it takes them instead of actions.
    pd: Option<crate::envs::controller::PdTargets>,
}

/// The env a policy was trained on, read without loading its weights.
pub fn env_of(source: &Source) -> Result<String> {
    match source {
        Source::Run { path, .. } => Ok(crate::logging::load_run(path, "--path")?.config.run.env),
        Source::Onnx(model) => Ok(crate::export::read_sidecar(model)?.env),
    }
}

fn load(source: &Source) -> Result<Loaded> {
    match source {
        Source::Run { path, weights } => {
            let (exp, actor, checkpoint) = crate::export::load_actor(path, *weights)?;
            Ok(Loaded {
                note: crate::export::numbered_weights_note(path, &exp, *weights),
                env: exp.config.run.env.clone(),
                env_config: exp.config.env.clone(),
                net: exp.net.clone(),
                traj_len: exp.config.sampler.traj_len,
                policy: Box::new(TchPolicy { actor, hidden: None }),
                file: checkpoint,
                flag: "--path",
                pd: None,
            })
        }
        Source::Onnx(model) => {
            let sidecar = crate::export::read_sidecar(model)?;
            let (policy, note) = crate::export::runtime::OnnxPolicy::load(model, &sidecar)?;
            // With PD targets the env takes the targets the sidecar builds and drives them
            // with its gains; without, the actions as they are.
            let pd = sidecar.controller.pd.clone();
            let policy: Box<dyn EvalPolicy> = match &pd {
                Some(pd) => {
                    let raw = vec![0.0; sidecar.net.act_dim];
                    Box::new(OnnxTargets { policy, pd: pd.clone(), raw })
                }
                None => Box::new(OnnxActions { policy }),
            };
            Ok(Loaded {
                env: sidecar.env.clone(),
                env_config: sidecar.env_config.clone(),
                net: sidecar.net.clone(),
                traj_len: sidecar.episode_length,
                policy,
                file: model.clone(),
                note,
                flag: "--onnx",
                pd,
            })
        }
    }
}

/// The run's env settings with `over` applied, and a line saying what runs where (None for a
/// run of an env without physics models, given no override): the env's own rule
/// ([`crate::envs::EnvSchedule::apply_physics`]).
fn apply_physics(
    over: &PhysicsOverride,
    env: &str,
    config: &mut EnvConfig,
) -> Result<Option<String>, UsageError> {
    match envs::apply_physics(env, config, over) {
        Some(applied) => applied.map(Some).map_err(UsageError),
        None if over.is_empty() => Ok(None),
        None => Err(UsageError(format!(
            "--sim/--sim-dt/--friction/--latency/--sensor-noise: only Cassie has physics \
             backends and sensors, the run is '{env}'"
        ))),
    }
}

/// What `gait eval` measured.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalSummary {
    /// The weights evaluated.
    pub checkpoint: PathBuf,
    /// Each episode's return.
    pub returns: Vec<f64>,
    /// Each episode's length (steps).
    pub lengths: Vec<usize>,
    /// Mean per step of each reward term.
    pub terms: BTreeMap<String, f64>,
    /// Mean per step of each env metric ([`crate::envs::Env::metrics`]).
    pub metrics: BTreeMap<String, f64>,
    /// Each episode's command, length and per-step metric means (what its printed line
    /// shows), for judges of single episodes such as `gait check`.
    pub episodes: Vec<EvalEpisode>,
    /// With `course`: each episode's legs, what each got (empty without a course).
    pub course_episodes: Vec<Vec<LegOutcome>>,
    /// Episodes cut because the simulation blew up (the simulator reset a non-finite state):
    /// printed and in `episodes`, left out of `returns`, `lengths`, `terms` and `metrics`.
    pub blowups: usize,
    /// Ctrl-C or SIGTERM ended the evaluation early (what ran is reported and written).
    pub interrupted: bool,
    /// Simulated seconds per step.
    pub policy_dt: f32,
}

impl EvalSummary {
    /// Mean return.
    pub fn mean_return(&self) -> f64 {
        self.returns.iter().sum::<f64>() / self.returns.len().max(1) as f64
    }

    /// Mean episode length.
    pub fn mean_length(&self) -> f64 {
        self.lengths.iter().sum::<usize>() as f64 / self.lengths.len().max(1) as f64
    }
}

/// Bytes a recorded frame takes in the page (measured: a 500-step Cassie episode adds 0.7 MB of
/// JSON), with room for the copy held while the page is written.
const RECORDED_FRAME_BYTES: u128 = 2 * 1400;

/// The largest page `--record` makes: far past what a browser opens, and far from the memory
/// it would take to hold.
const MAX_PAGE_BYTES: u128 = 2_000_000_000;

/// `--record` keeps every frame until the page is written: refuse, before running anything, a
/// recording that could not be held or opened.
fn check_recording_size(episodes: usize, traj_len: usize) -> Result<(), UsageError> {
    let bytes = episodes as u128 * traj_len as u128 * RECORDED_FRAME_BYTES;
    if bytes > MAX_PAGE_BYTES {
        let most = (MAX_PAGE_BYTES / (traj_len as u128 * RECORDED_FRAME_BYTES)).max(1);
        return Err(UsageError(format!(
            "--record: {episodes} episodes of up to {traj_len} steps would make a page of about \
             {:.1} GB; record at most {most} episodes of this length",
            bytes as f64 / 1e9
        )));
    }
    Ok(())
}

/// Runs the evaluation and prints one line per episode plus a summary.
pub fn run_eval(args: &EvalOptions, out: &mut impl Write) -> Result<EvalSummary> {
    prepare_eval(args)?.run(out)
}

/// A policy and its env for a caller that owns the loop (`gait play`): built and checked as
/// `gait eval` builds them, with no command, course or pushes of the env's own.
pub struct Driven {
    /// The env's name.
    pub env_name: String,
    /// The env, not reset yet.
    pub env: Box<dyn envs::Env>,
    /// The file driven: the run's checkpoint or the ONNX model.
    pub checkpoint: PathBuf,
    /// What runs where, for an env with physics models.
    pub physics: Option<String>,
    policy: Box<dyn EvalPolicy>,
    noise: ActionNoise,
}

impl Driven {
    /// A policy and env as [`run_eval`] would run them from `source` on `physics`.
    pub fn new(source: &Source, physics: PhysicsOverride) -> Result<Self> {
        let args = EvalOptions {
            source: source.clone(),
            episodes: 1,
            traj_len: None,
            command: None,
            course: None,
            seed: 0,
            gif: None,
            record: None,
            trace: None,
            physics,
            push: None,
            push_exact: false,
            action_noise: 0.0,
        };
        let prepared = prepare_eval(&args)?;
        Ok(Self {
            env_name: prepared.env_name,
            env: prepared.env,
            checkpoint: prepared.checkpoint,
            physics: prepared.physics,
            policy: prepared.policy,
            noise: ActionNoise::new(0.0, 0),
        })
    }

    /// A new episode begins: the policy's recurrent state back to zero.
    pub fn reset(&mut self) {
        self.policy.reset();
    }

    /// The deterministic action (or PD targets) for `obs`; a non-finite one is an error.
    pub fn act(&mut self, obs: &[f32], action: &mut [f32]) -> Result<()> {
        self.policy.act(obs, &mut self.noise, action)?;
        if let Some(i) = action.iter().position(|a| !a.is_finite()) {
            bail!("the policy produced a non-finite action (entry {i} = {})", action[i]);
        }
        Ok(())
    }
}

/// Gives `env` the `--command` `command`, its refusal a usage error.
fn set_command(env: &mut dyn envs::Env, env_name: &str, command: &[f32]) -> Result<(), UsageError> {
    if command.len() != 3 {
        return Err(UsageError(format!(
            "--command takes 3 values x,y,turn, got {}",
            command.len()
        )));
    }
    let walking = env.walking_mut().ok_or(CommandError::Unsupported);
    walking.and_then(|w| w.set_command(command)).map_err(|e| match e {
        CommandError::Unsupported => {
            UsageError(format!("--command: env '{env_name}' takes no commands"))
        }
        e => UsageError(format!("--command: {e}")),
    })
}

/// Checks `args` as [`run_eval`] does before its first step (the weights, the env, the
/// course, pushes and output files), and each of `commands` as `--command` is checked,
/// running nothing, and returns the file it would evaluate with its note, if any
/// ([`crate::export::numbered_weights_note`]). Why: `gait check` calls it before its first
/// line, so a bad flag or a missing checkpoint is one error, not a table cut short at the cell
/// that met it; and it prints the note once, not once per cell.
pub fn check_options(
    args: &EvalOptions,
    commands: &[[f32; 3]],
) -> Result<(PathBuf, Option<String>)> {
    let mut probe = prepare_eval(args)?;
    for command in commands {
        set_command(probe.env.as_mut(), &probe.env_name, command)?;
    }
    Ok((probe.checkpoint, probe.note))
}

/// An evaluation with every flag checked and nothing run yet: its policy loaded, its env built
/// and given the command, course and pushes, its output files checked.
struct PreparedEval {
    args: EvalOptions,
    env_name: String,
    env: Box<dyn envs::Env>,
    policy: Box<dyn EvalPolicy>,
    checkpoint: PathBuf,
    /// A line about the checkpoint for the report ([`Loaded::note`]).
    note: Option<String>,
    /// What runs where, for a run of an env with physics models ([`apply_physics`]).
    physics: Option<String>,
    /// A course's legs and its length in steps.
    course: Option<(Vec<CourseLeg>, usize)>,
    replay: Option<Replay>,
    trace: Option<trace::Trace>,
    traj_len: usize,
}

/// Gives a walking env the `--command`, `--course` and `--push` of `args` (no pushes unless
/// asked for: a run's training pushes are not part of its evaluation); the course's legs and
/// length in steps. Each refusal is a usage error naming its flag.
fn walking_controls(
    env: &mut dyn envs::Env,
    env_name: &str,
    args: &EvalOptions,
) -> Result<Option<(Vec<CourseLeg>, usize)>> {
    if let Some(command) = &args.command {
        set_command(env, env_name, command)?;
    }
    let refusal = |flag: &str, what: &str, e: CommandError| match e {
        CommandError::Unsupported => UsageError(format!("{flag}: env '{env_name}' {what}")),
        e => UsageError(format!("{flag}: {e}")),
    };
    let course = match &args.course {
        Some(segments) => {
            if args.physics.terrain.is_some() && segments.iter().any(|s| s.ground.is_some()) {
                return Err(UsageError(
                    "--terrain lays one ground under the whole course and --course's legs name \
                     their own (@KIND): give one or the other"
                        .into(),
                )
                .into());
            }
            let (legs, steps) = course_legs(segments, env.policy_dt())?;
            let walking = env.walking_mut().ok_or(CommandError::Unsupported);
            walking
                .and_then(|w| w.set_course(&legs))
                .map_err(|e| refusal("--course", "takes no commands", e))?;
            Some((legs, steps))
        }
        None => None,
    };
    match args.push {
        Some(speed) => {
            let pushes = if args.push_exact { Pushes::Exactly(speed) } else { Pushes::UpTo(speed) };
            let walking = env.walking_mut().ok_or(CommandError::Unsupported);
            walking
                .and_then(|w| w.set_push(pushes))
                .map_err(|e| refusal("--push", "cannot be pushed", e))?;
        }
        None => {
            if let Some(walking) = env.walking_mut() {
                let _ = walking.set_push(Pushes::UpTo(0.0));
            }
        }
    }
    Ok(course)
}

/// The recording `--gif` or `--record` asks for, every output (`--trace` too) checked before
/// anything runs; a picture refused for an env that cannot describe its bodies.
fn picture(env: &dyn envs::Env, env_name: &str, args: &EvalOptions) -> Result<Option<Replay>> {
    let mut outputs = Vec::new();
    if let Some(path) = &args.gif {
        outputs.push(Output { flag: "--gif", path, extensions: &["gif"] });
    }
    if let Some(path) = &args.record {
        outputs.push(Output { flag: "--record", path, extensions: &["html", "htm"] });
    }
    let pictures = outputs.len();
    if let Some(path) = &args.trace {
        outputs.push(Output { flag: "--trace", path, extensions: &["csv"] });
    }
    crate::outputs::check(&outputs)?;
    if args.record.is_some() {
        crate::replay::ensure_pages_supported()?;
    }
    let Some(&Output { flag, .. }) = outputs[..pictures].first() else { return Ok(None) };
    let bodies = env.bodies().map(|b| b.body_shapes()).ok_or_else(|| {
        UsageError(format!(
            "{flag}: env '{env_name}' cannot describe its bodies (only Cassie can so far)"
        ))
    })?;
    Ok(Some(Replay::new(env_name, env.policy_dt(), bodies)))
}

/// Checks `args` against the policy and its env, as [`run_eval`] does before its first step.
fn prepare_eval(args: &EvalOptions) -> Result<PreparedEval> {
    let loaded = load(&args.source)?;
    let env_owned = loaded.env.clone();
    let env_name = env_owned.as_str();
    let mut env_config = loaded.env_config.clone();
    let physics = apply_physics(&args.physics, env_name, &mut env_config)?;
    let mut env = envs::make(env_name, &env_config)?;
    if (env.observation_size(), env.action_size()) != (loaded.net.obs_dim, loaded.net.act_dim) {
        bail!(
            "{} {}: env '{env_name}' now has obs {} / act {}, the policy was trained with {} / {}",
            loaded.flag,
            loaded.file.display(),
            env.observation_size(),
            env.action_size(),
            loaded.net.obs_dim,
            loaded.net.act_dim
        );
    }
    if let Some(pd) = &loaded.pd {
        env.drive_targets(pd)
            .map_err(|_| UsageError(format!("--onnx: env '{env_name}' cannot take PD targets")))?;
    }
    let course = walking_controls(env.as_mut(), env_name, args)?;
    let replay = picture(env.as_ref(), env_name, args)?;
    // A course runs to its end unless --traj-len says otherwise.
    let traj_len =
        args.traj_len.or(course.as_ref().map(|(_, steps)| *steps)).unwrap_or(loaded.traj_len);
    if args.record.is_some() {
        check_recording_size(args.episodes, traj_len)?;
    }
    let trace = match args.trace {
        Some(_) => Some(trace::Trace::new(env.as_ref(), args.episodes, traj_len)?),
        None => None,
    };
    Ok(PreparedEval {
        args: args.clone(),
        env_name: env_owned,
        env,
        policy: loaded.policy,
        checkpoint: loaded.file,
        note: loaded.note,
        physics,
        course,
        replay,
        trace,
        traj_len,
    })
}
