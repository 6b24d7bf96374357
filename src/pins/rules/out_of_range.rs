//! **Class 6** · error · `pins fix` mends it.
//!
//! The AL lies outside [1, k+1] for the role's own k (a step emits at least the target's token and at
//! most k drafts plus one), or a rates list has an entry outside [0, 1], rises with position, or has
//! another length than k. Engines refuse such a value at start-up or clamp it.
//!
//! Example (InferenceX): an SGLang disaggregated recipe sets `SGLANG_SIMULATE_ACC_LEN=2.5` in the
//! prefill environment, where `speculative-num-steps: 1` allows at most AL 2; the golden value at k = 1
//! is 1.84.
//!
//! Fix: pin the golden value for that role's k; a role that runs no speculative decoding needs no pin.
//!
//! Allow: `# alsim: allow out-of-range -- REASON` at the end of the line the finding names, or alone on
//! the line above it; or an entry of the allow-list file (`.alsim-allow.yaml`, or `--allow FILE`):
//! `- {file: recipes/sglang/disagg.yaml, line: 12, class: out-of-range, reason: this role's pin is
//! removed in the next recipe}`.
//
// The rule finds a value whose AL lies outside [1, k+1] for the role's own k, or a rates list the
// engine refuses (an entry outside [0, 1], a rise, another length that is no golden chain).

use super::{Judgement, shown_written};
use crate::curve::CurveSet;
use crate::pins::rates;
use crate::pins::resolve::lookup::short;
use crate::pins::resolve::subject::{Range, Subject, Undecided};
use crate::pins::verdict::{GoldenRef, ValueVerdict};
use crate::pins::{Class, Finding, Pin, plain_number};

/// A value out of range where its golden value could not be found: range needs no curve.
pub(crate) fn undecided(pin: &Pin, u: &Undecided) -> Option<Judgement> {
    let range = u.range.filter(|r| u.range_judged && r.out_of_range())?;
    Some(Judgement::new(ValueVerdict::OutOfRange, vec![finding(pin, range, None)], false))
}

/// A value out of range, with the golden value to write instead.
pub(crate) fn value(s: &Subject, _: &CurveSet) -> Option<Judgement> {
    s.range
        .out_of_range()
        .then(|| Judgement::new(ValueVerdict::OutOfRange, vec![finding(&s.pin, s.range, Some(&s.golden))], true))
}

/// A rates list the engine refuses whatever its length: an entry outside [0, 1] or an increase.
pub(crate) fn refused_list(s: &Subject, _: &CurveSet) -> Option<Judgement> {
    let list = s.pin.rates.as_deref()?;
    let problem = rates::chain_problem(list)?;
    let message = format!(
        "{} = {}: {problem}, so {} refuses the list{}",
        s.pin.knob.name(),
        rates::shown(list),
        engine(&s.pin),
        want(s)
    );
    Some(Judgement::new(
        ValueVerdict::OutOfRange,
        vec![Finding::new(Class::OutOfRange, s.pin.location.clone(), message)],
        true,
    ))
}

/// A rates list of another length than k that is no golden chain (one that is, is [`super::wrong_k::list`]).
pub(crate) fn list_length(s: &Subject) -> Judgement {
    let list = s.pin.rates.as_deref().unwrap_or_default();
    let message = format!(
        "{} = {} has {} entries: {} needs exactly k = {} entries ({}) and refuses the list{}",
        s.pin.knob.name(),
        rates::shown(list),
        list.len(),
        engine(&s.pin),
        s.range.k,
        s.pin.k.text,
        want(s)
    );
    Judgement::new(
        ValueVerdict::OutOfRange,
        vec![Finding::new(Class::OutOfRange, s.pin.location.clone(), message)],
        true,
    )
}

fn engine(pin: &Pin) -> &'static str {
    pin.knob.engine().map_or("the engine", |e| e.display_name())
}

/// The golden chain to write instead, for a list's messages.
pub(super) fn want(s: &Subject) -> String {
    let want = s
        .golden
        .expected_rates
        .as_deref()
        .map(|w| format!("; the golden chain for k = {} is {}", s.range.k, rates::shown(w)));
    want.unwrap_or_default()
}

fn finding(pin: &Pin, range: Range, golden: Option<&GoldenRef>) -> Finding {
    let k = range.k;
    let role = pin.role.map(|r| format!(" of the {r} role")).unwrap_or_default();
    let golden = golden
        .map(|g| {
            format!(
                "; the golden value for k = {k} is {} ({} {})",
                plain_number(g.expected_written, 6),
                short(&g.file),
                g.key
            )
        })
        .unwrap_or_default();
    Finding::new(
        Class::OutOfRange,
        pin.location.clone(),
        format!(
            "{} = {} implies AL {} outside [1, {}] for k = {k}{role} ({}){golden}",
            pin.knob.name(),
            shown_written(pin, range.written),
            plain_number(range.implied, 4),
            k + 1,
            pin.k.text
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::ThinkingMode;
    use crate::pins::rules::testing::{embedded, pin, subject};

    #[test]
    fn an_al_above_k_plus_one_is_out_of_range_with_the_golden_value() {
        let j = value(&subject(pin(4.5, 3, ThinkingMode::On)), embedded()).expect("4.5 > k + 1 = 4");
        assert_eq!((j.verdict, j.fix), (ValueVerdict::OutOfRange, true));
        assert!(j.findings[0].message.contains("outside [1, 4] for k = 3"), "{}", j.findings[0].message);
        assert!(j.findings[0].message.contains("the golden value for k = 3 is 2.83"), "{}", j.findings[0].message);
        assert!(value(&subject(pin(4.0, 3, ThinkingMode::On)), embedded()).is_none());
    }

    #[test]
    fn a_value_is_out_of_range_without_a_curve() {
        let range = Some(Range { written: 0.5, implied: 0.5, k: 2 });
        let u =
            Undecided { what: "model", why: "no model".into(), range, range_judged: true, for_want_of_default: false };
        let j = undecided(&pin(0.5, 2, ThinkingMode::On), &u).expect("0.5 < 1");
        assert_eq!((j.verdict, j.fix), (ValueVerdict::OutOfRange, false));
        let inside = Undecided { range: Some(Range { written: 1.5, implied: 1.5, k: 2 }), ..u };
        assert!(undecided(&pin(1.5, 2, ThinkingMode::On), &inside).is_none());
        let unjudged = Undecided { what: "golden curve", why: "no key".into(), range_judged: false, ..u };
        assert!(undecided(&pin(0.5, 2, ThinkingMode::On), &unjudged).is_none());
    }

    #[test]
    fn a_rising_list_is_refused() {
        let mut p = pin(2.0, 3, ThinkingMode::On);
        p.knob = crate::pins::Knob::VllmSyntheticRates;
        p.rates = Some(vec![0.5, 0.7, 0.2]);
        let j = refused_list(&subject(p), embedded()).expect("0.5 then 0.7 rises");
        assert_eq!(j.findings[0].class, Class::OutOfRange);
    }
}
