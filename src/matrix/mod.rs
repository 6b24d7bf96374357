//! The benchmark matrix against the cost model (`alsim sweep REPO`): for every master-config entry that runs
//! speculative decoding and every concurrency of its search space, the best k, its band and whether the k
//! the entry runs lies inside it.
//!
//! The entries, their points and the pins each point reaches come from the pins launch graph
//! ([`crate::pins::scan`]), checked against the repository's golden curves ([`crate::pins::check_inventory`]).
//! Per point:
//! - hardware and model profiles through the mapping table ([`map`]); an unknown runner label or model is
//!   *unmapped*, never guessed;
//! - the k it runs and its golden curve from its pins (decode or aggregated roles): the curve the check
//!   judged the pin on ([`crate::pins::GoldenRef`], the repository's or alsim's embedded one), else the curve
//!   the model, the thinking default the check's served-mode context decides and the drafter select; without
//!   a pin the k is not known and the row has no in-band verdict;
//! - the deployment from the point: TP, data-parallel attention (a disaggregated point's decode workers),
//!   the entry's precision, a BF16 KV cache (`alsim predict`'s default); ISL/OSL from its scenario item, else
//!   `alsim predict`'s defaults (agentic traces state none) with a note;
//! - the same [`Sweep`] `alsim predict` runs: [`crate::perf::cost::CostModel`] and
//!   `crate::perf::choice::choose` with the [`Band`].

pub mod map;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use self::map::{MapKind, NameMap};
use crate::curve::{CurveQuery, CurveSet, Resolved};
use crate::error::{Error, Result};
use crate::names::fold;
use crate::perf::cost::{CostModel, Deployment, Workload};
use crate::perf::profile::{DrafterProfile, ModelProfile, Precision, Profiles};
use crate::perf::workload::{DEFAULT_ISL, DEFAULT_OSL};
use crate::perf::{AcceptanceSource, Band, DEFAULT_MAX_K, Sweep};
use crate::pins::discover::graph::config::{Entry, Point};
use crate::pins::served::Context;
use crate::pins::walk::Excludes;
use crate::pins::{CheckOptions, CheckedPin};
use crate::pins::{Location, Role, Status, golden_curve, model_key, thinking};

/// What a sweep reads besides the repository.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--golden DIR`: golden curves instead of the repository's own.
    pub golden: Option<PathBuf>,
    /// Paths the walk does not read (`--exclude`, the configuration's `exclude`), beside the ignore files.
    pub exclude: Excludes,
    /// The mapping table (the user's rows first, then the embedded ones).
    pub map: NameMap,
    /// Hardware, model and drafter profiles.
    pub profiles: Profiles,
    /// The band and the choice in it.
    pub band: Band,
    /// A k outside its band fails the sweep; without it the verdict is advisory (a warning).
    pub strict: bool,
}

/// Where a row's hardware efficiencies come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HardwareFrom {
    /// Fitted to measured steps (a profile `alsim calibrate --output` wrote).
    Measured,
    /// The datasheet defaults: nothing measured calibrates them.
    Datasheet,
}

/// One (entry, point, concurrency) predicted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The entry's name.
    pub entry: String,
    /// The point's line in its master config.
    pub at: Location,
    /// Hardware profile key.
    pub hardware: String,
    /// Whether the hardware's efficiencies are calibrated from measurements or the datasheet defaults.
    pub hardware_from: HardwareFrom,
    /// The runner label.
    pub runner: String,
    /// Model profile key.
    pub model: String,
    /// Drafter profile key.
    pub drafter: String,
    /// Tensor parallelism as configured.
    pub tp: usize,
    /// GPUs per replica priced: `tp`, or `ep` when larger under data-parallel attention (a `dep8` recipe
    /// runs tp 1, ep 8 on eight GPUs, each with its own requests' attention).
    pub gpus: usize,
    /// Expert parallelism as configured (above 1 the cost model prices each decode token's EP exchange).
    pub ep: Option<usize>,
    /// Data-parallel attention.
    pub dp_attn: bool,
    /// Weight precision.
    pub precision: String,
    /// The request shape predicted.
    pub workload: Workload,
    /// Whether ISL/OSL came from the config (false: `alsim predict`'s defaults).
    pub workload_stated: bool,
    /// Concurrent requests.
    pub concurrency: usize,
    /// The k the entry runs, from its pins.
    pub k: Option<usize>,
    /// The pin that states it.
    pub k_from: Option<Location>,
    /// The k chosen in the band.
    pub best_k: Option<usize>,
    /// The k with the highest predicted throughput.
    pub top_k: Option<usize>,
    /// Every k within the model error of the top.
    pub band: Vec<usize>,
    /// Whether `k` lies in `band` (`None` when the entry's k is not known or not swept).
    pub in_band: Option<bool>,
    /// Speedup of `best_k` over spec off.
    pub speedup: Option<f64>,
    /// Speedup of the entry's k over spec off.
    pub k_speedup: Option<f64>,
    /// Where AL(k) came from.
    pub acceptance: String,
}

