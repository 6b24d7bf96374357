//! Hardware, target-model and drafter profiles: data files in `profiles/` (embedded in the binary, like the
//! golden curves), each row stating its source and how firmly it is confirmed. A user's file with the same
//! columns (`--profile`, `--model-profile`, `--drafter-profile`, or the hardware file `alsim calibrate`
//! writes) replaces the embedded row of the same key or adds a new one.

mod drafter;
mod hardware;
mod model;
mod precision;

use std::path::Path;

pub use drafter::DrafterProfile;
pub use hardware::{CALIBRATED_SOURCE, DEFAULT_EFFICIENCIES, HardwareProfile};
pub use model::{DEFAULT_EXPERT_NOVELTY, MAX_ROUTING_LOCALITY, ModelProfile};
pub use precision::Precision;

use super::csv::{CsvRow, CsvTable};
use crate::error::{Error, LookupKind, Result};
use crate::names::fold;

const HARDWARE_CSV: &str = include_str!("../../../profiles/hardware.csv");
const MODELS_CSV: &str = include_str!("../../../profiles/models.csv");
const DRAFTERS_CSV: &str = include_str!("../../../profiles/drafters.csv");

/// Which kind of profile a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileKind {
    /// `profiles/hardware.csv` columns.
    Hardware,
    /// `profiles/models.csv` columns.
    Model,
    /// `profiles/drafters.csv` columns.
    Drafter,
}

impl ProfileKind {
    fn name(self) -> &'static str {
        match self {
            ProfileKind::Hardware => "hardware",
            ProfileKind::Model => "model",
            ProfileKind::Drafter => "drafter",
        }
    }
}

/// Every profile alsim knows: the embedded files, optionally overridden or extended by the user's files.
#[derive(Debug, Clone)]
pub struct Profiles {
    /// Hardware profiles, in file order.
    pub hardware: Vec<HardwareProfile>,
    /// Target-model profiles.
    pub models: Vec<ModelProfile>,
    /// Drafter profiles.
    pub drafters: Vec<DrafterProfile>,
}

impl Profiles {
    /// The profiles compiled into alsim (`profiles/*.csv`).
    pub fn embedded() -> Profiles {
        Profiles {
            hardware: parse_rows(HARDWARE_CSV, "<embedded>/profiles/hardware.csv", HardwareProfile::from_row)
                .expect("embedded hardware profiles are validated by the test suite"),
            models: parse_rows(MODELS_CSV, "<embedded>/profiles/models.csv", ModelProfile::from_row)
                .expect("embedded model profiles are validated by the test suite"),
            drafters: parse_rows(DRAFTERS_CSV, "<embedded>/profiles/drafters.csv", DrafterProfile::from_row)
                .expect("embedded drafter profiles are validated by the test suite"),
        }
    }

    /// Replaces (or adds) the rows of a profile file of `kind` — read through the bounded reader — and
    /// returns the keys read.
    ///
    /// # Errors
    /// [`Error::Io`]/[`Error::Unreadable`] when unreadable; [`Error::Parse`] naming line and column for bad
    /// rows, or when the file holds no rows; a drafter row whose target model is unknown.
    pub fn load_file(&mut self, kind: ProfileKind, path: &Path) -> Result<Vec<String>> {
        let text = crate::input::read_text(path, crate::input::SMALL_FILE_LIMIT)?;
        let origin = path.display().to_string();
        let keys = match kind {
            ProfileKind::Hardware => {
                merge(&mut self.hardware, parse_rows(&text, &origin, HardwareProfile::from_row)?, |h| &h.key)
            }
            ProfileKind::Model => {
                merge(&mut self.models, parse_rows(&text, &origin, ModelProfile::from_row)?, |m| &m.key)
            }
            ProfileKind::Drafter => {
                let rows = parse_rows(&text, &origin, DrafterProfile::from_row)?;
                for d in &rows {
                    self.model(&d.target).map_err(|e| {
                        Error::parse(&origin, None, format!("drafter {} targets '{}': {e}", d.key, d.target))
                    })?;
                }
                merge(&mut self.drafters, rows, |d| &d.key)
            }
        };
        if keys.is_empty() {
            return Err(Error::parse(origin, None, format!("the file holds no {} rows", kind.name())));
        }
        Ok(keys)
    }

