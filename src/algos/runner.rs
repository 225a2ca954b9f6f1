//! The PPO [`Runner`] (roadrunner `PPO.do_iteration`; rsl_rl's `OnPolicyRunner`): set-up in
//! [`Runner::start`] (fresh or continued), then one [`Runner::iterate`] per iteration, which
//! reads as a handful of calls: broadcast the policy, collect, score the evaluation, update,
//! checkpoint, log.
//!
//! Per iteration: eval episodes first, then train trajectories; the evaluated (pre-update)
//! weights are saved if they set a new best `Test/Return` (once the env's training
//! distribution has settled, only among evaluations since: `best_is_replaced`); every
//! `--save-freq` iterations they are also kept as `*_{itr}`, so a numbered checkpoint is what
//! its row scored; optimize; save `*_latest`; log; and last the resume file, so a kill before
//! it repeats the iteration on resume (same numbers).
//!
//! Experience comes through the [`Collect`] seam (`sampler::local` and `sampler::mpi`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tch::Device;

use super::algorithm::{decay_scale, Algorithm};
use super::checkpoint::{self, SelectionScore, TrainState};
use super::resources;
use super::resources::{available_cores, resolve_device};
use super::reward_scale::ReturnStats;
use super::sampler::{local_sampler, Collect, MakeSampler};
use super::seeding::INIT_LOCK;
use super::seeding::{derive, stream};
use super::selection::{self, best_is_replaced, evaluation_settled, Selector};
use super::setup::{self, RunFiles, SetupEvents};
use super::symmetry::Symmetry;
use super::{tracking, CollectRequest, Collected, PolicySnapshot};
use crate::config::{Start, StdSchedule, TrainConfig};
use crate::envs::levels::Levels;
use crate::envs::{self, EnvFactory};
use crate::logging::metrics::{IterationReport, RankTiming, TestMetrics, Timing, UpdateMetrics};
use crate::logging::summary::FinalEval;
use crate::logging::{EventWriter, Experiment, ScalarTable};
use crate::policies::NetSpec;

/// One training run: its config, algorithm (networks and optimizer), sampler, run dir and logs.
pub struct Runner {
    config: TrainConfig,
    run_dir: PathBuf,
    optim: Box<dyn Algorithm>,
    sampler: Box<dyn Collect>,
    symmetry: Option<Symmetry>,
    progress: ScalarTable,
    timing: ScalarTable,
    tb: EventWriter,
    /// The counters of the last iteration whose resume state is on disk.
    state: TrainState,
    start: Instant,
    workers: usize,
    /// The walking selection and `selection.csv` (off without `--best-by tracking` or `cells`).
    selector: Selector,
    /// Iterations in a row in which the simulation blew up in more than half the train
    /// episodes ([`BLOWUP_ITERATIONS`] of them stop the run).
    blowup_streak: u32,
}

/// Iterations in a row with more than half the train episodes cut by a blow-up after which a
/// run stops with an error: a physics that cannot integrate the run's timestep trains on
/// resets, not on the task. Robot-grade Cassie runs (MuJoCo at 4 ms, pushed) blew up in at most
/// 10 of an iteration's 25-40 episodes.
const BLOWUP_ITERATIONS: u32 = 3;

impl Runner {
    /// A fresh run (prenormalized when configured) or the continuation of the run in `start`'s
    /// directory (see `checkpoint::restore`), as `start` says, with local sampler actors. The
    /// run dir is created last, after every check has passed; `config.sampler.workers` of
    /// `None` means one worker per core.
    pub fn start(
        config: &TrainConfig,
        start: &Start,
        command: Vec<String>,
        events: &mut dyn SetupEvents,
    ) -> Result<Self> {
        config.validate()?;
        let env = envs::factory(&config.run.env, &config.env)?;
        Self::start_with(config, env, start, command, events, &local_sampler)
    }

