//! Output formats, kept apart from the computations: every command builds a serialisable report and
//! hands it here to be rendered as a human table, Markdown, CSV or JSON (with a `schema_version`).
//!
//! A report is one or more [`Table`]s plus notes; JSON is the report's own serde form, so machine
//! output never changes units under the user.
//!
//! Text that came from input (file names, labels, values read from files) is escaped here, in one place,
//! for every human format: [`one_line`] keeps it on its own line, so a hostile file name cannot start a
//! line such as `::error …`, which a CI log would obey as a workflow command; Markdown cells also escape
//! `|`, CSV quotes per RFC 4180, and GitHub workflow commands use GitHub's own `%XX` escapes.

mod accept;
#[cfg(feature = "cli")]
mod chart;
#[cfg(feature = "pins")]
pub mod ci;
pub mod curve;
pub mod evidence;
#[cfg(feature = "pins")]
pub mod explain;
#[cfg(feature = "pins")]
pub mod findings;
#[cfg(feature = "cli")]
pub mod layout;
#[cfg(feature = "pins")]
mod matrix;
mod measured;
mod perf;
#[cfg(feature = "pins")]
pub mod pins;
#[cfg(feature = "pins")]
mod rdjson;
#[cfg(feature = "cli")]
mod request_chart;
#[cfg(feature = "pins")]
mod sarif;
mod sim;

#[cfg(feature = "cli")]
pub use chart::{png, png_ready};
#[cfg(feature = "cli")]
pub use perf::{plot_svg, plot_sweeps_svg};
pub use perf::{residuals_csv, why};
#[cfg(feature = "cli")]
pub use request_chart::{PlotMetric, plot_requests};

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::Serialize;

/// Version of the JSON output's layout; bumped when a field is renamed or removed.
pub const SCHEMA_VERSION: &str = "3";

/// How to print a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Format {
    /// Aligned tables for a terminal.
    Table,
    /// JSON, one document.
    Json,
    /// Comma-separated values: the main table (an export writes each other beside it).
    Csv,
    /// GitHub-flavoured Markdown.
    #[cfg_attr(feature = "cli", value(alias = "markdown"))]
    Md,
}

/// A titled grid of cells.
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// Shown above the table (a heading in Markdown); CSV, one table a file, names the file after it.
    pub title: String,
    /// Column headers.
    pub headers: Vec<String>,
    /// Rows of cells, each as long as `headers`.
    pub rows: Vec<Vec<Cell>>,
}

/// One cell: the text a person reads, and for a quantity the number a spreadsheet gets (every digit, its
/// unit moved to the column's CSV header).
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    shown: String,
    value: Option<f64>,
    unit: Option<&'static str>,
    /// An interval's bounds around `value`: CSV gives them columns of their own (`… low`, `… high`).
    bounds: Option<(f64, f64)>,
}

impl Cell {
    /// A number shown with `digits` decimals.
    pub fn number(value: f64, digits: usize) -> Cell {
        Cell { shown: fixed(value, digits), value: Some(value), unit: None, bounds: None }
    }

    /// A quantity shown as `shown` (e.g. `2.43x`, `+1.7%`, `0.120 ms`), `value` in `unit` for CSV.
    pub fn quantity(value: f64, shown: String, unit: &'static str) -> Cell {
        Cell { shown, value: Some(value), unit: Some(unit), bounds: None }
    }

    /// An estimate and its interval, shown `2.830 [2.826, 2.834]` with `digits` decimals.
    pub fn estimate(estimate: &crate::stats::Estimate, digits: usize) -> Cell {
        let (low, high) = (estimate.confidence_interval.lower_bound, estimate.confidence_interval.upper_bound);
        Cell::interval(estimate.point_estimate, low, high, estimate_text(estimate, digits), None)
    }

    /// A value with its interval, shown as `shown`, in `unit` when it has one.
    pub fn interval(value: f64, low: f64, high: f64, shown: String, unit: Option<&'static str>) -> Cell {
        Cell { shown, value: Some(value), unit, bounds: Some((low, high)) }
    }

    /// No value: `-` for a person, an empty field in CSV.
    pub fn missing() -> Cell {
        Cell { shown: "-".into(), value: Some(f64::NAN), unit: None, bounds: None }
    }

