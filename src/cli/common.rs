//! Flags shared by several subcommands: which golden curve to use, and the output format.

use std::path::PathBuf;

use alsim::curve::{CurveFile, CurveQuery, CurveSet, ThinkingMode};
use alsim::report::Format;
use anyhow::Context;

/// The seed's case, used when no model is named.
pub const DEFAULT_MODEL: &str = "minimax-m3";
/// The seed's drafter, used with the default model when no drafter is named.
pub const DEFAULT_DRAFTER: &str = "Inferact/MiniMax-M3-EAGLE3";

/// Which golden curve: the embedded ones unless `--curve` or `--golden` names files.
#[derive(Debug, Clone, clap::Args)]
pub struct CurveArgs {
    /// Model key as in the golden files (default: minimax-m3 with the Inferact/MiniMax-M3-EAGLE3 drafter).
    #[arg(long)]
    pub model: Option<String>,
    /// Draft model, e.g. Inferact/MiniMax-M3-EAGLE3-GQA (needed where drafters share a model key).
    #[arg(long)]
    pub drafter: Option<String>,
    /// Speculative method: eagle3, mtp, dspark.
    #[arg(long)]
    pub method: Option<String>,
    /// Draft sampling: greedy or probabilistic.
    #[arg(long)]
    pub draft_sampling: Option<String>,
    /// Thinking mode of the served model: thinking_on, thinking_off.
    #[arg(long, default_value = "thinking_on", value_parser = parse_mode)]
    pub mode: ThinkingMode,
    /// Golden curve file(s) to use instead of the embedded curves.
    #[arg(long = "curve", value_name = "FILE")]
    pub curve_files: Vec<PathBuf>,
    /// Directory of golden curve files (e.g. a benchmark repo's golden_al_distribution/).
    #[arg(long, value_name = "DIR")]
    pub golden: Option<PathBuf>,
}

impl CurveArgs {
    /// The curve files to search: `--curve` files, a `--golden` directory, else the embedded set.
    pub fn curve_set(&self) -> anyhow::Result<CurveSet> {
        let mut files = Vec::new();
        for path in &self.curve_files {
            files.push(CurveFile::read(path).with_context(|| format!("reading curve file {}", path.display()))?);
        }
        if let Some(dir) = &self.golden {
            let set = CurveSet::read_dir(dir).with_context(|| format!("reading golden directory {}", dir.display()))?;
            files.extend(set.files().iter().cloned());
        }
        Ok(if files.is_empty() { CurveSet::embedded() } else { CurveSet::new(files) })
    }

    /// The lookup these flags describe.
    pub fn query(&self) -> CurveQuery {
        let model = self.model.clone().unwrap_or_else(|| DEFAULT_MODEL.to_string());
        let drafter = self.drafter.clone().or_else(|| {
            (self.model.is_none() && self.method.is_none() && self.curve_files.is_empty() && self.golden.is_none())
                .then(|| DEFAULT_DRAFTER.to_string())
        });
        CurveQuery {
            model,
            drafter,
            method: self.method.clone(),
            draft_sampling: self.draft_sampling.clone(),
            mode: Some(self.mode),
        }
    }
}

/// `--format`.
#[derive(Debug, Clone, clap::Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Parses a thinking mode flag value.
pub fn parse_mode(text: &str) -> Result<ThinkingMode, String> {
    text.parse().map_err(|e: alsim::Error| e.to_string())
}

/// A comma-separated list of numbers on the command line (`0.78,0.60,0.45`).
#[derive(Debug, Clone, PartialEq)]
pub struct NumberList(pub Vec<f64>);

impl std::str::FromStr for NumberList {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        text.split(',')
            .map(|part| part.trim().parse::<f64>().map_err(|_| format!("'{}' is not a number", part.trim())))
            .collect::<Result<_, _>>()
            .map(NumberList)
    }
}
