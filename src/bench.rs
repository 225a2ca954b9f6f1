//! `gait bench`: throughput numbers anyone can rerun. Output lines are `key=value` so scripts
//! can grep them (`policy_steps_per_s=`, `samples_per_s=`).

use std::time::{Duration, Instant};

use anyhow::Result;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tch::Device;

use crate::algos::rollout::{Flow, Rollout};
use crate::algos::{Buffer, PpoOptim, Symmetry};
use crate::config::PpoConfig;
use crate::envs::{self, EnvConfig, MirrorIndices};
use crate::policies::{Arch, NetSpec};

/// What `gait bench env` runs (flags: `crate::cli::BenchEnvFlags`).
#[derive(Debug, Clone, PartialEq)]
pub struct BenchEnvOptions {
    /// Env to step.
    pub env: String,
    /// Its settings.
    pub env_config: EnvConfig,
    /// How long to run.
    pub seconds: f64,
    /// Exactly this many policy steps instead of `seconds`: a fixed workload, so instruction
    /// counts (`valgrind --tool=callgrind`) compare between builds.
    pub steps: Option<usize>,
}

/// CPU time consumed by this thread so far (s). On a shared machine this is steadier than the
/// wall clock, which counts the time other jobs hold the core.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid out-pointer; CLOCK_THREAD_CPUTIME_ID is supported on Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Steps one env on this thread with uniform random actions in [-1, 1] (resets included) and
/// prints `policy_steps_per_s` (wall clock) and `cpu_policy_steps_per_s` (thread CPU time).
pub fn bench_env(args: &BenchEnvOptions) -> Result<f64> {
    args.env_config.check_for(&args.env).map_err(crate::config::UsageError)?;
    let mut env = envs::make(&args.env, &args.env_config)?;
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    env.seed(0);
    let (mut steps, mut episodes) = (0u64, 0u64);
    let budget = Duration::from_secs_f64(args.seconds.max(0.01));
    let start = Instant::now();
    let cpu_start = thread_cpu_seconds();
    let fixed = args.steps.map(|n| n as u64);
    let mut rollout = Rollout::new();
    // Episodes without a length limit, so resets happen on falls only.
    while fixed.map_or(start.elapsed() < budget, |n| steps < n) {
        let end = rollout.episode(
            env.as_mut(),
            usize::MAX,
            &mut |_, _| Ok(Flow::Continue),
            &mut |_, _, action| {
                action.iter_mut().for_each(|a| *a = rng.gen_range(-1.0..1.0));
                Ok(Flow::Continue)
            },
            &mut |_, _| {
                steps += 1;
                // The clock is read every 64 steps.
                let over = match fixed {
                    Some(n) => steps >= n,
                    None => steps % 64 == 0 && start.elapsed() >= budget,
                };
                Ok(if over { Flow::Stop } else { Flow::Continue })
            },
        )?;
        episodes += u64::from(end.done);
    }
    let rate = steps as f64 / start.elapsed().as_secs_f64();
    let cpu_rate = steps as f64 / (thread_cpu_seconds() - cpu_start);
    print_lines(&[
        format!("env={} steps={steps} episodes={episodes}", args.env),
        format!("policy_steps_per_s={rate:.0}"),
        format!("cpu_policy_steps_per_s={cpu_rate:.0}"),
    ]);
    Ok(rate)
}

/// What `gait bench optimize` runs (flags: `crate::cli::BenchOptimizeFlags`).
#[derive(Debug, Clone, PartialEq)]
pub struct BenchOptimizeOptions {
    /// Network architecture.
    pub arch: Arch,
    /// Hidden layer widths.
    pub layers: Vec<usize>,
    /// Minibatch size in states.
    pub batch_size: usize,
    /// Mirror-loss coefficient (0: off).
    pub mirror: f64,
}

/// The synthetic buffer of `bench optimize`: steps, trajectory length, observation and action
/// sizes.
pub const BENCH_STEPS: usize = 50_000;
const BENCH_TRAJ: usize = 300;
/// Observation size of the synthetic buffer (Cassie's).
pub const BENCH_OBS: usize = 44;
/// Action size of the synthetic buffer (Cassie's).
pub const BENCH_ACT: usize = 10;

/// Times 3 epochs of PPO updates over a synthetic 50k-step buffer (trajectories of 300,
/// obs 44, act 10, U[0,1) data as the reference's auto-tune uses) with 1 libtorch thread
/// (the critic's half on a second OS thread, as in training), KL stop off;
/// prints `samples_per_s` (real steps passed through an update per second; for recurrent nets
/// `--batch-size` counts trajectories of 300 steps).
pub fn bench_optimize(args: &BenchOptimizeOptions) -> Result<f64> {
    anyhow::ensure!(args.batch_size > 0, "--batch-size must be positive");
    tch::set_num_threads(1);
    tch::manual_seed(0);
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut buffer = Buffer::new(BENCH_OBS, BENCH_ACT, 0.99, 0.95);
    let mut u = |n: usize| -> Vec<f32> { (0..n).map(|_| rng.gen::<f32>()).collect() };
    while buffer.len() < BENCH_STEPS {
        for _ in 0..BENCH_TRAJ {
            let (s, a, r) = (u(BENCH_OBS), u(BENCH_ACT), u(2));
            buffer.push(&s, &a, r[0], r[1]);
        }
        buffer.end_trajectory(0.0);
    }
    let spec = NetSpec { arch: args.arch, ..NetSpec::ff(BENCH_OBS, BENCH_ACT, &args.layers) };
    let hp = PpoConfig {
        batch_size: args.batch_size,
        kl: f64::INFINITY,
        mirror: args.mirror,
        ..PpoConfig::default()
    };
    // Swap the two halves of the observation and action (a valid involution).
    let swap = |n: usize| {
        let list: Vec<f64> = (0..n).map(|i| ((i + n / 2) % n) as f64).collect();
        MirrorIndices::new(&list)
    };
    let (obs_m, act_m) = (swap(BENCH_OBS)?, swap(BENCH_ACT)?);
    let symmetry = Symmetry::new(obs_m, act_m);
    let mut optim = PpoOptim::new(&spec, hp, Device::Cpu, Some(&symmetry))?;
    let start = Instant::now();
    let stats = optim.optimize(&buffer, &mut rng)?;
    let secs = start.elapsed().as_secs_f64();
    let samples = stats.samples as f64;
    let rate = samples / secs;
    print_lines(&[
        format!(
            "arch={:?} layers={:?} batch_size={} mirror={} minibatches={} seconds={secs:.2}",
            args.arch, args.layers, args.batch_size, args.mirror, stats.minibatches
        ),
        format!("samples_per_s={rate:.0}"),
    ]);
    Ok(rate)
}

/// The result lines on stdout. A closed stdout (`gait bench env ... | head -1`) is not an
/// error: the numbers were measured, and whoever closed the pipe has what they wanted.
fn print_lines(lines: &[String]) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for line in lines {
        if writeln!(out, "{line}").is_err() {
            return;
        }
    }
}
