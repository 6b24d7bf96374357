//! The allow-list: sanctioned exceptions, each with a reason.
//!
//! An entry names a file (or a family of files with a glob of globset's syntax, the crate's one dialect:
//! every DeepSeek-V4 TensorRT-LLM recipe), a class, optionally a line, and why the exception is deliberate. A finding it matches fails nothing and
//! is shown with the reason; an entry that matches nothing is itself reported (`stale-allow`).
//!
//! Entries come from a file (`--allow FILE`, or [`DEFAULT_FILE`] at the repository root) and from inline
//! comments beside the code they excuse: `# alsim: allow <class> -- <reason>` (`<!-- … -->` in Markdown)
//! sanctions its own line, or the next line when the comment stands alone.

use std::path::Path;

use serde::Serialize;

use super::{Class, Finding, Location};
use crate::error::{Error, Result};
use crate::yaml::{self, Node, Value};

/// One sanctioned exception.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AllowEntry {
    /// Path relative to the repository root, a glob of globset's syntax: `*` matches any run of characters,
    /// `/` included (`…/deepseek-v4/*`), as the sweep's name map and `--exclude` read theirs.
    pub file: String,
    /// `file` compiled once, where the entry is read.
    #[serde(skip)]
    matcher: FileMatch,
    /// Only this line, when given.
    pub line: Option<usize>,
    /// The class sanctioned.
    pub class: Class,
    /// Why the exception is deliberate (required).
    pub reason: String,
    /// Where the entry is written.
    pub at: Location,
}

impl AllowEntry {
    /// An entry for the files the glob `file` names.
    ///
    /// # Errors
    /// When globset cannot read `file` (an unclosed `[` or `{`).
    pub(crate) fn new(
        file: &str,
        line: Option<usize>,
        class: Class,
        reason: &str,
        at: Location,
    ) -> std::result::Result<AllowEntry, globset::Error> {
        let matcher = FileMatch::Glob(globset::Glob::new(file)?.compile_matcher());
        Ok(AllowEntry { file: file.to_string(), matcher, line, class, reason: reason.to_string(), at })
    }

    /// Whether the entry names the file `rel` (relative to the repository root).
    pub(crate) fn names(&self, rel: &str) -> bool {
        match &self.matcher {
            FileMatch::Glob(glob) => glob.is_match(rel),
            FileMatch::Exact => self.file == rel,
        }
    }

    /// Whether the entry sanctions `finding`.
    pub fn matches(&self, finding: &Finding) -> bool {
        self.class == finding.class
            && self.names(&finding.location.file)
            && self.line.is_none_or(|l| Some(l) == finding.location.line)
    }
}

/// How an entry names its files: a glob compiled once, or (an inline allow) its own file's path.
#[derive(Debug, Clone)]
enum FileMatch {
    Glob(globset::GlobMatcher),
    Exact,
}

impl PartialEq for FileMatch {
    fn eq(&self, other: &FileMatch) -> bool {
        match (self, other) {
            (FileMatch::Glob(a), FileMatch::Glob(b)) => a.glob() == b.glob(),
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }
}

/// An inline allow that cannot be read, so it sanctions nothing.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnreadAllow {
    /// Where it is written.
    pub at: Location,
    /// Why its class cannot be read; `None` where the class reads and the reason is missing.
    pub class_error: Option<String>,
}

/// The allow-list file: a YAML list of `{file, line?, class, reason}` (or `allow:` holding that list).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AllowList {
    /// The entries.
    pub entries: Vec<AllowEntry>,
}

/// The allow-list `pins check` uses at the repository root when none is named.
pub const DEFAULT_FILE: &str = ".alsim-allow.yaml";

/// What starts an inline allow, after its comment marker.
const INLINE_MARKER: &str = "alsim: allow";

