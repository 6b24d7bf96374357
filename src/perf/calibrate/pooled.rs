//! One hardware's spec-off rows from every deployment fitted together, and the profile `--output` writes.
//!
//! Where the pooled rows do not pin the GEMM rate (the compute scale sits at its bound or is left
//! unidentified), the pool takes the `flops_eff` that deployments' own fits did pin, on GPUs with the same
//! datasheet math peaks (H100 and H200 are one compute die: efficiency as a share of that peak carries over),
//! and refits the rest around it. A MoE model's spec-off rows price their routed experts' math with the same
//! efficiency and push it to the matmul ceiling; the H200 kit's Llama-3.3-70B held out was priced from
//! MiniMax-M3's alone, at flops_eff 0.80 against the 0.71–0.73 every dense model's own fit finds (docs/model.md §6).

use std::path::Path;

use serde::Serialize;

use super::fit::{self, Group, Observation, ScaleFit};
use super::{Calibration, Mode, median};
use crate::error::{Error, Result};
use crate::perf::profile::{CALIBRATED_SOURCE, HardwareProfile, Profiles};
use crate::perf::terms::Efficiencies;

/// One hardware's spec-off rows fitted together: the profile `--output` writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PooledFit {
    /// The fit.
    pub fit: ScaleFit,
    /// Spec-off rows pooled.
    pub rows: usize,
    /// Median |fitted / measured − 1| over them.
    pub median_abs_rel_error: f64,
    /// The calibrated hardware profile.
    pub profile: HardwareProfile,
    /// Where its rows did not pin the GEMM rate: the one taken from deployments that did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute_prior: Option<ComputePrior>,
}

/// A GEMM rate one deployment's own fit pinned: its compute scale moved on its own, inside its bounds.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PinnedCompute {
    /// Hardware profile key.
    pub hardware: String,
    /// The fitted `flops_eff`.
    pub flops_eff: f64,
    /// Spec-off rows the fit read.
    pub rows: usize,
}

impl PinnedCompute {
    /// The deployment's rate, where its fit pinned one.
    pub fn of(hardware: &str, fit: &ScaleFit, rows: usize) -> Option<PinnedCompute> {
        let pinned = !fit.kept_start && fit.scales.iter().any(|s| s.groups == [Group::Compute] && !s.at_bound);
        pinned.then(|| PinnedCompute { hardware: hardware.to_string(), flops_eff: fit.efficiency.flops_eff, rows })
    }
}

/// The GEMM rate a pooled fit holds where its own rows do not pin it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ComputePrior {
    /// `flops_eff` held: the row-weighted mean of the deployments' (below the pool's GEMM ceiling).
    pub flops_eff: f64,
    /// Deployments whose fits pinned it.
    pub deployments: usize,
    /// Their spec-off rows.
    pub rows: usize,
}

/// The prior for `base` from `pinned`: the deployments on GPUs with its math peaks, weighted by rows, capped at
/// the GEMM rate the pool's rows measured. `None` without any.
fn compute_prior(
    profiles: &Profiles,
    base: &HardwareProfile,
    pinned: &[PinnedCompute],
    ceiling: f64,
) -> Option<ComputePrior> {
    let same: Vec<&PinnedCompute> =
        pinned.iter().filter(|p| profiles.hardware(&p.hardware).is_ok_and(|h| h.same_math_peaks(base))).collect();
    let rows: usize = same.iter().map(|p| p.rows).sum();
    (rows > 0).then(|| ComputePrior {
        flops_eff: (same.iter().map(|p| p.flops_eff * p.rows as f64).sum::<f64>() / rows as f64).min(ceiling),
        deployments: same.len(),
        rows,
    })
}

/// Whether `fit` leaves the GEMM rate to its bound or its prior: its rows do not pin it.
fn compute_unpinned(fit: &ScaleFit) -> bool {
    fit.unidentified.contains(&Group::Compute)
        || fit.scales.iter().any(|s| s.at_bound && s.groups.contains(&Group::Compute))
}

