//! `alsim pins fix`: a unified diff that sets each wrong literal (or injected value) to its golden value,
//! and nothing else; with `--write`, the same edits made to the repository as one transaction.
//!
//! A fix is offered for a pin whose value is wrong (classes 1–6 about the value, or an unexplained
//! mismatch) when the value is one literal written where the check read it — an assignment, a JSON
//! value, an environment entry, a master config's `SYNTHETIC_ACCEPTANCE_LENGTH`. It is refused, with the
//! reason, when the value is computed (`$(awk …)`, `printf %.2f` of something else), when one literal
//! feeds pins that want different values (a variable used by two arms, an anchor shared by two roles),
//! or when another error at the same line would remain (an incomplete SGLang triple). Allowed findings
//! are deliberate and never fixed.
//!
//! Writing is the one place alsim changes a user's files, so it trusts nothing remembered about a file
//! but the text the plan saw. [`prepare`] reads each file again and finds every edit again by its whole
//! line ([`locate`]: where the plan saw it, or else the one place that line now is, when lines were added
//! or removed above it); a file whose line changed or now appears more than once is refused. A file
//! reached by several names (a symlink, hard links) is edited once, through its real path, so a link stays
//! a link; a file whose real path is outside the repository, a read-only file, and one whose owner the
//! rewrite cannot keep are refused. Each new text is written and synced to a temporary file beside the
//! real one (named `.NAME.XXXXXX.alsim-fix.tmp`, never a candidate of the walk), with the same mode and
//! owner. [`StagedFix::commit`] checks once more that every file still reads as it did, then renames each
//! temporary file over its file. A refusal or failure before the renames changes nothing; a crash at any
//! moment leaves each file old or new; a rename that fails midway is reported with the files written and
//! the files not.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::check::CheckReport;
use super::{Class, FindingClass, Knob, Location, Severity, plain_number, rates};
use crate::error::{Error, Result};
use crate::input::{SMALL_FILE_LIMIT, read_text};

mod write;
pub use write::{StagedFix, TEMP_SUFFIX, Written, prepare};

/// One literal to change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replacement {
    /// File, relative to the repository root.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// Byte range of the literal.
    pub span: (usize, usize),
    /// The literal as written.
    pub from: String,
    /// The golden value in the knob's spelling.
    pub to: String,
    /// The pin(s) it mends.
    pub pins: Vec<Location>,
    /// The whole line (or lines) holding the literal, as the plan read them: what [`locate`] recognises
    /// the literal by when the file is read again.
    #[serde(skip)]
    pub context: String,
    /// The literal's byte offset in `context`.
    #[serde(skip)]
    pub column: usize,
}

impl Replacement {
    /// The change of the literal at `span` of `text` (the file `file` as read) to `to`.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `file` when `span` is empty or not a range of `text`.
    pub fn new(file: String, text: &str, span: (usize, usize), to: String, pins: Vec<Location>) -> Result<Replacement> {
        let Some(from) = text.get(span.0..span.1).filter(|f| !f.is_empty()) else {
            return Err(Error::invalid(file, "the file changed since it was checked"));
        };
        let start = text[..span.0].rfind('\n').map_or(0, |i| i + 1);
        let end = text[span.1..].find('\n').map_or(text.len(), |i| span.1 + i);
        Ok(Replacement {
            line: 1 + text[..span.0].matches('\n').count(),
            span,
            from: from.to_string(),
            to,
            pins,
            context: text[start..end].to_string(),
            column: span.0 - start,
            file,
        })
    }
}

/// A pin whose wrong value is not changed, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refusal {
    /// The pin.
    pub at: Location,
    /// Why no fix is offered.
    pub reason: String,
}

/// What `pins fix` would do.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FixPlan {
    /// Changes, by file and position.
    pub changes: Vec<Replacement>,
    /// Wrong pins left alone.
    pub refused: Vec<Refusal>,
    /// The unified diff of every change.
    pub diff: String,
}

