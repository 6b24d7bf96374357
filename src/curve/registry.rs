//! Resolving a question — model, drafter or method, draft sampling, thinking mode — to exactly one
//! golden curve, or saying why it cannot.
//!
//! Several files share a model key (`minimax-m3` for the EAGLE3 and EAGLE3-GQA drafters, `kimi-k3` for
//! greedy and probabilistic DSpark), so the key alone never decides (docs/pins.md#how-the-check-follows-a-pin). A file
//! whose header names its drafter is matched on that; an InferenceX file whose header does not is matched
//! on the distinguishing words of its file name (`gqa` in `minimaxm3_eagle3_gqa.yaml`), and the match says so.

use std::path::Path;

use serde::Serialize;

use super::{Curve, CurveFile, ThinkingMode};
use crate::error::{Error, LookupKind, Result};
use crate::names::fold;

/// The project's golden files, compiled into the binary so alsim runs with no files at all.
const EMBEDDED: &[(&str, &str)] = &[
    ("dsv4-pro-0813-dspark", include_str!("../../golden/dsv4-pro-0813-dspark.yaml")),
    ("dsv4_mtp", include_str!("../../golden/dsv4_mtp.yaml")),
    ("glm5.2_mtp", include_str!("../../golden/glm5.2_mtp.yaml")),
    ("kimik2.5_eagle3", include_str!("../../golden/kimik2.5_eagle3.yaml")),
    ("kimik3_dspark", include_str!("../../golden/kimik3_dspark.yaml")),
    (
        "kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method",
        include_str!("../../golden/kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method.yaml"),
    ),
    ("minimaxm3_eagle3", include_str!("../../golden/minimaxm3_eagle3.yaml")),
    ("minimaxm3_eagle3_gqa", include_str!("../../golden/minimaxm3_eagle3_gqa.yaml")),
    ("qwen3.5_mtp", include_str!("../../golden/qwen3.5_mtp.yaml")),
];

/// Words in file names and drafter names that say how drafting works rather than which drafter variant it is.
const GENERIC_WORDS: &[&str] = &[
    "mtp",
    "eagle",
    "eagle3",
    "dspark",
    "draft",
    "drafter",
    "sample",
    "method",
    "rejection",
    "probabilistic",
    "greedy",
    "block",
    "inferact",
    "yaml",
];

/// A set of golden files to look curves up in.
#[derive(Debug, Clone, Default)]
pub struct CurveSet {
    files: Vec<CurveFile>,
}

/// What a user asks for. Only `model` is required; every other facet narrows the candidates.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CurveQuery {
    /// Model key or a prefix of it, compared without case or punctuation (`MiniMax-M3` finds `minimax-m3`).
    pub model: String,
    /// Draft model (`Inferact/MiniMax-M3-EAGLE3-GQA`).
    pub drafter: Option<String>,
    /// Speculative method (`eagle3`, `mtp`, `dspark`).
    pub method: Option<String>,
    /// Draft sampling (`greedy`, `probabilistic`).
    pub draft_sampling: Option<String>,
    /// Thinking mode; required when a file holds both modes.
    pub mode: Option<ThinkingMode>,
}

/// A query resolved to one curve, with how each facet was decided.
#[derive(Debug, Clone, Copy)]
pub struct Resolved<'a> {
    /// The file the curve came from.
    pub file: &'a CurveFile,
    /// The curve.
    pub curve: &'a Curve,
    /// How the drafter was matched.
    pub drafter_match: DrafterMatch,
}

/// How a file was matched to the query's drafter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DrafterMatch {
    /// The query named no drafter and only one candidate remained.
    NotAsked,
    /// The file's header names the drafter.
    Header,
    /// Only the file name tells drafters apart (InferenceX's own headers do not).
    FileName,
}

impl CurveSet {
    /// The curves compiled into alsim.
    pub fn embedded() -> CurveSet {
        let files = EMBEDDED
            .iter()
            .map(|(stem, text)| {
                CurveFile::parse(text, &format!("<embedded>/{stem}.yaml"), stem)
                    .expect("embedded golden files are validated by the test suite")
            })
            .collect();
        CurveSet { files }
    }

    /// A set of already parsed files.
    pub fn new(files: Vec<CurveFile>) -> CurveSet {
        CurveSet { files }
    }

    /// Reads every `*.yaml`/`*.yml` file in `dir` (not recursively), in name order.
    ///
    /// # Errors
    /// The first file that cannot be read or parsed, naming it.
    pub fn read_dir(dir: &Path) -> Result<CurveSet> {
        Self::read_dir_where(dir, |_| true)
    }

