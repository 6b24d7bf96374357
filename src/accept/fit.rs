//! Fits that turn a noisy golden curve into a valid chain (docs/model.md §2).
//!
//! Each AL(k) on a golden curve is a separate run rounded to 0.01, so the increments p_i = AL(i) − AL(i−1)
//! can dip or rise where a chain cannot (1 ≥ p_1 ≥ … ≥ p_k ≥ 0). Four fits restore the constraints:
//! - [`FitKind::Concave`]: least squares on the cumulative AL(k) subject to the chain constraints — the
//!   natural, assumption-free choice (AL(k) concave and non-decreasing with slopes in [0, 1]);
//! - [`FitKind::Isotonic`]: pool-adjacent-violators on the increments (least squares on p_i), clipped to [0, 1];
//! - [`FitKind::ConstantAlpha`]: p_i = α^i, the classic AL = (1 − α^{k+1})/(1 − α), known to overstate long k;
//! - [`FitKind::GeometricDecay`]: conditional rates c_i = c_1·γ^{i−1}.
//!
//! The two non-parametric fits extend past the curve's last k by repeating its last conditional rate.
//! Every fit reports residuals and its leave-one-k-out error (fit without one k, predict it), so a user can
//! see which to trust.

use std::collections::BTreeMap;

use ndarray::{Array1, Array2};
use serde::Serialize;

use super::Acceptance;
use crate::curve::Curve;
use crate::error::{Error, Result};
use crate::units::{MAX_DRAFT_LEN, check_draft_len};

/// A way of fitting a chain to a curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum FitKind {
    /// Constrained least squares on the cumulative curve.
    Concave,
    /// Isotonic regression (pool adjacent violators) on the increments.
    Isotonic,
    /// Constant per-position acceptance α: p_i = α^i.
    ConstantAlpha,
    /// Geometrically decaying conditional rates: c_i = c_1·γ^{i−1}.
    GeometricDecay,
}

crate::names::named_enum!(
    FitKind,
    field = "fit",
    what = "fit",
    [Concave = "concave", Isotonic = "isotonic", ConstantAlpha = "constant-alpha", GeometricDecay = "geometric-decay",]
);

/// The fitted law of per-position acceptance, defined for every position.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "family", rename_all = "kebab-case")]
pub enum ChainModel {
    /// Explicit p_1..p_K, extended past K by repeating the last conditional rate.
    Positions {
        /// Fitted p_1..p_K.
        unconditional: Vec<f64>,
    },
    /// p_i = α^i.
    ConstantAlpha {
        /// Per-position acceptance α.
        alpha: f64,
    },
    /// c_i = c_1·γ^{i−1}, capped at 1.
    GeometricDecay {
        /// First conditional rate.
        c1: f64,
        /// Decay per position.
        gamma: f64,
    },
}

impl ChainModel {
    /// p_1..p_k under this model.
    pub fn unconditional(&self, k: usize) -> Vec<f64> {
        match self {
            ChainModel::Positions { unconditional } => {
                let last = unconditional.len();
                let tail = match last {
                    0 => 0.0,
                    1 => unconditional[0],
                    _ if unconditional[last - 2] > 0.0 => (unconditional[last - 1] / unconditional[last - 2]).min(1.0),
                    _ => 0.0,
                };
                (1..=k)
                    .map(|i| {
                        if i <= last {
                            unconditional[i - 1]
                        } else {
                            unconditional[last - 1] * tail.powi((i - last) as i32)
                        }
                    })
                    .collect()
            }
            ChainModel::ConstantAlpha { alpha } => (1..=k).map(|i| alpha.powi(i as i32)).collect(),
            ChainModel::GeometricDecay { c1, gamma } => {
                let mut p = 1.0;
                (1..=k)
                    .map(|i| {
                        p *= (c1 * gamma.powi(i as i32 - 1)).clamp(0.0, 1.0);
                        p
                    })
                    .collect()
            }
        }
    }

    /// AL(k) = 1 + Σ_{i≤k} p_i under this model.
    pub fn acceptance_length(&self, k: usize) -> f64 {
        1.0 + self.unconditional(k).iter().sum::<f64>()
    }
}

/// One fitted point beside the measurement.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Residual {
    /// Draft length.
    pub k: usize,
    /// Golden AL(k).
    pub observed: f64,
    /// Fitted AL(k).
    pub fitted: f64,
    /// Fitted AL(k) when k was left out of the fit; `None` when too few points remain.
    pub left_out: Option<f64>,
}

