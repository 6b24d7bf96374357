//! What a job's path lacks: a script or recipe that pins nothing for an agentic spec-decoding job (shared
//! launch code included), a recipe, script, launcher or eval twin the repository does not hold, recorded
//! for the missing-pin rule to judge.

use std::collections::{BTreeMap, BTreeSet};

use super::{Graph, recipe_path};
use crate::pins::discover::script::sites;
use crate::pins::observed::Observed;
use crate::pins::{EntryRef, Location, Pin};

/// Agentic spec-decoding jobs whose script or recipe pins nothing, targets the repository does not hold,
/// and eval twins that carry a pin.
pub(super) fn observe(graph: &Graph, pins: &[Pin], observed: &mut Vec<Observed>) {
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