    /// [`Runner::start`] for the envs `env` builds (registered or not: `config.run.env` then
    /// only names the run's folder) and with experience from the sampler
    /// `make_sampler(config, env, spec, workers)` builds: [`local_sampler`], the MPI
    /// transport, a recording wrapper in tests.
    pub fn start_with(
        config: &TrainConfig,
        env: EnvFactory,
        start: &Start,
        command: Vec<String>,
        events: &mut dyn SetupEvents,
        make_sampler: &MakeSampler,
    ) -> Result<Self> {
        config.validate_settings()?;
        // The run records the worker count it used (results do not depend on it).
        let mut config = config.clone();
        let workers = *config.sampler.workers.get_or_insert_with(available_cores);
        let config = &config;
        let device = resolve_device(config.run.device)?;
        let mut probe = env()?;
        let mut spec =
            config.net.spec(&config.run.env, probe.observation_size(), probe.action_size())?;
        spec.critic_obs_dim = probe.critic().map(|c| c.critic_observation_size());
        let symmetry = Symmetry::for_env(probe.as_ref(), config.mirroring(), &config.run.env)?;
        let selection = selection::plan(probe.as_ref(), config)?;
        // Before any allocation: a network too large for the machine is refused with numbers.
        let cores = available_cores();
        let memory = resources::available_memory();
        if let Some(warning) =
            resources::check_resources(&spec, workers, cores, config.sampler.num_steps, memory)?
        {
            events.warning(&warning);
        }
        let backprop_threads = setup::backprop_threads(config, &spec, device, cores, events)?;
        let mut optim = seeded_algorithm(config, &spec, device, symmetry.as_ref())?;
        let (state, run_dir, best_so_far) = setup::begin(
            config,
            start,
            probe.as_mut(),
            &spec,
            optim.as_mut(),
            symmetry.as_ref(),
            events,
        )?;
        optim.set_dump_dir(run_dir.clone());
        let started = Instant::now();
        // From here on the run dir exists: a failure still leaves `summary.json` saying how.
        let files = (|| -> Result<_> {
            setup::carry_best(&best_so_far, &run_dir, events)?;
            let sampler = make_sampler(config, &env, &spec, workers)?;
            let mut experiment =
                Experiment::new(command, config.clone(), start.clone(), spec.clone());
            experiment.backprop_threads = backprop_threads;
            let walking = probe.walking().is_some();
            let levels = config.env.level_rule(&config.run.env).map_or(&[][..], |r| r.tracks);
            let files = RunFiles::open(
                &run_dir,
                experiment,
                sampler.as_ref(),
                (walking, levels),
                selection.cells > 0,
            )?;
            Ok((files, sampler))
        })();
        let (files, sampler) = files.map_err(|e| setup::failed(&state, &run_dir, started, e))?;
        Ok(Self {
            config: config.clone(),
            run_dir,
            optim,
            sampler,
            symmetry,
            progress: files.progress,
            timing: files.timing,
            tb: files.tb,
            state,
            start: started,
            workers,
            selector: Selector::new(selection, files.selection),
            blowup_streak: 0,
        })
    }

    /// The run directory.
    pub fn run_dir(&self) -> &Path {
        &self.run_dir
    }

    /// The run's effective config.
    pub fn config(&self) -> &TrainConfig {
        &self.config
    }

    /// The counters of the last iteration whose resume state is on disk.
    pub fn state(&self) -> &TrainState {
        &self.state
    }

    /// Seconds since set-up finished.
    pub fn elapsed_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Whether the configured timesteps have been collected.
    pub fn is_done(&self) -> bool {
        self.state.total_timesteps >= self.config.run.timesteps
    }

