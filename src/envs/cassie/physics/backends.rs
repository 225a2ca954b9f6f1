//! The one table of physics backends ([`BACKENDS`]): each backend's `--sim` name, what it
//! simulates, its default timestep, the timestep past which it blows up, whether it has the
//! lab's springs, and how it is built. A third simulator is its folder beside `rapier/` and
//! `mujoco/`, a [`SimKind`] variant and one row here; a run's [`super::Models`] then mixes it
//! with the others by name.

use super::mujoco::MujocoCassie;
use super::rapier::CassieSim;
use super::{Models, Physics, SimKind};
use crate::envs::cassie::robot::description::Description;
use crate::envs::cassie::robot::Dynamics;

/// One physics backend.
pub struct Backend {
    /// Its variant.
    pub kind: SimKind,
    /// Its `--sim` value (its variant's name in kebab case, as clap and serde spell it).
    pub name: &'static str,
    /// What it simulates, for `gait eval`'s physics line.
    pub about: &'static str,
    /// Its timestep (s) when none is set.
    pub default_dt: f64,
    /// The largest timestep (s) the settings accept on it (`None`: the settings' own range).
    pub max_dt: Option<f64>,
    /// Whether its shins and heels have the lab's springs (the privileged critic's model input:
    /// 1 on a spring model, 0 on a rigid one).
    pub springs: bool,
    /// Builds it in its reset pose (nominal dynamics, heading 0) at timestep `dt`.
    build: fn(f64) -> Box<dyn Physics>,
}

/// Every backend.
pub static BACKENDS: &[Backend] = &[
    Backend {
        kind: SimKind::Rapier,
        name: "rapier",
        about: "gait's rapier model",
        // 500 Hz, where the physical tests hold as at 2 kHz.
        default_dt: 0.002,
        max_dt: None,
        springs: false,
        build: |dt| {
            Box::new(CassieSim::new(&Description::cassie(), &Dynamics::default(), dt as f32, 0.0))
        },
    },
    Backend {
        kind: SimKind::Mujoco,
        name: "mujoco",
        about: "MuJoCo on the lab's cassie_fast.xml",
        // The lab's 2 kHz: `cassie_fast.xml`'s own `timestep`.
        default_dt: 0.0005,
        // It walks at 4 and 5 ms; from 6 ms on every episode blows up within one or two
        // policy steps (the third audit's G2, `gait eval --sim mujoco --sim-dt 0.004..0.008`).
        max_dt: Some(0.005),
        springs: true,
        build: |dt| Box::new(MujocoCassie::new(dt)),
    },
];

/// The row of `kind` (every [`SimKind`] has one: a test checks it).
pub fn backend(kind: SimKind) -> &'static Backend {
    BACKENDS
        .iter()
        .find(|b| b.kind == kind)
        .unwrap_or_else(|| panic!("{kind:?} has no row in BACKENDS"))
}

/// The simulators of `models`, in order, each in its reset pose (nominal dynamics, heading 0)
/// at its timestep from `dt_of`.
pub fn build(models: &Models, dt_of: impl Fn(SimKind) -> f64) -> Vec<Box<dyn Physics>> {
    models.kinds().map(|model| (backend(model).build)(dt_of(model))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each backend has one row, whose default timestep it accepts, and a mix builds its
    /// models in its order.
    #[test]
    fn the_table_has_one_row_per_backend_and_a_mix_builds_in_its_order() {
        use clap::ValueEnum;
        for &kind in SimKind::value_variants() {
            assert_eq!(BACKENDS.iter().filter(|b| b.kind == kind).count(), 1);
            let row = backend(kind);
            assert!(row.max_dt.is_none_or(|max| row.default_dt <= max), "{}", kind.name());
            let spelled = kind.to_possible_value().expect("no variant is skipped");
            assert_eq!(spelled.get_name(), row.name, "the row's name is how --sim spells it");
            assert_eq!(serde_json::to_value(kind).unwrap(), row.name);
            assert_eq!(kind.default_dt(), row.default_dt);
        }
        assert_eq!(BACKENDS.len(), SimKind::value_variants().len());
        let mix: Models = "mujoco+rapier".parse().expect("a mix");
        let built = build(&mix, |k| backend(k).default_dt);
        // rapier keeps its timestep in f32.
        let got: Vec<(SimKind, f32)> =
            built.iter().map(|p| (p.kind(), p.timestep() as f32)).collect();
        assert_eq!(got, [(SimKind::Mujoco, 0.0005), (SimKind::Rapier, 0.002)]);
    }
}
