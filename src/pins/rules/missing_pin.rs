//! **Class 9** · error.
//!
//! A throughput config with speculative decoding has no pin at all, or a lookup table in shared launch
//! code has no entry for the k a config runs: the run silently measures real acceptance.
//!
//! Fix: add the pin (`alsim pin …`), or the missing table entry.
//!
//! Allow: `# alsim: allow missing-pin -- REASON` at the end of the line the finding names, or alone on
//! the line above it; or an entry of the allow-list file (`.alsim-allow.yaml`, or `--allow FILE`):
//! `- {file: configs/nvidia-master.yaml, line: 120, class: missing-pin, reason: this entry measures
//! real acceptance on purpose}`.
//
// The rule finds a speculative run whose acceptance nothing pins — an agentic entry's recipe or
// script, or a k with no arm in a lookup table — so it measures real acceptance.

use crate::pins::Inventory;
use crate::pins::observed::Observed;
use crate::pins::{Class, Finding, Location};

/// Speculative runs whose acceptance nothing pins.
pub(crate) fn run(inventory: &Inventory) -> Vec<Finding> {
    let found = inventory.observed.iter().filter_map(|o| match o {
        Observed::TableArmMissing { at, entry, entry_at, subject, k } => {
            Some(table_arm(at.clone(), entry, entry_at, subject, k))
        }
        Observed::TableFallThrough { at, entry, entry_at, scenario, subject, k } => {
            Some(table_fall_through(at.clone(), entry, entry_at, scenario, subject, k))
        }
        Observed::TableValueMissing { at, value, table } => Some(table_value(at.clone(), value, table)),
        Observed::RecipeWithoutPin { at, entry, entry_at, recipe } => {
            Some(agentic_recipe(at.clone(), entry, entry_at, recipe))
        }
        Observed::ScriptWithoutPin { at, entry, entry_at, script, spec } => {
            Some(agentic_script(at.clone(), entry, entry_at, script, spec))
        }
        Observed::ScriptWithoutEnginePin { at, entry, entry_at, script, engine, knobs } => {
            Some(engine_pin(at.clone(), entry, entry_at, script, engine, knobs))
        }
        Observed::SharedCodeWithoutPin { at, entry, entry_at, engine, knobs, path } => {
            Some(shared_code(at.clone(), entry, entry_at, engine, knobs, path))
        }
        _ => None,
    });
    found.collect()
}

/// An entry's k that no arm of a lookup table matches (`subject` the table's key as written).
pub(crate) fn table_arm(at: Location, entry: &str, entry_at: &str, subject: &str, k: &str) -> Finding {
    Finding::new(
        Class::MissingPin,
        at,
        format!(
            "entry {entry} ({entry_at}) runs with {subject} = {k}, which no arm of this table matches: that k runs with real acceptance instead of a pin"
        ),
    )
}

/// A table with no arm for `subject` = `k`, which entry `entry` (a `scenario` run the table's guard
/// keeps out) runs a model the table serves at.
pub(crate) fn table_fall_through(
    at: Location,
    entry: &str,
    entry_at: &str,
    scenario: &str,
    subject: &str,
    k: &str,
) -> Finding {
    Finding::new(
        Class::MissingPin,
        at,
        format!(
            "no table entry for {subject} = {k}: entry {entry} ({entry_at}) runs this model at that value on the same launch code, kept out of the table only by its guard ({scenario}); a run of this model at that k that reaches the table falls back to real acceptance instead of a pin"
        ),
    )
}

/// A table lookup that comes out empty for this k (`value` its text, `table` where the table is).
pub(crate) fn table_value(at: Location, value: &str, table: &str) -> Finding {
    Finding::new(
        Class::MissingPin,
        at,
        format!("{value} (table at {table}): this k runs with real acceptance instead of a pin"),
    )
}

/// An agentic entry running `recipe` with speculative decoding and no pin.
pub(crate) fn agentic_recipe(at: Location, entry: &str, entry_at: &str, recipe: &str) -> Finding {
    Finding::new(
        Class::MissingPin,
        at,
        format!(
            "entry {entry} ({entry_at}) runs {recipe} with speculative decoding, but nothing pins its acceptance: this agentic run measures real acceptance"
        ),
    )
}

/// An agentic entry running `script` with spec-decoding method `spec` and no pin.
pub(crate) fn agentic_script(at: Location, entry: &str, entry_at: &str, script: &str, spec: &str) -> Finding {
    Finding::new(
        Class::MissingPin,
        at,
        format!(
            "entry {entry} ({entry_at}) runs {script} with spec-decoding {spec}, but it pins no synthetic acceptance: this agentic run measures real acceptance"
        ),
    )
}

/// An agentic entry whose script spells pin knobs but none `engine` reads (`knobs`) for it.
pub(crate) fn engine_pin(
    at: Location,
    entry: &str,
    entry_at: &str,
    script: &str,
    engine: &str,
    knobs: &str,
) -> Finding {
    Finding::new(
        Class::MissingPin,
        at,
        format!(
            "entry {entry} ({entry_at}) runs {script} on {engine}, which reads its pin from {knobs}; the knobs the script writes are not that, or do not reach this entry: no pin, this agentic run measures real acceptance"
        ),
    )
}

/// An agentic entry whose shared launch code (`path`) configures `engine`'s speculation at `at` and
/// writes none of the `knobs` it reads.
pub(crate) fn shared_code(at: Location, entry: &str, entry_at: &str, engine: &str, knobs: &str, path: &str) -> Finding {
    Finding::new(
        Class::MissingPin,
        at,
        format!(
            "entry {entry} ({entry_at}) is served by shared launch code ({path}) that configures {engine} speculation here, but no file on that path writes a knob {engine} reads ({knobs}): no pin, this agentic run measures real acceptance"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_missing_pin_says_the_run_measures_real_acceptance() {
        let at = Location::new("a.sh", 3);
        let findings = [
            table_arm(at.clone(), "e", "c.yaml:4", "NUM_SPEC", "5"),
            table_value(at.clone(), "AL[5]", "a.sh:9"),
            table_fall_through(at.clone(), "e", "c.yaml:4", "fixed-seq-len", "K", "1"),
            agentic_recipe(at.clone(), "e", "c.yaml:4", "r.yaml"),
            agentic_script(at.clone(), "e", "c.yaml:4", "a.sh", "mtp"),
            engine_pin(at.clone(), "e", "c.yaml:4", "a.sh", "vLLM", "synthetic_acceptance_length"),
            shared_code(at, "e", "c.yaml:4", "SGLang", "SGLANG_SIMULATE_ACC_LEN", "a.sh → b.sh"),
        ];
        assert!(findings.iter().all(|f| f.class == Class::MissingPin && f.message.contains("real acceptance")));
    }
}
