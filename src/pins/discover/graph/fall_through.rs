//! A lookup table's explicit fall-through to real acceptance that an entry could reach at a k the table
//! lacks: the script says what happens when the lookup comes out empty, and an entry the table serves is a
//! setting away from it.

use std::collections::BTreeSet;

use super::Graph;
use crate::bash::case_table::CaseTable;
use crate::bash::resolve::Resolver;
use crate::bash::{ConditionalKind, Script};
use crate::pins::observed::Observed;
use crate::pins::{EntryRef, Location};

/// A table's fall-through that no entry takes today but one is a setting away from: an entry of a model
/// and framework the table serves (an entry of `selected`, those that select an arm, runs them) that runs
/// this model at a value no arm matches, kept out of the table only by its guard (another scenario,
/// `IS_AGENTIC` unset). An agentic run of that model at that k falls back to real acceptance.
pub(super) fn latent(graph: &Graph, script: &Script, selected: &[&EntryRef], missing: &[Observed]) -> Vec<Observed> {
    let served: BTreeSet<(&str, Option<&str>)> = selected
        .iter()
        .filter_map(|entry| graph.entries.iter().find(|e| e.name == entry.name))
        .filter_map(|e| Some((e.model.as_deref()?, e.framework.as_deref())))
        .collect();
    if served.is_empty() {
        return Vec::new();
    }
    let taken: BTreeSet<(usize, &str)> = missing
        .iter()
        .filter_map(|m| match m {
            Observed::TableArmMissing { at, k, .. } => Some((at.line.unwrap_or(0), k.as_str())),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    let mut said = BTreeSet::new();
    for table in CaseTable::of(script).filter(|t| explicit_fall_through(script, t.ci as u32)) {
        let CaseTable { ci, subject, vars, .. } = &table;
        for entry in &graph.entries {
            let (Some(model), framework) = (entry.model.as_deref(), entry.framework.as_deref()) else { continue };
            if !served.contains(&(model, framework)) {
                continue;
            }
            for point in entry.points.iter().filter(|p| p.speculative() && vars.iter().any(|v| p.get(v).is_some())) {
                let env = super::jobs::job_env(entry, point, None);
                if !vars.iter().all(|v| env.contains_key(*v)) {
                    continue;
                }
                let r = Resolver { script, scripts: &graph.scripts, tables: &graph.tables, env: &env };
                let Some(text) = table.key(&r) else { continue };
                if table.arm(&text).is_some()
                    || taken.contains(&(subject.line, text.as_str()))
                    || !said.insert((*ci, text.clone()))
                {
                    continue;
                }
                out.push(Observed::TableFallThrough {
                    at: Location::new(&script.rel, subject.line),
                    entry: entry.name.clone(),
                    entry_at: Location::new(&entry.file, point.line).to_string(),
                    scenario: point.scenario.clone(),
                    subject: subject.raw.clone(),
                    k: text,
                });
            }
        }
    }
    out
}

/// Whether the script acts on a lookup that comes out empty: a statement in the arm of a test on the
/// variable the `case` (choice `ci`) assigns that runs when it is empty (`if [[ -n "$AL" ]] … else echo
/// "falling back to real acceptance"`, `if [[ -z "$AL" ]]`). Such a path is the script's own statement
/// that some k falls back, not a table that merely ends.
fn explicit_fall_through(script: &Script, ci: u32) -> bool {
    use crate::bash::{Cond, StmtKind, TestOp};
    let results: BTreeSet<&str> = script
        .stmts
        .iter()
        .filter(|s| s.ctx.arms.iter().any(|a| a.0 == ci))
        .filter_map(|s| match &s.kind {
            StmtKind::Assign(a) => Some(a.name.as_str()),
            StmtKind::Command(_) => None,
        })
        .collect();
    // `-z "$AL"` holds when the lookup is empty, as does `! -n "$AL"`.
    let holds_when_empty = |cond: &Cond| -> Option<bool> {
        let (test, negated) = match cond {
            Cond::Test(t) => (t, false),
            Cond::Not(inner) => match &**inner {
                Cond::Test(t) => (t, true),
                _ => return None,
            },
            _ => return None,
        };
        if !test.args.iter().any(|w| results.iter().any(|r| w.reads(r))) {
            return None;
        }
        match test.op {
            TestOp::Empty => Some(!negated),
            TestOp::NonEmpty => Some(negated),
            _ => None,
        }
    };
    script.choices.iter().enumerate().filter(|(_, c)| matches!(c.kind, ConditionalKind::If)).any(|(i, choice)| {
        let empty_arm = choice.arms.iter().enumerate().find_map(|(a, arm)| match &arm.cond {
            Some(cond) => holds_when_empty(cond).map(|empty| if empty { a } else { a + 1 }),
            None => None,
        });
        empty_arm.is_some_and(|a| script.stmts.iter().any(|s| s.ctx.arms.contains(&(i as u32, a as u32))))
    })
}
