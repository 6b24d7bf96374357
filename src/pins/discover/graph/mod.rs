//! The launch graph: config entry → runner → launcher → launch script or recipe → role → engine knob.
//!
//! docs/pins.md#how-the-check-follows-a-pin describes how InferenceX wires a pin; this module models that path
//! explicitly instead of reading each file on its own:
//! - [`config`]: entries of master configs, by structure, with their settings and lines;
//! - [`runner`]: runner labels → launchers, each launcher's naming convention, eval twin, knob strips
//!   and injector call, read from the launcher's own code;
//! - `jobs`: one search-space point on one launcher, with the environment the workflow gives the job
//!   (`MODEL`, `MODEL_PREFIX`, `PRECISION`, `FRAMEWORK`, `SPEC_DECODING`, `SCENARIO_SUBDIR`, `EXP_NAME`,
//!   `IS_AGENTIC`, `IS_MULTINODE`, `RUNNER_NAME`, `MODEL_NAME=${MODEL##*/}`, and every `additional-settings` pair) and
//!   its target: a single-node script, or a recipe (`CONFIG_FILE=recipes/<x>` →
//!   `benchmarks/multi_node/srt-slurm-recipes/<x>`);
//! - [`assemble`]: the graph's inventory: pins from scripts (run with each job's environment), lookup
//!   tables in shared code (selected by the jobs' variables), recipes (each role), injections (`injected`:
//!   the entry's value into the recipe's roles), eval routes, and what the jobs' paths lack (`missing`:
//!   pins, targets, eval twins); `tables`: which arm of a lookup table in shared code each job selects, and
//!   `fall_through`: an explicit fall-through an entry could reach;
//! - `candidates`: the files the graph starts from, each text searched once; `parse`: parsing what it
//!   reaches.
//!
//! Parsing is the expensive part, so only what the graph reaches is parsed, in parallel: master
//! configs, the launchers of relevant jobs, scripts and recipes that write a knob, the recipes and
//! scripts jobs reach, and eval twins. Any of these that fails to parse is an error naming the file; a
//! file with no pin spelling that nothing reaches cannot hide a pin and is not parsed at all.

mod assemble;
mod candidates;
pub(crate) mod config;
mod fall_through;
mod injected;
mod jobs;
mod missing;
mod parse;
pub(crate) mod path;
mod prose;
pub(crate) mod runner;
mod spelled;
mod tables;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::OnceLock;

use memchr::memmem::Finder;
use rayon::prelude::*;

use self::candidates::Candidates;
use self::config::{Entry, Point};
use self::jobs::{Job, jobs_of};
use self::parse::{Parsed, parse_handoffs, parse_recipes, parse_scripts, parse_yaml};
use self::runner::{LaunchFacts, Launcher, Runners};
use crate::bash::Script;
use crate::bash::resolve::LookupTable;
use crate::pins::discover::recipe::{RECIPES_DIR, Recipe};
use crate::pins::discover::script::written::WrittenFacts;
use crate::pins::observed::Observed;
use crate::pins::walk::{FileKind, Files, TextFile};
use crate::pins::{EntryRef, Inventory, Location};

/// Text that makes a YAML file worth parsing as a recipe: a knob written as a key or JSON key.
static YAML_KNOBS: Needles = Needles::new(&[
    "SGLANG_SIMULATE_ACC_LEN:",
    "SGLANG_SIMULATE_ACC_LEN=",
    "name: SGLANG_SIMULATE_ACC_LEN",
    "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=",
    "name: TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS",
    "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS:",
    "synthetic_acceptance_length\"",
    "synthetic_acceptance_length\\\"",
    "synthetic_acceptance_rates\"",
    "synthetic_acceptance_rates\\\"",
    "--spec-synth-",
    "--spec-decode-acceptance-",
    "spec-decode-acceptance-length:",
    "spec-decode-acceptance-rate:",
]);
/// Text that makes a script worth parsing for pins.
static SHELL_KNOBS: Needles = Needles::new(&[
    "SIMULATE_ACC_LEN",
    "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS",
    "synthetic_acceptance_length",
    "synthetic_acceptance_rates",
    "spec-decode-acceptance",
    "spec-synth",
    "LLAMA_ARG_SPEC_SYNTH",
]);

