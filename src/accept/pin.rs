//! A pin that carries the real shape: the golden curve's own per-position chain written as a rates list, and
//! how the engines that take one spell it.
//!
//! A length pin keeps the golden mean but forces its own shape (minimum variance, or llama.cpp's geometric
//! one, see [`super::schedule`]). Two engines take the unconditional per-position rates p_1..p_k instead:
//!
//! - **vLLM** (PR vllm-project/vllm#40662, `vllm/config/speculative.py`): `"synthetic_acceptance_rates":
//!   [p_1, …, p_k]` in the speculative config with `"rejection_sample_method": "synthetic"`. Entry i is the
//!   marginal probability that the first i drafts are all accepted; the list must have
//!   `num_speculative_tokens` entries, each in [0, 1], non-increasing; mutually exclusive with
//!   `synthetic_acceptance_length`. vLLM-Ascend's MRV2 sampler honours it too (vllm-project/vllm-ascend#15556).
//! - **llama.cpp** (PR ggml-org/llama.cpp#27711, merged 2026-08): `--spec-synth-rates P0,P1,…`, "comma-separated
//!   unconditional per-position synthetic acceptance probabilities (benchmarking only)", env
//!   `LLAMA_ARG_SPEC_SYNTH_RATES`; the length knob is `--spec-synth-len L` (`LLAMA_ARG_SPEC_SYNTH_LEN`). The two
//!   are mutually exclusive. `common_speculative_synth_rates_resolve` requires exactly K entries (K = the draft
//!   limit of the initialised speculative implementation, `--spec-draft-n-max` for draft-model, EAGLE3 and MTP
//!   speculators), each finite in [0, 1], non-increasing; the server converts them to conditional rates
//!   c_i = p_i / p_{i−1} (0 after a 0) and accepts position i when a per-slot `std::mt19937` uniform (seeded
//!   from the request's seed, else at random) is below c_i; a drafted end-of-generation token is never
//!   accepted. The PR's description named the flags `--spec-synthetic-acceptance-length` and
//!   `--spec-synthetic-acceptance-rates`; the merged code and the `--help` of released builds spell them
//!   `--spec-synth-len` and `--spec-synth-rates`, so a reader of recipes should accept both spellings.
//!
//! [`RatesPin::from_curve`] derives the list for a curve at k: the curve's increments p_i = AL(i) − AL(i−1)
//! where they form a valid chain, else the concave fit held through the golden AL(k)
//! ([`super::fit::concave_through`]), so the pin keeps the golden mean the pin checks demand. Rates are
//! written with at most [`RATE_DECIMALS`] decimals, and the pin's own chain is the written one, so what
//! alsim simulates is what the engine is given.

use serde::Serialize;

use super::Acceptance;
use super::fit::{FitKind, concave_through};
use crate::curve::Curve;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::units::check_al;

/// The most decimals a written rate carries: golden curves have two, fitted chains are cut at four (the
/// implied AL then moves by at most k · 5·10⁻⁵, far inside the ±0.005 a pin is checked to).
pub const RATE_DECIMALS: i32 = 4;

/// Where a rates pin's chain came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "from", rename_all = "kebab-case")]
pub enum Derivation {
    /// The golden curve's own increments p_i = AL(i) − AL(i−1), which form a valid chain.
    Increments {
        /// The curve's key path.
        curve: String,
    },
    /// A fit, because the increments are not a valid chain.
    Fitted {
        /// The curve's key path.
        curve: String,
        /// The fit used.
        fit: FitKind,
        /// Why the increments could not be used.
        reason: String,
    },
    /// A chain given as it is (explicit rates, or a fitted real chain where the curve cannot shape a pin).
    Given {
        /// Where it came from.
        origin: String,
    },
}

