//! The thinking mode a deployment serves when no file says, as versioned facts with their sources
//! (`profiles/serving_defaults.csv`), and the engine version they are placed by.
//!
//! A recipe or script states its mode with a worker setting (`dyn-default-thinking-mode`,
//! `DYN_DEFAULT_THINKING_MODE`, `SGLANG_DEFAULT_THINKING`, `--default-chat-template-kwargs`, a chat
//! template named `…_thinking.jinja`) or on the request side (`AIPERF_EXTRA_INPUTS: thinking:true`).
//! `SGLANG_ENABLE_THINKING` is not one: SGLang ignores it (docs/pins.md#inert). When nothing is stated, the
//! default of whoever renders the prompt decides ([`Renderer`]): an engine, the Dynamo frontend in front of
//! any engine, or nobody on the server where the benchmark client templates the prompt. A default can change
//! between versions of its renderer; a row holds for a release range or a build-date range, and the entry's
//! version is read from its image tag ([`EngineVersion::of_image`]) or a date the repository states for
//! that image. A default decides like a stated mode only where the version lies inside one row's range
//! ([`Decision::Decided`]); otherwise both modes stay open ([`Decision::Open`]) and the check names both
//! values and what would decide.

use std::fmt;

use crate::curve::ThinkingMode;
use crate::engine::Engine;
use crate::names::fold;
use crate::perf::csv::CsvTable;

const DEFAULTS_CSV: &str = include_str!("../../profiles/serving_defaults.csv");
/// Where the table's rows are cited from.
pub(crate) const DEFAULTS_ORIGIN: &str = "profiles/serving_defaults.csv";

/// Who renders the prompt, and so whose default decides the thinking mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Renderer {
    /// The engine itself (its tokenizer, encoder or the model's chat template it applies).
    Engine(Engine),
    /// Dynamo's frontend, which renders for its workers whatever their engine.
    Dynamo,
    /// The benchmark client templates the prompt and sends plain completions (fixed-length random-token
    /// runs): no server default applies.
    Client,
}

impl Renderer {
    fn column(self) -> &'static str {
        match self {
            Renderer::Engine(engine) => engine.name(),
            Renderer::Dynamo => "dynamo",
            Renderer::Client => "client",
        }
    }
}

impl fmt::Display for Renderer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Renderer::Engine(e) => write!(f, "{}", e.display_name()),
            Renderer::Dynamo => f.write_str("Dynamo's frontend"),
            Renderer::Client => f.write_str("the benchmark client"),
        }
    }
}

/// A final release, `major.minor.patch.post` (pre-releases are nightlies: placed by date only, since a
/// `0.26.1rc1.devN` build may lie on either side of a change merged during 0.26.1's cycle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Release([u32; 4]);

impl Release {
    /// `v0.27.1`, `0.25.1`, `1.3.0.post1`, `0.5.15.post1`; `None` for pre-releases (`rc`, `dev`) and other words.
    fn parse(text: &str) -> Option<Release> {
        let text = text.strip_prefix('v').unwrap_or(text);
        let (numbers, post) = match text.split_once(".post") {
            Some((n, p)) => (n, p.parse::<u32>().ok()?),
            None => (text, 0),
        };
        let parts: Vec<u32> = numbers.split('.').map(|p| p.parse().ok()).collect::<Option<_>>()?;
        (2..=3).contains(&parts.len()).then(|| Release([parts[0], parts[1], parts.get(2).copied().unwrap_or(0), post]))
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, post] = self.0;
        write!(f, "{a}.{b}.{c}")?;
        if post > 0 { write!(f, ".post{post}") } else { Ok(()) }
    }
}

/// A build date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Date([u32; 3]);

impl Date {
    /// `2026-08-04`.
    fn parse_iso(text: &str) -> Option<Date> {
        let mut it = text.splitn(3, '-').map(|p| p.parse::<u32>().ok());
        Date::new(it.next()??, it.next()??, it.next()??)
    }

