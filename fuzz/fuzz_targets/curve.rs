//! Fuzz the golden-curve reader: any text must give curves or an error, never a panic; curves that read
//! must also check, fit and give their chains without panicking.
#![no_main]

use alsim::curve::CurveFile;
use alsim::curve::check::{CheckOptions, check_files};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(file) = CurveFile::parse(text, "fuzz.yaml", "fuzz") {
        let _ = check_files(std::slice::from_ref(&file), &CheckOptions::default());
        for curve in &file.curves {
            for k in 1..=curve.max_k() {
                let _ = curve.chain(k);
            }
        }
    }
});
