//! Writing the user's files: every path alsim writes (exports, `--output`, plots, profiles, curves, the job
//! summary) goes through here, so that nothing the user has is replaced unasked, cut short or lost.
//!
//! What a path names decides how it is written ([`Output::new`] finds out before any work is done):
//! - a regular file, or a new name in an existing directory: a temporary file beside it, synced, then renamed
//!   over it with the old file's mode, so a kill at any moment leaves the old file or the new one. An
//!   existing file is replaced only where the caller says so (exports always, `--output` with `--force`).
//! - a symbolic link: followed, and its target written as above; the link stays. A dangling link is an
//!   error, not a new file somewhere else.
//! - a character device or a FIFO (`/dev/null`, a pipe): written into, never replaced. A FIFO with no
//!   reader is an error at once, not a wait.
//! - `-`, `/dev/stdout`, `/dev/stderr` and this process's `/dev/fd/N` or `/proc/self/fd/N` (also through
//!   links): the open descriptor, never the path, so a shell's redirection target is not replaced.
//! - anything else (a directory, a socket, a block device): an error.
//!
//! [`Outputs`] holds one run's outputs: it refuses two that are one file, and, before anything is written,
//! one that is a file the run read (the input reader remembers those), naming both. Messages name paths as
//! given; a front end prints them on one line.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Links followed before a path is refused as a loop (Linux's own limit).
const MAX_LINKS: usize = 40;

/// What a temporary file's name ends with, so that one a kill leaves behind is recognised as alsim's.
const TEMP_SUFFIX: &str = ".alsim-tmp";

/// One path the run writes, resolved to what it names.
#[derive(Debug)]
pub struct Output {
    /// The parameter that gave the path (`output`, `export_json`): errors name it.
    parameter: &'static str,
    /// The path as given.
    given: PathBuf,
    target: Target,
    /// A device or FIFO, opened when the output was resolved and held until written: a FIFO's reader is
    /// found then, and is not sent an end of file before the report.
    stream: Option<std::fs::File>,
}

/// What an output path names, links followed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// An open descriptor of this process: 1 for `-` and `/dev/stdout`, 2 for `/dev/stderr`.
    Descriptor(i32),
    /// A regular file, or a name in an existing directory that does not exist yet.
    File(PathBuf),
    /// A character device or a FIFO, written into.
    Stream(PathBuf),
}

/// What two outputs, or an output and an input, are compared by.
#[derive(Debug, PartialEq, Eq)]
enum Identity {
    Descriptor(i32),
    Node(u64, u64),
    New(PathBuf),
}

impl Output {
    /// Resolves `path`, given by `parameter`, as an output: a regular file that exists is replaced only
    /// when `replace` is set.
    ///
    /// # Errors
    /// [`Error::Parameter`] for `parameter` when the path is a directory, a socket, a block device, a
    /// dangling link or a loop of links, standard input, a FIFO with no reader, or a name whose directory does
    /// not exist; settled by `force` when it is a regular file that exists and `replace` is not set.
    pub fn new(parameter: &'static str, path: &Path, replace: bool) -> Result<Output> {
        let mut output =
            Output { parameter, given: path.to_path_buf(), target: resolve(parameter, path)?, stream: None };
        match &output.target {
            Target::File(real) if !replace && real.exists() => {
                Err(output.refusal("already exists").settled_by("force"))
            }
            Target::Descriptor(0) => Err(output.refusal("is standard input")),
            Target::Stream(real) => {
                // A FIFO without a reader is refused now, before any work, rather than found out at the end.
                output.stream = Some(open_stream(real).map_err(|e| output.refusal(&stream_reason(&e)))?);
                Ok(output)
            }
            _ => Ok(output),
        }
    }

    /// The path as given.
    pub fn given(&self) -> &Path {
        &self.given
    }

    /// Whether this output is a regular file (one that exists or a new name), not a descriptor or stream.
    pub fn is_regular(&self) -> bool {
        matches!(self.target, Target::File(_))
    }

    /// Whether this output is standard output (`-`, `/dev/stdout`, `/proc/self/fd/1`).
    pub fn is_stdout(&self) -> bool {
        self.target == Target::Descriptor(1)
    }

