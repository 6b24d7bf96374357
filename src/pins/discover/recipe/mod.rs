//! YAML recipes (srt-slurm style): their roles, each role's engine config, and the pins written in them.
//!
//! A recipe is read as PyYAML reads it ([`crate::yaml::parse_like_pyyaml`]: the last of two duplicate
//! keys wins, with a warning; `<<:` merges applied). Pins sit in environment blocks
//! (`prefill_environment:`, `decode_environment:`, `aggregated_environment:`), in `speculative-config`
//! JSON strings, or in argument strings; k, drafter, method and draft sampling sit in each role's engine
//! config (`vllm_config.decode`, `sglang_config.prefill`, `trtllm_config.aggregated`), so each role is
//! checked against its own k, and a role without speculative decoding makes its pin inert.
//!
//! Thinking mode is per deployment ([`RoleFacts::mode`]): a request-side setting
//! (`AIPERF_EXTRA_INPUTS: thinking:true`) first, then the role's own worker setting, then another
//! role's. The model is the served name (`served-model-name`, `identity.model.repo`, `model.path` with
//! `hf:` removed), never a container mount such as `model-path: /model/`.
//!
//! A value's line is the line of the key it is written under, as the tree records it (a value merged or
//! aliased from an anchor has the anchor's line, where its text is).

use std::collections::BTreeSet;

use crate::curve::ThinkingMode;
use crate::engine::Engine;
use crate::pins::observed::Observed;
use crate::pins::thinking::IGNORED;
use crate::pins::{
    Edit, EvalRoute, Fact, How, Knob, Location, Mechanism, Pin, Role, SGLANG_METHOD, SGLANG_TOKEN_MODE, rates,
    thinking_word,
};
use crate::yaml::{Duplicate, Node};

mod frontend;
mod reader;

/// Where the srt-slurm recipe a `CONFIG_FILE=recipes/<x>` names is kept in the repository.
pub(crate) const RECIPES_DIR: &str = "benchmarks/multi_node/srt-slurm-recipes/";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ItemKind {
    Pin(Knob),
    K,
    DsparkBlock,
    DraftTokens,
    Algorithm,
    Model,
    /// `model.path`: an alias unless it names a Hugging Face repository (`hf:org/name`).
    ModelAlias,
    Drafter,
    Method,
    Sampling,
    /// A worker's thinking setting.
    Thinking,
    /// A request-side thinking setting (the benchmark's `AIPERF_EXTRA_INPUTS`).
    RequestThinking,
    /// How hard a thinking model reasons (`SGLANG_DSV4_REASONING_EFFORT`, a chat template's
    /// `reasoning_effort`).
    Effort,
    Ignored,
    SglangMethod,
    SglangTokenMode,
    RejectionMethod,
    Engine,
}

#[derive(Debug, Clone)]
struct Item {
    role: Option<Role>,
    kind: ItemKind,
    value: String,
    line: usize,
    /// The speculative-config string or block the item came from, to pair a vLLM pin with its method.
    group: usize,
    span: Option<(usize, usize)>,
    key: String,
    /// The top-level key it is written under, and that key's line.
    top: Option<(String, usize)>,
}

/// The facts of one role, each with how it was read.
#[derive(Debug, Clone)]
pub(crate) struct RoleFacts {
    /// Whether the role runs speculative decoding.
    pub spec: bool,
    /// Draft length.
    pub k: Fact<usize>,
    /// Served model.
    pub model: Fact<String>,
    /// Draft model.
    pub drafter: Fact<String>,
    /// Speculative method.
    pub method: Fact<String>,
    /// Draft sampling.
    pub sampling: Fact<String>,
    /// Thinking mode the deployment serves.
    pub mode: Fact<ThinkingMode>,
    /// Reasoning effort the deployment asks of a thinking model.
    pub effort: Fact<String>,
    /// Engine.
    pub engine: Fact<Engine>,
}

