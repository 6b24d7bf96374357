//! SARIF 2.1.0 (OASIS), the format GitHub code scanning and other result viewers read: one run of alsim,
//! its rules (the `alsim explain` topics the results name, described from docs/) and its results, each
//! at a file relative to the repository root (`uriBaseId` `%SRCROOT%`) and line. Typed here rather than
//! through a SARIF crate: alsim writes a small part of the format, and the test that validates it against
//! the published schema (tests/data/sarif-schema-2.1.0.json) holds it to the standard.

use std::fmt::Write as _;

use serde::Serialize;

use super::findings::{CheckResult, rule_text};
use crate::pins::diff::Change;

/// Where the schema of the version written is published (errata 01, the one GitHub validates against).
pub const SCHEMA: &str = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

#[derive(Serialize)]
struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    tool: Tool,
    automation_details: AutomationDetails,
    results: Vec<SarifResult>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    semantic_version: &'static str,
    rules: Vec<Rule>,
}

/// Identifies the command, so that a viewer keeps the results of `alsim pins check` and `alsim sweep`
/// apart (GitHub's "category").
#[derive(Serialize)]
struct AutomationDetails {
    id: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: &'static str,
    short_description: Text,
    full_description: Text,
    help: Help,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
struct Help {
    text: String,
    markdown: String,
}

/// Where the rule is documented, relative to the repository (SARIF's `helpUri` must be absolute).
#[derive(Serialize)]
struct RuleProperties {
    documentation: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Text,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    locations: Vec<SarifLocation>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    suppressions: Vec<Suppression>,
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline_state: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifLocation {
    physical_location: PhysicalLocation,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
}

/// An allow-list entry's sanction: the finding is reported and fails nothing.
#[derive(Serialize)]
struct Suppression {
    kind: &'static str,
    justification: String,
}

/// The SARIF log of `command`'s `results`, pretty-printed.
pub(super) fn log(command: &str, results: &[CheckResult]) -> String {
    let mut ids: Vec<&'static str> = Vec::new();
    for r in results {
        if !ids.contains(&r.rule) {
            ids.push(r.rule);
        }
    }
    let rules = ids.iter().map(|&id| rule(id)).collect();
    let results = results
        .iter()
        .map(|r| SarifResult {
            rule_id: r.rule,
            rule_index: ids.iter().position(|id| *id == r.rule).unwrap_or_default(),
            level: r.severity.name(),
            message: Text { text: r.message.clone() },
            locations: r
                .location
                .iter()
                .map(|at| {
                    let (uri, uri_base_id) = uri(&at.file);
                    SarifLocation {
                        physical_location: PhysicalLocation {
                            artifact_location: ArtifactLocation { uri, uri_base_id },
                            region: at.line.map(|start_line| Region { start_line }),
                        },
                    }
                })
                .collect(),
            suppressions: r
                .allowed
                .iter()
                .map(|reason| Suppression { kind: "external", justification: reason.clone() })
                .collect(),
            baseline_state: r.change.map(|c| match c {
                Change::New => "new",
                Change::Unchanged => "unchanged",
                Change::Fixed => "absent",
            }),
        })
        .collect();
    let log = Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: [Run {
            tool: Tool { driver: Driver { name: "alsim", semantic_version: env!("CARGO_PKG_VERSION"), rules } },
            automation_details: AutomationDetails { id: format!("{command}/") },
            results,
        }],
    };
    let mut out = serde_json::to_string_pretty(&log).expect("a SARIF log holds only strings and numbers");
    out.push('\n');
    out
}

fn rule(id: &'static str) -> Rule {
    let text = rule_text(id);
    let (short, full, markdown, documentation) = match text {
        Some(t) => (t.short, t.full, t.markdown, t.reference),
        None => (id.to_string(), id.to_string(), id.to_string(), String::new()),
    };
    Rule {
        id,
        short_description: Text { text: short },
        full_description: Text { text: full },
        help: Help { text: markdown.clone(), markdown },
        properties: RuleProperties { documentation },
    }
}

/// A location's file as a URI: a relative path stays relative to the repository root (`%SRCROOT%`), an
/// absolute one becomes a `file:` URI; either way `/`-separated and percent-encoded (RFC 3986).
fn uri(file: &str) -> (String, Option<&'static str>) {
    let path = file.replace('\\', "/");
    let bytes = path.as_bytes();
    let drive = bytes.len() > 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && bytes[2] == b'/';
    if path.starts_with('/') {
        (format!("file://{}", encode(&path)), None)
    } else if drive {
        (format!("file:///{}:{}", &path[..1], encode(&path[2..])), None)
    } else {
        (encode(&path), Some("%SRCROOT%"))
    }
}

/// Every byte but RFC 3986's unreserved characters and `/` percent-encoded (a `:` too, so that a relative
/// path's first segment never reads as a scheme).
fn encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_uris() {
        assert_eq!(uri("configs/a b.yaml"), ("configs/a%20b.yaml".into(), Some("%SRCROOT%")));
        assert_eq!(uri("/tmp/x#1.prom"), ("file:///tmp/x%231.prom".into(), None));
        assert_eq!(uri(r"C:\runs\ü.log"), ("file:///C:/runs/%C3%BC.log".into(), None));
        assert_eq!(uri("a:b"), ("a%3Ab".into(), Some("%SRCROOT%")));
    }
}
