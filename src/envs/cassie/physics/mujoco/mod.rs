//! `--sim mujoco`: Cassie on the lab's own MuJoCo model (`model.rs`), through mujoco-rs 7.0
//! (MuJoCo 3.17.0, `libmujoco.so` from PyPI's wheel, linked dynamically).
//!
//! The same PD and motor code as the rapier backend ([`Drive`]) runs each substep on the lab's
//! joint readings; its torques go to the lab's `<motor>` actuators as `ctrl = τ / gear`, and kd
//! is the motor joints' `dof_damping`, as the lab's `set_PD` writes it. What differs from gait's
//! rapier model is the lab's physics: the shin and heel springs (2500 / 1250 N·m/rad) deflect
//! and read as such on the shin inputs, the achilles and plantar rods are closed loops (equality
//! constraints) rather than a joint coupling, and contacts are MuJoCo's soft ones.
//!
//! Dynamics randomization maps gait's per-link factors onto the lab bodies each link lumps
//! (`model::lumped_bodies`): mass and inertia scaled, COM offset in the body frame, the
//! link's joint damping scaled, the floor pairs' sliding friction, the floor plane tilted.
//! Each env owns its model copy (a reset rewrites those parameters from the nominal ones), so
//! nothing is shared between sampler threads.

mod model;

use std::sync::Arc;

use mujoco_rs::prelude::*;
use rapier3d::glamx::{Quat, Vec3};

use super::{Physics, SimKind};
use crate::envs::cassie::robot::motor::{Drive, Motor};
use crate::envs::cassie::robot::N;
use crate::envs::cassie::robot::{Dynamics, PASSIVE};
use crate::envs::terrain::Heightfield;
use crate::envs::{BodyPose, BodyShape, Primitive};
pub use model::patched_xml;

/// Routes MuJoCo's messages through gait, once, at the start of the program (before any
/// thread that steps a simulation, as MuJoCo requires): warnings and errors to stderr as
/// `MuJoCo: ...`, except MuJoCo's reset of a non-finite state, which gait counts and reports
/// itself ([`Physics::diverged`]: `Train/Physics Resets`, `gait eval`'s "cut"). MuJoCo's own
/// handler prints every such reset and appends it to `MUJOCO_LOG.TXT` in the working
/// directory; under training's perturbations that was hundreds of lines per run.
pub fn route_messages() {
    // SAFETY: called first thing in `main`, before any other thread exists.
    unsafe { set_log_handler(on_message) };
}

fn on_message(message: &MjLogMessage) {
    let subject = message.subject();
    let level = message.level();
    if matches!(level, MjtLogLevel::mjLOG_DEBUG | MjtLogLevel::mjLOG_INFO)
        || subject.starts_with("Nan, Inf or huge value in")
    {
        return;
    }
    eprintln!("MuJoCo: {subject}");
}

/// Joint addresses, in `qpos` and `qvel`.
#[derive(Debug, Clone, Copy)]
struct Joint {
    qpos: usize,
    dof: usize,
}

/// The nominal values a reset rewrites from (dynamics randomization changes them in place).
#[derive(Debug, Clone)]
struct Nominal {
    body_mass: Vec<f64>,
    body_inertia: Vec<[f64; 3]>,
    body_ipos: Vec<[f64; 3]>,
    dof_damping: Vec<f64>,
    jnt_stiffness: Vec<f64>,
    pair_friction: Vec<[f64; 5]>,
    floor_quat: [f64; 4],
    floor_pos: [f64; 3],
}

impl Nominal {
    /// `m`'s own parameters, with its floor geom `floor`.
    fn of(m: &MjModel, floor: usize) -> Self {
        Self {
            body_mass: m.body_mass().to_vec(),
            body_inertia: m.body_inertia().to_vec(),
            body_ipos: m.body_ipos().to_vec(),
            dof_damping: m.dof_damping().to_vec(),
            jnt_stiffness: m.jnt_stiffness().to_vec(),
            pair_friction: m.pair_friction().to_vec(),
            floor_quat: m.geom_quat()[floor],
            floor_pos: m.geom_pos()[floor],
        }
    }
}