/// A recipe path a `CONFIG_FILE`/`EVAL_CONFIG_FILE` names, as the launchers map it.
pub(crate) fn recipe_path(value: &str) -> Option<String> {
    let path = value.split(':').next().unwrap_or(value).trim().trim_start_matches("./");
    if path.starts_with("benchmarks/") {
        Some(path.to_string())
    } else {
        path.strip_prefix("recipes/").map(|rest| format!("{RECIPES_DIR}{rest}"))
    }
}

/// Everything parsed, and the jobs.
pub(crate) struct Graph<'f> {
    /// Config entries.
    pub entries: Vec<Entry>,
    /// Jobs of relevant points.
    pub jobs: Vec<Job>,
    /// Parsed scripts (launchers, knob scripts, reached scripts, tables).
    pub scripts: Vec<Script>,
    /// Script index by path.
    pub script_index: HashMap<String, usize>,
    /// Lookup tables across the scripts.
    pub tables: Vec<LookupTable>,
    /// Parsed recipes by path.
    pub recipes: BTreeMap<String, Recipe>,
    /// What each job's launcher does.
    pub launch: Vec<Option<LaunchFacts>>,
    /// Files by path.
    pub files: HashMap<&'f str, &'f TextFile>,
    /// What was recorded while building (unreadable files, unparsable YAML or bash, archived directories).
    pub observed: Vec<Observed>,
    /// `model-prefix` → the model of an entry that uses it.
    pub prefix_models: BTreeMap<String, EntryRef>,
    /// The injector's source, when the repository has one ([`injected::INJECTOR`]).
    pub injector: Option<String>,
    /// Shell files whose text holds a knob spelling (`SHELL_KNOBS`), searched once.
    pub shell_knobs: HashSet<&'f str>,
    /// The facts each statement of each script writes, read when a script that sources it needs them.
    pub written: WrittenFacts,
    /// The launch path of each multi-node start the jobs run, followed on first use and then shared by
    /// every script and job that asks ([`Graph::launch_path`]).
    pub launch_paths: HashMap<String, OnceLock<Vec<path::Hop>>>,
}

impl Graph<'_> {
    /// Frees what the graph owns on a pool thread, off the check's serial path: on the caller's thread,
    /// dropping the scripts' syntax trees, the jobs and the tables was a third of the inventory's serial
    /// tail. What it borrows from the walk's files stays here. Each field is named so that a new one is
    /// placed on one side or the other.
    fn free_aside(self) {
        let Graph {
            entries,
            jobs,
            scripts,
            script_index,
            tables,
            recipes,
            launch,
            files: _,
            observed,
            prefix_models,
            injector,
            shell_knobs: _,
            written,
            launch_paths,
        } = self;
        let owned = (entries, jobs, scripts, script_index, tables, recipes, launch, observed);
        let more = (prefix_models, injector, written, launch_paths);
        rayon::spawn(move || drop((owned, more)));
    }

    /// The parsed scripts, with the facts their statements write.
    pub(crate) fn scripts(&self) -> (&[Script], &WrittenFacts) {
        (&self.scripts, &self.written)
    }

    /// The entry of a job.
    pub(crate) fn entry(&self, job: &Job) -> &Entry {
        &self.entries[job.entry]
    }

    /// The point of a job.
    pub(crate) fn point(&self, job: &Job) -> &Point {
        &self.entries[job.entry].points[job.point]
    }

    /// The parsed script at `path`.
    pub(crate) fn script(&self, path: &str) -> Option<&Script> {
        self.script_index.get(path).map(|&i| &self.scripts[i])
    }

    /// The files job `index`'s multi-node start reaches by name ([`path::reached`]), when it runs one:
    /// following a path reads every line of every file on it, and the lookup tables ask once per script
    /// and job, so each start's path is followed once.
    pub(crate) fn launch_path(&self, index: usize) -> Option<&[path::Hop]> {
        let (start, _) = self.launch[index].as_ref()?.multi_node.as_ref()?;
        Some(self.launch_paths.get(start)?.get_or_init(|| path::reached(start, &self.files)))
    }
}

