//! Running a prepared evaluation: the header, one episode at a time (its line, its course
//! legs, its frames for a picture), the pictures, and the summary.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::{bail, Result};

use super::{ActionNoise, EvalSummary, PreparedEval};
use crate::algos::rollout::{EpisodeEnd, Flow, Rollout, Transition};
use crate::algos::seeding::{derive, stream};
use crate::algos::tracking::EvalEpisode;
use crate::course::LegTally;
use crate::envs::{CourseLeg, Env};
use crate::replay::{render_gif, write_page, Episode, Frame, GifStyle, Ground};

impl PreparedEval {
    /// Runs the episodes and prints one line per episode plus a summary.
    pub(super) fn run(mut self, out: &mut impl Write) -> Result<EvalSummary> {
        tch::set_num_threads(1);
        let _no_grad = tch::no_grad_guard();
        self.write_header(out)?;
        let mut summary = EvalSummary {
            checkpoint: self.checkpoint.clone(),
            returns: vec![],
            lengths: vec![],
            terms: BTreeMap::new(),
            metrics: BTreeMap::new(),
            episodes: Vec::new(),
            course_episodes: Vec::new(),
            blowups: 0,
            interrupted: false,
            policy_dt: self.env.policy_dt(),
        };
        let mut steps_total = 0usize;
        let mut rollout = Rollout::new();
        for episode in 0..self.args.episodes {
            if crate::algos::interrupt::requested() {
                summary.interrupted = true;
                break;
            }
            steps_total += self.episode(episode, &mut rollout, &mut summary, out)?;
        }
        self.write_pictures(out)?;
        for value in summary.terms.values_mut().chain(summary.metrics.values_mut()) {
            *value /= steps_total.max(1) as f64;
        }
        write_summary(&mut summary, &self.env_name, out)?;
        Ok(summary)
    }

    /// What runs, on what, with which pushes.
    fn write_header(&self, out: &mut impl Write) -> Result<()> {
        let args = &self.args;
        writeln!(
            out,
            "evaluating {} on '{}' ({} episodes)",
            self.checkpoint.display(),
            self.env_name,
            args.episodes
        )?;
        for line in self.note.iter().chain(&self.physics) {
            writeln!(out, "{line}")?;
        }
        if let Some(speed) = args.push.filter(|&v| v > 0.0) {
            let size = if args.push_exact { "exactly" } else { "up to" };
            writeln!(
                out,
                "pushes: {size} {speed} m/s every 2-5 s, in a random horizontal direction"
            )?;
        }
        Ok(())
    }

    /// Runs episode `episode`, adds it to `summary` and prints its line (and its course legs);
    /// the steps it adds to the means (none for an episode the simulation's blow-up cut).
    fn episode(
        &mut self,
        episode: usize,
        rollout: &mut Rollout,
        summary: &mut EvalSummary,
        out: &mut impl Write,
    ) -> Result<usize> {
        let seed = self.args.seed;
        self.env.seed(derive(seed, &[stream::EVAL_JOB, u64::MAX, episode as u64]));
        self.policy.reset();
        let mut noise = ActionNoise::new(
            self.args.action_noise,
            derive(seed, &[stream::ACTION_NOISE, u64::MAX, episode as u64]),
        );
        let mut legs = self
            .course
            .as_ref()
            .map(|(legs, steps)| LegTally::new(legs, *steps, self.env.policy_dt()));
        let mut sums = StepSums::default();
        let (ret, end, episode_metrics) =
            self.steps(episode, rollout, &mut noise, legs.as_mut(), &mut sums)?;
        let len = end.steps;
        let fell = self.env.termination().filter(|_| end.done);
        // Each metric's mean over this episode (Cassie: its forward and lateral speed, so a
        // drift shows per episode and cannot cancel between episodes).
        let episode_means = EvalEpisode {
            command: self.args.command.as_ref().map(|c| [c[0], c[1], c[2]]),
            metrics: episode_metrics
                .iter()
                .map(|&(name, sum)| (name.to_string(), sum / len.max(1) as f64))
                .collect(),
            steps: len,
            cut: fell.is_none() && end.diverged,
        };
        let means: String =
            episode_means.metrics.iter().map(|(name, v)| format!(", {name} {v:.3}")).collect();
        let cut = episode_end(fell, &end);
        writeln!(out, "episode {episode:3}: return {ret:10.3}, length {len}{means}{cut}")?;
        if let Some(tally) = &legs {
            tally.write(fell.map(|_| len), out)?;
            summary.course_episodes.push(tally.outcomes(len, fell.is_some()));
        }
        let cut = episode_means.cut;
        summary.episodes.push(episode_means);
        if cut {
            // Cut by the simulator, not by the policy or the env: not in the means.
            summary.blowups += 1;
            return Ok(0);
        }
        for (name, sum) in sums.terms {
            *summary.terms.entry(name).or_default() += sum;
        }
        for (name, sum) in sums.metrics {
            *summary.metrics.entry(name).or_default() += sum;
        }
        summary.returns.push(ret);
        summary.lengths.push(len);
        Ok(len)
    }

