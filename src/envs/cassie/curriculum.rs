//! Cassie's curriculum: one [`Stage`] per schedule of its settings, read from them, and the
//! adaptive terrain levels' rule (`terrain_levels`).

use super::commands::CommandKind;
use super::config::CassieConfig;
use super::stage::Stage;
use crate::envs::levels::LevelRule;
use crate::envs::terrain::TerrainKind;
use crate::envs::StageGate;

/// The terrain kinds with a level, in track order, and their `progress.csv` columns.
const TRACKS: [TerrainKind; 4] =
    [TerrainKind::Rough, TerrainKind::Slope, TerrainKind::Stairs, TerrainKind::Flights];
const TRACK_COLUMNS: [&str; 4] =
    ["Terrain/Level Rough", "Terrain/Level Slope", "Terrain/Level Stairs", "Terrain/Level Flights"];

/// `terrain_levels`' rule: at least `terrain_promote` (80 % by default) of a kind's episodes
/// passed, up by 0.05; at most 50 %, down; a kind with fewer than 4 episodes in the iteration
/// stays.
const TERRAIN_RULE: LevelRule = LevelRule {
    tracks: &TRACK_COLUMNS,
    promote: TERRAIN_PROMOTE,
    demote: 0.5,
    step: 0.05,
    min_episodes: 4,
};

/// `terrain_promote`'s default.
pub const TERRAIN_PROMOTE: f64 = 0.8;

/// The share of the level below it an episode's difficulty is drawn from: the top quarter,
/// so a kind's episodes run near what it has reached, not on the easy ground it has passed.
pub(super) const LEVEL_SPREAD: f64 = 0.25;

impl TerrainKind {
    /// Its track among the adaptive levels; `None` for the flat floor, the mix itself and
    /// the check's fixed flights.
    pub fn track(self) -> Option<u8> {
        TRACKS.iter().position(|&k| k == self).map(|t| t as u8)
    }

    /// Whether `--terrain-levels` can train on it: a kind with a track, or the mix of them.
    pub fn has_levels(self) -> bool {
        self == TerrainKind::Mix || self.track().is_some()
    }
}

/// Cassie's curriculum stages, one per schedule of its settings.
impl CassieConfig {
    /// The training perturbations' stage: from `robust_start` (and, with
    /// [`Self::robust_start_speed`], the gate), rising over `robust_ramp` steps.
    pub fn robust_stage(&self) -> Stage {
        Stage {
            not_before: self.robust_start,
            gated: self.robust_start_speed > 0.0,
            ramp: self.robust_ramp,
        }
    }

    /// The pushes' stage: the perturbations', from [`Self::push_start`] when it is set.
    pub fn push_stage(&self) -> Stage {
        Stage { not_before: self.pushes_from(), ..self.robust_stage() }
    }

    /// The omnidirectional commands' stage: from `omni_start` (and, with
    /// [`Self::omni_start_speed`], the gate).
    pub fn omni_stage(&self) -> Stage {
        Stage { not_before: self.omni_start, gated: self.omni_start_speed > 0.0, ramp: 0 }
    }

    /// The full step's stage ([`Self::full_step_speed`]): from the start on with
    /// `full_step_start` 0 (whatever the gate), else from that start behind the perturbations'
    /// gate.
    pub fn full_step_stage(&self) -> Stage {
        Stage {
            not_before: self.full_step_start,
            gated: self.full_step_start > 0 && self.robust_start_speed > 0.0,
            ramp: 0,
        }
    }

    /// The strength of the training perturbations after `timesteps` training steps, in a run
    /// whose gated stage began at `stage_from`, in [0, 1] ([`Self::robust_stage`]).
    pub fn robustness_at(&self, timesteps: u64, stage_from: Option<u64>) -> f64 {
        self.robust_stage().strength(timesteps, stage_from)
    }

    /// The pushes' strength after `timesteps` training steps, in [0, 1]
    /// ([`Self::push_stage`]).
    pub fn push_strength_at(&self, timesteps: u64, stage_from: Option<u64>) -> f64 {
        self.push_stage().strength(timesteps, stage_from)
    }

    /// The fall penalty of an episode collected after `timesteps` training steps (`None`: an
    /// evaluation): [`Self::pushed_fall_penalty`] once the pushes have begun, if it is set.
    pub fn fall_penalty_at(&self, timesteps: Option<u64>, stage_from: Option<u64>) -> f64 {
        match (self.pushed_fall_penalty, timesteps) {
            (Some(pushed), None) => pushed,
            (Some(pushed), Some(t)) if self.push_stage().begun(t, stage_from) => pushed,
            _ => self.fall_penalty,
        }
    }

