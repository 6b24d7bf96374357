//! The CI interface: a report that can fail a build is [`Checked`], and its findings ([`CheckResult`]s) are
//! printed in the formats CI systems read: GitHub Actions workflow commands, SARIF 2.1.0 (`report::sarif`, for
//! code scanning, which shows every result where annotations stop at ten errors a step) or reviewdog's rdjson
//! (`report::rdjson`). The results live apart (`report::findings`), so the renderers and this dispatch share
//! them with no import circle.

use std::fmt::Write as _;

use super::findings::CheckResult;
use super::{workflow_data, workflow_property};
use crate::diagnostic::Severity;
use crate::pins::diff::Change;

/// A report whose findings CI formats print.
pub trait Checked {
    /// The command that made it (`alsim sweep`): annotation titles and SARIF's automation id name it.
    fn command(&self) -> &'static str;
    /// Every finding, in the report's order.
    fn results(&self) -> Vec<CheckResult>;
    /// One line counting what the check found, closing the GitHub output.
    fn summary(&self) -> String;
}

/// The formats CI systems read a check's findings in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CiFormat {
    /// GitHub Actions workflow commands (`::error file=…,line=…::…`).
    Github,
    /// SARIF 2.1.0, one run.
    Sarif,
    /// reviewdog's Diagnostic format (rdjson), one document.
    Rdjson,
}

/// Renders `report`'s findings in `format`.
pub fn render_ci<R: Checked + ?Sized>(report: &R, format: CiFormat) -> String {
    let results = report.results();
    match format {
        CiFormat::Github => github(report.command(), &results, &report.summary()),
        CiFormat::Sarif => super::sarif::log(report.command(), &results),
        CiFormat::Rdjson => super::rdjson::document(&results),
    }
}

/// The workflow command's level of a result: only a finding that fails (an error or a warning, neither
/// allowed nor already at the base) is more than a notice.
fn workflow_level(result: &CheckResult) -> &'static str {
    match (result.change, &result.allowed, result.severity) {
        (Some(Change::Unchanged | Change::Fixed), _, _) | (_, Some(_), _) | (_, None, Severity::Note) => "notice",
        (_, None, Severity::Error) => "error",
        (_, None, Severity::Warning) => "warning",
    }
}

/// GitHub workflow commands, errors first, then the `summary` line.
fn github(command: &str, results: &[CheckResult], summary: &str) -> String {
    let mut ordered: Vec<&CheckResult> = results.iter().collect();
    ordered.sort_by_key(|r| ["error", "warning", "notice"].iter().position(|l| *l == workflow_level(r)));
    let mut out = String::new();
    for r in ordered {
        let mut properties = Vec::new();
        if let Some(at) = &r.location {
            properties.push(format!("file={}", workflow_property(&at.file)));
            if let Some(line) = at.line {
                properties.push(format!("line={line}"));
            }
        }
        let change = r.change.map(|c| format!(" [{}]", c.name())).unwrap_or_default();
        properties.push(format!("title={}", workflow_property(&format!("{command}: {}{change}", r.rule))));
        let message = match &r.allowed {
            Some(reason) => format!("{} (allowed: {reason})", r.message),
            None => r.message.clone(),
        };
        let _ = writeln!(out, "::{} {}::{}", workflow_level(r), properties.join(","), workflow_data(&message));
    }
    let _ = writeln!(out, "{}", super::one_line(summary));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Location;

    struct Two;

    impl Checked for Two {
        fn command(&self) -> &'static str {
            "alsim test"
        }
        fn results(&self) -> Vec<CheckResult> {
            let mut allowed =
                CheckResult::new("dip", Severity::Error, Some(Location::new("a,b.yaml", 3)), "dip".into());
            allowed.allowed = Some("known".into());
            vec![allowed, CheckResult::new("band", Severity::Warning, None, "k\nout".into())]
        }
        fn summary(&self) -> String {
            "2 findings".into()
        }
    }

    #[test]
    fn github_puts_failing_results_first_and_escapes() {
        let text = render_ci(&Two, CiFormat::Github);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "::warning title=alsim test%3A band::k%0Aout");
        assert_eq!(lines[1], "::notice file=a%2Cb.yaml,line=3,title=alsim test%3A dip::dip (allowed: known)");
        assert_eq!(lines[2], "2 findings");
    }
}
