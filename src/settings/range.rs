//! Value checks shared by the command line (clap value parsers) and config files
//! ([`crate::config::TrainConfig::validate`]), so a value refused as a flag is refused in a file too.

/// 2⁶³: whole-number settings stay below it, so every value a flag takes is one a run's own
/// `config.toml` can hold (TOML integers are 64-bit signed).
pub const WHOLE_LIMIT: f64 = 9_223_372_036_854_775_808.0;

/// `s` as a whole number, in plain or scientific notation (`2000`, `1e4`, `-1`), when it is one
/// below 2^63 in size ([`WHOLE_LIMIT`]): the one reader of whole numbers for flags and the
/// special-value settings.
pub(crate) fn whole_number(s: &str) -> Option<i64> {
    let t = s.trim();
    t.parse::<i64>().ok().or_else(|| match t.parse::<f64>() {
        Ok(v) if v.is_finite() && v.fract() == 0.0 && v.abs() < WHOLE_LIMIT => Some(v as i64),
        _ => None,
    })
}

/// What a numeric setting accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// Finite and > 0.
    Positive,
    /// Finite and >= 0.
    NonNegative,
    /// In [0, 1].
    Unit,
    /// A whole number >= 1.
    Count,
    /// Any whole number >= 0.
    Natural,
    /// Finite, > 0 and at most `f32::MAX`: a setting that becomes an f32 tensor or scalar
    /// (a larger one panicked in libtorch's conversion).
    PositiveF32,
    /// Finite, >= 0 and at most `f32::MAX`.
    NonNegativeF32,
    /// Finite and in `[lo, hi]`; `what` names the range in errors ("a push speed in [0, 5]
    /// m/s").
    Within {
        /// The least accepted.
        lo: f64,
        /// The largest accepted.
        hi: f64,
        /// The range in words, for errors.
        what: &'static str,
    },
}

impl Range {
    /// A push's speed change (m/s): Cassie's training pushes (`--push`, which `gait eval
    /// --push` also reads) and the selection's (`--selection-push`), one range for both.
    pub const PUSH_SPEED: Range =
        Range::Within { lo: 0.0, hi: 5.0, what: "a push speed in [0, 5] m/s" };

    /// Whether `v` is accepted.
    pub fn holds(self, v: f64) -> bool {
        match self {
            Range::Positive => v.is_finite() && v > 0.0,
            Range::NonNegative => v.is_finite() && v >= 0.0,
            Range::Unit => (0.0..=1.0).contains(&v),
            Range::Count => v.is_finite() && v >= 1.0 && v.fract() == 0.0 && v < WHOLE_LIMIT,
            Range::Natural => v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < WHOLE_LIMIT,
            Range::PositiveF32 => v.is_finite() && v > 0.0 && v <= f32::MAX as f64,
            Range::NonNegativeF32 => v.is_finite() && v >= 0.0 && v <= f32::MAX as f64,
            Range::Within { lo, hi, .. } => v.is_finite() && (lo..=hi).contains(&v),
        }
    }

    /// The phrase used in error messages: `'x' is not <phrase>`.
    pub fn phrase(self) -> &'static str {
        match self {
            Range::Positive => "a positive number",
            Range::NonNegative => "a number >= 0",
            Range::Unit => "a number in [0, 1]",
            Range::Count => "a positive whole number below 9.2e18 (e.g. 2000 or 1e4)",
            Range::Natural => "a whole number in [0, 9.2e18)",
            Range::PositiveF32 => "a positive number up to 3.4e38 (it becomes a 32-bit float)",
            Range::NonNegativeF32 => "a number in [0, 3.4e38] (it becomes a 32-bit float)",
            Range::Within { what, .. } => what,
        }
    }

    /// Parses `s` (plain or scientific notation: `1e4`) and checks it.
    pub fn parse(self, s: &str) -> Result<f64, String> {
        match s.parse::<f64>() {
            Ok(v) if self.holds(v) => Ok(v),
            _ => Err(format!("'{s}' is not {}", self.phrase())),
        }
    }
}

/// `s` as a [`Range::NonNegativeF32`] number.
pub fn non_negative_f32(s: &str) -> Result<f64, String> {
    Range::NonNegativeF32.parse(s)
}

/// Positive integers, in plain or scientific notation (`10000`, `1e4`).
pub fn positive_usize(s: &str) -> Result<usize, String> {
    Range::Count
        .parse(s)
        .ok()
        .and_then(|v| usize::try_from(v as u64).ok())
        .ok_or_else(|| format!("'{s}' is not {}", Range::Count.phrase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_accept_and_refuse_what_they_say() {
        let count = |s| Range::Count.parse(s);
        assert_eq!(count("1e4"), Ok(10_000.0));
        assert!(count("1.5").is_err() && count("0").is_err() && count("nan").is_err());
        assert!(Range::Positive.parse("0").is_err() && Range::Positive.parse("inf").is_err());
        assert_eq!(Range::NonNegative.parse("0"), Ok(0.0));
        assert!(Range::Unit.parse("1.5").is_err() && Range::Unit.parse("nan").is_err());
        assert!(positive_usize("18446744073709551616").is_err());
        assert!(Range::Natural.holds(0.0) && !Range::Natural.holds(-1.0));
        // Below 2^63, what TOML can hold: the largest u64 and 9.5e18 are refused.
        assert!(Range::Natural.parse("18446744073709551615").is_err());
        assert!(Range::Count.parse("9.5e18").is_err() && Range::Count.parse("9e18").is_ok());
        assert_eq!(whole_number(" 1e3 "), Some(1000));
        assert_eq!(whole_number("-1"), Some(-1));
        assert_eq!(whole_number(&i64::MAX.to_string()), Some(i64::MAX));
        for bad in ["1.5", "9.5e18", "18446744073709551615", "nan", "inf", "x", ""] {
            assert_eq!(whole_number(bad), None, "{bad}");
        }
    }
}
