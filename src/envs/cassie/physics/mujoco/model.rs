//! The lab's `cassie_fast.xml`, shipped unchanged under `assets/cassie-mujoco/` (MIT, its
//! licence beside it), and the two changes gait makes to it when loading, each checked:
//!
//! 1. **Floor contacts for the pelvis and thighs.** `cassie_fast.xml` collides only through its
//!    13 explicit `<pair>`s, none of them for the pelvis sphere or the thigh capsules, so a
//!    fallen robot sinks through the floor (the facts sheet notes it). gait names those three
//!    geoms and adds a floor pair for each, as the lab's full `cassie.xml` (where they collide
//!    with the floor by contype) and gait's rapier model have. They touch nothing while the
//!    robot stands or walks: the fall curve up to the tip is unchanged.
//! 2. **Its `<size>` memory hints** (`nconmax`, and the `nuser_*` fields no code reads) are
//!    left as they are: MuJoCo 3.17 still accepts them.
//!
//! Everything else (masses, inertias, joints, springs, damping, armature, the achilles and
//! plantar loops, contact parameters, the Newton solver with 50 iterations, the Euler
//! integrator) is the lab's. The timestep is set from gait's `sim_dt` (default: the file's own
//! 0.5 ms).

use mujoco_rs::prelude::*;

use crate::envs::cassie::robot::N;
use crate::envs::cassie::robot::{LEG_LINKS, PASSIVE};

/// The lab's model, byte for byte.
pub const CASSIE_FAST_XML: &str =
    include_str!("../../../../../assets/cassie-mujoco/cassie_fast.xml");

/// The load-time changes: (the text in the lab's file, what replaces it).
const PATCHES: [(&str, &str); 4] = [
    (
        "<geom type='sphere' size='0.15' pos='0.02 0 0.02'/>",
        "<geom name='pelvis' type='sphere' size='0.15' pos='0.02 0 0.02'/>",
    ),
    (
        "<geom type='capsule' size='0.08' fromto='0 0 -0.04 0.12 0 -0.0355'/>",
        "<geom name='left-thigh' type='capsule' size='0.08' fromto='0 0 -0.04 0.12 0 -0.0355'/>",
    ),
    (
        "<geom type='capsule' size='0.08' fromto='0 0 0.04 0.12 0 0.0355'/>",
        "<geom name='right-thigh' type='capsule' size='0.08' fromto='0 0 0.04 0.12 0 0.0355'/>",
    ),
    (
        "<contact>",
        "<contact>\n    <pair geom1=\"pelvis\" geom2=\"floor\"/>\n    \
         <pair geom1=\"left-thigh\" geom2=\"floor\"/>\n    \
         <pair geom1=\"right-thigh\" geom2=\"floor\"/>",
    ),
];

/// The XML gait loads: [`CASSIE_FAST_XML`] with `PATCHES` applied, each exactly once.
pub fn patched_xml() -> String {
    let mut xml = CASSIE_FAST_XML.to_string();
    for (from, to) in PATCHES {
        assert_eq!(xml.matches(from).count(), 1, "cassie_fast.xml: '{from}' must occur once");
        xml = xml.replacen(from, to, 1);
    }
    xml
}

/// The floor's geom in the lab's file (a plane; its pairs are the ground contacts).
const FLOOR_GEOM: &str =
    "<geom name='floor' pos='0.001 0 0' size='100 10 .125' type='plane' material='plane' priority='100'/>";

/// The heightfield's elevation range (m) and the geom's z: data in [0, 1] spans heights from
/// `-TERRAIN_RANGE / 2` to `+TERRAIN_RANGE / 2`.
pub const TERRAIN_RANGE: f64 = 10.0;

