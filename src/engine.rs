//! The five serving engines alsim knows, by the names users type (`vllm`, `sglang`, `trtllm`, `atom`,
//! `llamacpp`).
//!
//! What each engine does with a pin lives with the concept it affects: schedules in
//! [`crate::accept::schedule`], spellings of a mean in [`crate::units`], spellings of a per-position rates
//! list in [`crate::accept::pin`].

use serde::Serialize;

use crate::units::Spelling;

/// A serving engine that can pin a synthetic acceptance length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// vLLM (`synthetic_acceptance_length` in `--speculative-config`).
    Vllm,
    /// SGLang (`SGLANG_SIMULATE_ACC_LEN` and friends).
    Sglang,
    /// TensorRT-LLM (`TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS`).
    Trtllm,
    /// ROCm ATOM (`--spec-decode-acceptance-length`).
    Atom,
    /// llama.cpp's `llama-server` / `llama-cli` (`--spec-synth-len`, `--spec-synth-rates`).
    Llamacpp,
}

impl Engine {
    /// The name as the engine's project writes it.
    pub fn display_name(self) -> &'static str {
        match self {
            Engine::Vllm => "vLLM",
            Engine::Sglang => "SGLang",
            Engine::Trtllm => "TensorRT-LLM",
            Engine::Atom => "ATOM",
            Engine::Llamacpp => "llama.cpp",
        }
    }

    /// The spelling of this engine's primary pin knob.
    pub fn pin_spelling(self) -> Spelling {
        match self {
            Engine::Trtllm => Spelling::AcceptedDrafts,
            _ => Spelling::AcceptanceLength,
        }
    }

    /// Whether the engine takes a per-position rates list as a pin (vLLM `synthetic_acceptance_rates`,
    /// llama.cpp `--spec-synth-rates`); the others take only a mean.
    pub fn takes_rates(self) -> bool {
        matches!(self, Engine::Vllm | Engine::Llamacpp)
    }

    /// The engine a config entry's `framework` serves with (`sglang-disagg`, `dynamo-vllm`, `atom`, …): the
    /// engine named in it; `dynamo-trt`/`trt` are TensorRT-LLM.
    #[cfg(feature = "pins")]
    pub(crate) fn of_framework(framework: &str) -> Option<Engine> {
        let f = framework.to_ascii_lowercase();
        let has = |name: &str| f.split(['-', '_']).any(|part| part == name);
        if has("sglang") {
            Some(Engine::Sglang)
        } else if has("vllm") {
            Some(Engine::Vllm)
        } else if has("trt") || has("trtllm") || f.contains("tensorrt") {
            Some(Engine::Trtllm)
        } else if has("atom") {
            Some(Engine::Atom)
        } else if has("llamacpp") || f.contains("llama.cpp") {
            Some(Engine::Llamacpp)
        } else {
            None
        }
    }
}

crate::names::named_enum!(
    Engine,
    field = "engine",
    what = "engine",
    [
        Vllm = "vllm",
        Sglang = "sglang",
        Trtllm = "trtllm" | "tensorrt-llm" | "trt",
        Atom = "atom",
        Llamacpp = "llamacpp" | "llama-server",
    ]
);
