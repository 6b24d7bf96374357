//! The golden lookup for one pin: the drafter's name, the curve a query selects, and the golden value under
//! the other draft sampling where no file writes one.

use super::key::is_variant;
use crate::curve::registry::DrafterMatch;
use crate::curve::{CurveFile, CurveQuery, CurveSet, Resolved};
use crate::names::fold;
use crate::pins::verdict::GoldenRef;

/// A drafter given as a local staging path (`/tmp/Kimi-K3-DSpark`) is matched on its last component, to
/// the drafter a golden file's header names (`Inferact/Kimi-K3-DSpark`) when one ends with it.
pub(in crate::pins) fn drafter_name(curves: &CurveSet, drafter: &str) -> String {
    if !(drafter.starts_with('/') || drafter.starts_with('.') || drafter.starts_with('~')) {
        return drafter.to_string();
    }
    let name = drafter.trim_end_matches('/').rsplit('/').next().unwrap_or(drafter);
    curves
        .files()
        .iter()
        .filter_map(|f| f.provenance.drafter.as_deref())
        .find(|d| fold(d.rsplit('/').next().unwrap_or(d)) == fold(name))
        .map_or_else(|| name.to_string(), str::to_string)
}

pub(in crate::pins) struct Lookup<'a> {
    pub(in crate::pins) resolved: Resolved<'a>,
    pub(in crate::pins) expected: f64,
    /// How the curve was chosen where it is not the served model's own in the repository: alsim's embedded
    /// curve (the repository holds none for the drafter or the method), or a variant model key's, the
    /// family's only curve of the method.
    pub(in crate::pins) chosen: Option<String>,
}

/// The family of a speculative method as engines and golden headers spell it: `mtp` for a model's own
/// multi-token-prediction head (`mtp`, `MTP`, `NEXTN`, `deepseek_mtp`, `qwen3_next_mtp`, and SGLang's
/// `EAGLE` with no draft model, which runs the target's NextN layers), `eagle3`, `dspark`, and any other
/// method by its own name (`eagle` with a draft model, `ngram`).
pub(in crate::pins) fn method_family(method: &str, drafter: Option<&str>) -> String {
    let m = method.trim().to_ascii_lowercase();
    if m.contains("dspark") {
        "dspark".into()
    } else if m.contains("eagle3") {
        "eagle3".into()
    } else if m == "mtp" || m == "nextn" || m.ends_with("_mtp") || m.ends_with("-mtp") {
        "mtp".into()
    } else if m == "eagle" {
        match drafter {
            None => "mtp".into(),
            Some(d) if d.to_ascii_lowercase().contains("eagle3") => "eagle3".into(),
            Some(_) => m,
        }
    } else {
        m
    }
}

/// The family of the method a golden file was collected with, where its header records one.
fn file_family(file: &CurveFile) -> Option<String> {
    let p = &file.provenance;
    p.method.as_deref().map(|m| method_family(m, p.drafter.as_deref()))
}

/// Where a method's curve of a model key lies in a set of curves.
enum ByMethod {
    /// Some file of the key records no method: the method cannot narrow (the query stands without it).
    Unrecorded,
    /// A file of the key was collected with the method, as that file spells it.
    Own(String),
    /// No file of the key was, but the files of exactly one variant key (`deepseek-v4-pro-0813` of
    /// `deepseek-v4-pro`) were: that key, and the method as its file spells it.
    Variant(String, String),
    /// Neither: the methods the key's files were collected with.
    Missing(Vec<String>),
}

fn by_method(set: &CurveSet, key: &str, family: &str) -> ByMethod {
    let own = files_for(set, key);
    if let Some(f) = own.iter().find(|f| file_family(f).as_deref() == Some(family)) {
        return ByMethod::Own(f.provenance.method.clone().unwrap_or_default());
    }
    if own.iter().any(|f| f.provenance.method.is_none()) {
        return ByMethod::Unrecorded;
    }
    let variants: Vec<(&str, &CurveFile)> = set
        .files()
        .iter()
        .filter(|f| file_family(f).as_deref() == Some(family))
        .flat_map(|f| f.models().into_iter().map(move |m| (m, f)))
        .filter(|(m, _)| is_variant(m, key))
        .collect();
    match variants.as_slice() {
        [(key, file), rest @ ..] if rest.iter().all(|(k, _)| k == key) => {
            ByMethod::Variant(key.to_string(), file.provenance.method.clone().unwrap_or_default())
        }
        _ => ByMethod::Missing(own.iter().filter_map(|f| file_family(f)).collect()),
    }
}

/// alsim's embedded curves, read once.
pub(in crate::pins) fn embedded() -> &'static CurveSet {
    static EMBEDDED: std::sync::OnceLock<CurveSet> = std::sync::OnceLock::new();
    EMBEDDED.get_or_init(CurveSet::embedded)
}

