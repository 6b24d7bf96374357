//! Verification: each discovered pin against its golden value, the golden curves themselves, and the
//! allow-list.
//!
//! The golden value is looked up by model key, drafter, draft sampling and thinking mode
//! ([`CurveSet::lookup`], which never decides by key alone). A value off by more than [`AL_TOLERANCE`]
//! (rates: [`RATE_TOLERANCE`]) is explained by the first alternative it matches: the spelling (TRT-LLM not
//! minus one, an ATOM rate that is not (AL−1)/k), another drafter's or sampling's curve, the other thinking
//! mode, another k, another model; otherwise it is an unexplained mismatch.
//!
//! Curve checks (class 11): two files with the same header (up to the source-run line) and the same keys
//! cannot be told apart by content; values outside [1, k+1]; AL(k) falling, or per-position increments
//! p_i = AL(i) − AL(i−1) rising, by more than the noise of independent runs. The noise model follows
//! model.md §2 and §5: each AL(k) is a separate run with a standard error of a few hundredths
//! ([`CURVE_STANDARD_ERROR`]); a difference of two values has √2 times that, an increment difference √6
//! times, and a violation is flagged beyond 1.96 of those.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::recipe::LineIndex;
use super::{
    AL_TOLERANCE, Class, Fact, Finding, How, Inventory, Knob, Location, Pin, RATE_TOLERANCE, Severity, Skipped,
};
use crate::curve::registry::{DrafterMatch, normalize};
use crate::curve::{Curve, CurveFile, CurveQuery, CurveSet, Resolved, ThinkingMode};
use crate::error::{Error, Result};
use crate::units::RANGE_EPS;
use crate::yaml::{self, Node};

/// Assumed standard error of one golden AL (model.md §5: "a run of ~80 prompts has an AL standard error of
/// a few hundredths").
pub const CURVE_STANDARD_ERROR: f64 = 0.03;
/// Two-sided 95 % normal quantile used for curve noise.
const Z95: f64 = 1.96;

/// Where golden values come from.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// `--golden DIR`: overrides the repository's own `golden_al_distribution/`.
    pub golden: Option<PathBuf>,
    /// `--allow FILE`.
    pub allow: Option<AllowList>,
    /// `--strict`: warnings fail too.
    pub strict: bool,
}

/// One sanctioned exception.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AllowEntry {
    /// Path relative to the repository root.
    pub file: String,
    /// Only this line, when given.
    pub line: Option<usize>,
    /// The class sanctioned.
    pub class: Class,
    /// Why the exception is deliberate (required).
    pub reason: String,
    /// Where the entry is written.
    pub at: Location,
}

/// The allow-list file: a YAML list of `{file, line?, class, reason}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AllowList {
    /// The entries.
    pub entries: Vec<AllowEntry>,
}

