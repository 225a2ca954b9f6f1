//! The rapier3d world of one Cassie: a single reduced-coordinate multibody (free pelvis + 12
//! revolute joints; the two tarsi coupled to their knees), a ground box, and the lab's PD/motor
//! model applied as explicit joint torques every substep.
//!
//! Built fresh at every reset (about 0.1 ms): no contact cache, warm-start impulse or torque
//! survives an episode, which keeps seeded rollouts bit-identical, and dynamics randomization
//! becomes a matter of building with other numbers.

use rapier3d::glamx::{EulerRot, Mat3, Quat, Vec3};
use rapier3d::prelude::*;

use super::description::{
    Collider as ColliderDesc, ColliderRole, ContactGroup, Description, Drive, Shape, Side,
};
use super::motor::{pd_torque, Motor, TorqueDelay, N};

/// Links per leg in the description.
pub const LEG_LINKS: usize = 6;
/// Passive joints observed: [L shin, L tarsus, R shin, R tarsus].
pub const PASSIVE: usize = 4;

const GROUND: Group = Group::GROUP_1;
const LEFT: Group = Group::GROUP_2;
const RIGHT: Group = Group::GROUP_3;
const BODY: Group = Group::GROUP_4;

/// The physical parameters of one episode. [`Dynamics::default`] is the nominal robot;
/// dynamics randomization draws other values.
#[derive(Debug, Clone, PartialEq)]
pub struct Dynamics {
    /// Mass (and inertia) factor per body: pelvis, left links, right links.
    pub mass_scale: [f32; 1 + 2 * LEG_LINKS],
    /// COM offset per body (m), in the body's frame.
    pub com_offset: [[f32; 3]; 1 + 2 * LEG_LINKS],
    /// Damping factor per leg joint (left chain, then right), motor kd included.
    pub damping_scale: [f32; 2 * LEG_LINKS],
    /// Coulomb friction of every contact.
    pub friction: f32,
    /// Ground roll and pitch (rad).
    pub slope: [f32; 2],
    /// Time (s) between computing a torque and applying it. The lab's 6 cycles at 2 kHz are
    /// 3 ms; it is a time, not a substep count, so that another physics rate keeps the same
    /// delay ([`Dynamics::delay_substeps`] converts it).
    pub delay: f32,
    /// Fraction of the commanded torque that reaches the joint.
    pub efficiency: f32,
    /// Encoder offsets: measured = true − noise, for the 10 motors then the 4 passive joints.
    /// The PD loop runs on the measured angles, as the robot's would.
    pub encoder_noise: [f32; N + PASSIVE],
}

impl Default for Dynamics {
    fn default() -> Self {
        Self {
            mass_scale: [1.0; 1 + 2 * LEG_LINKS],
            com_offset: [[0.0; 3]; 1 + 2 * LEG_LINKS],
            damping_scale: [1.0; 2 * LEG_LINKS],
            friction: 1.0,
            slope: [0.0; 2],
            delay: 0.003,
            efficiency: 1.0,
            encoder_noise: [0.0; N + PASSIVE],
        }
    }
}

impl Dynamics {
    /// The torque delay in whole substeps of `dt` (rounded): 6 at 2 kHz, 2 at 500 Hz.
    pub fn delay_substeps(&self, dt: f32) -> usize {
        (self.delay / dt).round().max(0.0) as usize
    }
}

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
    motor: Motor,
}

/// One simulated Cassie.
pub struct CassieSim {
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
    delay: TorqueDelay,
    efficiency: f32,
    encoder_noise: [f32; N + PASSIVE],
    applied: [f32; N],
    base_vel_before: (Vec3, Vec3),
    substeps: u64,
}

fn v(a: [f32; 3]) -> Vec3 {
    Vec3::from_array(a)
}

fn interaction(group: ContactGroup) -> InteractionGroups {
    let (member, filter) = match group {
        ContactGroup::Body => (BODY, GROUND),
        ContactGroup::Leg(Side::Left) => (LEFT, GROUND | RIGHT),
        ContactGroup::Leg(Side::Right) => (RIGHT, GROUND | LEFT),
    };
    InteractionGroups::new(member, filter, InteractionTestMode::And)
}

