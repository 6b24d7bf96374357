//! Number formats of weights, KV caches and attention math: bytes per element and which peak applies.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::curve::registry::normalize;
use crate::error::{Error, Result};

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

    /// The flag spelling.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Bf16 => "bf16",
            Precision::Fp8 => "fp8",
            Precision::Fp4 => "fp4",
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Precision {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match normalize(s).as_str() {
            "bf16" | "fp16" | "bfloat16" | "auto" => Ok(Precision::Bf16),
            "fp8" | "mxfp8" | "e4m3" | "fp8e4m3" => Ok(Precision::Fp8),
            "fp4" | "mxfp4" | "nvfp4" | "int4" => Ok(Precision::Fp4),
            _ => Err(Error::invalid("precision", format!("unknown precision '{s}'; expected bf16, fp8 or fp4"))),
        }
    }
}
