//! **Class 11** · error where a checked pin rests on it, a warning elsewhere.
//!
//! A golden curve cannot be trusted as it is: two files with identical headers and keys but different
//! drafters, a value outside [1, k+1], or a per-position increment that breaks monotonicity beyond
//! noise (see [model.md §2](model.md#2-from-a-golden-curve-to-a-chain)). `alsim curve check` judges
//! curves in full.
//!
//! Example (InferenceX): `deepseek-v4-pro-0813.thinking_on.8 = 3.47` falls 0.26 below the k = 7 value
//! (3.73), beyond the run-to-run noise of 0.083. No pin there rests on k = 8, so it is a warning.
//!
//! Fix: record the drafter in the curve file's header, or re-measure the entry.
//!
//! Allow: `# alsim: allow curve-problem -- REASON` in the curve file, at the end of the line the
//! finding names or alone on the line above it; or an entry of the allow-list file:
//! `- {file: golden_al_distribution/dsv4_mtp.yaml, class: curve-problem, reason: k = 8 to be
//! re-measured}`.
//
// The rule finds golden curves that cannot be told apart, are out of range, or break monotonicity
// beyond their noise (decided by [`crate::curve::check`], one noise model for `curve check` and the pin check). An
// error only where a pin's expected value rests on the entry, else a warning.

use crate::pins::curves::{CurveEntry, CurveProblem};
use crate::pins::{Class, Finding, Location, Severity};

/// The findings of `problems`, each told whether a pin's expected value rests on its entry (`used`).
pub(crate) fn run(problems: &[CurveProblem], used: &[CurveEntry]) -> Vec<Finding> {
    problems
        .iter()
        .map(|p| {
            let rests_on_a_pin = p.entry.as_ref().map(|entry| used.contains(entry));
            finding(p.at.clone(), p.text.clone(), p.severity, rests_on_a_pin)
        })
        .collect()
}

/// A problem of a golden file at `at`, at the severity the curve check gave it, unless it is about an entry
/// no pin's expected value rests on (`rests_on_a_pin` is `Some(false)`): then a warning that says so.
fn finding(at: Location, message: String, severity: Severity, rests_on_a_pin: Option<bool>) -> Finding {
    match rests_on_a_pin {
        Some(false) => {
            Finding::new(Class::CurveProblem, at, format!("{message} (no pin's expected value rests on this entry)"))
                .with_severity(Severity::Warning)
        }
        _ => Finding::new(Class::CurveProblem, at, message).with_severity(severity),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_curve_checks_severity_is_kept() {
        let f = finding(Location::new("g.yaml", 4), "k = 3 below k = 2".into(), Severity::Warning, None);
        assert_eq!((f.class, f.severity), (Class::CurveProblem, Severity::Warning));
        let at = || Location::new("g.yaml", 4);
        let used = finding(at(), "dip".into(), Severity::Error, Some(true));
        assert_eq!((used.severity, used.message.as_str()), (Severity::Error, "dip"));
        let unused = finding(at(), "dip".into(), Severity::Error, Some(false));
        assert_eq!(unused.severity, Severity::Warning);
        assert!(unused.message.ends_with("(no pin's expected value rests on this entry)"));
    }
}
