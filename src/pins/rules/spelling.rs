//! **Class 5** · error.
//!
//! The value is right but written so the engine does not apply it as meant. Each engine spells a pin
//! its own way (see [engines.md](engines.md)):
//!
//! - TensorRT-LLM takes accepted *drafts*, AL − 1: `TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=2.83`
//!   pins AL 3.83.
//! - ATOM's rate knob is (AL − 1)/k, not AL/(k+1).
//! - SGLang needs the whole triple: `SGLANG_SIMULATE_ACC_LEN`,
//!   `SGLANG_SIMULATE_ACC_METHOD=match-expected` and `SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token`
//!   (without it the default token mode replaces every token with one id, which breaks streamed text).
//! - vLLM applies `synthetic_acceptance_length` only beside `"rejection_sample_method": "synthetic"`:
//!   without it the run does not pin (recent vLLM versions refuse such a config at start-up).
//!
//! Fix: write the setting `alsim pin … --engine E` prints.
//!
//! Allow: `# alsim: allow spelling -- REASON` at the end of the line the finding names, or alone on the
//! line above it; or an entry of the allow-list file (`.alsim-allow.yaml`, or `--allow FILE`):
//! `- {file: benchmarks/launch_trt.sh, line: 41, class: spelling, reason: our patched build reads it as
//! AL}`.
//
// The rule finds a value written in another knob's unit (TRT-LLM's count of accepted drafts not AL −
// 1, ATOM's rate not (AL − 1)/k, a length without its bonus token), an SGLang triple without its companions, or a
// vLLM length without the synthetic rejection method.

use crate::curve::CurveSet;
use crate::pins::Inventory;
use crate::pins::observed::Observed;
use crate::pins::resolve::subject::Subject;
use crate::pins::{AL_TOLERANCE, Class, Finding, Knob, Location, RATE_TOLERANCE};

/// Knobs written without the companions or method their engine needs (a value in the wrong unit is judged
/// with the value: [`value`]).
pub(crate) fn run(inventory: &Inventory) -> Vec<Finding> {
    let found = inventory.observed.iter().filter_map(|o| match o {
        Observed::SglangCompanionsMissing { at, missing, environment } => {
            let missing: Vec<&str> = missing.iter().map(String::as_str).collect();
            sglang_triple(at.clone(), &missing, environment.as_deref())
        }
        Observed::NotSynthetic { at, knob } => vllm_not_synthetic(at.clone(), *knob, false),
        Observed::NearMiss { at, written, meant, how } => Some(near_miss(at.clone(), written, meant, how)),
        _ => None,
    });
    found.collect()
}

/// A word that is nearly the spelling `meant` (`how`: an abbreviation, or a few edits away).
pub(crate) fn near_miss(at: Location, written: &str, meant: &str, how: &str) -> Finding {
    Finding::new(
        Class::Spelling,
        at,
        format!(
            "{written} is not a spelling any engine reads, but is nearly {meant} ({how}): write {meant}, or the run measures real acceptance while the file looks pinned"
        ),
    )
}

/// A value that is the golden AL in another knob's spelling.
pub(crate) fn value(s: &Subject, _: &CurveSet) -> Option<String> {
    let (written, k) = (s.range.written, s.range.k);
    let expected = s.expected();
    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol;
    match s.pin.knob {
        Knob::TrtllmForceAccepted if close(written, expected, AL_TOLERANCE) => {
            Some("TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS counts accepted drafts: write AL − 1".into())
        }
        Knob::AtomRate
            if close(written, expected, RATE_TOLERANCE)
                || close(written, expected - 1.0, RATE_TOLERANCE)
                || close(written, expected / (k as f64 + 1.0), RATE_TOLERANCE) =>
        {
            Some("--spec-decode-acceptance-rate is (AL − 1)/k, not AL, AL − 1 or AL/(k+1)".into())
        }
        Knob::AtomLength | Knob::SglangSimulateLen | Knob::VllmSyntheticLength | Knob::InjectedLength
            if close(written, expected - 1.0, AL_TOLERANCE) =>
        {
            Some(format!("{} counts the bonus token: write AL, not AL − 1", s.pin.knob.name()))
        }
        _ => None,
    }
}

/// `SGLANG_SIMULATE_ACC_LEN` without the `missing` companions of its triple (in the `environment` of a
/// recipe's role, where the pin is a recipe's).
pub(crate) fn sglang_triple(at: Location, missing: &[&str], environment: Option<&str>) -> Option<Finding> {
    if missing.is_empty() {
        return None;
    }
    let env = environment.map(|e| format!(" in the {e} environment")).unwrap_or_default();
    Some(Finding::new(
        Class::Spelling,
        at,
        format!(
            "SGLANG_SIMULATE_ACC_LEN without {}{env}: the SGLang triple is incomplete (METHOD=match-expected, TOKEN_MODE=real-draft-token: `alsim explain sglang`)",
            missing.join(" and ")
        ),
    ))
}

/// A vLLM synthetic length or rates list written without `"rejection_sample_method": "synthetic"`.
pub(crate) fn vllm_not_synthetic(at: Location, knob: Knob, synthetic: bool) -> Option<Finding> {
    (!synthetic).then(|| {
        Finding::new(
            Class::Spelling,
            at,
            format!("{} without \"rejection_sample_method\": \"synthetic\": vLLM ignores the pin", knob.name()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::ThinkingMode;
    use crate::pins::rules::testing::{embedded, golden, pin, subject};

    #[test]
    fn a_length_without_its_bonus_token_is_a_spelling() {
        let why =
            value(&subject(pin(golden(3, ThinkingMode::On) - 1.0, 3, ThinkingMode::On)), embedded()).expect("AL - 1");
        assert_eq!(why, "synthetic_acceptance_length counts the bonus token: write AL, not AL − 1");
        assert!(value(&subject(pin(1.01, 3, ThinkingMode::On)), embedded()).is_none());
    }

    #[test]
    fn an_incomplete_triple_names_what_is_missing() {
        let at = Location::new("r.yaml", 4);
        let f = sglang_triple(at.clone(), &crate::pins::SGLANG_COMPANIONS[1..], Some("decode")).expect("one missing");
        assert!(
            f.message.starts_with(
                "SGLANG_SIMULATE_ACC_LEN without SGLANG_SIMULATE_ACC_TOKEN_MODE in the decode environment"
            )
        );
        assert!(sglang_triple(at.clone(), &[], None).is_none());
        assert!(vllm_not_synthetic(at.clone(), Knob::VllmSyntheticLength, true).is_none());
        assert_eq!(vllm_not_synthetic(at, Knob::VllmSyntheticLength, false).unwrap().class, Class::Spelling);
    }
}
