//! A curve collected from eval-only runs (`alsim golden collect`): runs grouped by draft length,
//! one AL per k with its verification steps, standard error and interval, written as a golden file.
//!
//! This module owns turning evidence into a curve; it estimates nothing itself. Each k's runs go through
//! [`evidence::evaluate`], which owns the estimator (autocorrelation-aware batch means, the wider interval
//! where a series is short), the checks that refuse impossible counts or flag read-backs, and Cochran's
//! heterogeneity test before runs are pooled. The pin handed to it is the runs' own pooled mean, so only
//! the estimates are used, never its verdict. Runs that disagree beyond noise are not pooled there; their
//! AL is then ΣA/ΣD with the between-run standard error (the runs' totals as batches), and the k is
//! flagged, since a golden value over workloads that differ describes none of them.
//!
//! Steps needed for a target standard error s★ follow from the decisive standard error s at D steps:
//! s scales as 1/√D, so D★ = D·(s/s★)².

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::curve::check::{CurveReport, DEFAULT_Z, NoiseModel, check_file};
use crate::curve::{Curve, CurveFile, ThinkingMode, write};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::evidence::{
    self, CochranQ, Evidence, FileResult, InputFormat, Location, Note, NoteKind, PinUnderTest, Window,
};
use crate::stats::Estimate;

/// Default target standard error of each k's AL: a 95% interval of about ±0.02, the golden values'
/// own rounding.
pub const DEFAULT_TARGET_SE: f64 = 0.01;

/// Runs grouped by draft length.
pub type ByK = BTreeMap<usize, Vec<Evidence>>;

/// One evidence source and the draft length the user gave for it (`RUN@k=N` or `--k`), if any.
#[derive(Debug, Clone)]
pub struct Run {
    /// What the readers made of the file (several items when split by a label).
    pub evidence: Vec<Evidence>,
    /// The draft length given on the command line.
    pub k: Option<usize>,
}

/// The draft length the evidence itself records: stated by the engine, or the number of positions
/// counted (vLLM counts accepted drafts per position 0..k−1).
fn stated_k(evidence: &Evidence) -> Option<(usize, &Location)> {
    match &evidence.k {
        Some((k, at)) => Some((*k, at)),
        None => evidence.total.positions.as_ref().map(|p| (p.len(), &evidence.location)),
    }
}

/// Groups runs by draft length: the one the evidence records, else the one given.
///
/// # Errors
/// [`Error::Parse`] at the evidence's line when it records a k other than the one given;
/// [`Error::Invalid`] naming the file when neither says, or when there are no runs.
pub fn group_by_k(runs: Vec<Run>) -> Result<ByK> {
    let mut by_k = ByK::new();
    for run in runs {
        if let Some(k) = run.k {
            crate::units::check_draft_len(k, "k")?;
        }
        for mut ev in run.evidence {
            let k = match (stated_k(&ev), run.k) {
                (Some((own, at)), Some(given)) if own != given => {
                    return Err(Error::parse(
                        &at.file,
                        at.line,
                        format!("the evidence is for k = {own}, not the k = {given} given for it"),
                    ));
                }
                (Some((own, _)), _) => own,
                (None, Some(given)) => {
                    let message = format!("the evidence does not record k; k = {given} as given with the run");
                    ev.notes.push(Note::new(NoteKind::AssumedK, ev.location.clone(), message));
                    given
                }
                (None, None) => {
                    return Err(Error::invalid(
                        ev.location.to_string(),
                        "the evidence does not record its draft length k: give it with the run (RUN@k=N)",
                    )
                    .settled_by("k"));
                }
            };
            by_k.entry(k).or_default().push(ev);
        }
    }
    if by_k.is_empty() {
        return Err(Error::invalid("RUN", "no evidence given"));
    }
    Ok(by_k)
}

/// One run as it entered a k's estimate.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    /// File and line of its step counter.
    pub location: Location,
    /// Engine.
    pub engine: Engine,
    /// Input format.
    pub format: Option<InputFormat>,
    /// Verification steps D.
    pub steps: f64,
    /// 1 + A/D of this run alone.
    pub al: f64,
}

