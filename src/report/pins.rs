//! Output of the pin check ([`CheckReport`]): tables, a Markdown PR comment, GitHub Actions annotations;
//! of the inventory ([`Inventory`]), the fix plan ([`FixPlan`]) and generated settings ([`NativeSetting`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;

#[cfg(feature = "cli")]
use super::layout;
use super::{Report, Table, fixed, md_cell, one_line, workflow_data, workflow_property};
use crate::pins::GoldenRef;
use crate::pins::diff::{Change, ComparedFinding, Comparison};
use crate::pins::fix::FixPlan;
use crate::pins::{
    CheckReport, Class, Fact, Finding, Inventory, NativeSetting, Pin, Severity, Status, plain_number, rates,
};

fn cell<T: std::fmt::Display>(fact: &Fact<T>) -> String {
    fact.describe()
}

/// A fact with where it came from, for the inventory (`pins list`): `thinking_off [default] · default: vLLM
/// serves … · configs/m.yaml:10`.
fn sourced<T: std::fmt::Display>(fact: &Fact<T>) -> String {
    let mut out = fact.describe();
    if !fact.text.is_empty() {
        out = format!("{out} · {}", fact.text);
    }
    match &fact.at {
        Some(at) => format!("{out} · {at}"),
        None => out,
    }
}

fn written(pin: &Pin) -> String {
    match (&pin.rates, pin.written.value) {
        (Some(list), _) => format!("{} [{}]", rates::shown(list), pin.written.how.name()),
        (None, Some(v)) => format!("{} [{}]", plain_number(v, 6), pin.written.how.name()),
        (None, None) => format!("{} [{}]", pin.written.text, pin.written.how.name()),
    }
}

/// The golden AL, and for a rates pin the golden chain beside it.
fn expected(golden: Option<&GoldenRef>) -> String {
    match golden {
        Some(g) => match &g.expected_rates {
            Some(list) => format!("{} {}", plain_number(g.expected_al, 4), rates::shown(list)),
            None => plain_number(g.expected_al, 4),
        },
        None => "-".into(),
    }
}

fn where_(pin: &Pin) -> String {
    if pin.branch.is_empty() { pin.location.to_string() } else { format!("{} ({})", pin.location, pin.branch) }
}

fn severity_word(f: &Finding) -> &'static str {
    match (&f.allowed, f.severity) {
        (Some(_), _) => "allowed",
        (None, Severity::Error) => "error",
        (None, Severity::Warning) => "warning",
        (None, Severity::Note) => "note",
    }
}

fn class_label(class: Class) -> String {
    match class.number() {
        Some(n) => format!("{n}. {class}"),
        None => class.to_string(),
    }
}

fn message(f: &Finding) -> String {
    match &f.allowed {
        Some(reason) => format!("{} (allowed: {reason})", f.message),
        None => f.message.clone(),
    }
}

fn status_word(status: Status) -> &'static str {
    match status {
        Status::Pass => "pass",
        Status::Fail => "fail",
        Status::Undecided => "undecided",
    }
}

/// Every pin with its facts and verdict.
fn pins_table(report: &CheckReport) -> Table {
    let mut pins = Table::new(
        format!(
            "Pins in {} ({} files read, {} config entries; golden: {})",
            report.repo, report.files_read, report.entries, report.golden_source
        ),
        &[
            "where",
            "role",
            "engine",
            "knob",
            "written",
            "implied AL",
            "k",
            "model",
            "drafter",
            "mode",
            "eval",
            "golden",
            "expected",
            "verdict",
        ],
    );
    for p in &report.pins {
        let pin = &p.pin;
        let problems: Vec<String> = p.problems.iter().map(|c| c.to_string()).collect();
        let verdict = p.verdict.name().to_string();
        pins.row(vec![
            where_(pin),
            pin.role.map(|r| r.to_string()).unwrap_or_default(),
            pin.engine.value.map(|e| e.name().to_string()).unwrap_or_else(|| "?".into()),
            pin.knob.name().into(),
            written(pin),
            p.implied_al.map(|v| fixed(v, 4)).unwrap_or_else(|| "-".into()),
            cell(&pin.k),
            cell(&pin.model),
            cell(&pin.drafter),
            cell(&pin.mode),
            cell(&pin.eval),
            p.golden
                .as_ref()
                .map(|g| format!("{} {}", g.file.rsplit('/').next().unwrap_or(&g.file), g.key))
                .unwrap_or_else(|| "-".into()),
            expected(p.golden.as_ref()),
            if problems.is_empty() { verdict } else { format!("{verdict}; {}", problems.join(", ")) },
        ]);
    }
    pins
}

