//! Calibration: least-squares fit of the cost model's efficiencies to measured runs (model.md §6).
//!
//! The target side (bandwidth efficiency, compute efficiency, fixed time per forward) is fitted on spec-off
//! rows (k = 0) — a concurrency sweep is enough; the drafter overhead (fixed time per draft forward) is then
//! fitted on spec rows with a known AL. Each forward's time is a·x + b·y + c + comm with a = 1/bw_eff,
//! b = 1/flops_eff, c = the fixed time and x, y its memory or compute seconds at peak (whichever binds), so
//! for a fixed assignment of regimes the fit is linear; regimes are re-assigned until they stop changing.
//! Bounds (efficiency ≤ 1, fixed time ≥ 0) are enforced by clamping and refitting the rest.
//!
//! Measured CSV columns (one row per run, `#` comments allowed):
//!
//! | column | required | meaning |
//! |---|---|---|
//! | `hardware`, `model` | yes | profile names (one hardware and one model per file) |
//! | `tp` | yes | tensor parallelism = GPUs per replica |
//! | `concurrency` | yes | concurrent requests B |
//! | `k` | yes | draft length, 0 = spec off |
//! | `al` | for k > 0 | measured acceptance length (tokens per step incl. bonus) |
//! | `context` | or `isl`+`osl` | decode context in tokens |
//! | `isl`, `osl`, `prefix_hit` | or `context` | turn shape; prefill of isl·(1 − prefix_hit) is amortised |
//! | `step_ms` | one of three | measured time per decode step |
//! | `tpot_ms` | one of three | time per output token per request (step = TPOT·AL) |
//! | `throughput_per_gpu` | one of three | output tok/s per GPU (step = B·AL / (throughput·tp)) |
//! | `drafter`, `precision` | no | drafter profile (default: the model's only one) and weight precision |
//!
//! When several timing columns are filled, `step_ms` wins over `tpot_ms` over `throughput_per_gpu`.

use std::path::Path;

use serde::Serialize;

use super::cost::{CostModel, Terms, Workload};
use super::csv::{CsvRow, CsvTable};
use super::profile::{HardwareProfile, Precision, Profiles};
use crate::error::{Error, Result};
use crate::units::check_al;

/// Re-assignment rounds of memory/compute regimes before giving up on convergence.
const MAX_ROUNDS: usize = 20;

/// One measured run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measurement {
    /// Line in the CSV.
    pub line: usize,
    /// Hardware profile name.
    pub hardware: String,
    /// Model profile name.
    pub model: String,
    /// Drafter profile name, if given.
    pub drafter: Option<String>,
    /// Weight precision, if given.
    pub precision: Option<Precision>,
    /// Tensor parallelism.
    pub tp: usize,
    /// Concurrent requests.
    pub concurrency: usize,
    /// Draft length.
    pub k: usize,
    /// Acceptance length (1 for k = 0).
    pub al: f64,
    /// The workload shape.
    pub workload: Workload,
    /// Measured step time, seconds.
    pub step_s: f64,
}

/// Reads a measured-runs CSV (columns in the module docs).
///
/// # Errors
/// [`Error::Parse`] naming the file, line and column for a missing column, an empty or non-numeric cell, a
/// zero or negative value, or an AL outside [1, k+1].
pub fn read_measurements(text: &str, origin: &str) -> Result<Vec<Measurement>> {
    let table = CsvTable::parse(text, origin)?;
    table.require(&["hardware", "model", "tp", "concurrency", "k"])?;
    if !(table.has("context") || table.has("isl") && table.has("osl")) {
        return Err(Error::parse(origin, None, "missing column(s): give context, or isl and osl"));
    }
    if !["step_ms", "tpot_ms", "throughput_per_gpu"].iter().any(|c| table.has(c)) {
        return Err(Error::parse(origin, None, "missing column(s): give step_ms, tpot_ms or throughput_per_gpu"));
    }
    table.rows().map(|row| measurement(&row)).collect()
}

