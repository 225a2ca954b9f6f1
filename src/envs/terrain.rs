//! Ground that is not a flat floor, described once and built by every physics backend: a
//! heightfield on a regular grid (rapier's `HeightField`, MuJoCo's `hfield`), drawn from a
//! seed, so one episode seed meets the same ground on either model.
//!
//! The surface between grid points is two triangles per cell, split along the diagonal from
//! point `(i, j)` to `(i + 1, j + 1)`, as both backends build it; [`Heightfield::height_at`]
//! is that surface, and the backends' tests compare their own ground against it.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Heights on a regular grid: point `(i, j)` lies at `origin + (i, j) · cell` (x, y in metres)
/// and has height `heights[j · nx + i]`. Outside the grid the ground is the flat floor, at 0 or
/// just under the grid's lowest point ([`floor_under`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Heightfield {
    /// Grid spacing (m).
    pub cell: f32,
    /// Points along x.
    pub nx: usize,
    /// Points along y.
    pub ny: usize,
    /// World (x, y) of point (0, 0).
    pub origin: [f32; 2],
    /// Heights (m), row by row along x (`heights[j · nx + i]`).
    pub heights: Vec<f32>,
}

impl Heightfield {
    /// A flat grid of `nx × ny` points at height 0, centred on the world's origin.
    pub fn flat(cell: f32, nx: usize, ny: usize) -> Self {
        let origin = [-((nx - 1) as f32) * cell / 2.0, -((ny - 1) as f32) * cell / 2.0];
        Self { cell, nx, ny, origin, heights: vec![0.0; nx * ny] }
    }

    /// Side lengths (m) along x and y.
    pub fn extent(&self) -> [f32; 2] {
        [(self.nx - 1) as f32 * self.cell, (self.ny - 1) as f32 * self.cell]
    }

    /// The world (x, y) of the grid's centre.
    pub fn centre(&self) -> [f32; 2] {
        let [ex, ey] = self.extent();
        [self.origin[0] + ex / 2.0, self.origin[1] + ey / 2.0]
    }

    /// The height of point `(i, j)`.
    pub fn at(&self, i: usize, j: usize) -> f32 {
        self.heights[j * self.nx + i]
    }

    /// The lowest and highest heights.
    pub fn range(&self) -> [f32; 2] {
        self.heights
            .iter()
            .fold([f32::INFINITY, f32::NEG_INFINITY], |[lo, hi], &h| [lo.min(h), hi.max(h)])
    }

    /// Sets every point's height to `f(x, y)` of its world position.
    pub fn fill(&mut self, f: impl Fn(f32, f32) -> f32) {
        self.fill_indexed(|_, _, x, y| f(x, y));
    }

    /// Sets every point's height to `f(i, j, x, y)` of its grid indices and world position.
    pub fn fill_indexed(&mut self, f: impl Fn(usize, usize, f32, f32) -> f32) {
        for j in 0..self.ny {
            for i in 0..self.nx {
                let x = self.origin[0] + i as f32 * self.cell;
                let y = self.origin[1] + j as f32 * self.cell;
                self.heights[j * self.nx + i] = f(i, j, x, y);
            }
        }
    }

    /// The ground's height at world `(x, y)` on the triangulated surface; `None` outside
    /// the grid.
    pub fn height_at(&self, x: f32, y: f32) -> Option<f32> {
        let u = (x - self.origin[0]) / self.cell;
        let v = (y - self.origin[1]) / self.cell;
        let (last_x, last_y) = ((self.nx - 1) as f32, (self.ny - 1) as f32);
        if !(0.0..=last_x).contains(&u) || !(0.0..=last_y).contains(&v) {
            return None;
        }
        let i = (u.floor() as usize).min(self.nx - 2);
        let j = (v.floor() as usize).min(self.ny - 2);
        let (fu, fv) = (u - i as f32, v - j as f32);
        let (h00, h10) = (self.at(i, j), self.at(i + 1, j));
        let (h01, h11) = (self.at(i, j + 1), self.at(i + 1, j + 1));
        Some(if fu >= fv {
            h00 + fu * (h10 - h00) + fv * (h11 - h10)
        } else {
            h00 + fv * (h01 - h00) + fu * (h11 - h01)
        })
    }
}

