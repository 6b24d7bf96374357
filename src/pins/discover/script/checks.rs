//! What a script gets wrong on its own, before any golden value: an incomplete spelling, a knob never
//! exported or a variable holding an AL never passed, and a pin not kept out of eval runs.

use std::collections::BTreeSet;

use super::written::{self, Site};
use crate::bash::resolve::Resolver;
use crate::bash::word::{Part, Word};
use crate::bash::{Cond, Script, Stmt, StmtKind};
use crate::pins::observed::Observed;
use crate::pins::{EvalRoute, Fact, How, Knob, Location, SGLANG_COMPANIONS};

/// SGLang triple incomplete; vLLM length without the synthetic rejection method.
pub(super) fn spelling_problem(script: &Script, stmt: &Stmt, site: &Site, at: &Location) -> Option<Observed> {
    match site.knob {
        Knob::SglangSimulateLen => {
            let missing: Vec<String> = SGLANG_COMPANIONS
                .into_iter()
                .filter(|name| !site.siblings.iter().any(|(n, _)| n == name))
                .filter(|name| {
                    !script.stmts.iter().any(|s| {
                        s.ctx.eval != Some(true)
                            && s.ctx.compatible(&stmt.ctx)
                            && match &s.kind {
                                StmtKind::Assign(a) => a.name == *name,
                                StmtKind::Command(c) => c.env.iter().any(|e| e.name == *name),
                            }
                    })
                })
                .map(str::to_string)
                .collect();
            (!missing.is_empty()).then(|| Observed::SglangCompanionsMissing {
                at: at.clone(),
                missing,
                environment: None,
            })
        }
        Knob::VllmSyntheticLength | Knob::VllmSyntheticRates => {
            let synthetic = site.siblings.iter().any(|(k, v)| k == "rejection_sample_method" && v == "synthetic");
            (!synthetic).then(|| Observed::NotSynthetic { at: at.clone(), knob: site.knob })
        }
        _ => None,
    }
}

/// Every statement that reads `name`.
pub(super) fn readers<'s>(script: &'s Script, name: &str) -> Vec<&'s Stmt> {
    script
        .stmts
        .iter()
        .filter(|s| match &s.kind {
            StmtKind::Assign(a) => a.value.words().iter().any(|w| w.reads(name)),
            StmtKind::Command(c) => c
                .words
                .iter()
                .chain(c.env.iter().flat_map(|e| e.value.words()))
                .chain(c.heredocs.iter())
                .any(|w| w.reads(name)),
        })
        .collect()
}

/// Text that starts an engine's server (or CLI) in a command line.
const ENGINE_STARTS: &[&str] =
    &["sglang.launch_server", "vllm serve", "vllm.entrypoints", "trtllm-serve", "atom.entrypoints", "llama-server"];

/// `docker run|exec|create`, `podman …`, `nerdctl …` (after an optional `sudo`): a container whose
/// environment is only what its command line gives it. (`srun --container-image`, pyxis, passes the
/// caller's environment on: not one.)
fn container_start(words: &[Word]) -> Option<String> {
    let lits: Vec<Option<String>> = words.iter().take(3).map(Word::literal).collect();
    let skip = usize::from(lits.first().and_then(|l| l.as_deref()) == Some("sudo"));
    let tool = lits.get(skip)?.as_deref()?;
    let verb = lits.get(skip + 1)?.as_deref()?;
    (matches!(tool, "docker" | "podman" | "nerdctl") && matches!(verb, "run" | "exec" | "create"))
        .then(|| format!("{tool} {verb}"))
}

/// Whether a container's command line hands a name in.
enum Handed {
    Yes,
    /// Not handed in; `env_files`: what the env files it is given hold instead.
    No {
        env_files: Option<String>,
    },
    /// Given an env file whose names are not read, for the reason given.
    Unknown(String),
}

