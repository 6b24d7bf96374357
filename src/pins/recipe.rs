//! YAML recipes (multi-node, srt-slurm style) and the master configs that inject values into them.
//!
//! A recipe is read as a tree: pins sit in environment blocks (`prefill_environment:`, `decode_environment:`,
//! `aggregated_environment:`, `environment:`), in `speculative-config` JSON strings or maps, or in argument
//! lists; k, drafter, method and thinking mode sit in per-role config maps (`prefill:`, `decode:`,
//! `aggregated:`) or at the top. Each role's pin is checked against that role's own k; a pin in a shared
//! block gives one pin per role that sets k.
//!
//! A master config (`configs/*-master.yaml`) lists entries whose `additional-settings` carry
//! `CONFIG_FILE=<recipe>`, `SYNTHETIC_ACCEPTANCE=true`, `SYNTHETIC_ACCEPTANCE_LENGTH=X` and
//! `EVAL_CONFIG_FILE=<twin>`; X is checked against the recipe's facts, and the twin must carry no pin.
//! Line numbers come from a small indentation index of the text, since the YAML tree has none.

use std::collections::{BTreeMap, BTreeSet};

use super::shell::{flag_values, json_values};
use super::walk::{Kind, TextFile};
use super::{Class, EvalGuard, Fact, Finding, How, Knob, Location, Mechanism, Pin, Skipped, thinking_word};
use crate::engine::Engine;
use crate::yaml::{self, Node};

