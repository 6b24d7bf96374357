//! **Class 8** · error.
//!
//! The pin also applies to accuracy (`EVAL_ONLY`) runs. A pinned run emits draft tokens the target
//! never verified, so its output text is meaningless and its eval scores collapse. A hard-coded recipe
//! pin with no guard is a leak even when that config's eval is not enabled yet: it breaks the day it
//! is.
//!
//! Example (InferenceX): a recipe sets `SGLANG_SIMULATE_ACC_LEN` in its environment; the master-config
//! entry that runs it names no `EVAL_CONFIG_FILE` twin, and its launcher does not strip the variable.
//!
//! Fix: put the pin behind `if [ "${EVAL_ONLY}" != "true" ]` in scripts, inject it from the master
//! config (the injector skips eval runs) instead of hard-coding it, or give the config an eval twin
//! without it.
//!
//! Allow: `# alsim: allow eval-leak -- REASON` at the end of the line the finding names, or alone on
//! the line above it; or an entry of the allow-list file (`.alsim-allow.yaml`, or `--allow FILE`):
//! `- {file: benchmarks/multi_node/srt-slurm-recipes/*, class: eval-leak, reason: these configs never
//! run evals}`.
//
// The rule finds a pin that also reaches `EVAL_ONLY` runs (eval scores would be measured with
// synthetic acceptance), or an eval twin that carries one. Discovery decides the route (`EvalRoute`); this rule
// reports a pin whose route leaks, once per location.

use crate::pins::Inventory;
use crate::pins::{Class, EvalRoute, Finding, Pin};

/// Every location whose pin reaches eval runs, once.
pub(crate) fn run(inventory: &Inventory) -> Vec<Finding> {
    let mut leaked = std::collections::BTreeSet::new();
    let found = inventory.pins.iter().filter_map(|pin| finding(pin).filter(|_| leaked.insert(&pin.location)));
    found.collect()
}

/// The finding of a pin whose route to the engine does not keep eval runs off it.
pub(crate) fn finding(pin: &Pin) -> Option<Finding> {
    (pin.eval.value == Some(EvalRoute::Leaks)).then(|| {
        Finding::new(
            Class::EvalLeak,
            pin.location.clone(),
            format!(
                "{} reaches EVAL_ONLY runs ({}): eval scores would use synthetic acceptance; set it only when EVAL_ONLY is not true, give the entry an EVAL_CONFIG_FILE twin without it, or strip it in the launcher",
                pin.knob.name(),
                pin.eval.text
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::ThinkingMode;
    use crate::pins::rules::testing::pin;
    use crate::pins::{Fact, How};

    #[test]
    fn only_a_leaking_route_is_a_finding() {
        let mut p = pin(2.0, 3, ThinkingMode::On);
        assert!(finding(&p).is_none(), "guarded");
        p.eval = Fact::known(EvalRoute::Leaks, How::Inferred, "nothing drops it", None);
        let f = finding(&p).expect("leaks");
        assert!(f.message.contains("reaches EVAL_ONLY runs (nothing drops it)"), "{}", f.message);
    }
}
