//! Pictures of a policy, from one recording of evaluated episodes (every body's pose per policy
//! step, plus the command, speeds and reward terms):
//!
//! * `gait eval --gif FILE.gif`: the first episode as an animated GIF, a side view that follows
//!   the pelvis, a ground grid that slides past to show speed, time and speed in a corner.
//!   Rendered in Rust with plotters' bitmap GIF backend (no browser, no system libraries, the
//!   bundled font), so it works on a headless machine.
//! * `gait eval --record FILE.html`: one self-contained page (three.js and the recording
//!   embedded) that replays every episode in 3D from `file://`.
//!
//! The recording's JSON form ([`Replay`], `docs/replay-schema.json`) is what the page embeds.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use crate::envs::{BodyPose, BodyShape, Primitive};

/// The `format` field of every replay.
pub const REPLAY_FORMAT: &str = "gait-replay";
/// The `version` field; bumped on any incompatible change of the format.
pub const REPLAY_VERSION: u32 = 1;

/// A recording of evaluated episodes (the replay format, version 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replay {
    /// Always [`REPLAY_FORMAT`].
    pub format: String,
    /// [`REPLAY_VERSION`].
    pub version: u32,
    pub env: String,
    /// Simulated seconds per frame (one policy step).
    pub dt: f32,
    /// The bodies, in the order of every frame's `poses`.
    pub bodies: Vec<BodyShape>,
    pub episodes: Vec<Episode>,
}

/// One episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    /// The fixed command `[x m/s, y m/s, turn rad/s]`, if the episode had one.
    pub command: Option<[f32; 3]>,
    pub frames: Vec<Frame>,
}

/// One policy step, after it was taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    /// Per body: position `x, y, z` (m, z up) and orientation quaternion `x, y, z, w`.
    pub poses: Vec<[f32; 7]>,
    /// The env's `forward_speed` / `lateral_speed` metrics (m/s, commanded frame), if it has them.
    pub forward_speed: Option<f32>,
    pub lateral_speed: Option<f32>,
    pub reward: f32,
    /// The reward's terms, for envs that report them.
    pub terms: BTreeMap<String, f32>,
    /// Indices of the bodies in contact (with the ground or another body).
    pub contacts: Vec<usize>,
}

impl Replay {
    pub fn new(env: &str, dt: f32, bodies: Vec<BodyShape>) -> Self {
        Self {
            format: REPLAY_FORMAT.to_string(),
            version: REPLAY_VERSION,
            env: env.to_string(),
            dt,
            bodies,
            episodes: Vec::new(),
        }
    }
}

impl Frame {
    /// A frame from the env's state after a step.
    pub fn capture(env: &dyn crate::envs::Env, reward: f32, terms: &[(&str, f32)]) -> Self {
        let mut poses = Vec::new();
        env.body_poses(&mut poses);
        let metric = |name: &str| env.metrics().iter().find(|(k, _)| *k == name).map(|&(_, v)| v);
        let mut touching = Vec::new();
        env.body_contacts(&mut touching);
        Self {
            poses: poses
                .iter()
                .map(|p| {
                    let [x, y, z] = p.position;
                    let [qx, qy, qz, qw] = p.rotation;
                    [x, y, z, qx, qy, qz, qw]
                })
                .collect(),
            forward_speed: metric("forward_speed"),
            lateral_speed: metric("lateral_speed"),
            reward,
            terms: terms.iter().map(|&(k, v)| (k.to_string(), v)).collect(),
            contacts: touching.iter().enumerate().filter(|(_, &t)| t).map(|(i, _)| i).collect(),
        }
    }

