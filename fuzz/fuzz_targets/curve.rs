//! Fuzz the golden-curve reader: any text must give curves or an error, never a panic; curves that read
//! must also check, fit and give their chains without panicking.
//! What it runs is `tests/fuzz_bodies.rs`, which the stable replay (`tests/fuzz.rs`) runs too.
#![no_main]

use libfuzzer_sys::fuzz_target;

// Each target uses one of the shared bodies.
#[allow(dead_code)]
#[path = "../../tests/fuzz_bodies.rs"]
mod fuzz_bodies;

fuzz_target!(|data: &[u8]| fuzz_bodies::curve(data));
