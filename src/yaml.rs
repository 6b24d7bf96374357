//! YAML reading: one builder over the events of an event parser that carries positions
//! (`saphyr-parser`; this is the only file that names it), into a small tree whose every node knows its
//! line. Golden files, allow-lists, recipes and master configs are all read here.
//!
//! Two readings share the builder. [`parse`] rejects a key written twice in one mapping, naming its
//! line: typed deserialisation would silently keep the last of two duplicate golden values. Recipes are
//! consumed by tools written in Python, so [`parse_like_pyyaml`] reads them as PyYAML's `safe_load`
//! does: the last of two duplicate keys wins (each duplicate is returned so the caller can warn). Both
//! apply `<<:` merge keys and expand aliases.
//!
//! Plain scalars resolve by the rules alsim has always read them with (those of the `serde_yaml` crate
//! it used before, YAML 1.2's core schema: `yes`/`no`/`on`/`off` are strings, `0o17` is octal, `007` a
//! string), so a file reads the same as before the change of parser; `examples/yaml_agree.rs` holds the
//! builder to that old reading over a real repository.
//!
//! Nesting is bounded ([`MAX_DEPTH`]) as the events arrive, so a deeply nested document is refused after
//! reading its first [`MAX_DEPTH`] levels, in time linear in the text read; aliases are bounded by the
//! nodes they copy, so a document of aliases of aliases cannot expand exponentially.

use std::borrow::Cow;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span, StrInput, Tag};

use crate::error::{Error, Result};

/// A parsed YAML node: its value and the 1-based line where it starts (a mapping's at its first key, a
/// collection written in flow style at its bracket). A node copied by an alias keeps the lines of its
/// anchor, where its text is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Node {
    /// The 1-based line the node starts on.
    pub line: usize,
    /// What the node holds.
    pub value: Value,
}

/// The value of a [`Node`].
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    /// `~`, `null` or an empty value.
    #[default]
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, with its canonical spelling (`1.10` reads as `1.1`, `0x1F` as `31`).
    Number(f64, String),
    /// A string scalar.
    String(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in document order; each key is a node with its line.
    Map(Vec<(Node, Node)>),
}

impl Value {
    /// An integer as the old YAML crate read it.
    fn from_u64(v: u64) -> Value {
        Value::Number(v as f64, v.to_string())
    }

    /// A negative integer as the old YAML crate read it.
    fn from_i64(v: i64) -> Value {
        Value::Number(v as f64, v.to_string())
    }

    /// A float as the old YAML crate read it (its spelling is the shortest that reads back).
    fn from_f64(v: f64) -> Value {
        Value::Number(v, v.to_string())
    }
}

impl Node {
    /// The scalar as text (numbers in their canonical spelling); `None` for collections and null.
    pub fn as_scalar_text(&self) -> Option<String> {
        match &self.value {
            Value::Bool(b) => Some(b.to_string()),
            Value::Number(_, raw) => Some(raw.clone()),
            Value::String(s) => Some(s.clone()),
            _ => None,
        }
    }

    /// The scalar as a number: numbers directly, strings when they parse as one.
    pub fn as_f64(&self) -> Option<f64> {
        match &self.value {
            Value::Number(x, _) => Some(*x),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// Whether the node is a scalar whose text is `key` (numbers by their canonical spelling).
    fn is_key(&self, key: &str) -> bool {
        match &self.value {
            Value::String(s) => s == key,
            Value::Number(_, raw) => raw == key,
            Value::Bool(b) => key == if *b { "true" } else { "false" },
            _ => false,
        }
    }

    /// Looks up a string key in a mapping: the key node (with its line) and the value.
    pub fn entry(&self, key: &str) -> Option<(&Node, &Node)> {
        match &self.value {
            Value::Map(entries) => entries.iter().find(|(k, _)| k.is_key(key)).map(|(k, v)| (k, v)),
            _ => None,
        }
    }

    /// Looks up a string key in a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(_, v)| v)
    }

    /// A one-word name of the node's kind, for error messages.
    pub fn kind(&self) -> &'static str {
        match self.value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(..) => "number",
            Value::String(_) => "string",
            Value::Seq(_) => "list",
            Value::Map(_) => "mapping",
        }
    }
}

