//! The verdict of docs/model.md §5: is a pinned AL consistent with real acceptance?
//!
//! With pin P, tolerance δ and the decisive interval [L, U] (the wider of the independent and design-effect
//! intervals, see [`AlEstimate::decisive`]):
//! - consistent — L ≥ P − δ and U ≤ P + δ;
//! - pin too high — U < P − δ; pin too low — L > P + δ;
//! - inconclusive — otherwise, with the further steps needed: at the same point estimate x and per-step
//!   spread s = SE·√D, an interval of half-width z·s/√D′ decides once it fits in the margin
//!   |δ − |x − P||, so D′ = (z·s/margin)².
//!
//! The default δ = 0.05 AL ([`DEFAULT_TOLERANCE`]) is about the noise of the golden value itself: golden
//! ALs are rounded to 0.01 and come from runs of 30–500 prompts whose AL standard error is a few
//! hundredths (docs/model.md §2, §5), so a stricter band would call honest pins wrong; and 0.05 AL at AL ≈ 2.8
//! moves throughput by ≈ 1.8%, below the run-to-run noise of serving benchmarks.
//!
//! Throughput error (first order, §5): at a fixed step time throughput scales with AL, so the pin
//! overstates decode throughput by P/AL − 1. Several files are pooled only after Cochran's Q test finds
//! no heterogeneity at level 1 − confidence: a real difference between workloads is a finding.

use serde::Serialize;
use statrs::distribution::{ChiSquared, ContinuousCDF};

use super::estimate::{AlEstimate, batch, estimate};
use super::validate;
use super::{Evidence, InputFormat, Location, Note, NoteKind, Window};
use crate::accept::Acceptance;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::stats::{Estimate, z_two_sided};
use crate::units::check_al;

/// Default tolerance on AL (see the module docs for the reasoning).
pub const DEFAULT_TOLERANCE: f64 = 0.05;

/// The pin under test.
#[derive(Debug, Clone, Serialize)]
pub struct PinUnderTest {
    /// Pinned acceptance length P.
    pub al: f64,
    /// Draft length k the pin is for.
    pub k: usize,
    /// Tolerance δ on AL.
    pub tolerance: f64,
    /// Confidence level of every interval.
    pub confidence: f64,
    /// Where the pin came from (`--pin`, or the golden file and key).
    pub source: String,
    /// The golden curve's chain p_1..p_k, for the per-position comparison.
    pub golden: Option<Acceptance>,
}

impl PinUnderTest {
    /// A validated pin.
    ///
    /// # Errors
    /// [`Error::Parameter`] naming `pin` when the AL is outside [1, k+1] or k out of range, `tolerance` when
    /// it is outside [0, k), `confidence` when it is not in (0, 1).
    pub fn new(al: f64, k: usize, tolerance: f64, confidence: f64, source: impl Into<String>) -> Result<PinUnderTest> {
        check_al(al, k, "pin").map_err(|e| e.for_parameter("pin"))?;
        // A tolerance of k would call every AL in [1, k+1] consistent with every pin.
        if !(0.0..k as f64).contains(&tolerance) {
            return Err(Error::parameter(
                "tolerance",
                format!("{tolerance} is out of range: an AL difference at k = {k} must lie in [0, {k})"),
            ));
        }
        z_two_sided(confidence)
            .map_err(|_| Error::parameter("confidence", format!("{confidence} must be strictly between 0 and 1")))?;
        Ok(PinUnderTest { al, k, tolerance, confidence, source: source.into(), golden: None })
    }

    /// Adds the golden chain the per-position comparison uses.
    ///
    /// # Errors
    /// [`Error::Invalid`] when its k differs from the pin's.
    pub fn with_golden(mut self, golden: Acceptance) -> Result<PinUnderTest> {
        if golden.k() != self.k {
            return Err(Error::invalid("golden chain", format!("has k = {}, the pin k = {}", golden.k(), self.k)));
        }
        self.golden = Some(golden);
        Ok(self)
    }
}

