//! Bash launch scripts and the lookup tables of shared launch code, read without running them.
//!
//! A script is cut into statements (continuation lines joined, comments removed, `;`, `&&` and `||`
//! split), each tagged with its context: the `case` branches it sits in and whether an `EVAL_ONLY` test
//! guards it. A pin site is a statement that writes one of the engine knobs (pins.md §1); its value and
//! every fact about it are resolved by following assignments backwards, the way the shell would:
//! - literals, and `$VAR` / `${VAR}` through the latest compatible assignment;
//! - `${VAR:-default}`: the file's own assignment when there is one, else the default (marked
//!   overridable);
//! - `case "$X" in a) … ;; b) … ;; esac`: an assignment in each branch gives a separate pin, and inside a
//!   branch `$X` is the branch's pattern;
//! - `$(awk "BEGIN{print ($AL-1)/$K}")` and `$((…))`: evaluated after resolving their variables;
//! - `$(table_fn "$MODEL" "$K")`: a shell function of shared launch code whose body is a `case` on its
//!   arguments that echoes a number ([`Table`]); a missing entry is a missing pin;
//! - JSON inside shell strings (`"{\"synthetic_acceptance_length\": $AL}"`), escaped or not.
//!
//! Anything else is unresolved, and said so.

use std::collections::{BTreeMap, BTreeSet};

use super::walk::{Kind, TextFile};
use super::{AL_TOLERANCE, Class, EvalGuard, Fact, Finding, How, Knob, Location, Mechanism, Pin, thinking_word};
use crate::engine::Engine;

/// Words in a text file that make it worth parsing as a launch script.
const SHELL_KEYWORDS: &[&str] = &[
    "synthetic_acceptance_length",
    "SGLANG_SIMULATE_ACC",
    "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS",
    "spec-decode-acceptance",
    "speculative",
    "num-speculative-tokens",
    "ACC_LEN",
    "ACCEPT",
];

/// How deep variable resolution follows references before giving up (cycles, long chains).
const MAX_DEPTH: usize = 12;
/// At most this many branch combinations per pin site; more is a script to read by eye.
const MAX_BRANCHES: usize = 64;

/// A statement's context: the `case` branches around it and the `EVAL_ONLY` guard.
#[derive(Debug, Clone, Default, PartialEq)]
struct Ctx {
    /// (case id, branch index), sorted.
    branches: Vec<(usize, usize)>,
    /// `Some(true)`: runs only when `EVAL_ONLY` is true; `Some(false)`: only when it is not.
    eval: Option<bool>,
    /// The shell function the statement is in.
    func: Option<String>,
}

impl Ctx {
    fn compatible(&self, other: &Ctx) -> bool {
        let branches_agree =
            self.branches.iter().all(|(c, b)| other.branches.iter().all(|(c2, b2)| c != c2 || b == b2));
        let eval_agrees = match (self.eval, other.eval) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        branches_agree && eval_agrees
    }

    fn merge(&self, other: &Ctx) -> Ctx {
        let mut branches = self.branches.clone();
        branches.extend(other.branches.iter().copied());
        branches.sort_unstable();
        branches.dedup();
        Ctx { branches, eval: self.eval.or(other.eval), func: self.func.clone() }
    }

    fn adds_nothing_to(&self, base: &Ctx) -> bool {
        self.branches.iter().all(|b| base.branches.contains(b)) && (self.eval.is_none() || self.eval == base.eval)
    }
}

#[derive(Debug, Clone)]
struct Stmt {
    line: usize,
    text: String,
    ctx: Ctx,
}

#[derive(Debug, Clone)]
struct CaseInfo {
    /// The variable switched on (`K` for `case "$K" in`, `1` for `case "$1" in`).
    subject: Option<String>,
    /// Each branch's patterns, unquoted.
    branches: Vec<Vec<String>>,
}

/// One parsed script.
#[derive(Debug, Clone)]
pub struct Script {
    rel: String,
    stmts: Vec<Stmt>,
    cases: Vec<CaseInfo>,
}

/// A lookup table in shared launch code: a function that echoes a value chosen by `case` on its arguments.
#[derive(Debug, Clone)]
pub struct Table {
    /// The function's name.
    pub name: String,
    /// Where it is defined.
    pub location: Location,
    /// Its entries.
    pub entries: Vec<TableEntry>,
}

/// One entry of a [`Table`]: the argument patterns that select it and the value echoed.
#[derive(Debug, Clone)]
pub struct TableEntry {
    /// (0-based argument index, patterns) that must all match.
    pub conditions: Vec<(usize, Vec<String>)>,
    /// The value echoed.
    pub value: String,
    /// Where.
    pub location: Location,
}

impl Table {
    fn lookup(&self, args: &[String]) -> Option<&TableEntry> {
        self.entries.iter().find(|e| {
            e.conditions.iter().all(|(i, pats)| args.get(*i).is_some_and(|a| pats.iter().any(|p| glob(p, a))))
        })
    }
}

/// Parses every shell file that mentions a speculative-decoding keyword; in parallel, in path order.
pub fn parse_all(files: &[TextFile]) -> Vec<Script> {
    use rayon::prelude::*;
    files
        .par_iter()
        .filter(|f| f.kind == Kind::Shell && SHELL_KEYWORDS.iter().any(|k| f.text.contains(k)))
        .map(|f| parse(&f.rel, &f.text))
        .collect()
}

/// The lookup tables defined in `scripts`.
pub fn tables(scripts: &[Script]) -> Vec<Table> {
    let mut tables: BTreeMap<String, Table> = BTreeMap::new();
    for script in scripts {
        // Positional parameters may be renamed first: `local model="$1"`.
        let mut aliases: BTreeMap<(String, String), usize> = BTreeMap::new();
        for stmt in &script.stmts {
            let Some(func) = &stmt.ctx.func else { continue };
            for a in assignments(&stmt.text) {
                if let Some(n) = positional(&unquote(&a.value)) {
                    aliases.insert((func.clone(), a.name.clone()), n);
                }
            }
        }
        for stmt in &script.stmts {
            let Some(func) = &stmt.ctx.func else { continue };
            let Some(rest) = stmt.text.strip_prefix("echo ") else { continue };
            let value = unquote(rest.trim());
            if value.parse::<f64>().is_err() || stmt.ctx.branches.is_empty() {
                continue;
            }
            let conditions: Option<Vec<(usize, Vec<String>)>> = stmt
                .ctx
                .branches
                .iter()
                .map(|(c, b)| {
                    let case = &script.cases[*c];
                    let subject = case.subject.as_deref()?;
                    let index = positional(&format!("${subject}"))
                        .or_else(|| aliases.get(&(func.clone(), subject.to_string())).copied())?;
                    Some((index, case.branches[*b].clone()))
                })
                .collect();
            let Some(conditions) = conditions else { continue };
            let table = tables.entry(func.clone()).or_insert_with(|| Table {
                name: func.clone(),
                location: Location::new(&script.rel, stmt.line),
                entries: Vec::new(),
            });
            table.entries.push(TableEntry { conditions, value, location: Location::new(&script.rel, stmt.line) });
        }
    }
    tables.into_values().collect()
}

/// `$1` → 0, `${2}` → 1.
fn positional(text: &str) -> Option<usize> {
    let inner = text.strip_prefix('$')?;
    let inner = inner.strip_prefix('{').and_then(|s| s.strip_suffix('}')).unwrap_or(inner);
    let n: usize = inner.parse().ok()?;
    (n >= 1).then(|| n - 1)
}

// ---------------------------------------------------------------------------------------------------
// Parsing

