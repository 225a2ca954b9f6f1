//! The walking task's part of a run, as the trainer meets it: the selection (which evaluated
//! weights a run keeps as its best, scored on a grid of commands × physics models,
//! `selection.csv`) and the curriculum stage an evaluation opens. An env without walking
//! controls has neither: its runs keep the best `Test/Return`, and no gate opens.

use anyhow::Result;

use super::checkpoint::{SelectionScore, TrainState};
use super::tracking;
use super::Collected;
use crate::config::{BestBy, TrainConfig, UsageError};
use crate::envs::Env;
use crate::logging::metrics::TestMetrics;
use crate::logging::{SelectionRow, SelectionTable};

/// The cells a settled evaluation scores: the selection's commands
/// ([`tracking::selection_commands`]) times the env's physics models, each run
/// `selection_episodes` times (none without `--best-by tracking` or `cells`).
pub(super) struct SelectionPlan {
    /// How many cells.
    pub cells: usize,
    /// Each cell's physics model, in cell order: cell `c` runs the selection's command
    /// `c % n` on model `c / n`.
    pub models: Vec<&'static str>,
}

/// The selection `config` asks of `probe`'s env; an error where it asks one of an env without
/// eval commands.
pub(super) fn plan(probe: &dyn Env, config: &TrainConfig) -> Result<SelectionPlan> {
    let by = config.eval.best_by;
    if !by.selects() {
        return Ok(SelectionPlan { cells: 0, models: Vec::new() });
    }
    let selection = tracking::selection_commands(probe, config.eval.selection_commands)?;
    if selection.is_empty() {
        let name = clap::ValueEnum::to_possible_value(&by).map(|v| v.get_name().to_owned());
        return Err(UsageError(format!(
            "--best-by {}: env '{}' has no eval commands to track (use --best-by return)",
            name.unwrap_or_default(),
            config.run.env
        ))
        .into());
    }
    let count = probe.walking().map_or(1, |w| w.eval_models());
    let model_name = |m| probe.walking().map_or("default", |w| w.eval_model_name(m));
    let models: Vec<&'static str> =
        (0..count).flat_map(|m| std::iter::repeat_n(model_name(m), selection.len())).collect();
    Ok(SelectionPlan { cells: models.len(), models })
}

/// A run's selection: its cells, their models, and `selection.csv` (none without
/// `--best-by tracking` or `cells`).
pub(super) struct Selector {
    plan: SelectionPlan,
    table: Option<SelectionTable>,
}

impl Selector {
    /// The selection of `plan`, writing its cells to `table`.
    pub(super) fn new(plan: SelectionPlan, table: Option<SelectionTable>) -> Self {
        Self { plan, table }
    }

    /// Whether the run selects at all.
    pub(super) fn is_on(&self) -> bool {
        self.plan.cells > 0
    }

    /// Whether the evaluation of `iteration`, of weights trained on `timesteps` steps in a run
    /// whose gated stage began at `stage_from`, also runs the selection episodes: with
    /// `--best-by tracking` or `cells`, once evaluations are settled (the only ones they score),
    /// at every `--selection-every`th evaluation iteration.
    pub(super) fn selects_at(
        &self,
        config: &TrainConfig,
        iteration: u64,
        stage_from: Option<u64>,
        timesteps: u64,
    ) -> bool {
        let eval = &config.eval;
        let every = (eval.eval_freq as u64).saturating_mul(eval.selection_every);
        self.is_on()
            && (eval.selection_every == 1 || iteration.is_multiple_of(every))
            && evaluation_settled(config, stage_from, timesteps)
    }

    /// The selection episodes an evaluation that selects runs: every cell `per_cell` times.
    pub(super) fn episodes(&self, per_cell: usize) -> usize {
        self.plan.cells * per_cell
    }

    /// This iteration's selection, if it ran selection episodes (`len`: the selection's
    /// episode length; a shorter episode fell).
    pub(super) fn score(&self, collected: &Collected, len: usize) -> Option<tracking::Selection> {
        tracking::Selection::score(&collected.select_episodes, len, self.plan.cells)
    }

