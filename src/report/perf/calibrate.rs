//! Tables for [`Calibration`]: the summary the model is judged on, each group's fit and score, the pooled
//! profile, and — for step times — the parts and the largest residuals.

use crate::perf::calibrate::fit::ScaleFit;
use crate::perf::calibrate::{Calibration, Mode, Summary};
use crate::perf::terms::COLUMNS;
use crate::report::{Cell, Report, Table, fixed};

/// Every distinct row's measured and modelled figures as CSV (what `calibrate --residuals` writes), in
/// file order for step times and by group and concurrency for serving pairs; `repeats` counts the rows of the
/// file that repeat it verbatim.
pub fn residuals_csv(cal: &Calibration) -> String {
    if let Some(exchange) = &cal.exchange {
        return super::exchange::points(exchange).csv();
    }
    let mut t = if let Some(steps) = &cal.steps {
        let mut t = Table::new(
            "",
            &[
                "line",
                "repeats",
                "deployment",
                "concurrency",
                "k",
                "context",
                "measured_ms",
                "model_ms",
                "residual_pct",
            ],
        );
        for r in &steps.residuals {
            t.row(vec![
                r.line.to_string(),
                r.repeats.to_string(),
                r.group.clone(),
                r.concurrency.to_string(),
                r.k.to_string(),
                fixed(r.context, 0),
                fixed(r.measured_ms, 4),
                fixed(r.predicted_ms, 4),
                fixed(r.residual_pct, 2),
            ]);
        }
        t
    } else {
        Table::new(
            "",
            &[
                "line",
                "repeats",
                "group",
                "concurrency",
                "measured_speedup",
                "model_speedup",
                "residual_pct",
                "spec_off_ms",
                "spec_off_model_ms",
            ],
        )
    };
    for (group, p) in cal.serving.iter().flat_map(|s| &s.rows) {
        t.row(vec![
            p.line.to_string(),
            p.repeats.to_string(),
            group.clone(),
            p.concurrency.to_string(),
            fixed(p.measured, 4),
            fixed(p.predicted, 4),
            fixed((p.predicted / p.measured - 1.0) * 100.0, 2),
            p.spec_off_ms.map_or(String::new(), |ms| fixed(ms, 4)),
            fixed(p.spec_off_model_ms, 4),
        ]);
    }
    t.csv()
}

fn pct(v: f64) -> String {
    format!("{} %", fixed(v * 100.0, 1))
}

fn opt_pct(v: Option<f64>) -> String {
    v.map_or("-".into(), pct)
}

fn efficiencies(fit: &ScaleFit) -> String {
    let e = &fit.efficiency;
    let overlap = fit.overlap_at_bound.map(|_| format!(" overlap {:.2}", e.overlap)).unwrap_or_default();
    format!("bw {:.2} flops {:.2} attn {:.2}{overlap}", e.bw_eff, e.flops_eff, e.attn_eff)
}

/// What sits at a bound, the scales the rows could not identify (held at their priors), or that the start was
/// kept whole.
fn bounds(fit: &ScaleFit) -> String {
    let mut out: Vec<String> = fit.bounds_hit().into_iter().map(String::from).collect();
    if !fit.unidentified.is_empty() {
        let names: Vec<&str> = fit.unidentified.iter().map(|g| g.name()).collect();
        out.push(format!("{} at prior (not identified)", names.join("+")));
    }
    if fit.kept_start {
        out.push("start kept".into());
    }
    if out.is_empty() { "-".into() } else { out.join(", ") }
}

