//! The repository walk: which files the pin check reads.
//!
//! Candidates are shell scripts (`*.sh`, `*.bash`, or a `#!…sh` first line), YAML (`*.yaml`, `*.yml`)
//! and prose that can go stale against the code (`*.md`, `CHANGELOG*`). Version-control and build
//! directories are not entered. A candidate that is larger than [`MAX_FILE_BYTES`], holds a NUL byte
//! (binary), is not UTF-8, or cannot be read — and a symlink loop — is a [`Problem`] naming the file:
//! the check reports it as an error rather than skipping it silently (pins.md, "Severity"). Files are
//! read through [`crate::input`] (regular files only, bounded), never executed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A candidate the walk could not read, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Path relative to the repository root.
    pub path: String,
    /// Why (binary, not UTF-8, too large, unreadable, symlink loop).
    pub reason: String,
    /// Whether pins may hide behind it: false for a symlink back to an enclosing directory, whose files
    /// are read through their real path.
    pub hides_pins: bool,
}

impl Problem {
    fn new(path: String, reason: impl Into<String>) -> Problem {
        Problem { path, reason: reason.into(), hides_pins: true }
    }
}

/// Files above this size are not launch scripts or recipes: such a candidate is a [`Problem`].
pub const MAX_FILE_BYTES: u64 = crate::input::SMALL_FILE_LIMIT;

/// Directories never entered: version control, build output, vendored packages.
const SKIP_DIRS: &[&str] = &[".git", ".hg", ".svn", "target", "node_modules", "__pycache__", ".venv"];

/// What kind of text a candidate file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A bash script.
    Shell,
    /// A YAML document.
    Yaml,
    /// Prose (Markdown, changelog).
    Prose,
}

/// One file read.
#[derive(Debug, Clone)]
pub struct TextFile {
    /// Path relative to the repository root, `/`-separated.
    pub rel: String,
    /// Kind.
    pub kind: Kind,
    /// Contents.
    pub text: String,
}

/// The walk's result: texts in path order, and the candidates that could not be read.
#[derive(Debug, Default)]
pub struct Files {
    /// Files read.
    pub texts: Vec<TextFile>,
    /// Candidates not read, with reasons.
    pub problems: Vec<Problem>,
}

/// Walks `root` and reads every candidate file.
///
/// # Errors
/// [`Error::Io`] when `root` cannot be listed; problems below it become [`Problem`]s.
pub fn walk(root: &Path) -> Result<Files> {
    let canonical_root = root.canonicalize().map_err(|e| Error::io(root, e))?;
    std::fs::read_dir(root).map_err(|e| Error::io(root, e))?;
    let mut files = Files::default();
    let mut candidates: Vec<(PathBuf, String, Option<Kind>)> = Vec::new();
    let mut stack: Vec<(PathBuf, String, Vec<PathBuf>)> =
        vec![(root.to_path_buf(), String::new(), vec![canonical_root])];
    let mut seen_dirs: HashSet<PathBuf> = HashSet::new();
    while let Some((dir, rel_dir, ancestors)) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) => {
                files.problems.push(Problem::new(display_rel(&rel_dir), format!("unreadable directory: {e}")));
                continue;
            }
        };
        let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if rel_dir.is_empty() { name.clone() } else { format!("{rel_dir}/{name}") };
            let path = entry.path();
            let Ok(file_type) = entry.file_type() else {
                files.problems.push(Problem::new(rel, "unreadable entry"));
                continue;
            };
            let symlink = file_type.is_symlink();
            let is_dir = if symlink {
                match std::fs::metadata(&path) {
                    Ok(meta) => meta.is_dir(),
                    Err(e) => {
                        // A broken link can hide a candidate only under a candidate's name.
                        if kind_by_name(&name).is_some() || !name.contains('.') {
                            let reason = if e.raw_os_error() == Some(40) || e.to_string().contains("symbolic links") {
                                "symlink loop".to_string()
                            } else {
                                format!("dangling or unreadable symlink: {e}")
                            };
                            files.problems.push(Problem::new(rel, reason));
                        }
                        continue;
                    }
                }
            } else {
                file_type.is_dir()
            };
            if is_dir {
                if SKIP_DIRS.contains(&name.as_str()) {
                    continue;
                }
                // A real directory's canonical path is its parent's plus its name; only a link needs
                // resolving (a `canonicalize` per directory was most of the walk's system calls).
                let canonical = match ancestors.last() {
                    Some(parent) if !symlink => parent.join(entry.file_name()),
                    _ => match path.canonicalize() {
                        Ok(canonical) => canonical,
                        Err(_) => {
                            files.problems.push(Problem::new(rel, "unreadable directory"));
                            continue;
                        }
                    },
                };
                if ancestors.contains(&canonical) {
                    files.problems.push(Problem {
                        path: rel,
                        reason: "symlink loop (leads back to an enclosing directory, read through its real path)"
                            .into(),
                        hides_pins: false,
                    });
                    continue;
                }
                if !seen_dirs.insert(canonical.clone()) {
                    // Reached twice through symlinks: read once, so pins are not reported twice.
                    continue;
                }
                let mut next = ancestors.clone();
                next.push(canonical);
                stack.push((path, rel, next));
            } else {
                let kind = kind_by_name(&name);
                if kind.is_some() || !name.contains('.') {
                    candidates.push((path, rel, kind));
                }
            }
        }
    }
    candidates.sort_by(|a, b| a.1.cmp(&b.1));
    use rayon::prelude::*;
    let read: Vec<std::result::Result<Option<TextFile>, Problem>> =
        candidates.into_par_iter().map(|(path, rel, kind)| read_candidate(&path, rel, kind)).collect();
    for item in read {
        match item {
            Ok(Some(file)) => files.texts.push(file),
            Ok(None) => {}
            Err(problem) => files.problems.push(problem),
        }
    }
    files.problems.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