/// Per-position unconditional rates to pin, as written.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RatesPin {
    /// The rates as written (at most [`RATE_DECIMALS`] decimals), as a chain.
    #[serde(rename = "rates", serialize_with = "unconditional_rates")]
    chain: Acceptance,
    /// Where they came from.
    derivation: Derivation,
    /// The acceptance length of the chain before its rates were cut to [`RATE_DECIMALS`].
    chain_al: f64,
}

/// One engine's spelling of a pin, one line per flag, variable or JSON fragment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineSetting {
    /// The engine.
    pub engine: Engine,
    /// The setting, ready to paste.
    pub lines: Vec<String>,
}

impl RatesPin {
    /// The rates pin for `curve` at draft length `k`: its increments where they are a valid chain, else the
    /// concave fit held through AL(k).
    ///
    /// # Errors
    /// [`Error::Lookup`] when the curve has no golden value at `k`; [`Error::Invalid`] when the increments are
    /// not a chain and the curve has no point below `k` to fit one with.
    ///
    /// ```
    /// use alsim::accept::RatesPin;
    /// use alsim::curve::CurveFile;
    /// let file = CurveFile::parse("m:\n  thinking_on:\n    1: 1.78\n    2: 2.38\n    3: 2.83\n", "f", "f")?;
    /// let pin = RatesPin::from_curve(&file.curves[0], 3)?;
    /// assert_eq!(pin.list(", "), "0.78, 0.60, 0.45");
    /// # Ok::<(), alsim::Error>(())
    /// ```
    pub fn from_curve(curve: &Curve, k: usize) -> Result<RatesPin> {
        curve.al(k)?;
        let name = curve.name();
        match curve.increments(k).and_then(|p| Acceptance::from_unconditional(p, "increments")) {
            Ok(chain) => Ok(Self::written(&chain, Derivation::Increments { curve: name })),
            Err(raw) => {
                let chain = concave_through(curve, k).map_err(|fit| {
                    Error::invalid(curve.field(k), format!("no rates pin: {raw}; and the fit failed: {fit}"))
                })?;
                let reason = raw.to_string();
                Ok(Self::written(&chain, Derivation::Fitted { curve: name, fit: FitKind::Concave, reason }))
            }
        }
    }

    /// A rates pin that writes `chain` as it is.
    pub fn given(chain: &Acceptance, origin: impl Into<String>) -> RatesPin {
        Self::written(chain, Derivation::Given { origin: origin.into() })
    }

    fn written(chain: &Acceptance, derivation: Derivation) -> RatesPin {
        let scale = 10f64.powi(RATE_DECIMALS);
        // Rounding is monotone, so the cut rates are still a non-increasing list in [0, 1].
        let rates = chain.unconditional().iter().map(|p| (p * scale).round() / scale).collect();
        let written = Acceptance::from_unconditional(rates, "rates pin").expect("rounding keeps a chain a chain");
        RatesPin { chain: written, derivation, chain_al: chain.acceptance_length() }
    }

    /// The written rates as a chain.
    pub fn chain(&self) -> &Acceptance {
        &self.chain
    }

    /// The written rates p_1..p_k.
    pub fn rates(&self) -> &[f64] {
        self.chain.unconditional()
    }

    /// The draft length k.
    pub fn k(&self) -> usize {
        self.chain.k()
    }

    /// The acceptance length the written rates imply, 1 + Σ p_i.
    pub fn implied_al(&self) -> f64 {
        self.chain.acceptance_length()
    }

    /// The acceptance length of the chain before its rates were cut to [`RATE_DECIMALS`].
    pub fn chain_al(&self) -> f64 {
        self.chain_al
    }

    /// Where the rates came from.
    pub fn derivation(&self) -> &Derivation {
        &self.derivation
    }

    /// One sentence on where the rates came from, for reports.
    pub fn describe(&self) -> String {
        match &self.derivation {
            Derivation::Increments { curve } => {
                format!("the golden increments AL(i) − AL(i−1) of {curve} (a valid chain)")
            }
            Derivation::Fitted { curve, fit, reason } => format!(
                "the {fit} fit of {curve} AL(1..{k}) held through AL({k}), because the increments are not usable: {reason}",
                k = self.k()
            ),
            Derivation::Given { origin } => format!("the chain of {origin}"),
        }
    }

