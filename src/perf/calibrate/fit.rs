//! The fits calibration makes: scales on groups of the step-time coefficients by bounded least squares in
//! relative error, and one acceptance length per group of serving pairs by a one-dimensional search.
//!
//! The step time is linear in its coefficients (`T = comm + Σ cᵢ·fᵢ`, [`crate::perf::terms`]), so scaling
//! the profile's default coefficients group by group keeps the fit linear. How many groups a fit may move
//! depends on how many distinct points it has: one point moves the one scale of memory, compute and fixed time
//! that moves it most, and names the other two, held at their priors (one time cannot tell the fixed time from
//! bandwidth); two separate the fixed time from the rest; three or more separate memory, compute and fixed
//! time. A scale the rows cannot tell apart from the others (one that moves their times by less than
//! [`IDENTIFIABLE`] on its own) keeps its starting value, named. Each group is bounded on
//! its own: one that would push an efficiency above 1 (`flops_eff` above the GEMM rate the GPU was measured to
//! reach, [`Observation::gemm_ceiling`]), below 1 % or a time below zero is held at its bound
//! and the rest refitted; the result says which. A fit is never worse than its start on its own rows: where
//! it would be, the start is kept and the result says so.
//!
//! Spec-off rows carry no speculation features, yet the speculation overheads move with the target's: the
//! per-draft-token overhead with the per-token ones (compute group), the per-draft-forward and per-step ones
//! with the fixed times (fixed group) — they are the same engine work, and a kernel-only measurement (no
//! engine) that fits the target's overheads near zero must not keep a serving engine's speculation costs.

use serde::Serialize;

use crate::perf::terms::{Efficiencies, PARAMETERS, StepTerms};

/// Lowest efficiency a fit may reach: below it the "efficiency" is absorbing something the model lacks.
const MIN_EFFICIENCY: f64 = 0.01;
/// Largest factor a fit may put on a default overhead.
const MAX_OVERHEAD_SCALE: f64 = 100.0;

/// Re-linearisations of a fit whose parts overlap memory and math (features move with the efficiencies).
const MAX_ROUNDS: usize = 100;

/// One measured step and its terms under the model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observation {
    /// The modelled step's terms.
    pub terms: StepTerms,
    /// Measured step, seconds.
    pub measured_s: f64,
    /// Rows of the file this observation stands for (a row repeated verbatim is fitted once, weighted).
    pub weight: f64,
    /// The share of the datasheet's GEMM peak the GPU's own matmul reached where the file measured it (1
    /// where it did not): no fit puts `flops_eff` above it. Spec-off rows of a model whose GEMMs stay under
    /// the weight stream cannot show the GEMM rate, and would leave it at the datasheet peak.
    pub gemm_ceiling: f64,
}

impl Observation {
    /// The modelled step under `eff`, seconds.
    pub fn predicted(&self, eff: &Efficiencies) -> f64 {
        self.terms.time(eff).total
    }

    /// Its share of the squared relative error the fits minimise under `eff`.
    fn squared_error(&self, eff: &Efficiencies) -> f64 {
        self.weight * (self.predicted(eff) / self.measured_s - 1.0).powi(2)
    }
}

/// A group of coefficients that one scale moves together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// HBM efficiency.
    Memory,
    /// GEMM and attention efficiencies and the per-token overheads (per token, per draft token, per routed token
    /// per MoE layer).
    Compute,
    /// Fixed time per forward, per layer, per MoE layer, per draft layer pass and per speculative step.
    Fixed,
    /// Draft-forward, per-step and per-draft-token speculation overheads.
    Speculation,
}

impl Group {
    /// The coefficient indices (in [`crate::perf::terms::COLUMNS`] order) the group moves.
    pub fn members(self) -> &'static [usize] {
        match self {
            Group::Memory => &[0],
            Group::Compute => &[1, 2, 6, 9, 10],
            Group::Fixed => &[3, 4, 5, 7, 8],
            Group::Speculation => &[7, 8, 9],
        }
    }

    /// The name printed in reports.
    pub fn name(self) -> &'static str {
        match self {
            Group::Memory => "memory",
            Group::Compute => "compute",
            Group::Fixed => "fixed",
            Group::Speculation => "speculation",
        }
    }
}

