//! Monte Carlo of speculative decoding, request by request: what per-request latency looks like under real
//! acceptance versus an engine's pinned synthetic schedule with the same mean (docs/model.md §3–4).
//!
//! This module owns the simulation engine and the study `alsim simulate` runs with it:
//! - [`StepSampler`] draws one step's accepted count with one `u32` (alias table, `sampler`);
//! - [`RequestModel`] runs one request: its output length ([`OutputLengths`]), optional heterogeneity
//!   ([`Heterogeneity`]: a per-request log-odds scale on the conditional rates calibrated so the step-weighted
//!   mean reproduces the curve, plus optional Markov-switching phases) and the step loop (`request`);
//! - [`simulate_requests`] / [`simulate_totals`] run many requests in parallel, request i on its own stream
//!   ([`request_rng`]), so a seed gives identical results at any thread count (`run`);
//! - [`SourceSummary`] turns outcomes into means, standard errors and percentiles with order-statistic
//!   intervals (`summary`);
//! - [`steps_to_emit`] is the exact law of S_N, the steps to emit N tokens (`exact`);
//! - [`simulate_batches`] compares per-request draws with SGLang's per-batch shared draw (`batch`);
//! - [`Study`] puts them together: real versus pinned, side by side ([`SimReport`]).
//!
//! Definitions (docs/model.md §4): tokens per step X = a + 1; S_N = min{s : X_1 + … + X_s ≥ N}; per-request AL =
//! tokens produced / S_N; TPOT = step time · S_N / N; per-user speed = N / (step time · S_N). Renewal theory
//! gives E(S_N) ≈ N/AL and Var(S_N) ≈ N·Var(X)/AL³, which the exact mode computes without approximation.

pub(crate) mod batch;
pub(crate) mod exact;
pub(crate) mod request;
pub(crate) mod run;
pub(crate) mod sampler;
pub(crate) mod summary;

pub use batch::{BatchConfig, BatchSummary, Draws, simulate_batches};
pub use exact::{StepsDistribution, steps_to_emit};
pub use request::{Heterogeneity, OutputLengths, Phases, RequestModel, RequestOutcome, StepCounts};
pub use run::{RequestSample, RunConfig, StepTotals, simulate_requests, simulate_totals};
pub use sampler::{StepSampler, request_rng};
pub use summary::{Metric, Percentile, SourceSummary};

use serde::Serialize;

use crate::accept::schedule::{ScheduleKind, SyntheticSchedule};
use crate::accept::{Acceptance, Distribution, RatesPin};
use crate::error::{Error, Result};

/// The seed used when the user gives none (printed with every report).
pub const DEFAULT_SEED: u64 = 20_261_202;

/// Where a simulated source's acceptance comes from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum SourceKind {
    /// Real verification: the chain from the curve (or given rates), i.i.d. per request and step.
    Real,
    /// Real verification with requests that differ (docs/model.md §4).
    RealHeterogeneous,
    /// An engine's synthetic schedule for the pin.
    Pinned {
        /// The schedule.
        schedule: ScheduleKind,
    },
}

/// One simulated source and what it did.
#[derive(Debug, Clone, Serialize)]
pub struct SourceResult {
    /// Row label.
    pub label: String,
    /// Where its acceptance comes from.
    pub source: SourceKind,
    /// The per-step law it draws from (for heterogeneous requests, the base law before scaling).
    pub distribution: Distribution,
    /// Per-step and per-request statistics.
    pub summary: SourceSummary,
    /// Every request's TPOT in ms, request order (for plots; not serialised).
    #[serde(skip)]
    pub tpot_ms: Vec<f64>,
}

/// Exact versus Monte Carlo steps-to-N for one i.i.d. source.
#[derive(Debug, Clone, Serialize)]
pub struct ExactCheck {
    /// Row label.
    pub label: String,
    /// Output tokens N.
    pub output_tokens: u32,
    /// Exact E(S_N).
    pub exact_mean: f64,
    /// Exact SD(S_N).
    pub exact_sd: f64,
    /// Exact p50, p90, p99 of S_N.
    pub exact_percentiles: Vec<u64>,
    /// Probability the exact computation left out.
    pub truncated_mass: f64,
    /// Monte Carlo S_N with N fixed.
    pub monte_carlo: Metric,
    /// Whether every Monte Carlo interval (mean, p50, p90, p99) covers the exact value.
    pub agrees: bool,
}

