//! Settings where a special value means something other than a count, as in the reference's
//! `train.py`: `--backprop-workers -1` (measure the fastest optimizer thread count at start) and
//! `--save-freq -1` (no numbered checkpoints; 0 means the same). Each is a type, so a config
//! cannot hold `-5`; config files and flags still read and write them as plain integers.

use std::fmt;
use std::num::NonZeroUsize;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Implements the integer form of a special-value setting from its `TryFrom<i64>` and
/// `From<_> for i64`: its setting type (a signed whole number), parsing a flag (`'s' is not ...` names the text as typed), display, and
/// serde as an i64 in every format (postcard, between MPI ranks, encodes u64 and i64
/// differently, so both directions must use one).
macro_rules! integer_setting {
    ($ty:ty) => {
        impl FromStr for $ty {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, String> {
                // Plain or scientific notation (`1e3`), as counts take it.
                let n = $crate::settings::whole_number(s).ok_or_else(|| <$ty>::refusal(s))?;
                Self::try_from(n).map_err(|_| <$ty>::refusal(s))
            }
        }

        impl $crate::settings::SettingType for $ty {
            const KIND: $crate::settings::Kind = $crate::settings::Kind {
                scalar: $crate::settings::Scalar::Signed,
                list: false,
                optional: false,
            };
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", i64::from(*self))
            }
        }
    };
}

/// `n` as a count when it is at least 1.
fn count(n: i64) -> Option<NonZeroUsize> {
    usize::try_from(n).ok().and_then(NonZeroUsize::new)
}

/// The most libtorch threads `--backprop-workers` asks for: libtorch takes an `i32`, and far
/// past any core count more threads only switch (2^31 panicked in libtorch, 100000 crashed it).
pub const MAX_BACKPROP_THREADS: usize = 1024;

/// libtorch threads for the PPO update (`--backprop-workers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "i64", try_from = "i64")]
pub enum BackpropWorkers {
    /// `-1`: time a few optimizer steps at 1..=cores threads at start and use the fastest
    /// (printed, and recorded in `experiment.json`).
    Auto,
    /// This many threads.
    Threads(NonZeroUsize),
}

impl BackpropWorkers {
    /// One thread: on a shared 2-core machine 2 libtorch threads were measured 10-100x slower
    /// under load (docs/benchmarks.md), and 1 never collapses.
    pub const ONE: Self = Self::Threads(NonZeroUsize::MIN);

    fn refusal(s: &str) -> String {
        format!(
            "'{s}' is not a thread count (a whole number in [1, {MAX_BACKPROP_THREADS}], or -1: \
             measure)"
        )
    }
}

impl TryFrom<i64> for BackpropWorkers {
    type Error = String;

    fn try_from(n: i64) -> Result<Self, String> {
        match n {
            -1 => Ok(Self::Auto),
            n => count(n)
                .filter(|n| n.get() <= MAX_BACKPROP_THREADS)
                .map(Self::Threads)
                .ok_or_else(|| Self::refusal(&n.to_string())),
        }
    }
}

impl From<BackpropWorkers> for i64 {
    fn from(v: BackpropWorkers) -> i64 {
        match v {
            BackpropWorkers::Auto => -1,
            BackpropWorkers::Threads(n) => n.get() as i64,
        }
    }
}

integer_setting!(BackpropWorkers);

/// Numbered checkpoints `actor_{itr}` / `critic_{itr}` (`--save-freq`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "i64", try_from = "i64")]
pub enum SaveFreq {
    /// `0` or `-1`: none (only the best and the latest weights).
    Off,
    /// Every this many iterations.
    Every(NonZeroUsize),
}

impl SaveFreq {
    /// Whether iteration `itr` writes numbered checkpoints.
    pub fn saves(self, itr: u64) -> bool {
        match self {
            Self::Off => false,
            Self::Every(n) => itr.is_multiple_of(n.get() as u64),
        }
    }

    fn refusal(s: &str) -> String {
        format!("'{s}' is not an iteration count (>= 1, or 0 / -1: never)")
    }
}

impl TryFrom<i64> for SaveFreq {
    type Error = String;

    fn try_from(n: i64) -> Result<Self, String> {
        match n {
            -1 | 0 => Ok(Self::Off),
            n => count(n).map(Self::Every).ok_or_else(|| Self::refusal(&n.to_string())),
        }
    }
}

impl From<SaveFreq> for i64 {
    fn from(v: SaveFreq) -> i64 {
        match v {
            SaveFreq::Off => 0,
            SaveFreq::Every(n) => n.get() as i64,
        }
    }
}

integer_setting!(SaveFreq);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_values_parse_and_round_trip_as_integers() {
        assert_eq!("-1".parse(), Ok(BackpropWorkers::Auto));
        assert_eq!("3".parse::<BackpropWorkers>().unwrap().to_string(), "3");
        assert_eq!("1e3".parse::<SaveFreq>().unwrap().to_string(), "1000", "as counts take it");
        for bad in ["0", "-2", "1.5", "x", "", "1025", "2147483648", "4294967297"] {
            assert!(bad.parse::<BackpropWorkers>().is_err(), "{bad}");
        }
        assert_eq!("-1".parse(), Ok(SaveFreq::Off));
        assert_eq!("0".parse(), Ok(SaveFreq::Off));
        let five: SaveFreq = "5".parse().unwrap();
        assert!(five.saves(10) && !five.saves(11) && !SaveFreq::Off.saves(10));
        for bad in ["-2", "2.5", "many"] {
            assert!(bad.parse::<SaveFreq>().is_err(), "{bad}");
        }
        assert_eq!(serde_json::to_string(&BackpropWorkers::Auto).unwrap(), "-1");
        assert_eq!(serde_json::from_str::<SaveFreq>("-1").unwrap(), SaveFreq::Off);
        assert_eq!(serde_json::from_str::<BackpropWorkers>("2").unwrap().to_string(), "2");
        assert!(serde_json::from_str::<BackpropWorkers>("0").is_err());
        // Through postcard, as the config travels to MPI ranks: every value comes back.
        #[cfg(feature = "mpi")]
        {
            for v in [BackpropWorkers::Auto, BackpropWorkers::ONE, "7".parse().unwrap()] {
                let bytes = postcard::to_allocvec(&v).unwrap();
                assert_eq!(postcard::from_bytes::<BackpropWorkers>(&bytes).unwrap(), v);
            }
            for v in [SaveFreq::Off, five] {
                let bytes = postcard::to_allocvec(&v).unwrap();
                assert_eq!(postcard::from_bytes::<SaveFreq>(&bytes).unwrap(), v);
            }
        }
    }
}
