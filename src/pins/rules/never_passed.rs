//! **Class 7** · error.
//!
//! A variable holds the AL but no engine flag or variable uses it: the run verifies for real while the
//! benchmark believes it is pinned.
//!
//! Example: `SPEC_DECODE_AL=2.83` is set, but the server command line has no
//! `--spec-decode-acceptance-length "$SPEC_DECODE_AL"`.
//!
//! Fix: pass the variable to the engine, or delete it.
//!
//! Allow: `# alsim: allow never-passed -- REASON` at the end of the line the finding names, or alone on
//! the line above it; or an entry of the allow-list file (`.alsim-allow.yaml`, or `--allow FILE`):
//! `- {file: benchmarks/single_node/launch.sh, class: never-passed, reason: the engine reads it from
//! the environment}`.
//
// The rule finds a value computed or written but never handed to the engine — an injected length the
// injector skips, a knob never exported, a variable holding the pin that no command reads.

use crate::pins::Inventory;
use crate::pins::observed::Observed;
use crate::pins::{Class, Finding, Location};

/// Values written or computed that never reach the engine.
pub(crate) fn run(inventory: &Inventory) -> Vec<Finding> {
    let found = inventory.observed.iter().filter_map(|o| match o {
        Observed::InjectorDisabled { at, value } => Some(injector_disabled(at.clone(), value)),
        Observed::InjectorNotCalled { at, entry, launcher, value } => {
            Some(injector_not_called(at.clone(), entry, launcher, value))
        }
        Observed::NotInjectable { at, value, recipe, why } => Some(not_injectable(at.clone(), value, recipe, why)),
        Observed::VariableUnused { at, name, value } => Some(variable_unused(at.clone(), name, value)),
        Observed::NotExported { at, name } => Some(not_exported(at.clone(), name)),
        Observed::NotForwarded { at, name, container, tool, env_file } => {
            Some(not_forwarded(at.clone(), name, container, tool, env_file.as_deref()))
        }
        Observed::CarrierUnused { at, carrier } => Some(carrier_unused(at.clone(), carrier)),
        _ => None,
    });
    found.collect()
}

/// `SYNTHETIC_ACCEPTANCE_LENGTH` in a master config without `SYNTHETIC_ACCEPTANCE=true`.
pub(crate) fn injector_disabled(at: Location, value: &str) -> Finding {
    Finding::new(
        Class::NeverPassed,
        at,
        format!("SYNTHETIC_ACCEPTANCE_LENGTH={value} without SYNTHETIC_ACCEPTANCE=true: the injector never writes it"),
    )
}

/// An injected length of an entry whose launcher never calls the injector.
pub(crate) fn injector_not_called(at: Location, entry: &str, launcher: &str, value: &str) -> Finding {
    Finding::new(
        Class::NeverPassed,
        at,
        format!(
            "entry {entry} runs on {launcher}, which never calls the injector: SYNTHETIC_ACCEPTANCE_LENGTH={value} is never written"
        ),
    )
}

/// An injected length the injector cannot write into `recipe`, for `why`.
pub(crate) fn not_injectable(at: Location, value: &str, recipe: &str, why: &str) -> Finding {
    Finding::new(Class::NeverPassed, at, format!("SYNTHETIC_ACCEPTANCE_LENGTH={value} for {recipe}: {why}"))
}

/// A variable whose name says it holds an AL, assigned a number no engine flag uses.
pub(crate) fn variable_unused(at: Location, name: &str, value: &str) -> Finding {
    Finding::new(Class::NeverPassed, at, format!("{name} = {value} is computed but no engine flag uses it"))
}

/// An environment knob assigned but never exported.
pub(crate) fn not_exported(at: Location, name: &str) -> Finding {
    Finding::new(Class::NeverPassed, at, format!("{name} is set but never exported: the engine never sees it"))
}

/// A knob exported on the host while the engine runs in a container started without it (`env_file`:
/// what the env files it is given hold instead).
pub(crate) fn not_forwarded(
    at: Location,
    name: &str,
    container: &Location,
    tool: &str,
    env_file: Option<&str>,
) -> Finding {
    let given = env_file.map_or_else(
        || format!("which is not given it (-e {name}, --env, --env-file)"),
        |held| format!("whose {held}, not {name}"),
    );
    Finding::new(
        Class::NeverPassed,
        at,
        format!(
            "{name} is exported on the host, but the engine starts in the container of `{tool}` at {container}, {given}: the engine never sees it"
        ),
    )
}

/// A variable that holds the pin but that no command passes on.
pub(crate) fn carrier_unused(at: Location, carrier: &str) -> Finding {
    Finding::new(Class::NeverPassed, at, format!("{carrier} holds the pin but is never passed to the engine"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_way_of_never_reaching_the_engine_is_an_error_naming_the_value() {
        let at = Location::new("a.sh", 3);
        let findings = [
            injector_disabled(at.clone(), "2.4"),
            injector_not_called(at.clone(), "e", "runners/x.sh", "2.4"),
            not_injectable(at.clone(), "2.4", "r.yaml", "no role runs speculative decoding"),
            variable_unused(at.clone(), "AL", "2.4"),
        ];
        assert!(findings.iter().all(|f| f.class == Class::NeverPassed && f.message.contains("2.4")));
        assert!(not_exported(at.clone(), "SGLANG_SIMULATE_ACC_LEN").message.contains("never exported"));
        assert!(carrier_unused(at.clone(), "ACC").message.starts_with("ACC holds the pin"));
        let container = Location::new("a.sh", 9);
        assert!(
            not_forwarded(at.clone(), "X", &container, "docker run", None).message.contains("a.sh:9, which is not")
        );
        let held = "--env-file $F (written at a.sh:5) holds A";
        assert!(not_forwarded(at, "X", &container, "docker run", Some(held)).message.contains("holds A, not X"));
    }
}
