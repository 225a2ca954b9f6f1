//! `gait check`: the walking task's command check (issue 27). Every command on every physics
//! model is a *cell*: `gait eval --command C` for a few long episodes, judged as the task
//! judges it: no fall, and in every episode each speed axis within 0.15 m/s of the command
//! (0.1 m/s when standing) and the yaw rate within 0.1 rad/s
//! ([`crate::algos::tracking::episode_error`], the same judge as training's selection).
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

use crate::algos::tracking::{
    episode_error, EvalEpisode, SPEED_TOLERANCE, STANDING_TOLERANCE, YAW_RATE_TOLERANCE,
};
use crate::config::UsageError;
use crate::envs::cassie::SimKind;
use crate::eval::{env_of, run_eval, EvalOptions, PhysicsOverride, Source};

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

/// MuJoCo's timestep in a check: the lab model's own 0.5 ms (cassie_fast.xml), whatever the
/// run trained at, so a check measures the policy on the model as the lab runs it.
pub const MUJOCO_CHECK_DT: f64 = 0.0005;

/// A physics model a check runs: one model per cell, never the mixed draw of training.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckSim {
    /// The lab's MuJoCo model at [`MUJOCO_CHECK_DT`].
    Mujoco,
    /// gait's rapier model at its default timestep (2 ms).
    Rapier,
}

impl CheckSim {
    fn physics(self) -> PhysicsOverride {
        match self {
            Self::Mujoco => {
                PhysicsOverride { sim: Some(SimKind::Mujoco), sim_dt: Some(MUJOCO_CHECK_DT) }
            }
            Self::Rapier => PhysicsOverride { sim: Some(SimKind::Rapier), sim_dt: None },
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
    /// The commands, `[x, y, turn]`.
    pub commands: Vec<[f32; 3]>,
    /// The models, each cell one of them.
    pub sims: Vec<CheckSim>,
    /// Episodes per cell.
    pub episodes: usize,
    /// Steps per episode; an episode that ends sooner fell.
    pub traj_len: usize,
    /// Seeds the episodes, as `gait eval --seed`.
    pub seed: u64,
    /// Pushes of up to this speed change (m/s), as `gait eval --push`.
    pub push: Option<f32>,
    /// Every push exactly `push`.
    pub push_exact: bool,
    /// Cells evaluated at once (threads, one libtorch thread each).
    pub workers: usize,
}

/// One cell: a command on a model, over its episodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// The model.
    pub sim: CheckSim,
    /// The command, `[x, y, turn]`.
    pub command: [f32; 3],
    /// Episodes that ended before `traj_len` steps.
    pub falls: usize,
    /// Episodes run.
    pub episodes: usize,
    /// Means over the episodes of each episode's mean forward speed, lateral speed (m/s) and
    /// yaw rate (rad/s).
    pub mean: [f64; 3],
    /// The worst episode's |mean − command| on each of the three axes.
    pub worst: [f64; 3],
    /// No fall, every episode within the task's bounds.
    pub within: bool,
}

impl Cell {
    /// Judges a cell's episodes (each ran `command` for up to `len` steps).
    fn judge(
        sim: CheckSim,
        command: [f32; 3],
        episodes: &[EvalEpisode],
        len: usize,
    ) -> Result<Self> {
        let mut cell = Self {
            sim,
            command,
            falls: episodes.iter().filter(|e| e.steps < len).count(),
            episodes: episodes.len(),
            mean: [0.0; 3],
            worst: [0.0; 3],
            within: !episodes.is_empty(),
        };
        for e in episodes {
            let error = episode_error(e, len).context(
                "the env reports no command or speeds: only walking envs can be checked",
            )?;
            cell.within &= error <= 1.0;
            for (axis, name) in ["forward_speed", "lateral_speed", "yaw_rate"].iter().enumerate() {
                let v = e.metric(name).unwrap_or(f64::NAN);
                cell.mean[axis] += v / episodes.len() as f64;
                cell.worst[axis] = cell.worst[axis].max((v - command[axis] as f64).abs());
            }
        }
        Ok(cell)
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
    /// One row of the table (the columns of [`HEADER`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let falls = format!("{}/{:<4}", self.falls, self.episodes);
        let command = CommandText(self.command).to_string();
        write!(f, "{:<7} {command:<12} {falls}", self.sim.name())?;
        for axis in 0..3 {
            write!(f, " {:6.3} ({:.3})  ", self.mean[axis], self.worst[axis])?;
        }
        write!(f, " {}", if self.within { "yes" } else { "no" })
    }
}

/// The table's header.
pub const HEADER: &str =
    "sim     command      falls  forward (err)    lateral (err)    yaw rate (err)   ok";

/// What a check measured: its cells in order (model by model, commands in the order given).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    /// The cells that completed, in order.
    pub cells: Vec<Cell>,
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