    /// `selection`'s cells as rows of `selection.csv`, for the weights of `iteration`, trained
    /// on `timesteps` steps.
    pub(super) fn write(
        &mut self,
        iteration: u64,
        timesteps: u64,
        selection: Option<&tracking::Selection>,
    ) -> Result<()> {
        let (Some(table), Some(selection)) = (&mut self.table, selection) else { return Ok(()) };
        let rows: Vec<SelectionRow> = selection
            .cells()
            .iter()
            .zip(&self.plan.models)
            .map(|(cell, &model)| SelectionRow {
                iteration,
                timesteps,
                model,
                x: cell.command[0],
                y: cell.command[1],
                turn: cell.command[2],
                episodes: cell.episodes,
                falls: cell.falls,
                worst_error: cell.worst_error,
                within: u8::from(cell.within()),
                forward: cell.forward,
                lateral: cell.lateral,
                yaw_rate: cell.yaw_rate,
            })
            .collect();
        table.write(&rows)
    }
}

/// Opens the env's curriculum stage in `next` when this evaluation (`test`) meets its gate
/// (the env's [`crate::envs::StageGate`]), and says so; a stage opens once.
pub(super) fn open_stage(config: &TrainConfig, test: Option<&TestMetrics>, next: &mut TrainState) {
    let stage_gate = config.env.stage_gate_for(&config.run.env);
    if let (Some(gate), Some(test), None) = (stage_gate, test, next.stage_from) {
        if gate.opens(next.total_timesteps, test.forward_speed()) {
            next.stage_from = Some(next.total_timesteps);
            crate::stdio::eline(format!(
                "curriculum: the next stage begins at {} steps (Test/Forward Speed {:.2})",
                next.total_timesteps,
                test.forward_speed().unwrap_or(f64::NAN)
            ));
        }
    }
}

/// Whether weights trained on `timesteps` steps, in a run whose gated stage began at
/// `stage_from`, count as settled for the best-eval checkpoint: `--best-after-settled` steps
/// past the step the env's training distribution stops changing.
pub(super) fn evaluation_settled(
    config: &TrainConfig,
    stage_from: Option<u64>,
    timesteps: u64,
) -> bool {
    (config.env.settled_from(&config.run.env, stage_from))
        .is_some_and(|from| timesteps >= from.saturating_add(config.eval.best_after_settled))
}

/// Whether an evaluation scoring `test_return` (and `selection`, its `Test/Tracking Error`
/// and `Test/Cells Within` under `--best-by tracking` or `cells`), of weights trained
/// `settled` (after the env's training distribution stopped changing,
/// [`crate::envs::EnvConfig::settled_from`]), becomes the best-eval checkpoint: the first
/// evaluation, any settled one over an unsettled best, and otherwise, in the same phase, a
/// better selection where there is one (`by` says which: [`selection_is_better`]; the first
/// one replaces a best chosen by return), else a higher return. So a curriculum's last stage
/// (Cassie's perturbations, which evaluations do not apply) is not outscored by the easier
/// stage before it, and an env without a curriculum keeps the reference's rule (settled from
/// step 0).
pub(super) fn best_is_replaced(
    state: &TrainState,
    settled: bool,
    test_return: f64,
    selection: Option<SelectionScore>,
    by: BestBy,
) -> bool {
    if by == BestBy::Last {
        return true;
    }
    match state.best_test {
        None => true,
        Some(best) => match (state.best_test_settled, settled) {
            (false, true) => true,
            (true, false) => false,
            _ => match (selection, state.best_selection) {
                (Some(new), Some(best)) => selection_is_better(new, best, by),
                (Some(_), None) => true,
                // An evaluation that did not select (`--selection-every`) cannot outscore a
                // selected best.
                (None, Some(_)) if by.selects() => false,
                (None, _) => test_return > best,
            },
        },
    }
}

/// Whether the selection `new` beats the best's: `--best-by tracking` by a lower error;
/// `--best-by cells` by more cells within, or as many and a lower error (a best without a
/// count, from a state written before the count, is beaten by any). Ties keep the best.
fn selection_is_better(new: SelectionScore, best: SelectionScore, by: BestBy) -> bool {
    match (by, new.cells, best.cells) {
        (BestBy::Cells, _, None) => true,
        (BestBy::Cells, Some(cells), Some(best_cells)) if cells != best_cells => cells > best_cells,
        _ => new.error < best.error,
    }
}
