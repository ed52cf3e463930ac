use std::path::Path;

use silt_report::{write_png, write_png_grid, Axis, Plot, ReportError, Series, Style};

const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

fn sampled(f: impl Fn(f64) -> f64, n: u32, step: f64) -> Vec<(f64, f64)> {
    (0..n)
        .map(|i| {
            let x = f64::from(i) * step;
            (x, f(x))
        })
        .collect()
}

/// One series of every style on linear axes.
fn linear_plot() -> Plot {
    Plot::new(
        "Oscillator: position and velocity",
        Axis::linear("time t [s]"),
        Axis::linear("amplitude [m, m/s]"),
    )
    .with_series(Series::new(
        "x(t) = sin t",
        sampled(f64::sin, 200, 0.05),
        Style::Line,
    ))
    .with_series(Series::new(
        "v(t) = cos t",
        sampled(f64::cos, 200, 0.05),
        Style::Dashed,
    ))
    .with_series(Series::new(
        "samples",
        sampled(|t| 0.8 * (t * 0.7).sin(), 25, 0.4),
        Style::Markers,
    ))
    .with_series(Series::new(
        "damped",
        sampled(|t| (-0.2 * t).exp() * (2.0 * t).cos(), 40, 0.25),
        Style::LineMarkers,
    ))
}

/// Decay over several decades, including points a log axis must skip.
fn log_plot() -> Plot {
    let mut energy = sampled(|t| 1e3 * (-t).exp(), 100, 0.15);
    energy.extend([
        (15.0, 0.0),
        (15.5, -1.0),
        (16.0, f64::NAN),
        (f64::INFINITY, 1.0),
    ]);
    Plot::new(
        "Kinetic energy decay",
        Axis::linear("time [s]"),
        Axis::log("E_kin [J]"),
    )
    .with_series(Series::new("E_kin", energy, Style::Line))
    .with_series(Series::new(
        "reference e^-t",
        sampled(|t| 2e3 * (-t).exp(), 15, 1.0),
        Style::Dashed,
    ))
}

fn assert_png(path: &Path) {
    let bytes = std::fs::read(path).expect("PNG was written");
    assert!(
        bytes.starts_with(&PNG_SIGNATURE),
        "{} is not a PNG",
        path.display()
    );
    assert!(
        bytes.len() > 5_000,
        "{} is only {} bytes",
        path.display(),
        bytes.len()
    );
}

/// Width and height from the IHDR chunk.
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn linear_plot_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("linear.png");
    write_png(&path, &linear_plot()).unwrap();
    assert_png(&path);
    assert_eq!(png_size(&path), (1000, 700));
}

#[test]
fn log_plot_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.png");
    write_png(&path, &log_plot()).unwrap();
    assert_png(&path);
}

#[test]
fn log_log_plot_with_fixed_ranges_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("loglog.PNG");
    let plot = Plot::new(
        "Power law",
        Axis::log("size").with_range(1.0, 1e3),
        Axis::log("count").with_range(1e-2, 1e4),
    )
    // Partly outside the fixed ranges: clipped, not an error.
    .with_series(Series::new(
        "n ~ s^-2",
        sampled(|s| 1e4 / (s * s), 60, 40.0),
        Style::LineMarkers,
    ));
    write_png(&path, &plot).unwrap();
    assert_png(&path);
}

#[test]
fn grid_has_one_panel_per_plot() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grid.png");
    let mut third = linear_plot();
    third.title = "Constant".into();
    third.series = vec![Series::new(
        "flat",
        vec![(0.0, 2.0), (1.0, 2.0)],
        Style::Line,
    )];
    let plots = [linear_plot(), log_plot(), third, log_plot()];
    write_png_grid(&path, &plots, 2).unwrap();
    assert_png(&path);
    assert_eq!(png_size(&path), (2000, 1400));

    // Three plots in two columns still need two rows.
    write_png_grid(&path, &plots[..3], 2).unwrap();
    assert_eq!(png_size(&path), (2000, 1400));
}

#[test]
fn empty_data_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.png");

    let no_series = Plot::new("empty", Axis::linear("x"), Axis::linear("y"));
    let empty_series = no_series
        .clone()
        .with_series(Series::new("none", vec![], Style::Line));
    let nan_only = Plot::new("nan", Axis::linear("x"), Axis::linear("y")).with_series(Series::new(
        "nan",
        vec![(f64::NAN, 1.0), (2.0, f64::INFINITY)],
        Style::Line,
    ));
    let non_positive_on_log = Plot::new("log", Axis::linear("x"), Axis::log("y")).with_series(
        Series::new("zero", vec![(1.0, 0.0), (2.0, -3.0)], Style::Markers),
    );

    for plot in [no_series, empty_series, nan_only, non_positive_on_log] {
        match write_png(&path, &plot) {
            Err(ReportError::NoData { path: p, title }) => {
                assert_eq!(p, path);
                assert_eq!(title, plot.title);
            }
            other => panic!("{}: expected NoData, got {other:?}", plot.title),
        }
    }
    assert!(!path.exists(), "no file is created for invalid input");

    assert!(matches!(
        write_png_grid(&path, &[], 2),
        Err(ReportError::InvalidGrid { .. })
    ));
}

#[test]
fn invalid_input_and_io_problems_are_errors() {
    let dir = tempfile::tempdir().unwrap();

    let missing_dir = dir.path().join("no/such/dir/plot.png");
    let err = write_png(&missing_dir, &linear_plot()).unwrap_err();
    assert!(matches!(err, ReportError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("no/such/dir/plot.png"), "{err}");

    let not_png = dir.path().join("plot.jpg");
    assert!(matches!(
        write_png(&not_png, &linear_plot()),
        Err(ReportError::NotPng { .. })
    ));

    let path = dir.path().join("plot.png");
    let mut bad_range = log_plot();
    bad_range.y.range = Some((0.0, 10.0)); // log axis cannot start at 0
    assert!(matches!(
        write_png(&path, &bad_range),
        Err(ReportError::InvalidRange { axis: 'y', .. })
    ));
    assert!(matches!(
        write_png_grid(&path, &[linear_plot()], 0),
        Err(ReportError::InvalidGrid { .. })
    ));
}
