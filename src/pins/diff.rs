//! Pull-request mode: the check of the working tree set against the check of another git revision.
//!
//! This module owns
//! - the read-only checkout of a revision ([`checkout`]): the revision's tree is written into a temporary
//!   directory through a temporary index (`git read-tree --reset -u`), so the repository's own worktree,
//!   index and HEAD are only read, and nothing is left behind when the [`Checkout`] is dropped;
//! - the line-insensitive key of a finding ([`key`], [`without_lines`]): a pin moved by an unrelated edit
//!   keeps its key, so it is neither new nor fixed. The history sweep (examples/pins_history.rs) uses the
//!   same key;
//! - the comparison itself ([`compare`]): each finding new, fixed or unchanged, and the status, which fails
//!   only on new errors;
//! - what a pull request cannot hide ([`dropped_files`]): a file the base checked that the working tree
//!   still has but its ignore files, excludes or configuration drop is a new finding of its own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use super::rules::DroppedBy;
use super::walk::{self, Excludes};
use super::{AllowList, CheckReport, CheckSummary, Class, Finding, Status, Tally, rules};
use crate::error::{Error, Result};

/// How a finding of the working tree stands against the base revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Found in the working tree, not at the base.
    New,
    /// Found at both.
    Unchanged,
    /// Found at the base, no longer in the working tree (its location is the base's).
    Fixed,
}

impl Change {
    /// The word shown in tables.
    pub fn name(self) -> &'static str {
        match self {
            Change::New => "new",
            Change::Unchanged => "unchanged",
            Change::Fixed => "fixed",
        }
    }
}

/// One finding with how it stands against the base.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparedFinding {
    /// New, fixed or unchanged.
    pub change: Change,
    /// The finding (for a fixed one, as found at the base).
    #[serde(flatten)]
    pub finding: Finding,
}

/// Counts of the comparison.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ChangeSummary {
    /// Findings new in the working tree.
    pub new: usize,
    /// Findings of the base gone from the working tree.
    pub fixed: usize,
    /// Findings at both.
    pub unchanged: usize,
    /// New errors not sanctioned by the allow-list: what fails the check.
    pub new_errors: usize,
    /// New warnings not sanctioned (they fail with `--strict`).
    pub new_warnings: usize,
}

/// The working tree's check against a base revision's.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The base revision as given.
    pub base: String,
    /// The commit it names.
    pub base_commit: String,
    /// The outcome: fails only on new errors (with `--strict`, new warnings too).
    pub status: Status,
    /// Counts.
    pub changes: ChangeSummary,
    /// The working tree's findings (new, unchanged), then the base's fixed ones.
    pub findings: Vec<ComparedFinding>,
    /// The base's own counts.
    pub base_summary: CheckSummary,
    /// The working tree's check, exactly as without a base.
    pub report: CheckReport,
}

/// `text` with every number that names a line (`path.ext:12`, `line 12`) replaced by `N`.
pub fn without_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(|c: char| c.is_ascii_digit()) {
        let (before, from) = rest.split_at(at);
        let digits = from.find(|c: char| !c.is_ascii_digit()).unwrap_or(from.len());
        out.push_str(before);
        let names_line = out.ends_with("line ")
            || out.strip_suffix(':').is_some_and(|path| {
                path.rsplit(|c: char| c.is_whitespace() || c == '(' || c == '`')
                    .next()
                    .is_some_and(|word| word.contains('/') || word.contains('.'))
            });
        out.push_str(if names_line { "N" } else { &from[..digits] });
        rest = &from[digits..];
    }
    out.push_str(rest);
    out
}

/// A finding keyed by severity, class, file and message, never by line (a line inside the message is
/// blanked by [`without_lines`]). Findings with the same key at several lines count as many.
pub fn key(finding: &Finding) -> String {
    format!("{} {} {}: {}", finding.severity, finding.class, finding.location.file, without_lines(&finding.message))
}

/// Sets the working tree's check (`head`) against the base's: per [`key`] (and whether the allow-list
/// sanctions it), as many of the head's findings as the base has are unchanged, the rest new, and the
/// base's surplus fixed.
pub fn compare(head: CheckReport, base: &CheckReport, base_rev: &str, base_commit: &str) -> Comparison {
    let key_of = |f: &Finding| (f.allowed.is_some(), key(f));
    let mut at_base: BTreeMap<(bool, String), usize> = BTreeMap::new();
    for f in &base.findings {
        *at_base.entry(key_of(f)).or_default() += 1;
    }
    let mut findings = Vec::with_capacity(head.findings.len());
    // An allow entry the change brings or widens sanctions findings no one reviewed: a new finding itself.
    for f in rules::allow_changes(&head.allow, &base.allow, &head.files) {
        findings.push(ComparedFinding { change: Change::New, finding: f });
    }
    for f in &head.findings {
        let change = match at_base.get_mut(&key_of(f)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                Change::Unchanged
            }
            _ => Change::New,
        };
        findings.push(ComparedFinding { change, finding: f.clone() });
    }
    for f in &base.findings {
        if let Some(n) = at_base.get_mut(&key_of(f)).filter(|n| **n > 0) {
            *n -= 1;
            findings.push(ComparedFinding { change: Change::Fixed, finding: f.clone() });
        }
    }
    let mut compared = Comparison {
        base: base_rev.to_string(),
        base_commit: base_commit.to_string(),
        status: Status::Pass,
        changes: ChangeSummary::default(),
        findings,
        base_summary: base.summary.clone(),
        report: head,
    };
    compared.settle();
    compared
}

