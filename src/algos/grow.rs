//! Continuing a run whose observation grew: the new observation is the previous one with
//! inputs appended after it (a height scan added to a blind walker, `--height-scan`). The
//! first layer of each network gets zero weights for the new inputs (Adam's first moment
//! zero, its second its row's mean), so the continuation starts acting, and valuing, exactly
//! as the previous run ended; the new inputs' normalizer statistics come from a prenormalization of the new env
//! with that policy, the old inputs keep theirs. Why: a robot with perception learns to use
//! it from a walker it already has instead of learning to walk again.
//!
//! Only a feed-forward net whose critic reads the policy's observation grows, and only when
//! the env names its inputs and the previous names are exactly the new names' beginning: a
//! reordered or renamed input is a different observation, which no padding fixes.

use std::collections::HashMap;

use anyhow::{ensure, Result};
use tch::Tensor;

use crate::config::TrainConfig;
use crate::policies::{Arch, NetSpec, RunningStats};

/// The first layers of the feed-forward nets, as the resume and weight files name them (the
/// actor's and the critic's, and the optimizer's moments of each).
const INPUT_LAYER: &str = "layers.0.weight";

/// The previous run's observation size when `spec` is `prev_net` with inputs appended
/// after the previous observation (as `prev` and `config` name them); `None` otherwise.
pub fn grown_from(
    prev: &TrainConfig,
    prev_net: &NetSpec,
    config: &TrainConfig,
    spec: &NetSpec,
) -> Option<usize> {
    let from = prev_net.obs_dim;
    let same_but_inputs = NetSpec { obs_dim: spec.obs_dim, ..prev_net.clone() } == *spec;
    let plain = spec.arch == Arch::Ff && spec.critic_obs_dim.is_none();
    if !(same_but_inputs && plain && from < spec.obs_dim) {
        return None;
    }
    let old = prev.env.observation_names(&prev.run.env)?;
    let new = config.env.observation_names(&config.run.env)?;
    (old.len() == from && new.len() == spec.obs_dim && new.starts_with(&old)).then_some(from)
}

/// Widens a resume or weight file's tensors `map` from `from` inputs to `to`: every first
/// layer's weight and Adam first moment gets zero columns, its Adam second moment the row's
/// mean over the old columns (so a new weight's steps start as large as its row's old ones'),
/// every observation normalizer mean 0 and std 1 for the new inputs. Refuses a file whose
/// first layers are not `from` wide.
pub fn grow_tensors(map: &mut HashMap<String, Tensor>, from: usize, to: usize) -> Result<()> {
    let extra = (to - from) as i64;
    for (name, t) in map.iter_mut() {
        let pad = if name.ends_with(INPUT_LAYER) {
            let size = t.size();
            ensure!(
                size.len() == 2 && size[1] == from as i64,
                "'{name}' has shape {size:?}, not [_, {from}]: not the previous observation's input layer"
            );
            Some(if name.contains("_adam/v/") {
                // Adam's second moment: the row's mean over the old inputs. Zero, with the
                // run's step count long past its bias correction, made every new weight step
                // 3-6 times the learning rate in its gradient's sign for hundreds of steps, and
                // the walker's return halved within four iterations (D-064).
                t.mean_dim(1, true, t.kind()).expand([size[0], extra], false).contiguous()
            } else {
                Tensor::zeros([size[0], extra], (t.kind(), t.device()))
            })
        } else if name.ends_with("obs_norm.mean") || name.ends_with("obs_norm.std") {
            ensure!(t.size() == [from as i64], "'{name}' does not hold {from} inputs");
            let fill = if name.ends_with("std") { 1.0 } else { 0.0 };
            Some(Tensor::full([extra], fill, (t.kind(), t.device())))
        } else {
            None
        };
        if let Some(pad) = pad {
            let dim = t.dim() as i64 - 1;
            *t = Tensor::cat(&[t.shallow_clone(), pad], dim);
        }
    }
    Ok(())
}

