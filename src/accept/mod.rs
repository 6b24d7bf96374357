//! Acceptance models: what one verify step of one request accepts.
//!
//! Two equivalent views of the same law (docs/model.md §2):
//! - [`Acceptance`]: per-position unconditional rates p_i = P(first i drafts all accepted),
//!   1 ≥ p_1 ≥ … ≥ p_k ≥ 0, with conditional rates c_i = p_i / p_{i−1};
//! - [`Distribution`]: P(a = j) for the number of accepted drafts a ∈ {0..k}, with
//!   P(a = j) = p_j − p_{j+1} and p_i = P(a ≥ i).
//!
//! Every distribution on {0..k} is a valid chain and vice versa, so the two convert losslessly.
//! Submodules derive these from golden curves ([`fit`]) and from the engines' synthetic pins
//! ([`schedule`]); [`pin`] writes a curve's own chain as a per-position rates pin.

pub(crate) mod compare;
pub(crate) mod convert;
pub mod fit;
pub mod pin;
pub mod schedule;
pub(crate) mod view;

pub use compare::PinAnalysis;
pub use convert::Conversion;
pub use pin::{RatesPin, RatesSetting};
pub use schedule::geometric_chain;
pub use view::CurveView;

use serde::Serialize;

use crate::curve::Curve;
use crate::error::{Error, Result};
use crate::units::{RANGE_EPS, check_al, check_draft_len};

/// Tolerance on a distribution's total probability before it is rejected rather than renormalised.
const SUM_TOLERANCE: f64 = 1e-6;

/// A rate for messages: at most six decimals, so a golden difference reads 0.41, not 0.41000000000000014.
fn short(p: f64) -> String {
    let text = format!("{p:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Per-position acceptance of a chain drafter with k draft positions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Acceptance {
    unconditional: Vec<f64>,
}

// The chain a golden curve implies is defined here, beside the acceptance model, so that `curve` (below
// `accept` in the layering) knows nothing of it.
impl Curve {
    /// The chain implied directly by the curve's increments up to `k` (docs/model.md §2).
    ///
    /// # Errors
    /// [`Error::Invalid`] when the increments are not a valid chain (a dip or a rise); fit the curve with
    /// [`fit`] instead.
    pub fn chain(&self, k: usize) -> Result<Acceptance> {
        self.al(k)?;
        let p = self.increments(k)?;
        Acceptance::from_unconditional(p, &self.field(k)).map_err(|e| {
            Error::invalid(
                self.field(k),
                format!("{e}; the measured increments are not a valid chain: fit one to the curve (a concave fit)"),
            )
        })
    }
}

impl Acceptance {
    /// Builds a chain from unconditional rates [p_1..p_k].
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `field` when k is out of range, a rate is not in [0, 1], or the
    /// rates increase (a chain cannot accept position i+1 more often than position i).
    ///
    /// ```
    /// let a = alsim::accept::Acceptance::from_unconditional(vec![0.78, 0.60, 0.45], "rates").unwrap();
    /// assert!((a.acceptance_length() - 2.83).abs() < 1e-12);
    /// ```
    pub fn from_unconditional(rates: Vec<f64>, field: &str) -> Result<Self> {
        check_draft_len(rates.len(), field)?;
        let mut previous = 1.0;
        for (i, &p) in rates.iter().enumerate() {
            if !p.is_finite() || !(-RANGE_EPS..=1.0 + RANGE_EPS).contains(&p) {
                return Err(Error::invalid(
                    field,
                    format!("position {} rate {p} is not a probability in [0, 1]", i + 1),
                ));
            }
            if p > previous + RANGE_EPS {
                return Err(Error::invalid(
                    field,
                    format!(
                        "position {} rate {} exceeds position {} rate {}: unconditional rates of a chain never increase",
                        i + 1,
                        short(p),
                        i,
                        short(previous)
                    ),
                ));
            }
            previous = p;
        }
        let unconditional = rates.into_iter().map(|p| p.clamp(0.0, 1.0)).collect();
        Ok(Acceptance { unconditional })
    }

    /// Builds a chain from conditional rates [c_1..c_k], each in [0, 1].
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `field` when k is out of range or a rate is not in [0, 1].
    pub fn from_conditional(rates: &[f64], field: &str) -> Result<Self> {
        check_draft_len(rates.len(), field)?;
        let mut p = 1.0;
        let mut unconditional = Vec::with_capacity(rates.len());
        for (i, &c) in rates.iter().enumerate() {
            if !c.is_finite() || !(0.0..=1.0).contains(&c) {
                return Err(Error::invalid(
                    field,
                    format!("conditional rate {} = {c} is not a probability in [0, 1]", i + 1),
                ));
            }
            p *= c;
            unconditional.push(p);
        }
        Ok(Acceptance { unconditional })
    }

    /// The draft length k.
    pub fn k(&self) -> usize {
        self.unconditional.len()
    }

    /// Unconditional rates [p_1..p_k].
    pub fn unconditional(&self) -> &[f64] {
        &self.unconditional
    }

    /// Conditional rates [c_1..c_k]; c_i = 0 once p_{i−1} = 0 (vLLM's convention).
    pub fn conditional(&self) -> Vec<f64> {
        let mut previous = 1.0;
        self.unconditional
            .iter()
            .map(|&p| {
                let c = if previous > 0.0 { (p / previous).min(1.0) } else { 0.0 };
                previous = p;
                c
            })
            .collect()
    }

    /// Mean tokens per step, AL = 1 + Σ p_i.
    pub fn acceptance_length(&self) -> f64 {
        1.0 + self.unconditional.iter().sum::<f64>()
    }

    /// The distribution of accepted drafts per step.
    pub fn distribution(&self) -> Distribution {
        let k = self.k();
        let p = |i: usize| {
            if i == 0 {
                1.0
            } else if i > k {
                0.0
            } else {
                self.unconditional[i - 1]
            }
        };
        let probabilities = (0..=k).map(|j| (p(j) - p(j + 1)).max(0.0)).collect();
        Distribution { probabilities }
    }

    /// The same chain truncated or used at a shorter draft length `k` (a chain's early positions do not
    /// depend on how many follow).
    ///
    /// # Errors
    /// [`Error::Invalid`] when `k` is 0 or longer than this chain.
    pub fn truncated(&self, k: usize) -> Result<Self> {
        if k == 0 || k > self.k() {
            return Err(Error::invalid("k", format!("cannot take k = {k} positions of a chain with k = {}", self.k())));
        }
        Ok(Acceptance { unconditional: self.unconditional[..k].to_vec() })
    }
}

/// The distribution of accepted drafts a ∈ {0..k} in one step of one request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Distribution {
    probabilities: Vec<f64>,
}