/// The bodies with a geom (those drawn in pictures), each with its geoms.
fn drawn_bodies(m: &MjModel) -> Vec<(usize, Vec<usize>)> {
    (1..m.ffi().nbody as usize)
        .filter_map(|b| {
            let geoms: Vec<usize> =
                (0..m.ffi().ngeom as usize).filter(|&g| m.geom_bodyid()[g] as usize == b).collect();
            (!geoms.is_empty()).then_some((b, geoms))
        })
        .collect()
}

/// One simulated Cassie on the lab's MuJoCo model.
pub struct MujocoCassie {
    data: MjData<Box<MjModel>>,
    nominal: Nominal,
    dt: f64,
    motors: [Joint; N],
    /// Motor gears (the actuators' `gear`), policy order.
    gear: [f64; N],
    passive: [Joint; PASSIVE],
    drive: Drive,
    /// gait's lumped bodies (pelvis, then each leg's links): the lab bodies of each, and the
    /// dof whose damping the link's factor scales (none for the pelvis).
    lumps: Vec<(Vec<usize>, Option<usize>)>,
    /// Motor kd per motor dof (the lab writes kd into `dof_damping`).
    kd: [f64; N],
    /// The shin and heel-spring joints, whose stiffness `spring_scale` scales.
    springs: Vec<usize>,
    pelvis: usize,
    floor: usize,
    feet: [usize; 2],
    foot_bodies: [usize; 2],
    foot_sites: [usize; 2],
    /// Each foot body's world rotation at the unyawed reset pose (the foot rotation reads
    /// identity there, as on rapier).
    foot_reset_rotation: [Quat; 2],
    heel_springs: [usize; 2],
    /// Bodies drawn in pictures (those with a geom), and each one's geoms.
    drawn: Vec<(usize, Vec<usize>)>,
    base_vel_before: (Vec3, Vec3),
    substeps: u64,
    /// A substep since the reset ended in MuJoCo's bad-state reset ([`Physics::diverged`]).
    diverged: bool,
    /// The ground on the floor from the next reset on ([`Physics::set_terrain`]).
    terrain: Option<Arc<Heightfield>>,
    /// The terrain's geom and heightfield, in a model compiled with one.
    terrain_ids: Option<(usize, usize)>,
}

fn v3(a: &[f64]) -> Vec3 {
    Vec3::new(a[0] as f32, a[1] as f32, a[2] as f32)
}

/// A MuJoCo `[w, x, y, z]` quaternion.
fn quat(q: &[f64]) -> Quat {
    Quat::from_xyzw(q[1] as f32, q[2] as f32, q[3] as f32, q[0] as f32)
}

impl MujocoCassie {
    /// The lab's model at physics step `dt`, in the reset pose (nominal dynamics, heading 0).
    pub fn new(dt: f64) -> Self {
        Self::from_xml(dt, &patched_xml())
    }

