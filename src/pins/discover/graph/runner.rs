//! Runners and their launchers: which launch script a config entry's job runs, and what the launcher
//! does on the way (pick a single-node script by naming convention, swap in the eval twin, strip a knob
//! for eval runs, call the injector).
//!
//! A config entry names a runner label; `configs/runners.yaml` maps the label to runner nodes, and the
//! workflow runs `runners/launch_${RUNNER_NAME%%_*}.sh` on a node (`.github/workflows/benchmark-tmpl.yml`).
//! Launchers are read, not assumed: the single-node script is the first of the `benchmarks/single_node/…`
//! paths the launcher spells (in source order, evaluated with the entry's variables) that exists — which
//! reproduces each launcher's own fallback (framework-tagged name first, then the legacy `_trt`/`_atom`
//! suffix or none). Conditions the entry's variables decide (`$FRAMEWORK == dynamo-trt`) are evaluated,
//! so a branch of the launcher that cannot run for the entry is ignored.
//!
//! A launcher that hands over to another (`source`, `.`, `exec`) is read through it: the other file's
//! twin, strips and guards count as the launcher's own. A strip written in code (`yq 'del(…)'`, a Python
//! script that pops the knob) counts like a `sed` one. What runs on eval runs and cannot be read is kept
//! as [`Unfollowed`], so that what rests on it is unresolved, never a leak.

use std::collections::BTreeMap;

use crate::bash::resolve::{Env, LookupTable, Resolver};
use crate::bash::{Script, Stmt, StmtKind};
use crate::pins::Location;
use crate::yaml::{Node, Value};

/// Runner labels → runner node names (`configs/runners.yaml`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Runners {
    labels: BTreeMap<String, Vec<String>>,
}

impl Runners {
    /// Reads a runners file by its structure (`labels:` mapping labels to lists of node names).
    pub(crate) fn read(root: &Node) -> Option<Runners> {
        let Some(Node { value: Value::Map(labels), .. }) = root.get("labels") else { return None };
        let mut out = BTreeMap::new();
        for (label, nodes) in labels {
            let (Some(label), Value::Seq(nodes)) = (label.as_scalar_text(), &nodes.value) else { continue };
            out.insert(label, nodes.iter().filter_map(Node::as_scalar_text).collect());
        }
        Some(Runners { labels: out })
    }

    /// The launcher files a label runs on, among `launchers` (repository-relative paths), with a node
    /// name of each.
    pub(crate) fn launchers(&self, label: &str, launchers: &[String]) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut add = |node: &str| {
            let prefix = node.split('_').next().unwrap_or(node);
            let path = format!("runners/launch_{prefix}.sh");
            if launchers.contains(&path) && !out.iter().any(|(p, _)| *p == path) {
                out.push((path, node.to_string()));
            }
        };
        match self.labels.get(label) {
            Some(nodes) => nodes.iter().for_each(|n| add(n)),
            None => {
                // No runners file, or a label it does not list: launchers named after the label.
                let bare = label.trim_start_matches("cluster:");
                for l in launchers.iter().filter(|l| l.starts_with(&format!("runners/launch_{bare}"))) {
                    let node = l.trim_start_matches("runners/launch_").trim_end_matches(".sh");
                    add(&format!("{node}_0"));
                }
            }
        }
        out
    }
}

/// A launcher deleting a knob's lines from the recipes under a directory for eval runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Strip {
    /// The text the `sed` deletes lines of (`TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS`).
    pub pattern: String,
    /// Repository-relative directory whose recipes it edits (or the one recipe).
    pub dir: String,
    /// The `sed` command.
    pub at: Location,
}

/// A step of a launcher's eval path the check cannot read: a hand-over to a file it cannot locate, or a
/// program run on eval runs that may edit the recipe and names no knob it could be seen to delete.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Unfollowed {
    /// The repository file or directory its arguments name, when they resolve (`None`: any recipe).
    pub target: Option<String>,
    /// The command.
    pub at: Location,
    /// Why it cannot be followed.
    pub why: String,
}

