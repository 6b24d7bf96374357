//! The check's own · error · only with `--base`.
//!
//! An allow entry of the working tree that no entry of the base revision covers: one with the same
//! class that sanctions at least the same files of the tree (and, where the new entry names a line,
//! one that names lines too, or none). A pull request could otherwise bring its own
//! `.alsim-allow.yaml` with `file: '*'` for every class and take the check's errors to zero. With
//! `--base`, the repository's own allow-list (the default `.alsim-allow.yaml`, the configuration's
//! `allow`, or an `--allow` file inside the repository) is read at the base as the base has it; an
//! `--allow` file outside the repository is the same for both sides.
//!
//! Example (tests/pins_base.rs): the base has no allow file; the change adds `- {file: '*', class:
//! mismatch, reason: later}`. The check reports `allow entry for * (mismatch) is new: the base has no
//! mismatch entry; it sanctions 5 of the tree's 5 files without review`, and exits 1.
//!
//! Fix: have the entry reviewed and merged on its own, or narrow it to the findings it is meant for.
//!
//! Allow: none. No allow entry sanctions an `allow-changed` finding, or a pull request could sanction
//! its own new entry; the entry passes once it is merged, as the base then has it.

// `allow-changed` (an error, made under `--base` only): an allow entry the change brings sanctions
// findings no reviewer saw. An entry of the working tree is covered when an entry of the base with its
// class sanctions at least the same files of the tree (and, where it names a line, the entry does too);
// otherwise it is new, or wider than the base's (more files, or a whole file where the base named lines).

use crate::pins::allow::{AllowEntry, AllowList};
use crate::pins::{Class, Finding};

/// A finding for each entry of `head` that no entry of `base` covers over the tree's `files`.
pub(crate) fn findings(head: &AllowList, base: &AllowList, files: &[String]) -> Vec<Finding> {
    let mut out = Vec::new();
    for entry in &head.entries {
        let matched: Vec<&String> = files.iter().filter(|f| entry.names(f)).collect();
        let same_class: Vec<&AllowEntry> = base.entries.iter().filter(|b| b.class == entry.class).collect();
        let covers = |b: &&AllowEntry| matched.iter().all(|f| b.names(f)) && (b.line.is_none() || entry.line.is_some());
        if same_class.iter().any(covers) {
            continue;
        }
        let what = if same_class.is_empty() {
            format!("is new: the base has no {} entry", entry.class)
        } else {
            format!("is wider than every {} entry at the base", entry.class)
        };
        let line = entry.line.map(|l| format!(", line {l}")).unwrap_or_default();
        out.push(Finding::new(
            Class::AllowChanged,
            entry.at.clone(),
            format!(
                "allow entry for {}{line} ({}) {what}; it sanctions {} of the tree's {} files without review",
                entry.file,
                entry.class,
                matched.len(),
                files.len()
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pins::Location;

    fn entry(file: &str, line: Option<usize>, class: Class) -> AllowEntry {
        AllowEntry::new(file, line, class, "why", Location::new(".alsim-allow.yaml", 1)).unwrap()
    }

    fn list(entries: Vec<AllowEntry>) -> AllowList {
        AllowList { entries }
    }

    #[test]
    fn a_new_or_wider_entry_is_a_finding_and_a_kept_or_narrower_one_is_not() {
        let files: Vec<String> = ["a.sh", "b.sh", "c/d.sh"].map(String::from).to_vec();
        let base = list(vec![entry("a.sh", Some(3), Class::WrongK), entry("c/*", None, Class::Drift)]);
        let found = |head: Vec<AllowEntry>| findings(&list(head), &base, &files);
        assert!(found(vec![entry("a.sh", Some(4), Class::WrongK), entry("c/d.sh", None, Class::Drift)]).is_empty());
        let all = found(vec![entry("*", None, Class::EvalLeak)]);
        assert_eq!(all.len(), 1);
        assert!(all[0].message.contains("is new") && all[0].message.contains("3 of the tree's 3 files"), "{all:?}");
        let wider = found(vec![entry("*", None, Class::Drift)]);
        assert!(wider[0].message.contains("wider than every drift entry"), "{wider:?}");
        let whole_file = found(vec![entry("a.sh", None, Class::WrongK)]);
        assert_eq!(whole_file.len(), 1, "a whole file where the base named a line");
        assert_eq!(whole_file[0].severity, crate::pins::Severity::Error);
    }
}
