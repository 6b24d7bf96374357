//! Reading a value the way bash would, without running anything.
//!
//! A word's value follows its pieces: literals; `$VAR` through the latest assignment compatible with
//! the reader's context (one value per arm of an `if`/`case` that assigns it); `${VAR:-default}`, where
//! the default is marked overridable; `case` arms that bind their subject (`case "${MODEL_NAME}:${K}"` in
//! arm `*DeepSeek-V4*:3)` binds `K` to `3`); `$(awk "BEGIN{print …}")`, `$((…))` and `printf` evaluated
//! after their variables; `$([[ … ]] && printf A || printf B)`; a call to a lookup-table function of
//! shared launch code. Variables the script never assigns come from the environment a config entry
//! gives it ([`Env`]), or stay unresolved, saying which variable is missing.

use std::collections::{BTreeMap, BTreeSet};

use super::text::{arithmetic, bind_pattern, format_g6, printf_format, strip};
use super::word::{Hole, Part, Span, Value, VarOp, Word, glob};
use super::{Cond, ConditionalKind, Ctx, How, Script, StmtKind, SubItem, Test, TestOp};
use crate::diagnostic::Location;

/// How deep variable resolution follows references before giving up (cycles, long chains).
pub(crate) const MAX_DEPTH: usize = 12;
/// At most this many values per word; more is a script to read by eye.
pub(crate) const MAX_BRANCHES: usize = 64;

/// A variable a config entry (or a table call) gives the script.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EnvValue {
    /// The value.
    pub value: String,
    /// Where it is written.
    pub at: Location,
    /// How it came (`MODEL from entry dsv4-fp4-b200-vllm-mtp`).
    pub source: String,
}

/// The environment a script runs with.
pub(crate) type Env = BTreeMap<String, EnvValue>;

/// One way a value can come out, with the arms it needs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Val {
    /// The value, `None` when unresolved.
    pub value: Option<String>,
    /// How it was decided.
    pub how: How,
    /// The arms (and EVAL_ONLY side) it holds in.
    pub ctx: Ctx,
    /// Where the deciding text is.
    pub at: Location,
    /// Variables consulted.
    pub deps: BTreeSet<String>,
    /// The text it was read from, or why it is unresolved.
    pub text: String,
    /// The literal that decides it, when the value is that literal as written (for `pins fix`).
    pub span: Option<Span>,
}

/// A lookup-table function of shared launch code: a function that echoes a number chosen by `case`.
#[derive(Debug, Clone)]
pub(crate) struct LookupTable {
    /// The function name.
    pub name: String,
    /// The script it is defined in (index into the scripts given to the resolver).
    pub script: usize,
    /// The function's id in that script.
    pub func: u32,
    /// Where it is defined.
    pub location: Location,
    /// How many values it can echo.
    pub entries: usize,
}

/// The lookup tables defined in `scripts`: functions with a `case` whose arms `echo` a number.
pub(crate) fn tables(scripts: &[Script]) -> Vec<LookupTable> {
    let mut out = Vec::new();
    for (index, script) in scripts.iter().enumerate() {
        for (func, name) in script.functions.iter().enumerate() {
            let echoes: Vec<usize> = script
                .stmts
                .iter()
                .filter(|s| s.ctx.func == Some(func as u32) && !s.ctx.arms.is_empty())
                .filter_map(|s| match &s.kind {
                    StmtKind::Command(c) if c.name().as_deref() == Some("echo") => {
                        let value = c.words.get(1).and_then(Word::literal)?;
                        value.parse::<f64>().is_ok().then_some(s.line)
                    }
                    _ => None,
                })
                .collect();
            if let Some(first) = echoes.first() {
                out.push(LookupTable {
                    name: name.clone(),
                    script: index,
                    func: func as u32,
                    location: Location::new(&script.rel, *first),
                    entries: echoes.len(),
                });
            }
        }
    }
    out
}