/// The deepest nesting of collections a document may have: no file alsim reads nests deeper than a
/// dozen levels.
pub const MAX_DEPTH: usize = 64;

/// Most nodes that aliases may copy into one document: far beyond any configuration (whose aliases copy
/// an environment block or two), far below what exhausts memory.
const MAX_ALIASED_NODES: usize = 1_000_000;

/// A mapping key written twice in one mapping; the last value was kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// The keys leading to the mapping, from the root.
    pub path: Vec<String>,
    /// The repeated key.
    pub key: String,
    /// The line of the last writing of the key (the one kept).
    pub line: usize,
}

/// Parses one YAML document; `origin` names the source in errors. A key written twice in one mapping is
/// an error.
///
/// ```
/// let node = alsim::yaml::parse("m:\n  1: 1.5\n  2: [1.6]\n", "f.yaml")?;
/// let (key, value) = node.get("m").unwrap().entry("2").unwrap();
/// assert_eq!((key.line, value.kind()), (3, "list"));
/// assert!(alsim::yaml::parse("m:\n  1: 1.5\n  1: 1.6\n", "f.yaml").unwrap_err().to_string().contains("f.yaml:3"));
/// # Ok::<(), alsim::Error>(())
/// ```
///
/// # Errors
/// [`Error::Parse`] with the line of the syntax error or duplicate key, or where the document nests
/// deeper than [`MAX_DEPTH`].
pub fn parse(text: &str, origin: &str) -> Result<Node> {
    Builder::new(text, origin, Duplicates::Reject).document().map(|(node, _)| node)
}

/// Parses one YAML document the way PyYAML's `safe_load` reads it, for files that tools written in Python
/// consume (benchmark recipes): a key written twice keeps its last value (and the line of its last
/// writing), and `<<:` merge keys are applied (the mapping's own keys override merged ones). Every
/// duplicate is returned so the caller can warn; [`parse`] instead rejects duplicates, as golden files
/// must.
///
/// # Errors
/// [`Error::Parse`] with the line of the syntax error, or where the document nests deeper than
/// [`MAX_DEPTH`].
pub fn parse_like_pyyaml(text: &str, origin: &str) -> Result<(Node, Vec<Duplicate>)> {
    Builder::new(text, origin, Duplicates::LastWins).document()
}

/// What a key written twice in one mapping does.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Duplicates {
    /// An error naming its line.
    Reject,
    /// The last value wins; the duplicate is recorded.
    LastWins,
}

/// The keys leading from the root to a mapping, kept as borrowed links: a path is built only for the
/// rare duplicate key.
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a Node),
}

impl Path<'_> {
    fn to_vec(&self) -> Vec<String> {
        match self {
            Path::Root => Vec::new(),
            Path::Key(parent, key) => {
                let mut keys = parent.to_vec();
                keys.push(key.as_scalar_text().unwrap_or_default());
                keys
            }
        }
    }
}

/// Puts an entry: a key already there keeps its place and takes the new key (with its line) and value.
/// Returns the key that was already there.
fn put(entries: &mut Vec<(Node, Node)>, key: Node, value: Node) -> Option<Node> {
    match entries.iter_mut().find(|(k, _)| k.value == key.value) {
        Some(slot) => Some(std::mem::replace(slot, (key, value)).0),
        None => {
            entries.push((key, value));
            None
        }
    }
}

/// A mapping being read with PyYAML's semantics: `<<:` merge keys give the mapping the keys of other
/// mappings it does not have itself.
#[derive(Default)]
struct MapBuilder {
    own: Vec<(Node, Node)>,
    merged: Vec<(Node, Node)>,
}

impl MapBuilder {
    /// Adds an entry: the value of a `<<:` merge key is merged; any other key is the mapping's own, and
    /// when it was already there (a duplicate) the earlier writing is returned.
    fn add(&mut self, key: Node, value: Node) -> Option<Node> {
        if matches!(&key.value, Value::String(s) if s == "<<") {
            self.merge(value);
            return None;
        }
        put(&mut self.own, key, value)
    }

    /// The value of a `<<:` key: a mapping or a list of them. Earlier merges win over later ones.
    fn merge(&mut self, value: Node) {
        let sources = match value.value {
            Value::Seq(items) => items,
            _ => vec![value],
        };
        for source in sources {
            if let Value::Map(entries) = source.value {
                for (k, v) in entries {
                    if !self.merged.iter().any(|(m, _)| m.value == k.value) {
                        self.merged.push((k, v));
                    }
                }
            }
        }
    }