/// Everything estimated at one draft length from its runs.
#[derive(Debug, Clone, Serialize)]
pub struct KEstimate {
    /// Draft length.
    pub k: usize,
    /// The AL with its decisive standard error and interval.
    pub al: Estimate,
    /// Which standard error decided: independent, design-effect, or between-run for runs not pooled.
    pub basis: String,
    /// Verification steps D over all runs.
    pub steps: f64,
    /// The runs.
    pub runs: Vec<RunSummary>,
    /// Cochran's test, with several runs.
    pub heterogeneity: Option<CochranQ>,
    /// Why no interval here can be trusted (too few steps, a series too short for its autocorrelation).
    pub undecided: Option<String>,
    /// Why the counts cannot tell a pinned run's read-back from real acceptance, when they cannot.
    pub read_back: Option<String>,
    /// Reader notes and caveats.
    pub notes: Vec<Note>,
}

impl KEstimate {
    /// Whether the runs disagree beyond noise (Cochran's test refused to pool them).
    pub fn heterogeneous(&self) -> bool {
        self.heterogeneity.as_ref().is_some_and(|h| !h.pooled)
    }
}

/// Estimates AL at `k` from `runs` (all of that draft length) at `confidence`.
///
/// # Errors
/// As [`evidence::evaluate`]: a k the evidence contradicts, impossible counts, no steps.
pub fn estimate_k(k: usize, runs: &[Evidence], confidence: f64) -> Result<KEstimate> {
    let first = runs.first().ok_or_else(|| Error::invalid("RUN", format!("no evidence for k = {k}")))?;
    let total = runs.iter().skip(1).fold(first.total.clone(), |acc, e| acc.add(&e.total));
    let mean = if total.steps > 0.0 { 1.0 + total.accepted / total.steps } else { 1.0 };
    let pin = PinUnderTest::new(mean.clamp(1.0, k as f64 + 1.0), k, 0.0, confidence, "the runs' pooled mean")?;
    let report = evidence::evaluate(&pin, runs)?;
    let summaries = report
        .files
        .iter()
        .map(|f| RunSummary {
            location: f.location.clone(),
            engine: f.engine,
            format: f.format,
            steps: f.estimate.steps,
            al: 1.0 + f.estimate.accepted / f.estimate.steps,
        })
        .collect();
    let from = |result: &FileResult, notes: Vec<Note>| KEstimate {
        k,
        al: *result.estimate.decisive(),
        basis: result.basis.to_string(),
        steps: result.estimate.steps,
        runs: summaries,
        heterogeneity: report.heterogeneity.clone(),
        undecided: result.sample_too_small.clone(),
        read_back: result.read_back.clone(),
        notes,
    };
    let notes = |results: &[&FileResult]| -> Vec<Note> { results.iter().flat_map(|f| f.notes.clone()).collect() };
    let all: Vec<&FileResult> = report.files.iter().collect();
    let mut point = match (&report.pooled, report.files.as_slice()) {
        (Some(pooled), _) => {
            let mut pooled_notes = notes(&all);
            pooled_notes.extend(pooled.notes.iter().cloned());
            from(pooled, pooled_notes)
        }
        (None, [one]) => from(one, notes(&all)),
        (None, several) => {
            let totals: Vec<Window> = runs.iter().map(|e| e.total.clone()).collect();
            let source = format!("{} runs that disagree", several.len());
            let at = Location::in_file(format!("{} runs at k = {k}", several.len()), None);
            let between = evidence::estimate(&total, &totals, &[], k, confidence, &source, &at)?;
            let mut result = from(&several[0], notes(&all));
            result.al = *between.decisive();
            result.basis = "between-run".into();
            result.steps = total.steps;
            result.undecided = several.iter().find_map(|f| f.sample_too_small.clone());
            result.read_back = several.iter().find_map(|f| f.read_back.clone());
            result
        }
    };
    // An AL lies in [1, k + 1]: a wide interval (two runs' Student-t, one degree of freedom) stops there.
    let ci = &mut point.al.confidence_interval;
    (ci.lower_bound, ci.upper_bound) = (ci.lower_bound.max(1.0), ci.upper_bound.min(k as f64 + 1.0));
    Ok(point)
}