fn summary_table(origin: &str, mode: Mode, s: &Summary) -> Table {
    let title = match mode {
        Mode::Fit => format!("Calibration summary: {origin}"),
        Mode::Score => format!("Profile scored on {origin} (nothing refitted)"),
    };
    let mut t = Table::new(title, &["figure", "value"]);
    let mut row = |name: &str, value: String| t.row(vec![name.to_string(), value]);
    row("rows", s.rows.to_string());
    row("groups", s.groups.to_string());
    let spec_off = if mode == Mode::Score { "spec-off, median |error|" } else { "spec-off fit, median |error|" };
    row(spec_off, opt_pct(s.spec_off_median_abs_rel_error));
    if s.step_time_median_abs_rel_error.is_some() {
        row("step time at k ≥ 1 (fit on k = 0), median |error|", opt_pct(s.step_time_median_abs_rel_error));
        row("step time at k ≥ 1, largest |error|", opt_pct(s.step_time_max_abs_rel_error));
        row("step-time rows off by more than 30 %", s.step_time_rows_over_30pct.map_or("-".into(), |n| n.to_string()));
    }
    if s.speedup_median_abs_rel_error.is_some() {
        row("speedup, median |error|", opt_pct(s.speedup_median_abs_rel_error));
        row("flat line per group (baseline), median |error|", opt_pct(s.flat_line_median_abs_rel_error));
        row(
            "trend sign right (groups with ≥ 3 concurrencies)",
            match (s.trend_sign_agreement, s.trend_groups) {
                (Some(share), Some(n)) => format!("{} of {n} ({})", (share * n as f64).round(), pct(share)),
                _ => "-".into(),
            },
        );
        row("groups with a fitted AL", s.al_fitted_groups.map_or("-".into(), |n| n.to_string()));
    }
    if s.level_median_abs_rel_error.is_some() {
        row("speedup where the AL is given (the level), median |error|", opt_pct(s.level_median_abs_rel_error));
    }
    row("groups whose fit hit a bound", s.fits_at_bound.to_string());
    row("groups with a scale the rows cannot identify (at its prior)", s.fits_with_unidentified_scales.to_string());
    row("groups whose fit was worse than the start (start kept)", s.fits_kept_at_start.to_string());
    if let Some(c) = &s.choice {
        row("choice of k right (regret < 1 %)", format!("{} of {} cells", c.right, c.cells));
        row("choice of k, median / largest regret", format!("{} / {}", pct(c.regret_median), pct(c.regret_max)));
        row("speculation on/off wrong", c.on_off_wrong.to_string());
    }
    t
}

