//! Validation of golden curves: every problem with its size, judged against the curve's noise.
//!
//! Each AL(k) on a golden curve is a separate run (docs/model.md §2, §5): a run of ~80 prompts has an AL
//! standard error of a few hundredths, so a dip of 0.02 is noise and a dip of 0.16 is not. With a per-run
//! standard error s (default [`DEFAULT_RUN_SE`]) an increment p_i = AL(i) − AL(i−1) has standard error s√2
//! (s for i = 1, since AL(0) = 1 exactly), and the change p_{i+1} − p_i = AL(i+1) − 2AL(i) + AL(i−1) has s√6
//! (s√5 for i = 1). A violation larger than `z` standard errors is an error; a smaller one is a warning
//! that says so.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Curve, CurveFile, ThinkingMode};

/// Default standard error of one golden run's AL: a few hundredths for ~80 prompts of 4,096 tokens.
pub const DEFAULT_RUN_SE: f64 = 0.03;
/// Default number of standard errors beyond which a violation is not noise.
pub const DEFAULT_Z: f64 = 2.0;
/// InferenceX measures k = 1..8; a curve missing one of these cannot check a pin at that k.
pub const EXPECTED_MAX_K: usize = 8;

pub use crate::diagnostic::Severity;
use crate::diagnostic::{Finding, FindingClass, Location, Status, Tally};

/// What kind of problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProblemKind {
    /// AL(k) outside [1, k+1].
    OutOfRange,
    /// An increment below 0: AL(k) < AL(k−1).
    Dip,
    /// An increment above 1: AL grew by more than one token per added draft.
    IncrementAboveOne,
    /// An increment larger than the one before it: a chain's acceptance never rises with position.
    Rise,
    /// A draft length missing from the curve.
    MissingK,
    /// Two files with the same key and the same header facts, and no recorded drafter to tell them apart.
    DrafterAmbiguity,
}

impl ProblemKind {
    /// Every kind, in declaration order: what the docs and the CI formats must cover.
    pub const ALL: [ProblemKind; 6] = [
        ProblemKind::OutOfRange,
        ProblemKind::Dip,
        ProblemKind::IncrementAboveOne,
        ProblemKind::Rise,
        ProblemKind::MissingK,
        ProblemKind::DrafterAmbiguity,
    ];
}

impl FindingClass for ProblemKind {
    fn name(self) -> &'static str {
        match self {
            ProblemKind::OutOfRange => "out-of-range",
            ProblemKind::Dip => "dip",
            ProblemKind::IncrementAboveOne => "increment-above-one",
            ProblemKind::Rise => "rise",
            ProblemKind::MissingK => "missing-k",
            ProblemKind::DrafterAmbiguity => "drafter-ambiguity",
        }
    }

    /// A violation of the curve's shape is an error until judged against noise; a gap or an ambiguity
    /// leaves pins unchecked or a lookup to the file name, so a warning.
    fn severity(self) -> Severity {
        match self {
            ProblemKind::OutOfRange | ProblemKind::Dip | ProblemKind::IncrementAboveOne | ProblemKind::Rise => {
                Severity::Error
            }
            ProblemKind::MissingK | ProblemKind::DrafterAmbiguity => Severity::Warning,
        }
    }
}

/// One problem of a golden curve: a finding whose class is the problem's kind, with the entry it is about
/// and the violation's size against noise.
#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    /// Severity, kind, place (the value's line; for a missing k, its mode's key; for a drafter ambiguity,
    /// the model key) and message.
    #[serde(flatten)]
    pub finding: Finding<ProblemKind>,
    /// The key path (`minimax-m3.thinking_on.8`); for a drafter ambiguity, the shared model keys.
    pub field: String,
    /// The curve entry the problem is about; `None` for a drafter ambiguity.
    #[serde(skip)]
    pub point: Option<Point>,
    /// The size of the violation in AL units, when it has one.
    pub size: Option<f64>,
    /// The standard error noise would give it, when judged against noise.
    pub noise_se: Option<f64>,
}

impl Problem {
    /// The message as both checks show it: with the entry's key in front where the problem is about one
    /// entry (a drafter ambiguity's message names its keys itself).
    pub fn text(&self) -> String {
        if self.point.is_some() {
            format!("{}: {}", self.field, self.finding.message)
        } else {
            self.finding.message.clone()
        }
    }
}

/// One entry of a curve: model key, thinking mode and draft length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    /// Model key.
    pub model: String,
    /// Thinking mode.
    pub mode: ThinkingMode,
    /// Draft length.
    pub k: usize,
}

/// The noise a golden curve is judged against: one run's AL standard error, and how many of them a violation
/// must exceed to be an error (one model for `curve check` and the pin check).
#[derive(Debug, Clone, Copy)]
pub struct NoiseModel {
    /// Standard error of one run's AL.
    pub run_se: f64,
    /// Standard errors beyond which a violation is an error.
    pub z: f64,
}

