//! The repository walk: which files the pin check reads, and how their names are shown.
//!
//! Candidates are shell scripts (`*.sh`, `*.bash`, or a `#!…sh` first line), YAML (`*.yaml`, `*.yml`)
//! and prose that can go stale against the code (`*.md`, `CHANGELOG*`). The walk is the `ignore` crate's,
//! as ripgrep's: a path that the repository's `.gitignore` or `.ignore` files (in the root and below it,
//! never above) or an [`Excludes`] glob names is not read, and version-control metadata (`.git`, `.hg`,
//! `.svn`) is not entered. A candidate that is larger than [`MAX_FILE_BYTES`], holds a NUL byte (binary),
//! is not UTF-8, or cannot be read — and a symlink loop — is an [`UnreadFile`] naming the file: the check
//! reports it as an error rather than skipping it silently. Files are read through `crate::input`
//! (regular files only, bounded: never a device or a FIFO), never executed.
//!
//! The walk runs on trees a stranger wrote (pull-request CI), so it never leaves the repository root:
//! a symbolic link whose target lies outside it is an [`UnreadFile`] naming the link, and its target is neither
//! opened nor named (a link to a credentials file must not reach a public log). A link to a file inside is
//! read under the link's name; a link to a directory inside is not entered, as its files are read through
//! their real path (once, so their pins are not reported twice). Directories nested deeper than
//! [`MAX_DEPTH`] are not entered (an [`UnreadFile`] too), which also keeps every path the walk opens well
//! under the system's path-length limit.
//!
//! A file's name is shown as [`display_path`] writes it: UTF-8 as it is, with a backslash, a control
//! character and a byte that is not UTF-8 escaped. The escaping is one-to-one, so two files never share a
//! shown name, and [`os_path`] turns a shown name back into the one the operating system gave.

use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};

/// A candidate the walk could not read, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadFile {
    /// Path relative to the repository root, as [`display_path`] shows it.
    pub path: String,
    /// Why (binary, not UTF-8, too large, unreadable, symlink loop, link leaving the root, too deep).
    pub reason: String,
    /// Whether pins may hide behind it: false for a symlink back to an enclosing directory, whose files
    /// are read through their real path.
    pub hides_pins: bool,
}

impl UnreadFile {
    fn new(path: String, reason: impl Into<String>) -> UnreadFile {
        UnreadFile { path, reason: reason.into(), hides_pins: true }
    }
}

/// Files above this size are not launch scripts or recipes: such a candidate is an [`UnreadFile`].
pub const MAX_FILE_BYTES: u64 = crate::input::SMALL_FILE_LIMIT;

/// Directories nested deeper than this below the root are not entered. Real benchmark repositories nest
/// a dozen levels; a deeper chain is a hostile or broken tree, reported rather than followed.
pub const MAX_DEPTH: usize = 256;

/// Version-control metadata: never a candidate, and not something an ignore file lists.
const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn"];

/// The ignore files the walk reads in each directory.
const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore"];

/// Paths the user excludes (`--exclude GLOB`, `exclude` in the configuration), in globset's syntax: a glob
/// excludes a file or directory when it matches the path relative to the root (`scratch/**`,
/// `benchmarks/old/*.sh`) or its name alone (`scratch`, `*.bak.sh`); `*` matches across `/`.
#[derive(Debug, Clone, Default)]
pub struct Excludes {
    globs: Vec<String>,
    set: globset::GlobSet,
}

impl Excludes {
    /// The excludes for `globs`.
    ///
    /// # Errors
    /// [`Error::Parameter`] (`exclude`) naming a glob that does not parse.
    pub fn new(globs: &[String]) -> Result<Excludes> {
        let mut set = globset::GlobSetBuilder::new();
        for glob in globs {
            set.add(globset::Glob::new(glob).map_err(|e| Error::parameter("exclude", e.to_string()))?);
        }
        let set = set.build().map_err(|e| Error::parameter("exclude", e.to_string()))?;
        Ok(Excludes { globs: globs.to_vec(), set })
    }

    /// The globs as given.
    pub fn globs(&self) -> &[String] {
        &self.globs
    }

    /// Whether `rel` (relative to the root, `/`-separated) or its last component is excluded.
    pub fn excludes(&self, rel: &str) -> bool {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        !self.globs.is_empty() && (self.set.is_match(rel) || self.set.is_match(name))
    }

