//! The bash reader: launch scripts parsed with brush-parser and read without running them. It stands on
//! its own — words and expansions ([`word`]), statements and their arms (this module), `source`d files
//! ([`mod@include`]) and variable resolution ([`resolve`]) — and imports nothing of the pin check, whose
//! reading of knobs and facts is built on it (`crate::pins::discover::script`). Of the benchmark repositories'
//! conventions it knows one: which arms run for `EVAL_ONLY` runs, since every value depends on it.
//!
//! A script is flattened into statements ([`Stmt`]): assignments and commands, each with its context
//! ([`Ctx`]) — the arms of every `if`/`elif`/`else` and `case` it sits in, whether an `EVAL_ONLY` test
//! decides that it runs, and the function it belongs to. Arms of one choice exclude each other, so a
//! value assigned in one arm and one read in another are never combined: every arm is its own value.
//! Conditions are kept as [`Cond`] trees, so a test on `EVAL_ONLY` (`[ "${EVAL_ONLY:-false}" != true ]`,
//! `[[ … ]] || [[ … ]]`) is understood however it is spelled, and a condition on a config entry's
//! variables (`$FRAMEWORK == dynamo-trt`) can be evaluated for that entry.
//!
//! Reading a value ([`resolve`]) and shared lookup tables ([`case_table`]: a `case` whose subject reads
//! variables, the key a resolver gives it and the arm that key selects) are built on this model. A `source`d file
//! ([`mod@include`]) gives the script the variables it sets, from the statement that reads it on. Where a
//! command's standard output goes (`> FILE`, `>> FILE`, a `{ …; } > FILE` group's) is kept, with the
//! `for` loops around it, so what a script writes into a file can be read back ([`output`]).

mod build;
pub(crate) mod case_table;
pub(crate) mod include;
pub(crate) mod output;
pub(crate) mod resolve;
pub(crate) mod text;
pub(crate) mod word;

use std::collections::HashMap;

use serde::Serialize;

pub(crate) use word::{Part, Template, VarOp, Word};

/// How a value was decided: by the reader (a literal, a variable, a default, an arm, a computation, a
/// lookup table, the caller's environment) or, for the pin check's facts read elsewhere, injected from a
/// master config or only assumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum How {
    /// Written as a literal where it is used.
    Literal,
    /// Read through a shell variable assigned in the file.
    Variable,
    /// The default of `${VAR:-default}` (the environment can override it), or an engine's or model's
    /// documented default thinking mode where no file states one (`thinking::DEFAULTS`).
    Default,
    /// Fixed by the `if`/`case` arm the value is read in.
    Branch,
    /// Computed (`$(awk …)`, `$((…))`, `printf %.2f`) from other facts.
    Computed,
    /// Looked up in a shared launch-code table.
    Table,
    /// Injected from a master config entry into the recipe.
    Injected,
    /// Set by the config entry that runs the script (`model:` → `MODEL`, `additional-settings`).
    Entry,
    /// Not written anywhere and only assumed (greedy drafting, llama.cpp's draft length, a script's model
    /// from its name).
    Inferred,
    /// Could not be decided from the files; never guessed.
    Unresolved,
}

impl How {
    /// The word shown in tables.
    pub fn name(self) -> &'static str {
        match self {
            How::Literal => "literal",
            How::Variable => "variable",
            How::Default => "default",
            How::Branch => "branch",
            How::Computed => "computed",
            How::Table => "table",
            How::Injected => "injected",
            How::Entry => "entry",
            How::Inferred => "inferred",
            How::Unresolved => "unresolved",
        }
    }
}

/// The arms a statement sits in and what they decide.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Ctx {
    /// (choice, arm) pairs, sorted by choice.
    pub arms: Vec<(u32, u32)>,
    /// `Some(true)`: runs only when `EVAL_ONLY` is true; `Some(false)`: only when it is not.
    pub eval: Option<bool>,
    /// The function the statement is defined in.
    pub func: Option<u32>,
}

