//! The algorithm catalog: `gait train NAME` → the algorithm, its settings section and how it is
//! built ([`ALGOS`], one row per algorithm).
//!
//! Adding an algorithm is its folder (an [`Algorithm`] and a [`settings!`](macro@crate::settings)
//! section implementing [`AlgoSettings`]) plus one row here: the command line builds its
//! subcommand and flags from the row, its settings live under `[algo.NAME]` (`--print-config`,
//! run files), and `--previous` refuses to continue a run of another algorithm with it.

use std::fmt;

use anyhow::Result;
use clap::builder::PossibleValue;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use tch::Device;

use super::a2c::{A2c, A2cConfig};
use super::algorithm::Algorithm;
use super::ppo::{PpoConfig, PpoOptim};
use super::symmetry::{Mirroring, Symmetry};
use crate::policies::NetSpec;
use crate::settings::sections::{
    Catalog, Only, ReadOne, ReadOnly, SectionRow, SectionValue, Sections,
};
use crate::settings::{Declared, Kind, Scalar, Section, SettingType};

/// What the trainer asks of an algorithm's settings section besides its values.
pub trait AlgoSettings: SectionValue {
    /// The mirror loss and augmentation it trains with (none by default).
    fn mirroring(&self) -> Mirroring {
        Mirroring::default()
    }
}

/// Builds a run's algorithm from its settings: its networks for `spec` on `device`
/// (`symmetry`: the env's mirror lists, for a mirror loss).
pub type Build = fn(&AlgoConfig, &NetSpec, Device, Option<&Symmetry>) -> Result<Box<dyn Algorithm>>;

/// One algorithm.
pub struct AlgoSpec {
    /// The subcommand (`gait train NAME`) and the key of its section (`[algo.NAME]`).
    pub name: &'static str,
    /// Its `gait train --help` line.
    pub about: &'static str,
    /// Its settings section.
    pub section: AlgoSection,
    /// Builds it.
    pub build: Build,
}

/// An algorithm's settings section in its catalog row: its type under `[algo.NAME]`.
pub struct AlgoSection {
    /// The key and type of `[algo.NAME]`.
    pub row: SectionRow,
    settings: fn(&dyn SectionValue) -> &dyn AlgoSettings,
    top: bool,
}

impl AlgoSection {
    /// The section of type `T` under `[algo.KEY]`.
    pub const fn of<T>(key: &'static str) -> Self
    where
        T: AlgoSettings + Section + DeserializeOwned + Default,
    {
        Self { row: SectionRow::of::<T>(key), settings: settings_of::<T>, top: false }
    }

    /// The same with its table at the config's top, `[KEY]`: PPO's, whose `[ppo]` predates
    /// the catalog, so that no config file or run changes.
    pub const fn at_top(self) -> Self {
        Self { top: true, ..self }
    }

    /// The path of its table: `algo.KEY`, or `KEY` at the top.
    pub fn table(&self) -> String {
        if self.top {
            self.row.key.to_string()
        } else {
            format!("algo.{}", self.row.key)
        }
    }
}

fn settings_of<T: AlgoSettings>(value: &dyn SectionValue) -> &dyn AlgoSettings {
    value.as_any().downcast_ref::<T>().expect("a section of its row's type")
}

/// Every algorithm `gait train` runs, the default first.
pub static ALGOS: &[AlgoSpec] = &[
    AlgoSpec {
        name: "ppo",
        about: "Proximal Policy Optimization",
        section: AlgoSection::of::<PpoConfig>("ppo").at_top(),
        build: |config, spec, device, symmetry| {
            let hp = config.get::<PpoConfig>().clone();
            Ok(Box::new(PpoOptim::new(spec, hp, device, symmetry)?))
        },
    },
    AlgoSpec {
        name: "a2c",
        about: "Synchronous advantage actor-critic (A2C): one RMSprop step per iteration on the \
                whole batch, its settings under `[algo.a2c]`",
        section: AlgoSection::of::<A2cConfig>("a2c"),
        build: |config, spec, device, _| {
            Ok(Box::new(A2c::new(spec, config.get::<A2cConfig>().clone(), device)))
        },
    },
];

/// The algorithm catalog's sections.
pub struct AlgoCatalog;

impl Catalog for AlgoCatalog {
    fn rows() -> Vec<&'static SectionRow> {
        ALGOS.iter().map(|a| &a.section.row).collect()
    }
}

/// Whether the section `key` has its table at the config's top ([`AlgoSection::at_top`]).
fn at_top(key: &str) -> bool {
    ALGOS.iter().any(|a| a.section.top && a.section.row.key == key)
}

/// Every algorithm's settings, each at its defaults unless the config names it: its table
/// `[algo.NAME]` (or `[NAME]`, [`AlgoSection::at_top`]). The config writes and reads the two
/// places' shares ([`AlgoConfig::nested`], [`AlgoConfig::top`] and their readers).
#[derive(Clone, Default, PartialEq)]
pub struct AlgoConfig(Sections<AlgoCatalog>);

impl AlgoConfig {
    /// Every algorithm's settings, each under its table's path (`ppo.kl`, `algo.a2c.lr`).
    pub fn settings(out: &mut Vec<Declared>) {
        for spec in ALGOS {
            (spec.section.row.declare)(&spec.section.table(), out);
        }
    }

