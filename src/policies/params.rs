//! Moving parameters around: plain-data snapshots (for broadcasting to sampler threads, since
//! `tch::Tensor` is not `Sync`) and strict safetensors checkpoints.
//!
//! `VarStore::load` is not used for checkpoints: it silently broadcasts a tensor of the wrong
//! shape and changes dtypes, so a checkpoint from another network could load "successfully".
//! [`load_checkpoint`] checks names, shapes and dtypes first and changes nothing on mismatch.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anyhow::{Context, Result};
use tch::{nn::VarStore, Kind, Tensor};
use thiserror::Error;

use crate::fsutil::write_atomic_with;

/// A copy of every variable of a `VarStore` (parameters and buffers), sorted by name.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ParamSnapshot {
    /// `(name, shape, values)` per variable.
    pub tensors: Vec<(String, Vec<i64>, Vec<f64>)>,
}

impl ParamSnapshot {
    /// Copies every variable of `vs`.
    pub fn of(vs: &VarStore) -> Self {
        let vars: BTreeMap<String, Tensor> = vs.variables().into_iter().collect();
        let tensors = vars
            .into_iter()
            .map(|(name, t)| {
                let data = super::normalizer::to_f64_vec(&t.detach());
                (name, t.size(), data)
            })
            .collect();
        Self { tensors }
    }

    /// Copies the snapshot into `vs`, which must have exactly the same variables and shapes.
    pub fn load_into(&self, vs: &mut VarStore) -> Result<()> {
        let mut vars = vs.variables();
        anyhow::ensure!(
            vars.len() == self.tensors.len(),
            "snapshot has {} tensors, the network {}",
            self.tensors.len(),
            vars.len()
        );
        tch::no_grad(|| {
            for (name, shape, data) in &self.tensors {
                let var = vars.get_mut(name).with_context(|| format!("no variable {name}"))?;
                anyhow::ensure!(&var.size() == shape, "shape mismatch for {name}");
                let src = Tensor::from_slice(data).reshape(shape.as_slice());
                var.copy_(&src.to_kind(var.kind()).to_device(var.device()));
            }
            Ok(())
        })
    }
}

/// Why a checkpoint was refused.
#[derive(Debug, Error)]
pub enum CheckpointError {
    #[error(
        "cannot read checkpoint {path}: {reason} (file missing, truncated or not safetensors)"
    )]
    /// The file cannot be read as safetensors.
    Unreadable {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    #[error(
        "checkpoint {path} does not fit this network: {detail}; checkpoint shapes [{found}], \
         network shapes [{expected}]"
    )]
    /// Its tensors do not fit the network.
    Mismatch {
        /// The file.
        path: String,
        /// The first difference.
        detail: String,
        /// The checkpoint's shapes.
        found: String,
        /// The network's shapes.
        expected: String,
    },
    #[error(
        "checkpoint {path}: tensor '{tensor}' holds a NaN or infinity; a policy with a \
         non-finite value is never loaded (the run that wrote it diverged)"
    )]
    /// A tensor holds a NaN or an infinity.
    NonFinite {
        /// The file.
        path: String,
        /// The tensor.
        tensor: String,
    },
}

/// Refusal to write a policy with a non-finite value (see [`save_checkpoint`]).
#[derive(Debug, Error)]
#[error("refusing to write {path}: tensor '{tensor}' holds a NaN or infinity")]
pub struct NonFiniteSave {
    /// The file refused.
    pub path: String,
    /// The tensor holding the value.
    pub tensor: String,
}

/// True when every element of `t` is finite (integer tensors always are).
///
/// Training asks this after every optimizer step, of each net's whole parameter buffer, so
/// the common answer takes one reduction: a sum is finite only when every element is (a NaN
/// propagates, an infinity stays infinite or meets its opposite in a NaN). A non-finite sum
/// can also be an overflow of huge finite values, so then the elementwise test decides. The
/// elementwise test alone (four kernels: `isfinite` is `x == x` and `|x| != inf`, then `all`)
/// was 2.4 % of a Cassie training run's CPU samples (`perf record`; docs/benchmarks.md).
pub fn all_finite(t: &Tensor) -> bool {
    if !t.is_floating_point() {
        return true;
    }
    t.sum(t.kind()).double_value(&[]).is_finite() || t.isfinite().all().int64_value(&[]) != 0
}

/// The first tensor, by name, holding a NaN or an infinity.
pub fn first_non_finite<'a, I>(tensors: I) -> Option<String>
where
    I: IntoIterator<Item = (&'a String, &'a Tensor)>,
{
    let mut sorted: Vec<(&String, &Tensor)> = tensors.into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    sorted.into_iter().find(|(_, t)| !all_finite(t)).map(|(n, _)| n.clone())
}

