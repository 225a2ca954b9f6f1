//! The third-party model files the repository ships are the ones their scripts copied:
//! Gymnasium's MuJoCo task models and licence, checked against their recorded SHA-256 sums
//! (`scripts/gym_assets.sh --check`, offline).

use std::path::Path;
use std::process::Command;

#[test]
fn gymnasium_models_match_their_recorded_sums() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new("bash")
        .arg(root.join("scripts/gym_assets.sh"))
        .arg("--check")
        .output()
        .expect("run the script");
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let sums = std::fs::read_to_string(root.join("assets/gymnasium-mujoco/SHA256SUMS")).unwrap();
    let files: Vec<&str> = sums.lines().filter_map(|l| l.split_whitespace().nth(1)).collect();
    assert_eq!(files.len(), 15, "14 models and the licence: {files:?}");
    for task in ["ant", "half_cheetah", "hopper", "humanoid", "walker2d_v5", "swimmer"] {
        assert!(files.contains(&format!("{task}.xml").as_str()), "{task}");
    }
}
