//! Calibration: fitting the step-time model's efficiencies to measured runs, and scoring the model on what
//! the fit did not see (docs/model.md §6: the cost model is judged by measured serving data).
//!
//! Three kinds of measured file, told apart by their header:
//! - step times ([`steps`]): per deployment, fit on the k = 0 rows, score the k ≥ 1 rows
//!   (`summary.step_time_median_abs_rel_error`);
//! - serving pairs (`serving`, the columns of `../shared/data/serving/*.csv`): per group, fit on the
//!   spec-off TPOT, fit one AL where the file has none, predict the speedup over concurrency
//!   (`summary.speedup_median_abs_rel_error`, `summary.trend_sign_agreement`, beside the flat line's error).
//!
//! - expert-parallel exchanges ([`exchange`], `calibration/exchange.py`'s format): latency plus bytes over the
//!   link per hardware and number of GPUs, beside today's `moe_token_us`.
//!
//! [`fit`] holds the fits themselves. Every deployment's spec-off rows are also pooled per hardware into one
//! fit — the profile `--output` writes.

pub mod choice_score;
pub mod exchange;
pub mod fit;
mod pooled;
pub(crate) mod serving;
pub mod steps;

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::perf::cost::{CostModel, Deployment, Workload};
use crate::perf::csv::{CsvRow, CsvStream};
use crate::perf::profile::{HardwareProfile, ModelProfile, Precision, Profiles};
use exchange::{ExchangeCalibration, ExchangeRow};
use fit::ScaleFit;
pub use pooled::{ComputePrior, PooledFit, write_profile};
use pooled::{PinnedCompute, pooled_fits};
use serving::{ServingCalibration, ServingPair, calibrate_pairs, is_serving, pair, pair_columns};
use steps::{StepCalibration, StepRow, calibrate_steps, gemm_ceiling, step_columns, step_row};

/// Groups listed in a report; the rest are counted in the summary only (large inputs stay readable).
const MAX_LISTED_GROUPS: usize = 200;
/// Rows listed as the largest residuals.
const WORST_ROWS: usize = 20;

/// A measured file, read.
#[derive(Debug, Clone, PartialEq)]
pub enum Measured {
    /// Step-time rows.
    Steps(Vec<StepRow>),
    /// Serving pairs.
    Serving(Vec<ServingPair>),
    /// Expert-parallel exchanges.
    Exchange(Vec<ExchangeRow>),
}

/// Distinct rows a measured file may hold. A measured grid is hundreds to thousands of rows; each distinct
/// row costs a few KiB in the fits, so this keeps a file's cost under ~100 MB. Rows repeated verbatim are
/// fitted once with their count, so they do not count here.
pub const MAX_DISTINCT_ROWS: usize = 20_000;

/// Reads the measured CSV at `path` as [`read`] does: a regular file of at most 64 MiB, named in errors as
/// the path is written.
///
/// # Errors
/// As [`read`]; [`Error::Io`] when the file cannot be opened, is not a regular file or is larger.
pub fn read_file(path: &Path, k_default: Option<usize>) -> Result<(Measured, Vec<String>)> {
    let reader = crate::input::open_limited(path, crate::input::TABLE_FILE_LIMIT)?;
    read(reader, &path.display().to_string(), k_default)
}

/// Reads a measured CSV of either kind, one line at a time; `k_default` fills blank `k` cells of serving
/// pairs. Returns the rows with remarks (the file's `#` header lines, columns not used, repeated rows).
///
/// # Errors
/// [`Error::Parse`] naming the file, line and column for anything malformed; an empty file; more than
/// [`MAX_DISTINCT_ROWS`] distinct rows. [`Error::Io`] when reading fails.
pub fn read(reader: impl BufRead, origin: &str, k_default: Option<usize>) -> Result<(Measured, Vec<String>)> {
    let mut stream = CsvStream::new(reader, origin)?;
    if exchange::is_exchange(stream.table()) {
        return exchange::read(stream, origin);
    }
    let serving = is_serving(stream.table());
    let (parts, mut notes) = if serving {
        pair_columns(stream.table())?;
        (Vec::new(), Vec::new())
    } else {
        step_columns(stream.table())?
    };
    let mut seen: HashMap<Vec<String>, usize> = HashMap::new();
    let (mut steps, mut pairs, mut repeated): (Vec<StepRow>, Vec<ServingPair>, usize) = (Vec::new(), Vec::new(), 0);
    while let Some((line, cells)) = stream.next_row()? {
        if let Some(&i) = seen.get(&cells) {
            repeated += 1;
            if serving {
                pairs[i].repeats += 1;
            } else {
                steps[i].repeats += 1;
            }
            continue;
        }
        if seen.len() == MAX_DISTINCT_ROWS {
            return Err(Error::parse(
                origin,
                Some(line),
                format!(
                    "more than {MAX_DISTINCT_ROWS} distinct measured rows: calibrate fits a grid of settings, not a trace; average the rows of each setting or split the file"
                ),
            ));
        }
        let row = stream.table().row(line, &cells);
        if serving {
            pairs.push(pair(&row, k_default)?);
        } else {
            steps.push(step_row(&row, &parts)?);
        }
        seen.insert(cells, seen.len());
    }
    if repeated > 0 {
        notes.push(format!(
            "{repeated} rows repeat an earlier row verbatim: each is fitted and scored with its count, listed once"
        ));
    }
    let ceiling = gemm_ceiling(stream.table().comments());
    for s in &mut steps {
        s.gemm_ceiling = ceiling;
    }
    notes.splice(0..0, stream.table().comments().iter().map(|c| format!("{origin}: {c}")));
    if steps.is_empty() && pairs.is_empty() {
        return Err(Error::parse(origin, None, "no measured rows"));
    }
    Ok((if serving { Measured::Serving(pairs) } else { Measured::Steps(steps) }, notes))
}

