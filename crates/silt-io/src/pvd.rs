//! ParaView `.pvd` collections: a time series of data files, rewritten
//! atomically whenever an entry is added.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use crate::atomic::write_atomic;
use crate::vtk::xml_escape;

/// A `.pvd` file listing `(time, file)` entries; file paths are relative
/// to the directory of the `.pvd`.
#[derive(Clone, Debug)]
pub struct PvdSeries {
    path: PathBuf,
    entries: Vec<(f64, String)>,
}

impl PvdSeries {
    /// An empty series; nothing is written until the first [`push`](Self::push).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            entries: Vec::new(),
        }
    }

    /// Reads the entries of an existing `.pvd` (for a restart).
    pub fn from_existing(path: impl Into<PathBuf>) -> io::Result<Self> {
        let path = path.into();
        let text = std::fs::read_to_string(&path)?;
        let entries = parse_entries(&text).map_err(|msg| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {msg}", path.display()),
            )
        })?;
        Ok(Self { path, entries })
    }

    /// The `.pvd` file path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The `(time, relative file)` entries in insertion order.
    pub fn entries(&self) -> &[(f64, String)] {
        &self.entries
    }

    /// Appends an entry and rewrites the `.pvd` atomically. On error the
    /// entry is not kept.
    pub fn push(&mut self, time: f64, relative_file: &str) -> io::Result<()> {
        if !time.is_finite() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("pvd time must be finite, got {time}"),
            ));
        }
        self.entries.push((time, relative_file.to_owned()));
        let result = self.write();
        if result.is_err() {
            self.entries.pop();
        }
        result
    }

    /// Drops entries with time greater than `time` (for a restart). Only the
    /// in-memory list changes; the file is rewritten by the next
    /// [`push`](Self::push) or [`write`](Self::write).
    pub fn truncate_after(&mut self, time: f64) {
        self.entries.retain(|(t, _)| *t <= time);
    }

    /// Rewrites the whole `.pvd` atomically from the current entries.
    pub fn write(&self) -> io::Result<()> {
        let mut xml = String::new();
        xml.push_str("<?xml version=\"1.0\"?>\n");
        xml.push_str("<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n");
        xml.push_str("  <Collection>\n");
        for (time, file) in &self.entries {
            let _ = writeln!(
                xml,
                "    <DataSet timestep=\"{time:e}\" group=\"\" part=\"0\" file=\"{}\"/>",
                xml_escape(file)
            );
        }
        xml.push_str("  </Collection>\n</VTKFile>\n");
        write_atomic(&self.path, xml.as_bytes())
    }
}

/// Extracts `(timestep, file)` from every `<DataSet .../>` element.
fn parse_entries(text: &str) -> Result<Vec<(f64, String)>, String> {
    let mut entries = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<DataSet") {
        let element = &rest[start + "<DataSet".len()..];
        let end = element.find('>').ok_or("unterminated <DataSet> element")?;
        let attrs = parse_attributes(&element[..end])?;
        let get = |key: &str| {
            attrs
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
                .ok_or_else(|| format!("<DataSet> without {key} attribute"))
        };
        let time_text = get("timestep")?;
        let time = time_text
            .trim()
            .parse::<f64>()
            .map_err(|_| format!("bad timestep {time_text:?}"))?;
        entries.push((time, get("file")?.to_owned()));
        rest = &element[end..];
    }
    Ok(entries)
}

/// Parses `key="value"` (or single-quoted) pairs, unescaping values.
fn parse_attributes(mut text: &str) -> Result<Vec<(String, String)>, String> {
    let mut attrs = Vec::new();
    loop {
        text = text.trim_start().trim_start_matches('/').trim_start();
        if text.is_empty() {
            return Ok(attrs);
        }
        let eq = text
            .find('=')
            .ok_or_else(|| format!("bad attribute in {text:?}"))?;
        let key = text[..eq].trim().to_owned();
        let value = text[eq + 1..].trim_start();
        let quote = value
            .chars()
            .next()
            .filter(|c| *c == '"' || *c == '\'')
            .ok_or_else(|| format!("unquoted value of attribute {key}"))?;
        let close = value[1..]
            .find(quote)
            .ok_or_else(|| format!("unterminated value of attribute {key}"))?;
        attrs.push((key, xml_unescape(&value[1..1 + close])));
        text = &value[close + 2..];
    }
}

fn xml_unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}
