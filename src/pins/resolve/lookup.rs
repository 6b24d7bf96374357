//! The golden lookup for one pin: the model's golden key, the drafter's name, the curve a query selects,
//! and the golden value under the other draft sampling where no file writes one.

use crate::curve::registry::DrafterMatch;
use crate::curve::{CurveFile, CurveQuery, CurveSet, Resolved};
use crate::names::fold;

/// Matches a served model name (`MiniMaxAI/MiniMax-M3-MXFP4`, or a case glob `*DeepSeek-V4*`) to a golden
/// key (`minimax-m3`): the organisation is dropped, then trailing words (precision, variant) until a key
/// matches. A name that prefixes a base key and its dated variants (`deepseek-v4-pro`,
/// `deepseek-v4-pro-0813`) resolves to the base key: variants are named in full.
pub fn model_key(curves: &CurveSet, model: &str) -> Option<String> {
    let keys = curves.known_models();
    let model = model.trim_matches('*');
    let name = model.rsplit('/').next().unwrap_or(model).trim_matches('*');
    let mut words: Vec<&str> = name.split(['-', '_']).collect();
    while !words.is_empty() {
        let wanted = fold(&words.join("-"));
        if let Some(exact) = keys.iter().find(|k| fold(k) == wanted) {
            return Some(exact.clone());
        }
        let mut longer: Vec<&String> = keys.iter().filter(|k| fold(k).starts_with(&wanted)).collect();
        longer.sort_by_key(|k| k.len());
        if let Some(base) = longer.first()
            && longer.iter().all(|k| fold(k).starts_with(&fold(base)))
        {
            return Some((*base).clone());
        }
        if longer.len() > 1 {
            return None;
        }
        words.pop();
    }
    None
}

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
    /// The curve is alsim's embedded one: the repository's curves hold none for the drafter.
    pub(in crate::pins) embedded: bool,
}

/// alsim's embedded curves, read once.
fn embedded() -> &'static CurveSet {
    static EMBEDDED: std::sync::OnceLock<CurveSet> = std::sync::OnceLock::new();
    EMBEDDED.get_or_init(CurveSet::embedded)
}

/// The golden value under the other draft sampling, when none is written.
pub(in crate::pins) struct Alternative {
    pub(in crate::pins) desc: String,
    pub(in crate::pins) al: f64,
    pub(in crate::pins) field: String,
}

pub(in crate::pins) fn lookup<'a>(curves: &'a CurveSet, query: &CurveQuery, k: usize) -> crate::Result<Lookup<'a>> {
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
    Ok(Lookup { resolved, expected, embedded: embedded_used })
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
