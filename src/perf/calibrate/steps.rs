//! Measured step times — a GPU harness's grid or a serving engine's own timings — in the step-time format:
//!
//! | column | required | meaning |
//! |---|---|---|
//! | `hardware`, `model` | yes | profile names |
//! | `tp` | yes | tensor parallelism = GPUs per replica |
//! | `concurrency` | yes | concurrent requests B |
//! | `k` | yes | draft length, 0 = spec off |
//! | `context` | or `isl`+`osl` | decode context in tokens |
//! | `isl`, `osl`, `prefix_hit` | or `context` | turn shape; prefill of isl·(1 − prefix_hit) is amortised |
//! | `step_ms` | one of three | measured time per decode step |
//! | `tpot_ms` | one of three | time per output token per request (step = TPOT·AL) |
//! | `throughput_per_gpu` | one of three | output tok/s per GPU (step = B·AL / (throughput·tp)) |
//! | `al` | for `tpot_ms`/`throughput_per_gpu` at k > 0 | acceptance length (else the draft-extend pass is priced at AL 1) |
//! | `drafter`, `precision`, `kv_dtype`, `dp_attention`, `ep` | no | drafter profile, weight and KV precision, DP attention, expert parallelism (1 unless given) |
//! | `experts_touched` | no | distinct experts per MoE layer in the verify forward: at k = 0 fits the model's routing locality, at k ≥ 1 checks it |
//! | `<part>_ms` | no | measured time of one part (`dense`, `experts`, `attention`, `lm_head`, `verify`, `drafter`, `drafter_attention`, `drafter_lm_head`, …), compared with the model's |
//!
//! `#` lines (GPU, driver and library versions) are kept as notes; any other column is ignored. When several
//! timing columns are filled, `step_ms` wins over `tpot_ms` over `throughput_per_gpu`.
//!
//! Rows are grouped by deployment (hardware, model, TP, EP, precisions, DP attention). Each group is fitted on
//! its k = 0 rows only and judged on its k ≥ 1 rows, which the fit never saw.

use serde::Serialize;

use super::fit::{Group, Observation, ScaleFit, abs_errors, fit_scales, minimise};
use super::{Mode, Residual, deployment_cache, median, parse_precision, parse_workload, weighted_median};
use crate::error::{Error, Result};
use crate::perf::cost::{Deployment, Workload, expected_experts};
use crate::perf::csv::{CsvRow, CsvTable};
use crate::perf::profile::{MAX_ROUTING_LOCALITY, Precision, Profiles};

/// Columns the reader understands (besides `<part>_ms`).
const KNOWN: [&str; 20] = [
    "hardware",
    "model",
    "tp",
    "concurrency",
    "k",
    "al",
    "context",
    "isl",
    "osl",
    "prefix_hit",
    "step_ms",
    "tpot_ms",
    "throughput_per_gpu",
    "drafter",
    "precision",
    "kv_dtype",
    "dp_attention",
    "ep",
    "kv_precision",
    "experts_touched",
];

/// One measured step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepRow {
    /// Line in the CSV (the first, where the row repeats).
    pub line: usize,
    /// How many times the file holds this very row (each counts in the fit and the errors).
    pub repeats: usize,
    /// Hardware profile name.
    pub hardware: String,
    /// Model profile name.
    pub model: String,
    /// Drafter profile name, if given.
    pub drafter: Option<String>,
    /// Weight precision, if given.
    pub precision: Option<Precision>,
    /// KV-cache precision (BF16 when not given).
    pub kv_precision: Precision,
    /// Tensor parallelism.
    pub tp: usize,
    /// DP attention.
    pub dp_attention: bool,
    /// Expert parallelism.
    pub ep: usize,
    /// Concurrent requests.
    pub concurrency: usize,
    /// Draft length.
    pub k: usize,
    /// Acceptance length (1 for k = 0; 1 when not given).
    pub al: f64,
    /// The file gave the AL (k ≥ 1): the row's speedup over its k = 0 row is a measured level.
    pub al_given: bool,
    /// The workload shape.
    pub workload: Workload,
    /// Measured step time, seconds.
    pub step_s: f64,
    /// Measured part times, seconds, by part name.
    pub parts: Vec<(String, f64)>,
    /// Distinct experts per MoE layer the verify forward woke, when measured.
    pub experts_touched: Option<f64>,
    /// The matmul rate the file says its GPU reached (`gemm_ceiling`): precision and FLOP/s.
    pub gemm_ceiling: Option<(Precision, f64)>,
}

