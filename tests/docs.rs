//! The shipped documentation: every reference to a page (`docs/model.md §6`, `docs/pins.md#wrong-k`) or to
//! an explain topic (`alsim explain wrong-k`) in messages, help, doc comments, the README and the pages
//! themselves resolves; every finding class, engine, schedule and verdict alsim prints has a topic; and
//! `alsim explain` as a user runs it.

use std::path::{Path, PathBuf};

use alsim::explain::{self, normalize, sections};

use crate::util::run;

/// Files of other repositories that alsim's comments name (InferenceX's own guides): not ours to ship.
const EXTERNAL: [&str; 2] = ["configs/CONFIGS.md", "MODELS.md"];

/// Words that stand for a topic in usage text (`alsim explain TOPIC`), not topics; `{}` is a class name
/// a finding's help line fills in (every class has a topic: see below).
const PLACEHOLDERS: [&str; 4] = ["TOPIC", "CLASS", "TERM", "{}"];

/// The widest line a topic may print, so `alsim explain` reads in a 100-column terminal.
const WIDTH: usize = 100;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

/// Every file whose references must resolve: the sources, the README and the pages under docs/.
fn scanned() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    walk(&root().join("src"), "rs", &mut files);
    walk(&root().join("docs"), "md", &mut files);
    files.sort();
    files
}

/// A reference to a Markdown file: the path as written, and the anchor or the `§` numbers after it.
#[derive(Debug)]
struct PageRef {
    path: String,
    anchor: Option<String>,
    numbers: Vec<String>,
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

/// The `§` numbers after a page name: `§6`, `§2, §5`, `§3–4` (both), `§1.4 and §2.4`.
fn section_numbers(mut rest: &str) -> Vec<String> {
    let mut numbers = Vec::new();
    loop {
        let trimmed = rest.trim_start_matches([' ', ',']).trim_start_matches("and ");
        let Some(after) = trimmed.strip_prefix('§') else { return numbers };
        let end = after.find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '–' | '-'))).unwrap_or(after.len());
        let span = after[..end].trim_end_matches('.');
        numbers.extend(span.split(['–', '-']).map(str::to_string));
        rest = &after[end..];
    }
}