    /// Writes `bytes` as the whole content of the output.
    ///
    /// # Errors
    /// [`Error::Parameter`] naming the path and the operating system's reason when it cannot be written; a
    /// regular file is then as it was.
    pub fn write(&self, bytes: &[u8]) -> Result<()> {
        self.write_with(bytes, |_| Ok(()))
    }

    /// [`Output::write`], with `before_rename` run between the temporary file's write and its rename (a
    /// test's stand-in for a kill there).
    fn write_with(&self, bytes: &[u8], before_rename: impl FnOnce(&Path) -> std::io::Result<()>) -> Result<()> {
        let written = match &self.target {
            Target::Descriptor(fd) => write_descriptor(*fd, bytes),
            Target::File(real) => replace_file(real, bytes, before_rename),
            Target::Stream(_) => self.write_stream(bytes),
        };
        written.map_err(|e| self.refusal(&format!("cannot be written: {e}")))
    }

    /// Appends `bytes` to the output (a regular file is created if it does not exist), as GitHub defines its
    /// job summary file.
    ///
    /// # Errors
    /// As [`Output::write`].
    pub fn append(&self, bytes: &[u8]) -> Result<()> {
        let appended = match &self.target {
            Target::Descriptor(fd) => write_descriptor(*fd, bytes),
            Target::File(real) => std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(real)
                .and_then(|mut file| file.write_all(bytes)),
            Target::Stream(_) => self.write_stream(bytes),
        };
        appended.map_err(|e| self.refusal(&format!("cannot be written: {e}")))
    }

    fn write_stream(&self, bytes: &[u8]) -> std::io::Result<()> {
        let mut stream = self.stream.as_ref().ok_or_else(|| std::io::Error::other("not opened"))?;
        stream.write_all(bytes)?;
        stream.flush()
    }

    fn identity(&self) -> Result<Identity> {
        match &self.target {
            Target::Descriptor(fd) => Ok(Identity::Descriptor(*fd)),
            Target::File(real) | Target::Stream(real) => match std::fs::metadata(real) {
                Ok(meta) => Ok(node(&meta)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    let dir = directory(real).canonicalize().map_err(|e| Error::io(directory(real), e))?;
                    Ok(Identity::New(dir.join(real.file_name().unwrap_or_default())))
                }
                Err(e) => Err(self.refusal(&e.to_string())),
            },
        }
    }

    fn shown(&self) -> String {
        self.given.display().to_string()
    }

    fn refusal(&self, reason: &str) -> Error {
        Error::parameter(self.parameter, format!("{}: {reason}", self.shown()))
    }
}

