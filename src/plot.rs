//! `gait plot RUN_DIR...`: learning curves as a PNG, drawn from a run's `progress.csv` and
//! `timing.csv` with plotters (bitmap backend, no system libraries).
//!
//! Several directories are drawn as one curve, in the order given: a run and the
//! `--previous` continuations that carried on its step counter. Panels against total
//! timesteps: train and test return, train and test episode length, the mirror loss, and the
//! end-to-end sample rate; for a walking env (its `progress.csv` has `Test/Forward Speed`) a
//! fifth and sixth: the eval tracking (forward speed at the top eval command, lateral drift,
//! velocity error, yaw rate at the top turn command and its error), which shows when walking
//! appears, and the exploration std (`Policy/Std`); and a seventh where settled evaluations ran
//! the selection episodes (`--best-by tracking` or `cells`): `Test/Cells Within`, the count the
//! walking preset picks its best-eval weights by, on a panel of its own (its 0-14 scale would
//! flatten the speeds beside it).
//! The title gives the total steps and the summed wall time.
//!
//! `--overlay` draws each argument as its own coloured curve instead, to compare runs or
//! branches (say, two `--previous` continuations of one run with different flags); an argument
//! `RUN+CONT+...` joins a run and its continuations into one of those curves. Only the
//! train curves are drawn then: the test curve is a handful of deterministic episodes every
//! `--eval-freq` iterations, too sparse and noisy to tell branches apart.
//!
//! The font (DejaVu Sans, free licence in `assets/fonts/LICENSE`) is compiled in, so plotting
//! works on machines without fonts.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use plotters::prelude::*;

use crate::logging::metrics as m;

pub(crate) static FONT: &[u8] = include_bytes!("../assets/fonts/DejaVuSans.ttf");

/// What `gait plot` draws (flags: `crate::cli::PlotFlags`).
#[derive(Debug, Clone, PartialEq)]
pub struct PlotOptions {
    /// Run directories, in training order (a run, then its --previous continuations); at
    /// least one.
    pub paths: Vec<PathBuf>,
    /// Output PNG (None: progress.png in the last run directory).
    pub out: Option<PathBuf>,
    /// Each path its own curve (train curves); `RUN+CONT` joins.
    pub overlay: bool,
}

/// Colours for `--overlay`, in path order (the first is the one-curve plot's blue).
const PALETTE: [RGBColor; 6] =
    [BLUE, RED, RGBColor(0, 150, 0), RGBColor(230, 130, 0), MAGENTA, RGBColor(0, 160, 160)];

/// One run directory's logged columns, by iteration.
#[derive(Debug, Default)]
struct Curves {
    steps: Vec<f64>,
    train_return: Vec<Option<f64>>,
    test_return: Vec<Option<f64>>,
    train_len: Vec<Option<f64>>,
    test_len: Vec<Option<f64>>,
    mirror: Vec<Option<f64>>,
    forward: Vec<Option<f64>>,
    lateral: Vec<Option<f64>>,
    velocity_error: Vec<Option<f64>>,
    yaw_rate: Vec<Option<f64>>,
    yaw_rate_error: Vec<Option<f64>>,
    /// `--best-by tracking`'s score (settled evaluations only).
    tracking_error: Vec<Option<f64>>,
    /// `--best-by cells`' count: selection cells within the task's bounds (settled only).
    cells_within: Vec<Option<f64>>,
    std: Vec<Option<f64>>,
    rate: Vec<Option<f64>>,
    wall_s: f64,
}

fn read_columns(path: &Path, names: &[&str]) -> Result<Vec<Vec<Option<f64>>>> {
    let text = crate::fsutil::read_text(path)
        .with_context(|| format!("not a run directory: cannot read {}", path.display()))?;
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().with_context(|| format!("reading {}", path.display()))?.clone();
    let index: Vec<Option<usize>> =
        names.iter().map(|n| headers.iter().position(|h| h == *n)).collect();
    let mut out = vec![Vec::new(); names.len()];
    for record in reader.records() {
        let record = record.with_context(|| format!("reading {}", path.display()))?;
        for (col, idx) in out.iter_mut().zip(&index) {
            col.push(idx.and_then(|i| record.get(i)).and_then(|s| s.parse::<f64>().ok()));
        }
    }
    Ok(out)
}

