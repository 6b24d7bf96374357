//! Lines of a YAML text by key path: parsed YAML keeps no positions, so findings and fixes find their
//! line here (a key written twice in one mapping is used at its last line, as PyYAML reads it).

/// Key paths of a block-style YAML text → 1-based lines, with the line where each key's mapping starts
/// (a key written twice in one mapping is used at its last line, as PyYAML reads it).
pub(super) struct LineIndex {
    entries: Vec<(Vec<String>, usize, usize)>,
    /// Entries by their own (last) key, in order: a path's suffix always ends with that key, so lookups
    /// scan only these (recipes look up every scalar, and a linear scan of all entries each time was a
    /// tenth of the check's instructions on the InferenceX snapshot).
    by_key: std::collections::HashMap<String, Vec<usize>>,
}

impl LineIndex {
    /// Indexes `text`.
    pub(super) fn new(text: &str) -> LineIndex {
        let mut entries: Vec<(Vec<String>, usize, usize)> = Vec::new();
        let mut stack: Vec<(usize, String, usize)> = Vec::new();
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
            let key = match body.find(": ").or_else(|| body.strip_suffix(':').map(|b| b.len())) {
                Some(end) => body[..end].trim().trim_matches(['"', '\'']).to_string(),
                None => match body.split_once('=') {
                    // `- KEY=VALUE` list items.
                    Some((k, _)) if !k.contains(' ') => k.trim_matches(['"', '\'']).to_string(),
                    _ => continue,
                },
            };
            let mut sibling = None;
            while let Some((ind, _, start)) = stack.last().cloned().filter(|(ind, _, _)| *ind >= indent) {
                stack.pop();
                if ind == indent {
                    sibling = Some(start);
                }
            }
            let start = if item { i + 1 } else { sibling.unwrap_or(i + 1) };
            stack.push((indent, key, start));
            entries.push((stack.iter().map(|(_, k, _)| k.clone()).collect(), i + 1, start));
        }
        let mut by_key: std::collections::HashMap<String, Vec<usize>> = std::collections::HashMap::new();
        for (i, (path, _, _)) in entries.iter().enumerate() {
            if let Some(key) = path.last() {
                by_key.entry(key.clone()).or_default().push(i);
            }
        }
        LineIndex { entries, by_key }
    }

    /// The line of the deepest entry matching the end of `path` (falls back to shorter suffixes); of a key
    /// written twice in one mapping, the last.
    pub(super) fn line(&self, path: &[String]) -> usize {
        let Some(candidates) = path.last().and_then(|key| self.by_key.get(key)) else { return 1 };
        let entry = |&i: &usize| &self.entries[i];
        for take in (1..=path.len()).rev() {
            let suffix = &path[path.len() - take..];
            if let Some((first, _, start)) = candidates.iter().map(entry).find(|(p, _, _)| p.ends_with(suffix)) {
                let last = candidates.iter().rev().map(entry).find(|(p, _, s)| p == first && s == start);
                return last.map_or(1, |(_, line, _)| *line);
            }
        }
        1
    }

    /// Lines of every entry whose path ends with `path`.
    pub(super) fn lines_of_path(&self, path: &[String]) -> Vec<usize> {
        self.entries.iter().filter(|(p, _, _)| p.ends_with(path)).map(|(_, l, _)| *l).collect()
    }

    /// Lines of every entry whose own key is `key`, in order.
    pub(super) fn lines_of(&self, key: &str) -> Vec<usize> {
        self.entries.iter().filter(|(p, _, _)| p.last().is_some_and(|k| k == key)).map(|(_, l, _)| *l).collect()
    }
}
