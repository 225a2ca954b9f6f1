//! Per-env training presets. A preset is data: the TOML document of the env's catalog row
//! ([`crate::envs::EnvSpec::preset`], e.g. `src/envs/cassie/preset.toml`), merged over the
//! global defaults as a config file is. `gait train` applies it under a config file and typed
//! flags (which always win), prints what it set, and `train ppo --help` lists it; the env's
//! settings section says which preset values give way to the user's own
//! ([`crate::envs::EnvSchedule::give_way`]).

use super::TrainConfig;
use crate::envs::UserChoices;

/// Applies the preset of `config.run.env` (none for an env without one, or an unknown env,
/// which [`TrainConfig::validate`] refuses).
pub fn apply(config: &mut TrainConfig) {
    let Ok(spec) = crate::envs::spec(&config.run.env) else { return };
    if spec.preset.is_empty() {
        return;
    }
    // Compiled in; every preset is applied and validated by a test below.
    *config = config
        .merged_with_toml(spec.preset)
        .unwrap_or_else(|e| panic!("the {} preset does not apply: {e}", spec.name));
}

/// What `env`'s preset changes, as `(leaf, value)` pairs in declaration order.
pub fn changes(env: &str) -> Vec<(String, serde_json::Value)> {
    let mut base = TrainConfig::default();
    base.run.env = env.to_string();
    let preset = TrainConfig::for_env(env).leaves();
    base.leaves().into_iter().zip(preset).filter(|(a, b)| a != b).map(|(_, b)| b).collect()
}

/// Turns off the preset values of a fresh run that the user's own settings cannot run with
/// (the env's rules, [`crate::envs::EnvSchedule::give_way`]), a note for each; `set_by_user`
/// says whether the user typed a leaf (`env.cassie.cadence`).
pub fn give_way(config: &mut TrainConfig, set_by_user: impl Fn(&str) -> bool) -> Vec<String> {
    with_section(config, set_by_user, |schedule, user| schedule.give_way(user))
}

/// The same for a run continued with `--previous` ([`crate::envs::EnvSchedule::give_way_continued`]).
pub fn continued_gives_way(
    config: &mut TrainConfig,
    set_by_user: impl Fn(&str) -> bool,
) -> Vec<String> {
    with_section(config, set_by_user, |schedule, user| schedule.give_way_continued(user))
}