/// One fitted scale.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scale {
    /// The groups it moves together.
    pub groups: Vec<Group>,
    /// The factor on the default coefficients (time at default × scale).
    pub value: f64,
    /// Clamped at its bound (efficiency 1 or 1 %, time 0, or the overhead cap).
    pub at_bound: bool,
}

/// The result of a fit: the efficiencies and the scales that produced them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScaleFit {
    /// The efficiencies after the fit.
    pub efficiency: Efficiencies,
    /// What moved.
    pub scales: Vec<Scale>,
    /// Whether the overlap was fitted too, and if so whether it sits at 1 or at [`MAX_FITTED_OVERLAP`].
    pub overlap_at_bound: Option<bool>,
    /// Groups the rows cannot identify (see [`IDENTIFIABLE`]): kept at their starting values.
    pub unidentified: Vec<Group>,
    /// The fit was worse than the starting profile on its own rows, so the start was kept.
    pub kept_start: bool,
}

impl ScaleFit {
    /// No fit: `efficiency` as it is (a profile scored, not refitted).
    pub fn unfitted(efficiency: Efficiencies) -> Self {
        ScaleFit { efficiency, scales: Vec::new(), overlap_at_bound: None, unidentified: Vec::new(), kept_start: false }
    }

    /// Whether any fitted quantity sits at its bound.
    pub fn at_bound(&self) -> bool {
        self.scales.iter().any(|s| s.at_bound) || self.overlap_at_bound == Some(true)
    }

    /// The names of what sits at its bound: the groups of each clamped scale, then `overlap`.
    pub fn bounds_hit(&self) -> Vec<&'static str> {
        let mut hit: Vec<&str> =
            self.scales.iter().filter(|s| s.at_bound).flat_map(|s| s.groups.iter().map(|g| g.name())).collect();
        if self.overlap_at_bound == Some(true) {
            hit.push("overlap");
        }
        hit
    }
}

/// Largest overlap a fit may choose: beyond it the p-norm is a roofline's max for any practical purpose.
pub const MAX_FITTED_OVERLAP: f64 = 4.0;

/// Distinct points a target fit needs before it also fits the overlap (three scales and the exponent).
pub const OVERLAP_POINTS: usize = 4;

/// The target fit: [`fit_scales`] over [`target_groups`]; with `overlap` and enough points, also the
/// overlap exponent that minimises the squared relative error (a one-dimensional search around the linear fits).
pub fn fit_target(start: &Efficiencies, obs: &[Observation], overlap: bool) -> Option<ScaleFit> {
    fit_target_holding(start, obs, overlap, &[])
}

/// [`fit_target`] with the `held` groups kept at their values in `start` (a prior the rows do not decide).
pub fn fit_target_holding(
    start: &Efficiencies,
    obs: &[Observation],
    overlap: bool,
    held: &[Group],
) -> Option<ScaleFit> {
    let points = distinct_points(obs);
    let groups: Vec<Vec<Group>> = target_groups(points)
        .into_iter()
        .map(|g| g.into_iter().filter(|x| !held.contains(x)).collect::<Vec<_>>())
        .filter(|g| !g.is_empty())
        .collect();
    if !overlap || points < OVERLAP_POINTS {
        return fit_scales(start, obs, &groups);
    }
    let at = |p: f64| Efficiencies { overlap: p, ..*start };
    let error = |fit: &ScaleFit| obs.iter().map(|o| o.squared_error(&fit.efficiency)).sum::<f64>();
    let p =
        minimise(1.0, MAX_FITTED_OVERLAP, |p| fit_scales(&at(p), obs, &groups).map_or(f64::INFINITY, |f| error(&f)));
    let mut fit = fit_scales(&at(p), obs, &groups)?;
    fit.overlap_at_bound = Some(p - 1.0 < 1e-3 || MAX_FITTED_OVERLAP - p < 1e-3);
    Some(no_worse(start, obs, fit))
}

/// |predicted / measured − 1| of every row under `eff`: an observation gives one per row it stands for.
pub fn abs_errors(obs: &[Observation], eff: &Efficiencies) -> Vec<f64> {
    obs.iter()
        .flat_map(|o| std::iter::repeat_n((o.predicted(eff) / o.measured_s - 1.0).abs(), o.weight as usize))
        .collect()
}

