//! Small plotting and table helpers for Silt's validation reports.
//!
//! Plots are rendered to PNG with [plotters] using a bundled DejaVu Sans font,
//! so no system font libraries (fontconfig, …) are needed.
//!
//! ```no_run
//! use silt_report::{write_png, Axis, Plot, Series, Style};
//!
//! let points: Vec<(f64, f64)> = (0..50).map(|i| (f64::from(i), f64::from(i * i))).collect();
//! let plot = Plot::new("Settling", Axis::linear("time [s]"), Axis::log("energy [J]"))
//!     .with_series(Series::new("kinetic", points, Style::Line));
//! write_png(std::path::Path::new("settling.png"), &plot).unwrap();
//! ```
//!
//! Axis handling in short: every coordinate is first mapped to *view space*
//! (identity for [`Scale::Linear`], `log10` for [`Scale::Log`]); ranges,
//! ticks, clipping and drawing all happen in view space, and tick labels map
//! back to data values. Points that cannot be shown (non-finite, or `<= 0` on
//! a log axis) are skipped and break the line they belong to.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

/// Width and height of one plot panel in pixels.
pub const PANEL_SIZE: (u32, u32) = (1000, 700);

/// Fraction of the data span added on each side of automatic axis ranges.
const AUTO_MARGIN: f64 = 0.05;

/// Font family name under which the bundled font is registered.
const FONT_FAMILY: &str = "sans-serif";
static FONT_BYTES: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
static FONT_INIT: Once = Once::new();
static FONT_OK: AtomicBool = AtomicBool::new(false);

const TITLE_FONT_SIZE: u32 = 28;
const AXIS_LABEL_FONT_SIZE: u32 = 20;
const TICK_FONT_SIZE: u32 = 16;
const LEGEND_FONT_SIZE: u32 = 18;
const LINE_WIDTH: u32 = 2;
const MARKER_RADIUS: u32 = 4;
const DASH_LENGTH: u32 = 10;
const DASH_GAP: u32 = 6;

/// Series colours (the "Tableau 10" palette); repeats after ten series.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Solid line through the points.
    Line,
    /// Dashed line through the points.
    Dashed,
    /// A filled circle at every point, no line.
    Markers,
    /// Solid line with a filled circle at every point.
    LineMarkers,
}

/// One labelled set of `(x, y)` points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text; series with an empty label get no legend entry.
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub style: Style,
}

impl Series {
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>, style: Style) -> Self {
        Self {
            label: label.into(),
            points,
            style,
        }
    }
}

/// Axis scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Base-10 logarithmic; values `<= 0` are not shown.
    Log,
}

/// One axis of a plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub label: String,
    pub scale: Scale,
    /// Fixed `(min, max)` range in data units; `None` fits the data with a 5 % margin.
    pub range: Option<(f64, f64)>,
}

impl Axis {
    /// A linear axis with an automatic range.
    pub fn linear(label: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            scale: Scale::Linear,
            range: None,
        }
    }

    /// A logarithmic axis with an automatic range.
    pub fn log(label: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            scale: Scale::Log,
            range: None,
        }
    }

    /// Fixes the range to `min..max` (data units).
    pub fn with_range(mut self, min: f64, max: f64) -> Self {
        self.range = Some((min, max));
        self
    }
}

/// One chart: a title, two axes and any number of series.
#[derive(Debug, Clone, PartialEq)]
pub struct Plot {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
}

impl Plot {
    /// A plot without series; add them with [`Plot::with_series`] or by pushing to `series`.
    pub fn new(title: impl Into<String>, x: Axis, y: Axis) -> Self {
        Self {
            title: title.into(),
            x,
            y,
            series: Vec::new(),
        }
    }

    pub fn with_series(mut self, series: Series) -> Self {
        self.series.push(series);
        self
    }
}

