//! Checkpoints and resume, in one module: the weight pairs a run dir holds
//! (`actor{suffix}`/`critic{suffix}.safetensors`), the resume file, and restoring a run
//! to continue it (`--previous`).
//!
//! Everything a run needs to continue exactly is in one file: `resume.safetensors`.
//!
//! It holds the actor and critic (parameters and normalizer, `actor/...`, `critic/...`), both
//! Adam states (`actor_adam/...`, `critic_adam/...`) and the loop counters (`meta/...`). One
//! file, replaced by one atomic rename after every iteration, so a kill -9 at any moment leaves
//! either the previous iteration's state or the new one, never a mix of iterations (separate
//! per-network files could not promise that). No RNG state is needed: every random stream is
//! derived from (seed, iteration). `actor_latest.safetensors` / `critic_latest.safetensors` hold
//! the same weights without optimizer state, for `gait eval` and for PyTorch.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tch::{Kind, Tensor};

use super::grow;
use super::reward_scale::ReturnStats;
use super::Algorithm;
use crate::config::{TrainConfig, UsageError, Weights};
use crate::envs::levels::{Levels, MAX_TRACKS};
use crate::fsutil::write_atomic_with;
use crate::logging;
use crate::policies::{
    first_non_finite, load_named, read_tensors, save_checkpoint, strip_prefix, NetSpec,
    NonFiniteSave, RunningStats,
};

pub const RESUME_FILE: &str = "resume.safetensors";

/// Loop counters carried across a resume.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrainState {
    /// The next iteration to run.
    pub iteration: u64,
    pub total_timesteps: u64,
    pub best_test: Option<f64>,
    /// Whether `best_test` (and the best-eval weights) came from an evaluation after the env's
    /// training distribution settled ([`crate::envs::EnvConfig::settled_from`]): such a best is
    /// replaced only by a higher one from the same phase, an earlier one by any settled one.
    pub best_test_settled: bool,
    /// `--best-by tracking` or `cells`: the best-eval weights' selection scores, once a
    /// settled evaluation chose them.
    pub best_selection: Option<SelectionScore>,
    pub best_train: Option<f64>,
    /// Whether the evaluation gate (`--min-eplen-ratio-eval`) has opened.
    pub gate_open: bool,
    /// Whether the next iteration evaluates because of a new best train return.
    pub eval_next: bool,
    /// The step at which the env's gated curriculum stage began ([`crate::envs::StageGate`]).
    pub stage_from: Option<u64>,
    /// `--scale-rewards`: the discounted returns' statistics so far (`None`: not scaling, or
    /// no iteration yet).
    pub returns: Option<ReturnStats>,
    /// The adaptive curriculum's levels ([`crate::envs::levels`]; all 0 without one).
    pub levels: Levels,
}

/// The scores of a settled evaluation's selection episodes (`--best-by tracking` or `cells`).
/// One value, so a count cannot be kept without the error it came with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SelectionScore {
    /// `Test/Tracking Error` (lower is better).
    pub error: f64,
    /// `Test/Cells Within` (`--best-by cells` compares it first); `None` in a resume file
    /// written before the count.
    pub cells: Option<u64>,
}

impl TrainState {
    /// `summary.json` for a run that stopped in this state: the counters and the best-eval
    /// scores from the state, the rest from how it ended (one place, so a failed setup and an
    /// ended run report the same fields).
    pub fn summary(
        &self,
        status: logging::summary::RunStatus,
        elapsed_s: f64,
        final_eval: Option<logging::summary::FinalEval>,
        error: Option<String>,
    ) -> logging::summary::RunSummary {
        logging::summary::RunSummary {
            status,
            iterations: self.iteration,
            total_timesteps: self.total_timesteps,
            elapsed_s,
            best_test_return: self.best_test,
            best_tracking_error: self.best_selection.map(|s| s.error),
            best_cells_within: self.best_selection.and_then(|s| s.cells),
            final_eval,
            error,
        }
    }
}

