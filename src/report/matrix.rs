//! Tables for [`MatrixReport`] (`alsim sweep`): the best k per entry and concurrency with its band and
//! whether the entry's k lies in it, the entries and points not predicted, and a summary; and the
//! pull-request comment, which keeps to what needs a reader (a comment holds 65,536 characters, the
//! snapshot's full table three times that).

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
}

/// Each run of rows outside the band (an entry's consecutive concurrencies at one point, k and band) as
/// one result at the point's line: a warning, or with `--strict` an error.
impl super::findings::Checked for MatrixReport {
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