    /// The first `YYYYMMDD` run of eight digits (or the start of a longer run, `202607231538`) in a tag.
    fn in_tag(tag: &str) -> Option<Date> {
        tag.split(|c: char| !c.is_ascii_digit()).filter(|run| run.len() >= 8 && run.starts_with("20")).find_map(|run| {
            let n = |r: std::ops::Range<usize>| run[r].parse::<u32>().ok();
            Date::new(n(0..4)?, n(4..6)?, n(6..8)?)
        })
    }

    /// Every `YYYY-MM-DD` in a line of prose.
    fn in_prose(line: &str) -> Vec<Date> {
        let bytes = line.as_bytes();
        (0..bytes.len().saturating_sub(9))
            .filter(|&i| i == 0 || !bytes[i - 1].is_ascii_digit())
            .filter_map(|i| line.get(i..i + 10).and_then(Date::parse_iso))
            .collect()
    }

    fn new(y: u32, m: u32, d: u32) -> Option<Date> {
        ((2000..2100).contains(&y) && (1..=12).contains(&m) && (1..=31).contains(&d)).then_some(Date([y, m, d]))
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [y, m, d] = self.0;
        write!(f, "{y:04}-{m:02}-{d:02}")
    }
}

/// A row's range over one kind of version: every version, below a bound, from a bound, or nothing said.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Range<T> {
    Any,
    Below(T),
    From(T),
    Unsaid,
}

impl<T: Ord + Copy> Range<T> {
    fn parse(text: &str, value: impl Fn(&str) -> Option<T>) -> Option<Range<T>> {
        match text.trim() {
            "" => Some(Range::Unsaid),
            "*" => Some(Range::Any),
            t => match t.strip_prefix(">=") {
                Some(v) => value(v).map(Range::From),
                None => t.strip_prefix('<').and_then(value).map(Range::Below),
            },
        }
    }

    /// Whether the range holds `v`: `None` where the version or the range is unknown.
    fn holds(self, v: Option<T>) -> Option<bool> {
        match (self, v) {
            (Range::Any, _) => Some(true),
            (Range::Unsaid, _) | (_, None) => None,
            (Range::Below(b), Some(v)) => Some(v < b),
            (Range::From(b), Some(v)) => Some(v >= b),
        }
    }
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServingDefault {
    renderer: String,
    /// Golden-key prefix of the model family, folded (`deepseekv4`, `qwen3`).
    family: String,
    releases: Range<Release>,
    dates: Range<Date>,
    /// The mode served.
    pub(crate) mode: ThinkingMode,
    /// The reasoning effort a thinking default runs at, where the renderer sets one.
    pub(crate) effort: Option<String>,
    /// Where this version of the renderer changed what that effort renders: the effort whose prompt it
    /// renders, as the renderer named it before (vLLM's `high` from 77434861904a renders what `max` did).
    pub(crate) effort_renders: Option<String>,
    /// Where the default is documented.
    pub(crate) source: String,
    /// The row's line in the table.
    pub(crate) line: usize,
}

impl ServingDefault {
    /// `profiles/serving_defaults.csv:14 (vLLM PR #50580 …)`.
    pub(crate) fn cite(&self) -> String {
        format!("{DEFAULTS_ORIGIN}:{}: {}", self.line, self.source)
    }

    /// `thinking_on at effort high`.
    pub(crate) fn served(&self) -> String {
        match &self.effort {
            Some(e) => format!("{} at effort {e}", self.mode),
            None => self.mode.to_string(),
        }
    }

    /// Whether the row is the model's chat template's (any engine that applies it), not a renderer's own.
    pub(crate) fn is_template(&self) -> bool {
        self.renderer == "template"
    }

    /// Whether the row holds for some versions only.
    pub(crate) fn versioned(&self) -> bool {
        self.releases != Range::Any
    }

    /// `releases below 0.27.0, builds before 2026-08-04`.
    pub(crate) fn range_text(&self) -> String {
        let mut parts = Vec::new();
        match self.releases {
            Range::Below(r) => parts.push(format!("releases below {r}")),
            Range::From(r) => parts.push(format!("releases from {r}")),
            Range::Any => parts.push("every release".to_string()),
            Range::Unsaid => {}
        }
        match self.dates {
            Range::Below(d) => parts.push(format!("builds before {d}")),
            Range::From(d) => parts.push(format!("builds from {d}")),
            Range::Any | Range::Unsaid => {}
        }
        parts.join(", ")
    }