fn summary_note(report: &CheckReport) -> String {
    let s = &report.summary;
    let by_class: Vec<String> = s.errors_by_class.iter().map(|(c, n)| format!("{c} {n}")).collect();
    format!(
        "{} pins, {} ok; {} errors ({}), {} unresolved, {} allowed; status {}{}",
        s.pins,
        s.ok,
        s.tally.errors,
        if by_class.is_empty() { "none".into() } else { by_class.join(", ") },
        s.unresolved,
        s.tally.allowed,
        status_word(report.status),
        if report.strict { " (strict: warnings fail)" } else { "" }
    )
}

/// `against REV (commit): N new (E errors, W warnings), F fixed, U unchanged`.
fn changes_line(c: &Comparison) -> String {
    let s = &c.changes;
    format!(
        "against {} ({}): {} new ({} errors, {} warnings), {} fixed, {} unchanged",
        c.base,
        &c.base_commit[..c.base_commit.len().min(12)],
        s.new,
        s.new_errors,
        s.new_warnings,
        s.fixed,
        s.unchanged
    )
}

impl Report for CheckReport {
    fn tables(&self) -> Vec<Table> {
        let s = &self.summary;
        let mut findings = Table::new(
            format!(
                "Findings: {} errors, {} warnings, {} notes, {} allowed",
                s.tally.errors, s.tally.warnings, s.tally.notes, s.tally.allowed
            ),
            &["severity", "class", "where", "message"],
        );
        for f in &self.findings {
            findings.row(vec![severity_word(f).into(), class_label(f.class), f.location.to_string(), message(f)]);
        }
        vec![pins_table(self), findings]
    }

    fn notes(&self) -> Vec<String> {
        vec![summary_note(self)]
    }

    fn markdown(&self) -> String {
        markdown(self)
    }

    #[cfg(feature = "cli")]
    fn human(&self, width: usize) -> String {
        human(self, width)
    }
}

impl Report for Comparison {
    fn tables(&self) -> Vec<Table> {
        let mut findings = Table::new(
            format!("Findings {}", changes_line(self)),
            &["change", "severity", "class", "where", "message"],
        );
        for c in &self.findings {
            let f = &c.finding;
            findings.row(vec![
                c.change.name().into(),
                severity_word(f).into(),
                class_label(f.class),
                where_found(c, &self.base),
                message(f),
            ]);
        }
        vec![pins_table(&self.report), findings]
    }

    fn notes(&self) -> Vec<String> {
        vec![summary_note(&self.report), format!("{}; status {}", changes_line(self), status_word(self.status))]
    }

    fn markdown(&self) -> String {
        markdown_against(self)
    }

    #[cfg(feature = "cli")]
    fn human(&self, width: usize) -> String {
        human_against(self, width)
    }
}

/// Where a compared finding is: a fixed one's location is the base's, and says so.
fn where_found(c: &ComparedFinding, base: &str) -> String {
    match c.change {
        Change::Fixed => format!("{} (at {base})", c.finding.location),
        Change::New | Change::Unchanged => c.finding.location.to_string(),
    }
}

/// The check as a Markdown PR comment: the verdict first, errors grouped by class, the rest folded.
pub fn markdown(report: &CheckReport) -> String {
    let findings: Vec<(Option<Change>, &Finding)> = report.findings.iter().map(|f| (None, f)).collect();
    markdown_of(report, report.status, None, &findings)
}

/// The check against a base revision as a Markdown PR comment: the verdict on what changed first, then
/// the findings grouped by change (new, unchanged, fixed) and class; only new errors are unfolded.
pub fn markdown_against(comparison: &Comparison) -> String {
    let findings: Vec<(Option<Change>, &Finding)> =
        comparison.findings.iter().map(|c| (Some(c.change), &c.finding)).collect();
    markdown_of(&comparison.report, comparison.status, Some(comparison), &findings)
}