/// A parsed recipe.
#[derive(Debug, Clone)]
pub(crate) struct Recipe {
    /// Path relative to the repository root.
    pub rel: String,
    items: Vec<Item>,
    /// Keys written twice (line, key path): the last value is the one used.
    pub duplicates: Vec<(usize, String)>,
    /// Roles whose environment block the SGLang injector writes into (`^  <role>_environment:$`).
    pub sglang_env_blocks: Vec<Role>,
    /// How many `speculative-config: '…'` strings the vLLM injector rewrites.
    pub vllm_spec_configs: usize,
    /// Who renders its chat prompts, as its `frontend:` section states ([`frontend::renderer`]).
    pub renderer: Option<Fact<crate::pins::thinking::Renderer>>,
}

impl Recipe {
    /// Reads a recipe from its text and PyYAML tree.
    pub(crate) fn read(rel: &str, text: &str, root: &Node, duplicates: &[Duplicate]) -> Recipe {
        let dup_lines = duplicates
            .iter()
            .map(|d| {
                let mut path = d.path.clone();
                path.push(d.key.clone());
                (d.line, path.join("."))
            })
            .collect();
        let mut sglang_env_blocks = Vec::new();
        let mut vllm_spec_configs = 0;
        // Built once: `str::find` sets up its searcher again on every line.
        let spec_config = memchr::memmem::Finder::new("speculative-config:");
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("  ")
                && !rest.starts_with(' ')
                && let Some(name) = rest.trim_end().strip_suffix("_environment:")
                && let Some(role) = Role::of_key(name)
            {
                sglang_env_blocks.push(role);
            }
            if let Some(at) = spec_config.find(line.as_bytes()) {
                let rest = line[at + "speculative-config:".len()..].trim_start();
                if rest.starts_with('\'') && rest[1..].contains('\'') {
                    vllm_spec_configs += 1;
                }
            }
        }
        Recipe {
            rel: rel.to_string(),
            items: reader::items(text, root),
            duplicates: dup_lines,
            sglang_env_blocks,
            vllm_spec_configs,
            renderer: frontend::renderer(rel, root),
        }
    }

    fn own(&self, kind: ItemKind, role: Option<Role>) -> Option<&Item> {
        self.items.iter().find(|i| i.kind == kind && i.role == role)
    }

    /// The item of `kind` for `role`: the role's own, else a shared one.
    fn fact_item(&self, kind: ItemKind, role: Option<Role>) -> Option<&Item> {
        self.own(kind, role).or_else(|| self.own(kind, None))
    }

    /// The roles the recipe configures (environment blocks or engine configs), in a fixed order.
    pub(crate) fn roles(&self) -> Vec<Role> {
        let set: BTreeSet<Role> = self.items.iter().filter_map(|i| i.role).collect();
        set.into_iter().collect()
    }

    /// Whether any role runs speculative decoding.
    pub(crate) fn speculative(&self) -> bool {
        self.items.iter().any(|i| matches!(i.kind, ItemKind::K | ItemKind::DsparkBlock | ItemKind::DraftTokens))
    }

    /// Whether the recipe writes any pin knob.
    pub(crate) fn has_pins(&self) -> bool {
        self.items.iter().any(|i| matches!(i.kind, ItemKind::Pin(_)))
    }

    /// The first line that configures speculative decoding.
    pub(crate) fn spec_line(&self) -> Option<usize> {
        self.items
            .iter()
            .filter(|i| matches!(i.kind, ItemKind::K | ItemKind::Method | ItemKind::Algorithm))
            .map(|i| i.line)
            .min()
    }

    /// Whether this is a data file launch code reads (per-model flags and settings), not a recipe: it lies
    /// outside the recipes folder and names no backend type.
    pub(crate) fn is_data(&self) -> bool {
        !self.rel.starts_with(RECIPES_DIR) && !self.items.iter().any(|i| i.kind == ItemKind::Engine)
    }

    /// A data file is keyed by model (`Tau-MoE: {mtp_flags: …, sim_env: …}`): a pin's model, where the file
    /// names none, is its top-level key, and its k is the one written under the same key.
    fn keyed_facts(&self, item: &Item, pin: &mut Pin) {
        let Some((top, top_line)) = &item.top else { return };
        if pin.model.value.is_none() {
            let at = Some(Location::new(&self.rel, *top_line));
            pin.model = Fact::known(top.clone(), How::Inferred, format!("the data file's key {top}"), at);
        }
        pin.k = match self.items.iter().find(|i| i.kind == ItemKind::K && i.top == item.top) {
            Some(i) => match i.value.trim().parse::<usize>() {
                Ok(k) => Fact::known(k, How::Literal, format!("{}: {}", i.key, i.value), self.located(i)),
                Err(_) => Fact::unresolved(format!("k = '{}' is not a draft length", i.value)),
            },
            None => Fact::unresolved(format!("no draft length under {top}")),
        };
    }

    fn located(&self, item: &Item) -> Option<Location> {
        Some(Location::new(&self.rel, item.line))
    }

    fn string_fact(&self, kind: ItemKind, role: Option<Role>, missing: &str) -> Fact<String> {
        match self.fact_item(kind, role) {
            Some(i) => Fact::known(i.value.clone(), How::Literal, format!("{}: {}", i.key, i.value), self.located(i)),
            None => Fact::unresolved(missing.to_string()),
        }
    }

    /// Every fact of `role` (`None`: a recipe without roles).
    pub(crate) fn facts(&self, role: Option<Role>) -> RoleFacts {
        let dspark = self.fact_item(ItemKind::Algorithm, role).is_some_and(|i| i.value.eq_ignore_ascii_case("dspark"));
        let k_item = if dspark {
            self.fact_item(ItemKind::DsparkBlock, role).or_else(|| self.fact_item(ItemKind::DraftTokens, role))
        } else {
            self.fact_item(ItemKind::K, role)
        };
        let k = match k_item {
            Some(i) => match i.value.trim().parse::<usize>() {
                Ok(k) => Fact::known(k, How::Literal, format!("{}: {}", i.key, i.value), self.located(i)),
                Err(_) => Fact {
                    value: None,
                    how: How::Unresolved,
                    text: format!("k = '{}' is not a draft length", i.value),
                    at: self.located(i),
                },
            },
            None => Fact {
                value: None,
                how: How::Inferred,
                text: format!("the {} role runs no speculative decoding", role.map_or("recipe's", Role::name)),
                at: None,
            },
        };
        let spec = k_item.is_some();
        let model = {
            let found = self
                .fact_item(ItemKind::Model, role)
                .or_else(|| self.items.iter().find(|i| i.kind == ItemKind::Model))
                .or_else(|| self.items.iter().find(|i| i.kind == ItemKind::ModelAlias));
            match found {
                Some(i) => {
                    Fact::known(i.value.clone(), How::Literal, format!("{}: {}", i.key, i.value), self.located(i))
                }
                None => Fact::unresolved("no served model name in the recipe"),
            }
        };
        let mode = self.mode(role);
        let sampling = match self.fact_item(ItemKind::Sampling, role) {
            Some(i) => Fact::known(
                i.value.to_ascii_lowercase(),
                How::Literal,
                format!("{}: {}", i.key, i.value),
                self.located(i),
            ),
            None => {
                Fact::known("greedy".to_string(), How::Inferred, "no draft_sample_method: engines draft greedily", None)
            }
        };
        let engine = match self
            .items
            .iter()
            .find(|i| i.kind == ItemKind::Engine)
            .and_then(|i| i.value.parse::<Engine>().ok().map(|e| (e, i)))
        {
            Some((e, i)) => Fact::known(e, How::Literal, format!("backend type {}", i.value), self.located(i)),
            None => match self.items.iter().find_map(|i| if let ItemKind::Pin(k) = i.kind { k.engine() } else { None })
            {
                Some(e) => Fact::known(e, How::Inferred, "from the recipe's own knobs", None),
                None => Fact::unresolved("recipe names no backend type"),
            },
        };
        RoleFacts {
            spec,
            k,
            model,
            drafter: self.string_fact(ItemKind::Drafter, role, "no draft model in the recipe"),
            method: self.string_fact(ItemKind::Method, role, "no speculative method in the recipe"),
            sampling,
            mode,
            effort: self.string_fact(ItemKind::Effort, role, "no reasoning effort in the recipe"),
            engine,
        }
    }

    /// Thinking per deployment: the request's setting, the role's worker setting, another role's.
    fn mode(&self, role: Option<Role>) -> Fact<ThinkingMode> {
        let candidates = self
            .items
            .iter()
            .filter(|i| i.kind == ItemKind::RequestThinking)
            .chain(self.items.iter().filter(|i| i.kind == ItemKind::Thinking && i.role == role))
            .chain(self.items.iter().filter(|i| i.kind == ItemKind::Thinking && i.role.is_none()))
            .chain(self.items.iter().filter(|i| i.kind == ItemKind::Thinking && i.role.is_some() && i.role != role));
        for item in candidates {
            let mode = if item.key.contains("chat-template") && !item.key.contains("kwargs") {
                template_mode(&item.value)
            } else {
                thinking_word(&item.value)
            };
            if let Some(mode) = mode {
                let whose = match (item.kind, item.role) {
                    (ItemKind::RequestThinking, _) => "request".to_string(),
                    (_, Some(r)) if Some(r) != role => format!("{r} worker, same deployment"),
                    (_, Some(r)) => format!("{r} worker"),
                    (_, None) => "deployment".to_string(),
                };
                return Fact::known(
                    mode,
                    How::Literal,
                    format!("{}: {} ({whose})", item.key, item.value),
                    self.located(item),
                );
            }
        }
        let ignored: Vec<&str> =
            self.items.iter().filter(|i| i.kind == ItemKind::Ignored).map(|i| i.key.as_str()).collect();
        if ignored.is_empty() {
            Fact::unresolved("no thinking setting in the recipe")
        } else {
            Fact::unresolved(format!("no thinking setting the engine reads ({} is ignored)", ignored[0]))
        }
    }

    /// Settings an engine ignores.
    pub(crate) fn ignored_settings(&self) -> Vec<Observed> {
        let mut seen = BTreeSet::new();
        self.items
            .iter()
            .filter(|i| i.kind == ItemKind::Ignored && seen.insert(i.key.clone()))
            .map(|i| {
                let why = IGNORED.iter().find(|(k, _)| *k == i.key).map_or("", |(_, why)| why);
                Observed::IgnoredSetting {
                    at: Location::new(&self.rel, i.line),
                    key: i.key.clone(),
                    why: why.to_string(),
                }
            })
            .collect()
    }

    /// A pin of this recipe for `role` (hard-coded, or injected when `mechanism` says so).
    pub(crate) fn pin(
        &self,
        role: Option<Role>,
        location: Location,
        mechanism: Mechanism,
        knob: Knob,
        written: Fact<f64>,
        branch: String,
    ) -> Pin {
        let facts = self.facts(role);
        let mut engine = facts.engine.clone();
        if let Some(e) = knob.engine() {
            engine = Fact::known(e, How::Literal, knob.name(), Some(location.clone()));
        }
        let eval = if facts.spec {
            Fact::known(EvalRoute::Leaks, How::Inferred, "nothing on the runner's path drops it", None)
        } else {
            Fact::known(EvalRoute::Inert, How::Inferred, facts.k.text.clone(), None)
        };
        Pin {
            location,
            mechanism,
            engine,
            knob,
            branch,
            role,
            written,
            rates: None,
            k: facts.k,
            model: facts.model,
            drafter: facts.drafter,
            method: facts.method,
            draft_sampling: facts.sampling,
            mode: facts.mode,
            effort: facts.effort,
            eval,
            entries: Vec::new(),
            edit: None,
            notes: Vec::new(),
            arms: Vec::new(),
        }
    }

    /// Every hard-coded pin, one per role it applies to, and what was recorded about them (settings
    /// ignored, keys written twice, spellings incomplete, roles without speculative decoding).
    pub(crate) fn pins(&self) -> (Vec<Pin>, Vec<Observed>) {
        let mut pins = Vec::new();
        let mut observed = self.ignored_settings();
        for (line, key) in &self.duplicates {
            observed.push(Observed::DuplicateKey { at: Location::new(&self.rel, *line), key: key.clone() });
        }
        for item in self.items.iter().filter(|i| matches!(i.kind, ItemKind::Pin(_))) {
            let ItemKind::Pin(knob) = item.kind else { continue };
            let location = Location::new(&self.rel, item.line);
            let roles: Vec<Option<Role>> = match item.role {
                Some(r) => vec![Some(r)],
                None => {
                    let with_k: Vec<Option<Role>> =
                        self.roles().into_iter().filter(|r| self.facts(Some(*r)).spec).map(Some).collect();
                    if with_k.is_empty() { vec![None] } else { with_k }
                }
            };
            for role in roles {
                let facts = self.facts(role);
                observed.extend(self.spelling(item, knob, role, &location));
                let read = rates::read_written(knob, &item.value);
                let written = match &read {
                    Some((v, _)) => Fact::known(*v, How::Literal, item.value.clone(), Some(location.clone())),
                    None => Fact {
                        value: None,
                        how: How::Unresolved,
                        text: format!(
                            "'{}' is not {}",
                            item.value,
                            if knob.is_rates() { "a list of numbers" } else { "a number" }
                        ),
                        at: Some(location.clone()),
                    },
                };
                let label = role.map(|r| format!("role {r}")).unwrap_or_default();
                let mut pin = self.pin(role, location.clone(), Mechanism::Recipe, knob, written, label);
                if self.is_data() {
                    self.keyed_facts(item, &mut pin);
                }
                pin.rates = read.and_then(|r| r.1);
                pin.edit = item.span.map(|span| Edit { file: self.rel.clone(), span });
                if !facts.spec {
                    let role = role.map_or("recipe's", Role::name);
                    observed.push(Observed::RoleWithoutSpeculation {
                        at: location.clone(),
                        knob,
                        role: role.to_string(),
                        why: facts.k.text.clone(),
                    });
                }
                pins.push(pin);
            }
        }
        (pins, observed)
    }

    /// SGLang triple incomplete in the role; vLLM length without the synthetic rejection method.
    fn spelling(&self, item: &Item, knob: Knob, role: Option<Role>, at: &Location) -> Option<Observed> {
        match knob {
            Knob::SglangSimulateLen => {
                let role = item.role.or(role);
                let missing: Vec<String> =
                    [(ItemKind::SglangMethod, SGLANG_METHOD), (ItemKind::SglangTokenMode, SGLANG_TOKEN_MODE)]
                        .into_iter()
                        .filter(|(kind, _)| self.fact_item(*kind, role).is_none())
                        .map(|(_, name)| name.to_string())
                        .collect();
                let environment = Some(role.map_or("shared", Role::name).to_string());
                (!missing.is_empty()).then(|| Observed::SglangCompanionsMissing {
                    at: at.clone(),
                    missing,
                    environment,
                })
            }
            Knob::VllmSyntheticLength | Knob::VllmSyntheticRates => {
                let synthetic = self
                    .items
                    .iter()
                    .any(|i| i.kind == ItemKind::RejectionMethod && i.group == item.group && i.value == "synthetic");
                (!synthetic).then(|| Observed::NotSynthetic { at: at.clone(), knob })
            }
            _ => None,
        }
    }
}