    /// The sections with their tables under `[algo]`, to serialize as that map.
    pub fn nested(&self) -> Only<'_> {
        self.0.only(|key| !at_top(key))
    }

    /// Reads the map under `[algo]` into these sections.
    pub fn read_nested(&mut self) -> ReadOnly<'_, AlgoCatalog> {
        self.0.read_only(|key| !at_top(key))
    }

    /// The sections with their tables at the config's top, with their keys.
    pub fn top(&self) -> impl Iterator<Item = (&'static str, &dyn SectionValue)> {
        self.0.iter().filter(|(key, _)| at_top(key))
    }

    /// Reads the top-level table `key`, if it is an algorithm's.
    pub fn read_top(&mut self, key: &str) -> Option<ReadOne<'_>> {
        self.0.read_one(key).filter(|_| at_top(key))
    }

    /// The keys of the tables at the config's top.
    pub fn top_keys() -> impl Iterator<Item = &'static str> {
        ALGOS.iter().filter(|a| a.section.top).map(|a| a.section.row.key)
    }

    /// The section of type `T` (a bug, never a user's input, if no row declares it).
    pub fn get<T: SectionValue>(&self) -> &T {
        self.0.get()
    }

    /// The section of type `T`, to change it.
    pub fn get_mut<T: SectionValue>(&mut self) -> &mut T {
        self.0.get_mut()
    }

    /// The mirror settings `algo` trains with.
    pub fn mirroring(&self, algo: Algo) -> Mirroring {
        let section = &algo.spec().section;
        self.0
            .by_key(section.row.key)
            .map(|v| (section.settings)(v).mirroring())
            .unwrap_or_default()
    }

    /// Builds `algo` from its section.
    pub fn build(
        &self,
        algo: Algo,
        spec: &NetSpec,
        device: Device,
        symmetry: Option<&Symmetry>,
    ) -> Result<Box<dyn Algorithm>> {
        (algo.spec().build)(self, spec, device, symmetry)
    }
}

impl fmt::Debug for AlgoConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The algorithm of a run (`run.algo`): a row of [`ALGOS`], stored by its name.
#[derive(Clone, Copy)]
pub struct Algo(&'static AlgoSpec);

impl Algo {
    /// Every algorithm, in catalog order.
    pub fn all() -> impl Iterator<Item = Algo> {
        ALGOS.iter().map(Algo)
    }

    /// The algorithm named `name`, if the catalog has one.
    pub fn named(name: &str) -> Option<Algo> {
        Self::all().find(|a| a.name() == name)
    }

    /// Its catalog row.
    pub fn spec(self) -> &'static AlgoSpec {
        self.0
    }

    /// Its subcommand's name (`gait train ppo`).
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The prefix of its own settings' paths (`ppo.`, `algo.a2c.`).
    pub fn prefix(self) -> String {
        format!("{}.", self.0.section.table())
    }
}

impl Default for Algo {
    fn default() -> Self {
        Algo(&ALGOS[0])
    }
}

impl PartialEq for Algo {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Algo {}

impl fmt::Debug for Algo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Algo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Algo {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Algo {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Algo::named(&name).ok_or_else(|| {
            let names: Vec<&str> = Algo::all().map(Algo::name).collect();
            serde::de::Error::custom(format!(
                "unknown algorithm '{name}'; available: {}",
                names.join(", ")
            ))
        })
    }
}

impl SettingType for Algo {
    const KIND: Kind = Kind { scalar: Scalar::Choice(algo_names), list: false, optional: false };
}

fn algo_names() -> Vec<PossibleValue> {
    Algo::all().map(|a| PossibleValue::new(a.name())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row's section key is its name, so `gait train NAME` reads `[algo.NAME]` (PPO: `[ppo]`);
    /// names are unique.
    #[test]
    fn every_row_is_named_once_and_keys_its_section_by_its_name() {
        for (i, spec) in ALGOS.iter().enumerate() {
            assert_eq!(spec.section.row.key, spec.name);
            assert!(ALGOS[..i].iter().all(|s| s.name != spec.name), "{} twice", spec.name);
        }
    }

    #[test]
    fn an_algorithm_is_stored_by_name_and_an_unknown_one_is_named() {
        let a2c = Algo::named("a2c").unwrap();
        assert_eq!(serde_json::to_string(&a2c).unwrap(), "\"a2c\"");
        assert_eq!(serde_json::from_str::<Algo>("\"a2c\"").unwrap(), a2c);
        assert_eq!(Algo::default().name(), "ppo");
        let err = serde_json::from_str::<Algo>("\"sac\"").unwrap_err().to_string();
        assert!(err.contains("unknown algorithm 'sac'; available: ppo, a2c"), "{err}");
    }

    #[test]
    fn mirroring_comes_from_the_algorithms_own_section() {
        let mut config = AlgoConfig::default();
        config.get_mut::<PpoConfig>().mirror = 0.5;
        let ppo = Algo::named("ppo").unwrap();
        let a2c = Algo::named("a2c").unwrap();
        assert_eq!(config.mirroring(ppo).mirror, 0.5);
        assert_eq!(config.mirroring(a2c), Mirroring::default());
    }
}
