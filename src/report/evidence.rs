//! Tables for [`EvalReport`] (`alsim eval`), and its verdicts as a check's results for CI.

use std::fmt::Write as _;

use super::{Cell, Report, Table, estimate_text, fixed};
use crate::evidence::artifact::ArtifactReading;
use crate::evidence::{EvalReport, FileResult, Verdict};

fn percent(x: f64) -> String {
    format!("{:+.1}%", 100.0 * x)
}

fn verdict_cell(r: &FileResult) -> String {
    if r.estimate.memory_warning.is_some() {
        return "inconclusive: phases outlast the batches".into();
    }
    if r.sample_too_small.is_some() {
        return "inconclusive: sample too small".into();
    }
    match (r.verdict, r.further_steps) {
        (Verdict::Inconclusive, Some(n)) => format!("inconclusive: ≈{n:.0} more steps"),
        (Verdict::Inconclusive, None) => "inconclusive: on the band edge".into(),
        (v, _) => v.label().into(),
    }
}

fn result_row(r: &FileResult) -> Vec<Cell> {
    let e = &r.estimate;
    let error = &r.throughput_error;
    vec![
        r.location.to_string().into(),
        format!("{}{}", r.engine.display_name(), r.format.map(|f| format!(" {f}")).unwrap_or_default()).into(),
        Cell::number(e.steps, 0),
        Cell::number(e.accepted, 0),
        Cell::estimate(&e.independent, 3),
        match (&e.design, e.design_effect) {
            (Some(d), Some(deff)) => {
                format!("{} deff {deff:.2} ({} {})", estimate_text(d, 3), e.batches, e.batch_source).into()
            }
            (Some(d), None) => format!("{} deff n/a ({} {})", estimate_text(d, 3), e.batches, e.batch_source).into(),
            _ => "-".into(),
        },
        verdict_cell(r).into(),
        Cell::interval(
            100.0 * error.point_estimate,
            100.0 * error.lower_bound,
            100.0 * error.upper_bound,
            format!(
                "{} [{}, {}]",
                percent(error.point_estimate),
                percent(error.lower_bound),
                percent(error.upper_bound)
            ),
            Some("%"),
        ),
    ]
}

impl Report for EvalReport {
    fn tables(&self) -> Vec<Table> {
        let pin = &self.pin;
        let mut results = Table::new(
            format!(
                "Pin AL {:.3} at k = {} ({}): consistent band [{:.3}, {:.3}], {:.0}% intervals — overall: {}",
                pin.al,
                pin.k,
                pin.source,
                pin.al - pin.tolerance,
                pin.al + pin.tolerance,
                100.0 * pin.confidence,
                self.overall.label()
            ),
            &[
                "evidence",
                "engine",
                "steps D",
                "accepted A",
                "AL (independent SE)",
                "AL (design-effect SE)",
                "verdict",
                "pin's throughput error",
            ],
        );
        for r in self.files.iter().chain(&self.pooled) {
            results.row(result_row(r));
        }
        let mut tables = vec![results];

        for r in self.files.iter().chain(&self.pooled).filter(|r| !r.estimate.positions.is_empty()) {
            let golden = pin.golden.as_ref().map(|g| g.unconditional());
            let mut positions = Table::new(
                format!("Per-position acceptance, {}", r.location.file),
                &["position i", "p_i (interval)", "c_i", "golden p_i", "difference", "departs from golden"],
            );
            for p in &r.estimate.positions {
                let departure = r.departures.iter().find(|d| d.position == p.position);
                positions.row(vec![
                    p.position.to_string(),
                    estimate_text(p.decisive(), 3),
                    fixed(p.conditional, 3),
                    golden.and_then(|g| g.get(p.position - 1)).map_or("-".into(), |g| fixed(*g, 3)),
                    departure.map_or("-".into(), |d| format!("{:+.3}", d.difference)),
                    departure.map_or("-".into(), |d| {
                        if !d.departs {
                            "no".into()
                        } else if d.difference < 0.0 {
                            "yes, below".into()
                        } else {
                            "yes, above".into()
                        }
                    }),
                ]);
            }
            tables.push(positions);
        }

        tables.extend(self.artifacts.iter().map(artifact_table));

        if let Some(h) = &self.heterogeneity {
            let mut table = Table::new(
                "Heterogeneity across evidence files (Cochran's Q)",
                &["Q", "df", "p-value", "I²", "pooled"],
            );
            table.row(vec![
                fixed(h.q, 2),
                h.degrees_of_freedom.to_string(),
                format!("{:.3e}", h.p_value),
                format!("{:.0}%", 100.0 * h.i_squared),
                if h.pooled { "yes".into() } else { "no: the files measure different acceptance".into() },
            ]);
            tables.push(table);
        }
        tables
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        for r in self.files.iter().chain(&self.pooled) {
            notes.push(format!("{}: {}", r.location.file, explain(self, r)));
            notes.extend(r.notes.iter().map(ToString::to_string));
        }
        if self.heterogeneity.as_ref().is_some_and(|h| !h.pooled) {
            notes.push(
                "not pooled: the files differ by more than sampling noise — a real difference between workloads is a finding, not noise to average away"
                    .into(),
            );
        }
        notes
    }
}