/// The references to `*.md` files in one line.
fn page_refs(line: &str) -> Vec<PageRef> {
    let mut refs = Vec::new();
    for (at, _) in line.match_indices(".md") {
        let after = &line[at + 3..];
        if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let start = line[..at].rfind(|c: char| !is_path_char(c)).map_or(0, |i| i + 1);
        if start == at {
            continue; // `*.md`, `".md"`: a pattern, not a file
        }
        let before = line[..start].trim_end();
        if before.ends_with("--export-md") || before.ends_with('>') {
            continue; // a file the command writes, not a page it cites
        }
        let path = format!("{}.md", &line[start..at]);
        let anchor = after.strip_prefix('#').map(|a| {
            let end = a.find(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_'))).unwrap_or(a.len());
            a[..end].to_string()
        });
        let numbers = if anchor.is_some() { Vec::new() } else { section_numbers(after) };
        refs.push(PageRef { path, anchor, numbers });
    }
    refs
}

/// The topics named as `alsim explain X` in one line.
fn explain_refs(line: &str) -> Vec<&str> {
    line.match_indices("alsim explain ")
        .map(|(at, m)| {
            let rest = &line[at + m.len()..];
            let end = rest.find(|c: char| c.is_whitespace() || "`'\"),;:".contains(c)).unwrap_or(rest.len());
            rest[..end].trim_end_matches('.')
        })
        .filter(|t| !t.is_empty() && !t.starts_with('-') && !PLACEHOLDERS.contains(t))
        .collect()
}

/// Why a page reference does not resolve, if it does not.
fn unresolved(file: &Path, reference: &PageRef) -> Option<String> {
    if EXTERNAL.contains(&reference.path.as_str()) {
        return None;
    }
    // The README links to its pages by address, the repository's (so the links work on PyPI too); the
    // address is cut at `https:`, a character no path has.
    let repository = format!("{}/blob/main/", env!("CARGO_PKG_REPOSITORY").trim_start_matches("https:"));
    let path = reference.path.strip_prefix(repository.as_str()).unwrap_or(&reference.path);
    // A rule's doc is its class's section of docs/pins.md, word for word, so its links are the page's.
    let base = if file.starts_with(root().join("src/pins/rules")) {
        root().join("docs")
    } else {
        file.parent().unwrap().into()
    };
    let Some(target) = [base.join(path), root().join(path)].into_iter().find(|p| p.is_file()) else {
        return Some(format!("{path} is not a shipped file"));
    };
    let text = std::fs::read_to_string(&target).unwrap();
    let found = sections(&text);
    if let Some(anchor) = &reference.anchor
        && !found.iter().any(|(_, a)| a == anchor)
    {
        return Some(format!("{} has no section #{anchor}", reference.path));
    }
    let missing: Vec<&String> =
        reference.numbers.iter().filter(|n| !found.iter().any(|(s, _)| s.number() == Some(n.as_str()))).collect();
    (!missing.is_empty()).then(|| format!("{} has no section §{}", reference.path, missing[0]))
}

#[test]
fn every_reference_to_a_page_or_topic_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in scanned() {
        let text = std::fs::read_to_string(&file).unwrap();
        let shown = file.strip_prefix(root()).unwrap().display().to_string();
        for (i, line) in text.lines().enumerate() {
            for reference in page_refs(line) {
                checked += 1;
                if let Some(why) = unresolved(&file, &reference) {
                    broken.push(format!("{shown}:{}: {why}", i + 1));
                }
            }
            for topic in explain_refs(line) {
                checked += 1;
                if let Err(e) = explain::find(topic) {
                    broken.push(format!("{shown}:{}: {e}", i + 1));
                }
            }
        }
    }
    assert!(checked > 80, "the scan found only {checked} references: is it still reading the sources?");
    assert!(broken.is_empty(), "references that resolve to nothing:\n{}", broken.join("\n"));
}

#[test]
fn the_scanner_reads_the_forms_references_take() {
    let refs = page_refs("x (docs/model.md §2, §5) and docs/model.md §3–4; [p](pins.md#wrong-k), `*.md`");
    let seen: Vec<(&str, Option<&str>, Vec<&str>)> = refs
        .iter()
        .map(|r| (r.path.as_str(), r.anchor.as_deref(), r.numbers.iter().map(String::as_str).collect()))
        .collect();
    assert_eq!(
        seen,
        [
            ("docs/model.md", None, vec!["2", "5"]),
            ("docs/model.md", None, vec!["3", "4"]),
            ("pins.md", Some("wrong-k"), vec![]),
        ]
    );
    assert_eq!(explain_refs("run `alsim explain wrong-k`, or alsim explain TOPIC / alsim explain --list"), ["wrong-k"]);
    let missing = PageRef { path: "model.md".into(), anchor: None, numbers: vec![] };
    assert!(unresolved(&root().join("src/lib.rs"), &missing).is_some(), "a bare model.md is not shipped at the root");
    let no_section = PageRef { path: "docs/model.md".into(), anchor: None, numbers: vec!["9".into()] };
    assert!(unresolved(&root().join("src/lib.rs"), &no_section).is_some());
}

#[test]
fn every_finding_class_has_a_topic_on_the_pins_page() {
    for class in alsim::pins::Class::ALL {
        let topic = explain::find(class.name()).unwrap_or_else(|e| panic!("{class}: {e}"));
        assert_eq!(topic.reference(), format!("docs/pins.md#{}", class.name()));
        if let Some(n) = class.number() {
            for spelling in [n.to_string(), format!("class-{n}"), format!("Class {n}")] {
                assert_eq!(explain::find(&spelling).unwrap().name(), class.name(), "{spelling}");
            }
        }
    }
}

/// The serde name of a value alsim prints in JSON (`min-variance`, `pin_too_high`).
fn serde_name(value: impl serde::Serialize) -> String {
    serde_json::to_value(value).unwrap().as_str().unwrap().to_string()
}

