//! The check's own · error · only under `--base`.
//!
//! A pull request cannot hide its own files: a file the base revision checked that the working tree
//! still has, but that its ignore files (`.gitignore`, `.ignore`), excludes or configuration now drop,
//! is a finding of its own, new in the comparison, as a widened allow entry is.
//!
//! Example: a pull request adds `benchmarks/` to `.ignore`; every launch script under it is a
//! `dropped-file` error, and none of their pins reaches the report unseen.
//!
//! Fix: narrow the ignore entry or exclude so the file is checked again; where dropping it is
//! deliberate, allow the finding with its reason.
//!
//! Allow: an entry of the working tree's allow-list file (the dropped file is not read, so it holds no
//! inline allow): `- {file: benchmarks/old/*, class: dropped-file, reason: retired, no job runs it}`. A
//! new or wider entry is itself an `allow-changed` finding until it is merged.

// `dropped-file` (an error, under `--base` only): a file the base revision checked that the working tree
// still has but no longer checks, because its ignore files (`.gitignore`, `.ignore`), excludes or
// configuration drop it. A pull request cannot hide its own files from the check.

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
