//! Does the AL interval cover the truth when acceptance drifts in phases? A simulator of metric time
//! series for checking it (docs/model.md §5: "the interval's coverage must hold under phases several scrape
//! intervals long, not only under i.i.d. steps").
//!
//! A run alternates between an easy and a hard phase (two chains), each phase lasting an exponential time
//! with a given mean, measured in windows (scrape or log intervals); phases of mean length 0 mean every
//! step picks its phase afresh, i.e. independent steps from the mixture. Each window holds the same number
//! of steps, split between the phases by the time spent in each, and its per-count step totals are drawn
//! exactly (multinomial, as sequential binomials). The window's per-position counts are what alsim reads
//! from vLLM or ATOM; [`coverage`] runs them through the same [`super::estimate()`] and
//! [`super::AlEstimate::decisive`] interval that `alsim eval` judges a pin by, and [`verdicts`] through
//! [`super::evaluate`] itself: how often a pin is called wrong (exit 1) or left undecided (exit 3).

use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Binomial, Distribution as _, Exp};

use super::estimate::{batch, estimate, ratio_batch_means};
use super::{Evidence, InputFormat, Location, PinUnderTest, Verdict, Window, evaluate};
use crate::engine::Engine;
use crate::error::{Error, Result};

/// A run whose acceptance switches between two chains.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseModel {
    /// Unconditional per-position rates p_1..p_k of the easy phase.
    pub easy: Vec<f64>,
    /// Unconditional per-position rates of the hard phase (same k).
    pub hard: Vec<f64>,
    /// Mean phase length in windows; 0 for independent steps.
    pub mean_phase: f64,
    /// Verification steps per window.
    pub steps_per_window: u64,
    /// Windows per run.
    pub windows: usize,
}

impl PhaseModel {
    /// The long-run AL: half the time in each phase, steps evenly spread in time.
    pub fn true_al(&self) -> f64 {
        1.0 + 0.5 * (self.easy.iter().sum::<f64>() + self.hard.iter().sum::<f64>())
    }

    /// One run's windows.
    pub fn run(&self, rng: &mut impl Rng) -> Result<Vec<Window>> {
        let k = self.easy.len();
        if k == 0 || self.hard.len() != k {
            return Err(Error::invalid("phases", "easy and hard chains need the same k ≥ 1"));
        }
        let law = |p: &[f64]| -> Vec<f64> {
            (0..=k).map(|j| if j == 0 { 1.0 } else { p[j - 1] } - p.get(j).copied().unwrap_or(0.0)).collect()
        };
        let (easy, hard) = (law(&self.easy), law(&self.hard));
        let sojourn = (self.mean_phase > 0.0)
            .then(|| Exp::new(1.0 / self.mean_phase).map_err(|e| Error::invalid("mean phase", e.to_string())))
            .transpose()?;
        let mut in_easy = rng.random::<bool>();
        let mut next_switch = sojourn.as_ref().map_or(f64::INFINITY, |d| d.sample(rng));
        let m = self.steps_per_window;
        let mut out = Vec::with_capacity(self.windows);
        for _ in 0..self.windows {
            let n_easy = match &sojourn {
                None => draw_binomial(m, 0.5, rng)?,
                Some(d) => {
                    let (mut t, mut easy_time) = (0.0, 0.0);
                    while next_switch < 1.0 - t {
                        easy_time += if in_easy { next_switch } else { 0.0 };
                        t += next_switch;
                        in_easy = !in_easy;
                        next_switch = d.sample(rng);
                    }
                    easy_time += if in_easy { 1.0 - t } else { 0.0 };
                    next_switch -= 1.0 - t;
                    (easy_time * m as f64).round() as u64
                }
            };
            let mut counts = vec![0.0; k + 1];
            for (n, law) in [(n_easy, &easy), (m - n_easy, &hard)] {
                multinomial(n, law, &mut counts, rng)?;
            }
            let w = Window::from_distribution(counts);
            // As vLLM exports it: per-position counts, no per-count distribution.
            out.push(Window { distribution: None, ..w });
        }
        Ok(out)
    }
}

fn draw_binomial(n: u64, p: f64, rng: &mut impl Rng) -> Result<u64> {
    Ok(Binomial::new(n, p.clamp(0.0, 1.0)).map_err(|e| Error::invalid("binomial", e.to_string()))?.sample(rng))
}

/// Adds a multinomial(n, law) draw to `counts`, as sequential binomials.
fn multinomial(mut n: u64, law: &[f64], counts: &mut [f64], rng: &mut impl Rng) -> Result<()> {
    let mut rest = 1.0;
    for (j, &p) in law.iter().enumerate() {
        if n == 0 {
            break;
        }
        let x = if j + 1 == law.len() || rest <= 0.0 { n } else { draw_binomial(n, p / rest, rng)? };
        counts[j] += x as f64;
        n -= x;
        rest -= p;
    }
    Ok(())
}

