//! Tables for golden curves (`alsim curve …`) and unit conversions (`alsim convert`).

use serde::Serialize;

#[cfg(feature = "cli")]
use super::layout;
use super::{Report, Table, fixed};
use crate::accept::Conversion;
use crate::accept::CurveView;
use crate::accept::fit::FitSummary;
use crate::curve::CurveSummary;
use crate::curve::check::CurveReport;
use crate::diagnostic::FindingClass;

fn opt(value: &Option<String>) -> String {
    value.clone().unwrap_or_else(|| "not recorded".into())
}

fn opt_fixed(value: Option<f64>, digits: usize) -> String {
    value.map(|v| fixed(v, digits)).unwrap_or_else(|| "-".into())
}

/// The embedded (or given) curves, one row per file and model key.
#[derive(Debug, Clone, Serialize)]
pub struct CurveListing {
    /// The rows.
    pub curves: Vec<CurveSummary>,
}

impl Report for CurveListing {
    fn tables(&self) -> Vec<Table> {
        let mut t = Table::new(
            "Golden curves",
            &["model key", "drafter", "method", "draft sampling", "modes", "k", "measured on", "file", "source run"],
        );
        for c in &self.curves {
            t.row(vec![
                c.model.clone(),
                opt(&c.drafter),
                opt(&c.method),
                opt(&c.draft_sampling),
                c.modes.iter().map(|m| m.name()).collect::<Vec<_>>().join(", "),
                format!("{}..{}", c.k_min, c.k_max),
                c.measured_on.clone(),
                c.origin.clone(),
                opt(&c.source_run),
            ]);
        }
        vec![t]
    }
}

impl Report for CurveView {
    fn tables(&self) -> Vec<Table> {
        let p = &self.provenance;
        let mut facts = Table::new(format!("{} ({}) from {}", self.model, self.mode, self.origin), &["fact", "value"]);
        for (name, value) in [
            ("drafter", p.drafter.clone()),
            ("method", p.method.clone()),
            ("draft sampling", p.draft_sampling.clone()),
            ("hardware", p.hardware.clone()),
            ("engine", p.engine.clone()),
            ("source run", p.source_run.clone()),
            ("settings", Some(p.settings.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", "))),
            ("mode request", p.mode_settings.get(self.mode.name()).cloned()),
        ] {
            facts.row(vec![name.into(), opt(&value)]);
        }
        let mut points =
            Table::new("Golden AL and the chain it implies", &["k", "AL", "increment p_k", "conditional c_k"]);
        for r in &self.points {
            points.row(vec![r.k.to_string(), fixed(r.al, 2), opt_fixed(r.increment, 3), opt_fixed(r.conditional, 3)]);
        }
        let mut fits = Table::new(
            "Fits (best leave-one-k-out first); fitted AL(k)",
            &["fit", "RMS residual", "leave-one-k-out RMS", "fitted AL(1..)"],
        );
        for f in &self.fits {
            fits.row(vec![
                f.kind.name().into(),
                fixed(f.rmse, 4),
                opt_fixed(f.loo_rmse, 4),
                f.residuals.iter().map(|r| fixed(r.fitted, 2)).collect::<Vec<_>>().join(", "),
            ]);
        }
        vec![facts, points, fits]
    }

    fn notes(&self) -> Vec<String> {
        self.problems.iter().map(|p| format!("{}: {}", p.finding.severity, p.text())).collect()
    }
}

impl Report for CurveReport {
    fn tables(&self) -> Vec<Table> {
        let mut t = Table::new(
            format!(
                "Curve check: {} file(s), {} error(s), {} warning(s)",
                self.files_checked, self.tally.errors, self.tally.warnings
            ),
            &["severity", "problem", "file", "key", "message"],
        );
        for p in &self.problems {
            t.row(vec![
                p.finding.severity.name().into(),
                p.finding.class.name().into(),
                p.finding.location.file.clone(),
                p.field.clone(),
                p.finding.message.clone(),
            ]);
        }
        vec![t]
    }

    #[cfg(feature = "cli")]
    fn human(&self, width: usize) -> String {
        let mut out = String::new();
        for p in &self.problems {
            let f = &p.finding;
            out.push_str(&layout::diagnostic(
                &f.location.to_string(),
                f.severity.name(),
                f.class.name(),
                &p.text(),
                None,
                width,
            ));
            out.push('\n');
        }
        let summary = format!(
            "{} file(s) checked: {} error(s), {} warning(s)",
            self.files_checked, self.tally.errors, self.tally.warnings
        );
        out.push_str(&layout::wrap(&summary, width, "", "  "));
        out
    }
}

/// Each problem at its value's line, its kind the rule (`dip`, `missing-k`).
#[cfg(feature = "pins")]
impl super::ci::Checked for CurveReport {
    fn command(&self) -> &'static str {
        "alsim curve check"
    }

    fn results(&self) -> Vec<super::findings::CheckResult> {
        self.problems
            .iter()
            .map(|p| {
                let f = &p.finding;
                super::findings::CheckResult::new(f.class.name(), f.severity, Some(f.location.clone()), p.text())
            })
            .collect()
    }

    fn summary(&self) -> String {
        format!(
            "alsim curve check: {} file(s), {} error(s), {} warning(s)",
            self.files_checked, self.tally.errors, self.tally.warnings
        )
    }
}

impl Report for FitSummary {
    fn tables(&self) -> Vec<Table> {
        let mut t =
            Table::new("Fit errors per curve", &["curve", "file", "fit", "RMS residual", "leave-one-k-out RMS"]);
        for r in &self.rows {
            t.row(vec![
                r.curve.clone(),
                r.origin.clone(),
                r.kind.name().into(),
                fixed(r.rmse, 4),
                opt_fixed(r.loo_rmse, 4),
            ]);
        }
        let mut pooled = Table::new("Leave-one-k-out RMS error pooled over all curves", &["fit", "pooled RMS"]);
        for (kind, rms) in self.pooled_loo() {
            pooled.row(vec![kind.name().into(), fixed(rms, 4)]);
        }
        vec![t, pooled]
    }
}

impl Report for Conversion {
    fn tables(&self) -> Vec<Table> {
        let mut t = Table::new(
            format!("AL {} at k = {} in every spelling", fixed(self.acceptance_length, 4), self.k),
            &["spelling", "value", "used by"],
        );
        for s in &self.spellings {
            t.row(vec![s.spelling.name().into(), fixed(s.value, 4), s.used_by.into()]);
        }
        let rates = |r: &[f64]| r.iter().map(|r| fixed(*r, 4)).collect::<Vec<_>>().join(", ");
        let mut shapes = Table::new(
            format!("Per-position unconditional rates p_1..p_{} with that mean", self.k),
            &["shape", "p_1..p_k", "used by"],
        );
        shapes.row(vec![
            "minimum variance".into(),
            rates(&self.forced_rates),
            "vLLM synthetic_acceptance_length, ATOM, TensorRT-LLM length pins; SGLang match-expected's marginal".into(),
        ]);
        shapes.row(vec![
            format!("geometric, constant conditional p = {}", fixed(self.geometric_p, 4)),
            rates(&self.geometric_rates),
            "llama.cpp --spec-synth-len".into(),
        ]);
        if let Some(given) = &self.given_rates {
            shapes.row(vec![
                "rates as given".into(),
                rates(given),
                "vLLM synthetic_acceptance_rates, llama.cpp --spec-synth-rates".into(),
            ]);
        }
        vec![t, shapes]
    }
}