/// What the collected curve is for: the facts its header records.
#[derive(Debug, Clone, Serialize)]
pub struct Identity {
    /// Model key.
    pub model: String,
    /// Thinking mode the runs were served in.
    pub mode: ThinkingMode,
    /// Draft model.
    pub drafter: String,
    /// Speculative method (eagle3, mtp, dspark…).
    pub method: String,
    /// Draft sampling (greedy, probabilistic).
    pub draft_sampling: String,
    /// Hardware, when given.
    pub hardware: Option<String>,
    /// The measuring run (a CI URL), when given.
    pub source_run: Option<String>,
}

/// A k that needs more verification steps for the target standard error.
#[derive(Debug, Clone, Serialize)]
pub struct Shortfall {
    /// Draft length.
    pub k: usize,
    /// Its standard error now.
    pub standard_error: f64,
    /// Further verification steps for the target (`None` when no number of steps decides: the interval
    /// cannot be trusted at all yet, see the k's `undecided`).
    pub further_steps: Option<f64>,
}

/// The outcome of `alsim golden collect`.
#[derive(Debug, Clone, Serialize)]
pub struct Collection {
    /// The curve's identity.
    pub identity: Identity,
    /// The file written.
    pub output: String,
    /// Confidence level of every interval.
    pub confidence: f64,
    /// Target standard error per k.
    pub target_se: f64,
    /// Per k, by increasing k.
    pub points: Vec<KEstimate>,
    /// The k that need more steps for the target.
    pub shortfalls: Vec<Shortfall>,
    /// `curve check` of the written file, with dips and rises judged against the largest per-k
    /// standard error.
    pub check: CurveReport,
    /// The golden file's text.
    #[serde(skip)]
    pub text: String,
}

impl Collection {
    /// Whether the curve is written: not when the runs of some k disagree beyond their noise (their pooled
    /// value describes none of the workloads).
    pub fn writes_curve(&self) -> bool {
        !self.points.iter().any(KEstimate::heterogeneous)
    }

    /// Whether the check found errors in the curve or some k's runs disagree.
    pub fn has_problem(&self) -> bool {
        self.check.tally.errors > 0 || self.points.iter().any(KEstimate::heterogeneous)
    }

    /// Whether some k needs more steps (for the target, or for any interval at all).
    pub fn needs_more_steps(&self) -> bool {
        !self.shortfalls.is_empty()
    }
}

/// Collects a golden curve for `identity` from runs grouped by k, and renders the file that `output`
/// will name.
///
/// # Errors
/// [`Error::Invalid`] for a bad confidence or target, or identity text that cannot be written; evidence
/// errors as [`estimate_k`].
pub fn collect(identity: Identity, by_k: &ByK, confidence: f64, target_se: f64, output: &str) -> Result<Collection> {
    if !(target_se > 0.0 && target_se.is_finite()) {
        return Err(Error::parameter("target_se", format!("{target_se} must be a positive number")));
    }
    let points: Vec<KEstimate> =
        by_k.iter().map(|(&k, runs)| estimate_k(k, runs, confidence)).collect::<Result<_>>()?;
    let shortfalls = points
        .iter()
        .filter(|p| p.undecided.is_some() || p.al.standard_error > target_se)
        .map(|p| Shortfall {
            k: p.k,
            standard_error: p.al.standard_error,
            further_steps: (p.undecided.is_none())
                .then(|| (p.steps * (p.al.standard_error / target_se).powi(2) - p.steps).ceil()),
        })
        .collect();
    let curve =
        Curve::new(identity.model.clone(), identity.mode, points.iter().map(|p| (p.k, p.al.point_estimate)).collect())?;
    let text = write::render(&header(&identity, &points, confidence)?, &[&curve], |_, k| {
        points.iter().find(|p| p.k == k).map(|p| point_comment(p, confidence))
    })?;
    let stem = Path::new(output).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let file = CurveFile::parse(&text, output, &stem)?;
    let run_se = points.iter().map(|p| p.al.standard_error).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let check = CurveReport::new(1, check_file(&file, &NoiseModel { run_se, z: DEFAULT_Z }));
    Ok(Collection { identity, output: output.to_string(), confidence, target_se, points, shortfalls, check, text })
}

