//! The settings a config declares, gathered with their paths (`ppo.kl`, `env.cassie.sim_dt`),
//! and the flag each gets: plain where its name is unique, qualified by its section where two
//! sections share a name.

use super::{Section, Setting};

/// A setting as the config declares it: where it lives and its section's help heading.
#[derive(Debug, Clone)]
pub struct Declared {
    /// Its path: `ppo.kl`, `env.cassie.sim_dt`.
    pub path: String,
    /// The section's heading in `--help`.
    pub heading: &'static str,
    /// The setting's description.
    pub setting: &'static Setting,
}

impl Declared {
    /// Appends section `S`'s settings under `path`.
    pub fn section<S: Section>(path: &str, out: &mut Vec<Declared>) {
        out.extend(S::SETTINGS.iter().map(|setting| Declared {
            path: format!("{path}.{}", setting.name),
            heading: S::HEADING,
            setting,
        }));
    }
}

/// The flag of each setting, without the dashes: its name with dashes (`batch-size`), unless
/// two sections declare that name; then each of those is qualified by its section
/// (`cassie-sim-dt`, its path's second-to-last part), so no flag is ambiguous. The first one
/// declared also keeps the plain name as an alias ([`plain_alias`]), so a command typed before
/// the second section existed still means what it meant.
pub fn flag_names(declared: &[Declared]) -> Vec<String> {
    declared
        .iter()
        .map(|d| {
            let name = d.setting.name.replace('_', "-");
            if declared.iter().filter(|o| o.setting.name == d.setting.name).count() == 1 {
                return name;
            }
            let section = d.path.rsplit('.').nth(1).unwrap_or_default();
            format!("{section}-{name}")
        })
        .collect()
}

/// For a setting whose flag [`flag_names`] qualified: its plain name, when it is the first
/// declared of that name.
pub fn plain_alias(declared: &[Declared], index: usize) -> Option<String> {
    let name = declared[index].setting.name;
    let first = declared.iter().position(|d| d.setting.name == name)?;
    let shared = declared.iter().filter(|d| d.setting.name == name).count() > 1;
    (shared && first == index).then(|| name.replace('_', "-"))
}
