//! One hardware's spec-off rows from every deployment fitted together, and the profile `--output` writes.

use std::path::Path;

use serde::Serialize;

use super::fit::{self, Observation, ScaleFit};
use super::{Calibration, Mode, median};
use crate::error::{Error, Result};
use crate::perf::profile::{CALIBRATED_SOURCE, HardwareProfile, Profiles};

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
}

/// Fits each hardware's spec-off rows together, starting from its profile; with `overlap` the overlap too.
pub(super) fn pooled_fits(
    profiles: &Profiles,
    pooled: &[(String, Observation)],
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
        let errors = fit::abs_errors(&obs, &fit.efficiency);
        let mut profile = base.clone();
        profile.efficiency = fit.efficiency;
        profile.source = format!("{CALIBRATED_SOURCE} {origin} ({} spec-off rows) on {}", errors.len(), base.source);
        profile.confidence = format!("median spec-off error {:.1} %", median(&errors) * 100.0);
        out.push(PooledFit { rows: errors.len(), median_abs_rel_error: median(&errors), fit, profile });
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