/// The figures the model is judged on.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Summary {
    /// Measured rows.
    pub rows: usize,
    /// Deployments (step times) or groups (serving pairs).
    pub groups: usize,
    /// Median |fitted / measured − 1| of the spec-off steps the fits saw (none when the file measured none:
    /// serving pairs with blank `none_median_tpot`).
    pub spec_off_median_abs_rel_error: Option<f64>,
    /// Step times: median |predicted / measured − 1| over the k ≥ 1 rows (fit on k = 0 only).
    pub step_time_median_abs_rel_error: Option<f64>,
    /// Step times: the largest such error.
    pub step_time_max_abs_rel_error: Option<f64>,
    /// Step times: k ≥ 1 rows off by more than 30 %.
    pub step_time_rows_over_30pct: Option<usize>,
    /// Serving pairs: median over rows of |predicted − measured| / measured speedup.
    pub speedup_median_abs_rel_error: Option<f64>,
    /// Serving pairs: the same for the best constant speedup per group (the baseline to beat).
    pub flat_line_median_abs_rel_error: Option<f64>,
    /// Serving pairs: groups with three or more concurrencies.
    pub trend_groups: Option<usize>,
    /// Serving pairs: share of those whose predicted speedup moves from the lowest to the highest concurrency
    /// in the measured direction.
    pub trend_sign_agreement: Option<f64>,
    /// Serving pairs: groups whose AL was fitted (the file has none).
    pub al_fitted_groups: Option<usize>,
    /// Where the file gives the AL: median |predicted / measured − 1| of the speedup at that AL — the level,
    /// which a fitted AL would absorb (serving groups with an AL on every row; step rows at k ≥ 1 with an
    /// AL, over their k = 0 row).
    pub level_median_abs_rel_error: Option<f64>,
    /// Exchanges: median |fitted / measured − 1| of the latency + bandwidth fit per hardware and GPUs.
    pub exchange_median_abs_rel_error: Option<f64>,
    /// Exchanges: the same with each model's rows predicted by the fit of the other models' rows.
    pub exchange_held_out_median_abs_rel_error: Option<f64>,
    /// Groups whose fit hit a bound (an efficiency at 1 or 1 %, a time at 0, an AL at 1 or k+1).
    pub fits_at_bound: usize,
    /// Groups with a scale their rows cannot identify (kept at its starting value).
    pub fits_with_unidentified_scales: usize,
    /// Groups whose fit was worse than the starting profile on their own rows (the start kept).
    pub fits_kept_at_start: usize,
    /// Step times with `--choice-al`: the k alsim picks against the k the measured rows pick, fitted on the
    /// file's own k = 0 rows ([`choice_score`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub choice: Option<choice_score::ChoiceSummary>,
}

/// What `alsim calibrate` does with the profile it starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Fit the efficiencies to the rows, then score the fit.
    Fit,
    /// Score the profile as it is on the rows: nothing of the profile is refitted (a serving group's AL, a
    /// fact of the workload, is still fitted where the file has none).
    Score,
}

impl Mode {
    /// The target fit in this mode: [`fit::fit_target`], or the start itself when scoring.
    fn target(
        self,
        start: &crate::perf::terms::Efficiencies,
        obs: &[fit::Observation],
        overlap: bool,
    ) -> Option<ScaleFit> {
        match self {
            Mode::Fit => fit::fit_target(start, obs, overlap),
            Mode::Score => Some(ScaleFit::unfitted(*start)),
        }
    }
}

/// The outcome of `alsim calibrate`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    /// Where the measurements came from.
    pub origin: String,
    /// Fitted, or a profile scored as it is.
    pub mode: Mode,
    /// `step_time`, `serving_pairs` or `exchange`.
    pub kind: &'static str,
    /// The figures the model is judged on.
    pub summary: Summary,
    /// Step-time calibration, per deployment.
    pub steps: Option<StepCalibration>,
    /// Serving-pair calibration, per group.
    pub serving: Option<ServingCalibration>,
    /// Expert-parallel exchange fits, per hardware and number of GPUs.
    pub exchange: Option<ExchangeCalibration>,
    /// Per hardware, every spec-off row fitted together.
    pub pooled: Vec<PooledFit>,
    /// The choice per cell, with `--choice-al`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub choice: Option<choice_score::ChoiceScore>,
    /// Groups beyond the listing limit (counted in the summary, not listed).
    pub groups_not_listed: usize,
    /// Remarks: the file's header lines, bounds hit, columns not used.
    pub notes: Vec<String>,
}

/// Calibrates the model on `measured` (see the module docs) and scores it.
///
/// # Errors
/// As [`steps::calibrate_steps`] and `serving::calibrate_pairs`.
pub fn calibrate(profiles: &Profiles, measured: &Measured, origin: &str, drafter: Option<&str>) -> Result<Calibration> {
    run(profiles, measured, origin, drafter, Mode::Fit)
}

/// Scores `profiles` as they are on `measured`: every figure of [`calibrate`], per group and pooled per
/// hardware, with nothing refitted. Every row's hardware must be one of `hardware` (the profile scored).
///
/// # Errors
/// As [`calibrate`]; [`Error::Invalid`] naming the line of a row on other hardware.
pub fn score(
    profiles: &Profiles,
    measured: &Measured,
    origin: &str,
    drafter: Option<&str>,
    hardware: &[String],
) -> Result<Calibration> {
    let rows: Vec<(usize, &str)> = match measured {
        Measured::Steps(rows) => rows.iter().map(|r| (r.line, r.hardware.as_str())).collect(),
        Measured::Serving(pairs) => pairs.iter().map(|p| (p.line, p.key.hardware.as_str())).collect(),
        Measured::Exchange(rows) => rows.iter().map(|r| (r.line, r.hardware.as_str())).collect(),
    };
    for (line, name) in rows {
        let key = &profiles.hardware(name)?.key;
        if !hardware.contains(key) {
            return Err(Error::invalid(
                format!("{origin}:{line}"),
                format!(
                    "hardware '{name}' is not in the profile scored ({}): score it with its own",
                    hardware.join(", ")
                ),
            ));
        }
    }
    let mut scored = run(profiles, measured, origin, drafter, Mode::Score)?;
    scored.notes.insert(0, "scored as it is: no efficiency of the profile was refitted".into());
    Ok(scored)
}