fn describe(map: &BTreeMap<String, (Vec<i64>, Kind)>) -> String {
    map.iter().map(|(n, (s, _))| format!("{n} {s:?}")).collect::<Vec<_>>().join(", ")
}

/// Atomically writes every variable of `vs` to a `.safetensors` file (loadable by PyTorch's
/// `safetensors.torch.load_file`). A store holding a NaN or infinity is refused
/// ([`NonFiniteSave`]) and nothing is written: a diverged policy must never become a
/// checkpoint that `gait eval` would score.
pub fn save_checkpoint(vs: &VarStore, path: &Path) -> Result<()> {
    if let Some(tensor) = first_non_finite(&vs.variables()) {
        return Err(NonFiniteSave { path: path.display().to_string(), tensor }.into());
    }
    write_atomic_with(path, |tmp| {
        vs.save(tmp).with_context(|| format!("writing checkpoint {}", tmp.display()))
    })
}

/// Loads a checkpoint written by [`save_checkpoint`] into `vs`, all or nothing.
pub fn load_checkpoint(vs: &mut VarStore, path: &Path) -> Result<(), CheckpointError> {
    let read = read_tensors(path)?;
    load_named(vs, &read, &path.display().to_string())
}

/// The entries of `map` whose names start with `prefix`, with the prefix removed (how the
/// combined resume file is split back into its parts).
pub fn strip_prefix(map: &HashMap<String, Tensor>, prefix: &str) -> HashMap<String, Tensor> {
    map.iter()
        .filter_map(|(k, t)| k.strip_prefix(prefix).map(|r| (r.to_string(), t.shallow_clone())))
        .collect()
}

/// Reads every tensor of a safetensors file.
pub fn read_tensors(path: &Path) -> Result<HashMap<String, Tensor>, CheckpointError> {
    Tensor::read_safetensors(path).map(|v| v.into_iter().collect()).map_err(|e| {
        CheckpointError::Unreadable { path: path.display().to_string(), reason: e.to_string() }
    })
}

/// Copies `tensors` into `vs` after checking that names, shapes and dtypes match exactly and
/// that every value is finite; otherwise nothing is changed. `source` names the origin in
/// errors.
pub fn load_named(
    vs: &mut VarStore,
    tensors: &HashMap<String, Tensor>,
    source: &str,
) -> Result<(), CheckpointError> {
    let found: BTreeMap<String, (Vec<i64>, Kind)> =
        tensors.iter().map(|(n, t)| (n.clone(), (t.size(), t.kind()))).collect();
    let mut vars = vs.variables();
    let expected: BTreeMap<String, (Vec<i64>, Kind)> =
        vars.iter().map(|(n, t)| (n.clone(), (t.size(), t.kind()))).collect();
    if found != expected {
        let detail = expected
            .iter()
            .find_map(|(n, (s, k))| match found.get(n) {
                None => Some(format!("missing tensor '{n}'")),
                Some((fs, fk)) if fs != s || fk != k => {
                    Some(format!("'{n}' is {fk:?}{fs:?}, expected {k:?}{s:?}"))
                }
                _ => None,
            })
            .or_else(|| {
                found
                    .keys()
                    .find(|n| !expected.contains_key(*n))
                    .map(|n| format!("unexpected tensor '{n}'"))
            })
            .unwrap_or_default();
        return Err(CheckpointError::Mismatch {
            path: source.to_string(),
            detail,
            found: describe(&found),
            expected: describe(&expected),
        });
    }
    if let Some(tensor) = first_non_finite(tensors) {
        return Err(CheckpointError::NonFinite { path: source.to_string(), tensor });
    }
    tch::no_grad(|| {
        for (name, src) in tensors {
            if let Some(var) = vars.get_mut(name) {
                var.copy_(&src.to_device(var.device()));
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-sum fast path answers as the elementwise test: NaN, either infinity, both
    /// infinities (their sum is NaN), and finite values whose sum overflows f32 (finite).
    #[test]
    fn all_finite_agrees_with_the_elementwise_test() {
        let big = f32::MAX / 2.0;
        let cases: [(&[f32], bool); 7] = [
            (&[], true),
            (&[1.0, -2.0, 3.5], true),
            (&[big, big, big], true),
            (&[1.0, f32::NAN], false),
            (&[f32::INFINITY, 1.0], false),
            (&[f32::NEG_INFINITY], false),
            (&[f32::INFINITY, f32::NEG_INFINITY], false),
        ];
        for (values, finite) in cases {
            let t = Tensor::from_slice(values);
            assert_eq!(all_finite(&t), finite, "{values:?}");
            assert_eq!(all_finite(&t.to_kind(Kind::Double)), finite, "{values:?} as f64");
        }
        assert!(all_finite(&Tensor::from_slice(&[i64::MAX, 1])), "integers are finite");
    }
}
