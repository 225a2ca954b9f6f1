//! `gait check`: the walking task's command check (issue 27). Every command on every physics
//! model is a *cell*: `gait eval --command C` for a few long episodes, judged as the task
//! judges it: no fall, and in every episode each speed axis within 0.15 m/s of the command
//! (0.1 m/s when standing) and the yaw rate within 0.1 rad/s
//! (`crate::algos::tracking::episode_error`, the same judge as training's selection).
//!
//! Why in the binary and not a script around `gait eval`: one definition of "within" shared
//! with the selection, numbers judged unrounded, and the cells spread over the cores (each
//! cell is an independent evaluation with its own seeds, so the table is the same for any
//! `--workers`).

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use anyhow::{Context, Result};
use clap::ValueEnum;

use crate::algos::tracking::{episode_error, EvalEpisode};
use crate::config::UsageError;
use crate::course::LegOutcome;
use crate::envs::cassie::SimKind;
use crate::envs::PhysicsOverride;
use crate::eval::{check_options, env_of, run_eval, CourseSegment, EvalOptions, Source};

mod preamble;
mod terrain;
use preamble::write_preamble;
pub use terrain::{GroundOutcome, Success, TerrainCase, TERRAIN_CASES, TERRAIN_HEADER};

/// The ten commands of the walking task (issue 27's "Done means"), `[x m/s, y m/s, turn rad/s]`.
pub const TASK_COMMANDS: [[f32; 3]; 10] = [
    [1.0, 0.0, 0.0],
    [0.5, 0.0, 0.0],
    [-0.3, 0.0, 0.0],
    [0.0, 0.2, 0.0],
    [0.0, -0.2, 0.0],
    [0.0, 0.0, 0.4],
    [0.0, 0.0, -0.4],
    [0.6, 0.0, 0.3],
    [0.6, 0.0, -0.3],
    [0.0, 0.0, 0.0],
];

/// A physics model a check runs: one model per cell, never the mixed draw of training.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckSim {
    /// The lab's MuJoCo model at its own 0.5 ms timestep.
    Mujoco,
    /// gait's rapier model at its default timestep (2 ms).
    Rapier,
}

impl CheckSim {
    /// MuJoCo runs at the lab model's own timestep (`cassie_fast.xml`'s 0.5 ms) whatever the
    /// run trained at, so a check measures the policy on the model as the lab runs it.
    /// The check's floor and sensing (`base`) on this model.
    fn physics(self, base: PhysicsOverride) -> PhysicsOverride {
        match self {
            Self::Mujoco => PhysicsOverride {
                sim: Some(SimKind::Mujoco),
                sim_dt: Some(SimKind::Mujoco.default_dt()),
                ..base
            },
            Self::Rapier => PhysicsOverride { sim: Some(SimKind::Rapier), sim_dt: None, ..base },
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Mujoco => "mujoco",
            Self::Rapier => "rapier",
        }
    }
}

/// What `gait check` runs (flags: `crate::cli::CheckFlags`).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckOptions {
    /// The policy: a run's checkpoint, or an exported ONNX file.
    pub source: Source,
    /// What each model runs: held commands, or a course judged leg by leg.
    pub task: CheckTask,
    /// The models, each cell one of them.
    pub sims: Vec<CheckSim>,
    /// Episodes per command (per model, for a course).
    pub episodes: usize,
    /// Steps per episode (None: [`COMMAND_STEPS`] for held commands, the whole course).
    pub traj_len: Option<usize>,
    /// Seeds the episodes, as `gait eval --seed`.
    pub seed: u64,
    /// Pushes of up to this speed change (m/s), as `gait eval --push`.
    pub push: Option<f32>,
    /// Every push exactly `push`.
    pub push_exact: bool,
    /// The floor's friction factor, as `gait eval --friction` (None: the run's).
    pub friction: Option<f64>,
    /// The ground, as `gait eval --terrain` (None: flat).
    pub terrain: Option<crate::envs::TerrainArg>,
    /// Sensing latency (s), as `gait eval --latency` (None: none).
    pub latency: Option<f64>,
    /// Sensor noise and IMU bias in multiples of the reference's levels, as `gait eval
    /// --sensor-noise` (None: exact sensors).
    pub sensor_noise: Option<f64>,
    /// Evaluations run at once (threads, one libtorch thread each).
    pub workers: usize,
}

