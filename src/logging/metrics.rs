//! Every scalar a training iteration logs, defined once: its name, the table it goes to, and
//! how it is read off an [`IterationReport`]. `progress.csv`, `timing.csv`, TensorBoard, the
//! terminal line and `gait plot` all use these definitions, so a name cannot drift between
//! them. Names follow the reference's TensorBoard tags.
//!
//! Deterministic values go to `progress.csv`; wall-clock measurements to `timing.csv`, so
//! two runs with the same seed have byte-identical `progress.csv` files.

pub const ITERATION: &str = "Iteration";
pub const TOTAL_TIMESTEPS: &str = "Time/Total Timesteps";
pub const TIMESTEPS_PER_ITERATION: &str = "Time/Timesteps per Iteration";
pub const TRAIN_RETURN: &str = "Train/Return";
pub const TRAIN_LENGTH: &str = "Train/Episode Length";
pub const PHYSICS_RESETS: &str = "Train/Physics Resets";
pub const TEST_RETURN: &str = "Test/Return";
pub const TEST_LENGTH: &str = "Test/Episode Length";
pub const FORWARD_SPEED: &str = "Test/Forward Speed";
pub const LATERAL_SPEED: &str = "Test/Lateral Speed";
pub const VELOCITY_ERROR: &str = "Test/Velocity Error";
pub const YAW_RATE: &str = "Test/Yaw Rate";
pub const YAW_RATE_ERROR: &str = "Test/Yaw Rate Error";
/// `--best-by tracking`'s score of a settled evaluation ([`crate::algos::tracking::Selection::error`]).
pub const TRACKING_ERROR: &str = "Test/Tracking Error";
/// How many selection cells were within the task's bounds
/// ([`crate::algos::tracking::Selection::cells_within`]).
pub const CELLS_WITHIN: &str = "Test/Cells Within";
pub const ACTOR_LOSS: &str = "Optimizer/Actor Loss";
pub const CRITIC_LOSS: &str = "Optimizer/Critic Loss";
pub const MIRROR_LOSS: &str = "Optimizer/Mirror Loss";
pub const KL: &str = "Optimizer/KL";
pub const MINIBATCHES: &str = "Optimizer/Minibatches";
pub const POLICY_STD: &str = "Policy/Std";
/// The share of this iteration's training inputs that the observation normalizer clipped
/// (beyond ±`--obs-clip` σ): statistics that no longer describe what the policy sees.
pub const CLIPPED_INPUTS: &str = "Policy/Clipped Inputs";
pub const SAMPLE_TIME: &str = "Time/Sample Time";
pub const SAMPLE_RATE: &str = "Time/Sample Rate";
pub const IDEAL_SAMPLE_RATE: &str = "Time/Ideal Sample Rate";
pub const OVERHEAD_LOSS: &str = "Time/Overhead Loss";
/// Worker seconds on the iteration's kept training trajectories, evaluation episodes and
/// selection episodes: the rest of `workers × Time/Sample Time` was idle or on cancelled jobs.
pub const TRAIN_JOB_TIME: &str = "Time/Train Job Time";
pub const EVAL_JOB_TIME: &str = "Time/Eval Job Time";
pub const SELECT_JOB_TIME: &str = "Time/Selection Job Time";
pub const OPTIMIZE_TIME: &str = "Time/Optimize Time";
pub const FULL_RATE: &str = "Time/Timesteps per Second (FULL)";
pub const ELAPSED: &str = "Time/Elapsed";
pub const BYTES_MOVED: &str = "Time/Bytes Moved";
pub const SLOWEST_RANK_RATE: &str = "Time/Slowest Rank Rate";
pub const BROADCAST_TIME: &str = "Time/Broadcast Time";
pub const COMM_TIME: &str = "Time/Communication Time";

/// Columns of `progress.csv` (deterministic for a given seed).
pub const PROGRESS_COLUMNS: &[&str] = &[
    ITERATION,
    TOTAL_TIMESTEPS,
    TIMESTEPS_PER_ITERATION,
    TRAIN_RETURN,
    TRAIN_LENGTH,
    PHYSICS_RESETS,
    TEST_RETURN,
    TEST_LENGTH,
    FORWARD_SPEED,
    LATERAL_SPEED,
    VELOCITY_ERROR,
    YAW_RATE,
    YAW_RATE_ERROR,
    TRACKING_ERROR,
    CELLS_WITHIN,
    ACTOR_LOSS,
    CRITIC_LOSS,
    MIRROR_LOSS,
    KL,
    MINIBATCHES,
    POLICY_STD,
    CLIPPED_INPUTS,
];

