//! The check's own · note.
//!
//! A pin that does nothing: its role runs no speculative decoding, or the setting is one the engine
//! ignores (SGLang reads `SGLANG_DEFAULT_THINKING`, not `SGLANG_ENABLE_THINKING`).
//!
//! Example (InferenceX): GLM-5.2 SGLang recipes set `SGLANG_ENABLE_THINKING`, which changes nothing.
//!
//! Fix: delete it, or use the setting the engine reads.
//!
//! Allow: `# alsim: allow inert -- REASON` at the end of the line the finding names, or alone on the
//! line above it; or an entry of the allow-list file (`.alsim-allow.yaml`, or `--allow FILE`):
//! `- {file: recipes/sglang/glm5.yaml, class: inert, reason: kept for older SGLang builds}`.
//
// The rule finds a pin or setting that does nothing — written into a role that runs no speculative
// decoding, a setting the engine ignores, config files archived where no job runs them.

use crate::pins::Inventory;
use crate::pins::observed::Observed;
use crate::pins::{Class, Finding, Knob, Location};

/// Settings that do nothing where they are written, and archived files no job runs.
pub(crate) fn run(inventory: &Inventory) -> Vec<Finding> {
    let found = inventory.observed.iter().filter_map(|o| match o {
        Observed::IgnoredSetting { at, key, why } => Some(ignored_setting(at.clone(), key, why)),
        Observed::RoleWithoutSpeculation { at, knob, role, why } => {
            Some(role_without_speculation(at.clone(), *knob, role, why))
        }
        Observed::InjectedIntoRole { at, role, recipe } => Some(injected_into_role(at.clone(), role, recipe)),
        Observed::Archived { at, dir, count, scripts: false } => Some(archived(at.clone(), dir, *count)),
        Observed::Archived { at, dir, count, scripts: true } => Some(archived_scripts(at.clone(), dir, *count)),
        _ => None,
    });
    found.collect()
}

/// A recipe setting the engine ignores, and why.
pub(crate) fn ignored_setting(at: Location, key: &str, why: &str) -> Finding {
    Finding::new(Class::Inert, at, format!("{key}: {why}"))
}

/// A pin in a recipe role (`role`, or the recipe's own) that runs no speculative decoding (`why`).
pub(crate) fn role_without_speculation(at: Location, knob: Knob, role: &str, why: &str) -> Finding {
    Finding::new(Class::Inert, at, format!("{} in the {role} role does nothing: {why}", knob.name()))
}

/// An injected length written into a role of `recipe` that runs no speculative decoding.
pub(crate) fn injected_into_role(at: Location, role: &str, recipe: &str) -> Finding {
    Finding::new(
        Class::Inert,
        at,
        format!(
            "the injector writes SYNTHETIC_ACCEPTANCE_LENGTH into the {role} role of {recipe}, which runs no speculative decoding: there it does nothing"
        ),
    )
}

/// `count` archived config files under `dir`, which no job runs.
pub(crate) fn archived(at: Location, dir: &str, count: usize) -> Finding {
    Finding::new(
        Class::Inert,
        at,
        format!(
            "{dir}/: {count} archived config file(s) not checked: a `deprecated/` directory keeps retired entries, which no job runs"
        ),
    )
}

/// `count` archived launch scripts under `dir` that no job runs: their pins are not judged.
pub(crate) fn archived_scripts(at: Location, dir: &str, count: usize) -> Finding {
    Finding::new(
        Class::Inert,
        at,
        format!(
            "{dir}/: {count} archived script(s) with pins not checked: a `deprecated/` directory keeps retired launch scripts, and no job runs these"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pins::Severity;

    #[test]
    fn inert_findings_are_notes() {
        let at = Location::new("r.yaml", 3);
        let findings = [
            ignored_setting(at.clone(), "speculative_draft_tensor_parallel_size", "TRT-LLM ignores it"),
            role_without_speculation(at.clone(), Knob::SglangSimulateLen, "prefill", "prefill runs no drafts"),
            injected_into_role(at.clone(), "prefill", "r.yaml"),
            archived(at.clone(), "configs/deprecated", 2),
            archived_scripts(at, "benchmarks/single_node/agentic/deprecated", 1),
        ];
        assert!(findings.iter().all(|f| f.class == Class::Inert && f.severity == Severity::Note));
    }
}