    /// [`Self::new`] from `xml` (the lab's model, with or without a terrain).
    fn from_xml(dt: f64, xml: &str) -> Self {
        let mut model = MjModel::from_xml_string(xml)
            .unwrap_or_else(|e| panic!("MuJoCo refused the lab's cassie_fast.xml: {e}"));
        model.opt_mut().timestep = dt;
        let m = &model;
        let joint = |name: &str| {
            let j = model::id(m, MjtObjBase::mjOBJ_JOINT, name);
            Joint { qpos: m.jnt_qposadr()[j] as usize, dof: m.jnt_dofadr()[j] as usize }
        };
        let motors = model::MOTOR_JOINTS.map(joint);
        let passive = model::PASSIVE_JOINTS.map(joint);
        let gear = model::MOTOR_JOINTS.map(|name| {
            let a = model::id(m, MjtObjBase::mjOBJ_ACTUATOR, name);
            m.actuator_gear()[a][0]
        });
        let body = |name: &str| model::id(m, MjtObjBase::mjOBJ_BODY, name);
        let geom = |name: &str| model::id(m, MjtObjBase::mjOBJ_GEOM, name);
        let mut lumps = vec![(vec![body("cassie-pelvis")], None)];
        for side in 0..2 {
            for (bodies, damped) in model::lumped_bodies(side) {
                lumps.push((bodies.iter().map(|b| body(b)).collect(), Some(joint(&damped).dof)));
            }
        }
        let floor = geom("floor");
        let terrain = m.name_to_id(MjtObjBase::mjOBJ_GEOM, "terrain").map(|g| {
            let h = model::id(m, MjtObjBase::mjOBJ_HFIELD, "terrain");
            (g, h)
        });
        let drawn = drawn_bodies(m);
        let nominal = Nominal::of(m, floor);
        let motor_models =
            crate::envs::cassie::robot::description::Description::cassie().motor_models();
        let kd = motor_models.map(|mm| mm.kd as f64);
        let feet = [geom("left-foot"), geom("right-foot")];
        let foot_bodies = [body("left-foot"), body("right-foot")];
        let foot_sites = [
            model::id(m, MjtObjBase::mjOBJ_SITE, "left-foot-mid"),
            model::id(m, MjtObjBase::mjOBJ_SITE, "right-foot-mid"),
        ];
        let heel_springs = [geom("left-heel-spring"), geom("right-heel-spring")];
        let springs = ["left-shin", "left-heel-spring", "right-shin", "right-heel-spring"]
            .map(|j| model::id(m, MjtObjBase::mjOBJ_JOINT, j))
            .to_vec();
        let pelvis = body("cassie-pelvis");
        let mut sim = Self {
            data: MjData::new(Box::new(model)),
            nominal,
            dt,
            motors,
            gear,
            passive,
            drive: Drive::new(motor_models, &Dynamics::default(), dt as f32),
            lumps,
            kd,
            springs,
            pelvis,
            floor,
            feet,
            foot_bodies,
            foot_sites,
            foot_reset_rotation: [Quat::IDENTITY; 2],
            heel_springs,
            drawn,
            base_vel_before: (Vec3::ZERO, Vec3::ZERO),
            substeps: 0,
            diverged: false,
            terrain: None,
            terrain_ids: terrain,
        };
        sim.reset(&Dynamics::default(), 0.0);
        sim.foot_reset_rotation = foot_bodies.map(|b| quat(&sim.data.xquat()[b]));
        sim
    }

    /// Writes the episode's physical parameters into the model, from the nominal ones.
    fn apply_dynamics(&mut self, d: &Dynamics) {
        let nominal = &self.nominal;
        // SAFETY: only numeric parameters change (masses, inertias, COMs, damping, friction,
        // the floor's orientation); no size, address or structure of the model does.
        let model = unsafe { self.data.model_mut() };
        for (k, (bodies, damped)) in self.lumps.iter().enumerate() {
            let scale = d.mass_scale[k] as f64;
            for &b in bodies {
                model.body_mass_mut()[b] = nominal.body_mass[b] * scale;
                model.body_inertia_mut()[b] = nominal.body_inertia[b].map(|i| i * scale);
                model.body_ipos_mut()[b] =
                    std::array::from_fn(|i| nominal.body_ipos[b][i] + d.com_offset[k][i] as f64);
            }
            if let Some(dof) = *damped {
                let scale = d.damping_scale[k - 1] as f64;
                let motor = self.motors.iter().position(|j| j.dof == dof);
                let base = match motor {
                    Some(i) => self.kd[i],
                    None => nominal.dof_damping[dof],
                };
                model.dof_damping_mut()[dof] = base * scale;
            }
        }
        for &j in &self.springs {
            model.jnt_stiffness_mut()[j] = nominal.jnt_stiffness[j] * d.spring_scale as f64;
        }
        for (p, nominal) in nominal.pair_friction.iter().enumerate() {
            let mut f = *nominal;
            f[0] *= d.friction as f64;
            f[1] *= d.friction as f64;
            model.pair_friction_mut()[p] = f;
        }
        let tilt = rapier3d::glamx::DQuat::from_euler(
            rapier3d::glamx::EulerRot::XYZ,
            d.slope[0] as f64,
            d.slope[1] as f64,
            0.0,
        );
        let n = nominal.floor_quat;
        let floor = tilt * rapier3d::glamx::DQuat::from_xyzw(n[1], n[2], n[3], n[0]);
        model.geom_quat_mut()[self.floor] = [floor.w, floor.x, floor.y, floor.z];
        let mut floor_pos = nominal.floor_pos;
        if let Some((geom, hfield)) = self.terrain_ids {
            // The terrain's heights as the heightfield's data in [0, 1] over TERRAIN_RANGE,
            // and the floor under them; without a terrain, the geom far under the floor at 0
            // (as in a model compiled without one: which model a worker holds depends on the
            // episodes it ran, so a flat episode must not).
            let (pos, floor) = match &self.terrain {
                Some(field) => {
                    let adr = model.hfield_adr()[hfield] as usize;
                    let n = field.heights.len();
                    let data = &mut model.hfield_data_mut()[adr..adr + n];
                    for (d, h) in data.iter_mut().zip(&field.heights) {
                        *d = ((*h as f64 + model::TERRAIN_RANGE / 2.0) / model::TERRAIN_RANGE)
                            .clamp(0.0, 1.0) as f32;
                    }
                    let [cx, cy] = field.centre();
                    let floor = crate::envs::terrain::floor_under(field.range()[0]);
                    ([cx as f64, cy as f64, -model::TERRAIN_RANGE / 2.0], floor as f64)
                }
                None => ([0.0, 0.0, -100.0], 0.0),
            };
            model.geom_pos_mut()[geom] = pos;
            floor_pos[2] += floor;
        }
        model.geom_pos_mut()[self.floor] = floor_pos;
    }

