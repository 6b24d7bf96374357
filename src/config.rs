//! Where alsim runs in a benchmark repository, and the settings written for it.
//!
//! This module owns
//! - the root ([`locate`]): found upward from the path the user names, as git, ruff and cargo find theirs —
//!   the nearest directory holding `.git` or the golden folder (`golden_al_distribution/`); where none is found, the
//!   path named is the root as before. The path named (a folder or one file below the root) is the part
//!   of the root's check that is reported ([`Place::within`]);
//! - the configuration file ([`Settings::find`]): `alsim.toml`, or `[tool.alsim]` in `pyproject.toml` as
//!   ruff reads it, the nearest between the path named and the root (never above the root: nothing outside
//!   the repository is read), holding the golden folder, the allow-list, excludes and strictness. Each
//!   value carries where it came from ([`Origin`]); a flag overrides the file ([`Settings::with_flags`]).
//!
//! The files a configuration names are the repository's own: a path that leads outside the root is refused,
//! since the file may come from a pull request a stranger wrote.

use std::fmt;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::pins::allow::DEFAULT_FILE as ALLOW_FILE;
use crate::pins::walk;

/// The configuration file of its own.
pub const FILE: &str = "alsim.toml";

/// The configuration inside `pyproject.toml`, under `[tool.alsim]`.
pub const PYPROJECT: &str = "pyproject.toml";

/// The repository root and the part of it the user named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The repository root: the path named when it is the root, else the directory found above it.
    pub root: PathBuf,
    /// What marked the root (`.git`, `golden_al_distribution/`); `None` when nothing did and the path named
    /// (or, for a file, its folder) was taken as the root.
    pub marker: Option<&'static str>,
    /// The path named, relative to the root as findings show it; `None` when it is the root itself.
    pub within: Option<String>,
}

impl Place {
    /// Whether the root was found above the path named (and so is worth saying).
    pub fn found_upward(&self) -> bool {
        self.within.is_some() && self.marker.is_some()
    }

    /// Whether a finding's file (relative to the root) lies in the part named.
    pub fn holds(&self, file: &str) -> bool {
        self.within.as_deref().is_none_or(|within| walk::lies_in(file, within))
    }
}

/// What marks a repository root, in the order looked for, as said to the user.
const MARKERS: [&str; 2] = [".git", "golden_al_distribution/"];

/// Finds the repository root for `path` (a folder or a file), looking upward.
///
/// # Errors
/// [`Error::Io`] when `path` does not exist or the working directory cannot be read.
pub fn locate(path: &Path) -> Result<Place> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    let absolute = normal(&std::path::absolute(path).map_err(|e| Error::io(path, e))?);
    let start = if meta.is_dir() { absolute.as_path() } else { absolute.parent().unwrap_or(&absolute) };
    for dir in start.ancestors() {
        let Some(marker) = MARKERS.into_iter().find(|m| marks(dir, m)) else { continue };
        return Ok(if dir == absolute {
            Place { root: path.to_path_buf(), marker: Some(marker), within: None }
        } else {
            let within = absolute.strip_prefix(dir).map(walk::display_path).ok();
            Place { root: dir.to_path_buf(), marker: Some(marker), within }
        });
    }
    Ok(if meta.is_dir() {
        Place { root: path.to_path_buf(), marker: None, within: None }
    } else {
        let within = absolute.file_name().map(|n| walk::display_path(Path::new(n)));
        Place { root: start.to_path_buf(), marker: None, within }
    })
}

/// Whether `dir` holds the root marker `marker` (`.git` is a folder, or a file in a linked worktree).
fn marks(dir: &Path, marker: &str) -> bool {
    match marker.strip_suffix('/') {
        Some(folder) => dir.join(folder).is_dir(),
        None => dir.join(marker).symlink_metadata().is_ok(),
    }
}

/// `path` with `.` and `..` taken out by their names, as the user wrote them (a link is not resolved, so
/// the root keeps the name the user knows it by).
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Where a setting in force came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// alsim's default (what it is, in words).
    Default(&'static str),
    /// A configuration file, at a line.
    File {
        /// The file as found.
        path: PathBuf,
        /// The line of the key.
        line: usize,
    },
    /// A flag on the command line.
    Flag(&'static str),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default(what) => write!(f, "default ({what})"),
            Origin::File { path, line } => write!(f, "{}:{line}", path.display()),
            Origin::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

/// A setting's value in force and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting<T> {
    /// The value.
    pub value: T,
    /// Where it came from.
    pub origin: Origin,
}

impl<T> Setting<T> {
    fn default(value: T, what: &'static str) -> Setting<T> {
        Setting { value, origin: Origin::Default(what) }
    }
}

/// The settings in force for a check: each from a flag, the configuration file, or alsim's default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The configuration file read, if any.
    pub file: Option<PathBuf>,
    /// The golden folder; `None`: the repository's own `golden_al_distribution/`, else alsim's curves.
    pub golden: Setting<Option<PathBuf>>,
    /// The allow-list; `None`: none.
    pub allow: Setting<Option<PathBuf>>,
    /// Globs of paths the walk does not read (beside the ignore files).
    pub exclude: Setting<Vec<String>>,
    /// Whether warnings fail.
    pub strict: Setting<bool>,
}

