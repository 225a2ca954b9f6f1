//! `gait check --terrains`: the terrain task's cells (issue 83's "done means"). Each case is a
//! ground, its commands and how an episode on it succeeds; a cell (case, command, model) is
//! within when enough of its episodes succeed and none was cut by a simulation blow-up.
//!
//! An episode *crosses* a ground with an end (the check's flights up and down, the slope up and
//! down) when it walks the ground's length along its heading without a fall; it *walks* a
//! ground without an end (random flights) when it goes 20 s without a fall and covers at least
//! half the distance its command asks; on rough ground it is *tracked* as on the flat floor
//! (no fall, each speed within the bound), with the 0.2 m/s speed bound, and on an
//! axis whose command is not above that bound (the sidesteps' 0.2 m/s, where a robot that
//! stands would be within) it must also move the commanded way at half the command or more.

use std::fmt;

use crate::algos::tracking::EvalEpisode;
use crate::envs::terrain::TerrainKind;
use crate::envs::TerrainArg;

/// How an episode on a case's ground succeeds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Success {
    /// No fall, and the ground's length ([`TerrainKind::course_length`]) walked.
    Crossed,
    /// No fall, and at least half the commanded distance walked.
    Walked,
    /// No fall, each speed within this bound of the command (m/s; the yaw rate's bound is the
    /// task's).
    Tracked(f64),
}

/// One case of the terrain task.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TerrainCase {
    /// The ground.
    pub terrain: TerrainArg,
    /// Its commands, a cell each.
    pub commands: &'static [[f32; 3]],
    /// How an episode succeeds.
    pub success: Success,
    /// Successes needed per 10 episodes (the 9 of 10 on stairs).
    pub per_ten: usize,
    /// Steps per episode.
    pub steps: usize,
}

const AHEAD: &[[f32; 3]] = &[[0.5, 0.0, 0.0]];

/// Stairs of 15 cm risers (difficulty 2/3, [`TerrainKind::riser`]).
const RISER_15_CM: f64 = 2.0 / 3.0;

/// The cells: 15 cm stairs up and down (flights of 8, 30 cm treads) and random flights
/// of 10-17 cm at 0.5 m/s; the ten task commands on ±4 cm rough ground; a 10° slope up and
/// down at 0.5 m/s (30 s, so a walker slowed by the climb can still reach its end).
pub const TERRAIN_CASES: [TerrainCase; 5] = [
    TerrainCase {
        terrain: TerrainArg { kind: TerrainKind::Upstairs, difficulty: RISER_15_CM },
        commands: AHEAD,
        success: Success::Crossed,
        per_ten: 9,
        steps: 1000,
    },
    TerrainCase {
        terrain: TerrainArg { kind: TerrainKind::Downstairs, difficulty: RISER_15_CM },
        commands: AHEAD,
        success: Success::Crossed,
        per_ten: 9,
        steps: 1000,
    },
    TerrainCase {
        terrain: TerrainArg { kind: TerrainKind::Flights, difficulty: 1.0 },
        commands: AHEAD,
        success: Success::Walked,
        per_ten: 8,
        steps: 1000,
    },
    TerrainCase {
        terrain: TerrainArg { kind: TerrainKind::Rough, difficulty: RISER_15_CM },
        commands: &crate::check::TASK_COMMANDS,
        success: Success::Tracked(0.2),
        per_ten: 10,
        steps: 1000,
    },
    TerrainCase {
        terrain: TerrainArg { kind: TerrainKind::Slope, difficulty: 0.5 },
        commands: AHEAD,
        success: Success::Crossed,
        per_ten: 10,
        steps: 1500,
    },
];

impl TerrainCase {
    /// Successes needed of `episodes`.
    pub fn needed(&self, episodes: usize) -> usize {
        (episodes * self.per_ten).div_ceil(10)
    }