impl Default for NoiseModel {
    fn default() -> Self {
        NoiseModel { run_se: DEFAULT_RUN_SE, z: DEFAULT_Z }
    }
}

/// Checks every curve in `files`, and the files against each other (drafter ambiguity).
pub fn check_files(files: &[CurveFile], options: &NoiseModel) -> Vec<Problem> {
    let mut problems: Vec<Problem> = files.iter().flat_map(|f| check_file(f, options)).collect();
    problems.extend(drafter_ambiguities(files));
    problems
}

/// Checks the curves of one file.
pub fn check_file(file: &CurveFile, options: &NoiseModel) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut add = |severity, kind, curve: &Curve, k: usize, size, noise_se, message: String| {
        let location = Location::new(file.origin.clone(), file.line_of(curve.model(), curve.mode(), k));
        problems.push(Problem {
            finding: Finding::new(kind, location, message).with_severity(severity),
            field: curve.field(k),
            point: Some(Point { model: curve.model().to_string(), mode: curve.mode(), k }),
            size,
            noise_se,
        })
    };
    let s = options.run_se;
    for curve in &file.curves {
        let points = curve.points();
        for (&k, &al) in points {
            if !(1.0..=k as f64 + 1.0).contains(&al) {
                add(
                    Severity::Error,
                    ProblemKind::OutOfRange,
                    curve,
                    k,
                    None,
                    None,
                    format!("AL {al} is outside [1, {}] for k = {k}", k + 1),
                );
            }
        }
        let max_k = curve.max_k().max(EXPECTED_MAX_K);
        let missing: Vec<usize> = (1..=max_k).filter(|k| !points.contains_key(k)).collect();
        for &k in &missing {
            let inside = k < curve.max_k();
            add(
                if inside { Severity::Error } else { Severity::Warning },
                ProblemKind::MissingK,
                curve,
                k,
                None,
                None,
                format!(
                    "no value for k = {k}{}",
                    if inside { " although larger k are measured" } else { ": pins at this k cannot be checked" }
                ),
            );
        }
        // Increments over consecutive measured k only; a gap already is a finding.
        let increments: BTreeMap<usize, f64> = points
            .iter()
            .filter_map(|(&k, &al)| {
                let previous = if k == 1 { Some(1.0) } else { points.get(&(k - 1)).copied() };
                previous.map(|prev| (k, al - prev))
            })
            .collect();
        for (&k, &p) in &increments {
            let se = if k == 1 { s } else { s * 2f64.sqrt() };
            let judge = |size: f64| if size > options.z * se { Severity::Error } else { Severity::Warning };
            let verdict = |size: f64| {
                if size > options.z * se { "beyond" } else { "within" }
            };
            if p < 0.0 {
                add(
                    judge(-p),
                    ProblemKind::Dip,
                    curve,
                    k,
                    Some(-p),
                    Some(se),
                    format!(
                        "AL falls by {:.3} from k = {} to k = {k}; noise would give a standard error of {se:.3}, so the dip is {} noise ({:.1} SE)",
                        -p,
                        k - 1,
                        verdict(-p),
                        -p / se
                    ),
                );
            } else if p > 1.0 {
                add(
                    judge(p - 1.0),
                    ProblemKind::IncrementAboveOne,
                    curve,
                    k,
                    Some(p - 1.0),
                    Some(se),
                    format!(
                        "AL grows by {p:.3} from k = {} to k = {k}, more than the one token a draft can add; noise standard error {se:.3}",
                        k - 1
                    ),
                );
            }
            if let Some(&before) = increments.get(&(k.wrapping_sub(1))) {
                let rise = p - before;
                let rise_se = if k == 2 { s * 5f64.sqrt() } else { s * 6f64.sqrt() };
                if rise > 0.0 && p >= 0.0 {
                    let severity = if rise > options.z * rise_se { Severity::Error } else { Severity::Warning };
                    add(
                        severity,
                        ProblemKind::Rise,
                        curve,
                        k,
                        Some(rise),
                        Some(rise_se),
                        format!(
                            // Increments, not probabilities: after a dip the one before is negative.
                            "position {k} is accepted more often than position {}: AL grows by {p:.2} from k = {} to k = {k}, after {before:+.2} from k = {} to k = {} (a rise of {rise:.3}); noise standard error {rise_se:.3}, so the rise is {} noise ({:.1} SE)",
                            k - 1,
                            k - 1,
                            k - 2,
                            k - 1,
                            if severity == Severity::Error { "beyond" } else { "within" },
                            rise / rise_se
                        ),
                    );
                }
            }
        }
    }
    problems
}

