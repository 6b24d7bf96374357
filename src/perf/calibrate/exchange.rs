//! Measured expert-parallel exchanges — `calibration/exchange.py`'s format — and the fit of latency plus bytes
//! over the link to them, per hardware and number of GPUs.
//!
//! | column | required | meaning |
//! |---|---|---|
//! | `hardware`, `model` | yes | names (a hardware without a profile is compared with the default `moe_token_us`) |
//! | `gpus` | yes | GPUs N the MoE layer's experts are spread over (N ≥ 2) |
//! | `tokens_per_gpu` | yes | tokens each GPU dispatches |
//! | `link_bytes` | yes | bytes one GPU sends to the others in one direction (mean over GPUs; combine moves the same back) |
//! | `dispatch_ms`, `combine_ms` | yes | measured times of the two all-to-alls |
//!
//! Any other column (hidden, top_k, counts_ms, …) is ignored; `#` lines are kept as notes. A file is of this
//! kind when its header has `gpus`, `dispatch_ms` and `combine_ms`.
//!
//! Per hardware and N, the exchange of one layer (dispatch + combine) is fitted as
//! `latency + 2 · link_bytes / bandwidth` by least squares on relative error (the times span three orders of
//! magnitude), both terms ≥ 0. The bytes term is what lets one fit price every model: each model's rows are
//! also scored by the fit of the other models' rows alone (held out). Beside the fit stands what `predict`
//! charges today, `moe_token_us` per token per MoE layer: this module reports, it changes no default.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;

use serde::Serialize;

use super::{MAX_DISTINCT_ROWS, Measured, median};
use crate::error::{Error, Result};
use crate::perf::csv::{CsvRow, CsvStream, CsvTable};
use crate::perf::profile::{DEFAULT_EFFICIENCIES, Profiles};

const REQUIRED: [&str; 7] = ["hardware", "gpus", "model", "tokens_per_gpu", "link_bytes", "dispatch_ms", "combine_ms"];

/// Tokens per GPU at which the per-token cost is quoted: DeepEP's published low-latency figure (dispatch +
/// combine for 128 tokens per GPU at EP 8) is at this load, so the two compare directly.
pub const REFERENCE_TOKENS: usize = 128;

/// One measured exchange: a MoE layer's dispatch and combine across `gpus` GPUs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExchangeRow {
    /// Line in the CSV.
    pub line: usize,
    /// Hardware name as the file gives it.
    pub hardware: String,
    /// GPUs exchanging.
    pub gpus: usize,
    /// Model whose layer shape was sent.
    pub model: String,
    /// Tokens each GPU dispatched.
    pub tokens_per_gpu: usize,
    /// Bytes one GPU sends the others in one direction.
    pub link_bytes: f64,
    /// Dispatch plus combine, µs.
    pub exchange_us: f64,
}

/// Whether `table` is an exchange file.
pub(super) fn is_exchange(table: &CsvTable) -> bool {
    ["gpus", "dispatch_ms", "combine_ms"].iter().all(|c| table.has(c))
}

/// Reads the rows of an exchange file whose header [`is_exchange`]. A row repeated verbatim is a repeated
/// measurement here, kept as it is.
///
/// # Errors
/// [`Error::Parse`] naming the file, line and column for a missing column or a bad cell; no rows; more than
/// [`MAX_DISTINCT_ROWS`] rows.
pub(super) fn read<R: BufRead>(mut stream: CsvStream<R>, origin: &str) -> Result<(Measured, Vec<String>)> {
    stream.table().require(&REQUIRED)?;
    let mut rows = Vec::new();
    while let Some((line, cells)) = stream.next_row()? {
        if rows.len() == MAX_DISTINCT_ROWS {
            return Err(Error::parse(origin, Some(line), format!("more than {MAX_DISTINCT_ROWS} measured rows")));
        }
        rows.push(exchange_row(&stream.table().row(line, &cells))?);
    }
    if rows.is_empty() {
        return Err(Error::parse(origin, None, "no measured rows"));
    }
    let notes = stream.table().comments().iter().map(|c| format!("{origin}: {c}")).collect();
    Ok((Measured::Exchange(rows), notes))
}

fn exchange_row(row: &CsvRow<'_>) -> Result<ExchangeRow> {
    let gpus = row.count("gpus", true)?;
    if gpus < 2 {
        return Err(row.error("gpus", "one GPU exchanges nothing: give 2 or more"));
    }
    Ok(ExchangeRow {
        line: row.line(),
        hardware: row.str("hardware")?.to_string(),
        gpus,
        model: row.str("model")?.to_string(),
        tokens_per_gpu: row.count("tokens_per_gpu", true)?,
        link_bytes: row.non_negative("link_bytes", false)?,
        exchange_us: (row.non_negative("dispatch_ms", true)? + row.non_negative("combine_ms", true)?) * 1e3,
    })
}