/// Whether the container command line of statement `at` hands `name` in: `-e NAME`, `-e NAME=…`,
/// `--env[=]NAME…`, `--env-host`, or an `--env-file` the script writes with a `NAME=` line.
fn forwards(script: &Script, at: usize, words: &[Word], name: &str) -> Handed {
    let names_it = |text: &str| {
        let text = text.trim_matches(['"', '\'']);
        text == name || text.strip_prefix(name).is_some_and(|rest| rest.starts_with('='))
    };
    let mut files = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let raw = w.raw.as_str();
        let named = match raw {
            "--env-host" => true,
            "-e" | "--env" => words.get(i + 1).is_some_and(|next| names_it(&next.raw)),
            "--env-file" => {
                files.extend(words.get(i + 1).cloned());
                false
            }
            _ => match raw.strip_prefix("--env-file=") {
                Some(file) => {
                    files.push(crate::bash::word::convert(file, 0, w.line));
                    false
                }
                None => raw.strip_prefix("--env=").or_else(|| raw.strip_prefix("-e=")).is_some_and(names_it),
            },
        };
        if named {
            return Handed::Yes;
        }
    }
    let mut held = Vec::new();
    for file in &files {
        match env_file(script, at, file, name) {
            Ok(None) => return Handed::Yes,
            Ok(Some(holds)) => held.push(holds),
            Err(why) => return Handed::Unknown(why),
        }
    }
    Handed::No { env_files: (!held.is_empty()).then(|| held.join("; ")) }
}

/// Programs that write every exported name (`env > FILE`).
const WHOLE_ENVIRONMENT: &[&str] = &["env", "printenv"];

/// Whether the env file `file` given to the container of statement `at` holds `name`, read from the
/// statements before it that write the file (in arms that can run with it, from the last `>` that surely
/// runs), line by line as `NAME=value`: `Ok(None)` when it does, `Ok(Some(what it holds))` when not,
/// `Err(why)` when the file is not written here or a line's name is not spelled.
fn env_file(script: &Script, at: usize, file: &Word, name: &str) -> Result<Option<String>, String> {
    let container = &script.stmts[at];
    let writers: Vec<usize> = script
        .writers_of(file)
        .into_iter()
        .filter(|&i| script.stmts[i].line < container.line && script.stmts[i].ctx.compatible(&container.ctx))
        .collect();
    if writers.is_empty() {
        return Err(format!("its --env-file {} is not written in {}", file.raw, script.rel));
    }
    // What the file holds when the container starts: a `>` that surely runs first empties it.
    let (mut held, mut every, mut open, mut at_lines) = (BTreeSet::new(), false, None, Vec::new());
    for &i in &writers {
        let stmt = &script.stmts[i];
        let StmtKind::Command(c) = &stmt.kind else { continue };
        if c.stdout.as_ref().and_then(|o| o.empties.as_ref()).is_some_and(|at| at.implied_by(&container.ctx)) {
            (held, every, open) = (BTreeSet::new(), false, None);
            at_lines.clear();
        }
        let at = Location::new(&script.rel, stmt.line);
        let Some(lines) = script.written_lines(i) else {
            at_lines.push(stmt.line.to_string());
            if c.words.len() == 1 && c.name().is_some_and(|n| WHOLE_ENVIRONMENT.contains(&n.as_str())) {
                every = true;
            } else {
                open.get_or_insert(format!(
                    "{at} writes --env-file {} with a command whose output is not read",
                    file.raw
                ));
            }
            continue;
        };
        if !lines.is_empty() {
            at_lines.push(stmt.line.to_string());
        }
        for line in lines {
            let text = line.known.trim_start();
            if line.whole && (text.is_empty() || text.starts_with('#')) {
                continue;
            }
            match text.split_once('=') {
                Some((n, _)) if is_name(n) => {
                    held.insert(n.to_string());
                }
                _ => {
                    open.get_or_insert(format!(
                        "{at} writes a line of --env-file {} whose name is not spelled",
                        file.raw
                    ));
                }
            }
        }
    }
    if every || held.contains(name) {
        return Ok(None);
    }
    if let Some(why) = open {
        return Err(why);
    }
    const SHOWN: usize = 6;
    let mut names: Vec<&str> = held.iter().map(String::as_str).take(SHOWN).collect();
    if held.len() > SHOWN {
        names.push("…");
    }
    Ok(Some(format!(
        "--env-file {} (written at {}:{}) holds {} name{} ({})",
        file.raw,
        script.rel,
        at_lines.join(", "),
        held.len(),
        if held.len() == 1 { "" } else { "s" },
        names.join(", ")
    )))
}