    /// Reads the `*.yaml`/`*.yml` files in `dir` (not recursively) that `keep` accepts, in name order.
    ///
    /// # Errors
    /// As [`CurveSet::read_dir`].
    pub fn read_dir_where(dir: &Path, keep: impl Fn(&Path) -> bool) -> Result<CurveSet> {
        let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml") && keep(p))
            .collect();
        paths.sort();
        let files = paths.iter().map(|p| CurveFile::read(p)).collect::<Result<_>>()?;
        Ok(CurveSet { files })
    }

    /// The files, in load order.
    pub fn files(&self) -> &[CurveFile] {
        &self.files
    }

    /// Resolves `query` to exactly one curve.
    ///
    /// # Errors
    /// [`Error::Lookup`] naming the known models when nothing matches, and listing the candidates with the
    /// flag that would choose between them when several do.
    ///
    /// ```
    /// use alsim::curve::{CurveQuery, CurveSet, ThinkingMode};
    /// let set = CurveSet::embedded();
    /// let query = CurveQuery {
    ///     model: "minimax-m3".into(),
    ///     drafter: Some("Inferact/MiniMax-M3-EAGLE3-GQA".into()),
    ///     mode: Some(ThinkingMode::On),
    ///     ..Default::default()
    /// };
    /// assert_eq!(set.lookup(&query).unwrap().curve.al(3).unwrap(), 2.78);
    /// ```
    pub fn lookup(&self, query: &CurveQuery) -> Result<Resolved<'_>> {
        let wanted = fold(&query.model);
        if wanted.is_empty() {
            return Err(Error::parameter("model", "model name is empty"));
        }
        let by_model = |exact: bool| -> Vec<&CurveFile> {
            self.files
                .iter()
                .filter(|f| {
                    f.models().iter().any(|m| {
                        let m = fold(m);
                        if exact { m == wanted } else { m.starts_with(&wanted) }
                    })
                })
                .collect()
        };
        let mut candidates = by_model(true);
        if candidates.is_empty() {
            candidates = by_model(false);
        }
        if candidates.is_empty() {
            return Err(Error::lookup(
                LookupKind::Model,
                format!(
                    "no golden curve for model '{}'; known models: {}",
                    query.model,
                    self.known_models().join(", ")
                ),
            ));
        }
        if let Some(method) = &query.method {
            candidates = narrow(candidates, "method", method, |f| f.provenance.method.clone())?;
        }
        if let Some(sampling) = &query.draft_sampling {
            candidates = narrow(candidates, "draft sampling", sampling, |f| {
                Some(f.provenance.draft_sampling.clone().unwrap_or_else(|| "greedy".into()))
            })?;
        }
        let mut drafter_match = DrafterMatch::NotAsked;
        if let Some(drafter) = &query.drafter {
            (candidates, drafter_match) = self.match_drafter(candidates, drafter)?;
        }
        if candidates.len() > 1 {
            return Err(Error::lookup(
                LookupKind::Files,
                format!(
                    "'{}' matches {} golden files: {}; choose one by its drafter, method or draft sampling",
                    query.model,
                    candidates.len(),
                    candidates.iter().map(|f| describe(f)).collect::<Vec<_>>().join("; ")
                ),
            ));
        }
        let file = candidates[0];
        let curves: Vec<&Curve> = file.curves.iter().filter(|c| fold(c.model()).starts_with(&wanted)).collect();
        let curve = match query.mode {
            Some(mode) => curves
                .iter()
                .find(|c| c.mode() == mode)
                .or_else(|| curves.iter().find(|c| c.mode() == ThinkingMode::Unspecified))
                .copied()
                .ok_or_else(|| {
                    Error::lookup(
                        LookupKind::Mode,
                        format!(
                            "{} has no {mode} curve for '{}'; it has {}",
                            file.origin,
                            query.model,
                            curves.iter().map(|c| c.mode().name()).collect::<Vec<_>>().join(", ")
                        ),
                    )
                })?,
            None if curves.len() == 1 => curves[0],
            None => {
                return Err(Error::lookup(
                    LookupKind::Mode,
                    format!(
                        "{} holds {} curves for '{}'; choose a thinking mode ({})",
                        file.origin,
                        curves.len(),
                        query.model,
                        curves.iter().map(|c| c.mode().name()).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        };
        Ok(Resolved { file, curve, drafter_match })
    }

    /// Every model key, sorted and without repeats.
    pub fn known_models(&self) -> Vec<String> {
        let mut models: Vec<String> =
            self.files.iter().flat_map(|f| f.models().into_iter().map(str::to_string)).collect();
        models.sort();
        models.dedup();
        models
    }
}

fn narrow<'a>(
    candidates: Vec<&'a CurveFile>,
    facet: &str,
    wanted: &str,
    value: impl Fn(&CurveFile) -> Option<String>,
) -> Result<Vec<&'a CurveFile>> {
    let wanted_norm = fold(wanted);
    let kept: Vec<&CurveFile> =
        candidates.iter().copied().filter(|f| value(f).is_none_or(|v| fold(&v) == wanted_norm)).collect();
    if kept.is_empty() {
        return Err(Error::lookup(
            LookupKind::Facet,
            format!(
                "no golden curve with {facet} '{wanted}' among {}",
                candidates.iter().map(|f| describe(f)).collect::<Vec<_>>().join("; ")
            ),
        ));
    }
    Ok(kept)
}

impl CurveSet {
    fn match_drafter<'a>(
        &self,
        candidates: Vec<&'a CurveFile>,
        drafter: &str,
    ) -> Result<(Vec<&'a CurveFile>, DrafterMatch)> {
        let wanted = fold(drafter);
        let by_header: Vec<&CurveFile> = candidates
            .iter()
            .copied()
            .filter(|f| f.provenance.drafter.as_deref().is_some_and(|d| fold(d) == wanted))
            .collect();
        if !by_header.is_empty() {
            return Ok((by_header, DrafterMatch::Header));
        }
        // No header names this drafter: fall back to variant words in the file names of files whose header
        // names no drafter. A file matches when all its variant words appear in the drafter's name and it
        // lacks no variant the drafter names; among those, the most specific wins, so `…-EAGLE3-GQA` picks
        // `_gqa` and `…-EAGLE3` picks the plain file.
        let drafter_words = words(drafter);
        let scored: Vec<(usize, &CurveFile)> = candidates
            .iter()
            .copied()
            .filter(|f| f.provenance.drafter.is_none())
            .filter(|f| self.variant_missing(f, drafter).is_none())
            .filter_map(|f| {
                let variant = variant_words(f);
                variant.iter().all(|w| drafter_words.contains(w)).then_some((variant.len(), f))
            })
            .collect();
        let best = scored.iter().map(|(n, _)| *n).max();
        let kept: Vec<&CurveFile> = scored.iter().filter(|(n, _)| Some(*n) == best).map(|(_, f)| *f).collect();
        if kept.is_empty() {
            let missing: Vec<String> = candidates.iter().filter_map(|f| self.variant_missing(f, drafter)).collect();
            return Err(Error::lookup(
                LookupKind::Facet,
                format!(
                    "no golden curve for drafter '{drafter}' among {}{}",
                    candidates.iter().map(|f| describe(f)).collect::<Vec<_>>().join("; "),
                    match missing.first() {
                        Some(variant) => format!(
                            "; the drafter is the '{variant}' variant, whose curve is not here (alsim's embedded curves \
                         may have it: alsim curve list)"
                        ),
                        None => String::new(),
                    }
                ),
            ));
        }
        Ok((kept, DrafterMatch::FileName))
    }