/// The walking task's columns of `progress.csv` (the training evaluation's speeds, the
/// selection's scores), written by runs of envs that are walking tasks
/// ([`crate::envs::Env::walking`]) only: the seven in [`PROGRESS_COLUMNS`] after
/// `Test/Episode Length`.
pub const WALKING_COLUMNS: &[&str] = PROGRESS_COLUMNS.split_at(8).1.split_at(7).0;

/// The columns of a run's `progress.csv`: [`PROGRESS_COLUMNS`], without
/// [`WALKING_COLUMNS`] unless the env is a walking task.
pub fn progress_columns(walking: bool) -> Vec<&'static str> {
    let keep = |c: &&str| walking || !WALKING_COLUMNS.contains(c);
    PROGRESS_COLUMNS.iter().copied().filter(keep).collect()
}

/// Columns of `timing.csv` (wall-clock measurements).
pub const TIMING_COLUMNS: &[&str] = &[
    ITERATION,
    SAMPLE_TIME,
    SAMPLE_RATE,
    IDEAL_SAMPLE_RATE,
    OVERHEAD_LOSS,
    TRAIN_JOB_TIME,
    EVAL_JOB_TIME,
    SELECT_JOB_TIME,
    OPTIMIZE_TIME,
    FULL_RATE,
    ELAPSED,
    BYTES_MOVED,
    SLOWEST_RANK_RATE,
    BROADCAST_TIME,
    COMM_TIME,
];

/// The deterministic evaluation of one iteration (pre-update weights).
#[derive(Debug, Clone, PartialEq)]
pub struct TestMetrics {
    pub mean_return: f64,
    pub mean_length: f64,
    /// Walking scalars ([`FORWARD_SPEED`], ...) for envs with commands and speeds.
    pub tracking: Vec<(&'static str, f64)>,
}

impl TestMetrics {
    pub fn forward_speed(&self) -> Option<f64> {
        self.scalar(FORWARD_SPEED)
    }

    /// `--best-by tracking`'s score, when the evaluation ran selection episodes.
    pub fn tracking_error(&self) -> Option<f64> {
        self.scalar(TRACKING_ERROR)
    }

    /// The selection cells within the task's bounds, when the evaluation ran selection
    /// episodes (`--best-by cells` compares it first).
    pub fn cells_within(&self) -> Option<u64> {
        self.scalar(CELLS_WITHIN).map(|n| n as u64)
    }

    fn scalar(&self, name: &str) -> Option<f64> {
        self.tracking.iter().find(|(k, _)| *k == name).map(|&(_, v)| v)
    }
}

/// The optimizer's means over the minibatches it ran.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpdateMetrics {
    pub actor_loss: f64,
    pub critic_loss: f64,
    pub mirror_loss: f64,
    pub kl: f64,
    pub minibatches: usize,
    /// True when the KL threshold stopped the update early.
    pub early_stopped: bool,
}

/// Worker seconds per kind of job in one iteration's collection.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct JobSeconds {
    /// Training trajectories of the iteration's prefix.
    pub train: f64,
    /// Evaluation episodes.
    pub eval: f64,
    /// Selection episodes (the pick's cells).
    pub select: f64,
}

/// Wall-clock measurements of one iteration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timing {
    pub sample_s: f64,
    pub optimize_s: f64,
    pub iteration_s: f64,
    pub elapsed_s: f64,
    /// Steps per second the workers would reach together without overhead.
    pub ideal_steps_per_s: f64,
    /// Worker seconds on the kept training, evaluation and selection jobs.
    pub job_seconds: JobSeconds,
    /// With MPI ranks: bytes sent and received by rank 0 this iteration, and each rank's
    /// training steps per second of sampling time (rank 0 first).
    pub ranks: Option<RankTiming>,
}

/// The MPI part of an iteration's timing.
#[derive(Debug, Clone, PartialEq)]
pub struct RankTiming {
    pub bytes: usize,
    pub steps_per_s: Vec<f64>,
    /// Seconds to send the parameters to every rank, and all message handling on rank 0.
    pub broadcast_s: f64,
    pub comm_s: f64,
}

