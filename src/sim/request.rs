//! One request: how many output tokens it needs, how its acceptance varies (docs/model.md §4), and the step loop
//! that runs it.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution as _, StandardNormal};
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use super::sampler::{StepSampler, TABLE_SLOTS};
use crate::accept::Acceptance;
use crate::error::{Error, Result};
use crate::units::MAX_DRAFT_LEN;

/// Entries in a per-step count table: accepted drafts 0..=k for k up to [`MAX_DRAFT_LEN`].
pub(crate) const COUNT_SLOTS: usize = MAX_DRAFT_LEN + 1;

/// Steps counted by accepted drafts a = 0..=k, in [`StepCounts::LANES`] lanes.
///
/// Why lanes: the step loop increments a count per step, and two increments of the same count in a row
/// wait on each other through memory (store-to-load forwarding, ~5 cycles) — with P(a = k) near ½ that
/// chain, not the arithmetic, would bound the loop. Steps that run side by side go to different lanes, so
/// their increments are independent; the lanes are summed when read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepCounts {
    // Sized like the sampler's table, whose masked outcomes index it without bounds checks.
    lanes: [[u64; TABLE_SLOTS]; StepCounts::LANES],
}

impl Default for StepCounts {
    fn default() -> Self {
        StepCounts { lanes: [[0; TABLE_SLOTS]; StepCounts::LANES] }
    }
}

impl StepCounts {
    /// Independent count lanes: one per step of the loop's four-step stride.
    pub const LANES: usize = 4;

    /// Steps that accepted `a` drafts (0 for `a` beyond the table).
    pub fn get(&self, a: usize) -> u64 {
        self.lanes.iter().map(|lane| lane.get(a).copied().unwrap_or(0)).sum()
    }

    /// All steps counted.
    pub fn total(&self) -> u64 {
        self.lanes.iter().flatten().sum()
    }
}

/// The longest output a request may ask for (keeps step counts within `u32` and runs bounded).
pub(crate) const MAX_OUTPUT_TOKENS: u32 = 10_000_000;

/// How many output tokens each request needs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OutputLengths {
    /// Every request needs exactly this many tokens.
    Fixed {
        /// Tokens per request.
        tokens: u32,
    },
    /// Uniform on `low..=high` — a serving benchmark's fixed output length with length jitter.
    Uniform {
        /// Shortest request.
        low: u32,
        /// Longest request.
        high: u32,
    },
    /// Log-normal around `median` with log-scale standard deviation `sigma` (chat-like traffic), rounded,
    /// at least 1 and at most `MAX_OUTPUT_TOKENS`.
    LogNormal {
        /// Median tokens.
        median: f64,
        /// Standard deviation of ln(tokens).
        sigma: f64,
    },
}

impl OutputLengths {
    /// The default: uniform on [⌈0.8·1024⌉, 1024] = 820..=1024 tokens, the shape of a 1k-output serving
    /// benchmark whose random dataset jitters lengths by 20%.
    pub const BENCHMARK_DEFAULT: OutputLengths = OutputLengths::Uniform { low: 820, high: 1024 };

    /// Checks the parameters.
    ///
    /// # Errors
    /// [`Error::Parameter`] naming `parameter` when a length is 0 or above `MAX_OUTPUT_TOKENS`, `low > high`,
    /// or `sigma` is negative or above 3 (beyond that the log-normal is dominated by the cap).
    pub fn validated(self, parameter: &'static str) -> Result<Self> {
        let check = |n: f64| {
            if !(n >= 1.0 && n <= MAX_OUTPUT_TOKENS as f64) {
                Err(Error::parameter(parameter, format!("output length {n} must be between 1 and {MAX_OUTPUT_TOKENS}")))
            } else {
                Ok(())
            }
        };
        match self {
            OutputLengths::Fixed { tokens } => check(tokens as f64)?,
            OutputLengths::Uniform { low, high } => {
                check(low as f64)?;
                check(high as f64)?;
                if low > high {
                    return Err(Error::parameter(parameter, format!("shortest output {low} exceeds longest {high}")));
                }
            }
            OutputLengths::LogNormal { median, sigma } => {
                check(median)?;
                if !(0.0..=3.0).contains(&sigma) {
                    return Err(Error::parameter(parameter, format!("log-normal sigma {sigma} must be in [0, 3]")));
                }
            }
        }
        Ok(self)
    }

