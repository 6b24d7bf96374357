//! Fuzz the llama.cpp lines of the log reader, with and without a known k (the request lines' step count
//! depends on it): any bytes must give evidence or an error, never a panic; evidence that reads must also
//! evaluate without panicking.
#![no_main]

use alsim::evidence::{InputFormat, Pin, ReadOptions, evaluate, read};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for k in [None, Some(3)] {
        let options = ReadOptions { format: Some(InputFormat::Log), k, ..ReadOptions::default() };
        if let Ok(evidence) = read(data, "fuzz", &options) {
            let pin = Pin::new(2.83, 3, 0.05, 0.95, "fuzz").expect("a valid pin");
            let _ = evaluate(&pin, &evidence);
        }
    }
});
