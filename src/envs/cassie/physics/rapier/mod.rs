//! The rapier3d world of one Cassie: a single reduced-coordinate multibody (free pelvis + 12
//! revolute joints; the two tarsi coupled to their knees), a ground box, and the lab's PD/motor
//! model applied as explicit joint torques every substep.
//!
//! Built fresh at every reset (about 0.1 ms): no contact cache, warm-start impulse or torque
//! survives an episode, which keeps seeded rollouts bit-identical, and dynamics randomization
//! becomes a matter of building with other numbers.

use rapier3d::glamx::{Quat, Vec3};
use rapier3d::prelude::*;

use std::sync::Arc;

use crate::envs::terrain::Heightfield;

use super::{Physics, SimKind};
use crate::envs::cassie::robot::description::{Collider as ColliderDesc, Description, Shape};
use crate::envs::cassie::robot::motor::{Drive, Motor};
use crate::envs::cassie::robot::N;

use crate::envs::cassie::robot::{Dynamics, LEG_LINKS};

const GROUND: Group = Group::GROUP_1;
const LEFT: Group = Group::GROUP_2;
const RIGHT: Group = Group::GROUP_3;
const BODY: Group = Group::GROUP_4;

#[derive(Debug, Clone, Copy)]
struct JointSlot {
    link_id: usize,
    dof: usize,
    axis: Vec3,
    reset: f32,
    parent: RigidBodyHandle,
    child: RigidBodyHandle,
}

#[derive(Debug, Clone, Copy)]
struct MotorSlot {
    side: usize,
    index: usize,
}

/// One simulated Cassie.
pub struct CassieSim {
    desc: Arc<Description>,
    dt: f32,
    world: PhysicsWorld,
    multibody: MultibodyJointHandle,
    base: RigidBodyHandle,
    /// The pelvis origin in the pelvis body's frame (whose origin is the nominal pelvis COM).
    base_origin: Vec3,
    joints: [[JointSlot; LEG_LINKS]; 2],
    motors: [MotorSlot; N],
    /// The colliders whose contact forces are the foot's ground reaction force, per side.
    feet: [Vec<ColliderHandle>; 2],
    foot_bodies: [RigidBodyHandle; 2],
    foot_site_local: [Vec3; 2],
    knee_walk: [ColliderHandle; 2],
    drive: Drive,
    /// The push force on the pelvis (N, world frame), re-applied every substep.
    push: Vec3,
    base_vel_before: (Vec3, Vec3),
    substeps: u64,
    /// Tests only: run forward kinematics afresh before every substep (see
    /// `tests::skipping_unchanged_kinematics_changes_nothing`).
    fresh_kinematics: bool,
    /// The ground beyond the floor, rebuilt with the world at every reset.
    terrain: Option<Arc<Heightfield>>,
}

impl CassieSim {
    fn multibody(&self) -> &Multibody {
        self.world.multibody_joints.get(self.multibody).expect("the robot exists").0
    }

    /// True joint angle (absolute, rad) of leg chain joint `i` on `side`.
    fn angle(&self, mb: &Multibody, side: usize, i: usize) -> f32 {
        let s = self.joints[side][i];
        s.reset + mb.link(s.link_id).expect("link exists").joint().coords()[3]
    }

    fn velocity(&self, mb: &Multibody, side: usize, i: usize) -> f32 {
        mb.generalized_velocity()[self.joints[side][i].dof]
    }

