//! Fuzz the CSV readers of measured runs and profiles: the whole-text table (`CsvTable::parse`) and the
//! streamed measured-file reader (`perf::calibrate::read`, which splits lines and checks UTF-8 itself). Any
//! bytes must give rows or an error, never a panic.
//! What it runs is `tests/fuzz_bodies.rs`, which the stable replay (`tests/fuzz.rs`) runs too.
#![no_main]

use libfuzzer_sys::fuzz_target;

// Each target uses one of the shared bodies.
#[allow(dead_code)]
#[path = "../../tests/fuzz_bodies.rs"]
mod fuzz_bodies;

fuzz_target!(|data: &[u8]| fuzz_bodies::csv(data));
