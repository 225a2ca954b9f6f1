//! `gait play` end to end: the server on a free port, driven from headless Chromium through the
//! DevTools protocol as a person would drive it (keys held and released), the page read back.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::sleep;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// `gait play` running, with what it printed.
struct Server {
    child: Child,
    /// The page's address, `http://127.0.0.1:PORT/`.
    url: String,
    out: Arc<Mutex<String>>,
}

/// Starts `gait play ARGS --port 0` and waits for the address it prints.
fn start_play(args: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gait"))
        .arg("play")
        .args(args)
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn gait play");
    let out = Arc::new(Mutex::new(String::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout: ChildStdout = child.stdout.take().unwrap();
    let sink = out.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(at) = line.find("http://") {
                let url = line[at..].split_whitespace().next().unwrap_or("").to_string();
                let _ = tx.send(url);
            }
            sink.lock().unwrap().push_str(&(line + "\n"));
        }
    });
    let url = rx.recv_timeout(Duration::from_secs(120)).unwrap_or_else(|_| {
        let _ = child.kill();
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        panic!("gait play printed no address: {}{err}", out.lock().unwrap());
    });
    Server { child, url, out }
}

impl Drop for Server {
    /// However the test ends, the server ends with it.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A child process killed when dropped, however the test ends (a panic included).
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Headless Chromium on one page, driven through the DevTools protocol.
struct Browser {
    _child: KillOnDrop,
    ws: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>,
    next_id: u64,
}

impl Browser {
    fn open(url: &str, profile: &std::path::Path) -> Self {
        let child = Command::new("chromium")
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"])
            .args(["--use-angle=swiftshader", "--enable-unsafe-swiftshader"])
            .args(["--disable-background-networking", "--disable-component-update"])
            // A page in a real browser's front tab is not throttled; a headless one would be.
            .args(["--disable-background-timer-throttling", "--disable-renderer-backgrounding"])
            .arg("--disable-backgrounding-occluded-windows")
            .args(["--remote-debugging-port=0", "--window-size=900,700"])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(url)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium is installed by scripts/setup_test.sh (make test runs it)");
        let mut child = KillOnDrop(child);
        let mut stderr = BufReader::new(child.0.stderr.take().unwrap());
        let mut devtools = None;
        let mut line = String::new();
        while devtools.is_none() && stderr.read_line(&mut line).unwrap_or(0) > 0 {
            if let Some(at) = line.find("ws://127.0.0.1:") {
                let port = line[at + 15..].split('/').next().unwrap().to_string();
                devtools = Some(port);
            }
            line.clear();
        }
        // Chromium keeps writing to stderr: drain it so it never blocks.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        let port = devtools.expect("chromium printed its DevTools address");
        let deadline = Instant::now() + Duration::from_secs(30);
        let target = loop {
            let list = http_get(&format!("127.0.0.1:{port}"), "/json/list");
            let pages: Value = serde_json::from_str(&list).unwrap_or(json!([]));
            let page = pages.as_array().into_iter().flatten().find(|p| {
                p["type"] == "page" && p["url"].as_str().is_some_and(|u| u.starts_with(url))
            });
            if let Some(ws) = page.and_then(|p| p["webSocketDebuggerUrl"].as_str()) {
                break ws.to_string();
            }
            assert!(Instant::now() < deadline, "no page for {url} in {list}");
            sleep(Duration::from_millis(200));
        };
        let (ws, _) = tungstenite::connect(target).expect("DevTools WebSocket");
        Self { _child: child, ws, next_id: 0 }
    }

