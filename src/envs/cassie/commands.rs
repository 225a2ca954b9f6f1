//! Velocity commands, two distributions (`--commands`):
//!
//! * `forward` (the walking default): walk straight ahead at x ~ U(0.3, 1.2) m/s with
//!   probability 0.8, else stand (all zero); y = turn = 0. Redrawn every `randint(250, 500)`
//!   policy steps, so an episode of the preset's 400 steps holds one command for most of its
//!   length and some episodes switch once (walk → stand, stand → walk), which is where standing
//!   still when told is learned. Why: the reference's mix below gave the 0.8-1.2 m/s band
//!   about 8% of commands for about 3 s each, and every run on it stood (walking.md R3); peers
//!   that learn to walk hold one speed per episode (JVRC, RSS-2020) or 10 s (MJX).
//! * `omni` (roadrunner §7.5): x ~ U(−0.5, 2.0) m/s, y ~ U(−0.3, 0.3) m/s, turn ~ U(−0.4, 0.4)
//!   rad/s, then a mode: stand (p 0.2, all zero), turn in place (0.2, x = y = 0), walk (0.3,
//!   turn = 0), sideways (0.1, x = turn = 0), walk and turn (0.2, unchanged). After the mode, any
//!   |value| ≤ 0.1 becomes 0. Redrawn every `randint(50, 250)` policy steps.

use clap::ValueEnum;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// Which command distribution `--commands` selects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum CommandKind {
    /// Straight ahead at 0.3-1.2 m/s, or stand (p 0.2); held 5-10 s.
    #[default]
    Forward,
    /// The reference's five modes (stand, turn, walk, sideways, walk and turn); held 1-5 s.
    Omni,
}

/// Forward speeds of the `forward` distribution (m/s).
pub const FORWARD_SPEEDS: std::ops::Range<f64> = 0.3..1.2;
/// Probability of a standing command in the `forward` distribution.
pub const STAND_PROBABILITY: f64 = 0.2;

impl CommandKind {
    /// Draws a command of this distribution.
    pub fn sample(self, rng: &mut impl Rng) -> Command {
        match self {
            Self::Omni => Command::sample(rng).0,
            Self::Forward => {
                let x = rng.gen_range(FORWARD_SPEEDS);
                let x = if rng.gen::<f64>() < STAND_PROBABILITY { 0.0 } else { x };
                Command { x, y: 0.0, turn: 0.0 }
            }
        }
    }

    /// Policy steps until the next redraw.
    pub fn next_redraw(self, rng: &mut impl Rng) -> u32 {
        match self {
            Self::Omni => Command::next_redraw(rng),
            Self::Forward => rng.gen_range(250..500),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Stand,
    TurnInPlace,
    Walk,
    Sideways,
    WalkTurn,
}

/// `[x velocity, y velocity, turn rate]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Command {
    pub x: f64,
    pub y: f64,
    pub turn: f64,
}

impl Command {
    pub fn sample(rng: &mut impl Rng) -> (Self, Mode) {
        let (mut x, mut y, mut turn) =
            (rng.gen_range(-0.5..2.0), rng.gen_range(-0.3..0.3), rng.gen_range(-0.4..0.4));
        let u: f64 = rng.gen();
        let mode = match u {
            u if u < 0.2 => Mode::Stand,
            u if u < 0.4 => Mode::TurnInPlace,
            u if u < 0.7 => Mode::Walk,
            u if u < 0.8 => Mode::Sideways,
            _ => Mode::WalkTurn,
        };
        match mode {
            Mode::Stand => (x, y, turn) = (0.0, 0.0, 0.0),
            Mode::TurnInPlace => (x, y) = (0.0, 0.0),
            Mode::Walk => turn = 0.0,
            Mode::Sideways => (x, turn) = (0.0, 0.0),
            Mode::WalkTurn => {}
        }
        let dead = |v: f64| if v.abs() <= 0.1 { 0.0 } else { v };
        (Self { x: dead(x), y: dead(y), turn: dead(turn) }, mode)
    }

    /// Policy steps until the next redraw.
    pub fn next_redraw(rng: &mut impl Rng) -> u32 {
        rng.gen_range(50..250)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn forward_commands_walk_straight_or_stand_and_are_held_long() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        let n = 20_000;
        let mut standing = 0;
        for _ in 0..n {
            let c = CommandKind::Forward.sample(&mut rng);
            assert_eq!((c.y, c.turn), (0.0, 0.0));
            if c.x == 0.0 {
                standing += 1;
            } else {
                assert!(FORWARD_SPEEDS.contains(&c.x), "{c:?}");
            }
            assert!((250..500).contains(&CommandKind::Forward.next_redraw(&mut rng)));
        }
        let f = standing as f64 / n as f64;
        assert!((f - STAND_PROBABILITY).abs() < 0.015, "standing fraction {f}");
    }

    #[test]
    fn modes_have_the_reference_frequencies_and_ranges() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let n = 20_000;
        let mut counts = [0usize; 5];
        for _ in 0..n {
            let (c, mode) = Command::sample(&mut rng);
            counts[mode as usize] += 1;
            assert!((-0.5..2.0).contains(&c.x) && c.y.abs() < 0.3 && c.turn.abs() < 0.4);
            for v in [c.x, c.y, c.turn] {
                assert!(v == 0.0 || v.abs() > 0.1, "deadzone: {v}");
            }
            match mode {
                Mode::Stand => assert_eq!((c.x, c.y, c.turn), (0.0, 0.0, 0.0)),
                Mode::TurnInPlace => assert_eq!((c.x, c.y), (0.0, 0.0)),
                Mode::Walk => assert_eq!(c.turn, 0.0),
                Mode::Sideways => assert_eq!((c.x, c.turn), (0.0, 0.0)),
                Mode::WalkTurn => {}
            }
        }
        for (count, p) in counts.iter().zip([0.2, 0.2, 0.3, 0.1, 0.2]) {
            let f = *count as f64 / n as f64;
            assert!((f - p).abs() < 0.015, "{counts:?}");
        }
        let r = Command::next_redraw(&mut rng);
        assert!((50..250).contains(&r));
    }
}
