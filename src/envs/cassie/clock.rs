//! The periodic gait clock of the reference's LocomotionClockEnv (roadrunner §7.5).
//!
//! Phase `φ ∈ [0, T)` advances by `1/policy_rate` per policy step (`φ > T ⇒ φ −= T`). Per leg,
//! a swing ratio `sr` and a period shift `s` (fraction of the cycle) define when the leg swings:
//! * [`GaitClock::von_mises`]: `F(x; loc=(1−sr)·2π) − F(x; loc=2π)` with `x = (φ/T + s)·2π`,
//!   `F` the von Mises CDF with κ = 1/std² (std 0.1): ≈ 0 in stance, ≈ 1 in swing, smooth edges.
//!   Tabulated at 200 points over one cycle and linearly interpolated, as the reference does.
//! * [`GaitClock::linear`]: piecewise-linear 0 → 1 → 0 with ramps of `pt` of the swing.
//! * Observation: `[sin, cos](2πφ/T)` (2 values) or, with the full clock, per leg
//!   `[sin, cos](2π(φ/T + s))` (4 values).

use std::f64::consts::PI;

use super::vonmises;

/// Samples per cycle of the von Mises table (the reference's `precompute_von_mises(200)`).
const TABLE: usize = 200;

#[derive(Debug, Clone, PartialEq)]
pub struct GaitClock {
    cycle_time: f64,
    phase: f64,
    phase_add: f64,
    swing: [f64; 2],
    shift: [f64; 2],
    kappa: f64,
    table: [Vec<f64>; 2],
}

/// `np.interp(x, xs, ys)` for increasing `xs`.
fn interp(x: f64, xs: &[f64], ys: &[f64]) -> f64 {
    if x <= xs[0] {
        return ys[0];
    }
    for i in 1..xs.len() {
        if x <= xs[i] {
            let w = (x - xs[i - 1]) / (xs[i] - xs[i - 1]);
            return ys[i - 1] + w * (ys[i] - ys[i - 1]);
        }
    }
    ys[ys.len() - 1]
}

impl GaitClock {
    /// `cycle_time` T (s), `policy_rate` (Hz), swing ratios and period shifts per leg [L, R],
    /// von Mises `std` (κ = 1/std²).
    pub fn new(
        cycle_time: f64,
        policy_rate: f64,
        swing: [f64; 2],
        shift: [f64; 2],
        std: f64,
    ) -> Self {
        let mut clock = Self {
            cycle_time,
            phase: 0.0,
            phase_add: 1.0 / policy_rate,
            swing,
            shift,
            kappa: 1.0 / (std * std),
            table: [Vec::new(), Vec::new()],
        };
        clock.precompute();
        clock
    }

    /// Whether this clock runs the gait `GaitClock::new` would build from these arguments
    /// (its phase aside).
    pub fn is_gait(
        &self,
        cycle_time: f64,
        policy_rate: f64,
        swing: [f64; 2],
        shift: [f64; 2],
        std: f64,
    ) -> bool {
        self.cycle_time == cycle_time
            && self.phase_add == 1.0 / policy_rate
            && self.swing == swing
            && self.shift == shift
            && self.kappa == 1.0 / (std * std)
    }

    fn precompute(&mut self) {
        let t = self.cycle_time;
        for leg in 0..2 {
            self.table[leg] = (0..TABLE)
                .map(|i| self.von_mises_exact(leg, t * i as f64 / (TABLE - 1) as f64))
                .collect();
        }
    }

    pub fn phase(&self) -> f64 {
        self.phase
    }

    pub fn set_phase(&mut self, phase: f64) {
        self.phase = phase.rem_euclid(self.cycle_time);
    }

    pub fn cycle_time(&self) -> f64 {
        self.cycle_time
    }

    /// Changes the cycle time and keeps the phase's fraction of the cycle. The swing values
    /// depend on that fraction alone, so the tables stand (nothing is allocated).
    pub fn retime(&mut self, cycle_time: f64) {
        let fraction = self.phase / self.cycle_time;
        self.cycle_time = cycle_time;
        self.phase = (fraction * cycle_time).rem_euclid(cycle_time);
    }

    pub fn swing(&self) -> [f64; 2] {
        self.swing
    }

    pub fn shift(&self) -> [f64; 2] {
        self.shift
    }

    /// The von Mises swing values `[left, right]` tabulated at `φ = T · i / 199`, `i = 0..200`
    /// (what [`GaitClock::von_mises`] interpolates).
    pub fn swing_table(&self) -> [Vec<f64>; 2] {
        self.table.clone()
    }

    /// Advances by one policy step.
    pub fn increment(&mut self) {
        self.phase += self.phase_add;
        if self.phase > self.cycle_time {
            self.phase -= self.cycle_time;
        }
    }

    /// The von Mises swing value of `leg` (0 = left) at `phase`, without the table.
    pub fn von_mises_exact(&self, leg: usize, phase: f64) -> f64 {
        let x = (phase / self.cycle_time + self.shift[leg]) * 2.0 * PI;
        vonmises::cdf(x, self.kappa, (1.0 - self.swing[leg]) * 2.0 * PI)
            - vonmises::cdf(x, self.kappa, 2.0 * PI)
    }

