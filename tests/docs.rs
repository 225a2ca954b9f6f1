//! The three homes for words stay apart and linked: `--help` and the code say what a setting
//! does and why in a line, with no run names (those are the notebook's, `docs/notebook/`);
//! every decision record the code names exists in `docs/decisions.md`; and every relative link
//! in the README, `docs/` and the pretrained policies' pages points at a file that exists.

mod common;

use std::path::{Path, PathBuf};

use common::{gait, stdout};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Whether `word` names a run: a label with a seed suffix such as `push45-s0`, `fr6-s2-fs1` or
/// `fs1-s*`, the notebook's naming.
fn is_run_name(word: &str) -> bool {
    let parts: Vec<&str> = word.split('-').collect();
    parts.len() >= 2
        && parts[0].chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && parts[1..].iter().any(|p| {
            p.len() >= 2
                && p.starts_with('s')
                && p[1..].chars().all(|c| c.is_ascii_digit() || c == '*')
        })
}

/// The run names and stop numbers in `text`, for the failure message.
fn run_names(text: &str) -> Vec<String> {
    let words = text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '*'));
    let mut found: Vec<String> = words.filter(|w| is_run_name(w)).map(str::to_string).collect();
    let lower = text.to_lowercase();
    for (at, _) in lower.match_indices("stop ") {
        let digits = lower[at + 5..].chars().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 {
            found.push(text[at..at + 5 + digits].to_string());
        }
    }
    found
}

/// Every file under `dir` whose extension is `ext`, recursively.
fn files_with(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_with(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    files_with(dir, "rs", out);
}

#[test]
fn the_matcher_finds_run_names_and_only_them() {
    for name in ["push45-s0", "fr6-s2-fs1", "fs1-s*", "omniD4-s0", "pe1-s1"] {
        assert!(is_run_name(name), "{name}");
    }
    for word in ["cassie-walk", "x-s", "s0", "ppo-sampler", "D-031", "1-s0", "cassie-s3d"] {
        assert!(!is_run_name(word), "{word}");
    }
    assert_eq!(run_names("as stop 71 found"), vec!["stop 71"]);
    assert!(run_names("stop the run").is_empty());
}

/// `gait train ppo --help` (every setting's doc) and the other commands' help name no run.
#[test]
fn help_names_no_run() {
    for args in [
        &["train", "ppo", "--help"][..],
        &["eval", "--help"],
        &["check", "--help"],
        &["export", "--help"],
        &["bench", "--help"],
        &["plot", "--help"],
    ] {
        let o = gait(args);
        assert!(o.status.success(), "{args:?}");
        let names = run_names(&stdout(&o));
        assert!(names.is_empty(), "gait {}: {names:?}", args.join(" "));
    }
}

/// No source file names a run or a stop: the code says why in a line and cites a record.
#[test]
fn the_code_names_no_run() {
    let mut files = Vec::new();
    rust_files(&repo().join("src"), &mut files);
    assert!(files.len() > 50);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let names = run_names(&text);
        assert!(names.is_empty(), "{}: {names:?}", file.display());
    }
}

/// Every decision record the code cites (`D-NNN`) is a heading of `docs/decisions.md`.
#[test]
fn every_cited_decision_has_a_record() {
    let records = std::fs::read_to_string(repo().join("docs/decisions.md")).unwrap();
    let mut files = Vec::new();
    rust_files(&repo().join("src"), &mut files);
    let mut cited = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (at, _) in text.match_indices("D-") {
            let id = &text[at..];
            let digits = id[2..].chars().take_while(|c| c.is_ascii_digit()).count();
            if digits != 3 {
                continue;
            }
            cited += 1;
            let heading = format!("## {}:", &id[..5]);
            assert!(records.contains(&heading), "{} cites {}", file.display(), &id[..5]);
        }
    }
    assert!(cited > 20, "{cited} citations");
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    files_with(dir, "md", out);
}

/// Every relative link `](path)` or `](path#anchor)` in README.md, `docs/` and `pretrained/`
/// points at a file or folder that exists.
#[test]
fn relative_links_resolve() {
    let root = repo();
    let mut pages = vec![root.join("README.md")];
    markdown_files(&root.join("docs"), &mut pages);
    markdown_files(&root.join("pretrained"), &mut pages);
    let mut checked = 0;
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = rest[..end].split('#').next().unwrap();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let path = page.parent().unwrap().join(target);
            assert!(path.exists(), "{}: link to {target}", page.display());
            checked += 1;
        }
    }
    assert!(checked > 30, "{checked} links");
}

/// `docs/reference/settings.md` as the code declares it today: every setting of `gait train`
/// by section (flag, TOML key, default, accepted range, doc), then every env's preset.
fn settings_reference() -> String {
    use gait::cli::{flag_of, shown};
    use gait::config::{presets, TrainConfig};
    let mut out = String::from(
        "# Settings reference\n\n\
         Generated from the code (`TrainConfig::settings()` and the env presets): do not edit.\n\
         `GAIT_BLESS=1 cargo test --release --test docs` rewrites it; the same test fails when\n\
         it is not what the code declares. Why a value is what it is: the `D-NNN` records in\n\
         [decisions.md](../decisions.md).\n",
    );
    let defaults = TrainConfig::default().leaves();
    let mut heading = "";
    for d in TrainConfig::settings() {
        if d.heading != heading {
            heading = d.heading;
            out.push_str(&format!(
                "\n## {heading}\n\n| flag | key | default | accepts | what |\n|---|---|---|---|---|\n"
            ));
        }
        let default = defaults.iter().find(|(k, _)| *k == d.path).map_or_else(
            || "unset".to_string(),
            |(_, v)| if v.is_null() { "unset".into() } else { shown(v) },
        );
        let accepts = d.setting.range.map_or_else(String::new, |r| r.phrase().to_string());
        let what = d.setting.help().replace('|', "\\|");
        out.push_str(&format!(
            "| `--{}` | `{}` | `{}` | {} | {} |\n",
            flag_of(&d.path),
            d.path,
            default.replace('|', "\\|"),
            accepts.replace('|', "\\|"),
            what
        ));
    }
    out.push_str("\n## Env presets\n\nWhat each env's preset sets instead of the defaults above, for the settings a run does not give.\n");
    for spec in gait::envs::ENVS {
        let changes = presets::changes(spec.name);
        out.push_str(&format!("\n### {}\n\n", spec.name));
        if changes.is_empty() {
            out.push_str("No preset.\n");
            continue;
        }
        out.push_str("| key | value |\n|---|---|\n");
        for (key, value) in changes {
            out.push_str(&format!("| `{key}` | `{}` |\n", shown(&value).replace('|', "\\|")));
        }
    }
    out
}

/// The settings and presets reference is what the code declares (rewritten with
/// `GAIT_BLESS=1`).
#[test]
fn the_settings_reference_is_current() {
    let path = repo().join("docs/reference/settings.md");
    let want = settings_reference();
    if std::env::var_os("GAIT_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/reference/settings.md differs from the code: run GAIT_BLESS=1 cargo test --release --test docs"
    );
}