    fn pose(&self, i: usize) -> Option<BodyPose> {
        self.poses
            .get(i)
            .map(|p| BodyPose { position: [p[0], p[1], p[2]], rotation: [p[3], p[4], p[5], p[6]] })
    }
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
fn view_axis(episode: &Episode) -> [f32; 2] {
    let Some(pelvis) = episode.frames.first().and_then(|f| f.pose(0)) else {
        return [1.0, 0.0];
    };
    let forward = BodyPose { position: [0.0; 3], ..pelvis }.apply([1.0, 0.0, 0.0]);
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

/// Renders the first episode of `replay` into `path` as an animated GIF and returns the
/// number of frames.
pub fn render_gif(replay: &Replay, path: &Path, style: GifStyle) -> Result<usize> {
    let rec = replay.episodes.first().context("nothing to draw: no episode was recorded")?;
    anyhow::ensure!(!rec.frames.is_empty(), "nothing to draw: the episode has no steps");
    // Best effort: registering twice (a second picture in one process) is harmless.
    let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, crate::plot::FONT);
    let axis = view_axis(rec);
    let dt = replay.dt;
    // World point → (horizontal along the view axis, height), then pixels around the pelvis.
    let side = |p: [f32; 3]| (p[0] * axis[0] + p[1] * axis[1], p[2]);
    let (w, h) = (style.width as f32, style.height as f32);
    let scale = w / style.span_m;
    let ground_px = h - 0.12 * h;
    let delay_ms = (1000.0 * dt * style.stride as f32).round() as u32;
    let mut frames = 0;
    crate::fsutil::write_atomic_with(path, |tmp| {
        let root = BitMapBackend::gif(tmp, (style.width, style.height), delay_ms)
            .map_err(|e| anyhow::anyhow!("creating the GIF: {e}"))?
            .into_drawing_area();
        let draw_err = |e| anyhow::anyhow!("drawing the GIF: {e:?}");
        // Bodies: the pelvis, then the far leg (right, in a side view of a forward walk), paler,
        // then the near one.
        let n = replay.bodies.len();
        let order: Vec<usize> =
            std::iter::once(0).chain((1 + (n - 1) / 2..n).chain(1..1 + (n - 1) / 2)).collect();
        for (k, frame) in rec.frames.iter().enumerate().step_by(style.stride) {
            let centre = frame.pose(0).map_or(0.0, |p| side(p.position).0);
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
            for &i in &order {
                let (Some(body), Some(pose)) = (replay.bodies.get(i), frame.pose(i)) else {
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
            let t = k as f32 * dt;
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
    })?;
    Ok(frames)
}

/// The page template: `/*GAIT_THREE_JS*/`, `/*GAIT_THREE_LICENSE*/` and `/*GAIT_REPLAY_JSON*/`
/// are replaced by three.js, its licence and the recording.
const PAGE: &str = include_str!("../assets/replay.html");

/// three.js as embedded at build time (`scripts/setup.sh` installs it; `build.rs` embeds it).
#[cfg(gait_three)]
fn three_js() -> Result<(&'static str, &'static str)> {
    Ok((include_str!(env!("GAIT_THREE_JS")), include_str!(env!("GAIT_THREE_LICENSE"))))
}

#[cfg(not(gait_three))]
fn three_js() -> Result<(&'static str, &'static str)> {
    anyhow::bail!(
        "this gait was built without three.js, which --record pages embed: run scripts/setup.sh \
         (it installs three.js with npm) and rebuild"
    )
}

/// `Ok` when this build can write `--record` pages; else the error that says how to get
/// three.js.
pub fn ensure_pages_supported() -> Result<()> {
    three_js().map(|_| ())
}

/// The page for `replay`: one self-contained HTML file (three.js, its licence and the replay
/// JSON inside) that works offline from `file://`.
pub fn page(replay: &Replay) -> Result<String> {
    let (three, licence) = three_js()?;
    // `</` would end the <script> element early; `<\/` is the same JSON string.
    let json = serde_json::to_string(replay)?.replace("</", "<\\/");
    let licence = licence.replace("*/", "* /");
    Ok(PAGE
        .replacen("/*GAIT_THREE_LICENSE*/", &format!("/*\n{licence}*/"), 1)
        .replacen("/*GAIT_THREE_JS*/", three, 1)
        .replacen("/*GAIT_REPLAY_JSON*/", &json, 1))
}

/// The replay JSON embedded in a page written by [`page`] (for tools and tests).
pub fn from_page(html: &str) -> Result<Replay> {
    let start =
        html.find(r#"<script type="application/json" id="replay">"#).context("no replay")?;
    let body = &html[start..];
    let body = &body[body.find('>').context("no replay")? + 1..];
    let end = body.find("</script>").context("unterminated replay")?;
    serde_json::from_str(&body[..end]).context("parsing the embedded replay")
}

/// Writes the page for `replay` to `path` (atomically).
pub fn write_page(replay: &Replay, path: &Path) -> Result<()> {
    let html = page(replay)?;
    crate::fsutil::write_atomic(path, html.as_bytes())
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