impl AllowList {
    /// The inline allows written in `text`, the file `rel`, and each one that cannot be read (an unknown
    /// class, no reason): it sanctions nothing, and the check reports it as `stale-allow`.
    ///
    /// ```
    /// use alsim::pins::{AllowList, Class};
    /// let text = "# alsim: allow wrong-k -- measured at k = 2 on purpose\nexport SGLANG_SIMULATE_ACC_LEN=2.27\n";
    /// let (list, bad) = AllowList::inline("run.sh", text);
    /// assert_eq!((list.entries[0].class, list.entries[0].line), (Class::WrongK, Some(2)));
    /// assert!(bad.is_empty());
    /// ```
    pub fn inline(rel: &str, text: &str) -> (AllowList, Vec<UnreadAllow>) {
        let mut list = AllowList::default();
        let mut bad = Vec::new();
        if memchr::memmem::find(text.as_bytes(), INLINE_MARKER.as_bytes()).is_none() {
            return (list, bad);
        }
        for (i, line) in text.lines().enumerate() {
            let Some(at) = line.find(INLINE_MARKER) else { continue };
            let before = line[..at].trim_end();
            let alone = if let Some(code) = before.strip_suffix('#') {
                code.trim().is_empty()
            } else if let Some(code) = before.strip_suffix("<!--") {
                code.trim().is_empty()
            } else {
                // The words in a string or prose, not a comment.
                continue;
            };
            let here = Location::new(rel, i + 1);
            let rest = line[at + INLINE_MARKER.len()..].trim().trim_end_matches("-->").trim_end();
            let (class, reason) = rest.split_once("--").unwrap_or((rest, ""));
            let class = match class.trim().parse::<Class>() {
                Ok(class) => class,
                Err(e) => {
                    bad.push(UnreadAllow { at: here, class_error: Some(e.to_string()) });
                    continue;
                }
            };
            if reason.trim().is_empty() {
                bad.push(UnreadAllow { at: here, class_error: None });
                continue;
            }
            // An inline allow names its own file by path, never a family (a `[` in a name is no glob).
            list.entries.push(AllowEntry {
                file: rel.to_string(),
                matcher: FileMatch::Exact,
                line: Some(if alone { i + 2 } else { i + 1 }),
                class,
                reason: reason.trim().to_string(),
                at: here,
            });
        }
        (list, bad)
    }

