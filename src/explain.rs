//! The user documentation shipped in `docs/`, built into the binary, and the topics `alsim explain`
//! prints from it.
//!
//! Each text has one source, its page: a topic is a section whose heading is nothing but its names in
//! backticks (`` ## `wrong-k` ``, `` ### `al`, `acceptance-length` ``), and `alsim explain` prints that
//! section as the page has it, so the command and the page cannot tell two stories. The first name is
//! the topic's own (and, on GitHub, the start of the section's anchor); the others are the spellings
//! alsim prints elsewhere (`tensorrt-llm` for `trtllm`). Finding classes are also found by their number
//! (`8`, `class-8`), as pins check numbers them, and schedules and verdicts by the words tables print
//! (`SGLang match-expected`, `pin too high`).
//!
//! Headings are parsed here as GitHub renders them, anchors included, so a test can prove every
//! reference in messages, help and pages resolves (`tests/docs.rs`).

use crate::accept::schedule::ScheduleKind;
use crate::error::{Error, LookupKind, Result};
use crate::evidence::verdict::Verdict;
use crate::pins::Class;

/// One page of the user documentation.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    /// The page's path in the repository (`docs/pins.md`), as messages cite it.
    pub path: &'static str,
    /// The page's Markdown.
    pub text: &'static str,
}

/// Every page that holds topics, in the order `alsim explain --list` shows them.
pub const PAGES: [Page; 5] = [
    Page { path: "docs/pins.md", text: include_str!("../docs/pins.md") },
    Page { path: "docs/engines.md", text: include_str!("../docs/engines.md") },
    Page { path: "docs/terms.md", text: include_str!("../docs/terms.md") },
    Page { path: "docs/model.md", text: include_str!("../docs/model.md") },
    Page { path: "docs/artifacts.md", text: include_str!("../docs/artifacts.md") },
];

/// One section of a Markdown page: its heading and everything up to the next heading of the same or a
/// higher level (so a section holds its subsections).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section<'a> {
    /// 1 for `#`, 2 for `##`…
    pub level: usize,
    /// The heading's text, without the `#`s.
    pub title: &'a str,
    /// The heading line and the body.
    pub text: &'a str,
}

impl<'a> Section<'a> {
    /// The names a topic heading gives (`` `al`, `acceptance-length` `` → al, acceptance-length); none for
    /// a heading that is prose (`## How the check follows a pin`, `## 6. Throughput …`).
    pub fn topic_names(&self) -> Vec<&'a str> {
        let names: Vec<&str> = self.title.split(", ").filter_map(|n| n.strip_prefix('`')?.strip_suffix('`')).collect();
        let all_names = names.len() == self.title.split(", ").count();
        if all_names && names.iter().all(|n| !n.is_empty() && *n == normalize(n)) { names } else { Vec::new() }
    }

    /// The section number a heading starts with (`6` of `## 6. Throughput …`, `1.4` of `### 1.4 Metrics`),
    /// which references cite as `§6`.
    pub fn number(&self) -> Option<&'a str> {
        let end = self.title.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(self.title.len());
        let number = self.title[..end].trim_end_matches('.');
        (!number.is_empty() && self.title[end..].starts_with(' ')).then_some(number)
    }
}

/// The sections of a Markdown text, in order, each with the anchor GitHub gives its heading. Lines in
/// fenced code blocks are not headings.
pub fn sections(text: &str) -> Vec<(Section<'_>, String)> {
    let mut headings = Vec::new();
    let mut fenced = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            let level = line.bytes().take_while(|&b| b == b'#').count();
            if (1..=6).contains(&level) && line[level..].starts_with(' ') {
                headings.push((offset, level, line[level..].trim()));
            }
        }
        offset += line.len();
    }
    let mut seen: Vec<String> = Vec::new();
    headings
        .iter()
        .enumerate()
        .map(|(i, &(start, level, title))| {
            let end = headings[i + 1..].iter().find(|h| h.1 <= level).map_or(text.len(), |h| h.0);
            let slug = slug(title);
            let repeats = seen.iter().filter(|s| **s == slug).count();
            seen.push(slug.clone());
            let anchor = if repeats == 0 { slug } else { format!("{slug}-{repeats}") };
            (Section { level, title, text: &text[start..end] }, anchor)
        })
        .collect()
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens.
fn slug(title: &str) -> String {
    title
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .flat_map(char::to_lowercase)
        .collect()
}

/// A topic as users type it: lower case, words joined by hyphens (`pin too high` and `Pin_Too_High` are
/// `pin-too-high`, `TV distance` is `tv-distance`, `tok/s/GPU` is `tok-s-gpu`, `rates pin (vLLM, llama.cpp)`
/// is `rates-pin-vllm-llama.cpp`).
pub fn normalize(topic: &str) -> String {
    topic
        .split(|c: char| c.is_whitespace() || matches!(c, '_' | '/' | '-' | '(' | ')' | ','))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join("-")
}

/// One topic `alsim explain` knows.
#[derive(Debug, Clone)]
pub struct Topic {
    /// Its names: its own first, then the other spellings it answers to.
    pub names: Vec<&'static str>,
    /// The page it is a section of.
    pub page: &'static str,
    /// The section's anchor on that page.
    pub anchor: String,
    /// The section, heading included, as the page has it.
    pub text: &'static str,
}

