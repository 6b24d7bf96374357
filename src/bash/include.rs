//! `source FILE` and `. FILE`: which repository file a script includes at which statement.
//!
//! The path is read as bash would expand it where the script runs: a literal, `$(dirname "$0")`,
//! `$(dirname "${BASH_SOURCE[0]}")`, `${BASH_SOURCE%/*}`, `$(cd "$(dirname "$0")" && pwd)` (`$0` is the
//! script the run started, `BASH_SOURCE` the file being read), or a variable the script sets to one of
//! those. A path relative to nothing (`x.sh`) is looked for beside the script, then at the repository
//! root. A directory held in a variable the repository never sets (`$SGLANG_WS_PATH/env.sh`, a container
//! mount of the checkout) is taken to be the script's own directory, then the root, when the file is
//! there. Paths that leave the repository, absolute paths and files the walk did not read (a link out of
//! the root is never read) are unresolved, with the reason.
//!
//! Both ways are recorded: a script's [`Include`]s (what it reads, [`Script::includes`]) and the scripts
//! that read it ([`Script::sourced_by`]), whose variables it sees.

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;

use super::word::{Part, VarOp, Word};
use super::{Script, StmtKind};

/// How many variables a path may go through (`DIR=$(dirname "$0")`, `LIB=$DIR/lib`).
const MAX_HOPS: usize = 4;

/// One `source`/`.` statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Include {
    /// The statement's index in the including script.
    pub stmt: usize,
    /// The path as written.
    pub written: String,
    /// The included script's index among the parsed scripts, or why it is not followed.
    pub target: Result<usize, String>,
}

/// Where a path points before it is looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Path {
    /// Relative to the repository root, normalized.
    Repo(String),
    /// Relative to nothing written (`x.sh`, or after a variable the repository never sets): the
    /// script's directory, then the root.
    Loose {
        /// The path after the unknown part.
        rest: String,
        /// The variable that hid the directory, if any.
        unknown: Option<String>,
    },
}

/// The `source`/`.` statements of `script`: (statement index, the path word).
pub(crate) fn statements(script: &Script) -> Vec<(usize, &Word)> {
    script
        .stmts
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match &s.kind {
            StmtKind::Command(c) if matches!(c.name().as_deref(), Some("source" | ".")) => {
                c.words.get(1).map(|w| (i, w))
            }
            _ => None,
        })
        .collect()
}

/// The repository path `word` names in `script` (whose run started at `top`), or why it cannot be read.
pub(crate) fn path_of(word: &Word, script: &Script, top: &str) -> Result<Path, String> {
    let text = expand(word, script, top, 0)?;
    if text.starts_with('/') {
        return Err(format!("{} is an absolute path, outside the repository as checked", word.raw));
    }
    match text.split_once('\u{0}') {
        Some((_, rest)) => {
            let unknown = text.split('\u{0}').next().filter(|v| !v.is_empty()).map(str::to_string);
            Ok(Path::Loose { rest: rest.trim_start_matches('/').to_string(), unknown })
        }
        None if !text.contains('/') || text.starts_with("./") => {
            Ok(Path::Loose { rest: text.trim_start_matches("./").to_string(), unknown: None })
        }
        None => normalize(&text).map(Path::Repo).ok_or_else(|| format!("{} leaves the repository", word.raw)),
    }
}

/// The file `path` names, given the including script's path and which files exist.
pub(crate) fn locate(path: &Path, script: &str, exists: &dyn Fn(&str) -> bool) -> Result<String, String> {
    match path {
        Path::Repo(p) if exists(p) => Ok(p.clone()),
        Path::Repo(p) => Err(format!("{p} is not a file the check read in the repository")),
        Path::Loose { rest, unknown } => {
            let beside = normalize(&format!("{}/{rest}", dir(script)));
            let candidates = beside.into_iter().chain(normalize(rest));
            let found: Option<String> = candidates.into_iter().find(|c| exists(c));
            found.ok_or_else(|| match unknown {
                Some(v) => {
                    format!("${v} is not set in the repository, and no {rest} is beside the script or at the root")
                }
                None => format!("no {rest} beside the script or at the repository root"),
            })
        }
    }
}