/// Cuts a script into statements with their contexts.
fn parse(rel: &str, text: &str) -> Script {
    let (lines, _) = logical_lines(text);
    let mut script = Script { rel: rel.to_string(), stmts: Vec::new(), cases: Vec::new() };
    enum Frame {
        If { then_eval: Option<bool>, in_else: bool },
        Case { id: usize, branch: Option<usize>, expecting: bool },
        Func(String),
    }
    let mut frames: Vec<Frame> = Vec::new();
    let current_ctx = |frames: &[Frame]| {
        let mut ctx = Ctx::default();
        for frame in frames {
            match frame {
                Frame::If { then_eval: Some(e), in_else } => ctx.eval = Some(if *in_else { !e } else { *e }),
                Frame::Case { id, branch: Some(b), .. } => ctx.branches.push((*id, *b)),
                Frame::Func(name) => ctx.func = Some(name.clone()),
                _ => {}
            }
        }
        ctx.branches.sort_unstable();
        ctx
    };
    for (line, code) in lines {
        let mut chain_eval: Option<bool> = None;
        for (sep, piece) in split_statements(&code) {
            let mut s = piece.trim();
            if sep == Sep::Semi {
                chain_eval = None;
            }
            if s.is_empty() {
                continue;
            }
            if s == ";;" {
                if let Some(Frame::Case { branch, expecting, .. }) = frames.last_mut() {
                    *branch = None;
                    *expecting = true;
                }
                continue;
            }
            for keyword in ["then ", "do ", "{ "] {
                if let Some(rest) = s.strip_prefix(keyword) {
                    s = rest.trim();
                }
            }
            let first = s.split_whitespace().next().unwrap_or("");
            match first {
                "then" | "do" | "done" | "{" => continue,
                "fi" => {
                    if let Some(i) = frames.iter().rposition(|f| matches!(f, Frame::If { .. })) {
                        frames.truncate(i);
                    }
                    continue;
                }
                "esac" => {
                    if let Some(i) = frames.iter().rposition(|f| matches!(f, Frame::Case { .. })) {
                        frames.truncate(i);
                    }
                    continue;
                }
                "}" => {
                    if matches!(frames.last(), Some(Frame::Func(_))) {
                        frames.pop();
                    }
                    continue;
                }
                "if" | "elif" => {
                    let guard = eval_test(s);
                    if first == "elif" {
                        if let Some(Frame::If { then_eval, in_else }) = frames.last_mut() {
                            *then_eval = guard;
                            *in_else = false;
                        }
                    } else {
                        frames.push(Frame::If { then_eval: guard, in_else: false });
                    }
                    continue;
                }
                "else" => {
                    if let Some(Frame::If { in_else, .. }) = frames.last_mut() {
                        *in_else = true;
                    }
                    s = s["else".len()..].trim();
                    if s.is_empty() {
                        continue;
                    }
                }
                "case" if s.ends_with(" in") => {
                    let subject = s.split_whitespace().nth(1).map(variable_name);
                    frames.push(Frame::Case { id: script.cases.len(), branch: None, expecting: true });
                    script.cases.push(CaseInfo { subject, branches: Vec::new() });
                    continue;
                }
                _ => {}
            }
            if let Some(name) = function_header(s) {
                frames.push(Frame::Func(name));
                continue;
            }
            if let Some(Frame::Case { id, branch, expecting: true }) = frames.last_mut()
                && let Some((patterns, rest)) = case_pattern(s)
            {
                let case = &mut script.cases[*id];
                case.branches.push(patterns);
                *branch = Some(case.branches.len() - 1);
                if let Some(Frame::Case { expecting, .. }) = frames.last_mut() {
                    *expecting = false;
                }
                s = rest;
                if s.is_empty() {
                    continue;
                }
            }
            let mut ctx = current_ctx(&frames);
            if let Some(e) = chain_eval {
                ctx.eval = Some(e);
            }
            if is_test(s)
                && let Some(truth) = eval_test(s)
            {
                chain_eval = Some(truth);
                continue;
            }
            if sep == Sep::Or
                && let Some(e) = chain_eval
            {
                ctx.eval = Some(!e);
            }
            script.stmts.push(Stmt { line, text: s.to_string(), ctx });
        }
    }
    script
}

fn is_test(s: &str) -> bool {
    s.starts_with('[') || s.starts_with("test ")
}

/// For a condition that tests `EVAL_ONLY`: whether it holds exactly when `EVAL_ONLY` is true.
fn eval_test(cond: &str) -> Option<bool> {
    if !cond.contains("EVAL_ONLY") {
        return None;
    }
    let negated = cond.contains("!=") || cond.trim_start_matches("if ").trim_start().starts_with('!');
    let says_true = cond.contains("true") || cond.contains("\"1\"") || cond.contains("-eq 1") || cond.contains("= 1");
    let says_false = cond.contains("false") || cond.contains("\"0\"") || cond.contains("-eq 0");
    if says_true {
        Some(!negated)
    } else if says_false {
        Some(negated)
    } else if cond.contains("-z") {
        Some(false)
    } else {
        Some(true)
    }
}

/// `name() {`, `function name {` → the name.
fn function_header(s: &str) -> Option<String> {
    let s = s.trim_end_matches('{').trim();
    let name = if let Some(rest) = s.strip_prefix("function ") {
        rest.trim().trim_end_matches("()").trim()
    } else {
        s.strip_suffix("()")?.trim()
    };
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == ':'))
        .then(|| name.to_string())
}

/// `3|4) rest` → (["3", "4"], "rest").
fn case_pattern(s: &str) -> Option<(Vec<String>, &str)> {
    let body = s.strip_prefix('(').unwrap_or(s);
    let mut quote = None;
    for (i, c) in body.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, ')') => {
                let pattern = &body[..i];
                if pattern.trim().is_empty() || pattern.contains('=') || pattern.contains('(') || pattern.contains('$')
                {
                    return None;
                }
                let patterns = pattern.split('|').map(|p| unquote(p.trim())).collect();
                return Some((patterns, body[i + 1..].trim()));
            }
            (None, c)
                if c.is_whitespace()
                    && !body[..i].trim().is_empty()
                    && !body[i..].trim_start().starts_with('|')
                    && !body[..i].trim_end().ends_with('|') =>
            {
                return None;
            }
            _ => {}
        }
    }
    None
}

/// Lines of text with their 1-based line numbers.
type Numbered = Vec<(usize, String)>;

/// Physical lines joined into logical lines (backslash continuations, quotes left open), with comments
/// removed and collected separately.
fn logical_lines(text: &str) -> (Numbered, Numbered) {
    let mut lines = Vec::new();
    let mut comments = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    let mut quote: Option<char> = None;
    let mut heredoc: Option<String> = None;
    for (i, raw) in text.lines().enumerate() {
        let number = i + 1;
        if let Some(end) = &heredoc {
            if raw.trim() == end {
                heredoc = None;
            } else {
                // Heredoc bodies (engine config files written by the script) are data: kept as statements so
                // `max_draft_len: 3` is seen, but never split or interpreted as shell.
                lines.push((number, raw.trim().to_string()));
            }
            continue;
        }
        let (code, comment, open) = strip_comment(raw, quote);
        quote = open;
        if let Some(c) = comment {
            comments.push((number, c));
        }
        let (start, mut joined) = pending.take().unwrap_or((number, String::new()));
        if !joined.is_empty() {
            joined.push(' ');
        }
        let continued = quote.is_none() && code.trim_end().ends_with('\\');
        joined.push_str(if continued { code.trim_end().trim_end_matches('\\') } else { &code });
        if continued || quote.is_some() {
            pending = Some((start, joined));
        } else {
            if let Some(marker) = heredoc_marker(&joined) {
                heredoc = Some(marker);
            }
            lines.push((start, joined));
        }
    }
    if let Some(rest) = pending {
        lines.push(rest);
    }
    (lines, comments)
}

