//! The engines' synthetic acceptance schedules: what a pinned throughput run really draws
//! (engines.md §1–4, model.md §3).
//!
//! All four engines honour a pin with the same per-step marginal — the minimum-variance chain of
//! [`min_variance_chain`] — except SGLang's legacy `multinomial` method. They differ in who shares a draw:
//! vLLM, ATOM and TensorRT-LLM draw per request and step; SGLang `match-expected` draws one length per
//! verify step for the whole batch.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use super::{Distribution, min_variance_chain};
use crate::engine::Engine;
use crate::error::Result;
use crate::units::check_al;

/// Which synthetic rule an engine applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScheduleKind {
    /// p = [1,…,1, frac(AL − 1), 0,…], drawn independently per request and step
    /// (vLLM `synthetic`, ATOM, TensorRT-LLM).
    MinVariance,
    /// SGLang `match-expected`: the same marginal, one draw per verify step shared by the whole batch.
    SglangMatchExpected,
    /// SGLang `multinomial`: round(clamp(Normal(AL, 1), 1, k+1)) per verify step; its mean is not AL.
    SglangMultinomial,
}

impl ScheduleKind {
    /// Every schedule, in display order.
    pub const ALL: [ScheduleKind; 3] =
        [ScheduleKind::MinVariance, ScheduleKind::SglangMatchExpected, ScheduleKind::SglangMultinomial];

    /// The engines that use this schedule.
    pub fn engines(self) -> &'static [Engine] {
        match self {
            ScheduleKind::MinVariance => &[Engine::Vllm, Engine::Atom, Engine::Trtllm],
            ScheduleKind::SglangMatchExpected | ScheduleKind::SglangMultinomial => &[Engine::Sglang],
        }
    }

    /// A short label for tables.
    pub fn label(self) -> &'static str {
        match self {
            ScheduleKind::MinVariance => "vLLM/ATOM/TensorRT-LLM minimum variance",
            ScheduleKind::SglangMatchExpected => "SGLang match-expected",
            ScheduleKind::SglangMultinomial => "SGLang multinomial",
        }
    }

    /// Whether every request in a batch shares the step's draw.
    pub fn shared_across_batch(self) -> bool {
        !matches!(self, ScheduleKind::MinVariance)
    }

    /// The schedule a given engine applies by default when pinned.
    pub fn for_engine(engine: Engine) -> ScheduleKind {
        match engine {
            Engine::Sglang => ScheduleKind::SglangMatchExpected,
            _ => ScheduleKind::MinVariance,
        }
    }
}

/// One engine's synthetic schedule for a pin: the per-step distribution of accepted drafts and how
/// draws are shared.
#[derive(Debug, Clone, Serialize)]
pub struct SyntheticSchedule {
    /// The rule.
    pub kind: ScheduleKind,
    /// The pinned acceptance length the engine was given.
    pub pinned_al: f64,
    /// Per-step distribution of accepted drafts (per request for independent schedules, per batch step
    /// for shared ones).
    pub distribution: Distribution,
    /// What a reader must know about this schedule (sharing, bias).
    pub note: String,
}

impl SyntheticSchedule {
    /// The schedule `kind` produces for pin `al` at draft length `k`.
    ///
    /// # Errors
    /// As [`check_al`].
    ///
    /// ```
    /// use alsim::accept::schedule::{ScheduleKind, SyntheticSchedule};
    /// let s = SyntheticSchedule::new(ScheduleKind::SglangMultinomial, 2.83, 3).unwrap();
    /// assert!((s.distribution.acceptance_length() - 2.789).abs() < 1e-3);
    /// ```
    pub fn new(kind: ScheduleKind, al: f64, k: usize) -> Result<Self> {
        check_al(al, k, "pinned acceptance length")?;
        let distribution = match kind {
            ScheduleKind::MinVariance | ScheduleKind::SglangMatchExpected => min_variance_chain(al, k)?.distribution(),
            ScheduleKind::SglangMultinomial => multinomial_distribution(al, k),
        };
        let note = match kind {
            ScheduleKind::MinVariance => "independent draw per request and step".to_string(),
            ScheduleKind::SglangMatchExpected => {
                "one draw per verify step shared by the whole batch: every request emits the same length".to_string()
            }
            ScheduleKind::SglangMultinomial => format!(
                "one Normal(AL, 1) draw per verify step shared by the batch, clamped and rounded: mean AL {:.3}, biased by {:+.3}",
                distribution.acceptance_length(),
                distribution.acceptance_length() - al
            ),
        };
        Ok(SyntheticSchedule { kind, pinned_al: al, distribution, note })
    }

    /// Every engine schedule for pin `al` at draft length `k`.
    ///
    /// # Errors
    /// As [`check_al`].
    pub fn all(al: f64, k: usize) -> Result<Vec<Self>> {
        ScheduleKind::ALL.iter().map(|&kind| Self::new(kind, al, k)).collect()
    }
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
    }
}
