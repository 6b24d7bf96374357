//! `alsim pins fix`: a unified diff that sets each wrong literal (or injected value) to its golden value,
//! and nothing else.
//!
//! A fix is offered for a pin whose value is wrong (classes 1–6 about the value, or an unexplained
//! mismatch) when the value is one literal written where the check read it — an assignment, a JSON
//! value, an environment entry, a master config's `SYNTHETIC_ACCEPTANCE_LENGTH`. It is refused, with the
//! reason, when the value is computed (`$(awk …)`, `printf %.2f` of something else), when one literal
//! feeds pins that want different values (a variable used by two arms, an anchor shared by two roles),
//! or when another error at the same line would remain (an incomplete SGLang triple). Allowed findings
//! are deliberate and never fixed.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::verify::CheckReport;
use super::{Class, Location, Severity, plain_number, rates};
use crate::error::{Error, Result};

/// One literal to change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
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
    pub changes: Vec<Change>,
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

/// Plans the fixes for `report` of the repository at `repo` (files are read to build the diff).
///
/// # Errors
/// [`Error::Io`]/[`Error::Unreadable`] when a file to change cannot be read.
pub fn plan_fixes(report: &CheckReport, repo: &Path) -> Result<FixPlan> {
    let mut plan = FixPlan::default();
    // Literal → the values its pins want.
    let mut wanted: BTreeMap<LiteralKey, Vec<(Location, String, bool)>> = BTreeMap::new();
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
                wanted.entry((edit.file.clone(), edit.span)).or_default().push((
                    checked.pin.location.clone(),
                    target,
                    value_error,
                ));
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
            wanted.retain(|_, v| !v.iter().any(|(at, _, _)| *at == checked.pin.location));
        }
    }
    let mut texts: BTreeMap<String, String> = BTreeMap::new();
    for ((file, span), uses) in wanted {
        if !uses.iter().any(|(_, _, wrong)| *wrong) {
            continue;
        }
        let targets: Vec<&str> = uses.iter().map(|(_, t, _)| t.as_str()).collect();
        if targets.iter().any(|t| *t != targets[0]) {
            for (at, _, wrong) in &uses {
                if *wrong {
                    plan.refused.push(Refusal {
                        at: at.clone(),
                        reason: format!(
                            "the literal at {file} feeds pins that want different values ({}): ambiguous",
                            targets.join("; ")
                        ),
                    });
                }
            }
            continue;
        }
        if !texts.contains_key(&file) {
            texts.insert(file.clone(), crate::input::read_text(&repo.join(&file), crate::input::SMALL_FILE_LIMIT)?);
        }
        let text = &texts[&file];
        let from = text
            .get(span.0..span.1)
            .ok_or_else(|| Error::invalid(file.clone(), "the file changed since it was checked"))?
            .to_string();
        let line = 1 + text[..span.0].matches('\n').count();
        plan.changes.push(Change {
            file,
            line,
            span,
            from,
            to: targets[0].to_string(),
            pins: uses.iter().filter(|(_, _, w)| *w).map(|(at, _, _)| at.clone()).collect(),
        });
    }
    plan.refused.sort_by(|a, b| a.at.cmp(&b.at));
    plan.refused.dedup();
    for (file, text) in &texts {
        let changes: Vec<&Change> = plan.changes.iter().filter(|c| &c.file == file).collect();
        plan.diff.push_str(&unified_diff(file, text, &apply(text, &changes)));
    }
    Ok(plan)
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

fn apply(text: &str, changes: &[&Change]) -> String {
    let mut sorted: Vec<&&Change> = changes.iter().collect();
    sorted.sort_by_key(|c| std::cmp::Reverse(c.span.0));
    let mut out = text.to_string();
    for c in sorted {
        out.replace_range(c.span.0..c.span.1, &c.to);
    }
    out
}

/// Writes every change of `plan` into the repository at `repo`.
///
/// # Errors
/// [`Error::Io`] when a file cannot be read or written.
pub fn write(plan: &FixPlan, repo: &Path) -> Result<usize> {
    let mut files: BTreeMap<&str, Vec<&Change>> = BTreeMap::new();
    for c in &plan.changes {
        files.entry(c.file.as_str()).or_default().push(c);
    }
    for (file, changes) in &files {
        let path = repo.join(file);
        let text = crate::input::read_text(&path, crate::input::SMALL_FILE_LIMIT)?;
        std::fs::write(&path, apply(&text, changes)).map_err(|e| Error::io(&path, e))?;
    }
    Ok(files.len())
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
}