/// The flat floor's height under a grid whose lowest point is `lowest` (m): 1 cm below the
/// grid and below 0, so the floor never cuts through the ground a grid describes, nor meets a
/// foot that stands on it (on a grid's flat part at 0 the floor was a second ground under the
/// same foot, doubling its contacts).
pub fn floor_under(lowest: f32) -> f32 {
    lowest.min(0.0) - 0.01
}

/// The kinds of ground gait builds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum TerrainKind {
    /// The flat floor.
    #[default]
    Flat,
    /// Smooth random bumps.
    Rough,
    /// A ramp up, then down.
    Slope,
    /// A flight of stairs up, a landing, and a flight down; for half the seeds the other way
    /// round (down, a landing, up), so episodes meet a descent as often as a climb.
    Stairs,
    /// Random single steps up and down.
    Flights,
    /// The check's flight up: 8 steps of 30 cm treads, then a long top.
    Upstairs,
    /// The check's flight down: the same, from the top.
    Downstairs,
    /// Each episode one of the kinds above, the flat floor included, drawn at random.
    Mix,
}

/// The kinds [`TerrainKind::Mix`] draws from, equally likely.
pub const MIXED: [TerrainKind; 5] = [
    TerrainKind::Flat,
    TerrainKind::Rough,
    TerrainKind::Slope,
    TerrainKind::Stairs,
    TerrainKind::Flights,
];

impl TerrainKind {
    /// The value as `--terrain` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Flat => "flat",
            Self::Rough => "rough",
            Self::Slope => "slope",
            Self::Stairs => "stairs",
            Self::Flights => "flights",
            Self::Upstairs => "upstairs",
            Self::Downstairs => "downstairs",
            Self::Mix => "mix",
        }
    }
}

/// Steps of [`TerrainKind::Upstairs`] and [`TerrainKind::Downstairs`]: the check, a
/// flight of 8 (a storey of a building at 15 cm risers is 18-20).
pub const CHECK_STEPS: u32 = 8;
/// Their tread (m).
pub const CHECK_TREAD: f32 = 0.30;

impl TerrainKind {
    /// How far along the heading an episode must walk to have crossed this ground (m): past
    /// the check's flights and 0.5 m beyond, or up and down the whole slope; `None` for ground
    /// without an end (rough, random flights, stairs of random length, the flat floor).
    pub fn course_length(self) -> Option<f32> {
        match self {
            Self::Upstairs | Self::Downstairs => {
                Some(RUN_UP + (CHECK_STEPS + 1) as f32 * CHECK_TREAD + 0.5)
            }
            Self::Slope => Some(RUN_UP + 2.0 * SLOPE_LENGTH),
            _ => None,
        }
    }

    /// Whether its ground is laid along the episode's heading (a slope, stairs, flights), so
    /// that an episode meets it only by walking forward.
    pub fn along_heading(self) -> bool {
        matches!(
            self,
            Self::Slope | Self::Stairs | Self::Flights | Self::Upstairs | Self::Downstairs
        )
    }

    /// The riser (m) of stairs at `difficulty` (5-20 cm).
    pub fn riser(difficulty: f32) -> f32 {
        0.05 + 0.15 * difficulty.clamp(0.0, 1.0)
    }
}

/// The length of each of a slope's two ramps (m).
const SLOPE_LENGTH: f32 = 4.0;

/// One ground to build: its kind (not [`TerrainKind::Mix`], which draws one), its difficulty
/// in [0, 1] and its seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TerrainSpec {
    /// What ground.
    pub kind: TerrainKind,
    /// 0: the kind's mildest (a 2 cm bump, a 5 cm riser), 1: its hardest (5 cm, 20 cm).
    pub difficulty: f32,
    /// Seeds the ground's random parts (bumps, treads, flights).
    pub seed: u64,
}

/// The grid every terrain is drawn on: 4 cm cells over 24 × 24 m, centred where the robot
/// starts (an episode of 20 s at 1 m/s stays on it in any direction).
pub const CELL: f32 = 0.04;
/// Points along each side.
pub const POINTS: usize = 601;