/// One training iteration's numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct IterationReport {
    pub iteration: u64,
    pub total_timesteps: u64,
    /// Training steps collected this iteration.
    pub steps: usize,
    pub train_return: f64,
    pub train_length: f64,
    /// Train episodes cut because the simulation blew up (MuJoCo reset a non-finite state).
    pub physics_resets: usize,
    pub test: Option<TestMetrics>,
    pub update: UpdateMetrics,
    /// Mean action std, for policies whose std is a parameter or fixed.
    pub policy_std: Option<f64>,
    /// [`CLIPPED_INPUTS`], for actors whose normalizer clips.
    pub clipped_inputs: Option<f64>,
    /// The adaptive curriculum's level per track the iteration collected at, named by the
    /// env's rule (`crate::envs::levels::LevelRule::tracks`); empty without one.
    pub levels: Vec<(&'static str, f64)>,
    pub timing: Timing,
}

impl IterationReport {
    /// The `progress.csv` row (absent values stay empty cells).
    pub fn progress(&self) -> Vec<(&'static str, f64)> {
        let mut row = vec![
            (ITERATION, self.iteration as f64),
            (TOTAL_TIMESTEPS, self.total_timesteps as f64),
            (TIMESTEPS_PER_ITERATION, self.steps as f64),
            (TRAIN_RETURN, self.train_return),
            (TRAIN_LENGTH, self.train_length),
            (PHYSICS_RESETS, self.physics_resets as f64),
        ];
        if let Some(test) = &self.test {
            row.push((TEST_RETURN, test.mean_return));
            row.push((TEST_LENGTH, test.mean_length));
            row.extend(test.tracking.iter().copied());
        }
        let u = &self.update;
        row.extend([
            (ACTOR_LOSS, u.actor_loss),
            (CRITIC_LOSS, u.critic_loss),
            (MIRROR_LOSS, u.mirror_loss),
            (KL, u.kl),
            (MINIBATCHES, u.minibatches as f64),
        ]);
        if let Some(std) = self.policy_std {
            row.push((POLICY_STD, std));
        }
        if let Some(share) = self.clipped_inputs {
            row.push((CLIPPED_INPUTS, share));
        }
        row.extend_from_slice(&self.levels);
        row
    }

    /// The `timing.csv` row.
    pub fn timing(&self) -> Vec<(&'static str, f64)> {
        let t = &self.timing;
        let steps = self.steps as f64;
        vec![
            (ITERATION, self.iteration as f64),
            (SAMPLE_TIME, t.sample_s),
            (SAMPLE_RATE, steps / 1000.0 / t.sample_s),
            (IDEAL_SAMPLE_RATE, t.ideal_steps_per_s / 1000.0),
            (OVERHEAD_LOSS, t.sample_s - steps / t.ideal_steps_per_s.max(1e-9)),
            (TRAIN_JOB_TIME, t.job_seconds.train),
            (EVAL_JOB_TIME, t.job_seconds.eval),
            (SELECT_JOB_TIME, t.job_seconds.select),
            (OPTIMIZE_TIME, t.optimize_s),
            (FULL_RATE, (steps / t.iteration_s).round()),
            (ELAPSED, t.elapsed_s),
            (BYTES_MOVED, t.ranks.as_ref().map_or(0.0, |r| r.bytes as f64)),
            (
                SLOWEST_RANK_RATE,
                t.ranks.as_ref().map_or(f64::NAN, |r| {
                    r.steps_per_s.iter().copied().fold(f64::INFINITY, f64::min) / 1000.0
                }),
            ),
            (BROADCAST_TIME, t.ranks.as_ref().map_or(0.0, |r| r.broadcast_s)),
            (COMM_TIME, t.ranks.as_ref().map_or(0.0, |r| r.comm_s)),
        ]
    }

    /// Every scalar but the iteration number, for TensorBoard (step = iteration).
    pub fn tensorboard(&self) -> Vec<(&'static str, f64)> {
        self.progress().into_iter().chain(self.timing()).filter(|(k, _)| *k != ITERATION).collect()
    }

