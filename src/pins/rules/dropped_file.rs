//! `dropped-file` (an error, under `--base` only): a file the base revision checked that the working tree
//! still has but no longer checks, because its ignore files (`.gitignore`, `.ignore`), excludes or
//! configuration drop it. A pull request cannot hide its own files from the check.

use crate::pins::{Class, Finding, Location};

/// What dropped a file from the working tree's walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DroppedBy {
    /// An exclude glob (`--exclude`, or `exclude` in the configuration).
    Exclude,
    /// An ignore file (`.gitignore`, `.ignore`).
    IgnoreFile,
}

/// `rel`, checked at `base`, is dropped from the working tree's check.
pub(crate) fn dropped(rel: &str, base: &str, by: DroppedBy) -> Finding {
    let by = match by {
        DroppedBy::Exclude => "an exclude (--exclude, or `exclude` in the configuration)",
        DroppedBy::IgnoreFile => "an ignore file (.gitignore, .ignore)",
    };
    Finding::new(
        Class::DroppedFile,
        Location::new(rel, 1),
        format!("{rel} was checked at {base} but is no longer: {by} drops it, so its pins are not checked"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_file_is_an_error_naming_what_dropped_it() {
        let f = dropped("benchmarks/run.sh", "main", DroppedBy::IgnoreFile);
        assert_eq!(f.severity, crate::pins::Severity::Error);
        assert!(f.message.contains("checked at main") && f.message.contains(".gitignore"), "{}", f.message);
    }
}