impl Unfollowed {
    /// Whether it may act on the recipe at `rel`.
    pub(crate) fn may_reach(&self, rel: &str) -> bool {
        self.target.as_deref().is_none_or(|t| rel == t || rel.starts_with(&format!("{t}/")))
    }
}

/// What a launcher does for one entry.
#[derive(Debug, Clone, Default)]
pub(crate) struct LaunchFacts {
    /// The single-node script it runs (repository-relative) and the line that spells it.
    pub script: Option<(String, Location)>,
    /// Every single-node path it tried, in order.
    pub tried: Vec<String>,
    /// The multi-node launch script it runs (`benchmarks/multi_node/…`), for entries served by shared
    /// launch code rather than a recipe, and the line that spells it.
    pub multi_node: Option<(String, Location)>,
    /// The line that swaps in `EVAL_CONFIG_FILE` for eval runs.
    pub eval_twin: Option<Location>,
    /// The line that calls the synthetic-acceptance injector.
    pub injector: Option<Location>,
    /// Knob deletions for eval runs.
    pub strips: Vec<Strip>,
    /// Eval-path steps it could not read.
    pub unfollowed: Vec<Unfollowed>,
}

/// Whether a statement can run for the entry: no enclosing condition is false under its variables.
fn reachable(r: &Resolver, stmt: &Stmt) -> bool {
    // EVAL_ONLY is a run-time switch, not the entry's: only the other variables decide.
    possible(r, &stmt.ctx, stmt.line)
}

/// Whether the arms of `ctx` can all hold for the entry (EVAL_ONLY and undecided conditions aside).
fn possible(r: &Resolver, ctx: &crate::bash::Ctx, line: usize) -> bool {
    r.script.conditions(ctx).into_iter().all(|(cond, holds)| {
        cond.implies_eval(true)
            || cond.implies_eval(false)
            || cond.negation_implies_eval(true)
            || cond.negation_implies_eval(false)
            || r.eval_cond(cond, ctx, line) != Some(!holds)
    })
}

/// A launcher with the statements that can matter to a job picked once: assignments that name a script
/// or switch to the eval twin, and commands that run a script, call the injector or strip a knob for
/// eval. Which of them a job reaches depends on its environment ([`Launcher::facts`]); the text tests
/// do not, and repeating them for each of a launcher's jobs was most of the launch analysis.
pub(crate) struct Launcher<'s> {
    script: &'s Script,
    steps: Vec<Step>,
}

/// A statement of a launcher worth checking, and what its text says it may do.
struct Step {
    stmt: usize,
    twin: bool,
    injector: bool,
    strip: bool,
    /// `source`, `.` or `exec` of another file.
    handoff: bool,
    /// A program run on eval runs (an interpreter, `yq`/`jq`, a script), which may edit recipes in code.
    code: bool,
}

/// How many hand-overs deep a launcher is followed.
pub(crate) const MAX_HANDOFFS: usize = 3;

/// Programs that edit files in code rather than by a text filter.
const EDITORS: [&str; 10] = ["python", "python3", "perl", "yq", "jq", "awk", "node", "ruby", "bash", "sh"];

/// The file a hand-over (`source F`, `. F`, `exec [bash] F …`) runs, if the command is one.
fn handoff_word(c: &crate::bash::Command) -> Option<&crate::bash::Word> {
    match c.name().as_deref() {
        Some("source" | ".") => c.words.get(1),
        Some("exec") => c.words[1..]
            .iter()
            .find(|w| w.literal().is_none_or(|l| !l.starts_with('-') && !matches!(l.as_str(), "bash" | "sh" | "env"))),
        _ => None,
    }
}

