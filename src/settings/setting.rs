//! Each setting declared once. A config section is written as one [`settings!`](macro@crate::settings)
//! table: per setting its doc, type, default and range, in one row. From that row come the
//! struct field (with its serde attributes), the section's `Default`, and a [`Setting`]: the
//! description from which the command line derives the flag, its help and its parser, and from
//! which [`crate::config::TrainConfig::validate`] checks a config file's value with the very check the
//! flag applies.
//!
//! Measured by what a new setting touches: one row (the closing note of issue 28 shows the diff
//! of one). The alternative of clap's derive on the config types was set aside because clap
//! knows an `Option<usize>` setting (`workers`) only as an optional flag, so "unset" and "not
//! typed" would have been one state, and config files would have had no range checks of their
//! own.

use clap::builder::PossibleValue;
use clap::ValueEnum;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::range::{whole_number, Range};

/// One setting of a section: what the command line and the config checks need to know.
#[derive(Debug, Clone, Copy)]
pub struct Setting {
    /// The field name, the key in its TOML section.
    pub name: &'static str,
    /// The field's doc comment, one `\n`-ended line per source line.
    pub doc: &'static str,
    /// How a typed value reads.
    pub kind: Kind,
    /// What each number of the value must be (every element of a list).
    pub range: Option<Range>,
    /// Whether a JSON value is one of the field's type (deserializes into it).
    pub check_type: fn(&Value) -> Result<(), String>,
}

/// The shape of a setting's values, from its Rust type ([`SettingType`]).
#[derive(Debug, Clone, Copy)]
pub struct Kind {
    /// The kind of one value.
    pub scalar: Scalar,
    /// `Vec<T>`: comma-separated on the command line.
    pub list: bool,
    /// `Option<T>`: may be unset (then it has no default to show).
    pub optional: bool,
}

/// One value of a setting.
#[derive(Debug, Clone, Copy)]
pub enum Scalar {
    /// A floating-point number.
    Float,
    /// A whole number >= 0, typed plainly or in scientific notation (`1e4`).
    Whole,
    /// A whole number that may be negative (the special values `-1`).
    Signed,
    /// `true` or `false`; a bare flag means `true`.
    Switch,
    /// Text or a path.
    Text,
    /// One of the named values of a `clap::ValueEnum`.
    Choice(fn() -> Vec<PossibleValue>),
}

/// A type a setting can have.
pub trait SettingType: DeserializeOwned {
    /// How values of this type read.
    const KIND: Kind;
}

const fn scalar(scalar: Scalar) -> Kind {
    Kind { scalar, list: false, optional: false }
}

macro_rules! setting_types {
    ($($ty:ty => $scalar:expr),* $(,)?) => {
        $(impl SettingType for $ty {
            const KIND: Kind = scalar($scalar);
        })*
    };
}

setting_types! {
    f64 => Scalar::Float,
    usize => Scalar::Whole,
    u64 => Scalar::Whole,
    bool => Scalar::Switch,
    String => Scalar::Text,
    std::path::PathBuf => Scalar::Text,
}

impl<T: SettingType> SettingType for Option<T> {
    const KIND: Kind = Kind { optional: true, ..T::KIND };
}

impl<T: SettingType> SettingType for Vec<T> {
    const KIND: Kind = Kind { list: true, ..T::KIND };
}

/// The named values of a `ValueEnum` (a [`Scalar::Choice`]).
pub fn choices<E: ValueEnum>() -> Vec<PossibleValue> {
    E::value_variants().iter().filter_map(ValueEnum::to_possible_value).collect()
}

/// Makes value enums setting types: `choice_settings!(Arch, Nonlinearity)`.
#[macro_export]
macro_rules! choice_settings {
    ($($ty:ty),* $(,)?) => {
        $(impl $crate::settings::SettingType for $ty {
            const KIND: $crate::settings::Kind = $crate::settings::Kind {
                scalar: $crate::settings::Scalar::Choice($crate::settings::choices::<$ty>),
                list: false,
                optional: false,
            };
        })*
    };
}

/// [`Setting::check_type`] for a field of type `T`.
pub fn deserializes<T: DeserializeOwned>(value: &Value) -> Result<(), String> {
    serde_json::from_value::<T>(value.clone()).map(drop).map_err(|e| e.to_string())
}