/// `start` with its compute group scaled to `flops_eff` (the group moves as one scale in every fit).
fn with_flops_eff(start: &Efficiencies, flops_eff: f64) -> Efficiencies {
    let scale = start.flops_eff / flops_eff;
    let mut c = start.coefficients();
    for &i in Group::Compute.members() {
        c[i] *= scale;
    }
    Efficiencies::from_coefficients(&c, start.overlap)
}

/// Fits each hardware's spec-off rows together, starting from its profile; with `overlap` the overlap too.
/// A fit whose rows do not pin the GEMM rate holds the one `pinned` gives (see the module docs).
pub(super) fn pooled_fits(
    profiles: &Profiles,
    pooled: &[(String, Observation)],
    pinned: &[PinnedCompute],
    origin: &str,
    overlap: bool,
    mode: Mode,
) -> Result<Vec<PooledFit>> {
    let mut hardware: Vec<&str> = pooled.iter().map(|(h, _)| h.as_str()).collect();
    hardware.sort_unstable();
    hardware.dedup();
    let mut out = Vec::new();
    for key in hardware {
        let base = profiles.hardware(key)?;
        let obs: Vec<Observation> = pooled.iter().filter(|(h, _)| h == key).map(|(_, o)| *o).collect();
        // Step times identify the overlap; serving pairs keep the profile's (see serving.rs).
        let Some(fit) = mode.target(&base.efficiency, &obs, overlap) else { continue };
        let ceiling = fit::lowest_gemm_ceiling(&obs);
        let prior = compute_unpinned(&fit).then(|| compute_prior(profiles, base, pinned, ceiling)).flatten();
        let held = prior.and_then(|p| {
            let start = with_flops_eff(&base.efficiency, p.flops_eff);
            fit::fit_target_holding(&start, &obs, overlap, &[Group::Compute]).map(|f| (f, p))
        });
        let (fit, compute_prior) = match held {
            Some((f, p)) => (f, Some(p)),
            None => (fit, None),
        };
        let errors = fit::abs_errors(&obs, &fit.efficiency);
        let mut profile = base.clone();
        profile.efficiency = fit.efficiency;
        profile.source = format!("{CALIBRATED_SOURCE} {origin} ({} spec-off rows) on {}", errors.len(), base.source);
        profile.confidence = format!("median spec-off error {:.1} %", median(&errors) * 100.0);
        out.push(PooledFit { rows: errors.len(), median_abs_rel_error: median(&errors), fit, profile, compute_prior });
    }
    Ok(out)
}