/// Why an entry or point was not predicted.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Skip {
    /// No row of the mapping table matches the name.
    Unmapped {
        /// Runner label or model.
        what: MapKind,
        /// The name as written.
        name: String,
    },
    /// Something the prediction needs is missing or unusable.
    NotPredicted {
        /// What, in the user's terms.
        why: String,
    },
}

/// An entry or point left out, with where it is written.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    /// The entry's name.
    pub entry: String,
    /// The entry's line (unmapped) or its first such point's.
    pub at: Location,
    /// How many of the entry's points this stands for (0 for an unmapped entry: none was looked at).
    pub points: usize,
    /// Why.
    pub skip: Skip,
}

/// A name no row of the mapping table matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unmapped<'a> {
    /// Runner label or model.
    pub what: MapKind,
    /// The name as written.
    pub name: &'a str,
}

/// One entry's sweeps, one per point, for its chart.
#[derive(Debug, Clone)]
pub struct EntrySweeps {
    /// The entry's name.
    pub entry: String,
    /// The sweeps of its predicted points.
    pub sweeps: Vec<Sweep>,
}

/// What `alsim sweep` prints.
#[derive(Debug, Clone, Serialize)]
pub struct MatrixReport {
    /// The repository.
    pub repo: String,
    /// Where golden curves came from.
    pub golden_source: String,
    /// Relative throughput error that defines the band.
    pub model_error: f64,
    /// Config entries in master configs.
    pub entries: usize,
    /// Entries with at least one speculative-decoding point.
    pub speculative: usize,
    /// Entries with at least one predicted row.
    pub covered: usize,
    /// Predicted (entry, point, concurrency) rows.
    pub rows: Vec<Row>,
    /// Entries and points not predicted.
    pub skipped: Vec<Skipped>,
    /// Remarks.
    pub notes: Vec<String>,
    /// The outcome: pass (every known k in its band, or some outside without `strict`: a warning), fail (some
    /// outside, with `strict`), undecided (nothing predicted).
    pub status: Status,
    /// Per entry, its sweeps (for `--plot`).
    #[serde(skip)]
    pub plots: Vec<EntrySweeps>,
}

impl MatrixReport {
    /// Rows whose k lies outside the band.
    pub fn outside(&self) -> usize {
        self.rows.iter().filter(|r| r.in_band == Some(false)).count()
    }

    /// Names that no row of the mapping table matched, by kind, without repeats.
    pub fn unmapped(&self) -> BTreeSet<Unmapped<'_>> {
        self.skipped
            .iter()
            .filter_map(|s| match &s.skip {
                Skip::Unmapped { what, name } => Some(Unmapped { what: *what, name }),
                Skip::NotPredicted { .. } => None,
            })
            .collect()
    }
}

/// The pieces one point's prediction needs once its entry is mapped.
struct Mapped<'a> {
    entry: &'a Entry,
    hardware: String,
    model: String,
}