impl AllowList {
    /// Parses an allow-list; `origin` names it in errors.
    ///
    /// ```
    /// use alsim::pins::{AllowList, Class};
    /// let list = AllowList::parse("- file: a.sh\n  class: wrong-thinking-mode\n  reason: measured off on purpose\n", "allow.yaml")?;
    /// assert_eq!(list.entries[0].class, Class::WrongThinkingMode);
    /// # Ok::<(), alsim::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Parse`] for invalid YAML; [`Error::Invalid`] naming the entry for a missing file, class or
    /// reason, or an unknown class.
    pub fn parse(text: &str, origin: &str) -> Result<AllowList> {
        let root = yaml::parse(text, origin)?;
        let items = match &root {
            Node::Seq(items) => items.clone(),
            Node::Map(_) => match root.get("allow") {
                Some(Node::Seq(items)) => items.clone(),
                _ => return Err(Error::parse(origin, None, "expected a list of entries (or `allow:` with a list)")),
            },
            Node::Null => Vec::new(),
            other => {
                return Err(Error::parse(
                    origin,
                    None,
                    format!("expected a list of entries, found a {}", other.kind()),
                ));
            }
        };
        let index = LineIndex::new(text);
        let lines: Vec<usize> = index.lines_of("file");
        let mut entries = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let field = |name: &str| format!("{origin}: entry {}: {name}", i + 1);
            let text_of = |name: &str| item.get(name).and_then(Node::as_scalar_text).filter(|s| !s.trim().is_empty());
            let file = text_of("file").ok_or_else(|| Error::invalid(field("file"), "every entry names a file"))?;
            let class: Class = text_of("class")
                .ok_or_else(|| Error::invalid(field("class"), "every entry names a class"))?
                .parse()
                .map_err(|e: Error| Error::invalid(field("class"), e.to_string()))?;
            let reason =
                text_of("reason").ok_or_else(|| Error::invalid(field("reason"), "every exception needs a reason"))?;
            let line = match item.get("line") {
                None | Some(Node::Null) => None,
                Some(node) => Some(
                    node.as_f64()
                        .filter(|l| *l >= 1.0 && l.fract() == 0.0)
                        .ok_or_else(|| Error::invalid(field("line"), "a line is a positive integer"))?
                        as usize,
                ),
            };
            let at = Location::new(origin, lines.get(i).copied().unwrap_or(1));
            entries.push(AllowEntry { file: file.trim_start_matches("./").to_string(), line, class, reason, at });
        }
        Ok(AllowList { entries })
    }

    /// Reads an allow-list file.
    ///
    /// # Errors
    /// [`Error::Io`] when unreadable, else as [`AllowList::parse`].
    pub fn read(path: &Path) -> Result<AllowList> {
        let text = crate::input::read_text(path, crate::input::SMALL_FILE_LIMIT)?;
        AllowList::parse(&text, &path.display().to_string())
    }
}

/// The golden value a pin was checked against.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GoldenRef {
    /// The golden file.
    pub file: String,
    /// The key path (`minimax-m3.thinking_on.3`).
    pub key: String,
    /// The golden AL.
    pub expected_al: f64,
    /// The expected value in the pin's own spelling.
    pub expected_written: Option<f64>,
    /// How the drafter chose the file.
    pub drafter_match: DrafterMatch,
}

/// The outcome for one pin's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Within tolerance of the golden value.
    Ok,
    /// Off the golden value (the finding says which class explains it).
    Mismatch,
    /// Outside [1, k+1].
    OutOfRange,
    /// The value, k or curve could not be decided.
    Unresolved,
}

impl Verdict {
    /// The word shown in tables.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Mismatch => "mismatch",
            Verdict::OutOfRange => "out of range",
            Verdict::Unresolved => "unresolved",
        }
    }
}

/// A pin with its check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckedPin {
    /// The pin as discovered.
    #[serde(flatten)]
    pub pin: Pin,
    /// The golden file's model key the pin's model was matched to.
    pub model_key: Option<String>,
    /// The acceptance length the written value implies.
    pub implied_al: Option<f64>,
    /// The golden value used.
    pub golden: Option<GoldenRef>,
    /// The value's verdict.
    pub verdict: Verdict,
    /// Classes of every finding at this pin's location.
    pub problems: Vec<Class>,
}

/// Counts for the summary line.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Pins checked.
    pub pins: usize,
    /// Pins whose value is within tolerance.
    pub ok: usize,
    /// Errors not sanctioned by the allow-list.
    pub errors: usize,
    /// Warnings not sanctioned.
    pub warnings: usize,
    /// Findings sanctioned by the allow-list.
    pub allowed: usize,
    /// Unresolved findings among the warnings.
    pub unresolved: usize,
}

/// How the check ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Nothing wrong.
    Pass,
    /// An error (or, with `--strict`, a warning).
    Fail,
    /// No error, but some pins could not be decided.
    Undecided,
}

/// The whole check of one repository.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// The repository.
    pub repo: String,
    /// Where golden values came from.
    pub golden_source: String,
    /// Files read.
    pub files_read: usize,
    /// Every pin with its check.
    pub pins: Vec<CheckedPin>,
    /// Every finding, by file and line.
    pub findings: Vec<Finding>,
    /// Files skipped.
    pub skipped: Vec<Skipped>,
    /// Counts.
    pub summary: Summary,
    /// Whether warnings fail.
    pub strict: bool,
    /// The outcome.
    pub status: Status,
}

