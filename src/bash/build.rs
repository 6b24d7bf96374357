//! From brush-parser's syntax tree to the flat statements of [`Script`]: every `if`/`elif`/`else` and
//! `case` arm becomes a context, `[ … ]`/`[[ … ]]` tests become [`Cond`] trees, `$(…)` bodies and
//! heredocs are kept with their byte offsets, so every value keeps its line.

use std::collections::HashMap;

use brush_parser::ast;

use super::*;

/// Parses `text` into a script's statements, choices, functions and `$(…)` bodies.
pub(super) fn parse(rel: &str, text: &str) -> Result<Script, ParseFailure> {
    let program = parse_program(text).map_err(|e| ParseFailure { line: error_line(&e), message: e.to_string() })?;
    let line_starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let mut builder = Builder {
        script: Script {
            rel: rel.to_string(),
            stmts: Vec::new(),
            choices: Vec::new(),
            functions: Vec::new(),
            subs: HashMap::new(),
            line_starts,
            assigns: HashMap::new(),
            includes: Vec::new(),
            sourced_by: Vec::new(),
            loops: Vec::new(),
        },
        text,
        stdout: None,
    };
    let src = word::Source::new(text, 0);
    for list in &program.complete_commands {
        builder.list(list, &Ctx::default(), &src);
    }
    let mut script = builder.script;
    for (i, stmt) in script.stmts.iter().enumerate() {
        if let StmtKind::Assign(a) = &stmt.kind {
            script.assigns.entry(a.name.clone()).or_default().push(i);
        }
    }
    Ok(script)
}

fn parse_program(text: &str) -> Result<ast::Program, brush_parser::ParseError> {
    let mut parser =
        brush_parser::Parser::new(std::io::Cursor::new(text.as_bytes()), &brush_parser::ParserOptions::default());
    parser.parse_program()
}

fn error_line(error: &brush_parser::ParseError) -> Option<usize> {
    let text = format!("{error:?}");
    let at = text.find("line: ")?;
    text[at + 6..].chars().take_while(char::is_ascii_digit).collect::<String>().parse().ok()
}

struct Builder<'t> {
    script: Script,
    text: &'t str,
    /// Where the group being read sends its standard output.
    stdout: Option<Output>,
}

