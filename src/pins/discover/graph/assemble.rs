//! The inventory of the launch graph: its pins — scripts run with each job's environment, lookup tables
//! selected by the jobs' variables, recipes per role, injections ([`super::injected`]), and for each pin
//! the route eval runs take — what the jobs' paths lack ([`super::missing`]), and what else discovery
//! recorded.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::jobs::Job;
use super::tables::table_selection;
use super::{Graph, injected, missing, recipe_path};
use crate::bash::Script;
use crate::bash::resolve::Env;
use crate::pins::allow::AllowList;
use crate::pins::discover::recipe::Recipe;
use crate::pins::discover::script::sites::{self, Discovery};
use crate::pins::observed::Observed;
use crate::pins::walk::Files;
use crate::pins::{EvalRoute, Fact, How, Inventory, Knob, Location, Pin};

/// The inventory of a built graph: its pins and what was recorded, with the inline allows of `files`.
pub(super) fn inventory(graph: Graph, files: &Files) -> Inventory {
    let files_read = files.texts.len();
    let files_seen = files.texts.iter().map(|f| f.rel.clone()).collect();
    let config_entries = graph.entries.clone();
    let entries = config_entries.len();
    let tables_found = graph.tables.iter().map(|t| (t.name.clone(), t.location.clone(), t.entries)).collect();
    let image_lines = super::prose::image_lines(&graph);
    let recipe_renderers = graph.recipes.values().filter_map(|r| Some((r.rel.clone(), r.renderer.clone()?))).collect();
    let (pins, mut observed) = assemble(&graph);
    graph.free_aside();
    let mut inline_allows = AllowList::default();
    for (list, bad) in files.texts.par_iter().map(|f| AllowList::inline(&f.rel, &f.text)).collect::<Vec<_>>() {
        inline_allows.extend(list);
        observed.extend(bad.into_iter().map(|b| Observed::InlineAllowUnread { at: b.at, class_error: b.class_error }));
    }
    Inventory {
        repo: String::new(),
        files_read,
        entries,
        config_entries,
        pins,
        findings: Vec::new(),
        observed,
        tables: tables_found,
        inline_allows,
        files: files_seen,
        image_lines,
        recipe_renderers,
    }
}

/// Every pin of the graph and what was recorded about them.
fn assemble(graph: &Graph) -> (Vec<Pin>, Vec<Observed>) {
    let mut pins = Vec::new();
    let mut observed = graph.observed.clone();
    script_pins(graph, &mut pins, &mut observed);
    recipe_pins(graph, &mut pins, &mut observed);
    injected::injected_pins(graph, &mut pins, &mut observed);
    missing::observe(graph, &pins, &mut observed);
    for pin in &mut pins {
        if pin.entries.is_empty() && pin.model.value.is_none() {
            model_from_prefix(graph, pin);
        }
        pin.entries.sort();
        pin.entries.dedup_by(|a, b| a.name == b.name);
    }
    observed.extend(super::prose::lines(graph, &pins));
    (pins, observed)
}

/// Merges pins that came out the same from several jobs, keeping every job's entry.
fn merge_into(out: &mut Vec<Pin>, pin: Pin) {
    let same = |p: &Pin| {
        p.location == pin.location
            && p.branch == pin.branch
            && p.role == pin.role
            && p.written.value == pin.written.value
            && p.k.value == pin.k.value
            && p.model.value == pin.model.value
    };
    match out.iter_mut().find(|p| same(p)) {
        Some(existing) => existing.entries.extend(pin.entries),
        None => out.push(pin),
    }
}

/// Jobs whose launcher runs a single-node script, by script.
fn jobs_by_script<'g>(graph: &'g Graph) -> BTreeMap<&'g str, Vec<usize>> {
    let mut map: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, facts) in graph.launch.iter().enumerate() {
        let job = &graph.jobs[i];
        if graph.entry(job).multinode || graph.point(job).get("CONFIG_FILE").is_some() {
            continue;
        }
        if let Some((path, _)) = facts.as_ref().and_then(|f| f.script.as_ref()) {
            map.entry(path.as_str()).or_default().push(i);
        }
    }
    map
}

