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
//! Per-position rates are the fifth spelling; they live in [`crate::accept::Acceptance`]. A [`Conversion`]
//! also writes a mean as the per-position rates each length knob forces: the minimum-variance list (vLLM,
//! ATOM, TensorRT-LLM) and llama.cpp's geometric one.

use std::fmt;
use std::str::FromStr;

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
    /// Every spelling, in the order of docs/model.md §1.
    pub const ALL: [Spelling; 4] =
        [Spelling::AcceptanceLength, Spelling::AcceptedDrafts, Spelling::DraftRate, Spelling::SglangOldRate];

    /// The short name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Spelling::AcceptanceLength => "al",
            Spelling::AcceptedDrafts => "accepted-drafts",
            Spelling::DraftRate => "rate",
            Spelling::SglangOldRate => "sglang-old-rate",
        }
    }

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

impl fmt::Display for Spelling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Spelling {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().replace('_', "-").as_str() {
            "al" | "acceptance-length" | "length" => Ok(Spelling::AcceptanceLength),
            "accepted-drafts" | "trtllm" | "v" | "accepted" => Ok(Spelling::AcceptedDrafts),
            "rate" | "draft-rate" | "atom-rate" | "r" => Ok(Spelling::DraftRate),
            "sglang-old-rate" | "old-rate" => Ok(Spelling::SglangOldRate),
            other => Err(Error::invalid(
                "spelling",
                format!("unknown spelling '{other}'; expected one of al, accepted-drafts, rate, sglang-old-rate"),
            )),
        }
    }
}

/// One acceptance figure written in every spelling, plus the per-position rates each length pin forces.
#[derive(Debug, Clone, Serialize)]
pub struct Conversion {
    /// Draft length.
    pub k: usize,
    /// The figure as an acceptance length.
    pub acceptance_length: f64,
    /// Every spelling with its value.
    pub spellings: Vec<SpelledValue>,
    /// The per-position unconditional rates vLLM, ATOM and TensorRT-LLM force for this mean (vLLM's and ATOM's
    /// resolved `synthetic_acceptance_rates`): the minimum-variance chain.
    pub forced_rates: Vec<f64>,
    /// The per-position unconditional rates llama.cpp forces for this mean (`--spec-synth-len`): p^i.
    pub geometric_rates: Vec<f64>,
    /// llama.cpp's constant conditional rate p for this mean.
    pub geometric_p: f64,
    /// The per-position rates list converted from, when the figure was given as one (a rates pin).
    pub given_rates: Option<Vec<f64>>,
}

/// One spelling's value in a [`Conversion`].
#[derive(Debug, Clone, Serialize)]
pub struct SpelledValue {
    /// The spelling.
    pub spelling: Spelling,
    /// The value in it.
    pub value: f64,
    /// Who writes it so.
    pub used_by: &'static str,
}

impl Conversion {
    /// Writes acceptance length `al` at draft length `k` in every spelling.
    ///
    /// # Errors
    /// As [`check_al`].
    ///
    /// ```
    /// let c = alsim::units::Conversion::new(2.83, 3).unwrap();
    /// assert_eq!(c.forced_rates.len(), 3);
    /// assert!((c.spellings[1].value - 1.83).abs() < 1e-12);
    /// ```
    pub fn new(al: f64, k: usize) -> Result<Conversion> {
        let spellings = Spelling::ALL
            .iter()
            .map(|&spelling| {
                Ok(SpelledValue { spelling, value: spelling.from_al(al, k, "value")?, used_by: spelling.used_by() })
            })
            .collect::<Result<_>>()?;
        let forced_rates = crate::accept::min_variance_chain(al, k)?.unconditional().to_vec();
        let geometric = crate::accept::geometric_chain(al, k)?;
        Ok(Conversion {
            k,
            acceptance_length: al,
            spellings,
            forced_rates,
            geometric_p: geometric.unconditional()[0],
            geometric_rates: geometric.unconditional().to_vec(),
            given_rates: None,
        })
    }

    /// Writes the mean of per-position rates `rates` in every spelling and as each length pin's rates.
    ///
    /// ```
    /// let rates = alsim::accept::Acceptance::from_unconditional(vec![0.78, 0.6, 0.45], "rates").unwrap();
    /// let c = alsim::units::Conversion::from_rates(&rates).unwrap();
    /// assert!((c.acceptance_length - 2.83).abs() < 1e-12);
    /// assert!((c.geometric_p - 0.7724).abs() < 1e-4);
    /// ```
    ///
    /// # Errors
    /// As [`Conversion::new`].
    pub fn from_rates(rates: &crate::accept::Acceptance) -> Result<Conversion> {
        let given_rates = Some(rates.unconditional().to_vec());
        Ok(Conversion { given_rates, ..Conversion::new(rates.acceptance_length(), rates.k())? })
    }
}

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

/// Checks that `al` is a valid acceptance length for draft length `k`: finite and in [1, k+1].
///
/// # Errors
/// [`Error::Invalid`] naming `field`.
pub fn check_al(al: f64, k: usize, field: &str) -> Result<()> {
    Spelling::AcceptanceLength.to_al(al, k, field).map(|_| ())
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
