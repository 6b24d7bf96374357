//! **Class 2** · error · `pins fix` mends it.
//!
//! The value belongs to another drafter's curve: a GQA drafter pinned with the plain drafter's value or
//! the reverse, or the greedy-draft curve used with probabilistic drafting (or the reverse). Two such
//! files may have identical headers and keys; only the file name and the recorded drafter tell them
//! apart. The run's method (MTP, DSpark, EAGLE3, …), its drafter and the drafter's variant choose the
//! curve: where the repository lacks that curve, the one variant model key that has it (a DSpark
//! checkpoint's `deepseek-v4-pro-0813` for `deepseek-v4-pro`), else alsim's embedded curve, each said
//! in a note; never another method's curve of the base model. A DSpark run pinned with the model's
//! MTP value holds another method's value.
//!
//! Example: a vLLM recipe with the EAGLE3-GQA drafter pins 2.83, the EAGLE3 (non-GQA) value; its own
//! curve gives 2.78.
//!
//! Fix: pin the value from the curve of the drafter the run loads (`alsim pin --drafter …`).
//!
//! Allow: `# alsim: allow wrong-drafter -- REASON` at the end of the line the finding names, or alone
//! on the line above it; or an entry of the allow-list file (`.alsim-allow.yaml`, or `--allow FILE`):
//! `- {file: recipes/vllm/minimax-m3-gqa.yaml, class: wrong-drafter, reason: the GQA drafter's curve is
//! not collected yet}`.
//
// The rule finds the value of another drafter's curve, or of the curve collected under the other
// draft sampling.

use crate::curve::{Curve, CurveFile, CurveSet, ThinkingMode};
use crate::pins::resolve::key::is_variant;
use crate::pins::resolve::lookup::{method_family, short};
use crate::pins::resolve::subject::Subject;

/// The draft sampling a file was collected with: one that records none was collected greedily (engines
/// draft greedily by default).
fn sampling(f: &crate::curve::CurveFile) -> &str {
    f.provenance.draft_sampling.as_deref().unwrap_or("greedy")
}

/// A value another curve file of the same model family (another drafter, another sampling, another
/// method) holds at k. The family is the curve's model key and the base key it is a variant of (a
/// DSpark checkpoint's `deepseek-v4-pro-0813` and `deepseek-v4-pro`), so another method's curve of the
/// base model is named as such, never as another model's.
pub(crate) fn value(s: &Subject, curves: &CurveSet) -> Option<String> {
    let mode = s.curve.mode;
    let same_mode =
        |c: &Curve| c.mode() == mode || c.mode() == ThinkingMode::Unspecified || mode == ThinkingMode::Unspecified;
    let key = &s.query.model;
    let family = |model: &str| key.eq_ignore_ascii_case(model) || is_variant(key, model);
    let method =
        |f: &CurveFile| f.provenance.method.as_deref().map(|m| method_family(m, f.provenance.drafter.as_deref()));
    let chosen = s.file(curves);
    let others = curves.files().iter().filter(|f| !std::ptr::eq(*f, chosen));
    for file in others {
        for curve in file.curves.iter().filter(|c| family(c.model()) && same_mode(c)) {
            if curve.al(s.range.k).is_ok_and(|al| s.matches(al)) {
                if let (Some(theirs), Some(ours)) = (method(file), method(chosen))
                    && theirs != ours
                {
                    return Some(format!(
                        "it is the value of another method's curve ({theirs}: {} {}), not this run's {ours}",
                        short(&file.origin),
                        curve.field(s.range.k)
                    ));
                }
                let what = if sampling(file) == sampling(chosen) {
                    format!("file {}", short(&file.origin))
                } else {
                    format!("draft sampling {}", sampling(file))
                };
                return Some(format!(
                    "it is the value of another drafter's curve ({what}, {})",
                    curve.field(s.range.k)
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pins::rules::testing::{embedded, pin, subject};

    #[test]
    fn the_gqa_drafters_value_under_the_mha_drafter_is_named() {
        let mut gqa = pin(2.0, 3, ThinkingMode::On);
        gqa.drafter.value = Some("Inferact/MiniMax-M3-EAGLE3-GQA".into());
        let theirs = subject(gqa).expected();
        let mha = subject(pin(theirs, 3, ThinkingMode::On));
        assert_ne!(mha.expected(), theirs, "the test needs the two drafters' curves to differ at k = 3");
        let why = value(&mha, embedded()).expect("the GQA drafter's value");
        assert!(why.contains("minimaxm3_eagle3_gqa.yaml"), "{why}");
    }
}
