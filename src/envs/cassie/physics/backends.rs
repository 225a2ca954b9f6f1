//! The one table of physics backends: how each [`SimKind`] is built. A third simulator is its
//! folder beside `rapier/` and `mujoco/`, a [`SimKind`] variant with its name, default
//! timestep and models ([`SimKind::models`]), and one arm here.

use super::mujoco::MujocoCassie;
use super::rapier::CassieSim;
use super::{Physics, SimKind};
use crate::envs::cassie::robot::description::Description;
use crate::envs::cassie::robot::Dynamics;

/// The simulators of `kind` ([`SimKind::models`]), each in its reset pose (nominal dynamics,
/// heading 0) at its timestep from `dt_of`.
pub fn build(kind: SimKind, dt_of: impl Fn(SimKind) -> f64) -> Vec<Box<dyn Physics>> {
    kind.models().iter().map(|&model| build_one(model, dt_of(model))).collect()
}

/// One simulator: the table's row for `model`, at timestep `dt`.
fn build_one(model: SimKind, dt: f64) -> Box<dyn Physics> {
    match model {
        SimKind::Rapier => {
            Box::new(CassieSim::new(&Description::cassie(), &Dynamics::default(), dt as f32, 0.0))
        }
        SimKind::Mujoco => Box::new(MujocoCassie::new(dt)),
        SimKind::Mixed => unreachable!("a mix is a list of models (SimKind::models)"),
    }
}
