//! The choice score: does alsim pick the draft length a measured sweep would pick? (docs/model.md §6)
//!
//! Step-time rows that carry k — a calibration kit's files — hold, per cell (hardware, model, drafter,
//! deployment, request shape, concurrency), the measured step time at each k. Under an AL(k) the measured
//! throughput of k is B·AL(k)/step(k), so the file says which k a measured sweep would pick. The AL is a
//! named source (a golden curve, a curve file, a list, a constant-α chain), never the file's `al` column: the
//! kit keeps every verified token, so its `al` is k + 1 by construction, not a measured acceptance.
//!
//! alsim's k is what `predict` picks in that cell from profiles fitted on k = 0 rows only ([`fit_for_choice`]).
//! A cell's **regret** is the measured throughput lost by running alsim's k instead of the measured best;
//! the cell is right when that is under [`RIGHT_REGRET`] (a near-tie is not an error). Speculation **on or
//! off** is judged where the measured speedup of the best spec-on k lies outside ±[`ON_OFF_MARGIN`]: above,
//! alsim must speculate; below, it must not.
//!
//! [`score_kit`] scores several files in-sample (each fitted on its own k = 0 rows) and held out (each
//! scored with a fit on the other files' k = 0 rows alone: leave one file out).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::steps::{LocalityFit, StepRow};
use super::{Measured, calibrate, median};
use crate::curve::{CurveFile, CurveQuery, CurveSet, ThinkingMode};
use crate::error::{Error, Result};
use crate::names::fold;
use crate::perf::acceptance::AcceptanceSource;
use crate::perf::choice::Band;
use crate::perf::cost::{CostModel, Deployment};
use crate::perf::profile::{DrafterProfile, ModelProfile, Profiles};
use crate::perf::{DEFAULT_MAX_K, Sweep};

/// Measured throughput lost below which a cell's choice is right: a near-tie is not an error.
pub const RIGHT_REGRET: f64 = 0.01;
/// Measured speedup of the best spec-on k beyond which (either way) speculation on or off is decided.
pub const ON_OFF_MARGIN: f64 = 0.03;
/// The constant-α chains every kit file is scored under beside its golden curves.
pub const KIT_ALPHAS: [f64; 3] = [0.6, 0.7, 0.8];

/// Where a cell's AL(k) comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum ChoiceAl {
    /// The embedded golden curve of the rows' model and drafter, at a thinking mode (every mode without one).
    Golden(Option<ThinkingMode>),
    /// Every embedded golden curve and mode of the rows' model (any drafter), plus the α chains of
    /// [`KIT_ALPHAS`]: the kit's own score.
    All,
    /// Given values (a list or a curve file), for every row.
    Given(AcceptanceSource),
    /// A constant-α chain: AL(k) = 1 + α + … + αᵏ.
    Alpha(f64),
}