    /// Runs one iteration; `on_steps(total)` follows the collection. An interrupt during the
    /// collection returns [`super::interrupt::Interrupted`] and leaves the state untouched.
    pub fn iterate(&mut self, on_steps: &mut dyn FnMut(u64)) -> Result<IterationReport> {
        let started = Instant::now();
        let (itr, before) = (self.state.iteration, self.state.total_timesteps);
        let num_steps = self.config.sampler.num_steps;
        let evaluates = self.evaluates();
        let mut collected =
            self.collect(itr, num_steps, (evaluates, evaluates && self.selects()), &mut |n| {
                on_steps(before + n as u64)
            })?;
        let sample_s = started.elapsed().as_secs_f64();
        self.count_blowups(&collected)?;
        let train_return = collected.train.mean_ep_return().unwrap_or(f64::NAN);
        let train_length = collected.train.mean_ep_len().unwrap_or(f64::NAN);
        let mut next = self.state.clone();
        let selection = self.selector.score(&collected, self.config.eval.selection_len);
        let test =
            self.score(&collected, selection.as_ref(), (train_return, train_length), &mut next)?;
        if self.config.run.save_freq.saves(itr) {
            // Before the update: the weights this iteration collected with, which its row in
            // `progress.csv` and `selection.csv` scored, so `--iteration N` checks row N's.
            checkpoint::save_pair(self.optim.as_ref(), &self.run_dir, &format!("_{itr}"))?;
        }
        // Before the update (and `--update-norm`): what the sampled policy's normalizer did.
        let clipped_inputs = self.optim.actor().normalizer().clipped_share(&collected.train.states);
        let sampler = &self.config.sampler;
        if sampler.scale_rewards {
            let stats = next.returns.get_or_insert_with(ReturnStats::default);
            stats.scale_buffer(&mut collected.train, sampler.discount);
        } else if sampler.normalize_returns {
            let stats = next.returns.get_or_insert_with(ReturnStats::default);
            stats.normalize_buffer(&mut collected.train);
        }
        let optimize_start = Instant::now();
        let update = self.update(itr, &collected)?;
        let optimize_s = optimize_start.elapsed().as_secs_f64();
        checkpoint::save_pair(self.optim.as_ref(), &self.run_dir, "_latest")?;
        let report = IterationReport {
            iteration: itr,
            total_timesteps: next.total_timesteps,
            steps: collected.train.len(),
            train_return,
            train_length,
            physics_resets: collected.physics_resets,
            test,
            update,
            policy_std: self.optim.actor().mean_std(),
            clipped_inputs,
            levels: level_columns(&self.config, &self.state.levels),
            timing: Timing {
                sample_s,
                optimize_s,
                iteration_s: started.elapsed().as_secs_f64(),
                elapsed_s: self.start.elapsed().as_secs_f64(),
                ideal_steps_per_s: collected.worker_steps_per_s * self.workers as f64,
                job_seconds: collected.job_seconds,
                ranks: collected.ranks.as_ref().map(|r| RankTiming {
                    bytes: r.bytes,
                    steps_per_s: r.steps.iter().map(|&n| n as f64 / sample_s.max(1e-9)).collect(),
                    broadcast_s: r.broadcast_s,
                    comm_s: r.comm_s,
                }),
            },
        };
        self.log(&report, selection.as_ref())?;
        // Last: a kill -9 before this line repeats this iteration on resume (same numbers);
        // after it, the run continues with the next one.
        next.iteration = itr + 1;
        checkpoint::save(&self.run_dir, self.optim.as_ref(), &next)?;
        if self.config.run.resume_freq.saves(itr) {
            checkpoint::keep_resume(&self.run_dir, itr)?;
        }
        self.state = next;
        Ok(report)
    }

    /// Counts an iteration whose train episodes mostly blew up, and stops the run (before
    /// anything of the iteration is saved) after [`BLOWUP_ITERATIONS`] of them in a row.
    fn count_blowups(&mut self, collected: &Collected) -> Result<()> {
        let episodes = collected.train.num_trajs();
        let mostly = episodes > 0 && 2 * collected.physics_resets > episodes;
        self.blowup_streak = if mostly { self.blowup_streak + 1 } else { 0 };
        anyhow::ensure!(
            self.blowup_streak < BLOWUP_ITERATIONS,
            "the simulation blew up (a non-finite state the simulator reset) in {} of {episodes} \
             train episodes, and in more than half of them for {BLOWUP_ITERATIONS} iterations in \
             a row: the physics cannot integrate this run; lower its timestep",
            collected.physics_resets
        );
        Ok(())
    }

