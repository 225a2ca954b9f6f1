//! Flags of `gait eval`, `gait play`, `gait check`, `gait bench` and `gait plot`, and the typed options they become.

use std::path::PathBuf;

use clap::Args;

use super::train::{cassie_number, EnvSettings, SettingFlags};
use crate::bench::{BenchEnvOptions, BenchOptimizeOptions, BENCH_ACT, BENCH_OBS, BENCH_STEPS};
use crate::check::{CheckOptions, CheckSim, CheckTask, TASK_COMMANDS, TASK_COURSE};
use crate::config::{TrainConfig, UsageError};
use crate::envs::cassie::SimKind;
use crate::envs::{PhysicsOverride, TerrainArg};
use crate::eval::{CourseSegment, EvalOptions, Source};
use crate::export::{ActorCheckpoint, ExportOptions, Format};
use crate::play::PlayOptions;
use crate::plot::PlotOptions;
use crate::policies::Arch;
use crate::settings::{non_negative_f32, positive_usize, Range};

/// `--command`'s comma-separated numbers, parsed as one value so that a leading minus
/// (`-0.3,0,0`) is not taken for a flag; the count is checked with the env.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandValues(pub Vec<f32>);

impl std::str::FromStr for CommandValues {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        s.split(',')
            .map(|v| v.trim().parse::<f32>())
            .collect::<Result<Vec<_>, _>>()
            .map(CommandValues)
            .map_err(|_| format!("'{s}': numbers x,y,turn, e.g. 0.5,0,0.3"))
    }
}

/// Which policy `gait eval` and `gait check` run.
#[derive(Debug, Clone, Args)]
pub struct PolicyFlags {
    /// Run directory (holds experiment.json and the checkpoints).
    #[arg(long, required_unless_present = "onnx", conflicts_with = "onnx")]
    pub path: Option<PathBuf>,
    /// Instead of a run: a policy exported with `gait export --format onnx`, run by ONNX
    /// Runtime, its PD targets built from its sidecar FILE.onnx.json alone.
    #[arg(long, conflicts_with = "latest")]
    pub onnx: Option<PathBuf>,
    /// Use the latest weights instead of the best-eval ones.
    #[arg(long)]
    pub latest: bool,
    /// Use iteration N's weights (`actor_N.safetensors`, kept every `--save-freq` iterations in
    /// training: the weights row N of progress.csv and selection.csv scored) instead of the
    /// best-eval ones.
    #[arg(long, conflicts_with_all = ["latest", "onnx"], value_name = "N")]
    pub iteration: Option<u64>,
}

impl PolicyFlags {
    /// The policy these flags name.
    pub fn source(self) -> Source {
        let weights = ActorCheckpoint::from_flags(self.latest, self.iteration);
        match (self.path, self.onnx) {
            (_, Some(model)) => Source::Onnx(model),
            (Some(path), None) => Source::Run { path, weights },
            // clap requires one of the two.
            (None, None) => Source::Run { path: PathBuf::new(), weights },
        }
    }
}