fn prefixed(prefix: &str, tensors: Vec<(String, Tensor)>) -> Vec<(String, Tensor)> {
    tensors.into_iter().map(|(k, t)| (format!("{prefix}/{k}"), t)).collect()
}

/// Writes the resume file for `state` into `dir`.
pub fn save(dir: &Path, optim: &dyn Algorithm, state: &TrainState) -> Result<()> {
    // "None yet" is a 0 flag beside a 0.0 value, so the file never holds a NaN.
    let f = |x: Option<f64>| Tensor::from_slice(&[x.unwrap_or(0.0)]);
    let has = |x: Option<f64>| Tensor::from_slice(&[x.is_some() as i64]);
    let i = |x: u64| Tensor::from_slice(&[x as i64]);
    let (error, cells) =
        (state.best_selection.map(|s| s.error), state.best_selection.and_then(|s| s.cells));
    let mut named = prefixed("actor", optim.actor().var_store().variables().into_iter().collect());
    named.extend(prefixed("critic", optim.critic().var_store().variables().into_iter().collect()));
    named.extend(optim.optimizer_state());
    named.extend([
        ("meta/iteration".to_string(), i(state.iteration)),
        ("meta/total_timesteps".to_string(), i(state.total_timesteps)),
        ("meta/best_test".to_string(), f(state.best_test)),
        ("meta/has_best_test".to_string(), has(state.best_test)),
        ("meta/best_test_settled".to_string(), i(state.best_test_settled as u64)),
        ("meta/best_tracking".to_string(), f(error)),
        ("meta/has_best_tracking".to_string(), has(error)),
        ("meta/best_cells".to_string(), i(cells.unwrap_or(0))),
        ("meta/has_best_cells".to_string(), has(cells.map(|n| n as f64))),
        ("meta/best_train".to_string(), f(state.best_train)),
        ("meta/has_best_train".to_string(), has(state.best_train)),
        ("meta/gate_open".to_string(), i(state.gate_open as u64)),
        ("meta/eval_next".to_string(), i(state.eval_next as u64)),
        ("meta/stage_from".to_string(), i(state.stage_from.unwrap_or(0))),
        ("meta/has_stage_from".to_string(), has(state.stage_from.map(|s| s as f64))),
    ]);
    if let Some(ReturnStats(r)) = &state.returns {
        let values = [r.count, r.mean[0], r.var[0]];
        named.push(("meta/return_stats".to_string(), Tensor::from_slice(&values)));
    }
    // Only where a level moved, so a run without adaptive levels writes the file it always did.
    if state.levels != Levels::default() {
        named.push(("meta/levels".to_string(), Tensor::from_slice(&state.levels.0)));
    }
    let named: Vec<(String, Tensor)> =
        named.into_iter().map(|(k, t)| (k, t.detach().to_device(tch::Device::Cpu))).collect();
    if let Some(tensor) = first_non_finite(named.iter().map(|(k, t)| (k, t))) {
        let path = dir.join(RESUME_FILE).display().to_string();
        return Err(NonFiniteSave { path, tensor }.into());
    }
    write_atomic_with(&dir.join(RESUME_FILE), |tmp| {
        Tensor::write_safetensors(&named, tmp).context("writing the resume state")
    })
}

/// Keeps a copy of the resume file just written as the state after iteration `itr`
/// ([`weights_file`] `resume_{itr}`, `--resume-freq`), which `--previous-iteration` branches
/// from. A copy of the one file, so it holds exactly what an exact continuation would read.
pub fn keep_resume(dir: &Path, itr: u64) -> Result<()> {
    copy_atomic(&dir.join(RESUME_FILE), &kept_resume_file(dir, itr))
}

/// Copies `from` to `to` by one atomic rename, so `to` is the whole file or absent.
fn copy_atomic(from: &Path, to: &Path) -> Result<()> {
    write_atomic_with(to, |tmp| {
        std::fs::copy(from, tmp).map(drop).with_context(|| format!("copying {}", from.display()))
    })
}