impl Comparison {
    /// Adds findings only the comparison can make (files the working tree drops, [`dropped_files`]): each
    /// is new and counts as any new finding does.
    pub fn add_new(&mut self, findings: Vec<Finding>) {
        let at = self.findings.iter().position(|c| c.change == Change::Fixed).unwrap_or(self.findings.len());
        let new = findings.into_iter().map(|finding| ComparedFinding { change: Change::New, finding });
        self.findings.splice(at..at, new);
        self.settle();
    }

    /// The counts and the status, from the findings.
    fn settle(&mut self) {
        let mut changes = ChangeSummary::default();
        for c in &self.findings {
            match c.change {
                Change::New => changes.new += 1,
                Change::Unchanged => changes.unchanged += 1,
                Change::Fixed => changes.fixed += 1,
            }
        }
        // Only what the change brings decides: an error the base already had is the base's, and a pin
        // already unresolved there leaves the change no less decided than its base.
        let new: Vec<&Finding> = self.findings.iter().filter(|c| c.change == Change::New).map(|c| &c.finding).collect();
        let tally = Tally::of(new.iter().copied());
        (changes.new_errors, changes.new_warnings) = (tally.errors, tally.warnings);
        let new_unresolved = new.iter().any(|f| f.allowed.is_none() && f.class == Class::Unresolved);
        self.status = tally.status(self.report.strict, new_unresolved || self.report.files_read == 0);
        self.changes = changes;
    }
}