    /// The cell's CSV fields: one, or three (value, low, high) in a column that holds intervals.
    fn csv(&self, with_bounds: bool) -> Vec<Cow<'_, str>> {
        let number = |v: f64| if v.is_nan() { Cow::from("") } else { Cow::from(v.to_string()) };
        let mut fields = vec![match self.value {
            Some(v) => number(v),
            None => csv_cell(&self.shown).into(),
        }];
        if with_bounds {
            let (low, high) = self.bounds.unwrap_or((f64::NAN, f64::NAN));
            fields.extend([number(low), number(high)]);
        }
        fields
    }
}

impl From<String> for Cell {
    fn from(shown: String) -> Cell {
        Cell { shown, value: None, unit: None, bounds: None }
    }
}

impl From<&str> for Cell {
    fn from(shown: &str) -> Cell {
        Cell::from(shown.to_string())
    }
}

impl Table {
    /// An empty table with a title and headers.
    pub fn new(title: impl Into<String>, headers: &[&str]) -> Table {
        Table { title: title.into(), headers: headers.iter().map(|h| h.to_string()).collect(), rows: Vec::new() }
    }

    /// Appends a row.
    pub fn row<C: Into<Cell>>(&mut self, cells: Vec<C>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    fn shown(&self) -> Vec<Vec<String>> {
        self.rows.iter().map(|row| row.iter().map(|c| c.shown.clone()).collect()).collect()
    }

    /// The table for a terminal `width` columns wide (see [`layout::grid`]).
    #[cfg(feature = "cli")]
    pub(crate) fn text(&self, width: usize) -> String {
        format!("{}{}", layout::wrap(&self.title, width, "", "  "), layout::grid(&self.headers, &self.shown(), width))
    }

    fn markdown(&self) -> String {
        let cells = |line: &[String]| line.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | ");
        let mut out = format!(
            "### {}\n\n| {} |\n|{}\n",
            one_line(&self.title),
            cells(&self.headers),
            "---|".repeat(self.headers.len())
        );
        for row in self.shown() {
            let _ = writeln!(out, "| {} |", cells(&row));
        }
        out
    }

    /// The table's short name, from its title's first words up to a parenthesis, a colon, a number or a
    /// name in capitals (`Best k per concurrency (…)` is `best-k-concurrency`, `Findings: 3 errors, …` and
    /// `Findings against HEAD~1` are `findings-…` without what changes from run to run): the file a CSV
    /// export writes it to beside the main table's is named after it.
    pub fn name(&self) -> String {
        const SMALL: [&str; 13] = ["a", "an", "and", "the", "of", "per", "it", "for", "by", "to", "in", "at", "with"];
        let head = self.title.split(['(', ':', ';', '[']).next().unwrap_or_default();
        let words: Vec<String> = head
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .enumerate()
            .take_while(|(i, w)| {
                !w.starts_with(|c: char| c.is_ascii_digit()) && (*i == 0 || !w.chars().any(char::is_uppercase))
            })
            .map(|(_, w)| w)
            .filter(|w| !SMALL.contains(&w.to_lowercase().as_str()))
            .take(3)
            .map(str::to_lowercase)
            .collect();
        if words.is_empty() { "table".into() } else { words.join("-") }
    }

    /// The table as CSV: the header line (a quantity's unit after its column's name; a column of intervals
    /// as three, `name`, `name low`, `name high`), then one line per row with numbers in full (no title).
    pub fn csv(&self) -> String {
        let column = |i: usize| self.rows.iter().filter_map(move |r| r.get(i));
        let with_bounds: Vec<bool> = (0..self.headers.len()).map(|i| column(i).any(|c| c.bounds.is_some())).collect();
        let mut headers = Vec::new();
        for (i, h) in self.headers.iter().enumerate() {
            let unit = column(i).find_map(|c| c.unit).map(|u| format!(" ({u})")).unwrap_or_default();
            headers.push(csv_cell(&format!("{h}{unit}")));
            if with_bounds[i] {
                headers.extend([csv_cell(&format!("{h} low{unit}")), csv_cell(&format!("{h} high{unit}"))]);
            }
        }
        let mut out = headers.join(",");
        out.push('\n');
        for row in &self.rows {
            let fields: Vec<Cow<'_, str>> = row.iter().zip(&with_bounds).flat_map(|(c, &b)| c.csv(b)).collect();
            let _ = writeln!(out, "{}", fields.join(","));
        }
        out
    }
}

/// `text` with every control character (C0, DEL, C1) and the Unicode line and paragraph separators written
/// as an escape — `\n`, `\r`, `\t`, else `\u{…}` — so it prints on one line whatever a file name or label
/// holds. A backslash stays as it is: text that is already escaped shows its backslashes, and ordinary text
/// (no control characters) is returned unchanged.
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.contains(crate::escape::breaks_line) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        crate::escape::push_char(&mut out, c);
    }
    Cow::Owned(out)
}

