//! The engines' synthetic acceptance schedules: what a pinned throughput run really draws
//! (docs/engines.md#schedules, docs/model.md §3).
//!
//! A pin is either a mean (the length knobs) or a per-position rates list (the rates knobs). Each rule is a
//! [`ScheduleKind`]; [`SyntheticSchedule`] is its per-step distribution, which the comparison tables
//! (`super::compare`), the simulator ([`crate::sim`]) and the pin writer ([`super::pin`]) all take from here.
//!
//! | rule | engines | AL 2.83, k 3: p_1..p_3 | who shares a draw |
//! |---|---|---|---|
//! | [`ScheduleKind::MinVariance`] | vLLM, ATOM, TensorRT-LLM length knobs | 1, 0.83, 0 | nobody |
//! | [`ScheduleKind::SglangMatchExpected`] | SGLang (default method) | 1, 0.83, 0 | the whole batch |
//! | [`ScheduleKind::SglangMultinomial`] | SGLang legacy method; mean ≠ AL | — | the whole batch |
//! | [`ScheduleKind::LlamacppGeometric`] | llama.cpp `--spec-synth-len` | 0.772, 0.597, 0.461 | nobody |
//! | [`ScheduleKind::RatesPin`] | vLLM `synthetic_acceptance_rates`, llama.cpp `--spec-synth-rates` | the list itself | nobody |
//!
//! llama.cpp's length pin (PR ggml-org/llama.cpp#27711, `common_speculative_synth_rates_resolve` in
//! `common/speculative.cpp`) turns a length into one *constant conditional* rate p with
//! p + p² + … + p^K = L − 1, found by 32 bisection steps on [0, 1] (p = 1 at L = K + 1, p = 0 at L = 1), and
//! hands the unconditional rates p^i to the verifier, which converts them back to conditional ones and accepts
//! position i when a per-slot uniform is below c_i. K is the draft limit of the initialised speculative
//! implementation (`--spec-draft-n-max` for draft-model, EAGLE3 and MTP speculators). Same mean as the
//! minimum-variance schedule, a third shape: geometric, with every count 0..K possible.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use super::{Acceptance, Distribution, min_variance_chain};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::units::check_al;

/// Which synthetic rule a pinned run applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScheduleKind {
    /// p = [1,…,1, frac(AL − 1), 0,…], drawn independently per request and step
    /// (vLLM `synthetic_acceptance_length`, ATOM, TensorRT-LLM).
    MinVariance,
    /// SGLang `match-expected`: the same marginal, one draw per verify step shared by the whole batch.
    SglangMatchExpected,
    /// SGLang `multinomial`: round(clamp(Normal(AL, 1), 1, k+1)) per verify step; its mean is not AL.
    SglangMultinomial,
    /// llama.cpp `--spec-synth-len`: one constant conditional rate p at every position, p_i = p^i, drawn
    /// independently per request (slot) and step.
    LlamacppGeometric,
    /// An explicit list of unconditional per-position rates (vLLM `synthetic_acceptance_rates`, llama.cpp
    /// `--spec-synth-rates`), drawn independently per request and step; written from the golden curve's own
    /// chain it reproduces real acceptance.
    RatesPin,
}

impl ScheduleKind {
    /// Every schedule, in display order.
    pub const ALL: [ScheduleKind; 5] = [
        ScheduleKind::MinVariance,
        ScheduleKind::SglangMatchExpected,
        ScheduleKind::SglangMultinomial,
        ScheduleKind::LlamacppGeometric,
        ScheduleKind::RatesPin,
    ];

    /// The schedules an engine derives from a mean (every one but the rates pin).
    pub const FROM_LENGTH: [ScheduleKind; 4] = [
        ScheduleKind::MinVariance,
        ScheduleKind::SglangMatchExpected,
        ScheduleKind::SglangMultinomial,
        ScheduleKind::LlamacppGeometric,
    ];

    /// The engines that use this schedule.
    pub fn engines(self) -> &'static [Engine] {
        match self {
            ScheduleKind::MinVariance => &[Engine::Vllm, Engine::Atom, Engine::Trtllm],
            ScheduleKind::SglangMatchExpected | ScheduleKind::SglangMultinomial => &[Engine::Sglang],
            ScheduleKind::LlamacppGeometric => &[Engine::Llamacpp],
            ScheduleKind::RatesPin => &[Engine::Vllm, Engine::Llamacpp],
        }
    }

    /// A short label for tables.
    pub fn label(self) -> &'static str {
        match self {
            ScheduleKind::MinVariance => "vLLM/ATOM/TensorRT-LLM minimum variance",
            ScheduleKind::SglangMatchExpected => "SGLang match-expected",
            ScheduleKind::SglangMultinomial => "SGLang multinomial",
            ScheduleKind::LlamacppGeometric => "llama.cpp length (geometric)",
            ScheduleKind::RatesPin => "rates pin (vLLM, llama.cpp)",
        }
    }

    /// Whether every request in a batch shares the step's draw.
    pub fn shared_across_batch(self) -> bool {
        matches!(self, ScheduleKind::SglangMatchExpected | ScheduleKind::SglangMultinomial)
    }

    /// The schedule a given engine applies by default when pinned with a length.
    pub fn for_engine(engine: Engine) -> ScheduleKind {
        match engine {
            Engine::Sglang => ScheduleKind::SglangMatchExpected,
            Engine::Llamacpp => ScheduleKind::LlamacppGeometric,
            Engine::Vllm | Engine::Atom | Engine::Trtllm => ScheduleKind::MinVariance,
        }
    }
}

