//! Cassie (issue 3), being built bottom-up. Done so far, each complete and tested: the
//! scipy-exact von Mises CDF, the periodic gait clock, the command sampler and the mirror
//! lists of the reference's LocomotionClockEnv. The rapier3d model, PD/motor model, observation, rewards and the `cassie`
//! registry entry come next; until then `--env cassie` is not offered.

pub mod clock;
pub mod commands;
pub mod mirror_lists;
pub mod vonmises;
