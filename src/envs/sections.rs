//! Env settings sections: `[env.KEY]` tables keyed by the env catalog
//! ([`crate::settings::sections`]), so an env with settings is its folder plus its catalog row
//! ([`super::ENVS`], `section: Some(EnvSection::of::<..>(KEY))`), and nothing here names an env.
//! What the trainer asks of an env's section is [`EnvSchedule`].

use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::settings::sections::{Catalog, Migrate, SectionRow, SectionValue, Sections};
use crate::settings::{Declared, Section};

/// What the trainer asks of an env's settings section: whether its values go together, and
/// the shape of its curriculum (an env's own managers decide what a stage does; the runner
/// only needs when it opens and when the training distribution stops changing).
pub trait EnvSchedule {
    /// Refuses combinations of the section's values that cannot run (one message).
    fn check(&self) -> Result<(), String>;
    /// The curriculum stage an evaluation opens, if any.
    fn stage_gate(&self) -> Option<super::StageGate> {
        None
    }
    /// The training step from which the training distribution stops changing, given when the
    /// gated stage began (`None`: a gate it waits for is still closed).
    fn settled_from(&self, _stage_from: Option<u64>) -> Option<u64> {
        Some(0)
    }
    /// The strength of the training perturbations after `timesteps`, in [0, 1]; `None`
    /// without a perturbation schedule.
    fn perturbation_strength(&self, _timesteps: u64, _stage_from: Option<u64>) -> Option<f64> {
        None
    }
    /// The adaptive curriculum's rule ([`super::levels`]); `None`: no adaptive levels.
    fn level_rule(&self) -> Option<super::levels::LevelRule> {
        None
    }
    /// The policy's inputs by name, in observation order; `None`: the env does not name them,
    /// so a continuation cannot grow its observation (`crate::algos::grow`).
    fn observation_names(&self) -> Option<Vec<String>> {
        None
    }
    /// Inputs whose normalizer statistics the env fixes instead of measuring them (a
    /// prenormalization and `update_norm` keep these); none by default.
    fn fixed_inputs(&self) -> Vec<crate::policies::normalizer::FixedInput> {
        Vec::new()
    }
    /// Turns off the preset's values that cannot run with what the user chose in a fresh run,
    /// instead of refusing the run; a note for each (none: nothing gives way).
    fn give_way(&mut self, _user: &UserChoices) -> Vec<String> {
        Vec::new()
    }
    /// The same for a run continued with `--previous`, whose values are that run's.
    fn give_way_continued(&mut self, _user: &UserChoices) -> Vec<String> {
        Vec::new()
    }
    /// Applies an evaluation's physics and sensing override (`gait eval --sim ...`) and says
    /// what runs where, or refuses it (one message); `None`: the env has no physics models or
    /// sensors to override.
    fn apply_physics(&mut self, _over: &super::PhysicsOverride) -> Option<Result<String, String>> {
        None
    }
}

/// What the user chose, as an env's preset must respect it ([`EnvSchedule::give_way`]).
pub struct UserChoices<'a> {
    /// Whether the run evaluates at all (`--num-eval-eps 0` does not, so no gate can open).
    pub evaluates: bool,
    /// Whether the user set the section's setting `leaf` (`robust_start_speed`), in a config
    /// file or as a flag: such a value never gives way.
    pub typed: &'a dyn Fn(&str) -> bool,
}

/// An env's settings section in its catalog row: its key under `[env]`, its type, and how the
/// trainer reaches its [`EnvSchedule`].
pub struct EnvSection {
    /// The key, type and migration of `[env.KEY]`.
    pub row: SectionRow,
    schedule: fn(&dyn SectionValue) -> &dyn EnvSchedule,
    schedule_mut: fn(&mut dyn SectionValue) -> &mut dyn EnvSchedule,
}