/// The scale groups a target fit with `points` distinct points may separate.
pub fn target_groups(points: usize) -> Vec<Vec<Group>> {
    match points {
        0 => Vec::new(),
        2 => vec![vec![Group::Memory, Group::Compute], vec![Group::Fixed]],
        // One point offers all three and identifies the one that moves it most (see [`fit_scales`]).
        _ => vec![vec![Group::Memory], vec![Group::Compute], vec![Group::Fixed]],
    }
}

/// The GEMM rate no fit of `obs` goes above: the lowest their GPUs were measured to reach.
pub fn lowest_gemm_ceiling(obs: &[Observation]) -> f64 {
    obs.iter().map(|o| o.gemm_ceiling).fold(1.0, f64::min)
}

/// The number of distinct settings among `obs` (rows repeated at one setting count once).
pub fn distinct_points(obs: &[Observation]) -> usize {
    // Debug text of the terms is exact for floats and hashable, so counting stays linear in the rows.
    obs.iter().map(|o| format!("{:?}", o.terms)).collect::<std::collections::HashSet<_>>().len()
}

/// Fits one scale per entry of `groups` to `obs`, minimising the squared relative error, starting from
/// `start`. Scales the rows cannot identify (see [`IDENTIFIABLE`]) keep their starting value and are named in
/// [`ScaleFit::unidentified`]; a fit worse than `start` on `obs` is not returned (`start` is, with
/// [`ScaleFit::kept_start`]). `None` when the rows identify no scale at all (no observations, all-zero features).
pub fn fit_scales(start: &Efficiencies, obs: &[Observation], groups: &[Vec<Group>]) -> Option<ScaleFit> {
    let (identified, mut unidentified) = identify(start, obs, groups);
    if identified.is_empty() {
        return None;
    }
    let mut fit = iterate(start, obs, &identified, &[])?;
    // A group held at its bound absorbs nothing more: a scale it hid may now show against the free ones. Not
    // at one point: there any other scale would "show" only because it is next in size, and would take the
    // whole remainder on one equation's word; the rows say nothing about it, so it stays at its prior.
    let several = distinct_points(obs) > 1;
    while several && !unidentified.is_empty() && fit.at_bound() {
        let free: Vec<Vec<Group>> = fit.scales.iter().filter(|s| !s.at_bound).map(|s| s.groups.clone()).collect();
        let held: Vec<(Group, f64)> =
            fit.scales.iter().filter(|s| s.at_bound).flat_map(|s| s.groups.iter().map(|&g| (g, s.value))).collect();
        let candidates: Vec<Vec<Group>> = free.iter().chain(&unidentified).cloned().collect();
        let (shown, _) = identify(start, obs, &candidates);
        let (now, still): (Vec<Vec<Group>>, Vec<Vec<Group>>) =
            unidentified.into_iter().partition(|g| shown.contains(g));
        let widened: Vec<Vec<Group>> = free.iter().chain(&now).cloned().collect();
        let Some(next) = (!now.is_empty()).then(|| iterate(start, obs, &widened, &held)).flatten() else {
            unidentified = now.into_iter().chain(still).collect();
            break;
        };
        (unidentified, fit) = (still, next);
    }
    fit.unidentified = unidentified.into_iter().flatten().collect();
    Some(no_worse(start, obs, fit))
}

/// Smallest norm, over the rows' relative times, of what doubling a scale changes beyond what the scales
/// identified before it can absorb. Below it a noise of 1 % on every row would move the scale by more than
/// its own value (least squares' standard error is noise / norm): the rows' noise, not their shape, would pick
/// it. On the shared serving pairs 0.02 already holds back scales the speedup trend needs.
pub const IDENTIFIABLE: f64 = 0.01;