    /// The mapping: merged keys first, then its own (which override merged ones in place).
    fn finish(self) -> Value {
        if self.merged.is_empty() {
            return Value::Map(self.own);
        }
        let mut entries = self.merged;
        for (k, v) in self.own {
            put(&mut entries, k, v);
        }
        Value::Map(entries)
    }
}

/// Builds the tree from the parser's events, one recursive call per collection.
struct Builder<'t> {
    text: &'t str,
    events: Parser<'t, StrInput<'t>>,
    origin: &'t str,
    on_duplicate: Duplicates,
    duplicates: Vec<Duplicate>,
    /// Anchored nodes by the parser's anchor id, for aliases to copy (PyYAML builds an anchored value once
    /// and shares it; a copy reads the same).
    anchors: Vec<Option<Node>>,
    aliased_nodes: usize,
    /// The length of the text in characters when it does not end with a line break: a block scalar
    /// ending there ends without one, which the parser adds anyway.
    unterminated_end: Option<usize>,
}

/// An event and where it is.
type Next<'t> = (Event<'t>, Span);

impl<'t> Builder<'t> {
    fn new(text: &'t str, origin: &'t str, on_duplicate: Duplicates) -> Builder<'t> {
        Builder {
            text,
            events: Parser::new_from_str(text),
            origin,
            on_duplicate,
            duplicates: Vec::new(),
            anchors: Vec::new(),
            aliased_nodes: 0,
            unterminated_end: (!text.ends_with(['\n', '\r'])).then(|| text.chars().count()),
        }
    }

    fn error(&self, line: Option<usize>, message: impl std::fmt::Display) -> Error {
        Error::parse(self.origin, line, format!("invalid YAML: {message}"))
    }

    fn next(&mut self) -> Result<Next<'t>> {
        match self.events.next_event() {
            Some(Ok(next)) => Ok(next),
            Some(Err(e)) => Err(self.scan_error(&e)),
            None => Err(self.error(None, "unexpected end of the stream")),
        }
    }

    /// The next event inside a collection, or `None` at its end (the parser pairs starts and ends).
    fn next_in_collection(&mut self) -> Result<Option<Next<'t>>> {
        let next = self.next()?;
        Ok((!matches!(next.0, Event::SequenceEnd | Event::MappingEnd)).then_some(next))
    }

    fn scan_error(&self, e: &ScanError) -> Error {
        let line = e.marker().line();
        // The scanner looks ahead through flow brackets for a possible key, and refuses 256 nested ones
        // before the builder sees [`MAX_DEPTH`] of them: the same refusal.
        if e.info() == "recursion limit exceeded" {
            return self.too_deep(line);
        }
        self.error(Some(line), e.info())
    }

    fn too_deep(&self, line: usize) -> Error {
        Error::parse(
            self.origin,
            Some(line),
            format!("nested deeper than {MAX_DEPTH} levels: no file alsim reads needs that, so it is refused"),
        )
    }

    /// The one document of the text (null when there is none) and the duplicates read.
    fn document(mut self) -> Result<(Node, Vec<Duplicate>)> {
        if let Some((line, c)) = unprintable(self.text) {
            return Err(self.error(Some(line), format!("the character {c:?} is not allowed in YAML")));
        }
        let mut root = None;
        loop {
            match self.next()? {
                (Event::StreamEnd, _) => break,
                (Event::DocumentStart(_), span) => {
                    if root.is_some() {
                        let line = span.start.line();
                        return Err(self.error(Some(line), "more than one document; alsim reads one per file"));
                    }
                    let next = self.next()?;
                    root = Some(self.node(next, &Path::Root, 0)?);
                }
                _ => {}
            }
        }
        Ok((root.unwrap_or(Node { line: 1, value: Value::Null }), self.duplicates))
    }

    /// Records an anchored node for the aliases that follow.
    fn anchor(&mut self, id: usize, node: &Node) {
        if id > 0 {
            if self.anchors.len() <= id {
                self.anchors.resize(id + 1, None);
            }
            self.anchors[id] = Some(node.clone());
        }
    }

    /// Refuses a collection nested deeper than [`MAX_DEPTH`].
    fn deeper(&self, depth: usize, line: usize) -> Result<usize> {
        if depth >= MAX_DEPTH {
            return Err(self.too_deep(line));
        }
        Ok(depth + 1)
    }

    /// The node that starts with `first`, at nesting `depth`.
    fn node(&mut self, (first, span): Next<'t>, path: &Path, depth: usize) -> Result<Node> {
        let line = span.start.line();
        let (node, anchor) = match first {
            Event::Scalar(text, style, anchor, tag) => {
                let mut value = scalar(text, style, tag.as_deref()).map_err(|m| self.error(Some(line), m))?;
                if let Value::String(s) = &mut value
                    && matches!(style, ScalarStyle::Literal | ScalarStyle::Folded)
                    && self.unterminated_end == Some(span.end.index())
                    && s.ends_with('\n')
                {
                    s.pop();
                }
                (Node { line, value }, anchor)
            }
            Event::SequenceStart(anchor, _) => {
                let depth = self.deeper(depth, line)?;
                let mut items = Vec::new();
                while let Some(next) = self.next_in_collection()? {
                    items.push(self.node(next, path, depth)?);
                }
                (Node { line, value: Value::Seq(items) }, anchor)
            }
            Event::MappingStart(anchor, _) => {
                let depth = self.deeper(depth, line)?;
                let mut map = MapBuilder::default();
                while let Some(next) = self.next_in_collection()? {
                    let key = self.node(next, path, depth)?;
                    let next = self.next()?;
                    let value = self.node(next, &Path::Key(path, &key), depth)?;
                    let line = key.line;
                    if let Some(earlier) = map.add(key, value) {
                        let key = earlier.as_scalar_text().unwrap_or_default();
                        if self.on_duplicate == Duplicates::Reject {
                            let message = format!("duplicate key `{key}` (first written on line {})", earlier.line);
                            return Err(self.error(Some(line), message));
                        }
                        self.duplicates.push(Duplicate { path: path.to_vec(), key, line });
                    }
                }
                (Node { line, value: map.finish() }, anchor)
            }
            Event::Alias(id) => {
                let node =
                    self.anchors.get(id).cloned().flatten().ok_or_else(|| self.error(Some(line), "unknown anchor"))?;
                self.aliased_nodes += size(&node);
                if self.aliased_nodes > MAX_ALIASED_NODES {
                    return Err(self.error(Some(line), format!("aliases copy more than {MAX_ALIASED_NODES} nodes")));
                }
                return Ok(node);
            }
            other => return Err(self.error(Some(line), format!("unexpected {other:?}"))),
        };
        self.anchor(anchor, &node);
        Ok(node)
    }
}

