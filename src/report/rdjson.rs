//! reviewdog's Diagnostic format (rdjson, reviewdog/proto/rdf): one document of diagnostics, each with
//! its file, line, severity and rule (`code`), for `reviewdog -f=rdjson` to comment on the lines a pull
//! request changes. Findings an allow-list sanctions and those fixed since `--base` are left out: they
//! ask nothing of a reviewer.

use serde::Serialize;

use super::findings::{CheckResult, rule_text};
use crate::diagnostic::Severity;
use crate::pins::diff::Change;

#[derive(Serialize)]
struct Document {
    source: Source,
    diagnostics: Vec<Diagnostic>,
}

#[derive(Serialize)]
struct Source {
    name: &'static str,
}

#[derive(Serialize)]
struct Diagnostic {
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    location: Option<Place>,
    severity: &'static str,
    source: Source,
    code: Code,
}

#[derive(Serialize)]
struct Place {
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    range: Option<Range>,
}

#[derive(Serialize)]
struct Range {
    start: Position,
}

#[derive(Serialize)]
struct Position {
    line: usize,
}

/// The rule, with where it is documented (relative to the repository: reviewdog shows it as written).
#[derive(Serialize)]
struct Code {
    value: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
}

/// The rdjson document of `results`, pretty-printed.
pub(super) fn document(results: &[CheckResult]) -> String {
    // Each rule's documentation page is looked up once, not once per finding: the lookup parses the docs.
    let mut references: Vec<(&str, Option<String>)> = Vec::new();
    for r in results {
        if !references.iter().any(|(rule, _)| *rule == r.rule) {
            references.push((r.rule, rule_text(r.rule).map(|t| t.reference)));
        }
    }
    let reference = |rule: &str| references.iter().find(|(r, _)| *r == rule).and_then(|(_, url)| url.clone());
    let diagnostics = results
        .iter()
        .filter(|r| r.allowed.is_none() && r.change != Some(Change::Fixed))
        .map(|r| Diagnostic {
            message: r.message.clone(),
            location: r.location.as_ref().map(|at| Place {
                path: at.file.clone(),
                range: at.line.map(|line| Range { start: Position { line } }),
            }),
            severity: match r.severity {
                Severity::Error => "ERROR",
                Severity::Warning => "WARNING",
                Severity::Note => "INFO",
            },
            source: Source { name: "alsim" },
            code: Code { value: r.rule, url: reference(r.rule) },
        })
        .collect();
    let mut out = serde_json::to_string_pretty(&Document { source: Source { name: "alsim" }, diagnostics })
        .expect("an rdjson document holds only strings and numbers");
    out.push('\n');
    out
}