fn heredoc_marker(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let rest = line[at + 2..].trim_start_matches('-').trim_start();
    let marker: String =
        rest.trim_start_matches(['\'', '"']).chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    (!marker.is_empty()).then_some(marker)
}

/// Removes a `#` comment outside quotes; returns (code, comment, quote still open at end of line).
fn strip_comment(line: &str, mut quote: Option<char>) -> (String, Option<String>, Option<char>) {
    let mut prev: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
            prev = Some(c);
            continue;
        }
        match (quote, c) {
            (Some('"'), '\\') | (None, '\\') => escaped = true,
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if prev.is_none_or(char::is_whitespace) => {
                return (line[..i].to_string(), Some(line[i + 1..].trim().to_string()), None);
            }
            _ => {}
        }
        prev = Some(c);
    }
    (line.to_string(), None, quote)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sep {
    Semi,
    And,
    Or,
}

/// Splits on `;`, `&&`, `||` outside quotes and parentheses; `;;` is its own piece.
fn split_statements(code: &str) -> Vec<(Sep, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut sep = Sep::Semi;
    let mut quote: Option<char> = None;
    let mut depth = 0usize;
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match quote {
            Some(q) => {
                if c == '\\' && q == '"' {
                    current.push(c);
                    if let Some(n) = next {
                        current.push(n);
                    }
                    i += 2;
                    continue;
                }
                if c == q {
                    quote = None;
                }
                current.push(c);
            }
            None => match c {
                '\\' => {
                    current.push(c);
                    if let Some(n) = next {
                        current.push(n);
                    }
                    i += 2;
                    continue;
                }
                '"' | '\'' => {
                    quote = Some(c);
                    current.push(c);
                }
                '(' | '{' => {
                    depth += 1;
                    current.push(c);
                }
                ')' | '}' => {
                    depth = depth.saturating_sub(1);
                    current.push(c);
                }
                ';' if depth == 0 && next == Some(';') => {
                    out.push((sep, std::mem::take(&mut current)));
                    out.push((Sep::Semi, ";;".to_string()));
                    sep = Sep::Semi;
                    i += 2;
                    continue;
                }
                ';' if depth == 0 => {
                    out.push((sep, std::mem::take(&mut current)));
                    sep = Sep::Semi;
                }
                '&' | '|' if depth == 0 && next == Some(c) => {
                    out.push((sep, std::mem::take(&mut current)));
                    sep = if c == '&' { Sep::And } else { Sep::Or };
                    i += 2;
                    continue;
                }
                _ => current.push(c),
            },
        }
        i += 1;
    }
    out.push((sep, current));
    out
}

// ---------------------------------------------------------------------------------------------------
// Words, assignments, knob values

/// Removes one level of matching quotes (and JSON's escaped quotes).
fn unquote(text: &str) -> String {
    let t = text.trim();
    for (open, close) in [("\\\"", "\\\""), ("\"", "\""), ("'", "'")] {
        if t.len() >= open.len() + close.len() && t.starts_with(open) && t.ends_with(close) {
            return t[open.len()..t.len() - close.len()].to_string();
        }
    }
    t.to_string()
}

/// `"$K"`, `${K}`, `$K` → `K`.
fn variable_name(word: &str) -> String {
    let t = unquote(word);
    let t = t.trim_start_matches('$');
    t.trim_start_matches('{').trim_end_matches('}').to_string()
}

/// Reads one shell word starting at `start`, keeping quotes and `$(…)`/`${…}` nesting.
fn read_word(chars: &[char], start: usize) -> (String, usize) {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    let mut depth = 0usize;
    let mut i = start;
    while i < chars.len() {
        let c = chars[i];
        match quote {
            Some(q) => {
                if c == '\\' && q == '"' && i + 1 < chars.len() {
                    out.push(c);
                    out.push(chars[i + 1]);
                    i += 2;
                    continue;
                }
                if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '(' | '{' => depth += 1,
                ')' | '}' if depth == 0 => break,
                ')' | '}' => depth -= 1,
                c if (c.is_whitespace() || c == ',') && depth == 0 => break,
                '\\' if i + 1 < chars.len() => {
                    out.push(c);
                    out.push(chars[i + 1]);
                    i += 2;
                    continue;
                }
                _ => {}
            },
        }
        out.push(c);
        i += 1;
    }
    (out, i)
}

fn words(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        let (word, end) = read_word(&chars, i);
        if end == i {
            i += 1;
            continue;
        }
        out.push(word);
        i = end;
    }
    out
}

#[derive(Debug, Clone)]
struct Assignment {
    name: String,
    value: String,
    exported: bool,
}

/// `[export|local|declare …] A=1 B="x" [command …]`: the assignments, and whether they reach a process.
fn assignments(text: &str) -> Vec<Assignment> {
    let ws = words(text);
    let mut i = 0;
    let mut exported = false;
    while i < ws.len() && matches!(ws[i].as_str(), "export" | "local" | "declare" | "readonly" | "typeset") {
        exported |= ws[i] == "export";
        i += 1;
        while i < ws.len() && ws[i].starts_with('-') {
            exported |= ws[i].contains('x');
            i += 1;
        }
    }
    let mut out = Vec::new();
    let mut j = i;
    while j < ws.len() {
        let word = &ws[j];
        let Some(eq) = word.find('=') else { break };
        let name = word[..eq].trim_end_matches('+');
        if name.is_empty()
            || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || name.starts_with(|c: char| c.is_ascii_digit())
        {
            break;
        }
        out.push(Assignment { name: name.to_string(), value: word[eq + 1..].to_string(), exported });
        j += 1;
    }
    // `VAR=x command …` passes VAR to that command's environment.
    if j < ws.len() && !out.is_empty() {
        for a in &mut out {
            a.exported = true;
        }
    }
    // `: "${VAR:=default}"` assigns VAR when unset.
    if ws.first().is_some_and(|w| w == ":") {
        for w in &ws[1..] {
            let w = unquote(w);
            if let Some(inner) = w.strip_prefix("${").and_then(|s| s.strip_suffix('}'))
                && let Some((name, _)) = inner.split_once(":=")
            {
                out.push(Assignment { name: name.to_string(), value: format!("${{{inner}}}"), exported: false });
            }
        }
    }
    out
}

/// Values after each occurrence of `--flag` (as `--flag V` or `--flag=V`).
pub(super) fn flag_values(text: &str, flag: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut from = 0;
    while let Some(pos) = text[from..].find(flag) {
        let at = from + pos;
        let end = at + flag.len();
        from = end;
        let before_ok = at == 0 || !text[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        let after = text[end..].chars().next();
        if !before_ok || !matches!(after, Some(' ' | '=' | '\t')) {
            continue;
        }
        let mut i = text[..end].chars().count();
        while i < chars.len() && (chars[i] == ' ' || chars[i] == '=' || chars[i] == '\t') {
            i += 1;
        }
        let (word, _) = read_word(&chars, i);
        // The flag may sit inside a quoted string (`ARGS="--flag $AL"`): drop the string's closing quote.
        let word = balance_quotes(word);
        if !word.is_empty() {
            out.push(word);
        }
    }
    out
}

fn balance_quotes(mut word: String) -> String {
    for q in ['"', '\'', ')'] {
        let opens = if q == ')' { word.matches('(').count() } else { 0 };
        let count = word.matches(q).count();
        let unbalanced = if q == ')' { count > opens } else { count % 2 == 1 };
        if unbalanced && word.ends_with(q) {
            word.pop();
        }
    }
    word
}

/// The value of `key` in JSON-like text, tolerating shell escaping (`\"key\": $VAR`) and YAML-ish `key: v`.
pub(super) fn json_values(text: &str, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(pos) = text[from..].find(key) {
        let at = from + pos;
        from = at + key.len();
        if text[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            continue;
        }
        let rest = text[from..].trim_start_matches(['"', '\\', '\'']);
        let Some(rest) = rest.trim_start().strip_prefix(':') else { continue };
        let rest = rest.trim_start().trim_start_matches(['"', '\\', '\'']);
        let value: String = if let Some(inner) = rest.strip_prefix("${") {
            format!("${{{}}}", inner.split('}').next().unwrap_or(""))
        } else if let Some(inner) = rest.strip_prefix('$') {
            format!("${}", inner.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>())
        } else {
            rest.chars().take_while(|c| !matches!(c, ',' | '}' | '"' | '\'' | '\\' | ' ' | ']')).collect()
        };
        if !value.is_empty() {
            out.push(value);
        }
    }
    out
}

fn references(text: &str, name: &str) -> bool {
    let mut from = 0;
    while let Some(pos) = text[from..].find(name) {
        let at = from + pos;
        from = at + name.len();
        let before = &text[..at];
        let after = text[from..].chars().next();
        let boundary_after = after.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
        if (before.ends_with('$') || before.ends_with("${")) && boundary_after {
            return true;
        }
    }
    false
}

/// Shell glob match with `*` and `?`.
fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

// ---------------------------------------------------------------------------------------------------
// Resolution

/// One way a value can come out, with the branch context it needs.
#[derive(Debug, Clone)]
struct Res {
    value: Option<String>,
    how: How,
    ctx: Ctx,
    at: Location,
    /// Variables consulted.
    depends: BTreeSet<String>,
    text: String,
}

struct Resolver<'a> {
    script: &'a Script,
    tables: &'a [Table],
}

