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

mod ground;
pub use ground::Ground;

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
    /// The env's name.
    pub env: String,
    /// Simulated seconds per frame (one policy step).
    pub dt: f32,
    /// The bodies, in the order of every frame's `poses`.
    pub bodies: Vec<BodyShape>,
    /// The episodes.
    pub episodes: Vec<Episode>,
}

/// One episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    /// The fixed command `[x m/s, y m/s, turn rad/s]`, if the episode had one (with a course:
    /// its first leg's).
    pub command: Option<[f32; 3]>,
    /// `gait eval --course`: each leg's first step and command (empty without one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub course: Vec<crate::envs::CourseLeg>,
    /// One frame per policy step.
    pub frames: Vec<Frame>,
    /// The ground beyond the flat floor the episode walked on (`--terrain`), around its path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ground: Option<Ground>,
}

impl Episode {
    /// The command in force at frame `k`: the course leg's, else the fixed command.
    pub fn command_at(&self, k: usize) -> Option<[f32; 3]> {
        match self.course.iter().rev().find(|leg| leg.start as usize <= k) {
            Some(leg) => Some(leg.command),
            None => self.command,
        }
    }
}

/// One policy step, after it was taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    /// Per body: position `x, y, z` (m, z up) and orientation quaternion `x, y, z, w`.
    pub poses: Vec<[f32; 7]>,
    /// The env's `forward_speed` / `lateral_speed` metrics (m/s, commanded frame), if it has them.
    pub forward_speed: Option<f32>,
    /// See `forward_speed`.
    pub lateral_speed: Option<f32>,
    /// The env's `yaw_rate` metric (rad/s), if it has it (recordings before it: none).
    #[serde(default)]
    pub yaw_rate: Option<f32>,
    /// The step's reward.
    pub reward: f32,
    /// The reward's terms, for envs that report them.
    pub terms: BTreeMap<String, f32>,
    /// Indices of the bodies in contact (with the ground or another body).
    pub contacts: Vec<usize>,
}

impl Replay {
    /// An empty replay of `env` with frames `dt` s apart and these bodies.
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
        let (mut poses, mut touching) = (Vec::new(), Vec::new());
        if let Some(bodies) = env.bodies() {
            bodies.body_poses(&mut poses);
            bodies.body_contacts(&mut touching);
        }
        let metric = |name: &str| env.metrics().iter().find(|(k, _)| *k == name).map(|&(_, v)| v);
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
            yaw_rate: metric("yaw_rate"),
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
    /// Width (px).
    pub width: u32,
    /// Height (px).
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

/// The pelvis's horizontal heading (unit vector) in `frame`, if it has a pelvis.
fn heading(frame: &Frame) -> Option<[f32; 2]> {
    let pelvis = frame.pose(0)?;
    let forward = BodyPose { position: [0.0; 3], ..pelvis }.apply([1.0, 0.0, 0.0]);
    let norm = forward[0].hypot(forward[1]);
    (norm > 1e-6).then(|| [forward[0] / norm, forward[1] / norm])
}

/// Seconds of heading the follow camera averages over (each side of a frame): long enough
/// that the step-to-step yaw sway does not shake the picture, short enough that a 0.5 rad/s
/// turn stays side-on (the camera lags it by about 0.1 rad).
const CAMERA_SMOOTHING_S: f32 = 0.5;

/// The horizontal direction of the side view at every frame: the pelvis's heading averaged
/// over ±[`CAMERA_SMOOTHING_S`], so the camera follows a turning robot and keeps it side-on,
/// and a robot walking straight moves left to right whatever its yaw.
fn view_axes(episode: &Episode, dt: f32) -> Vec<[f32; 2]> {
    let headings: Vec<Option<[f32; 2]>> = episode.frames.iter().map(heading).collect();
    let half = (CAMERA_SMOOTHING_S / dt.max(1e-6)).round() as usize;
    (0..headings.len())
        .map(|k| {
            let window = &headings[k.saturating_sub(half)..(k + half + 1).min(headings.len())];
            let sum = window.iter().flatten().fold([0.0f32; 2], |a, h| [a[0] + h[0], a[1] + h[1]]);
            let norm = sum[0].hypot(sum[1]);
            if norm < 1e-6 {
                [1.0, 0.0]
            } else {
                [sum[0] / norm, sum[1] / norm]
            }
        })
        .collect()
}

/// The inset map's square in pixels (top-right corner) and the world square it shows:
/// the whole episode's pelvis path with a margin, so a course is drawn to scale.
struct TopView {
    left: i32,
    top: i32,
    size: i32,
    /// World centre (m) and metres per pixel.
    centre: [f32; 2],
    m_per_px: f32,
}

impl TopView {
    fn new(episode: &Episode, style: &GifStyle) -> Self {
        let (mut lo, mut hi) = ([f32::INFINITY; 2], [f32::NEG_INFINITY; 2]);
        for p in episode.frames.iter().filter_map(|f| f.pose(0)) {
            for d in 0..2 {
                lo[d] = lo[d].min(p.position[d]);
                hi[d] = hi[d].max(p.position[d]);
            }
        }
        let extent = (hi[0] - lo[0]).max(hi[1] - lo[1]).max(1.0) + 0.6;
        let size = (style.height as f32 * 0.3) as i32;
        Self {
            left: style.width as i32 - size - 8,
            top: 8,
            size,
            centre: [(lo[0] + hi[0]) / 2.0, (lo[1] + hi[1]) / 2.0],
            m_per_px: extent / size as f32,
        }
    }