/// Splits `groups` into the scales the rows identify and those they do not, by pivoted Gram–Schmidt on the
/// design columns at `start` (largest independent contribution first).
fn identify(start: &Efficiencies, obs: &[Observation], groups: &[Vec<Group>]) -> (Vec<Vec<Group>>, Vec<Vec<Group>>) {
    let c0 = start.coefficients();
    let features: Vec<[f64; PARAMETERS]> = obs.iter().map(|o| o.terms.features(start)).collect();
    let mut columns: Vec<Vec<f64>> = groups
        .iter()
        .map(|g| obs.iter().zip(&features).map(|(o, f)| column(f, &c0, g) * o.weight.sqrt() / o.measured_s).collect())
        .collect();
    let norm = |c: &[f64]| c.iter().map(|x| x * x).sum::<f64>().sqrt();
    let mut remaining: Vec<usize> = (0..groups.len()).collect();
    let mut identified = Vec::new();
    while let Some(best) = remaining.iter().copied().max_by(|&a, &b| norm(&columns[a]).total_cmp(&norm(&columns[b]))) {
        let n = norm(&columns[best]);
        // NaN (a column of non-finite times) is no identification either.
        if n.is_nan() || n < IDENTIFIABLE {
            break;
        }
        remaining.retain(|&i| i != best);
        identified.push(best);
        let unit: Vec<f64> = columns[best].iter().map(|x| x / n).collect();
        for &i in &remaining {
            let dot: f64 = columns[i].iter().zip(&unit).map(|(a, b)| a * b).sum();
            for (x, u) in columns[i].iter_mut().zip(&unit) {
                *x -= dot * u;
            }
        }
    }
    identified.sort_unstable();
    let (shown, hidden): (Vec<usize>, Vec<usize>) = (0..groups.len()).partition(|i| identified.contains(i));
    (shown.into_iter().map(|i| groups[i].clone()).collect(), hidden.into_iter().map(|i| groups[i].clone()).collect())
}

/// `fit`, or `start` itself where the fit is worse on `obs` (bounds and held scales can make it so).
fn no_worse(start: &Efficiencies, obs: &[Observation], fit: ScaleFit) -> ScaleFit {
    let error = |eff: &Efficiencies| obs.iter().map(|o| o.squared_error(eff)).sum::<f64>();
    let (fitted, initial) = (error(&fit.efficiency), error(start));
    if fitted <= initial * (1.0 + 1e-12) || !initial.is_finite() {
        return fit;
    }
    ScaleFit {
        efficiency: *start,
        scales: Vec::new(),
        overlap_at_bound: None,
        unidentified: fit.unidentified,
        kept_start: true,
    }
}

/// The time at the start coefficients of the members of `groups`, for one row's features.
fn column(features: &[f64; PARAMETERS], c0: &[f64; PARAMETERS], groups: &[Group]) -> f64 {
    groups.iter().flat_map(|g| g.members()).map(|&i| features[i] * c0[i]).sum()
}

/// Fits at the features of the current efficiencies, moves there, and repeats until the scales settle (at
/// once where memory and math simply add).
/// `held` groups stay at the given scales throughout.
fn iterate(
    start: &Efficiencies,
    obs: &[Observation],
    groups: &[Vec<Group>],
    held: &[(Group, f64)],
) -> Option<ScaleFit> {
    let mut at = *start;
    let mut fit: Option<ScaleFit> = None;
    for _ in 0..MAX_ROUNDS {
        let features: Vec<[f64; PARAMETERS]> = obs.iter().map(|o| o.terms.features(&at)).collect();
        let next = try_fit(start, obs, &features, groups, held.to_vec())?;
        let settled = fit.as_ref().is_some_and(|f| {
            f.scales.len() == next.scales.len()
                && f.scales
                    .iter()
                    .zip(&next.scales)
                    .all(|(a, b)| (a.value - b.value).abs() <= 1e-9 * b.value.abs().max(1e-9))
        });
        at = next.efficiency;
        fit = Some(next);
        if settled {
            break;
        }
    }
    fit
}

