//! Number formats of weights, KV caches and attention math: bytes per element and which peak applies.

use serde::Serialize;

/// A number format: bytes per element and which peak throughput column applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// MXFP4/NVFP4: 4-bit values plus one 8-bit scale per 32 weights (0.53125 bytes per weight).
    Fp4,
    /// 8-bit floating point (block scales negligible).
    Fp8,
    /// 16-bit.
    Bf16,
}

impl Precision {
    /// Bytes per element.
    pub fn bytes(self) -> f64 {
        match self {
            Precision::Bf16 => 2.0,
            Precision::Fp8 => 1.0,
            Precision::Fp4 => 0.5 + 1.0 / 32.0,
        }
    }
}

crate::names::named_enum!(
    Precision,
    field = "precision",
    what = "precision",
    [
        Fp4 = "fp4" | "mxfp4" | "nvfp4" | "int4",
        Fp8 = "fp8" | "mxfp8" | "e4m3" | "fp8e4m3",
        Bf16 = "bf16" | "fp16" | "bfloat16" | "auto",
    ]
);
