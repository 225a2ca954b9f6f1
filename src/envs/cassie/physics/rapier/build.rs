//! Building the world of one Cassie from its description: colliders, mass properties, the
//! multibody with its joints, motors and closed-loop couplings, the ground.

use rapier3d::glamx::{EulerRot, Mat3, Quat, Vec3};
use rapier3d::prelude::*;

use super::*;
use crate::envs::cassie::robot::description::{
    Collider as ColliderDesc, ColliderRole, ContactGroup, Description, Drive, Joint as JointDesc,
    Shape, Side,
};
use crate::envs::cassie::robot::motor::Drive as MotorDrive;
use crate::envs::terrain::{self, Heightfield};

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
        Self::build(Arc::new(desc.clone()), dynamics, dt, yaw, None)
    }

    /// [`CassieSim::new`] on a shared description (a reset rebuilds the world from it).
    pub(super) fn build(
        desc: Arc<Description>,
        dynamics: &Dynamics,
        dt: f32,
        yaw: f32,
        terrain: Option<Arc<Heightfield>>,
    ) -> Self {
        let mut world = empty_world(dt, dynamics, terrain.as_deref());
        let heading = Quat::from_rotation_z(yaw);
        let place = |com: Vec3| Pose::from_parts(heading * com, heading);
        let body = |world: &mut PhysicsWorld, com, mass, inertia, k: usize| {
            let props =
                mass_properties(mass, inertia, dynamics.mass_scale[k], dynamics.com_offset[k]);
            add_body(world, place(com), props)
        };
        let attach = |world: &mut PhysicsWorld, cs: &[ColliderDesc], com: Vec3, h| {
            attach_colliders(world, cs, com, h, dynamics.friction)
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
                let handle = join(&mut world, (parent, parent_com), (child, com), &j);
                joint_handles.push(handle);
                slots.push((handle, v(j.axis), j.reset, parent, child));
                (parent, parent_com) = (child, com);
            }
            foot_bodies.push(parent);
            foot_site_local.push(v(desc.foot_site[side]) - parent_com);
        }

        let multibody = joint_handles[0];
        let joints = joint_slots(&world, slots);
        joint_dynamics(&mut world, multibody, &joints, &desc, dynamics);

        let motors: Vec<MotorSlot> =
            desc.motors().map(|(side, index, ..)| MotorSlot { side, index }).collect();
        let drive = MotorDrive::new(desc.motor_models(), dynamics, dt);
        Self {
            dt,
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
            drive,
            push: Vec3::ZERO,
            base_vel_before: (Vec3::ZERO, Vec3::ZERO),
            substeps: 0,
            fresh_kinematics: false,
            desc,
            terrain,
        }
    }
}

/// Joins `child` to `parent` (each with its COM, where the body's frame sits) by the
/// description's revolute joint `j`, its range about the reset angle; the joint's handle.
fn join(
    world: &mut PhysicsWorld,
    (parent, parent_com): (RigidBodyHandle, Vec3),
    (child, com): (RigidBodyHandle, Vec3),
    j: &JointDesc,
) -> MultibodyJointHandle {
    let anchor = v(j.anchor);
    let mut builder = RevoluteJointBuilder::new(v(j.axis))
        .local_anchor1(anchor - parent_com)
        .local_anchor2(anchor - com)
        .contacts_enabled(false);
    if let Some([lo, hi]) = j.range {
        builder = builder.limits([lo - j.reset, hi - j.reset]);
    }
    world
        .multibody_joints
        .insert(parent, child, builder, true)
        .expect("the Cassie description is a tree")
}