/// `current` (the grown normalizer's statistics) with the inputs from `from` on taken from
/// `fresh` (a prenormalization of the new env): the old inputs keep what the policy learned
/// with.
pub fn splice_stats(current: &RunningStats, fresh: &RunningStats, from: usize) -> RunningStats {
    let mut out = current.clone();
    out.mean[from..].copy_from_slice(&fresh.mean[from..]);
    out.var[from..].copy_from_slice(&fresh.var[from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growing_pads_the_input_layers_and_normalizers_and_nothing_else() {
        let mut map: HashMap<String, Tensor> = HashMap::new();
        let w = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).reshape([2, 3]);
        map.insert("actor/layers.0.weight".into(), w.shallow_clone());
        map.insert("actor_adam/m/layers.0.weight".into(), w.shallow_clone());
        map.insert("actor_adam/v/layers.0.weight".into(), w.shallow_clone());
        map.insert("actor/layers.1.weight".into(), Tensor::ones([3, 3], tch::kind::FLOAT_CPU));
        map.insert("critic/obs_norm.mean".into(), Tensor::from_slice(&[0.5f32, 0.5, 0.5]));
        map.insert("critic/obs_norm.std".into(), Tensor::from_slice(&[2.0f32, 2.0, 2.0]));
        grow_tensors(&mut map, 3, 5).unwrap();
        let values = |k: &str| Vec::<f32>::try_from(map[k].flatten(0, -1)).unwrap();
        assert_eq!(map["actor/layers.0.weight"].size(), [2, 5]);
        assert_eq!(values("actor/layers.0.weight"), [1., 2., 3., 0., 0., 4., 5., 6., 0., 0.]);
        assert_eq!(values("actor_adam/m/layers.0.weight"), values("actor/layers.0.weight"));
        // The second moment's new columns: each row's mean (2 and 5).
        assert_eq!(
            values("actor_adam/v/layers.0.weight"),
            [1., 2., 3., 2., 2., 4., 5., 6., 5., 5.]
        );
        assert_eq!(map["actor/layers.1.weight"].size(), [3, 3], "hidden layers stay");
        assert_eq!(values("critic/obs_norm.mean"), [0.5, 0.5, 0.5, 0.0, 0.0]);
        assert_eq!(values("critic/obs_norm.std"), [2.0, 2.0, 2.0, 1.0, 1.0]);
        // A file of another observation is refused.
        assert!(grow_tensors(&mut map, 3, 7).is_err());
    }

    /// Cassie's `--height-scan` appends to the observation, so a blind walker's run grows
    /// into a scan run; `--full-clock` inserts in the middle, an LSTM or a privileged critic
    /// is not grown, and a net that also changed elsewhere is refused.
    #[test]
    fn only_an_appended_observation_grows() {
        use crate::envs::cassie::CassieConfig;
        use crate::policies::Arch;
        use serde_json::Value;
        let with = |leaves: &[(&str, Value)]| {
            let base = TrainConfig::for_env("cassie");
            let leaves: Vec<(String, Value)> =
                leaves.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
            let config = base.with_leaves(&leaves).unwrap();
            let obs =
                crate::envs::cassie::layout::observation_len(config.env.get::<CassieConfig>());
            let spec = config.net.spec("cassie", obs, 10).unwrap();
            (config, spec)
        };
        let yes = Value::Bool(true);
        let (blind, blind_net) = with(&[]);
        let (scan, scan_net) = with(&[("env.cassie.height_scan", yes.clone())]);
        assert_eq!(grown_from(&blind, &blind_net, &scan, &scan_net), Some(blind_net.obs_dim));
        assert!(scan_net.obs_dim > blind_net.obs_dim);
        // Not backwards, and not onto a reordered observation.
        assert_eq!(grown_from(&scan, &scan_net, &blind, &blind_net), None);
        let (clock, clock_net) =
            with(&[("env.cassie.height_scan", yes.clone()), ("env.cassie.full_clock", yes)]);
        assert_eq!(grown_from(&blind, &blind_net, &clock, &clock_net), None);
        // Only the inputs may differ, and only for a feed-forward net.
        let wider = NetSpec { layers: vec![64, 64], ..scan_net.clone() };
        assert_eq!(grown_from(&blind, &blind_net, &scan, &wider), None);
        let lstm = |n: &NetSpec| NetSpec { arch: Arch::Lstm, ..n.clone() };
        assert_eq!(grown_from(&blind, &lstm(&blind_net), &scan, &lstm(&scan_net)), None);
        let privileged = |n: &NetSpec| NetSpec { critic_obs_dim: Some(200), ..n.clone() };
        assert_eq!(
            grown_from(&blind, &privileged(&blind_net), &scan, &privileged(&scan_net)),
            None
        );
    }

    #[test]
    fn splicing_keeps_the_old_inputs_statistics() {
        let current =
            RunningStats { mean: vec![1.0, 2.0, 0.0], var: vec![4.0, 4.0, 1.0], count: 9.0 };
        let fresh =
            RunningStats { mean: vec![7.0, 7.0, 0.9], var: vec![3.0, 3.0, 0.01], count: 5.0 };
        let spliced = splice_stats(&current, &fresh, 2);
        assert_eq!(spliced.mean, [1.0, 2.0, 0.9]);
        assert_eq!(spliced.var, [4.0, 4.0, 0.01]);
        assert_eq!(spliced.count, 9.0);
    }
}
