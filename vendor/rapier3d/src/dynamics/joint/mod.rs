pub use self::fixed_joint::*;
pub use self::generic_joint::*;
pub use self::impulse_joint::*;
pub use self::motor_model::MotorModel;
pub use self::multibody_joint::*;
pub use self::pin_slot_joint::*;
pub use self::prismatic_joint::*;
pub use self::revolute_joint::*;
pub use self::rope_joint::*;
pub use self::spring_joint::*;

#[cfg(feature = "dim3")]
pub use self::spherical_joint::*;

mod fixed_joint;
mod generic_joint;
mod impulse_joint;
mod motor_model;
mod multibody_joint;
mod pin_slot_joint;
mod prismatic_joint;
mod revolute_joint;
mod rope_joint;

#[cfg(feature = "dim3")]
mod spherical_joint;
mod spring_joint;
