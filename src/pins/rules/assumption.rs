//! The check's own · warning (an error under `--strict`).
//!
//! A verdict rests on a default no file states and no documentation settles: greedy drafting where
//! no draft sampling is written (a curve collected with probabilistic drafting may be the one
//! meant), or llama.cpp's default draft length (it differs between builds). The finding says which
//! default. A thinking mode is an assumption only where no default decides it: a documented default
//! the engine's version places decides like a stated mode (see
//! [`wrong-thinking-mode`](#wrong-thinking-mode)); where the version is not known to lie on one
//! side of a change of default, the value is checked against the mode whose value it holds, with a
//! warning naming both values and what would decide; where the benchmark client templates
//! random-token prompts (fixed-length runs), no server default applies, and the same finding is a
//! note.
//! A reasoning effort whose rendering the engine's version changed (vLLM's DeepSeek-V4 `high` from
//! 77434861904a), whether a default or a file states it, is one too: a golden header names the
//! effort, not the version that collected the curve.
//!
//! Example: a llama.cpp script writes no `--spec-draft-n-max`; its pin is checked at k = 3, the
//! current default, and warned about because older builds defaulted to 16.
//!
//! Fix, by cause (each warning's help line says which): state the draft sampling, or the draft
//! limit, in the recipe or script; state the thinking mode the server runs, or the image's release
//! or build date; for an effort whose rendering changed, collect the curve on the engine version
//! that runs, or record the version that collected it in the curve's header.
//!
//! Allow: `# alsim: allow assumption -- REASON` at the end of the line the finding names, or alone on
//! the line above it; or an entry of the allow-list file (`.alsim-allow.yaml`, or `--allow FILE`):
//! `- {file: benchmarks/llama_cpp/*, class: assumption, reason: every build we run defaults to k = 3}`.
//
// The rule finds a verdict that rests on a fact no file states and no documentation settles — greedy
// drafting where no draft sampling is written, llama.cpp's unwritten draft limit. A warning, failing only under
// `--strict`.

use super::{Judgement, shown_written};
use crate::curve::CurveSet;
use crate::pins::resolve::lookup::short;
use crate::pins::resolve::subject::{Open, Subject};
use crate::pins::verdict::ValueVerdict;
use crate::pins::{Class, Finding, How, Severity, plain_number};

/// What an `assumption` on draft sampling rests on.
const ASSUMED_SAMPLING: &str = "the assumed greedy drafting (no draft_sample_method is written)";

/// How to mend each cause of an `assumption` (the class's own line is none of these alone).
const HELP_K: &str = "write the draft limit the engine runs in the launch code";
const HELP_SAMPLING: &str = "state the draft sampling (draft_sample_method) in the recipe or script";
const HELP_EFFORT: &str =
    "collect the curve on the engine version this runs, or record the version that collected it in its header";
const HELP_MODE: &str = "state the thinking mode the server runs, or the image's release or build date";

/// The caveats of a value on its golden AL: the k it was judged at was inferred, or the other draft
/// sampling would expect another value.
pub(crate) fn caveats(s: &Subject, curves: &CurveSet) -> Vec<Finding> {
    let at = || s.pin.location.clone();
    let mut out = Vec::new();
    if s.pin.k.how == How::Inferred {
        // Only llama.cpp's unwritten draft limit is inferred; its default differs between builds.
        out.push(
            Finding::new(
                Class::Assumption,
                at(),
                format!(
                    "ok only under the assumed k = {} ({}): write the draft limit in the script",
                    s.range.k, s.pin.k.text
                ),
            )
            .with_help(HELP_K),
        );
    }
    if let Some(chosen) = &s.chosen {
        let add = if s.golden.file.starts_with("<embedded>") {
            "; add the curve to the repository to check against its own"
        } else {
            ""
        };
        out.push(
            Finding::new(
                Class::Assumption,
                at(),
                format!("checked against {} {} ({chosen}){add}", short(&s.golden.file), s.golden.key),
            )
            .with_severity(Severity::Note),
        );
    }
    if let Some(renders) = &s.effort_renders
        && let Some(measured) = s.file(curves).provenance.effort(s.curve.mode.name())
    {
        out.push(Finding::new(
            Class::Assumption,
            at(),
            format!(
                "{} = {} is the golden value ({} {}, collected at reasoning effort {measured} by its header), but this runs {}: the header does not say which engine version collected it, so if the curve predates that change, no golden value exists for this run's effort",
                s.pin.knob.name(),
                shown_written(&s.pin, s.range.written),
                short(&s.golden.file),
                s.golden.key,
                renders
            ),
        )
        .with_help(HELP_EFFORT));
    }
    if let Some(open) = &s.open {
        out.push(
            Finding::new(
                Class::Assumption,
                at(),
                format!(
                    "{} = {} is the {} golden value ({} {}), but no default decides the served mode: {}{}; {}",
                    s.pin.knob.name(),
                    shown_written(&s.pin, s.range.written),
                    s.curve.mode,
                    short(&s.golden.file),
                    s.golden.key,
                    open.mode.why,
                    other_value(open),
                    open.mode.decides
                ),
            )
            .with_severity(open.mode.severity)
            .with_help(HELP_MODE),
        );
    }
    if let Some(alt) = s.alternative.as_ref().filter(|a| !s.matches(a.al)) {
        out.push(Finding::new(
            Class::Assumption,
            at(),
            format!(
                "ok only under {ASSUMED_SAMPLING}: if it serves {}, the golden value is {} ({}); state it in the recipe or script",
                alt.desc,
                plain_number(alt.al, 4),
                alt.field
            ),
        )
        .with_help(HELP_SAMPLING));
    }
    out
}

