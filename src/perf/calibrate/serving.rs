//! Measured serving pairs — one run with speculation and one without, same deployment and concurrency — in
//! the columns of `../shared/data/serving/*.csv`, read as they are:
//!
//! | column | required | meaning |
//! |---|---|---|
//! | `hardware`, `model`, `precision`, `tp` | yes | deployment (profile names; `dsr1` is DeepSeek-R1) |
//! | `isl`, `osl` | yes | input and output tokens per request |
//! | `conc` (or `concurrency`) | yes | concurrent requests |
//! | `none_median_tpot` | yes (the cells of a group may all be blank) | spec-off time per output token, **seconds** (= the spec-off step) |
//! | `tput_ratio` | or both `*_output_tput_per_gpu` | measured speedup: spec throughput over spec-off throughput |
//! | `k` | or `--k` | draft length of the spec run (a blank cell takes `--k`) |
//! | `al` | no | acceptance length of the spec run; absent, one AL per group is fitted |
//! | `framework`, `ep`, `dp_attention`, `spec_method`, `kv_dtype` | no | grouping; DP attention splits KV caches; the drafter is the model's of `spec_method` |
//!
//! Rows are grouped by (hardware, framework, model, precision, TP, EP, DP attention, ISL, OSL, k). Per group:
//! the target side is calibrated on the spec-off TPOT over concurrency ([`super::fit`]) — a group whose TPOT
//! cells are all blank (a published speedup at a known AL, without the step times) keeps the starting profile
//! and is only scored; where the file has
//! no AL, one AL per group is fitted to the measured speedups (reported as fitted — the model is then judged
//! on the *shape* over concurrency, not the level); the spec side is predicted as AL·T_AR/T_SD. Where EP > 1
//! each decode token pays the EP exchange per MoE layer ([`crate::perf::terms::Efficiencies::moe_token_us`]).

use serde::Serialize;

use super::Mode;
use super::fit::{Observation, ScaleFit, abs_errors, minimise};
use super::{checked_workload, deployment_cache, median, parse_bool, parse_precision};
use crate::error::{Error, Result};
use crate::perf::cost::{Deployment, Workload};
use crate::perf::csv::{CsvRow, CsvTable};
use crate::perf::profile::{Precision, Profiles};
use crate::units::check_al;

/// One measured pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServingPair {
    /// Line in the CSV (the first, where the row repeats).
    pub line: usize,
    /// How many times the file holds this very row (each counts in the fit and the errors).
    pub repeats: usize,
    /// The grouping key, as written in the file.
    pub key: GroupKey,
    /// Concurrent requests.
    pub concurrency: usize,
    /// Acceptance length of the spec run, when recorded.
    pub al: Option<f64>,
    /// Spec-off step (TPOT), seconds, when measured.
    pub none_step_s: Option<f64>,
    /// Measured speedup (spec throughput / spec-off throughput).
    pub speedup: f64,
}

/// What identifies a group of pairs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupKey {
    /// Hardware profile name.
    pub hardware: String,
    /// Serving engine.
    pub framework: String,
    /// Model profile name.
    pub model: String,
    /// Weight precision.
    pub precision: Precision,
    /// KV precision (BF16 unless given).
    pub kv_precision: Precision,
    /// Tensor parallelism.
    pub tp: usize,
    /// Expert parallelism.
    pub ep: usize,
    /// DP attention.
    pub dp_attention: bool,
    /// Input tokens per request.
    pub isl: f64,
    /// Output tokens per request.
    pub osl: f64,
    /// Draft length.
    pub k: usize,
    /// Speculative method (picks the drafter).
    pub method: Option<String>,
}

impl GroupKey {
    fn label(&self) -> String {
        format!(
            "{} {} {} {} tp{} ep{}{} {}/{} k={}",
            self.hardware,
            self.framework,
            self.model,
            self.precision,
            self.tp,
            self.ep,
            if self.dp_attention { " dp-attn" } else { "" },
            self.isl,
            self.osl,
            self.k
        )
    }
}

/// Whether the table holds serving pairs (its header has the spec-off TPOT column).
pub(crate) fn is_serving(table: &CsvTable) -> bool {
    table.has("none_median_tpot")
}

/// Checks a serving-pair header.
///
/// # Errors
/// [`Error::Parse`] naming the file for missing columns.
pub(super) fn pair_columns(table: &CsvTable) -> Result<()> {
    table.require(&["hardware", "model", "precision", "tp", "isl", "osl", "none_median_tpot"])?;
    let origin = table.origin();
    if !(table.has("conc") || table.has("concurrency")) {
        return Err(Error::parse(origin, None, "missing column(s): give conc or concurrency"));
    }
    if !(table.has("tput_ratio") || table.has("spec_output_tput_per_gpu") && table.has("none_output_tput_per_gpu")) {
        return Err(Error::parse(
            origin,
            None,
            "missing column(s): give tput_ratio, or spec_output_tput_per_gpu and none_output_tput_per_gpu",
        ));
    }
    Ok(())
}

