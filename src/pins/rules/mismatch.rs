//! The check's own · error · `pins fix` mends it.
//!
//! The value matches no golden value the check knows for this model and k, in any mode or for any
//! drafter, so no class above explains it. For a rates list, a list with the right mean but another
//! shape than the golden chain (such as `[1.00, 0.83, 0.00]`) is a mismatch too.
//!
//! Fix: pin the golden value; if the value was measured anew, update the golden curve first.
//!
//! Allow: `# alsim: allow mismatch -- REASON` at the end of the line the finding names, or alone on the
//! line above it; or an entry of the allow-list file (`.alsim-allow.yaml`, or `--allow FILE`):
//! `- {file: benchmarks/single_node/launch.sh, line: 7, class: mismatch, reason: measured anew, curve
//! update pending}`.
//
// The rule finds a value no golden curve explains, or a rates list that keeps its golden AL but not
// its per-position chain.

use super::Judgement;
use crate::curve::CurveSet;
use crate::pins::rates;
use crate::pins::resolve::lookup::short;
use crate::pins::resolve::subject::Subject;
use crate::pins::verdict::ValueVerdict;
use crate::pins::{Class, Finding, RATE_TOLERANCE, plain_number};

/// Why a value off its golden AL is a plain mismatch.
pub(crate) const UNEXPLAINED: &str = "no golden curve explains the value";

/// A value off its golden AL that no other class's rule explained: the registry's last explanation, so it
/// always applies.
pub(crate) fn unexplained(_: &Subject, _: &CurveSet) -> Option<String> {
    Some(UNEXPLAINED.to_string())
}

/// A rates list on its golden AL whose positions are off the golden chain: the pinned run does not
/// reproduce real per-position acceptance.
pub(crate) fn chain(s: &Subject, _: &CurveSet) -> Option<Judgement> {
    let (list, want) = (s.pin.rates.as_deref()?, s.golden.expected_rates.as_deref()?);
    if !s.matches(s.expected()) {
        return None;
    }
    let off = rates::off_positions(list, want);
    if off.is_empty() {
        return None;
    }
    let message = format!(
        "{} = {} keeps the golden AL {} ({} {}) but not its per-position chain {} ({}): position{} {} off by more than {RATE_TOLERANCE}, so the pinned run does not reproduce real per-position acceptance",
        s.pin.knob.name(),
        rates::shown(list),
        plain_number(s.expected(), 4),
        short(&s.golden.file),
        s.golden.key,
        rates::shown(want),
        s.golden.rates_from.as_deref().unwrap_or_default(),
        if off.len() == 1 { "" } else { "s" },
        off.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
    );
    Some(Judgement::new(
        ValueVerdict::Mismatch,
        vec![Finding::new(Class::Mismatch, s.pin.location.clone(), message)],
        true,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::ThinkingMode;
    use crate::pins::Knob;
    use crate::pins::rules::testing::{embedded, pin, subject};

    #[test]
    fn a_list_on_its_al_but_off_its_chain_is_a_mismatch() {
        let mut p = pin(2.0, 3, ThinkingMode::On);
        p.knob = Knob::VllmSyntheticRates;
        p.rates = Some(vec![0.5]);
        let golden = subject(p.clone());
        let want = golden.golden.expected_rates.clone().expect("a golden chain");
        let [a, b, c] = want[..] else { panic!("k = 3 has three positions: {want:?}") };
        // The same AL, 1 + a(1 + b(1 + c)), with the first position raised and the second lowered to match.
        let raised = (a + 1.0) / 2.0;
        let lowered = (a * (1.0 + b * (1.0 + c)) / raised - 1.0) / (1.0 + c);
        p.written = crate::pins::Fact::known(golden.expected(), crate::pins::How::Literal, "t", None);
        p.rates = Some(vec![raised, lowered, c]);
        let j = chain(&subject(p), embedded()).expect("positions 1 and 2 off");
        assert_eq!((j.verdict, j.findings[0].class), (ValueVerdict::Mismatch, Class::Mismatch));
        assert!(j.findings[0].message.contains("positions 1, 2 off"), "{}", j.findings[0].message);
        let mut p = pin(golden.expected(), 3, ThinkingMode::On);
        p.knob = Knob::VllmSyntheticRates;
        p.rates = Some(want);
        assert!(chain(&subject(p), embedded()).is_none(), "the golden chain itself");
    }
}
