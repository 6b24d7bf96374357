//! **Class 2** · error · `pins fix` mends it.
//!
//! The value belongs to another drafter's curve: a GQA drafter pinned with the plain drafter's value or
//! the reverse, or the greedy-draft curve used with probabilistic drafting (or the reverse). Two such
//! files may have identical headers and keys; only the file name and the recorded drafter tell them
//! apart.
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

use crate::curve::{Curve, ThinkingMode};
use crate::pins::resolve::lookup::{files_for, short};
use crate::pins::resolve::subject::Subject;

/// The draft sampling a file was collected with: one that records none was collected greedily (engines
/// draft greedily by default).
fn sampling(f: &crate::curve::CurveFile) -> &str {
    f.provenance.draft_sampling.as_deref().unwrap_or("greedy")
}

/// A value another curve file of the same model (another drafter, another sampling) holds at k.
pub(crate) fn value(s: &Subject<'_>) -> Option<String> {
    let mode = s.resolved.curve.mode();
    let same_mode =
        |c: &Curve| c.mode() == mode || c.mode() == ThinkingMode::Unspecified || mode == ThinkingMode::Unspecified;
    let others = files_for(s.curves, &s.query.model).into_iter().filter(|f| !std::ptr::eq(*f, s.resolved.file));
    for file in others {
        for curve in file.curves.iter().filter(|c| c.model() == s.query.model && same_mode(c)) {
            if curve.al(s.range.k).is_ok_and(|al| s.matches(al)) {
                let what = if sampling(file) == sampling(s.resolved.file) {
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
    use crate::pins::rules::testing::{pin, subject};

    #[test]
    fn the_gqa_drafters_value_under_the_mha_drafter_is_named() {
        let mut gqa = pin(2.0, 3, ThinkingMode::On);
        gqa.drafter.value = Some("Inferact/MiniMax-M3-EAGLE3-GQA".into());
        let theirs = subject(gqa).expected();
        let mha = subject(pin(theirs, 3, ThinkingMode::On));
        assert_ne!(mha.expected(), theirs, "the test needs the two drafters' curves to differ at k = 3");
        let why = value(&mha).expect("the GQA drafter's value");
        assert!(why.contains("minimaxm3_eagle3_gqa.yaml"), "{why}");
    }
}
