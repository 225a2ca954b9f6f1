//! Adaptive curriculum levels: a difficulty level in [0, 1] per track (for Cassie, a terrain
//! kind), promoted or demoted between iterations from how the last iteration's training
//! episodes on that track went. legged_gym's terrain curriculum moves each robot's level by the
//! distance it walked; gait's episodes are not tied to one robot slot, so the level is the
//! track's, and the rule reads the share of the iteration's episodes that passed. The counts
//! do not depend on which worker ran which episode, so the levels are the same for any worker
//! or rank count; they live in the resume state.

use serde::{Deserialize, Serialize};

/// The most tracks an env can have.
pub const MAX_TRACKS: usize = 8;

/// One level per track, each in [0, 1] (0: the easiest ground).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Levels(pub [f32; MAX_TRACKS]);

impl Levels {
    /// Track `track`'s level (0 for a track beyond [`MAX_TRACKS`]).
    pub fn of(&self, track: usize) -> f32 {
        self.0.get(track).copied().unwrap_or(0.0)
    }
}

/// How one training episode went on its track.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrackOutcome {
    /// The track it ran (`< MAX_TRACKS`).
    pub track: u8,
    /// Whether it passed (the env's own judgement: for Cassie, no fall and at least half the
    /// commanded distance along the ground's axis).
    pub passed: bool,
}

/// How levels move: after each iteration, a track with at least `min_episodes` episodes is
/// promoted by `step` when at least `promote` of them passed and demoted by `step` when at
/// most `demote` did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelRule {
    /// The tracks' names, in track order (the logged columns' suffixes).
    pub tracks: &'static [&'static str],
    /// The share of a track's episodes that must pass for it to go up.
    pub promote: f64,
    /// The share at or below which it goes down.
    pub demote: f64,
    /// How far a level moves per iteration.
    pub step: f64,
    /// The fewest episodes of a track in an iteration that move its level.
    pub min_episodes: usize,
}

impl LevelRule {
    /// Moves `levels` by the iteration's `outcomes`; returns whether any level changed.
    pub fn update(&self, levels: &mut Levels, outcomes: &[TrackOutcome]) -> bool {
        let mut counts = [(0usize, 0usize); MAX_TRACKS];
        for o in outcomes {
            if let Some((n, passed)) = counts.get_mut(o.track as usize) {
                *n += 1;
                *passed += o.passed as usize;
            }
        }
        let mut changed = false;
        for (level, &(n, passed)) in levels.0.iter_mut().zip(&counts).take(self.tracks.len()) {
            if n < self.min_episodes.max(1) {
                continue;
            }
            let share = passed as f64 / n as f64;
            let delta = if share >= self.promote {
                self.step
            } else if share <= self.demote {
                -self.step
            } else {
                0.0
            };
            let next = (*level as f64 + delta).clamp(0.0, 1.0) as f32;
            changed |= next != *level;
            *level = next;
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: LevelRule = LevelRule {
        tracks: &["a", "b", "c"],
        promote: 0.8,
        demote: 0.5,
        step: 0.25,
        min_episodes: 2,
    };

    fn outcomes(track: u8, passed: usize, failed: usize) -> Vec<TrackOutcome> {
        let pass = std::iter::repeat_n(TrackOutcome { track, passed: true }, passed);
        pass.chain(std::iter::repeat_n(TrackOutcome { track, passed: false }, failed)).collect()
    }

    #[test]
    fn levels_move_by_the_share_that_passed_and_stay_in_the_unit_interval() {
        let mut levels = Levels([0.0, 0.5, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        // Track a: 4 of 5 passed, promoted; b: 2 of 4, demoted; c: 3 of 4 (between), kept.
        let mut all = outcomes(0, 4, 1);
        all.extend(outcomes(1, 2, 2));
        all.extend(outcomes(2, 3, 1));
        assert!(RULE.update(&mut levels, &all));
        assert_eq!(&levels.0[..3], &[0.25, 0.25, 1.0]);
        // Promotion stops at 1, demotion at 0; a track with too few episodes stays.
        let mut top = Levels([1.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0]);
        let mut all = outcomes(0, 3, 0);
        all.extend(outcomes(1, 0, 3));
        all.extend(outcomes(2, 0, 1));
        assert!(!RULE.update(&mut top, &all));
        assert_eq!(&top.0[..3], &[1.0, 0.0, 0.5]);
    }

    #[test]
    fn the_order_of_the_outcomes_does_not_matter() {
        let mut all = outcomes(0, 4, 1);
        all.extend(outcomes(1, 1, 3));
        let (mut a, mut b) = (Levels([0.5; MAX_TRACKS]), Levels([0.5; MAX_TRACKS]));
        RULE.update(&mut a, &all);
        all.reverse();
        RULE.update(&mut b, &all);
        assert_eq!(a, b);
        // Tracks the rule does not name, and outcomes beyond MAX_TRACKS, are left alone.
        assert_eq!(a.0[3..], [0.5; MAX_TRACKS - 3]);
        let mut c = Levels::default();
        RULE.update(&mut c, &[TrackOutcome { track: 200, passed: true }; 4]);
        assert_eq!(c, Levels::default());
    }
}
