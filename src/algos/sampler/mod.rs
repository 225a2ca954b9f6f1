//! `AlgoSampler` workers: actors that each own one env and one copy of the actor and critic,
//! like the reference's Ray actors.
//!
//! Each worker runs on its own OS thread (so CPU-bound stepping and inference never block the
//! tokio runtime) with libtorch limited to one intra-op thread, and talks to the driver over
//! tokio channels. The driver ([`SamplerPool::collect`]) hands out whole-trajectory jobs to
//! whichever worker is free (Ray `wait` style) until enough steps are collected.
//!
//! Determinism, independent of timing and of the number of workers: job `k` of an iteration
//! always gets the same seed, which seeds both the env reset and the action noise, so its
//! trajectory is a pure function of (parameters, seed). The training buffer is the shortest
//! prefix of jobs `0, 1, 2, ...` whose steps reach `num_steps`; jobs past the prefix are
//! cancelled mid-trajectory (the reference never cancels its stragglers) and discarded.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use anyhow::{anyhow, bail, Context, Result};
use tch::Device;
use tokio::sync::mpsc;

mod episode;
#[cfg(feature = "mpi")]
mod fingerprint;
mod local;
#[cfg(feature = "mpi")]
pub mod mpi;
mod schedule;
mod step;
mod worker;

pub use local::{local_sampler, Collect, LocalSampler, MakeSampler};
pub use worker::AlgoSampler;

use schedule::Schedule;

use super::rollout::Rollout;
use super::{Buffer, EvalEpisode};
use crate::config::SelectionCommands;
use crate::envs::levels::Levels;
use crate::envs::Env;
use crate::logging::metrics::JobSeconds;
use crate::policies::{Actor, Critic, NetSpec, ParamSnapshot};

/// Parameters broadcast to the workers once per iteration.
#[derive(Debug)]
pub struct PolicySnapshot {
    /// Which iteration's parameters these are.
    pub version: u64,
    /// The actor's parameters and normalizer.
    pub actor: ParamSnapshot,
    /// The critic's parameters and normalizer.
    pub critic: ParamSnapshot,
}

impl PolicySnapshot {
    /// Copies the current parameters (normalizers included) of `actor` and `critic`.
    pub fn of(version: u64, actor: &Actor, critic: &Critic) -> Arc<Self> {
        Arc::new(Self {
            version,
            actor: ParamSnapshot::of(actor.var_store()),
            critic: ParamSnapshot::of(critic.var_store()),
        })
    }
}

/// What a sampler job collects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum JobKind {
    /// Stochastic actions, values recorded, truncated trajectories bootstrapped.
    Train,
    /// Deterministic actions (the mean), for `Test/*` statistics.
    Eval,
    /// Deterministic actions, pushed only with `--selection-push`, one per eval command and
    /// physics model (job `k`: command `k % n`, model `k / n`), for the tracking score that
    /// chooses the best-eval weights (`--best-by tracking` or `cells`).
    Select,
}

/// What a job runs, apart from the policy: the same on every transport (MPI sends it to the
/// ranks as is), built in one place ([`JobSpec::new`]) so that no transport runs a job of
/// another length or command set than the others.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct JobSpec {
    id: u64,
    kind: JobKind,
    seed: u64,
    max_len: usize,
    /// The commands of a selection job ([`tracking::selection_commands`]).
    select_commands: SelectionCommands,
    /// A selection job's pushes, up to this speed (m/s; 0: none).
    select_push: f32,
    /// Train steps of the run before this job's iteration.
    timesteps: u64,
    /// The step at which the env's gated stage began.
    stage_from: Option<u64>,
    /// The adaptive curriculum's levels.
    levels: Levels,
}

impl JobSpec {
    /// The job of `ticket` in the collection `req`.
    pub(crate) fn new(ticket: schedule::JobTicket, req: &CollectRequest) -> Self {
        Self {
            id: ticket.id,
            kind: ticket.kind,
            seed: ticket.seed,
            max_len: req.max_len(ticket.kind),
            select_commands: req.select_commands,
            select_push: req.select_push,
            timesteps: req.timesteps,
            stage_from: req.stage_from,
            levels: req.levels,
        }
    }
}

struct Job {
    spec: JobSpec,
    policy: Arc<PolicySnapshot>,
    /// Train jobs with an id above this value stop at their next step.
    cancel_above: Arc<AtomicU64>,
}