/// A Markdown table cell: [`one_line`], and `|` escaped so it cannot end the cell (GitHub splits cells on
/// `|` even inside a code span).
pub(crate) fn md_cell(text: &str) -> String {
    one_line(text).replace('|', "\\|")
}

/// A CSV field per RFC 4180, after [`one_line`]: a log shows a quoted newline as a new line all the same.
fn csv_cell(cell: &str) -> String {
    let cell = one_line(cell);
    if cell.contains([',', '"']) { format!("\"{}\"", cell.replace('"', "\"\"")) } else { cell.into_owned() }
}

/// A GitHub workflow command's message (after `::`): GitHub's own escapes for `%`, CR and LF.
#[cfg(feature = "pins")]
pub(crate) fn workflow_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A GitHub workflow command's property value (`file=`, `title=`): [`workflow_data`] and `:` and `,`.
#[cfg(feature = "pins")]
pub(crate) fn workflow_property(text: &str) -> String {
    workflow_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// Something a command can print.
pub trait Report: Serialize {
    /// The tables shown in human formats, in order.
    fn tables(&self) -> Vec<Table>;
    /// Remarks printed after the tables in human formats (JSON carries them as fields of its own).
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// The report as GitHub-flavoured Markdown: its tables, then its notes as a list. A report meant for a
    /// pull-request comment lays itself out instead.
    fn markdown(&self) -> String {
        let mut out = String::new();
        for table in self.tables() {
            out.push_str(&table.markdown());
            out.push('\n');
        }
        for note in self.notes() {
            let _ = writeln!(out, "- {}", one_line(&note));
        }
        out
    }
    /// The report for a terminal `width` columns wide: [`tables_text`]. A report of findings shows them as
    /// blocks instead.
    #[cfg(feature = "cli")]
    fn human(&self, width: usize) -> String {
        tables_text(self, width)
    }
}

/// A report's tables laid out to a terminal `width` columns wide, then its notes.
#[cfg(feature = "cli")]
pub fn tables_text<R: Report + ?Sized>(report: &R, width: usize) -> String {
    let mut out = String::new();
    for table in report.tables() {
        out.push_str(&table.text(width));
        out.push('\n');
    }
    for note in report.notes() {
        out.push_str(&layout::wrap(&note, width, "note: ", "      "));
    }
    out
}

/// Renders `report` in `format`.
pub fn render<R: Report>(report: &R, format: Format) -> String {
    match format {
        Format::Json => {
            #[derive(Serialize)]
            struct Envelope<'a, R: Serialize> {
                schema_version: &'static str,
                #[serde(flatten)]
                report: &'a R,
            }
            let mut out = serde_json::to_string_pretty(&Envelope { schema_version: SCHEMA_VERSION, report })
                .expect("reports contain only serialisable data");
            out.push('\n');
            out
        }
        // One table per file: the main one here, the others beside an export ([`csv_files`]).
        Format::Csv => report.tables().first().map(Table::csv).unwrap_or_default(),
        Format::Md => report.markdown(),
        #[cfg(feature = "cli")]
        Format::Table => report.human(layout::width()),
        // Without the terminal layout (a library built without `cli`), the tables as Markdown.
        #[cfg(not(feature = "cli"))]
        Format::Table => report.markdown(),
    }
}