impl Setting {
    /// One value as typed on the command line (a list's element, one at a time), checked as a
    /// config file's value is: its range, and (not for list elements, checked whole later) its
    /// type. Errors name the text: `'0' is not a positive number`.
    pub fn parse(&self, s: &str) -> Result<Value, String> {
        let value = self.kind.scalar.read(s, self.range)?;
        self.check_numbers(&value).map_err(|_| self.refusal(s))?;
        if !self.kind.list {
            (self.check_type)(&value).map_err(|e| refusal_of_type(s, &e))?;
        }
        Ok(value)
    }

    /// A value from a config file or a stored run: its type, then every number's range.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        (self.check_type)(value)?;
        self.check_numbers(value)
    }

    fn check_numbers(&self, value: &Value) -> Result<(), String> {
        let Some(range) = self.range else { return Ok(()) };
        match value {
            Value::Number(n) => {
                let v = n.as_f64().unwrap_or(f64::NAN);
                if range.holds(v) {
                    Ok(())
                } else {
                    Err(format!("{}: not {}", short_number(v), range.phrase()))
                }
            }
            Value::Array(items) => items.iter().try_for_each(|v| self.check_numbers(v)),
            _ => Ok(()),
        }
    }

    fn refusal(&self, s: &str) -> String {
        match self.range {
            Some(range) => format!("'{s}' is not {}", range.phrase()),
            None => format!("'{s}' is not a valid value"),
        }
    }

    /// The doc's first sentence on one line (short help).
    pub fn summary(&self) -> String {
        let text = self.help();
        match text.find(". ") {
            Some(end) => text[..=end].to_string(),
            None => text,
        }
    }

    /// The whole doc on one line, rustdoc links and code marks removed (long help).
    pub fn help(&self) -> String {
        let words: Vec<&str> = self.doc.split_whitespace().collect();
        words.join(" ").replace("[`", "").replace("`]", "").replace('`', "")
    }
}

/// A serde refusal of a typed value, in the flag's words.
fn refusal_of_type(s: &str, serde: &str) -> String {
    // The special-value types refuse with their own sentence ("'-5' is not a thread count
    // ..."); serde's other messages name the type ("invalid value: ..., expected ...").
    if serde.starts_with('\'') {
        serde.to_string()
    } else {
        format!("'{s}': {serde}")
    }
}

/// `v` as a person reads it: plain where that is short, else in scientific notation (`1e-300`
/// rather than a 302-digit decimal).
fn short_number(v: f64) -> String {
    let plain = v.to_string();
    if plain.len() <= 16 {
        plain
    } else {
        format!("{v:e}")
    }
}

impl Scalar {
    /// `s` as this kind of JSON value; numbers outside `range` are refused in its words.
    fn read(self, s: &str, range: Option<Range>) -> Result<Value, String> {
        let phrase = |what: &str| match range {
            Some(range) => format!("'{s}' is not {}", range.phrase()),
            None => format!("'{s}' is not {what}"),
        };
        match self {
            Scalar::Float => match s.trim().parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(Value::from(v)),
                _ => Err(phrase("a finite number")),
            },
            // Below 2^63, so that the run's own `config.toml` can hold it.
            Scalar::Whole => match whole_number(s) {
                Some(n) if n >= 0 => Ok(Value::from(n as u64)),
                _ => Err(phrase("a whole number in [0, 9.2e18)")),
            },
            Scalar::Signed => {
                whole_number(s).map(Value::from).ok_or_else(|| phrase("a whole number"))
            }
            Scalar::Switch => match s.trim() {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                _ => Err(format!("'{s}' is not true or false")),
            },
            Scalar::Text => Ok(Value::String(s.to_string())),
            Scalar::Choice(values) => values()
                .iter()
                .find(|v| v.matches(s, false))
                .map(|v| Value::String(v.get_name().to_string()))
                .ok_or_else(|| {
                    let names: Vec<String> =
                        values().iter().map(|v| v.get_name().to_string()).collect();
                    format!("'{s}' is not one of {}", names.join(", "))
                }),
        }
    }
}

/// A section of the config: a struct declared with [`settings!`](macro@crate::settings).
pub trait Section {
    /// Its heading in `--help`.
    const HEADING: &'static str;
    /// Its settings, in declaration order.
    const SETTINGS: &'static [Setting];

    /// The setting of this name (a name the section does not declare is a bug: it panics).
    fn setting(name: &str) -> &'static Setting {
        Self::SETTINGS
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name} is not a setting of {}", Self::HEADING))
    }
}