/// Errors from [`write_png`] and [`write_png_grid`]; all name the output file.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{}: plot {title:?} has no drawable points (empty, non-finite, or <= 0 on a log axis)", path.display())]
    NoData { path: PathBuf, title: String },

    #[error("{}: plot {title:?} has an invalid {axis} range {min}..{max}", path.display())]
    InvalidRange {
        path: PathBuf,
        title: String,
        axis: char,
        min: f64,
        max: f64,
    },

    #[error("{}: {reason}", path.display())]
    InvalidGrid { path: PathBuf, reason: &'static str },

    #[error("{}: output file name must end in .png", path.display())]
    NotPng { path: PathBuf },

    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{}: rendering failed: {message}", path.display())]
    Render { path: PathBuf, message: String },
}

/// Renders `plot` as a 1000x700 PNG at `path` (which must end in `.png`).
pub fn write_png(path: &Path, plot: &Plot) -> Result<(), ReportError> {
    write_png_grid(path, std::slice::from_ref(plot), 1)
}

/// Renders `plots` as panels of 1000x700 pixels each, filled row by row into
/// `columns` columns, into one PNG at `path` (which must end in `.png`).
pub fn write_png_grid(path: &Path, plots: &[Plot], columns: usize) -> Result<(), ReportError> {
    if plots.is_empty() {
        return Err(invalid_grid(path, "no plots to draw"));
    }
    if columns == 0 {
        return Err(invalid_grid(path, "the grid needs at least one column"));
    }
    let is_png = path
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("png"));
    if !is_png {
        // The image encoder picks the format from the extension.
        return Err(ReportError::NotPng { path: path.into() });
    }

    // Validate everything before touching the file system.
    let panels = plots
        .iter()
        .map(|plot| Panel::prepare(plot).map_err(|e| e.at(path, plot)))
        .collect::<Result<Vec<_>, _>>()?;

    // Creating the file ourselves reports I/O problems (missing directory,
    // permissions) with a proper io::Error; plotters then overwrites it.
    std::fs::File::create(path).map_err(|source| ReportError::Io {
        path: path.into(),
        source,
    })?;
    if !font_registered() {
        return Err(render_error(path, "the bundled font could not be loaded"));
    }

    let columns = columns.min(panels.len());
    let rows = panels.len().div_ceil(columns);
    let size = (PANEL_SIZE.0 * columns as u32, PANEL_SIZE.1 * rows as u32);
    let root = BitMapBackend::new(path, size).into_drawing_area();
    let result = root.fill(&WHITE).and_then(|()| {
        let areas = root.split_evenly((rows, columns));
        for (panel, area) in panels.iter().zip(&areas) {
            panel.draw(area)?;
        }
        root.present()
    });
    result.map_err(|e| render_error(path, e))
}

/// A simple table rendered as GitHub-flavoured Markdown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Self {
        Self {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    pub fn push_row<S: Into<String>>(&mut self, row: impl IntoIterator<Item = S>) {
        self.rows.push(row.into_iter().map(Into::into).collect());
    }

    /// Markdown with padded columns. Short rows are padded with empty cells,
    /// `|` is escaped and line breaks become `<br>`. Ends with a newline.
    pub fn to_markdown(&self) -> String {
        let columns = self
            .rows
            .iter()
            .map(Vec::len)
            .chain([self.header.len()])
            .max()
            .unwrap_or(0);
        if columns == 0 {
            return String::new();
        }
        let escape = |cell: &str| {
            cell.replace('|', "\\|")
                .replace("\r\n", "<br>")
                .replace('\n', "<br>")
        };
        let to_cells = |row: &[String]| -> Vec<String> {
            (0..columns)
                .map(|i| row.get(i).map_or_else(String::new, |c| escape(c)))
                .collect()
        };
        let header = to_cells(&self.header);
        let rows: Vec<Vec<String>> = self.rows.iter().map(|r| to_cells(r)).collect();

        let mut widths = vec![3; columns]; // "---" is the shortest separator
        for row in std::iter::once(&header).chain(&rows) {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .map(|(cell, &width)| format!("{cell:<width$}"))
                .collect();
            format!("| {} |\n", padded.join(" | "))
        };
        let separator: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();

        let mut out = line(&header);
        out.push_str(&line(&separator));
        for row in &rows {
            out.push_str(&line(row));
        }
        out
    }
}