fn measurement(row: &CsvRow<'_>) -> Result<Measurement> {
    let k = row.count("k", false)?;
    let al = match (k, row.opt_f64("al")?) {
        (0, _) => 1.0,
        (_, Some(al)) => {
            check_al(al, k, "al").map_err(|e| row.error("al", &e.to_string()))?;
            al
        }
        (_, None) => return Err(row.error("al", "is needed for a spec run (k > 0)")),
    };
    let workload = match row.opt_f64("context")? {
        Some(_) => Workload::Decode { context: row.non_negative("context", false)? },
        None => Workload::Turns {
            isl: row.non_negative("isl", false)?,
            osl: row.non_negative("osl", true)?,
            prefix_hit: row.opt_f64("prefix_hit")?.unwrap_or(0.0),
        },
    };
    workload.validate().map_err(|e| row.error("prefix_hit", &e.to_string()))?;
    let tp = row.count("tp", true)?;
    let concurrency = row.count("concurrency", true)?;
    let step_s = if row.opt_str("step_ms").is_some() {
        row.non_negative("step_ms", true)? / 1e3
    } else if row.opt_str("tpot_ms").is_some() {
        row.non_negative("tpot_ms", true)? / 1e3 * al
    } else if row.opt_str("throughput_per_gpu").is_some() {
        concurrency as f64 * al / (row.non_negative("throughput_per_gpu", true)? * tp as f64)
    } else {
        return Err(row.error("step_ms", "no timing: fill step_ms, tpot_ms or throughput_per_gpu"));
    };
    let precision = row
        .opt_str("precision")
        .map(|p| p.parse::<Precision>().map_err(|e| row.error("precision", &e.to_string())))
        .transpose()?;
    Ok(Measurement {
        line: row.line(),
        hardware: row.str("hardware")?.to_string(),
        model: row.str("model")?.to_string(),
        drafter: row.opt_str("drafter").map(str::to_string),
        precision,
        tp,
        concurrency,
        k,
        al,
        workload,
        step_s,
    })
}

/// A fitted efficiency and whether the data determined it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fitted {
    /// The value before calibration (profile default).
    pub before: f64,
    /// The value after.
    pub after: f64,
    /// False when no row exercised it (kept at the default) or it was clamped to its bound.
    pub identified: bool,
}

/// Measured against fitted step time for one row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Residual {
    /// Line in the CSV.
    pub line: usize,
    /// Tensor parallelism.
    pub tp: usize,
    /// Concurrent requests.
    pub concurrency: usize,
    /// Draft length.
    pub k: usize,
    /// Acceptance length.
    pub al: f64,
    /// Decode context in tokens.
    pub context: f64,
    /// Measured step, ms.
    pub measured_ms: f64,
    /// Model step after calibration, ms.
    pub predicted_ms: f64,
    /// Predicted − measured, ms.
    pub residual_ms: f64,
    /// Residual relative to measured, percent.
    pub residual_pct: f64,
}

/// The outcome of a calibration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    /// Where the measurements came from.
    pub origin: String,
    /// Model profile key.
    pub model: String,
    /// Drafter profile key, when spec rows were fitted.
    pub drafter: Option<String>,
    /// Weight precision used.
    pub precision: String,
    /// HBM bandwidth efficiency.
    pub bw_eff: Fitted,
    /// Compute efficiency.
    pub flops_eff: Fitted,
    /// Fixed time per target forward, µs.
    pub t_fixed_us: Fitted,
    /// Fixed time per draft forward, µs.
    pub draft_fixed_us: Fitted,
    /// Per-row residuals.
    pub residuals: Vec<Residual>,
    /// Root-mean-square residual over spec-off rows, ms.
    pub rmse_spec_off_ms: f64,
    /// Root-mean-square residual over spec rows, ms (None without spec rows).
    pub rmse_spec_ms: Option<f64>,
    /// The calibrated hardware profile (what `--output` writes).
    pub profile: HardwareProfile,
    /// Remarks: unidentified or clamped parameters.
    pub notes: Vec<String>,
}