/// The matmul rate a file's `#` lines record for its GPU — the calibration kit's `ceilings measured …: …,
/// bf16 matmul 8192^3 793 TFLOP/s` — as (precision, FLOP/s); `None` where no line says it.
pub(super) fn gemm_ceiling(comments: &[String]) -> Option<(Precision, f64)> {
    comments.iter().filter(|c| c.trim_start().starts_with("ceilings")).flat_map(|c| c.split([':', ','])).find_map(
        |piece| {
            let words: Vec<&str> = piece.split_whitespace().collect();
            let matmul = words.iter().position(|w| *w == "matmul")?;
            let precision = words.get(matmul.checked_sub(1)?)?.parse::<Precision>().ok()?;
            let unit = words.iter().position(|w| *w == "TFLOP/s")?;
            let tflops: f64 = words.get(unit.checked_sub(1)?)?.parse().ok()?;
            (tflops.is_finite() && tflops > 0.0).then_some((precision, tflops * 1e12))
        },
    )
}

/// Checks a step-time header; returns the measured part columns (`<part>_ms`, without the suffix) and a
/// remark on the columns not used.
///
/// # Errors
/// [`Error::Parse`] naming the file for a missing column.
pub(super) fn step_columns(table: &CsvTable) -> Result<(Vec<String>, Vec<String>)> {
    table.require(&["hardware", "model", "tp", "concurrency", "k"])?;
    let origin = table.origin();
    if !(table.has("context") || table.has("isl") && table.has("osl")) {
        return Err(Error::parse(origin, None, "missing column(s): give context, or isl and osl"));
    }
    if !["step_ms", "tpot_ms", "throughput_per_gpu"].iter().any(|c| table.has(c)) {
        return Err(Error::parse(origin, None, "missing column(s): give step_ms, tpot_ms or throughput_per_gpu"));
    }
    let parts: Vec<String> = table
        .headers()
        .iter()
        .map(String::as_str)
        .filter(|h| !KNOWN.contains(h))
        .filter_map(|h| h.strip_suffix("_ms"))
        .map(str::to_string)
        .collect();
    let ignored: Vec<&str> =
        table.headers().iter().map(String::as_str).filter(|h| !KNOWN.contains(h) && !h.ends_with("_ms")).collect();
    let mut notes = Vec::new();
    if !ignored.is_empty() {
        notes.push(format!("columns not used: {}", ignored.join(", ")));
    }
    Ok((parts, notes))
}