/// Words that make a YAML file worth parsing as a recipe.
const RECIPE_KEYWORDS: &[&str] = &[
    "SIMULATE_ACC",
    "TLLM_SPEC_DECODE",
    "synthetic_acceptance",
    "spec-decode-acceptance",
    "speculative",
    "num_speculative_tokens",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ItemKind {
    Pin(Knob),
    K,
    Model,
    Drafter,
    Method,
    Sampling,
    Thinking,
    SglangMethod,
    SglangTokenMode,
    RejectionMethod,
    Engine,
}

#[derive(Debug, Clone)]
struct Item {
    role: Option<String>,
    kind: ItemKind,
    value: String,
    line: usize,
    /// The speculative-config or block the item came from, to pair a vLLM pin with its rejection method.
    group: usize,
}

/// A parsed recipe: its items, with lines.
#[derive(Debug, Clone)]
struct Recipe {
    rel: String,
    items: Vec<Item>,
}

impl Recipe {
    fn pins(&self) -> impl Iterator<Item = &Item> {
        self.items.iter().filter(|i| matches!(i.kind, ItemKind::Pin(_)))
    }

    fn is_speculative(&self) -> bool {
        self.items.iter().any(|i| matches!(i.kind, ItemKind::K | ItemKind::Method | ItemKind::Pin(_)))
    }

    fn roles_with_k(&self) -> Vec<Option<String>> {
        let mut roles: Vec<Option<String>> = Vec::new();
        for item in self.items.iter().filter(|i| i.kind == ItemKind::K) {
            if !roles.contains(&item.role) {
                roles.push(item.role.clone());
            }
        }
        if roles.is_empty() {
            roles.push(None);
        }
        roles
    }

    /// The item of `kind` for `role`: the role's own, else a shared one.
    fn fact(&self, kind: ItemKind, role: &Option<String>) -> Option<&Item> {
        self.items
            .iter()
            .find(|i| i.kind == kind && &i.role == role)
            .or_else(|| self.items.iter().find(|i| i.kind == kind && i.role.is_none()))
    }

    fn engine(&self, knob: Knob) -> Fact<Engine> {
        if let Some(engine) = knob.engine() {
            return Fact::known(engine, How::Literal, knob.name(), None);
        }
        if let Some(item) = self.items.iter().find(|i| i.kind == ItemKind::Engine)
            && let Ok(engine) = item.value.parse::<Engine>()
        {
            return Fact::known(engine, How::Literal, item.value.clone(), Some(Location::new(&self.rel, item.line)));
        }
        if let Some(engine) = self.pins().find_map(|p| if let ItemKind::Pin(k) = p.kind { k.engine() } else { None }) {
            return Fact::known(engine, How::Inferred, "from the recipe's own knobs", None);
        }
        Fact::unresolved("recipe names no backend type")
    }
}

/// Pins and findings from every YAML recipe and master config; YAML that does not parse is skipped with a note.
pub fn discover(files: &[TextFile], skipped: &mut Vec<Skipped>) -> (Vec<Pin>, Vec<Finding>) {
    let mut recipes: BTreeMap<String, Recipe> = BTreeMap::new();
    let mut masters: Vec<(&TextFile, Node)> = Vec::new();
    for file in files.iter().filter(|f| f.kind == Kind::Yaml) {
        let master = file.text.contains("CONFIG_FILE=");
        if file.rel.contains("golden_al_distribution/")
            || !(master || RECIPE_KEYWORDS.iter().any(|k| file.text.contains(k)))
        {
            continue;
        }
        let root = match yaml::parse(&file.text, &file.rel) {
            Ok(root) => root,
            Err(e) => {
                skipped.push(Skipped { path: file.rel.clone(), reason: e.to_string() });
                continue;
            }
        };
        if master {
            masters.push((file, root));
        } else {
            recipes.insert(file.rel.clone(), read_recipe(&file.rel, &file.text, &root));
        }
    }
    let mut pins = Vec::new();
    let mut findings = Vec::new();
    let mut referenced: BTreeSet<String> = BTreeSet::new();
    for (file, root) in &masters {
        master_pins(file, root, &recipes, &mut referenced, &mut pins, &mut findings);
    }
    for recipe in recipes.values() {
        recipe_pins(recipe, &mut pins, &mut findings);
        if recipe.pins().next().is_none()
            && recipe.is_speculative()
            && recipe.rel.contains("agentic")
            && !referenced.contains(&recipe.rel)
        {
            let line = recipe.items.iter().find(|i| i.kind == ItemKind::K).map_or(1, |i| i.line);
            findings.push(Finding::new(
                Class::MissingPin,
                Location::new(&recipe.rel, line),
                "speculative decoding is configured but no synthetic acceptance is pinned and no master config injects one",
            ));
        }
    }
    (pins, findings)
}

fn recipe_pins(recipe: &Recipe, pins: &mut Vec<Pin>, findings: &mut Vec<Finding>) {
    for item in recipe.pins() {
        let ItemKind::Pin(knob) = item.kind else { continue };
        let location = Location::new(&recipe.rel, item.line);
        match knob {
            Knob::SglangSimulateLen => {
                let missing: Vec<&str> = [
                    (ItemKind::SglangMethod, "SGLANG_SIMULATE_ACC_METHOD"),
                    (ItemKind::SglangTokenMode, "SGLANG_SIMULATE_ACC_TOKEN_MODE"),
                ]
                .into_iter()
                .filter(|(kind, _)| recipe.fact(*kind, &item.role).is_none())
                .map(|(_, name)| name)
                .collect();
                if !missing.is_empty() {
                    findings.push(Finding::new(
                        Class::Spelling,
                        location.clone(),
                        format!(
                            "SGLANG_SIMULATE_ACC_LEN without {} in this role: the SGLang triple is incomplete",
                            missing.join(" and ")
                        ),
                    ));
                }
            }
            Knob::VllmSyntheticLength => {
                let synthetic = recipe
                    .items
                    .iter()
                    .any(|i| i.kind == ItemKind::RejectionMethod && i.group == item.group && i.value == "synthetic");
                if !synthetic {
                    findings.push(Finding::new(
                        Class::Spelling,
                        location.clone(),
                        "synthetic_acceptance_length without \"rejection_sample_method\": \"synthetic\": vLLM ignores the pin",
                    ));
                }
            }
            _ => {}
        }
        let roles = if item.role.is_some() { vec![item.role.clone()] } else { recipe.roles_with_k() };
        for role in roles {
            let written = match item.value.parse::<f64>() {
                Ok(v) => Fact::known(v, How::Literal, item.value.clone(), Some(location.clone())),
                Err(_) => Fact {
                    value: None,
                    how: How::Unresolved,
                    text: format!("'{}' is not a number", item.value),
                    at: Some(location.clone()),
                },
            };
            pins.push(build_pin(recipe, &role, location.clone(), Mechanism::Recipe, knob, written, role_label(&role)));
        }
    }
}

fn role_label(role: &Option<String>) -> String {
    role.as_ref().map(|r| format!("role {r}")).unwrap_or_default()
}

fn build_pin(
    recipe: &Recipe,
    role: &Option<String>,
    location: Location,
    mechanism: Mechanism,
    knob: Knob,
    written: Fact<f64>,
    branch: String,
) -> Pin {
    let fact = |kind: ItemKind, missing: &str| -> Fact<String> {
        match recipe.fact(kind, role) {
            Some(item) => Fact::known(
                item.value.clone(),
                How::Literal,
                item.value.clone(),
                Some(Location::new(&recipe.rel, item.line)),
            ),
            None => Fact::unresolved(missing.to_string()),
        }
    };
    let k = match recipe.fact(ItemKind::K, role) {
        Some(item) => match item.value.parse::<usize>() {
            Ok(k) if k >= 1 => {
                Fact::known(k, How::Literal, item.value.clone(), Some(Location::new(&recipe.rel, item.line)))
            }
            _ => Fact {
                value: None,
                how: How::Unresolved,
                text: format!("k = '{}' is not a draft length", item.value),
                at: Some(Location::new(&recipe.rel, item.line)),
            },
        },
        None => Fact::unresolved(format!("{} sets no draft length for this role", recipe.rel)),
    };
    let mode = match recipe.fact(ItemKind::Thinking, role) {
        Some(item) => match thinking_word(&item.value) {
            Some(m) => Fact::known(m, How::Literal, item.value.clone(), Some(Location::new(&recipe.rel, item.line))),
            None => Fact {
                value: None,
                how: How::Unresolved,
                text: format!("thinking setting '{}' not understood", item.value),
                at: Some(Location::new(&recipe.rel, item.line)),
            },
        },
        None => Fact::unresolved("no thinking setting in the recipe"),
    };
    let sampling = match recipe.fact(ItemKind::Sampling, role) {
        Some(item) => Fact::known(
            item.value.to_ascii_lowercase(),
            How::Literal,
            item.value.clone(),
            Some(Location::new(&recipe.rel, item.line)),
        ),
        None => {
            Fact::known("greedy".to_string(), How::Inferred, "no draft_sample_method: engines draft greedily", None)
        }
    };
    Pin {
        location,
        mechanism,
        engine: recipe.engine(knob),
        knob,
        branch,
        written,
        k,
        model: fact(ItemKind::Model, "no model in the recipe"),
        drafter: fact(ItemKind::Drafter, "no draft model in the recipe"),
        method: fact(ItemKind::Method, "no speculative method in the recipe"),
        draft_sampling: sampling,
        mode,
        eval_guard: EvalGuard::NotApplicable,
    }
}

fn master_pins(
    file: &TextFile,
    root: &Node,
    recipes: &BTreeMap<String, Recipe>,
    referenced: &mut BTreeSet<String>,
    pins: &mut Vec<Pin>,
    findings: &mut Vec<Finding>,
) {
    let mut entries: Vec<Vec<String>> = Vec::new();
    collect_setting_lists(root, &mut entries);
    let lines: Vec<&str> = file.text.lines().collect();
    let mut cursor = 0;
    let line_of = |needle: &str, cursor: &mut usize| -> usize {
        match lines.iter().skip(*cursor).position(|l| l.contains(needle)) {
            Some(p) => {
                let index = *cursor + p;
                *cursor = index + 1;
                index + 1
            }
            None => lines.iter().position(|l| l.contains(needle)).map_or(1, |p| p + 1),
        }
    };
    for settings in entries {
        let map: BTreeMap<String, String> = settings
            .iter()
            .filter_map(|s| s.split_once('=').map(|(k, v)| (k.trim().to_string(), v.trim().to_string())))
            .collect();
        let get = |key: &str| map.get(key).map(String::as_str);
        let entry_line = get("CONFIG_FILE")
            .map(|c| format!("CONFIG_FILE={c}"))
            .or_else(|| get("EVAL_CONFIG_FILE").map(|c| format!("EVAL_CONFIG_FILE={c}")))
            .map_or(cursor + 1, |needle| line_of(&needle, &mut cursor));
        let length_line = get("SYNTHETIC_ACCEPTANCE_LENGTH").map(|v| {
            let mut c = cursor;
            line_of(&format!("SYNTHETIC_ACCEPTANCE_LENGTH={v}"), &mut c)
        });
        let enabled = get("SYNTHETIC_ACCEPTANCE").is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
        if let Some(twin) = get("EVAL_CONFIG_FILE") {
            match resolve_recipe(twin, &file.rel, recipes) {
                Some(recipe) => {
                    referenced.insert(recipe.rel.clone());
                    if let Some(pin) = recipe.pins().next() {
                        findings.push(Finding::new(
                            Class::EvalLeak,
                            Location::new(&recipe.rel, pin.line),
                            format!("eval twin (EVAL_CONFIG_FILE at {}:{entry_line}) carries a pin: eval scores would use synthetic acceptance", file.rel),
                        ));
                    }
                }
                None => findings.push(Finding::new(
                    Class::Unresolved,
                    Location::new(&file.rel, entry_line),
                    format!("EVAL_CONFIG_FILE={twin} not found in the repository"),
                )),
            }
        }
        let Some(config) = get("CONFIG_FILE") else { continue };
        let recipe = resolve_recipe(config, &file.rel, recipes);
        if let Some(recipe) = recipe {
            referenced.insert(recipe.rel.clone());
        }
        match (enabled, get("SYNTHETIC_ACCEPTANCE_LENGTH")) {
            (false, Some(value)) => findings.push(Finding::new(
                Class::NeverPassed,
                Location::new(&file.rel, length_line.unwrap_or(entry_line)),
                format!("SYNTHETIC_ACCEPTANCE_LENGTH={value} without SYNTHETIC_ACCEPTANCE=true: the injector never writes it into {config}"),
            )),
            (true, None) => findings.push(Finding::new(
                Class::MissingPin,
                Location::new(&file.rel, entry_line),
                format!("SYNTHETIC_ACCEPTANCE=true but no SYNTHETIC_ACCEPTANCE_LENGTH for {config}"),
            )),
            (true, Some(value)) => {
                let location = Location::new(&file.rel, length_line.unwrap_or(entry_line));
                let written = match value.parse::<f64>() {
                    Ok(v) => Fact::known(v, How::Injected, format!("SYNTHETIC_ACCEPTANCE_LENGTH={value}"), Some(location.clone())),
                    Err(_) => Fact { value: None, how: How::Unresolved, text: format!("'{value}' is not a number"), at: Some(location.clone()) },
                };
                match recipe {
                    Some(recipe) => {
                        for role in recipe.roles_with_k() {
                            let branch = format!("{} {}", recipe.rel, role_label(&role)).trim().to_string();
                            pins.push(build_pin(recipe, &role, location.clone(), Mechanism::MasterConfig, Knob::InjectedLength, written.clone(), branch));
                        }
                    }
                    None => {
                        let missing = Recipe { rel: config.to_string(), items: Vec::new() };
                        let mut pin = build_pin(&missing, &None, location, Mechanism::MasterConfig, Knob::InjectedLength, written, config.to_string());
                        pin.k = Fact::unresolved(format!("recipe {config} not found in the repository"));
                        pins.push(pin);
                    }
                }
            }
            (false, None) => {}
        }
    }
}

/// Lists of `KEY=VALUE` strings that name a config file: one master-config entry each.
fn collect_setting_lists(node: &Node, out: &mut Vec<Vec<String>>) {
    match node {
        Node::Seq(items) => {
            let strings: Vec<String> = items.iter().filter_map(Node::as_scalar_text).collect();
            if strings.len() == items.len() && strings.iter().any(|s| s.contains("CONFIG_FILE=")) {
                out.push(strings);
            } else {
                for item in items {
                    collect_setting_lists(item, out);
                }
            }
        }
        Node::Map(entries) => {
            for (_, value) in entries {
                collect_setting_lists(value, out);
            }
        }
        _ => {}
    }
}

/// A recipe path as written in a master config: from the repository root, beside the master config, or
/// by its trailing path components.
fn resolve_recipe<'a>(path: &str, master: &str, recipes: &'a BTreeMap<String, Recipe>) -> Option<&'a Recipe> {
    let path = path.trim_start_matches("./");
    if let Some(r) = recipes.get(path) {
        return Some(r);
    }
    if let Some((dir, _)) = master.rsplit_once('/')
        && let Some(r) = recipes.get(&format!("{dir}/{path}"))
    {
        return Some(r);
    }
    let mut found = recipes.values().filter(|r| r.rel.ends_with(&format!("/{path}")));
    match (found.next(), found.next()) {
        (Some(r), None) => Some(r),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------------
// Reading a recipe tree

fn read_recipe(rel: &str, text: &str, root: &Node) -> Recipe {
    let index = LineIndex::new(text);
    let mut reader = Reader { index: &index, items: Vec::new(), groups: 0 };
    reader.visit(root, &mut Vec::new(), None, 0);
    Recipe { rel: rel.to_string(), items: reader.items }
}

struct Reader<'a> {
    index: &'a LineIndex,
    items: Vec<Item>,
    groups: usize,
}

