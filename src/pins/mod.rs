//! Pins in a benchmark repository: finding every pinned synthetic acceptance value the way the runners
//! reach it, and proving each is the golden value for what it runs (docs/pins.md; spellings from docs/engines.md
//! and [`crate::units`]).
//!
//! The check runs in stages, each a module, in the order its data passes through them (`tests/layers.rs`
//! holds the order):
//! - the walk ([`walk`]): which files are read; a candidate that cannot be read or decoded is recorded,
//!   never silently skipped. Nothing read is ever executed;
//! - discover (`discover`): the launch graph — config entries of the master configs, the launchers they
//!   run on and their naming conventions, the launch scripts and recipes they reach, injected pins, roles
//!   and the routes eval runs take — and every pin site in bash (read with `crate::bash`) and in YAML
//!   recipes, one pin per branch and role, with every fact that decides its golden value and how it was
//!   decided ([`How`]). What else it sees it records as plain records (`observed`), never as findings;
//! - resolve (`resolve`): each pin's golden query (model key, drafter, draft sampling, thinking mode and
//!   its defaults, `thinking`) looked up in the golden curves;
//! - judge (`rules`, run by [`check`]: by the scan over the inventory, then for each pin's value, the golden
//!   curves' own problems, `curves`, and the allow-list, [`allow`]): the classes of docs/pins.md
//!   ([`Class`]), one rule file each, with tolerances ([`AL_TOLERANCE`], [`RATE_TOLERANCE`]) and
//!   severities; rate lists (`rates`) compared position by position with the golden curve's own chain;
//! - what the check's report feeds: pull-request mode ([`diff`]), each finding new, fixed or unchanged
//!   under a line-insensitive key; repair ([`fix`]), a unified diff that sets each wrong literal to its
//!   golden value, and its transactional write; generation (`native`), the engine-native setting for a
//!   golden value.
//!
//! Facts that cannot be resolved are reported as [`How::Unresolved`] with the missing fact named, never
//! guessed; a fact taken from a documented default (a thinking mode) is [`How::Default`] and decides like a
//! literal; one only assumed (greedy drafting, llama.cpp's draft length) is [`How::Inferred`] and its verdict
//! is a warning.

pub mod allow;
pub(crate) mod check;
mod class;
pub(crate) mod curves;
pub mod diff;
pub(crate) mod discover;
pub mod fix;
pub(crate) mod native;
pub(crate) mod observed;
pub(crate) mod rates;
mod resolve;
mod rules;
pub(crate) mod thinking;
mod verdict;
pub mod walk;

use std::fmt;

use serde::Serialize;

pub use allow::{AllowEntry, AllowList, UnreadAllow};
pub use check::{CheckOptions, CheckReport, CheckSummary, CheckedPin, check, check_inventory, scan};
pub use class::Class;
pub use curves::{GoldenSet, golden_curves};
pub use fix::{FixPlan, plan_fixes};
pub use native::{NativeSetting, native_setting};
pub use resolve::key::model_key;
pub(crate) use resolve::lookup::golden_curve;
pub(crate) use resolve::served;
pub use verdict::{GoldenRef, ValueVerdict};

pub use crate::bash::How;
use crate::curve::ThinkingMode;
pub use crate::diagnostic::{FindingClass, Location, Severity, Status, Tally};
use crate::engine::Engine;
pub use crate::units::plain_number;

/// Tolerance on an acceptance length: golden values are written with two decimals
/// (docs/pins.md#how-the-check-follows-a-pin).
pub const AL_TOLERANCE: f64 = 0.005;
/// Tolerance on a draft rate (AL − 1)/k: computed rates carry the rounding of `awk`'s `%.6g` and of
/// hand-written decimals (docs/engines.md#atom).
pub const RATE_TOLERANCE: f64 = 1e-3;

/// One fact about a pin: its value when known, how it was decided, the text it came from and where.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fact<T> {
    /// The value, `None` when unresolved.
    pub value: Option<T>,
    /// How it was decided.
    pub how: How,
    /// The text it was read from (`${NUM_SPEC_TOKENS:-3}`), or why it is unresolved.
    pub text: String,
    /// Where the deciding text is.
    pub at: Option<Location>,
}