    /// Whether `rel` or a folder it lies in is excluded: whether the walk drops it.
    pub fn drops(&self, rel: &str) -> bool {
        let folders = rel.match_indices('/').map(|(at, _)| &rel[..at]);
        folders.chain([rel]).any(|path| self.excludes(path))
    }
}

/// What kind of text a candidate file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
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
    /// Path relative to the repository root, `/`-separated, as [`display_path`] shows it.
    pub rel: String,
    /// What kind of text it is.
    pub kind: FileKind,
    /// Contents.
    pub text: String,
}

/// The walk's result: texts in path order, and the candidates that could not be read.
#[derive(Debug, Default)]
pub struct Files {
    /// Files read.
    pub texts: Vec<TextFile>,
    /// Candidates not read, with reasons.
    pub problems: Vec<UnreadFile>,
}

impl Files {
    /// Every candidate the walk took in, read or not: what the check covers.
    pub fn covered(&self) -> impl Iterator<Item = &str> {
        self.texts.iter().map(|f| f.rel.as_str()).chain(self.problems.iter().map(|p| p.path.as_str()))
    }
}

/// Walks `root` and reads every candidate file below it that no ignore file or exclude drops, never
/// leaving it.
///
/// # Errors
/// [`Error::Io`] when `root` cannot be listed; problems below it become [`UnreadFile`]s.
pub fn walk(root: &Path, excludes: &Excludes) -> Result<Files> {
    let canonical_root = root.canonicalize().map_err(|e| Error::io(root, e))?;
    std::fs::read_dir(root).map_err(|e| Error::io(root, e))?;
    let shown = |path: &Path| display_path(path.strip_prefix(root).unwrap_or(path));
    // What the filter turns away that must still be reported (a directory too deep); the filter runs
    // inside the walk, which asks for a shareable one.
    let deep: Arc<Mutex<Vec<String>>> = Arc::default();
    let walker = {
        let (deep, excludes, root) = (deep.clone(), excludes.clone(), root.to_path_buf());
        ignore::WalkBuilder::new(root.clone())
            .standard_filters(false)
            .ignore(true)
            .git_ignore(true)
            .require_git(false)
            .follow_links(false)
            .max_depth(Some(MAX_DEPTH + 1))
            .sort_by_file_name(|a, b| a.cmp(b))
            .filter_entry(move |entry| {
                if entry.depth() == 0 {
                    return true;
                }
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                let rel = display_path(entry.path().strip_prefix(&root).unwrap_or(entry.path()));
                if is_dir && VCS_DIRS.iter().any(|d| entry.file_name() == *d) || excludes.excludes(&rel) {
                    return false;
                }
                if is_dir && entry.depth() > MAX_DEPTH {
                    deep.lock().expect("the walk is serial").push(rel);
                    return false;
                }
                true
            })
            .build()
    };
    let mut files = Files::default();
    // The listing is serial; each candidate is read on a pool thread as soon as the listing meets it, so that
    // reading overlaps listing instead of waiting for the whole tree. Read in any order, kept in path order.
    let read: Mutex<Vec<(String, ReadResult)>> = Mutex::default();
    rayon::scope(|scope| {
        for entry in walker {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    let path = error_path(&e).map(&shown).unwrap_or_else(|| ".".into());
                    files.problems.push(UnreadFile::new(path, format!("unreadable directory: {}", io_reason(&e))));
                    continue;
                }
            };
            if entry.depth() == 0 {
                continue;
            }
            let path = entry.path();
            let rel = shown(path);
            if let Some(e) = entry.error() {
                // An ignore file that could not be read or parsed: what it would drop is read, and it is said.
                let at = error_path(e).map(&shown).unwrap_or_else(|| rel.clone());
                let reason = match error_path(e) {
                    Some(file) if !inside(&canonical_root, file) => {
                        "a symbolic link that leads outside the repository root; not followed".to_string()
                    }
                    _ => format!("an ignore file that could not be read in full: {e}"),
                };
                files.problems.push(UnreadFile::new(at, reason));
            }
            let Some(file_type) = entry.file_type() else {
                files.problems.push(UnreadFile::new(rel, "unreadable entry"));
                continue;
            };
            if file_type.is_dir() {
                continue;
            }
            let name = display_path(Path::new(entry.file_name()));
            // A candidate's name, or no extension at all (a shebang script, a directory): what a link
            // that cannot be followed may hide. An ignore file linked out of the root may hide any file.
            let may_hide_pins = kind_by_name(&name).is_some() || !name.contains('.') || IGNORE_FILES.contains(&&*name);
            if file_type.is_symlink()
                && let Some(problem) = skipped_link(path, &rel, may_hide_pins, &canonical_root)
            {
                files.problems.extend(problem);
                continue;
            }
            let kind = kind_by_name(&name);
            if kind.is_some() || !name.contains('.') {
                let (path, read) = (path.to_path_buf(), &read);
                scope.spawn(move |_| {
                    let item = read_candidate(&path, rel.clone(), kind);
                    read.lock().expect("a read never panics").push((rel, item));
                });
            }
        }
    });
    for rel in deep.lock().expect("the walk is over").drain(..) {
        files.problems.push(UnreadFile::new(
            rel,
            format!("nested more than {MAX_DEPTH} directories below the root; not entered"),
        ));
    }
    let mut read = read.into_inner().expect("every read is over");
    read.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, item) in read {
        match item {
            Ok(Some(file)) => files.texts.push(file),
            Ok(None) => {}
            Err(problem) => files.problems.push(problem),
        }
    }
    files.problems.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// A symbolic link the walk meets: `None` where it is read as the file it leads to; else it is skipped,