fn unfixable_message(class: Class) -> &'static str {
    match class {
        Class::Spelling => {
            "the SGLang triple or vLLM rejection method is incomplete, which a value change does not mend"
        }
        Class::EvalLeak => "it also reaches eval runs, which a value change does not mend",
        Class::NeverPassed => "the value never reaches the engine",
        Class::Drift => "k and AL are set independently",
        _ => "another error at this line remains",
    }
}

/// A literal to edit: the file and its byte span.
type LiteralKey = (String, (usize, usize));

/// A pin that reads a literal, and the value it wants there.
struct Use {
    at: Location,
    target: String,
    /// Whether the pin is wrong (a literal is changed only for a wrong pin).
    wrong: bool,
    knob: Knob,
    /// The value the check read from the literal.
    written: Option<f64>,
}

/// Plans the fixes for `report` of the repository at `repo` (files are read to build the diff).
///
/// # Errors
/// [`Error::Io`]/[`Error::Unreadable`] when a file to change cannot be read; [`Error::Invalid`] naming the
/// file when its literal is no longer what the check read.
pub fn plan_fixes(report: &CheckReport, repo: &Path) -> Result<FixPlan> {
    let mut plan = FixPlan::default();
    let mut wanted: BTreeMap<LiteralKey, Vec<Use>> = BTreeMap::new();
    for checked in &report.pins {
        let errors: Vec<Class> = checked.problems.iter().copied().filter(|c| c.severity() == Severity::Error).collect();
        let companion = is_companion_problem(report, &checked.pin.location);
        let value_error = errors.iter().any(|c| c.value_mends() && !(*c == Class::Spelling && companion));
        if let Some(edit) = &checked.pin.edit {
            let target = match (&checked.pin.rates, value_error) {
                (Some(_), true) => checked.fix_rates.as_deref().map(|r| rates::spelled(checked.pin.knob, r)),
                (Some(written), false) => Some(rates::spelled(checked.pin.knob, written)),
                (None, true) => checked.fix_to.map(|v| plain_number(v, 6)),
                (None, false) => checked.pin.written.value.map(|v| plain_number(v, 6)),
            };
            if let Some(target) = target {
                wanted.entry((edit.file.clone(), edit.span)).or_default().push(Use {
                    at: checked.pin.location.clone(),
                    target,
                    wrong: value_error,
                    knob: checked.pin.knob,
                    written: checked.pin.written.value,
                });
            }
        }
        if !value_error {
            continue;
        }
        let refuse = |reason: String| Refusal { at: checked.pin.location.clone(), reason };
        if checked.fix_to.is_none() || (checked.pin.rates.is_some() && checked.fix_rates.is_none()) {
            plan.refused.push(refuse("no golden value is known for it".into()));
        } else if checked.pin.edit.is_none() {
            plan.refused.push(refuse(format!(
                "the value is not one literal ({}: {})",
                checked.pin.written.how.name(),
                checked.pin.written.text
            )));
        } else if let Some(other) = errors.iter().find(|c| !c.value_mends() || (**c == Class::Spelling && companion)) {
            plan.refused.push(refuse(format!("{other}: {}", unfixable_message(*other))));
            wanted.retain(|_, v| !v.iter().any(|u| u.at == checked.pin.location));
        }
    }
    let mut texts: BTreeMap<String, String> = BTreeMap::new();
    for ((file, span), uses) in wanted {
        if !uses.iter().any(|u| u.wrong) {
            continue;
        }
        let targets: Vec<&str> = uses.iter().map(|u| u.target.as_str()).collect();
        if targets.iter().any(|t| *t != targets[0]) {
            for u in uses.iter().filter(|u| u.wrong) {
                plan.refused.push(Refusal {
                    at: u.at.clone(),
                    reason: format!(
                        "the literal at {file} feeds pins that want different values ({}): ambiguous",
                        targets.join("; ")
                    ),
                });
            }
            continue;
        }
        if !texts.contains_key(&file) {
            texts.insert(file.clone(), read_text(&os_path(repo, &file)?, SMALL_FILE_LIMIT)?);
        }
        let text = &texts[&file];
        let pins = uses.iter().filter(|u| u.wrong).map(|u| u.at.clone()).collect();
        let change = Replacement::new(file, text, span, targets[0].to_string(), pins)?;
        // The check read the file a moment before this read: the literal must still hold what it read.
        if uses.iter().any(|u| !reads_as(u, &change.from)) {
            return Err(Error::invalid(
                change.file,
                format!("line {}: the file changed since it was checked (it now reads `{}`)", change.line, change.from),
            ));
        }
        plan.changes.push(change);
    }
    plan.refused.sort_by(|a, b| a.at.cmp(&b.at));
    plan.refused.dedup();
    for (file, text) in &texts {
        let changes: Vec<&Replacement> = plan.changes.iter().filter(|c| &c.file == file).collect();
        let new = edit(text, &changes)?;
        plan.diff.push_str(&unified_diff(file, text, &new));
    }
    Ok(plan)
}

