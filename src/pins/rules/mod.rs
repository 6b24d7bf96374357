//! Judgement, one module per finding class (as ruff keeps one file per rule): each decides over facts
//! discovery resolved and words its class's findings. No finding of the pin check is made outside these
//! modules (a test below holds the rest of `pins` to that).
//!
//! One registry ([`REGISTRY`], as ruff's `codes.rs` names every rule) gives each class its rules and the
//! stage of the check that runs each ([`Rule`]), and every stage dispatches through it: the scan has the
//! rules over the inventory judge it ([`run`]): discovery records what it read as plain records
//! (`crate::pins::observed`) and pins, and each rule decides from those alone whether they are findings of
//! its class. The check judges each pin's value ([`judge`]), then the golden curves' own problems
//! ([`curves`]) and the allow-list entries that sanction nothing ([`allow_list`]); the comparison under
//! `--base` judges what only two trees decide ([`allow_changes`], [`dropped`]).
//!
//! A pin's value is judged over its [`Resolution`], step by step ([`Step`]), each step's rules in the
//! registry's order: a fact that stayed undecided is `unresolved`, unless the value is out of [1, k+1]
//! whatever the golden value. With every fact known, the decisive rules run — an effort the curve was not
//! collected at, a value outside [1, k+1], a rates list the engine refuses or that is another k's chain, a
//! chain off its golden positions; a value on its golden AL is then `ok` (with the caveats of what was
//! assumed), one right only under the other draft sampling `unconfirmed`, and one off its golden AL takes
//! the class of the first explanation that matches, else `mismatch`. The two last resorts are registry
//! rules too, the last of their steps, that always apply: `unresolved`'s for an undecided fact, and
//! `mismatch`'s for a value no other curve explains.

pub(crate) mod allow_changed;
pub(crate) mod assumption;
pub(crate) mod curve_problem;
pub(crate) mod drift;
pub(crate) mod dropped_file;
pub(crate) mod duplicate_key;
pub(crate) mod eval_leak;
pub(crate) mod inert;
pub(crate) mod mismatch;
pub(crate) mod missing_pin;
pub(crate) mod never_passed;
pub(crate) mod out_of_range;
pub(crate) mod spelling;
pub(crate) mod stale_allow;
pub(crate) mod unreadable;
pub(crate) mod unresolved;
pub(crate) mod wrong_drafter;
pub(crate) mod wrong_k;
pub(crate) mod wrong_model;
pub(crate) mod wrong_thinking_mode;

pub(crate) use dropped_file::DroppedBy;

use super::allow::{AllowEntry, AllowList};
use super::curves::{CurveEntry, CurveProblem};
use super::rates;
use super::resolve::subject::{Resolution, Subject, Undecided};
use super::verdict::ValueVerdict;
use super::{Class, Finding, Inventory, Knob, Pin, plain_number};
use crate::curve::CurveSet;
use crate::pins::resolve::lookup::{describe_query, short};

/// A class's rule, by the stage of the check that runs it (as ruff's `codes.rs` names each rule's source).
#[derive(Clone, Copy)]
pub(crate) enum Rule {
    /// The scan, once discovery has recorded the tree: the findings of the inventory's records and pins
    /// ([`run`]).
    Inventory(fn(&Inventory) -> Vec<Finding>),
    /// The check of each pin's value ([`judge`]), at one of its steps.
    Value(Step),
    /// The check, once every pin is judged: the golden curves' own problems, told the entries that pins'
    /// expected values rest on ([`curves`]).
    Curves(fn(&[CurveProblem], &[CurveEntry]) -> Vec<Finding>),
    /// The check, once the allow-list is applied: the entries that sanctioned nothing ([`allow_list`]).
    AllowList(fn(&[&AllowEntry]) -> Vec<Finding>),
    /// The comparison under `--base`, of what only two trees decide.
    Comparison(Comparison),
}

