//! The vocabulary the checks report in: where a finding is ([`Location`]) and how serious it is
//! ([`Severity`]). `curve check`, `pins check` and their reports share it, so an error means the same to
//! both, and a front end lays out and counts their findings alike.

use std::fmt;

use serde::Serialize;

/// How serious a finding is; errors sort first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Fails the check.
    Error,
    /// Reported; fails only with `--strict` (a curve's violation within its noise, an undecided fact).
    Warning,
    /// Reported for the record; never fails.
    Note,
}

impl Severity {
    /// The word reports show.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A place in a checked tree: path relative to its root, `/`-separated, and a 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Location {
    /// Path relative to the root, `/`-separated.
    pub file: String,
    /// 1-based line.
    pub line: usize,
}

impl Location {
    /// A location in `file` at `line`.
    pub fn new(file: impl Into<String>, line: usize) -> Location {
        Location { file: file.into(), line }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_sort_first_and_read_as_json_spells_them() {
        let mut all = [Severity::Note, Severity::Error, Severity::Warning];
        all.sort();
        assert_eq!(all, [Severity::Error, Severity::Warning, Severity::Note]);
        assert_eq!(serde_json::to_string(&Severity::Warning).unwrap(), "\"warning\"");
        assert_eq!(Location::new("a/b.sh", 7).to_string(), "a/b.sh:7");
    }
}