impl<T> Fact<T> {
    /// A fact that could not be decided, with the reason.
    pub fn unresolved(reason: impl Into<String>) -> Fact<T> {
        Fact { value: None, how: How::Unresolved, text: reason.into(), at: None }
    }

    /// A decided fact.
    pub fn known(value: T, how: How, text: impl Into<String>, at: Option<Location>) -> Fact<T> {
        Fact { value: Some(value), how, text: text.into(), at }
    }
}

impl<T: fmt::Display> Fact<T> {
    /// `value [how]`, or `? [unresolved]`.
    pub fn describe(&self) -> String {
        match &self.value {
            Some(v) => format!("{v} [{}]", self.how.name()),
            None => format!("? [{}]", self.how.name()),
        }
    }
}

/// Where a pin was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mechanism {
    /// A bash launch script.
    Script,
    /// A shared launch-code lookup table (the value's location is the table entry).
    LookupTable,
    /// A YAML recipe's environment block or speculative-config string.
    Recipe,
    /// A master config entry that injects the value into a recipe.
    MasterConfig,
}

impl Mechanism {
    /// The word shown in tables.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Script => "script",
            Mechanism::LookupTable => "lookup table",
            Mechanism::Recipe => "recipe",
            Mechanism::MasterConfig => "master config",
        }
    }
}

/// A worker role of a (disaggregated) deployment; each has its own engine config and k.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Prefill workers.
    Prefill,
    /// Decode workers.
    Decode,
    /// Aggregated (prefill and decode on one worker).
    Aggregated,
}

