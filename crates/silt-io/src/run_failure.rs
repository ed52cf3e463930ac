//! Why a run stopped early, shared by the fluid and fiber run loops: I/O, the solver's own failure, or
//! a checkpoint that cannot be resumed (bad input: exit code 2).

use std::path::{Path, PathBuf};

/// Why a run stopped early; `D` is what the solver reports when a step fails.
#[derive(Debug)]
pub enum RunFailure<D> {
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The step failed (diverged, singular constraints, ...).
    Diverged(D),
    /// The checkpoint is missing parts, of another scene or unreadable (bad input: exit code 2).
    Checkpoint(String),
}

impl<D: std::fmt::Display> std::fmt::Display for RunFailure<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunFailure::Io { path, source } => write!(f, "{}: {source}", path.display()),
            RunFailure::Diverged(e) => write!(f, "{e}"),
            RunFailure::Checkpoint(m) => write!(f, "{m}"),
        }
    }
}

impl<D: std::fmt::Debug + std::fmt::Display> std::error::Error for RunFailure<D> {}

/// Maps an I/O error on `path` to [`RunFailure::Io`].
pub(crate) fn io_error<D>(path: &Path) -> impl FnOnce(std::io::Error) -> RunFailure<D> + '_ {
    move |source| RunFailure::Io {
        path: path.to_path_buf(),
        source,
    }
}