// ---------------------------------------------------------------------------
// Preparation: view-space data, ranges and ticks (no drawing yet).

/// A problem with one plot, before the output path is attached.
#[derive(Debug)]
enum PlotError {
    NoData,
    InvalidRange { axis: char, min: f64, max: f64 },
}

impl PlotError {
    fn at(self, path: &Path, plot: &Plot) -> ReportError {
        let (path, title) = (path.to_path_buf(), plot.title.clone());
        match self {
            PlotError::NoData => ReportError::NoData { path, title },
            PlotError::InvalidRange { axis, min, max } => ReportError::InvalidRange {
                path,
                title,
                axis,
                min,
                max,
            },
        }
    }
}

fn invalid_grid(path: &Path, reason: &'static str) -> ReportError {
    ReportError::InvalidGrid {
        path: path.into(),
        reason,
    }
}

fn render_error(path: &Path, message: impl ToString) -> ReportError {
    ReportError::Render {
        path: path.into(),
        message: message.to_string(),
    }
}

/// Registers the bundled font (once per process); false if it failed.
fn font_registered() -> bool {
    FONT_INIT.call_once(|| {
        let ok = register_font(FONT_FAMILY, FontStyle::Normal, FONT_BYTES).is_ok();
        FONT_OK.store(ok, Ordering::Release);
    });
    FONT_OK.load(Ordering::Acquire)
}

impl Scale {
    /// Maps a data value to view space, or `None` if it cannot be shown.
    fn to_view(self, value: f64) -> Option<f64> {
        match self {
            Scale::Linear => value.is_finite().then_some(value),
            Scale::Log => (value.is_finite() && value > 0.0).then(|| value.log10()),
        }
    }

    fn to_data(self, value: f64) -> f64 {
        match self {
            Scale::Linear => value,
            Scale::Log => 10f64.powf(value),
        }
    }
}

/// An axis resolved to a view-space range and tick positions.
#[derive(Debug, Clone)]
struct AxisLayout {
    scale: Scale,
    min: f64,
    max: f64,
    /// Labelled ticks (view space).
    major: Vec<f64>,
    /// Unlabelled light grid lines (view space).
    minor: Vec<f64>,
    format: TickFormat,
}

impl AxisLayout {
    /// `values` are the view-space coordinates of all drawable points.
    fn new(axis: &Axis, name: char, values: &[f64]) -> Result<Self, PlotError> {
        let (min, max) = match axis.range {
            Some((lo, hi)) => {
                let invalid = PlotError::InvalidRange {
                    axis: name,
                    min: lo,
                    max: hi,
                };
                match (axis.scale.to_view(lo), axis.scale.to_view(hi)) {
                    (Some(lo), Some(hi)) if lo < hi => (lo, hi),
                    _ => return Err(invalid),
                }
            }
            None => auto_range(axis.scale, values).ok_or(PlotError::NoData)?,
        };
        if !(max - min).is_finite() {
            return Err(PlotError::InvalidRange {
                axis: name,
                min,
                max,
            });
        }
        let (major, minor, format) = match axis.scale {
            Scale::Linear => {
                let (ticks, step) = linear_ticks(min, max, 10);
                (ticks, Vec::new(), TickFormat::for_linear(min, max, step))
            }
            Scale::Log => {
                let (major, minor) = log_ticks(min, max);
                (major, minor, TickFormat::Compact)
            }
        };
        Ok(Self {
            scale: axis.scale,
            min,
            max,
            major,
            minor,
            format,
        })
    }

    fn contains(&self, v: f64) -> bool {
        (self.min..=self.max).contains(&v)
    }

