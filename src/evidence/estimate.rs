//! The acceptance-length estimator of docs/model.md §5.
//!
//! With D verification steps, A accepted drafts and P_i accepted at position i: ÂL = 1 + A/D and
//! p̂_i = P_i/D. Two standard errors:
//! - **independent**: σ_a/√D, with σ_a² the sample variance of accepted drafts per step: exact from a
//!   per-count distribution (ATOM), from §2's moments E\[a²\] = Σ(2i−1)p̂_i when per-position counts exist
//!   (vLLM), and otherwise the Bhatia–Davis bound m(k − m) for a ∈ [0, k] with mean m (the largest variance
//!   any law on [0, k] with that mean can have, so the interval is conservative rather than invented);
//! - **design effect**: steps of one request (and SGLang's shared batch draw) are correlated, so the
//!   independent SE is too small. Batch means over a time series (log intervals, scrape deltas, iterations)
//!   or over several runs give the ratio estimator's SE, √(b/(b−1)·Σ(A_j − r·D_j)²)/ΣD (the standard
//!   batch-means/linearisation variance of a ratio), with a Student-t interval on b − 1 degrees of
//!   freedom because b is small. The design effect is the squared ratio of the two SEs.
//!
//! Acceptance drifts in phases (easy and hard prompts, agentic turns) that can outlast a scrape interval,
//! so successive windows of a time series are correlated and one window per batch under-covers (86% when
//! phases last half a scrape interval, under 60% at five). [`batch`] therefore groups the n windows into
//! b = round(n^(1/3)) (at least 2) batches of consecutive windows, so batches grow as n^(2/3) and outlast
//! any fixed phase length as the series grows. Coverage (`examples/coverage.rs`, `tests/evidence.rs`):
//! from [`MIN_SERIES`] windows on, ≥ 93% with phases up to five windows long and 95% with independent
//! steps. A shorter series cannot tell whether phases outlast its batches: the estimate says so
//! ([`AlEstimate::series_warning`]) and the verdict rests on the wider of the two intervals.
//!
//! Phases can outlast the batches themselves (10–20 windows in a series of 100: coverage 84–91%). The
//! series' integrated autocorrelation time τ ([`autocorrelation_time`]) tells: when its n windows are
//! worth fewer than [`MIN_SPANS_PER_BATCH`] × b independent ones (n/τ), the batches are too short for the
//! series' own memory, the estimate says so ([`AlEstimate::memory_warning`]) and the verdict stays
//! undecided.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::{Location, Window};
use crate::error::{Error, Result};
use crate::stats::{ConfidenceInterval, Estimate};

/// Where σ_a² (the per-step variance of accepted drafts) came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VarianceSource {
    /// The per-count distribution of accepted drafts (exact).
    Distribution,
    /// Per-position counts through E\[a²\] = Σ(2i−1)p_i (exact for a chain).
    Positions,
    /// Only the mean is known: the largest possible variance m(k − m).
    UpperBound,
}

impl VarianceSource {
    /// A short description for tables.
    pub fn label(self) -> &'static str {
        match self {
            VarianceSource::Distribution => "per-count distribution",
            VarianceSource::Positions => "per-position counts",
            VarianceSource::UpperBound => "upper bound m(k−m)",
        }
    }
}

/// One position's acceptance rate.
#[derive(Debug, Clone, Serialize)]
pub struct PositionEstimate {
    /// Draft position i (1-based).
    pub position: usize,
    /// p̂_i = P_i/D with its binomial (independent) SE.
    pub unconditional: Estimate,
    /// The same rate with a batch-means SE, when the time series has per-position counts.
    pub design: Option<Estimate>,
    /// ĉ_i = p̂_i/p̂_{i−1} (0 once p̂_{i−1} = 0).
    pub conditional: f64,
}

impl PositionEstimate {
    /// The wider of the two intervals (the one conclusions rest on).
    pub fn decisive(&self) -> &Estimate {
        wider(&self.unconditional, self.design.as_ref())
    }
}

/// The shortest time series (in windows) whose batch-means interval the coverage check vouches for.
pub const MIN_SERIES: usize = 100;