/// Reads values in one script.
pub(crate) struct Resolver<'a> {
    /// The script.
    pub script: &'a Script,
    /// Every parsed script (tables live in shared code).
    pub scripts: &'a [Script],
    /// Lookup tables across `scripts`.
    pub tables: &'a [LookupTable],
    /// The environment (from a config entry, or a table call's arguments).
    pub env: &'a Env,
}

impl Resolver<'_> {
    /// A location in this script.
    pub(crate) fn loc(&self, line: usize) -> Location {
        Location::new(&self.script.rel, line)
    }

    fn unresolved(&self, text: impl Into<String>, ctx: &Ctx, line: usize) -> Val {
        Val {
            value: None,
            how: How::Unresolved,
            ctx: ctx.clone(),
            at: self.loc(line),
            deps: BTreeSet::new(),
            text: text.into(),
            span: None,
        }
    }

    fn literal(&self, text: &str, span: Option<Span>, ctx: &Ctx, line: usize) -> Val {
        Val {
            value: Some(text.to_string()),
            how: How::Literal,
            ctx: ctx.clone(),
            // A literal inside a multi-line word (a heredoc, a JSON string) is reported at its own line.
            at: self.loc(span.map_or(line, |(start, _)| self.script.line_of(start))),
            deps: BTreeSet::new(),
            text: text.to_string(),
            span,
        }
    }

    /// The values of a template value (a literal read out of JSON or flags, or an expansion).
    pub(crate) fn value(&self, value: &Value, ctx: &Ctx, line: usize) -> Vec<Val> {
        match value {
            Value::Lit { text, span } => vec![self.literal(text, *span, ctx, line)],
            Value::Hole(Hole::Part(part)) => self.part(part, ctx, line, 0),
            Value::Hole(Hole::Word(word)) => self.word(word, ctx, line, 0),
            Value::Hole(Hole::Printf { arg: Some(arg), spec }) => self
                .word(arg, ctx, line, 0)
                .into_iter()
                .map(|mut v| {
                    if let Some(text) = &v.value {
                        match printf_format(text, spec) {
                            Some(formatted) if &formatted != text => {
                                v.text = format!("printf {spec} of {}", v.text);
                                v.value = Some(formatted);
                                v.how = How::Computed;
                                v.span = None;
                            }
                            Some(_) => {}
                            None => {
                                v.text = format!("printf {spec} cannot format '{text}'");
                                v.value = None;
                                v.how = How::Unresolved;
                            }
                        }
                    }
                    v
                })
                .collect(),
            Value::Hole(Hole::Printf { arg: None, spec }) => {
                vec![self.unresolved(format!("printf {spec} has no argument"), ctx, line)]
            }
        }
    }

    /// The values a word can have at `line` under `ctx`.
    pub(crate) fn word(&self, word: &Word, ctx: &Ctx, line: usize, depth: usize) -> Vec<Val> {
        match word.parts.as_slice() {
            [] => vec![self.literal("", None, ctx, line)],
            [part] => self.part(part, ctx, line, depth),
            parts => {
                let mut acc = vec![Val { text: word.raw.clone(), ..self.literal("", None, ctx, line) }];
                let mut how = How::Literal;
                for part in parts {
                    // One value so far: the part is read in its arms. Several (`"x/${DIR}/${NAME}"`, DIR set
                    // per arm): in the word's own context, joined below where the arms agree; read in the first
                    // value's arms only, it would drop every other arm's values.
                    let read_in = if let [one] = acc.as_slice() { one.ctx.clone() } else { ctx.clone() };
                    let values = self.part(part, &read_in, line, depth);
                    if let Some(bad) = values.iter().find(|v| v.value.is_none()) {
                        let mut bad = bad.clone();
                        bad.text = format!("{} ({})", word.raw, bad.text);
                        return vec![bad];
                    }
                    if !matches!(part, Part::Lit { .. }) {
                        how = How::Variable;
                    }
                    let mut next = Vec::new();
                    for a in &acc {
                        for v in values.iter().filter(|v| v.ctx.compatible(&a.ctx)) {
                            if next.len() >= MAX_BRANCHES {
                                break;
                            }
                            let mut joined = a.clone();
                            joined.value = Some(format!(
                                "{}{}",
                                a.value.as_deref().unwrap_or(""),
                                v.value.as_deref().unwrap_or("")
                            ));
                            joined.ctx = a.ctx.merge(&v.ctx);
                            joined.deps.extend(v.deps.iter().cloned());
                            if v.how == How::Entry || v.how == How::Default {
                                how = v.how;
                                joined.at = v.at.clone();
                            }
                            next.push(joined);
                        }
                    }
                    acc = next;
                    if acc.is_empty() {
                        return vec![self.unresolved(format!("{} (no consistent value)", word.raw), ctx, line)];
                    }
                }
                for v in &mut acc {
                    v.how = how;
                }
                acc
            }
        }
    }

    fn part(&self, part: &Part, ctx: &Ctx, line: usize, depth: usize) -> Vec<Val> {
        if depth > MAX_DEPTH {
            return vec![self.unresolved("too many indirections", ctx, line)];
        }
        match part {
            Part::Lit { text, span } => vec![self.literal(text, *span, ctx, line)],
            Part::Var { name, op: VarOp::Plain } => self.var(name, ctx, line, depth),
            Part::Var { name, op: VarOp::Default(default) } => {
                let found = self.var(name, ctx, line, depth);
                if found.iter().any(|v| v.value.as_deref().is_some_and(|s| !s.is_empty())) {
                    return found;
                }
                self.word(default, ctx, line, depth + 1)
                    .into_iter()
                    .map(|mut v| {
                        if matches!(v.how, How::Literal | How::Variable) {
                            v.how = How::Default;
                        }
                        v.deps.insert(name.clone());
                        v.text = format!("${{{name}:-{}}}", default.raw);
                        v
                    })
                    .collect()
            }
            Part::Var { name, op: VarOp::Strip { suffix, largest, pattern } } => self
                .var(name, ctx, line, depth)
                .into_iter()
                .map(|mut v| {
                    if let Some(text) = &v.value {
                        v.value = Some(strip(text, pattern, *suffix, *largest));
                        v.span = None;
                    }
                    v
                })
                .collect(),
            Part::Cmd { start, .. } => self.command(*start, ctx, line, depth),
            Part::Arith(expr) => self.compute(expr, ctx, line, depth, false),
            Part::Other(text) => vec![self.unresolved(format!("{text} is not followed"), ctx, line)],
        }
    }

    /// The values of `name` readable at `line` under `ctx`: one per arm that assigns it.
    pub(crate) fn var(&self, name: &str, ctx: &Ctx, line: usize, depth: usize) -> Vec<Val> {
        if let Some(bound) = self.case_binding(name, ctx, line) {
            return vec![bound];
        }
        let in_function = ctx.func.is_some();
        let mut out = Vec::new();
        let mut covered: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
        // A file sourced before the read sets the variable where the `source` statement is: an assignment
        // after that statement wins over it, one before it is overwritten.
        let included = self.included(name, ctx, line, depth);
        let source_line = included.as_ref().map(|(l, _)| *l);
        let candidates = self
            .script
            .assignments_of(name)
            .iter()
            .rev()
            .map(|&i| &self.script.stmts[i])
            .filter(|s| (s.line < line || (in_function && s.ctx.func == ctx.func)) && s.ctx.compatible(ctx))
            .filter(|s| source_line.is_none_or(|l| s.line > l));
        for stmt in candidates {
            let StmtKind::Assign(a) = &stmt.kind else { continue };
            if a.append {
                continue;
            }
            if out.len() >= MAX_BRANCHES {
                break;
            }
            let merged = ctx.merge(&stmt.ctx);
            let values = match &a.value {
                super::AssignValue::Scalar(w) => self.word(w, &merged, stmt.line, depth + 1),
                super::AssignValue::Array(_) => {
                    vec![self.unresolved(format!("${name} is an array"), &merged, stmt.line)]
                }
            };
            for mut v in values {
                if v.how == How::Literal {
                    v.how = How::Variable;
                }
                v.at = self.loc(stmt.line);
                v.deps.insert(name.to_string());
                v.text = if v.value.is_some() { format!("{name}={}", a.value.words()[0].raw) } else { v.text };
                out.push(v);
            }
            if stmt.ctx.implied_by(ctx) {
                return out;
            }
            // One more arm beyond the reader's: once every arm of that choice assigns, earlier ones are shadowed.
            let extra: Vec<(u32, u32)> = stmt.ctx.arms.iter().filter(|a| !ctx.arms.contains(a)).copied().collect();
            if let [(choice, arm)] = extra.as_slice() {
                let set = covered.entry(*choice).or_default();
                set.insert(*arm);
                let arms = &self.script.choices[*choice as usize].arms;
                let all = match &self.script.choices[*choice as usize].kind {
                    // An arm that runs only on the other side of EVAL_ONLY than the reader never runs here.
                    ConditionalKind::If => {
                        (0..arms.len()).all(|i| set.contains(&(i as u32)) || arm_excluded_by_eval(arms, i, ctx.eval))
                    }
                    // Every arm assigns and one catches all: no path through the case keeps the earlier value.
                    ConditionalKind::Case { .. } => {
                        set.len() == arms.len()
                            && arms.iter().any(|a| a.patterns.iter().any(|p| p.literal().as_deref() == Some("*")))
                    }
                };
                if all {
                    return out;
                }
            }
        }
        let sourcing = || if out.is_empty() { self.in_sourcing_scripts(name, ctx, depth) } else { Vec::new() };
        if let Some((_, values)) = included {
            out.extend(values);
        } else if let values @ [_, ..] = sourcing().as_slice() {
            out.extend(values.iter().cloned());
        } else if let Some(env) = self.env.get(name) {
            let mut v = self.literal(&env.value, None, ctx, line);
            v.how = How::Entry;
            v.at = env.at.clone();
            v.text = env.source.clone();
            v.deps.insert(name.to_string());
            out.push(v);
        } else if out.is_empty() {
            let mut v = self.unresolved(format!("${name} is not set in {}", self.script.rel), ctx, line);
            v.deps.insert(name.to_string());
            out.push(v);
        }
        out
    }

    /// This resolver on another parsed script (a sourced file), with the same environment.
    pub(crate) fn on<'s>(&'s self, script: &'s Script) -> Resolver<'s> {
        Resolver { script, scripts: self.scripts, tables: self.tables, env: self.env }
    }

    /// The `source` statements before `line` that can run with `ctx`, latest first, with the index of the
    /// file each reads in [`Resolver::scripts`].
    pub(crate) fn includes_before<'s>(
        &'s self,
        ctx: &'s Ctx,
        line: usize,
    ) -> impl Iterator<Item = (&'s super::Stmt, usize)> {
        self.script.includes.iter().rev().filter_map(move |inc| {
            let stmt = &self.script.stmts[inc.stmt];
            let target = *inc.target.as_ref().ok()?;
            (stmt.line < line && stmt.ctx.compatible(ctx)).then_some((stmt, target))
        })
    }

    /// The values `name` has after the latest file sourced before `line` that sets it (the file read to
    /// its end, or the files it sources), with the line of the `source` statement.
    fn included(&self, name: &str, ctx: &Ctx, line: usize, depth: usize) -> Option<(usize, Vec<Val>)> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.includes_before(ctx, line).find_map(|(stmt, target)| {
            let file = &self.scripts[target];
            let inner = self.on(file);
            if !inner.sets(name, depth + 1) {
                return None;
            }
            // The file's own arms are not this script's: a value holds where the `source` statement runs.
            let merged = ctx.merge(&stmt.ctx);
            let values = inner
                .var(name, &Ctx::default(), file.line_starts.len() + 1, depth + 1)
                .into_iter()
                .map(|mut v| {
                    v.ctx = merged.clone();
                    v
                })
                .collect();
            Some((stmt.line, values))
        })
    }

    /// For a file that others `source`: the values `name` has in each sourcing script where its `source`
    /// statement runs (bash reads the file with the sourcing script's variables), where that script sets it.
    fn in_sourcing_scripts(&self, name: &str, ctx: &Ctx, depth: usize) -> Vec<Val> {
        if depth > MAX_DEPTH {
            return Vec::new();
        }
        let mut out = Vec::new();
        for &(from, stmt) in &self.script.sourced_by {
            let outer = self.on(&self.scripts[from]);
            let at = &outer.script.stmts[stmt];
            if !outer.sets_before(name, at.line) {
                continue;
            }
            // The sourcing script's arms are not this file's: a value holds wherever the reader does.
            out.extend(outer.var(name, &at.ctx, at.line, depth + 1).into_iter().map(|mut v| {
                v.ctx = ctx.clone();
                v
            }));
        }
        out
    }

    /// Whether this script assigns `name` before `line`, itself or in a file it sources there.
    fn sets_before(&self, name: &str, line: usize) -> bool {
        self.script.assignments_of(name).iter().any(|&i| self.script.stmts[i].line < line)
            || self.includes_before(&Ctx::default(), line).any(|(_, t)| self.on(&self.scripts[t]).sets(name, 1))
    }

    /// Whether this script, or a file it sources, assigns `name`.
    fn sets(&self, name: &str, depth: usize) -> bool {
        !self.script.assignments_of(name).is_empty()
            || (depth <= MAX_DEPTH
                && self
                    .script
                    .includes
                    .iter()
                    .filter_map(|inc| inc.target.as_ref().ok())
                    .any(|&t| self.on(&self.scripts[t]).sets(name, depth + 1)))
    }

    /// `case "$A:$B" in x:3)` binds `B` to `3` inside that arm.
    fn case_binding(&self, name: &str, ctx: &Ctx, line: usize) -> Option<Val> {
        for &(choice, arm) in &ctx.arms {
            let c = &self.script.choices[choice as usize];
            let ConditionalKind::Case { subject } = &c.kind else { continue };
            if !subject.reads(name) {
                continue;
            }
            let [pattern] = c.arms.get(arm as usize)?.patterns.as_slice() else { continue };
            let pattern = pattern.literal()?;
            let bound = bind_pattern(subject, &pattern, name)?;
            if bound.contains(['*', '?', '[']) {
                continue;
            }
            let mut v = self.literal(&bound, None, ctx, line);
            v.how = How::Branch;
            v.text = format!("case {} in {pattern})", subject.raw);
            v.deps.insert(name.to_string());
            return Some(v);
        }
        None
    }

    /// The glob a case arm puts on `name` (`*DeepSeek-V4*` for `MODEL_NAME`), when the arm binds it.
    pub(crate) fn case_pattern(&self, name: &str, ctx: &Ctx) -> Option<String> {
        ctx.arms.iter().find_map(|&(choice, arm)| {
            let c = &self.script.choices[choice as usize];
            let ConditionalKind::Case { subject } = &c.kind else { return None };
            let [pattern] = c.arms.get(arm as usize)?.patterns.as_slice() else { return None };
            bind_pattern(subject, &pattern.literal()?, name)
        })
    }

    fn command(&self, start: usize, ctx: &Ctx, line: usize, depth: usize) -> Vec<Val> {
        let Some(sub) = self.script.sub(start) else {
            return vec![self.unresolved("command output", ctx, line)];
        };
        // `[[ test ]] && printf A || printf B`: the branch the test takes.
        if let [(None, SubItem::Test(cond)), rest @ ..] = sub.items.as_slice() {
            let truth = self.eval_cond(cond, ctx, line);
            let pick = match (truth, rest) {
                (Some(true), [(Some(true), SubItem::Words(w)), ..]) => Some(w),
                (Some(false), [(Some(true), _), (Some(false), SubItem::Words(w))]) => Some(w),
                (Some(false), [(Some(false), SubItem::Words(w))]) => Some(w),
                _ => None,
            };
            return match pick {
                Some(words) => self.simple_output(words, ctx, line, depth),
                None => vec![self.unresolved("the test in $(…) cannot be decided", ctx, line)],
            };
        }
        match sub.items.as_slice() {
            [(None, SubItem::Words(words))] => self.simple_output(words, ctx, line, depth),
            _ => vec![self.unresolved("command output", ctx, line)],
        }
    }

    fn simple_output(&self, words: &[Word], ctx: &Ctx, line: usize, depth: usize) -> Vec<Val> {
        let Some(name) = words.first().and_then(Word::literal) else {
            return vec![self.unresolved("command output", ctx, line)];
        };
        match name.as_str() {
            "awk" => {
                let Some(program) = words.iter().skip(1).find(|w| w.literal().is_none_or(|l| !l.starts_with('-')))
                else {
                    return vec![self.unresolved("awk without a program", ctx, line)];
                };
                self.word(program, ctx, line, depth + 1)
                    .into_iter()
                    .flat_map(|v| match &v.value {
                        Some(text) if text.contains("print") => {
                            let expr = text[text.find("print").unwrap_or(0) + 5..].trim().trim_end_matches('}').trim();
                            self.compute(expr, &v.ctx, line, depth, true)
                                .into_iter()
                                .map(|mut r| {
                                    r.deps.extend(v.deps.iter().cloned());
                                    r.text = format!("awk {}", program.raw);
                                    r
                                })
                                .collect()
                        }
                        _ => vec![self.unresolved(format!("awk {}", program.raw), ctx, line)],
                    })
                    .collect()
            }
            "printf" => match words.get(1) {
                Some(format) => self
                    .word(format, ctx, line, depth + 1)
                    .into_iter()
                    .map(|mut v| {
                        if let Some(text) = &v.value {
                            if text.contains('%') {
                                v.value = None;
                                v.how = How::Unresolved;
                                v.text = format!("printf {} with arguments", format.raw);
                            } else {
                                v.value = Some(text.replace("\\n", "\n"));
                            }
                        }
                        v.span = None;
                        v
                    })
                    .collect(),
                None => vec![self.unresolved("printf without a format", ctx, line)],
            },
            "echo" => match words.get(1) {
                Some(w) if words.len() == 2 => self.word(w, ctx, line, depth + 1),
                _ => vec![self.unresolved("echo output", ctx, line)],
            },
            _ => match self.tables.iter().find(|t| t.name == name) {
                Some(table) => self.table(table, &words[1..], ctx, line, depth),
                None => vec![self.unresolved(format!("output of `{name}`"), ctx, line)],
            },
        }
    }

    /// Calls a lookup-table function: its arguments become `$1`, `$2`, … in the table's script.
    fn table(&self, table: &LookupTable, args: &[Word], ctx: &Ctx, line: usize, depth: usize) -> Vec<Val> {
        let mut env = Env::new();
        let mut merged = ctx.clone();
        let mut deps = BTreeSet::new();
        let mut shown = Vec::new();
        for (i, arg) in args.iter().enumerate() {
            let values = self.word(arg, &merged, line, depth + 1);
            let Some(v) = values.into_iter().find(|v| v.value.is_some()) else {
                return vec![self.unresolved(format!("{} argument {} unresolved", table.name, arg.raw), ctx, line)];
            };
            merged = merged.merge(&v.ctx);
            deps.extend(v.deps.iter().cloned());
            let value = v.value.unwrap_or_default();
            shown.push(value.clone());
            env.insert((i + 1).to_string(), EnvValue { value, at: v.at, source: arg.raw.clone() });
        }
        let script = &self.scripts[table.script];
        let inner = Resolver { script, scripts: self.scripts, tables: self.tables, env: &env };
        let echoes = script.stmts.iter().filter(|s| s.ctx.func == Some(table.func)).filter_map(|s| match &s.kind {
            StmtKind::Command(c) if c.name().as_deref() == Some("echo") => c.words.get(1).map(|w| (s, w)),
            _ => None,
        });
        for (stmt, word) in echoes {
            let selected = stmt.ctx.arms.iter().all(|&(choice, arm)| {
                let c = &script.choices[choice as usize];
                let ConditionalKind::Case { subject } = &c.kind else { return true };
                let subject =
                    inner.word(subject, &Ctx { func: Some(table.func), ..Ctx::default() }, stmt.line, depth + 1);
                let Some(text) = subject.first().and_then(|v| v.value.clone()) else { return false };
                c.arms[arm as usize].patterns.iter().any(|p| p.literal().is_some_and(|p| glob(&p, &text)))
            });
            if selected && let Some(value) = word.literal() {
                return vec![Val {
                    value: Some(value.clone()),
                    how: How::Table,
                    ctx: merged,
                    at: Location::new(&script.rel, stmt.line),
                    deps,
                    text: format!("{}({})", table.name, shown.join(", ")),
                    span: word.literal_span(),
                }];
            }
        }
        vec![Val {
            value: None,
            how: How::Table,
            ctx: merged,
            at: table.location.clone(),
            deps,
            text: format!("{} has no entry for ({})", table.name, shown.join(", ")),
            span: None,
        }]
    }

    /// Evaluates arithmetic after resolving its variables; `awk` prints with `%.6g`.
    fn compute(&self, expr: &str, ctx: &Ctx, line: usize, depth: usize, awk: bool) -> Vec<Val> {
        let mut text = String::new();
        let mut deps = BTreeSet::new();
        let mut merged = ctx.clone();
        let chars: Vec<char> = expr.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '$' || (!awk && (c.is_ascii_alphabetic() || c == '_')) {
                let start = if c == '$' { i + 1 } else { i };
                let braced = chars.get(start) == Some(&'{');
                let s = if braced { start + 1 } else { start };
                let end = chars[s..]
                    .iter()
                    .position(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
                    .map_or(chars.len(), |p| p + s);
                let name: String = chars[s..end].iter().collect();
                let found = self.var(&name, &merged, line, depth + 1);
                match found.into_iter().find(|v| v.value.is_some()) {
                    Some(v) => {
                        text.push_str(v.value.as_deref().unwrap_or(""));
                        merged = merged.merge(&v.ctx);
                        deps.extend(v.deps.iter().cloned());
                    }
                    None => return vec![self.unresolved(format!("{expr} (${name} unresolved)"), ctx, line)],
                }
                i = if braced { end + 1 } else { end };
            } else {
                text.push(c);
                i += 1;
            }
        }
        match arithmetic(&text) {
            Some(v) => {
                let value = if awk { format_g6(v) } else { format!("{}", v.trunc()) };
                vec![Val {
                    value: Some(value),
                    how: How::Computed,
                    ctx: merged,
                    at: self.loc(line),
                    deps,
                    text: expr.to_string(),
                    span: None,
                }]
            }
            None => vec![self.unresolved(format!("{expr} (cannot evaluate {text})"), ctx, line)],
        }
    }

    /// A condition's truth under the context and environment, when every operand has one value.
    pub(crate) fn eval_cond(&self, cond: &Cond, ctx: &Ctx, line: usize) -> Option<bool> {
        match cond {
            Cond::And(a, b) => match (self.eval_cond(a, ctx, line), self.eval_cond(b, ctx, line)) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            Cond::Or(a, b) => match (self.eval_cond(a, ctx, line), self.eval_cond(b, ctx, line)) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            Cond::Not(a) => self.eval_cond(a, ctx, line).map(|b| !b),
            Cond::Test(test) => self.eval_test(test, ctx, line),
            Cond::Unknown => None,
        }
    }

    fn eval_test(&self, test: &Test, ctx: &Ctx, line: usize) -> Option<bool> {
        // A `${X:-default}` the run-time environment can override decides nothing.
        let one = |w: &Word| -> Option<String> {
            let values = self.word(w, ctx, line, 0);
            match values.as_slice() {
                [v] if v.how != How::Default => v.value.clone(),
                _ => None,
            }
        };
        let num = |s: &str| s.trim().parse::<f64>().ok();
        match (test.op, test.args.as_slice()) {
            (TestOp::Empty, [a]) => one(a).map(|s| s.is_empty()),
            (TestOp::NonEmpty, [a]) => one(a).map(|s| !s.is_empty()),
            (TestOp::Eq, [a, b]) => Some(glob(&one(b)?, &one(a)?)),
            (TestOp::Ne, [a, b]) => Some(!glob(&one(b)?, &one(a)?)),
            (op @ (TestOp::NumEq | TestOp::NumNe | TestOp::Gt | TestOp::Ge | TestOp::Lt | TestOp::Le), [a, b]) => {
                let (x, y) = (num(&one(a)?)?, num(&one(b)?)?);
                Some(match op {
                    TestOp::NumEq => x == y,
                    TestOp::NumNe => x != y,
                    TestOp::Gt => x > y,
                    TestOp::Ge => x >= y,
                    TestOp::Lt => x < y,
                    _ => x <= y,
                })
            }
            _ => None,
        }
    }
}

