//! What a golden file's header comment says about how its curve was measured.
//!
//! InferenceX writes free-form comments (`# Source GitHub Actions run: …`, `# dataset: coding | temperature:
//! 1.0`, `# speculative-config: method=dspark | draft_sample_method=probabilistic`, `# Measured on kimi-k3
//! (B300, vLLM DSpark, draft: Inferact/Kimi-K3-DSpark), …`). alsim's own files add plain `# drafter: …`,
//! `# method: …` and `# draft_sampling: …` lines, because the two MiniMax-M3 files differ only by name.
//! Both are read here; anything not understood is kept verbatim in [`Provenance::notes`].

use std::collections::BTreeMap;

use serde::Serialize;

/// Facts recorded in a golden file's header.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Provenance {
    /// The run that measured the curve (usually a GitHub Actions URL).
    pub source_run: Option<String>,
    /// Dataset and sampling settings (`dataset`, `temperature`, `top_p`, `output_len`, …).
    pub settings: BTreeMap<String, String>,
    /// Per thinking mode, how the mode was requested (chat-template kwargs, sampling).
    pub mode_settings: BTreeMap<String, String>,
    /// The draft model, when the header names it.
    pub drafter: Option<String>,
    /// The speculative method (`eagle3`, `mtp`, `dspark`, …), lower case.
    pub method: Option<String>,
    /// Draft sampling (`greedy`, `probabilistic`), when stated.
    pub draft_sampling: Option<String>,
    /// vLLM rejection-sample method, when stated (`block`, …).
    pub rejection_sampling: Option<String>,
    /// Hardware the curve was measured on.
    pub hardware: Option<String>,
    /// Engine the curve was measured with.
    pub engine: Option<String>,
    /// The model name as measured (may differ from the file's key).
    pub measured_model: Option<String>,
    /// Header lines that carry none of the above.
    pub notes: Vec<String>,
}

impl Provenance {
    /// Reads the facts out of a file's leading comment lines (without the `#`).
    pub fn from_header(lines: &[String]) -> Provenance {
        let mut p = Provenance::default();
        for raw in lines {
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(url) = after_prefix(line, &["Source GitHub Actions run:", "source_run:", "source run:"]) {
                p.source_run = Some(url.to_string());
            } else if let Some(rest) = after_prefix(line, &["speculative-config:"]) {
                for (key, value) in pairs(rest, '=') {
                    p.set_spec_fact(&key, &value);
                }
            } else if let Some(rest) = after_prefix(line, &["Measured on "]) {
                p.read_measured_on(rest);
            } else if let Some(mode) = ["thinking_on", "thinking_off"].into_iter().find(|m| lower.starts_with(m)) {
                let rest = line[mode.len()..].trim_start_matches([' ', ':']).trim();
                p.mode_settings.insert(mode.to_string(), rest.to_string());
            } else if lower.starts_with("dataset:") {
                for (key, value) in pairs(line, ':') {
                    p.settings.insert(key, value);
                }
            } else if let Some((key, value)) = line.split_once(':') {
                let key = key.trim().to_ascii_lowercase();
                let value = value.trim().to_string();
                match key.as_str() {
                    "drafter" | "draft_model" | "draft model" => p.drafter = Some(value),
                    "method" => p.method = Some(value.to_ascii_lowercase()),
                    "draft_sampling" | "draft_sample_method" => p.draft_sampling = Some(value.to_ascii_lowercase()),
                    "rejection_sample_method" => p.rejection_sampling = Some(value.to_ascii_lowercase()),
                    "hardware" => p.hardware = Some(value),
                    "engine" => p.engine = Some(value),
                    "measured_model" => p.measured_model = Some(value),
                    _ => p.notes.push(line.to_string()),
                }
            } else if let Some(level) = lower.strip_prefix("key = num_speculative_tokens (") {
                // "(EAGLE3 level)": the method, when nothing more explicit said it.
                if p.method.is_none() {
                    p.method = level.split_whitespace().next().map(str::to_string);
                }
            } else {
                p.notes.push(line.to_string());
            }
        }
        p
    }