/// Checks the repository at `repo`.
///
/// # Errors
/// [`Error::Io`] when `repo` cannot be read; errors reading the golden directory (naming the file).
pub fn check(repo: &Path, options: &CheckOptions) -> Result<CheckReport> {
    let inventory = super::scan(repo)?;
    let repo_golden = repo.join("golden_al_distribution");
    let (curves, golden_source, golden_dir) = match &options.golden {
        Some(dir) => (CurveSet::read_dir(dir)?, format!("{} (--golden)", dir.display()), Some(dir.clone())),
        None if repo_golden.is_dir() => (
            CurveSet::read_dir(&repo_golden)?,
            "golden_al_distribution/ (the repository's own)".to_string(),
            Some(repo_golden),
        ),
        None => (
            CurveSet::embedded(),
            "alsim's embedded curves (the repository has no golden_al_distribution/)".to_string(),
            None,
        ),
    };
    Ok(check_inventory(inventory, &curves, golden_source, golden_dir.as_deref(), repo, options))
}

/// Checks an already scanned inventory against `curves` (`golden_dir`: where they were read, for curve
/// checks; `None` for the embedded set, which alsim's own tests check).
pub fn check_inventory(
    inventory: Inventory,
    curves: &CurveSet,
    golden_source: String,
    golden_dir: Option<&Path>,
    repo: &Path,
    options: &CheckOptions,
) -> CheckReport {
    let mut findings = inventory.findings;
    if golden_dir.is_some() {
        findings.extend(curve_problems(curves, repo));
    }
    let mut pins = Vec::new();
    for pin in inventory.pins {
        let (checked, mut found) = check_pin(pin, curves);
        findings.append(&mut found);
        pins.push(checked);
    }
    findings.sort_by(|a, b| (&a.location, a.class).cmp(&(&b.location, b.class)));
    findings.dedup_by(|a, b| a.location == b.location && a.class == b.class && a.message == b.message);
    if let Some(allow) = &options.allow {
        let mut used = vec![false; allow.entries.len()];
        for finding in &mut findings {
            if let Some(i) = allow.entries.iter().position(|e| {
                e.file == finding.location.file
                    && e.class == finding.class
                    && e.line.is_none_or(|l| l == finding.location.line)
            }) {
                finding.allowed = Some(allow.entries[i].reason.clone());
                used[i] = true;
            }
        }
        for (entry, used) in allow.entries.iter().zip(used) {
            if !used {
                findings.push(Finding::new(
                    Class::StaleAllow,
                    entry.at.clone(),
                    format!("allow-list entry for {} ({}) matches no finding: remove it", entry.file, entry.class),
                ));
            }
        }
    }
    for checked in &mut pins {
        checked.problems = findings.iter().filter(|f| f.location == checked.pin.location).map(|f| f.class).collect();
        checked.problems.dedup();
    }
    let mut summary = Summary {
        pins: pins.len(),
        ok: pins.iter().filter(|p| p.verdict == Verdict::Ok).count(),
        ..Default::default()
    };
    for f in &findings {
        match (&f.allowed, f.severity) {
            (Some(_), _) => summary.allowed += 1,
            (None, Severity::Error) => summary.errors += 1,
            (None, Severity::Warning) => {
                summary.warnings += 1;
                summary.unresolved += usize::from(f.class == Class::Unresolved);
            }
        }
    }
    let status = if summary.errors > 0 || (options.strict && summary.warnings > 0) {
        Status::Fail
    } else if summary.unresolved > 0 {
        Status::Undecided
    } else {
        Status::Pass
    };
    CheckReport {
        repo: inventory.repo,
        golden_source,
        files_read: inventory.files_read,
        pins,
        findings,
        skipped: inventory.skipped,
        summary,
        strict: options.strict,
        status,
    }
}