/// [`patched_xml`] with a terrain: a heightfield `terrain` of `nx × ny` points over
/// `2·half[0] × 2·half[1]` m (its data zero, written at reset), a geom `terrain` on it with the
/// floor's priority, and a copy of every floor pair for it.
pub fn terrain_xml(nx: usize, ny: usize, half: [f64; 2]) -> String {
    let mut xml = patched_xml();
    let hfield = format!(
        "  <hfield name='terrain' nrow='{ny}' ncol='{nx}' size='{} {} {TERRAIN_RANGE} 0.1'/>\n  </asset>",
        half[0], half[1]
    );
    xml = xml.replacen("</asset>", &hfield, 1);
    let geom = format!(
        "{FLOOR_GEOM}\n    <geom name='terrain' type='hfield' hfield='terrain' pos='0 0 {}' \
         material='plane' priority='100'/>",
        -TERRAIN_RANGE / 2.0
    );
    assert_eq!(xml.matches(FLOOR_GEOM).count(), 1, "cassie_fast.xml: one floor geom");
    xml = xml.replacen(FLOOR_GEOM, &geom, 1);
    let pairs: Vec<String> = xml
        .lines()
        .filter(|l| l.contains("<pair geom1=") && l.contains("geom2=\"floor\""))
        .map(|l| l.replace("geom2=\"floor\"", "geom2=\"terrain\""))
        .collect();
    assert!(pairs.len() >= 8, "the floor's pairs");
    xml.replacen("</contact>", &format!("{}\n  </contact>", pairs.join("\n")), 1)
}

/// The motors' joints in policy order.
pub const MOTOR_JOINTS: [&str; N] = [
    "left-hip-roll",
    "left-hip-yaw",
    "left-hip-pitch",
    "left-knee",
    "left-foot",
    "right-hip-roll",
    "right-hip-yaw",
    "right-hip-pitch",
    "right-knee",
    "right-foot",
];

/// The observed passive joints: [L shin, L tarsus, R shin, R tarsus].
pub const PASSIVE_JOINTS: [&str; PASSIVE] =
    ["left-shin", "left-tarsus", "right-shin", "right-tarsus"];

/// Per gait link (hip roll, hip yaw, thigh, shin, tarsus, foot): the lab bodies that link lumps
/// together (`description.rs` derives gait's model the same way), and the joint whose damping
/// the link's damping factor scales. Names without their `left-`/`right-` prefix.
const LUMPS: [(&[&str], &str); LEG_LINKS] = [
    (&["hip-roll"], "hip-roll"),
    (&["hip-yaw"], "hip-yaw"),
    (&["hip-pitch", "achilles-rod"], "hip-pitch"),
    (&["knee", "knee-spring", "shin"], "knee"),
    (&["tarsus", "heel-spring", "foot-crank", "plantar-rod"], "tarsus"),
    (&["foot"], "foot"),
];

/// [`LUMPS`] for one leg (0 left, 1 right), with the side's prefix.
pub fn lumped_bodies(side: usize) -> impl Iterator<Item = (Vec<String>, String)> {
    let prefix = if side == 0 { "left-" } else { "right-" };
    LUMPS.iter().map(move |(bodies, joint)| {
        (bodies.iter().map(|b| format!("{prefix}{b}")).collect(), format!("{prefix}{joint}"))
    })
}

/// The lab's reset pose (`mj_cassiesim.py`'s `reset_qpos`, 35 values): pelvis at (0, 0, 1.01),
/// identity orientation, the nominal stance with its achilles-rod quaternions, springs at 0.
pub const RESET_QPOS: [f64; 35] = [
    0.0, 0.0, 1.01, 1.0, 0.0, 0.0, 0.0, //
    0.0045, 0.0, 0.4973, 0.9785, -0.0164, 0.01787, -0.2049, //
    -1.1997, 0.0, 1.4267, 0.0, -1.5244, 1.5244, -1.5968, //
    -0.0045, 0.0, 0.4973, 0.9786, 0.00386, -0.01524, -0.2051, //
    -1.1997, 0.0, 1.4267, 0.0, -1.5244, 1.5244, -1.5968,
];

/// Looks up a named object, with the name in the panic (the names are the lab's file's, which
/// ships with gait: a miss is a bug, not an input error).
pub fn id(model: &MjModel, kind: MjtObjBase, name: &str) -> usize {
    model
        .name_to_id(kind, name)
        .unwrap_or_else(|| panic!("cassie_fast.xml has no {kind:?} named '{name}'"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_shipped_model_is_the_labs_file_unchanged() {
        let shipped = include_bytes!("../../../../../assets/cassie-mujoco/cassie_fast.xml");
        assert_eq!(shipped.len(), 17346);
        // A checksum of the lab's file (sha256 of shared/reference/cassie-mujoco/cassie_fast.xml).
        use sha2::Digest;
        let digest = sha2::Sha256::digest(shipped);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, LAB_SHA256);
    }

    const LAB_SHA256: &str = "8a5b7da3f732950edad27112ebee408b48da5d52138080a19cdb77e0ca9e53ac";
}
