//! Config entries of master configs (`configs/*-master.yaml`), recognized by their structure.
//!
//! A master config is a mapping of entries, each a mapping with `scenarios`, whose scenarios list
//! search-space points (configs/CONFIGS.md). A point's `additional-settings` lists (at the point, or in
//! its `prefill`/`decode` worker blocks) carry `KEY=VALUE` strings: `CONFIG_FILE=`, `EVAL_CONFIG_FILE=`,
//! `SYNTHETIC_ACCEPTANCE=`, `SYNTHETIC_ACCEPTANCE_LENGTH=`, `DECODE_MTP_SIZE=`, …, in any order. A file is
//! a master config because it has this shape, never because its text mentions `CONFIG_FILE=` (a
//! recipe's comment may).

use crate::yaml::Node;

/// One `KEY=VALUE` of a settings list, with where its value is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// The key.
    pub key: String,
    /// The value.
    pub value: String,
    /// 1-based line.
    pub line: usize,
    /// Byte range of the value in the file, when found verbatim.
    pub span: Option<(usize, usize)>,
}

/// One search-space point.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// `fixed-seq-len`, `agentic-coding`, ….
    pub scenario: String,
    /// `spec-decoding` (`mtp`, `none`).
    pub spec: Option<String>,
    /// Every setting of the point, in order.
    pub settings: Vec<Setting>,
    /// The line of its first setting, else the entry's line.
    pub line: usize,
}

impl Point {
    /// A setting's value.
    pub fn get(&self, key: &str) -> Option<&Setting> {
        self.settings.iter().rev().find(|s| s.key == key)
    }

    /// Whether the point runs speculative decoding.
    pub fn speculative(&self) -> bool {
        self.spec.as_deref().is_some_and(|s| !s.is_empty() && !s.eq_ignore_ascii_case("none"))
    }

    /// Whether the point is an agentic benchmark, where every spec-decoding run must be pinned.
    pub fn agentic(&self) -> bool {
        self.scenario.starts_with("agentic")
    }
}

/// One config entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its top-level key.
    pub name: String,
    /// The master config, relative to the repository root.
    pub file: String,
    /// The line of its key.
    pub line: usize,
    /// `model`.
    pub model: Option<String>,
    /// `model-prefix`.
    pub model_prefix: Option<String>,
    /// `precision`.
    pub precision: Option<String>,
    /// `framework`.
    pub framework: Option<String>,
    /// `runner` label.
    pub runner: Option<String>,
    /// `multinode`.
    pub multinode: bool,
    /// Search-space points.
    pub points: Vec<Point>,
}

fn text_of(node: &Node, key: &str) -> Option<String> {
    node.get(key).and_then(Node::as_scalar_text).map(|s| s.trim().to_string())
}

/// The entries of a master config, or `None` when the file does not have that structure.
pub fn read(rel: &str, text: &str, root: &Node) -> Option<Vec<Entry>> {
    let Node::Map(top) = root else { return None };
    let lines: Vec<&str> = text.lines().collect();
    let line_starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let mut entries = Vec::new();
    let mut cursor = 0;
    for (key, value) in top {
        let Some(name) = key.as_scalar_text() else { continue };
        let Some(Node::Map(scenarios)) = value.get("scenarios") else { continue };
        let mut points = Vec::new();
        for (scenario, list) in scenarios {
            let Node::Seq(items) = list else { continue };
            for item in items {
                let Some(Node::Seq(space)) = item.get("search-space") else { continue };
                for point in space {
                    points.push((scenario.as_scalar_text().unwrap_or_default(), point));
                }
            }
        }
        if points.is_empty() {
            continue;
        }
        let entry_line = lines
            .iter()
            .enumerate()
            .skip(cursor)
            .find(|(_, l)| l.starts_with(name.as_str()) && l[name.len()..].trim_start().starts_with(':'))
            .map_or(cursor, |(i, _)| i);
        cursor = entry_line;
        let mut entry = Entry {
            name: name.clone(),
            file: rel.to_string(),
            line: entry_line + 1,
            model: text_of(value, "model"),
            model_prefix: text_of(value, "model-prefix"),
            precision: text_of(value, "precision"),
            framework: text_of(value, "framework"),
            runner: text_of(value, "runner"),
            multinode: value.get("multinode").is_some_and(|n| matches!(n, Node::Bool(true))),
            points: Vec::new(),
        };
        for (scenario, point) in points {
            let mut settings = Vec::new();
            collect_settings(point, &mut |s: &str| {
                let Some((k, v)) = s.split_once('=') else { return };
                let needle = s.trim();
                let found = lines.iter().enumerate().skip(cursor).find(|(_, l)| l.contains(needle));
                let (line, span) = match found {
                    Some((i, l)) => {
                        cursor = i;
                        let at = l.find(needle).unwrap_or(0) + k.len() + 1;
                        let start = line_starts[i] + at;
                        (i + 1, Some((start, start + v.len())))
                    }
                    None => (entry.line, None),
                };
                settings.push(Setting { key: k.trim().to_string(), value: v.trim().to_string(), line, span });
            });
            let line = settings.first().map_or(entry.line, |s| s.line);
            entry.points.push(Point { scenario, spec: text_of(point, "spec-decoding"), settings, line });
        }
        entries.push(entry);
    }
    (!entries.is_empty()).then_some(entries)
}

/// Strings of every `additional-settings` list under a point (the point's own and its workers').
fn collect_settings(node: &Node, out: &mut dyn FnMut(&str)) {
    if let Node::Map(entries) = node {
        for (key, value) in entries {
            match (key.as_scalar_text().as_deref(), value) {
                (Some("additional-settings"), Node::Seq(items)) => {
                    for item in items {
                        if let Some(s) = item.as_scalar_text() {
                            out(&s);
                        }
                    }
                }
                (_, Node::Map(_)) => collect_settings(value, out),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_by_structure_with_setting_lines() {
        let text = "# CONFIG_FILE=recipes/not-a-setting.yaml\na-b-c:\n  model: org/M\n  model-prefix: m\n  runner: cluster:x\n  multinode: true\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - spec-decoding: mtp\n        prefill:\n          additional-settings:\n          - \"SYNTHETIC_ACCEPTANCE_LENGTH=2.49\"\n          - \"CONFIG_FILE=recipes/r.yaml\"\n          - \"SYNTHETIC_ACCEPTANCE=true\"\n";
        let root = crate::yaml::parse(text, "c.yaml").unwrap();
        let entries = read("c.yaml", text, &root).unwrap();
        let [e] = entries.as_slice() else { panic!() };
        assert_eq!((e.line, e.multinode, e.points.len()), (2, true, 1));
        let p = &e.points[0];
        assert!(p.agentic() && p.speculative());
        let length = p.get("SYNTHETIC_ACCEPTANCE_LENGTH").unwrap();
        assert_eq!(length.line, 13);
        let (s, end) = length.span.unwrap();
        assert_eq!(&text[s..end], "2.49");
        assert_eq!(p.get("CONFIG_FILE").unwrap().line, 14);
        let recipe = crate::yaml::parse("name: x\nbackend:\n  type: vllm\n", "r").unwrap();
        assert!(read("r.yaml", "", &recipe).is_none());
    }
}
