//! From simulated requests to reported statistics: per-step and per-request metrics, means with standard
//! errors, and percentiles with distribution-free confidence intervals.
//!
//! Percentile intervals use order statistics: the number of sample values below the true p-quantile is
//! Binomial(n, p), so the ranks np ± z·√(np(1−p)) bracket it with the stated coverage (normal approximation
//! to the binomial; e.g. Conover, *Practical Nonparametric Statistics*, 3rd ed., §3.2). The step-weighted mean
//! AL is a ratio of request totals; its standard error is the delta-method (linearisation) one, which treats
//! the request — not the step — as the independent unit.

use serde::Serialize;

use super::request::RequestOutcome;
use super::run::{RequestSample, StepTotals};
use crate::error::Result;
use crate::stats::{ConfidenceInterval, Estimate, z_two_sided};

/// Percentiles every metric reports (in percent): both tails and the median.
pub(crate) const PERCENTILES: [f64; 5] = [1.0, 10.0, 50.0, 90.0, 99.0];

/// One percentile with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Percentile {
    /// The percentile, in percent (99 = p99).
    pub percentile: f64,
    /// Point = the ⌈np⌉-th smallest value; interval from order statistics; standard error = half-width / z.
    pub estimate: Estimate,
}

/// The distribution of one per-request quantity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metric {
    /// Mean over requests, normal-theory interval.
    pub mean: Estimate,
    /// Standard deviation over requests.
    pub standard_deviation: f64,
    /// `PERCENTILES`, in order.
    pub percentiles: Vec<Percentile>,
}

impl Metric {
    /// Summarises `values` (at least one) at confidence `level`.
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] when `level` is not in (0, 1).
    ///
    /// ```
    /// let m = alsim::sim::Metric::from_values((1..=1000).map(f64::from).collect(), 0.95).unwrap();
    /// let p50 = m.percentile(50.0).unwrap();
    /// assert_eq!(p50.point_estimate, 500.0);
    /// assert!(p50.confidence_interval.lower_bound < 500.0 && p50.confidence_interval.upper_bound > 500.0);
    /// ```
    pub fn from_values(mut values: Vec<f64>, level: f64) -> Result<Metric> {
        let z = z_two_sided(level)?;
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let variance =
            if values.len() > 1 { values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
        values.sort_by(f64::total_cmp);
        let percentiles = PERCENTILES
            .iter()
            .map(|&pct| Percentile {
                percentile: pct,
                estimate: order_statistic_interval(&values, pct / 100.0, z, level),
            })
            .collect();
        Ok(Metric {
            mean: Estimate::normal(mean, (variance / n).sqrt(), level)?,
            standard_deviation: variance.sqrt(),
            percentiles,
        })
    }

    /// The estimate of percentile `pct` (one of `PERCENTILES`).
    pub fn percentile(&self, pct: f64) -> Option<&Estimate> {
        self.percentiles.iter().find(|p| p.percentile == pct).map(|p| &p.estimate)
    }
}

/// The p-quantile of sorted `values` with an order-statistic interval.
fn order_statistic_interval(sorted: &[f64], p: f64, z: f64, level: f64) -> Estimate {
    let n = sorted.len();
    let at = |rank: f64| sorted[(rank.max(1.0) as usize).min(n) - 1];
    let centre = (n as f64 * p).ceil();
    let half = z * (n as f64 * p * (1.0 - p)).sqrt();
    let lower = at((n as f64 * p - half).floor());
    let upper = at((n as f64 * p + half).ceil() + 1.0);
    Estimate {
        point_estimate: at(centre),
        standard_error: (upper - lower) / (2.0 * z),
        confidence_interval: ConfidenceInterval { lower_bound: lower, upper_bound: upper, confidence_level: level },
    }
}

/// What the steps of all requests did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepSummary {
    /// Steps simulated.
    pub steps: u64,
    /// Mean tokens per step over all steps (step-weighted AL), with a request-clustered standard error.
    pub tokens_per_step: Estimate,
    /// Variance of tokens per step over all steps.
    pub variance: f64,
    /// Observed share of steps accepting a = 0..k drafts.
    pub distribution: Vec<f64>,
}

/// Per-step and per-request statistics of one simulated source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceSummary {
    /// Requests simulated.
    pub requests: u64,
    /// Per step.
    pub per_step: StepSummary,
    /// Steps to finish, S_N.
    pub steps: Metric,
    /// Per-request acceptance length (tokens produced / steps).
    pub acceptance_length: Metric,
    /// Per-request output tokens per step, N / S_N.
    pub tokens_per_step: Metric,
    /// Time per output token, step time × S_N / N, in ms (docs/model.md §4).
    pub tpot_ms: Metric,
    /// Per-user decode speed, N / (step time × S_N), in tokens/s.
    pub tokens_per_second: Metric,
}

impl SourceSummary {
    /// Summarises `sample` for a step time of `step_ms` at confidence `level`.
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] when `level` is not in (0, 1).
    pub fn new(sample: &RequestSample, step_ms: f64, level: f64) -> Result<SourceSummary> {
        let metric =
            |f: &dyn Fn(&RequestOutcome) -> f64| Metric::from_values(sample.outcomes.iter().map(f).collect(), level);
        Ok(SourceSummary {
            requests: sample.totals.requests,
            per_step: step_summary(&sample.totals, &sample.outcomes, level)?,
            steps: metric(&|o| o.steps as f64)?,
            acceptance_length: metric(&RequestOutcome::acceptance_length)?,
            tokens_per_step: metric(&RequestOutcome::tokens_per_step)?,
            tpot_ms: metric(&|o| step_ms / o.tokens_per_step())?,
            tokens_per_second: metric(&|o| 1000.0 * o.tokens_per_step() / step_ms)?,
        })
    }
}

fn step_summary(totals: &StepTotals, outcomes: &[RequestOutcome], level: f64) -> Result<StepSummary> {
    let ratio = totals.tokens_per_step();
    let n = outcomes.len() as f64;
    let mean_steps = totals.steps as f64 / n;
    // Delta method for a ratio of sums: Var(R̂) ≈ Σ(e_i − R s_i)² / (n(n−1) s̄²).
    let residual: f64 = outcomes.iter().map(|o| (o.emitted as f64 - ratio * o.steps as f64).powi(2)).sum();
    let se = if n > 1.0 { (residual / (n * (n - 1.0))).sqrt() / mean_steps } else { 0.0 };
    let steps = totals.steps as f64;
    let distribution: Vec<f64> = totals.counts.iter().map(|&c| c as f64 / steps).collect();
    let second: f64 = distribution.iter().enumerate().map(|(a, q)| ((a + 1) as f64).powi(2) * q).sum();
    Ok(StepSummary {
        steps: totals.steps,
        tokens_per_step: Estimate::normal(ratio, se, level)?,
        variance: (second - ratio * ratio).max(0.0),
        distribution,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_statistic_interval_brackets_the_point() {
        let values: Vec<f64> = (0..100).map(f64::from).collect();
        let e = order_statistic_interval(&values, 0.99, 1.96, 0.95);
        assert_eq!(e.point_estimate, 98.0);
        assert!(e.confidence_interval.lower_bound <= 98.0 && e.confidence_interval.upper_bound == 99.0);
        let one = order_statistic_interval(&[5.0], 0.5, 1.96, 0.95);
        assert_eq!((one.point_estimate, one.standard_error), (5.0, 0.0));
    }
}