/// What a check runs on each model.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckTask {
    /// Each command held for whole episodes: one cell per command and model.
    Commands(Vec<[f32; 3]>),
    /// One course per episode, as `gait eval --course` runs it: one cell per leg and model,
    /// judged on the leg's means from a second into it ([`crate::course::SETTLE_SECONDS`]).
    Course(Vec<CourseSegment>),
    /// The terrain task ([`TERRAIN_CASES`]): one cell per ground, command and model.
    Terrain,
}

/// Steps of a held-command episode unless `--traj-len` says otherwise: 20 s.
pub const COMMAND_STEPS: usize = 1000;

/// The course of `gait check --course` without legs (and of `scripts/check_course.sh`): 33 s,
/// changing command every 3-4 s: walk, walking turn, turn in place, sidestep both ways,
/// backward, slow walking turn, turn in place the other way, stop.
pub const TASK_COURSE: [(f64, [f32; 3]); 9] = [
    (4.0, [1.0, 0.0, 0.0]),
    (4.0, [0.6, 0.0, 0.3]),
    (4.0, [0.0, 0.0, -0.4]),
    (3.0, [0.0, 0.2, 0.0]),
    (4.0, [-0.3, 0.0, 0.0]),
    (3.0, [0.0, -0.2, 0.0]),
    (4.0, [0.5, 0.0, -0.3]),
    (4.0, [0.0, 0.0, 0.4]),
    (3.0, [0.0, 0.0, 0.0]),
];

/// One cell: a command (or a course's leg) on a model, over its episodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// The model.
    pub sim: CheckSim,
    /// The course leg (None: a held command).
    pub leg: Option<usize>,
    /// The command, `[x, y, turn]`.
    pub command: [f32; 3],
    /// Episodes that fell (in this leg, for a course).
    pub falls: usize,
    /// Episodes run.
    pub episodes: usize,
    /// Episodes with means: all for a held command; for a leg, those that reached its settled
    /// part.
    pub reached: usize,
    /// Means over those episodes of each one's mean forward speed, lateral speed (m/s) and yaw
    /// rate (rad/s).
    pub mean: [f64; 3],
    /// The worst episode's |mean − command| on each of the three axes.
    pub worst: [f64; 3],
    /// Episodes a simulation blow-up cut (neither falls nor judged; the cell is not within).
    pub cuts: usize,
    /// Every episode reached it, none fell or was cut, every one within the task's bounds
    /// (a terrain cell: enough episodes succeeded, none was cut).
    pub within: bool,
    /// A terrain cell's ground and successes.
    pub ground: Option<GroundOutcome>,
}

/// One episode's part in a cell: its means (None: it did not reach the leg) and a fall.
struct Sample {
    means: Option<EvalEpisode>,
    fell: bool,
    /// A simulation blow-up cut the episode.
    cut: bool,
}

impl Cell {
    /// Judges a cell from its episodes' samples.
    fn judge(
        sim: CheckSim,
        leg: Option<usize>,
        command: [f32; 3],
        samples: &[Sample],
    ) -> Result<Self> {
        let reached: Vec<&EvalEpisode> = samples.iter().filter_map(|s| s.means.as_ref()).collect();
        let falls = samples.iter().filter(|s| s.fell).count();
        let cuts = samples.iter().filter(|s| s.cut).count();
        let mut cell = Self {
            sim,
            leg,
            command,
            falls,
            cuts,
            episodes: samples.len(),
            reached: reached.len(),
            mean: [0.0; 3],
            worst: [0.0; 3],
            within: falls == 0
                && cuts == 0
                && !samples.is_empty()
                && reached.len() == samples.len(),
            ground: None,
        };
        for e in &reached {
            // Falls are counted above; the judge sees each episode's speeds.
            let error = episode_error(e, 0).context(
                "the env reports no command or speeds: only walking envs can be checked",
            )?;
            cell.within &= error <= 1.0;
            for (axis, name) in ["forward_speed", "lateral_speed", "yaw_rate"].iter().enumerate() {
                let v = e.metric(name).unwrap_or(f64::NAN);
                cell.mean[axis] += v / reached.len() as f64;
                cell.worst[axis] = cell.worst[axis].max((v - command[axis] as f64).abs());
            }
        }
        Ok(cell)
    }