/// What an artifact held: every member read (its role and format) or skipped (and why), then the run's
/// facts its name and `meta_env.json` state.
fn artifact_table(a: &ArtifactReading) -> Table {
    let facts = a.facts.words();
    let title = match facts.is_empty() {
        true => format!("Artifact {}", a.artifact),
        false => format!("Artifact {}: {}", a.artifact, facts.join(", ")),
    };
    let mut table = Table::new(title, &["member", "read as", "why"]);
    for m in &a.read {
        let role = m.role.map(|r| format!("{} worker, ", r.name())).unwrap_or_default();
        table.row(vec![m.path.clone(), format!("{role}{}", m.format), "evidence".into()]);
    }
    for m in &a.skipped {
        table.row(vec![m.path.clone(), "skipped".into(), m.reason.clone()]);
    }
    table
}

/// One sentence saying what a result means.
fn explain(report: &EvalReport, r: &FileResult) -> String {
    let pin = &report.pin;
    let e = r.estimate.decisive();
    let ci = format!(
        "AL {:.3} [{:.3}, {:.3}] ({} SE, variance from {})",
        e.point_estimate,
        e.confidence_interval.lower_bound,
        e.confidence_interval.upper_bound,
        r.basis,
        r.estimate.variance_source.label()
    );
    let mut text = match r.verdict {
        Verdict::Consistent => format!("{ci} lies within {:.3} ± {:.3}: the pin is consistent", pin.al, pin.tolerance),
        Verdict::PinTooHigh | Verdict::PinTooLow | Verdict::Mixed => format!(
            "{ci}: {} — it {} decode throughput by about {:.1}% at a fixed step time",
            r.verdict.label(),
            if r.throughput_error.point_estimate > 0.0 { "overstates" } else { "understates" },
            100.0 * r.throughput_error.point_estimate.abs()
        ),
        Verdict::Inconclusive if r.sample_too_small.is_some() => format!(
            "{ci}, but {}: no verdict from so small a sample",
            r.sample_too_small.as_deref().unwrap_or_default()
        ),
        Verdict::Inconclusive => match r.further_steps {
            Some(n) => {
                format!("{ci} straddles a band edge: about {n:.0} more verification steps decide at this estimate")
            }
            None => format!("{ci} sits on a band edge: no number of steps decides at this estimate"),
        },
    };
    if r.basis == "independent" && r.estimate.design.is_none() {
        text.push_str(
            "; no time series, so the interval assumes independent steps and is too narrow where steps of a request are correlated",
        );
    }
    if let Some(reason) = &r.read_back {
        let _ = write!(text, "; but {reason}, so the verdict holds only if this run verified for real");
    }
    if let Some(i) = r.first_departure {
        let _ = write!(text, "; the real chain departs from the golden chain first at position {i}");
    }
    text
}

/// The rule of a verdict: its `alsim explain` topic (`pin-too-high`).
#[cfg(feature = "pins")]
pub(super) fn verdict_rule(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Consistent => "consistent",
        Verdict::PinTooHigh => "pin-too-high",
        Verdict::PinTooLow => "pin-too-low",
        Verdict::Mixed => "mixed",
        Verdict::Inconclusive => "inconclusive",
    }
}

/// The severity a verdict is reported at: an error where the pin differs, a warning where undecided.
#[cfg(feature = "pins")]
pub(super) fn verdict_severity(verdict: Verdict) -> crate::diagnostic::Severity {
    use crate::diagnostic::Severity;
    match verdict {
        v if v.differs() => Severity::Error,
        Verdict::Inconclusive => Severity::Warning,
        _ => Severity::Note,
    }
}

/// One result per evidence source at its step counter's line, then the pool's, at the first source's: GitHub
/// code scanning refuses a whole SARIF file for one result that lies in no file.
#[cfg(feature = "pins")]
impl super::ci::Checked for EvalReport {
    fn command(&self) -> &'static str {
        "alsim eval"
    }

    fn results(&self) -> Vec<super::findings::CheckResult> {
        let files = self.files.iter().map(|r| (r, false));
        files
            .chain(self.pooled.iter().map(|r| (r, true)))
            .map(|(r, pooled)| {
                let place = if pooled { format!("{}: ", r.location.file) } else { String::new() };
                let message = format!("{place}pin {:.3} (k = {}): {}", self.pin.al, self.pin.k, explain(self, r));
                let at = if pooled { self.files.first().map_or(&r.location, |f| &f.location) } else { &r.location };
                super::findings::CheckResult::new(
                    verdict_rule(r.verdict),
                    verdict_severity(r.verdict),
                    Some(at.clone()),
                    message,
                )
            })
            .collect()
    }

    fn summary(&self) -> String {
        format!(
            "alsim eval: {} for pin {:.3} at k = {} over {} evidence source(s)",
            self.overall.label(),
            self.pin.al,
            self.pin.k,
            self.files.len()
        )
    }
}

#[cfg(all(test, feature = "pins"))]
mod tests {
    use super::super::ci::{CiFormat, render_ci};
    use crate::engine::Engine;
    use crate::evidence::{Evidence, InputFormat, Location, PinUnderTest, Window, evaluate};

    #[test]
    fn annotations_escape_and_pick_levels() {
        let pin = PinUnderTest::new(2.83, 3, 0.05, 0.95, "--pin").unwrap();
        let ev = Evidence {
            location: Location::in_file("runs/a,b:c.prom", Some(7)),
            engine: Engine::Vllm,
            format: InputFormat::Prometheus,
            k: None,
            total: Window::new(1e6, 1.7e6),
            batches: Vec::new(),
            notes: Vec::new(),
        };
        let text = render_ci(&evaluate(&pin, &[ev]).unwrap(), CiFormat::Github);
        assert!(
            text.starts_with("::error file=runs/a%2Cb%3Ac.prom,line=7,title=alsim eval%3A pin-too-high::pin 2.830"),
            "{text}"
        );
        assert!(text.contains("pin too high"), "{text}");
    }
}
