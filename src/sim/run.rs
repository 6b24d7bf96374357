//! Many requests in parallel: request i runs on its own random stream ([`request_rng`]`(seed, i)`), chunks
//! of requests run on rayon's pool, and partial results are combined in request order — so a seed gives
//! bit-identical results at any thread count. Memory grows with requests (12 bytes each, for percentiles),
//! never with steps; [`simulate_totals`] keeps only streaming totals for runs of any length.

use rayon::prelude::*;
use serde::Serialize;

use super::request::{RequestModel, RequestOutcome, StepCounts};
use super::sampler::request_rng;
use crate::error::{Error, Result};

/// Requests simulated per parallel task: large enough that scheduling costs nothing next to ~10⁵ steps,
/// small enough to balance two to hundreds of threads.
const CHUNK: u64 = 256;

/// The most requests one run may simulate (12 bytes each are kept for percentiles: 1.2 GB at the limit).
pub(crate) const MAX_REQUESTS: u64 = 100_000_000;

/// How many requests, under which seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RunConfig {
    /// Number of requests.
    pub requests: u64,
    /// Seed of every request's stream.
    pub seed: u64,
}

impl RunConfig {
    /// Checks the request count.
    ///
    /// # Errors
    /// [`Error::Parameter`] for `requests` when it is 0 or above `MAX_REQUESTS`.
    pub fn new(requests: u64, seed: u64) -> Result<RunConfig> {
        if requests == 0 || requests > MAX_REQUESTS {
            return Err(Error::parameter("requests", format!("{requests} must be between 1 and {MAX_REQUESTS}")));
        }
        Ok(RunConfig { requests, seed })
    }
}

/// Streaming totals over all steps of all requests (integers, so their sum is exact in any order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepTotals {
    /// Requests simulated.
    pub requests: u64,
    /// Verify steps over all requests.
    pub steps: u64,
    /// Tokens the steps produced.
    pub emitted: u64,
    /// Output tokens the requests needed.
    pub output_tokens: u64,
    /// Steps that accepted a = 0, 1, …, k drafts.
    pub counts: Vec<u64>,
}

impl StepTotals {
    fn empty(k: usize) -> StepTotals {
        StepTotals { requests: 0, steps: 0, emitted: 0, output_tokens: 0, counts: vec![0; k + 1] }
    }

    fn add_counts(&mut self, counts: &StepCounts) {
        for (a, total) in self.counts.iter_mut().enumerate() {
            *total += counts.get(a);
        }
    }

    fn add_outcome(&mut self, outcome: &RequestOutcome) {
        self.requests += 1;
        self.steps += outcome.steps as u64;
        self.emitted += outcome.emitted as u64;
        self.output_tokens += outcome.output_tokens as u64;
    }

    fn merge(&mut self, other: &StepTotals) {
        self.requests += other.requests;
        self.steps += other.steps;
        self.emitted += other.emitted;
        self.output_tokens += other.output_tokens;
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
    }

    /// Mean tokens per step over all steps (the step-weighted AL that throughput sees).
    pub fn tokens_per_step(&self) -> f64 {
        self.emitted as f64 / self.steps as f64
    }
}

/// Every request's outcome, in request order, with the step totals.
#[derive(Debug, Clone)]
pub struct RequestSample {
    /// Streaming totals.
    pub totals: StepTotals,
    /// Outcome of request 0, 1, ….
    pub outcomes: Vec<RequestOutcome>,
}

/// Runs `f` over request-index chunks in parallel and returns the chunk results in order.
fn over_chunks<T: Send>(
    config: RunConfig,
    progress: &(dyn Fn(u64) + Sync),
    f: impl Fn(u64, u64) -> T + Sync,
) -> Vec<T> {
    let chunks = config.requests.div_ceil(CHUNK);
    (0..chunks)
        .into_par_iter()
        .map(|c| {
            let start = c * CHUNK;
            let end = (start + CHUNK).min(config.requests);
            let out = f(start, end);
            progress(end - start);
            out
        })
        .collect()
}

/// Simulates `config.requests` requests of `model` (draft length `k`), keeping every outcome.
/// `progress` is called with the number of requests each finished chunk held.
///
/// ```
/// use alsim::accept::Acceptance;
/// use alsim::sim::{OutputLengths, RequestModel, RunConfig, StepSampler, simulate_requests};
///
/// let chain = Acceptance::from_unconditional(vec![0.78, 0.60, 0.45], "rates")?;
/// let model = RequestModel::iid(StepSampler::new(&chain.distribution()), OutputLengths::Fixed { tokens: 1000 });
/// let sample = simulate_requests(&model, 3, RunConfig::new(2_000, 1)?, &|_| {});
/// assert_eq!(sample.outcomes.len(), 2_000);
/// assert!((sample.totals.tokens_per_step() - 2.83).abs() < 0.01);
/// # Ok::<(), alsim::Error>(())
/// ```
pub fn simulate_requests(
    model: &RequestModel,
    k: usize,
    config: RunConfig,
    progress: &(dyn Fn(u64) + Sync),
) -> RequestSample {
    let parts = over_chunks(config, progress, |start, end| {
        let mut counts = StepCounts::default();
        let mut totals = StepTotals::empty(k);
        let outcomes: Vec<RequestOutcome> = (start..end)
            .map(|i| {
                let outcome = model.simulate(&mut request_rng(config.seed, i), &mut counts);
                totals.add_outcome(&outcome);
                outcome
            })
            .collect();
        totals.add_counts(&counts);
        (totals, outcomes)
    });
    let mut totals = StepTotals::empty(k);
    let mut outcomes = Vec::with_capacity(config.requests as usize);
    for (part, mut list) in parts {
        totals.merge(&part);
        outcomes.append(&mut list);
    }
    RequestSample { totals, outcomes }
}

/// Simulates like [`simulate_requests`] but keeps only the streaming totals: constant memory for any
/// number of requests and steps.
pub fn simulate_totals(
    model: &RequestModel,
    k: usize,
    config: RunConfig,
    progress: &(dyn Fn(u64) + Sync),
) -> StepTotals {
    // Integer totals add exactly in any order, so a parallel reduction keeps determinism.
    (0..config.requests.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let (start, end) = (c * CHUNK, ((c + 1) * CHUNK).min(config.requests));
            let mut counts = StepCounts::default();
            let mut totals = StepTotals::empty(k);
            for i in start..end {
                let outcome = model.simulate(&mut request_rng(config.seed, i), &mut counts);
                totals.add_outcome(&outcome);
            }
            totals.add_counts(&counts);
            progress(end - start);
            totals
        })
        .reduce(
            || StepTotals::empty(k),
            |mut all, part| {
                all.merge(&part);
                all
            },
        )
}
