//! Config entries of master configs (`configs/*-master.yaml`), recognized by their structure.
//!
//! A master config is a mapping of entries, each a mapping with `scenarios`, whose scenarios list
//! search-space points (configs/CONFIGS.md). A point's `additional-settings` lists (at the point, or in
//! its `prefill`/`decode` worker blocks) carry `KEY=VALUE` strings: `CONFIG_FILE=`, `EVAL_CONFIG_FILE=`,
//! `SYNTHETIC_ACCEPTANCE=`, `SYNTHETIC_ACCEPTANCE_LENGTH=`, `DECODE_MTP_SIZE=`, …, in any order. A file is
//! a master config because it has this shape, never because its text mentions `CONFIG_FILE=` (a
//! recipe's comment may).
//!
//! Each point also keeps what it benchmarks ([`Shape`]): the scenario item's `isl`/`osl`, the point's
//! concurrencies (`conc-list`, or `conc-start` to `conc-end` doubling, configs/CONFIGS.md) and its
//! parallelism (`tp`, `ep`, `dp-attn`; a disaggregated point's `decode` workers, which set decode
//! throughput). A value that is not a count is kept as a problem naming its line and field, never dropped.

use crate::yaml::{Node, Value};

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
    /// What the point benchmarks.
    pub shape: Shape,
}

/// What one search-space point benchmarks, with the line its item starts on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shape {
    /// The scenario item's `isl` (fixed-seq-len; agentic traces state none).
    pub isl: Option<usize>,
    /// The scenario item's `osl`.
    pub osl: Option<usize>,
    /// Concurrencies, in the order run.
    pub concurrency: Vec<usize>,
    /// Tensor parallelism (a multinode point's decode workers', or its prefill workers' when it has none).
    pub tp: Option<usize>,
    /// Expert parallelism.
    pub ep: Option<usize>,
    /// Data-parallel attention.
    pub dp_attn: bool,
    /// The 1-based line the point's item starts on (the entry's line when it cannot be found).
    pub line: usize,
    /// A field that is not what configs/CONFIGS.md asks for, named (`conc-start 64 is above conc-end 4`).
    pub problem: Option<String>,
}

/// Largest count a search space may state (as `alsim predict`'s concurrency limit): a typo is reported.
const MAX_COUNT: usize = crate::perf::MAX_CONCURRENCY;

