//! Settings sections keyed by a catalog: `[env.KEY]` and `[algo.KEY]` tables whose keys and
//! types come from a table of rows ([`Catalog`]), so a module with settings of its own is its
//! folder plus its catalog row, and nothing here names one.
//!
//! [`Sections`] holds one value per row, in catalog order, each a typed
//! [`settings!`](macro@crate::settings) struct behind [`SectionValue`]; it serializes as a map
//! `KEY → section` (TOML tables, JSON objects, postcard's map for the MPI ranks), and a key no
//! row declares is refused by name. What a family of sections is asked for (an env's schedule,
//! an algorithm's mirror settings) is a trait of that family, reached through the row.

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{DeserializeOwned, DeserializeSeed, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Declared, Section};

/// A section's value with its type erased: what [`Sections`] stores. Every
/// [`settings!`](macro@crate::settings) struct is one.
pub trait SectionValue: Any + Send + Sync + fmt::Debug {
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
    T: Serialize + Default + Clone + PartialEq + fmt::Debug + Send + Sync + 'static,
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

/// Rewrites a stored section's settings that changed shape (as JSON) before it is read.
pub type Migrate = fn(&mut serde_json::Map<String, serde_json::Value>);

/// One section in a catalog row: its key and its type.
pub struct SectionRow {
    /// `[FAMILY.KEY]`, and the middle of its settings' paths (`env.cassie.sim_dt`).
    pub key: &'static str,
    /// Declares the section's settings under a path.
    pub declare: fn(&str, &mut Vec<Declared>),
    /// The section at its defaults.
    default: fn() -> Box<dyn SectionValue>,
    /// Reads the section.
    read: ReadSection,
    /// Rewrites older files' settings into today's ([`SectionRow::migrating`]).
    migrate: Migrate,
}

impl SectionRow {
    /// The section of type `T` under `[FAMILY.KEY]`.
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

    /// The same, with `migrate` rewriting a run file's or a `--config` file's settings
    /// written before they changed shape, before the section is read.
    pub const fn migrating(self, migrate: Migrate) -> Self {
        Self { migrate, ..self }
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

/// A family of sections (the envs', the algorithms'): where its rows come from.
pub trait Catalog: 'static {
    /// Its rows, each key once, in catalog order.
    fn rows() -> Vec<&'static SectionRow>;
}

/// One value per section of catalog `C`, each at its defaults unless a file names it.
pub struct Sections<C> {
    values: Vec<(&'static str, Box<dyn SectionValue>)>,
    catalog: PhantomData<fn() -> C>,
}

impl<C: Catalog> Sections<C> {
    /// Every section's settings, under `path` (`env` gives `env.cassie.sim_dt`).
    pub fn settings(path: &str, out: &mut Vec<Declared>) {
        for row in C::rows() {
            (row.declare)(&format!("{path}.{}", row.key), out);
        }
    }

    /// Rewrites every section of `doc` (the family's table as JSON) whose row migrates.
    pub fn migrate(doc: &mut serde_json::Value) {
        let Some(doc) = doc.as_object_mut() else { return };
        for row in C::rows() {
            if let Some(values) = doc.get_mut(row.key).and_then(|v| v.as_object_mut()) {
                (row.migrate)(values);
            }
        }
    }

    /// The section of type `T`. Panics if no row declares one: a section type is compiled
    /// in, so that is a bug, never a user's input.
    pub fn get<T: SectionValue>(&self) -> &T {
        self.values
            .iter()
            .find_map(|(_, v)| v.as_any().downcast_ref::<T>())
            .unwrap_or_else(|| panic!("{} is no section here", std::any::type_name::<T>()))
    }

    /// The section of type `T`, to change it.
    pub fn get_mut<T: SectionValue>(&mut self) -> &mut T {
        self.values
            .iter_mut()
            .find_map(|(_, v)| v.as_any_mut().downcast_mut::<T>())
            .unwrap_or_else(|| panic!("{} is no section here", std::any::type_name::<T>()))
    }

    /// The section under `key`, if a row declares it.
    pub fn by_key(&self, key: &str) -> Option<&dyn SectionValue> {
        self.values.iter().find(|(k, _)| *k == key).map(|(_, v)| &**v)
    }

