//! What each fuzz target runs on its input, shared by the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`
//! include this file by path) and the stable replay of their corpora and generated inputs (`fuzz.rs`): any
//! bytes must give a result or an error, never a panic, and what reads must also be used without one.

use alsim::curve::CurveFile;
use alsim::curve::check::{NoiseModel, check_files};
use alsim::evidence::{InputFormat, PinUnderTest, ReadOptions, evaluate, read};
use alsim::perf::calibrate;
use alsim::perf::csv::CsvTable;

/// Reads `data` as evidence of `format` at each of `ks`; evidence that reads is evaluated against the seed's
/// pin.
fn evidence(data: &[u8], format: InputFormat, ks: &[Option<usize>]) {
    for &k in ks {
        let options = ReadOptions { format: Some(format), k, ..ReadOptions::default() };
        if let Ok(evidence) = read(data, "fuzz", &options) {
            let pin = PinUnderTest::new(2.83, 3, 0.05, 0.95, "fuzz").expect("a valid pin");
            let _ = evaluate(&pin, &evidence);
        }
    }
}

/// Prometheus text exposition.
pub fn prometheus(data: &[u8]) {
    evidence(data, InputFormat::Prometheus, &[Some(3)]);
}

/// Server logs (vLLM, SGLang, ATOM).
pub fn log(data: &[u8]) {
    evidence(data, InputFormat::Log, &[Some(3)]);
}

/// llama.cpp's log lines, with and without a known k (its request lines' step count depends on it).
pub fn llamacpp_log(data: &[u8]) {
    evidence(data, InputFormat::Log, &[None, Some(3)]);
}

/// ATOM's debug JSON.
pub fn atom_json(data: &[u8]) {
    evidence(data, InputFormat::AtomJson, &[Some(3)]);
}

/// TensorRT-LLM's iteration-stats JSON.
pub fn trtllm_json(data: &[u8]) {
    evidence(data, InputFormat::TrtllmJson, &[Some(3)]);
}

/// AIPerf's server-metrics export.
pub fn aiperf_json(data: &[u8]) {
    evidence(data, InputFormat::AiperfJson, &[Some(3)]);
}

/// Golden curves: curves that read are also checked, and give their chains.
pub fn curve(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(file) = CurveFile::parse(text, "fuzz.yaml", "fuzz") {
        let _ = check_files(std::slice::from_ref(&file), &NoiseModel::default());
        for curve in &file.curves {
            for k in 1..=curve.max_k() {
                let _ = curve.chain(k);
            }
        }
    }
}

/// The one YAML reader every YAML input goes through: golden curves and allow-lists (`yaml::parse`), recipes
/// and master configs (`parse_like_pyyaml`).
pub fn yaml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(node) = alsim::yaml::parse(text, "fuzz.yaml") {
        let _ = node.get("key").map(|n| (n.kind(), n.as_f64(), n.as_scalar_text(), n.line));
    }
    if let Ok((node, duplicates)) = alsim::yaml::parse_like_pyyaml(text, "fuzz.yaml") {
        let _ = (node.entry("key").map(|(k, _)| k.line), duplicates.len());
    }
}

/// The CSV readers of measured runs and profiles: the streamed measured-file reader and the whole-text table.
pub fn csv(data: &[u8]) {
    let _ = calibrate::read(data, "fuzz.csv", Some(3));
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = CsvTable::parse(text, "fuzz.csv");
}