impl Ctx {
    /// Whether two contexts can hold in one run: no choice takes two arms, and EVAL_ONLY agrees.
    pub(crate) fn compatible(&self, other: &Ctx) -> bool {
        let mut i = 0;
        let mut j = 0;
        while i < self.arms.len() && j < other.arms.len() {
            let (a, b) = (self.arms[i], other.arms[j]);
            if a.0 == b.0 {
                if a.1 != b.1 {
                    return false;
                }
                i += 1;
                j += 1;
            } else if a.0 < b.0 {
                i += 1;
            } else {
                j += 1;
            }
        }
        !matches!((self.eval, other.eval), (Some(a), Some(b)) if a != b)
    }

    /// Both contexts at once (callers check [`Ctx::compatible`] first).
    pub(crate) fn merge(&self, other: &Ctx) -> Ctx {
        let mut arms = self.arms.clone();
        arms.extend(other.arms.iter().copied());
        arms.sort_unstable();
        arms.dedup();
        Ctx { arms, eval: self.eval.or(other.eval), func: self.func }
    }

    /// Whether `self` holds whenever `base` does (it adds no arm and no EVAL_ONLY condition).
    pub(crate) fn implied_by(&self, base: &Ctx) -> bool {
        self.arms.iter().all(|a| base.arms.contains(a)) && (self.eval.is_none() || self.eval == base.eval)
    }

    fn with_arm(&self, choice: u32, arm: u32) -> Ctx {
        let mut ctx = self.clone();
        ctx.arms.push((choice, arm));
        ctx.arms.sort_unstable();
        ctx
    }
}

/// An `if` chain or a `case`.
#[derive(Debug, Clone)]
pub(crate) struct Conditional {
    /// What selects the arm.
    pub kind: ConditionalKind,
    /// The arms, in order; an `if` without `else` has an implicit last arm that runs nothing.
    pub arms: Vec<Arm>,
}

/// What a choice tests.
#[derive(Debug, Clone)]
pub(crate) enum ConditionalKind {
    /// `if`/`elif`/`else`.
    If,
    /// `case WORD in …`.
    Case {
        /// The word matched against the patterns.
        subject: Word,
    },
}

/// One arm.
#[derive(Debug, Clone)]
pub(crate) struct Arm {
    /// `if`/`elif` arms: the condition (`None` for `else`).
    pub cond: Option<Cond>,
    /// `case` arms: the patterns.
    pub patterns: Vec<Word>,
}

/// A condition as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cond {
    /// Both.
    And(Box<Cond>, Box<Cond>),
    /// Either.
    Or(Box<Cond>, Box<Cond>),
    /// Negation.
    Not(Box<Cond>),
    /// One test.
    Test(Test),
    /// A command whose status the check cannot know.
    Unknown,
}

/// A `[ … ]`, `test …` or `[[ … ]]` test.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Test {
    /// The operator.
    pub op: TestOp,
    /// Operands (one for unary tests).
    pub args: Vec<Word>,
}

/// Test operators the check understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TestOp {
    /// `=`, `==` (a glob on the right in `[[ ]]`).
    Eq,
    /// `!=`.
    Ne,
    /// `-eq`.
    NumEq,
    /// `-ne`.
    NumNe,
    /// `-gt`.
    Gt,
    /// `-ge`.
    Ge,
    /// `-lt`.
    Lt,
    /// `-le`.
    Le,
    /// `-z`.
    Empty,
    /// `-n`.
    NonEmpty,
    /// `-f`, `-e`, `-d`.
    Exists,
    /// Anything else.
    Other,
}

impl Cond {
    /// Whether the condition holding implies `EVAL_ONLY` is `want` (`true`) or not true (`false`).
    pub(crate) fn implies_eval(&self, want: bool) -> bool {
        match self {
            Cond::Test(t) => t.eval_atom() == Some(want),
            Cond::And(a, b) => a.implies_eval(want) || b.implies_eval(want),
            Cond::Or(a, b) => a.implies_eval(want) && b.implies_eval(want),
            Cond::Not(a) => a.negation_implies_eval(want),
            Cond::Unknown => false,
        }
    }