/// Runs `rule` on the run's env section, with the user's choices as the section sees them
/// (its leaves without the `env.KEY.` prefix).
fn with_section(
    config: &mut TrainConfig,
    set_by_user: impl Fn(&str) -> bool,
    rule: impl FnOnce(&mut dyn crate::envs::EnvSchedule, &UserChoices) -> Vec<String>,
) -> Vec<String> {
    let Some(section) = crate::envs::spec(&config.run.env).ok().and_then(|s| s.section.as_ref())
    else {
        return Vec::new();
    };
    let prefix = format!("env.{}.", section.row.key);
    let typed = |leaf: &str| set_by_user(&format!("{prefix}{leaf}"));
    let user = UserChoices { evaluates: config.eval.num_eval_eps > 0, typed: &typed };
    let env = config.run.env.clone();
    match config.env.schedule_mut(&env) {
        Some(schedule) => rule(schedule, &user),
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::BestBy;
    use crate::envs::cassie::{CassieConfig, CommandKind, Models, ReferenceKind, SimKind};

    /// The leaves of the Cassie preset's values that give way.
    const PERTURBATION_GATE: &str = "env.cassie.robust_start_speed";
    const ROBUST_SHARES: &str = "env.cassie.robust_shares";
    const CADENCE: &str = "env.cassie.cadence";

    #[test]
    fn every_registered_env_has_a_preset_and_presets_are_valid() {
        for spec in crate::envs::ENVS {
            assert!(!changes(spec.name).is_empty(), "{} has no preset", spec.name);
            TrainConfig::for_env(spec.name).validate().unwrap();
        }
    }

    #[test]
    fn the_cassie_preset_sets_what_its_comment_says() {
        let c = TrainConfig::for_env("cassie");
        assert_eq!((c.sampler.traj_len, c.sampler.num_steps), (400, 10_000));
        assert_eq!((c.ppo().mirror, c.net.prenorm, c.net.std), (1.0, true, 0.2));
        assert_eq!((c.ppo().lr_decay, c.env.get::<CassieConfig>().robust_start_speed), (0.9, 0.4));
        assert_eq!(c.env.get::<CassieConfig>().height_target, 0.76);
        assert_eq!(
            (c.env.get::<CassieConfig>().forward_reach, c.env.get::<CassieConfig>().cadence),
            (0.6, 0.2)
        );
        assert_eq!(c.env.get::<CassieConfig>().stage_gate().map(|g| g.not_before), Some(2_000_000));
        let cassie = &c.env.get::<CassieConfig>();
        assert_eq!(
            (cassie.commands, cassie.reference),
            (CommandKind::OmniWalk, ReferenceKind::Omni)
        );
        assert_eq!(
            (cassie.omni_start, cassie.omni_start_speed, cassie.omni_axes),
            (2_000_000, 0.4, 0.5)
        );
        assert_eq!((cassie.robust_start, cassie.robust_ramp), (7_000_000, 1_000_000));
        assert_eq!(c.run.timesteps, 13_000_000);
        assert_eq!((cassie.dt_of(SimKind::Rapier), cassie.dt_of(SimKind::Mujoco)), (0.002, 0.004));
        assert_eq!(c.eval.best_after_settled, 3_000_000);
        assert_eq!((c.eval.best_by, c.eval.selection_episodes), (BestBy::Cells, 3));
        assert_eq!((cassie.push, cassie.push_every, c.eval.selection_push), (0.6, 1.0, 0.45));
        assert!(cassie.gate_conflict().is_none(), "one gate for both stages");
    }

    /// `--sim` replaces a mix whole (its timesteps and shares), so only late shares that no
    /// longer fit the models give way, unless typed.
    #[test]
    fn late_shares_give_way_to_other_models_unless_typed() {
        let mut mujoco = TrainConfig::for_env("cassie");
        let c = mujoco.env.get_mut::<CassieConfig>();
        (c.sim, c.robust_shares) = (Models::one(SimKind::Mujoco), vec![0.6, 0.4]);
        assert!(mujoco.validate().is_err(), "the two together are refused");
        let notes = give_way(&mut mujoco, |k| k == "env.cassie.sim");
        assert_eq!(notes, ["note: --robust-shares 0.6,0.4 is off (--sim mujoco)"]);
        assert!(mujoco.env.get::<CassieConfig>().robust_shares.is_empty());
        mujoco.validate().unwrap();

        let mut typed = TrainConfig::for_env("cassie");
        let c = typed.env.get_mut::<CassieConfig>();
        (c.sim, c.robust_shares) = (Models::one(SimKind::Mujoco), vec![0.6, 0.4]);
        assert!(give_way(&mut typed, |k| k == ROBUST_SHARES).is_empty());
        assert!(typed.validate().is_err(), "typed --robust-shares on one model are refused");

        let mut mixed = TrainConfig::for_env("cassie");
        mixed.env.get_mut::<CassieConfig>().robust_shares = vec![0.6, 0.4];
        assert!(give_way(&mut mixed, |_| false).is_empty());
        mixed.validate().unwrap();
        let mut three = TrainConfig::for_env("cassie");
        three.env.get_mut::<CassieConfig>().robust_shares = vec![0.2, 0.4, 0.4];
        assert_eq!(give_way(&mut three, |_| false).len(), 1, "three shares for two models");
    }

    #[test]
    fn the_cadence_gives_way_to_a_full_gait_unless_typed() {
        let mut full = TrainConfig::for_env("cassie");
        full.env.get_mut::<CassieConfig>().full_gait = true;
        assert!(full.validate().is_err(), "the two together are refused");
        let notes = give_way(&mut full, |k| k == "env.cassie.full_gait");
        assert!(notes.iter().any(|n| n.contains("--cadence 0.2 is off")), "{notes:?}");
        assert_eq!(full.env.get::<CassieConfig>().cadence, 0.0);
        full.validate().unwrap();

        let mut typed = TrainConfig::for_env("cassie");
        typed.env.get_mut::<CassieConfig>().full_gait = true;
        assert!(give_way(&mut typed, |k| k == CADENCE).is_empty());
        assert!(typed.validate().is_err(), "a typed cadence with --full-gait is refused");

        let mut plain = TrainConfig::for_env("cassie");
        assert!(give_way(&mut plain, |_| false).is_empty());
        assert_eq!(plain.env.get::<CassieConfig>().cadence, 0.2);
    }

    #[test]
    fn the_perturbation_gate_gives_way_to_the_users_settings_only_when_it_must() {
        let typed_nothing = |_: &str| false;
        let mut plain = TrainConfig::for_env("cassie");
        assert!(give_way(&mut plain, typed_nothing).is_empty());
        assert_eq!(plain.env.get::<CassieConfig>().robust_start_speed, 0.4);

        let mut no_evals = TrainConfig::for_env("cassie");
        no_evals.eval.num_eval_eps = 0;
        let notes = give_way(&mut no_evals, typed_nothing);
        assert!(
            notes[0].contains("--robust-start-speed 0.4 is off (--num-eval-eps 0"),
            "{notes:?}"
        );
        assert!(notes[1].contains("--omni-start-speed 0.4 is off (--num-eval-eps 0"), "{notes:?}");
        assert_eq!(no_evals.env.get::<CassieConfig>().robust_start_speed, 0.0);
        assert_eq!(no_evals.env.get::<CassieConfig>().omni_start_speed, 0.0);
        no_evals.validate().unwrap();

        // The user's perturbation gate at another speed: the preset's omnidirectional gate
        // gives way, the typed one stays.
        let mut robust = TrainConfig::for_env("cassie");
        robust.env.get_mut::<CassieConfig>().robust_start_speed = 0.6;
        let notes = give_way(&mut robust, |k| k == PERTURBATION_GATE);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("--omni-start-speed 0.4 is off (--robust-start-speed"),
            "{notes:?}"
        );
        assert_eq!(
            (
                robust.env.get::<CassieConfig>().robust_start_speed,
                robust.env.get::<CassieConfig>().omni_start_speed
            ),
            (0.6, 0.0)
        );
        robust.validate().unwrap();

        // The user's omnidirectional gate at the preset's speed shares the one gate; at
        // another speed the preset's gives way.
        let mut shared = TrainConfig::for_env("cassie");
        shared.env.get_mut::<CassieConfig>().commands = crate::envs::cassie::CommandKind::OmniWalk;
        shared.env.get_mut::<CassieConfig>().omni_start_speed = 0.4;
        assert!(give_way(&mut shared, typed_nothing).is_empty());
        assert_eq!(shared.env.get::<CassieConfig>().robust_start_speed, 0.4);
        shared.validate().unwrap();
        let mut omni = shared.clone();
        omni.env.get_mut::<CassieConfig>().omni_start_speed = 0.3;
        assert!(give_way(&mut omni, typed_nothing)[0].contains("--omni-start-speed"));
        assert_eq!(omni.env.get::<CassieConfig>().robust_start_speed, 0.0);
        omni.validate().unwrap();

        let mut typed = TrainConfig::for_env("cassie");
        typed.eval.num_eval_eps = 0;
        let notes = give_way(&mut typed, |k| k == PERTURBATION_GATE);
        assert!(notes.len() == 1 && notes[0].contains("--omni-start-speed"), "{notes:?}");
        assert_eq!(
            typed.env.get::<CassieConfig>().robust_start_speed,
            0.4,
            "a typed gate is not touched"
        );
        assert!(typed.validate().is_err(), "a typed gate without evaluations is refused");
    }
}
