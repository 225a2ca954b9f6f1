//! What a run does before its first iteration, in the order [`Runner::start_with`] does it:
//! plan the selection, choose the optimizer's threads, start fresh (prenormalized) or restore a
//! continued run, and open the run's files. Each step is a function of its inputs, so
//! `start_with` reads as the list of them.
//!
//! [`Runner::start_with`]: super::runner::Runner::start_with

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tch::Device;

use super::algorithm::Algorithm;
use super::autotune::fastest_backprop_threads;
use super::checkpoint::{self, BestSoFar, TrainState};
use super::grow;
use super::symmetry::Symmetry;
use super::Collect;
use crate::config::{BackpropWorkers, Start, TrainConfig, UsageError};
use crate::envs::Env;
use crate::logging::{self, EventWriter, Experiment, RunStatus, ScalarTable, SelectionTable};
use crate::policies::{NetSpec, RunningStats};

/// How set-up reports progress before the first iteration.
pub trait SetupEvents {
    /// Prenormalization visited `n` of `total` steps.
    fn prenorm(&mut self, _n: usize, _total: usize) {}

    /// A warning about the set-up that does not stop it (more workers than cores).
    fn warning(&mut self, line: &str) {
        crate::stdio::eline(line);
    }

    /// A fact about the set-up worth a line (the measured `--backprop-workers -1` choice).
    fn note(&mut self, line: &str) {
        crate::stdio::eline(line);
    }
}

impl SetupEvents for () {}

/// Sets libtorch's thread count for the update: `--backprop-workers N`, or with `-1` the
/// fastest of 1..=`cores` threads on one measured epoch (returned, for `experiment.json`).
pub(super) fn backprop_threads(
    config: &TrainConfig,
    spec: &NetSpec,
    device: Device,
    cores: usize,
    events: &mut dyn SetupEvents,
) -> Result<Option<usize>> {
    Ok(match config.run.backprop_workers {
        BackpropWorkers::Threads(n) => {
            tch::set_num_threads(n.get() as i32);
            None
        }
        BackpropWorkers::Auto => {
            let (threads, timings) = fastest_backprop_threads(spec, config.ppo(), device, cores)?;
            let times: Vec<String> =
                timings.iter().map(|(t, s)| format!("{t}: {:.0} ms", s * 1e3)).collect();
            events.note(&format!(
                "--backprop-workers -1: one PPO epoch took {} (threads: time); using {threads}",
                times.join(", ")
            ));
            Some(threads)
        }
    })
}

/// The state a run begins from, its directory (created for a fresh run, named for a
/// continuation) and where the best-eval weights so far are: a continuation restores `optim`
/// from its previous run (refused with nothing written when it has nothing left to do); a
/// fresh run prenormalizes on `probe` when configured.
pub(super) fn begin(
    config: &TrainConfig,
    start: &Start,
    probe: &mut dyn Env,
    spec: &NetSpec,
    optim: &mut dyn Algorithm,
    symmetry: Option<&Symmetry>,
    events: &mut dyn SetupEvents,
) -> Result<(TrainState, PathBuf, BestSoFar)> {
    if let Start::Continue { dir, weights } = start {
        let restored = checkpoint::restore(config, dir, *weights, spec, optim)?;
        let (state, logdir) = (restored.state, restored.logdir);
        let best_so_far = match (restored.grown_from, restored.task_changes) {
            // The previous best scored the net before its inputs grew.
            (Some(_), _) => BestSoFar::None,
            (None, changes) if !changes.is_empty() => BestSoFar::Retasked(dir.clone(), changes),
            (None, _) => checkpoint::best_so_far(dir, *weights, &state)?,
        };
        // Nothing to do is said before anything is written (no "completed" run dir without a
        // checkpoint).
        if state.total_timesteps >= config.run.timesteps {
            return Err(UsageError(format!(
                "--previous {}: the run has {} steps already, and --timesteps {} is not above \
                 that: nothing to do (give a larger --timesteps)",
                dir.display(),
                state.total_timesteps,
                config.run.timesteps
            ))
            .into());
        }
        if let (Some(from), true) = (restored.grown_from, config.net.prenorm) {
            // The new inputs' statistics, gathered with the restored policy (which ignores
            // them); the old inputs keep the ones it learned with, in both nets.
            let (fresh, _) = prenormalized(config, probe, optim, symmetry, events)?;
            let actor = grow::splice_stats(&optim.actor().normalizer().stats(), &fresh, from);
            let critic = grow::splice_stats(&optim.critic().normalizer().stats(), &fresh, from);
            optim.actor_mut().normalizer_mut().set_stats(&actor).context("prenormalization")?;
            optim.critic_mut().normalizer_mut().set_stats(&critic).context("prenormalization")?;
        }
        return Ok((state, continuation_dir(config, dir, &logdir)?, best_so_far));
    }
    if config.net.prenorm {
        let (actor, critic) = prenormalized(config, probe, optim, symmetry, events)?;
        optim.set_normalizers(&actor, critic.as_ref()).context("prenormalization")?;
    }
    let run = config.run.run_name.clone().unwrap_or_else(|| logging::config_hash_name(config));
    let dir = logging::create_run_dir(&config.run.logdir, &config.run.env, &run)?;
    Ok((TrainState::default(), dir, BestSoFar::None))
}

