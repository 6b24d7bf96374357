//! Pin sites in a parsed script, and every fact that decides their golden value.
//!
//! A site is a place a knob is written: an `SGLANG_SIMULATE_ACC_LEN=`/`TLLM_…=` assignment (exported,
//! or as a command prefix, or inside a string later spliced into a command), a
//! `"synthetic_acceptance_length"` key in JSON (quoted, escaped, in a `printf` template, in a heredoc),
//! an ATOM `--spec-decode-acceptance-length`/`-rate` flag (in a command or an argument array). Each
//! value the site can take — one per `if`/`case` arm that assigns it — becomes a pin, paired with the
//! k of the same arm; the other facts are read from the nearest statement compatible with that arm.

use std::collections::BTreeSet;

use super::checks::{eval_guard, never_passed, spelling_problem, unpassed_variables};
use super::written::{FactKind, FactSite, Site, WrittenFacts, conventional, fact_sites, sites_of, streams};
use crate::bash::Script;
use crate::bash::resolve::{Env, LookupTable, MAX_BRANCHES, MAX_DEPTH, Resolver, Val};
use crate::bash::word::{Hole, Part, Value};
use crate::curve::ThinkingMode;
use crate::engine::Engine;
use crate::pins::observed::Observed;
use crate::pins::{Edit, Fact, How, Mechanism, Pin, rates, thinking_word};

/// The draft limit llama.cpp runs with when no `--spec-draft-n-max` (`LLAMA_ARG_SPEC_DRAFT_N_MAX`) is given,
/// as issue 16 states it. Unconfirmed upstream: older builds defaulted `--draft-max` to 16
/// (`common_speculative_params::n_draft`), so the pin's k is inferred (an assumption, a warning) and names this value.
const LLAMACPP_DEFAULT_K: usize = 3;

/// Pins and what was recorded about them, for one environment.
#[derive(Debug, Clone, Default)]
pub(crate) struct Discovery {
    /// Pins, one per site, branch and k.
    pub pins: Vec<Pin>,
    /// What was recorded beside the pins (for the rules).
    pub observed: Vec<Observed>,
    /// Whether the script writes any knob at all.
    pub has_sites: bool,
}

struct Analyzer<'a> {
    r: Resolver<'a>,
    facts: &'a [Vec<FactSite>],
    /// The facts the scripts it sources write.
    written: &'a WrittenFacts,
}

/// What a script writes, read once: the facts and knob sites of every statement (they do not depend on
/// the environment the script runs with).
#[derive(Debug, Clone)]
pub(crate) struct PreparedScript {
    facts: Vec<Vec<FactSite>>,
    sites: Vec<Vec<Site>>,
}

impl PreparedScript {
    /// Reads the facts and sites of `script`.
    pub(crate) fn new(script: &Script) -> PreparedScript {
        let (facts, sites) = script
            .stmts
            .iter()
            .map(|s| {
                let streams = streams(script, s);
                let sites = if s.ctx.eval == Some(true) { Vec::new() } else { sites_of(s, &streams) };
                (fact_sites(s, &streams), sites)
            })
            .unzip();
        PreparedScript { facts, sites }
    }
}

impl PreparedScript {
    /// The line of the script's first speculative-decoding setting (a k), when it writes one; it does not
    /// depend on the environment the script runs with.
    pub(crate) fn spec_line(&self, script: &Script) -> Option<usize> {
        script.stmts.iter().zip(&self.facts).find(|(_, f)| f.iter().any(|f| f.kind == FactKind::K)).map(|(s, _)| s.line)
    }
}

