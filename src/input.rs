//! Opening the user's files safely: only regular files, never more than a stated number of bytes.
//!
//! Every command reads its inputs through here, so a FIFO, a device or a directory given where a file is
//! expected is refused before anything is read from it (it is opened non-blocking, since opening a FIFO
//! would otherwise block until a writer comes; `/dev/zero` never ends), and no file costs more memory than
//! its limit. Whole-file reads ([`read_text`]) are for small
//! inputs (curves, profiles, recipes, allow-lists); large inputs (logs, metric series) are streamed from
//! [`open_regular`] by their readers, which bound their own line lengths.
//!
//! Every file opened here is remembered by device and inode, so that no output of the run
//! replaces a file it read ([`crate::output`] asks before writing anything).

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

/// Size limit for small text inputs read whole: golden curves, profiles, allow-lists, recipes, scripts.
pub const SMALL_FILE_LIMIT: u64 = 4 * 1024 * 1024;

/// Size limit for measurement tables (calibration CSVs, streamed by [`open_limited`]): a bound on time, since
/// their readers bound memory themselves.
pub const TABLE_FILE_LIMIT: u64 = 64 * 1024 * 1024;

/// Opens `path` for reading if it is a regular file (symbolic links followed).
///
/// # Errors
/// [`Error::Io`] when it does not exist or cannot be opened; [`Error::Unreadable`] when it is a directory,
/// FIFO, socket or device.
pub fn open_regular(path: &Path) -> Result<File> {
    open_sized(path, u64::MAX).map(|(file, _)| file)
}

/// Opens a regular file no larger than `limit` bytes; the file and its size.
fn open_sized(path: &Path, limit: u64) -> Result<(File, u64)> {
    let (file, meta) = open_with_metadata(path)?;
    refuse_irregular(path, &meta)?;
    if meta.len() > limit {
        return Err(too_large(path, limit));
    }
    Ok((file, meta.len()))
}

/// Opens `path` and reads its metadata from the open file: one `stat` per file (the pin check opens
/// about a thousand). On Unix the file is opened non-blocking, so a FIFO is opened without waiting for a
/// writer and then refused by its metadata; reads from a regular file are unaffected by the flag.
fn open_with_metadata(path: &Path) -> Result<(File, std::fs::Metadata)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    // Elsewhere there is no non-blocking open: a special file is refused before it is opened.
    #[cfg(not(unix))]
    refuse_irregular(path, &std::fs::metadata(path).map_err(|e| Error::io(path, e))?)?;
    let file = options.open(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    remember(path, &meta);
    Ok((file, meta))
}

/// The files opened for reading so far, by (device, inode), each with the path it was opened by.
#[cfg(unix)]
static OPENED: std::sync::LazyLock<std::sync::Mutex<std::collections::HashMap<(u64, u64), std::path::PathBuf>>> =
    std::sync::LazyLock::new(Default::default);

#[cfg(unix)]
fn remember(path: &Path, meta: &std::fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    // A poisoned lock only means another reader panicked: the map itself is whole.
    let mut opened = OPENED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    opened.entry((meta.dev(), meta.ino())).or_insert_with(|| path.to_path_buf());
}

#[cfg(not(unix))]
fn remember(_: &Path, _: &std::fs::Metadata) {}

/// The path by which this process opened the file with device `dev` and inode `ino` for reading, if it did.
#[cfg(unix)]
pub(crate) fn opened_as(dev: u64, ino: u64) -> Option<std::path::PathBuf> {
    OPENED.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&(dev, ino)).cloned()
}

fn refuse_irregular(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    if meta.is_file() {
        Ok(())
    } else {
        Err(Error::unreadable(path, format!("not a regular file ({})", describe(meta))))
    }
}

/// Opens `path` for buffered reading after the checks of [`open_regular`], refusing a file larger than
/// `limit` bytes; what its reader reads is capped at `limit` too, so a file that grows meanwhile ends there.
///
/// # Errors
/// As [`open_regular`]; [`Error::Unreadable`] when it is larger than `limit`.
pub fn open_limited(path: &Path, limit: u64) -> Result<std::io::BufReader<std::io::Take<File>>> {
    let (file, _) = open_sized(path, limit)?;
    Ok(std::io::BufReader::new(file.take(limit)))
}

/// Reads `path` whole as UTF-8 text, refusing anything that is not a regular file or is larger than `limit`
/// bytes. The size is checked before reading and enforced while reading, so a file that grows meanwhile
/// cannot exceed it either.
///
/// # Errors
/// As [`open_regular`]; [`Error::Unreadable`] when it is larger than `limit` or not UTF-8 (naming the line
/// of the first bad byte).
pub fn read_text(path: &Path, limit: u64) -> Result<String> {
    let bytes = read_bytes(path, limit)?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count();
        Error::unreadable(path, format!("line {line}: not UTF-8 text (byte {at})"))
    })
}

/// Reads `path` whole as bytes, with the checks of [`read_text`] but no decoding.
///
/// # Errors
/// As [`read_text`], without the UTF-8 check.
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let (file, len) = open_sized(path, limit)?;
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(path, limit));
    }
    Ok(bytes)
}

fn too_large(path: &Path, limit: u64) -> Error {
    let limit = if limit >= 1024 * 1024 { format!("{} MiB", limit / (1024 * 1024)) } else { format!("{limit}-byte") };
    Error::unreadable(path, format!("larger than the {limit} limit for this input"))
}

fn describe(meta: &std::fs::Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
    }
    "not a file"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_directories_devices_and_fifos_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_text(dir.path(), SMALL_FILE_LIMIT).unwrap_err().to_string();
        assert!(err.contains("a directory"), "{err}");
        #[cfg(unix)]
        {
            let err = read_text(Path::new("/dev/zero"), SMALL_FILE_LIMIT).unwrap_err().to_string();
            assert!(err.contains("a device"), "{err}");
            let fifo = dir.path().join("fifo");
            let status = std::process::Command::new("mkfifo").arg(&fifo).status();
            if status.is_ok_and(|s| s.success()) {
                let err = read_text(&fifo, SMALL_FILE_LIMIT).unwrap_err().to_string();
                assert!(err.contains("a FIFO"), "{err}");
            }
        }
    }

    #[test]
    fn bounds_size_and_names_the_line_of_bad_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("recipe.yaml");
        std::fs::write(&path, b"a: 1\nb: \xe9t\xe9\n").unwrap();
        let err = read_text(&path, SMALL_FILE_LIMIT).unwrap_err().to_string();
        assert!(err.contains("line 2: not UTF-8"), "{err}");
        std::fs::write(&path, vec![b'x'; 1025]).unwrap();
        let err = read_text(&path, 1024).unwrap_err().to_string();
        assert!(err.contains("larger than"), "{err}");
        assert_eq!(read_text(&path, 2048).unwrap().len(), 1025);
    }
}
