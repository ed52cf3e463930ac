//! VTK XML writers: PolyData (`.vtp`) for point clouds and polylines, and
//! ImageData (`.vti`) with cell data.
//!
//! Arrays are written inline as `format="binary"`: a little-endian `u64`
//! byte count followed by the raw little-endian values, base64-encoded
//! together as one block (`header_type="UInt64"`). Files are written
//! atomically.

use std::fmt::Write as _;
use std::io;
use std::ops::Range;
use std::path::Path;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use glam::DVec3;

use crate::atomic::write_atomic;

/// Values of one data array; one entry per point or cell.
#[derive(Clone, Copy, Debug)]
pub enum ArrayData<'a> {
    /// Scalars, written as `Float64`.
    F64(&'a [f64]),
    /// Vectors, written as `Float64` with 3 components.
    Vec3(&'a [DVec3]),
    /// Integers, written as `Int32`.
    I32(&'a [i32]),
    /// Unsigned integers, written as `UInt32`.
    U32(&'a [u32]),
}

impl ArrayData<'_> {
    /// Number of tuples (points or cells) in the array.
    pub fn len(&self) -> usize {
        match self {
            ArrayData::F64(v) => v.len(),
            ArrayData::Vec3(v) => v.len(),
            ArrayData::I32(v) => v.len(),
            ArrayData::U32(v) => v.len(),
        }
    }

    /// Whether the array has no tuples.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn vtk_type(&self) -> &'static str {
        match self {
            ArrayData::F64(_) | ArrayData::Vec3(_) => "Float64",
            ArrayData::I32(_) => "Int32",
            ArrayData::U32(_) => "UInt32",
        }
    }

    fn components(&self) -> usize {
        match self {
            ArrayData::Vec3(_) => 3,
            _ => 1,
        }
    }

    fn encode(&self) -> String {
        let mut block = Block::new();
        match self {
            ArrayData::F64(v) => v.iter().for_each(|x| block.push(x.to_le_bytes())),
            ArrayData::Vec3(v) => v.iter().for_each(|p| block.push_vec3(*p)),
            ArrayData::I32(v) => v.iter().for_each(|x| block.push(x.to_le_bytes())),
            ArrayData::U32(v) => v.iter().for_each(|x| block.push(x.to_le_bytes())),
        }
        block.finish()
    }
}

/// A named point or cell data array.
#[derive(Clone, Copy, Debug)]
pub struct DataArray<'a> {
    /// Array name shown in ParaView.
    pub name: &'a str,
    /// The values.
    pub data: ArrayData<'a>,
}

/// Writes a point cloud as PolyData with one vertex cell per point, so
/// ParaView renders the points directly. Each `point_data` array must have
/// one entry per point.
pub fn write_vtp_points(path: &Path, points: &[DVec3], point_data: &[DataArray]) -> io::Result<()> {
    check_lengths("point", point_data, points.len())?;
    let n = points.len();
    let mut connectivity = Block::new();
    let mut offsets = Block::new();
    for i in 0..n {
        connectivity.push((i as i64).to_le_bytes());
        offsets.push((i as i64 + 1).to_le_bytes());
    }
    let cells = Cells {
        kind: CellKind::Verts,
        count: n,
        connectivity,
        offsets,
    };
    write_atomic(
        path,
        poly_data_xml(points, cells, point_data, &[]).as_bytes(),
    )
}

/// Writes polylines as PolyData: each range of point indices is one
/// polyline cell. Ranges must be non-empty and lie inside `points`;
/// `point_data` needs one entry per point, `cell_data` one per line.
pub fn write_vtp_polylines(
    path: &Path,
    points: &[DVec3],
    lines: &[Range<usize>],
    point_data: &[DataArray],
    cell_data: &[DataArray],
) -> io::Result<()> {
    check_lengths("point", point_data, points.len())?;
    check_lengths("cell", cell_data, lines.len())?;
    let mut connectivity = Block::new();
    let mut offsets = Block::new();
    let mut end = 0i64;
    for (i, line) in lines.iter().enumerate() {
        if line.start >= line.end || line.end > points.len() {
            return Err(invalid_input(format!(
                "line {i} has point range {line:?}, expected a non-empty range within 0..{}",
                points.len()
            )));
        }
        for p in line.clone() {
            connectivity.push((p as i64).to_le_bytes());
        }
        end += line.len() as i64;
        offsets.push(end.to_le_bytes());
    }
    let cells = Cells {
        kind: CellKind::Lines,
        count: lines.len(),
        connectivity,
        offsets,
    };
    write_atomic(
        path,
        poly_data_xml(points, cells, point_data, cell_data).as_bytes(),
    )
}

/// Writes a uniform grid of `cells[0] x cells[1] x cells[2]` cells as
/// ImageData with cell data (x varies fastest, then y, then z).
pub fn write_vti(
    path: &Path,
    origin: DVec3,
    spacing: DVec3,
    cells: [usize; 3],
    cell_data: &[DataArray],
) -> io::Result<()> {
    write_vti_piece(path, origin, spacing, cells, [0; 3], cell_data)
}

