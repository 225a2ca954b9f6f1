//! Env settings sections: `[env.KEY]` tables keyed by the catalog, so an env with settings is
//! its folder plus its catalog row ([`super::ENVS`], `section: Some(EnvSection::of::<..>(KEY))`),
//! and nothing here names an env.
//!
//! [`EnvConfig`] holds one value per section the catalog declares, in catalog order, each a
//! typed struct behind [`SectionValue`]; it serializes as a map `KEY → section` (TOML tables,
//! JSON objects, postcard's map for the MPI ranks), and a key no catalog row declares is
//! refused by name.

use std::any::Any;
use std::fmt;

use serde::de::{DeserializeOwned, DeserializeSeed, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

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

/// A section's value with its type erased: what [`EnvConfig`] stores. Every
/// [`settings!`](macro@crate::settings) struct that implements [`EnvSchedule`] is one.
pub trait SectionValue: EnvSchedule + Any + Send + Sync + fmt::Debug {
    /// A boxed copy.
    fn clone_box(&self) -> Box<dyn SectionValue>;
    /// Whether `other` is the same type with the same values.
    fn eq_dyn(&self, other: &dyn SectionValue) -> bool;
    /// The value, to serialize into any format.
    fn as_serialize(&self) -> &dyn erased_serde::Serialize;
    /// The value, to downcast to its type.
    fn as_any(&self) -> &dyn Any;
    /// The same, mutable.
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// Its first setting that differs from the section's default, as a flag name (`sim-dt`).
    fn first_change(&self) -> Option<String>;
}

impl<T> SectionValue for T
where
    T: EnvSchedule + Serialize + Default + Clone + PartialEq + fmt::Debug + Send + Sync + 'static,
{
    fn clone_box(&self) -> Box<dyn SectionValue> {
        Box::new(self.clone())
    }

    fn eq_dyn(&self, other: &dyn SectionValue) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }

    fn as_serialize(&self) -> &dyn erased_serde::Serialize {
        self
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn first_change(&self) -> Option<String> {
        if *self == T::default() {
            return None;
        }
        let ours = serde_json::to_value(self).unwrap_or_default();
        let defaults = serde_json::to_value(T::default()).unwrap_or_default();
        let changed = ours
            .as_object()
            .and_then(|m| m.iter().find(|(k, v)| defaults.get(k.as_str()) != Some(*v)))
            .map_or_else(String::new, |(k, _)| k.replace('_', "-"));
        Some(changed)
    }
}

/// Reads one section from any serde format.
type ReadSection =
    fn(&mut dyn erased_serde::Deserializer) -> Result<Box<dyn SectionValue>, erased_serde::Error>;

/// An env's settings section in its catalog row: its key under `[env]` and its type.
pub struct EnvSection {
    /// `[env.KEY]`, and the middle of its settings' paths (`env.cassie.sim_dt`).
    pub key: &'static str,
    /// Declares the section's settings under a path.
    pub declare: fn(&str, &mut Vec<Declared>),
    /// The section at its defaults.
    default: fn() -> Box<dyn SectionValue>,
    /// Reads the section.
    read: ReadSection,
    /// Rewrites a stored section's settings that changed shape into today's (a run file or a
    /// `--config` file written before the change, as JSON), before it is read.
    migrate: fn(&mut serde_json::Map<String, serde_json::Value>),
}

impl EnvSection {
    /// The section of type `T` under `[env.KEY]`.
    pub const fn of<T>(key: &'static str) -> Self
    where
        T: SectionValue + Section + DeserializeOwned + Default,
    {
        Self {
            key,
            declare: Declared::section::<T>,
            default: default_of::<T>,
            read: read_of::<T>,
            migrate: |_| {},
        }
    }

    /// The same, with `migrate` rewriting older files' settings first.
    pub const fn migrating(
        self,
        migrate: fn(&mut serde_json::Map<String, serde_json::Value>),
    ) -> Self {
        Self { migrate, ..self }
    }
}

/// Rewrites every declared section of `env` (a config's `env` table as JSON) that its catalog
/// row migrates ([`EnvSection::migrating`]).
pub fn migrate_sections(env: &mut serde_json::Value) {
    let Some(env) = env.as_object_mut() else { return };
    for section in catalog() {
        if let Some(values) = env.get_mut(section.key).and_then(|v| v.as_object_mut()) {
            (section.migrate)(values);
        }
    }
}

fn default_of<T: SectionValue + Default>() -> Box<dyn SectionValue> {
    Box::new(T::default())
}

fn read_of<T: SectionValue + DeserializeOwned>(
    d: &mut dyn erased_serde::Deserializer,
) -> Result<Box<dyn SectionValue>, erased_serde::Error> {
    Ok(Box::new(erased_serde::deserialize::<T>(d)?))
}

/// Every settings section the catalog declares, in catalog order, each once.
fn catalog() -> impl Iterator<Item = &'static EnvSection> {
    let mut seen: Vec<&str> = Vec::new();
    super::ENVS.iter().filter_map(|spec| spec.section.as_ref()).filter(move |s| {
        let new = !seen.contains(&s.key);
        seen.push(s.key);
        new
    })
}

/// Env-specific settings (the reference's "Env arguments" group), one section per env that has
/// any, each at its defaults unless the config names it. Recorded in `experiment.json` so
/// `gait eval` and `--previous` rebuild the same env; changing one env's settings for another
/// env is refused ([`EnvConfig::check_for`]).
pub struct EnvConfig {
    sections: Vec<(&'static str, Box<dyn SectionValue>)>,
}

impl EnvConfig {
    /// Every env section's settings, under `path` (`env.cassie.sim_dt`), from the catalog.
    pub fn settings(path: &str, out: &mut Vec<Declared>) {
        for section in catalog() {
            (section.declare)(&format!("{path}.{}", section.key), out);
        }
    }

    /// The section of type `T`. Panics if no catalog row declares one: a section type is
    /// compiled in, so that is a bug, never a user's input.
    pub fn get<T: SectionValue>(&self) -> &T {
        self.sections
            .iter()
            .find_map(|(_, v)| v.as_any().downcast_ref::<T>())
            .unwrap_or_else(|| panic!("{} is no env section", std::any::type_name::<T>()))
    }

    /// The section of type `T`, to change it.
    pub fn get_mut<T: SectionValue>(&mut self) -> &mut T {
        self.sections
            .iter_mut()
            .find_map(|(_, v)| v.as_any_mut().downcast_mut::<T>())
            .unwrap_or_else(|| panic!("{} is no env section", std::any::type_name::<T>()))
    }

    /// The section of `env` (its catalog row's), as the trainer asks of it; `None` for an env
    /// without settings or an unknown one.
    pub fn schedule(&self, env: &str) -> Option<&dyn SectionValue> {
        let key = super::spec(env).ok()?.section.as_ref()?.key;
        self.sections.iter().find(|(k, _)| *k == key).map(|(_, v)| &**v)
    }

    /// The same, to change it.
    pub fn schedule_mut(&mut self, env: &str) -> Option<&mut dyn SectionValue> {
        let key = super::spec(env).ok()?.section.as_ref()?.key;
        self.sections.iter_mut().find(|(k, _)| *k == key).map(|(_, v)| &mut **v)
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

    /// `env`'s own section is checked as a whole; another env's section that differs from its
    /// defaults is refused, naming its first changed setting as a flag (each setting's range
    /// is checked with the others', [`crate::config::TrainConfig::validate`]).
    pub fn check_for(&self, env: &str) -> Result<(), String> {
        let own = super::spec(env).ok().and_then(|s| s.section.as_ref()).map(|s| s.key);
        for (key, value) in &self.sections {
            if Some(*key) == own {
                value.check()?;
            } else if let Some(changed) = value.first_change() {
                let owner = super::ENVS
                    .iter()
                    .find(|s| s.section.as_ref().is_some_and(|s| s.key == *key))
                    .map_or(*key, |s| s.name);
                return Err(format!("--{changed} only applies to --env {owner}, not '{env}'"));
            }
        }
        Ok(())
    }
}

impl Default for EnvConfig {
    fn default() -> Self {
        Self { sections: catalog().map(|s| (s.key, (s.default)())).collect() }
    }
}

impl Clone for EnvConfig {
    fn clone(&self) -> Self {
        Self { sections: self.sections.iter().map(|(k, v)| (*k, v.clone_box())).collect() }
    }
}

impl PartialEq for EnvConfig {
    fn eq(&self, other: &Self) -> bool {
        self.sections.len() == other.sections.len()
            && self
                .sections
                .iter()
                .zip(&other.sections)
                .all(|((a, x), (b, y))| a == b && x.eq_dyn(&**y))
    }
}

impl fmt::Debug for EnvConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.sections.iter().map(|(k, v)| (k, v))).finish()
    }
}

