//! Drawing one step's accepted count with one 32-bit random draw, and the per-request random streams.
//!
//! [`StepSampler`] is Walker's alias method (Vose's construction, "A linear algorithm for generating
//! random numbers with a given distribution", IEEE TSE 17(9), 1991) packed so that a single `u32` gives both
//! the column and the coin: the 64-bit product `u · (k+1)` has the column in its high word and a uniform
//! fraction in its low word (Lemire, "Fast random integer generation in an interval", ACM TOMACS 29(1), 2019).
//! Each outcome's probability is therefore resolved to within (k+1)·2⁻³², far below what any Monte Carlo
//! run here can see (10⁹ steps estimate a probability to ±3·10⁻⁵).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::accept::Distribution;
use crate::units::MAX_DRAFT_LEN;

/// Possible accepted counts 0..=k.
const SLOTS: usize = MAX_DRAFT_LEN + 1;

/// Entries in a sampler's table: the power of two above [`SLOTS`], so that masking an index with
/// `TABLE_SLOTS - 1` proves it in bounds and the step loop carries no bounds checks.
pub(crate) const TABLE_SLOTS: usize = SLOTS.next_power_of_two();

/// One alias-table column: the outcome `kept` when the fraction is at most `below` (out of 2³² − 1), else
/// `alias`. A column that never keeps its own outcome has `kept == alias`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Column {
    below: u32,
    kept: u8,
    alias: u8,
}

/// Samples the number of accepted drafts a ∈ {0..k} of one step from a [`Distribution`] in O(1) with one
/// `u32` draw.
///
/// The table is stored inline (no heap), so building one per request — as heterogeneous requests do —
/// costs O(k) and no allocation.
///
/// ```
/// use alsim::accept::Distribution;
/// use alsim::sim::StepSampler;
///
/// let d = Distribution::new(vec![0.22, 0.18, 0.15, 0.45], "example").unwrap();
/// let sampler = StepSampler::new(&d);
/// // u = 0 lands in column 0's kept part; the draw is a pure function of u.
/// assert_eq!(sampler.accepted_from(0), 0);
/// assert!(sampler.accepted_from(u32::MAX) <= 3);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepSampler {
    columns: u64,
    table: [Column; TABLE_SLOTS],
}

impl StepSampler {
    /// Builds the alias table for `distribution`.
    pub fn new(distribution: &Distribution) -> StepSampler {
        Self::from_probabilities(distribution.probabilities())
    }

