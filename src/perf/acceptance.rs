//! Acceptance length per draft length, from whichever source the user names: a golden curve, a chain fitted
//! to points, real-verification evidence, or explicit values.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::accept::fit::{FitKind, fit};
use crate::curve::Curve;
use crate::error::{Error, Result};
use crate::units::{check_al, check_draft_len_argument};

/// Acceptance length per draft length: AL(0) = 1 (spec off), AL(1..=K) from a golden curve, a chain fitted to
/// a curve or to measured points, real-verification evidence, or given explicitly. Evidence that counts only
/// accepted tokens measures AL at its own k alone; the k it does not cover are `None` and left out of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AcceptanceSource {
    /// Where the values come from (a golden curve field, a fit, evidence, or "explicit").
    pub description: String,
    /// AL(k) for k = 0..=K; `None` where the source says nothing about that k.
    pub al: Vec<Option<f64>>,
}

impl AcceptanceSource {
    /// AL(1..=`max_k`) from a golden curve.
    ///
    /// # Errors
    /// [`Error::Lookup`] when the curve lacks a k; [`Error::Parameter`] `max_k` when it is out of range;
    /// [`Error::Invalid`] when a value is outside [1, k+1].
    pub fn from_curve(curve: &Curve, origin: &str, max_k: usize) -> Result<Self> {
        check_draft_len_argument(max_k, "max_k")?;
        let mut al = vec![Some(1.0)];
        for k in 1..=max_k {
            al.push(Some(curve.al(k)?));
        }
        Ok(AcceptanceSource { description: format!("{origin} {} {}", curve.model(), curve.mode()), al })
    }

    /// AL(1..=`max_k`) from a chain of kind `kind` fitted to `curve`'s points — which fills k the points skip and
    /// extends past the last one (docs/model.md §2). `origin` says where the points came from.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the curve has too few points for the fit; [`Error::Parameter`] `max_k` when it
    /// is out of range.
    pub fn fitted(curve: &Curve, kind: FitKind, origin: &str, max_k: usize) -> Result<Self> {
        check_draft_len_argument(max_k, "max_k")?;
        // The fit names the points by a curve key; the user knows them by where they came from.
        let model = match fit(curve, kind) {
            Ok(fitted) => fitted.model,
            Err(Error::Invalid { message, .. }) => return Err(Error::parameter("fit", format!("{origin}: {message}"))),
            Err(other) => return Err(other),
        };
        let al = (0..=max_k).map(|k| Some(model.acceptance_length(k))).collect();
        Ok(AcceptanceSource { description: format!("{origin}, {kind} fit"), al })
    }

    /// The measured points up to `max_k`, as they are (e.g. [`crate::evidence::measured_al`]).
    ///
    /// # Errors
    /// [`Error::Parameter`] `max_k` when no point is at or below it; [`Error::Invalid`] when a value is
    /// outside [1, k+1].
    pub fn measured(points: &BTreeMap<usize, f64>, description: impl Into<String>, max_k: usize) -> Result<Self> {
        check_draft_len_argument(max_k, "max_k")?;
        let description = description.into();
        let mut al = vec![None; max_k + 1];
        al[0] = Some(1.0);
        for (&k, &v) in points.range(1..=max_k) {
            check_al(v, k, &description)?;
            al[k] = Some(v);
        }
        if al.iter().skip(1).all(Option::is_none) {
            let ks: Vec<String> = points.keys().map(usize::to_string).collect();
            return Err(Error::parameter(
                "max_k",
                format!("{description} measures k = {} only, above {max_k}", ks.join(", ")),
            ));
        }
        Ok(AcceptanceSource { description, al })
    }

    /// Explicit AL(1), AL(2), … (`--al`).
    ///
    /// # Errors
    /// [`Error::Parameter`] naming `al` when empty or a value is outside [1, k+1].
    pub fn explicit(values: &[f64]) -> Result<Self> {
        if values.is_empty() {
            return Err(Error::parameter("al", "give at least AL(1)"));
        }
        let mut al = vec![Some(1.0)];
        for (i, &v) in values.iter().enumerate() {
            check_al(v, i + 1, "al").map_err(|e| e.for_parameter("al"))?;
            al.push(Some(v));
        }
        Ok(AcceptanceSource { description: "explicit AL".into(), al })
    }

    /// The largest k covered.
    pub fn max_k(&self) -> usize {
        self.al.len() - 1
    }

    /// The (k, AL) pairs the source gives, k = 0 first.
    pub fn points(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.al.iter().enumerate().filter_map(|(k, al)| al.map(|al| (k, al)))
    }
}