    /// The rates as written, joined by `separator` ("0.78,0.60,0.45" for llama.cpp, "0.78, 0.60, 0.45" for JSON).
    pub fn list(&self, separator: &str) -> String {
        self.rates().iter().map(|&p| rate_text(p)).collect::<Vec<_>>().join(separator)
    }

    /// How `engine` takes this pin, with the draft length it must run at.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `engine` for an engine without a rates knob (SGLang, TensorRT-LLM, ATOM).
    ///
    /// ```
    /// use alsim::accept::{Acceptance, RatesPin};
    /// use alsim::engine::Engine;
    /// let pin = RatesPin::given(&Acceptance::from_unconditional(vec![0.78, 0.6, 0.45], "r")?, "seed");
    /// assert_eq!(pin.setting(Engine::Llamacpp)?.lines, ["--spec-draft-n-max 3", "--spec-synth-rates 0.78,0.60,0.45"]);
    /// assert!(pin.setting(Engine::Vllm)?.lines[0].ends_with("\"synthetic_acceptance_rates\": [0.78, 0.60, 0.45]"));
    /// assert!(pin.setting(Engine::Atom).is_err());
    /// # Ok::<(), alsim::Error>(())
    /// ```
    pub fn setting(&self, engine: Engine) -> Result<EngineSetting> {
        let k = self.k();
        let lines = match engine {
            Engine::Vllm => vec![format!(
                "\"num_speculative_tokens\": {k}, \"rejection_sample_method\": \"synthetic\", \"synthetic_acceptance_rates\": [{}]",
                self.list(", ")
            )],
            Engine::Llamacpp => vec![draft_limit_flag(k), format!("--spec-synth-rates {}", self.list(","))],
            Engine::Sglang | Engine::Trtllm | Engine::Atom => {
                return Err(Error::invalid(
                    "engine",
                    format!(
                        "{} takes only a mean acceptance length, not per-position rates; pin the mean, or use vllm or llamacpp",
                        engine.display_name()
                    ),
                ));
            }
        };
        Ok(EngineSetting { engine, lines })
    }

    /// The spelling of this pin for every engine that takes rates.
    pub fn settings(&self) -> Vec<EngineSetting> {
        Engine::ALL.iter().filter(|e| e.takes_rates()).filter_map(|&e| self.setting(e).ok()).collect()
    }
}

/// A rates pin in one engine's spelling, with the golden value it keeps and where its rates came from
/// (`alsim pin --shape real`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RatesSetting {
    /// The engine.
    pub engine: Engine,
    /// Draft length.
    pub k: usize,
    /// The golden acceptance length the rates keep.
    pub golden_al: f64,
    /// Where the golden value came from (file and key).
    pub source: String,
    /// The rates as written and their derivation.
    #[serde(flatten)]
    pub pin: RatesPin,
    /// The acceptance length the written rates imply, 1 + Σ p_i.
    pub implied_al: f64,
    /// [`RatesPin::describe`].
    pub provenance: String,
    /// The setting, ready to paste.
    pub lines: Vec<String>,
}

impl RatesSetting {
    /// `pin`, derived for a golden `golden_al` from `source`, as `engine` takes it.
    ///
    /// # Errors
    /// As [`RatesPin::setting`]: an engine without a rates knob.
    pub fn new(pin: RatesPin, engine: Engine, golden_al: f64, source: impl Into<String>) -> Result<RatesSetting> {
        let lines = pin.setting(engine)?.lines;
        Ok(RatesSetting {
            engine,
            k: pin.k(),
            golden_al,
            source: source.into(),
            implied_al: pin.implied_al(),
            provenance: pin.describe(),
            pin,
            lines,
        })
    }
}