fn header(identity: &Identity, points: &[KEstimate], confidence: f64) -> Result<Vec<String>> {
    let runs: usize = points.iter().map(|p| p.runs.len()).sum();
    let mut engines: Vec<&str> = points.iter().flat_map(|p| p.runs.iter().map(|r| r.engine.name())).collect();
    engines.sort_unstable();
    engines.dedup();
    let mut lines = vec![
        format!(
            "Golden acceptance lengths for {} with the {} drafter ({}, {} draft sampling, {}), collected by alsim golden collect from {runs} eval-only runs.",
            identity.model, identity.drafter, identity.method, identity.draft_sampling, identity.mode
        ),
        "Mean tokens per verify step (bonus token counted) for each draft length k, measured with real verification;"
            .into(),
        format!(
            "beside each value its verification steps, standard error (autocorrelation-aware) and {:.0}% interval.",
            confidence * 100.0
        ),
    ];
    if let Some(run) = &identity.source_run {
        lines.push(format!("source_run: {run}"));
    }
    if let Some(hardware) = &identity.hardware {
        lines.push(format!("hardware: {hardware}"));
    }
    lines.push(format!("engine: {}", engines.join(", ")));
    lines.push(format!("measured_model: {}", identity.model));
    lines.push(format!("drafter: {}", identity.drafter));
    lines.push(format!("method: {}", identity.method));
    lines.push(format!("draft_sampling: {}", identity.draft_sampling));
    lines.push(String::new());
    lines.push("key = num_speculative_tokens; value = golden AL".into());
    for (name, value) in [("drafter", &identity.drafter), ("method", &identity.method)] {
        if value.trim().is_empty() {
            return Err(Error::parameter(name, "must not be empty"));
        }
    }
    Ok(lines)
}

fn point_comment(p: &KEstimate, confidence: f64) -> String {
    let ci = &p.al.confidence_interval;
    format!(
        "steps {:.0}, runs {}, SE {:.4} ({}), {:.0}% CI [{:.3}, {:.3}]",
        p.steps,
        p.runs.len(),
        p.al.standard_error,
        p.basis,
        confidence * 100.0,
        ci.lower_bound,
        ci.upper_bound
    )
}

/// Writes the collected file to `path`, replacing a file there only when `force` is set, and never a file
/// this process read ([`crate::output`]).
///
/// # Errors
/// [`Error::Parameter`] naming `output` when the path cannot be written or is a file read; settled by
/// `force` when the file exists.
pub fn write_file(collection: &Collection, path: &Path, force: bool) -> Result<()> {
    crate::output::write_one("output", path, force, collection.text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(k: Option<usize>, positions: Option<usize>, given: Option<usize>) -> Run {
        let location = Location::in_file("r.prom", Some(7));
        let mut total = Window::new(1000.0, 1500.0);
        total.positions = positions.map(|n| (0..n).map(|i| 700.0 - 100.0 * i as f64).collect());
        let evidence = Evidence {
            k: k.map(|k| (k, location.clone())),
            location,
            engine: Engine::Vllm,
            format: InputFormat::Prometheus,
            total,
            batches: Vec::new(),
            notes: Vec::new(),
        };
        Run { evidence: vec![evidence], k: given }
    }

    #[test]
    fn runs_take_the_k_their_evidence_records() {
        let by_k =
            group_by_k(vec![run(Some(3), None, None), run(None, Some(4), None), run(None, None, Some(3))]).unwrap();
        assert_eq!(by_k.iter().map(|(k, r)| (*k, r.len())).collect::<Vec<_>>(), [(3, 2), (4, 1)]);
        assert!(by_k[&3][1].notes[0].message.contains("k = 3 as given"), "{:?}", by_k[&3][1].notes);
        let err = group_by_k(vec![run(Some(4), None, Some(3))]).unwrap_err().to_string();
        assert!(err.starts_with("r.prom:7") && err.contains("is for k = 4, not the k = 3"), "{err}");
        let err = group_by_k(vec![run(None, None, None)]).unwrap_err().to_string();
        assert!(err.contains("RUN@k=N"), "{err}");
        assert!(group_by_k(Vec::new()).is_err());
        assert!(group_by_k(vec![run(None, None, Some(0))]).is_err());
    }
}