    /// How many times MuJoCo found a bad qpos, qvel or qacc (each time it resets the state).
    fn bad_states(&self) -> i64 {
        let w = self.data.warning();
        [MjtWarning::mjWARN_BADQPOS, MjtWarning::mjWARN_BADQVEL, MjtWarning::mjWARN_BADQACC]
            .iter()
            .map(|&k| w[k as usize].number as i64)
            .sum()
    }

    /// Tests only: the ground's height at world `(x, y)`, by MuJoCo's own ray down onto the
    /// static geoms (floor and terrain).
    #[cfg(test)]
    pub fn ground_height(&mut self, x: f64, y: f64) -> f64 {
        let (hit, distance) =
            self.data.ray(&[x, y, 5.0], &[0.0, 0.0, -1.0], None, true, Some(self.pelvis), None);
        assert!(hit.is_some(), "a ray down at ({x}, {y}) meets the ground");
        5.0 - distance
    }

    fn contact_involves(&self, geom: usize) -> bool {
        self.data.contact().iter().any(|c| c.geom[0] as usize == geom || c.geom[1] as usize == geom)
    }
}

impl Physics for MujocoCassie {
    fn kind(&self) -> SimKind {
        SimKind::Mujoco
    }

    fn reset(&mut self, dynamics: &Dynamics, heading: f32) {
        self.apply_dynamics(dynamics);
        // SAFETY: a numeric option; nothing of the model's structure changes.
        unsafe { self.data.model_mut() }.opt_mut().timestep = self.dt;
        self.data.reset();
        let h = heading as f64 / 2.0;
        let mut qpos = model::RESET_QPOS;
        qpos[3..7].copy_from_slice(&[h.cos(), 0.0, 0.0, h.sin()]);
        self.data.qpos_mut().copy_from_slice(&qpos);
        self.data.forward();
        let motors = *self.drive.motors();
        self.drive = Drive::new(motors, dynamics, self.dt as f32);
        self.base_vel_before = (Vec3::ZERO, Vec3::ZERO);
        self.substeps = 0;
        self.diverged = false;
    }

    fn step(&mut self, targets: &[f32; N], substeps: usize) {
        // MuJoCo's bad-state counters move only when it resets the state, which ends the step.
        let bad_states = self.bad_states();
        for _ in 0..substeps {
            let (qpos, qvel) = (self.data.qpos(), self.data.qvel());
            let q: [f32; N] = std::array::from_fn(|k| qpos[self.motors[k].qpos] as f32);
            let qd: [f32; N] = std::array::from_fn(|k| qvel[self.motors[k].dof] as f32);
            let applied = *self.drive.substep(targets, &q, &qd);
            for ((ctrl, tau), gear) in self.data.ctrl_mut().iter_mut().zip(applied).zip(self.gear) {
                *ctrl = tau as f64 / gear;
            }
            self.base_vel_before = (self.base_linvel(), self.base_angvel());
            self.data.step();
            self.substeps += 1;
            if self.bad_states() != bad_states {
                // MuJoCo has reset the model to `qpos0`: nothing after this is the robot's.
                self.diverged = true;
                return;
            }
        }
    }

    fn timestep(&self) -> f64 {
        self.dt
    }

    fn set_timestep(&mut self, dt: f64) {
        self.dt = dt;
    }

    fn diverged(&self) -> bool {
        self.diverged
    }

    fn set_motors(&mut self, motors: [Motor; N]) {
        self.kd = motors.map(|m| m.kd as f64);
        self.drive = Drive::new(motors, &Dynamics::default(), self.dt as f32);
    }