impl Job {
    /// The job of `ticket` in the collection `req`.
    fn new(
        ticket: schedule::JobTicket,
        req: &CollectRequest,
        policy: &Arc<PolicySnapshot>,
        cancel_above: &Arc<AtomicU64>,
    ) -> Self {
        Self {
            spec: JobSpec::new(ticket, req),
            policy: Arc::clone(policy),
            cancel_above: Arc::clone(cancel_above),
        }
    }
}

struct JobOutput {
    worker: usize,
    id: u64,
    kind: JobKind,
    seed: u64,
    /// `Ok(None)`: cancelled.
    result: Result<Option<Trajectory>, String>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Trajectory {
    buffer: Buffer,
    /// The worker's seconds on this job, from its reset to its last value.
    seconds: f64,
    /// The simulation blew up and the episode was cut before that step ([`crate::envs::Env::diverged`]).
    diverged: bool,
    /// Eval episodes: the fixed command and the per-step means of the env's metrics.
    episode: Option<EvalEpisode>,
}

/// What one iteration's collection asks for.
#[derive(Debug, Clone)]
pub struct CollectRequest {
    /// The iteration collecting.
    pub iteration: u64,
    /// Train steps collected before this iteration (what [`Env::set_training`] is told).
    pub timesteps: u64,
    /// The step at which the env's gated stage began (what [`Walking::set_stage`](crate::envs::Walking::set_stage) is told).
    pub stage_from: Option<u64>,
    /// The adaptive curriculum's levels (what [`Walking::set_levels`](crate::envs::Walking::set_levels) is told).
    pub levels: Levels,
    /// The run's seed (each trajectory's stream derives from it).
    pub seed: u64,
    /// Minimum train steps (whole trajectories).
    pub num_steps: usize,
    /// Maximum trajectory length.
    pub traj_len: usize,
    /// Deterministic evaluation episodes.
    pub num_eval: usize,
    /// Selection episodes (`JobKind::Select`): the env's eval commands times its physics
    /// models, or 0.
    pub num_select: usize,
    /// Maximum length of a selection episode.
    pub select_len: usize,
    /// The commands the selection episodes run (`tracking::selection_commands`).
    pub select_commands: SelectionCommands,
    /// The selection episodes' pushes: each U(0, this) m/s on the env's own interval (0: no
    /// pushes; `--selection-push`).
    pub select_push: f32,
}

impl CollectRequest {
    /// The longest episode a job of `kind` runs: `select_len` for selection episodes,
    /// `traj_len` for the others. One place, so that every transport (local workers, MPI
    /// ranks) cuts the same episodes.
    pub fn max_len(&self, kind: JobKind) -> usize {
        match kind {
            JobKind::Select => self.select_len,
            JobKind::Train | JobKind::Eval => self.traj_len,
        }
    }
}

/// One iteration's data.
#[derive(Debug)]
pub struct Collected {
    /// Train trajectories.
    pub train: Buffer,
    /// Evaluation episodes.
    pub eval: Buffer,
    /// One entry per eval episode, in job order.
    pub eval_episodes: Vec<EvalEpisode>,
    /// One entry per selection episode (`JobKind::Select`), in job order.
    pub select_episodes: Vec<EvalEpisode>,
    /// Mean per-trajectory sampling speed of one worker (steps/s), the reference's `avg_eff`.
    pub worker_steps_per_s: f64,
    /// Worker seconds on the jobs kept, by kind: where the sampling time went (the rest of
    /// the workers' time was idle or on jobs cancelled past the deterministic prefix).
    pub job_seconds: JobSeconds,
    /// Train episodes cut because the simulation blew up ([`crate::envs::Env::diverged`]).
    pub physics_resets: usize,
    /// With MPI ranks: what moved and who sampled what.
    pub ranks: Option<RankStats>,
}

/// One collection over MPI ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct RankStats {
    /// Bytes rank 0 sent and received.
    pub bytes: usize,
    /// Training steps each rank collected (rank 0 first).
    pub steps: Vec<usize>,
    /// Seconds rank 0 took to send the parameters to every rank.
    pub broadcast_s: f64,
    /// Seconds rank 0 spent encoding, sending, receiving and decoding messages, the
    /// parameters included.
    pub comm_s: f64,
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

struct WorkerHandle {
    jobs: mpsc::UnboundedSender<Job>,
    thread: Option<JoinHandle<()>>,
}

/// The pool of sampler actors.
pub struct SamplerPool {
    workers: Vec<WorkerHandle>,
    results: mpsc::UnboundedReceiver<JobOutput>,
    obs_dim: usize,
    act_dim: usize,
    /// The critic's own observation size (0: none).
    critic_dim: usize,
    discount: f64,
    gae_lambda: f64,
}

impl SamplerPool {
    /// Spawns `envs.len()` workers, each owning one of `envs`.
    pub fn spawn(
        envs: Vec<Box<dyn Env>>,
        spec: &NetSpec,
        discount: f64,
        gae_lambda: f64,
    ) -> Result<Self> {
        anyhow::ensure!(!envs.is_empty(), "at least one sampler worker is needed");
        let (result_tx, results) = mpsc::unbounded_channel();
        let mut workers = Vec::with_capacity(envs.len());
        for (id, env) in envs.into_iter().enumerate() {
            let (jobs, mut job_rx) = mpsc::unbounded_channel::<Job>();
            let result_tx = result_tx.clone();
            let spec = spec.clone();
            let thread = std::thread::Builder::new()
                .name(format!("sampler-{id}"))
                .spawn(move || {
                    // One intra-op thread per sampler: on small nets more threads only contend.
                    tch::set_num_threads(1);
                    let mut worker = AlgoSampler {
                        id,
                        rollout: Rollout::new(),
                        std: vec![0.0; env.action_size()],
                        env,
                        actor: Actor::new(&spec, Device::Cpu),
                        critic: Critic::new(&spec, Device::Cpu),
                        fast: None,
                        version: None,
                        discount,
                        gae_lambda,
                    };
                    while let Some(job) = job_rx.blocking_recv() {
                        let result = catch_unwind(AssertUnwindSafe(|| worker.run(&job)))
                            .map_err(|p| format!("panicked: {}", panic_message(&*p)))
                            .and_then(|r| r.map_err(|e| format!("{e:#}")));
                        let output = JobOutput {
                            worker: worker.id,
                            id: job.spec.id,
                            kind: job.spec.kind,
                            seed: job.spec.seed,
                            result,
                        };
                        if result_tx.send(output).is_err() {
                            break;
                        }
                    }
                })
                .context("spawning a sampler thread")?;
            workers.push(WorkerHandle { jobs, thread: Some(thread) });
        }
        Ok(Self {
            workers,
            results,
            obs_dim: spec.obs_dim,
            act_dim: spec.act_dim,
            critic_dim: spec.critic_obs_dim.unwrap_or(0),
            discount,
            gae_lambda,
        })
    }

