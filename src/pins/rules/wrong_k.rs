//! **Class 1** · error · `pins fix` mends it.
//!
//! The value is the golden AL for another draft length. Acceptance length grows with k, so a k = 2 run
//! pinned with the k = 3 value claims more tokens per step than the drafter delivers at k = 2.
//!
//! Example (InferenceX): a master-config entry injects `SYNTHETIC_ACCEPTANCE_LENGTH=2.49` into a vLLM
//! recipe whose `speculative-config` has `num_speculative_tokens: 2`. DeepSeek-V4's curve gives 2.49 at
//! k = 3 and 2.27 at k = 2 (thinking on), so the pin claims the k = 3 acceptance for a k = 2 run.
//!
//! Fix: set the value for the k the run uses (`alsim pins fix`), or set k to the length the value was
//! measured for. Often k was changed later and the pin was not: see also [`drift`](#drift).
//!
//! Allow: `# alsim: allow wrong-k -- REASON` at the end of the line the finding names, or alone on the
//! line above it; or an entry of the allow-list file (`.alsim-allow.yaml`, or `--allow FILE`):
//! `- {file: configs/nvidia-master.yaml, line: 7744, class: wrong-k, reason: k = 2 runs the k = 3 value
//! on purpose}`.
//
// The rule finds the value is the golden AL (or the rates list the golden chain) for another draft
// length than the role runs.

use super::Judgement;
use crate::curve::{Curve, CurveSet};
use crate::pins::rates;
use crate::pins::resolve::subject::Subject;
use crate::pins::verdict::ValueVerdict;
use crate::pins::{Class, Finding};

/// A rates list of another length than k: another k's golden chain, else a list the engine refuses.
pub(crate) fn list(s: &Subject, curves: &CurveSet) -> Option<Judgement> {
    let list = s.pin.rates.as_deref()?;
    let other_k = list.len();
    if other_k == s.range.k {
        return None;
    }
    let Some(curve) = s
        .file(curves)
        .curves
        .iter()
        .filter(|c| c.model() == s.query.model)
        .find(|c| rates::golden(c, other_k).is_some_and(|g| rates::off_positions(list, g.rates()).is_empty()))
    else {
        return Some(super::out_of_range::list_length(s));
    };
    let message = format!(
        "{} = {} has {other_k} entries: it is the {} golden chain for k = {other_k}, but this runs k = {} ({}){}",
        s.pin.knob.name(),
        rates::shown(list),
        curve.mode(),
        s.range.k,
        s.pin.k.text,
        super::out_of_range::want(s)
    );
    Some(Judgement::new(
        ValueVerdict::Mismatch,
        vec![Finding::new(Class::WrongK, s.pin.location.clone(), message)],
        true,
    ))
}

/// A value that is the golden AL for another k: of the served mode's curve first, then of the other mode's
/// (a value copied from another row of the golden table is wrong in k whatever mode it was written for).
pub(crate) fn value(s: &Subject, curves: &CurveSet) -> Option<String> {
    let mode = s.curve.mode;
    let of_model: Vec<&Curve> = s.file(curves).curves.iter().filter(|c| c.model() == s.query.model).collect();
    let served = of_model.iter().filter(|c| c.mode() == mode);
    for curve in served.chain(of_model.iter().filter(|c| c.mode() != mode)) {
        for (&other_k, &al) in curve.points() {
            if other_k != s.range.k && s.matches(al) {
                let and_mode = if curve.mode() == mode {
                    String::new()
                } else {
                    format!(" and serves {mode} ({})", s.pin.mode.text)
                };
                return Some(format!(
                    "it is the {} golden value for k = {other_k}, but this runs k = {} ({}){and_mode}",
                    curve.mode(),
                    s.range.k,
                    s.pin.k.text
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::ThinkingMode;
    use crate::pins::Knob;
    use crate::pins::rules::testing::{embedded, golden, pin, subject};

    #[test]
    fn another_ks_golden_value_is_named_with_its_k() {
        let why =
            value(&subject(pin(golden(2, ThinkingMode::On), 3, ThinkingMode::On)), embedded()).expect("k = 2's value");
        assert!(why.starts_with("it is the thinking_on golden value for k = 2, but this runs k = 3"), "{why}");
        let other_mode =
            value(&subject(pin(golden(4, ThinkingMode::Off), 3, ThinkingMode::On)), embedded()).expect("off, k = 4");
        assert!(other_mode.contains("and serves thinking_on"), "{other_mode}");
        assert!(value(&subject(pin(1.01, 3, ThinkingMode::On)), embedded()).is_none());
    }

    #[test]
    fn a_list_of_another_length_is_wrong_k_when_it_is_that_ks_chain() {
        let mut two = pin(2.0, 2, ThinkingMode::On);
        two.knob = Knob::VllmSyntheticRates;
        two.rates = Some(vec![0.5]);
        let chain = subject(two).golden.expected_rates.expect("a golden chain at k = 2");
        let mut p = pin(2.0, 3, ThinkingMode::On);
        p.knob = Knob::VllmSyntheticRates;
        p.rates = Some(chain);
        let j = list(&subject(p.clone()), embedded()).expect("k = 2's chain at k = 3");
        assert_eq!(j.findings[0].class, Class::WrongK);
        p.rates = Some(vec![0.9, 0.1]);
        assert_eq!(list(&subject(p), embedded()).expect("no chain").findings[0].class, Class::OutOfRange);
    }
}