fn load(dir: &Path) -> Result<Curves> {
    let progress = read_columns(
        &dir.join("progress.csv"),
        &[
            m::TOTAL_TIMESTEPS,
            m::TRAIN_RETURN,
            m::TEST_RETURN,
            m::TRAIN_LENGTH,
            m::TEST_LENGTH,
            m::MIRROR_LOSS,
            m::FORWARD_SPEED,
            m::LATERAL_SPEED,
            m::VELOCITY_ERROR,
            m::YAW_RATE,
            m::YAW_RATE_ERROR,
            m::POLICY_STD,
            m::TRACKING_ERROR,
            m::CELLS_WITHIN,
        ],
    )?;
    if progress[0].is_empty() {
        bail!("{} has no logged iterations yet", dir.display());
    }
    let timing = read_columns(&dir.join("timing.csv"), &[m::FULL_RATE, m::ELAPSED])
        .unwrap_or_else(|_| vec![Vec::new(), Vec::new()]);
    let mut it = progress.into_iter();
    let mut next = || it.next().unwrap_or_default();
    let steps = next().into_iter().map(|s| s.unwrap_or(f64::NAN)).collect();
    let (train_return, test_return, train_len, test_len, mirror) =
        (next(), next(), next(), next(), next());
    let (forward, lateral, velocity_error) = (next(), next(), next());
    let (yaw_rate, yaw_rate_error, std, tracking_error) = (next(), next(), next(), next());
    let cells_within = next();
    let wall_s = timing[1].iter().rev().find_map(|v| *v).unwrap_or(0.0);
    Ok(Curves {
        steps,
        train_return,
        test_return,
        train_len,
        test_len,
        mirror,
        forward,
        lateral,
        velocity_error,
        yaw_rate,
        yaw_rate_error,
        tracking_error,
        cells_within,
        std,
        rate: timing[0].clone(),
        wall_s,
    })
}

type Line = (String, RGBColor, Vec<(f64, f64)>);

/// The finite points of a column, values clamped to ±1e300 so that the axis range and its
/// 5 % pad stay finite (with ±1e308 the pad overflowed to infinity and the axis never ended).
fn points(steps: &[f64], values: &[Option<f64>]) -> Vec<(f64, f64)> {
    const LIMIT: f64 = 1e300;
    steps
        .iter()
        .zip(values)
        .filter_map(|(&s, v)| {
            v.filter(|v| v.is_finite() && s.is_finite())
                .map(|v| (s.clamp(-LIMIT, LIMIT) / 1e6, v.clamp(-LIMIT, LIMIT)))
        })
        .collect()
}

/// Series of at most this many points get a marker on each: a line through one point draws
/// nothing, and a walking run's selection panel has one point per settled evaluation.
const SPARSE_POINTS: usize = 60;

/// A panel's y axis: the span of its values padded by 5 % each side. A flat series (a single
/// settled evaluation, a constant metric) is padded by 5 % of its value and at least 0.5, so
/// that its tick labels differ: a pad of 1e-6 printed the same value at every tick.
fn y_range(ys: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) =
        ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| (lo.min(y), hi.max(y)));
    if !lo.is_finite() {
        return (-0.05, 1.05);
    }
    let span = hi - lo;
    let pad = if span > 1e-9 { span * 0.05 } else { (hi.abs() * 0.05).max(0.5) };
    (lo - pad, hi + pad)
}

fn panel(
    area: &DrawingArea<BitMapBackend, plotters::coord::Shift>,
    title: &str,
    lines: &[Line],
) -> Result<()> {
    let all: Vec<&(f64, f64)> = lines.iter().flat_map(|l| &l.2).collect();
    let x_max = all.iter().map(|p| p.0).fold(0.0f64, f64::max).max(1e-6);
    let (y_lo, y_hi) = y_range(all.iter().map(|p| p.1));
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 22))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, y_lo..y_hi)
        .map_err(|e| anyhow::anyhow!("drawing {title}: {e}"))?;
    chart
        .configure_mesh()
        .x_desc("timesteps (millions)")
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| anyhow::anyhow!("drawing {title}: {e}"))?;
    for (name, color, pts) in lines {
        if pts.is_empty() {
            continue;
        }
        let color = *color;
        // Segment by segment: plotters joins a wide polyline's segments with uncapped inner
        // corners, and a noisy curve of a thousand rows turned at such acute angles that the
        // corners shot spikes across the panel and into its neighbours.
        let segments =
            pts.windows(2).map(|w| PathElement::new(vec![w[0], w[1]], color.stroke_width(2)));
        chart
            .draw_series(segments)
            .map_err(|e| anyhow::anyhow!("drawing {title}: {e}"))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        if pts.len() <= SPARSE_POINTS {
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(|e| anyhow::anyhow!("drawing {title}: {e}"))?;
        }
    }
    if lines.iter().filter(|l| !l.2.is_empty()).count() > 1 {
        chart
            .configure_series_labels()
            // Learning curves rise to the right; the upper left is usually empty.
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(|e| anyhow::anyhow!("drawing {title}: {e}"))?;
    }
    Ok(())
}

