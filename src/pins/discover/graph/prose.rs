//! The lines a drift rule reads: the comments of the scripts that hold pins, and the prose lines (README,
//! changelog) that name one such file.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use super::Graph;
use crate::pins::observed::Observed;
use crate::pins::{Location, Pin};

/// The comment lines of the scripts that hold pins, and the prose lines that name one such file: what
/// the drift rule holds against the values pinned there.
pub(super) fn lines(graph: &Graph, pins: &[Pin]) -> Vec<Observed> {
    let pinned: BTreeSet<&str> = pins.iter().map(|pin| pin.location.file.as_str()).collect();
    let mut out = Vec::new();
    for file in &pinned {
        let Some(f) = graph.files.get(file) else { continue };
        if f.kind != crate::pins::walk::FileKind::Shell {
            continue;
        }
        for (i, line) in f.text.lines().enumerate().skip(1) {
            let Some(comment) = line.trim_start().strip_prefix('#') else { continue };
            out.push(Observed::Comment { at: Location::new(*file, i + 1), text: comment.to_string() });
        }
    }
    // A prose line names a pinned file by its base name: look the line's file-like words up.
    let mut by_name: ByName = BTreeMap::new();
    for path in &pinned {
        by_name.entry(path.rsplit('/').next().unwrap_or(path)).or_default().push(path);
    }
    // Prose is most of the text read: its files are read in parallel, and only lines with a file-like
    // word are split into words (what they yield is sorted by location afterwards).
    let found: Vec<Observed> = graph
        .files
        .par_iter()
        .filter(|(_, f)| f.kind == crate::pins::walk::FileKind::Prose)
        .flat_map_iter(|(_, f)| prose_file(f, &by_name))
        .collect();
    out.extend(found);
    out
}

/// Pinned files by base name.
type ByName<'p> = BTreeMap<&'p str, Vec<&'p str>>;

/// The lines of one prose file that name exactly one pinned file.
fn prose_file(f: &crate::pins::walk::TextFile, by_name: &ByName<'_>) -> Vec<Observed> {
    let mut out = Vec::new();
    for (i, line) in f.text.lines().enumerate() {
        if !(line.contains(".sh") || line.contains(".y")) {
            continue;
        }
        let named: Vec<&&str> = line
            .split(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c)))
            .filter(|w| w.ends_with(".sh") || w.ends_with(".yaml") || w.ends_with(".yml"))
            .filter_map(|w| by_name.get(w))
            .flatten()
            .collect();
        if let [path] = named.as_slice() {
            out.push(Observed::Prose {
                at: Location::new(&f.rel, i + 1),
                text: line.to_string(),
                file: path.to_string(),
            });
        }
    }
    out
}