    /// The drafter variant (`gqa`) that `drafter` names and `file` is not a curve of, if any: a word of the
    /// drafter's name (after its organisation) that is a variant word of some file here or of alsim's embedded
    /// curves, but not of `file`. A drafter is never matched to its sibling's curve for want of its own.
    pub fn variant_missing(&self, file: &CurveFile, drafter: &str) -> Option<String> {
        if file.provenance.drafter.is_some() {
            return None;
        }
        let name = drafter.rsplit('/').next().unwrap_or(drafter);
        let own = variant_words(file);
        words(name)
            .into_iter()
            .filter(|w| !own.contains(w))
            .find(|w| embedded_variants().contains(w) || self.files.iter().any(|f| variant_words(f).contains(w)))
    }
}

/// The variant words of alsim's embedded golden files, read once.
fn embedded_variants() -> &'static Vec<String> {
    static VARIANTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    VARIANTS.get_or_init(|| CurveSet::embedded().files.iter().flat_map(variant_words).collect())
}

/// Words of a file name that name neither the model nor the method: the drafter variant (`gqa`).
pub(crate) fn variant_words(file: &CurveFile) -> Vec<String> {
    let model_words: Vec<String> = file.models().iter().flat_map(|m| words(m)).collect();
    let models: Vec<String> = file.models().iter().map(|m| fold(m)).collect();
    words(&file.stem)
        .into_iter()
        .filter(|w| !GENERIC_WORDS.contains(&w.as_str()))
        .filter(|w| !model_words.contains(w) && !models.iter().any(|m| m.starts_with(w.as_str())))
        .collect()
}