    /// Whether the row holds for `version`: by release where both say one, else by date.
    fn holds(&self, version: &EngineVersion) -> Option<bool> {
        match (self.releases, version.release) {
            (Range::Any, _) => Some(true),
            (r, Some(v)) if r != Range::Unsaid => r.holds(Some(v)),
            _ => self.dates.holds(version.date),
        }
    }
}

/// Every row, parsed once.
pub(crate) fn table() -> &'static [ServingDefault] {
    static TABLE: std::sync::OnceLock<Vec<ServingDefault>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        parse(DEFAULTS_CSV, DEFAULTS_ORIGIN).expect("the embedded serving defaults are validated by the test suite")
    })
}

fn parse(text: &str, origin: &str) -> crate::error::Result<Vec<ServingDefault>> {
    let table = CsvTable::parse(text, origin)?;
    table.require(&["renderer", "family", "releases", "dates", "thinking", "effort", "source"])?;
    table
        .rows()
        .map(|row| {
            // The names every thinking mode takes (`on`, `thinking_on`, …); the table must decide one.
            let mode = match row.str("thinking")?.parse::<ThinkingMode>() {
                Ok(mode @ (ThinkingMode::On | ThinkingMode::Off)) => mode,
                _ => return Err(row.error("thinking", "must be on or off")),
            };
            let releases = Range::parse(row.opt_str("releases").unwrap_or_default(), Release::parse)
                .ok_or_else(|| row.error("releases", "must be *, <V, >=V or empty"))?;
            let dates = Range::parse(row.opt_str("dates").unwrap_or_default(), Date::parse_iso)
                .ok_or_else(|| row.error("dates", "must be *, <YYYY-MM-DD, >=YYYY-MM-DD or empty"))?;
            Ok(ServingDefault {
                renderer: row.str("renderer")?.to_ascii_lowercase(),
                family: fold(row.str("family")?),
                releases,
                dates,
                mode,
                effort: row.opt_str("effort").filter(|e| !e.is_empty()).map(str::to_string),
                effort_renders: row.opt_str("effort_renders").filter(|e| !e.is_empty()).map(str::to_string),
                source: row.str("source")?.to_string(),
                line: row.line(),
            })
        })
        .collect()
}

/// The version of the engine an entry runs, as its image says or the repository states, with how it was read.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct EngineVersion {
    pub(crate) release: Option<Release>,
    pub(crate) date: Option<Date>,
    /// How it was read (`image vllm/vllm-openai:v0.27.1`, `… built 2026-08-17 (perf-changelog.yaml:6163)`), or
    /// why it is unknown.
    pub(crate) text: String,
}

impl EngineVersion {
    /// The release or build date an image's tag states (`vllm/vllm-openai:v0.27.1`,
    /// `rocm/atom-dev:nightly_202607231538`, `sglang:nightly-dev-cu13-20260805-211ee642`); neither for a tag
    /// that names only a commit (`nightly-<sha>`), whose date the repository may state elsewhere.
    pub(crate) fn of_image(image: &str) -> EngineVersion {
        let bare = image.split('@').next().unwrap_or(image).trim_matches(|c| c == '"' || c == '\'');
        let tag = match bare.rsplit_once(':') {
            Some((_, tag)) if !tag.contains('/') => tag,
            _ => "",
        };
        // A version that names a bundled component (`pytorch_release_2.10.0`) is not the engine's.
        let words: Vec<&str> = tag.split(['-', '_']).collect();
        let component = |i: usize| {
            words[..i]
                .iter()
                .rev()
                .find(|w| !w.eq_ignore_ascii_case("release"))
                .is_some_and(|w| ["pytorch", "torch", "python", "cuda"].iter().any(|c| w.eq_ignore_ascii_case(c)))
        };
        let release = words.iter().enumerate().filter(|(i, _)| !component(*i)).find_map(|(_, w)| Release::parse(w));
        let date = Date::in_tag(tag);
        let text = match (release, date) {
            (Some(r), Some(d)) => format!("image {bare}: release {r}, built {d}"),
            (Some(r), None) => format!("image {bare}: release {r}"),
            (None, Some(d)) => format!("image {bare}: built {d}"),
            (None, None) => format!("image {bare}: its tag states no release or build date"),
        };
        EngineVersion { release, date, text }
    }