/// Reads one pair; a blank `k` takes `k_default` (cell errors name file, line and column: a blank `k`
/// without a default, an AL outside [1, k+1], a bad cell).
pub(super) fn pair(row: &CsvRow<'_>, k_default: Option<usize>) -> Result<ServingPair> {
    let k = match row.opt_str("k") {
        Some(_) => row.count_upto("k", crate::units::MAX_DRAFT_LEN)?,
        None => k_default
            .ok_or_else(|| row.error("k", "is blank: the spec run's draft length is needed").settled_by("k"))?,
    };
    let al = row.opt_f64("al")?;
    if let Some(al) = al {
        check_al(al, k, "al").map_err(|e| row.error("al", &e.to_string()))?;
    }
    let column = if row.opt_str("conc").is_some() { "conc" } else { "concurrency" };
    let concurrency = row.count_upto(column, crate::perf::MAX_CONCURRENCY)?;
    let speedup = match row.opt_f64("tput_ratio")? {
        Some(_) => row.non_negative("tput_ratio", true)?,
        None => {
            row.non_negative("spec_output_tput_per_gpu", true)? / row.non_negative("none_output_tput_per_gpu", true)?
        }
    };
    // Each step emits at most k + 1 tokens and costs at least a spec-off step: no speedup passes k + 1.
    if speedup > k as f64 + 1.0 {
        let column = if row.opt_str("tput_ratio").is_some() { "tput_ratio" } else { "spec_output_tput_per_gpu" };
        let shown = if speedup < 1e6 { format!("{speedup:.3}") } else { format!("{speedup:e}") };
        return Err(row.error(column, &format!("a speedup of {shown} is impossible at k = {k} (at most k + 1)")));
    }
    let (isl, osl) = (row.non_negative("isl", false)?, row.non_negative("osl", true)?);
    checked_workload(row, Workload::Turns { isl, osl, prefix_hit: 0.0 })?;
    let precision = parse_precision(row, "precision")?.ok_or_else(|| row.error("precision", "is empty"))?;
    Ok(ServingPair {
        line: row.line(),
        repeats: 1,
        key: GroupKey {
            hardware: row.str("hardware")?.to_string(),
            framework: row.opt_str("framework").unwrap_or("-").to_string(),
            model: row.str("model")?.to_string(),
            precision,
            kv_precision: parse_precision(row, "kv_dtype")?.unwrap_or(Precision::Bf16),
            tp: row.count("tp", true)?,
            ep: if row.opt_str("ep").is_some() { row.count("ep", true)? } else { 1 },
            dp_attention: parse_bool(row, "dp_attention")?,
            isl,
            osl,
            k,
            method: row.opt_str("spec_method").map(str::to_ascii_lowercase),
        },
        concurrency,
        al,
        none_step_s: match row.opt_str("none_median_tpot") {
            Some(_) => Some(row.non_negative("none_median_tpot", true)?),
            None => None,
        },
        speedup,
    })
}

/// One concurrency of a group: measured and predicted speedup.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ServingPoint {
    /// Line in the CSV.
    pub line: usize,
    /// How many times the file holds this row.
    pub repeats: usize,
    /// Concurrent requests.
    pub concurrency: usize,
    /// Measured speedup.
    pub measured: f64,
    /// Predicted speedup.
    pub predicted: f64,
    /// Measured spec-off step, ms, when measured.
    pub spec_off_ms: Option<f64>,
    /// Fitted spec-off step, ms.
    pub spec_off_model_ms: f64,
}

/// Which way the speedup moves from the lowest to the highest concurrency.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Trend {
    /// Measured speedup at the highest concurrency minus at the lowest.
    pub measured: f64,
    /// The same, predicted.
    pub predicted: f64,
    /// Same sign.
    pub agree: bool,
}