fn script_pins(graph: &Graph, pins: &mut Vec<Pin>, observed: &mut Vec<Observed>) {
    let by_script = jobs_by_script(graph);
    let candidates = graph
        .scripts
        .iter()
        .filter(|script| graph.shell_knobs.contains(script.rel.as_str()) && !script.rel.starts_with("runners/"));
    let (retired, judged): (Vec<&Script>, Vec<&Script>) =
        candidates.partition(|script| super::archived(&script.rel) && !by_script.contains_key(script.rel.as_str()));
    observed.extend(super::archived_notes(retired.iter().map(|s| s.rel.as_str()), true));
    let per_script: Vec<(Vec<Pin>, Vec<Observed>)> = judged
        .par_iter()
        .map(|script| one_script(graph, script, by_script.get(script.rel.as_str()).map_or(&[], Vec::as_slice)))
        .collect();
    let mut seen = std::collections::HashSet::new();
    for (script_pins, script_observed) in per_script {
        for p in script_pins {
            merge_into(pins, p);
        }
        for f in script_observed {
            if seen.insert(f.clone()) {
                observed.push(f);
            }
        }
    }
}

/// The pins of one script: run once per distinct model among the jobs that reach it (or once with no
/// environment when none does), then matched to the jobs that select its lookup-table arms.
fn one_script(graph: &Graph, script: &Script, jobs: &[usize]) -> (Vec<Pin>, Vec<Observed>) {
    let prepared = sites::PreparedScript::new(script);
    let mut runs: Vec<(Option<String>, Discovery)> = Vec::new();
    if jobs.is_empty() {
        runs.push((None, sites::discover(script, &prepared, graph.scripts(), &graph.tables, &Env::new())));
    }
    for &j in jobs {
        let job = &graph.jobs[j];
        let key = job.env.get("MODEL").map(|v| v.value.clone());
        let entry = job.entry_ref.clone();
        let index = match runs.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                runs.push((key, sites::discover(script, &prepared, graph.scripts(), &graph.tables, &job.env)));
                runs.len() - 1
            }
        };
        for p in &mut runs[index].1.pins {
            p.entries.push(entry.clone());
        }
    }
    let selections = table_selection(graph, script);
    let mut pins = Vec::new();
    let mut observed: Vec<Observed> = selections.iter().flat_map(|s| s.missing.iter().cloned()).collect();
    for (_, d) in runs {
        observed.extend(d.observed);
        for mut p in d.pins {
            if let Some(selection) = selections.iter().find(|s| p.arms.contains(&s.arm)) {
                for (entry, model) in &selection.jobs {
                    p.entries.push(entry.clone());
                    if p.model.how == How::Branch || p.model.value.is_none() {
                        p.model = model.clone();
                    }
                }
            }
            merge_into(&mut pins, p);
        }
    }
    (pins, observed)
}

/// Jobs that run a recipe (its `CONFIG_FILE`), with their launcher facts.
fn jobs_of_recipe<'g>(graph: &'g Graph, rel: &str) -> Vec<(usize, &'g Job)> {
    graph
        .jobs
        .iter()
        .enumerate()
        .filter(|(_, j)| graph.point(j).get("CONFIG_FILE").and_then(|s| recipe_path(&s.value)).as_deref() == Some(rel))
        .collect()
}

/// How eval runs of a job avoid a recipe's knob: the twin, a launcher strip, or nothing.
fn recipe_route(graph: &Graph, index: usize, job: &Job, rel: &str, knob: Knob) -> Fact<EvalRoute> {
    let point = graph.point(job);
    let launch = graph.launch[index].as_ref();
    let entry = &graph.entry(job).name;
    // Eval runs read the twin instead, whatever it holds (a pin in the twin is that file's own leak).
    if let (Some(twin), Some(at)) = (point.get("EVAL_CONFIG_FILE"), launch.and_then(|l| l.eval_twin.clone())) {
        return Fact::known(
            EvalRoute::Twin,
            How::Entry,
            format!("entry {entry}: EVAL_CONFIG_FILE={} (swapped in at {at})", twin.value),
            Some(Location::new(&graph.entry(job).file, twin.line)),
        );
    }
    if let Some(strip) = launch.and_then(|l| {
        l.strips
            .iter()
            .find(|s| knob.name().contains(&s.pattern) && (rel == s.dir || rel.starts_with(&format!("{}/", s.dir))))
    }) {
        return Fact::known(
            EvalRoute::LauncherStrip,
            How::Branch,
            format!("{} deletes {} for EVAL_ONLY runs of entry {entry}", strip.at, strip.pattern),
            Some(strip.at.clone()),
        );
    }
    let launcher = job.launcher.as_deref().unwrap_or("its launcher");
    // A step of the eval path the check cannot read may drop it: that is undecided, not a leak.
    if let Some(u) = launch.and_then(|l| l.unfollowed.iter().find(|u| u.may_reach(rel))) {
        return Fact::unresolved(format!("entry {entry} on {launcher}: {} at {}", u.why, u.at));
    }
    Fact::known(
        EvalRoute::Leaks,
        How::Inferred,
        format!("entry {entry} on {launcher}: no EVAL_CONFIG_FILE twin and no strip of {}", knob.name()),
        None,
    )
}

