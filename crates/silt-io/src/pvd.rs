//! ParaView `.pvd` collections: a time series of data files, rewritten
//! atomically whenever an entry is added.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use crate::atomic::write_atomic;
use crate::vtk::xml_escape;

/// A `.pvd` file listing `(time, file)` entries; file paths are relative
/// to the directory of the `.pvd`. Entries of one time with different
/// parts (e.g. particles and fluid) are shown together by ParaView, as the
/// blocks of one multiblock data set.
#[derive(Clone, Debug)]
pub struct PvdSeries {
    path: PathBuf,
    entries: Vec<(f64, String)>,
    /// The part number of each entry.
    parts: Vec<u32>,
}

impl PvdSeries {
    /// An empty series; nothing is written until the first [`push`](Self::push).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            entries: Vec::new(),
            parts: Vec::new(),
        }
    }

    /// Reads the entries of an existing `.pvd` (for a restart).
    pub fn from_existing(path: impl Into<PathBuf>) -> io::Result<Self> {
        let path = path.into();
        let text = std::fs::read_to_string(&path)?;
        let parsed = parse_entries(&text).map_err(|msg| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {msg}", path.display()),
            )
        })?;
        let parts = parsed.iter().map(|e| e.1).collect();
        let entries = parsed.into_iter().map(|(t, _, f)| (t, f)).collect();
        Ok(Self {
            path,
            entries,
            parts,
        })
    }

    /// The `.pvd` file path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The `(time, relative file)` entries in insertion order.
    pub fn entries(&self) -> &[(f64, String)] {
        &self.entries
    }

    /// The part number of each entry, in insertion order.
    pub fn parts(&self) -> &[u32] {
        &self.parts
    }

    /// Appends an entry (part 0) and rewrites the `.pvd` atomically. On
    /// error the entry is not kept.
    pub fn push(&mut self, time: f64, relative_file: &str) -> io::Result<()> {
        self.push_parts(time, &[relative_file])
    }

    /// Appends the files of one time as parts 0, 1, ... and rewrites the
    /// `.pvd` atomically. On error none of them is kept.
    pub fn push_parts(&mut self, time: f64, relative_files: &[&str]) -> io::Result<()> {
        if !time.is_finite() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("pvd time must be finite, got {time}"),
            ));
        }
        let before = self.entries.len();
        for (part, file) in relative_files.iter().enumerate() {
            self.entries.push((time, (*file).to_owned()));
            self.parts.push(part as u32);
        }
        let result = self.write();
        if result.is_err() {
            self.entries.truncate(before);
            self.parts.truncate(before);
        }
        result
    }

    /// Drops entries with time greater than `time` (for a restart). Only the
    /// in-memory list changes; the file is rewritten by the next
    /// [`push`](Self::push) or [`write`](Self::write).
    pub fn truncate_after(&mut self, time: f64) {
        let keep = self.entries.iter().take_while(|(t, _)| *t <= time).count();
        self.entries.truncate(keep);
        self.parts.truncate(keep);
    }

    /// Rewrites the whole `.pvd` atomically from the current entries.
    pub fn write(&self) -> io::Result<()> {
        let mut xml = String::new();
        xml.push_str("<?xml version=\"1.0\"?>\n");
        xml.push_str("<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n");
        xml.push_str("  <Collection>\n");
        for ((time, file), part) in self.entries.iter().zip(&self.parts) {
            let _ = writeln!(
                xml,
                "    <DataSet timestep=\"{time:e}\" group=\"\" part=\"{part}\" file=\"{}\"/>",
                xml_escape(file)
            );
        }
        xml.push_str("  </Collection>\n</VTKFile>\n");
        write_atomic(&self.path, xml.as_bytes())
    }
}

/// Extracts `(timestep, part, file)` from every `<DataSet .../>` element
/// (part 0 when it has none).
fn parse_entries(text: &str) -> Result<Vec<(f64, u32, String)>, String> {
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
        let part = match attrs.iter().find(|(k, _)| k == "part") {
            Some((_, v)) => v
                .trim()
                .parse::<u32>()
                .map_err(|_| format!("bad part {v:?}"))?,
            None => 0,
        };
        entries.push((time, part, get("file")?.to_owned()));
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