impl Role {
    /// The word used in recipes.
    pub fn name(self) -> &'static str {
        match self {
            Role::Prefill => "prefill",
            Role::Decode => "decode",
            Role::Aggregated => "aggregated",
        }
    }

    /// `prefill_environment`, `decode`, `agg` → the role.
    pub fn of_key(key: &str) -> Option<Role> {
        let lower = key.to_ascii_lowercase();
        let base = lower.strip_suffix("_environment").or_else(|| lower.strip_suffix("-environment")).unwrap_or(&lower);
        match base {
            "prefill" => Some(Role::Prefill),
            "decode" => Some(Role::Decode),
            "aggregated" | "agg" => Some(Role::Aggregated),
            _ => None,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The knob a pin is written with (docs/engines.md#summary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Knob {
    /// vLLM `"synthetic_acceptance_length": AL` in `--speculative-config`.
    VllmSyntheticLength,
    /// SGLang `SGLANG_SIMULATE_ACC_LEN=AL` (with its method and token-mode companions).
    SglangSimulateLen,
    /// TensorRT-LLM `TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=AL−1`.
    TrtllmForceAccepted,
    /// ATOM `--spec-decode-acceptance-length AL`.
    AtomLength,
    /// ATOM `--spec-decode-acceptance-rate (AL−1)/k`.
    AtomRate,
    /// A master config's `SYNTHETIC_ACCEPTANCE_LENGTH=AL`, written into the recipe by the injector.
    InjectedLength,
    /// vLLM `"synthetic_acceptance_rates": [p_1, …, p_k]` in `--speculative-config`: the implied AL is 1 + Σ p_i.
    VllmSyntheticRates,
    /// llama.cpp `--spec-synth-len AL` (env `LLAMA_ARG_SPEC_SYNTH_LEN`).
    LlamacppLength,
    /// llama.cpp `--spec-synth-rates p_1,…,p_k` (env `LLAMA_ARG_SPEC_SYNTH_RATES`).
    LlamacppRates,
}

impl Knob {
    /// Every knob.
    pub const ALL: [Knob; 9] = [
        Knob::VllmSyntheticLength,
        Knob::SglangSimulateLen,
        Knob::TrtllmForceAccepted,
        Knob::AtomLength,
        Knob::AtomRate,
        Knob::InjectedLength,
        Knob::VllmSyntheticRates,
        Knob::LlamacppLength,
        Knob::LlamacppRates,
    ];

    /// The knob as it appears in files.
    pub fn name(self) -> &'static str {
        match self {
            Knob::VllmSyntheticLength => "synthetic_acceptance_length",
            Knob::SglangSimulateLen => "SGLANG_SIMULATE_ACC_LEN",
            Knob::TrtllmForceAccepted => "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS",
            Knob::AtomLength => "--spec-decode-acceptance-length",
            Knob::AtomRate => "--spec-decode-acceptance-rate",
            Knob::InjectedLength => "SYNTHETIC_ACCEPTANCE_LENGTH",
            Knob::VllmSyntheticRates => "synthetic_acceptance_rates",
            Knob::LlamacppLength => "--spec-synth-len",
            Knob::LlamacppRates => "--spec-synth-rates",
        }
    }

    /// The knob of an environment variable name.
    pub fn of_env(name: &str) -> Option<Knob> {
        match name {
            "SGLANG_SIMULATE_ACC_LEN" => Some(Knob::SglangSimulateLen),
            "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS" => Some(Knob::TrtllmForceAccepted),
            "LLAMA_ARG_SPEC_SYNTH_LEN" => Some(Knob::LlamacppLength),
            "LLAMA_ARG_SPEC_SYNTH_RATES" => Some(Knob::LlamacppRates),
            _ => None,
        }
    }

    /// The engine that reads the knob, when the knob alone says so.
    pub fn engine(self) -> Option<Engine> {
        match self {
            Knob::VllmSyntheticLength => Some(Engine::Vllm),
            Knob::SglangSimulateLen => Some(Engine::Sglang),
            Knob::TrtllmForceAccepted => Some(Engine::Trtllm),
            Knob::AtomLength | Knob::AtomRate => Some(Engine::Atom),
            Knob::VllmSyntheticRates => Some(Engine::Vllm),
            Knob::LlamacppLength | Knob::LlamacppRates => Some(Engine::Llamacpp),
            Knob::InjectedLength => None,
        }
    }

    /// Whether the knob takes a per-position rates list (its written value is then the list's implied AL).
    pub fn is_rates(self) -> bool {
        matches!(self, Knob::VllmSyntheticRates | Knob::LlamacppRates)
    }

    /// Converts a written value to the acceptance length it implies; `None` when k is needed and unknown.
    pub fn implied_al(self, written: f64, k: Option<usize>) -> Option<f64> {
        match self {
            Knob::TrtllmForceAccepted => Some(written + 1.0),
            Knob::AtomRate => k.map(|k| 1.0 + written * k as f64),
            _ => Some(written),
        }
    }

    /// The written value that pins acceptance length `al` at draft length `k`.
    pub fn written_for(self, al: f64, k: usize) -> f64 {
        match self {
            Knob::TrtllmForceAccepted => al - 1.0,
            Knob::AtomRate => (al - 1.0) / k as f64,
            _ => al,
        }
    }
}

/// The SGLang triple's companions, which the written `SGLANG_SIMULATE_ACC_LEN` needs.
pub(crate) const SGLANG_COMPANIONS: [&str; 2] = [SGLANG_METHOD, SGLANG_TOKEN_MODE];
/// The companion that says how simulated acceptance is drawn.
pub(crate) const SGLANG_METHOD: &str = "SGLANG_SIMULATE_ACC_METHOD";
/// The companion that says which draft tokens count.
pub(crate) const SGLANG_TOKEN_MODE: &str = "SGLANG_SIMULATE_ACC_TOKEN_MODE";

/// What keeps a pin out of `EVAL_ONLY` runs, if anything (docs/pins.md#how-the-check-follows-a-pin, item 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EvalRoute {
    /// The script sets the pin only when `EVAL_ONLY` is not true (or drops it when it is).
    Guarded,
    /// Eval runs use the `EVAL_CONFIG_FILE` twin, which carries no pin.
    Twin,
    /// The launcher deletes the knob from the recipe for eval runs.
    LauncherStrip,
    /// The injector returns early when `EVAL_ONLY=true`.
    Injector,
    /// Nothing drops it: eval runs would use synthetic acceptance.
    Leaks,
    /// The pin does nothing (a role without speculative decoding), so eval runs are unaffected.
    Inert,
}

impl EvalRoute {
    /// The word shown in tables.
    pub fn name(self) -> &'static str {
        match self {
            EvalRoute::Guarded => "EVAL_ONLY guard",
            EvalRoute::Twin => "eval twin",
            EvalRoute::LauncherStrip => "launcher strip",
            EvalRoute::Injector => "injector",
            EvalRoute::Leaks => "leaks",
            EvalRoute::Inert => "inert",
        }
    }
}