    /// A held command's cell: an episode shorter than `len` steps fell, unless a simulation
    /// blow-up cut it (then it is counted apart and not judged).
    fn of_command(
        sim: CheckSim,
        command: [f32; 3],
        episodes: &[EvalEpisode],
        len: usize,
    ) -> Result<Self> {
        let samples: Vec<Sample> = episodes
            .iter()
            .map(|e| Sample {
                means: (!e.cut).then(|| e.clone()),
                fell: e.steps < len && !e.cut,
                cut: e.cut,
            })
            .collect();
        Self::judge(sim, None, command, &samples)
    }

    /// A terrain cell: the speeds as a held command's, within when enough episodes succeeded
    /// on `case`'s ground and none was cut.
    fn of_terrain(
        sim: CheckSim,
        case: &TerrainCase,
        command: [f32; 3],
        episodes: &[EvalEpisode],
        len: usize,
        dt: f32,
    ) -> Result<Self> {
        let mut cell = Self::of_command(sim, command, episodes, len)?;
        let successes =
            episodes.iter().filter(|e| case.succeeds(e, e.steps < len && !e.cut, dt)).count();
        let walked: f64 = episodes
            .iter()
            .map(|e| e.metric("forward_speed").unwrap_or(0.0) * e.steps as f64 * dt as f64)
            .sum::<f64>()
            / episodes.len().max(1) as f64;
        let needed = case.needed(episodes.len());
        cell.within = cell.cuts == 0 && !episodes.is_empty() && successes >= needed;
        let t = case.terrain;
        let ground = format!("{}:{}", t.kind.name(), (t.difficulty * 1000.0).round() / 1000.0);
        cell.ground = Some(GroundOutcome { ground, successes, needed, walked });
        Ok(cell)
    }

    /// A course's cells, one per leg, from each episode's leg outcomes.
    fn of_course(sim: CheckSim, episodes: &[Vec<LegOutcome>]) -> Result<Vec<Self>> {
        let legs = episodes.first().map_or(0, Vec::len);
        (0..legs)
            .map(|k| {
                // A cut episode's legs after the cut are not reached (not falls).
                let command = episodes[0][k].command;
                let samples: Vec<Sample> = episodes
                    .iter()
                    .map(|legs| {
                        let leg = &legs[k];
                        let means = leg.means.clone().map(|metrics| EvalEpisode {
                            command: Some(command),
                            metrics,
                            steps: 0,
                            cut: false,
                        });
                        Sample { means, fell: leg.fell, cut: false }
                    })
                    .collect();
                Self::judge(sim, Some(k), command, &samples)
            })
            .collect()
    }
}

/// `1,0,0`, `-0.3,0,0`: a command as `--command` takes it.
struct CommandText([f32; 3]);

impl fmt::Display for CommandText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{}", self.0[0], self.0[1], self.0[2])
    }
}

impl fmt::Display for Cell {
    /// One row of the table (the columns of [`COMMAND_HEADER`] or [`COURSE_HEADER`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let falls = format!("{}/{:<4}", self.falls, self.episodes);
        let command = CommandText(self.command).to_string();
        let ok = match (self.within, self.cuts) {
            (true, _) => "yes".to_string(),
            (false, 0) => "no".to_string(),
            (false, n) => format!("no ({n} cut by a simulation blow-up)"),
        };
        match (&self.ground, self.leg) {
            (Some(ground), _) => {
                write!(f, "{:<7} {command:<12} {falls} {ground}", self.sim.name())?
            }
            (None, None) => write!(f, "{:<7} {command:<12} {falls}", self.sim.name())?,
            (None, Some(leg)) => {
                let reached = format!("{}/{:<6}", self.reached, self.episodes);
                write!(f, "{:<7} {leg:<4} {command:<14} {falls} {reached}", self.sim.name())?;
                if self.reached == 0 {
                    return write!(f, " not reached{:18} {ok}", "");
                }
            }
        }
        for axis in 0..3 {
            write!(f, " {:6.3} ({:.3})  ", self.mean[axis], self.worst[axis])?;
        }
        write!(f, " {ok}")
    }
}