    /// Whether the condition failing implies `EVAL_ONLY` is `want`.
    pub(crate) fn negation_implies_eval(&self, want: bool) -> bool {
        match self {
            Cond::Test(t) => t.eval_atom() == Some(!want),
            Cond::And(a, b) => a.negation_implies_eval(want) && b.negation_implies_eval(want),
            Cond::Or(a, b) => a.negation_implies_eval(want) || b.negation_implies_eval(want),
            Cond::Not(a) => a.implies_eval(want),
            Cond::Unknown => false,
        }
    }

    /// What an arm guarded by this condition (`holds`) or its failure says about `EVAL_ONLY`.
    fn eval_of(&self, holds: bool) -> Option<bool> {
        let implies = |want| if holds { self.implies_eval(want) } else { self.negation_implies_eval(want) };
        if implies(true) {
            Some(true)
        } else if implies(false) {
            Some(false)
        } else {
            None
        }
    }
}

impl Test {
    /// `Some(true)`: the test holds exactly when `EVAL_ONLY` is true; `Some(false)`: exactly when it is not.
    fn eval_atom(&self) -> Option<bool> {
        let is_eval = |w: &Word| w.sole_variable() == Some("EVAL_ONLY");
        let literal = |w: &Word| w.literal().map(|s| s.to_ascii_lowercase());
        let (var, lit) = match self.args.as_slice() {
            [a] if is_eval(a) => (a, None),
            [a, b] if is_eval(a) => (a, literal(b)),
            [a, b] if is_eval(b) => (b, literal(a)),
            _ => return None,
        };
        let _ = var;
        let truthy = |s: &str| matches!(s, "true" | "1" | "yes");
        let falsy = |s: &str| matches!(s, "false" | "0" | "no");
        match (self.op, lit.as_deref()) {
            (TestOp::Eq | TestOp::NumEq, Some(s)) if truthy(s) => Some(true),
            (TestOp::Eq | TestOp::NumEq, Some(s)) if falsy(s) => Some(false),
            (TestOp::Ne | TestOp::NumNe, Some(s)) if truthy(s) => Some(false),
            (TestOp::Ne | TestOp::NumNe, Some(s)) if falsy(s) => Some(true),
            (TestOp::Empty, None) => Some(false),
            _ => None,
        }
    }
}

/// A statement: an assignment or a command, in its context.
#[derive(Debug, Clone)]
pub(crate) struct Stmt {
    /// 1-based line where it starts.
    pub line: usize,
    /// Its context.
    pub ctx: Ctx,
    /// What it does.
    pub kind: StmtKind,
}

/// Assignment or command.
#[derive(Debug, Clone)]
pub(crate) enum StmtKind {
    /// `NAME=value`, `export NAME=value`, `local NAME=value`, `NAME=(…)`.
    Assign(Assign),
    /// A command with its words, prefix assignments and heredoc bodies.
    Command(Command),
}

/// One assignment.
#[derive(Debug, Clone)]
pub(crate) struct Assign {
    /// The variable.
    pub name: String,
    /// The value.
    pub value: AssignValue,
    /// Written with `export` (or `declare -x`).
    pub exported: bool,
    /// `+=`.
    pub append: bool,
    /// 1-based line.
    pub line: usize,
}

/// A scalar or array value.
#[derive(Debug, Clone)]
pub(crate) enum AssignValue {
    /// `NAME=word`.
    Scalar(Word),
    /// `NAME=(w1 w2 …)`.
    Array(Vec<Word>),
}

impl AssignValue {
    /// The words of the value.
    pub(crate) fn words(&self) -> &[Word] {
        match self {
            AssignValue::Scalar(w) => std::slice::from_ref(w),
            AssignValue::Array(ws) => ws,
        }
    }
}

/// One command.
#[derive(Debug, Clone)]
pub(crate) struct Command {
    /// Name and arguments.
    pub words: Vec<Word>,
    /// `NAME=value` before the command name.
    pub env: Vec<Assign>,
    /// Heredoc bodies fed to it.
    pub heredocs: Vec<Word>,
    /// The file its standard output goes to: its own `>`/`>>`, else that of the group it runs in.
    pub stdout: Option<Output>,
}

/// A file a command's standard output is written to.
#[derive(Debug, Clone)]
pub(crate) struct Output {
    /// The file as written.
    pub target: Word,
    /// Where the file is emptied before this command writes: the context its `>` runs in (a group's `>`
    /// empties it once, before the group's first command); `None` for `>>` and a group's later commands.
    pub empties: Option<Ctx>,
}

