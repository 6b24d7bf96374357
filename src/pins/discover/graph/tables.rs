//! Lookup tables in shared launch code: which arm each job's variables select, and the jobs that find none
//! (with the fall-through an entry could reach, [`super::fall_through`]).

use super::{Graph, fall_through};
use crate::bash::Script;
use crate::bash::case_table::CaseTable;
use crate::bash::resolve::Resolver;
use crate::pins::observed::Observed;
use crate::pins::{EntryRef, Fact, How, Location};

/// Jobs selecting one arm of a lookup table in shared code, and jobs that find no arm.
pub(super) struct TableSelection {
    pub(super) arm: (u32, u32),
    pub(super) jobs: Vec<(EntryRef, Fact<String>)>,
    pub(super) missing: Vec<Observed>,
}

/// A `case` on variables the script does not set (`case "${MODEL_NAME}:${DECODE_MTP_SIZE}"`) is a table
/// whose keys come from config entries: each agentic spec-decoding job that supplies those variables
/// (from its own settings) and reaches the `case` selects the arm its values match, or finds none.
pub(super) fn table_selection(graph: &Graph, script: &Script) -> Vec<TableSelection> {
    let mut out: Vec<TableSelection> = Vec::new();
    let mut missing = Vec::new();
    for table in CaseTable::of(script) {
        let CaseTable { ci, subject, inside, outer, vars, .. } = &table;
        for (index, job) in graph.jobs.iter().enumerate() {
            let point = graph.point(job);
            if !point.agentic()
                || !point.speculative()
                || !on_launch_path(graph, index, &script.rel)
                || !vars.iter().all(|v| job.env.contains_key(*v))
                || !vars.iter().any(|v| point.get(v).is_some())
            {
                continue;
            }
            let r = Resolver { script, scripts: &graph.scripts, tables: &graph.tables, env: &job.env };
            let reaches = script.conditions(outer).into_iter().all(|(cond, holds)| {
                cond.implies_eval(true)
                    || cond.implies_eval(false)
                    || r.eval_cond(cond, outer, inside.line) != Some(!holds)
            });
            if !reaches {
                continue;
            }
            let Some(text) = table.key(&r) else { continue };
            let entry = job.entry_ref.clone();
            match table.arm(&text) {
                Some(a) => {
                    let model = job.env.get("MODEL").map_or_else(
                        || Fact::unresolved("entry has no model"),
                        |m| Fact::known(m.value.clone(), How::Entry, m.source.clone(), Some(m.at.clone())),
                    );
                    let key = (*ci as u32, a as u32);
                    match out.iter_mut().find(|s| s.arm == key) {
                        Some(s) => s.jobs.push((entry, model)),
                        None => out.push(TableSelection { arm: key, jobs: vec![(entry, model)], missing: Vec::new() }),
                    }
                }
                None => missing.push(Observed::TableArmMissing {
                    at: Location::new(&script.rel, subject.line),
                    entry: entry.name.clone(),
                    entry_at: entry.at.to_string(),
                    subject: subject.raw.clone(),
                    k: text.clone(),
                }),
            }
        }
    }
    let selected: Vec<&EntryRef> = out.iter().flat_map(|s| s.jobs.iter().map(|(entry, _)| entry)).collect();
    missing.extend(fall_through::latent(graph, script, &selected, &missing));
    if let Some(first) = out.first_mut() {
        first.missing = missing;
    } else if !missing.is_empty() {
        out.push(TableSelection { arm: (u32::MAX, u32::MAX), jobs: Vec::new(), missing });
    }
    out
}

/// Whether job `index` can reach the script at `rel`: a job served by shared launch code reaches only the
/// files its multi-node script's path names; any other job is taken to reach it, as its variables select
/// the table.
fn on_launch_path(graph: &Graph, index: usize, rel: &str) -> bool {
    graph.launch_path(index).is_none_or(|hops| hops.iter().any(|h| h.file == rel))
}
