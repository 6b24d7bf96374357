//! Human output fits the terminal: at any width asked for (`COLUMNS`, as a shell exports it), no line of
//! any report is wider unless a path or URL, which never breaks, makes it so; and nothing is lost on the way
//! (the pins check keeps every finding).

use crate::pins::fixture;
use crate::util::alsim;

fn at_width(width: usize, args: &[&str]) -> String {
    let out = alsim().env("COLUMNS", width.to_string()).args(args).output().expect("alsim runs");
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

#[test]
fn no_report_is_wider_than_the_terminal() {
    let repo = fixture();
    let repo = repo.to_str().unwrap();
    let commands: [&[&str]; 8] = [
        &["pins", "check", repo],
        &["pins", "check", repo, "--format", "table"],
        &["pins", "list", repo],
        &["curve", "check"],
        &["curve", "list"],
        &["accept"],
        &["predict", "--concurrency", "1,64"],
        &["simulate", "--requests", "200"],
    ];
    for width in [80, 100, 120] {
        for args in commands {
            let out = at_width(width, args);
            assert!(!out.is_empty(), "{args:?} printed nothing");
            for line in out.lines() {
                let wide = line.chars().count();
                // Wider only by a word kept whole (a path, a URL, a file name) too wide to share a line:
                // the line without it fits.
                let whole =
                    line.split_whitespace().map(|w| w.chars().count()).any(|w| w > width / 2 && wide - w <= width);
                assert!(wide <= width || whole, "{args:?} at {width} columns: a line of {wide}: {line}\n{out}");
            }
        }
    }
}

#[test]
fn findings_are_blocks_errors_first_each_with_its_help() {
    let repo = fixture();
    let (code, json, _) = crate::util::run(&["pins", "check", repo.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 1);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let findings = json["findings"].as_array().unwrap();
    let out = at_width(80, &["pins", "check", repo.to_str().unwrap()]);
    // Blocks are separated by a blank line; the summary comes last.
    let blocks: Vec<&str> = out.trim_end().split("\n\n").collect();
    let (summary, blocks) = blocks.split_last().unwrap();
    assert!(summary.contains("status fail"), "{summary}");
    assert_eq!(blocks.len(), findings.len(), "one block per finding:\n{out}");
    let severity = |block: &str| {
        ["error", "warning", "note", "allowed"]
            .into_iter()
            .find(|s| block.contains(&format!("{s}[")))
            .unwrap_or_else(|| panic!("no severity in {block}"))
    };
    let severities: Vec<&str> = blocks.iter().map(|b| severity(b)).collect();
    let first_other = severities.iter().position(|s| *s != "error").unwrap_or(severities.len());
    assert!(severities[first_other..].iter().all(|s| *s != "error"), "errors first: {severities:?}");
    // Errors and warnings say how to mend them; notes and allowed findings need nothing.
    for (block, severity) in blocks.iter().zip(&severities) {
        let mends = matches!(*severity, "error" | "warning");
        assert_eq!(block.contains("\n  help: "), mends, "{block}");
    }
    assert!(severities.contains(&"note") && severities.contains(&"warning"), "{severities:?}");
}

/// Lines `alsim` prints at 80 columns.
fn lines_at_80(args: &[&str]) -> usize {
    at_width(80, args).lines().count()
}

#[test]
fn predict_and_sweep_answer_on_one_screen_and_long_shows_every_row() {
    // predict's defaults: 5 concurrencies × 9 k, which the full tables gave as 583 lines at 80 columns.
    let short = lines_at_80(&["predict"]);
    assert!(short <= 30, "predict: {short} lines");
    assert!(lines_at_80(&["predict", "--long"]) > 10 * short);
    // sweep of the fixture repository: 28 rows and 15 points not predicted (549 lines in full).
    let map = crate::sweep::map();
    let repo = fixture();
    let sweep = ["sweep", repo.to_str().unwrap(), "--map", &map];
    let short = lines_at_80(&sweep);
    assert!(short <= 60, "sweep: {short} lines");
    assert!(lines_at_80(&[&sweep[..], &["--long"]].concat()) > 5 * short);
}

#[test]
fn severities_are_coloured_only_where_colour_is_wanted() {
    let repo = fixture();
    let check = |env: &[(&str, &str)]| {
        let mut cmd = alsim();
        cmd.args(["pins", "check", repo.to_str().unwrap()]).env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        String::from_utf8(cmd.output().expect("alsim runs").stdout).expect("stdout is UTF-8")
    };
    // A pipe gets plain text; CLICOLOR_FORCE (as a CI log that renders colour sets it) the styles, on the
    // severity label alone.
    let plain = check(&[]);
    assert!(!plain.contains('\u{1b}') && plain.contains("error[wrong-k]:"), "{plain}");
    let forced = check(&[("CLICOLOR_FORCE", "1")]);
    assert!(forced.contains("\u{1b}[1m\u{1b}[31merror[wrong-k]:\u{1b}[0m"), "{forced:?}");
    assert!(forced.contains("\u{1b}[1m\u{1b}[33mwarning["), "{forced:?}");
    assert_eq!(anstream::adapter::strip_str(&forced).to_string(), plain, "nothing but the styles differs");
}