/// The keys a configuration may hold (`alsim.toml`, or `[tool.alsim]`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    golden: Option<toml::Spanned<String>>,
    allow: Option<toml::Spanned<String>>,
    exclude: Option<toml::Spanned<Vec<String>>>,
    strict: Option<toml::Spanned<bool>>,
}

#[derive(Debug, Deserialize)]
struct Pyproject {
    tool: Option<Tool>,
}

#[derive(Debug, Deserialize)]
struct Tool {
    alsim: Option<Raw>,
}

impl Settings {
    /// The settings for `place`: the nearest configuration between the path named and the root, over
    /// alsim's defaults (the repository's own `.alsim-allow.yaml` when it has one inside the root).
    ///
    /// # Errors
    /// [`Error::Parse`] naming the file and line for a configuration that does not parse or holds an unknown
    /// key; [`Error::Invalid`] for a path in it that does not exist or leads outside the root.
    pub fn find(place: &Place) -> Result<Settings> {
        let mut settings = Settings {
            file: None,
            golden: Setting::default(None, "the repository's golden_al_distribution/, else alsim's curves"),
            allow: Setting::default(None, "none"),
            exclude: Setting::default(Vec::new(), "none; the ignore files still apply"),
            strict: Setting::default(false, "warnings do not fail"),
        };
        let found = place.root.join(ALLOW_FILE);
        if found.is_file() && walk::inside(&place.root, &found) {
            settings.allow = Setting { value: Some(found), origin: Origin::Default("found at the root") };
        }
        let Some((path, text, raw)) = nearest(place)? else { return Ok(settings) };
        let dir = path.parent().unwrap_or(Path::new("."));
        let at = |span: std::ops::Range<usize>| Origin::File { path: path.clone(), line: line_of(&text, span.start) };
        let inside = |key: &str, value: &toml::Spanned<String>| -> Result<Setting<Option<PathBuf>>> {
            let origin = at(value.span());
            // Written as the user would write the flag: `allow.yaml`, not `./allow.yaml`.
            let named: PathBuf = dir.join(value.get_ref()).components().filter(|c| *c != Component::CurDir).collect();
            if !walk::inside(&place.root, &named) {
                return Err(Error::invalid(
                    format!("{origin}: {key}"),
                    format!("{} is not a path inside the repository root {}", value.get_ref(), place.root.display()),
                ));
            }
            Ok(Setting { value: Some(named), origin })
        };
        if let Some(golden) = &raw.golden {
            settings.golden = inside("golden", golden)?;
        }
        if let Some(allow) = &raw.allow {
            settings.allow = inside("allow", allow)?;
        }
        if let Some(exclude) = raw.exclude {
            let origin = at(exclude.span());
            settings.exclude = Setting { value: exclude.into_inner(), origin };
        }
        if let Some(strict) = raw.strict {
            settings.strict = Setting { origin: at(strict.span()), value: strict.into_inner() };
        }
        settings.file = Some(path);
        Ok(settings)
    }

    /// These settings with the flags given put over them: a flag given replaces the file's value (for
    /// `--exclude`, the file's whole list); `strict` is `--strict` (`Some(true)`) or `--no-strict`
    /// (`Some(false)`), either over the file's `strict`.
    pub fn with_flags(
        mut self,
        golden: Option<PathBuf>,
        allow: Option<PathBuf>,
        exclude: &[String],
        strict: Option<bool>,
    ) -> Settings {
        if let Some(golden) = golden {
            self.golden = Setting { value: Some(golden), origin: Origin::Flag("--golden") };
        }
        if let Some(allow) = allow {
            self.allow = Setting { value: Some(allow), origin: Origin::Flag("--allow") };
        }
        if !exclude.is_empty() {
            self.exclude = Setting { value: exclude.to_vec(), origin: Origin::Flag("--exclude") };
        }
        if let Some(strict) = strict {
            let flag = if strict { "--strict" } else { "--no-strict" };
            self.strict = Setting { value: strict, origin: Origin::Flag(flag) };
        }
        self
    }
}

