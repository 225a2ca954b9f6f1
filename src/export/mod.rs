//! `gait export`: a trained policy as a file other runtimes load, with its controller.
//!
//! * `onnx`: the primary format (TorchScript is deprecated upstream since PyTorch 2.11): the
//!   graph written with hand-written protobuf messages, normalizer and clip inside.
//! * `torchscript`: traced with libtorch (`CModule::create_by_tracing`), for C++ and Python
//!   users of `torch.jit.load`.
//! * The sidecar `FILE.onnx.json` / `FILE.pt.json` ([`Sidecar`]): the inputs and outputs, the LSTM state convention,
//!   the env and its controller (observation and action names, rate, PD targets and gains),
//!   the run's config and its hash, gait's version and commit.
//!
//! Nothing is written unless everything was built: the model and the sidecar are made in
//! memory, then each is written atomically; an existing file is replaced only with `force`.

pub(crate) mod onnx;
pub mod runtime;
pub(crate) mod torchscript;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::ValueEnum;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tch::Device;

use crate::algos::checkpoint;
use crate::config::{TrainConfig, UsageError};
use crate::envs::{self, ControllerSpec, EnvConfig};
use crate::fsutil::Install;
use crate::logging::{load_run, Experiment, NumberedWeights, RunSummary};
use crate::outputs::Output;
use crate::policies::{load_checkpoint, Actor, Arch, NetSpec};

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// ONNX (IR 8, opset 17): onnxruntime, TensorRT, any ONNX runtime.
    Onnx,
    /// TorchScript (`torch.jit.load`, libtorch's `torch::jit::load`).
    Torchscript,
}

impl Format {
    /// The model file's extension, as the output check takes it.
    fn extensions(self) -> &'static [&'static str] {
        match self {
            Self::Onnx => &["onnx"],
            Self::Torchscript => &["pt"],
        }
    }
}

/// What `gait export` does (flags: `crate::cli::ExportFlags`).
#[derive(Debug, Clone, PartialEq)]
pub struct ExportOptions {
    /// The run directory.
    pub path: PathBuf,
    /// Which of the run's weights.
    pub weights: ActorCheckpoint,
    /// ONNX or TorchScript.
    pub format: Format,
    /// The model file to write.
    pub out: PathBuf,
    /// Replace an existing `out` (and its sidecar).
    pub force: bool,
}

/// The sidecar `FILE.onnx.json` (`FILE.pt.json`): everything around the network a controller needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sidecar {
    /// The model's format.
    pub format: Format,
    /// The model file's name (beside this file).
    pub model: String,
    /// gait's version.
    pub gait_version: String,
    /// The git commit gait was built from, if known.
    #[serde(default)]
    pub git_commit: Option<String>,
    /// SHA-256 of the run's config as JSON (the full settings the policy trained with).
    pub config_sha256: String,
    /// The checkpoint exported.
    pub checkpoint: String,
    /// The network's inputs and outputs, in order, with shapes.
    pub inputs: Vec<TensorInfo>,
    /// The network's outputs, in order.
    pub outputs: Vec<TensorInfo>,
    /// How to run the model step by step (the recurrent state's reset, the TorchScript LSTM's
    /// output layout).
    pub usage: String,
    /// The network's shape.
    pub net: NetSpec,
    /// The env name and its settings (what `gait eval --onnx` rebuilds).
    pub env: String,
    /// The env's settings the policy trained with.
    pub env_config: EnvConfig,
    /// The run's training episode length (policy steps): `gait eval --onnx`'s default.
    pub episode_length: usize,
    /// The controller around the network (layouts, rate, PD targets and gains).
    pub controller: ControllerSpec,
}