/// The repository file a hand-over of `script` runs, or why it cannot be located.
fn handoff_target(
    script: &Script,
    c: &crate::bash::Command,
    exists: &dyn Fn(&str) -> bool,
) -> Option<Result<String, String>> {
    let word = handoff_word(c)?;
    let path = crate::bash::include::path_of(word, script, &script.rel);
    Some(path.and_then(|p| crate::bash::include::locate(&p, &script.rel, exists)))
}

/// The repository files `script`'s hand-overs run that `exists` holds, whatever the entry (so they can be
/// parsed before any launcher is read).
pub(crate) fn handoff_paths(script: &Script, exists: &dyn Fn(&str) -> bool) -> Vec<String> {
    let commands = script.stmts.iter().filter_map(|s| match &s.kind {
        StmtKind::Command(c) => Some(c),
        StmtKind::Assign(_) => None,
    });
    commands.filter_map(|c| handoff_target(script, c, exists)?.ok()).collect()
}

impl<'s> Launcher<'s> {
    /// Picks the statements of `script` that can matter.
    pub(crate) fn new(script: &'s Script) -> Launcher<'s> {
        let steps = script
            .stmts
            .iter()
            .enumerate()
            .filter_map(|(i, stmt)| match &stmt.kind {
                StmtKind::Assign(a) => {
                    let twin = a.name == "CONFIG_FILE" && a.value.words().iter().any(|w| w.reads("EVAL_CONFIG_FILE"));
                    let names_script = a.value.words().iter().any(names_script);
                    (twin || names_script).then_some(Step {
                        stmt: i,
                        twin,
                        injector: false,
                        strip: false,
                        handoff: false,
                        code: false,
                    })
                }
                StmtKind::Command(c) => {
                    let injector = c.words.iter().any(|w| w.raw.contains("inject_synthetic_acceptance"));
                    let on_eval = stmt.ctx.eval == Some(true);
                    let strip = on_eval && c.words.iter().any(|w| w.raw.contains("/d"));
                    let names_script = c.words.iter().any(names_script);
                    let handoff = handoff_word(c).is_some();
                    let code =
                        on_eval && !injector && !handoff && c.name().is_some_and(|n| EDITORS.contains(&n.as_str()));
                    (injector || strip || names_script || handoff || code).then_some(Step {
                        stmt: i,
                        twin: false,
                        injector,
                        strip,
                        handoff,
                        code,
                    })
                }
            })
            .collect();
        Launcher { script, steps }
    }

    /// Reads what the launcher does for an entry whose job has `env`; `repo` says which repository paths
    /// are scripts and reads the other files a step runs.
    pub(crate) fn facts(&self, scripts: &[Script], tables: &[LookupTable], env: &Env, repo: &Repo) -> LaunchFacts {
        let mut facts = LaunchFacts::default();
        self.read_into(&Reading { scripts, tables, env, repo }, 0, &mut facts);
        facts
    }

    /// [`Launcher::facts`], `depth` hand-overs in, adding to `facts`.
    fn read_into(&self, cx: &Reading, depth: usize, facts: &mut LaunchFacts) {
        let launcher = self.script;
        let exists = cx.repo.exists;
        let r = Resolver { script: launcher, scripts: cx.scripts, tables: cx.tables, env: cx.env };
        for step in &self.steps {
            let stmt = &launcher.stmts[step.stmt];
            if !reachable(&r, stmt) {
                continue;
            }
            let loc = Location::new(&launcher.rel, stmt.line);
            match &stmt.kind {
                StmtKind::Assign(a) => {
                    if step.twin {
                        facts.eval_twin.get_or_insert(loc.clone());
                    }
                    for w in a.value.words() {
                        script_candidate(&r, w, stmt, &loc, exists, facts);
                    }
                }
                StmtKind::Command(c) => {
                    if step.injector
                        && c.words.iter().any(|w| {
                            w.literal().is_some_and(|n| {
                                n == "inject_synthetic_acceptance" || n.ends_with("inject_synthetic_acceptance.py")
                            }) || w.raw.contains("inject_synthetic_acceptance.py")
                        })
                    {
                        facts.injector.get_or_insert(loc.clone());
                    }
                    if step.strip {
                        strips(&r, c, stmt, &loc, &mut facts.strips);
                    }
                    if step.handoff {
                        self.hand_over(cx, depth, (c, stmt, &loc), facts);
                    }
                    if step.code {
                        code_strip(&r, c, stmt, &loc, cx.repo, facts);
                    }
                    for w in &c.words {
                        script_candidate(&r, w, stmt, &loc, exists, facts);
                    }
                }
            }
        }
    }

    /// Follows a `source`/`exec` into the file it runs, whose facts then count as this launcher's. One
    /// that cannot be located matters only where eval runs take it: an `exec` (nothing after it runs),
    /// or a `source` under `EVAL_ONLY`.
    fn hand_over(
        &self,
        cx: &Reading,
        depth: usize,
        (c, stmt, loc): (&crate::bash::Command, &Stmt, &Location),
        facts: &mut LaunchFacts,
    ) {
        let on_eval_path = c.name().as_deref() == Some("exec") || stmt.ctx.eval == Some(true);
        match handoff_target(self.script, c, cx.repo.exists) {
            Some(Ok(path)) if depth < MAX_HANDOFFS && path != self.script.rel => {
                if let Some(target) = cx.repo.handoffs.get(path.as_str()) {
                    target.read_into(cx, depth + 1, facts);
                }
            }
            Some(Err(why)) if on_eval_path => {
                facts.unfollowed.push(Unfollowed { target: None, at: loc.clone(), why });
            }
            _ => {}
        }
    }
}

/// What reading a launcher for one job needs.
struct Reading<'a> {
    scripts: &'a [Script],
    tables: &'a [LookupTable],
    env: &'a Env,
    repo: &'a Repo<'a>,
}

