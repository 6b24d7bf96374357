//! A fast reader for the block-style subset of YAML that benchmark configs and recipes are written in.
//!
//! The YAML crate reads ~12 MB/s, and the pin check reads ~700 KB of master configs and recipes on every
//! run: YAML was a third of the check's time. This reader handles what those files are made of — block
//! mappings and sequences, one-line plain, quoted and flow values, literal and folded block scalars,
//! comments, anchors on values, aliases and merge keys — and declines (returns `None`) at the first thing
//! outside that subset, or anything it is unsure the YAML crate would accept: tags, `?` keys, multi-line
//! plain or quoted scalars, multi-line flow collections, aliases inside flows, tabs, `\r`, directives,
//! several documents, nesting deeper than [`MAX_DEPTH`]. The caller then parses the text with the crate,
//! so a declined document costs one extra linear scan, never a different answer.
//!
//! What it accepts it reads exactly as the crate does: plain scalars resolve by the crate's rules
//! ([`resolve`]), and mappings are built by the same [`MapBuilder`] as on the crate's path (PyYAML's
//! last-duplicate-wins with each duplicate reported, and merge keys). The differential tests
//! (`tests/yaml_subset.rs`), the `yaml_subset` fuzz target and `examples/yaml_agree.rs` (which `.ci/run`
//! runs over every YAML file of the real InferenceX snapshot) hold it to that.

use std::collections::HashMap;

use super::{Duplicate, MapBuilder, Node};

/// Deepest nesting of collections the subset reader handles (it recurses once per level); deeper
/// documents go to the crate.
const MAX_DEPTH: usize = 20;

/// Longest key the subset takes: the crate refuses simple keys longer than 1024 characters.
const MAX_KEY: usize = 1000;

/// Reads `text` if it lies in the subset: the tree and the duplicate keys, as
/// [`super::parse_like_pyyaml`] returns them; `None` when the text needs the full YAML parser.
pub(super) fn read(text: &str) -> Option<(Node, Vec<Duplicate>)> {
    if !printable(text) {
        return None;
    }
    let lines: Vec<Line> = text.split('\n').map(Line::new).collect();
    if lines
        .iter()
        .any(|l| l.indent == 0 && (l.body.starts_with("---") || l.body.starts_with("...") || l.body.starts_with('%')))
    {
        return None;
    }
    let mut reader = Reader { lines, at: 0, duplicates: Vec::new(), anchors: HashMap::new(), aliases: 0 };
    let first = reader.next_significant()?;
    if first.indent != 0 {
        return None;
    }
    let node = reader.block_node(0, &Path::Root, 0)?;
    if reader.next_significant().is_some() {
        return None;
    }
    Some((node, reader.duplicates))
}

/// No tab, carriage return or byte-order mark, no line break but `\n` (the crate also breaks lines at
/// U+0085, U+2028 and U+2029), and only characters YAML calls printable. (Directives and document
/// markers are declined line by line.)
fn printable(text: &str) -> bool {
    if text.is_ascii() {
        text.bytes().all(|b| b == b'\n' || (b' '..=b'~').contains(&b))
    } else {
        text.chars().all(|c| {
            matches!(c, '\n' | ' '..='~' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
                && !matches!(c, '\u{feff}' | '\u{2028}' | '\u{2029}')
        })
    }
}

/// Where the text before a comment (a `#` after a space) ends, and where the first `: ` (or a final `:`)
/// before it is: one pass over the bytes, as the plain-scalar rules need both.
fn scan_plain(text: &str) -> (usize, Option<usize>) {
    let bytes = text.as_bytes();
    let mut colon = None;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'#' if i > 0 && bytes[i - 1] == b' ' => return (i - 1, colon),
            b':' if colon.is_none() && matches!(bytes.get(i + 1), None | Some(b' ')) => colon = Some(i),
            _ => {}
        }
    }
    (bytes.len(), colon)
}

/// The keys leading from the root to a mapping, kept as borrowed links: a path is built only for the
/// rare duplicate key.
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
}