/// Reads one step-time row (cell errors name the file, line and column: a zero or negative value, an AL
/// outside [1, k+1], a missing timing).
pub(super) fn step_row(row: &CsvRow<'_>, parts: &[String]) -> Result<StepRow> {
    let k = row.count("k", false)?;
    if k > crate::units::MAX_DRAFT_LEN {
        let max = crate::units::MAX_DRAFT_LEN;
        return Err(row.error("k", &format!("{k} is out of range: a draft length lies in [0, {max}] (0 = spec off)")));
    }
    let given_al = row.opt_f64("al")?;
    if let Some(al) = given_al.filter(|_| k > 0) {
        crate::units::check_al(al, k, "al").map_err(|e| row.error("al", &e.to_string()))?;
    }
    let al = if k == 0 { 1.0 } else { given_al.unwrap_or(1.0) };
    let workload = parse_workload(row)?;
    let tp = row.count("tp", true)?;
    let concurrency = row.count_upto("concurrency", crate::perf::MAX_CONCURRENCY)?;
    let needs_al = |column: &str| -> Result<()> {
        if k > 0 && given_al.is_none() {
            return Err(row.error("al", &format!("is needed to turn {column} into a step time at k > 0")));
        }
        Ok(())
    };
    let step_s = if row.opt_str("step_ms").is_some() {
        row.non_negative("step_ms", true)? / 1e3
    } else if row.opt_str("tpot_ms").is_some() {
        needs_al("tpot_ms")?;
        row.non_negative("tpot_ms", true)? / 1e3 * al
    } else if row.opt_str("throughput_per_gpu").is_some() {
        needs_al("throughput_per_gpu")?;
        concurrency as f64 * al / (row.non_negative("throughput_per_gpu", true)? * tp as f64)
    } else {
        return Err(row.error("step_ms", "no timing: fill step_ms, tpot_ms or throughput_per_gpu"));
    };
    let mut measured_parts = Vec::new();
    for part in parts {
        let column = format!("{part}_ms");
        if let Some(ms) = row.opt_f64(&column)?.filter(|v| *v > 0.0) {
            measured_parts.push((part.to_string(), ms / 1e3));
        }
    }
    Ok(StepRow {
        line: row.line(),
        repeats: 1,
        hardware: row.str("hardware")?.to_string(),
        model: row.str("model")?.to_string(),
        drafter: row.opt_str("drafter").map(str::to_string),
        precision: parse_precision(row, "precision")?,
        kv_precision: match parse_precision(row, "kv_dtype")? {
            Some(p) => p,
            None => parse_precision(row, "kv_precision")?.unwrap_or(Precision::Bf16),
        },
        tp,
        dp_attention: super::parse_bool(row, "dp_attention")?,
        ep: if row.opt_str("ep").is_some() { row.count("ep", true)? } else { 1 },
        concurrency,
        k,
        al,
        al_given: k > 0 && given_al.is_some(),
        workload,
        step_s,
        parts: measured_parts,
        experts_touched: row.opt_f64("experts_touched")?,
        gemm_ceiling: None,
    })
}

/// One deployment's step-time calibration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepGroup {
    /// `hardware / model / TP / precision`.
    pub label: String,
    /// The hardware profile's key.
    #[serde(skip)]
    pub hardware: String,
    /// Rows at k = 0 (fitted) and k ≥ 1 (scored).
    pub spec_off_rows: usize,
    /// Rows at k ≥ 1.
    pub spec_rows: usize,
    /// The fit on the k = 0 rows.
    pub fit: ScaleFit,
    /// Median |predicted / measured − 1| over the k = 0 rows (in sample).
    pub spec_off_median_abs_rel_error: f64,
    /// The same over the k ≥ 1 rows, which the fit never saw.
    pub spec_median_abs_rel_error: Option<f64>,
    /// Largest |relative error| over the k ≥ 1 rows.
    pub spec_max_abs_rel_error: Option<f64>,
    /// With the speculation overheads also fitted on the k ≥ 1 rows (in sample): their scale and median error.
    pub speculation_fit: Option<(f64, f64)>,
    /// Median |predicted / measured − 1| of the speedup AL·t_ar/t_sd of the k ≥ 1 rows with a given AL over
    /// the k = 0 row of the same concurrency and shape: the level, where the AL is known.
    pub level_median_abs_rel_error: Option<f64>,
}

/// Measured against modelled part times.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartCheck {
    /// The part (`attention` for an `attention_ms` column).
    pub part: String,
    /// Rows that measured it.
    pub rows: usize,
    /// Median |predicted / measured − 1|.
    pub median_abs_rel_error: f64,
    /// Median predicted / measured (below 1: the model prices the part too cheaply).
    pub median_ratio: f64,
}

