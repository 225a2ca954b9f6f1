//! `gait plot`: a PNG from a run's CSV files, one clear error for a directory that is not a run.

mod common;

use common::{gait, only_run};

#[test]
fn plot_draws_a_png_of_a_run_and_refuses_other_directories() {
    let dir = tempfile::tempdir().unwrap();
    let logdir = dir.path().to_str().unwrap();
    let o = gait(&["train", "ppo", "--env", "cartpole", "--timesteps", "8000", "--logdir", logdir]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = only_run(&only_run(&dir.path().join("cartpole")));

    let o = gait(&["plot", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let png = std::fs::read(run.join("progress.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(png.len() > 20_000, "a drawn 1400x1000 chart, not an empty image: {} bytes", png.len());

    // --overlay: each argument its own curve (here the run, and the run joined to itself with
    // `+` as a continuation would be), written to --out.
    let out = dir.path().join("compare.png");
    let (r, o) = (run.to_str().unwrap(), out.to_str().unwrap());
    let joined = format!("{r}+{r}");
    let o = gait(&["plot", "--overlay", r, &joined, "--out", o]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let overlay = std::fs::read(&out).unwrap();
    assert_eq!(&overlay[..8], b"\x89PNG\r\n\x1a\n");
    assert_ne!(overlay, png, "the overlay draws legends and no test curves");

    let missing = format!("{r}+{logdir}/nope");
    let o =
        gait(&["plot", "--overlay", &missing, "--out", dir.path().join("x.png").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nope"));
    assert!(!dir.path().join("x.png").exists());

    let o = gait(&["plot", logdir]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("not a run directory"), "{err}");
    assert!(!dir.path().join("progress.png").exists());
}
