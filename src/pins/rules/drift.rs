//! **Class 10** · error.
//!
//! k and AL are set independently (k can be overridden from the environment while the AL stays fixed),
//! or prose (a changelog, a comment) names another value than the code. A changelog kept as YAML
//! (`- config-keys: [...]`) is held to the pins of the config entries it names: where the newest entry
//! naming one (by pull request) states a knob's value (`SGLANG_SIMULATE_ACC_LEN=2.99`), the entry must
//! pin it; an older entry records what was.
//!
//! Example (InferenceX): `SPEC_NUM_TOKENS="${SPEC_NUM_TOKENS:-2}"` beside a fixed
//! `SYNTHETIC_ACCEPT_LEN=2.51`: a run with `SPEC_NUM_TOKENS=3` keeps the k = 2 value.
//!
//! Fix: derive the AL from k (a `case` on k, or `alsim pin` at run time), and correct the prose.
//!
//! Allow: in Markdown, `<!-- alsim: allow drift -- REASON -->` at the end of the line the finding names
//! or alone on the line above it (`# alsim: allow drift -- REASON` in scripts); or an entry of the
//! allow-list file: `- {file: CHANGELOG.md, class: drift, reason: the entry records the old value}`.
//
// The rule finds k and AL set independently (an override of k keeps the old k's value), or a comment
// or prose line naming another AL than the code pins.

use crate::pins::Inventory;
use crate::pins::observed::Observed;
use crate::pins::{AL_TOLERANCE, Class, Finding, Knob, Location, Pin, plain_number};

/// Overrides of k the value does not follow, and comments and prose naming another AL than the code pins.
pub(crate) fn run(inventory: &Inventory) -> Vec<Finding> {
    let mut by_file: std::collections::BTreeMap<&str, Pinned> = std::collections::BTreeMap::new();
    for pin in &inventory.pins {
        by_file.entry(pin.location.file.as_str()).or_default().add(pin);
    }
    let mut by_entry: std::collections::BTreeMap<&str, (Pinned, std::collections::BTreeSet<&str>)> =
        std::collections::BTreeMap::new();
    for pin in &inventory.pins {
        for entry in &pin.entries {
            let (pinned, files) = by_entry.entry(entry.name.as_str()).or_default();
            pinned.add(pin);
            files.insert(pin.location.file.as_str());
        }
    }
    let found = inventory.observed.iter().filter_map(|o| match o {
        Observed::ChangelogValue { at, entry, knob, value } => {
            let (pinned, files) = by_entry.get(entry.as_str())?;
            changelog(at.clone(), entry, *knob, value.parse().ok()?, pinned, files)
        }
        Observed::KOverride { at, k_from, knob, value, k } => Some(k_override(at.clone(), k_from, *knob, value, k)),
        Observed::Comment { at, text } => comment(at.clone(), text, by_file.get(at.file.as_str())?),
        Observed::Prose { at, text, file } => prose(at.clone(), text, file, by_file.get(file.as_str())?),
        _ => None,
    });
    found.collect()
}

/// What one file pins: the values written and the ALs they imply, the draft lengths they run at, and the
/// names they are written under — what a comment must name to be about the pin.
#[derive(Debug, Default)]
pub(crate) struct Pinned {
    values: Vec<f64>,
    ks: Vec<usize>,
    names: Vec<String>,
}

impl Pinned {
    /// Adds a pin of the file.
    pub(crate) fn add(&mut self, pin: &Pin) {
        let Some(written) = pin.written.value else { return };
        self.values.push(written);
        self.values.extend(pin.knob.implied_al(written, pin.k.value));
        self.ks.extend(pin.k.value);
        self.names.push(pin.knob.name().to_string());
        // The variable a script holds the value in (`SYNTHETIC_ACCEPT_LEN=2.51`).
        let variable = pin.written.text.split('=').next().unwrap_or_default();
        let identifier = variable.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && variable.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if identifier {
            self.names.push(variable.to_string());
        }
    }