impl EnvSection {
    /// The section of type `T` under `[env.KEY]`.
    pub const fn of<T>(key: &'static str) -> Self
    where
        T: EnvSchedule + SectionValue + Section + DeserializeOwned + Default,
    {
        Self {
            row: SectionRow::of::<T>(key),
            schedule: schedule_of::<T>,
            schedule_mut: schedule_mut_of::<T>,
        }
    }

    /// The same, with `migrate` rewriting older files' settings first.
    pub const fn migrating(self, migrate: Migrate) -> Self {
        Self { row: self.row.migrating(migrate), ..self }
    }
}

fn schedule_of<T: EnvSchedule + SectionValue>(value: &dyn SectionValue) -> &dyn EnvSchedule {
    value.as_any().downcast_ref::<T>().expect("a section of its row's type")
}

fn schedule_mut_of<T: EnvSchedule + SectionValue>(
    value: &mut dyn SectionValue,
) -> &mut dyn EnvSchedule {
    value.as_any_mut().downcast_mut::<T>().expect("a section of its row's type")
}

/// The env catalog's sections ([`super::ENVS`]).
pub struct EnvCatalog;

impl Catalog for EnvCatalog {
    fn rows() -> Vec<&'static SectionRow> {
        let mut rows: Vec<&'static SectionRow> = Vec::new();
        for section in super::ENVS.iter().filter_map(|spec| spec.section.as_ref()) {
            if !rows.iter().any(|r| r.key == section.row.key) {
                rows.push(&section.row);
            }
        }
        rows
    }
}

/// Rewrites every declared section of `env` (a config's `env` table as JSON) that its catalog
/// row migrates ([`EnvSection::migrating`]).
pub fn migrate_sections(env: &mut serde_json::Value) {
    Sections::<EnvCatalog>::migrate(env);
}

/// Env-specific settings (the reference's "Env arguments" group), one section per env that has
/// any, each at its defaults unless the config names it. Recorded in `experiment.json` so
/// `gait eval` and `--previous` rebuild the same env; changing one env's settings for another
/// env is refused ([`EnvConfig::check_for`]).
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EnvConfig(Sections<EnvCatalog>);

impl EnvConfig {
    /// Every env section's settings, under `path` (`env.cassie.sim_dt`), from the catalog.
    pub fn settings(path: &str, out: &mut Vec<Declared>) {
        Sections::<EnvCatalog>::settings(path, out);
    }

    /// The section of type `T`. Panics if no catalog row declares one: a section type is
    /// compiled in, so that is a bug, never a user's input.
    pub fn get<T: SectionValue>(&self) -> &T {
        self.0.get()
    }

    /// The section of type `T`, to change it.
    pub fn get_mut<T: SectionValue>(&mut self) -> &mut T {
        self.0.get_mut()
    }

    /// The section of `env` (its catalog row's), as the trainer asks of it; `None` for an env
    /// without settings or an unknown one.
    pub fn schedule(&self, env: &str) -> Option<&dyn EnvSchedule> {
        let section = super::spec(env).ok()?.section.as_ref()?;
        Some((section.schedule)(self.0.by_key(section.row.key)?))
    }

    /// The same, to change it.
    pub fn schedule_mut(&mut self, env: &str) -> Option<&mut dyn EnvSchedule> {
        let section = super::spec(env).ok()?.section.as_ref()?;
        Some((section.schedule_mut)(self.0.by_key_mut(section.row.key)?))
    }

    /// The curriculum gate of `env`'s settings, if its curriculum waits on an evaluation.
    pub fn stage_gate_for(&self, env: &str) -> Option<super::StageGate> {
        self.schedule(env)?.stage_gate()
    }

    /// The training step from which `env`'s training distribution stops changing (0 for an
    /// env without a curriculum; `None` while a gate it waits for is closed).
    pub fn settled_from(&self, env: &str, stage_from: Option<u64>) -> Option<u64> {
        self.schedule(env).map_or(Some(0), |s| s.settled_from(stage_from))
    }

    /// The strength of `env`'s training perturbations after `timesteps` of a run whose gated
    /// stage began at `stage_from`, in [0, 1]; `None` for an env without a perturbation
    /// schedule.
    pub fn perturbation_strength(
        &self,
        env: &str,
        timesteps: u64,
        stage_from: Option<u64>,
    ) -> Option<f64> {
        self.schedule(env)?.perturbation_strength(timesteps, stage_from)
    }

