//! One acceptance figure in every engine's spelling (`alsim convert`), and as the per-position rates each
//! length knob forces: the minimum-variance list (vLLM, ATOM, TensorRT-LLM) and llama.cpp's geometric one.

use serde::Serialize;

use super::Acceptance;
use crate::error::Result;
use crate::units::Spelling;

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
    /// As [`crate::units::check_al`].
    ///
    /// ```
    /// let c = alsim::accept::Conversion::new(2.83, 3).unwrap();
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
        let forced_rates = super::min_variance_chain(al, k)?.unconditional().to_vec();
        let geometric = super::geometric_chain(al, k)?;
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
    /// let c = alsim::accept::Conversion::from_rates(&rates).unwrap();
    /// assert!((c.acceptance_length - 2.83).abs() < 1e-12);
    /// assert!((c.geometric_p - 0.7724).abs() < 1e-4);
    /// ```
    ///
    /// # Errors
    /// As [`Conversion::new`].
    pub fn from_rates(rates: &Acceptance) -> Result<Conversion> {
        let given_rates = Some(rates.unconditional().to_vec());
        Ok(Conversion { given_rates, ..Conversion::new(rates.acceptance_length(), rates.k())? })
    }
}