/// Whether arm `i` of an `if` chain can only run when `EVAL_ONLY` is the opposite of `eval`: its own
/// condition says so, or (an `else`) an earlier condition failing does.
fn arm_excluded_by_eval(arms: &[super::Arm], i: usize, eval: Option<bool>) -> bool {
    let Some(e) = eval else { return false };
    match &arms[i].cond {
        Some(cond) => cond.implies_eval(!e),
        None => arms[..i].iter().filter_map(|a| a.cond.as_ref()).any(|c| c.negation_implies_eval(!e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str, name: &str, line: usize, env: &Env) -> Vec<(Option<String>, How)> {
        let script = Script::parse("x.sh", text).unwrap();
        let scripts = std::slice::from_ref(&script);
        let tables = tables(scripts);
        let r = Resolver { script: &script, scripts, tables: &tables, env };
        r.var(name, &Ctx::default(), line, 0).into_iter().map(|v| (v.value, v.how)).collect()
    }

    #[test]
    fn arms_defaults_awk_and_entry_variables() {
        let env = Env::new();
        let text = "if [ \"$CONC\" -le 8 ]; then\n  K=7\nelif [ \"$CONC\" -le 16 ]; then\n  K=3\nelse\n  K=0\nfi\nK2=${K2:-2}\nR=$(awk \"BEGIN{print (2.99-1)/3}\")\n";
        let mut k = values(text, "K", 99, &env);
        k.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(k.iter().map(|v| v.0.clone().unwrap()).collect::<Vec<_>>(), ["0", "3", "7"]);
        assert_eq!(values(text, "K2", 99, &env), [(Some("2".into()), How::Default)]);
        assert_eq!(values(text, "R", 99, &env), [(Some("0.663333".into()), How::Computed)]);
        let mut env = Env::new();
        env.insert("K2".into(), EnvValue { value: "4".into(), at: Location::new("c.yaml", 3), source: "entry".into() });
        assert_eq!(values(text, "K2", 99, &env), [(Some("4".into()), How::Entry)]);
        assert_eq!(values(text, "MODEL", 99, &env)[0].1, How::Unresolved);
    }

    #[test]
    fn launcher_suffixes_and_strips() {
        let mut env = Env::new();
        for (k, v) in [("FRAMEWORK", "trt"), ("SPEC_DECODING", "mtp"), ("EXP_NAME", "dsr1_8k1k")] {
            env.insert(k.into(), EnvValue { value: v.into(), at: Location::new("c", 1), source: "entry".into() });
        }
        let text = "FS=$([[ \"$FRAMEWORK\" == \"trt\" ]] && printf '_trt' || printf '')\nSS=$([[ \"$SPEC_DECODING\" == \"none\" ]] && printf '_x' || printf '')\nB=\"${EXP_NAME%%_*}${FS}${SS}.sh\"\n";
        assert_eq!(values(text, "B", 9, &env)[0].0.as_deref(), Some("dsr1_trt.sh"));
    }
}