/// The word's text with directory idioms replaced by the directory they name; a variable the script
/// never sets ends the known part with a NUL after its name.
fn expand(word: &Word, script: &Script, top: &str, hops: usize) -> Result<String, String> {
    let mut out = String::new();
    for part in &word.parts {
        match part {
            Part::Lit { text, .. } => out.push_str(text),
            Part::Cmd { body, .. } => out.push_str(
                &dir_idiom(body, script, top, hops)
                    .ok_or_else(|| format!("$({body}) is not a directory the check can read"))?,
            ),
            Part::Var { name, op: VarOp::Strip { suffix: true, pattern, .. } } if pattern == "/*" => {
                match name.as_str() {
                    "0" => out.push_str(dir(top)),
                    "BASH_SOURCE" => out.push_str(dir(&script.rel)),
                    _ => return Err(format!("${{{name}%/*}} is not a directory the check can read")),
                }
            }
            Part::Other(text) if text.starts_with("${BASH_SOURCE[0]%/*") => out.push_str(dir(&script.rel)),
            Part::Var { name, op: VarOp::Plain | VarOp::Default(_) } => {
                let assigned = script.assignments_of(name);
                let reads_itself =
                    |i: &usize| matches!(&script.stmts[*i].kind, StmtKind::Assign(a) if a.value.words()[0].reads(name));
                // `WS=${WS:-…}` reads the value from before, the environment's, which the repository does
                // not set: its default decides.
                let only_itself = !assigned.is_empty() && assigned.iter().all(reads_itself);
                let value = match (assigned, part) {
                    (_, Part::Var { op: VarOp::Default(default), .. }) if assigned.is_empty() || only_itself => {
                        Some(expand(default, script, top, hops + 1)?)
                    }
                    ([only], _) if hops < MAX_HOPS => match &script.stmts[*only].kind {
                        StmtKind::Assign(a) => Some(expand(&a.value.words()[0], script, top, hops + 1)?),
                        StmtKind::Command(_) => None,
                    },
                    ([], _) => None,
                    ([_], _) => return Err(format!("${name} goes through more than {MAX_HOPS} variables")),
                    _ => return Err(format!("${name} is assigned more than once in {}", script.rel)),
                };
                match value {
                    Some(v) => out.push_str(&v),
                    None if out.is_empty() => {
                        out.push_str(name);
                        out.push('\u{0}');
                    }
                    None => return Err(format!("${name} is not set in {}", script.rel)),
                }
            }
            _ => return Err(format!("{} is not a path the check can read", word.raw)),
        }
    }
    Ok(out)
}

/// `dirname "$0"`, `dirname "${BASH_SOURCE[0]}"` and `cd DIR && pwd` (DIR itself one of these, a
/// variable set to one, or a path after one): the directory named.
fn dir_idiom(body: &str, script: &Script, top: &str, hops: usize) -> Option<String> {
    let flat: String = body.chars().filter(|c| !matches!(c, '"' | '\'' | ' ')).collect();
    if let Some(dir) =
        flat.strip_prefix("cd").and_then(|r| r.strip_suffix("&&pwd").or_else(|| r.strip_suffix("&&pwd-P")))
    {
        return flat_path(dir, script, top, hops);
    }
    match flat.strip_prefix("dirname")? {
        "$0" | "${0}" => Some(dir(top).to_string()),
        "$BASH_SOURCE" | "${BASH_SOURCE}" | "${BASH_SOURCE[0]}" => Some(dir(&script.rel).to_string()),
        _ => None,
    }
}