    /// Tick label for a view-space value.
    fn label(&self, view_value: f64) -> String {
        self.format.format(self.scale.to_data(view_value))
    }

    /// Position of `v` within the range, 0 at `min` and 1 at `max`.
    fn fraction(&self, v: f64) -> f64 {
        (v - self.min) / (self.max - self.min)
    }
}

/// Plotters coordinate for an axis: linear in view space, with our own ticks
/// (plotters' automatic ticks cannot show log axes spanning less than a decade).
impl Ranged for AxisLayout {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        RangedCoordf64::from(self.min..self.max).map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.minor.clone()
        } else {
            self.major.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.min..self.max
    }
}

/// Data range plus margin (view space); `None` without data.
fn auto_range(scale: Scale, values: &[f64]) -> Option<(f64, f64)> {
    let min = values.iter().copied().reduce(f64::min)?;
    let max = values.iter().copied().reduce(f64::max)?;
    let span = max - min;
    if span > 0.0 {
        return Some((min - AUTO_MARGIN * span, max + AUTO_MARGIN * span));
    }
    // A single value: show it in the middle of a small range.
    let half = match scale {
        Scale::Linear if min == 0.0 => 1.0,
        Scale::Linear => 0.1 * min.abs(),
        Scale::Log => 0.5, // half a decade
    };
    Some((min - half, max + half))
}

/// "Nice" ticks (steps of 1, 2, 2.5 or 5 times a power of ten) covering
/// `min..=max` with about `target` intervals; returns the ticks and the step.
fn linear_ticks(min: f64, max: f64, target: usize) -> (Vec<f64>, f64) {
    let raw = (max - min) / target as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = magnitude
        * [1.0, 2.0, 2.5, 5.0, 10.0]
            .into_iter()
            .find(|&m| m * magnitude >= raw)
            .unwrap_or(10.0);
    // Multiples of the step keep 0 exactly 0 and avoid accumulated drift.
    let first = (min / step - 1e-9).ceil() as i64;
    let last = (max / step + 1e-9).floor() as i64;
    let ticks = (first..=last).map(|k| k as f64 * step).collect();
    (ticks, step)
}

/// Ticks for a log axis spanning `min..max` decades (view space, i.e.
/// log10 of the data). Returns (labelled, light) ticks.
fn log_ticks(min: f64, max: f64) -> (Vec<f64>, Vec<f64>) {
    // Ticks at `mantissa * 10^d` for all decades overlapping the range.
    let at_mantissas = |mantissas: &[f64]| -> Vec<f64> {
        let decades = (min.floor() as i32)..=(max.ceil() as i32);
        decades
            .flat_map(|d| mantissas.iter().map(move |m| m.log10() + f64::from(d)))
            .filter(|t| (min..=max).contains(t))
            .collect()
    };
    let all_mantissas: Vec<f64> = (1..=9).map(f64::from).collect();

    let powers_of_ten = (min.ceil() as i32)..=(max.floor() as i32);
    if powers_of_ten.clone().count() >= 3 {
        // Label powers of ten (at most ~10 of them); light lines in between.
        let stride = powers_of_ten.clone().count().div_ceil(10) as i32;
        let (major, minor): (Vec<i32>, Vec<i32>) =
            powers_of_ten.partition(|d| d.rem_euclid(stride) == 0);
        let minor = if stride == 1 {
            at_mantissas(&all_mantissas[1..])
        } else {
            minor.into_iter().map(f64::from).collect()
        };
        return (major.into_iter().map(f64::from).collect(), minor);
    }
    let one_two_five = at_mantissas(&[1.0, 2.0, 5.0]);
    if one_two_five.len() >= 3 {
        let minor = at_mantissas(&[3.0, 4.0, 6.0, 7.0, 8.0, 9.0]);
        return (one_two_five, minor);
    }
    let one_to_nine = at_mantissas(&all_mantissas);
    if one_to_nine.len() >= 3 {
        return (one_to_nine, Vec::new());
    }
    // Less than a factor of ~3: plain linear ticks in data space.
    let (ticks, _) = linear_ticks(10f64.powf(min), 10f64.powf(max), 6);
    let ticks = ticks.into_iter().filter_map(|v| Scale::Log.to_view(v));
    (ticks.collect(), Vec::new())
}

