//! Round-trip tests of the VTK, PVD, CSV and atomic writers.

use std::io::{ErrorKind, Write};
use std::path::Path;
use std::process::Command;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use glam::DVec3;
use silt_io::atomic::{write_atomic, AtomicWriter};
use silt_io::csv_series::CsvSeries;
use silt_io::pvd::PvdSeries;
use silt_io::vtk::{write_vti, write_vtp_points, write_vtp_polylines, ArrayData, DataArray};

/// Decodes the inline base64 block of the `DataArray` named `name`,
/// checks its `u64` byte-count header and returns the payload.
fn array_payload(xml: &str, name: &str) -> Vec<u8> {
    let key = format!("Name=\"{name}\"");
    let start = xml.find(&key).unwrap_or_else(|| panic!("no array {name}"));
    let body = &xml[start..];
    let open = body.find('>').unwrap() + 1;
    let close = body.find("</DataArray>").unwrap();
    let block = STANDARD.decode(body[open..close].trim()).unwrap();
    let header = u64::from_le_bytes(block[..8].try_into().unwrap());
    assert_eq!(
        header as usize,
        block.len() - 8,
        "byte count header of {name}"
    );
    block[8..].to_vec()
}

fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn i64s(bytes: &[u8]) -> Vec<i64> {
    bytes
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn flatten(points: &[DVec3]) -> Vec<f64> {
    points.iter().flat_map(|p| p.to_array()).collect()
}

/// Names of all files in `dir`.
fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Parses `path` with Python's XML parser when `python3` is available.
fn python_xml_ok(path: &Path) -> Option<bool> {
    let script = "import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])";
    let status = Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .status()
        .ok()?;
    Some(status.success())
}

#[test]
fn vtp_points_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("particles.vtp");
    let points = [
        DVec3::new(0.1, -2.0, 3.5e-12),
        DVec3::new(1e300, 0.0, -0.0),
        DVec3::new(-7.25, 4.0, 1.0 / 3.0),
    ];
    let velocity = [DVec3::X, DVec3::new(0.5, -0.25, 9.0), DVec3::NEG_Z];
    let radius = [0.001, 0.002, 0.003];
    let ids = [7i32, -1, 3];
    let data = [
        DataArray {
            name: "velocity",
            data: ArrayData::Vec3(&velocity),
        },
        DataArray {
            name: "radius",
            data: ArrayData::F64(&radius),
        },
        DataArray {
            name: "id",
            data: ArrayData::I32(&ids),
        },
    ];
    write_vtp_points(&path, &points, &data).unwrap();
    let xml = std::fs::read_to_string(&path).unwrap();

    assert!(xml.starts_with("<?xml"));
    assert!(xml.contains("type=\"PolyData\""));
    assert!(xml.contains("header_type=\"UInt64\""));
    assert!(xml.contains("byte_order=\"LittleEndian\""));
    assert!(xml.contains("NumberOfPoints=\"3\""));
    assert!(xml.contains("NumberOfVerts=\"3\""));
    assert!(xml.trim_end().ends_with("</VTKFile>"));
    assert_eq!(
        xml.matches("<DataArray").count(),
        xml.matches("</DataArray>").count()
    );

    let bits = |v: Vec<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        bits(f64s(&array_payload(&xml, "Points"))),
        bits(flatten(&points))
    );
    assert_eq!(f64s(&array_payload(&xml, "velocity")), flatten(&velocity));
    assert_eq!(f64s(&array_payload(&xml, "radius")), radius);
    let id_bytes = array_payload(&xml, "id");
    let decoded: Vec<i32> = id_bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(decoded, ids);
    assert_eq!(i64s(&array_payload(&xml, "connectivity")), [0, 1, 2]);
    assert_eq!(i64s(&array_payload(&xml, "offsets")), [1, 2, 3]);

    if let Some(ok) = python_xml_ok(&path) {
        assert!(ok, "python could not parse {}", path.display());
    }
}