    /// The values, sorted without repeats, for messages.
    fn shown(&self) -> String {
        let mut v: Vec<String> = self.values.iter().map(|x| plain_number(*x, 4)).collect();
        v.sort();
        v.dedup();
        v.join(", ")
    }

    /// The first AL-like number of `text` that no pinned value explains.
    fn stale(&self, text: &str) -> Option<f64> {
        al_numbers(text).into_iter().find(|n| !self.values.iter().any(|v| (v - n).abs() <= AL_TOLERANCE))
    }
}

/// A k the environment can override while the pin's value does not follow it.
pub(crate) fn k_override(at: Location, k_from: &str, knob: Knob, value: &str, k: &str) -> Finding {
    Finding::new(
        Class::Drift,
        at,
        format!(
            "k comes from {k_from} and can be overridden from the environment, but {} = {value} does not follow it: an override of k runs with the k = {k} value",
            knob.name()
        ),
    )
}

/// A comment of a pinned script that names another AL than the code pins. Only a comment about the pin
/// counts: one that names a draft length the file runs, or the name the pin is written under. A comment
/// that tabulates other draft lengths' golden values, or quotes a measurement, is not drift (InferenceX
/// `5ba0b0b`: a table of K = 3 and K = 7 golden ALs justifying K = 2 was four false alarms).
pub(crate) fn comment(at: Location, text: &str, pinned: &Pinned) -> Option<Finding> {
    if !mentions_al(text) || !about_the_pin(text, pinned) {
        return None;
    }
    let named = pinned.stale(text)?;
    Some(Finding::new(Class::Drift, at, format!("comment names {named} but the code pins {}", pinned.shown())))
}

/// A prose line (README, changelog) that names one pinned `file` and an AL it does not pin.
pub(crate) fn prose(at: Location, text: &str, file: &str, pinned: &Pinned) -> Option<Finding> {
    if !mentions_al(text) {
        return None;
    }
    let named = pinned.stale(text)?;
    Some(Finding::new(Class::Drift, at, format!("names {named} for {file}, but the code pins {}", pinned.shown())))
}

/// The newest changelog entry naming config entry `entry` states `value` for `knob`, which none of the
/// entry's pins (in `files`) writes.
fn changelog(
    at: Location,
    entry: &str,
    knob: Knob,
    value: f64,
    pinned: &Pinned,
    files: &std::collections::BTreeSet<&str>,
) -> Option<Finding> {
    if pinned.values.is_empty() || pinned.values.iter().any(|v| (v - value).abs() <= AL_TOLERANCE) {
        return None;
    }
    let files: Vec<&str> = files.iter().copied().collect();
    Some(Finding::new(
        Class::Drift,
        at,
        format!(
            "the newest changelog entry for {entry} states {} {} but it pins {} ({})",
            knob.name(),
            plain_number(value, 4),
            pinned.shown(),
            files.join(", ")
        ),
    ))
}

/// Whether a comment is about the file's pin: it names a draft length the file runs (`k = 3`, `K=2`) and
/// none it does not, or it names the pin.
fn about_the_pin(text: &str, pinned: &Pinned) -> bool {
    let named = draft_lengths(text);
    if !named.is_empty() {
        return named.iter().all(|k| pinned.ks.contains(k));
    }
    pinned.names.iter().any(|name| text.contains(name.as_str()))
}

/// Draft lengths a text names: `k = 3`, `K=2`, `(k=3)`; not `K-1` or `k3s`.
fn draft_lengths(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        if !(b == b'k' || b == b'K') || (i > 0 && bytes[i - 1].is_ascii_alphanumeric()) {
            continue;
        }
        let rest = text[i + 1..].trim_start();
        let Some(rest) = rest.strip_prefix(['=', ':']) else { continue };
        let digits: String = rest.trim_start().chars().take_while(char::is_ascii_digit).collect();
        out.extend(digits.parse::<usize>().ok());
    }
    out
}

