//! One GPU: its peak figures (vendor datasheets) and the efficiencies and overheads that turn peaks into
//! step times (defaults fitted on measured serving runs, replaced by `alsim calibrate`).

use serde::Serialize;

use super::Precision;
use crate::error::{Error, Result};
use crate::perf::csv::CsvRow;
use crate::perf::terms::{COLUMNS, Efficiencies};

/// What a hardware row without an efficiency column gets (a file written before the column existed).
/// Derivation: `profiles/hardware.csv`'s header.
pub const DEFAULT_EFFICIENCIES: Efficiencies = Efficiencies {
    bw_eff: 0.80,
    flops_eff: 0.40,
    attn_eff: 0.25,
    t_fixed_us: 500.0,
    layer_us: 20.0,
    moe_layer_us: 60.0,
    token_us: 5.0,
    draft_fixed_us: 100.0,
    spec_fixed_us: 100.0,
    spec_token_us: 0.0,
    moe_token_us: 1.25,
    overlap: 1.0,
};

/// One GPU's peak figures and the efficiencies that turn peaks into step times.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HardwareProfile {
    /// Lookup key (`mi355x`).
    pub key: String,
    /// Other accepted names.
    pub aliases: Vec<String>,
    /// Display name.
    pub name: String,
    /// HBM capacity, GB.
    pub hbm_gb: f64,
    /// HBM bandwidth, TB/s.
    pub hbm_tb_s: f64,
    /// Dense BF16 peak, TFLOP/s.
    pub bf16_tflops: f64,
    /// Dense FP8 peak, TFLOP/s.
    pub fp8_tflops: f64,
    /// Dense FP4 peak, TFLOP/s (0 = no native FP4: FP8 rate used).
    pub fp4_tflops: f64,
    /// Per-GPU scale-up bandwidth for all-reduce, GB/s.
    pub link_gb_s: f64,
    /// Latency of one all-reduce, µs.
    pub allreduce_us: f64,
    /// Efficiencies and overheads in force.
    pub efficiency: Efficiencies,
    /// Where the figures come from.
    pub source: String,
    /// How firmly they are confirmed.
    pub confidence: String,
}

/// How a calibrated profile's `source` begins (what `alsim calibrate --output` writes): its efficiencies were
/// fitted to measured steps, not taken from the datasheet defaults.
pub const CALIBRATED_SOURCE: &str = "calibrated by alsim from";

impl HardwareProfile {
    /// Whether the efficiencies were fitted to measurements (`alsim calibrate --output`) rather than being
    /// the datasheet defaults.
    pub fn calibrated(&self) -> bool {
        self.source.starts_with(CALIBRATED_SOURCE)
    }

    /// Whether `other` has the same datasheet math peaks (BF16, FP8, FP4): the same compute die, whose GEMMs
    /// reach the same share of them (H100 and H200 differ in memory only).
    pub fn same_math_peaks(&self, other: &HardwareProfile) -> bool {
        (self.bf16_tflops, self.fp8_tflops, self.fp4_tflops) == (other.bf16_tflops, other.fp8_tflops, other.fp4_tflops)
    }

    /// Peak FLOP/s for math in `precision` (FP4 falls back to the FP8 rate where there is no FP4 unit).
    pub fn peak_flops(&self, precision: Precision) -> f64 {
        let tflops = match precision {
            Precision::Bf16 => self.bf16_tflops,
            Precision::Fp8 => self.fp8_tflops,
            Precision::Fp4 if self.fp4_tflops > 0.0 => self.fp4_tflops,
            Precision::Fp4 => self.fp8_tflops,
        };
        tflops * 1e12
    }

    /// Peak HBM bandwidth, bytes/s.
    pub fn bandwidth(&self) -> f64 {
        self.hbm_tb_s * 1e12
    }

    /// Checks that every figure is in range, naming the field.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a non-positive peak or bandwidth, an efficiency outside (0, 1], or a negative time.
    pub fn validate(&self) -> Result<()> {
        let field = |name: &str| format!("hardware {}.{name}", self.key);
        for (name, value) in [
            ("hbm_gb", self.hbm_gb),
            ("hbm_tb_s", self.hbm_tb_s),
            ("bf16_tflops", self.bf16_tflops),
            ("fp8_tflops", self.fp8_tflops),
            ("link_gb_s", self.link_gb_s),
        ] {
            if !(value > 0.0 && value.is_finite()) {
                return Err(Error::invalid(field(name), format!("{value} must be a positive number")));
            }
        }
        for (name, value) in [("fp4_tflops", self.fp4_tflops), ("allreduce_us", self.allreduce_us)] {
            if !(value >= 0.0 && value.is_finite()) {
                return Err(Error::invalid(field(name), format!("{value} must be ≥ 0")));
            }
        }
        self.efficiency.validate(&format!("hardware {}", self.key))
    }

    pub(super) fn from_row(row: &CsvRow<'_>) -> Result<Self> {
        let mut values = DEFAULT_EFFICIENCIES.values();
        for (value, name) in values.iter_mut().zip(COLUMNS) {
            if let Some(v) = row.opt_f64(name)? {
                *value = v;
            }
        }
        let profile = HardwareProfile {
            key: row.str("key")?.to_string(),
            aliases: super::aliases(row),
            name: row.str("name")?.to_string(),
            hbm_gb: row.non_negative("hbm_gb", true)?,
            hbm_tb_s: row.non_negative("hbm_tb_s", true)?,
            bf16_tflops: row.non_negative("bf16_tflops", true)?,
            fp8_tflops: row.non_negative("fp8_tflops", true)?,
            fp4_tflops: row.non_negative("fp4_tflops", false)?,
            link_gb_s: row.non_negative("link_gb_s", true)?,
            allreduce_us: row.non_negative("allreduce_us", false)?,
            efficiency: Efficiencies::from_values(values),
            source: row.opt_str("source").unwrap_or_default().to_string(),
            confidence: row.opt_str("confidence").unwrap_or_default().to_string(),
        };
        if let Err(Error::Invalid { field, message }) = profile.validate() {
            let column = field.rsplit('.').next().unwrap_or(&field).to_string();
            return Err(row.error(&column, &message));
        }
        Ok(profile)
    }

    /// The CSV header line of hardware files.
    pub fn csv_header() -> String {
        format!(
            "key,aliases,name,hbm_gb,hbm_tb_s,bf16_tflops,fp8_tflops,fp4_tflops,link_gb_s,allreduce_us,{},source,confidence",
            COLUMNS.join(",")
        )
    }

    /// This profile as one CSV row under [`HardwareProfile::csv_header`].
    pub fn csv_row(&self) -> String {
        let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        let efficiency: Vec<String> = self.efficiency.values().iter().map(|v| format!("{v:.6}")).collect();
        format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            self.key,
            quote(&self.aliases.join(";")),
            quote(&self.name),
            self.hbm_gb,
            self.hbm_tb_s,
            self.bf16_tflops,
            self.fp8_tflops,
            self.fp4_tflops,
            self.link_gb_s,
            self.allreduce_us,
            efficiency.join(","),
            quote(&self.source),
            quote(&self.confidence)
        )
    }
}