/// A `for NAME in WORDS…` loop: the statements of its body see `NAME` take each word in turn.
#[derive(Debug, Clone)]
pub(crate) struct Loop {
    /// The loop variable.
    pub var: String,
    /// The words it takes.
    pub items: Vec<Word>,
    /// The body's statements, by index.
    pub body: std::ops::Range<usize>,
}

impl Command {
    /// The command name when written literally.
    pub(crate) fn name(&self) -> Option<String> {
        self.words.first().and_then(Word::literal)
    }
}

/// A parsed script.
#[derive(Debug, Clone)]
pub(crate) struct Script {
    /// Path relative to the repository root.
    pub rel: String,
    /// Statements in source order.
    pub stmts: Vec<Stmt>,
    /// Choices, indexed by [`Ctx::arms`].
    pub choices: Vec<Conditional>,
    /// Function names, indexed by [`Ctx::func`].
    pub functions: Vec<String>,
    /// The command list of every `$(…)` in the script, by the byte where its text starts.
    subs: HashMap<usize, Sub>,
    /// Byte offset of each line start.
    line_starts: Vec<usize>,
    /// Statements assigning each variable, in source order.
    assigns: HashMap<String, Vec<usize>>,
    /// The files it `source`s, in source order (filled once every script is parsed: [`include::resolve_all`]).
    pub includes: Vec<include::Include>,
    /// The scripts that `source` this one: (script index, statement index of the `source`).
    pub sourced_by: Vec<(usize, usize)>,
    /// Its `for … in …` loops.
    pub loops: Vec<Loop>,
}

/// The commands of a `$(…)`: its first and-or list, as `cmd`, `&& cmd`, `|| cmd`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sub {
    /// Each command with how it joins the previous one (`None` first, `Some(true)` for `&&`).
    pub items: Vec<(Option<bool>, SubItem)>,
}

/// One command of a `$(…)`.
#[derive(Debug, Clone)]
pub(crate) enum SubItem {
    /// A simple command's words (name first).
    Words(Vec<Word>),
    /// A test.
    Test(Cond),
}

/// A script brush-parser could not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseFailure {
    /// Where, when the parser says.
    pub line: Option<usize>,
    /// The parser's message.
    pub message: String,
}

impl Script {
    /// Parses `text`.
    ///
    /// # Errors
    /// The parser's message and line when the text is not valid bash.
    pub(crate) fn parse(rel: &str, text: &str) -> Result<Script, ParseFailure> {
        build::parse(rel, text)
    }

    /// The statements assigning `name`, in source order.
    pub(crate) fn assignments_of(&self, name: &str) -> &[usize] {
        self.assigns.get(name).map_or(&[], Vec::as_slice)
    }

