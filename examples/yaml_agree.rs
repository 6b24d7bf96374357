//! The migration test of alsim's YAML reader: for every `*.yaml`/`*.yml` file under DIR, the reader
//! (`alsim::yaml::parse_like_pyyaml`, over saphyr-parser) must read what the reading it replaced read
//! (`serde_yaml` with PyYAML's mapping semantics, kept in `tests/yaml_before.rs`): the same tree (lines
//! aside, which the old reading had not) and the same duplicate keys, or refuse the file as it did; and
//! the strict reading (`alsim::yaml::parse`, for golden files) must refuse exactly the files that a plain
//! `serde_yaml::Value` refused. Prints how many files were read and refused; exits 1 on the first
//! disagreement. `.ci/run` runs it over the InferenceX snapshot.
//!
//! ```text
//! cargo run --example yaml_agree -- DIR [--min-read N]
//! ```
//!
//! `--min-read N`: fail unless at least N files were read (not refused) by both, so that a reader that
//! refused everything could not agree its way through.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[path = "../tests/yaml_before.rs"]
mod yaml_before;

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
    let (mut read, mut refused, mut bytes_read) = (0usize, Vec::new(), 0usize);
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let origin = path.display().to_string();
        let (new, old) = (yaml_before::read_new(&text, &origin), yaml_before::read(&text));
        // Compared by debug form, so that NaN read by both counts as the same.
        match (&new, &old) {
            (Ok(n), Ok(o)) if format!("{n:?}") == format!("{o:?}") => {
                read += 1;
                bytes_read += text.len();
            }
            (Err(n), Err(o)) => refused.push(format!("{n}\n  before: {o}")),
            _ => {
                eprintln!(
                    "{origin}: the reader disagrees with the reading it replaced\nnow:    {new:?}\nbefore: {old:?}"
                );
                return ExitCode::from(1);
            }
        }
        let strict = alsim::yaml::parse(&text, &origin);
        if strict.is_ok() != yaml_before::strict_accepts(&text) {
            eprintln!(
                "{origin}: the strict reader {} it, the reading it replaced did not",
                match strict {
                    Ok(_) => "accepts".to_string(),
                    Err(e) => format!("refuses ({e})"),
                }
            );
            return ExitCode::from(1);
        }
    }
    println!(
        "{read} YAML files ({bytes_read} bytes) read as before (trees and duplicate keys); {} refused by both readers",
        refused.len()
    );
    for file in &refused {
        println!("{file}");
    }
    if read < min_read {
        eprintln!("fewer than {min_read} files read");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