/// Fits the efficiencies of the single hardware in `rows` for its model.
///
/// # Errors
/// [`Error::Invalid`] when the rows mix hardware, models or precisions, when there are fewer than two spec-off
/// rows, or when the spec-off rows cannot separate the parameters; lookup and cost-model errors as
/// [`Profiles`] and [`CostModel::new`].
pub fn calibrate(
    profiles: &Profiles,
    rows: &[Measurement],
    origin: &str,
    drafter: Option<&str>,
) -> Result<Calibration> {
    let first = rows.first().ok_or_else(|| Error::invalid(origin, "no measured rows"))?;
    let hardware = profiles.hardware(&first.hardware)?;
    let model = profiles.model(&first.model)?;
    for r in rows {
        if profiles.hardware(&r.hardware)?.key != hardware.key || profiles.model(&r.model)?.key != model.key {
            return Err(Error::invalid(
                format!("{origin}:{}", r.line),
                format!(
                    "rows mix {}/{} with {}/{}: calibrate one hardware and model per file",
                    first.hardware, first.model, r.hardware, r.model
                ),
            ));
        }
        if r.precision != first.precision {
            return Err(Error::invalid(format!("{origin}:{}", r.line), "rows mix weight precisions"));
        }
    }
    let precision = first.precision.unwrap_or(model.default_precision);
    let spec_rows: Vec<&Measurement> = rows.iter().filter(|r| r.k > 0).collect();
    let drafter_name = drafter.map(str::to_string).or_else(|| spec_rows.iter().find_map(|r| r.drafter.clone()));
    let drafter =
        if spec_rows.is_empty() { None } else { Some(profiles.drafter(model, drafter_name.as_deref(), None)?) };
    let off: Vec<&Measurement> = rows.iter().filter(|r| r.k == 0).collect();
    if off.len() < 2 {
        return Err(Error::invalid(
            origin,
            format!(
                "{} spec-off row(s) (k = 0): the target side needs at least two, at different concurrency or context",
                off.len()
            ),
        ));
    }
    let models: Vec<CostModel> = rows
        .iter()
        .map(|r| {
            CostModel::new(hardware, model, drafter, r.tp, precision, Precision::Bf16)
                .map_err(|e| Error::invalid(format!("{origin}:{}", r.line), e.to_string()))
        })
        .collect::<Result<_>>()?;
    let mut hw = hardware.clone();
    let mut notes = Vec::new();
    let (bw_id, flops_id, fixed_id) = fit_target(&mut hw, rows, &models, &mut notes, origin)?;
    let draft_id = fit_drafter(&mut hw, rows, &models, &mut notes)?;

    let mut residuals = Vec::with_capacity(rows.len());
    for (r, cost) in rows.iter().zip(&models) {
        let cost = with_hardware(cost, &hw);
        let predicted = cost.step_time(r.concurrency, r.k, r.al, &r.workload)?.total;
        residuals.push(Residual {
            line: r.line,
            tp: r.tp,
            concurrency: r.concurrency,
            k: r.k,
            al: r.al,
            context: r.workload.decode_context(),
            measured_ms: r.step_s * 1e3,
            predicted_ms: predicted * 1e3,
            residual_ms: (predicted - r.step_s) * 1e3,
            residual_pct: (predicted / r.step_s - 1.0) * 100.0,
        });
    }
    let rmse = |spec: bool| {
        let sel: Vec<f64> = residuals.iter().filter(|r| (r.k > 0) == spec).map(|r| r.residual_ms.powi(2)).collect();
        (!sel.is_empty()).then(|| (sel.iter().sum::<f64>() / sel.len() as f64).sqrt())
    };
    hw.source =
        format!("calibrated by alsim from {origin} ({}, {} rows) on {}", model.key, rows.len(), hardware.source);
    hw.confidence = format!(
        "fit rmse {:.3} ms spec off{}",
        rmse(false).unwrap_or(0.0),
        rmse(true).map(|r| format!(", {r:.3} ms spec")).unwrap_or_default()
    );
    Ok(Calibration {
        origin: origin.to_string(),
        model: model.key.clone(),
        drafter: drafter.map(|d| d.key.clone()),
        precision: precision.to_string(),
        bw_eff: Fitted { before: hardware.bw_eff, after: hw.bw_eff, identified: bw_id },
        flops_eff: Fitted { before: hardware.flops_eff, after: hw.flops_eff, identified: flops_id },
        t_fixed_us: Fitted { before: hardware.t_fixed_us, after: hw.t_fixed_us, identified: fixed_id },
        draft_fixed_us: Fitted { before: hardware.draft_fixed_us, after: hw.draft_fixed_us, identified: draft_id },
        rmse_spec_off_ms: rmse(false).unwrap_or(0.0),
        rmse_spec_ms: rmse(true),
        residuals,
        profile: hw,
        notes,
    })
}