impl ChoiceAl {
    /// Reads `golden`, `all`, `alpha=0.7`, a list `AL1,AL2,…`, or a curve file's path (its one curve, or its
    /// curve at `mode`).
    ///
    /// # Errors
    /// [`Error::Parameter`] naming `choice_al` for an α outside (0, 1), a list value outside [1, k+1], or
    /// text that is none of these; the curve file's own errors.
    pub fn parse(text: &str, mode: Option<ThinkingMode>) -> Result<ChoiceAl> {
        let bad = |message: String| Error::parameter("choice_al", message);
        let text = text.trim();
        if text.eq_ignore_ascii_case("golden") {
            return Ok(ChoiceAl::Golden(mode));
        }
        if text.eq_ignore_ascii_case("all") {
            return Ok(ChoiceAl::All);
        }
        if let Some(value) = text.strip_prefix("alpha=") {
            return match value.trim().parse::<f64>() {
                Ok(a) if a > 0.0 && a < 1.0 => Ok(ChoiceAl::Alpha(a)),
                _ => Err(bad(format!("'{value}' is not an acceptance rate α in (0, 1)"))),
            };
        }
        let numbers: Option<Vec<f64>> = text.split(',').map(|v| v.trim().parse::<f64>().ok()).collect();
        if let Some(values) = numbers {
            let mut source = AcceptanceSource::explicit(&values).map_err(|e| bad(e.to_string()))?;
            source.description = format!("AL {text}");
            return Ok(ChoiceAl::Given(source));
        }
        let path = std::path::Path::new(text);
        if !path.is_file() {
            return Err(bad(format!(
                "'{text}' is not golden, all, alpha=α, a list AL1,AL2,… or a curve file that exists"
            )));
        }
        let file = CurveFile::read(path)?;
        let curves: Vec<_> = file.curves.iter().filter(|c| mode.is_none_or(|m| c.mode() == m)).collect();
        match curves.as_slice() {
            [curve] => Ok(ChoiceAl::Given(curve_source(&file, curve)?)),
            _ => Err(bad(format!(
                "{} holds {} curves{}: give one with a single curve, or choose one with --mode",
                file.origin,
                curves.len(),
                mode.map_or(String::new(), |m| format!(" at {m}"))
            ))),
        }
    }

    /// The AL(k) sources for rows of `model` drafted by `drafter`.
    ///
    /// # Errors
    /// [`Error::Lookup`] where `golden` finds no curve of the model and drafter (at the mode).
    pub fn resolve(&self, model: &ModelProfile, drafter: &DrafterProfile) -> Result<Vec<AcceptanceSource>> {
        match self {
            ChoiceAl::Given(source) => Ok(vec![source.clone()]),
            ChoiceAl::Alpha(a) => Ok(vec![alpha_chain(*a)]),
            ChoiceAl::Golden(mode) => {
                let set = CurveSet::embedded();
                let query = |mode| CurveQuery {
                    model: model.key.clone(),
                    drafter: Some(drafter.key.clone()),
                    mode,
                    ..Default::default()
                };
                if let Some(mode) = mode {
                    let found = set.lookup(&query(Some(*mode)))?;
                    return Ok(vec![curve_source(found.file, found.curve)?]);
                }
                let file = set.lookup(&query(Some(ThinkingMode::On)))?.file;
                file.curves
                    .iter()
                    .filter(|c| fold(c.model()) == fold(&model.key))
                    .map(|c| curve_source(file, c))
                    .collect()
            }
            ChoiceAl::All => {
                let set = CurveSet::embedded();
                let mut out = Vec::new();
                for file in set.files() {
                    for curve in file.curves.iter().filter(|c| fold(c.model()) == fold(&model.key)) {
                        out.push(curve_source(file, curve)?);
                    }
                }
                out.extend(KIT_ALPHAS.iter().map(|a| alpha_chain(*a)));
                Ok(out)
            }
        }
    }
}

/// A curve's points up to [`DEFAULT_MAX_K`], as they are (a k the curve skips is not scored).
fn curve_source(file: &CurveFile, curve: &crate::curve::Curve) -> Result<AcceptanceSource> {
    let max_k = curve.max_k().min(DEFAULT_MAX_K);
    AcceptanceSource::measured(curve.points(), format!("{} {}", file.stem, curve.mode()), max_k)
}

/// AL(k) = 1 + α + … + αᵏ for k = 0..=[`DEFAULT_MAX_K`]: each draft position accepted with probability α
/// given the one before it.
pub fn alpha_chain(alpha: f64) -> AcceptanceSource {
    let al = (0..=DEFAULT_MAX_K).map(|k| Some((0..=k).map(|i| alpha.powi(i as i32)).sum())).collect();
    AcceptanceSource { description: format!("alpha={alpha}"), al }
}