/// A chain fitted to a curve, with its errors.
#[derive(Debug, Clone, Serialize)]
pub struct Fit {
    /// The method.
    pub kind: FitKind,
    /// The fitted law.
    pub model: ChainModel,
    /// Per-k comparison with the curve.
    pub residuals: Vec<Residual>,
    /// Root-mean-square in-sample residual.
    pub rmse: f64,
    /// Root-mean-square leave-one-k-out error over the k where it is defined.
    pub loo_rmse: Option<f64>,
}

impl Fit {
    /// The fitted chain at draft length `k` (which may exceed the curve's longest k).
    ///
    /// # Errors
    /// [`Error::Invalid`] when `k` is out of range.
    pub fn chain(&self, k: usize) -> Result<Acceptance> {
        check_draft_len(k, "k")?;
        Acceptance::from_unconditional(self.model.unconditional(k), &format!("{} fit", self.kind))
    }
}

/// Fits `curve` with `kind`.
///
/// # Errors
/// [`Error::Invalid`] when the curve has fewer points than the fit has parameters.
///
/// ```
/// use alsim::accept::fit::{FitKind, fit};
/// use alsim::curve::CurveFile;
/// let file = CurveFile::parse("m:\n  1: 1.92\n  2: 2.61\n  3: 2.97\n  4: 3.00\n  5: 3.10\n  6: 3.16\n  7: 3.00\n  8: 3.11\n", "f", "f").unwrap();
/// let f = fit(&file.curves[0], FitKind::Concave).unwrap();
/// let chain = f.chain(8).unwrap(); // valid although AL(7) < AL(6) on the curve
/// assert!(chain.unconditional().windows(2).all(|w| w[0] >= w[1]));
/// ```
pub fn fit(curve: &Curve, kind: FitKind) -> Result<Fit> {
    let points = curve.points();
    let needed = parameters(kind);
    if points.len() < needed {
        return Err(Error::invalid(
            format!("{}.{}", curve.model(), curve.mode()),
            format!("the {kind} fit needs at least {needed} points, the curve has {}", points.len()),
        ));
    }
    let only_k = *points.keys().next().expect("curves have points");
    if matches!(kind, FitKind::Concave | FitKind::Isotonic) && points.len() == 1 && only_k > 1 {
        // One AL at k > 1 fixes the sum p_1 + … + p_k but not its shape: the fit would spread it evenly and
        // extend the flat tail for ever.
        return Err(Error::invalid(
            format!("{}.{}", curve.model(), curve.mode()),
            format!(
                "the {kind} fit cannot shape p_1..p_{only_k} from AL at k = {only_k} alone; give more points or use constant-alpha"
            ),
        ));
    }
    let model = fit_points(points, kind);
    let residuals: Vec<Residual> = points
        .iter()
        .map(|(&k, &observed)| {
            let mut rest = points.clone();
            rest.remove(&k);
            let left_out = (rest.len() > needed).then(|| fit_points(&rest, kind).acceptance_length(k));
            Residual { k, observed, fitted: model.acceptance_length(k), left_out }
        })
        .collect();
    let rms = |errors: Vec<f64>| {
        (!errors.is_empty()).then(|| (errors.iter().map(|e| e * e).sum::<f64>() / errors.len() as f64).sqrt())
    };
    let rmse = rms(residuals.iter().map(|r| r.fitted - r.observed).collect()).unwrap_or(0.0);
    let loo_rmse = rms(residuals.iter().filter_map(|r| r.left_out.map(|l| l - r.observed)).collect());
    Ok(Fit { kind, model, residuals, rmse, loo_rmse })
}

/// The valid chain at draft length `k` closest to `curve`'s points up to `k` that passes through the golden
/// AL(k): the concave fit (least squares on the cumulative curve under the chain constraints) with AL(k) held.
///
/// A pin at k must keep the golden mean first (pins are checked to ±0.005); among chains that do, this one
/// departs least from the measured AL(1..k). Points past k are other runs the pinned run does not reproduce.
///
/// # Errors
/// [`Error::Lookup`] when the curve has no point at `k`; [`Error::Invalid`] when `k` is out of range or the
/// curve has no point below `k` to shape the chain with (k > 1).
pub fn concave_through(curve: &Curve, k: usize) -> Result<Acceptance> {
    check_draft_len(k, "k")?;
    curve.al(k)?;
    let points: BTreeMap<usize, f64> = curve.points().range(..=k).map(|(&i, &al)| (i, al)).collect();
    if points.len() == 1 && k > 1 {
        return Err(Error::invalid(
            curve.field(k),
            format!("AL at k = {k} alone cannot shape p_1..p_{k}: the curve has no point below k = {k}"),
        ));
    }
    Acceptance::from_unconditional(concave_least_squares(&points, Some(k)), &curve.field(k))
}

