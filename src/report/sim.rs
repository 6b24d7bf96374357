//! Tables for [`SimReport`] (`alsim simulate`); its chart is in `request_chart`.

use super::{Cell, Report, Table};
use crate::accept::schedule::ScheduleKind;
use crate::sim::{Metric, SimReport, SourceResult};
use crate::stats::Estimate;

/// One pin's TPOT tails against real acceptance's.
struct TailGap<'a> {
    label: &'a str,
    p50_ms: f64,
    p99_ms: f64,
    p99_relative: f64,
    matches: bool,
}

/// Percentile `pct` of a source's per-request TPOT.
fn tpot(source: &SourceResult, pct: f64) -> &Estimate {
    source.summary.tpot_ms.percentile(pct).expect("every metric carries the standard percentiles")
}

/// The percentiles on the slow side: p90/p99 of a lower-is-better metric, p10/p1 of a higher-is-better one.
fn slow_tail(metric: &Metric, higher_is_better: bool) -> [&Estimate; 3] {
    let pick = |pct: f64| metric.percentile(pct).expect("every metric carries the standard percentiles");
    if higher_is_better { [pick(50.0), pick(10.0), pick(1.0)] } else { [pick(50.0), pick(90.0), pick(99.0)] }
}

impl SimReport {
    fn metric_table(
        &self,
        title: &str,
        higher_is_better: bool,
        digits: usize,
        metric: impl Fn(&SourceResult) -> &Metric,
    ) -> Table {
        let tails = if higher_is_better { ["p10 (slow tail)", "p1 (slow tail)"] } else { ["p90", "p99"] };
        let mut table = Table::new(title, &["source", "mean", "sd", "p50", tails[0], tails[1]]);
        for source in &self.sources {
            let m = metric(source);
            let mut row = vec![
                Cell::from(source.label.clone()),
                Cell::estimate(&m.mean, digits),
                Cell::number(m.standard_deviation, digits),
            ];
            row.extend(slow_tail(m, higher_is_better).iter().map(|e| Cell::estimate(e, digits)));
            table.row(row);
        }
        table
    }