    /// World `x, y` → pixel (north up: world +y is up in the inset).
    fn px(&self, p: [f32; 2]) -> (i32, i32) {
        let h = self.size as f32 / 2.0;
        (
            self.left + (h + (p[0] - self.centre[0]) / self.m_per_px) as i32,
            self.top + (h - (p[1] - self.centre[1]) / self.m_per_px) as i32,
        )
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
    let dt = replay.dt;
    let axes = view_axes(rec, dt);
    let map = TopView::new(rec, &style);
    let yaw_window = ((1.0 / dt.max(1e-6)).round() as usize).max(1);
    let walked = walked_along(rec, &axes);
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
            // World point → (horizontal along the view axis, height) relative to the pelvis,
            // then pixels; the grid lies at multiples of 0.25 m of `walked`.
            let axis = axes[k];
            let pelvis = frame.pose(0).map_or([0.0; 3], |p| p.position);
            let side = |p: [f32; 3]| {
                let along = (p[0] - pelvis[0]) * axis[0] + (p[1] - pelvis[1]) * axis[1];
                (walked[k] + along, p[2])
            };
            let centre = walked[k];
            let height_along = |d: f32| {
                let g = rec.ground.as_ref();
                g.map_or(0.0, |g| g.height_at(pelvis[0] + d * axis[0], pelvis[1] + d * axis[1]))
            };
            let base = view_base(&height_along);
            let px = |(x, z): (f32, f32)| {
                (((x - centre) * scale + w / 2.0) as i32, (ground_px - (z - base) * scale) as i32)
            };
            // The terrain's profile along the view through the pelvis, every 4 pixels.
            let profile: Option<Vec<(i32, i32)>> = rec.ground.as_ref().map(|_| {
                (0..=style.width as i32 / 4)
                    .map(|c| {
                        let x = c as f32 * 4.0;
                        let d = (x - w / 2.0) / scale;
                        px((centre + d, height_along(d)))
                    })
                    .collect()
            });
            draw_ground(&root, &style, centre, ground_px, &px, profile.as_deref())
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
                draw_body(&root, body, &pose, colour, scale, &side, &px).map_err(draw_err)?;
            }
            draw_map(&root, &map, rec, k).map_err(draw_err)?;
            draw_labels(&root, rec, k, dt, yaw_window).map_err(draw_err)?;
            root.present().map_err(|e| anyhow::anyhow!("writing a GIF frame: {e}"))?;
            frames += 1;
        }
        Ok(())
    })?;
    Ok(frames)
}

/// How far the pelvis has walked along the camera's axis at each frame: the ground grid
/// slides by this, so it moves when the robot walks and stands still when it turns in place.
fn walked_along(rec: &Episode, axes: &[[f32; 2]]) -> Vec<f32> {
    let mut walked = vec![0.0f32; rec.frames.len()];
    for k in 1..rec.frames.len() {
        let (Some(a), Some(b)) = (rec.frames[k - 1].pose(0), rec.frames[k].pose(0)) else {
            walked[k] = walked[k - 1];
            continue;
        };
        let d = [b.position[0] - a.position[0], b.position[1] - a.position[1]];
        walked[k] = walked[k - 1] + d[0] * axes[k][0] + d[1] * axes[k][1];
    }
    walked
}

/// The height the side view puts at its ground line: on a terrain, the mean of the ground
/// (`height_along`: its height that far from the pelvis along the view) over ±0.3 m, so a
/// robot on stairs stays in the picture; 0 on the flat floor.
fn view_base(height_along: &impl Fn(f32) -> f32) -> f32 {
    [-0.3, -0.15, 0.0, 0.15, 0.3].iter().map(|&d| height_along(d)).sum::<f32>() / 5.0
}