/// Sweeps the benchmark matrix of the repository at `repo`.
///
/// # Errors
/// [`crate::Error::Io`] when `repo` cannot be read; errors reading the golden directory (naming the file).
pub fn sweep(repo: &Path, options: &Options) -> Result<MatrixReport> {
    let inventory = crate::pins::scan(repo, &options.exclude)?;
    // Clones, not takes: the check decides each pin's served mode from these too, and the sweep decides an
    // unpinned point's from them in the same served-mode context.
    let (entries, image_lines, recipe_renderers) =
        (inventory.config_entries.clone(), inventory.image_lines.clone(), inventory.recipe_renderers.clone());
    let served = Context::new(&entries, &image_lines, &recipe_renderers);
    let golden = crate::pins::golden_curves(repo, options.golden.as_deref())?;
    let checked = crate::pins::check_inventory(
        inventory,
        &golden.curves,
        golden.source,
        golden.own,
        repo,
        &CheckOptions::default(),
    );
    let speculative: Vec<&Entry> = entries.iter().filter(|e| e.points.iter().any(Point::speculative)).collect();
    let mut skipped: Vec<Skipped> = Vec::new();
    let mut mapped = Vec::new();
    for entry in &speculative {
        let at = Location::new(&entry.file, entry.line);
        let mut profile_of = |what: MapKind, name: Option<&String>| -> Option<String> {
            let Some(name) = name else {
                let why = format!("the entry names no {}", what.name());
                skipped.push(Skipped {
                    entry: entry.name.clone(),
                    at: at.clone(),
                    points: 0,
                    skip: Skip::NotPredicted { why },
                });
                return None;
            };
            let row = options.map.lookup(what, name);
            if row.is_none() {
                let skip = Skip::Unmapped { what, name: name.clone() };
                skipped.push(Skipped { entry: entry.name.clone(), at: at.clone(), points: 0, skip });
            }
            row.map(|r| r.profile.clone())
        };
        let hardware = profile_of(MapKind::Runner, entry.runner.as_ref());
        let model = profile_of(MapKind::Model, entry.model.as_ref());
        if let (Some(hardware), Some(model)) = (hardware, model) {
            mapped.push(Mapped { entry, hardware, model });
        }
    }
    let points: Vec<(&Mapped, &Point)> =
        mapped.iter().flat_map(|m| m.entry.points.iter().filter(|p| p.speculative()).map(move |p| (m, p))).collect();
    let predicted: Vec<std::result::Result<Predicted, Skipped>> =
        points.par_iter().map(|(m, p)| predict_point(m, p, &checked.pins, &golden.curves, &served, options)).collect();
    let mut rows = Vec::new();
    let mut plots: Vec<EntrySweeps> = Vec::new();
    let mut notes = BTreeSet::new();
    for result in predicted {
        match result {
            Ok(p) => {
                notes.extend(p.notes);
                rows.extend(p.rows);
                match plots.last_mut() {
                    Some(last) if last.entry == p.entry => last.sweeps.push(p.sweep),
                    _ => plots.push(EntrySweeps { entry: p.entry, sweeps: vec![p.sweep] }),
                }
            }
            Err(s) => skipped.push(s),
        }
    }
    skipped.sort_by(|a, b| (&a.at, &a.entry).cmp(&(&b.at, &b.entry)));
    // An entry's points left out for the same reason are one row (124 DeepSeek-R1 points share theirs).
    let mut merged: Vec<Skipped> = Vec::with_capacity(skipped.len());
    for s in skipped {
        match merged.iter_mut().find(|m| m.entry == s.entry && m.at.file == s.at.file && m.skip == s.skip) {
            Some(m) => m.points += s.points,
            None => merged.push(s),
        }
    }
    let skipped = merged;
    let covered = plots.len();
    let outside = rows.iter().filter(|r| r.in_band == Some(false)).count();
    let status = if rows.is_empty() {
        Status::Undecided
    } else if outside > 0 && options.strict {
        Status::Fail
    } else {
        Status::Pass
    };
    if outside > 0 && !options.strict {
        notes.insert(format!(
            "{outside} rows run a k outside the band: a warning, not a failure — the choice of k is not yet held to \
             measurement well enough to fail a benchmark on (docs/model.md §6); --strict fails on them"
        ));
    }
    let datasheet = rows.iter().filter(|r| r.hardware_from == HardwareFrom::Datasheet).count();
    if datasheet > 0 {
        let mut gpus: Vec<&str> =
            rows.iter().filter(|r| r.hardware_from == HardwareFrom::Datasheet).map(|r| r.hardware.as_str()).collect();
        gpus.sort_unstable();
        gpus.dedup();
        notes.insert(format!(
            "{datasheet} of {} rows price hardware on datasheet defaults, calibrated from no measurement ({}); \
             --profile takes a profile alsim calibrate --output fitted",
            rows.len(),
            gpus.join(", ")
        ));
    }
    Ok(MatrixReport {
        repo: repo.display().to_string(),
        golden_source: checked.golden_source,
        model_error: options.band.error,
        entries: entries.len(),
        speculative: speculative.len(),
        covered,
        rows,
        skipped,
        notes: notes.into_iter().collect(),
        status,
        plots,
    })
}

/// One point's rows and sweep.
struct Predicted {
    entry: String,
    rows: Vec<Row>,
    sweep: Sweep,
    notes: Vec<String>,
}

/// An error as the reason a point is not predicted: an invalid value's message without the parameter it
/// names (`tp: …`), which a sweep's user never gave.
fn reason(error: Error) -> String {
    match error {
        Error::Invalid { message, .. } | Error::Parameter { message, .. } => message,
        other => other.to_string(),
    }
}