    /// Sampler actors in the pool.
    pub fn num_workers(&self) -> usize {
        self.workers.len()
    }

    /// Hands `job` to worker `w` (which must be idle).
    fn dispatch(&self, w: usize, job: Job) -> Result<()> {
        self.workers[w].jobs.send(job).map_err(|_| anyhow!("sampler worker {w} has stopped"))
    }

    /// A finished job, if one is waiting.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    fn try_output(&mut self) -> Result<Option<JobOutput>> {
        match self.results.try_recv() {
            Ok(out) => Ok(Some(out)),
            Err(mpsc::error::TryRecvError::Empty) => Ok(None),
            Err(mpsc::error::TryRecvError::Disconnected) => bail!("all sampler workers stopped"),
        }
    }

    /// An empty buffer with this pool's shapes and discounting.
    fn empty_buffer(&self) -> Buffer {
        Buffer::new(self.obs_dim, self.act_dim, self.discount, self.gae_lambda)
            .with_critic_dim(self.critic_dim)
    }

    /// Collects one iteration: `num_eval` deterministic episodes and at least `num_steps` train
    /// steps in whole trajectories, reproducibly (see the module docs).
    pub async fn collect(
        &mut self,
        req: &CollectRequest,
        policy: Arc<PolicySnapshot>,
    ) -> Result<Collected> {
        self.collect_with(req, policy, &mut |_| {}).await
    }

