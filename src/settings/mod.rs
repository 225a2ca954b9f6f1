//! Settings declared once, on the ground floor: the [`settings!`](macro@crate::settings) table that
//! gives each setting its field, default, doc and range; the [`Range`] a flag and a file share;
//! and the [`Declared`] list that the command line turns into flags. Any module may declare a
//! section (the trainer's config, an env's task settings) without importing the other.

mod declared;
mod range;
pub mod sections;
mod setting;

/// A bad setting or combination: reported as a usage error (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

pub use declared::{flag_names, plain_alias, Declared};
pub(crate) use range::whole_number;
pub use range::{non_negative_f32, positive_usize, Range, WHOLE_LIMIT};
pub use setting::{Kind, Scalar, Section, Setting, SettingType};

#[doc(hidden)]
pub use setting::{choices, deserializes};