/// Reads the sidecar of exported model `model`.
pub fn read_sidecar(model: &Path) -> Result<Sidecar> {
    if !model.is_file() {
        return Err(UsageError(format!("--onnx {}: no such file", model.display())).into());
    }
    let path = sidecar_path(model);
    let text = crate::fsutil::read_text(&path).map_err(|e| {
        UsageError(format!(
            "--onnx {}: cannot read its sidecar {} ({e}); `gait export` writes both",
            model.display(),
            path.display()
        ))
    })?;
    let sidecar: Sidecar = serde_json::from_str(&text).map_err(|e| {
        UsageError(format!(
            "--onnx {}: its sidecar {} is not gait's: {e}",
            model.display(),
            path.display()
        ))
    })?;
    sidecar.check().map_err(|e| {
        UsageError(format!("--onnx {}: its sidecar {} {e}", model.display(), path.display()))
    })?;
    Ok(sidecar)
}

impl Sidecar {
    /// The checks a run's files get, on what the sidecar brings back: the env settings and the
    /// episode length against their ranges, the network's shape against the machine, and the
    /// controller against the network ([`ControllerSpec::check`]).
    fn check(&self) -> Result<(), String> {
        let mut config = crate::config::TrainConfig::default();
        config.run.env = self.env.clone();
        config.env = self.env_config.clone();
        config.sampler.traj_len = self.episode_length;
        config.validate_settings().map_err(|e| {
            let e = e.to_string().replace("--traj-len", "episode_length");
            format!("holds a setting out of its range: {e}")
        })?;
        check_network(&self.net).map_err(|e| format!("describes a network {e}"))?;
        self.controller
            .check(self.net.obs_dim, self.net.act_dim)
            .map_err(|e| format!("does not fit its network: {e}"))
    }
}

/// Whether a network read from a file (`experiment.json`, a sidecar) can be built here: at
/// least one layer, and its parameters within the memory the machine has (what `gait train`
/// checks before allocating).
pub(crate) fn check_network(net: &NetSpec) -> Result<(), String> {
    if net.layers.is_empty() || net.layers.contains(&0) {
        return Err("without hidden layers".into());
    }
    let memory = crate::algos::resources::available_memory();
    crate::algos::resources::check_resources(net, 1, 1, 1, memory)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// One input or output of the exported graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TensorInfo {
    /// The graph's name for it.
    pub name: String,
    /// Sizes; `"batch"` is any size (feed-forward only).
    pub shape: Vec<serde_json::Value>,
    /// What it holds, in words.
    pub meaning: String,
}

fn info(name: &str, shape: &[serde_json::Value], meaning: &str) -> TensorInfo {
    TensorInfo { name: name.to_string(), shape: shape.to_vec(), meaning: meaning.to_string() }
}

/// The sidecar path of model `out`: `FILE.onnx.json` beside `FILE.onnx` (`FILE.pt.json`
/// beside `FILE.pt`, so both formats of one policy can sit side by side).
pub fn sidecar_path(out: &Path) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".json");
    out.with_file_name(name)
}

/// Which saved actor weights of a run `gait eval` and `gait export` load (not
/// [`crate::config::Weights`], which says what `--previous` restores, Adam state included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ActorCheckpoint {
    /// The best-eval ones (`actor.safetensors`; the latest while a run has none yet).
    #[default]
    Best,
    /// The last iteration's (`actor_latest.safetensors`, `--latest`).
    Latest,
    /// Iteration N's, kept by `--save-freq` (`actor_N.safetensors`, `--iteration N`): the
    /// weights row N of `progress.csv` and `selection.csv` scored (in runs written before
    /// [`NumberedWeights::Scored`], those after N's update). To compare a run's checkpoints on a
    /// check rather than on its training evaluations.
    Iteration(u64),
}

impl ActorCheckpoint {
    /// `--latest` and `--iteration N` (clap keeps them apart) as one choice.
    pub fn from_flags(latest: bool, iteration: Option<u64>) -> Self {
        match (iteration, latest) {
            (Some(n), _) => Self::Iteration(n),
            (None, true) => Self::Latest,
            (None, false) => Self::Best,
        }
    }