fn run(
    profiles: &Profiles,
    measured: &Measured,
    origin: &str,
    drafter: Option<&str>,
    mode: Mode,
) -> Result<Calibration> {
    let mut summary = Summary::default();
    let mut notes = Vec::new();
    let mut exchange = None;
    let (kind, steps, serving, pooled) = match measured {
        Measured::Steps(rows) => {
            let mut cal = calibrate_steps(profiles, rows, origin, drafter, mode)?;
            summary.rows = rows.iter().map(|r| r.repeats).sum();
            summary.groups = cal.groups.len();
            let errors = |spec: bool| -> Vec<f64> {
                cal.residuals
                    .iter()
                    .filter(|r| (r.k > 0) == spec)
                    .flat_map(|r| std::iter::repeat_n(r.abs_rel_error(), r.repeats))
                    .collect()
            };
            summary.level_median_abs_rel_error = (!cal.level_errors.is_empty()).then(|| median(&cal.level_errors));
            let spec_errors = errors(true);
            summary.spec_off_median_abs_rel_error = Some(median(&errors(false)));
            if !spec_errors.is_empty() {
                summary.step_time_median_abs_rel_error = Some(median(&spec_errors));
                summary.step_time_max_abs_rel_error = spec_errors.iter().copied().reduce(f64::max);
                summary.step_time_rows_over_30pct = Some(spec_errors.iter().filter(|e| **e > 0.3).count());
            } else {
                notes.push("no k ≥ 1 rows: the fit is not scored on rows it did not see".into());
            }
            summary.fits_at_bound = cal.groups.iter().filter(|g| g.fit.at_bound()).count();
            for g in &cal.groups {
                fit_notes(&mut notes, &g.label, &g.fit);
            }
            count_fits(&mut summary, cal.groups.iter().map(|g| &g.fit));
            if !cal.unpriced_parts.is_empty() {
                notes.push(format!(
                    "part columns the model does not price separately: {}",
                    cal.unpriced_parts.join(", ")
                ));
            }
            let pooled = std::mem::take(&mut cal.pooled);
            ("step_time", Some(cal), None, pooled)
        }
        Measured::Serving(pairs) => {
            let mut cal = calibrate_pairs(profiles, pairs, origin, drafter, mode)?;
            summary.rows = pairs.iter().map(|p| p.repeats).sum();
            summary.groups = cal.groups.len();
            let off: Vec<f64> = cal
                .groups
                .iter()
                .flat_map(|g| g.points.iter().filter_map(|p| Some((p.spec_off_model_ms / p.spec_off_ms? - 1.0).abs())))
                .collect();
            summary.spec_off_median_abs_rel_error = (!off.is_empty()).then(|| median(&off));
            summary.speedup_median_abs_rel_error = Some(median(&cal.errors));
            summary.flat_line_median_abs_rel_error = Some(median(&cal.flat_errors));
            let trends: Vec<bool> = cal.groups.iter().filter_map(|g| g.trend.map(|t| t.agree)).collect();
            summary.trend_groups = Some(trends.len());
            summary.trend_sign_agreement =
                (!trends.is_empty()).then(|| trends.iter().filter(|a| **a).count() as f64 / trends.len() as f64);
            summary.al_fitted_groups = Some(cal.groups.iter().filter(|g| g.al_fitted).count());
            let level: Vec<f64> = cal
                .groups
                .iter()
                .filter(|g| !g.al_fitted)
                .flat_map(|g| g.points.iter())
                .flat_map(|p| std::iter::repeat_n((p.predicted / p.measured - 1.0).abs(), p.repeats))
                .collect();
            summary.level_median_abs_rel_error = (!level.is_empty()).then(|| median(&level));
            let bound = |g: &serving::ServingGroup| g.al_at_bound || g.fit.at_bound();
            summary.fits_at_bound = cal.groups.iter().filter(|g| bound(g)).count();
            count_fits(&mut summary, cal.groups.iter().map(|g| &g.fit));
            for g in &cal.groups {
                fit_notes(&mut notes, &g.label, &g.fit);
                if g.al_at_bound {
                    notes.push(format!(
                        "{}: the fitted AL {:.2} sits at its bound (1 or k+1): the measured speedup asks for more (or less) than this k can give",
                        g.label, g.al
                    ));
                }
            }
            let pooled = std::mem::take(&mut cal.pooled);
            ("serving_pairs", None, Some(cal), pooled)
        }
        Measured::Exchange(rows) => {
            let cal = exchange::calibrate(profiles, rows, &mut notes);
            summary.rows = rows.len();
            summary.groups = cal.groups.len();
            summary.exchange_median_abs_rel_error = cal.median_abs_rel_error();
            summary.exchange_held_out_median_abs_rel_error = cal.held_out_median_abs_rel_error();
            exchange = Some(cal);
            ("exchange", None, None, Vec::new())
        }
    };
    let pinned: Vec<PinnedCompute> = steps
        .iter()
        .flat_map(|s| &s.groups)
        .filter_map(|g| PinnedCompute::of(&g.hardware, &g.fit, g.spec_off_rows))
        .collect();
    let pooled = pooled_fits(profiles, &pooled, &pinned, origin, kind == "step_time", mode)?;
    for p in &pooled {
        fit_notes(&mut notes, &format!("pooled {}", p.profile.key), &p.fit);
        if let Some(prior) = p.compute_prior {
            notes.push(format!(
                "pooled {}: its rows do not pin the GEMM rate, so flops_eff is held at {:.3}, what {} deployment fit(s) on GPUs with its math peaks pinned ({} spec-off rows)",
                p.profile.key, prior.flops_eff, prior.deployments, prior.rows
            ));
        }
    }
    let mut steps = steps;
    let mut serving = serving;
    let mut groups_not_listed = 0;
    if let Some(s) = steps.as_mut() {
        groups_not_listed += s.groups.len().saturating_sub(MAX_LISTED_GROUPS);
        s.groups.truncate(MAX_LISTED_GROUPS);
    }
    if let Some(s) = serving.as_mut() {
        groups_not_listed += s.groups.len().saturating_sub(MAX_LISTED_GROUPS);
        s.groups.truncate(MAX_LISTED_GROUPS);
    }
    if groups_not_listed > 0 {
        notes.push(format!("{groups_not_listed} more groups are counted in the summary but not listed"));
    }
    Ok(Calibration {
        origin: origin.to_string(),
        mode,
        kind,
        summary,
        steps,
        serving,
        exchange,
        pooled,
        choice: None,
        groups_not_listed,
        notes,
    })
}