/// One linear fit: least squares over the scales, then each member group checked against its own bounds —
/// one outside is held at its bound and the rest of its scale refitted without it, so a group already at
/// its limit does not hold back the groups it moves with.
fn try_fit(
    start: &Efficiencies,
    obs: &[Observation],
    features: &[[f64; PARAMETERS]],
    groups: &[Vec<Group>],
    mut held: Vec<(Group, f64)>,
) -> Option<ScaleFit> {
    let c0 = start.coefficients();
    let gemm_ceiling = lowest_gemm_ceiling(obs);
    // Everything outside the fitted and held groups stays at its starting value.
    let fitted: Vec<usize> =
        groups.iter().flatten().chain(held.iter().map(|(g, _)| g)).flat_map(|g| g.members()).copied().collect();
    let mut free: Vec<Vec<Group>> = groups.to_vec();
    loop {
        free.retain(|g| !g.is_empty());
        // Rows weighted by 1/measured and by the square root of how many rows each stands for.
        let design: Vec<Vec<f64>> = obs
            .iter()
            .zip(features)
            .map(|(o, f)| free.iter().map(|g| column(f, &c0, g) * o.weight.sqrt() / o.measured_s).collect())
            .collect();
        let target: Vec<f64> = obs
            .iter()
            .zip(features)
            .map(|(o, f)| {
                let outside: f64 = (0..PARAMETERS).filter(|i| !fitted.contains(i)).map(|i| f[i] * c0[i]).sum();
                let pinned: f64 = held.iter().map(|&(g, v)| column(f, &c0, &[g]) * v).sum();
                (o.measured_s - o.terms.comm_s() - outside - pinned) * o.weight.sqrt() / o.measured_s
            })
            .collect();
        let values = if free.is_empty() {
            Vec::new()
        } else {
            solve_normal(&design, &target, &(0..free.len()).collect::<Vec<_>>())?
        };
        let mut moved = false;
        for (g, &v) in free.iter_mut().zip(&values) {
            g.retain(|&member| {
                let (lo, hi) = bounds(start, member, gemm_ceiling);
                let inside = (lo..=hi).contains(&v);
                if !inside {
                    held.push((member, v.clamp(lo, hi)));
                    moved = true;
                }
                inside
            });
        }
        if moved {
            continue;
        }
        let mut c = c0;
        let scales: Vec<Scale> = free
            .iter()
            .zip(&values)
            .map(|(g, &value)| Scale { groups: g.clone(), value, at_bound: false })
            .chain(held.iter().map(|&(g, value)| Scale { groups: vec![g], value, at_bound: true }))
            .collect();
        for s in &scales {
            for &i in s.groups.iter().flat_map(|g| g.members()) {
                c[i] = c0[i] * s.value;
            }
        }
        return Some(ScaleFit {
            efficiency: Efficiencies::from_coefficients(&c, start.overlap),
            scales,
            overlap_at_bound: None,
            unidentified: Vec::new(),
            kept_start: false,
        });
    }
}

/// The range of one group's scale: efficiencies must stay in [1 %, 1] (`flops_eff` at most `gemm_ceiling`),
/// overheads in [0, cap × start].
fn bounds(start: &Efficiencies, group: Group, gemm_ceiling: f64) -> (f64, f64) {
    let values = start.values();
    let mut lo: f64 = 0.0;
    let mut hi = f64::INFINITY;
    for &i in group.members() {
        if i <= 2 {
            // coefficient 1/eff × s: eff/s must lie in [MIN_EFFICIENCY, 1 or the GEMM ceiling]
            lo = lo.max(values[i] / if i == 1 { gemm_ceiling } else { 1.0 });
            hi = hi.min(values[i] / MIN_EFFICIENCY);
        } else {
            hi = hi.min(MAX_OVERHEAD_SCALE);
        }
    }
    (lo, hi.max(lo))
}

/// Solves the normal equations for the given columns by Gaussian elimination with partial pivoting.
fn solve_normal(design: &[Vec<f64>], target: &[f64], columns: &[usize]) -> Option<Vec<f64>> {
    let n = columns.len();
    if design.len() < n {
        return None;
    }
    // Scale columns to unit norm so one pivot tolerance serves columns of any size.
    let scale: Vec<f64> = columns.iter().map(|&c| design.iter().map(|d| d[c] * d[c]).sum::<f64>().sqrt()).collect();
    if scale.iter().any(|s| !(*s > 0.0 && s.is_finite())) {
        return None;
    }
    let mut m = vec![vec![0.0; n + 1]; n];
    for (d, t) in design.iter().zip(target) {
        for i in 0..n {
            let xi = d[columns[i]] / scale[i];
            for j in 0..n {
                m[i][j] += xi * d[columns[j]] / scale[j];
            }
            m[i][n] += xi * t;
        }
    }
    for col in 0..n {
        let pivot = (col..n).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
        if m[pivot][col].abs() < 1e-9 {
            return None;
        }
        m.swap(col, pivot);
        let pivot_row = m[col].clone();
        for (r, row) in m.iter_mut().enumerate() {
            if r != col {
                let f = row[col] / pivot_row[col];
                for (x, p) in row.iter_mut().zip(&pivot_row).skip(col) {
                    *x -= f * p;
                }
            }
        }
    }
    Some((0..n).map(|i| m[i][n] / m[i][i] / scale[i]).collect())
}