/// The first character YAML does not allow in a document (the C0 controls but tab and line breaks, DEL,
/// the C1 controls but NEL, U+FFFE and U+FFFF), with its line: PyYAML refuses them,
/// as the YAML crate alsim read with before did.
fn unprintable(text: &str) -> Option<(usize, char)> {
    let allowed = |c: char| {
        matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
            || c >= '\u{10000}'
    };
    // Nearly every file is printable ASCII and line breaks: one pass the compiler vectorises (no early
    // exit inside a chunk) tells, and only a text that holds anything else is read char by char.
    let unusual = |b: u8| ((b < b' ') & (b != b'\n') & (b != b'\t') & (b != b'\r')) | (b >= 0x7f);
    if !text.as_bytes().chunks(64).any(|chunk| chunk.iter().fold(false, |any, &b| any | unusual(b))) {
        return None;
    }
    let at = text.char_indices().find(|&(_, c)| !allowed(c))?.0;
    let line = 1 + text.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count();
    Some((line, text[at..].chars().next()?))
}

/// How many nodes a tree holds.
fn size(node: &Node) -> usize {
    1 + match &node.value {
        Value::Seq(items) => items.iter().map(size).sum(),
        Value::Map(entries) => entries.iter().map(|(k, v)| size(k) + size(v)).sum(),
        _ => 0,
    }
}

