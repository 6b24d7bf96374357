//! The pin check of a repository: the scan ([`scan`]: the walk, discovery, and the rules over what it
//! recorded), its golden curves ([`golden_curves`]: `--golden`, the repository's own, or alsim's embedded
//! ones), every pin's facts resolved ([`resolve::resolve`]) and judged by the rules (`src/pins/rules/`: the
//! golden value is looked up by model key, drafter, draft sampling and thinking mode, never by a file name
//! alone; a value off it takes the class of the first explanation that matches), the allow-list applied,
//! and the report with its counts and status.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use super::allow::AllowList;
use super::curves::{self, CurveEntry, golden_curves};
use super::discover;
use super::resolve::served::Context;
use super::resolve::subject::Resolution;
use super::resolve::{self, ResolvedPin, ServedPin};
use super::rules;
use super::verdict::{GoldenRef, ValueVerdict};
use super::walk;
use super::{Class, Fact, Finding, Inventory, Location, Pin, Severity};
use crate::curve::CurveSet;
use crate::curve::check::Point;
use crate::diagnostic::{Status, Tally};
use crate::error::Result;

/// Where golden values come from, and how strict the check is.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// `--golden DIR`: overrides the repository's own `golden_al_distribution/`.
    pub golden: Option<PathBuf>,
    /// `--allow FILE`.
    pub allow: Option<AllowList>,
    /// `--strict`: warnings fail too.
    pub strict: bool,
    /// `--exclude GLOB`: paths the walk does not read, beside the ignore files.
    pub exclude: walk::Excludes,
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
    pub verdict: ValueVerdict,
    /// Classes of every finding at this pin's location.
    pub problems: Vec<Class>,
}

/// Counts for the summary line.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CheckSummary {
    /// Pins checked.
    pub pins: usize,
    /// Pins whose value is within tolerance.
    pub ok: usize,
    /// The findings by severity.
    #[serde(flatten)]
    pub tally: Tally,
    /// Errors (not sanctioned) by class name.
    pub errors_by_class: std::collections::BTreeMap<String, usize>,
    /// Unresolved findings among the warnings.
    pub unresolved: usize,
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
    pub summary: CheckSummary,
    /// Whether warnings fail.
    pub strict: bool,
    /// The outcome.
    pub status: Status,
    /// The allow entries applied (the allow-list's and the inline ones), for `--base` to compare.
    #[serde(skip)]
    pub allow: AllowList,
    /// The files read, relative to the root.
    #[serde(skip)]
    pub files: Vec<String>,
}

/// Checks the repository at `repo`.
///
/// # Errors
/// [`crate::Error::Io`] when `repo` cannot be read; errors reading the golden directory (naming the file).
pub fn check(repo: &Path, options: &CheckOptions) -> Result<CheckReport> {
    let inventory = scan(repo, &options.exclude)?;
    let golden = golden_curves(repo, options.golden.as_deref())?;
    Ok(check_inventory(inventory, &golden.curves, golden.source, golden.own, repo, options))
}

/// Scans the repository at `root`: walks it (without what `excludes` names), builds the launch graph, discovers every pin and resolves
/// its facts, then has the rules judge what was recorded. Never executes anything it reads.
///
/// # Errors
/// [`crate::Error::Io`] when `root` itself cannot be read.
pub fn scan(root: &Path, excludes: &walk::Excludes) -> Result<Inventory> {
    let files = walk::walk(root, excludes)?;
    let mut inventory = discover::graph::discover(&files, root);
    // The texts read are freed on a pool thread while the rules run: on this thread it was serial time.
    rayon::spawn(move || drop(files));
    inventory.repo = root.display().to_string();
    let mut found = rules::run(&inventory);
    inventory.findings.append(&mut found);
    inventory.pins.sort_by(|a, b| (&a.location, &a.branch, a.role).cmp(&(&b.location, &b.branch, b.role)));
    inventory.findings.sort_by(|a, b| (&a.location, a.class).cmp(&(&b.location, b.class)));
    inventory.findings.dedup_by(|a, b| a.location == b.location && a.class == b.class && a.message == b.message);
    Ok(inventory)
}

impl CheckReport {
    /// The report of `part` of the repository (a folder or a file, relative to the root as findings show
    /// it; `None`: all of it): the pins and findings located there, with their counts and status, and the
    /// files read there. Nothing found there passes; a part holding no candidate file checked nothing and is
    /// undecided, as an empty tree is.
    pub fn within(mut self, part: Option<&str>) -> CheckReport {
        let Some(part) = part else { return self };
        self.pins.retain(|p| walk::lies_in(&p.pin.location.file, part));
        self.findings.retain(|f| walk::lies_in(&f.location.file, part));
        self.summary = summarize(&self.pins, &self.findings);
        self.status = self.summary.tally.status(self.strict, self.summary.unresolved > 0);
        self.files_read = self.files.iter().filter(|file| walk::lies_in(file, part)).count();
        if self.files_read == 0 && self.status == Status::Pass {
            self.status = Status::Undecided;
        }
        self
    }
}