/// The candidate files the base's walk (of `base`, with `base_excludes`) took in that the working tree's
/// (of `head`, with `head_excludes`) does not though they are still there: a `dropped-file` error each,
/// sanctioned where `allow` says so. Only files `keep` holds (the part of the repository named) count.
///
/// # Errors
/// [`Error::Io`] when either root cannot be listed.
pub fn dropped_files(
    head: (&Path, &Excludes),
    base: (&Path, &Excludes),
    base_rev: &str,
    allow: &AllowList,
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<Finding>> {
    let head_files = walk::walk(head.0, head.1)?;
    let covered: std::collections::HashSet<&str> = head_files.covered().collect();
    let base_files = walk::walk(base.0, base.1)?;
    let still_there = |rel: &str| walk::os_path(rel).is_some_and(|p| head.0.join(p).symlink_metadata().is_ok());
    let mut found: Vec<Finding> = base_files
        .covered()
        .filter(|rel| keep(rel) && !covered.contains(rel) && still_there(rel))
        .flat_map(|rel| {
            let by = if head.1.drops(rel) { DroppedBy::Exclude } else { DroppedBy::IgnoreFile };
            rules::dropped(rel, base_rev, by)
        })
        .collect();
    for finding in &mut found {
        finding.allowed = allow.entries.iter().find(|e| e.matches(finding)).map(|e| e.reason.clone());
    }
    Ok(found)
}

/// A revision's tree, written into a temporary directory that is removed on drop.
#[derive(Debug)]
pub struct Checkout {
    _dir: tempfile::TempDir,
    root: PathBuf,
    commit: String,
}

impl Checkout {
    /// The directory that corresponds, at the revision, to the repository root the check was given (a
    /// subdirectory of the git repository stays that subdirectory).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The full hash of the commit checked out.
    pub fn commit(&self) -> &str {
        &self.commit
    }
}

fn base_error(message: String) -> Error {
    Error::Parameter { name: "base", message }
}

/// Runs git in `dir` with the caller's `GIT_DIR`, `GIT_WORK_TREE` and `GIT_INDEX_FILE` set aside (a hook or
/// a wrapper may export them; the repository is the one at `dir`), and `index` as the index when given.
fn git(dir: &Path, args: &[&str], index: Option<&Path>) -> Result<std::result::Result<String, String>> {
    let mut command = Command::new("git");
    command.current_dir(dir).env_remove("GIT_DIR").env_remove("GIT_WORK_TREE").env_remove("GIT_INDEX_FILE");
    if let Some(index) = index {
        command.env("GIT_INDEX_FILE", index);
    }
    let output = command
        .args(args)
        .output()
        .map_err(|e| base_error(format!("git could not be run ({e}); the base mode needs git on PATH")))?;
    if !output.status.success() {
        return Ok(Err(String::from_utf8_lossy(&output.stderr).trim().to_string()));
    }
    Ok(Ok(String::from_utf8_lossy(&output.stdout).trim_end_matches('\n').to_string()))
}

/// Writes the tree of revision `rev` of the git repository holding `repo` into a temporary directory.
///
/// # Errors
/// [`Error::Parameter`] (`base`) when git cannot be run, `repo` is not in a git work tree, or `rev`
/// names no commit there; [`Error::Io`] when the temporary directory cannot be made.
pub fn checkout(repo: &Path, rev: &str) -> Result<Checkout> {
    let shown = repo.display();
    let meta = std::fs::metadata(repo).map_err(|reason| Error::Io { path: repo.to_path_buf(), reason })?;
    if !meta.is_dir() {
        return Err(base_error(format!("{shown} is not a directory")));
    }
    let inside = git(repo, &["rev-parse", "--is-inside-work-tree"], None)?;
    if inside.as_deref() != Ok("true") {
        let why = inside.err().map(|e| format!(" ({e})")).unwrap_or_default();
        return Err(base_error(format!("{shown} is not inside a git work tree{why}")));
    }
    let git_dir = git(repo, &["rev-parse", "--absolute-git-dir"], None)?
        .map_err(|e| base_error(format!("{shown}: the git directory is not found ({e})")))?;
    let prefix = git(repo, &["rev-parse", "--show-prefix"], None)?
        .map_err(|e| base_error(format!("{shown}: its place in the repository is not found ({e})")))?;
    let commit =
        git(repo, &["rev-parse", "--verify", "--quiet", "--end-of-options", &format!("{rev}^{{commit}}")], None)?
            .map_err(|_| base_error(format!("{rev:?} is not a commit of the git repository at {shown}")))?;
    let dir = tempfile::Builder::new()
        .prefix("alsim-base-")
        .tempdir()
        .map_err(|reason| Error::Io { path: std::env::temp_dir(), reason })?;
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).map_err(|reason| Error::Io { path: tree.clone(), reason })?;
    let index = dir.path().join("index");
    let (git_dir_arg, tree_arg) = (format!("--git-dir={git_dir}"), format!("--work-tree={}", tree.display()));
    // A sparse checkout or a file-system monitor configured for the user's worktree has no say over this one.
    let args = [
        git_dir_arg.as_str(),
        &tree_arg,
        "-c",
        "core.sparseCheckout=false",
        "-c",
        "core.fsmonitor=false",
        "read-tree",
        "--reset",
        "-u",
        &commit,
    ];
    git(dir.path(), &args, Some(&index))?
        .map_err(|e| base_error(format!("{rev:?} could not be checked out into {} ({e})", tree.display())))?;
    let root = tree.join(&prefix);
    // A directory the revision does not have yet is an empty one there: everything in it is new.
    std::fs::create_dir_all(&root).map_err(|reason| Error::Io { path: root.clone(), reason })?;
    Ok(Checkout { _dir: dir, root, commit })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pins::{Location, Severity};

    #[test]
    fn line_numbers_are_blanked_and_other_numbers_kept() {
        assert_eq!(without_lines("see benchmarks/x.sh:12 and line 7"), "see benchmarks/x.sh:N and line N");
        assert_eq!(without_lines("AL 2.49 at k = 3 (`a.yaml:40`)"), "AL 2.49 at k = 3 (`a.yaml:N`)");
        assert_eq!(without_lines("ratio 3:4"), "ratio 3:4");
    }

    fn finding(class: Class, file: &str, line: usize, message: &str) -> Finding {
        Finding::new(class, Location::new(file, line), message)
    }

    fn report(findings: Vec<Finding>) -> CheckReport {
        let errors = findings.iter().filter(|f| f.severity == Severity::Error).count();
        CheckReport {
            repo: ".".into(),
            golden_source: String::new(),
            files_read: 1,
            entries: 0,
            pins: Vec::new(),
            findings,
            summary: CheckSummary { tally: Tally { errors, ..Default::default() }, ..Default::default() },
            strict: false,
            status: if errors > 0 { Status::Fail } else { Status::Pass },
            allow: AllowList::default(),
            files: Vec::new(),
        }
    }

    #[test]
    fn a_moved_finding_is_unchanged_and_only_new_errors_fail() {
        let base = report(vec![
            finding(Class::WrongK, "a.sh", 3, "AL 2.0 at k = 3"),
            finding(Class::Mismatch, "a.sh", 9, "AL 1.5, golden 2.1"),
        ]);
        let moved = report(vec![finding(Class::WrongK, "a.sh", 30, "AL 2.0 at k = 3")]);
        let compared = compare(moved, &base, "HEAD~1", "abc");
        let changes: Vec<(Change, Option<usize>)> =
            compared.findings.iter().map(|c| (c.change, c.finding.location.line)).collect();
        assert_eq!(changes, [(Change::Unchanged, Some(30)), (Change::Fixed, Some(9))]);
        assert_eq!(compared.status, Status::Pass);
        assert_eq!((compared.changes.new, compared.changes.fixed, compared.changes.unchanged), (0, 1, 1));

        let doubled = report(vec![
            finding(Class::WrongK, "a.sh", 3, "AL 2.0 at k = 3"),
            finding(Class::WrongK, "a.sh", 4, "AL 2.0 at k = 3"),
        ]);
        let compared = compare(doubled, &base, "HEAD~1", "abc");
        assert_eq!(compared.changes.new_errors, 1, "{:?}", compared.findings);
        assert_eq!(compared.status, Status::Fail);
    }
}