/// The checked pins a point reaches on roles that decode (not prefill, not inert), with a k.
fn point_pins<'p>(entry: &Entry, point: &Point, pins: &'p [CheckedPin]) -> Vec<&'p CheckedPin> {
    pins.iter()
        .filter(|c| !c.pin.inert() && c.pin.role != Some(Role::Prefill) && c.pin.k.value.is_some())
        .filter(|c| {
            c.pin
                .entries
                .iter()
                .any(|r| r.name == entry.name && r.at.file == entry.file && r.at.line == Some(point.line))
        })
        .collect()
}

fn predict_point(
    m: &Mapped,
    point: &Point,
    pins: &[CheckedPin],
    curves: &CurveSet,
    served: &Context<'_>,
    options: &Options,
) -> std::result::Result<Predicted, Skipped> {
    let entry = m.entry;
    let shape = &point.shape;
    let at = Location::new(&entry.file, shape.line);
    let skip = |why: String| Skipped {
        entry: entry.name.clone(),
        at: at.clone(),
        points: 1,
        skip: Skip::NotPredicted { why },
    };
    if let Some(problem) = &shape.problem {
        return Err(skip(problem.clone()));
    }
    let tp = shape.tp.ok_or_else(|| skip("the point states no tp".into()))?;
    if shape.concurrency.is_empty() {
        return Err(skip("the point states no concurrency (conc-list, or conc-start and conc-end)".into()));
    }
    let profiles = &options.profiles;
    let model = profiles.model(&m.model).map_err(|e| skip(reason(e)))?;
    let hw = profiles.hardware(&m.hardware).map_err(|e| skip(reason(e)))?;
    let precision = match &entry.precision {
        Some(p) => p.parse::<Precision>().map_err(|e| skip(format!("precision: {e}")))?,
        None => model.default_precision,
    };
    let own = point_pins(entry, point, pins);
    let ks: BTreeSet<usize> = own.iter().filter_map(|c| c.pin.k.value).collect();
    let mut notes = Vec::new();
    if ks.len() > 1 {
        // Branches of one script (`case $CONC`) may run different k; the sweep does not split the rows by them.
        let list: Vec<String> = ks.iter().map(usize::to_string).collect();
        notes.push(format!(
            "{} ({at}): its pins run k {} by branch; its rows have no verdict",
            entry.name,
            list.join(", ")
        ));
    }
    let k = (ks.len() == 1).then(|| ks.first().copied()).flatten();
    let pin = own.first().copied();
    let resolved = curve_of(entry, point, pin, curves, served).map_err(skip)?;
    let max_k = resolved.curve.max_k().min(DEFAULT_MAX_K);
    let acceptance =
        AcceptanceSource::from_curve(resolved.curve, &resolved.file.origin, max_k).map_err(|e| skip(reason(e)))?;
    let drafter = drafter_of(profiles, model, pin, &resolved, point.spec.as_deref()).map_err(|e| skip(reason(e)))?;
    let gpus = if shape.dp_attn { tp.max(shape.ep.unwrap_or(1)) } else { tp };
    let deployment = Deployment {
        tp: gpus,
        precision,
        kv_precision: Precision::Bf16,
        dp_attention: shape.dp_attn,
        ep: shape.ep.unwrap_or(1),
    };
    let cost = CostModel::new(hw, model, Some(drafter), &deployment).map_err(|e| skip(reason(e)))?;
    let stated = shape.isl.zip(shape.osl);
    let (isl, osl) = stated.unwrap_or((DEFAULT_ISL as usize, DEFAULT_OSL as usize));
    let workload = Workload::Turns { isl: isl as f64, osl: osl as f64, prefix_hit: 0.0 };
    let sweep = Sweep::run(&cost, &acceptance, &shape.concurrency, &workload, None, options.band)
        .map_err(|e| skip(reason(e)))?;
    if stated.is_none() {
        notes.push(format!(
            "{} scenario points state no isl/osl: predicted at {isl}/{osl} tokens (alsim predict's default)",
            point.scenario
        ));
    }
    if let Some(k) = k.filter(|&k| k > max_k) {
        notes.push(format!("{}: k {k} is past the curve's last k {max_k}; its band is not judged", entry.name));
    }
    let rows = sweep
        .best
        .iter()
        .map(|choice| {
            let swept = k.filter(|&k| k <= max_k);
            Row {
                entry: entry.name.clone(),
                at: at.clone(),
                hardware: hw.key.clone(),
                hardware_from: if hw.calibrated() { HardwareFrom::Measured } else { HardwareFrom::Datasheet },
                runner: entry.runner.clone().unwrap_or_default(),
                model: model.key.clone(),
                drafter: drafter.key.clone(),
                tp,
                gpus,
                ep: shape.ep,
                dp_attn: shape.dp_attn,
                precision: precision.to_string(),
                workload,
                workload_stated: stated.is_some(),
                concurrency: choice.concurrency,
                k,
                k_from: k.and(pin).map(|c| c.pin.location.clone()),
                best_k: choice.best_k,
                top_k: choice.top_k,
                band: choice.band.clone(),
                in_band: swept.map(|k| choice.band.contains(&k)),
                speedup: choice.speedup,
                k_speedup: swept.and_then(|k| sweep.prediction(choice.concurrency, k)).map(|p| p.speedup),
                acceptance: acceptance.description.clone(),
            }
        })
        .collect();
    Ok(Predicted { entry: entry.name.clone(), rows, sweep, notes })
}

