//! Console transcripts under `tests/cmd/` run as tests, so the documented sessions stay true: the `.md`
//! sessions, and the `.toml` cases that pin each human format's layout at a given width (their `.stdout`
//! is the expected output; `TRYCMD=overwrite cargo test documented_sessions` rewrites it after a change).

#[test]
fn documented_sessions() {
    trycmd::TestCases::new()
        .register_bin("alsim", trycmd::cargo::cargo_bin!("alsim"))
        .case("tests/cmd/*.md")
        .case("tests/cmd/*.toml");
}
