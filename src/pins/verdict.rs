//! What the check concluded about one pin's value: its verdict ([`ValueVerdict`]) and the golden value it was
//! held against ([`GoldenRef`]). Plain types that the rules make and the check reports; they import nothing
//! of the check, so the rules and the check's orchestrator both stand on them.

use serde::Serialize;

use crate::curve::registry::DrafterMatch;

/// The golden value a pin was checked against.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GoldenRef {
    /// The golden file.
    pub file: String,
    /// The key path (`minimax-m3.thinking_on.3`).
    pub key: String,
    /// The golden AL.
    pub expected_al: f64,
    /// The expected value in the pin's own spelling.
    pub expected_written: f64,
    /// How the drafter chose the file.
    pub drafter_match: DrafterMatch,
    /// For a rates pin: the golden chain at k ([`crate::accept::RatesPin::from_curve`]), as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_rates: Option<Vec<f64>>,
    /// For a rates pin: where the golden chain came from (the curve's increments, or a fit and why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rates_from: Option<String>,
}

/// The outcome for one pin's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueVerdict {
    /// Within tolerance of the golden value.
    Ok,
    /// Right only if an unstated fact (thinking mode, draft sampling) differs from its documented default.
    Unconfirmed,
    /// Off the golden value (the finding says which class explains it).
    Mismatch,
    /// Outside [1, k+1].
    OutOfRange,
    /// The value, k or curve could not be decided.
    Unresolved,
    /// The pin does nothing (its role runs no speculative decoding).
    Inert,
}

impl ValueVerdict {
    /// The word shown in tables.
    pub fn name(self) -> &'static str {
        match self {
            ValueVerdict::Ok => "ok",
            ValueVerdict::Unconfirmed => "unconfirmed",
            ValueVerdict::Mismatch => "mismatch",
            ValueVerdict::OutOfRange => "out of range",
            ValueVerdict::Unresolved => "unresolved",
            ValueVerdict::Inert => "inert",
        }
    }
}