#[cfg(unix)]
fn node(meta: &std::fs::Metadata) -> Identity {
    use std::os::unix::fs::MetadataExt;
    Identity::Node(meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn node(_: &std::fs::Metadata) -> Identity {
    Identity::Node(0, 0)
}

/// The outputs of one run, each checked against the others as it is added, and all of them against the
/// files the run read before any is written.
#[derive(Debug, Default)]
pub struct Outputs {
    list: Vec<Output>,
}

/// Where [`Outputs::add`] put an output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot(usize);

impl Outputs {
    /// No outputs yet.
    pub fn new() -> Outputs {
        Outputs::default()
    }

    /// Adds `output`, refusing it when it is the same file (or descriptor) as one added before.
    ///
    /// # Errors
    /// [`Error::Parameter`] naming both outputs.
    pub fn add(&mut self, output: Output) -> Result<Slot> {
        let identity = output.identity()?;
        for earlier in &self.list {
            if earlier.identity()? == identity {
                return Err(output.refusal(&format!(
                    "is the same file as {}, another output of this run: one run writes each file once",
                    earlier.shown()
                )));
            }
        }
        self.list.push(output);
        Ok(Slot(self.list.len() - 1))
    }

    /// Whether one of the outputs is standard output (so the command's own output goes elsewhere).
    pub fn take_stdout(&self) -> bool {
        self.list.iter().any(Output::is_stdout)
    }

    /// The output in `slot`.
    pub fn get(&self, slot: Slot) -> &Output {
        &self.list[slot.0]
    }

    /// Writes `bytes` as the whole of the output in `slot`, after checking that no output of the run is a
    /// file it read ([`Outputs::check_inputs`]).
    ///
    /// # Errors
    /// As [`Outputs::check_inputs`] and [`Output::write`].
    pub fn write(&self, slot: Slot, bytes: &[u8]) -> Result<()> {
        self.check_inputs()?;
        self.get(slot).write(bytes)
    }

    /// Refuses every output that is a file this run opened for reading (links followed). Every write
    /// through [`Outputs::write`] checks all outputs first, so a clash found at the first write writes
    /// nothing.
    ///
    /// # Errors
    /// [`Error::Parameter`] naming the output and the input.
    pub fn check_inputs(&self) -> Result<()> {
        #[cfg(unix)]
        for output in &self.list {
            if let Identity::Node(dev, ino) = output.identity()?
                && let Some(input) = crate::input::opened_as(dev, ino)
            {
                return Err(output.refusal(&format!(
                    "is {}, which this run read: an input is never overwritten (nothing was written)",
                    input.display()
                )));
            }
        }
        Ok(())
    }
}

/// Writes `bytes` to `path`, given by `parameter`, as a run's one output: [`Output::new`], then
/// [`Outputs::write`], so a file the run read is never replaced.
///
/// # Errors
/// As [`Output::new`] and [`Outputs::write`].
pub fn write_one(parameter: &'static str, path: &Path, replace: bool, bytes: &[u8]) -> Result<()> {
    let mut outputs = Outputs::new();
    let slot = outputs.add(Output::new(parameter, path, replace)?)?;
    outputs.write(slot, bytes)
}

/// What `path` names, links followed one at a time so that a link to a descriptor is seen as one.
fn resolve(parameter: &'static str, path: &Path) -> Result<Target> {
    let refuse = |why: String| Error::parameter(parameter, format!("{}: {why}", path.display()));
    if path.as_os_str() == "-" {
        return Ok(Target::Descriptor(1));
    }
    let mut current = path.to_path_buf();
    for hop in 0..MAX_LINKS {
        if let Some(fd) = descriptor(&current) {
            return Ok(Target::Descriptor(fd));
        }
        let meta = match std::fs::symlink_metadata(&current) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if hop > 0 {
                    return Err(refuse(format!("is a link to {}, which does not exist", current.display())));
                }
                if !directory(&current).is_dir() {
                    return Err(refuse("its directory does not exist".into()));
                }
                return Ok(Target::File(current));
            }
            Err(e) => return Err(refuse(e.to_string())),
            Ok(meta) => meta,
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            let to = std::fs::read_link(&current).map_err(|e| refuse(e.to_string()))?;
            current = directory(&current).join(to);
            continue;
        }
        if kind.is_file() {
            return Ok(Target::File(current));
        }
        if is_stream(&kind) {
            return Ok(Target::Stream(current));
        }
        let what = if kind.is_dir() { "a directory" } else { "neither a file, a device nor a FIFO" };
        return Err(refuse(format!("is {what}")));
    }
    Err(refuse(format!("more than {MAX_LINKS} links deep (a loop?)")))
}

#[cfg(unix)]
fn is_stream(kind: &std::fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    kind.is_char_device() || kind.is_fifo()
}

#[cfg(not(unix))]
fn is_stream(_: &std::fs::FileType) -> bool {
    false
}

/// The directory a path's last component lies in (`.` for a bare name).
fn directory(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// The descriptor `path` names, if it names one of this process's: `/dev/stdin|stdout|stderr`, or an entry
/// of this process's descriptor directory (`/dev/fd/N`, `/proc/self/fd/N`, `/proc/PID/fd/N`, however
/// reached).
fn descriptor(path: &Path) -> Option<i32> {
    match path.to_str()? {
        "/dev/stdin" => return Some(0),
        "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        _ => {}
    }
    let fd: i32 = path.file_name()?.to_str()?.parse().ok()?;
    let dir = directory(path).canonicalize().ok()?;
    let own = Path::new("/proc").join(std::process::id().to_string());
    let is_own = dir == own.join("fd")
        || (dir.ends_with("fd") && dir.parent()?.parent().is_some_and(|tasks| tasks == own.join("task")));
    is_own.then_some(fd)
}

/// Opens a device or FIFO for writing: first without blocking, so a FIFO with no reader fails at once
/// (`ENXIO`), then as an ordinary blocking writer, so a large report is not cut at the pipe's buffer.
fn open_stream(path: &Path) -> std::io::Result<std::fs::File> {
    let mut probe = std::fs::OpenOptions::new();
    probe.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        probe.custom_flags(libc::O_NONBLOCK);
    }
    let _reader_present = probe.open(path)?;
    std::fs::OpenOptions::new().write(true).open(path)
}

