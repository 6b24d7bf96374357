//! A small reader for the comma-separated files the perf module consumes (profiles and measured runs):
//! `#` comment lines anywhere, one header line, RFC 4180 quoting. Every value is fetched by column name so
//! errors can say which file, line and column is wrong.

use crate::error::{Error, Result};

/// A parsed CSV file: header and rows, each row with its 1-based line number.
#[derive(Debug, Clone)]
pub struct CsvTable {
    origin: String,
    headers: Vec<String>,
    rows: Vec<(usize, Vec<String>)>,
    comments: Vec<String>,
}

/// Comment lines kept for the report (a measurement's GPU, driver and library versions): the first few, each
/// cut to a readable length.
const KEPT_COMMENTS: usize = 20;
const COMMENT_CHARS: usize = 300;

/// One row of a [`CsvTable`], with typed accessors that name the file, line and column in errors.
#[derive(Debug, Clone, Copy)]
pub struct CsvRow<'a> {
    table: &'a CsvTable,
    line: usize,
    cells: &'a [String],
}

impl CsvTable {
    /// Parses `text`; `origin` names it in errors.
    ///
    /// # Errors
    /// As [`CsvStream::new`] and [`CsvStream::next_row`].
    pub fn parse(text: &str, origin: &str) -> Result<CsvTable> {
        let mut stream = CsvStream::new(text.as_bytes(), origin)?;
        let mut rows = Vec::new();
        while let Some(row) = stream.next_row()? {
            rows.push(row);
        }
        let mut table = stream.table;
        table.rows = rows;
        Ok(table)
    }

    /// A row of this table's columns that the caller holds (a streamed one).
    pub fn row<'a>(&'a self, line: usize, cells: &'a [String]) -> CsvRow<'a> {
        CsvRow { table: self, line, cells }
    }

    /// Where the text came from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The column names, lower-cased.
    pub fn headers(&self) -> &[String] {
        &self.headers
    }

    /// The first `#` comment lines, without the `#`.
    pub fn comments(&self) -> &[String] {
        &self.comments
    }

    /// Whether the header has `column`.
    pub fn has(&self, column: &str) -> bool {
        self.headers.iter().any(|h| h == column)
    }

    /// Checks that every column in `required` is present.
    ///
    /// # Errors
    /// [`Error::Parse`] listing the missing columns and the ones found.
    pub fn require(&self, required: &[&str]) -> Result<()> {
        let missing: Vec<&str> = required.iter().copied().filter(|c| !self.has(c)).collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(Error::parse(
            &self.origin,
            None,
            format!("missing column(s) {}; the header has {}", missing.join(", "), self.headers.join(", ")),
        ))
    }

    /// The data rows, in file order.
    pub fn rows(&self) -> impl Iterator<Item = CsvRow<'_>> {
        self.rows.iter().map(move |(line, cells)| CsvRow { table: self, line: *line, cells })
    }
}

impl<'a> CsvRow<'a> {
    /// The 1-based line number.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The trimmed cell in `column`; `None` when the column is absent or the cell empty.
    pub fn opt_str(&self, column: &str) -> Option<&'a str> {
        let index = self.table.headers.iter().position(|h| h == column)?;
        let cell = self.cells[index].trim();
        (!cell.is_empty()).then_some(cell)
    }

    /// The cell in `column`, which must be present and non-empty.
    ///
    /// # Errors
    /// [`Error::Parse`] naming the file, line and column.
    pub fn str(&self, column: &str) -> Result<&'a str> {
        self.opt_str(column).ok_or_else(|| self.error(column, "is empty"))
    }

    /// The number in `column`, or `None` when the cell is empty or the column absent.
    ///
    /// # Errors
    /// [`Error::Parse`] when the cell is not a finite number.
    pub fn opt_f64(&self, column: &str) -> Result<Option<f64>> {
        self.opt_str(column)
            .map(|text| match text.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                _ => Err(self.error(column, &format!("'{text}' is not a number"))),
            })
            .transpose()
    }

    /// The number in `column`, which must be present.
    ///
    /// # Errors
    /// [`Error::Parse`] when empty or not a finite number.
    pub fn f64(&self, column: &str) -> Result<f64> {
        self.opt_f64(column)?.ok_or_else(|| self.error(column, "is empty"))
    }

    /// A number in `column` that must be ≥ 0 (`positive` demands > 0).
    ///
    /// # Errors
    /// As [`CsvRow::f64`], and when the value is negative (or zero with `positive`).
    pub fn non_negative(&self, column: &str, positive: bool) -> Result<f64> {
        let value = self.f64(column)?;
        if value < 0.0 || (positive && value == 0.0) {
            let want = if positive { "> 0" } else { "≥ 0" };
            return Err(self.error(column, &format!("{value} must be {want}")));
        }
        Ok(value)
    }

    /// A whole number in `column` (`positive` demands ≥ 1).
    ///
    /// # Errors
    /// As [`CsvRow::non_negative`], and when the value has a fractional part.
    pub fn count(&self, column: &str, positive: bool) -> Result<usize> {
        let value = self.non_negative(column, positive)?;
        if value.fract() != 0.0 || value > 1e12 {
            return Err(self.error(column, &format!("{value} is not a whole number")));
        }
        Ok(value as usize)
    }

    /// A whole number in `column` from 1 to `max`.
    ///
    /// # Errors
    /// As [`CsvRow::count`], and when the value is above `max`.
    pub fn count_upto(&self, column: &str, max: usize) -> Result<usize> {
        let value = self.count(column, true)?;
        if value > max {
            return Err(self.error(column, &format!("{value} is out of range: it must lie in [1, {max}]")));
        }
        Ok(value)
    }

    /// An [`Error::Parse`] at this row naming `column`.
    pub fn error(&self, column: &str, message: &str) -> Error {
        Error::parse(&self.table.origin, Some(self.line), format!("column '{column}': {message}"))
    }
}

