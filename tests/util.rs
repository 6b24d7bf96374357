//! Helpers shared by the integration tests.

use assert_cmd::Command;

/// The `alsim` binary under test, with a clean environment for reproducible output (human output at its
/// default width of 100 columns; under GitHub Actions, no appending to the real job summary).
pub fn alsim() -> Command {
    let mut cmd = Command::cargo_bin("alsim").expect("the alsim binary is built for integration tests");
    cmd.env_remove("RAYON_NUM_THREADS").env_remove("GITHUB_STEP_SUMMARY").env("NO_COLOR", "1").env_remove("COLUMNS");
    cmd
}

/// Runs `alsim` with `args` and returns (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = alsim().args(args).output().expect("alsim runs");
    (
        out.status.code().expect("alsim exits with a code, not a signal"),
        String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    )
}

/// Runs `alsim … --format json` and parses stdout.
pub fn json(args: &[&str]) -> serde_json::Value {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--format", "json"]);
    let (code, stdout, stderr) = run(&all);
    assert_eq!(code, 0, "alsim {all:?} failed: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("alsim {all:?} printed invalid JSON ({e}): {stdout}"))
}
