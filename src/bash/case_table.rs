//! A `case` read as a lookup table: the variables its subject reads, the context it runs in, the key a
//! resolver gives its subject and the arm that key selects. Pin discovery reads launch scripts' tables with it
//! (which arm a job's settings select, and a table's latent fall-through).

use super::resolve::Resolver;
use super::word::Word;
use super::{Conditional, ConditionalKind, Ctx, Script, Stmt};

/// A `case` of `script` read as a lookup table: its subject's variables, and the context around it.
pub(crate) struct CaseTable<'s> {
    /// The choice's index in the script.
    pub(crate) ci: usize,
    pub(crate) choice: &'s Conditional,
    pub(crate) subject: &'s Word,
    /// The first statement inside one of its arms: where the subject is read.
    pub(crate) inside: &'s Stmt,
    /// The context the `case` itself runs in.
    pub(crate) outer: Ctx,
    /// The variables its subject reads.
    pub(crate) vars: Vec<&'s str>,
}

impl CaseTable<'_> {
    /// The `case`s of `script` whose subject reads a variable, outside an EVAL_ONLY path (which holds no pin).
    pub(crate) fn of(script: &Script) -> impl Iterator<Item = CaseTable<'_>> {
        script.choices.iter().enumerate().filter_map(|(ci, choice)| {
            let ConditionalKind::Case { subject } = &choice.kind else { return None };
            let inside = script.stmts.iter().find(|s| s.ctx.arms.iter().any(|a| a.0 == ci as u32))?;
            let mut outer = inside.ctx.clone();
            outer.arms.retain(|a| a.0 != ci as u32);
            let vars: Vec<&str> = subject
                .parts
                .iter()
                .filter_map(|p| match p {
                    super::Part::Var { name, .. } => Some(name.as_str()),
                    _ => None,
                })
                .collect();
            (!vars.is_empty() && outer.eval != Some(true)).then_some(CaseTable {
                ci,
                choice,
                subject,
                inside,
                outer,
                vars,
            })
        })
    }

    /// The subject's text under `r`'s variables, where it resolves.
    pub(crate) fn key(&self, r: &Resolver) -> Option<String> {
        r.word(self.subject, &self.outer, self.inside.line, 0).into_iter().find_map(|v| v.value)
    }

    /// The arm whose patterns match `key`.
    pub(crate) fn arm(&self, key: &str) -> Option<usize> {
        self.choice
            .arms
            .iter()
            .position(|a| a.patterns.iter().any(|p| p.literal().is_some_and(|p| super::word::glob(&p, key))))
    }
}
