//! Command-line front end: one file per subcommand, each parsing its flags into library calls and
//! handing the result to `alsim::report`.

mod accept;
mod calibrate;
mod common;
mod config;
mod convert;
mod curve;
mod eval;
mod explain;
mod golden;
mod pins;
mod predict;
mod simulate;
mod sweep;

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

const EXIT_STATUS_HELP: &str = "\
Exit status:
  0  pass (nothing wrong found)
  1  a check ran and found a problem
  2  usage or input error
  3  undecided (too little evidence to decide)";

/// Simulate, check and choose speculative-decoding acceptance lengths for LLM-serving benchmarks.
#[derive(Debug, Parser)]
#[command(name = "alsim", version, after_help = EXIT_STATUS_HELP, max_term_width = 110)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// What a pin means: per-position acceptance from a golden curve, the accepted-draft distribution,
    /// and each engine's synthetic schedule for the same pin.
    Accept(accept::Args),
    /// Golden curves: list, show, check (exit 1 on problems), fit.
    #[command(subcommand)]
    Curve(curve::Args),
    /// Write one acceptance figure in every engine's spelling (AL, AL−1, (AL−1)/k, AL/(k+1), forced rates).
    Convert(convert::Args),
    /// Monte Carlo of requests: per-step and per-request statistics (steps, AL, TPOT, tokens/s with
    /// percentile intervals) under real acceptance versus each engine's pinned schedule, heterogeneous
    /// requests, SGLang's batch-shared draws, and the exact steps-to-N distribution.
    Simulate(simulate::Args),
    /// Is a pinned AL consistent with real-verification evidence (metrics scrapes, debug JSON, server
    /// logs, AIPerf exports)? Verdict, intervals, throughput error, per-position departures.
    Eval(eval::Args),
    /// Golden curves from eval-only runs: collect one (with per-k steps, standard errors and intervals), or
    /// retest a committed one against new runs.
    #[command(subcommand)]
    Golden(golden::Args),
    /// Check or list pinned synthetic acceptance values across a benchmark repository.
    Pins(pins::PinsArgs),
    /// The repository root found for a path, and every setting a check there runs with (flags over
    /// alsim.toml or [tool.alsim] in pyproject.toml over the defaults), with where each came from.
    Config(config::Args),
    /// Print the engine-native setting that pins a golden value (ATOM flag, vLLM JSON, SGLang env, TRT-LLM env,
    /// llama.cpp flags), or with --shape real the golden per-position rates (vLLM, llama.cpp).
    Pin(pins::PinArgs),
    /// Predicted step time, throughput per GPU, per-user speed and speedup for every concurrency and draft
    /// length k = 0..8; the best k per concurrency with its band and the Pareto frontier (docs/model.md §6).
    Predict(predict::Args),
    /// The benchmark matrix against the cost model: for every master-config entry with speculative decoding
    /// and every concurrency of its search space, the best k, its band and whether the entry's k lies in it.
    Sweep(sweep::Args),
    /// Fit the step-time model to measured step times or serving pairs (CSV), score it on what the fit did
    /// not see, and optionally save a hardware profile.
    Calibrate(calibrate::Args),
    /// What a finding class, engine, schedule or term means, from the docs/ pages (`alsim explain wrong-k`).
    Explain(explain::Args),
    /// Print a shell completion script: `alsim completions bash > /etc/bash_completion.d/alsim` (also zsh,
    /// fish, elvish, powershell).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `alsim man > alsim.1`.
    Man,
}

impl From<alsim::diagnostic::Status> for Outcome {
    fn from(status: alsim::diagnostic::Status) -> Outcome {
        match status {
            alsim::diagnostic::Status::Pass => Outcome::Pass,
            alsim::diagnostic::Status::Fail => Outcome::Problem,
            alsim::diagnostic::Status::Undecided => Outcome::Undecided,
        }
    }
}

impl Command {
    fn options(&self) -> Options {
        let renamed: &'static [(&'static str, &'static str)] = match self {
            Command::Predict(_) => &[("k", "--evidence-k")],
            _ => &[],
        };
        Options { renamed }
    }
}

/// How a command ended, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing wrong found (exit 0).
    Pass,
    /// A check found a problem (exit 1).
    Problem,
    /// Too little evidence to decide (exit 3).
    Undecided,
}

/// Parses the command line and runs it; errors print their cause chain once and exit 2.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let options = cli.command.options();
    let result = match cli.command {
        Command::Accept(args) => accept::run(args),
        Command::Curve(args) => curve::run(args),
        Command::Convert(args) => convert::run(args),
        Command::Simulate(args) => simulate::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Golden(args) => golden::run(args),
        Command::Pins(args) => pins::run(args),
        Command::Config(args) => config::run(args),
        Command::Pin(args) => pins::run_pin(args),
        Command::Predict(args) => predict::run(args),
        Command::Sweep(args) => sweep::run(args),
        Command::Calibrate(args) => calibrate::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "alsim", &mut script);
            emit(&String::from_utf8_lossy(&script)).map(|()| Outcome::Pass)
        }
        Command::Man => man_page().and_then(|page| emit(&page)).map(|()| Outcome::Pass),
    };
    match result {
        Ok(Outcome::Pass) => ExitCode::SUCCESS,
        Ok(Outcome::Problem) => ExitCode::from(1),
        Ok(Outcome::Undecided) => ExitCode::from(3),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            // Errors name the user's paths, which may hold line breaks; stderr reaches the CI log too.
            let hint = lookup_hint(&err).map(|h| format!(" ({h})")).unwrap_or_default();
            eprintln!("alsim: error: {}{hint}", alsim::report::one_line(&cause_chain(&err, &options)));
            ExitCode::from(2)
        }
    }
}