/// One group's calibration and score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServingGroup {
    /// The grouping key.
    pub key: GroupKey,
    /// `hardware framework model precision tpN epN isl/osl k=K`.
    pub label: String,
    /// The drafter profile used.
    pub drafter: String,
    /// Per concurrency (ascending).
    pub points: Vec<ServingPoint>,
    /// The AL used.
    pub al: f64,
    /// Fitted to the speedups (the file had none).
    pub al_fitted: bool,
    /// The fitted AL sits at 1 or k+1.
    pub al_at_bound: bool,
    /// The target-side fit on the spec-off TPOT.
    pub fit: ScaleFit,
    /// Fixed time of one target forward after the fit, ms.
    pub fixed_ms: f64,
    /// Median |fitted / measured − 1| of the spec-off steps (none when the group measured none).
    pub spec_off_median_abs_rel_error: Option<f64>,
    /// Median |predicted / measured − 1| of the speedups.
    pub speedup_median_abs_rel_error: f64,
    /// The same for the best constant speedup (the flat line the model must beat).
    pub flat_line_median_abs_rel_error: f64,
    /// Direction over concurrency, for groups with three or more concurrencies.
    pub trend: Option<Trend>,
}

/// The calibration of serving pairs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServingCalibration {
    /// One entry per group.
    pub groups: Vec<ServingGroup>,
    /// Every distinct row with its group's label, also of the groups the report does not list (for
    /// `--residuals`).
    #[serde(skip)]
    pub rows: Vec<(String, ServingPoint)>,
    /// Every row's |speedup error|, for the summary.
    #[serde(skip)]
    pub errors: Vec<f64>,
    /// Every row's |flat-line error|.
    #[serde(skip)]
    pub flat_errors: Vec<f64>,
    /// Every spec-off observation with its hardware, for a pooled profile.
    #[serde(skip)]
    pub pooled: Vec<(String, Observation)>,
}

