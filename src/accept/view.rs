//! One golden curve shown in full (`alsim curve show`): its values, the increments and conditional rates
//! they imply as measured, what the curve check finds in it, and every fit of a chain to it.

use serde::Serialize;

use super::fit::{Fit, fit_all};
use crate::curve::check::{NoiseModel, Problem, check_file};
use crate::curve::{Curve, CurveFile, Provenance, ThinkingMode};

/// One curve shown in full: values, increments and conditional rates as measured, problems and fits.
#[derive(Debug, Clone, Serialize)]
pub struct CurveView {
    /// The file.
    pub origin: String,
    /// What the header says.
    pub provenance: Provenance,
    /// The model key.
    pub model: String,
    /// The thinking mode.
    pub mode: ThinkingMode,
    /// Per k: AL, the increment p_k = AL(k) − AL(k−1) and the conditional rate p_k/p_{k−1}, as measured.
    pub points: Vec<CurvePoint>,
    /// What the check finds in this curve.
    pub problems: Vec<Problem>,
    /// Every fit, best leave-one-k-out error first.
    pub fits: Vec<Fit>,
}

/// One row of [`CurveView`].
#[derive(Debug, Clone, Serialize)]
pub struct CurvePoint {
    /// Draft length.
    pub k: usize,
    /// Golden AL(k).
    pub al: f64,
    /// AL(k) − AL(k−1), when k−1 is measured (AL(0) = 1).
    pub increment: Option<f64>,
    /// increment(k)/increment(k−1), when both exist and the earlier one is positive.
    pub conditional: Option<f64>,
}

impl CurveView {
    /// Everything about `curve` from `file`.
    pub fn new(file: &CurveFile, curve: &Curve) -> CurveView {
        let points = curve.points();
        let increment = |k: usize| -> Option<f64> {
            let previous = if k == 1 { Some(1.0) } else { points.get(&(k - 1)).copied() };
            Some(points.get(&k)? - previous?)
        };
        let rows = points
            .iter()
            .map(|(&k, &al)| {
                let conditional = match (increment(k), if k > 1 { increment(k - 1) } else { Some(1.0) }) {
                    (Some(p), Some(before)) if before > 0.0 => Some(p / before),
                    _ => None,
                };
                CurvePoint { k, al, increment: increment(k), conditional }
            })
            .collect();
        let prefix = format!("{}.", curve.name());
        let problems =
            check_file(file, &NoiseModel::default()).into_iter().filter(|p| p.field.starts_with(&prefix)).collect();
        CurveView {
            origin: file.origin.clone(),
            provenance: file.provenance.clone(),
            model: curve.model().to_string(),
            mode: curve.mode(),
            points: rows,
            problems,
            fits: fit_all(curve),
        }
    }
}
