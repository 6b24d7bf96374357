//! Fuzz the CSV readers of measured runs and profiles: the whole-text table (`CsvTable::parse`) and the
//! streamed measured-file reader (`perf::calibrate::read`, which splits lines and checks UTF-8 itself). Any
//! bytes must give rows or an error, never a panic.
#![no_main]

use alsim::perf::calibrate;
use alsim::perf::csv::CsvTable;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = calibrate::read(data, "fuzz.csv", Some(3));
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = CsvTable::parse(text, "fuzz.csv");
});