fn describe(file: &CurveFile) -> String {
    let p = &file.provenance;
    format!(
        "{} (drafter {}, method {}, draft sampling {})",
        file.origin,
        p.drafter.as_deref().unwrap_or("not recorded"),
        p.method.as_deref().unwrap_or("not recorded"),
        p.draft_sampling.as_deref().unwrap_or("not recorded")
    )
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric() && c != '.')
        .filter(|w| !w.is_empty())
        .map(|w| w.to_ascii_lowercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(model: &str, drafter: Option<&str>, mode: Option<ThinkingMode>) -> CurveQuery {
        CurveQuery { model: model.into(), drafter: drafter.map(Into::into), mode, ..Default::default() }
    }

    /// A tree with only the MHA drafter's curve has no curve for the GQA drafter: the lookup says so (naming
    /// the variant) instead of handing over the sibling's curve, while the MHA drafter still finds its own.
    #[test]
    fn a_drafter_variant_never_gets_its_siblings_curve() {
        // InferenceX's own header, which names no drafter.
        let text = include_str!("../../tests/fixtures/benchrepo/golden_al_distribution/minimaxm3_eagle3.yaml");
        let set = CurveSet::new(vec![CurveFile::parse(text, "minimaxm3_eagle3.yaml", "minimaxm3_eagle3").unwrap()]);
        let on = Some(ThinkingMode::On);
        let err = set.lookup(&query("minimax-m3", Some("Org/MiniMax-M3-EAGLE3-GQA"), on)).unwrap_err().to_string();
        assert!(err.contains("MiniMax-M3-EAGLE3-GQA") && err.contains("the 'gqa' variant"), "{err}");
        let mha = set.lookup(&query("minimax-m3", Some("Org/MiniMax-M3-EAGLE3"), on)).unwrap();
        assert_eq!(mha.curve.al(3).unwrap(), 2.83);
        assert_eq!(set.variant_missing(mha.file, "Org/MiniMax-M3-EAGLE3-GQA").as_deref(), Some("gqa"));
        // An organisation's name is not a variant, even one that spells a variant word.
        assert_eq!(set.variant_missing(mha.file, "gqa/MiniMax-M3-EAGLE3"), None);
    }

    #[test]
    fn embedded_list_matches_golden_dir() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path().file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let embedded: Vec<String> = EMBEDDED.iter().map(|(s, _)| s.to_string()).collect();
        assert_eq!(on_disk, embedded);
        assert_eq!(CurveSet::embedded().files().len(), EMBEDDED.len());
    }

    #[test]
    fn seed_and_sibling_resolve_by_drafter() {
        let set = CurveSet::embedded();
        let on = Some(ThinkingMode::On);
        let mha = set.lookup(&query("MiniMax-M3", Some("Inferact/MiniMax-M3-EAGLE3"), on)).unwrap();
        assert_eq!(mha.curve.al(3).unwrap(), 2.83);
        assert_eq!(mha.drafter_match, DrafterMatch::Header);
        let gqa = set.lookup(&query("minimax-m3", Some("Inferact/MiniMax-M3-EAGLE3-GQA"), on)).unwrap();
        assert_eq!(gqa.curve.al(3).unwrap(), 2.78);
        let err = set.lookup(&query("minimax-m3", None, on)).unwrap_err();
        assert!(matches!(err, Error::Lookup { kind: LookupKind::Files, .. }), "{err}");
        assert!(err.to_string().contains("by its drafter, method or draft sampling"), "{err}");
        let err = set.lookup(&query("llama", None, on)).unwrap_err().to_string();
        assert!(err.contains("known models"), "{err}");
    }

    #[test]
    fn inferencex_files_resolve_by_file_name() {
        let header = "# Measured on minimax-m3 (B300, vLLM EAGLE3), per num_speculative_tokens.\n";
        let body = "minimax-m3:\n  thinking_on:\n    3: ";
        let plain = CurveFile::parse(&format!("{header}{body}2.83\n"), "a", "minimaxm3_eagle3").unwrap();
        let gqa = CurveFile::parse(&format!("{header}{body}2.78\n"), "b", "minimaxm3_eagle3_gqa").unwrap();
        let set = CurveSet::new(vec![plain, gqa]);
        let on = Some(ThinkingMode::On);
        let r = set.lookup(&query("minimax-m3", Some("Inferact/MiniMax-M3-EAGLE3-GQA"), on)).unwrap();
        assert_eq!((r.curve.al(3).unwrap(), r.drafter_match), (2.78, DrafterMatch::FileName));
        let r = set.lookup(&query("minimax-m3", Some("Inferact/MiniMax-M3-EAGLE3"), on)).unwrap();
        assert_eq!(r.curve.al(3).unwrap(), 2.83);
    }

    #[test]
    fn draft_sampling_separates_kimi_files() {
        let set = CurveSet::embedded();
        let mut q = query("kimi-k3", None, Some(ThinkingMode::On));
        assert!(set.lookup(&q).is_err());
        q.draft_sampling = Some("probabilistic".into());
        assert_eq!(set.lookup(&q).unwrap().curve.al(3).unwrap(), 3.00);
        q.draft_sampling = Some("greedy".into());
        assert_eq!(set.lookup(&q).unwrap().curve.al(3).unwrap(), 2.87);
    }
}