impl Path<'_> {
    fn to_vec(&self) -> Vec<String> {
        match self {
            Path::Root => Vec::new(),
            Path::Key(parent, key) => {
                let mut keys = parent.to_vec();
                keys.push(key.to_string());
                keys
            }
        }
    }
}

/// Adds an entry to a mapping being read, recording a duplicate as the crate's path does.
fn add(map: &mut MapBuilder, key: Node, value: Node, path: &Path, duplicates: &mut Vec<Duplicate>) {
    if let Some(key) = map.add(key, value) {
        duplicates.push(Duplicate { path: path.to_vec(), key });
    }
}

/// Most aliases the subset expands; the crate limits expansions, and no config needs many.
const MAX_ALIASES: usize = 100;

/// An anchor or alias name (`[0-9A-Za-z_-]+`, what the crate takes) at the start of `text`, which a
/// space or the end of the line must follow; the name and the text after it.
fn anchor_name(text: &str) -> Option<(&str, &str)> {
    let end = text.bytes().position(|b| !(b.is_ascii_alphanumeric() || b == b'-' || b == b'_')).unwrap_or(text.len());
    let (name, after) = text.split_at(end);
    (!name.is_empty() && (after.is_empty() || after.starts_with(' '))).then_some((name, after))
}

#[derive(Clone, Copy)]
struct Line<'t> {
    /// The whole line.
    raw: &'t str,
    /// Leading spaces.
    indent: usize,
    /// The text after the indentation.
    body: &'t str,
}

impl<'t> Line<'t> {
    fn new(raw: &'t str) -> Line<'t> {
        let body = raw.trim_start_matches(' ');
        Line { raw, indent: raw.len() - body.len(), body }
    }

    /// Blank or a whole-line comment: no structure.
    fn insignificant(&self) -> bool {
        self.body.is_empty() || self.body.starts_with('#')
    }
}

/// A sequence entry marker: `-` followed by a space or the end of the line; the text after it.
fn entry_marker(body: &str) -> Option<&str> {
    match body.strip_prefix('-')? {
        "" => Some(""),
        rest if rest.starts_with(' ') => Some(rest.trim_start_matches(' ')),
        _ => None,
    }
}

/// Nothing after a value but spaces and a comment that a space sets off.
fn only_comment(rest: &str) -> bool {
    let trimmed = rest.trim_start_matches(' ');
    trimmed.is_empty() || trimmed.starts_with('#') && trimmed.len() < rest.len()
}

/// Whether a value's text ended its line: nothing after the `:` or `-` but a comment.
fn ends_line(rest: &str) -> bool {
    rest.is_empty() || rest.starts_with('#')
}

struct Reader<'t> {
    lines: Vec<Line<'t>>,
    at: usize,
    duplicates: Vec<Duplicate>,
    /// Anchored values by name, for aliases to copy (the crate replays an anchor's value at each alias).
    anchors: HashMap<&'t str, Node>,
    aliases: usize,
}

