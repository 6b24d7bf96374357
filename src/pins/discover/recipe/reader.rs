//! The walk of a recipe's YAML tree that finds what the check reads in it: each knob, fact and setting
//! with its role, line, group and (for `pins fix`) the byte span of its literal.

use super::{Item, ItemKind};
use crate::bash::word::{Template, Value};
use crate::engine::Engine;
use crate::pins::thinking::IGNORED;
use crate::pins::{Knob, Role};
use crate::yaml::{Node, Value as Yaml};

/// What a recipe's tree holds, in the order it is walked.
pub(super) fn items(text: &str, root: &Node) -> Vec<Item> {
    let line_starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let mut reader = Reader { text, line_starts: &line_starts, items: Vec::new(), groups: 0, top: None };
    // The root has no key: its lists and scalars are given the first line.
    reader.visit(root, &mut Vec::new(), None, (1, 0));
    reader.items
}

struct Reader<'a> {
    text: &'a str,
    line_starts: &'a [usize],
    items: Vec<Item>,
    groups: usize,
    /// The top-level key being read, and its line.
    top: Option<(String, usize)>,
}

impl Reader<'_> {
    /// The byte span of `value` written on `line` after `key` (for `pins fix`).
    fn span(&self, line: usize, key: &str, value: &str) -> Option<(usize, usize)> {
        let start = *self.line_starts.get(line.checked_sub(1)?)?;
        let end = self.line_starts.get(line).copied().unwrap_or(self.text.len());
        let text = &self.text[start..end];
        let after = text.find(key).map_or(0, |k| k + key.len());
        let at = after + text[after..].find(value)?;
        Some((start + at, start + at + value.len()))
    }

    fn push(
        &mut self,
        role: Option<Role>,
        kind: ItemKind,
        value: &str,
        (line, group): (usize, usize),
        key: &str,
        span: Option<(usize, usize)>,
    ) {
        let value = value.trim().trim_matches(['"', '\'']).to_string();
        if value.is_empty() {
            return;
        }
        self.items.push(Item { role, kind, value, line, group, span, key: key.to_string(), top: self.top.clone() });
    }

    /// Reads the items under `node`; `line` is that of the key it is written under (a list's strings are
    /// joined as one argument string, found at that line).
    fn visit(&mut self, node: &Node, path: &mut Vec<String>, role: Option<Role>, (line, group): (usize, usize)) {
        match &node.value {
            Yaml::Map(entries) => {
                for (key_node, value) in entries {
                    let key = key_node.as_scalar_text().unwrap_or_default();
                    if path.is_empty() {
                        self.top = Some((key.clone(), key_node.line));
                    }
                    let role = Role::of_key(&key).or(role);
                    path.push(key.clone());
                    match value.as_scalar_text() {
                        Some(text) => self.scalar(&key, &text, path, role, (key_node.line, group)),
                        None => self.visit(value, path, role, (key_node.line, group)),
                    }
                    path.pop();
                }
            }
            Yaml::Seq(items) => {
                let strings: Vec<String> = items.iter().filter_map(Node::as_scalar_text).collect();
                if strings.len() == items.len() && !strings.is_empty() {
                    for s in &strings {
                        if let Some((k, v)) = s.split_once('=')
                            && !k.starts_with('-')
                            && !k.contains(' ')
                        {
                            self.scalar(k, v, path, role, (line, group));
                        }
                    }
                    self.args(&strings.join(" "), line, role, group);
                } else {
                    for item in items {
                        // The environment-list form (`- name: KNOB` / `value: "2.5"`) is the pair `KNOB: 2.5`.
                        let field = |k: &str| item.get(k).and_then(Node::as_scalar_text);
                        match (field("name"), field("value")) {
                            (Some(name), Some(value)) => self.scalar(&name, &value, path, role, (item.line, group)),
                            _ => self.visit(item, path, role, (line, group)),
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Reads the item `key: text` written at `line`.
    fn scalar(&mut self, key: &str, text: &str, path: &[String], role: Option<Role>, (line, group): (usize, usize)) {
        let lower = key.to_ascii_lowercase().replace('-', "_");
        let parent = path.len().checked_sub(2).map(|i| path[i].as_str());
        let in_identity = path.iter().any(|p| p == "identity");
        let kind = match lower.as_str() {
            "sglang_simulate_acc_len" => Some(ItemKind::Pin(Knob::SglangSimulateLen)),
            "tllm_spec_decode_force_num_accepted_tokens" => Some(ItemKind::Pin(Knob::TrtllmForceAccepted)),
            "spec_decode_acceptance_length" => Some(ItemKind::Pin(Knob::AtomLength)),
            "spec_decode_acceptance_rate" => Some(ItemKind::Pin(Knob::AtomRate)),
            "synthetic_acceptance_length" => Some(ItemKind::Pin(Knob::VllmSyntheticLength)),
            "sglang_simulate_acc_method" => Some(ItemKind::SglangMethod),
            "sglang_simulate_acc_token_mode" => Some(ItemKind::SglangTokenMode),
            "rejection_sample_method" => Some(ItemKind::RejectionMethod),
            "speculative_num_steps" | "num_speculative_tokens" | "max_draft_len" => Some(ItemKind::K),
            "speculative_dspark_block_size" => Some(ItemKind::DsparkBlock),
            "speculative_num_draft_tokens" => Some(ItemKind::DraftTokens),
            "speculative_algorithm" => {
                self.push(role, ItemKind::Algorithm, text, (line, group), key, None);
                Some(ItemKind::Method)
            }
            "speculative_draft_model_path"
            | "draft_model"
            | "speculative_model"
            | "speculative_model_dir"
            | "speculative_draft_model" => Some(ItemKind::Drafter),
            "served_model_name" => Some(ItemKind::Model),
            "repo" if in_identity && parent == Some("model") => Some(ItemKind::Model),
            "model_path" if !text.trim().starts_with('/') => Some(ItemKind::Model),
            "path" if parent == Some("model") && !in_identity => {
                let name = text.trim().trim_start_matches("hf:");
                self.push(None, ItemKind::ModelAlias, name, (line, group), "model.path", None);
                None
            }
            "decoding_type" | "spec_method" => Some(ItemKind::Method),
            "draft_sample_method" => Some(ItemKind::Sampling),
            "dyn_default_thinking_mode"
            | "sglang_default_thinking"
            | "thinking_mode"
            | "enable_thinking"
            | "thinking"
            | "chat_template" => Some(ItemKind::Thinking),
            "sglang_dsv4_reasoning_effort" | "sglang_reasoning_effort" | "reasoning_effort" => Some(ItemKind::Effort),
            "aiperf_extra_inputs" => {
                for token in text.split([' ', ',']) {
                    if let Some(v) = token.strip_prefix("thinking:") {
                        self.push(
                            None,
                            ItemKind::RequestThinking,
                            v,
                            (line, group),
                            "AIPERF_EXTRA_INPUTS thinking",
                            None,
                        );
                    }
                }
                None
            }
            "type" | "backend" | "engine" | "framework" if text.parse::<Engine>().is_ok() => Some(ItemKind::Engine),
            _ => None,
        };
        if IGNORED.iter().any(|(name, _)| name.eq_ignore_ascii_case(key)) {
            self.push(role, ItemKind::Ignored, text, (line, group), key, None);
            return;
        }
        if let Some(kind) = kind {
            let span = matches!(kind, ItemKind::Pin(_)).then(|| self.span(line, key, text.trim())).flatten();
            self.push(role, kind, text, (line, group), key, span);
            return;
        }
        if lower == "speculative_config" || lower.ends_with("chat_template_kwargs") {
            self.groups += 1;
            let group = self.groups;
            let start = self.span(line, key, text).map(|(s, _)| s);
            let t = Template::literal(text, start);
            let keys: &[(&str, ItemKind)] = if lower == "speculative_config" {
                &[
                    ("synthetic_acceptance_length", ItemKind::Pin(Knob::VllmSyntheticLength)),
                    ("synthetic_acceptance_rates", ItemKind::Pin(Knob::VllmSyntheticRates)),
                    ("num_speculative_tokens", ItemKind::K),
                    ("model", ItemKind::Drafter),
                    ("method", ItemKind::Method),
                    ("draft_sample_method", ItemKind::Sampling),
                    ("rejection_sample_method", ItemKind::RejectionMethod),
                ]
            } else {
                &[
                    ("thinking_mode", ItemKind::Thinking),
                    ("enable_thinking", ItemKind::Thinking),
                    ("thinking", ItemKind::Thinking),
                    ("reasoning_effort", ItemKind::Effort),
                ]
            };
            for (json_key, kind) in keys {
                let values = if *kind == ItemKind::Pin(Knob::VllmSyntheticRates) {
                    t.json_list(json_key)
                } else {
                    t.json(json_key)
                };
                for value in values {
                    if let Value::Lit { text, span } = value {
                        let key = format!("{key} {json_key}");
                        self.push(role, *kind, &text, (line, group), &key, span);
                    }
                }
            }
            return;
        }
        if text.contains("--") {
            self.args(text, line, role, group);
        }
        if !settings_text(text) {
            return;
        }
        // Settings inside a larger string (`sim_env: "SGLANG_SIMULATE_ACC_LEN=2.5 …"`): each `NAME=VALUE`
        // word is read as the pair it spells, and a `--speculative-config '{…}'` as the JSON it holds.
        for (name, value) in text.split_whitespace().filter_map(|w| w.split_once('=')) {
            if name != key && env_name(name) {
                self.scalar(name, value, path, role, (line, group));
            }
        }
        if let Some(at) = text.find("--speculative-config") {
            let rest = text[at + "--speculative-config".len()..].trim_start_matches([' ', '=', '\'', '"']);
            if let Some(end) = rest.starts_with('{').then(|| object_end(rest)).flatten() {
                self.scalar("speculative-config", &rest[..=end], &[], role, (line, group));
            }
        }
    }

    /// Engine flags inside an argument string or list.
    fn args(&mut self, text: &str, line: usize, role: Option<Role>, group: usize) {
        let tokens: Vec<&str> = text.split_whitespace().collect();
        for (flag, kind) in [
            ("--spec-decode-acceptance-length", ItemKind::Pin(Knob::AtomLength)),
            ("--spec-decode-acceptance-rate", ItemKind::Pin(Knob::AtomRate)),
            ("--spec-synth-len", ItemKind::Pin(Knob::LlamacppLength)),
            ("--spec-synth-rates", ItemKind::Pin(Knob::LlamacppRates)),
            ("--num-speculative-tokens", ItemKind::K),
            ("--spec-draft-n-max", ItemKind::K),
            ("--speculative-num-steps", ItemKind::K),
            ("--draft-model", ItemKind::Drafter),
            ("--speculative-draft-model-path", ItemKind::Drafter),
            ("--speculative-algorithm", ItemKind::Method),
            ("--dyn-default-thinking-mode", ItemKind::Thinking),
        ] {
            for (i, t) in tokens.iter().enumerate() {
                let value = if *t == flag {
                    tokens.get(i + 1).copied()
                } else {
                    t.strip_prefix(flag).and_then(|r| r.strip_prefix('='))
                };
                if let Some(v) = value {
                    let span = matches!(kind, ItemKind::Pin(_)).then(|| self.span(line, flag, v)).flatten();
                    self.push(role, kind, v, (line, group), flag, span);
                }
            }
        }
    }
}

/// An environment variable's name: upper-case letters, digits and underscores.
fn env_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Whether a string is settings a launcher passes on (`NAME=VALUE` words, `--flag value` pairs and a
/// flag's JSON), not prose that quotes one: every word outside a JSON argument is a setting, a flag, or
/// the value right after a flag.
fn settings_text(text: &str) -> bool {
    let mut after_flag = false;
    let mut json_depth = 0usize;
    let mut any = false;
    for word in text.split_whitespace() {
        let in_json = json_depth > 0 || (after_flag && word.trim_start_matches(['\'', '"']).starts_with('{'));
        json_depth = (json_depth + word.matches('{').count()).saturating_sub(word.matches('}').count());
        let setting = word.split_once('=').is_some_and(|(name, _)| env_name(name));
        let flag = word.starts_with('-') && word.len() > 1;
        if !(in_json || setting || flag || after_flag) {
            return false;
        }
        any |= setting || flag;
        after_flag = flag && !word.contains('=');
    }
    any
}

/// Where the JSON object `text` opens with ends: its matching `}` (nested objects and strings skipped), so a
/// `--speculative-config '{…, "draft": {…}, …}'` is read whole.
fn object_end(text: &str) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, c) in text.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}