    /// Whether this iteration evaluates: once the episode-length gate has opened, every
    /// `eval_freq` iterations and, with `eval_on_best_train`, after a new best train return
    /// (the reference's rule).
    fn evaluates(&self) -> bool {
        let (eval, s) = (&self.config.eval, &self.state);
        eval.num_eval_eps > 0
            && s.gate_open
            && (s.iteration % eval.eval_freq as u64 == 0
                || (s.eval_next && eval.eval_on_best_train))
    }

    /// Counts the steps, moves the adaptive curriculum's levels by the train episodes'
    /// outcomes (envs with a [`LevelRule`](crate::envs::levels::LevelRule)), scores the
    /// evaluation (saving the evaluated, pre-update weights on a new best) and advances the
    /// evaluation gate into `next` from the train episodes' mean return and length.
    fn score(
        &self,
        collected: &Collected,
        selection: Option<&tracking::Selection>,
        (train_return, train_length): (f64, f64),
        next: &mut TrainState,
    ) -> Result<Option<TestMetrics>> {
        next.total_timesteps += collected.train.len() as u64;
        if let Some(rule) = self.config.env.level_rule(&self.config.run.env) {
            rule.update(&mut next.levels, &collected.train.outcomes);
        }
        let test = test_metrics(collected, selection);
        if let Some(test) = &test {
            // The evaluated weights trained on the steps before this iteration's collection.
            let settled =
                evaluation_settled(&self.config, self.state.stage_from, self.state.total_timesteps);
            let selection = (test.tracking_error().zip(test.cells_within()))
                .map(|(error, cells)| SelectionScore { error, cells: Some(cells) });
            let by = self.config.eval.best_by;
            if best_is_replaced(next, settled, test.mean_return, selection, by) {
                (next.best_test, next.best_test_settled) = (Some(test.mean_return), settled);
                next.best_selection = selection;
                checkpoint::save_pair(self.optim.as_ref(), &self.run_dir, "")?;
            }
        }
        let (eval, sampler) = (&self.config.eval, &self.config.sampler);
        if train_length > eval.min_eplen_ratio_eval * sampler.traj_len as f64 {
            next.gate_open = true;
        }
        next.eval_next = next.gate_open && next.best_train.is_none_or(|b| train_return > b);
        selection::open_stage(&self.config, test.as_ref(), next);
        if next.best_train.is_none_or(|b| train_return > b) {
            next.best_train = Some(train_return);
        }
        Ok(test)
    }

    /// The algorithm's update on this iteration's trajectories, then the normalizer update when
    /// configured (after the update, so it saw the statistics its data was sampled with).
    fn update(&mut self, itr: u64, collected: &Collected) -> Result<UpdateMetrics> {
        // Per-iteration stream: a resumed run shuffles exactly as an uninterrupted one.
        let seed = derive(self.config.run.seed, &[stream::MINIBATCH, itr]);
        // The rate follows the steps before this iteration's collection, so it is a function of
        // the resume state and a resumed run steps as an uninterrupted one.
        self.optim.set_progress(self.state.total_timesteps, self.config.run.timesteps);
        let update = self
            .optim
            .update(&collected.train, &mut ChaCha8Rng::seed_from_u64(seed))
            .with_context(|| format!("iteration {itr}"))?;
        if self.config.net.update_norm {
            let symmetry = self.symmetry.as_ref();
            let mut norm = self.optim.actor().normalizer().stats();
            norm.update(&collected.train.states);
            let mut actor = Symmetry::symmetrize(symmetry, norm);
            actor.fix(&self.config.env.fixed_inputs(&self.config.run.env));
            let critic = collected.train.has_critic_states().then(|| {
                let mut norm = self.optim.critic().normalizer().stats();
                norm.update(collected.train.critic_view().0);
                Symmetry::symmetrize_critic(symmetry, norm)
            });
            self.optim.set_normalizers(&actor, critic.as_ref())?;
        }
        Ok(update)
    }

    /// One row in each CSV table (and a selection's cells in `selection.csv`), the scalars
    /// in TensorBoard.
    fn log(
        &mut self,
        report: &IterationReport,
        selection: Option<&tracking::Selection>,
    ) -> Result<()> {
        self.progress.write(&report.progress())?;
        self.timing.write(&report.timing())?;
        self.selector.write(report.iteration, self.state.total_timesteps, selection)?;
        self.tb.scalars(report.iteration as i64, &report.tensorboard())
    }