/// Groups a time series of `windows` into b = round(n^(1/3)) (at least 2, at most n) batches of
/// consecutive windows, the first n mod b batches one window longer.
///
/// ```
/// use alsim::evidence::{estimate::batch, Window};
/// let series: Vec<Window> = (0..125).map(|i| Window::new(10.0, i as f64)).collect();
/// let batches = batch(&series);
/// assert_eq!(batches.len(), 5);
/// assert_eq!(batches[0].steps, 250.0);
/// ```
pub fn batch(windows: &[Window]) -> Vec<Window> {
    let n = windows.len();
    if n < 2 {
        return windows.to_vec();
    }
    let b = batches_for(n);
    let (size, extra) = (n / b, n % b);
    let mut out = Vec::with_capacity(b);
    let mut start = 0;
    for j in 0..b {
        let end = start + size + usize::from(j < extra);
        out.push(Window::sum(&windows[start..end]).expect("every batch holds at least one window"));
        start = end;
    }
    out
}

/// How many batches [`batch`] forms from `n` ≥ 2 windows.
fn batches_for(n: usize) -> usize {
    ((n as f64).cbrt().round() as usize).clamp(2, n)
}

/// Each batch must span at least this many autocorrelation times (n/τ ≥ this × b effective windows):
/// batch means of batches m windows long underestimate their variance by about τ/(2m), a fifth at this
/// floor. In the phase simulation (`examples/coverage.rs`, 100 windows, 2,000 runs) it leaves phases of up
/// to two windows decided, about 30% of runs with five-window phases undecided, and most with 10–20, where
/// a right pin is called wrong in 3.2%, 2.3% and 3.7% of runs (at 2.0 spans: 4.7%, 4.5%, 5.9%); a pin 5%
/// off with five-window phases is called wrong in 5.1% / 5.5% of runs (at 2.0: 5.4% / 5.8%).
pub const MIN_SPANS_PER_BATCH: f64 = 2.5;

/// The integrated autocorrelation time τ of a time series of windows, in windows: how many windows one
/// independent window is worth (1 for independent windows), so n/τ is the effective number of windows.
/// The larger of two estimates over the ratio's linearised residuals A_j − r·D_j: Geyer's initial
/// positive sequence (Geyer 1992, "Practical Markov chain Monte Carlo", as in Stan's effective sample
/// size: autocovariances summed in pairs while the pairs stay positive and decreasing), which sees long
/// tails but runs low and noisy on a short series, and the lag-1 (AR(1)) value (1 + ρ₁)/(1 − ρ₁), which
/// is steadier for the phase drifts of serving (two-state switching decays geometrically). The pair sum
/// stops once τ passes `cap`, returning a value above it, so a long series costs O(n·cap).
///
/// ```
/// use alsim::evidence::{estimate::autocorrelation_time, Window};
/// // Alternating windows are not positively correlated: τ = 1.
/// let flat: Vec<Window> = (0..100).map(|i| Window::new(100.0, if i % 2 == 0 { 150.0 } else { 170.0 })).collect();
/// assert_eq!(autocorrelation_time(&flat, 50.0), 1.0);
/// // Runs of 10 equal windows: each run is worth about one window.
/// let runs: Vec<Window> = (0..100).map(|i| Window::new(100.0, if (i / 10) % 2 == 0 { 150.0 } else { 170.0 })).collect();
/// assert!(autocorrelation_time(&runs, 50.0) > 5.0);
/// ```
pub fn autocorrelation_time(windows: &[Window], cap: f64) -> f64 {
    let n = windows.len();
    let steps: f64 = windows.iter().map(|w| w.steps).sum();
    if n < 4 || steps <= 0.0 {
        return 1.0;
    }
    let r = windows.iter().map(|w| w.accepted).sum::<f64>() / steps;
    let e: Vec<f64> = windows.iter().map(|w| w.accepted - r * w.steps).collect();
    let gamma = |lag: usize| e[..n - lag].iter().zip(&e[lag..]).map(|(a, b)| a * b).sum::<f64>() / n as f64;
    let g0 = gamma(0);
    if g0 <= 0.0 {
        return 1.0;
    }
    // ρ₁ = 1 would make the lag-1 value infinite; n bounds any τ a series of n windows can show.
    let rho = (gamma(1) / g0).clamp(0.0, 1.0);
    let lag_one = if rho < 1.0 { ((1.0 + rho) / (1.0 - rho)).min(n as f64) } else { n as f64 };
    let (mut sum, mut previous) = (0.0, f64::INFINITY);
    for m in 0..n / 2 {
        let pair = (gamma(2 * m) + gamma(2 * m + 1)).min(previous);
        if pair <= 0.0 {
            break;
        }
        sum += pair;
        previous = pair;
        if 2.0 * sum / g0 - 1.0 > cap {
            break;
        }
    }
    (2.0 * sum / g0 - 1.0).max(lag_one).max(1.0)
}

