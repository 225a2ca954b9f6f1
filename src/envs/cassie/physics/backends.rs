//! The one table of physics backends: how each [`SimKind`] is built. A third simulator is its
//! folder beside `rapier/` and `mujoco/`, a [`SimKind`] variant with its name and default
//! timestep, and one arm here.

use super::mujoco::MujocoCassie;
use super::rapier::CassieSim;
use super::{Physics, SimKind};
use crate::envs::cassie::robot::description::Description;
use crate::envs::cassie::robot::Dynamics;

/// The simulators of `kind`, each in its reset pose (nominal dynamics, heading 0) at
/// its timestep from `dt_of`: one, or rapier and MuJoCo for [`SimKind::Mixed`].
pub fn build(kind: SimKind, dt_of: impl Fn(SimKind) -> f64) -> Vec<Box<dyn Physics>> {
    let rapier = || -> Box<dyn Physics> {
        Box::new(CassieSim::new(
            &Description::cassie(),
            &Dynamics::default(),
            dt_of(SimKind::Rapier) as f32,
            0.0,
        ))
    };
    let mujoco = || -> Box<dyn Physics> { Box::new(MujocoCassie::new(dt_of(SimKind::Mujoco))) };
    match kind {
        SimKind::Rapier => vec![rapier()],
        SimKind::Mujoco => vec![mujoco()],
        SimKind::Mixed => vec![rapier(), mujoco()],
    }
}
