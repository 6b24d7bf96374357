//! Shared launch code: the files a multi-node launch script hands its job on to, and whether any of them
//! pins acceptance in a form the entry's engine reads.
//!
//! A multi-node entry with no recipe (`CONFIG_FILE`) runs a script under `benchmarks/multi_node/` that
//! submits a batch job, which starts a server script picked by engine (InferenceX's AMD path:
//! `agentic/<x>.sh` → `amd_utils/submit.sh` → `job.slurm` → `server.sh` → `server_sglang.sh`). The hops go
//! through `sbatch`, `srun`, `docker run` and `cd`, which the bash reader does not run, so the path is
//! followed by name: a file names the next (`bash ./submit.sh`, `"$(dirname "$0")/job.slurm"`,
//! `RUN_FILE="server.sh"`), looked up beside it, below a folder it `cd`s into, or by the relative path
//! it spells. Following every name over-approximates the path (`server.sh` names the vLLM and ATOM
//! server scripts too), which can only hide a missing pin, never invent one: the engine decides which
//! files count, since only its own k flags configure its speculation and only its own knobs pin it.

use std::collections::{BTreeSet, HashMap, VecDeque};

use crate::engine::Engine;
use crate::pins::walk::{FileKind, TextFile};
use crate::pins::{Knob, Location};

/// How many files one launch path may pass through before the search stops (InferenceX's deepest is 5).
const MAX_FILES: usize = 64;

/// The settings that give an engine its draft length k (docs/engines.md): where one is written, the file
/// configures that engine's speculation.
pub(crate) fn k_settings(engine: Engine) -> &'static [&'static str] {
    match engine {
        Engine::Sglang => {
            &["--speculative-num-steps", "--speculative-num-draft-tokens", "--speculative-dspark-block-size"]
        }
        Engine::Vllm => &["num_speculative_tokens", "--num-speculative-tokens"],
        Engine::Trtllm => &["max_draft_len", "--max-draft-len"],
        Engine::Atom => &["--num-speculative-tokens"],
        Engine::Llamacpp => &["--spec-draft-n-max", "LLAMA_ARG_SPEC_DRAFT_N_MAX", "--draft-max"],
    }
}

/// The spellings of the knobs an engine reads.
pub(crate) fn knobs_read(engine: Engine) -> Vec<&'static str> {
    let mut out: Vec<&str> = Knob::ALL.iter().filter(|k| k.engine() == Some(engine)).map(|k| k.name()).collect();
    if engine == Engine::Llamacpp {
        out.extend(["LLAMA_ARG_SPEC_SYNTH_LEN", "LLAMA_ARG_SPEC_SYNTH_RATES"]);
    }
    out
}

/// One file of a launch path and the line of the file before it that names it (`None` for the start).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hop {
    pub file: String,
    pub named_at: Option<Location>,
}

/// The files reached from `start` by name, in the order found (breadth first), each once.
pub(crate) fn reached(start: &str, files: &HashMap<&str, &TextFile>) -> Vec<Hop> {
    let mut out = vec![Hop { file: start.to_string(), named_at: None }];
    let mut seen: BTreeSet<String> = BTreeSet::from([start.to_string()]);
    let mut queue = VecDeque::from([start.to_string()]);
    while let Some(rel) = queue.pop_front() {
        let Some(file) = files.get(rel.as_str()) else { continue };
        for (line, next) in named_files(file, files) {
            if out.len() >= MAX_FILES {
                return out;
            }
            if seen.insert(next.clone()) {
                out.push(Hop { file: next.clone(), named_at: Some(Location::new(&rel, line)) });
                queue.push_back(next);
            }
        }
    }
    out
}

/// The first line of `file` (comments aside) that writes any of `needles`.
pub(crate) fn first_line_with(file: &TextFile, needles: &[&str]) -> Option<usize> {
    code_lines(&file.text).find(|(_, l)| needles.iter().any(|n| l.contains(n))).map(|(i, _)| i)
}

/// Lines with their 1-based numbers, comment lines left out.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim_start().starts_with('#'))
}

/// The repository's shell files `file` names, with the line naming each.
fn named_files(file: &TextFile, files: &HashMap<&str, &TextFile>) -> Vec<(usize, String)> {
    let dir = parent(&file.rel);
    let mut dirs = vec![dir.to_string()];
    for (_, l) in code_lines(&file.text) {
        if let Some(target) = cd_target(l, dir)
            && !dirs.contains(&target)
        {
            dirs.push(target);
        }
    }
    let mut out = Vec::new();
    for (line, text) in code_lines(&file.text) {
        for token in script_names(text) {
            let (written_dir, base) = token.rsplit_once('/').unwrap_or(("", token));
            let mut tries: Vec<String> = dirs.iter().map(|d| join(d, base)).collect();
            if !written_dir.is_empty() {
                tries.insert(0, join(&repo_dir(written_dir, dir), base));
            }
            if let Some(found) = tries
                .into_iter()
                .find(|p| *p != file.rel && files.get(p.as_str()).is_some_and(|f| f.kind == FileKind::Shell))
            {
                out.push((line, found));
            }
        }
    }
    out
}