/// [`write_vti`] of a piece of a larger image: its `cells` start `offset` cells from `origin` (the
/// whole image's), so that its extent is the piece's part of the whole extent (a `.pvti` piece).
pub fn write_vti_piece(
    path: &Path,
    origin: DVec3,
    spacing: DVec3,
    cells: [usize; 3],
    offset: [usize; 3],
    cell_data: &[DataArray],
) -> io::Result<()> {
    if !origin.is_finite() || !spacing.is_finite() {
        return Err(invalid_input(format!(
            "origin {origin} and spacing {spacing} must be finite"
        )));
    }
    let count = cells
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .ok_or_else(|| invalid_input(format!("grid {cells:?} has too many cells")))?;
    check_lengths("cell", cell_data, count)?;

    let extent = extent_text(offset, cells);
    let mut xml = String::new();
    xml.push_str(HEADER);
    xml.push_str("<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n");
    let _ = writeln!(
        xml,
        "  <ImageData WholeExtent=\"{extent}\" Origin=\"{:e} {:e} {:e}\" Spacing=\"{:e} {:e} {:e}\">",
        origin.x, origin.y, origin.z, spacing.x, spacing.y, spacing.z
    );
    let _ = writeln!(xml, "    <Piece Extent=\"{extent}\">");
    xml.push_str("      <PointData>\n      </PointData>\n");
    push_section(&mut xml, "CellData", cell_data);
    xml.push_str("    </Piece>\n  </ImageData>\n</VTKFile>\n");
    write_atomic(path, xml.as_bytes())
}

/// `"x0 x1 y0 y1 z0 z1"`: the point indices spanned by `cells` cells after `offset`.
fn extent_text(offset: [usize; 3], cells: [usize; 3]) -> String {
    let [a, b, c] = std::array::from_fn(|i| (offset[i], offset[i] + cells[i]));
    format!("{} {} {} {} {} {}", a.0, a.1, b.0, b.1, c.0, c.1)
}

/// One piece of a parallel image: the file (relative to the `.pvti`), its first cell and its cells.
#[derive(Clone, Debug, PartialEq)]
pub struct ImagePiece {
    pub source: String,
    pub offset: [usize; 3],
    pub cells: [usize; 3],
}

/// Writes a parallel ImageData file (`.pvti`) that ParaView opens as one image of `whole` cells made
/// of `pieces` (`.vti` files written by [`write_vti_piece`]); `cell_data` gives the arrays' names,
/// types and components (their values are in the pieces).
pub fn write_pvti(
    path: &Path,
    origin: DVec3,
    spacing: DVec3,
    whole: [usize; 3],
    pieces: &[ImagePiece],
    cell_data: &[DataArray],
) -> io::Result<()> {
    let mut xml = String::new();
    xml.push_str(HEADER);
    xml.push_str(
        "<VTKFile type=\"PImageData\" version=\"1.0\" byte_order=\"LittleEndian\" \
         header_type=\"UInt64\">\n",
    );
    let _ = writeln!(
        xml,
        "  <PImageData WholeExtent=\"{}\" GhostLevel=\"0\" Origin=\"{:e} {:e} {:e}\" \
         Spacing=\"{:e} {:e} {:e}\">",
        extent_text([0; 3], whole),
        origin.x,
        origin.y,
        origin.z,
        spacing.x,
        spacing.y,
        spacing.z
    );
    xml.push_str("    <PPointData>\n    </PPointData>\n    <PCellData>\n");
    for array in cell_data {
        let _ = writeln!(
            xml,
            "      <PDataArray type=\"{}\" Name=\"{}\" NumberOfComponents=\"{}\"/>",
            array.data.vtk_type(),
            xml_escape(array.name),
            array.data.components()
        );
    }
    xml.push_str("    </PCellData>\n");
    for piece in pieces {
        let _ = writeln!(
            xml,
            "    <Piece Extent=\"{}\" Source=\"{}\"/>",
            extent_text(piece.offset, piece.cells),
            xml_escape(&piece.source)
        );
    }
    xml.push_str("  </PImageData>\n</VTKFile>\n");
    write_atomic(path, xml.as_bytes())
}