impl Topic {
    /// The topic's own name.
    pub fn name(&self) -> &'static str {
        self.names[0]
    }

    /// Where the section is published (`docs/pins.md#wrong-k`).
    pub fn reference(&self) -> String {
        format!("{}#{}", self.page, self.anchor)
    }

    /// The pin finding class the topic explains, if it is one (its number shows in the topic list).
    pub fn class(&self) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == self.name())
    }
}

/// Every topic of every page, in page order.
pub fn topics() -> Vec<Topic> {
    PAGES
        .iter()
        .flat_map(|page| {
            sections(page.text).into_iter().filter_map(|(section, anchor)| {
                let names = section.topic_names();
                (!names.is_empty()).then_some(Topic { names, page: page.path, anchor, text: section.text })
            })
        })
        .collect()
}

/// The topic a user asked for: by any of its names, in any case and spacing, a finding class by its number
/// (`8`, `class 8`), or a schedule or verdict by the words tables print.
///
/// # Errors
/// [`Error::Lookup`] naming the closest topics when nothing answers to `query`.
///
/// ```
/// let topic = alsim::explain::find("class 8")?;
/// assert_eq!(topic.reference(), "docs/pins.md#eval-leak");
/// assert!(alsim::explain::find("wrong-kk").unwrap_err().to_string().contains("wrong-k"));
/// # Ok::<(), alsim::Error>(())
/// ```
pub fn find(query: &str) -> Result<Topic> {
    let wanted = normalize(query);
    let number = wanted.strip_prefix("class-").unwrap_or(&wanted);
    let by_number = number.parse::<usize>().ok().and_then(|n| Class::ALL.into_iter().find(|c| c.number() == Some(n)));
    let labelled = printed_label_topic(&wanted);
    let wanted = by_number.map(Class::name).or(labelled.as_deref()).unwrap_or(&wanted);
    let all = topics();
    if let Some(topic) = all.iter().find(|t| t.names.contains(&wanted)) {
        return Ok(topic.clone());
    }
    let mut close: Vec<(usize, &str)> = all
        .iter()
        .flat_map(|t| t.names.iter().map(move |n| (t.name(), *n)))
        .filter_map(|(own, name)| {
            let distance = strsim::levenshtein(wanted, name);
            let near = distance <= 2.max(wanted.len() / 4) || (wanted.len() >= 3 && name.contains(wanted));
            near.then_some((distance, own))
        })
        .collect();
    close.sort();
    let mut names: Vec<&str> = Vec::new();
    for (_, own) in close {
        if !names.contains(&own) && names.len() < 5 {
            names.push(own);
        }
    }
    let hint = if names.is_empty() { String::new() } else { format!("; close: {}", names.join(", ")) };
    Err(Error::lookup(LookupKind::Topic, format!("no topic '{query}'{hint}")))
}

/// The topic of a label tables print in words of their own: a schedule's row label ("llama.cpp length
/// (geometric)"), whose topic is the name JSON gives it, and a verdict's words.
fn printed_label_topic(wanted: &str) -> Option<String> {
    let schedules = ScheduleKind::ALL.map(|k| (k.label(), json_name(k)));
    let verdicts = Verdict::ALL.map(|v| (v.label(), json_name(v)));
    schedules
        .into_iter()
        .chain(verdicts)
        .find(|(label, _)| normalize(label) == wanted)
        .map(|(_, name)| normalize(&name))
}

/// The name a unit variant has in JSON (`sglang-match-expected`, `pin_too_high`).
fn json_name(value: impl serde::Serialize) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_are_githubs() {
        let text = "# Title\n## 6. Throughput per concurrency\n```\n## not a heading\n```\n### `al`, `acceptance-length`\n## `llamacpp`, `llama.cpp`\n## 6. Throughput per concurrency\n";
        let anchors: Vec<String> = sections(text).into_iter().map(|(_, a)| a).collect();
        assert_eq!(
            anchors,
            [
                "title",
                "6-throughput-per-concurrency",
                "al-acceptance-length",
                "llamacpp-llamacpp",
                "6-throughput-per-concurrency-1"
            ]
        );
    }

    #[test]
    fn a_section_holds_its_subsections_and_ends_at_its_level() {
        let text = "## a\none\n### b\ntwo\n## c\nthree\n";
        let found = sections(text);
        assert_eq!(found[0].0.text, "## a\none\n### b\ntwo\n");
        assert_eq!(found[1].0.text, "### b\ntwo\n");
        assert_eq!(found[2].0.text, "## c\nthree\n");
    }

    #[test]
    fn only_headings_of_names_are_topics() {
        let heading = |title| Section { level: 2, title, text: "" };
        assert_eq!(heading("`al`, `acceptance-length`").topic_names(), ["al", "acceptance-length"]);
        assert!(heading("`al` and more").topic_names().is_empty());
        assert!(heading("How `al` works").topic_names().is_empty());
        assert!(heading("`Not_Normal`").topic_names().is_empty());
        assert_eq!(heading("6. Throughput").number(), Some("6"));
        assert_eq!(heading("1.4 Metrics").number(), Some("1.4"));
        assert_eq!(heading("`k`").number(), None);
    }

    #[test]
    fn normalizing_joins_words_with_hyphens() {
        assert_eq!(normalize(" Pin too_HIGH "), "pin-too-high");
        assert_eq!(normalize("tok/s/GPU"), "tok-s-gpu");
        assert_eq!(normalize("llama.cpp"), "llama.cpp");
    }
}