impl Report for Calibration {
    fn tables(&self) -> Vec<Table> {
        if let Some(exchange) = &self.exchange {
            return super::exchange::tables(&self.origin, &self.summary, exchange);
        }
        let mut tables = vec![summary_table(&self.origin, self.mode, &self.summary)];
        if let Some(serving) = &self.serving {
            let mut t = Table::new(
                "Per group: spec-off fit, AL, and speedup measured/predicted per concurrency",
                &[
                    "group",
                    "AL",
                    "fitted efficiencies",
                    "fixed ms",
                    "bound",
                    "spec-off err",
                    "speedup by concurrency (measured/predicted)",
                    "err",
                    "flat err",
                    "trend",
                ],
            );
            for g in &serving.groups {
                let points: Vec<String> = g
                    .points
                    .iter()
                    .map(|p| format!("{}:{}/{}", p.concurrency, fixed(p.measured, 2), fixed(p.predicted, 2)))
                    .collect();
                t.row(vec![
                    g.label.clone(),
                    format!("{}{}", fixed(g.al, 2), if g.al_fitted { " (fitted)" } else { "" }),
                    efficiencies(&g.fit),
                    fixed(g.fixed_ms, 2),
                    bounds(&g.fit),
                    opt_pct(g.spec_off_median_abs_rel_error),
                    points.join(" "),
                    pct(g.speedup_median_abs_rel_error),
                    pct(g.flat_line_median_abs_rel_error),
                    g.trend.map_or("-".into(), |t| {
                        let dir = |v: f64| if v < 0.0 { "falls" } else { "rises" };
                        format!("{} / {}{}", dir(t.measured), dir(t.predicted), if t.agree { "" } else { " ✗" })
                    }),
                ]);
            }
            tables.push(t);
        }
        if let Some(steps) = &self.steps {
            let mut t = Table::new(
                "Per deployment: fit on k = 0, judged on k ≥ 1",
                &[
                    "deployment",
                    "k=0 rows",
                    "k≥1 rows",
                    "fitted efficiencies",
                    "bound",
                    "k=0 err",
                    "k≥1 median err",
                    "k≥1 max err",
                    "with speculation fitted",
                ],
            );
            for g in &steps.groups {
                t.row(vec![
                    g.label.clone(),
                    g.spec_off_rows.to_string(),
                    g.spec_rows.to_string(),
                    efficiencies(&g.fit),
                    bounds(&g.fit),
                    pct(g.spec_off_median_abs_rel_error),
                    opt_pct(g.spec_median_abs_rel_error),
                    opt_pct(g.spec_max_abs_rel_error),
                    g.speculation_fit
                        .map_or("-".into(), |(scale, err)| format!("scale {} → {}", fixed(scale, 2), pct(err))),
                ]);
            }
            tables.push(t);
            if !steps.routing_locality.is_empty() {
                let mut locality = Table::new(
                    "Routing locality fitted to experts_touched at k = 0, predicting the experts of the k ≥ 1 rows",
                    &[
                        "model",
                        "k=0 rows",
                        "profile value",
                        "fitted",
                        "k=0 median |error|",
                        "k≥1 rows",
                        "k≥1 median |error|",
                        "k≥1 max |error|",
                    ],
                );
                for l in &steps.routing_locality {
                    locality.row(vec![
                        l.model.clone(),
                        l.rows.to_string(),
                        fixed(l.before, 2),
                        fixed(l.routing_locality, 3),
                        pct(l.median_abs_rel_error),
                        l.spec_rows.to_string(),
                        opt_pct(l.spec_median_abs_rel_error),
                        opt_pct(l.spec_max_abs_rel_error),
                    ]);
                }
                tables.push(locality);
            }
            if !steps.parts.is_empty() {
                let mut parts = Table::new(
                    "Measured parts against the model's (after the fit)",
                    &["part", "rows", "median |error|", "median predicted/measured"],
                );
                for p in &steps.parts {
                    parts.row(vec![
                        p.part.clone(),
                        p.rows.to_string(),
                        pct(p.median_abs_rel_error),
                        fixed(p.median_ratio, 2),
                    ]);
                }
                tables.push(parts);
            }
            let mut worst = Table::new(
                "Largest residuals (k = 0 rows in sample, k ≥ 1 rows held out)",
                &["line", "deployment", "concurrency", "k", "context", "measured ms", "model ms", "residual"],
            );
            for r in &steps.worst {
                worst.row(vec![
                    // A row the file repeats verbatim is listed once, at its first line, with its count.
                    Cell::from(if r.repeats > 1 {
                        format!("{} (×{})", r.line, r.repeats)
                    } else {
                        r.line.to_string()
                    }),
                    r.group.clone().into(),
                    r.concurrency.to_string().into(),
                    r.k.to_string().into(),
                    Cell::number(r.context, 0),
                    Cell::number(r.measured_ms, 3),
                    Cell::number(r.predicted_ms, 3),
                    Cell::quantity(r.residual_pct, format!("{}%", fixed(r.residual_pct, 1)), "%"),
                ]);
            }
            tables.push(worst);
        }
        let mut headers = vec!["hardware", "rows"];
        headers.extend(COLUMNS);
        headers.extend(["bound", "median err"]);
        let mut pooled =
            Table::new("Pooled over every spec-off row of each hardware (the profile --output writes)", &headers);
        for p in &self.pooled {
            let mut row = vec![p.profile.key.clone(), p.rows.to_string()];
            row.extend(
                p.fit
                    .efficiency
                    .values()
                    .iter()
                    .zip(COLUMNS)
                    .map(|(v, name)| fixed(*v, if name.ends_with("_eff") || name == "overlap" { 3 } else { 1 })),
            );
            row.extend([bounds(&p.fit), pct(p.median_abs_rel_error)]);
            pooled.row(row);
        }
        tables.push(pooled);
        if let Some(choice) = &self.choice {
            tables.extend(super::choice_score::calibration_tables(choice));
        }
        tables
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}