/// Writes the PolyData file that makes one data set of the `.vtp` pieces named in `sources` (paths
/// relative to it), each written by one rank with the arrays `point_data` and `cell_data` describe.
pub fn write_pvtp(
    path: &Path,
    point_data: &[DataArray],
    cell_data: &[DataArray],
    sources: &[String],
) -> io::Result<()> {
    let mut xml = String::new();
    xml.push_str(HEADER);
    xml.push_str(
        "<VTKFile type=\"PPolyData\" version=\"1.0\" byte_order=\"LittleEndian\" \
         header_type=\"UInt64\">\n  <PPolyData GhostLevel=\"0\">\n",
    );
    for (section, arrays) in [("PPointData", point_data), ("PCellData", cell_data)] {
        let _ = writeln!(xml, "    <{section}>");
        for array in arrays {
            let _ = writeln!(
                xml,
                "      <PDataArray type=\"{}\" Name=\"{}\" NumberOfComponents=\"{}\"/>",
                array.data.vtk_type(),
                xml_escape(array.name),
                array.data.components()
            );
        }
        let _ = writeln!(xml, "    </{section}>");
    }
    xml.push_str(
        "    <PPoints>\n      <PDataArray type=\"Float64\" Name=\"Points\" \
         NumberOfComponents=\"3\"/>\n    </PPoints>\n",
    );
    for source in sources {
        let _ = writeln!(xml, "    <Piece Source=\"{}\"/>", xml_escape(source));
    }
    xml.push_str("  </PPolyData>\n</VTKFile>\n");
    write_atomic(path, xml.as_bytes())
}

const HEADER: &str = "<?xml version=\"1.0\"?>\n";

/// The PolyData cell section being written.
enum CellKind {
    Verts,
    Lines,
}

/// Connectivity and offsets of one PolyData cell section.
struct Cells {
    kind: CellKind,
    count: usize,
    connectivity: Block,
    offsets: Block,
}

fn poly_data_xml(
    points: &[DVec3],
    cells: Cells,
    point_data: &[DataArray],
    cell_data: &[DataArray],
) -> String {
    let (tag, verts, lines) = match cells.kind {
        CellKind::Verts => ("Verts", cells.count, 0),
        CellKind::Lines => ("Lines", 0, cells.count),
    };
    let mut xml = String::new();
    xml.push_str(HEADER);
    xml.push_str("<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n");
    xml.push_str("  <PolyData>\n");
    let _ = writeln!(
        xml,
        "    <Piece NumberOfPoints=\"{}\" NumberOfVerts=\"{verts}\" NumberOfLines=\"{lines}\" \
         NumberOfStrips=\"0\" NumberOfPolys=\"0\">",
        points.len()
    );
    push_section(&mut xml, "PointData", point_data);
    push_section(&mut xml, "CellData", cell_data);

    xml.push_str("      <Points>\n");
    let mut coords = Block::new();
    points.iter().for_each(|p| coords.push_vec3(*p));
    push_array(&mut xml, "Points", "Float64", 3, &coords.finish());
    xml.push_str("      </Points>\n");

    let _ = writeln!(xml, "      <{tag}>");
    push_array(
        &mut xml,
        "connectivity",
        "Int64",
        1,
        &cells.connectivity.finish(),
    );
    push_array(&mut xml, "offsets", "Int64", 1, &cells.offsets.finish());
    let _ = writeln!(xml, "      </{tag}>");

    xml.push_str("    </Piece>\n  </PolyData>\n</VTKFile>\n");
    xml
}

/// Writes `<PointData>`/`<CellData>` with its arrays.
fn push_section(xml: &mut String, tag: &str, arrays: &[DataArray]) {
    let _ = writeln!(xml, "      <{tag}>");
    for array in arrays {
        let data = &array.data;
        push_array(
            xml,
            array.name,
            data.vtk_type(),
            data.components(),
            &data.encode(),
        );
    }
    let _ = writeln!(xml, "      </{tag}>");
}

fn push_array(xml: &mut String, name: &str, vtk_type: &str, components: usize, base64: &str) {
    let _ = writeln!(
        xml,
        "        <DataArray type=\"{vtk_type}\" Name=\"{}\" NumberOfComponents=\"{components}\" \
         format=\"binary\">{base64}</DataArray>",
        xml_escape(name)
    );
}

/// Raw little-endian bytes of one array, preceded by room for the header.
struct Block(Vec<u8>);

impl Block {
    fn new() -> Self {
        Block(vec![0; 8])
    }

    fn push<const N: usize>(&mut self, bytes: [u8; N]) {
        self.0.extend_from_slice(&bytes);
    }

    fn push_vec3(&mut self, p: DVec3) {
        for c in p.to_array() {
            self.push(c.to_le_bytes());
        }
    }

    /// Fills in the `u64` byte-count header and base64-encodes the block.
    fn finish(mut self) -> String {
        let bytes = (self.0.len() - 8) as u64;
        self.0[..8].copy_from_slice(&bytes.to_le_bytes());
        STANDARD.encode(&self.0)
    }
}

fn check_lengths(kind: &str, arrays: &[DataArray], expected: usize) -> io::Result<()> {
    for array in arrays {
        if array.data.len() != expected {
            return Err(invalid_input(format!(
                "{kind} data array '{}' has {} entries, expected {expected}",
                array.name,
                array.data.len()
            )));
        }
    }
    Ok(())
}

fn invalid_input(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// Escapes text for use inside a double-quoted XML attribute.
pub(crate) fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}
