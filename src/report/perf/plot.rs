//! The chart InferenceX readers know: throughput per GPU (y) against per-user speed (x), one curve per k
//! through the concurrencies, the Pareto frontier over all of them, and the chosen k per concurrency ringed.

use plotters::prelude::*;

use super::setup;
use crate::error::{Error, Result};
use crate::perf::{PredictReport, Sweep};
use crate::report::chart::{colour, labelled, titled};

/// One panel per sweep of `alsim predict`'s report, as SVG text.
///
/// # Errors
/// [`Error::Invalid`] when the chart cannot be drawn.
pub fn plot_svg(report: &PredictReport) -> Result<String> {
    plot_sweeps_svg(&report.sweeps, report.min_user_tps)
}

/// One panel per sweep (one entry's points in `alsim sweep`), with the per-user floor when one is set, as
/// SVG text.
///
/// # Errors
/// [`Error::Invalid`] when the chart cannot be drawn.
pub fn plot_sweeps_svg(sweeps: &[Sweep], min_user_tps: Option<f64>) -> Result<String> {
    let height = 560 * sweeps.len().max(1) as u32;
    let mut svg = String::new();
    let draw_error = |e: &dyn std::fmt::Display| Error::invalid("plot", format!("drawing the chart failed: {e}"));
    {
        let root = SVGBackend::with_string(&mut svg, (980, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw_error(&e))?;
        for (panel, sweep) in root.split_evenly((sweeps.len().max(1), 1)).iter().zip(sweeps) {
            draw_sweep(panel, sweep, min_user_tps).map_err(|e| draw_error(&e))?;
        }
        root.present().map_err(|e| draw_error(&e))?;
    }
    Ok(svg)
}

fn draw_sweep<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    sweep: &Sweep,
    min_user_tps: Option<f64>,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let max_x = sweep.predictions.iter().map(|p| p.per_user_tps).chain(min_user_tps).fold(1.0, f64::max) * 1.08;
    let max_y = sweep.predictions.iter().map(|p| p.throughput_per_gpu).fold(1.0, f64::max) * 1.08;
    // The concurrencies, with the setup's EP and DP-attention, tell apart the panels of one matrix entry.
    let low = sweep.best.iter().map(|b| b.concurrency).min().unwrap_or_default();
    let high = sweep.best.iter().map(|b| b.concurrency).max().unwrap_or_default();
    let span = if low == high { format!("concurrency {low}") } else { format!("concurrency {low} to {high}") };
    let title = format!("{}, {span} — frontier dashed, chosen k ringed", setup(sweep));
    let below = titled(area, &title, 15)?;
    let mut chart = ChartBuilder::on(&below)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..max_x, 0.0..max_y)?;
    chart.configure_mesh().x_desc("per-user speed (tok/s)").y_desc("throughput per GPU (tok/s)").draw()?;
    let mut swept: Vec<usize> = sweep.predictions.iter().map(|p| p.k).collect();
    swept.sort_unstable();
    swept.dedup();
    for k in swept {
        let color = colour(k);
        let points: Vec<(f64, f64)> =
            sweep.predictions.iter().filter(|p| p.k == k).map(|p| (p.per_user_tps, p.throughput_per_gpu)).collect();
        let label = if k == 0 { "k = 0 (spec off)".to_string() } else { format!("k = {k}") };
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    let frontier: Vec<(f64, f64)> = sweep.frontier.iter().map(|f| (f.per_user_tps, f.throughput_per_gpu)).collect();
    chart
        .draw_series(DashedLineSeries::new(frontier, 6, 4, BLACK.stroke_width(2)))?
        .label("Pareto frontier")
        // A dashed sample: a solid one would read as a k's curve.
        .legend(|(x, y)| {
            EmptyElement::at((x, y))
                + PathElement::new(vec![(0, 0), (7, 0)], BLACK.stroke_width(2))
                + PathElement::new(vec![(11, 0), (18, 0)], BLACK.stroke_width(2))
        });
    if let Some(floor) = min_user_tps {
        let grey = RGBColor(110, 110, 110);
        chart
            .draw_series(DashedLineSeries::new(vec![(floor, 0.0), (floor, max_y)], 3, 3, grey.stroke_width(2)))?
            .label(format!("per-user floor {floor} tok/s"))
            .legend(move |(x, y)| {
                EmptyElement::at((x, y))
                    + PathElement::new(vec![(0, 0), (4, 0)], grey.stroke_width(2))
                    + PathElement::new(vec![(7, 0), (11, 0)], grey.stroke_width(2))
                    + PathElement::new(vec![(14, 0), (18, 0)], grey.stroke_width(2))
            });
    }
    let mut concurrencies: Vec<usize> = sweep.best.iter().map(|b| b.concurrency).collect();
    concurrencies.sort_unstable();
    concurrencies.dedup();
    let shown = labelled(&concurrencies);
    for p in sweep.predictions.iter().filter(|p| p.k == 0 && shown.contains(&p.concurrency)) {
        chart.draw_series(std::iter::once(Text::new(
            format!("B={}", p.concurrency),
            (p.per_user_tps, p.throughput_per_gpu),
            ("sans-serif", 11),
        )))?;
    }
    for b in &sweep.best {
        if let Some(p) = b.best_k.and_then(|k| sweep.prediction(b.concurrency, k)) {
            chart.draw_series(std::iter::once(Circle::new(
                (p.per_user_tps, p.throughput_per_gpu),
                7,
                BLACK.stroke_width(2),
            )))?;
            if shown.contains(&p.concurrency) {
                chart.draw_series(std::iter::once(Text::new(
                    format!("B={} k*={}{}", p.concurrency, p.k, if b.toss_up { "?" } else { "" }),
                    (p.per_user_tps, p.throughput_per_gpu),
                    ("sans-serif", 11),
                )))?;
            }
        }
    }
    // The markers the curves' legend entries do not explain.
    chart
        .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
        .label("ringed: the chosen k at concurrency B (B=16 k*=3)")
        .legend(|(x, y)| Circle::new((x + 9, y), 6, BLACK.stroke_width(2)));
    chart
        .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
        .label("k*=3?: a toss-up, several k within the model error")
        .legend(|(x, y)| Text::new("?", (x + 5, y - 7), ("sans-serif", 14)));
    chart.configure_series_labels().border_style(BLACK).background_style(WHITE.mix(0.8)).draw()?;
    Ok(())
}