fn is_name(text: &str) -> bool {
    text.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An env knob exported on the host while the engine starts only inside a container whose command line
/// does not hand it in: the engine never sees it. Where an env file the container is given cannot be
/// read, that is open.
fn not_forwarded(script: &Script, stmt: &Stmt, name: &str, at: &Location) -> Option<Observed> {
    // A start is one word (`trtllm-serve`, or `vllm serve` quoted for `bash -c`) or `vllm serve` written out.
    let starts_engine = |c: &crate::bash::Command| {
        c.words.iter().any(|w| ENGINE_STARTS.iter().any(|e| w.raw.contains(e)))
            || c.words.windows(2).any(|pair| written::vllm_serve(&pair[0].raw, &pair[1].raw))
    };
    let mut containers = Vec::new();
    for (i, s) in script.stmts.iter().enumerate().filter(|(_, s)| s.line > stmt.line && s.ctx.compatible(&stmt.ctx)) {
        let StmtKind::Command(c) = &s.kind else { continue };
        match container_start(&c.words) {
            Some(tool) if starts_engine(c) => containers.push((s, tool, forwards(script, i, &c.words, name))),
            Some(_) => {}
            // The engine also starts on the host, where the export reaches it.
            None if starts_engine(c) => return None,
            None => {}
        }
    }
    let place = |s: &Stmt| Location::new(&script.rel, s.line);
    if let Some((s, tool, Handed::No { env_files })) =
        containers.iter().find(|(_, _, h)| matches!(h, Handed::No { .. }))
    {
        return Some(Observed::NotForwarded {
            at: at.clone(),
            name: name.to_string(),
            container: place(s),
            tool: tool.clone(),
            env_file: env_files.clone(),
        });
    }
    let (s, tool, why) = containers.iter().find_map(|(s, tool, h)| match h {
        Handed::Unknown(why) => Some((s, tool, why)),
        _ => None,
    })?;
    Some(Observed::ForwardUnresolved {
        at: at.clone(),
        name: name.to_string(),
        container: place(s),
        tool: tool.clone(),
        why: why.clone(),
    })
}

/// An env knob that is assigned but never exported, or exported but not handed into the container the
/// engine runs in; or a carrier variable never used.
pub(super) fn never_passed(script: &Script, stmt: &Stmt, site: &Site, at: &Location) -> Option<Observed> {
    if let Some(name) = &site.env_name {
        let exported = site.exported
            || script.stmts.iter().any(|s| match &s.kind {
                StmtKind::Command(c) => {
                    let n = c.name();
                    (n.as_deref() == Some("export") && c.words.iter().any(|w| w.literal().as_deref() == Some(name)))
                        || (n.as_deref() == Some("set") && c.words.iter().any(|w| w.literal().as_deref() == Some("-a")))
                }
                StmtKind::Assign(_) => false,
            });
        if !exported {
            return Some(Observed::NotExported { at: at.clone(), name: name.clone() });
        }
        return not_forwarded(script, stmt, name, at);
    }
    let carrier = site.carrier.as_ref()?;
    let used = readers(script, carrier).iter().any(|s| s.line != site.line);
    (!used).then(|| Observed::CarrierUnused { at: at.clone(), carrier: carrier.clone() })
}

/// Variables whose name says they hold an acceptance length, assigned a number, and never used.
pub(super) fn unpassed_variables(script: &Script) -> Vec<Observed> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for stmt in &script.stmts {
        let StmtKind::Assign(a) = &stmt.kind else { continue };
        let upper = a.name.to_ascii_uppercase();
        let pin_like =
            (upper.contains("ACC_LEN") || upper.contains("ACCEPT") || upper.ends_with("_AL") || upper == "AL")
                && !upper.starts_with("SGLANG_SIMULATE")
                && !upper.starts_with("TLLM_");
        let number = a.value.words().first().and_then(Word::literal).is_some_and(|v| v.parse::<f64>().is_ok());
        if !pin_like || !number || !seen.insert(a.name.clone()) {
            continue;
        }
        let used = readers(script, &a.name).iter().any(|s| match &s.kind {
            StmtKind::Command(c) => {
                !matches!(c.name().as_deref(), Some("echo" | "printf"))
                    || c.words.iter().any(|w| w.parts.iter().any(|p| matches!(p, Part::Cmd { .. })))
            }
            StmtKind::Assign(_) => true,
        });
        if !used {
            let at = Location::new(&script.rel, stmt.line);
            out.push(Observed::VariableUnused { at, name: a.name.clone(), value: a.value.words()[0].raw.clone() });
        }
    }
    out
}

