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
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
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
use crate::logging::{self, EventWriter, Experiment, ScalarTable};
use crate::policies::{load_checkpoint, save_checkpoint, NetSpec, StdSpec};

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
    /// True when Ctrl-C/SIGTERM stopped the run early.
    pub interrupted: bool,
}

/// Restores networks, optimizer and counters from a `--previous` run directory; changes
/// nothing on disk, and fails before anything is created if the run does not fit.
fn restore_previous(
    args: &PpoArgs,
    prev: &std::path::Path,
    spec: &NetSpec,
    optim: &mut PPOOptim,
) -> Result<TrainState> {
    let exp = logging::load_previous(prev)?;
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
            "--previous {}: no {RESUME_FILE}; the run stopped before completing an iteration",
            prev.display()
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
    Ok(state)
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
                "--std-array has {} values but env '{}' has {act_dim} actions",
                array.len(),
                args.env
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
    let workers = args
        .workers
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    args.workers = Some(workers);

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

    let state = match &args.previous {
        Some(prev) => restore_previous(&args, prev, &spec, &mut optim)?,
        None => TrainState::default(),
    };
    if args.prenorm && args.previous.is_none() {
        // The probe env is free again; prenormalization reseeds it per episode.
        let stats = super::prenorm::prenormalize(
            probe.as_mut(),
            optim.actor(),
            args.prenormalize_steps,
            args.traj_len,
            args.seed,
        );
        optim.set_normalizer(&symmetric(stats))?;
    }
    let run_dir = match (&args.previous, &args.run_name) {
        (Some(prev), None) => logging::create_continuation_dir(prev)?,
        _ => {
            let run = args.run_name.clone().unwrap_or_else(|| logging::args_hash_name(&args));
            logging::create_run_dir(&args.logdir, &args.env, &run)?
        }
    };
    optim.set_dump_dir(run_dir.clone());
    let experiment = Experiment {
        gait_version: env!("CARGO_PKG_VERSION").to_string(),
        command,
        args: args.clone(),
        net: spec.clone(),
    };
    experiment.save(&run_dir)?;
    let mut tb = EventWriter::create(&run_dir)?;
    tb.text(0, "Config/experiment.info", &format!("```\n{}```", experiment.info()))?;
    let mut progress = ScalarTable::create(&run_dir.join("progress.csv"), PROGRESS_COLUMNS)?;
    let mut timing = ScalarTable::create(&run_dir.join("timing.csv"), TIMING_COLUMNS)?;

    let mut pool =
        SamplerPool::spawn(make_envs(&args, workers)?, &spec, args.discount, args.gae_lambda)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;

    let bar = if opts.quiet {
        ProgressBar::with_draw_target(Some(args.timesteps), ProgressDrawTarget::hidden())
    } else {
        ProgressBar::new(args.timesteps)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {human_pos}/{human_len} steps ({per_sec}, ETA {eta})",
        )
        .expect("a valid progress template")
        .progress_chars("=> "),
    );
    let say = |line: String| {
        if !opts.quiet {
            // Ignore a closed stdout (e.g. piped into `head`): training goes on.
            bar.suspend(|| {
                let _ = writeln!(std::io::stdout(), "{line}");
            });
        }
    };
    say(format!("run dir: {}", run_dir.display()));
    if let Some(prev) = &args.previous {
        say(format!(
            "continuing {} from iteration {} ({} steps)",
            prev.display(),
            state.iteration,
            state.total_timesteps
        ));
    }

    let start = Instant::now();
    let TrainState {
        iteration: mut itr,
        total_timesteps: mut total_steps,
        mut best_test,
        mut best_train,
        mut gate_open,
        mut eval_next,
    } = state;
    bar.set_position(total_steps.min(args.timesteps));
    let mut interrupted = false;
    while total_steps < args.timesteps {
        // Per-iteration stream: a resumed run shuffles exactly as an uninterrupted one.
        let mut minibatch_rng =
            ChaCha8Rng::seed_from_u64(derive(args.seed, &[stream::MINIBATCH, itr]));
        let itr_start = Instant::now();
        let evaluate =
            args.num_eval_eps > 0 && gate_open && (itr % args.eval_freq as u64 == 0 || eval_next);
        let policy = PolicySnapshot::of(itr, optim.actor(), optim.critic());
        let request = CollectRequest {
            iteration: itr,
            seed: args.seed,
            num_steps: args.num_steps,
            traj_len: args.traj_len,
            num_eval: if evaluate { args.num_eval_eps } else { 0 },
        };
        let collected = match runtime.block_on(pool.collect(&request, policy)) {
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
            test_line = format!(" | test {ret:9.2}");
            let walking = tracking::scalars(&collected.eval_episodes);
            if let Some(&(_, speed)) = walking.iter().find(|(k, _)| *k == tracking::FORWARD_SPEED) {
                test_line.push_str(&format!(" | fwd {speed:5.2} m/s"));
            }
            scalars.extend(walking);
            if best_test.is_none_or(|b| ret > b) {
                best_test = Some(ret);
                // The evaluated weights are the pre-update ones, still in the optimizer.
                save_pair(&optim, &run_dir, "")?;
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
        let stats = optim.optimize(&collected.train, &mut minibatch_rng).with_context(|| {
            format!("iteration {itr}: the PPO update failed; run dir {}", run_dir.display())
        })?;
        if args.update_norm {
            let mut stats = optim.actor().normalizer().stats();
            stats.update(&collected.train.states);
            optim.set_normalizer(&symmetric(stats))?;
        }
        let optimize_time = optimize_start.elapsed().as_secs_f64();
        save_pair(&optim, &run_dir, "_latest")?;
        if args.save_freq > 0 && itr % args.save_freq as u64 == 0 {
            save_pair(&optim, &run_dir, &format!("_{itr}"))?;
        }
        scalars.extend([
            ("Optimizer/Actor Loss", stats.actor_loss),
            ("Optimizer/Critic Loss", stats.critic_loss),
            ("Optimizer/Mirror Loss", stats.mirror_loss),
            ("Optimizer/KL", stats.kl),
            ("Optimizer/Minibatches", stats.minibatches as f64),
        ]);
        if let Some(std) = optim.actor().mean_std() {
            scalars.push(("Policy/Std", std));
        }
        let itr_time = itr_start.elapsed().as_secs_f64();
        let ideal = collected.worker_steps_per_s * workers as f64;
        let timings: Vec<(&str, f64)> = vec![
            ("Iteration", itr as f64),
            ("Time/Sample Time", sample_time),
            ("Time/Sample Rate", steps as f64 / 1000.0 / sample_time),
            ("Time/Ideal Sample Rate", ideal / 1000.0),
            ("Time/Overhead Loss", sample_time - steps as f64 / ideal.max(1e-9)),
            ("Time/Optimize Time", optimize_time),
            ("Time/Timesteps per Second (FULL)", (steps as f64 / itr_time).round()),
            ("Time/Elapsed", start.elapsed().as_secs_f64()),
        ];
        progress.write(&scalars)?;
        timing.write(&timings)?;
        let tb_scalars: Vec<(&str, f64)> =
            scalars.iter().chain(&timings).filter(|(k, _)| *k != "Iteration").copied().collect();
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
        resume::save(&run_dir, &optim, &next)?;
        bar.set_position(total_steps.min(args.timesteps));
        say(format!(
            "iter {itr:4} | steps {total_steps:9} | return {train_return:9.2} | eplen {train_len:6.1}{test_line} \
             | KL {:.4}{} | actor {:8.4} | critic {:9.4} | mirror {:.4} | {:.0} steps/s",
            stats.kl,
            if stats.early_stopped { "*" } else { " " },
            stats.actor_loss,
            stats.critic_loss,
            stats.mirror_loss,
            steps as f64 / itr_time,
        ));
        itr += 1;
        if interrupt::requested() {
            interrupted = true;
            break;
        }
    }
    bar.finish_and_clear();
    if interrupted {
        say(format!(
            "interrupted: {} holds iteration {} complete; continue with:\n  gait train ppo --previous {}",
            run_dir.display(),
            itr.saturating_sub(1),
            run_dir.display()
        ));
        return Ok(TrainOutcome {
            run_dir,
            iterations: itr,
            total_timesteps: total_steps,
            best_test_return: best_test,
            final_test_return: None,
            final_test_len: None,
            interrupted: true,
        });
    }
    let (mut final_test_return, mut final_test_len) = (None, None);
    if args.num_eval_eps > 0 {
        let policy = PolicySnapshot::of(itr, optim.actor(), optim.critic());
        let request = CollectRequest {
            iteration: itr,
            seed: args.seed,
            num_steps: 0,
            traj_len: args.traj_len,
            num_eval: args.num_eval_eps,
        };
        let eval = runtime.block_on(pool.collect(&request, policy))?.eval;
        final_test_return = eval.mean_ep_return();
        final_test_len = eval.mean_ep_len();
        say(format!(
            "final eval of the last weights ({} episodes): return {:.2}, episode length {:.1}",
            args.num_eval_eps,
            final_test_return.unwrap_or(f64::NAN),
            final_test_len.unwrap_or(f64::NAN)
        ));
    }
    say(format!(
        "done: {itr} iterations, {total_steps} steps in {:.1} s; best Test/Return {}; run dir {}",
        start.elapsed().as_secs_f64(),
        best_test.map_or("-".to_string(), |b| format!("{b:.2}")),
        run_dir.display()
    ));
    Ok(TrainOutcome {
        run_dir,
        iterations: itr,
        total_timesteps: total_steps,
        best_test_return: best_test,
        final_test_return,
        final_test_len,
        interrupted: false,
    })
}