impl<'t> Reader<'t> {
    /// Moves to the next line with structure and returns it.
    fn next_significant(&mut self) -> Option<Line<'t>> {
        while let Some(line) = self.lines.get(self.at) {
            if !line.insignificant() {
                return Some(*line);
            }
            self.at += 1;
        }
        None
    }

    /// The block collection starting on the current line, at column `indent`.
    fn block_node(&mut self, indent: usize, path: &Path, depth: usize) -> Option<Node> {
        let line = self.next_significant()?;
        if entry_marker(line.body).is_some() {
            self.sequence(indent, path, depth)
        } else {
            self.mapping(indent, line.body, path, depth)
        }
    }

    /// A block sequence whose `-` markers sit at column `indent`.
    fn sequence(&mut self, indent: usize, path: &Path, depth: usize) -> Option<Node> {
        if depth >= MAX_DEPTH {
            return None;
        }
        let mut items = Vec::new();
        while let Some(line) = self.next_significant() {
            if line.indent < indent {
                break;
            }
            if line.indent > indent {
                return None;
            }
            let Some(rest) = entry_marker(line.body) else { break };
            let item = if entry_marker(rest).is_some() {
                return None;
            } else if !rest.starts_with('&') && !ends_line(rest) && split_key(rest)?.is_some() {
                // `- key: value`: a mapping whose keys sit at the column of its first key.
                let column = indent + (line.body.len() - rest.len());
                self.mapping(column, rest, path, depth + 1)?
            } else {
                self.entry_value(indent, rest, path, depth + 1, false)?
            };
            items.push(item);
        }
        Some(Node::Seq(items))
    }

    /// A block mapping whose keys sit at column `indent`; `first` is the text of its first entry (which
    /// may follow a `- ` on the current line).
    fn mapping(&mut self, indent: usize, first: &'t str, path: &Path, depth: usize) -> Option<Node> {
        if depth >= MAX_DEPTH {
            return None;
        }
        let mut map = MapBuilder::default();
        let mut body = first;
        loop {
            let (key, rest) = split_key(body)??;
            let text = key.as_scalar_text().unwrap_or_default();
            let value = self.entry_value(indent, rest, &Path::Key(path, &text), depth + 1, true)?;
            add(&mut map, key, value, path, &mut self.duplicates);
            match self.next_significant() {
                Some(line) if line.indent == indent && entry_marker(line.body).is_none() => body = line.body,
                Some(line) if line.indent > indent => return None,
                _ => break,
            }
        }
        Some(map.finish())
    }

    /// The value after a key or `- ` in a collection at column `indent` (`rest`: the text after the
    /// indicator), with its anchor if it has one: on the line, or on the lines below when the line ends.
    fn entry_value(
        &mut self,
        indent: usize,
        rest: &'t str,
        path: &Path,
        depth: usize,
        same_column_sequence: bool,
    ) -> Option<Node> {
        let (anchor, rest) = match rest.strip_prefix('&') {
            Some(after) => {
                let (name, after) = anchor_name(after)?;
                (Some(name), after.trim_start_matches(' '))
            }
            None => (None, rest),
        };
        let duplicates = self.duplicates.len();
        let value = if ends_line(rest) {
            self.at += 1;
            self.nested(indent, path, depth, same_column_sequence)?
        } else {
            if anchor.is_some() && split_key(rest)?.is_some() {
                return None;
            }
            let value = self.inline_value(indent, rest, path, depth)?;
            self.ends_at_most(indent)?;
            value
        };
        if let Some(name) = anchor {
            // The crate reports an anchored mapping's duplicates again at each alias, and its aliases of
            // an anchored empty value can resolve to another anchor's: the subset leaves both to it.
            if self.duplicates.len() != duplicates || ends_line(rest) && value == Node::Null {
                return None;
            }
            self.anchors.insert(name, value.clone());
        }
        Some(value)
    }

    /// The value of an entry whose text ended its line: a more indented block, a sequence at the key's
    /// own column (`same_column_sequence`, for mapping values), or null.
    fn nested(&mut self, indent: usize, path: &Path, depth: usize, same_column_sequence: bool) -> Option<Node> {
        match self.next_significant() {
            Some(line) if line.indent > indent => self.block_node(line.indent, path, depth),
            Some(line) if same_column_sequence && line.indent == indent && entry_marker(line.body).is_some() => {
                self.sequence(indent, path, depth)
            }
            _ => Some(Node::Null),
        }
    }

    /// After a value written on its line, the next line with structure must not be more indented than
    /// the collection holding the value (it would continue a multi-line scalar, or be an error).
    fn ends_at_most(&mut self, indent: usize) -> Option<()> {
        match self.next_significant() {
            Some(line) if line.indent > indent => None,
            _ => Some(()),
        }
    }

    /// A value that starts on the current line after a key or `- ` (`rest`, not empty), in a collection
    /// at column `indent`; the line is consumed, and a block scalar's body with it.
    fn inline_value(&mut self, indent: usize, rest: &'t str, path: &Path, depth: usize) -> Option<Node> {
        let node = match rest.as_bytes()[0] {
            b'|' | b'>' => return self.block_scalar(indent, rest),
            b'[' | b'{' => {
                let mut flow = Flow { text: rest, at: 0, duplicates: &mut self.duplicates };
                let node = flow.node(path, depth)?;
                only_comment(&rest[flow.at..]).then_some(node)?
            }
            b'"' | b'\'' => {
                let (value, after) = quoted(rest)?;
                only_comment(after).then_some(Node::String(value))?
            }
            b'*' => {
                let (name, after) = anchor_name(&rest[1..])?;
                self.aliases += 1;
                if !only_comment(after) || self.aliases > MAX_ALIASES {
                    return None;
                }
                self.anchors.get(name)?.clone()
            }
            _ => resolve(block_plain(rest)?)?,
        };
        self.at += 1;
        Some(node)
    }

    /// `|` or `>` with an optional chomping indicator, and its body: the lines after it indented deeper
    /// than `indent`.
    fn block_scalar(&mut self, indent: usize, header: &str) -> Option<Node> {
        let folded = header.starts_with('>');
        let (chomp, after) = match header.as_bytes().get(1) {
            Some(b'-') => (Chomp::Strip, &header[2..]),
            Some(b'+') => (Chomp::Keep, &header[2..]),
            _ => (Chomp::Clip, &header[1..]),
        };
        if !(after.is_empty() || after.starts_with(' ') && only_comment(after)) {
            return None;
        }
        self.at += 1;
        let content = self.lines[self.at..].iter().find(|l| !l.body.is_empty())?.indent;
        if content <= indent {
            return None;
        }
        let mut body: Vec<&str> = Vec::new();
        let mut blanks = 0usize;
        while let Some(line) = self.lines.get(self.at) {
            if line.body.is_empty() {
                // A blank line longer than the content indentation holds spaces the crate may keep.
                if line.indent > content {
                    return None;
                }
                blanks += 1;
            } else if line.indent >= content {
                let text = &line.raw[content..];
                if folded && (line.indent > content || text.ends_with(' ')) {
                    return None;
                }
                body.extend(std::iter::repeat_n("", blanks));
                blanks = 0;
                body.push(text);
            } else {
                break;
            }
            self.at += 1;
        }
        // Line breaks after the last content line: its own and one per blank line, except that at the
        // end of the text the last (empty) piece has no break after it.
        let breaks = if self.at == self.lines.len() { blanks } else { blanks + 1 };
        let mut text = if folded { fold(&body) } else { body.join("\n") };
        match chomp {
            Chomp::Strip => {}
            Chomp::Clip => text.extend(std::iter::repeat_n('\n', breaks.min(1))),
            Chomp::Keep => text.extend(std::iter::repeat_n('\n', breaks)),
        }
        Some(Node::String(text))
    }
}