/// One cell's choice under one AL source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChoiceCell {
    /// Hardware profile key.
    pub hardware: String,
    /// Model profile key.
    pub model: String,
    /// Drafter profile key.
    pub drafter: String,
    /// Decode context in tokens.
    pub context: f64,
    /// Concurrent requests B.
    pub concurrency: usize,
    /// The AL source (its description).
    pub acceptance: String,
    /// AL(k) for k = 0, 1, … that the cell was judged under: the source's, where both it and the rows have that k
    /// (none elsewhere). With the rows' step times it gives every figure below.
    pub al: Vec<Option<f64>>,
    /// The k of the highest measured throughput.
    pub measured_best_k: usize,
    /// The k alsim picks (as `predict` does, with the band and objective given).
    pub alsim_k: usize,
    /// Measured throughput lost by running `alsim_k`: 1 − thr(alsim_k) / thr(best).
    pub regret: f64,
    /// Regret under [`RIGHT_REGRET`].
    pub right: bool,
    /// Measured speedup of the best spec-on k over k = 0.
    pub measured_speedup: f64,
    /// That speedup lies outside ±[`ON_OFF_MARGIN`] and alsim's k is on the other side (on for off, off for
    /// on).
    pub on_off_wrong: bool,
}

/// The choice figures of a set of cells.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ChoiceSummary {
    /// Cells scored (one per cell and AL source).
    pub cells: usize,
    /// Cells whose regret is under [`RIGHT_REGRET`].
    pub right: usize,
    /// Median regret (a fraction of the measured best throughput).
    pub regret_median: f64,
    /// Largest regret.
    pub regret_max: f64,
    /// Cells where speculation on or off is decided by the measurement and alsim decides it the other way.
    pub on_off_wrong: usize,
}

impl ChoiceSummary {
    /// The figures of `cells`.
    pub fn of<'a>(cells: impl IntoIterator<Item = &'a ChoiceCell>) -> ChoiceSummary {
        let cells: Vec<&ChoiceCell> = cells.into_iter().collect();
        let regrets: Vec<f64> = cells.iter().map(|c| c.regret).collect();
        ChoiceSummary {
            cells: cells.len(),
            right: cells.iter().filter(|c| c.right).count(),
            regret_median: median(&regrets),
            regret_max: regrets.iter().copied().fold(0.0, f64::max),
            on_off_wrong: cells.iter().filter(|c| c.on_off_wrong).count(),
        }
    }
}

/// One AL source's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceChoice {
    /// The AL source.
    pub acceptance: String,
    /// Its cells' figures.
    pub summary: ChoiceSummary,
}

/// The choice scored on one file's rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChoiceScore {
    /// Every cell under every source, pooled.
    pub summary: ChoiceSummary,
    /// Per AL source.
    pub sources: Vec<SourceChoice>,
    /// Every cell.
    pub cells: Vec<ChoiceCell>,
    /// Cells left out (no k = 0 row, or no k ≥ 1 row the source covers).
    pub cells_not_scored: usize,
}

/// The profiles with each hardware's efficiencies fitted to the k = 0 rows of `rows` (pooled per hardware)
/// and each MoE model's routing locality fitted to their experts; nothing else of the rows is read. A MoE model
/// whose experts the rows do not count takes the locality they measured for the models they do, weighted by
/// rows: the routing is the measurement's (a kit draws every model's tokens uniformly), and the profile's own,
/// fitted to served runs' skewed routing, would halve the experts each extra verify token wakes. With no k = 0
/// row, the profiles as they are (the datasheet defaults).
///
/// # Errors
/// As [`calibrate`].
pub fn fit_for_choice(profiles: &Profiles, rows: &[StepRow], origin: &str) -> Result<Profiles> {
    let off: Vec<StepRow> = rows.iter().filter(|r| r.k == 0).cloned().collect();
    let mut out = profiles.clone();
    if off.is_empty() {
        return Ok(out);
    }
    let cal = calibrate(profiles, &Measured::Steps(off), origin, None)?;
    for fit in cal.pooled {
        if let Some(h) = out.hardware.iter_mut().find(|h| h.key == fit.profile.key) {
            *h = fit.profile;
        }
    }
    let fitted: Vec<&LocalityFit> = cal.steps.iter().flat_map(|s| &s.routing_locality).collect();
    let rows_counted: usize = fitted.iter().map(|l| l.rows).sum();
    let pooled = (rows_counted > 0)
        .then(|| fitted.iter().map(|l| l.routing_locality * l.rows as f64).sum::<f64>() / rows_counted as f64);
    for m in out.models.iter_mut().filter(|m| m.experts > 0) {
        let own = fitted.iter().find(|l| l.model == m.key).map(|l| l.routing_locality);
        if let Some(locality) = own.or(pooled) {
            m.routing_locality = locality;
            m.expert_novelty = locality.min(1.0);
        }
    }
    Ok(out)
}