/// Declares a config section: the struct, its `Default`, and its [`Section`] impl, one row per
/// setting:
///
/// ```ignore
/// settings! {
///     /// How experience is collected.
///     #[serde(deny_unknown_fields)]
///     pub struct SamplerConfig("Sampler") {
///         /// Maximum episode length (train and eval).
///         traj_len: usize = 300, Range::Count;
///         /// Sampler actors (unset: available cores).
///         workers: Option<usize> = None, Range::Count;
///     }
/// }
/// ```
///
/// A row is the field's doc (also its help), `#[serde(..)]` attributes if any, `name: Type =
/// default`, and optionally `, range` (a [`Range`] every number of the value must hold).
#[macro_export]
macro_rules! settings {
    (
        $(#[doc = $sdoc:literal])*
        $(#[serde($($sattr:tt)*)])*
        pub struct $name:ident($heading:literal) {
            $(
                $(#[doc = $doc:literal])*
                $(#[serde($($fattr:tt)*)])*
                $field:ident : $ty:ty = $default:expr $(, $range:expr)?;
            )*
        }
    ) => {
        $(#[doc = $sdoc])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        $(#[serde($($sattr)*)])*
        pub struct $name {
            $(
                $(#[doc = $doc])*
                $(#[serde($($fattr)*)])*
                pub $field: $ty,
            )*
        }

        impl Default for $name {
            fn default() -> Self {
                Self { $($field: $default,)* }
            }
        }

        impl $crate::settings::Section for $name {
            const HEADING: &'static str = $heading;
            const SETTINGS: &'static [$crate::settings::Setting] = &[$(
                $crate::settings::Setting {
                    name: stringify!($field),
                    doc: concat!($($doc, "\n",)*),
                    kind: <$ty as $crate::settings::SettingType>::KIND,
                    range: $crate::__setting_range!($($range)?),
                    check_type: $crate::settings::deserializes::<$ty>,
                },
            )*];
        }
    };
}

/// A row's optional range as an `Option<Range>` (for [`settings!`](macro@crate::settings)).
#[doc(hidden)]
#[macro_export]
macro_rules! __setting_range {
    () => {
        None
    };
    ($range:expr) => {
        Some($range)
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::settings! {
        /// A section for the tests.
        #[serde(deny_unknown_fields)]
        pub struct Demo("Demo") {
            /// A rate. Its second sentence.
            rate: f64 = 0.5, Range::Unit;
            /// Widths.
            widths: Vec<usize> = vec![2, 3], Range::Count;
            /// Maybe a count.
            #[serde(default)]
            maybe: Option<u64> = None;
            /// A switch.
            on: bool = false;
        }
    }

    fn setting(name: &str) -> Setting {
        *Demo::SETTINGS.iter().find(|s| s.name == name).expect("declared")
    }

    #[test]
    fn a_row_declares_the_field_its_default_and_its_setting() {
        let demo = Demo::default();
        assert_eq!(
            (demo.rate, demo.widths.clone(), demo.maybe, demo.on),
            (0.5, vec![2, 3], None, false)
        );
        let names: Vec<&str> = Demo::SETTINGS.iter().map(|s| s.name).collect();
        assert_eq!(names, ["rate", "widths", "maybe", "on"]);
        let rate = setting("rate");
        assert_eq!(rate.summary(), "A rate.");
        assert_eq!(rate.help(), "A rate. Its second sentence.");
        assert!(setting("widths").kind.list && setting("maybe").kind.optional);
    }

    #[test]
    fn flags_and_files_share_one_check() {
        let rate = setting("rate");
        assert_eq!(rate.parse("0.25"), Ok(Value::from(0.25)));
        assert_eq!(rate.parse("1.5").unwrap_err(), "'1.5' is not a number in [0, 1]");
        assert!(rate.parse("nan").is_err() && rate.parse("x").is_err());
        assert!(rate.check(&Value::from(1.5)).unwrap_err().contains("not a number in [0, 1]"));
        assert!(rate.check(&Value::from("big")).is_err(), "a type check");
        let widths = setting("widths");
        assert_eq!(widths.parse("1e2"), Ok(Value::from(100u64)));
        assert!(widths.parse("0").is_err() && widths.parse("1.5").is_err());
        assert!(widths.check(&serde_json::json!([4, 0])).is_err());
        assert!(widths.check(&serde_json::json!([4, 5])).is_ok());
        // Whole numbers stop below 2^63, what a TOML file can hold (the run's config.toml).
        let top = i64::MAX.to_string();
        assert_eq!(setting("maybe").parse(&top), Ok(Value::from(i64::MAX as u64)));
        assert!(setting("maybe").parse("18446744073709551615").is_err());
        assert!(setting("maybe").check(&Value::Null).is_ok(), "unset");
        assert_eq!(setting("on").parse("false"), Ok(Value::Bool(false)));
        assert!(setting("on").parse("yes").is_err());
    }
}
