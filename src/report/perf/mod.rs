//! Tables for [`PredictReport`] (`alsim predict`) and [`Calibration`] (`alsim calibrate`), and the SVG chart
//! benchmark engineers read.

mod calibrate;
mod choice_score;
mod exchange;
#[cfg(feature = "cli")]
mod plot;

pub use calibrate::residuals_csv;
#[cfg(feature = "cli")]
pub use plot::{plot_svg, plot_sweeps_svg};

use super::{Cell, Report, Table, fixed};
use crate::perf::{Objective, PredictReport, Sweep};

fn setup(sweep: &Sweep) -> String {
    // Expert parallelism and DP-attention are what tell apart the points of one matrix entry.
    let ep = if sweep.ep > 1 { format!(", EP {}", sweep.ep) } else { String::new() };
    let dp = if sweep.dp_attention { ", DP-attention" } else { "" };
    format!(
        "{} on {} x{}{ep}{dp} ({} weights, {} KV), drafter {}, {}",
        sweep.model,
        sweep.hardware_name,
        sweep.tp,
        sweep.precision,
        sweep.kv_precision,
        sweep.drafter.as_deref().unwrap_or("none"),
        sweep.workload.label()
    )
}

/// A speedup as `2.43x`.
pub(super) fn speedup(value: f64) -> Cell {
    Cell::quantity(value, format!("{}x", fixed(value, 2)), "x")
}

/// A percentage as `1.7%`.
fn percent(value: f64) -> Cell {
    Cell::quantity(value, format!("{}%", fixed(value, 1)), "%")
}

fn list(ks: &[usize]) -> String {
    ks.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

impl Report for PredictReport {
    /// The answer on one screen: per sweep, a grid of speedups (concurrency × k) with the best k and its band
    /// marked, then the drafters compared (`--versus`) and the notes. `predict --long`, Markdown, CSV and
    /// JSON hold every prediction and the Pareto frontier.
    #[cfg(feature = "cli")]
    fn human(&self, width: usize) -> String {
        let mut out = String::new();
        for sweep in &self.sweeps {
            out.push_str(&speedup_grid(sweep, width));
            out.push('\n');
        }
        let error_pct = fixed(self.model_error * 100.0, 0);
        let legend = format!(
            "* the best k, + the rest of its band (within the model's {error_pct} % error of the top); speedup: \
             throughput per GPU over k = 0 at the same concurrency. Every prediction and the Pareto frontier: \
             --long, or --format json|csv|md."
        );
        out.push_str(&super::layout::wrap(&legend, width, "", "  "));
        out.push('\n');
        out.push_str(&comparison_grid(self, width));
        for note in self.notes() {
            out.push_str(&super::layout::wrap(&note, width, "note: ", "      "));
        }
        out
    }

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
                    Cell::from(p.concurrency.to_string()),
                    p.k.to_string().into(),
                    Cell::number(p.al, 2),
                    Cell::number(p.step_ms, 2),
                    Cell::number(p.draft_ms, 2),
                    Cell::number(p.throughput_per_gpu, 1),
                    Cell::number(p.per_user_tps, 1),
                    speedup(p.speedup),
                    p.dominant.to_string().into(),
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
                    Cell::from(b.concurrency.to_string()),
                    b.best_k.map_or("none meets the floor".into(), |k| k.to_string()).into(),
                    list(&b.band).into(),
                    b.top_k.map_or("-".into(), |k| k.to_string()).into(),
                    b.runner_up.map_or("-".into(), |k| k.to_string()).into(),
                    b.margin_pct.map_or_else(Cell::missing, percent),
                    b.speedup.map_or_else(Cell::missing, speedup),
                    row.map_or_else(Cell::missing, |p| Cell::number(p.throughput_per_gpu, 1)),
                    row.map_or_else(Cell::missing, |p| Cell::number(p.per_user_tps, 1)),
                    match (b.best_k, b.toss_up) {
                        (None, _) => "-".into(),
                        (Some(_), true) => format!("toss-up: k = {} within {error_pct} %", list(&b.band)).into(),
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
                    Cell::number(f.per_user_tps, 1),
                    Cell::number(f.throughput_per_gpu, 1),
                    f.concurrency.to_string().into(),
                    f.k.to_string().into(),
                ]);
            }
            tables.extend([all, best, frontier]);
        }
        tables.extend(comparison_table(self));
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

/// `--versus`: the drafters compared per hardware, workload and concurrency.
fn comparison_table(report: &PredictReport) -> Option<Table> {
    let error_pct = fixed(report.model_error * 100.0, 0);
    let first = report.comparison.first()?;
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
    for c in &report.comparison {
        let mut row: Vec<Cell> =
            vec![c.hardware.clone().into(), c.workload.clone().into(), c.concurrency.to_string().into()];
        for d in &c.drafters {
            row.push(d.best_k.map_or("-".into(), |k| k.to_string()).into());
            row.push(d.throughput_per_gpu.map_or_else(Cell::missing, |t| Cell::number(t, 1)));
        }
        row.push(c.winner.clone().unwrap_or_else(|| "-".into()).into());
        row.push(c.margin_pct.map_or_else(Cell::missing, percent));
        row.push(if c.toss_up { "toss-up" } else { "clear" }.into());
        table.row(row);
    }
    Some(table)
}

