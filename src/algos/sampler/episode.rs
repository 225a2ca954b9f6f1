//! How a sampler job's episode begins on a walking env: the command, the physics model, the
//! pushes and the curriculum stage the job asks for, as one [`EpisodePlan`] (a pure function of
//! the job) given to the env's [`Walking::begin_episode`](crate::envs::Walking::begin_episode).
//! An env that is no walking task runs its own draws.

use std::borrow::Cow;

use anyhow::{bail, Context, Result};

use super::{JobKind, JobSpec};
use crate::algos::tracking;
use crate::envs::{Env, EpisodePlan, Pushes};

/// Sets a walking env up for `job`'s episode and returns its command: eval episode `i` runs the
/// env's eval command `i % n`; selection episode `k` the selection's command `k % n` on physics
/// model `(k / n) % models` (so each repetition covers every cell in order); every other job
/// (train jobs, and eval jobs of an env without eval commands) the env's own draws, whatever
/// the previous job on this worker set, even if it was cancelled or failed. Evaluations push at
/// the run's full strength, never on a schedule, so that Test/Return (and the best-eval
/// checkpoint) measures the robustness trained for, alike at every iteration (envs that cannot
/// be pushed refuse, which changes nothing); selection episodes push as `gait check --push V`
/// does, V = `--selection-push` (0: tracking alone). An env that is no walking task gets no
/// command (and a selection job is refused).
pub(super) fn begin(env: &mut dyn Env, job: &JobSpec) -> Result<Option<[f32; 3]>> {
    // The eval commands are borrowed (`'static`): no allocation per episode.
    let commands: Cow<[[f32; 3]]> = match job.kind {
        JobKind::Select => Cow::Owned(tracking::selection_commands(&*env, job.select_commands)?),
        JobKind::Train | JobKind::Eval => {
            Cow::Borrowed(env.walking().map_or(&[][..], |w| w.eval_commands()))
        }
    };
    let Some(walking) = env.walking_mut() else {
        if job.kind == JobKind::Select {
            bail!("selection episodes need an env with eval commands");
        }
        return Ok(None);
    };
    let plan = plan(job, &commands, walking.eval_models())?;
    walking
        .begin_episode(&plan)
        .with_context(|| format!("the env refused its own episode plan {plan:?}"))?;
    Ok(plan.command)
}

/// The plan of `job`'s episode on a walking env with these eval (or selection) `commands` and
/// `models` physics models: a pure function of the job.
fn plan(job: &JobSpec, commands: &[[f32; 3]], models: usize) -> Result<EpisodePlan> {
    let n = commands.len() as u64;
    let command = (job.kind != JobKind::Train && n > 0).then(|| commands[(job.id % n) as usize]);
    let model = match job.kind {
        JobKind::Select if n > 0 => Some((job.id / n) as usize % models.max(1)),
        JobKind::Select => bail!("selection episodes need an env with eval commands"),
        JobKind::Train | JobKind::Eval => None,
    };
    let pushes = match job.kind {
        JobKind::Train => Pushes::Own,
        JobKind::Eval => Pushes::Full,
        JobKind::Select => Pushes::UpTo(job.select_push),
    };
    Ok(EpisodePlan { command, model, pushes, stage_from: job.stage_from, levels: job.levels })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SelectionCommands;
    use crate::envs::levels::Levels;

    fn job(kind: JobKind, id: u64) -> JobSpec {
        JobSpec {
            id,
            kind,
            seed: 0,
            max_len: 10,
            select_commands: SelectionCommands::Eval,
            select_push: 0.5,
            timesteps: 0,
            stage_from: Some(7),
            levels: LEVELS,
        }
    }

    const LEVELS: Levels = Levels([0.5, 0.25, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]);

    /// Each job kind's plan: training draws its own commands and pushes on the run's schedule;
    /// evaluation cycles the commands at full pushes; selection walks every (command, model)
    /// cell in order at the selection's pushes; every plan carries the stage and the levels.
    #[test]
    fn each_job_kind_plans_its_episode_as_data() {
        let commands = [[1.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, 0.0]];
        let train = plan(&job(JobKind::Train, 4), &commands, 2).unwrap();
        let expected = EpisodePlan {
            command: None,
            model: None,
            pushes: Pushes::Own,
            stage_from: Some(7),
            levels: LEVELS,
        };
        assert_eq!(train, expected);
        let eval = plan(&job(JobKind::Eval, 4), &commands, 2).unwrap();
        assert_eq!(
            (eval.command, eval.model, eval.pushes),
            (Some(commands[1]), None, Pushes::Full)
        );
        let cells: Vec<_> = (0..6)
            .map(|id| {
                let p = plan(&job(JobKind::Select, id), &commands, 2).unwrap();
                assert_eq!(p.pushes, Pushes::UpTo(0.5));
                (p.command.unwrap(), p.model.unwrap())
            })
            .collect();
        let want: Vec<_> =
            [0, 1].iter().flat_map(|&m| commands.iter().map(move |&c| (c, m))).collect();
        assert_eq!(cells, want);
        assert!(plan(&job(JobKind::Select, 0), &[], 2).is_err());
    }
}