impl Builder<'_> {
    fn word(&mut self, w: &ast::Word, src: &word::Source) -> Word {
        let start = w.loc.as_ref().map_or(src.base, |l| src.byte(l.start.index));
        self.word_at(&w.value, start)
    }

    fn word_at(&mut self, raw: &str, start: usize) -> Word {
        let word = word::convert(raw, start, self.script.line_of(start));
        self.collect_subs(&word);
        word
    }

    /// Parses every `$(…)` of a word once, so templates and the resolver can read its command.
    fn collect_subs(&mut self, word: &Word) {
        for part in &word.parts {
            match part {
                Part::Cmd { body, start } if !self.script.subs.contains_key(start) => {
                    let sub = self.sub(body, *start);
                    self.script.subs.insert(*start, sub);
                }
                Part::Var { op: VarOp::Default(default), .. } => self.collect_subs(default),
                _ => {}
            }
        }
    }

    fn sub(&mut self, body: &str, start: usize) -> Sub {
        let Ok(program) = parse_program(body) else { return Sub::default() };
        let src = word::Source::new(body, start);
        let Some(first) = program.complete_commands.first().and_then(|l| l.0.first()) else { return Sub::default() };
        let mut items = vec![(None, self.sub_item(&first.0.first, &src))];
        for next in &first.0.additional {
            let (pipeline, and) = match next {
                ast::AndOr::And(p) => (p, true),
                ast::AndOr::Or(p) => (p, false),
            };
            items.push((Some(and), self.sub_item(pipeline, &src)));
        }
        Sub { items }
    }

    fn sub_item(&mut self, pipeline: &ast::Pipeline, src: &word::Source) -> SubItem {
        if let Some(cond) = self.pipeline_cond(pipeline, src) {
            return SubItem::Test(cond);
        }
        let Some(ast::Command::Simple(simple)) = pipeline.seq.first() else { return SubItem::Words(Vec::new()) };
        let mut words = Vec::new();
        if let Some(w) = &simple.word_or_name {
            words.push(self.word(w, src));
        }
        for item in simple.suffix.iter().flat_map(|s| s.0.iter()) {
            match item {
                ast::CommandPrefixOrSuffixItem::Word(w) => words.push(self.word(w, src)),
                ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w) => words.push(self.word(w, src)),
                _ => {}
            }
        }
        SubItem::Words(words)
    }

    fn list(&mut self, list: &ast::CompoundList, ctx: &Ctx, src: &word::Source) {
        for item in &list.0 {
            self.and_or(&item.0, ctx, src);
        }
    }

    fn and_or(&mut self, list: &ast::AndOrList, ctx: &Ctx, src: &word::Source) {
        self.pipeline(&list.first, ctx, src);
        let mut previous = self.pipeline_cond(&list.first, src);
        for next in &list.additional {
            let (pipeline, holds) = match next {
                ast::AndOr::And(p) => (p, true),
                ast::AndOr::Or(p) => (p, false),
            };
            let mut next_ctx = ctx.clone();
            if let Some(eval) = previous.as_ref().and_then(|c| c.eval_of(holds)) {
                next_ctx.eval = Some(eval);
            }
            self.pipeline(pipeline, &next_ctx, src);
            previous = None;
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, ctx: &Ctx, src: &word::Source) {
        for command in &pipeline.seq {
            self.command(command, ctx, src);
        }
    }

    fn pipeline_cond(&mut self, pipeline: &ast::Pipeline, src: &word::Source) -> Option<Cond> {
        let [command] = pipeline.seq.as_slice() else { return None };
        let cond = self.command_cond(command, src)?;
        Some(if pipeline.bang { Cond::Not(Box::new(cond)) } else { cond })
    }

    fn command_cond(&mut self, command: &ast::Command, src: &word::Source) -> Option<Cond> {
        match command {
            ast::Command::Simple(simple) => {
                let name = simple.word_or_name.as_ref()?.value.as_str();
                if name != "[" && name != "test" {
                    return None;
                }
                let mut args: Vec<Word> = simple
                    .suffix
                    .iter()
                    .flat_map(|s| s.0.iter())
                    .filter_map(|item| match item {
                        ast::CommandPrefixOrSuffixItem::Word(w) => Some(self.word(w, src)),
                        _ => None,
                    })
                    .collect();
                if name == "[" && args.last().and_then(Word::literal).as_deref() == Some("]") {
                    args.pop();
                }
                Some(bracket_test(args))
            }
            ast::Command::ExtendedTest(test, _) => Some(self.extended(&test.expr, src)),
            _ => None,
        }
    }

    fn extended(&mut self, expr: &ast::ExtendedTestExpr, src: &word::Source) -> Cond {
        use ast::ExtendedTestExpr as E;
        match expr {
            E::And(a, b) => Cond::And(Box::new(self.extended(a, src)), Box::new(self.extended(b, src))),
            E::Or(a, b) => Cond::Or(Box::new(self.extended(a, src)), Box::new(self.extended(b, src))),
            E::Not(a) => Cond::Not(Box::new(self.extended(a, src))),
            E::Parenthesized(a) => self.extended(a, src),
            E::UnaryTest(pred, w) => {
                let op = unary_op(&pred.to_string());
                Cond::Test(Test { op, args: vec![self.word(w, src)] })
            }
            E::BinaryTest(pred, a, b) => {
                let op = binary_op(&pred.to_string());
                Cond::Test(Test { op, args: vec![self.word(a, src), self.word(b, src)] })
            }
        }
    }

    fn cond_list(&mut self, list: &ast::CompoundList, src: &word::Source) -> Cond {
        let [item] = list.0.as_slice() else { return Cond::Unknown };
        let mut cond = self.pipeline_cond(&item.0.first, src).unwrap_or(Cond::Unknown);
        for next in &item.0.additional {
            match next {
                ast::AndOr::And(p) => {
                    let c = self.pipeline_cond(p, src).unwrap_or(Cond::Unknown);
                    cond = Cond::And(Box::new(cond), Box::new(c));
                }
                ast::AndOr::Or(p) => {
                    let c = self.pipeline_cond(p, src).unwrap_or(Cond::Unknown);
                    cond = Cond::Or(Box::new(cond), Box::new(c));
                }
            }
        }
        cond
    }

    fn command(&mut self, command: &ast::Command, ctx: &Ctx, src: &word::Source) {
        match command {
            ast::Command::Simple(simple) => self.simple(simple, ctx, src),
            ast::Command::Compound(compound, redirects) => {
                let own = redirects.iter().flat_map(|r| r.0.iter()).filter_map(|r| self.stdout_of(r, ctx, src)).last();
                match own {
                    Some(to) => {
                        let outer = std::mem::replace(&mut self.stdout, to);
                        self.compound(compound, ctx, src);
                        self.stdout = outer;
                    }
                    None => self.compound(compound, ctx, src),
                }
            }
            ast::Command::Function(def) => {
                let id = self.script.functions.len() as u32;
                self.script.functions.push(def.fname.value.clone());
                let mut inner = ctx.clone();
                inner.func = Some(id);
                self.compound(&def.body.0, &inner, src);
            }
            ast::Command::ExtendedTest(..) => {}
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand, ctx: &Ctx, src: &word::Source) {
        use ast::CompoundCommand as C;
        match compound {
            C::BraceGroup(g) => self.list(&g.list, ctx, src),
            C::Subshell(s) => self.list(&s.list, ctx, src),
            C::ForClause(f) => {
                let start = self.script.stmts.len();
                self.list(&f.body.list, ctx, src);
                if let Some(values) = &f.values {
                    let items = values.iter().map(|w| self.word(w, src)).collect();
                    let body = start..self.script.stmts.len();
                    self.script.loops.push(Loop { var: f.variable_name.clone(), items, body });
                }
            }
            C::ArithmeticForClause(f) => self.list(&f.body.list, ctx, src),
            C::WhileClause(w) | C::UntilClause(w) => self.list(&w.1.list, ctx, src),
            C::IfClause(clause) => self.if_clause(clause, ctx, src),
            C::CaseClause(clause) => self.case_clause(clause, ctx, src),
            C::Arithmetic(_) | C::Coprocess(_) => {}
        }
    }

    fn if_clause(&mut self, clause: &ast::IfClauseCommand, ctx: &Ctx, src: &word::Source) {
        let id = self.script.choices.len() as u32;
        self.script.choices.push(Conditional { kind: ConditionalKind::If, arms: Vec::new() });
        let mut bodies: Vec<(Option<Cond>, &ast::CompoundList)> =
            vec![(Some(self.cond_list(&clause.condition, src)), &clause.then)];
        for e in clause.elses.iter().flatten() {
            let cond = e.condition.as_ref().map(|c| self.cond_list(c, src));
            bodies.push((cond, &e.body));
        }
        if bodies.last().is_some_and(|(c, _)| c.is_some()) {
            // The implicit `else` that runs nothing still excludes every other arm.
            let arms: Vec<Arm> = bodies.iter().map(|(c, _)| Arm { cond: c.clone(), patterns: Vec::new() }).collect();
            self.script.choices[id as usize].arms = arms;
            self.script.choices[id as usize].arms.push(Arm { cond: None, patterns: Vec::new() });
        } else {
            self.script.choices[id as usize].arms =
                bodies.iter().map(|(c, _)| Arm { cond: c.clone(), patterns: Vec::new() }).collect();
        }
        // An arm runs when its own condition holds and every earlier one failed.
        let mut earlier: Vec<Cond> = Vec::new();
        for (i, (cond, body)) in bodies.iter().enumerate() {
            let mut arm_ctx = ctx.with_arm(id, i as u32);
            let mut eval = None;
            for c in &earlier {
                eval = eval.or(c.eval_of(false));
            }
            if let Some(c) = cond {
                eval = eval.or(c.eval_of(true));
                earlier.push(c.clone());
            }
            if eval.is_some() {
                arm_ctx.eval = eval;
            }
            self.list(body, &arm_ctx, src);
        }
    }

    fn case_clause(&mut self, clause: &ast::CaseClauseCommand, ctx: &Ctx, src: &word::Source) {
        let id = self.script.choices.len() as u32;
        let subject = self.word(&clause.value, src);
        let mut arms = Vec::new();
        for item in &clause.cases {
            let patterns = item.patterns.iter().map(|p| self.word(p, src)).collect();
            arms.push(Arm { cond: None, patterns });
        }
        self.script.choices.push(Conditional { kind: ConditionalKind::Case { subject }, arms });
        for (i, item) in clause.cases.iter().enumerate() {
            if let Some(body) = &item.cmd {
                self.list(body, &ctx.with_arm(id, i as u32), src);
            }
        }
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, ctx: &Ctx, src: &word::Source) {
        let mut env = Vec::new();
        let mut heredocs = Vec::new();
        let mut words = Vec::new();
        let mut assigns = Vec::new();
        let mut stdout = self.stdout.clone();
        for item in simple.prefix.iter().flat_map(|p| p.0.iter()) {
            match item {
                ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => env.push(self.assignment(a, w, false, src)),
                ast::CommandPrefixOrSuffixItem::IoRedirect(r) => {
                    self.redirect(r, &mut heredocs, &mut stdout, ctx, src);
                }
                _ => {}
            }
        }
        if let Some(w) = &simple.word_or_name {
            words.push(self.word(w, src));
        }
        let name = simple.word_or_name.as_ref().map(|w| w.value.as_str());
        let declares = matches!(name, Some("export" | "local" | "declare" | "readonly" | "typeset"));
        for item in simple.suffix.iter().flat_map(|s| s.0.iter()) {
            match item {
                ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) if declares => {
                    assigns.push(self.assignment(a, w, name == Some("export"), src));
                }
                ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w) | ast::CommandPrefixOrSuffixItem::Word(w) => {
                    words.push(self.word(w, src));
                }
                ast::CommandPrefixOrSuffixItem::IoRedirect(r) => {
                    self.redirect(r, &mut heredocs, &mut stdout, ctx, src);
                }
                ast::CommandPrefixOrSuffixItem::ProcessSubstitution(..) => {}
            }
        }
        let exports_too = declares && words.iter().skip(1).any(|w| w.literal().as_deref() == Some("-x"));
        if words.is_empty() {
            for a in env {
                self.push(a.line, ctx, StmtKind::Assign(a));
            }
            return;
        }
        let line = env.first().map_or(words[0].line, |a| a.line);
        for mut a in assigns {
            a.exported |= exports_too;
            self.push(a.line, ctx, StmtKind::Assign(a));
        }
        // A group's `>` empties the file once, before its first command (an assignment alone is none).
        if let Some(group) = &mut self.stdout {
            group.empties = None;
        }
        self.push(line, ctx, StmtKind::Command(Command { words, env, heredocs, stdout }));
    }

    fn push(&mut self, line: usize, ctx: &Ctx, kind: StmtKind) {
        self.script.stmts.push(Stmt { line, ctx: ctx.clone(), kind });
    }

    /// A command's redirection: a heredoc body it reads, or where its standard output now goes.
    fn redirect(
        &mut self,
        redirect: &ast::IoRedirect,
        heredocs: &mut Vec<Word>,
        stdout: &mut Option<Output>,
        ctx: &Ctx,
        src: &word::Source,
    ) {
        if let ast::IoRedirect::HereDocument(_, doc) = redirect {
            let start = doc.doc.loc.as_ref().map_or(src.base, |l| src.byte(l.start.index));
            let word = word::convert_heredoc(&doc.doc.value, start, self.script.line_of(start), doc.requires_expansion);
            self.collect_subs(&word);
            heredocs.push(word);
        } else if let Some(to) = self.stdout_of(redirect, ctx, src) {
            *stdout = to;
        }
    }

    /// `Some(file)` when `redirect` sends standard output to a file, `Some(None)` when elsewhere (`>&2`),
    /// `None` when it leaves standard output alone.
    fn stdout_of(&mut self, redirect: &ast::IoRedirect, ctx: &Ctx, src: &word::Source) -> Option<Option<Output>> {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T};
        match redirect {
            ast::IoRedirect::File(fd, kind, target) if fd.is_none_or(|fd| fd == 1) => match (kind, target) {
                (K::Write | K::Clobber | K::Append, T::Filename(w)) => {
                    let empties = (!matches!(kind, K::Append)).then(|| ctx.clone());
                    Some(Some(Output { target: self.word(w, src), empties }))
                }
                (K::Write | K::Clobber | K::Append | K::DuplicateOutput, _) => Some(None),
                _ => None,
            },
            ast::IoRedirect::OutputAndError(w, append) => {
                Some(Some(Output { target: self.word(w, src), empties: (!append).then(|| ctx.clone()) }))
            }
            _ => None,
        }
    }

    fn assignment(&mut self, a: &ast::Assignment, full: &ast::Word, exported: bool, src: &word::Source) -> Assign {
        let start = full.loc.as_ref().map_or(src.base, |l| src.byte(l.start.index));
        let line = self.script.line_of(start);
        let name = match &a.name {
            ast::AssignmentName::VariableName(n) | ast::AssignmentName::ArrayElementName(n, _) => n.clone(),
        };
        let raw = full.value.as_str();
        let eq = raw.find('=').map_or(raw.len(), |i| i + 1);
        let value = match &a.value {
            ast::AssignmentValue::Scalar(w) => AssignValue::Scalar(self.word_at(&w.value, start + eq)),
            ast::AssignmentValue::Array(items) => {
                // Elements carry no location, and the assignment's word is not the source text (its
                // line breaks are gone): find each element in the source, in order.
                let mut from = (start + eq).min(self.text.len());
                let mut words = Vec::new();
                for (_, w) in items {
                    let at = self.text[from..].find(w.value.as_str()).map_or(from, |p| from + p);
                    words.push(self.word_at(&w.value, at));
                    from = (at + w.value.len()).min(self.text.len());
                }
                AssignValue::Array(words)
            }
        };
        Assign { name, value, exported, append: a.append, line }
    }
}