fn markdown_of(
    report: &CheckReport,
    status: Status,
    against: Option<&Comparison>,
    findings: &[(Option<Change>, &Finding)],
) -> String {
    let s = &report.summary;
    let mut out = String::new();
    let _ = match against {
        Some(c) => writeln!(
            out,
            "## alsim pins check against `{}`: {}\n",
            md_cell(&c.base),
            status_word(status).to_uppercase()
        ),
        None => writeln!(out, "## alsim pins check: {}\n", status_word(status).to_uppercase()),
    };
    if let Some(c) = against {
        let _ = writeln!(out, "**{}**.\n", md_cell(&changes_line(c)));
    }
    let _ = writeln!(
        out,
        "**{} pins** in {} files ({} config entries): **{} ok**, **{} errors**, {} warnings ({} unresolved), {} notes, {} allowed. Golden curves: {}.\n",
        s.pins,
        report.files_read,
        report.entries,
        s.ok,
        s.tally.errors,
        s.tally.warnings,
        s.unresolved,
        s.tally.notes,
        s.tally.allowed,
        one_line(&report.golden_source)
    );
    if !s.errors_by_class.is_empty() {
        let _ = writeln!(out, "| errors by class | count |\n|---|---|");
        for (class, n) in &s.errors_by_class {
            let label = class.parse::<Class>().map(class_label).unwrap_or_else(|_| class.clone());
            let _ = writeln!(out, "| {label} | {n} |");
        }
        out.push('\n');
    }
    let mut groups: BTreeMap<(Option<Change>, u8, Class), Vec<&Finding>> = BTreeMap::new();
    for (change, f) in findings {
        groups.entry((*change, rank(f), f.class)).or_default().push(f);
    }
    for ((change, rank, class), findings) in &groups {
        let title = format!(
            "{}{} {} ({})",
            change.map(|c| format!("{}: ", capitalized(c.name()))).unwrap_or_default(),
            ["Error", "Warning", "Allowed", "Note"][*rank as usize],
            class_label(*class),
            findings.len()
        );
        let open = *rank == 0 && matches!(change, None | Some(Change::New));
        let _ = writeln!(out, "<details{}><summary>{title}</summary>\n", if open { " open" } else { "" });
        let _ = writeln!(out, "| where | message |\n|---|---|");
        for f in findings {
            let at = match (change, against) {
                (Some(Change::Fixed), Some(c)) => format!("{} (at {})", f.location, c.base),
                _ => f.location.to_string(),
            };
            let _ = writeln!(out, "| `{}` | {} |", md_cell(&at), md_cell(&message(f)));
        }
        let _ = writeln!(out, "\n</details>\n");
    }
    let _ = writeln!(out, "<details><summary>All {} pins</summary>\n", report.pins.len());
    let _ = writeln!(
        out,
        "| where | engine | written | k | model | mode | eval | expected | verdict |\n|---|---|---|---|---|---|---|---|---|"
    );
    for p in &report.pins {
        let pin = &p.pin;
        let _ = writeln!(
            out,
            "| `{}`{} | {} | {} | {} | {} | {} | {} | {} | {} |",
            md_cell(&pin.location.to_string()),
            pin.role.map(|r| format!(" {r}")).unwrap_or_default(),
            pin.engine.value.map(|e| e.name().to_string()).unwrap_or_else(|| "?".into()),
            md_cell(&written(pin)),
            md_cell(&cell(&pin.k)),
            md_cell(&cell(&pin.model)),
            md_cell(&cell(&pin.mode)),
            md_cell(&cell(&pin.eval)),
            expected(p.golden.as_ref()),
            p.verdict.name()
        );
    }
    let _ = writeln!(out, "\n</details>");
    out
}

/// Where a finding is listed: errors, warnings, allowed findings, notes.
fn rank(f: &Finding) -> u8 {
    match (&f.allowed, f.severity) {
        (None, Severity::Error) => 0,
        (None, Severity::Warning) => 1,
        (Some(_), _) => 2,
        (None, Severity::Note) => 3,
    }
}

