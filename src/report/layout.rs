//! How human output fits a terminal: the width it is laid out for, text wrapped to that width, tables that
//! wrap their cells or, when their columns cannot share the width, print one record per row, and
//! diagnostics as one block each (`file:line: severity[class]: message`, then `help:`), as rustc and ruff do.
//! A word never breaks: a path or URL wider than a line stays whole on a line of its own, so a terminal
//! can still open it (`file:line`), and a location is never shortened.
//!
//! A diagnostic's severity carries an ANSI style; the command line writes through `anstream`, which drops
//! the styles where colour is off (a pipe or file, `NO_COLOR`), as clap's own help does.
//!
//! Only the human formats are laid out; Markdown, CSV, JSON and annotations keep their whole lines, since
//! a browser or a parser does its own layout.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use textwrap::core::display_width;

use super::one_line;

/// The width when output goes to a file or pipe and `COLUMNS` is not set.
pub const DEFAULT_WIDTH: usize = 100;
/// Narrower than this, a layout cannot show a location and a word of its message on one line.
const MIN_WIDTH: usize = 40;
/// The narrowest a column of prose may become before the table is shown as records instead: narrower, a
/// sentence reads a word a line.
const MIN_PROSE: usize = 24;

/// The width human output is laid out for: `COLUMNS` when it is set to a number (as shells export it), else
/// the terminal's when standard output is one, else [`DEFAULT_WIDTH`]; never below 40 columns.
pub fn width() -> usize {
    let from_env = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok());
    let from_terminal = || terminal_size::terminal_size().map(|(terminal_size::Width(w), _)| usize::from(w));
    from_env.or_else(from_terminal).unwrap_or(DEFAULT_WIDTH).max(MIN_WIDTH)
}

/// `text` wrapped to `width` columns: the first line starts with `first`, the others with `rest`. A word
/// longer than a line (a path, a URL) is never broken: it stands whole on a line of its own, wider than
/// `width`. Trailing spaces are dropped. Ends with a newline.
pub(crate) fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    // Lines break at spaces only: a model name such as `deepseek-v4-pro`, a path or a URL stays whole, even
    // wider than a line, since a broken path can no longer be clicked or pasted.
    let options = textwrap::Options::new(width)
        .initial_indent(first)
        .subsequent_indent(rest)
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
        .wrap_algorithm(textwrap::WrapAlgorithm::FirstFit)
        .break_words(false);
    let mut out = String::new();
    for line in textwrap::wrap(&one_line(text), options) {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str(first.trim_end());
        out.push('\n');
    }
    out
}

/// The widest line of `text`, in terminal columns.
pub(crate) fn widest_line(text: &str) -> usize {
    text.lines().map(display_width).max().unwrap_or(0)
}

/// A grid of cells laid out within `width`: as it is when it fits; else with its cells wrapped at spaces, when
/// every column can be as wide as its longest word (prose columns at least [`MIN_PROSE`]) — the spare width
/// goes to the columns that need it most, evenly; else one record per row (`header  value` lines).
pub(crate) fn grid(headers: &[String], rows: &[Vec<String>], width: usize) -> String {
    let natural = comfy(headers, rows, None);
    if widest_line(&natural) <= width {
        return natural;
    }
    // Borders and padding take three columns a cell, plus one.
    let room = width.saturating_sub(3 * headers.len() + 1);
    match column_widths(headers, rows, room) {
        Some(widths) => comfy(headers, rows, Some(&widths)),
        None => records(headers, rows, width),
    }
}

/// A borderless grid of short cells, right-aligned under their headers, one space apart (as a terminal
/// shows a matrix): the first `keep` columns label each row, and when the rest do not fit `width` beside
/// them, they go in blocks one under another, each with the label columns again.
pub(crate) fn matrix(headers: &[String], rows: &[Vec<String>], keep: usize, width: usize) -> String {
    let column = |i: usize| {
        std::iter::once(&headers[i]).chain(rows.iter().filter_map(move |r| r.get(i))).map(|c| display_width(c))
    };
    let widths: Vec<usize> = (0..headers.len()).map(|i| column(i).max().unwrap_or(0)).collect();
    let keep = keep.min(headers.len());
    let label: usize = widths[..keep].iter().map(|w| w + 1).sum();
    let mut blocks: Vec<Vec<usize>> = vec![Vec::new()];
    let mut used = label;
    for (i, w) in widths.iter().enumerate().skip(keep) {
        if blocks.last().is_some_and(|b| !b.is_empty()) && used + w + 1 > width {
            blocks.push(Vec::new());
            used = label;
        }
        blocks.last_mut().expect("one block at least").push(i);
        used += w + 1;
    }
    let line = |cells: &dyn Fn(usize) -> String, block: &[usize]| {
        let shown: Vec<String> = (0..keep)
            .chain(block.iter().copied())
            .map(|i| format!("{:>w$}", one_line(&cells(i)), w = widths[i]))
            .collect();
        format!("{}\n", shown.join(" ").trim_end())
    };
    let mut out = String::new();
    for (b, block) in blocks.iter().enumerate() {
        if b > 0 {
            out.push('\n');
        }
        out.push_str(&line(&|i| headers[i].clone(), block));
        for row in rows {
            out.push_str(&line(&|i| row.get(i).cloned().unwrap_or_default(), block));
        }
    }
    out
}

