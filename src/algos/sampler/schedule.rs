//! One iteration's job schedule, apart from how jobs travel (threads today; the seam a remote
//! transport plugs into): which job a free worker runs next and with which seed, the
//! deterministic prefix cut, and when the stragglers past it may be cancelled.
//!
//! Evaluation jobs `0..num_eval` go out first, then selection jobs `0..num_select`, then
//! training jobs `0, 1, 2, ...` until the
//! shortest prefix of training jobs whose steps reach `num_steps` is complete; later jobs are
//! cancelled and discarded. Job `k` always gets the seed `derive(seed, [kind, iteration, k])`,
//! so the result depends on neither timing nor the number of workers.

use std::collections::BTreeMap;

use super::{CollectRequest, JobKind, Trajectory};
use crate::algos::seeding::{derive, stream};

/// A job to hand to a free worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobTicket {
    pub kind: JobKind,
    pub id: u64,
    pub seed: u64,
}

/// The schedule of one [`CollectRequest`].
pub struct Schedule {
    num_eval: u64,
    num_select: u64,
    num_steps: usize,
    seed: u64,
    iteration: u64,
    next_eval: u64,
    next_select: u64,
    next_train: u64,
    want_train: bool,
    eval_done: BTreeMap<u64, Trajectory>,
    select_done: BTreeMap<u64, Trajectory>,
    train_done: BTreeMap<u64, Trajectory>,
    prefix_end: u64,
    prefix_steps: usize,
    /// The last training job of the prefix, once it is complete.
    cutoff: Option<u64>,
}

impl Schedule {
    pub fn new(req: &CollectRequest) -> Self {
        Self {
            num_eval: req.num_eval as u64,
            num_select: req.num_select as u64,
            num_steps: req.num_steps,
            seed: req.seed,
            iteration: req.iteration,
            next_eval: 0,
            next_select: 0,
            next_train: 0,
            // `num_steps == 0`: evaluation only, no train jobs.
            want_train: req.num_steps > 0,
            eval_done: BTreeMap::new(),
            select_done: BTreeMap::new(),
            train_done: BTreeMap::new(),
            prefix_end: 0,
            prefix_steps: 0,
            cutoff: None,
        }
    }

    /// The job a free worker should run next (`None`: nothing more to hand out).
    pub fn next_job(&mut self) -> Option<JobTicket> {
        let (kind, id, label) = if self.next_eval < self.num_eval {
            self.next_eval += 1;
            (JobKind::Eval, self.next_eval - 1, stream::EVAL_JOB)
        } else if self.next_select < self.num_select {
            self.next_select += 1;
            (JobKind::Select, self.next_select - 1, stream::SELECT_JOB)
        } else if self.want_train {
            self.next_train += 1;
            (JobKind::Train, self.next_train - 1, stream::TRAIN_JOB)
        } else {
            return None;
        };
        Some(JobTicket { kind, id, seed: derive(self.seed, &[label, self.iteration, id]) })
    }

    /// Hands out nothing more (a stop request); jobs in flight may still finish.
    pub fn stop(&mut self) {
        self.want_train = false;
        self.next_eval = self.num_eval;
        self.next_select = self.num_select;
    }

    /// Records a finished job. Returns the train steps of the prefix so far, and, when this
    /// completed the prefix, the id above which training jobs are to be cancelled.
    pub fn finish(&mut self, kind: JobKind, id: u64, traj: Trajectory) -> (usize, Option<u64>) {
        let mut cancel_above = None;
        match kind {
            JobKind::Eval => {
                self.eval_done.insert(id, traj);
            }
            JobKind::Select => {
                self.select_done.insert(id, traj);
            }
            JobKind::Train if self.cutoff.is_none_or(|c| id <= c) => {
                self.train_done.insert(id, traj);
                while self.cutoff.is_none() {
                    let Some(t) = self.train_done.get(&self.prefix_end) else {
                        break;
                    };
                    self.prefix_steps += t.buffer.len();
                    if self.prefix_steps >= self.num_steps {
                        self.cutoff = Some(self.prefix_end);
                        self.want_train = false;
                        cancel_above = Some(self.prefix_end);
                    }
                    self.prefix_end += 1;
                }
            }
            JobKind::Train => {}
        }
        (self.prefix_steps, cancel_above)
    }

    /// Whether the training prefix is complete (always, when no training was asked for).
    pub fn complete(&self) -> bool {
        self.num_steps == 0 || self.cutoff.is_some()
    }

    /// The prefix's training trajectories, the evaluation ones and the selection ones, each in
    /// job order.
    pub fn into_trajectories(self) -> [Vec<Trajectory>; 3] {
        let train = match self.cutoff {
            Some(c) => {
                self.train_done.into_iter().filter(|(id, _)| *id <= c).map(|(_, t)| t).collect()
            }
            None => Vec::new(),
        };
        [train, self.eval_done.into_values().collect(), self.select_done.into_values().collect()]
    }
}