/// The observation statistics of `config.net.prenormalize_steps` steps of `optim`'s policy on
/// `probe` (free again; prenormalization reseeds it per episode), symmetrized: the actor's, with
/// the env's fixed inputs set (`EnvSchedule::fixed_inputs`), and, for an env whose critic has
/// its own observation, the critic's.
fn prenormalized(
    config: &TrainConfig,
    probe: &mut dyn Env,
    optim: &dyn Algorithm,
    symmetry: Option<&Symmetry>,
    events: &mut dyn SetupEvents,
) -> Result<(RunningStats, Option<RunningStats>)> {
    let steps = config.net.prenormalize_steps;
    events.prenorm(0, steps);
    let stats = super::prenorm::prenormalize(
        probe,
        optim.actor(),
        steps,
        config.sampler.traj_len,
        config.run.seed,
        &mut |n| events.prenorm(n, steps),
    )?;
    let mut actor = Symmetry::symmetrize(symmetry, stats.actor);
    actor.fix(&config.env.fixed_inputs(&config.run.env));
    let critic = stats.critic.map(|c| Symmetry::symmetrize_critic(symmetry, c));
    Ok((actor, critic))
}

/// Where a continuation of `prev` goes: beside it, or under a `logdir` that differs from the
/// previous run's (`prev_logdir`), keeping the run's folder name.
fn continuation_dir(config: &TrainConfig, prev: &Path, prev_logdir: &Path) -> Result<PathBuf> {
    if let Some(name) = &config.run.run_name {
        return logging::create_run_dir(&config.run.logdir, &config.run.env, name);
    }
    let under = (prev_logdir != config.run.logdir)
        .then(|| prev.canonicalize().ok())
        .flatten()
        .and_then(|p| p.parent().and_then(|r| r.file_name()).map(|r| r.to_owned()))
        .map(|run| config.run.logdir.join(&config.run.env).join(run));
    logging::create_continuation_dir(prev, under.as_deref())
}

/// A run's open files: TensorBoard's events, `progress.csv`, `timing.csv` and, when the run
/// selects, `selection.csv`.
pub(super) struct RunFiles {
    pub tb: EventWriter,
    pub progress: ScalarTable,
    pub timing: ScalarTable,
    pub selection: Option<SelectionTable>,
}

impl RunFiles {
    /// Writes `experiment.json` (with the sampler's ranks and the measured thread count) and
    /// opens the tables in `run_dir`; the walking columns only for a walking env, the adaptive
    /// curriculum's `levels` columns only with a rule.
    pub(super) fn open(
        run_dir: &Path,
        mut experiment: Experiment,
        sampler: &dyn Collect,
        (walking, levels): (bool, &[&'static str]),
        selects: bool,
    ) -> Result<Self> {
        experiment.ranks = sampler.ranks();
        experiment.save(run_dir)?;
        let mut tb = EventWriter::create(run_dir)?;
        tb.text(0, "Config/experiment.info", &format!("```\n{}```", experiment.info()))?;
        let mut columns = logging::metrics::progress_columns(walking);
        columns.extend_from_slice(levels);
        let progress = ScalarTable::create(&run_dir.join("progress.csv"), &columns)?;
        let timing =
            ScalarTable::create(&run_dir.join("timing.csv"), logging::metrics::TIMING_COLUMNS)?;
        let selection = selects
            .then(|| SelectionTable::create(&run_dir.join(logging::SELECTION_CSV)))
            .transpose()?;
        Ok(Self { tb, progress, timing, selection })
    }
}

/// Says where the best-eval weights so far come from, copying them into `run_dir` when the
/// continued state has them.
pub(super) fn carry_best(
    best_so_far: &BestSoFar,
    run_dir: &Path,
    events: &mut dyn SetupEvents,
) -> Result<()> {
    match best_so_far {
        BestSoFar::In(prev) => {
            checkpoint::copy_best_pair(prev, run_dir)
                .context("carrying the best-eval weights so far")?;
            events.note(&format!("best-eval weights so far: copied from {}", prev.display()));
        }
        BestSoFar::NotKept(prev) => events.note(&format!(
            "note: the best-eval weights of the state continued from are not in {} (a branch \
             whose best the run replaced later, or files removed); this run saves its own at \
             its first evaluation that beats them",
            prev.display()
        )),
        BestSoFar::Retasked(prev, changes) => {
            const SHOWN: usize = 4;
            let mut said = changes.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
            if changes.len() > SHOWN {
                said += &format!(" and {} more", changes.len() - SHOWN);
            }
            events.note(&format!(
                "note: the best-eval weights of {} scored another task ({said}), so they are \
                 not carried; this run saves its own at its first evaluation",
                prev.display()
            ))
        }
        BestSoFar::None => {}
    }
    Ok(())
}

/// `e`, after `summary.json` in `run_dir` says the run failed with it (a run dir that exists
/// always says how it ended).
pub(super) fn failed(
    state: &TrainState,
    run_dir: &Path,
    started: std::time::Instant,
    e: anyhow::Error,
) -> anyhow::Error {
    let elapsed_s = started.elapsed().as_secs_f64();
    let summary = state.summary(RunStatus::Failed, elapsed_s, None, Some(format!("{e:#}")));
    if let Err(write) = summary.save(run_dir) {
        crate::stdio::eline(format!("warning: cannot write the run's summary.json: {write:#}"));
    }
    e
}
