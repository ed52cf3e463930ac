//! What the scene tests share: values that stress the parser and the checks, the scenes one mutation
//! away from a valid one, a fuzz over them, and the check of a list of expected errors.

#![allow(dead_code)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// Values that stress the parser and the checks: signs, zero, extremes, non-finite numbers, wrong
/// types, wrong lengths, integers beyond i64.
pub const NASTY_VALUES: &[&str] = &[
    "-1",
    "0",
    "0.0",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "-inf",
    "1e-300",
    "\"x\"",
    "\"\"",
    "[]",
    "[1.0]",
    "[1, 2]",
    "[0, 0, 0]",
    "[1e308, 1e308, 1e308]",
    "[nan, 1, 1]",
    "true",
    "{}",
    "18446744073709551615",
    "[18446744073709551615, 18446744073709551615, 2]",
];

/// Every scene one mutation away from `base`: each line dropped, and the value of each `key = value`
/// line replaced by each of `values`.
pub fn mutants(base: &str, values: &[&str]) -> Vec<String> {
    let lines: Vec<&str> = base.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let mut without = lines.clone();
        without.remove(i);
        out.push(without.join("\n"));
        if let Some((key, _)) = line.split_once(" = ") {
            for value in values {
                let mut changed = lines.clone();
                let replaced = format!("{key} = {value}");
                changed[i] = &replaced;
                out.push(changed.join("\n"));
            }
        }
    }
    out
}

/// Reads and builds every scene of `scenes` with `build`, which names the scene `file`: none may
/// panic, and every error must start with the file's name. Returns (checked, accepted).
pub fn fuzz(
    scenes: &[String],
    file: &str,
    build: impl Fn(&str) -> Result<(), String>,
) -> (usize, usize) {
    let mut accepted = 0;
    for text in scenes {
        match catch_unwind(AssertUnwindSafe(|| build(text))) {
            Ok(Ok(())) => accepted += 1,
            Ok(Err(e)) => assert!(e.starts_with(file), "{e}\non:\n{text}"),
            Err(_) => panic!("panicked on:\n{text}"),
        }
    }
    (scenes.len(), accepted)
}

/// The cases (scene text, key, hint) whose error, from `error_of`, does not start with `file`, name
/// `key` (when not empty) or contain `hint`, each as a line saying what was expected.
pub fn wrong_messages(
    cases: Vec<(String, &str, &str)>,
    file: &str,
    error_of: impl Fn(&str) -> String,
) -> Vec<String> {
    cases
        .into_iter()
        .map(|(text, key, hint)| (error_of(&text), key, hint))
        .filter(|(message, key, hint)| {
            !message.starts_with(file)
                || !(key.is_empty() || message.contains(&format!("key `{key}`")))
                || !message.contains(hint)
        })
        .map(|(message, key, hint)| format!("expected key `{key}` and '{hint}' in: {message}"))
        .collect()
}

/// Every file under `dir` (relative name, bytes), sorted by name: two runs' outputs compared whole.
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