/// How a block scalar's final line breaks are kept.
#[derive(Clone, Copy)]
enum Chomp {
    /// `-`: none.
    Strip,
    /// No indicator: one.
    Clip,
    /// `+`: all.
    Keep,
}

/// Folded-scalar lines (all at the content indentation): a single break becomes a space, and each blank
/// line a newline.
fn fold(body: &[&str]) -> String {
    let mut text = String::new();
    let mut blanks = 0usize;
    let mut started = false;
    for line in body {
        if line.is_empty() {
            blanks += 1;
            continue;
        }
        if started && blanks == 0 {
            text.push(' ');
        }
        text.extend(std::iter::repeat_n('\n', blanks));
        text.push_str(line);
        blanks = 0;
        started = true;
    }
    text
}

/// Characters that cannot start a plain scalar (`-`, `?` and `:` can, before a non-space; the subset
/// takes only `-`).
fn plain_start(text: &str) -> bool {
    match text.as_bytes() {
        [] => false,
        [b'-', next, ..] => *next != b' ',
        [b'-'] => false,
        [first, ..] => !b"?:,[]{}#&*!|>'\"%@`".contains(first),
    }
}

/// A one-line plain scalar in block context, without its comment; `None` where the crate would read
/// more (`: ` inside, or a `:` ending it).
fn block_plain(rest: &str) -> Option<&str> {
    if !plain_start(rest) {
        return None;
    }
    match scan_plain(rest) {
        (end, None) => Some(rest[..end].trim_end_matches(' ')),
        (_, Some(_)) => None,
    }
}

