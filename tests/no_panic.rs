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

/// Absurd numbers are refused at once (exit 2, nothing on stdout) with one line naming the flag and the range
/// it accepts: no sweep over 10¹⁸ tokens, no phase that never ends, no tolerance that calls every AL consistent.
#[test]
fn out_of_range_numbers_name_the_flag_and_the_range() {
    let cases: &[(&[&str], &str, &str)] = &[
        (&["predict", "--osl", "1e18"], "--osl", "[1, 10000000]"),
        (&["predict", "--isl", "-1"], "--isl", "[0, 10000000]"),
        (&["predict", "--context", "inf"], "--context", "[0, 10000000]"),
        (&["predict", "--min-user-tps", "1e18"], "--min-user-tps", "(0, 1000000]"),
        (&["predict", "--model-error", "-5"], "--model-error", "(0, 100)"),
        (&["predict", "--hardware", "all", "--concurrency", "1-4096"], "--concurrency × --context", "8192"),
        (&["simulate", "--phase-steps", "1e18", "--phase-spread", "0.1"], "--phase-steps", "[1, 10000000]"),
        (&["simulate", "--k", "0"], "--k", "1 ≤ k ≤ 32"),
        (&["simulate", "--requests", "100000000"], "--requests", "more than the 2e11"),
        (&["accept", "--al", "-1"], "acceptance length", "[1.0000, 4.0000]"),
        (
            &[
                "eval",
                "--pin",
                "2",
                "--k",
                "3",
                "--tolerance",
                "1e18",
                "tests/fixtures/evidence/vllm_mtbench_after.prom",
            ],
            "--tolerance",
            "[0, 3)",
        ),
        (
            &[
                "eval",
                "--pin",
                "2",
                "--k",
                "3",
                "--decode-log-interval",
                "1e18",
                "tests/fixtures/evidence/sglang_gsm8k.log",
            ],
            "--decode-log-interval",
            "(0, 1000000]",
        ),
    ];
    for (args, flag, range) in cases {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, 2, "alsim {args:?}: {stdout}{stderr}");
        assert!(stdout.is_empty(), "alsim {args:?}: {stdout}");
        assert_eq!(stderr.lines().count(), 1, "alsim {args:?}: {stderr}");
        assert!(stderr.contains(flag) && stderr.contains(range), "alsim {args:?}: {stderr}");
    }
}

/// A file that cannot be read is named once, with the flag that gave it where there is one.
#[test]
fn an_unreadable_file_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.csv");
    let missing = missing.to_str().unwrap();
    for args in [
        vec!["predict", "--profile", missing],
        vec!["predict", "--model-profile", missing],
        vec!["calibrate", missing],
        vec!["calibrate", "tests/data/serving_pairs.csv", "--k", "3", "--drafter-profile", missing],
        vec!["eval", "--pin", "2", "--k", "3", missing],
        vec!["curve", "check", missing],
    ] {
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 2, "alsim {args:?}: {stderr}");
        assert_eq!(stderr.matches("missing.csv").count(), 1, "alsim {args:?}: {stderr}");
    }
    let (_, _, stderr) = run(&["predict", "--drafter-profile", missing]);
    assert!(stderr.starts_with("alsim: error: --drafter-profile: "), "{stderr}");
}