/// The answer for one evidence source (or the pooled evidence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The whole interval lies within the tolerance band around the pin.
    Consistent,
    /// Real acceptance is lower than the pin: the pin overstates throughput.
    PinTooHigh,
    /// Real acceptance is higher than the pin: the pin understates throughput.
    PinTooLow,
    /// Files disagree in direction: the pin is too high for some workloads and too low for others.
    Mixed,
    /// The interval straddles a band edge: more verification steps are needed.
    Inconclusive,
}

impl Verdict {
    /// Every verdict, in declaration order: what the docs and the CI formats must cover.
    pub const ALL: [Verdict; 5] =
        [Verdict::Consistent, Verdict::PinTooHigh, Verdict::PinTooLow, Verdict::Mixed, Verdict::Inconclusive];

    /// The words shown to users.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Consistent => "consistent",
            Verdict::PinTooHigh => "pin too high",
            Verdict::PinTooLow => "pin too low",
            Verdict::Mixed => "pin too high for some evidence, too low for other",
            Verdict::Inconclusive => "inconclusive",
        }
    }

    /// Whether the evidence shows the pin is wrong.
    pub fn differs(self) -> bool {
        matches!(self, Verdict::PinTooHigh | Verdict::PinTooLow | Verdict::Mixed)
    }
}

/// P/AL − 1 with the interval implied by AL's decisive interval.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ThroughputError {
    /// Relative error of decode throughput implied by the pin (positive: overstated).
    pub point_estimate: f64,
    /// From AL's upper bound.
    pub lower_bound: f64,
    /// From AL's lower bound.
    pub upper_bound: f64,
}

/// One position compared with the golden chain.
#[derive(Debug, Clone, Serialize)]
pub struct Departure {
    /// Draft position i (1-based).
    pub position: usize,
    /// Golden p_i.
    pub golden: f64,
    /// Observed p̂_i (decisive interval).
    pub observed: Estimate,
    /// p̂_i − golden p_i.
    pub difference: f64,
    /// Whether the interval excludes the golden value.
    pub departs: bool,
}

/// Everything concluded from one evidence source (or the pool).
#[derive(Debug, Clone, Serialize)]
pub struct FileResult {
    /// File and line of its step counter (`pooled (n files)` for the pool).
    pub location: Location,
    /// Engine.
    pub engine: Engine,
    /// Input format (`None` for a pool of several formats).
    pub format: Option<InputFormat>,
    /// AL and per-position estimates.
    pub estimate: AlEstimate,
    /// The verdict against the pin.
    pub verdict: Verdict,
    /// Which SE decided ("independent" or "design-effect").
    pub basis: &'static str,
    /// Further verification steps needed to decide, when inconclusive (`None` when the estimate sits on a
    /// band edge and no number of steps decides).
    pub further_steps: Option<f64>,
    /// Why the sample is too small for any verdict (too few steps, zero variance at the boundary, or a
    /// time series too short for its own autocorrelation), when it is: the verdict is then inconclusive
    /// whatever the interval says.
    pub sample_too_small: Option<String>,
    /// Why the evidence cannot tell a pinned run's read-back from real acceptance, when it cannot
    /// (`validate::Findings::read_back`): the verdict then holds only if the run verified for real.
    pub read_back: Option<String>,
    /// The pin's implied decode-throughput error.
    pub throughput_error: ThroughputError,
    /// Per-position comparison with the golden chain (empty without one or without per-position counts).
    pub departures: Vec<Departure>,
    /// The first position whose interval excludes the golden value.
    pub first_departure: Option<usize>,
    /// Reader notes and caveats.
    pub notes: Vec<Note>,
}

/// Cochran's Q test of whether several evidence files measure one AL.
#[derive(Debug, Clone, Serialize)]
pub struct CochranQ {
    /// Q = Σ w_f (x_f − x̄)², w_f = 1/SE_f² (decisive SEs).
    pub q: f64,
    /// Degrees of freedom (files − 1).
    pub degrees_of_freedom: usize,
    /// P(χ² ≥ Q).
    pub p_value: f64,
    /// I² = max(0, (Q − df)/Q): the share of spread beyond sampling noise.
    pub i_squared: f64,
    /// Whether the files were pooled (p-value ≥ 1 − confidence).
    pub pooled: bool,
}