/// How much a time series remembers, against what its batches need.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Memory {
    /// The integrated autocorrelation time τ, in windows (the largest over the series pooled).
    pub autocorrelation_time: f64,
    /// n/τ summed over the series: how many independent windows the series is worth.
    pub effective_windows: f64,
    /// What the batches need: [`MIN_SPANS_PER_BATCH`] × b summed over the series.
    pub needed: f64,
    /// Windows a series at this τ needs for its batches to span enough (the longest over the series).
    pub windows_needed: usize,
}

impl Memory {
    /// Of the time series `series` (each batched on its own), `None` when none has two batches.
    fn of(series: &[&[Window]]) -> Option<Memory> {
        let mut memory: Option<Memory> = None;
        for windows in series.iter().filter(|w| w.len() >= 2) {
            let n = windows.len();
            let needed = MIN_SPANS_PER_BATCH * batches_for(n) as f64;
            // Past n/needed the series is already too short; how far past does not change that.
            let tau = autocorrelation_time(windows, n as f64 / needed);
            let mut windows_needed = n;
            while (windows_needed as f64) < tau * MIN_SPANS_PER_BATCH * batches_for(windows_needed) as f64 {
                windows_needed += windows_needed.div_ceil(20);
            }
            let m = memory.get_or_insert(Memory {
                autocorrelation_time: 1.0,
                effective_windows: 0.0,
                needed: 0.0,
                windows_needed: 0,
            });
            m.autocorrelation_time = m.autocorrelation_time.max(tau);
            m.effective_windows += n as f64 / tau;
            m.needed += needed;
            m.windows_needed = m.windows_needed.max(windows_needed);
        }
        memory
    }

    /// Whether the series is too short for its own autocorrelation.
    pub fn too_short(&self) -> bool {
        self.effective_windows < self.needed
    }
}

/// AL with both standard errors, and the per-position rates.
#[derive(Debug, Clone, Serialize)]
pub struct AlEstimate {
    /// Verification steps D.
    pub steps: f64,
    /// Accepted drafts A.
    pub accepted: f64,
    /// Draft length k.
    pub k: usize,
    /// σ_a², the per-step variance of accepted drafts.
    pub step_variance: f64,
    /// Where σ_a² came from.
    pub variance_source: VarianceSource,
    /// ÂL with the independent SE σ_a/√D.
    pub independent: Estimate,
    /// ÂL with the batch-means SE (Student-t interval), when there are at least two batches.
    pub design: Option<Estimate>,
    /// (design SE / independent SE)², when both are positive (`None`: it cannot be estimated).
    pub design_effect: Option<f64>,
    /// Number of batches behind the design-effect SE.
    pub batches: usize,
    /// Windows of the time series the batches were formed from; 0 when the batches are separate runs.
    pub windows: usize,
    /// Why the design-effect interval may be too narrow, when the series is too short to tell.
    pub series_warning: Option<String>,
    /// The time series' autocorrelation, when there is a series of at least two windows.
    pub memory: Option<Memory>,
    /// Why no interval can be trusted, when the series is too short for its own autocorrelation
    /// ([`MIN_SPANS_PER_BATCH`]): the verdict must then stay undecided.
    pub memory_warning: Option<String>,
    /// What the batches are (log intervals, scrape deltas, runs…).
    pub batch_source: String,
    /// p̂_1..p̂_k, when the evidence counts positions.
    pub positions: Vec<PositionEstimate>,
}

impl AlEstimate {
    /// The interval conclusions rest on: the design-effect one when the time series is long enough for its
    /// coverage to hold ([`MIN_SERIES`] windows), else the wider of the independent and the design-effect
    /// one. Steps are never negatively correlated in serving, so a design effect below 1 in a short series
    /// is noise in the batch means, and the wider interval keeps the verdict conservative; in a long series
    /// the batch means are trusted as they are, which keeps 95% coverage when steps are independent.
    pub fn decisive(&self) -> &Estimate {
        match &self.design {
            Some(design) if self.windows >= MIN_SERIES => design,
            design => wider(&self.independent, design.as_ref()),
        }
    }

    /// Which standard error [`AlEstimate::decisive`] picked.
    pub fn decisive_basis(&self) -> &'static str {
        if std::ptr::eq(self.decisive(), &self.independent) { "independent" } else { "design-effect" }
    }
}

fn wider<'a>(independent: &'a Estimate, design: Option<&'a Estimate>) -> &'a Estimate {
    let width = |e: &Estimate| e.confidence_interval.upper_bound - e.confidence_interval.lower_bound;
    match design {
        Some(d) if width(d) > width(independent) => d,
        _ => independent,
    }
}

