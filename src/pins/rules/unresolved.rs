//! The check's own · warning · exit status 3.
//!
//! A fact the verdict needs (k, model, drafter, thinking mode, the value itself) could not be decided,
//! and the finding names it. The check never guesses silently.
//!
//! Example (InferenceX): a MiniMax-M3 TensorRT-LLM script and its deployment state no thinking mode,
//! and alsim knows no documented default for that model, so its pin cannot be checked. That is the
//! model's fact, so it is said once, at the model's first such pin, naming the others; each other
//! pin gets a note pointing there.
//!
//! Fix: state the fact where the check can read it, such as a literal k or the model in the config
//! entry.
//!
//! Allow: `# alsim: allow unresolved -- REASON` at the end of the line the finding names, or alone on
//! the line above it; or an entry of the allow-list file (`.alsim-allow.yaml`, or `--allow FILE`):
//! `- {file: benchmarks/single_node/minimaxm3_fp4_b200_trt_mtp.sh, class: unresolved, reason: the
//! harness sets the thinking mode}`. An allowed `unresolved` no longer makes the exit status 3.
//
// The rule finds a fact the check could not decide — a pin's value, k, model, golden curve or
// thinking mode, or a file a run needs that the repository does not hold — so what rests on it is not checked.

use super::Judgement;
use crate::pins::Inventory;
use crate::pins::observed::Observed;
use crate::pins::resolve::subject::{Undecided, no_default};
use crate::pins::verdict::ValueVerdict;
use crate::pins::{Class, Finding, Location, Pin, Severity};

/// Files a run needs that the repository does not hold, and includes that could not be followed (a pin's
/// own undecided facts are judged with its value: [`undecided`]).
pub(crate) fn run(inventory: &Inventory) -> Vec<Finding> {
    let found = inventory.observed.iter().filter_map(|o| match o {
        Observed::EvalTwinMissing { at, twin, entry } => Some(eval_twin_missing(at.clone(), twin, entry)),
        Observed::RecipeMissing { at, recipe, entry } => Some(recipe_missing(at.clone(), recipe, entry)),
        Observed::LauncherUnknown { at, runner, entry } => Some(launcher_unknown(at.clone(), runner, entry)),
        Observed::ScriptMissing { at, entry, launcher, tried } => {
            Some(script_missing(at.clone(), entry, launcher, tried))
        }
        Observed::IncludeUnresolved { at, written, why } => Some(include(at.clone(), written, why)),
        Observed::ForwardUnresolved { at, name, container, tool, why } => {
            Some(forward(at.clone(), name, container, tool, why))
        }
        _ => None,
    });
    let mut said = std::collections::BTreeSet::new();
    let routes = inventory.pins.iter().filter(|p| p.eval.value.is_none() && said.insert(&p.location)).map(eval_route);
    found.chain(routes).collect()
}

/// A pin whose way to eval runs passes a step the check cannot read: whether it leaks is not decided.
fn eval_route(pin: &Pin) -> Finding {
    Finding::new(
        Class::Unresolved,
        pin.location.clone(),
        format!(
            "whether {} reaches EVAL_ONLY runs is unresolved ({}): an eval-leak cannot be ruled in or out",
            pin.knob.name(),
            pin.eval.text
        ),
    )
}

/// A pin whose facts stopped at `u`: the registry's last rule for an undecided fact, so it always applies.
pub(crate) fn undecided(pin: &Pin, u: &Undecided) -> Option<Judgement> {
    let finding = fact(pin.location.clone(), u.what, &u.why);
    Some(Judgement::new(ValueVerdict::Unresolved, vec![finding], false))
}

/// A model with no known default is said once, not once per pin: of the pins (each with its golden model
/// key, whether its thinking mode stayed undecided for want of that model's default
/// ([`Undecided::for_want_of_default`]) and its findings, in the check's order), those so marked are
/// grouped by key; the first of a group keeps its warning, naming the others, and each other gets a note
/// pointing there. A model with one such pin is left as it is.
pub(crate) fn once_per_model<'a>(judged: impl IntoIterator<Item = (Option<&'a str>, bool, &'a mut Vec<Finding>)>) {
    let mut by_model: Vec<(&str, Vec<(&mut Finding, Location)>)> = Vec::new();
    for (key, for_want_of_default, findings) in judged {
        let Some(key) = key.filter(|_| for_want_of_default) else { continue };
        // The undecided fact's own finding ([`undecided`]); a pin an earlier rule judged has none.
        let Some(finding) = findings.iter_mut().find(|f| f.class == Class::Unresolved) else { continue };
        let at = finding.location.clone();
        match by_model.iter_mut().find(|(k, _)| *k == key) {
            Some((_, group)) => group.push((finding, at)),
            None => by_model.push((key, vec![(finding, at)])),
        }
    }
    for (key, mut group) in by_model.into_iter().filter(|(_, group)| group.len() > 1) {
        let first = group[0].1.clone();
        let others: Vec<String> = group[1..].iter().map(|(_, at)| at.to_string()).collect();
        for (finding, _) in &mut group[1..] {
            let said = format!("thinking mode unresolved: {} (said once for the model, at {first})", no_default(key));
            **finding = Finding::new(Class::Unresolved, finding.location.clone(), said).with_severity(Severity::Note);
        }
        let (finding, _) = &mut group[0];
        finding.message.push_str(&format!(
            "; the same holds for {} more pin{} of {key}, said here once ({})",
            others.len(),
            if others.len() == 1 { "" } else { "s" },
            others.join(", ")
        ));
    }
}

