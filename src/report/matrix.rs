//! Tables for [`MatrixReport`] (`alsim sweep`): the best k per entry and concurrency with its band and
//! whether the entry's k lies in it, the entries and points not predicted, and a summary; the terminal's
//! one-screen answer (rows by verdict and the entries furthest from their best k, where the table held
//! 15,837 lines on the InferenceX snapshot); and the pull-request comment, which keeps to what needs a
//! reader (a comment holds 65,536 characters, the snapshot's full table three times that).

use std::fmt::Write as _;

use super::perf::speedup;
use super::{Cell, Report, Table, fixed, md_cell, one_line};
use crate::matrix::{HardwareFrom, MatrixReport, Row, Skip};
use crate::perf::cost::Workload;

fn ks(list: &[usize]) -> String {
    list.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

fn hardware_from(from: HardwareFrom) -> &'static str {
    match from {
        HardwareFrom::Measured => "measured",
        HardwareFrom::Datasheet => "datasheet",
    }
}

fn or_dash<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn why(skip: &Skip) -> String {
    match skip {
        Skip::Unmapped { what, name } => format!("unmapped {} '{name}'", what.name()),
        Skip::NotPredicted { why } => why.clone(),
    }
}

fn shape(workload: &Workload, stated: bool) -> String {
    match workload {
        Workload::Turns { isl, osl, .. } if stated => format!("{isl}/{osl}"),
        Workload::Turns { isl, osl, .. } => format!("({isl}/{osl})"),
        Workload::Decode { context } => format!("ctx {context}"),
    }
}

impl Report for MatrixReport {
    fn tables(&self) -> Vec<Table> {
        let mut rows = Table::new(
            format!(
                "Best k per entry and concurrency (band: k within {}% of the top throughput)",
                fixed(self.model_error * 100.0, 0)
            ),
            &[
                "entry",
                "at",
                "hardware",
                "hw from",
                "model",
                "tp",
                "ep",
                "isl/osl",
                "concurrency",
                "k run",
                "best k",
                "band",
                "k in band",
                "speedup best",
                "speedup k",
            ],
        );
        for r in &self.rows {
            rows.row(vec![
                Cell::from(r.entry.clone()),
                r.at.to_string().into(),
                r.hardware.clone().into(),
                hardware_from(r.hardware_from).into(),
                r.model.clone().into(),
                match (r.dp_attn, r.gpus == r.tp) {
                    (false, _) => r.tp.to_string().into(),
                    (true, true) => format!("{} dp-attn", r.tp).into(),
                    (true, false) => format!("{} dp-attn ({} GPUs)", r.tp, r.gpus).into(),
                },
                r.ep.map_or_else(Cell::missing, |ep| Cell::number(ep as f64, 0)),
                shape(&r.workload, r.workload_stated).into(),
                r.concurrency.to_string().into(),
                or_dash(r.k).into(),
                or_dash(r.best_k).into(),
                ks(&r.band).into(),
                match r.in_band {
                    Some(true) => "yes".into(),
                    Some(false) => "NO".into(),
                    None => "-".into(),
                },
                r.speedup.map_or_else(Cell::missing, speedup),
                r.k_speedup.map_or_else(Cell::missing, speedup),
            ]);
        }
        let mut skipped = Table::new("Not predicted", &["entry", "at", "points", "why"]);
        for s in &self.skipped {
            skipped.row(vec![s.entry.clone(), s.at.to_string(), s.points.to_string(), why(&s.skip)]);
        }
        let mut tables = vec![rows];
        if !skipped.rows.is_empty() {
            tables.push(skipped);
        }
        tables
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = vec![summary(self)];
        notes.push(format!("golden curves: {}", self.golden_source));
        notes.extend(self.notes.iter().cloned());
        notes
    }

    fn markdown(&self) -> String {
        sweep_comment(self)
    }

    #[cfg(feature = "cli")]
    fn human(&self, width: usize) -> String {
        sweep_screen(self, width)
    }
}

/// A row's verdict, as an index into [`VERDICTS`].
#[cfg(feature = "cli")]
fn verdict(r: &Row) -> usize {
    match (r.in_band, r.k) {
        (Some(true), _) => 0,
        (Some(false), _) => 1,
        (None, Some(_)) => 2,
        (None, None) => 3,
    }
}

#[cfg(feature = "cli")]
const VERDICTS: [&str; 4] = ["k in the band", "k outside the band", "k known, not swept", "k not known from a pin"];

/// Entries shown as furthest from their best k on a terminal; the rest are counted.
#[cfg(feature = "cli")]
const FURTHEST: usize = 10;

