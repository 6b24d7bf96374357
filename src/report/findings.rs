//! A check's results as CI systems take them: every command that can fail a build (`pins check`, `eval`,
//! `sweep`, `golden collect`, `golden check`, `curve check`) lists its findings as [`CheckResult`]s, which
//! [`super::ci`] prints in each CI format.
//!
//! A result's rule is an `alsim explain` topic (`wrong-k`, `pin-too-high`, `dip`, `band`): the rule's
//! description in SARIF is that section of docs/, so a rule and its explanation cannot tell two stories.

use crate::diagnostic::{Location, Severity};
use crate::explain::{self, Topic};
use crate::pins::diff::Change;

/// One finding of a check, as every CI format carries it.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckResult {
    /// The `alsim explain` topic that says what the finding means (the SARIF rule id).
    pub rule: &'static str,
    /// How serious it is.
    pub severity: Severity,
    /// Where, when it lies in a file (a pooled verdict lies in none).
    pub location: Option<Location>,
    /// What is wrong.
    pub message: String,
    /// The allow-list's reason, where one sanctions the finding: it then fails nothing.
    pub allowed: Option<String>,
    /// Under `--base`: new, unchanged or fixed (a fixed one's location is the base's).
    pub change: Option<Change>,
}

impl CheckResult {
    /// A result of `rule` at `location` with the rule's `severity`, neither allowed nor compared.
    pub fn new(rule: &'static str, severity: Severity, location: Option<Location>, message: String) -> CheckResult {
        CheckResult { rule, severity, location, message, allowed: None, change: None }
    }
}

/// What a rule means, from its `alsim explain` section: a sentence, a paragraph, and the whole section.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RuleText {
    /// The first sentence of the section's first paragraph of prose.
    pub short: String,
    /// That paragraph.
    pub full: String,
    /// The section as Markdown, heading dropped, ending with where it is published.
    pub markdown: String,
    /// Where the section is published (`docs/pins.md#wrong-k`).
    pub reference: String,
}

/// The explanation of `rule`, or `None` where no topic has that name (a test holds that none is missing).
pub(crate) fn rule_text(rule: &str) -> Option<RuleText> {
    let topic: Topic = explain::topics().into_iter().find(|t| t.names.contains(&rule))?;
    let body = topic.text.split_once('\n').map_or("", |(_, rest)| rest).trim();
    // The first paragraph that is prose: a class's first line (`**Class 1** · error · …`, `The check's own
    // · note.`) is a label.
    let full = body
        .split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .find(|p| !p.is_empty() && !p.contains(" · "))
        .unwrap_or_else(|| rule.to_string());
    let short = match full.find(". ") {
        Some(end) => full[..=end].to_string(),
        None => full.clone(),
    };
    let reference = topic.reference();
    Some(RuleText { short, full, markdown: format!("{body}\n\nSource: {reference}"), reference })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rule a check reports under has its `alsim explain` section: SARIF and rdjson describe a rule
    /// from it, and one without would be described by its id alone.
    #[test]
    fn every_rule_a_check_reports_has_its_documentation() {
        use crate::curve::check::ProblemKind;
        use crate::diagnostic::FindingClass;
        use crate::evidence::verdict::Verdict;
        let rules = crate::pins::Class::ALL
            .iter()
            .map(|c| c.name())
            .chain(Verdict::ALL.into_iter().map(super::super::evidence::verdict_rule))
            .chain(ProblemKind::ALL.into_iter().map(FindingClass::name))
            .chain(["band", "pooled"]);
        let missing: Vec<&str> = rules.filter(|rule| rule_text(rule).is_none()).collect();
        assert!(missing.is_empty(), "rules with no explain section: {missing:?}");
    }

    #[test]
    fn a_rule_reads_its_explain_section() {
        let text = rule_text("wrong-k").unwrap();
        assert!(text.short.starts_with("The value is the golden AL for another draft length."), "{text:?}");
        assert!(!text.short.contains("Class 1"), "{text:?}");
        assert!(text.full.len() > text.short.len());
        assert_eq!(text.reference, "docs/pins.md#wrong-k");
        assert!(text.markdown.contains("alsim pins fix"));
        assert!(rule_text("inert").unwrap().short.starts_with("A pin that does nothing"));
        assert_eq!(rule_text("no-such-rule"), None);
    }
}