/// How often each interval covered the true AL.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coverage {
    /// Runs simulated.
    pub runs: usize,
    /// Share covered by the interval `alsim eval` decides on ([`super::AlEstimate::decisive`]).
    pub decisive: f64,
    /// Share covered by the batch-means (design-effect) interval.
    pub design: f64,
    /// Share covered by the independent interval.
    pub independent: f64,
    /// Share covered by batch means with one batch per window, which ignores correlation between
    /// windows (what alsim did before grouping them).
    pub per_window: f64,
    /// Share of runs whose series is too short for its own autocorrelation, which `alsim eval` leaves
    /// undecided ([`super::AlEstimate::memory_warning`]).
    pub undecided: f64,
}

/// Simulates `runs` runs of `model` from `seed` and counts how often each interval at `level` covers the
/// true AL.
///
/// # Errors
/// [`Error::Invalid`] for an invalid model or level.
///
/// ```
/// use alsim::evidence::coverage::{coverage, PhaseModel};
/// let model = PhaseModel {
///     easy: vec![0.9, 0.765, 0.612],
///     hard: vec![0.45, 0.1575, 0.04725],
///     mean_phase: 5.0,
///     steps_per_window: 200,
///     windows: 100,
/// };
/// let c = coverage(&model, 50, 7, 0.95)?;
/// assert!(c.independent < c.decisive);
/// # Ok::<(), alsim::Error>(())
/// ```
pub fn coverage(model: &PhaseModel, runs: usize, seed: u64, level: f64) -> Result<Coverage> {
    let truth = model.true_al();
    let k = model.easy.len();
    let at = Location::in_file("simulated", None);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut decisive, mut design, mut independent, mut per_window, mut undecided) = (0usize, 0, 0, 0, 0);
    for _ in 0..runs {
        let windows = model.run(&mut rng)?;
        let total = Window::sum(&windows).ok_or_else(|| Error::invalid("windows", "a run needs windows"))?;
        let e = estimate(&total, &batch(&windows), &[&windows], k, level, "windows", &at)?;
        decisive += usize::from(e.decisive().covers(truth));
        undecided += usize::from(e.memory_warning.is_some());
        design += usize::from(e.design.as_ref().is_some_and(|d| d.covers(truth)));
        independent += usize::from(e.independent.covers(truth));
        let ungrouped = ratio_batch_means(
            &windows.iter().map(|w| w.accepted).collect::<Vec<_>>(),
            &windows.iter().map(|w| w.steps).collect::<Vec<_>>(),
            level,
        )?;
        per_window += usize::from(ungrouped.is_some_and(|u| u.covers(truth - 1.0)));
    }
    let share = |n: usize| n as f64 / runs.max(1) as f64;
    Ok(Coverage {
        runs,
        decisive: share(decisive),
        design: share(design),
        independent: share(independent),
        per_window: share(per_window),
        undecided: share(undecided),
    })
}

/// What `alsim eval` says of a pin over simulated runs: shares of the runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdicts {
    /// Runs simulated.
    pub runs: usize,
    /// Share whose decisive interval covers the true AL.
    pub covered: f64,
    /// Share called "pin too high" or "pin too low" (exit 1).
    pub wrong: f64,
    /// Share left inconclusive (exit 3).
    pub undecided: f64,
    /// Share whose decisive interval lies outside the pin's band: what would be called wrong were no run
    /// left undecided for its autocorrelation.
    pub outside: f64,
}

/// Simulates `runs` runs of `model` from `seed` (as [`coverage`] does) and judges a pin of `pin_al` at the
/// default tolerance and `level` on each, as `alsim eval` does with the run's windows as its time series.
///
/// # Errors
/// [`Error::Invalid`] for an invalid model, pin or level.
pub fn verdicts(model: &PhaseModel, pin_al: f64, runs: usize, seed: u64, level: f64) -> Result<Verdicts> {
    let truth = model.true_al();
    let k = model.easy.len();
    let pin = PinUnderTest::new(pin_al, k, super::verdict::DEFAULT_TOLERANCE, level, "simulated")?;
    let (band_lo, band_hi) = (pin.al - pin.tolerance, pin.al + pin.tolerance);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut covered, mut wrong, mut undecided, mut outside) = (0usize, 0usize, 0usize, 0usize);
    for _ in 0..runs {
        let windows = model.run(&mut rng)?;
        let evidence = Evidence {
            location: Location::in_file("simulated", None),
            engine: Engine::Vllm,
            format: InputFormat::Prometheus,
            k: None,
            total: Window::sum(&windows).ok_or_else(|| Error::invalid("windows", "a run needs windows"))?,
            batches: windows,
            notes: Vec::new(),
        };
        let report = evaluate(&pin, &[evidence])?;
        let ci = report.files[0].estimate.decisive().confidence_interval;
        covered += usize::from(ci.lower_bound <= truth && truth <= ci.upper_bound);
        wrong += usize::from(report.overall.differs());
        undecided += usize::from(report.overall == Verdict::Inconclusive);
        outside += usize::from(ci.upper_bound < band_lo || ci.lower_bound > band_hi);
    }
    let share = |n: usize| n as f64 / runs.max(1) as f64;
    Ok(Verdicts {
        runs,
        covered: share(covered),
        wrong: share(wrong),
        undecided: share(undecided),
        outside: share(outside),
    })
}
