//! Pictures of a policy. `gait eval --gif FILE.gif` records one episode (every body's pose per
//! policy step) and renders it as an animated GIF: a side view that follows the pelvis, a ground
//! grid that slides past to show speed, and the time and speed printed in a corner.
//!
//! Rendered in Rust with plotters' bitmap GIF backend (no browser, no system libraries, the
//! bundled font), so it works on a headless machine.

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;

use crate::envs::{BodyPose, BodyShape, Primitive};

/// One episode's bodies and their poses per policy step.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    pub bodies: Vec<BodyShape>,
    /// Seconds per policy step.
    pub dt: f32,
    /// The fixed command of the episode, if any (`x, y, turn`).
    pub command: Option<[f32; 3]>,
    pub frames: Vec<Frame>,
}

/// One policy step.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub poses: Vec<BodyPose>,
    /// The env's `forward_speed` metric at this step, when it has one.
    pub forward_speed: Option<f32>,
}

/// GIF geometry and pacing.
#[derive(Debug, Clone, Copy)]
pub struct GifStyle {
    pub width: u32,
    pub height: u32,
    /// Every `stride`-th policy step becomes a frame.
    pub stride: usize,
    /// Metres of world shown across the width.
    pub span_m: f32,
}

impl Default for GifStyle {
    /// 400×300 px, every 3rd policy step (about 17 frames per simulated second at 50 Hz,
    /// played in real time), 3 m across: a 10 s episode is about 1-2 MB.
    fn default() -> Self {
        Self { width: 400, height: 300, stride: 3, span_m: 3.0 }
    }
}

impl GifStyle {
    /// Frames a recording of `steps` policy steps gives.
    pub fn frames_for(&self, steps: usize) -> usize {
        steps.div_ceil(self.stride)
    }
}

/// The horizontal direction of the side view: the pelvis's heading at the first frame, so a
/// robot walking straight moves left to right whatever its yaw.
fn view_axis(rec: &Recording) -> [f32; 2] {
    let Some(pelvis) = rec.frames.first().and_then(|f| f.poses.first()) else {
        return [1.0, 0.0];
    };
    let forward = BodyPose { position: [0.0; 3], ..*pelvis }.apply([1.0, 0.0, 0.0]);
    let norm = forward[0].hypot(forward[1]);
    if norm < 1e-6 {
        [1.0, 0.0]
    } else {
        [forward[0] / norm, forward[1] / norm]
    }
}

/// Convex hull (monotone chain) of a few points, for a box's silhouette.
fn hull(mut pts: Vec<(f32, f32)>) -> Vec<(f32, f32)> {
    pts.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let cross = |o: (f32, f32), a: (f32, f32), b: (f32, f32)| {
        (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0)
    };
    let mut out: Vec<(f32, f32)> = Vec::new();
    for pass in 0..2 {
        let start = out.len();
        let iter: Box<dyn Iterator<Item = &(f32, f32)>> =
            if pass == 0 { Box::new(pts.iter()) } else { Box::new(pts.iter().rev()) };
        for &p in iter {
            while out.len() >= start + 2 && cross(out[out.len() - 2], out[out.len() - 1], p) <= 0.0
            {
                out.pop();
            }
            out.push(p);
        }
        out.pop();
    }
    out
}