/// Where a continuation's best-eval weights so far are ([`best_so_far`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BestSoFar {
    /// The restored state has no best yet.
    None,
    /// The previous run's best-eval pair (`actor`/`critic.safetensors`) is the restored
    /// state's best: the continuation starts with a copy, so its run dir holds the weights its
    /// `summary.json` scores even when no later evaluation beats them.
    In(PathBuf),
    /// A branch (`--previous-iteration`) whose best so far the previous run (this dir) later
    /// replaced, or a run dir without the pair: those weights are not kept.
    NotKept(PathBuf),
    /// The previous run (this dir) trained another task: these env settings (`key: before ->
    /// now`) differ, so its best was scored on that task and is not carried.
    Retasked(PathBuf, Vec<String>),
}

/// Where the best-eval weights of `restored` (read from `prev` as `weights` says) are. The
/// previous run's pair is its final state's best, so it is the restored one's unless a branch
/// restored an earlier state whose best was replaced later: then the two states' best scores
/// differ.
pub fn best_so_far(prev: &Path, weights: Weights, restored: &TrainState) -> Result<BestSoFar> {
    if restored.best_test.is_none() {
        return Ok(BestSoFar::None);
    }
    if !["actor", "critic"].iter().all(|net| weights_file(prev, net, "").is_file()) {
        return Ok(BestSoFar::NotKept(prev.to_path_buf()));
    }
    let same = match weights {
        Weights::Latest | Weights::Best => true,
        Weights::Iteration(_) => {
            let last = read_state(&prev.join(RESUME_FILE))?;
            (last.best_test, last.best_test_settled, last.best_selection)
                == (restored.best_test, restored.best_test_settled, restored.best_selection)
        }
    };
    let prev = prev.to_path_buf();
    Ok(if same { BestSoFar::In(prev) } else { BestSoFar::NotKept(prev) })
}

/// Copies run `from`'s best-eval pair into run `to` (each file atomically).
pub fn copy_best_pair(from: &Path, to: &Path) -> Result<()> {
    for net in ["actor", "critic"] {
        copy_atomic(&weights_file(from, net, ""), &weights_file(to, net, ""))?;
    }
    Ok(())
}

/// The resume state run `dir` kept after iteration `itr` ([`keep_resume`]).
fn kept_resume_file(dir: &Path, itr: u64) -> PathBuf {
    weights_file(dir, "resume", &format!("_{itr}"))
}

/// The iterations of which run `dir` kept a [`weights_file`] `{net}_{itr}` (`actor`:
/// `--save-freq`, the weights the iteration collected with; `resume`: `--resume-freq`, the
/// state after it), ascending.
pub fn saved_iterations(dir: &Path, net: &str) -> Vec<u64> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<u64> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|name| saved_iteration(&name, net))
        .collect();
    found.sort_unstable();
    found
}

/// `iterations` as a refusal lists them ("0, 2, 4"), or `none` when there are none.
pub fn iteration_list(iterations: &[u64], none: &str) -> String {
    if iterations.is_empty() {
        none.to_string()
    } else {
        iterations.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
    }
}

/// What to restore from a resume file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restore {
    /// Networks, optimizer state and counters (exact continuation).
    Everything,
    /// Counters only (the networks come from elsewhere, e.g. the best-eval checkpoints).
    CountersOnly,
}

