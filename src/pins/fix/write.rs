//! `pins fix --write`: a plan's edits made to the repository as one transaction — each file read again and
//! its edits found again ([`super::locate`]), written and synced to a temporary file beside it, then every
//! temporary file renamed over its file once all still read as the plan saw them.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::Metadata;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use super::{FixPlan, Replacement, apply, os_path, placed};
use crate::error::{Error, Result};
use crate::input::{SMALL_FILE_LIMIT, read_text};
use crate::output::sync_dir;

/// What names a temporary file of ours, after `.NAME.` and the random part: no candidate of the walk ends
/// so, and a leftover (from a crash) says what made it.
pub const TEMP_SUFFIX: &str = ".alsim-fix.tmp";

/// Identifies a file whatever name reaches it.
#[cfg(unix)]
type FileId = (u64, u64);

#[cfg(unix)]
fn file_id(_: &Path, meta: &Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

// Without inode numbers, the real path: hard links then count as two files, each written from its own
// verified read (so each is right, but they are no longer linked).
#[cfg(not(unix))]
type FileId = PathBuf;

#[cfg(not(unix))]
fn file_id(real: &Path, _: &Metadata) -> FileId {
    real.to_path_buf()
}

/// One file of a plan, with its new text synced to a temporary file beside it.
#[derive(Debug)]
struct Staged {
    /// The names the plan reaches it by, each with the index of its real path in `paths`.
    names: Vec<(String, usize)>,
    /// Its real paths: one, or one per hard link the check read.
    paths: Vec<PathBuf>,
    id: FileId,
    /// The text its new text was made from.
    old: String,
    temp: NamedTempFile,
    changes: usize,
    /// What of the old file could not be kept (its group), said as a warning.
    not_kept: Option<String>,
}

/// A plan's files written to temporary files, none replaced yet ([`prepare`]); dropped, it removes them.
#[derive(Debug)]
pub struct StagedFix {
    staged: Vec<Staged>,
}

/// A file [`StagedFix::commit`] replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The names the plan reached it by.
    pub names: Vec<String>,
    /// Literals changed in it.
    pub changes: usize,
    /// What of the old file could not be kept (its group, where the user is not in it), as `sed -i` warns.
    pub not_kept: Option<String>,
}

/// Reads every file `plan` changes in the repository at `repo` again, makes its edits in what is there now
/// and writes each new text to a synced temporary file beside the real file; no file is replaced.
///
/// # Errors
/// [`Error::Invalid`] naming the file when its real path is outside the repository, it is read-only or
/// hard-linked from files the check did not read, its owner cannot be kept, or an edit cannot be found again
/// ([`locate`](super::locate)); [`Error::Io`]/[`Error::Unreadable`] when it cannot be read or its temporary file written.
/// Temporary files made before the error are removed.
pub fn prepare(plan: &FixPlan, repo: &Path) -> Result<StagedFix> {
    let root = repo.canonicalize().map_err(|e| Error::io(repo, e))?;
    let mut by_name: BTreeMap<&str, Vec<&Replacement>> = BTreeMap::new();
    for change in &plan.changes {
        by_name.entry(change.file.as_str()).or_default().push(change);
    }
    let mut files: Vec<Reached> = Vec::new();
    for (name, changes) in by_name {
        let path = os_path(repo, name)?;
        let real = path.canonicalize().map_err(|e| Error::io(&path, e))?;
        if !real.starts_with(&root) {
            // The target is not named: it may be a secret, and this message can reach a public CI log.
            return Err(Error::invalid(name, "a symbolic link that leads outside the repository root; not written"));
        }
        let meta = std::fs::metadata(&real).map_err(|e| Error::io(&real, e))?;
        let id = file_id(&real, &meta);
        match files.iter_mut().find(|f| f.id == id) {
            Some(file) => {
                let index = file.paths.iter().position(|p| *p == real).unwrap_or_else(|| {
                    file.paths.push(real);
                    file.paths.len() - 1
                });
                // The name without a link in it is the one reported first.
                let at = if os_path(&root, name)? == file.paths[index] { 0 } else { file.names.len() };
                file.names.insert(at, (name.to_string(), index));
                file.changes.extend(changes);
            }
            None => files.push(Reached { id, meta, names: vec![(name.to_string(), 0)], paths: vec![real], changes }),
        }
    }
    let staged = files.into_iter().map(stage).collect::<Result<_>>()?;
    Ok(StagedFix { staged })
}