/// The table's header for held commands.
pub const COMMAND_HEADER: &str =
    "sim     command      falls  forward (err)    lateral (err)    yaw rate (err)   ok";
/// The table's header for a course.
pub const COURSE_HEADER: &str = "sim     leg  command        falls  reached  forward (err)    \
                                 lateral (err)    yaw rate (err)   ok";

/// What a check measured: its cells in order (model by model, commands or legs in order).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    /// The cells that completed, in order.
    pub cells: Vec<Cell>,
    /// Episodes run and of those, episodes that fell.
    pub episodes: usize,
    /// See `episodes`.
    pub falls: usize,
    /// Episodes a simulation blow-up cut (not falls).
    pub cuts: usize,
    /// Ctrl-C or SIGTERM ended the check early: `cells` holds those that completed.
    pub interrupted: bool,
}

impl CheckReport {
    /// Cells within the task's bounds.
    pub fn within(&self) -> usize {
        self.cells.iter().filter(|c| c.within).count()
    }

    /// Every cell asked for ran and is within.
    pub fn passed(&self) -> bool {
        !self.interrupted && self.within() == self.cells.len()
    }

    /// The last line: cells within, falls over all episodes (and blow-up cuts, if any).
    pub fn summary(&self) -> String {
        let cuts = match self.cuts {
            0 => String::new(),
            n => format!("; {n} cut by a simulation blow-up (not falls, not within)"),
        };
        format!(
            "within: {} of {} cells; falls: {} of {} episodes{cuts}",
            self.within(),
            self.cells.len(),
            self.falls,
            self.episodes
        )
    }
}

/// One evaluation of a check: a held command, or the course, on one model.
#[derive(Debug, Clone, Copy)]
enum Job<'a> {
    Command(CheckSim, [f32; 3]),
    Course(CheckSim, &'a [CourseSegment]),
    Terrain(CheckSim, &'static TerrainCase, [f32; 3]),
}

impl Job<'_> {
    fn sim(self) -> CheckSim {
        match self {
            Self::Command(sim, _) | Self::Course(sim, _) | Self::Terrain(sim, ..) => sim,
        }
    }

    /// The evaluation, as `gait eval` would run it.
    fn options(self, opts: &CheckOptions) -> EvalOptions {
        let (command, course, traj_len) = match self {
            Self::Command(_, c) => {
                (Some(c.to_vec()), None, Some(opts.traj_len.unwrap_or(COMMAND_STEPS)))
            }
            Self::Course(_, legs) => (None, Some(legs.to_vec()), opts.traj_len),
            Self::Terrain(_, case, c) => {
                (Some(c.to_vec()), None, Some(opts.traj_len.unwrap_or(case.steps)))
            }
        };
        let terrain = match self {
            Self::Terrain(_, case, _) => Some(case.terrain),
            Self::Command(..) | Self::Course(..) => opts.terrain,
        };
        EvalOptions {
            source: opts.source.clone(),
            episodes: opts.episodes,
            traj_len,
            command,
            course,
            seed: opts.seed,
            gif: None,
            record: None,
            trace: None,
            physics: self.sim().physics(PhysicsOverride {
                friction: opts.friction,
                latency: opts.latency,
                sensor_noise: opts.sensor_noise,
                terrain,
                ..PhysicsOverride::default()
            }),
            push: opts.push,
            push_exact: opts.push_exact,
            action_noise: 0.0,
        }
    }

    /// Runs the evaluation and judges its cells; also whether a stop request cut it short.
    fn run(self, opts: &CheckOptions) -> Result<Judged> {
        let eval = self.options(opts);
        let summary = run_eval(&eval, &mut std::io::sink())?;
        let cells = match self {
            Self::Command(sim, command) => {
                let len = eval.traj_len.unwrap_or(COMMAND_STEPS);
                vec![Cell::of_command(sim, command, &summary.episodes, len)?]
            }
            Self::Course(sim, _) => Cell::of_course(sim, &summary.course_episodes)?,
            Self::Terrain(sim, case, command) => {
                let len = eval.traj_len.unwrap_or(case.steps);
                let episodes = &summary.episodes;
                vec![Cell::of_terrain(sim, case, command, episodes, len, summary.policy_dt)?]
            }
        };
        let falls = match self {
            Self::Command(..) | Self::Terrain(..) => cells.iter().map(|c| c.falls).sum(),
            Self::Course(..) => {
                summary.course_episodes.iter().filter(|e| e.iter().any(|l| l.fell)).count()
            }
        };
        Ok(Judged {
            cells,
            episodes: summary.episodes.len(),
            falls,
            cuts: summary.blowups,
            interrupted: summary.interrupted,
        })
    }
}

