//! Cassie's robot description: the data gait owns, from which `sim.rs` builds the rapier world.
//!
//! # What it is
//! A lumped 13-body model: the pelvis plus 6 links per leg (hip roll, hip yaw, thigh, shin,
//! tarsus, foot), joined by revolute joints. Each entry is given in the **world frame at the
//! lab's reset pose** (pelvis at (0, 0, 1.01), identity orientation), so every joint coordinate
//! is 0 at reset and the absolute angle is `reset + q`. Only the pelvis and the **left** leg are
//! written down; [`Description::cassie`] derives the right leg by reflecting y → −y, so the
//! simulated robot is exactly left/right symmetric (the lab's XML differs between sides by
//! sub-millimetre amounts; exact symmetry is what makes mirror losses and the physical mirror
//! test meaningful).
//!
//! # Where the numbers come from
//! Masses, inertias, anchors, axes and collision shapes were computed from the lab's MuJoCo
//! model (reference data, not shipped) by `scripts/derive_cassie_model.py`: forward kinematics
//! at the reset qpos, then merging bodies per link (mass-weighted COM, parallel-axis inertia):
//! thigh = hip-pitch + achilles rod; shin = knee + knee spring + shin; tarsus = tarsus + heel
//! spring + foot crank + plantar rod. Joint ranges, gears, torque and speed limits, PD gains and
//! armatures are the facts sheet's. Simplifications, each a documented decision:
//! * The passive shin and heel springs are rigid (they deflect ≤ 3 mrad unloaded); the shin
//!   joint reads 0.
//! * The achilles four-bar is the linear DoF coupling tarsus = −0.9889·knee (measured residual
//!   0.7 mrad in MuJoCo), anchored at the reset pose.
//! * The thin achilles/plantar rods have no colliders (the lab's fast model keeps the plantar
//!   rod's); the pelvis COM's 0.35 mm y offset and its xy/yz inertia products are dropped so
//!   that the pelvis is symmetric too.
//!
//! Another biped is described by writing another `Description`.

use std::f32::consts::PI;

use super::dims::N;
use super::motor::Motor;

/// `[x, y, z]` in metres (world frame at the reset pose).
pub type Vec3 = [f32; 3];

/// A collision shape, world frame at the reset pose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    Sphere {
        center: Vec3,
        radius: f32,
    },
    Capsule {
        a: Vec3,
        b: Vec3,
        radius: f32,
    },
    /// Two spheres of the same radius as one collider (one contact pair per neighbour).
    Balls {
        a: Vec3,
        b: Vec3,
        radius: f32,
    },
    /// `axes` are the box's local x, y, z axes (columns of its rotation).
    Cuboid {
        center: Vec3,
        half: Vec3,
        axes: [Vec3; 3],
    },
}

/// Which contacts a collider takes part in (the lab's contype/conaffinity groups).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContactGroup {
    /// Pelvis and thighs: the floor only.
    Body,
    /// A leg's lower links: the floor and the other leg, never its own leg.
    Leg(Side),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
}