    /// Evaluates the current weights (`num_eval_eps` episodes, outside the per-iteration rows,
    /// so a run stopped and continued produces the same rows as an uninterrupted one).
    pub fn final_eval(&mut self) -> Result<Option<FinalEval>> {
        let episodes = self.config.eval.num_eval_eps;
        if episodes == 0 {
            return Ok(None);
        }
        let collected = self.collect(self.state.iteration, 0, (true, false), &mut |_| {})?;
        Ok(Some(FinalEval {
            episodes,
            mean_return: collected.eval.mean_ep_return().unwrap_or(f64::NAN),
            mean_length: collected.eval.mean_ep_len().unwrap_or(f64::NAN),
            metrics: tracking::scalars(&collected.eval_episodes)
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        }))
    }

    /// Whether this iteration's evaluation also runs the selection episodes
    /// ([`Selector::selects_at`]).
    fn selects(&self) -> bool {
        let s = &self.state;
        self.selector.selects_at(&self.config, s.iteration, s.stage_from, s.total_timesteps)
    }

    /// One collection: `num_steps` train steps, and as `(evaluate, select)` say, the
    /// evaluation and selection episodes.
    fn collect(
        &mut self,
        iteration: u64,
        num_steps: usize,
        (evaluate, select): (bool, bool),
        on_steps: &mut dyn FnMut(usize),
    ) -> Result<Collected> {
        // The std follows the steps before this collection (as the learning rate does), so a
        // resumed run samples with the std of an uninterrupted one.
        if self.config.net.std_decay > 0.0 {
            let scale = std_scale(&self.config, self.state.total_timesteps, self.state.stage_from)?;
            anyhow::ensure!(
                self.optim.actor_mut().scale_fixed_std(scale),
                "--std-decay needs a fixed std"
            );
        }
        let policy = PolicySnapshot::of(iteration, self.optim.actor(), self.optim.critic());
        let request = CollectRequest {
            iteration,
            timesteps: self.state.total_timesteps,
            stage_from: self.state.stage_from,
            levels: self.state.levels,
            seed: self.config.run.seed,
            num_steps,
            traj_len: self.config.sampler.traj_len,
            num_eval: if evaluate { self.config.eval.num_eval_eps } else { 0 },
            num_select: if select {
                self.selector.episodes(self.config.eval.selection_episodes)
            } else {
                0
            },
            select_len: self.config.eval.selection_len,
            select_commands: self.config.eval.selection_commands,
            select_push: self.config.eval.selection_push as f32,
        };
        self.sampler.collect(&request, policy, on_steps)
    }
}

/// The adaptive curriculum's levels an iteration collected at, as `progress.csv` columns (the
/// rule's track names); none without a rule.
fn level_columns(config: &TrainConfig, levels: &Levels) -> Vec<(&'static str, f64)> {
    let Some(rule) = config.env.level_rule(&config.run.env) else { return Vec::new() };
    // Levels move in steps like 0.05, which f32 holds inexactly: logged as the step reads.
    let round = |level: f32| (level as f64 * 1e6).round() / 1e6;
    rule.tracks.iter().zip(levels.0).map(|(&name, level)| (name, round(level))).collect()
}

/// The evaluation's scores, when the iteration evaluated: with selection episodes, their
/// `Test/Tracking Error` and `Test/Cells Within` too (over `cells` cells; episodes shorter than
/// the selection's length fell).
fn test_metrics(
    collected: &Collected,
    selection: Option<&tracking::Selection>,
) -> Option<TestMetrics> {
    let (mean_return, mean_length) =
        (collected.eval.mean_ep_return()?, collected.eval.mean_ep_len()?);
    let mut scalars = tracking::scalars(&collected.eval_episodes);
    if let Some(selection) = selection {
        use crate::logging::metrics::{CELLS_WITHIN, TRACKING_ERROR};
        scalars.push((TRACKING_ERROR, selection.error()));
        scalars.push((CELLS_WITHIN, selection.cells_within() as f64));
    }
    Some(TestMetrics { mean_return, mean_length, tracking: scalars })
}

