//! The thinking mode a pin's deployment serves where no file states one: who renders its prompts and at
//! what version, read from the config entries that run it, decided by the serving-defaults table
//! ([`crate::pins::thinking`]). A default the version places decides like a stated mode; one it does not
//! place leaves both modes open ([`OpenMode`]), and so does a run whose prompts the client templates.

use std::collections::{BTreeMap, HashMap};

use crate::curve::ThinkingMode;
use crate::diagnostic::Severity;
use crate::engine::Engine;
use crate::pins::discover::graph::config::{Entry, Point};
use crate::pins::discover::graph::recipe_path;
use crate::pins::observed::ImageLine;
use crate::pins::thinking::{self, Decision, EngineVersion, Renderer};
use crate::pins::{Fact, How, Location, Mechanism, Pin};

/// Why a pin's thinking mode stays open between both modes, and what would decide it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OpenMode {
    /// Why no default decides (`vLLM image …: its tag states no release or build date`).
    pub(crate) why: String,
    /// What would decide (the image's build date, a stated mode).
    pub(crate) decides: String,
    /// A warning where a version would decide; a note where no server default can (client-templated runs).
    pub(crate) severity: Severity,
}

/// The served mode of a pin, as far as the files and the table decide it.
pub(crate) enum Served {
    /// A file states it, or no golden key matched: the pin's own fact stands.
    AsWritten,
    /// A default decides it; with the reasoning effort it runs at where that version of the renderer
    /// changed what the effort renders (a curve recording the effort's name alone may mean the other).
    Default(Fact<ThinkingMode>, Option<Fact<String>>),
    /// Both modes stay open.
    Open(OpenMode),
}

/// The entries, image statements and recipes' renderers discovery recorded.
pub(crate) struct Context<'a> {
    entries: HashMap<&'a str, &'a Entry>,
    image_lines: &'a [ImageLine],
    recipe_renderers: &'a BTreeMap<String, Fact<Renderer>>,
}

