//! Tables for [`MatrixReport`] (`alsim sweep`): the best k per entry and concurrency with its band and
//! whether the entry's k lies in it, the entries and points not predicted, and a summary.

use super::{Report, Table, fixed};
use crate::matrix::{MatrixReport, Skip};
use crate::perf::cost::Workload;

fn ks(list: &[usize]) -> String {
    list.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

fn or_dash<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn shape(workload: &Workload, stated: bool) -> String {
    match workload {
        Workload::Turns { isl, osl, .. } if stated => format!("{isl}/{osl}"),
        Workload::Turns { isl, osl, .. } => format!("({isl}/{osl})"),
        Workload::Decode { context } => format!("ctx {context}"),
    }
}

impl Report for MatrixReport {
    fn tables(&self) -> Vec<Table> {
        let mut rows = Table::new(
            format!(
                "Best k per entry and concurrency (band: k within {}% of the top throughput)",
                fixed(self.model_error * 100.0, 0)
            ),
            &[
                "entry",
                "at",
                "hardware",
                "model",
                "tp",
                "ep",
                "isl/osl",
                "concurrency",
                "k run",
                "best k",
                "band",
                "k in band",
                "speedup best",
                "speedup k",
            ],
        );
        for r in &self.rows {
            rows.row(vec![
                r.entry.clone(),
                r.at.to_string(),
                r.hardware.clone(),
                r.model.clone(),
                match (r.dp_attn, r.gpus == r.tp) {
                    (false, _) => r.tp.to_string(),
                    (true, true) => format!("{} dp-attn", r.tp),
                    (true, false) => format!("{} dp-attn ({} GPUs)", r.tp, r.gpus),
                },
                or_dash(r.ep),
                shape(&r.workload, r.workload_stated),
                r.concurrency.to_string(),
                or_dash(r.k),
                or_dash(r.best_k),
                ks(&r.band),
                match r.in_band {
                    Some(true) => "yes".into(),
                    Some(false) => "NO".into(),
                    None => "-".into(),
                },
                or_dash(r.speedup.map(|s| fixed(s, 2))),
                or_dash(r.k_speedup.map(|s| fixed(s, 2))),
            ]);
        }
        let mut skipped = Table::new("Not predicted", &["entry", "at", "why"]);
        for s in &self.skipped {
            let why = match &s.skip {
                Skip::Unmapped { what, name } => format!("unmapped {} '{name}'", what.name()),
                Skip::NotPredicted { why } => why.clone(),
            };
            skipped.row(vec![s.entry.clone(), s.at.to_string(), why]);
        }
        let mut tables = vec![rows];
        if !skipped.rows.is_empty() {
            tables.push(skipped);
        }
        tables
    }

    fn notes(&self) -> Vec<String> {
        let unmapped: Vec<String> = self.unmapped().iter().map(|(what, name)| format!("{what} '{name}'")).collect();
        let known = self.rows.iter().filter(|r| r.in_band.is_some()).count();
        let mut notes = vec![format!(
            "{} entries, {} with speculative decoding, {} covered, {} unmapped name(s){}; {} (entry, concurrency) \
             rows, {} with the entry's k known from a pin, {} outside the band",
            self.entries,
            self.speculative,
            self.covered,
            unmapped.len(),
            if unmapped.is_empty() { String::new() } else { format!(": {}", unmapped.join(", ")) },
            self.rows.len(),
            known,
            self.outside(),
        )];
        notes.push(format!("golden curves: {}", self.golden_source));
        notes.extend(self.notes.iter().cloned());
        notes
    }
}
