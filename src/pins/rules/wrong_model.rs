//! **Class 4** · error · `pins fix` mends it.
//!
//! The value is another model's golden value, typically copied from a sibling recipe.
//!
//! Fix: pin the value from this model's curve.
//!
//! Allow: `# alsim: allow wrong-model -- REASON` at the end of the line the finding names, or alone on
//! the line above it; or an entry of the allow-list file (`.alsim-allow.yaml`, or `--allow FILE`):
//! `- {file: recipes/vllm/glm5.yaml, class: wrong-model, reason: a stand-in until this model's curve is
//! collected}`.
//
// The rule finds another model's golden value at the same k.

use crate::curve::CurveSet;
use crate::pins::resolve::lookup::short;
use crate::pins::resolve::subject::Subject;

/// A value another model's curve holds at k.
pub(crate) fn value(s: &Subject, curves: &CurveSet) -> Option<String> {
    let k = s.range.k;
    curves.files().iter().find_map(|file| {
        let curve = file
            .curves
            .iter()
            .filter(|c| c.model() != s.query.model)
            .find(|c| c.al(k).is_ok_and(|al| s.matches(al)))?;
        Some(format!("it is {}'s value ({} {})", curve.model(), short(&file.origin), curve.field(k)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::ThinkingMode;
    use crate::pins::rules::testing::{embedded, pin, subject};

    #[test]
    fn another_models_value_is_named() {
        let theirs = crate::curve::CurveSet::embedded()
            .files()
            .iter()
            .flat_map(|f| f.curves.iter())
            .filter(|c| !c.model().starts_with("minimax"))
            .filter_map(|c| c.al(3).ok())
            .find(|al| {
                let s = subject(pin(*al, 3, ThinkingMode::On));
                crate::pins::rules::wrong_k::value(&s, embedded()).is_none()
                    && crate::pins::rules::wrong_drafter::value(&s, embedded()).is_none()
                    && crate::pins::rules::wrong_thinking_mode::value(&s, embedded()).is_none()
                    && !s.matches(s.expected())
            })
            .expect("another model's value no MiniMax-M3 curve holds");
        let why = value(&subject(pin(theirs, 3, ThinkingMode::On)), embedded()).expect("another model's value");
        assert!(why.starts_with("it is ") && why.contains("'s value"), "{why}");
    }
}