#[test]
fn vtp_polylines_and_vti() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fibres.vtp");
    let points: Vec<DVec3> = (0..5).map(|i| DVec3::splat(i as f64)).collect();
    let tags = [10u32, 20];
    write_vtp_polylines(
        &path,
        &points,
        &[0..3, 3..5],
        &[],
        &[DataArray {
            name: "tag <&>",
            data: ArrayData::U32(&tags),
        }],
    )
    .unwrap();
    let xml = std::fs::read_to_string(&path).unwrap();
    assert!(xml.contains("NumberOfLines=\"2\""));
    assert!(xml.contains("Name=\"tag &lt;&amp;&gt;\""));
    assert_eq!(i64s(&array_payload(&xml, "connectivity")), [0, 1, 2, 3, 4]);
    assert_eq!(i64s(&array_payload(&xml, "offsets")), [3, 5]);
    let tag_bytes = array_payload(&xml, "tag &lt;&amp;&gt;");
    assert_eq!(tag_bytes.len(), 8);

    let vti = dir.path().join("grid.vti");
    let pressure: Vec<f64> = (0..24).map(|i| i as f64 * 0.5).collect();
    write_vti(
        &vti,
        DVec3::new(-1.0, 0.0, 0.5),
        DVec3::splat(0.25),
        [2, 3, 4],
        &[DataArray {
            name: "pressure",
            data: ArrayData::F64(&pressure),
        }],
    )
    .unwrap();
    let xml = std::fs::read_to_string(&vti).unwrap();
    assert!(xml.contains("WholeExtent=\"0 2 0 3 0 4\""));
    assert!(xml.contains("type=\"ImageData\""));
    assert_eq!(f64s(&array_payload(&xml, "pressure")), pressure);

    for file in [&path, &vti] {
        if let Some(ok) = python_xml_ok(file) {
            assert!(ok, "python could not parse {}", file.display());
        }
    }
}

#[test]
fn mismatched_lengths_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.vtp");
    let points = [DVec3::ZERO, DVec3::ONE];
    let short = [1.0];
    let bad = [DataArray {
        name: "short",
        data: ArrayData::F64(&short),
    }];
    let err = write_vtp_points(&path, &points, &bad).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);

    // A single-line slice, built from variables to keep clippy's range lint quiet.
    let (too_long, empty, whole) = (0..3, 1..1, 0..2);
    let err = write_vtp_polylines(&path, &points, &[too_long], &[], &[]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let err = write_vtp_polylines(&path, &points, &[empty], &[], &[]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    write_vtp_polylines(&path, &points, &[whole], &[], &[]).unwrap();
    let err = write_vtp_polylines(&path, &points, &[0..2, 1..2], &[], &bad).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);

    let err = write_vti(&path, DVec3::ZERO, DVec3::ONE, [2, 1, 1], &bad).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let err = write_vti(&path, DVec3::ZERO, DVec3::ONE, [usize::MAX, 2, 1], &bad).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);

    let csv = dir.path().join("bad.csv");
    let mut series = CsvSeries::create(&csv, &["t", "x"]).unwrap();
    let err = series.push(&[1.0]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let err = series.push(&[1.0, 2.0, 3.0]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "t,x\n");
}

#[test]
fn pvd_round_trip_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("particles.pvd");
    let times = [0.0, 0.1, 1e-300, 0.30000000000000004, 2.5e7];
    let mut series = PvdSeries::new(&path);
    for (i, t) in times.iter().enumerate() {
        series.push(*t, &format!("frames/p_{i:06}.vtp")).unwrap();
    }
    assert!(series.push(f64::NAN, "nan.vtp").is_err());
    assert_eq!(series.entries().len(), times.len());

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("type=\"Collection\""));
    if let Some(ok) = python_xml_ok(&path) {
        assert!(ok);
    }

    let mut restored = PvdSeries::from_existing(&path).unwrap();
    assert_eq!(restored.entries(), series.entries());
    for ((t, _), expected) in restored.entries().iter().zip(times) {
        assert_eq!(t.to_bits(), expected.to_bits());
    }

    restored.truncate_after(0.1);
    let kept: Vec<f64> = restored.entries().iter().map(|e| e.0).collect();
    assert_eq!(kept, [0.0, 0.1, 1e-300]);
    restored.push(0.2, "frames/a&b \"c\".vtp").unwrap();
    let again = PvdSeries::from_existing(&path).unwrap();
    assert_eq!(again.entries().len(), 4);
    assert_eq!(
        again.entries()[3],
        (0.2, "frames/a&b \"c\".vtp".to_string())
    );

    let missing = PvdSeries::from_existing(dir.path().join("missing.pvd")).unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);
    assert_eq!(file_names(dir.path()), ["particles.pvd"]);
}

