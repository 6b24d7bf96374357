//! The check's own · warning.
//!
//! A YAML key is written twice in one mapping. PyYAML, which benchmark runners use, keeps the last
//! value; alsim reads it the same way and warns, because the first one looks authoritative to a reader.
//!
//! Example (InferenceX): `backend.vllm_config.aggregated.compilation-config` written twice in one
//! recipe.
//!
//! Fix: delete the duplicate.
//!
//! Allow: `# alsim: allow duplicate-key -- REASON` at the end of the line the finding names, or alone
//! on the line above it; or an entry of the allow-list file (`.alsim-allow.yaml`, or `--allow FILE`):
//! `- {file: recipes/vllm/agg.yaml, line: 30, class: duplicate-key, reason: generated; the last value
//! is meant}`.
//
// The rule finds a YAML key written twice in one mapping of a recipe; the last value is the one
// used, as PyYAML reads it.

use crate::pins::Inventory;
use crate::pins::observed::Observed;
use crate::pins::{Class, Finding, Location};

/// Every key written twice in one mapping.
pub(crate) fn run(inventory: &Inventory) -> Vec<Finding> {
    let found = inventory.observed.iter().filter_map(|o| match o {
        Observed::DuplicateKey { at, key } => Some(finding(at.clone(), key)),
        _ => None,
    });
    found.collect()
}

/// `key` written a second time at `at`.
pub(crate) fn finding(at: Location, key: &str) -> Finding {
    Finding::new(
        Class::DuplicateKey,
        at,
        format!("{key} is written twice in this mapping: the last value is used, as PyYAML reads it"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duplicate_is_a_warning_naming_the_key() {
        let f = finding(Location::new("r.yaml", 9), "num_speculative_tokens");
        assert_eq!(f.severity, crate::pins::Severity::Warning);
        assert!(f.message.starts_with("num_speculative_tokens is written twice"));
    }
}