/// How tick labels are written.
#[derive(Debug, Clone, Copy, PartialEq)]
enum TickFormat {
    /// Fixed number of decimals, e.g. `0.25`.
    Decimals(usize),
    /// Up to four significant digits, scientific for very large/small values.
    Compact,
}

impl TickFormat {
    /// Enough decimals to tell ticks `step` apart; compact for extreme magnitudes.
    fn for_linear(min: f64, max: f64, step: f64) -> Self {
        let largest = min.abs().max(max.abs());
        if (1e-3..1e6).contains(&largest) {
            TickFormat::Decimals(decimals_needed(step))
        } else {
            TickFormat::Compact
        }
    }

    fn format(self, v: f64) -> String {
        match self {
            TickFormat::Decimals(d) => format!("{v:.d$}"),
            TickFormat::Compact => compact_number(v),
        }
    }
}

/// Smallest number of decimals (up to 12) that writes `step` exactly.
fn decimals_needed(step: f64) -> usize {
    (0..12)
        .find(|&d| {
            let scaled = step * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
        })
        .unwrap_or(12)
}

/// Up to four significant digits without trailing zeros: `0.002`, `250`, `1e-5`, `2.5e6`.
fn compact_number(v: f64) -> String {
    fn trim(s: &str) -> &str {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.')
        } else {
            s
        }
    }
    if v == 0.0 {
        return "0".to_string();
    }
    if (1e-3..1e5).contains(&v.abs()) {
        let decimals = (3 - v.abs().log10().floor() as i32).max(0) as usize;
        trim(&format!("{v:.decimals$}")).to_string()
    } else {
        let s = format!("{v:.3e}");
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        format!("{}e{exponent}", trim(mantissa))
    }
}

/// A series in view space, clipped to the plot range and ready to draw.
struct PanelSeries {
    label: String,
    style: Style,
    color: RGBColor,
    /// Connected pieces of the line (empty for `Style::Markers`).
    lines: Vec<Vec<(f64, f64)>>,
    /// Marker positions (empty for line-only styles).
    markers: Vec<(f64, f64)>,
}

/// A plot with resolved axes and clipped data.
struct Panel<'p> {
    plot: &'p Plot,
    x: AxisLayout,
    y: AxisLayout,
    series: Vec<PanelSeries>,
    legend: SeriesLabelPosition,
}

impl<'p> Panel<'p> {
    fn prepare(plot: &'p Plot) -> Result<Self, PlotError> {
        // Per series: the points in view space, `None` where not drawable.
        let view: Vec<Vec<Option<(f64, f64)>>> = plot
            .series
            .iter()
            .map(|s| {
                let to_view = |&(x, y): &(f64, f64)| {
                    Some((plot.x.scale.to_view(x)?, plot.y.scale.to_view(y)?))
                };
                s.points.iter().map(to_view).collect()
            })
            .collect();
        let drawable: Vec<(f64, f64)> = view.iter().flatten().flatten().copied().collect();
        if drawable.is_empty() {
            return Err(PlotError::NoData);
        }
        let xs: Vec<f64> = drawable.iter().map(|p| p.0).collect();
        let ys: Vec<f64> = drawable.iter().map(|p| p.1).collect();
        let x = AxisLayout::new(&plot.x, 'x', &xs)?;
        let y = AxisLayout::new(&plot.y, 'y', &ys)?;

        let series = plot
            .series
            .iter()
            .zip(&view)
            .enumerate()
            .map(|(i, (s, points))| {
                let has_line = s.style != Style::Markers;
                let has_markers = matches!(s.style, Style::Markers | Style::LineMarkers);
                let visible = |&(px, py): &(f64, f64)| x.contains(px) && y.contains(py);
                PanelSeries {
                    label: s.label.clone(),
                    style: s.style,
                    color: PALETTE[i % PALETTE.len()],
                    lines: if has_line {
                        clip_polyline(points, (x.min, x.max), (y.min, y.max))
                    } else {
                        Vec::new()
                    },
                    markers: if has_markers {
                        points.iter().flatten().copied().filter(visible).collect()
                    } else {
                        Vec::new()
                    },
                }
            })
            .collect();
        let legend = emptiest_corner(&drawable, &x, &y);
        Ok(Self {
            plot,
            x,
            y,
            series,
            legend,
        })
    }
}

