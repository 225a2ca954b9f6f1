//! Per-leg tracking of a `gait eval --course` episode: what each leg's command got, after the
//! walker has had time to change gait.
//!
//! Why: an episode's means mix every leg (a course of forward, backward and stop averages to
//! a slow walk), so a course could only be judged by eye. Researchers check a course leg by
//! leg, against the same tolerances as a held command.

use std::io::Write;

use crate::envs::{CourseLeg, RewardTerm};

/// Seconds into each leg before its tally starts (at most half the leg): the change of gait
/// after a new command is not what the leg is scored on.
pub const SETTLE_SECONDS: f32 = 1.0;

/// One course episode's per-leg metric sums over each leg's settled steps.
#[derive(Debug, Clone)]
pub struct LegTally {
    /// Each leg's first step, first tallied step and end (exclusive).
    spans: Vec<(usize, usize, usize)>,
    /// Each leg's command `[x, y, turn]`.
    commands: Vec<[f32; 3]>,
    /// Seconds per policy step.
    dt: f32,
    sums: Vec<Vec<(&'static str, f64)>>,
    counts: Vec<usize>,
}

impl LegTally {
    /// A tally for `legs` (as [`crate::eval::course_legs`] gives them) of a course `steps`
    /// long at `dt` seconds per policy step.
    pub fn new(legs: &[CourseLeg], steps: usize, dt: f32) -> Self {
        let settle = (SETTLE_SECONDS / dt).round() as usize;
        let spans = legs
            .iter()
            .enumerate()
            .map(|(i, leg)| {
                let start = leg.start as usize;
                let end = legs.get(i + 1).map_or(steps, |next| next.start as usize);
                (start, start + settle.min((end - start) / 2), end)
            })
            .collect();
        Self {
            spans,
            commands: legs.iter().map(|leg| leg.command).collect(),
            dt,
            sums: vec![Vec::new(); legs.len()],
            counts: vec![0; legs.len()],
        }
    }

    /// Adds step `t`'s metrics to its leg, if the step is past that leg's settling time.
    pub fn add(&mut self, t: usize, metrics: &[RewardTerm]) {
        let Some(leg) = self.spans.iter().position(|&(_, from, end)| (from..end).contains(&t))
        else {
            return;
        };
        crate::algos::tracking::add_metrics(&mut self.sums[leg], metrics);
        self.counts[leg] += 1;
    }

    /// Each leg's mean metrics, `None` for a leg the episode did not reach past its settling
    /// time (a fall before it).
    pub fn means(&self) -> Vec<Option<Vec<(&'static str, f64)>>> {
        self.sums
            .iter()
            .zip(&self.counts)
            .map(|(sums, &n)| {
                (n > 0).then(|| sums.iter().map(|&(name, sum)| (name, sum / n as f64)).collect())
            })
            .collect()
    }

    /// What each leg got in an episode that ran `steps` steps and, when `fell`, ended in a
    /// fall: its settled means (None: not reached past its settling time) and whether the fall
    /// came during it.
    pub fn outcomes(&self, steps: usize, fell: bool) -> Vec<LegOutcome> {
        self.means()
            .into_iter()
            .zip(&self.spans)
            .zip(&self.commands)
            .map(|((means, &(start, _, end)), &command)| LegOutcome {
                command,
                means: means.map(|m| m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()),
                fell: fell && (start + 1..=end).contains(&steps),
            })
            .collect()
    }

    /// One line per leg: its time span, command and settled means; the leg the episode fell
    /// in (`fell_after`: the episode's length in steps, when it ended in a fall) says so.
    pub fn write(&self, fell_after: Option<usize>, out: &mut impl Write) -> std::io::Result<()> {
        let at = |step: usize| step as f32 * self.dt;
        let outcomes = self.outcomes(fell_after.unwrap_or(0), fell_after.is_some());
        for (i, leg) in outcomes.iter().enumerate() {
            let (start, from, end) = self.spans[i];
            let [x, y, turn] = leg.command;
            write!(out, "  leg {i}: {:.1}-{:.1} s at {x},{y},{turn}", at(start), at(end))?;
            match &leg.means {
                Some(means) => {
                    let values: Vec<String> =
                        means.iter().map(|(name, v)| format!("{name} {v:.3}")).collect();
                    write!(out, ", from {:.1} s: {}", at(from), values.join(", "))?;
                }
                None => write!(out, ": not reached")?,
            }
            match (leg.fell, fell_after) {
                (true, Some(n)) => writeln!(out, "; fell at {:.2} s", at(n))?,
                _ => writeln!(out)?,
            }
        }
        Ok(())
    }
}

/// One leg of one course episode, for judges of legs such as `gait check --course`.
#[derive(Debug, Clone, PartialEq)]
pub struct LegOutcome {
    /// The leg's command `[x, y, turn]`.
    pub command: [f32; 3],
    /// The env's metrics averaged over the leg's settled steps; None when the episode did not
    /// reach them.
    pub means: Option<Vec<(String, f64)>>,
    /// The episode fell during this leg.
    pub fell: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn legs() -> Vec<CourseLeg> {
        vec![
            CourseLeg { start: 0, command: [1.0, 0.0, 0.0], ground: None },
            CourseLeg { start: 150, command: [0.0, 0.2, 0.0], ground: None },
            CourseLeg { start: 200, command: [0.0, 0.0, 0.0], ground: None },
        ]
    }

    /// Each leg is scored from a second in (at most half the leg) to its end, and a leg an
    /// episode did not reach has no means.
    #[test]
    fn each_leg_is_tallied_after_it_settles() {
        let mut tally = LegTally::new(&legs(), 300, 0.02);
        assert_eq!(tally.spans, [(0, 50, 150), (150, 175, 200), (200, 250, 300)]);
        for t in 0..240 {
            let speed = if t < 50 {
                9.0
            } else if t < 150 {
                1.0
            } else {
                0.25
            };
            tally.add(t, &[("forward_speed", speed)]);
        }
        let means = tally.means();
        assert_eq!(means[0], Some(vec![("forward_speed", 1.0)]), "the first second is skipped");
        assert_eq!(means[1], Some(vec![("forward_speed", 0.25)]));
        assert_eq!(means[2], None, "fell before the stop leg settled");
        let mut out = Vec::new();
        tally.write(Some(240), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "  leg 0: 0.0-3.0 s at 1,0,0, from 1.0 s: forward_speed 1.000",
                "  leg 1: 3.0-4.0 s at 0,0.2,0, from 3.5 s: forward_speed 0.250",
                "  leg 2: 4.0-6.0 s at 0,0,0: not reached; fell at 4.80 s",
            ],
            "the first second is skipped"
        );
    }
}
