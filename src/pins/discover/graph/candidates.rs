//! Which files the graph starts from: each text read once, in parallel, for the scripts that write a knob
//! or hold a lookup table, the YAML files that write one and the files that look like master configs.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use rayon::prelude::*;

use super::config::Entry;
use super::jobs::Job;
use super::parse::{parse_recipes, parse_script, parse_scripts};
use super::{SHELL_KNOBS, YAML_KNOBS, archived, echoes_number, recipe_path, sources_any};
use crate::bash::Script;
use crate::pins::discover::recipe::Recipe;
use crate::pins::observed::{Observed, Unparsed};
use crate::pins::walk::{FileKind, Files, TextFile};

/// The candidates among the files read, each text searched once, in parallel: which scripts write a knob
/// (or hold a lookup table), which YAML files write one, which look like master configs.
pub(super) struct Candidates<'f> {
    pub(super) by_path: HashMap<&'f str, &'f TextFile>,
    pub(super) shell_knobs: HashSet<&'f str>,
    pub(super) knob_scripts: Vec<&'f TextFile>,
    pub(super) knob_script_paths: BTreeSet<&'f str>,
    pub(super) yaml_knobs: HashSet<&'f str>,
    /// Master-config-like files in a `deprecated/` directory, and the others.
    pub(super) archived: Vec<&'f TextFile>,
    pub(super) active: Vec<&'f TextFile>,
    pub(super) launcher_paths: Vec<String>,
    /// Recipes that write a knob, parsed whatever the jobs are (a config-shaped file is left until it is
    /// known not to be a master config).
    pub(super) knob_recipes: Vec<&'f TextFile>,
}