fn recipe_pins(graph: &Graph, pins: &mut Vec<Pin>, observed: &mut Vec<Observed>) {
    for recipe in graph.recipes.values().filter(|r| r.has_pins() || !r.duplicates.is_empty()) {
        one_recipe(graph, recipe, pins, observed);
    }
}

/// The pins of one recipe, each with the entries of the jobs that run it (or read it as their eval twin)
/// and the route those jobs' eval runs take.
fn one_recipe(graph: &Graph, recipe: &Recipe, pins: &mut Vec<Pin>, observed: &mut Vec<Observed>) {
    let (found, mut notes) = recipe.pins();
    observed.append(&mut notes);
    let jobs = jobs_of_recipe(graph, &recipe.rel);
    let twin_of: Vec<&Job> = graph
        .jobs
        .iter()
        .filter(|j| {
            graph.point(j).get("EVAL_CONFIG_FILE").and_then(|s| recipe_path(&s.value)).as_deref()
                == Some(recipe.rel.as_str())
        })
        .collect();
    for mut pin in found {
        if pin.inert() {
            pins.push(pin);
            continue;
        }
        pin.entries =
            jobs.iter().map(|(_, j)| j.entry_ref.clone()).chain(twin_of.iter().map(|j| j.entry_ref.clone())).collect();
        pin.eval = if let Some(job) = twin_of.first() {
            // Eval runs use this recipe: a pin here reaches them whatever else guards it.
            let entry = graph.entry(job);
            let setting = graph.point(job).get("EVAL_CONFIG_FILE").map_or(entry.line, |s| s.line);
            Fact::known(
                EvalRoute::Leaks,
                How::Entry,
                format!("it is the eval twin of entry {} (EVAL_CONFIG_FILE at {}:{setting})", entry.name, entry.file),
                Some(Location::new(&entry.file, setting)),
            )
        } else if jobs.is_empty() && recipe.is_data() {
            // A data file (per-model flags and settings) that launch code reads: how it is read is not
            // followed, so neither is what keeps its settings out of eval runs.
            Fact::unresolved(
                "a data file no config entry runs as its recipe: the launch code that reads it is not followed",
            )
        } else if jobs.is_empty() {
            Fact::known(
                EvalRoute::Leaks,
                How::Inferred,
                "no config entry runs it, and nothing in the recipe keeps it out of eval runs".to_string(),
                None,
            )
        } else {
            let routes: Vec<Fact<EvalRoute>> =
                jobs.iter().map(|(i, j)| recipe_route(graph, *i, j, &recipe.rel, pin.knob)).collect();
            routes.iter().find(|r| r.value == Some(EvalRoute::Leaks)).cloned().unwrap_or_else(|| routes[0].clone())
        };
        pins.push(pin);
    }
}

/// A script's model, when no entry runs it: the model of an entry whose `model-prefix` starts its name.
fn model_from_prefix(graph: &Graph, pin: &mut Pin) {
    let name = pin.location.file.rsplit('/').next().unwrap_or("");
    let prefix = name.split('_').next().unwrap_or("");
    if let Some(model) = graph.prefix_models.get(prefix) {
        pin.model = Fact::known(
            model.name.clone(),
            How::Inferred,
            format!("script name prefix {prefix}: the model of entries with model-prefix {prefix}"),
            Some(model.at.clone()),
        );
    }
}