/// Whether `literal` is the value the check read for the pin.
fn reads_as(pin: &Use, literal: &str) -> bool {
    match (rates::read_written(pin.knob, literal), pin.written) {
        (Some((now, _)), Some(then)) => (now - then).abs() <= 1e-9 * then.abs().max(1.0),
        (None, Some(_)) => false,
        (_, None) => true,
    }
}

/// The file `rel` (a path as the check reports it, relative to the root) names under `repo`: the one
/// place a reported path becomes an OS path.
fn os_path(repo: &Path, rel: &str) -> Result<PathBuf> {
    super::walk::os_path(rel)
        .map(|path| repo.join(path))
        .ok_or_else(|| Error::invalid(rel, "not a file name as the pin check shows one"))
}

/// Whether a spelling error at the location is an incomplete SGLang triple or missing rejection method
/// (which a value change cannot mend), rather than a value written in the wrong spelling.
fn is_companion_problem(report: &CheckReport, at: &Location) -> bool {
    report.findings.iter().any(|f| {
        &f.location == at
            && f.class == Class::Spelling
            && (f.message.contains("triple") || f.message.contains("rejection_sample_method"))
    })
}

/// One change found in the text as it is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed<'a> {
    /// Byte range of the literal in the text.
    pub span: (usize, usize),
    /// Its new text.
    pub to: &'a str,
}

/// Where each change's literal is in `text`: where the plan saw it if its line is unchanged there, else
/// the one place its line now is. Sorted by position, with no two overlapping; a literal reached through
/// two names of one file (the same change twice) is placed once.
///
/// # Errors
/// [`Error::Invalid`] naming the changes' file and why a change cannot be placed: its line no longer reads
/// as it did, or now appears more than once, or two changes want one literal at different values (or
/// overlap).
pub fn locate<'a>(text: &str, changes: &[&'a Replacement]) -> Result<Vec<Placed<'a>>> {
    placed(text, changes).map_err(|why| Error::invalid(changes.first().map_or("", |c| c.file.as_str()), why))
}

/// [`locate`], saying why a change cannot be placed, for the caller to name the file as it knows it.
fn placed<'a>(text: &str, changes: &[&'a Replacement]) -> std::result::Result<Vec<Placed<'a>>, String> {
    let mut placed = Vec::with_capacity(changes.len());
    for change in changes {
        let start = place(text, change)?;
        placed.push(Placed { span: (start, start + change.from.len()), to: change.to.as_str() });
    }
    placed.sort_by_key(|p| p.span);
    placed.dedup();
    if let Some(pair) = placed.windows(2).find(|w| w[1].span.0 < w[0].span.1) {
        let line = 1 + text[..pair[1].span.0].matches('\n').count();
        return Err(format!("line {line}: two changes of one literal disagree (`{}`, `{}`)", pair[0].to, pair[1].to));
    }
    Ok(placed)
}