/// A model's routing locality fitted to the experts its measured k = 0 forwards woke, and checked on the
/// k ≥ 1 rows that measured them too (never fitted on those).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LocalityFit {
    /// Model profile key.
    pub model: String,
    /// The fitted locality λ (1 = uniformly routed tokens); the novelty of the verify tokens is set to it too.
    pub routing_locality: f64,
    /// Its profile value before.
    pub before: f64,
    /// k = 0 rows with `experts_touched` it was fitted on.
    pub rows: usize,
    /// Median |E(λ·B) / measured − 1| over them.
    pub median_abs_rel_error: f64,
    /// k ≥ 1 rows with `experts_touched`, predicted from λ alone.
    pub spec_rows: usize,
    /// Median |E(n') / measured − 1| over those (held out).
    pub spec_median_abs_rel_error: Option<f64>,
    /// Largest such error.
    pub spec_max_abs_rel_error: Option<f64>,
}

/// The calibration of step-time rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepCalibration {
    /// Routing localities fitted from the k = 0 rows' `experts_touched` (a routing measurement, like AL,
    /// not a time).
    pub routing_locality: Vec<LocalityFit>,
    /// One entry per deployment.
    pub groups: Vec<StepGroup>,
    /// Parts measured and priced.
    pub parts: Vec<PartCheck>,
    /// Part columns the model does not price separately.
    pub unpriced_parts: Vec<String>,
    /// The rows with the largest errors (k = 0 in sample, k ≥ 1 held out).
    pub worst: Vec<Residual>,
    /// Every row's measured and modelled step, in file order: the summary's errors and a full error table.
    #[serde(skip)]
    pub residuals: Vec<Residual>,
    /// Every k = 0 observation with its deployment's hardware, for a pooled profile.
    #[serde(skip)]
    pub pooled: Vec<(String, Observation)>,
    /// Every level error (see [`StepGroup::level_median_abs_rel_error`]), one per row it stands for.
    #[serde(skip)]
    pub level_errors: Vec<f64>,
}

