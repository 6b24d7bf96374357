//! The vocabulary the checks report in: a [`Finding`] of some class ([`FindingClass`]) at a [`Location`],
//! with a [`Severity`]; a check's findings counted in a [`Tally`] that gives its [`Status`]. `curve check`
//! (classes `curve::check::ProblemKind`) and `pins check` (classes `pins::Class`) share it, so an error
//! means the same to both, and a front end lays out, counts and gates their findings alike. Evidence notes
//! (`evidence::Note`, classes `evidence::NoteKind`) are findings too.

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

/// A place in the input: a file (in a checked tree, its path relative to the root, `/`-separated; for
/// evidence, the name as given, with `[label=value]` when split) and a 1-based line where one is known.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Location {
    /// The file.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
}

impl Location {
    /// A location in `file` at `line`.
    pub fn new(file: impl Into<String>, line: usize) -> Location {
        Location { file: file.into(), line: Some(line) }
    }

    /// The whole of `file`, or a line of it when known.
    pub fn in_file(file: impl Into<String>, line: Option<usize>) -> Location {
        Location { file: file.into(), line }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}", self.file),
            None => f.write_str(&self.file),
        }
    }
}

/// A kind of finding a check makes: its name in output and allow-lists, and how serious a finding of it is
/// unless the check judges otherwise.
pub trait FindingClass: Copy {
    /// The kebab-case name output shows.
    fn name(self) -> &'static str;
    /// The severity a finding of this class has unless the check judges otherwise.
    fn severity(self) -> Severity;
}

/// One thing a check found: how serious, of which class, where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding<C> {
    /// Error, warning or note.
    pub severity: Severity,
    /// The kind of finding.
    pub class: C,
    /// Where.
    pub location: Location,
    /// What is wrong and, where known, what is right.
    pub message: String,
    /// The reason an allow-list gives for it, where the check reads one (the pin check does); a finding
    /// so sanctioned fails nothing. JSON carries it only when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed: Option<String>,
    /// How to mend it where its cause needs another line than its class's (an assumption on an effort's
    /// rendering is not mended by stating the draft sampling); shown under it, not in JSON.
    #[serde(skip)]
    pub help: Option<&'static str>,
}

impl<C: FindingClass> Finding<C> {
    /// A finding of `class` at `location`, with the class's severity.
    pub fn new(class: C, location: Location, message: impl Into<String>) -> Finding<C> {
        Finding { severity: class.severity(), class, location, message: message.into(), allowed: None, help: None }
    }

    /// The same finding at another severity.
    pub fn with_severity(mut self, severity: Severity) -> Finding<C> {
        self.severity = severity;
        self
    }

    /// The same finding with its cause's own line on how to mend it.
    pub fn with_help(mut self, help: &'static str) -> Finding<C> {
        self.help = Some(help);
        self
    }
}

/// One line: the place, then the message (`run.prom:7: 2 counter series went down …`).
impl<C> fmt::Display for Finding<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// How a check ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Nothing wrong.
    Pass,
    /// An error (or, with `--strict`, a warning).
    Fail,
    /// No error, but something could not be decided.
    Undecided,
}

/// A check's findings counted by severity; sanctioned ones apart, as they fail nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Errors not sanctioned.
    pub errors: usize,
    /// Warnings not sanctioned.
    pub warnings: usize,
    /// Notes.
    pub notes: usize,
    /// Findings an allow-list sanctions.
    pub allowed: usize,
}

impl Tally {
    /// Counts `findings`.
    pub fn of<'a, C: 'a>(findings: impl IntoIterator<Item = &'a Finding<C>>) -> Tally {
        let mut tally = Tally::default();
        for f in findings {
            match (&f.allowed, f.severity) {
                (Some(_), _) => tally.allowed += 1,
                (None, Severity::Error) => tally.errors += 1,
                (None, Severity::Warning) => tally.warnings += 1,
                (None, Severity::Note) => tally.notes += 1,
            }
        }
        tally
    }

    /// How a check with these findings ends: it fails on an error, or with `strict` on a warning; else it
    /// is undecided where the check says something was left `undecided`; else it passes.
    pub fn status(&self, strict: bool, undecided: bool) -> Status {
        if self.errors > 0 || (strict && self.warnings > 0) {
            Status::Fail
        } else if undecided {
            Status::Undecided
        } else {
            Status::Pass
        }
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
        assert_eq!(Location::in_file("run.prom", None).to_string(), "run.prom");
    }

    #[derive(Debug, Clone, Copy, PartialEq)]
    struct Kind;

    impl FindingClass for Kind {
        fn name(self) -> &'static str {
            "kind"
        }
        fn severity(self) -> Severity {
            Severity::Warning
        }
    }

    #[test]
    fn a_tally_fails_on_errors_and_on_warnings_only_when_strict() {
        let at = |line| Location::new("f", line);
        let warning = Finding::new(Kind, at(1), "w");
        let mut allowed = Finding::new(Kind, at(2), "a").with_severity(Severity::Error);
        allowed.allowed = Some("known".into());
        let tally = Tally::of(&[warning.clone(), allowed]);
        assert_eq!(tally, Tally { errors: 0, warnings: 1, notes: 0, allowed: 1 });
        assert_eq!(tally.status(false, false), Status::Pass);
        assert_eq!(tally.status(true, false), Status::Fail);
        assert_eq!(tally.status(false, true), Status::Undecided);
        let error = warning.with_severity(Severity::Error);
        assert_eq!(Tally::of([&error]).status(false, true), Status::Fail);
    }
}
