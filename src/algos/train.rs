//! The PPO training loop (roadrunner `PPO.do_iteration` + outer loop).
//!
//! Per iteration: broadcast parameters, collect (eval episodes first, then train trajectories),
//! save the evaluated (pre-update) weights if they set a new best `Test/Return`, optimize, save
//! `*_latest`, log. Deviations from the reference, on purpose:
//! * exactly `--num-eval-eps` eval episodes whenever an iteration evaluates (never NaN);
//! * after the last iteration the final weights are evaluated (`--num-eval-eps` episodes),
//!   printed and returned, outside the per-iteration rows, so a run stopped and continued with
//!   `--previous` produces the same rows as an uninterrupted one;
//! * `Time/Timesteps per Second (FULL)` uses the steps actually collected;
//! * wall-clock scalars go to `timing.csv`, everything else to `progress.csv`, so two runs with
//!   the same seed have byte-identical `progress.csv` files.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tch::Device;

use super::interrupt::{self, Interrupted};
use super::resume::{self, Restore, TrainState, RESUME_FILE};
use super::seeding::{derive, stream};
use super::tracking;
use super::{CollectRequest, PPOOptim, PolicySnapshot, PpoHyper, SamplerPool};
use crate::config::{DeviceArg, PpoArgs, UsageError};
use crate::envs::{self, Env};
use crate::logging::summary::FinalEval;
use crate::logging::{self, EventWriter, Experiment, RunStatus, RunSummary, ScalarTable};
use crate::policies::{load_checkpoint, save_checkpoint, NetSpec, RunningStats, StdSpec};

/// Columns of `progress.csv` (deterministic for a given seed).
pub const PROGRESS_COLUMNS: &[&str] = &[
    "Iteration",
    "Time/Total Timesteps",
    "Time/Timesteps per Iteration",
    "Train/Return",
    "Train/Episode Length",
    "Test/Return",
    "Test/Episode Length",
    tracking::FORWARD_SPEED,
    tracking::LATERAL_SPEED,
    tracking::VELOCITY_ERROR,
    "Optimizer/Actor Loss",
    "Optimizer/Critic Loss",
    "Optimizer/Mirror Loss",
    "Optimizer/KL",
    "Optimizer/Minibatches",
    "Policy/Std",
];

/// Columns of `timing.csv` (wall-clock measurements).
pub const TIMING_COLUMNS: &[&str] = &[
    "Iteration",
    "Time/Sample Time",
    "Time/Sample Rate",
    "Time/Ideal Sample Rate",
    "Time/Overhead Loss",
    "Time/Optimize Time",
    "Time/Timesteps per Second (FULL)",
    "Time/Elapsed",
];

/// How the loop reports to the terminal.
#[derive(Debug, Clone, Copy, Default)]
pub struct TrainOptions {
    /// No per-iteration lines and no progress bar (tests).
    pub quiet: bool,
}

#[derive(Debug, Clone)]
pub struct TrainOutcome {
    pub run_dir: PathBuf,
    pub iterations: u64,
    pub total_timesteps: u64,
    pub best_test_return: Option<f64>,
    /// Mean return of the deterministic evaluation of the final weights.
    pub final_test_return: Option<f64>,
    pub final_test_len: Option<f64>,
    /// That evaluation in full (also in `summary.json`).
    pub final_eval: Option<FinalEval>,
    /// True when Ctrl-C/SIGTERM stopped the run early.
    pub interrupted: bool,
}

