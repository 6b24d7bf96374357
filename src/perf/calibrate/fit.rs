//! The fits calibration makes: scales on groups of the step-time coefficients by bounded least squares in
//! relative error, and one acceptance length per group of serving pairs by a one-dimensional search.
//!
//! The step time is linear in its coefficients (`T = comm + Σ cᵢ·fᵢ`, [`crate::perf::terms`]), so scaling
//! the profile's default coefficients group by group keeps the fit linear. How many groups a fit may move
//! depends on how many distinct points it has: one point scales every target coefficient together (the
//! defaults' shape, measured level); two separate the fixed time from the rest; three or more separate
//! memory, compute and fixed time. Scales that would push an efficiency above 1 (or below 1 %) or a time below
//! zero are clamped to the bound and the rest refitted; the result says which.
//!
//! Spec-off rows carry no speculation features, yet the speculation overheads move with the target's: the
//! per-draft-token overhead with the per-token ones (compute group), the per-draft-forward and per-step ones
//! with the fixed times (fixed group) — they are the same engine work, and a kernel-only measurement (no
//! engine) that fits the target's overheads near zero must not keep a serving engine's speculation costs.

use serde::Serialize;

use crate::perf::terms::{Efficiencies, PARAMETERS};

/// Lowest efficiency a fit may reach: below it the "efficiency" is absorbing something the model lacks.
const MIN_EFFICIENCY: f64 = 0.01;
/// Largest factor a fit may put on a default overhead.
const MAX_OVERHEAD_SCALE: f64 = 100.0;

/// One measured step and its features under the model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observation {
    /// The features fᵢ of [`crate::perf::terms::StepTerms::features`].
    pub features: [f64; PARAMETERS],
    /// Communication seconds (no coefficient).
    pub comm_s: f64,
    /// Measured step, seconds.
    pub measured_s: f64,
}

impl Observation {
    /// The modelled step under `eff`, seconds.
    pub fn predicted(&self, eff: &Efficiencies) -> f64 {
        self.comm_s + self.features.iter().zip(eff.coefficients()).map(|(f, c)| f * c).sum::<f64>()
    }
}

/// A group of coefficients that one scale moves together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// HBM efficiency.
    Memory,
    /// GEMM and attention efficiencies and the per-token overheads (per token and per draft token).
    Compute,
    /// Fixed time per forward, per MoE layer, per draft forward and per speculative step.
    Fixed,
    /// Draft-forward, per-step and per-draft-token speculation overheads.
    Speculation,
}

