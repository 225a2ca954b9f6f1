//! Random sidecars and run files (issue 82's property test): an export's sidecar and a run's
//! `experiment.json` with one value replaced at a random place, by a value of any JSON type
//! (huge, negative, empty, nested, huge arrays), fed to `eval --onnx`, `check --onnx`,
//! `eval --path`, `check --path` and `export`. Each ends with exit 0 or one short error line
//! (exit 1 or 2; `check` 3 for cells not within), never a panic, and the files fed stay as
//! they were given.

mod common;

use std::path::Path;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

/// Values of every JSON type, the ones that break parsers and arithmetic first.
fn values() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1e308),
        json!(-1e308),
        json!(1e39),
        json!(0.5),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(""),
        json!("x"),
        json!([]),
        json!([0.0, 0.0, 0.0]),
        Value::Array(vec![json!(1e308); 10]),
        Value::Array(vec![json!(0.0); 100_000]),
        json!({}),
        json!({ "a": 1 }),
        json!([[1]]),
    ]
}

/// The JSON pointers of every value in `doc` (objects' keys and arrays' first element).
fn pointers(doc: &Value, at: String, out: &mut Vec<String>) {
    match doc {
        Value::Object(map) => {
            for (k, v) in map {
                pointers(v, format!("{at}/{k}"), out);
            }
        }
        Value::Array(items) if !items.is_empty() => pointers(&items[0], format!("{at}/0"), out),
        _ => {}
    }
    out.push(at);
}

/// `doc` with the value at a random place replaced by a random value.
fn mutate(doc: &Value, rng: &mut rand_chacha::ChaCha8Rng) -> (String, Value) {
    let mut all = Vec::new();
    pointers(doc, String::new(), &mut all);
    all.retain(|p| !p.is_empty());
    let at = all.choose(rng).expect("a place").clone();
    let mut out = doc.clone();
    let value = values().choose(rng).expect("a value").clone();
    *out.pointer_mut(&at).expect("the place exists") = value;
    (at, out)
}

/// Runs gait with `args`, and checks it ended cleanly: `allowed` exit codes, one error line
/// when it failed, no panic. Returns the exit code.
fn clean(args: &[&str], allowed: &[i32], what: &str) -> i32 {
    let o = common::gait(args);
    let err = String::from_utf8_lossy(&o.stderr);
    let code = o.status.code().unwrap_or(-1);
    assert!(!err.contains("panicked"), "{what}: panicked: {err}");
    assert!(allowed.contains(&code), "{what}: exit {code}: {err}");
    if code == 1 || code == 2 {
        let errors = err.lines().filter(|l| l.starts_with("error")).count();
        assert!(errors == 1 && err.len() <= 2000, "{what}: not one short error line: {err}");
    }
    code
}

fn bytes(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

#[test]
fn random_sidecars_and_run_files_end_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("w.onnx");
    let sidecar = dir.path().join("w.onnx.json");
    let walk = common::pretrained_walk();
    let exported = common::gait(&[
        "export",
        "--path",
        walk.to_str().unwrap(),
        "--out",
        model.to_str().unwrap(),
    ]);
    assert!(exported.status.success(), "{}", String::from_utf8_lossy(&exported.stderr));
    let original: Value = serde_json::from_slice(&bytes(&sidecar)).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(82);
    let m = model.to_str().unwrap();
    let short = ["--command", "1,0,0", "--episodes", "1", "--traj-len", "5"];
    let mut refused = 0;
    for case in 0..24 {
        let (at, doc) = mutate(&original, &mut rng);
        let text = serde_json::to_vec(&doc).unwrap();
        std::fs::write(&sidecar, &text).unwrap();
        let what = format!("sidecar case {case}, {at}");
        let args = [&["eval", "--onnx", m][..], &short[..]].concat();
        refused += usize::from(clean(&args, &[0, 1, 2], &what) != 0);
        if rng.gen_bool(0.25) {
            let check = ["check", "--onnx", m, "--sims", "rapier", "--command", "0,0,0"];
            let args = [&check[..], &["--episodes", "1", "--traj-len", "5"][..]].concat();
            clean(&args, &[0, 1, 2, 3], &format!("check {what}"));
        }
        assert_eq!(bytes(&sidecar), text, "{what}: the sidecar was changed");
    }
    assert!(refused > 0, "no random sidecar was refused");

    // A run dir whose experiment.json was edited at a random place.
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    for entry in std::fs::read_dir(&walk).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, run.join(path.file_name().unwrap())).unwrap();
        }
    }
    let experiment = run.join("experiment.json");
    let original: Value = serde_json::from_slice(&bytes(&experiment)).unwrap();
    let r = run.to_str().unwrap();
    let out = dir.path().join("x.onnx");
    for case in 0..16 {
        let (at, doc) = mutate(&original, &mut rng);
        let text = serde_json::to_vec(&doc).unwrap();
        std::fs::write(&experiment, &text).unwrap();
        let what = format!("run file case {case}, {at}");
        let args = [&["eval", "--path", r][..], &short[..]].concat();
        clean(&args, &[0, 1, 2], &what);
        if rng.gen_bool(0.3) {
            let _ = std::fs::remove_file(&out);
            let _ = std::fs::remove_file(dir.path().join("x.onnx.json"));
            let code =
                clean(&["export", "--path", r, "--out", out.to_str().unwrap()], &[0, 1, 2], &what);
            assert_eq!(
                code == 0,
                out.exists(),
                "{what}: an export is written exactly when it succeeds"
            );
        }
        assert_eq!(bytes(&experiment), text, "{what}: the run file was changed");
    }
}