impl Resolver<'_> {
    fn loc(&self, line: usize) -> Location {
        Location::new(&self.script.rel, line)
    }

    fn unresolved(&self, text: impl Into<String>, ctx: &Ctx, line: usize) -> Res {
        Res {
            value: None,
            how: How::Unresolved,
            ctx: ctx.clone(),
            at: self.loc(line),
            depends: BTreeSet::new(),
            text: text.into(),
        }
    }

    fn expr(&self, raw: &str, ctx: &Ctx, line: usize, depth: usize) -> Vec<Res> {
        if depth > MAX_DEPTH {
            return vec![self.unresolved(format!("{raw} (too many indirections)"), ctx, line)];
        }
        let t = raw.trim();
        if t.len() >= 2 && t.starts_with('\'') && t.ends_with('\'') {
            return vec![self.literal(&t[1..t.len() - 1], ctx, line, raw)];
        }
        let inner = unquote(t);
        if !inner.contains('$') && !inner.contains('`') {
            return vec![self.literal(&inner, ctx, line, raw)];
        }
        if let Some(body) = inner.strip_prefix("$((").and_then(|s| s.strip_suffix("))")) {
            return self.compute(body, ctx, line, depth, raw, false);
        }
        if let Some(body) = inner.strip_prefix("$(").and_then(|s| s.strip_suffix(')')) {
            return self.command(body.trim(), ctx, line, depth, raw);
        }
        if let Some(body) = whole_braces(&inner) {
            for op in [":-", ":=", "-", "="] {
                if let Some((name, default)) = body.split_once(op)
                    && is_name(name)
                {
                    let found = self.var(name, ctx, line, depth, false);
                    if found.iter().any(|r| r.how != How::Unresolved) {
                        return found;
                    }
                    return self
                        .expr(default, ctx, line, depth + 1)
                        .into_iter()
                        .map(|mut r| {
                            if matches!(r.how, How::Literal | How::Variable) {
                                r.how = How::Default;
                            }
                            r.depends.insert(name.to_string());
                            r.text = raw.to_string();
                            r.at = self.loc(line);
                            r
                        })
                        .collect();
                }
            }
            if is_name(body) {
                return self.var(body, ctx, line, depth, true);
            }
        }
        if let Some(name) = inner.strip_prefix('$')
            && is_name(name)
        {
            return self.var(name, ctx, line, depth, true);
        }
        // A string with variables inside ("Inferact/$NAME"): substitute when each has one value.
        let mut text = String::new();
        let mut deps = BTreeSet::new();
        let mut out_ctx = ctx.clone();
        let chars: Vec<char> = inner.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if chars[i] == '$' {
                let (name, end) = if chars.get(i + 1) == Some(&'{') {
                    let close = chars[i..].iter().position(|&c| c == '}').map(|p| p + i).unwrap_or(chars.len() - 1);
                    (chars[i + 2..close].iter().collect::<String>(), close + 1)
                } else {
                    let end = chars[i + 1..]
                        .iter()
                        .position(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
                        .map(|p| p + i + 1)
                        .unwrap_or(chars.len());
                    (chars[i + 1..end].iter().collect::<String>(), end)
                };
                if !is_name(&name) {
                    return vec![self.unresolved(raw, ctx, line)];
                }
                let found = self.var(&name, &out_ctx, line, depth, true);
                match found.as_slice() {
                    [one] if one.value.is_some() => {
                        text.push_str(one.value.as_deref().unwrap_or(""));
                        deps.extend(one.depends.iter().cloned());
                        out_ctx = out_ctx.merge(&one.ctx);
                    }
                    _ => return vec![self.unresolved(format!("{raw} ({name} has no single value)"), ctx, line)],
                }
                i = end;
            } else {
                text.push(chars[i]);
                i += 1;
            }
        }
        vec![Res {
            value: Some(text),
            how: How::Variable,
            ctx: out_ctx,
            at: self.loc(line),
            depends: deps,
            text: raw.to_string(),
        }]
    }

    fn literal(&self, value: &str, ctx: &Ctx, line: usize, raw: &str) -> Res {
        Res {
            value: Some(value.to_string()),
            how: How::Literal,
            ctx: ctx.clone(),
            at: self.loc(line),
            depends: BTreeSet::new(),
            text: raw.to_string(),
        }
    }

    /// The values `name` can have at `line` under `ctx`: one per `case` branch that assigns it.
    fn var(&self, name: &str, ctx: &Ctx, line: usize, depth: usize, report_missing: bool) -> Vec<Res> {
        for (c, b) in &ctx.branches {
            let case = &self.script.cases[*c];
            if case.subject.as_deref() == Some(name)
                && let [pattern] = case.branches[*b].as_slice()
                && !pattern.contains(['*', '?', '['])
            {
                let mut r = self.literal(pattern, ctx, line, &format!("case ${name} in {pattern})"));
                r.how = How::Branch;
                r.depends.insert(name.to_string());
                return vec![r];
            }
        }
        let in_function = ctx.func.is_some();
        let mut candidates: Vec<(&Stmt, Assignment)> = self
            .script
            .stmts
            .iter()
            .filter(|s| (s.line < line || in_function) && s.ctx.eval != Some(true) && s.ctx.compatible(ctx))
            .flat_map(|s| assignments(&s.text).into_iter().filter(|a| a.name == name).map(move |a| (s, a)))
            .collect();
        candidates.sort_by_key(|(s, _)| std::cmp::Reverse(s.line));
        let mut out = Vec::new();
        let mut covered_default = false;
        for (stmt, assignment) in candidates {
            if out.len() >= MAX_BRANCHES {
                break;
            }
            let unconditional = stmt.ctx.adds_nothing_to(ctx);
            if unconditional && covered_default {
                break;
            }
            let merged = ctx.merge(&stmt.ctx);
            for mut r in self.expr(&assignment.value, &merged, stmt.line, depth + 1) {
                if r.how == How::Literal {
                    r.how = How::Variable;
                    r.at = self.loc(stmt.line);
                }
                r.depends.insert(name.to_string());
                out.push(r);
            }
            if unconditional {
                break;
            }
            covered_default |= stmt.ctx.branches.iter().any(|(c, b)| {
                !ctx.branches.contains(&(*c, *b)) && self.script.cases[*c].branches[*b].iter().any(|p| p == "*")
            });
        }
        if out.is_empty() {
            let mut r = self.unresolved(
                if report_missing { format!("${name} is not set in this file") } else { format!("${name} unset") },
                ctx,
                line,
            );
            r.depends.insert(name.to_string());
            out.push(r);
        }
        out
    }

    fn command(&self, body: &str, ctx: &Ctx, line: usize, depth: usize, raw: &str) -> Vec<Res> {
        let ws = words(body);
        let Some(first) = ws.first() else { return vec![self.unresolved(raw, ctx, line)] };
        if first == "awk" {
            let program = ws.get(1).map(|w| unquote(w)).unwrap_or_default();
            if let Some(start) = program.find("print") {
                let expr = program[start + 5..].trim().trim_end_matches('}').trim();
                return self.compute(expr, ctx, line, depth, raw, true);
            }
        }
        if first == "echo"
            && body.contains("| bc")
            && let Some(arg) = ws.get(1)
        {
            return self.compute(&unquote(arg), ctx, line, depth, raw, true);
        }
        if let Some(table) = self.tables.iter().find(|t| &t.name == first) {
            let mut args = Vec::new();
            let mut merged = ctx.clone();
            let mut deps = BTreeSet::new();
            for w in &ws[1..] {
                let found = self.expr(w, &merged, line, depth + 1);
                match found.first() {
                    Some(r) if r.value.is_some() => {
                        args.push(r.value.clone().unwrap_or_default());
                        merged = merged.merge(&r.ctx);
                        deps.extend(r.depends.iter().cloned());
                    }
                    _ => return vec![self.unresolved(format!("{raw} (argument {w} unresolved)"), ctx, line)],
                }
            }
            return vec![match table.lookup(&args) {
                Some(entry) => Res {
                    value: Some(entry.value.clone()),
                    how: How::Table,
                    ctx: merged,
                    at: entry.location.clone(),
                    depends: deps,
                    text: format!("{}({})", table.name, args.join(", ")),
                },
                None => Res {
                    value: None,
                    how: How::Table,
                    ctx: merged,
                    at: table.location.clone(),
                    depends: deps,
                    text: format!("{} has no entry for ({})", table.name, args.join(", ")),
                },
            }];
        }
        vec![self.unresolved(format!("{raw} (command output)"), ctx, line)]
    }

    /// Evaluates arithmetic after resolving its variables; `awk` prints with `%.6g`.
    fn compute(&self, expr: &str, ctx: &Ctx, line: usize, depth: usize, raw: &str, awk: bool) -> Vec<Res> {
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
                    .map(|p| p + s)
                    .unwrap_or(chars.len());
                let name: String = chars[s..end].iter().collect();
                let found = self.var(&name, &merged, line, depth + 1, true);
                match found.first() {
                    Some(r) if r.value.is_some() => {
                        text.push_str(r.value.as_deref().unwrap_or(""));
                        merged = merged.merge(&r.ctx);
                        deps.extend(r.depends.iter().cloned());
                    }
                    _ => return vec![self.unresolved(format!("{raw} (${name} unresolved)"), ctx, line)],
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
                vec![Res {
                    value: Some(value),
                    how: How::Computed,
                    ctx: merged,
                    at: self.loc(line),
                    depends: deps,
                    text: raw.to_string(),
                }]
            }
            None => vec![self.unresolved(format!("{raw} (cannot evaluate {text})"), ctx, line)],
        }
    }
}

