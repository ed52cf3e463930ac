//! What the command-line tests share: running `silt` in a directory, reading what it said and wrote,
//! and editing the example scenes.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `silt` with `args` in `dir`.
pub fn silt(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_silt"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("silt runs")
}

/// What a command wrote to stderr.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes `text` as `name` in `dir` and runs `silt` with `args` on it (the file's name after the
/// subcommand).
pub fn silt_on(dir: &Path, name: &str, text: &str, args: &[&str]) -> Output {
    std::fs::write(dir.join(name), text).unwrap();
    let mut all = vec![args[0], name];
    all.extend_from_slice(&args[1..]);
    silt(&all, dir)
}

/// Exit code 2 and a message naming the file, the key and containing `hint`.
pub fn refused(out: &Output, key: &str, hint: &str) {
    let message = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{message}");
    assert!(
        message.contains(&format!("key `{key}`")) && message.contains(hint),
        "expected key `{key}` and '{hint}': {message}"
    );
    assert!(!message.contains("panicked"), "{message}");
}

/// The text of `examples/<name>.toml`.
pub fn example(name: &str) -> String {
    std::fs::read_to_string(example_path(name)).unwrap()
}

pub fn example_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../examples/{name}.toml"))
}

/// `text` with the first `from` replaced by `to` (which must be there).
pub fn replaced(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from}");
    text.replacen(from, to, 1)
}

/// Every file under `dir` (relative name, bytes), sorted by name.
pub fn all_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.strip_prefix(dir).unwrap().display().to_string();
                files.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}