/// The factor of a fixed std (`--std-decay`) for a collection after `steps`, in a run whose
/// gated stage began at `stage_from`: along the run's steps, with the env's perturbations, or
/// from the step its training distribution settles to the run's end.
fn std_scale(config: &TrainConfig, steps: u64, stage_from: Option<u64>) -> Result<f64> {
    let decay = config.net.std_decay;
    Ok(match config.net.std_schedule {
        StdSchedule::Steps => decay_scale(decay, steps, config.run.timesteps),
        StdSchedule::Perturbations => {
            let strength = config.env.perturbation_strength(&config.run.env, steps, stage_from);
            1.0 - decay * strength.context("--std-schedule: the env has no perturbations")?
        }
        // A distribution that never settles within the run (a closed gate, or a curriculum
        // past `--timesteps`) keeps the std.
        StdSchedule::Settled => match config.env.settled_from(&config.run.env, stage_from) {
            Some(from) if from < config.run.timesteps => {
                decay_scale(decay, steps.saturating_sub(from), config.run.timesteps - from)
            }
            _ => 1.0,
        },
    })
}

/// The run's algorithm (its catalog row's `build`), its networks drawn from the run's seed.
/// libtorch's generator is process-global: seeding it and drawing the initial weights happen
/// under one lock, so the weights depend on the seed only, even when several trainings share a
/// process (the integration tests run them on parallel threads).
fn seeded_algorithm(
    config: &TrainConfig,
    spec: &NetSpec,
    device: Device,
    symmetry: Option<&Symmetry>,
) -> Result<Box<dyn Algorithm>> {
    let _init = INIT_LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    tch::manual_seed(derive(config.run.seed, &[stream::INIT]) as i64);
    config.algo.build(config.run.algo, spec, device, symmetry)
}

#[cfg(test)]
mod tests {
    use super::{
        best_is_replaced, decay_scale, evaluation_settled, std_scale, SelectionScore, TrainState,
    };
    use crate::config::{BestBy, StdSchedule, TrainConfig};
    use crate::envs::cassie::CassieConfig;

    /// The walking preset's evaluations count as settled 3M steps after the perturbations
    /// reach full strength (8M with the gate open at 2.04M), or from 8M with
    /// `--best-after-settled 0`; a closed gate settles nothing.
    #[test]
    fn evaluations_settle_best_after_settled_steps_past_the_env() {
        let mut config = crate::config::TrainConfig::for_env("cassie");
        let gate = Some(2_040_000);
        assert!(!evaluation_settled(&config, gate, 10_999_999));
        assert!(evaluation_settled(&config, gate, 11_000_000));
        assert!(!evaluation_settled(&config, None, 12_000_000), "the gate is closed");
        config.eval.best_after_settled = 0;
        assert!(!evaluation_settled(&config, gate, 7_999_999));
        assert!(evaluation_settled(&config, gate, 8_000_000));
        let cartpole = crate::config::TrainConfig::for_env("cartpole");
        assert!(evaluation_settled(&cartpole, None, 0), "no curriculum: settled from step 0");
    }

    /// The best-eval checkpoint: the reference's highest `Test/Return` within a phase, and the
    /// first evaluation of a settled training distribution replaces any earlier best.
    #[test]
    fn a_settled_evaluation_replaces_an_earlier_best_and_then_only_a_higher_one() {
        let state = |best: Option<f64>, settled| TrainState {
            best_test: best,
            best_test_settled: settled,
            ..TrainState::default()
        };
        let by = BestBy::Return;
        assert!(best_is_replaced(&state(None, false), false, -3.0, None, by));
        assert!(best_is_replaced(&state(Some(200.0), false), false, 201.0, None, by));
        assert!(!best_is_replaced(&state(Some(200.0), false), false, 199.0, None, by));
        assert!(best_is_replaced(&state(Some(200.0), false), true, 50.0, None, by));
        assert!(!best_is_replaced(&state(Some(50.0), true), true, 49.0, None, by));
        assert!(best_is_replaced(&state(Some(50.0), true), true, 51.0, None, by));
        assert!(!best_is_replaced(&state(Some(50.0), true), false, 300.0, None, by));
    }