impl Curves {
    fn append(&mut self, c: Curves) {
        self.steps.extend(c.steps);
        self.train_return.extend(c.train_return);
        self.test_return.extend(c.test_return);
        self.train_len.extend(c.train_len);
        self.test_len.extend(c.test_len);
        self.mirror.extend(c.mirror);
        self.forward.extend(c.forward);
        self.lateral.extend(c.lateral);
        self.velocity_error.extend(c.velocity_error);
        self.yaw_rate.extend(c.yaw_rate);
        self.yaw_rate_error.extend(c.yaw_rate_error);
        self.tracking_error.extend(c.tracking_error);
        self.cells_within.extend(c.cells_within);
        self.std.extend(c.std);
        self.rate.extend(c.rate);
        self.wall_s += c.wall_s;
    }

    fn last_step(&self) -> f64 {
        self.steps.iter().rev().find(|s| s.is_finite()).copied().unwrap_or(0.0)
    }

    /// The rate column can be shorter than the progress rows (timing.csv is written second).
    fn rate_points(&self) -> Vec<(f64, f64)> {
        let steps: Vec<f64> = self.steps.iter().take(self.rate.len()).copied().collect();
        points(&steps, &self.rate)
    }
}

/// Legend labels for `--overlay`: the run name (`logdir/env/RUN/timestamp`), or
/// `run/timestamp` where two curves share a run name.
fn labels(firsts: &[PathBuf]) -> Vec<String> {
    let part = |dir: &Path, n: usize| -> String {
        let parts: Vec<String> = dir
            .components()
            .rev()
            .take(n)
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        parts.into_iter().rev().collect::<Vec<_>>().join("/")
    };
    let runs: Vec<String> =
        firsts.iter().map(|d| d.parent().map(|p| part(p, 1)).unwrap_or_default()).collect();
    firsts
        .iter()
        .zip(&runs)
        .map(|(dir, run)| {
            let unique = runs.iter().filter(|r| *r == run).count() == 1;
            if unique && !run.is_empty() {
                run.clone()
            } else {
                part(dir, 2)
            }
        })
        .collect()
}

/// Panel titles, in drawing order (the fifth and sixth only for walking envs, the seventh only
/// where settled evaluations ran the selection episodes).
const TITLES: [&str; 7] = [
    "Return",
    "Episode length (policy steps)",
    m::MIRROR_LOSS,
    "Timesteps per second (FULL)",
    // Short enough for a 700-pixel panel; the legend names each curve.
    "Eval tracking: speeds (m/s), yaw rate (rad/s)",
    m::POLICY_STD,
    "Selection: cells within the task's bounds (settled evaluations)",
];

fn joined(args: &PlotOptions) -> Result<(Vec<Vec<Line>>, String)> {
    let mut all = Curves::default();
    for dir in &args.paths {
        all.append(load(dir)?);
    }
    let last = args.paths.last().context("no run directory given")?;
    let title = format!(
        "{}: {:.2}M steps, {:.1} h wall",
        last.display(),
        all.last_step() / 1e6,
        all.wall_s / 3600.0
    );
    let s = &all.steps;
    let test = "test (deterministic)".to_string();
    let mut panels = vec![
        vec![
            ("train".into(), BLUE, points(s, &all.train_return)),
            (test.clone(), RED, points(s, &all.test_return)),
        ],
        vec![
            ("train".into(), BLUE, points(s, &all.train_len)),
            (test, RED, points(s, &all.test_len)),
        ],
        vec![("mirror".into(), BLUE, points(s, &all.mirror))],
        vec![("steps/s".into(), BLUE, all.rate_points())],
    ];
    let forward = points(s, &all.forward);
    if !forward.is_empty() {
        panels.push(vec![
            ("forward".into(), BLUE, forward),
            ("|lateral|".into(), RGBColor(0, 150, 0), points(s, &all.lateral)),
            ("velocity error".into(), RED, points(s, &all.velocity_error)),
            ("yaw rate at top turn".into(), RGBColor(230, 130, 0), points(s, &all.yaw_rate)),
            ("yaw rate error".into(), MAGENTA, points(s, &all.yaw_rate_error)),
            ("tracking error (tolerances)".into(), BLACK, points(s, &all.tracking_error)),
        ]);
        panels.push(vec![("std".into(), BLUE, points(s, &all.std))]);
        let cells = points(s, &all.cells_within);
        if !cells.is_empty() {
            panels.push(vec![("cells within".into(), BLACK, cells)]);
        }
    }
    Ok((panels, title))
}