/// The thinking mode a model serves when nothing asks for one. alsim's assumption from the models'
/// published chat templates (UNCONFIRMED per version); a pin relying on it gets a warning.
const MODEL_THINKING_DEFAULTS: &[(&str, ThinkingMode, &str)] = &[
    ("qwen3", ThinkingMode::On, "Qwen3 chat templates default enable_thinking to true"),
    ("glm", ThinkingMode::On, "GLM-4.5+ chat templates default enable_thinking to true"),
    ("deepseekv", ThinkingMode::Off, "DeepSeek-V3.1+ chat templates default thinking to false"),
    ("kimik2", ThinkingMode::On, "Kimi-K2.5 serves thinking mode unless thinking=false"),
];

fn model_default_mode(key: &str) -> Option<(ThinkingMode, &'static str)> {
    let key = normalize(key);
    MODEL_THINKING_DEFAULTS.iter().find(|(prefix, _, _)| key.starts_with(prefix)).map(|(_, m, why)| (*m, *why))
}

/// Matches a served model name (`MiniMaxAI/MiniMax-M3-MXFP4`) to a golden key (`minimax-m3`): the
/// organisation is dropped, then trailing words (precision, variant) until a key matches.
pub fn model_key(curves: &CurveSet, model: &str) -> Option<String> {
    let keys = curves.known_models();
    let name = model.rsplit('/').next().unwrap_or(model);
    let mut words: Vec<&str> = name.split(['-', '_']).collect();
    while !words.is_empty() {
        let wanted = normalize(&words.join("-"));
        if let Some(exact) = keys.iter().find(|k| normalize(k) == wanted) {
            return Some(exact.clone());
        }
        let longer: Vec<&String> = keys.iter().filter(|k| normalize(k).starts_with(&wanted)).collect();
        if let [only] = longer.as_slice() {
            return Some((*only).clone());
        }
        if longer.len() > 1 {
            return None;
        }
        words.pop();
    }
    None
}