    /// [`SamplerPool::collect`], calling `on_steps(n)` whenever the train steps kept so far
    /// grow to `n` (a progress bar that moves within an iteration).
    pub async fn collect_with(
        &mut self,
        req: &CollectRequest,
        policy: Arc<PolicySnapshot>,
        on_steps: &mut dyn FnMut(usize),
    ) -> Result<Collected> {
        let cancel_above = Arc::new(AtomicU64::new(u64::MAX));
        let mut idle: Vec<usize> = (0..self.workers.len()).rev().collect();
        let mut in_flight = 0usize;
        let mut schedule = Schedule::new(req);
        let mut reported = 0usize;
        loop {
            if super::interrupt::requested() {
                // Stop dispatching; in-flight jobs see the flag and return at once.
                schedule.stop();
            }
            while let Some(&w) = idle.last() {
                let Some(ticket) = schedule.next_job() else {
                    break;
                };
                self.dispatch(w, Job::new(ticket, req, &policy, &cancel_above))?;
                idle.pop();
                in_flight += 1;
            }
            if in_flight == 0 {
                break;
            }
            let out = self.results.recv().await.context("all sampler workers stopped")?;
            in_flight -= 1;
            idle.push(out.worker);
            let worker = out.worker.to_string();
            match record(&mut schedule, out, &worker, &mut reported, on_steps) {
                Ok((_, Some(above))) => cancel_above.store(above, Ordering::Relaxed),
                Ok(_) => {}
                Err(e) => {
                    // Stop the other workers' train jobs before reporting.
                    cancel_above.store(0, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
        if super::interrupt::requested() {
            return Err(super::interrupt::Interrupted.into());
        }
        assemble(schedule, self.empty_buffer())
    }
}

/// Records a finished job in `schedule` and reports the kept steps through `on_steps` when
/// they grew. Returns the training steps the job brought (0 when cancelled or an evaluation)
/// and, when it completed the prefix, the id above which jobs are to be cancelled; a failed
/// job is an error naming `worker`.
fn record(
    schedule: &mut Schedule,
    out: JobOutput,
    worker: &str,
    reported: &mut usize,
    on_steps: &mut dyn FnMut(usize),
) -> Result<(usize, Option<u64>)> {
    let traj = match out.result {
        Ok(Some(t)) => t,
        Ok(None) => return Ok((0, None)),
        Err(msg) => {
            let kind = match out.kind {
                JobKind::Train => "a training",
                JobKind::Eval => "an evaluation",
                JobKind::Select => "a selection",
            };
            bail!("sampler worker {worker} failed on {kind} episode (env seed {}): {msg}", out.seed)
        }
    };
    let brought = if out.kind == JobKind::Train { traj.buffer.len() } else { 0 };
    let (steps, cancel) = schedule.finish(out.kind, out.id, traj);
    if steps != *reported {
        *reported = steps;
        on_steps(steps);
    }
    Ok((brought, cancel))
}

/// One iteration's data from a completed schedule, trajectories in job order.
fn assemble(schedule: Schedule, empty: Buffer) -> Result<Collected> {
    anyhow::ensure!(schedule.complete(), "collection ended before reaching num_steps");
    let (mut train, mut eval) = (empty.clone(), empty);
    let mut speeds = Vec::new();
    let [train_trajectories, eval_trajectories, select_trajectories] = schedule.into_trajectories();
    // A fold from +0.0: `f64`'s `Sum` of nothing is −0.0, which the CSV would print as "-0".
    let seconds = |ts: &[Trajectory]| ts.iter().fold(0.0, |sum, t| sum + t.seconds);
    let job_seconds = JobSeconds {
        train: seconds(&train_trajectories),
        eval: seconds(&eval_trajectories),
        select: seconds(&select_trajectories),
    };
    let mut physics_resets = 0;
    for t in &train_trajectories {
        train.append(&t.buffer);
        speeds.push(t.buffer.len() as f64 / t.seconds.max(1e-9));
        physics_resets += usize::from(t.diverged);
    }
    let mut eval_episodes = Vec::new();
    for t in eval_trajectories {
        eval.append(&t.buffer);
        eval_episodes.extend(t.episode);
    }
    let select_episodes = select_trajectories.into_iter().filter_map(|t| t.episode).collect();
    let worker_steps_per_s = speeds.iter().sum::<f64>() / speeds.len().max(1) as f64;
    Ok(Collected {
        train,
        eval,
        eval_episodes,
        select_episodes,
        worker_steps_per_s,
        job_seconds,
        physics_resets,
        ranks: None,
    })
}

impl Drop for SamplerPool {
    fn drop(&mut self) {
        // Closing the job channels ends each worker loop.
        let threads: Vec<_> = self.workers.iter_mut().filter_map(|w| w.thread.take()).collect();
        self.workers.clear();
        for t in threads {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests;