    /// The two gates' speeds `(omni, robust)` when both are asked for at different speeds:
    /// the combination [`Self::check`] refuses (a run opens one gate), and the one the walking
    /// preset's gate gives way to (`give_way.rs`).
    pub fn gate_conflict(&self) -> Option<(f64, f64)> {
        let (omni, robust) = (self.omni_gate()?, self.robust_gate()?);
        (omni.forward_speed != robust.forward_speed)
            .then_some((omni.forward_speed, robust.forward_speed))
    }

    /// The perturbations' gate ([`Self::robust_start_speed`]), if these settings ask for one,
    /// from the earlier of their start and the pushes'.
    fn robust_gate(&self) -> Option<StageGate> {
        (self.robust_start_speed > 0.0).then_some(StageGate {
            not_before: self.robust_start.min(self.pushes_from()),
            forward_speed: self.robust_start_speed,
            setting: "--robust-start-speed",
        })
    }

    /// The omnidirectional stage's gate ([`Self::omni_start_speed`], with omnidirectional
    /// commands), if these settings ask for one.
    pub fn omni_gate(&self) -> Option<StageGate> {
        let omni = matches!(self.commands, CommandKind::Omni | CommandKind::OmniWalk);
        (omni && self.omni_start_speed > 0.0).then_some(StageGate {
            not_before: self.omni_start,
            forward_speed: self.omni_start_speed,
            setting: "--omni-start-speed",
        })
    }

    /// The gate of the run's stages that wait for forward walking: the omnidirectional
    /// commands' ([`Self::omni_start_speed`]), the perturbations'
    /// ([`Self::robust_start_speed`]), or both. Both share one gate (the runner opens one per
    /// run, [`Self::check`] asks for one speed): it opens at the first evaluation that walks
    /// from the earlier of the two `not_before` steps, and each stage then begins at the later
    /// of that step and its own start. Why both: an omnidirectional run needs forward walking
    /// before its omnidirectional commands *and* before its perturbations, and a seed that
    /// walks late must not be perturbed while it still marches in place (D-005).
    pub fn stage_gate(&self) -> Option<StageGate> {
        match (self.omni_gate(), self.robust_gate()) {
            (Some(omni), Some(robust)) => Some(StageGate {
                not_before: omni.not_before.min(robust.not_before),
                setting: "--omni-start-speed (shared with --robust-start-speed)",
                ..omni
            }),
            (omni, robust) => omni.or(robust),
        }
    }

    /// The step the pushes begin at, before any gate.
    pub(super) fn pushes_from(&self) -> u64 {
        self.push_start.unwrap_or(self.robust_start)
    }

    /// The adaptive terrain levels' rule, with `terrain_levels`.
    pub fn level_rule(&self) -> Option<LevelRule> {
        self.terrain_levels.then_some(LevelRule { promote: self.terrain_promote, ..TERRAIN_RULE })
    }

    /// The terrain's stage: from `terrain_start` (behind the perturbations' gate), its top
    /// difficulty growing over `terrain_ramp` steps.
    pub fn terrain_stage(&self) -> Stage {
        Stage {
            not_before: self.terrain_start,
            gated: self.robust_start_speed > 0.0,
            ramp: self.terrain_ramp,
        }
    }
}

/// A training episode on a kind with a level: what [`TrackRun::passed`] judges it by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct TrackRun {
    pub track: u8,
    /// The ground's axis (the heading it was laid along), a unit vector in the world's xy.
    axis: [f32; 2],
    /// The pelvis's world xy at the episode's start.
    start: [f32; 2],
    /// The distance (m) the commands asked for along the axis so far (signed).
    asked: f32,
}

/// The commanded distance along the ground (m) from which an episode must cover half of it
/// to pass; below it, not falling is enough (a turn or a step in place).
const ASKED_AT_LEAST: f32 = 1.0;

impl TrackRun {
    /// An episode on `track`, its ground laid along `heading` (rad).
    pub fn new(track: u8, heading: f32) -> Self {
        Self { track, axis: [heading.cos(), heading.sin()], start: [0.0; 2], asked: 0.0 }
    }

    /// Sets where the pelvis starts (after the physics reset).
    pub fn start_at(&mut self, xy: [f32; 2]) {
        self.start = xy;
    }

