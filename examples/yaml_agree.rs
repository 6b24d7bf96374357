//! Holds the fast YAML subset reader to the YAML crate on a real tree: for every `*.yaml`/`*.yml` file
//! under DIR that `alsim::yaml::read_subset` reads, the reader with its fast path must answer as the
//! crate alone does (the same tree and duplicate keys). Prints how many files the subset read and how many it left to the crate; exits 1
//! on the first disagreement. `.ci/run` runs it over the InferenceX snapshot.
//!
//! ```text
//! cargo run --example yaml_agree -- DIR [--min-read N]
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() && entry.file_name() != ".git" {
            yaml_files(&path, out)?;
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, min_read) = match args.as_slice() {
        [dir] => (dir, 0),
        [dir, flag, n] if flag == "--min-read" && n.parse::<usize>().is_ok() => (dir, n.parse().unwrap_or(0)),
        _ => {
            eprintln!("usage: yaml_agree DIR [--min-read N]");
            return ExitCode::from(2);
        }
    };
    let mut files = Vec::new();
    if let Err(e) = yaml_files(Path::new(dir), &mut files) {
        eprintln!("{dir}: {e}");
        return ExitCode::from(2);
    }
    files.sort();
    let (mut read, mut left, mut bytes_read) = (0usize, 0usize, 0usize);
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        if alsim::yaml::read_subset(&text).is_none() {
            left += 1;
            continue;
        }
        // Compared by debug form, so that NaN read by both counts as the same.
        let origin = path.display().to_string();
        let answer = |r: alsim::Result<_>| r.map(|read| format!("{read:?}")).map_err(|e| e.to_string());
        let fast = answer(alsim::yaml::parse_like_pyyaml(&text, &origin));
        let full = answer(alsim::yaml::parse_like_pyyaml_full(&text, &origin));
        if fast != full {
            eprintln!("{origin}: the subset reader disagrees with the YAML crate\nsubset: {fast:?}\ncrate:  {full:?}");
            return ExitCode::from(1);
        }
        read += 1;
        bytes_read += text.len();
    }
    println!(
        "{read} YAML files ({bytes_read} bytes) read by the subset reader, identical to the crate; {left} left to the crate"
    );
    if read < min_read {
        eprintln!("fewer than {min_read} files read by the subset reader");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