impl<'a> Context<'a> {
    pub(crate) fn new(
        entries: &'a [Entry],
        image_lines: &'a [ImageLine],
        recipe_renderers: &'a BTreeMap<String, Fact<Renderer>>,
    ) -> Context<'a> {
        Context { entries: entries.iter().map(|e| (e.name.as_str(), e)).collect(), image_lines, recipe_renderers }
    }

    /// Who renders `pin`'s prompts and at what version, from the entries that run it; `None` where nothing
    /// says who renders.
    fn deployment(&self, pin: &Pin) -> Option<Deployment> {
        let entries: Vec<&Entry> =
            pin.entries.iter().filter_map(|e| self.entries.get(e.name.as_str()).copied()).collect();
        // A pin a master config writes is run by the point that writes it; any other by every speculative point.
        let points: Vec<&Point> = entries
            .iter()
            .flat_map(|e| e.points.iter().filter(|p| p.speculative()))
            .filter(|p| {
                pin.mechanism != Mechanism::MasterConfig || p.settings.iter().any(|s| Some(s.line) == pin.location.line)
            })
            .collect();
        // The recipes the pin runs in: its own file for a recipe's pin, else its points' `CONFIG_FILE`s.
        let recipes: Vec<Option<String>> = if pin.mechanism == Mechanism::Recipe {
            vec![Some(pin.location.file.clone())]
        } else {
            points.iter().map(|p| p.get("CONFIG_FILE").and_then(|s| recipe_path(&s.value))).collect()
        };
        let stated: Vec<Option<&Fact<Renderer>>> =
            recipes.iter().map(|r| r.as_ref().and_then(|r| self.recipe_renderers.get(r))).collect();
        let (renderer, rendered_by) = renderer(&entries, &points, &stated, pin.engine.value)?;
        let version = version(&entries, self.image_lines);
        let at = entries.first().map(|e| Location::new(&e.file, e.line));
        Some(Deployment { renderer, rendered_by, version, at })
    }

    /// Who renders the prompts of `entry`'s `point` where no pin of it says, and at what version: as for a
    /// pin its engine reads (the renderer its recipe states, Dynamo's frontend, else the engine), except the
    /// benchmark client, since a prediction needs a curve where the client templates random-token prompts too.
    pub(crate) fn unpinned(&self, entry: &Entry, point: &Point) -> Option<(Renderer, EngineVersion)> {
        let recipe = point.get("CONFIG_FILE").and_then(|s| recipe_path(&s.value));
        let stated = [recipe.as_ref().and_then(|r| self.recipe_renderers.get(r))];
        let engine = entry.framework.as_deref().and_then(Engine::of_framework);
        let (renderer, _) = renderer(&[entry], &[], &stated, engine)?;
        Some((renderer, version(&[entry], self.image_lines)))
    }

    /// The served mode of `pin`, whose model matched the golden key `key`.
    pub(crate) fn served(&self, pin: &Pin, key: &str) -> Served {
        if pin.mode.value.is_some() {
            return Served::AsWritten;
        }
        let Some(Deployment { renderer, rendered_by, version, at }) = self.deployment(pin) else {
            return Served::AsWritten;
        };
        if renderer == Renderer::Client {
            return Served::Open(OpenMode {
                why: format!("{renderer} renders the prompt ({rendered_by})"),
                decides: "no server default decides the mode; the golden curves were collected on real prompts".into(),
                severity: Severity::Note,
            });
        }
        let by = if rendered_by.is_empty() { renderer.to_string() } else { format!("{renderer} ({rendered_by})") };
        match thinking::decide(key, renderer, &version) {
            Decision::Decided(row) => {
                let versioned = if row.versioned() { format!("{}; ", version.text) } else { String::new() };
                let by = if row.is_template() { format!("the model's chat template, as {by} applies it,") } else { by };
                let text = format!("default: {by} serves {} ({versioned}{})", row.served(), row.cite());
                let effort = row.effort.as_ref().zip(row.effort_renders.as_ref()).map(|(effort, renders)| {
                    let says = renders_before(&format!("{by}'s default effort {effort}"), renders, &versioned, row);
                    Fact::known(effort.clone(), How::Default, says, at.clone())
                });
                Served::Default(Fact::known(row.mode, How::Default, text, at), effort)
            }
            Decision::Open(rows) => Served::Open(OpenMode {
                why: format!(
                    "{} and the version run is not placed ({})",
                    thinking::open_default(&by, &rows),
                    version.text
                ),
                decides: format!(
                    "what would decide: the image's release or build date stated in the repository, or a stated thinking mode ({})",
                    rows.iter()
                        .map(|r| format!("{}:{}", thinking::DEFAULTS_ORIGIN, r.line))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                severity: Severity::Warning,
            }),
            Decision::Unknown => Served::AsWritten,
        }
    }

    /// Where `pin` states the reasoning effort whose rendering its renderer changed at the version it runs
    /// (vLLM's DeepSeek-V4 `high` from 77434861904a renders the prompt `max` rendered before): what it
    /// renders, said as the default's effort is. A stated effort is read like the default's: a curve whose
    /// header records the effort's name alone may have been collected under either meaning.
    pub(crate) fn stated_effort_renders(&self, pin: &Pin, key: &str) -> Option<String> {
        let effort = pin.effort.value.as_deref()?;
        let Deployment { renderer, version, .. } = self.deployment(pin)?;
        let Decision::Decided(row) = thinking::decide(key, renderer, &version) else { return None };
        let renders = row.effort_renders.as_ref()?;
        let same = row.effort.as_deref().is_some_and(|e| e.eq_ignore_ascii_case(effort));
        (same && pin.mode.value == Some(row.mode)).then(|| {
            let at = pin.effort.at.as_ref().map(|a| format!(" at {a}")).unwrap_or_default();
            let versioned = if row.versioned() { format!("{}; ", version.text) } else { String::new() };
            renders_before(&format!("effort {effort} as stated ({}{at})", pin.effort.text), renders, &versioned, row)
        })
    }
}

