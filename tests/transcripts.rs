//! Console transcripts under `tests/cmd/` run as tests, so the documented sessions stay true.

#[test]
fn documented_sessions() {
    trycmd::TestCases::new().register_bin("alsim", trycmd::cargo::cargo_bin!("alsim")).case("tests/cmd/*.md");
}
