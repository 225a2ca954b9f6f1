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
//! * `omni-walk` (gait's omnidirectional walking): the same five modes with the same
//!   probabilities and deadzone, over x ~ U(−0.5, 1.5) m/s, y ~ U(−0.3, 0.3) m/s and
//!   turn ~ U(−0.5, 0.5) rad/s (the turn wider than the reference's 0.4 and the lab radio's
//!   0.3, so a 0.4 rad/s command lies inside the training range rather than at its edge; the
//!   forward range stops at 1.5, where the forward walker was checked). Held `randint(100, 300)`
//!   policy steps (2-6 s): long enough that a mode is learned, not just survived (the
//!   forward distribution's lesson, above), short enough that most 8 s episodes change command
//!   once, as a user steering the robot does.

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
    /// The five modes over x −0.5..1.5 m/s, y ±0.3 m/s, turn ±0.5 rad/s; held 2-6 s.
    OmniWalk,
}

/// Forward speeds of the `forward` distribution (m/s).
pub const FORWARD_SPEEDS: std::ops::Range<f64> = 0.3..1.2;
/// Probability of a standing command in the `forward` distribution.
pub const STAND_PROBABILITY: f64 = 0.2;

impl CommandKind {
    /// Draws a command of this distribution; an omnidirectional one lies along one signed
    /// axis with probability `axis_share` (`Command::sample_axis`, `--omni-axes`).
    pub fn sample(self, rng: &mut impl Rng, axis_share: f64) -> Command {
        let ranges = match self {
            Self::Omni => &REFERENCE_OMNI,
            Self::OmniWalk => &OMNI_WALK,
            Self::Forward => {
                let x = rng.gen_range(FORWARD_SPEEDS);
                let x = if rng.gen::<f64>() < STAND_PROBABILITY { 0.0 } else { x };
                return Command { x, y: 0.0, turn: 0.0 };
            }
        };
        // No draw at a zero share, so runs from before the setting keep their random stream.
        if axis_share > 0.0 && rng.gen::<f64>() < axis_share {
            return Command::sample_axis(rng, ranges);
        }
        Command::sample_in(rng, ranges).0
    }

    /// The range of each entry `[x, y, turn]` the distribution draws (m/s, m/s, rad/s).
    pub fn ranges(self) -> [[f32; 2]; 3] {
        let span = |r: &std::ops::Range<f64>| [r.start as f32, r.end as f32];
        match self {
            Self::Forward => [[0.0, FORWARD_SPEEDS.end as f32], [0.0; 2], [0.0; 2]],
            Self::Omni => {
                [span(&REFERENCE_OMNI.x), span(&REFERENCE_OMNI.y), span(&REFERENCE_OMNI.turn)]
            }
            Self::OmniWalk => [span(&OMNI_WALK.x), span(&OMNI_WALK.y), span(&OMNI_WALK.turn)],
        }
    }

    /// Policy steps until the next redraw.
    pub fn next_redraw(self, rng: &mut impl Rng) -> u32 {
        match self {
            Self::Omni => Command::next_redraw(rng),
            Self::OmniWalk => rng.gen_range(100..300),
            Self::Forward => rng.gen_range(250..500),
        }
    }
}

/// The ranges an omnidirectional distribution draws x, y and turn from before its mode.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandRanges {
    pub x: std::ops::Range<f64>,
    pub y: std::ops::Range<f64>,
    pub turn: std::ops::Range<f64>,
}

/// roadrunner's ranges (§7.5).
pub const REFERENCE_OMNI: CommandRanges =
    CommandRanges { x: -0.5..2.0, y: -0.3..0.3, turn: -0.4..0.4 };
/// `omni-walk`'s ranges.
pub const OMNI_WALK: CommandRanges = CommandRanges { x: -0.5..1.5, y: -0.3..0.3, turn: -0.5..0.5 };

/// The mode an omnidirectional command was drawn in.
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
    /// A command of the reference's distribution and the mode it was drawn in.
    pub fn sample(rng: &mut impl Rng) -> (Self, Mode) {
        Self::sample_in(rng, &REFERENCE_OMNI)
    }

    /// A command of the five modes over `ranges` and the mode it was drawn in.
    pub fn sample_in(rng: &mut impl Rng, ranges: &CommandRanges) -> (Self, Mode) {
        let (mut x, mut y, mut turn) = (
            rng.gen_range(ranges.x.clone()),
            rng.gen_range(ranges.y.clone()),
            rng.gen_range(ranges.turn.clone()),
        );
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

    /// A command along one of six signed axes, equally likely: forward, backward, left,
    /// right, turn left, turn right; its magnitude uniform from the deadzone (0.1) to that
    /// end of `ranges`, the other two axes 0. Why: in the five modes a pure backward command
    /// is about 2 % of all and a pure sidestep 7 % (`omni-walk`), and the runs that learned
    /// forward walking and turning never learned either (D-027).
    pub fn sample_axis(rng: &mut impl Rng, ranges: &CommandRanges) -> Self {
        let axis = rng.gen_range(0..6);
        let end = match axis {
            0 => ranges.x.end,
            1 => ranges.x.start,
            2 => ranges.y.end,
            3 => ranges.y.start,
            4 => ranges.turn.end,
            _ => ranges.turn.start,
        };
        let v = end.signum() * rng.gen_range(AXIS_DEADZONE..end.abs());
        let mut c = Self { x: 0.0, y: 0.0, turn: 0.0 };
        match axis {
            0 | 1 => c.x = v,
            2 | 3 => c.y = v,
            _ => c.turn = v,
        }
        c
    }

    /// Policy steps until the next redraw.
    pub fn next_redraw(rng: &mut impl Rng) -> u32 {
        rng.gen_range(50..250)
    }
}

