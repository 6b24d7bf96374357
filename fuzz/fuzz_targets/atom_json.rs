//! Fuzz the atom json reader: any bytes must give evidence or an error, never a panic; evidence that
//! reads must also evaluate without panicking.
//! What it runs is `tests/fuzz_bodies.rs`, which the stable replay (`tests/fuzz.rs`) runs too.
#![no_main]

use libfuzzer_sys::fuzz_target;

// Each target uses one of the shared bodies.
#[allow(dead_code)]
#[path = "../../tests/fuzz_bodies.rs"]
mod fuzz_bodies;

fuzz_target!(|data: &[u8]| fuzz_bodies::atom_json(data));