fn unconditional_rates<S: serde::Serializer>(
    chain: &Acceptance,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    chain.unconditional().serialize(serializer)
}

/// llama.cpp's length pin: `--spec-synth-len AL` at draft limit `k` (which llama.cpp turns into the geometric
/// schedule, [`super::geometric_chain`]).
///
/// # Errors
/// As [`check_al`].
///
/// ```
/// let lines = alsim::accept::pin::llamacpp_length_setting(2.83, 3)?;
/// assert_eq!(lines, ["--spec-draft-n-max 3", "--spec-synth-len 2.83"]);
/// # Ok::<(), alsim::Error>(())
/// ```
pub fn llamacpp_length_setting(al: f64, k: usize) -> Result<Vec<String>> {
    check_al(al, k, "golden AL")?;
    let length = format!("{al:.4}");
    Ok(vec![draft_limit_flag(k), format!("--spec-synth-len {}", length.trim_end_matches('0').trim_end_matches('.'))])
}

/// llama.cpp resolves K, the length of every synthetic schedule, from the speculative implementation's draft
/// limit, so the pin states it.
fn draft_limit_flag(k: usize) -> String {
    format!("--spec-draft-n-max {k}")
}

/// A rate with at least two and at most [`RATE_DECIMALS`] decimals: 0.60, 0.7724, 1.00.
pub fn rate_text(p: f64) -> String {
    let text = format!("{p:.*}", RATE_DECIMALS as usize);
    let trimmed = text.trim_end_matches('0');
    let decimals = trimmed.len() - trimmed.find('.').expect("a fixed-point number has a point") - 1;
    if decimals >= 2 { trimmed.to_string() } else { format!("{p:.2}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::ThinkingMode;

    fn curve(values: &[f64]) -> Curve {
        Curve::new("m", ThinkingMode::On, values.iter().enumerate().map(|(i, &al)| (i + 1, al)).collect()).unwrap()
    }

    #[test]
    fn the_seed_writes_its_own_increments() {
        let pin = RatesPin::from_curve(&curve(&[1.78, 2.38, 2.83, 3.11]), 3).unwrap();
        assert_eq!(pin.rates(), &[0.78, 0.60, 0.45]);
        assert!(matches!(pin.derivation(), Derivation::Increments { .. }));
        assert!((pin.implied_al() - 2.83).abs() < 1e-12);
        assert_eq!(pin.settings().len(), 2);
    }

    #[test]
    fn a_dip_is_fitted_through_the_golden_mean() {
        let dip = curve(&[1.92, 2.61, 2.97, 3.00, 3.10, 3.16, 3.00, 3.11]);
        let pin = RatesPin::from_curve(&dip, 7).unwrap();
        let Derivation::Fitted { fit, reason, .. } = pin.derivation() else { panic!("{:?}", pin.derivation()) };
        assert_eq!(*fit, FitKind::Concave);
        assert!(reason.contains("never increase") || reason.contains("not a probability"), "{reason}");
        assert!((pin.chain_al() - 3.00).abs() < 1e-6);
        assert!((pin.implied_al() - 3.00).abs() <= 7.0 * 0.5e-4 + 1e-12);
        assert!(pin.describe().contains("concave fit"), "{}", pin.describe());
        assert!(RatesPin::from_curve(&dip, 9).is_err(), "no golden value at k = 9");
    }

    #[test]
    fn rates_are_written_with_two_to_four_decimals() {
        assert_eq!(rate_text(0.6), "0.60");
        assert_eq!(rate_text(1.0), "1.00");
        assert_eq!(rate_text(0.0), "0.00");
        assert_eq!(rate_text(0.123456), "0.1235");
        assert_eq!(rate_text(0.125), "0.125");
        assert_eq!(llamacpp_length_setting(3.0, 3).unwrap()[1], "--spec-synth-len 3");
        assert!(llamacpp_length_setting(4.5, 3).is_err());
    }
}