/// The words of a line that end in a shell script's extension, with the path written before the name
/// (variables and quotes cut off at the first character that cannot be in a path).
fn script_names(line: &str) -> Vec<&str> {
    let path_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    let mut out = Vec::new();
    for ext in [".sh", ".slurm", ".bash"] {
        for (at, _) in line.match_indices(ext) {
            let end = at + ext.len();
            if line[end..].chars().next().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let mut start = line[..at].rfind(|c: char| !path_char(c)).map_or(0, |i| i + 1);
            // `$SCRIPT_DIR/../x.sh`: the variable's name is not part of the path written after it.
            if line[..start].ends_with('$') {
                start += line[start..at].find('/').unwrap_or(0);
            }
            let token = &line[start..end];
            if token.len() > ext.len() && !token.ends_with(&format!("/{ext}")) {
                out.push(token.trim_start_matches("./"));
            }
        }
    }
    out
}

/// The repository folder of `cd DIR` on a line, where DIR spells one (`cd "$GITHUB_WORKSPACE/benchmarks/x"`,
/// `cd ../y`).
fn cd_target(line: &str, dir: &str) -> Option<String> {
    let rest = line.trim_start().strip_prefix("cd ")?;
    let word: String = rest
        .trim_start()
        .chars()
        .take_while(|c| !c.is_whitespace() && !matches!(c, ';' | '&' | '|' | ')'))
        .filter(|c| !matches!(c, '"' | '\''))
        .collect();
    if let Some(at) = word.find("benchmarks/") {
        return Some(normalize(word[at..].trim_end_matches('/')));
    }
    (!word.starts_with('$') && !word.is_empty() && !word.starts_with('/')).then(|| join(dir, &word))
}

/// A folder written before a script's name, as a repository folder: `benchmarks/…` from the root, a
/// variable-led folder (`$SCRIPT_DIR/../..`) or a relative one from the naming file's folder.
fn repo_dir(written: &str, dir: &str) -> String {
    if let Some(at) = written.find("benchmarks/") {
        return normalize(&written[at..]);
    }
    join(dir, written.trim_start_matches('/'))
}

fn parent(rel: &str) -> &str {
    rel.rsplit_once('/').map_or("", |(d, _)| d)
}

fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() { normalize(rest) } else { normalize(&format!("{dir}/{rest}")) }
}

/// `a/b/../c` → `a/c`; `.` parts dropped; a `..` above the root is dropped too (the path leaves the
/// repository and names nothing in it).
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(rel: &str, text: &str) -> TextFile {
        TextFile { rel: rel.into(), kind: FileKind::Shell, text: text.into() }
    }

    #[test]
    fn a_launch_path_is_followed_by_name_through_cd_relative_paths_and_variables() {
        let files = [
            file(
                "benchmarks/multi_node/agentic/m.sh",
                "source \"$SCRIPT_DIR/../../lib.sh\"\ncd \"$GITHUB_WORKSPACE/benchmarks/multi_node/utils\" || exit 1\n# bash ./old.sh\nJOB=$(bash ./submit.sh 1 2)\n",
            ),
            file("benchmarks/lib.sh", "f() { :; }\n"),
            file("benchmarks/multi_node/utils/submit.sh", "sbatch \"$(dirname \"$0\")/job.slurm\"\n"),
            file("benchmarks/multi_node/utils/job.slurm", "RUN_FILE=\"server.sh\"\n"),
            file("benchmarks/multi_node/utils/server.sh", "source \"$WS/server_a.sh\"\n"),
            file(
                "benchmarks/multi_node/utils/server_a.sh",
                "python3 -m sglang.launch_server --speculative-num-steps 3\n",
            ),
            file("benchmarks/multi_node/utils/old.sh", "exit 1\n"),
        ];
        let by_path: HashMap<&str, &TextFile> = files.iter().map(|f| (f.rel.as_str(), f)).collect();
        let hops = reached("benchmarks/multi_node/agentic/m.sh", &by_path);
        let names: Vec<&str> = hops.iter().map(|h| h.file.rsplit('/').next().unwrap()).collect();
        assert_eq!(names, ["m.sh", "lib.sh", "submit.sh", "job.slurm", "server.sh", "server_a.sh"], "{hops:?}");
        assert_eq!(hops[2].named_at, Some(Location::new("benchmarks/multi_node/agentic/m.sh", 4)));
        assert_eq!(first_line_with(&files[5], k_settings(Engine::Sglang)), Some(1));
    }

    #[test]
    fn the_engine_of_a_framework_is_the_one_it_names() {
        assert_eq!(Engine::of_framework("sglang-disagg"), Some(Engine::Sglang));
        assert_eq!(Engine::of_framework("dynamo-vllm"), Some(Engine::Vllm));
        assert_eq!(Engine::of_framework("dynamo-trt"), Some(Engine::Trtllm));
        assert_eq!(Engine::of_framework("atom-disagg"), Some(Engine::Atom));
        assert_eq!(Engine::of_framework("mystery"), None);
        assert_eq!(knobs_read(Engine::Sglang), ["SGLANG_SIMULATE_ACC_LEN"]);
    }
}