/// Restores networks, optimizer and counters from a `--previous` run directory and returns
/// them with the run's `--logdir`. Changes nothing on disk except removing temp files a killed
/// process left there, and fails before anything is created if the run does not fit.
fn restore_previous(
    args: &PpoArgs,
    prev: &std::path::Path,
    spec: &NetSpec,
    optim: &mut PPOOptim,
) -> Result<(TrainState, PathBuf)> {
    let exp = logging::load_previous(prev)?;
    for stale in crate::fsutil::sweep_stale_temps(prev)? {
        eprintln!("removed {} (left by a killed process)", stale.display());
    }
    if exp.args.env != args.env {
        return Err(UsageError(format!(
            "--previous {} is a run of env '{}', not '{}'",
            prev.display(),
            exp.args.env,
            args.env
        ))
        .into());
    }
    if &exp.net != spec {
        return Err(UsageError(format!(
            "--previous {}: network mismatch: the previous run has ({}), this run would build ({})",
            prev.display(),
            exp.net,
            spec
        ))
        .into());
    }
    let path = prev.join(RESUME_FILE);
    if !path.is_file() {
        anyhow::bail!(
            "--previous {}: no {RESUME_FILE}; the run stopped before completing an iteration{}",
            prev.display(),
            logging::RunSummary::failure_note(prev)
        );
    }
    let what = if args.previous_best { Restore::CountersOnly } else { Restore::Everything };
    let state = resume::load(&path, optim, what)
        .with_context(|| format!("--previous {}: cannot restore the run", prev.display()))?;
    if args.previous_best {
        for name in ["actor.safetensors", "critic.safetensors"] {
            let vs = if name.starts_with("actor") {
                optim.actor_mut().var_store_mut()
            } else {
                optim.critic_mut().var_store_mut()
            };
            let file = prev.join(name);
            if !file.is_file() {
                anyhow::bail!(
                    "--previous-best: {} has no best-eval checkpoint {name} (it never evaluated)",
                    prev.display()
                );
            }
            load_checkpoint(vs, &file)
                .with_context(|| format!("--previous-best: loading {}", file.display()))?;
        }
    }
    Ok((state, exp.args.logdir))
}

/// Writes `actor{suffix}.safetensors` and `critic{suffix}.safetensors` (atomically each).
fn save_pair(optim: &PPOOptim, dir: &std::path::Path, suffix: &str) -> Result<()> {
    save_checkpoint(optim.actor().var_store(), &dir.join(format!("actor{suffix}.safetensors")))?;
    save_checkpoint(optim.critic().var_store(), &dir.join(format!("critic{suffix}.safetensors")))
}

/// Resolves `--device`; `cuda` without a usable GPU is a usage error.
pub fn resolve_device(device: DeviceArg) -> Result<Device, UsageError> {
    match device {
        DeviceArg::Cpu => Ok(Device::Cpu),
        DeviceArg::Cuda if tch::Cuda::is_available() => Ok(Device::Cuda(0)),
        DeviceArg::Cuda => Err(UsageError(
            "--device cuda: no CUDA GPU is available to libtorch (no GPU, no driver, or the \
             CPU-only libtorch from scripts/setup.sh; rerun it with GAIT_TORCH=cuda)"
                .into(),
        )),
    }
}

/// Builds the network spec for an env of the given sizes.
pub fn net_spec(args: &PpoArgs, obs_dim: usize, act_dim: usize) -> Result<NetSpec, UsageError> {
    if args.arch == crate::policies::Arch::Lstm && args.layers.windows(2).any(|w| w[0] != w[1]) {
        let layers: Vec<String> = args.layers.iter().map(usize::to_string).collect();
        return Err(UsageError(format!(
            "--arch lstm needs equal --layers widths (one stacked LSTM), got {}",
            layers.join(",")
        )));
    }
    let values = if let Some(array) = &args.std_array {
        if array.len() != act_dim {
            return Err(UsageError(format!(
                "--std-array has {} values but env '{}' has {act_dim} action{}",
                array.len(),
                args.env,
                if act_dim == 1 { "" } else { "s" }
            )));
        }
        array.iter().map(|&s| s as f32).collect()
    } else {
        vec![args.std as f32; act_dim]
    };
    let std = if args.learn_std {
        StdSpec::Learned
    } else if args.learn_log_std {
        StdSpec::LogParam(values)
    } else {
        StdSpec::Fixed(values)
    };
    Ok(NetSpec {
        obs_dim,
        act_dim,
        arch: args.arch,
        layers: args.layers.clone(),
        nonlinearity: args.nonlinearity,
        std,
    })
}

/// The most sampler workers per available core. Each worker is a thread with its own env
/// and network copy; far past the core count they only add switching (1000 workers on 2 cores
/// ran 7x slower than 2) and, in the millions, exhaust threads.
pub const MAX_WORKERS_PER_CORE: usize = 16;

/// Bytes per parameter the process holds: actor+critic as f32 parameters, gradients, the
/// optimizer's flat copy and two Adam moments (5 x 4), the f64 broadcast snapshot (8), plus
/// one f32 copy per sampler worker (added by [`check_resources`]).
const BYTES_PER_PARAM: u128 = 5 * 4 + 8;