    /// Its file's suffix ([`checkpoint::weights_file`]).
    fn suffix(self) -> String {
        match self {
            Self::Best => String::new(),
            Self::Latest => "_latest".to_string(),
            Self::Iteration(n) => format!("_{n}"),
        }
    }
}

/// The iterations whose actor weights `--save-freq` kept in run `path`, ascending.
pub fn saved_iterations(path: &Path) -> Vec<u64> {
    checkpoint::saved_iterations(path, "actor")
}

/// The actor of run `path` (its `which` weights) and the checkpoint it came from.
pub fn load_actor(
    path: &Path,
    which: ActorCheckpoint,
) -> Result<(crate::logging::Experiment, Actor, PathBuf)> {
    let exp = load_run(path, "--path")?;
    check_network(&exp.net).map_err(|e| {
        UsageError(format!("--path {}: experiment.json describes a network {e}", path.display()))
    })?;
    let file = |w: ActorCheckpoint| checkpoint::weights_file(path, "actor", &w.suffix());
    // A name that is there but is not a regular file (a link to a device) is refused as what
    // it is, not as missing.
    let wanted = file(which);
    if std::fs::symlink_metadata(&wanted).is_ok() && !wanted.is_file() {
        return Err(UsageError(format!(
            "--path {}: {} is not a regular file",
            path.display(),
            wanted.display()
        ))
        .into());
    }
    let checkpoint = match which {
        ActorCheckpoint::Best if !file(which).is_file() => file(ActorCheckpoint::Latest),
        ActorCheckpoint::Iteration(n) if !file(which).is_file() => {
            let saved = checkpoint::iteration_list(
                &saved_iterations(path),
                "none (train with --save-freq N to keep every Nth)",
            );
            return Err(UsageError(format!(
                "--iteration {n}: {} kept no weights of iteration {n}; kept: {saved}",
                path.display()
            ))
            .into());
        }
        _ => file(which),
    };
    if !checkpoint.is_file() {
        anyhow::bail!(
            "--path {}: no actor checkpoint ({}){}",
            path.display(),
            checkpoint.display(),
            RunSummary::failure_note(path)
        );
    }
    let mut actor = Actor::new(&exp.net, Device::Cpu);
    load_checkpoint(actor.var_store_mut(), &checkpoint)?;
    Ok((exp, actor, checkpoint))
}

/// The note a report prints beside `which` weights of run `path` (`exp`) when they are numbered
/// weights of a run written before they were the scored ones ([`NumberedWeights::AfterUpdate`]):
/// which row scored them. Returned, not printed: `gait check` loads the weights once per cell
/// and prints it once.
pub fn numbered_weights_note(
    path: &Path,
    exp: &Experiment,
    which: ActorCheckpoint,
) -> Option<String> {
    match (which, exp.numbered_weights) {
        (ActorCheckpoint::Iteration(n), NumberedWeights::AfterUpdate) => Some(format!(
            "note: {} was written before gait kept the weights each row scored: actor_{n} holds \
             the weights after iteration {n}'s update, which row {} of progress.csv scored",
            path.display(),
            n + 1
        )),
        _ => None,
    }
}

fn config_sha256(config: &TrainConfig) -> Result<String> {
    let json = serde_json::to_string(config).context("serializing the run's config")?;
    Ok(Sha256::digest(json.as_bytes()).iter().map(|b| format!("{b:02x}")).collect())
}

