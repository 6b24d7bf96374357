//! Injected pins: a config entry's `SYNTHETIC_ACCEPTANCE_LENGTH` written into its recipe's roles by the
//! injector (`runners/inject_synthetic_acceptance.py` and its backends), and whether the injector keeps
//! out of eval runs.

use std::collections::BTreeSet;

use super::{Graph, recipe_path};
use crate::pins::discover::recipe::Recipe;
use crate::pins::observed::Observed;
use crate::pins::{Edit, EvalRoute, Fact, How, Knob, Location, Mechanism, Pin, Role};

/// Where the injector lives, and what it must do for injected pins to stay out of eval runs.
pub(super) const INJECTOR: &str = "runners/inject_synthetic_acceptance.py";

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

/// The pins the injector writes: each enabled `SYNTHETIC_ACCEPTANCE_LENGTH` of a job, into the roles of its
/// recipe the injector backend rewrites, with the route eval runs take; what keeps one from being written.
pub(super) fn injected_pins(graph: &Graph, pins: &mut Vec<Pin>, observed: &mut Vec<Observed>) {
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