/// Every fit of `curve` that has enough points, best leave-one-k-out error first.
pub fn fit_all(curve: &Curve) -> Vec<Fit> {
    let mut fits: Vec<Fit> = FitKind::ALL.iter().filter_map(|&kind| fit(curve, kind).ok()).collect();
    fits.sort_by(|a, b| a.loo_rmse.unwrap_or(f64::INFINITY).total_cmp(&b.loo_rmse.unwrap_or(f64::INFINITY)));
    fits
}

/// Leave-one-k-out error of every fit on every curve of a set: which fit to trust.
#[derive(Debug, Clone, Serialize)]
pub struct FitSummary {
    /// One row per curve and fit.
    pub rows: Vec<FitSummaryRow>,
}

/// One curve and fit in a [`FitSummary`].
#[derive(Debug, Clone, Serialize)]
pub struct FitSummaryRow {
    /// The file.
    pub origin: String,
    /// The curve's key path.
    pub curve: String,
    /// The fit.
    pub kind: FitKind,
    /// In-sample RMS error.
    pub rmse: f64,
    /// Leave-one-k-out RMS error.
    pub loo_rmse: Option<f64>,
}

impl FitSummary {
    /// Fits every curve in `files` every way.
    pub fn new(files: &[crate::curve::CurveFile]) -> FitSummary {
        let rows = files
            .iter()
            .flat_map(|file| {
                file.curves.iter().flat_map(move |curve| {
                    FitKind::ALL.iter().filter_map(move |&kind| {
                        let f = fit(curve, kind).ok()?;
                        Some(FitSummaryRow {
                            origin: file.origin.clone(),
                            curve: curve.name(),
                            kind,
                            rmse: f.rmse,
                            loo_rmse: f.loo_rmse,
                        })
                    })
                })
            })
            .collect();
        FitSummary { rows }
    }

    /// Per fit, the RMS of leave-one-k-out errors pooled over all curves (each curve's k weighted equally).
    pub fn pooled_loo(&self) -> Vec<(FitKind, f64)> {
        FitKind::ALL
            .iter()
            .filter_map(|&kind| {
                let squares: Vec<f64> =
                    self.rows.iter().filter(|r| r.kind == kind).filter_map(|r| r.loo_rmse.map(|e| e * e)).collect();
                (!squares.is_empty()).then(|| (kind, (squares.iter().sum::<f64>() / squares.len() as f64).sqrt()))
            })
            .collect()
    }
}

fn parameters(kind: FitKind) -> usize {
    match kind {
        FitKind::Concave | FitKind::Isotonic | FitKind::ConstantAlpha => 1,
        FitKind::GeometricDecay => 2,
    }
}

fn fit_points(points: &BTreeMap<usize, f64>, kind: FitKind) -> ChainModel {
    match kind {
        FitKind::Concave => ChainModel::Positions { unconditional: concave_least_squares(points, None) },
        FitKind::Isotonic => ChainModel::Positions { unconditional: isotonic_increments(points) },
        FitKind::ConstantAlpha => {
            let loss = |x: &[f64]| sum_squares(points, &ChainModel::ConstantAlpha { alpha: x[0].clamp(0.0, 1.0) });
            let best = nelder_mead(&loss, &[0.6]);
            ChainModel::ConstantAlpha { alpha: best[0].clamp(0.0, 1.0) }
        }
        FitKind::GeometricDecay => {
            let model =
                |x: &[f64]| ChainModel::GeometricDecay { c1: x[0].clamp(0.0, 1.0), gamma: x[1].clamp(0.0, 2.0) };
            let loss = |x: &[f64]| sum_squares(points, &model(x));
            let best = [[0.7, 0.95], [0.9, 0.8], [0.5, 1.0]]
                .iter()
                .map(|start| nelder_mead(&loss, start))
                .min_by(|a, b| loss(a).total_cmp(&loss(b)))
                .expect("three starts");
            model(&best)
        }
    }
}