    /// A settled best of return 300, chosen by `(error, cells within)` when given.
    fn best(selection: Option<(f64, Option<u64>)>) -> TrainState {
        TrainState {
            best_test: Some(300.0),
            best_test_settled: true,
            best_selection: selection.map(|(error, cells)| SelectionScore { error, cells }),
            ..TrainState::default()
        }
    }

    /// A new evaluation's selection: an error and a count.
    fn sel(error: f64, cells: u64) -> Option<SelectionScore> {
        Some(SelectionScore { error, cells: Some(cells) })
    }

    /// `--best-by tracking`: among settled evaluations the lower `Test/Tracking Error` wins,
    /// whatever the returns and counts; the first tracked one replaces a settled best chosen by
    /// return (a run continued with the setting); the unsettled phase still goes by return.
    #[test]
    fn settled_evaluations_with_a_tracking_error_replace_the_best_only_by_a_lower_one() {
        let by = BestBy::Tracking;
        let tracked = |error| best(Some((error, Some(14))));
        assert!(best_is_replaced(&tracked(0.5), true, 100.0, sel(0.4, 12), by));
        assert!(!best_is_replaced(&tracked(0.5), true, 900.0, sel(0.6, 14), by));
        assert!(!best_is_replaced(&tracked(0.5), true, 900.0, sel(0.5, 14), by), "ties keep");
        assert!(best_is_replaced(&best(None), true, 100.0, sel(2.0, 0), by));
        let unsettled = TrainState { best_test: Some(300.0), ..TrainState::default() };
        assert!(best_is_replaced(&unsettled, true, 100.0, sel(3.0, 0), by), "settled first");
        assert!(!best_is_replaced(&unsettled, false, 299.0, None, by));
    }

    /// `--best-by cells`: more cells within win whatever the errors; as many, the lower error;
    /// a best from a state without a count (written before it) falls to any selection, as a
    /// best chosen by return does.
    #[test]
    fn settled_evaluations_replace_the_best_by_more_cells_then_a_lower_error() {
        let by = BestBy::Cells;
        let counted = best(Some((0.3, Some(13))));
        assert!(best_is_replaced(&counted, true, 100.0, sel(0.9, 14), by));
        assert!(!best_is_replaced(&counted, true, 900.0, sel(0.1, 12), by));
        assert!(best_is_replaced(&counted, true, 100.0, sel(0.29, 13), by));
        assert!(!best_is_replaced(&counted, true, 900.0, sel(0.3, 13), by), "ties keep");
        assert!(best_is_replaced(&best(Some((0.3, None))), true, 100.0, sel(0.9, 0), by));
        assert!(best_is_replaced(&best(None), true, 100.0, sel(2.0, 0), by));
        assert!(!best_is_replaced(&best(None), false, 900.0, None, by), "unsettled after");
    }

    /// `--selection-every`: a settled evaluation that did not select cannot replace a selected
    /// best, however high its return; one selected by return still goes by return.
    #[test]
    fn an_evaluation_without_a_selection_does_not_replace_a_selected_best() {
        for by in [BestBy::Cells, BestBy::Tracking] {
            assert!(!best_is_replaced(&best(Some((0.3, Some(13)))), true, 900.0, None, by));
        }
        assert!(best_is_replaced(&best(None), true, 301.0, None, BestBy::Cells));
        assert!(best_is_replaced(&best(Some((0.3, None))), true, 301.0, None, BestBy::Return));
    }

    /// `--best-by last`: every evaluation replaces the best, settled or not, whatever it scored.
    #[test]
    fn under_best_by_last_every_evaluation_replaces_the_best() {
        let by = BestBy::Last;
        assert!(best_is_replaced(&best(Some((0.3, Some(13)))), true, -900.0, None, by));
        assert!(best_is_replaced(&best(None), false, -900.0, None, by));
    }