/// Header facts with the run identity removed: two runs of the same recipe differ only there.
fn header_facts(file: &CurveFile) -> Vec<String> {
    file.header
        .iter()
        .filter(|l| {
            !l.is_empty()
                && !l.to_ascii_lowercase().contains("run:")
                && !l.to_ascii_lowercase().starts_with("source_run")
        })
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

fn drafter_ambiguities(files: &[CurveFile]) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (i, a) in files.iter().enumerate() {
        for b in &files[i + 1..] {
            let shared: Vec<&str> = a.models().into_iter().filter(|m| b.models().contains(m)).collect();
            if shared.is_empty() || header_facts(a) != header_facts(b) || a.provenance.drafter != b.provenance.drafter {
                continue;
            }
            if a.provenance.drafter.is_some() {
                continue; // same recorded drafter: a duplicate, not an ambiguity; lookups will list both
            }
            for (this, other) in [(a, b), (b, a)] {
                // A warning (the class's severity): lookups tell the files apart by name and say so; a
                // repository is not failed for a header line InferenceX's own files lack.
                let message = format!(
                    "same key '{}' and the same header as {}, and neither records its drafter: only the file name tells them apart (add a '# drafter: …' line)",
                    shared.join(", "),
                    other.origin.rsplit('/').next().unwrap_or(&other.origin)
                );
                let location =
                    Location::new(this.origin.clone(), this.line_of(shared[0], ThinkingMode::Unspecified, 0));
                problems.push(Problem {
                    finding: Finding::new(ProblemKind::DrafterAmbiguity, location, message),
                    field: shared.join(", "),
                    point: None,
                    size: None,
                    noise_se: None,
                });
            }
        }
    }
    problems
}

/// The outcome of checking a set of files.
#[derive(Debug, Clone, Serialize)]
pub struct CurveReport {
    /// How many files were checked.
    pub files_checked: usize,
    /// Every finding, errors first.
    pub problems: Vec<Problem>,
    /// The findings by severity.
    #[serde(flatten)]
    pub tally: Tally,
}

impl CurveReport {
    /// Collects `problems` found in `files_checked` files.
    pub fn new(files_checked: usize, mut problems: Vec<Problem>) -> CurveReport {
        problems.sort_by(|a, b| {
            a.finding
                .severity
                .cmp(&b.finding.severity)
                .then_with(|| a.finding.location.file.cmp(&b.finding.location.file))
        });
        let tally = Tally::of(problems.iter().map(|p| &p.finding));
        CurveReport { files_checked, problems, tally }
    }

    /// How the check ends: it fails on an error, or with `strict` on a warning.
    pub fn status(&self, strict: bool) -> Status {
        self.tally.status(strict, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str, name: &str) -> CurveFile {
        CurveFile::parse(text, name, name).unwrap()
    }

    #[test]
    fn judges_dips_against_noise() {
        let f =
            file("m:\n  1: 1.92\n  2: 2.61\n  3: 2.97\n  4: 3.00\n  5: 3.10\n  6: 3.16\n  7: 3.00\n  8: 2.99\n", "a");
        let problems = check_file(&f, &NoiseModel::default());
        let dip7 = problems.iter().find(|p| p.finding.class == ProblemKind::Dip && p.field == "m.7").unwrap();
        assert_eq!(dip7.finding.severity, Severity::Error);
        assert!((dip7.size.unwrap() - 0.16).abs() < 1e-9);
        let dip8 = problems.iter().find(|p| p.finding.class == ProblemKind::Dip && p.field == "m.8").unwrap();
        assert_eq!(dip8.finding.severity, Severity::Warning, "{}", dip8.finding.message);
    }

    #[test]
    fn finds_range_rise_and_missing_k() {
        let f = file("m:\n  1: 0.9\n  2: 2.5\n  3: 2.7\n  5: 3.5\n", "b");
        let kinds: Vec<(ProblemKind, String)> =
            check_file(&f, &NoiseModel::default()).into_iter().map(|p| (p.finding.class, p.field)).collect();
        assert!(kinds.contains(&(ProblemKind::OutOfRange, "m.1".into())));
        assert!(kinds.contains(&(ProblemKind::IncrementAboveOne, "m.2".into())));
        assert!(kinds.contains(&(ProblemKind::MissingK, "m.4".into())));
        assert!(kinds.contains(&(ProblemKind::MissingK, "m.8".into())));
    }

    #[test]
    fn identical_headers_without_drafters_are_ambiguous() {
        let body = "# Source GitHub Actions run: X\n# Measured on m (B300, vLLM EAGLE3)\nm:\n  1: 1.8\n";
        let a = file(&body.replace('X', "1"), "m_eagle3");
        let b = file(&body.replace('X', "2"), "m_eagle3_gqa");
        let problems = check_files(&[a, b], &NoiseModel::default());
        assert_eq!(problems.iter().filter(|p| p.finding.class == ProblemKind::DrafterAmbiguity).count(), 2);
    }
}
