//! Output formats, kept apart from the computations: every command builds a serialisable report and
//! hands it here to be rendered as a human table, Markdown, CSV or JSON (with a `schema_version`).
//!
//! A report is one or more [`Table`]s plus notes; JSON is the report's own serde form, so machine
//! output never changes units under the user.

mod accept;
pub mod curve;
pub mod evidence;
mod perf;
pub mod pins;
mod sim;

pub use perf::{plot_svg, residuals_csv};
pub use sim::{PlotMetric, plot_requests};

use std::fmt::Write as _;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use serde::Serialize;

/// Version of the JSON output's layout; bumped when a field is renamed or removed.
pub const SCHEMA_VERSION: &str = "1";

/// How to print a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned tables for a terminal.
    Table,
    /// JSON, one document.
    Json,
    /// Comma-separated values, one block per table.
    Csv,
    /// GitHub-flavoured Markdown.
    #[value(alias = "markdown")]
    Md,
}

/// A titled grid of already formatted cells.
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// Shown above the table (a heading in Markdown, a comment line in CSV).
    pub title: String,
    /// Column headers.
    pub headers: Vec<String>,
    /// Rows of cells, each as long as `headers`.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with a title and headers.
    pub fn new(title: impl Into<String>, headers: &[&str]) -> Table {
        Table { title: title.into(), headers: headers.iter().map(|h| h.to_string()).collect(), rows: Vec::new() }
    }

    /// Appends a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn text(&self) -> String {
        let mut table = comfy_table::Table::new();
        table.load_preset(UTF8_FULL_CONDENSED).set_header(&self.headers);
        for row in &self.rows {
            table.add_row(row);
        }
        format!("{}\n{table}\n", self.title)
    }

    fn markdown(&self) -> String {
        let mut out =
            format!("### {}\n\n| {} |\n|{}\n", self.title, self.headers.join(" | "), "---|".repeat(self.headers.len()));
        for row in &self.rows {
            let _ = writeln!(out, "| {} |", row.iter().map(|c| c.replace('|', "\\|")).collect::<Vec<_>>().join(" | "));
        }
        out
    }

    /// The table as CSV: the header line, then one line per row (no title).
    pub fn csv(&self) -> String {
        let mut out = String::new();
        for line in std::iter::once(&self.headers).chain(&self.rows) {
            let _ = writeln!(out, "{}", line.iter().map(|c| csv_cell(c)).collect::<Vec<_>>().join(","));
        }
        out
    }
}

fn csv_cell(cell: &str) -> String {
    if cell.contains([',', '"', '\n']) { format!("\"{}\"", cell.replace('"', "\"\"")) } else { cell.to_string() }
}

/// Something a command can print.
pub trait Report: Serialize {
    /// The tables shown in human formats, in order.
    fn tables(&self) -> Vec<Table>;
    /// Remarks printed after the tables in human formats (JSON carries them as fields of its own).
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
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
        Format::Csv => {
            let tables = report.tables();
            let many = tables.len() > 1;
            tables
                .iter()
                .map(|t| if many { format!("# {}\n{}", t.title, t.csv()) } else { t.csv() })
                .collect::<Vec<_>>()
                .join("\n")
        }
        Format::Table | Format::Md => {
            let mut out = String::new();
            for table in report.tables() {
                out.push_str(&if format == Format::Md { table.markdown() } else { table.text() });
                out.push('\n');
            }
            for note in report.notes() {
                let _ = writeln!(out, "{}{note}", if format == Format::Md { "- " } else { "note: " });
            }
            out
        }
    }
}

/// A number with `digits` decimals, for table cells.
pub fn fixed(value: f64, digits: usize) -> String {
    format!("{value:.digits$}")
}

/// A list of numbers with `digits` decimals, comma separated.
pub fn fixed_list(values: &[f64], digits: usize) -> String {
    values.iter().map(|v| fixed(*v, digits)).collect::<Vec<_>>().join(", ")
}