/// A rule over one pin's value, by the step of [`judge`] that runs it. Within a step the rules run in the
/// registry's order, and the first that applies decides.
#[derive(Clone, Copy)]
pub(crate) enum Step {
    /// A fact stayed undecided: the verdict, when the rule applies (`unresolved`'s, the last, always does).
    Undecided(fn(&Pin, &Undecided) -> Option<Judgement>),
    /// Every fact known: the verdict, when the rule applies, before the value is compared with its golden AL.
    Decides(fn(&Subject, &CurveSet) -> Option<Judgement>),
    /// A value on its golden AL: the caveats of what was assumed.
    Caveats(fn(&Subject, &CurveSet) -> Vec<Finding>),
    /// A value off its golden AL: the verdict, when it is right under what was not confirmed.
    Unconfirmed(fn(&Subject, &CurveSet) -> Option<Judgement>),
    /// A value off its golden AL: why, when it is another curve's (`mismatch`'s, the last, always says).
    Explains(fn(&Subject, &CurveSet) -> Option<String>),
}

/// A rule of the comparison under `--base`.
#[derive(Clone, Copy)]
pub(crate) enum Comparison {
    /// The working tree's allow entries that no entry of the base covers over the tree's files
    /// ([`allow_changes`]).
    AllowChanges(fn(&AllowList, &AllowList, &[String]) -> Vec<Finding>),
    /// A file the base checked that the working tree still has but drops ([`dropped`]).
    Dropped(fn(&str, &str, DroppedBy) -> Finding),
}

/// Every class and its rules, one entry per class. The order is the order the rules of a stage run in:
/// for a pin's value it decides which class a value takes (the effort the curve was not collected at
/// before a value outside [1, k+1], and the explanations of a value off its golden AL in the order of
/// docs/pins.md's classes about a value: spelling, drafter, thinking mode, k, model).
pub(crate) const REGISTRY: [(Class, &[Rule]); 20] = [
    (Class::Spelling, &[Rule::Inventory(spelling::run), Rule::Value(Step::Explains(spelling::value))]),
    (Class::WrongDrafter, &[Rule::Value(Step::Explains(wrong_drafter::value))]),
    (
        Class::WrongThinkingMode,
        &[
            Rule::Value(Step::Decides(wrong_thinking_mode::effort)),
            Rule::Value(Step::Explains(wrong_thinking_mode::value)),
        ],
    ),
    (
        Class::OutOfRange,
        &[
            Rule::Value(Step::Undecided(out_of_range::undecided)),
            Rule::Value(Step::Decides(out_of_range::value)),
            Rule::Value(Step::Decides(out_of_range::refused_list)),
        ],
    ),
    (Class::WrongK, &[Rule::Value(Step::Decides(wrong_k::list)), Rule::Value(Step::Explains(wrong_k::value))]),
    (Class::WrongModel, &[Rule::Value(Step::Explains(wrong_model::value))]),
    (
        Class::Mismatch,
        &[Rule::Value(Step::Decides(mismatch::chain)), Rule::Value(Step::Explains(mismatch::unexplained))],
    ),
    (
        Class::Assumption,
        &[Rule::Value(Step::Caveats(assumption::caveats)), Rule::Value(Step::Unconfirmed(assumption::unconfirmed))],
    ),
    (Class::NeverPassed, &[Rule::Inventory(never_passed::run)]),
    (Class::EvalLeak, &[Rule::Inventory(eval_leak::run)]),
    (Class::MissingPin, &[Rule::Inventory(missing_pin::run)]),
    (Class::Drift, &[Rule::Inventory(drift::run)]),
    (Class::Unreadable, &[Rule::Inventory(unreadable::run)]),
    (Class::Unresolved, &[Rule::Inventory(unresolved::run), Rule::Value(Step::Undecided(unresolved::undecided))]),
    (Class::DuplicateKey, &[Rule::Inventory(duplicate_key::run)]),
    (Class::Inert, &[Rule::Inventory(inert::run)]),
    (Class::StaleAllow, &[Rule::Inventory(stale_allow::run), Rule::AllowList(stale_allow::unused)]),
    (Class::CurveProblem, &[Rule::Curves(curve_problem::run)]),
    (Class::AllowChanged, &[Rule::Comparison(Comparison::AllowChanges(allow_changed::findings))]),
    (Class::DroppedFile, &[Rule::Comparison(Comparison::Dropped(dropped_file::dropped))]),
];

