//! Walking scalars of a training evaluation: did the policy go at the commanded speed?
//!
//! Computed from eval episodes run at the env's fixed [`crate::envs::Walking::eval_commands`], for
//! envs whose metrics include `forward_speed` and `lateral_speed` (m/s, commanded frame).
//! Each episode contributes its mean speeds (so a gait's sideways sway averages out and only
//! drift counts, as in `gait eval`):
//! * `Test/Forward Speed`: mean forward speed of the episodes at the fastest eval command
//!   (1 m/s for Cassie) — the number that shows when walking appears;
//! * `Test/Lateral Speed`: mean |lateral speed| over all eval episodes (drift);
//! * `Test/Velocity Error`: mean over all eval episodes of ‖(forward − x, lateral − y)‖, the
//!   standing command included, so standing still counts as much as walking at speed.
//!
//! For envs that also report `yaw_rate` (rad/s, about the world's vertical):
//! * `Test/Yaw Rate`: mean yaw rate of the episodes at the largest turn command (with
//!   forward-only commands, the straight walkers' spin: should be 0);
//! * `Test/Yaw Rate Error`: mean over all eval episodes of |yaw rate − turn|.

/// One deterministic eval episode: its fixed command (if the env has eval commands) and the
/// per-step means of the env's metrics (owned names, so that an episode can travel between
/// processes).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EvalEpisode {
    /// The command the episode ran (envs with commands).
    pub command: Option<[f32; 3]>,
    /// The env's metrics, averaged over the episode.
    pub metrics: Vec<(String, f64)>,
    /// Its length in steps (shorter than the run's `--traj-len`: it fell or was cut).
    pub steps: usize,
    /// A simulation blow-up cut it (a non-finite state the simulator reset): not a fall, and
    /// not an episode to judge.
    pub cut: bool,
}

impl EvalEpisode {
    /// The episode's mean of the env metric `name`, if the env reports it.
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics.iter().find(|(k, _)| *k == name).map(|&(_, v)| v)
    }
}