    /// The 1-based line of a byte offset.
    pub(crate) fn line_of(&self, byte: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= byte).max(1)
    }

    /// The commands of the `$(…)` whose text starts at `start`.
    pub(crate) fn sub(&self, start: usize) -> Option<&Sub> {
        self.subs.get(&start)
    }

    /// The words of the first command of the `$(…)` whose text starts at `start`.
    pub(crate) fn sub_command(&self, start: usize) -> Option<&[Word]> {
        match self.subs.get(&start)?.items.first()? {
            (_, SubItem::Words(words)) => Some(words),
            _ => None,
        }
    }

    /// `printf FORMAT ARGS…` in a `$(…)`: the format and the arguments.
    pub(crate) fn printf(&self, start: usize) -> Option<(Word, Vec<Word>)> {
        let words = self.sub_command(start)?;
        let (name, rest) = words.split_first()?;
        if name.literal().as_deref() != Some("printf") {
            return None;
        }
        let rest: Vec<&Word> = rest.iter().skip_while(|w| w.literal().as_deref() == Some("--")).collect();
        let (format, args) = rest.split_first()?;
        if format.literal().is_some_and(|f| f.starts_with('-')) {
            return None;
        }
        Some(((*format).clone(), args.iter().map(|w| (*w).clone()).collect()))
    }

    /// Renders a word to a template, expanding `$(printf …)` in place.
    pub(crate) fn template(&self, word: &Word) -> Template {
        Template::of(word, &|_body, start| self.printf(start))
    }

    /// The arms' conditions a context implies: (condition, holds).
    pub(crate) fn conditions(&self, ctx: &Ctx) -> Vec<(&Cond, bool)> {
        let mut out = Vec::new();
        for &(choice, arm) in &ctx.arms {
            let choice = &self.choices[choice as usize];
            if !matches!(choice.kind, ConditionalKind::If) {
                continue;
            }
            for (i, a) in choice.arms.iter().enumerate().take(arm as usize + 1) {
                if let Some(cond) = &a.cond {
                    out.push((cond, i == arm as usize));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bash::word::Value;

    fn assigns(script: &Script, name: &str) -> Vec<(usize, Ctx)> {
        script
            .stmts
            .iter()
            .filter_map(|s| match &s.kind {
                StmtKind::Assign(a) if a.name == name => Some((s.line, s.ctx.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn if_elif_else_and_case_arms_are_exclusive() {
        let text = "if [ \"$CONC\" -le 8 ]; then\n  K=7\nelif [ \"$CONC\" -le 16 ]; then\n  K=3\nelse\n  K=0\nfi\n\
                    case \"$K\" in\n  7) AL=3.84 ;;\n  3) AL=3.00 ;;\nesac\n";
        let script = Script::parse("x.sh", text).unwrap();
        let k = assigns(&script, "K");
        assert_eq!(k.iter().map(|(l, _)| *l).collect::<Vec<_>>(), [2, 4, 6]);
        assert!(!k[0].1.compatible(&k[1].1));
        let al = assigns(&script, "AL");
        assert!(al[0].1.compatible(&k[0].1) && !al[0].1.compatible(&al[1].1));
    }

    #[test]
    fn eval_only_tests_however_spelled() {
        let text = "if [ \"${EVAL_ONLY:-false}\" != \"true\" ]; then\n  A=1\nelse\n  A=2\nfi\n\
                    if [[ \"${EVAL_ONLY:-false}\" == \"true\" ]] || [[ \"${RUN_EVAL:-false}\" == \"true\" ]]; then\n  B=1\nelse\n  B=2\nfi\n\
                    [ \"$EVAL_ONLY\" = true ] || C=1\n";
        let script = Script::parse("x.sh", text).unwrap();
        let eval = |n: &str| assigns(&script, n).into_iter().map(|(_, c)| c.eval).collect::<Vec<_>>();
        assert_eq!(eval("A"), [Some(false), Some(true)]);
        assert_eq!(eval("B"), [None, Some(false)]);
        assert_eq!(eval("C"), [Some(false)]);
    }

    #[test]
    fn exports_arrays_heredocs_and_printf() {
        let text = "export A=2.49 B\nARR=(--x \"$Y\"\n  --y 1)\nZ=$(printf '{\"a\":%.2f}' \"$AL\")\n\
                    cat << EOF > f.yaml\nmax_draft_len: $K\nEOF\n";
        let script = Script::parse("x.sh", text).unwrap();
        let StmtKind::Assign(a) = &script.stmts[0].kind else { panic!() };
        assert!(a.exported && a.name == "A");
        let StmtKind::Assign(arr) = &script.stmts[2].kind else { panic!("{:?}", script.stmts[2]) };
        let AssignValue::Array(items) = &arr.value else { panic!() };
        assert_eq!(items.iter().map(|w| w.line).collect::<Vec<_>>(), [2, 2, 3, 3]);
        assert_eq!(items[3].literal_span().map(|(s, e)| &text[s..e]), Some("1"));
        let StmtKind::Assign(z) = &script.stmts[3].kind else { panic!() };
        let t = script.template(&z.value.words()[0]);
        assert!(matches!(t.json("a").as_slice(), [Value::Hole(word::Hole::Printf { spec, .. })] if spec == "%.2f"));
        let StmtKind::Command(cat) = &script.stmts[4].kind else { panic!() };
        assert_eq!(cat.heredocs[0].line, 6);
    }
}
