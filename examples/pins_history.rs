//! The history as a test bed: runs `alsim::pins::check` at every commit of a git repository's main line
//! and prints, for each commit where the findings change, what appeared and what went. `.ci/run` replays
//! the commits of a committed sweep (`--expect`) and fails when any summary moves.
//!
//! ```text
//! cargo run --example pins_history -- GIT_DIR [REVS] [--json FILE] [--expect FILE]
//! ```
//!
//! REVS is what `git rev-list --first-parent` takes (default `HEAD`). The states are checked out into a
//! temporary directory through a temporary index (`git read-tree --reset -u`), so the repository itself
//! is only read: no worktree, HEAD or index of its own is touched.
//!
//! A finding is keyed by severity, class, file and message, never by line: a pin moved by an unrelated
//! edit keeps its key, and a line number inside a message (`file.sh:12`, `line 12`) is blanked for the
//! same reason. Findings with the same key at several lines count as many. The key is the library's
//! (`alsim::pins::diff::key`), the one `alsim pins check --base` compares by.
//!
//! `--expect FILE` sweeps only the commits FILE lists, in its order. Since the findings do not change
//! between listed commits, the sweep over those alone is the full sweep's summary, and it must equal
//! FILE. Exit status: 0 equal (or no `--expect`), 1 a summary differs, 2 usage, git or input error.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use alsim::pins::diff::key;
use alsim::pins::{CheckOptions, check};
use serde::{Deserialize, Serialize};

/// What changed at one commit (the first swept commit: everything it finds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Change {
    commit: String,
    date: String,
    subject: String,
    errors: usize,
    warnings: usize,
    notes: usize,
    appeared: Vec<String>,
    went: Vec<String>,
}

/// One swept commit: hash, committer date, subject.
struct Commit {
    hash: String,
    date: String,
    subject: String,
}

fn git(git_dir: &Path, args: &[&str], index: Option<&Path>, work_tree: Option<&Path>) -> Result<String, String> {
    let mut command = Command::new("git");
    command.arg("--git-dir").arg(git_dir);
    if let Some(tree) = work_tree {
        command.arg("--work-tree").arg(tree);
    }
    if let Some(index) = index {
        command.env("GIT_INDEX_FILE", index);
    }
    let output = command.args(args).output().map_err(|e| format!("git: {e}"))?;
    if !output.status.success() {
        return Err(format!("git {}: {}", args.join(" "), String::from_utf8_lossy(&output.stderr).trim()));
    }
    String::from_utf8(output.stdout).map_err(|_| format!("git {}: output is not UTF-8", args.join(" ")))
}

fn commits(git_dir: &Path, revs: &str) -> Result<Vec<Commit>, String> {
    let log = git(git_dir, &["log", "--reverse", "--first-parent", "--format=%H%x09%cs%x09%s", revs], None, None)?;
    Ok(log
        .lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, '\t');
            Some(Commit {
                hash: parts.next()?.to_string(),
                date: parts.next()?.to_string(),
                subject: parts.next().unwrap_or("").to_string(),
            })
        })
        .collect())
}

/// Every key the first multiset holds more often than the second, as many times as it does.
fn surplus(a: &BTreeMap<String, usize>, b: &BTreeMap<String, usize>) -> Vec<String> {
    a.iter()
        .flat_map(|(key, n)| std::iter::repeat_n(key.clone(), n.saturating_sub(b.get(key).copied().unwrap_or(0))))
        .collect()
}

fn sweep(git_dir: &Path, commits: &[Commit]) -> Result<Vec<Change>, String> {
    let scratch = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let index = scratch.path().join("index");
    let tree = scratch.path().join("tree");
    std::fs::create_dir(&tree).map_err(|e| format!("{}: {e}", tree.display()))?;
    let options = CheckOptions::default();
    let mut before: BTreeMap<String, usize> = BTreeMap::new();
    let mut changes = Vec::new();
    let started = Instant::now();
    for (i, commit) in commits.iter().enumerate() {
        git(git_dir, &["read-tree", "--reset", "-u", &commit.hash], Some(&index), Some(&tree))?;
        let report = check(&tree, &options).map_err(|e| format!("{}: {e}", commit.hash))?;
        let mut now: BTreeMap<String, usize> = BTreeMap::new();
        for finding in report.findings.iter().filter(|f| f.allowed.is_none()) {
            *now.entry(key(finding)).or_default() += 1;
        }
        if i == 0 || now != before {
            changes.push(Change {
                commit: commit.hash.clone(),
                date: commit.date.clone(),
                subject: commit.subject.clone(),
                errors: report.summary.tally.errors,
                warnings: report.summary.tally.warnings,
                notes: report.summary.tally.notes,
                appeared: surplus(&now, &before),
                went: surplus(&before, &now),
            });
        }
        before = now;
        if (i + 1) % 50 == 0 {
            eprintln!("{} of {} commits, {:.0} s", i + 1, commits.len(), started.elapsed().as_secs_f64());
        }
    }
    eprintln!(
        "swept {} commits in {:.1} s; findings changed at {}",
        commits.len(),
        started.elapsed().as_secs_f64(),
        changes.len().saturating_sub(1)
    );
    Ok(changes)
}