/// The inputs, outputs and usage note of `spec`'s graph in `format`.
fn interface(spec: &NetSpec, format: Format) -> (Vec<TensorInfo>, Vec<TensorInfo>, String) {
    use serde_json::json;
    let (obs, act) = (spec.obs_dim, spec.act_dim);
    if spec.arch == Arch::Ff {
        let inputs = vec![info("obs", &[json!("batch"), json!(obs)], "raw observation")];
        let outputs =
            vec![info("actions", &[json!("batch"), json!(act)], "deterministic action (mean)")];
        return (inputs, outputs, "one call per policy step; no state".to_string());
    }
    let (layers, hidden) = (spec.layers.len(), spec.layers[0]);
    let state = [json!(layers), json!(1), json!(hidden)];
    let inputs = vec![
        info("obs", &[json!(1), json!(obs)], "raw observation"),
        info("h_in", &state, "LSTM hidden state per layer"),
        info("c_in", &state, "LSTM cell state per layer"),
    ];
    let zeros = "Start each episode with h_in = c_in = 0 and feed each step's h_out, c_out \
                 back as the next step's h_in, c_in (gait's rollouts do exactly this).";
    match format {
        Format::Onnx => (
            inputs,
            vec![
                info("actions", &[json!(1), json!(act)], "deterministic action (mean)"),
                info("h_out", &state, "next hidden state"),
                info("c_out", &state, "next cell state"),
            ],
            zeros.to_string(),
        ),
        Format::Torchscript => {
            let width = act + 2 * layers * hidden;
            (
                inputs,
                vec![info(
                    "output",
                    &[json!(1), json!(width)],
                    "[actions, h_out flattened, c_out flattened] concatenated (TorchScript \
                     saved from libtorch returns one tensor)",
                )],
                format!(
                    "{zeros} Split the one output: actions = y[:, :{act}], h_out = \
                     y[:, {act}:{}].reshape({layers}, 1, {hidden}), c_out = y[:, {}:]\
                     .reshape({layers}, 1, {hidden}).",
                    act + layers * hidden,
                    act + layers * hidden
                ),
            )
        }
    }
}

/// Exports a run of one of gait's envs and returns the sidecar written.
pub fn run_export(args: &ExportOptions, out: &mut impl std::io::Write) -> Result<Sidecar> {
    export_with(args, registered_env, out)
}

/// The registered env a run trained on; an env gait does not know (one a program trained
/// through the library) is a usage error that says how to export it.
fn registered_env(exp: &Experiment) -> Result<Box<dyn crate::envs::Env>> {
    let name = &exp.config.run.env;
    if crate::envs::spec(name).is_err() {
        return Err(UsageError(format!(
            "env '{name}' is not one of gait's (a program's own env, trained through the \
             library): export it from that program with gait::export::export_with, giving the \
             env"
        ))
        .into());
    }
    envs::make(name, &exp.config.env)
}

