//! Which of the walking preset's settings give way to the user's own: the preset is data
//! (`preset.toml`), and a few of its values cannot run with settings a user may type, so they
//! turn off, with a note each, instead of the run being refused. A setting the user typed (or
//! named in `--config`) is never touched, so typed together the two are still refused.

use super::config::{CassieConfig, EVEN_MUJOCO_SHARE};
use super::SimKind;
use crate::envs::UserChoices;

/// The preset's perturbation gate (`--robust-start-speed`).
const PERTURBATION_GATE: &str = "robust_start_speed";
/// The preset's omnidirectional gate (`--omni-start-speed`).
const OMNI_GATE: &str = "omni_start_speed";
/// MuJoCo's timestep when mixing (`--mujoco-dt`).
const MUJOCO_DT: &str = "mujoco_dt";
/// The share of MuJoCo episodes when mixing (`--mujoco-share`).
const MUJOCO_SHARE: &str = "mujoco_share";
/// The share of MuJoCo episodes once the perturbations begin (`--robust-mujoco-share`).
const ROBUST_MUJOCO_SHARE: &str = "robust_mujoco_share";
/// The speed-dependent cycle (`--cadence`).
const CADENCE: &str = "cadence";

/// A fresh run's give-way rules:
/// * The two stage gates (perturbations, every direction) wait for an evaluation, and a run
///   has one gate, so with `--num-eval-eps 0` both give way, and with the user's own speed for
///   one of them the other does (each stage then begins at its own start, as before the
///   gates) instead of refusing a run the user asked for plainly; at the same speed the two
///   stages share it.
/// * `--mujoco-dt`, `--mujoco-share` and `--robust-mujoco-share` set MuJoCo's timestep and
///   share of the episodes when mixing models, so with `--sim rapier` or `--sim mujoco` the
///   preset's give way (that model runs at `--sim-dt`).
/// * The cadence sets the cycle from the command and `--full-gait` draws it at random, so
///   with `--full-gait` the preset's cadence gives way (a fixed cycle, as before it).
pub(super) fn fresh(cassie: &mut CassieConfig, user: &UserChoices) -> Vec<String> {
    let mut notes = gates(cassie, user);
    notes.extend(cadence(cassie, user));
    notes.extend(mixing(cassie, user));
    notes
}

/// The stage gates' part of [`fresh`]: a note for each preset gate it turned off. The
/// perturbations' gate gives way first (as it did before the preset had an omnidirectional
/// gate); the omnidirectional one then gives way only to no evaluations or to the user's own
/// perturbation gate at another speed.
fn gates(cassie: &mut CassieConfig, user: &UserChoices) -> Vec<String> {
    let no_evals = !user.evaluates;
    let mut notes = Vec::new();
    let conflict = cassie.gate_conflict().is_some();
    if cassie.robust_start_speed > 0.0 && !(user.typed)(PERTURBATION_GATE) && (no_evals || conflict)
    {
        let speed = std::mem::take(&mut cassie.robust_start_speed);
        let begins = format!("the perturbations begin at --robust-start {}", cassie.robust_start);
        notes.push(gate_off_note("robust", speed, "omni", no_evals, &begins));
    }
    let conflict = cassie.gate_conflict().is_some();
    if cassie.omni_gate().is_some() && !(user.typed)(OMNI_GATE) && (no_evals || conflict) {
        let speed = std::mem::take(&mut cassie.omni_start_speed);
        let begins = format!("every direction begins at --omni-start {}", cassie.omni_start);
        notes.push(gate_off_note("omni", speed, "robust", no_evals, &begins));
    }
    notes
}

/// The note of a preset gate (`--{stage}-start-speed`) turned off: for want of evaluations, or
/// for the user's own gate (`--{other}-start-speed`) at another speed; `begins` says when its
/// stage starts instead.
fn gate_off_note(stage: &str, speed: f64, other: &str, no_evals: bool, begins: &str) -> String {
    let reason = if no_evals {
        "--num-eval-eps 0 runs no evaluation to wait for".to_string()
    } else {
        format!("--{other}-start-speed sets this run's one gate at another speed")
    };
    format!("note: the preset's --{stage}-start-speed {speed} is off ({reason}); {begins}")
}

/// The cadence's part of [`fresh`]: its note, if it turned the cadence off.
fn cadence(cassie: &mut CassieConfig, user: &UserChoices) -> Option<String> {
    if cassie.cadence == 0.0 || !cassie.full_gait || (user.typed)(CADENCE) {
        return None;
    }
    let cadence = std::mem::take(&mut cassie.cadence);
    Some(format!(
        "note: the preset's --cadence {cadence} is off (--full-gait draws the gait cycle); the \
         cycle is drawn with every command"
    ))
}

/// The mixing settings' part of [`fresh`], also applied to a `--previous` mixed run continued
/// on one model: on one model (`--sim rapier` or `--sim mujoco`) a `--mujoco-dt`,
/// `--mujoco-share` or `--robust-mujoco-share` the user did not type has nothing to set, so the
/// timestep goes (that model runs at `--sim-dt` or its default) and the shares return to their
/// defaults; a note for each it turned off.
pub(super) fn mixing(cassie: &mut CassieConfig, user: &UserChoices) -> Vec<String> {
    let mut notes = Vec::new();
    if cassie.sim == SimKind::Mixed {
        return notes;
    }
    let one = format!("--sim {} trains one model", cassie.sim.name());
    if !(user.typed)(MUJOCO_DT) {
        if let Some(dt) = cassie.mujoco_dt.take() {
            notes.push(format!(
                "note: --mujoco-dt {dt} is off ({one}, at --sim-dt {})",
                cassie.sim_dt()
            ));
        }
    }
    if !(user.typed)(MUJOCO_SHARE) && cassie.mujoco_share != EVEN_MUJOCO_SHARE {
        let share = std::mem::replace(&mut cassie.mujoco_share, EVEN_MUJOCO_SHARE);
        notes.push(format!("note: --mujoco-share {share} is off ({one})"));
    }
    if !(user.typed)(ROBUST_MUJOCO_SHARE) {
        if let Some(share) = cassie.robust_mujoco_share.take() {
            notes.push(format!("note: --robust-mujoco-share {share} is off ({one})"));
        }
    }
    notes
}
