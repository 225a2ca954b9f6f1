//! Cassie's curriculum: one [`Stage`] per schedule of its settings, read from them.

use super::config::CassieConfig;
use super::stage::Stage;

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
