//! The exact distribution of S_N, the steps a request takes to emit N tokens (docs/model.md §4), for i.i.d.
//! steps with tokens per step X = a + 1.
//!
//! P(S_N > s) = P(T_s < N) with T_s = X_1 + … + X_s, so it suffices to follow the *unfinished* mass
//! f_s(t) = P(T_s = t, S_N > s) for t < N through the convolution f_{s+1}(t) = Σ_j P(a = j)·f_s(t − 1 − j),
//! the mass crossing N at step s + 1 being P(S_N = s + 1). Started at s = 0 this costs O(N²/AL) work, so:
//! 1. the recursion starts at s₀ ≈ N/AL − 10 standard deviations, where P(S_N ≤ s₀) is negligible, from the
//!    law of T_{s₀} computed in one shot as the inverse DFT of the characteristic function raised to the
//!    power s₀, on a circle of M ≥ 36 standard deviations so that wrap-around mass is negligible, keeping
//!    12 standard deviations left of the mean and treating values within 8× the largest negative output
//!    (pure round-off) of zero as the transform's noise;
//! 2. entries of f below 10⁻²² on the left edge are dropped as the mass moves right, and the recursion stops
//!    once the unfinished mass is below 10⁻¹⁴.
//!
//! What was dropped or fell outside the window is reported as `truncated_mass`. For N = 100,000 and k = 3
//! the work is a 8,192-point FFT and ~1,500 convolution steps over a few thousand tokens.

use serde::Serialize;

use crate::accept::Distribution;
use crate::error::{Error, Result};

use super::request::MAX_OUTPUT_TOKENS;

/// Standard deviations of slack between the first simulated step s₀ and the mean of S_N.
const START_SIGMAS: f64 = 10.0;
/// Unfinished mass at which the recursion stops.
const STOP_MASS: f64 = 1e-14;
/// Left-edge probabilities below this are dropped from the window.
const DROP_BELOW: f64 = 1e-22;
/// Standard deviations kept left of the mean when the one-shot law of T_{s₀} is laid into the window.
const WINDOW_SIGMAS: f64 = 12.0;
/// Below this many steps the recursion simply starts at s = 0.
const DIRECT_START: f64 = 64.0;

/// The law of S_N: P(S_N = s) for s = `first_step`, `first_step` + 1, ….
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepsDistribution {
    /// Output tokens N.
    pub output_tokens: u32,
    /// The smallest step count with a stored probability.
    pub first_step: u64,
    /// P(S_N = first_step + i).
    pub probabilities: Vec<f64>,
    /// Probability left out by the truncations (≲ 10⁻¹³).
    pub truncated_mass: f64,
}

impl StepsDistribution {
    /// E(S_N).
    pub fn mean(&self) -> f64 {
        self.iter().map(|(s, q)| s as f64 * q).sum::<f64>() / self.total()
    }

    /// Var(S_N).
    pub fn variance(&self) -> f64 {
        let mean = self.mean();
        self.iter().map(|(s, q)| (s as f64 - mean).powi(2) * q).sum::<f64>() / self.total()
    }

    /// P(S_N ≤ s).
    pub fn cdf(&self, s: u64) -> f64 {
        self.iter().take_while(|(step, _)| *step <= s).map(|(_, q)| q).sum()
    }

    /// The smallest s with P(S_N ≤ s) ≥ p.
    pub fn quantile(&self, p: f64) -> u64 {
        let mut cumulative = 0.0;
        for (s, q) in self.iter() {
            cumulative += q;
            if cumulative >= p * self.total() {
                return s;
            }
        }
        self.first_step + self.probabilities.len() as u64 - 1
    }

    /// (s, P(S_N = s)) pairs.
    pub fn iter(&self) -> impl Iterator<Item = (u64, f64)> + '_ {
        self.probabilities.iter().enumerate().map(|(i, &q)| (self.first_step + i as u64, q))
    }

    fn total(&self) -> f64 {
        self.probabilities.iter().sum()
    }
}