/// The curve a checked pin's golden value came from, where the check found it: in `curves`, the set it
/// resolved against, or in alsim's embedded ones, which its lookup falls back to. `alsim sweep` predicts a
/// pinned point on it, so that the two never choose apart.
pub(crate) fn golden_curve<'c>(golden: &GoldenRef, curves: &'c CurveSet) -> Option<Resolved<'c>> {
    [curves, embedded()].into_iter().flat_map(CurveSet::files).filter(|f| f.origin == golden.file).find_map(|file| {
        let curve = file.curves.iter().find(|c| (1..=c.max_k()).any(|k| c.field(k) == golden.key))?;
        Some(Resolved { file, curve, drafter_match: golden.drafter_match })
    })
}

/// The golden value under the other draft sampling, when none is written.
pub(in crate::pins) struct Alternative {
    pub(in crate::pins) desc: String,
    pub(in crate::pins) al: f64,
    pub(in crate::pins) field: String,
}

/// The curve `query` selects at `k`. Its `method`, where given, is the run's method family
/// ([`method_family`]) and selects the curve family: the model's curve of that method, else the one
/// variant key's that has it (the family's only curve of the method), else alsim's embedded one by the
/// same steps, curve by curve, each said in [`Lookup::chosen`]; never another method's curve. Where a
/// file of the model records no method, the method does not narrow.
pub(in crate::pins) fn lookup<'a>(curves: &'a CurveSet, query: &CurveQuery, k: usize) -> crate::Result<Lookup<'a>> {
    let Some(family) = query.method.clone() else { return by_drafter(curves, query, k) };
    let plain = CurveQuery { method: None, ..query.clone() };
    let in_set = |set: &'a CurveSet, choice: ByMethod| -> Option<crate::Result<Lookup<'a>>> {
        match choice {
            ByMethod::Unrecorded => Some(by_drafter(set, &plain, k)),
            ByMethod::Own(method) => Some(by_drafter(set, &CurveQuery { method: Some(method), ..plain.clone() }, k)),
            ByMethod::Variant(key, method) => {
                let variant = CurveQuery { model: key.clone(), method: Some(method), ..plain.clone() };
                Some(by_drafter(set, &variant, k).map(|mut l| {
                    let note = format!("the {family} curve of {key}, the only one of the {} family", query.model);
                    l.chosen = Some(l.chosen.map_or(note.clone(), |c| format!("{c}; {note}")));
                    l
                }))
            }
            ByMethod::Missing(_) => None,
        }
    };
    let missing = match by_method(curves, &query.model, &family) {
        ByMethod::Missing(held) => held,
        choice => return in_set(curves, choice).expect("only a missing method has no lookup"),
    };
    let lacks = format!(
        "the repository's golden curves hold no {family} curve of {} (its curves: {})",
        query.model,
        if missing.is_empty() { "none".to_string() } else { missing.join(", ") }
    );
    if !std::ptr::eq(curves, embedded())
        && let Some(found) = in_set(embedded(), by_method(embedded(), &query.model, &family))
    {
        return found.map(|mut l| {
            l.chosen = Some(format!(
                "alsim's embedded curve: {lacks}{}",
                l.chosen.map(|c| format!("; {c}")).unwrap_or_default()
            ));
            l
        });
    }
    Err(crate::Error::lookup(
        crate::LookupKind::Facet,
        format!("{lacks}, nor alsim's; another method's curve does not stand in"),
    ))
}

/// The curve `query` selects at `k` by its drafter: the drafter's own, or alsim's embedded one where the
/// repository lacks that drafter's variant.
fn by_drafter<'a>(curves: &'a CurveSet, query: &CurveQuery, k: usize) -> crate::Result<Lookup<'a>> {
    let mut embedded_used = false;
    let resolved = match curves.lookup(query) {
        Ok(r) => r,
        Err(first) => {
            // A drafter name that matches no file name is fine when the model has one file (MTP heads), unless
            // the drafter is a variant that file is not a curve of (a GQA drafter in a tree with only the MHA
            // drafter's curve): then its own curve is alsim's embedded one where alsim has it (curve by
            // curve: only the drafter the repository lacks), else the value cannot be judged, and saying so
            // beats a false verdict.
            let fallback = CurveQuery { drafter: None, ..query.clone() };
            match (&query.drafter, curves.lookup(&fallback)) {
                (Some(drafter), Ok(r))
                    if files_for(curves, &query.model).len() == 1
                        && curves.variant_missing(r.file, drafter).is_none() =>
                {
                    r
                }
                (Some(_), _) if !std::ptr::eq(curves, embedded()) && !files_for(curves, &query.model).is_empty() => {
                    match embedded().lookup(query) {
                        Ok(r) if r.drafter_match == DrafterMatch::Header => {
                            embedded_used = true;
                            r
                        }
                        _ => return Err(first),
                    }
                }
                _ => return Err(first),
            }
        }
    };
    let expected = resolved.curve.al(k)?;
    let chosen = embedded_used.then(|| {
        format!(
            "alsim's embedded curve: the repository's golden curves hold none for drafter {}",
            query.drafter.as_deref().unwrap_or_default()
        )
    });
    Ok(Lookup { resolved, expected, chosen })
}

