//! What the requests look like: a fixed decode context, or turns of input and output whose prefill is
//! amortised over the steps each request decodes.

use serde::Serialize;

use crate::error::{Error, Result};

/// Longest context, input or output accepted, in tokens: ten times the longest context window served today,
/// so a typo (`--osl 1e18`) is refused rather than priced.
pub const MAX_TOKENS: f64 = 10_000_000.0;

/// Input tokens per turn when nothing states them (`alsim predict --isl`, agentic points in `alsim sweep`).
pub const DEFAULT_ISL: f64 = 1024.0;
/// Output tokens per turn when nothing states them.
pub const DEFAULT_OSL: f64 = 1024.0;

/// What the requests look like: a fixed decode context, or turns of input and output with prefill.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Workload {
    /// Pure decode at a fixed context length (tokens already in the KV cache).
    Decode {
        /// Context length in tokens.
        context: f64,
    },
    /// Each request prefills `isl` input tokens (a fraction `prefix_hit` from the prefix cache) and decodes
    /// `osl` output tokens; decode runs at the mean context isl + osl/2.
    Turns {
        /// Input tokens per turn.
        isl: f64,
        /// Output tokens per turn.
        osl: f64,
        /// Fraction of input found in the prefix cache, in [0, 1].
        prefix_hit: f64,
    },
}

impl Workload {
    /// Checks the ranges, naming the parameter.
    ///
    /// # Errors
    /// [`Error::Parameter`] for a length outside [0, [`MAX_TOKENS`]] (output: [1, [`MAX_TOKENS`]]), not a number,
    /// or a hit rate outside [0, 1].
    pub fn validate(&self) -> Result<()> {
        let tokens = |value: f64, least: f64| (least..=MAX_TOKENS).contains(&value);
        let out_of_range = |parameter: &'static str, value: f64, least: f64, what: &str| {
            Err(Error::parameter(
                parameter,
                format!("{value} is out of range: {what} must lie in [{least}, {MAX_TOKENS}] tokens"),
            ))
        };
        match *self {
            Workload::Decode { context } if !tokens(context, 0.0) => {
                out_of_range("context", context, 0.0, "a decode context")
            }
            Workload::Turns { isl, .. } if !tokens(isl, 0.0) => out_of_range("isl", isl, 0.0, "input per turn"),
            Workload::Turns { osl, .. } if !tokens(osl, 1.0) => out_of_range("osl", osl, 1.0, "output per turn"),
            Workload::Turns { prefix_hit, .. } if !(0.0..=1.0).contains(&prefix_hit) => {
                Err(Error::parameter("prefix_hit", format!("{prefix_hit} must lie in [0, 1]")))
            }
            _ => Ok(()),
        }
    }

    /// The mean context length during decode.
    pub fn decode_context(&self) -> f64 {
        match *self {
            Workload::Decode { context } => context,
            Workload::Turns { isl, osl, .. } => isl + osl / 2.0,
        }
    }

    /// The longest context a request reaches (what the KV cache must hold).
    pub fn peak_context(&self) -> f64 {
        match *self {
            Workload::Decode { context } => context,
            Workload::Turns { isl, osl, .. } => isl + osl,
        }
    }

    /// A short label (`context 8192`, `isl 1024 / osl 1024`).
    pub fn label(&self) -> String {
        match *self {
            Workload::Decode { context } => format!("context {context}"),
            Workload::Turns { isl, osl, prefix_hit } if prefix_hit > 0.0 => {
                format!("isl {isl} / osl {osl}, prefix hit {prefix_hit}")
            }
            Workload::Turns { isl, osl, .. } => format!("isl {isl} / osl {osl}"),
        }
    }
}