/// Reads `path` into `optim` (as `what` says) and returns the counters. All or nothing for the
/// networks: names, shapes and dtypes are checked before anything is copied.
/// With `grow`, the networks' inputs are first grown from `grow.0` to `grow.1`
/// ([`grow::grow_tensors`]).
pub fn load(
    path: &Path,
    optim: &mut dyn Algorithm,
    what: Restore,
    grow: Option<(usize, usize)>,
) -> Result<TrainState> {
    let mut map = read_tensors(path)?;
    let state = state_of(&map, path)?;
    if let (Some((from, to)), Restore::Everything) = (grow, what) {
        grow::grow_tensors(&mut map, from, to)
            .with_context(|| format!("growing the inputs of {}", path.display()))?;
    }
    if what == Restore::Everything {
        let source = path.display().to_string();
        load_named(optim.actor_mut().var_store_mut(), &strip_prefix(&map, "actor/"), &source)?;
        load_named(optim.critic_mut().var_store_mut(), &strip_prefix(&map, "critic/"), &source)?;
        optim
            .load_optimizer_state(&map)
            .with_context(|| format!("restoring the optimizer from {}", path.display()))?;
    }
    Ok(state)
}

/// The counters of the resume file `path`, without its networks.
fn read_state(path: &Path) -> Result<TrainState> {
    state_of(&read_tensors(path)?, path)
}

/// The counters (`meta/...`) of a resume file's tensors `map`, read from `path`.
fn state_of(map: &std::collections::HashMap<String, Tensor>, path: &Path) -> Result<TrainState> {
    let meta = |key: &str| -> Result<Tensor> {
        map.get(&format!("meta/{key}"))
            .map(|t| t.shallow_clone())
            .with_context(|| format!("{} lacks 'meta/{key}'", path.display()))
    };
    // Counters are checked, not cast: a damaged file must not turn -5 into 2^64 - 5.
    let int = |key: &str| -> Result<u64> {
        let t = meta(key)?;
        anyhow::ensure!(
            t.numel() == 1 && !t.is_floating_point(),
            "{}: 'meta/{key}' is not one integer",
            path.display()
        );
        let v = t.to_kind(Kind::Int64).int64_value(&[0]);
        u64::try_from(v).map_err(|_| {
            anyhow::anyhow!("{}: 'meta/{key}' is {v}, not a count >= 0", path.display())
        })
    };
    let flag = |key: &str| -> Result<bool> {
        match int(key)? {
            0 => Ok(false),
            1 => Ok(true),
            v => anyhow::bail!("{}: 'meta/{key}' is {v}, not 0 or 1", path.display()),
        }
    };
    let float = |key: &str| -> Result<Option<f64>> {
        let t = meta(key)?;
        anyhow::ensure!(t.numel() == 1, "{}: 'meta/{key}' is not one number", path.display());
        let v = t.to_kind(Kind::Double).double_value(&[0]);
        anyhow::ensure!(!v.is_infinite(), "{}: 'meta/{key}' is infinite", path.display());
        // Files written before the `has_` flags used NaN for "none yet".
        let present = match map.contains_key(&format!("meta/has_{key}")) {
            true => flag(&format!("has_{key}"))?,
            false => !v.is_nan(),
        };
        anyhow::ensure!(!(present && v.is_nan()), "{}: 'meta/{key}' is NaN", path.display());
        Ok(present.then_some(v))
    };
    // Files written before `--best-by tracking` have no selection scores; files written
    // before the count, an error alone.
    let best_error = match map.contains_key("meta/best_tracking") {
        true => float("best_tracking")?,
        false => None,
    };
    let best_cells = match map.contains_key("meta/has_best_cells") {
        true => flag("has_best_cells")?.then(|| int("best_cells")).transpose()?,
        false => None,
    };
    anyhow::ensure!(
        best_error.is_some() || best_cells.is_none(),
        "{}: 'meta/best_cells' without 'meta/best_tracking'",
        path.display()
    );
    Ok(TrainState {
        iteration: int("iteration")?,
        total_timesteps: int("total_timesteps")?,
        best_test: float("best_test")?,
        // Files written before the phase existed kept the best of the whole run so far.
        best_test_settled: match map.contains_key("meta/best_test_settled") {
            true => flag("best_test_settled")?,
            false => false,
        },
        best_selection: best_error.map(|error| SelectionScore { error, cells: best_cells }),
        best_train: float("best_train")?,
        gate_open: flag("gate_open")?,
        eval_next: flag("eval_next")?,
        // Files written before the curriculum gate have no stage: none had begun.
        stage_from: match map.contains_key("meta/has_stage_from") {
            true => flag("has_stage_from")?.then(|| int("stage_from")).transpose()?,
            false => None,
        },
        returns: return_stats(map, path)?,
        levels: levels(map, path)?,
    })
}