fn check_pin(mut pin: Pin, curves: &CurveSet) -> (CheckedPin, Vec<Finding>) {
    let mut findings = Vec::new();
    let at = pin.location.clone();
    let mut checked = CheckedPin {
        pin: pin.clone(),
        model_key: None,
        implied_al: None,
        golden: None,
        verdict: Verdict::Unresolved,
        problems: Vec::new(),
    };
    let unresolved = |what: &str, fact_text: &str| {
        Finding::new(
            Class::Unresolved,
            at.clone(),
            format!("{what} unresolved ({fact_text}): the pin cannot be checked"),
        )
    };
    let Some(written) = pin.written.value else {
        if pin.written.how == How::Unresolved && !pin.written.text.contains("has no entry") {
            findings.push(unresolved("value", &pin.written.text));
        }
        return (checked, findings);
    };
    let Some(k) = pin.k.value else {
        findings.push(unresolved("k", &pin.k.text));
        return (checked, findings);
    };
    let implied = pin.knob.implied_al(written, Some(k)).unwrap_or(written);
    checked.implied_al = Some(implied);
    if implied < 1.0 - RANGE_EPS || implied > k as f64 + 1.0 + RANGE_EPS {
        checked.verdict = Verdict::OutOfRange;
        findings.push(Finding::new(
            Class::OutOfRange,
            at.clone(),
            format!(
                "{} = {} implies AL {} outside [1, {}] for k = {k}",
                pin.knob.name(),
                pin.written.text,
                super::plain_number(implied, 4),
                k + 1
            ),
        ));
        return (checked, findings);
    }
    let Some(model) = pin.model.value.clone() else {
        findings.push(unresolved("model", &pin.model.text));
        return (checked, findings);
    };
    let Some(key) = model_key(curves, &model) else {
        findings.push(unresolved("golden curve", &format!("no golden key matches model '{model}'")));
        return (checked, findings);
    };
    checked.model_key = Some(key.clone());
    if pin.mode.value.is_none()
        && let Some((mode, why)) = model_default_mode(&key)
    {
        pin.mode = Fact::known(mode, How::Inferred, format!("model default: {why}"), None);
        findings.push(Finding::new(
            Class::Assumption,
            at.clone(),
            format!(
                "thinking mode only inferred from the model default ({mode}: {why}); state it explicitly in the recipe"
            ),
        ));
        checked.pin.mode = pin.mode.clone();
    }
    let query = CurveQuery {
        model: key.clone(),
        drafter: pin.drafter.value.clone(),
        method: None,
        draft_sampling: pin.draft_sampling.value.clone(),
        mode: pin.mode.value,
    };
    let resolved = match curves.lookup(&query) {
        Ok(r) => r,
        Err(first) => {
            // A drafter name that matches no file name is fine when the model has one file (MTP heads).
            let fallback = CurveQuery { drafter: None, ..query.clone() };
            match (query.drafter.is_some(), curves.lookup(&fallback)) {
                (true, Ok(r)) if files_for(curves, &key).len() == 1 => r,
                _ => {
                    findings.push(unresolved("golden curve", &first.to_string()));
                    return (checked, findings);
                }
            }
        }
    };
    let expected = match resolved.curve.al(k) {
        Ok(al) => al,
        Err(e) => {
            findings.push(unresolved("golden value", &e.to_string()));
            return (checked, findings);
        }
    };
    let expected_written = match pin.knob {
        Knob::TrtllmForceAccepted => Some(expected - 1.0),
        Knob::AtomRate => Some((expected - 1.0) / k as f64),
        _ => Some(expected),
    };
    checked.golden = Some(GoldenRef {
        file: resolved.file.origin.clone(),
        key: resolved.curve.field(k),
        expected_al: expected,
        expected_written,
        drafter_match: resolved.drafter_match,
    });
    let matches = |al: f64| -> bool {
        if pin.knob == Knob::AtomRate {
            (written - (al - 1.0) / k as f64).abs() <= RATE_TOLERANCE
        } else {
            (implied - al).abs() <= AL_TOLERANCE
        }
    };
    if matches(expected) {
        checked.verdict = Verdict::Ok;
        return (checked, findings);
    }
    checked.verdict = Verdict::Mismatch;
    let want = |al: f64| match pin.knob {
        Knob::TrtllmForceAccepted => {
            format!("{} (AL {})", super::plain_number(al - 1.0, 4), super::plain_number(al, 4))
        }
        Knob::AtomRate => {
            format!("{} (AL {})", super::plain_number((al - 1.0) / k as f64, 6), super::plain_number(al, 4))
        }
        _ => super::plain_number(al, 4),
    };
    let head = format!(
        "{} = {} (AL {}) but the golden value for {} at k = {k} is {} ({} {})",
        pin.knob.name(),
        super::plain_number(written, 6),
        super::plain_number(implied, 4),
        describe_query(&query),
        want(expected),
        short(&resolved.file.origin),
        resolved.curve.field(k)
    );
    let (class, why) = explain(&pin, written, k, &resolved, curves, &key, &matches);
    findings.push(Finding::new(class, at, format!("{head}: {why}")));
    (checked, findings)
}

fn describe_query(q: &CurveQuery) -> String {
    let mut parts = vec![q.model.clone()];
    if let Some(d) = &q.drafter {
        parts.push(d.clone());
    }
    if let Some(m) = q.mode {
        parts.push(m.to_string());
    }
    parts.join(", ")
}

fn short(origin: &str) -> String {
    origin.rsplit('/').next().unwrap_or(origin).to_string()
}

fn files_for<'a>(curves: &'a CurveSet, key: &str) -> Vec<&'a CurveFile> {
    curves.files().iter().filter(|f| f.models().contains(&key)).collect()
}

