//! The YAML reading alsim had before its one reader over `saphyr-parser`, kept as the reference of the
//! migration: the `serde_yaml` crate (libyaml underneath) read with PyYAML's mapping semantics (the last
//! of two duplicate keys wins and is reported; `<<:` merge keys applied, the mapping's own keys winning,
//! earlier merges over later ones). `serde_yaml` is a dev-dependency for this file alone; the tree it
//! gives has no lines (all 0), so compare it with [`unlined`] readings of the new reader.
//!
//! Used by `tests/yaml.rs` and by `examples/yaml_agree.rs` (through `#[path]`).

use std::cell::RefCell;
use std::fmt;

use alsim::yaml::{Node, Value};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

/// A duplicate key as both readers report it, without its line: the keys to its mapping, and the key.
pub type Duplicate = (Vec<String>, String);

/// The old reading of `text` as `parse_like_pyyaml` gave it: the tree and the duplicate keys, or the
/// crate's error message.
pub fn read(text: &str) -> Result<(Node, Vec<Duplicate>), String> {
    let duplicates = RefCell::new(Vec::new());
    let seed = Seed { path: &[], duplicates: &duplicates };
    let node = seed.deserialize(serde_yaml::Deserializer::from_str(text)).map_err(|e| e.to_string())?;
    Ok((node, duplicates.into_inner()))
}

/// Whether the old strict reading (`parse`, for golden files and allow-lists) accepted `text`: a plain
/// `serde_yaml::Value`, which refuses duplicate keys.
pub fn strict_accepts(text: &str) -> bool {
    serde_yaml::from_str::<serde_yaml::Value>(text).is_ok()
}

/// `node` with every line set to 0, as the old reading gives it.
pub fn unlined(node: &Node) -> Node {
    let value = match &node.value {
        Value::Seq(items) => Value::Seq(items.iter().map(unlined).collect()),
        Value::Map(entries) => Value::Map(entries.iter().map(|(k, v)| (unlined(k), unlined(v))).collect()),
        scalar => scalar.clone(),
    };
    Node { line: 0, value }
}

/// The new reader's `parse_like_pyyaml` in the old reading's terms.
pub fn read_new(text: &str, origin: &str) -> Result<(Node, Vec<Duplicate>), String> {
    let (node, duplicates) = alsim::yaml::parse_like_pyyaml(text, origin).map_err(|e| e.to_string())?;
    Ok((unlined(&node), duplicates.into_iter().map(|d| (d.path, d.key)).collect()))
}

fn node(value: Value) -> Node {
    Node { line: 0, value }
}

#[derive(Clone, Copy)]
struct Seed<'a> {
    path: &'a [String],
    duplicates: &'a RefCell<Vec<Duplicate>>,
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
        Ok(node(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(node(Value::Number(v as f64, v.to_string())))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(node(Value::Number(v as f64, v.to_string())))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(node(Value::Number(v, v.to_string())))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(node(Value::String(v.to_string())))
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(node(Value::Null))
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(node(Value::Null))
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        self.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(node(Value::Seq(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        // The mapping's own entries, and those its `<<:` keys merge in.
        let mut own: Vec<(Node, Node)> = Vec::new();
        let mut merged: Vec<(Node, Node)> = Vec::new();
        while let Some(key) = map.next_key_seed(Seed { path: &[], duplicates: self.duplicates })? {
            let key_text = key.as_scalar_text().unwrap_or_default();
            let path: Vec<String> = self.path.iter().cloned().chain([key_text.clone()]).collect();
            let value = map.next_value_seed(Seed { path: &path, duplicates: self.duplicates })?;
            if key.value == Value::String("<<".into()) {
                let sources = match value.value {
                    Value::Seq(items) => items,
                    other => vec![node(other)],
                };
                for (k, v) in sources.into_iter().flat_map(|s| match s.value {
                    Value::Map(entries) => entries,
                    _ => Vec::new(),
                }) {
                    if !merged.iter().any(|(m, _)| m.value == k.value) {
                        merged.push((k, v));
                    }
                }
            } else if let Some(slot) = own.iter_mut().find(|(k, _)| k.value == key.value) {
                slot.1 = value;
                self.duplicates.borrow_mut().push((self.path.to_vec(), key_text));
            } else {
                own.push((key, value));
            }
        }
        for (k, v) in own {
            match merged.iter_mut().find(|(m, _)| m.value == k.value) {
                Some(slot) => slot.1 = v,
                None => merged.push((k, v)),
            }
        }
        Ok(node(Value::Map(merged)))
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Node, A::Error> {
        use de::VariantAccess;
        let (_tag, variant): (String, _) = data.variant()?;
        variant.newtype_variant_seed(self)
    }
}