/// What a collider is for, beyond colliding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColliderRole {
    Plain,
    /// Ground reaction forces are summed over this collider.
    Foot,
    /// Touching anything ends the episode (the reference's knee-walking bodies).
    KneeWalk,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Collider {
    pub shape: Shape,
    pub group: ContactGroup,
    pub role: ColliderRole,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Drive {
    Motor(Motor),
    /// Passive joint driven by a linear coupling to another joint of the same leg:
    /// `q = ratio · q_source` (both relative to the reset pose).
    Coupled {
        source: usize,
        ratio: f32,
        damping: f32,
    },
}

/// A revolute joint from the previous link of the chain (the pelvis for the first).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Joint {
    pub name: &'static str,
    pub anchor: Vec3,
    /// Unit axis; positive angles rotate the child about it (right-hand rule).
    pub axis: Vec3,
    /// Absolute joint angle at the reset pose (the lab's reset qpos), rad.
    pub reset: f32,
    /// Absolute range, rad; `None` for joints bounded through their coupling.
    pub range: Option<[f32; 2]>,
    pub armature: f32,
    pub drive: Drive,
    /// +1 if the mirrored joint has the same angle, −1 if negated (hip roll and yaw).
    pub mirror_sign: f32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub name: &'static str,
    pub mass: f32,
    pub com: Vec3,
    /// Inertia about the COM, world axes at the reset pose, row-major.
    pub inertia: [Vec3; 3],
    pub joint: Joint,
    pub colliders: Vec<Collider>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Body {
    pub name: &'static str,
    pub mass: f32,
    pub com: Vec3,
    pub inertia: [Vec3; 3],
    pub colliders: Vec<Collider>,
}

/// A biped: a floating base and two identical (mirrored) leg chains.
#[derive(Debug, Clone, PartialEq)]
pub struct Description {
    pub base: Body,
    /// Base (pelvis origin) height at the reset pose.
    pub reset_height: f32,
    /// `legs[0]` left, `legs[1]` right; each a chain from the base outwards.
    pub legs: [Vec<Link>; 2],
    /// A point on the sole, fixed to the last link of each leg (the lab's `foot-mid` site); its
    /// frame is the world frame at the reset pose.
    pub foot_site: [Vec3; 2],
}

fn deg(d: f32) -> f32 {
    d * PI / 180.0
}

const HIP_ROLL_YAW: Motor =
    Motor { gear: 25.0, ctrl_limit: 4.5, max_rpm: 2900.0, kp: 80.0, kd: 8.0 };
const PITCH_KNEE: Motor =
    Motor { gear: 16.0, ctrl_limit: 12.2, max_rpm: 1300.0, kp: 110.0, kd: 10.0 };
const FOOT: Motor = Motor { gear: 50.0, ctrl_limit: 0.9, max_rpm: 5500.0, kp: 50.0, kd: 5.0 };

/// Leg-chain index of the knee (the tarsus's coupling source).
pub const KNEE: usize = 3;

#[allow(clippy::too_many_lines)] // a data table: the left leg's links
fn left_leg() -> Vec<Link> {
    use ColliderRole::*;
    let leg = ContactGroup::Leg(Side::Left);
    let pitch_axis = [0.0, -0.99999, -0.0045];
    vec![
        Link {
            name: "left-hip-roll",
            mass: 1.82,
            com: [-0.02328, 0.135019, 1.02793],
            inertia: [
                [0.002135, 2.09972e-7, 0.000840009],
                [2.09972e-7, 0.00379299, 2.29395e-6],
                [0.000840009, 2.29395e-6, 0.00343101],
            ],
            joint: Joint {
                name: "left-hip-roll",
                anchor: [0.021, 0.135, 1.01],
                axis: [1.0, 0.0, 0.0],
                reset: 0.0045,
                range: Some([deg(-15.0), deg(22.5)]),
                armature: 0.038125,
                drive: Drive::Motor(HIP_ROLL_YAW),
                mirror_sign: -1.0,
            },
            colliders: vec![],
        },
        Link {
            name: "left-hip-yaw",
            mass: 1.171,
            com: [-0.049, 0.135144, 0.975723],
            inertia: [
                [0.002443, -4.11075e-8, 2.46018e-7],
                [-4.11075e-8, 0.00280296, 8.79728e-6],
                [2.46018e-7, 8.79728e-6, 0.000842039],
            ],
            joint: Joint {
                name: "left-hip-yaw",
                anchor: [-0.049, 0.135, 1.01],
                axis: [0.0, -0.0045, 0.99999],
                reset: 0.0,
                range: Some([deg(-22.5), deg(22.5)]),
                armature: 0.038125,
                drive: Drive::Motor(HIP_ROLL_YAW),
                mirror_sign: -1.0,
            },
            colliders: vec![],
        },
        Link {
            name: "left-thigh",
            mass: 5.6767,
            com: [-0.0250535, 0.16973, 0.863637],
            inertia: [
                [0.0326662, -0.00136836, 0.00217676],
                [-0.00136836, 0.0423857, -0.0011782],
                [0.00217676, -0.0011782, 0.0213111],
            ],
            joint: Joint {
                name: "left-hip-pitch",
                anchor: [-0.049, 0.135405, 0.920001],
                axis: pitch_axis,
                reset: 0.4973,
                range: Some([deg(-50.0), deg(80.0)]),
                armature: 0.09344,
                drive: Drive::Motor(PITCH_KNEE),
                mirror_sign: 1.0,
            },
            colliders: vec![Collider {
                shape: Shape::Capsule {
                    a: [-0.049, 0.175405, 0.920181],
                    b: [0.00824652, 0.171379, 0.814697],
                    radius: 0.08,
                },
                group: ContactGroup::Body,
                role: Plain,
            }],
        },
        Link {
            name: "left-shin",
            mass: 1.5208,
            com: [-0.0361042, 0.132934, 0.692615],
            inertia: [
                [0.02171, -3.95983e-6, -0.0144935],
                [-3.95983e-6, 0.0337987, -0.00010421],
                [-0.0144935, -0.00010421, 0.0128136],
            ],
            joint: Joint {
                name: "left-knee",
                anchor: [0.00824652, 0.13138, 0.814517],
                axis: pitch_axis,
                reset: -1.1997,
                range: Some([deg(-164.0), deg(-37.0)]),
                armature: 0.09344,
                drive: Drive::Motor(PITCH_KNEE),
                mirror_sign: 1.0,
            },
            colliders: vec![Collider {
                shape: Shape::Capsule {
                    a: [0.00523188, 0.131726, 0.737572],
                    b: [-0.26038, 0.133277, 0.392805],
                    radius: 0.04,
                },
                group: leg,
                role: Plain,
            }],
        },
        Link {
            name: "left-tarsus",
            mass: 1.1527,
            com: [-0.222122, 0.130401, 0.298081],
            inertia: [
                [0.0151479, -5.55506e-5, 0.0104488],
                [-5.55506e-5, 0.0232256, -6.54806e-5],
                [0.0104488, -6.54806e-5, 0.00859629],
            ],
            joint: Joint {
                name: "left-tarsus",
                anchor: [-0.26038, 0.133277, 0.392805],
                axis: pitch_axis,
                reset: 1.4267,
                range: None,
                armature: 0.0,
                drive: Drive::Coupled { source: KNEE, ratio: -0.9889, damping: 0.1 },
                mirror_sign: 1.0,
            },
            colliders: vec![
                Collider {
                    shape: Shape::Capsule {
                        a: [-0.291699, 0.132406, 0.382036],
                        b: [-0.0199926, 0.134772, 0.0607264],
                        radius: 0.04,
                    },
                    group: leg,
                    role: Plain,
                },
                Collider {
                    shape: Shape::Cuboid {
                        center: [-0.306913, 0.131313, 0.413931],
                        half: [0.09, 0.005, 0.04],
                        axes: [
                            [-0.298579, -0.0412389, 0.953494],
                            [-0.952814, 0.0701707, -0.295331],
                            [-0.0547282, -0.996682, -0.0602445],
                        ],
                    },
                    group: leg,
                    role: KneeWalk,
                },
            ],
        },
        Link {
            name: "left-foot",
            mass: 0.1498,
            com: [-0.00595583, 0.13502, 0.0366319],
            inertia: [
                [5.50687e-5, 1.1935e-6, 2.3412e-5],
                [1.1935e-6, 0.000332604, 7.74371e-7],
                [2.3412e-5, 7.74371e-7, 0.000286747],
            ],
            joint: Joint {
                name: "left-foot",
                anchor: [-0.0199926, 0.134772, 0.0607264],
                axis: pitch_axis,
                reset: -1.5968,
                range: Some([deg(-140.0), deg(-30.0)]),
                armature: 0.01225,
                drive: Drive::Motor(FOOT),
                mirror_sign: 1.0,
            },
            // The lab's foot is a capsule (r 0.02) from toe to heel. Against a plane a capsule
            // touches with its end spheres, so toe and heel spheres are the same contact
            // geometry, and unlike parry's capsule manifolds they are exactly mirror-symmetric.
            colliders: vec![Collider {
                shape: Shape::Balls {
                    a: [0.0800131, 0.134938, 0.0237434],
                    b: [-0.0799868, 0.134938, 0.0237171],
                    radius: 0.02,
                },
                group: leg,
                role: Foot,
            }],
        },
    ]
}

/// Reflection y → −y of a point.
fn mirror_point(p: Vec3) -> Vec3 {
    [p[0], -p[1], p[2]]
}

/// `M I M` with `M = diag(1, −1, 1)`: the xy and yz products change sign.
fn mirror_inertia(i: [Vec3; 3]) -> [Vec3; 3] {
    let mut out = i;
    for (r, row) in out.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            if (r == 1) != (c == 1) {
                *v = -*v;
            }
        }
    }
    out
}

