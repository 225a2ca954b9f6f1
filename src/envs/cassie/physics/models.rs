//! The physics a run trains on, as data (`--sim`, `[env.cassie] sim`): one backend, or a mix
//! of backends, each with its own timestep and share of the episodes.
//!
//! Written `BACKEND[@DT][:SHARE]`, joined by `+`: `mujoco`, `rapier+mujoco@0.004` (the
//! walking preset: every episode on rapier at `--sim-dt` or on MuJoCo at 4 ms, one random bit
//! each), `rapier:0.7+mujoco@0.004:0.3`. A model without `@DT` runs at `--sim-dt`, whose
//! default is the first model's default timestep; shares left out split what the given ones
//! leave equally. `mixed` is `rapier+mujoco`, the spelling of every run before mixes were data.
//! A third backend joins a mix by its name (`physics/backends.rs`), with no setting of its own.

use std::fmt;
use std::str::FromStr;

use clap::ValueEnum;
use rand::Rng;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::SimKind;
use crate::settings::{Kind, Scalar, SettingType};

/// One model of a run: a backend, its own timestep if it has one, and its share of the
/// training episodes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Model {
    /// The backend.
    pub backend: SimKind,
    /// Its timestep (s); unset: the config's `sim_dt`.
    pub dt: Option<f64>,
    /// The chance that a training episode runs on it, in (0, 1]; a mix's shares sum to 1.
    pub share: f64,
}

/// The models of a run, in `gait eval`'s and the selection's order: at least one, each
/// backend at most once, shares summing to 1. Only [`FromStr`] builds one with more than one
/// model, so a mix that breaks these cannot be held.
#[derive(Debug, Clone, PartialEq)]
pub struct Models(Vec<Model>);

/// The timesteps (s) a model may name, as `--sim-dt`'s range (each backend's own largest is
/// checked with the rest of the settings).
const MIN_DT: f64 = 1e-5;
const MAX_DT: f64 = 0.01;

/// How far a mix's shares may sum from 1 (decimal shares such as 0.1 + 0.2 + 0.7).
const SHARE_SUM_TOLERANCE: f64 = 1e-9;

impl Models {
    /// `backend` alone, at `sim_dt`.
    pub fn one(backend: SimKind) -> Self {
        Self(vec![Model { backend, dt: None, share: 1.0 }])
    }

    /// The models, in order.
    pub fn models(&self) -> &[Model] {
        &self.0
    }

    /// The backends, in order.
    pub fn kinds(&self) -> impl ExactSizeIterator<Item = SimKind> + '_ {
        self.0.iter().map(|m| m.backend)
    }

    /// The first model's backend: what a mix is evaluated on unless `gait eval --sim` says.
    pub fn first(&self) -> SimKind {
        self.0[0].backend
    }

    /// Whether episodes draw among more than one model.
    pub fn is_mix(&self) -> bool {
        self.0.len() > 1
    }

    /// The model of `backend`, if it is one of these.
    pub fn get(&self, backend: SimKind) -> Option<&Model> {
        self.0.iter().find(|m| m.backend == backend)
    }

    /// The shares, in order.
    pub fn shares(&self) -> Vec<f64> {
        self.0.iter().map(|m| m.share).collect()
    }

    /// Draws the index of an episode's model by the models' shares, or by `late` (one share
    /// per model: `robust_shares`) where given: no draw for one model; for two, one random bit
    /// at even shares and `gen_bool(last share)` otherwise (draw for draw what mixed runs drew
    /// before mixes were data); for more, one uniform number against the running sum.
    pub fn draw(&self, late: Option<&[f64]>, rng: &mut impl Rng) -> usize {
        let share = |i: usize| late.map_or(self.0[i].share, |late| late[i]);
        match self.0.len() {
            1 => 0,
            2 if share(1) == 0.5 => usize::from(rng.gen::<bool>()),
            2 => usize::from(rng.gen_bool(share(1))),
            n => {
                let u = rng.gen::<f64>() * (0..n).map(share).sum::<f64>();
                let mut sum = 0.0;
                (0..n)
                    .position(|i| {
                        sum += share(i);
                        u < sum
                    })
                    .unwrap_or(n - 1)
            }
        }
    }

    /// Checks that `shares` (a `robust_shares` value) could replace these models' shares: one
    /// per model, summing to 1.
    pub fn check_shares(&self, shares: &[f64]) -> Result<(), String> {
        if shares.len() != self.0.len() {
            let plural = |n: usize| if n == 1 { "" } else { "s" };
            let (given, models) = (shares.len(), self.0.len());
            return Err(format!(
                "{given} share{} for {models} model{}",
                plural(given),
                plural(models)
            ));
        }
        let sum: f64 = shares.iter().sum();
        if (sum - 1.0).abs() > SHARE_SUM_TOLERANCE {
            return Err(format!("shares summing to {sum}, not 1"));
        }
        Ok(())
    }
}