/// The ground of a side view: white sky, a grid every 0.25 m that slides past as the robot
/// walks (`centre`: how far it has walked), and the floor below `ground_px`, or below the
/// terrain's `profile` (pixel points, left to right).
fn draw_ground<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    style: &GifStyle,
    centre: f32,
    ground_px: f32,
    px: &impl Fn((f32, f32)) -> (i32, i32),
    profile: Option<&[(i32, i32)]>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let first = ((centre - style.span_m) / 0.25).floor() as i32;
    for i in 0..=(2.0 * style.span_m / 0.25) as i32 {
        let x = (first + i) as f32 * 0.25;
        let (gx, _) = px((x, 0.0));
        let colour =
            if (first + i) % 4 == 0 { RGBColor(170, 170, 170) } else { RGBColor(225, 225, 225) };
        root.draw(&PathElement::new(vec![(gx, 0), (gx, style.height as i32)], colour))?;
    }
    let earth = RGBColor(205, 195, 175);
    match profile {
        None => root.draw(&Rectangle::new(
            [(0, ground_px as i32), (style.width as i32, style.height as i32)],
            earth.filled(),
        )),
        Some(points) => {
            let bottom = style.height as i32;
            let mut outline = points.to_vec();
            outline.push((style.width as i32, bottom));
            outline.push((0, bottom));
            root.draw(&Polygon::new(outline, earth.filled()))?;
            root.draw(&PathElement::new(points.to_vec(), RGBColor(125, 115, 95)))
        }
    }
}

/// One body's primitives at `pose`: a world point to the side view by `side` (along the view
/// axis, height), then to pixels by `px`; `scale` is pixels per metre.
fn draw_body<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    body: &BodyShape,
    pose: &BodyPose,
    colour: RGBColor,
    scale: f32,
    side: &impl Fn([f32; 3]) -> (f32, f32),
    px: &impl Fn((f32, f32)) -> (i32, i32),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    for prim in &body.primitives {
        match *prim {
            Primitive::Sphere { center, radius } => {
                let c = px(side(pose.apply(center)));
                let r = (radius * scale).max(1.0) as i32;
                root.draw(&Circle::new(c, r, colour.filled()))?;
            }
            Primitive::Capsule { a, b, radius } => {
                let (pa, pb) = (px(side(pose.apply(a))), px(side(pose.apply(b))));
                let width = (2.0 * radius * scale).max(1.0) as u32;
                root.draw(&PathElement::new(vec![pa, pb], colour.stroke_width(width)))?;
                for p in [pa, pb] {
                    root.draw(&Circle::new(p, (width / 2) as i32, colour.filled()))?;
                }
            }
            Primitive::Cuboid { center, half, axes } => {
                let corners: Vec<(f32, f32)> = (0..8)
                    .map(|c| {
                        let s = |bit: usize| if c >> bit & 1 == 1 { 1.0 } else { -1.0 };
                        let local: [f32; 3] = std::array::from_fn(|r| {
                            center[r] + (0..3).map(|k| s(k) * half[k] * axes[k][r]).sum::<f32>()
                        });
                        side(pose.apply(local))
                    })
                    .collect();
                let poly: Vec<(i32, i32)> = hull(corners).into_iter().map(px).collect();
                root.draw(&Polygon::new(poly, colour.filled()))?;
            }
        }
    }
    Ok(())
}

/// The two text lines of frame `k`: time, speeds, the yaw rate over the last second
/// (`yaw_window` frames: the pelvis yaws back and forth with every step), the command.
fn draw_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    rec: &Episode,
    k: usize,
    dt: f32,
    yaw_window: usize,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let frame = &rec.frames[k];
    let t = k as f32 * dt;
    let font = ("sans-serif", 15).into_font().color(&BLACK);
    let mut label = format!("t {t:4.1} s");
    if let Some(v) = frame.forward_speed {
        label.push_str(&format!("   {v:4.2} m/s"));
    }
    if let Some(v) = frame.lateral_speed.filter(|_| frame.yaw_rate.is_some()) {
        label.push_str(&format!(", lateral {v:4.2}"));
    }
    root.draw(&Text::new(label, (8, 8), font.clone()))?;
    let mut second = String::new();
    if frame.yaw_rate.is_some() {
        // Over the last second: the pelvis yaws back and forth with every step.
        let window = &rec.frames[(k + 1).saturating_sub(yaw_window)..=k];
        let mean = window.iter().filter_map(|f| f.yaw_rate).sum::<f32>() / window.len() as f32;
        second.push_str(&format!("yaw rate {mean:5.2} rad/s (1 s)   "));
    }
    match rec.command_at(k) {
        Some([x, 0.0, 0.0]) if frame.yaw_rate.is_none() => {
            second.push_str(&format!("(command {x:.2})"))
        }
        Some([x, y, turn]) => second.push_str(&format!("(command {x:.2}, {y:.2}, {turn:.2})")),
        None => {}
    }
    root.draw(&Text::new(second, (8, 28), font))?;
    Ok(())
}