/// Which repository paths are scripts, the files launchers hand over to, and the text of other files a
/// launcher runs (a Python strip).
pub(crate) struct Repo<'a> {
    /// Whether a repository path is a script the check read.
    pub exists: &'a (dyn Fn(&str) -> bool + Sync),
    /// The text of a repository file, when it lies inside the repository and is small enough.
    pub read: &'a (dyn Fn(&str) -> Option<String> + Sync),
    /// The scripts hand-overs reach, by path, each picked once for every job.
    pub handoffs: &'a std::collections::HashMap<&'a str, Launcher<'a>>,
}

/// Words that delete: a key (`del`, `pop`), an entry (`remove`, `delete`), a variable (`unset`).
const DELETES: [&str; 5] = ["del", "pop", "remove", "delete", "unset"];

/// The knob names (or parts of one, `SGLANG_SIMULATE_ACC`) a program text deletes, if it also says it
/// deletes: identifiers of at least 8 characters, with an underscore, inside a knob's name.
fn deleted_knobs(text: &str) -> Vec<String> {
    let tokens: Vec<&str> = text.split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_')).collect();
    if !tokens.iter().any(|t| DELETES.contains(t)) {
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    for t in tokens {
        let knob_part = t.len() >= 8 && t.contains('_') && crate::pins::Knob::ALL.iter().any(|k| k.name().contains(t));
        if knob_part && !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    out
}

/// A program run on eval runs (`yq -i 'del(.….KNOB)' F`, `python3 strip.py F`): a strip when its words or
/// its program file delete a knob, otherwise a step the check cannot follow.
fn code_strip(
    r: &Resolver,
    c: &crate::bash::Command,
    stmt: &Stmt,
    loc: &Location,
    repo: &Repo,
    facts: &mut LaunchFacts,
) {
    let args: Vec<(&crate::bash::Word, Option<String>)> = c.words[1..]
        .iter()
        .filter(|w| w.literal().is_none_or(|l| !l.starts_with('-')))
        .map(|w| (w, r.word(w, &stmt.ctx, stmt.line, 0).into_iter().find_map(|v| v.value)))
        .collect();
    let is_program = |v: &str| [".py", ".pl", ".rb", ".js", ".sh"].iter().any(|x| v.ends_with(x));
    let program = args.iter().find_map(|(_, v)| v.as_deref().filter(|v| is_program(v)));
    // The file it edits: the last argument that resolves and is not the program (a recipe or its folder).
    let target = args
        .iter()
        .rev()
        .filter_map(|(_, v)| v.as_deref())
        .find(|v| !is_program(v) && !v.contains(' '))
        .map(|v| super::recipe_path(v).unwrap_or_else(|| repo_dir(r, v, stmt)));
    let inline: String = c.words.iter().map(|w| w.raw.as_str()).collect::<Vec<_>>().join(" ");
    let mut found: Vec<(String, Location)> = deleted_knobs(&inline).into_iter().map(|k| (k, loc.clone())).collect();
    if found.is_empty()
        && let Some(file) = program.map(|p| p.trim_start_matches("./").trim_start_matches('/'))
        && let Some(text) = (repo.read)(file)
    {
        for knob in deleted_knobs(&text) {
            let line = text.lines().position(|l| l.contains(&knob)).map_or(1, |i| i + 1);
            found.push((knob, Location::new(file, line)));
        }
    }
    let Some(dir) = target.clone().filter(|_| !found.is_empty()) else {
        let program = program.map_or_else(|| c.name().unwrap_or_default(), str::to_string);
        let why = format!("{program} runs on EVAL_ONLY runs and may edit the recipe, but names no knob it deletes");
        facts.unfollowed.push(Unfollowed { target, at: loc.clone(), why });
        return;
    };
    for (pattern, at) in found {
        facts.strips.push(Strip { pattern, dir: dir.clone(), at });
    }
}

/// Whether a word may spell a launch script: a `….sh` name, or a command substitution running one by a
/// path under `benchmarks/` (`JOB_ID=$(bash "benchmarks/${SUBDIR}/${SCRIPT_NAME}")`).
fn names_script(word: &crate::bash::Word) -> bool {
    word.raw.contains(".sh") || (word.raw.contains("$(") && word.raw.contains("benchmarks/"))
}

fn script_candidate(
    r: &Resolver,
    word: &crate::bash::Word,
    stmt: &Stmt,
    loc: &Location,
    exists: &dyn Fn(&str) -> bool,
    facts: &mut LaunchFacts,
) {
    // A script run inside `$(…)`: its words are the candidates.
    for part in &word.parts {
        if let crate::bash::Part::Cmd { start, .. } = part
            && let Some(words) = r.script.sub_command(*start)
        {
            for w in words {
                script_candidate(r, w, stmt, loc, exists, facts);
            }
        }
    }
    // Only words that spell a script name (`….sh`) or a path under `benchmarks/` (itself no `$(…)`, read
    // above); `bash "$BENCH_SCRIPT"` repeats an assignment's value.
    let spells_path = word.raw.contains("benchmarks/") && !word.raw.contains("$(");
    if !word.raw.contains(".sh") && !spells_path {
        return;
    }
    for v in r.word(word, &stmt.ctx, stmt.line, 0) {
        // A value assigned in an arm the entry's variables rule out is not a path this job takes.
        if !possible(r, &v.ctx, stmt.line) {
            continue;
        }
        let Some(path) = v.value else { continue };
        let path = path.trim_start_matches("./").trim_start_matches('/').to_string();
        if !path.ends_with(".sh") {
            continue;
        }
        if path.starts_with("benchmarks/multi_node/") {
            if facts.multi_node.is_none() && exists(&path) {
                facts.multi_node = Some((path, loc.clone()));
            }
            continue;
        }
        if !path.starts_with("benchmarks/single_node/") || facts.tried.contains(&path) {
            continue;
        }
        facts.tried.push(path.clone());
        if facts.script.is_none() && exists(&path) {
            facts.script = Some((path, loc.clone()));
        }
    }
}

/// `sed -i '/KNOB/d' …` (or `find DIR … -exec sed … '/KNOB/d' {} +`) run for eval: the knob and the
/// directory, mapped back to the repository through the `cp -rT "$GITHUB_WORKSPACE/SRC" DST` that filled it.
fn strips(r: &Resolver, c: &crate::bash::Command, stmt: &Stmt, loc: &Location, out: &mut Vec<Strip>) {
    let literals: Vec<Option<String>> = c.words.iter().map(|w| w.literal()).collect();
    let patterns: Vec<String> = literals
        .iter()
        .flatten()
        .filter_map(|w| w.strip_prefix('/').and_then(|p| p.strip_suffix("/d")).map(str::to_string))
        .collect();
    if patterns.is_empty() || !literals.iter().flatten().any(|w| w == "sed") {
        return;
    }
    let dir_word = match literals.first().and_then(|n| n.as_deref()) {
        Some("find") => c.words.get(1),
        _ => c.words.last(),
    };
    let Some(dir) = dir_word.and_then(|w| r.word(w, &stmt.ctx, stmt.line, 0).into_iter().find_map(|v| v.value)) else {
        return;
    };
    let dir = repo_dir(r, &dir, stmt);
    for pattern in patterns {
        out.push(Strip { pattern, dir: dir.clone(), at: loc.clone() });
    }
}

/// The repository directory a launcher's working copy came from (`cp -rT "$GITHUB_WORKSPACE/X" DIR`).
fn repo_dir(r: &Resolver, dir: &str, at: &Stmt) -> String {
    for stmt in r.script.stmts.iter().filter(|s| s.line < at.line && s.ctx.compatible(&at.ctx)) {
        let StmtKind::Command(c) = &stmt.kind else { continue };
        if c.name().as_deref() != Some("cp") {
            continue;
        }
        let args: Vec<&crate::bash::Word> =
            c.words[1..].iter().filter(|w| w.literal().is_none_or(|l| !l.starts_with('-'))).collect();
        let [src, dst] = args.as_slice() else { continue };
        let value = |w: &crate::bash::Word| r.word(w, &stmt.ctx, stmt.line, 0).into_iter().find_map(|v| v.value);
        // The source's workspace prefix need not resolve: the repository path is written after it.
        if value(dst).as_deref().map(|d| d.trim_end_matches('/')) == Some(dir.trim_end_matches('/'))
            && let Some(src) = value(src).or_else(|| Some(src.raw.trim_matches(['"', '\'']).to_string()))
            && let Some(at) = src.find("benchmarks/")
        {
            return src[at..].trim_end_matches(['/', '"', '\'']).to_string();
        }
    }
    // `$GITHUB_WORKSPACE` is the checkout root (empty here): `/benchmarks/…` is the repository's own folder.
    dir.trim_start_matches("./").trim_start_matches('/').trim_end_matches('/').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bash::resolve::EnvValue;

    fn env(pairs: &[(&str, &str)]) -> Env {
        pairs
            .iter()
            .map(|(k, v)| {
                (k.to_string(), EnvValue { value: v.to_string(), at: Location::new("c", 1), source: "entry".into() })
            })
            .collect()
    }

    fn repo<'a>(exists: &'a (dyn Fn(&str) -> bool + Sync)) -> Repo<'a> {
        static NONE: std::sync::LazyLock<std::collections::HashMap<&str, Launcher>> =
            std::sync::LazyLock::new(std::collections::HashMap::new);
        Repo { exists, read: &|_| None, handoffs: &NONE }
    }

    #[test]
    fn naming_convention_falls_back_as_the_launcher_spells_it() {
        let text = "FRAMEWORK_SUFFIX=$([[ \"$FRAMEWORK\" == \"trt\" ]] && printf '_trt' || printf '')\nSPEC_SUFFIX=$([[ \"$SPEC_DECODING\" == \"mtp\" ]] && printf '_mtp' || printf '')\nBASE=\"benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_b200\"\nBENCH_SCRIPT=\"${BASE}_${FRAMEWORK}${SPEC_SUFFIX}.sh\"\nif [[ ! -f \"$BENCH_SCRIPT\" ]]; then\n  BENCH_SCRIPT=\"${BASE}${FRAMEWORK_SUFFIX}${SPEC_SUFFIX}.sh\"\nfi\nbash \"$BENCH_SCRIPT\"\n";
        let script = Script::parse("runners/launch_b200-x.sh", text).unwrap();
        let e = env(&[
            ("FRAMEWORK", "trt"),
            ("SPEC_DECODING", "mtp"),
            ("SCENARIO_SUBDIR", "agentic/"),
            ("EXP_NAME", "qwen3.5_x"),
            ("PRECISION", "fp8"),
        ]);
        let exists = |p: &str| p == "benchmarks/single_node/agentic/qwen3.5_fp8_b200_trt_mtp.sh";
        let facts = Launcher::new(&script).facts(std::slice::from_ref(&script), &[], &e, &repo(&exists));
        assert_eq!(facts.tried, ["benchmarks/single_node/agentic/qwen3.5_fp8_b200_trt_mtp.sh"]);
        assert_eq!(facts.script.as_ref().and_then(|s| s.1.line), Some(4));
        let e = env(&[
            ("FRAMEWORK", "vllm"),
            ("SPEC_DECODING", "mtp"),
            ("SCENARIO_SUBDIR", "agentic/"),
            ("EXP_NAME", "m_x"),
            ("PRECISION", "fp4"),
        ]);
        let exists = |p: &str| p == "benchmarks/single_node/agentic/m_fp4_b200_mtp.sh";
        let facts = Launcher::new(&script).facts(std::slice::from_ref(&script), &[], &e, &repo(&exists));
        assert_eq!(facts.script.map(|s| s.0).as_deref(), Some("benchmarks/single_node/agentic/m_fp4_b200_mtp.sh"));
    }

    #[test]
    fn eval_strips_twins_and_injector_calls() {
        let text = "if [[ \"$EVAL_ONLY\" == \"true\" && -n \"${EVAL_CONFIG_FILE:-}\" ]]; then\n  CONFIG_FILE=\"$EVAL_CONFIG_FILE\"\nfi\nif [[ $FRAMEWORK == \"dynamo-trt\" ]]; then\n  D=\"recipes/trt/x\"\n  cp -rT \"$GITHUB_WORKSPACE/benchmarks/multi_node/srt-slurm-recipes/trt/x\" \"$D\"\n  if [[ \"${EVAL_ONLY:-false}\" == \"true\" ]]; then\n    find \"$D\" -name \"*.yaml\" -exec sed -i '/TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS/d' {} +\n  fi\nfi\ninject_synthetic_acceptance \"$CONFIG_PATH\" \"$FRAMEWORK\" || exit 1\n";
        let script = Script::parse("runners/launch_gb300-x.sh", text).unwrap();
        let trt = Launcher::new(&script).facts(
            std::slice::from_ref(&script),
            &[],
            &env(&[("FRAMEWORK", "dynamo-trt")]),
            &repo(&|_| false),
        );
        assert_eq!(trt.eval_twin.and_then(|l| l.line), Some(2));
        assert_eq!(trt.injector.and_then(|l| l.line), Some(11));
        assert_eq!(
            trt.strips,
            [Strip {
                pattern: "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS".into(),
                dir: "benchmarks/multi_node/srt-slurm-recipes/trt/x".into(),
                at: Location::new("runners/launch_gb300-x.sh", 8)
            }]
        );
        let vllm = Launcher::new(&script).facts(
            std::slice::from_ref(&script),
            &[],
            &env(&[("FRAMEWORK", "dynamo-vllm")]),
            &repo(&|_| false),
        );
        assert!(vllm.strips.is_empty());
    }
}