impl Analyzer<'_> {
    /// The values of a fact for a pin at `stmt` in `ctx`: the same statement first, then the nearest
    /// compatible statement (before, then after), then a conventional variable.
    fn fact(&self, kind: FactKind, ctx: &crate::bash::Ctx, stmt_index: usize) -> Vec<Val> {
        let script = self.r.script;
        let line = script.stmts[stmt_index].line;
        let usable = |i: usize| {
            let s = &script.stmts[i];
            s.ctx.func == ctx.func && s.ctx.compatible(ctx)
        };
        let found = |i: usize| -> Vec<&FactSite> { self.facts[i].iter().filter(|f| f.kind == kind).collect() };
        let mut chosen: Vec<(usize, &FactSite)> = found(stmt_index).into_iter().map(|f| (stmt_index, f)).collect();
        if chosen.is_empty() {
            // A conventional variable an enclosing `case` arm binds beats a distant statement.
            for name in conventional(kind) {
                let v = self.r.var(name, ctx, line + 1, 0);
                if v.iter().any(|v| v.how == How::Branch) {
                    return v;
                }
            }
            let before = (0..stmt_index).rev().filter(|&i| usable(i)).find(|&i| !found(i).is_empty());
            let after = || (stmt_index + 1..script.stmts.len()).filter(|&i| usable(i)).find(|&i| !found(i).is_empty());
            if let Some(i) = before.or_else(after) {
                chosen = found(i).into_iter().map(|f| (i, f)).collect();
            }
        }
        let mut out = Vec::new();
        for (i, f) in chosen {
            let s = &script.stmts[i];
            if f.key == "--chat-template" {
                // The file name says the mode; the directory (`$SCRIPT_DIR/../`) does not matter.
                let raw = match &f.value {
                    Value::Lit { text, .. } => text.clone(),
                    Value::Hole(Hole::Word(w)) => w.raw.clone(),
                    Value::Hole(Hole::Part(Part::Lit { text, .. })) => text.clone(),
                    Value::Hole(_) => String::new(),
                };
                if let Some(mode) = crate::pins::discover::recipe::template_mode(raw.trim_matches(['"', '\''])) {
                    out.push(Val {
                        value: Some(mode.name().to_string()),
                        how: How::Literal,
                        ctx: ctx.merge(&s.ctx),
                        at: self.r.loc(s.line),
                        deps: BTreeSet::new(),
                        text: format!("--chat-template {raw}"),
                        span: None,
                    });
                    break;
                }
                continue;
            }
            for mut v in self.r.value(&f.value, &ctx.merge(&s.ctx), s.line) {
                if kind == FactKind::Thinking {
                    v = thinking_val(v, f.key);
                }
                out.push(v);
            }
            if out.iter().any(|v| v.value.is_some()) {
                break;
            }
        }
        if out.iter().any(|v| v.value.is_some()) {
            return out;
        }
        for (stmt, file) in self.r.includes_before(ctx, line) {
            let found = self.included_fact(kind, file, &ctx.merge(&stmt.ctx), 0);
            if found.iter().any(|v| v.value.is_some()) {
                return found;
            }
        }
        for name in conventional(kind) {
            let v = self.r.var(name, ctx, line + 1, 0);
            if v.iter().any(|v| v.value.is_some()) {
                return v;
            }
        }
        out
    }
}

impl Analyzer<'_> {
    /// A fact a sourced file writes: its last statement that writes one (bash has read the whole file
    /// when the `source` statement returns), else a file it sources. It holds where the `source` runs.
    fn included_fact(&self, kind: FactKind, index: usize, at: &crate::bash::Ctx, depth: usize) -> Vec<Val> {
        let file = &self.r.scripts[index];
        let inner = self.r.on(file);
        // Function bodies do not run when the file is read.
        let top_level = file.stmts.iter().zip(self.written.of(index, file)).filter(|(s, _)| s.ctx.func.is_none());
        for (s, facts) in top_level.rev() {
            for f in facts.iter().filter(|f| f.kind == kind) {
                let values: Vec<Val> = inner
                    .value(&f.value, &s.ctx, s.line)
                    .into_iter()
                    .map(|v| {
                        let mut v = if kind == FactKind::Thinking { thinking_val(v, f.key) } else { v };
                        v.ctx = at.clone();
                        v
                    })
                    .collect();
                if values.iter().any(|v| v.value.is_some()) {
                    return values;
                }
            }
        }
        if depth >= MAX_DEPTH {
            return Vec::new();
        }
        file.includes
            .iter()
            .rev()
            .filter_map(|inc| inc.target.as_ref().ok())
            .map(|&t| self.included_fact(kind, t, at, depth + 1))
            .find(|found| found.iter().any(|v| v.value.is_some()))
            .unwrap_or_default()
    }
}

