//! Tables for [`PredictReport`] (`alsim predict`) and [`Calibration`] (`alsim calibrate`), and the SVG chart
//! benchmark engineers read.

mod calibrate;
mod plot;

pub use calibrate::residuals_csv;
pub use plot::{plot_svg, plot_sweeps_svg};

use super::{Report, Table, fixed};
use crate::perf::{Objective, PredictReport, Sweep};

fn setup(sweep: &Sweep) -> String {
    format!(
        "{} on {} x{} ({} weights, {} KV), drafter {}, {}",
        sweep.model,
        sweep.hardware_name,
        sweep.tp,
        sweep.precision,
        sweep.kv_precision,
        sweep.drafter.as_deref().unwrap_or("none"),
        sweep.workload.label()
    )
}

fn list(ks: &[usize]) -> String {
    ks.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

impl Report for PredictReport {
    fn tables(&self) -> Vec<Table> {
        let mut tables = Vec::new();
        let error_pct = fixed(self.model_error * 100.0, 0);
        for sweep in &self.sweeps {
            let setup = setup(sweep);
            let mut all = Table::new(
                format!("Predicted decode per concurrency and draft length: {setup}"),
                &[
                    "concurrency",
                    "k",
                    "AL",
                    "step ms",
                    "draft ms",
                    "tok/s/GPU",
                    "tok/s/user",
                    "speedup",
                    "largest part",
                    "best",
                ],
            );
            for p in &sweep.predictions {
                let best = sweep.best.iter().any(|b| b.concurrency == p.concurrency && b.best_k == Some(p.k));
                all.row(vec![
                    p.concurrency.to_string(),
                    p.k.to_string(),
                    fixed(p.al, 2),
                    fixed(p.step_ms, 2),
                    fixed(p.draft_ms, 2),
                    fixed(p.throughput_per_gpu, 1),
                    fixed(p.per_user_tps, 1),
                    format!("{}x", fixed(p.speedup, 2)),
                    p.dominant.to_string(),
                    if best { "*" } else { "" }.into(),
                ]);
            }
            let mut best = Table::new(
                format!(
                    "Best k per concurrency (band: k within the model's {error_pct} % error of the top; {}){}: {setup}",
                    match sweep.best.first().map(|b| b.objective) {
                        Some(Objective::Throughput) => "the top throughput is chosen",
                        Some(Objective::PerUser) => "the top per-user speed is chosen",
                        Some(Objective::SmallestK) | None => "the smallest is chosen",
                    },
                    self.min_user_tps.map(|f| format!(", per-user floor {f} tok/s")).unwrap_or_default()
                ),
                &[
                    "concurrency",
                    "best k",
                    "band",
                    "top k",
                    "runner-up",
                    "margin",
                    "speedup",
                    "tok/s/GPU",
                    "tok/s/user",
                    "decision",
                ],
            );
            for b in &sweep.best {
                let row = b.best_k.and_then(|k| sweep.prediction(b.concurrency, k));
                best.row(vec![
                    b.concurrency.to_string(),
                    b.best_k.map_or("none meets the floor".into(), |k| k.to_string()),
                    list(&b.band),
                    b.top_k.map_or("-".into(), |k| k.to_string()),
                    b.runner_up.map_or("-".into(), |k| k.to_string()),
                    b.margin_pct.map_or("-".into(), |m| format!("{}%", fixed(m, 1))),
                    b.speedup.map_or("-".into(), |s| format!("{}x", fixed(s, 2))),
                    row.map_or("-".into(), |p| fixed(p.throughput_per_gpu, 1)),
                    row.map_or("-".into(), |p| fixed(p.per_user_tps, 1)),
                    match (b.best_k, b.toss_up) {
                        (None, _) => "-".into(),
                        (Some(_), true) => format!("toss-up: k = {} within {error_pct} %", list(&b.band)),
                        (Some(_), false) => "clear".into(),
                    },
                ]);
            }
            let mut frontier = Table::new(
                format!("Pareto frontier (throughput per GPU against per-user speed): {setup}"),
                &["tok/s/user", "tok/s/GPU", "concurrency", "k"],
            );
            for f in &sweep.frontier {
                frontier.row(vec![
                    fixed(f.per_user_tps, 1),
                    fixed(f.throughput_per_gpu, 1),
                    f.concurrency.to_string(),
                    f.k.to_string(),
                ]);
            }
            tables.extend([all, best, frontier]);
        }
        if let Some(first) = self.comparison.first() {
            let names: Vec<String> = first.drafters.iter().map(|d| d.drafter.clone()).collect();
            let mut headers = vec!["hardware".to_string(), "workload".into(), "concurrency".into()];
            for n in &names {
                headers.push(format!("{n}: best k"));
                headers.push(format!("{n}: tok/s/GPU"));
            }
            headers.extend(["winner".into(), "margin".into(), "decision".into()]);
            let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
            let mut table = Table::new(
                format!("Drafters compared, each with its own acceptance curve (toss-up within {error_pct} %)"),
                &header_refs,
            );
            for c in &self.comparison {
                let mut row = vec![c.hardware.clone(), c.workload.clone(), c.concurrency.to_string()];
                for d in &c.drafters {
                    row.push(d.best_k.map_or("-".into(), |k| k.to_string()));
                    row.push(d.throughput_per_gpu.map_or("-".into(), |t| fixed(t, 1)));
                }
                row.push(c.winner.clone().unwrap_or_else(|| "-".into()));
                row.push(c.margin_pct.map_or("-".into(), |m| format!("{}%", fixed(m, 1))));
                row.push(if c.toss_up { "toss-up" } else { "clear" }.into());
                table.row(row);
            }
            tables.push(table);
        }
        tables
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let mut seen: Vec<&str> = Vec::new();
        for sweep in &self.sweeps {
            let a = &sweep.acceptance;
            if seen.contains(&a.description.as_str()) {
                continue;
            }
            seen.push(&a.description);
            notes.push(format!(
                "AL(k), k = 0..{}, from {}: {}{}",
                a.max_k(),
                a.description,
                a.al.iter().map(|v| v.map_or("–".into(), |v| fixed(v, 2))).collect::<Vec<_>>().join(", "),
                if a.al.contains(&None) { " (– not measured, so not swept)" } else { "" }
            ));
        }
        let mut hardware: Vec<&str> = Vec::new();
        for sweep in &self.sweeps {
            if hardware.contains(&sweep.hardware.as_str()) {
                continue;
            }
            hardware.push(&sweep.hardware);
            notes.push(format!(
                "{}: {}{}",
                sweep.hardware,
                sweep.efficiency,
                sweep
                    .operating_point
                    .map(|(b, k)| format!("; highest throughput per GPU: concurrency {b}, k = {k}"))
                    .unwrap_or_default()
            ));
        }
        notes.extend(self.notes.iter().cloned());
        notes
    }
}