/// Checks the worker count and the network's memory before anything is allocated or created;
/// returns a warning for oversubscribed workers.
pub fn check_resources(
    spec: &NetSpec,
    workers: usize,
    cores: usize,
    available_bytes: Option<u128>,
) -> Result<Option<String>, UsageError> {
    let cap = MAX_WORKERS_PER_CORE * cores;
    if workers > cap {
        return Err(UsageError(format!(
            "--workers {workers} is more than {MAX_WORKERS_PER_CORE} per core ({cores} cores, \
             at most {cap}); past the core count extra workers only slow sampling down"
        )));
    }
    let params = spec.num_params();
    let needed = params * (BYTES_PER_PARAM + 4 * workers as u128);
    if let Some(available) = available_bytes {
        if needed > available {
            let layers: Vec<String> = spec.layers.iter().map(usize::to_string).collect();
            return Err(UsageError(format!(
                "--layers {}: the actor and critic have {params:.3e} parameters, about {:.1} GB \
                 with {workers} workers, more than the {:.1} GB of memory available",
                layers.join(","),
                needed as f64 / 1e9,
                available as f64 / 1e9,
            )));
        }
    }
    Ok((workers > cores).then(|| {
        format!(
            "warning: --workers {workers} on {cores} cores: sampling is fastest with one worker \
             per core; results do not depend on the worker count"
        )
    }))
}

/// `MemAvailable` from `/proc/meminfo` (Linux), in bytes.
fn available_memory() -> Option<u128> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u128 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Steps for the terminal line: `41.0k`, `3.41M`.
fn human_steps(n: u64) -> String {
    if n < 1_000_000 {
        format!("{:.1}k", n as f64 / 1e3)
    } else {
        format!("{:.2}M", n as f64 / 1e6)
    }
}

fn make_envs(args: &PpoArgs, n: usize) -> Result<Vec<Box<dyn Env>>> {
    (0..n).map(|_| envs::make(&args.env, &args.env_args)).collect()
}