/// Splits a line at undrawable points (`None`) and clips it to the
/// rectangle `x × y`, returning the visible connected pieces.
///
/// Clipping is needed because plotters clamps out-of-range coordinates onto
/// the plot border instead of clipping them.
fn clip_polyline(
    points: &[Option<(f64, f64)>],
    x: (f64, f64),
    y: (f64, f64),
) -> Vec<Vec<(f64, f64)>> {
    let mut pieces: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current: Vec<(f64, f64)> = Vec::new();
    for pair in points.windows(2) {
        let clipped = match (pair[0], pair[1]) {
            (Some(a), Some(b)) => clip_segment(a, b, x, y),
            _ => None,
        };
        match clipped {
            // Continues the current piece if the segment start was not cut.
            Some((a, b)) if current.last() == Some(&a) => current.push(b),
            Some((a, b)) => {
                pieces.extend((current.len() >= 2).then(|| std::mem::take(&mut current)));
                current = vec![a, b];
            }
            None => pieces.extend((current.len() >= 2).then(|| std::mem::take(&mut current))),
        }
    }
    pieces.extend((current.len() >= 2).then_some(current));
    pieces
}

/// Liang–Barsky clipping of segment `a`–`b` to the rectangle `x × y`.
fn clip_segment(
    a: (f64, f64),
    b: (f64, f64),
    x: (f64, f64),
    y: (f64, f64),
) -> Option<((f64, f64), (f64, f64))> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0_f64, 1.0_f64);
    // Each boundary as (p, q): the segment is inside where t * p <= q.
    let boundaries = [
        (-dx, a.0 - x.0),
        (dx, x.1 - a.0),
        (-dy, a.1 - y.0),
        (dy, y.1 - a.1),
    ];
    for (p, q) in boundaries {
        if p == 0.0 {
            if q < 0.0 {
                return None; // parallel to and outside this boundary
            }
        } else if p < 0.0 {
            t0 = t0.max(q / p);
        } else {
            t1 = t1.min(q / p);
        }
    }
    if t0 > t1 {
        return None;
    }
    let at = |t: f64| {
        if t == 0.0 {
            a
        } else if t == 1.0 {
            b
        } else {
            (a.0 + t * dx, a.1 + t * dy)
        }
    };
    Some((at(t0), at(t1)))
}

/// The plot corner with the fewest data points, for the legend.
fn emptiest_corner(points: &[(f64, f64)], x: &AxisLayout, y: &AxisLayout) -> SeriesLabelPosition {
    // (position, x-fraction range, y-fraction range) of the area a legend covers.
    let corners = [
        (SeriesLabelPosition::UpperRight, 0.6..=1.0, 0.7..=1.0),
        (SeriesLabelPosition::UpperLeft, 0.0..=0.4, 0.7..=1.0),
        (SeriesLabelPosition::LowerRight, 0.6..=1.0, 0.0..=0.3),
        (SeriesLabelPosition::LowerLeft, 0.0..=0.4, 0.0..=0.3),
    ];
    let count_in = |fx: &std::ops::RangeInclusive<f64>, fy: &std::ops::RangeInclusive<f64>| {
        points
            .iter()
            .filter(|&&(px, py)| fx.contains(&x.fraction(px)) && fy.contains(&y.fraction(py)))
            .count()
    };
    corners
        .iter()
        .min_by_key(|(_, fx, fy)| count_in(fx, fy)) // first minimum wins ties
        .map(|(pos, _, _)| pos.clone())
        .unwrap_or(SeriesLabelPosition::UpperRight)
}

