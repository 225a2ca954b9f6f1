//! Cassie (issue 3), being built bottom-up. Done so far, each complete and tested: the
//! scipy-exact von Mises CDF and the periodic gait clock the reference's reward and
//! observation use. The rapier3d model, PD/motor model, observation, rewards and the `cassie`
//! registry entry come next; until then `--env cassie` is not offered.

pub mod clock;
pub mod vonmises;
