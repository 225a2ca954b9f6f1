//! The keyword arguments of Gymnasium's tasks that gait takes (`[env.gym]`), at Gymnasium's
//! defaults: each changes what the task is, so a run that sets one says so in its config.

crate::settings! {
    /// Gymnasium's keyword arguments for the tasks that observe contact forces (`[env.gym]`,
    /// `gym/Ant-v5`, `gym/Humanoid-v5`, `gym/HumanoidStandup-v5`), at Gymnasium's defaults.
    #[serde(default, deny_unknown_fields)]
    pub struct GymConfig("Env: gym") {
        /// Observe each body's external contact force (`cfrc_ext`), as Gymnasium's
        /// `include_cfrc_ext_in_observation`; false leaves them out: Ant-v4's default, and
        /// what Ant-v3 observed in effect (its forces read zero under MuJoCo 2 and later).
        include_cfrc_ext_in_observation: bool = true;
    }
}

impl crate::envs::EnvSchedule for GymConfig {
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}
