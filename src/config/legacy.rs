//! Runs written before the sectioned config stored their settings flat, as `"args"` in
//! `experiment.json` (`{"env": .., "kl": .., "env_args": {"cassie": {..}}, "previous": ..}`).
//! Their keys are today's setting names (unique in the sections of that time), so they convert
//! name by name to today's paths; keys this gait no longer knows are ignored, as the old reader
//! did.

use std::path::PathBuf;

use serde_json::Value;

use super::{ConfigError, Start, TrainConfig, Weights};
use crate::envs::EnvConfig;

/// The config and start of a run stored in the flat format.
pub fn from_legacy_args(args: &Value) -> Result<(TrainConfig, Start), ConfigError> {
    let Value::Object(map) = args else {
        return Err(ConfigError::BadValue {
            key: "args".into(),
            reason: "expected an object".into(),
        });
    };
    // The trainer's own sections: the env's come from `env_args` below.
    let known: Vec<String> = TrainConfig::settings()
        .into_iter()
        .map(|d| d.path)
        .filter(|path| !path.starts_with("env."))
        .collect();
    let path_of = |name: &str| known.iter().find(|p| p.rsplit('.').next() == Some(name));
    let values: Vec<(String, Value)> =
        map.iter().filter_map(|(k, v)| path_of(k).map(|path| (path.clone(), v.clone()))).collect();
    let mut config = TrainConfig::default().with_leaves(&values)?;
    // These runs predate the observation clip: their networks had none.
    if !map.contains_key("obs_clip") {
        config.net.obs_clip = 0.0;
    }
    // The env section keeps its own rules for fields older runs lack (`CassieConfig`'s serde
    // defaults are the values those runs trained with).
    if let Some(env) = map.get("env_args") {
        let mut env = env.clone();
        crate::envs::migrate_sections(&mut env);
        config.env = serde_json::from_value::<EnvConfig>(env)
            .map_err(|e| ConfigError::BadValue { key: "env_args".into(), reason: e.to_string() })?;
    }
    let start = match map.get("previous").and_then(Value::as_str) {
        Some(dir) => {
            let best = map.get("previous_best").and_then(Value::as_bool).unwrap_or(false);
            Start::Continue {
                dir: PathBuf::from(dir),
                weights: if best { Weights::Best } else { Weights::Latest },
            }
        }
        None => Start::Fresh,
    };
    Ok((config, start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envs::cassie::{CassieConfig, ReferenceKind};

    #[test]
    fn a_flat_record_converts_leaf_by_leaf() {
        let old = serde_json::json!({
            "env": "cassie", "seed": 3, "kl": 0.05, "layers": [64, 64], "workers": 2,
            "previous": "/runs/a", "previous_best": true, "some_removed_flag": 1,
            "env_args": {"cassie": {"policy_rate": 40.0}}
        });
        let (config, start) = from_legacy_args(&old).unwrap();
        assert_eq!(config.run.env, "cassie");
        assert_eq!((config.run.seed, config.ppo().kl), (3, 0.05));
        assert_eq!(config.net.layers, vec![64, 64]);
        assert_eq!(config.sampler.workers, Some(2));
        assert_eq!(config.env.get::<CassieConfig>().policy_rate, 40.0);
        // Missing Cassie fields are what such runs trained with, not today's defaults.
        assert_eq!(config.env.get::<CassieConfig>().reference, ReferenceKind::None);
        assert_ne!(*config.env.get::<CassieConfig>(), CassieConfig::default());
        assert_eq!(start, Start::Continue { dir: "/runs/a".into(), weights: Weights::Best });
    }
}
