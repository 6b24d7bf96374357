//! Golden curves: files of mean acceptance length AL(k) per model, thinking mode and draft length,
//! measured with real verification (InferenceX `golden_al_distribution/*.yaml`).
//!
//! This module owns reading those files in all three shapes InferenceX uses, their provenance
//! (`provenance`), resolving a (model, drafter, method, draft sampling, mode, k) query to one curve
//! (`registry`), validating curves ([`check`]) and writing them back in InferenceX's layout (`mod@write`).
//! The project's own curves are embedded in the binary ([`CurveSet::embedded`]). Curves measured from
//! evidence are [`crate::measured`]'s: this module reads and judges files, and knows nothing of runs.
//!
//! Shapes, all read unchanged:
//! - thinking matrix: `model: {thinking_on: {1: 1.78, …}, thinking_off: {…}}`
//! - plain map: `model: {1: 1.78, 2: 2.38, …}`
//! - flat list: `model: [{1: 1.90}, {2: 2.60}]`

pub mod check;
pub(crate) mod provenance;
pub(crate) mod registry;
pub(crate) mod write;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

pub use provenance::Provenance;
pub use registry::{CurveQuery, CurveSet, Resolved};

use crate::error::{Error, LookupKind, Result};
use crate::units::{MAX_DRAFT_LEN, check_al};
use crate::yaml::{self, Node, Value};

/// The thinking mode a curve was measured in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ThinkingMode {
    /// Reasoning on (`thinking_on`).
    #[serde(rename = "thinking_on")]
    On,
    /// Reasoning off (`thinking_off`).
    #[serde(rename = "thinking_off")]
    Off,
    /// The file does not say (plain-map and flat-list shapes): the model's default mode.
    #[serde(rename = "unspecified")]
    Unspecified,
}

crate::names::named_enum!(
    ThinkingMode,
    field = "mode",
    what = "thinking mode",
    [
        On = "thinking_on" | "on" | "thinking" | "true" | "enabled",
        Off = "thinking_off" | "off" | "no_thinking" | "false" | "disabled",
        Unspecified = "unspecified" | "default",
    ]
);

/// Which of the three InferenceX layouts a curve was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// `model: {thinking_on: {k: AL}, thinking_off: {…}}`.
    ThinkingMatrix,
    /// `model: {k: AL}`.
    PlainMap,
    /// `model: [{k: AL}, …]`.
    FlatList,
}

/// One golden curve: AL(k) for one model and thinking mode.
///
/// Values are kept as written; [`check`] reports range and monotonicity problems, and [`Curve::al`]
/// refuses an out-of-range value at the point of use.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Curve {
    model: String,
    mode: ThinkingMode,
    points: BTreeMap<usize, f64>,
}

impl Curve {
    /// Builds a curve from (k, AL) points.
    ///
    /// # Errors
    /// [`Error::Invalid`] when there are no points, a k is 0 or above [`MAX_DRAFT_LEN`], or an AL is not finite.
    pub fn new(model: impl Into<String>, mode: ThinkingMode, points: BTreeMap<usize, f64>) -> Result<Self> {
        let model = model.into();
        if points.is_empty() {
            return Err(Error::invalid(format!("{model}.{mode}"), "curve has no points"));
        }
        for (&k, &al) in &points {
            if k == 0 || k > MAX_DRAFT_LEN {
                return Err(Error::invalid(
                    format!("{model}.{mode}.{k}"),
                    format!("draft length must be 1..={MAX_DRAFT_LEN}"),
                ));
            }
            if !al.is_finite() {
                return Err(Error::invalid(format!("{model}.{mode}.{k}"), "acceptance length is not a finite number"));
            }
        }
        Ok(Curve { model, mode, points })
    }

    /// The model key.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The thinking mode.
    pub fn mode(&self) -> ThinkingMode {
        self.mode
    }

    /// The (k, AL) points, by increasing k.
    pub fn points(&self) -> &BTreeMap<usize, f64> {
        &self.points
    }

    /// The largest k on the curve.
    pub fn max_k(&self) -> usize {
        *self.points.keys().next_back().expect("curves have points")
    }

    /// The curve's key path (`minimax-m3.thinking_on`, or `model` alone when the mode is unspecified).
    pub fn name(&self) -> String {
        match self.mode {
            ThinkingMode::Unspecified => self.model.clone(),
            mode => format!("{}.{mode}", self.model),
        }
    }

