//! Cassie the robot, whatever simulates it: its sizes and per-episode parameters (`dims`), gait's
//! lumped description (`description`) and the lab's motor model (`motor`).

pub(crate) mod description;
pub(crate) mod dims;
pub(crate) mod motor;

pub(crate) use dims::{Dynamics, LEG_LINKS, N, PASSIVE};
