//! Output of the pin check ([`CheckReport`]): tables, a Markdown PR comment, GitHub Actions annotations;
//! of the inventory ([`Inventory`]), the fix plan ([`FixPlan`]) and generated settings ([`NativeSetting`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{Report, Table, fixed, md_cell, one_line, workflow_data, workflow_property};
use crate::pins::fix::FixPlan;
use crate::pins::verify::GoldenRef;
use crate::pins::{
    CheckReport, Class, Fact, Finding, Inventory, NativeSetting, Pin, Severity, Status, plain_number, rates,
};

fn cell<T: std::fmt::Display>(fact: &Fact<T>) -> String {
    fact.describe()
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

impl Report for CheckReport {
    fn tables(&self) -> Vec<Table> {
        let mut pins = Table::new(
            format!(
                "Pins in {} ({} files read, {} config entries; golden: {})",
                self.repo, self.files_read, self.entries, self.golden_source
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
        for p in &self.pins {
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
        let mut findings = Table::new(
            format!(
                "Findings: {} errors, {} warnings, {} notes, {} allowed",
                self.summary.errors, self.summary.warnings, self.summary.notes, self.summary.allowed
            ),
            &["severity", "class", "where", "message"],
        );
        for f in &self.findings {
            findings.row(vec![severity_word(f).into(), class_label(f.class), f.location.to_string(), message(f)]);
        }
        vec![pins, findings]
    }

    fn notes(&self) -> Vec<String> {
        let by_class: Vec<String> = self.summary.errors_by_class.iter().map(|(c, n)| format!("{c} {n}")).collect();
        vec![format!(
            "{} pins, {} ok; {} errors ({}), {} unresolved, {} allowed; status {}{}",
            self.summary.pins,
            self.summary.ok,
            self.summary.errors,
            if by_class.is_empty() { "none".into() } else { by_class.join(", ") },
            self.summary.unresolved,
            self.summary.allowed,
            status_word(self.status),
            if self.strict { " (strict: warnings fail)" } else { "" }
        )]
    }
}

/// The check as a Markdown PR comment: the verdict first, errors grouped by class, the rest folded.
pub fn markdown(report: &CheckReport) -> String {
    let s = &report.summary;
    let mut out = String::new();
    let _ = writeln!(out, "## alsim pins check: {}\n", status_word(report.status).to_uppercase());
    let _ = writeln!(
        out,
        "**{} pins** in {} files ({} config entries): **{} ok**, **{} errors**, {} warnings ({} unresolved), {} notes, {} allowed. Golden curves: {}.\n",
        s.pins,
        report.files_read,
        report.entries,
        s.ok,
        s.errors,
        s.warnings,
        s.unresolved,
        s.notes,
        s.allowed,
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
    let mut groups: BTreeMap<(u8, Class), Vec<&Finding>> = BTreeMap::new();
    for f in &report.findings {
        let rank = match (&f.allowed, f.severity) {
            (None, Severity::Error) => 0,
            (None, Severity::Warning) => 1,
            (Some(_), _) => 2,
            (None, Severity::Note) => 3,
        };
        groups.entry((rank, f.class)).or_default().push(f);
    }
    for ((rank, class), findings) in &groups {
        let title = format!(
            "{} {} ({})",
            ["Error", "Warning", "Allowed", "Note"][*rank as usize],
            class_label(*class),
            findings.len()
        );
        let open = *rank == 0;
        let _ = writeln!(out, "<details{}><summary>{title}</summary>\n", if open { " open" } else { "" });
        let _ = writeln!(out, "| where | message |\n|---|---|");
        for f in findings {
            let _ = writeln!(out, "| `{}` | {} |", md_cell(&f.location.to_string()), md_cell(&message(f)));
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

/// The workflow command of a finding and the rank of that level (errors first).
fn annotation_level(f: &Finding) -> (usize, &'static str) {
    match (&f.allowed, f.severity) {
        (None, Severity::Error) => (0, "error"),
        (None, Severity::Warning) => (1, "warning"),
        (Some(_), _) | (None, Severity::Note) => (2, "notice"),
    }
}

/// GitHub Actions workflow commands, one per finding (`::error`, `::warning`; allowed and notes as `::notice`):
/// errors, then warnings, then notices; within each, value errors (wrong-k, mismatch, wrong drafter, model
/// or thinking mode, out-of-range, spelling) first, then eval leaks, then the rest, each by file and line.
pub fn github_annotations(report: &CheckReport) -> String {
    let mut out = String::new();
    let mut findings: Vec<&Finding> = report.findings.iter().collect();
    let class_rank = |c: Class| ANNOTATION_ORDER.iter().position(|o| *o == c).unwrap_or(ANNOTATION_ORDER.len());
    findings.sort_by_key(|f| (annotation_level(f).0, class_rank(f.class)));
    for f in findings {
        let level = annotation_level(f).1;
        let title = match f.class.number() {
            Some(n) => format!("alsim pins: {} (class {n})", f.class),
            None => format!("alsim pins: {}", f.class),
        };
        let _ = writeln!(
            out,
            "::{level} file={},line={},title={}::{}",
            workflow_property(&f.location.file),
            f.location.line,
            workflow_property(&title),
            workflow_data(&message(f))
        );
    }
    let s = &report.summary;
    let _ = writeln!(
        out,
        "alsim pins: {} pins, {} ok, {} errors, {} warnings, {} allowed",
        s.pins, s.ok, s.errors, s.warnings, s.allowed
    );
    out
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
                pin.location.line.to_string(),
                pin.branch.clone(),
                pin.role.map(|r| r.to_string()).unwrap_or_default(),
                pin.mechanism.name().into(),
                pin.engine.value.map(|e| e.name().to_string()).unwrap_or_else(|| "?".into()),
                pin.knob.name().into(),
                written(pin),
                cell(&pin.k),
                cell(&pin.model),
                cell(&pin.drafter),
                cell(&pin.method),
                cell(&pin.draft_sampling),
                cell(&pin.mode),
                cell(&pin.eval),
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