/// A chat template file name that says its mode (`deepseek_v4_thinking.jinja`).
pub(crate) fn template_mode(name: &str) -> Option<ThinkingMode> {
    let base = name.rsplit('/').next().unwrap_or(name).to_ascii_lowercase();
    if base.contains("no_thinking") || base.contains("nothink") || base.contains("non_thinking") {
        Some(ThinkingMode::Off)
    } else if base.contains("thinking") {
        Some(ThinkingMode::On)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Recipe {
        let (root, dups) = crate::yaml::parse_like_pyyaml(text, "r.yaml").unwrap();
        Recipe::read("r.yaml", text, &root, &dups)
    }

    #[test]
    fn roles_get_their_own_k_lines_and_spans() {
        let text = "backend:\n  type: sglang\n  decode_environment:\n    SGLANG_SIMULATE_ACC_LEN: \"2.78\"\n  sglang_config:\n    prefill:\n      speculative-num-steps: 2\n    decode:\n      speculative-num-steps: 3\n";
        let recipe = read(text);
        let (pins, observed) = recipe.pins();
        assert_eq!(pins.len(), 1);
        assert_eq!((pins[0].location.line, pins[0].k.value, pins[0].role), (Some(4), Some(3), Some(Role::Decode)));
        assert_eq!(pins[0].k.at.as_ref().unwrap().line, Some(9));
        let (s, e) = pins[0].edit.as_ref().unwrap().span;
        assert_eq!(&text[s..e], "2.78");
        let Observed::SglangCompanionsMissing { missing, environment, .. } = &observed[0] else {
            panic!("{observed:?}")
        };
        assert_eq!((missing.len(), environment.as_deref()), (2, Some("decode")));
        assert_eq!(recipe.sglang_env_blocks, [Role::Decode]);
    }

    #[test]
    fn a_merged_pin_has_the_line_of_its_anchor() {
        let text = "x-env: &env\n  SGLANG_SIMULATE_ACC_LEN: \"2.78\"\nbackend:\n  type: sglang\n  decode_environment:\n    <<: *env\n  sglang_config:\n    decode:\n      speculative-num-steps: 3\n";
        let (pins, _) = read(text).pins();
        let decode: Vec<usize> =
            pins.iter().filter(|p| p.role == Some(Role::Decode)).filter_map(|p| p.location.line).collect();
        // The anchor's own pin (no role: it applies to every role) and the merged one, both where written.
        assert_eq!(decode, [2, 2]);
    }

    #[test]
    fn a_pin_in_a_role_without_speculative_decoding_is_inert() {
        let text = "backend:\n  prefill_environment:\n    SGLANG_SIMULATE_ACC_LEN: '3.39'\n    SGLANG_SIMULATE_ACC_METHOD: match-expected\n    SGLANG_SIMULATE_ACC_TOKEN_MODE: real-draft-token\n  sglang_config:\n    prefill:\n      served-model-name: a/B\n      model-path: /model/\n";
        let recipe = read(text);
        let (pins, observed) = recipe.pins();
        assert!(pins[0].inert());
        assert_eq!(pins[0].model.value.as_deref(), Some("a/B"));
        let [Observed::RoleWithoutSpeculation { role, .. }] = observed.as_slice() else { panic!("{observed:?}") };
        assert_eq!(role, "prefill");
    }

    #[test]
    fn thinking_is_per_deployment_and_request_side_wins() {
        let text = "backend:\n  vllm_config:\n    prefill:\n      speculative-config: '{\"method\":\"eagle3\",\"num_speculative_tokens\":3}'\n    decode:\n      dyn-default-thinking-mode: disabled\n      speculative-config: '{\"method\":\"eagle3\",\"num_speculative_tokens\":3}'\nbenchmark:\n  env:\n    AIPERF_EXTRA_INPUTS: \"thinking:true\"\n";
        let recipe = read(text);
        assert_eq!(recipe.facts(Some(Role::Prefill)).mode.value, Some(ThinkingMode::On));
        let text = text.replace("    AIPERF_EXTRA_INPUTS: \"thinking:true\"\n", "    X: y\n");
        let recipe = read(&text);
        let prefill = recipe.facts(Some(Role::Prefill)).mode;
        assert_eq!(prefill.value, Some(ThinkingMode::Off));
        assert!(prefill.text.contains("decode worker, same deployment"), "{}", prefill.text);
        assert_eq!(recipe.vllm_spec_configs, 2);
    }
}