/// Writes the calibrated hardware profiles, one row per GPU, to `path` as a hardware CSV (`predict --profile`
/// reads it).
///
/// # Errors
/// [`Error::Parameter`] naming `output` when nothing was fitted (no rows, a profile scored as it is, or an
/// exchange file, whose fit no profile column holds), settled by `force` when the file exists; as
/// [`crate::output::write_one`] when it cannot be written.
pub fn write_profile(calibration: &Calibration, path: &Path, force: bool) -> Result<()> {
    if calibration.mode == Mode::Score {
        return Err(Error::parameter(
            "output",
            "a scored profile is not refitted, so there is no new profile to write",
        ));
    }
    if calibration.exchange.is_some() {
        return Err(Error::parameter(
            "output",
            "an exchange file fits the exchange's latency and bandwidth, which no hardware profile column holds",
        ));
    }
    if calibration.pooled.is_empty() {
        return Err(Error::parameter("output", "no spec-off rows could be fitted, so there is no profile to write"));
    }
    let mut text = format!(
        "# alsim calibrated hardware profiles, fitted on {}.\n# Use with: alsim predict --profile {}\n",
        calibration.origin,
        path.display()
    );
    for p in &calibration.pooled {
        text.push_str(&format!(
            "# {}: {} spec-off rows, median error {:.1} %; {}\n",
            p.profile.key,
            p.rows,
            p.median_abs_rel_error * 100.0,
            p.profile.efficiency
        ));
    }
    text.push_str(&HardwareProfile::csv_header());
    text.push('\n');
    for p in &calibration.pooled {
        text.push_str(&p.profile.csv_row());
        text.push('\n');
    }
    crate::output::write_one("output", path, force, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::cost::{CostModel, Deployment, Workload};
    use crate::perf::profile::Precision;

    /// Spec-off steps of a 70B dense model on one H200, timed with its GEMMs at `flops_eff` of the datasheet
    /// peak, on a GPU whose matmul was measured at `ceiling` of it.
    fn h200_steps(flops_eff: f64, ceiling: f64) -> Vec<(String, Observation)> {
        let p = Profiles::embedded();
        let h200 = p.hardware("h200").unwrap();
        let cost = CostModel::for_measurements(
            h200,
            p.model("llama-3.3-70b").unwrap(),
            None,
            &Deployment::new(1, Precision::Bf16, Precision::Bf16),
        )
        .unwrap();
        let truth = with_flops_eff(&Efficiencies { overlap: 3.0, ..h200.efficiency }, flops_eff);
        let mut out = Vec::new();
        for b in [1, 8, 32, 128, 256] {
            for context in [1024.0, 8192.0] {
                let terms = cost.step_terms(b, 0, 1.0, &Workload::Decode { context }).unwrap();
                let measured_s = terms.time(&truth).total;
                out.push(("h200".to_string(), Observation { terms, measured_s, weight: 1.0, gemm_ceiling: ceiling }));
            }
        }
        out
    }

    fn pinned(hardware: &str, flops_eff: f64, rows: usize) -> PinnedCompute {
        PinnedCompute { hardware: hardware.into(), flops_eff, rows }
    }

    #[test]
    fn a_pool_whose_rows_do_not_pin_the_gemm_rate_holds_the_one_its_compute_die_measured_elsewhere() {
        // Rows that want GEMMs faster than the measured matmul (0.95 of peak against 0.80) hold flops_eff at
        // that bound. An H100 deployment that pinned 0.70 (same math peaks as the H200) sets it instead; a
        // B200's (other peaks) does not.
        let p = Profiles::embedded();
        let rows = h200_steps(0.95, 0.80);
        let fit = |pinned: &[PinnedCompute]| {
            let [one] = pooled_fits(&p, &rows, pinned, "synthetic", true, Mode::Fit).unwrap().try_into().unwrap();
            one
        };
        let alone = fit(&[]);
        assert!((alone.fit.efficiency.flops_eff - 0.80).abs() < 1e-9, "{:?}", alone.fit);
        assert!(alone.compute_prior.is_none() && alone.fit.bounds_hit().contains(&"compute"));
        let other_die = fit(&[pinned("b200", 0.70, 30)]);
        assert_eq!(other_die, alone);
        let borrowed = fit(&[pinned("h100", 0.70, 30), pinned("h100", 0.76, 10)]);
        let want = (0.70 * 30.0 + 0.76 * 10.0) / 40.0;
        assert!((borrowed.fit.efficiency.flops_eff - want).abs() < 1e-9, "{:?}", borrowed.fit);
        assert_eq!(borrowed.compute_prior, Some(ComputePrior { flops_eff: want, deployments: 2, rows: 40 }));
        // The group moves as one: attention keeps its ratio to the GEMMs; memory and fixed time are refitted.
        let e = borrowed.fit.efficiency;
        let start = p.hardware("h200").unwrap().efficiency;
        assert!((e.attn_eff / e.flops_eff - start.attn_eff / start.flops_eff).abs() < 1e-9, "{e:?}");
        assert!(!borrowed.fit.scales.iter().any(|s| s.groups.contains(&Group::Compute)), "{:?}", borrowed.fit);
        assert_ne!(e.bw_eff, start.bw_eff);
        // Never above what the pool's GPU was measured to reach.
        let capped = fit(&[pinned("h100", 0.90, 30)]);
        assert!((capped.fit.efficiency.flops_eff - 0.80).abs() < 1e-9, "{:?}", capped.fit);
    }

    #[test]
    fn a_pool_that_pins_its_own_gemm_rate_keeps_it() {
        let p = Profiles::embedded();
        let rows = h200_steps(0.72, 0.80);
        let [own] = pooled_fits(&p, &rows, &[pinned("h100", 0.60, 30)], "synthetic", true, Mode::Fit)
            .unwrap()
            .try_into()
            .unwrap();
        assert!(own.compute_prior.is_none(), "{own:?}");
        assert!((own.fit.efficiency.flops_eff - 0.72).abs() < 1e-3, "{:?}", own.fit);
    }
}