/// Builds the graph of `files` (walked from `root`) and every pin in it.
pub(crate) fn discover(files: &Files, root: &std::path::Path) -> Inventory {
    let mut observed: Vec<Observed> = files
        .problems
        .iter()
        .map(|p| Observed::NotWalked { path: p.path.clone(), reason: p.reason.clone(), hides_pins: p.hides_pins })
        .collect();
    let c = Candidates::of(files);
    observed.extend(archived_notes(c.archived.iter().map(|f| f.rel.as_str()), false));
    observed.extend(spelled::near_misses(&files.texts));
    let by_path = &c.by_path;
    let has_knob = |p: &str| c.has_knob(p);

    // One parallel wave: the master configs, then the jobs and their launchers, alongside the scripts
    // and recipes that write a knob (rayon balances the two sides on the cores).
    let (configured, (knob_parsed, knob_recipes_parsed)) = rayon::join(
        || {
            let tops: Vec<(&TextFile, Parsed)> = c.active.par_iter().map(|f| (*f, parse_yaml(f))).collect();
            let mut observed = Vec::new();
            let mut entries = Vec::new();
            let mut runners = Runners::default();
            for (file, parsed) in tops {
                match parsed {
                    Ok((root, _)) => {
                        if let Some(found) = config::read(&file.rel, &file.text, &root) {
                            entries.extend(found);
                        } else if let Some(r) = Runners::read(&root) {
                            runners = r;
                        }
                    }
                    Err(u) => observed.push(Observed::Unparsed(u)),
                }
            }
            let jobs = jobs_of(&entries, &runners, &c.launcher_paths, &has_knob);
            let wanted_scripts: BTreeSet<&str> = jobs
                .iter()
                .filter_map(|j| j.launcher.as_deref())
                .filter(|p| !c.knob_script_paths.contains(p))
                .collect();
            let launchers = parse_scripts(wanted_scripts.iter().filter_map(|p| by_path.get(p).copied()).collect());
            (entries, jobs, observed, launchers)
        },
        || rayon::join(|| parse_scripts(c.knob_scripts.clone()), || parse_recipes(&c.knob_recipes)),
    );
    let (entries, jobs, mut config_observed, (launchers, mut launcher_observed)) = configured;
    let (mut scripts, mut script_observed) = knob_parsed;
    observed.append(&mut script_observed);
    observed.append(&mut config_observed);
    scripts.extend(launchers);
    observed.append(&mut launcher_observed);
    let recipes = c.recipes(&entries, &jobs, knob_recipes_parsed, &mut observed);

    // Wave 3: what each launcher does for its jobs, and the single-node scripts they reach.
    let mut script_index: HashMap<String, usize> =
        scripts.iter().enumerate().map(|(i, s)| (s.rel.clone(), i)).collect();
    let mut tables = crate::bash::resolve::tables(&scripts);
    let exists = |p: &str| by_path.get(p).is_some_and(|f| f.kind == FileKind::Shell);
    let read = |p: &str| crate::pins::walk::read_inside(root, p, crate::input::SMALL_FILE_LIMIT);
    let launcher_paths: BTreeSet<&str> = jobs.iter().filter_map(|job| job.launcher.as_deref()).collect();
    let before = scripts.len();
    let handoff_paths = parse_handoffs(&launcher_paths, by_path, &mut scripts, &mut script_index, &mut observed);
    if scripts.len() > before {
        tables = crate::bash::resolve::tables(&scripts);
    }
    let launch: Vec<Option<LaunchFacts>> = {
        let handoffs: HashMap<&str, Launcher> = handoff_paths
            .iter()
            .filter_map(|p| Some((p.as_str(), Launcher::new(&scripts[*script_index.get(p)?]))))
            .collect();
        let repo = runner::Repo { exists: &exists, read: &read, handoffs: &handoffs };
        let launchers: HashMap<&str, Launcher> = launcher_paths
            .into_iter()
            .filter_map(|path| Some((path, Launcher::new(&scripts[*script_index.get(path)?]))))
            .collect();
        jobs.par_iter()
            .map(|job| Some(launchers.get(job.launcher.as_deref()?)?.facts(&scripts, &tables, &job.env, &repo)))
            .collect()
    };
    let reached: BTreeSet<&str> = launch
        .iter()
        .flatten()
        .filter_map(|l| l.script.as_ref().map(|s| s.0.as_str()))
        .filter(|p| !script_index.contains_key(*p))
        .collect();
    if !reached.is_empty() {
        let (more, mut more_observed) = parse_scripts(reached.iter().filter_map(|p| by_path.get(p).copied()).collect());
        observed.append(&mut more_observed);
        for s in more {
            script_index.insert(s.rel.clone(), scripts.len());
            scripts.push(s);
        }
        tables = crate::bash::resolve::tables(&scripts);
    }
    if c.add_sourcing(files, &mut scripts, &mut script_index) {
        tables = crate::bash::resolve::tables(&scripts);
    }
    // The injector is Python: read as text, only to see that it returns early for eval runs.
    let injector = crate::pins::walk::read_inside(root, injected::INJECTOR, crate::input::SMALL_FILE_LIMIT);
    let scripts_len = scripts.len();
    let launch_paths =
        launch.iter().flatten().filter_map(|l| Some((l.multi_node.as_ref()?.0.clone(), OnceLock::new())));
    let graph = Graph {
        launch_paths: launch_paths.collect(),
        prefix_models: prefix_models(&entries),
        entries,
        jobs,
        scripts,
        script_index,
        tables,
        recipes,
        launch,
        files: c.by_path,
        observed,
        injector,
        shell_knobs: c.shell_knobs,
        written: WrittenFacts::new(scripts_len),
    };
    assemble::inventory(graph, files)
}