    /// The version with a build date a prose line states for the image, where the tag states none and the
    /// line states one date only (`Repin the image to the 2026-08-17 ROCm nightly (nightly-311b3513…)`).
    pub(crate) fn dated_by(mut self, line: &str, at: &str) -> EngineVersion {
        let mut dates = Date::in_prose(line);
        dates.dedup();
        if self.release.is_none()
            && self.date.is_none()
            && let [date] = dates[..]
        {
            self.date = Some(date);
            self.text =
                format!("{}; built {date} as {at} states", self.text.split(": its tag").next().unwrap_or(&self.text));
        }
        self
    }
}

/// What the table decides for a served model, renderer and version.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Decision<'t> {
    /// One mode: the only one the rows give, or the row whose range holds the version.
    Decided(&'t ServingDefault),
    /// The rows give both modes and the version is not placed in one row's range (or nobody on the server
    /// renders): both values stay open.
    Open(Vec<&'t ServingDefault>),
    /// No row for the model family.
    Unknown,
}

/// The default for a golden model key rendered by `renderer` at `version`. An engine's (or the Dynamo
/// frontend's) rows win over the family's chat-template rows. Where the client renders, no server default
/// exists ([`Decision::Unknown`]).
pub(crate) fn decide(model_key: &str, renderer: Renderer, version: &EngineVersion) -> Decision<'static> {
    if renderer == Renderer::Client {
        return Decision::Unknown;
    }
    let key = fold(model_key);
    let of_family = |r: &str| -> Vec<&'static ServingDefault> {
        table().iter().filter(|d| d.renderer == r && key.starts_with(&d.family)).collect()
    };
    let mut rows = of_family(renderer.column());
    if rows.is_empty() {
        rows = of_family("template");
    }
    if rows.is_empty() {
        return Decision::Unknown;
    }
    match rows.iter().find(|r| r.holds(version) == Some(true)) {
        Some(row) => Decision::Decided(row),
        None => Decision::Open(rows),
    }
}

/// Why `rows` of `by` (a renderer as messages name it) leave a mode open: the default changed between
/// versions, naming each side, or is known for some versions only.
pub(crate) fn open_default(by: &str, rows: &[&ServingDefault]) -> String {
    match rows {
        [one] => format!("{by}'s default is known only for {} ({})", one.range_text(), one.served()),
        _ => {
            let sides: Vec<String> = rows.iter().map(|r| format!("{} for {}", r.served(), r.range_text())).collect();
            format!("{by}'s default changed between versions ({})", sides.join("; "))
        }
    }
}

/// Settings that look like thinking switches but that the engine ignores, with what to write instead.
pub(crate) const IGNORED: &[(&str, &str)] = &[(
    "SGLANG_ENABLE_THINKING",
    "SGLang ignores SGLANG_ENABLE_THINKING; the server default is SGLANG_DEFAULT_THINKING",
)];

#[cfg(test)]
mod tests {
    use super::*;

    fn decided(key: &str, renderer: Renderer, image: &str) -> Option<ThinkingMode> {
        match decide(key, renderer, &EngineVersion::of_image(image)) {
            Decision::Decided(row) => Some(row.mode),
            _ => None,
        }
    }

    #[test]
    fn the_table_reads_and_every_row_cites_a_source() {
        assert!(table().len() >= 10);
        assert!(table().iter().all(|r| !r.source.is_empty() && r.line > 1));
        let bad = "renderer,family,releases,dates,thinking,effort,source\nvllm,x,~1,,on,,s\n";
        assert!(parse(bad, "t.csv").unwrap_err().to_string().contains("releases"));
    }