    /// Calls a DevTools method and returns its result (events in between are skipped).
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({ "id": id, "method": method, "params": params }).to_string();
        self.ws.send(tungstenite::Message::text(message)).unwrap();
        loop {
            let reply = self.ws.read().expect("DevTools reply");
            let Ok(text) = reply.to_text() else { continue };
            let v: Value = serde_json::from_str(text).unwrap();
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    /// The value of a JavaScript expression in the page.
    fn eval(&mut self, expression: &str) -> Value {
        let r = self
            .call("Runtime.evaluate", json!({ "expression": expression, "returnByValue": true }));
        r["result"]["value"].clone()
    }

    /// The page's `gaitPlay.state`.
    fn state(&mut self) -> Value {
        let text = self.eval("JSON.stringify(window.gaitPlay ? gaitPlay.state : null)");
        serde_json::from_str(text.as_str().unwrap_or("null")).unwrap()
    }

    /// A key pressed (`down`) or released, as a keyboard sends it.
    fn key(&mut self, down: bool, key: &str, code: &str, vk: u32) {
        let kind = if down { "keyDown" } else { "keyUp" };
        let text = if down && key.chars().count() == 1 { key } else { "" };
        let params = json!({ "type": kind, "key": key, "code": code, "windowsVirtualKeyCode": vk, "text": text });
        self.call("Input.dispatchKeyEvent", params);
    }

    /// Holds a key for `seconds`. Returns bounds on how long the page saw it held (a loaded
    /// machine delays the events): from the key-down's acknowledgement to the key-up's
    /// sending, and from the key-down's sending to the key-up's acknowledgement.
    fn hold(&mut self, key: &str, code: &str, vk: u32, seconds: f64) -> (f64, f64) {
        let sent = Instant::now();
        self.key(true, key, code, vk);
        let down = Instant::now();
        sleep(Duration::from_secs_f64(seconds));
        let up = Instant::now();
        self.key(false, key, code, vk);
        ((up - down).as_secs_f64(), sent.elapsed().as_secs_f64())
    }

    /// Waits until `ready(state)` holds (or panics after `seconds`).
    fn wait(&mut self, seconds: u64, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(seconds);
        loop {
            let state = self.state();
            if ready(&state) {
                return state;
            }
            assert!(Instant::now() < deadline, "{what}: page state {state}");
            sleep(Duration::from_millis(200));
        }
    }
}

/// A plain HTTP GET's body (read up to its `Content-Length`).
fn http_get(host: &str, path: &str) -> String {
    let Ok(s) = TcpStream::connect(host) else { return String::new() };
    let mut s = BufReader::new(s);
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    if s.get_mut().write_all(request.as_bytes()).is_err() {
        return String::new();
    }
    let (mut length, mut line) = (0usize, String::new());
    while s.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        line.clear();
    }
    let mut body = vec![0; length];
    let _ = s.read_exact(&mut body);
    String::from_utf8_lossy(&body).into_owned()
}

/// The next message of a WebSocket, as JSON.
fn ws_read(
    ws: &mut tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>,
) -> Value {
    serde_json::from_str(ws.read().unwrap().to_text().unwrap()).unwrap()
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// The speed tolerance of the walking task (`gait check`'s cells).
const SPEED_TOLERANCE: f64 = 0.15;
const YAW_RATE_TOLERANCE: f64 = 0.1;

#[test]
fn a_person_drives_the_shipped_walker_from_the_page() {
    let walk = common::pretrained_walk();
    let mut server = start_play(&["--path", walk.to_str().unwrap()]);
    let dir = tempfile::tempdir().unwrap();
    let mut page = Browser::open(&server.url, &dir.path().join("profile"));
    let s = page.wait(60, "the page drives and steps arrive", |s| {
        s["role"] == "drive" && num(&s["steps"]) > 20.0
    });
    let episode = s["episode"].clone();
    let range = s["range"].clone();
    assert_eq!(num(&range[0][1]), 1.5, "the trained range of the run's omni-walk commands");

    // A second page watches: its inputs are refused.
    let ws_url = server.url.replace("http://", "ws://") + "ws";
    let (mut watcher, _) = tungstenite::connect(ws_url).unwrap();
    let first = ws_read(&mut watcher);
    assert_eq!(first, json!({ "type": "role", "role": "watch" }));
    let input = json!({ "type": "command", "command": [1.0, 0.0, 0.0], "seq": 1 }).to_string();
    watcher.send(tungstenite::Message::text(input)).unwrap();
    let refused = loop {
        let m = ws_read(&mut watcher);
        if m["type"] == "refused" {
            break m;
        }
    };
    assert!(refused["why"].as_str().unwrap().contains("watches"), "{refused}");
    drop(watcher);

    // w held for 3 s: the command rises at 1/3 m/s per second held, to about 1 m/s, and the
    // robot walks it. (The page times the hold by its own events, which a loaded machine
    // delays: the rise is checked against the hold's bounds as the test saw them.)
    let (shortest, longest) = page.hold("w", "KeyW", 87, 3.0);
    sleep(Duration::from_secs(3));
    let s = page.state();
    let (command, measured) = (num(&s["command"][0]), num(&s["measured"][0]));
    let held = 3.0 * command;
    assert!(
        held > shortest - 0.05 && held < longest + 0.05,
        "w held {shortest:.2}-{longest:.2} s: command {command}"
    );
    assert!((num(&s["ran"][0]) - command).abs() < 1e-5, "the server runs the page's command: {s}");
    assert!((measured - command).abs() <= SPEED_TOLERANCE, "forward {measured} at {command}: {s}");
    assert_eq!(s["episode"], episode, "no fall while walking: {s}");

    // Stop, then q held for 2 s: a turn to the left at 0.5 rad/s.
    page.hold(" ", "Space", 32, 0.1);
    page.hold("q", "KeyQ", 81, 2.0);
    sleep(Duration::from_secs(3));
    let s = page.state();
    let (turn, yaw) = (num(&s["command"][2]), num(&s["measured"][2]));
    assert!((turn - 0.5).abs() < 1e-6 && num(&s["command"][0]) == 0.0, "clamped at the range: {s}");
    assert!((yaw - turn).abs() <= YAW_RATE_TOLERANCE, "yaw rate {yaw} at {turn}: {s}");

    // p pushes it, and the page shows the push.
    page.hold(" ", "Space", 32, 0.1);
    page.hold("p", "KeyP", 80, 0.1);
    page.wait(5, "the push arrives", |s| num(&s["pushes"]) == 1.0);
    let shown = page.eval("document.getElementById('push').textContent");
    assert!(shown.as_str().unwrap().starts_with("push 0.60 m/s"), "{shown}");

    // The robot is in view.
    let shot = page.call("Page.captureScreenshot", json!({ "format": "png" }));
    let png = data_encoding::BASE64.decode(shot["data"].as_str().unwrap().as_bytes()).unwrap();
    let (blue, red) = common::leg_pixels(&png, [1.0 / 6.0, 5.0 / 6.0], [0.25, 0.75]);
    assert!(blue > 300 && red > 300, "robot pixels in the middle: blue {blue}, red {red}");
    // `GAIT_PLAY_SHOT=FILE` keeps the screenshot (the README's picture).
    if let Some(path) = std::env::var_os("GAIT_PLAY_SHOT") {
        std::fs::write(path, &png).unwrap();
    }

    // The page measures its inputs' round trip and its drawing rate.
    let s = page.state();
    let (latency, fps) = (num(&s["latencyMs"]), num(&s["fps"]));
    assert!(latency.is_finite() && latency > 0.0 && fps > 0.0, "{s}");
    eprintln!("play: key to env and back {latency:.0} ms (median), {fps} frames/s drawn");

    // Closing the driving page ends the server.
    let targets = page.call("Target.getTargets", json!({}));
    let id = targets["targetInfos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "page")
        .map(|t| t["targetId"].clone())
        .unwrap();
    page.call("Target.closeTarget", json!({ "targetId": id }));
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the server still runs after the page closed");
        sleep(Duration::from_millis(100));
    };
    sleep(Duration::from_millis(200));
    let out = server.out.lock().unwrap().clone();
    assert_eq!(status.code(), Some(0), "{out}");
    assert!(out.contains("stopped: the driving page closed"), "{out}");
}

#[test]
fn a_port_in_use_is_one_clear_error_and_ctrl_c_stops_the_server() {
    let walk = common::pretrained_walk();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let o = common::gait(&["play", "--path", walk.to_str().unwrap(), "--port", &port]);
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("port {port} is in use")) && err.lines().count() == 1, "{err}");