fn with_hardware(cost: &CostModel, hw: &HardwareProfile) -> CostModel {
    let mut cost = cost.clone();
    *cost.hardware_mut() = hw.clone();
    cost
}

/// The whole-step terms of a row under the current efficiencies.
fn row_terms(cost: &CostModel, r: &Measurement) -> Result<Terms> {
    let (verify, draft, prefill) = cost.step_terms(r.concurrency, r.k, r.al, &r.workload)?;
    Ok(Terms {
        x: verify.x + draft.x + prefill.x,
        y: verify.y + draft.y + prefill.y,
        target_fixed: verify.target_fixed + prefill.target_fixed,
        draft_fixed: draft.draft_fixed,
        comm: verify.comm + draft.comm + prefill.comm,
    })
}

/// Fits a = 1/bw_eff, b = 1/flops_eff and c = t_fixed on the spec-off rows; returns which were identified.
fn fit_target(
    hw: &mut HardwareProfile,
    rows: &[Measurement],
    models: &[CostModel],
    notes: &mut Vec<String>,
    origin: &str,
) -> Result<(bool, bool, bool)> {
    let mut regimes: Option<Vec<bool>> = None;
    let mut identified = (false, false, false);
    for _ in 0..MAX_ROUNDS {
        let mut design = Vec::new();
        let mut target = Vec::new();
        let mut now = Vec::new();
        for (r, cost) in rows.iter().zip(models).filter(|(r, _)| r.k == 0) {
            let t = row_terms(&with_hardware(cost, hw), r)?;
            design.push([t.x, t.y, t.target_fixed]);
            target.push(r.step_s - t.comm);
            now.push(t.x > 0.0);
        }
        if regimes.as_ref() == Some(&now) {
            break;
        }
        regimes = Some(now);
        let usable = [design.iter().any(|d| d[0] > 0.0), design.iter().any(|d| d[1] > 0.0), true];
        // Lower bounds: a = 1/bw_eff ≥ 1, b = 1/flops_eff ≥ 1, c ≥ 0.
        let bounds = [1.0, 1.0, 0.0];
        let current = [1.0 / hw.bw_eff, 1.0 / hw.flops_eff, hw.t_fixed_us * 1e-6];
        let (solution, clamped) = bounded_least_squares(&design, &target, usable, bounds, current).ok_or_else(|| {
            Error::invalid(
                origin,
                "the spec-off rows do not vary enough to separate bandwidth from fixed overhead: measure at least two concurrencies or contexts",
            )
        })?;
        hw.bw_eff = 1.0 / solution[0];
        hw.flops_eff = 1.0 / solution[1];
        hw.t_fixed_us = solution[2] * 1e6;
        identified = (usable[0] && !clamped[0], usable[1] && !clamped[1], !clamped[2]);
    }
    let name = ["bw_eff", "flops_eff", "t_fixed_us"];
    let flags = [identified.0, identified.1, identified.2];
    for (i, id) in flags.iter().enumerate() {
        if !id {
            notes.push(match i {
                1 if hw.flops_eff < 1.0 => {
                    format!("{}: no spec-off row is compute-bound; the default is kept", name[i])
                }
                _ => format!(
                    "{}: the fit hit its bound and was clamped; the rows disagree with the roofline shape",
                    name[i]
                ),
            });
        }
    }
    Ok(identified)
}