/// The inset map at frame `k`: the pelvis's path so far, and an arrow of its heading.
fn draw_map<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    map: &TopView,
    episode: &Episode,
    k: usize,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let corners = [(map.left, map.top), (map.left + map.size, map.top + map.size)];
    root.draw(&Rectangle::new(corners, RGBColor(245, 245, 240).filled()))?;
    root.draw(&Rectangle::new(corners, RGBColor(160, 160, 160)))?;
    let path: Vec<(i32, i32)> = episode.frames[..=k]
        .iter()
        .filter_map(|f| f.pose(0))
        .map(|p| map.px([p.position[0], p.position[1]]))
        .collect();
    root.draw(&PathElement::new(path, RGBColor(40, 90, 200).stroke_width(2)))?;
    if let (Some(p), Some(h)) = (episode.frames[k].pose(0), heading(&episode.frames[k])) {
        let at = [p.position[0], p.position[1]];
        let tip = [at[0] + 0.3 * h[0], at[1] + 0.3 * h[1]];
        root.draw(&PathElement::new(vec![map.px(at), map.px(tip)], RED.stroke_width(2)))?;
        root.draw(&Circle::new(map.px(at), 3, RGBColor(90, 90, 90).filled()))?;
    }
    Ok(())
}

/// The page template: `/*GAIT_THREE_JS*/`, `/*GAIT_THREE_LICENSE*/`, `/*GAIT_SCENE_JS*/` and
/// `/*GAIT_REPLAY_JSON*/` are replaced by three.js, its licence, the scene and the recording.
const PAGE: &str = include_str!("../../assets/replay.html");

/// The 3D scene both pages draw (this one and `gait play`'s): lights, floor, bodies, contact
/// rings, terrain and the orbit camera.
const SCENE_JS: &str = include_str!("../../assets/scene.js");

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
    // `</` would end the <script> element early; `<\/` is the same JSON string.
    let json = serde_json::to_string(replay)?.replace("</", "<\\/");
    Ok(page_with_scene(PAGE)?.replacen("/*GAIT_REPLAY_JSON*/", &json, 1))
}

/// `template` with three.js, its licence and the scene code in place of
/// `/*GAIT_THREE_JS*/`, `/*GAIT_THREE_LICENSE*/` and `/*GAIT_SCENE_JS*/`.
pub fn page_with_scene(template: &str) -> Result<String> {
    let (three, licence) = three_js()?;
    let licence = licence.replace("*/", "* /");
    Ok(template
        .replacen("/*GAIT_THREE_LICENSE*/", &format!("/*\n{licence}*/"), 1)
        .replacen("/*GAIT_THREE_JS*/", three, 1)
        .replacen("/*GAIT_SCENE_JS*/", SCENE_JS, 1))
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

    /// A recording keeps the terrain around the pelvis's path, every second point, and draws
    /// it where the terrain is.
    #[test]
    fn a_recording_keeps_the_ground_around_the_path() {
        use crate::envs::terrain::{TerrainKind, TerrainSpec};
        let field = TerrainSpec { kind: TerrainKind::Stairs, difficulty: 0.5, seed: 2 }.build(0.0);
        let frame = |x: f32| Frame {
            poses: vec![[x, 0.0, 0.9, 0.0, 0.0, 0.0, 1.0]],
            forward_speed: None,
            lateral_speed: None,
            yaw_rate: None,
            reward: 0.0,
            terms: BTreeMap::new(),
            contacts: vec![],
        };
        let frames: Vec<Frame> = (0..50).map(|k| frame(k as f32 * 0.1)).collect();
        let g = Ground::around(&field, &frames).unwrap();
        // 4.9 m of path and 2 m either side along x, 4 m across, at 8 cm.
        assert!(
            (g.nx as f32 * g.cell - 8.9).abs() < 0.2 && (g.ny as f32 * g.cell - 4.0).abs() < 0.2
        );
        for x in [0.5f32, 1.7, 3.3, 5.9] {
            let want = field.height_at(x + 0.01, 0.01).unwrap();
            assert!((g.height_at(x + 0.01, 0.01) - want).abs() < 0.13, "{x}");
        }
        assert!(Ground::around(&field, &[]).is_none());
    }
}