/// Estimates AL from a run's total counts and `batches` (which should sum to `total`): the batches
/// [`batch`] forms of each time series in `series`, or the totals of several runs (`series` empty).
///
/// # Errors
/// [`Error::Parse`] at `location` when there are no steps; [`Error::Invalid`] for a bad `level`; [`Error::Parameter`] `k` for a bad draft length.
///
/// ```
/// use alsim::evidence::{estimate, Location, Window};
/// let total = Window::from_distribution(vec![0.0, 1700.0, 8300.0, 0.0]);
/// let at = Location::in_file("mtp_stats.json", None);
/// let e = estimate(&total, &[], &[], 3, 0.95, "", &at)?;
/// assert!((e.independent.point_estimate - 2.83).abs() < 1e-12);
/// assert!((e.step_variance - 0.1411).abs() < 1e-12);
/// # Ok::<(), alsim::Error>(())
/// ```
pub fn estimate(
    total: &Window,
    batches: &[Window],
    series: &[&[Window]],
    k: usize,
    level: f64,
    batch_source: &str,
    location: &Location,
) -> Result<AlEstimate> {
    crate::units::check_draft_len_argument(k, "k")?;
    if total.steps.is_nan() || total.steps <= 0.0 {
        return Err(Error::parse(
            &location.file,
            location.line,
            "no verification steps counted (D = 0): the run drafted nothing, so it says nothing about acceptance",
        ));
    }
    let d = total.steps;
    let mean = total.accepted / d;
    let windows: usize = series.iter().map(|s| s.len()).sum();
    let memory = Memory::of(series).filter(|_| batches.len() >= 2);
    let (step_variance, variance_source) = if let Some(counts) = &total.distribution {
        (
            counts.iter().enumerate().map(|(a, n)| n * (a as f64 - mean).powi(2)).sum::<f64>() / d,
            VarianceSource::Distribution,
        )
    } else if let Some(positions) = &total.positions {
        let second: f64 = positions.iter().enumerate().map(|(i, p)| (2 * i + 1) as f64 * p / d).sum();
        ((second - mean * mean).max(0.0), VarianceSource::Positions)
    } else {
        ((mean * (k as f64 - mean)).max(0.0), VarianceSource::UpperBound)
    };
    let independent = Estimate::normal(1.0 + mean, (step_variance / d).sqrt(), level)?;
    let numerators: Vec<f64> = batches.iter().map(|w| w.accepted).collect();
    let denominators: Vec<f64> = batches.iter().map(|w| w.steps).collect();
    let design = ratio_batch_means(&numerators, &denominators, level)?.map(|e| shift(e, 1.0));
    // Batches that agree exactly (a counter reset can leave two equal ratios) give a zero batch SE: that
    // is no estimate of the design effect, not a design effect of 0.
    let design_effect = design
        .as_ref()
        .filter(|e| independent.standard_error > 0.0 && e.standard_error > 0.0)
        .map(|e| (e.standard_error / independent.standard_error).powi(2));

    let mut positions = Vec::new();
    if let Some(counts) = &total.positions {
        let mut previous = 1.0;
        for (i, &count) in counts.iter().enumerate() {
            let p = count / d;
            let unconditional = Estimate::normal(p, (p * (1.0 - p)).max(0.0).sqrt() / d.sqrt(), level)?;
            let per_batch: Option<Vec<f64>> =
                batches.iter().map(|w| w.positions.as_ref().and_then(|ps| ps.get(i).copied())).collect();
            let design = match per_batch {
                Some(nums) => ratio_batch_means(&nums, &denominators, level)?,
                None => None,
            };
            let conditional = if previous > 0.0 { (p / previous).min(1.0) } else { 0.0 };
            previous = p;
            positions.push(PositionEstimate { position: i + 1, unconditional, design, conditional });
        }
    }
    Ok(AlEstimate {
        steps: d,
        accepted: total.accepted,
        k,
        step_variance,
        variance_source,
        independent,
        design,
        design_effect,
        batches: batches.len(),
        windows,
        series_warning: (batches.len() >= 2 && windows > 0 && windows < MIN_SERIES).then(|| {
            format!(
                "the series has {windows} {batch_source}, fewer than {MIN_SERIES}: too short to tell whether acceptance drifts in phases longer than its {} batches, so the design-effect interval may be too narrow",
                batches.len()
            )
        }),
        memory,
        memory_warning: memory.filter(Memory::too_short).map(|m| {
            format!(
                "the series' {windows} {batch_source} are worth only {:.1} independent ones (autocorrelation time {:.1} windows): acceptance drifts in phases too long for its {} batches, which must span at least {MIN_SPANS_PER_BATCH} autocorrelation times each ({:.0} independent windows), so no interval from it can be trusted; a series of about {} windows at this autocorrelation would do",
                m.effective_windows,
                m.autocorrelation_time,
                batches.len(),
                m.needed,
                m.windows_needed
            )
        }),
        batch_source: batch_source.to_string(),
        positions,
    })
}