/// with the problem to report where it may hide a pin.
fn skipped_link(path: &Path, rel: &str, may_hide_pins: bool, canonical_root: &Path) -> Option<Option<UnreadFile>> {
    match path.canonicalize() {
        Ok(target) if !target.starts_with(canonical_root) => {
            // Neither opened nor named: the target may be a secret (a credentials file,
            // /proc/self/environ) and findings reach public CI logs.
            Some((may_hide_pins || target.is_dir()).then(|| {
                UnreadFile::new(rel.to_string(), "a symbolic link that leads outside the repository root; not followed")
            }))
        }
        Ok(target) if target.is_dir() => {
            // A link to the directory it sits in, or to one enclosing it, is named: it is the one
            // kind a reader may take for a loop. Any other is read through its real path.
            let sits_in = path.parent().and_then(|p| p.canonicalize().ok());
            Some(sits_in.is_some_and(|dir| dir.starts_with(&target)).then(|| UnreadFile {
                path: rel.to_string(),
                reason: "symlink loop (leads back to an enclosing directory, read through its real path)".into(),
                hides_pins: false,
            }))
        }
        Ok(_) => None,
        Err(e) => Some(may_hide_pins.then(|| {
            let reason = if e.raw_os_error() == Some(40) || e.to_string().contains("symbolic links") {
                "symlink loop".to_string()
            } else {
                format!("dangling or unreadable symlink: {e}")
            };
            UnreadFile::new(rel.to_string(), reason)
        })),
    }
}

/// The path an error of the walk names, if any.
fn error_path(error: &ignore::Error) -> Option<&Path> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => error_path(err),
        ignore::Error::Partial(errors) => errors.iter().find_map(error_path),
        _ => None,
    }
}

/// The operating system's reason alone: the problem already names the path.
fn io_reason(error: &ignore::Error) -> String {
    error.io_error().map_or_else(|| error.to_string(), ToString::to_string)
}

