//! Tables for the choice score ([`ChoiceScore`] inside a calibration, [`ChoiceKit`] over a kit's files): the
//! figures pooled and per AL source, and the grid of measured best k against alsim's per cell.

use crate::perf::calibrate::choice_score::{ChoiceCell, ChoiceKit, ChoiceScore, ChoiceSummary};
use crate::report::{Report, Table, fixed};

fn pct(v: f64) -> String {
    format!("{} %", fixed(v * 100.0, 1))
}

/// `right/cells`, median and largest regret, on/off wrong, in one cell of text.
fn figures(s: &ChoiceSummary) -> [String; 4] {
    [format!("{} of {}", s.right, s.cells), pct(s.regret_median), pct(s.regret_max), s.on_off_wrong.to_string()]
}

const FIGURES: [&str; 4] = ["right (regret < 1 %)", "median regret", "largest regret", "on/off wrong"];

/// Per AL source: its figures (and, for a kit file, held out beside in sample).
fn sources_table(title: String, score: &ChoiceScore) -> Table {
    let mut headers = vec!["AL source"];
    headers.extend(FIGURES);
    let mut t = Table::new(title, &headers);
    for s in &score.sources {
        let mut row = vec![s.acceptance.clone()];
        row.extend(figures(&s.summary));
        t.row(row);
    }
    let mut row = vec!["pooled".to_string()];
    row.extend(figures(&score.summary));
    t.row(row);
    t
}

/// Cells of one AL source by context (rows) and concurrency (columns), each `measured best k / alsim's k …`
/// with alsim's k from each of `scores` in turn, marked where the regret is 1 % or more (✗) or on/off is
/// wrong (!).
fn grid(title: String, scores: &[&[ChoiceCell]], acceptance: &str) -> Table {
    let of = |cells: &'_ [ChoiceCell]| -> Vec<ChoiceCell> {
        cells.iter().filter(|c| c.acceptance == acceptance).cloned().collect()
    };
    let first = of(scores[0]);
    let mut concurrencies: Vec<usize> = first.iter().map(|c| c.concurrency).collect();
    concurrencies.sort_unstable();
    concurrencies.dedup();
    let mut contexts: Vec<f64> = first.iter().map(|c| c.context).collect();
    contexts.sort_by(f64::total_cmp);
    contexts.dedup();
    let names: Vec<String> = concurrencies.iter().map(|b| format!("B={b}")).collect();
    let mut headers = vec!["context"];
    headers.extend(names.iter().map(String::as_str));
    let mut t = Table::new(title, &headers);
    let all: Vec<Vec<ChoiceCell>> = scores.iter().map(|s| of(s)).collect();
    for context in contexts {
        let mut row = vec![fixed(context, 0)];
        for &b in &concurrencies {
            let at: Vec<Option<&ChoiceCell>> =
                all.iter().map(|cells| cells.iter().find(|c| c.concurrency == b && c.context == context)).collect();
            let Some(base) = at[0] else {
                row.push("-".into());
                continue;
            };
            let mut text = base.measured_best_k.to_string();
            for cell in at.iter().flatten() {
                let mark = if cell.on_off_wrong {
                    "!"
                } else if cell.right {
                    ""
                } else {
                    "✗"
                };
                text.push_str(&format!(" / {}{mark}", cell.alsim_k));
            }
            row.push(text);
        }
        t.row(row);
    }
    t
}

/// The grid and per-source figures of a choice scored in one calibration.
pub(super) fn calibration_tables(score: &ChoiceScore) -> Vec<Table> {
    let mut tables = vec![sources_table("Choice of k (fit on k = 0), per AL source".into(), score)];
    for s in &score.sources {
        tables.push(grid(
            format!("Choice grid under {}: measured best k / alsim's k (✗ regret ≥ 1 %, ! on/off wrong)", s.acceptance),
            &[&score.cells],
            &s.acceptance,
        ));
    }
    tables
}

impl Report for ChoiceKit {
    fn tables(&self) -> Vec<Table> {
        let mut headers = vec!["fit"];
        headers.extend(FIGURES);
        let mut summary =
            Table::new(format!("Choice of k over {}: {} files", self.origin, self.summary.files), &headers);
        for (name, s) in [
            ("held out (fit on the other files' k = 0 rows)", &self.summary.choice),
            ("in sample (fit on the file's own k = 0 rows)", &self.summary.choice_in_sample),
        ] {
            let mut row = vec![name.to_string()];
            row.extend(figures(s));
            summary.row(row);
        }
        let mut tables = vec![summary];
        headers = vec!["file", "AL source"];
        let held: Vec<String> = FIGURES.iter().map(|f| format!("{f}, held out")).collect();
        let own: Vec<String> = FIGURES.iter().map(|f| format!("{f}, in sample")).collect();
        headers.extend(held.iter().map(String::as_str));
        headers.extend(own.iter().map(String::as_str));
        let mut per = Table::new("Per file and AL source", &headers);
        for f in &self.files {
            for (held, own) in f.held_out.sources.iter().zip(&f.in_sample.sources) {
                let mut row = vec![f.origin.clone(), held.acceptance.clone()];
                row.extend(figures(&held.summary));
                row.extend(figures(&own.summary));
                per.row(row);
            }
        }
        tables.push(per);
        for f in &self.files {
            for s in &f.held_out.sources {
                tables.push(grid(
                    format!(
                        "{} under {}: measured best k / alsim's k held out / in sample (✗ regret ≥ 1 %, ! on/off wrong)",
                        f.origin, s.acceptance
                    ),
                    &[&f.held_out.cells, &f.in_sample.cells],
                    &s.acceptance,
                ));
            }
        }
        tables
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}