/// Calibrates and scores every group of `pairs`.
///
/// # Errors
/// Lookup errors naming unknown hardware, models or drafters; [`Error::Invalid`] naming the line of a group
/// whose deployment is impossible.
pub(crate) fn calibrate_pairs(
    profiles: &Profiles,
    pairs: &[ServingPair],
    origin: &str,
    drafter: Option<&str>,
    mode: Mode,
) -> Result<ServingCalibration> {
    // Grouped through a map so that many groups cost linear time; the key's debug text is exact for floats.
    let mut groups: Vec<Vec<&ServingPair>> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for p in pairs {
        let at = *index.entry(format!("{:?}", p.key)).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[at].push(p);
    }
    let mut costs = deployment_cache();
    let mut out = ServingCalibration {
        groups: Vec::new(),
        rows: Vec::new(),
        errors: Vec::new(),
        flat_errors: Vec::new(),
        pooled: Vec::new(),
    };
    for mut rows in groups {
        rows.sort_by_key(|p| (p.concurrency, p.line));
        let first: &ServingPair = rows[0];
        let (key, line) = (&first.key, first.line);
        let hardware = profiles.hardware(&key.hardware)?;
        let model = profiles.model(&key.model)?;
        let drafter_name = match drafter {
            Some(d) => d.to_string(),
            None => profiles.drafter(model, None, key.method.as_deref())?.key.clone(),
        };
        let deployment = Deployment {
            tp: key.tp,
            precision: key.precision,
            kv_precision: key.kv_precision,
            dp_attention: key.dp_attention,
            ep: key.ep,
        };
        let cost = costs.get(profiles, hardware, model, Some(&drafter_name), true, &deployment, origin, line)?;
        let workload = Workload::Turns { isl: key.isl, osl: key.osl, prefix_hit: 0.0 };
        let timed = rows.iter().filter(|r| r.none_step_s.is_some()).count();
        if timed > 0 && timed < rows.len() {
            let blank = rows.iter().find(|r| r.none_step_s.is_none()).map_or(line, |r| r.line);
            return Err(Error::parse(
                origin,
                Some(blank),
                format!(
                    "none_median_tpot is blank here but filled elsewhere in its group ({}): fill it on every row of the group, or on none to score the group's level only",
                    key.label()
                ),
            ));
        }
        let mut off = Vec::with_capacity(rows.len());
        for r in &rows {
            let terms = cost.step_terms(r.concurrency, 0, 1.0, &workload)?;
            let measured_s = r.none_step_s.unwrap_or(f64::NAN);
            off.push(Observation { terms, measured_s, weight: r.repeats as f64, gemm_ceiling: 1.0 });
        }
        // Without spec-off steps there is nothing to fit: the group is scored on the profile as it is.
        let mode = if timed == 0 { Mode::Score } else { mode };
        // The overlap stays the profile's: spec-off TPOT alone would pull it above 1, which the spec side
        // contradicts (engines add per-token work a bare kernel does not have).
        let fit = mode.target(&hardware.efficiency, &off, false).ok_or_else(|| {
            Error::invalid(
                format!("{origin}:{line}"),
                format!("{}: the spec-off steps cannot determine the fit", key.label()),
            )
        })?;
        if timed > 0 {
            out.pooled.extend(off.iter().map(|o| (hardware.key.clone(), *o)));
        }
        let eff = fit.efficiency;
        let fitted = cost.with_efficiency(eff);
        let speedup = |b: usize, al: f64| -> Result<f64> {
            let ar = fitted.step_time(b, 0, 1.0, &workload)?.total;
            let sd = fitted.step_time(b, key.k, al, &workload)?.total;
            Ok(al * ar / sd)
        };
        let given: Vec<(f64, usize)> = rows.iter().filter_map(|r| r.al.map(|al| (al, r.repeats))).collect();
        let al_fitted = given.len() < rows.len();
        let al = if al_fitted {
            let cost_of = |al: f64| -> f64 {
                rows.iter()
                    .map(|r| {
                        speedup(r.concurrency, al)
                            .map_or(f64::INFINITY, |s| r.repeats as f64 * (s / r.speedup - 1.0).powi(2))
                    })
                    .sum()
            };
            minimise(1.0, key.k as f64 + 1.0, cost_of)
        } else {
            let n: usize = given.iter().map(|g| g.1).sum();
            given.iter().map(|&(al, count)| al * count as f64).sum::<f64>() / n as f64
        };
        let mut points = Vec::with_capacity(rows.len());
        for (r, o) in rows.iter().zip(&off) {
            let row_al = if al_fitted { al } else { r.al.unwrap_or(al) };
            points.push(ServingPoint {
                line: r.line,
                repeats: r.repeats,
                concurrency: r.concurrency,
                measured: r.speedup,
                predicted: speedup(r.concurrency, row_al)?,
                spec_off_ms: r.none_step_s.map(|s| s * 1e3),
                spec_off_model_ms: o.predicted(&eff) * 1e3,
            });
        }
        let per_row = |f: &dyn Fn(&ServingPoint) -> f64| -> Vec<f64> {
            points.iter().flat_map(|p| std::iter::repeat_n(f(p), p.repeats)).collect()
        };
        let errors = per_row(&|p| (p.predicted / p.measured - 1.0).abs());
        // The best constant in the same least-squares sense the AL is fitted in.
        let flat =
            per_row(&|p| 1.0 / p.measured).iter().sum::<f64>() / per_row(&|p| p.measured.powi(-2)).iter().sum::<f64>();
        let flat_errors = per_row(&|p| (flat / p.measured - 1.0).abs());
        let off_errors = if timed > 0 { abs_errors(&off, &eff) } else { Vec::new() };
        let model_key = &model.key;
        let fixed_ms = (eff.t_fixed_us + model.moe_layers as f64 * eff.moe_layer_us) / 1e3;
        let label = format!("{} ({model_key})", key.label());
        out.rows.extend(points.iter().map(|p| (label.clone(), *p)));
        out.errors.extend(&errors);
        out.flat_errors.extend(&flat_errors);
        out.groups.push(ServingGroup {
            label,
            key: key.clone(),
            drafter: drafter_name,
            al,
            al_fitted,
            al_at_bound: al_fitted && (al - 1.0 < 1e-3 || key.k as f64 + 1.0 - al < 1e-3),
            fixed_ms,
            spec_off_median_abs_rel_error: (!off_errors.is_empty()).then(|| median(&off_errors)),
            speedup_median_abs_rel_error: median(&errors),
            flat_line_median_abs_rel_error: median(&flat_errors),
            trend: trend(&points),
            fit,
            points,
        });
    }
    Ok(out)
}

/// The direction from the lowest to the highest concurrency (rows at one concurrency averaged), for groups
/// with three or more concurrencies.
fn trend(points: &[ServingPoint]) -> Option<Trend> {
    let mut concurrencies: Vec<usize> = points.iter().map(|p| p.concurrency).collect();
    concurrencies.dedup();
    if concurrencies.len() < 3 {
        return None;
    }
    let mean_at = |c: usize, f: fn(&ServingPoint) -> f64| {
        let at = points.iter().filter(|p| p.concurrency == c);
        at.clone().map(|p| f(p) * p.repeats as f64).sum::<f64>() / at.map(|p| p.repeats as f64).sum::<f64>()
    };
    let (lo, hi) = (concurrencies[0], concurrencies[concurrencies.len() - 1]);
    let measured = mean_at(hi, |p| p.measured) - mean_at(lo, |p| p.measured);
    let predicted = mean_at(hi, |p| p.predicted) - mean_at(lo, |p| p.predicted);
    Some(Trend { measured, predicted, agree: measured * predicted > 0.0 })
}