    /// Runs `substeps` physics steps holding the PD `targets` (absolute joint angles, policy
    /// order: left roll, yaw, pitch, knee, foot, then right).
    pub fn step(&mut self, targets: &[f32; N], substeps: usize) {
        for _ in 0..substeps {
            let mb = self.multibody();
            let mut q = [0.0; N];
            let mut qd = [0.0; N];
            for (k, m) in self.motors.iter().enumerate() {
                q[k] = self.angle(mb, m.side, m.index);
                qd[k] = self.velocity(mb, m.side, m.index);
            }
            let applied = *self.drive.substep(targets, &q, &qd);
            for (m, tau) in self.motors.iter().zip(applied) {
                let slot = self.joints[m.side][m.index];
                let child = &mut self.world.bodies[slot.child];
                let axis = child.rotation() * slot.axis;
                child.add_torque(axis * tau, false);
                self.world.bodies[slot.parent].add_torque(-axis * tau, false);
            }
            if self.push != Vec3::ZERO {
                self.world.bodies[self.base].add_force(self.push, true);
            }
            let base = &self.world.bodies[self.base];
            self.base_vel_before = (base.linvel(), base.angvel());
            if self.fresh_kinematics {
                let world = &mut self.world;
                if let Some((mb, _)) = world.multibody_joints.get_mut(self.multibody) {
                    mb.forward_kinematics(&world.bodies, true);
                }
            }
            self.world.step();
            for side in &self.joints {
                for slot in side {
                    self.world.bodies[slot.child].reset_torques(false);
                }
            }
            self.world.bodies[self.base].reset_torques(false);
            if self.push != Vec3::ZERO {
                self.world.bodies[self.base].reset_forces(false);
            }
            self.substeps += 1;
        }
    }

    /// The bodies' handles in [`CassieSim::body_shapes`] order.
    fn body_handles(&self) -> impl Iterator<Item = RigidBodyHandle> + '_ {
        std::iter::once(self.base).chain(self.joints.iter().flatten().map(|slot| slot.child))
    }

    /// Every body's pose and velocity, flattened (for determinism and mirror tests).
    /// Forward kinematics afresh before every substep (the vendored rapier skips it when its
    /// inputs are unchanged). For the test that shows the skip changes nothing.
    #[cfg(test)]
    pub fn set_fresh_kinematics(&mut self, on: bool) {
        self.fresh_kinematics = on;
    }

    /// Tests only: the ground's height at world `(x, y)`, a ray down onto the ground body's
    /// colliders (floor and terrain) by parry's own ray casts.
    #[cfg(test)]
    pub fn ground_height(&self, x: f32, y: f32) -> f32 {
        let ray = Ray::new(Vec3::new(x, y, 5.0), Vec3::new(0.0, 0.0, -1.0));
        let hits = self
            .world
            .colliders
            .iter()
            .filter(|(_, c)| c.parent().is_some_and(|b| self.world.bodies[b].is_fixed()));
        let toi = hits
            .filter_map(|(_, c)| c.shape().cast_ray(c.position(), &ray, 100.0, true))
            .fold(f32::INFINITY, f32::min);
        assert!(toi.is_finite(), "a ray down at ({x}, {y}) meets the ground");
        5.0 - toi
    }

    /// Every body's position and rotation, flat (the tests compare runs bit for bit).
    #[cfg(test)]
    pub fn body_states(&self) -> Vec<f32> {
        let mut out = Vec::new();
        for (_, rb) in self.world.bodies.iter() {
            let p = rb.position();
            out.extend(p.translation.to_array());
            out.extend(p.rotation.to_array());
            out.extend(rb.linvel().to_array());
            out.extend(rb.angvel().to_array());
        }
        out
    }
}

impl Physics for CassieSim {
    fn kind(&self) -> SimKind {
        SimKind::Rapier
    }

    /// Rebuilds the world (about 0.1 ms): nothing of the last episode survives.
    fn reset(&mut self, dynamics: &Dynamics, heading: f32) {
        let fresh = self.fresh_kinematics;
        let terrain = self.terrain.clone();
        *self = Self::build(self.desc.clone(), dynamics, self.dt, heading, terrain);
        self.fresh_kinematics = fresh;
    }

    fn step(&mut self, targets: &[f32; N], substeps: usize) {
        CassieSim::step(self, targets, substeps)
    }

    fn timestep(&self) -> f64 {
        self.world.integration_parameters.dt as f64
    }

    fn set_timestep(&mut self, dt: f64) {
        self.dt = dt as f32;
    }