impl Default for Models {
    /// Rapier alone: what runs from before the setting trained on.
    fn default() -> Self {
        Self::one(SimKind::Rapier)
    }
}

impl FromStr for Models {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s == "mixed" {
            return "rapier+mujoco".parse();
        }
        let mut models = Vec::new();
        let mut given = Vec::new();
        for part in s.split('+') {
            let (rest, share) = match part.split_once(':') {
                Some((rest, share)) => (rest, Some(number(share, "share", part)?)),
                None => (part, None),
            };
            let (name, dt) = match rest.split_once('@') {
                Some((name, dt)) => (name, Some(number(dt, "timestep", part)?)),
                None => (rest, None),
            };
            let backend = SimKind::from_str(name.trim(), false).map_err(|_| {
                let names: Vec<String> = SimKind::value_variants()
                    .iter()
                    .filter_map(|k| k.to_possible_value().map(|v| v.get_name().to_string()))
                    .collect();
                format!("'{}' in '{s}' is not a backend: one of {}, or mixed", name.trim(), {
                    names.join(", ")
                })
            })?;
            if models.iter().any(|m: &Model| m.backend == backend) {
                return Err(format!("'{s}' names {} twice", backend.name()));
            }
            if let Some(dt) = dt.filter(|dt| !(MIN_DT..=MAX_DT).contains(dt)) {
                return Err(format!(
                    "'{part}': the timestep {dt} is not in [{MIN_DT}, {MAX_DT}] s"
                ));
            }
            if let Some(share) = share.filter(|&p| !(p > 0.0 && p <= 1.0)) {
                return Err(format!("'{part}': the share {share} is not a number in (0, 1]"));
            }
            models.push(Model { backend, dt, share: 0.0 });
            given.push(share);
        }
        let named: f64 = given.iter().flatten().sum();
        let open = given.iter().filter(|g| g.is_none()).count();
        let rest = (1.0 - named) / open.max(1) as f64;
        if open > 0 && rest <= SHARE_SUM_TOLERANCE {
            return Err(format!("'{s}': the shares given leave none to the models without one"));
        }
        for (model, share) in models.iter_mut().zip(&given) {
            model.share = share.unwrap_or(rest);
        }
        let sum: f64 = models.iter().map(|m| m.share).sum();
        if (sum - 1.0).abs() > SHARE_SUM_TOLERANCE {
            return Err(format!("'{s}': the shares sum to {sum}, not 1"));
        }
        Ok(Self(models))
    }
}

/// A finite number in a model's text, or an error naming what it should have been.
fn number(text: &str, what: &str, part: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("'{part}': '{}' is not a {what} (a number)", text.trim())),
    }
}

impl fmt::Display for Models {
    /// The canonical text: `+`-joined models, each with its `@DT` if it has one, and every
    /// share when they are not all equal.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let even = self.0.iter().all(|m| m.share == self.0[0].share);
        for (i, m) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("+")?;
            }
            f.write_str(m.backend.name())?;
            if let Some(dt) = m.dt {
                write!(f, "@{dt}")?;
            }
            if !even {
                write!(f, ":{}", m.share)?;
            }
        }
        Ok(())
    }
}

