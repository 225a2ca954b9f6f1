//! Running an exported ONNX policy with ONNX Runtime (the `ort` crate), for `gait eval --onnx`:
//! the consumer's own runtime, fed only what the sidecar describes.
//!
//! The library is loaded at run time (`load-dynamic`): `$ORT_DYLIB_PATH`, else the
//! `libonnxruntime.so.1.32.0` of the venv `scripts/setup_onnx.sh` installs in gait's cache.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{anyhow, bail, Context, Result};
use ort::session::Session;
use ort::value::Tensor;

use super::Sidecar;
use crate::config::UsageError;
use crate::envs::controller::PdTargets;
use crate::policies::Arch;

/// The ONNX Runtime release `scripts/setup_onnx.sh` installs (the `api-31` binding needs ≥ 1.31).
const ORT_VERSION: &str = "1.32.0";

/// gait's per-user cache directory (as the set-up scripts compute it).
fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("GAIT_CACHE") {
        return Some(PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("gait"))
}

/// Where libonnxruntime is: `$ORT_DYLIB_PATH`, else the set-up script's venv.
fn dylib_path() -> Result<PathBuf, UsageError> {
    if let Some(path) = std::env::var_os("ORT_DYLIB_PATH") {
        return Ok(PathBuf::from(path));
    }
    let name = format!("libonnxruntime.so.{ORT_VERSION}");
    let lib = cache_dir().map(|c| c.join(format!("onnx-{ORT_VERSION}")).join("lib"));
    let found = lib.and_then(|lib| {
        std::fs::read_dir(lib).ok()?.flatten().find_map(|python| {
            let path = python.path().join("site-packages/onnxruntime/capi").join(&name);
            path.is_file().then_some(path)
        })
    });
    found.ok_or_else(|| {
        UsageError(format!(
            "--onnx: ONNX Runtime {ORT_VERSION} is not installed: run scripts/setup_onnx.sh \
             (or point ORT_DYLIB_PATH at a libonnxruntime.so)"
        ))
    })
}

/// The process's one ONNX Runtime environment.
fn environment() -> Result<&'static ort::environment::Environment> {
    static ENV: OnceLock<std::result::Result<ort::environment::Environment, String>> =
        OnceLock::new();
    let env = ENV.get_or_init(|| {
        let path = dylib_path().map_err(|e| e.0)?;
        ort::init_from(&path)
            .map_err(|e| format!("--onnx: loading {}: {e}", path.display()))?
            .with_name("gait")
            .build()
            .map_err(|e| format!("--onnx: starting ONNX Runtime: {e}"))
    });
    env.as_ref().map_err(|e| anyhow!(UsageError(e.clone())))
}

/// An exported policy in ONNX Runtime, stepping with its recurrent state (if any).
pub struct OnnxPolicy {
    session: Session,
    obs_dim: usize,
    act_dim: usize,
    /// `(layers, hidden)` of an LSTM, and the state carried between steps.
    lstm: Option<(usize, usize)>,
    h: Vec<f32>,
    c: Vec<f32>,
}