/// `model-prefix` → the model of the first entry that uses it.
fn prefix_models(entries: &[Entry]) -> BTreeMap<String, EntryRef> {
    let mut prefix_models = BTreeMap::new();
    for e in entries {
        if let (Some(p), Some(m)) = (&e.model_prefix, &e.model) {
            prefix_models
                .entry(p.clone())
                .or_insert_with(|| EntryRef { name: m.clone(), at: Location::new(&e.file, e.line) });
        }
    }
    prefix_models
}

/// Whether a file sits in a `deprecated/` directory. Such a directory is where a benchmark repository
/// archives retired config entries and launch scripts (InferenceX: `configs/deprecated/`, "removed from the
/// active master configs and archived", MODELS.md; its workflows read only the master configs
/// `utils/constants.py` lists; `benchmarks/**/deprecated/` since `d089a91`). No job runs them, so their pins
/// run nowhere: archived configs are not parsed (in the snapshot they are more than half of all
/// master-config text), archived scripts no job reaches are not judged, and each such directory is named
/// in a note rather than skipped silently.
pub(super) fn archived(rel: &str) -> bool {
    rel.split('/').rev().skip(1).any(|dir| dir == "deprecated")
}

/// One record per directory of the archived files at `paths` (`scripts`: launch scripts, else master
/// configs), at its first file, with how many it holds.
pub(super) fn archived_notes<'a>(paths: impl IntoIterator<Item = &'a str>, scripts: bool) -> Vec<Observed> {
    let mut by_dir: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for rel in paths {
        by_dir.entry(rel.rsplit_once('/').map_or("", |(dir, _)| dir)).or_default().push(rel);
    }
    let at = |files: &[&str]| Location::new(files[0], 1);
    by_dir
        .into_iter()
        .map(|(dir, files)| Observed::Archived { at: at(&files), dir: dir.to_string(), count: files.len(), scripts })
        .collect()
}

/// Whether a script has a `source`/`.` line naming one of `names`.
fn sources_any(text: &str, names: &BTreeSet<&str>) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        (l.starts_with("source ") || l.starts_with(". ")) && names.iter().any(|n| l.contains(n))
    })
}

