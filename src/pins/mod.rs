//! Pins in a benchmark repository: finding every pinned synthetic acceptance value the way the runners
//! reach it, and proving each is the golden value for what it runs (docs/pins.md; spellings from docs/engines.md
//! and [`crate::units`]).
//!
//! This module owns
//! - the repository walk ([`walk`]): which files are read; a candidate that cannot be read or decoded is
//!   a finding naming the file, never a silent skip. Nothing read is ever executed;
//! - the launch graph (`graph`): config entries of the master configs, the launchers they run on and
//!   their naming conventions, the launch scripts and recipes they reach, injected pins, roles and the
//!   routes eval runs take — each pin's facts come from the path a runner takes, not from one file;
//! - discovery in bash (`shell`, parsed with brush-parser) and in YAML recipes (`recipe`): every pin
//!   site in the engine spellings, one pin per branch and role, with every fact that decides its golden
//!   value and how it was decided ([`How`]); thinking mode per deployment and the table of defaults
//!   (`thinking`);
//! - verification (`verify`): the golden lookup, the classes of error of docs/pins.md ([`Class`]),
//!   tolerances ([`AL_TOLERANCE`], [`RATE_TOLERANCE`]), severities, the allow-list ([`allow`]) and the
//!   golden curves' own problems (`curves`);
//! - rate lists (`rates`): vLLM's `synthetic_acceptance_rates` and llama.cpp's `--spec-synth-rates`, read
//!   as written and compared position by position with the golden curve's own chain;
//! - pull-request mode ([`diff`]): the check of the working tree against a git revision's, each finding
//!   new, fixed or unchanged under a line-insensitive key;
//! - repair ([`fix`]): a unified diff that sets each wrong literal to its golden value, and its transactional write;
//! - generation (`native`): the engine-native setting for a golden value.
//!
//! Facts that cannot be resolved are reported as [`How::Unresolved`] with the missing fact named, never
//! guessed; a fact taken from a documented default (a thinking mode) is [`How::Default`] and decides like a
//! literal; one only assumed (greedy drafting, llama.cpp's draft length) is [`How::Inferred`] and its verdict
//! is a warning.

pub mod allow;
pub(crate) mod curves;
pub mod diff;
pub mod fix;
mod golden;
pub(crate) mod graph;
pub(crate) mod native;
pub(crate) mod rates;
pub(crate) mod recipe;
mod rules;
pub(crate) mod shell;
mod subject;
pub(crate) mod thinking;
pub(crate) mod verify;
pub mod walk;

use std::fmt;
use std::path::Path;

use serde::Serialize;

pub use allow::{AllowEntry, AllowList};
pub use fix::{FixPlan, plan_fixes};
pub use golden::model_key;
pub use native::{NativeSetting, native_setting};
pub use verify::{
    CheckOptions, CheckReport, CheckSummary, CheckedPin, GoldenRef, GoldenSet, ValueVerdict, check, check_inventory,
    golden_curves,
};

use crate::curve::ThinkingMode;
pub use crate::diagnostic::{FindingClass, Location, Severity, Status, Tally};
use crate::engine::Engine;
use crate::error::Result;

/// Tolerance on an acceptance length: golden values are written with two decimals
/// (docs/pins.md#how-the-check-follows-a-pin).
pub const AL_TOLERANCE: f64 = 0.005;
/// Tolerance on a draft rate (AL − 1)/k: computed rates carry the rounding of `awk`'s `%.6g` and of
/// hand-written decimals (docs/engines.md#atom).
pub const RATE_TOLERANCE: f64 = 1e-3;

/// How a fact about a pin was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum How {
    /// Written as a literal where it is used.
    Literal,
    /// Read through a shell variable assigned in the file.
    Variable,
    /// The default of `${VAR:-default}` (the environment can override it), or an engine's or model's
    /// documented default thinking mode where no file states one (`thinking::DEFAULTS`).
    Default,
    /// Fixed by the `if`/`case` arm the pin sits in.
    Branch,
    /// Computed (`$(awk …)`, `$((…))`, `printf %.2f`) from other facts.
    Computed,
    /// Looked up in a shared launch-code table.
    Table,
    /// Injected from a master config entry into the recipe.
    Injected,
    /// Set by the config entry that runs the script (`model:` → `MODEL`, `additional-settings`).
    Entry,
    /// Not written anywhere and only assumed (greedy drafting, llama.cpp's draft length, a script's model
    /// from its name).
    Inferred,
    /// Could not be decided from the files; never guessed.
    Unresolved,
}

impl How {
    /// The word shown in tables.
    pub fn name(self) -> &'static str {
        match self {
            How::Literal => "literal",
            How::Variable => "variable",
            How::Default => "default",
            How::Branch => "branch",
            How::Computed => "computed",
            How::Table => "table",
            How::Injected => "injected",
            How::Entry => "entry",
            How::Inferred => "inferred",
            How::Unresolved => "unresolved",
        }
    }
}

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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