fn role_of(key: &str) -> Option<String> {
    let lower = key.to_ascii_lowercase();
    let base = lower.strip_suffix("_environment").or_else(|| lower.strip_suffix("-environment")).unwrap_or(&lower);
    match base {
        "prefill" => Some("prefill".into()),
        "decode" => Some("decode".into()),
        "aggregated" | "agg" => Some("aggregated".into()),
        _ => None,
    }
}

impl Reader<'_> {
    fn push(&mut self, role: &Option<String>, kind: ItemKind, value: &str, path: &[String], group: usize) {
        let value = value.trim().trim_matches(['"', '\'']).to_string();
        if value.is_empty() {
            return;
        }
        let line = self.index.line(path);
        self.items.push(Item { role: role.clone(), kind, value, line, group });
    }

    fn visit(&mut self, node: &Node, path: &mut Vec<String>, role: Option<String>, group: usize) {
        match node {
            Node::Map(entries) => {
                for (key, value) in entries {
                    let key = key.as_scalar_text().unwrap_or_default();
                    let role = role_of(&key).or_else(|| role.clone());
                    path.push(key.clone());
                    let speculative = path.iter().any(|p| p.to_ascii_lowercase().contains("speculative"));
                    let group = if speculative
                        && !path[..path.len() - 1].iter().any(|p| p.to_ascii_lowercase().contains("speculative"))
                    {
                        self.groups += 1;
                        self.groups
                    } else {
                        group
                    };
                    match value.as_scalar_text() {
                        Some(text) => self.scalar(&key, &text, path, &role, speculative, group),
                        None => self.visit(value, path, role, group),
                    }
                    path.pop();
                }
            }
            Node::Seq(items) => {
                let strings: Vec<String> = items.iter().filter_map(Node::as_scalar_text).collect();
                if strings.len() == items.len() && !strings.is_empty() {
                    // `- KEY=VALUE` environment lists, or argument lists.
                    for s in &strings {
                        match s.split_once('=') {
                            Some((k, v)) if !k.starts_with('-') && !k.contains(' ') => {
                                self.scalar(k, v, path, &role, false, group);
                            }
                            _ => {}
                        }
                    }
                    self.args(&strings.join(" "), path, &role, group);
                } else {
                    for item in items {
                        self.visit(item, path, role.clone(), group);
                    }
                }
            }
            _ => {}
        }
    }

    fn scalar(
        &mut self,
        key: &str,
        text: &str,
        path: &[String],
        role: &Option<String>,
        speculative: bool,
        group: usize,
    ) {
        let lower = key.to_ascii_lowercase().replace('-', "_");
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
            "speculative_draft_model_path"
            | "draft_model"
            | "speculative_model"
            | "speculative_model_dir"
            | "speculative_draft_model" => Some(ItemKind::Drafter),
            "model" | "path" if speculative => Some(ItemKind::Drafter),
            "model_path" | "served_model_name" => Some(ItemKind::Model),
            "model" => Some(ItemKind::Model),
            "path" if path.len() >= 2 && path[path.len() - 2] == "model" => Some(ItemKind::Model),
            "speculative_algorithm" | "decoding_type" | "spec_method" => Some(ItemKind::Method),
            "method" if speculative => Some(ItemKind::Method),
            "draft_sample_method" => Some(ItemKind::Sampling),
            "dyn_default_thinking_mode"
            | "sglang_default_thinking"
            | "thinking_mode"
            | "enable_thinking"
            | "thinking" => Some(ItemKind::Thinking),
            "type" | "backend" | "engine" | "framework" if text.parse::<Engine>().is_ok() => Some(ItemKind::Engine),
            _ => None,
        };
        if let Some(kind) = kind {
            self.push(role, kind, text, path, group);
            return;
        }
        if lower == "speculative_config" || lower == "default_chat_template_kwargs" || lower == "chat_template_kwargs" {
            self.groups += 1;
            let group = self.groups;
            for (json_key, kind) in [
                ("synthetic_acceptance_length", ItemKind::Pin(Knob::VllmSyntheticLength)),
                ("num_speculative_tokens", ItemKind::K),
                ("model", ItemKind::Drafter),
                ("method", ItemKind::Method),
                ("draft_sample_method", ItemKind::Sampling),
                ("rejection_sample_method", ItemKind::RejectionMethod),
                ("thinking_mode", ItemKind::Thinking),
                ("enable_thinking", ItemKind::Thinking),
                ("thinking", ItemKind::Thinking),
            ] {
                for value in json_values(text, json_key) {
                    self.push(role, kind, &value, path, group);
                }
            }
            return;
        }
        if text.contains("--") {
            self.args(text, path, role, group);
        }
    }

    /// Engine flags inside an argument string or list.
    fn args(&mut self, text: &str, path: &[String], role: &Option<String>, group: usize) {
        for (flag, kind) in [
            ("--spec-decode-acceptance-length", ItemKind::Pin(Knob::AtomLength)),
            ("--spec-decode-acceptance-rate", ItemKind::Pin(Knob::AtomRate)),
            ("--num-speculative-tokens", ItemKind::K),
            ("--speculative-num-steps", ItemKind::K),
            ("--draft-model", ItemKind::Drafter),
            ("--speculative-draft-model-path", ItemKind::Drafter),
            ("--speculative-algorithm", ItemKind::Method),
            ("--dyn-default-thinking-mode", ItemKind::Thinking),
        ] {
            for value in flag_values(text, flag) {
                self.push(role, kind, &value, path, group);
            }
        }
    }
}

