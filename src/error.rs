//! The crate's error type: every failure names the input (file, line, key or flag) that caused it.
//!
//! Library functions return [`Result`]; the binary adds context and maps errors to exit status 2
//! ("usage or input error"), so every variant here is something the user can fix in what they gave us.

use std::path::PathBuf;

/// Everything that can go wrong while reading inputs or computing with them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read or written.
    #[error("{}: {reason}", path.display())]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The operating system's reason: shown in the message, so not also a `source()` (a cause chain
        /// would say it twice).
        reason: std::io::Error,
    },
    /// A file exists but cannot be taken as input: not a regular file, over its size limit, or not UTF-8.
    #[error("{}: {reason}", path.display())]
    Unreadable {
        /// The file involved.
        path: PathBuf,
        /// Why it is refused, in the user's terms.
        reason: String,
    },
    /// Input text could not be parsed; `origin` is a file name (or `<embedded:…>`, `<stdin>`).
    #[error("{origin}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Parse {
        /// Where the text came from.
        origin: String,
        /// 1-based line, when known.
        line: Option<usize>,
        /// What is wrong, in the user's terms.
        message: String,
    },
    /// A value read from input is outside its valid range or inconsistent with another value.
    #[error("{field}: {message}")]
    Invalid {
        /// The key or field that holds the value (e.g. `minimax-m3.thinking_on.3`, a CSV column).
        field: String,
        /// Why the value is rejected, with the valid range.
        message: String,
    },
    /// An argument of a library function is outside its valid range or inconsistent with another one. The
    /// name is the parameter's, as the library calls it (`batch`, `step_ms`): a front end names its own
    /// option for it (the CLI: `--batch`, `--step-ms`).
    #[error("{name}: {message}")]
    Parameter {
        /// The parameter.
        name: &'static str,
        /// Why the value is rejected, with the valid range.
        message: String,
    },
    /// An error that a parameter of the call settles: the evidence does not state its draft length (the `k`
    /// parameter gives it), a file exists and is overwritten only when `force` says so. The parameter is
    /// named as the library calls it; a front end names its own option for it.
    #[error("{error} (the `{parameter}` parameter settles it)")]
    SettledBy {
        /// What went wrong, without a word on how to settle it.
        error: Box<Error>,
        /// The parameter that settles it.
        parameter: &'static str,
    },
    /// A lookup (model, drafter, mode, k, hardware…) matched nothing, or more than one thing.
    #[error("{message}")]
    Lookup {
        /// What was looked up, so a front end can name the option that decides it.
        kind: LookupKind,
        /// What matched nothing or too much, with the names there are to choose from (no option names).
        message: String,
    },
}

/// What a failed lookup was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupKind {
    /// A golden curve for a model.
    Model,
    /// Several golden files answer; the drafter, method or draft sampling decides between them.
    Files,
    /// A golden curve with the drafter, method or draft sampling asked for.
    Facet,
    /// A curve of a thinking mode: the file has none of the mode asked, or several and none was asked.
    Mode,
    /// A golden value at a draft length.
    Point,
    /// A hardware, model or drafter profile.
    Profile,
    /// An `explain` topic.
    Topic,
}

/// Shorthand used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An [`Error::Lookup`] of `kind` with `message`.
    pub fn lookup(kind: LookupKind, message: impl Into<String>) -> Self {
        Error::Lookup { kind, message: message.into() }
    }

    /// An [`Error::Invalid`] for `field` with `message`.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid { field: field.into(), message: message.into() }
    }

    /// An [`Error::Parameter`] for the parameter `name` with `message`.
    pub fn parameter(name: &'static str, message: impl Into<String>) -> Self {
        Error::Parameter { name, message: message.into() }
    }

    /// The same error as one of the parameter `name`, where a value check shared with file fields found it
    /// ([`Error::Invalid`] becomes [`Error::Parameter`]; other errors are kept).
    pub fn for_parameter(self, name: &'static str) -> Self {
        match self {
            Error::Invalid { message, .. } => Error::Parameter { name, message },
            other => other,
        }
    }

    /// The same error, marked as one the parameter `parameter` settles ([`Error::SettledBy`]).
    pub fn settled_by(self, parameter: &'static str) -> Self {
        Error::SettledBy { error: Box::new(self), parameter }
    }

    /// An [`Error::Parse`] at `origin`, optional `line`.
    pub fn parse(origin: impl Into<String>, line: Option<usize>, message: impl Into<String>) -> Self {
        Error::Parse { origin: origin.into(), line, message: message.into() }
    }

    /// An [`Error::Unreadable`] for `path`.
    pub fn unreadable(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Error::Unreadable { path: path.into(), reason: reason.into() }
    }

    /// An [`Error::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, reason: std::io::Error) -> Self {
        Error::Io { path: path.into(), reason }
    }
}