    /// Mean tokens per request (the log-normal's before rounding and capping).
    pub fn mean(&self) -> f64 {
        match *self {
            OutputLengths::Fixed { tokens } => tokens as f64,
            OutputLengths::Uniform { low, high } => (low as f64 + high as f64) / 2.0,
            OutputLengths::LogNormal { median, sigma } => median * (sigma * sigma / 2.0).exp(),
        }
    }

    /// A one-line description for reports.
    pub fn describe(&self) -> String {
        match *self {
            OutputLengths::Fixed { tokens } => format!("{tokens} tokens each"),
            OutputLengths::Uniform { low, high } => format!("{low} to {high} tokens (uniform)"),
            OutputLengths::LogNormal { median, sigma } => format!("log-normal, median {median} tokens, sigma {sigma}"),
        }
    }

    /// Draws one request's length.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        match *self {
            OutputLengths::Fixed { tokens } => tokens,
            OutputLengths::Uniform { low, high } => {
                let width = (high - low) as u64 + 1;
                low + ((rng.next_u32() as u64 * width) >> 32) as u32
            }
            OutputLengths::LogNormal { median, sigma } => {
                let z: f64 = StandardNormal.sample(rng);
                (median * (sigma * z).exp()).round().clamp(1.0, MAX_OUTPUT_TOKENS as f64) as u32
            }
        }
    }
}

/// Two-phase (Markov-switching) requests: each request alternates between an easy and a hard phase whose
/// conditional-rate odds differ by a factor e^(2·`spread`); phase lengths are geometric with mean
/// `mean_steps`, and a request starts in either phase with probability ½ (the stationary law).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Phases {
    /// Mean steps spent in a phase before switching (≥ 1).
    pub mean_steps: f64,
    /// Half the log-odds gap between the phases (≥ 0).
    pub spread: f64,
}

/// How acceptance varies across and within requests (docs/model.md §4). With both parts off, requests are
/// i.i.d. draws from the base chain.
///
/// A request draws z ~ Normal(0, 1) and scales the odds of every conditional rate c_i by
/// e^(shift + spread·z [± phase spread]): c' = s·c / (1 − c + s·c). Scaling odds rather than rates keeps every
/// rate in [0, 1] without clipping, leaves certain (c = 1) and impossible (c = 0) positions as they are, and
/// makes `spread` the standard deviation of the per-request log-odds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Heterogeneity {
    /// Standard deviation of the per-request log-odds scale (0 = no spread across requests).
    pub spread: f64,
    /// Optional within-request phases.
    pub phases: Option<Phases>,
}

/// Longest mean phase accepted, in steps: as long as the longest request (a phase that never ends is no
/// phase), and short enough that the chance of leaving a phase stays representable.
pub(crate) const MAX_PHASE_STEPS: f64 = 10_000_000.0;

impl Heterogeneity {
    /// Checks the parameters.
    ///
    /// # Errors
    /// [`Error::Parameter`] naming the parameter when a spread is negative, not finite or above 5 (odds scaled by
    /// e^±15 at 3σ, every rate pinned at 0 or 1), or a phase mean length outside [1, `MAX_PHASE_STEPS`].
    pub fn validated(self) -> Result<Self> {
        let spread_ok = |s: f64| s.is_finite() && (0.0..=5.0).contains(&s);
        if !spread_ok(self.spread) {
            return Err(Error::parameter("spread", format!("{} must be a log-odds spread in [0, 5]", self.spread)));
        }
        if let Some(p) = self.phases {
            if !spread_ok(p.spread) {
                return Err(Error::parameter("phase_spread", format!("{} must be in [0, 5]", p.spread)));
            }
            if !(1.0..=MAX_PHASE_STEPS).contains(&p.mean_steps) {
                return Err(Error::parameter(
                    "phase_steps",
                    format!(
                        "{} is out of range: a phase's mean length must lie in [1, {MAX_PHASE_STEPS}] steps",
                        p.mean_steps
                    ),
                ));
            }
        }
        Ok(self)
    }

    /// Whether requests differ at all.
    pub fn is_active(&self) -> bool {
        self.spread > 0.0 || self.phases.is_some_and(|p| p.spread > 0.0)
    }
}

/// What one simulated request did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct RequestOutcome {
    /// Output tokens the request needed (N).
    pub output_tokens: u32,
    /// Verify steps it took, S_N = min{s : X_1 + … + X_s ≥ N}.
    pub steps: u32,
    /// Tokens its steps produced, X_1 + … + X_S ≥ N (the last step may overshoot N).
    pub emitted: u32,
}

impl RequestOutcome {
    /// Per-request acceptance length: tokens produced per step, as an engine's acceptance counter sees it.
    pub fn acceptance_length(&self) -> f64 {
        self.emitted as f64 / self.steps as f64
    }