/// Reads a thinking setting's value as on/off (`enabled`, `1`, a chat template named `…thinking…`).
fn thinking_val(mut v: Val, key: &str) -> Val {
    let Some(text) = v.value.clone() else { return v };
    let mode = if key == "--chat-template" {
        let name = text.rsplit('/').next().unwrap_or(&text).to_ascii_lowercase();
        if name.contains("no_thinking") || name.contains("nothink") || name.contains("non_thinking") {
            Some(ThinkingMode::Off)
        } else if name.contains("thinking") {
            Some(ThinkingMode::On)
        } else {
            None
        }
    } else {
        thinking_word(&text)
    };
    v.text = format!("{key} {text}");
    v.value = mode.map(|m| m.name().to_string());
    if v.value.is_none() {
        v.how = How::Unresolved;
    }
    v
}

fn to_fact<T>(v: &Val, parse: impl Fn(&str) -> Option<T>) -> Fact<T> {
    match v.value.as_deref().map(|s| (s, parse(s))) {
        Some((_, Some(value))) => Fact::known(value, v.how, v.text.clone(), Some(v.at.clone())),
        Some((s, None)) => Fact {
            value: None,
            how: How::Unresolved,
            text: format!("{} = '{s}' is not understood", v.text),
            at: Some(v.at.clone()),
        },
        None => Fact {
            value: None,
            how: if v.how == How::Table { How::Table } else { How::Unresolved },
            text: v.text.clone(),
            at: Some(v.at.clone()),
        },
    }
}

fn branch_label(script: &Script, ctx: &crate::bash::Ctx) -> String {
    let mut parts = Vec::new();
    for &(choice, arm) in &ctx.arms {
        let c = &script.choices[choice as usize];
        let a = &c.arms[arm as usize];
        let label = match &c.kind {
            crate::bash::ConditionalKind::Case { subject } => {
                let patterns: Vec<String> = a.patterns.iter().map(|p| p.raw.clone()).collect();
                format!("{}={}", subject.raw.trim_matches('"'), patterns.join("|"))
            }
            crate::bash::ConditionalKind::If => match &a.cond {
                Some(_) if arm == 0 => format!("if@{}", script_line_of_choice(script, choice)),
                Some(_) => format!("elif#{arm}@{}", script_line_of_choice(script, choice)),
                None => format!("else@{}", script_line_of_choice(script, choice)),
            },
        };
        parts.push(label);
    }
    parts.join(", ")
}

fn script_line_of_choice(script: &Script, choice: u32) -> usize {
    script.stmts.iter().find(|s| s.ctx.arms.iter().any(|a| a.0 == choice)).map_or(0, |s| s.line.saturating_sub(1))
}

/// Every pin in `script` run with `env`, and what was recorded beside them.
pub(crate) fn discover(
    script: &Script,
    prepared: &PreparedScript,
    (scripts, written): (&[Script], &WrittenFacts),
    tables: &[LookupTable],
    env: &Env,
) -> Discovery {
    let r = Resolver { script, scripts, tables, env };
    let a = Analyzer { r: r.on(script), facts: &prepared.facts, written };
    let mut out = Discovery::default();
    // Statements that run only for EVAL_ONLY are the real-verification path: they hold no site.
    for (index, sites) in prepared.sites.iter().enumerate() {
        for site in sites {
            out.has_sites = true;
            pins_of_site(&a, index, site, &mut out);
        }
    }
    out.observed.extend(unpassed_variables(script));
    if out.has_sites {
        for include in &script.includes {
            if let Err(why) = &include.target {
                out.observed.push(Observed::IncludeUnresolved {
                    at: r.loc(script.stmts[include.stmt].line),
                    written: include.written.clone(),
                    why: why.clone(),
                });
            }
        }
    }
    out
}