/// Serializes seeding libtorch's global generator and initializing the networks.
static INIT_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Trains with PPO as `args` says; `command` is recorded in `experiment.json`.
pub fn train_ppo(args: &PpoArgs, command: Vec<String>, opts: TrainOptions) -> Result<TrainOutcome> {
    args.validate()?;
    envs::spec(&args.env).map_err(|e| UsageError(e.to_string()))?;
    let device = resolve_device(args.device)?;
    let mut probe = envs::make(&args.env, &args.env_args)?;
    let (obs_dim, act_dim) = (probe.observation_size(), probe.action_size());
    let spec = net_spec(args, obs_dim, act_dim)?;
    let mirror_lists = match (probe.observation_mirror_indices(), probe.action_mirror_indices()) {
        (Some(o), Some(a)) => Some((o, a)),
        _ if args.mirror > 0.0 => {
            return Err(UsageError(format!(
                "--mirror {} needs mirror lists, and env '{}' has none (use --mirror 0)",
                args.mirror, args.env
            ))
            .into())
        }
        _ if args.mirror_augment => {
            return Err(UsageError(format!(
                "--mirror-augment needs mirror lists, and env '{}' has none",
                args.env
            ))
            .into())
        }
        _ => None,
    };
    let mut args = args.clone();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let workers = args.workers.unwrap_or(cores);
    args.workers = Some(workers);
    // Before any allocation: a network too large for the machine is refused with numbers.
    if let Some(warning) = check_resources(&spec, workers, cores, available_memory())? {
        eprintln!("{warning}");
    }

    // Network init and minibatch order are seeded; the optimizer uses --backprop-workers threads.
    tch::set_num_threads(args.backprop_workers as i32);
    let hp = PpoHyper {
        a_lr: args.a_lr,
        c_lr: args.c_lr,
        eps: args.eps,
        epochs: args.epochs,
        batch_size: args.batch_size,
        clip: args.clip,
        kl: args.kl,
        entropy_coeff: args.entropy_coeff,
        grad_clip: args.grad_clip,
        mirror: args.mirror,
        mirror_augment: args.mirror_augment,
    };
    let mut optim = {
        // libtorch's generator is process-global: seeding it and drawing the initial weights
        // happen under one lock, so the weights depend on --seed only, even when several
        // trainings share a process (the integration tests run them on parallel threads).
        let _init = INIT_LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        tch::manual_seed(derive(args.seed, &[stream::INIT]) as i64);
        PPOOptim::new(&spec, hp, device, mirror_lists.as_ref().map(|(o, a)| (o, a)))?
    };
    // With a mirror loss or augmentation the networks see mirrored states, so the normalizer's
    // statistics are made mirror-symmetric (`RunningStats::symmetrized`).
    let symmetric = |stats: crate::policies::RunningStats| match &mirror_lists {
        Some((obs_mirror, _)) if args.mirror > 0.0 || args.mirror_augment => {
            stats.symmetrized(obs_mirror)
        }
        _ => stats,
    };

    let (state, previous_logdir) = match &args.previous {
        Some(prev) => {
            let (state, logdir) = restore_previous(&args, prev, &spec, &mut optim)?;
            (state, Some(logdir))
        }
        None => (TrainState::default(), None),
    };

    let bar = if opts.quiet {
        ProgressBar::with_draw_target(Some(args.timesteps), ProgressDrawTarget::hidden())
    } else {
        ProgressBar::new(args.timesteps)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {human_pos}/{human_len} steps ({rate}, ETA {eta}) {msg}",
        )
        .expect("a valid progress template")
        .with_key("rate", |state: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{:.0} steps/s", state.per_sec());
        })
        .progress_chars("=> "),
    );
    bar.set_position(state.total_timesteps.min(args.timesteps));

    if args.prenorm && args.previous.is_none() {
        // The probe env is free again; prenormalization reseeds it per episode.
        bar.set_message(format!("prenormalizing ({} steps)", args.prenormalize_steps));
        let stats = super::prenorm::prenormalize(
            probe.as_mut(),
            optim.actor(),
            args.prenormalize_steps,
            args.traj_len,
            args.seed,
            &mut |n| bar.set_message(format!("prenormalizing ({n}/{})", args.prenormalize_steps)),
        );
        bar.set_message("");
        optim.set_normalizer(&symmetric(stats)).context("prenormalization")?;
    }
    let run_dir = match (&args.previous, &args.run_name) {
        (Some(prev), None) => {
            // A --logdir typed with --previous moves the continuation under it; otherwise it
            // goes beside the previous run.
            let under = previous_logdir
                .filter(|old| *old != args.logdir)
                .and_then(|_| prev.canonicalize().ok())
                .and_then(|p| p.parent().and_then(|r| r.file_name()).map(|r| r.to_owned()))
                .map(|run| args.logdir.join(&args.env).join(run));
            logging::create_continuation_dir(prev, under.as_deref())?
        }
        _ => {
            let run = args.run_name.clone().unwrap_or_else(|| logging::args_hash_name(&args));
            logging::create_run_dir(&args.logdir, &args.env, &run)?
        }
    };
    optim.set_dump_dir(run_dir.clone());
    let experiment = Experiment::new(command, args.clone(), spec.clone());
    experiment.save(&run_dir)?;

    // From here on the run dir exists: however the run ends, `summary.json` says how.
    let start = Instant::now();
    let mut saved = state.clone();
    let mut ctx = Loop {
        args: &args,
        run_dir: &run_dir,
        experiment: &experiment,
        optim: &mut optim,
        symmetric: &symmetric,
        bar: &bar,
        quiet: opts.quiet,
        start,
        workers,
    };
    let result = ctx.run(state, &mut saved);
    bar.finish_and_clear();
    let summary = RunSummary {
        status: match &result {
            Ok(o) if o.interrupted => RunStatus::Interrupted,
            Ok(_) => RunStatus::Completed,
            Err(_) => RunStatus::Failed,
        },
        iterations: saved.iteration,
        total_timesteps: saved.total_timesteps,
        elapsed_s: start.elapsed().as_secs_f64(),
        best_test_return: saved.best_test,
        final_eval: result.as_ref().ok().and_then(|o| o.final_eval.clone()),
        error: result.as_ref().err().map(|e| format!("{e:#}")),
    };
    if let Err(e) = summary.save(&run_dir) {
        eprintln!(
            "warning: cannot write {}: {e:#}",
            run_dir.join(logging::summary::SUMMARY_JSON).display()
        );
    }
    result
}

/// Everything the iteration loop borrows from the set-up.
struct Loop<'a, F: Fn(RunningStats) -> RunningStats> {
    args: &'a PpoArgs,
    run_dir: &'a PathBuf,
    experiment: &'a Experiment,
    optim: &'a mut PPOOptim,
    symmetric: &'a F,
    bar: &'a ProgressBar,
    quiet: bool,
    start: Instant,
    workers: usize,
}