/// Longest line a table may have: a measured row is a few hundred bytes, and a file without newlines must
/// not be read whole into one line.
const MAX_LINE: usize = 64 * 1024;

/// A table read one row at a time, so a large measured file never sits in memory as text or cells: the
/// header and comments are read by [`CsvStream::new`], the rows by [`CsvStream::next_row`].
pub struct CsvStream<R> {
    reader: R,
    table: CsvTable,
    line: usize,
    buf: Vec<u8>,
}

impl<R: std::io::BufRead> CsvStream<R> {
    /// Reads up to and including the header line.
    ///
    /// # Errors
    /// [`Error::Parse`] when there is no header, a line is not UTF-8, too long or has an unterminated quote;
    /// [`Error::Io`] when reading fails.
    pub fn new(reader: R, origin: &str) -> Result<Self> {
        let table =
            CsvTable { origin: origin.to_string(), headers: Vec::new(), rows: Vec::new(), comments: Vec::new() };
        let mut stream = CsvStream { reader, table, line: 0, buf: Vec::new() };
        let (_, headers) = stream
            .next_cells()?
            .ok_or_else(|| Error::parse(origin, None, "no header line (only comments or blanks)"))?;
        stream.table.headers = headers.iter().map(|h| h.trim().to_ascii_lowercase()).collect();
        Ok(stream)
    }

    /// The header and the comments read so far (no rows).
    pub fn table(&self) -> &CsvTable {
        &self.table
    }

    /// The next data row: its 1-based line number and cells; `None` at the end.
    ///
    /// # Errors
    /// As [`CsvStream::new`], and when the row's cell count differs from the header's.
    pub fn next_row(&mut self) -> Result<Option<(usize, Vec<String>)>> {
        let Some((number, cells)) = self.next_cells()? else { return Ok(None) };
        if cells.len() != self.table.headers.len() {
            return Err(Error::parse(
                &self.table.origin,
                Some(number),
                format!("{} cells, but the header has {} columns", cells.len(), self.table.headers.len()),
            ));
        }
        Ok(Some((number, cells)))
    }

    /// The next line that is neither blank nor a comment, split into cells.
    fn next_cells(&mut self) -> Result<Option<(usize, Vec<String>)>> {
        use std::io::{BufRead, Read};
        let origin = &self.table.origin;
        loop {
            self.buf.clear();
            let read = (&mut self.reader)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| Error::io(origin, e))?;
            if read == 0 {
                return Ok(None);
            }
            self.line += 1;
            if self.buf.len() > MAX_LINE {
                return Err(Error::parse(origin, Some(self.line), format!("longer than {} KiB", MAX_LINE / 1024)));
            }
            let text = std::str::from_utf8(&self.buf)
                .map_err(|_| Error::parse(origin, Some(self.line), "not UTF-8 text"))?
                .trim();
            if let Some(comment) = text.strip_prefix('#') {
                if self.table.comments.len() < KEPT_COMMENTS {
                    self.table.comments.push(comment.trim().chars().take(COMMENT_CHARS).collect());
                }
                continue;
            }
            if text.is_empty() {
                continue;
            }
            let cells = split_line(text).map_err(|m| Error::parse(origin, Some(self.line), m))?;
            return Ok(Some((self.line, cells)));
        }
    }
}

/// Splits one line into cells, honouring double quotes ("" inside quotes is a literal quote).
fn split_line(line: &str) -> std::result::Result<Vec<String>, String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            ('"', true) => quoted = false,
            ('"', false) if cell.trim().is_empty() => {
                cell.clear();
                quoted = true;
            }
            (',', false) => cells.push(std::mem::take(&mut cell)),
            (c, _) => cell.push(c),
        }
    }
    if quoted {
        return Err("unterminated quoted cell".into());
    }
    cells.push(cell);
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_comments_and_typed_cells() {
        let t = CsvTable::parse("# c\na,b,c\n1,\"x, \"\"y\"\"\",\n# mid\n2.5,z,3\n", "f.csv").unwrap();
        assert_eq!(t.rows().count(), 2);
        assert_eq!(t.comments(), ["c", "mid"]);
        assert_eq!(t.headers(), ["a", "b", "c"]);
        let rows: Vec<_> = t.rows().collect();
        assert_eq!(rows[0].str("b").unwrap(), "x, \"y\"");
        assert_eq!(rows[0].opt_f64("c").unwrap(), None);
        assert_eq!(rows[1].line(), 5);
        assert_eq!(rows[1].count("c", true).unwrap(), 3);
        let err = rows[1].count("a", true).unwrap_err().to_string();
        assert!(err.starts_with("f.csv:5") && err.contains("'a'"), "{err}");
        let err = rows[1].f64("b").unwrap_err().to_string();
        assert!(err.contains("'z' is not a number"), "{err}");
    }

    #[test]
    fn malformed_tables_are_errors() {
        assert!(CsvTable::parse("# only\n", "f").is_err());
        let err = CsvTable::parse("a,b\n1\n", "f").unwrap_err().to_string();
        assert!(err.contains("f:2") && err.contains("1 cells"), "{err}");
        assert!(CsvTable::parse("a\n\"open\n", "f").is_err());
        let t = CsvTable::parse("a,b\n1,2\n", "f").unwrap();
        let err = t.require(&["a", "tpot_ms", "k"]).unwrap_err().to_string();
        assert!(err.contains("tpot_ms, k"), "{err}");
    }
}
