//! The height scan (`--height-scan`): the ground's height at a grid of points around the
//! pelvis, as a robot with a depth camera or lidar and an elevation map reads it, for robots
//! with perception; gait's walkers are blind by default.
//!
//! The grid lies in the pelvis's own heading frame (its yaw; roll and pitch ignored), centred
//! laterally under the pelvis and reaching further ahead than behind, where the next steps land:
//! [`FORWARD`] × [`LATERAL`], row by row (forward offset outer, lateral offset inner). Each
//! value is the pelvis's height above the ground at that point (m), clipped to
//! [`CLIP`]: about 1.0 everywhere on the flat floor at the standing height, larger over a drop
//! and smaller under a step up. The lateral offsets are symmetric, so the left/right mirror
//! swaps columns and keeps every value's sign.

use rapier3d::glamx::Vec3;

/// Forward offsets (m) of the grid's rows, in the pelvis's heading frame: 0.3 m behind to
/// 0.9 m ahead, 0.1 m apart (a stride at 1 m/s and a 0.7 s cycle is about 0.7 m).
pub const FORWARD: [f32; 13] = [-0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];

/// Lateral offsets (m) of the grid's columns, to the pelvis's left: the feet walk about
/// 0.13 m either side of the pelvis.
pub const LATERAL: [f32; 5] = [-0.2, -0.1, 0.0, 0.1, 0.2];

/// The values of the scan.
pub const LEN: usize = FORWARD.len() * LATERAL.len();

/// The range (m) each value is clipped to: a drop or a wall beyond it reads as its bound, as
/// an elevation map's window does.
pub const CLIP: [f32; 2] = [0.0, 2.0];

/// The scan's normalizer statistics (mean, std; m), fixed rather than measured: the centre of
/// [`CLIP`] and a tenth of its width, so the normalizer's default ±5σ clip passes the whole
/// range. A prenormalization's own (std 0.07 m on the floor it met) clipped every drop deeper
/// than 0.35 m below the standing height: a descent read as the top of its flight (D-066).
pub const NORM: [f64; 2] = [1.0, 0.2];

/// σ (m) of the Gaussian noise on each value at a noise scale of 1: an elevation map's error
/// on a legged robot is a few centimetres.
pub const NOISE_STD: f32 = 0.02;

/// Writes the scan into `out` ([`LEN`] values) for a pelvis at `pelvis` with yaw `yaw` (rad),
/// with `ground(x, y)` the ground's height (m) at a world point. Allocation-free.
pub fn write(out: &mut [f32], pelvis: Vec3, yaw: f32, ground: impl Fn(f32, f32) -> f32) {
    debug_assert_eq!(out.len(), LEN);
    let (s, c) = yaw.sin_cos();
    let points = FORWARD.iter().flat_map(|&f| LATERAL.iter().map(move |&l| (f, l)));
    for (value, (f, l)) in out.iter_mut().zip(points) {
        let (x, y) = (pelvis.x + c * f - s * l, pelvis.y + s * f + c * l);
        *value = (pelvis.z - ground(x, y)).clamp(CLIP[0], CLIP[1]);
    }
}

/// The scan's part of the observation's mirror list (the reference's signed-index encoding),
/// for a scan that begins at index `at`: each point takes the value of its lateral mirror
/// image, sign kept.
pub fn mirror_list(at: usize) -> Vec<f64> {
    let columns = LATERAL.len();
    (0..LEN).map(|k| (at + k - k % columns + (columns - 1 - k % columns)) as f64).collect()
}