/// One synthetic schedule for a pin: the per-step distribution of accepted drafts and how draws are shared.
#[derive(Debug, Clone, Serialize)]
pub struct SyntheticSchedule {
    /// The rule.
    pub kind: ScheduleKind,
    /// The acceptance length the engine was given (for a rates pin, the one its rates imply, 1 + Σ r_i).
    pub pinned_al: f64,
    /// Per-step distribution of accepted drafts (per request for independent schedules, per batch step
    /// for shared ones).
    pub distribution: Distribution,
    /// What a reader must know about this schedule (sharing, bias).
    pub note: String,
}

impl SyntheticSchedule {
    /// The schedule length rule `kind` produces for pin `al` at draft length `k`.
    ///
    /// # Errors
    /// As [`check_al`]; [`Error::Invalid`] for [`ScheduleKind::RatesPin`], which is given by its rates, not by
    /// a length (see [`SyntheticSchedule::rates_pin`]).
    ///
    /// ```
    /// use alsim::accept::schedule::{ScheduleKind, SyntheticSchedule};
    /// let s = SyntheticSchedule::new(ScheduleKind::SglangMultinomial, 2.83, 3).unwrap();
    /// assert!((s.distribution.acceptance_length() - 2.789).abs() < 1e-3);
    /// ```
    pub fn new(kind: ScheduleKind, al: f64, k: usize) -> Result<Self> {
        check_al(al, k, "pinned acceptance length")?;
        let (distribution, note) = match kind {
            ScheduleKind::MinVariance => {
                (min_variance_chain(al, k)?.distribution(), "independent draw per request and step".to_string())
            }
            ScheduleKind::SglangMatchExpected => (
                min_variance_chain(al, k)?.distribution(),
                "one draw per verify step shared by the whole batch: every request emits the same length".to_string(),
            ),
            ScheduleKind::SglangMultinomial => {
                let d = multinomial_distribution(al, k);
                let note = format!(
                    "one Normal(AL, 1) draw per verify step shared by the batch, clamped and rounded: mean AL {:.3}, biased by {:+.3}",
                    d.acceptance_length(),
                    d.acceptance_length() - al
                );
                (d, note)
            }
            ScheduleKind::LlamacppGeometric => {
                let chain = geometric_chain(al, k)?;
                let note = format!(
                    "constant conditional rate p = {:.4} at every position (p + … + p^{k} = AL − 1), independent draw per request and step",
                    chain.unconditional()[0]
                );
                (chain.distribution(), note)
            }
            ScheduleKind::RatesPin => {
                return Err(Error::invalid(
                    "schedule",
                    "a rates pin is given by its per-position rates, not by a length",
                ));
            }
        };
        Ok(SyntheticSchedule { kind, pinned_al: al, distribution, note })
    }

    /// The schedule of a rates pin: the unconditional rates as given, drawn independently per request and
    /// step (vLLM converts them to conditional rates c_i = p_i / p_{i−1}, llama.cpp likewise).
    pub fn rates_pin(rates: &Acceptance) -> Self {
        SyntheticSchedule {
            kind: ScheduleKind::RatesPin,
            pinned_al: rates.acceptance_length(),
            distribution: rates.distribution(),
            note: "the per-position unconditional rates as written, independent draw per request and step".into(),
        }
    }

    /// The schedule `kind` for a benchmark that pins mean `al` on the length knobs and `rates` on the rates
    /// knobs, at the rates' draft length.
    ///
    /// # Errors
    /// As [`check_al`] for `al` at that k.
    pub fn pinned(kind: ScheduleKind, al: f64, rates: &Acceptance) -> Result<Self> {
        match kind {
            ScheduleKind::RatesPin => Ok(Self::rates_pin(rates)),
            _ => Self::new(kind, al, rates.k()),
        }
    }

    /// Every schedule for a benchmark pinned at mean `al` and per-position `rates`.
    ///
    /// # Errors
    /// As [`check_al`].
    pub fn all(al: f64, rates: &Acceptance) -> Result<Vec<Self>> {
        ScheduleKind::ALL.iter().map(|&kind| Self::pinned(kind, al, rates)).collect()
    }
}