/// A fixed list of needles and their searches, built once: building memchr's searcher anew for each needle
/// and file was five sixths of the pre-scan's work on the InferenceX snapshot (42 → 7 million instructions).
/// memchr's search, not `str::contains`: that one falls back to a slow searcher for needles over 32 bytes
/// (`TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS`), and these run over every candidate file.
pub(super) struct Needles {
    list: &'static [&'static str],
    finders: OnceLock<Vec<Finder<'static>>>,
}

impl Needles {
    /// The needles `list`; their searches are built on the first search.
    pub(super) const fn new(list: &'static [&'static str]) -> Needles {
        Needles { list, finders: OnceLock::new() }
    }

    /// Each needle's search, in the list's order.
    pub(super) fn finders(&self) -> &[Finder<'static>] {
        self.finders.get_or_init(|| self.list.iter().map(|needle| Finder::new(needle.as_bytes())).collect())
    }

    /// Whether `text` holds any of the needles.
    pub(super) fn any_in(&self, text: &str) -> bool {
        self.finders().iter().any(|finder| finder.find(text.as_bytes()).is_some())
    }
}

/// `echo 2.83` (or `echo "2.83"`) somewhere: a candidate lookup table.
fn echoes_number(text: &str) -> bool {
    text.match_indices("echo ").any(|(at, _)| {
        let rest = text[at + 5..].trim_start_matches(['"', '\'']);
        let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
        digits > 0 && rest[digits..].starts_with('.') && rest[digits + 1..].starts_with(|c: char| c.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pins::{Class, Severity};

    #[test]
    fn recipes_map_like_the_launchers() {
        assert_eq!(
            recipe_path("recipes/vllm/x.yaml").as_deref(),
            Some("benchmarks/multi_node/srt-slurm-recipes/vllm/x.yaml")
        );
        assert_eq!(
            recipe_path("recipes/g/a.yaml:zip_override_x[0]").as_deref(),
            Some("benchmarks/multi_node/srt-slurm-recipes/g/a.yaml")
        );
        assert_eq!(
            recipe_path("benchmarks/multi_node/srt-slurm-recipes/t/b.yaml").as_deref(),
            Some("benchmarks/multi_node/srt-slurm-recipes/t/b.yaml")
        );
        assert_eq!(recipe_path("dsv4-low-latency.yaml"), None);
        assert!(echoes_number("  a) echo 2.83 ;;") && !echoes_number("echo $X 2"));
    }

    #[test]
    fn archived_master_configs_are_named_in_a_note_and_not_run() {
        let entry = |name: &str| {
            format!(
                "{name}:\n  model: org/M\n  runner: cluster:x\n  scenarios:\n    agentic-coding:\n    - search-space:\n      \
                 - spec-decoding: mtp\n        additional-settings:\n        - \"SYNTHETIC_ACCEPTANCE_LENGTH=9.99\"\n"
            )
        };
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("configs/deprecated")).unwrap();
        std::fs::write(root.join("configs/live-master.yaml"), entry("live")).unwrap();
        std::fs::write(root.join("configs/deprecated/a-master.yaml"), entry("old-a")).unwrap();
        std::fs::write(root.join("configs/deprecated/b-master.yaml"), entry("old-b")).unwrap();
        let inventory = crate::pins::scan(root, &Default::default()).unwrap();
        assert_eq!(inventory.entries, 1, "only the active master config's entry");
        let notes: Vec<&crate::pins::Finding> =
            inventory.findings.iter().filter(|f| f.location.file.contains("deprecated")).collect();
        let [note] = notes.as_slice() else { panic!("{notes:?}") };
        assert_eq!((note.class, note.severity), (Class::Inert, Severity::Note));
        assert!(note.message.starts_with("configs/deprecated/: 2 archived"), "{}", note.message);
        // The same file outside a `deprecated/` directory is an active master config.
        assert!(!archived("configs/deprecated-not/x.yaml") && !archived("deprecated"));
        assert!(archived("configs/deprecated/x.yaml"));
    }
}