/// The drafter profile of a point: its pin's drafter, else its curve's, else the one drafter of the point's
/// method — as `alsim predict` finds the drafter of its curve. A name given as a path or under another
/// organisation (`/models/Kimi-K3-DSpark`, `Org/MiniMax-M3-EAGLE3-GQA`) is matched on its last component.
fn drafter_of<'p>(
    profiles: &'p Profiles,
    model: &ModelProfile,
    pin: Option<&CheckedPin>,
    resolved: &Resolved,
    method: Option<&str>,
) -> Result<&'p DrafterProfile> {
    let last = |name: &str| fold(name.trim_end_matches('/').rsplit('/').next().unwrap_or(name));
    let named = [pin.and_then(|c| c.pin.drafter.value.as_deref()), resolved.file.provenance.drafter.as_deref()];
    for name in named.into_iter().flatten() {
        if let Ok(found) = profiles.drafter(model, Some(name), None) {
            return Ok(found);
        }
        let wanted = last(name);
        let mut same = profiles
            .drafters
            .iter()
            .filter(|d| d.target == model.key && std::iter::once(&d.key).chain(&d.aliases).any(|n| last(n) == wanted));
        if let (Some(found), None) = (same.next(), same.next()) {
            return Ok(found);
        }
    }
    profiles.drafter(model, None, method)
}

/// The golden curve of a point: the one the check judged its pin on (the repository's or alsim's embedded
/// one), else the one the model, the served thinking default and the drafter select: the entry's model
/// matched to a golden key by the check's own rule ([`model_key`]), so a model the golden curves hold no
/// curve of has none (DeepSeek-R1 beside DeepSeek-V4's), never its family's; the default decided in the
/// check's served-mode context (the renderer a recipe states, the version a prose line dates).
fn curve_of<'c>(
    entry: &Entry,
    point: &Point,
    pin: Option<&CheckedPin>,
    curves: &'c CurveSet,
    served: &Context<'_>,
) -> std::result::Result<Resolved<'c>, String> {
    if let Some(golden) = pin.and_then(|c| c.golden.as_ref()) {
        return golden_curve(golden, curves)
            .ok_or_else(|| format!("its pin's golden curve {} in {} is gone", golden.key, golden.file));
    }
    let name = entry.model.as_deref().unwrap_or_default();
    let key = model_key(curves, name).ok_or_else(|| format!("no golden curve for model '{name}'"))?;
    let undecided = || format!("no pin states its thinking mode, and no default alsim knows decides it for {key}");
    let (renderer, version) = served.unpinned(entry, point).ok_or_else(undecided)?;
    let row = match thinking::decide(&key, renderer, &version) {
        thinking::Decision::Decided(row) => row,
        // A default that changed between versions, at a version the image does not place: say which, so the
        // user knows what to state (the mode in a pin, or the image's release or build date).
        thinking::Decision::Open(rows) => {
            return Err(format!(
                "no pin states the thinking mode of {key}, and {} while the version run is not placed ({})",
                thinking::open_default(&renderer.to_string(), &rows),
                version.text
            ));
        }
        thinking::Decision::Unknown => return Err(undecided()),
    };
    let mode = row.mode;
    let drafter = pin.and_then(|c| c.pin.drafter.value.clone());
    let query = CurveQuery { model: key, drafter, mode: Some(mode), ..CurveQuery::default() };
    curves.lookup(&query).map_err(|e| e.to_string())
}