/// The classes of error of docs/pins.md (1–11), plus the check's own findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// 1. The value is the golden AL for another draft length.
    WrongK,
    /// 2. Another drafter's curve, or the greedy curve used with probabilistic drafting (or the reverse).
    WrongDrafter,
    /// 3. The other thinking mode's value, or a reasoning effort the curve was not collected at.
    WrongThinkingMode,
    /// 4. Another model's value.
    WrongModel,
    /// 5. TRT-LLM value not minus one, ATOM rate not (AL−1)/k, SGLang triple incomplete, vLLM length without
    ///    `rejection_sample_method: synthetic`.
    Spelling,
    /// 6. AL outside [1, k+1] for the role's own k.
    OutOfRange,
    /// 7. A value computed but never passed to the engine.
    NeverPassed,
    /// 8. A pin that also applies to `EVAL_ONLY` runs, or an eval twin that carries one.
    EvalLeak,
    /// 9. A spec-decoding config with no pin, or a k with no lookup-table entry.
    MissingPin,
    /// 10. k and AL set independently, or prose naming another value than the code.
    Drift,
    /// 11. Golden curves that cannot be told apart, are out of range, or break monotonicity beyond noise.
    CurveProblem,
    /// A value that matches no golden curve at all.
    Mismatch,
    /// A candidate file that could not be read, decoded or parsed.
    Unreadable,
    /// A fact the check could not decide.
    Unresolved,
    /// A verdict that rests on an assumption no file states and no documentation settles (greedy drafting,
    /// llama.cpp's draft length).
    Assumption,
    /// A YAML key written twice: the last value wins, as PyYAML reads it.
    DuplicateKey,
    /// A pin that does nothing (its role runs no speculative decoding), or a setting the engine ignores.
    Inert,
    /// An allow-list entry that matched nothing.
    StaleAllow,
    /// Under `--base`: an allow entry the change adds, or widens to more files or a whole file.
    AllowChanged,
    /// Under `--base`: a file the base checked that the working tree still has, but its ignore files,
    /// excludes or configuration drop.
    DroppedFile,
}

impl Class {
    /// Every class, in order.
    pub const ALL: [Class; 20] = [
        Class::WrongK,
        Class::WrongDrafter,
        Class::WrongThinkingMode,
        Class::WrongModel,
        Class::Spelling,
        Class::OutOfRange,
        Class::NeverPassed,
        Class::EvalLeak,
        Class::MissingPin,
        Class::Drift,
        Class::CurveProblem,
        Class::Mismatch,
        Class::Unreadable,
        Class::Unresolved,
        Class::Assumption,
        Class::DuplicateKey,
        Class::Inert,
        Class::StaleAllow,
        Class::AllowChanged,
        Class::DroppedFile,
    ];

    /// The kebab-case name used in output and allow-lists.
    pub fn name(self) -> &'static str {
        match self {
            Class::WrongK => "wrong-k",
            Class::WrongDrafter => "wrong-drafter",
            Class::WrongThinkingMode => "wrong-thinking-mode",
            Class::WrongModel => "wrong-model",
            Class::Spelling => "spelling",
            Class::OutOfRange => "out-of-range",
            Class::NeverPassed => "never-passed",
            Class::EvalLeak => "eval-leak",
            Class::MissingPin => "missing-pin",
            Class::Drift => "drift",
            Class::CurveProblem => "curve-problem",
            Class::Mismatch => "mismatch",
            Class::Unreadable => "unreadable",
            Class::Unresolved => "unresolved",
            Class::Assumption => "assumption",
            Class::DuplicateKey => "duplicate-key",
            Class::Inert => "inert",
            Class::StaleAllow => "stale-allow",
            Class::AllowChanged => "allow-changed",
            Class::DroppedFile => "dropped-file",
        }
    }

    /// The number of the class in docs/pins.md, for the eleven it lists.
    pub fn number(self) -> Option<usize> {
        Class::ALL[..11].iter().position(|c| *c == self).map(|i| i + 1)
    }

    /// Whether setting the value to its golden one mends a finding of this class (what `pins fix` may do).
    pub fn value_mends(self) -> bool {
        matches!(
            self,
            Class::WrongK
                | Class::WrongDrafter
                | Class::WrongThinkingMode
                | Class::WrongModel
                | Class::Spelling
                | Class::OutOfRange
                | Class::Mismatch
        )
    }

    /// One line on how to mend a finding of this class, shown under it (`alsim explain CLASS` says more).
    pub fn help(self) -> &'static str {
        match self {
            Class::WrongK => "pin the golden value for the k this role runs; alsim pins fix prints the change",
            Class::WrongDrafter => "pin the value of the curve collected with the drafter and draft sampling that run",
            Class::WrongThinkingMode => {
                "pin the value for the thinking mode the server runs, or state the mode it runs"
            }
            Class::WrongModel => "pin the value of the served model's own curve",
            Class::Spelling => "write the value in the engine's own unit and with every knob the engine needs",
            Class::OutOfRange => "an AL lies in [1, k+1] for the role's k: fix the value or the k",
            Class::NeverPassed => {
                "pass the value to the engine (export it, or put it in the flag or config the engine reads)"
            }
            Class::EvalLeak => "set the pin only when EVAL_ONLY is not true, so eval runs verify for real",
            Class::MissingPin => "pin the golden value for this run's k, or add the missing k to the lookup table",
            Class::Drift => "derive the value from the same k the engine runs, and keep prose in step with the code",
            Class::CurveProblem => {
                "re-collect the golden points at fault, or tell the curve files apart in their headers"
            }
            Class::Mismatch => "no golden curve has this value: pin one of the curve's values for this model and k",
            Class::Unreadable => "make the file readable, or move it out of the repository",
            Class::Unresolved => {
                "write the fact where the check can read it (a literal, or a variable set in the repository)"
            }
            Class::Assumption => "state the draft sampling or draft length explicitly in the launch code",
            Class::DuplicateKey => "write the key once: YAML readers keep only the last value",
            Class::Inert => "remove the setting, or enable speculative decoding for the role it is meant for",
            Class::StaleAllow => "remove the allow-list entry, or correct its file, line or class",
            Class::AllowChanged => {
                "have the new or wider allow entry reviewed, or sanction only the findings it is for"
            }
            Class::DroppedFile => {
                "check the file again: narrow the ignore entry or exclude, or allow the finding with its reason"
            }
        }
    }
}