/// A rapier collider for `c`, positioned relative to a body whose origin is at `com` (world
/// frame at the reset pose, which is the body's local frame).
fn build_collider(c: &ColliderDesc, com: Vec3, friction: f32) -> Collider {
    let builder = match c.shape {
        Shape::Sphere { center, radius } => {
            ColliderBuilder::ball(radius).translation(v(center) - com)
        }
        Shape::Capsule { a, b, radius } => {
            ColliderBuilder::capsule_from_endpoints(v(a) - com, v(b) - com, radius)
        }
        Shape::Balls { a, b, radius } => ColliderBuilder::compound(vec![
            (Pose::from_translation(v(a) - com), SharedShape::ball(radius)),
            (Pose::from_translation(v(b) - com), SharedShape::ball(radius)),
        ]),
        Shape::Cuboid { center, half, axes } => {
            let rot = Quat::from_mat3(&Mat3::from_cols(v(axes[0]), v(axes[1]), v(axes[2])));
            ColliderBuilder::cuboid(half[0], half[1], half[2])
                .position(Pose::from_parts(v(center) - com, rot))
        }
    };
    builder.density(0.0).friction(friction).collision_groups(interaction(c.group)).build()
}

fn mass_properties(
    mass: f32,
    inertia: [[f32; 3]; 3],
    scale: f32,
    offset: [f32; 3],
) -> MassProperties {
    let i = Mat3::from_cols(v(inertia[0]), v(inertia[1]), v(inertia[2])); // symmetric
    MassProperties::with_inertia_matrix(v(offset), mass * scale, i * scale)
}

