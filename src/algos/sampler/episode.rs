//! How a sampler job's episode begins on a walking env: the command, the physics model, the
//! pushes and the curriculum stage the job asks for, set through the env's [`Walking`](crate::envs::Walking)
//! controls. An env that is no walking task runs its own draws.

use std::borrow::Cow;

use anyhow::{bail, Context, Result};

use super::{JobKind, JobSpec};
use crate::algos::tracking;
use crate::envs::{Env, Pushes};

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
    let n = commands.len() as u64;
    let command = (job.kind != JobKind::Train && n > 0).then(|| commands[(job.id % n) as usize]);
    let model = match job.kind {
        JobKind::Select if n > 0 => Some((job.id / n) as usize % walking.eval_models()),
        JobKind::Select => bail!("selection episodes need an env with eval commands"),
        JobKind::Train | JobKind::Eval => None,
    };
    walking.set_eval_model(model).context("the env refused a selection episode's model")?;
    match &command {
        Some(c) => {
            walking
                .set_command(c)
                .with_context(|| format!("the env refused its own eval command {c:?}"))?;
        }
        None => walking.clear_command(),
    }
    let _ = walking.set_push(match job.kind {
        JobKind::Train => Pushes::Own,
        JobKind::Eval => Pushes::Full,
        JobKind::Select => Pushes::UpTo(job.select_push),
    });
    walking.set_stage(job.stage_from);
    Ok(command)
}
