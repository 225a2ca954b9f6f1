//! Which of the walking preset's settings give way to the user's own: the preset is data
//! (`preset.toml`), and a few of its values cannot run with settings a user may type, so they
//! turn off, with a note each, instead of the run being refused. A setting the user typed (or
//! named in `--config`) is never touched, so typed together the two are still refused.

use super::config::CassieConfig;
use crate::envs::UserChoices;

/// The preset's perturbation gate (`--robust-start-speed`).
const PERTURBATION_GATE: &str = "robust_start_speed";
/// The preset's omnidirectional gate (`--omni-start-speed`).
const OMNI_GATE: &str = "omni_start_speed";
/// The models' shares once the perturbations begin (`--robust-shares`).
const ROBUST_SHARES: &str = "robust_shares";
/// The speed-dependent cycle (`--cadence`).
const CADENCE: &str = "cadence";

/// A fresh run's give-way rules:
/// * The two stage gates (perturbations, every direction) wait for an evaluation, and a run
///   has one gate, so with `--num-eval-eps 0` both give way, and with the user's own speed for
///   one of them the other does (each stage then begins at its own start, as before the
///   gates) instead of refusing a run the user asked for plainly; at the same speed the two
///   stages share it.
/// * `--robust-shares` gives each model of a mix its late share, so with other models
///   (`--sim mujoco`) a value the user did not type gives way.
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

/// The mixing settings' part of [`fresh`], also applied to a `--previous` run continued on
/// other models (`--sim mujoco` after `rapier+mujoco`): `robust_shares` the user did not type,
/// one per model of the run's mix, cannot split the new models' episodes, so they go (the new
/// models keep their own shares throughout), with a note. `--sim` replaces the whole mix, its
/// timesteps and shares with it, so nothing else has to give way.
pub(super) fn mixing(cassie: &mut CassieConfig, user: &UserChoices) -> Option<String> {
    let fits = cassie.sim.is_mix() && cassie.sim.check_shares(&cassie.robust_shares).is_ok();
    if cassie.robust_shares.is_empty() || fits || (user.typed)(ROBUST_SHARES) {
        return None;
    }
    let shares = std::mem::take(&mut cassie.robust_shares);
    let shares: Vec<String> = shares.iter().map(f64::to_string).collect();
    Some(format!("note: --robust-shares {} is off (--sim {})", shares.join(","), cassie.sim))
}