impl Serialize for EnvConfig {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.sections.len()))?;
        for (key, value) in &self.sections {
            map.serialize_entry(key, value.as_serialize())?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for EnvConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EnvConfigVisitor)
    }
}

struct EnvConfigVisitor;

impl<'de> Visitor<'de> for EnvConfigVisitor {
    type Value = EnvConfig;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map of env settings sections")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<EnvConfig, A::Error> {
        let mut config = EnvConfig::default();
        while let Some(key) = map.next_key::<String>()? {
            let Some(slot) = config.sections.iter_mut().find(|(k, _)| *k == key) else {
                return Err(serde::de::Error::unknown_field(&key, keys()));
            };
            let section = catalog().find(|s| s.key == slot.0).expect("a catalog key");
            slot.1 = map.next_value_seed(SectionSeed(section))?;
        }
        Ok(config)
    }
}

/// The catalog's section keys (`unknown_field` wants a `'static` list; they are gathered once).
fn keys() -> &'static [&'static str] {
    static KEYS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| catalog().map(|s| s.key).collect())
}

/// Reads one section with its catalog row's type.
struct SectionSeed(&'static EnvSection);

impl<'de> DeserializeSeed<'de> for SectionSeed {
    type Value = Box<dyn SectionValue>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let mut erased = <dyn erased_serde::Deserializer>::erase(deserializer);
        (self.0.read)(&mut erased).map_err(serde::de::Error::custom)
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
    }
}