impl<'f> Candidates<'f> {
    pub(super) fn of(files: &'f Files) -> Candidates<'f> {
        let by_path: HashMap<&str, &TextFile> = files.texts.iter().map(|f| (f.rel.as_str(), f)).collect();
        let yaml: Vec<&TextFile> = files
            .texts
            .iter()
            .filter(|f| f.kind == FileKind::Yaml && !f.rel.starts_with("golden_al_distribution/"))
            .collect();
        let shell_knobs: HashSet<&str> = files
            .texts
            .par_iter()
            .filter(|f| f.kind == FileKind::Shell && SHELL_KNOBS.any_in(&f.text))
            .map(|f| f.rel.as_str())
            .collect();
        let knob_scripts: Vec<&TextFile> = files
            .texts
            .par_iter()
            .filter(|f| f.kind == FileKind::Shell && (shell_knobs.contains(f.rel.as_str()) || echoes_number(&f.text)))
            .collect();
        let yaml_knobs: HashSet<&str> = files
            .texts
            .par_iter()
            .filter(|f| f.kind == FileKind::Yaml && !super::prose::changelog(&f.rel) && YAML_KNOBS.any_in(&f.text))
            .map(|f| f.rel.as_str())
            .collect();
        let top_like = |f: &&&TextFile| {
            (f.text.contains("scenarios:") && f.text.contains("search-space:"))
                || f.text.starts_with("labels:")
                || f.text.contains("\nlabels:")
        };
        let tops: Vec<&TextFile> = yaml.par_iter().filter(top_like).copied().collect();
        let (archived, active): (Vec<&TextFile>, Vec<&TextFile>) = tops.into_iter().partition(|f| archived(&f.rel));
        let launcher_paths: Vec<String> = files
            .texts
            .iter()
            .filter(|f| f.kind == FileKind::Shell && f.rel.starts_with("runners/launch_"))
            .map(|f| f.rel.clone())
            .collect();
        let knob_script_paths: BTreeSet<&str> = knob_scripts.iter().map(|f| f.rel.as_str()).collect();
        let knob_recipes: Vec<&TextFile> = yaml
            .iter()
            .filter(|f| yaml_knobs.contains(f.rel.as_str()) && !active.iter().any(|a| a.rel == f.rel))
            .copied()
            .collect();
        Candidates {
            by_path,
            shell_knobs,
            knob_scripts,
            knob_script_paths,
            yaml_knobs,
            archived,
            active,
            launcher_paths,
            knob_recipes,
        }
    }

    /// Whether the file at `p` writes a knob a recipe carries.
    pub(super) fn has_knob(&self, p: &str) -> bool {
        self.by_path.get(p).is_some_and(|f| match f.kind {
            FileKind::Yaml => self.yaml_knobs.contains(p),
            _ => YAML_KNOBS.any_in(&f.text),
        })
    }

    /// Every recipe parsed: those that write a knob (`parsed`), then the recipes jobs name that were not
    /// parsed yet and knob-writing config-shaped files that turned out not to be master configs.
    pub(super) fn recipes(
        &self,
        entries: &[Entry],
        jobs: &[Job],
        parsed: Vec<Result<Recipe, Unparsed>>,
        observed: &mut Vec<Observed>,
    ) -> BTreeMap<String, Recipe> {
        let master_files: BTreeSet<&str> = entries.iter().map(|e| e.file.as_str()).collect();
        let knob_recipe_paths: HashSet<&str> = self.knob_recipes.iter().map(|f| f.rel.as_str()).collect();
        let mut wanted_recipes: BTreeSet<String> = self
            .active
            .iter()
            .filter(|f| self.yaml_knobs.contains(f.rel.as_str()) && !master_files.contains(f.rel.as_str()))
            .map(|f| f.rel.clone())
            .collect();
        for job in jobs {
            let point = &entries[job.entry].points[job.point];
            for key in ["CONFIG_FILE", "EVAL_CONFIG_FILE"] {
                if let Some(path) = point.get(key).and_then(|s| recipe_path(&s.value))
                    && self.by_path.contains_key(path.as_str())
                    && !master_files.contains(path.as_str())
                    && !knob_recipe_paths.contains(path.as_str())
                {
                    wanted_recipes.insert(path);
                }
            }
        }
        let more_recipes: Vec<&TextFile> =
            wanted_recipes.iter().filter_map(|p| self.by_path.get(p.as_str()).copied()).collect();
        let mut recipes = BTreeMap::new();
        for r in parsed.into_iter().chain(parse_recipes(&more_recipes)) {
            match r {
                Ok(recipe) => {
                    recipes.insert(recipe.rel.clone(), recipe);
                }
                Err(u) => observed.push(Observed::Unparsed(u)),
            }
        }
        recipes
    }

    /// Adds the scripts that source one writing a knob (those pins run with their variables; parsed only
    /// for that context, so a parse failure there hides no pin), then what every parsed script `source`s,
    /// parsed once each whoever sources it. Only files the walk read are followed, so a link out of the
    /// root never is. Whether any script was added.
    pub(super) fn add_sourcing(
        &self,
        files: &Files,
        scripts: &mut Vec<Script>,
        script_index: &mut HashMap<String, usize>,
    ) -> bool {
        let knob_names: BTreeSet<&str> =
            self.knob_script_paths.iter().map(|p| p.rsplit('/').next().unwrap_or(p)).collect();
        let sourcing: Vec<&TextFile> = files
            .texts
            .par_iter()
            .filter(|f| {
                f.kind == FileKind::Shell && !script_index.contains_key(&f.rel) && sources_any(&f.text, &knob_names)
            })
            .collect();
        let before = scripts.len();
        for s in parse_scripts(sourcing).0 {
            script_index.insert(s.rel.clone(), scripts.len());
            scripts.push(s);
        }
        let parse = |rel: &str| parse_script(self.by_path.get(rel)?).ok();
        let readable = |p: &str| self.by_path.contains_key(p);
        crate::bash::include::resolve_all(scripts, script_index, &parse, &readable);
        scripts.len() > before
    }
}
