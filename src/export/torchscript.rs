//! TorchScript by tracing (`CModule::create_by_tracing`, the only way libtorch's C API makes a
//! module): the actor's deterministic step is run once on example inputs and recorded.
//!
//! * The weights are frozen first: the tracer refuses to bake a tensor that requires grad into
//!   the graph, and a traced module holds its weights as constants (a frozen policy, not a
//!   trainable one).
//! * A module saved from libtorch can return only one tensor, so an LSTM's step returns
//!   `[actions, h_out, c_out]` flattened into one row (layout in the sidecar).
//! * Feed-forward graphs take any batch `[N, obs_dim]`; LSTM graphs batch 1.

use anyhow::{Context, Result};
use tch::{CModule, Kind, Tensor};

use crate::policies::{Actor, Arch};

/// Traces `actor`'s deterministic policy (freezing its weights).
pub fn trace(actor: &mut Actor) -> Result<CModule> {
    actor.var_store_mut().freeze();
    let spec = actor.spec().clone();
    let actor = &*actor;
    let obs = Tensor::zeros([1, spec.obs_dim as i64], (Kind::Float, tch::Device::Cpu));
    let module = match spec.arch {
        Arch::Ff => CModule::create_by_tracing("GaitPolicy", "forward", &[obs], &mut |inputs| {
            vec![actor.mean(&inputs[0])]
        }),
        Arch::Lstm => {
            let (layers, hidden) = (spec.layers.len() as i64, spec.layers[0] as i64);
            let state = || Tensor::zeros([layers, 1, hidden], (Kind::Float, tch::Device::Cpu));
            CModule::create_by_tracing(
                "GaitPolicy",
                "forward",
                &[obs, state(), state()],
                &mut |inputs| {
                    let (h, c) = (&inputs[1], &inputs[2]);
                    let mut carried: crate::policies::Hidden =
                        Some((0..layers).map(|l| (h.get(l), c.get(l))).collect());
                    let (mean, _) = actor.step(&inputs[0].view([-1]), &mut carried);
                    let state = carried.unwrap_or_default();
                    let hs: Vec<Tensor> = state.iter().map(|(h, _)| h.view([1, -1])).collect();
                    let cs: Vec<Tensor> = state.iter().map(|(_, c)| c.view([1, -1])).collect();
                    let mut parts = vec![mean.view([1, -1])];
                    parts.extend(hs);
                    parts.extend(cs);
                    vec![Tensor::cat(&parts, 1)]
                },
            )
        }
    };
    module.context("tracing the policy into TorchScript")
}
