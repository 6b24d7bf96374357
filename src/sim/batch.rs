//! Requests batched together: SGLang's `match-expected` (and `multinomial`) schedule draws one accepted
//! length per verify step for the whole batch (docs/engines.md#sglang-match-expected-match-expected,
//! docs/model.md §3), so requests of one batch move in lock-step, while real verification and the other
//! engines draw per request. This module measures what that sharing does: the correlation of per-request
//! tokens/step within a batch, the design effect on a batch's mean (Kish, *Survey Sampling*, 1965:
//! deff = 1 + (B − 1)ρ), and how much a batch's measured AL varies.
//!
//! A batch is B requests that start together; a step's draw applies to every request still running. Request
//! j of batch b takes its output length from stream b·B + j — the same lengths under either kind of draw
//! (common random numbers) — and shared draws continue on stream b·B.

use rand::Rng;
use rayon::prelude::*;
use serde::Serialize;

use super::request::OutputLengths;
use super::sampler::{StepSampler, request_rng};
use crate::error::{Error, Result};
use crate::stats::Estimate;

/// The largest batch simulated.
pub(crate) const MAX_BATCH: u32 = 4096;

/// Who shares a step's draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Draws {
    /// Each request draws its own accepted count per step (real verification, vLLM, ATOM, TensorRT-LLM).
    PerRequest,
    /// One draw per verify step for the whole batch (SGLang's synthetic schedules).
    SharedByBatch,
}

/// Batch size and count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BatchConfig {
    /// Requests per batch, B.
    pub batch: u32,
    /// Batches simulated.
    pub batches: u64,
    /// Seed of every stream.
    pub seed: u64,
}

impl BatchConfig {
    /// Checks the sizes.
    ///
    /// # Errors
    /// [`Error::Parameter`] naming `batch` when B is 0 or above `MAX_BATCH`, or when fewer than 2 batches
    /// fit in `requests` (no between-batch variance to measure).
    pub fn new(batch: u32, requests: u64, seed: u64) -> Result<BatchConfig> {
        if batch == 0 || batch > MAX_BATCH {
            return Err(Error::parameter("batch", format!("{batch} must be between 1 and {MAX_BATCH}")));
        }
        let batches = requests / batch as u64;
        if batches < 2 {
            return Err(Error::parameter(
                "batch",
                format!("{requests} requests make fewer than 2 batches of {batch}; give more requests"),
            ));
        }
        Ok(BatchConfig { batch, batches, seed })
    }
}

/// What batching did to one source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchSummary {
    /// Who shared draws.
    pub draws: Draws,
    /// Requests per batch.
    pub batch: u32,
    /// Batches simulated.
    pub batches: u64,
    /// Step-weighted AL over all batches, standard error from the spread across batches.
    pub acceptance_length: Estimate,
    /// Standard deviation across batches of each batch's measured AL (its tokens over its request-steps).
    pub batch_al_sd: f64,
    /// Standard deviation of per-request tokens/step, N / S_N.
    pub request_sd: f64,
    /// Intra-batch correlation ρ of per-request tokens/step (one-way ANOVA estimator); 0 when B = 1.
    pub intra_batch_correlation: f64,
    /// Design effect on a batch's mean tokens/step, 1 + (B − 1)ρ: its variance over the variance of a mean of
    /// B independent requests.
    pub design_effect: f64,
}