/// Renders `rec` into `path` as an animated GIF and returns the number of frames.
pub fn render_gif(rec: &Recording, path: &Path, style: GifStyle) -> Result<usize> {
    anyhow::ensure!(!rec.frames.is_empty(), "nothing to draw: the episode has no steps");
    // Best effort: registering twice (a second picture in one process) is harmless.
    let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, crate::plot::FONT);
    let axis = view_axis(rec);
    // World point → (horizontal along the view axis, height), then pixels around the pelvis.
    let side = |p: [f32; 3]| (p[0] * axis[0] + p[1] * axis[1], p[2]);
    let (w, h) = (style.width as f32, style.height as f32);
    let scale = w / style.span_m;
    let ground_px = h - 0.12 * h;
    let delay_ms = (1000.0 * rec.dt * style.stride as f32).round() as u32;
    let mut frames = 0;
    crate::fsutil::write_atomic_with(path, |tmp| {
        let root = BitMapBackend::gif(tmp, (style.width, style.height), delay_ms)
            .map_err(|e| anyhow::anyhow!("creating the GIF: {e}"))?
            .into_drawing_area();
        let draw_err = |e| anyhow::anyhow!("drawing the GIF: {e:?}");
        for (k, frame) in rec.frames.iter().enumerate().step_by(style.stride) {
            let centre = frame.poses.first().map_or(0.0, |p| side(p.position).0);
            let px = |(x, z): (f32, f32)| {
                (((x - centre) * scale + w / 2.0) as i32, (ground_px - z * scale) as i32)
            };
            root.fill(&WHITE).map_err(draw_err)?;
            // Ground and a grid every 0.25 m that slides past as the robot walks.
            let first = ((centre - style.span_m) / 0.25).floor() as i32;
            for i in 0..=(2.0 * style.span_m / 0.25) as i32 {
                let x = (first + i) as f32 * 0.25;
                let (gx, _) = px((x, 0.0));
                let colour = if (first + i) % 4 == 0 {
                    RGBColor(170, 170, 170)
                } else {
                    RGBColor(225, 225, 225)
                };
                root.draw(&PathElement::new(vec![(gx, 0), (gx, ground_px as i32)], colour))
                    .map_err(draw_err)?;
            }
            root.draw(&Rectangle::new(
                [(0, ground_px as i32), (style.width as i32, style.height as i32)],
                RGBColor(205, 195, 175).filled(),
            ))
            .map_err(draw_err)?;
            // Bodies: the far leg (right, in a side view of a forward walk) first, paler.
            let n = rec.bodies.len();
            let order: Vec<usize> =
                std::iter::once(0).chain((1 + (n - 1) / 2..n).chain(1..1 + (n - 1) / 2)).collect();
            for i in order {
                let (Some(body), Some(pose)) = (rec.bodies.get(i), frame.poses.get(i)) else {
                    continue;
                };
                let colour = match i {
                    0 => RGBColor(90, 90, 90),
                    i if i <= (n - 1) / 2 => RGBColor(40, 90, 200),
                    _ => RGBColor(150, 175, 225),
                };
                for prim in &body.primitives {
                    match *prim {
                        Primitive::Sphere { center, radius } => {
                            let c = px(side(pose.apply(center)));
                            let r = (radius * scale).max(1.0) as i32;
                            root.draw(&Circle::new(c, r, colour.filled())).map_err(draw_err)?;
                        }
                        Primitive::Capsule { a, b, radius } => {
                            let (pa, pb) = (px(side(pose.apply(a))), px(side(pose.apply(b))));
                            let width = (2.0 * radius * scale).max(1.0) as u32;
                            root.draw(&PathElement::new(vec![pa, pb], colour.stroke_width(width)))
                                .map_err(draw_err)?;
                            for p in [pa, pb] {
                                root.draw(&Circle::new(p, (width / 2) as i32, colour.filled()))
                                    .map_err(draw_err)?;
                            }
                        }
                        Primitive::Cuboid { center, half, axes } => {
                            let corners: Vec<(f32, f32)> = (0..8)
                                .map(|c| {
                                    let s = |bit: usize| if c >> bit & 1 == 1 { 1.0 } else { -1.0 };
                                    let local: [f32; 3] = std::array::from_fn(|r| {
                                        center[r]
                                            + (0..3)
                                                .map(|k| s(k) * half[k] * axes[k][r])
                                                .sum::<f32>()
                                    });
                                    side(pose.apply(local))
                                })
                                .collect();
                            let poly: Vec<(i32, i32)> = hull(corners).into_iter().map(px).collect();
                            root.draw(&Polygon::new(poly, colour.filled())).map_err(draw_err)?;
                        }
                    }
                }
            }
            let t = k as f32 * rec.dt;
            let mut label = format!("t {t:4.1} s");
            if let Some(v) = frame.forward_speed {
                label.push_str(&format!("   {v:4.2} m/s"));
            }
            if let Some([x, _, _]) = rec.command {
                label.push_str(&format!("   (command {x:.2})"));
            }
            root.draw(&Text::new(label, (8, 8), ("sans-serif", 16).into_font().color(&BLACK)))
                .map_err(draw_err)?;
            root.present().map_err(|e| anyhow::anyhow!("writing a GIF frame: {e}"))?;
            frames += 1;
        }
        Ok(())
    })
    .with_context(|| format!("writing {}", path.display()))?;
    Ok(frames)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hull_of_a_square_and_its_centre_is_the_square() {
        let h = hull(vec![(0.0, 0.0), (1.0, 0.0), (0.5, 0.5), (1.0, 1.0), (0.0, 1.0)]);
        assert_eq!(h.len(), 4, "{h:?}");
        assert!(!h.contains(&(0.5, 0.5)));
    }
}
