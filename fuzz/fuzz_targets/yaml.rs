//! Fuzz the one YAML reader every YAML input goes through — golden curves and allow-lists
//! (`alsim::yaml::parse`), recipes and master configs (`parse_like_pyyaml`): any text must give a tree or
//! an error, never a panic, and deep nesting or aliases of aliases must be refused in linear time
//! (libFuzzer's -timeout catches a slow input). The seeds include those of the former subset reader.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(node) = alsim::yaml::parse(text, "fuzz.yaml") {
        let _ = node.get("key").map(|n| (n.kind(), n.as_f64(), n.as_scalar_text(), n.line));
    }
    if let Ok((node, duplicates)) = alsim::yaml::parse_like_pyyaml(text, "fuzz.yaml") {
        let _ = (node.entry("key").map(|(k, _)| k.line), duplicates.len());
    }
});