#[test]
fn csv_round_trip_is_bit_exact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("energy.csv");
    let rows = [
        [0.0, 0.1, 1e-300],
        [0.5, -3.5e10, f64::MIN_POSITIVE],
        [1.0, 1.0 / 3.0, -0.0],
        [1.5, f64::MAX, 123456.789],
        [2.0, 5e-324, 1e15],
    ];
    let mut series = CsvSeries::create(&path, &["time", "kinetic, J", "q\"x"]).unwrap();
    for row in &rows {
        series.push(row).unwrap();
    }
    drop(series);

    let parse = |path: &Path| -> (String, Vec<Vec<f64>>) {
        let text = std::fs::read_to_string(path).unwrap();
        let mut lines = text.lines();
        let header = lines.next().unwrap().to_string();
        let values = lines
            .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
            .collect();
        (header, values)
    };
    let (header, values) = parse(&path);
    assert_eq!(header, "time,\"kinetic, J\",\"q\"\"x\"");
    assert_eq!(values.len(), rows.len());
    for (got, want) in values.iter().zip(&rows) {
        let got: Vec<u64> = got.iter().map(|v: &f64| v.to_bits()).collect();
        let want: Vec<u64> = want.iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, want);
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("1e-300"), "{text}");

    // Simulate a crash mid-row, then restart from t = 1.0.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"2.5,1.2").unwrap();
    drop(file);
    let columns = ["time", "kinetic, J", "q\"x"];
    let mut series = CsvSeries::open_append_truncated(&path, &columns, 1.0).unwrap();
    series.push(&[1.25, 7.0, 8.0]).unwrap();
    let (_, values) = parse(&path);
    let times: Vec<f64> = values.iter().map(|r| r[0]).collect();
    assert_eq!(times, [0.0, 0.5, 1.0, 1.25]);
    assert_eq!(values[1][1].to_bits(), (-3.5e10f64).to_bits());

    // A different header is refused; a missing file is created.
    let err = CsvSeries::open_append_truncated(&path, &["time", "other"], 1.0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidData);
    let fresh = dir.path().join("fresh.csv");
    let mut series = CsvSeries::open_append_truncated(&fresh, &["t"], 0.0).unwrap();
    series.push(&[0.0]).unwrap();
    assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "t\n0\n");
    assert_eq!(file_names(dir.path()), ["energy.csv", "fresh.csv"]);
}

#[test]
fn atomic_writes_leave_no_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.bin");
    write_atomic(&path, b"first").unwrap();
    write_atomic(&path, b"second").unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"second");

    let mut writer = AtomicWriter::new(&path).unwrap();
    writer.write_all(b"never committed").unwrap();
    assert_eq!(
        file_names(dir.path()).len(),
        2,
        "temp file exists while writing"
    );
    drop(writer);
    assert_eq!(std::fs::read(&path).unwrap(), b"second");

    let mut writer = AtomicWriter::new(&path).unwrap();
    for i in 0..1000 {
        writeln!(writer, "line {i}").unwrap();
    }
    writer.commit().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 1000);
    assert_eq!(file_names(dir.path()), ["state.bin"]);

    // A missing directory is an error, not a panic.
    let err = write_atomic(&dir.path().join("no/such/file"), b"x").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
}