/// The smallest magnitude of a pure-axis command: commands of 0.1 or less are set to 0 in
/// the five modes, so a pure-axis command starts just above.
const AXIS_DEADZONE: f64 = 0.1 + 1e-9;

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
            let c = CommandKind::Forward.sample(&mut rng, 0.5);
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

    /// `omni-walk`: its ranges, every mode (turning both ways, backward, both sides), the
    /// deadzone, and 2-6 s holds.
    #[test]
    fn omni_walk_covers_every_direction_in_its_ranges() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let (mut back, mut left, mut right, mut cw, mut ccw, mut stand) = (0, 0, 0, 0, 0, 0);
        let n = 20_000;
        for _ in 0..n {
            let c = CommandKind::OmniWalk.sample(&mut rng, 0.0);
            assert!((-0.5..1.5).contains(&c.x) && c.y.abs() < 0.3 && c.turn.abs() < 0.5, "{c:?}");
            for v in [c.x, c.y, c.turn] {
                assert!(v == 0.0 || v.abs() > 0.1, "deadzone: {v}");
            }
            back += (c.x < 0.0) as usize;
            left += (c.y > 0.0) as usize;
            right += (c.y < 0.0) as usize;
            ccw += (c.turn > 0.4) as usize;
            cw += (c.turn < -0.4) as usize;
            stand += (c == Command { x: 0.0, y: 0.0, turn: 0.0 }) as usize;
            assert!((100..300).contains(&CommandKind::OmniWalk.next_redraw(&mut rng)));
        }
        // Turns beyond 0.4 rad/s: 2 modes of 5 with turn (p 0.4) × 0.1 of the range each way.
        for (name, count, p) in [("ccw > 0.4", ccw, 0.04), ("cw < -0.4", cw, 0.04)] {
            let f = count as f64 / n as f64;
            assert!((f - p).abs() < 0.01, "{name}: {f}");
        }
        assert!(back > n / 20 && left > n / 10 && right > n / 10, "{back} {left} {right}");
        assert!(stand as f64 / n as f64 > 0.2, "stand mode plus deadzones: {stand}");
    }

    /// `--omni-axes`: the share of pure-axis commands, each of the six signed axes about a
    /// sixth of them, magnitudes past the deadzone and inside the range; forward commands
    /// ignore the share.
    #[test]
    fn pure_axis_commands_cover_the_six_directions_evenly() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let n = 30_000;
        let mut axes = [0usize; 6];
        for _ in 0..n {
            let c = CommandKind::OmniWalk.sample(&mut rng, 0.6);
            let nonzero = [c.x, c.y, c.turn].iter().filter(|v| **v != 0.0).count();
            assert!((-0.5..1.5).contains(&c.x) && c.y.abs() < 0.3 && c.turn.abs() < 0.5, "{c:?}");
            for v in [c.x, c.y, c.turn] {
                assert!(v == 0.0 || v.abs() > 0.1, "deadzone: {v}");
            }
            if nonzero != 1 {
                continue;
            }
            let i = match c {
                Command { x, .. } if x > 0.0 => 0,
                Command { x, .. } if x < 0.0 => 1,
                Command { y, .. } if y > 0.0 => 2,
                Command { y, .. } if y < 0.0 => 3,
                Command { turn, .. } if turn > 0.0 => 4,
                _ => 5,
            };
            axes[i] += 1;
        }
        // 0.6 / 6 = 0.1 of all per axis from the share, plus the five modes' own pure-axis
        // commands (turning in place, sideways, walks whose y fell in the deadzone).
        for (i, count) in axes.iter().enumerate() {
            let f = *count as f64 / n as f64;
            assert!((0.09..0.2).contains(&f), "axis {i}: {f} ({axes:?})");
        }
        let backward = axes[1] as f64 / n as f64;
        assert!(backward < 0.12, "backward comes almost only from the share: {backward}");
        for _ in 0..1000 {
            let c = CommandKind::Forward.sample(&mut rng, 1.0);
            assert!(c.y == 0.0 && c.turn == 0.0 && (c.x == 0.0 || c.x >= 0.3), "{c:?}");
        }
    }

    /// A zero share draws nothing extra: the commands of runs from before `--omni-axes`.
    #[test]
    fn a_zero_axis_share_keeps_the_random_stream() {
        let mut a = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        let mut b = a.clone();
        for _ in 0..100 {
            assert_eq!(
                CommandKind::OmniWalk.sample(&mut a, 0.0),
                Command::sample_in(&mut b, &OMNI_WALK).0
            );
        }
    }
}