/// Key paths of a block-style YAML text → 1-based lines.
pub(super) struct LineIndex {
    entries: Vec<(Vec<String>, usize)>,
}

impl LineIndex {
    /// Indexes `text`.
    pub(super) fn new(text: &str) -> LineIndex {
        let mut entries = Vec::new();
        let mut stack: Vec<(usize, String)> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let trimmed = raw.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let mut indent = raw.len() - trimmed.len();
            let mut body = trimmed;
            while let Some(rest) = body.strip_prefix("- ") {
                indent += 2;
                body = rest.trim_start();
            }
            let key = match body.find(": ").or_else(|| body.strip_suffix(':').map(|b| b.len())) {
                Some(end) => body[..end].trim().trim_matches(['"', '\'']).to_string(),
                None => match body.split_once('=') {
                    // `- KEY=VALUE` list items.
                    Some((k, _)) if !k.contains(' ') => k.to_string(),
                    _ => continue,
                },
            };
            while stack.last().is_some_and(|(ind, _)| *ind >= indent) {
                stack.pop();
            }
            stack.push((indent, key));
            entries.push((stack.iter().map(|(_, k)| k.clone()).collect(), i + 1));
        }
        LineIndex { entries }
    }

    /// The line of the deepest entry matching the end of `path` (falls back to shorter suffixes).
    pub(super) fn line(&self, path: &[String]) -> usize {
        for take in (1..=path.len()).rev() {
            let suffix = &path[path.len() - take..];
            if let Some((_, line)) = self.entries.iter().find(|(p, _)| p.ends_with(suffix)) {
                return *line;
            }
        }
        1
    }

    /// Lines of every entry whose own key is `key`, in order.
    pub(super) fn lines_of(&self, key: &str) -> Vec<usize> {
        self.entries.iter().filter(|(p, _)| p.last().is_some_and(|k| k == key)).map(|(_, l)| *l).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_get_their_own_k_and_lines() {
        let text = "backend:\n  type: sglang\n  decode_environment:\n    SGLANG_SIMULATE_ACC_LEN: \"2.78\"\n  sglang_config:\n    prefill:\n      speculative-num-steps: 2\n    decode:\n      speculative-num-steps: 3\n";
        let root = yaml::parse(text, "r.yaml").unwrap();
        let recipe = read_recipe("r.yaml", text, &root);
        let mut pins = Vec::new();
        let mut findings = Vec::new();
        recipe_pins(&recipe, &mut pins, &mut findings);
        assert_eq!(pins.len(), 1);
        assert_eq!(pins[0].location.line, 4);
        assert_eq!(pins[0].k.value, Some(3));
        assert_eq!(pins[0].k.at.as_ref().unwrap().line, 9);
        assert_eq!(findings[0].class, Class::Spelling);
    }
}