/// The pin with the thinking mode its deployment serves where no file states one (a default the table
/// decides, which then decides like a literal), whether both modes stay open instead, and what the
/// reasoning effort it runs renders where the renderer's version changed that (the default's effort or a
/// stated one alike).
pub(crate) fn with_served_mode(
    mut pin: Pin,
    key: &str,
    context: &Context<'_>,
) -> (Pin, Option<OpenMode>, Option<String>) {
    match context.served(&pin, key) {
        Served::AsWritten => {
            let renders = context.stated_effort_renders(&pin, key);
            (pin, None, renders)
        }
        Served::Default(mode, effort) => {
            pin.mode = mode;
            let renders = match effort {
                Some(effort) if pin.effort.value.is_none() => {
                    let says = effort.text.clone();
                    pin.effort = effort;
                    Some(says)
                }
                _ => context.stated_effort_renders(&pin, key),
            };
            (pin, None, renders)
        }
        Served::Open(open) => (pin, Some(open), None),
    }
}

/// Who renders a pin's prompts, at what version.
struct Deployment {
    renderer: Renderer,
    /// What placed the renderer there (`framework dynamo-vllm`), empty for the engine itself.
    rendered_by: String,
    version: EngineVersion,
    /// The first entry that runs the pin.
    at: Option<Location>,
}

/// `vLLM's default effort high, which at this version renders the prompt effort max rendered before (…)`.
fn renders_before(effort: &str, renders: &str, versioned: &str, row: &thinking::ServingDefault) -> String {
    format!(
        "{effort}, which at this version renders the prompt effort {renders} rendered before ({versioned}{})",
        row.cite()
    )
}

/// Who renders the prompts of `points` of `entries` for a pin read by `engine`: the benchmark client where
/// every point is a fixed-length run (random-token prompts templated on the client and sent as plain
/// completions); the renderer the pin's recipes state (`stated`, one per recipe: their `frontend:`
/// sections, [`crate::pins::discover::recipe`]) where every one states the same; Dynamo's frontend where
/// every entry is served through Dynamo (`framework: dynamo-…`); else the engine. With what placed it
/// there (`frontend.args.dyn-chat-processor: vllm at r.yaml:21`, `framework dynamo-vllm`), for messages.
fn renderer(
    entries: &[&Entry],
    points: &[&Point],
    stated: &[Option<&Fact<Renderer>>],
    engine: Option<Engine>,
) -> Option<(Renderer, String)> {
    if !points.is_empty() && points.iter().all(|p| !p.agentic()) {
        let scenario = &points[0].scenario;
        return Some((Renderer::Client, format!("{scenario} runs send random-token prompts it templates")));
    }
    if let [Some(first), rest @ ..] = stated
        && let Some(renderer) = first.value
        && rest.iter().all(|f| f.is_some_and(|f| f.value == Some(renderer)))
    {
        let at = first.at.as_ref().map(|a| format!(" at {a}")).unwrap_or_default();
        return Some((renderer, format!("{}{at}", first.text)));
    }
    let frameworks: Vec<&str> = entries.iter().filter_map(|e| e.framework.as_deref()).collect();
    if !frameworks.is_empty() && frameworks.len() == entries.len() && frameworks.iter().all(|f| f.starts_with("dynamo"))
    {
        return Some((Renderer::Dynamo, format!("framework {}", frameworks[0])));
    }
    engine.map(|e| (Renderer::Engine(e), String::new()))
}