/// A report's tables as CSV, one table a file: the main one (the first) with no name, then every other
/// with its [`Table::name`], made unique with `-2`, `-3`… where two titles begin alike.
pub fn csv_files<R: Report + ?Sized>(report: &R) -> Vec<(Option<String>, String)> {
    let mut taken: Vec<String> = Vec::new();
    report
        .tables()
        .iter()
        .enumerate()
        .map(|(i, table)| {
            if i == 0 {
                return (None, table.csv());
            }
            let base = table.name();
            let mut name = base.clone();
            let mut n = 1;
            while taken.contains(&name) {
                n += 1;
                name = format!("{base}-{n}");
            }
            taken.push(name.clone());
            (Some(name), table.csv())
        })
        .collect()
}

/// A number with `digits` decimals, for table cells.
pub fn fixed(value: f64, digits: usize) -> String {
    format!("{value:.digits$}")
}

/// An estimate and its interval as text, `2.830 [2.826, 2.834]` with `digits` decimals.
pub(crate) fn estimate_text(estimate: &crate::stats::Estimate, digits: usize) -> String {
    let interval = &estimate.confidence_interval;
    format!(
        "{} [{}, {}]",
        fixed(estimate.point_estimate, digits),
        fixed(interval.lower_bound, digits),
        fixed(interval.upper_bound, digits)
    )
}

/// A list of numbers with `digits` decimals, comma separated.
pub fn fixed_list(values: &[f64], digits: usize) -> String {
    values.iter().map(|v| fixed(*v, digits)).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_text_is_shown_as_it_is() {
        for text in ["", "configs/nvidia-master.yaml:7744 (if@2)", "AL 2.49 — thinking_on, k = 3", r"C:\runs\a.prom"]
        {
            assert!(matches!(one_line(text), Cow::Borrowed(t) if t == text), "{text:?}");
        }
    }

    #[test]
    fn line_breaks_and_controls_are_escaped() {
        assert_eq!(one_line("a\nb\rc\td"), r"a\nb\rc\td");
        assert_eq!(one_line("x\u{2028}y\u{2029}z\u{85}w\u{1b}[0m\u{7f}"), r"x\u{2028}y\u{2029}z\u{85}w\u{1b}[0m\u{7f}");
        // Already escaped text keeps its backslashes: shown as written, never turned back into a break.
        assert_eq!(one_line(r"a\nb"), r"a\nb");
    }

    #[test]
    fn a_table_is_named_by_what_stays_in_its_title() {
        let name = |title: &str| Table::new(title, &[]).name();
        assert_eq!(name("Best k per concurrency (band: k within 5% of the top)"), "best-k-concurrency");
        assert_eq!(name("Findings: 3 errors, 2 warnings"), "findings");
        assert_eq!(name("Findings against HEAD~1: 1 new"), "findings-against");
        assert_eq!(name("Batches of 32 requests"), "batches");
        assert_eq!(name("Not predicted"), "not-predicted");
        assert_eq!(name("(untitled)"), "table");
    }

    #[test]
    fn cells_escape_for_their_format() {
        assert_eq!(md_cell("a|b\nc"), r"a\|b\nc");
        assert_eq!(csv_cell("plain"), "plain");
        assert_eq!(csv_cell("a,\"b\"\nc"), "\"a,\"\"b\"\"\\nc\"");
        assert_eq!(workflow_property("a:b,c\n%"), "a%3Ab%2Cc%0A%25");
    }

    #[test]
    fn every_human_format_keeps_a_hostile_cell_and_note_on_one_line() {
        struct Hostile;
        impl Serialize for Hostile {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_unit()
            }
        }
        impl Report for Hostile {
            fn tables(&self) -> Vec<Table> {
                let mut t = Table::new("t\n::error a", &["h"]);
                t.row(vec!["c\r\n::error b"]);
                vec![t.clone(), t]
            }
            fn notes(&self) -> Vec<String> {
                vec!["n\n::error c".into()]
            }
        }
        for format in [Format::Table, Format::Md, Format::Csv] {
            let out = render(&Hostile, format);
            let out = if format == Format::Csv {
                csv_files(&Hostile).into_iter().map(|(_, text)| text).collect::<Vec<_>>().join("")
            } else {
                out
            };
            assert!(out.lines().all(|l| !l.contains("::error") || l.contains(r"\n::error")), "{format:?}:\n{out}");
            assert!(!out.contains('\r'), "{format:?}:\n{out}");
        }
    }
}