    /// The same, to change it.
    pub fn by_key_mut(&mut self, key: &str) -> Option<&mut dyn SectionValue> {
        self.values.iter_mut().find(|(k, _)| *k == key).map(|(_, v)| &mut **v)
    }

    /// Every section with its key, in catalog order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &dyn SectionValue)> {
        self.values.iter().map(|(k, v)| (*k, &**v))
    }
}

impl<C: Catalog> Default for Sections<C> {
    fn default() -> Self {
        let values = C::rows().into_iter().map(|r| (r.key, (r.default)())).collect();
        Self { values, catalog: PhantomData }
    }
}

impl<C> Clone for Sections<C> {
    fn clone(&self) -> Self {
        let values = self.values.iter().map(|(k, v)| (*k, v.clone_box())).collect();
        Self { values, catalog: PhantomData }
    }
}

impl<C> PartialEq for Sections<C> {
    fn eq(&self, other: &Self) -> bool {
        self.values.len() == other.values.len()
            && self
                .values
                .iter()
                .zip(&other.values)
                .all(|((a, x), (b, y))| a == b && x.eq_dyn(&**y))
    }
}

impl<C> fmt::Debug for Sections<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.values.iter().map(|(k, v)| (k, v))).finish()
    }
}

impl<C> Serialize for Sections<C> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.only(|_| true).serialize(serializer)
    }
}

impl<C> Sections<C> {
    /// The sections whose keys `keep` takes, to serialize as a map (a family whose rows live
    /// in two places of a document writes each place's share).
    pub fn only(&self, keep: fn(&str) -> bool) -> Only<'_> {
        Only { values: self.values.iter().filter(|(k, _)| keep(k)).collect() }
    }
}

/// Some sections of a [`Sections`], serialized as a map `KEY → section`.
pub struct Only<'a> {
    values: Vec<&'a (&'static str, Box<dyn SectionValue>)>,
}

impl Serialize for Only<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.values.len()))?;
        for (key, value) in &self.values {
            map.serialize_entry(key, value.as_serialize())?;
        }
        map.end()
    }
}

impl<'de, C: Catalog> Deserialize<'de> for Sections<C> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut sections = Sections::<C>::default();
        sections.read_only(|_| true).deserialize(deserializer)?;
        Ok(sections)
    }
}

impl<C: Catalog> Sections<C> {
    /// Reads a map of the sections whose keys `keep` takes into these, each replacing the
    /// value it names; any other key is refused by name.
    pub fn read_only(&mut self, keep: fn(&str) -> bool) -> ReadOnly<'_, C> {
        ReadOnly { sections: self, keep }
    }

    /// Reads the one section under `key` into these (a row's table outside the family's map).
    pub fn read_one(&mut self, key: &str) -> Option<ReadOne<'_>> {
        let row = C::rows().into_iter().find(|r| r.key == key)?;
        let slot = self.values.iter_mut().find(|(k, _)| *k == key).map(|(_, v)| v)?;
        Some(ReadOne { row, slot })
    }
}

/// [`Sections::read_only`]'s reader.
pub struct ReadOnly<'a, C> {
    sections: &'a mut Sections<C>,
    keep: fn(&str) -> bool,
}

impl<'de, C: Catalog> DeserializeSeed<'de> for ReadOnly<'_, C> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, C: Catalog> Visitor<'de> for ReadOnly<'_, C> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map of settings sections")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let keep = self.keep;
        while let Some(key) = map.next_key::<String>()? {
            match self.sections.read_one(&key).filter(|_| keep(&key)) {
                Some(one) => map.next_value_seed(one)?,
                None => {
                    let keys: Vec<String> = C::rows()
                        .iter()
                        .filter(|r| keep(r.key))
                        .map(|r| format!("`{}`", r.key))
                        .collect();
                    return Err(serde::de::Error::custom(format!(
                        "unknown field `{key}`, expected one of {}",
                        keys.join(", ")
                    )));
                }
            }
        }
        Ok(())
    }
}

/// [`Sections::read_one`]'s reader: the section with its row's type.
pub struct ReadOne<'a> {
    row: &'static SectionRow,
    slot: &'a mut Box<dyn SectionValue>,
}

impl<'de> DeserializeSeed<'de> for ReadOne<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        let mut erased = <dyn erased_serde::Deserializer>::erase(deserializer);
        *self.slot = (self.row.read)(&mut erased).map_err(serde::de::Error::custom)?;
        Ok(())
    }
}