/// The first alternative that explains a mismatch, in the order of pins.md's classes that are about a value.
fn explain(
    pin: &Pin,
    written: f64,
    k: usize,
    resolved: &Resolved<'_>,
    curves: &CurveSet,
    key: &str,
    matches: &dyn Fn(f64) -> bool,
) -> (Class, String) {
    let expected = resolved.curve.al(k).unwrap_or(f64::NAN);
    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol;
    match pin.knob {
        Knob::TrtllmForceAccepted if close(written, expected, AL_TOLERANCE) => {
            return (
                Class::Spelling,
                "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS counts accepted drafts: write AL − 1".into(),
            );
        }
        Knob::AtomRate
            if close(written, expected, RATE_TOLERANCE)
                || close(written, expected - 1.0, RATE_TOLERANCE)
                || close(written, expected / (k as f64 + 1.0), RATE_TOLERANCE) =>
        {
            return (Class::Spelling, "--spec-decode-acceptance-rate is (AL − 1)/k, not AL, AL − 1 or AL/(k+1)".into());
        }
        Knob::AtomLength | Knob::SglangSimulateLen | Knob::VllmSyntheticLength | Knob::InjectedLength
            if close(written, expected - 1.0, AL_TOLERANCE) =>
        {
            return (Class::Spelling, format!("{} counts the bonus token: write AL, not AL − 1", pin.knob.name()));
        }
        _ => {}
    }
    let mode = resolved.curve.mode();
    let same_mode =
        |c: &Curve| c.mode() == mode || c.mode() == ThinkingMode::Unspecified || mode == ThinkingMode::Unspecified;
    for file in files_for(curves, key) {
        if std::ptr::eq(file, resolved.file) {
            continue;
        }
        for curve in file.curves.iter().filter(|c| c.model() == key && same_mode(c)) {
            if curve.al(k).is_ok_and(matches) {
                let p = &file.provenance;
                let what = match (&p.draft_sampling, &resolved.file.provenance.draft_sampling) {
                    (a, b) if a != b => format!("draft sampling {}", a.as_deref().unwrap_or("greedy")),
                    _ => format!("file {}", short(&file.origin)),
                };
                return (
                    Class::WrongDrafter,
                    format!("it is the value of another drafter's curve ({what}, {})", curve.field(k)),
                );
            }
        }
    }
    for curve in resolved.file.curves.iter().filter(|c| c.model() == key && c.mode() != mode) {
        if curve.al(k).is_ok_and(matches) {
            return (
                Class::WrongThinkingMode,
                format!("it is the {} value, but the recipe serves {} ({})", curve.mode(), mode, pin.mode.describe()),
            );
        }
    }
    for (&other_k, &al) in resolved.curve.points() {
        if other_k != k && matches(al) {
            return (
                Class::WrongK,
                format!(
                    "it is the golden value for k = {other_k}, but this recipe runs k = {k} ({})",
                    pin.k.describe()
                ),
            );
        }
    }
    for file in curves.files() {
        for curve in file.curves.iter().filter(|c| c.model() != key) {
            if curve.al(k).is_ok_and(matches) {
                return (
                    Class::WrongModel,
                    format!("it is {}'s value ({} {})", curve.model(), short(&file.origin), curve.field(k)),
                );
            }
        }
    }
    (Class::Mismatch, "no golden curve explains the value".into())
}

