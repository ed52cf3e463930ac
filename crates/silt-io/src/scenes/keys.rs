//! Scene errors and the checks every key of a scene goes through: each mistake is one [`SceneError`]
//! naming the file, the key, what was wrong and what is allowed.

use crate::csv_series::format_f64;
use silt_core::Vec3;
use std::path::{Path, PathBuf};

/// A scene that could not be read or is not physical.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneError {
    pub file: PathBuf,
    /// Dotted path of the offending key, e.g. `particles[0].diameter.std`.
    pub key: String,
    pub message: String,
}

impl std::fmt::Display for SceneError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(
                f,
                "{}: key `{}`: {}",
                self.file.display(),
                self.key,
                self.message
            )
        }
    }
}

impl std::error::Error for SceneError {}

/// Where a number must lie.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Range {
    /// Any finite number.
    Finite,
    /// > 0 and finite.
    Positive,
    /// >= 0 and finite.
    NonNegative,
    /// In (low, high).
    Open(f64, f64),
    /// In (low, high].
    OpenClosed(f64, f64),
    /// In [low, high).
    ClosedOpen(f64, f64),
    /// In [low, high].
    Closed(f64, f64),
    /// >= low and finite.
    AtLeast(f64),
}

impl Range {
    pub fn contains(self, v: f64) -> bool {
        v.is_finite()
            && match self {
                Range::Finite => true,
                Range::Positive => v > 0.0,
                Range::NonNegative => v >= 0.0,
                Range::Open(a, b) => v > a && v < b,
                Range::OpenClosed(a, b) => v > a && v <= b,
                Range::ClosedOpen(a, b) => v >= a && v < b,
                Range::Closed(a, b) => v >= a && v <= b,
                Range::AtLeast(a) => v >= a,
            }
    }

    /// What is allowed, for messages: `> 0`, `in (0, 1]`.
    pub fn describe(self) -> String {
        let n = num;
        match self {
            Range::Finite => "a finite number".into(),
            Range::Positive => "> 0".into(),
            Range::NonNegative => ">= 0".into(),
            Range::Open(a, b) => format!("in ({}, {})", n(a), n(b)),
            Range::OpenClosed(a, b) => format!("in ({}, {}]", n(a), n(b)),
            Range::ClosedOpen(a, b) => format!("in [{}, {})", n(a), n(b)),
            Range::Closed(a, b) => format!("in [{}, {}]", n(a), n(b)),
            Range::AtLeast(a) => format!(">= {}", n(a)),
        }
    }
}

/// The file of a scene being checked: every check names it in its error.
#[derive(Clone, Copy, Debug)]
pub struct Keys<'a> {
    pub file: &'a Path,
}

impl<'a> Keys<'a> {
    pub fn new(file: &'a Path) -> Self {
        Keys { file }
    }

    pub fn error(&self, key: impl Into<String>, message: impl Into<String>) -> SceneError {
        SceneError {
            file: self.file.to_path_buf(),
            key: key.into(),
            message: message.into(),
        }
    }

    /// `missing: {what}`.
    pub fn missing(&self, key: impl Into<String>, what: &str) -> SceneError {
        self.error(key, format!("missing: {what}"))
    }

    /// Checks a condition: `{value} is not allowed; {allowed}`.
    pub fn require(
        &self,
        ok: bool,
        key: &str,
        value: impl std::fmt::Display,
        allowed: &str,
    ) -> Result<(), SceneError> {
        if ok {
            Ok(())
        } else {
            Err(self.error(key, format!("{value} is not allowed; {allowed}")))
        }
    }

    /// A number within `range`.
    pub fn number(&self, key: &str, value: f64, range: Range) -> Result<f64, SceneError> {
        self.number_note(key, value, range, "")
    }

    /// A number within `range`; `note` says what the number is or what is usual (`the seed uses 5`).
    pub fn number_note(
        &self,
        key: &str,
        value: f64,
        range: Range,
        note: &str,
    ) -> Result<f64, SceneError> {
        let note = if note.is_empty() {
            String::new()
        } else {
            format!(" ({note})")
        };
        self.require(
            range.contains(value),
            key,
            format_f64(value),
            &format!("must be {}{note}", range.describe()),
        )?;
        Ok(value)
    }

    /// An optional number within `range`.
    pub fn optional(
        &self,
        key: &str,
        value: Option<f64>,
        range: Range,
    ) -> Result<Option<f64>, SceneError> {
        value.map(|v| self.number(key, v, range)).transpose()
    }

    /// Three finite numbers.
    pub fn vector(&self, key: &str, value: [f64; 3]) -> Result<Vec3, SceneError> {
        self.require(
            value.iter().all(|v| v.is_finite()),
            key,
            format!("{value:?}"),
            "components must be finite",
        )?;
        Ok(Vec3::from_array(value))
    }

    /// A finite vector of non-zero length, normalised.
    pub fn direction(&self, key: &str, value: [f64; 3]) -> Result<Vec3, SceneError> {
        let v = self.vector(key, value)?;
        self.require(
            v.length() > 0.0 && v.length().is_finite(),
            key,
            format!("{value:?}"),
            "must be a non-zero vector",
        )?;
        Ok(v.normalize())
    }

    /// One of the `allowed` names: `"x" is unknown; allowed: "a", "b"`.
    pub fn choice<T: Copy>(
        &self,
        key: &str,
        name: &str,
        allowed: &[(&str, T)],
    ) -> Result<T, SceneError> {
        allowed
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, value)| *value)
            .ok_or_else(|| {
                self.error(
                    key,
                    format!("\"{name}\" is unknown; allowed: {}", names(allowed)),
                )
            })
    }

    /// Refuses a key that is present but does not apply: `{why}`.
    pub fn forbid(&self, present: bool, key: &str, why: &str) -> Result<(), SceneError> {
        if present {
            Err(self.error(key, why.to_string()))
        } else {
            Ok(())
        }
    }
}

/// The names of a choice for messages: `"a", "b", "c"`.
pub fn names<T>(allowed: &[(&str, T)]) -> String {
    allowed
        .iter()
        .map(|(n, _)| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A TOML or type error as a [`SceneError`]: the key path, and the line and column when known.
pub fn parse_error(
    text: &str,
    file: &Path,
    e: serde_path_to_error::Error<toml::de::Error>,
) -> SceneError {
    let key = e.path().to_string();
    let inner = e.into_inner();
    let mut message = inner.message().trim().replace('\n', "; ");
    if let Some(span) = inner.span() {
        let before = &text[..span.start.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        message = format!("line {line}, column {column}: {message}");
    }
    SceneError {
        file: file.to_path_buf(),
        key: if key == "." { String::new() } else { key },
        message,
    }
}

/// A number with 5 significant digits in the shortest form (`0.015625`, `100`, `1.6e-5`), for reports.
pub fn num(x: f64) -> String {
    let rounded: f64 = format!("{x:.4e}").parse().unwrap_or(x);
    format_f64(rounded)
}

/// Three numbers as [`num`] does them.
pub fn nums(x: [f64; 3]) -> String {
    format!("[{}, {}, {}]", num(x[0]), num(x[1]), num(x[2]))
}

/// Bytes as mebibytes with one decimal.
pub fn mib(bytes: f64) -> String {
    format!("{:.1}", bytes / (1024.0 * 1024.0))
}