/// Exports the run `args.path` whose env `make_env` builds (it describes the controller), and
/// returns the sidecar written: `gait export` for any env, a program's own included.
pub fn export_with(
    args: &ExportOptions,
    make_env: impl FnOnce(&Experiment) -> Result<Box<dyn crate::envs::Env>>,
    out: &mut impl std::io::Write,
) -> Result<Sidecar> {
    let exts = args.format.extensions();
    let side = check_outputs(args)?;
    let (exp, mut actor, checkpoint) = load_actor(&args.path, args.weights)?;
    let env = make_env(&exp)?;
    let controller = env.controller().ok_or_else(|| {
        UsageError(format!(
            "--path {}: env '{}' with these settings cannot describe its controller (Cassie \
             with --full-gait changes its gait with every command), so the policy would leave \
             gait without what turns its actions into motor targets",
            args.path.display(),
            exp.config.run.env
        ))
    })?;
    let (inputs, outputs, usage) = interface(&exp.net, args.format);
    let name = args.out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let sidecar = Sidecar {
        format: args.format,
        model: name,
        gait_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit: option_env!("GAIT_GIT_COMMIT").map(str::to_string),
        config_sha256: config_sha256(&exp.config)?,
        checkpoint: checkpoint.display().to_string(),
        inputs,
        outputs,
        usage,
        net: exp.net.clone(),
        env: exp.config.run.env.clone(),
        env_config: exp.config.env.clone(),
        episode_length: exp.config.sampler.traj_len,
        controller,
    };
    let sidecar_json = serde_json::to_string_pretty(&sidecar).context("serializing the sidecar")?;
    // A stop asked before the writes begin writes nothing; once they begin, both files are
    // written before the stop is honoured (the binary's handler waits).
    if crate::algos::interrupt::requested() {
        return Err(crate::algos::interrupt::Interrupted.into());
    }
    let existed = args.out.exists();
    // Without --force the model goes only where nothing is, so of two exports racing to one
    // --out exactly one writes a pair and the other fails before touching the sidecar.
    let install = if args.force { Install::Replace } else { Install::New };
    write_model(args, &mut actor, &sidecar, &sidecar_json, install)?;
    if let Err(e) = crate::fsutil::write_atomic(&side, format!("{sidecar_json}\n").as_bytes()) {
        // A model without its controller is half an export: take back a new one.
        if !existed {
            let _ = std::fs::remove_file(&args.out);
        }
        return Err(e);
    }
    // Both files are written: a notice that cannot be printed (stdout on a full disk) does not
    // make the export a failure, which a script would take it for.
    let mut notice = format!(
        "exported {} ({}) to {} with its controller in {}\n",
        checkpoint.display(),
        exts[0],
        args.out.display(),
        side.display()
    );
    if let Some(note) = numbered_weights_note(&args.path, &exp, args.weights) {
        notice.push_str(&format!("{note}\n"));
    }
    if let Err(e) = out.write_all(notice.as_bytes()).and_then(|()| out.flush()) {
        crate::stdio::eline(format!(
            "warning: exported to {} and {}, but printing the notice failed: {e}",
            args.out.display(),
            side.display()
        ));
    }
    Ok(sidecar)
}

/// Checks `--out` and its sidecar's path as every output is checked, and refuses an existing
/// file without `--force`; the sidecar's path.
fn check_outputs(args: &ExportOptions) -> Result<PathBuf> {
    let side = sidecar_path(&args.out);
    crate::outputs::check(&[
        Output { flag: "--out", path: &args.out, extensions: args.format.extensions() },
        Output { flag: "--out (its sidecar)", path: &side, extensions: &["json"] },
    ])?;
    for path in [&args.out, &side] {
        if !args.force && std::fs::symlink_metadata(path).is_ok() {
            return Err(UsageError(format!(
                "--out {}: {} exists; give --force to replace it",
                args.out.display(),
                path.display()
            ))
            .into());
        }
    }
    Ok(side)
}

/// Writes the model file in `args.format` (ONNX with the sidecar in its metadata, or a traced
/// TorchScript module), atomically and as `install` says.
fn write_model(
    args: &ExportOptions,
    actor: &mut Actor,
    sidecar: &Sidecar,
    sidecar_json: &str,
    install: Install,
) -> Result<()> {
    match args.format {
        Format::Onnx => {
            let metadata = vec![
                ("gait_version".to_string(), sidecar.gait_version.clone()),
                ("git_commit".to_string(), sidecar.git_commit.clone().unwrap_or_default()),
                ("config_sha256".to_string(), sidecar.config_sha256.clone()),
                ("controller".to_string(), sidecar_json.to_string()),
            ];
            let bytes = onnx::encode(&onnx::model(actor, &metadata)?);
            crate::fsutil::write_atomic_as(&args.out, install, |tmp| {
                std::fs::write(tmp, &bytes).map_err(anyhow::Error::from)
            })?;
        }
        Format::Torchscript => {
            let module = torchscript::trace(actor)?;
            let bytes = crate::fsutil::written_in_memory(|path| {
                module.save(path).with_context(|| format!("writing {}", args.out.display()))
            })?;
            crate::fsutil::write_atomic_as(&args.out, install, |tmp| {
                std::fs::write(tmp, &bytes).map_err(anyhow::Error::from)
            })?;
        }
    }
    Ok(())
}
