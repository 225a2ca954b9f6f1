//! `gait train ppo|a2c` flags and how they become a [`TrainJob`].
//!
//! Every setting's flag is derived from its row in the config ([`crate::settings`]):
//! the name, the help (the row's doc, its first sentence for `-h`), the global default, and the
//! parser (the row's check). A flag is "typed" when clap saw it on the command line, so a
//! preset or a `--previous` run is never overridden by a default. The effective config is
//! layered, later layers winning:
//! defaults → the env preset, or the `--previous` run's config → `--config FILE.toml` → typed
//! flags. Flag names and spellings follow roadrunner (`train.py`, `algo/ppo.py`,
//! `nn_factory.py`); help shows the global defaults, and `--print-config` the effective values.

use std::marker::PhantomData;
use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Args, FromArgMatches};
use serde_json::Value;

use crate::config::{presets, Algo, Start, TrainConfig, TrainJob, UsageError, Weights};
use crate::envs::cassie::CassieConfig;
use crate::settings::{flag_names, plain_alias, Declared, Scalar, Section};

/// How `gait train ALGO` starts: the flags besides the settings.
#[derive(Debug, Clone, Default, Args)]
pub struct StartFlags {
    /// Read settings from this TOML file (the format of `--print-config` and of a run's
    /// config.toml). Keys it names override the preset or the --previous run; typed flags
    /// override the file.
    #[arg(long, value_name = "FILE.toml", help_heading = "Run")]
    pub config: Option<PathBuf>,
    /// Print the effective config (presets, --previous, --config and flags applied) as TOML
    /// and exit without training.
    #[arg(long, help_heading = "Run")]
    pub print_config: bool,
    /// Continue from this run directory: networks, normalizer, Adam states, iteration and
    /// counters; settings not typed take the previous run's values.
    #[arg(long, help_heading = "Run")]
    pub previous: Option<PathBuf>,
    /// With --previous: start from its best-eval weights (actor/critic.safetensors) with fresh
    /// Adam state, instead of its latest state.
    #[arg(long, requires = "previous", help_heading = "Run")]
    pub previous_best: bool,
    /// With --previous: continue exactly from the state it kept after this iteration
    /// (--resume-freq), instead of its latest: a branch from the middle of the run, whose rows
    /// equal the previous run's until a changed setting makes them differ.
    #[arg(
        long,
        value_name = "ITR",
        requires = "previous",
        conflicts_with = "previous_best",
        help_heading = "Run"
    )]
    pub previous_iteration: Option<u64>,
}

/// Flags of `gait train ALGO`: how to start, the algorithm (the subcommand), and the settings
/// typed, one flag per declared setting of the algorithm's scope (its own section and the
/// shared ones).
#[derive(Debug, Clone, Default)]
pub struct TrainFlags {
    /// How to start.
    pub start: StartFlags,
    /// The algorithm: the subcommand.
    pub algo: Algo,
    /// The settings typed, as `(path, value)`.
    pub typed: Vec<(String, Value)>,
}

/// `gait train`'s subcommands: one per row of the algorithm catalog
/// ([`crate::algos::catalog::ALGOS`]), built from the row.
#[derive(Debug)]
pub struct TrainCommand(pub TrainFlags);

impl FromArgMatches for TrainCommand {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let missing = || clap::Error::new(clap::error::ErrorKind::MissingSubcommand);
        let (name, matches) = matches.subcommand().ok_or_else(missing)?;
        let algo = Algo::named(name).ok_or_else(missing)?;
        let start = StartFlags::from_arg_matches(matches)?;
        let typed = typed_settings(matches, |p| of_algorithm(algo, p))?;
        Ok(Self(TrainFlags { start, algo, typed }))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Subcommand for TrainCommand {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        Algo::all().fold(cmd, |cmd, algo| {
            // The row's line after the start flags, whose struct doc clap would show.
            let sub = StartFlags::augment_args(clap::Command::new(algo.name()))
                .about(algo.spec().about)
                .long_about(None)
                .allow_negative_numbers(true);
            cmd.subcommand(setting_args(sub, |p| of_algorithm(algo, p)))
        })
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        Algo::named(name).is_some()
    }
}

