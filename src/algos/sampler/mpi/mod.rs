//! Sampling over MPI ranks (`--features mpi`; launched by `mpirun` or `srun --mpi=pmix`).
//!
//! Rank 0 is the learner and samples with its own pool; every other rank runs a sampler pool
//! of the same worker count and serves jobs ([`serve`]). One schedule ([`Schedule`]) keeps every
//! worker of every rank busy, exactly as the local pool does, so a trajectory is still a pure
//! function of (parameters, job seed) and the prefix cut is the same: K ranks give the
//! `progress.csv` of one process with the same seed.
//!
//! Protocol (point-to-point, one tag per direction, messages are postcard-encoded
//! [`ToWorker`] / [`ToLearner`]):
//! 1. Rank 0 sends `Setup` (the run's config and network); each rank builds its pool, computes
//!    its [`Fingerprint`] and answers `Hello`. Rank 0 refuses to start on any difference,
//!    naming the rank, its host and what differs.
//! 2. Each iteration: `Begin` carries the parameters (normalizers included) to every rank; then
//!    `Job`s go to ranks with an idle worker and `Result`s come back tagged with their job id;
//!    `Cancel` forwards the prefix cut. Busy ranks send a `Heartbeat` every second.
//! 3. `Stop` ends the serving ranks.
//!
//! Faults: MPI has no timeouts, so rank 0 polls. A rank with jobs in flight that says nothing
//! for [`DEADLINE`] ends the job (`MPI_Abort`) with a message naming the rank and host; a rank
//! that dies ends it through the launcher. Either way the run directory holds the last complete
//! iteration and `--previous` continues it exactly.

mod learner;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use mpi::environment::Universe;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use serde::{Deserialize, Serialize};

use super::fingerprint::{own_command, Fingerprint};
use super::Collect;
use super::{
    assemble, record, CollectRequest, Collected, Job, JobKind, JobOutput, JobSpec, PolicySnapshot,
    RankStats, SamplerPool, Schedule, Trajectory,
};
use crate::config::TrainConfig;
use crate::envs;
use crate::policies::{NetSpec, ParamSnapshot};

const TO_WORKER: i32 = 1;
const TO_LEARNER: i32 = 2;

/// How long a rank with jobs in flight may stay silent before the job is ended.
pub const DEADLINE: Duration = Duration::from_secs(5);
/// How often a busy serving rank says it is alive.
const HEARTBEAT: Duration = Duration::from_secs(1);

/// MPI, when this process was started by an MPI launcher (Open MPI's `mpirun`, or a PMI/PMIx
/// launcher such as `srun --mpi=pmix`). Kept alive for the whole process: dropping it
/// finalizes MPI.
pub fn init() -> Option<Universe> {
    let launched = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some());
    if !launched {
        return None;
    }
    mpi::initialize()
}

/// This process's rank and the world's size (MPI initialized).
pub fn rank_and_size() -> (i32, i32) {
    let world = SimpleCommunicator::world();
    (world.rank(), world.size())
}

#[derive(Serialize, Deserialize)]
enum ToWorker {
    Setup {
        config: Box<TrainConfig>,
        net: NetSpec,
    },
    /// The refusal of a mismatched rank (it exits with this message).
    Refused(String),
    Begin {
        version: u64,
        actor: ParamSnapshot,
        critic: ParamSnapshot,
    },
    Job(JobSpec),
    Cancel {
        above: u64,
    },
    Stop,
}

#[derive(Serialize, Deserialize)]
enum ToLearner {
    Hello {
        workers: usize,
        host: String,
        fingerprint: Fingerprint,
    },
    Result {
        worker: usize,
        id: u64,
        kind: JobKind,
        seed: u64,
        /// Boxed: a trajectory is far larger than the other messages (the encoding is the
        /// same as unboxed).
        result: Box<Result<Option<Trajectory>, String>>,
    },
    Heartbeat,
}

fn encode<T: Serialize>(msg: &T) -> Result<Vec<u8>> {
    postcard::to_stdvec(msg).context("encoding an MPI message")
}