/// llama.cpp's chain for length pin `al` at draft length `k`: unconditional p_i = p^i with one constant
/// conditional rate p solving p + p² + … + p^k = AL − 1, found as the engine finds it (32 bisection steps on
/// [0, 1], so the mean is exact to k(k+1)/2 · 2⁻³³).
///
/// # Errors
/// As [`check_al`].
///
/// ```
/// // llama.cpp's own test: L = 3.4 over K = 4 positions.
/// let c = alsim::accept::geometric_chain(3.4, 4).unwrap();
/// assert!((c.unconditional()[0] - 0.80581).abs() < 1e-5);
/// assert!((c.acceptance_length() - 3.4).abs() < 1e-8);
/// ```
pub fn geometric_chain(al: f64, k: usize) -> Result<Acceptance> {
    check_al(al, k, "acceptance length")?;
    let target = al - 1.0;
    let sum = |p: f64| (1..=k).fold((0.0, 1.0), |(sum, term), _| (sum + term * p, term * p)).0;
    let p = if al >= k as f64 + 1.0 {
        1.0
    } else if al <= 1.0 {
        0.0
    } else {
        let (mut low, mut high) = (0.0, 1.0);
        for _ in 0..32 {
            let mid = 0.5 * (low + high);
            if sum(mid) < target {
                low = mid;
            } else {
                high = mid;
            }
        }
        0.5 * (low + high)
    };
    Acceptance::from_conditional(&vec![p; k], "geometric schedule")
}

/// SGLang `multinomial`: L = round(clamp(x, 1, k+1)), x ~ Normal(AL, 1); returns the law of a = L − 1.
fn multinomial_distribution(al: f64, k: usize) -> Distribution {
    let normal = Normal::new(al, 1.0).expect("unit standard deviation is valid");
    let cdf = |x: f64| normal.cdf(x);
    let top = k + 1;
    let probabilities: Vec<f64> = (1..=top)
        .map(|len| {
            let lo = if len == 1 { 0.0 } else { cdf(len as f64 - 0.5) };
            let hi = if len == top { 1.0 } else { cdf(len as f64 + 0.5) };
            (hi - lo).max(0.0)
        })
        .collect();
    Distribution::from_weights(&probabilities, "multinomial schedule")
        .expect("normal CDF differences are a distribution")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multinomial_matches_engines_md() {
        let d = multinomial_distribution(2.83, 3);
        let want = [0.092, 0.279, 0.378, 0.251];
        for (got, want) in d.probabilities().iter().zip(want) {
            assert!((got - want).abs() < 1e-3, "{got} vs {want}");
        }
        assert!((d.variance() - 0.853).abs() < 1e-3);
    }

    #[test]
    fn engine_defaults() {
        assert_eq!(ScheduleKind::for_engine(Engine::Atom), ScheduleKind::MinVariance);
        assert!(ScheduleKind::for_engine(Engine::Sglang).shared_across_batch());
        assert_eq!(ScheduleKind::for_engine(Engine::Llamacpp), ScheduleKind::LlamacppGeometric);
        assert!(!ScheduleKind::RatesPin.shared_across_batch());
    }

    #[test]
    fn geometric_matches_llamacpp_test_values() {
        // llama.cpp tests/test-arg-parser.cpp: synth_len 3.4 at n_max 4.
        let c = geometric_chain(3.4, 4).unwrap();
        for (got, want) in c.unconditional().iter().zip([0.80581, 0.64933, 0.52323, 0.42163]) {
            assert!((got - want).abs() < 1e-5, "{got} vs {want}");
        }
        assert_eq!(geometric_chain(1.0, 4).unwrap().unconditional(), &[0.0; 4]);
        assert_eq!(geometric_chain(5.0, 4).unwrap().unconditional(), &[1.0; 4]);
        assert!(geometric_chain(5.1, 4).is_err());
        // The seed: AL 2.83 at k = 3, the conditional rate is constant.
        let seed = geometric_chain(2.83, 3).unwrap();
        let c = seed.conditional();
        assert!(c.windows(2).all(|w| (w[0] - w[1]).abs() < 1e-12), "{c:?}");
        assert!((c[0] - 0.7724).abs() < 1e-4, "{c:?}");
        assert!((seed.acceptance_length() - 2.83).abs() < 1e-8);
    }

    #[test]
    fn a_rates_pin_is_not_a_length_rule() {
        assert!(SyntheticSchedule::new(ScheduleKind::RatesPin, 2.83, 3).is_err());
        let rates = Acceptance::from_unconditional(vec![0.78, 0.60, 0.45], "r").unwrap();
        let s = SyntheticSchedule::pinned(ScheduleKind::RatesPin, 2.83, &rates).unwrap();
        assert_eq!(s.distribution, rates.distribution());
        assert_eq!(SyntheticSchedule::all(2.83, &rates).unwrap().len(), ScheduleKind::ALL.len());
    }
}