impl Distribution {
    /// Builds a distribution from P(a = 0..k).
    ///
    /// Probabilities are renormalised when their sum is within 1e-6 of 1 (rounded inputs).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `field` when there are fewer than 2 entries (k ≥ 1), an entry is negative
    /// or not finite, or the sum is not 1.
    pub fn new(probabilities: Vec<f64>, field: &str) -> Result<Self> {
        check_draft_len(probabilities.len().saturating_sub(1), field)?;
        if let Some((j, &q)) = probabilities.iter().enumerate().find(|(_, q)| !q.is_finite() || **q < 0.0) {
            return Err(Error::invalid(field, format!("P(a = {j}) = {q} is not a probability")));
        }
        let sum: f64 = probabilities.iter().sum();
        if (sum - 1.0).abs() > SUM_TOLERANCE {
            return Err(Error::invalid(field, format!("probabilities sum to {sum}, not 1")));
        }
        Ok(Distribution { probabilities: probabilities.into_iter().map(|q| q / sum).collect() })
    }

    /// Builds a distribution from non-negative weights (counts), normalising them.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `field` when a weight is negative or not finite, or all are zero.
    pub fn from_weights(weights: &[f64], field: &str) -> Result<Self> {
        let total: f64 = weights.iter().sum();
        if weights.iter().any(|w| !w.is_finite() || *w < 0.0) || total <= 0.0 {
            return Err(Error::invalid(field, "weights must be finite, non-negative and not all zero"));
        }
        Self::new(weights.iter().map(|w| w / total).collect(), field)
    }

    /// The draft length k (the largest possible accepted count).
    pub fn k(&self) -> usize {
        self.probabilities.len() - 1
    }

    /// P(a = 0..k).
    pub fn probabilities(&self) -> &[f64] {
        &self.probabilities
    }

    /// E\[a\], the mean accepted drafts per step.
    pub fn mean_accepted(&self) -> f64 {
        self.probabilities.iter().enumerate().map(|(j, q)| j as f64 * q).sum()
    }

