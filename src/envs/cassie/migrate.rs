//! Cassie's settings that changed shape, read from older files: before mixes of models were
//! data (`sim = "rapier+mujoco@0.004"`), a mix was `sim = "mixed"` with MuJoCo's own
//! `mujoco_dt`, its share `mujoco_share` and its late share `robust_mujoco_share`.

use serde_json::{Map, Value};

/// Rewrites `section` (an `[env.cassie]` table as JSON) from the older settings to today's:
/// `mujoco_dt` and `mujoco_share` become MuJoCo's `@DT` and `:SHARE` in `sim = "mixed"`, and
/// `robust_mujoco_share` p becomes `robust_shares = [1 - p, p]` (rapier's, MuJoCo's), so the
/// run draws and steps as it did. On one model they held their defaults (anything else was
/// refused) and go. A config file that sets them without `sim` (on top of a preset's mix)
/// keeps them, to be refused by name: the mix they changed is not in the file.
pub fn migrate_config(section: &mut Map<String, Value>) {
    if let Some(late) = section.remove("robust_mujoco_share") {
        if let Some(late) = late.as_f64() {
            section.entry("robust_shares").or_insert_with(|| Value::from(vec![1.0 - late, late]));
        }
    }
    let sim = section.get("sim").and_then(Value::as_str).map(str::to_string);
    let at_defaults = section.get("mujoco_dt").is_none_or(Value::is_null)
        && section.get("mujoco_share").is_none_or(|v| v.as_f64() == Some(0.5));
    if sim.is_none() && !at_defaults {
        return;
    }
    let dt = section.remove("mujoco_dt").filter(|v| !v.is_null());
    let share = section.remove("mujoco_share").and_then(|v| v.as_f64());
    if sim.as_deref() != Some("mixed") {
        return;
    }
    let mut mujoco = "mujoco".to_string();
    if let Some(dt) = dt {
        mujoco += &format!("@{dt}");
    }
    let sim = match share {
        Some(share) if share != 0.5 => format!("rapier:{}+{mujoco}:{share}", 1.0 - share),
        _ => format!("rapier+{mujoco}"),
    };
    section.insert("sim".into(), Value::from(sim));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envs::cassie::{CassieConfig, Models, SimKind};
    use serde_json::json;

    fn migrated(old: Value) -> CassieConfig {
        let mut section = old.as_object().expect("a table").clone();
        migrate_config(&mut section);
        serde_json::from_value(Value::Object(section)).expect("today's settings")
    }

    #[test]
    fn an_older_mix_reads_as_the_same_models_timesteps_and_shares() {
        let preset = migrated(json!({"sim": "mixed", "mujoco_dt": 0.004, "mujoco_share": 0.5}));
        assert_eq!(preset.sim.to_string(), "rapier+mujoco@0.004");
        assert_eq!((preset.dt_of(SimKind::Rapier), preset.dt_of(SimKind::Mujoco)), (0.002, 0.004));
        let plain = migrated(json!({"sim": "mixed"}));
        assert_eq!(plain.sim.to_string(), "rapier+mujoco");
        assert_eq!(plain.dt_of(SimKind::Mujoco), 0.002, "MuJoCo ran at sim_dt, as then");
        let shared =
            migrated(json!({"sim": "mixed", "mujoco_share": 0.25, "robust_mujoco_share": 0.75}));
        assert_eq!(shared.sim.shares(), [0.75, 0.25]);
        assert_eq!(shared.robust_shares, [0.25, 0.75]);
        let one = migrated(json!({"sim": "mujoco", "mujoco_dt": null, "mujoco_share": 0.5}));
        assert_eq!(one.sim.to_string(), "mujoco");
        assert_eq!(migrated(json!({})).sim, Models::one(SimKind::Rapier), "runs before --sim");
        // Without `sim`, a changed MuJoCo setting has no mix to go into: it stays, refused.
        let mut over = json!({"mujoco_dt": 0.002}).as_object().expect("a table").clone();
        migrate_config(&mut over);
        assert!(over.contains_key("mujoco_dt"));
        let mut plain = json!({"mujoco_share": 0.5}).as_object().expect("a table").clone();
        migrate_config(&mut plain);
        assert!(plain.is_empty(), "{plain:?}");
    }
}