fn print(changes: &[Change]) {
    for change in changes {
        println!(
            "{} {} {} ({} errors, {} warnings, {} notes)",
            &change.commit[..change.commit.len().min(9)],
            change.date,
            change.subject,
            change.errors,
            change.warnings,
            change.notes
        );
        for key in &change.appeared {
            println!("  + {key}");
        }
        for key in &change.went {
            println!("  - {key}");
        }
    }
}

struct Args {
    git_dir: PathBuf,
    revs: String,
    json: Option<PathBuf>,
    expect: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut positional = Vec::new();
    let (mut json, mut expect) = (None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--json" => json = Some(PathBuf::from(args.next().ok_or("--json needs a FILE")?)),
            "--expect" => expect = Some(PathBuf::from(args.next().ok_or("--expect needs a FILE")?)),
            _ if arg.starts_with("--") => return Err(format!("unknown option {arg}")),
            _ => positional.push(arg),
        }
    }
    let mut positional = positional.into_iter();
    let git_dir = PathBuf::from(positional.next().ok_or("GIT_DIR is missing")?);
    let revs = positional.next().unwrap_or_else(|| "HEAD".to_string());
    if let Some(extra) = positional.next() {
        return Err(format!("unexpected argument {extra}"));
    }
    if expect.is_some() && revs != "HEAD" {
        return Err("--expect sweeps the commits its file lists; REVS cannot be given with it".to_string());
    }
    Ok(Args { git_dir, revs, json, expect })
}

fn run() -> Result<bool, String> {
    let args =
        parse_args().map_err(|e| format!("{e}\nusage: pins_history GIT_DIR [REVS] [--json FILE] [--expect FILE]"))?;
    let expected: Option<Vec<Change>> = match &args.expect {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            Some(serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?)
        }
        None => None,
    };
    let commits = match &expected {
        Some(changes) => changes
            .iter()
            .map(|c| Commit { hash: c.commit.clone(), date: c.date.clone(), subject: c.subject.clone() })
            .collect(),
        None => commits(&args.git_dir, &args.revs)?,
    };
    let changes = sweep(&args.git_dir, &commits)?;
    print(&changes);
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&changes).map_err(|e| e.to_string())? + "\n";
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let Some(expected) = expected else { return Ok(true) };
    if changes.len() != expected.len() {
        eprintln!(
            "the findings changed at {} of the {} listed commits (each listed one is expected to change them)",
            changes.len(),
            expected.len()
        );
    }
    for want in &expected {
        match changes.iter().find(|c| c.commit == want.commit) {
            Some(got) if got == want => {}
            Some(got) => {
                eprintln!("{} {}: the summary moved", &want.commit[..9.min(want.commit.len())], want.subject);
                for (sign, keys) in [
                    ("now appears", surplus_list(&got.appeared, &want.appeared)),
                    ("no longer appears", surplus_list(&want.appeared, &got.appeared)),
                    ("now goes", surplus_list(&got.went, &want.went)),
                    ("no longer goes", surplus_list(&want.went, &got.went)),
                ] {
                    for key in keys {
                        eprintln!("  {sign}: {key}");
                    }
                }
                return Ok(false);
            }
            None => {
                eprintln!(
                    "{} {}: the findings no longer change here",
                    &want.commit[..9.min(want.commit.len())],
                    want.subject
                );
                return Ok(false);
            }
        }
    }
    Ok(changes.len() == expected.len())
}

fn surplus_list(a: &[String], b: &[String]) -> Vec<String> {
    let count = |keys: &[String]| {
        let mut map: BTreeMap<String, usize> = BTreeMap::new();
        for key in keys {
            *map.entry(key.clone()).or_default() += 1;
        }
        map
    };
    surplus(&count(a), &count(b))
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("pins_history: {e}");
            ExitCode::from(2)
        }
    }
}