/// `${…}` spanning the whole text (braces nested inside allowed) → its body.
fn whole_braces(text: &str) -> Option<&str> {
    let body = text.strip_prefix("${")?;
    let mut depth = 1usize;
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return (i + 1 == body.len()).then(|| &body[..i]);
                }
            }
            _ => {}
        }
    }
    None
}

fn is_name(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// awk's default number output (`%.6g`).
fn format_g6(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = 6 - 1 - v.abs().log10().floor() as i32;
    let digits = digits.clamp(0, 12) as usize;
    super::plain_number(v, digits)
}

/// + − × ÷ and parentheses over decimal numbers.
fn arithmetic(text: &str) -> Option<f64> {
    fn expr(t: &[char], i: &mut usize) -> Option<f64> {
        let mut v = term(t, i)?;
        loop {
            skip(t, i);
            match t.get(*i) {
                Some('+') => {
                    *i += 1;
                    v += term(t, i)?;
                }
                Some('-') => {
                    *i += 1;
                    v -= term(t, i)?;
                }
                _ => return Some(v),
            }
        }
    }
    fn term(t: &[char], i: &mut usize) -> Option<f64> {
        let mut v = atom(t, i)?;
        loop {
            skip(t, i);
            match t.get(*i) {
                Some('*') => {
                    *i += 1;
                    v *= atom(t, i)?;
                }
                Some('/') => {
                    *i += 1;
                    let d = atom(t, i)?;
                    if d == 0.0 {
                        return None;
                    }
                    v /= d;
                }
                _ => return Some(v),
            }
        }
    }
    fn atom(t: &[char], i: &mut usize) -> Option<f64> {
        skip(t, i);
        match t.get(*i)? {
            '(' => {
                *i += 1;
                let v = expr(t, i)?;
                skip(t, i);
                (t.get(*i) == Some(&')')).then(|| *i += 1)?;
                Some(v)
            }
            '-' => {
                *i += 1;
                Some(-atom(t, i)?)
            }
            _ => {
                let start = *i;
                while *i < t.len() && (t[*i].is_ascii_digit() || t[*i] == '.') {
                    *i += 1;
                }
                t[start..*i].iter().collect::<String>().parse().ok()
            }
        }
    }
    fn skip(t: &[char], i: &mut usize) {
        while *i < t.len() && t[*i].is_whitespace() {
            *i += 1;
        }
    }
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let v = expr(&chars, &mut i)?;
    skip(&chars, &mut i);
    (i == chars.len() && v.is_finite()).then_some(v)
}

// ---------------------------------------------------------------------------------------------------
// Discovery

/// One place a knob is written.
struct Site<'a> {
    stmt: &'a Stmt,
    knob: Knob,
    raw: String,
    /// The variable that carries the knob to the engine (an exported env var, an argument array, a JSON
    /// string), when the statement is an assignment.
    carrier: Option<Assignment>,
}

fn sites(stmt: &Stmt) -> Vec<Site<'_>> {
    let mut out = Vec::new();
    let assigned = assignments(&stmt.text);
    for a in &assigned {
        let knob = match a.name.as_str() {
            "SGLANG_SIMULATE_ACC_LEN" => Knob::SglangSimulateLen,
            "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS" => Knob::TrtllmForceAccepted,
            _ => continue,
        };
        out.push(Site { stmt, knob, raw: a.value.clone(), carrier: Some(a.clone()) });
    }
    let carrier = assigned.first().cloned();
    for (flag, knob) in
        [("--spec-decode-acceptance-length", Knob::AtomLength), ("--spec-decode-acceptance-rate", Knob::AtomRate)]
    {
        for raw in flag_values(&stmt.text, flag) {
            out.push(Site { stmt, knob, raw, carrier: carrier.clone() });
        }
    }
    for raw in json_values(&stmt.text, "synthetic_acceptance_length") {
        out.push(Site { stmt, knob: Knob::VllmSyntheticLength, raw, carrier: carrier.clone() });
    }
    out
}

/// What a fact site holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FactKind {
    K,
    Model,
    Drafter,
    Method,
    Sampling,
    Thinking,
}