/// `--versus` on a terminal: per hardware and workload, a row per concurrency with each drafter's best k
/// and throughput, the drafters lettered in the title (their names would not fit as headers).
#[cfg(feature = "cli")]
fn comparison_grid(report: &PredictReport, width: usize) -> String {
    let Some(first) = report.comparison.first() else { return String::new() };
    let letters: Vec<char> = ('A'..='Z').take(first.drafters.len()).collect();
    let mut headers = vec!["concurrency".to_string()];
    for letter in &letters {
        headers.extend([format!("{letter}: k"), format!("{letter}: tok/s/GPU")]);
    }
    headers.extend(["winner".into(), "margin".into(), "decision".into()]);
    let mut out = String::new();
    for group in report.comparison.chunk_by(|a, b| a.hardware == b.hardware && a.workload == b.workload) {
        let named: Vec<String> =
            letters.iter().zip(&group[0].drafters).map(|(l, d)| format!("{l} = {}", d.drafter)).collect();
        let title = format!(
            "Drafters compared on {}, {}, each with its own acceptance curve (toss-up within {} %): {}",
            group[0].hardware,
            group[0].workload,
            fixed(report.model_error * 100.0, 0),
            named.join(", ")
        );
        let letter_of = |name: &str| {
            group[0].drafters.iter().position(|d| d.drafter == name).map_or("-".to_string(), |i| letters[i].to_string())
        };
        let rows: Vec<Vec<String>> = group
            .iter()
            .map(|c| {
                let mut row = vec![c.concurrency.to_string()];
                for d in &c.drafters {
                    row.push(d.best_k.map_or("-".into(), |k| k.to_string()));
                    row.push(d.throughput_per_gpu.map_or("-".into(), |t| fixed(t, 1)));
                }
                row.push(c.winner.as_deref().map_or("-".into(), letter_of));
                row.push(c.margin_pct.map_or("-".into(), |m| format!("{}%", fixed(m, 1))));
                row.push(if c.toss_up { "toss-up" } else { "clear" }.into());
                row
            })
            .collect();
        out.push_str(&super::layout::wrap(&title, width, "", "  "));
        out.push_str(&super::layout::matrix(&headers, &rows, 1, width));
        out.push('\n');
    }
    out
}

/// One sweep's speedups, a row per concurrency and a column per k > 0, the best k marked `*` and the rest
/// of its band `+`, and the best k again at the end of the row (`-` where no k meets the per-user floor).
#[cfg(feature = "cli")]
fn speedup_grid(sweep: &Sweep, width: usize) -> String {
    let mut ks: Vec<usize> = sweep.predictions.iter().map(|p| p.k).filter(|&k| k > 0).collect();
    ks.sort_unstable();
    ks.dedup();
    let mut headers = vec!["concurrency".to_string()];
    headers.extend(ks.iter().map(|k| format!("k={k}")));
    headers.push("best k".into());
    let rows: Vec<Vec<String>> = sweep
        .best
        .iter()
        .map(|choice| {
            let b = choice.concurrency;
            let mut row = vec![b.to_string()];
            row.extend(ks.iter().map(|&k| match sweep.prediction(b, k) {
                None => "-".to_string(),
                Some(p) => {
                    let mark = match (choice.best_k == Some(k), choice.band.contains(&k)) {
                        (true, _) => "*",
                        (false, true) => "+",
                        (false, false) => " ",
                    };
                    format!("{}x{mark}", fixed(p.speedup, 2))
                }
            }));
            row.push(choice.best_k.map_or_else(|| "-".to_string(), |k| k.to_string()));
            row
        })
        .collect();
    let title = format!("Speedup per concurrency and draft length k: {}", setup(sweep));
    super::layout::wrap(&title, width, "", "  ") + &super::layout::matrix(&headers, &rows, 1, width)
}

/// `predict --why`: one line per sweep and concurrency saying why k stops where it stops — what the next
/// draft position would add against what it would cost, and the parts that cost most.
pub fn why(sweep: &Sweep) -> Vec<String> {
    let pct = |v: f64| format!("{:+.1} %", v * 100.0);
    let costs = |m: &crate::perf::Marginal| -> String {
        let parts: Vec<String> = m
            .ranked_parts()
            .into_iter()
            .filter(|p| p.1 > 0.0)
            .take(2)
            .map(|(name, ms)| format!("{name} {} ms", fixed(ms, 2)))
            .collect();
        if parts.is_empty() { String::new() } else { format!(", mostly {}", parts.join(" and ")) }
    };
    let mut out = Vec::new();
    for choice in &sweep.best {
        let b = choice.concurrency;
        let Some(k) = choice.best_k else {
            out.push(format!("{}, B = {b}: no k meets the per-user floor", setup(sweep)));
            continue;
        };
        let at = |k: usize| sweep.prediction(b, k).and_then(|p| p.marginal);
        let line = match (at(k + 1), at(k)) {
            (Some(next), _) => format!(
                "k stops at {k}: draft position {} adds {} tokens per step ({} of AL) for {} ms ({} of the step){}",
                k + 1,
                fixed(next.gain, 2),
                pct(next.gain_rel),
                fixed(next.cost_ms, 2),
                pct(next.cost_rel),
                costs(&next)
            ),
            (None, Some(last)) => format!(
                "k = {k} is the largest swept, and position {k} still pays: {} of AL for {} of the step{}",
                pct(last.gain_rel),
                pct(last.cost_rel),
                costs(&last)
            ),
            (None, None) => format!("k = {k}: nothing swept beyond it"),
        };
        let objective = match choice.top_k {
            Some(top) if top != k => format!("; the objective took {k} of the band, whose top is {top}"),
            _ => String::new(),
        };
        out.push(format!("{} on {}, B = {b}: {line}{objective}", sweep.model, sweep.hardware));
    }
    out
}