/// The rules of the registry that `pick` takes (one stage's), in the registry's order.
fn rules<T>(pick: impl Fn(Rule) -> Option<T>) -> impl Iterator<Item = T> {
    REGISTRY.iter().flat_map(|(_, rules)| rules.iter().copied()).filter_map(pick)
}

/// The rules of the step of [`judge`] that `pick` takes, in the registry's order.
fn steps<T>(pick: impl Fn(Step) -> Option<T>) -> impl Iterator<Item = T> {
    rules(move |rule| if let Rule::Value(step) = rule { pick(step) } else { None })
}

/// Every finding the inventory's records and pins make, rule by rule.
pub(crate) fn run(inventory: &Inventory) -> Vec<Finding> {
    let inventory_rules = rules(|rule| if let Rule::Inventory(rule) = rule { Some(rule) } else { None });
    inventory_rules.flat_map(|rule| rule(inventory)).collect()
}

/// The findings of the golden curves' own `problems`, told the entries pins' expected values rest on.
pub(crate) fn curves(problems: &[CurveProblem], used: &[CurveEntry]) -> Vec<Finding> {
    let curve_rules = rules(|rule| if let Rule::Curves(rule) = rule { Some(rule) } else { None });
    curve_rules.flat_map(|rule| rule(problems, used)).collect()
}

/// The findings of the allow entries that sanctioned nothing.
pub(crate) fn allow_list(unused: &[&AllowEntry]) -> Vec<Finding> {
    let allow_rules = rules(|rule| if let Rule::AllowList(rule) = rule { Some(rule) } else { None });
    allow_rules.flat_map(|rule| rule(unused)).collect()
}

/// Under `--base`: the findings of the working tree's allow entries (`head`) that the base's do not cover.
pub(crate) fn allow_changes(head: &AllowList, base: &AllowList, files: &[String]) -> Vec<Finding> {
    let compare_rules =
        rules(|rule| if let Rule::Comparison(Comparison::AllowChanges(rule)) = rule { Some(rule) } else { None });
    compare_rules.flat_map(|rule| rule(head, base, files)).collect()
}

/// Under `--base`: the findings of `rel`, checked at `base`, being dropped from the working tree's check.
pub(crate) fn dropped(rel: &str, base: &str, by: DroppedBy) -> Vec<Finding> {
    let compare_rules =
        rules(|rule| if let Rule::Comparison(Comparison::Dropped(rule)) = rule { Some(rule) } else { None });
    compare_rules.map(|rule| rule(rel, base, by)).collect()
}

/// A value's verdict and the findings it rests on.
#[derive(Debug)]
pub(crate) struct Judgement {
    pub(crate) verdict: ValueVerdict,
    pub(crate) findings: Vec<Finding>,
    /// Whether `pins fix` writes the golden value (and chain) in place of the written one.
    pub(crate) fix: bool,
}

impl Judgement {
    fn new(verdict: ValueVerdict, findings: Vec<Finding>, fix: bool) -> Judgement {
        Judgement { verdict, findings, fix }
    }
}

/// The verdict on one pin's value and the findings it makes.
pub(crate) fn judge(pin: &Pin, resolution: &Resolution, curves: &CurveSet) -> Judgement {
    match resolution {
        Resolution::Inert => Judgement::new(ValueVerdict::Inert, Vec::new(), false),
        Resolution::Silent => Judgement::new(ValueVerdict::Unresolved, Vec::new(), false),
        Resolution::Undecided(u) => steps(|step| if let Step::Undecided(rule) = step { Some(rule) } else { None })
            .find_map(|rule| rule(pin, u))
            .expect("the registry's last undecided rule, unresolved's, judges every undecided pin"),
        Resolution::Subject(s) => judge_subject(s, curves),
    }
}