/// Raw values of one kind of fact written in a statement.
fn fact_values(stmt: &Stmt, kind: FactKind) -> Vec<String> {
    let t = &stmt.text;
    let mut out = Vec::new();
    let spec_json = t.contains("num_speculative_tokens")
        || t.contains("synthetic_acceptance")
        || t.contains("\"method\"")
        || t.contains("\\\"method\\\"");
    match kind {
        FactKind::K => {
            for flag in ["--num-speculative-tokens", "--speculative-num-steps", "--max-draft-len"] {
                out.extend(flag_values(t, flag));
            }
            out.extend(json_values(t, "num_speculative_tokens"));
            out.extend(json_values(t, "max_draft_len"));
        }
        FactKind::Model => {
            for flag in ["--model", "--model-path"] {
                out.extend(flag_values(t, flag));
            }
            let ws = words(t);
            for (i, w) in ws.iter().enumerate() {
                let serve = (w == "serve" && i > 0 && ws[i - 1].ends_with("vllm")) || w.ends_with("trtllm-serve");
                if serve && let Some(next) = ws.get(i + 1).filter(|n| !n.starts_with('-')) {
                    out.push(next.clone());
                }
            }
        }
        FactKind::Drafter => {
            for flag in
                ["--draft-model", "--speculative-draft-model-path", "--speculative-draft-model", "--speculative-model"]
            {
                out.extend(flag_values(t, flag));
            }
            if spec_json {
                out.extend(json_values(t, "model"));
            }
            out.extend(json_values(t, "speculative_model_dir"));
        }
        FactKind::Method => {
            for flag in ["--speculative-algorithm", "--method", "--speculative-method"] {
                out.extend(flag_values(t, flag));
            }
            if spec_json {
                out.extend(json_values(t, "method"));
            }
            out.extend(json_values(t, "decoding_type"));
        }
        FactKind::Sampling => out.extend(json_values(t, "draft_sample_method")),
        FactKind::Thinking => {
            for key in ["thinking_mode", "enable_thinking", "thinking"] {
                out.extend(json_values(t, key));
            }
            out.extend(flag_values(t, "--dyn-default-thinking-mode"));
            for a in assignments(t) {
                if matches!(a.name.as_str(), "SGLANG_DEFAULT_THINKING" | "DYN_DEFAULT_THINKING_MODE") {
                    out.push(a.value);
                }
            }
        }
    }
    out
}

/// Variables that hold a fact by convention, when no flag writes it.
fn fact_variables(kind: FactKind) -> &'static [&'static str] {
    match kind {
        FactKind::K => &[
            "NUM_SPEC_TOKENS",
            "NUM_SPECULATIVE_TOKENS",
            "SPEC_NUM_STEPS",
            "SPECULATIVE_NUM_STEPS",
            "MTP_K",
            "SPEC_K",
            "DRAFT_LEN",
        ],
        FactKind::Model => &["MODEL", "MODEL_NAME", "MODEL_PATH", "HF_MODEL"],
        FactKind::Drafter => &["DRAFT_MODEL", "DRAFT_MODEL_PATH", "SPEC_MODEL"],
        FactKind::Method => &["SPEC_METHOD", "SPEC_ALGO", "SPECULATIVE_ALGORITHM"],
        FactKind::Sampling => &["DRAFT_SAMPLE_METHOD"],
        FactKind::Thinking => &[],
    }
}

impl Resolver<'_> {
    /// The values of a fact for a pin in `ctx` at `line`: the nearest compatible site (same statement
    /// first, then the latest before, then the first after), else a conventional variable.
    fn fact(&self, kind: FactKind, ctx: &Ctx, line: usize, same: Option<&Stmt>) -> Vec<Res> {
        let stmts = &self.script.stmts;
        let mut found: Vec<(&Stmt, String)> = Vec::new();
        if let Some(s) = same {
            found.extend(fact_values(s, kind).into_iter().map(|v| (s, v)));
        }
        if found.is_empty() {
            let compatible = |s: &&Stmt| s.ctx.eval != Some(true) && s.ctx.compatible(ctx);
            let before = stmts.iter().filter(compatible).filter(|s| s.line <= line).rev().find_map(|s| {
                let v = fact_values(s, kind);
                (!v.is_empty()).then_some((s, v))
            });
            let after = || {
                stmts.iter().filter(compatible).filter(|s| s.line > line).find_map(|s| {
                    let v = fact_values(s, kind);
                    (!v.is_empty()).then_some((s, v))
                })
            };
            if let Some((s, values)) = before.or_else(after) {
                found.extend(values.into_iter().map(|v| (s, v)));
            }
        }
        if let Some((stmt, raw)) = found.into_iter().next() {
            return self.expr(&raw, &ctx.merge(&stmt.ctx), stmt.line, 0);
        }
        for name in fact_variables(kind) {
            let r = self.var(name, ctx, line + 1, 0, false);
            if r.iter().any(|r| r.value.is_some()) {
                return r;
            }
        }
        vec![self.unresolved("not written in this script", ctx, line)]
    }
}

fn to_fact<T>(r: &Res, parse: impl Fn(&str) -> Option<T>) -> Fact<T> {
    match r.value.as_deref().map(|v| (v, parse(v))) {
        Some((_, Some(v))) => Fact::known(v, r.how, r.text.clone(), Some(r.at.clone())),
        Some((v, None)) => Fact {
            value: None,
            how: How::Unresolved,
            text: format!("{} = '{v}' is not understood", r.text),
            at: Some(r.at.clone()),
        },
        None => Fact { value: None, how: r.how.min_unresolved(), text: r.text.clone(), at: Some(r.at.clone()) },
    }
}

impl How {
    /// A table miss keeps `Table` (it is a missing pin, not an unknown); anything else unknown is unresolved.
    fn min_unresolved(self) -> How {
        if self == How::Table { How::Table } else { How::Unresolved }
    }
}

