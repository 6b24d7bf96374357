//! Fuzz the one YAML reader every YAML input goes through — golden curves and allow-lists
//! (`alsim::yaml::parse`), recipes and master configs (`parse_like_pyyaml`): any text must give a tree or
//! an error, never a panic, and deep nesting or aliases of aliases must be refused in linear time
//! (libFuzzer's -timeout catches a slow input). The seeds include those of the former subset reader.
//! What it runs is `tests/fuzz_bodies.rs`, which the stable replay (`tests/fuzz.rs`) runs too.
#![no_main]

use libfuzzer_sys::fuzz_target;

// Each target uses one of the shared bodies.
#[allow(dead_code)]
#[path = "../../tests/fuzz_bodies.rs"]
mod fuzz_bodies;

fuzz_target!(|data: &[u8]| fuzz_bodies::yaml(data));
