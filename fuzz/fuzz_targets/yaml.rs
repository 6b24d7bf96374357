//! Fuzz the YAML layer every YAML input goes through — golden curves, recipes, master configs and
//! allow-lists (`alsim::yaml::parse`): any text must give a tree or an error, never a panic, and deep
//! nesting must be refused in linear time (libFuzzer's -timeout catches a slow input).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(node) = alsim::yaml::parse(text, "fuzz.yaml") {
        let _ = node.get("key").map(|n| (n.kind(), n.as_f64(), n.as_scalar_text()));
    }
});
