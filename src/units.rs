//! The spellings of one acceptance figure (docs/model.md §1) and the conversions between them — the only
//! place in alsim that knows which engine counts the bonus token and which divides by k.
//!
//! | spelling | AL 2.83, k 3 | used by |
//! |---|---|---|
//! | [`Spelling::AcceptanceLength`] | 2.83 | vLLM, SGLang, ATOM length knobs, golden YAMLs |
//! | [`Spelling::AcceptedDrafts`] | 1.83 | TensorRT-LLM `TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS` |
//! | [`Spelling::DraftRate`] | 0.61 | ATOM `--spec-decode-acceptance-rate`, vLLM "Avg Draft acceptance rate", newer SGLang `spec_accept_rate` |
//! | [`Spelling::SglangOldRate`] | 0.7075 | older SGLang `spec_accept_rate` |
//!
//! Per-position rates are the fifth spelling; they live in [`crate::accept::Acceptance`], and
//! [`crate::accept::Conversion`] writes one figure in every spelling and as the rates each length knob
//! forces. This module is ground: it knows no acceptance model.

use serde::Serialize;

use crate::error::{Error, Result};

/// The largest draft length alsim accepts. Engines run k ≤ 16 in practice; 32 leaves headroom for
/// extrapolation while keeping every table small.
pub const MAX_DRAFT_LEN: usize = 32;

/// Slack for floating-point round-off when checking ranges such as AL ≤ k + 1.
pub const RANGE_EPS: f64 = 1e-9;

/// One way of writing a mean acceptance figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Spelling {
    /// Mean tokens per verify step, bonus token counted: AL ∈ [1, k+1].
    AcceptanceLength,
    /// Mean accepted draft tokens per step, v = AL − 1 ∈ [0, k] (TensorRT-LLM's off-by-one knob).
    AcceptedDrafts,
    /// Accepted drafts over proposed drafts, r = (AL − 1)/k ∈ [0, 1].
    DraftRate,
    /// Older SGLang `spec_accept_rate`: AL/(k + 1) ∈ [1/(k+1), 1].
    SglangOldRate,
}

impl Spelling {
    /// Who writes a figure this way.
    pub fn used_by(self) -> &'static str {
        match self {
            Spelling::AcceptanceLength => {
                "vLLM synthetic_acceptance_length, SGLANG_SIMULATE_ACC_LEN, ATOM --spec-decode-acceptance-length, golden YAMLs"
            }
            Spelling::AcceptedDrafts => "TensorRT-LLM TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS",
            Spelling::DraftRate => {
                "ATOM --spec-decode-acceptance-rate and acceptance_rate, vLLM 'Avg Draft acceptance rate', newer SGLang spec_accept_rate"
            }
            Spelling::SglangOldRate => "older SGLang spec_accept_rate",
        }
    }

    /// The valid range of this spelling for draft length `k`.
    pub fn range(self, k: usize) -> (f64, f64) {
        let kf = k as f64;
        match self {
            Spelling::AcceptanceLength => (1.0, kf + 1.0),
            Spelling::AcceptedDrafts => (0.0, kf),
            Spelling::DraftRate => (0.0, 1.0),
            Spelling::SglangOldRate => (1.0 / (kf + 1.0), 1.0),
        }
    }

    /// Converts `value`, written in this spelling for draft length `k`, to an acceptance length.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `field` when `k` is not in 1..=[`MAX_DRAFT_LEN`], the value is not
    /// finite, or it lies outside [`Spelling::range`].
    pub fn to_al(self, value: f64, k: usize, field: &str) -> Result<f64> {
        check_draft_len(k, "k")?;
        let (lo, hi) = self.range(k);
        if !value.is_finite() || value < lo - RANGE_EPS || value > hi + RANGE_EPS {
            return Err(Error::invalid(
                field,
                format!("{value} is not a valid {} for k = {k}: it must lie in [{lo:.4}, {hi:.4}]", self.describe()),
            ));
        }
        let kf = k as f64;
        let al = match self {
            Spelling::AcceptanceLength => value,
            Spelling::AcceptedDrafts => value + 1.0,
            Spelling::DraftRate => 1.0 + value * kf,
            Spelling::SglangOldRate => value * (kf + 1.0),
        };
        Ok(al.clamp(1.0, kf + 1.0))
    }

    /// Writes acceptance length `al` in this spelling for draft length `k`.
    ///
    /// # Errors
    /// As [`check_al`].
    pub fn from_al(self, al: f64, k: usize, field: &str) -> Result<f64> {
        check_al(al, k, field)?;
        let kf = k as f64;
        Ok(match self {
            Spelling::AcceptanceLength => al,
            Spelling::AcceptedDrafts => al - 1.0,
            Spelling::DraftRate => (al - 1.0) / kf,
            Spelling::SglangOldRate => al / (kf + 1.0),
        })
    }

    fn describe(self) -> &'static str {
        match self {
            Spelling::AcceptanceLength => "acceptance length (AL)",
            Spelling::AcceptedDrafts => "accepted-draft count (AL − 1)",
            Spelling::DraftRate => "draft acceptance rate ((AL − 1)/k)",
            Spelling::SglangOldRate => "old SGLang accept rate (AL/(k+1))",
        }
    }
}

