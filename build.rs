//! Embeds an rpath to libtorch's `lib/` so `gait` runs without `LD_LIBRARY_PATH`, and keeps
//! `libtorch_cuda.so` in DT_NEEDED when present so `--device cuda` works on GPU machines
//! (`--as-needed` would otherwise drop it, because nothing references its symbols directly).
//! The lean CPU-only install also ships `libtorch_cuda.so` but not the CUDA libraries it
//! needs (cusparse, cublas, ...), so it is only forced in when those are installed too.
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    println!("cargo:rerun-if-changed=build.rs");
    git_provenance();
    three_js();
    mujoco_rpath();
    let Some(libtorch) = std::env::var_os("LIBTORCH") else {
        println!("cargo:warning=LIBTORCH is not set; run scripts/setup.sh (see README)");
        return;
    };
    // Resolve the repo-local `.libtorch` link so the rpath names the real cache dir.
    let root = PathBuf::from(libtorch);
    let root = root.canonicalize().unwrap_or(root);
    let lib = root.join("lib");
    println!("cargo:rerun-if-changed={}", lib.display());
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    if lib.join("libtorch_cuda.so").exists() && has_cuda_libraries(&root) {
        println!("cargo:rustc-link-search=native={}", lib.display());
        println!("cargo:rustc-link-arg=-Wl,--no-as-needed");
        println!("cargo:rustc-link-arg=-ltorch_cuda");
        println!("cargo:rustc-link-arg=-Wl,--as-needed");
    }
}

/// True when the venv holding `torch/` also holds the CUDA math libraries (the full install).
fn has_cuda_libraries(torch_root: &std::path::Path) -> bool {
    fn find(dir: &std::path::Path, depth: u32) -> bool {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return false;
        };
        entries.flatten().any(|e| {
            let path = e.path();
            let name = e.file_name();
            name.to_string_lossy().starts_with("libcusparse.so")
                || (depth > 0 && path.is_dir() && find(&path, depth - 1))
        })
    }
    torch_root.parent().is_some_and(|site| find(&site.join("nvidia"), 3))
}

/// Sets `GAIT_GIT_COMMIT` and `GAIT_GIT_DIRTY` (recorded in every run's `experiment.json`) when
/// building from a git checkout; neither is set otherwise (a crates.io or tarball build).
/// Reruns when HEAD, the index or the sources change, so "dirty" follows edits.
fn git_provenance() {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            // `git status` must not rewrite .git/index, which would retrigger this script.
            .env("GIT_OPTIONAL_LOCKS", "0")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Some(commit) = git(&["rev-parse", "HEAD"]) else {
        return;
    };
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        for file in ["HEAD", "index"] {
            println!("cargo:rerun-if-changed={dir}/{file}");
        }
    }
    for path in ["src", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={path}");
    }
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_none_or(|s| !s.is_empty());
    println!("cargo:rustc-env=GAIT_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=GAIT_GIT_DIRTY={dirty}");
}

/// Embeds three.js (installed by scripts/setup.sh behind the `.three` link) into the binary for
/// `gait eval --record` pages: sets `GAIT_THREE_JS`, `GAIT_THREE_LICENSE` and the `gait_three`
/// cfg. Without it gait builds all the same and `--record` explains how to get it.
fn three_js() {
    println!("cargo::rustc-check-cfg=cfg(gait_three)");
    println!("cargo:rerun-if-changed=.three");
    let dir = PathBuf::from(".three");
    let (js, licence) = (dir.join("build/three.min.js"), dir.join("LICENSE"));
    if let (Ok(js), Ok(licence)) = (js.canonicalize(), licence.canonicalize()) {
        println!("cargo:rerun-if-changed={}", js.display());
        println!("cargo:rustc-env=GAIT_THREE_JS={}", js.display());
        println!("cargo:rustc-env=GAIT_THREE_LICENSE={}", licence.display());
        println!("cargo:rustc-cfg=gait_three");
    }
}

/// An rpath to libmujoco's directory (`MUJOCO_DYNAMIC_LINK_DIR`, which `.cargo/config.toml` sets
/// to the `.mujoco/lib` link scripts/setup.sh makes), resolved to the per-user cache dir, so
/// `gait` finds `libmujoco.so.3.17.0` without `LD_LIBRARY_PATH`. mujoco-rs links the library;
/// it leaves finding it at run time to its users.
fn mujoco_rpath() {
    println!("cargo:rerun-if-env-changed=MUJOCO_DYNAMIC_LINK_DIR");
    let Some(dir) = std::env::var_os("MUJOCO_DYNAMIC_LINK_DIR") else {
        println!(
            "cargo:warning=MUJOCO_DYNAMIC_LINK_DIR is not set; run scripts/setup.sh (see README)"
        );
        return;
    };
    let dir = PathBuf::from(dir);
    let dir = dir.canonicalize().unwrap_or(dir);
    println!("cargo:rerun-if-changed={}", dir.display());
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
}