    #[test]
    fn versions_read_from_image_tags() {
        let v = EngineVersion::of_image("vllm/vllm-openai:v0.27.1");
        assert_eq!((v.release, v.date), (Release::parse("0.27.1"), None));
        let v = EngineVersion::of_image("rocm/atom-dev:nightly_202607231538");
        assert_eq!((v.release, v.date), (None, Date::parse_iso("2026-07-23")));
        let v = EngineVersion::of_image("lmsysorg/sglang-rocm:v0.5.17-rocm720-mi35x-20260818");
        assert_eq!((v.release, v.date), (Release::parse("0.5.17"), Date::parse_iso("2026-08-18")));
        // CUDA's version is not the engine's, a pre-release is not a release, a commit is not a date.
        let v = EngineVersion::of_image("vllm/vllm-openai:nightly-dev-x86_64-cu13.0.1-426e59f");
        assert_eq!((v.release, v.date), (None, None));
        assert_eq!(EngineVersion::of_image("nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc24").release, None);
        assert_eq!(EngineVersion::of_image("localhost:5000/vllm").release, None);
        let v = EngineVersion::of_image("rocm/atom:rocm7.2.3_ubuntu24.04_py3.12_pytorch_release_2.10.0_atom20260511");
        assert_eq!((v.release, v.date), (None, Date::parse_iso("2026-05-11")), "PyTorch's version is not ATOM's");
        assert!(
            Release::parse("0.26.0") < Release::parse("0.27.0")
                && Release::parse("1.3.0.post1") > Release::parse("1.3.0")
        );
        let stated = EngineVersion::of_image("vllm/vllm-openai-rocm:nightly-311b3513")
            .dated_by("Repin the image to the 2026-08-17 ROCm nightly, pushed 2026-08-17T05:32:09Z", "c.yaml:3");
        assert_eq!(stated.date, Date::parse_iso("2026-08-17"));
        assert!(stated.text.ends_with("built 2026-08-17 as c.yaml:3 states"), "{}", stated.text);
        let two = EngineVersion::of_image("a/b:nightly-abc1234").dated_by("from 2026-07-01 to 2026-08-17", "c:1");
        assert_eq!(two.date, None, "two dates place nothing");
    }

    #[test]
    fn a_default_decides_only_where_the_version_lies_on_one_side_of_the_change() {
        let vllm = Renderer::Engine(Engine::Vllm);
        assert_eq!(decided("deepseek-v4-pro", vllm, "vllm/vllm-openai:v0.26.0"), Some(ThinkingMode::Off));
        assert_eq!(decided("deepseek-v4-pro", vllm, "vllm/vllm-openai:v0.28.0"), Some(ThinkingMode::On));
        assert_eq!(
            decided("deepseek-v4-pro", vllm, "vllm/vllm-openai:nightly-dev-20260801-abc"),
            Some(ThinkingMode::Off)
        );
        // 0.27.x is not verified either way, and a commit-only nightly states nothing.
        assert_eq!(decided("deepseek-v4-pro", vllm, "vllm/vllm-openai:v0.27.1"), None);
        assert_eq!(decided("deepseek-v4-pro", vllm, "vllm/vllm-openai:nightly-3ee2df30"), None);
        // Renderers with their own default, whatever the engine behind them.
        assert_eq!(decided("deepseek-v4-pro", Renderer::Dynamo, "vllm/vllm-openai:v0.26.0"), Some(ThinkingMode::On));
        assert_eq!(
            decided("deepseek-v4-pro", Renderer::Engine(Engine::Atom), "rocm/atom-dev:nightly_202607231538"),
            Some(ThinkingMode::On)
        );
        assert_eq!(decided("deepseek-v4-pro", Renderer::Engine(Engine::Atom), "rocm/atom:x_atom0.1.3"), None);
        assert_eq!(decided("deepseek-v4-pro", Renderer::Engine(Engine::Sglang), ""), Some(ThinkingMode::Off));
        // The family's chat template where the engine has no row of its own; nothing for unknown families.
        assert_eq!(decided("glm-5.2-fp8", Renderer::Engine(Engine::Atom), ""), Some(ThinkingMode::On));
        assert_eq!(decide("minimax-m3", vllm, &EngineVersion::default()), Decision::Unknown);
        assert!(matches!(decide("deepseek-v4-pro", Renderer::Client, &EngineVersion::default()), Decision::Unknown));
    }
}