/// Class-11 problems of the golden files in `curves`.
pub fn curve_problems(curves: &CurveSet, repo: &Path) -> Vec<Finding> {
    let canonical_repo = repo.canonicalize().ok();
    let rel = |origin: &str| -> String {
        let path = Path::new(origin);
        match (path.canonicalize().ok(), &canonical_repo) {
            (Some(p), Some(r)) => {
                p.strip_prefix(r).map(|s| s.display().to_string()).unwrap_or_else(|_| origin.to_string())
            }
            _ => origin.to_string(),
        }
    };
    let mut out = Vec::new();
    let files = curves.files();
    let comparable = |f: &CurveFile| -> Vec<String> {
        f.header
            .iter()
            .filter(|l| {
                let lower = l.to_ascii_lowercase();
                !lower.starts_with("source github actions run") && !lower.starts_with("source_run")
            })
            .cloned()
            .collect()
    };
    for (i, a) in files.iter().enumerate() {
        for b in &files[i + 1..] {
            if a.models() == b.models() && comparable(a) == comparable(b) {
                out.push(Finding::new(
                    Class::CurveProblem,
                    Location::new(rel(&b.origin), 1),
                    format!(
                        "same header and keys as {}: the two drafters are told apart only by file name; add a `# drafter:` line to each",
                        short(&a.origin)
                    ),
                ));
            }
        }
    }
    let dip_noise = Z95 * 2f64.sqrt() * CURVE_STANDARD_ERROR;
    let increment_noise = Z95 * 6f64.sqrt() * CURVE_STANDARD_ERROR;
    let mut indexes: BTreeMap<&str, LineIndex> = BTreeMap::new();
    for file in files {
        let index = indexes
            .entry(file.origin.as_str())
            .or_insert_with(|| LineIndex::new(&std::fs::read_to_string(&file.origin).unwrap_or_default()));
        for curve in &file.curves {
            let line_of = |k: usize| {
                let mut path = vec![curve.model().to_string()];
                if curve.mode() != ThinkingMode::Unspecified {
                    path.push(curve.mode().key().to_string());
                }
                path.push(k.to_string());
                index.line(&path)
            };
            let at = |k: usize| Location::new(rel(&file.origin), line_of(k));
            let points: Vec<(usize, f64)> = curve.points().iter().map(|(k, v)| (*k, *v)).collect();
            for &(k, al) in &points {
                if al < 1.0 - RANGE_EPS || al > k as f64 + 1.0 + RANGE_EPS {
                    out.push(Finding::new(
                        Class::CurveProblem,
                        at(k),
                        format!("{} = {al} is outside [1, {}]", curve.field(k), k + 1),
                    ));
                }
            }
            for pair in points.windows(2) {
                let ((k0, a0), (k1, a1)) = (pair[0], pair[1]);
                if k1 == k0 + 1 && a0 - a1 > dip_noise {
                    out.push(Finding::new(
                        Class::CurveProblem,
                        at(k1),
                        format!(
                            "{} = {a1} falls {:.2} below k = {k0} ({a0}); beyond run-to-run noise ({dip_noise:.3}), a longer draft cannot accept fewer tokens",
                            curve.field(k1),
                            a0 - a1
                        ),
                    ));
                }
            }
            if let Ok(increments) = curve.increments(curve.max_k()) {
                for (i, pair) in increments.windows(2).enumerate() {
                    let rise = pair[1] - pair[0];
                    if rise > increment_noise {
                        let k = i + 2;
                        out.push(Finding::new(
                            Class::CurveProblem,
                            at(k),
                            format!(
                                "per-position acceptance rises from p{} = {:.2} to p{k} = {:.2} ({}); beyond noise ({increment_noise:.3}), a chain cannot accept a later draft more often",
                                k - 1,
                                pair[0],
                                pair[1],
                                curve.field(k)
                            ),
                        ));
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_match_golden_keys() {
        let set = CurveSet::embedded();
        assert_eq!(model_key(&set, "MiniMaxAI/MiniMax-M3").as_deref(), Some("minimax-m3"));
        assert_eq!(model_key(&set, "amd/MiniMax-M3-MXFP4").as_deref(), Some("minimax-m3"));
        assert_eq!(model_key(&set, "Qwen/Qwen3.5-397B-A17B").as_deref(), Some("qwen3.5-397b-a17b-nvfp4"));
        assert_eq!(model_key(&set, "deepseek-ai/DeepSeek-V4-Pro").as_deref(), Some("deepseek-v4-pro"));
        assert_eq!(model_key(&set, "meta/Llama-9"), None);
    }

    #[test]
    fn allow_list_needs_reasons() {
        let err = AllowList::parse("- file: a.sh\n  class: drift\n", "allow.yaml").unwrap_err().to_string();
        assert!(err.contains("entry 1: reason"), "{err}");
        let err = AllowList::parse("- file: a.sh\n  class: nope\n  reason: x\n", "allow.yaml").unwrap_err().to_string();
        assert!(err.contains("unknown class"), "{err}");
    }
}
