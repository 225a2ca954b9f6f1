//! The lines before `gait check`'s table: the cells and what "within" means, the weights
//! checked, and each perturbation asked for.

use std::io::Write;

use anyhow::Result;

use super::{CheckOptions, CheckTask, COMMAND_STEPS, TERRAIN_CASES};
use crate::algos::tracking::{SPEED_TOLERANCE, STANDING_TOLERANCE, YAW_RATE_TOLERANCE};

/// The lines before the table: the cells and what "within" means, the weights checked (so the
/// best-eval weights' fallback to the latest is seen), and each perturbation asked for.
pub(super) fn write_preamble(
    opts: &CheckOptions,
    policy: Option<(std::path::PathBuf, Option<String>)>,
    out: &mut impl Write,
) -> Result<()> {
    let s = if opts.episodes == 1 { "" } else { "s" };
    let bounds = format!(
        "each speed within {SPEED_TOLERANCE} m/s ({STANDING_TOLERANCE} standing), yaw rate \
         within {YAW_RATE_TOLERANCE} rad/s, in every episode"
    );
    match &opts.task {
        CheckTask::Commands(c) => writeln!(
            out,
            "{} cells, {} episode{s} each; within: no fall in {} steps, {bounds}",
            c.len() * opts.sims.len(),
            opts.episodes,
            opts.traj_len.unwrap_or(COMMAND_STEPS)
        )?,
        CheckTask::Course(legs) => writeln!(
            out,
            "a course of {} legs on {} model(s), {} episode{s} each; a leg is within when every \
             episode reached it and none fell in it, and from {} s into it, {bounds}",
            legs.len(),
            opts.sims.len(),
            opts.episodes,
            crate::course::SETTLE_SECONDS
        )?,
        CheckTask::Terrain => writeln!(
            out,
            "{} cells, {} episode{s} each: stairs up and down (15 cm risers, 30 cm treads, \
             flights of 8) crossed at 0.5 m/s in 9 of 10 episodes; random flights of 10-17 cm \
             walked at 0.5 m/s for 20 s in 8 of 10; the ten commands on ±4 cm rough ground \
             with no fall, speeds within 0.2 m/s, sidesteps at half their command or more; \
             a 10° slope crossed up and down at 0.5 m/s \
             in 30 s, no fall",
            TERRAIN_CASES.iter().map(|c| c.commands.len()).sum::<usize>() * opts.sims.len(),
            opts.episodes
        )?,
    }
    if let Some((policy, note)) = policy {
        writeln!(out, "policy: {}", policy.display())?;
        if let Some(note) = note {
            writeln!(out, "{note}")?;
        }
    }
    if let Some(push) = opts.push.filter(|&p| p > 0.0) {
        let size = if opts.push_exact { "exactly" } else { "up to" };
        writeln!(out, "pushes: {size} {push} m/s every 2-5 s, in a random horizontal direction")?;
    }
    if let CheckTask::Course(legs) = &opts.task {
        let grounds: Vec<String> = legs
            .iter()
            .enumerate()
            .filter_map(|(k, leg)| {
                leg.ground.map(|g| format!("from leg {k} {}:{}", g.kind.name(), g.difficulty))
            })
            .collect();
        if !grounds.is_empty() {
            writeln!(out, "course ground: {}", grounds.join(", "))?;
        }
    }
    if let Some(t) = opts.terrain {
        writeln!(
            out,
            "terrain: {} of difficulty {}, drawn per episode",
            t.kind.name(),
            t.difficulty
        )?;
    }
    if let Some(friction) = opts.friction {
        writeln!(out, "floor friction: ×{friction} of each model's own")?;
    }
    if let Some(latency) = opts.latency.filter(|&l| l > 0.0) {
        writeln!(out, "sensing latency: {latency} s")?;
    }
    if let Some(noise) = opts.sensor_noise.filter(|&n| n > 0.0) {
        writeln!(out, "sensor noise: ×{noise} of the reference's levels, with IMU bias")?;
    }
    Ok(())
}
