//! `drift` (class 10): k and AL set independently (an override of k keeps the old k's value), or a
//! comment or prose line naming another AL than the code pins.

use crate::pins::{Class, Finding, Knob, Location};

/// A k the environment can override while the pin's value does not follow it.
pub(crate) fn k_override(at: Location, k_from: &str, knob: Knob, value: &str, k: &str) -> Finding {
    Finding::new(
        Class::Drift,
        at,
        format!(
            "k comes from {k_from} and can be overridden from the environment, but {} = {value} does not follow it: an override of k runs with the k = {k} value",
            knob.name()
        ),
    )
}

/// A comment in a script naming `named` where the code pins `pinned`.
pub(crate) fn comment(at: Location, named: &str, pinned: &str) -> Finding {
    Finding::new(Class::Drift, at, format!("comment names {named} but the code pins {pinned}"))
}

/// A prose line naming `named` for `file`, which pins `pinned`.
pub(crate) fn prose(at: Location, named: &str, file: &str, pinned: &str) -> Finding {
    Finding::new(Class::Drift, at, format!("names {named} for {file}, but the code pins {pinned}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_names_both_values() {
        let at = Location::new("README.md", 3);
        assert_eq!(prose(at.clone(), "2.4", "a.sh", "2.83").message, "names 2.4 for a.sh, but the code pins 2.83");
        assert_eq!(comment(at.clone(), "2.4", "2.83").message, "comment names 2.4 but the code pins 2.83");
        let f = k_override(at, "${NUM_SPEC:-3}", Knob::VllmSyntheticLength, "2.83", "3");
        assert!(f.message.contains("runs with the k = 3 value"), "{}", f.message);
    }
}