    /// The hardware profile named `name` (key or alias, any case or punctuation).
    ///
    /// # Errors
    /// [`Error::Lookup`] listing the known hardware.
    pub fn hardware(&self, name: &str) -> Result<&HardwareProfile> {
        find(self.hardware.iter(), name, |h| (&h.key, &h.aliases)).ok_or_else(|| {
            Error::lookup(
                LookupKind::Profile,
                format!(
                    "unknown hardware '{name}'; known: {}",
                    self.hardware.iter().map(|h| h.key.as_str()).collect::<Vec<_>>().join(", ")
                ),
            )
        })
    }

    /// The model profile named `name`; a golden-curve key such as `kimi-k2.5-nvfp4` finds `kimi-k2.5`.
    ///
    /// # Errors
    /// [`Error::Lookup`] listing the known models.
    pub fn model(&self, name: &str) -> Result<&ModelProfile> {
        find(self.models.iter(), name, |m| (&m.key, &m.aliases)).ok_or_else(|| {
            Error::lookup(
                LookupKind::Profile,
                format!(
                    "no model profile for '{name}'; known: {}",
                    self.models.iter().map(|m| m.key.as_str()).collect::<Vec<_>>().join(", ")
                ),
            )
        })
    }

    /// The drafter named `name` for `model`, or — without a name — the model's only drafter of `method`.
    ///
    /// # Errors
    /// [`Error::Lookup`] when none or several match, listing the model's drafters.
    pub fn drafter(&self, model: &ModelProfile, name: Option<&str>, method: Option<&str>) -> Result<&DrafterProfile> {
        let own: Vec<&DrafterProfile> = self.drafters.iter().filter(|d| d.target == model.key).collect();
        let listing = || own.iter().map(|d| format!("{} ({})", d.key, d.method)).collect::<Vec<_>>().join(", ");
        if let Some(name) = name {
            return find(own.iter().copied(), name, |d| (&d.key, &d.aliases)).ok_or_else(|| {
                Error::lookup(
                    LookupKind::Profile,
                    format!("no drafter profile '{name}' for {}; known: {}", model.key, listing()),
                )
            });
        }
        let matching: Vec<&DrafterProfile> =
            own.iter().copied().filter(|d| method.is_none_or(|m| fold(m) == fold(&d.method))).collect();
        match matching.as_slice() {
            [one] => Ok(one),
            [] => Err(Error::lookup(
                LookupKind::Profile,
                format!("no drafter profile for {}; known: {}", model.key, listing()),
            )),
            _ => Err(Error::lookup(
                LookupKind::Profile,
                format!("{} has several drafters ({}); choose one by its name or method", model.key, listing()),
            )),
        }
    }
}

/// Replaces rows of the same key, appends the rest; returns the keys of `rows`.
fn merge<T>(into: &mut Vec<T>, rows: Vec<T>, key: fn(&T) -> &String) -> Vec<String> {
    let keys = rows.iter().map(|r| key(r).clone()).collect();
    for row in rows {
        match into.iter_mut().find(|existing| key(existing) == key(&row)) {
            Some(existing) => *existing = row,
            None => into.push(row),
        }
    }
    keys
}

fn aliases(row: &CsvRow<'_>) -> Vec<String> {
    row.opt_str("aliases")
        .map(|a| a.split(';').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect())
        .unwrap_or_default()
}