/// The directories of one `--overlay` curve: `RUN+CONT+...` joins a run and its continuations
/// (an argument that is itself an existing directory is taken whole, `+` and all).
fn curve_dirs(arg: &Path) -> Vec<PathBuf> {
    let text = arg.to_string_lossy();
    if arg.is_dir() || !text.contains('+') {
        return vec![arg.to_path_buf()];
    }
    text.split('+').map(PathBuf::from).collect()
}

fn overlaid(args: &PlotOptions) -> Result<(Vec<Vec<Line>>, String)> {
    let mut panels: Vec<Vec<Line>> = vec![Vec::new(); 6];
    let mut wall_s = 0.0;
    let curves: Vec<Vec<PathBuf>> = args.paths.iter().map(|p| curve_dirs(p)).collect();
    let firsts: Vec<PathBuf> = curves.iter().map(|dirs| dirs[0].clone()).collect();
    for (i, (dirs, label)) in curves.iter().zip(labels(&firsts)).enumerate() {
        let mut c = Curves::default();
        for dir in dirs {
            c.append(load(dir)?);
        }
        let mut name = label;
        if dirs.len() > 1 {
            name += &format!(" +{}", dirs.len() - 1);
        }
        let color = PALETTE[i % PALETTE.len()];
        panels[0].push((name.clone(), color, points(&c.steps, &c.train_return)));
        panels[1].push((name.clone(), color, points(&c.steps, &c.train_len)));
        panels[2].push((name.clone(), color, points(&c.steps, &c.mirror)));
        panels[3].push((name.clone(), color, c.rate_points()));
        panels[4].push((name.clone(), color, points(&c.steps, &c.forward)));
        panels[5].push((name, color, points(&c.steps, &c.std)));
        wall_s += c.wall_s;
    }
    if panels[4].iter().all(|l| l.2.is_empty()) {
        panels.truncate(4);
    }
    let title = format!(
        "{} runs overlaid (train curves), {:.1} h wall in all",
        args.paths.len(),
        wall_s / 3600.0
    );
    Ok((panels, title))
}

