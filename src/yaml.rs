//! YAML reading, behind one small tree type so the YAML crate can be swapped: this is the only file
//! that names it. Recipes and master configs are read by [`read_subset`], a fast reader of the block-style
//! YAML they are written in, which leaves any other document to the crate.
//!
//! Documents are parsed into a generic tree first (never straight into typed structs) because that path
//! rejects duplicate mapping keys with a line number; typed deserialisation would silently keep the last
//! of two duplicate golden values.
//!
//! Nesting is bounded before the YAML crate sees the text ([`check_depth`], one linear pass): the crate
//! takes time quadratic in the depth to reject a deeply nested document (200,000 levels: minutes), and no
//! file alsim reads nests deeper than a dozen levels.

mod subset;

use crate::error::{Error, Result};

/// A parsed YAML value.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// `~`, `null` or an empty value.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, with its source text (so `1.10` and `1.1` can be told apart when it matters).
    Number(f64, String),
    /// A string scalar.
    String(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in document order.
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// An integer as the YAML crate's path reads it.
    fn from_u64(v: u64) -> Node {
        Node::Number(v as f64, v.to_string())
    }

    /// A negative integer as the YAML crate's path reads it.
    fn from_i64(v: i64) -> Node {
        Node::Number(v as f64, v.to_string())
    }

    /// A float as the YAML crate's path reads it (its spelling is the shortest that reads back).
    fn from_f64(v: f64) -> Node {
        Node::Number(v, v.to_string())
    }

    /// The scalar as text (numbers in their source spelling); `None` for collections and null.
    pub fn as_scalar_text(&self) -> Option<String> {
        match self {
            Node::Bool(b) => Some(b.to_string()),
            Node::Number(_, raw) => Some(raw.clone()),
            Node::String(s) => Some(s.clone()),
            _ => None,
        }
    }

    /// The scalar as a number: numbers directly, strings when they parse as one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Node::Number(x, _) => Some(*x),
            Node::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// Looks up a string key in a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Map(entries) => {
                entries.iter().find(|(k, _)| k.as_scalar_text().as_deref() == Some(key)).map(|(_, v)| v)
            }
            _ => None,
        }
    }

    /// A one-word name of the node's kind, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "boolean",
            Node::Number(..) => "number",
            Node::String(_) => "string",
            Node::Seq(_) => "list",
            Node::Map(_) => "mapping",
        }
    }
}

/// The deepest nesting of collections a document may have (flow brackets and block indentation levels
/// together).
pub const MAX_DEPTH: usize = 64;

/// Rejects a document nested deeper than [`MAX_DEPTH`], in one pass over the text. Counted: flow `[`/`{`
/// outside quotes and comments, block indentation levels, and `- ` / `? ` entries that open a collection
/// on the same line; block-scalar bodies (`|`, `>`) are skipped. The count can only over-estimate the
/// depth of a collection that opens and closes on one line, which shallow documents never reach.
///
/// # Errors
/// [`Error::Parse`] naming the line where the depth passes the limit.
///
/// ```
/// assert!(alsim::yaml::check_depth("a:\n  b: [1, {c: 2}]\n", "f.yaml").is_ok());
/// let deep = "[".repeat(100_000);
/// assert!(alsim::yaml::check_depth(&deep, "f.yaml").unwrap_err().to_string().contains("nested deeper"));
/// let closed = format!("a: {}1{}", "[".repeat(40_000), "]".repeat(40_000));
/// assert!(alsim::yaml::check_depth(&closed, "f.yaml").is_err());
/// ```
pub fn check_depth(text: &str, origin: &str) -> Result<()> {
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    // Indentation of the line that opened a block scalar: deeper lines are its text.
    let mut scalar_parent: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let body = line.trim_start_matches(' ');
        let indent = line.len() - body.len();
        if body.trim().is_empty() {
            continue;
        }
        if let Some(parent) = scalar_parent {
            if indent > parent {
                continue;
            }
            scalar_parent = None;
        }
        if flow == 0 && !body.starts_with('#') {
            while indents.last().is_some_and(|&top| top >= indent) {
                indents.pop();
            }
            indents.push(indent);
        }
        // `- - a` and `? - a` open one collection per marker on the same line.
        let mut rest = body;
        let mut inline = 0usize;
        while let Some(after) = rest.strip_prefix("- ").or_else(|| rest.strip_prefix("? ")) {
            inline += 1;
            rest = after.trim_start_matches(' ');
        }
        let (mut quote, mut previous) = (None, b' ');
        // The deepest the line's brackets reach: `[[[1]]]` closes on its line but is three deep inside it.
        let mut peak = flow;
        // Bytes, not chars: every byte compared is ASCII, and no byte of a multi-byte char is.
        for c in rest.bytes() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, b'"' | b'\'') if b" [{,:".contains(&previous) => quote = Some(c),
                (None, b'#') if previous == b' ' || previous == b'\t' => break,
                (None, b'[' | b'{') => {
                    flow += 1;
                    peak = peak.max(flow);
                }
                (None, b']' | b'}') => flow = flow.saturating_sub(1),
                _ => {}
            }
            previous = c;
        }
        let trimmed = rest.trim_end();
        let last = &trimmed[trimmed.bytes().rposition(|b| b == b' ').map_or(0, |space| space + 1)..];
        let block_scalar = last.starts_with(['|', '>']) && last[1..].bytes().all(|b| b"+-0123456789".contains(&b));
        if quote.is_none() && flow == 0 && block_scalar {
            scalar_parent = Some(indent);
        }
        let depth = indents.len() + inline + peak;
        if depth > MAX_DEPTH {
            return Err(Error::parse(
                origin,
                Some(i + 1),
                format!("nested deeper than {MAX_DEPTH} levels: no file alsim reads needs that, so it is refused"),
            ));
        }
    }
    Ok(())
}