/// The check for a terminal `width` columns wide: each finding as a block, errors first (wrong values before
/// eval leaks, as in annotations), with how to mend it; then the summary. Every pin's facts are in
/// `--format table` and `--format md`.
#[cfg(feature = "cli")]
pub fn human(report: &CheckReport, width: usize) -> String {
    let findings: Vec<(Option<Change>, &Finding)> = report.findings.iter().map(|f| (None, f)).collect();
    let mut out = blocks(&findings, &report.repo, None, width);
    out.push_str(&human_summary(report, width));
    out
}

/// The check against a base revision for a terminal: the new findings, then the fixed ones, each as a block;
/// the unchanged ones counted by severity (a pull request's change is what its author acts on; every
/// finding is in `--format table|json|md|csv`).
#[cfg(feature = "cli")]
pub fn human_against(comparison: &Comparison, width: usize) -> String {
    let findings = changed(comparison);
    let mut out = blocks(&findings, &comparison.report.repo, Some(&comparison.base), width);
    let unchanged: Vec<&Finding> =
        comparison.findings.iter().filter(|c| c.change == Change::Unchanged).map(|c| &c.finding).collect();
    if !unchanged.is_empty() {
        let line = format!(
            "{} unchanged since {} ({}), not shown: every finding with --format table or json.",
            unchanged.len(),
            comparison.base,
            by_severity(&unchanged)
        );
        out.push_str(&layout::wrap(&line, width, "", "  "));
        out.push('\n');
    }
    out.push_str(&human_summary(&comparison.report, width));
    let line = format!("{}; status {}", changes_line(comparison), status_word(comparison.status));
    out.push_str(&layout::wrap(&line, width, "", "  "));
    out
}

/// Findings counted by severity word, most severe first: `3 errors, 1 allowed`.
#[cfg(feature = "cli")]
fn by_severity(findings: &[&Finding]) -> String {
    let mut counts: Vec<(u8, &str, usize)> = Vec::new();
    for f in findings {
        let word = severity_word(f);
        match counts.iter_mut().find(|(_, w, _)| *w == word) {
            Some(c) => c.2 += 1,
            None => counts.push((rank(f), word, 1)),
        }
    }
    counts.sort_by_key(|c| c.0);
    let plural = |n: usize, word: &str| if n == 1 || word == "allowed" { "" } else { "s" };
    counts.iter().map(|(_, word, n)| format!("{n} {word}{}", plural(*n, word))).collect::<Vec<_>>().join(", ")
}

#[cfg(feature = "cli")]
/// Each finding as a block, its location as the user opens it from the current directory (`repo` is the
/// checked repository's root).
fn blocks(findings: &[(Option<Change>, &Finding)], repo: &str, base: Option<&str>, width: usize) -> String {
    let mut order: Vec<&(Option<Change>, &Finding)> = findings.iter().collect();
    order.sort_by_key(|(change, f)| (*change, rank(f), class_rank(f.class)));
    let mut out = String::new();
    for (change, f) in order {
        let at = layout::clickable(repo, &f.location);
        let location = match (change, base) {
            (Some(Change::Fixed), Some(base)) => format!("{at} (at {base})"),
            _ => at,
        };
        let severity = match change {
            Some(c) => format!("{} {}", c.name(), severity_word(f)),
            None => severity_word(f).to_string(),
        };
        let mends = f.allowed.is_none() && f.severity != Severity::Note && *change != Some(Change::Fixed);
        let help = mends.then(|| format!("{} (more: alsim explain {})", f.help.unwrap_or(f.class.help()), f.class));
        out.push_str(&layout::diagnostic(&location, &severity, f.class.name(), &message(f), help.as_deref(), width));
        out.push('\n');
    }
    out
}

