//! Fuzz `pins fix --write`'s edit computation (`alsim::pins::fix::locate` and `edit`): changes planned at
//! arbitrary spans of an arbitrary text, with arbitrary new values, made in that text with an arbitrary
//! range replaced, must be refused or change only the planned literals on their planned lines, and are
//! never refused in the text they were planned on. The property is `tests/fix_edits.rs`, which the test
//! suite also runs as a proptest.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/fix_edits.rs"]
mod fix_edits;

fuzz_target!(|input: (String, Vec<(u16, u8, String)>, u16, u8, String)| {
    let (original, raw, at, len, by) = input;
    let spans: Vec<(usize, usize, String)> =
        raw.into_iter().map(|(start, len, to)| (start as usize, start as usize + len as usize, to)).collect();
    let (at, end) = (at as usize, at as usize + len as usize);
    let now = match (original.get(..at), original.get(end..)) {
        (Some(head), Some(tail)) => format!("{head}{by}{tail}"),
        _ => original.clone(),
    };
    fix_edits::check(&original, &spans, &now);
});