fn display_rel(rel: &str) -> String {
    if rel.is_empty() { ".".into() } else { rel.to_string() }
}

fn kind_by_name(name: &str) -> Option<Kind> {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".sh") || lower.ends_with(".bash") {
        Some(Kind::Shell)
    } else if lower.ends_with(".yaml") || lower.ends_with(".yml") {
        Some(Kind::Yaml)
    } else if lower.ends_with(".md") || lower.starts_with("changelog") {
        Some(Kind::Prose)
    } else {
        None
    }
}

/// Reads one candidate; an extension-less file counts only when its first line is a shell shebang.
fn read_candidate(path: &Path, rel: String, kind: Option<Kind>) -> std::result::Result<Option<TextFile>, Problem> {
    let skip = |reason: String| Problem::new(rel.clone(), reason);
    let kind = match kind {
        Some(kind) => kind,
        None => {
            // Only the first line decides whether an extension-less file is a script at all.
            use std::io::Read;
            let mut head = Vec::with_capacity(128);
            let file = crate::input::open_regular(path).map_err(|e| skip(reason(e)))?;
            file.take(128).read_to_end(&mut head).map_err(|e| skip(format!("unreadable: {e}")))?;
            if !(head.starts_with(b"#!") && is_shell_shebang(&head)) {
                return Ok(None);
            }
            Kind::Shell
        }
    };
    let bytes = crate::input::read_bytes(path, MAX_FILE_BYTES).map_err(|e| skip(reason(e)))?;
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return Err(skip("binary (NUL byte)".into()));
    }
    let text = String::from_utf8(bytes)
        .map_err(|e| skip(format!("invalid UTF-8 at byte {}", e.utf8_error().valid_up_to())))?;
    Ok(Some(TextFile { rel, kind, text }))
}

/// The reason alone: the problem already names the file.
fn reason(error: Error) -> String {
    match error {
        Error::Unreadable { reason, .. } => reason,
        Error::Io { reason, .. } => format!("unreadable: {reason}"),
        other => other.to_string(),
    }
}

fn is_shell_shebang(bytes: &[u8]) -> bool {
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    let first = String::from_utf8_lossy(first);
    first.ends_with("sh") || first.contains("bash") || first.contains("/sh ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_binary_invalid_utf8_huge_and_loops() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("ok.sh"), "#!/bin/bash\necho hi\n").unwrap();
        std::fs::write(root.join("bin.sh"), b"ab\0cd").unwrap();
        std::fs::write(root.join("bad.yaml"), b"a: \xff\xfe\n").unwrap();
        std::fs::write(root.join("launch"), "#!/usr/bin/env bash\necho x\n").unwrap();
        std::fs::write(root.join("data"), b"\x00\x01").unwrap();
        let big = std::fs::File::create(root.join("big.yaml")).unwrap();
        big.set_len(MAX_FILE_BYTES + 1).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("..", root.join("sub/loop")).unwrap();
            std::os::unix::fs::symlink("self", root.join("self")).unwrap();
            std::os::unix::fs::symlink("nowhere", root.join("gone.png")).unwrap();
        }
        let files = walk(root).unwrap();
        let read: Vec<&str> = files.texts.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(read, ["launch", "ok.sh"]);
        let reasons: Vec<(&str, &str)> = files.problems.iter().map(|s| (s.path.as_str(), s.reason.as_str())).collect();
        let has = |p: &str, r: &str| reasons.iter().any(|(path, reason)| *path == p && reason.contains(r));
        assert!(has("bin.sh", "binary"), "{reasons:?}");
        assert!(has("bad.yaml", "UTF-8"), "{reasons:?}");
        assert!(has("big.yaml", "larger than"), "{reasons:?}");
        #[cfg(unix)]
        {
            assert!(has("sub/loop", "symlink loop"), "{reasons:?}");
            assert!(has("self", "symlink"), "{reasons:?}");
            assert!(!files.problems.iter().find(|p| p.path == "sub/loop").unwrap().hides_pins);
            assert!(!reasons.iter().any(|(p, _)| *p == "gone.png"), "not a candidate's name: {reasons:?}");
        }
    }
}