/// The nearest configuration from the path named up to the root: its path, text and keys.
fn nearest(place: &Place) -> Result<Option<(PathBuf, String, Raw)>> {
    let mut dir = place.root.clone();
    let mut dirs = vec![dir.clone()];
    // The folders between the root and the path named, top down; then searched nearest first.
    for part in place.within.iter().flat_map(|w| w.split('/')) {
        dir = dir.join(walk::os_path(part).unwrap_or_else(|| PathBuf::from(part)));
        if dir.is_dir() {
            dirs.push(dir.clone());
        }
    }
    for dir in dirs.iter().rev() {
        let own = dir.join(FILE);
        if own.is_file() {
            let text = crate::input::read_text(&own, crate::input::SMALL_FILE_LIMIT)?;
            let raw = parse::<Raw>(&text, &own)?;
            return Ok(Some((own, text, raw)));
        }
        let pyproject = dir.join(PYPROJECT);
        if pyproject.is_file() {
            let text = crate::input::read_text(&pyproject, crate::input::SMALL_FILE_LIMIT)?;
            if let Some(raw) = parse::<Pyproject>(&text, &pyproject)?.tool.and_then(|t| t.alsim) {
                return Ok(Some((pyproject, text, raw)));
            }
        }
    }
    Ok(None)
}

fn parse<T: serde::de::DeserializeOwned>(text: &str, path: &Path) -> Result<T> {
    toml::from_str(text).map_err(|e| {
        let line = e.span().map(|span| line_of(text, span.start));
        Error::parse(path.display().to_string(), line, e.message().to_string())
    })
}

/// The 1-based line holding byte `at` of `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_found_upward_and_the_path_named_is_kept() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        std::fs::create_dir_all(root.join("golden_al_distribution")).unwrap();
        std::fs::create_dir_all(root.join("configs/deep")).unwrap();
        std::fs::write(root.join("configs/master.yaml"), "a: 1\n").unwrap();
        let at_root = locate(root).unwrap();
        assert_eq!((at_root.root.as_path(), at_root.within.as_deref()), (root, None));
        let file = locate(&root.join("configs/./deep/../master.yaml")).unwrap();
        assert_eq!(file.root, normal(&std::path::absolute(root).unwrap()));
        assert_eq!(
            (file.within.as_deref(), file.marker),
            (Some("configs/master.yaml"), Some("golden_al_distribution/"))
        );
        assert!(file.holds("configs/master.yaml") && !file.holds("configs/master.yaml.bak"));
        let folder = locate(&root.join("configs/deep")).unwrap();
        assert!(folder.holds("configs/deep/x.sh") && !folder.holds("configs/deeper/x.sh") && folder.found_upward());
        assert!(locate(&root.join("nowhere")).is_err());
    }

    #[test]
    fn a_configuration_is_read_with_its_lines_and_refused_outside_the_root() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("curves")).unwrap();
        std::fs::write(root.join(FILE), "golden = \"curves\"\nexclude = [\"scratch/**\"]\n\nstrict = true\n").unwrap();
        let place = locate(root).unwrap();
        let settings = Settings::find(&place).unwrap();
        assert_eq!(settings.golden.value, Some(root.join("curves")));
        assert_eq!(settings.exclude.value, ["scratch/**"]);
        assert_eq!(settings.strict.origin, Origin::File { path: root.join(FILE), line: 4 });
        let flagged = settings.with_flags(None, None, &["old/*".to_string()], Some(false));
        assert_eq!(
            (flagged.exclude.value.as_slice(), &flagged.exclude.origin),
            (["old/*".to_string()].as_slice(), &Origin::Flag("--exclude"))
        );
        assert_eq!((flagged.strict.value, &flagged.strict.origin), (false, &Origin::Flag("--no-strict")));

        std::fs::write(root.join(FILE), "golden = \"../..\"\n").unwrap();
        let err = Settings::find(&place).unwrap_err().to_string();
        assert!(err.contains("alsim.toml:1: golden") && err.contains("not a path inside"), "{err}");
        std::fs::write(root.join(FILE), "gold = \"curves\"\n").unwrap();
        let err = Settings::find(&place).unwrap_err().to_string();
        assert!(err.contains("alsim.toml:1") && err.contains("unknown field"), "{err}");
    }

    #[test]
    fn pyproject_counts_only_with_a_tool_alsim_table() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join(PYPROJECT), "[project]\nname = \"x\"\n\n[tool.alsim]\nstrict = true\n").unwrap();
        std::fs::write(root.join("sub").join(PYPROJECT), "[project]\nname = \"y\"\n").unwrap();
        let settings = Settings::find(&locate(&root.join("sub")).unwrap()).unwrap();
        assert!(settings.strict.value);
        assert_eq!(settings.file, Some(root.join(PYPROJECT)));
    }
}