/// The start of `change`'s literal in `text`.
fn place(text: &str, change: &Replacement) -> std::result::Result<usize, String> {
    let literal = change.column.checked_add(change.from.len()).and_then(|end| change.context.get(change.column..end));
    if change.from.is_empty() || literal != Some(change.from.as_str()) {
        return Err(format!("line {}: the change is not a literal of its line", change.line));
    }
    let context = change.context.as_str();
    let line_at = |start: usize| {
        text.get(start..).is_some_and(|rest| {
            rest.starts_with(context)
                && matches!(rest.as_bytes().get(context.len()), None | Some(b'\n'))
                && (start == 0 || text.as_bytes()[start - 1] == b'\n')
        })
    };
    if let Some(seen) = change.span.0.checked_sub(change.column).filter(|&start| line_at(start)) {
        return Ok(seen + change.column);
    }
    let mut starts =
        std::iter::once(0).chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1)).filter(|&s| line_at(s));
    match (starts.next(), starts.next()) {
        (Some(start), None) => Ok(start + change.column),
        (None, _) => Err(format!("line {} no longer reads `{}`", change.line, preview(context))),
        (Some(_), Some(_)) => {
            Err(format!("line {} (`{}`) moved, and now appears more than once", change.line, preview(context)))
        }
    }
}

/// A line as messages show it: long lines (one-line JSON) cut to their first 100 characters.
fn preview(line: &str) -> String {
    match line.char_indices().nth(100) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_string(),
    }
}

/// `text` with every change made, each found again by [`locate`].
///
/// # Errors
/// As [`locate`].
pub fn edit(text: &str, changes: &[&Replacement]) -> Result<String> {
    Ok(apply(text, &locate(text, changes)?))
}

/// `text` with the placed changes made; `placed` is what [`locate`] found in this same text.
fn apply(text: &str, placed: &[Placed]) -> String {
    let mut out = String::with_capacity(text.len() + placed.iter().map(|p| p.to.len()).sum::<usize>());
    let mut at = 0;
    for p in placed {
        out.push_str(&text[at..p.span.0]);
        out.push_str(p.to);
        at = p.span.1;
    }
    out.push_str(&text[at..]);
    out
}