/// Calibrates every deployment in `rows`: fit on k = 0, score k ≥ 1.
///
/// # Errors
/// Lookup errors for unknown hardware, models or drafters; [`Error::Invalid`] naming the line when a row's
/// deployment is impossible (TP, memory) or a group has no k = 0 row.
pub fn calibrate_steps(
    profiles: &Profiles,
    rows: &[StepRow],
    origin: &str,
    drafter: Option<&str>,
    mode: Mode,
) -> Result<StepCalibration> {
    let (profiles, routing_locality) = &match mode {
        Mode::Fit => with_measured_locality(profiles, rows)?,
        Mode::Score => (profiles.clone(), Vec::new()),
    };
    let mut costs = deployment_cache();
    let mut keyed: Vec<(String, Vec<(usize, Observation)>)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut measured_parts: Vec<Vec<(String, f64, f64, usize)>> = vec![Vec::new(); rows.len()];
    let mut step_terms = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let model = profiles.model(&r.model)?;
        let hardware = profiles.hardware(&r.hardware)?;
        let precision = r.precision.unwrap_or(model.default_precision);
        let deployment =
            Deployment { tp: r.tp, precision, kv_precision: r.kv_precision, dp_attention: r.dp_attention, ep: r.ep };
        let drafter_name = drafter.or(r.drafter.as_deref());
        let cost = costs.get(profiles, hardware, model, drafter_name, r.k > 0, &deployment, origin, r.line)?;
        let terms = cost.step_terms(r.concurrency, r.k, r.al, &r.workload).map_err(|e| at(origin, r.line, e))?;
        let label = format!(
            "{} / {} / TP{}{} / {}{}",
            hardware.key,
            model.key,
            r.tp,
            if r.ep > 1 { format!(" EP{}", r.ep) } else { String::new() },
            precision,
            if r.dp_attention { " / DP attention" } else { "" }
        );
        let gemm_ceiling = r.gemm_ceiling.map_or(1.0, |(p, flops)| (flops / hardware.peak_flops(p)).min(1.0));
        let observation = Observation { terms, measured_s: r.step_s, weight: r.repeats as f64, gemm_ceiling };
        match index.get(&label) {
            Some(&g) => keyed[g].1.push((i, observation)),
            None => {
                index.insert(label.clone(), keyed.len());
                keyed.push((label, vec![(i, observation)]));
            }
        }
        step_terms.push((terms, hardware.efficiency));
    }
    let mut out = StepCalibration {
        routing_locality: routing_locality.clone(),
        groups: Vec::new(),
        parts: Vec::new(),
        unpriced_parts: Vec::new(),
        worst: Vec::new(),
        residuals: Vec::new(),
        pooled: Vec::new(),
        level_errors: Vec::new(),
    };
    for (label, members) in keyed {
        let off: Vec<Observation> = members.iter().filter(|(i, _)| rows[*i].k == 0).map(|(_, o)| *o).collect();
        let first = &rows[members[0].0];
        if off.is_empty() {
            return Err(Error::invalid(
                format!("{origin}:{}", first.line),
                format!(
                    "{label} has no spec-off row (k = 0): the target side is fitted on k = 0 rows; measure at least one"
                ),
            ));
        }
        let start = step_terms[members[0].0].1;
        let fit = mode.target(&start, &off, true).ok_or_else(|| {
            Error::invalid(
                format!("{origin}:{}", first.line),
                format!("{label}: the k = 0 rows cannot determine the fit"),
            )
        })?;
        let hardware = profiles.hardware(&first.hardware)?.key.clone();
        out.pooled.extend(off.iter().map(|o| (hardware.clone(), *o)));
        let mut off_errors = Vec::new();
        let mut spec_errors = Vec::new();
        let spec: Vec<Observation> = members.iter().filter(|(i, _)| rows[*i].k > 0).map(|(_, o)| *o).collect();
        for (i, o) in &members {
            let r = &rows[*i];
            let predicted = o.predicted(&fit.efficiency);
            let err = std::iter::repeat_n((predicted / r.step_s - 1.0).abs(), r.repeats);
            if r.k == 0 {
                off_errors.extend(err)
            } else {
                spec_errors.extend(err)
            }
            out.residuals.push(Residual::new(r, &label, predicted));
            for (part, measured) in &r.parts {
                match step_terms[*i].0.part(part, &fit.efficiency) {
                    Some(p) => measured_parts[*i].push((part.clone(), p, *measured, r.repeats)),
                    None if !out.unpriced_parts.contains(part) => out.unpriced_parts.push(part.clone()),
                    None => {}
                }
            }
        }
        // Predicted over measured step of each k = 0 row, by concurrency and shape.
        let off_ratio = |r: &StepRow| {
            members.iter().find_map(|(j, o)| {
                let base = &rows[*j];
                (base.k == 0 && base.concurrency == r.concurrency && base.workload == r.workload)
                    .then(|| o.predicted(&fit.efficiency) / base.step_s)
            })
        };
        let level: Vec<f64> = members
            .iter()
            .filter(|(i, _)| rows[*i].al_given)
            .filter_map(|(i, o)| {
                let r = &rows[*i];
                // Predicted over measured speedup: (T_ar / t_ar) · (t_sd / T_sd).
                let error = (off_ratio(r)? * r.step_s / o.predicted(&fit.efficiency) - 1.0).abs();
                Some(std::iter::repeat_n(error, r.repeats))
            })
            .flatten()
            .collect();
        out.level_errors.extend(&level);
        let speculation_fit = (mode == Mode::Fit && !spec.is_empty())
            .then(|| fit_scales(&fit.efficiency, &spec, &[vec![Group::Speculation]]))
            .flatten()
            .map(|s| {
                let errors = abs_errors(&spec, &s.efficiency);
                (s.scales[0].value, median(&errors))
            });
        out.groups.push(StepGroup {
            label,
            hardware,
            spec_off_rows: off.iter().map(|o| o.weight as usize).sum(),
            spec_rows: spec.iter().map(|o| o.weight as usize).sum(),
            spec_off_median_abs_rel_error: median(&off_errors),
            spec_median_abs_rel_error: (!spec_errors.is_empty()).then(|| median(&spec_errors)),
            spec_max_abs_rel_error: spec_errors.iter().copied().reduce(f64::max),
            fit,
            speculation_fit,
            level_median_abs_rel_error: (!level.is_empty()).then(|| median(&level)),
        });
    }
    out.residuals.sort_by_key(|r| r.line);
    out.parts = part_checks(measured_parts.into_iter().flatten());
    out.worst = Residual::worst(&out.residuals);
    Ok(out)
}