/// Which declared settings a command takes as flags.
pub trait Scope {
    /// Whether the setting at `path` is one of them.
    fn includes(path: &str) -> bool;
}

/// Whether `path` is a setting of `algo`'s subcommand: not another algorithm's, not
/// `run.algo`.
pub(super) fn of_algorithm(algo: Algo, path: &str) -> bool {
    let own = path.starts_with(&algo.prefix());
    let other = Algo::all().any(|a| path.starts_with(&a.prefix()));
    path != "run.algo" && (own || !other)
}

/// The env sections' settings (`gait bench env`).
#[derive(Debug, Clone, Copy, Default)]
pub struct EnvSettings;

impl Scope for EnvSettings {
    fn includes(path: &str) -> bool {
        path.starts_with("env.")
    }
}

/// The settings typed on the command line, as `(path, value)`: one flag per declared setting
/// (`crate::config::Setting`), its name, help, default and parser derived from the setting's
/// row. A value is checked by the setting's own check, the one config files get.
#[derive(Debug, Clone, Default)]
pub struct SettingFlags<S> {
    /// The settings typed, as `(path, value)`.
    pub typed: Vec<(String, Value)>,
    scope: PhantomData<S>,
}

/// The reference's spellings, kept as aliases: `--env-name`, `--learn-stddev`.
const REFERENCE_SPELLINGS: &[(&str, &str)] =
    &[("run.env", "env-name"), ("net.learn_std", "learn-stddev")];

/// The flag of the setting at `path`, without dashes (`num-steps`), as the subcommand that
/// takes it spells it (each algorithm's settings beside the shared ones).
pub fn flag_of(path: &str) -> String {
    let algo = Algo::all().find(|a| path.starts_with(&a.prefix()));
    let scoped = |p: &str| of_algorithm(algo.unwrap_or_default(), p);
    let declared: Vec<Declared> =
        TrainConfig::settings().into_iter().filter(|d| scoped(&d.path)).collect();
    let at = declared.iter().position(|d| d.path == path);
    at.map_or_else(|| path.replace('_', "-"), |i| flag_names(&declared)[i].clone())
}

/// The flag of one declared setting.
fn arg(d: &Declared, flag: &str, alias: Option<String>, default: Option<&Value>) -> Arg {
    let setting = d.setting;
    let default = default.filter(|v| !v.is_null() && !v.is_boolean()).map(shown);
    let with_default = |text: String| match &default {
        Some(v) => format!("{text} [default: {v}]"),
        None => text,
    };
    let mut arg = Arg::new(d.path.clone())
        .long(flag.to_string())
        .help(with_default(setting.summary()))
        .long_help(with_default(setting.help()))
        .help_heading(d.heading)
        .value_name(setting.name.to_uppercase())
        .action(ArgAction::Set)
        .value_parser(move |s: &str| setting.parse(s));
    match setting.kind.scalar {
        Scalar::Switch => {
            arg = arg.num_args(0..=1).default_missing_value("true").value_name("BOOL");
        }
        Scalar::Signed => arg = arg.allow_negative_numbers(true),
        Scalar::Choice(values) => {
            arg = arg.value_parser(PossibleValuesParser::new(values()).map(Value::String));
        }
        Scalar::Float | Scalar::Whole | Scalar::Text => {}
    }
    if setting.kind.list {
        arg = arg.value_delimiter(',');
    }
    if let Some(alias) = alias {
        arg = arg.alias(alias);
    }
    for (_, spelling) in REFERENCE_SPELLINGS.iter().filter(|(p, _)| *p == d.path) {
        arg = arg.alias(*spelling);
    }
    arg
}

impl<S: Scope> Args for SettingFlags<S> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        setting_args(cmd, S::includes)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl<S: Scope> FromArgMatches for SettingFlags<S> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self { typed: typed_settings(matches, S::includes)?, scope: PhantomData })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

