//! What packagers install beside the binary: shell completions and the man page, both printed by alsim itself.

use crate::util::run;

#[test]
fn completions_for_every_shell_name_every_subcommand() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (code, script, stderr) = run(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {stderr}");
        for word in ["pins", "calibrate", "golden", "allow"] {
            assert!(script.contains(word), "{shell} completion lacks {word}");
        }
    }
    let (code, _, stderr) = run(&["completions", "tcsh"]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn the_man_page_has_a_section_per_subcommand_with_its_exit_statuses() {
    let (code, page, stderr) = run(&["man"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(page.starts_with(".ie") && page.contains(".TH alsim 1"), "{}", &page[..200.min(page.len())]);
    for section in
        ["ALSIM ACCEPT", "ALSIM CURVE CHECK", "ALSIM PINS CHECK", "ALSIM PINS FIX", "ALSIM EVAL", "ALSIM PREDICT"]
    {
        assert!(page.contains(&format!(".SH \"{section}\"")), "no section {section}");
    }
    let check = &page[page.find(".SH \"ALSIM PINS CHECK\"").unwrap()..];
    let check = &check[..check[1..].find(".SH \"").map_or(check.len(), |end| end + 1)];
    assert!(check.contains("Exit status:") && check.contains("\\-\\-strict"), "{check}");
    // No line of the after-help text may be read by roff as a request.
    assert!(!page.lines().any(|l| l.starts_with("..") || l.starts_with(".  ")), "a stray roff request");
}