impl OnnxPolicy {
    /// Loads `model` with one intra-op thread (a policy step is small), and a line saying
    /// so when its sidecar's PD differs from the one exported with it.
    ///
    /// The model carries its own copy of the sidecar, which must equal the sidecar in all but
    /// the PD section: a sidecar of another export, or an edited network, env, layout or config
    /// hash, does not run it. The PD section is what a deployer tunes (gains, limits, delay,
    /// neutral stance, reference gait), and `gait eval --onnx` drives the robot with the
    /// sidecar's, so an edit is measured, not refused.
    pub fn load(model: &Path, sidecar: &Sidecar) -> Result<(Self, Option<String>)> {
        let env = environment()?;
        let session = Session::builder(env)
            .map_err(|e| anyhow!("{e}"))?
            .with_intra_threads(1)
            .map_err(|e| anyhow!("{e}"))?
            .commit_from_file(model)
            .map_err(|e| anyhow!("--onnx {}: ONNX Runtime refused it: {e}", model.display()))?;
        let embedded = session
            .metadata()
            .ok()
            .and_then(|m| m.custom("controller"))
            .and_then(|json| serde_json::from_str::<Sidecar>(&json).ok());
        let Some(mut own) = embedded else {
            return Err(UsageError(format!(
                "--onnx {}: not a model `gait export` wrote (it holds no copy of its sidecar)",
                model.display()
            ))
            .into());
        };
        let exported_pd = std::mem::replace(&mut own.controller.pd, sidecar.controller.pd.clone());
        if own != *sidecar {
            return Err(UsageError(format!(
                "--onnx {}: its sidecar is not the one exported with it (the model holds its own \
                 copy, and they differ outside the PD section: another export's, or edited); \
                 export again",
                model.display()
            ))
            .into());
        }
        let note = (exported_pd != sidecar.controller.pd).then(|| {
            format!(
                "the sidecar's PD section differs from the one exported with the model: driving \
                 with the sidecar's ({})",
                pd_changes(exported_pd.as_ref(), sidecar.controller.pd.as_ref())
            )
        });
        let net = &sidecar.net;
        let lstm = (net.arch == Arch::Lstm).then(|| (net.layers.len(), net.layers[0]));
        let state = lstm.map_or(0, |(l, h)| l * h);
        let policy = Self {
            session,
            obs_dim: net.obs_dim,
            act_dim: net.act_dim,
            lstm,
            h: vec![0.0; state],
            c: vec![0.0; state],
        };
        Ok((policy, note))
    }

    /// Zeroes the recurrent state (a new episode).
    pub fn reset(&mut self) {
        self.h.iter_mut().for_each(|x| *x = 0.0);
        self.c.iter_mut().for_each(|x| *x = 0.0);
    }

    /// The deterministic action for `obs`, carrying the state.
    pub fn act(&mut self, obs: &[f32], action: &mut [f32]) -> Result<()> {
        if obs.len() != self.obs_dim || action.len() != self.act_dim {
            bail!(
                "the policy takes {} observations and gives {} actions",
                self.obs_dim,
                self.act_dim
            );
        }
        let obs = Tensor::from_array(([1usize, self.obs_dim], obs.to_vec()))
            .context("building the obs tensor")?;
        match self.lstm {
            None => {
                let out =
                    self.session.run(ort::inputs!["obs" => obs]).context("running the policy")?;
                let (_, values) = out["actions"].try_extract_tensor::<f32>()?;
                action.copy_from_slice(values);
            }
            Some((layers, hidden)) => {
                let shape = [layers, 1, hidden];
                let h = Tensor::from_array((shape, self.h.clone()))?;
                let c = Tensor::from_array((shape, self.c.clone()))?;
                let out = self
                    .session
                    .run(ort::inputs!["obs" => obs, "h_in" => h, "c_in" => c])
                    .context("running the policy")?;
                action.copy_from_slice(out["actions"].try_extract_tensor::<f32>()?.1);
                self.h.copy_from_slice(out["h_out"].try_extract_tensor::<f32>()?.1);
                self.c.copy_from_slice(out["c_out"].try_extract_tensor::<f32>()?.1);
            }
        }
        Ok(())
    }
}

/// The fields of the PD section that differ between the exported `a` and the sidecar's `b`,
/// by name (`kp, torque_delay`).
fn pd_changes(a: Option<&PdTargets>, b: Option<&PdTargets>) -> String {
    let fields = |pd: Option<&PdTargets>| match serde_json::to_value(pd) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    let (a, b) = (fields(a), fields(b));
    let changed: Vec<&str> = a
        .keys()
        .chain(b.keys().filter(|k| !a.contains_key(*k)))
        .filter(|k| a.get(*k) != b.get(*k))
        .map(String::as_str)
        .collect();
    if changed.is_empty() {
        "all of it".to_string()
    } else {
        changed.join(", ")
    }
}
