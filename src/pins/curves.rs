//! The golden curves a repository's pins are checked against ([`golden_curves`]), and their own problems
//! (class 11), judged only as far as the pins need them.
//!
//! The judgement is `alsim curve check`'s (`crate::curve::check`): one noise model decides for both commands.
//! The pin check keeps what is beyond noise — a value outside [1, k+1], AL(k) falling, an increment above one
//! token, a per-position increment rising — and every drafter ambiguity (two files told apart only by name,
//! which lookups resolve by file name with this warning).
//!
//! Severity (docs/pins.md#curve-problem): a problem fails the check only where a checked pin's expected value
//! rests on the affected entry; elsewhere it is a warning (`alsim curve check` is where curves are judged).

use std::path::Path;

use super::{Location, Severity, walk};
use crate::curve::CurveSet;
use crate::curve::check::{self, NoiseModel, Point, ProblemKind};
use crate::error::Result;

/// A curve entry a problem is about: the golden file (as read) and the point in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CurveEntry {
    pub file: String,
    pub point: Point,
}

/// One problem as `curve check` judged it, with the entry it affects when it is about one value; the
/// rule (`rules::curve_problem`) makes the finding once the pins that rest on entries are known.
#[derive(Debug, Clone)]
pub(crate) struct CurveProblem {
    pub at: Location,
    pub text: String,
    pub severity: Severity,
    /// The affected entry; `None` for problems about a whole file.
    pub entry: Option<CurveEntry>,
}

/// Every class-11 problem of the files in `curves` that is beyond noise (and every drafter ambiguity), as
/// `alsim curve check` judges it: one noise model for both commands. Problems within noise, and missing k
/// (a pin at such a k is unresolved anyway), are left to `curve check`.
pub(crate) fn problems(curves: &CurveSet, repo: &Path) -> Vec<CurveProblem> {
    let canonical_repo = repo.canonicalize().ok();
    let rel = |origin: &str| -> String {
        match (Path::new(origin).canonicalize().ok(), &canonical_repo) {
            (Some(p), Some(r)) => {
                p.strip_prefix(r).map(|s| s.display().to_string()).unwrap_or_else(|_| origin.to_string())
            }
            _ => origin.to_string(),
        }
    };
    check::check_files(curves.files(), &NoiseModel::default())
        .into_iter()
        .filter(|p| match p.finding.class {
            ProblemKind::DrafterAmbiguity => true,
            ProblemKind::MissingK => false,
            ProblemKind::OutOfRange | ProblemKind::Dip | ProblemKind::IncrementAboveOne | ProblemKind::Rise => {
                p.finding.severity == Severity::Error
            }
        })
        .map(|p| CurveProblem {
            at: Location::in_file(rel(&p.finding.location.file), p.finding.location.line),
            text: p.text(),
            severity: p.finding.severity,
            entry: p.point.map(|point| CurveEntry { file: p.finding.location.file, point }),
        })
        .collect()
}

/// The golden curves a repository's pins are checked against, and where they came from.
#[derive(Debug, Clone)]
pub struct GoldenSet {
    /// The curves.
    pub curves: CurveSet,
    /// Where they came from, for the report.
    pub source: String,
    /// Whether they are the user's or the repository's (whose own problems are reported), not alsim's.
    pub own: bool,
}

/// `--golden DIR` when given, else the repository's own `golden_al_distribution/`, else alsim's embedded
/// curves.
///
/// # Errors
/// Errors reading the golden directory (naming the file).
pub fn golden_curves(repo: &Path, golden: Option<&Path>) -> Result<GoldenSet> {
    let repo_golden = repo.join("golden_al_distribution");
    let (curves, source, own) = match golden {
        Some(dir) => (CurveSet::read_dir(dir)?, format!("{} (given)", dir.display()), true),
        // Links leaving the repository are not followed here either: the walk reports them.
        None if repo_golden.is_dir() && walk::inside(repo, &repo_golden) => (
            CurveSet::read_dir_where(&repo_golden, |file| walk::inside(repo, file))?,
            "golden_al_distribution/ (the repository's own)".to_string(),
            true,
        ),
        None => (
            CurveSet::embedded(),
            "alsim's embedded curves (the repository has no golden_al_distribution/)".to_string(),
            false,
        ),
    };
    Ok(GoldenSet { curves, source, own })
}