impl Shape {
    fn read(item: &Node, point: &Node) -> Shape {
        let mut problems = Vec::new();
        let mut count = |value: Option<&Node>, key: &str| -> Option<usize> {
            let value = value?;
            match value.as_f64() {
                Some(x) if x >= 1.0 && x.fract() == 0.0 && x <= MAX_COUNT as f64 => Some(x as usize),
                _ => {
                    let text = value.as_scalar_text().unwrap_or_else(|| value.kind().to_string());
                    problems.push(format!("{key} '{text}' is not a whole number from 1 to {MAX_COUNT}"));
                    None
                }
            }
        };
        let isl = count(item.get("isl"), "isl");
        let osl = count(item.get("osl"), "osl");
        // An aggregated multinode point has `decode: {num-worker: 0}`: its `prefill` workers serve everything.
        let block = |role: &str| point.get(role).filter(|b| matches!(b.value, Value::Map(_)));
        let idle = |b: &&Node| b.get("num-worker").and_then(Node::as_f64) == Some(0.0);
        let workers = block("decode").filter(|d| !idle(d)).or_else(|| block("prefill")).unwrap_or(point);
        let tp = count(workers.get("tp"), "tp");
        let ep = count(workers.get("ep"), "ep");
        let dp_attn = workers.get("dp-attn").is_some_and(|n| n.value == Value::Bool(true));
        let mut concurrency = Vec::new();
        match point.get("conc-list") {
            Some(Node { value: Value::Seq(items), .. }) => {
                concurrency.extend(items.iter().filter_map(|c| count(Some(c), "conc-list")))
            }
            Some(other) => problems.push(format!("conc-list is a {}, not a list", other.kind())),
            None => {
                if let (Some(start), Some(end)) =
                    (count(point.get("conc-start"), "conc-start"), count(point.get("conc-end"), "conc-end"))
                {
                    if start > end {
                        problems.push(format!("conc-start {start} is above conc-end {end}"));
                    }
                    // configs/CONFIGS.md: the step from conc-start to conc-end is a factor of 2, the end included.
                    concurrency.extend(std::iter::successors(Some(start), |c| Some(c * 2)).take_while(|c| *c <= end));
                }
            }
        }
        let problem = (!problems.is_empty()).then(|| problems.join("; "));
        Shape { isl, osl, concurrency, tp, ep, dp_attn, line: 0, problem }
    }
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
    /// `image`: the container the entry runs, whose tag says the engine's version or build date.
    pub image: Option<String>,
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
pub(crate) fn read(rel: &str, text: &str, root: &Node) -> Option<Vec<Entry>> {
    let Value::Map(top) = &root.value else { return None };
    let lines: Vec<&str> = text.lines().collect();
    let line_starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let mut entries = Vec::new();
    for (key, value) in top {
        let Some(name) = key.as_scalar_text() else { continue };
        let Some(Node { value: Value::Map(scenarios), .. }) = value.get("scenarios") else { continue };
        let mut points = Vec::new();
        for (scenario, list) in scenarios {
            let Value::Seq(items) = &list.value else { continue };
            for item in items {
                let Some(Node { value: Value::Seq(space), .. }) = item.get("search-space") else { continue };
                for point in space {
                    points.push((scenario.as_scalar_text().unwrap_or_default(), item, point));
                }
            }
        }
        if points.is_empty() {
            continue;
        }
        let mut entry = Entry {
            name: name.clone(),
            file: rel.to_string(),
            line: key.line,
            model: text_of(value, "model"),
            model_prefix: text_of(value, "model-prefix"),
            precision: text_of(value, "precision"),
            framework: text_of(value, "framework"),
            image: text_of(value, "image"),
            runner: text_of(value, "runner"),
            multinode: value.get("multinode").is_some_and(|n| n.value == Value::Bool(true)),
            points: Vec::new(),
        };
        for (scenario, item, point) in points {
            let mut shape = Shape::read(item, point);
            shape.line = point.line;
            let mut settings = Vec::new();
            collect_settings(point, &mut |node: &Node, s: &str| {
                let Some((k, v)) = s.split_once('=') else { return };
                // The setting's value, where a fix would write it: on the item's own line, as written there.
                let row = node.line.checked_sub(1);
                let at = row.and_then(|i| Some((i, lines.get(i)?.find(s.trim())?)));
                let span = at.map(|(i, at)| {
                    let start = line_starts[i] + at + k.len() + 1;
                    (start, start + v.len())
                });
                settings.push(Setting {
                    key: k.trim().to_string(),
                    value: v.trim().to_string(),
                    line: node.line,
                    span,
                });
            });
            let line = settings.first().map_or(entry.line, |s| s.line);
            entry.points.push(Point { scenario, spec: text_of(point, "spec-decoding"), settings, line, shape });
        }
        entries.push(entry);
    }
    (!entries.is_empty()).then_some(entries)
}

/// Strings of every `additional-settings` list under a point (the point's own and its workers').
fn collect_settings(node: &Node, out: &mut dyn FnMut(&Node, &str)) {
    if let Value::Map(entries) = &node.value {
        for (key, value) in entries {
            match (key.as_scalar_text().as_deref(), &value.value) {
                (Some("additional-settings"), Value::Seq(items)) => {
                    for item in items {
                        if let Some(s) = item.as_scalar_text() {
                            out(item, &s);
                        }
                    }
                }
                (_, Value::Map(_)) => collect_settings(value, out),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two points that write the same setting each get the line they write it on (the text search this
    /// replaced gave the second point the first one's line).
    #[test]
    fn the_same_setting_in_two_points_is_found_at_each_points_own_line() {
        let text = "e:\n  model: org/M\n  scenarios:\n    agentic-coding:\n    - search-space:\n      - spec-decoding: mtp\n        additional-settings:\n        - \"SYNTHETIC_ACCEPTANCE=true\"\n      - spec-decoding: mtp\n        additional-settings:\n        - \"SYNTHETIC_ACCEPTANCE=true\"\n";
        let root = crate::yaml::parse(text, "c.yaml").unwrap();
        let entries = read("c.yaml", text, &root).unwrap();
        let lines: Vec<usize> = entries[0].points.iter().map(|p| p.settings[0].line).collect();
        assert_eq!(lines, [8, 11]);
        assert_eq!(entries[0].points.iter().map(|p| p.shape.line).collect::<Vec<_>>(), [6, 9]);
        let (start, end) = entries[0].points[1].settings[0].span.unwrap();
        assert_eq!(&text[start..end], "true");
        assert_eq!(text[..start].lines().count(), 11);
    }

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

    #[test]
    fn shapes_keep_lengths_concurrencies_parallelism_and_item_lines() {
        let text = "e:\n  model: org/M\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      # a comment between items\n      - { tp: 4, ep: 4, conc-start: 4, conc-end: 100, spec-decoding: mtp }\n      - spec-decoding: mtp\n        conc-list: [64]\n        prefill:\n          num-worker: 1\n          tp: 4\n        decode:\n          num-worker: 2\n          tp: 8\n          ep: 8\n          dp-attn: true\n      - spec-decoding: mtp\n        conc-list: [8]\n        prefill:\n          tp: 16\n        decode:\n          num-worker: 0\n          tp: 4\n    agentic-coding:\n    - search-space:\n      - { tp: x, conc-start: 8, conc-end: 4 }\n";
        let root = crate::yaml::parse(text, "c.yaml").unwrap();
        let entries = read("c.yaml", text, &root).unwrap();
        let shapes: Vec<&Shape> = entries[0].points.iter().map(|p| &p.shape).collect();
        let [flow, disagg, agg, bad] = shapes[..] else { panic!("{shapes:?}") };
        // conc-start to conc-end doubling, the end included only when reached.
        assert_eq!(flow.concurrency, [4, 8, 16, 32, 64]);
        assert_eq!((flow.isl, flow.osl, flow.tp, flow.ep, flow.line), (Some(8192), Some(1024), Some(4), Some(4), 9));
        // A disaggregated point is priced by its decode workers; an aggregated one (no decode workers) by its
        // prefill workers.
        assert_eq!((disagg.tp, disagg.ep, disagg.dp_attn, disagg.line), (Some(8), Some(8), true, 10));
        assert_eq!((agg.tp, agg.concurrency.as_slice(), agg.line), (Some(16), &[8][..], 20));
        assert_eq!((bad.isl, bad.line), (None, 29));
        let problem = bad.problem.as_deref().unwrap();
        assert!(
            problem.contains("tp 'x' is not a whole number") && problem.contains("conc-start 8 is above conc-end 4")
        );
        assert!(flow.problem.is_none() && disagg.problem.is_none());
    }
}