/// Draws the curves of `args.paths` and returns the PNG's path.
pub fn run_plot(args: &PlotOptions) -> Result<PathBuf> {
    let (lines, title) = if args.overlay { overlaid(args)? } else { joined(args)? };
    let last = args.paths.last().context("no run directory given")?;
    let last = if args.overlay { curve_dirs(last).pop().unwrap_or_default() } else { last.clone() };
    let out = args.out.clone().unwrap_or_else(|| last.join("progress.png"));
    // Best effort: registering twice (a second plot in one process) is harmless.
    let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);

    crate::outputs::check(&[crate::outputs::Output {
        flag: "--out",
        path: &out,
        extensions: &["png"],
    }])?;
    // Drawn into a temp file beside `out` (removed on any failure), then renamed over it. The
    // encoder picks the format from the extension, which the temp name keeps.
    crate::fsutil::write_atomic_with(&out, |tmp| {
        let width = 700 * lines.len().div_ceil(2).max(2) as u32;
        let root = BitMapBackend::new(tmp, (width, 1000)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow::anyhow!("drawing: {e}"))?;
        let root = root.titled(&title, ("sans-serif", 24)).map_err(|e| anyhow::anyhow!("{e}"))?;
        let areas = root.split_evenly((2, lines.len().div_ceil(2)));
        let mut titles = TITLES;
        if args.overlay {
            titles[4] = "Eval forward speed at the top command (m/s)";
        }
        for ((area, title), lines) in areas.iter().zip(titles).zip(&lines) {
            panel(area, title, lines)?;
        }
        root.present().map_err(|e| anyhow::anyhow!("encoding the PNG: {e}"))
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlay_labels_are_run_names_unless_two_curves_share_one() {
        let dirs: Vec<PathBuf> =
            ["logs/cassie/a/t1", "logs/cassie/b/t2"].iter().map(PathBuf::from).collect();
        assert_eq!(labels(&dirs), ["a", "b"]);
        let dirs: Vec<PathBuf> =
            ["logs/cassie/a/t1", "logs/cassie/a/t2", "x/c/t3"].iter().map(PathBuf::from).collect();
        assert_eq!(labels(&dirs), ["a/t1", "a/t2", "c"]);
    }

    /// A walking run's progress.csv: four rows, the last two settled evaluations with a count.
    fn walking_run(dir: &Path, cells: bool) {
        let mut head = format!("{},{},{}", m::TOTAL_TIMESTEPS, m::TEST_RETURN, m::FORWARD_SPEED);
        let mut rows = ["1000,1.0,0.1", "2000,,", "3000,2.0,0.5", "4000,3.0,0.9"].map(String::from);
        if cells {
            head += &format!(",{}", m::CELLS_WITHIN);
            for (row, c) in rows.iter_mut().zip(["", "", "12", "14"]) {
                *row += &format!(",{c}");
            }
        }
        std::fs::write(dir.join("progress.csv"), format!("{head}\n{}\n", rows.join("\n"))).unwrap();
    }

    #[test]
    fn the_cells_within_get_a_panel_of_their_own_where_they_were_logged() {
        let dir = tempfile::tempdir().unwrap();
        let options = |out: &str| PlotOptions {
            paths: vec![dir.path().to_path_buf()],
            out: Some(dir.path().join(out)),
            overlay: false,
        };
        walking_run(dir.path(), false);
        let (panels, _) = joined(&options("a.png")).unwrap();
        assert_eq!(panels.len(), 6, "tracking and std, no selection panel");
        walking_run(dir.path(), true);
        let (panels, _) = joined(&options("b.png")).unwrap();
        assert_eq!(panels.len(), 7);
        assert_eq!(panels[6][0].2, vec![(0.003, 12.0), (0.004, 14.0)], "only the counted rows");
        // Drawn four panels wide: 4 × 700 pixels (the PNG's IHDR width, big-endian).
        let png = std::fs::read(run_plot(&options("b.png")).unwrap()).unwrap();
        assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 2800);
    }

    #[test]
    fn a_flat_series_gets_an_axis_with_distinct_ticks() {
        assert_eq!(y_range([12.0].into_iter()), (12.0 - 12.0 * 0.05, 12.0 + 12.0 * 0.05), "5 %");
        assert_eq!(y_range([0.0, 0.0].into_iter()), (-0.5, 0.5), "at least 0.5");
        let (lo, hi) = y_range([1.0, 3.0].into_iter());
        assert!((lo - 0.9).abs() < 1e-12 && (hi - 3.1).abs() < 1e-12, "5 % of the span: {lo} {hi}");
        assert_eq!(y_range(std::iter::empty()), (-0.05, 1.05), "no points: 0..1, padded");
    }

    /// Pixels of pure `BLUE` (the train curves' colour) in rows `rows` of a decoded PNG.
    fn blue_pixels(png: &Path, rows: std::ops::Range<usize>) -> usize {
        let file = std::io::BufReader::new(std::fs::File::open(png).unwrap());
        let mut reader = png::Decoder::new(file).read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        let row_bytes = info.line_size;
        rows.flat_map(|r| buf[r * row_bytes..(r + 1) * row_bytes].chunks(3))
            .filter(|p| *p == [0, 0, 255])
            .count()
    }

    #[test]
    fn a_noisy_curve_stays_inside_its_panel() {
        let dir = tempfile::tempdir().unwrap();
        // A thousand rows alternating between 0 and 1: acute corners at every row.
        let head = format!("{},{},{}", m::TOTAL_TIMESTEPS, m::TRAIN_RETURN, m::TRAIN_LENGTH);
        let rows: Vec<String> =
            (0..1000).map(|i| format!("{},{},{}", (i + 1) * 1000, i % 2, 100)).collect();
        std::fs::write(dir.path().join("progress.csv"), format!("{head}\n{}\n", rows.join("\n")))
            .unwrap();
        let options = PlotOptions {
            paths: vec![dir.path().to_path_buf()],
            out: Some(dir.path().join("p.png")),
            overlay: false,
        };
        let png = run_plot(&options).unwrap();
        assert!(blue_pixels(&png, 60..400) > 1000, "the curve is drawn");
        // The figure's title and the Return panel's caption are the first 45 rows.
        assert_eq!(blue_pixels(&png, 0..45), 0, "nothing above the panels' plotting areas");
    }

    #[test]
    fn plus_joins_directories_unless_the_whole_argument_is_one() {
        assert_eq!(curve_dirs(Path::new("r/a+r/b")), [PathBuf::from("r/a"), PathBuf::from("r/b")]);
        let dir = tempfile::tempdir().unwrap();
        let odd = dir.path().join("a+b");
        std::fs::create_dir(&odd).unwrap();
        assert_eq!(curve_dirs(&odd), vec![odd]);
    }
}