/// Counts the fits with scales left at their start and those refused for being worse than their start.
fn count_fits<'a>(summary: &mut Summary, fits: impl Iterator<Item = &'a ScaleFit>) {
    for fit in fits {
        summary.fits_with_unidentified_scales += usize::from(!fit.unidentified.is_empty());
        summary.fits_kept_at_start += usize::from(fit.kept_start);
    }
}

/// Says what a fit could not do: a scale at its bound, scales the rows cannot identify, a fit
/// refused for being worse than its start.
fn fit_notes(notes: &mut Vec<String>, label: &str, fit: &ScaleFit) {
    if fit.at_bound() {
        notes.push(format!(
            "{label}: the {} scale hit its bound (clamped; the rows disagree with the model's shape there)",
            fit.bounds_hit().join("+")
        ));
    }
    if !fit.unidentified.is_empty() {
        let names: Vec<&str> = fit.unidentified.iter().map(|g| g.name()).collect();
        notes.push(format!(
            "{label}: the rows cannot identify the {} scale (one point moves one scale; otherwise it moves them less than the others can absorb): held at its prior",
            names.join("+")
        ));
    }
    if fit.kept_start {
        notes.push(format!(
            "{label}: the fit was worse than the starting profile on these rows: the starting profile is kept"
        ));
    }
}

/// Measured against modelled step for one row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Residual {
    /// Line in the CSV.
    pub line: usize,
    /// The deployment.
    pub group: String,
    /// Concurrent requests.
    pub concurrency: usize,
    /// Draft length.
    pub k: usize,
    /// Decode context in tokens.
    pub context: f64,
    /// Measured step, ms.
    pub measured_ms: f64,
    /// Model step, ms.
    pub predicted_ms: f64,
    /// Predicted / measured − 1, percent.
    pub residual_pct: f64,
    /// How many times the file holds this row.
    pub repeats: usize,
}

impl Residual {
    fn new(row: &StepRow, group: &str, predicted_s: f64) -> Self {
        Residual {
            line: row.line,
            group: group.to_string(),
            concurrency: row.concurrency,
            k: row.k,
            context: row.workload.decode_context(),
            measured_ms: row.step_s * 1e3,
            predicted_ms: predicted_s * 1e3,
            residual_pct: (predicted_s / row.step_s - 1.0) * 100.0,
            repeats: row.repeats,
        }
    }

    /// |predicted / measured − 1|.
    pub fn abs_rel_error(&self) -> f64 {
        (self.residual_pct / 100.0).abs()
    }

    /// The rows with the largest |residual|, largest first.
    fn worst(all: &[Residual]) -> Vec<Residual> {
        let mut order: Vec<&Residual> = all.iter().collect();
        order.sort_by(|a, b| b.residual_pct.abs().total_cmp(&a.residual_pct.abs()));
        order.into_iter().take(WORST_ROWS).cloned().collect()
    }
}

/// Cost models of the deployments met so far, so a large file builds each once.
struct CostCache {
    entries: HashMap<String, CostModel>,
}

fn deployment_cache() -> CostCache {
    CostCache { entries: HashMap::new() }
}

impl CostCache {
    /// The cost model of a deployment; the drafter is resolved by name, or — for spec rows without one —
    /// as the model's only drafter.
    #[allow(clippy::too_many_arguments)]
    fn get(
        &mut self,
        profiles: &Profiles,
        hardware: &HardwareProfile,
        model: &ModelProfile,
        drafter: Option<&str>,
        needs_drafter: bool,
        deployment: &Deployment,
        origin: &str,
        line: usize,
    ) -> Result<&CostModel> {
        let at = |e: Error| Error::invalid(format!("{origin}:{line}"), e.to_string());
        let key = format!("{}|{}|{:?}|{needs_drafter}|{deployment:?}", hardware.key, model.key, drafter);
        if self.entries.contains_key(&key) {
            return Ok(&self.entries[&key]);
        }
        let drafter = match drafter {
            Some(name) => Some(profiles.drafter(model, Some(name), None).map_err(at)?),
            None if needs_drafter => Some(profiles.drafter(model, None, None).map_err(at)?),
            None => None,
        };
        let cost = CostModel::for_measurements(hardware, model, drafter, deployment).map_err(at)?;
        Ok(self.entries.entry(key).or_insert(cost))
    }
}

/// The median of `values` (0 for none).
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 { sorted[mid] } else { (sorted[mid - 1] + sorted[mid]) / 2.0 }
}

/// The median of values each counted as often as its weight says: [`median`] of the list written out.
pub fn weighted_median(values: &mut [(f64, usize)]) -> f64 {
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n: usize = values.iter().map(|v| v.1).sum();
    // The value at position `i` of the written-out list.
    let at = |i: usize| {
        let mut seen = 0;
        values.iter().find(|v| {
            seen += v.1;
            seen > i
        })
    };
    match (n, at(n / 2)) {
        (0, _) | (_, None) => 0.0,
        (n, Some(mid)) if n % 2 == 1 => mid.0,
        (n, Some(mid)) => (at(n / 2 - 1).map_or(mid.0, |v| v.0) + mid.0) / 2.0,
    }
}

fn parse_precision(row: &CsvRow<'_>, column: &str) -> Result<Option<Precision>> {
    row.opt_str(column).map(|p| p.parse::<Precision>().map_err(|e| row.error(column, &e.to_string()))).transpose()
}