#[cfg(feature = "cli")]
fn human_summary(report: &CheckReport, width: usize) -> String {
    let read = format!(
        "{} pins in {} files read ({} config entries); golden curves: {}. Every pin's facts: --format table or md.",
        report.pins.len(),
        report.files_read,
        report.entries,
        report.golden_source
    );
    layout::wrap(&read, width, "", "  ") + &layout::wrap(&summary_note(report), width, "", "  ")
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// Classes whose annotations come first, in this order: GitHub shows only the first 10 error annotations
/// of a step (50 of a job), and a wrong value is what a reviewer must not miss among dozens of eval leaks.
const ANNOTATION_ORDER: [Class; 8] = [
    Class::WrongK,
    Class::Mismatch,
    Class::WrongDrafter,
    Class::WrongModel,
    Class::WrongThinkingMode,
    Class::OutOfRange,
    Class::Spelling,
    Class::EvalLeak,
];

/// Where a class stands in [`ANNOTATION_ORDER`] (the others after, as found).
fn class_rank(class: Class) -> usize {
    ANNOTATION_ORDER.iter().position(|o| *o == class).unwrap_or(ANNOTATION_ORDER.len())
}

/// The workflow command of a finding and the rank of that level (errors first): only a new finding (or,
/// without a base, any finding) is an error or warning; an unchanged or fixed one is a notice.
fn annotation_level(change: Option<Change>, f: &Finding) -> (usize, &'static str) {
    match (change, &f.allowed, f.severity) {
        (Some(Change::Unchanged | Change::Fixed), _, _) => (2, "notice"),
        (_, None, Severity::Error) => (0, "error"),
        (_, None, Severity::Warning) => (1, "warning"),
        (_, Some(_), _) | (_, None, Severity::Note) => (2, "notice"),
    }
}

/// GitHub Actions workflow commands, one per finding (`::error`, `::warning`; allowed and notes as `::notice`):
/// errors, then warnings, then notices; within each, value errors (wrong-k, mismatch, wrong drafter, model
/// or thinking mode, out-of-range, spelling) first, then eval leaks, then the rest, each by file and line.
pub fn github_annotations(report: &CheckReport) -> String {
    let findings: Vec<(Option<Change>, &Finding)> = report.findings.iter().map(|f| (None, f)).collect();
    annotations(report, None, &findings)
}

/// The findings new or fixed since the base, each with its change: what a pull request's author acts on.
fn changed(comparison: &Comparison) -> Vec<(Option<Change>, &Finding)> {
    comparison.findings.iter().filter(|c| c.change != Change::Unchanged).map(|c| (Some(c.change), &c.finding)).collect()
}

/// [`github_annotations`] against a base revision: a new finding as without a base, its title ending in
/// `[new]`; a fixed one as a `::notice` on no line, naming where it was at the base (`[fixed]`). New
/// findings come first; unchanged ones are only counted, in the closing line (a `::notice` each buried the
/// one new error among 132 others on the snapshot).
pub fn github_annotations_against(comparison: &Comparison) -> String {
    let findings = changed(comparison);
    annotations(&comparison.report, Some(comparison), &findings)
}

fn annotations(report: &CheckReport, against: Option<&Comparison>, findings: &[(Option<Change>, &Finding)]) -> String {
    let mut out = String::new();
    let mut findings = findings.to_vec();
    findings.sort_by_key(|(change, f)| (annotation_level(*change, f).0, *change, class_rank(f.class)));
    for (change, f) in findings {
        let level = annotation_level(change, f).1;
        let mut title = match f.class.number() {
            Some(n) => format!("alsim pins: {} (class {n})", f.class),
            None => format!("alsim pins: {}", f.class),
        };
        if let Some(change) = change {
            let _ = write!(title, " [{}]", change.name());
        }
        match (change, against) {
            (Some(Change::Fixed), Some(c)) => {
                let _ = writeln!(
                    out,
                    "::{level} title={}::{}",
                    workflow_property(&title),
                    workflow_data(&format!("{} at {}: {}", f.location, c.base, message(f)))
                );
            }
            _ => {
                let line = f.location.line.map(|l| format!(",line={l}")).unwrap_or_default();
                let _ = writeln!(
                    out,
                    "::{level} file={}{line},title={}::{}",
                    workflow_property(&f.location.file),
                    workflow_property(&title),
                    workflow_data(&message(f))
                );
            }
        }
    }
    let _ = writeln!(out, "{}", counts_line(report, against));
    out
}

/// The closing line of the annotations: the check's counts and, against a base, the changes.
fn counts_line(report: &CheckReport, against: Option<&Comparison>) -> String {
    let s = &report.summary;
    let mut line = format!(
        "alsim pins: {} pins, {} ok, {} errors, {} warnings, {} allowed",
        s.pins, s.ok, s.tally.errors, s.tally.warnings, s.tally.allowed
    );
    if let Some(c) = against {
        let _ = write!(line, "; {}", one_line(&changes_line(c)));
    }
    line
}

impl Report for Inventory {
    fn tables(&self) -> Vec<Table> {
        let mut table = Table::new(
            format!("Pin inventory of {} ({} files read, {} config entries)", self.repo, self.files_read, self.entries),
            &[
                "file",
                "line",
                "branch",
                "role",
                "mechanism",
                "engine",
                "knob",
                "written",
                "k",
                "model",
                "drafter",
                "method",
                "draft sampling",
                "mode",
                "eval",
                "entries",
            ],
        );
        for pin in &self.pins {
            table.row(vec![
                pin.location.file.clone(),
                pin.location.line.map(|l| l.to_string()).unwrap_or_default(),
                pin.branch.clone(),
                pin.role.map(|r| r.to_string()).unwrap_or_default(),
                pin.mechanism.name().into(),
                pin.engine.value.map(|e| e.name().to_string()).unwrap_or_else(|| "?".into()),
                pin.knob.name().into(),
                written(pin),
                sourced(&pin.k),
                sourced(&pin.model),
                sourced(&pin.drafter),
                sourced(&pin.method),
                sourced(&pin.draft_sampling),
                sourced(&pin.mode),
                sourced(&pin.eval),
                pin.entries.iter().map(|e| e.name.clone()).collect::<Vec<_>>().join(" "),
            ]);
        }
        vec![table]
    }

    fn notes(&self) -> Vec<String> {
        self.tables.iter().map(|(name, at, n)| format!("lookup table {name} at {at}: {n} entries")).collect()
    }
}

impl Report for FixPlan {
    fn tables(&self) -> Vec<Table> {
        let mut changes = Table::new(format!("{} changes", self.changes.len()), &["where", "from", "to", "pins"]);
        for c in &self.changes {
            changes.row(vec![
                format!("{}:{}", c.file, c.line),
                c.from.clone(),
                c.to.clone(),
                c.pins.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(" "),
            ]);
        }
        let mut refused = Table::new(format!("{} wrong pins not fixed", self.refused.len()), &["where", "why"]);
        for r in &self.refused {
            refused.row(vec![r.at.to_string(), r.reason.clone()]);
        }
        vec![changes, refused]
    }
}

impl Report for NativeSetting {
    fn tables(&self) -> Vec<Table> {
        let mut table = Table::new(
            format!(
                "{} setting for AL {} at k = {} ({})",
                self.engine.display_name(),
                plain_number(self.al, 4),
                self.k,
                self.source
            ),
            &["setting"],
        );
        for line in &self.lines {
            table.row(vec![line.clone()]);
        }
        vec![table]
    }
}

/// A finding of the pin check as a CI result: its class the rule.
fn pin_result(f: &Finding, change: Option<Change>) -> super::findings::CheckResult {
    super::findings::CheckResult {
        rule: f.class.name(),
        severity: f.severity,
        location: Some(f.location.clone()),
        message: f.message.clone(),
        allowed: f.allowed.clone(),
        change,
    }
}

impl super::ci::Checked for CheckReport {
    fn command(&self) -> &'static str {
        "alsim pins check"
    }

    fn results(&self) -> Vec<super::findings::CheckResult> {
        self.findings.iter().map(|f| pin_result(f, None)).collect()
    }

    fn summary(&self) -> String {
        counts_line(self, None)
    }
}

/// Against a base, each finding new, unchanged or fixed (SARIF's baseline state).
impl super::ci::Checked for Comparison {
    fn command(&self) -> &'static str {
        "alsim pins check"
    }

    fn results(&self) -> Vec<super::findings::CheckResult> {
        self.findings.iter().map(|c| pin_result(&c.finding, Some(c.change))).collect()
    }

    fn summary(&self) -> String {
        counts_line(&self.report, Some(self))
    }
}