    /// A model compiled without a heightfield of the terrain's size is compiled again with
    /// one (once; its motors kept).
    fn set_terrain(&mut self, terrain: Option<Arc<Heightfield>>) {
        if let Some(field) = &terrain {
            let fits = self.terrain_ids.is_some_and(|(_, h)| {
                let m = self.data.model();
                let size = m.hfield_size()[h];
                let [ex, ey] = field.extent();
                (m.hfield_ncol()[h] as usize, m.hfield_nrow()[h] as usize) == (field.nx, field.ny)
                    && (size[0], size[1]) == (ex as f64 / 2.0, ey as f64 / 2.0)
            });
            if !fits {
                let [ex, ey] = field.extent();
                let half = [ex as f64 / 2.0, ey as f64 / 2.0];
                let motors = *self.drive.motors();
                *self = Self::from_xml(self.dt, &model::terrain_xml(field.nx, field.ny, half));
                self.set_motors(motors);
            }
        }
        self.terrain = terrain;
    }

    fn set_push(&mut self, force: Vec3) {
        let f = [force.x as f64, force.y as f64, force.z as f64, 0.0, 0.0, 0.0];
        self.data.xfrc_applied_mut()[self.pelvis] = f;
    }

    fn time(&self) -> f64 {
        self.substeps as f64 * self.dt
    }

    fn base_position(&self) -> Vec3 {
        v3(&self.data.qpos()[0..3])
    }

    fn base_rotation(&self) -> Quat {
        quat(&self.data.qpos()[3..7])
    }

    fn base_linvel(&self) -> Vec3 {
        v3(&self.data.qvel()[0..3])
    }

    /// The ball joint's `qvel[3:6]` is in the pelvis frame; the seam's is the world's.
    fn base_angvel(&self) -> Vec3 {
        self.base_rotation() * v3(&self.data.qvel()[3..6])
    }

    fn base_acceleration(&self) -> [f32; 6] {
        let (lin0, ang0) = self.base_vel_before;
        let dt = self.dt as f32;
        let lin = (self.base_linvel() - lin0) / dt + Vec3::new(0.0, 0.0, 9.80665);
        let ang = (self.base_angvel() - ang0) / dt;
        [ang.x, ang.y, ang.z, lin.x, lin.y, lin.z]
    }

    fn motor_positions(&self, out: &mut [f32]) {
        let q = self.data.qpos();
        for (k, j) in self.motors.iter().enumerate() {
            out[k] = self.drive.measured_motor(k, q[j.qpos] as f32);
        }
    }

    fn motor_velocities(&self, out: &mut [f32]) {
        let qd = self.data.qvel();
        for (k, j) in self.motors.iter().enumerate() {
            out[k] = qd[j.dof] as f32;
        }
    }

    fn passive_positions(&self, out: &mut [f32]) {
        let q = self.data.qpos();
        for (k, j) in self.passive.iter().enumerate() {
            out[k] = self.drive.measured_passive(k, q[j.qpos] as f32);
        }
    }

    fn passive_velocities(&self, out: &mut [f32]) {
        let qd = self.data.qvel();
        for (k, j) in self.passive.iter().enumerate() {
            out[k] = qd[j.dof] as f32;
        }
    }

    fn applied_torques(&self) -> &[f32; N] {
        self.drive.applied()
    }

    /// `mj_contactForce` of every contact on the foot geom, rotated to the world frame; the
    /// contact frame's normal points from geom 1 to geom 2, and the force acts on geom 2.
    fn foot_force(&self, side: usize) -> Vec3 {
        let foot = self.feet[side] as i32;
        let mut total = Vec3::ZERO;
        for (i, c) in self.data.contact().iter().enumerate() {
            let sign = if c.geom[1] == foot {
                1.0
            } else if c.geom[0] == foot {
                -1.0
            } else {
                continue;
            };
            let f = self.data.contact_force(i);
            let r = &c.frame; // rows: normal, tangent 1, tangent 2 (world frame)
            let world: [f64; 3] =
                std::array::from_fn(|k| r[k] * f[0] + r[3 + k] * f[1] + r[6 + k] * f[2]);
            total += v3(&world) * sign;
        }
        total
    }