/// The engine version `entries` run: their image's release or build date, or a build date a prose line of
/// the repository states for it. Entries on several images have one version only where all agree.
fn version(entries: &[&Entry], image_lines: &[ImageLine]) -> EngineVersion {
    let mut images: Vec<&str> = entries.iter().filter_map(|e| e.image.as_deref()).collect();
    images.sort_unstable();
    images.dedup();
    let versions: Vec<EngineVersion> = images
        .iter()
        .map(|image| {
            let mut v = EngineVersion::of_image(image);
            for line in image_lines.iter().filter(|l| l.image == *image) {
                if v.date.is_some() || v.release.is_some() {
                    break;
                }
                v = v.dated_by(&line.text, &line.at.to_string());
            }
            v
        })
        .collect();
    match versions.as_slice() {
        [] => EngineVersion { text: "no config entry names the image it runs".into(), ..EngineVersion::default() },
        [one] => one.clone(),
        [first, rest @ ..] if rest.iter().all(|v| (v.release, v.date) == (first.release, first.date)) => first.clone(),
        _ => EngineVersion {
            text: format!("entries on {} images ({})", images.len(), images.join(", ")),
            ..EngineVersion::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pins::discover::graph::config::{Setting, Shape};
    use crate::pins::rules::testing::pin;
    use crate::pins::{EntryRef, Knob};

    /// An entry of `framework` on `image` whose one speculative point runs `scenario` and writes a
    /// setting at line 20 of the master config.
    fn entry(name: &str, framework: &str, image: &str, scenario: &str) -> Entry {
        let setting = Setting { key: "SYNTHETIC_ACCEPTANCE_LENGTH".into(), value: "2.49".into(), line: 20, span: None };
        Entry {
            name: name.into(),
            file: "configs/master.yaml".into(),
            line: 10,
            model: Some("deepseek-ai/DeepSeek-V4-Pro".into()),
            model_prefix: Some("dsv4".into()),
            precision: Some("fp4".into()),
            framework: Some(framework.into()),
            image: Some(image.into()),
            runner: None,
            multinode: false,
            points: vec![Point {
                scenario: scenario.into(),
                spec: Some("mtp".into()),
                settings: vec![setting],
                line: 20,
                shape: Shape::default(),
            }],
        }
    }

    /// A DeepSeek-V4 pin of `engine` that states no mode, run by `entry`.
    fn dsv4_pin(engine: Engine, entry: &Entry) -> Pin {
        let mut p = pin(2.49, 3, ThinkingMode::On);
        p.mode = Fact::unresolved("no thinking setting in this script");
        p.engine.value = Some(engine);
        p.model.value = Some("deepseek-ai/DeepSeek-V4-Pro".into());
        p.entries = vec![EntryRef { name: entry.name.clone(), at: Location::new(&entry.file, entry.line) }];
        p
    }

    fn served(entry: &Entry, engine: Engine, lines: &[ImageLine]) -> Served {
        let entries = [entry.clone()];
        Context::new(&entries, lines, &BTreeMap::new()).served(&dsv4_pin(engine, entry), "deepseek-v4-pro")
    }

    fn mode(s: &Served) -> Option<ThinkingMode> {
        match s {
            Served::Default(f, _) => f.value,
            _ => None,
        }
    }

    /// The snapshot's DeepSeek-V4 entries, by the general rule: who renders, and the version their image
    /// or the repository states.
    #[test]
    fn the_renderer_and_its_version_decide_the_default() {
        // vLLM on a release before the change serves non-thinking, and says which image and row decided.
        let old = served(&entry("old", "vllm", "vllm/vllm-openai:v0.26.0", "agentic-coding"), Engine::Vllm, &[]);
        assert_eq!(mode(&old), Some(ThinkingMode::Off));
        let Served::Default(fact, _) = &old else { unreachable!() };
        assert!(fact.text.contains("release 0.26.0") && fact.text.contains("serving_defaults.csv:"), "{}", fact.text);
        assert_eq!(fact.at, Some(Location::new("configs/master.yaml", 10)));
        // A commit-only nightly: undecided, naming both sides, until a changelog line dates it.
        let nightly = entry("new", "vllm", "vllm/vllm-openai-rocm:nightly-311b3513af33bc29", "agentic-coding");
        let Served::Open(open) = served(&nightly, Engine::Vllm, &[]) else {
            panic!("an undated nightly decides nothing")
        };
        assert_eq!(open.severity, Severity::Warning);
        assert!(
            open.why.contains("thinking_off for releases below 0.27.0") && open.why.contains("from 0.28.0"),
            "{}",
            open.why
        );
        let line = ImageLine {
            at: Location::new("perf-changelog.yaml", 7),
            image: nightly.image.clone().unwrap(),
            text: "Repin the image to the 2026-08-17 ROCm nightly (nightly-311b3513af33bc29).".into(),
        };
        let dated = served(&nightly, Engine::Vllm, &[line]);
        assert_eq!(mode(&dated), Some(ThinkingMode::On));
        let Served::Default(fact, effort) = &dated else { unreachable!() };
        let effort = effort.as_ref().expect("vLLM's high renders what max did from the change");
        assert!(effort.text.contains("renders the prompt effort max rendered before"), "{}", effort.text);
        assert!(fact.text.contains("built 2026-08-17 as perf-changelog.yaml:7 states"), "{}", fact.text);
        // ATOM renders with the checkpoint's encoder; Dynamo's frontend renders whatever the vLLM image.
        let atom = entry("atom", "atom", "rocm/atom-dev:nightly_202607231538", "agentic-coding");
        assert_eq!(mode(&served(&atom, Engine::Atom, &[])), Some(ThinkingMode::On));
        let dynamo = entry("dyn", "dynamo-vllm", "vllm/vllm-openai:v0.26.0", "agentic-coding");
        assert_eq!(mode(&served(&dynamo, Engine::Vllm, &[])), Some(ThinkingMode::On));
        // Fixed-length runs: the client templates random tokens, so no server default decides (a note).
        let fixed = entry("fixed", "vllm", "vllm/vllm-openai:v0.26.0", "fixed-seq-len");
        let Served::Open(open) = served(&fixed, Engine::Vllm, &[]) else { panic!("client-templated") };
        assert_eq!(open.severity, Severity::Note);
        // A stated mode stands; a model with no known default is left as written.
        let mut stated = dsv4_pin(Engine::Vllm, &fixed);
        stated.mode = Fact::known(ThinkingMode::On, How::Literal, "SGLANG_DEFAULT_THINKING=1", None);
        let entries = [fixed.clone()];
        assert!(matches!(
            Context::new(&entries, &[], &BTreeMap::new()).served(&stated, "deepseek-v4-pro"),
            Served::AsWritten
        ));
        let minimax = dsv4_pin(Engine::Vllm, &entry("old", "vllm", "vllm/vllm-openai:v0.26.0", "agentic-coding"));
        assert!(matches!(
            Context::new(&entries, &[], &BTreeMap::new()).served(&minimax, "minimax-m3"),
            Served::AsWritten
        ));
    }

    /// A pin a master config writes is run by the point that writes it: a fixed-length point of an entry
    /// with agentic points too is client-templated, and the entry's other pins are not.
    #[test]
    fn a_master_config_pin_is_run_by_its_own_point() {
        let mut e = entry("mixed", "vllm", "vllm/vllm-openai:v0.26.0", "fixed-seq-len");
        let mut agentic = e.points[0].clone();
        agentic.scenario = "agentic-coding".into();
        agentic.settings[0].line = 30;
        e.points.push(agentic);
        let entries = [e.clone()];
        let renderers = BTreeMap::new();
        let context = Context::new(&entries, &[], &renderers);
        let mut p = dsv4_pin(Engine::Vllm, &e);
        p.mechanism = Mechanism::MasterConfig;
        p.knob = Knob::InjectedLength;
        p.location = Location::new("configs/master.yaml", 20);
        assert!(matches!(
            context.served(&p, "deepseek-v4-pro"),
            Served::Open(OpenMode { severity: Severity::Note, .. })
        ));
        p.location = Location::new("configs/master.yaml", 30);
        assert!(matches!(context.served(&p, "deepseek-v4-pro"), Served::Default(..)));
    }
}