/// The sweep on one screen: the rows counted by verdict, the entries whose k gives up the most predicted
/// throughput against their best k (each at its worst concurrency, its location first, from the current
/// directory, so a terminal can open it), why points were not predicted, and the notes. `--long` and `--format json|csv|md` hold every
/// row.
#[cfg(feature = "cli")]
fn sweep_screen(report: &MatrixReport, width: usize) -> String {
    use super::layout::wrap;
    let mut table = Table::new("Rows (entry, concurrency) by verdict", &["verdict", "rows", "entries"]);
    for (i, name) in VERDICTS.iter().enumerate() {
        let rows: Vec<&Row> = report.rows.iter().filter(|r| verdict(r) == i).collect();
        // The two verdicts of a known k always show; the others only when some row has them.
        if i >= 2 && rows.is_empty() {
            continue;
        }
        let entries: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.entry.as_str()).collect();
        table.row(vec![name.to_string(), rows.len().to_string(), entries.len().to_string()]);
    }
    let mut out = table.text(width);
    out.push('\n');

    // Each (entry, location) once, at the row whose k gives up the most of the best k's speedup.
    let mut worst: Vec<(f64, &Row)> = Vec::new();
    for r in report.rows.iter().filter(|r| r.in_band == Some(false)) {
        let (Some(best), Some(at_k)) = (r.speedup, r.k_speedup) else { continue };
        let lost = 1.0 - at_k / best;
        match worst.iter_mut().find(|(_, w)| w.entry == r.entry && w.at == r.at) {
            Some(slot) if slot.0 < lost => *slot = (lost, r),
            Some(_) => {}
            None => worst.push((lost, r)),
        }
    }
    worst.sort_by(|a, b| b.0.total_cmp(&a.0));
    if !worst.is_empty() {
        let shown = worst.len().min(FURTHEST);
        let title = format!(
            "Furthest from their best k: {shown} of the {} (entry, point) pairs outside the band, by the \
             predicted throughput given up at the entry's k",
            worst.len()
        );
        out.push_str(&wrap(&title, width, "", "  "));
        for (lost, r) in &worst[..shown] {
            let at = super::layout::clickable(&report.repo, &r.at);
            out.push_str(&wrap(&format!("{at}: {}", r.entry), width, "", "    "));
            let line = format!(
                "runs k = {}, best k = {} (band {}) at concurrency {} on {} ({}): {}x against {}x, {} % given up",
                or_dash(r.k),
                or_dash(r.best_k),
                ks(&r.band),
                r.concurrency,
                r.hardware,
                r.model,
                fixed(r.k_speedup.unwrap_or(f64::NAN), 2),
                fixed(r.speedup.unwrap_or(f64::NAN), 2),
                fixed(lost * 100.0, 1)
            );
            out.push_str(&wrap(&line, width, "    ", "    "));
        }
        out.push('\n');
    }
    let reasons = not_predicted(report);
    if !report.skipped.is_empty() {
        let entries: std::collections::BTreeSet<&str> = report.skipped.iter().map(|s| s.entry.as_str()).collect();
        let points: usize = report.skipped.iter().map(|s| s.points).sum();
        let unmapped: std::collections::BTreeSet<&str> = report
            .skipped
            .iter()
            .filter(|s| matches!(s.skip, Skip::Unmapped { .. }))
            .map(|s| s.entry.as_str())
            .collect();
        let mut title = format!("Not predicted: {points} points of {} entries", entries.len());
        if !unmapped.is_empty() {
            let _ = write!(title, " ({} with a name the map lacks: the first note names them)", unmapped.len());
        }
        out.push_str(&wrap(&title, width, "", "  "));
        for (why, points, entries) in reasons {
            let line = format!(
                "{points} {} of {} {}: {why}",
                if points == 1 { "point" } else { "points" },
                entries.len(),
                if entries.len() == 1 { "entry" } else { "entries" }
            );
            out.push_str(&wrap(&line, width, "  ", "    "));
        }
        out.push('\n');
    }
    for note in report.notes() {
        out.push_str(&wrap(&note, width, "note: ", "      "));
    }
    out.push_str(&wrap("Every row: --long, or --format json|csv|md.", width, "", "  "));
    out
}

/// Why points were not predicted, with the points and the entries each reason covers, in the order first
/// met.
fn not_predicted(report: &MatrixReport) -> Vec<(String, usize, Vec<&str>)> {
    let mut reasons: Vec<(String, usize, Vec<&str>)> = Vec::new();
    for s in report.skipped.iter().filter(|s| matches!(s.skip, Skip::NotPredicted { .. })) {
        let why = why(&s.skip);
        match reasons.iter_mut().find(|(w, ..)| *w == why) {
            Some((_, points, entries)) => {
                *points += s.points;
                entries.push(&s.entry);
            }
            None => reasons.push((why, s.points, vec![&s.entry])),
        }
    }
    reasons
}