    fn foot_velocity(&self, side: usize) -> (Vec3, Vec3) {
        let v = self.data.object_velocity(MjtObjBase::mjOBJ_BODY, self.foot_bodies[side], false);
        (v3(&v[3..6]), v3(&v[0..3]))
    }

    fn foot_site(&self, side: usize) -> (Vec3, Quat) {
        let p = v3(&self.data.site_xpos()[self.foot_sites[side]]);
        let r = quat(&self.data.xquat()[self.foot_bodies[side]]);
        (p, r * self.foot_reset_rotation[side].inverse())
    }

    fn knee_contact(&self) -> bool {
        self.heel_springs.iter().any(|&g| self.contact_involves(g))
    }

    fn body_shapes(&self) -> Vec<BodyShape> {
        let m = self.data.model();
        self.drawn
            .iter()
            .map(|(b, geoms)| BodyShape {
                name: m.id_to_name(MjtObjBase::mjOBJ_BODY, *b).unwrap_or("body").to_string(),
                primitives: geoms.iter().filter_map(|&g| primitive(m, g)).collect(),
            })
            .collect()
    }

    /// The pelvis from its free joint's `qpos` (the state now); the other bodies from MuJoCo's
    /// kinematics, which `mj_step` computes before it integrates: one substep (0.5 ms) behind,
    /// invisible in a picture.
    fn body_poses(&self, out: &mut Vec<BodyPose>) {
        out.clear();
        for (b, _) in &self.drawn {
            let (position, rotation) = if *b == self.pelvis {
                (self.base_position(), self.base_rotation())
            } else {
                (v3(&self.data.xpos()[*b]), quat(&self.data.xquat()[*b]))
            };
            out.push(BodyPose { position: position.to_array(), rotation: rotation.to_array() });
        }
    }

    fn body_contacts(&self, out: &mut Vec<bool>) {
        out.clear();
        for (_, geoms) in &self.drawn {
            out.push(geoms.iter().any(|&g| self.contact_involves(g)));
        }
    }

    /// The model's true (knee, tarsus) angles of a leg, for tests.
    fn knee_tarsus(&self, side: usize) -> (f32, f32) {
        let q = self.data.qpos();
        let knee = self.motors[5 * side + 3].qpos;
        let tarsus = self.passive[2 * side + 1].qpos;
        (q[knee] as f32, q[tarsus] as f32)
    }

    /// Deepest penetration among the current contacts (m, ≥ 0).
    fn max_penetration(&self) -> f32 {
        self.data.contact().iter().map(|c| (-c.dist) as f32).fold(0.0, f32::max)
    }

    fn spring_deflections(&self, side: usize) -> Option<[f32; 2]> {
        let q = self.data.qpos();
        let shin = self.passive[2 * side].qpos;
        // The heel spring follows the tarsus in the lab's qpos layout.
        Some([q[shin] as f32, q[self.passive[2 * side + 1].qpos + 1] as f32])
    }

    fn true_motor_positions(&self) -> [f32; N] {
        let q = self.data.qpos();
        std::array::from_fn(|k| q[self.motors[k].qpos] as f32)
    }
}

/// A geom as a drawing primitive in its body's frame.
fn primitive(m: &MjModel, g: usize) -> Option<Primitive> {
    let pos = m.geom_pos()[g];
    let q = m.geom_quat()[g];
    let rot = rapier3d::glamx::DQuat::from_xyzw(q[1], q[2], q[3], q[0]);
    let size = m.geom_size()[g];
    let f = |v: rapier3d::glamx::DVec3| v.as_vec3().to_array();
    let center = rapier3d::glamx::DVec3::from_array(pos);
    match m.geom_type()[g] {
        MjtGeomBase::mjGEOM_SPHERE => {
            Some(Primitive::Sphere { center: f(center), radius: size[0] as f32 })
        }
        MjtGeomBase::mjGEOM_CAPSULE => {
            let axis = rot * rapier3d::glamx::DVec3::Z * size[1];
            Some(Primitive::Capsule {
                a: f(center - axis),
                b: f(center + axis),
                radius: size[0] as f32,
            })
        }
        MjtGeomBase::mjGEOM_BOX => Some(Primitive::Cuboid {
            center: f(center),
            half: size.map(|s| s as f32),
            axes: [
                f(rot * rapier3d::glamx::DVec3::X),
                f(rot * rapier3d::glamx::DVec3::Y),
                f(rot * rapier3d::glamx::DVec3::Z),
            ],
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