/// The x in [lo, hi] minimising a unimodal `f`, by golden-section search to a relative width of 1e-6.
pub fn minimise(lo: f64, hi: f64, f: impl Fn(f64) -> f64) -> f64 {
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (lo, hi);
    let mut c = b - ratio * (b - a);
    let mut d = a + ratio * (b - a);
    let (mut fc, mut fd) = (f(c), f(d));
    while (b - a) > 1e-6 * (1.0 + a.abs()) {
        if fc <= fd {
            b = d;
            d = c;
            fd = fc;
            c = b - ratio * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + ratio * (b - a);
            fd = f(d);
        }
    }
    // The ends are candidates too: the search only narrows inside them.
    [lo, (a + b) / 2.0, hi].into_iter().min_by(|x, y| f(*x).total_cmp(&f(*y))).unwrap_or(lo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::cost::{CostModel, Deployment, Workload};
    use crate::perf::profile::{DEFAULT_EFFICIENCIES, Precision, Profiles};

    /// Spec-off steps of a 70B dense model on one H200 at several batches and contexts, timed under `truth`.
    fn steps(truth: &Efficiencies) -> Vec<Observation> {
        let p = Profiles::embedded();
        let cost = CostModel::for_measurements(
            p.hardware("h200").unwrap(),
            p.model("llama-3.3-70b").unwrap(),
            None,
            &Deployment::new(1, Precision::Bf16, Precision::Bf16),
        )
        .unwrap();
        let mut out = Vec::new();
        for b in [1, 4, 16, 64, 128] {
            for context in [1024.0, 8192.0] {
                let terms = cost.step_terms(b, 0, 1.0, &Workload::Decode { context }).unwrap();
                out.push(Observation { terms, measured_s: terms.time(truth).total, weight: 1.0, gemm_ceiling: 1.0 });
            }
        }
        out
    }

    /// The defaults with each target group scaled (what a fit can reach).
    fn scaled(memory: f64, compute: f64, fixed: f64) -> Efficiencies {
        let mut c = DEFAULT_EFFICIENCIES.coefficients();
        for (group, scale) in [(Group::Memory, memory), (Group::Compute, compute), (Group::Fixed, fixed)] {
            for &i in group.members() {
                c[i] *= scale;
            }
        }
        Efficiencies::from_coefficients(&c, DEFAULT_EFFICIENCIES.overlap)
    }

    #[test]
    fn enough_points_recover_memory_compute_and_fixed() {
        let truth = scaled(1.2, 0.8, 3.0);
        let rows = steps(&truth);
        assert_eq!(distinct_points(&rows), 10);
        let fit = fit_target(&DEFAULT_EFFICIENCIES, &rows, false).unwrap();
        for o in &rows {
            assert!((o.predicted(&fit.efficiency) / o.measured_s - 1.0).abs() < 1e-9);
        }
        assert!((fit.efficiency.bw_eff - truth.bw_eff).abs() < 1e-9, "{fit:?}");
        assert!((fit.efficiency.t_fixed_us - truth.t_fixed_us).abs() < 1e-6);
        assert!(!fit.at_bound() && fit.overlap_at_bound.is_none());
    }

    #[test]
    fn the_overlap_is_recovered_where_memory_and_math_meet() {
        // Large batches make the GEMMs' math comparable to their weight reads: the exponent shows.
        let truth = Efficiencies { overlap: 3.0, ..scaled(1.1, 0.6, 2.0) };
        let rows = steps(&truth);
        let fit = fit_target(&DEFAULT_EFFICIENCIES, &rows, true).unwrap();
        assert!((fit.efficiency.overlap - 3.0).abs() < 0.05, "{:?}", fit.efficiency);
        assert_eq!(fit.overlap_at_bound, Some(false));
        let additive = fit_target(&DEFAULT_EFFICIENCIES, &rows, false).unwrap();
        let error = |f: &ScaleFit| {
            rows.iter().map(|o| (o.predicted(&f.efficiency) / o.measured_s - 1.0).abs()).fold(0.0, f64::max)
        };
        assert!(error(&fit) < 0.01 && error(&additive) > 2.0 * error(&fit), "{} {}", error(&fit), error(&additive));
    }

    #[test]
    fn flops_eff_stops_at_the_gemm_rate_the_gpu_was_measured_to_reach() {
        // GEMMs at 89 % of the datasheet peak: free, the fit finds it; on a GPU measured at 80 %, it stops there.
        let truth = scaled(1.2, 0.45, 3.0);
        let rows = steps(&truth);
        let free = fit_target(&DEFAULT_EFFICIENCIES, &rows, false).unwrap();
        assert!((free.efficiency.flops_eff - truth.flops_eff).abs() < 1e-9 && !free.at_bound(), "{free:?}");
        let capped: Vec<Observation> = rows.iter().map(|o| Observation { gemm_ceiling: 0.8, ..*o }).collect();
        let fit = fit_target(&DEFAULT_EFFICIENCIES, &capped, false).unwrap();
        assert!((fit.efficiency.flops_eff - 0.8).abs() < 1e-9, "{:?}", fit.efficiency);
        assert_eq!(fit.bounds_hit(), ["compute"]);
    }

    #[test]
    fn one_point_moves_one_scale_and_names_the_others_held_at_their_priors() {
        // Batch 16 at 8192 tokens: the weight and KV reads are most of the step, so memory is the scale it moves.
        let one = steps(&DEFAULT_EFFICIENCIES)[4];
        let start = DEFAULT_EFFICIENCIES.coefficients();
        let held_at_priors = |fit: &ScaleFit| {
            let fitted = fit.efficiency.coefficients();
            [Group::Compute, Group::Fixed]
                .iter()
                .flat_map(|g| g.members())
                .all(|&i| (fitted[i] - start[i]).abs() <= 1e-12 * start[i].abs())
        };
        let slow = Observation { measured_s: one.measured_s * 2.0, ..one };
        let fit = fit_target(&DEFAULT_EFFICIENCIES, &[slow], true).unwrap();
        assert_eq!((fit.scales.len(), fit.overlap_at_bound), (1, None), "one point: one scale, no exponent");
        assert_eq!(fit.scales[0].groups, [Group::Memory]);
        assert_eq!(fit.unidentified, [Group::Compute, Group::Fixed], "the scales it cannot identify, named");
        assert!(held_at_priors(&fit) && !fit.at_bound(), "{fit:?}");
        // Memory alone takes the whole doubling (communication aside: none at TP 1).
        assert!((slow.predicted(&fit.efficiency) / slow.measured_s - 1.0).abs() < 1e-9);
        assert!(fit.efficiency.bw_eff < DEFAULT_EFFICIENCIES.bw_eff / 2.0);
        // Faster than bandwidth at 1 allows: memory stops at its bound, said so, and the others still stay at
        // their priors (the one time says nothing of them), so the point is left unmatched rather than split.
        let fast = Observation { measured_s: one.measured_s * 0.1, ..one };
        let fit = fit_target(&DEFAULT_EFFICIENCIES, &[fast], true).unwrap();
        assert_eq!(fit.bounds_hit(), ["memory"]);
        assert!((fit.efficiency.bw_eff - 1.0).abs() < 1e-12, "{fit:?}");
        assert_eq!(fit.unidentified, [Group::Compute, Group::Fixed]);
        assert!(held_at_priors(&fit) && !fit.kept_start, "{fit:?}");
        assert!(fast.predicted(&fit.efficiency) > fast.measured_s * 1.5);
        assert!(fast.predicted(&fit.efficiency) < fast.predicted(&DEFAULT_EFFICIENCIES));
    }

    #[test]
    fn a_scale_the_rows_cannot_identify_is_named_and_kept_at_its_start() {
        // One batch at two contexts: the fixed time and the weight reads move the two rows alike.
        let truth = scaled(1.2, 0.8, 3.0);
        let rows: Vec<Observation> = steps(&truth).into_iter().filter(|o| o.terms.verify.tokens == 16.0).collect();
        assert_eq!(rows.len(), 2);
        let fit = fit_scales(&DEFAULT_EFFICIENCIES, &rows, &target_groups(3)).unwrap();
        assert!(!fit.unidentified.is_empty() && !fit.kept_start, "{fit:?}");
        let start = DEFAULT_EFFICIENCIES.coefficients();
        let fitted = fit.efficiency.coefficients();
        for &g in &fit.unidentified {
            for &i in g.members() {
                assert!((fitted[i] - start[i]).abs() <= 1e-12 * start[i].abs(), "{g:?} moved");
            }
            assert!(fit.scales.iter().all(|s| !s.groups.contains(&g)));
        }
        // What the rows do identify still brings them close.
        let before = abs_errors(&rows, &DEFAULT_EFFICIENCIES).into_iter().fold(0.0, f64::max);
        let after = abs_errors(&rows, &fit.efficiency).into_iter().fold(0.0, f64::max);
        assert!(after < before / 2.0, "{after} vs {before}");
    }

    #[test]
    fn a_fit_starting_at_the_optimum_stays_there() {
        let truth = scaled(1.2, 0.8, 3.0);
        for rows in [steps(&truth), steps(&truth)[..2].to_vec(), steps(&truth)[3..4].to_vec()] {
            let fit = fit_target(&truth, &rows, false).unwrap();
            let (start, fitted) = (truth.coefficients(), fit.efficiency.coefficients());
            for (a, b) in start.iter().zip(&fitted) {
                assert!((a - b).abs() <= 1e-9 * a.abs().max(1e-12), "{fit:?}");
            }
        }
    }

    #[test]
    fn a_fit_worse_than_its_start_is_not_returned() {
        let start = DEFAULT_EFFICIENCIES;
        let rows = steps(&scaled(1.1, 0.9, 1.5));
        let error = |e: &Efficiencies| rows.iter().map(|o| o.squared_error(e)).sum::<f64>();
        let worse = ScaleFit {
            efficiency: scaled(5.0, 5.0, 5.0),
            scales: vec![Scale { groups: vec![Group::Memory], value: 5.0, at_bound: false }],
            overlap_at_bound: None,
            unidentified: vec![Group::Fixed],
            kept_start: false,
        };
        assert!(error(&worse.efficiency) > error(&start));
        let kept = no_worse(&start, &rows, worse);
        assert!(kept.kept_start && kept.scales.is_empty() && kept.efficiency == start, "{kept:?}");
        assert_eq!(kept.unidentified, vec![Group::Fixed]);
        // Whatever the rows, and however few, a fit never ends worse than where it started.
        for (memory, compute, fixed) in [(0.5, 2.0, 0.1), (3.0, 0.2, 40.0), (1.0, 1.0, 0.0), (0.3, 0.3, 0.3)] {
            let truth = scaled(memory, compute, fixed);
            let all = steps(&truth);
            for rows in [&all[..], &all[..1], &all[4..6], &all[7..]] {
                let fit = fit_target(&start, rows, true).unwrap();
                let error = |e: &Efficiencies| rows.iter().map(|o| o.squared_error(e)).sum::<f64>();
                assert!(error(&fit.efficiency) <= error(&start) * (1.0 + 1e-12), "{fit:?}");
            }
        }
    }

    #[test]
    fn each_group_is_bounded_on_its_own() {
        // Compute already at full efficiency may not speed up, but memory and the fixed time still can: a
        // merged scale held by its tightest member would stop at the start.
        let start = Efficiencies { flops_eff: 1.0, attn_eff: 1.0, ..DEFAULT_EFFICIENCIES };
        let truth = Efficiencies { bw_eff: 0.9, ..start };
        let rows = steps(&truth);
        let fit = fit_scales(&start, &rows[..2], &target_groups(2)).unwrap();
        assert!(fit.efficiency.flops_eff <= 1.0 && fit.efficiency.bw_eff > start.bw_eff, "{fit:?}");
        let before = abs_errors(&rows[..2], &start).into_iter().fold(0.0, f64::max);
        let after = abs_errors(&rows[..2], &fit.efficiency).into_iter().fold(0.0, f64::max);
        assert!(after < before / 3.0, "{after} vs {before}: {fit:?}");
    }

    #[test]
    fn golden_section_finds_interior_and_boundary_minima() {
        assert!((minimise(1.0, 4.0, |x| (x - 2.5).powi(2)) - 2.5).abs() < 1e-4);
        assert_eq!(minimise(1.0, 4.0, |x| x), 1.0);
        assert_eq!(minimise(1.0, 4.0, |x| -x), 4.0);
    }
}