/// `meta/levels` (the adaptive curriculum's levels, each in [0, 1]), or all 0 in a file
/// without.
fn levels(map: &std::collections::HashMap<String, Tensor>, path: &Path) -> Result<Levels> {
    let Some(t) = map.get("meta/levels") else { return Ok(Levels::default()) };
    let v: Vec<f32> = Vec::<f32>::try_from(t.to_kind(Kind::Float).flatten(0, -1))?;
    let levels: [f32; MAX_TRACKS] = v.try_into().map_err(|v: Vec<f32>| {
        anyhow::anyhow!(
            "{}: 'meta/levels' holds {} values, not {MAX_TRACKS}",
            path.display(),
            v.len()
        )
    })?;
    anyhow::ensure!(
        levels.iter().all(|l| (0.0..=1.0).contains(l)),
        "{}: 'meta/levels' holds a level outside [0, 1]: {levels:?}",
        path.display()
    );
    Ok(Levels(levels))
}

/// `meta/return_stats` (`--scale-rewards`): count, mean and variance, or `None` in a file
/// without.
fn return_stats(
    map: &std::collections::HashMap<String, Tensor>,
    path: &Path,
) -> Result<Option<ReturnStats>> {
    let Some(t) = map.get("meta/return_stats") else { return Ok(None) };
    let v: Vec<f64> = Vec::<f64>::try_from(t.to_kind(Kind::Double).flatten(0, -1))?;
    match v[..] {
        [count, mean, var] if v.iter().all(|x| x.is_finite()) && count >= 0.0 && var >= 0.0 => {
            Ok(Some(ReturnStats(RunningStats { mean: vec![mean], var: vec![var], count })))
        }
        _ => anyhow::bail!(
            "{}: 'meta/return_stats' is not a count, mean and variance",
            path.display()
        ),
    }
}

/// `{net}{suffix}.safetensors` in run `dir`: `net` is `actor` or `critic`, `suffix` `""` for
/// the best-eval weights, `"_latest"`, or `"_{itr}"` for `--save-freq`'s. The one place that
/// names weight files, for the runner that writes them and `gait eval`/`gait export` that read
/// them.
pub fn weights_file(dir: &Path, net: &str, suffix: &str) -> PathBuf {
    dir.join(format!("{net}{suffix}.safetensors"))
}

/// The iteration a numbered [`weights_file`] of `net` belongs to, from its file
/// name (`actor_120.safetensors` → 120); `None` for any other file. The inverse of
/// [`weights_file`] with suffix `"_{itr}"`, beside it so the two cannot drift apart.
pub fn saved_iteration(file_name: &str, net: &str) -> Option<u64> {
    let itr = file_name.strip_prefix(net)?.strip_prefix('_')?.strip_suffix(".safetensors")?;
    // `parse` takes a leading '+'; a name the runner wrote has digits only.
    itr.bytes().all(|b| b.is_ascii_digit()).then(|| itr.parse().ok()).flatten()
}

/// Writes the actor's and the critic's [`weights_file`] for `suffix` (atomically each).
pub fn save_pair(optim: &dyn Algorithm, dir: &Path, suffix: &str) -> Result<()> {
    save_checkpoint(optim.actor().var_store(), &weights_file(dir, "actor", suffix))?;
    save_checkpoint(optim.critic().var_store(), &weights_file(dir, "critic", suffix))
}

