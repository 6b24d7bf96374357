//! The thinking mode a deployment serves when no file says, and where that default comes from.
//!
//! A recipe or script states its mode with a worker setting (`dyn-default-thinking-mode`,
//! `DYN_DEFAULT_THINKING_MODE`, `SGLANG_DEFAULT_THINKING`, `--default-chat-template-kwargs`, a chat
//! template named `…_thinking.jinja`) or on the request side (`AIPERF_EXTRA_INPUTS: thinking:true`).
//! `SGLANG_ENABLE_THINKING` is not one: SGLang ignores it (docs/pins.md#inert). When nothing is stated, the engine's
//! default for the model decides; this table records each default with its source. A default decides like
//! a stated mode (`How::Default`): a value written for the other mode is a `wrong-thinking-mode` error.

use serde::Serialize;

use crate::curve::ThinkingMode;
use crate::engine::Engine;
use crate::names::fold;

/// One documented default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct ThinkingDefault {
    /// Golden-key prefix of the model family, normalized (`deepseekv4`, `qwen3`).
    pub family: &'static str,
    /// The engine, when the default is the engine's rather than the chat template's.
    pub engine: Option<Engine>,
    /// The mode served.
    pub mode: ThinkingMode,
    /// Where the default is documented.
    pub source: &'static str,
}

/// Defaults, most specific first: an engine-specific row wins over the family's chat-template row.
pub(crate) const DEFAULTS: &[ThinkingDefault] = &[
    ThinkingDefault {
        family: "deepseekv4",
        engine: Some(Engine::Vllm),
        mode: ThinkingMode::Off,
        source: "vLLM's DeepSeek-V4 renderer serves non-thinking unless the request asks for thinking (vLLM's source)",
    },
    ThinkingDefault {
        family: "deepseekv",
        engine: None,
        mode: ThinkingMode::Off,
        source: "DeepSeek-V3.1 and later chat templates render non-thinking unless `thinking` is true (model card chat template)",
    },
    ThinkingDefault {
        family: "qwen3",
        engine: None,
        mode: ThinkingMode::On,
        source: "Qwen3 and Qwen3.5 chat templates default `enable_thinking` to true (model card chat template)",
    },
    ThinkingDefault {
        family: "glm",
        engine: None,
        mode: ThinkingMode::On,
        source: "GLM-4.5 and later chat templates default `enable_thinking` to true (model card chat template)",
    },
    ThinkingDefault {
        family: "kimik2",
        engine: None,
        mode: ThinkingMode::On,
        source: "Kimi-K2.5 serves thinking unless the request sets `thinking` to false (model card)",
    },
];

/// The default mode for a golden model key on an engine, with its row.
pub(crate) fn default_for(model_key: &str, engine: Option<Engine>) -> Option<&'static ThinkingDefault> {
    let key = fold(model_key);
    DEFAULTS.iter().filter(|d| key.starts_with(d.family)).find(|d| d.engine.is_none() || d.engine == engine)
}

/// Settings that look like thinking switches but that the engine ignores, with what to write instead.
pub(crate) const IGNORED: &[(&str, &str)] = &[(
    "SGLANG_ENABLE_THINKING",
    "SGLang ignores SGLANG_ENABLE_THINKING; the server default is SGLANG_DEFAULT_THINKING",
)];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_rows_win_over_family_rows() {
        let vllm = default_for("deepseek-v4-pro", Some(Engine::Vllm)).unwrap();
        assert_eq!(vllm.engine, Some(Engine::Vllm));
        let atom = default_for("deepseek-v4-pro", Some(Engine::Atom)).unwrap();
        assert_eq!((atom.family, atom.mode), ("deepseekv", ThinkingMode::Off));
        assert_eq!(default_for("glm-5.2-fp8", None).unwrap().mode, ThinkingMode::On);
        assert!(default_for("minimax-m3", Some(Engine::Trtllm)).is_none());
    }
}
