//! Verification: each pin against its golden value, with the severity docs/pins.md gives its class.
//!
//! The golden value is looked up by model key, drafter (a local staging path is matched on its last
//! component), draft sampling and thinking mode ([`CurveSet::lookup`], which never decides by key alone).
//! A value off by more than [`AL_TOLERANCE`] (rates: [`RATE_TOLERANCE`]) is explained by the first
//! alternative it matches: the spelling (TRT-LLM not minus one, an ATOM rate that is not (AL−1)/k),
//! another drafter's or sampling's curve, the other thinking mode, another k, another model; otherwise it
//! is an unexplained mismatch.
//!
//! A thinking mode no file states is the engine's or model's documented default ([`super::thinking`],
//! [`How::Default`]), and it decides like a literal: a value written for the other mode is a
//! `wrong-thinking-mode` error. Greedy drafting, where no sampling is written, is only assumed: a value
//! that matches the probabilistic curve is [`Verdict::Unconfirmed`] with an `assumption` warning (failing
//! only under `--strict`), and a value right under greedy drafting gets the same warning when the other
//! sampling would expect another value. A value wrong under both is an error.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::allow::AllowList;
use super::curves::{self, CurveEntry};
use super::golden::{describe_query, drafter_name, files_for, lookup, model_key, sampling_alternative, short};
use super::rates;
use super::thinking;
use super::walk;
use super::{
    AL_TOLERANCE, Class, Fact, Finding, How, Inventory, Knob, Location, Pin, RATE_TOLERANCE, Severity, plain_number,
};
use crate::accept::RatesPin;
use crate::curve::registry::DrafterMatch;
use crate::curve::{Curve, CurveQuery, CurveSet, Resolved, ThinkingMode};
use crate::error::Result;
use crate::units::RANGE_EPS;

/// Where golden values come from, and how strict the check is.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// `--golden DIR`: overrides the repository's own `golden_al_distribution/`.
    pub golden: Option<PathBuf>,
    /// `--allow FILE`.
    pub allow: Option<AllowList>,
    /// `--strict`: warnings fail too.
    pub strict: bool,
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
    pub expected_written: f64,
    /// How the drafter chose the file.
    pub drafter_match: DrafterMatch,
    /// For a rates pin: the golden chain at k ([`crate::accept::RatesPin::from_curve`]), as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_rates: Option<Vec<f64>>,
    /// For a rates pin: where the golden chain came from (the curve's increments, or a fit and why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rates_from: Option<String>,
}

/// The outcome for one pin's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Within tolerance of the golden value.
    Ok,
    /// Right only if an unstated fact (thinking mode, draft sampling) differs from its documented default.
    Unconfirmed,
    /// Off the golden value (the finding says which class explains it).
    Mismatch,
    /// Outside [1, k+1].
    OutOfRange,
    /// The value, k or curve could not be decided.
    Unresolved,
    /// The pin does nothing (its role runs no speculative decoding).
    Inert,
}