/// The exact law of the steps needed to emit `output_tokens` tokens when each step accepts a ~ `distribution`
/// independently.
///
/// # Errors
/// [`Error::Invalid`] when `output_tokens` is 0 or above the simulator's maximum.
///
/// ```
/// use alsim::accept::Distribution;
/// let d = Distribution::new(vec![0.22, 0.18, 0.15, 0.45], "seed")?;
/// let exact = alsim::sim::steps_to_emit(&d, 100_000)?;
/// // Renewal theory: E(S_N) ≈ N/AL, Var(S_N) ≈ N·Var(X)/AL³.
/// assert!((exact.mean() - 100_000.0 / 2.83).abs() < 1.0);
/// assert!((exact.variance() / (100_000.0 * 1.4811 / 2.83f64.powi(3)) - 1.0).abs() < 0.01);
/// # Ok::<(), alsim::Error>(())
/// ```
pub fn steps_to_emit(distribution: &Distribution, output_tokens: u32) -> Result<StepsDistribution> {
    if output_tokens == 0 || output_tokens > MAX_OUTPUT_TOKENS {
        return Err(Error::parameter(
            "output_len",
            format!("{output_tokens} must be between 1 and {MAX_OUTPUT_TOKENS} for the exact distribution"),
        ));
    }
    let q = distribution.probabilities();
    let k = q.len() - 1;
    let n = output_tokens as usize;
    let al = distribution.acceptance_length();
    let var = distribution.variance();
    // Start where T_{s0} sits `sigmas` standard deviations below N; widen if the start was too late.
    let sd_t = (n as f64 * var / al).sqrt();
    let mut sigmas = START_SIGMAS;
    let (s0, base, mut f, mut truncated) = loop {
        let start = ((n as f64 - 1.0 - sigmas * sd_t - (k + 1) as f64) / al).floor();
        if start < DIRECT_START {
            let mut f = vec![0.0; n];
            f[0] = 1.0;
            break (0usize, 0usize, f, 0.0);
        }
        let window = initial_window(q, start as usize, n, sigmas);
        // Mass already past N means the start was too late: back off (twice at most; what remains is
        // reported as truncated).
        if window.3 <= STOP_MASS || sigmas >= 4.0 * START_SIGMAS {
            break window;
        }
        sigmas *= 2.0;
    };
    let mut g = vec![0.0; f.len()];
    let width = f.len(); // index i ↔ tokens t = base + i, t < N
    // P(X ≥ d) for the tokens still missing, d = N − t ∈ 1..=k+1.
    let mut tail = vec![0.0; k + 2];
    for d in (1..=k + 1).rev() {
        tail[d] = tail.get(d + 1).copied().unwrap_or(0.0) + q[d - 1];
    }
    let mut lo = f.iter().position(|&x| x > 0.0).unwrap_or(width);
    let mut unfinished: f64 = f[lo..].iter().sum();
    let mut probabilities = Vec::new();
    while unfinished > STOP_MASS && lo < width {
        // Mass that crosses N on this step.
        let near = width.saturating_sub(k + 1).max(lo);
        let finished: f64 = (near..width).map(|i| f[i] * tail[n - (base + i)]).sum();
        probabilities.push(finished);
        // Mass that stays below N, shifted by X = 1 + j.
        g[lo..].fill(0.0);
        for (j, &qj) in q.iter().enumerate() {
            let shift = j + 1;
            if lo + shift >= width || qj == 0.0 {
                continue;
            }
            for (out, &x) in g[lo + shift..].iter_mut().zip(&f[lo..width - shift]) {
                *out += qj * x;
            }
        }
        std::mem::swap(&mut f, &mut g);
        while lo < width && f[lo] < DROP_BELOW {
            truncated += f[lo];
            f[lo] = 0.0;
            lo += 1;
        }
        unfinished = (unfinished - finished).max(0.0);
        if probabilities.len() % 64 == 0 {
            // Re-sum now and then so round-off in the running difference cannot stop the loop early or late.
            unfinished = f[lo.min(width)..].iter().sum();
        }
    }
    truncated += unfinished;
    Ok(StepsDistribution { output_tokens, first_step: s0 as u64 + 1, probabilities, truncated_mass: truncated })
}

/// f_{s0}(t) for t < N on a window [base, N) of ±(`sigmas` + 8) standard deviations around the mean:
/// returns (s0, base, f, mass already at or past N).
fn initial_window(q: &[f64], s0: usize, n: usize, sigmas: f64) -> (usize, usize, Vec<f64>, f64) {
    let k = q.len() - 1;
    let mean_a: f64 = q.iter().enumerate().map(|(j, p)| j as f64 * p).sum();
    let var_a: f64 = q.iter().enumerate().map(|(j, p)| (j as f64 - mean_a).powi(2) * p).sum();
    let sd_a = (s0 as f64 * var_a).sqrt();
    let size = ((2.0 * (sigmas + 8.0) * sd_a) as usize + 4 * (k + 1) + 64).next_power_of_two();
    let law = power_law_mod(q, s0, size);
    // The window of A = T − s0 starts WINDOW_SIGMAS below its mean (true mass further left is < 10⁻³⁰);
    // residues map back into it. Starting any lower would let round-off specks of the transform far
    // to the left ride along as a second, phantom distribution that the recursion would have to carry.
    let low_a = ((s0 as f64 * mean_a - WINDOW_SIGMAS * sd_a).floor() as i64 - 4 * (k as i64 + 1)).max(0) as usize;
    let base = s0 + low_a;
    // Negative outputs are pure round-off, so the most negative one measures the transform's noise floor;
    // values within a few times that of zero are not probability.
    let noise = 8.0 * law.iter().fold(0.0f64, |lowest, &p| lowest.min(p)).abs();
    let mut outside = 0.0;
    let mut f = vec![0.0; n.saturating_sub(base)];
    for offset in 0..size {
        let a = low_a + offset;
        let p = law[a % size];
        let p = if p <= noise { 0.0 } else { p };
        let t = s0 + a;
        if t < n {
            f[t - base] = p;
        } else {
            outside += p;
        }
    }
    (s0, base.min(n), f, outside)
}

