//! Golden keys: the key of the golden curves a served model name matches (one rule for `pins check` and
//! `sweep`), and which keys are variants of another.

use crate::curve::CurveSet;
use crate::names::fold;
use crate::pins::Pin;

/// Matches a served model name (`MiniMaxAI/MiniMax-M3-MXFP4`, or a case glob `*DeepSeek-V4*`) to a golden
/// key (`minimax-m3`): the organisation is dropped, then trailing words (precision, variant) until a key
/// matches, or a key begins with the words left, word by word. A name that begins a base key and its dated
/// variants (`deepseek-v4-pro`, `deepseek-v4-pro-0813`) resolves to the base key: variants are named in
/// full. The first word alone never matches (`DeepSeek` of `DeepSeek-R1`, `GLM` of `GLM-5.1`: a maker or a
/// family, never one model), nor does a word match a longer one (`GLM-5` is not `glm-5.2`). Both `pins
/// check` and `sweep` resolve a model by this one rule.
pub fn model_key(curves: &CurveSet, model: &str) -> Option<String> {
    let keys = curves.known_models();
    let model = model.trim_matches('*');
    let name = model.rsplit('/').next().unwrap_or(model).trim_matches('*');
    let begins = |key: &str, start: &[String]| words_of(key).starts_with(start);
    let mut words = words_of(name);
    let floor = words.len().clamp(1, 2);
    while words.len() >= floor {
        if let Some(exact) = keys.iter().find(|k| fold(k) == words.concat()) {
            return Some(exact.clone());
        }
        let mut longer: Vec<&String> = keys.iter().filter(|k| begins(k, &words)).collect();
        longer.sort_by_key(|k| k.len());
        if let Some(base) = longer.first()
            && longer.iter().all(|k| begins(k, &words_of(base)))
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

/// The golden key of the pin's served model, where one matches.
pub(in crate::pins) fn golden_key(pin: &Pin, curves: &CurveSet) -> Option<String> {
    pin.model.value.as_deref().and_then(|m| model_key(curves, m))
}

/// A name's words, each folded: the units model names are matched in.
fn words_of(name: &str) -> Vec<String> {
    name.split(['-', '_']).map(fold).collect()
}

/// Whether curve key `key` names a variant of `base` (`deepseek-v4-pro-0813` of `deepseek-v4-pro`): `base`'s
/// words and more, word by word, as [`model_key`] matches (`glm-5.2` is no variant of `glm-5`).
pub(in crate::pins) fn is_variant(key: &str, base: &str) -> bool {
    let (key, base) = (words_of(key), words_of(base));
    key.len() > base.len() && key.starts_with(&base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variant_has_its_base_keys_words_and_more() {
        assert!(is_variant("deepseek-v4-pro-0813", "deepseek-v4-pro"));
        assert!(is_variant("Kimi-K2.5-NVFP4", "kimi-k2.5"));
        for (key, base) in [("glm-5.2-fp8", "glm-5"), ("deepseek-v4-pro", "deepseek-v4-pro"), ("kimi-k2.5", "kimi-k2")]
        {
            assert!(!is_variant(key, base), "{key} of {base}");
        }
    }

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
        // Another model of a family the golden curves hold is no model of it: no key, never the family's.
        assert_eq!(model_key(&set, "deepseek-ai/DeepSeek-R1-0528"), None);
        assert_eq!(model_key(&set, "deepseek-r1-fp4"), None);
        assert_eq!(model_key(&set, "zai-org/GLM-5.1-FP8"), None);
        assert_eq!(model_key(&set, "zai-org/GLM-5-FP8"), None);
        assert_eq!(model_key(&set, "nvidia/Kimi-K2.6-NVFP4"), None);
        assert_eq!(model_key(&set, "Kimi-K2.5").as_deref(), Some("kimi-k2.5-nvfp4"));
    }
}