/// Flags of `gait eval`.
#[derive(Debug, Clone, Args)]
pub struct EvalFlags {
    /// The policy.
    #[command(flatten)]
    pub policy: PolicyFlags,
    /// Episodes to run.
    #[arg(long, default_value = "10", value_parser = positive_usize)]
    pub episodes: usize,
    /// Maximum episode length (default: the run's --traj-len).
    #[arg(long, value_parser = positive_usize)]
    pub traj_len: Option<usize>,
    /// Fixed command `x,y,turn` for envs that take commands (`--command -0.3,0,0` walks
    /// backward).
    #[arg(long, allow_hyphen_values = true, value_name = "X,Y,TURN")]
    pub command: Option<CommandValues>,
    /// A scripted course instead of one command: legs SECONDS:X,Y,TURN run in order, e.g.
    /// `--course 3:1,0,0 3:0,0,0.4 3:0,0.2,0 2:0,0,0` (episodes last the whole course unless
    /// --traj-len cuts them). `@KIND[:DIFFICULTY]` after a leg lays that ground from where the
    /// legs before it walk to along the start heading, e.g. `2:0.5,0,0 8:0.5,0,0@upstairs:0.67`.
    #[arg(long, num_args = 1.., conflicts_with = "command", allow_negative_numbers = true, value_name = "SECONDS:X,Y,TURN")]
    pub course: Option<Vec<CourseSegment>>,
    /// Seeds the episodes' initial states.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Also render the first episode as an animated GIF (side view following the pelvis),
    /// for envs that can describe their bodies (Cassie).
    #[arg(long)]
    pub gif: Option<PathBuf>,
    /// Also write every episode as a self-contained 3D replay page (HTML, works offline), for
    /// envs that can describe their bodies (Cassie).
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Also write every step as CSV (`episode, step, obs_*, action_*, reward, done`, and the
    /// pelvis's world pose at the step's start for Cassie): a golden trace to check a deployed
    /// controller against. With --onnx and PD targets, the actions are the targets
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Push the robot every 2-5 s, in a random horizontal direction, by a speed change of up to
    /// this (m/s, uniform; an impulse of 33.3 kg times it), as training's --push does, to
    /// measure robustness (Cassie).
    #[arg(long, value_parser = cassie_number("push"))]
    pub push: Option<f64>,
    /// Every push exactly --push instead (the harder check).
    #[arg(long, requires = "push")]
    pub push_exact: bool,
    /// Add Gaussian noise of this std to every action, as training samples around the mean
    /// (the Cassie preset's --std is 0.2): how the policy walks with the noise it trained with.
    /// Seeded by --seed. 0: the deterministic policy.
    #[arg(long, default_value_t = 0.0, value_parser = action_noise, allow_negative_numbers = true)]
    pub action_noise: f32,
    /// The physics, floor, sensors and ground.
    #[command(flatten)]
    pub physics: PhysicsFlags,
}

impl EvalFlags {
    /// The typed options.
    pub fn options(self) -> EvalOptions {
        let source = self.policy.source();
        EvalOptions {
            source,
            episodes: self.episodes,
            traj_len: self.traj_len,
            command: self.command.map(|c| c.0),
            course: self.course,
            seed: self.seed,
            gif: self.gif,
            record: self.record,
            trace: self.trace,
            physics: self.physics.options(),
            push: self.push.map(|v| v as f32),
            push_exact: self.push_exact,
            action_noise: self.action_noise,
        }
    }
}

/// The physics a Cassie policy runs on in `gait eval` and `gait play`, when not the run's.
#[derive(Debug, Clone, Args)]
pub struct PhysicsFlags {
    /// Run a Cassie policy on this physics instead of the one it trained on: `--sim mujoco`
    /// on a rapier-trained run is the sim-to-sim check on the lab's own model.
    #[arg(long, value_enum, help_heading = "Physics (Cassie)")]
    pub sim: Option<SimKind>,
    /// Physics timestep (s) [default: the run's, or with another --sim that backend's default].
    #[arg(long, value_parser = cassie_number("sim_dt"), help_heading = "Physics (Cassie)")]
    pub sim_dt: Option<f64>,
    /// The floor's friction as a factor of the model's own (0.5: half as grippy) [default:
    /// the run's, 1]: whether a gait walks or slides.
    #[arg(long, value_parser = cassie_number("friction"), help_heading = "Physics (Cassie)")]
    pub friction: Option<f64>,
    /// Sensing latency (s): the policy sees the robot as it was this long before each step's
    /// end, as on hardware, where the estimator lags (at most one policy step).
    #[arg(long, value_parser = cassie_number("eval_latency"), allow_negative_numbers = true, help_heading = "Physics (Cassie)")]
    pub latency: Option<f64>,
    /// Sensor noise at this multiple of the reference's levels (1: its σ), with a constant
    /// IMU bias per episode where the run trained with one.
    #[arg(long, value_parser = cassie_number("eval_noise"), allow_negative_numbers = true, help_heading = "Physics (Cassie)")]
    pub sensor_noise: Option<f64>,
    /// The ground: `KIND[:DIFFICULTY]`, KIND flat, rough, slope, stairs, flights, upstairs or
    /// downstairs (the check's flights of 8 with 30 cm treads), DIFFICULTY in [0, 1] (0.5;
    /// risers 5 + 15·D cm): a terrain drawn per episode from --seed along its heading, the same
    /// on both models [default: flat]
    #[arg(long, help_heading = "Physics (Cassie)")]
    pub terrain: Option<TerrainArg>,
}

impl PhysicsFlags {
    /// The typed override.
    pub fn options(self) -> PhysicsOverride {
        PhysicsOverride {
            sim: self.sim,
            sim_dt: self.sim_dt,
            friction: self.friction,
            latency: self.latency,
            sensor_noise: self.sensor_noise,
            terrain: self.terrain,
        }
    }
}

/// Flags of `gait play`.
#[derive(Debug, Clone, Args)]
pub struct PlayFlags {
    /// The policy.
    #[command(flatten)]
    pub policy: PolicyFlags,
    /// The port to serve the page on (0: any free one; the address printed names it).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// The address to listen on: the loopback unless you want other machines to watch (and
    /// the first page anywhere to drive).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// Simulated seconds per second: 1 real time, 0.25 slow motion (0.05-4).
    #[arg(long, default_value_t = 1.0, value_parser = play_speed)]
    pub speed: f64,
    /// Seeds the episodes' initial states and grounds.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The physics, floor, sensors and starting ground.
    #[command(flatten)]
    pub physics: PhysicsFlags,
}

impl PlayFlags {
    /// The typed options.
    pub fn options(self) -> PlayOptions {
        PlayOptions {
            source: self.policy.source(),
            physics: self.physics.options(),
            host: self.host,
            port: self.port,
            speed: self.speed,
            seed: self.seed,
        }
    }
}

/// `--speed`: a finite factor in [`crate::play::SPEED_RANGE`].
fn play_speed(s: &str) -> Result<f64, String> {
    let range = crate::play::SPEED_RANGE;
    match s.trim().parse::<f64>() {
        Ok(v) if range.contains(&v) => Ok(v),
        _ => Err(format!(
            "'{s}': a speed factor from {} (slow motion) to {} (fast forward)",
            range.start(),
            range.end()
        )),
    }
}

/// Flags of `gait check`.
#[derive(Debug, Clone, Args)]
pub struct CheckFlags {
    /// The policy.
    #[command(flatten)]
    pub policy: PolicyFlags,
    /// A command X,Y,TURN to check, once per command (`--command 1,0,0 --command -0.3,0,0`)
    /// [default: the walking task's ten: 1,0,0 0.5,0,0 -0.3,0,0 0,0.2,0 0,-0.2,0 0,0,0.4
    /// 0,0,-0.4 0.6,0,0.3 0.6,0,-0.3 0,0,0].
    #[arg(long = "command", allow_hyphen_values = true, value_name = "X,Y,TURN")]
    pub commands: Option<Vec<CommandValues>>,
    /// A scripted course instead of held commands, judged leg by leg (each leg from a second
    /// in): legs SECONDS:X,Y,TURN as `gait eval --course` takes them; alone, the task's 33 s
    /// course (4:1,0,0 4:0.6,0,0.3 4:0,0,-0.4 3:0,0.2,0 4:-0.3,0,0 3:0,-0.2,0 4:0.5,0,-0.3
    /// 4:0,0,0.4 3:0,0,0).
    #[arg(long, num_args = 0.., conflicts_with = "commands", allow_negative_numbers = true, value_name = "SECONDS:X,Y,TURN")]
    pub course: Option<Vec<CourseSegment>>,
    /// The terrain task instead: stairs up and down (15 cm risers, 30 cm treads, flights of
    /// 8), random flights of 10-17 cm, 10° slopes at 0.5 m/s, and the ten commands on ±4 cm
    /// rough ground, each cell judged by its ground's rule (the bar: --episodes 10).
    #[arg(long, conflicts_with_all = ["commands", "course", "terrain"])]
    pub terrains: bool,
    /// The models, each command checked on each (MuJoCo at the lab model's 0.5 ms, rapier at
    /// its 2 ms).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "mujoco,rapier")]
    pub sims: Vec<CheckSim>,
    /// Episodes per command and model (per model, for a course).
    #[arg(long, default_value = "5", value_parser = positive_usize)]
    pub episodes: usize,
    /// Steps per episode (50 per second) [default: 1000, or the whole course]; a held
    /// command's episode that ends sooner fell.
    #[arg(long, value_parser = positive_usize)]
    pub traj_len: Option<usize>,
    /// Seeds the episodes' initial states (and pushes), as `gait eval --seed`.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Push the robot every 2-5 s by a speed change of up to this (m/s), as `gait eval --push`.
    #[arg(long, value_parser = cassie_number("push"))]
    pub push: Option<f64>,
    /// Every push exactly --push instead.
    #[arg(long, requires = "push")]
    pub push_exact: bool,
    /// The floor's friction as a factor of each model's own, as `gait eval --friction`.
    #[arg(long, value_parser = cassie_number("friction"))]
    pub friction: Option<f64>,
    /// Sensing latency (s), as `gait eval --latency`.
    #[arg(long, value_parser = cassie_number("eval_latency"), allow_negative_numbers = true)]
    pub latency: Option<f64>,
    /// Sensor noise at this multiple of the reference's levels, as `gait eval --sensor-noise`.
    #[arg(long, value_parser = cassie_number("eval_noise"), allow_negative_numbers = true)]
    pub sensor_noise: Option<f64>,
    /// The ground, `KIND[:DIFFICULTY]`, as `gait eval --terrain`.
    #[arg(long)]
    pub terrain: Option<TerrainArg>,
    /// Cells evaluated at once [default: the cores available]; the table is the same for any
    /// count.
    #[arg(long, value_parser = positive_usize)]
    pub workers: Option<usize>,
}

impl CheckFlags {
    /// The typed options; a command of other than three numbers is a usage error.
    pub fn options(self) -> Result<CheckOptions, UsageError> {
        let source = self.policy.source();
        let task = match (self.course, self.commands) {
            _ if self.terrains => CheckTask::Terrain,
            (Some(legs), _) if legs.is_empty() => CheckTask::Course(
                TASK_COURSE
                    .iter()
                    .map(|&(seconds, command)| CourseSegment { seconds, command, ground: None })
                    .collect(),
            ),
            (Some(legs), _) => CheckTask::Course(legs),
            (None, None) => CheckTask::Commands(TASK_COMMANDS.to_vec()),
            (None, Some(values)) => CheckTask::Commands(
                values
                    .into_iter()
                    .map(|CommandValues(v)| {
                        <[f32; 3]>::try_from(v.as_slice()).map_err(|_| {
                            UsageError(format!(
                                "--command takes 3 values x,y,turn, got {}",
                                v.len()
                            ))
                        })
                    })
                    .collect::<Result<_, _>>()?,
            ),
        };
        let workers = self
            .workers
            .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
        Ok(CheckOptions {
            source,
            task,
            sims: self.sims,
            episodes: self.episodes,
            traj_len: self.traj_len,
            seed: self.seed,
            push: self.push.map(|v| v as f32),
            push_exact: self.push_exact,
            friction: self.friction,
            latency: self.latency,
            sensor_noise: self.sensor_noise,
            terrain: self.terrain,
            workers,
        })
    }
}

/// `--action-noise`: a finite std in [0, 10].
fn action_noise(s: &str) -> Result<f32, String> {
    let range = Range::Within { lo: 0.0, hi: 10.0, what: "a std in [0, 10]" };
    range.parse(s).map(|v| v as f32)
}

/// Flags of `gait export`.
#[derive(Debug, Clone, Args)]
pub struct ExportFlags {
    /// Run directory (holds experiment.json and the checkpoints).
    #[arg(long)]
    pub path: PathBuf,
    /// The best-eval weights (the default).
    #[arg(long, conflicts_with = "latest")]
    pub best: bool,
    /// The latest weights instead of the best-eval ones.
    #[arg(long)]
    pub latest: bool,
    /// Iteration N's weights (`actor_N.safetensors`, `--save-freq` in training: those row N of
    /// progress.csv scored).
    #[arg(long, conflicts_with_all = ["latest", "best"], value_name = "N")]
    pub iteration: Option<u64>,
    /// ONNX (IR 8, opset 17; the primary format) or TorchScript.
    #[arg(long, value_enum, default_value = "onnx")]
    pub format: Format,
    /// The model file (.onnx or .pt); its controller description goes beside it as FILE.onnx.json
    /// (FILE.pt.json).
    #[arg(long)]
    pub out: PathBuf,
    /// Replace an existing FILE and FILE.json.
    #[arg(long)]
    pub force: bool,
}

impl ExportFlags {
    /// The typed options.
    pub fn options(self) -> ExportOptions {
        ExportOptions {
            path: self.path,
            weights: ActorCheckpoint::from_flags(self.latest, self.iteration),
            format: self.format,
            out: self.out,
            force: self.force,
        }
    }
}

/// Flags of `gait plot`.
#[derive(Debug, Clone, Args)]
pub struct PlotFlags {
    /// Run directories, in training order (a run, then its --previous continuations).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output PNG (default: progress.png in the last run directory).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Draw each argument as its own curve (train curves), to compare runs; `RUN+CONT` joins.
    #[arg(long)]
    pub overlay: bool,
}

impl PlotFlags {
    /// The typed options.
    pub fn options(self) -> PlotOptions {
        PlotOptions { paths: self.paths, out: self.out, overlay: self.overlay }
    }
}

/// Flags of `gait bench env`.
#[derive(Debug, Clone, Args)]
pub struct BenchEnvFlags {
    /// Environment to step.
    #[arg(long)]
    pub env: String,
    /// How long to run, in seconds (at most a day).
    #[arg(long, default_value_t = 5.0, value_parser = bench_seconds)]
    pub seconds: f64,
    /// Run exactly this many policy steps instead of `--seconds`: a fixed workload, so
    /// instruction counts (`valgrind --tool=callgrind`) compare between builds.
    #[arg(long, value_parser = positive_usize)]
    pub steps: Option<usize>,
    /// The env sections' settings, as in `gait train ppo`.
    #[command(flatten)]
    pub settings: SettingFlags<EnvSettings>,
}

impl BenchEnvFlags {
    /// The options, env settings = defaults with the typed env flags on top (the same leaf
    /// setting `gait train ppo` uses).
    pub fn options(self) -> anyhow::Result<BenchEnvOptions> {
        crate::envs::spec(&self.env).map_err(|e| UsageError(e.to_string()))?;
        let env_config = TrainConfig::default()
            .with_leaves(&self.settings.typed)
            .map_err(|e| UsageError(e.to_string()))?
            .env;
        Ok(BenchEnvOptions { env: self.env, env_config, seconds: self.seconds, steps: self.steps })
    }
}

/// Flags of `gait bench optimize`.
#[derive(Debug, Clone, Args)]
pub struct BenchOptimizeFlags {
    /// Network architecture.
    #[arg(long, value_enum, default_value_t = Arch::Ff)]
    pub arch: Arch,
    /// Hidden layer widths, e.g. 256,256.
    #[arg(long, default_value = "256,256", value_delimiter = ',', value_parser = positive_usize)]
    pub layers: Vec<usize>,
    /// Minibatch size in states.
    #[arg(long, default_value = "64", value_parser = positive_usize)]
    pub batch_size: usize,
    /// Mirror-loss coefficient (0: off).
    #[arg(long, default_value_t = 0.0, value_parser = non_negative_f32)]
    pub mirror: f64,
}

/// `bench env --seconds`: in (0, 86400].
fn bench_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!("'{s}' is not a duration in (0, 86400] seconds")),
    }
}

impl BenchOptimizeFlags {
    /// The options, checked as `gait train ppo` checks the same settings (LSTM widths, a
    /// minibatch larger than the buffer, the networks' and the buffer's memory).
    pub fn options(self) -> anyhow::Result<BenchOptimizeOptions> {
        let mut config = TrainConfig::default();
        config.net.arch = self.arch;
        config.net.layers = self.layers.clone();
        config.ppo_mut().batch_size = self.batch_size;
        config.ppo_mut().mirror = self.mirror;
        config.sampler.num_steps = BENCH_STEPS;
        config.validate()?;
        let spec = config.net.spec(&config.run.env, BENCH_OBS, BENCH_ACT)?;
        let memory = crate::algos::resources::available_memory();
        crate::algos::resources::check_resources(&spec, 1, 1, BENCH_STEPS, memory)?;
        Ok(BenchOptimizeOptions {
            arch: self.arch,
            layers: self.layers,
            batch_size: self.batch_size,
            mirror: self.mirror,
        })
    }
}