fn judge_subject(s: &Subject, curves: &CurveSet) -> Judgement {
    let mut decisive = steps(|step| if let Step::Decides(rule) = step { Some(rule) } else { None });
    if let Some(judgement) = decisive.find_map(|rule| rule(s, curves)) {
        return judgement;
    }
    if s.matches(s.expected()) {
        let caveats = steps(|step| if let Step::Caveats(rule) = step { Some(rule) } else { None });
        return Judgement::new(ValueVerdict::Ok, caveats.flat_map(|rule| rule(s, curves)).collect(), false);
    }
    let mut unconfirmed = steps(|step| if let Step::Unconfirmed(rule) = step { Some(rule) } else { None });
    if let Some(judgement) = unconfirmed.find_map(|rule| rule(s, curves)) {
        return judgement;
    }
    let explained = REGISTRY.iter().find_map(|(class, rules)| {
        let mut explains =
            rules.iter().filter_map(|rule| if let Rule::Value(Step::Explains(e)) = rule { Some(e) } else { None });
        explains.find_map(|explain| explain(s, curves)).map(|why| (*class, why))
    });
    let (class, why) = explained.expect("the registry's last explanation, mismatch's, explains every value");
    // Where no default decides the served mode, the value is wrong in either mode, but which one to write
    // is not known: no fix.
    Judgement::new(ValueVerdict::Mismatch, vec![off_golden(s, class, why)], s.open.is_none())
}

/// The finding of a value off its golden AL, of the class that explains it.
fn off_golden(s: &Subject, class: Class, why: String) -> Finding {
    let (pin, golden, k) = (&s.pin, &s.golden, s.range.k);
    let want = match pin.knob {
        Knob::TrtllmForceAccepted | Knob::AtomRate => format!(
            "{} (AL {})",
            plain_number(pin.knob.written_for(golden.expected_al, k), 6),
            plain_number(golden.expected_al, 4)
        ),
        _ => plain_number(golden.expected_al, 4),
    };
    let head = format!(
        "{} = {} (AL {}) but the golden value for {} at k = {k} is {want} ({} {}): {why}",
        pin.knob.name(),
        shown_written(pin, s.range.written),
        plain_number(s.range.implied, 4),
        describe_query(&s.query),
        short(&golden.file),
        golden.key,
    );
    let head = match &s.chosen {
        Some(chosen) => format!("{head} ({chosen})"),
        None => head,
    };
    // Every message says which mode the value was judged in and why (a stated setting, a versioned default).
    let head = if s.open.is_none() && !head.contains(&pin.mode.text) {
        format!("{head}; it serves {} ({})", s.curve.mode, pin.mode.text)
    } else {
        head
    };
    let head = match &s.open {
        Some(open) => format!(
            "{head}; no default decides the served mode: {}{}; {}",
            open.mode.why,
            assumption::other_value(open),
            open.mode.decides
        ),
        None => head,
    };
    let head = match &golden.expected_rates {
        Some(list) => format!("{head}; the golden chain to write is {}", rates::shown(list)),
        None => head,
    };
    Finding::new(class, s.pin.location.clone(), head)
}

/// The written value for messages: a rates list as written, else the number.
fn shown_written(pin: &Pin, written: f64) -> String {
    pin.rates.as_deref().map_or_else(|| plain_number(written, 6), rates::shown)
}

#[cfg(test)]
pub(crate) mod testing {
    //! A pin and its resolution over the embedded curves, for the rules' tests.

    use crate::curve::{CurveSet, ThinkingMode};
    use crate::pins::resolve::key;
    use crate::pins::resolve::subject::{self, Resolution, Subject};
    use crate::pins::{EvalRoute, Fact, How, Knob, Location, Mechanism, Pin};

    /// A vLLM pin of `written` at k for MiniMax-M3 with its EAGLE3 drafter, greedy drafting stated.
    pub(crate) fn pin(written: f64, k: usize, mode: ThinkingMode) -> Pin {
        let fact = |v: &str| Fact::known(v.to_string(), How::Literal, "test", None);
        Pin {
            location: Location::new("launch.sh", 7),
            mechanism: Mechanism::Script,
            engine: Fact::known(crate::engine::Engine::Vllm, How::Literal, "test", None),
            knob: Knob::VllmSyntheticLength,
            branch: String::new(),
            role: None,
            written: Fact::known(written, How::Literal, written.to_string(), None),
            k: Fact::known(k, How::Literal, format!("num_speculative_tokens: {k}"), None),
            model: fact("MiniMaxAI/MiniMax-M3"),
            drafter: fact("Inferact/MiniMax-M3-EAGLE3"),
            method: fact("eagle3"),
            draft_sampling: fact("greedy"),
            mode: Fact::known(mode, How::Literal, "test", None),
            effort: Fact::unresolved("not written"),
            eval: Fact::known(EvalRoute::Guarded, How::Literal, "test", None),
            entries: Vec::new(),
            rates: None,
            edit: None,
            notes: Vec::new(),
            arms: Vec::new(),
        }
    }