impl<F: Fn(RunningStats) -> RunningStats> Loop<'_, F> {
    fn say(&self, line: String) {
        if !self.quiet {
            // Ignore a closed stdout (e.g. piped into `head`): training goes on.
            self.bar.suspend(|| {
                let _ = writeln!(std::io::stdout(), "{line}");
            });
        }
    }

    /// Runs iterations from `state` until `--timesteps` (or a stop request); `saved` follows
    /// the last iteration whose resume state is on disk.
    fn run(&mut self, state: TrainState, saved: &mut TrainState) -> Result<TrainOutcome> {
        let (args, run_dir) = (self.args, self.run_dir);
        let mut tb = EventWriter::create(run_dir)?;
        tb.text(0, "Config/experiment.info", &format!("```\n{}```", self.experiment.info()))?;
        let mut progress = ScalarTable::create(&run_dir.join("progress.csv"), PROGRESS_COLUMNS)?;
        let mut timing = ScalarTable::create(&run_dir.join("timing.csv"), TIMING_COLUMNS)?;
        let spec = self.experiment.net.clone();
        let mut pool = SamplerPool::spawn(
            make_envs(args, self.workers)?,
            &spec,
            args.discount,
            args.gae_lambda,
        )?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the tokio runtime")?;

        self.say(format!("run dir: {}", run_dir.display()));
        if let Some(prev) = &args.previous {
            self.say(format!(
                "continuing {} from iteration {} ({} steps)",
                prev.display(),
                state.iteration,
                state.total_timesteps
            ));
        }
        let TrainState {
            iteration: mut itr,
            total_timesteps: mut total_steps,
            mut best_test,
            mut best_train,
            mut gate_open,
            mut eval_next,
        } = state;
        let mut interrupted = false;
        while total_steps < args.timesteps {
            // Per-iteration stream: a resumed run shuffles exactly as an uninterrupted one.
            let mut minibatch_rng =
                ChaCha8Rng::seed_from_u64(derive(args.seed, &[stream::MINIBATCH, itr]));
            let itr_start = Instant::now();
            let evaluate = args.num_eval_eps > 0
                && gate_open
                && (itr % args.eval_freq as u64 == 0 || eval_next);
            let policy = PolicySnapshot::of(itr, self.optim.actor(), self.optim.critic());
            let request = CollectRequest {
                iteration: itr,
                seed: args.seed,
                num_steps: args.num_steps,
                traj_len: args.traj_len,
                num_eval: if evaluate { args.num_eval_eps } else { 0 },
            };
            let bar = self.bar;
            let mut on_steps =
                |n: usize| bar.set_position((total_steps + n as u64).min(args.timesteps));
            let collected =
                match runtime.block_on(pool.collect_with(&request, policy, &mut on_steps)) {
                    Ok(c) => c,
                    Err(e) if e.is::<Interrupted>() => {
                        interrupted = true;
                        break;
                    }
                    Err(e) => return Err(e),
                };
            let sample_time = itr_start.elapsed().as_secs_f64();
            let steps = collected.train.len();
            total_steps += steps as u64;
            let train_return = collected.train.mean_ep_return().unwrap_or(f64::NAN);
            let train_len = collected.train.mean_ep_len().unwrap_or(f64::NAN);

            let mut scalars: Vec<(&str, f64)> = vec![
                ("Iteration", itr as f64),
                ("Time/Total Timesteps", total_steps as f64),
                ("Time/Timesteps per Iteration", steps as f64),
                ("Train/Return", train_return),
                ("Train/Episode Length", train_len),
            ];
            let mut test_line = String::new();
            if let (Some(ret), Some(len)) =
                (collected.eval.mean_ep_return(), collected.eval.mean_ep_len())
            {
                scalars.push(("Test/Return", ret));
                scalars.push(("Test/Episode Length", len));
                test_line = format!(" | test {ret:8.2}");
                let walking = tracking::scalars(&collected.eval_episodes);
                if let Some(&(_, speed)) =
                    walking.iter().find(|(k, _)| *k == tracking::FORWARD_SPEED)
                {
                    test_line.push_str(&format!(" {speed:4.2} m/s"));
                }
                scalars.extend(walking);
                if best_test.is_none_or(|b| ret > b) {
                    best_test = Some(ret);
                    // The evaluated weights are the pre-update ones, still in the optimizer.
                    save_pair(self.optim, run_dir, "")?;
                }
            }
            if train_len > args.min_eplen_ratio_eval * args.traj_len as f64 {
                gate_open = true;
            }
            eval_next = gate_open && best_train.is_none_or(|b| train_return > b);
            if best_train.is_none_or(|b| train_return > b) {
                best_train = Some(train_return);
            }

            let optimize_start = Instant::now();
            let stats = self
                .optim
                .optimize(&collected.train, &mut minibatch_rng)
                .with_context(|| format!("iteration {itr}"))?;
            if args.update_norm {
                let mut stats = self.optim.actor().normalizer().stats();
                stats.update(&collected.train.states);
                self.optim.set_normalizer(&(self.symmetric)(stats))?;
            }
            let optimize_time = optimize_start.elapsed().as_secs_f64();
            save_pair(self.optim, run_dir, "_latest")?;
            if args.save_freq > 0 && itr % args.save_freq as u64 == 0 {
                save_pair(self.optim, run_dir, &format!("_{itr}"))?;
            }
            scalars.extend([
                ("Optimizer/Actor Loss", stats.actor_loss),
                ("Optimizer/Critic Loss", stats.critic_loss),
                ("Optimizer/Mirror Loss", stats.mirror_loss),
                ("Optimizer/KL", stats.kl),
                ("Optimizer/Minibatches", stats.minibatches as f64),
            ]);
            if let Some(std) = self.optim.actor().mean_std() {
                scalars.push(("Policy/Std", std));
            }
            let itr_time = itr_start.elapsed().as_secs_f64();
            let ideal = collected.worker_steps_per_s * self.workers as f64;
            let timings: Vec<(&str, f64)> = vec![
                ("Iteration", itr as f64),
                ("Time/Sample Time", sample_time),
                ("Time/Sample Rate", steps as f64 / 1000.0 / sample_time),
                ("Time/Ideal Sample Rate", ideal / 1000.0),
                ("Time/Overhead Loss", sample_time - steps as f64 / ideal.max(1e-9)),
                ("Time/Optimize Time", optimize_time),
                ("Time/Timesteps per Second (FULL)", (steps as f64 / itr_time).round()),
                ("Time/Elapsed", self.start.elapsed().as_secs_f64()),
            ];
            progress.write(&scalars)?;
            timing.write(&timings)?;
            let tb_scalars: Vec<(&str, f64)> = scalars
                .iter()
                .chain(&timings)
                .filter(|(k, _)| *k != "Iteration")
                .copied()
                .collect();
            tb.scalars(itr as i64, &tb_scalars)?;
            // Last: a kill -9 before this line repeats this iteration on resume (same numbers);
            // after it, the run continues with the next one.
            let next = TrainState {
                iteration: itr + 1,
                total_timesteps: total_steps,
                best_test,
                best_train,
                gate_open,
                eval_next,
            };
            resume::save(run_dir, self.optim, &next)?;
            *saved = next;
            self.bar.set_position(total_steps.min(args.timesteps));
            // At most 100 columns; losses and timings are in progress.csv and TensorBoard.
            self.say(format!(
                "iter {itr:4} | {:>7} steps | return {train_return:8.2} len {train_len:5.1}{test_line} \
                 | KL {:.4}{} | {:4.0}/s",
                human_steps(total_steps),
                stats.kl,
                if stats.early_stopped { "*" } else { " " },
                steps as f64 / itr_time,
            ));
            itr += 1;
            if interrupt::requested() {
                interrupted = true;
                break;
            }
        }
        if interrupted {
            self.bar.finish_and_clear();
            self.say(format!(
                "interrupted: {} holds iteration {} complete; continue with:\n  gait train ppo --previous {}",
                run_dir.display(),
                itr as i64 - 1,
                run_dir.display()
            ));
            return Ok(TrainOutcome {
                run_dir: run_dir.clone(),
                iterations: itr,
                total_timesteps: total_steps,
                best_test_return: best_test,
                final_test_return: None,
                final_test_len: None,
                final_eval: None,
                interrupted: true,
            });
        }
        let mut final_eval = None;
        if args.num_eval_eps > 0 {
            let policy = PolicySnapshot::of(itr, self.optim.actor(), self.optim.critic());
            let request = CollectRequest {
                iteration: itr,
                seed: args.seed,
                num_steps: 0,
                traj_len: args.traj_len,
                num_eval: args.num_eval_eps,
            };
            let collected = match runtime.block_on(pool.collect(&request, policy)) {
                Err(e) if e.is::<Interrupted>() => {
                    return Err(e.context("interrupted during the final evaluation"))
                }
                other => other?,
            };
            let eval = FinalEval {
                episodes: args.num_eval_eps,
                mean_return: collected.eval.mean_ep_return().unwrap_or(f64::NAN),
                mean_length: collected.eval.mean_ep_len().unwrap_or(f64::NAN),
                metrics: tracking::scalars(&collected.eval_episodes)
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect(),
            };
            let speeds: String =
                eval.metrics.iter().map(|(k, v)| format!(", {k} {v:.3}")).collect();
            self.say(format!(
                "final eval of the last weights ({} episodes): return {:.2}, episode length {:.1}{speeds}",
                eval.episodes, eval.mean_return, eval.mean_length
            ));
            final_eval = Some(eval);
        }
        self.say(format!(
            "done: {itr} iterations, {total_steps} steps in {:.1} s; best Test/Return {}; run dir {}",
            self.start.elapsed().as_secs_f64(),
            best_test.map_or("-".to_string(), |b| format!("{b:.2}")),
            run_dir.display()
        ));
        Ok(TrainOutcome {
            run_dir: run_dir.clone(),
            iterations: itr,
            total_timesteps: total_steps,
            best_test_return: best_test,
            final_test_return: final_eval.as_ref().map(|e| e.mean_return),
            final_test_len: final_eval.as_ref().map(|e| e.mean_length),
            final_eval,
            interrupted: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::{Arch, Nonlinearity};

    fn spec(layers: &[usize]) -> NetSpec {
        NetSpec {
            obs_dim: 40,
            act_dim: 10,
            arch: Arch::Ff,
            layers: layers.to_vec(),
            nonlinearity: Nonlinearity::Relu,
            std: StdSpec::Fixed(vec![0.2; 10]),
        }
    }

    #[test]
    fn resources_are_checked_with_numbers_in_the_message() {
        let small = spec(&[256, 256]);
        // Actor 41*256 + 257*256 + 257*10, critic with one output, plus 10 std entries.
        assert_eq!(
            small.num_params(),
            (41 * 256 + 257 * 256 + 257 * 10) + (41 * 256 + 257 * 256 + 257) + 10
        );
        assert_eq!(check_resources(&small, 2, 2, Some(1 << 30)).unwrap(), None);
        let warning = check_resources(&small, 3, 2, None).unwrap().expect("a warning");
        assert!(warning.contains("--workers 3 on 2 cores"), "{warning}");
        let err = check_resources(&small, 33, 2, None).unwrap_err().to_string();
        assert!(
            err.contains("--workers 33 is more than 16 per core (2 cores, at most 32)"),
            "{err}"
        );
        let huge = spec(&[100_000, 100_000]);
        let err = check_resources(&huge, 2, 2, Some(24_000_000_000)).unwrap_err().to_string();
        assert!(err.contains("--layers 100000,100000"), "{err}");
        assert!(err.contains("GB of memory available") && err.contains("24.0 GB"), "{err}");
        assert!(check_resources(&huge, 2, 2, None).is_ok(), "no memory figure, no refusal");
    }

    /// The estimate matches the networks libtorch builds (up to the std entries, which are a
    /// buffer unless learned).
    #[test]
    fn the_parameter_estimate_matches_the_built_networks() {
        for arch in [Arch::Ff, Arch::Lstm] {
            let mut s = spec(&[32, 32]);
            s.arch = arch;
            let actor = crate::policies::Actor::new(&s, Device::Cpu);
            let critic = crate::policies::Critic::new(&s, Device::Cpu);
            let trainable: i64 = [actor.var_store(), critic.var_store()]
                .iter()
                .flat_map(|vs| vs.trainable_variables())
                .map(|t| t.numel() as i64)
                .sum();
            let estimate = s.num_params() as i64;
            assert!(
                (0..=10).contains(&(estimate - trainable)),
                "{arch:?}: {estimate} vs {trainable}"
            );
        }
    }

    #[test]
    fn lstm_parameters_count_four_gates() {
        let mut s = spec(&[8, 8]);
        s.arch = Arch::Lstm;
        let lstm = |i: u128, h: u128| 4 * (i + h + 2) * h;
        let expected = (lstm(40, 8) + lstm(8, 8) + 9 * 10) + (lstm(40, 8) + lstm(8, 8) + 9) + 10;
        assert_eq!(s.num_params(), expected);
    }
}