    /// Mean tokens per step, AL = E\[a\] + 1.
    pub fn acceptance_length(&self) -> f64 {
        1.0 + self.mean_accepted()
    }

    /// Var(a), which equals the variance of tokens per step a + 1.
    pub fn variance(&self) -> f64 {
        let mean = self.mean_accepted();
        self.probabilities.iter().enumerate().map(|(j, q)| (j as f64 - mean).powi(2) * q).sum()
    }

    /// P(a = 0): the share of steps that reject the first draft.
    pub fn p_zero(&self) -> f64 {
        self.probabilities[0]
    }

    /// Total variation distance ½ Σ |P(a = j) − Q(a = j)|; the shorter support is padded with zeros.
    pub fn total_variation(&self, other: &Distribution) -> f64 {
        let n = self.probabilities.len().max(other.probabilities.len());
        let at = |d: &Distribution, j: usize| d.probabilities.get(j).copied().unwrap_or(0.0);
        0.5 * (0..n).map(|j| (at(self, j) - at(other, j)).abs()).sum::<f64>()
    }

    /// The equivalent per-position chain, p_i = P(a ≥ i).
    pub fn acceptance(&self) -> Acceptance {
        let mut tail = 0.0;
        let mut unconditional = vec![0.0; self.k()];
        for i in (1..=self.k()).rev() {
            tail += self.probabilities[i];
            unconditional[i - 1] = tail.min(1.0);
        }
        Acceptance { unconditional }
    }
}

/// The minimum-variance chain with mean `al` at draft length `k` (vLLM `_acceptance_length_to_rates`,
/// ATOM `acceptance_length_to_rates`, TensorRT-LLM's forced count): with d = AL − 1 and f = ⌊d⌋,
/// p_i = 1 for i ≤ f, p_{f+1} = d − f, and 0 after.
///
/// # Errors
/// As [`crate::units::check_al`].
///
/// ```
/// let a = alsim::accept::min_variance_chain(2.83, 3).unwrap();
/// assert_eq!(a.unconditional().len(), 3);
/// assert!((a.unconditional()[1] - 0.83).abs() < 1e-12);
/// ```
pub fn min_variance_chain(al: f64, k: usize) -> Result<Acceptance> {
    check_al(al, k, "acceptance length")?;
    let d = (al - 1.0).clamp(0.0, k as f64);
    let whole = d.floor() as usize;
    let unconditional = (1..=k)
        .map(|i| {
            if i <= whole {
                1.0
            } else if i == whole + 1 {
                d - whole as f64
            } else {
                0.0
            }
        })
        .collect();
    Ok(Acceptance { unconditional })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn seed_chain_distribution() {
        let a = Acceptance::from_unconditional(vec![0.78, 0.60, 0.45], "rates").unwrap();
        let d = a.distribution();
        let want = [0.22, 0.18, 0.15, 0.45];
        for (got, want) in d.probabilities().iter().zip(want) {
            assert!(close(*got, want), "{got} vs {want}");
        }
        assert!(close(d.acceptance_length(), 2.83));
        // E[a²] = Σ (2i − 1) p_i = 0.78 + 1.8 + 2.25 = 4.83; Var = 4.83 − 1.83² = 1.4811.
        assert!(close(d.variance(), 1.4811));
        let c = a.conditional();
        assert!(close(c[1], 0.60 / 0.78));
        assert_eq!(d.acceptance(), a);
    }

    #[test]
    fn min_variance_matches_engines() {
        let d = min_variance_chain(2.83, 3).unwrap().distribution();
        assert!(close(d.probabilities()[1], 0.17) && close(d.probabilities()[2], 0.83));
        assert!(close(d.variance(), 0.1411));
        assert_eq!(min_variance_chain(4.0, 3).unwrap().unconditional(), &[1.0, 1.0, 1.0]);
        assert_eq!(min_variance_chain(1.0, 3).unwrap().unconditional(), &[0.0, 0.0, 0.0]);
    }

    #[test]
    fn rejects_bad_chains() {
        assert!(Acceptance::from_unconditional(vec![0.5, 0.6], "r").is_err());
        assert!(Acceptance::from_unconditional(vec![1.5], "r").is_err());
        assert!(Acceptance::from_unconditional(vec![], "r").is_err());
        assert!(Distribution::new(vec![0.5, 0.4], "d").is_err());
        assert!(Distribution::new(vec![1.2, -0.2], "d").is_err());
    }
}
