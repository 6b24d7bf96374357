//! How text read from input is shown on one line: a control character (C0, DEL, C1) or a Unicode line or
//! paragraph separator in a file name or metric label becomes an escape (`\n`, `\r`, `\t`, else `\u{…}`),
//! so no input can start a line of output (a CI log obeys a line such as `::error …`). The report's
//! formats and the pin check's file names both write through here.

use std::fmt::Write as _;

/// Whether `c` would break the line it is printed on.
pub(crate) fn breaks_line(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// Appends `c` to `out`, escaped when it [`breaks_line`].
pub(crate) fn push_char(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if breaks_line(c) => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
        c => out.push(c),
    }
}
