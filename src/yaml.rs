//! YAML reading, behind one small tree type so the YAML crate can be swapped: this is the only file
//! that names it.
//!
//! Documents are parsed into a generic tree first (never straight into typed structs) because that path
//! rejects duplicate mapping keys with a line number; typed deserialisation would silently keep the last
//! of two duplicate golden values.

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

/// Parses one YAML document; `origin` names the source in errors.
///
/// # Errors
/// [`Error::Parse`] with the line of the syntax error or duplicate key, when the YAML crate reports one.
pub fn parse(text: &str, origin: &str) -> Result<Node> {
    let value: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| {
        let line = e.location().map(|l| l.line());
        let message = e.to_string();
        // serde_yaml appends " at line L column C"; the line already travels in the error.
        let message = message.split(" at line ").next().unwrap_or(&message).to_string();
        Error::parse(origin, line, format!("invalid YAML: {message}"))
    })?;
    Ok(convert(value))
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
    fn numbers_keep_their_spelling() {
        let node = parse("a: 1.10\n", "f").unwrap();
        assert_eq!(node.get("a").unwrap().as_f64(), Some(1.1));
    }
}
