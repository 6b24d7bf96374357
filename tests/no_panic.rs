//! No command line, however wrong, makes alsim panic (exit 101): every bad input is a clear error.

use crate::util::run;

/// Garbage appended to every subcommand.
const BAD_TAILS: &[&[&str]] = &[
    &[],
    &["--k", "0"],
    &["--k", "-1"],
    &["--k", "99999999999999999999"],
    &["--al", "NaN"],
    &["--al", "inf"],
    &["--mode", "sideways"],
    &["--format", "yaml"],
    &["--model", ""],
    &["--curve", "tests/fixtures/curves/bad_yaml.yaml"],
    &["/nonexistent"],
    &["--rates", ",,"],
    &["\u{fffd}"],
];

const SUBCOMMANDS: &[&[&str]] = &[
    &["accept"],
    &["curve", "list"],
    &["curve", "show"],
    &["curve", "check"],
    &["curve", "fit"],
    &["convert"],
    &["convert", "2.5"],
    &["eval", "--pin", "2.83"],
    &["eval", "--pin-from", "tests/fixtures/evidence/atom_mtbench.prom"],
    &["eval", "--pin", "2.83", "--k", "3", "/dev/null"],
    &["predict", "--evidence", "tests/fixtures/evidence/vllm_mtbench.log"],
    &["predict", "--evidence", "/dev/zero"],
    &["predict", "--evidence", "tests/fixtures/evidence/llamacpp_mtbench.log"],
    &["pin", "--engine", "vllm", "--shape", "real"],
];

#[test]
fn no_command_line_panics() {
    for sub in SUBCOMMANDS {
        for tail in BAD_TAILS {
            let args: Vec<&str> = sub.iter().chain(tail.iter()).copied().collect();
            let (code, _, stderr) = run(&args);
            assert_ne!(code, 101, "alsim {args:?} panicked: {stderr}");
            assert!(!stderr.contains("panicked"), "alsim {args:?}: {stderr}");
            // An error is said once, on one line.
            if code == 2 {
                assert!(stderr.matches("alsim: error:").count() <= 1, "alsim {args:?}: {stderr}");
                assert!(stderr.matches("(os error").count() <= 1, "alsim {args:?}: {stderr}");
            }
        }
    }
}
