//! The lines a drift rule reads: the comments of the scripts that hold pins, and the prose lines (README,
//! changelog) that name one such file; and the prose lines that name a config entry's image, where the
//! repository states what an image is (resolve reads its build date there).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rayon::prelude::*;

use super::Graph;
use crate::pins::observed::{ImageLine, Observed};
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
    // The changelog's values are read beside them rather than after, on the check's serial path.
    let (found, logged): (Vec<Observed>, Vec<Observed>) = rayon::join(
        || {
            graph
                .files
                .par_iter()
                .filter(|(_, f)| f.kind == crate::pins::walk::FileKind::Prose)
                .flat_map_iter(|(_, f)| prose_file(f, &by_name))
                .collect()
        },
        || graph.files.values().filter(|f| changelog(&f.rel)).flat_map(|f| changelog_values(f)).collect(),
    );
    out.extend(found);
    out.extend(logged);
    out
}

/// A changelog file (`perf-changelog.yaml`, `CHANGELOG.md`), by its name.
pub(super) fn changelog(rel: &str) -> bool {
    rel.rsplit('/').next().is_some_and(|name| name.to_ascii_lowercase().contains("changelog"))
}

/// One changelog entry: the config entries it names, its description lines, and its pull request.
#[derive(Default)]
struct LogEntry<'t> {
    keys: Vec<&'t str>,
    lines: Vec<(usize, &'t str)>,
    pr: Option<u64>,
}

/// The values a changelog kept as YAML (`- config-keys: [...]`, `description:`, `pr-link:`) states for a
/// knob (`SGLANG_SIMULATE_ACC_LEN=2.99`, `synthetic_acceptance_length 2.51`), each tied to the config
/// entries its entry names. Only the newest entry naming a config entry (by pull request, then by place in
/// the file) speaks for it: an older one records what was.
fn changelog_values(f: &crate::pins::walk::TextFile) -> Vec<Observed> {
    let mut entries: Vec<LogEntry> = Vec::new();
    let mut in_keys = false;
    for (i, line) in f.text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("- config-keys:") {
            entries.push(LogEntry::default());
            in_keys = true;
            let inline = rest.trim().trim_start_matches('[').trim_end_matches(']');
            let last = entries.last_mut().expect("just pushed");
            last.keys.extend(inline.split(',').map(|k| k.trim().trim_matches(['"', '\''])).filter(|k| !k.is_empty()));
            continue;
        }
        let Some(entry) = entries.last_mut() else { continue };
        if let Some(item) = trimmed.strip_prefix("- ") {
            if in_keys {
                entry.keys.push(item.trim().trim_matches(['"', '\'']));
            } else {
                entry.lines.push((i + 1, item));
            }
        } else if let Some(link) = trimmed.strip_prefix("pr-link:") {
            entry.pr = link.trim().rsplit('/').next().and_then(|n| n.parse().ok());
            in_keys = false;
        } else if trimmed.ends_with(':') || trimmed.contains(": ") {
            in_keys = false;
        }
    }
    let order = |i: usize| (entries[i].pr.unwrap_or(0), i);
    let mut newest: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, entry) in entries.iter().enumerate() {
        for key in &entry.keys {
            let slot = newest.entry(key).or_insert(i);
            if order(i) > order(*slot) {
                *slot = i;
            }
        }
    }
    let mut out = Vec::new();
    for (key, i) in newest {
        for (line, text) in &entries[i].lines {
            for (knob, value) in stated_values(text) {
                let at = Location::new(&f.rel, *line);
                out.push(Observed::ChangelogValue { at, entry: key.to_string(), knob, value });
            }
        }
    }
    out
}

/// The values a line states for a knob: the knob's name, then `=`, `:` or a space, then a number.
fn stated_values(text: &str) -> Vec<(crate::pins::Knob, String)> {
    let mut out = Vec::new();
    for knob in crate::pins::Knob::ALL {
        for (at, _) in text.match_indices(knob.name()) {
            let rest = text[at + knob.name().len()..].trim_start_matches([' ', '=', ':', '`', '"', '\'']);
            let number: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
            let number = number.trim_end_matches('.');
            if number.parse::<f64>().is_ok() {
                out.push((knob, number.to_string()));
            }
        }
    }
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

/// The prose lines that name an entry's image: by its tag (`nightly-311b3513…`), or by an engine commit the
/// tag carries (`426e59f` in `nightly-dev-x86_64-cu13.0.1-426e59f`, as a changelog writes "vLLM 426e59f").
/// A line is split into words once and each word looked up, so the cost does not grow with the images.
pub(super) fn image_lines(graph: &Graph) -> Vec<ImageLine> {
    let mut needles: HashMap<&str, BTreeSet<&str>> = HashMap::new();
    for image in graph.entries.iter().filter_map(|e| e.image.as_deref()) {
        let tag = image.split('@').next().unwrap_or(image).rsplit(':').next().unwrap_or(image);
        let commits = tag.split(['-', '_', '.']).filter(|w| w.len() >= 7 && w.bytes().all(|b| b.is_ascii_hexdigit()));
        // A tag such as `v0.5.15` names no one image: only a tag with a commit or a date in it does.
        for needle in
            std::iter::once(tag).chain(commits).filter(|n| n.len() >= 7 && n.bytes().any(|b| b.is_ascii_digit()))
        {
            needles.entry(needle).or_default().insert(image);
        }
    }
    if needles.is_empty() {
        return Vec::new();
    }
    // A changelog kept as YAML (`perf-changelog.yaml`) is prose too.
    let prose = |f: &crate::pins::walk::TextFile| {
        f.kind == crate::pins::walk::FileKind::Prose
            || f.rel.rsplit('/').next().is_some_and(|n| n.contains("changelog"))
    };
    let mut out: Vec<ImageLine> = graph
        .files
        .par_iter()
        .filter(|(_, f)| prose(f))
        .flat_map_iter(|(_, f)| {
            let needles = &needles;
            f.text.lines().enumerate().flat_map(move |(i, line)| {
                let mut images: BTreeSet<&str> = BTreeSet::new();
                // Every needle is 7 characters or more and holds a digit: most words are neither.
                let candidate = |w: &str| w.len() >= 7 && w.bytes().any(|b| b.is_ascii_digit());
                for word in
                    line.split(|c: char| !(c.is_ascii_alphanumeric() || "._-".contains(c))).filter(|w| candidate(w))
                {
                    for part in std::iter::once(word).chain(word.split(['-', '_', '.'])).filter(|p| candidate(p)) {
                        if let Some(named) = needles.get(part) {
                            images.extend(named);
                        }
                    }
                }
                images.into_iter().map(move |image| ImageLine {
                    at: Location::new(&f.rel, i + 1),
                    image: image.to_string(),
                    text: line.to_string(),
                })
            })
        })
        .collect();
    out.sort_by(|a, b| (&a.at, &a.image).cmp(&(&b.at, &b.image)));
    out
}