fn sum_squares(points: &BTreeMap<usize, f64>, model: &ChainModel) -> f64 {
    let max_k = *points.keys().next_back().expect("fits need points");
    let p = model.unconditional(max_k);
    let mut cumulative = vec![1.0; max_k + 1];
    for i in 1..=max_k {
        cumulative[i] = cumulative[i - 1] + p[i - 1];
    }
    points.iter().map(|(&k, &al)| (cumulative[k] - al).powi(2)).sum()
}

/// Least squares of AL(k) − 1 ≈ Σ_{i≤k} p_i over chains. With the differences d_j = p_j − p_{j+1} ≥ 0,
/// p_i = Σ_{j≥i} d_j and AL(k) − 1 = Σ_j min(j, k)·d_j, so the fit is a non-negative least-squares problem,
/// solved exactly by Lawson–Hanson. The remaining constraint p_1 = Σ d_j ≤ 1 binds only when AL(1) is near
/// 2; then the fit is repeated with a heavily weighted row pinning Σ d_j to 1. An `anchor` k is held the same
/// way: its row weighs so much that the fit passes through AL(anchor).
fn concave_least_squares(points: &BTreeMap<usize, f64>, anchor: Option<usize>) -> Vec<f64> {
    const PIN_WEIGHT: f64 = 1e4;
    let max_k = *points.keys().next_back().expect("fits need points");
    let rows: Vec<usize> = points.keys().copied().collect();
    let weight = |r: usize| if Some(rows[r]) == anchor { PIN_WEIGHT } else { 1.0 };
    let mut design = Array2::from_shape_fn((rows.len(), max_k), |(r, j)| weight(r) * rows[r].min(j + 1) as f64);
    let mut target: Array1<f64> = points.values().enumerate().map(|(r, al)| weight(r) * (al - 1.0)).collect();
    let mut d = nnls(&design, &target);
    if d.sum() > 1.0 {
        design.push_row(Array1::from_elem(max_k, PIN_WEIGHT).view()).expect("row has max_k columns");
        target = target.into_iter().chain([PIN_WEIGHT]).collect();
        d = nnls(&design, &target);
    }
    let mut tail = 0.0;
    let mut p = vec![0.0; max_k];
    for i in (0..max_k).rev() {
        tail += d[i];
        p[i] = tail.min(1.0);
    }
    p
}

/// Non-negative least squares min ‖A x − b‖², x ≥ 0 (Lawson & Hanson 1974, on the normal equations as in
/// Bro & De Jong 1997). Exact in finitely many steps; the problems here have at most 32 unknowns.
fn nnls(a: &Array2<f64>, b: &Array1<f64>) -> Array1<f64> {
    const TOLERANCE: f64 = 1e-12;
    let n = a.ncols();
    let gram = a.t().dot(a);
    let rhs = a.t().dot(b);
    let mut x = Array1::<f64>::zeros(n);
    let mut passive = vec![false; n];
    for _ in 0..3 * n + 10 {
        let w = &rhs - &gram.dot(&x);
        let Some(j) = (0..n).filter(|&j| !passive[j] && w[j] > TOLERANCE).max_by(|&i, &j| w[i].total_cmp(&w[j])) else {
            break;
        };
        passive[j] = true;
        loop {
            let s = solve_passive(&gram, &rhs, &passive);
            if (0..n).all(|i| !passive[i] || s[i] > TOLERANCE) {
                x = s;
                break;
            }
            let alpha = (0..n)
                .filter(|&i| passive[i] && s[i] <= TOLERANCE)
                .map(|i| x[i] / (x[i] - s[i]))
                .fold(f64::INFINITY, f64::min);
            x = &x + &((&s - &x) * alpha);
            for i in 0..n {
                if passive[i] && x[i] <= TOLERANCE {
                    passive[i] = false;
                    x[i] = 0.0;
                }
            }
        }
    }
    x
}