    /// The reasoning effort the curve's runs asked of the model in `mode` (the `reasoning_effort` of that
    /// mode's chat-template kwargs, as InferenceX's DeepSeek-V4 header records `"high"`), when the header says.
    pub fn effort(&self, mode: &str) -> Option<String> {
        let settings = self.mode_settings.get(mode)?;
        let rest = &settings[settings.find("reasoning_effort")? + "reasoning_effort".len()..];
        let value = rest.trim_start_matches(['"', '\'', ' ', ':', '=']);
        let end = value.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).unwrap_or(value.len());
        (end > 0).then(|| value[..end].to_ascii_lowercase())
    }

    fn set_spec_fact(&mut self, key: &str, value: &str) {
        let value = value.to_ascii_lowercase();
        match key {
            "method" => self.method = Some(value),
            "draft_sample_method" => self.draft_sampling = Some(value),
            "rejection_sample_method" => self.rejection_sampling = Some(value),
            _ => {
                self.settings.insert(key.to_string(), value);
            }
        }
    }

    /// "deepseek-v4-pro-0813 (B300, vLLM DSpark, draft: Inferact/Kimi-K3-DSpark), per num_speculative_tokens."
    fn read_measured_on(&mut self, rest: &str) {
        let (model, inside) = match (rest.find('('), rest.rfind(')')) {
            (Some(open), Some(close)) if close > open => (rest[..open].trim(), &rest[open + 1..close]),
            _ => (rest.trim_end_matches('.').trim(), ""),
        };
        self.measured_model = Some(model.to_string());
        for (i, part) in inside.split(',').map(str::trim).enumerate() {
            if let Some(draft) = part.strip_prefix("draft:") {
                self.drafter.get_or_insert_with(|| draft.trim().to_string());
            } else if i == 0 {
                self.hardware.get_or_insert_with(|| part.to_string());
            } else if i == 1 {
                let mut words = part.split_whitespace();
                if let Some(engine) = words.next() {
                    self.engine.get_or_insert_with(|| engine.to_string());
                }
                if let Some(method) = words.next() {
                    self.method.get_or_insert_with(|| method.to_ascii_lowercase());
                }
            }
        }
    }
}

fn after_prefix<'a>(line: &'a str, prefixes: &[&str]) -> Option<&'a str> {
    prefixes.iter().find_map(|p| {
        // `get`: a multi-byte character may straddle the prefix's length (found by the curve fuzz target).
        line.get(..p.len()).filter(|head| head.eq_ignore_ascii_case(p)).and_then(|_| line.get(p.len()..)).map(str::trim)
    })
}

/// "a: 1 | b: 2" (or with `=`) as lower-case key, value pairs.
fn pairs(text: &str, separator: char) -> Vec<(String, String)> {
    text.split('|')
        .filter_map(|part| {
            let (k, v) = part.split_once(separator)?;
            Some((k.trim().to_ascii_lowercase(), v.trim().to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> Provenance {
        let lines: Vec<String> = text.lines().map(|l| l.trim_start_matches('#').to_string()).collect();
        Provenance::from_header(&lines)
    }

    #[test]
    fn reads_the_reasoning_effort_of_a_mode() {
        let header: Vec<String> = [
            r#"thinking_on chat_template_kwargs: {"thinking": true, "reasoning_effort": "high"}"#,
            r#"thinking_off chat_template_kwargs: {"thinking": false}"#,
        ]
        .map(String::from)
        .to_vec();
        let p = Provenance::from_header(&header);
        assert_eq!(p.effort("thinking_on").as_deref(), Some("high"));
        assert_eq!(p.effort("thinking_off"), None);
        assert_eq!(Provenance::default().effort("thinking_on"), None);
    }

    #[test]
    fn reads_inferencex_dspark_header() {
        let p = header(
            "# Source GitHub Actions run: https://example/runs/1\n\
             # dataset: coding | top_p: 0.95 | output_len: 4096\n\
             # speculative-config: draft_sample_method=probabilistic | rejection_sample_method=block\n\
             # Measured on kimi-k3 (B300, vLLM DSpark, draft: Inferact/Kimi-K3-DSpark), per num_speculative_tokens.\n\
             # key = num_speculative_tokens (DSpark level); value = golden AL",
        );
        assert_eq!(p.source_run.as_deref(), Some("https://example/runs/1"));
        assert_eq!(p.settings.get("dataset").map(String::as_str), Some("coding"));
        assert_eq!(p.draft_sampling.as_deref(), Some("probabilistic"));
        assert_eq!(p.rejection_sampling.as_deref(), Some("block"));
        assert_eq!(p.drafter.as_deref(), Some("Inferact/Kimi-K3-DSpark"));
        assert_eq!(p.method.as_deref(), Some("dspark"));
        assert_eq!(p.hardware.as_deref(), Some("B300"));
        assert_eq!(p.engine.as_deref(), Some("vLLM"));
    }

    #[test]
    fn multi_byte_characters_where_a_prefix_ends_are_not_a_panic() {
        // "Measured on " is 12 bytes; 'ٙ' (2 bytes) starts at byte 11 here.
        let p = header("# Measured onٙ x\n# Golden acceptance lengthsٙor MiniMax");
        assert_eq!(p.hardware, None);
    }

    #[test]
    fn explicit_lines_win() {
        let p = header("# drafter: Inferact/MiniMax-M3-EAGLE3-GQA\n# method: EAGLE3\n# draft_sampling: greedy");
        assert_eq!(p.drafter.as_deref(), Some("Inferact/MiniMax-M3-EAGLE3-GQA"));
        assert_eq!(p.method.as_deref(), Some("eagle3"));
        assert_eq!(p.draft_sampling.as_deref(), Some("greedy"));
    }
}
