//! Scaled-down `validation/sheared-bed` (sources, criteria and set-up in its README and reference.toml):
//! the A10 scene on a small box at D/h = 6 runs the seed's protocol through the user's run path (dry
//! settling, mobilisation, the switch to q_f, the averages), holds the eq. 32 flow rate and measures a
//! particle flux. The comparison with the experiments is `silt validate sheared-bed` (hours).

mod common;

/// The wall time per simulated second in the report's row of run `label`.
fn cost(summary: &str, label: &str) -> f64 {
    let row = summary
        .lines()
        .find(|l| l.starts_with(&format!("| {label} |")) && l.matches('|').count() > 10)
        .unwrap_or_else(|| panic!("no row of {label} in the runs table:\n{summary}"));
    let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
    cells.last().unwrap().parse().unwrap()
}

#[test]
fn sheared_bed_quick() {
    let dir = tempfile::tempdir().unwrap();
    let first = common::quick_case_passes_in("sheared-bed", dir.path());

    // The validation runs for hours in legs: a second one into the same folder resumes the finished
    // run from its checkpoint, and its cost still counts the first leg's wall time (timing.csv).
    let second = common::quick_case_passes_in("sheared-bed", dir.path());
    let ledger = std::fs::read_to_string(dir.path().join("sheared-bed/a10/timing.csv")).unwrap();
    let legs: Vec<Vec<f64>> = ledger
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(legs.len(), 2, "{ledger}");
    assert!(legs[0][1] > legs[0][0] && legs[0][2] > 0.0, "{ledger}");
    assert_eq!(
        legs[1][0], legs[1][1],
        "the second leg resumed at the end: {ledger}"
    );
    let (before, after) = (
        cost(&first.summary(), "a10"),
        cost(&second.summary(), "a10"),
    );
    assert!(before > 0.0, "{}", first.summary());
    assert!(
        (after - before).abs() <= 1.0 + 0.01 * before,
        "cost {before} wall s per simulated s, then {after} after resuming"
    );
}

/// A run folder whose checkpoint cannot be resumed stops the validation with the reason and the folder,
/// instead of starting the run afresh over hours of output.
#[test]
fn a_checkpoint_that_cannot_be_resumed_stops_the_validation() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("sheared-bed/a10");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("checkpoint.bin"), b"not a checkpoint").unwrap();
    let error = match silt_validation::sheared_bed::report(dir.path(), true) {
        Ok(_) => panic!("the validation ran over a broken checkpoint"),
        Err(e) => e,
    };
    assert!(
        error.contains("cannot resume") && error.contains("sheared-bed/a10"),
        "{error}"
    );
    assert_eq!(
        std::fs::read(run.join("checkpoint.bin")).unwrap(),
        b"not a checkpoint",
        "the checkpoint was overwritten"
    );
}
