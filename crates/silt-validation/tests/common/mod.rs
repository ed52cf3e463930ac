//! What the validation tests share: a case's quick version run as `silt validate --quick <case>` runs
//! it, from the case's own files (`validation/<case>/`), judged by the tolerances of its
//! `reference.toml` only.

#![allow(dead_code)]

use silt_validation::report::{CaseReport, CASES};

/// Runs the quick version of `case` into a temporary directory, prints its report and asserts that
/// every judged figure met its tolerance.
pub fn quick_case_passes(case: &str) -> CaseReport {
    let dir = tempfile::tempdir().unwrap();
    quick_case_passes_in(case, dir.path())
}

/// [`quick_case_passes`] into folder `dir`.
pub fn quick_case_passes_in(case: &str, dir: &std::path::Path) -> CaseReport {
    let runner = CASES
        .iter()
        .find(|c| c.name == case)
        .unwrap_or_else(|| panic!("no case {case}"));
    let report = (runner.run)(dir, true).unwrap_or_else(|e| panic!("{case}: {e}"));
    println!("{}", report.summary());
    assert!(report.passed, "{case} failed:\n{}", report.summary());
    report
}
