//! Running the pin check from anywhere in a repository (issue 41): the root found upward from a folder or
//! one file, the ignore files and excludes the walk honours, the configuration file and `alsim config`,
//! and under `--base` a file the working tree drops.

use std::path::Path;

use serde_json::Value;

use crate::pins::fixture;
use crate::pins_cli::{scratch, sglang_script};
use crate::util::alsim;

/// `alsim ARGS --format json` run in `dir`: (exit code, report, stderr).
fn check_in(dir: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = alsim().current_dir(dir).args(args).args(["--format", "json"]).output().expect("alsim runs");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let report = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: invalid JSON ({e}): {stdout}"));
    (out.status.code().unwrap(), report, String::from_utf8(out.stderr).unwrap())
}

/// The findings of `report` located in `part` (a file, or a folder and what lies below it).
fn findings_in(report: &Value, part: &str) -> Vec<Value> {
    let inside = |file: &str| file == part || file.starts_with(&format!("{part}/"));
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| inside(f["location"]["file"].as_str().unwrap()))
        .cloned()
        .collect()
}

#[test]
fn a_folder_or_one_file_gets_the_roots_findings_for_it() {
    let root = fixture();
    let (code, whole, _) = check_in(&root, &["pins", "check"]);
    assert_eq!(code, 1);
    let script = "benchmarks/single_node/agentic/qwen3.5_fp8_mi3x_mtp.sh";
    for (dir, arg, part) in [
        ("benchmarks", ".", "benchmarks"),
        ("configs", ".", "configs"),
        (".", script, script),
        ("benchmarks/single_node", "agentic/qwen3.5_fp8_mi3x_mtp.sh", script),
    ] {
        let (code, report, stderr) = check_in(&root.join(dir), &["pins", "check", arg]);
        let expected = findings_in(&whole, part);
        assert!(!expected.is_empty(), "{part}: the fixture has findings there");
        assert_eq!(report["findings"].as_array().unwrap(), &expected, "{dir} {arg}");
        let errors = expected.iter().any(|f| f["severity"] == "error" && f["allowed"].is_null());
        assert_eq!(code == 1, errors, "{part}: its own errors alone fail it");
        assert!(stderr.contains("repository root") && stderr.contains("golden_al_distribution"), "{stderr}");
    }
    // At the root itself nothing is said, and the report is the root's.
    let (_, again, stderr) = check_in(&root, &["pins", "check", "."]);
    assert_eq!(again, whole);
    assert!(!stderr.contains("repository root"), "{stderr}");
}

#[test]
fn a_gitignored_or_excluded_copy_adds_nothing() {
    let wrong = sglang_script("2.10");
    let dir = scratch(&[("agentic/a.sh", &wrong), ("scratch/a.sh", &wrong)]);
    let repo = dir.path();
    let (_, with_copy, _) = check_in(repo, &["pins", "check"]);
    assert_eq!(findings_in(&with_copy, "scratch").len(), findings_in(&with_copy, "agentic").len());
    std::fs::write(repo.join(".gitignore"), "scratch/\n").unwrap();
    let (_, ignored, _) = check_in(repo, &["pins", "check"]);
    std::fs::remove_dir_all(repo.join("scratch")).unwrap();
    let (_, without, _) = check_in(repo, &["pins", "check"]);
    assert_eq!(ignored, without);
    std::fs::remove_file(repo.join(".gitignore")).unwrap();
    std::fs::create_dir(repo.join("old")).unwrap();
    std::fs::write(repo.join("old/a.sh"), &wrong).unwrap();
    let (_, excluded, _) = check_in(repo, &["pins", "check", "--exclude", "old"]);
    assert_eq!(excluded, without);
}

