//! `stale-allow` (a warning): an allow-list entry or inline allow that sanctions nothing — no finding
//! matches it, it names no class, or it gives no reason.

use crate::pins::{Class, Finding, Location};

/// An inline allow whose class cannot be read (`error` says why).
pub(crate) fn inline_class(at: Location, error: &str) -> Finding {
    Finding::new(Class::StaleAllow, at, format!("inline allow sanctions nothing: {error}"))
}

/// An inline allow without a reason.
pub(crate) fn inline_reason(at: Location) -> Finding {
    Finding::new(
        Class::StaleAllow,
        at,
        "inline allow sanctions nothing: it needs a reason (`# alsim: allow CLASS -- REASON`)",
    )
}

/// An allow-list entry for `file` and `class` that matched no finding.
pub(crate) fn unused(at: Location, file: &str, class: Class) -> Finding {
    Finding::new(Class::StaleAllow, at, format!("allow-list entry for {file} ({class}) matches no finding: remove it"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_allows_are_warnings() {
        let at = Location::new("allow.yaml", 2);
        let f = unused(at.clone(), "a.sh", Class::WrongK);
        assert_eq!(f.message, "allow-list entry for a.sh (wrong-k) matches no finding: remove it");
        assert!(inline_reason(at.clone()).message.contains("needs a reason"));
        assert_eq!(inline_class(at, "unknown class 'x'").severity, crate::pins::Severity::Warning);
    }
}