fn bracket_test(mut args: Vec<Word>) -> Cond {
    if args.first().and_then(Word::literal).as_deref() == Some("!") {
        args.remove(0);
        return Cond::Not(Box::new(bracket_test(args)));
    }
    let op_of = |w: &Word| w.literal();
    match args.len() {
        1 => Cond::Test(Test { op: TestOp::NonEmpty, args }),
        2 => {
            let op = op_of(&args[0]).map(|o| unary_op(&o)).unwrap_or(TestOp::Other);
            Cond::Test(Test { op, args: vec![args[1].clone()] })
        }
        3 => {
            let op = op_of(&args[1]).map(|o| binary_op(&o)).unwrap_or(TestOp::Other);
            Cond::Test(Test { op, args: vec![args[0].clone(), args[2].clone()] })
        }
        _ => Cond::Unknown,
    }
}

fn unary_op(op: &str) -> TestOp {
    match op {
        "-z" => TestOp::Empty,
        "-n" => TestOp::NonEmpty,
        "-f" | "-e" | "-d" | "-s" => TestOp::Exists,
        _ => TestOp::Other,
    }
}

fn binary_op(op: &str) -> TestOp {
    match op {
        "=" | "==" => TestOp::Eq,
        "!=" => TestOp::Ne,
        "-eq" => TestOp::NumEq,
        "-ne" => TestOp::NumNe,
        "-gt" => TestOp::Gt,
        "-ge" => TestOp::Ge,
        "-lt" => TestOp::Lt,
        "-le" => TestOp::Le,
        _ => TestOp::Other,
    }
}
