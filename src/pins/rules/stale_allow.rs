//! The check's own · warning.
//!
//! An allow-list entry or inline allow matched no finding, names an unknown class, or gives no reason.
//! A stale allow would silently sanction a future problem.
//!
//! Fix: delete the entry, or correct its file, line or class.
//!
//! Allow: an entry that sanctions nothing cannot be allowed (it is found once the allow-list has been
//! applied): delete or correct it. An inline allow that cannot be read is found before, so an entry of
//! the allow-list file sanctions it:
//! `- {file: run.sh, line: 3, class: stale-allow, reason: written by a tool we do not own}`.
//
// The rule finds an allow-list entry or inline allow that sanctions nothing — no finding matches it,
// it names no class, or it gives no reason.

use crate::pins::observed::Observed;
use crate::pins::{AllowEntry, Class, Finding, Inventory, Location};

/// The inline allows that cannot be read.
pub(crate) fn run(inventory: &Inventory) -> Vec<Finding> {
    let found = inventory.observed.iter().filter_map(|o| match o {
        Observed::InlineAllowUnread { at, class_error: Some(error) } => Some(inline_class(at.clone(), error)),
        Observed::InlineAllowUnread { at, class_error: None } => Some(inline_reason(at.clone())),
        _ => None,
    });
    found.collect()
}

/// The allow-list entries that sanctioned no finding.
pub(crate) fn unused(entries: &[&AllowEntry]) -> Vec<Finding> {
    entries.iter().map(|e| entry_unused(e.at.clone(), &e.file, e.class)).collect()
}

/// An inline allow whose class cannot be read (`error` says why).
fn inline_class(at: Location, error: &str) -> Finding {
    Finding::new(Class::StaleAllow, at, format!("inline allow sanctions nothing: {error}"))
}

/// An inline allow without a reason.
fn inline_reason(at: Location) -> Finding {
    Finding::new(
        Class::StaleAllow,
        at,
        "inline allow sanctions nothing: it needs a reason (`# alsim: allow CLASS -- REASON`)",
    )
}

/// An allow-list entry for `file` and `class` that matched no finding.
fn entry_unused(at: Location, file: &str, class: Class) -> Finding {
    Finding::new(Class::StaleAllow, at, format!("allow-list entry for {file} ({class}) matches no finding: remove it"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_allows_are_warnings() {
        let at = Location::new("allow.yaml", 2);
        let f = entry_unused(at.clone(), "a.sh", Class::WrongK);
        assert_eq!(f.message, "allow-list entry for a.sh (wrong-k) matches no finding: remove it");
        assert!(inline_reason(at.clone()).message.contains("needs a reason"));
        assert_eq!(inline_class(at, "unknown class 'x'").severity, crate::pins::Severity::Warning);
    }
}