/// A scalar's value: a plain scalar resolves by [`resolve`]; a quoted or block scalar is a string; the
/// core-schema tags `!!str`, `!!int`, `!!float`, `!!bool` and `!!null` decide for themselves (a value
/// they do not fit is an error), and any other tag is ignored.
fn scalar(text: Cow<str>, style: ScalarStyle, tag: Option<&Tag>) -> std::result::Result<Value, String> {
    let plain = style == ScalarStyle::Plain;
    let Some(tag) = tag.filter(|t| t.is_yaml_core_schema()) else {
        return if plain { resolve(text) } else { Ok(Value::String(text.into_owned())) };
    };
    let refuse = |what: &str| format!("{text:?} is not {what}");
    match tag.suffix.as_str() {
        "bool" => match text.as_ref() {
            "true" | "True" | "TRUE" => Ok(Value::Bool(true)),
            "false" | "False" | "FALSE" => Ok(Value::Bool(false)),
            _ => Err(refuse("a boolean")),
        },
        "int" => unsigned(&text, u64::from_str_radix)
            .map(Value::from_u64)
            .or_else(|| negative(&text, i64::from_str_radix).map(Value::from_i64))
            .ok_or_else(|| refuse("an integer")),
        "float" => float(&text).map(Value::from_f64).ok_or_else(|| refuse("a float")),
        "null" => match text.as_ref() {
            "~" | "null" | "Null" | "NULL" => Ok(Value::Null),
            _ => Err(refuse("null")),
        },
        _ => Ok(Value::String(text.into_owned())),
    }
}

/// A plain scalar's value, by the rules of the YAML crate alsim read with before (serde_yaml's
/// `visit_untagged_scalar`): null, bool, integer (decimal, `0x`, `0o`, `0b`; a leading zero makes a
/// string), float, else string. An integer beyond 64 bits is an error, as it was there.
fn resolve(owned: Cow<str>) -> std::result::Result<Value, String> {
    let text = owned.as_ref();
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Value::Null),
        "true" | "True" | "TRUE" => return Ok(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Value::Bool(false)),
        // No integer starts with a letter, and the only floats that do (`inf`, `nan`) are not finite.
        _ if text.as_bytes()[0].is_ascii_alphabetic() => return Ok(Value::String(owned.into_owned())),
        _ => {}
    }
    if let Some(v) = unsigned(text, u64::from_str_radix) {
        return Ok(Value::from_u64(v));
    }
    if let Some(v) = negative(text, i64::from_str_radix) {
        return Ok(Value::from_i64(v));
    }
    if unsigned(text, u128::from_str_radix).is_some() || negative(text, i128::from_str_radix).is_some() {
        return Err(format!("the integer {text} does not fit in 64 bits"));
    }
    if !leading_zero_digits(text)
        && let Some(x) = float(text)
    {
        return Ok(Value::from_f64(x));
    }
    Ok(Value::String(owned.into_owned()))
}

type Radix<T> = fn(&str, u32) -> std::result::Result<T, std::num::ParseIntError>;

/// serde_yaml's `parse_unsigned_int`.
fn unsigned<T>(text: &str, from: Radix<T>) -> Option<T> {
    let unpositive = text.strip_prefix('+').unwrap_or(text);
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = unpositive.strip_prefix(prefix) {
            if rest.starts_with(['+', '-']) {
                return None;
            }
            if let Ok(v) = from(rest, radix) {
                return Some(v);
            }
        }
    }
    if unpositive.starts_with(['+', '-']) || leading_zero_digits(text) {
        return None;
    }
    from(unpositive, 10).ok()
}

/// serde_yaml's `parse_negative_int`.
fn negative<T>(text: &str, from: Radix<T>) -> Option<T> {
    for (prefix, radix) in [("-0x", 16), ("-0o", 8), ("-0b", 2)] {
        if let Some(rest) = text.strip_prefix(prefix)
            && let Ok(v) = from(&format!("-{rest}"), radix)
        {
            return Some(v);
        }
    }
    if leading_zero_digits(text) {
        return None;
    }
    from(text, 10).ok()
}

