//! One stage of a training curriculum, the one type behind every `*_at` schedule of Cassie's
//! settings (perturbations, pushes, omnidirectional commands, the full step, the axis share;
//! each named in `curriculum.rs`):
//! it begins at a training step, optionally behind the run's forward-walking gate, and its
//! strength rises linearly over a ramp.

/// A curriculum stage: it begins at `not_before` training steps or, when `gated`, at the later
/// of that and the step the run's gate opened at (`stage_from`: the first evaluation that
/// walked: the settings' `stage_gate`); its strength then rises linearly from
/// 0 to 1 over `ramp` steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stage {
    /// The first training step it may begin at.
    pub not_before: u64,
    /// Whether it waits for the gate as well.
    pub gated: bool,
    /// Steps from its beginning to full strength (0: at once).
    pub ramp: u64,
}

impl Stage {
    /// A stage that begins at `not_before` whatever the gate, at full strength at once.
    pub fn at(not_before: u64) -> Self {
        Self { not_before, gated: false, ramp: 0 }
    }

    /// The step it begins at; `None` while the gate it waits for is closed.
    pub fn start(&self, stage_from: Option<u64>) -> Option<u64> {
        match (self.gated, stage_from) {
            (false, _) => Some(self.not_before),
            (true, Some(opened)) => Some(opened.max(self.not_before)),
            (true, None) => None,
        }
    }

    /// Whether it has begun after `timesteps` training steps.
    pub fn begun(&self, timesteps: u64, stage_from: Option<u64>) -> bool {
        self.start(stage_from).is_some_and(|start| timesteps >= start)
    }

    /// Its strength after `timesteps` training steps, in [0, 1]: 0 before it begins, then
    /// rising linearly over the ramp.
    pub fn strength(&self, timesteps: u64, stage_from: Option<u64>) -> f64 {
        let Some(start) = self.start(stage_from) else { return 0.0 };
        if timesteps < start {
            0.0
        } else if self.ramp == 0 {
            1.0
        } else {
            ((timesteps - start) as f64 / self.ramp as f64).min(1.0)
        }
    }

    /// The step from which it is at full strength; `None` while the gate is closed.
    pub fn full_from(&self, stage_from: Option<u64>) -> Option<u64> {
        self.start(stage_from).map(|start| start.saturating_add(self.ramp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ungated_stage_ramps_from_its_start() {
        let s = Stage { not_before: 100, gated: false, ramp: 50 };
        assert_eq!(s.start(None), Some(100));
        assert_eq!((s.strength(99, None), s.strength(100, None)), (0.0, 0.0));
        assert_eq!(
            (s.strength(125, None), s.strength(150, None), s.strength(9999, None)),
            (0.5, 1.0, 1.0)
        );
        assert!(!s.begun(99, None) && s.begun(100, None));
        assert_eq!(s.full_from(Some(7)), Some(150), "the gate does not move it");
        assert_eq!(Stage::at(10).strength(10, None), 1.0);
    }

    #[test]
    fn a_gated_stage_waits_for_the_gate_and_its_own_start() {
        let s = Stage { not_before: 100, gated: true, ramp: 10 };
        assert_eq!((s.start(None), s.strength(1_000, None), s.full_from(None)), (None, 0.0, None));
        assert!(!s.begun(1_000, None));
        // The gate opened before the stage's own start: the start holds.
        assert_eq!(s.start(Some(40)), Some(100));
        // ... after it: the stage begins at the gate.
        assert_eq!(s.start(Some(300)), Some(300));
        assert_eq!((s.strength(299, Some(300)), s.strength(305, Some(300))), (0.0, 0.5));
        assert_eq!(s.full_from(Some(300)), Some(310));
        let end = Stage { not_before: u64::MAX, gated: false, ramp: 10 };
        assert_eq!(end.full_from(None), Some(u64::MAX), "saturates");
    }
}
