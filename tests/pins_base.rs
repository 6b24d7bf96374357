//! `alsim pins check --base REV`, pull-request mode: a git repository built in a temporary directory, its
//! findings set against an earlier commit's as new, fixed or unchanged, and the repository left as it was.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::pins_cli::{scratch, sglang_script};
use crate::util::alsim;

/// A thinking-stated Qwen3.5 launch at k = 3 (golden 3.39) pinned to `value`.
fn script(value: &str) -> String {
    sglang_script(value).replace(
        "--speculative-num-steps 3",
        "--speculative-num-steps 3 --default-chat-template-kwargs '{\"enable_thinking\": true}'",
    )
}

/// Git in `dir`, with no user or system configuration (signing, hooks, templates) to depend on.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Everything that says what state a repository is in: HEAD, the index's entries and file, the status,
/// the worktrees.
fn state(dir: &Path) -> (String, String, Vec<u8>, String, String) {
    (
        git(dir, &["rev-parse", "HEAD"]),
        git(dir, &["ls-files", "--stage"]),
        std::fs::read(dir.join(".git/index")).unwrap(),
        git(dir, &["status", "--porcelain", "--untracked-files=all"]),
        git(dir, &["worktree", "list", "--porcelain"]),
    )
}

/// Commit 1: a.sh and b.sh wrong. Commit 2: a.sh fixed, b.sh's pin moved two lines down. Working tree
/// (uncommitted): c.sh added, wrong. Against HEAD~1 that is one fixed, one unchanged, one new error.
fn history() -> tempfile::TempDir {
    let dir = scratch(&[("agentic/a.sh", &script("2.10")), ("agentic/b.sh", &script("2.20"))]);
    let repo = dir.path();
    git(repo, &["init", "-q"]);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "two wrong pins"]);
    std::fs::write(repo.join("agentic/a.sh"), script("3.39")).unwrap();
    std::fs::write(repo.join("agentic/b.sh"), format!("# moved\n# down\n{}", script("2.20"))).unwrap();
    git(repo, &["commit", "-q", "-a", "-m", "fix a"]);
    std::fs::write(repo.join("agentic/c.sh"), script("1.90")).unwrap();
    dir
}

fn check(repo: &Path, tmp: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = alsim()
        .args(["pins", "check", repo.to_str().unwrap()])
        .args(extra)
        .env("TMPDIR", tmp)
        .output()
        .expect("alsim runs");
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.code().expect("an exit code"), text(out.stdout), text(out.stderr))
}

fn changes(report: &Value) -> Vec<(String, String, String)> {
    let mut got: Vec<(String, String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| {
            let s = |v: &Value| v.as_str().unwrap().to_string();
            (s(&f["change"]), s(&f["class"]), s(&f["location"]["file"]))
        })
        .collect();
    got.sort();
    got
}