    fn set_motors(&mut self, motors: [Motor; N]) {
        Arc::make_mut(&mut self.desc).set_motor_models(motors);
    }

    fn set_terrain(&mut self, terrain: Option<Arc<Heightfield>>) {
        self.terrain = terrain;
    }

    fn set_push(&mut self, force: Vec3) {
        self.push = force;
    }

    /// Simulated time since the build (s).
    fn time(&self) -> f64 {
        self.substeps as f64 * self.world.integration_parameters.dt as f64
    }

    /// World position of the pelvis origin (the lab's `qpos[0:3]`; 1.01 m high at reset).
    fn base_position(&self) -> Vec3 {
        self.world.bodies[self.base].position().transform_point(self.base_origin)
    }

    fn base_rotation(&self) -> Quat {
        *self.world.bodies[self.base].rotation()
    }

    /// World-frame linear velocity of the pelvis origin (the lab's `qvel[0:3]`).
    fn base_linvel(&self) -> Vec3 {
        self.world.bodies[self.base].velocity_at_point(self.base_position())
    }

    /// World-frame angular velocity of the pelvis.
    fn base_angvel(&self) -> Vec3 {
        self.world.bodies[self.base].angvel()
    }

    /// Pelvis acceleration over the last substep, MuJoCo's `objectAcceleration` convention:
    /// `[angular (3), linear (3)]`, world frame, gravity included (reads +9.81 z at rest).
    fn base_acceleration(&self) -> [f32; 6] {
        let dt = self.world.integration_parameters.dt;
        let (lin0, ang0) = self.base_vel_before;
        let lin =
            (self.world.bodies[self.base].linvel() - lin0) / dt + Vec3::new(0.0, 0.0, 9.80665);
        let ang = (self.base_angvel() - ang0) / dt;
        [ang.x, ang.y, ang.z, lin.x, lin.y, lin.z]
    }

    /// Motor angles as the encoders read them (true − noise), policy order.
    fn motor_positions(&self, out: &mut [f32]) {
        let mb = self.multibody();
        for (k, m) in self.motors.iter().enumerate() {
            out[k] = self.drive.measured_motor(k, self.angle(mb, m.side, m.index));
        }
    }

    fn motor_velocities(&self, out: &mut [f32]) {
        let mb = self.multibody();
        for (k, m) in self.motors.iter().enumerate() {
            out[k] = self.velocity(mb, m.side, m.index);
        }
    }

    /// [L shin, L tarsus, R shin, R tarsus] angles as measured. The shin spring is rigid in
    /// this model, so the shins read 0 (minus encoder noise).
    fn passive_positions(&self, out: &mut [f32]) {
        let mb = self.multibody();
        for side in 0..2 {
            out[2 * side] = self.drive.measured_passive(2 * side, 0.0);
            out[2 * side + 1] = self.drive.measured_passive(2 * side + 1, self.angle(mb, side, 4));
        }
    }

    fn passive_velocities(&self, out: &mut [f32]) {
        let mb = self.multibody();
        for side in 0..2 {
            out[2 * side] = 0.0;
            out[2 * side + 1] = self.velocity(mb, side, 4);
        }
    }

    /// Joint-side torques applied during the last substep (after delay and efficiency).
    fn applied_torques(&self) -> &[f32; N] {
        self.drive.applied()
    }

    /// Sum of contact forces on a foot during the last substep (N, world frame).
    fn foot_force(&self, side: usize) -> Vec3 {
        let dt = self.world.integration_parameters.dt;
        let mut impulse = Vec3::ZERO;
        for &h in &self.feet[side] {
            for pair in self.world.narrow_phase.contact_pairs_with(h) {
                impulse += pair.total_impulse();
            }
        }
        impulse / dt
    }

    /// `[linear, angular]` world velocity of a foot's COM.
    fn foot_velocity(&self, side: usize) -> (Vec3, Vec3) {
        let rb = &self.world.bodies[self.foot_bodies[side]];
        (rb.linvel(), rb.angvel())
    }

