//! The terrain an episode walked on, as a recording keeps it for the page and the GIF.

use serde::{Deserialize, Serialize};

use super::Frame;

/// A heightfield (every point's height on a regular grid), as the page and the GIF draw it:
/// point `(i, j)` at `origin + (i, j) · cell` has height `heights[j · nx + i]` (m).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ground {
    /// World (x, y) of point (0, 0).
    pub origin: [f32; 2],
    /// Grid spacing (m).
    pub cell: f32,
    /// Points along x.
    pub nx: usize,
    /// Points along y.
    pub ny: usize,
    /// Heights, row by row along x.
    pub heights: Vec<f32>,
}

/// Every how many of the terrain's points a recording keeps (8 cm of its 4 cm cells).
const GROUND_STRIDE: usize = 2;

/// Metres of ground kept around an episode's path.
const GROUND_MARGIN: f32 = 2.0;

impl Ground {
    /// The part of `field` within 2 m of the pelvis path of `frames`, every second point (8 cm
    /// of its 4 cm); `None` without frames or off the grid.
    pub fn around(field: &crate::envs::terrain::Heightfield, frames: &[Frame]) -> Option<Self> {
        let path: Vec<[f32; 2]> = frames
            .iter()
            .filter_map(|f| f.pose(0))
            .map(|p| [p.position[0], p.position[1]])
            .collect();
        let lo = path.iter().fold([f32::INFINITY; 2], |m, p| [m[0].min(p[0]), m[1].min(p[1])]);
        let hi = path.iter().fold([f32::NEG_INFINITY; 2], |m, p| [m[0].max(p[0]), m[1].max(p[1])]);
        if path.is_empty() {
            return None;
        }
        let margin = |v: [f32; 2], by: f32| [v[0] + by, v[1] + by];
        Self::within(field, margin(lo, -GROUND_MARGIN), margin(hi, GROUND_MARGIN))
    }

    /// The part of `field` in the box from `lo` to `hi` (world x, y), every second point (8 cm
    /// of its 4 cm); `None` off the grid.
    pub fn within(
        field: &crate::envs::terrain::Heightfield,
        lo: [f32; 2],
        hi: [f32; 2],
    ) -> Option<Self> {
        let index = |v: f32, origin: f32, n: usize| {
            (((v - origin) / field.cell).floor().max(0.0) as usize).min(n - 1)
        };
        let (i0, i1) =
            (index(lo[0], field.origin[0], field.nx), index(hi[0], field.origin[0], field.nx));
        let (j0, j1) =
            (index(lo[1], field.origin[1], field.ny), index(hi[1], field.origin[1], field.ny));
        if i1 <= i0 || j1 <= j0 {
            return None;
        }
        let (is, js): (Vec<usize>, Vec<usize>) = (
            (i0..=i1).step_by(GROUND_STRIDE).collect(),
            (j0..=j1).step_by(GROUND_STRIDE).collect(),
        );
        let heights = js.iter().flat_map(|&j| is.iter().map(move |&i| field.at(i, j))).collect();
        Some(Self {
            origin: [
                field.origin[0] + i0 as f32 * field.cell,
                field.origin[1] + j0 as f32 * field.cell,
            ],
            cell: field.cell * GROUND_STRIDE as f32,
            nx: is.len(),
            ny: js.len(),
            heights,
        })
    }

    /// The height at world `(x, y)`, bilinear between points (0 off the grid): for drawing.
    pub fn height_at(&self, x: f32, y: f32) -> f32 {
        let u = (x - self.origin[0]) / self.cell;
        let v = (y - self.origin[1]) / self.cell;
        if self.nx < 2 || self.ny < 2 || u < 0.0 || v < 0.0 {
            return 0.0;
        }
        let (i, j) = (u.floor() as usize, v.floor() as usize);
        if i + 1 >= self.nx || j + 1 >= self.ny {
            return 0.0;
        }
        let (fu, fv) = (u - i as f32, v - j as f32);
        let at = |i: usize, j: usize| self.heights[j * self.nx + i];
        let bottom = at(i, j) + fu * (at(i + 1, j) - at(i, j));
        let top = at(i, j + 1) + fu * (at(i + 1, j + 1) - at(i, j + 1));
        bottom + fv * (top - bottom)
    }
}
