//! What discovery saw besides the pins: plain records, each at its location, of the facts the rules judge
//! (`src/pins/rules/`). A record states what is in the files — a key written twice, a file that could not
//! be parsed, an injector switched off, a comment beside a pin — and carries no class, severity or
//! message: the rule that reads it decides whether it is a finding and words it.

use super::{Knob, Location};

/// One fact discovery recorded on the inventory, in the order it was read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Observed {
    /// A candidate file its parser refused.
    Unparsed(Unparsed),
    /// A file the walk could not take in; `hides_pins`: whether it may hold a pin the check would read.
    NotWalked { path: String, reason: String, hides_pins: bool },
    /// A `deprecated/` directory of `count` archived master configs (`scripts`: launch scripts with
    /// knobs that no job reaches), named at its first file.
    Archived { at: Location, dir: String, count: usize, scripts: bool },
    /// A YAML key written a second time in one mapping of a recipe.
    DuplicateKey { at: Location, key: String },
    /// A recipe setting its engine ignores, with why.
    IgnoredSetting { at: Location, key: String, why: String },
    /// A knob written into a role that runs no speculative decoding (`why`: how its k was read).
    RoleWithoutSpeculation { at: Location, knob: Knob, role: String, why: String },
    /// An injected length the injector writes into a role of `recipe` that runs no speculative decoding.
    InjectedIntoRole { at: Location, role: String, recipe: String },
    /// `SYNTHETIC_ACCEPTANCE_LENGTH` set where `SYNTHETIC_ACCEPTANCE` is not `true`.
    InjectorDisabled { at: Location, value: String },
    /// An injected length on an entry whose launcher never calls the injector.
    InjectorNotCalled { at: Location, entry: String, launcher: String, value: String },
    /// An injected length the injector cannot write into `recipe` (`why`).
    NotInjectable { at: Location, value: String, recipe: String, why: String },
    /// A variable named like an acceptance length, assigned a number and read by no command.
    VariableUnused { at: Location, name: String, value: String },
    /// An environment knob assigned and never exported.
    NotExported { at: Location, name: String },
    /// An environment knob exported on the host while the engine starts in a container (`tool`, started at
    /// `container`) whose command line does not hand it in (`env_file`: what its env files hold instead).
    NotForwarded { at: Location, name: String, container: Location, tool: String, env_file: Option<String> },
    /// An environment knob exported on the host while the engine starts in a container given an env file
    /// whose names the check cannot read (`why`).
    ForwardUnresolved { at: Location, name: String, container: Location, tool: String, why: String },
    /// A carrier variable holding the knob that nothing passes on.
    CarrierUnused { at: Location, carrier: String },
    /// `SGLANG_SIMULATE_ACC_LEN` written without the `missing` companions of its triple (`environment`:
    /// the recipe role's environment, where the pin is a recipe's).
    SglangCompanionsMissing { at: Location, missing: Vec<String>, environment: Option<String> },
    /// A word that is nearly a knob's spelling (`meant`), with `how` near: an abbreviation or a few edits.
    NearMiss { at: Location, written: String, meant: String, how: String },
    /// A vLLM synthetic length or rates list written without `"rejection_sample_method": "synthetic"`.
    NotSynthetic { at: Location, knob: Knob },
    /// A k the environment can override (read from `k_from`, as `k`) that the written `value` does not follow.
    KOverride { at: Location, k_from: String, knob: Knob, value: String, k: String },
    /// A comment line of a file that holds pins.
    Comment { at: Location, text: String },
    /// A prose line that names exactly one file holding pins, `file`.
    Prose { at: Location, text: String, file: String },
    /// A changelog line of the newest entry naming config entry `entry`, stating `value` (a number, as
    /// written) for `knob`.
    ChangelogValue { at: Location, entry: String, knob: Knob, value: String },
    /// A lookup-table `case` with no arm for an entry's values (`subject`: the case word, `k`: the values).
    TableArmMissing { at: Location, entry: String, entry_at: String, subject: String, k: String },
    /// A lookup-table `case` with no arm for the values an entry runs a model the table serves at, where
    /// only the table's guard keeps that entry (its `scenario`) out today.
    TableFallThrough { at: Location, entry: String, entry_at: String, scenario: String, subject: String, k: String },
    /// A pin read from a lookup table that holds no value for it (`value`: as read, `table`: where).
    TableValueMissing { at: Location, value: String, table: String },
    /// An agentic spec-decoding entry whose recipe pins nothing.
    RecipeWithoutPin { at: Location, entry: String, entry_at: String, recipe: String },
    /// An agentic spec-decoding entry whose launch script configures speculation (`spec`) and pins nothing.
    ScriptWithoutPin { at: Location, entry: String, entry_at: String, script: String, spec: String },
    /// An agentic spec-decoding entry served by shared launch code that configures its engine's speculation
    /// at `at` while no file on the path (`path`: each file named by the one before) writes a knob the
    /// engine reads (`knobs`).
    SharedCodeWithoutPin { at: Location, entry: String, entry_at: String, engine: String, knobs: String, path: String },
    /// An agentic spec-decoding entry whose launch script spells pin knobs, none of which reaches the entry
    /// in a form its `engine` reads (`knobs`).
    ScriptWithoutEnginePin {
        at: Location,
        entry: String,
        entry_at: String,
        script: String,
        engine: String,
        knobs: String,
    },
    /// An entry's `EVAL_CONFIG_FILE` twin the repository does not hold.
    EvalTwinMissing { at: Location, twin: String, entry: String },
    /// An entry's `CONFIG_FILE` recipe the repository does not hold.
    RecipeMissing { at: Location, recipe: String, entry: String },
    /// An entry whose runner maps to no launcher.
    LauncherUnknown { at: Location, runner: String, entry: String },
    /// An entry whose launcher reaches no launch script (`tried`: the names looked for).
    ScriptMissing { at: Location, entry: String, launcher: String, tried: String },
    /// A `source`d file of a script with knobs that could not be resolved (`why`).
    IncludeUnresolved { at: Location, written: String, why: String },
    /// An inline allow that cannot be read (`class_error`: why its class cannot; `None`: it gives no reason).
    InlineAllowUnread { at: Location, class_error: Option<String> },
}

/// A prose line (a changelog entry, a README) that names a config entry's container image, by its tag or
/// the engine commit in it: where a repository states what the image is (its build date, its version).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ImageLine {
    pub at: Location,
    /// The image as the entry writes it.
    pub image: String,
    pub text: String,
}

/// A candidate file its parser refused, at the line the parser names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Unparsed {
    pub file: String,
    pub line: usize,
    pub reason: String,
}