impl Verdict {
    /// The word shown in tables.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Unconfirmed => "unconfirmed",
            Verdict::Mismatch => "mismatch",
            Verdict::OutOfRange => "out of range",
            Verdict::Unresolved => "unresolved",
            Verdict::Inert => "inert",
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
    /// The value `pins fix` would write (in the pin's spelling), when the value is wrong.
    pub fix_to: Option<f64>,
    /// For a rates pin: the list `pins fix` would write, when the list is wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix_rates: Option<Vec<f64>>,
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
    /// Errors by class name.
    pub errors_by_class: std::collections::BTreeMap<String, usize>,
    /// Warnings not sanctioned.
    pub warnings: usize,
    /// Notes.
    pub notes: usize,
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
    /// No error, but some pins could not be decided, or no candidate file was found to check.
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
    /// Config entries read.
    pub entries: usize,
    /// Every pin with its check.
    pub pins: Vec<CheckedPin>,
    /// Every finding, by file and line.
    pub findings: Vec<Finding>,
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
/// [`crate::Error::Io`] when `repo` cannot be read; errors reading the golden directory (naming the file).
pub fn check(repo: &Path, options: &CheckOptions) -> Result<CheckReport> {
    let inventory = super::scan(repo)?;
    let golden = golden_curves(repo, options.golden.as_deref())?;
    Ok(check_inventory(inventory, &golden.curves, golden.source, golden.own, repo, options))
}

/// The golden curves a repository's pins are checked against, and where they came from.
#[derive(Debug, Clone)]
pub struct GoldenSet {
    /// The curves.
    pub curves: CurveSet,
    /// Where they came from, for the report.
    pub source: String,
    /// Whether they are the user's or the repository's (whose own problems are reported), not alsim's.
    pub own: bool,
}

/// `--golden DIR` when given, else the repository's own `golden_al_distribution/`, else alsim's embedded
/// curves.
///
/// # Errors
/// Errors reading the golden directory (naming the file).
pub fn golden_curves(repo: &Path, golden: Option<&Path>) -> Result<GoldenSet> {
    let repo_golden = repo.join("golden_al_distribution");
    let (curves, source, own) = match golden {
        Some(dir) => (CurveSet::read_dir(dir)?, format!("{} (--golden)", dir.display()), true),
        // Links leaving the repository are not followed here either: the walk reports them.
        None if repo_golden.is_dir() && walk::inside(repo, &repo_golden) => (
            CurveSet::read_dir_where(&repo_golden, |file| walk::inside(repo, file))?,
            "golden_al_distribution/ (the repository's own)".to_string(),
            true,
        ),
        None => (
            CurveSet::embedded(),
            "alsim's embedded curves (the repository has no golden_al_distribution/)".to_string(),
            false,
        ),
    };
    Ok(GoldenSet { curves, source, own })
}

/// Checks an already scanned inventory against `curves` (`judge_curves`: whether their own problems are
/// reported; the embedded set is checked by alsim's tests instead).
pub fn check_inventory(
    inventory: Inventory,
    curves: &CurveSet,
    golden_source: String,
    judge_curves: bool,
    repo: &Path,
    options: &CheckOptions,
) -> CheckReport {
    let mut findings = inventory.findings;
    // Several pins share a location (case arms, roles): a pin's problems are its own verdict's findings plus
    // the discovery findings at its location, never a sibling's verdict.
    let discovered = findings.len();
    let mut own: Vec<Vec<(Class, String)>> = Vec::new();
    let mut pins = Vec::new();
    let mut used: Vec<CurveEntry> = Vec::new();
    for pin in inventory.pins {
        let (checked, mut found, entry) = check_pin(pin, curves);
        own.push(found.iter().map(|f| (f.class, f.message.clone())).collect());
        findings.append(&mut found);
        used.extend(entry);
        pins.push(checked);
    }
    let scan_level: Vec<(Location, Class, String)> =
        findings[..discovered].iter().map(|f| (f.location.clone(), f.class, f.message.clone())).collect();
    if judge_curves {
        findings.extend(curves::gate(curves::problems(curves, repo), &used));
    }
    findings.sort_by(|a, b| (&a.location, a.class).cmp(&(&b.location, b.class)));
    findings.dedup_by(|a, b| a.location == b.location && a.class == b.class && a.message == b.message);
    let mut allow = options.allow.clone().unwrap_or_default();
    allow.extend(inventory.inline_allows);
    allow.apply(&mut findings);
    for (checked, own) in pins.iter_mut().zip(&own) {
        checked.problems = findings
            .iter()
            .filter(|f| f.location == checked.pin.location && f.severity != Severity::Note && f.allowed.is_none())
            .filter(|f| {
                own.iter().any(|(c, m)| *c == f.class && *m == f.message)
                    || scan_level.iter().any(|(l, c, m)| *l == f.location && *c == f.class && *m == f.message)
            })
            .map(|f| f.class)
            .collect();
        checked.problems.sort();
        checked.problems.dedup();
    }
    let summary = summarize(&pins, &findings);
    let status = if summary.errors > 0 || (options.strict && summary.warnings > 0) {
        Status::Fail
    } else if summary.unresolved > 0 || inventory.files_read == 0 {
        Status::Undecided
    } else {
        Status::Pass
    };
    CheckReport {
        repo: inventory.repo,
        golden_source,
        files_read: inventory.files_read,
        entries: inventory.entries,
        pins,
        findings,
        summary,
        strict: options.strict,
        status,
    }
}

fn summarize(pins: &[CheckedPin], findings: &[Finding]) -> Summary {
    let mut summary = Summary {
        pins: pins.len(),
        ok: pins.iter().filter(|p| p.verdict == Verdict::Ok).count(),
        ..Default::default()
    };
    for f in findings {
        match (&f.allowed, f.severity) {
            (Some(_), _) => summary.allowed += 1,
            (None, Severity::Error) => {
                summary.errors += 1;
                *summary.errors_by_class.entry(f.class.name().to_string()).or_default() += 1;
            }
            (None, Severity::Warning) => {
                summary.warnings += 1;
                summary.unresolved += usize::from(f.class == Class::Unresolved);
            }
            (None, Severity::Note) => summary.notes += 1,
        }
    }
    summary
}

/// The result of one pin: the checked pin, its findings, and the curve entry its expected value rests on.
fn check_pin(pin: Pin, curves: &CurveSet) -> (CheckedPin, Vec<Finding>, Option<CurveEntry>) {
    let mut findings = Vec::new();
    let at = pin.location.clone();
    let mut checked = CheckedPin {
        pin: pin.clone(),
        model_key: None,
        implied_al: None,
        golden: None,
        fix_to: None,
        fix_rates: None,
        verdict: Verdict::Unresolved,
        problems: Vec::new(),
    };
    if pin.inert() {
        checked.verdict = Verdict::Inert;
        return (checked, findings, None);
    }
    let unresolved = |what: &str, why: &str| {
        Finding::new(Class::Unresolved, at.clone(), format!("{what} unresolved ({why}): the pin cannot be checked"))
    };
    let Some(written) = pin.written.value else {
        if pin.written.how == How::Unresolved {
            findings.push(unresolved("value", &pin.written.text));
        }
        return (checked, findings, None);
    };
    let Some(k) = pin.k.value else {
        findings.push(unresolved("k", &pin.k.text));
        return (checked, findings, None);
    };
    let implied = pin.knob.implied_al(written, Some(k)).unwrap_or(written);
    checked.implied_al = Some(implied);
    let out_of_range = implied < 1.0 - RANGE_EPS || implied > k as f64 + 1.0 + RANGE_EPS;
    let Some(model) = pin.model.value.clone() else {
        if out_of_range {
            findings.push(out_of_range_finding(&pin, written, implied, k, None));
            checked.verdict = Verdict::OutOfRange;
        } else {
            findings.push(unresolved("model", &pin.model.text));
        }
        return (checked, findings, None);
    };
    let Some(key) = model_key(curves, &model) else {
        findings.push(unresolved("golden curve", &format!("no golden key matches model '{model}'")));
        return (checked, findings, None);
    };
    checked.model_key = Some(key.clone());
    let engine = pin.engine.value;
    let mut pin = pin;
    if pin.mode.value.is_none()
        && let Some(d) = thinking::default_for(&key, engine)
    {
        pin.mode = Fact::known(d.mode, How::Default, format!("default: {}", d.source), None);
        checked.pin.mode = pin.mode.clone();
    }
    let sampling_assumed = pin.draft_sampling.how == How::Inferred;
    let query = CurveQuery {
        model: key.clone(),
        drafter: pin.drafter.value.as_deref().map(|d| drafter_name(curves, d)),
        method: None,
        draft_sampling: pin.draft_sampling.value.clone(),
        mode: pin.mode.value,
    };
    let lookup = match lookup(curves, &query, k) {
        Ok(l) => l,
        Err(e) => {
            let mode_undecided =
                pin.mode.value.is_none() && matches!(e, crate::Error::Lookup { kind: crate::LookupKind::Mode, .. });
            let what = if mode_undecided { "thinking mode" } else { "golden curve" };
            let why = if mode_undecided {
                format!(
                    "{}; the deployment states no thinking mode and alsim knows no documented default for {key}",
                    pin.mode.text
                )
            } else {
                e.to_string()
            };
            if out_of_range {
                findings.push(out_of_range_finding(&pin, written, implied, k, None));
                checked.verdict = Verdict::OutOfRange;
            } else {
                findings.push(unresolved(what, &why));
            }
            return (checked, findings, None);
        }
    };
    let expected = lookup.expected;
    let entry: CurveEntry = (
        lookup.resolved.file.origin.clone(),
        lookup.resolved.curve.model().to_string(),
        lookup.resolved.curve.mode(),
        k,
    );
    let chain = pin.rates.as_ref().and_then(|_| rates::golden(lookup.resolved.curve, k));
    let golden = GoldenRef {
        file: lookup.resolved.file.origin.clone(),
        key: lookup.resolved.curve.field(k),
        expected_al: expected,
        expected_written: pin.knob.written_for(expected, k),
        drafter_match: lookup.resolved.drafter_match,
        expected_rates: chain.as_ref().map(|c| c.rates().to_vec()),
        rates_from: chain.as_ref().map(RatesPin::describe),
    };
    checked.golden = Some(golden.clone());
    // A curve collected at one reasoning effort says nothing of another: no value is right for this run.
    let measured_effort = lookup.resolved.file.provenance.effort(lookup.resolved.curve.mode().key());
    if let (Some(effort), Some(measured)) = (pin.effort.value.as_deref(), measured_effort)
        && !effort.eq_ignore_ascii_case(&measured)
    {
        checked.verdict = Verdict::Mismatch;
        findings.push(Finding::new(
            Class::WrongThinkingMode,
            at,
            format!(
                "{} = {} rests on {} {}, collected at reasoning effort {measured} (its header), but this runs reasoning effort {effort} ({}): no golden value exists for {effort}; run effort {measured}, or collect a curve at {effort}",
                pin.knob.name(),
                shown_written(&pin, written),
                short(&golden.file),
                golden.key,
                pin.effort.text
            ),
        ));
        return (checked, findings, Some(entry));
    }
    if out_of_range {
        findings.push(out_of_range_finding(&pin, written, implied, k, Some(&golden)));
        checked.verdict = Verdict::OutOfRange;
        checked.fix_to = Some(golden.expected_written);
        checked.fix_rates = golden.expected_rates.clone();
        return (checked, findings, Some(entry));
    }
    if let Some(list) = &pin.rates
        && let Some((verdict, finding)) = list_problem(&pin, list, k, &lookup.resolved, &key, &golden)
    {
        findings.push(finding);
        checked.verdict = verdict;
        checked.fix_to = Some(golden.expected_written);
        checked.fix_rates = golden.expected_rates.clone();
        return (checked, findings, Some(entry));
    }
    let matches = |al: f64| -> bool {
        if pin.knob == Knob::AtomRate {
            (written - (al - 1.0) / k as f64).abs() <= RATE_TOLERANCE
        } else {
            (implied - al).abs() <= AL_TOLERANCE
        }
    };
    let alternative = sampling_assumed.then(|| sampling_alternative(curves, &query, k)).flatten();
    if matches(expected) {
        if let (Some(list), Some(want)) = (&pin.rates, &golden.expected_rates) {
            let off = rates::off_positions(list, want);
            if !off.is_empty() {
                checked.verdict = Verdict::Mismatch;
                checked.fix_to = Some(golden.expected_written);
                checked.fix_rates = Some(want.clone());
                findings.push(Finding::new(
                    Class::Mismatch,
                    at,
                    format!(
                        "{} = {} keeps the golden AL {} ({} {}) but not its per-position chain {} ({}): position{} {} off by more than {RATE_TOLERANCE}, so the pinned run does not reproduce real per-position acceptance",
                        pin.knob.name(),
                        rates::shown(list),
                        plain_number(expected, 4),
                        short(&golden.file),
                        golden.key,
                        rates::shown(want),
                        golden.rates_from.as_deref().unwrap_or_default(),
                        if off.len() == 1 { "" } else { "s" },
                        off.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
                    ),
                ));
                return (checked, findings, Some(entry));
            }
        }
        checked.verdict = Verdict::Ok;
        if pin.k.how == How::Inferred {
            // Only llama.cpp's unwritten draft limit is inferred; its default differs between builds.
            findings.push(Finding::new(
                Class::Assumption,
                at.clone(),
                format!("ok only under the assumed k = {k} ({}): write the draft limit in the script", pin.k.text),
            ));
        }
        if let Some(alt) = alternative.as_ref().filter(|a| !matches(a.al)) {
            findings.push(Finding::new(
                Class::Assumption,
                at,
                format!(
                    "ok only under {}: if it serves {}, the golden value is {} ({}); state it in the recipe or script",
                    ASSUMED_SAMPLING,
                    alt.desc,
                    plain_number(alt.al, 4),
                    alt.field
                ),
            ));
        }
        return (checked, findings, Some(entry));
    }
    if let Some(alt) = alternative.as_ref().filter(|a| matches(a.al)) {
        checked.verdict = Verdict::Unconfirmed;
        findings.push(Finding::new(
            Class::Assumption,
            at,
            format!(
                "{} = {} is the golden value for {} ({}); {} expects {} ({}): state it in the recipe or script",
                pin.knob.name(),
                shown_written(&pin, written),
                alt.desc,
                alt.field,
                ASSUMED_SAMPLING,
                plain_number(expected, 4),
                golden.key
            ),
        ));
        return (checked, findings, Some(entry));
    }
    checked.verdict = Verdict::Mismatch;
    let want = |al: f64| match pin.knob {
        Knob::TrtllmForceAccepted | Knob::AtomRate => {
            format!("{} (AL {})", plain_number(pin.knob.written_for(al, k), 6), plain_number(al, 4))
        }
        _ => plain_number(al, 4),
    };
    let explained = explain(&pin, written, k, &lookup.resolved, curves, &key, &matches);
    checked.fix_to = Some(golden.expected_written);
    checked.fix_rates = golden.expected_rates.clone();
    let head = format!(
        "{} = {} (AL {}) but the golden value for {} at k = {k} is {} ({} {}): {}",
        pin.knob.name(),
        shown_written(&pin, written),
        plain_number(implied, 4),
        describe_query(&query),
        want(expected),
        short(&golden.file),
        golden.key,
        explained.why
    );
    let head = match &checked.fix_rates {
        Some(list) => format!("{head}; the golden chain to write is {}", rates::shown(list)),
        None => head,
    };
    findings.push(Finding::new(explained.class, at, head));
    (checked, findings, Some(entry))
}

/// The written value for messages: a rates list as written, else the number.
fn shown_written(pin: &Pin, written: f64) -> String {
    pin.rates.as_deref().map_or_else(|| plain_number(written, 6), rates::shown)
}

/// A list the engine refuses (an entry outside [0, 1], an increase) or that has not k entries: out of range,
/// or wrong k where the list is the golden chain for its own length.
fn list_problem(
    pin: &Pin,
    list: &[f64],
    k: usize,
    resolved: &Resolved<'_>,
    key: &str,
    golden: &GoldenRef,
) -> Option<(Verdict, Finding)> {
    let engine = pin.knob.engine().map_or("the engine", |e| e.display_name());
    let want =
        golden.expected_rates.as_deref().map(|w| format!("; the golden chain for k = {k} is {}", rates::shown(w)));
    let want = want.unwrap_or_default();
    let shown = rates::shown(list);
    if let Some(problem) = rates::chain_problem(list) {
        let message = format!("{} = {shown}: {problem}, so {engine} refuses the list{want}", pin.knob.name());
        return Some((Verdict::OutOfRange, Finding::new(Class::OutOfRange, pin.location.clone(), message)));
    }
    if list.len() == k {
        return None;
    }
    let other_k = list.len();
    let chain_of = resolved
        .file
        .curves
        .iter()
        .filter(|c| c.model() == key)
        .find(|c| rates::golden(c, other_k).is_some_and(|g| rates::off_positions(list, g.rates()).is_empty()));
    let (verdict, class, why) = match chain_of {
        Some(curve) => (
            Verdict::Mismatch,
            Class::WrongK,
            format!(
                "it is the {} golden chain for k = {other_k}, but this runs k = {k} ({})",
                curve.mode(),
                pin.k.text
            ),
        ),
        None => (
            Verdict::OutOfRange,
            Class::OutOfRange,
            format!("{engine} needs exactly k = {k} entries ({}) and refuses the list", pin.k.text),
        ),
    };
    let message = format!("{} = {shown} has {other_k} entries: {why}{want}", pin.knob.name());
    Some((verdict, Finding::new(class, pin.location.clone(), message)))
}

/// What an `assumption` on draft sampling rests on.
const ASSUMED_SAMPLING: &str = "the assumed greedy drafting (no draft_sample_method is written)";

fn out_of_range_finding(pin: &Pin, written: f64, implied: f64, k: usize, golden: Option<&GoldenRef>) -> Finding {
    let role = pin.role.map(|r| format!(" of the {r} role")).unwrap_or_default();
    let golden = golden
        .map(|g| {
            format!(
                "; the golden value for k = {k} is {} ({} {})",
                plain_number(g.expected_written, 6),
                short(&g.file),
                g.key
            )
        })
        .unwrap_or_default();
    Finding::new(
        Class::OutOfRange,
        pin.location.clone(),
        format!(
            "{} = {} implies AL {} outside [1, {}] for k = {k}{role} ({}){golden}",
            pin.knob.name(),
            shown_written(pin, written),
            plain_number(implied, 4),
            k + 1,
            pin.k.text
        ),
    )
}

struct Explained {
    class: Class,
    why: String,
}

/// The first alternative that explains a mismatch, in the order of the classes of docs/pins.md that are about a value.
fn explain(
    pin: &Pin,
    written: f64,
    k: usize,
    resolved: &Resolved<'_>,
    curves: &CurveSet,
    key: &str,
    matches: &dyn Fn(f64) -> bool,
) -> Explained {
    let expected = resolved.curve.al(k).unwrap_or(f64::NAN);
    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol;
    let plain = |class, why: String| Explained { class, why };
    match pin.knob {
        Knob::TrtllmForceAccepted if close(written, expected, AL_TOLERANCE) => {
            return plain(
                Class::Spelling,
                "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS counts accepted drafts: write AL − 1".into(),
            );
        }
        Knob::AtomRate
            if close(written, expected, RATE_TOLERANCE)
                || close(written, expected - 1.0, RATE_TOLERANCE)
                || close(written, expected / (k as f64 + 1.0), RATE_TOLERANCE) =>
        {
            return plain(
                Class::Spelling,
                "--spec-decode-acceptance-rate is (AL − 1)/k, not AL, AL − 1 or AL/(k+1)".into(),
            );
        }
        Knob::AtomLength | Knob::SglangSimulateLen | Knob::VllmSyntheticLength | Knob::InjectedLength
            if close(written, expected - 1.0, AL_TOLERANCE) =>
        {
            return plain(Class::Spelling, format!("{} counts the bonus token: write AL, not AL − 1", pin.knob.name()));
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
                return plain(
                    Class::WrongDrafter,
                    format!("it is the value of another drafter's curve ({what}, {})", curve.field(k)),
                );
            }
        }
    }
    for curve in resolved.file.curves.iter().filter(|c| c.model() == key && c.mode() != mode) {
        if curve.al(k).is_ok_and(matches) {
            return plain(
                Class::WrongThinkingMode,
                format!("it is the {} value, but the deployment serves {} ({})", curve.mode(), mode, pin.mode.text),
            );
        }
    }
    // Another k: of the served mode's curve first, then of the other mode's (a value copied from another
    // row of the golden table is wrong in k whatever mode it was written for).
    let of_model: Vec<&Curve> = resolved.file.curves.iter().filter(|c| c.model() == key).collect();
    let served = of_model.iter().filter(|c| c.mode() == mode);
    for curve in served.chain(of_model.iter().filter(|c| c.mode() != mode)) {
        for (&other_k, &al) in curve.points() {
            if other_k != k && matches(al) {
                let and_mode = if curve.mode() == mode {
                    String::new()
                } else {
                    format!(" and serves {mode} ({})", pin.mode.text)
                };
                return plain(
                    Class::WrongK,
                    format!(
                        "it is the {} golden value for k = {other_k}, but this runs k = {k} ({}){and_mode}",
                        curve.mode(),
                        pin.k.text
                    ),
                );
            }
        }
    }
    for file in curves.files() {
        for curve in file.curves.iter().filter(|c| c.model() != key) {
            if curve.al(k).is_ok_and(matches) {
                return plain(
                    Class::WrongModel,
                    format!("it is {}'s value ({} {})", curve.model(), short(&file.origin), curve.field(k)),
                );
            }
        }
    }
    plain(Class::Mismatch, "no golden curve explains the value".into())
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
        assert_eq!(model_key(&set, "*DeepSeek-V4*").as_deref(), Some("deepseek-v4-pro"));
        assert_eq!(model_key(&set, "nvidia/GLM-5.2-NVFP4").as_deref(), Some("glm-5.2-fp8"));
        assert_eq!(model_key(&set, "meta/Llama-9"), None);
        assert_eq!(drafter_name(&set, "/tmp/Kimi-K3-DSpark"), "Inferact/Kimi-K3-DSpark");
        assert_eq!(drafter_name(&set, "/data/models/Other-Draft"), "Other-Draft");
        assert_eq!(drafter_name(&set, "Inferact/Kimi-K3-DSpark"), "Inferact/Kimi-K3-DSpark");
    }
}