impl fmt::Display for Job<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Command(sim, c) => write!(f, "{} {}", sim.name(), CommandText(*c)),
            Self::Course(sim, _) => write!(f, "{} course", sim.name()),
            Self::Terrain(sim, case, c) => {
                write!(f, "{} {} {}", sim.name(), case.terrain.kind.name(), CommandText(*c))
            }
        }
    }
}

/// A job's cells and episode counts.
struct Judged {
    cells: Vec<Cell>,
    episodes: usize,
    falls: usize,
    cuts: usize,
    interrupted: bool,
}

/// Runs every evaluation, `opts.workers` at a time, and prints the table row by row in order,
/// then the summary line.
pub fn run_check(opts: &CheckOptions, out: &mut impl Write) -> Result<CheckReport> {
    // Once, before any cell: a path that is not a run, or a run of an env without models.
    let env = env_of(&opts.source)?;
    if !crate::envs::has_physics_models(&env) {
        return Err(UsageError(format!(
            "gait check: the run's env '{env}' has no physics models or walking commands to \
             check (Cassie has)"
        ))
        .into());
    }
    let jobs: Vec<Job> = match &opts.task {
        CheckTask::Commands(commands) => opts
            .sims
            .iter()
            .flat_map(|&s| commands.iter().map(move |&c| Job::Command(s, c)))
            .collect(),
        CheckTask::Course(legs) => opts.sims.iter().map(|&s| Job::Course(s, legs)).collect(),
        CheckTask::Terrain => opts
            .sims
            .iter()
            .flat_map(|&s| {
                TERRAIN_CASES.iter().flat_map(move |case| {
                    case.commands.iter().map(move |&c| Job::Terrain(s, case, c))
                })
            })
            .collect(),
    };
    // Before the first line: the weights, the course, pushes and every command, checked once
    // as `gait eval` checks them, so a bad flag is one error and no table.
    let commands = match &opts.task {
        CheckTask::Commands(commands) => commands.as_slice(),
        CheckTask::Course(_) => &[],
        CheckTask::Terrain => &TASK_COMMANDS,
    };
    let policy =
        jobs.first().map(|first| check_options(&first.options(opts), commands)).transpose()?;
    write_preamble(opts, policy, out)?;
    let header = match opts.task {
        CheckTask::Commands(_) => COMMAND_HEADER,
        CheckTask::Course(_) => COURSE_HEADER,
        CheckTask::Terrain => TERRAIN_HEADER,
    };
    writeln!(out, "{header}")?;
    let report = run_jobs(&jobs, opts, out)?;
    writeln!(out, "{}", report.summary())?;
    if report.interrupted {
        writeln!(out, "interrupted: the table holds the evaluations that completed")?;
    }
    Ok(report)
}

