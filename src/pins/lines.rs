//! Lines of a YAML text by key path: parsed YAML keeps no positions, so findings and fixes find their
//! line here (a key written twice in one mapping is used at its last line, as PyYAML reads it).

/// Key paths of a block-style YAML text → 1-based lines, with the line where each key's mapping starts
/// (a key written twice in one mapping is used at its last line, as PyYAML reads it).
pub(super) struct LineIndex {
    /// Each key-bearing line: its key path (as [`LineIndex::keys`] ids), its line, the line its mapping
    /// starts at. Keys are interned so a line costs one small vector, not a copy of every enclosing key.
    entries: Vec<(Vec<u32>, usize, usize)>,
    /// Keys are short and looked up for every scalar of every recipe: foldhash (seeded per process)
    /// hashes them several times faster than std's SipHash, which was 3 % of the check.
    keys: foldhash::HashMap<String, u32>,
    /// Entries by their own (last) key, in order: a path's suffix always ends with that key, so lookups
    /// scan only these (recipes look up every scalar, and a linear scan of all entries each time was a
    /// tenth of the check's instructions on the InferenceX snapshot).
    by_key: Vec<Vec<usize>>,
}

impl LineIndex {
    /// Indexes `text`.
    pub(super) fn new(text: &str) -> LineIndex {
        let mut entries: Vec<(Vec<u32>, usize, usize)> = Vec::new();
        let mut keys: foldhash::HashMap<String, u32> = foldhash::HashMap::default();
        let mut by_key: Vec<Vec<usize>> = Vec::new();
        let mut stack: Vec<(usize, u32, usize)> = Vec::new();
        let key_end = memchr::memmem::Finder::new(": ");
        for (i, raw) in text.lines().enumerate() {
            let trimmed = raw.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let mut indent = raw.len() - trimmed.len();
            let mut body = trimmed;
            let mut item = false;
            while let Some(rest) = body.strip_prefix("- ") {
                indent += 2;
                body = rest.trim_start();
                item = true;
            }
            let colon = key_end.find(body.as_bytes());
            let key = match colon.or_else(|| body.strip_suffix(':').map(|b| b.len())) {
                Some(end) => body[..end].trim().trim_matches(['"', '\'']),
                None => match body.split_once('=') {
                    // `- KEY=VALUE` list items.
                    Some((k, _)) if !k.contains(' ') => k.trim_matches(['"', '\'']),
                    _ => continue,
                },
            };
            let id = match keys.get(key) {
                Some(&id) => id,
                None => {
                    let id = keys.len() as u32;
                    keys.insert(key.to_string(), id);
                    by_key.push(Vec::new());
                    id
                }
            };
            let mut sibling = None;
            while let Some(&(ind, _, start)) = stack.last().filter(|(ind, _, _)| *ind >= indent) {
                stack.pop();
                if ind == indent {
                    sibling = Some(start);
                }
            }
            let start = if item { i + 1 } else { sibling.unwrap_or(i + 1) };
            stack.push((indent, id, start));
            by_key[id as usize].push(entries.len());
            entries.push((stack.iter().map(|(_, k, _)| *k).collect(), i + 1, start));
        }
        LineIndex { entries, keys, by_key }
    }

    /// `path` as key ids; `None` for a key the text does not hold, which no entry matches.
    fn ids(&self, path: &[String]) -> Vec<Option<u32>> {
        path.iter().map(|k| self.keys.get(k.as_str()).copied()).collect()
    }

    /// The line of the deepest entry matching the end of `path` (falls back to shorter suffixes); of a key
    /// written twice in one mapping, the last.
    pub(super) fn line(&self, path: &[String]) -> usize {
        let ids = self.ids(path);
        let Some(&Some(last)) = ids.last() else { return 1 };
        let candidates = &self.by_key[last as usize];
        let entry = |&i: &usize| &self.entries[i];
        for take in (1..=ids.len()).rev() {
            let suffix = &ids[ids.len() - take..];
            if let Some((first, _, start)) = candidates.iter().map(entry).find(|(p, _, _)| ends_with(p, suffix)) {
                let last = candidates.iter().rev().map(entry).find(|(p, _, s)| p == first && s == start);
                return last.map_or(1, |(_, line, _)| *line);
            }
        }
        1
    }

    /// Lines of every entry whose path ends with `path`.
    pub(super) fn lines_of_path(&self, path: &[String]) -> Vec<usize> {
        let suffix = self.ids(path);
        self.entries.iter().filter(|(p, _, _)| ends_with(p, &suffix)).map(|(_, l, _)| *l).collect()
    }

    /// Lines of every entry whose own key is `key`, in order.
    pub(super) fn lines_of(&self, key: &str) -> Vec<usize> {
        let Some(&id) = self.keys.get(key) else { return Vec::new() };
        self.by_key[id as usize].iter().map(|&i| self.entries[i].1).collect()
    }
}

/// Whether an entry's key path ends with `suffix` (a key the text lacks matches nothing).
fn ends_with(path: &[u32], suffix: &[Option<u32>]) -> bool {
    path.len() >= suffix.len() && path[path.len() - suffix.len()..].iter().zip(suffix).all(|(a, b)| Some(*a) == *b)
}
