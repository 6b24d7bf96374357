//! Tables for [`PredictReport`] (`alsim predict`) and [`Calibration`] (`alsim calibrate`), and the SVG chart
//! benchmark engineers read: throughput per GPU against per-user speed, one line per k.

use std::path::Path;

use plotters::prelude::*;

use super::{Report, Table, fixed};
use crate::error::{Error, Result};
use crate::perf::calibrate::{Calibration, Fitted};
use crate::perf::{PredictReport, Sweep};

impl Report for PredictReport {
    fn tables(&self) -> Vec<Table> {
        let mut tables = Vec::new();
        for sweep in &self.sweeps {
            let setup = format!(
                "{} on {} x{} ({} weights, {} KV), drafter {}",
                sweep.model,
                sweep.hardware_name,
                sweep.tp,
                sweep.precision,
                sweep.kv_precision,
                sweep.drafter.as_deref().unwrap_or("none")
            );
            let mut all = Table::new(
                format!("Predicted decode per concurrency and draft length: {setup}"),
                &["concurrency", "k", "AL", "step ms", "tok/s/GPU", "tok/s/user", "speedup", "bound", "best"],
            );
            for p in &sweep.predictions {
                let best = sweep.best.iter().any(|b| b.concurrency == p.concurrency && b.best_k == Some(p.k));
                all.row(vec![
                    p.concurrency.to_string(),
                    p.k.to_string(),
                    fixed(p.al, 2),
                    fixed(p.step_ms, 2),
                    fixed(p.throughput_per_gpu, 1),
                    fixed(p.per_user_tps, 1),
                    format!("{}x", fixed(p.speedup, 2)),
                    if p.memory_bound { "memory" } else { "compute" }.into(),
                    if best { "*" } else { "" }.into(),
                ]);
            }
            let mut best = Table::new(
                format!(
                    "Best k per concurrency{}: {setup}",
                    self.min_user_tps.map(|f| format!(" (per-user floor {f} tok/s)")).unwrap_or_default()
                ),
                &["concurrency", "best k", "tok/s/GPU", "tok/s/user", "speedup", "runner-up k", "margin"],
            );
            for b in &sweep.best {
                let row = b
                    .best_k
                    .and_then(|k| sweep.predictions.iter().find(|p| p.concurrency == b.concurrency && p.k == k));
                best.row(vec![
                    b.concurrency.to_string(),
                    b.best_k.map_or("none meets the floor".into(), |k| k.to_string()),
                    row.map_or("-".into(), |p| fixed(p.throughput_per_gpu, 1)),
                    row.map_or("-".into(), |p| fixed(p.per_user_tps, 1)),
                    b.speedup.map_or("-".into(), |s| format!("{}x", fixed(s, 2))),
                    b.runner_up.map_or("-".into(), |k| k.to_string()),
                    b.margin_pct.map_or("-".into(), |m| format!("{}%", fixed(m, 1))),
                ]);
            }
            tables.push(all);
            tables.push(best);
        }
        tables
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = vec![format!(
            "AL(k), k = 0..{}, from {}: {}{}",
            self.acceptance.max_k(),
            self.acceptance.description,
            self.acceptance.al.iter().map(|a| a.map_or("–".into(), |a| fixed(a, 2))).collect::<Vec<_>>().join(", "),
            if self.acceptance.al.contains(&None) { " (– not measured, so not swept)" } else { "" }
        )];
        for sweep in &self.sweeps {
            notes.push(format!(
                "{}: bw_eff {:.2}, flops_eff {:.2}, t_fixed {:.0} µs, draft forward overhead {:.0} µs{}",
                sweep.hardware,
                sweep.bw_eff,
                sweep.flops_eff,
                sweep.t_fixed_us,
                sweep.draft_fixed_us,
                sweep
                    .operating_point
                    .map(|(b, k)| format!("; best operating point: concurrency {b}, k = {k}"))
                    .unwrap_or_default()
            ));
        }
        notes.extend(self.notes.iter().cloned());
        notes
    }
}

fn fitted_row(name: &str, f: &Fitted, digits: usize) -> Vec<String> {
    vec![
        name.to_string(),
        fixed(f.before, digits),
        fixed(f.after, digits),
        if f.identified { "fitted" } else { "kept/clamped" }.into(),
    ]
}