/// Whether a site is kept out of eval runs: written only when EVAL_ONLY is not true, or its carrier is
/// dropped for eval, or only read where EVAL_ONLY is not true.
pub(super) fn eval_guard(r: &Resolver, stmt: &Stmt, site: &Site) -> Fact<EvalRoute> {
    let script = r.script;
    let at = Some(Location::new(&script.rel, site.line));
    let guarded = |why: String| Fact::known(EvalRoute::Guarded, How::Branch, why, at.clone());
    if stmt.ctx.eval == Some(false) {
        return guarded("written only when EVAL_ONLY is not true".into());
    }
    // A guard through a variable whose value EVAL_ONLY decides (`SIM=1; [[ $EVAL_ONLY == true ]] && SIM=0`
    // then `if [[ $SIM == 1 ]]`): on eval runs one of the site's conditions fails, off them it may hold.
    let side = |eval| crate::bash::Ctx { eval: Some(eval), ..stmt.ctx.clone() };
    for (cond, holds) in script.conditions(&stmt.ctx) {
        if r.eval_cond(cond, &side(true), stmt.line) == Some(!holds)
            && r.eval_cond(cond, &side(false), stmt.line) != Some(!holds)
        {
            let vars = cond_vars(cond).join(", ");
            return guarded(format!(
                "written only under a condition on {vars} that fails on eval runs (EVAL_ONLY=true decides {vars})"
            ));
        }
    }
    let name = site.env_name.clone().or_else(|| site.carrier.clone());
    if let Some(name) = name {
        if let Some(s) = dropped_for_eval(script, &name) {
            return guarded(format!("{name} is reset at line {} when EVAL_ONLY is true", s.line));
        }
        // A file sourced after the pin runs in the same shell: its own EVAL_ONLY guard counts.
        for inc in script.includes.iter().filter(|i| script.stmts[i.stmt].line > stmt.line) {
            let inc_line = script.stmts[inc.stmt].line;
            match &inc.target {
                Ok(t) => {
                    let Some(other) = r.scripts.get(*t) else { continue };
                    if let Some(s) = dropped_for_eval(other, &name) {
                        return guarded(format!(
                            "{name} is reset at {}:{} when EVAL_ONLY is true (sourced at line {inc_line})",
                            other.rel, s.line
                        ));
                    }
                }
                // Sourced only on eval runs, from a file the check cannot read: it may drop the pin.
                Err(why) if script.stmts[inc.stmt].ctx.eval == Some(true) => {
                    return Fact::unresolved(format!(
                        "{} at line {inc_line} is sourced on EVAL_ONLY runs and cannot be read ({why})",
                        inc.written
                    ));
                }
                Err(_) => {}
            }
        }
        let uses: Vec<&Stmt> = readers(script, &name).into_iter().filter(|s| s.line != site.line).collect();
        if !uses.is_empty() && uses.iter().all(|s| s.ctx.eval == Some(false)) {
            return guarded(format!("{name} is only used when EVAL_ONLY is not true"));
        }
    }
    Fact::known(EvalRoute::Leaks, How::Inferred, format!("{} is not behind an EVAL_ONLY guard", site.knob.name()), at)
}

/// The statement of `script` that resets or unsets `name` when EVAL_ONLY is true.
fn dropped_for_eval<'s>(script: &'s Script, name: &str) -> Option<&'s Stmt> {
    script.stmts.iter().find(|s| {
        s.ctx.eval == Some(true)
            && match &s.kind {
                StmtKind::Assign(a) => a.name == name,
                StmtKind::Command(c) => {
                    c.name().as_deref() == Some("unset") && c.words.iter().any(|w| w.literal().as_deref() == Some(name))
                }
            }
    })
}

/// The variables a condition's tests read.
fn cond_vars(cond: &Cond) -> Vec<String> {
    match cond {
        Cond::And(a, b) | Cond::Or(a, b) => {
            let mut v = cond_vars(a);
            v.extend(cond_vars(b));
            v
        }
        Cond::Not(a) => cond_vars(a),
        Cond::Test(t) => t.args.iter().filter_map(|w| w.sole_variable().map(str::to_string)).collect(),
        Cond::Unknown => Vec::new(),
    }
}