    /// The key path of one point, as error messages name it (`minimax-m3.thinking_on.3`).
    pub fn field(&self, k: usize) -> String {
        format!("{}.{k}", self.name())
    }

    /// The golden AL at draft length `k`.
    ///
    /// # Errors
    /// [`Error::Lookup`] when the curve has no point at `k`; [`Error::Invalid`] when the value is outside [1, k+1].
    pub fn al(&self, k: usize) -> Result<f64> {
        let al = *self.points.get(&k).ok_or_else(|| {
            Error::lookup(
                LookupKind::Point,
                format!(
                    "{} ({}) has no golden value for k = {k}; it has k = {}",
                    self.model,
                    self.mode,
                    self.points.keys().map(usize::to_string).collect::<Vec<_>>().join(", ")
                ),
            )
        })?;
        check_al(al, k, &self.field(k))?;
        Ok(al)
    }

    /// Per-position increments p_i = AL(i) − AL(i−1), AL(0) = 1, for i = 1..=k, as measured (possibly
    /// violating the chain constraints).
    ///
    /// # Errors
    /// [`Error::Lookup`] when a k in 1..=k is missing.
    pub fn increments(&self, k: usize) -> Result<Vec<f64>> {
        let mut previous = 1.0;
        (1..=k)
            .map(|i| {
                let al = *self.points.get(&i).ok_or_else(|| {
                    Error::lookup(
                        LookupKind::Point,
                        format!("{} ({}) has no golden value for k = {i}", self.model, self.mode),
                    )
                })?;
                let p = al - previous;
                previous = al;
                Ok(p)
            })
            .collect()
    }
}

/// A parsed golden file: its header's provenance and its curves.
#[derive(Debug, Clone, Serialize)]
pub struct CurveFile {
    /// Where it came from: a path, or `<embedded>/name.yaml`.
    pub origin: String,
    /// The file name without extension (`minimaxm3_eagle3_gqa`); for InferenceX files, the only thing that
    /// tells two drafters apart.
    pub stem: String,
    /// The layout.
    pub shape: Shape,
    /// The header comment, one entry per line, `#` removed.
    pub header: Vec<String>,
    /// What the header says.
    pub provenance: Provenance,
    /// The curves, one per model key and mode.
    pub curves: Vec<Curve>,
    /// The file as read, for the line of each value.
    #[serde(skip)]
    tree: Node,
}

impl CurveFile {
    /// Parses a golden file's text; `origin` names it in errors and `stem` is its file name without extension.
    ///
    /// # Errors
    /// [`Error::Parse`] for invalid YAML (with line), a layout that is none of the three shapes, non-numeric
    /// values, k = 0 or non-integer k (naming the file and the key).
    pub fn parse(text: &str, origin: &str, stem: &str) -> Result<Self> {
        let root = yaml::parse(text, origin)?;
        let Value::Map(models) = &root.value else {
            return Err(Error::parse(
                origin,
                None,
                format!("expected a mapping of model keys to curves at the top level, found a {}", root.kind()),
            ));
        };
        if models.is_empty() {
            return Err(Error::parse(origin, None, "the file holds no curves"));
        }
        let mut curves = Vec::new();
        let mut shapes = Vec::new();
        for (key, body) in models {
            let model =
                key.as_scalar_text().ok_or_else(|| Error::parse(origin, None, "a model key is not a scalar"))?;
            // A bad value names its key (`model.2`); the file is added so the line names both.
            let (shape, mut found) = parse_model(&model, body, origin).map_err(|e| match e {
                Error::Invalid { field, message } => Error::parse(origin, None, format!("{field}: {message}")),
                other => other,
            })?;
            shapes.push(shape);
            curves.append(&mut found);
        }
        let shape = shapes[0];
        let header: Vec<String> = text
            .lines()
            .take_while(|l| l.trim_start().starts_with('#') || l.trim().is_empty())
            .filter_map(|l| l.trim_start().strip_prefix('#'))
            .map(|l| l.trim().to_string())
            .collect();
        let provenance = Provenance::from_header(&header);
        let (origin, stem) = (origin.to_string(), stem.to_string());
        Ok(CurveFile { origin, stem, shape, header, provenance, curves, tree: root })
    }