/// The whole evaluation.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    /// The pin under test.
    pub pin: PinUnderTest,
    /// One result per evidence source.
    pub files: Vec<FileResult>,
    /// The heterogeneity check, with several sources.
    pub heterogeneity: Option<CochranQ>,
    /// The pooled result, where pooling is justified.
    pub pooled: Option<FileResult>,
    /// The overall verdict (the pool's, the single file's, or the files' combined).
    pub overall: Verdict,
    /// The artifacts the evidence was found in: what was read and skipped, and the run's facts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<super::artifact::ArtifactReading>,
}

/// Evaluates `pin` against every evidence source, checks heterogeneity and pools where justified.
///
/// # Errors
/// [`Error::Parse`] naming the file and line where the evidence states a k other than the pin's, or where
/// a source counts no steps; [`Error::Parameter`] `evidence` when there is none.
pub fn evaluate(pin: &PinUnderTest, evidence: &[Evidence]) -> Result<EvalReport> {
    if evidence.is_empty() {
        return Err(Error::parameter("evidence", "no evidence files given"));
    }
    let mut files = Vec::new();
    for ev in evidence {
        if let Some((k, at)) = &ev.k
            && *k != pin.k
        {
            return Err(Error::parse(
                &at.file,
                at.line,
                format!(
                    "the evidence is for k = {k} draft tokens but the pin is for k = {}: compare a pin with evidence of its own draft length",
                    pin.k
                ),
            ));
        }
        let mut notes = ev.notes.clone();
        // One note per assumption: whoever gave the evidence its k (`golden collect`'s `RUN@k=N`) noted it.
        if ev.k.is_none() && !notes.iter().any(|n| n.class == NoteKind::AssumedK) {
            let message = format!("the evidence does not state k; taken as the pin's k = {}", pin.k);
            notes.push(Note::new(NoteKind::AssumedK, ev.location.clone(), message));
        }
        let source = match ev.format {
            InputFormat::Log => "log intervals",
            InputFormat::TrtllmJson => "iterations",
            _ => "scrape deltas",
        };
        let findings = validate::check(ev, pin.k)?;
        let batches = batch(&ev.batches);
        let est = estimate(&ev.total, &batches, &[&ev.batches], pin.k, pin.confidence, source, &ev.location)?;
        notes.extend(est.series_warning.clone().map(|w| Note::new(NoteKind::ShortSeries, ev.location.clone(), w)));
        let memory_warning = est.memory_warning.clone();
        let mut result = judge(pin, est, ev.location.clone(), ev.engine, Some(ev.format), notes)?;
        result.read_back = findings.read_back;
        if let Some(reason) = findings.too_small.or(memory_warning) {
            undecided(&mut result, reason);
        }
        files.push(result);
    }
    if files.len() == 1 {
        let overall = files[0].verdict;
        return Ok(EvalReport {
            pin: pin.clone(),
            files,
            heterogeneity: None,
            pooled: None,
            overall,
            artifacts: Vec::new(),
        });
    }
    let heterogeneity = cochran(&files, pin.confidence)?;
    let pooled = if heterogeneity.pooled { Some(pool(pin, evidence)?) } else { None };
    let overall = match &pooled {
        Some(p) => p.verdict,
        None => combine(files.iter().map(|f| f.verdict)),
    };
    Ok(EvalReport {
        pin: pin.clone(),
        files,
        heterogeneity: Some(heterogeneity),
        pooled,
        overall,
        artifacts: Vec::new(),
    })
}

fn combine(verdicts: impl Iterator<Item = Verdict> + Clone) -> Verdict {
    let has = |v: Verdict| verdicts.clone().any(|x| x == v);
    match (has(Verdict::PinTooHigh), has(Verdict::PinTooLow)) {
        (true, true) => Verdict::Mixed,
        (true, false) => Verdict::PinTooHigh,
        (false, true) => Verdict::PinTooLow,
        _ if verdicts.clone().all(|v| v == Verdict::Consistent) => Verdict::Consistent,
        _ => Verdict::Inconclusive,
    }
}