    let mut server = start_play(&["--path", walk.to_str().unwrap()]);
    // A client that drives without drawing: each command's round trip to the env and back
    // (the server's part of the page's key-to-env time).
    let ws_url = server.url.replace("http://", "ws://") + "ws";
    let (mut driver, _) = tungstenite::connect(ws_url).unwrap();
    assert_eq!(ws_read(&mut driver)["role"], "drive");
    let mut trips = Vec::new();
    for seq in 1..=25u64 {
        let input = json!({ "type": "command", "command": [0.02 * seq as f64, 0, 0], "seq": seq });
        let sent = Instant::now();
        driver.send(tungstenite::Message::text(input.to_string())).unwrap();
        loop {
            let m = ws_read(&mut driver);
            if m["type"] == "step" && m["ack"].as_u64() == Some(seq) {
                assert!((num(&m["command"][0]) - 0.02 * seq as f64).abs() < 1e-6, "{m}");
                break;
            }
        }
        trips.push(sent.elapsed().as_secs_f64() * 1000.0);
    }
    trips.sort_by(f64::total_cmp);
    eprintln!(
        "play: command to env and back {:.1} ms median, {:.1} ms max (no page)",
        trips[12], trips[24]
    );
    // The ground changes: a new episode on stairs, drawn on the page; a bad one is refused.
    let input = json!({ "type": "ground", "terrain": "stairs:0.5", "seq": 26 });
    driver.send(tungstenite::Message::text(input.to_string())).unwrap();
    let scene = loop {
        let m = ws_read(&mut driver);
        if m["type"] == "scene" {
            break m;
        }
    };
    assert_eq!(
        (&scene["terrain"], &scene["ended"]),
        (&json!("stairs:0.5"), &json!("ground changed"))
    );
    let ground = &scene["ground"];
    let heights = ground["heights"].as_array().unwrap();
    assert_eq!(
        heights.len() as u64,
        ground["nx"].as_u64().unwrap() * ground["ny"].as_u64().unwrap()
    );
    assert!(heights.iter().any(|h| num(h).abs() > 0.1), "stairs rise or, a pit, fall");
    let input = json!({ "type": "ground", "terrain": "lava", "seq": 27 });
    driver.send(tungstenite::Message::text(input.to_string())).unwrap();
    let refused = loop {
        let m = ws_read(&mut driver);
        if m["type"] == "refused" {
            break m;
        }
    };
    assert!(refused["why"].as_str().unwrap().contains("'lava'"), "{refused}");
    // SAFETY: sends SIGINT to the child we started.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGINT) };
    let status = server.child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{}", server.out.lock().unwrap());
}

