//! Parsing what the graph reaches: YAML trees with their duplicate keys, bash scripts, recipes, and the
//! files launchers hand over to; a file that does not parse is recorded ([`Unparsed`]). Two kinds of
//! script are parsed without such a record (see `candidates`): a script that does not parse is dropped
//! where it is read only because it sources one writing a knob (it could lend that script context, never
//! hide a pin), and a `source`d file that does not parse leaves the include that reads it unresolved,
//! which the check reports at the `source` line where the sourcing script writes a knob.

use std::collections::{BTreeSet, HashMap};

use rayon::prelude::*;

use super::runner;
use crate::bash::Script;
use crate::pins::discover::recipe::Recipe;
use crate::pins::observed::{Observed, Unparsed};
use crate::pins::walk::{FileKind, TextFile};

/// A YAML file's tree and its duplicate keys, or the record that it could not be parsed.
pub(super) type Parsed = Result<(crate::yaml::Node, Vec<crate::yaml::Duplicate>), Unparsed>;

pub(super) fn parse_yaml(file: &TextFile) -> Parsed {
    crate::yaml::parse_like_pyyaml(&file.text, &file.rel).map_err(|e| {
        let line = match e {
            crate::Error::Parse { line, .. } => line,
            _ => None,
        };
        Unparsed { file: file.rel.clone(), line: line.unwrap_or(1), reason: e.to_string() }
    })
}

pub(super) fn parse_script(file: &TextFile) -> Result<Script, Unparsed> {
    Script::parse(&file.rel, &file.text).map_err(|e| Unparsed {
        file: file.rel.clone(),
        line: e.line.unwrap_or(1),
        reason: format!("bash parse error: {}", e.message),
    })
}

pub(super) fn parse_scripts(files: Vec<&TextFile>) -> (Vec<Script>, Vec<Observed>) {
    let parsed: Vec<Result<Script, Unparsed>> = files.par_iter().map(|f| parse_script(f)).collect();
    let mut scripts = Vec::new();
    let mut observed = Vec::new();
    for p in parsed {
        match p {
            Ok(s) => scripts.push(s),
            Err(u) => observed.push(Observed::Unparsed(u)),
        }
    }
    (scripts, observed)
}

pub(super) fn parse_recipes(files: &[&TextFile]) -> Vec<Result<Recipe, Unparsed>> {
    files.par_iter().map(|f| parse_yaml(f).map(|(root, dups)| Recipe::read(&f.rel, &f.text, &root, &dups))).collect()
}

/// Parses the files launchers hand over to (`source`, `exec`), and theirs, a few hand-overs deep, so that
/// a launcher is read through them. Their paths.
pub(super) fn parse_handoffs(
    launchers: &BTreeSet<&str>,
    by_path: &HashMap<&str, &TextFile>,
    scripts: &mut Vec<Script>,
    script_index: &mut HashMap<String, usize>,
    observed: &mut Vec<Observed>,
) -> BTreeSet<String> {
    let exists = |p: &str| by_path.get(p).is_some_and(|f| f.kind == FileKind::Shell);
    let mut reached = BTreeSet::new();
    let mut frontier: Vec<usize> = launchers.iter().filter_map(|p| script_index.get(*p).copied()).collect();
    for _ in 0..runner::MAX_HANDOFFS {
        let targets: BTreeSet<String> =
            frontier.iter().flat_map(|&i| runner::handoff_paths(&scripts[i], &exists)).collect();
        frontier =
            targets.iter().filter(|p| !reached.contains(*p)).filter_map(|p| script_index.get(p).copied()).collect();
        reached.extend(targets.iter().cloned());
        let wanted: BTreeSet<String> = targets.into_iter().filter(|p| !script_index.contains_key(p)).collect();
        let (more, mut notes) = parse_scripts(wanted.iter().filter_map(|p| by_path.get(p.as_str()).copied()).collect());
        observed.append(&mut notes);
        for s in more {
            script_index.insert(s.rel.clone(), scripts.len());
            frontier.push(scripts.len());
            scripts.push(s);
        }
    }
    reached
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_yaml_file_is_found_at_its_error() {
        let text = "a: 1\nSGLANG_SIMULATE_ACC_LEN: [\nb: 2\n".to_string();
        let file = TextFile { rel: "broken.yaml".into(), kind: FileKind::Yaml, text };
        let unparsed = parse_yaml(&file).unwrap_err();
        assert_eq!((unparsed.file.as_str(), unparsed.line), ("broken.yaml", 3));
    }
}
