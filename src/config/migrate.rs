//! Settings that moved between sections, in the order they moved: a run file or a `--config`
//! file written before a move loads as if written after it. Flags never change with a move
//! (a flag is the setting's name), so only files need this.

use serde_json::{Map, Value};

/// `(from, to)` section paths of every setting that moved, oldest first.
const MOVES: &[(&str, &str)] = &[
    // The returns and advantages are the samplers' (they compute them per trajectory), the
    // normalizer and the action std's schedule the network's: not PPO's, once A2C came.
    ("ppo.discount", "sampler.discount"),
    ("ppo.gae_lambda", "sampler.gae_lambda"),
    ("ppo.prenorm", "net.prenorm"),
    ("ppo.prenormalize_steps", "net.prenormalize_steps"),
    ("ppo.update_norm", "net.update_norm"),
    ("ppo.std_decay", "net.std_decay"),
    ("ppo.std_schedule", "net.std_schedule"),
];

/// Moves every setting of `doc` (a config as JSON: sections of settings) that `MOVES` names
/// to its new section (a document that names both places keeps the new one's value), then lets
/// each env section rewrite its own older settings ([`crate::envs::migrate_sections`]).
pub fn migrate(doc: &mut Value) {
    move_settings(doc);
    if let Some(env) = doc.get_mut("env") {
        crate::envs::migrate_sections(env);
    }
}

fn move_settings(doc: &mut Value) {
    for (from, to) in MOVES {
        let Some(value) = take(doc, from) else { continue };
        let (section, key) = to.rsplit_once('.').expect("a move names section.key");
        let Some(map) = doc.as_object_mut() else { return };
        let target = map.entry(section).or_insert_with(|| Value::Object(Map::new()));
        if let Some(target) = target.as_object_mut() {
            target.entry(key).or_insert(value);
        }
    }
}

/// Removes and returns the value at `section.key`, if there is one.
fn take(doc: &mut Value, path: &str) -> Option<Value> {
    let (section, key) = path.rsplit_once('.')?;
    doc.get_mut(section)?.as_object_mut()?.remove(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn moved_settings_reach_their_new_sections_and_the_new_place_wins() {
        let mut doc = json!({
            "ppo": {"kl": 0.02, "discount": 0.9, "update_norm": true},
            "net": {"update_norm": false},
        });
        migrate(&mut doc);
        assert_eq!(
            doc,
            json!({
                "ppo": {"kl": 0.02},
                "net": {"update_norm": false},
                "sampler": {"discount": 0.9},
            })
        );
    }
}