    /// The terminal line: at most 100 columns; losses and timings are in the files.
    pub fn terminal_line(&self) -> String {
        let steps = self.total_timesteps;
        let human = if steps < 1_000_000 {
            format!("{:.1}k", steps as f64 / 1e3)
        } else {
            format!("{:.2}M", steps as f64 / 1e6)
        };
        let mut test = String::new();
        if let Some(t) = &self.test {
            test = format!(" | test {:8.2}", t.mean_return);
            if let Some(speed) = t.forward_speed() {
                test.push_str(&format!(" {speed:4.2} m/s"));
            }
        }
        let ranks = match &self.timing.ranks {
            Some(r) => format!(
                " | {}r {:.1}MB min {:.0}/s",
                r.steps_per_s.len(),
                r.bytes as f64 / 1e6,
                r.steps_per_s.iter().copied().fold(f64::INFINITY, f64::min)
            ),
            None => String::new(),
        };
        format!(
            "iter {:4} | {human:>7} steps | return {:8.2} len {:5.1}{test} | KL {:.4}{} | {:4.0}/s{ranks}",
            self.iteration,
            self.train_return,
            self.train_length,
            self.update.kl,
            if self.update.early_stopped { "*" } else { " " },
            self.steps as f64 / self.timing.iteration_s,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(test: bool) -> IterationReport {
        IterationReport {
            iteration: 3,
            total_timesteps: 41_000,
            steps: 4000,
            train_return: 12.5,
            train_length: 80.0,
            physics_resets: 1,
            test: test.then(|| TestMetrics {
                mean_return: 20.0,
                mean_length: 100.0,
                tracking: vec![
                    (FORWARD_SPEED, 0.98),
                    (LATERAL_SPEED, 0.1),
                    (VELOCITY_ERROR, 0.2),
                    (YAW_RATE, 0.38),
                    (YAW_RATE_ERROR, 0.05),
                    (TRACKING_ERROR, 0.4),
                    (CELLS_WITHIN, 12.0),
                ],
            }),
            update: UpdateMetrics { kl: 0.01, minibatches: 30, ..UpdateMetrics::default() },
            policy_std: Some(0.2),
            clipped_inputs: Some(0.001),
            levels: Vec::new(),
            timing: Timing {
                sample_s: 2.0,
                iteration_s: 2.5,
                ranks: None,
                ideal_steps_per_s: 2500.0,
                ..Timing::default()
            },
        }
    }

    #[test]
    fn every_row_name_is_a_declared_column_in_order() {
        for with_test in [false, true] {
            let r = report(with_test);
            let names: Vec<&str> = r.progress().iter().map(|(k, _)| *k).collect();
            let mut columns = PROGRESS_COLUMNS.iter().filter(|c| names.contains(c));
            assert!(names.iter().all(|n| columns.next() == Some(n)), "{names:?}");
            let timing: Vec<&str> = r.timing().iter().map(|(k, _)| *k).collect();
            assert_eq!(timing, TIMING_COLUMNS);
        }
    }

    #[test]
    fn the_walking_columns_are_the_speed_and_selection_ones() {
        let expected = [FORWARD_SPEED, LATERAL_SPEED, VELOCITY_ERROR, YAW_RATE, YAW_RATE_ERROR];
        assert_eq!(WALKING_COLUMNS[..5], expected);
        assert_eq!(WALKING_COLUMNS[5..], [TRACKING_ERROR, CELLS_WITHIN]);
        assert_eq!(progress_columns(false).len(), PROGRESS_COLUMNS.len() - 7);
        assert_eq!(progress_columns(true), PROGRESS_COLUMNS);
    }

    #[test]
    fn the_terminal_line_fits_100_columns_and_shows_the_speed() {
        let line = report(true).terminal_line();
        assert!(line.chars().count() <= 100, "{line}");
        assert!(line.contains("41.0k") && line.contains("0.98 m/s"), "{line}");
        assert_eq!(
            report(true).tensorboard().len(),
            PROGRESS_COLUMNS.len() - 1 + TIMING_COLUMNS.len() - 1
        );
        // Over MPI ranks the line says how many, the bytes moved and the slowest rank's rate
        // (at most 125 columns then).
        let mut mpi = report(true);
        mpi.timing.ranks = Some(RankTiming {
            bytes: 2_400_000,
            steps_per_s: vec![3100.0, 2900.0, 3050.0],
            broadcast_s: 0.002,
            comm_s: 0.007,
        });
        let line = mpi.terminal_line();
        assert!(line.chars().count() <= 125 && line.ends_with("| 3r 2.4MB min 2900/s"), "{line}");
    }
}