/// Widths within `room` that break no word: each column starts at the least it needs and the rest is
/// filled up level, column by column, as far as each one's widest cell wants.
fn column_widths(headers: &[String], rows: &[Vec<String>], room: usize) -> Option<Vec<usize>> {
    let cells = |i: usize| std::iter::once(&headers[i]).chain(rows.iter().filter_map(move |r| r.get(i)));
    let (mut widths, wants): (Vec<usize>, Vec<usize>) = (0..headers.len())
        .map(|i| {
            let want = cells(i).map(|c| display_width(&one_line(c))).max().unwrap_or(0);
            let word =
                cells(i).flat_map(|c| one_line(c).split(' ').map(display_width).collect::<Vec<_>>()).max().unwrap_or(0);
            let prose = cells(i).skip(1).any(|c| c.contains(' '));
            let least = if prose { word.max(MIN_PROSE.min(want)) } else { word };
            (least, want)
        })
        .unzip();
    let mut spare = room.checked_sub(widths.iter().sum())?;
    while spare > 0 {
        let hungry: Vec<usize> = (0..widths.len()).filter(|&i| widths[i] < wants[i]).collect();
        if hungry.is_empty() {
            break;
        }
        let level = hungry.iter().map(|&i| widths[i]).min().unwrap_or(0);
        let lowest: Vec<usize> = hungry.into_iter().filter(|&i| widths[i] == level).collect();
        for i in lowest {
            if spare == 0 {
                break;
            }
            widths[i] += 1;
            spare -= 1;
        }
    }
    Some(widths)
}

fn comfy(headers: &[String], rows: &[Vec<String>], widths: Option<&[usize]>) -> String {
    let mut table = comfy_table::Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    let wrapped = |cells: &[String]| -> Vec<String> {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| match widths {
                Some(w) => wrap(c, w[i].max(1), "", "").trim_end_matches('\n').to_string(),
                None => one_line(c).into_owned(),
            })
            .collect()
    };
    table.set_header(wrapped(headers));
    for row in rows {
        table.add_row(wrapped(row));
    }
    format!("{table}\n")
}

/// Each row as a numbered record, one `header  value` line per cell, values wrapped under themselves (as
/// `psql`'s expanded display does), for tables whose columns cannot share the width.
fn records(headers: &[String], rows: &[Vec<String>], width: usize) -> String {
    let label = headers.iter().map(|h| display_width(&one_line(h))).max().unwrap_or(0).min(width / 3);
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        out.push_str(&wrap(&format!("── {} of {} ", i + 1, rows.len()), width, "", ""));
        for (header, cell) in headers.iter().zip(row) {
            let header = one_line(header);
            let pad = label.saturating_sub(display_width(&header));
            let first = format!("  {header}{}  ", " ".repeat(pad));
            let rest = " ".repeat(label + 4);
            if pad == 0 && display_width(&header) > label {
                // A header wider than the label column: the value goes under it, aligned with the others.
                out.push_str(&wrap(&header, width, "  ", "  "));
                out.push_str(&wrap(cell, width, &rest, &rest));
            } else {
                out.push_str(&wrap(cell, width, &first, &rest));
            }
        }
    }
    out
}

/// A location in the repository at `repo` (its file relative to the root, as reports hold it) as a user
/// opens it from the current directory, as rustc and ruff show paths: the file as it is when the check ran
/// at the root (`repo` is `.`), else under `repo` as given, made relative to the current directory when
/// that lies inside the repository (`../configs/a.yaml:7` from `benchmarks/`).
pub(crate) fn clickable(repo: &str, location: &crate::diagnostic::Location) -> String {
    let root = std::path::Path::new(repo);
    if repo.is_empty() || root == std::path::Path::new(".") {
        return location.to_string();
    }
    let path = root.join(&location.file);
    let shown = match std::env::current_dir() {
        Ok(cwd) if root.is_absolute() => match (path.strip_prefix(&cwd), cwd.strip_prefix(root)) {
            (Ok(below), _) => below.to_path_buf(),
            (_, Ok(inside)) => inside.components().map(|_| "..").collect::<std::path::PathBuf>().join(&location.file),
            _ => path,
        },
        _ => path,
    };
    let located = crate::diagnostic::Location { file: shown.display().to_string(), line: location.line };
    located.to_string()
}