    /// Steps episode `episode` to its end: its return, how it ended and its metric sums. Every
    /// action and transition is checked finite (a non-finite value is a failure of whoever
    /// produced it, never a scored episode); a stop request ends the episode where it is.
    fn steps(
        &mut self,
        episode: usize,
        rollout: &mut Rollout,
        noise: &mut ActionNoise,
        mut legs: Option<&mut LegTally>,
        sums: &mut StepSums,
    ) -> Result<Stepped> {
        // --gif draws the first episode; --record keeps them all.
        let recorded = if self.args.record.is_some() { self.args.episodes } else { 1 };
        let recording = self.replay.is_some() && episode < recorded;
        let (env_name, policy) = (self.env_name.as_str(), &mut self.policy);
        let traj_len = self.traj_len;
        let (mut ret, mut episode_metrics) = (0.0f64, Vec::new());
        // Both the start and the step callbacks write it.
        let trace = std::cell::RefCell::new(self.trace.take());
        let end = rollout.episode(
            self.env.as_mut(),
            self.traj_len,
            &mut |_, env| {
                if let Some(trace) = trace.borrow_mut().as_mut() {
                    trace.observe(env);
                }
                Ok(Flow::Continue)
            },
            &mut |t, obs, action| {
                policy.act(obs, noise, action)?;
                if let Some(i) = action.iter().position(|a| !a.is_finite()) {
                    bail!(
                        "episode {episode}, step {t}: the policy produced a non-finite action \
                         (entry {i} = {}) from a finite observation",
                        action[i]
                    );
                }
                Ok(Flow::Continue)
            },
            &mut |tr, env| {
                if !tr.reward.is_finite() || tr.next_obs.iter().any(|o| !o.is_finite()) {
                    bail!(
                        "episode {episode}, step {}: env '{env_name}' returned a non-finite \
                         observation or reward (reward {})",
                        tr.t,
                        tr.reward
                    );
                }
                ret += tr.reward as f64;
                if let Some(trace) = trace.borrow_mut().as_mut() {
                    trace.row(episode, tr.t, tr.obs, tr.action, tr.reward, tr.done);
                    trace.observe(env);
                }
                for (name, value) in tr.info {
                    *sums.terms.entry(name.to_string()).or_default() += *value as f64;
                }
                for (name, value) in env.metrics() {
                    *sums.metrics.entry(name.to_string()).or_default() += *value as f64;
                }
                crate::algos::tracking::add_metrics(&mut episode_metrics, env.metrics());
                if let Some(legs) = legs.as_deref_mut() {
                    legs.add(tr.t, env.metrics());
                }
                if let Some(replay) = self.replay.as_mut().filter(|_| recording) {
                    if replay.episodes.len() == episode {
                        replay.episodes.push(new_episode(self.course.as_ref(), &self.args));
                    }
                    record_frame(&mut replay.episodes[episode], env, tr, traj_len);
                }
                if crate::algos::interrupt::requested() {
                    return Ok(Flow::Stop);
                }
                Ok(Flow::Continue)
            },
        );
        self.trace = trace.into_inner();
        Ok((ret, end?, episode_metrics))
    }

    /// The GIF, the replay page and the trace, of what was recorded (no picture after a stop
    /// before the first step).
    fn write_pictures(&self, out: &mut impl Write) -> Result<()> {
        if let (Some(trace), Some(path)) = (&self.trace, &self.args.trace) {
            trace.write(path)?;
            writeln!(out, "wrote {} ({} steps)", path.display(), trace.rows())?;
        }
        let replay =
            self.replay.as_ref().filter(|r| r.episodes.iter().any(|e| !e.frames.is_empty()));
        let Some(replay) = replay else { return Ok(()) };
        if let Some(path) = &self.args.gif {
            let frames = render_gif(replay, path, GifStyle::default())?;
            writeln!(out, "wrote {} ({frames} frames of episode 0)", path.display())?;
        }
        if let Some(path) = &self.args.record {
            write_page(replay, path)?;
            let frames: usize = replay.episodes.iter().map(|e| e.frames.len()).sum();
            writeln!(
                out,
                "wrote {} ({} episodes, {frames} frames; open it in a browser)",
                path.display(),
                replay.episodes.len()
            )?;
        }
        Ok(())
    }
}