fn pool(pin: &PinUnderTest, evidence: &[Evidence]) -> Result<FileResult> {
    let total = evidence.iter().skip(1).fold(evidence[0].total.clone(), |acc, e| acc.add(&e.total));
    let every_series = evidence.iter().all(|e| e.batches.len() >= 2);
    // Separate runs are independent batches, not a time series (windows = 0).
    let (batches, series, source): (Vec<Window>, Vec<&[Window]>, String) = if every_series {
        (
            evidence.iter().flat_map(|e| batch(&e.batches)).collect(),
            evidence.iter().map(|e| e.batches.as_slice()).collect(),
            format!("windows of {} files", evidence.len()),
        )
    } else {
        (evidence.iter().map(|e| e.total.clone()).collect(), Vec::new(), format!("{} runs", evidence.len()))
    };
    let location = Location { file: format!("pooled ({} files)", evidence.len()), line: None };
    // Read-backs too short to tell one by one may tell together.
    let together = Evidence {
        location: location.clone(),
        total: total.clone(),
        batches: Vec::new(),
        notes: Vec::new(),
        k: None,
        ..evidence[0].clone()
    };
    let read_back = validate::check(&together, pin.k)?.read_back;
    let est = estimate(&total, &batches, &series, pin.k, pin.confidence, &source, &location)?;
    let formats: Vec<InputFormat> = evidence.iter().map(|e| e.format).collect();
    let format = formats.iter().all(|f| *f == formats[0]).then_some(formats[0]);
    let engine = evidence[0].engine;
    let mut notes = Vec::new();
    if evidence.iter().any(|e| e.engine != engine) {
        notes.push(Note::new(NoteKind::Pooling, location.clone(), "pooled across engines"));
    }
    notes.extend(est.series_warning.clone().map(|w| Note::new(NoteKind::ShortSeries, location.clone(), w)));
    let steps = total.steps;
    let memory_warning = est.memory_warning.clone();
    let mut result = judge(pin, est, location, engine, format, notes)?;
    result.read_back = read_back;
    if steps < validate::MIN_STEPS {
        undecided(&mut result, format!("only {steps} verification steps pooled"));
    } else if let Some(reason) = memory_warning {
        undecided(&mut result, reason);
    }
    Ok(result)
}

/// Makes `result` inconclusive because the sample is too small for its interval to mean anything.
fn undecided(result: &mut FileResult, reason: String) {
    result.verdict = Verdict::Inconclusive;
    let short = validate::MIN_STEPS - result.estimate.steps;
    result.further_steps = (short > 0.0).then(|| short.ceil());
    result.sample_too_small = Some(reason);
}

fn cochran(files: &[FileResult], confidence: f64) -> Result<CochranQ> {
    let points: Vec<(f64, f64)> = files
        .iter()
        .map(|f| {
            let e = f.estimate.decisive();
            // A zero SE (every step identical) still deserves a finite weight.
            (e.point_estimate, 1.0 / e.standard_error.max(1e-9).powi(2))
        })
        .collect();
    let weight: f64 = points.iter().map(|p| p.1).sum();
    let mean = points.iter().map(|(x, w)| x * w).sum::<f64>() / weight;
    let q: f64 = points.iter().map(|(x, w)| w * (x - mean).powi(2)).sum();
    let df = files.len() - 1;
    let chi = ChiSquared::new(df as f64).map_err(|e| Error::invalid("heterogeneity", e.to_string()))?;
    let p_value = 1.0 - chi.cdf(q);
    let i_squared = if q > 0.0 { ((q - df as f64) / q).max(0.0) } else { 0.0 };
    Ok(CochranQ { q, degrees_of_freedom: df, p_value, i_squared, pooled: p_value >= 1.0 - confidence })
}