/// One row of the batch comparison.
#[derive(Debug, Clone, Serialize)]
pub struct BatchRow {
    /// Row label.
    pub label: String,
    /// Where its acceptance comes from.
    pub source: SourceKind,
    /// Batch statistics.
    pub summary: BatchSummary,
}

/// What to simulate: the real chain, the pin, and the run's shape.
#[derive(Debug, Clone)]
pub struct Study {
    /// The real per-position acceptance.
    pub real: Acceptance,
    /// Where the real chain came from (file and key, or the flag).
    pub real_origin: String,
    /// Whether to simulate the real chain at all.
    pub include_real: bool,
    /// The pinned AL the length schedules honour.
    pub pinned_al: f64,
    /// The per-position rates the rates pin writes ([`ScheduleKind::RatesPin`]), at the real chain's k.
    pub rates_pin: RatesPin,
    /// Synthetic schedules to simulate (each per request, and in the batch section with its own sharing).
    pub schedules: Vec<ScheduleKind>,
    /// Heterogeneity of real requests; when active, real acceptance is shown both with and without it.
    pub heterogeneity: Heterogeneity,
    /// Output lengths.
    pub lengths: OutputLengths,
    /// Time of one verify step, ms.
    pub step_ms: f64,
    /// Requests and seed.
    pub run: RunConfig,
    /// Batch size for the shared-versus-per-request comparison, if wanted.
    pub batch: Option<u32>,
    /// N for the exact-versus-Monte-Carlo check, if wanted.
    pub exact_tokens: Option<u32>,
    /// Confidence level of every interval.
    pub level: f64,
}

/// Everything `alsim simulate` reports.
#[derive(Debug, Clone, Serialize)]
pub struct SimReport {
    /// Seed of every stream (rerun with it to reproduce).
    pub seed: u64,
    /// Requests per source.
    pub requests: u64,
    /// Draft length k.
    pub k: usize,
    /// Where the real chain came from.
    pub real_origin: String,
    /// Real AL of the chain.
    pub real_al: f64,
    /// Pinned AL.
    pub pinned_al: f64,
    /// The rates pin the rates-pin source draws from.
    pub rates_pin: RatesPin,
    /// Step time, ms.
    pub step_ms: f64,
    /// Output lengths.
    pub output_lengths: OutputLengths,
    /// Heterogeneity of real requests.
    pub heterogeneity: Heterogeneity,
    /// The calibrated log-odds shift of heterogeneous requests (0 without heterogeneity).
    pub calibrated_shift: f64,
    /// Confidence level.
    pub confidence_level: f64,
    /// Per-source results.
    pub sources: Vec<SourceResult>,
    /// Shared versus per-request draws at the batch size.
    pub batch: Vec<BatchRow>,
    /// Exact versus Monte Carlo steps-to-N.
    pub exact: Vec<ExactCheck>,
}

/// Most tokens one run simulates, summed over requests and sources: room for `--exact 100000` at the default
/// 100,000 requests (1.6·10¹¹ tokens, ~5 minutes of a debug build), while `--requests 100000000` (10¹²) or
/// 10⁴ requests of 10⁷ tokens, hours of work, are refused.
pub const MAX_SIMULATED_TOKENS: f64 = 2e11;

