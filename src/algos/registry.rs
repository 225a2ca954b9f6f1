//! The one table of algorithms: which type trains a run of each [`AlgoKind`]. Adding an
//! algorithm is its folder, a variant of [`AlgoKind`] with its settings section, and one arm here.

use anyhow::Result;
use tch::Device;

use super::a2c::A2c;
use super::algorithm::Algorithm;
use super::symmetry::Symmetry;
use super::PpoOptim;
use crate::config::{AlgoKind, TrainConfig};
use crate::policies::NetSpec;

/// The algorithm a run trains with, its networks built for `spec` on `device` (`symmetry`:
/// the env's mirror lists, for a mirror loss).
pub fn build(
    config: &TrainConfig,
    spec: &NetSpec,
    device: Device,
    symmetry: Option<&Symmetry>,
) -> Result<Box<dyn Algorithm>> {
    Ok(match config.run.algo {
        AlgoKind::Ppo => Box::new(PpoOptim::new(spec, config.ppo.clone(), device, symmetry)?),
        AlgoKind::A2c => Box::new(A2c::new(spec, config.algo.a2c.clone(), device)),
    })
}
