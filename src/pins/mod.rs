//! Pins in a benchmark repository: finding every pinned synthetic acceptance value, resolving what each
//! recipe actually runs, and proving the value is the golden one (pins.md; spellings from engines.md and
//! [`crate::units`]).
//!
//! This module owns
//! - the repository walk ([`walk`]): which files are read, and which are skipped with a note (binary,
//!   unreadable, huge, invalid UTF-8, symlink loops). Nothing read is ever executed;
//! - discovery ([`shell`] for bash launch scripts and shared lookup tables, [`recipe`] for YAML recipes and
//!   master configs that inject values into them): every pin site in the four engine spellings, and for each
//!   branch of it the facts that decide its golden value — model, drafter, method, draft sampling, k,
//!   thinking mode, EVAL_ONLY handling — each with how it was resolved ([`How`]);
//! - verification ([`verify`]): the golden lookup (the repo's `golden_al_distribution/`, `--golden`, or
//!   the embedded curves), the eleven classes of error of pins.md ([`Class`]), tolerances ([`AL_TOLERANCE`],
//!   [`RATE_TOLERANCE`]), the allow-list, and the curve checks;
//! - generation ([`native`]): the engine-native setting for a golden value, so recipes stop copying numbers.
//!
//! Facts that cannot be resolved are reported as [`How::Unresolved`], never guessed: a pin whose value,
//! k or curve cannot be decided gets an `unresolved` finding and the check's outcome is "undecided".

pub mod native;
pub mod recipe;
pub mod shell;
pub mod verify;
pub mod walk;

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::Serialize;

pub use native::{NativeSetting, native_setting};
pub use verify::{
    AllowEntry, AllowList, CheckOptions, CheckReport, CheckedPin, GoldenRef, Status, Summary, Verdict, check,
};

use crate::curve::ThinkingMode;
use crate::engine::Engine;
use crate::error::Result;

/// Tolerance on an acceptance length: golden values are written with two decimals (pins.md).
pub const AL_TOLERANCE: f64 = 0.005;
/// Tolerance on a draft rate (AL − 1)/k: computed rates carry the rounding of `awk`'s `%.6g` and of
/// hand-written decimals (pins.md: "allow ~1e-3 on rates").
pub const RATE_TOLERANCE: f64 = 1e-3;

/// A place in the repository: path relative to the repository root, 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Location {
    /// Path relative to the repository root, `/`-separated.
    pub file: String,
    /// 1-based line.
    pub line: usize,
}

impl Location {
    /// A location in `file` at `line`.
    pub fn new(file: impl Into<String>, line: usize) -> Location {
        Location { file: file.into(), line }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// How a fact about a pin was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum How {
    /// Written as a literal where it is used.
    Literal,
    /// Read through a shell variable assigned in the file.
    Variable,
    /// The default of `${VAR:-default}`: the environment can override it.
    Default,
    /// Fixed by the `case` branch the pin sits in.
    Branch,
    /// Computed (`$(awk …)`, `$((…))`) from other facts.
    Computed,
    /// Looked up in a shared launch-code table.
    Table,
    /// Injected from a master config into the recipe.
    Injected,
    /// Not written anywhere: inferred from a default (model's thinking default, engine's draft sampling).
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
    /// A shared launch-code lookup table, reached from a script (the value's location is the table entry).
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

/// The knob a pin is written with (engines.md summary table).
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
        }
    }

    /// The engine that reads the knob, when the knob alone says so.
    pub fn engine(self) -> Option<Engine> {
        match self {
            Knob::VllmSyntheticLength => Some(Engine::Vllm),
            Knob::SglangSimulateLen => Some(Engine::Sglang),
            Knob::TrtllmForceAccepted => Some(Engine::Trtllm),
            Knob::AtomLength | Knob::AtomRate => Some(Engine::Atom),
            Knob::InjectedLength => None,
        }
    }

    /// Converts a written value to the acceptance length it implies; `None` when k is needed and unknown.
    pub fn implied_al(self, written: f64, k: Option<usize>) -> Option<f64> {
        match self {
            Knob::TrtllmForceAccepted => Some(written + 1.0),
            Knob::AtomRate => k.map(|k| 1.0 + written * k as f64),
            _ => Some(written),
        }
    }
}

/// Whether a pin is kept out of `EVAL_ONLY` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EvalGuard {
    /// The pin is dropped (or never set) when `EVAL_ONLY` is true.
    Guarded,
    /// The pin also applies to eval runs.
    Leaks,
    /// Not a script: eval runs use a separate recipe (`EVAL_CONFIG_FILE`), checked on its own.
    NotApplicable,
}

impl EvalGuard {
    /// The word shown in tables.
    pub fn name(self) -> &'static str {
        match self {
            EvalGuard::Guarded => "guarded",
            EvalGuard::Leaks => "leaks",
            EvalGuard::NotApplicable => "n/a (recipe)",
        }
    }
}