    /// Parses an allow-list; `origin` names it in errors.
    ///
    /// ```
    /// use alsim::pins::{AllowList, Class};
    /// let list = AllowList::parse("- file: recipes/trt/*\n  class: wrong-thinking-mode\n  reason: measured off on purpose\n", "allow.yaml")?;
    /// assert_eq!(list.entries[0].class, Class::WrongThinkingMode);
    /// # Ok::<(), alsim::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Parse`] for invalid YAML; [`Error::Invalid`] naming the entry for a missing file, class or
    /// reason, or an unknown class.
    pub fn parse(text: &str, origin: &str) -> Result<AllowList> {
        let root = yaml::parse(text, origin)?;
        let items = match &root.value {
            Value::Seq(items) => items.clone(),
            Value::Map(_) => match root.get("allow") {
                Some(Node { value: Value::Seq(items), .. }) => items.clone(),
                _ => return Err(Error::parse(origin, None, "expected a list of entries (or `allow:` with a list)")),
            },
            Value::Null => Vec::new(),
            _ => {
                return Err(Error::parse(origin, None, format!("expected a list of entries, found a {}", root.kind())));
            }
        };
        let mut entries = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let field = |name: &str| format!("{origin}: entry {}: {name}", i + 1);
            let text_of = |name: &str| item.get(name).and_then(Node::as_scalar_text).filter(|s| !s.trim().is_empty());
            let file = text_of("file").ok_or_else(|| Error::invalid(field("file"), "every entry names a file"))?;
            let class: Class = text_of("class")
                .ok_or_else(|| Error::invalid(field("class"), "every entry names a class"))?
                .parse()
                .map_err(|e: Error| Error::invalid(field("class"), e.to_string()))?;
            let reason =
                text_of("reason").ok_or_else(|| Error::invalid(field("reason"), "every exception needs a reason"))?;
            let line = match item.get("line") {
                None | Some(Node { value: Value::Null, .. }) => None,
                Some(node) => Some(
                    node.as_f64()
                        .filter(|l| *l >= 1.0 && l.fract() == 0.0)
                        .ok_or_else(|| Error::invalid(field("line"), "a line is a positive integer"))?
                        as usize,
                ),
            };
            let at = Location::new(origin, item.entry("file").map_or(item.line, |(key, _)| key.line));
            let entry = AllowEntry::new(file.trim_start_matches("./"), line, class, &reason, at)
                .map_err(|e| Error::invalid(field("file"), e.to_string()))?;
            entries.push(entry);
        }
        Ok(AllowList { entries })
    }

    /// Reads an allow-list file.
    ///
    /// # Errors
    /// [`Error::Io`] when unreadable, else as [`AllowList::parse`].
    pub fn read(path: &Path) -> Result<AllowList> {
        let text = crate::input::read_text(path, crate::input::SMALL_FILE_LIMIT)?;
        AllowList::parse(&text, &path.display().to_string())
    }

    /// This list with `other`'s entries after its own.
    pub fn extend(&mut self, other: AllowList) {
        self.entries.extend(other.entries);
    }

    /// Marks the findings an entry sanctions, and returns the entries that sanction none of them.
    pub fn apply(&self, findings: &mut [Finding]) -> Vec<&AllowEntry> {
        let mut used = vec![false; self.entries.len()];
        for finding in findings.iter_mut() {
            if let Some(i) = self.entries.iter().position(|e| e.matches(finding)) {
                finding.allowed = Some(self.entries[i].reason.clone());
                used[i] = true;
            }
        }
        self.entries.iter().zip(used).filter(|(_, used)| !used).map(|(entry, _)| entry).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_list_needs_reasons_and_matches_families() {
        let err = AllowList::parse("- file: a.sh\n  class: drift\n", "allow.yaml").unwrap_err().to_string();
        assert!(err.contains("entry 1: reason"), "{err}");
        let err = AllowList::parse("- file: a.sh\n  class: nope\n  reason: x\n", "allow.yaml").unwrap_err().to_string();
        assert!(err.contains("unknown class"), "{err}");
        let list = AllowList::parse("- file: trt/dsv4/*\n  class: wrong-thinking-mode\n  reason: deliberate\n- file: x\n  class: drift\n  reason: y\n", "allow.yaml").unwrap();
        let mut findings = vec![
            Finding::new(Class::WrongThinkingMode, Location::new("trt/dsv4/a.yaml", 3), "m"),
            Finding::new(Class::WrongThinkingMode, Location::new("trt/dsv4/b.yaml", 9), "m"),
            Finding::new(Class::WrongK, Location::new("trt/dsv4/b.yaml", 9), "m"),
        ];
        let unused = list.apply(&mut findings);
        assert_eq!(findings.iter().filter(|f| f.allowed.is_some()).count(), 2);
        assert_eq!(unused.iter().map(|e| (e.file.as_str(), e.at.line)).collect::<Vec<_>>(), [("x", Some(4))]);
    }

    #[test]
    fn a_file_glob_is_globsets_and_a_bad_one_names_its_entry() {
        let list =
            AllowList::parse("- file: '*/{a,b}.sh'\n  class: drift\n  reason: two recipes\n", "allow.yaml").unwrap();
        let entry = &list.entries[0];
        // `*` crosses folders, as in the snapshot's `…/deepseek-v4/*`; braces are alternatives.
        assert!(entry.names("x/y/a.sh") && entry.names("x/b.sh") && !entry.names("x/c.sh"));
        let err = AllowList::parse("- file: 'x/[a.sh'\n  class: drift\n  reason: y\n", "allow.yaml").unwrap_err();
        assert!(err.to_string().contains("allow.yaml: entry 1: file"), "{err}");
        // An inline allow names its own file, a `[` in its name included.
        let (inline, _) = AllowList::inline("a[1].sh", "x=1 # alsim: allow drift -- on purpose\n");
        assert!(inline.entries[0].names("a[1].sh") && !inline.entries[0].names("a1.sh"));
    }
}