/// Parses one YAML document; `origin` names the source in errors.
///
/// # Errors
/// [`Error::Parse`] with the line of the syntax error or duplicate key, when the YAML crate reports one,
/// or where the document nests deeper than [`MAX_DEPTH`].
pub fn parse(text: &str, origin: &str) -> Result<Node> {
    check_depth(text, origin)?;
    let value: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| {
        let line = e.location().map(|l| l.line());
        let message = e.to_string();
        // serde_yaml appends " at line L column C"; the line already travels in the error.
        let message = message.split(" at line ").next().unwrap_or(&message).to_string();
        Error::parse(origin, line, format!("invalid YAML: {message}"))
    })?;
    Ok(convert(value))
}

/// A mapping key written twice in one mapping; the last value was kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// The keys leading to the mapping, from the root.
    pub path: Vec<String>,
    /// The repeated key.
    pub key: String,
}

/// Parses one YAML document the way PyYAML's `safe_load` reads it, for files that tools written in Python
/// consume (benchmark recipes): a key written twice keeps its last value, and `<<:` merge keys are
/// applied (the mapping's own keys override merged ones). Every duplicate is returned so the caller can
/// warn; [`parse`] instead rejects duplicates, as golden files must.
///
/// # Errors
/// [`Error::Parse`] with the line of the syntax error.
pub fn parse_like_pyyaml(text: &str, origin: &str) -> Result<(Node, Vec<Duplicate>)> {
    check_depth(text, origin)?;
    match subset::read(text) {
        Some(read) => Ok(read),
        None => pyyaml_by_crate(text, origin),
    }
}

/// Reads `text` with the fast reader of the block-style subset that configs and recipes are written
/// in, or `None` when the text needs the full YAML parser. Where it returns a tree, it is the one the
/// crate reads (checked by tests, fuzzing and `examples/yaml_agree.rs`); [`parse_like_pyyaml`] puts the
/// depth check before both.
pub fn read_subset(text: &str) -> Option<(Node, Vec<Duplicate>)> {
    subset::read(text)
}

/// [`parse_like_pyyaml`] with the YAML crate alone, without the subset reader.
///
/// # Errors
/// As [`parse_like_pyyaml`].
pub fn parse_like_pyyaml_full(text: &str, origin: &str) -> Result<(Node, Vec<Duplicate>)> {
    check_depth(text, origin)?;
    pyyaml_by_crate(text, origin)
}

/// The YAML crate's reading behind [`parse_like_pyyaml`], once the depth is checked.
fn pyyaml_by_crate(text: &str, origin: &str) -> Result<(Node, Vec<Duplicate>)> {
    use serde::de::DeserializeSeed;
    let duplicates = std::cell::RefCell::new(Vec::new());
    let seed = lenient::Seed { path: &[], duplicates: &duplicates };
    let node = seed.deserialize(serde_yaml::Deserializer::from_str(text)).map_err(|e| {
        let line = e.location().map(|l| l.line());
        let message = e.to_string();
        let message = message.split(" at line ").next().unwrap_or(&message).to_string();
        Error::parse(origin, line, format!("invalid YAML: {message}"))
    })?;
    Ok((node, duplicates.into_inner()))
}

/// Puts an entry: a key already there keeps its place and takes the new value. Returns the place of a
/// key that was already there.
fn put(entries: &mut Vec<(Node, Node)>, key: Node, value: Node) -> Option<usize> {
    match entries.iter().position(|(k, _)| *k == key) {
        Some(slot) => {
            entries[slot].1 = value;
            Some(slot)
        }
        None => {
            entries.push((key, value));
            None
        }
    }
}

/// A mapping being read with PyYAML's semantics: the last of two duplicate keys wins, and `<<:` merge
/// keys give the mapping the keys of other mappings it does not have itself.
#[derive(Default)]
struct MapBuilder {
    own: Vec<(Node, Node)>,
    merged: Vec<(Node, Node)>,
}

impl MapBuilder {
    /// Adds an entry: the value of a `<<:` merge key is merged; any other key is the mapping's own, and
    /// its text is returned when the key was already there (a duplicate the caller reports).
    fn add(&mut self, key: Node, value: Node) -> Option<String> {
        if matches!(&key, Node::String(s) if s == "<<") {
            self.merge(value);
            return None;
        }
        put(&mut self.own, key, value).map(|slot| self.own[slot].0.as_scalar_text().unwrap_or_default())
    }