impl FindingClass for Class {
    fn name(self) -> &'static str {
        Class::name(self)
    }

    fn severity(self) -> Severity {
        match self {
            Class::Unresolved | Class::Assumption | Class::StaleAllow | Class::DuplicateKey => Severity::Warning,
            Class::Inert => Severity::Note,
            _ => Severity::Error,
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Class {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Class> {
        let wanted = s.trim().to_ascii_lowercase().replace('_', "-");
        Class::ALL
            .into_iter()
            .find(|c| c.name() == wanted || c.number().is_some_and(|n| n.to_string() == wanted))
            .ok_or_else(|| {
                crate::Error::invalid(
                    "class",
                    format!(
                        "unknown class '{s}'; expected one of {}",
                        Class::ALL.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
                    ),
                )
            })
    }
}

/// One problem the pin check found, at a file and line: a class of docs/pins.md (or the check's own).
pub type Finding = crate::diagnostic::Finding<Class>;

/// Every pin in a repository, with the findings discovery itself makes (spelling, eval leaks, pins never
/// passed, missing pins, drift, unreadable files) — before any golden value is consulted.
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
    pub config_entries: Vec<graph::config::Entry>,
    /// The pins, by file and line.
    pub pins: Vec<Pin>,
    /// Findings from discovery.
    pub findings: Vec<Finding>,
    /// Shared lookup tables found: (name, location, number of entries).
    pub tables: Vec<(String, Location, usize)>,
    /// The inline allows (`# alsim: allow CLASS -- REASON`) written in the files read.
    #[serde(skip)]
    pub inline_allows: AllowList,
    /// The files read, relative to the root: what an allow entry's `file` pattern is matched against.
    #[serde(skip)]
    pub files: Vec<String>,
}

/// Scans the repository at `root`: walks it (without what `excludes` names), builds the launch graph, discovers every pin and resolves
/// its facts. Never executes anything it reads.
///
/// # Errors
/// [`crate::Error::Io`] when `root` itself cannot be read.
pub fn scan(root: &Path, excludes: &walk::Excludes) -> Result<Inventory> {
    let files = walk::walk(root, excludes)?;
    let mut inventory = graph::discover(&files, root);
    inventory.repo = root.display().to_string();
    inventory.pins.sort_by(|a, b| (&a.location, &a.branch, a.role).cmp(&(&b.location, &b.branch, b.role)));
    inventory.findings.sort_by(|a, b| (&a.location, a.class).cmp(&(&b.location, b.class)));
    inventory.findings.dedup_by(|a, b| a.location == b.location && a.class == b.class && a.message == b.message);
    Ok(inventory)
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

/// Truthy and falsy spellings of a thinking switch (`enabled`, `true`, `1` / `disabled`, `false`, `0`).
pub(crate) fn thinking_word(text: &str) -> Option<ThinkingMode> {
    match text.trim().trim_matches(|c| c == '"' || c == '\'' || c == '\\').to_ascii_lowercase().as_str() {
        "enabled" | "enable" | "true" | "1" | "on" | "yes" | "thinking_on" => Some(ThinkingMode::On),
        "disabled" | "disable" | "false" | "0" | "off" | "no" | "thinking_off" => Some(ThinkingMode::Off),
        _ => None,
    }
}

/// A number formatted without trailing zeros (`2.83`, `1.83`, `0.663333`).
pub fn plain_number(value: f64, max_decimals: usize) -> String {
    let text = format!("{value:.max_decimals$}");
    if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text }
}
