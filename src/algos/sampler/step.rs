//! What a sampler does around each step: choose the action (with exploration in training),
//! refuse a non-finite value where it appears, and value a finished trajectory's states.

use anyhow::{bail, Context, Result};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use tch::Tensor;

use crate::algos::Buffer;
use crate::policies::{Actor, Critic, FastActor, Hidden};

/// The action for `obs` into `action`: the mean from the plain-Rust copy of the actor (train
/// jobs, where there is one) or from the torch actor (carrying its recurrent state `hidden`),
/// then, in training (`noise`), Gaussian exploration of the actor's std, which is written to
/// `std` (the copy's was set once per episode). A non-finite mean or std is the policy's
/// failure.
pub(super) fn act(
    fast: Option<&mut FastActor>,
    actor: &Actor,
    hidden: &mut Hidden,
    obs: &[f32],
    action: &mut [f32],
    std: &mut [f32],
    noise: Option<&mut ChaCha8Rng>,
) -> Result<()> {
    let act_dim = action.len();
    match fast {
        Some(fast) => fast.mean(obs, action),
        None => {
            let (mean, sd) = actor.step(&Tensor::from_slice(obs), hidden);
            mean.copy_data(action, act_dim);
            if noise.is_some() {
                sd.expand([act_dim as i64], false).copy_data(std, act_dim);
            }
        }
    }
    check_policy_output(action, "action mean")?;
    if let Some(noise) = noise {
        check_policy_output(std, "action std")?;
        for (a, s) in action.iter_mut().zip(std.iter()) {
            let z: f32 = StandardNormal.sample(noise);
            *a += s * z;
        }
    }
    Ok(())
}

/// The critic's values of the states of `buffer`'s one open trajectory and of `last`, the
/// state it ended in (`len + 1` values), from one batched forward; a non-finite value is the
/// policy's failure at that step.
pub(super) fn trajectory_values(
    critic: &Critic,
    buffer: &Buffer,
    last: &[f32],
) -> Result<Vec<f32>> {
    let (states, dim) = buffer.critic_view();
    let mut obs = Vec::with_capacity(states.len() + last.len());
    obs.extend_from_slice(states);
    obs.extend_from_slice(last);
    let values = critic.trajectory_values(&obs, dim);
    if let Some(t) = values.iter().position(|v| !v.is_finite()) {
        check_policy_output(&values[t..=t], "value").with_context(|| format!("at step {t}"))?;
    }
    Ok(values)
}

pub(super) fn check_finite(values: &[f32], what: &str) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(i) => bail!("env returned a non-finite {what} (entry {i} = {})", values[i]),
        None => Ok(()),
    }
}

/// A non-finite network output from a finite observation is the policy's failure (its
/// weights diverged or were loaded broken), never the env's.
pub(super) fn check_policy_output(values: &[f32], what: &str) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(i) => bail!(
            "the policy produced a non-finite {what} (entry {i} = {}) from a finite observation",
            values[i]
        ),
        None => Ok(()),
    }
}