    /// Builds the alias table from P(a = 0..k); the caller guarantees a distribution (non-negative, sum 1,
    /// 2 ≤ len ≤ k_max + 1), as [`Distribution`] and the internal odds scaling do.
    pub(crate) fn from_probabilities(probabilities: &[f64]) -> StepSampler {
        let n = probabilities.len();
        debug_assert!((2..=SLOTS).contains(&n));
        let total: f64 = probabilities.iter().sum();
        let mut scaled = [0.0f64; SLOTS];
        let mut small = [0usize; SLOTS];
        let mut large = [0usize; SLOTS];
        let (mut n_small, mut n_large) = (0, 0);
        for (j, &q) in probabilities.iter().enumerate() {
            scaled[j] = q / total * n as f64;
            if scaled[j] < 1.0 {
                small[n_small] = j;
                n_small += 1;
            } else {
                large[n_large] = j;
                n_large += 1;
            }
        }
        let mut table = [Column::default(); TABLE_SLOTS];
        const FULL: f64 = 4_294_967_296.0; // 2^32
        while n_small > 0 && n_large > 0 {
            n_small -= 1;
            let s = small[n_small];
            let l = large[n_large - 1];
            // The own outcome holds `kept_draws` of the column's 2³² fractions (at most 2³² as scaled < 1).
            let kept_draws = (scaled[s] * FULL).round() as u64;
            table[s] = match kept_draws.checked_sub(1) {
                None => Column { below: u32::MAX, kept: l as u8, alias: l as u8 },
                Some(below) => Column { below: below as u32, kept: s as u8, alias: l as u8 },
            };
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                n_large -= 1;
                small[n_small] = l;
                n_small += 1;
            }
        }
        // Whatever is left holds (up to round-off) exactly one column's worth: always keep it.
        for &j in large[..n_large].iter().chain(&small[..n_small]) {
            table[j] = Column { below: u32::MAX, kept: j as u8, alias: j as u8 };
        }
        StepSampler { columns: n as u64, table }
    }

    /// The draft length k.
    pub fn k(&self) -> usize {
        self.columns as usize - 1
    }

    /// The accepted count a for the 32-bit draw `u` (a pure function: the same `u` gives the same a).
    #[inline(always)]
    pub fn accepted_from(&self, u: u32) -> usize {
        let product = u as u64 * self.columns;
        // The column is below `columns` ≤ TABLE_SLOTS by construction; the mask lets the compiler see it.
        let entry = self.table[(product >> 32) as usize & (TABLE_SLOTS - 1)];
        // Branch-free select: the coin is near 50/50 for many columns, so a branch would mispredict.
        let take_alias = 0u8.wrapping_sub((product as u32 > entry.below) as u8);
        (entry.kept ^ ((entry.kept ^ entry.alias) & take_alias)) as usize & (TABLE_SLOTS - 1)
    }

    /// Draws one step's accepted count from `rng` (one `u32`).
    #[inline(always)]
    pub fn accepted<R: Rng + ?Sized>(&self, rng: &mut R) -> usize {
        self.accepted_from(rng.next_u32())
    }

    /// The law this table samples exactly, P(a = j) as multiples of 2⁻³²·(k+1)⁻¹ — equal to the requested
    /// distribution within (k+1)·2⁻³² per outcome.
    pub fn realised_probabilities(&self) -> Vec<f64> {
        let n = self.columns as usize;
        let mut out = vec![0.0; n];
        for column in &self.table[..n] {
            let kept = (column.below as f64 + 1.0) / 4_294_967_296.0;
            out[column.kept as usize] += kept / n as f64;
            out[column.alias as usize] += (1.0 - kept) / n as f64;
        }
        out
    }
}

/// The random stream of request (or batch) `index` under `seed`: ChaCha8 keyed by the seed, with the
/// index as its 64-bit stream number. Streams never overlap, so a request's draws do not depend on
/// which thread runs it or in what order — results are identical at any thread count.
///
/// ```
/// use rand::Rng;
/// let mut a = alsim::sim::request_rng(7, 3);
/// let mut b = alsim::sim::request_rng(7, 3);
/// assert_eq!(a.next_u64(), b.next_u64());
/// ```
pub fn request_rng(seed: u64, index: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(index);
    rng
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_reproduces_the_distribution() {
        for probs in [
            vec![0.22, 0.18, 0.15, 0.45],
            vec![0.0, 0.17, 0.83, 0.0],
            vec![1.0, 0.0],
            vec![0.0, 0.0, 0.0, 1.0],
            vec![0.1; 10],
        ] {
            let d = Distribution::new(probs.clone(), "t").unwrap();
            let got = StepSampler::new(&d).realised_probabilities();
            for (g, w) in got.iter().zip(&probs) {
                assert!((g - w).abs() < 1e-8, "{got:?} vs {probs:?}");
            }
        }
    }

    #[test]
    fn impossible_outcomes_never_drawn() {
        let d = Distribution::new(vec![0.0, 0.17, 0.83, 0.0], "t").unwrap();
        let s = StepSampler::new(&d);
        for u in (0..=u32::MAX).step_by(9_973) {
            let a = s.accepted_from(u);
            assert!(a == 1 || a == 2, "u = {u} gave {a}");
        }
        assert!(matches!(s.accepted_from(u32::MAX), 1 | 2));
    }

    #[test]
    fn streams_differ_and_repeat() {
        let mut a = request_rng(1, 0);
        let mut b = request_rng(1, 1);
        assert_ne!(a.next_u64(), b.next_u64());
        assert_eq!(request_rng(1, 5).next_u32(), request_rng(1, 5).next_u32());
    }
}