/// The man page: the top-level help, then a section per subcommand (`alsim pins check` too), as
/// `man alsim` shows it.
fn man_page() -> anyhow::Result<String> {
    let command = Cli::command();
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone()).render(&mut page)?;
    for sub in command.get_subcommands().filter(|s| !matches!(s.get_name(), "completions" | "man" | "help")) {
        man_sections(sub, "alsim", &mut page)?;
    }
    Ok(String::from_utf8(page)?)
}

fn man_sections(sub: &clap::Command, parent: &str, page: &mut Vec<u8>) -> std::io::Result<()> {
    let name = format!("{parent} {}", sub.get_name());
    page.extend(format!(".SH \"{}\"\n", name.to_uppercase()).bytes());
    let man = clap_mangen::Man::new(sub.clone().name(name.clone()));
    man.render_description_section(page)?;
    man.render_options_section(page)?;
    if let Some(after) = sub.get_after_help() {
        // As --help prints it (exit statuses laid out in columns): unfilled, roff's control characters escaped.
        page.extend(b".PP\n.nf\n");
        for line in after.to_string().lines() {
            let line = line.replace('\\', "\\e");
            let lead = if line.starts_with(['.', '\'']) { "\\&" } else { "" };
            page.extend(format!("{lead}{line}\n").bytes());
        }
        page.extend(b".fi\n");
    }
    for child in sub.get_subcommands().filter(|s| s.get_name() != "help") {
        man_sections(child, &name, page)?;
    }
    Ok(())
}

/// Writes command output to stdout, its styles kept on a terminal and dropped elsewhere (`anstream`). A
/// closed pipe (`alsim … | head`) surfaces as an error that [`main`] treats as success.
pub fn emit(text: &str) -> anyhow::Result<()> {
    fn write_out(mut out: impl Write, text: &str) -> std::io::Result<()> {
        out.write_all(text.as_bytes())?;
        out.flush()
    }
    if carries_no_styles(text) {
        // Nothing for `anstream` to keep or drop: its byte-by-byte scan of a large report (the snapshot's
        // pins JSON, 0.8 MB) was 2 % of the pin check's time.
        write_out(std::io::stdout().lock(), text)?;
    } else {
        write_out(anstream::stdout().lock(), text)?;
    }
    Ok(())
}

/// Whether `text` holds nothing `anstream` strips: no escape, no other control character but whitespace, no
/// DEL. Such text passes through its stripping unchanged.
fn carries_no_styles(text: &str) -> bool {
    // A fold without early exit, so that it runs on whole vectors of bytes.
    text.bytes().fold(true, |plain, b| plain & ((b >= 0x20) & (b != 0x7f) | b.is_ascii_whitespace()))
}

/// The error and its causes joined by ": " (each cause names what it adds; none repeats its source's text).
fn cause_chain(err: &anyhow::Error, options: &Options) -> String {
    err.chain()
        .map(|cause| match cause.downcast_ref::<alsim::Error>() {
            Some(error) => options.describe(error),
            None => cause.to_string(),
        })
        .collect::<Vec<_>>()
        .join(": ")
}

/// The running command's options for the library's parameters: the library names its parameters
/// (`step_ms`), the command line its flags (`--step-ms`), one for one except where a command gives a
/// parameter another name (`predict` reads evidence at `--evidence-k`, its `--max-k` being its own k).
struct Options {
    renamed: &'static [(&'static str, &'static str)],
}

impl Options {
    fn flag(&self, parameter: &str) -> String {
        match self.renamed.iter().find(|(name, _)| *name == parameter) {
            Some((_, flag)) => (*flag).to_string(),
            None => format!("--{}", parameter.replace('_', "-")),
        }
    }

    /// A library error in the command line's words: a parameter's name becomes its flag, and an error a
    /// parameter settles says how.
    fn describe(&self, error: &alsim::Error) -> String {
        match error {
            alsim::Error::Parameter { name, message } => format!("{}: {message}", self.flag(name)),
            alsim::Error::SettledBy { error, parameter } => {
                let flag = self.flag(parameter);
                let how = match *parameter {
                    "force" => format!("pass {flag} to overwrite it"),
                    "before" => format!("give the earlier scrape with {flag}"),
                    "format_in" => format!("{flag} chooses another reader"),
                    "k" => format!("give the draft length with {flag}"),
                    _ => format!("{flag} settles it"),
                };
                format!("{}; {how}", self.describe(error))
            }
            other => other.to_string(),
        }
    }
}

