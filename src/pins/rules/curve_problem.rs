//! `curve-problem` (class 11): golden curves that cannot be told apart, are out of range, or break
//! monotonicity beyond their noise (decided by [`crate::curve::check`], one noise model for `curve check`
//! and the pin check). An error only where a pin's expected value rests on the entry, else a warning.

use crate::pins::{Class, Finding, Location, Severity};

/// A problem of a golden file at `at`, at the severity the curve check gave it.
pub(crate) fn finding(at: Location, message: String, severity: Severity) -> Finding {
    Finding::new(Class::CurveProblem, at, message).with_severity(severity)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_curve_checks_severity_is_kept() {
        let f = finding(Location::new("g.yaml", 4), "k = 3 below k = 2".into(), Severity::Warning);
        assert_eq!((f.class, f.severity), (Class::CurveProblem, Severity::Warning));
    }
}