    /// Whether one episode (`fell`, or its means over `steps` steps of `dt` s) succeeds.
    pub fn succeeds(&self, episode: &EvalEpisode, fell: bool, dt: f32) -> bool {
        if fell || episode.cut {
            return false;
        }
        let forward = episode.metric("forward_speed").unwrap_or(f64::NAN);
        let walked = forward * episode.steps as f64 * dt as f64;
        match self.success {
            Success::Crossed => {
                let length = self.terrain.kind.course_length().unwrap_or(f32::INFINITY);
                walked >= length as f64
            }
            Success::Walked => {
                let asked = episode.command.map_or(0.0, |c| c[0] as f64);
                walked >= 0.5 * asked * episode.steps as f64 * dt as f64
            }
            Success::Tracked(bound) => {
                let command = episode.command.unwrap_or([0.0; 3]);
                let within = |name: &str, axis: usize, bound: f64| {
                    let v = episode.metric(name).unwrap_or(f64::NAN);
                    (v - command[axis] as f64).abs() <= bound
                };
                // Where standing still is within the bound, moving the commanded way is asked (the
                // margin: a command of 0.2 as f32 is a hair over 0.2).
                let moves = |name: &str, axis: usize| {
                    let c = command[axis] as f64;
                    let v = episode.metric(name).unwrap_or(f64::NAN);
                    c == 0.0 || c.abs() > bound + 1e-6 || v * c.signum() >= 0.5 * c.abs()
                };
                within("forward_speed", 0, bound)
                    && within("lateral_speed", 1, bound)
                    && within("yaw_rate", 2, crate::algos::tracking::YAW_RATE_TOLERANCE)
                    && moves("forward_speed", 0)
                    && moves("lateral_speed", 1)
            }
        }
    }
}

/// What a terrain cell adds to a row: its ground, successes against those needed, and the
/// mean distance walked.
#[derive(Debug, Clone, PartialEq)]
pub struct GroundOutcome {
    /// `KIND:DIFFICULTY`.
    pub ground: String,
    /// Episodes that succeeded.
    pub successes: usize,
    /// Successes the cell needs.
    pub needed: usize,
    /// Mean distance walked along the heading (m).
    pub walked: f64,
}

impl fmt::Display for GroundOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ok = format!("{}/{}", self.successes, self.needed);
        write!(f, "{:<18} {ok:<7} {:6.2} m", self.ground, self.walked)
    }
}

/// The table's header for the terrain task.
pub const TERRAIN_HEADER: &str =
    "sim     command      falls  ground             ok/need walked    \
                                  forward (err)    lateral (err)    yaw rate (err)   ok";

#[cfg(test)]
mod tests {
    use super::*;

    fn episode(command: [f32; 3], forward: f64, steps: usize) -> EvalEpisode {
        let metrics = vec![
            ("forward_speed".to_string(), forward),
            ("lateral_speed".to_string(), 0.0),
            ("yaw_rate".to_string(), command[2] as f64),
        ];
        EvalEpisode { command: Some(command), metrics, steps, cut: false }
    }

    #[test]
    fn a_sidestep_on_rough_ground_asks_the_robot_to_sidestep() {
        let rough = TERRAIN_CASES[3];
        let sidestep = |lateral: f64| {
            let mut e = episode([0.0, -0.2, 0.0], 0.0, 1000);
            e.metrics[1].1 = lateral;
            rough.succeeds(&e, false, 0.02)
        };
        // Standing still is within 0.2 m/s of the command, but does not sidestep.
        assert_eq!(
            [0.0, -0.05, -0.12, -0.35, 0.1].map(sidestep),
            [false, false, true, true, false]
        );
        // Commands above the bound and zero commands keep the plain bound.
        assert!(rough.succeeds(&episode([0.0, 0.0, 0.0], 0.0, 1000), false, 0.02));
        assert!(rough.succeeds(&episode([-0.3, 0.0, 0.0], -0.11, 1000), false, 0.02));
    }

    #[test]
    fn an_episode_succeeds_by_its_grounds_rule() {
        let [up, _, flights, rough, slope] = TERRAIN_CASES;
        // 4.2 m of stairs: 0.25 m/s for 20 s is 5 m, 0.2 m/s is 4 m.
        assert!(up.succeeds(&episode([0.5, 0.0, 0.0], 0.25, 1000), false, 0.02));
        assert!(!up.succeeds(&episode([0.5, 0.0, 0.0], 0.2, 1000), false, 0.02));
        assert!(!up.succeeds(&episode([0.5, 0.0, 0.0], 0.5, 1000), true, 0.02), "a fall");
        // Flights: half the asked distance.
        assert!(flights.succeeds(&episode([0.5, 0.0, 0.0], 0.26, 1000), false, 0.02));
        assert!(!flights.succeeds(&episode([0.5, 0.0, 0.0], 0.24, 1000), false, 0.02));
        // Rough: within 0.2 m/s.
        assert!(rough.succeeds(&episode([1.0, 0.0, 0.0], 0.81, 1000), false, 0.02));
        assert!(!rough.succeeds(&episode([1.0, 0.0, 0.0], 0.79, 1000), false, 0.02));
        // Slope: 9 m in 30 s.
        assert!(slope.succeeds(&episode([0.5, 0.0, 0.0], 0.31, 1500), false, 0.02));
        assert!(!slope.succeeds(&episode([0.5, 0.0, 0.0], 0.29, 1500), false, 0.02));
        assert_eq!((up.needed(10), up.needed(5), rough.needed(3)), (9, 5, 3));
    }
}