impl fmt::Display for EvalRoute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A config entry that runs a pin (through a launch script, a recipe or an injection).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct EntryRef {
    /// The entry's name (its top-level key).
    pub name: String,
    /// Where its settings are written.
    pub at: Location,
}

/// Where `pins fix` would write a pin's value: the literal's byte range in its file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Edit {
    /// The file, relative to the repository root.
    pub file: String,
    /// Byte range of the literal.
    pub span: (usize, usize),
}

/// One pin: one site and one branch and role of it, with every fact that decides its golden value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pin {
    /// Where the engine knob is written (for injected pins: the master config line).
    pub location: Location,
    /// How the pin reaches the engine.
    pub mechanism: Mechanism,
    /// The engine that reads it.
    pub engine: Fact<Engine>,
    /// The knob.
    pub knob: Knob,
    /// The branch (`NUM_SPEC_TOKENS=3`, `CONC=4|8`) or recipe it applies to; empty when none.
    pub branch: String,
    /// The worker role, for recipes.
    pub role: Option<Role>,
    /// The value as written, in the knob's spelling.
    pub written: Fact<f64>,
    /// Draft length k of this role (`None` with how `inferred`: the role runs no speculative decoding).
    pub k: Fact<usize>,
    /// Served model.
    pub model: Fact<String>,
    /// Draft model.
    pub drafter: Fact<String>,
    /// Speculative method.
    pub method: Fact<String>,
    /// Draft sampling (`greedy`, `probabilistic`).
    pub draft_sampling: Fact<String>,
    /// Thinking mode served.
    pub mode: Fact<ThinkingMode>,
    /// Reasoning effort asked of a thinking model (`high`, `max`), where the launch code sets one.
    pub effort: Fact<String>,
    /// How eval runs are kept off the pin.
    pub eval: Fact<EvalRoute>,
    /// Config entries that run it.
    pub entries: Vec<EntryRef>,
    /// The rates list as written, for a rates knob ([`Knob::is_rates`]); `written` then holds its implied AL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rates: Option<Vec<f64>>,
    /// Where a fix would write, when the value is one literal.
    pub edit: Option<Edit>,
    /// Notes on how facts were read (an ignored setting, a duplicate key).
    pub notes: Vec<String>,
    /// The script arms the pin holds in (choice, arm), to match lookup-table arms to config entries.
    #[serde(skip)]
    pub arms: Vec<(u32, u32)>,
}

impl Pin {
    /// Whether the pin does nothing: its role runs no speculative decoding.
    pub fn inert(&self) -> bool {
        self.eval.value == Some(EvalRoute::Inert)
    }
}

/// One problem the pin check found, at a file and line: a class of docs/pins.md (or the check's own).
pub type Finding = crate::diagnostic::Finding<Class>;

/// Every pin in a repository and what discovery recorded beside them, with the findings the rules make of
/// those (spelling, eval leaks, pins never passed, missing pins, drift, unreadable files) — before any
/// golden value is consulted.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Inventory {
    /// The repository scanned.
    pub repo: String,
    /// How many files were read.
    pub files_read: usize,
    /// Config entries found in master configs.
    pub entries: usize,
    /// Those entries with their search-space points, for what reads the benchmark matrix (`alsim sweep`).
    #[serde(skip)]
    pub config_entries: Vec<discover::graph::config::Entry>,
    /// The pins, by file and line.
    pub pins: Vec<Pin>,
    /// The findings its records and pins make, before any golden value is consulted (`rules`).
    pub findings: Vec<Finding>,
    /// What discovery recorded besides the pins, for the rules.
    #[serde(skip)]
    pub(crate) observed: Vec<observed::Observed>,
    /// Shared lookup tables found: (name, location, number of entries).
    pub tables: Vec<(String, Location, usize)>,
    /// The inline allows (`# alsim: allow CLASS -- REASON`) written in the files read.
    #[serde(skip)]
    pub inline_allows: AllowList,
    /// The files read, relative to the root: what an allow entry's `file` pattern is matched against.
    #[serde(skip)]
    pub files: Vec<String>,
    /// The prose lines that name a config entry's image (where the repository dates or versions it).
    #[serde(skip)]
    pub(crate) image_lines: Vec<observed::ImageLine>,
    /// Who renders each recipe's chat prompts, where its `frontend:` section states it, by recipe path.
    #[serde(skip)]
    pub(crate) recipe_renderers: std::collections::BTreeMap<String, Fact<thinking::Renderer>>,
}