/// What [`restore`] restored.
pub struct Restored {
    /// The counters.
    pub state: TrainState,
    /// The previous run's logdir.
    pub logdir: PathBuf,
    /// The previous run's observation size when this run's observation grew from it
    /// ([`grow`]): the new inputs' normalizer statistics are still to be gathered, and the
    /// previous best-eval record does not carry over (it scored another observation's net).
    pub grown_from: Option<usize>,
    /// The env settings this run changes from the previous run's ([`task_changes`]); when
    /// any, the previous best-eval record does not carry over either (it scored another task).
    pub task_changes: Vec<String>,
}

/// Restores networks, optimizer and counters from the run in `prev` (`weights` says which).
/// Changes nothing on disk except removing temp files a killed process left there, and fails
/// before anything is created if the run does not fit.
pub fn restore(
    config: &TrainConfig,
    prev: &Path,
    weights: Weights,
    spec: &NetSpec,
    optim: &mut dyn Algorithm,
) -> Result<Restored> {
    let exp = logging::load_previous(prev)?;
    let grown_from = check_continuable(&exp, config, spec, prev)?;
    let grow = grown_from.map(|from| (from, spec.obs_dim));
    let path = resume_file(prev, weights)?;
    let what = match weights {
        Weights::Latest | Weights::Iteration(_) => Restore::Everything,
        Weights::Best => Restore::CountersOnly,
    };
    // Only once the run is accepted: a refused --previous changes nothing on disk.
    for stale in crate::fsutil::sweep_stale_temps(prev)? {
        crate::stdio::eline(format!("removed {} (left by a killed process)", stale.display()));
    }
    let mut state = load(&path, optim, what, grow)
        .with_context(|| format!("--previous {}: cannot restore the run", prev.display()))?;
    if let Weights::Iteration(itr) = weights {
        anyhow::ensure!(
            state.iteration == itr + 1,
            "--previous-iteration {itr}: {} holds the state after iteration {}, not {itr}",
            path.display(),
            state.iteration.saturating_sub(1)
        );
    }
    if weights == Weights::Best {
        load_best_weights(prev, optim, grow)?;
    }
    let task_changes = task_changes(&exp.config, config);
    if grown_from.is_some() || !task_changes.is_empty() {
        (state.best_test, state.best_test_settled, state.best_selection) = (None, false, None);
    }
    Ok(Restored { state, logdir: exp.config.run.logdir, grown_from, task_changes })
}

/// The env settings (`env.*`) that differ between a previous run's config and this one's, as
/// `key: before -> now` lines. A continuation that changes them (`--terrain mix` on a flat
/// walker) trains another task, on which the previous best-eval score says nothing: carried, it
/// kept a flat walker as a terrain run's best, since no terrain evaluation scored as high on
/// the flat cells (D-068).
pub fn task_changes(before: &TrainConfig, now: &TrainConfig) -> Vec<String> {
    now.changed_from(before)
        .into_iter()
        .filter(|(key, _, _)| key.starts_with("env."))
        .map(|(key, was, value)| {
            format!("{key}: {} -> {value}", was.unwrap_or(serde_json::Value::Null))
        })
        .collect()
}

/// Refuses a previous run of another env or with another network (usage errors), except
/// a network whose observation grew ([`grow::grown_from`]): then the previous observation's
/// size.
fn check_continuable(
    exp: &logging::Experiment,
    config: &TrainConfig,
    spec: &NetSpec,
    prev: &Path,
) -> Result<Option<usize>> {
    if exp.config.run.env != config.run.env {
        return Err(UsageError(format!(
            "--previous {} is a run of env '{}', not '{}'",
            prev.display(),
            exp.config.run.env,
            config.run.env
        ))
        .into());
    }
    if &exp.net == spec {
        return Ok(None);
    }
    if let Some(from) = grow::grown_from(&exp.config, &exp.net, config, spec) {
        return Ok(Some(from));
    }
    let hint = if exp.net.obs_dim != spec.obs_dim {
        " (a continuation may only append inputs after the previous observation, as \
         --height-scan does, with a feed-forward net whose critic reads the policy's \
         observation)"
    } else {
        ""
    };
    Err(UsageError(format!(
        "--previous {}: network mismatch: the previous run has ({}), this run would build \
         ({}){hint}",
        prev.display(),
        exp.net,
        spec
    ))
    .into())
}