    /// Useful output tokens per step, N / S_N — the quantity latency depends on.
    pub fn tokens_per_step(&self) -> f64 {
        self.output_tokens as f64 / self.steps as f64
    }
}

// The i.i.d. table is inline on purpose (no pointer chase in the step loop); a model is built once per run.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
enum Law {
    Iid(StepSampler),
    Varying { conditional: Vec<f64>, heterogeneity: Heterogeneity, shift: f64 },
}

/// Everything needed to simulate one request from its random stream: output length and acceptance law.
#[derive(Debug, Clone)]
pub struct RequestModel {
    lengths: OutputLengths,
    law: Law,
}

impl RequestModel {
    /// Requests whose steps are i.i.d. draws from `sampler` (real acceptance without heterogeneity, or an
    /// engine's synthetic schedule).
    pub fn iid(sampler: StepSampler, lengths: OutputLengths) -> RequestModel {
        RequestModel { lengths, law: Law::Iid(sampler) }
    }

    /// Requests that vary around `base` as `heterogeneity` says, with the odds shift calibrated numerically
    /// so that the step-weighted mean AL — total tokens over total steps, what throughput sees — equals
    /// `base`'s AL (see `calibrate_shift`).
    ///
    /// # Errors
    /// As [`Heterogeneity::validated`] and `calibrate_shift`.
    pub fn heterogeneous(base: &Acceptance, heterogeneity: Heterogeneity, lengths: OutputLengths) -> Result<Self> {
        let heterogeneity = heterogeneity.validated()?;
        if !heterogeneity.is_active() {
            return Ok(Self::iid(StepSampler::new(&base.distribution()), lengths));
        }
        let conditional = base.conditional();
        let shift = calibrate_shift(&conditional, heterogeneity, base.acceptance_length())?;
        Ok(RequestModel { lengths, law: Law::Varying { conditional, heterogeneity, shift } })
    }

    /// The output-length law.
    pub fn lengths(&self) -> OutputLengths {
        self.lengths
    }

    /// The calibrated log-odds shift (0 for i.i.d. requests).
    pub fn shift(&self) -> f64 {
        match self.law {
            Law::Iid(_) => 0.0,
            Law::Varying { shift, .. } => shift,
        }
    }

    /// Simulates one request from its own stream, adding each step's accepted count a to `counts`.
    /// Draw order: output length, then (if heterogeneous) the request's scale and phases, then one `u32`
    /// per step (two per `u64` drawn) — so every source given the same stream sees the same output lengths.
    pub fn simulate(&self, rng: &mut ChaCha8Rng, counts: &mut StepCounts) -> RequestOutcome {
        let need = self.lengths.sample(rng);
        let (steps, emitted) = match &self.law {
            Law::Iid(sampler) => run_steps::<false>(sampler, rng, need, u32::MAX, counts),
            Law::Varying { conditional, heterogeneity, shift } => {
                let z: f64 = if heterogeneity.spread > 0.0 { StandardNormal.sample(rng) } else { 0.0 };
                let centre = shift + heterogeneity.spread * z;
                match heterogeneity.phases {
                    None => run_steps::<false>(&scaled_sampler(conditional, centre), rng, need, u32::MAX, counts),
                    Some(phases) => {
                        let samplers = [
                            scaled_sampler(conditional, centre + phases.spread),
                            scaled_sampler(conditional, centre - phases.spread),
                        ];
                        let stay = 1.0 - 1.0 / phases.mean_steps;
                        let mut phase = (rng.next_u32() >> 31) as usize;
                        let (mut steps, mut emitted) = (0u32, 0u32);
                        while emitted < need {
                            let length = geometric_steps(rng, stay);
                            let (s, e) = run_steps::<true>(&samplers[phase], rng, need - emitted, length, counts);
                            steps += s;
                            emitted += e;
                            phase ^= 1;
                        }
                        (steps, emitted)
                    }
                }
            }
        };
        RequestOutcome { output_tokens: need, steps, emitted }
    }
}