impl Serialize for Models {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Models {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl SettingType for Models {
    const KIND: Kind = Kind { scalar: Scalar::Text, list: false, optional: false };
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn models_read_and_print_in_one_syntax() {
        for text in ["rapier", "mujoco", "rapier+mujoco", "rapier+mujoco@0.004", "mujoco@0.004"] {
            assert_eq!(text.parse::<Models>().unwrap().to_string(), text);
        }
        assert_eq!("mixed".parse::<Models>().unwrap().to_string(), "rapier+mujoco");
        let shared: Models = "rapier+mujoco@0.004:0.3".parse().unwrap();
        assert_eq!(shared.to_string(), "rapier:0.7+mujoco@0.004:0.3");
        assert_eq!(shared.to_string().parse::<Models>().unwrap(), shared);
        assert_eq!(shared.shares(), [0.7, 0.3]);
        assert_eq!(shared.get(SimKind::Mujoco).and_then(|m| m.dt), Some(0.004));
        assert_eq!(shared.kinds().collect::<Vec<_>>(), [SimKind::Rapier, SimKind::Mujoco]);
        assert_eq!(Models::default(), Models::one(SimKind::Rapier));
        let json = serde_json::to_value(&shared).unwrap();
        assert_eq!(json, serde_json::json!("rapier:0.7+mujoco@0.004:0.3"));
        assert_eq!(serde_json::from_value::<Models>(json).unwrap(), shared);
    }

    #[test]
    fn a_mix_that_cannot_run_is_refused_by_what_is_wrong() {
        let refused = |text: &str| text.parse::<Models>().unwrap_err();
        assert!(refused("bullet").contains("'bullet' in 'bullet' is not a backend"));
        assert!(refused("rapier+rapier").contains("names rapier twice"));
        assert!(refused("mujoco@x").contains("'x' is not a timestep"));
        assert!(refused("mujoco@-1").contains("not in [0.00001, 0.01] s"));
        assert!(refused("rapier@0.02").contains("not in"));
        assert!(refused("rapier:1.5").contains("not a number in (0, 1]"));
        assert!(refused("rapier:0.6+mujoco:0.6").contains("sum to 1.2"));
        assert!(refused("rapier:1+mujoco").contains("leave none"));
        assert!(refused("rapier:0.5").contains("sum to 0.5"));
        assert!("rapier:0.1+mujoco:0.2".parse::<Models>().is_err());
    }

    #[test]
    fn draws_follow_the_shares_and_two_even_models_draw_one_bit() {
        let mix: Models = "mixed".parse().unwrap();
        let (mut a, mut b) = (ChaCha8Rng::seed_from_u64(4), ChaCha8Rng::seed_from_u64(4));
        for _ in 0..50 {
            assert_eq!(mix.draw(None, &mut a), usize::from(b.gen::<bool>()));
        }
        for _ in 0..50 {
            assert_eq!(mix.draw(Some(&[0.8, 0.2]), &mut a), usize::from(b.gen_bool(0.2)));
        }
        let uneven: Models = "rapier:0.8+mujoco:0.2".parse().unwrap();
        for _ in 0..50 {
            assert_eq!(uneven.draw(None, &mut a), usize::from(b.gen_bool(0.2)));
        }
        // A third backend is a row of the table; three models of two backends stand in for it
        // here through `late` (the draw reads only the shares).
        let three = Models(vec![mix.0[0], mix.0[1], mix.0[0]]);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut counts = [0usize; 3];
        for _ in 0..20_000 {
            counts[three.draw(Some(&[0.2, 0.5, 0.3]), &mut rng)] += 1;
        }
        for (count, share) in counts.iter().zip([0.2, 0.5, 0.3]) {
            assert!((*count as f64 / 20_000.0 - share).abs() < 0.015, "{counts:?}");
        }
        assert_eq!(Models::one(SimKind::Mujoco).draw(None, &mut rng), 0);
        assert!(mix.check_shares(&[0.4, 0.6]).is_ok());
        assert!(mix.check_shares(&[1.0]).unwrap_err().contains("1 share for 2 models"));
        assert!(mix.check_shares(&[0.4, 0.4]).unwrap_err().contains("summing to 0.8"));
    }
}