#[test]
fn a_configuration_file_and_the_same_flags_give_the_same_report() {
    let dir = scratch(&[("agentic/a.sh", &sglang_script("2.10")), ("old/a.sh", &sglang_script("2.20"))]);
    let repo = dir.path();
    std::fs::write(repo.join("allow.yaml"), "- file: agentic/a.sh\n  class: mismatch\n  reason: measured on purpose\n")
        .unwrap();
    let flags = ["pins", "check", "--exclude", "old/**", "--allow", "allow.yaml", "--strict"];
    let (code, by_flags, _) = check_in(repo, &flags);
    std::fs::write(repo.join("alsim.toml"), "allow = \"allow.yaml\"\nexclude = [\"old/**\"]\nstrict = true\n").unwrap();
    let (same, by_file, _) = check_in(repo, &["pins", "check"]);
    assert_eq!((same, &by_file), (code, &by_flags));
    assert!(findings_in(&by_file, "old").is_empty());
    assert!(findings_in(&by_file, "agentic").iter().any(|f| f["allowed"].is_string()), "{by_file}");
    // The same keys under [tool.alsim] in pyproject.toml, found from a folder below.
    std::fs::remove_file(repo.join("alsim.toml")).unwrap();
    std::fs::write(
        repo.join("pyproject.toml"),
        "[project]\nname = \"bench\"\n\n[tool.alsim]\nallow = \"allow.yaml\"\nexclude = [\"old/**\"]\nstrict = true\n",
    )
    .unwrap();
    let (_, from_below, _) = check_in(&repo.join("agentic"), &["pins", "check"]);
    assert_eq!(from_below["findings"], by_flags["findings"]);

    let out = alsim().current_dir(repo.join("agentic")).args(["config", "--exclude", "x/**"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    let line = |name: &str| text.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{name}: {text}"));
    assert!(line("strict").contains("true") && line("strict").contains("pyproject.toml:7"), "{text}");
    assert!(line("exclude").contains("x/**") && line("exclude").contains("flag --exclude"), "{text}");
    assert!(line("reported").contains("agentic"), "{text}");

    std::fs::write(repo.join("pyproject.toml"), "[tool.alsim]\nstrictness = true\n").unwrap();
    let out = alsim().current_dir(repo).args(["pins", "check"]).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("pyproject.toml:2") && stderr.contains("strictness"), "{stderr}");
}

#[test]
fn an_ignore_entry_added_under_base_is_reported() {
    let dir = scratch(&[("agentic/a.sh", &sglang_script("3.39")), ("agentic/b.sh", &sglang_script("2.20"))]);
    let repo = dir.path();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(repo)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "one wrong pin"]);
    // The pull request hides the wrong script behind an ignore entry: its error is gone, but the file is
    // still there, so dropping it is a new error of its own.
    std::fs::write(repo.join(".ignore"), "agentic/b.sh\n").unwrap();
    let (code, report, stderr) = check_in(repo, &["pins", "check", "--base", "HEAD"]);
    assert_eq!(code, 1, "{stderr}");
    let changed: Vec<(&str, &str, &str)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| (f["change"].as_str().unwrap(), f["class"].as_str().unwrap(), f["location"]["file"].as_str().unwrap()))
        .collect();
    assert!(changed.contains(&("new", "dropped-file", "agentic/b.sh")), "{changed:?}");
    assert!(changed.iter().any(|(change, _, file)| *change == "fixed" && *file == "agentic/b.sh"), "{changed:?}");
    // An exclude the pull request writes in the configuration does the same (one on the command line is
    // the CI's, and applies to the base too); a file the pull request deletes is no dropped file.
    std::fs::remove_file(repo.join(".ignore")).unwrap();
    std::fs::write(repo.join("alsim.toml"), "exclude = [\"b.sh\"]\n").unwrap();
    let (code, report, _) = check_in(repo, &["pins", "check", "--base", "HEAD"]);
    assert_eq!(code, 1);
    assert!(report["findings"].to_string().contains("an exclude"), "{report}");
    let (code, _, _) = check_in(repo, &["pins", "check", "--base", "HEAD", "--exclude", "b.sh"]);
    assert_eq!(code, 0, "the flag replaces the configuration's list, so b.sh is dropped at both");
    std::fs::remove_file(repo.join("alsim.toml")).unwrap();
    std::fs::remove_file(repo.join("agentic/b.sh")).unwrap();
    let (code, report, stderr) = check_in(repo, &["pins", "check", "--base", "HEAD"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!report["findings"].to_string().contains("dropped-file"), "{report}");
}

#[test]
fn a_folder_without_candidate_files_is_undecided_and_no_strict_undoes_the_files_strict() {
    let dir = scratch(&[("agentic/a.sh", &sglang_script("3.39")), ("notes/todo.txt", "nothing to check\n")]);
    let repo = dir.path();
    for action in ["check", "list", "fix"] {
        let out = alsim().current_dir(repo.join("notes")).args(["pins", action]).output().unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(3), "pins {action}: {stderr}");
        assert!(stderr.contains("nothing was checked"), "pins {action}: {stderr}");
    }
    let (code, report, _) = check_in(&repo.join("agentic"), &["pins", "check"]);
    assert_eq!((code, report["files_read"].as_u64()), (0, Some(1)), "{report}");

    // An entry that sanctions nothing is a warning (stale-allow): it fails the check only when strict.
    std::fs::write(repo.join("allow.yaml"), "- file: gone.sh\n  class: drift\n  reason: long gone\n").unwrap();
    std::fs::write(repo.join("alsim.toml"), "strict = true\nallow = \"allow.yaml\"\n").unwrap();
    let (strict, report, _) = check_in(repo, &["pins", "check"]);
    assert_eq!((strict, &report["strict"]), (1, &Value::Bool(true)), "{report}");
    let (lenient, report, _) = check_in(repo, &["pins", "check", "--no-strict"]);
    assert_eq!((lenient, &report["strict"]), (0, &Value::Bool(false)), "{report}");
    assert!(report["summary"]["warnings"].as_u64().unwrap() > 0, "{report}");
    let (_, report, _) = check_in(repo, &["pins", "check", "--no-strict", "--strict"]);
    assert_eq!(report["strict"], true, "the last flag given wins");
}