impl Inventory {
    /// The pins and findings located in `part` of the repository (as [`CheckReport::within`]).
    pub fn within(mut self, part: Option<&str>) -> Inventory {
        if let Some(part) = part {
            self.pins.retain(|p| walk::lies_in(&p.location.file, part));
            self.findings.retain(|f| walk::lies_in(&f.location.file, part));
        }
        self
    }
}

/// The config entries a benchmark run belongs to, by the facts its artifact states: each fact stated must
/// match the entry (model prefix, precision, framework, the runner's hardware word) and one of its
/// speculative search-space points (scenario, sequence lengths, decode tp and ep, and a concurrency where
/// any point has it: eval runs may run a concurrency the sweep does not); a fact not stated matches
/// anything. Each entry comes with the recipes (`CONFIG_FILE`, as written) its fitting points' throughput
/// runs use: an eval run's `EVAL_CONFIG_FILE` twin carries no pin, its throughput twin does.
pub fn entries_for_run(
    inventory: &Inventory,
    run: &crate::evidence::artifact::RunFacts,
) -> Vec<(EntryRef, Vec<String>)> {
    let same = |fact: &Option<String>, entry: &Option<String>| match (fact, entry) {
        (Some(fact), Some(entry)) => crate::names::fold(fact) == crate::names::fold(entry),
        _ => true,
    };
    // `h200-nb_3` (a machine), `h200` (meta_env.json's hw), `h200-multinode` and `cluster:h200` (labels)
    // share `h200`.
    let hardware = |runner: &str| {
        let label = runner.rsplit(':').next().unwrap_or(runner);
        label.split(['-', '_']).next().unwrap_or(label).to_ascii_lowercase()
    };
    let stated = |fact: Option<u64>, entry: Option<usize>| match (fact, entry) {
        (Some(fact), Some(entry)) => fact == entry as u64,
        _ => true,
    };
    let fits = |point: &discover::graph::config::Point, conc: bool| {
        let shape = &point.shape;
        point.speculative()
            && same(&run.spec_decoding, &point.spec)
            && same(&run.scenario, &Some(point.scenario.clone()))
            && stated(run.isl, shape.isl)
            && stated(run.osl, shape.osl)
            && stated(run.tp, shape.tp)
            && stated(run.ep, shape.ep)
            && (!conc || run.conc.is_empty() || run.conc.iter().any(|c| shape.concurrency.contains(&(*c as usize))))
    };
    let matching = |conc: bool| -> Vec<(EntryRef, Vec<String>)> {
        inventory
            .config_entries
            .iter()
            .filter(|e| {
                same(&run.model_prefix, &e.model_prefix)
                    && same(&run.precision, &e.precision)
                    && same(&run.framework, &e.framework)
                    && run.multinode.is_none_or(|m| m == e.multinode)
                    && match (&run.runner, &e.runner) {
                        (Some(run), Some(entry)) => hardware(run) == hardware(entry),
                        _ => true,
                    }
            })
            .filter_map(|e| {
                let points: Vec<&discover::graph::config::Point> = e.points.iter().filter(|p| fits(p, conc)).collect();
                let mut recipes: Vec<String> =
                    points.iter().filter_map(|p| p.get("CONFIG_FILE").map(|s| s.value.clone())).collect();
                recipes.dedup();
                (!points.is_empty())
                    .then(|| (EntryRef { name: e.name.clone(), at: Location::new(&e.file, e.line) }, recipes))
            })
            .collect()
    };
    let found = matching(true);
    if found.is_empty() { matching(false) } else { found }
}

/// Truthy and falsy spellings of a thinking switch (`enabled`, `true`, `1` / `disabled`, `false`, `0`).
pub(crate) fn thinking_word(text: &str) -> Option<ThinkingMode> {
    match text.trim().trim_matches(|c| c == '"' || c == '\'' || c == '\\').to_ascii_lowercase().as_str() {
        "enabled" | "enable" | "true" | "1" | "on" | "yes" | "thinking_on" => Some(ThinkingMode::On),
        "disabled" | "disable" | "false" | "0" | "off" | "no" | "thinking_off" => Some(ThinkingMode::Off),
        _ => None,
    }
}