/// Runs steps until `need` tokens are out (or, when `BOUNDED`, `max_steps` steps have run); returns
/// (steps, tokens). The hot loop of the whole simulator: each `u64` drawn feeds two steps (low word, then
/// high word; a half left over when the request ends is discarded), one table lookup and one count per step.
///
/// While even three maximal steps cannot finish the request, steps go four at a time with no exit test in
/// between, each into its own count lane; the tail then runs step by step. Both paths consume the words in
/// the same order and stop at the same step, so the stride changes speed, never results.
#[inline(always)]
fn run_steps<const BOUNDED: bool>(
    sampler: &StepSampler,
    rng: &mut ChaCha8Rng,
    need: u32,
    max_steps: u32,
    counts: &mut StepCounts,
) -> (u32, u32) {
    let (mut steps, mut emitted) = (0u32, 0u32);
    let max_tokens = sampler.k() as u32 + 1;
    while emitted + 3 * max_tokens < need && (!BOUNDED || steps + 4 <= max_steps) {
        let (first, second) = (rng.next_u64(), rng.next_u64());
        let a = [
            sampler.accepted_from(first as u32),
            sampler.accepted_from((first >> 32) as u32),
            sampler.accepted_from(second as u32),
            sampler.accepted_from((second >> 32) as u32),
        ];
        for (lane, &a) in counts.lanes.iter_mut().zip(&a) {
            lane[a] += 1;
        }
        emitted += (a[0] + a[1] + a[2] + a[3]) as u32 + 4;
        steps += 4;
    }
    let lane = &mut counts.lanes[0];
    let mut step = |u: u32, steps: &mut u32, emitted: &mut u32| {
        let a = sampler.accepted_from(u);
        lane[a] += 1;
        *emitted += a as u32 + 1;
        *steps += 1;
        *emitted < need && (!BOUNDED || *steps < max_steps)
    };
    while emitted < need && (!BOUNDED || steps < max_steps) {
        let pair = rng.next_u64();
        if step(pair as u32, &mut steps, &mut emitted) {
            step((pair >> 32) as u32, &mut steps, &mut emitted);
        }
    }
    (steps, emitted)
}

/// A geometric phase length ≥ 1 with P(length > n) = stay^n, by inversion of one `u32`.
fn geometric_steps(rng: &mut ChaCha8Rng, stay: f64) -> u32 {
    if stay <= 0.0 {
        return 1;
    }
    // (u + 0.5)/2³² lies strictly inside (0, 1), so the logarithm is finite.
    let u = (rng.next_u32() as f64 + 0.5) / 4_294_967_296.0;
    // At least one step, so a phase whose leaving chance rounds to 0 still moves the request on.
    (1.0 + (u.ln() / stay.ln()).floor()).clamp(1.0, u32::MAX as f64) as u32
}

/// Scales the odds of each conditional rate by e^`log_scale`.
fn scale_odds(c: f64, log_scale: f64) -> f64 {
    if c <= 0.0 || c >= 1.0 {
        return c;
    }
    let s = log_scale.exp();
    s * c / (1.0 - c + s * c)
}

/// P(a = 0..k) for conditional rates scaled by e^`log_scale`, into a fixed buffer; returns k + 1.
fn scaled_probabilities(conditional: &[f64], log_scale: f64, out: &mut [f64; COUNT_SLOTS]) -> usize {
    let k = conditional.len();
    let mut reach = 1.0; // p_{i}: P(a ≥ i)
    for (i, &c) in conditional.iter().enumerate() {
        let next = reach * scale_odds(c, log_scale);
        out[i] = reach - next;
        reach = next;
    }
    out[k] = reach;
    k + 1
}

fn scaled_sampler(conditional: &[f64], log_scale: f64) -> StepSampler {
    let mut probabilities = [0.0; COUNT_SLOTS];
    let n = scaled_probabilities(conditional, log_scale, &mut probabilities);
    StepSampler::from_probabilities(&probabilities[..n])
}

/// Mean tokens per step of conditional rates scaled by e^`log_scale`: AL = 1 + Σ_i Π_{j≤i} c'_j.
fn scaled_al(conditional: &[f64], log_scale: f64) -> f64 {
    let mut reach = 1.0;
    let mut al = 1.0;
    for &c in conditional {
        reach *= scale_odds(c, log_scale);
        al += reach;
    }
    al
}

/// Quadrature nodes for z ~ Normal(0, 1): the midpoints of 2,000 equal-probability cells.
const QUADRATURE_NODES: usize = 2_000;