/// Solves the normal equations restricted to the passive set (zeros elsewhere) by Gaussian elimination
/// with partial pivoting.
fn solve_passive(gram: &Array2<f64>, rhs: &Array1<f64>, passive: &[bool]) -> Array1<f64> {
    let index: Vec<usize> = (0..passive.len()).filter(|&i| passive[i]).collect();
    let m = index.len();
    let mut system: Vec<Vec<f64>> =
        index.iter().map(|&r| index.iter().map(|&c| gram[[r, c]]).chain([rhs[r]]).collect()).collect();
    for col in 0..m {
        let pivot = (col..m).max_by(|&a, &b| system[a][col].abs().total_cmp(&system[b][col].abs())).expect("rows");
        system.swap(col, pivot);
        let diagonal = system[col][col];
        if diagonal.abs() < 1e-300 {
            continue;
        }
        let (above, below) = system.split_at_mut(col + 1);
        let pivot_row = &above[col];
        for row in below.iter_mut() {
            let factor = row[col] / diagonal;
            for (cell, &p) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                *cell -= factor * p;
            }
        }
    }
    let mut solution = vec![0.0; m];
    for row in (0..m).rev() {
        let known: f64 = (row + 1..m).map(|c| system[row][c] * solution[c]).sum();
        solution[row] = if system[row][row].abs() < 1e-300 { 0.0 } else { (system[row][m] - known) / system[row][row] };
    }
    let mut full = Array1::<f64>::zeros(passive.len());
    for (slot, &i) in index.iter().enumerate() {
        full[i] = solution[slot];
    }
    full
}

/// Pool adjacent violators on the increments between measured k (a gap of g positions is one block of
/// weight g), non-increasing, then clipped to [0, 1].
fn isotonic_increments(points: &BTreeMap<usize, f64>) -> Vec<f64> {
    // Blocks of (mean increment, weight in positions).
    let mut blocks: Vec<(f64, usize)> = Vec::new();
    let (mut previous_k, mut previous_al) = (0usize, 1.0);
    for (&k, &al) in points {
        let width = k - previous_k;
        blocks.push(((al - previous_al) / width as f64, width));
        while blocks.len() > 1 && blocks[blocks.len() - 2].0 < blocks[blocks.len() - 1].0 {
            let (v2, w2) = blocks.pop().expect("two blocks");
            let (v1, w1) = blocks.pop().expect("two blocks");
            let w = w1 + w2;
            blocks.push(((v1 * w1 as f64 + v2 * w2 as f64) / w as f64, w));
        }
        previous_k = k;
        previous_al = al;
    }
    blocks
        .iter()
        .flat_map(|&(value, width)| std::iter::repeat_n(value.clamp(0.0, 1.0), width))
        .take(MAX_DRAFT_LEN)
        .collect()
}