    /// The 1-based line the golden value of `model` in `mode` at k is written on (a mode that is
    /// [`ThinkingMode::Unspecified`] has no key of its own); the line of the deepest key found when the rest
    /// is missing, 1 when none is.
    pub fn line_of(&self, model: &str, mode: ThinkingMode, k: usize) -> usize {
        let mut path = vec![model.to_string()];
        if mode != ThinkingMode::Unspecified {
            path.push(mode.name().to_string());
        }
        path.push(k.to_string());
        let (mut node, mut line) = (&self.tree, 1);
        for key in &path {
            // Through mappings, and the one-entry mappings of a `[{k: AL}, …]` list.
            let found = match &node.value {
                Value::Seq(items) => items.iter().find_map(|item| item.entry(key)),
                _ => node.entry(key),
            };
            let Some((key_node, value)) = found else { break };
            (node, line) = (value, key_node.line);
        }
        line
    }

    /// Reads and parses a golden file from disk.
    ///
    /// # Errors
    /// [`Error::Io`] when unreadable, else as [`CurveFile::parse`].
    pub fn read(path: &Path) -> Result<Self> {
        let text = crate::input::read_text(path, crate::input::SMALL_FILE_LIMIT)?;
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        Self::parse(&text, &path.display().to_string(), &stem)
    }

    /// One summary line per model key, for listings.
    pub fn summaries(&self) -> Vec<CurveSummary> {
        self.models()
            .into_iter()
            .map(|model| {
                let curves: Vec<&Curve> = self.curves.iter().filter(|c| c.model() == model).collect();
                let ks = curves.iter().flat_map(|c| c.points().keys().copied());
                let p = &self.provenance;
                CurveSummary {
                    origin: self.origin.clone(),
                    model: model.to_string(),
                    drafter: p.drafter.clone(),
                    method: p.method.clone(),
                    draft_sampling: p.draft_sampling.clone(),
                    modes: curves.iter().map(|c| c.mode()).collect(),
                    k_min: ks.clone().min().unwrap_or(0),
                    k_max: ks.max().unwrap_or(0),
                    measured_on: [p.hardware.as_deref(), p.engine.as_deref()]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(", "),
                    dataset: p.settings.get("dataset").cloned(),
                    source_run: p.source_run.clone(),
                    shape: self.shape,
                }
            })
            .collect()
    }

    /// The distinct model keys in this file.
    pub fn models(&self) -> Vec<&str> {
        let mut models: Vec<&str> = self.curves.iter().map(Curve::model).collect();
        models.dedup();
        models
    }
}

/// One line of `alsim curve list`.
#[derive(Debug, Clone, Serialize)]
pub struct CurveSummary {
    /// The file.
    pub origin: String,
    /// The model key.
    pub model: String,
    /// The drafter, when recorded.
    pub drafter: Option<String>,
    /// The method, when recorded.
    pub method: Option<String>,
    /// Draft sampling, when recorded.
    pub draft_sampling: Option<String>,
    /// Thinking modes present.
    pub modes: Vec<ThinkingMode>,
    /// Smallest k.
    pub k_min: usize,
    /// Largest k.
    pub k_max: usize,
    /// Hardware and engine of the measurement.
    pub measured_on: String,
    /// Dataset.
    pub dataset: Option<String>,
    /// The measuring run.
    pub source_run: Option<String>,
    /// Layout of the file.
    pub shape: Shape,
}

fn parse_model(model: &str, body: &Node, origin: &str) -> Result<(Shape, Vec<Curve>)> {
    match &body.value {
        Value::Map(entries) if entries.iter().any(|(k, _)| is_mode_key(k)) => {
            let mut curves = Vec::new();
            for (key, points) in entries {
                let key_text = key.as_scalar_text().unwrap_or_default();
                let mode: ThinkingMode = key_text.parse().map_err(|_| {
                    Error::invalid(
                        format!("{model}.{key_text}"),
                        "expected thinking_on or thinking_off beside the other mode keys",
                    )
                })?;
                let field = format!("{model}.{key_text}");
                let (_, map) = parse_points(points, &field, origin)?;
                curves.push(Curve::new(model, mode, map)?);
            }
            Ok((Shape::ThinkingMatrix, curves))
        }
        _ => {
            let (shape, map) = parse_points(body, model, origin)?;
            Ok((shape, vec![Curve::new(model, ThinkingMode::Unspecified, map)?]))
        }
    }
}

fn is_mode_key(key: &Node) -> bool {
    key.as_scalar_text().is_some_and(|k| k.starts_with("thinking"))
}

