//! Tables for curves measured from eval runs: `alsim golden collect` and `alsim golden check` (a retest).

#[cfg(feature = "pins")]
use super::findings::CheckResult;
use super::{Cell, Report, Table, fixed};
#[cfg(feature = "pins")]
use crate::diagnostic::{Location, Severity};
use crate::evidence::Verdict;
use crate::measured::collect::Collection;
use crate::measured::retest::Retest;

fn interval(lower: f64, upper: f64, digits: usize) -> String {
    format!("[{}, {}]", fixed(lower, digits), fixed(upper, digits))
}

fn steps(value: Option<f64>) -> String {
    value.map(|s| format!("{s:.0}")).unwrap_or_else(|| "-".into())
}

impl Report for Collection {
    fn tables(&self) -> Vec<Table> {
        let id = &self.identity;
        let written = if self.writes_curve() { "written to" } else { "NOT written (the runs disagree) to" };
        let mut t = Table::new(
            format!(
                "Golden curve {} ({}, {}, {}, {} draft sampling) {written} {}",
                id.model, id.mode, id.drafter, id.method, id.draft_sampling, self.output
            ),
            &["k", "AL", "SE", "basis", &format!("{:.0}% CI", self.confidence * 100.0), "steps", "runs", "runs agree"],
        );
        for p in &self.points {
            let ci = &p.al.confidence_interval;
            t.row(vec![
                p.k.to_string(),
                fixed(p.al.point_estimate, 3),
                fixed(p.al.standard_error, 4),
                p.basis.clone(),
                interval(ci.lower_bound, ci.upper_bound, 3),
                format!("{:.0}", p.steps),
                p.runs.len().to_string(),
                match &p.heterogeneity {
                    None => "-".into(),
                    Some(h) => format!("{} (Cochran p = {:.3})", if h.pooled { "yes" } else { "NO" }, h.p_value),
                },
            ]);
        }
        let mut tables = vec![t];
        if !self.shortfalls.is_empty() {
            let mut s = Table::new(
                format!("Draft lengths that need more verification steps for SE ≤ {}", self.target_se),
                &["k", "SE now", "further steps"],
            );
            for f in &self.shortfalls {
                s.row(vec![f.k.to_string(), fixed(f.standard_error, 4), steps(f.further_steps)]);
            }
            tables.push(s);
        }
        tables.extend(self.check.tables());
        tables
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        for p in &self.points {
            let k = p.k;
            if p.heterogeneous() {
                let runs: Vec<String> =
                    p.runs.iter().map(|r| format!("{} AL {}", r.location, fixed(r.al, 3))).collect();
                notes.push(format!(
                    "k = {k}: the runs disagree beyond their noise ({}), so no curve was written: their pooled value describes none of the workloads; collect each workload's curve from its own runs",
                    runs.join(", ")
                ));
            }
            notes.extend(p.undecided.iter().map(|u| format!("k = {k}: no interval can be trusted yet: {u}")));
            notes.extend(p.read_back.iter().map(|r| format!("k = {k}: {r}")));
            notes.extend(p.notes.iter().map(|n| format!("k = {k}: {n}")));
        }
        notes
    }
}

/// The verdict's words for a curve rather than a pin.
fn retest_label(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Consistent => "consistent",
        Verdict::PinTooHigh => "curve too high",
        Verdict::PinTooLow => "curve too low",
        Verdict::Mixed => "curve too high for some runs or k, too low for others",
        Verdict::Inconclusive => "undecided",
    }
}