#[test]
fn every_engine_schedule_verdict_and_curve_term_alsim_prints_has_a_topic() {
    use alsim::accept::fit::FitKind;
    use alsim::accept::schedule::ScheduleKind;
    use alsim::curve::check::ProblemKind;
    use alsim::engine::Engine;
    use alsim::evidence::verdict::Verdict;

    let mut printed: Vec<String> = Vec::new();
    for engine in Engine::ALL {
        printed.extend([engine.name().to_string(), engine.display_name().to_string()]);
    }
    printed.extend(ScheduleKind::ALL.map(serde_name));
    printed.extend(ScheduleKind::ALL.map(|k| k.label().to_string()));
    for verdict in Verdict::ALL {
        printed.extend([serde_name(verdict), verdict.label().to_string()]);
    }
    printed.extend(FitKind::ALL.iter().map(|f| f.name().to_string()));
    printed.extend(ProblemKind::ALL.map(serde_name));
    printed.extend(
        ["AL", "acceptance rate", "TPOT", "TV distance", "band", "toss-up", "best k", "design effect"]
            .map(String::from),
    );
    let missing: Vec<&String> = printed.iter().filter(|p| explain::find(p).is_err()).collect();
    assert!(missing.is_empty(), "printed but not explained: {missing:?}");
}

#[test]
fn topics_are_unique_and_fit_the_terminal() {
    let topics = explain::topics();
    let mut names: Vec<&str> = topics.iter().flat_map(|t| t.names.iter().copied()).collect();
    names.sort();
    let repeated: Vec<&&str> = names.windows(2).filter(|w| w[0] == w[1]).map(|w| &w[0]).collect();
    assert!(repeated.is_empty(), "names that answer for two topics: {repeated:?}");
    for topic in &topics {
        assert_eq!(normalize(topic.name()), topic.name());
        for line in topic.text.lines() {
            assert!(line.chars().count() <= WIDTH, "{}: a line over {WIDTH} columns: {line}", topic.reference());
        }
    }
}

#[test]
fn explain_prints_the_pages_section() {
    let (code, stdout, stderr) = run(&["explain", "wrong-k"]);
    assert_eq!(code, 0, "{stderr}");
    let topic = explain::find("wrong-k").unwrap();
    assert!(stdout.starts_with(topic.text.trim_end()), "{stdout}");
    assert!(stdout.contains("docs/pins.md#wrong-k"), "{stdout}");
    assert!(stdout.contains("Fix:"), "a class's topic says how to fix it: {stdout}");
}

#[test]
fn explain_takes_a_class_by_number_and_words_apart() {
    let by_name = run(&["explain", "eval-leak"]);
    assert_eq!(by_name.0, 0);
    assert_eq!(run(&["explain", "8"]), by_name);
    assert_eq!(run(&["explain", "class-8"]), by_name);
    let (code, stdout, _) = run(&["explain", "pin", "too", "high"]);
    assert_eq!((code, stdout), (0, run(&["explain", "pin-too-high"]).1));
    let (code, stdout, _) = run(&["explain", "llama.cpp length (geometric)"]);
    assert_eq!((code, stdout), (0, run(&["explain", "llamacpp-geometric"]).1), "a schedule by the label tables print");
}

#[test]
fn an_unknown_topic_is_a_usage_error_with_the_close_matches() {
    let (code, stdout, stderr) = run(&["explain", "wrong-kk"]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert!(stderr.contains("no topic 'wrong-kk'") && stderr.contains("close: wrong-k"), "{stderr}");
    let (code, _, stderr) = run(&["explain", "class-99"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--list"), "{stderr}");
}

#[test]
fn explain_without_a_topic_lists_every_topic() {
    let (code, listed, stderr) = run(&["explain", "--list"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(run(&["explain"]).1, listed);
    for topic in explain::topics() {
        assert!(
            listed.lines().any(|l| l.split_whitespace().next() == Some(topic.name())),
            "{} not listed",
            topic.name()
        );
    }
    assert!(listed.contains("eval-leak               class 8"), "{listed}");
    assert!(listed.lines().all(|l| l.chars().count() <= WIDTH), "{listed}");
}
