//! The exported ONNX policies `gait eval --onnx` runs: one whose actions become PD targets as
//! its sidecar says, and one whose actions the env applies as they are.

use anyhow::Result;

use super::{ActionNoise, EvalPolicy};

/// An exported ONNX policy whose actions become PD targets as its sidecar says.
pub(super) struct OnnxTargets {
    pub(super) policy: crate::export::runtime::OnnxPolicy,
    pub(super) pd: crate::envs::controller::PdTargets,
    pub(super) raw: Vec<f32>,
}

impl EvalPolicy for OnnxTargets {
    fn reset(&mut self) {
        self.policy.reset();
    }

    fn act(&mut self, obs: &[f32], noise: &mut ActionNoise, action: &mut [f32]) -> Result<()> {
        // A non-finite action makes non-finite targets, which the episode loop refuses.
        self.policy.act(obs, &mut self.raw)?;
        noise.perturb(&mut self.raw);
        action.copy_from_slice(&self.pd.targets(obs, &self.raw));
        Ok(())
    }
}

/// An exported ONNX policy of an env that applies its actions as they are.
pub(super) struct OnnxActions {
    pub(super) policy: crate::export::runtime::OnnxPolicy,
}

impl EvalPolicy for OnnxActions {
    fn reset(&mut self) {
        self.policy.reset();
    }

    fn act(&mut self, obs: &[f32], noise: &mut ActionNoise, action: &mut [f32]) -> Result<()> {
        self.policy.act(obs, action)?;
        noise.perturb(action);
        Ok(())
    }
}