    /// World pose of the foot site (position, orientation; the site frame is the world frame
    /// at the reset pose).
    fn foot_site(&self, side: usize) -> (Vec3, Quat) {
        let rb = &self.world.bodies[self.foot_bodies[side]];
        (rb.position().transform_point(self.foot_site_local[side]), *rb.rotation())
    }

    /// Whether a knee-walking collider (a heel spring) touches anything.
    fn knee_contact(&self) -> bool {
        self.knee_walk.iter().any(|&h| {
            self.world.narrow_phase.contact_pairs_with(h).any(|pair| pair.has_any_active_contact())
        })
    }

    /// The robot's bodies (pelvis, then each leg's links from the hip out, left leg first)
    /// with their collision shapes in body frames, for pictures.
    fn body_shapes(&self) -> Vec<crate::envs::BodyShape> {
        use crate::envs::Primitive;
        let desc = &self.desc;
        let local =
            |p: [f32; 3], com: [f32; 3]| -> [f32; 3] { std::array::from_fn(|i| p[i] - com[i]) };
        let shapes =
            |name: &str, colliders: &[ColliderDesc], com: [f32; 3]| crate::envs::BodyShape {
                name: name.to_string(),
                primitives: colliders
                    .iter()
                    .flat_map(|c| match c.shape {
                        Shape::Sphere { center, radius } => {
                            vec![Primitive::Sphere { center: local(center, com), radius }]
                        }
                        Shape::Capsule { a, b, radius } => {
                            vec![Primitive::Capsule { a: local(a, com), b: local(b, com), radius }]
                        }
                        Shape::Balls { a, b, radius } => vec![
                            Primitive::Sphere { center: local(a, com), radius },
                            Primitive::Sphere { center: local(b, com), radius },
                        ],
                        Shape::Cuboid { center, half, axes } => {
                            vec![Primitive::Cuboid { center: local(center, com), half, axes }]
                        }
                    })
                    .collect(),
            };
        let mut out = vec![shapes(desc.base.name, &desc.base.colliders, desc.base.com)];
        for leg in &desc.legs {
            out.extend(leg.iter().map(|l| shapes(l.name, &l.colliders, l.com)));
        }
        out
    }

    /// Each body's world pose, in [`CassieSim::body_shapes`] order.
    fn body_poses(&self, out: &mut Vec<crate::envs::BodyPose>) {
        out.clear();
        for h in self.body_handles() {
            let p = self.world.bodies[h].position();
            out.push(crate::envs::BodyPose {
                position: p.translation.to_array(),
                rotation: p.rotation.to_array(),
            });
        }
    }

    /// Whether each body touches anything (the ground, or the other leg) now, in
    /// [`CassieSim::body_shapes`] order.
    fn body_contacts(&self, out: &mut Vec<bool>) {
        out.clear();
        for h in self.body_handles() {
            let touching = self.world.bodies[h].colliders().iter().any(|&c| {
                self.world.narrow_phase.contact_pairs_with(c).any(|p| p.has_any_active_contact())
            });
            out.push(touching);
        }
    }

    /// True motor angles (no encoder noise).
    fn true_motor_positions(&self) -> [f32; N] {
        let mb = self.multibody();
        std::array::from_fn(|k| self.angle(mb, self.motors[k].side, self.motors[k].index))
    }

    /// True (knee, tarsus) angles of a leg, for the coupling check.
    fn knee_tarsus(&self, side: usize) -> (f32, f32) {
        let mb = self.multibody();
        (self.angle(mb, side, 3), self.angle(mb, side, 4))
    }

    /// Deepest penetration among the current contacts (m, ≥ 0).
    fn max_penetration(&self) -> f32 {
        let mut deepest = 0.0f32;
        for pair in self.world.narrow_phase.contact_pairs() {
            for manifold in pair.solver_manifolds() {
                for point in &manifold.points {
                    deepest = deepest.max(-point.dist);
                }
            }
        }
        deepest
    }
}

mod build;
#[cfg(test)]
mod tests;
