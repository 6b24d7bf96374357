//! The per-request chart of `alsim simulate --plot`: the distribution of TPOT or per-user speed under real
//! acceptance and under each pin.

use plotters::prelude::*;

use super::chart::{colour, titled};
use crate::error::{Error, Result};
use crate::sim::{SimReport, SourceKind};

/// What the per-request plot shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum PlotMetric {
    /// Time per output token, ms (lower is better).
    Tpot,
    /// Per-user decode speed, tokens/s (higher is better).
    Speed,
}

impl PlotMetric {
    /// The metric of one request from its TPOT.
    fn of_tpot(self, tpot_ms: f64) -> f64 {
        match self {
            PlotMetric::Tpot => tpot_ms,
            PlotMetric::Speed => 1000.0 / tpot_ms,
        }
    }

    fn title(self) -> &'static str {
        match self {
            PlotMetric::Tpot => "Per-request TPOT",
            PlotMetric::Speed => "Per-user decode speed",
        }
    }

    fn axis(self) -> &'static str {
        match self {
            PlotMetric::Tpot => "TPOT (ms)",
            PlotMetric::Speed => "per-user speed (tokens/s)",
        }
    }
}

/// The empirical distribution (CDF) of a per-request metric — TPOT or per-user speed — for every source of
/// `report`, as SVG text.
///
/// # Errors
/// [`Error::Invalid`] when the chart cannot be drawn.
pub fn plot_requests(report: &SimReport, metric: PlotMetric) -> Result<String> {
    let sorted: Vec<(String, Vec<f64>)> = report
        .sources
        .iter()
        .map(|s| {
            let mut v: Vec<f64> = s.tpot_ms.iter().map(|&t| metric.of_tpot(t)).collect();
            v.sort_by(f64::total_cmp);
            (s.label.clone(), v)
        })
        .collect();
    let quantile = |v: &[f64], p: f64| v[((v.len() - 1) as f64 * p) as usize];
    let low = sorted.iter().map(|(_, v)| quantile(v, 0.0)).fold(f64::INFINITY, f64::min);
    let high = sorted.iter().map(|(_, v)| quantile(v, 0.999)).fold(f64::NEG_INFINITY, f64::max);
    let pad = ((high - low) * 0.05).max(1e-3);
    let mut svg = String::new();
    let mut draw = || -> std::result::Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::with_string(&mut svg, (900, 560)).into_drawing_area();
        root.fill(&WHITE)?;
        let title = format!(
            "{} of {} requests at k = {} (real AL {:.2}, pinned {:.2}): step {} ms, output {}",
            metric.title(),
            report.requests,
            report.k,
            report.real_al,
            report.pinned_al,
            report.step_ms,
            report.output_lengths.describe()
        );
        let below = titled(&root, &title, 20)?;
        let mut chart = ChartBuilder::on(&below)
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d((low - pad)..(high + pad), 0f64..1f64)?;
        chart.configure_mesh().x_desc(metric.axis()).y_desc("share of requests at or below x").draw()?;
        // Real acceptance is drawn last, black and dashed over the pins: a pin with real's per-step law (a
        // rates pin) draws the same curve, and would otherwise hide it.
        let mut order: Vec<usize> = (0..sorted.len()).collect();
        order.sort_by_key(|&i| report.sources[i].source == SourceKind::Real);
        for i in order {
            let (label, values) = &sorted[i];
            let every = (values.len() / 800).max(1);
            let n = values.len() as f64;
            let points: Vec<(f64, f64)> =
                values.iter().enumerate().step_by(every).map(|(j, &x)| (x, (j + 1) as f64 / n)).collect();
            if report.sources[i].source == SourceKind::Real {
                let style = BLACK.stroke_width(3);
                chart
                    .draw_series(DashedLineSeries::new(points, 8, 5, style))?
                    .label(label.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
            } else {
                let line = colour(i + 1);
                chart
                    .draw_series(LineSeries::new(points, line.stroke_width(2)))?
                    .label(label.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], line.stroke_width(2)));
            }
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.9)).border_style(BLACK).draw()?;
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| Error::invalid("plot", format!("drawing the chart failed: {e}")))?;
    Ok(svg)
}