impl Inventory {
    /// The inventory with each pin's thinking mode as the check resolves it against `curves`: a default the
    /// serving-defaults table decides, with its row and the version read; where none decides, why and what
    /// would (what `pins list` shows).
    pub fn with_served_modes(mut self, curves: &CurveSet) -> Inventory {
        let context = Context::new(&self.config_entries, &self.image_lines, &self.recipe_renderers);
        let pins = std::mem::take(&mut self.pins);
        self.pins = pins
            .into_iter()
            .map(|pin| match resolve::with_key_and_mode(pin, curves, &context) {
                ServedPin { mut pin, open: Some(open), .. } => {
                    pin.mode = Fact::unresolved(format!("{}; {}", open.why, open.decides));
                    pin
                }
                ServedPin { pin, open: None, .. } => pin,
            })
            .collect();
        self
    }
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
    let context = Context::new(&inventory.config_entries, &inventory.image_lines, &inventory.recipe_renderers);
    // Judged on the pool: one after another, the snapshot's 203 pins were the longest serial stretch after
    // discovery (3 % of the check's work).
    let mut judged: Vec<_> = inventory.pins.into_par_iter().map(|pin| check_pin(pin, curves, &context)).collect();
    rules::unresolved::once_per_model(
        judged.iter_mut().map(|j| (j.checked.model_key.as_deref(), j.for_want_of_default, &mut j.findings)),
    );
    for Judged { checked, findings: mut found, entry, .. } in judged {
        own.push(found.iter().map(|f| (f.class, f.message.clone())).collect());
        findings.append(&mut found);
        used.extend(entry);
        pins.push(checked);
    }
    let mut scan_level: HashMap<Location, Vec<(Class, String)>> = HashMap::new();
    for f in &findings[..discovered] {
        scan_level.entry(f.location.clone()).or_default().push((f.class, f.message.clone()));
    }
    if judge_curves {
        findings.extend(rules::curves(&curves::problems(curves, repo), &used));
    }
    findings.sort_by(|a, b| (&a.location, a.class).cmp(&(&b.location, b.class)));
    findings.dedup_by(|a, b| a.location == b.location && a.class == b.class && a.message == b.message);
    let mut allow = options.allow.clone().unwrap_or_default();
    allow.extend(inventory.inline_allows);
    let unused = allow.apply(&mut findings);
    findings.extend(rules::allow_list(&unused));
    // Each pin looks up the findings at its own location, where scanning every finding for every pin grew as
    // pins × findings.
    let mut at_location: HashMap<&Location, Vec<&Finding>> = HashMap::new();
    for finding in findings.iter().filter(|f| f.severity != Severity::Note && f.allowed.is_none()) {
        at_location.entry(&finding.location).or_default().push(finding);
    }
    for (checked, own) in pins.iter_mut().zip(&own) {
        checked.problems = at_location
            .get(&checked.pin.location)
            .into_iter()
            .flatten()
            .filter(|f| {
                let same = |(c, m): &(Class, String)| *c == f.class && *m == f.message;
                own.iter().any(same) || scan_level.get(&f.location).is_some_and(|found| found.iter().any(same))
            })
            .map(|f| f.class)
            .collect();
        checked.problems.sort();
        checked.problems.dedup();
    }
    let summary = summarize(&pins, &findings);
    // Undecided: some pins could not be decided, or no candidate file was found to check.
    let status = summary.tally.status(options.strict, summary.unresolved > 0 || inventory.files_read == 0);
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
        allow,
        files: inventory.files,
    }
}

fn summarize(pins: &[CheckedPin], findings: &[Finding]) -> CheckSummary {
    let mut summary = CheckSummary {
        pins: pins.len(),
        ok: pins.iter().filter(|p| p.verdict == ValueVerdict::Ok).count(),
        tally: Tally::of(findings),
        ..Default::default()
    };
    for f in findings.iter().filter(|f| f.allowed.is_none()) {
        match f.severity {
            Severity::Error => *summary.errors_by_class.entry(f.class.name().to_string()).or_default() += 1,
            Severity::Warning => summary.unresolved += usize::from(f.class == Class::Unresolved),
            Severity::Note => {}
        }
    }
    summary
}

/// The result of one pin.
struct Judged {
    checked: CheckedPin,
    findings: Vec<Finding>,
    /// The curve entry its expected value rests on.
    entry: Option<CurveEntry>,
    /// Whether its thinking mode stayed undecided for want of its model's default
    /// ([`super::resolve::subject::Undecided::for_want_of_default`]).
    for_want_of_default: bool,
}

/// Checks one pin: its facts are resolved first ([`resolve::resolve`]), then judged by the rules
/// ([`rules::judge`]).
fn check_pin(pin: Pin, curves: &CurveSet, context: &Context<'_>) -> Judged {
    let ResolvedPin { pin, key, resolution } = resolve::resolve(pin, curves, context);
    let judgement = rules::judge(&pin, &resolution, curves);
    let (implied_al, golden, entry) = match &resolution {
        Resolution::Subject(s) => {
            let point = Point { model: s.query.model.clone(), mode: s.curve.mode, k: s.range.k };
            let entry = CurveEntry { file: s.golden.file.clone(), point };
            (Some(s.range.implied), Some(s.golden.clone()), Some(entry))
        }
        Resolution::Undecided(u) => (u.range.map(|r| r.implied), None, None),
        Resolution::Inert | Resolution::Silent => (None, None, None),
    };
    let for_want_of_default = matches!(&resolution, Resolution::Undecided(u) if u.for_want_of_default);
    let fix = judgement.fix.then_some(golden.as_ref()).flatten();
    let checked = CheckedPin {
        model_key: key,
        implied_al,
        fix_to: fix.map(|g| g.expected_written),
        fix_rates: fix.and_then(|g| g.expected_rates.clone()),
        golden,
        verdict: judgement.verdict,
        problems: Vec::new(),
        pin,
    };
    Judged { checked, findings: judgement.findings, entry, for_want_of_default }
}