// ---------------------------------------------------------------------------
// Drawing.

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

impl Panel<'_> {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let mut chart = ChartBuilder::on(area)
            .caption(&self.plot.title, (FONT_FAMILY, TITLE_FONT_SIZE))
            .margin(20)
            .x_label_area_size(70)
            .y_label_area_size(100)
            .build_cartesian_2d(self.x.clone(), self.y.clone())?;

        let x_label = |v: &f64| self.x.label(*v);
        let y_label = |v: &f64| self.y.label(*v);
        chart
            .configure_mesh()
            .x_desc(self.plot.x.label.as_str())
            .y_desc(self.plot.y.label.as_str())
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .label_style((FONT_FAMILY, TICK_FONT_SIZE))
            .axis_desc_style((FONT_FAMILY, AXIS_LABEL_FONT_SIZE))
            .bold_line_style(BLACK.mix(0.15))
            .light_line_style(BLACK.mix(0.05))
            .draw()?;

        for s in &self.series {
            let line = ShapeStyle::from(s.color).stroke_width(LINE_WIDTH);
            let marker = ShapeStyle::from(s.color).filled();
            let annotation = if s.style == Style::Dashed {
                chart.draw_series(s.lines.iter().map(|piece| {
                    DashedPathElement::new(piece.iter().copied(), DASH_LENGTH, DASH_GAP, line)
                }))?
            } else {
                chart.draw_series(
                    s.lines
                        .iter()
                        .map(|piece| PathElement::new(piece.clone(), line)),
                )?
            };
            if !s.label.is_empty() {
                let style = s.style;
                annotation
                    .label(s.label.as_str())
                    .legend(move |at| legend_glyph::<DB>(style, line, marker, at));
            }
            chart.draw_series(
                s.markers
                    .iter()
                    .map(|&p| Circle::new(p, MARKER_RADIUS, marker)),
            )?;
        }

        if self.series.iter().any(|s| !s.label.is_empty()) {
            chart
                .configure_series_labels()
                .position(self.legend.clone())
                .margin(15)
                .legend_area_size(40)
                .label_font((FONT_FAMILY, LEGEND_FONT_SIZE))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.5))
                .draw()?;
        }
        Ok(())
    }
}