/// The resume state that `weights` continues from: a kept iteration's, or the last one.
fn resume_file(prev: &Path, weights: Weights) -> Result<PathBuf> {
    let path = match weights {
        Weights::Iteration(itr) => {
            let path = kept_resume_file(prev, itr);
            if !path.is_file() {
                let kept = saved_iterations(prev, "resume");
                let kept = iteration_list(&kept, "none (it ran without --resume-freq)");
                return Err(UsageError(format!(
                    "--previous-iteration {itr}: {} kept no resume state after iteration \
                     {itr}; the iterations it kept: {kept}",
                    prev.display()
                ))
                .into());
            }
            path
        }
        Weights::Latest | Weights::Best => prev.join(RESUME_FILE),
    };
    if !path.is_file() {
        anyhow::bail!(
            "--previous {}: no {RESUME_FILE}; the run stopped before completing an iteration{}",
            prev.display(),
            logging::RunSummary::failure_note(prev)
        );
    }
    Ok(path)
}

/// `--previous-best`: the best-eval actor and critic of `prev` in place of its last ones,
/// their inputs grown as `grow` says.
fn load_best_weights(
    prev: &Path,
    optim: &mut dyn Algorithm,
    grow: Option<(usize, usize)>,
) -> Result<()> {
    for name in ["actor.safetensors", "critic.safetensors"] {
        let vs = if name.starts_with("actor") {
            optim.actor_mut().var_store_mut()
        } else {
            optim.critic_mut().var_store_mut()
        };
        let file = prev.join(name);
        if !file.is_file() {
            anyhow::bail!(
                "--previous-best: {} has no best-eval checkpoint {name} (it never evaluated)",
                prev.display()
            );
        }
        let mut load = || -> Result<()> {
            let mut map = read_tensors(&file)?;
            if let Some((from, to)) = grow {
                grow::grow_tensors(&mut map, from, to)?;
            }
            Ok(load_named(vs, &map, &file.display().to_string())?)
        };
        load().with_context(|| format!("--previous-best: loading {}", file.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algos::PpoOptim;
    use crate::config::PpoConfig;
    use crate::policies::NetSpec;

    /// Only env settings make another task: the run's and the algorithm's settings (what a
    /// plain continuation changes, `--timesteps` above all) do not.
    #[test]
    fn task_changes_name_the_env_settings_that_differ_and_nothing_else() {
        use crate::envs::cassie::CassieConfig;
        use crate::envs::terrain::TerrainKind;
        let before = TrainConfig::default();
        let mut now = before.clone();
        now.run.timesteps += 1;
        now.ppo_mut().a_lr *= 0.5;
        assert!(task_changes(&before, &now).is_empty());
        now.env.get_mut::<CassieConfig>().terrain = TerrainKind::Mix;
        now.env.get_mut::<CassieConfig>().terrain_levels = true;
        assert_eq!(
            task_changes(&before, &now),
            ["env.cassie.terrain: \"flat\" -> \"mix\"", "env.cassie.terrain_levels: false -> true"]
        );
    }

    /// A saved iteration is read back from exactly the name [`weights_file`] gives it, and
    /// from nothing else.
    #[test]
    fn saved_iterations_read_back_from_the_names_weights_file_writes() {
        let name = |suffix: &str| {
            let file = weights_file(Path::new("run"), "actor", suffix);
            file.file_name().unwrap().to_str().unwrap().to_string()
        };
        assert_eq!(saved_iteration(&name("_120"), "actor"), Some(120));
        assert_eq!(saved_iteration(&name("_0"), "actor"), Some(0));
        for other in
            [name(""), name("_latest"), name("_+5"), name("_"), "critic_7.safetensors".into()]
        {
            assert_eq!(saved_iteration(&other, "actor"), None, "{other}");
        }
        assert_eq!(saved_iteration("actor_7.safetensors.tmp", "actor"), None);
    }

    /// The resume file carries every counter, the curriculum stage, the best's phase and its
    /// selection scores included, and a file written before they existed loads with no stage
    /// begun and an unsettled best without scores.
    #[test]
    fn the_resume_state_round_trips_with_and_without_a_stage() {
        let dir = tempfile::tempdir().unwrap();
        let mut optim =
            PpoOptim::new(&NetSpec::ff(2, 1, &[8]), PpoConfig::default(), tch::Device::Cpu, None)
                .unwrap();
        let score = |error, cells| Some(SelectionScore { error, cells });
        let cases = [
            (Some(2_500_000), true, score(0.25, Some(14))),
            (Some(0), false, None),
            (None, true, score(0.5, Some(0))),
            (None, true, score(0.5, None)),
        ];
        for (stage_from, settled, best_selection) in cases {
            let state = TrainState {
                iteration: 7,
                total_timesteps: 70_000,
                best_test: Some(1.5),
                best_test_settled: settled,
                best_selection,
                best_train: None,
                gate_open: true,
                eval_next: false,
                stage_from,
                returns: settled.then(|| {
                    ReturnStats(RunningStats { mean: vec![0.5], var: vec![1.25], count: 3.0 })
                }),
                levels: match settled {
                    true => Levels([0.25, 0.5, 1.0, 0.05, 0.0, 0.0, 0.0, 0.0]),
                    false => Levels::default(),
                },
            };
            save(dir.path(), &optim, &state).unwrap();
            let path = dir.path().join(RESUME_FILE);
            assert_eq!(load(&path, &mut optim, Restore::Everything, None).unwrap(), state);
        }
        // An older file: the stage's entries removed.
        let path = dir.path().join(RESUME_FILE);
        let old: Vec<(String, Tensor)> = read_tensors(&path)
            .unwrap()
            .into_iter()
            .filter(|(k, _)| {
                let added = ["stage_from", "settled", "tracking", "cells", "levels"];
                !added.iter().any(|a| k.contains(a))
            })
            .collect();
        Tensor::write_safetensors(&old, &path).unwrap();
        let state = load(&path, &mut optim, Restore::Everything, None).unwrap();
        let restored = (state.stage_from, state.best_test_settled, state.best_selection);
        assert_eq!(restored, (None, false, None));
        assert_eq!(state.levels, Levels::default());
        // A count without the error it came with is no state a run writes.
        let state = TrainState { best_selection: score(0.5, Some(3)), ..TrainState::default() };
        save(dir.path(), &optim, &state).unwrap();
        let torn: Vec<(String, Tensor)> = read_tensors(&path)
            .unwrap()
            .into_iter()
            .filter(|(k, _)| !k.contains("tracking"))
            .collect();
        Tensor::write_safetensors(&torn, &path).unwrap();
        let err = load(&path, &mut optim, Restore::Everything, None).unwrap_err();
        assert!(format!("{err:#}").contains("'meta/best_cells' without"), "{err:#}");
        // A level outside [0, 1] is no state a run writes either.
        save(dir.path(), &optim, &TrainState::default()).unwrap();
        let mut bad: Vec<(String, Tensor)> = read_tensors(&path).unwrap().into_iter().collect();
        bad.push(("meta/levels".to_string(), Tensor::from_slice(&[1.5f32; MAX_TRACKS])));
        Tensor::write_safetensors(&bad, &path).unwrap();
        let err = load(&path, &mut optim, Restore::Everything, None).unwrap_err();
        assert!(format!("{err:#}").contains("outside [0, 1]"), "{err:#}");
    }
}
