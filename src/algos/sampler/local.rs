//! The local transport: sampler actors on this machine behind the [`Collect`] seam that the
//! runner draws experience through (the MPI transport, `sampler::mpi`, is the other).

use std::sync::Arc;

use anyhow::{Context, Result};

use super::{CollectRequest, Collected, PolicySnapshot, SamplerPool};
use crate::config::TrainConfig;
use crate::envs::EnvFactory;
use crate::policies::NetSpec;

/// Where experience comes from: a [`CollectRequest`] and a [`PolicySnapshot`] go out, a
/// [`Collected`] comes back. Every trajectory is seeded by (seed, iteration, job), so the
/// numbers do not depend on where it ran.
pub trait Collect {
    /// One iteration's trajectories; `on_steps(n)` reports the train steps kept so far.
    fn collect(
        &mut self,
        request: &CollectRequest,
        policy: Arc<PolicySnapshot>,
        on_steps: &mut dyn FnMut(usize),
    ) -> Result<Collected>;

    /// Sampler workers per MPI rank (rank 0 first), for `experiment.json`; `None` on one
    /// machine.
    fn ranks(&self) -> Option<Vec<usize>> {
        None
    }
}

/// Builds a runner's sampler from the config, the env factory, the network spec and the
/// worker count.
pub type MakeSampler =
    dyn Fn(&TrainConfig, &EnvFactory, &NetSpec, usize) -> Result<Box<dyn Collect>>;

/// Sampler actors on this machine, driven by a current-thread tokio runtime.
pub struct LocalSampler {
    pool: SamplerPool,
    runtime: tokio::runtime::Runtime,
}

impl LocalSampler {
    /// `workers` actors, each with its own env from `env`.
    pub fn spawn(
        env: &EnvFactory,
        config: &TrainConfig,
        spec: &NetSpec,
        workers: usize,
    ) -> Result<Self> {
        let envs = (0..workers).map(|_| env()).collect::<Result<Vec<_>>>()?;
        let pool =
            SamplerPool::spawn(envs, spec, config.sampler.discount, config.sampler.gae_lambda)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the tokio runtime")?;
        Ok(Self { pool, runtime })
    }
}

impl Collect for LocalSampler {
    fn collect(
        &mut self,
        request: &CollectRequest,
        policy: Arc<PolicySnapshot>,
        on_steps: &mut dyn FnMut(usize),
    ) -> Result<Collected> {
        self.runtime.block_on(self.pool.collect_with(request, policy, on_steps))
    }
}

/// [`LocalSampler`] as a [`MakeSampler`]: sampler actors on this machine.
pub fn local_sampler(
    config: &TrainConfig,
    env: &EnvFactory,
    spec: &NetSpec,
    workers: usize,
) -> Result<Box<dyn Collect>> {
    Ok(Box::new(LocalSampler::spawn(env, config, spec, workers)?))
}