impl Group {
    /// The coefficient indices (in [`crate::perf::terms::PARAMETER_NAMES`] order) the group moves.
    pub fn members(self) -> &'static [usize] {
        match self {
            Group::Memory => &[0],
            Group::Compute => &[1, 2, 5, 8],
            Group::Fixed => &[3, 4, 6, 7],
            Group::Speculation => &[6, 7, 8],
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
}

/// The scale groups a target fit with `points` distinct points may separate.
pub fn target_groups(points: usize) -> Vec<Vec<Group>> {
    match points {
        0 => Vec::new(),
        1 => vec![vec![Group::Memory, Group::Compute, Group::Fixed]],
        2 => vec![vec![Group::Memory, Group::Compute], vec![Group::Fixed]],
        _ => vec![vec![Group::Memory], vec![Group::Compute], vec![Group::Fixed]],
    }
}

/// The number of distinct feature vectors among `obs` (rows repeated at one setting count once).
pub fn distinct_points(obs: &[Observation]) -> usize {
    let mut seen: Vec<&[f64; PARAMETERS]> = Vec::new();
    for o in obs {
        let same =
            |s: &&[f64; PARAMETERS]| s.iter().zip(&o.features).all(|(a, b)| (a - b).abs() <= 1e-9 * a.abs().max(1e-12));
        if !seen.iter().any(same) {
            seen.push(&o.features);
        }
    }
    seen.len()
}

/// Fits one scale per entry of `groups` to `obs`, minimising the squared relative error, starting from
/// `start`. Falls back to fewer scales (merging the last two) when the rows cannot separate them.
/// `None` when even one scale is undetermined (no observations or all-zero features).
pub fn fit_scales(start: &Efficiencies, obs: &[Observation], groups: &[Vec<Group>]) -> Option<ScaleFit> {
    let mut groups = groups.to_vec();
    loop {
        if groups.is_empty() {
            return None;
        }
        if let Some(fit) = try_fit(start, obs, &groups) {
            return Some(fit);
        }
        let last = groups.pop()?;
        match groups.last_mut() {
            Some(previous) => previous.extend(last),
            None => return None,
        }
    }
}

fn try_fit(start: &Efficiencies, obs: &[Observation], groups: &[Vec<Group>]) -> Option<ScaleFit> {
    let c0 = start.coefficients();
    // Column g: the time at the default coefficients of group g; rows weighted by 1/measured.
    let design: Vec<Vec<f64>> = obs
        .iter()
        .map(|o| {
            groups
                .iter()
                .map(|g| {
                    g.iter().flat_map(|gr| gr.members()).map(|&i| o.features[i] * c0[i]).sum::<f64>() / o.measured_s
                })
                .collect()
        })
        .collect();
    // Everything outside the fitted groups stays at its default.
    let fitted: Vec<usize> = groups.iter().flatten().flat_map(|g| g.members()).copied().collect();
    let target: Vec<f64> = obs
        .iter()
        .map(|o| {
            let fixed: f64 =
                (0..PARAMETERS).filter(|i| !fitted.contains(i)).map(|i| o.features[i] * c0[i]).sum::<f64>();
            (o.measured_s - o.comm_s - fixed) / o.measured_s
        })
        .collect();
    let bounds: Vec<(f64, f64)> = groups.iter().map(|g| bounds(start, g)).collect();
    let (scales, at_bound) = bounded_least_squares(&design, &target, &bounds)?;
    let mut c = c0;
    for (g, s) in groups.iter().zip(&scales) {
        for &i in g.iter().flat_map(|gr| gr.members()) {
            c[i] = c0[i] * s;
        }
    }
    Some(ScaleFit {
        efficiency: Efficiencies::from_coefficients(&c),
        scales: groups
            .iter()
            .zip(scales.iter().zip(at_bound))
            .map(|(g, (&value, at_bound))| Scale { groups: g.clone(), value, at_bound })
            .collect(),
    })
}

/// The range of one scale: efficiencies must stay in [1 %, 1], overheads in [0, cap × default].
fn bounds(start: &Efficiencies, groups: &[Group]) -> (f64, f64) {
    let values = start.values();
    let mut lo: f64 = 0.0;
    let mut hi = f64::INFINITY;
    for &i in groups.iter().flat_map(|g| g.members()) {
        if i <= 2 {
            // coefficient 1/eff × s: eff/s must lie in [MIN_EFFICIENCY, 1]
            lo = lo.max(values[i]);
            hi = hi.min(values[i] / MIN_EFFICIENCY);
        } else {
            hi = hi.min(MAX_OVERHEAD_SCALE);
        }
    }
    (lo, hi.max(lo))
}

/// Least squares with box constraints: solve, clamp any coordinate outside its box to the nearer bound, refit
/// the rest. Returns the solution and which coordinates are clamped; `None` when the normal equations of the
/// free coordinates are singular.
pub fn bounded_least_squares(
    design: &[Vec<f64>],
    target: &[f64],
    bounds: &[(f64, f64)],
) -> Option<(Vec<f64>, Vec<bool>)> {
    let n = bounds.len();
    let mut solution = vec![0.0; n];
    let mut clamped = vec![false; n];
    loop {
        let free: Vec<usize> = (0..n).filter(|&i| !clamped[i]).collect();
        if free.is_empty() {
            return Some((solution, clamped));
        }
        let reduced: Vec<f64> = design
            .iter()
            .zip(target)
            .map(|(row, t)| t - (0..n).filter(|&i| clamped[i]).map(|i| row[i] * solution[i]).sum::<f64>())
            .collect();
        let fitted = solve_normal(design, &reduced, &free)?;
        for (&i, v) in free.iter().zip(&fitted) {
            solution[i] = *v;
        }
        let outside: Vec<usize> =
            free.iter().copied().filter(|&i| solution[i] < bounds[i].0 || solution[i] > bounds[i].1).collect();
        if outside.is_empty() {
            return Some((solution, clamped));
        }
        for i in outside {
            solution[i] = solution[i].clamp(bounds[i].0, bounds[i].1);
            clamped[i] = true;
        }
    }
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
    use crate::perf::profile::DEFAULT_EFFICIENCIES;

    fn obs(features: [f64; PARAMETERS], eff: &Efficiencies) -> Observation {
        let mut o = Observation { features, comm_s: 1e-4, measured_s: 0.0 };
        o.measured_s = o.predicted(eff);
        o
    }

    fn features(b: f64) -> [f64; PARAMETERS] {
        // memory grows concavely, compute linearly, one forward, 58 MoE layers, b tokens
        [0.004 + 0.002 * b.ln_1p(), 2e-5 * b, 1e-5 * b, 1.0, 58.0, b, 0.0, 0.0, 0.0]
    }

    #[test]
    fn three_points_recover_memory_compute_and_fixed() {
        let mut truth = DEFAULT_EFFICIENCIES;
        truth.bw_eff = 0.6;
        truth.flops_eff = 0.2;
        truth.attn_eff = 0.125;
        truth.token_us = 5.0;
        truth.t_fixed_us = 3000.0;
        truth.moe_layer_us = 240.0;
        let rows: Vec<Observation> = [1.0, 4.0, 16.0, 64.0].iter().map(|&b| obs(features(b), &truth)).collect();
        assert_eq!(distinct_points(&rows), 4);
        let fit = fit_scales(&DEFAULT_EFFICIENCIES, &rows, &target_groups(4)).unwrap();
        for o in &rows {
            assert!((o.predicted(&fit.efficiency) / o.measured_s - 1.0).abs() < 1e-9);
        }
        assert!((fit.efficiency.bw_eff - 0.6).abs() < 1e-9, "{fit:?}");
        assert!((fit.efficiency.t_fixed_us - 3000.0).abs() < 1e-6);
        assert!(fit.scales.iter().all(|s| !s.at_bound));
    }

    #[test]
    fn one_point_scales_the_defaults_and_bounds_are_reported() {
        let rows = [obs(features(8.0), &DEFAULT_EFFICIENCIES)];
        let mut slow = rows[0];
        slow.measured_s *= 2.0;
        let fit = fit_scales(&DEFAULT_EFFICIENCIES, &[slow], &target_groups(1)).unwrap();
        assert_eq!(fit.scales.len(), 1);
        assert!((slow.predicted(&fit.efficiency) / slow.measured_s - 1.0).abs() < 1e-9);
        // Twice the time (communication aside): every efficiency halves, every overhead doubles.
        assert!((fit.efficiency.bw_eff / (DEFAULT_EFFICIENCIES.bw_eff / 2.0) - 1.0).abs() < 0.01);
        // Faster than any efficiency ≤ 1 allows: clamped, and said so.
        let mut fast = rows[0];
        fast.measured_s *= 0.1;
        let fit = fit_scales(&DEFAULT_EFFICIENCIES, &[fast], &target_groups(1)).unwrap();
        assert!(fit.scales[0].at_bound);
        assert!(fit.efficiency.bw_eff <= 1.0 + 1e-12);
    }

    #[test]
    fn golden_section_finds_interior_and_boundary_minima() {
        assert!((minimise(1.0, 4.0, |x| (x - 2.5).powi(2)) - 2.5).abs() < 1e-4);
        assert_eq!(minimise(1.0, 4.0, |x| x), 1.0);
        assert_eq!(minimise(1.0, 4.0, |x| -x), 4.0);
    }
}