fn pins_of_site(a: &Analyzer, index: usize, site: &Site, out: &mut Discovery) {
    let script = a.r.script;
    let stmt = &script.stmts[index];
    let location = a.r.loc(site.line);
    out.observed.extend(spelling_problem(script, stmt, site, &location));
    out.observed.extend(never_passed(script, stmt, site, &location));
    let guard = eval_guard(&a.r, stmt, site);
    let mut count = 0;
    for value in a.r.value(&site.value, &stmt.ctx, site.line) {
        if value.value.as_deref() == Some("") {
            // The arm that leaves the value empty sets no pin (`[[ -n "$AL" ]]` guards the use).
            continue;
        }
        let mut ks = a.fact(FactKind::K, &value.ctx, index);
        if ks.is_empty() && site.knob.engine() == Some(Engine::Llamacpp) {
            // llama.cpp runs its default draft limit when none is written: the pin is still checked.
            ks.push(Val {
                value: None,
                how: How::Unresolved,
                ctx: value.ctx.clone(),
                at: location.clone(),
                deps: BTreeSet::new(),
                text: "no --spec-draft-n-max".into(),
                span: None,
            });
        }
        for k in ks {
            if count >= MAX_BRANCHES {
                return;
            }
            if !k.ctx.compatible(&value.ctx) {
                continue;
            }
            count += 1;
            let ctx = k.ctx.merge(&value.ctx);
            let first = |kind| a.fact(kind, &ctx, index).into_iter().find(|v| v.ctx.compatible(&ctx));
            let string_fact = |kind| {
                first(kind)
                    .map(|v| to_fact(&v, |s| Some(s.to_string())))
                    .unwrap_or_else(|| Fact::unresolved("not written in this script"))
            };
            let read = value.value.as_deref().and_then(|s| rates::read_written(site.knob, s));
            let mut written = to_fact(&value, |_| read.as_ref().map(|r| r.0));
            if written.value.is_none() && written.how == How::Table {
                out.observed.push(Observed::TableValueMissing {
                    at: location.clone(),
                    value: value.text.clone(),
                    table: value.at.to_string(),
                });
                written.how = How::Unresolved;
            }
            let mut k_fact = to_fact(&k, |s| s.trim().parse::<usize>().ok());
            let engine_default = k_fact.value.is_none() && site.knob.engine() == Some(Engine::Llamacpp);
            if engine_default {
                k_fact = Fact::known(
                    LLAMACPP_DEFAULT_K,
                    How::Inferred,
                    format!("llama.cpp's default --spec-draft-n-max {LLAMACPP_DEFAULT_K} (none written)"),
                    None,
                );
            }
            if k_fact.value == Some(0) {
                // This arm runs no speculative decoding: the pin is never reached there.
                continue;
            }
            if k_fact.how == How::Default
                && !engine_default
                && !k.deps.iter().any(|d| value.deps.contains(d))
                && written.value.is_some()
            {
                out.observed.push(Observed::KOverride {
                    at: location.clone(),
                    k_from: k.text.clone(),
                    knob: site.knob,
                    value: value.text.clone(),
                    k: k.value.as_deref().unwrap_or("?").to_string(),
                });
            }
            let mode = first(FactKind::Thinking)
                .map(|v| to_fact(&v, |s| s.parse::<ThinkingMode>().ok()))
                .filter(|f| f.value.is_some())
                .unwrap_or_else(|| Fact::unresolved("no thinking setting in this script"));
            let sampling = sampling_fact(first(FactKind::Sampling));
            let model = model_fact(a, &ctx, index);
            let mechanism = mechanism(script, &ctx, &value);
            let edit =
                value.span.filter(|_| value.value.is_some()).map(|span| Edit { file: value.at.file.clone(), span });
            out.pins.push(Pin {
                location: location.clone(),
                mechanism,
                engine: Fact::known(
                    site.knob.engine().unwrap_or(Engine::Vllm),
                    How::Literal,
                    site.knob.name(),
                    Some(location.clone()),
                ),
                knob: site.knob,
                branch: branch_label(script, &ctx),
                role: None,
                written,
                rates: read.and_then(|r| r.1),
                k: k_fact,
                model,
                drafter: string_fact(FactKind::Drafter),
                method: string_fact(FactKind::Method),
                draft_sampling: sampling,
                mode,
                effort: string_fact(FactKind::Effort),
                eval: guard.clone(),
                entries: Vec::new(),
                edit,
                notes: Vec::new(),
                arms: ctx.arms.clone(),
            });
        }
    }
}

/// The draft sampling written, else greedy, assumed: engines draft greedily unless told otherwise.
fn sampling_fact(written: Option<Val>) -> Fact<String> {
    written.map(|v| to_fact(&v, |s| Some(s.to_ascii_lowercase()))).filter(|f| f.value.is_some()).unwrap_or_else(|| {
        Fact::known("greedy".to_string(), How::Inferred, "no draft_sample_method: engines draft greedily", None)
    })
}

