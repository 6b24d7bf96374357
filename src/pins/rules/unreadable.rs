//! The check's own · error.
//!
//! A candidate file could not be read, decoded or parsed (not UTF-8, oversized, a link that leaves the
//! repository, a syntax error). The check never skips a file silently.
//!
//! Fix: repair the file, or move it out of the tree the check reads.
//!
//! Allow: an entry of the allow-list file, naming the file without a line (a file that cannot be read
//! holds no inline allow the check reads):
//! `- {file: benchmarks/legacy/run.sh, class: unreadable, reason: Latin-1 notes, no pin}`.
//
// The rule finds a candidate file that could not be read, decoded or parsed, so its pins are not
// checked (a note where the file cannot hold a pin the check would read).

use crate::pins::Inventory;
use crate::pins::observed::Observed;
use crate::pins::{Class, Finding, Location, Severity};

/// The files the walk or a parser could not take in.
pub(crate) fn run(inventory: &Inventory) -> Vec<Finding> {
    let found = inventory.observed.iter().filter_map(|o| match o {
        Observed::Unparsed(u) => Some(at_line(&u.file, u.line, &u.reason)),
        Observed::NotWalked { path, reason, hides_pins } => Some(walked(path, reason, *hides_pins)),
        _ => None,
    });
    found.collect()
}

/// `rel` could not be parsed at `line`.
pub(crate) fn at_line(rel: &str, line: usize, reason: &str) -> Finding {
    Finding::new(
        Class::Unreadable,
        Location::new(rel, line),
        format!("{rel} could not be read: {reason}; its pins are not checked"),
    )
}

/// A file the walk could not take in; an error where it may hide pins, else a note.
pub(crate) fn walked(path: &str, reason: &str, hides_pins: bool) -> Finding {
    match hides_pins {
        true => at_line(path, 1, reason),
        false => Finding::new(Class::Unreadable, Location::new(path, 1), format!("{path}: {reason}"))
            .with_severity(Severity::Note),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_a_parser_names_is_the_findings() {
        let f = at_line("c.yaml", 7, "c.yaml:7: mapping values are not allowed");
        assert_eq!((f.location.line, f.severity), (Some(7), Severity::Error));
        assert_eq!(walked("x.bin", "binary", false).severity, Severity::Note);
    }
}