fn judge(
    pin: &PinUnderTest,
    est: AlEstimate,
    location: Location,
    engine: Engine,
    format: Option<InputFormat>,
    notes: Vec<Note>,
) -> Result<FileResult> {
    let e = *est.decisive();
    let (lo, hi) = (e.confidence_interval.lower_bound, e.confidence_interval.upper_bound);
    let (band_lo, band_hi) = (pin.al - pin.tolerance, pin.al + pin.tolerance);
    let verdict = if hi < band_lo {
        Verdict::PinTooHigh
    } else if lo > band_hi {
        Verdict::PinTooLow
    } else if lo >= band_lo && hi <= band_hi {
        Verdict::Consistent
    } else {
        Verdict::Inconclusive
    };
    let further_steps = if verdict == Verdict::Inconclusive {
        let gap = (e.point_estimate - pin.al).abs();
        let margin = (pin.tolerance - gap).abs();
        let per_step = e.standard_error * est.steps.sqrt();
        // The interval's own multiplier: a design-effect interval over a few windows uses Student's t, wider
        // than z, and a normal-theory count would say "≈0 more steps" for a run that is still undecided.
        let z = z_two_sided(pin.confidence)?;
        let multiplier = if e.standard_error > 0.0 { ((hi - lo) / 2.0 / e.standard_error).max(z) } else { z };
        (margin > 1e-9 && per_step > 0.0)
            .then(|| ((multiplier * per_step / margin).powi(2) - est.steps).max(1.0).ceil())
    } else {
        None
    };
    let throughput_error = ThroughputError {
        point_estimate: pin.al / e.point_estimate - 1.0,
        lower_bound: pin.al / hi.max(1.0) - 1.0,
        upper_bound: pin.al / lo.max(1.0) - 1.0,
    };
    let departures: Vec<Departure> = match &pin.golden {
        Some(golden) => est
            .positions
            .iter()
            .zip(golden.unconditional())
            .map(|(p, &g)| {
                let observed = *p.decisive();
                Departure {
                    position: p.position,
                    golden: g,
                    observed,
                    difference: observed.point_estimate - g,
                    departs: !observed.covers(g),
                }
            })
            .collect(),
        None => Vec::new(),
    };
    let first_departure = departures.iter().find(|d| d.departs).map(|d| d.position);
    Ok(FileResult {
        location,
        engine,
        format,
        basis: est.decisive_basis(),
        estimate: est,
        verdict,
        further_steps,
        sample_too_small: None,
        read_back: None,
        throughput_error,
        departures,
        first_departure,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(steps: f64, al: f64) -> Evidence {
        Evidence {
            location: Location::in_file("e", Some(3)),
            engine: Engine::Vllm,
            format: InputFormat::Prometheus,
            k: None,
            total: Window::new(steps, (al - 1.0) * steps),
            batches: Vec::new(),
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_four_verdicts() {
        let pin = PinUnderTest::new(2.83, 3, 0.05, 0.95, "test").unwrap();
        let v = |steps, al| evaluate(&pin, &[evidence(steps, al)]).unwrap();
        assert_eq!(v(1e6, 2.70).overall, Verdict::PinTooHigh);
        assert_eq!(v(1e6, 3.52).overall, Verdict::PinTooLow);
        assert_eq!(v(1e6, 2.83).overall, Verdict::Consistent);
        let r = v(500.0, 2.80);
        assert_eq!(r.overall, Verdict::Inconclusive);
        let further = r.files[0].further_steps.unwrap();
        assert!(further > 0.0);
        // With that many more steps at the same estimate it decides.
        assert_eq!(v(500.0 + further, 2.80).overall, Verdict::Consistent);
        assert!((v(1e6, 2.60).files[0].throughput_error.point_estimate - 0.0885).abs() < 1e-3);
    }

    #[test]
    fn k_mismatch_names_the_line() {
        let pin = PinUnderTest::new(2.83, 3, 0.05, 0.95, "test").unwrap();
        let mut e = evidence(1e4, 2.8);
        e.k = Some((4, Location::in_file("m.prom", Some(12))));
        let err = evaluate(&pin, &[e]).unwrap_err().to_string();
        assert!(err.starts_with("m.prom:12:") && err.contains("k = 4"), "{err}");
    }

    #[test]
    fn different_workloads_are_not_pooled() {
        let pin = PinUnderTest::new(2.83, 3, 0.05, 0.95, "test").unwrap();
        let r = evaluate(&pin, &[evidence(2e4, 2.70), evidence(2e4, 3.52)]).unwrap();
        assert!(!r.heterogeneity.as_ref().unwrap().pooled);
        assert!(r.pooled.is_none());
        assert_eq!(r.overall, Verdict::Mixed);
        let r = evaluate(&pin, &[evidence(2e4, 2.70), evidence(2e4, 2.705)]).unwrap();
        assert!(r.heterogeneity.as_ref().unwrap().pooled);
        assert_eq!(r.pooled.unwrap().estimate.steps, 4e4);
    }
}