impl Study {
    /// Checks the study's parameters.
    ///
    /// # Errors
    /// [`Error::Parameter`] naming the parameter: step time not positive and finite, a level outside (0, 1), bad
    /// output lengths, heterogeneity or batch, a pin outside [1, k+1], more than [`MAX_SIMULATED_TOKENS`]
    /// tokens in all.
    pub fn validate(&self) -> Result<()> {
        if !(self.step_ms.is_finite() && self.step_ms > 0.0 && self.step_ms <= 1e6) {
            return Err(Error::parameter("step_ms", format!("{} must be a positive step time in ms", self.step_ms)));
        }
        crate::stats::z_two_sided(self.level)?;
        self.lengths.validated("output_len")?;
        self.heterogeneity.validated()?;
        crate::units::check_al(self.pinned_al, self.real.k(), "al").map_err(|e| e.for_parameter("al"))?;
        if self.rates_pin.k() != self.real.k() {
            return Err(Error::invalid(
                "rates pin",
                format!("{} rates for a real chain of k = {}", self.rates_pin.k(), self.real.k()),
            ));
        }
        if let Some(b) = self.batch {
            BatchConfig::new(b, self.run.requests, self.run.seed)?;
        }
        if let Some(n) = self.exact_tokens {
            OutputLengths::Fixed { tokens: n }.validated("exact")?;
        }
        if !self.include_real && self.schedules.is_empty() {
            return Err(Error::parameter("source", "no source selected"));
        }
        // Work grows with requests × tokens each; past the limit a run takes hours, so it is refused.
        let tokens = self.lengths.mean().max(self.exact_tokens.map_or(0.0, f64::from));
        let work = self.total_requests() as f64 * tokens;
        if work > MAX_SIMULATED_TOKENS {
            return Err(Error::parameter(
                "requests",
                format!(
                    "{} requests of ~{tokens:.0} tokens over every source make {work:.1e} simulated tokens, more than the {MAX_SIMULATED_TOKENS:.0e} one run takes; give fewer requests, or shorter outputs",
                    self.run.requests
                ),
            ));
        }
        Ok(())
    }

    /// Requests the whole study simulates (for progress bars).
    pub fn total_requests(&self) -> u64 {
        let het = self.include_real && self.heterogeneity.is_active();
        let iid = self.include_real as u64 + self.per_request_schedules().count() as u64;
        let sources = iid + het as u64;
        let exact = if self.exact_tokens.is_some() { iid } else { 0 };
        let batch = if self.batch.is_some() { self.batch_rows().len() as u64 } else { 0 };
        self.run.requests * (sources + exact + batch)
    }

    /// The i.i.d. sources: (label, kind, law).
    fn iid_sources(&self) -> Result<Vec<(String, SourceKind, Distribution)>> {
        let mut out = Vec::new();
        if self.include_real {
            out.push(("real".to_string(), SourceKind::Real, self.real.distribution()));
        }
        for &schedule in self.per_request_schedules() {
            let law = self.schedule(schedule)?;
            out.push((format!("pinned: {}", schedule.label()), SourceKind::Pinned { schedule }, law));
        }
        Ok(out)
    }

    /// The per-step law of `kind` for this study's pins.
    fn schedule(&self, kind: ScheduleKind) -> Result<Distribution> {
        Ok(SyntheticSchedule::pinned(kind, self.pinned_al, self.rates_pin.chain())?.distribution)
    }

    /// Schedules simulated request by request: SGLang match-expected draws per request exactly like the
    /// minimum-variance schedule, so it is left out when that one is present (it differs only in batches).
    fn per_request_schedules(&self) -> impl Iterator<Item = &ScheduleKind> {
        let both = self.schedules.contains(&ScheduleKind::MinVariance);
        self.schedules.iter().filter(move |s| !(both && **s == ScheduleKind::SglangMatchExpected))
    }

    fn batch_rows(&self) -> Vec<(String, Draws, Option<ScheduleKind>)> {
        let mut rows = Vec::new();
        if self.include_real {
            rows.push(("real (per-request draws)".to_string(), Draws::PerRequest, None));
        }
        for &s in &self.schedules {
            let draws = if s.shared_across_batch() { Draws::SharedByBatch } else { Draws::PerRequest };
            rows.push((format!("pinned: {}", s.label()), draws, Some(s)));
        }
        rows
    }