/// Simulates `config.batches` batches of requests whose steps draw from `sampler` as `draws` says.
///
/// # Errors
/// [`Error::Invalid`] when `level` is not in (0, 1).
pub fn simulate_batches(
    sampler: &StepSampler,
    draws: Draws,
    lengths: OutputLengths,
    config: BatchConfig,
    level: f64,
) -> Result<BatchSummary> {
    let b = config.batch as usize;
    // Per batch: (tokens, request-steps, Σ y, Σ y²) with y = N / S_N.
    let per_batch: Vec<(u64, u64, f64, f64)> = (0..config.batches)
        .into_par_iter()
        .map(|batch| {
            let first = batch * b as u64;
            let mut rngs: Vec<_> = (0..b as u64).map(|j| request_rng(config.seed, first + j)).collect();
            let needs: Vec<u32> = rngs.iter_mut().map(|rng| lengths.sample(rng)).collect();
            let runs: Vec<(u32, u32)> = match draws {
                Draws::PerRequest => needs
                    .iter()
                    .zip(&mut rngs)
                    .map(|(&need, rng)| {
                        let (mut steps, mut emitted) = (0u32, 0u32);
                        while emitted < need {
                            emitted += sampler.accepted_from(rng.next_u32()) as u32 + 1;
                            steps += 1;
                        }
                        (steps, emitted)
                    })
                    .collect(),
                Draws::SharedByBatch => {
                    let mut order: Vec<usize> = (0..b).collect();
                    order.sort_by_key(|&j| needs[j]);
                    let mut runs = vec![(0, 0); b];
                    let (mut steps, mut emitted) = (0u32, 0u32);
                    let shared = &mut rngs[0];
                    for j in order {
                        while emitted < needs[j] {
                            emitted += sampler.accepted_from(shared.next_u32()) as u32 + 1;
                            steps += 1;
                        }
                        runs[j] = (steps, emitted);
                    }
                    runs
                }
            };
            let mut out = (0u64, 0u64, 0.0, 0.0);
            for (&need, &(steps, emitted)) in needs.iter().zip(&runs) {
                let y = need as f64 / steps as f64;
                out.0 += emitted as u64;
                out.1 += steps as u64;
                out.2 += y;
                out.3 += y * y;
            }
            out
        })
        .collect();
    let batches = per_batch.len() as f64;
    let requests = batches * b as f64;
    let (tokens, steps) = per_batch.iter().fold((0u64, 0u64), |(t, s), x| (t + x.0, s + x.1));
    let pooled = tokens as f64 / steps as f64;
    let sample_sd = |values: &mut dyn Iterator<Item = f64>, n: f64| {
        let (sum, sq) = values.fold((0.0, 0.0), |(s, q), v| (s + v, q + v * v));
        ((sq - sum * sum / n) / (n - 1.0)).max(0.0).sqrt()
    };
    let batch_al_sd = sample_sd(&mut per_batch.iter().map(|x| x.0 as f64 / x.1 as f64), batches);
    let (sum_y, sum_y2) = per_batch.iter().fold((0.0, 0.0), |(s, q), x| (s + x.2, q + x.3));
    let request_sd = ((sum_y2 - sum_y * sum_y / requests) / (requests - 1.0)).max(0.0).sqrt();
    // One-way ANOVA estimator of the intra-class correlation: ρ = (MSB − MSW) / (MSB + (B − 1)·MSW).
    let bf = b as f64;
    let between = per_batch.iter().map(|x| x.2 * x.2 / bf).sum::<f64>() - sum_y * sum_y / requests;
    let within: f64 = per_batch.iter().map(|x| (x.3 - x.2 * x.2 / bf).max(0.0)).sum();
    let msb = between.max(0.0) / (batches - 1.0);
    let intra_batch_correlation = if b > 1 {
        let msw = within / (batches * (bf - 1.0));
        if msb + (bf - 1.0) * msw > 0.0 { (msb - msw) / (msb + (bf - 1.0) * msw) } else { 0.0 }
    } else {
        0.0
    };
    Ok(BatchSummary {
        draws,
        batch: config.batch,
        batches: config.batches,
        acceptance_length: Estimate::normal(pooled, batch_al_sd / batches.sqrt(), level)?,
        batch_al_sd,
        request_sd,
        intra_batch_correlation,
        design_effect: 1.0 + (bf - 1.0) * intra_batch_correlation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accept::Distribution;

    #[test]
    fn a_bad_size_names_the_parameter_not_a_flag() {
        for err in [BatchConfig::new(0, 100, 1).unwrap_err(), BatchConfig::new(60, 100, 1).unwrap_err()] {
            assert!(matches!(err, Error::Parameter { name: "batch", .. }), "{err}");
            assert!(!err.to_string().contains("--"), "{err}");
        }
    }

    #[test]
    fn shared_draws_correlate_a_batch() {
        let d = Distribution::new(vec![0.22, 0.18, 0.15, 0.45], "t").unwrap();
        let sampler = StepSampler::new(&d);
        let config = BatchConfig::new(8, 4_000, 3).unwrap();
        let lengths = OutputLengths::Fixed { tokens: 200 };
        let own = simulate_batches(&sampler, Draws::PerRequest, lengths, config, 0.95).unwrap();
        let shared = simulate_batches(&sampler, Draws::SharedByBatch, lengths, config, 0.95).unwrap();
        // Equal lengths and one shared draw sequence: every request of a batch is identical.
        assert!((shared.intra_batch_correlation - 1.0).abs() < 1e-9, "{shared:?}");
        assert!((shared.design_effect - 8.0).abs() < 1e-6);
        assert!(own.intra_batch_correlation.abs() < 0.1, "{own:?}");
        assert!(shared.batch_al_sd > 2.0 * own.batch_al_sd);
        assert!(BatchConfig::new(0, 100, 1).is_err() && BatchConfig::new(64, 100, 1).is_err());
    }
}