/// Where the ground starts to change, ahead of the robot's start (m): it starts on the flat.
const RUN_UP: f32 = 1.0;

/// A kind's ground as a function of position, before it is laid on a grid.
enum Ground {
    /// The flat floor.
    Flat,
    /// Rough ground: its bumps at a grid point's indices `(i, j)` ([`rough`]).
    Rough(Box<dyn Fn(usize, usize) -> f32>),
    /// Heights as a function of the distance along the heading from where the kind begins.
    Profile(Box<dyn Fn(f32) -> f32>),
}

impl TerrainSpec {
    /// The ground, laid out along `heading` (rad) from the origin where the robot starts.
    pub fn build(&self, heading: f32) -> Heightfield {
        let mut field = Heightfield::flat(CELL, POINTS, POINTS);
        let mut rng = <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(self.seed);
        let (s, c) = heading.sin_cos();
        match self.ground(&field, &mut rng) {
            Ground::Flat => {}
            Ground::Rough(bumps) => {
                field.fill_indexed(|i, j, x, y| {
                    // Flat under the robot's start, the bumps full from the run-up on.
                    let fade = if x.abs() < RUN_UP && y.abs() < RUN_UP {
                        ((x.hypot(y) - 0.5) / (RUN_UP - 0.5)).clamp(0.0, 1.0)
                    } else {
                        1.0
                    };
                    fade * bumps(i, j)
                });
            }
            Ground::Profile(height) => field.fill(|x, y| height(c * x + s * y - RUN_UP)),
        }
        field
    }

    /// This kind's ground on `field`'s grid, its random parts drawn from `rng` (in the order
    /// `build` always drew them, so a seed keeps its ground).
    fn ground(&self, field: &Heightfield, rng: &mut ChaCha8Rng) -> Ground {
        let d = self.difficulty.clamp(0.0, 1.0);
        match self.kind {
            TerrainKind::Flat | TerrainKind::Mix => Ground::Flat,
            TerrainKind::Rough => Ground::Rough(Box::new(rough(field, rng, d))),
            TerrainKind::Slope => {
                let grade = (5.0 + 10.0 * d).to_radians().tan();
                let top = SLOPE_LENGTH;
                Ground::Profile(Box::new(move |a| {
                    grade * a.clamp(0.0, top).min((2.0 * top - a).max(0.0))
                }))
            }
            TerrainKind::Stairs => {
                let riser = TerrainKind::riser(d);
                let tread = rng.gen_range(0.25..0.40f32);
                let steps = rng.gen_range(4..=16) as f32;
                let landing = 1.0;
                // Drawn after the flight's shape, so a seed keeps its treads and steps.
                let sign = if rng.gen::<bool>() { 1.0 } else { -1.0 };
                Ground::Profile(Box::new(move |a| {
                    let up = (a / tread).floor().clamp(0.0, steps);
                    let down_from = steps * tread + landing;
                    let down = ((a - down_from) / tread).floor().clamp(0.0, steps + 1.0);
                    sign * riser * (up - down).max(0.0)
                }))
            }
            TerrainKind::Upstairs | TerrainKind::Downstairs => {
                let riser = TerrainKind::riser(d);
                let sign = if self.kind == TerrainKind::Upstairs { 1.0 } else { -1.0 };
                let steps = CHECK_STEPS as f32;
                Ground::Profile(Box::new(move |a| {
                    sign * riser * (a / CHECK_TREAD).floor().clamp(0.0, steps)
                }))
            }
            TerrainKind::Flights => {
                let mut edges = Vec::new();
                let (mut at, mut level) = (0.0f32, 0.0f32);
                while at < 12.0 {
                    at += rng.gen_range(0.6..2.0);
                    let rise = rng.gen_range(0.10..0.17f32) * (0.3 + 0.7 * d);
                    level += if rng.gen::<bool>() { rise } else { -rise };
                    edges.push((at, level));
                }
                Ground::Profile(Box::new(move |a| {
                    edges.iter().take_while(|(e, _)| a >= *e).last().map_or(0.0, |&(_, h)| h)
                }))
            }
        }
    }
}