fn mirror_collider(c: &Collider) -> Collider {
    let shape = match c.shape {
        Shape::Sphere { center, radius } => Shape::Sphere { center: mirror_point(center), radius },
        Shape::Capsule { a, b, radius } => {
            Shape::Capsule { a: mirror_point(a), b: mirror_point(b), radius }
        }
        Shape::Balls { a, b, radius } => {
            Shape::Balls { a: mirror_point(a), b: mirror_point(b), radius }
        }
        // The reflected box has axes M·R·M; since a box is symmetric in its own axes, this
        // proper rotation (the columns M·axis with the middle one negated) covers it exactly.
        Shape::Cuboid { center, half, axes } => Shape::Cuboid {
            center: mirror_point(center),
            half,
            axes: [mirror_point(axes[0]), mirror_point(axes[1]).map(|v| -v), mirror_point(axes[2])],
        },
    };
    let group = match c.group {
        ContactGroup::Leg(Side::Left) => ContactGroup::Leg(Side::Right),
        ContactGroup::Leg(Side::Right) => ContactGroup::Leg(Side::Left),
        ContactGroup::Body => ContactGroup::Body,
    };
    Collider { shape, group, role: c.role }
}

fn right_name(name: &'static str) -> &'static str {
    match name {
        "left-hip-roll" => "right-hip-roll",
        "left-hip-yaw" => "right-hip-yaw",
        "left-hip-pitch" => "right-hip-pitch",
        "left-thigh" => "right-thigh",
        "left-knee" => "right-knee",
        "left-shin" => "right-shin",
        "left-tarsus" => "right-tarsus",
        "left-foot" => "right-foot",
        other => other,
    }
}

/// The right leg as the reflection of the left. A rotation by θ about axis `a`, reflected,
/// is a rotation by θ about `−M·a`; joints whose angle the mirror negates (`mirror_sign` −1)
/// keep the axis `M·a` instead, so their range and reset flip sign.
fn mirror_leg(left: &[Link]) -> Vec<Link> {
    left.iter()
        .map(|l| {
            let j = l.joint;
            let s = j.mirror_sign;
            let axis = mirror_point(j.axis).map(|v| -s * v);
            let range = j.range.map(|[lo, hi]| if s > 0.0 { [lo, hi] } else { [-hi, -lo] });
            Link {
                name: right_name(l.name),
                mass: l.mass,
                com: mirror_point(l.com),
                inertia: mirror_inertia(l.inertia),
                joint: Joint {
                    name: right_name(j.name),
                    anchor: mirror_point(j.anchor),
                    axis,
                    reset: s * j.reset,
                    range,
                    ..j
                },
                colliders: l.colliders.iter().map(mirror_collider).collect(),
            }
        })
        .collect()
}

impl Description {
    /// Agility Robotics' Cassie, lumped as described in the module docs.
    pub fn cassie() -> Self {
        let left = left_leg();
        let right = mirror_leg(&left);
        let foot_site = [0.0, 0.135, 0.0094];
        Self {
            base: Body {
                name: "pelvis",
                mass: 10.33,
                com: [0.05066, 0.0, 1.03841],
                inertia: [
                    [0.085821, 0.0, -0.00016022],
                    [0.0, 0.049222, 0.0],
                    [-0.00016022, 0.0, 0.08626],
                ],
                colliders: vec![Collider {
                    shape: Shape::Sphere { center: [0.02, 0.0, 1.03], radius: 0.15 },
                    group: ContactGroup::Body,
                    role: ColliderRole::Plain,
                }],
            },
            reset_height: 1.01,
            legs: [left, right],
            foot_site: [foot_site, mirror_point(foot_site)],
        }
    }

    /// Total mass (kg).
    #[cfg(test)]
    pub fn mass(&self) -> f32 {
        self.base.mass + self.legs.iter().flatten().map(|l| l.mass).sum::<f32>()
    }

    /// The motors' reset angles in policy order: the neutral stance that actions are added to.
    /// The lab adds [0.0045, 0, ...] to both legs; gait uses −0.0045 for the right hip roll (the
    /// reset pose's value), so that zero actions are mirror-symmetric like the robot.
    pub fn neutral_stance(&self) -> [f32; N] {
        let mut stance = [0.0; N];
        for (k, (_, _, joint, _)) in self.motors().enumerate() {
            stance[k] = joint.reset;
        }
        stance
    }

    /// The motor models in policy order: what both physics backends' [`Drive`](super::motor::Drive)
    /// runs.
    pub fn motor_models(&self) -> [Motor; N] {
        let models: Vec<Motor> = self.motors().map(|(.., motor)| motor).collect();
        models.try_into().expect("Cassie has 10 motors")
    }

    /// Replaces the motors (policy order), e.g. with the PD an exported controller gives.
    pub fn set_motor_models(&mut self, motors: [Motor; N]) {
        let mut models = motors.into_iter();
        for leg in &mut self.legs {
            for link in leg.iter_mut() {
                if let Drive::Motor(m) = &mut link.joint.drive {
                    *m = models.next().expect("Cassie has 10 motors");
                }
            }
        }
    }

    /// The actuated joints in policy order (left leg, then right), with their leg and chain
    /// index.
    pub fn motors(&self) -> impl Iterator<Item = (usize, usize, &Joint, Motor)> + '_ {
        self.legs.iter().enumerate().flat_map(|(side, leg)| {
            leg.iter().enumerate().filter_map(move |(i, link)| match link.joint.drive {
                Drive::Motor(m) => Some((side, i, &link.joint, m)),
                Drive::Coupled { .. } => None,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masses_match_the_facts_sheet() {
        let d = Description::cassie();
        // 33.312 kg in MuJoCo; the lumps add up to the same bodies.
        assert!((d.mass() - 33.312).abs() < 0.01, "{}", d.mass());
        let leg: f32 = d.legs[0].iter().map(|l| l.mass).sum();
        assert!((leg - 11.491).abs() < 0.01, "{leg}");
        assert_eq!(d.motors().count(), 10);
    }

    #[test]
    fn right_leg_is_the_reflection_of_the_left() {
        let d = Description::cassie();
        for (l, r) in d.legs[0].iter().zip(&d.legs[1]) {
            assert_eq!(r.com, [l.com[0], -l.com[1], l.com[2]]);
            assert_eq!(r.mass, l.mass);
            assert!(r.name.starts_with("right-"), "{}", r.name);
        }
        // The facts sheet: right hip roll range [−22.5°, 15°], reset −0.0045; axes ≈ the left's.
        let roll = d.legs[1][0].joint;
        let [lo, hi] = roll.range.unwrap();
        assert!((lo - deg(-22.5)).abs() < 1e-6 && (hi - deg(15.0)).abs() < 1e-6);
        assert_eq!(roll.reset, -0.0045);
        for (l, r) in d.legs[0].iter().zip(&d.legs[1]) {
            let dot: f32 = (0..3).map(|k| l.joint.axis[k] * r.joint.axis[k]).sum();
            assert!(dot > 0.9999, "{} axis {:?} vs {:?}", r.name, r.joint.axis, l.joint.axis);
        }
    }

    #[test]
    fn reflected_box_axes_stay_a_proper_rotation() {
        let d = Description::cassie();
        let Shape::Cuboid { axes, .. } = d.legs[1][4].colliders[1].shape else { panic!() };
        let [x, y, z] = axes;
        let cross =
            [x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]];
        for k in 0..3 {
            assert!((cross[k] - z[k]).abs() < 1e-4, "{cross:?} vs {z:?}");
        }
    }
}