/// The options that settle a lookup the library could not: the library names what it looked for, the
/// command line knows which of its flags decide it.
fn lookup_hint(err: &anyhow::Error) -> Option<&'static str> {
    use alsim::LookupKind;
    err.chain().find_map(|cause| match cause.downcast_ref::<alsim::Error>()? {
        alsim::Error::Lookup { kind, .. } => match kind {
            LookupKind::Files | LookupKind::Facet => {
                Some("--drafter, --method or --draft-sampling decides; `alsim curve list` shows each file's")
            }
            LookupKind::Mode => Some("--mode decides"),
            LookupKind::Model => Some("`alsim curve list` shows the curves; --golden or --curve reads others"),
            LookupKind::Point => Some("--k decides; `alsim curve show` lists the draft lengths measured"),
            LookupKind::Profile => Some("--hardware, --model or --drafter decides; --profile files add more"),
            LookupKind::Topic => Some("`alsim explain --list` lists every topic"),
        },
        _ => None,
    })
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Text is written past `anstream` only where its stripping would leave it as it is.
    #[test]
    fn only_text_anstream_would_leave_as_it_is_skips_it() {
        for plain in ["", "{\"a\": 1}\n", "tab\there\r\n", "ünïcode — ✓\u{0c}"] {
            assert!(super::carries_no_styles(plain), "{plain:?}");
            assert_eq!(anstream::adapter::strip_str(plain).to_string(), plain);
        }
        for styled in ["\x1b[1merror\x1b[0m", "bell\x07", "del\x7f", "nul\0"] {
            assert!(!super::carries_no_styles(styled), "{styled:?}");
            assert_ne!(anstream::adapter::strip_str(styled).to_string(), styled);
        }
    }

    #[test]
    fn cli_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }

    #[test]
    fn a_cause_already_shown_is_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory");
        let err = anyhow::Error::from(alsim::Error::io("/x", io)).context("reading /x");
        assert_eq!(
            super::cause_chain(&err, &super::Options { renamed: &[] }),
            "reading /x: /x: No such file or directory"
        );
    }

    #[test]
    fn a_parameter_is_named_by_the_running_command_s_flag() {
        let missing_k = alsim::Error::parse("vllm.log", Some(3), "the line does not state k").settled_by("k");
        let predict = <super::Cli as clap::Parser>::parse_from(["alsim", "predict"]).command.options();
        assert_eq!(
            super::cause_chain(&anyhow::Error::from(missing_k), &predict),
            "vllm.log:3: the line does not state k; give the draft length with --evidence-k"
        );
        let exists = alsim::Error::unreadable("out.csv", "exists").settled_by("force");
        assert_eq!(
            super::cause_chain(&anyhow::Error::from(exists), &super::Options { renamed: &[] }),
            "out.csv: exists; pass --force to overwrite it"
        );
    }

    /// Every parameter the library names in an error is a flag of some command, so `flag` never makes up
    /// an option the user cannot type.
    #[test]
    fn every_library_parameter_is_a_flag() {
        fn flags(command: &clap::Command, out: &mut std::collections::BTreeSet<String>) {
            out.extend(command.get_arguments().filter_map(|a| a.get_long()).map(|l| format!("--{l}")));
            for sub in command.get_subcommands() {
                flags(sub, out);
            }
        }
        fn sources(dir: &std::path::Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() && !path.ends_with("cli") {
                    sources(&path, out);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    out.push(text.split("#[cfg(test)]").next().unwrap_or_default().to_string());
                }
            }
        }
        let mut known = std::collections::BTreeSet::new();
        flags(&super::Cli::command(), &mut known);
        let mut texts = Vec::new();
        sources(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut texts);
        // The ways the library names a parameter: `Error::parameter(NAME` (and so `for_parameter(NAME)`),
        // `settled_by(NAME)`, a draft
        // length or output length checked as an argument, a workload range.
        let callers = ["parameter(", "settled_by(", "check_draft_len_argument(", "validated(", "out_of_range("];
        let mut names = std::collections::BTreeSet::new();
        for text in &texts {
            for caller in callers {
                // A definition (`fn out_of_range(&self)`) names no parameter: only calls do.
                let calls = text.match_indices(caller).filter(|(i, _)| !text[..*i].ends_with("fn "));
                for rest in calls.map(|(i, _)| &text[i + caller.len()..]) {
                    // The name is the first string literal of the call, before its first comma or parenthesis.
                    let head = rest.split([',', ')']).find(|part| part.contains('"')).unwrap_or_default();
                    let mut quoted = head.split('"');
                    if let (Some(_), Some(name)) = (quoted.next(), quoted.next())
                        && !name.is_empty()
                        && name.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                    {
                        names.insert(name.to_string());
                    }
                }
            }
        }
        assert!(names.len() > 20, "the scan found too few parameters: {names:?}");
        let missing: Vec<String> = names
            .iter()
            .map(|n| super::Options { renamed: &[] }.flag(n))
            .filter(|flag| !known.contains(flag))
            .collect();
        assert!(missing.is_empty(), "library parameters no command takes: {missing:?}");
    }
}