/// A file the plan changes, with every name that reaches it.
struct Reached<'a> {
    id: FileId,
    meta: Metadata,
    /// As [`Staged::names`].
    names: Vec<(String, usize)>,
    /// As [`Staged::paths`].
    paths: Vec<PathBuf>,
    /// The changes planned under all its names.
    changes: Vec<&'a Replacement>,
}

fn stage(file: Reached) -> Result<Staged> {
    let Reached { id, meta, names, paths, changes } = file;
    let meta = &meta;
    let name = names[0].0.as_str();
    let real = &paths[0];
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > paths.len() as u64 {
            return Err(Error::invalid(
                name,
                format!(
                    "it has {} hard links and the check read {}: replacing it would leave the others unfixed",
                    meta.nlink(),
                    paths.len()
                ),
            ));
        }
    }
    if meta.permissions().readonly() {
        return Err(Error::invalid(name, "it is read-only"));
    }
    // A rename needs no permission on the file it replaces: ask for write permission, so that a file its
    // user may not write is not replaced either.
    std::fs::OpenOptions::new().write(true).open(real).map_err(|e| Error::io(real, e))?;
    let old = read_text(real, SMALL_FILE_LIMIT)?;
    let placed = placed(&old, &changes)
        .map_err(|why| Error::invalid(name, format!("it changed since it was checked: {why}")))?;
    let new = apply(&old, &placed);
    let dir = real.parent().unwrap_or(Path::new("."));
    let mut prefix = OsString::from(".");
    prefix.push(real.file_name().unwrap_or_default());
    prefix.push(".");
    let mut temp =
        tempfile::Builder::new().prefix(&prefix).suffix(TEMP_SUFFIX).tempfile_in(dir).map_err(|e| Error::io(dir, e))?;
    let file = temp.as_file();
    #[cfg(unix)]
    let not_kept = {
        use std::os::unix::fs::MetadataExt;
        keep_owner(file, (meta.uid(), meta.gid()), |f, u, g| std::os::unix::fs::fchown(f, u, g)).map_err(|e| {
            Error::invalid(name, format!("its owner (uid {}, gid {}) cannot be kept: {e}", meta.uid(), meta.gid()))
        })?
    };
    #[cfg(not(unix))]
    let not_kept = None;
    // After the owner: changing it clears set-id bits.
    file.set_permissions(meta.permissions()).map_err(|e| Error::io(temp.path(), e))?;
    temp.write_all(new.as_bytes()).map_err(|e| Error::io(temp.path(), e))?;
    temp.as_file().sync_all().map_err(|e| Error::io(temp.path(), e))?;
    Ok(Staged { names, paths, id, changes: placed.len(), old, temp, not_kept })
}

/// Gives the new file the old one's owner `uid` and group `gid` through `chown`. A group the user is not in cannot be
/// kept: the file is then written with the user's group, and what changed is returned for a warning, as
/// `sed -i` does; an owner that cannot be kept refuses the file.
#[cfg(unix)]
pub(super) fn keep_owner(
    file: &std::fs::File,
    (uid, gid): (u32, u32),
    chown: impl Fn(&std::fs::File, Option<u32>, Option<u32>) -> std::io::Result<()>,
) -> std::io::Result<Option<String>> {
    use std::os::unix::fs::MetadataExt;
    let now = file.metadata()?;
    if (now.uid(), now.gid()) == (uid, gid) {
        return Ok(None);
    }
    match chown(file, Some(uid), Some(gid)) {
        Ok(()) => Ok(None),
        Err(_) if now.uid() == uid => Ok(Some(format!(
            "its group (gid {gid}) could not be kept: it is written with your group (gid {})",
            now.gid()
        ))),
        Err(e) => Err(e),
    }
}

