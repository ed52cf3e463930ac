//! Atomic file writes: data goes to a temp file next to the target, is
//! fsynced, then renamed over the target, so readers see the old file or the
//! complete new one, never a partial write.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Makes temp names unique between threads of one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically (whole file or nothing).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut writer = AtomicWriter::new(path)?;
    writer.write_all(bytes)?;
    writer.commit()
}

/// A buffered writer into a temp file that replaces the target on
/// [`commit`](AtomicWriter::commit). Dropping it without committing removes
/// the temp file and leaves the target untouched.
#[derive(Debug)]
pub struct AtomicWriter {
    file: Option<BufWriter<File>>,
    temp: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl AtomicWriter {
    /// Creates the temp file `.NAME.tmp-PID-N` in the directory of `path`.
    pub fn new(path: impl AsRef<Path>) -> io::Result<Self> {
        let target = path.as_ref().to_path_buf();
        let name = target.file_name().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("not a file path: {}", target.display()),
            )
        })?;
        let dir = parent_dir(&target);
        loop {
            let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
            let mut temp_name = OsString::from(".");
            temp_name.push(name);
            temp_name.push(format!(".tmp-{}-{n}", std::process::id()));
            let temp = dir.join(temp_name);
            match OpenOptions::new().write(true).create_new(true).open(&temp) {
                Ok(file) => {
                    return Ok(Self {
                        file: Some(BufWriter::new(file)),
                        temp,
                        target,
                        committed: false,
                    })
                }
                // A leftover from an earlier run with the same PID: pick the next name.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The file this writer replaces on commit.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Flushes, fsyncs and renames the temp file over the target.
    pub fn commit(mut self) -> io::Result<()> {
        let buffered = self.file.take().ok_or_else(already_done)?;
        let file = buffered.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        fs::rename(&self.temp, &self.target)?;
        self.committed = true;
        sync_dir(parent_dir(&self.target));
        Ok(())
    }

    fn file(&mut self) -> io::Result<&mut BufWriter<File>> {
        self.file.as_mut().ok_or_else(already_done)
    }
}

impl Write for AtomicWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file()?.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file()?.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file()?.flush()
    }
}

impl Drop for AtomicWriter {
    fn drop(&mut self) {
        if !self.committed {
            drop(self.file.take());
            let _ = fs::remove_file(&self.temp);
        }
    }
}

fn already_done() -> io::Error {
    io::Error::other("atomic writer already committed")
}

/// The directory holding `path` (`.` for a bare file name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Best-effort fsync of a directory so a rename survives power loss.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}