/// A unified diff with three lines of context, hunks merged when they touch.
fn unified_diff(file: &str, old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    if a == b {
        return String::new();
    }
    // Value edits never add or remove lines: changed lines pair up one to one.
    let changed: Vec<usize> = (0..a.len().max(b.len())).filter(|&i| a.get(i) != b.get(i)).collect();
    let mut out = format!("--- a/{file}\n+++ b/{file}\n");
    let mut i = 0;
    while i < changed.len() {
        let start = changed[i].saturating_sub(3);
        let mut end = (changed[i] + 4).min(a.len());
        let mut j = i + 1;
        while j < changed.len() && changed[j] <= end + 3 {
            end = (changed[j] + 4).min(a.len());
            j += 1;
        }
        let len = end - start;
        let _ = writeln!(out, "@@ -{},{len} +{},{len} @@", start + 1, start + 1);
        for line in start..end {
            if a.get(line) == b.get(line) {
                let _ = writeln!(out, " {}", a[line]);
            } else {
                let _ = writeln!(out, "-{}", a.get(line).copied().unwrap_or(""));
                let _ = writeln!(out, "+{}", b.get(line).copied().unwrap_or(""));
            }
        }
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_has_context_and_merges_hunks() {
        let old = "a\nb\nc\nX=1\nd\ne\nY=2\nf\n";
        let new = "a\nb\nc\nX=9\nd\ne\nY=8\nf\n";
        let diff = unified_diff("f.sh", old, new);
        assert_eq!(diff, "--- a/f.sh\n+++ b/f.sh\n@@ -1,8 +1,8 @@\n a\n b\n c\n-X=1\n+X=9\n d\n e\n-Y=2\n+Y=8\n f\n");
        assert!(unified_diff("f", old, old).is_empty());
    }

    /// A plan setting `X=1` to `X=2` in each of `files` under `dir`.
    fn plan_in(dir: &Path, files: &[&str]) -> FixPlan {
        let mut plan = FixPlan::default();
        for file in files {
            let text = "# settings\nX=1\n";
            std::fs::write(dir.join(file), text).unwrap();
            plan.changes.push(Replacement::new(file.to_string(), text, (13, 14), "2".into(), vec![]).unwrap());
        }
        plan
    }

    fn temporaries(dir: &Path) -> Vec<String> {
        let names = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned());
        names.filter(|n| n.ends_with(TEMP_SUFFIX)).collect()
    }

    /// As `sed -i`: a group the user is not in is given up with a warning naming it; an owner is never.
    #[cfg(unix)]
    #[test]
    fn a_group_that_cannot_be_kept_is_given_up_with_a_warning() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::File::create(dir.path().join("new")).unwrap();
        let (uid, gid) = (file.metadata().unwrap().uid(), file.metadata().unwrap().gid());
        let refused = |_: &std::fs::File, _: Option<u32>, _: Option<u32>| Err(std::io::Error::other("EPERM"));
        use super::write::keep_owner;
        let said = keep_owner(&file, (uid, gid + 1), refused).unwrap().unwrap();
        assert_eq!(
            said,
            format!("its group (gid {}) could not be kept: it is written with your group (gid {gid})", gid + 1)
        );
        assert!(keep_owner(&file, (uid + 1, gid), refused).is_err(), "another owner is never given up");
        assert_eq!(keep_owner(&file, (uid, gid), refused).unwrap(), None, "nothing to change");
    }

    #[test]
    fn a_rename_failing_midway_names_the_files_written_and_not() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan_in(dir.path(), &["a.sh", "b.sh", "c.sh"]);
        let prepared = prepare(&plan, dir.path()).unwrap();
        assert_eq!(temporaries(dir.path()).len(), 3);
        let err =
            prepared
                .commit_with(|path| {
                    if path.ends_with("b.sh") { Err(std::io::Error::other("injected failure")) } else { Ok(()) }
                })
                .unwrap_err()
                .to_string();
        assert!(err.contains("b.sh: replacing it failed (injected failure)"), "{err}");
        assert!(err.contains("written: a.sh; not written: b.sh, c.sh"), "{err}");
        let read = |f: &str| std::fs::read_to_string(dir.path().join(f)).unwrap();
        assert_eq!(
            (read("a.sh"), read("b.sh"), read("c.sh")),
            ("# settings\nX=2\n".into(), "# settings\nX=1\n".into(), "# settings\nX=1\n".into())
        );
        assert_eq!(temporaries(dir.path()), Vec::<String>::new());
    }

    #[test]
    fn commit_reports_each_file_once_with_its_changes() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan_in(dir.path(), &["a.sh", "b.sh"]);
        let written = prepare(&plan, dir.path()).unwrap().commit().unwrap();
        let names: Vec<&str> = written.iter().map(|w| w.names[0].as_str()).collect();
        assert_eq!((names, written.iter().map(|w| w.changes).sum::<usize>()), (vec!["a.sh", "b.sh"], 2));
        assert_eq!(std::fs::read_to_string(dir.path().join("b.sh")).unwrap(), "# settings\nX=2\n");
    }

    #[test]
    fn an_edit_follows_its_line_and_refuses_a_changed_or_doubled_one() {
        let text = "a\nX=1\nb\n";
        let change = Replacement::new("f".into(), text, (4, 5), "2".into(), vec![]).unwrap();
        assert_eq!((change.line, change.context.as_str(), change.column), (2, "X=1", 2));
        assert_eq!(edit(text, &[&change]).unwrap(), "a\nX=2\nb\n");
        assert_eq!(edit("new\na\nX=1\nb\n", &[&change]).unwrap(), "new\na\nX=2\nb\n");
        assert_eq!(edit("X=1", &[&change]).unwrap(), "X=2");
        let err = edit("a\nX=1.5\nb\n", &[&change]).unwrap_err().to_string();
        assert_eq!(err, "f: line 2 no longer reads `X=1`");
        let err = edit("X=1\nX=1\n", &[&change]).unwrap_err().to_string();
        assert!(err.contains("now appears more than once"), "{err}");
        let other = Replacement { to: "3".into(), ..change.clone() };
        let err = edit(text, &[&change, &other]).unwrap_err().to_string();
        assert!(err.contains("disagree"), "{err}");
        assert_eq!(edit(text, &[&change, &change.clone()]).unwrap(), "a\nX=2\nb\n");
    }
}