/// A cell's measured steps: (k, seconds, weight) summed per k.
struct Cell<'a> {
    first: &'a StepRow,
    steps: Vec<(usize, f64, f64)>,
}

/// Scores the choice on `rows` with `fitted` profiles (see [`fit_for_choice`]), `band` choosing alsim's k.
///
/// # Errors
/// Lookup errors for unknown profiles or a golden curve `source` cannot find; [`Error::Invalid`] naming the
/// line of a row whose deployment cannot be priced.
pub fn score_choice(
    fitted: &Profiles,
    rows: &[StepRow],
    origin: &str,
    source: &ChoiceAl,
    band: Band,
) -> Result<ChoiceScore> {
    let mut cells: Vec<(String, Cell<'_>)> = Vec::new();
    for r in rows {
        let key = format!(
            "{}|{}|{:?}|{:?}|{:?}|{}|{}|{}|{:?}|{}",
            r.hardware,
            r.model,
            r.drafter,
            r.precision,
            r.kv_precision,
            r.tp,
            r.ep,
            r.dp_attention,
            r.workload,
            r.concurrency
        );
        let cell = match cells.iter_mut().find(|(k, _)| *k == key) {
            Some((_, cell)) => cell,
            None => {
                cells.push((key, Cell { first: r, steps: Vec::new() }));
                &mut cells.last_mut().expect("just pushed").1
            }
        };
        let weight = r.repeats as f64;
        match cell.steps.iter_mut().find(|s| s.0 == r.k) {
            Some(s) => (s.1, s.2) = (s.1 + r.step_s * weight, s.2 + weight),
            None => cell.steps.push((r.k, r.step_s * weight, weight)),
        }
    }
    let at = |line: usize, e: Error| Error::invalid(format!("{origin}:{line}"), e.to_string());
    let mut scored = Vec::new();
    let mut not_scored = 0;
    let mut sources: Vec<String> = Vec::new();
    for (_, cell) in &cells {
        let r = cell.first;
        let step = |k: usize| cell.steps.iter().find(|s| s.0 == k).map(|s| s.1 / s.2);
        let Some(spec_off) = step(0) else {
            not_scored += 1;
            continue;
        };
        let model = fitted.model(&r.model)?;
        let hardware = fitted.hardware(&r.hardware)?;
        let drafter = fitted.drafter(model, r.drafter.as_deref(), None).map_err(|e| at(r.line, e))?;
        let deployment = Deployment {
            tp: r.tp,
            precision: r.precision.unwrap_or(model.default_precision),
            kv_precision: r.kv_precision,
            dp_attention: r.dp_attention,
            ep: r.ep,
        };
        let cost =
            CostModel::for_measurements(hardware, model, Some(drafter), &deployment).map_err(|e| at(r.line, e))?;
        for acceptance in source.resolve(model, drafter)? {
            // Only the k both the rows and the source cover.
            let al: Vec<Option<f64>> =
                acceptance.al.iter().enumerate().map(|(k, al)| al.filter(|_| step(k).is_some())).collect();
            let measured: Vec<(usize, f64)> =
                al.iter().enumerate().filter_map(|(k, al)| Some((k, (*al)? / step(k)?))).collect();
            if measured.len() < 2 {
                not_scored += 1;
                continue;
            }
            let restricted = AcceptanceSource { description: acceptance.description.clone(), al };
            let sweep =
                Sweep::run(&cost, &restricted, &[r.concurrency], &r.workload, None, band).map_err(|e| at(r.line, e))?;
            let alsim_k = sweep.best[0].best_k.unwrap_or(0);
            scored.push(judge(r, restricted, &measured, 1.0 / spec_off, alsim_k, hardware.key.clone()));
            if !sources.contains(&acceptance.description) {
                sources.push(acceptance.description);
            }
        }
    }
    let sources = sources
        .into_iter()
        .map(|acceptance| {
            let summary = ChoiceSummary::of(scored.iter().filter(|c| c.acceptance == acceptance));
            SourceChoice { acceptance, summary }
        })
        .collect();
    Ok(ChoiceScore { summary: ChoiceSummary::of(&scored), sources, cells: scored, cells_not_scored: not_scored })
}

/// The cell's verdict under `acceptance` (its AL restricted to the k the rows have) from its measured throughput
/// per k (`measured`, k = 0 first, at `spec_off` for k = 0) and alsim's k.
fn judge(
    r: &StepRow,
    acceptance: AcceptanceSource,
    measured: &[(usize, f64)],
    spec_off: f64,
    alsim_k: usize,
    hardware: String,
) -> ChoiceCell {
    // Ties keep the smaller k.
    let best = measured.iter().fold(measured[0], |best, m| if m.1 > best.1 { *m } else { best });
    let at_alsim = measured.iter().find(|m| m.0 == alsim_k).map_or(0.0, |m| m.1);
    let regret = 1.0 - at_alsim / best.1;
    let spec_on_best = measured.iter().filter(|m| m.0 > 0).map(|m| m.1).fold(0.0, f64::max);
    let measured_speedup = spec_on_best / spec_off;
    let on_off_wrong = (measured_speedup > 1.0 + ON_OFF_MARGIN && alsim_k == 0)
        || (measured_speedup < 1.0 - ON_OFF_MARGIN && alsim_k > 0);
    ChoiceCell {
        hardware,
        model: r.model.clone(),
        drafter: r.drafter.clone().unwrap_or_default(),
        context: r.workload.decode_context(),
        concurrency: r.concurrency,
        acceptance: acceptance.description,
        al: acceptance.al,
        measured_best_k: best.0,
        alsim_k,
        regret,
        right: regret < RIGHT_REGRET,
        measured_speedup,
        on_off_wrong,
    }
}

/// A measured file of a kit, read.
#[derive(Debug, Clone, PartialEq)]
pub struct KitFile {
    /// Where it came from.
    pub origin: String,
    /// Its step-time rows.
    pub rows: Vec<StepRow>,
}

/// One kit file's choice, in sample and held out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KitFileChoice {
    /// The file.
    pub origin: String,
    /// Scored with the profiles fitted on its own k = 0 rows.
    pub in_sample: ChoiceScore,
    /// Scored with the profiles fitted on the other files' k = 0 rows alone (its own never read).
    pub held_out: ChoiceScore,
    /// The files the held-out fit read.
    pub held_out_fit_on: Vec<String>,
}

