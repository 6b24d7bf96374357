//! Real acceptance beside the engines' synthetic schedules for the same pin: same mean, other shape
//! (docs/model.md §3) — and the rates pin that keeps the shape too.

use serde::Serialize;

use super::pin::{EngineSetting, RatesPin};
use super::schedule::{ScheduleKind, SyntheticSchedule};
use super::{Acceptance, Distribution};
use crate::engine::Engine;
use crate::error::Result;

/// What a pin means: the real chain and every engine's schedule for the pinned value.
#[derive(Debug, Clone, Serialize)]
pub struct PinAnalysis {
    /// Draft length.
    pub k: usize,
    /// Where the real acceptance came from (curve file and key, fit, or explicit rates).
    pub source: String,
    /// The pinned acceptance length.
    pub pinned_al: f64,
    /// The real per-position acceptance.
    pub real: RealAcceptance,
    /// Each synthetic schedule compared with the real distribution.
    pub schedules: Vec<ScheduleComparison>,
    /// The per-position rates pin compared in [`PinAnalysis::schedules`].
    pub rates_pin: RatesPin,
    /// How the engines that take rates spell that pin.
    pub rates_settings: Vec<EngineSetting>,
}

/// The real chain, with its derived views.
#[derive(Debug, Clone, Serialize)]
pub struct RealAcceptance {
    /// Mean tokens per step.
    pub acceptance_length: f64,
    /// p_1..p_k.
    pub unconditional: Vec<f64>,
    /// c_1..c_k.
    pub conditional: Vec<f64>,
    /// P(a = 0..k).
    pub distribution: Distribution,
    /// Var(a).
    pub variance: f64,
}

/// One synthetic schedule beside the real distribution.
#[derive(Debug, Clone, Serialize)]
pub struct ScheduleComparison {
    /// The schedule.
    pub schedule: SyntheticSchedule,
    /// Engines that use it.
    pub engines: Vec<Engine>,
    /// Whether one draw is shared by the whole batch.
    pub shared_across_batch: bool,
    /// Mean tokens per step the schedule really produces.
    pub mean_al: f64,
    /// Var(a) of the schedule.
    pub variance: f64,
    /// P(a = 0) of the schedule.
    pub p_zero: f64,
    /// Total variation distance to the real distribution.
    pub total_variation: f64,
    /// Real variance over synthetic variance (∞ when the schedule has none).
    pub variance_ratio: Option<f64>,
}

impl PinAnalysis {
    /// Compares `real` acceptance with every engine's length schedule for `pinned_al` and with `rates_pin`,
    /// at the real chain's k.
    ///
    /// # Errors
    /// As [`crate::units::check_al`] for the pin; [`crate::Error::Invalid`] when the rates pin has another k.
    pub fn new(
        real: &Acceptance,
        pinned_al: f64,
        rates_pin: &RatesPin,
        source: impl Into<String>,
    ) -> Result<PinAnalysis> {
        let k = real.k();
        if rates_pin.k() != k {
            return Err(crate::Error::invalid(
                "rates pin",
                format!("the rates pin has {} positions, the real chain {k}", rates_pin.k()),
            ));
        }
        let distribution = real.distribution();
        let schedules = SyntheticSchedule::all(pinned_al, rates_pin.chain())?
            .into_iter()
            .map(|schedule| {
                let d = &schedule.distribution;
                let variance = d.variance();
                ScheduleComparison {
                    engines: schedule.kind.engines().to_vec(),
                    shared_across_batch: schedule.kind.shared_across_batch(),
                    mean_al: d.acceptance_length(),
                    variance,
                    p_zero: d.p_zero(),
                    total_variation: d.total_variation(&distribution),
                    variance_ratio: (variance > 0.0).then(|| distribution.variance() / variance),
                    schedule,
                }
            })
            .collect();
        Ok(PinAnalysis {
            k,
            source: source.into(),
            pinned_al,
            real: RealAcceptance {
                acceptance_length: real.acceptance_length(),
                unconditional: real.unconditional().to_vec(),
                conditional: real.conditional(),
                variance: distribution.variance(),
                distribution,
            },
            schedules,
            rates_pin: rates_pin.clone(),
            rates_settings: rates_pin.settings(),
        })
    }

    /// The comparison for one schedule kind.
    pub fn schedule(&self, kind: ScheduleKind) -> Option<&ScheduleComparison> {
        self.schedules.iter().find(|s| s.schedule.kind == kind)
    }
}
