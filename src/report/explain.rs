//! `alsim explain`: one topic as its page has it, and the list of topics page by page.

use std::fmt::Write as _;

use crate::explain::Topic;

/// The topic's section as its page has it, then where it stands in the docs.
pub fn topic(topic: &Topic) -> String {
    format!("{}\n\nSource: {}\n", topic.text.trim_end(), topic.reference())
}

/// Every topic under the page that holds it, with its class number and its other spellings.
pub fn topic_list(topics: &[Topic]) -> String {
    let mut out = String::from("Topics of `alsim explain TOPIC`, each a section of a page under docs/:\n");
    let mut page = "";
    for topic in topics {
        if topic.page != page {
            page = topic.page;
            let _ = write!(out, "\n{page}\n");
        }
        let mut also: Vec<String> =
            topic.class().and_then(|c| c.number()).map(|n| format!("class {n}")).into_iter().collect();
        also.extend(topic.names[1..].iter().map(|n| n.to_string()));
        let line = if also.is_empty() {
            format!("  {}", topic.name())
        } else {
            format!("  {:<24}{}", topic.name(), also.join(", "))
        };
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}