/// A path written without quotes or spaces: `$(…)`, `$NAME` or `${NAME}` at the start, then literal text.
fn flat_path(text: &str, script: &Script, top: &str, hops: usize) -> Option<String> {
    if hops >= MAX_HOPS {
        return None;
    }
    let (head, rest) = if let Some(inner) = text.strip_prefix("$(") {
        let close = inner.rfind(')')?;
        (dir_idiom(&inner[..close], script, top, hops + 1)?, &inner[close + 1..])
    } else if let Some(var) = text.strip_prefix('$') {
        let (name, rest) = match var.strip_prefix('{') {
            Some(braced) => braced.split_once('}')?,
            None => var.split_at(var.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(var.len())),
        };
        let [only] = script.assignments_of(name) else { return None };
        let StmtKind::Assign(a) = &script.stmts[*only].kind else { return None };
        (expand(&a.value.words()[0], script, top, hops + 1).ok()?, rest)
    } else {
        (String::new(), text)
    };
    (!head.contains('\u{0}') && !rest.contains('$')).then(|| format!("{head}{rest}"))
}

/// The directory part of a repository path ("." at the root).
fn dir(path: &str) -> &str {
    path.rsplit_once('/').map_or(".", |(d, _)| d)
}

/// `a/./b/../c` as `a/c`; `None` when `..` climbs above the root.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// Every script's includes, against the scripts parsed so far; `parse` reads an included file that is not
/// parsed yet (`None`: it is not bash), which is added and indexed in `index`. The scripts are taken in
/// waves — those parsed so far, then the files they reach, then theirs — until no new file is reached, so
/// that a wave's new files, which need nothing from each other, are parsed in parallel; they are added in
/// the order they are first reached, so indices do not depend on the threads. An include that would read a
/// file the run is already inside (a cycle) is not followed.
pub(crate) fn resolve_all(
    scripts: &mut Vec<Script>,
    index: &mut HashMap<String, usize>,
    parse: &(dyn Fn(&str) -> Option<Script> + Sync),
    exists: &dyn Fn(&str) -> bool,
) {
    let mut done = 0;
    while done < scripts.len() {
        let wave = done..scripts.len();
        let found: Vec<Vec<_>> = scripts[wave.clone()]
            .iter()
            .map(|script| {
                statements(script)
                    .into_iter()
                    .map(|(stmt, word)| {
                        let target = path_of(word, script, &script.rel).and_then(|p| locate(&p, &script.rel, exists));
                        (stmt, word.raw.clone(), target)
                    })
                    .collect()
            })
            .collect();
        let mut seen = HashSet::new();
        let new: Vec<&str> = found
            .iter()
            .flatten()
            .filter_map(|(_, _, target)| target.as_deref().ok())
            .filter(|rel| !index.contains_key(*rel) && seen.insert(*rel))
            .collect();
        let parsed: Vec<(String, Option<Script>)> = new.par_iter().map(|rel| (rel.to_string(), parse(rel))).collect();
        for (rel, script) in parsed {
            if let Some(script) = script {
                index.insert(rel, scripts.len());
                scripts.push(script);
            }
        }
        for (at, found) in wave.clone().zip(found) {
            scripts[at].includes = found
                .into_iter()
                .map(|(stmt, written, target)| {
                    let target = target.and_then(|rel| {
                        index.get(&rel).copied().ok_or_else(|| format!("{rel} could not be parsed as bash"))
                    });
                    Include { stmt, written, target }
                })
                .collect();
        }
        done = wave.end;
    }
    cut_cycles(scripts);
    for from in 0..scripts.len() {
        let edges: Vec<(usize, usize)> =
            scripts[from].includes.iter().filter_map(|inc| Some((*inc.target.as_ref().ok()?, inc.stmt))).collect();
        for (target, stmt) in edges {
            scripts[target].sourced_by.push((from, stmt));
        }
    }
}