impl StagedFix {
    /// The temporary files holding the new texts.
    pub fn temporary_files(&self) -> Vec<&Path> {
        self.staged.iter().map(|s| s.temp.path()).collect()
    }

    /// Checks that every file still reads as it did when prepared, then renames each temporary file over
    /// its file (and, for hard links, links every other name the check read to the new file).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the file, with nothing changed, when a file changed since it was prepared
    /// (another run, an editor); naming the file, the files written and the files not, when a rename fails.
    pub fn commit(self) -> Result<Vec<Written>> {
        self.commit_with(|_| Ok(()))
    }

    /// [`StagedFix::commit`], with `before_rename` run before each rename onto a path (a test's injected
    /// failure).
    pub(super) fn commit_with(
        self,
        mut before_rename: impl FnMut(&Path) -> std::io::Result<()>,
    ) -> Result<Vec<Written>> {
        for staged in &self.staged {
            staged.verify()?;
        }
        let mut dirs: Vec<PathBuf> = Vec::new();
        let mut written: Vec<String> = Vec::new();
        let mut done = Vec::new();
        let mut staged = self.staged.into_iter();
        while let Some(file) = staged.next() {
            let Staged { names, paths, temp, changes, not_kept, .. } = file;
            let mut replaced = 0;
            let result = replace(temp, &paths, &mut replaced, &mut before_rename);
            written.extend(names.iter().filter(|(_, i)| *i < replaced).map(|(n, _)| n.clone()));
            dirs.extend(paths[..replaced].iter().filter_map(|p| p.parent().map(Path::to_path_buf)));
            if let Err(e) = result {
                let not_written: Vec<String> = names
                    .iter()
                    .filter(|(_, i)| *i >= replaced)
                    .map(|(n, _)| n.clone())
                    .chain(staged.flat_map(|s| s.names.into_iter().map(|(n, _)| n)))
                    .collect();
                // The names of the file whose rename failed come first.
                return Err(Error::invalid(
                    not_written[0].clone(),
                    format!(
                        "replacing it failed ({e}); written: {}; not written: {}",
                        listed(&written),
                        listed(&not_written)
                    ),
                ));
            }
            done.push(Written { names: names.into_iter().map(|(n, _)| n).collect(), changes, not_kept });
        }
        dirs.sort();
        dirs.dedup();
        for dir in dirs {
            sync_dir(&dir);
        }
        Ok(done)
    }
}

/// Renames `temp` onto `paths[0]` and links the other paths to it, counting the paths replaced.
fn replace(
    temp: NamedTempFile,
    paths: &[PathBuf],
    replaced: &mut usize,
    before_rename: &mut impl FnMut(&Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let first = &paths[0];
    before_rename(first)?;
    temp.persist(first).map_err(|e| e.error)?;
    *replaced = 1;
    for path in &paths[1..] {
        let dir = path.parent().unwrap_or(Path::new("."));
        let link = tempfile::Builder::new()
            .prefix(".")
            .suffix(TEMP_SUFFIX)
            .make_in(dir, |at| std::fs::hard_link(first, at))?;
        before_rename(path)?;
        link.persist(path).map_err(|e| e.error)?;
        *replaced += 1;
    }
    Ok(())
}

impl Staged {
    /// Whether the file still reads as it did when its new text was made from it.
    fn verify(&self) -> Result<()> {
        let changed = || {
            Error::invalid(
                self.names[0].0.clone(),
                "it changed while the fix was being written (another run, or an editor); nothing was changed",
            )
        };
        for path in &self.paths {
            let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
            if file_id(path, &meta) != self.id {
                return Err(changed());
            }
        }
        if read_text(&self.paths[0], SMALL_FILE_LIMIT)? != self.old {
            return Err(changed());
        }
        Ok(())
    }
}

fn listed(names: &[String]) -> String {
    if names.is_empty() { "none".into() } else { names.join(", ") }
}