/// A small Nelder–Mead minimiser; the fits here have one or two parameters and smooth losses.
fn nelder_mead(loss: &dyn Fn(&[f64]) -> f64, start: &[f64]) -> Vec<f64> {
    let n = start.len();
    let mut simplex: Vec<Vec<f64>> = vec![start.to_vec()];
    for i in 0..n {
        let mut v = start.to_vec();
        v[i] += 0.1;
        simplex.push(v);
    }
    let mut values: Vec<f64> = simplex.iter().map(|v| loss(v)).collect();
    for _ in 0..2_000 {
        let mut order: Vec<usize> = (0..=n).collect();
        order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        simplex = order.iter().map(|&i| simplex[i].clone()).collect();
        values = order.iter().map(|&i| values[i]).collect();
        if (values[n] - values[0]).abs() < 1e-15 {
            break;
        }
        let centroid: Vec<f64> = (0..n).map(|d| simplex[..n].iter().map(|v| v[d]).sum::<f64>() / n as f64).collect();
        let toward = |t: f64| -> Vec<f64> { (0..n).map(|d| centroid[d] + t * (simplex[n][d] - centroid[d])).collect() };
        let reflected = toward(-1.0);
        let fr = loss(&reflected);
        if fr < values[0] {
            let expanded = toward(-2.0);
            let fe = loss(&expanded);
            (simplex[n], values[n]) = if fe < fr { (expanded, fe) } else { (reflected, fr) };
        } else if fr < values[n - 1] {
            (simplex[n], values[n]) = (reflected, fr);
        } else {
            let contracted = toward(0.5);
            let fc = loss(&contracted);
            if fc < values[n] {
                (simplex[n], values[n]) = (contracted, fc);
            } else {
                for i in 1..=n {
                    simplex[i] = (0..n).map(|d| simplex[0][d] + 0.5 * (simplex[i][d] - simplex[0][d])).collect();
                    values[i] = loss(&simplex[i]);
                }
            }
        }
    }
    let best = (0..=n).min_by(|&a, &b| values[a].total_cmp(&values[b])).expect("non-empty simplex");
    simplex[best].clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::ThinkingMode;

    fn curve(values: &[f64]) -> Curve {
        let points = values.iter().enumerate().map(|(i, &al)| (i + 1, al)).collect();
        Curve::new("m", ThinkingMode::On, points).unwrap()
    }

    #[test]
    fn a_valid_chain_is_its_own_concave_fit() {
        let c = curve(&[1.78, 2.38, 2.83]);
        for kind in [FitKind::Concave, FitKind::Isotonic] {
            let f = fit(&c, kind).unwrap();
            assert!(f.rmse < 1e-6, "{kind}: {}", f.rmse);
            let p = f.chain(3).unwrap();
            assert!((p.unconditional()[2] - 0.45).abs() < 1e-6);
        }
    }

    #[test]
    fn one_point_past_k_1_leaves_the_shape_to_constant_alpha() {
        let one = Curve::new("m", ThinkingMode::On, [(3, 2.83)].into_iter().collect()).unwrap();
        for kind in [FitKind::Concave, FitKind::Isotonic] {
            let err = fit(&one, kind).unwrap_err().to_string();
            assert!(err.contains("k = 3 alone") && err.contains("constant-alpha"), "{err}");
        }
        let alpha = fit(&one, FitKind::ConstantAlpha).unwrap();
        assert!((alpha.model.acceptance_length(3) - 2.83).abs() < 1e-4);
        assert!(alpha.model.acceptance_length(16) < 5.0, "a geometric tail, not a straight line");
        let first = Curve::new("m", ThinkingMode::On, [(1, 1.8)].into_iter().collect()).unwrap();
        assert!(fit(&first, FitKind::Concave).is_ok(), "AL(1) alone fixes p_1");
    }

    #[test]
    fn constant_alpha_recovers_its_own_curve() {
        let truth = ChainModel::ConstantAlpha { alpha: 0.7 };
        let values: Vec<f64> = (1..=8).map(|k| truth.acceptance_length(k)).collect();
        let f = fit(&curve(&values), FitKind::ConstantAlpha).unwrap();
        let ChainModel::ConstantAlpha { alpha } = f.model else { panic!() };
        assert!((alpha - 0.7).abs() < 1e-5, "{alpha}");
        assert!(f.loo_rmse.unwrap() < 1e-5);
    }

    #[test]
    fn dips_are_repaired_and_pooled() {
        // dsv4_mtp thinking_off: AL(7) = 3.00 < AL(6) = 3.16.
        let c = curve(&[1.92, 2.61, 2.97, 3.00, 3.10, 3.16, 3.00, 3.11]);
        for &kind in FitKind::ALL {
            let f = fit(&c, kind).unwrap();
            let p = f.chain(12).unwrap();
            assert!(p.unconditional().windows(2).all(|w| w[0] + 1e-12 >= w[1]), "{kind}: {:?}", p.unconditional());
            assert!(f.loo_rmse.is_some());
        }
        let iso = isotonic_increments(c.points());
        assert!(iso.iter().all(|p| (0.0..=1.0).contains(p)));
    }

    #[test]
    fn the_chain_through_a_dip_keeps_the_golden_mean() {
        // dsv4_mtp thinking_off: AL(7) = 3.00 < AL(6) = 3.16, so a pin at k = 7 needs a fitted chain.
        let c = curve(&[1.92, 2.61, 2.97, 3.00, 3.10, 3.16, 3.00, 3.11]);
        let chain = concave_through(&c, 7).unwrap();
        assert_eq!(chain.k(), 7);
        assert!((chain.acceptance_length() - 3.00).abs() < 1e-6, "{}", chain.acceptance_length());
        assert!(chain.unconditional().windows(2).all(|w| w[0] + 1e-12 >= w[1]));
        // A valid chain passes through itself.
        let valid = concave_through(&c, 3).unwrap();
        for (got, want) in valid.unconditional().iter().zip([0.92, 0.69, 0.36]) {
            assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        }
        let one = Curve::new("m", ThinkingMode::On, [(3, 2.83)].into_iter().collect()).unwrap();
        assert!(concave_through(&one, 3).unwrap_err().to_string().contains("no point below"));
        assert!(concave_through(&c, 9).is_err());
    }

    #[test]
    fn too_few_points_is_an_error() {
        let c = curve(&[1.8]);
        assert!(fit(&c, FitKind::GeometricDecay).is_err());
    }
}