/// `cmd` with one flag per declared setting that `includes` takes.
fn setting_args(mut cmd: clap::Command, includes: impl Fn(&str) -> bool) -> clap::Command {
    let declared: Vec<Declared> =
        TrainConfig::settings().into_iter().filter(|d| includes(&d.path)).collect();
    let flags = flag_names(&declared);
    let defaults = TrainConfig::default().leaves();
    for (i, d) in declared.iter().enumerate() {
        let default = defaults.iter().find(|(k, _)| *k == d.path).map(|(_, v)| v);
        cmd = cmd.arg(arg(d, &flags[i], plain_alias(&declared, i), default));
    }
    cmd
}

/// The settings that `includes` takes and the command line typed, as `(path, value)`.
fn typed_settings(
    matches: &ArgMatches,
    includes: impl Fn(&str) -> bool,
) -> Result<Vec<(String, Value)>, clap::Error> {
    let mut typed = Vec::new();
    for d in TrainConfig::settings().into_iter().filter(|d| includes(&d.path)) {
        if matches.value_source(&d.path) != Some(ValueSource::CommandLine) {
            continue;
        }
        let values = matches.try_get_many::<Value>(&d.path).map_err(|e| {
            clap::Error::raw(clap::error::ErrorKind::ValueValidation, e.to_string())
        })?;
        let mut values: Vec<Value> = values.into_iter().flatten().cloned().collect();
        let value = if d.setting.kind.list {
            Value::Array(values)
        } else {
            values.pop().unwrap_or(Value::Null)
        };
        typed.push((d.path, value));
    }
    Ok(typed)
}

/// A number flag of another command with the range of the Cassie setting `name` (`gait eval
/// --push` takes what `--push` takes in training).
pub(super) fn cassie_number(
    name: &'static str,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |s: &str| {
        let value = CassieConfig::setting(name).parse(s)?;
        value.as_f64().ok_or_else(|| format!("'{s}' is not a number"))
    }
}

/// A leaf value as a user would type it: `0.2`, `cassie`, `256,256`.
pub fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(shown).collect::<Vec<_>>().join(","),
        Value::Null => "(unset)".to_string(),
        other => other.to_string(),
    }
}

/// The job these flags ask for, plus notes for the user (applied preset, settings that
/// differ from a `--previous` run).
pub fn resolve(flags: &TrainFlags) -> anyhow::Result<(TrainJob, Vec<String>)> {
    let mut typed = flags.typed.clone();
    typed.push(("run.algo".to_string(), Value::String(flags.algo.name().to_string())));
    let start = &flags.start;
    let from_file = match &start.config {
        Some(path) => TrainConfig::leaves_in_toml(&read_config_file(path)?)
            .map_err(|e| UsageError(format!("--config {}: {e}", path.display())))?,
        None => Vec::new(),
    };
    let layers = Layers { typed, from_file, file: start.config.as_deref(), algo: flags.algo };
    match &start.previous {
        None => fresh(&layers),
        Some(dir) => {
            let weights = match (start.previous_iteration, start.previous_best) {
                (Some(itr), _) => Weights::Iteration(itr),
                (None, true) => Weights::Best,
                (None, false) => Weights::Latest,
            };
            continued(&layers, dir, weights)
        }
    }
}

/// The settings the user gave: a `--config` file's and the typed flags'.
struct Layers<'a> {
    typed: Vec<(String, Value)>,
    from_file: Vec<(String, Value)>,
    file: Option<&'a std::path::Path>,
    algo: Algo,
}

impl Layers<'_> {
    /// Whether the user set the setting at `key` (in the file or as a flag).
    fn set_by_user(&self, key: &str) -> bool {
        self.typed.iter().chain(&self.from_file).any(|(k, _)| k == key)
    }

    /// `base` with the file's settings and then the flags on top.
    fn over(&self, base: &TrainConfig) -> Result<TrainConfig, UsageError> {
        let file = base.with_leaves(&self.from_file).map_err(|e| {
            let path = self.file.unwrap_or_else(|| std::path::Path::new(""));
            UsageError(format!("--config {}: {e}", path.display()))
        })?;
        file.with_leaves(&self.typed).map_err(|e| UsageError(e.to_string()))
    }
}