/// Adds one step's env metrics to per-name running sums (in the env's metric order), for the
/// per-episode means of the training evaluation and of `gait eval`.
pub fn add_metrics(sums: &mut Vec<(&'static str, f64)>, metrics: &[crate::envs::RewardTerm]) {
    for (k, &(name, value)) in metrics.iter().enumerate() {
        match sums.get_mut(k) {
            Some(sum) => sum.1 += value as f64,
            None => sums.push((name, value as f64)),
        }
    }
}

use crate::config::{SelectionCommands, UsageError};
use crate::envs::Env;

pub use crate::logging::metrics::{
    FORWARD_SPEED, LATERAL_SPEED, VELOCITY_ERROR, YAW_RATE, YAW_RATE_ERROR,
};

/// The walking scalars, or nothing when the episodes carry no commands or speeds.
pub fn scalars(episodes: &[EvalEpisode]) -> Vec<(&'static str, f64)> {
    let rows: Vec<([f32; 3], f64, f64)> = episodes
        .iter()
        .filter_map(|e| Some((e.command?, e.metric("forward_speed")?, e.metric("lateral_speed")?)))
        .collect();
    if rows.is_empty() {
        return Vec::new();
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let top = rows.iter().map(|r| r.0[0]).fold(f32::NEG_INFINITY, f32::max);
    let forward: Vec<f64> = rows.iter().filter(|r| r.0[0] == top).map(|r| r.1).collect();
    let lateral: Vec<f64> = rows.iter().map(|r| r.2.abs()).collect();
    let error: Vec<f64> = rows
        .iter()
        .map(|(c, f, l)| ((f - c[0] as f64).powi(2) + (l - c[1] as f64).powi(2)).sqrt())
        .collect();
    let mut out = vec![
        (FORWARD_SPEED, mean(&forward)),
        (LATERAL_SPEED, mean(&lateral)),
        (VELOCITY_ERROR, mean(&error)),
    ];
    let turning: Vec<(f32, f64)> =
        episodes.iter().filter_map(|e| Some((e.command?[2], e.metric("yaw_rate")?))).collect();
    if !turning.is_empty() {
        let top = turning.iter().map(|r| r.0).fold(f32::NEG_INFINITY, f32::max);
        let rate: Vec<f64> = turning.iter().filter(|r| r.0 == top).map(|r| r.1).collect();
        let error: Vec<f64> = turning.iter().map(|(c, w)| (w - *c as f64).abs()).collect();
        out.extend([(YAW_RATE, mean(&rate)), (YAW_RATE_ERROR, mean(&error))]);
    }
    out
}

/// The walking task's tolerances (issue 27, `scripts/check_omni.sh`): speed within 0.15 m/s
/// on each axis, yaw rate within 0.1 rad/s, and a standing command's speed within 0.1 m/s.
pub const SPEED_TOLERANCE: f64 = 0.15;
/// See [`SPEED_TOLERANCE`].
pub const YAW_RATE_TOLERANCE: f64 = 0.1;
/// See [`SPEED_TOLERANCE`].
pub const STANDING_TOLERANCE: f64 = 0.1;

/// What an episode that fell (or was cut) scores in [`tracking_error`]: four tolerances, more
/// than any episode on its feet scored in the runs it was chosen on (at most 1.8), so one fall
/// outweighs a better speed on every other command.
pub const FALL_ERROR: f64 = 4.0;

/// One episode's error in tolerances, as the task judges it (`gait check`, the selection):
/// its worst axis, |forward − x| and |lateral − y| over 0.15 m/s (0.1 m/s for a standing
/// command) and |yaw rate − turn| over 0.1 rad/s; [`FALL_ERROR`] for an episode shorter than
/// `len` steps (it fell or was cut). At most 1: within the task's bounds. `None` without a
/// command or speeds.
pub fn episode_error(e: &EvalEpisode, len: usize) -> Option<f64> {
    let c = e.command?;
    let (forward, lateral) = (e.metric("forward_speed")?, e.metric("lateral_speed")?);
    if e.steps < len {
        return Some(FALL_ERROR);
    }
    let speed_tol = if is_standing(c) { STANDING_TOLERANCE } else { SPEED_TOLERANCE };
    let mut worst =
        ((forward - c[0] as f64).abs() / speed_tol).max((lateral - c[1] as f64).abs() / speed_tol);
    if let Some(rate) = e.metric("yaw_rate") {
        worst = worst.max((rate - c[2] as f64).abs() / YAW_RATE_TOLERANCE);
    }
    Some(worst)
}

/// A standing command (all zero): its speeds are held to [`STANDING_TOLERANCE`].
pub fn is_standing(command: [f32; 3]) -> bool {
    command.iter().all(|&v| v == 0.0)
}

/// The commands a selection runs on every physics model, in cell order: the env's eval
/// commands, then with [`SelectionCommands::Mirrored`] their mirror images that are not among
/// them (in the eval commands' order). An error where `mirrored` meets an env without a
/// command mirror. Computed once per selection job (not per step).
pub fn selection_commands(
    env: &dyn Env,
    set: SelectionCommands,
) -> Result<Vec<[f32; 3]>, UsageError> {
    let Some(walking) = env.walking() else {
        return Ok(Vec::new());
    };
    let mut commands = walking.eval_commands().to_vec();
    if set == SelectionCommands::Mirrored {
        for &c in walking.eval_commands() {
            let image = walking.mirror_command(c).ok_or_else(|| {
                UsageError(
                    "--selection-commands mirrored: this env has no command mirror \
                     (use --selection-commands eval)"
                        .into(),
                )
            })?;
            if !commands.contains(&image) {
                commands.push(image);
            }
        }
    }
    Ok(commands)
}

/// The selection's scores: [`Selection::error`] is `Test/Tracking Error`,
/// [`Selection::cells_within`] is `Test/Cells Within`, [`Selection::cells`] the rows of the
/// run's `selection.csv`. Built only by [`Selection::score`], so it always holds at least one
/// cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// One score per cell (a command on a model), in cell order.
    cells: Vec<CellScore>,
}

/// One cell of a selection, a command on a physics model, over its episodes: what
/// `selection.csv` records, so that a run shows which cells its evaluations miss without a
/// `gait check`.
#[derive(Debug, Clone, PartialEq)]
pub struct CellScore {
    /// The command its episodes ran.
    pub command: [f32; 3],
    /// Its episodes (`--selection-episodes`).
    pub episodes: usize,
    /// Its episodes shorter than the selection's length (they fell or were cut).
    pub falls: usize,
    /// Its worst episode's error in tolerances ([`episode_error`]; at most 1: within).
    pub worst_error: f64,
    /// The mean over its episodes of each episode's mean forward speed (m/s, commanded frame).
    pub forward: f64,
    /// The same for the lateral speed (m/s).
    pub lateral: f64,
    /// The same for the yaw rate (rad/s), for envs that report it.
    pub yaw_rate: Option<f64>,
}

impl CellScore {
    /// Every episode within the task's bounds: worst error at most one tolerance, no fall.
    pub fn within(&self) -> bool {
        self.worst_error <= 1.0
    }
}

impl Selection {
    /// Scores selection episodes: each episode's worst axis error in tolerances (|forward − x|
    /// and |lateral − y| over 0.15 m/s, or 0.1 m/s for a standing command; |yaw rate − turn|
    /// over 0.1 rad/s), an episode shorter than `len` steps (`--selection-len`) scoring
    /// [`FALL_ERROR`]; then each of the `cells` cells (episode `k` is cell `k % cells`) keeps
    /// its worst episode. `None` without episodes, commands or speeds.
    pub fn score(episodes: &[EvalEpisode], len: usize, cells: usize) -> Option<Self> {
        let errors: Vec<f64> =
            episodes.iter().map(|e| episode_error(e, len)).collect::<Option<_>>()?;
        let first = episodes.first()?;
        let cells = cells.clamp(1, errors.len());
        let mut scores = vec![
            CellScore {
                command: [0.0; 3],
                episodes: 0,
                falls: 0,
                worst_error: f64::NEG_INFINITY,
                forward: 0.0,
                lateral: 0.0,
                yaw_rate: first.metric("yaw_rate").map(|_| 0.0),
            };
            cells
        ];
        for (k, (e, &error)) in episodes.iter().zip(&errors).enumerate() {
            let cell = &mut scores[k % cells];
            // `episode_error` returned Some: the command and both speeds are there.
            cell.command = e.command?;
            cell.episodes += 1;
            cell.falls += usize::from(e.steps < len);
            cell.worst_error = cell.worst_error.max(error);
            cell.forward += e.metric("forward_speed")?;
            cell.lateral += e.metric("lateral_speed")?;
            cell.yaw_rate = cell.yaw_rate.zip(e.metric("yaw_rate")).map(|(sum, v)| sum + v);
        }
        for cell in &mut scores {
            let n = cell.episodes as f64;
            (cell.forward, cell.lateral) = (cell.forward / n, cell.lateral / n);
            cell.yaw_rate = cell.yaw_rate.map(|sum| sum / n);
        }
        Some(Self { cells: scores })
    }

    /// Each cell's score, in cell order (cell `c`: the selection's command `c % n` on model
    /// `c / n`, `n` commands).
    pub fn cells(&self) -> &[CellScore] {
        &self.cells
    }

    /// `Test/Tracking Error`, the score of `--best-by tracking`: the mean over cells of each
    /// cell's worst episode error. Below 1 on a cell: all its episodes within the task's
    /// bounds.
    ///
    /// Why a mean of per-cell worst errors: it is what the task judges (every axis within its
    /// bound in every episode, no fall) made smooth, so that it ranks checkpoints that all pass
    /// or all fail one command. How well it ranks a run's checkpoints: docs/cassie.md,
    /// "Choosing the weights".
    pub fn error(&self) -> f64 {
        self.cells.iter().map(|c| c.worst_error).sum::<f64>() / self.cells.len() as f64
    }

    /// `Test/Cells Within`: how many cells had every episode within the task's bounds (worst
    /// error at most one tolerance, no fall), as `scripts/check_omni.sh` judges a cell of its
    /// own. Why: a run's curve then shows which evaluations met every selection cell without a
    /// check; the pick still goes by [`Selection::error`], which also ranks near misses.
    pub fn cells_within(&self) -> usize {
        self.cells.iter().filter(|c| c.within()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Test/Tracking Error` of selection episodes.
    fn tracking_error(episodes: &[EvalEpisode], len: usize, cells: usize) -> Option<f64> {
        Selection::score(episodes, len, cells).map(|s| s.error())
    }

    #[test]
    fn the_tracking_error_is_the_mean_worst_axis_in_tolerances_and_a_fall_scores_four() {
        let mut turn = ep([0.0, 0.0, 0.4], 0.03, -0.06);
        turn.metrics.push(("yaw_rate".into(), 0.35));
        let episodes = [
            ep([1.0, 0.0, 0.0], 0.85, 0.0), // 0.15 slow: 1 tolerance
            ep([0.0, 0.0, 0.0], 0.0, 0.05), // standing: 0.05 of 0.1
            turn,                           // 0.05 rad/s off (0.5) over 0.06 m/s sideways (0.4)
            ep([0.5, 0.0, 0.0], 0.5, 0.0),  // exact
        ];
        let got = tracking_error(&episodes, 400, 4).expect("a score");
        assert!((got - (1.0 + 0.5 + 0.5 + 0.0) / 4.0).abs() < 1e-6, "{got}");
        // An episode shorter than the trajectory limit fell: it scores FALL_ERROR whatever its
        // speeds were.
        let mut fell = ep([0.5, 0.0, 0.0], 0.5, 0.0);
        fell.steps = 399;
        assert_eq!(tracking_error(&[fell], 400, 1), Some(FALL_ERROR));
        assert_eq!(tracking_error(&[], 400, 1), None);
        let no_cmd = EvalEpisode { command: None, ..ep([0.0; 3], 0.0, 0.0) };
        assert_eq!(tracking_error(&[no_cmd], 400, 1), None);
    }

    /// With several episodes per cell, a cell scores its worst episode (the checks judge a
    /// cell by every episode), and the score is the mean over cells, not over episodes.
    #[test]
    fn each_cell_scores_its_worst_episode() {
        let episodes = [
            ep([1.0, 0.0, 0.0], 1.0, 0.0),   // cell 0: exact
            ep([0.0, 0.0, 0.0], 0.0, 0.02),  // cell 1: 0.2
            ep([1.0, 0.0, 0.0], 1.3, 0.0),   // cell 0 again: 2 tolerances
            ep([0.0, 0.0, 0.0], 0.0, -0.01), // cell 1 again: 0.1
        ];
        let got = tracking_error(&episodes, 400, 2).expect("a score");
        assert!((got - (2.0 + 0.2) / 2.0).abs() < 1e-6, "{got}");
        let per_episode = tracking_error(&episodes, 400, 4).expect("a score");
        assert!((per_episode - (0.0 + 0.2 + 2.0 + 0.1) / 4.0).abs() < 1e-6, "{per_episode}");
        // Cell 0's second episode is 2 tolerances off: only cell 1 is within.
        assert_eq!(Selection::score(&episodes, 400, 2).map(|s| s.cells_within()), Some(1));
        assert_eq!(Selection::score(&episodes, 400, 4).map(|s| s.cells_within()), Some(3));
        // A fall fails its cell whatever its speeds.
        let mut fell = episodes.clone();
        fell[1].steps = 399;
        assert_eq!(Selection::score(&fell, 400, 4).map(|s| s.cells_within()), Some(2));
    }

    /// Each cell's row of `selection.csv`: its command, episodes, falls, worst error and mean
    /// speeds; the yaw rate only where every episode reports one.
    #[test]
    fn each_cell_keeps_its_episodes_means_and_falls() {
        let mut fell = ep([0.0, 0.2, 0.0], 0.1, 0.0);
        fell.steps = 100;
        let episodes = [
            ep([1.0, 0.0, 0.0], 0.9, 0.02),
            ep([0.0, 0.2, 0.0], 0.0, 0.15),
            ep([1.0, 0.0, 0.0], 1.1, -0.04),
            fell,
        ];
        let selection = Selection::score(&episodes, 400, 2).expect("a score");
        let [walk, side] = selection.cells() else { panic!("two cells") };
        assert_eq!((walk.command, walk.episodes, walk.falls), ([1.0, 0.0, 0.0], 2, 0));
        assert!((walk.forward - 1.0).abs() < 1e-12 && (walk.lateral + 0.01).abs() < 1e-12);
        assert!((walk.worst_error - 0.1 / 0.15).abs() < 1e-6, "{walk:?}");
        assert_eq!((side.command, side.episodes, side.falls), ([0.0, 0.2, 0.0], 2, 1));
        assert_eq!(side.worst_error, FALL_ERROR);
        assert!((side.lateral - 0.075).abs() < 1e-12, "{side:?}");
        assert_eq!((walk.yaw_rate, side.yaw_rate), (None, None));
        let mut turning = episodes.clone();
        for (e, rate) in turning.iter_mut().zip([0.1, 0.2, 0.3, 0.4]) {
            e.metrics.push(("yaw_rate".into(), rate));
        }
        let selection = Selection::score(&turning, 400, 2).expect("a score");
        let rates: Vec<f64> = selection.cells().iter().map(|c| c.yaw_rate.unwrap()).collect();
        assert!((rates[0] - 0.2).abs() < 1e-12 && (rates[1] - 0.3).abs() < 1e-12, "{rates:?}");
        let errors: f64 = selection.cells().iter().map(|c| c.worst_error).sum();
        assert_eq!(selection.error(), errors / 2.0);
    }

    fn ep(command: [f32; 3], forward: f64, lateral: f64) -> EvalEpisode {
        EvalEpisode {
            command: Some(command),
            metrics: vec![
                ("forward_speed".into(), forward),
                ("lateral_speed".into(), lateral),
                ("pelvis_height".into(), 1.0),
            ],
            steps: 400,
            cut: false,
        }
    }

    #[test]
    fn speeds_and_errors_per_episode() {
        let got = scalars(&[
            ep([1.0, 0.0, 0.0], 0.9, 0.1),
            ep([0.5, 0.0, 0.0], 0.5, -0.3),
            ep([0.0, 0.0, 0.0], 0.0, 0.0),
            ep([1.0, 0.0, 0.0], 1.1, -0.1),
        ]);
        let get = |k| got.iter().find(|(n, _)| *n == k).unwrap().1;
        assert!((get(FORWARD_SPEED) - 1.0).abs() < 1e-12, "mean of the two 1 m/s episodes");
        assert!((get(LATERAL_SPEED) - 0.125).abs() < 1e-12);
        let e1 = (0.01f64 + 0.01).sqrt();
        let expected = (e1 + 0.3 + 0.0 + e1) / 4.0;
        assert!((get(VELOCITY_ERROR) - expected).abs() < 1e-12);
    }

    #[test]
    fn yaw_rate_at_the_largest_turn_and_its_error_over_all() {
        let turning = |command: [f32; 3], rate: f64| {
            let mut e = ep(command, command[0] as f64, 0.0);
            e.metrics.push(("yaw_rate".into(), rate));
            e
        };
        let got = scalars(&[
            turning([0.0, 0.0, 0.4], 0.3),
            turning([0.6, 0.0, 0.3], 0.3),
            turning([1.0, 0.0, 0.0], -0.1),
            turning([0.0, 0.0, 0.4], 0.5),
        ]);
        let get = |k| got.iter().find(|(n, _)| *n == k).unwrap().1;
        assert!((get(YAW_RATE) - 0.4).abs() < 1e-9, "mean of the two 0.4 rad/s episodes");
        assert!((get(YAW_RATE_ERROR) - (0.1 + 0.0 + 0.1 + 0.1) / 4.0).abs() < 1e-6);
        // Without a yaw-rate metric: no yaw scalars.
        let plain = scalars(&[ep([1.0, 0.0, 0.0], 1.0, 0.0)]);
        assert!(plain.iter().all(|(k, _)| *k != YAW_RATE && *k != YAW_RATE_ERROR));
    }

    #[test]
    fn nothing_without_commands_or_speeds() {
        assert!(scalars(&[]).is_empty());
        let no_cmd = EvalEpisode {
            command: None,
            metrics: vec![("forward_speed".into(), 1.0), ("lateral_speed".into(), 0.0)],
            steps: 1,
            cut: false,
        };
        assert!(scalars(&[no_cmd]).is_empty());
        let no_speed =
            EvalEpisode { command: Some([1.0, 0.0, 0.0]), metrics: vec![], steps: 1, cut: false };
        assert!(scalars(&[no_speed]).is_empty());
    }
}