    /// `--lr-decay`: linear in the steps from 1 to `1 − decay` at `--timesteps`, flat past it
    /// (a continuation run beyond its target), constant without decay.
    #[test]
    fn the_learning_rate_falls_linearly_to_its_floor() {
        let at = |steps| decay_scale(0.9, steps, 1000);
        assert_eq!([0, 500, 1000, 5000].map(at), [1.0, 0.55, 1.0 - 0.9, 1.0 - 0.9]);
        assert_eq!(decay_scale(0.0, 700, 1000), 1.0);
    }

    /// `--std-schedule perturbations`: the walking preset's std stays at `--std` until the
    /// perturbation gate opens (whenever that is), falls with their ramp and stays at its floor;
    /// `steps` follows the learning rates' schedule instead.
    #[test]
    fn a_perturbation_schedule_holds_the_std_until_the_gate_then_follows_the_ramp() {
        let mut config = TrainConfig::for_env("cassie");
        config.net.std_decay = 0.75;
        config.net.std_schedule = StdSchedule::Perturbations;
        let ramp = config.env.get::<CassieConfig>().robust_ramp;
        // A gate that opens after the preset's perturbation start (7M): walking learned late.
        let gate = 7_840_000;
        let at = |steps, stage_from| std_scale(&config, steps, stage_from).unwrap();
        assert_eq!(at(7_500_000, None), 1.0, "the gate is still closed");
        assert_eq!(at(gate, Some(gate)), 1.0);
        assert!((at(gate + ramp / 2, Some(gate)) - (1.0 - 0.375)).abs() < 1e-12);
        assert!((at(gate + 3 * ramp, Some(gate)) - 0.25).abs() < 1e-12);
        config.net.std_schedule = StdSchedule::Steps;
        let half = config.run.timesteps / 2;
        assert!((std_scale(&config, half, Some(gate)).unwrap() - 0.625).abs() < 1e-9);
        config.run.env = "cartpole".into();
        config.net.std_schedule = StdSchedule::Perturbations;
        assert!(std_scale(&config, half, None).is_err(), "no perturbations to follow");
    }

    /// `--std-schedule settled`: the walking preset's std holds until its training distribution
    /// settles (the perturbations at full strength: 8M with the gate at 2.04M, later behind a
    /// late gate), then falls linearly to its floor at `--timesteps`; a closed gate keeps it;
    /// an env without a curriculum settles at step 0, so it follows the run's steps.
    #[test]
    fn a_settled_schedule_holds_the_std_until_the_distribution_settles_then_falls_to_the_end() {
        let mut config = TrainConfig::for_env("cassie");
        config.net.std_decay = 0.3;
        config.net.std_schedule = StdSchedule::Settled;
        let end = config.run.timesteps;
        let at = |steps, stage_from| std_scale(&config, steps, stage_from).unwrap();
        let gate = Some(2_040_000);
        let settled = config.env.settled_from("cassie", gate).unwrap();
        assert_eq!(settled, 8_000_000);
        assert_eq!(at(settled, gate), 1.0);
        assert_eq!(at(settled - 1, gate), 1.0);
        assert!((at((settled + end) / 2, gate) - 0.85).abs() < 1e-9);
        assert!((at(end, gate) - 0.7).abs() < 1e-12);
        assert!((at(end + 1_000_000, gate) - 0.7).abs() < 1e-12, "no lower past the end");
        assert_eq!(at(12_000_000, None), 1.0, "the gate is closed");
        let late = Some(9_000_000);
        let from = config.env.settled_from("cassie", late).unwrap();
        assert!(from > settled && at(from, late) == 1.0, "a late gate settles later");
        config.run.timesteps = from;
        assert_eq!(std_scale(&config, from + 5, late).unwrap(), 1.0, "settles past the end");
        let mut cartpole = TrainConfig::for_env("cartpole");
        cartpole.net.std_decay = 0.5;
        cartpole.net.std_schedule = StdSchedule::Settled;
        let half = cartpole.run.timesteps / 2;
        assert!((std_scale(&cartpole, half, None).unwrap() - 0.75).abs() < 1e-9);
    }
}