/// A fresh run: defaults, the env's preset (noted), the file, the flags.
fn fresh(layers: &Layers) -> anyhow::Result<(TrainJob, Vec<String>)> {
    let mut notes = Vec::new();
    let env = layers.over(&TrainConfig::default())?.run.env;
    let applied: Vec<String> = presets::changes(&env)
        .into_iter()
        .filter(|(k, _)| !layers.set_by_user(k) && of_algorithm(layers.algo, k))
        .map(|(k, v)| format!("{}={}", flag_of(&k), shown(&v)))
        .collect();
    if !applied.is_empty() {
        notes.push(format!("env '{env}' preset: {}", applied.join(" ")));
    }
    let mut config = layers.over(&TrainConfig::for_env(&env))?;
    notes.extend(presets::give_way(&mut config, |k| layers.set_by_user(k)));
    config.validate()?;
    notes.extend(config.advice());
    Ok((TrainJob { config, start: Start::Fresh }, notes))
}

/// A continuation of the run in `dir`: its settings, the file, the flags; every setting that
/// changes is a warning.
fn continued(
    layers: &Layers,
    dir: &std::path::Path,
    weights: Weights,
) -> anyhow::Result<(TrainJob, Vec<String>)> {
    let prev = crate::logging::load_previous(dir)?.config;
    if prev.run.algo != layers.algo {
        let algo = prev.run.algo.name();
        let why = format!(
            "--previous {} trained with {algo}: continue it with `gait train {algo}`",
            dir.display()
        );
        return Err(UsageError(why).into());
    }
    let typed_env = layers.typed.iter().find(|(k, _)| k == "run.env").and_then(|(_, v)| v.as_str());
    if let Some(env) = typed_env.filter(|e| *e != prev.run.env) {
        let why =
            format!("--previous {} is a run of env '{}', not '{env}'", dir.display(), prev.run.env);
        return Err(UsageError(why).into());
    }
    let mut base = prev.clone();
    base.run.run_name = None;
    let mut config = layers.over(&base)?;
    // The continued run's values that cannot run with what the user changed (an env's
    // `EnvSchedule::give_way_continued`: Cassie's late shares on other models) go, with a
    // note, unless typed.
    let mut notes = presets::continued_gives_way(&mut config, |k| layers.set_by_user(k));
    if let Err(e) = config.validate() {
        if prev.validate().is_err() {
            anyhow::bail!(
                "--previous {}: its experiment.json holds a value this gait refuses ({e}); fix \
                 the file or type the flag",
                dir.display()
            );
        }
        return Err(e.into());
    }
    notes.extend(changes(&prev, &config));
    notes.extend(config.advice());
    Ok((TrainJob { config, start: Start::Continue { dir: dir.to_path_buf(), weights } }, notes))
}

/// A warning per setting of `config` that differs from `prev`'s (the run name and the worker
/// count aside: neither changes the numbers).
fn changes(prev: &TrainConfig, config: &TrainConfig) -> Vec<String> {
    config
        .changed_from(prev)
        .into_iter()
        .filter(|(key, _, _)| key != "run.run_name" && key != "sampler.workers")
        .map(|(key, before, value)| {
            let before = before.as_ref().map_or("(new setting)".into(), shown);
            format!("warning: {}: {before} -> {}", flag_of(&key), shown(&value))
        })
        .collect()
}

/// The text of `--config FILE`; a missing or unreadable file is a usage error.
fn read_config_file(path: &std::path::Path) -> Result<String, UsageError> {
    crate::fsutil::read_text(path)
        .map_err(|e| UsageError(format!("--config {}: cannot read it: {e}", path.display())))
}