fn stream_reason(e: &std::io::Error) -> String {
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::ENXIO) {
        return "is a FIFO with no reader".into();
    }
    format!("cannot be opened for writing: {e}")
}

fn write_descriptor(fd: i32, bytes: &[u8]) -> std::io::Result<()> {
    match fd {
        1 => std::io::stdout().lock().write_all(bytes).and_then(|()| std::io::stdout().flush()),
        2 => std::io::stderr().lock().write_all(bytes),
        _ => duplicate(fd).and_then(|mut file| file.write_all(bytes)),
    }
}

/// An owned duplicate of this process's descriptor `fd` (3 and up, e.g. `--export-json /dev/fd/3 3>x`).
#[cfg(unix)]
fn duplicate(fd: i32) -> std::io::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    // SAFETY: fcntl with F_DUPFD_CLOEXEC reads no memory; on any descriptor, open or not, it returns a new
    // descriptor or -1.
    let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if copy < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `copy` was just made by fcntl and is owned by nothing else.
    Ok(unsafe { std::fs::File::from_raw_fd(copy) })
}

#[cfg(not(unix))]
fn duplicate(_: i32) -> std::io::Result<std::fs::File> {
    Err(std::io::Error::other("descriptors are written only on Unix"))
}

/// Writes `bytes` to a temporary file beside `path`, syncs it, gives it the old file's mode (a new file's:
/// 0666 less the umask, as a shell creates one) and renames it over `path`.
fn replace_file(
    path: &Path,
    bytes: &[u8],
    before_rename: impl FnOnce(&Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = directory(path);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(TEMP_SUFFIX);
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut temp = builder.tempfile_in(dir)?;
    temp.write_all(bytes)?;
    if let Ok(old) = std::fs::metadata(path) {
        temp.as_file().set_permissions(old.permissions())?;
    }
    temp.as_file().sync_all()?;
    before_rename(path)?;
    temp.persist(path).map_err(|e| e.error)?;
    sync_dir(dir);
    Ok(())
}

/// Syncs a directory, so that the renames in it survive a power loss. Best effort: the renames are done,
/// each file is whole whether or not this succeeds, and some systems cannot open a directory to sync it.
pub fn sync_dir(dir: &Path) {
    if let Ok(handle) = std::fs::File::open(dir) {
        let _ = handle.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_stopped_before_its_rename_leaves_the_old_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.yaml");
        std::fs::write(&path, "the earlier golden file\n").unwrap();
        let output = Output::new("output", &path, true).unwrap();
        let stopped = output.write_with(b"the new one\n", |_| Err(std::io::Error::other("killed here")));
        assert!(stopped.unwrap_err().to_string().contains("killed here"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "the earlier golden file\n");
        output.write(b"the new one\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "the new one\n");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, ["g.yaml"], "no temporary file is left");
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        std::fs::write(&path, "{}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        Output::new("export_json", &path, true).unwrap().write(b"[]").unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640);
    }

    #[cfg(unix)]
    #[test]
    fn descriptors_are_named_by_their_own_directory_however_reached() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("out");
        std::os::unix::fs::symlink("/proc/self/fd/2", &link).unwrap();
        let own = std::path::PathBuf::from(format!("/proc/{}/fd/2", std::process::id()));
        if own.parent().unwrap().is_dir() {
            assert_eq!(resolve("output", &link).unwrap(), Target::Descriptor(2));
            assert_eq!(descriptor(&own), Some(2));
        }
        assert_eq!(resolve("output", Path::new("-")).unwrap(), Target::Descriptor(1));
        assert_eq!(descriptor(&dir.path().join("1")), None, "a file named 1 is a file");
    }

    #[cfg(unix)]
    #[test]
    fn a_loop_of_links_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("b", dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        let err = Output::new("output", &dir.path().join("a"), true).unwrap_err().to_string();
        assert!(err.contains("links deep"), "{err}");
    }
}