/// One pin: one site and one branch of it, with every fact that decides its golden value.
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
    /// The branch (`NUM_SPEC_TOKENS=3`, `CONC=4|8`), role (`decode`) or recipe it applies to; empty when none.
    pub branch: String,
    /// The value as written, in the knob's spelling.
    pub written: Fact<f64>,
    /// Draft length k of this role.
    pub k: Fact<usize>,
    /// Served model (as written).
    pub model: Fact<String>,
    /// Draft model.
    pub drafter: Fact<String>,
    /// Speculative method.
    pub method: Fact<String>,
    /// Draft sampling (`greedy`, `probabilistic`).
    pub draft_sampling: Fact<String>,
    /// Thinking mode served.
    pub mode: Fact<ThinkingMode>,
    /// EVAL_ONLY handling.
    pub eval_guard: EvalGuard,
}

/// The classes of error of pins.md (1–11), plus the check's own findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// 1. The value is the golden AL for another draft length.
    WrongK,
    /// 2. Another drafter's curve, or the greedy curve used with probabilistic drafting (or the reverse).
    WrongDrafter,
    /// 3. The other thinking mode's value.
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
    /// A fact the check could not decide.
    Unresolved,
    /// A fact only inferred from a default (e.g. the model's thinking default).
    Assumption,
    /// An allow-list entry that matched nothing.
    StaleAllow,
}

impl Class {
    /// Every class, in order.
    pub const ALL: [Class; 15] = [
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
        Class::Unresolved,
        Class::Assumption,
        Class::StaleAllow,
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
            Class::Unresolved => "unresolved",
            Class::Assumption => "assumption",
            Class::StaleAllow => "stale-allow",
        }
    }

    /// The number of the class in pins.md, for the eleven it lists.
    pub fn number(self) -> Option<usize> {
        Class::ALL[..11].iter().position(|c| *c == self).map(|i| i + 1)
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

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Fails the check.
    Error,
    /// Reported; fails only with `--strict`.
    Warning,
}

/// One problem found, at a file and line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// Error or warning.
    pub severity: Severity,
    /// Which class of pins.md (or the check's own).
    pub class: Class,
    /// Where.
    pub location: Location,
    /// What is wrong and what the right value is.
    pub message: String,
    /// The allow-list's reason, when an entry sanctions this finding (it then fails nothing).
    pub allowed: Option<String>,
}

impl Finding {
    /// A finding of `class` at `location`; classes 1–11 and mismatches are errors, the rest warnings.
    pub fn new(class: Class, location: Location, message: impl Into<String>) -> Finding {
        let severity = match class {
            Class::Unresolved | Class::Assumption | Class::StaleAllow => Severity::Warning,
            _ => Severity::Error,
        };
        Finding { severity, class, location, message: message.into(), allowed: None }
    }
}

/// A file the walk did not read, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Path relative to the repository root.
    pub path: String,
    /// Why (binary, invalid UTF-8, too large, unreadable, symlink loop, invalid YAML…).
    pub reason: String,
}

/// Every pin in a repository, with the findings discovery itself makes (spelling, eval leaks, pins never
/// passed, missing pins, drift) — before any golden value is consulted.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Inventory {
    /// The repository scanned.
    pub repo: String,
    /// How many files were read.
    pub files_read: usize,
    /// The pins, by file and line.
    pub pins: Vec<Pin>,
    /// Findings from discovery.
    pub findings: Vec<Finding>,
    /// Files skipped, with the reason.
    pub skipped: Vec<Skipped>,
    /// Shared lookup tables found: name → (location, number of entries).
    pub tables: BTreeMap<String, (Location, usize)>,
}

/// Scans the repository at `root`: walks it, discovers every pin and resolves its facts.
///
/// Never executes anything it reads. Files that cannot be read are listed in [`Inventory::skipped`].
///
/// # Errors
/// [`crate::Error::Io`] when `root` itself cannot be read.
pub fn scan(root: &Path) -> Result<Inventory> {
    let files = walk::walk(root)?;
    let mut inventory = Inventory {
        repo: root.display().to_string(),
        files_read: files.texts.len(),
        skipped: files.skipped,
        ..Default::default()
    };
    let scripts = shell::parse_all(&files.texts);
    let tables = shell::tables(&scripts);
    for table in &tables {
        inventory.tables.insert(table.name.clone(), (table.location.clone(), table.entries.len()));
    }
    let (mut pins, mut findings) = shell::discover(&scripts, &tables);
    let recipes = recipe::discover(&files.texts, &mut inventory.skipped);
    pins.extend(recipes.0);
    findings.extend(recipes.1);
    findings.extend(shell::prose_drift(&files.texts, &pins));
    pins.sort_by(|a, b| (&a.location, &a.branch).cmp(&(&b.location, &b.branch)));
    findings.sort_by(|a, b| (&a.location, a.class).cmp(&(&b.location, b.class)));
    findings.dedup_by(|a, b| a.location == b.location && a.class == b.class && a.message == b.message);
    inventory.pins = pins;
    inventory.findings = findings;
    Ok(inventory)
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
