//! The golden curves' own problems (class 11), judged only as far as the pins need them.
//!
//! Two files with the same header (up to the source-run line) and the same keys cannot be told apart by
//! content: they are resolved by file name, with a warning. A value outside [1, k+1], AL(k) falling, or a
//! per-position increment p_i = AL(i) − AL(i−1) rising, beyond the noise of independent runs, is a
//! problem of that curve entry. The noise model follows docs/model.md §2 and §5: each AL(k) is a separate run
//! with a standard error of a few hundredths ([`CURVE_STANDARD_ERROR`]); a difference of two values has
//! √2 times that, an increment difference √6 times, and a violation is flagged beyond 1.96 of those.
//!
//! Severity (docs/pins.md#curve-problem): a problem fails the check only where a checked pin's expected value
//! rests on the affected entry; elsewhere it is a warning (`alsim curve check` is where curves are judged).

use std::path::Path;

use super::{Class, Finding, Location, Severity};
use crate::curve::{CurveFile, CurveSet, ThinkingMode};
use crate::units::RANGE_EPS;

/// Assumed standard error of one golden AL (docs/model.md §5: "a run of ~80 prompts has an AL standard error of
/// a few hundredths").
pub const CURVE_STANDARD_ERROR: f64 = 0.03;
/// Two-sided 95 % normal quantile used for curve noise.
const Z95: f64 = 1.96;

/// A curve entry a problem is about: (file origin, model, mode, k).
pub type CurveEntry = (String, String, ThinkingMode, usize);

/// One problem, with the entry it affects when it is about one value.
#[derive(Debug, Clone)]
pub struct CurveProblem {
    /// The finding (severity decided by [`gate`]).
    pub finding: Finding,
    /// The affected entry; `None` for problems about a whole file.
    pub entry: Option<CurveEntry>,
}

/// Every class-11 problem of the files in `curves`.
pub fn problems(curves: &CurveSet, repo: &Path) -> Vec<CurveProblem> {
    let canonical_repo = repo.canonicalize().ok();
    let rel = |origin: &str| -> String {
        match (Path::new(origin).canonicalize().ok(), &canonical_repo) {
            (Some(p), Some(r)) => {
                p.strip_prefix(r).map(|s| s.display().to_string()).unwrap_or_else(|_| origin.to_string())
            }
            _ => origin.to_string(),
        }
    };
    let short = |origin: &str| origin.rsplit('/').next().unwrap_or(origin).to_string();
    let mut out = Vec::new();
    let files = curves.files();
    let comparable = |f: &CurveFile| -> Vec<String> {
        f.header
            .iter()
            .filter(|l| {
                let lower = l.to_ascii_lowercase();
                !lower.starts_with("source github actions run") && !lower.starts_with("source_run")
            })
            .cloned()
            .collect()
    };
    for (i, a) in files.iter().enumerate() {
        for b in &files[i + 1..] {
            if a.models() == b.models() && comparable(a) == comparable(b) {
                out.push(CurveProblem {
                    finding: Finding::new(
                        Class::CurveProblem,
                        Location::new(rel(&b.origin), 1),
                        format!("same header and keys as {}: the two drafters are told apart only by file name; add a `# drafter:` line to each", short(&a.origin)),
                    )
                    .with_severity(Severity::Warning),
                    entry: None,
                });
            }
        }
    }
    let dip_noise = Z95 * 2f64.sqrt() * CURVE_STANDARD_ERROR;
    let increment_noise = Z95 * 6f64.sqrt() * CURVE_STANDARD_ERROR;
    for file in files {
        let text = crate::input::read_text(Path::new(&file.origin), crate::input::SMALL_FILE_LIMIT).unwrap_or_default();
        let index = super::lines::LineIndex::new(&text);
        for curve in &file.curves {
            let line_of = |k: usize| {
                let mut path = vec![curve.model().to_string()];
                if curve.mode() != ThinkingMode::Unspecified {
                    path.push(curve.mode().key().to_string());
                }
                path.push(k.to_string());
                index.line(&path)
            };
            let mut push = |k: usize, message: String| {
                out.push(CurveProblem {
                    finding: Finding::new(Class::CurveProblem, Location::new(rel(&file.origin), line_of(k)), message),
                    entry: Some((file.origin.clone(), curve.model().to_string(), curve.mode(), k)),
                });
            };
            let points: Vec<(usize, f64)> = curve.points().iter().map(|(k, v)| (*k, *v)).collect();
            for &(k, al) in &points {
                if al < 1.0 - RANGE_EPS || al > k as f64 + 1.0 + RANGE_EPS {
                    push(k, format!("{} = {al} is outside [1, {}]", curve.field(k), k + 1));
                }
            }
            for pair in points.windows(2) {
                let ((k0, a0), (k1, a1)) = (pair[0], pair[1]);
                if k1 == k0 + 1 && a0 - a1 > dip_noise {
                    push(
                        k1,
                        format!(
                            "{} = {a1} falls {:.2} below k = {k0} ({a0}); beyond run-to-run noise ({dip_noise:.3}), a longer draft cannot accept fewer tokens",
                            curve.field(k1),
                            a0 - a1
                        ),
                    );
                }
            }
            if let Ok(increments) = curve.increments(curve.max_k()) {
                for (i, pair) in increments.windows(2).enumerate() {
                    let rise = pair[1] - pair[0];
                    if rise > increment_noise {
                        let k = i + 2;
                        push(
                            k,
                            format!(
                                // Increments, not probabilities: after a dip the one before is negative.
                                "AL grows by {:.2} from k = {} to k = {k} ({}), after {:+.2} from k = {} to k = {}; a rise beyond noise ({increment_noise:.3}): a chain cannot accept a later draft more often",
                                pair[1],
                                k - 1,
                                curve.field(k),
                                pair[0],
                                k - 2,
                                k - 1
                            ),
                        );
                    }
                }
            }
        }
    }
    out
}

/// Keeps a problem an error only where a pin's expected value rests on its entry (`used`), else a warning.
pub fn gate(problems: Vec<CurveProblem>, used: &[CurveEntry]) -> Vec<Finding> {
    problems
        .into_iter()
        .map(|p| match &p.entry {
            Some(entry) if used.contains(entry) => p.finding,
            Some(_) => {
                let mut f = p.finding.with_severity(Severity::Warning);
                f.message.push_str(" (no pin's expected value rests on this entry)");
                f
            }
            None => p.finding,
        })
        .collect()
}