    /// Adds one policy step of `dt` seconds at the command `[x, y]` (m/s, in the frame of the
    /// commanded `heading`).
    pub fn ask(&mut self, [x, y]: [f32; 2], heading: f32, dt: f32) {
        let (s, c) = heading.sin_cos();
        let world = [x * c - y * s, x * s + y * c];
        self.asked += (world[0] * self.axis[0] + world[1] * self.axis[1]) * dt;
    }

    /// How the episode, ending with the pelvis at `xy`, went on its ground: `Some(false)` after
    /// a fall; where the commands asked for at least [`ASKED_AT_LEAST`] along the ground,
    /// whether at least half of it was covered in that direction (legged_gym demotes a robot
    /// below half its commanded distance; standing at the foot of the stairs does not pass);
    /// `None` for an episode that neither fell nor was asked to cross the ground (a turn or a
    /// sidestep beside the stairs says nothing about them).
    pub fn passed(&self, xy: [f32; 2], fell: bool) -> Option<bool> {
        let along = |k: usize| (xy[k] - self.start[k]) * self.axis[k];
        let walked = along(0) + along(1);
        match (fell, self.asked.abs() >= ASKED_AT_LEAST) {
            (true, _) => Some(false),
            (false, true) => Some(walked / self.asked >= 0.5),
            (false, false) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_episode_passes_without_a_fall_and_with_half_the_asked_distance() {
        // Ground along +y; 10 s at 0.5 m/s forward with the heading along it: 5 m asked.
        let mut run = TrackRun::new(2, std::f32::consts::FRAC_PI_2);
        run.start_at([1.0, 1.0]);
        for _ in 0..100 {
            run.ask([0.5, 0.0], std::f32::consts::FRAC_PI_2, 0.1);
        }
        assert!((run.asked - 5.0).abs() < 1e-4, "{}", run.asked);
        assert_eq!(run.passed([1.2, 3.6], false), Some(true), "2.6 of 5 m along the ground");
        assert_eq!(run.passed([1.2, 3.4], false), Some(false), "2.4 of 5 m: at the foot");
        assert_eq!(run.passed([1.0, 7.0], true), Some(false), "a fall never passes");
        assert_eq!(run.passed([4.0, 1.0], false), Some(false), "sideways is not along it");
        // Sidestepping beside the ground asks for nothing along it: no outcome unless it fell.
        let mut across = TrackRun::new(0, 0.0);
        for _ in 0..100 {
            across.ask([0.0, 0.3], 0.0, 0.1);
        }
        assert!(across.asked.abs() < 1e-6);
        assert_eq!(across.passed([0.0, 3.0], false), None);
        assert_eq!(across.passed([0.0, 1.0], true), Some(false));
        // Backward along the ground: covered backward.
        let mut back = TrackRun::new(1, 0.0);
        for _ in 0..100 {
            back.ask([-0.3, 0.0], 0.0, 0.1);
        }
        assert_eq!(back.passed([-1.6, 0.0], false), Some(true));
        assert_eq!(back.passed([1.6, 0.0], false), Some(false));
    }

    #[test]
    fn the_kinds_with_levels_are_the_mixs_ground() {
        use crate::envs::terrain::MIXED;
        let tracks: Vec<_> = MIXED.iter().filter_map(|k| k.track()).collect();
        assert_eq!(tracks, [0, 1, 2, 3]);
        assert!(TerrainKind::Mix.has_levels() && !TerrainKind::Flat.has_levels());
        assert!(!TerrainKind::Upstairs.has_levels() && TerrainKind::Upstairs.track().is_none());
        assert_eq!(TERRAIN_RULE.tracks.len(), TRACKS.len());
    }

    #[test]
    fn terrain_promote_sets_the_rules_bar_and_needs_the_levels() {
        let levels = CassieConfig {
            terrain: TerrainKind::Mix,
            terrain_levels: true,
            ..CassieConfig::default()
        };
        assert_eq!(levels.level_rule(), Some(TERRAIN_RULE));
        let lower = CassieConfig { terrain_promote: 0.6, ..levels.clone() };
        assert_eq!(lower.level_rule(), Some(LevelRule { promote: 0.6, ..TERRAIN_RULE }));
        assert_eq!(lower.check(), Ok(()));
        // An evaluation of a run that trained with it runs its ground without the levels.
        let mut eval = lower.clone();
        let applied = super::super::eval_physics::apply(&mut eval, &Default::default());
        assert!(applied.is_ok() && !eval.terrain_levels, "{applied:?}");
        let without = CassieConfig { terrain_levels: false, ..lower };
        assert!(without.check().unwrap_err().contains("--terrain-levels"));
    }
}