/// Each run of rows outside the band (an entry's consecutive concurrencies at one point, k and band) as
/// one result at the point's line: a warning, or with `--strict` an error.
impl super::ci::Checked for MatrixReport {
    fn command(&self) -> &'static str {
        "alsim sweep"
    }

    fn results(&self) -> Vec<super::findings::CheckResult> {
        let severity = match self.status {
            crate::pins::Status::Fail => crate::diagnostic::Severity::Error,
            _ => crate::diagnostic::Severity::Warning,
        };
        let outside: Vec<&Row> = self.rows.iter().filter(|r| r.in_band == Some(false)).collect();
        outside
            .chunk_by(|a, b| a.entry == b.entry && a.at == b.at && a.k == b.k && a.band == b.band)
            .map(|group| {
                let r = group[0];
                let concurrency: Vec<String> = group.iter().map(|r| r.concurrency.to_string()).collect();
                let message = format!(
                    "{}: k = {} at concurrency {} lies outside the band {} ({} on {}; speedup at k {}, at the best k {})",
                    r.entry,
                    or_dash(r.k),
                    concurrency.join(", "),
                    ks(&r.band),
                    r.model,
                    r.hardware,
                    span(group.iter().filter_map(|r| r.k_speedup)),
                    span(group.iter().filter_map(|r| r.speedup)),
                );
                super::findings::CheckResult::new("band", severity, Some(r.at.clone()), message)
            })
            .collect()
    }

    fn summary(&self) -> String {
        format!("alsim sweep: {}", summary(self))
    }
}

/// The one-line account of a sweep: entries, coverage, unmapped names, rows and verdicts.
fn summary(report: &MatrixReport) -> String {
    let unmapped: Vec<String> = report.unmapped().iter().map(|u| format!("{} '{}'", u.what.name(), u.name)).collect();
    let known = report.rows.iter().filter(|r| r.in_band.is_some()).count();
    format!(
        "{} entries, {} with speculative decoding, {} covered, {} unmapped name(s){}; {} (entry, concurrency) rows, \
         {} with the entry's k known from a pin, {} outside the band",
        report.entries,
        report.speculative,
        report.covered,
        unmapped.len(),
        if unmapped.is_empty() { String::new() } else { format!(": {}", unmapped.join(", ")) },
        report.rows.len(),
        known,
        report.outside(),
    )
}

/// `low–high` of values shown with two decimals, or one value when they agree.
fn span(values: impl Iterator<Item = f64>) -> String {
    let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(v), h.max(v)));
    if low > high {
        return "-".into();
    }
    let (low, high) = (fixed(low, 2), fixed(high, 2));
    if low == high { low } else { format!("{low}–{high}") }
}

/// The sweep as a pull-request comment (`--format md`): the summary, the rows whose k lies outside the band
/// (a point's consecutive concurrencies with the same band as one row), the unmapped names, and the reasons
/// points were not predicted with how many share each. `--format json|csv` and the table hold every row.
fn sweep_comment(report: &MatrixReport) -> String {
    let mut out = format!("**alsim sweep**: {}\n\n", one_line(&summary(report)));
    let outside: Vec<&Row> = report.rows.iter().filter(|r| r.in_band == Some(false)).collect();
    let title = match report.status {
        crate::pins::Status::Fail => "k outside the band",
        _ => "k outside the band (a warning; --strict fails on it)",
    };
    let mut table = Table::new(
        title,
        &[
            "entry",
            "at",
            "hardware",
            "hw from",
            "model",
            "GPUs",
            "isl/osl",
            "k run",
            "concurrency",
            "band",
            "speedup k",
            "speedup best",
        ],
    );
    for group in outside.chunk_by(|a, b| a.entry == b.entry && a.at == b.at && a.k == b.k && a.band == b.band) {
        let r = group[0];
        let concurrency: Vec<String> = group.iter().map(|r| r.concurrency.to_string()).collect();
        table.row(vec![
            r.entry.clone(),
            r.at.to_string(),
            r.hardware.clone(),
            hardware_from(r.hardware_from).into(),
            r.model.clone(),
            r.gpus.to_string(),
            shape(&r.workload, r.workload_stated),
            or_dash(r.k),
            concurrency.join(", "),
            ks(&r.band),
            span(group.iter().filter_map(|r| r.k_speedup)),
            span(group.iter().filter_map(|r| r.speedup)),
        ]);
    }
    if table.rows.is_empty() {
        out.push_str("Every known k lies in its band.\n\n");
    } else {
        out.push_str(&table.markdown());
        out.push('\n');
    }
    let unmapped = report.unmapped();
    if !unmapped.is_empty() {
        out.push_str("### Unmapped names\n\n");
        for u in &unmapped {
            let entries = report
                .skipped
                .iter()
                .filter(|s| matches!(&s.skip, Skip::Unmapped { what, name } if *what == u.what && name == u.name));
            let n = entries.count();
            let _ = writeln!(
                out,
                "- {} `{}`: {n} {}",
                u.what.name(),
                md_cell(u.name),
                if n == 1 { "entry" } else { "entries" }
            );
        }
        out.push('\n');
    }
    let reasons = not_predicted(report);
    if !reasons.is_empty() {
        let mut table = Table::new("Not predicted", &["why", "points", "entries"]);
        for (why, points, entries) in reasons {
            let more = if entries.len() > 1 { format!(" and {} more", entries.len() - 1) } else { String::new() };
            table.row(vec![why, points.to_string(), format!("{}{more}", entries[0])]);
        }
        out.push_str(&table.markdown());
        out.push('\n');
    }
    let _ = writeln!(out, "- golden curves: {}", one_line(&report.golden_source));
    for note in &report.notes {
        let _ = writeln!(out, "- {}", one_line(note));
    }
    out
}
