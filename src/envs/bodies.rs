//! What an env's bodies look like, for pictures (`gait eval --gif`): each body's collision
//! shapes in its own frame, and its world pose at a step. Serde types, because they are also
//! the body part of the replay format.

use serde::{Deserialize, Serialize};

/// A drawing primitive in its body's frame (metres).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Primitive {
    /// A ball.
    Sphere {
        /// Its centre.
        center: [f32; 3],
        /// Its radius.
        radius: f32,
    },
    /// A segment `a`-`b` swept by a sphere of `radius`.
    Capsule {
        /// One end of the segment.
        a: [f32; 3],
        /// The other end.
        b: [f32; 3],
        /// The swept sphere's radius.
        radius: f32,
    },
    /// A box with half extents `half` along the columns of `axes`, centred at `center`.
    Cuboid {
        /// Its centre.
        center: [f32; 3],
        /// Half its extent along each axis.
        half: [f32; 3],
        /// Its axes (unit columns).
        axes: [[f32; 3]; 3],
    },
}

/// One rigid body: a name and the primitives that make up its shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BodyShape {
    /// The body's name.
    pub name: String,
    /// Its shapes, in its own frame.
    pub primitives: Vec<Primitive>,
}

/// A body's world pose: position (m) and orientation as a unit quaternion `[x, y, z, w]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BodyPose {
    /// World position (m).
    pub position: [f32; 3],
    /// World rotation, unit quaternion `[x, y, z, w]`.
    pub rotation: [f32; 4],
}

impl BodyPose {
    /// `p` (body frame) in the world frame.
    pub fn apply(&self, p: [f32; 3]) -> [f32; 3] {
        let [x, y, z, w] = self.rotation;
        // v' = v + 2w (q × v) + 2 q × (q × v), with q the quaternion's vector part.
        let (q, v) = ([x, y, z], p);
        let cross = |a: [f32; 3], b: [f32; 3]| {
            [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
        };
        let t = cross(q, v).map(|c| 2.0 * c);
        let u = cross(q, t);
        std::array::from_fn(|i| v[i] + w * t[i] + u[i] + self.position[i])
    }
}

/// An env whose rigid bodies can be drawn: their shapes once, their poses and contacts at
/// each step.
pub trait Drawable {
    /// The env's rigid bodies as drawable shapes.
    fn body_shapes(&self) -> Vec<BodyShape>;
    /// Each body's world pose now, in [`Drawable::body_shapes`] order (cleared first).
    fn body_poses(&self, out: &mut Vec<BodyPose>);
    /// Whether each body is in contact now, in [`Drawable::body_shapes`] order (cleared first; left
    /// empty by envs that do not know).
    fn body_contacts(&self, out: &mut Vec<bool>);

    /// The ground beyond the flat floor this episode walks on, if any (pictures draw it).
    fn ground(&self) -> Option<&crate::envs::terrain::Heightfield> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pose_rotates_then_translates() {
        let s = std::f32::consts::FRAC_1_SQRT_2;
        // 90° about z, then +1 in x.
        let pose = BodyPose { position: [1.0, 0.0, 0.0], rotation: [0.0, 0.0, s, s] };
        let p = pose.apply([1.0, 0.0, 0.5]);
        for (a, b) in p.iter().zip([1.0, 1.0, 0.5]) {
            assert!((a - b).abs() < 1e-6, "{p:?}");
        }
    }
}