crate::names::named_enum!(
    Spelling,
    field = "spelling",
    what = "spelling",
    [
        AcceptanceLength = "al" | "acceptance-length" | "length",
        AcceptedDrafts = "accepted-drafts" | "trtllm" | "v" | "accepted",
        DraftRate = "rate" | "draft-rate" | "atom-rate" | "r",
        SglangOldRate = "sglang-old-rate" | "old-rate",
    ]
);

/// Checks that `k` is a usable draft length.
///
/// # Errors
/// [`Error::Invalid`] naming `field` when `k` is 0 or above [`MAX_DRAFT_LEN`].
pub fn check_draft_len(k: usize, field: &str) -> Result<()> {
    if k == 0 || k > MAX_DRAFT_LEN {
        return Err(Error::invalid(
            field,
            format!("draft length k = {k} is out of range: speculative decoding needs 1 ≤ k ≤ {MAX_DRAFT_LEN}"),
        ));
    }
    Ok(())
}

/// Checks that the argument `parameter` is a usable draft length.
///
/// # Errors
/// [`Error::Parameter`] when `k` is 0 or above [`MAX_DRAFT_LEN`].
pub fn check_draft_len_argument(k: usize, parameter: &'static str) -> Result<()> {
    check_draft_len(k, parameter).map_err(|e| e.for_parameter(parameter))
}

/// Checks that `al` is a valid acceptance length for draft length `k`: finite and in [1, k+1].
///
/// # Errors
/// [`Error::Invalid`] naming `field`.
pub fn check_al(al: f64, k: usize, field: &str) -> Result<()> {
    Spelling::AcceptanceLength.to_al(al, k, field).map(|_| ())
}

/// A number formatted without trailing zeros (`2.83`, `1.83`, `0.663333`).
pub fn plain_number(value: f64, max_decimals: usize) -> String {
    let text = format!("{value:.max_decimals$}");
    if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_case_in_every_spelling() {
        let k = 3;
        let f = |s: Spelling| s.from_al(2.83, k, "al").unwrap();
        assert!((f(Spelling::AcceptedDrafts) - 1.83).abs() < 1e-12);
        assert!((f(Spelling::DraftRate) - 0.61).abs() < 1e-12);
        assert!((f(Spelling::SglangOldRate) - 0.7075).abs() < 1e-12);
        assert!((Spelling::DraftRate.to_al(0.61, k, "r").unwrap() - 2.83).abs() < 1e-12);
    }

    #[test]
    fn out_of_range_names_the_field() {
        let err = Spelling::AcceptanceLength.to_al(4.5, 3, "--al").unwrap_err().to_string();
        assert!(err.starts_with("--al:"), "{err}");
        assert!(err.contains("[1.0000, 4.0000]"), "{err}");
        assert!(check_draft_len(0, "--k").is_err());
        assert!(Spelling::DraftRate.to_al(f64::NAN, 3, "r").is_err());
    }
}
