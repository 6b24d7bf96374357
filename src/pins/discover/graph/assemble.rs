//! Pins from the launch graph: scripts run with each job's environment, lookup tables selected by the
//! jobs' variables, recipes per role, injections, and for each pin the route eval runs take.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use super::jobs::Job;
use super::tables::table_selection;
use super::{Graph, recipe_path};
use crate::bash::Script;
use crate::bash::resolve::Env;
use crate::pins::discover::recipe::Recipe;
use crate::pins::discover::script::sites::{self, Discovery};
use crate::pins::observed::Observed;
use crate::pins::{Edit, EntryRef, EvalRoute, Fact, How, Knob, Location, Mechanism, Pin, Role};

/// Where the injector lives, and what it must do for injected pins to stay out of eval runs.
pub(crate) const INJECTOR: &str = "runners/inject_synthetic_acceptance.py";

/// Every pin of the graph and what was recorded about them.
pub(crate) fn assemble(graph: Graph) -> (Vec<Pin>, Vec<Observed>) {
    let mut pins = Vec::new();
    let mut observed = graph.observed.clone();
    script_pins(&graph, &mut pins, &mut observed);
    recipe_pins(&graph, &mut pins, &mut observed);
    injected_pins(&graph, &mut pins, &mut observed);
    missing_and_twins(&graph, &pins, &mut observed);
    for pin in &mut pins {
        if pin.entries.is_empty() && pin.model.value.is_none() {
            model_from_prefix(&graph, pin);
        }
        pin.entries.sort();
        pin.entries.dedup_by(|a, b| a.name == b.name);
    }
    observed.extend(super::prose::lines(&graph, &pins));
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
            pin.entries = jobs
                .iter()
                .map(|(_, j)| j.entry_ref.clone())
                .chain(twin_of.iter().map(|j| j.entry_ref.clone()))
                .collect();
            pin.eval = if let Some(job) = twin_of.first() {
                // Eval runs use this recipe: a pin here reaches them whatever else guards it.
                let entry = graph.entry(job);
                let setting = graph.point(job).get("EVAL_CONFIG_FILE").map_or(entry.line, |s| s.line);
                Fact::known(
                    EvalRoute::Leaks,
                    How::Entry,
                    format!(
                        "it is the eval twin of entry {} (EVAL_CONFIG_FILE at {}:{setting})",
                        entry.name, entry.file
                    ),
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
}

/// Whether the injector keeps out of eval runs (it returns early on `EVAL_ONLY=true`).
fn injector_route(graph: &Graph) -> Fact<EvalRoute> {
    match graph.injector.as_deref() {
        Some(text) if text.contains("EVAL_ONLY") => {
            let line = text
                .lines()
                .position(|l| l.contains("EVAL_ONLY") && !l.trim_start().starts_with('#'))
                .map_or(1, |i| i + 1);
            Fact::known(
                EvalRoute::Injector,
                How::Inferred,
                format!("{INJECTOR} returns early when EVAL_ONLY=true"),
                Some(Location::new(INJECTOR, line)),
            )
        }
        Some(_) => Fact::known(EvalRoute::Leaks, How::Inferred, format!("{INJECTOR} does not test EVAL_ONLY"), None),
        None => {
            Fact::known(EvalRoute::Leaks, How::Inferred, format!("no {INJECTOR} to keep it out of eval runs"), None)
        }
    }
}

/// The roles an injector backend writes the pin into (`runners/synthetic_injectors/`): vLLM rewrites every
/// single-quoted `speculative-config`; SGLang adds the triple to every two-space-indented `*_environment:`.
fn injected_roles(recipe: &Recipe, framework: &str) -> Result<Vec<Option<Role>>, String> {
    match framework {
        "dynamo-vllm" => {
            if recipe.vllm_spec_configs == 0 {
                return Err(
                    "the vLLM injector finds no single-quoted speculative-config to rewrite and exits with an error"
                        .into(),
                );
            }
            let roles: Vec<Option<Role>> =
                recipe.roles().into_iter().filter(|r| recipe.facts(Some(*r)).spec).map(Some).collect();
            Ok(if roles.is_empty() { vec![None] } else { roles })
        }
        "dynamo-sglang" => {
            if recipe.sglang_env_blocks.is_empty() {
                return Err(
                    "the SGLang injector finds no two-space-indented *_environment block and exits with an error"
                        .into(),
                );
            }
            Ok(recipe.sglang_env_blocks.iter().map(|r| Some(*r)).collect())
        }
        other => Err(format!("no injector is registered for framework '{other}': the run exits with an error")),
    }
}

fn injected_pins(graph: &Graph, pins: &mut Vec<Pin>, observed: &mut Vec<Observed>) {
    let route = injector_route(graph);
    let mut done = BTreeSet::new();
    for (index, job) in graph.jobs.iter().enumerate() {
        let entry = graph.entry(job);
        let point = graph.point(job);
        let Some(length) = point.get("SYNTHETIC_ACCEPTANCE_LENGTH") else { continue };
        let location = Location::new(&entry.file, length.line);
        let enabled = point.get("SYNTHETIC_ACCEPTANCE").is_some_and(|s| s.value.eq_ignore_ascii_case("true"));
        if !enabled {
            observed.push(Observed::InjectorDisabled { at: location, value: length.value.clone() });
            continue;
        }
        if let Some(launcher) = &job.launcher
            && graph.launch[index].as_ref().is_some_and(|l| l.injector.is_none())
        {
            observed.push(Observed::InjectorNotCalled {
                at: location,
                entry: entry.name.clone(),
                launcher: launcher.clone(),
                value: length.value.clone(),
            });
            continue;
        }
        if !done.insert((job.entry, job.point)) {
            continue;
        }
        let written = match length.value.trim().parse::<f64>() {
            Ok(v) => Fact::known(
                v,
                How::Injected,
                format!("SYNTHETIC_ACCEPTANCE_LENGTH={}", length.value),
                Some(location.clone()),
            ),
            Err(_) => Fact {
                value: None,
                how: How::Unresolved,
                text: format!("'{}' is not a number", length.value),
                at: Some(location.clone()),
            },
        };
        let config = point.get("CONFIG_FILE").map(|s| s.value.clone()).unwrap_or_default();
        let Some(recipe) = recipe_path(&config).and_then(|p| graph.recipes.get(&p)) else {
            let mut pin = Recipe::read(&config, "", &crate::yaml::Node::default(), &[]).pin(
                None,
                location.clone(),
                Mechanism::MasterConfig,
                Knob::InjectedLength,
                written,
                config.clone(),
            );
            pin.k = Fact::unresolved(format!("recipe {config} is not in the repository"));
            pin.entries.push(job.entry_ref.clone());
            pin.eval = route.clone();
            pins.push(pin);
            continue;
        };
        let framework = entry.framework.as_deref().unwrap_or("");
        let roles = match injected_roles(recipe, framework) {
            Ok(roles) => roles,
            Err(why) => {
                observed.push(Observed::NotInjectable {
                    at: location,
                    value: length.value.clone(),
                    recipe: recipe.rel.clone(),
                    why,
                });
                continue;
            }
        };
        for role in roles {
            let branch = match role {
                Some(r) => format!("{} role {r}", recipe.rel),
                None => recipe.rel.clone(),
            };
            let mut pin = recipe.pin(
                role,
                location.clone(),
                Mechanism::MasterConfig,
                Knob::InjectedLength,
                written.clone(),
                branch,
            );
            if !pin.inert() {
                pin.eval = route.clone();
            }
            pin.edit = length.span.map(|span| Edit { file: entry.file.clone(), span });
            pin.entries.push(job.entry_ref.clone());
            if pin.inert() {
                let role = role.map_or("recipe's", Role::name);
                observed.push(Observed::InjectedIntoRole {
                    at: location.clone(),
                    role: role.to_string(),
                    recipe: recipe.rel.clone(),
                });
            }
            pins.push(pin);
        }
    }
}

/// Agentic spec-decoding jobs whose script or recipe pins nothing, targets the repository does not hold,
/// and eval twins that carry a pin.
fn missing_and_twins(graph: &Graph, pins: &[Pin], observed: &mut Vec<Observed>) {
    let mut reported = BTreeSet::new();
    // A script's statement facts do not depend on the job: read once per script, not once per job.
    let mut prepared: BTreeMap<&str, sites::PreparedScript> = BTreeMap::new();
    for (index, job) in graph.jobs.iter().enumerate() {
        let entry = graph.entry(job);
        let point = graph.point(job);
        let eref = job.entry_ref.clone();
        if let Some(twin) = point.get("EVAL_CONFIG_FILE")
            && recipe_path(&twin.value).and_then(|p| graph.recipes.get(&p)).is_none()
            && reported.insert((Location::new(&entry.file, twin.line), "twin-missing"))
        {
            observed.push(Observed::EvalTwinMissing {
                at: Location::new(&entry.file, twin.line),
                twin: twin.value.clone(),
                entry: entry.name.clone(),
            });
        }
        if !(point.agentic() && point.speculative()) {
            continue;
        }
        if let Some(config) = point.get("CONFIG_FILE") {
            let at = Location::new(&entry.file, config.line);
            match recipe_path(&config.value).and_then(|p| graph.recipes.get(&p)) {
                Some(r) if !r.has_pins() && point.get("SYNTHETIC_ACCEPTANCE_LENGTH").is_none() && r.speculative() => {
                    let loc = Location::new(&r.rel, r.spec_line().unwrap_or(1));
                    if reported.insert((loc.clone(), "missing")) {
                        observed.push(Observed::RecipeWithoutPin {
                            at: loc,
                            entry: entry.name.clone(),
                            entry_at: eref.at.to_string(),
                            recipe: r.rel.clone(),
                        });
                    }
                }
                Some(_) => {}
                None => {
                    if reported.insert((at.clone(), "recipe-missing")) {
                        observed.push(Observed::RecipeMissing {
                            at,
                            recipe: config.value.clone(),
                            entry: entry.name.clone(),
                        });
                    }
                }
            }
            continue;
        }
        if entry.multinode {
            if point.get("SYNTHETIC_ACCEPTANCE_LENGTH").is_none()
                && let Some(found) = shared_code_without_pin(graph, index, &eref)
                && reported.insert((found.0.clone(), "missing"))
            {
                observed.push(found.1);
            }
            continue;
        }
        let at = Location::new(&entry.file, point.line);
        let Some(launcher) = &job.launcher else {
            if reported.insert((at.clone(), "launcher")) {
                let runner = entry.runner.as_deref().unwrap_or("?");
                observed.push(Observed::LauncherUnknown { at, runner: runner.to_string(), entry: entry.name.clone() });
            }
            continue;
        };
        let facts = graph.launch[index].as_ref();
        match facts.and_then(|f| f.script.as_ref()) {
            None => {
                if reported.insert((at.clone(), "script")) {
                    let tried = facts.map(|f| f.tried.join(", ")).unwrap_or_default();
                    observed.push(Observed::ScriptMissing {
                        at,
                        entry: entry.name.clone(),
                        launcher: launcher.clone(),
                        tried,
                    });
                }
            }
            Some((path, _)) => {
                let Some(script) = graph.script(path) else { continue };
                // A knob's spelling in the text (a comment, another engine's knob) makes the script a
                // candidate, not a pinned one: what decides is a pin reaching this entry that its engine
                // reads.
                let engine = entry.framework.as_deref().and_then(crate::engine::Engine::of_framework);
                let pinned = pins.iter().any(|p| {
                    p.entries.iter().any(|e| e.name == entry.name)
                        && (engine.is_none() || p.knob.engine().is_none_or(|e| Some(e) == engine))
                });
                if !graph.shell_knobs.contains(path.as_str()) || !pinned {
                    let facts = prepared.entry(path.as_str()).or_insert_with(|| sites::PreparedScript::new(script));
                    let spec_line = facts.spec_line(script);
                    let loc = Location::new(path, spec_line.unwrap_or(1));
                    if spec_line.is_some() && reported.insert((loc.clone(), "missing")) {
                        let spec = point.spec.as_deref().unwrap_or("?");
                        let (entry_name, entry_at) = (entry.name.clone(), eref.at.to_string());
                        observed.push(match engine.filter(|_| graph.shell_knobs.contains(path.as_str())) {
                            // It spells knobs, none of which its engine reads for this entry.
                            Some(engine) => Observed::ScriptWithoutEnginePin {
                                at: loc,
                                entry: entry_name,
                                entry_at,
                                script: path.clone(),
                                engine: engine.display_name().to_string(),
                                knobs: super::path::knobs_read(engine).join(", "),
                            },
                            None => Observed::ScriptWithoutPin {
                                at: loc,
                                entry: entry_name,
                                entry_at,
                                script: path.clone(),
                                spec: spec.to_string(),
                            },
                        });
                    }
                }
            }
        }
    }
}

/// A multi-node job served by shared launch code (no recipe): the path its multi-node script starts, when
/// a file on it configures the engine's speculation and none writes a knob the engine reads.
fn shared_code_without_pin(graph: &Graph, index: usize, eref: &EntryRef) -> Option<(Location, Observed)> {
    use super::path;
    let entry = graph.entry(&graph.jobs[index]);
    let engine = crate::engine::Engine::of_framework(entry.framework.as_deref()?)?;
    let hops = graph.launch_path(index)?;
    let knobs = path::knobs_read(engine);
    let text = |rel: &str| graph.files.get(rel).copied();
    if hops.iter().filter_map(|h| text(&h.file)).any(|f| path::first_line_with(f, &knobs).is_some()) {
        return None;
    }
    let (file, line) = hops
        .iter()
        .find_map(|h| Some((h.file.as_str(), path::first_line_with(text(&h.file)?, path::k_settings(engine))?)))?;
    let at = Location::new(file, line);
    // The path back to the start, each file through the one that named it.
    let mut steps = vec![file.to_string()];
    let mut cur = file;
    while let Some(by) = hops.iter().find(|h| h.file == cur).and_then(|h| h.named_at.as_ref()) {
        if steps.len() > hops.len() {
            break;
        }
        steps.push(by.file.clone());
        cur = &by.file;
    }
    steps.reverse();
    let observed = Observed::SharedCodeWithoutPin {
        at: at.clone(),
        entry: entry.name.clone(),
        entry_at: eref.at.to_string(),
        engine: engine.display_name().to_string(),
        knobs: knobs.join(", "),
        path: steps.join(" → "),
    };
    Some((at, observed))
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