/// A pin's fact `what` undecided for `why`.
fn fact(at: Location, what: &str, why: &str) -> Finding {
    Finding::new(Class::Unresolved, at, format!("{what} unresolved ({why}): the pin cannot be checked"))
}

/// An entry's `EVAL_CONFIG_FILE` the repository does not hold.
pub(crate) fn eval_twin_missing(at: Location, twin: &str, entry: &str) -> Finding {
    Finding::new(
        Class::Unresolved,
        at,
        format!("EVAL_CONFIG_FILE={twin} of entry {entry}: the eval twin is not in the repository"),
    )
}

/// An entry's recipe the repository does not hold.
pub(crate) fn recipe_missing(at: Location, recipe: &str, entry: &str) -> Finding {
    Finding::new(
        Class::Unresolved,
        at,
        format!("recipe {recipe} of entry {entry} is not in the repository: its pins cannot be checked"),
    )
}

/// An entry whose runner label names no launcher.
pub(crate) fn launcher_unknown(at: Location, runner: &str, entry: &str) -> Finding {
    Finding::new(
        Class::Unresolved,
        at,
        format!(
            "runner label {runner} of entry {entry} names no launcher under runners/: its launch script is unknown"
        ),
    )
}

/// An entry whose launcher's script was not found under any of the names tried.
pub(crate) fn script_missing(at: Location, entry: &str, launcher: &str, tried: &str) -> Finding {
    Finding::new(Class::Unresolved, at, format!("entry {entry} on {launcher}: no launch script found (tried {tried})"))
}

/// A knob exported on the host for a container given an env file whose names are not read.
fn forward(at: Location, name: &str, container: &Location, tool: &str, why: &str) -> Finding {
    Finding::new(
        Class::Unresolved,
        at,
        format!(
            "whether {name} reaches the engine in the container of `{tool}` at {container} is unresolved ({why}): a never-passed cannot be ruled in or out"
        ),
    )
}

/// A `source`d file that could not be followed.
pub(crate) fn include(at: Location, written: &str, why: &str) -> Finding {
    Finding::new(Class::Unresolved, at, format!("source {written} unresolved ({why}): what it sets is not read"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::ThinkingMode;
    use crate::pins::resolve::subject::Range;
    use crate::pins::rules::testing::pin;

    #[test]
    fn an_undecided_fact_is_named_with_why() {
        let why = "NUM_SPEC comes from the caller".into();
        let u = Undecided { what: "k", why, range: None, range_judged: false, for_want_of_default: false };
        let j = undecided(&pin(2.0, 3, ThinkingMode::On), &u).expect("the last rule always applies");
        assert_eq!((j.verdict, j.findings[0].class), (ValueVerdict::Unresolved, Class::Unresolved));
        assert_eq!(j.findings[0].message, "k unresolved (NUM_SPEC comes from the caller): the pin cannot be checked");
    }

    /// The pins said once are those marked undecided for want of their model's default, whatever their
    /// messages say: a pin of the same model whose finding reads the same but is not so marked is not
    /// grouped, and a marked pin an earlier rule judged (no unresolved finding) is passed over.
    #[test]
    fn a_model_without_a_default_is_said_once_over_the_pins_marked_for_want_of_it() {
        let range = Range { written: 2.0, implied: 2.0, k: 3 };
        let judged = |line, u: &Undecided| {
            let mut p = pin(2.0, 3, ThinkingMode::On);
            p.location = Location::new("s.sh", line);
            (u.for_want_of_default, undecided(&p, u).expect("the last rule always applies").findings)
        };
        let marked = Undecided::mode_without_default("no template states it", "m3", range);
        let unmarked = Undecided { for_want_of_default: false, ..Undecided::mode_without_default("", "m3", range) };
        let (mut a, mut b, mut quoting) = (judged(1, &marked), judged(2, &marked), judged(4, &unmarked));
        let mut earlier = (true, vec![Finding::new(Class::OutOfRange, Location::new("s.sh", 3), "AL 9 > k + 1")]);
        let quoted = quoting.1[0].message.clone();
        assert!(quoted.contains(&no_default("m3")), "{quoted}");
        once_per_model([&mut a, &mut b, &mut earlier, &mut quoting].map(|(m, f)| (Some("m3"), *m, f)));
        assert!(a.1[0].message.ends_with("said here once (s.sh:2)"), "{}", a.1[0].message);
        assert_eq!(b.1[0].severity, Severity::Note);
        assert!(b.1[0].message.contains("(said once for the model, at s.sh:1)"), "{}", b.1[0].message);
        assert_eq!((earlier.1[0].class, earlier.1[0].message.as_str()), (Class::OutOfRange, "AL 9 > k + 1"));
        assert_eq!((quoting.1[0].severity, &quoting.1[0].message), (Severity::Warning, &quoted));
    }
}