fn send(world: &SimpleCommunicator, rank: i32, tag: i32, msg: &impl Serialize) -> Result<usize> {
    let start = Instant::now();
    let bytes = encode(msg)?;
    // A send blocks while the peer's link is down: the watchdog ends the process then.
    SENDING_TO.store(rank as i64, Ordering::SeqCst);
    SENDING_SINCE.store(epoch_ms(), Ordering::SeqCst);
    world.process_at_rank(rank).send_with_tag(&bytes[..], tag);
    SENDING_SINCE.store(0, Ordering::SeqCst);
    COMM_NANOS.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
    Ok(bytes.len())
}

/// When the send in progress began (ms since the epoch; 0: none) and to which rank.
static SENDING_SINCE: AtomicU64 = AtomicU64::new(0);
static SENDING_TO: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(-1);

fn epoch_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_millis() as u64)
}

/// Ends this process when one send has blocked for [`DEADLINE`] (MPI cannot time out a send;
/// the launcher then ends the other ranks). No MPI call is made from this thread.
fn start_send_watchdog() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new().name("mpi-watchdog".into()).spawn(|| loop {
            std::thread::sleep(Duration::from_millis(200));
            let since = SENDING_SINCE.load(Ordering::SeqCst);
            if since != 0 && epoch_ms().saturating_sub(since) > DEADLINE.as_millis() as u64 {
                crate::stdio::eline(format!(
                    "error: rank {} has not answered for {} s: a send to it is blocked (its link \
                     is down or it stopped); the run dir holds the last complete iteration \
                     (continue with --previous)",
                    SENDING_TO.load(Ordering::SeqCst),
                    DEADLINE.as_secs()
                ));
                // SAFETY: `_exit` ends the process and cannot return; files are written
                // atomically, so nothing is left half-written.
                unsafe { libc::_exit(1) };
            }
        });
    });
}

/// Time this process spent encoding, sending, receiving and decoding messages (ns).
static COMM_NANOS: AtomicU64 = AtomicU64::new(0);

/// A waiting message with `tag`, from any rank: `(rank, message, bytes)`.
fn try_receive<T: for<'de> Deserialize<'de>>(
    world: &SimpleCommunicator,
    tag: i32,
) -> Result<Option<(i32, T, usize)>> {
    let Some(probed) = world.any_process().immediate_matched_probe_with_tag(tag) else {
        return Ok(None);
    };
    let start = Instant::now();
    let (bytes, status) = probed.matched_receive_vec::<u8>();
    let decoded = postcard::from_bytes(&bytes)
        .with_context(|| format!("decoding a message from rank {}", status.source_rank()))?;
    COMM_NANOS.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
    Ok(Some((status.source_rank(), decoded, bytes.len())))
}

fn host() -> String {
    mpi::environment::processor_name().unwrap_or_else(|_| "unknown host".to_string())
}

/// One serving rank, as rank 0 sees it.
struct Remote {
    rank: i32,
    host: String,
    workers: usize,
    idle: usize,
    in_flight: usize,
    last_heard: Instant,
}

/// Rank 0's sampler: its own pool plus every other rank's (implements the runner's
/// [`Collect`] seam).
pub struct MpiSampler {
    world: SimpleCommunicator,
    pool: SamplerPool,
    remotes: Vec<Remote>,
}

