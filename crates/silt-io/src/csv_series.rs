//! Append-only CSV time series of `f64` rows.
//!
//! Each row is formatted completely and written with a single `write_all`,
//! so a crash leaves only whole rows (a torn last line is dropped on
//! restart). Values are written in Rust's shortest round-trip form and parse
//! back bit-exactly.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::atomic::write_atomic;

/// A CSV file with a header line and one row of `f64` values per push.
#[derive(Debug)]
pub struct CsvSeries {
    path: PathBuf,
    file: File,
    columns: usize,
}

impl CsvSeries {
    /// Creates (or replaces) the file and writes the header line.
    pub fn create(path: impl Into<PathBuf>, columns: &[&str]) -> io::Result<Self> {
        let path = path.into();
        let header = header_line(columns)?;
        write_atomic(&path, header.as_bytes())?;
        Self::open_append(path, columns.len())
    }

    /// Restarts a series: keeps the header and the complete rows whose first
    /// column is `<= keep_rows_with_first_column_le`, rewrites the file
    /// atomically, then appends to it. Creates the file if it is missing or
    /// empty; fails with `InvalidData` if its header differs from `columns`.
    pub fn open_append_truncated(
        path: impl Into<PathBuf>,
        columns: &[&str],
        keep_rows_with_first_column_le: f64,
    ) -> io::Result<Self> {
        let path = path.into();
        let header = header_line(columns)?;
        let old = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        };
        let mut text = header.clone();
        if !old.is_empty() {
            let mut lines = old.split_inclusive('\n');
            let old_header = lines.next().unwrap_or_default();
            if old_header.trim_end() != header.trim_end() {
                return Err(invalid_data(
                    &path,
                    format!("header {old_header:?} differs from {header:?}"),
                ));
            }
            for line in lines {
                // A line without a newline was cut off by a crash.
                if !line.ends_with('\n') {
                    break;
                }
                let first = line.split(',').next().unwrap_or_default().trim();
                let value: f64 = first
                    .parse()
                    .map_err(|_| invalid_data(&path, format!("bad first value in row {line:?}")))?;
                if value <= keep_rows_with_first_column_le {
                    text.push_str(line);
                }
            }
        }
        write_atomic(&path, text.as_bytes())?;
        Self::open_append(path, columns.len())
    }

    fn open_append(path: PathBuf, columns: usize) -> io::Result<Self> {
        let file = OpenOptions::new().append(true).open(&path)?;
        Ok(Self {
            path,
            file,
            columns,
        })
    }

    /// The CSV file path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one row; `values` must have one entry per column.
    pub fn push(&mut self, values: &[f64]) -> io::Result<()> {
        if values.len() != self.columns {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("row has {} values, expected {}", values.len(), self.columns),
            ));
        }
        let mut line = String::new();
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            line.push_str(&format_f64(*v));
        }
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.file.flush()
    }
}

/// Shortest round-trip text of `v`: plain for moderate magnitudes,
/// exponent form (`1e-300`) for very small or large ones.
pub fn format_f64(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || (1e-4..1e15).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// The header line, quoting names that contain `,` or `"`. Names with line
/// breaks are rejected.
fn header_line(columns: &[&str]) -> io::Result<String> {
    let invalid = |message: &str| io::Error::new(io::ErrorKind::InvalidInput, message.to_owned());
    if columns.is_empty() {
        return Err(invalid("a CSV series needs at least one column"));
    }
    if columns.iter().any(|name| name.contains(['\n', '\r'])) {
        return Err(invalid("CSV column names must not contain line breaks"));
    }
    let names: Vec<String> = columns
        .iter()
        .map(|name| {
            if name.contains([',', '"']) {
                format!("\"{}\"", name.replace('"', "\"\""))
            } else {
                name.to_string()
            }
        })
        .collect();
    Ok(names.join(",") + "\n")
}

fn invalid_data(path: &Path, message: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: {message}", path.display()),
    )
}