/// A `{k: AL}` mapping or a `[{k: AL}, …]` list.
fn parse_points(node: &Node, field: &str, origin: &str) -> Result<(Shape, BTreeMap<usize, f64>)> {
    let mut points = BTreeMap::new();
    let mut add = |k: &Node, v: &Node| -> Result<()> {
        let k_text = k.as_scalar_text().unwrap_or_else(|| k.kind().to_string());
        let k_value: usize = k_text.trim().parse().map_err(|_| {
            Error::invalid(format!("{field}.{k_text}"), "a draft length key must be a positive integer")
        })?;
        if k_value == 0 {
            return Err(Error::invalid(format!("{field}.0"), "draft length k = 0 is not speculative decoding"));
        }
        let al = v.as_f64().ok_or_else(|| {
            Error::invalid(
                format!("{field}.{k_value}"),
                format!(
                    "acceptance length must be a number, found {}",
                    v.as_scalar_text().unwrap_or_else(|| v.kind().into())
                ),
            )
        })?;
        if points.insert(k_value, al).is_some() {
            return Err(Error::invalid(format!("{field}.{k_value}"), "draft length appears twice"));
        }
        Ok(())
    };
    match &node.value {
        Value::Map(entries) => {
            for (k, v) in entries {
                add(k, v)?;
            }
            if points.is_empty() {
                return Err(Error::invalid(field, "curve has no points"));
            }
            Ok((Shape::PlainMap, points))
        }
        Value::Seq(items) => {
            for item in items {
                match &item.value {
                    Value::Map(entries) if entries.len() == 1 => add(&entries[0].0, &entries[0].1)?,
                    _ => {
                        return Err(Error::invalid(
                            field,
                            format!("each list item must be a one-entry mapping {{k: AL}}, found a {}", item.kind()),
                        ));
                    }
                }
            }
            if points.is_empty() {
                return Err(Error::invalid(field, "curve has no points"));
            }
            Ok((Shape::FlatList, points))
        }
        _ => Err(Error::parse(
            origin,
            None,
            format!(
                "{field}: expected a mapping {{k: AL}}, a list [{{k: AL}}] or thinking_on/thinking_off, found a {}",
                node.kind()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_all_three_shapes() {
        let matrix = CurveFile::parse("m:\n  thinking_on:\n    1: 1.8\n    2: 2.4\n", "a", "a").unwrap();
        assert_eq!(matrix.shape, Shape::ThinkingMatrix);
        assert_eq!(matrix.curves[0].mode(), ThinkingMode::On);
        let plain = CurveFile::parse("m:\n  1: 1.8\n  2: 2.4\n", "b", "b").unwrap();
        assert_eq!(plain.shape, Shape::PlainMap);
        let list = CurveFile::parse("m:\n  - 1: 1.90\n  - 2: 2.60\n", "c", "c").unwrap();
        assert_eq!(list.shape, Shape::FlatList);
        assert_eq!(list.curves[0].al(2).unwrap(), 2.6);
        // Each value's line, in every shape; a missing k falls back to its deepest key's line.
        assert_eq!(matrix.line_of("m", ThinkingMode::On, 2), 4);
        assert_eq!(matrix.line_of("m", ThinkingMode::On, 7), 2);
        assert_eq!(plain.line_of("m", ThinkingMode::Unspecified, 2), 3);
        assert_eq!(list.line_of("m", ThinkingMode::Unspecified, 2), 3);
        assert_eq!(list.line_of("x", ThinkingMode::Unspecified, 2), 1);
    }

    #[test]
    fn malformed_files_name_the_key() {
        let err = CurveFile::parse("m:\n  0: 1.0\n", "f", "f").unwrap_err().to_string();
        assert!(err.contains("m.0"), "{err}");
        let err = CurveFile::parse("m:\n  1: fast\n", "f", "f").unwrap_err().to_string();
        assert!(err.contains("m.1") && err.contains("fast"), "{err}");
        let err = CurveFile::parse("- 1\n", "f.yaml", "f").unwrap_err().to_string();
        assert!(err.starts_with("f.yaml"), "{err}");
        let err = CurveFile::parse("m:\n  1: 2.5\n", "f", "f").unwrap().curves[0].al(1).unwrap_err().to_string();
        assert!(err.contains("m.1"), "{err}");
    }
}