/// The key of a block mapping entry and the text after its `: `; `Some(None)` when `body` is not a
/// mapping entry, `None` when it is something the subset leaves to the crate.
fn split_key(body: &str) -> Option<Option<(Node, &str)>> {
    if body.starts_with(['"', '\'']) {
        let (key, after) = quoted(body)?;
        return Some(match after.strip_prefix(':') {
            Some(rest) if rest.is_empty() || rest.starts_with(' ') => {
                (body.len() - after.len() <= MAX_KEY).then_some(())?;
                Some((Node::String(key), rest.trim_start_matches(' ')))
            }
            _ => None,
        });
    }
    if !plain_start(body) {
        return if body.starts_with(['[', '{', '|', '>', '*']) { Some(None) } else { None };
    }
    let Some(colon) = scan_plain(body).1 else { return Some(None) };
    let key = &body[..colon];
    if key.ends_with(' ') || key.len() > MAX_KEY {
        return None;
    }
    Some(Some((resolve(key)?, body[colon + 1..].trim_start_matches(' '))))
}

/// A one-line quoted scalar at the start of `text`: its value and the text after the closing quote.
fn quoted(text: &str) -> Option<(String, &str)> {
    let quote = text.as_bytes()[0];
    let mut value = String::new();
    let mut chars = text[1..].char_indices();
    while let Some((at, c)) = chars.next() {
        match (quote, c) {
            (b'\'', '\'') => {
                if text[1 + at + 1..].starts_with('\'') {
                    chars.next();
                    value.push('\'');
                } else {
                    return Some((value, &text[1 + at + 1..]));
                }
            }
            (b'"', '"') => return Some((value, &text[1 + at + 1..])),
            (b'"', '\\') => {
                let (_, code) = chars.next()?;
                let simple = match code {
                    '0' => '\0',
                    'a' => '\x07',
                    'b' => '\x08',
                    't' => '\t',
                    'n' => '\n',
                    'v' => '\x0b',
                    'f' => '\x0c',
                    'r' => '\r',
                    'e' => '\x1b',
                    ' ' | '"' | '/' | '\\' => code,
                    'N' => '\u{85}',
                    '_' => '\u{a0}',
                    'L' => '\u{2028}',
                    'P' => '\u{2029}',
                    'x' | 'u' | 'U' => {
                        let width = match code {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let mut hex = 0u32;
                        for _ in 0..width {
                            hex = hex * 16 + chars.next()?.1.to_digit(16)?;
                        }
                        char::from_u32(hex)?
                    }
                    _ => return None,
                };
                value.push(simple);
            }
            _ => value.push(c),
        }
    }
    None
}

/// A flow collection written on one line.
struct Flow<'a, 't> {
    text: &'t str,
    at: usize,
    duplicates: &'a mut Vec<Duplicate>,
}

impl Flow<'_, '_> {
    fn skip_spaces(&mut self) {
        while self.text.as_bytes().get(self.at) == Some(&b' ') {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn node(&mut self, path: &Path, depth: usize) -> Option<Node> {
        self.skip_spaces();
        match self.peek()? {
            b'[' => self.sequence(path, depth),
            b'{' => self.mapping(path, depth),
            _ => self.scalar(),
        }
    }

    fn scalar(&mut self) -> Option<Node> {
        let rest = &self.text[self.at..];
        if rest.starts_with(['"', '\'']) {
            let (value, after) = quoted(rest)?;
            self.at = self.text.len() - after.len();
            return Some(Node::String(value));
        }
        let bytes = rest.as_bytes();
        // In a flow, `-` starts a plain scalar only before a character that can continue one.
        if !plain_start(rest) || bytes[0] == b'-' && matches!(bytes.get(1), Some(b',' | b'[' | b']' | b'{' | b'}')) {
            return None;
        }
        let end = (0..bytes.len())
            .find(|&i| match bytes[i] {
                b',' | b'[' | b']' | b'{' | b'}' => true,
                // Before a flow indicator the crate refuses a `:`; the subset declines there too.
                b':' => matches!(bytes.get(i + 1), None | Some(b' ' | b',' | b'?' | b'[' | b']' | b'{' | b'}')),
                b'#' => bytes[i - 1] == b' ',
                _ => false,
            })
            .unwrap_or(bytes.len());
        if bytes.get(end) == Some(&b':') && !matches!(bytes.get(end + 1), None | Some(b' ')) {
            return None;
        }
        let text = rest[..end].trim_end_matches(' ');
        self.at += end;
        resolve(text)
    }

    /// After an entry: `,` and another entry, or the closing bracket. A trailing comma is left to the
    /// crate.
    fn separator(&mut self, close: u8) -> Option<bool> {
        self.skip_spaces();
        match self.peek()? {
            b',' => {
                self.at += 1;
                self.skip_spaces();
                (self.peek()? != close).then_some(true)
            }
            b if b == close => {
                self.at += 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// Steps into a collection at its opening bracket; whether it is empty (`close` follows at once).
    fn open(&mut self, close: u8, depth: usize) -> Option<bool> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.at += 1;
        self.skip_spaces();
        let empty = self.peek()? == close;
        if empty {
            self.at += 1;
        }
        Some(empty)
    }

    fn sequence(&mut self, path: &Path, depth: usize) -> Option<Node> {
        let mut items = Vec::new();
        if self.open(b']', depth)? {
            return Some(Node::Seq(items));
        }
        loop {
            items.push(self.node(path, depth + 1)?);
            if !self.separator(b']')? {
                return Some(Node::Seq(items));
            }
        }
    }

    fn mapping(&mut self, path: &Path, depth: usize) -> Option<Node> {
        let mut map = MapBuilder::default();
        if self.open(b'}', depth)? {
            return Some(map.finish());
        }
        loop {
            if matches!(self.peek()?, b'[' | b'{') {
                return None;
            }
            let key = self.scalar()?;
            if !self.text[self.at..].starts_with(": ") {
                return None;
            }
            self.at += 2;
            let text = key.as_scalar_text().unwrap_or_default();
            let value = self.node(&Path::Key(path, &text), depth + 1)?;
            add(&mut map, key, value, path, self.duplicates);
            if !self.separator(b'}')? {
                return Some(map.finish());
            }
        }
    }
}

/// A plain scalar's value, by the YAML crate's rules (serde_yaml's `visit_untagged_scalar`): null, bool,
/// integer (decimal, `0x`, `0o`, `0b`; a leading zero makes a string), float, else string. `None` for an
/// integer beyond 64 bits, which the crate's path refuses.
pub(super) fn resolve(text: &str) -> Option<Node> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Node::Null),
        "true" | "True" | "TRUE" => return Some(Node::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Node::Bool(false)),
        // No integer starts with a letter, and the only floats that do (`inf`, `nan`) are not finite.
        _ if text.as_bytes()[0].is_ascii_alphabetic() => return Some(Node::String(text.to_string())),
        _ => {}
    }
    if let Some(v) = unsigned(text, u64::from_str_radix) {
        return Some(Node::from_u64(v));
    }
    if let Some(v) = negative(text, i64::from_str_radix) {
        return Some(Node::from_i64(v));
    }
    if unsigned(text, u128::from_str_radix).is_some() || negative(text, i128::from_str_radix).is_some() {
        return None;
    }
    if !leading_zero_digits(text)
        && let Some(x) = float(text)
    {
        return Some(Node::from_f64(x));
    }
    Some(Node::String(text.to_string()))
}

type Radix<T> = fn(&str, u32) -> Result<T, std::num::ParseIntError>;

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
