//! Fuzz the CSV reader of measured runs and profiles (`alsim::perf::csv::CsvTable::parse`): any text must
//! give a table or an error, never a panic.
#![no_main]

use alsim::perf::csv::CsvTable;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = CsvTable::parse(text, "fuzz.csv");
});
