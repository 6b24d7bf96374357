//! Tables for an exchange file's calibration: the fit of latency plus bytes over the link per hardware and
//! number of GPUs, each model's cost per token beside today's `moe_token_us`, and every row measured against
//! the fit and the charge.

use crate::perf::calibrate::Summary;
use crate::perf::calibrate::exchange::{ExchangeCalibration, REFERENCE_TOKENS};
use crate::report::{Cell, Table};

fn pct(v: Option<f64>) -> Cell {
    v.map_or_else(Cell::missing, |v| Cell::quantity(v * 100.0, format!("{:.1}%", v * 100.0), "%"))
}

fn opt(v: Option<f64>, digits: usize) -> Cell {
    v.map_or_else(Cell::missing, |v| Cell::number(v, digits))
}

/// The tables `alsim calibrate` shows for an exchange file.
pub(super) fn tables(origin: &str, summary: &Summary, cal: &ExchangeCalibration) -> Vec<Table> {
    let mut head = Table::new(format!("Expert-parallel exchange: {origin}"), &["figure", "value"]);
    head.row(vec![Cell::from("rows"), Cell::number(summary.rows as f64, 0)]);
    head.row(vec![Cell::from("hardware x GPUs fitted"), Cell::number(summary.groups as f64, 0)]);
    head.row(vec![
        Cell::from("latency + bytes / bandwidth, median |error|"),
        pct(summary.exchange_median_abs_rel_error),
    ]);
    head.row(vec![
        Cell::from("each model by the others' fit (held out), median |error|"),
        pct(summary.exchange_held_out_median_abs_rel_error),
    ]);
    let mut groups = Table::new(
        "Fit per hardware and GPUs: one MoE layer's dispatch + combine = latency + bytes over the link / bandwidth",
        &[
            "hardware",
            "GPUs",
            "rows",
            "models",
            "latency µs",
            "bandwidth GB/s",
            "profile link GB/s",
            "median |error|",
            "held out",
        ],
    );
    for g in &cal.groups {
        groups.row(vec![
            Cell::from(g.hardware.clone()),
            Cell::number(g.gpus as f64, 0),
            Cell::number(g.rows as f64, 0),
            Cell::number(g.models as f64, 0),
            Cell::number(g.fit.latency_us, 1),
            opt(g.fit.bandwidth_gb_s, 1),
            opt(g.profile_link_gb_s, 0),
            pct(Some(g.median_abs_rel_error)),
            pct(g.held_out_median_abs_rel_error),
        ]);
    }
    let at = format!("at {REFERENCE_TOKENS} tokens/GPU");
    let mut costs = Table::new(
        "Per token per MoE layer, against what predict charges today (moe_token_us)",
        &[
            "hardware",
            "GPUs",
            "model",
            "bytes/token",
            "bytes term µs",
            &format!("fitted µs {at}"),
            &format!("measured µs {at}"),
            "moe_token_us",
        ],
    );
    for c in &cal.costs {
        let charge = cal.groups.iter().find(|g| g.hardware == c.hardware && g.gpus == c.gpus).map(|g| g.moe_token_us);
        costs.row(vec![
            Cell::from(c.hardware.clone()),
            Cell::number(c.gpus as f64, 0),
            Cell::from(c.model.clone()),
            Cell::number(c.bytes_per_token, 0),
            Cell::number(c.marginal_us, 3),
            Cell::number(c.at_reference_us, 3),
            opt(c.measured_at_reference_us, 3),
            opt(charge, 2),
        ]);
    }
    vec![head, groups, costs, points(cal)]
}

/// Every row measured against the fit, the fit without its model, and today's charge (also what
/// `calibrate --residuals` writes for an exchange file).
pub fn points(cal: &ExchangeCalibration) -> Table {
    let mut t = Table::new(
        "Measured dispatch + combine against the fit and today's charge (tokens/GPU × moe_token_us)",
        &["line", "hardware", "GPUs", "model", "tokens/GPU", "measured µs", "fitted µs", "held out µs", "charged µs"],
    );
    for p in &cal.points {
        t.row(vec![
            Cell::number(p.line as f64, 0),
            Cell::from(p.hardware.clone()),
            Cell::number(p.gpus as f64, 0),
            Cell::from(p.model.clone()),
            Cell::number(p.tokens_per_gpu as f64, 0),
            Cell::number(p.measured_us, 1),
            Cell::number(p.fitted_us, 1),
            opt(p.held_out_us, 1),
            Cell::number(p.charged_us, 2),
        ]);
    }
    t
}
