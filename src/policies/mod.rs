//! Networks on tch: Gaussian actors and value critics, each owning its `VarStore` with the
//! observation normalizer inside (so checkpoints and broadcasts always carry it).

mod actor;
mod base;
mod critic;
mod layers;
pub mod normalizer;
mod params;

pub use actor::{Actor, StdSpec};
pub use base::Hidden;
pub use critic::Critic;
pub use layers::{Arch, Nonlinearity};
pub use normalizer::{Normalizer, RunningStats};
pub use params::{
    load_checkpoint, load_named, read_tensors, save_checkpoint, strip_prefix, CheckpointError,
    ParamSnapshot,
};

use serde::{Deserialize, Serialize};

/// Everything needed to rebuild an actor/critic pair with the same parameter shapes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetSpec {
    pub obs_dim: usize,
    pub act_dim: usize,
    pub arch: Arch,
    /// Hidden layer widths.
    pub layers: Vec<usize>,
    /// Hidden activation of the actor (the critic always uses ReLU, as the reference does).
    pub nonlinearity: Nonlinearity,
    pub std: StdSpec,
}

impl std::fmt::Display for NetSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let layers: Vec<String> = self.layers.iter().map(usize::to_string).collect();
        write!(
            f,
            "obs {}, act {}, {:?} {} {:?}, std {:?}",
            self.obs_dim,
            self.act_dim,
            self.arch,
            layers.join("x"),
            self.nonlinearity,
            self.std
        )
    }
}
