//! **Class 3** · error · `pins fix` mends it.
//!
//! The run serves one thinking mode but pins the other mode's value. Thinking and non-thinking
//! prompts accept drafts very differently. The served mode is the one stated in the deployment, or,
//! where nothing is stated, the default of whoever renders the prompt: the engine, the Dynamo
//! frontend in front of it, or the model's chat template (`profiles/serving_defaults.csv`, each row
//! citing its source). A multi-node recipe says who renders in its `frontend:` section: Dynamo's
//! frontend (`type: dynamo`, srtctl's default) renders with its own chat processor unless
//! `dyn-chat-processor` (or `DYN_CHAT_PROCESSOR`) hands rendering to `vllm` or `sglang`, whose own
//! default then decides; another frontend type (`sglang`, `vllm`) leaves it to the workers' engine.
//! Where no recipe says, a `dynamo-…` framework stands for Dynamo's frontend. A default can change
//! between versions: vLLM renders DeepSeek-V4 non-thinking before its commit 77434861904a
//! (2026-08-04) and thinking at effort high from it. The entry's version is read from its image tag
//! (a release, a build date) or from a date the repository states for that image (a changelog
//! line). A default decides as firmly as a stated mode only where that version lies on one side of
//! the change: a vLLM DeepSeek-V4 entry on a release below 0.27.0 that states no mode and pins 2.49
//! (the thinking_on value at k = 3) is an error, as it serves non-thinking (2.97). Where the
//! version is not placed, or the benchmark client templates the prompt, see
//! [`assumption`](#assumption).
//!
//! Reasoning effort belongs to the mode: where a golden file's header records the effort its
//! thinking runs asked for (DeepSeek-V4's `"reasoning_effort": "high"`) and the deployment sets
//! another (`SGLANG_DSV4_REASONING_EFFORT=max`, or `reasoning_effort` in its chat-template kwargs),
//! no golden value exists for that run, whatever the pin holds. InferenceX's AMD `env.sh` ran `max`
//! until commit a141bfc set `high`. Where either side records no effort, nothing is judged. A
//! renderer's version can change what an effort renders: vLLM's `high` from 77434861904a renders the
//! prompt `max` rendered before (`effort_renders` in the table, citing vLLM issue #52083). A run of
//! such an effort, the default's or one a file states, is an [`assumption`](#assumption) warning,
//! since a header names the effort, not the engine version that collected the curve.
//!
//! Example (InferenceX): DeepSeek-V4 TensorRT-LLM recipes set `DYN_DEFAULT_THINKING_MODE: disabled`
//! but pin `TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.49` (AL 2.49, the thinking_on value at k =
//! 3); the thinking_off value is AL 2.97. That repository allows this family on purpose.
//!
//! Fix: pin the value of the mode the run serves, or state the mode in the recipe; run the effort
//! the curve was collected at, or collect a curve at yours. Where the mismatch is deliberate, allow
//! it with a reason (see [Allowing a finding](#allowing-a-finding)).
//!
//! Allow: `# alsim: allow wrong-thinking-mode -- REASON` at the end of the line the finding names, or
//! alone on the line above it; or an entry of the allow-list file (`.alsim-allow.yaml`, or
//! `--allow FILE`):
//! `- {file: benchmarks/multi_node/srt-slurm-recipes/trtllm/deepseek-v4/*, class: wrong-thinking-mode,
//! reason: these recipes pin the thinking_on value on purpose}`.
//
// The rule finds the other thinking mode's golden value, or a run at a reasoning effort its curve
// was not collected at (no golden value exists for it).

use super::{Judgement, shown_written};
use crate::curve::CurveSet;
use crate::pins::resolve::lookup::short;
use crate::pins::resolve::subject::Subject;
use crate::pins::verdict::ValueVerdict;
use crate::pins::{Class, Finding};

/// A pin whose run asks a reasoning effort its golden file's header says the curve was not collected at.
pub(crate) fn effort(s: &Subject, curves: &CurveSet) -> Option<Judgement> {
    let measured = s.file(curves).provenance.effort(s.curve.mode.name())?;
    // An effort whose rendering changed (the default's or a stated one) is judged as an assumption: the
    // header names the effort, not the version it was collected on.
    let effort = s.pin.effort.value.as_deref().filter(|_| s.effort_renders.is_none())?;
    if effort.eq_ignore_ascii_case(&measured) {
        return None;
    }
    let message = format!(
        "{} = {} rests on {} {}, collected at reasoning effort {measured} (its header), but this runs reasoning effort {effort} ({}): no golden value exists for {effort}; run effort {measured}, or collect a curve at {effort}",
        s.pin.knob.name(),
        shown_written(&s.pin, s.range.written),
        short(&s.golden.file),
        s.golden.key,
        s.pin.effort.text
    );
    let finding = Finding::new(Class::WrongThinkingMode, s.pin.location.clone(), message);
    Some(Judgement::new(ValueVerdict::Mismatch, vec![finding], false))
}

/// A value that is the other thinking mode's golden value at the same k.
pub(crate) fn value(s: &Subject, curves: &CurveSet) -> Option<String> {
    let mode = s.curve.mode;
    let k = s.range.k;
    let other = s.file(curves).curves.iter().filter(|c| c.model() == s.query.model && c.mode() != mode);
    other.into_iter().find(|c| c.al(k).is_ok_and(|al| s.matches(al))).map(|curve| {
        format!("it is the {} value, but the deployment serves {} ({})", curve.mode(), mode, s.pin.mode.text)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::ThinkingMode;
    use crate::pins::rules::testing::{embedded, golden, pin, subject};

    #[test]
    fn the_other_modes_value_is_named() {
        let why =
            value(&subject(pin(golden(3, ThinkingMode::Off), 3, ThinkingMode::On)), embedded()).expect("off's value");
        assert!(why.starts_with("it is the thinking_off value, but the deployment serves thinking_on"), "{why}");
        assert!(value(&subject(pin(golden(3, ThinkingMode::On), 3, ThinkingMode::On)), embedded()).is_none());
    }

    #[test]
    fn an_effort_is_judged_only_where_the_header_records_one() {
        let mut p = pin(golden(3, ThinkingMode::On), 3, ThinkingMode::On);
        p.effort = crate::pins::Fact::known("max".into(), crate::pins::How::Literal, "EFFORT=max", None);
        // MiniMax-M3's header records no effort: nothing to judge the run's against.
        assert!(effort(&subject(p.clone()), embedded()).is_none());
        // DeepSeek-V4-Pro's records `high` for thinking_on: `max` has no golden value, `HIGH` is the same effort.
        p.model.value = Some("deepseek-ai/DeepSeek-V4-Pro".into());
        p.drafter = crate::pins::Fact::unresolved("MTP head");
        p.method.value = Some("mtp".into());
        let j = effort(&subject(p.clone()), embedded()).expect("max where the curve ran high");
        assert_eq!((j.verdict, j.findings[0].class, j.fix), (ValueVerdict::Mismatch, Class::WrongThinkingMode, false));
        assert!(j.findings[0].message.contains("no golden value exists for max"), "{}", j.findings[0].message);
        // The default of `${EFFORT:-max}` is what runs: judged like a literal, not as the table's default.
        p.effort.how = crate::pins::How::Default;
        assert!(effort(&subject(p.clone()), embedded()).is_some(), "a shell default's effort is the run's");
        p.effort.value = Some("HIGH".into());
        assert!(effort(&subject(p), embedded()).is_none());
    }
}