/// The log-odds shift that makes the step-weighted mean AL of heterogeneous requests equal `target`.
///
/// A request with scale z runs ≈ N / ĀL(z) steps for N tokens, where ĀL(z) is its AL averaged over its
/// two phases (each holds half the steps in the long run); total tokens over total steps is then the
/// harmonic mean 1 / E_z(1 / ĀL(z)) (renewal reward theorem; exact as N → ∞, off by O(1/N) otherwise —
/// the report shows the simulated value). E_z is computed by equal-probability quadrature over the normal
/// and the shift found by bisection, since the harmonic mean increases with the shift.
///
/// # Errors
/// [`Error::Invalid`] when no shift reaches `target` (rates all 0 or 1 leave nothing to scale).
pub(crate) fn calibrate_shift(conditional: &[f64], heterogeneity: Heterogeneity, target: f64) -> Result<f64> {
    let normal = Normal::standard();
    let nodes: Vec<f64> = if heterogeneity.spread > 0.0 {
        (0..QUADRATURE_NODES).map(|j| normal.inverse_cdf((j as f64 + 0.5) / QUADRATURE_NODES as f64)).collect()
    } else {
        vec![0.0]
    };
    let phase = heterogeneity.phases.map_or(0.0, |p| p.spread);
    let step_weighted = |shift: f64| {
        let inverse: f64 = nodes
            .iter()
            .map(|z| {
                let centre = shift + heterogeneity.spread * z;
                let mean = if phase > 0.0 {
                    0.5 * (scaled_al(conditional, centre + phase) + scaled_al(conditional, centre - phase))
                } else {
                    scaled_al(conditional, centre)
                };
                1.0 / mean
            })
            .sum();
        nodes.len() as f64 / inverse
    };
    let (mut lo, mut hi) = (-40.0, 40.0);
    let tolerance = 1e-9;
    if (step_weighted(0.0) - target).abs() < tolerance {
        return Ok(0.0);
    }
    if step_weighted(lo) > target + tolerance || step_weighted(hi) < target - tolerance {
        return Err(Error::parameter(
            "spread",
            format!(
                "no per-request scale keeps the step-weighted AL at {target:.4}: the conditional rates are all 0 or 1"
            ),
        ));
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if step_weighted(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(0.5 * (lo + hi))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::request_rng;

    fn seed_chain() -> Acceptance {
        Acceptance::from_unconditional(vec![0.78, 0.60, 0.45], "t").unwrap()
    }

    #[test]
    fn odds_scaling_keeps_probabilities_and_ends() {
        assert_eq!(scale_odds(1.0, 3.0), 1.0);
        assert_eq!(scale_odds(0.0, -3.0), 0.0);
        assert!((scale_odds(0.5, 2f64.ln()) - 2.0 / 3.0).abs() < 1e-12);
        let c = seed_chain().conditional();
        assert!((scaled_al(&c, 0.0) - 2.83).abs() < 1e-12);
        let mut out = [0.0; COUNT_SLOTS];
        let n = scaled_probabilities(&c, 0.7, &mut out);
        assert!((out[..n].iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn calibration_reproduces_the_mean_and_lowers_the_median_request() {
        let c = seed_chain().conditional();
        let het = Heterogeneity { spread: 0.8, phases: Some(Phases { mean_steps: 20.0, spread: 0.5 }) };
        let shift = calibrate_shift(&c, het, 2.83).unwrap();
        // Slow requests weigh more in a step-weighted mean, so the typical request must be faster.
        assert!(shift > 0.0, "{shift}");
        assert_eq!(calibrate_shift(&c, Heterogeneity::default(), 2.83).unwrap(), 0.0);
        let all_certain = [1.0, 1.0];
        assert_eq!(calibrate_shift(&all_certain, het, 3.0).unwrap(), 0.0);
    }

    #[test]
    fn requests_conserve_tokens() {
        let het = Heterogeneity { spread: 0.5, phases: Some(Phases { mean_steps: 3.0, spread: 1.0 }) };
        let model = RequestModel::heterogeneous(&seed_chain(), het, OutputLengths::BENCHMARK_DEFAULT).unwrap();
        let mut counts = StepCounts::default();
        let mut rng = request_rng(1, 2);
        let out = model.simulate(&mut rng, &mut counts);
        assert_eq!(counts.total(), out.steps as u64);
        let tokens: u64 = (0..COUNT_SLOTS).map(|a| (a as u64 + 1) * counts.get(a)).sum();
        assert_eq!(tokens, out.emitted as u64);
        assert!(out.emitted >= out.output_tokens && out.emitted < out.output_tokens + 4);
    }

    #[test]
    fn bad_heterogeneity_is_rejected() {
        assert!(Heterogeneity { spread: -0.1, phases: None }.validated().is_err());
        assert!(
            Heterogeneity { spread: 0.1, phases: Some(Phases { mean_steps: 0.5, spread: 0.1 }) }.validated().is_err()
        );
        assert!(OutputLengths::Uniform { low: 10, high: 5 }.validated("x").is_err());
        assert!(OutputLengths::Fixed { tokens: 0 }.validated("x").is_err());
    }
}