/// `gait play --onnx` drives an exported controller (its PD from the sidecar) on the lab's
/// model; the driving client going away ends the server with 0.
#[test]
fn an_exported_controller_is_driven_on_the_labs_model() {
    let dir = tempfile::tempdir().unwrap();
    let onnx = dir.path().join("walk.onnx");
    let walk = common::pretrained_walk();
    let o = common::gait(&[
        "export",
        "--path",
        walk.to_str().unwrap(),
        "--out",
        onnx.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let mut server = start_play(&["--onnx", onnx.to_str().unwrap(), "--sim", "mujoco"]);
    let ws_url = server.url.replace("http://", "ws://") + "ws";
    let (mut driver, _) = tungstenite::connect(ws_url).unwrap();
    assert_eq!(ws_read(&mut driver)["role"], "drive");
    let input = json!({ "type": "command", "command": [0.5, 0, 0], "seq": 1 });
    driver.send(tungstenite::Message::text(input.to_string())).unwrap();
    let (mut speeds, mut episodes) = (Vec::new(), std::collections::BTreeSet::new());
    while speeds.len() < 250 {
        let m = ws_read(&mut driver);
        if m["type"] == "step" && m["ack"] == 1 {
            episodes.insert(m["episode"].as_u64().unwrap());
            speeds.push(num(&m["frame"]["forward_speed"]));
        }
    }
    // The last two seconds, after the robot has sped up.
    let mean = speeds[150..].iter().sum::<f64>() / 100.0;
    assert!((mean - 0.5).abs() <= SPEED_TOLERANCE && episodes.len() == 1, "{mean} {episodes:?}");
    drop(driver);
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the server still runs after its driver left");
        sleep(Duration::from_millis(100));
    };
    assert_eq!(status.code(), Some(0), "{}", server.out.lock().unwrap());
}