    /// `env`'s observation by name, if its settings name it.
    pub fn observation_names(&self, env: &str) -> Option<Vec<String>> {
        self.schedule(env)?.observation_names()
    }

    /// `env`'s inputs with fixed normalizer statistics ([`EnvSchedule::fixed_inputs`]).
    pub fn fixed_inputs(&self, env: &str) -> Vec<crate::policies::normalizer::FixedInput> {
        self.schedule(env).map(|s| s.fixed_inputs()).unwrap_or_default()
    }

    /// `env`'s adaptive curriculum rule, if its settings ask for one.
    pub fn level_rule(&self, env: &str) -> Option<super::levels::LevelRule> {
        self.schedule(env)?.level_rule()
    }

    /// `env`'s own section is checked as a whole; another env's section that differs from its
    /// defaults is refused, naming its first changed setting as a flag (each setting's range
    /// is checked with the others', [`crate::config::TrainConfig::validate`]).
    pub fn check_for(&self, env: &str) -> Result<(), String> {
        if let Some(own) = self.schedule(env) {
            own.check()?;
        }
        let own = super::spec(env).ok().and_then(|s| s.section.as_ref()).map(|s| s.row.key);
        for (key, value) in self.0.iter().filter(|(k, _)| Some(*k) != own) {
            if let Some(changed) = value.first_change() {
                let owners: Vec<&str> = super::ENVS
                    .iter()
                    .filter(|s| s.section.as_ref().is_some_and(|s| s.row.key == key))
                    .map(|s| s.name)
                    .collect();
                let owners = match owners.split_last() {
                    Some((last, [])) => last.to_string(),
                    Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                    None => key.to_string(),
                };
                return Err(format!("--{changed} only applies to --env {owners}, not '{env}'"));
            }
        }
        Ok(())
    }
}

impl fmt::Debug for EnvConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envs::cassie::CassieConfig;

    #[test]
    fn sections_round_trip_through_every_format_and_unknown_keys_are_named() {
        let mut config = EnvConfig::default();
        config.get_mut::<CassieConfig>().sim_dt = Some(0.0005);
        let json = serde_json::to_string(&config).unwrap();
        assert_eq!(serde_json::from_str::<EnvConfig>(&json).unwrap(), config);
        let toml = toml::to_string(&config).unwrap();
        assert_eq!(toml::from_str::<EnvConfig>(&toml).unwrap(), config);
        assert_ne!(config, EnvConfig::default());
        assert_eq!(serde_json::from_str::<EnvConfig>("{}").unwrap(), EnvConfig::default());
        let err = serde_json::from_str::<EnvConfig>(r#"{"walker": {}}"#).unwrap_err().to_string();
        assert!(err.contains("unknown field `walker`") && err.contains("cassie"), "{err}");
        let err = serde_json::from_str::<EnvConfig>(r#"{"cassie": {"bogus": 1}}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("bogus"), "{err}");
    }

    #[test]
    fn another_envs_changed_section_is_refused_by_its_flag() {
        let mut config = EnvConfig::default();
        assert_eq!(config.check_for("cartpole"), Ok(()));
        config.get_mut::<CassieConfig>().sim_dt = Some(0.0005);
        let err = config.check_for("cartpole").unwrap_err();
        assert_eq!(err, "--sim-dt only applies to --env cassie, not 'cartpole'");
        // A section several envs share names them all.
        let mut config = EnvConfig::default();
        config.get_mut::<crate::envs::gym::GymConfig>().include_cfrc_ext_in_observation = false;
        assert_eq!(config.check_for("gym/Humanoid-v5"), Ok(()));
        let err = config.check_for("gym/Hopper-v5").unwrap_err();
        let want = "--include-cfrc-ext-in-observation only applies to --env gym/Ant-v5, \
                    gym/Humanoid-v5 or gym/HumanoidStandup-v5, not 'gym/Hopper-v5'";
        assert_eq!(err, want);
    }
}