fn parse_rows<T>(text: &str, origin: &str, parse: fn(&CsvRow<'_>) -> Result<T>) -> Result<Vec<T>> {
    let table = CsvTable::parse(text, origin)?;
    table.require(&["key"])?;
    table.rows().map(|row| parse(&row)).collect()
}

/// Finds an item whose key or alias equals `name` (normalised); failing that, the single item with a name
/// that is a prefix of `name` or that `name` is a prefix of, preferring the longest name.
fn find<'a, T>(
    items: impl Iterator<Item = &'a T> + Clone,
    name: &str,
    names: impl Fn(&T) -> (&String, &Vec<String>),
) -> Option<&'a T> {
    let wanted = fold(name);
    if wanted.is_empty() {
        return None;
    }
    let all_names = |item: &T| {
        let (key, aliases) = names(item);
        std::iter::once(fold(key)).chain(aliases.iter().map(|a| fold(a))).collect::<Vec<_>>()
    };
    if let Some(exact) = items.clone().find(|item| all_names(item).contains(&wanted)) {
        return Some(exact);
    }
    let mut best: Option<(&T, usize)> = None;
    let mut tie = false;
    for item in items {
        let score = all_names(item)
            .iter()
            .filter(|n| wanted.starts_with(n.as_str()) || n.starts_with(&wanted))
            .map(|n| n.len().min(wanted.len()))
            .max();
        if let Some(score) = score {
            match best {
                Some((_, s)) if s == score => tie = true,
                Some((_, s)) if s > score => {}
                _ => {
                    best = Some((item, score));
                    tie = false;
                }
            }
        }
    }
    if tie { None } else { best.map(|(item, _)| item) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_profiles_parse_and_resolve() {
        let p = Profiles::embedded();
        assert_eq!(p.hardware.len(), 7);
        for h in &p.hardware {
            h.validate().unwrap();
            // The file's efficiency columns are the documented defaults, the same for every GPU.
            assert_eq!(h.efficiency, DEFAULT_EFFICIENCIES, "{}", h.key);
        }
        assert_eq!(p.hardware("MI355X").unwrap().key, "mi355x");
        let m3 = p.model("minimax-m3").unwrap();
        // 428B total, ~23B active (minimax_m3_architecture.csv).
        assert!((m3.total_params() / 1e9 - 427.0).abs() < 3.0, "{}", m3.total_params());
        assert!((m3.active_params() / 1e9 - 23.3).abs() < 0.5, "{}", m3.active_params());
        assert_eq!(p.model("kimi-k2.5-nvfp4").unwrap().key, "kimi-k2.5");
        assert_eq!(p.model("glm-5.2-fp8").unwrap().key, "glm-5.2");
        assert_eq!(p.model("qwen3.5-397b-a17b-nvfp4").unwrap().key, "qwen3.5-397b-a17b");
        assert_eq!(p.model("deepseek-v4-pro-0813").unwrap().key, "deepseek-v4-pro");
        assert_eq!(p.model("deepseek-r1").unwrap().key, "dsr1");
        assert_eq!(p.model("DSR1").unwrap().key, "dsr1");
        let d = p.drafter(m3, Some("Inferact/MiniMax-M3-EAGLE3-GQA"), None).unwrap();
        assert_eq!(d.key, "inferact-minimax-m3-eagle3-gqa");
        let d = p.drafter(m3, Some("Inferact/MiniMax-M3-EAGLE3"), None).unwrap();
        assert_eq!(d.key, "inferact-minimax-m3-eagle3");
        let glm = p.model("glm-5.2").unwrap();
        assert_eq!(p.drafter(glm, Some("glm-5.2 (built-in MTP head)"), None).unwrap().method, "mtp");
        assert_eq!(p.drafter(glm, None, None).unwrap().key, "glm-5.2-mtp");
        assert_eq!(p.drafter(p.model("dsr1").unwrap(), None, None).unwrap().method, "mtp");
        for model in ["gpt-oss-120b", "llama-3.1-8b", "qwen3-8b"] {
            let m = p.model(model).unwrap();
            assert_eq!(p.drafter(m, None, Some("eagle3")).unwrap().target, m.key);
        }
        // Published totals (and active counts, LM head and embedding included) the shapes must reproduce (±10%).
        for (key, total_b, active_b) in [
            ("deepseek-v4-pro", 1600.0, 49.0),
            ("glm-5.2", 744.0, 40.0),
            ("kimi-k2.5", 1040.0, 32.0),
            ("kimi-k3", 2800.0, 104.0),
            ("qwen3.5-397b-a17b", 397.0, 17.0),
            ("dsr1", 671.0, 37.6),
            // OpenAI's 5.13B active counts the unembedding but not the input embedding (0.58B).
            ("gpt-oss-120b", 116.8, 5.71),
            ("llama-3.1-8b", 8.03, 8.03),
            ("qwen3-8b", 8.19, 8.19),
        ] {
            let m = p.model(key).unwrap();
            let total = m.total_params() / 1e9;
            let active = (m.active_params() + 2.0 * m.lm_head_params()) / 1e9;
            assert!((total / total_b - 1.0).abs() < 0.1, "{key} total {total}");
            assert!((active / active_b - 1.0).abs() < 0.1, "{key} active {active}");
        }
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let p = Profiles::embedded();
        let err = p.hardware("tpu-v7").unwrap_err().to_string();
        assert!(err.contains("tpu-v7") && err.contains("mi355x"), "{err}");
        let err = p.model("llama-9").unwrap_err().to_string();
        assert!(err.contains("minimax-m3"), "{err}");
        let m3 = p.model("minimax-m3").unwrap();
        let err = p.drafter(m3, None, None).unwrap_err().to_string();
        assert!(err.contains("several drafters"), "{err}");
        assert!("fp6".parse::<Precision>().is_err());
    }

    #[test]
    fn user_files_replace_or_add_rows_and_round_trip() {
        let mut p = Profiles::embedded();
        let mut h = p.hardware("h100").unwrap().clone();
        h.efficiency.bw_eff = 0.77;
        h.source = "calibrated, \"quoted\"".into();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h100.csv");
        std::fs::write(&path, format!("{}\n{}\n", HardwareProfile::csv_header(), h.csv_row())).unwrap();
        assert_eq!(p.load_file(ProfileKind::Hardware, &path).unwrap(), vec!["h100".to_string()]);
        assert_eq!(p.hardware("h100").unwrap(), &h);
        // An older hardware file without the newer efficiency columns takes their defaults.
        let old = "key,name,hbm_gb,hbm_tb_s,bf16_tflops,fp8_tflops,fp4_tflops,link_gb_s,allreduce_us,bw_eff,flops_eff\n\
                   x1,GPU X,80,3,900,1800,0,400,10,0.7,0.5\n";
        std::fs::write(&path, old).unwrap();
        p.load_file(ProfileKind::Hardware, &path).unwrap();
        let x1 = p.hardware("x1").unwrap();
        assert_eq!(x1.efficiency.bw_eff, 0.7);
        assert_eq!(x1.efficiency.attn_eff, DEFAULT_EFFICIENCIES.attn_eff);
        std::fs::write(&path, old.replace("0.7,0.5", "1.7,0.5")).unwrap();
        let err = p.load_file(ProfileKind::Hardware, &path).unwrap_err().to_string();
        assert!(err.contains("h100.csv:2") && err.contains("'bw_eff'"), "{err}");
        let drafter = "key,target,method,block,layers,hidden,params_b,moe_layers,q_heads,kv_heads,head_dim,kv_elems_per_token,vocab\n\
                       mine,llama-9,eagle3,false,1,4096,0.3,0,32,8,128,2048,32000\n";
        std::fs::write(&path, drafter).unwrap();
        let err = p.load_file(ProfileKind::Drafter, &path).unwrap_err().to_string();
        assert!(err.contains("targets 'llama-9'"), "{err}");
        std::fs::write(&path, "# nothing\nkey,name\n").unwrap();
        assert!(p.load_file(ProfileKind::Model, &path).unwrap_err().to_string().contains("no model rows"));
    }
}