impl MpiSampler {
    /// Sends the run to every rank, waits for each to build its pool, and compares their
    /// fingerprints with this rank's.
    pub fn connect(config: &TrainConfig, spec: &NetSpec, workers: usize) -> Result<Self> {
        let world = SimpleCommunicator::world();
        let size = world.size();
        start_send_watchdog();
        let mine = Fingerprint::of(config)?;
        for rank in 1..size {
            let setup = ToWorker::Setup { config: Box::new(config.clone()), net: spec.clone() };
            send(&world, rank, TO_WORKER, &setup)?;
        }
        let mut remotes: Vec<Option<Remote>> = (1..size).map(|_| None).collect();
        let start = Instant::now();
        let mut refusals = Vec::new();
        while remotes.iter().any(Option::is_none) {
            match try_receive::<ToLearner>(&world, TO_LEARNER)? {
                Some((rank, ToLearner::Hello { workers, host, fingerprint }, _)) => {
                    let diff = fingerprint.differences(&mine);
                    if !diff.is_empty() {
                        refusals.push(format!("rank {rank} ({host}) differs: {}", diff.join("; ")));
                    }
                    remotes[rank as usize - 1] = Some(Remote {
                        rank,
                        host,
                        workers,
                        idle: workers,
                        in_flight: 0,
                        last_heard: Instant::now(),
                    });
                }
                Some(_) => bail!("a rank spoke before saying hello"),
                None => {
                    // Building envs (MuJoCo models) takes seconds; a rank that never answers
                    // is a dead or unreachable one.
                    if start.elapsed() > DEADLINE * 6 {
                        let missing: Vec<String> = remotes
                            .iter()
                            .enumerate()
                            .filter(|(_, r)| r.is_none())
                            .map(|(i, _)| (i + 1).to_string())
                            .collect();
                        abort(
                            &world,
                            &format!("ranks {} never answered the setup", missing.join(", ")),
                        );
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
        if !refusals.is_empty() {
            let why = refusals.join("\n");
            for rank in 1..size {
                let _ = send(&world, rank, TO_WORKER, &ToWorker::Refused(why.clone()));
            }
            bail!("the ranks do not agree, refusing to start:\n{why}");
        }
        let envs = (0..workers)
            .map(|_| envs::make(&config.run.env, &config.env))
            .collect::<Result<Vec<_>>>()?;
        let pool =
            SamplerPool::spawn(envs, spec, config.sampler.discount, config.sampler.gae_lambda)?;
        let remotes = remotes.into_iter().flatten().collect();
        Ok(Self { world, pool, remotes })
    }

    fn cancel_remotes(&self, above: u64) -> Result<usize> {
        let mut bytes = 0;
        for remote in &self.remotes {
            bytes += send(&self.world, remote.rank, TO_WORKER, &ToWorker::Cancel { above })?;
        }
        Ok(bytes)
    }
}

impl Collect for MpiSampler {
    fn collect(
        &mut self,
        req: &CollectRequest,
        policy: Arc<PolicySnapshot>,
        on_steps: &mut dyn FnMut(usize),
    ) -> Result<Collected> {
        let mut bytes = 0usize;
        let comm_before = COMM_NANOS.load(Ordering::Relaxed);
        let begin_start = Instant::now();
        bytes += self.broadcast(&policy)?;
        let broadcast_s = begin_start.elapsed().as_secs_f64();
        let cancel_above = Arc::new(AtomicU64::new(u64::MAX));
        let mut idle: Vec<usize> = (0..self.pool.num_workers()).rev().collect();
        let mut local_in_flight = 0usize;
        let mut schedule = Schedule::new(req);
        let mut reported = 0usize;
        let mut stopping = false;
        // Training steps per rank (rank 0 first), from every finished trajectory.
        let mut rank_steps = vec![0usize; 1 + self.remotes.len()];
        loop {
            if crate::algos::interrupt::requested() && !stopping {
                stopping = true;
                schedule.stop();
                cancel_above.store(0, Ordering::Relaxed);
                bytes += self.cancel_remotes(0)?;
            }
            let (local, sent) =
                self.dispatch(&mut schedule, &mut idle, req, &policy, &cancel_above)?;
            local_in_flight += local;
            bytes += sent;
            let remote_in_flight: usize = self.remotes.iter().map(|r| r.in_flight).sum();
            if local_in_flight + remote_in_flight == 0 {
                break;
            }
            let mut heard = false;
            let mut outputs: Vec<(usize, String, JobOutput)> = Vec::new();
            if let Some(out) = self.pool.try_output()? {
                heard = true;
                local_in_flight -= 1;
                idle.push(out.worker);
                outputs.push((0, format!("0.{}", out.worker), out));
            }
            if let Some(n) = self.receive(&mut outputs)? {
                heard = true;
                bytes += n;
            }
            for (rank, label, out) in outputs {
                match record(&mut schedule, out, &label, &mut reported, on_steps) {
                    Ok((brought, cancel)) => {
                        rank_steps[rank] += brought;
                        if let Some(above) = cancel {
                            cancel_above.store(above, Ordering::Relaxed);
                            bytes += self.cancel_remotes(above)?;
                        }
                    }
                    Err(e) => {
                        cancel_above.store(0, Ordering::Relaxed);
                        self.cancel_remotes(0)?;
                        return Err(e);
                    }
                }
            }
            self.abort_on_silence();
            if !heard {
                std::thread::sleep(Duration::from_micros(500));
            }
        }
        if crate::algos::interrupt::requested() {
            return Err(crate::algos::interrupt::Interrupted.into());
        }
        let mut collected = assemble(schedule, self.pool.empty_buffer())?;
        let comm_s = (COMM_NANOS.load(Ordering::Relaxed) - comm_before) as f64 * 1e-9;
        collected.ranks = Some(RankStats { bytes, steps: rank_steps, broadcast_s, comm_s });
        Ok(collected)
    }

    fn ranks(&self) -> Option<Vec<usize>> {
        let remote = self.remotes.iter().map(|r| r.workers);
        Some(std::iter::once(self.pool.num_workers()).chain(remote).collect())
    }
}

impl Drop for MpiSampler {
    fn drop(&mut self) {
        release_servers();
    }
}

/// Whether the serving ranks were told to stop.
static RELEASED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Tells every serving rank to stop (once): when training ends, and when rank 0 ends without
/// training at all (a usage error, `--help`), so that no rank waits forever for a setup.
pub fn release_servers() {
    if RELEASED.swap(true, Ordering::SeqCst) {
        return;
    }
    let world = SimpleCommunicator::world();
    for rank in 1..world.size() {
        let _ = send(&world, rank, TO_WORKER, &ToWorker::Stop);
    }
}

/// Prints `why` and ends every rank (MPI has no other way out of a hung peer).
fn abort(world: &SimpleCommunicator, why: &str) -> ! {
    crate::stdio::eline(format!("error: {why}"));
    // MPI_Abort itself can block on a link that is down (it asks the launcher to end every
    // rank): this process ends after 2 s regardless, and the launcher sees it fail.
    let _ = std::thread::Builder::new().name("mpi-abort".into()).spawn(|| {
        std::thread::sleep(Duration::from_secs(2));
        // SAFETY: `_exit` ends the process and cannot return; files are written atomically.
        unsafe { libc::_exit(1) };
    });
    world.abort(1)
}

/// A test-only fault of this rank: `GAIT_TEST_FAULT=exit@R:I` or `hang@R:I` makes rank R exit
/// (code 3) or stop answering when iteration I begins.
fn injected_fault(rank: i32, version: u64) -> Option<&'static str> {
    let spec = std::env::var("GAIT_TEST_FAULT").ok()?;
    let (what, at) = spec.split_once('@')?;
    let (r, i) = at.split_once(':')?;
    (r.parse::<i32>().ok()? == rank && i.parse::<u64>().ok()? == version).then_some(match what {
        "exit" => "exit",
        _ => "hang",
    })
}

/// A serving rank (rank > 0): builds its pool from rank 0's setup and runs jobs until `Stop`.
pub fn serve() -> Result<()> {
    let world = SimpleCommunicator::world();
    let rank = world.rank();
    let Some((config, net)) = receive_setup(&world)? else { return Ok(()) };
    let workers = own_workers(&world, &config, &net);
    let envs = (0..workers)
        .map(|_| envs::make(&config.run.env, &config.env))
        .collect::<Result<Vec<_>>>()?;
    let pool = SamplerPool::spawn(envs, &net, config.sampler.discount, config.sampler.gae_lambda)?;
    let hello = ToLearner::Hello { workers, host: host(), fingerprint: Fingerprint::of(&config)? };
    send(&world, 0, TO_LEARNER, &hello)?;
    let mut server = Server {
        rank,
        pool,
        policy: None,
        cancel_above: Arc::new(AtomicU64::new(u64::MAX)),
        idle: (0..workers).rev().collect(),
    };
    let mut last_beat = Instant::now();
    loop {
        let mut heard = false;
        if let Some((_, msg, _)) = try_receive::<ToWorker>(&world, TO_WORKER)? {
            heard = true;
            if !server.handle(msg)? {
                return Ok(());
            }
        }
        if let Some(out) = server.pool.try_output()? {
            heard = true;
            server.idle.push(out.worker);
            let result = ToLearner::Result {
                worker: out.worker,
                id: out.id,
                kind: out.kind,
                seed: out.seed,
                result: Box::new(out.result),
            };
            send(&world, 0, TO_LEARNER, &result)?;
            last_beat = Instant::now();
        }
        if server.idle.len() < workers && last_beat.elapsed() > HEARTBEAT {
            send(&world, 0, TO_LEARNER, &ToLearner::Heartbeat)?;
            last_beat = Instant::now();
        }
        if !heard {
            std::thread::sleep(Duration::from_micros(500));
        }
    }
}

/// Rank 0's setup of the run, or `None` when it stops before sending one.
fn receive_setup(world: &SimpleCommunicator) -> Result<Option<(TrainConfig, NetSpec)>> {
    loop {
        match try_receive::<ToWorker>(world, TO_WORKER)? {
            Some((_, ToWorker::Setup { config, net }, _)) => return Ok(Some((*config, net))),
            Some((_, ToWorker::Stop, _)) => return Ok(None),
            Some(_) => bail!("rank {}: expected the setup first", world.rank()),
            None => std::thread::sleep(Duration::from_millis(1)),
        }
    }
}

/// This rank's sampler threads: its own `--workers` (a per-node count), else rank 0's; a bad
/// one, or one its memory and cores cannot hold, ends the job naming the rank.
fn own_workers(world: &SimpleCommunicator, config: &TrainConfig, net: &NetSpec) -> usize {
    let rank = world.rank();
    let workers = match own_command().1 {
        Some(Ok(n)) => n,
        Some(Err(e)) => abort(world, &format!("MPI rank {rank} ({}): {e}", host())),
        None => config.sampler.workers.unwrap_or(1),
    };
    let cores = crate::algos::available_cores();
    if let Err(e) = crate::algos::resources::check_resources(net, workers, cores, 0, None) {
        abort(world, &format!("MPI rank {rank} ({}): {e}", host()));
    }
    workers
}

/// A serving rank's pool and what rank 0 told it.
struct Server {
    rank: i32,
    pool: SamplerPool,
    /// The parameters of the iteration being sampled.
    policy: Option<Arc<PolicySnapshot>>,
    /// Jobs of a higher id than this are cancelled (rank 0 has enough steps).
    cancel_above: Arc<AtomicU64>,
    /// The workers without a job.
    idle: Vec<usize>,
}

impl Server {
    /// Acts on one message from rank 0; `false` when it says stop.
    fn handle(&mut self, msg: ToWorker) -> Result<bool> {
        let rank = self.rank;
        match msg {
            ToWorker::Begin { version, actor, critic } => {
                match injected_fault(rank, version) {
                    Some("exit") => std::process::exit(3),
                    Some(_) => loop {
                        std::thread::sleep(Duration::from_secs(3600));
                    },
                    None => {}
                }
                self.policy = Some(Arc::new(PolicySnapshot { version, actor, critic }));
                self.cancel_above = Arc::new(AtomicU64::new(u64::MAX));
            }
            ToWorker::Job(spec) => {
                let w = self
                    .idle
                    .pop()
                    .ok_or_else(|| anyhow!("rank {rank}: a job with no idle worker"))?;
                let policy = self
                    .policy
                    .clone()
                    .ok_or_else(|| anyhow!("rank {rank}: a job before the parameters"))?;
                let cancel_above = Arc::clone(&self.cancel_above);
                self.pool.dispatch(w, Job { spec, policy, cancel_above })?;
            }
            ToWorker::Cancel { above } => self.cancel_above.store(above, Ordering::Relaxed),
            ToWorker::Refused(why) => bail!("rank 0 refused this rank:\n{why}"),
            ToWorker::Stop => return Ok(false),
            ToWorker::Setup { .. } => bail!("rank {rank}: a second setup"),
        }
        Ok(true)
    }
}
