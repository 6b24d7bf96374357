//! Fuzz the fast YAML subset reader against the YAML crate: for any text, the reader with its fast path
//! (`alsim::yaml::parse_like_pyyaml`) must answer as the crate alone (`parse_like_pyyaml_full`) does —
//! the same tree and duplicate keys, or the same error. The subset reader declines anything it is unsure
//! of; a disagreement is a crash.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if alsim::yaml::read_subset(text).is_none() {
        return;
    }
    // Compared by debug form, so that NaN read by both counts as the same.
    let answer = |r: alsim::Result<_>| r.map(|read| format!("{read:?}")).map_err(|e| e.to_string());
    let fast = answer(alsim::yaml::parse_like_pyyaml(text, "fuzz.yaml"));
    let full = answer(alsim::yaml::parse_like_pyyaml_full(text, "fuzz.yaml"));
    assert_eq!(fast, full, "{text:?}");
});