/// One stretch of a course's ground ([`course_ground`]): `kind` at `difficulty` from `start`
/// metres along the heading to where the next stretch starts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stretch {
    /// Where it begins, along the heading from the robot's start (m).
    pub start: f32,
    /// What ground (not [`TerrainKind::Mix`]).
    pub kind: TerrainKind,
    /// Its difficulty in [0, 1].
    pub difficulty: f32,
}

/// How far rough ground fades in and out at a course stretch's ends (m), so that it meets the
/// stretches beside it without a kerb.
const ROUGH_FADE: f32 = 0.5;

/// A course's ground ([`Stretch`]es in order of `start`, along `heading`): the flat floor
/// before the first; each stretch's kind from its start (no run-up: the course places it),
/// continuing from the height where the stretch before it ended, so a flight up leaves what
/// follows on its top; rough ground faded in and out over its stretch's first and last
/// half metre. The stretches' random parts come from `seed`, one draw per stretch.
pub fn course_ground(stretches: &[Stretch], seed: u64, heading: f32) -> Heightfield {
    /// One stretch as laid: where it starts and ends along the heading, the height it starts
    /// at, and its own ground.
    struct Laid {
        start: f32,
        end: f32,
        base: f32,
        ground: Ground,
    }
    let mut field = Heightfield::flat(CELL, POINTS, POINTS);
    let mut rng = <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed);
    let (s, c) = heading.sin_cos();
    let mut laid = Vec::with_capacity(stretches.len());
    let mut base = 0.0;
    for (k, stretch) in stretches.iter().enumerate() {
        let end = stretches.get(k + 1).map_or(f32::INFINITY, |next| next.start);
        let spec =
            TerrainSpec { kind: stretch.kind, difficulty: stretch.difficulty, seed: rng.gen() };
        let mut own = <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(spec.seed);
        let ground = spec.ground(&field, &mut own);
        let rise = match &ground {
            Ground::Profile(height) if end.is_finite() => height(end - stretch.start),
            _ => 0.0,
        };
        laid.push(Laid { start: stretch.start, end, base, ground });
        base += rise;
    }
    field.fill_indexed(|i, j, x, y| {
        let a = c * x + s * y;
        let Some(l) = laid.iter().rev().find(|l| a >= l.start) else {
            return 0.0;
        };
        l.base
            + match &l.ground {
                Ground::Flat => 0.0,
                Ground::Profile(height) => height(a - l.start),
                Ground::Rough(bumps) => {
                    let fade = ((a - l.start) / ROUGH_FADE).min((l.end - a) / ROUGH_FADE);
                    fade.clamp(0.0, 1.0) * bumps(i, j)
                }
            }
    });
    field
}

/// Rough ground of difficulty `d` on `field`'s grid points: twelve random plane waves summed,
/// scaled to ±2-5 cm and clipped there, as a function of a point's indices `(i, j)`.
fn rough(field: &Heightfield, rng: &mut ChaCha8Rng, d: f32) -> impl Fn(usize, usize) -> f32 {
    let amplitude = 0.02 + 0.03 * d;
    let waves: Vec<[f32; 4]> = (0..12)
        .map(|_| {
            let k = rng.gen_range(2.0..9.0f32);
            let dir = rng.gen_range(0.0..std::f32::consts::TAU);
            [k * dir.cos(), k * dir.sin(), rng.gen_range(0.0..std::f32::consts::TAU), 0.0]
        })
        .collect();
    let norm = amplitude / (waves.len() as f32).sqrt() * std::f32::consts::SQRT_2;
    let sum = wave_sums(field, &waves);
    move |i, j| (norm * sum(i, j)).clamp(-amplitude, amplitude)
}