/// A value read from a lookup table, or fixed by the arm of a `case` it sits in, is a table's; else the
/// script's.
fn mechanism(script: &Script, ctx: &crate::bash::Ctx, value: &Val) -> Mechanism {
    let case_arm = script.choices.iter().enumerate().any(|(i, c)| {
        matches!(c.kind, crate::bash::ConditionalKind::Case { .. })
            && ctx.arms.iter().any(|x| x.0 == i as u32)
            && value.how == How::Branch
    });
    if value.how == How::Table || case_arm { Mechanism::LookupTable } else { Mechanism::Script }
}

/// The model: `--served-model-name`, else `--model`/`serve` (not a container mount), else the entry's
/// `MODEL`, else the glob a `case` arm puts on it.
fn model_fact(a: &Analyzer, ctx: &crate::bash::Ctx, index: usize) -> Fact<String> {
    let mut fallback = None;
    for v in a.fact(FactKind::Model, ctx, index) {
        match v.value.as_deref() {
            Some(m) if !m.starts_with('/') && !m.is_empty() => return to_fact(&v, |s| Some(s.to_string())),
            _ => fallback = fallback.or(Some(v)),
        }
    }
    let line = a.r.script.stmts[index].line;
    if let Some(v) = a.r.var("MODEL", ctx, line, 0).into_iter().find(|v| v.how == How::Entry) {
        return to_fact(&v, |s| Some(s.to_string()));
    }
    for name in ["MODEL_NAME", "MODEL"] {
        if let Some(glob) = a.r.case_pattern(name, ctx) {
            return Fact::known(glob.clone(), How::Branch, format!("case arm {glob}"), Some(a.r.loc(line)));
        }
    }
    fallback
        .map(|v| to_fact(&v, |s| (!s.starts_with('/')).then(|| s.to_string())))
        .unwrap_or_else(|| Fact::unresolved("no model in this script or its config entry"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bash::resolve::tables;
    use crate::pins::{EvalRoute, Knob};

    fn pins_of(text: &str) -> Discovery {
        let script = Script::parse("agentic/x.sh", text).unwrap();
        let scripts = std::slice::from_ref(&script);
        let tables = tables(scripts);
        discover(&script, &PreparedScript::new(&script), (scripts, &WrittenFacts::new(1)), &tables, &Env::new())
    }

    #[test]
    fn case_branches_give_one_pin_each_and_bind_their_subject() {
        let d = pins_of(
            "K=${NUM_SPEC_TOKENS:-3}\ncase \"$K\" in\n  2) AL=2.38 ;;\n  3) AL=2.83 ;;\nesac\n\
             if [ \"$EVAL_ONLY\" != \"true\" ]; then\n  ARGS=\"--spec-decode-acceptance-length $AL\"\nfi\n\
             atom serve --num-speculative-tokens \"$K\" $ARGS\n",
        );
        let mut got: Vec<(Option<f64>, Option<usize>, How)> =
            d.pins.iter().map(|p| (p.written.value, p.k.value, p.k.how)).collect();
        got.sort_by_key(|g| g.1);
        assert_eq!(got, [(Some(2.38), Some(2), How::Branch), (Some(2.83), Some(3), How::Branch)]);
        assert!(d.pins.iter().all(|p| p.eval.value == Some(EvalRoute::Guarded)));
    }

    #[test]
    fn awk_rates_defaults_and_escaped_json() {
        let d = pins_of(
            "AL=2.99\nK=3\nR=$(awk \"BEGIN{print ($AL-1)/$K}\")\n[ \"$EVAL_ONLY\" = \"true\" ] || FLAGS=\"--spec-decode-acceptance-rate $R\"\nrun $FLAGS\n\
             CFG=\"{\\\"num_speculative_tokens\\\": ${K}, \\\"synthetic_acceptance_length\\\": ${SAL:-2.5}}\"\n",
        );
        let rate = d.pins.iter().find(|p| p.knob == Knob::AtomRate).unwrap();
        assert_eq!((rate.written.value, rate.written.how), (Some(0.663333), How::Computed));
        assert_eq!(rate.eval.value, Some(EvalRoute::Guarded));
        let vllm = d.pins.iter().find(|p| p.knob == Knob::VllmSyntheticLength).unwrap();
        assert_eq!((vllm.written.value, vllm.written.how, vllm.k.value), (Some(2.5), How::Default, Some(3)));
        // The vLLM pin has no synthetic rejection method, and CFG, which holds it, reaches no command.
        assert!(d.observed.iter().any(|o| matches!(o, Observed::NotSynthetic { .. })), "{:?}", d.observed);
        let unused = |o: &Observed| matches!(o, Observed::CarrierUnused { carrier, .. } if carrier == "CFG");
        assert!(d.observed.iter().any(unused), "{:?}", d.observed);
        assert_eq!(vllm.eval.value, Some(EvalRoute::Leaks));
    }

    #[test]
    fn printf_templates_bind_their_arguments() {
        let d = pins_of(
            "K=3\nAL=2.78\nif [ \"${EVAL_ONLY:-}\" = \"true\" ]; then\n  C=$(printf '{\"num_speculative_tokens\":%d}' \"$K\")\nelse\n  C=$(printf \\\n    '{\"model\":\"%s\",\"num_speculative_tokens\":%d,\"rejection_sample_method\":\"synthetic\",\"synthetic_acceptance_length\":%.2f}' \\\n    \"$D\" \"$K\" \"$AL\")\nfi\nvllm serve m --speculative-config \"$C\"\n",
        );
        let [pin] = d.pins.as_slice() else { panic!("{:?}", d.pins) };
        assert_eq!((pin.written.value, pin.k.value), (Some(2.78), Some(3)));
        assert_eq!(pin.eval.value, Some(EvalRoute::Guarded));
        assert_eq!(pin.location.line, Some(6));
        assert!(d.observed.is_empty(), "{:?}", d.observed);
    }

    fn spelled(engine: usize, al: &str) -> String {
        match engine {
            0 => format!(
                "  SPEC=\"{{\\\"num_speculative_tokens\\\": $K, \\\"rejection_sample_method\\\": \\\"synthetic\\\", \\\"synthetic_acceptance_length\\\": {al}}}\"\nfi\nvllm serve m --speculative-config \"$SPEC\"\n"
            ),
            1 => format!(
                "  export SGLANG_SIMULATE_ACC_LEN={al}\n  export SGLANG_SIMULATE_ACC_METHOD=match-expected\n  export SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token\nfi\npython3 -m sglang.launch_server --speculative-num-steps \"$K\"\n"
            ),
            _ => format!(
                "  ARGS=\"--spec-decode-acceptance-length {al}\"\nfi\natom --num-speculative-tokens \"$K\" $ARGS\n"
            ),
        }
    }

    proptest::proptest! {
        /// Whatever arm values and spelling a script uses, each arm reads back as one guarded pin with
        /// its own k and AL, and nothing else is found.
        #[test]
        fn generated_arms_read_back(k1 in 1usize..=7, k2 in 1usize..=7, h1 in 0u32..=700, h2 in 0u32..=700, engine in 0usize..3, braced: bool) {
            let al = |k: usize, h: u32| format!("{:.2}", 1.0 + f64::from(h.min(k as u32 * 100)) / 100.0);
            let (a1, a2) = (al(k1, h1), al(k2, h2));
            let var = if braced { "${AL}" } else { "$AL" };
            let text = format!(
                "case \"$CONC\" in\n  1|2) K={k1}; AL={a1} ;;\n  *) K={k2}; AL={a2} ;;\nesac\nif [ \"${{EVAL_ONLY:-false}}\" != \"true\" ]; then\n{}",
                spelled(engine, var)
            );
            let d = pins_of(&text);
            let mut got: Vec<(Option<usize>, Option<f64>)> = d.pins.iter().map(|p| (p.k.value, p.written.value)).collect();
            got.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let mut want = vec![(Some(k1), a1.parse().ok()), (Some(k2), a2.parse().ok())];
            want.sort_by(|a, b| a.partial_cmp(b).unwrap());
            proptest::prop_assert_eq!(got, want, "{}", text);
            proptest::prop_assert!(d.pins.iter().all(|p| p.eval.value == Some(EvalRoute::Guarded)));
            proptest::prop_assert!(d.observed.is_empty(), "{:?}", d.observed);
        }
    }
}