/// `; if it serves thinking_off, the golden value is 2.97 (dsv4_mtp.yaml deepseek-v4-pro.thinking_off.3)`.
pub(crate) fn other_value(open: &Open) -> String {
    open.other.as_ref().map_or_else(String::new, |(mode, al, field)| {
        format!("; if it serves {mode}, the golden value is {} ({field})", plain_number(*al, 4))
    })
}

/// A value off its golden AL that is the golden value under the other draft sampling: right only if the
/// engine samples drafts as no file says.
pub(crate) fn unconfirmed(s: &Subject, _: &CurveSet) -> Option<Judgement> {
    let alt = s.alternative.as_ref().filter(|a| s.matches(a.al))?;
    let message = format!(
        "{} = {} is the golden value for {} ({}); {ASSUMED_SAMPLING} expects {} ({}): state it in the recipe or script",
        s.pin.knob.name(),
        shown_written(&s.pin, s.range.written),
        alt.desc,
        alt.field,
        plain_number(s.expected(), 4),
        s.golden.key
    );
    Some(Judgement::new(
        ValueVerdict::Unconfirmed,
        vec![Finding::new(Class::Assumption, s.pin.location.clone(), message).with_help(HELP_SAMPLING)],
        false,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::ThinkingMode;
    use crate::pins::rules::testing::{embedded, golden, pin, subject};

    #[test]
    fn an_inferred_k_is_a_caveat_of_an_ok_value() {
        let mut p = pin(golden(3, ThinkingMode::On), 3, ThinkingMode::On);
        assert!(caveats(&subject(p.clone()), embedded()).is_empty());
        p.k.how = How::Inferred;
        let found = caveats(&subject(p), embedded());
        assert_eq!(found.len(), 1);
        assert!(found[0].message.starts_with("ok only under the assumed k = 3"), "{}", found[0].message);
    }

    #[test]
    fn stated_sampling_leaves_nothing_assumed() {
        // The test pin states greedy drafting: there is no alternative to be unconfirmed by.
        assert!(unconfirmed(&subject(pin(1.01, 3, ThinkingMode::On)), embedded()).is_none());
    }

    /// Kimi-K3's DSpark drafter has a greedy and a probabilistic curve; the pin only assumes greedy.
    fn kimi(written: f64) -> crate::pins::Pin {
        let mut p = pin(written, 3, ThinkingMode::On);
        p.model.value = Some("moonshotai/Kimi-K3".into());
        p.drafter.value = Some("Inferact/Kimi-K3-DSpark".into());
        p.method.value = Some("dspark".into());
        p.draft_sampling = crate::pins::Fact::known("greedy".into(), How::Inferred, "vLLM's default", None);
        p
    }

    #[test]
    fn the_other_samplings_value_is_unconfirmed_and_the_assumed_ones_ok_with_a_caveat() {
        let s = subject(kimi(2.0));
        let other = s.alternative.as_ref().expect("the probabilistic curve").al;
        assert!((other - s.expected()).abs() > 0.05, "the test needs the two curves apart at k = 3");
        let j = unconfirmed(&subject(kimi(other)), embedded()).expect("right only under probabilistic drafting");
        assert_eq!((j.verdict, j.findings[0].class), (ValueVerdict::Unconfirmed, Class::Assumption));
        let greedy = subject(kimi(s.expected()));
        assert!(unconfirmed(&greedy, embedded()).is_none());
        let caveat = caveats(&greedy, embedded());
        assert!(caveat[0].message.starts_with("ok only under the assumed greedy drafting"), "{}", caveat[0].message);
    }
}