/// `Σ_w sin(kx_w·x + ky_w·y + φ_w)` at grid point `(i, j)` of `field`, for `waves` of
/// `[kx, ky, φ, _]`: each term split as `sin(kx·x)·cos(ky·y + φ) + cos(kx·x)·sin(ky·y + φ)`,
/// with the factors computed once per column and per row. Why: rough ground is drawn anew
/// every training episode, and 12 `sin` per point of its 601 × 601 grid were most of a rough
/// episode's cost (`perf`: 79 % of `gait bench env --terrain rough`).
fn wave_sums(field: &Heightfield, waves: &[[f32; 4]]) -> impl Fn(usize, usize) -> f32 {
    let (n, nx, ny) = (waves.len(), field.nx, field.ny);
    let mut columns = vec![[0.0f32; 2]; n * nx];
    let mut rows = vec![[0.0f32; 2]; n * ny];
    for (w, wave) in waves.iter().enumerate() {
        for i in 0..nx {
            let x = field.origin[0] + i as f32 * field.cell;
            let (s, c) = ((wave[0] as f64) * x as f64).sin_cos();
            columns[i * n + w] = [s as f32, c as f32];
        }
        for j in 0..ny {
            let y = field.origin[1] + j as f32 * field.cell;
            let (s, c) = ((wave[1] as f64) * y as f64 + wave[2] as f64).sin_cos();
            rows[j * n + w] = [s as f32, c as f32];
        }
    }
    move |i, j| {
        let (col, row) = (&columns[i * n..(i + 1) * n], &rows[j * n..(j + 1) * n]);
        col.iter().zip(row).map(|(a, b)| a[0] * b[1] + a[1] * b[0]).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wave_sums_are_the_sines_summed_directly() {
        let field = Heightfield::flat(CELL, POINTS, POINTS);
        let waves = [[3.1, -7.2, 0.4, 0.0], [-2.0, 2.5, 5.9, 0.0], [8.9, 0.3, 1.1, 0.0]];
        let sum = wave_sums(&field, &waves);
        for (i, j) in [(0, 0), (300, 300), (600, 17), (45, 599)] {
            let x = field.origin[0] + i as f32 * CELL;
            let y = field.origin[1] + j as f32 * CELL;
            let direct: f64 = waves
                .iter()
                .map(|w| (w[0] as f64 * x as f64 + w[1] as f64 * y as f64 + w[2] as f64).sin())
                .sum();
            assert!((sum(i, j) as f64 - direct).abs() < 1e-5, "({i}, {j}): {} {direct}", sum(i, j));
        }
    }

    #[test]
    fn the_surface_interpolates_each_cell_as_two_triangles() {
        let mut f = Heightfield::flat(1.0, 2, 2);
        f.origin = [0.0, 0.0];
        f.heights = vec![0.0, 1.0, 2.0, 4.0]; // (0,0) (1,0) (0,1) (1,1)
        assert_eq!(f.height_at(0.0, 0.0), Some(0.0));
        assert_eq!(f.height_at(1.0, 1.0), Some(4.0));
        // Below the diagonal: triangle (0,0) (1,0) (1,1).
        assert_eq!(f.height_at(0.5, 0.25), Some(0.5 + 0.25 * 3.0));
        // Above it: triangle (0,0) (0,1) (1,1).
        assert_eq!(f.height_at(0.25, 0.5), Some(0.5 * 2.0 + 0.25 * 2.0));
        assert_eq!(f.height_at(1.5, 0.5), None);
    }

    #[test]
    fn each_kind_is_flat_where_the_robot_starts_and_seeded() {
        for kind in [
            TerrainKind::Flat,
            TerrainKind::Rough,
            TerrainKind::Slope,
            TerrainKind::Stairs,
            TerrainKind::Flights,
            TerrainKind::Upstairs,
            TerrainKind::Downstairs,
        ] {
            let spec = TerrainSpec { kind, difficulty: 1.0, seed: 3 };
            let field = spec.build(0.7);
            assert_eq!(field, spec.build(0.7), "{kind:?}: the same seed, the same ground");
            for (x, y) in [(0.0, 0.0), (0.3, 0.2), (-0.2, 0.3)] {
                assert_eq!(field.height_at(x, y).unwrap(), 0.0, "{kind:?} at ({x}, {y})");
            }
            let [lo, hi] = field.range();
            assert!(lo.is_finite() && hi - lo < 3.0, "{kind:?}: {lo} {hi}");
        }
        // Risers of 12.5 cm at difficulty 0.5, counted along +x from the run-up: a flight up
        // and down for some seeds, down and up (a pit) for others.
        let (mut ups, mut pits) = (0, 0);
        for seed in 0..16 {
            let stairs = TerrainSpec { kind: TerrainKind::Stairs, difficulty: 0.5, seed };
            let field = stairs.build(0.0);
            let [lo, hi] = field.range();
            assert!(lo == 0.0 || hi == 0.0, "seed {seed}: one way only: {lo} {hi}");
            let depth = hi - lo;
            let steps = (depth / 0.125).round();
            assert!((depth - steps * 0.125).abs() < 1e-5 && (4.0..=16.0).contains(&steps));
            // The first riser, one tread (at least 25 cm) past the run-up, goes the flight's way.
            let first = field.height_at(RUN_UP + 0.45, 0.0).unwrap();
            assert_eq!(first.signum(), if hi > 0.0 { 1.0 } else { -1.0 }, "seed {seed}");
            if hi > 0.0 {
                ups += 1
            } else {
                pits += 1
            }
        }
        assert!(ups >= 3 && pits >= 3, "both ways: {ups} up, {pits} pits");
        // The check's flights: 8 risers of 15 cm at difficulty 2/3, 30 cm apart.
        for (kind, sign) in [(TerrainKind::Upstairs, 1.0), (TerrainKind::Downstairs, -1.0)] {
            let f = TerrainSpec { kind, difficulty: 2.0 / 3.0, seed: 0 }.build(0.0);
            let at = |x: f32| f.height_at(x, 0.02).unwrap() * sign;
            // (A riser is a 4 cm ramp between grid points: read a cell's width off the edge.)
            assert!((at(RUN_UP + 0.34) - 0.15).abs() < 1e-4 && at(RUN_UP + 0.24).abs() < 1e-6);
            assert!((at(RUN_UP + 2.45) - 1.2).abs() < 1e-4 && (at(8.0) - 1.2).abs() < 1e-4);
        }
    }

    /// A course's ground: flat before its first stretch, each kind from its stretch's start,
    /// every stretch from the height the one before it ended at, rough ground faded in and out
    /// at its stretch's ends; the same seed gives the same ground.
    #[test]
    fn a_course_lays_its_stretches_end_to_end() {
        let stretch = |start, kind| Stretch { start, kind, difficulty: 2.0 / 3.0 };
        let stretches = [
            stretch(1.0, TerrainKind::Upstairs),
            stretch(5.0, TerrainKind::Rough),
            stretch(7.0, TerrainKind::Flat),
        ];
        let field = course_ground(&stretches, 9, 0.0);
        assert_eq!(field, course_ground(&stretches, 9, 0.0));
        let at = |x: f32| field.height_at(x, 0.02).unwrap();
        assert_eq!(at(0.5), 0.0, "flat before the first stretch");
        // The flight starts at its stretch's start: a riser every 30 cm from 1.0 m.
        assert!(at(1.2).abs() < 1e-6 && (at(1.34) - 0.15).abs() < 1e-4, "{}", at(1.34));
        assert!((at(4.9) - 1.2).abs() < 1e-4, "the top: {}", at(4.9));
        // Rough ground on the top, faded in from its start and out before the flat.
        assert!((at(5.0) - 1.2).abs() < 1e-4 && (at(6.98) - 1.2).abs() < 0.01);
        let bumps: Vec<f32> = (0..20).map(|k| at(5.6 + 0.04 * k as f32) - 1.2).collect();
        assert!(bumps.iter().any(|b| b.abs() > 0.005), "rough: {bumps:?}");
        assert!(bumps.iter().all(|b| b.abs() <= 0.04 + 1e-6), "±4 cm at 2/3: {bumps:?}");
        // The flat stretch goes on at the top's height.
        assert!((at(7.5) - 1.2).abs() < 1e-4 && (at(11.0) - 1.2).abs() < 1e-4);
        // Along another heading, the same profile.
        let turned = course_ground(&stretches, 9, std::f32::consts::FRAC_PI_2);
        assert!((turned.height_at(0.02, 4.9).unwrap() - 1.2).abs() < 1e-4);
    }
}
