//! The crate's layering holds one way — cli → report → domains → accept → curve → ground — and its
//! top-level modules import each other without a circle; inside `pins`, the stages hold their order
//! (discover → resolve → judge → fix and diff). Read from the sources: a `crate::X` path outside comments
//! and tests is an import of module X (the CLI's are `alsim::X`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every top-level module with its layer: a module may import its own layer or lower ones.
const LAYERS: &[(&str, usize)] = &[
    ("error", 0),
    ("escape", 0),
    ("names", 0),
    ("units", 0),
    ("yaml", 0),
    ("bash", 0),
    ("stats", 0),
    ("diagnostic", 0),
    ("engine", 0),
    ("input", 0),
    ("output", 0),
    ("curve", 1),
    ("accept", 2),
    ("sim", 3),
    ("evidence", 3),
    ("perf", 3),
    ("measured", 3),
    ("pins", 3),
    ("config", 3),
    ("matrix", 3),
    ("explain", 3),
    ("report", 4),
    ("cli", 5),
];

/// The modules the source at `path` (a file, or a directory of them) imports, other than `module` itself.
fn imports(path: &Path, module: &str, prefix: &str, out: &mut BTreeSet<String>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            imports(&entry.unwrap().path(), module, prefix, out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        let text = std::fs::read_to_string(path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let code: Vec<&str> = code.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
        for rest in code.join("\n").split(prefix).skip(1) {
            out.extend(named(rest).into_iter().filter(|name| name != module));
        }
    }
}

/// The modules named right after a `crate::`: one (`crate::curve::Curve`), or each of a group
/// (`crate::{curve::Curve, perf}`, on one line or several).
fn named(rest: &str) -> Vec<String> {
    let ident = |text: &str| -> String {
        text.trim_start().chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect()
    };
    let Some(group) = rest.strip_prefix('{') else {
        return vec![ident(rest)].into_iter().filter(|n| !n.is_empty()).collect();
    };
    let (mut depth, mut start, mut names) = (0usize, 0usize, Vec::new());
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                names.push(ident(&group[start..i]));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                names.push(ident(&group[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    names.into_iter().filter(|n| !n.is_empty() && n != "self").collect()
}

/// Each top-level module of `src/` with the modules it imports.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" || name == "main" {
            continue;
        }
        let prefix = if name == "cli" { "alsim::" } else { "crate::" };
        let mut out = BTreeSet::new();
        imports(&path, &name, prefix, &mut out);
        graph.insert(name, out);
    }
    graph
}

#[test]
fn every_import_goes_down_the_layers_and_none_closes_a_circle() {
    let layer: BTreeMap<&str, usize> = LAYERS.iter().copied().collect();
    let graph = module_graph();
    let unplaced: Vec<&String> = graph.keys().filter(|m| !layer.contains_key(m.as_str())).collect();
    assert!(unplaced.is_empty(), "modules not placed in LAYERS: {unplaced:?}");
    assert!(graph["report"].contains("pins") && graph["cli"].contains("report"), "the scan misses imports: {graph:?}");
    assert_eq!(named("{curve::{Curve, CurveSet},\n    perf, self};"), ["curve", "perf"]);
    let mut upward = Vec::new();
    for (from, to) in &graph {
        for target in to.iter().filter(|t| layer.contains_key(t.as_str())) {
            if layer[target.as_str()] > layer[from.as_str()] {
                upward.push(format!("{from} → {target}"));
            }
        }
    }
    assert!(upward.is_empty(), "imports that go up a layer: {upward:?}");
    // Within a layer: a depth-first search that meets a module still on its path has found a circle.
    fn visit<'a>(
        m: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| *p == m) {
            return Some(path[at..].iter().chain([&m]).map(|s| s.to_string()).collect());
        }
        if !done.insert(m) {
            return None;
        }
        path.push(m);
        for next in graph.get(m).into_iter().flatten() {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        let circle = visit(m, &graph, &mut Vec::new(), &mut done);
        assert!(circle.is_none(), "an import circle: {}", circle.unwrap_or_default().join(" → "));
    }
}

/// The stages of the pin check in the order its data passes through them: a module of `src/pins` may
/// import its own stage or an earlier one. `pins/mod.rs` is no stage: it holds the types every stage
/// shares and wires them (the scan runs discovery, then the judge).
const PIN_STAGES: &[(&str, usize)] = &[
    // Plain records and leaves every stage reads.
    ("class", 0),
    ("verdict", 0),
    ("observed", 0),
    ("walk", 0),
    ("rates", 0),
    ("thinking", 0),
    ("native", 0),
    // Discover: what the files say.
    ("discover", 1),
    ("allow", 1),
    ("curves", 1),
    // Resolve: each pin's golden query.
    ("resolve", 2),
    // Judge: the rules, and the check that runs them.
    ("rules", 3),
    ("check", 3),
    // What the check's report feeds.
    ("fix", 4),
    ("diff", 4),
];

/// Each module of `src/pins` with the modules of `pins` it imports (`crate::pins::X`, and `super::X` where
/// `super` is `pins`).
fn pin_stage_graph() -> BTreeMap<String, BTreeSet<String>> {
    fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let pins = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/pins");
    let mut all = Vec::new();
    files(&pins, &mut all);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in all {
        let rel = path.strip_prefix(&pins).unwrap();
        let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        if parts == ["mod.rs"] {
            continue;
        }
        let module = parts[0].trim_end_matches(".rs").to_string();
        // `super` is `pins` in a file directly under it, and in a folder's `mod.rs`.
        let super_is_pins = parts.len() == 1 || (parts.len() == 2 && parts[1] == "mod.rs");
        let mut out = BTreeSet::new();
        imports(&path, &module, "crate::pins::", &mut out);
        if super_is_pins {
            imports(&path, &module, "super::", &mut out);
        }
        graph.entry(module).or_default().extend(out);
    }
    graph
}

#[test]
fn the_pin_check_stages_hold_their_order() {
    let stage: BTreeMap<&str, usize> = PIN_STAGES.iter().copied().collect();
    let graph = pin_stage_graph();
    let unplaced: Vec<&String> = graph.keys().filter(|m| !stage.contains_key(m.as_str())).collect();
    assert!(unplaced.is_empty(), "modules of pins not placed in PIN_STAGES: {unplaced:?}");
    assert!(
        graph["check"].contains("rules") && graph["check"].contains("resolve"),
        "the scan misses imports: {graph:?}"
    );
    let mut backward = Vec::new();
    for (from, to) in &graph {
        for target in to.iter().filter(|t| stage.contains_key(t.as_str())) {
            if stage[target.as_str()] > stage[from.as_str()] {
                backward.push(format!("{from} → {target}"));
            }
        }
    }
    assert!(backward.is_empty(), "imports from a later stage of the pin check: {backward:?}");
}