/// Whether a text speaks of acceptance.
fn mentions_al(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("acceptance") || text.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == "AL")
}

/// Numbers written like acceptance lengths: `d.dd` in [1, 10), standing alone (not `glm5.2` or `v1.25.0`).
fn al_numbers(text: &str) -> Vec<f64> {
    text.split(|c: char| c.is_whitespace() || "(),;:=[]{}\"'`".contains(c))
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| w.len() == 4 && w.as_bytes()[1] == b'.' && w.chars().filter(|c| c.is_ascii_digit()).count() == 3)
        .filter_map(|w| w.parse::<f64>().ok())
        .filter(|v| (1.0..10.0).contains(v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::curve::ThinkingMode;
    use crate::pins::Fact;
    use crate::pins::rules::testing::pin;

    /// A script pinning 2.51 at k = 2 in `SYNTHETIC_ACCEPT_LEN`.
    fn pinned() -> Pinned {
        let mut p = pin(2.51, 2, ThinkingMode::On);
        p.written = Fact::known(2.51, crate::pins::How::Literal, "SYNTHETIC_ACCEPT_LEN=2.51", None);
        let mut pinned = Pinned::default();
        pinned.add(&p);
        pinned
    }

    #[test]
    fn drift_names_both_values() {
        let at = Location::new("README.md", 3);
        let f = prose(at.clone(), "a.sh pins golden AL 2.40", "a.sh", &pinned()).expect("2.40 is not pinned");
        assert_eq!(f.message, "names 2.4 for a.sh, but the code pins 2.51");
        let f = comment(at.clone(), " golden AL 2.40 for k = 2", &pinned()).expect("about k = 2");
        assert_eq!(f.message, "comment names 2.4 but the code pins 2.51");
        assert!(comment(at.clone(), " SYNTHETIC_ACCEPT_LEN: the golden AL 2.40", &pinned()).is_some(), "names the pin");
        let f = k_override(at, "${NUM_SPEC:-3}", Knob::VllmSyntheticLength, "2.83", "3");
        assert!(f.message.contains("runs with the k = 3 value"), "{}", f.message);
    }

    #[test]
    fn a_comment_about_other_draft_lengths_or_a_measurement_is_not_drift() {
        let at = Location::new("a.sh", 160);
        // InferenceX 5ba0b0b's kimik3_fp4_b300_vllm_mtp.sh, which pins 2.51 at K=2.
        for line in [
            "     K=3  golden AL 3.00  ->  ~1.7x low conc, ~0.95x saturated",
            "     K=7  golden AL 3.84  ->  ~1.3x low conc, ~0.54x saturated",
            " saturates even at the forced golden AL of 3.84. Using cost ~ 1 + m(K-1) + f,",
            " acceptance length is 1.16-2.01 with 13-41% position-1 acceptance -- versus 4.18",
        ] {
            assert!(comment(at.clone(), line, &pinned()).is_none(), "{line}");
        }
        assert!(comment(at.clone(), "     K=2  golden AL 2.61", &pinned()).is_some());
        // A value written bare (`2.51`, or `3`) names no variable a comment could mention.
        let mut bare = pin(3.0, 2, ThinkingMode::On);
        bare.written = Fact::known(3.0, crate::pins::How::Literal, "3", None);
        let mut pinned = Pinned::default();
        pinned.add(&bare);
        assert!(comment(at, " measured AL 3.84 over 3 runs", &pinned).is_none());
    }

    #[test]
    fn numbers_and_draft_lengths_are_read_as_written() {
        assert_eq!(al_numbers("golden AL 2.78 (k=3), rate 0.61, glm5.2 v1.25.0 3.00."), [2.78, 3.0]);
        assert_eq!(draft_lengths("K=2 vs (k = 3), m(K-1), k3s, bk=4"), [2, 3]);
    }
}