/// The profiles with each MoE model's routing locality fitted to the `experts_touched` of its k = 0 rows
/// (which do not depend on the novelty), the novelty set to the same locality, and what was fitted.
fn with_measured_locality(profiles: &Profiles, rows: &[StepRow]) -> Result<(Profiles, Vec<LocalityFit>)> {
    let mut out = profiles.clone();
    let mut fits = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    for r in rows.iter().filter(|r| r.experts_touched.is_some() && r.k == 0) {
        let key = profiles.model(&r.model)?.key.clone();
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    for key in keys {
        let model = profiles.model(&key)?;
        if model.experts == 0 {
            continue;
        }
        let (n, k) = (model.experts as f64, model.top_k as f64);
        // (sequences, draft length, experts touched, repeats) of the rows of this model that measured it.
        let measured = |spec: bool| -> Vec<(f64, f64, f64, usize)> {
            rows.iter()
                .filter(|r| (r.k > 0) == spec && profiles.model(&r.model).is_ok_and(|m| m.key == key))
                .filter_map(|r| r.experts_touched.map(|t| (r.concurrency as f64, r.k as f64, t, r.repeats)))
                .collect()
        };
        let (off, spec) = (measured(false), measured(true));
        let predicted =
            |l: f64, &(b, draft, ..): &(f64, f64, f64, usize)| expected_experts(n, k, l * b + l.min(1.0) * b * draft);
        let errors = |l: f64, rows: &[(f64, f64, f64, usize)]| -> Vec<f64> {
            rows.iter().flat_map(|m| std::iter::repeat_n((predicted(l, m) / m.2 - 1.0).abs(), m.3)).collect()
        };
        let locality = minimise(1e-3, MAX_ROUTING_LOCALITY, |l| {
            off.iter().map(|m| m.3 as f64 * (predicted(l, m) / m.2 - 1.0).powi(2)).sum()
        });
        let held_out = errors(locality, &spec);
        fits.push(LocalityFit {
            model: key.clone(),
            routing_locality: locality,
            before: model.routing_locality,
            rows: off.iter().map(|m| m.3).sum(),
            median_abs_rel_error: median(&errors(locality, &off)),
            spec_rows: held_out.len(),
            spec_median_abs_rel_error: (!held_out.is_empty()).then(|| median(&held_out)),
            spec_max_abs_rel_error: held_out.iter().copied().reduce(f64::max),
        });
        if let Some(m) = out.models.iter_mut().find(|m| m.key == key) {
            m.routing_locality = locality;
            m.expert_novelty = locality.min(1.0);
        }
    }
    Ok((out, fits))
}

fn part_checks(all: impl Iterator<Item = (String, f64, f64, usize)>) -> Vec<PartCheck> {
    let mut by_part: Vec<(String, Vec<(f64, usize)>)> = Vec::new();
    for (part, predicted, measured, repeats) in all {
        let ratio = (predicted / measured, repeats);
        match by_part.iter_mut().find(|(p, _)| *p == part) {
            Some((_, list)) => list.push(ratio),
            None => by_part.push((part, vec![ratio])),
        }
    }
    by_part
        .into_iter()
        .map(|(part, mut ratios)| {
            let mut errors: Vec<(f64, usize)> = ratios.iter().map(|&(r, n)| ((r - 1.0).abs(), n)).collect();
            PartCheck {
                part,
                rows: ratios.iter().map(|r| r.1).sum(),
                median_abs_rel_error: weighted_median(&mut errors),
                median_ratio: weighted_median(&mut ratios),
            }
        })
        .collect()
}

fn at(origin: &str, line: usize, e: Error) -> Error {
    Error::invalid(format!("{origin}:{line}"), e.to_string())
}