/// A world at timestep `dt` with gravity and the floor (tilted by `dynamics.slope`, with its
/// friction), the terrain's heightfield on it if there is one, and no robot yet.
fn empty_world(dt: f32, dynamics: &Dynamics, terrain: Option<&Heightfield>) -> PhysicsWorld {
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
    let groups = InteractionGroups::new(GROUND, LEFT | RIGHT | BODY, InteractionTestMode::And);
    let floor_top = terrain.map_or(0.0, |t| terrain::floor_under(t.range()[0]));
    let floor = ColliderBuilder::cuboid(50.0, 50.0, 0.5)
        .position(Pose::from_parts(slope * Vec3::new(0.0, 0.0, floor_top - 0.5), slope))
        .friction(dynamics.friction)
        .collision_groups(groups)
        .build();
    world.colliders.insert_with_parent(floor, ground, &mut world.bodies);
    if let Some(field) = terrain {
        let ground_shape = heightfield_collider(field)
            .friction(dynamics.friction)
            .collision_groups(groups)
            .build();
        world.colliders.insert_with_parent(ground_shape, ground, &mut world.bodies);
    }
    world
}

/// `field` as parry's heightfield, which lays its grid in its local x-z plane with heights
/// along local y: turned +90° about x (local y to world z, local z to world −y), so its rows
/// run along −y, and filled so. Parry's default split of a cell (from its point (row + 1,
/// col) to (row, col + 1)) is then the diagonal from `(i, j)` to `(i + 1, j + 1)` of
/// [`Heightfield::height_at`].
fn heightfield_collider(field: &Heightfield) -> ColliderBuilder {
    let (nx, ny) = (field.nx, field.ny);
    // Column-major: entry (row, col) at row + col · nrows.
    let mut data = Vec::with_capacity(nx * ny);
    for col in 0..nx {
        for row in 0..ny {
            data.push(field.at(col, ny - 1 - row));
        }
    }
    let [ex, ey] = field.extent();
    let [cx, cy] = field.centre();
    let turn = Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
    ColliderBuilder::heightfield(Array2::new(ny, nx, data), Vec3::new(ex, 1.0, ey))
        .position(Pose::from_parts(Vec3::new(cx, cy, 0.0), turn))
}

/// A dynamic body at `pose` with `props`, never asleep.
fn add_body(world: &mut PhysicsWorld, pose: Pose, props: MassProperties) -> RigidBodyHandle {
    let rb = RigidBodyBuilder::dynamic()
        .pose(pose)
        .additional_mass_properties(props)
        .can_sleep(false)
        .build();
    world.bodies.insert(rb)
}

/// The colliders `cs` of a body whose COM is `com`, attached to `h`; each with its role.
fn attach_colliders(
    world: &mut PhysicsWorld,
    cs: &[ColliderDesc],
    com: Vec3,
    h: RigidBodyHandle,
    friction: f32,
) -> Vec<(ColliderRole, ColliderHandle)> {
    let mut handles = Vec::new();
    for c in cs {
        let collider = build_collider(c, com, friction);
        let PhysicsWorld { colliders, bodies, .. } = world;
        handles.push((c.role, colliders.insert_with_parent(collider, h, bodies)));
    }
    handles
}

/// Each inserted joint's multibody link and degree of freedom, per leg.
fn joint_slots(
    world: &PhysicsWorld,
    slots: Vec<(MultibodyJointHandle, Vec3, f32, RigidBodyHandle, RigidBodyHandle)>,
) -> [[JointSlot; LEG_LINKS]; 2] {
    let joints: Vec<JointSlot> = slots
        .into_iter()
        .map(|(handle, axis, reset, parent, child)| {
            let (mb, link_id) = world.multibody_joints.get(handle).expect("just inserted");
            let dof = mb.link(link_id).expect("link exists").assembly_id();
            JointSlot { link_id, dof, axis, reset, parent, child }
        })
        .collect();
    [
        joints[..LEG_LINKS].try_into().expect("six links per leg"),
        joints[LEG_LINKS..].try_into().expect("six links per leg"),
    ]
}

/// The joints' armature and damping (scaled per episode), and the achilles couplings.
fn joint_dynamics(
    world: &mut PhysicsWorld,
    multibody: MultibodyJointHandle,
    joints: &[[JointSlot; LEG_LINKS]; 2],
    desc: &Description,
    dynamics: &Dynamics,
) {
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
}