/// Runs `jobs` on `opts.workers` threads, printing each evaluation's rows in order as soon as
/// those before it are printed; the first failure in order is the error, a stop request ends
/// the check with what completed.
fn run_jobs(jobs: &[Job], opts: &CheckOptions, out: &mut impl Write) -> Result<CheckReport> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(usize, Result<Judged>)>();
    let mut done: Vec<Option<Judged>> = (0..jobs.len()).map(|_| None).collect();
    let mut printed = 0;
    let mut report =
        CheckReport { cells: Vec::new(), episodes: 0, falls: 0, cuts: 0, interrupted: false };
    let mut failure: Option<(usize, anyhow::Error)> = None;
    std::thread::scope(|scope| -> Result<()> {
        for _ in 0..opts.workers.clamp(1, jobs.len().max(1)) {
            let (tx, next, stop) = (tx.clone(), &next, &stop);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= jobs.len() || stop.load(Ordering::SeqCst) {
                    return;
                }
                let result = jobs[i].run(opts).with_context(|| jobs[i].to_string());
                if tx.send((i, result)).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        for (i, result) in rx {
            match result {
                Ok(judged) if judged.interrupted => {
                    report.interrupted = true;
                    stop.store(true, Ordering::SeqCst);
                }
                Ok(judged) => done[i] = Some(judged),
                Err(e) => {
                    stop.store(true, Ordering::SeqCst);
                    // The first evaluation in order that failed is the one reported.
                    if failure.as_ref().is_none_or(|&(j, _)| i < j) {
                        failure = Some((i, e));
                    }
                }
            }
            // Rows in order: each evaluation's once those before it are printed.
            while let Some(Some(judged)) = done.get_mut(printed) {
                for cell in &judged.cells {
                    writeln!(out, "{cell}")?;
                }
                report.episodes += judged.episodes;
                report.falls += judged.falls;
                report.cuts += judged.cuts;
                report.cells.append(&mut judged.cells);
                printed += 1;
            }
        }
        Ok(())
    })?;
    if let Some((_, e)) = failure {
        return Err(e);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::tracking::is_standing;

    fn episode(command: [f32; 3], speeds: [f64; 3], steps: usize) -> EvalEpisode {
        let names = ["forward_speed", "lateral_speed", "yaw_rate"];
        EvalEpisode {
            command: Some(command),
            metrics: names.iter().zip(speeds).map(|(n, v)| (n.to_string(), v)).collect(),
            steps,
            cut: false,
        }
    }

    /// A cell is within only when every episode is: the bound of each axis, the tighter one
    /// for standing, and no fall; its row reports the worst episode's error per axis.
    #[test]
    fn a_cell_is_judged_by_its_worst_episode_and_its_falls() {
        let walk = [0.5, 0.0, 0.0];
        let judge =
            |eps: &[EvalEpisode]| Cell::of_command(CheckSim::Rapier, walk, eps, 100).unwrap();
        let good = episode(walk, [0.40, 0.05, 0.02], 100);
        let cell = judge(&[good.clone(), episode(walk, [0.60, -0.05, 0.0], 100)]);
        assert!(cell.within, "{cell:?}");
        assert_eq!((cell.falls, cell.episodes), (0, 2));
        assert!((cell.mean[0] - 0.5).abs() < 1e-12 && (cell.worst[0] - 0.1).abs() < 1e-12);
        // One episode 0.16 m/s slow, one 0.11 rad/s off, one that fell at full speed.
        assert!(!judge(&[good.clone(), episode(walk, [0.34, 0.0, 0.0], 100)]).within);
        assert!(!judge(&[good.clone(), episode(walk, [0.5, 0.0, 0.11], 100)]).within);
        let fell = judge(&[good.clone(), episode(walk, [0.5, 0.0, 0.0], 99)]);
        assert!(!fell.within && fell.falls == 1, "{fell:?}");
        // An episode a simulation blow-up cut short is no fall, and the cell is not within;
        // the row says why, and the means are the other episodes'.
        let blown = EvalEpisode { cut: true, ..episode(walk, [3.0, 0.0, 0.0], 40) };
        let cut = judge(&[good.clone(), blown]);
        assert_eq!((cut.falls, cut.cuts, cut.within), (0, 1, false), "{cut:?}");
        assert!((cut.mean[0] - 0.40).abs() < 1e-12, "{cut:?}");
        assert!(cut.to_string().ends_with("no (1 cut by a simulation blow-up)"), "{cut}");
        // Standing: 0.12 m/s of drift is within a walking bound but not a standing one.
        let stand = [0.0, 0.0, 0.0];
        let drift = [episode(stand, [0.0, 0.12, 0.0], 100)];
        assert!(!Cell::of_command(CheckSim::Mujoco, stand, &drift, 100).unwrap().within);
        let side = [0.0, 0.2, 0.0];
        let slow = [episode(side, [0.0, 0.08, 0.0], 100)];
        assert!(Cell::of_command(CheckSim::Mujoco, side, &slow, 100).unwrap().within);
        assert!(is_standing(stand) && !is_standing(side));
    }

    /// A course's leg is a cell of its own: within only when every episode reached it, none
    /// fell in it, and each episode's settled means are within; a leg after a fall is not
    /// reached, and says so.
    #[test]
    fn a_course_is_judged_leg_by_leg() {
        let means = |v: [f64; 3]| {
            let names = ["forward_speed", "lateral_speed", "yaw_rate"];
            Some(names.iter().zip(v).map(|(n, x)| (n.to_string(), x)).collect())
        };
        let (walk, side, stand) = ([1.0, 0.0, 0.0], [0.0, 0.2, 0.0], [0.0, 0.0, 0.0]);
        let leg = |command, means, fell| LegOutcome { command, means, fell };
        let steady = vec![
            leg(walk, means([0.95, 0.0, 0.0]), false),
            leg(side, means([0.0, 0.15, 0.0]), false),
            leg(stand, means([0.0, 0.0, 0.0]), false),
        ];
        let fell = vec![
            leg(walk, means([1.1, 0.0, 0.05]), false),
            leg(side, means([0.0, 0.1, 0.0]), true),
            leg(stand, None, false),
        ];
        let cells = Cell::of_course(CheckSim::Rapier, &[steady, fell]).unwrap();
        let got: Vec<_> = cells.iter().map(|c| (c.leg, c.falls, c.reached, c.within)).collect();
        assert_eq!(got, [(Some(0), 0, 2, true), (Some(1), 1, 2, false), (Some(2), 0, 1, false)]);
        assert!(
            (cells[0].mean[0] - 1.025).abs() < 1e-12 && (cells[0].worst[0] - 0.1).abs() < 1e-12
        );
        let mut unreached = cells[2].clone();
        unreached.reached = 0;
        assert_eq!(
            unreached.to_string(),
            "rapier  2    0,0,0          0/2    0/2      not reached                   no"
        );
        assert_eq!(
            cells[1].to_string(),
            "rapier  1    0,0.2,0        1/2    2/2       0.000 (0.000)    0.125 (0.100)    \
             0.000 (0.000)   no"
        );
    }

    #[test]
    fn an_env_without_speeds_cannot_be_checked() {
        let bare = EvalEpisode {
            command: Some([1.0, 0.0, 0.0]),
            metrics: Vec::new(),
            steps: 10,
            cut: false,
        };
        let e = Cell::of_command(CheckSim::Rapier, [1.0, 0.0, 0.0], &[bare], 10).unwrap_err();
        assert!(e.to_string().contains("only walking envs"), "{e}");
    }

    #[test]
    fn rows_and_summary_read_as_the_table_says() {
        let cell = Cell {
            sim: CheckSim::Mujoco,
            leg: None,
            command: [-0.3, 0.0, 0.0],
            falls: 1,
            cuts: 0,
            episodes: 5,
            reached: 5,
            mean: [-0.25, 0.01, -0.002],
            worst: [0.08, 0.03, 0.01],
            within: false,
            ground: None,
        };
        assert_eq!(
            cell.to_string(),
            "mujoco  -0.3,0,0     1/5    -0.250 (0.080)    0.010 (0.030)   -0.002 (0.010)   no"
        );
        let report =
            CheckReport { cells: vec![cell], episodes: 5, falls: 1, cuts: 0, interrupted: false };
        assert_eq!(report.summary(), "within: 0 of 1 cells; falls: 1 of 5 episodes");
        assert!(!report.passed());
    }
}
