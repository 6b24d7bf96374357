//! Jobs: each relevant search-space point on each launcher its runner reaches, with the environment the
//! workflow gives the job (benchmark templates under `.github/workflows/`).

use super::config::{Entry, Point};
use super::recipe_path;
use super::runner::Runners;
use crate::bash::resolve::{Env, EnvValue};
use crate::pins::{EntryRef, Location};

/// One search-space point run on one launcher.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    /// Index of the entry.
    pub entry: usize,
    /// Index of the point in the entry.
    pub point: usize,
    /// Its entry, named at its point's line: what a pin the job reaches lists (a record, so assembly reads
    /// it off the job instead of asking the graph).
    pub entry_ref: EntryRef,
    /// The launcher (repository-relative), when the runner's launcher exists.
    pub launcher: Option<String>,
    /// The environment the job's scripts see.
    pub env: Env,
}

/// The jobs of relevant points: one per launcher the entry's runner reaches, or one without a launcher.
pub(super) fn jobs_of(
    entries: &[Entry],
    runners: &Runners,
    launcher_paths: &[String],
    has_knob: &dyn Fn(&str) -> bool,
) -> Vec<Job> {
    let mut jobs = Vec::new();
    for (ei, entry) in entries.iter().enumerate() {
        for (pi, point) in entry.points.iter().enumerate() {
            if !relevant(point, has_knob) {
                continue;
            }
            let launchers = entry.runner.as_deref().map(|r| runners.launchers(r, launcher_paths)).unwrap_or_default();
            let entry_ref = || EntryRef { name: entry.name.clone(), at: Location::new(&entry.file, point.line) };
            if launchers.is_empty() {
                let env = job_env(entry, point, None);
                jobs.push(Job { entry: ei, point: pi, entry_ref: entry_ref(), launcher: None, env });
            }
            for (launcher, node) in launchers {
                jobs.push(Job {
                    entry: ei,
                    point: pi,
                    entry_ref: entry_ref(),
                    launcher: Some(launcher),
                    env: job_env(entry, point, Some(&node)),
                });
            }
        }
    }
    jobs
}

/// Whether a job needs the check: agentic spec decoding must be pinned; a recipe with a knob needs its
/// eval route; an injection needs checking.
fn relevant(point: &Point, has_knob: &dyn Fn(&str) -> bool) -> bool {
    (point.agentic() && point.speculative())
        || point.get("SYNTHETIC_ACCEPTANCE_LENGTH").is_some()
        || point.get("EVAL_CONFIG_FILE").is_some()
        || point.get("CONFIG_FILE").and_then(|s| recipe_path(&s.value)).is_some_and(|p| has_knob(&p))
}

/// The environment the workflow gives a job (benchmark templates under `.github/workflows/`).
pub(super) fn job_env(entry: &Entry, point: &Point, node: Option<&str>) -> Env {
    let at = Location::new(&entry.file, entry.line);
    let mut env = Env::new();
    let mut set = |k: &str, v: String, at: Location, source: String| {
        env.insert(k.to_string(), EnvValue { value: v, at, source });
    };
    let from = |field: &str| format!("{field} of entry {}", entry.name);
    if let Some(m) = &entry.model {
        set("MODEL", m.clone(), at.clone(), from("model"));
        let base = m.rsplit('/').next().unwrap_or(m).to_string();
        set("MODEL_NAME", base, at.clone(), format!("${{MODEL##*/}} of entry {}", entry.name));
    }
    if let Some(p) = &entry.model_prefix {
        set("MODEL_PREFIX", p.clone(), at.clone(), from("model-prefix"));
        set("EXP_NAME", format!("{p}_{}", point.scenario), at.clone(), from("model-prefix"));
    }
    if let Some(p) = &entry.precision {
        set("PRECISION", p.clone(), at.clone(), from("precision"));
    }
    if let Some(f) = &entry.framework {
        set("FRAMEWORK", f.clone(), at.clone(), from("framework"));
    }
    set("SPEC_DECODING", point.spec.clone().unwrap_or_else(|| "none".into()), at.clone(), from("spec-decoding"));
    let agentic = point.agentic();
    set("SCENARIO_SUBDIR", if agentic { "agentic/" } else { "fixed_seq_len/" }.into(), at.clone(), from("scenario"));
    set("IS_AGENTIC", if agentic { "1" } else { "0" }.into(), at.clone(), from("scenario"));
    // benchmark-multinode-tmpl.yml exports IS_MULTINODE=true; the single-node template leaves it unset.
    let multinode = if entry.multinode { "true" } else { "" };
    set("IS_MULTINODE", multinode.into(), at.clone(), from("multinode"));
    if let Some(node) = node {
        set("RUNNER_NAME", node.to_string(), at.clone(), from("runner"));
    }
    set("GITHUB_WORKSPACE", String::new(), at, "the checkout root".into());
    for s in &point.settings {
        set(
            &s.key,
            s.value.clone(),
            Location::new(&entry.file, s.line),
            format!("{}={} of entry {}", s.key, s.value, entry.name),
        );
    }
    env
}