impl CassieSim {
    /// Builds the robot in its reset pose, pelvis yawed by `yaw` about the vertical.
    pub fn new(desc: &Description, dynamics: &Dynamics, dt: f32, yaw: f32) -> Self {
        let mut world = PhysicsWorld::new();
        world.gravity = Vec3::new(0.0, 0.0, -9.80665);
        world.integration_parameters.dt = dt;
        world.integration_parameters.num_solver_iterations = 1;
        // The same PGS sweeps per simulated second at any rate: 1 per substep at the lab's
        // 2 kHz, 4 at 500 Hz. With 1 at 500 Hz the knee-tarsus coupling drifted to 4.9e-3 rad
        // under random targets (2 solver iterations: 1.4e-3; 4 PGS sweeps: 2.8e-4, as 2 kHz's
        // 7.9e-5 order), at no measurable cost (`gait bench env`: 2011-2047 vs 2024-2040 steps/s).
        world.integration_parameters.num_internal_pgs_iterations =
            ((dt / 0.0005).round() as usize).max(1);

        let slope = Quat::from_euler(EulerRot::XYZ, dynamics.slope[0], dynamics.slope[1], 0.0);
        let ground = world.bodies.insert(RigidBodyBuilder::fixed().build());
        let floor = ColliderBuilder::cuboid(50.0, 50.0, 0.5)
            .position(Pose::from_parts(slope * Vec3::new(0.0, 0.0, -0.5), slope))
            .friction(dynamics.friction)
            .collision_groups(InteractionGroups::new(
                GROUND,
                LEFT | RIGHT | BODY,
                InteractionTestMode::And,
            ))
            .build();
        world.colliders.insert_with_parent(floor, ground, &mut world.bodies);

        let heading = Quat::from_rotation_z(yaw);
        let place = |com: Vec3| Pose::from_parts(heading * com, heading);
        let body = |world: &mut PhysicsWorld, com, mass, inertia, k: usize| {
            let rb = RigidBodyBuilder::dynamic()
                .pose(place(com))
                .additional_mass_properties(mass_properties(
                    mass,
                    inertia,
                    dynamics.mass_scale[k],
                    dynamics.com_offset[k],
                ))
                .can_sleep(false)
                .build();
            world.bodies.insert(rb)
        };
        let attach = |world: &mut PhysicsWorld, cs: &[ColliderDesc], com: Vec3, h| {
            let mut handles = Vec::new();
            for c in cs {
                let collider = build_collider(c, com, dynamics.friction);
                let PhysicsWorld { colliders, bodies, .. } = world;
                handles.push((c.role, colliders.insert_with_parent(collider, h, bodies)));
            }
            handles
        };

        let base_com = v(desc.base.com);
        let base = body(&mut world, base_com, desc.base.mass, desc.base.inertia, 0);
        attach(&mut world, &desc.base.colliders, base_com, base);

        let mut joint_handles = Vec::new();
        let mut slots = Vec::new();
        let mut feet: [Vec<ColliderHandle>; 2] = [Vec::new(), Vec::new()];
        let mut knee_walk = Vec::new();
        let mut foot_bodies = Vec::new();
        let mut foot_site_local = Vec::new();
        for (side, leg) in desc.legs.iter().enumerate() {
            let (mut parent, mut parent_com) = (base, base_com);
            for (i, link) in leg.iter().enumerate() {
                let com = v(link.com);
                let k = 1 + side * LEG_LINKS + i;
                let child = body(&mut world, com, link.mass, link.inertia, k);
                for (role, h) in attach(&mut world, &link.colliders, com, child) {
                    match role {
                        ColliderRole::Foot => feet[side].push(h),
                        ColliderRole::KneeWalk => knee_walk.push(h),
                        ColliderRole::Plain => {}
                    }
                }
                let j = link.joint;
                let anchor = v(j.anchor);
                let mut builder = RevoluteJointBuilder::new(v(j.axis))
                    .local_anchor1(anchor - parent_com)
                    .local_anchor2(anchor - com)
                    .contacts_enabled(false);
                if let Some([lo, hi]) = j.range {
                    builder = builder.limits([lo - j.reset, hi - j.reset]);
                }
                let handle = world
                    .multibody_joints
                    .insert(parent, child, builder, true)
                    .expect("the Cassie description is a tree");
                joint_handles.push(handle);
                slots.push((handle, v(j.axis), j.reset, parent, child));
                (parent, parent_com) = (child, com);
            }
            foot_bodies.push(parent);
            foot_site_local.push(v(desc.foot_site[side]) - parent_com);
        }

        let multibody = joint_handles[0];
        let joints: Vec<JointSlot> = slots
            .into_iter()
            .map(|(handle, axis, reset, parent, child)| {
                let (mb, link_id) = world.multibody_joints.get(handle).expect("just inserted");
                let dof = mb.link(link_id).expect("link exists").assembly_id();
                JointSlot { link_id, dof, axis, reset, parent, child }
            })
            .collect();
        let joints: [[JointSlot; LEG_LINKS]; 2] = [
            joints[..LEG_LINKS].try_into().expect("six links per leg"),
            joints[LEG_LINKS..].try_into().expect("six links per leg"),
        ];
        let (mb, _) = world.multibody_joints.get_mut(multibody).expect("just inserted");
        for (side, leg) in desc.legs.iter().enumerate() {
            for (i, link) in leg.iter().enumerate() {
                let slot = joints[side][i];
                let scale = dynamics.damping_scale[side * LEG_LINKS + i];
                mb.armature_mut()[slot.dof] = link.joint.armature;
                match link.joint.drive {
                    Drive::Motor(m) => mb.damping_mut()[slot.dof] = m.kd * scale,
                    Drive::Coupled { source, ratio, damping } => {
                        mb.damping_mut()[slot.dof] = damping * scale;
                        mb.add_dof_coupling(MultibodyDofCoupling {
                            link1: joints[side][source].link_id,
                            dof1: 0,
                            axis1: 3,
                            link2: slot.link_id,
                            dof2: 0,
                            axis2: 3,
                            coeff: ratio,
                            offset: 0.0,
                        });
                    }
                }
            }
        }

        let motors: Vec<MotorSlot> =
            desc.motors().map(|(side, index, _, motor)| MotorSlot { side, index, motor }).collect();
        Self {
            world,
            multibody,
            base,
            base_origin: Vec3::new(0.0, 0.0, desc.reset_height) - base_com,
            joints,
            motors: motors.try_into().expect("Cassie has 10 motors"),
            feet,
            foot_bodies: foot_bodies.try_into().expect("two legs"),
            foot_site_local: foot_site_local.try_into().expect("two legs"),
            knee_walk: knee_walk.try_into().expect("one heel spring per leg"),
            delay: TorqueDelay::new(dynamics.delay_substeps(dt)),
            efficiency: dynamics.efficiency,
            encoder_noise: dynamics.encoder_noise,
            applied: [0.0; N],
            base_vel_before: (Vec3::ZERO, Vec3::ZERO),
            substeps: 0,
        }
    }

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
            let mut torque = [0.0; N];
            for (k, m) in self.motors.iter().enumerate() {
                let q = self.angle(mb, m.side, m.index) - self.encoder_noise[k];
                let qd = self.velocity(mb, m.side, m.index);
                torque[k] = pd_torque(&m.motor, targets[k], q, qd);
            }
            let delayed = self.delay.push(torque);
            for (k, m) in self.motors.iter().enumerate() {
                let tau = self.efficiency * delayed[k];
                self.applied[k] = tau;
                let slot = self.joints[m.side][m.index];
                let child = &mut self.world.bodies[slot.child];
                let axis = child.rotation() * slot.axis;
                child.add_torque(axis * tau, false);
                self.world.bodies[slot.parent].add_torque(-axis * tau, false);
            }
            let base = &self.world.bodies[self.base];
            self.base_vel_before = (base.linvel(), base.angvel());
            self.world.step();
            for side in &self.joints {
                for slot in side {
                    self.world.bodies[slot.child].reset_torques(false);
                }
            }
            self.world.bodies[self.base].reset_torques(false);
            self.substeps += 1;
        }
    }

    /// Simulated time since the build (s).
    pub fn time(&self) -> f64 {
        self.substeps as f64 * self.world.integration_parameters.dt as f64
    }

    /// World position of the pelvis origin (the lab's `qpos[0:3]`; 1.01 m high at reset).
    pub fn base_position(&self) -> Vec3 {
        self.world.bodies[self.base].position().transform_point(self.base_origin)
    }

    pub fn base_rotation(&self) -> Quat {
        *self.world.bodies[self.base].rotation()
    }

    /// World-frame linear velocity of the pelvis origin (the lab's `qvel[0:3]`).
    pub fn base_linvel(&self) -> Vec3 {
        self.world.bodies[self.base].velocity_at_point(self.base_position())
    }

    /// World-frame angular velocity of the pelvis.
    pub fn base_angvel(&self) -> Vec3 {
        self.world.bodies[self.base].angvel()
    }

    /// Pelvis acceleration over the last substep, MuJoCo's `objectAcceleration` convention:
    /// `[angular (3), linear (3)]`, world frame, gravity included (reads +9.81 z at rest).
    pub fn base_acceleration(&self) -> [f32; 6] {
        let dt = self.world.integration_parameters.dt;
        let (lin0, ang0) = self.base_vel_before;
        let lin =
            (self.world.bodies[self.base].linvel() - lin0) / dt + Vec3::new(0.0, 0.0, 9.80665);
        let ang = (self.base_angvel() - ang0) / dt;
        [ang.x, ang.y, ang.z, lin.x, lin.y, lin.z]
    }

    /// Motor angles as the encoders read them (true − noise), policy order.
    pub fn motor_positions(&self, out: &mut [f32]) {
        let mb = self.multibody();
        for (k, m) in self.motors.iter().enumerate() {
            out[k] = self.angle(mb, m.side, m.index) - self.encoder_noise[k];
        }
    }

    pub fn motor_velocities(&self, out: &mut [f32]) {
        let mb = self.multibody();
        for (k, m) in self.motors.iter().enumerate() {
            out[k] = self.velocity(mb, m.side, m.index);
        }
    }

    /// True motor angles (no encoder noise).
    pub fn true_motor_positions(&self) -> [f32; N] {
        let mb = self.multibody();
        std::array::from_fn(|k| self.angle(mb, self.motors[k].side, self.motors[k].index))
    }

    /// [L shin, L tarsus, R shin, R tarsus] angles as measured. The shin spring is rigid in
    /// this model, so the shins read 0 (minus encoder noise).
    pub fn passive_positions(&self, out: &mut [f32]) {
        let mb = self.multibody();
        for side in 0..2 {
            out[2 * side] = -self.encoder_noise[N + 2 * side];
            out[2 * side + 1] = self.angle(mb, side, 4) - self.encoder_noise[N + 2 * side + 1];
        }
    }

    pub fn passive_velocities(&self, out: &mut [f32]) {
        let mb = self.multibody();
        for side in 0..2 {
            out[2 * side] = 0.0;
            out[2 * side + 1] = self.velocity(mb, side, 4);
        }
    }

    /// True (knee, tarsus) angles of a leg, for the coupling check.
    pub fn knee_tarsus(&self, side: usize) -> (f32, f32) {
        let mb = self.multibody();
        (self.angle(mb, side, 3), self.angle(mb, side, 4))
    }

    /// Joint-side torques applied during the last substep (after delay and efficiency).
    pub fn applied_torques(&self) -> &[f32; N] {
        &self.applied
    }

    /// Sum of contact forces on a foot during the last substep (N, world frame).
    pub fn foot_force(&self, side: usize) -> Vec3 {
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
    pub fn foot_velocity(&self, side: usize) -> (Vec3, Vec3) {
        let rb = &self.world.bodies[self.foot_bodies[side]];
        (rb.linvel(), rb.angvel())
    }

    /// World pose of the foot site (position, orientation; the site frame is the world frame
    /// at the reset pose).
    pub fn foot_site(&self, side: usize) -> (Vec3, Quat) {
        let rb = &self.world.bodies[self.foot_bodies[side]];
        (rb.position().transform_point(self.foot_site_local[side]), *rb.rotation())
    }

    /// Whether a knee-walking collider (a heel spring) touches anything.
    pub fn knee_contact(&self) -> bool {
        self.knee_walk.iter().any(|&h| {
            self.world.narrow_phase.contact_pairs_with(h).any(|pair| pair.has_any_active_contact())
        })
    }

    /// Deepest penetration among the current contacts (m, ≥ 0).
    pub fn max_penetration(&self) -> f32 {
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

    /// The robot's bodies (pelvis, then each leg's links from the hip out, left leg first)
    /// with their collision shapes in body frames, for pictures.
    pub fn body_shapes(&self, desc: &Description) -> Vec<crate::envs::BodyShape> {
        use crate::envs::Primitive;
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

    /// The bodies' handles in [`CassieSim::body_shapes`] order.
    fn body_handles(&self) -> impl Iterator<Item = RigidBodyHandle> + '_ {
        std::iter::once(self.base).chain(self.joints.iter().flatten().map(|slot| slot.child))
    }

    /// Whether each body touches anything (the ground, or the other leg) now, in
    /// [`CassieSim::body_shapes`] order.
    pub fn body_contacts(&self, out: &mut Vec<bool>) {
        out.clear();
        for h in self.body_handles() {
            let touching = self.world.bodies[h].colliders().iter().any(|&c| {
                self.world.narrow_phase.contact_pairs_with(c).any(|p| p.has_any_active_contact())
            });
            out.push(touching);
        }
    }

    /// Each body's world pose, in [`CassieSim::body_shapes`] order.
    pub fn body_poses(&self, out: &mut Vec<crate::envs::BodyPose>) {
        out.clear();
        for h in self.body_handles() {
            let p = self.world.bodies[h].position();
            out.push(crate::envs::BodyPose {
                position: p.translation.to_array(),
                rotation: p.rotation.to_array(),
            });
        }
    }

    /// Every body's pose and velocity, flattened (for determinism and mirror tests).
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tilt_deg(q: Quat) -> f32 {
        let up = q * Vec3::Z;
        up.z.clamp(-1.0, 1.0).acos().to_degrees()
    }

    /// Constant PD at the neutral stance (the facts sheet's standing test). MuJoCo's Cassie
    /// sags and tips over: z 0.902 / 0.755 / 0.530 m at 0.2 / 0.6 / 1.0 s, lying at 0.167 m
    /// from 1.4 s. This model (measured 0.918 / 0.820 / 0.668, lying at 0.167) matches the
    /// first figure and the final pose; in between it sags less and tips about 0.1 s later,
    /// because its shin and heel springs are rigid (the facts sheet's rigid prototype did the
    /// same: 0.932 at 0.25 s, 0.671 at 1.0 s). The bounds below pin those numbers, at the
    /// lab's 2 kHz and at the walking preset's 500 Hz (measured 0.917 / 0.818 / 0.661, lying
    /// at 0.167: within 1 cm of 2 kHz at every 0.2 s sample).
    #[test]
    fn constant_pd_stance_sags_and_tips_over_like_mujoco() {
        let desc = Description::cassie();
        let mut curves = Vec::new();
        for dt in [0.0005f32, 0.002] {
            let mut sim = CassieSim::new(&desc, &Dynamics::default(), dt, 0.0);
            let targets = desc.neutral_stance();
            let mut z = Vec::new();
            for _ in 0..10 {
                sim.step(&targets, (0.2 / dt).round() as usize);
                z.push(sim.base_position().z);
            }
            let tilt = tilt_deg(sim.base_rotation());
            println!("dt {dt}: z at 0.2 s steps: {z:.3?}, tilt at 2 s {tilt:.0} deg");
            assert!((z[0] - 0.902).abs() < 0.06, "dt {dt}: z(0.2 s) = {}", z[0]);
            assert!((z[2] - 0.755).abs() < 0.1, "dt {dt}: z(0.6 s) = {}", z[2]);
            assert!((z[4] - 0.530).abs() < 0.16, "dt {dt}: z(1.0 s) = {}", z[4]);
            assert!((z[9] - 0.167).abs() < 0.02, "dt {dt}: z(2.0 s) = {}", z[9]);
            assert!(tilt > 60.0, "dt {dt}: lying down at 2 s: tilt {tilt}");
            curves.push(z);
        }
        for (a, b) in curves[0].iter().zip(&curves[1]) {
            assert!((a - b).abs() < 0.03, "500 Hz vs 2 kHz fall curves: {curves:.3?}");
        }
    }

    /// Random targets around the stance, as `gait bench env` drives the robot.
    fn random_targets(desc: &Description, rng: &mut impl rand::Rng) -> [f32; N] {
        let mut t = desc.neutral_stance();
        t.iter_mut().for_each(|x| *x += rng.gen_range(-1.0..1.0));
        t
    }

    /// The largest `|a - b|` over two equally long sequences.
    fn max_abs_diff<'a>(
        a: impl IntoIterator<Item = &'a f32>,
        b: impl IntoIterator<Item = &'a f32>,
    ) -> f32 {
        a.into_iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
    }

    /// The vendored rapier's patched multibody (vendor/rapier3d/GAIT_PATCH.md) against
    /// rapier's original dense code, on the states of a random-target run at both physics
    /// rates (falls and ground contacts included):
    /// - the body Jacobians (built on ancestor columns only) are bit-identical;
    /// - the composite-rigid-body mass matrix equals the sum of dense quadforms to f32
    ///   rounding, entry by entry relative to its diagonal;
    /// - the gyroscopic + Coriolis part (`acc − plain`, built by composites too) equals the
    ///   dense one. It is `∝ dt`, so it is compared at `dt = 1 s`, where it is of the order of
    ///   the inertia itself, and not lost in the rounding of the sum.
    #[test]
    fn the_patched_mass_matrices_match_the_dense_ones_on_random_states() {
        use rand::SeedableRng;
        let desc = Description::cassie();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let (mut checked, mut worst_m, mut worst_c) = (0, 0.0f32, 0.0f32);
        for dt in [0.0005f32, 0.002] {
            let mut sim = CassieSim::new(&desc, &Dynamics::default(), dt, 0.3);
            for step in 0..150 {
                sim.step(&random_targets(&desc, &mut rng), (0.02 / dt).round() as usize);
                if step % 5 != 0 {
                    continue;
                }
                let mb = sim.multibody();
                let jacobians = [false, true].map(|dense| mb.body_jacobians_by(dense));
                assert!(jacobians[0] == jacobians[1], "dt {dt}, step {step}: Jacobians differ");
                let [sparse, dense] =
                    [false, true].map(|dense| mb.mass_matrices(dt, &sim.world.bodies, dense));
                let n = dense.0.nrows();
                for r in 0..n {
                    for c in 0..n {
                        let scale = (dense.0[(r, r)] * dense.0[(c, c)]).sqrt();
                        let err = (sparse.0[(r, c)] - dense.0[(r, c)]).abs() / scale;
                        let acc_err = (sparse.1[(r, c)] - dense.1[(r, c)]).abs() / scale;
                        worst_m = worst_m.max(err).max(acc_err);
                    }
                }
                let [sparse, dense] =
                    [false, true].map(|dense| mb.mass_matrices(1.0, &sim.world.bodies, dense));
                let (cs, cd) = (&sparse.1 - &sparse.0, &dense.1 - &dense.0);
                let err = (&cs - &cd).amax() / cd.amax();
                assert!(cd.amax() > 0.1 * dense.0.amax(), "a real Coriolis term");
                worst_c = worst_c.max(err);
                checked += 1;
            }
        }
        println!("worst relative error: mass matrices {worst_m:e}, Coriolis part {worst_c:e}");
        assert!(worst_m < 1e-5, "mass matrices: {worst_m:e}");
        assert!(worst_c < 1e-4, "gyroscopic and Coriolis part: {worst_c:e}");
        assert_eq!(checked, 60);
    }

    /// The same random targets run with the patched multibody and with rapier's original
    /// code paths (`set_reference_paths`): after one substep the states agree to f32
    /// rounding, and after eight policy steps (80 substeps at 500 Hz, 320 at 2 kHz, ground
    /// contacts included) they are still within 1e-4.
    #[test]
    fn a_run_with_the_patched_multibody_matches_the_dense_one() {
        use rand::SeedableRng;
        let desc = Description::cassie();
        for (trial, dt) in [0.0005f32, 0.002, 0.002].into_iter().enumerate() {
            let substeps = (0.02 / dt).round() as usize;
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(trial as u64);
            let targets: Vec<[f32; N]> = (0..8).map(|_| random_targets(&desc, &mut rng)).collect();
            let [a, b] = [false, true].map(|dense| {
                let mut sim = CassieSim::new(&desc, &Dynamics::default(), dt, 0.0);
                let id = sim.multibody;
                let (mb, _) = sim.world.multibody_joints.get_mut(id).expect("robot");
                mb.set_reference_paths(dense);
                sim.step(&targets[0], 1);
                let first = sim.body_states();
                sim.step(&targets[0], substeps - 1);
                for t in &targets[1..] {
                    sim.step(t, substeps);
                }
                (sim, first)
            });
            let one = max_abs_diff(&a.1, &b.1);
            let end = max_abs_diff(&a.0.body_states(), &b.0.body_states());
            let motors = max_abs_diff(&a.0.true_motor_positions(), &b.0.true_motor_positions());
            println!("trial {trial}, dt {dt}: after one substep {one:e}, after 8 steps {end:e}");
            assert!(one < 1e-6, "trial {trial}, dt {dt}: one substep: {one:e}");
            assert!(end < 1e-4 && motors < 1e-4, "trial {trial}, dt {dt}: {end:e} {motors:e}");
            assert!(a.0.base_position().distance(Vec3::new(0.0, 0.0, 1.0)) > 1e-3, "it moved");
        }
    }

    #[test]
    fn the_torque_delay_is_a_time_at_any_physics_rate() {
        let d = Dynamics::default();
        assert_eq!(d.delay_substeps(0.0005), 6, "the lab's 6 cycles at 2 kHz");
        assert_eq!(d.delay_substeps(0.002), 2, "3 ms at 500 Hz");
        assert_eq!(d.delay_substeps(0.001), 3);
    }

    #[test]
    fn pd_holds_the_stance_of_a_robot_hanging_in_the_air() {
        // No contacts: with the pelvis pinned in the air the PD keeps the legs near their
        // targets, a sign and gain check of the explicit torques.
        let desc = Description::cassie();
        let mut sim = CassieSim::new(&desc, &Dynamics::default(), 0.0005, 0.0);
        let mut targets = desc.neutral_stance();
        targets[3] += 0.3; // left knee
        targets[8] += 0.3; // right knee
        for _ in 0..400 {
            let base = &mut sim.world.bodies[sim.base];
            base.set_linvel(Vec3::ZERO, false);
            base.set_angvel(Vec3::ZERO, false);
            base.set_translation(Vec3::new(0.0, 0.0, 2.0), false);
            sim.step(&targets, 1);
        }
        let q = sim.true_motor_positions();
        for k in 0..N {
            // Gravity on the shank pulls against kp; the error stays below 0.1 rad.
            assert!((q[k] - targets[k]).abs() < 0.1, "joint {k}: {} vs {}", q[k], targets[k]);
        }
    }
}