/// Whether the shown path `file` is `within` or lies below it (both relative to the root, `/`-separated).
pub fn lies_in(file: &str, within: &str) -> bool {
    file.strip_prefix(within).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Reads the file at `rel` (a shown path) below `root` when it is a regular file that lies inside the root,
/// links resolved; `None` otherwise. For the few files the check reads outside the walk's candidates.
pub(crate) fn read_inside(root: &Path, rel: &str, limit: u64) -> Option<String> {
    let path = root.join(os_path(rel)?);
    inside(root, &path).then(|| crate::input::read_text(&path, limit).ok()).flatten()
}

/// Whether `path`, links resolved, lies inside `root` (false when either cannot be resolved).
pub fn inside(root: &Path, path: &Path) -> bool {
    match (root.canonicalize(), path.canonicalize()) {
        (Ok(root), Ok(path)) => path.starts_with(root),
        _ => false,
    }
}

/// A relative path as findings show it: `/`-separated components, UTF-8 as it is, with a backslash as `\\`,
/// a newline, return or tab as `\n`, `\r`, `\t`, any other control character (and the line and paragraph
/// separators) as `\u{…}`, and a byte that is not UTF-8 as `\x…`. One-to-one, and undone by [`os_path`]; a
/// shown name can never start a new line of output.
pub fn display_path(path: &Path) -> String {
    let mut out = String::new();
    for (i, part) in path.components().enumerate() {
        if i > 0 {
            out.push('/');
        }
        match part {
            Component::Normal(name) => push_shown(&mut out, name),
            other => push_shown(&mut out, other.as_os_str()),
        }
    }
    out
}

fn push_shown(out: &mut String, name: &OsStr) {
    if let Some(text) = name.to_str()
        && !text.chars().any(needs_escape)
    {
        out.push_str(text);
        return;
    }
    use std::fmt::Write as _;
    for chunk in name.as_encoded_bytes().utf8_chunks() {
        for c in chunk.valid().chars() {
            // A backslash is escaped too, so that the escapes cannot be forged: the mapping stays one-to-one.
            if c == '\\' {
                out.push_str("\\\\");
            } else {
                crate::escape::push_char(out, c);
            }
        }
        for byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
}

fn needs_escape(c: char) -> bool {
    c == '\\' || crate::escape::breaks_line(c)
}

/// The relative OS path a shown path (see [`display_path`]) stands for; `None` when `shown` is not one
/// [`display_path`] could have written.
pub fn os_path(shown: &str) -> Option<PathBuf> {
    let mut bytes: Vec<u8> = Vec::with_capacity(shown.len());
    let mut chars = shown.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0u8; 4];
            bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        match chars.next()? {
            '\\' => bytes.push(b'\\'),
            'n' => bytes.push(b'\n'),
            'r' => bytes.push(b'\r'),
            't' => bytes.push(b'\t'),
            'x' => {
                let hex: String = chars.by_ref().take(2).collect();
                bytes.push(u8::from_str_radix(&hex, 16).ok().filter(|_| hex.len() == 2)?);
            }
            'u' => {
                let rest = chars.as_str().strip_prefix('{')?;
                let end = rest.find('}')?;
                let c = char::from_u32(u32::from_str_radix(&rest[..end], 16).ok()?)?;
                let mut buf = [0u8; 4];
                bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                chars = rest[end + 1..].chars();
            }
            _ => return None,
        }
    }
    os_string(bytes).map(PathBuf::from)
}

#[cfg(unix)]
fn os_string(bytes: Vec<u8>) -> Option<OsString> {
    use std::os::unix::ffi::OsStringExt;
    Some(OsString::from_vec(bytes))
}

/// Elsewhere a name that is not UTF-8 cannot be rebuilt from bytes without `unsafe`; such names are shown
/// but not mapped back.
#[cfg(not(unix))]
fn os_string(bytes: Vec<u8>) -> Option<OsString> {
    String::from_utf8(bytes).ok().map(OsString::from)
}

fn kind_by_name(name: &str) -> Option<FileKind> {
    let lower = name.to_ascii_lowercase();
    // A Slurm batch script (`job.slurm`) is a shell script `sbatch` runs: launch paths pass through it.
    if lower.ends_with(".sh") || lower.ends_with(".bash") || lower.ends_with(".slurm") {
        Some(FileKind::Shell)
    } else if lower.ends_with(".yaml") || lower.ends_with(".yml") {
        Some(FileKind::Yaml)
    } else if lower.ends_with(".md") || lower.starts_with("changelog") {
        Some(FileKind::Prose)
    } else {
        None
    }
}

/// A candidate's reading: its text, `None` for an extension-less file that is not a script, or why not.
type ReadResult = std::result::Result<Option<TextFile>, UnreadFile>;

