//! `unreadable`: a candidate file that could not be read, decoded or parsed, so its pins are not checked
//! (a note where the file cannot hold a pin the check would read).

use crate::pins::{Class, Finding, Location, Severity};

/// `rel` could not be read or parsed, for `reason`; the line is the one the reason names, if any.
pub(crate) fn file(rel: &str, reason: &str) -> Finding {
    let line = reason
        .split("line ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    at_line(rel, line, reason)
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
        let f = file("c.yaml", "mapping values are not allowed at line 7 column 3");
        assert_eq!((f.location.line, f.severity), (Some(7), Severity::Error));
        assert_eq!(file("c.yaml", "not UTF-8").location.line, Some(1));
        assert_eq!(walked("x.bin", "binary", false).severity, Severity::Note);
    }
}