/// The scan's entries by name, for the exported controller's observation layout.
pub fn names() -> Vec<String> {
    let points = FORWARD.iter().flat_map(|&f| LATERAL.iter().map(move |&l| (f, l)));
    points
        .map(|(f, l)| {
            format!(
                "height_scan_{f:+.1}_{l:+.1} (m: pelvis height above the ground {f:+.1} m ahead \
                 and {l:+.1} m to the left in the pelvis's heading frame, clipped to [{}, {}])",
                CLIP[0], CLIP[1]
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flat_floor_reads_the_pelvis_height_everywhere() {
        let mut out = [0.0; LEN];
        write(&mut out, Vec3::new(3.0, -2.0, 0.95), 1.2, |_, _| 0.0);
        assert!(out.iter().all(|&v| (v - 0.95).abs() < 1e-6), "{out:?}");
    }

    #[test]
    fn the_grid_turns_with_the_heading() {
        // A step up of 0.15 m from x = 0.45 on: facing +x, the rows from 0.5 m ahead read it;
        // facing −x, none does.
        let step = |x: f32, _y: f32| if x >= 0.45 { 0.15 } else { 0.0 };
        let mut out = [0.0; LEN];
        write(&mut out, Vec3::new(0.0, 0.0, 1.0), 0.0, step);
        for (row, &f) in FORWARD.iter().enumerate() {
            let want = if f >= 0.45 { 0.85 } else { 1.0 };
            let got = &out[row * LATERAL.len()..(row + 1) * LATERAL.len()];
            assert!(got.iter().all(|&v| (v - want).abs() < 1e-6), "row {f}: {got:?}");
        }
        write(&mut out, Vec3::new(0.0, 0.0, 1.0), std::f32::consts::PI, step);
        assert!(out.iter().all(|&v| (v - 1.0).abs() < 1e-6), "{out:?}");
        // Facing +y, the left columns (positive lateral offset) lie at negative x.
        let wall = |x: f32, _y: f32| if x < -0.15 { 0.5 } else { 0.0 };
        write(&mut out, Vec3::new(0.0, 0.0, 1.0), std::f32::consts::FRAC_PI_2, wall);
        for (k, &v) in out.iter().enumerate() {
            let left = LATERAL[k % LATERAL.len()];
            let want = if left > 0.15 { 0.5 } else { 1.0 };
            assert!((v - want).abs() < 1e-5, "point {k} (left {left}): {v}");
        }
    }

    #[test]
    fn the_scan_and_nothing_else_has_fixed_statistics() {
        use crate::envs::EnvSchedule;
        let blind = super::super::CassieConfig::default();
        assert!(blind.fixed_inputs().is_empty());
        let scan = super::super::CassieConfig { height_scan: true, ..blind };
        let names = super::super::controller::observation(&scan);
        let fixed: Vec<usize> = scan.fixed_inputs().iter().map(|f| f.index).collect();
        let scanned: Vec<usize> =
            (0..names.len()).filter(|&i| names[i].starts_with("height_scan_")).collect();
        assert_eq!((fixed.len(), &fixed), (LEN, &scanned));
        let f = scan.fixed_inputs()[0];
        // ±5σ (the normalizer's default clip) spans the clip range exactly.
        assert_eq!([f.mean - 5.0 * f.std, f.mean + 5.0 * f.std], CLIP.map(f64::from));
    }

    #[test]
    fn values_are_clipped() {
        let mut out = [0.0; LEN];
        write(&mut out, Vec3::new(0.0, 0.0, 1.0), 0.0, |x, _| if x > 0.0 { 5.0 } else { -5.0 });
        assert!(out.iter().all(|&v| v == CLIP[0] || v == CLIP[1]), "{out:?}");
    }

    #[test]
    fn the_mirror_swaps_columns_and_is_an_involution() {
        let list = mirror_list(10);
        assert_eq!(list.len(), LEN);
        let columns = LATERAL.len();
        for (k, &src) in list.iter().enumerate() {
            let src = src as usize - 10;
            assert_eq!(src / columns, k / columns, "same row");
            assert_eq!(LATERAL[src % columns], -LATERAL[k % columns], "mirrored column");
            assert_eq!(list[src] as usize - 10, k, "an involution");
        }
        assert_eq!(names().len(), LEN);
    }
}