/// Reads one candidate; an extension-less file counts only when its first line is a shell shebang.
fn read_candidate(path: &Path, rel: String, kind: Option<FileKind>) -> ReadResult {
    let skip = |reason: String| UnreadFile::new(rel.clone(), reason);
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
            FileKind::Shell
        }
    };
    let bytes = crate::input::read_bytes(path, MAX_FILE_BYTES).map_err(|e| skip(reason(e)))?;
    // memchr's scan: a byte-at-a-time loop here was a fifth of the walk's time on the InferenceX snapshot.
    if memchr::memchr(0, &bytes[..bytes.len().min(8192)]).is_some() {
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
        let files = walk(root, &Excludes::default()).unwrap();
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

    #[cfg(unix)]
    #[test]
    fn never_leaves_the_root_and_never_names_the_target() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.sh"), "TOKEN=hunter2\nSIMULATE_ACC_LEN=2.5\n").unwrap();
        std::fs::create_dir(outside.path().join("usr")).unwrap();
        std::fs::write(outside.path().join("usr/launch.sh"), "SIMULATE_ACC_LEN=2.5\n").unwrap();
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        std::fs::create_dir(root.join("real")).unwrap();
        std::fs::write(root.join("real/launch.sh"), "echo inside\n").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.sh"), root.join("creds.sh")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("usr"), root.join("usr")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.sh"), root.join("picture.png")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.sh"), root.join(".ignore")).unwrap();
        // Links that stay inside are followed; one that climbs out and back in stays inside.
        std::os::unix::fs::symlink("real/launch.sh", root.join("alias.sh")).unwrap();
        let back_in = format!("../{}/real", root.file_name().unwrap().to_str().unwrap());
        std::os::unix::fs::symlink(back_in, root.join("again")).unwrap();
        let files = walk(root, &Excludes::default()).unwrap();
        let read: Vec<&str> = files.texts.iter().map(|f| f.rel.as_str()).collect();
        // A link to a file inside is read under its name; the directory a link leads back into is read once,
        // under its real name.
        assert_eq!(read, ["alias.sh", "real/launch.sh"], "{:?}", files.problems);
        assert!(files.texts.iter().all(|f| !f.text.contains("hunter2")));
        let problems: Vec<(&str, &str)> = files.problems.iter().map(|p| (p.path.as_str(), p.reason.as_str())).collect();
        assert_eq!(problems.len(), 3, "{problems:?}");
        for (path, reason) in &problems {
            assert!([".ignore", "creds.sh", "usr"].contains(path), "{problems:?}");
            assert!(reason.contains("outside the repository root"), "{reason}");
            assert!(!reason.contains(&*outside.path().to_string_lossy()), "the target is not named: {reason}");
        }
        let golden = tempfile::tempdir().unwrap();
        assert!(!inside(root, &root.join("creds.sh")));
        assert!(inside(root, &root.join("alias.sh")));
        assert!(!inside(root, golden.path()));
        assert_eq!(read_inside(root, "creds.sh", MAX_FILE_BYTES), None);
        assert_eq!(read_inside(root, "alias.sh", MAX_FILE_BYTES).as_deref(), Some("echo inside\n"));
    }

    #[test]
    fn ignore_files_and_excludes_drop_paths_and_version_control_is_not_entered() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        for dir in ["scratch", "old", ".git", "kept", "benchmarks"] {
            std::fs::create_dir(root.join(dir)).unwrap();
        }
        for file in ["scratch/launch.sh", "old/launch.sh", ".git/hook.sh", "kept/launch.sh", "run.bak.sh"] {
            std::fs::write(root.join(file), "SIMULATE_ACC_LEN=2\n").unwrap();
        }
        std::fs::write(root.join("benchmarks/run.sh"), "SIMULATE_ACC_LEN=2\n").unwrap();
        std::fs::write(root.join(".gitignore"), "scratch/\n").unwrap();
        std::fs::write(root.join("kept/.ignore"), "*.tmp.sh\n").unwrap();
        std::fs::write(root.join("kept/x.tmp.sh"), "SIMULATE_ACC_LEN=2\n").unwrap();
        let read = |globs: &[&str]| -> Vec<String> {
            let globs: Vec<String> = globs.iter().map(|g| g.to_string()).collect();
            walk(root, &Excludes::new(&globs).unwrap()).unwrap().texts.into_iter().map(|f| f.rel).collect()
        };
        assert_eq!(read(&[]), ["benchmarks/run.sh", "kept/launch.sh", "old/launch.sh", "run.bak.sh"]);
        assert_eq!(read(&["old", "*.bak.sh"]), ["benchmarks/run.sh", "kept/launch.sh"]);
        assert_eq!(read(&["benchmarks/**"]), ["kept/launch.sh", "old/launch.sh", "run.bak.sh"]);
        let excludes = Excludes::new(&["old".to_string()]).unwrap();
        assert!(excludes.drops("old/deep/launch.sh") && !excludes.drops("older/launch.sh"));
        let err = Excludes::new(&["[".to_string()]).unwrap_err().to_string();
        assert!(err.starts_with("exclude:"), "{err}");
        assert!(lies_in("configs/a.yaml", "configs") && !lies_in("configs2/a.yaml", "configs"));
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_named_as_a_script_is_reported_without_blocking() {
        let repo = tempfile::tempdir().unwrap();
        let fifo = repo.path().join("pipe.sh");
        if std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
            let files = walk(repo.path(), &Excludes::default()).unwrap();
            assert!(files.texts.is_empty());
            assert_eq!(files.problems.len(), 1);
            assert!(files.problems[0].path == "pipe.sh" && files.problems[0].hides_pins, "{:?}", files.problems);
        }
    }

    #[cfg(unix)]
    #[test]
    fn odd_names_are_shown_escaped_and_never_confused() {
        use std::os::unix::ffi::OsStrExt;
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        // The byte 0xff, a name that spells its escape, and a name carrying a line break and an annotation.
        let raw = OsStr::from_bytes(b"run\xff.sh");
        std::fs::write(root.join(raw), "echo raw\n").unwrap();
        std::fs::write(root.join("run\\xff.sh"), "echo spelled\n").unwrap();
        std::fs::write(root.join("evil\n::error file=x::owned.sh"), "echo evil\n").unwrap();
        let files = walk(root, &Excludes::default()).unwrap();
        let shown: Vec<(&str, &str)> = files.texts.iter().map(|f| (f.rel.as_str(), f.text.as_str())).collect();
        assert_eq!(
            shown,
            [
                ("evil\\n::error file=x::owned.sh", "echo evil\n"),
                ("run\\\\xff.sh", "echo spelled\n"),
                ("run\\xff.sh", "echo raw\n"),
            ]
        );
        for file in &files.texts {
            assert!(!file.rel.contains('\n'));
            let os = os_path(&file.rel).unwrap();
            assert_eq!(std::fs::read_to_string(root.join(os)).unwrap(), file.text, "{}", file.rel);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_deep_chain_is_cut_at_the_depth_limit() {
        let repo = tempfile::tempdir().unwrap();
        // Built level by level from an open directory (mkdirat/openat), as the chain's path outgrows PATH_MAX.
        use std::os::unix::ffi::OsStrExt;
        let root = std::ffi::CString::new(repo.path().as_os_str().as_bytes()).unwrap();
        // SAFETY: plain system calls on descriptors this test opens and closes; every result is checked.
        unsafe {
            let mut dir = libc::open(root.as_ptr(), libc::O_DIRECTORY | libc::O_RDONLY);
            for _ in 0..3000 {
                assert!(dir >= 0);
                assert_eq!(libc::mkdirat(dir, c"d".as_ptr(), 0o755), 0);
                let next = libc::openat(dir, c"d".as_ptr(), libc::O_DIRECTORY | libc::O_RDONLY);
                libc::close(dir);
                dir = next;
            }
            let script = libc::openat(dir, c"deep.sh".as_ptr(), libc::O_CREAT | libc::O_WRONLY, 0o644);
            assert!(script >= 0);
            let text = b"SIMULATE_ACC_LEN=2\n";
            assert_eq!(libc::write(script, text.as_ptr().cast(), text.len()), text.len() as isize);
            libc::close(script);
            libc::close(dir);
        }
        let files = walk(repo.path(), &Excludes::default()).unwrap();
        assert!(files.texts.is_empty());
        assert_eq!(files.problems.len(), 1, "{:?}", files.problems.iter().map(|p| &p.reason).collect::<Vec<_>>());
        let problem = &files.problems[0];
        assert!(problem.reason.contains("nested more than 256 directories"), "{}", problem.reason);
        assert_eq!(problem.path.matches('d').count(), MAX_DEPTH + 1);
        assert!(problem.hides_pins);
    }

    proptest::proptest! {
        #[test]
        fn shown_names_map_back_one_to_one(a in proptest::collection::vec(proptest::num::u8::ANY, 1..12),
                                           b in proptest::collection::vec(proptest::num::u8::ANY, 1..12)) {
            // Any bytes but the separator and NUL, which no file name holds.
            let clean = |v: Vec<u8>| -> Vec<u8> { v.into_iter().filter(|&x| x != b'/' && x != 0).collect() };
            let (a, b) = (clean(a), clean(b));
            proptest::prop_assume!(!a.is_empty() && !b.is_empty());
            let (path_a, path_b) = (PathBuf::from(os_string(a.clone()).unwrap()), PathBuf::from(os_string(b.clone()).unwrap()));
            let (shown_a, shown_b) = (display_path(&path_a), display_path(&path_b));
            let breaks = shown_a.chars().any(|c| c.is_control() || c == '\u{2028}' || c == '\u{2029}');
            proptest::prop_assert!(!breaks, "{}", shown_a);
            proptest::prop_assert_eq!(a == b, shown_a == shown_b);
            #[cfg(unix)]
            proptest::prop_assert_eq!(os_path(&shown_a), Some(path_a));
        }
    }
}