fn parse_bool(row: &CsvRow<'_>, column: &str) -> Result<bool> {
    match row.opt_str(column).map(str::to_ascii_lowercase).as_deref() {
        None | Some("false" | "no" | "0") => Ok(false),
        Some("true" | "yes" | "1") => Ok(true),
        Some(other) => Err(row.error(column, &format!("'{other}' is not true or false"))),
    }
}

fn parse_workload(row: &CsvRow<'_>) -> Result<Workload> {
    let workload = match row.opt_f64("context")? {
        Some(_) => Workload::Decode { context: row.non_negative("context", false)? },
        None => Workload::Turns {
            isl: row.non_negative("isl", false)?,
            osl: row.non_negative("osl", true)?,
            prefix_hit: row.opt_f64("prefix_hit")?.unwrap_or(0.0),
        },
    };
    checked_workload(row, workload)
}

/// `workload` after its range check, an error naming the row's column.
fn checked_workload(row: &CsvRow<'_>, workload: Workload) -> Result<Workload> {
    // The check names its parameter (`isl`); here the same value sits in the column of that name.
    workload.validate().map_err(|e| match e {
        Error::Parameter { name, message } => row.error(name, &message),
        other => other,
    })?;
    Ok(workload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::terms::Efficiencies;

    /// A deployment of DeepSeek-R1 with its MTP head under `eff`; with `routing`, its routing locality and
    /// expert novelty set to that value.
    fn dsr1(eff: Efficiencies, tp: usize, precision: Precision, routing: Option<f64>) -> CostModel {
        let p = Profiles::embedded();
        let mut m = p.model("dsr1").unwrap().clone();
        if let Some(l) = routing {
            (m.routing_locality, m.expert_novelty) = (l, l);
        }
        let m = &m;
        let mut hw = p.hardware("b200").unwrap().clone();
        hw.efficiency = eff;
        CostModel::new(
            &hw,
            m,
            Some(p.drafter(m, None, None).unwrap()),
            &Deployment::new(tp, precision, Precision::Bf16),
        )
        .unwrap()
    }

    /// The defaults with memory, compute and fixed time scaled as a calibration can scale them.
    fn truth() -> Efficiencies {
        let d = crate::perf::profile::DEFAULT_EFFICIENCIES;
        let mut c = d.coefficients();
        for (group, scale) in [(fit::Group::Memory, 0.8 / 0.7), (fit::Group::Compute, 1.5), (fit::Group::Fixed, 2.0)] {
            for &i in group.members() {
                c[i] *= scale;
            }
        }
        Efficiencies::from_coefficients(&c, d.overlap)
    }

    /// Serving pairs in the shared file's columns, generated by the model under `truth()` at AL `al`.
    fn pairs(al: f64, with_al: bool, groups: usize) -> String {
        let mut csv = String::from(
            "hardware,framework,model,precision,tp,ep,dp_attention,isl,osl,conc,spec_method,k,al,none_median_tpot,tput_ratio,moe_impl\n",
        );
        for g in 0..groups {
            let isl = 1024.0 * (1 + g % 8) as f64;
            let cost = dsr1(truth(), 8, Precision::Fp8, None);
            let w = Workload::Turns { isl, osl: 1024.0, prefix_hit: 0.0 };
            for b in [4, 8, 16, 32, 64] {
                let ar = cost.step_time(b, 0, 1.0, &w).unwrap().total;
                let sd = cost.step_time(b, 3, al, &w).unwrap().total;
                let al_cell = if with_al { al.to_string() } else { String::new() };
                let k_cell = if g == 0 { String::new() } else { "3".into() };
                csv.push_str(&format!(
                    "b200,trt{g},deepseek-r1,fp8,8,1,false,{isl},1024,{b},mtp,{k_cell},{al_cell},{ar},{},cutlass\n",
                    al * ar / sd
                ));
            }
        }
        csv
    }

    fn run(text: &str, k: Option<usize>) -> Result<Calibration> {
        let (measured, _) = read(text.as_bytes(), "pairs.csv", k)?;
        calibrate(&Profiles::embedded(), &measured, "pairs.csv", None)
    }

    #[test]
    fn serving_pairs_from_the_model_itself_are_reproduced_and_their_al_recovered() {
        let cal = run(&pairs(2.4, false, 3), Some(3)).unwrap();
        let s = &cal.summary;
        assert_eq!((s.rows, s.groups, s.trend_groups, s.al_fitted_groups), (15, 3, Some(3), Some(3)));
        assert!(s.speedup_median_abs_rel_error.unwrap() < 1e-3, "{s:?}");
        assert!(s.spec_off_median_abs_rel_error.unwrap() < 1e-3, "{s:?}");
        assert_eq!(s.trend_sign_agreement, Some(1.0));
        let serving = cal.serving.as_ref().unwrap();
        for g in &serving.groups {
            assert!((g.al - 2.4).abs() < 0.01 && g.al_fitted && !g.al_at_bound, "{g:?}");
            assert_eq!(g.drafter, "dsr1-mtp");
        }
        // The speedup falls with concurrency here, as measured deployments' do; a flat line misses that.
        assert!(serving.groups.iter().all(|g| g.trend.unwrap().measured < 0.0));
        assert!(s.flat_line_median_abs_rel_error.unwrap() > 0.01);
        // Given the AL, nothing is fitted on the spec side and the prediction is the same.
        let given = run(&pairs(2.4, true, 3), Some(3)).unwrap();
        assert_eq!(given.summary.al_fitted_groups, Some(0));
        assert!(given.summary.speedup_median_abs_rel_error.unwrap() < 1e-3);
        // Where the AL is given the level is scored on its own; a fitted AL would absorb it, so none is claimed.
        assert!(given.summary.level_median_abs_rel_error.unwrap() < 1e-3, "{:?}", given.summary);
        assert_eq!(s.level_median_abs_rel_error, None);
        // One hardware: a pooled profile to write.
        assert_eq!(cal.pooled.len(), 1);
        assert!((cal.pooled[0].profile.efficiency.bw_eff - 0.7).abs() < 0.02, "{:?}", cal.pooled[0]);
    }

    #[test]
    fn serving_input_errors_name_the_line_and_column() {
        let err = run(&pairs(2.4, false, 1), None).unwrap_err().to_string();
        assert!(err.contains("pairs.csv:2") && err.contains("'k'") && err.contains("`k` parameter"), "{err}");
        let bad_al = pairs(2.4, true, 2).replace(",3,2.4,", ",3,4.5,");
        let err = run(&bad_al, Some(3)).unwrap_err().to_string();
        assert!(err.contains("'al'"), "{err}");
        let err = run("hardware,model,precision,tp,isl,osl,conc,none_median_tpot\nb200,dsr1,fp8,8,1,1,4,0.01\n", None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("tput_ratio"), "{err}");
        let err = run(&pairs(2.4, false, 2).replace("deepseek-r1", "llama-9"), Some(3)).unwrap_err().to_string();
        assert!(err.contains("llama-9"), "{err}");
    }

    #[test]
    fn absurd_cells_are_refused_naming_their_column() {
        let good = pairs(2.4, false, 2);
        for (from, to, column) in [
            (",1024,4,", ",1024,1000000000000,", "'conc'"),
            (",8,1,false,1024,", ",8,1,false,1e18,", "'isl'"),
            ("mtp,3,", "mtp,99,", "'k'"),
        ] {
            let bad = good.replacen(from, to, 1);
            assert_ne!(bad, good, "{from}");
            let err = run(&bad, Some(3)).unwrap_err().to_string();
            assert!(err.contains("pairs.csv:") && err.contains(column) && err.contains("out of range"), "{err}");
        }
        let mut fast = String::new();
        for (i, line) in good.lines().enumerate() {
            let mut cells: Vec<&str> = line.split(',').collect();
            if i == 1 {
                cells[14] = "1e300";
            }
            fast.push_str(&cells.join(","));
            fast.push('\n');
        }
        let err = run(&fast, Some(3)).unwrap_err().to_string();
        assert!(err.contains("'tput_ratio'") && err.contains("1e300 is impossible"), "{err}");
        let steps = "hardware,model,tp,concurrency,k,context,step_ms\n";
        for (row, column) in [
            ("b200,llama-3.3-70b,1,1e12,0,1024,30", "'concurrency'"),
            ("b200,llama-3.3-70b,1,16,0,1e18,30", "'context'"),
            ("b200,llama-3.3-70b,1,16,40,1024,30", "'k'"),
        ] {
            let err = read(format!("{steps}{row}\n").as_bytes(), "s.csv", None).unwrap_err().to_string();
            assert!(err.contains("s.csv:2") && err.contains(column) && err.contains("out of range"), "{err}");
        }
    }

    #[test]
    fn a_weighted_median_is_the_median_of_the_list_written_out() {
        for values in
            [vec![(3.0, 2), (1.0, 1), (2.0, 1)], vec![(5.0, 1)], vec![(1.0, 3), (9.0, 3)], vec![(2.0, 0), (4.0, 1)]]
        {
            let written: Vec<f64> = values.iter().flat_map(|&(v, n)| std::iter::repeat_n(v, n)).collect();
            assert_eq!(weighted_median(&mut values.clone()), median(&written), "{values:?}");
        }
        assert_eq!(weighted_median(&mut []), 0.0);
    }

    #[test]
    fn rows_repeated_verbatim_are_fitted_once_with_their_count() {
        let once = pairs(2.4, false, 2);
        let mut twice = once.clone();
        twice.push_str(&once.lines().skip(1).collect::<Vec<_>>().join("\n"));
        let (measured, notes) = read(twice.as_bytes(), "twice.csv", Some(3)).unwrap();
        assert!(notes.iter().any(|n| n.contains("10 rows repeat")), "{notes:?}");
        let single = run(&once, Some(3)).unwrap();
        let double = calibrate(&Profiles::embedded(), &measured, "twice.csv", None).unwrap();
        assert_eq!(double.summary.rows, 2 * single.summary.rows);
        let (a, b) = (single.serving.unwrap(), double.serving.unwrap());
        assert_eq!(
            a.groups.iter().map(|g| g.points.len()).sum::<usize>(),
            b.groups.iter().map(|g| g.points.len()).sum::<usize>()
        );
        for (x, y) in a.groups.iter().zip(&b.groups) {
            assert!((x.al - y.al).abs() < 1e-6 && (x.fixed_ms - y.fixed_ms).abs() < 1e-9, "{x:?} {y:?}");
        }
        assert!(
            (single.summary.speedup_median_abs_rel_error.unwrap()
                - double.summary.speedup_median_abs_rel_error.unwrap())
            .abs()
                < 1e-9
        );
    }

    #[test]
    fn distinct_rows_are_bounded_and_long_lines_refused() {
        let mut csv = String::from("hardware,model,tp,concurrency,k,context,step_ms\n");
        for i in 0..=MAX_DISTINCT_ROWS {
            csv.push_str(&format!("b200,llama-3.3-70b,1,16,0,{},30\n", 1000 + i));
        }
        let err = read(csv.as_bytes(), "big.csv", None).unwrap_err().to_string();
        assert!(err.contains(&format!("big.csv:{}", MAX_DISTINCT_ROWS + 2)) && err.contains("distinct"), "{err}");
        let long = format!("hardware,model,tp,concurrency,k,context,step_ms\n{}\n", "x".repeat(100_000));
        let err = read(long.as_bytes(), "long.csv", None).unwrap_err().to_string();
        assert!(err.contains("long.csv:2") && err.contains("longer than"), "{err}");
    }

    #[test]
    fn many_groups_are_summarised_not_listed() {
        let cal = run(&pairs(2.0, false, MAX_LISTED_GROUPS + 5), Some(3)).unwrap();
        assert_eq!(cal.summary.groups, MAX_LISTED_GROUPS + 5);
        assert_eq!(cal.serving.as_ref().unwrap().groups.len(), MAX_LISTED_GROUPS);
        assert_eq!(cal.groups_not_listed, 5);
    }

    /// Routing locality of the synthetic step rows.
    const LOCALITY: f64 = 0.8;

    /// Step-time rows generated under `truth()` with routing locality [`LOCALITY`]: spec off at several
    /// batches, spec on at k = 1..3.
    fn steps() -> String {
        let cost = dsr1(truth(), 8, Precision::Fp8, Some(LOCALITY));
        let mut csv = String::from(
            "# GPU: synthetic; driver 0; torch 0\nhardware,model,tp,concurrency,k,al,context,step_ms,attention_ms,experts_touched,queue_ms,moe_impl\n",
        );
        for b in [1, 4, 16, 64, 256] {
            for k in 0..=3 {
                let al = 1.0 + 0.5 * k as f64;
                let terms = cost.step_terms(b, k, al, &Workload::Decode { context: 4096.0 }).unwrap();
                let step = terms.time(&truth()).total * 1e3;
                let attention = terms.part("attention", &truth()).unwrap() * 1e3;
                // DeepSeek-R1 routes 8 of 256; every routed token counts at the locality.
                let touched = crate::perf::cost::expected_experts(256.0, 8.0, LOCALITY * (b * (k + 1)) as f64);
                csv.push_str(&format!("b200,dsr1,8,{b},{k},{al},4096,{step},{attention},{touched},0.1,grouped\n"));
            }
        }
        csv
    }

    #[test]
    fn step_times_fit_on_spec_off_and_are_scored_on_spec_rows() {
        let (measured, notes) = read(steps().as_bytes(), "steps.csv", None).unwrap();
        assert!(
            notes.iter().any(|n| n.contains("GPU: synthetic")) && notes.iter().any(|n| n.contains("moe_impl")),
            "{notes:?}"
        );
        let cal = calibrate(&Profiles::embedded(), &measured, "steps.csv", None).unwrap();
        let s = &cal.summary;
        assert_eq!((s.rows, s.groups, s.step_time_rows_over_30pct), (20, 1, Some(0)));
        // The k = 0 rows pin memory, compute and fixed time; the spec rows are predicted from them alone.
        assert!(
            s.spec_off_median_abs_rel_error.unwrap() < 1e-6,
            "{s:?} {:?}",
            cal.steps.as_ref().unwrap().groups[0].fit
        );
        assert!(s.step_time_median_abs_rel_error.unwrap() < 1e-6, "{s:?}");
        let steps = cal.steps.as_ref().unwrap();
        assert_eq!(steps.parts.len(), 1);
        assert!(steps.parts[0].median_abs_rel_error < 1e-6);
        assert_eq!(steps.unpriced_parts, vec!["queue".to_string()]);
        // Each k ≥ 1 row's speedup over its k = 0 row, at its given AL, is met; with the spec steps measured
        // 10 % slower the predicted level is 10 % too optimistic.
        assert!(s.level_median_abs_rel_error.unwrap() < 1e-6, "{s:?}");
        let slower: String = self::steps()
            .lines()
            .map(|l| {
                let cells: Vec<&str> = l.split(',').collect();
                match cells.get(4).and_then(|k| k.parse::<usize>().ok()) {
                    Some(k) if k > 0 => {
                        let step = cells[7].parse::<f64>().unwrap() * 1.1;
                        format!("{},{step},{}\n", cells[..7].join(","), cells[8..].join(","))
                    }
                    _ => format!("{l}\n"),
                }
            })
            .collect();
        let (measured, _) = read(slower.as_bytes(), "slower.csv", None).unwrap();
        let level = calibrate(&Profiles::embedded(), &measured, "slower.csv", None).unwrap().summary;
        assert!((level.level_median_abs_rel_error.unwrap() - 0.1).abs() < 1e-6, "{level:?}");
        // The locality comes from the k = 0 rows alone and predicts the experts the k ≥ 1 rows woke.
        let locality = &steps.routing_locality[0];
        assert_eq!((locality.model.as_str(), locality.rows, locality.spec_rows), ("dsr1", 5, 15));
        assert!((locality.routing_locality - LOCALITY).abs() < 1e-4, "{locality:?}");
        assert!(locality.spec_max_abs_rel_error.unwrap() < 1e-4, "{locality:?}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b200.csv");
        write_profile(&cal, &path, false).unwrap();
        assert!(matches!(write_profile(&cal, &path, false), Err(Error::SettledBy { parameter: "force", .. })));
        let mut p = Profiles::embedded();
        p.load_file(crate::perf::profile::ProfileKind::Hardware, &path).unwrap();
        assert!((p.hardware("b200").unwrap().efficiency.bw_eff - 0.7).abs() < 1e-6);
    }

    #[test]
    fn a_files_matmul_ceiling_bounds_the_gemm_efficiency_fitted_to_it() {
        let ceiling = "# ceilings measured before the grid: device copy 2.69 TB/s (read + write), bf16 matmul 8192^3 100 TFLOP/s\n";
        let (measured, _) = read(format!("{ceiling}{}", steps()).as_bytes(), "steps.csv", None).unwrap();
        let Measured::Steps(rows) = &measured else { panic!("step rows") };
        assert!(rows.iter().all(|r| r.gemm_ceiling == Some((Precision::Bf16, 100e12))));
        let cal = calibrate(&Profiles::embedded(), &measured, "steps.csv", None).unwrap();
        let fit = &cal.steps.as_ref().unwrap().groups[0].fit;
        let b200 = Profiles::embedded().hardware("b200").unwrap().peak_flops(Precision::Bf16);
        assert!((fit.efficiency.flops_eff - 100e12 / b200).abs() < 1e-9, "{fit:?}");
        assert!(fit.bounds_hit().contains(&"compute"), "{fit:?}");
        // A line that names no rate is no ceiling.
        for other in ["# ceilings: bf16 matmul fast\n", "# bf16 matmul 8192^3 100 TFLOP/s\n", ""] {
            let (measured, _) = read(format!("{other}{}", steps()).as_bytes(), "steps.csv", None).unwrap();
            let Measured::Steps(rows) = &measured else { panic!("step rows") };
            assert!(rows.iter().all(|r| r.gemm_ceiling.is_none()), "{other}");
        }
    }

    #[test]
    fn a_score_is_the_prediction_of_the_profile_as_it_is() {
        let (measured, _) = read(steps().as_bytes(), "steps.csv", None).unwrap();
        let p = Profiles::embedded();
        let scored = score(&p, &measured, "steps.csv", None, &["b200".to_string()]).unwrap();
        assert_eq!(scored.mode, Mode::Score);
        let Measured::Steps(rows) = &measured else { panic!("step rows") };
        let cost = dsr1(p.hardware("b200").unwrap().efficiency, 8, Precision::Fp8, None);
        let steps = scored.steps.as_ref().unwrap();
        assert_eq!(steps.residuals.len(), rows.len());
        for (r, res) in rows.iter().zip(&steps.residuals) {
            let own = cost.step_time(r.concurrency, r.k, r.al, &r.workload).unwrap().total * 1e3;
            assert!((res.predicted_ms / own - 1.0).abs() < 1e-12, "line {}: {} vs {own}", r.line, res.predicted_ms);
        }
        // The defaults are not the truth the rows were made under, and a score does not pretend otherwise.
        assert!(scored.summary.spec_off_median_abs_rel_error.unwrap() > 0.05, "{:?}", scored.summary);
        assert_eq!(steps.groups[0].fit.efficiency, p.hardware("b200").unwrap().efficiency);
        assert!(steps.routing_locality.is_empty() && steps.groups[0].speculation_fit.is_none());
        assert_eq!(scored.pooled[0].profile.efficiency, p.hardware("b200").unwrap().efficiency);
        // Scored with the truth, every row is met; a profile of other hardware is refused naming the line.
        let mut truthful = p.clone();
        truthful.hardware.iter_mut().find(|h| h.key == "b200").unwrap().efficiency = truth();
        let model = truthful.models.iter_mut().find(|m| m.key == "dsr1").unwrap();
        (model.routing_locality, model.expert_novelty) = (LOCALITY, LOCALITY);
        let exact = score(&truthful, &measured, "steps.csv", None, &["b200".to_string()]).unwrap();
        assert!(exact.summary.spec_off_median_abs_rel_error.unwrap() < 1e-9);
        assert!(exact.summary.step_time_median_abs_rel_error.unwrap() < 0.02, "{:?}", exact.summary);
        let err = score(&p, &measured, "steps.csv", None, &["b300".to_string()]).unwrap_err().to_string();
        assert!(err.contains("steps.csv:3") && err.contains("'b200'") && err.contains("b300"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let err = write_profile(&exact, &dir.path().join("x.csv"), false).unwrap_err().to_string();
        assert!(err.starts_with("output: ") && err.contains("scored"), "{err}");
    }

    #[test]
    fn a_file_of_several_gpus_writes_one_profile_row_each() {
        let two =
            steps() + &steps().lines().skip(3).map(|l| l.replacen("b200,", "b300,", 1) + "\n").collect::<String>();
        let (measured, _) = read(two.as_bytes(), "two.csv", None).unwrap();
        let cal = calibrate(&Profiles::embedded(), &measured, "two.csv", None).unwrap();
        assert_eq!(cal.pooled.len(), 2);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("both.csv");
        write_profile(&cal, &path, false).unwrap();
        let mut p = Profiles::embedded();
        let keys = p.load_file(crate::perf::profile::ProfileKind::Hardware, &path).unwrap();
        assert_eq!(keys, vec!["b200".to_string(), "b300".to_string()]);
        for fit in &cal.pooled {
            // The file keeps six decimals.
            assert!(
                (p.hardware(&fit.profile.key).unwrap().efficiency.bw_eff - fit.profile.efficiency.bw_eff).abs() < 1e-6
            );
        }
    }

    #[test]
    fn one_spec_off_point_is_enough_and_a_group_without_one_is_refused() {
        let one = "hardware,model,tp,concurrency,k,context,step_ms\nb200,llama-3.3-70b,1,16,0,1024,30\n";
        let (measured, _) = read(one.as_bytes(), "one.csv", None).unwrap();
        let cal = calibrate(&Profiles::embedded(), &measured, "one.csv", None).unwrap();
        assert!(cal.summary.spec_off_median_abs_rel_error.unwrap() < 1e-9);
        assert_eq!(cal.pooled[0].fit.scales.len(), 1, "one point moves one scale");
        assert_eq!(cal.pooled[0].fit.unidentified.len(), 2, "and names the two it cannot identify");
        assert!(cal.notes.iter().any(|n| n.contains("held at its prior")), "{:?}", cal.notes);
        assert_eq!(cal.summary.fits_at_bound, 0);
        // SPEED-Bench's 19.6 ms is faster than the default efficiencies allow even at full bandwidth: the scale
        // stops where an efficiency reaches 1, and the report says so.
        let fast = one.replace(",30", ",19.6");
        let (measured, _) = read(fast.as_bytes(), "fast.csv", None).unwrap();
        let cal = calibrate(&Profiles::embedded(), &measured, "fast.csv", None).unwrap();
        assert_eq!(cal.summary.fits_at_bound, 1);
        assert!(cal.notes.iter().any(|n| n.contains("hit its bound")), "{:?}", cal.notes);
        let spec_only = "hardware,model,drafter,tp,concurrency,k,al,context,step_ms\nb200,llama-3.3-70b,EAGLE3,1,16,3,2.5,1024,25.9\n";
        let (measured, _) = read(spec_only.as_bytes(), "spec.csv", None).unwrap();
        let err = calibrate(&Profiles::embedded(), &measured, "spec.csv", None).unwrap_err().to_string();
        assert!(err.contains("spec.csv:2") && err.contains("k = 0"), "{err}");
        let err = read(
            "hardware,model,tp,concurrency,k,context,tpot_ms\nb200,llama-3.3-70b,1,16,3,1024,9\n".as_bytes(),
            "t.csv",
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("t.csv:2") && err.contains("'al'"), "{err}");
        let err = read("# only\n".as_bytes(), "e.csv", None).unwrap_err().to_string();
        assert!(err.contains("no header"), "{err}");
    }
}