    /// Von Mises swing values [L, R] at the current phase (table lookup).
    pub fn von_mises(&self) -> [f64; 2] {
        // The table's abscissae are uniform, so the bracketing index is computed, not searched
        // (same result as `np.interp` on `linspace(0, T, 200)`, no allocation per step).
        let x = (self.phase / self.cycle_time * (TABLE - 1) as f64).clamp(0.0, (TABLE - 1) as f64);
        let i = (x.floor() as usize).min(TABLE - 2);
        let w = x - i as f64;
        let at = |t: &[f64]| t[i] + w * (t[i + 1] - t[i]);
        [at(&self.table[0]), at(&self.table[1])]
    }

    /// Linear swing values [L, R] with ramps of `pt` (fraction of the swing), ≈ 1 in swing.
    pub fn linear(&self, pt: f64) -> [f64; 2] {
        let t = self.cycle_time;
        let mut out = [0.0; 2];
        for (leg, value) in out.iter_mut().enumerate() {
            let mut phi = self.phase + self.shift[leg] * t;
            if phi > t {
                phi -= t;
            }
            let (mut swing, stance) = (t * self.swing[leg], t * (1.0 - self.swing[leg]));
            let tr = swing * pt;
            swing -= tr;
            let xs = [0.0, stance, stance + tr / 2.0, stance + tr / 2.0 + swing, t];
            *value = interp(phi, &xs, &[0.0, 0.0, 1.0, 1.0, 0.0]);
        }
        out
    }

    /// `[sin, cos](2πφ/T)`.
    pub fn input_clock(&self) -> [f64; 2] {
        let a = 2.0 * PI * self.phase / self.cycle_time;
        [a.sin(), a.cos()]
    }

    /// `[sin, cos](2π(φ/T + s_L)), [sin, cos](2π(φ/T + s_R))`.
    pub fn input_full_clock(&self) -> [f64; 4] {
        let f = self.phase / self.cycle_time;
        let (l, r) = (2.0 * PI * (f + self.shift[0]), 2.0 * PI * (f + self.shift[1]));
        [l.sin(), l.cos(), r.sin(), r.cos()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default_clock() -> GaitClock {
        // The reference default gait: T = 0.7 s, swing 0.5/0.5, shifts [0, 0.5], 50 Hz.
        GaitClock::new(0.7, 50.0, [0.5, 0.5], [0.0, 0.5], 0.1)
    }

    #[test]
    fn phase_returns_after_one_cycle() {
        // roadrunner test --clock: after int(T·rate) steps, within phase_add of the start.
        let mut c = default_clock();
        c.set_phase(0.123);
        for _ in 0..(0.7f64 * 50.0) as usize {
            c.increment();
        }
        let d = (c.phase() - 0.123).abs();
        assert!(d.min(0.7 - d) <= 1.0 / 50.0 + 1e-12, "{}", c.phase());
    }

    #[test]
    fn von_mises_is_zero_in_stance_one_in_swing_and_legs_alternate() {
        let mut c = default_clock();
        // Left: stance for φ/T in (0, 0.5), swing in (0.5, 1); right is shifted by half.
        for (frac, left, right) in [(0.25, 0.0, 1.0), (0.75, 1.0, 0.0)] {
            c.set_phase(frac * 0.7);
            let [l, r] = c.von_mises();
            assert!((l - left).abs() < 1e-3 && (r - right).abs() < 1e-3, "{frac}: {l} {r}");
            let exact = c.von_mises_exact(0, frac * 0.7);
            assert!((exact - left).abs() < 1e-6);
        }
        // Values stay in [0, 1] everywhere and the table matches the exact values closely.
        for i in 0..700 {
            let p = i as f64 * 0.001;
            c.set_phase(p);
            let v = c.von_mises();
            assert!(v.iter().all(|x| (-1e-9..=1.0 + 1e-9).contains(x)), "{p}: {v:?}");
            assert!((v[0] - c.von_mises_exact(0, p)).abs() < 0.05);
        }
    }

    #[test]
    fn linear_clock_matches_hand_values() {
        // T 1, swing 0.5, pt 0.2: stance [0, .5], ramp up to .55, flat to .95, ramp down to 1.
        let mut c = GaitClock::new(1.0, 50.0, [0.5, 0.5], [0.0, 0.5], 0.1);
        for (phase, want) in [(0.25, 0.0), (0.525, 0.5), (0.55, 1.0), (0.9, 1.0), (0.975, 0.5)] {
            c.set_phase(phase);
            assert!((c.linear(0.2)[0] - want).abs() < 1e-12, "{phase}");
        }
        c.set_phase(0.25); // right leg is half a cycle ahead: φ' = 0.75, in swing
        assert!((c.linear(0.2)[1] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn clock_inputs() {
        let mut c = default_clock();
        c.set_phase(0.175); // a quarter cycle
        let [s, co] = c.input_clock();
        assert!((s - 1.0).abs() < 1e-12 && co.abs() < 1e-12);
        let f = c.input_full_clock();
        assert!((f[0] - 1.0).abs() < 1e-12 && (f[2] + 1.0).abs() < 1e-12, "{f:?}");
    }
}