    /// The value of a `<<:` key: a mapping or a list of them. Earlier merges win over later ones.
    fn merge(&mut self, value: Node) {
        let sources = match value {
            Node::Seq(items) => items,
            other => vec![other],
        };
        for source in sources {
            if let Node::Map(entries) = source {
                for (k, v) in entries {
                    if !self.merged.iter().any(|(m, _)| *m == k) {
                        self.merged.push((k, v));
                    }
                }
            }
        }
    }

    /// The mapping: merged keys first, then its own (which override merged ones in place).
    fn finish(self) -> Node {
        let mut entries = self.merged;
        for (k, v) in self.own {
            put(&mut entries, k, v);
        }
        Node::Map(entries)
    }
}

mod lenient {
    //! A serde visitor that builds [`Node`]s with PyYAML's mapping semantics.

    use std::cell::RefCell;
    use std::fmt;

    use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

    use super::{Duplicate, MapBuilder, Node};

    #[derive(Clone, Copy)]
    pub(super) struct Seed<'a> {
        pub(super) path: &'a [String],
        pub(super) duplicates: &'a RefCell<Vec<Duplicate>>,
    }

    impl<'de> DeserializeSeed<'de> for Seed<'_> {
        type Value = Node;
        fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
            deserializer.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Seed<'_> {
        type Value = Node;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("any YAML value")
        }
        fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
            Ok(Node::Bool(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
            Ok(Node::from_i64(v))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
            Ok(Node::from_u64(v))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
            Ok(Node::from_f64(v))
        }
        fn visit_str<E>(self, v: &str) -> Result<Node, E> {
            Ok(Node::String(v.to_string()))
        }
        fn visit_string<E>(self, v: String) -> Result<Node, E> {
            Ok(Node::String(v))
        }
        fn visit_unit<E>(self) -> Result<Node, E> {
            Ok(Node::Null)
        }
        fn visit_none<E>(self) -> Result<Node, E> {
            Ok(Node::Null)
        }
        fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
            self.deserialize(d)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element_seed(self)? {
                items.push(item);
            }
            Ok(Node::Seq(items))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
            let mut builder = MapBuilder::default();
            let no_path: &[String] = &[];
            while let Some(key) = map.next_key_seed(Seed { path: no_path, duplicates: self.duplicates })? {
                let mut path = self.path.to_vec();
                path.push(key.as_scalar_text().unwrap_or_default());
                let value = map.next_value_seed(Seed { path: &path, duplicates: self.duplicates })?;
                if let Some(key) = builder.add(key, value) {
                    self.duplicates.borrow_mut().push(Duplicate { path: self.path.to_vec(), key });
                }
            }
            Ok(builder.finish())
        }
        fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Node, A::Error> {
            use de::VariantAccess;
            let (_tag, variant): (String, _) = data.variant()?;
            variant.newtype_variant_seed(self)
        }
    }
}

fn convert(value: serde_yaml::Value) -> Node {
    use serde_yaml::Value;
    match value {
        Value::Null => Node::Null,
        Value::Bool(b) => Node::Bool(b),
        Value::Number(n) => Node::Number(n.as_f64().unwrap_or(f64::NAN), n.to_string()),
        Value::String(s) => Node::String(s),
        Value::Sequence(items) => Node::Seq(items.into_iter().map(convert).collect()),
        Value::Mapping(map) => Node::Map(map.into_iter().map(|(k, v)| (convert(k), convert(v))).collect()),
        Value::Tagged(tagged) => convert(tagged.value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_rejected_with_a_line() {
        let err = parse("m:\n  1: 1.5\n  1: 1.6\n", "f.yaml").unwrap_err();
        let Error::Parse { line, message, .. } = &err else { panic!("{err}") };
        assert!(line.is_some(), "{err}");
        assert!(message.contains("duplicate"), "{err}");
    }

    #[test]
    fn pyyaml_reading_keeps_the_last_duplicate_and_applies_merges() {
        let text = "a: &base\n  k: 1\n  v: x\nb:\n  <<: *base\n  v: y\n  w: 2\n  w: 3\n";
        let (node, duplicates) = parse_like_pyyaml(text, "r.yaml").unwrap();
        let b = node.get("b").unwrap();
        assert_eq!(b.get("k").and_then(Node::as_f64), Some(1.0));
        assert_eq!(b.get("v").and_then(Node::as_scalar_text).as_deref(), Some("y"));
        assert_eq!(b.get("w").and_then(Node::as_f64), Some(3.0));
        assert_eq!(duplicates, [Duplicate { path: vec!["b".into()], key: "w".into() }]);
        assert!(parse_like_pyyaml("a: [\n", "r.yaml").is_err());
    }

    #[test]
    fn deep_nesting_is_refused_in_linear_time() {
        // Each took minutes to reject before the pre-check; now one linear pass.
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
    fn numbers_keep_their_spelling() {
        let node = parse("a: 1.10\n", "f").unwrap();
        assert_eq!(node.get("a").unwrap().as_f64(), Some(1.1));
    }
}