    /// Runs the study; `progress` is told how many requests each finished chunk held.
    ///
    /// # Errors
    /// As [`Study::validate`], and when heterogeneity cannot be calibrated.
    pub fn run(&self, progress: &(dyn Fn(u64) + Sync)) -> Result<SimReport> {
        self.validate()?;
        let k = self.real.k();
        let mut sources = Vec::new();
        let mut calibrated_shift = 0.0;
        for (label, kind, law) in self.iid_sources()? {
            let model = RequestModel::iid(StepSampler::new(&law), self.lengths);
            sources.push(self.source_result(label, kind, law, &model, progress)?);
            if kind == SourceKind::Real && self.heterogeneity.is_active() {
                let model = RequestModel::heterogeneous(&self.real, self.heterogeneity, self.lengths)?;
                calibrated_shift = model.shift();
                let label = "real, heterogeneous requests".to_string();
                let law = self.real.distribution();
                sources.push(self.source_result(label, SourceKind::RealHeterogeneous, law, &model, progress)?);
            }
        }
        let mut batch = Vec::new();
        if let Some(b) = self.batch {
            let config = BatchConfig::new(b, self.run.requests, self.run.seed)?;
            for (label, draws, schedule) in self.batch_rows() {
                let law = match schedule {
                    None => self.real.distribution(),
                    Some(s) => self.schedule(s)?,
                };
                let summary = simulate_batches(&StepSampler::new(&law), draws, self.lengths, config, self.level)?;
                progress(self.run.requests);
                let source = schedule.map_or(SourceKind::Real, |schedule| SourceKind::Pinned { schedule });
                batch.push(BatchRow { label, source, summary });
            }
        }
        let mut exact = Vec::new();
        if let Some(n) = self.exact_tokens {
            for (label, _, law) in self.iid_sources()? {
                exact.push(self.exact_check(label, &law, n, progress)?);
            }
        }
        Ok(SimReport {
            seed: self.run.seed,
            requests: self.run.requests,
            k,
            real_origin: self.real_origin.clone(),
            real_al: self.real.acceptance_length(),
            pinned_al: self.pinned_al,
            rates_pin: self.rates_pin.clone(),
            step_ms: self.step_ms,
            output_lengths: self.lengths,
            heterogeneity: self.heterogeneity,
            calibrated_shift,
            confidence_level: self.level,
            sources,
            batch,
            exact,
        })
    }

    fn source_result(
        &self,
        label: String,
        source: SourceKind,
        distribution: Distribution,
        model: &RequestModel,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<SourceResult> {
        let sample = simulate_requests(model, self.real.k(), self.run, progress);
        let summary = SourceSummary::new(&sample, self.step_ms, self.level)?;
        let tpot_ms = sample.outcomes.iter().map(|o| self.step_ms / o.tokens_per_step()).collect();
        Ok(SourceResult { label, source, distribution, summary, tpot_ms })
    }

    fn exact_check(
        &self,
        label: String,
        law: &Distribution,
        n: u32,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<ExactCheck> {
        let exact = steps_to_emit(law, n)?;
        let model = RequestModel::iid(StepSampler::new(law), OutputLengths::Fixed { tokens: n });
        let sample = simulate_requests(&model, law.k(), self.run, progress);
        let monte_carlo = Metric::from_values(sample.outcomes.iter().map(|o| o.steps as f64).collect(), self.level)?;
        let exact_percentiles: Vec<u64> = [0.5, 0.9, 0.99].iter().map(|&p| exact.quantile(p)).collect();
        let mean = exact.mean();
        let agrees = monte_carlo.mean.covers(mean)
            && [50.0, 90.0, 99.0]
                .iter()
                .zip(&exact_percentiles)
                .all(|(pct, &x)| monte_carlo.percentile(*pct).is_some_and(|e| e.covers(x as f64)));
        Ok(ExactCheck {
            label,
            output_tokens: n,
            exact_mean: mean,
            exact_sd: exact.variance().sqrt(),
            exact_percentiles,
            truncated_mass: exact.truncated_mass,
            monte_carlo,
            agrees,
        })
    }
}
