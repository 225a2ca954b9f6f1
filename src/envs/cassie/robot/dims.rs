//! Cassie's sizes and the physical parameters of one episode: what the robot's description,
//! its motor model, every physics backend and the task agree on.

/// Number of actuated joints.
pub const N: usize = 10;

/// Links per leg in gait's description (hip roll, hip yaw, thigh, shin, tarsus, foot).
pub const LEG_LINKS: usize = 6;
/// Passive joints observed: [L shin, L tarsus, R shin, R tarsus].
pub const PASSIVE: usize = 4;

/// The physical parameters of one episode. [`Dynamics::default`] is the nominal robot;
/// dynamics randomization draws other values. Per-body entries follow gait's lumped bodies
/// (pelvis, then each leg's [`LEG_LINKS`] links); the MuJoCo backend applies each to the lab
/// bodies that link lumps together.
#[derive(Debug, Clone, PartialEq)]
pub struct Dynamics {
    /// Mass (and inertia) factor per body: pelvis, left links, right links.
    pub mass_scale: [f32; 1 + 2 * LEG_LINKS],
    /// COM offset per body (m), in the body's frame.
    pub com_offset: [[f32; 3]; 1 + 2 * LEG_LINKS],
    /// Damping factor per leg joint (left chain, then right), motor kd included.
    pub damping_scale: [f32; 2 * LEG_LINKS],
    /// Coulomb friction of every contact, as a factor of the model's own: rapier's coefficient
    /// (nominal 1.0) itself, a factor on the sliding friction of MuJoCo's floor pairs.
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
    /// Stiffness factor of the shin and heel springs (models that have them: MuJoCo's).
    pub spring_scale: f32,
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
            spring_scale: 1.0,
        }
    }
}

impl Dynamics {
    /// The torque delay in whole substeps of `dt` (rounded): 6 at 2 kHz, 2 at 500 Hz.
    pub fn delay_substeps(&self, dt: f32) -> usize {
        (self.delay / dt).round().max(0.0) as usize
    }
}