impl Report for Calibration {
    fn tables(&self) -> Vec<Table> {
        let mut fit = Table::new(
            format!(
                "Calibrated {} for {} ({} weights{}) from {}",
                self.profile.key,
                self.model,
                self.precision,
                self.drafter.as_deref().map(|d| format!(", drafter {d}")).unwrap_or_default(),
                self.origin
            ),
            &["parameter", "default", "fitted", "status"],
        );
        fit.row(fitted_row("bw_eff", &self.bw_eff, 3));
        fit.row(fitted_row("flops_eff", &self.flops_eff, 3));
        fit.row(fitted_row("t_fixed_us", &self.t_fixed_us, 1));
        fit.row(fitted_row("draft_fixed_us", &self.draft_fixed_us, 1));
        let mut residuals = Table::new(
            format!(
                "Residuals: rmse {:.3} ms spec off{}",
                self.rmse_spec_off_ms,
                self.rmse_spec_ms.map(|r| format!(", {r:.3} ms spec")).unwrap_or_default()
            ),
            &["line", "tp", "concurrency", "k", "AL", "context", "measured ms", "model ms", "residual ms", "residual"],
        );
        for r in &self.residuals {
            residuals.row(vec![
                r.line.to_string(),
                r.tp.to_string(),
                r.concurrency.to_string(),
                r.k.to_string(),
                fixed(r.al, 2),
                fixed(r.context, 0),
                fixed(r.measured_ms, 2),
                fixed(r.predicted_ms, 2),
                fixed(r.residual_ms, 2),
                format!("{}%", fixed(r.residual_pct, 1)),
            ]);
        }
        vec![fit, residuals]
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

/// Draws one panel per sweep: throughput per GPU (y) against per-user speed (x), one line per k through the
/// concurrencies (each point labelled with its concurrency), and the best k per concurrency ringed in black.
///
/// # Errors
/// [`Error::Io`] when the file cannot be written.
pub fn plot_svg(report: &PredictReport, path: &Path) -> Result<()> {
    let height = 520 * report.sweeps.len().max(1) as u32;
    let root = SVGBackend::new(path, (900, height)).into_drawing_area();
    let draw_error =
        |e: &dyn std::fmt::Display| Error::io(path, std::io::Error::other(format!("drawing the chart failed: {e}")));
    root.fill(&WHITE).map_err(|e| draw_error(&e))?;
    for (panel, sweep) in root.split_evenly((report.sweeps.len().max(1), 1)).iter().zip(&report.sweeps) {
        draw_sweep(panel, sweep).map_err(|e| draw_error(&e))?;
    }
    root.present().map_err(|e| draw_error(&e))?;
    Ok(())
}

fn draw_sweep<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    sweep: &Sweep,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let max_x = sweep.predictions.iter().map(|p| p.per_user_tps).fold(1.0, f64::max) * 1.08;
    let max_y = sweep.predictions.iter().map(|p| p.throughput_per_gpu).fold(1.0, f64::max) * 1.08;
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("{} on {} x{} — best k per concurrency ringed", sweep.model, sweep.hardware_name, sweep.tp),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..max_x, 0.0..max_y)?;
    chart.configure_mesh().x_desc("per-user speed (tok/s)").y_desc("throughput per GPU (tok/s)").draw()?;
    let mut swept: Vec<usize> = sweep.predictions.iter().map(|p| p.k).collect();
    swept.sort_unstable();
    swept.dedup();
    for k in swept {
        let color = Palette99::pick(k).to_rgba();
        let points: Vec<(f64, f64)> =
            sweep.predictions.iter().filter(|p| p.k == k).map(|p| (p.per_user_tps, p.throughput_per_gpu)).collect();
        let label = if k == 0 { "k = 0 (spec off)".to_string() } else { format!("k = {k}") };
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    for p in sweep.predictions.iter().filter(|p| p.k == 0) {
        chart.draw_series(std::iter::once(Text::new(
            format!("B={}", p.concurrency),
            (p.per_user_tps, p.throughput_per_gpu),
            ("sans-serif", 11),
        )))?;
    }
    for b in &sweep.best {
        if let Some(p) =
            b.best_k.and_then(|k| sweep.predictions.iter().find(|p| p.concurrency == b.concurrency && p.k == k))
        {
            chart.draw_series(std::iter::once(Circle::new(
                (p.per_user_tps, p.throughput_per_gpu),
                7,
                BLACK.stroke_width(2),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                format!("B={} k*={}", p.concurrency, p.k),
                (p.per_user_tps, p.throughput_per_gpu),
                ("sans-serif", 11),
            )))?;
        }
    }
    chart.configure_series_labels().border_style(BLACK).background_style(WHITE.mix(0.8)).draw()?;
    Ok(())
}