/// The kit's choice figures pooled over its files.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KitSummary {
    /// Files scored.
    pub files: usize,
    /// Held out (leave one file out): the figure the model is judged on.
    pub choice: ChoiceSummary,
    /// In sample.
    pub choice_in_sample: ChoiceSummary,
}

/// The choice scored over a kit's files.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChoiceKit {
    /// Where the files came from.
    pub origin: String,
    /// Pooled figures.
    pub summary: KitSummary,
    /// Per file.
    pub files: Vec<KitFileChoice>,
    /// Remarks: files not scored, and why.
    pub notes: Vec<String>,
}

/// Reads a kit directory: every step-time file in it that carries k ≥ 1 rows, in name order, with a remark for each
/// CSV left out (another kind of table: serving pairs, error listings, per-layer timings).
///
/// # Errors
/// [`Error::Io`] when the directory cannot be read; a file's own read or parse error, except a header that is
/// not the step-time format (that table is left out with a remark); [`Error::Invalid`] when no file has k ≥ 1
/// rows.
pub fn read_kit(dir: &Path) -> Result<(Vec<KitFile>, Vec<String>)> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    paths.sort();
    let (mut files, mut notes) = (Vec::new(), Vec::new());
    for path in paths {
        let origin = path.display().to_string();
        match super::read_file(&path, None) {
            Ok((Measured::Steps(rows), _)) if rows.iter().any(|r| r.k > 0) => files.push(KitFile { origin, rows }),
            Ok((Measured::Steps(_), _)) => notes.push(format!("{origin}: no k ≥ 1 rows, no choice to score")),
            Ok((Measured::Serving(_), _)) => notes.push(format!("{origin}: serving pairs, not step times")),
            Ok((Measured::Exchange(_), _)) => {
                notes.push(format!("{origin}: expert-parallel exchanges, not step times"))
            }
            // A header that is not the step-time format is another table; a bad row of one is an error.
            Err(Error::Parse { line: None, message, .. }) => {
                notes.push(format!("{origin}: not step-time rows ({message})"))
            }
            Err(e) => return Err(e),
        }
    }
    if files.is_empty() {
        return Err(Error::invalid(dir.display().to_string(), "no step-time file with k ≥ 1 rows"));
    }
    Ok((files, notes))
}