/// P(a_1 + … + a_s ≡ r mod `size`) for r = 0..size: the inverse DFT of φ^s, φ the DFT of `q`.
fn power_law_mod(q: &[f64], s: usize, size: usize) -> Vec<f64> {
    let mut data: Vec<Complex> = (0..size).map(|i| Complex(q.get(i).copied().unwrap_or(0.0), 0.0)).collect();
    fft(&mut data, false);
    for z in &mut data {
        *z = z.powu(s);
    }
    fft(&mut data, true);
    data.iter().map(|z| z.0 / size as f64).collect()
}

#[derive(Debug, Clone, Copy)]
struct Complex(f64, f64);

impl Complex {
    fn mul(self, o: Complex) -> Complex {
        Complex(self.0 * o.0 - self.1 * o.1, self.0 * o.1 + self.1 * o.0)
    }

    fn powu(self, mut e: usize) -> Complex {
        let (mut result, mut base) = (Complex(1.0, 0.0), self);
        while e > 0 {
            if e & 1 == 1 {
                result = result.mul(base);
            }
            base = base.mul(base);
            e >>= 1;
        }
        result
    }
}

/// In-place iterative radix-2 FFT (Cooley–Tukey); `inverse` flips the twiddle sign (no 1/n scaling).
fn fft(data: &mut [Complex], inverse: bool) {
    let n = data.len();
    debug_assert!(n.is_power_of_two());
    let mut j = 0;
    for i in 1..n {
        let mut bit = n >> 1;
        while j & bit != 0 {
            j ^= bit;
            bit >>= 1;
        }
        j |= bit;
        if i < j {
            data.swap(i, j);
        }
    }
    let sign = if inverse { 1.0 } else { -1.0 };
    let mut len = 2;
    while len <= n {
        let angle = sign * 2.0 * std::f64::consts::PI / len as f64;
        let half = len / 2;
        // Twiddles computed directly (not by repeated multiplication) to keep round-off at one ulp.
        let twiddles: Vec<Complex> =
            (0..half).map(|i| Complex((angle * i as f64).cos(), (angle * i as f64).sin())).collect();
        for chunk in data.chunks_mut(len) {
            let (left, right) = chunk.split_at_mut(half);
            for ((a, b), w) in left.iter_mut().zip(right.iter_mut()).zip(&twiddles) {
                let t = b.mul(*w);
                *b = Complex(a.0 - t.0, a.1 - t.1);
                *a = Complex(a.0 + t.0, a.1 + t.1);
            }
        }
        len <<= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct O(N²) recursion from s = 0, for checking the windowed one.
    fn brute(q: &[f64], n: usize) -> Vec<f64> {
        let mut f = vec![0.0; n];
        f[0] = 1.0;
        let mut out = vec![0.0; n + 1];
        for finished_at in out.iter_mut().skip(1) {
            let mut g = vec![0.0; n];
            for (t, &mass) in f.iter().enumerate() {
                for (j, &p) in q.iter().enumerate() {
                    let next = t + j + 1;
                    if next >= n {
                        *finished_at += mass * p;
                    } else {
                        g[next] += mass * p;
                    }
                }
            }
            f = g;
        }
        out
    }

    #[test]
    fn windowed_recursion_matches_brute_force() {
        for (probs, n) in [
            (vec![0.22, 0.18, 0.15, 0.45], 700),
            (vec![0.0, 0.17, 0.83, 0.0], 900),
            (vec![0.6, 0.4], 400),
            (vec![0.22, 0.18, 0.15, 0.45], 5),
        ] {
            let d = Distribution::new(probs.clone(), "t").unwrap();
            let fast = steps_to_emit(&d, n).unwrap();
            let slow = brute(&probs, n as usize);
            for (s, p) in fast.iter() {
                assert!((p - slow[s as usize]).abs() < 1e-12, "n {n} s {s}: {p} vs {}", slow[s as usize]);
            }
            assert!(fast.truncated_mass < 1e-12, "{}", fast.truncated_mass);
            let covered: f64 = fast.probabilities.iter().sum();
            assert!((covered - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn deterministic_steps() {
        let d = Distribution::new(vec![0.0, 0.0, 1.0], "t").unwrap();
        let exact = steps_to_emit(&d, 100_000).unwrap();
        assert_eq!(exact.quantile(0.5), 33_334);
        assert!((exact.mean() - 33_334.0).abs() < 1e-9);
    }

    #[test]
    fn fft_round_trip() {
        let mut data: Vec<Complex> = (0..16).map(|i| Complex(i as f64, 0.0)).collect();
        fft(&mut data, false);
        fft(&mut data, true);
        for (i, z) in data.iter().enumerate() {
            assert!((z.0 / 16.0 - i as f64).abs() < 1e-12);
        }
    }
}
