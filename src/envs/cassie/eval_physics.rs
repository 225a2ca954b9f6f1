//! `gait eval --sim/--sim-dt/--friction/--latency/--sensor-noise/--terrain` on a Cassie run:
//! which model, timestep, floor, ground and sensing its evaluation episodes run, and the line
//! that says so.

use super::config::CassieConfig;
use super::SimKind;
use crate::envs::terrain::TerrainKind;
use crate::envs::PhysicsOverride;

/// `cassie` (a run's settings) with `over` applied, and a line saying what runs where; the
/// settings' own refusal (one message, in `gait eval`'s flag names) if they cannot run.
pub(super) fn apply(cassie: &mut CassieConfig, over: &PhysicsOverride) -> Result<String, String> {
    let trained = cassie.sim;
    // A run trained on mixed physics is evaluated on one model, gait's rapier one unless
    // `--sim` says otherwise: episodes that switch models at random would not say which
    // model a number belongs to, and a recording has one robot to draw.
    let sim = over.sim.unwrap_or(match trained {
        SimKind::Mixed => SimKind::Rapier,
        other => other,
    });
    if sim != trained {
        cassie.sim = sim;
        cassie.sim_dt = None;
        cassie.mujoco_dt = None;
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
    cassie.eval_latency = over.latency.unwrap_or(0.0);
    cassie.eval_noise = over.sensor_noise.unwrap_or(0.0);
    cassie.check().map_err(|e| {
        e.replace("--eval-latency", "--latency").replace("--eval-noise", "--sensor-noise")
    })?;
    let model = match cassie.sim {
        SimKind::Mixed => "each episode on rapier or MuJoCo, drawn at random",
        one => super::physics::backend(one).about,
    };
    let check = if cassie.sim == trained {
        String::new()
    } else if trained == SimKind::Mixed && over.sim.is_none() {
        "; trained on rapier and MuJoCo (mixed): --sim mujoco runs the lab's model".to_string()
    } else if trained == SimKind::Mixed {
        "; trained on rapier and MuJoCo (mixed)".to_string()
    } else {
        format!("; trained on {}: a sim-to-sim check", trained.name())
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
        cassie.sim.name(),
        cassie.sim_dt()
    ))
}
