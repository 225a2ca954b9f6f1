//! Settings where a special value means something other than a count, as in the reference's
//! `train.py`: `--backprop-workers -1` (measure the fastest optimizer thread count at start) and
//! `--save-freq -1` (no numbered checkpoints; 0 means the same). Each is a type, so a config
//! cannot hold `-5`; config files and flags still read and write them as plain integers.

use std::fmt;
use std::num::NonZeroUsize;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `n` (parsed from `s`, at least 1) as a count.
fn positive(s: &str, n: i64) -> Result<NonZeroUsize, String> {
    usize::try_from(n).ok().and_then(NonZeroUsize::new).ok_or_else(|| format!("'{s}' is too large"))
}

/// libtorch threads for the PPO update (`--backprop-workers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
}

impl FromStr for BackpropWorkers {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().parse::<i64>() {
            Ok(-1) => Ok(Self::Auto),
            Ok(n) if n >= 1 => positive(s, n).map(Self::Threads),
            _ => Err(format!("'{s}' is not a thread count (a whole number >= 1, or -1: measure)")),
        }
    }
}

impl fmt::Display for BackpropWorkers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auto => write!(f, "-1"),
            Self::Threads(n) => write!(f, "{n}"),
        }
    }
}

/// Always as an i64, the type [`Deserialize`] reads: formats that are not self-describing
/// (postcard, between MPI ranks) encode u64 and i64 differently.
impl Serialize for BackpropWorkers {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Auto => s.serialize_i64(-1),
            Self::Threads(n) => s.serialize_i64(n.get() as i64),
        }
    }
}

impl<'de> Deserialize<'de> for BackpropWorkers {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = i64::deserialize(d)?;
        v.to_string().parse().map_err(serde::de::Error::custom)
    }
}

/// Numbered checkpoints `actor_{itr}` / `critic_{itr}` (`--save-freq`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
}

impl FromStr for SaveFreq {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().parse::<i64>() {
            Ok(-1 | 0) => Ok(Self::Off),
            Ok(n) if n >= 1 => positive(s, n).map(Self::Every),
            _ => Err(format!("'{s}' is not an iteration count (>= 1, or 0 / -1: never)")),
        }
    }
}

impl fmt::Display for SaveFreq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Off => write!(f, "0"),
            Self::Every(n) => write!(f, "{n}"),
        }
    }
}

/// As an i64, like [`BackpropWorkers`].
impl Serialize for SaveFreq {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Off => s.serialize_i64(0),
            Self::Every(n) => s.serialize_i64(n.get() as i64),
        }
    }
}

impl<'de> Deserialize<'de> for SaveFreq {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = i64::deserialize(d)?;
        v.to_string().parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_values_parse_and_round_trip_as_integers() {
        assert_eq!("-1".parse(), Ok(BackpropWorkers::Auto));
        assert_eq!("3".parse::<BackpropWorkers>().unwrap().to_string(), "3");
        for bad in ["0", "-2", "1.5", "x", ""] {
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