/// A recorded episode before its first frame: its command (with a course: the first leg's)
/// and the course.
/// Appends the frame after `tr` to `recorded`, and at the episode's last frame (or a stop)
/// the ground around its path, for the pictures.
fn record_frame(recorded: &mut Episode, env: &dyn Env, tr: &Transition, traj_len: usize) {
    recorded.frames.push(Frame::capture(env, tr.reward, tr.info));
    let last = tr.done || recorded.frames.len() == traj_len;
    if last || crate::algos::interrupt::requested() {
        let field = env.bodies().and_then(|b| b.ground());
        recorded.ground = field.and_then(|f| Ground::around(f, &recorded.frames));
    }
}

fn new_episode(course: Option<&(Vec<CourseLeg>, usize)>, args: &super::EvalOptions) -> Episode {
    let legs = course.map(|(legs, _)| legs.clone()).unwrap_or_default();
    let command = match legs.first() {
        Some(leg) => Some(leg.command),
        None => args.command.as_ref().map(|c| [c[0], c[1], c[2]]),
    };
    Episode { command, course: legs, frames: vec![], ground: None }
}

/// One episode's sums of each reward term and metric over its steps, added to the summary's
/// unless a blow-up cut the episode.
#[derive(Default)]
struct StepSums {
    terms: BTreeMap<String, f64>,
    metrics: BTreeMap<String, f64>,
}

/// What [`PreparedEval::steps`] returns: the episode's return, how it ended, and the sums of
/// each metric over its steps.
type Stepped = (f64, EpisodeEnd, Vec<(&'static str, f64)>);

/// How an episode's line ends: nothing, its fall, a blown-up simulation, or an interrupt.
fn episode_end(fell: Option<&'static str>, end: &EpisodeEnd) -> String {
    if crate::algos::interrupt::requested() {
        return " (interrupted)".to_string();
    }
    match fell {
        Some(why) => format!(", fell: {why}"),
        // Not a fall: the simulator reset a non-finite state, and the step is dropped.
        None if end.diverged => {
            ", cut: the simulation blew up (non-finite state, reset by the simulator)".to_string()
        }
        None => String::new(),
    }
}

/// The mean return and length, and each reward term and metric per step.
fn write_means(summary: &EvalSummary, env_name: &str, out: &mut impl Write) -> Result<()> {
    let (min, max) = summary
        .returns
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &r| (a.min(r), b.max(r)));
    writeln!(
        out,
        "mean return {:.3} (min {min:.3}, max {max:.3}), mean length {:.1}",
        summary.mean_return(),
        summary.mean_length()
    )?;
    if summary.terms.is_empty() {
        writeln!(out, "reward terms: none (env '{env_name}' reports a single reward)")?;
    }
    for (name, value) in &summary.terms {
        writeln!(out, "  {name}: {value:.4} per step")?;
    }
    if !summary.metrics.is_empty() {
        writeln!(out, "metrics (mean per step):")?;
    }
    for (name, value) in &summary.metrics {
        writeln!(out, "  {name}: {value:.4}")?;
    }
    Ok(())
}

/// The summary lines: the means (blown-up episodes left out, and counted), an interrupt.
fn write_summary(summary: &mut EvalSummary, env_name: &str, out: &mut impl Write) -> Result<()> {
    if summary.returns.is_empty() && summary.blowups > 0 {
        writeln!(
            out,
            "no mean: all {} episodes were cut by the simulation blowing up (a non-finite \
             state the simulator reset)",
            summary.blowups
        )?;
    } else {
        write_means(summary, env_name, out)?;
    }
    if summary.blowups > 0 && !summary.returns.is_empty() {
        writeln!(
            out,
            "{} of {} episodes were cut by the simulation blowing up (a non-finite state the \
             simulator reset): left out of the means above",
            summary.blowups,
            summary.episodes.len()
        )?;
    }
    summary.interrupted |= crate::algos::interrupt::requested();
    if summary.interrupted {
        writeln!(
            out,
            "interrupted after {} episode(s): the numbers and files above hold what ran",
            summary.episodes.len()
        )?;
    }
    Ok(())
}
