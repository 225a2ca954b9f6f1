//! `gait eval --record`: the replay page holds the documented JSON (round trip), and a real
//! browser (headless Debian Chromium, installed by scripts/setup_test.sh) opens it from
//! `file://` without a JavaScript error and draws the robot.

mod common;

use std::path::Path;
use std::process::Command;

use common::{eval_pretrained, gait, trained_cartpole};
use gait::replay::{from_page, page, Replay, REPLAY_FORMAT, REPLAY_VERSION};

fn record(dir: &Path) -> std::path::PathBuf {
    let html = dir.join("replay.html");
    let o = eval_pretrained("2", "40", &["--record", html.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("(2 episodes, 80 frames; open it in a browser)"), "{out}");
    html
}

#[test]
fn a_recorded_replay_holds_every_frame_and_body_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let html = std::fs::read_to_string(record(dir.path())).unwrap();
    let replay: Replay = from_page(&html).unwrap();
    assert_eq!((replay.format.as_str(), replay.version), (REPLAY_FORMAT, REPLAY_VERSION));
    assert_eq!((replay.env.as_str(), replay.dt), ("cassie", 0.02));
    assert_eq!(replay.bodies.len(), 13, "pelvis and 6 links per leg");
    // Collision shapes: the hip roll and yaw links have none (as in the lab's model).
    let drawn: Vec<&str> = replay
        .bodies
        .iter()
        .filter(|b| !b.primitives.is_empty())
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(drawn.len(), 9, "{drawn:?}");
    assert!(drawn.contains(&"pelvis") && drawn.contains(&"left-foot"), "{drawn:?}");
    assert_eq!(replay.episodes.len(), 2);
    for episode in &replay.episodes {
        assert_eq!(episode.command, Some([1.0, 0.0, 0.0]));
        assert_eq!(episode.frames.len(), 40);
        for f in &episode.frames {
            assert_eq!(f.poses.len(), 13);
            assert!(f.poses.iter().flatten().all(|x| x.is_finite()));
            let q = &f.poses[0][3..];
            let norm: f32 = q.iter().map(|x| x * x).sum();
            assert!((norm - 1.0).abs() < 1e-4, "unit quaternions");
            assert!(f.forward_speed.is_some() && !f.terms.is_empty());
        }
    }
    // Walking: each foot (bodies 6 and 12) touches the ground in some frames and not in others.
    let frames: Vec<_> = replay.episodes.iter().flat_map(|e| &e.frames).collect();
    for foot in [6, 12] {
        let down = frames.iter().filter(|f| f.contacts.contains(&foot)).count();
        assert!(down > 0 && down < frames.len(), "foot {foot} down in {down} of {}", frames.len());
    }
    // The page embeds exactly the serde form: serialize, parse, embed, extract.
    let json = serde_json::to_string(&replay).unwrap();
    assert_eq!(serde_json::from_str::<Replay>(&json).unwrap(), replay);
    assert_eq!(from_page(&page(&replay).unwrap()).unwrap(), replay);
}

fn chromium(dir: &Path, args: &[&str], page: &Path) -> std::process::Output {
    Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader",
            "--virtual-time-budget=1500",
        ])
        .arg(format!("--user-data-dir={}", dir.join(format!("profile{}", args.len())).display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium is installed by scripts/setup_test.sh (make test runs it)")
}

/// The page's status line once Chromium has run it: "ok", or the JavaScript error.
fn page_status(dir: &Path, page: &Path) -> String {
    let dom = chromium(dir, &["--dump-dom"], page);
    let dom = String::from_utf8_lossy(&dom.stdout);
    let status = dom.split(r#"<div id="status">"#).nth(1).and_then(|s| s.split('<').next());
    status.unwrap_or("no status line").to_string()
}

#[test]
fn a_browser_opens_the_page_offline_and_draws_the_robot() {
    let dir = tempfile::tempdir().unwrap();
    let html = record(dir.path());
    assert_eq!(page_status(dir.path(), &html), "ok", "a JavaScript error shows here");

    let shot = dir.path().join("shot.png");
    let arg = format!("--screenshot={}", shot.display());
    let o = chromium(dir.path(), &[&arg, "--window-size=900,700"], &html);
    assert!(shot.is_file(), "{}", String::from_utf8_lossy(&o.stderr));
    // The legs are blue and red; the sky and the sandy ground are neither.
    let png = std::fs::read(&shot).unwrap();
    let (blue, red) = common::leg_pixels(&png, [0.2, 0.75], [1.0 / 3.0, 2.0 / 3.0]);
    assert!(blue > 300 && red > 300, "robot pixels in the middle: blue {blue}, red {red}");

    // A course (`gait eval --course`): its legs are in the recording and the page runs them
    // (the command per frame in the speed plot and the HUD) without an error.
    let course = dir.path().join("course.html");
    let walk = common::pretrained_walk();
    let o = gait(&[
        "eval",
        "--path",
        walk.to_str().unwrap(),
        "--episodes",
        "1",
        "--course",
        "0.4:1,0,0",
        "0.4:0,0,0.4",
        "--record",
        course.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let replay = from_page(&std::fs::read_to_string(&course).unwrap()).unwrap();
    let legs: Vec<_> = replay.episodes[0].course.iter().map(|l| (l.start, l.command)).collect();
    assert_eq!(legs, [(0, [1.0, 0.0, 0.0]), (20, [0.0, 0.0, 0.4])]);
    assert_eq!(replay.episodes[0].command_at(25), Some([0.0, 0.0, 0.4]));
    assert!(replay.episodes[0].frames.iter().all(|f| f.yaw_rate.is_some()));
    assert_eq!(page_status(dir.path(), &course), "ok", "the course page");
}

#[test]
fn envs_without_bodies_refuse_to_record() {
    let dir = tempfile::tempdir().unwrap();
    let run = trained_cartpole(&dir.path().join("logs"), "c", &["--timesteps", "4000"]);
    let out = dir.path().join("c.html");
    let o = gait(&["eval", "--path", run.to_str().unwrap(), "--record", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--record: env 'cartpole' cannot describe its bodies"), "{err}");
    assert!(!out.exists());
}
