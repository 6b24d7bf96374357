//! Tables for the pin check ([`CheckReport`]), the inventory ([`Inventory`]) and generated settings
//! ([`NativeSetting`]), plus GitHub Actions annotations for the check.

use std::fmt::Write as _;

use super::{Report, Table, fixed};
use crate::pins::{CheckReport, Fact, Finding, Inventory, NativeSetting, Pin, Severity, plain_number};

fn cell<T: std::fmt::Display>(fact: &Fact<T>) -> String {
    fact.describe()
}

fn written(pin: &Pin) -> String {
    match pin.written.value {
        Some(v) => format!("{} [{}]", plain_number(v, 6), pin.written.how.name()),
        None => format!("{} [{}]", pin.written.text, pin.written.how.name()),
    }
}

fn where_(pin: &Pin) -> String {
    if pin.branch.is_empty() { pin.location.to_string() } else { format!("{} ({})", pin.location, pin.branch) }
}

fn finding_row(f: &Finding) -> Vec<String> {
    let severity = match (&f.allowed, f.severity) {
        (Some(_), _) => "allowed",
        (None, Severity::Error) => "error",
        (None, Severity::Warning) => "warning",
    };
    let class = match f.class.number() {
        Some(n) => format!("{n}. {}", f.class),
        None => f.class.to_string(),
    };
    let message = match &f.allowed {
        Some(reason) => format!("{} (allowed: {reason})", f.message),
        None => f.message.clone(),
    };
    vec![severity.into(), class, f.location.to_string(), message]
}

impl Report for CheckReport {
    fn tables(&self) -> Vec<Table> {
        let mut pins = Table::new(
            format!("Pins in {} ({} files read; golden: {})", self.repo, self.files_read, self.golden_source),
            &[
                "where",
                "engine",
                "knob",
                "written",
                "implied AL",
                "k",
                "model",
                "drafter",
                "mode",
                "golden",
                "expected",
                "verdict",
            ],
        );
        for p in &self.pins {
            let pin = &p.pin;
            let verdict = p.verdict.name().to_string();
            let problems: Vec<String> = p.problems.iter().map(|c| c.to_string()).collect();
            pins.row(vec![
                where_(pin),
                pin.engine.value.map(|e| e.name().to_string()).unwrap_or_else(|| "?".into()),
                pin.knob.name().into(),
                written(pin),
                p.implied_al.map(|v| fixed(v, 4)).unwrap_or_else(|| "-".into()),
                cell(&pin.k),
                cell(&pin.model),
                cell(&pin.drafter),
                cell(&pin.mode),
                p.golden
                    .as_ref()
                    .map(|g| format!("{} {}", g.file.rsplit('/').next().unwrap_or(&g.file), g.key))
                    .unwrap_or_else(|| "-".into()),
                p.golden.as_ref().map(|g| plain_number(g.expected_al, 4)).unwrap_or_else(|| "-".into()),
                if problems.is_empty() { verdict } else { format!("{verdict}; {}", problems.join(", ")) },
            ]);
        }
        let mut findings = Table::new(
            format!(
                "Findings: {} errors, {} warnings, {} allowed",
                self.summary.errors, self.summary.warnings, self.summary.allowed
            ),
            &["severity", "class", "where", "message"],
        );
        for f in &self.findings {
            findings.row(finding_row(f));
        }
        vec![pins, findings]
    }

    fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = self.skipped.iter().map(|s| format!("skipped {}: {}", s.path, s.reason)).collect();
        notes.push(format!(
            "{} pins, {} ok; status {}{}",
            self.summary.pins,
            self.summary.ok,
            match self.status {
                crate::pins::Status::Pass => "pass",
                crate::pins::Status::Fail => "fail",
                crate::pins::Status::Undecided => "undecided",
            },
            if self.strict { " (strict: warnings fail)" } else { "" }
        ));
        notes
    }
}

/// GitHub Actions workflow commands, one `::error`/`::warning` per finding (allowed ones as `::notice`).
pub fn github_annotations(report: &CheckReport) -> String {
    let mut out = String::new();
    for f in &report.findings {
        let level = match (&f.allowed, f.severity) {
            (Some(_), _) => "notice",
            (None, Severity::Error) => "error",
            (None, Severity::Warning) => "warning",
        };
        let title = match f.class.number() {
            Some(n) => format!("alsim pins: {} (class {n})", f.class),
            None => format!("alsim pins: {}", f.class),
        };
        let message = match &f.allowed {
            Some(reason) => format!("{} (allowed: {reason})", f.message),
            None => f.message.clone(),
        };
        let _ = writeln!(
            out,
            "::{level} file={},line={},title={}::{}",
            escape_property(&f.location.file),
            f.location.line,
            escape_property(&title),
            escape_data(&message)
        );
    }
    let _ = writeln!(
        out,
        "alsim pins: {} pins, {} ok, {} errors, {} warnings, {} allowed",
        report.summary.pins, report.summary.ok, report.summary.errors, report.summary.warnings, report.summary.allowed
    );
    out
}

fn escape_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

impl Report for Inventory {
    fn tables(&self) -> Vec<Table> {
        let mut table = Table::new(
            format!("Pin inventory of {} ({} files read)", self.repo, self.files_read),
            &[
                "file",
                "line",
                "branch",
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
                "eval guard",
            ],
        );
        for pin in &self.pins {
            table.row(vec![
                pin.location.file.clone(),
                pin.location.line.to_string(),
                pin.branch.clone(),
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
                pin.eval_guard.name().into(),
            ]);
        }
        vec![table]
    }

    fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> =
            self.tables.iter().map(|(name, (at, n))| format!("lookup table {name} at {at}: {n} entries")).collect();
        notes.extend(self.skipped.iter().map(|s| format!("skipped {}: {}", s.path, s.reason)));
        notes
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