/// The sample drawn in front of a legend entry: a 30 px wide line (solid,
/// dashed or none) and a marker (or an invisible one), relative to `at`.
fn legend_glyph<'a, DB: DrawingBackend + 'a>(
    style: Style,
    line: ShapeStyle,
    marker: ShapeStyle,
    at: (i32, i32),
) -> impl IntoDynElement<'a, DB, (i32, i32)> {
    let dashes: &[(i32, i32)] = match style {
        Style::Line | Style::LineMarkers => &[(0, 30)],
        Style::Dashed => &[(0, 8), (11, 19), (22, 30)],
        Style::Markers => &[],
    };
    // Always three path pieces and one circle, so every style has the same type.
    let piece = |i: usize| {
        let points = dashes.get(i).map_or(vec![], |&(a, b)| vec![(a, 0), (b, 0)]);
        PathElement::new(points, line)
    };
    let marker = match style {
        Style::Markers | Style::LineMarkers => marker,
        Style::Line | Style::Dashed => TRANSPARENT.filled(),
    };
    EmptyElement::at(at)
        + piece(0)
        + piece(1)
        + piece(2)
        + Circle::new((15, 0), MARKER_RADIUS, marker)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_font_registers() {
        assert!(font_registered());
    }

    #[test]
    fn linear_ticks_are_nice() {
        let (ticks, step) = linear_ticks(-0.05, 1.05, 10);
        assert_eq!(step, 0.2);
        assert_eq!(ticks.first(), Some(&0.0));
        assert_eq!(ticks.len(), 6);
        assert_eq!(TickFormat::for_linear(-0.05, 1.05, step).format(0.6), "0.6");
        let (_, step) = linear_ticks(0.0, 2.4e7, 10);
        assert_eq!(TickFormat::for_linear(0.0, 2.4e7, step).format(5e6), "5e6");
    }

    #[test]
    fn log_ticks_adapt_to_span() {
        let (major, minor) = log_ticks(-3.2, 2.1);
        assert_eq!(major, vec![-3.0, -2.0, -1.0, 0.0, 1.0, 2.0]);
        assert!(!minor.is_empty());
        let (major, _) = log_ticks(-40.0, 40.0); // 81 decades -> every 9th
        assert!(major.len() <= 10 && major.contains(&0.0));
        let (major, _) = log_ticks(0.0, 1.0); // 1..10 -> 1, 2, 5, 10
        let labels: Vec<String> = major
            .iter()
            .map(|&t| compact_number(10f64.powf(t)))
            .collect();
        assert_eq!(labels, ["1", "2", "5", "10"]);
        let (major, _) = log_ticks(3f64.log10(), 3.5f64.log10()); // narrow: linear ticks
        assert!(major.len() >= 3);
    }

    #[test]
    fn compact_numbers() {
        assert_eq!(compact_number(10f64.powf(-3.0)), "0.001");
        assert_eq!(compact_number(250.0), "250");
        assert_eq!(compact_number(1e-5), "1e-5");
        assert_eq!(compact_number(2.5e6), "2.5e6");
    }

    #[test]
    fn auto_range_has_margin_and_handles_constants() {
        assert_eq!(auto_range(Scale::Linear, &[0.0, 10.0]), Some((-0.5, 10.5)));
        assert_eq!(auto_range(Scale::Linear, &[0.0]), Some((-1.0, 1.0)));
        assert_eq!(auto_range(Scale::Linear, &[]), None);
    }

    #[test]
    fn log_axis_ignores_non_positive_values() {
        let plot = Plot::new("t", Axis::linear("x"), Axis::log("y")).with_series(Series::new(
            "s",
            vec![
                (0.0, -1.0),
                (1.0, 0.0),
                (2.0, 1.0),
                (3.0, 100.0),
                (4.0, f64::NAN),
            ],
            Style::Line,
        ));
        let panel = Panel::prepare(&plot).unwrap();
        assert!((panel.y.min - -0.1).abs() < 1e-12 && (panel.y.max - 2.1).abs() < 1e-12);
        assert_eq!(panel.series[0].lines, vec![vec![(2.0, 0.0), (3.0, 2.0)]]);
    }

    #[test]
    fn lines_are_clipped_not_clamped() {
        let points = [Some((0.0, 0.0)), Some((2.0, 2.0)), Some((3.0, 0.5))];
        let pieces = clip_polyline(&points, (0.0, 1.0), (0.0, 1.0));
        assert_eq!(pieces, vec![vec![(0.0, 0.0), (1.0, 1.0)]]);
        let points = [Some((0.5, 0.5)), None, Some((0.6, 0.6)), Some((0.7, 0.7))];
        let pieces = clip_polyline(&points, (0.0, 1.0), (0.0, 1.0));
        assert_eq!(pieces, vec![vec![(0.6, 0.6), (0.7, 0.7)]]);
    }

    #[test]
    fn markdown_table() {
        let mut table = Table::new(["case", "error"]);
        table.push_row(["a|b", "1.5e-3"]);
        table.push_row(["short"]);
        assert_eq!(
            table.to_markdown(),
            "| case  | error  |\n\
             | ----- | ------ |\n\
             | a\\|b  | 1.5e-3 |\n\
             | short |        |\n"
        );
    }
}