/// Scores the choice on every file of a kit, in sample and leaving one file out.
///
/// # Errors
/// As [`fit_for_choice`] and [`score_choice`].
pub fn score_kit(
    profiles: &Profiles,
    origin: &str,
    files: &[KitFile],
    source: &ChoiceAl,
    band: Band,
) -> Result<ChoiceKit> {
    let mut out = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let own = fit_for_choice(profiles, &file.rows, &file.origin)?;
        let others: Vec<&KitFile> = files.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, f)| f).collect();
        let rest: Vec<StepRow> = others.iter().flat_map(|f| f.rows.iter().cloned()).collect();
        let names: Vec<String> = others.iter().map(|f| f.origin.clone()).collect();
        let held = fit_for_choice(profiles, &rest, &names.join(", "))?;
        out.push(KitFileChoice {
            origin: file.origin.clone(),
            in_sample: score_choice(&own, &file.rows, &file.origin, source, band)?,
            held_out: score_choice(&held, &file.rows, &file.origin, source, band)?,
            held_out_fit_on: names,
        });
    }
    let summary = KitSummary {
        files: out.len(),
        choice: ChoiceSummary::of(out.iter().flat_map(|f| &f.held_out.cells)),
        choice_in_sample: ChoiceSummary::of(out.iter().flat_map(|f| &f.in_sample.cells)),
    };
    Ok(ChoiceKit { origin: origin.to_string(), summary, files: out, notes: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::calibrate::read;
    use crate::perf::cost::Workload;

    /// Step-time rows of Llama-3.3-70B with its EAGLE3 head on the H200 at concurrency 1 and 64, k = 0..=`max_k`,
    /// timed by `step_ms(b, k)`.
    fn rows(max_k: usize, step_ms: impl Fn(usize, usize) -> f64) -> Vec<StepRow> {
        let mut csv = String::from("hardware,model,drafter,tp,concurrency,k,al,context,step_ms\n");
        for b in [1, 64] {
            for k in 0..=max_k {
                csv.push_str(&format!(
                    "h200,llama-3.3-70b,llama-3.3-70b-eagle3,1,{b},{k},{},2048,{}\n",
                    k + 1,
                    step_ms(b, k)
                ));
            }
        }
        match read(csv.as_bytes(), "synthetic.csv", None).unwrap().0 {
            Measured::Steps(rows) => rows,
            Measured::Serving(_) | Measured::Exchange(_) => unreachable!("step-time header"),
        }
    }

    fn throughput_band() -> Band {
        Band { error: 0.05, objective: crate::perf::Objective::Throughput }
    }

    #[test]
    fn a_constant_marginal_gain_against_a_constant_marginal_cost_picks_an_end_in_closed_form() {
        // AL(k) = 1 + g·k against T(k) = T0·(1 + c·k): throughput (1 + g·k)/(1 + c·k) rises with k when g > c and
        // falls when g < c, so the measured best k is K or 0, and alsim's k = 0 loses 1 − (1 + c·K)/(1 + g·K).
        let (g, k_max) = (0.5, 4);
        let al = ChoiceAl::parse("1.5,2,2.5,3", None).unwrap();
        for (b, c) in [(1, 0.1), (64, 0.9)] {
            let rows = rows(k_max, |rb, k| if rb == b { 20.0 * (1.0 + c * k as f64) } else { 1e3 });
            let rows: Vec<StepRow> = rows.into_iter().filter(|r| r.concurrency == b).collect();
            let score = score_choice(&Profiles::embedded(), &rows, "synthetic.csv", &al, throughput_band()).unwrap();
            let [cell] = score.cells.as_slice() else { panic!("{score:?}") };
            let best = if g > c { k_max } else { 0 };
            assert_eq!(cell.measured_best_k, best, "{cell:?}");
            let speedup = (1.0 + g * k_max as f64) / (1.0 + c * k_max as f64);
            assert!((cell.measured_speedup - speedup.max((1.0 + g) / (1.0 + c))).abs() < 1e-9, "{cell:?}");
            let expected_regret = match (best, cell.alsim_k) {
                (b, a) if b == a => 0.0,
                (0, a) => 1.0 - (1.0 + g * a as f64) / (1.0 + c * a as f64),
                (_, 0) => 1.0 - 1.0 / speedup,
                (_, a) => 1.0 - (1.0 + g * a as f64) / (1.0 + c * a as f64) / speedup,
            };
            assert!((cell.regret - expected_regret).abs() < 1e-9, "{cell:?}");
            assert_eq!(cell.right, expected_regret < RIGHT_REGRET);
            assert_eq!(cell.on_off_wrong, (best > 0) != (cell.alsim_k > 0), "{cell:?}");
        }
    }

    #[test]
    fn a_model_scored_on_its_own_step_times_picks_every_measured_k() {
        let p = Profiles::embedded();
        let model = p.model("llama-3.3-70b").unwrap();
        let drafter = p.drafter(model, Some("llama-3.3-70b-eagle3"), None).unwrap();
        let cost = CostModel::for_measurements(
            p.hardware("h200").unwrap(),
            model,
            Some(drafter),
            &Deployment::new(1, model.default_precision, crate::perf::profile::Precision::Bf16),
        )
        .unwrap();
        for alpha in KIT_ALPHAS {
            let al = alpha_chain(alpha);
            let workload = Workload::Decode { context: 2048.0 };
            let rows = rows(8, |b, k| cost.step_time(b, k, al.al[k].unwrap(), &workload).unwrap().total * 1e3);
            let score = score_choice(&p, &rows, "own.csv", &ChoiceAl::Alpha(alpha), throughput_band()).unwrap();
            assert_eq!(score.summary.cells, 2);
            assert_eq!(score.summary.right, 2, "{score:?}");
            assert!(score.summary.regret_max < 1e-9 && score.summary.on_off_wrong == 0, "{score:?}");
            assert!(score.cells.iter().all(|c| c.measured_best_k == c.alsim_k), "{score:?}");
        }
    }

    #[test]
    fn sources_parse_or_are_refused_naming_the_flag() {
        assert_eq!(
            ChoiceAl::parse("golden", Some(ThinkingMode::Off)).unwrap(),
            ChoiceAl::Golden(Some(ThinkingMode::Off))
        );
        assert_eq!(ChoiceAl::parse("ALL", None).unwrap(), ChoiceAl::All);
        assert_eq!(ChoiceAl::parse("alpha=0.7", None).unwrap(), ChoiceAl::Alpha(0.7));
        let chain = alpha_chain(0.5);
        assert!((chain.al[2].unwrap() - 1.75).abs() < 1e-12 && chain.max_k() == DEFAULT_MAX_K);
        for bad in ["alpha=1.2", "alpha=x", "1.5,4", "no-such-file.yaml"] {
            let err = ChoiceAl::parse(bad, None).unwrap_err();
            assert!(matches!(err, Error::Parameter { name: "choice_al", .. }), "{bad}: {err}");
        }
        // `golden` names what it cannot find.
        let p = Profiles::embedded();
        let llama = p.model("llama-3.3-70b").unwrap();
        let err = ChoiceAl::Golden(None)
            .resolve(llama, p.drafter(llama, Some("llama-3.3-70b-eagle3"), None).unwrap())
            .unwrap_err();
        assert!(err.to_string().contains("llama-3.3-70b"), "{err}");
        // `all` gives a model without curves the α chains alone, and MiniMax-M3 every curve of both drafters.
        assert_eq!(
            ChoiceAl::All.resolve(llama, p.drafter(llama, Some("llama-3.3-70b-eagle3"), None).unwrap()).unwrap().len(),
            3
        );
        let m3 = p.model("minimax-m3").unwrap();
        let all = ChoiceAl::All.resolve(m3, p.drafter(m3, Some("Inferact/MiniMax-M3-EAGLE3"), None).unwrap()).unwrap();
        assert_eq!(all.len(), 4 + 3, "{all:?}");
    }

    #[test]
    fn a_moe_model_the_rows_do_not_count_takes_the_routing_they_measured() {
        // DeepSeek-R1's spec-off experts counted at locality 0.6 (8 of 256 routed per token); Qwen3-235B-A22B has
        // no rows, so it takes 0.6 too, not its profile's served-routing novelty; the dense 70B keeps its own.
        const LOCALITY: f64 = 0.6;
        let mut csv = String::from("hardware,model,tp,concurrency,k,context,step_ms,experts_touched\n");
        for b in [1, 4, 16, 64] {
            let touched = crate::perf::cost::expected_experts(256.0, 8.0, LOCALITY * b as f64);
            csv.push_str(&format!("b200,dsr1,8,{b},0,4096,{},{touched}\n", 20.0 + b as f64 / 8.0));
        }
        let Measured::Steps(rows) = read(csv.as_bytes(), "r1.csv", None).unwrap().0 else { unreachable!() };
        let start = Profiles::embedded();
        let fitted = fit_for_choice(&start, &rows, "r1.csv").unwrap();
        for key in ["dsr1", "qwen3-235b-a22b"] {
            let m = fitted.model(key).unwrap();
            assert!((m.routing_locality - LOCALITY).abs() < 1e-4 && m.expert_novelty == m.routing_locality, "{m:?}");
            assert_ne!(start.model(key).unwrap().expert_novelty, m.expert_novelty, "{key}");
        }
        assert_eq!(fitted.model("llama-3.3-70b").unwrap(), start.model("llama-3.3-70b").unwrap());
    }

    #[test]
    fn a_cell_without_a_spec_off_row_is_counted_not_scored() {
        let rows: Vec<StepRow> =
            rows(3, |_, k| 20.0 + k as f64).into_iter().filter(|r| r.k > 0 || r.concurrency == 1).collect();
        let score =
            score_choice(&Profiles::embedded(), &rows, "s.csv", &ChoiceAl::Alpha(0.7), Band::default()).unwrap();
        assert_eq!((score.summary.cells, score.cells_not_scored), (1, 1));
    }
}