/// Fits the fixed time per draft forward on spec rows, with the target side fixed.
fn fit_drafter(
    hw: &mut HardwareProfile,
    rows: &[Measurement],
    models: &[CostModel],
    notes: &mut Vec<String>,
) -> Result<bool> {
    let mut num = 0.0;
    let mut den = 0.0;
    let mut zero = hw.clone();
    zero.draft_fixed_us = 0.0;
    for (r, cost) in rows.iter().zip(models).filter(|(r, _)| r.k > 0) {
        let cost = with_hardware(cost, &zero);
        let predicted = cost.step_time(r.concurrency, r.k, r.al, &r.workload)?.total;
        let forwards = row_terms(&cost, r)?.draft_fixed;
        num += forwards * (r.step_s - predicted);
        den += forwards * forwards;
    }
    if den == 0.0 {
        notes.push("draft_fixed_us: no spec rows (k > 0); the default is kept".into());
        return Ok(false);
    }
    let fitted = num / den;
    if fitted < 0.0 {
        notes.push("draft_fixed_us: spec rows are faster than the drafter's roofline; clamped to 0".into());
        hw.draft_fixed_us = 0.0;
        return Ok(false);
    }
    hw.draft_fixed_us = fitted * 1e6;
    Ok(true)
}

/// Least squares over the `usable` columns of `design` with lower `bounds`: solve, clamp any coordinate below
/// its bound, refit the rest. Unusable columns keep `current`. `None` when the normal equations are singular.
fn bounded_least_squares(
    design: &[[f64; 3]],
    target: &[f64],
    usable: [bool; 3],
    bounds: [f64; 3],
    current: [f64; 3],
) -> Option<([f64; 3], [bool; 3])> {
    let mut solution = current;
    let mut free = usable;
    let mut clamped = [false; 3];
    loop {
        let columns: Vec<usize> = (0..3).filter(|&i| free[i]).collect();
        let residual_target: Vec<f64> = design
            .iter()
            .zip(target)
            .map(|(d, t)| t - (0..3).filter(|&i| !free[i]).map(|i| d[i] * solution[i]).sum::<f64>())
            .collect();
        let fitted = solve_normal(design, &residual_target, &columns)?;
        for (&i, v) in columns.iter().zip(&fitted) {
            solution[i] = *v;
        }
        let below: Vec<usize> = columns.iter().copied().filter(|&i| solution[i] < bounds[i]).collect();
        if below.is_empty() {
            return Some((solution, clamped));
        }
        for i in below {
            solution[i] = bounds[i];
            free[i] = false;
            clamped[i] = true;
        }
    }
}