/// One finding as a block: `location: severity[code]: message` wrapped with a hanging indent, then
/// `help: …` when there is help to give. A location too long to share its line with the label ends its own
/// line (`location:`), whole, and the label starts the next, so the path stays one clickable `file:line`.
/// The label is styled by its severity (the last word of `severity`, e.g. `new error`).
pub(crate) fn diagnostic(
    location: &str,
    severity: &str,
    code: &str,
    message: &str,
    help: Option<&str>,
    width: usize,
) -> String {
    let location = one_line(location);
    let label = format!("{severity}[{code}]:");
    let style = severity_style(severity);
    let styled = format!("{style}{label}{style:#}");
    let header = format!("{location}: {label}");
    let mut out = if display_width(&header) <= width {
        let plain = wrap(&format!("{header} {message}"), width, "", "    ");
        format!("{location}: {styled}{}", &plain[header.len()..])
    } else {
        let plain = wrap(&format!("{label} {message}"), width, "  ", "    ");
        format!("{location}:\n  {styled}{}", &plain[2 + label.len()..])
    };
    if let Some(help) = help {
        out.push_str(&wrap(&format!("help: {help}"), width, "  ", "        "));
    }
    out
}

/// The style of a severity word: errors red, warnings yellow, notes cyan, the rest (allowed, fixed) dim; all
/// bold but the dim.
fn severity_style(severity: &str) -> anstyle::Style {
    use anstyle::{AnsiColor, Style};
    let bold = |colour: AnsiColor| Style::new().bold().fg_color(Some(colour.into()));
    if severity.starts_with("fixed") {
        return Style::new().dimmed();
    }
    match severity.rsplit(' ').next().unwrap_or(severity) {
        "error" => bold(AnsiColor::Red),
        "warning" => bold(AnsiColor::Yellow),
        "note" => bold(AnsiColor::Cyan),
        _ => Style::new().dimmed(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn a_table_that_fits_is_left_as_it_is() {
        let headers = strings(&["k", "AL"]);
        let rows = vec![strings(&["1", "1.80"]), strings(&["2", "2.41"])];
        assert_eq!(grid(&headers, &rows, 100), comfy(&headers, &rows, None));
    }

    #[test]
    fn a_few_wide_columns_wrap_their_cells_within_the_width() {
        let headers = strings(&["severity", "where", "message"]);
        let long = "word ".repeat(60);
        let rows =
            vec![strings(&["error", "benchmarks/single_node/agentic/minimaxm3_bf16_h100x_vllm_mtp.sh:10", &long])];
        let out = grid(&headers, &rows, 110);
        assert!(widest_line(&out) <= 110, "{out}");
        assert!(out.contains('┆'), "still a grid: {out}");
        assert_eq!(out.matches("word").count(), 60, "no word lost or broken: {out}");
        assert!(out.contains("minimaxm3_bf16_h100x_vllm_mtp.sh:10"), "the path is whole: {out}");
        // Too narrow for the path beside a readable message: records.
        let narrow = grid(&headers, &rows, 80);
        assert!(widest_line(&narrow) <= 80 && narrow.starts_with("── 1 of 1\n"), "{narrow}");
    }

    #[test]
    fn a_matrix_too_wide_for_the_width_goes_in_blocks_that_repeat_the_label() {
        let mut headers = strings(&["concurrency"]);
        headers.extend((1..=12).map(|k| format!("k={k}")));
        let rows: Vec<Vec<String>> = [1, 64]
            .iter()
            .map(|b| {
                std::iter::once(b.to_string()).chain((1..=12).map(|k| format!("{:.2}x*", k as f64 / 4.0))).collect()
            })
            .collect();
        let wide = matrix(&headers, &rows, 1, 200);
        assert_eq!(wide.lines().count(), 3, "{wide}");
        assert!(wide.starts_with("concurrency    k=1    k=2"), "{wide}");
        assert!(wide.lines().nth(2).is_some_and(|l| l.starts_with("         64 0.25x* 0.50x*")), "{wide}");
        let narrow = matrix(&headers, &rows, 1, 50);
        assert!(widest_line(&narrow) <= 50, "{narrow}");
        assert_eq!(narrow.matches("concurrency").count(), 3, "blocks of 5, 5 and 2 k: {narrow}");
        assert_eq!(narrow.matches("x*").count(), 24, "every cell once: {narrow}");
    }

    #[test]
    fn many_columns_become_records_within_the_width() {
        let headers: Vec<String> = (0..14).map(|i| format!("column {i}")).collect();
        let rows =
            vec![
                (0..14).map(|i| format!("value-{i}-{} {}", "x".repeat(i * 9), "y ".repeat(i * 9))).collect::<Vec<_>>();
                2
            ];
        let out = grid(&headers, &rows, 60);
        assert!(out.starts_with("── 1 of 2\n"), "{out}");
        assert!(out.contains("  column 13  value-13-"), "{out}");
        assert_eq!(out.matches("value-").count(), 28);
        // Prose wraps within the width; a word wider than a line (as a path) stays whole on its own line.
        let whole = format!("value-13-{}", "x".repeat(117));
        assert!(out.lines().any(|l| l.trim_start().strip_prefix("column 13  ") == Some(&whole)), "{out}");
        assert!(out.lines().filter(|l| !l.contains("xxxx")).all(|l| display_width(l) <= 60), "{out}");
    }

    /// The diagnostic as a pipe receives it: `anstream` drops the styles there.
    fn plain_diagnostic(location: &str, message: &str, help: Option<&str>, width: usize) -> String {
        anstream::adapter::strip_str(&diagnostic(location, "error", "wrong-k", message, help, width)).to_string()
    }

    #[test]
    fn a_diagnostic_wraps_under_its_first_line_and_keeps_its_location_whole() {
        let message = "too high ".repeat(20);
        let out = plain_diagnostic("configs/launch.sh:12", &message, Some("pin the value"), 50);
        assert!(widest_line(&out) <= 50, "{out}");
        assert!(out.starts_with("configs/launch.sh:12: error[wrong-k]: too high"), "{out}");
        assert!(out.lines().skip(1).all(|l| l.starts_with("    ") || l.starts_with("  help: ")), "{out}");
        assert_eq!(out.split_whitespace().filter(|w| *w == "high").count(), 20, "{out}");
        assert!(out.ends_with("  help: pin the value\n"), "{out}");
        // A path wider than the line: whole on a line of its own, the label under it.
        let path = format!("{}launch.sh:12", "deep/".repeat(30));
        let out = plain_diagnostic(&path, &message, None, 50);
        assert!(out.starts_with(&format!("{path}:\n  error[wrong-k]: too high")), "{out}");
        assert!(out.lines().skip(1).all(|l| display_width(l) <= 50), "{out}");
        assert_eq!(out.split_whitespace().filter(|w| *w == "high").count(), 20, "{out}");
    }

    #[test]
    fn a_long_location_is_never_shortened() {
        let path = "benchmarks/multi_node/srt-slurm-recipes/sglang/deepseek-v4/agentic/agg-gb300-tp4-mtp.yaml:72";
        let out = plain_diagnostic(path, "leaks", None, 80);
        assert_eq!(out, format!("{path}:\n  error[wrong-k]: leaks\n"));
        let wide = plain_diagnostic(path, "leaks", None, 120);
        assert_eq!(wide, format!("{path}: error[wrong-k]: leaks\n"));
    }

    #[test]
    fn a_severity_is_styled_and_only_the_label() {
        let out = diagnostic("a.sh:1", "new error", "wrong-k", "m", None, 80);
        let red = anstyle::Style::new().bold().fg_color(Some(anstyle::AnsiColor::Red.into()));
        assert_eq!(out, format!("a.sh:1: {red}new error[wrong-k]:{red:#} m\n"));
        let warning = diagnostic("a.sh:1", "warning", "x", "m", None, 80);
        assert!(warning.contains("\u{1b}[1m\u{1b}[33m"), "{warning:?}");
    }

    #[test]
    fn a_url_wider_than_a_line_is_not_broken() {
        let url = format!("https://huggingface.co/datasets/{}/resolve/main/x.json", "a".repeat(60));
        let out = wrap(&format!("source: {url} (read 2026-05-01)"), 40, "", "  ");
        assert!(out.lines().any(|l| l.trim() == url), "{out}");
    }

    #[test]
    fn a_location_is_shown_from_the_current_directory() {
        use crate::diagnostic::Location;
        let at = Location::new("configs/a.yaml", 7);
        assert_eq!(clickable(".", &at), "configs/a.yaml:7");
        assert_eq!(clickable("bench", &at), "bench/configs/a.yaml:7");
        let cwd = std::env::current_dir().unwrap();
        let root = cwd.join("bench").display().to_string();
        assert_eq!(clickable(&root, &at), "bench/configs/a.yaml:7");
        // From a folder inside the repository, up to its root and down again.
        let parent = cwd.parent().unwrap().display().to_string();
        assert_eq!(clickable(&parent, &at), "../configs/a.yaml:7");
    }

    #[test]
    fn control_characters_in_wrapped_text_stay_escaped() {
        assert_eq!(wrap("a\n::error b", 80, "", ""), "a\\n::error b\n");
    }
}
