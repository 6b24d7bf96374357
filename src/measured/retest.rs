//! A committed golden curve retested against new runs (`alsim golden check`): is AL(k) still what new
//! eval-only runs measure, at every k they cover?
//!
//! Each k is `alsim eval`'s question with the curve's value as the pin: [`evidence::evaluate`] estimates
//! AL from that k's runs (pooling them only when Cochran's test finds no heterogeneity) and gives the
//! verdict — consistent when the whole interval lies within value ± tolerance, curve too high or too low
//! when it lies entirely outside, undecided otherwise, with the further steps needed.
//!
//! Multiplicity across k: Bonferroni. With m draft lengths compared at family confidence 1 − α, each k's
//! interval is built at 1 − α/m, so the chance that any k calls an honest curve off is at most α
//! (Holm's step-down needs one p-value per k, which an interval-against-band verdict does not have).
//! With a tolerance δ > 0 the actual false-alarm rate is far lower still: an honest value must then be
//! missed by more than δ beyond the interval.

use serde::Serialize;

use super::collect::ByK;
use crate::curve::Curve;
use crate::error::{Error, Result};
use crate::evidence::{self, CochranQ, FileResult, PinUnderTest, Verdict};
use crate::stats::{ConfidenceInterval, Estimate};

/// The multiplicity correction applied across k.
pub const CORRECTION: &str = "Bonferroni";

/// One draft length compared.
#[derive(Debug, Clone, Serialize)]
pub struct RetestPoint {
    /// Draft length.
    pub k: usize,
    /// The curve's AL(k).
    pub golden: f64,
    /// Runs at this k.
    pub runs: usize,
    /// Verification steps over those runs.
    pub steps: f64,
    /// The measured AL (decisive interval at the per-k level), when the runs were pooled or are one.
    pub measured: Option<Estimate>,
    /// Measured − golden with its interval, when there is one measured AL.
    pub difference: Option<Estimate>,
    /// The verdict at this k (the `pin` of [`Verdict`] is the curve's value).
    pub verdict: Verdict,
    /// Further verification steps to decide, when undecided and a number of steps would.
    pub further_steps: Option<f64>,
    /// Why no verdict is possible yet, when the sample is too small.
    pub undecided: Option<String>,
    /// Cochran's test, with several runs.
    pub heterogeneity: Option<CochranQ>,
}

/// The outcome of `alsim golden check`.
#[derive(Debug, Clone, Serialize)]
pub struct Retest {
    /// The curve's file and key.
    pub curve: String,
    /// The curve's file, as named.
    pub file: String,
    /// Tolerance δ on AL.
    pub tolerance: f64,
    /// Family confidence 1 − α over all k compared.
    pub confidence: f64,
    /// The multiplicity correction.
    pub correction: &'static str,
    /// Confidence of each k's interval, 1 − α/m.
    pub per_k_confidence: f64,
    /// Per k, by increasing k.
    pub points: Vec<RetestPoint>,
    /// The curve's k that no run covers.
    pub not_measured: Vec<usize>,
    /// Off (some k differs), undecided (none differs, some cannot tell) or consistent (every k is).
    pub overall: Verdict,
}

/// Compares `curve` (named `origin` in reports) with runs grouped by k at family `confidence`.
///
/// # Errors
/// [`Error::Invalid`] when a run's k is not on the curve, or for a bad tolerance or confidence; evidence
/// errors as [`evidence::evaluate`].
pub fn retest(curve: &Curve, origin: &str, by_k: &ByK, tolerance: f64, confidence: f64) -> Result<Retest> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(Error::parameter("confidence", format!("{confidence} must be strictly between 0 and 1")));
    }
    if let Some((k, runs)) = by_k.iter().find(|(k, _)| !curve.points().contains_key(k)) {
        return Err(Error::invalid(
            runs[0].location.to_string(),
            format!(
                "this run is for k = {k}, which {} does not have (it has k = {})",
                curve.name(),
                curve.points().keys().map(usize::to_string).collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    let per_k_confidence = 1.0 - (1.0 - confidence) / by_k.len().max(1) as f64;
    let mut points = Vec::with_capacity(by_k.len());
    for (&k, runs) in by_k {
        let golden = curve.al(k)?;
        let pin = PinUnderTest::new(golden, k, tolerance, per_k_confidence, format!("{origin} {}", curve.field(k)))?;
        let report = evidence::evaluate(&pin, runs)?;
        let decided: Option<&FileResult> = report.pooled.as_ref().or(match report.files.as_slice() {
            [one] => Some(one),
            _ => None,
        });
        let measured = decided.map(|f| *f.estimate.decisive());
        let difference = measured.map(|m| Estimate {
            point_estimate: m.point_estimate - golden,
            standard_error: m.standard_error,
            confidence_interval: ConfidenceInterval {
                lower_bound: m.confidence_interval.lower_bound - golden,
                upper_bound: m.confidence_interval.upper_bound - golden,
                confidence_level: m.confidence_interval.confidence_level,
            },
        });
        points.push(RetestPoint {
            k,
            golden,
            runs: runs.len(),
            steps: report.files.iter().map(|f| f.estimate.steps).sum(),
            measured,
            difference,
            verdict: report.overall,
            // The evaluator's count assumes a normal interval; where the batch-means Student-t one is
            // wider it can say 0 for a k still undecided, which is no count at all.
            further_steps: decided.and_then(|f| f.further_steps).filter(|&steps| steps > 0.0),
            undecided: decided.map_or_else(
                || report.files.iter().find_map(|f| f.sample_too_small.clone()),
                |f| f.sample_too_small.clone(),
            ),
            heterogeneity: report.heterogeneity,
        });
    }
    let overall = if points.iter().any(|p| p.verdict.differs()) {
        let high = points.iter().any(|p| matches!(p.verdict, Verdict::PinTooHigh | Verdict::Mixed));
        let low = points.iter().any(|p| matches!(p.verdict, Verdict::PinTooLow | Verdict::Mixed));
        match (high, low) {
            (true, false) => Verdict::PinTooHigh,
            (false, true) => Verdict::PinTooLow,
            _ => Verdict::Mixed,
        }
    } else if points.iter().all(|p| p.verdict == Verdict::Consistent) {
        Verdict::Consistent
    } else {
        Verdict::Inconclusive
    };
    Ok(Retest {
        curve: format!("{origin} {}", curve.name()),
        file: origin.to_string(),
        tolerance,
        confidence,
        correction: CORRECTION,
        per_k_confidence,
        not_measured: curve.points().keys().copied().filter(|k| !by_k.contains_key(k)).collect(),
        points,
        overall,
    })
}
