//! The engine-native setting for a golden value (docs/engines.md#summary), so a recipe can call
//! `alsim pin …` instead of copying a number — the cure for most classes of docs/pins.md.
//!
//! | engine | setting for AL 2.83, k 3 |
//! |---|---|
//! | ATOM | `--spec-decode-acceptance-length 2.83` (or `--spec-decode-acceptance-rate 0.61`) |
//! | vLLM | `"num_speculative_tokens": 3, "rejection_sample_method": "synthetic", "synthetic_acceptance_length": 2.83` |
//! | SGLang | `SGLANG_SIMULATE_ACC_LEN=2.83`, `SGLANG_SIMULATE_ACC_METHOD=match-expected`, `SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token` |
//! | TensorRT-LLM | `TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.83` (AL − 1) |

use serde::Serialize;

use super::plain_number;
use crate::engine::Engine;
use crate::error::Result;
use crate::units::{Spelling, check_al};

/// One engine's setting for one golden value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NativeSetting {
    /// The engine.
    pub engine: Engine,
    /// Draft length.
    pub k: usize,
    /// The golden acceptance length.
    pub al: f64,
    /// Where the value came from (golden file and key).
    pub source: String,
    /// The setting, one line per flag or variable, ready to paste (`export $(alsim pin … --engine sglang)`).
    pub lines: Vec<String>,
}

/// The setting that pins `al` at draft length `k` on `engine`; `atom_rate` writes ATOM's rate knob instead
/// of its length knob.
///
/// ```
/// use alsim::engine::Engine;
/// use alsim::pins::native_setting;
/// let atom = native_setting(Engine::Atom, 2.83, 3, false, "minimaxm3_eagle3.yaml")?;
/// assert_eq!(atom.lines, ["--spec-decode-acceptance-length 2.83"]);
/// let trt = native_setting(Engine::Trtllm, 2.83, 3, false, "minimaxm3_eagle3.yaml")?;
/// assert_eq!(trt.lines, ["TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.83"]);
/// # Ok::<(), alsim::Error>(())
/// ```
///
/// # Errors
/// [`crate::Error::Invalid`] when `al` is outside [1, k+1] or k is out of range.
pub fn native_setting(
    engine: Engine,
    al: f64,
    k: usize,
    atom_rate: bool,
    source: impl Into<String>,
) -> Result<NativeSetting> {
    check_al(al, k, "golden AL")?;
    let length = plain_number(al, 4);
    let lines = match engine {
        Engine::Atom if atom_rate => {
            vec![format!(
                "--spec-decode-acceptance-rate {}",
                plain_number(Spelling::DraftRate.from_al(al, k, "rate")?, 6)
            )]
        }
        Engine::Atom => vec![format!("--spec-decode-acceptance-length {length}")],
        Engine::Vllm => vec![format!(
            "\"num_speculative_tokens\": {k}, \"rejection_sample_method\": \"synthetic\", \"synthetic_acceptance_length\": {length}"
        )],
        Engine::Sglang => vec![
            format!("SGLANG_SIMULATE_ACC_LEN={length}"),
            "SGLANG_SIMULATE_ACC_METHOD=match-expected".to_string(),
            "SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token".to_string(),
        ],
        Engine::Trtllm => vec![format!(
            "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS={}",
            plain_number(Spelling::AcceptedDrafts.from_al(al, k, "accepted drafts")?, 4)
        )],
        Engine::Llamacpp => crate::accept::pin::llamacpp_length_setting(al, k)?,
    };
    Ok(NativeSetting { engine, k, al, source: source.into(), lines })
}