/// The golden value under the other draft sampling, when no file writes one (engines draft greedily by
/// default, but a curve collected the other way may be the one the value was written for). A thinking mode
/// taken from a documented default has no alternative: it decides like a literal.
pub(in crate::pins) fn sampling_alternative(curves: &CurveSet, query: &CurveQuery, k: usize) -> Option<Alternative> {
    let other = if query.draft_sampling.as_deref() == Some("probabilistic") { "greedy" } else { "probabilistic" };
    let variant = CurveQuery { draft_sampling: Some(other.into()), ..query.clone() };
    let l = lookup(curves, &variant, k).ok()?;
    (l.resolved.curve.mode() == variant.mode.unwrap_or(l.resolved.curve.mode())).then(|| Alternative {
        desc: format!("{other} drafting"),
        al: l.expected,
        field: format!("{} {}", short(&l.resolved.file.origin), l.resolved.curve.field(k)),
    })
}

pub(in crate::pins) fn describe_query(q: &CurveQuery) -> String {
    let mut parts = vec![q.model.clone()];
    if let Some(d) = &q.drafter {
        parts.push(d.clone());
    }
    if let Some(m) = q.mode {
        parts.push(m.to_string());
    }
    parts.join(", ")
}

pub(in crate::pins) fn short(origin: &str) -> String {
    origin.rsplit('/').next().unwrap_or(origin).to_string()
}

pub(in crate::pins) fn files_for<'a>(curves: &'a CurveSet, key: &str) -> Vec<&'a CurveFile> {
    curves.files().iter().filter(|f| f.models().contains(&key)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::curve::CurveSet;

    #[test]
    fn methods_fold_into_their_family() {
        for (method, drafter, family) in [
            ("MTP", None, "mtp"),
            ("NEXTN", None, "mtp"),
            ("deepseek_mtp", None, "mtp"),
            ("qwen3_next_mtp", None, "mtp"),
            ("EAGLE", None, "mtp"),
            ("EAGLE", Some("Org/Model-EAGLE3"), "eagle3"),
            ("Eagle3", None, "eagle3"),
            ("dspark", Some("/tmp/Kimi-K3-DSpark"), "dspark"),
            ("ngram", None, "ngram"),
        ] {
            assert_eq!(method_family(method, drafter), family, "{method} {drafter:?}");
        }
    }

    /// A DSpark run of a model whose curves here are MTP only: the variant key's DSpark curve, else alsim's,
    /// each said; where neither has one, no curve (never the MTP one).
    #[test]
    fn the_method_chooses_the_curve_family() {
        let all = CurveSet::embedded();
        let query = |model: &str, method: &str| CurveQuery {
            model: model.into(),
            method: Some(method.into()),
            draft_sampling: Some("probabilistic".into()),
            mode: Some(crate::curve::ThinkingMode::On),
            ..Default::default()
        };
        let found = lookup(&all, &query("deepseek-v4-pro", "dspark"), 3).unwrap();
        assert_eq!(found.resolved.curve.model(), "deepseek-v4-pro-0813");
        assert!(found.chosen.unwrap().contains("the only one of the deepseek-v4-pro family"));
        let mtp_only = CurveSet::new(all.files().iter().filter(|f| f.stem == "dsv4_mtp").cloned().collect());
        let found = lookup(&mtp_only, &query("deepseek-v4-pro", "dspark"), 3).unwrap();
        assert_eq!(found.resolved.file.origin, "<embedded>/dsv4-pro-0813-dspark.yaml");
        assert!(
            found.chosen.unwrap().starts_with("alsim's embedded curve: the repository's golden curves hold no dspark")
        );
        let err = lookup(&all, &query("glm-5.2-fp8", "dspark"), 3).err().unwrap().to_string();
        assert!(err.contains("hold no dspark curve of glm-5.2-fp8") && err.contains("nor alsim's"), "{err}");
    }

    #[test]
    fn a_staging_path_names_the_drafter_a_golden_header_names() {
        let set = CurveSet::embedded();
        assert_eq!(drafter_name(&set, "/tmp/Kimi-K3-DSpark"), "Inferact/Kimi-K3-DSpark");
        assert_eq!(drafter_name(&set, "/data/models/Other-Draft"), "Other-Draft");
        assert_eq!(drafter_name(&set, "Inferact/Kimi-K3-DSpark"), "Inferact/Kimi-K3-DSpark");
    }
}
