//! Judgement, one module per finding class (as ruff keeps one file per rule): each decides over facts
//! discovery resolved and words its class's findings. No finding of the pin check is made outside these
//! modules (a test below holds the rest of `pins` to that).
//!
//! A pin's value is judged by [`judge`] over its [`Resolution`]: a fact that stayed undecided is
//! `unresolved`, unless the value is out of [1, k+1] whatever the golden value. With every fact known, the
//! decisive rules run in the order of docs/pins.md's annotations — an effort the curve was not collected
//! at, a value outside [1, k+1], a rates list the engine refuses or that is another k's chain, a chain off
//! its golden positions; a value on its golden AL is then `ok` (with the caveats of what was assumed), one
//! right only under the other draft sampling `unconfirmed`, and one off its golden AL takes the class of
//! the first explanation that matches ([`EXPLANATIONS`]), else `mismatch`.
//!
//! The rest are rules over the inventory ([`run`], one per class in [`INVENTORY_RULES`]): discovery records
//! what it read as plain records (`crate::pins::observed`) and pins, and each rule decides from those alone
//! whether they are findings of its class — eval leaks, values never passed, missing pins, drift, inert
//! settings, unreadable files, duplicate keys, incomplete spellings, unresolved files and includes, inline
//! allows that cannot be read. The golden curves' own problems and the allow-list entries that sanction
//! nothing are judged by the check once the pins are ([`curve_problem::run`], [`stale_allow::unused`]).
//! Pull-request mode's own class (a dropped file) is decided by comparing the two walks ([`dropped_file`]).

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

use super::rates;
use super::resolve::subject::{Resolution, Subject};
use super::verdict::ValueVerdict;
use super::{Class, Finding, Inventory, Knob, Pin, plain_number};
use crate::pins::resolve::lookup::{describe_query, short};

/// A rule over the whole inventory: the findings of its records and pins, before any golden value.
type InventoryRule = fn(&Inventory) -> Vec<Finding>;

/// The rules over the inventory, by the class each makes (a pin's value is judged by [`judge`]).
const INVENTORY_RULES: [(Class, InventoryRule); 10] = [
    (Class::Spelling, spelling::run),
    (Class::NeverPassed, never_passed::run),
    (Class::EvalLeak, eval_leak::run),
    (Class::MissingPin, missing_pin::run),
    (Class::Drift, drift::run),
    (Class::Unreadable, unreadable::run),
    (Class::Unresolved, unresolved::run),
    (Class::DuplicateKey, duplicate_key::run),
    (Class::Inert, inert::run),
    (Class::StaleAllow, stale_allow::run),
];

/// Every finding the inventory's records and pins make, rule by rule.
pub(crate) fn run(inventory: &Inventory) -> Vec<Finding> {
    INVENTORY_RULES.iter().flat_map(|(_, rule)| rule(inventory)).collect()
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

/// A rule that decides a value's verdict when it applies.
type Decisive = fn(&Subject<'_>) -> Option<Judgement>;

/// The decisive rules, in the order their findings outrank each other.
const DECISIVE: [Decisive; 5] =
    [wrong_thinking_mode::effort, out_of_range::value, out_of_range::refused_list, wrong_k::list, mismatch::chain];

/// A rule that explains a value off its golden AL: the class and why, when the value is another curve's.
type Explanation = fn(&Subject<'_>) -> Option<String>;

/// The explanations of a value off its golden AL, in the order of docs/pins.md's classes about a value.
const EXPLANATIONS: [(Class, Explanation); 5] = [
    (Class::Spelling, spelling::value),
    (Class::WrongDrafter, wrong_drafter::value),
    (Class::WrongThinkingMode, wrong_thinking_mode::value),
    (Class::WrongK, wrong_k::value),
    (Class::WrongModel, wrong_model::value),
];

/// The verdict on one pin's value and the findings it makes.
pub(crate) fn judge(pin: &Pin, resolution: &Resolution<'_>) -> Judgement {
    match resolution {
        Resolution::Inert => Judgement::new(ValueVerdict::Inert, Vec::new(), false),
        Resolution::Silent => Judgement::new(ValueVerdict::Unresolved, Vec::new(), false),
        Resolution::Undecided(u) => out_of_range::undecided(pin, u).unwrap_or_else(|| unresolved::undecided(pin, u)),
        Resolution::Subject(s) => judge_subject(s),
    }
}

fn judge_subject(s: &Subject<'_>) -> Judgement {
    if let Some(judgement) = DECISIVE.iter().find_map(|rule| rule(s)) {
        return judgement;
    }
    if s.matches(s.expected()) {
        return Judgement::new(ValueVerdict::Ok, assumption::caveats(s), false);
    }
    if let Some(judgement) = assumption::unconfirmed(s) {
        return judgement;
    }
    let (class, why) = EXPLANATIONS
        .iter()
        .find_map(|(class, explain)| explain(s).map(|why| (*class, why)))
        .unwrap_or_else(|| (Class::Mismatch, mismatch::UNEXPLAINED.to_string()));
    Judgement::new(ValueVerdict::Mismatch, vec![off_golden(s, class, why)], true)
}

/// The finding of a value off its golden AL, of the class that explains it.
fn off_golden(s: &Subject<'_>, class: Class, why: String) -> Finding {
    let (pin, golden, k) = (s.pin, &s.golden, s.range.k);
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

    /// The embedded curves, read once for every test's resolution to borrow.
    pub(crate) fn curves() -> &'static CurveSet {
        static CURVES: std::sync::OnceLock<CurveSet> = std::sync::OnceLock::new();
        CURVES.get_or_init(CurveSet::embedded)
    }

    /// The subject of `pin`, which must resolve.
    pub(crate) fn subject(pin: Pin) -> Subject<'static> {
        let pin: &'static Pin = Box::leak(Box::new(pin));
        match subject::resolve(pin, subject::golden_key(pin, curves()).as_deref(), curves()) {
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
    use super::testing::{golden, pin, subject};
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
        let ok = judge_subject(&subject(pin(on, 3, ThinkingMode::On)));
        assert_eq!((ok.verdict, ok.findings.len(), ok.fix), (ValueVerdict::Ok, 0, false));
        let off = judge_subject(&subject(pin(1.01, 3, ThinkingMode::On)));
        assert_eq!((off.verdict, off.fix), (ValueVerdict::Mismatch, true));
        assert_eq!(off.findings[0].class, Class::Mismatch);
        assert!(off.findings[0].message.contains(mismatch::UNEXPLAINED), "{}", off.findings[0].message);
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
    /// names a rule outside its tests, and only the check's three stages enter the judge (the scan, for the
    /// inventory's findings; the check, for each pin's value, the curves and the allow-list; the comparison
    /// under `--base`, for the classes only two trees decide: allow-changed and dropped-file).
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
        assert_eq!(
            callers,
            ["src/pins/check.rs", "src/pins/diff.rs", "src/pins/mod.rs"],
            "files of pins that enter the judge"
        );
    }
}