/// Stops every include that reads a file the run is already inside (a depth-first walk from each script
/// in order; the include that closes a cycle is the one cut, so `a.sh` still reads `b.sh` when `b.sh`
/// sources `a.sh` back).
fn cut_cycles(scripts: &mut [Script]) {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark = vec![Mark::New; scripts.len()];
    for root in 0..scripts.len() {
        if mark[root] != Mark::New {
            continue;
        }
        mark[root] = Mark::Open;
        let mut stack = vec![(root, 0usize)];
        while let Some((node, next)) = stack.last().copied() {
            let Some(include) = scripts[node].includes.get(next) else {
                mark[node] = Mark::Done;
                stack.pop();
                continue;
            };
            if let Some(top) = stack.last_mut() {
                top.1 += 1;
            }
            let Ok(target) = include.target else { continue };
            match mark[target] {
                Mark::Open => {
                    let rel = scripts[target].rel.clone();
                    let include = &mut scripts[node].includes[next];
                    include.target = Err(format!("{} reads {rel} again (a cycle)", include.written));
                }
                Mark::New => {
                    mark[target] = Mark::Open;
                    stack.push((target, 0));
                }
                Mark::Done => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str, rel: &str) -> Vec<Result<Path, String>> {
        let script = Script::parse(rel, text).unwrap();
        statements(&script).into_iter().map(|(_, w)| path_of(w, &script, rel)).collect()
    }

    #[test]
    fn directory_idioms_resolve_to_the_scripts_directory() {
        let text = "source \"$(dirname \"$0\")/../../benchmark_lib.sh\"\n\
                    source \"$(dirname \"${BASH_SOURCE[0]}\")/slurm_utils.sh\"\n\
                    . ${BASH_SOURCE%/*}/env.sh\n\
                    DIR=\"$(cd \"$(dirname \"$0\")\" && pwd)\"\nsource \"$DIR/x.sh\"\n\
                    source $SGLANG_WS_PATH/env.sh\nsource helpers.sh\nsource /workspace/lib.sh\n\
                    source ../../../../../etc/passwd\n\
                    ROOT=\"$(cd \"$DIR/../../..\" && pwd)\"\nsource \"$ROOT/benchmarks/benchmark_lib.sh\"\n\
                    WS=\"${WS:-$(dirname \"${BASH_SOURCE[0]}\")}\"\nsource \"$WS/server.sh\"\n";
        let got = paths(text, "benchmarks/single_node/agentic/run.sh");
        let repo = |p: &str| Ok(Path::Repo(p.to_string()));
        assert_eq!(got[0], repo("benchmarks/benchmark_lib.sh"));
        assert_eq!(got[1], repo("benchmarks/single_node/agentic/slurm_utils.sh"));
        assert_eq!(got[2], repo("benchmarks/single_node/agentic/env.sh"));
        assert_eq!(got[3], repo("benchmarks/single_node/agentic/x.sh"));
        assert_eq!(got[4], Ok(Path::Loose { rest: "env.sh".into(), unknown: Some("SGLANG_WS_PATH".into()) }));
        assert_eq!(got[5], Ok(Path::Loose { rest: "helpers.sh".into(), unknown: None }));
        assert!(got[6].as_ref().unwrap_err().contains("absolute"), "{:?}", got[6]);
        assert!(got[7].as_ref().unwrap_err().contains("leaves the repository"), "{:?}", got[7]);
        assert_eq!(got[8], repo("benchmarks/benchmark_lib.sh"));
        // `WS=${WS:-…}` reads the environment's WS, which nothing sets: its default decides.
        assert_eq!(got[9], repo("benchmarks/single_node/agentic/server.sh"));
    }

    #[test]
    fn a_loose_path_is_looked_for_beside_the_script_then_at_the_root() {
        let exists = |p: &str| matches!(p, "a/env.sh" | "lib.sh");
        let loose = |rest: &str| Path::Loose { rest: rest.into(), unknown: Some("WS".into()) };
        assert_eq!(locate(&loose("env.sh"), "a/run.sh", &exists), Ok("a/env.sh".into()));
        assert_eq!(locate(&loose("lib.sh"), "a/run.sh", &exists), Ok("lib.sh".into()));
        let missing = locate(&loose("gone.sh"), "a/run.sh", &exists).unwrap_err();
        assert!(missing.contains("$WS") && missing.contains("gone.sh"), "{missing}");
    }
}