/// Solves the normal equations for the given columns by Gaussian elimination with partial pivoting.
fn solve_normal(design: &[[f64; 3]], target: &[f64], columns: &[usize]) -> Option<Vec<f64>> {
    let n = columns.len();
    if n == 0 {
        return Some(Vec::new());
    }
    if design.len() < n {
        return None;
    }
    // Scale columns to unit norm so seconds and counts share one pivot tolerance.
    let scale: Vec<f64> = columns.iter().map(|&c| design.iter().map(|d| d[c] * d[c]).sum::<f64>().sqrt()).collect();
    if scale.contains(&0.0) {
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
        if m[pivot][col].abs() < 1e-10 {
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

/// Writes the calibrated hardware profile to `path` as a hardware CSV (`predict --profile` reads it).
///
/// # Errors
/// [`Error::Invalid`] naming `--output` when the file exists and `force` is false; [`Error::Io`] on write failure.
pub fn write_profile(calibration: &Calibration, path: &Path, force: bool) -> Result<()> {
    if path.exists() && !force {
        return Err(Error::invalid(
            "--output",
            format!("{} already exists; pass --force to overwrite it", path.display()),
        ));
    }
    let text = format!(
        "# alsim calibrated hardware profile: {} for {} ({} weights), fitted on {}.\n\
         # Use with: alsim predict --profile {} --model {}\n\
         # bw_eff {:.4}, flops_eff {:.4}, t_fixed_us {:.1}, draft_fixed_us {:.1}; rmse {:.3} ms spec off{}.\n{}\n{}\n",
        calibration.profile.key,
        calibration.model,
        calibration.precision,
        calibration.origin,
        path.display(),
        calibration.model,
        calibration.profile.bw_eff,
        calibration.profile.flops_eff,
        calibration.profile.t_fixed_us,
        calibration.profile.draft_fixed_us,
        calibration.rmse_spec_off_ms,
        calibration.rmse_spec_ms.map(|r| format!(", {r:.3} ms spec")).unwrap_or_default(),
        HardwareProfile::CSV_HEADER,
        calibration.profile.csv_row()
    );
    std::fs::write(path, text).map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::Prediction;

    const TABLE10: &str = include_str!("../../tests/data/speedbench_table10_step_latency.csv");

    struct Row {
        drafter: String,
        isl: f64,
        al: f64,
        t_ar: f64,
        t_sd: f64,
        actual: f64,
        projected: f64,
    }

    fn table10() -> Vec<Row> {
        let t = CsvTable::parse(TABLE10, "table10").unwrap();
        t.rows()
            .map(|r| Row {
                drafter: r.str("drafter").unwrap().to_string(),
                isl: match r.str("isl").unwrap() {
                    "1k" => 1024.0,
                    "2k" => 2048.0,
                    _ => 8192.0,
                },
                al: r.f64("al").unwrap(),
                t_ar: r.f64("t_ar_ms").unwrap() / 1e3,
                t_sd: r.f64("t_sd_ms").unwrap() / 1e3,
                actual: r.f64("speedup_actual").unwrap(),
                projected: r.f64("speedup_projected").unwrap(),
            })
            .collect()
    }

    #[test]
    fn speedup_proxy_matches_speedbench_table10() {
        for row in table10() {
            let (_, _, proxy) = Prediction::rates(16, row.al, row.t_sd, row.t_ar, 1);
            assert!((proxy - row.projected).abs() <= 0.011, "{proxy} vs projected {}", row.projected);
            // The paper projects from unrounded step times; against the measured speedup it claims ±0.02, which
            // the rounded table reproduces to ±0.03.
            assert!((proxy - row.actual).abs() <= 0.03, "{proxy} vs actual {}", row.actual);
        }
    }

    fn t_ar_rows() -> Vec<Measurement> {
        let mut seen = Vec::new();
        let mut rows = Vec::new();
        for (i, row) in table10().into_iter().enumerate() {
            if seen.contains(&(row.isl as usize, (row.t_ar * 1e4) as usize)) {
                continue;
            }
            seen.push((row.isl as usize, (row.t_ar * 1e4) as usize));
            rows.push(Measurement {
                line: i + 1,
                hardware: "b200".into(),
                model: "llama-3.3-70b".into(),
                drafter: None,
                precision: None,
                tp: 1,
                concurrency: 16,
                k: 0,
                al: 1.0,
                workload: Workload::Decode { context: row.isl },
                step_s: row.t_ar,
            });
        }
        rows
    }

    #[test]
    fn calibrated_on_t_ar_the_model_predicts_t_sd() {
        let p = Profiles::embedded();
        let rows = t_ar_rows();
        let cal = calibrate(&p, &rows, "table10", None).unwrap();
        assert!(cal.rmse_spec_off_ms < 1.0, "{cal:?}");
        assert!(cal.bw_eff.after > 0.5 && cal.bw_eff.after <= 1.0);
        let model = p.model("llama-3.3-70b").unwrap();
        // EAGLE3 is a one-layer head: the calibrated roofline lands within 25% of the measured t_sd.
        for row in table10().iter().filter(|r| r.drafter == "EAGLE3") {
            let d = p.drafter(model, Some(&row.drafter), None).unwrap();
            let cost = CostModel::new(&cal.profile, model, Some(d), 1, Precision::Bf16, Precision::Bf16).unwrap();
            let t = cost.step_time(16, 3, row.al, &Workload::Decode { context: row.isl }).unwrap().total;
            assert!((t / row.t_sd - 1.0).abs() < 0.25, "isl {} predicted {t} measured {}", row.isl, row.t_sd);
        }
    }

    #[test]
    fn bad_measurements_are_clear_errors() {
        let err = read_measurements("hardware,model,tp,k\nb200,llama-3.3-70b,1,0\n", "m.csv").unwrap_err();
        assert!(err.to_string().contains("concurrency"), "{err}");
        let header = "hardware,model,tp,concurrency,k,al,context,step_ms\n";
        let err = read_measurements(&format!("{header}b200,llama-3.3-70b,1,16,3,,1024,25\n"), "m.csv").unwrap_err();
        assert!(err.to_string().contains("m.csv:2") && err.to_string().contains("'al'"), "{err}");
        let err = read_measurements(&format!("{header}b200,llama-3.3-70b,1,16,0,,1024,-3\n"), "m.csv").unwrap_err();
        assert!(err.to_string().contains("must be > 0"), "{err}");
        let one = read_measurements(&format!("{header}b200,llama-3.3-70b,1,16,0,,1024,19.6\n"), "m.csv").unwrap();
        let err = calibrate(&Profiles::embedded(), &one, "m.csv", None).unwrap_err().to_string();
        assert!(err.contains("at least two"), "{err}");
        let mixed = read_measurements(
            &format!("{header}b200,llama-3.3-70b,1,16,0,,1024,19.6\nh200,llama-3.3-70b,1,16,0,,2048,20\n"),
            "m.csv",
        )
        .unwrap();
        let err = calibrate(&Profiles::embedded(), &mixed, "m.csv", None).unwrap_err().to_string();
        assert!(err.contains("mix"), "{err}");
    }

    #[test]
    fn least_squares_recovers_known_efficiencies() {
        let p = Profiles::embedded();
        let mut truth = p.hardware("mi355x").unwrap().clone();
        truth.bw_eff = 0.7;
        truth.t_fixed_us = 2500.0;
        truth.draft_fixed_us = 400.0;
        let m = p.model("minimax-m3").unwrap();
        let d = p.drafter(m, Some("Inferact/MiniMax-M3-EAGLE3"), None).unwrap();
        let cost = CostModel::new(&truth, m, Some(d), 4, Precision::Fp4, Precision::Bf16).unwrap();
        let mut rows = Vec::new();
        for (i, (b, k)) in [(1, 0), (4, 0), (16, 0), (32, 0), (4, 3), (16, 2)].into_iter().enumerate() {
            let al = [1.0, 1.78, 2.38, 2.83][k];
            let w = Workload::Decode { context: 4096.0 };
            rows.push(Measurement {
                line: i + 2,
                hardware: "mi355x".into(),
                model: "minimax-m3".into(),
                drafter: Some("Inferact/MiniMax-M3-EAGLE3".into()),
                precision: None,
                tp: 4,
                concurrency: b,
                k,
                al,
                workload: w,
                step_s: cost.step_time(b, k, al, &w).unwrap().total,
            });
        }
        let cal = calibrate(&p, &rows, "synthetic", None).unwrap();
        assert!((cal.bw_eff.after - 0.7).abs() < 1e-6, "{cal:?}");
        assert!((cal.t_fixed_us.after - 2500.0).abs() < 1e-3);
        assert!((cal.draft_fixed_us.after - 400.0).abs() < 1e-3);
        assert!(cal.rmse_spec_ms.unwrap() < 1e-6);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cal.csv");
        write_profile(&cal, &path, false).unwrap();
        let err = write_profile(&cal, &path, false).unwrap_err().to_string();
        assert!(err.contains("--force"), "{err}");
        let mut again = Profiles::embedded();
        assert_eq!(again.load_hardware_file(&path).unwrap(), vec!["mi355x".to_string()]);
        assert!((again.hardware("mi355x").unwrap().bw_eff - 0.7).abs() < 1e-6);
    }
}