/// serde_yaml's `parse_f64`.
fn float(text: &str) -> Option<f64> {
    let unpositive = match text.strip_prefix('+') {
        Some(rest) if rest.starts_with(['+', '-']) => return None,
        Some(rest) => rest,
        None => text,
    };
    if let ".inf" | ".Inf" | ".INF" = unpositive {
        return Some(f64::INFINITY);
    }
    if let "-.inf" | "-.Inf" | "-.INF" = text {
        return Some(f64::NEG_INFINITY);
    }
    if let ".nan" | ".NaN" | ".NAN" = text {
        return Some(f64::NAN.copysign(1.0));
    }
    unpositive.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// Leading zeros followed by digits: a string in YAML 1.2 (serde_yaml's `digits_but_not_number`).
fn leading_zero_digits(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    digits.len() > 1 && digits.starts_with('0') && digits[1..].bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_rejected_with_a_line() {
        let err = parse("m:\n  1: 1.5\n  1: 1.6\n", "f.yaml").unwrap_err();
        let Error::Parse { line, message, .. } = &err else { panic!("{err}") };
        assert_eq!(*line, Some(3), "{err}");
        assert!(message.contains("duplicate") && message.contains("line 2"), "{err}");
    }

    #[test]
    fn pyyaml_reading_keeps_the_last_duplicate_and_applies_merges() {
        let text = "a: &base\n  k: 1\n  v: x\nb:\n  <<: *base\n  v: y\n  w: 2\n  w: 3\n";
        let (node, duplicates) = parse_like_pyyaml(text, "r.yaml").unwrap();
        let b = node.get("b").unwrap();
        assert_eq!(b.get("k").and_then(Node::as_f64), Some(1.0));
        assert_eq!(b.get("v").and_then(Node::as_scalar_text).as_deref(), Some("y"));
        assert_eq!(b.get("w").and_then(Node::as_f64), Some(3.0));
        assert_eq!(duplicates, [Duplicate { path: vec!["b".into()], key: "w".into(), line: 8 }]);
        assert!(parse_like_pyyaml("a: [\n", "r.yaml").is_err());
    }

    #[test]
    fn every_node_has_its_line_and_merged_keys_keep_their_anchors() {
        let text =
            "# header\nenv: &env\n  A: 1\n  B: two\nprefill:\n  <<: *env\n  B: three\nl:\n- x\n- {k: v}\nw: 1\nw: 2\n";
        let (root, _) = parse_like_pyyaml(text, "r.yaml").unwrap();
        let line = |node: &Node, key: &str| node.entry(key).map(|(k, _)| k.line);
        let prefill = root.get("prefill").unwrap();
        assert_eq!((line(&root, "env"), line(prefill, "A"), line(prefill, "B")), (Some(2), Some(3), Some(7)));
        // A block mapping starts at its first key, merge keys included.
        assert_eq!((root.line, prefill.line), (2, 6));
        let Value::Seq(items) = &root.get("l").unwrap().value else { panic!() };
        assert_eq!(items.iter().map(|i| i.line).collect::<Vec<_>>(), [9, 10]);
        assert_eq!(line(&items[1], "k"), Some(10));
        // The last of two duplicate keys is kept, with its own line.
        assert_eq!(line(&root, "w"), Some(12));
    }

    #[test]
    fn deep_nesting_is_refused_in_linear_time() {
        // Each took minutes to reject with the YAML crate used before; the builder stops at the limit.
        for deep in ["[".repeat(200_000), "- ".repeat(200_000) + "a\n", {
            let mut text = String::new();
            for d in 0..200_000 {
                text.push_str(&" ".repeat(d % 100));
                text.push_str("a:\n");
            }
            text
        }] {
            let err = parse(&deep, "deep.yaml").unwrap_err().to_string();
            assert!(err.starts_with("deep.yaml:") && err.contains("nested deeper"), "{err}");
        }
        let shallow =
            "m:\n  thinking_on:\n    1: 1.5 # [ comment {\n  s: \"[[[\"\n  t: |\n    [[[[\n  u: [1, [2, {v: 3}]]\n";
        assert_eq!(parse(shallow, "f").unwrap().get("m").unwrap().get("u").unwrap().kind(), "list");
    }

    #[test]
    fn aliases_cannot_expand_exponentially() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let aliases = vec![format!("*a{}", i - 1); 10].join(", ");
            text.push_str(&format!("a{i}: &a{i} [{aliases}]\n"));
        }
        assert!(parse(&text, "f").unwrap_err().to_string().contains("aliases copy more than"));
    }

    #[test]
    fn numbers_keep_their_spelling() {
        let node = parse("a: 1.10\n", "f").unwrap();
        assert_eq!(node.get("a").unwrap().as_f64(), Some(1.1));
    }
}