    /// The last line: cells within, falls over all episodes.
    pub fn summary(&self) -> String {
        let falls: usize = self.cells.iter().map(|c| c.falls).sum();
        let episodes: usize = self.cells.iter().map(|c| c.episodes).sum();
        format!(
            "within: {} of {} cells; falls: {falls} of {episodes} episodes",
            self.within(),
            self.cells.len()
        )
    }
}

/// The evaluation of one cell, as `gait eval` would run it.
fn cell_options(opts: &CheckOptions, sim: CheckSim, command: [f32; 3]) -> EvalOptions {
    EvalOptions {
        source: opts.source.clone(),
        episodes: opts.episodes,
        traj_len: Some(opts.traj_len),
        command: Some(command.to_vec()),
        course: None,
        seed: opts.seed,
        gif: None,
        record: None,
        physics: sim.physics(),
        push: opts.push,
        push_exact: opts.push_exact,
        action_noise: 0.0,
    }
}

/// Runs every cell, `opts.workers` at a time, and prints the table row by row in cell order,
/// then the summary line.
pub fn run_check(opts: &CheckOptions, out: &mut impl Write) -> Result<CheckReport> {
    // Once, before any cell: a path that is not a run, or a run of an env without models.
    let env = env_of(&opts.source)?;
    if env != "cassie" {
        return Err(UsageError(format!(
            "gait check: the run's env '{env}' has no physics models or walking commands to \
             check (Cassie has)"
        ))
        .into());
    }
    let cells: Vec<(CheckSim, [f32; 3])> =
        opts.sims.iter().flat_map(|&s| opts.commands.iter().map(move |&c| (s, c))).collect();
    let tolerances = format!(
        "within: no fall in {} steps, each speed within {SPEED_TOLERANCE} m/s ({STANDING_TOLERANCE} \
         standing), yaw rate within {YAW_RATE_TOLERANCE} rad/s, in every episode",
        opts.traj_len
    );
    let s = if opts.episodes == 1 { "" } else { "s" };
    writeln!(out, "{} cells, {} episode{s} each; {tolerances}", cells.len(), opts.episodes)?;
    if let Some(push) = opts.push.filter(|&p| p > 0.0) {
        let size = if opts.push_exact { "exactly" } else { "up to" };
        writeln!(out, "pushes: {size} {push} m/s every 2-5 s, in a random horizontal direction")?;
    }
    writeln!(out, "{HEADER}")?;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(usize, Result<(Cell, bool)>)>();
    let mut done: Vec<Option<Cell>> = vec![None; cells.len()];
    let mut printed = 0;
    let mut report = CheckReport { cells: Vec::new(), interrupted: false };
    let mut failure = None;
    std::thread::scope(|scope| -> Result<()> {
        for _ in 0..opts.workers.clamp(1, cells.len().max(1)) {
            let (tx, next, stop, cells) = (tx.clone(), &next, &stop, &cells);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= cells.len() || stop.load(Ordering::SeqCst) {
                    return;
                }
                let (sim, command) = cells[i];
                let result = run_eval(&cell_options(opts, sim, command), &mut std::io::sink())
                    .and_then(|s| {
                        Ok((Cell::judge(sim, command, &s.episodes, opts.traj_len)?, s.interrupted))
                    })
                    .with_context(|| format!("{} {}", sim.name(), CommandText(command)));
                if tx.send((i, result)).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        for (i, result) in rx {
            match result {
                Ok((_, true)) => {
                    report.interrupted = true;
                    stop.store(true, Ordering::SeqCst);
                }
                Ok((cell, false)) => done[i] = Some(cell),
                Err(e) => {
                    stop.store(true, Ordering::SeqCst);
                    // The first cell in order that failed is the one reported.
                    if failure.as_ref().is_none_or(|&(j, _)| i < j) {
                        failure = Some((i, e));
                    }
                }
            }
            while let Some(Some(cell)) = done.get(printed) {
                writeln!(out, "{cell}")?;
                printed += 1;
            }
        }
        Ok(())
    })?;
    if let Some((_, e)) = failure {
        return Err(e);
    }
    report.cells = done.into_iter().take(printed).flatten().collect();
    writeln!(out, "{}", report.summary())?;
    if report.interrupted {
        writeln!(out, "interrupted: the table holds the cells that completed")?;
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
        }
    }

    /// A cell is within only when every episode is: the bound of each axis, the tighter one
    /// for standing, and no fall; its row reports the worst episode's error per axis.
    #[test]
    fn a_cell_is_judged_by_its_worst_episode_and_its_falls() {
        let walk = [0.5, 0.0, 0.0];
        let judge = |eps: &[EvalEpisode]| Cell::judge(CheckSim::Rapier, walk, eps, 100).unwrap();
        let good = episode(walk, [0.40, 0.05, 0.02], 100);
        let cell = judge(&[good.clone(), episode(walk, [0.60, -0.05, 0.0], 100)]);
        assert!(cell.within, "{cell:?}");
        assert_eq!((cell.falls, cell.episodes), (0, 2));
        assert!((cell.mean[0] - 0.5).abs() < 1e-12 && (cell.worst[0] - 0.1).abs() < 1e-12);
        // One episode 0.16 m/s slow, one 0.11 rad/s off, one that fell at full speed.
        assert!(!judge(&[good.clone(), episode(walk, [0.34, 0.0, 0.0], 100)]).within);
        assert!(!judge(&[good.clone(), episode(walk, [0.5, 0.0, 0.11], 100)]).within);
        let fell = judge(&[good, episode(walk, [0.5, 0.0, 0.0], 99)]);
        assert!(!fell.within && fell.falls == 1, "{fell:?}");
        // Standing: 0.12 m/s of drift is within a walking bound but not a standing one.
        let stand = [0.0, 0.0, 0.0];
        let drift = [episode(stand, [0.0, 0.12, 0.0], 100)];
        assert!(!Cell::judge(CheckSim::Mujoco, stand, &drift, 100).unwrap().within);
        let side = [0.0, 0.2, 0.0];
        let slow = [episode(side, [0.0, 0.08, 0.0], 100)];
        assert!(Cell::judge(CheckSim::Mujoco, side, &slow, 100).unwrap().within);
        assert!(is_standing(stand) && !is_standing(side));
    }

    #[test]
    fn an_env_without_speeds_cannot_be_checked() {
        let bare = EvalEpisode { command: Some([1.0, 0.0, 0.0]), metrics: Vec::new(), steps: 10 };
        let e = Cell::judge(CheckSim::Rapier, [1.0, 0.0, 0.0], &[bare], 10).unwrap_err();
        assert!(e.to_string().contains("only walking envs"), "{e}");
    }

    #[test]
    fn rows_and_summary_read_as_the_table_says() {
        let cell = Cell {
            sim: CheckSim::Mujoco,
            command: [-0.3, 0.0, 0.0],
            falls: 1,
            episodes: 5,
            mean: [-0.25, 0.01, -0.002],
            worst: [0.08, 0.03, 0.01],
            within: false,
        };
        assert_eq!(
            cell.to_string(),
            "mujoco  -0.3,0,0     1/5    -0.250 (0.080)    0.010 (0.030)   -0.002 (0.010)   no"
        );
        let report = CheckReport { cells: vec![cell], interrupted: false };
        assert_eq!(report.summary(), "within: 0 of 1 cells; falls: 1 of 5 episodes");
        assert!(!report.passed());
    }
}