#[test]
fn findings_are_new_fixed_or_unchanged_and_only_new_errors_fail() {
    let dir = history();
    let repo = dir.path();
    let tmp = tempfile::tempdir().unwrap();
    let before = state(repo);

    let (code, stdout, stderr) = check(repo, tmp.path(), &["--base", "HEAD~1", "--format", "json"]);
    assert_eq!(code, 1, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let mismatch = |change: &str, file: &str| (change.to_string(), "mismatch".to_string(), format!("agentic/{file}"));
    assert_eq!(changes(&report), [mismatch("fixed", "a.sh"), mismatch("new", "c.sh"), mismatch("unchanged", "b.sh")]);
    assert_eq!(report["changes"]["new_errors"], 1);
    assert_eq!(report["changes"]["fixed"], report["changes"]["unchanged"]);
    assert_eq!(report["base_commit"].as_str().unwrap().trim(), git(repo, &["rev-parse", "HEAD~1"]).trim());
    // The fixed finding is located where it was at the base; the unchanged one where it is now.
    let line_of = |file: &str| {
        report["findings"].as_array().unwrap().iter().find(|f| f["location"]["file"] == file).unwrap()["location"]
            ["line"]
            .clone()
    };
    assert_eq!((line_of("agentic/a.sh"), line_of("agentic/b.sh")), (3.into(), 5.into()));
    // The working tree's own report is there, as without --base.
    assert_eq!(report["report"]["summary"]["errors"], 2);

    // Nothing of the repository moved, and nothing is left in the temporary directory.
    assert_eq!(state(repo), before);
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);

    // Against HEAD, the fixed a.sh is no change of the working tree's: still the new c.sh fails.
    assert_eq!(check(repo, tmp.path(), &["--base", "HEAD"]).0, 1);
    // Without c.sh, only a fixed and an unchanged error: the change passes although b.sh is still wrong.
    std::fs::remove_file(repo.join("agentic/c.sh")).unwrap();
    let (code, stdout, stderr) = check(repo, tmp.path(), &["--base", "HEAD~1"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("0 new (0 errors, 0 warnings), 1 fixed, 1 unchanged; status pass"), "{stdout}");
    // The same tree without --base fails on b.sh.
    assert_eq!(check(repo, tmp.path(), &[]).0, 1);
}

#[test]
fn every_format_shows_the_change_and_github_annotates_only_new_findings() {
    let dir = history();
    let repo = dir.path();
    let tmp = tempfile::tempdir().unwrap();
    let base = ["--base", "HEAD~1", "--format"];

    let (code, github, _) = check(repo, tmp.path(), &[&base[..], &["github"]].concat());
    assert_eq!(code, 1);
    let errors: Vec<&str> = github.lines().filter(|l| l.starts_with("::error")).collect();
    assert_eq!(errors.len(), 1, "{github}");
    assert!(errors[0].contains("file=agentic/c.sh") && errors[0].contains("[new]"), "{github}");
    // The unchanged b.sh is counted in the closing line, not annotated.
    assert!(!github.contains("agentic/b.sh") && !github.contains("[unchanged]"), "{github}");
    assert!(github.lines().any(|l| l.starts_with("::notice title=") && l.contains("[fixed]::agentic/a.sh:3 at")));
    assert!(github.trim_end().ends_with("1 new (1 errors, 0 warnings), 1 fixed, 1 unchanged"), "{github}");

    let (_, md, _) = check(repo, tmp.path(), &[&base[..], &["md"]].concat());
    for title in ["New: Error", "Unchanged: Error", "Fixed: Error"] {
        assert!(md.contains(title), "{title}: {md}");
    }
    assert!(md.contains("<details open><summary>New: Error"), "{md}");
    assert!(!md.contains("<details open><summary>Unchanged"), "{md}");

    // SARIF carries every finding with its baseline state, so code scanning shows what the change brings.
    let (code, sarif, _) = check(repo, tmp.path(), &[&base[..], &["sarif"]].concat());
    assert_eq!(code, 1);
    let sarif: Value = serde_json::from_str(&sarif).unwrap();
    let mut states: Vec<&str> =
        sarif["runs"][0]["results"].as_array().unwrap().iter().map(|r| r["baselineState"].as_str().unwrap()).collect();
    states.sort_unstable();
    assert_eq!(states, ["absent", "new", "unchanged"], "{sarif}");
    let (_, rdjson, _) = check(repo, tmp.path(), &[&base[..], &["rdjson"]].concat());
    let rdjson: Value = serde_json::from_str(&rdjson).unwrap();
    assert_eq!(rdjson["diagnostics"].as_array().unwrap().len(), 2, "the fixed finding asks nothing of a reviewer");

    let export = tmp.path().join("check.csv");
    let (_, _, stderr) =
        check(repo, tmp.path(), &[&base[..], &["csv", "--export-csv", export.to_str().unwrap()]].concat());
    let csv = std::fs::read_to_string(tmp.path().join("check.findings-against.csv")).expect(&stderr);
    assert!(csv.starts_with("change,severity,class,where,message\n"), "the findings are a table of their own: {csv}");
    for row in ["new,error,mismatch,agentic/c.sh:3,", "unchanged,error,mismatch,agentic/b.sh:5,", "fixed,error,"] {
        assert!(csv.lines().any(|l| l.starts_with(row)), "{row}: {csv}");
    }
    // On a terminal: the new and the fixed finding as blocks, the unchanged one counted.
    let (_, human, _) = check(repo, tmp.path(), &["--base", "HEAD~1"]);
    assert!(human.contains("agentic/a.sh:3 (at HEAD~1)") && human.contains("agentic/c.sh:3"), "{human}");
    assert!(!human.contains("agentic/b.sh"), "{human}");
    assert!(human.contains("1 unchanged since HEAD~1 (1 error), not shown"), "{human}");
}

#[test]
fn a_base_that_is_no_commit_or_no_repository_is_a_usage_error() {
    let dir = history();
    let repo = dir.path();
    let tmp = tempfile::tempdir().unwrap();
    let before = state(repo);
    for rev in ["no-such-branch", "HEAD~9", "--output=x", ""] {
        // `=` lets a revision that looks like an option through to git, which must take it as a revision.
        let (code, _, stderr) = check(repo, tmp.path(), &[&format!("--base={rev}")]);
        assert_eq!(code, 2, "{rev:?}: {stderr}");
        assert!(stderr.contains("is not a commit of the git repository"), "{rev:?}: {stderr}");
    }
    assert_eq!(state(repo), before);
    assert!(!repo.join("x").exists());

    let plain = scratch(&[("agentic/a.sh", &script("2.10"))]);
    let (code, _, stderr) = check(plain.path(), tmp.path(), &["--base", "HEAD"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is not inside a git work tree"), "{stderr}");

    let out = alsim()
        .args(["pins", "check", repo.to_str().unwrap(), "--base", "HEAD"])
        .env("PATH", tmp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("git could not be run"), "{stderr}");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn a_subdirectory_is_compared_with_the_same_subdirectory_at_the_base() {
    let dir = history();
    let repo = dir.path();
    let tmp = tempfile::tempdir().unwrap();
    // The subdirectory has no golden_al_distribution/ of its own: the repository's is given.
    let golden = repo.join("golden_al_distribution");
    let (code, stdout, stderr) =
        check(&repo.join("agentic"), tmp.path(), &["--base", "HEAD~1", "--golden", golden.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.contains("1 new (1 errors, 0 warnings), 1 fixed, 1 unchanged"), "{stdout}");
    // A directory the base does not have: everything in it is new.
    std::fs::create_dir(repo.join("later")).unwrap();
    std::fs::write(repo.join("later/d.sh"), script("1.80")).unwrap();
    let (code, stdout, stderr) =
        check(&repo.join("later"), tmp.path(), &["--base", "HEAD~1", "--golden", golden.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.contains("1 new (1 errors, 0 warnings), 0 fixed, 0 unchanged"), "{stdout}");
}

/// A pull request that brings its own allow-list sanctioning everything takes no error away: each entry the
/// base does not have is an `allow-changed` error of its own; the same list already at the base is not.
#[test]
fn an_allow_list_the_change_brings_or_widens_is_a_finding() {
    let dir = history();
    let repo = dir.path();
    let tmp = tempfile::tempdir().unwrap();
    let everything = "- file: '*'\n  class: mismatch\n  reason: later\n";
    std::fs::write(repo.join(".alsim-allow.yaml"), everything).unwrap();
    let (code, stdout, stderr) = check(repo, tmp.path(), &["--base", "HEAD", "--format", "json"]);
    assert_eq!(code, 1, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let changed: Vec<&Value> =
        report["findings"].as_array().unwrap().iter().filter(|f| f["class"] == "allow-changed").collect();
    assert_eq!(changed.len(), 1, "{stdout}");
    assert_eq!(changed[0]["change"], "new");
    assert!(changed[0]["message"].as_str().unwrap().contains("allow entry for * (mismatch) is new"), "{stdout}");
    // Reviewed and committed, the list is the base's own: the same entry is no longer a change.
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "allow"]);
    assert_eq!(check(repo, tmp.path(), &["--base", "HEAD"]).0, 0);
    // Narrowed at the base and widened again by the change: a finding again.
    std::fs::write(repo.join(".alsim-allow.yaml"), everything.replace("'*'", "agentic/b.sh")).unwrap();
    git(repo, &["commit", "-q", "-a", "-m", "narrow"]);
    std::fs::write(repo.join(".alsim-allow.yaml"), everything).unwrap();
    let (code, stdout, _) = check(repo, tmp.path(), &["--base", "HEAD", "--format", "json"]);
    assert_eq!(code, 1);
    assert!(stdout.contains("is wider than every mismatch entry at the base"), "{stdout}");
}