impl Report for Retest {
    fn tables(&self) -> Vec<Table> {
        let mut t = Table::new(
            format!(
                "Drift of {}: {} (tolerance ±{}, {:.0}% family confidence, {} over {} k: {:.4} per k)",
                self.curve,
                retest_label(self.overall),
                self.tolerance,
                self.confidence * 100.0,
                self.correction,
                self.points.len(),
                self.per_k_confidence
            ),
            &["k", "golden AL", "measured AL", "difference [CI]", "verdict", "steps", "runs", "further steps"],
        );
        for p in &self.points {
            let (measured, difference) = match (&p.measured, &p.difference) {
                (Some(m), Some(d)) => {
                    let (low, high) = (d.confidence_interval.lower_bound, d.confidence_interval.upper_bound);
                    let shown = format!("{:+.3} {}", d.point_estimate, interval(low, high, 3));
                    (Cell::number(m.point_estimate, 3), Cell::interval(d.point_estimate, low, high, shown, None))
                }
                _ => (Cell::missing(), "runs disagree".into()),
            };
            t.row(vec![
                Cell::from(p.k.to_string()),
                Cell::number(p.golden, 3),
                measured,
                difference,
                retest_label(p.verdict).into(),
                Cell::number(p.steps, 0),
                p.runs.to_string().into(),
                p.further_steps.map_or_else(Cell::missing, |s| Cell::number(s, 0)),
            ]);
        }
        vec![t]
    }

    fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> =
            self.points.iter().flat_map(|p| p.undecided.iter().map(move |u| format!("k = {}: {u}", p.k))).collect();
        if !self.not_measured.is_empty() {
            notes.push(format!(
                "no runs for k = {}: those values are not checked",
                self.not_measured.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
            ));
        }
        notes
    }
}

/// The curve's check, then each k whose runs disagree beyond noise, at the file it was to be written to.
#[cfg(feature = "pins")]
impl super::ci::Checked for Collection {
    fn command(&self) -> &'static str {
        "alsim golden collect"
    }

    fn results(&self) -> Vec<CheckResult> {
        let mut results = self.check.results();
        for p in self.points.iter().filter(|p| p.heterogeneous()) {
            let runs: Vec<String> = p.runs.iter().map(|r| format!("{} AL {}", r.location, fixed(r.al, 3))).collect();
            results.push(CheckResult::new(
                "pooled",
                Severity::Error,
                Some(Location::in_file(self.output.clone(), None)),
                format!(
                    "k = {}: the runs disagree beyond their noise ({}); no curve was written",
                    p.k,
                    runs.join(", ")
                ),
            ));
        }
        results
    }

    fn summary(&self) -> String {
        let written = if self.writes_curve() { "written" } else { "not written" };
        format!(
            "alsim golden collect: {} {written}; {} k, {} need more verification steps",
            self.output,
            self.points.len(),
            self.shortfalls.len()
        )
    }
}

/// Each k the curve is off at (or cannot be told at), in the curve's file.
#[cfg(feature = "pins")]
impl super::ci::Checked for Retest {
    fn command(&self) -> &'static str {
        "alsim golden check"
    }

    fn results(&self) -> Vec<CheckResult> {
        self.points
            .iter()
            .filter(|p| p.verdict != Verdict::Consistent)
            .map(|p| {
                let measured = match &p.difference {
                    Some(d) => format!(
                        "measured − golden {:+.3} {}",
                        d.point_estimate,
                        interval(d.confidence_interval.lower_bound, d.confidence_interval.upper_bound, 3)
                    ),
                    None => "the runs disagree".into(),
                };
                let more = p.further_steps.map(|s| format!("; about {s:.0} more steps decide")).unwrap_or_default();
                CheckResult::new(
                    super::evidence::verdict_rule(p.verdict),
                    super::evidence::verdict_severity(p.verdict),
                    Some(Location::in_file(self.file.clone(), None)),
                    format!(
                        "k = {}: golden AL {:.3}, {measured} (tolerance ±{}): {}{more}",
                        p.k,
                        p.golden,
                        self.tolerance,
                        retest_label(p.verdict)
                    ),
                )
            })
            .collect()
    }

    fn summary(&self) -> String {
        format!("alsim golden check: {} is {} over {} k", self.curve, retest_label(self.overall), self.points.len())
    }
}
