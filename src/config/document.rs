//! [`TrainConfig`] as a document of sections, in every serde format (TOML files, JSON run
//! files, postcard between MPI ranks): `[sampler]`, each algorithm's table at the top (`[ppo]`),
//! `[algo]` with the other algorithms' tables, `[net]`, `[eval]`, `[run]`, `[env]`. Written by
//! hand because the algorithms' sections live in two places ([`AlgoConfig::top`],
//! [`AlgoConfig::nested`]); an unknown, repeated or missing section is refused by name, as the
//! derived reader did.

use std::fmt;

use serde::de::{Error, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{AlgoConfig, TrainConfig};

/// The sections besides the algorithms', in the order they are written; `algo` may be missing.
const SECTIONS: [&str; 6] = ["sampler", "algo", "net", "eval", "run", "env"];

impl Serialize for TrainConfig {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let top: Vec<_> = self.algo.top().collect();
        let mut map = serializer.serialize_map(Some(SECTIONS.len() + top.len()))?;
        map.serialize_entry("sampler", &self.sampler)?;
        for (key, value) in top {
            map.serialize_entry(key, value.as_serialize())?;
        }
        map.serialize_entry("algo", &self.algo.nested())?;
        map.serialize_entry("net", &self.net)?;
        map.serialize_entry("eval", &self.eval)?;
        map.serialize_entry("run", &self.run)?;
        map.serialize_entry("env", &self.env)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for TrainConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(DocumentVisitor)
    }
}

struct DocumentVisitor;

impl<'de> Visitor<'de> for DocumentVisitor {
    type Value = TrainConfig;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map of settings sections")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TrainConfig, A::Error> {
        let mut config = TrainConfig::default();
        let mut seen: Vec<String> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                return Err(A::Error::custom(format!("duplicate field `{key}`")));
            }
            match key.as_str() {
                "sampler" => config.sampler = map.next_value()?,
                "algo" => map.next_value_seed(config.algo.read_nested())?,
                "net" => config.net = map.next_value()?,
                "eval" => config.eval = map.next_value()?,
                "run" => config.run = map.next_value()?,
                "env" => config.env = map.next_value()?,
                other => match config.algo.read_top(other) {
                    Some(table) => map.next_value_seed(table)?,
                    None => return Err(unknown(other)),
                },
            }
            seen.push(key);
        }
        let required = SECTIONS.into_iter().filter(|s| *s != "algo").chain(AlgoConfig::top_keys());
        match required.into_iter().find(|s| !seen.iter().any(|k| k == s)) {
            Some(missing) => Err(A::Error::missing_field(missing)),
            None => Ok(config),
        }
    }
}

/// The refusal of a section the config does not have, with the ones it has.
fn unknown<E: Error>(key: &str) -> E {
    let mut known: Vec<&str> = SECTIONS.to_vec();
    known.splice(1..1, AlgoConfig::top_keys());
    let known: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
    E::custom(format!("unknown field `{key}`, expected one of {}", known.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envs::cassie::CassieConfig;

    fn changed() -> TrainConfig {
        let mut config = TrainConfig::for_env("cassie");
        config.ppo_mut().kl = 0.05;
        config.env.get_mut::<CassieConfig>().sim_dt = Some(0.0005);
        config.run.algo = crate::config::Algo::named("a2c").unwrap();
        config
    }

    #[test]
    fn every_format_round_trips_with_ppo_at_the_top_and_a2c_under_algo() {
        let config = changed();
        let toml = config.to_toml();
        assert!(toml.contains("\n[ppo]\n") && toml.contains("\n[algo.a2c]\n"), "{toml}");
        assert_eq!(toml::from_str::<TrainConfig>(&toml).unwrap(), config);
        let json = serde_json::to_string(&config).unwrap();
        assert_eq!(serde_json::from_str::<TrainConfig>(&json).unwrap(), config);
        let bytes = postcard::to_allocvec(&config).unwrap();
        assert_eq!(postcard::from_bytes::<TrainConfig>(&bytes).unwrap(), config);
    }

    #[test]
    fn unknown_repeated_and_missing_sections_are_refused_by_name() {
        let mut doc = serde_json::to_value(changed()).unwrap();
        doc["walker"] = serde_json::json!({});
        let err = serde_json::from_value::<TrainConfig>(doc.clone()).unwrap_err().to_string();
        assert!(err.contains("unknown field `walker`") && err.contains("`ppo`"), "{err}");
        doc.as_object_mut().unwrap().remove("walker");
        doc["algo"]["ppo"] = serde_json::json!({});
        let err = serde_json::from_value::<TrainConfig>(doc.clone()).unwrap_err().to_string();
        assert!(err.contains("unknown field `ppo`") && err.contains("`a2c`"), "{err}");
        doc["algo"].as_object_mut().unwrap().remove("ppo");
        doc.as_object_mut().unwrap().remove("ppo");
        let err = serde_json::from_value::<TrainConfig>(doc.clone()).unwrap_err().to_string();
        assert!(err.contains("missing field `ppo`"), "{err}");
        doc.as_object_mut().unwrap().remove("algo");
        doc["ppo"] = serde_json::to_value(changed().ppo()).unwrap();
        let read = serde_json::from_value::<TrainConfig>(doc).unwrap();
        assert_eq!(read.ppo().kl, 0.05, "without [algo], its sections keep their defaults");
        let twice = "[ppo]\nkl = 0.1\n[ppo]\nkl = 0.2\n";
        assert!(toml::from_str::<TrainConfig>(twice).is_err());
    }
}
