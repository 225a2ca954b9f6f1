//! One terrain description, the same ground on both backends.

use std::sync::Arc;

use rand::{Rng, SeedableRng};

use super::mujoco::MujocoCassie;
use super::rapier::CassieSim;
use super::Physics;
use crate::envs::cassie::robot::description::Description;
use crate::envs::cassie::robot::Dynamics;
use crate::envs::terrain::{TerrainKind, TerrainSpec};

/// At 400 random points of rough ground, a slope, stairs and random flights (laid out at a random
/// heading), rapier's and MuJoCo's rays down meet the ground at the description's height
/// ([`crate::envs::terrain::Heightfield::height_at`]), to 1 mm; beside the grid both meet the
/// floor, lowered under a grid that goes below 0.
#[test]
fn both_backends_build_the_ground_the_description_gives() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut rapier = CassieSim::new(&Description::cassie(), &Dynamics::default(), 0.002, 0.0);
    let mut mujoco = MujocoCassie::new(0.0005);
    let kinds = [TerrainKind::Rough, TerrainKind::Slope, TerrainKind::Stairs, TerrainKind::Flights];
    for (k, kind) in kinds.into_iter().enumerate() {
        let heading = rng.gen_range(-3.1..3.1f32);
        let field = Arc::new(TerrainSpec { kind, difficulty: 0.8, seed: k as u64 }.build(heading));
        for sim in [&mut rapier as &mut dyn Physics, &mut mujoco] {
            sim.set_terrain(Some(field.clone()));
            sim.reset(&Dynamics::default(), 0.0);
        }
        let mut worst = [0.0f32; 2];
        for _ in 0..400 {
            // Around the start, where the robot walks, away from its feet's 20 cm.
            let (x, y) = (rng.gen_range(-6.0..6.0f32), rng.gen_range(-6.0..6.0f32));
            if x.hypot(y) < 0.6 {
                continue;
            }
            let want = field.height_at(x, y).unwrap();
            let got = [rapier.ground_height(x, y), mujoco.ground_height(x as f64, y as f64) as f32];
            for (w, g) in worst.iter_mut().zip(got) {
                *w = w.max((g - want).abs());
            }
        }
        println!(
            "{kind:?}: worst |height - description| rapier {:.2e} m, MuJoCo {:.2e} m",
            worst[0], worst[1]
        );
        assert!(worst[0] < 1e-3 && worst[1] < 1e-3, "{kind:?}: {worst:?}");
        // Beside the grid: the floor, under the grid's lowest point.
        let floor = crate::envs::terrain::floor_under(field.range()[0]);
        let [ex, _] = field.extent();
        let beside = ex / 2.0 + 1.0;
        assert!((rapier.ground_height(beside, 0.0) - floor).abs() < 1e-4);
        assert!((mujoco.ground_height(beside as f64, 0.0) as f32 - floor).abs() < 1e-4);
    }
}
