//! `gait eval --sim/--sim-dt/--friction/--latency/--sensor-noise/--terrain` on a Cassie run:
//! which model, timestep, floor, ground and sensing its evaluation episodes run, and the line
//! that says so.

use super::config::CassieConfig;
use super::Models;
use crate::envs::terrain::TerrainKind;
use crate::envs::PhysicsOverride;

/// `cassie` (a run's settings) with `over` applied, and a line saying what runs where; the
/// settings' own refusal (one message, in `gait eval`'s flag names) if they cannot run.
pub(super) fn apply(cassie: &mut CassieConfig, over: &PhysicsOverride) -> Result<String, String> {
    let trained = cassie.sim.clone();
    // A run trained on a mix is evaluated on one model, its first (gait's rapier one in the
    // walking preset's) unless `--sim` says otherwise: episodes that switch models at random
    // would not say which model a number belongs to, and a recording has one robot to draw.
    // Another model starts from its own default timestep.
    let sim = over.sim.unwrap_or(trained.first());
    if trained.is_mix() || sim != trained.first() {
        cassie.sim = Models::one(sim);
        cassie.sim_dt = None;
    }
    if let Some(dt) = over.sim_dt {
        cassie.sim_dt = Some(dt);
    }
    if let Some(friction) = over.friction {
        cassie.friction = friction;
    }
    // Evaluations never inherit training's sensing or ground: exact and flat unless asked.
    cassie.terrain = over.terrain.map_or(TerrainKind::Flat, |t| t.kind);
    cassie.terrain_difficulty = over.terrain.map_or(cassie.terrain_difficulty, |t| t.difficulty);
    // The adaptive levels are training's curriculum: an evaluation runs its ground as asked.
    cassie.terrain_levels = false;
    cassie.terrain_promote = super::curriculum::TERRAIN_PROMOTE;
    cassie.eval_latency = over.latency.unwrap_or(0.0);
    cassie.eval_noise = over.sensor_noise.unwrap_or(0.0);
    cassie.check().map_err(|e| {
        e.replace("--eval-latency", "--latency").replace("--eval-noise", "--sensor-noise")
    })?;
    let model = super::physics::backend(sim).about;
    let check = if cassie.sim == trained {
        String::new()
    } else if trained.is_mix() && over.sim.is_none() {
        format!("; trained on a mix ({trained}): --sim mujoco runs the lab's model")
    } else if trained.is_mix() {
        format!("; trained on a mix ({trained})")
    } else {
        format!("; trained on {trained}: a sim-to-sim check")
    };
    let mut floor = if cassie.friction == 1.0 {
        String::new()
    } else {
        format!(", floor friction ×{}", cassie.friction)
    };
    let mut sensing = String::new();
    if cassie.eval_latency > 0.0 {
        sensing += &format!(", sensing latency {} s", cassie.eval_latency);
    }
    if cassie.eval_noise > 0.0 {
        sensing += &format!(", sensor noise ×{} of the reference's", cassie.eval_noise);
    }
    if cassie.terrain != TerrainKind::Flat {
        floor += &format!(
            ", terrain {} of difficulty {} (drawn per episode)",
            cassie.terrain.name(),
            cassie.terrain_difficulty
        );
    }
    Ok(format!(
        "physics: {} ({model}), dt {} s{floor}{sensing}{check}",
        sim.name(),
        cassie.sim_dt()
    ))
}