/// Latency plus bytes over bandwidth.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LinkFit {
    /// Fixed time of one dispatch + combine, µs.
    pub latency_us: f64,
    /// Bytes one GPU moves over its links per second, GB/s; none where the fit puts no time on the bytes.
    pub bandwidth_gb_s: Option<f64>,
}

impl LinkFit {
    /// Fits `latency + bytes / bandwidth` to (bytes, µs) points, minimising the squared relative error, both
    /// terms ≥ 0; none without two distinct byte counts.
    pub fn fit(points: &[(f64, f64)]) -> Option<LinkFit> {
        let first = points.first()?.0;
        if points.iter().all(|p| p.0 == first) {
            return None;
        }
        // (a + b·x) / y − 1 = a·u + b·v − 1 with u = 1/y, v = x/y: linear least squares in (a, b).
        let (mut uu, mut uv, mut vv, mut su, mut sv) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for &(x, y) in points {
            let (u, v) = (1.0 / y, x / y);
            (uu, uv, vv, su, sv) = (uu + u * u, uv + u * v, vv + v * v, su + u, sv + v);
        }
        let det = uu * vv - uv * uv;
        let (mut a, mut b) = ((su * vv - sv * uv) / det, (uu * sv - uv * su) / det);
        if !(a.is_finite() && b.is_finite()) {
            return None;
        }
        if b < 0.0 {
            (a, b) = (su / uu, 0.0);
        } else if a < 0.0 {
            (a, b) = (0.0, sv / vv);
        }
        // b in µs per byte: 1/b bytes per µs = 1e-3/b GB/s.
        Some(LinkFit { latency_us: a, bandwidth_gb_s: (b > 0.0).then(|| 1e-3 / b) })
    }

    /// The modelled exchange of `bytes`, µs.
    pub fn exchange_us(&self, bytes: f64) -> f64 {
        self.latency_us + self.bandwidth_gb_s.map_or(0.0, |bw| bytes * 1e-3 / bw)
    }
}

/// The fit of one hardware at one number of GPUs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExchangeGroup {
    /// Hardware name.
    pub hardware: String,
    /// GPUs exchanging.
    pub gpus: usize,
    /// Rows fitted.
    pub rows: usize,
    /// Distinct models among them.
    pub models: usize,
    /// The fit on every row.
    pub fit: LinkFit,
    /// Median |fitted / measured − 1| over the rows (in sample).
    pub median_abs_rel_error: f64,
    /// The same with each model's rows predicted by the fit of the other models' rows (none with one model).
    pub held_out_median_abs_rel_error: Option<f64>,
    /// What `predict` charges per token per MoE layer today (the hardware profile's, else the default).
    pub moe_token_us: f64,
    /// The hardware profile's scale-up bandwidth (priced for all-reduce), GB/s, where there is a profile.
    pub profile_link_gb_s: Option<f64>,
}

/// One model's exchange cost per token at one group's fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TokenCost {
    /// Hardware name.
    pub hardware: String,
    /// GPUs exchanging.
    pub gpus: usize,
    /// Model.
    pub model: String,
    /// Bytes one token puts on the links, dispatch and combine together (its rows' total over their tokens).
    pub bytes_per_token: f64,
    /// The bytes term alone, µs per token: the cost of one more token once the latency is paid.
    pub marginal_us: f64,
    /// Fitted per-token cost at [`REFERENCE_TOKENS`] tokens per GPU, latency shared among them, µs.
    pub at_reference_us: f64,
    /// Measured per-token cost at [`REFERENCE_TOKENS`] tokens per GPU, µs, where a row has that load.
    pub measured_at_reference_us: Option<f64>,
}

/// One row measured against the fit and against today's charge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExchangePoint {
    /// Line in the CSV.
    pub line: usize,
    /// Hardware name.
    pub hardware: String,
    /// GPUs exchanging.
    pub gpus: usize,
    /// Model.
    pub model: String,
    /// Tokens each GPU dispatched.
    pub tokens_per_gpu: usize,
    /// Measured dispatch + combine, µs.
    pub measured_us: f64,
    /// The group's fit, µs.
    pub fitted_us: f64,
    /// The fit of the group's other models alone, µs (none where the group has one model).
    pub held_out_us: Option<f64>,
    /// Today's charge: tokens per GPU × `moe_token_us`, µs.
    pub charged_us: f64,
}