fn shift(mut e: Estimate, by: f64) -> Estimate {
    e.point_estimate += by;
    e.confidence_interval.lower_bound += by;
    e.confidence_interval.upper_bound += by;
    e
}

/// The batch-means estimate of r = Σnum/Σden with a Student-t interval on n − 1 degrees of freedom;
/// `None` with fewer than two batches carrying any denominator.
///
/// # Errors
/// [`Error::Invalid`] when `level` is not in (0, 1).
pub fn ratio_batch_means(num: &[f64], den: &[f64], level: f64) -> Result<Option<Estimate>> {
    if !(level > 0.0 && level < 1.0) {
        return Err(Error::invalid("confidence level", format!("{level} must be strictly between 0 and 1")));
    }
    let pairs: Vec<(f64, f64)> = num.iter().zip(den).filter(|(_, d)| **d > 0.0).map(|(a, b)| (*a, *b)).collect();
    let n = pairs.len();
    if n < 2 {
        return Ok(None);
    }
    let total_den: f64 = pairs.iter().map(|p| p.1).sum();
    let r = pairs.iter().map(|p| p.0).sum::<f64>() / total_den;
    let ss: f64 = pairs.iter().map(|(a, d)| (a - r * d).powi(2)).sum();
    let nf = n as f64;
    let se = (nf / (nf - 1.0) * ss).sqrt() / total_den;
    let t = StudentsT::new(0.0, 1.0, nf - 1.0)
        .map_err(|e| Error::invalid("batches", e.to_string()))?
        .inverse_cdf(0.5 + level / 2.0);
    Ok(Some(Estimate {
        point_estimate: r,
        standard_error: se,
        confidence_interval: ConfidenceInterval {
            lower_bound: r - t * se,
            upper_bound: r + t * se,
            confidence_level: level,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> Location {
        Location::in_file("x", None)
    }

    #[test]
    fn chain_moments_match_the_distribution() {
        // Curve chain p = 0.78, 0.60, 0.45 → P(a = 0..3) = 0.22, 0.18, 0.15, 0.45, Var(a) ≈ 1.48
        // (docs/model.md §2).
        let by_counts =
            estimate(&Window::from_distribution(vec![2200.0, 1800.0, 1500.0, 4500.0]), &[], &[], 3, 0.95, "", &at())
                .unwrap();
        let mut w = Window::new(10000.0, 18300.0);
        w.positions = Some(vec![7800.0, 6000.0, 4500.0]);
        let by_positions = estimate(&w, &[], &[], 3, 0.95, "", &at()).unwrap();
        assert!((by_counts.step_variance - by_positions.step_variance).abs() < 1e-9);
        assert!((by_counts.step_variance - 1.4811).abs() < 1e-3);
        assert_eq!(by_positions.positions[1].conditional, 0.6 / 0.78);
        let bound = estimate(&Window::new(10000.0, 18300.0), &[], &[], 3, 0.95, "", &at()).unwrap();
        assert!(bound.step_variance >= by_counts.step_variance);
        assert!(estimate(&Window::new(0.0, 0.0), &[], &[], 3, 0.95, "", &at()).is_err());
    }

    #[test]
    fn batch_means_of_equal_batches_have_zero_spread() {
        let e = ratio_batch_means(&[10.0, 20.0], &[5.0, 10.0], 0.95).unwrap().unwrap();
        assert_eq!(e.point_estimate, 2.0);
        assert_eq!(e.standard_error, 0.0);
        assert!(ratio_batch_means(&[1.0], &[1.0], 0.95).unwrap().is_none());
        let e = ratio_batch_means(&[10.0, 30.0], &[10.0, 10.0], 0.95).unwrap().unwrap();
        // n/(n−1)·Σe² = 2·(100 + 100) = 400 → SE = 20/20 = 1; t(1) = 12.706.
        assert!((e.standard_error - 1.0).abs() < 1e-12);
        assert!((e.confidence_interval.upper_bound - 2.0 - 12.706).abs() < 1e-3);
    }
}