    /// The embedded curves, read once for every test.
    pub(crate) fn embedded() -> &'static CurveSet {
        static CURVES: std::sync::OnceLock<CurveSet> = std::sync::OnceLock::new();
        CURVES.get_or_init(CurveSet::embedded)
    }

    /// The subject of `pin`, which must resolve.
    pub(crate) fn subject(pin: Pin) -> Subject {
        match subject::resolve(&pin, key::golden_key(&pin, embedded()).as_deref(), embedded(), None, None) {
            Resolution::Subject(s) => *s,
            _ => panic!("the test pin does not resolve"),
        }
    }

    /// MiniMax-M3's golden AL at k.
    pub(crate) fn golden(k: usize, mode: ThinkingMode) -> f64 {
        subject(pin(2.0, k, mode)).expected()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{embedded, golden, pin, subject};
    use super::*;
    use crate::curve::ThinkingMode;

    /// The rules over the inventory read nothing but it: an inventory built by hand, with no tree on disk,
    /// gets one finding per record of each class, at the record's place, and a leaking pin one per place.
    #[test]
    fn the_inventory_rules_judge_an_inventory_built_by_hand() {
        use crate::pins::observed::Observed;
        use crate::pins::{EvalRoute, Fact, How, Inventory, Location};
        let at = |line| Location::new("recipes/r.yaml", line);
        let mut leaking = pin(2.0, 3, ThinkingMode::On);
        leaking.eval = Fact::known(EvalRoute::Leaks, How::Inferred, "nothing drops it", None);
        let inventory = Inventory {
            pins: vec![leaking.clone(), leaking],
            observed: vec![
                Observed::DuplicateKey { at: at(4), key: "decode".into() },
                Observed::InjectorDisabled { at: at(9), value: "2.5".into() },
                Observed::NotSynthetic { at: at(12), knob: Knob::VllmSyntheticLength },
                // Not a problem on its own: only a comment that names another AL than the file pins is.
                Observed::Comment { at: Location::new("launch.sh", 3), text: " k = 3 keeps the AL at 2.0".into() },
            ],
            ..Inventory::default()
        };
        let mut found: Vec<(Class, Option<usize>)> =
            run(&inventory).iter().map(|f| (f.class, f.location.line)).collect();
        found.sort();
        assert_eq!(
            found,
            [
                (Class::Spelling, Some(12)),
                (Class::NeverPassed, Some(9)),
                (Class::EvalLeak, Some(7)),
                (Class::DuplicateKey, Some(4)),
            ]
        );
    }

    #[test]
    fn the_golden_value_is_ok_and_another_value_is_explained_or_a_mismatch() {
        let on = golden(3, ThinkingMode::On);
        let ok = judge_subject(&subject(pin(on, 3, ThinkingMode::On)), embedded());
        assert_eq!((ok.verdict, ok.findings.len(), ok.fix), (ValueVerdict::Ok, 0, false));
        let off = judge_subject(&subject(pin(1.01, 3, ThinkingMode::On)), embedded());
        assert_eq!((off.verdict, off.fix), (ValueVerdict::Mismatch, true));
        assert_eq!(off.findings[0].class, Class::Mismatch);
        assert!(off.findings[0].message.contains(mismatch::UNEXPLAINED), "{}", off.findings[0].message);
    }

    /// The value rules read the subject record and the curves, nothing else: a subject written by hand over
    /// a one-file curve set, with no resolution, is judged ok on its golden AL, wrong in k on another row of
    /// the chosen file, and a mismatch off every row.
    #[test]
    fn a_subject_written_by_hand_is_judged_over_its_curves() {
        use crate::curve::registry::DrafterMatch;
        use crate::curve::{CurveFile, CurveQuery, CurveSet};
        use crate::pins::resolve::subject::{Chosen, FileAt, Range};
        use crate::pins::verdict::GoldenRef;
        let file = CurveFile::parse("hand-model:\n  thinking_on:\n    2: 2.1\n    3: 2.5\n", "hand.yaml", "hand");
        let curves = CurveSet::new(vec![file.expect("the hand-written curve parses")]);
        let subject = |written: f64| Subject {
            pin: pin(written, 3, ThinkingMode::On),
            range: Range { written, implied: written, k: 3 },
            query: CurveQuery {
                model: "hand-model".into(),
                drafter: None,
                method: None,
                draft_sampling: None,
                mode: Some(ThinkingMode::On),
            },
            curve: Chosen { file: FileAt::Searched(0), mode: ThinkingMode::On },
            golden: GoldenRef {
                file: "hand.yaml".into(),
                key: "hand-model.thinking_on.3".into(),
                expected_al: 2.5,
                expected_written: 2.5,
                drafter_match: DrafterMatch::NotAsked,
                expected_rates: None,
                rates_from: None,
            },
            alternative: None,
            open: None,
            chosen: None,
            effort_renders: None,
        };
        let judged = |written| judge_subject(&subject(written), &curves);
        assert_eq!((judged(2.5).verdict, judged(2.5).findings.len()), (ValueVerdict::Ok, 0));
        let other_k = judged(2.1);
        assert_eq!((other_k.verdict, other_k.findings[0].class), (ValueVerdict::Mismatch, Class::WrongK));
        assert!(
            other_k.findings[0].message.contains("hand.yaml hand-model.thinking_on.3"),
            "{}",
            other_k.findings[0].message
        );
        let off = judged(3.3);
        assert_eq!(off.findings[0].class, Class::Mismatch);
        assert!(off.findings[0].message.contains(mismatch::UNEXPLAINED), "{}", off.findings[0].message);
    }

    /// The classes whose rules run at a step of a pin's value, in the order the step tries them.
    fn value_order(at_step: fn(&Step) -> bool) -> Vec<Class> {
        let at = |class: &Class, rules: &[Rule]| {
            let n = rules.iter().filter(|rule| matches!(rule, Rule::Value(step) if at_step(step))).count();
            std::iter::repeat_n(*class, n)
        };
        REGISTRY.iter().flat_map(|(class, rules)| at(class, rules)).collect()
    }

    /// The registry's order is the order a value's rules are tried in, which decides a value's class: an
    /// effort before a range, and a value off its golden AL explained by spelling, then drafter, thinking
    /// mode, k and model (docs/pins.md's classes about a value), else a mismatch.
    #[test]
    fn the_registry_tries_a_values_rules_in_the_documented_order() {
        use Class::*;
        assert_eq!(value_order(|s| matches!(s, Step::Undecided(_))), [OutOfRange, Unresolved]);
        assert_eq!(
            value_order(|s| matches!(s, Step::Decides(_))),
            [WrongThinkingMode, OutOfRange, OutOfRange, WrongK, Mismatch]
        );
        assert_eq!(
            value_order(|s| matches!(s, Step::Explains(_))),
            [Spelling, WrongDrafter, WrongThinkingMode, WrongK, WrongModel, Mismatch]
        );
        // MiniMax-M3's k = 1 value with thinking off is also another model's: the thinking mode, tried
        // first, names it.
        let both = subject(pin(golden(1, ThinkingMode::Off), 1, ThinkingMode::On));
        assert!(
            wrong_thinking_mode::value(&both, embedded()).is_some() && wrong_model::value(&both, embedded()).is_some()
        );
        let judged = judge_subject(&both, embedded());
        assert_eq!(judged.findings[0].class, WrongThinkingMode, "{}", judged.findings[0].message);
    }

    /// Each class has exactly one entry in the registry, and its rules are its own rule file's functions
    /// (read from the registry's source, since a function pointer does not name its module).
    #[test]
    fn each_class_has_one_registry_entry_of_its_own_rule_file() {
        let mut classes: Vec<Class> = REGISTRY.iter().map(|(class, _)| *class).collect();
        classes.sort();
        let mut all = Class::ALL.to_vec();
        all.sort();
        assert_eq!(classes, all, "registry entries and classes");
        assert!(REGISTRY.iter().all(|(_, rules)| !rules.is_empty()), "a class without a rule");
        let text = include_str!("mod.rs");
        let start = text.find("pub(crate) const REGISTRY").unwrap();
        let registry = &text[start..start + text[start..].find("];").unwrap()];
        let entries: Vec<&str> = registry.split("Class::").skip(1).collect();
        assert_eq!(entries.len(), Class::ALL.len());
        for entry in entries {
            let variant = entry.split(',').next().unwrap();
            let class = *Class::ALL.iter().find(|c| format!("{c:?}") == variant).unwrap();
            let file = class.name().replace('-', "_");
            let named: Vec<&str> = entry
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .filter_map(|path| path.split_once("::").map(|(module, _)| module))
                .filter(|module| !["Rule", "Step", "Comparison", "Class"].contains(module))
                .collect();
            assert!(!named.is_empty(), "{variant}: no rule named");
            assert!(named.iter().all(|m| *m == file), "{variant}'s entry names rules of {named:?}, not of {file}.rs");
        }
    }

    /// Each class has exactly one rule file, each rule file is a class's, and the rule's doc is the class's
    /// section of docs/pins.md, word for word: what `alsim explain CLASS` prints.
    #[test]
    fn each_class_has_one_rule_file_that_documents_it_as_the_pins_page_does() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/pins/rules");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path().file_stem().unwrap().to_string_lossy().into_owned())
            .filter(|stem| stem != "mod")
            .collect();
        files.sort();
        let mut classes: Vec<String> = Class::ALL.iter().map(|c| c.name().replace('-', "_")).collect();
        classes.sort();
        assert_eq!(files, classes, "rule files and classes");
        for class in Class::ALL {
            let text = std::fs::read_to_string(dir.join(format!("{}.rs", class.name().replace('-', "_")))).unwrap();
            let doc: Vec<&str> =
                text.lines().map_while(|l| l.strip_prefix("//!")).map(|l| l.strip_prefix(' ').unwrap_or(l)).collect();
            let topic = crate::explain::find(class.name()).unwrap();
            let (heading, body) = topic.text.split_once('\n').unwrap();
            assert_eq!(heading, format!("## `{}`", class.name()));
            assert_eq!(doc.join("\n"), body.trim(), "{class}: the rule's doc and docs/pins.md differ");
        }
    }

    /// Every finding of the pin check is made by a rule: no other file of `pins` calls `Finding::new` or
    /// names a rule outside its tests, and only two files enter the judge, each through the registry's
    /// dispatch: the check (the scan, for the inventory's findings; each pin's value, the curves and the
    /// allow-list) and the comparison under `--base` (the classes only two trees decide: allow-changed and
    /// dropped-file).
    #[test]
    fn no_finding_is_made_outside_the_rules() {
        fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    if !path.ends_with("rules") {
                        sources(&path, out);
                    }
                } else if path.extension().is_some_and(|e| e == "rs") {
                    out.push(path);
                }
            }
        }
        let mut files = Vec::new();
        sources(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/pins"), &mut files);
        assert!(files.len() > 20, "{files:?}");
        let code = |path: &std::path::PathBuf| {
            let text = std::fs::read_to_string(path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default().to_string();
            code.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
        };
        let makers: Vec<String> = files
            .iter()
            .filter(|path| !path.ends_with("pins/mod.rs"))
            .filter(|path| {
                let code = code(path);
                code.contains("Finding::new(") || code.contains("Finding { severity")
            })
            .map(|path| path.display().to_string())
            .collect();
        assert!(makers.is_empty(), "findings made outside src/pins/rules: {makers:?}");
        let mut callers: Vec<String> = files
            .iter()
            .filter(|path| code(path).contains("rules::") || code(path).contains("use super::rules"))
            .map(|path| path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().display().to_string())
            .collect();
        callers.sort();
        assert_eq!(callers, ["src/pins/check.rs", "src/pins/diff.rs"], "files of pins that enter the judge");
    }
}