fn branch_label(script: &Script, ctx: &Ctx) -> String {
    ctx.branches
        .iter()
        .map(|(c, b)| {
            let case = &script.cases[*c];
            format!("{}={}", case.subject.as_deref().unwrap_or("?"), case.branches[*b].join("|"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every pin in the scripts, and the findings discovery makes on its own (spelling, never passed, eval
/// leaks, missing pins and table entries, k/AL drift).
pub fn discover(scripts: &[Script], tables: &[Table]) -> (Vec<Pin>, Vec<Finding>) {
    use rayon::prelude::*;
    let per_script: Vec<(Vec<Pin>, Vec<Finding>)> = scripts.par_iter().map(|s| discover_one(s, tables)).collect();
    let mut pins = Vec::new();
    let mut findings = Vec::new();
    for (p, f) in per_script {
        pins.extend(p);
        findings.extend(f);
    }
    (pins, findings)
}

fn discover_one(script: &Script, tables: &[Table]) -> (Vec<Pin>, Vec<Finding>) {
    let resolver = Resolver { script, tables };
    let mut pins = Vec::new();
    let mut findings = Vec::new();
    let all_sites: Vec<Site> = script.stmts.iter().filter(|s| s.ctx.eval != Some(true)).flat_map(sites).collect();
    for site in &all_sites {
        let stmt = site.stmt;
        let location = resolver.loc(stmt.line);
        let spelling_problem = spelling_problem(script, site);
        if let Some(message) = &spelling_problem {
            findings.push(Finding::new(Class::Spelling, location.clone(), message.clone()));
        }
        if let Some(message) = never_passed(script, site) {
            findings.push(Finding::new(Class::NeverPassed, location.clone(), message));
        }
        let guard = eval_guard(script, site);
        if guard == EvalGuard::Leaks {
            findings.push(Finding::new(
                Class::EvalLeak,
                location.clone(),
                format!(
                    "{} is not behind an EVAL_ONLY guard: eval runs would use synthetic acceptance (wrap it in `if [ \"${{EVAL_ONLY}}\" != \"true\" ]` or unset it for eval)",
                    site.knob.name()
                ),
            ));
        }
        let mut count = 0;
        for value in resolver.expr(&site.raw, &stmt.ctx, stmt.line, 0) {
            for k in resolver.fact(FactKind::K, &value.ctx, stmt.line, Some(stmt)) {
                if count >= MAX_BRANCHES {
                    break;
                }
                count += 1;
                let ctx = k.ctx.merge(&value.ctx);
                let first = |kind| resolver.fact(kind, &ctx, stmt.line, Some(stmt)).into_iter().next();
                let fact_string = |kind| {
                    first(kind)
                        .map(|r| to_fact(&r, |v| Some(v.to_string())))
                        .unwrap_or_else(|| Fact::unresolved("not written"))
                };
                let mut written = to_fact(&value, |v| v.parse::<f64>().ok().filter(|x| x.is_finite()));
                if written.value.is_none() && written.how == How::Table {
                    findings.push(Finding::new(
                        Class::MissingPin,
                        location.clone(),
                        format!(
                            "{} (table at {}): this k runs with real acceptance instead of a pin",
                            value.text, value.at
                        ),
                    ));
                    written.how = How::Unresolved;
                }
                let k_fact = to_fact(&k, |v| v.parse::<usize>().ok().filter(|k| *k >= 1));
                if k_fact.how == How::Default
                    && !k.depends.iter().any(|d| value.depends.contains(d))
                    && written.value.is_some()
                {
                    findings.push(Finding::new(
                        Class::Drift,
                        location.clone(),
                        format!(
                            "k comes from {} and can be overridden from the environment, but {} = {} does not follow it: an override of k runs with the k = {} value",
                            k.text,
                            site.knob.name(),
                            site.raw,
                            k.value.as_deref().unwrap_or("?")
                        ),
                    ));
                }
                let mode = first(FactKind::Thinking)
                    .map(|r| to_fact(&r, thinking_word))
                    .filter(|f| f.value.is_some())
                    .unwrap_or_else(|| Fact::unresolved("no thinking setting in this script"));
                let sampling = first(FactKind::Sampling)
                    .map(|r| to_fact(&r, |v| Some(v.to_ascii_lowercase())))
                    .filter(|f| f.value.is_some())
                    .unwrap_or_else(|| {
                        Fact::known(
                            "greedy".to_string(),
                            How::Inferred,
                            "no draft_sample_method: engines draft greedily",
                            None,
                        )
                    });
                let mechanism = if value.how == How::Table { Mechanism::LookupTable } else { Mechanism::Script };
                pins.push(Pin {
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
                    written,
                    k: k_fact,
                    model: fact_string(FactKind::Model),
                    drafter: fact_string(FactKind::Drafter),
                    method: fact_string(FactKind::Method),
                    draft_sampling: sampling,
                    mode,
                    eval_guard: guard,
                });
            }
        }
    }
    let unpassed = unpassed_variables(script);
    let has_unpassed = !unpassed.is_empty();
    findings.extend(unpassed);
    if all_sites.is_empty() && !has_unpassed && script.rel.contains("agentic") {
        let spec = script
            .stmts
            .iter()
            .find(|s| !fact_values(s, FactKind::K).is_empty() || s.text.contains("--speculative-config"));
        if let Some(stmt) = spec {
            findings.push(Finding::new(
                Class::MissingPin,
                resolver.loc(stmt.line),
                "speculative decoding is configured but no synthetic acceptance is pinned: this agentic run measures real acceptance",
            ));
        }
    }
    (pins, findings)
}

/// SGLang triple incomplete; vLLM length without the synthetic rejection method.
fn spelling_problem(script: &Script, site: &Site) -> Option<String> {
    match site.knob {
        Knob::SglangSimulateLen => {
            let missing: Vec<&str> = ["SGLANG_SIMULATE_ACC_METHOD", "SGLANG_SIMULATE_ACC_TOKEN_MODE"]
                .into_iter()
                .filter(|name| {
                    !script.stmts.iter().any(|s| {
                        s.ctx.eval != Some(true)
                            && s.ctx.compatible(&site.stmt.ctx)
                            && assignments(&s.text).iter().any(|a| a.name == *name)
                    })
                })
                .collect();
            (!missing.is_empty()).then(|| {
                format!(
                    "SGLANG_SIMULATE_ACC_LEN without {}: the SGLang triple is incomplete (engines.md: METHOD=match-expected, TOKEN_MODE=real-draft-token)",
                    missing.join(" and ")
                )
            })
        }
        Knob::VllmSyntheticLength => {
            let synthetic = json_values(&site.stmt.text, "rejection_sample_method").iter().any(|v| v == "synthetic");
            (!synthetic).then(|| {
                "synthetic_acceptance_length without \"rejection_sample_method\": \"synthetic\": vLLM ignores the pin".to_string()
            })
        }
        _ => None,
    }
}

/// An env knob that is assigned but never exported, or a carrier variable never used.
fn never_passed(script: &Script, site: &Site) -> Option<String> {
    let carrier = site.carrier.as_ref()?;
    if matches!(site.knob, Knob::SglangSimulateLen | Knob::TrtllmForceAccepted) && carrier.name == site.knob.name() {
        let exported = carrier.exported
            || script.stmts.iter().any(|s| {
                let ws = words(&s.text);
                ws.first().is_some_and(|w| w == "export") && ws.iter().any(|w| w == &carrier.name)
            })
            || script.stmts.iter().any(|s| s.text.starts_with("set -a"));
        return (!exported).then(|| format!("{} is set but never exported: the engine never sees it", carrier.name));
    }
    let used = script.stmts.iter().any(|s| !std::ptr::eq(s, site.stmt) && references(&s.text, &carrier.name));
    (!used).then(|| format!("{} holds the pin but is never passed to the engine", carrier.name))
}

/// Variables whose name says they hold an acceptance length, assigned a number, and never used.
fn unpassed_variables(script: &Script) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for stmt in &script.stmts {
        for a in assignments(&stmt.text) {
            let upper = a.name.to_ascii_uppercase();
            let pin_like =
                (upper.contains("ACC_LEN") || upper.contains("ACCEPT") || upper.ends_with("_AL") || upper == "AL")
                    && !upper.starts_with("SGLANG_SIMULATE")
                    && !upper.starts_with("TLLM_");
            if !pin_like || unquote(&a.value).parse::<f64>().is_err() || !seen.insert(a.name.clone()) {
                continue;
            }
            let used = script
                .stmts
                .iter()
                .any(|s| !s.text.starts_with("echo") && !s.text.starts_with("printf") && references(&s.text, &a.name));
            if !used {
                out.push(Finding::new(
                    Class::NeverPassed,
                    Location::new(&script.rel, stmt.line),
                    format!("{} = {} is computed but no engine flag uses it", a.name, a.value),
                ));
            }
        }
    }
    out
}

/// Whether a site is kept out of eval runs: written in a non-eval branch, or its carrier is unset (or
/// only used) under a guard.
fn eval_guard(script: &Script, site: &Site) -> EvalGuard {
    if site.stmt.ctx.eval == Some(false) {
        return EvalGuard::Guarded;
    }
    let Some(carrier) = &site.carrier else { return EvalGuard::Leaks };
    let name = &carrier.name;
    let dropped = script.stmts.iter().any(|s| {
        s.ctx.eval == Some(true) && {
            let ws = words(&s.text);
            (ws.first().is_some_and(|w| w == "unset") && ws.iter().any(|w| w == name))
                || assignments(&s.text).iter().any(|a| &a.name == name)
        }
    });
    let uses: Vec<&Stmt> =
        script.stmts.iter().filter(|s| !std::ptr::eq(*s, site.stmt) && references(&s.text, name)).collect();
    let only_guarded_uses = !uses.is_empty() && uses.iter().all(|s| s.ctx.eval == Some(false));
    if dropped || only_guarded_uses { EvalGuard::Guarded } else { EvalGuard::Leaks }
}

/// Comments and prose that name another AL than the code pins (drift, class 10).
pub fn prose_drift(files: &[TextFile], pins: &[Pin]) -> Vec<Finding> {
    let mut by_file: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for pin in pins {
        let entry = by_file.entry(pin.location.file.as_str()).or_default();
        if let Some(w) = pin.written.value {
            entry.push(w);
            if let Some(al) = pin.knob.implied_al(w, pin.k.value) {
                entry.push(al);
            }
        }
    }
    let stale = |numbers: &[f64], values: &[f64]| -> Option<f64> {
        numbers.iter().copied().find(|n| !values.iter().any(|v| (v - n).abs() <= AL_TOLERANCE))
    };
    let mut out = Vec::new();
    for file in files {
        match file.kind {
            Kind::Shell => {
                let Some(values) = by_file.get(file.rel.as_str()) else { continue };
                for (line, comment) in logical_lines(&file.text).1 {
                    if !mentions_al(&comment) {
                        continue;
                    }
                    if let Some(n) = stale(&al_numbers(&comment), values) {
                        out.push(Finding::new(
                            Class::Drift,
                            Location::new(&file.rel, line),
                            format!("comment names {n} but the code pins {}", list(values)),
                        ));
                    }
                }
            }
            Kind::Prose => {
                for (i, line) in file.text.lines().enumerate() {
                    if !mentions_al(line) {
                        continue;
                    }
                    let named: Vec<(&str, &Vec<f64>)> = by_file
                        .iter()
                        .filter(|(path, _)| {
                            let base = path.rsplit('/').next().unwrap_or(path);
                            line.contains(base)
                        })
                        .map(|(p, v)| (*p, v))
                        .collect();
                    if let [(path, values)] = named.as_slice()
                        && let Some(n) = stale(&al_numbers(line), values)
                    {
                        out.push(Finding::new(
                            Class::Drift,
                            Location::new(&file.rel, i + 1),
                            format!("names {n} for {path}, but the code pins {}", list(values)),
                        ));
                    }
                }
            }
            Kind::Yaml => {}
        }
    }
    out
}

fn list(values: &[f64]) -> String {
    let mut v: Vec<String> = values.iter().map(|x| super::plain_number(*x, 4)).collect();
    v.dedup();
    v.join(", ")
}

fn mentions_al(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("acceptance") || text.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == "AL")
}

/// Numbers written like acceptance lengths: `d.dd` in [1, 10), standing alone (not `glm5.2` or `v1.25.0`).
fn al_numbers(text: &str) -> Vec<f64> {
    text.split(|c: char| c.is_whitespace() || "(),;:=[]{}\"'`".contains(c))
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| w.len() == 4 && w.as_bytes()[1] == b'.' && w.chars().filter(|c| c.is_ascii_digit()).count() == 3)
        .filter_map(|w| w.parse::<f64>().ok())
        .filter(|v| (1.0..10.0).contains(v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pins_of(text: &str) -> (Vec<Pin>, Vec<Finding>) {
        let script = parse("agentic/x.sh", text);
        let tables = tables(std::slice::from_ref(&script));
        discover(&[script], &tables)
    }

    #[test]
    fn case_branches_give_one_pin_each_and_bind_their_subject() {
        let (pins, _) = pins_of(
            "K=${NUM_SPEC_TOKENS:-3}\ncase \"$K\" in\n  2) AL=2.38 ;;\n  3) AL=2.83 ;;\nesac\n\
             if [ \"$EVAL_ONLY\" != \"true\" ]; then\n  ARGS=\"--spec-decode-acceptance-length $AL\"\nfi\n\
             atom serve --num-speculative-tokens \"$K\" $ARGS\n",
        );
        let mut got: Vec<(Option<f64>, Option<usize>, How)> =
            pins.iter().map(|p| (p.written.value, p.k.value, p.k.how)).collect();
        got.sort_by_key(|g| g.1);
        assert_eq!(got, [(Some(2.38), Some(2), How::Branch), (Some(2.83), Some(3), How::Branch)]);
        assert!(pins.iter().all(|p| p.eval_guard == EvalGuard::Guarded));
    }

    #[test]
    fn awk_rates_defaults_and_escaped_json() {
        let (pins, findings) = pins_of(
            "AL=2.99\nK=3\nR=$(awk \"BEGIN{print ($AL-1)/$K}\")\n[ \"$EVAL_ONLY\" = \"true\" ] || FLAGS=\"--spec-decode-acceptance-rate $R\"\nrun $FLAGS\n\
             CFG=\"{\\\"num_speculative_tokens\\\": ${K}, \\\"synthetic_acceptance_length\\\": ${SAL:-2.5}}\"\n",
        );
        let rate = pins.iter().find(|p| p.knob == Knob::AtomRate).unwrap();
        assert_eq!(rate.written.value, Some(0.663333));
        assert_eq!(rate.written.how, How::Computed);
        assert_eq!(rate.eval_guard, EvalGuard::Guarded);
        let vllm = pins.iter().find(|p| p.knob == Knob::VllmSyntheticLength).unwrap();
        assert_eq!((vllm.written.value, vllm.written.how, vllm.k.value), (Some(2.5), How::Default, Some(3)));
        let classes: Vec<Class> = findings.iter().map(|f| f.class).collect();
        assert!(classes.contains(&Class::Spelling), "{findings:?}");
        assert!(classes.contains(&Class::NeverPassed), "{findings:?}");
        assert!(classes.contains(&Class::EvalLeak), "{findings:?}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Whatever `alsim pin` generates, the check reads back as the same acceptance length.
        #[test]
        fn generated_settings_read_back(k in 1usize..=8, hundredths in 0u32..=800, engine in 0usize..5) {
            let al = 1.0 + f64::from(hundredths.min(100 * k as u32)) / 100.0;
            let (engine, rate) = [(Engine::Atom, false), (Engine::Atom, true), (Engine::Vllm, false), (Engine::Sglang, false), (Engine::Trtllm, false)][engine];
            let setting = crate::pins::native_setting(engine, al, k, rate, "test").unwrap();
            let body = match engine {
                Engine::Vllm => format!("CFG='{{\"method\": \"eagle3\", {}}}'", setting.lines[0]),
                Engine::Atom => format!("ARGS=\"{}\"", setting.lines[0]),
                _ => setting.lines.iter().map(|l| format!("export {l}")).collect::<Vec<_>>().join("\n"),
            };
            let (pins, _) = pins_of(&format!("if [ \"$EVAL_ONLY\" != true ]; then\n{body}\nfi\nrun --num-speculative-tokens {k} $ARGS $CFG\n"));
            proptest::prop_assert_eq!(pins.len(), 1);
            let pin = &pins[0];
            proptest::prop_assert_eq!(pin.k.value, Some(k));
            let implied = pin.knob.implied_al(pin.written.value.unwrap(), pin.k.value).unwrap();
            proptest::prop_assert!((implied - al).abs() < 1e-3 * k as f64, "{} vs {}", implied, al);
            proptest::prop_assert_eq!(pin.eval_guard, EvalGuard::Guarded);
        }
    }

    #[test]
    fn helpers() {
        assert!(glob("MiniMax-M3*", "MiniMax-M3-MXFP4"));
        assert!(!glob("2", "3"));
        assert_eq!(arithmetic("(2.83-1)/3").map(format_g6).as_deref(), Some("0.61"));
        assert_eq!(json_values("{\\\"model\\\": \\\"$DRAFT\\\", \\\"k\\\": 3}", "model"), ["$DRAFT"]);
        assert_eq!(
            flag_values("x --spec-decode-acceptance-length=2.83 y", "--spec-decode-acceptance-length"),
            ["2.83"]
        );
        assert_eq!(al_numbers("golden AL 2.78 (k=3), rate 0.61, glm5.2 v1.25.0 3.00."), [2.78, 3.0]);
    }
}