/// The fits of an exchange file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExchangeCalibration {
    /// Per hardware and number of GPUs.
    pub groups: Vec<ExchangeGroup>,
    /// Per group and model.
    pub costs: Vec<TokenCost>,
    /// Every row, in file order.
    pub points: Vec<ExchangePoint>,
}

impl ExchangeCalibration {
    /// Median |fitted / measured − 1| over every row the groups fitted.
    pub fn median_abs_rel_error(&self) -> Option<f64> {
        errors(self.points.iter().map(|p| (p.fitted_us, p.measured_us)))
    }

    /// The same over the rows predicted with their model held out.
    pub fn held_out_median_abs_rel_error(&self) -> Option<f64> {
        errors(self.points.iter().filter_map(|p| Some((p.held_out_us?, p.measured_us))))
    }
}

fn errors(pairs: impl Iterator<Item = (f64, f64)>) -> Option<f64> {
    let errors: Vec<f64> = pairs.map(|(model, measured)| (model / measured - 1.0).abs()).collect();
    (!errors.is_empty()).then(|| median(&errors))
}

/// Fits every (hardware, GPUs) group of `rows` and prices each model's tokens; `notes` gets what could not be
/// fitted or compared.
pub(super) fn calibrate(profiles: &Profiles, rows: &[ExchangeRow], notes: &mut Vec<String>) -> ExchangeCalibration {
    let mut by_group: BTreeMap<(&str, usize), Vec<&ExchangeRow>> = BTreeMap::new();
    for r in rows {
        by_group.entry((r.hardware.as_str(), r.gpus)).or_default().push(r);
    }
    let mut cal = ExchangeCalibration { groups: Vec::new(), costs: Vec::new(), points: Vec::new() };
    let mut unprofiled = BTreeSet::new();
    for ((hardware, gpus), group) in by_group {
        let profile = profiles.hardware(hardware).ok();
        if profile.is_none() && unprofiled.insert(hardware) {
            notes.push(format!(
                "hardware '{hardware}' has no profile: its exchange is compared with the default moe_token_us"
            ));
        }
        let moe_token_us = profile.map_or(DEFAULT_EFFICIENCIES.moe_token_us, |p| p.efficiency.moe_token_us);
        let points = |keep: &dyn Fn(&ExchangeRow) -> bool| -> Vec<(f64, f64)> {
            group.iter().filter(|r| keep(r)).map(|r| (2.0 * r.link_bytes, r.exchange_us)).collect()
        };
        let Some(fit) = LinkFit::fit(&points(&|_| true)) else {
            notes.push(format!(
                "{hardware} x{gpus}: every row moves the same bytes, so latency and bandwidth cannot be told apart: not fitted"
            ));
            continue;
        };
        let mut models: Vec<&str> = group.iter().map(|r| r.model.as_str()).collect();
        models.sort_unstable();
        models.dedup();
        let held_out: BTreeMap<&str, LinkFit> = if models.len() > 1 {
            models.iter().filter_map(|&m| Some((m, LinkFit::fit(&points(&|r| r.model != m))?))).collect()
        } else {
            BTreeMap::new()
        };
        for r in &group {
            cal.points.push(ExchangePoint {
                line: r.line,
                hardware: hardware.to_string(),
                gpus,
                model: r.model.clone(),
                tokens_per_gpu: r.tokens_per_gpu,
                measured_us: r.exchange_us,
                fitted_us: fit.exchange_us(2.0 * r.link_bytes),
                held_out_us: held_out.get(r.model.as_str()).map(|f| f.exchange_us(2.0 * r.link_bytes)),
                charged_us: r.tokens_per_gpu as f64 * moe_token_us,
            });
        }
        for &model in &models {
            let own: Vec<&&ExchangeRow> = group.iter().filter(|r| r.model == model).collect();
            let tokens: usize = own.iter().map(|r| r.tokens_per_gpu).sum();
            let bytes_per_token = own.iter().map(|r| 2.0 * r.link_bytes).sum::<f64>() / tokens as f64;
            let marginal_us = fit.exchange_us(bytes_per_token) - fit.latency_us;
            let at_reference = own.iter().filter(|r| r.tokens_per_gpu == REFERENCE_TOKENS).map(|r| r.exchange_us);
            let measured: Vec<f64> = at_reference.map(|us| us / REFERENCE_TOKENS as f64).collect();
            cal.costs.push(TokenCost {
                hardware: hardware.to_string(),
                gpus,
                model: model.to_string(),
                bytes_per_token,
                marginal_us,
                at_reference_us: fit.latency_us / REFERENCE_TOKENS as f64 + marginal_us,
                measured_at_reference_us: (!measured.is_empty()).then(|| median(&measured)),
            });
        }
        let group_errors = |model: &dyn Fn(&ExchangePoint) -> Option<f64>| {
            errors(cal.points.iter().filter(|p| p.hardware == hardware && p.gpus == gpus).filter_map(|p| {
                let m = model(p)?;
                Some((m, p.measured_us))
            }))
        };
        cal.groups.push(ExchangeGroup {
            hardware: hardware.to_string(),
            gpus,
            rows: group.len(),
            models: models.len(),
            median_abs_rel_error: group_errors(&|p| Some(p.fitted_us)).unwrap_or(0.0),
            held_out_median_abs_rel_error: group_errors(&|p| p.held_out_us),
            fit,
            moe_token_us,
            profile_link_gb_s: profile.map(|p| p.link_gb_s),
        });
    }
    cal.points.sort_by_key(|p| p.line);
    cal
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> Result<(Measured, Vec<String>)> {
        super::super::read(text.as_bytes(), "x.csv", None)
    }

    fn rows(text: &str) -> Vec<ExchangeRow> {
        match file(text).unwrap().0 {
            Measured::Exchange(rows) => rows,
            other => panic!("read as {other:?}"),
        }
    }

    const HEADER: &str = "hardware,gpus,model,tokens_per_gpu,link_bytes,dispatch_ms,combine_ms\n";

    /// A file of exchanges that take exactly `latency_us + 2·bytes / bandwidth` (half each way).
    fn synthetic(latency_us: f64, gb_s: f64, models: &[(&str, f64)], tokens: &[usize]) -> String {
        let mut text = format!("# synthetic: latency {latency_us} us, {gb_s} GB/s\n{HEADER}");
        for (model, bytes_per_token) in models {
            for &t in tokens {
                let bytes = bytes_per_token * t as f64;
                let half_ms = (latency_us + 2.0 * bytes * 1e-3 / gb_s) / 2.0 * 1e-3;
                text.push_str(&format!("h100,8,{model},{t},{bytes},{half_ms},{half_ms}\n"));
            }
        }
        text
    }

    #[test]
    fn a_fit_recovers_the_latency_and_bandwidth_a_file_was_made_with() {
        let fit = LinkFit::fit(&[(0.0, 30.0), (1e6, 30.0 + 1e6 * 1e-3 / 200.0), (4e6, 30.0 + 4e6 * 1e-3 / 200.0)]);
        let fit = fit.unwrap();
        assert!((fit.latency_us - 30.0).abs() < 1e-9, "{fit:?}");
        assert!((fit.bandwidth_gb_s.unwrap() - 200.0).abs() < 1e-9, "{fit:?}");
    }

    #[test]
    fn a_fit_keeps_both_terms_non_negative() {
        // Times falling with bytes: no bandwidth can explain it, so all of it is latency.
        let fit = LinkFit::fit(&[(1e3, 40.0), (1e6, 20.0)]).unwrap();
        assert_eq!(fit.bandwidth_gb_s, None);
        assert!(fit.latency_us > 20.0 && fit.latency_us < 40.0, "{fit:?}");
        // Times in proportion to bytes: no latency.
        let fit = LinkFit::fit(&[(1e3, 1.0), (1e6, 1000.0)]).unwrap();
        assert_eq!(fit.latency_us, 0.0);
        assert!((fit.bandwidth_gb_s.unwrap() - 1.0).abs() < 1e-9);
        assert_eq!(LinkFit::fit(&[(5.0, 1.0), (5.0, 2.0)]), None);
    }

    #[test]
    fn a_synthetic_file_is_fitted_and_priced_per_token() {
        let text = synthetic(45.0, 150.0, &[("dsr1", 8.0 * 7168.0), ("minimax-m3", 4.0 * 6144.0)], &[1, 8, 128, 512]);
        let rows = rows(&text);
        assert_eq!((rows.len(), rows[0].gpus, rows[0].line), (8, 8, 3));
        let mut notes = Vec::new();
        let cal = calibrate(&Profiles::embedded(), &rows, &mut notes);
        assert!(notes.is_empty(), "{notes:?}");
        let g = &cal.groups[0];
        assert!((g.fit.latency_us - 45.0).abs() < 1e-6, "{g:?}");
        assert!((g.fit.bandwidth_gb_s.unwrap() - 150.0).abs() < 1e-6, "{g:?}");
        assert!(g.median_abs_rel_error < 1e-9 && g.held_out_median_abs_rel_error.unwrap() < 1e-9, "{g:?}");
        assert_eq!(g.moe_token_us, Profiles::embedded().hardware("h100").unwrap().efficiency.moe_token_us);
        let dsr1 = cal.costs.iter().find(|c| c.model == "dsr1").unwrap();
        // 2 x 8 x 7168 bytes per token at 150 GB/s, plus 45 us shared by 128 tokens.
        let marginal = 2.0 * 8.0 * 7168.0 * 1e-3 / 150.0;
        assert!((dsr1.marginal_us - marginal).abs() < 1e-9, "{dsr1:?}");
        assert!((dsr1.at_reference_us - (marginal + 45.0 / 128.0)).abs() < 1e-9, "{dsr1:?}");
        assert!((dsr1.measured_at_reference_us.unwrap() - dsr1.at_reference_us).abs() < 1e-9);
        let p = &cal.points[0];
        assert_eq!((p.tokens_per_gpu, p.charged_us), (1, g.moe_token_us));
    }

    #[test]
    fn held_out_models_are_predicted_by_the_others_fit_alone() {
        // Two models on one link, the third slower: its held-out error is what the others' fit says of it.
        let mut text = synthetic(20.0, 100.0, &[("a", 1e4), ("b", 5e4)], &[1, 16, 256]);
        for t in [1usize, 16, 256] {
            let bytes = 3e4 * t as f64;
            let half_ms = 2.0 * (20.0 + 2.0 * bytes * 1e-3 / 100.0) / 2.0 * 1e-3;
            text.push_str(&format!("h100,8,c,{t},{bytes},{half_ms},{half_ms}\n"));
        }
        let cal = calibrate(&Profiles::embedded(), &rows(&text), &mut Vec::new());
        let c: Vec<&ExchangePoint> = cal.points.iter().filter(|p| p.model == "c").collect();
        for p in c {
            // Fitted on a and b alone, c is predicted at half its measured time.
            assert!((p.held_out_us.unwrap() / p.measured_us - 0.5).abs() < 1e-9, "{p:?}");
        }
    }

    #[test]
    fn one_model_has_no_held_out_score_and_one_load_no_fit() {
        let cal =
            calibrate(&Profiles::embedded(), &rows(&synthetic(20.0, 100.0, &[("a", 1e4)], &[1, 4])), &mut Vec::new());
        assert_eq!(cal.groups[0].held_out_median_abs_rel_error, None);
        let mut notes = Vec::new();
        let cal = calibrate(&Profiles::embedded(), &rows(&synthetic(20.0, 100.0, &[("a", 1e4)], &[4, 4])), &mut notes);
        assert!(cal.groups.is_empty() && notes[0].contains("cannot be told apart"), "{notes:?}");
    }

    #[test]
    fn an_unprofiled_hardware_is_compared_with_the_default_charge() {
        let text = synthetic(20.0, 100.0, &[("a", 1e4)], &[1, 4]).replace("h100,", "cpu,");
        let mut notes = Vec::new();
        let cal = calibrate(&Profiles::embedded(), &rows(&text), &mut notes);
        assert_eq!(cal.groups[0].moe_token_us, DEFAULT_EFFICIENCIES.moe_token_us);
        assert_eq!(cal.groups[0].profile_link_gb_s, None);
        assert!(notes[0].contains("'cpu' has no profile"), "{notes:?}");
    }

    #[test]
    fn bad_cells_name_their_line_and_column() {
        for (row, column) in [
            ("h100,1,a,4,100,0.1,0.1", "gpus"),
            ("h100,8,a,0,100,0.1,0.1", "tokens_per_gpu"),
            ("h100,8,a,4,-1,0.1,0.1", "link_bytes"),
            ("h100,8,a,4,100,0,0.1", "dispatch_ms"),
            ("h100,8,a,4,100,0.1,x", "combine_ms"),
        ] {
            let e = file(&format!("{HEADER}{row}\n")).unwrap_err().to_string();
            assert!(e.contains("x.csv") && e.contains(":2") && e.contains(column), "{e}");
        }
        let e = file("hardware,gpus,model,dispatch_ms,combine_ms\nh100,8,a,0.1,0.1\n").unwrap_err().to_string();
        assert!(e.contains("missing column(s) tokens_per_gpu, link_bytes"), "{e}");
        assert!(file(HEADER).unwrap_err().to_string().contains("no measured rows"));
    }
}