    /// Each pinned source's TPOT tails beside real acceptance's: the gap at p50 and p99, and whether both
    /// intervals overlap real's (the pin reproduces the real tail within the simulation's own uncertainty).
    fn tail_gaps(&self) -> Vec<TailGap<'_>> {
        let Some(real) = self.sources.iter().find(|s| s.source == crate::sim::SourceKind::Real) else {
            return Vec::new();
        };
        let overlap = |a: &Estimate, b: &Estimate| {
            a.confidence_interval.lower_bound <= b.confidence_interval.upper_bound
                && b.confidence_interval.lower_bound <= a.confidence_interval.upper_bound
        };
        let (real50, real99) = (tpot(real, 50.0), tpot(real, 99.0));
        self.sources
            .iter()
            .filter(|s| matches!(s.source, crate::sim::SourceKind::Pinned { .. }))
            .map(|source| {
                let (p50, p99) = (tpot(source, 50.0), tpot(source, 99.0));
                TailGap {
                    label: source.label.trim_start_matches("pinned: "),
                    p50_ms: p50.point_estimate - real50.point_estimate,
                    p99_ms: p99.point_estimate - real99.point_estimate,
                    p99_relative: p99.point_estimate / real99.point_estimate - 1.0,
                    matches: overlap(p50, real50) && overlap(p99, real99),
                }
            })
            .collect()
    }

    fn tails_table(gaps: &[TailGap<'_>]) -> Table {
        let mut table = Table::new(
            "TPOT tails against real acceptance (same step time, same requests)",
            &["pin", "p50 − real", "p99 − real", "p99 vs real", "p50 and p99 match real"],
        );
        for gap in gaps {
            table.row(vec![
                Cell::from(gap.label.to_string()),
                Cell::quantity(gap.p50_ms, format!("{:+.3} ms", gap.p50_ms), "ms"),
                Cell::quantity(gap.p99_ms, format!("{:+.3} ms", gap.p99_ms), "ms"),
                Cell::quantity(gap.p99_relative * 100.0, format!("{:+.1}%", gap.p99_relative * 100.0), "%"),
                if gap.matches { "yes" } else { "no" }.into(),
            ]);
        }
        table
    }

    /// Which pins reproduce real acceptance's TPOT tails and which do not.
    fn tails_note(gaps: &[TailGap<'_>]) -> String {
        let names = |matches: bool| {
            let named: Vec<String> = gaps
                .iter()
                .filter(|g| g.matches == matches)
                .map(|g| format!("{} ({:+.1}% at p99)", g.label, g.p99_relative * 100.0))
                .collect();
            if named.is_empty() { "none".to_string() } else { named.join(", ") }
        };
        format!(
            "TPOT p50 and p99 within the intervals of real acceptance's: {}; not: {}. A pin with real's per-step law draws real's random streams, so it matches exactly",
            names(true),
            names(false)
        )
    }

    /// The real source and the first pinned one, for the headline comparison.
    fn real_and_pinned(&self) -> Option<(&SourceResult, &SourceResult)> {
        use crate::sim::SourceKind;
        let real = self.sources.iter().find(|s| s.source == SourceKind::Real)?;
        let pinned = self.sources.iter().find(|s| matches!(s.source, SourceKind::Pinned { .. }))?;
        Some((real, pinned))
    }
}

impl Report for SimReport {
    fn tables(&self) -> Vec<Table> {
        let mut tables = Vec::new();
        let mut headers = vec!["source".to_string(), "tokens/step [CI]".into(), "Var".into()];
        headers.extend((0..=self.k).map(|a| format!("P(a={a})")));
        let mut steps = Table {
            title: format!(
                "Per step: {} requests per source, k = {}, real AL {:.3}, pin {:.3}, seed {}",
                self.requests, self.k, self.real_al, self.pinned_al, self.seed
            ),
            headers,
            rows: Vec::new(),
        };
        for s in &self.sources {
            let step = &s.summary.per_step;
            let mut row = vec![
                Cell::from(s.label.clone()),
                Cell::estimate(&step.tokens_per_step, 3),
                Cell::number(step.variance, 3),
            ];
            row.extend(step.distribution.iter().map(|q| Cell::number(*q, 3)));
            steps.row(row);
        }
        tables.push(steps);
        let lengths = self.output_lengths.describe();
        tables.push(self.metric_table(&format!("Steps to finish S_N ({lengths})"), false, 1, |s| &s.summary.steps));
        tables.push(self.metric_table("Per-request acceptance length", true, 3, |s| &s.summary.acceptance_length));
        tables.push(self.metric_table(
            &format!("Time per output token, ms (step {} ms)", self.step_ms),
            false,
            3,
            |s| &s.summary.tpot_ms,
        ));
        let gaps = self.tail_gaps();
        if !gaps.is_empty() {
            tables.push(Self::tails_table(&gaps));
        }
        tables.push(self.metric_table("Per-user decode speed, tokens/s", true, 1, |s| &s.summary.tokens_per_second));
        if let Some(first) = self.batch.first() {
            let mut batch = Table::new(
                format!(
                    "Batches of {} ({} batches): shared versus per-request draws",
                    first.summary.batch, first.summary.batches
                ),
                &[
                    "source",
                    "draws",
                    "AL [CI]",
                    "SD of batch AL",
                    "SD of request tokens/step",
                    "intra-batch ρ",
                    "design effect",
                ],
            );
            for row in &self.batch {
                let b = &row.summary;
                batch.row(vec![
                    Cell::from(row.label.clone()),
                    match b.draws {
                        crate::sim::Draws::PerRequest => "per request".into(),
                        crate::sim::Draws::SharedByBatch => "shared by batch".into(),
                    },
                    Cell::estimate(&b.acceptance_length, 3),
                    Cell::number(b.batch_al_sd, 4),
                    Cell::number(b.request_sd, 4),
                    Cell::number(b.intra_batch_correlation, 3),
                    Cell::number(b.design_effect, 2),
                ]);
            }
            tables.push(batch);
        }
        if let Some(first) = self.exact.first() {
            let mut exact = Table::new(
                format!("Steps to emit N = {} tokens: exact versus Monte Carlo", first.output_tokens),
                &["source", "exact mean", "MC mean [CI]", "exact p50/p90/p99", "MC p50", "MC p90", "MC p99", "agrees"],
            );
            for row in &self.exact {
                let mc = &row.monte_carlo;
                let pct = |p: f64| Cell::estimate(mc.percentile(p).expect("standard percentile"), 0);
                exact.row(vec![
                    Cell::from(row.label.clone()),
                    Cell::number(row.exact_mean, 2),
                    Cell::estimate(&mc.mean, 2),
                    row.exact_percentiles.iter().map(u64::to_string).collect::<Vec<_>>().join(" / ").into(),
                    pct(50.0),
                    pct(90.0),
                    pct(99.0),
                    if row.agrees { "yes" } else { "NO" }.into(),
                ]);
            }
            tables.push(exact);
        }
        tables
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = vec![format!(
            "seed {} (rerun with --seed {} to reproduce; results do not depend on --threads); intervals at {:.0}%",
            self.seed,
            self.seed,
            self.confidence_level * 100.0
        )];
        notes.push(format!("real acceptance from {}", self.real_origin));
        notes.push(format!("rates pin [{}]: {}", self.rates_pin.list(", "), self.rates_pin.describe()));
        if let Some((real, pinned)) = self.real_and_pinned() {
            let p99 = |s: &SourceResult| s.summary.tpot_ms.percentile(99.0).map_or(f64::NAN, |e| e.point_estimate);
            let (r, p) = (p99(real), p99(pinned));
            // Golden ALs are rounded to 0.01, so a real chain within half of that has the pin's mean.
            let means = if (self.real_al - self.pinned_al).abs() < 0.005 {
                "same mean, other tails".to_string()
            } else {
                format!("real AL {:.3} against the pin's {:.3}, and other tails", self.real_al, self.pinned_al)
            };
            notes.push(format!(
                "{means}: p99 TPOT {r:.3} ms under real acceptance versus {p:.3} ms under '{}' ({:+.1}%); the pinned run hides that spread",
                pinned.label,
                (r / p - 1.0) * 100.0
            ));
        }
        let gaps = self.tail_gaps();
        if !gaps.is_empty() {
            notes.push(Self::tails_note(&gaps));
        }
        if let Some(het) = self.sources.iter().find(|s| s.source == crate::sim::SourceKind::RealHeterogeneous) {
            let base = self.sources.iter().find(|s| s.source == crate::sim::SourceKind::Real);
            let tail = |s: &SourceResult| s.summary.tpot_ms.percentile(99.0).map_or(f64::NAN, |e| e.point_estimate);
            let mut note = format!(
                "heterogeneous requests: log-odds spread {} across requests{}, odds shift {:+.4} calibrated numerically so the step-weighted AL stays {:.3} (simulated {:.3})",
                self.heterogeneity.spread,
                self.heterogeneity
                    .phases
                    .map(|p| format!(", two phases of mean {} steps at ±{} log-odds", p.mean_steps, p.spread))
                    .unwrap_or_default(),
                self.calibrated_shift,
                self.real_al,
                het.summary.per_step.tokens_per_step.point_estimate
            );
            if let Some(base) = base {
                note.push_str(&format!(
                    "; p99 TPOT moves from {:.3} to {:.3} ms ({:+.1}%) at the same mean",
                    tail(base),
                    tail(het),
                    (tail(het) / tail(base) - 1.0) * 100.0
                ));
            }
            notes.push(note);
        }
        if self.batch.iter().any(|b| b.summary.draws == crate::sim::Draws::SharedByBatch) {
            notes.push(
                "shared draws make every request of a batch move in lock-step: the design effect is how many times \
                 more variable a batch's mean is than B independent requests"
                    .into(),
            );
        }
        let match_expected = crate::sim::SourceKind::Pinned { schedule: ScheduleKind::SglangMatchExpected };
        if self.batch.iter().any(|b| b.source == match_expected)
            && !self.sources.iter().any(|s| s.source == match_expected)
        {
            notes.push(
                "SGLang match-expected draws per request exactly like the minimum-variance schedule, so it appears \
                 only in the batch table, where its shared draw differs"
                    .into(),
            );
        }
        if self.exact.iter().any(|e| !e.agrees) {
            notes.push(
                "an exact value fell outside its Monte Carlo interval (expected for about 1 in 20 intervals at 95%)"
                    .into(),
            );
        }
        notes
    }
}
