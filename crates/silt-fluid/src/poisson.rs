//! Direct solver for `a·φ + b·L_h φ = f` on a uniform 3D grid (pressure Poisson and Crank–Nicolson
//! Helmholtz problems), in the style of CaNS (Costa 2018).
//!
//! # Discretisation
//!
//! The unknowns live in a compact array with x fastest: `index = i + m0·(j + m1·k)`. `L_h = D_xx +
//! D_yy + D_zz`, where each `D_αα` is the 3-point second difference `(φ_{p-1} - 2φ_p + φ_{p+1}) / h_α²`
//! along axis α. What a missing neighbour means is set per axis by [`AxisKind`]: cyclic (periodic), a
//! ghost equal to the interior value (zero gradient, Neumann), a ghost equal to minus the interior
//! value (zero value on the boundary face, Dirichlet for cell-centred unknowns), or zero (face-centred
//! unknowns whose boundary faces carry a prescribed zero value).
//!
//! # Method
//!
//! 1. **x and y**: every line is transformed by the real-to-real transform that diagonalises the 1D
//!    operator: a real FFT (`realfft`) packed into a real "halfcomplex" line for periodic axes,
//!    DCT-II / DST-II / DCT-IV / DST-IV (`rustdct`) for cell-centred bounded axes and a DST-I (real
//!    FFT of the odd extension) for `DirichletNodes`. Each transformed slot `s` then carries one
//!    eigenvalue `λ_s / h²` of the 1D operator. The x-transformed rows of a z-plane are written
//!    transposed (blocks of 8 lines) into a work plane so that the y lines are contiguous; the
//!    spectral data stay in that transposed layout (y slot fastest) until the inverse transforms.
//! 2. **z**: for every pair of slots (s_x, s_y) the remaining problem is the tridiagonal system
//!    `(a + b(λ_x + λ_y))φ_k + b·(D_zz φ)_k = f̂_k`, solved by the Thomas algorithm (Sherman–Morrison
//!    for a periodic z). The sweeps run plane by plane (k outer) over whole rows of modes (inner loop
//!    contiguous). The pivots (and the Sherman–Morrison vectors) depend only on `(a, b)`: they are
//!    computed once per `(a, b)` pair and kept in a small cache (up to [`FACTOR_CACHE_LEN`] pairs,
//!    least-recently-used evicted). Each cached pair costs about one field's worth of memory (half of
//!    it when x is periodic, because slots with the same wavenumber share pivots; twice that for a
//!    periodic z).
//! 3. Inverse y and x transforms, with the transform normalisation folded into the z sweep.
//!
//! The z operator is stored as general per-row coefficients (lower, diagonal, upper), so a non-uniform
//! z spacing only needs a different [`SeparableSolver::new`]-time setup of those rows (and weighted
//! means in the singular case); only uniform spacing is implemented.
//!
//! # Singular problems
//!
//! With `a == 0` and every axis `Periodic` or `NeumannNeumann`, the operator annihilates constants.
//! [`SeparableSolver::solve`] then discards the mean of `f` (it solves with `f - mean(f)`) and returns
//! the solution with zero mean. The caller is responsible for supplying a compatible (mean-free) `f`
//! if it needs the equation to hold exactly with its own `f`.
//!
//! # Parallelism and determinism
//!
//! Transforms run in parallel over z-planes and the z sweeps in parallel over x slots (rayon). The
//! arithmetic of every unknown is independent of how the work is split, so results are bit-identical
//! for any number of threads.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;
use realfft::num_complex::Complex;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};
use rustdct::{DctPlanner, TransformType2And3, TransformType4};

use crate::dense_transform::{self, DenseTransform};
use serde::{Deserialize, Serialize};

/// Maximum number of `(a, b)` pairs whose z factorisations are kept by a [`SeparableSolver`].
pub const FACTOR_CACHE_LEN: usize = 6;

/// Boundary treatment (and unknown placement) of one axis of `L_h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AxisKind {
    /// Cyclic, `m = n` unknowns; real FFT, eigenvalues `2(cos(2πk/n) - 1)`, `k = 0, …, n-1`.
    Periodic,
    /// Cell-centred, zero gradient at both ends (`φ_{-1} = φ_0`, `φ_n = φ_{n-1}`); DCT-II,
    /// eigenvalues `2(cos(πk/n) - 1)`, `k = 0, …, n-1`.
    NeumannNeumann,
    /// Cell-centred, zero value on both boundary faces (`φ_{-1} = -φ_0`, `φ_n = -φ_{n-1}`); DST-II,
    /// eigenvalues `2(cos(π(k+1)/n) - 1)`, `k = 0, …, n-1`.
    DirichletDirichlet,
    /// Cell-centred, Neumann at the low end, Dirichlet at the high end; DCT-IV, eigenvalues
    /// `2(cos(π(2k+1)/(2n)) - 1)`.
    NeumannDirichlet,
    /// Cell-centred, Dirichlet at the low end, Neumann at the high end; DST-IV, eigenvalues
    /// `2(cos(π(2k+1)/(2n)) - 1)`.
    DirichletNeumann,
    /// Face-centred, `m = n - 1` unknowns on the interior faces, zero on both boundary faces; DST-I,
    /// eigenvalues `2(cos(π(k+1)/n) - 1)`, `k = 0, …, n-2`.
    DirichletNodes,
}

impl AxisKind {
    /// All six kinds, in declaration order.
    pub const ALL: [AxisKind; 6] = [
        AxisKind::Periodic,
        AxisKind::NeumannNeumann,
        AxisKind::DirichletDirichlet,
        AxisKind::NeumannDirichlet,
        AxisKind::DirichletNeumann,
        AxisKind::DirichletNodes,
    ];

    /// Number of unknowns `m` along an axis of `n` cells: `n - 1` for `DirichletNodes`, else `n`.
    pub fn unknowns(self, n: usize) -> usize {
        match self {
            AxisKind::DirichletNodes => n.saturating_sub(1),
            _ => n,
        }
    }

    /// Smallest admissible cell count for this kind (3 for `DirichletNodes`, else 2).
    pub fn min_cells(self) -> usize {
        match self {
            AxisKind::DirichletNodes => 3,
            _ => 2,
        }
    }

    /// Whether the 1D operator has a zero eigenvalue (constants in its null space).
    pub fn has_zero_mode(self) -> bool {
        matches!(self, AxisKind::Periodic | AxisKind::NeumannNeumann)
    }

    /// Dimensionless eigenvalue `λ_s` (of `φ_{p-1} - 2φ_p + φ_{p+1}`) belonging to transformed slot `s`
    /// of an axis of `n` cells, in the slot order produced by the forward transform.
    fn eigenvalue(self, n: usize, s: usize) -> f64 {
        use std::f64::consts::PI;
        let nf = n as f64;
        let theta = match self {
            AxisKind::Periodic => 2.0 * PI * s.min(n - s) as f64 / nf,
            AxisKind::NeumannNeumann => PI * s as f64 / nf,
            AxisKind::DirichletDirichlet | AxisKind::DirichletNodes => PI * (s + 1) as f64 / nf,
            AxisKind::NeumannDirichlet | AxisKind::DirichletNeumann => {
                PI * (2 * s + 1) as f64 / (2.0 * nf)
            }
        };
        2.0 * (theta.cos() - 1.0)
    }

    /// Ghost-value coefficients `(low, high)`: the missing neighbour beyond the low end is
    /// `low · φ_0` and beyond the high end `high · φ_{m-1}` (unused for `Periodic`).
    fn ghost_coefficients(self) -> (f64, f64) {
        match self {
            AxisKind::Periodic => (0.0, 0.0),
            AxisKind::NeumannNeumann => (1.0, 1.0),
            AxisKind::DirichletDirichlet => (-1.0, -1.0),
            AxisKind::NeumannDirichlet => (1.0, -1.0),
            AxisKind::DirichletNeumann => (-1.0, 1.0),
            AxisKind::DirichletNodes => (0.0, 0.0),
        }
    }
}

/// The 1D operator `φ_{p-1} - 2φ_p + φ_{p+1}` (divided by `h²`) of one axis as tridiagonal rows:
/// `(D φ)_p = lower[p]·φ_{p-1} + diag[p]·φ_p + upper[p]·φ_{p+1}`. For a periodic axis `lower[0]`
/// couples row 0 to `φ_{m-1}` and `upper[m-1]` couples row `m-1` to `φ_0`; otherwise both are zero.
#[derive(Clone, Debug)]
struct AxisRows {
    lower: Vec<f64>,
    diag: Vec<f64>,
    upper: Vec<f64>,
}

impl AxisRows {
    fn uniform(kind: AxisKind, m: usize, h: f64) -> Self {
        let ih2 = 1.0 / (h * h);
        let mut lower = vec![ih2; m];
        let mut upper = vec![ih2; m];
        let mut diag = vec![-2.0 * ih2; m];
        if kind != AxisKind::Periodic {
            let (glo, ghi) = kind.ghost_coefficients();
            lower[0] = 0.0;
            upper[m - 1] = 0.0;
            diag[0] += glo * ih2;
            diag[m - 1] += ghi * ih2;
        }
        AxisRows { lower, diag, upper }
    }
}

/// One real-to-real line transform that diagonalises the 1D operator of an axis.
#[derive(Clone)]
enum LineTransform {
    /// Real FFT packed as `(r_0, r_1, .., r_{n/2}, i_{(n-1)/2}, .., i_1)`: slot `s` holds the real part
    /// of wavenumber `s` for `s <= n/2` and the imaginary part of wavenumber `n - s` otherwise.
    Fourier {
        forward: Arc<dyn RealToComplex<f64>>,
        inverse: Arc<dyn ComplexToReal<f64>>,
    },
    /// DCT-II forward, DCT-III inverse.
    Cos2(Arc<dyn TransformType2And3<f64>>),
    /// DST-II forward, DST-III inverse.
    Sin2(Arc<dyn TransformType2And3<f64>>),
    /// DCT-IV both ways.
    Cos4(Arc<dyn TransformType4<f64>>),
    /// DST-IV both ways.
    Sin4(Arc<dyn TransformType4<f64>>),
    /// DST-I both ways, computed with a real FFT of the odd extension of length `2(m + 1)` (rustdct
    /// 0.7.1's FFT-based DST-I reads stale scratch values when its scratch buffer is reused).
    Sin1(Arc<dyn RealToComplex<f64>>),
    /// Any of the above as a dense matrix product (lengths with a large prime factor, see
    /// [`dense_transform::prefers_dense`]); its slots are permuted ([`LineTransform::slot`]).
    Dense(Arc<DenseTransform>),
}

/// Per-thread work buffers of the line transforms.
struct LineWork {
    spectrum: Vec<Complex<f64>>,
    complex_scratch: Vec<Complex<f64>>,
    real_scratch: Vec<f64>,
}

impl LineWork {
    fn new(sizes: &[(usize, usize, usize)]) -> Self {
        let max = |f: fn(&(usize, usize, usize)) -> usize| sizes.iter().map(f).max().unwrap_or(0);
        LineWork {
            spectrum: vec![Complex::new(0.0, 0.0); max(|s| s.0)],
            complex_scratch: vec![Complex::new(0.0, 0.0); max(|s| s.1)],
            real_scratch: vec![0.0; max(|s| s.2)],
        }
    }
}

impl LineTransform {
    fn plan(
        kind: AxisKind,
        m: usize,
        fft: &mut RealFftPlanner<f64>,
        dct: &mut DctPlanner<f64>,
    ) -> Self {
        let fast = match kind {
            AxisKind::Periodic => LineTransform::Fourier {
                forward: fft.plan_fft_forward(m),
                inverse: fft.plan_fft_inverse(m),
            },
            AxisKind::NeumannNeumann => LineTransform::Cos2(dct.plan_dct2(m)),
            AxisKind::DirichletDirichlet => LineTransform::Sin2(dct.plan_dst2(m)),
            AxisKind::NeumannDirichlet => LineTransform::Cos4(dct.plan_dct4(m)),
            AxisKind::DirichletNeumann => LineTransform::Sin4(dct.plan_dst4(m)),
            AxisKind::DirichletNodes => LineTransform::Sin1(fft.plan_fft_forward(2 * (m + 1))),
        };
        let cells = if kind == AxisKind::DirichletNodes {
            m + 1
        } else {
            m
        };
        if !dense_transform::prefers_dense(cells) {
            return fast;
        }
        let mut work = LineWork::new(&[fast.work_sizes()]);
        let mut inverse_work = LineWork::new(&[fast.work_sizes()]);
        let dense = DenseTransform::probe(
            m,
            |line| fast.forward(line, &mut work),
            |line| fast.inverse(line, &mut inverse_work),
        );
        LineTransform::Dense(Arc::new(dense))
    }

    /// Transform index (slot of the fast transform) held by stored slot `s`.
    fn slot(&self, s: usize) -> usize {
        match self {
            LineTransform::Dense(t) => t.slot_order()[s],
            _ => s,
        }
    }

    /// Factor `c` such that `inverse(forward(x)) = c·x` for an axis of `n` cells.
    fn scale(kind: AxisKind, n: usize) -> f64 {
        match kind {
            AxisKind::Periodic => n as f64,
            // DCT-III∘DCT-II, DST-III∘DST-II, DCT-IV², DST-IV²: m/2 with m = n;
            // DST-I²: (m + 1)/2 with m = n - 1.
            _ => 0.5 * n as f64,
        }
    }

    /// `(spectrum length, complex scratch, real scratch)` needed by this transform.
    fn work_sizes(&self) -> (usize, usize, usize) {
        match self {
            LineTransform::Fourier { forward, inverse } => (
                forward.complex_len(),
                forward.get_scratch_len().max(inverse.get_scratch_len()),
                0,
            ),
            LineTransform::Cos2(t) | LineTransform::Sin2(t) => (0, 0, t.get_scratch_len()),
            LineTransform::Cos4(t) | LineTransform::Sin4(t) => (0, 0, t.get_scratch_len()),
            LineTransform::Sin1(t) => (t.complex_len(), t.get_scratch_len(), t.len()),
            LineTransform::Dense(t) => (0, 0, t.scratch_len()),
        }
    }

    fn forward(&self, line: &mut [f64], work: &mut LineWork) {
        match self {
            LineTransform::Fourier { forward, .. } => {
                let n = line.len();
                let spec = &mut work.spectrum[..n / 2 + 1];
                let res = forward.process_with_scratch(line, spec, &mut work.complex_scratch);
                debug_assert!(res.is_ok(), "real FFT failed: {res:?}");
                for s in 0..=n / 2 {
                    line[s] = spec[s].re;
                }
                for s in 1..=(n - 1) / 2 {
                    line[n - s] = spec[s].im;
                }
            }
            LineTransform::Cos2(t) => t.process_dct2_with_scratch(line, &mut work.real_scratch),
            LineTransform::Sin2(t) => t.process_dst2_with_scratch(line, &mut work.real_scratch),
            LineTransform::Cos4(t) => t.process_dct4_with_scratch(line, &mut work.real_scratch),
            LineTransform::Sin4(t) => t.process_dst4_with_scratch(line, &mut work.real_scratch),
            LineTransform::Sin1(t) => dst1(t.as_ref(), line, work),
            LineTransform::Dense(t) => {
                let x = line.to_vec();
                t.forward_lines(&x, 0, line, 0, 1, &mut work.real_scratch);
            }
        }
    }

    fn inverse(&self, line: &mut [f64], work: &mut LineWork) {
        match self {
            LineTransform::Fourier { inverse, .. } => {
                let n = line.len();
                let spec = &mut work.spectrum[..n / 2 + 1];
                unpack_halfcomplex(line, spec);
                let res = inverse.process_with_scratch(spec, line, &mut work.complex_scratch);
                debug_assert!(res.is_ok(), "inverse real FFT failed: {res:?}");
            }
            LineTransform::Cos2(t) => t.process_dct3_with_scratch(line, &mut work.real_scratch),
            LineTransform::Sin2(t) => t.process_dst3_with_scratch(line, &mut work.real_scratch),
            LineTransform::Cos4(t) => t.process_dct4_with_scratch(line, &mut work.real_scratch),
            LineTransform::Sin4(t) => t.process_dst4_with_scratch(line, &mut work.real_scratch),
            LineTransform::Sin1(t) => dst1(t.as_ref(), line, work),
            LineTransform::Dense(t) => {
                let c = line.to_vec();
                t.inverse_lines(&c, 0, line, 0, 1, &mut work.real_scratch);
            }
        }
    }
}

impl LineTransform {
    /// Forward transforms of `count` lines `src[l * src_stride..][..len]` (clobbered) into
    /// `dst[l * dst_stride..][..len]`.
    #[allow(clippy::too_many_arguments)]
    fn forward_lines(
        &self,
        len: usize,
        src: &mut [f64],
        src_stride: usize,
        dst: &mut [f64],
        dst_stride: usize,
        count: usize,
        work: &mut LineWork,
    ) {
        if let LineTransform::Dense(t) = self {
            t.forward_lines(
                src,
                src_stride,
                dst,
                dst_stride,
                count,
                &mut work.real_scratch,
            );
            return;
        }
        for l in 0..count {
            let line = &mut src[l * src_stride..][..len];
            self.forward_to(line, &mut dst[l * dst_stride..], 1, work);
        }
    }

    /// Inverse transforms of `count` spectral lines `src[l * src_stride..][..len]` (clobbered) into
    /// `dst[l * dst_stride..][..len]`.
    #[allow(clippy::too_many_arguments)]
    fn inverse_lines(
        &self,
        len: usize,
        src: &mut [f64],
        src_stride: usize,
        dst: &mut [f64],
        dst_stride: usize,
        count: usize,
        work: &mut LineWork,
    ) {
        if let LineTransform::Dense(t) = self {
            t.inverse_lines(
                src,
                src_stride,
                dst,
                dst_stride,
                count,
                &mut work.real_scratch,
            );
            return;
        }
        for l in 0..count {
            let line = &mut src[l * src_stride..][..len];
            self.inverse_to(line, &mut dst[l * dst_stride..], 1, work);
        }
    }

    /// Forward transform of `line` (clobbered), slot `s` written to `dst[s * stride]`.
    fn forward_to(&self, line: &mut [f64], dst: &mut [f64], stride: usize, work: &mut LineWork) {
        match self {
            LineTransform::Fourier { forward, .. } => {
                let n = line.len();
                let spec = &mut work.spectrum[..n / 2 + 1];
                let res = forward.process_with_scratch(line, spec, &mut work.complex_scratch);
                debug_assert!(res.is_ok(), "real FFT failed: {res:?}");
                for s in 0..=n / 2 {
                    dst[s * stride] = spec[s].re;
                }
                for s in 1..=(n - 1) / 2 {
                    dst[(n - s) * stride] = spec[s].im;
                }
            }
            _ => {
                self.forward(line, work);
                scatter(line, dst, stride);
            }
        }
    }

    /// Inverse transform of the spectral `line` (clobbered), value `p` written to `dst[p * stride]`.
    fn inverse_to(&self, line: &mut [f64], dst: &mut [f64], stride: usize, work: &mut LineWork) {
        match self {
            LineTransform::Fourier { inverse, .. } if stride == 1 => {
                let n = line.len();
                let spec = &mut work.spectrum[..n / 2 + 1];
                unpack_halfcomplex(line, spec);
                let res =
                    inverse.process_with_scratch(spec, &mut dst[..n], &mut work.complex_scratch);
                debug_assert!(res.is_ok(), "inverse real FFT failed: {res:?}");
            }
            _ => {
                self.inverse(line, work);
                scatter(line, dst, stride);
            }
        }
    }
}

/// Leading dimension of the transposed work plane for lines of length `m`: odd, so that strided
/// writes into it do not map to a handful of cache sets.
fn padded(m: usize) -> usize {
    m | 1
}

/// Writes the `rows × len` block `src` transposed: `dst[p * ld + r] = src[r * len + p]`.
fn transpose_block(src: &[f64], rows: usize, len: usize, dst: &mut [f64], ld: usize) {
    for p in 0..len {
        let out = &mut dst[p * ld..p * ld + rows];
        for (r, o) in out.iter_mut().enumerate() {
            *o = src[r * len + p];
        }
    }
}

/// `dst[p * stride] = src[p]`.
fn scatter(src: &[f64], dst: &mut [f64], stride: usize) {
    if stride == 1 {
        dst[..src.len()].copy_from_slice(src);
    } else {
        for (p, &v) in src.iter().enumerate() {
            dst[p * stride] = v;
        }
    }
}

/// Halfcomplex line `(r_0, .., r_{n/2}, i_{(n-1)/2}, .., i_1)` to the `n/2 + 1` complex values.
fn unpack_halfcomplex(line: &[f64], spec: &mut [Complex<f64>]) {
    let n = line.len();
    spec[0] = Complex::new(line[0], 0.0);
    for s in 1..=(n - 1) / 2 {
        spec[s] = Complex::new(line[s], line[n - s]);
    }
    if n.is_multiple_of(2) {
        spec[n / 2] = Complex::new(line[n / 2], 0.0);
    }
}

/// Unnormalised DST-I, `X_k = Σ_p x_p sin(π(p+1)(k+1)/(m+1))`, in place: the odd extension
/// `y = (0, x_0, .., x_{m-1}, 0, -x_{m-1}, .., -x_0)` has `Im Y_{k+1} = -2 X_k`.
fn dst1(fft: &dyn RealToComplex<f64>, line: &mut [f64], work: &mut LineWork) {
    let m = line.len();
    let ext = &mut work.real_scratch[..2 * (m + 1)];
    ext[0] = 0.0;
    ext[m + 1] = 0.0;
    for (p, &x) in line.iter().enumerate() {
        ext[p + 1] = x;
        ext[2 * m + 1 - p] = -x;
    }
    let spec = &mut work.spectrum[..m + 2];
    let res = fft.process_with_scratch(ext, spec, &mut work.complex_scratch);
    debug_assert!(res.is_ok(), "DST-I FFT failed: {res:?}");
    for (x, y) in line.iter_mut().zip(&spec[1..]) {
        *x = -0.5 * y.im;
    }
}

/// z-direction factorisation for one `(a, b)` pair.
#[derive(Clone)]
pub(crate) struct ZFactors {
    key: (u64, u64),
    /// `b · lower[k]` of the z rows.
    lower: Vec<f64>,
    /// `b · upper[k]` of the z rows.
    upper: Vec<f64>,
    /// Inverse Thomas pivots, `[k][mode]` with `mode = ux_index · m1 + j`.
    inv_pivot: Vec<f64>,
    /// Sherman–Morrison data when z is periodic.
    cyclic: Option<CyclicFactors>,
}

/// Sherman–Morrison data of a cyclic tridiagonal system `A = B + u vᵀ`,
/// `u = (γ, 0, .., α)`, `v = (1, 0, .., β/γ)`.
#[derive(Clone)]
struct CyclicFactors {
    /// `B⁻¹u`, `[k][mode]`.
    z: Vec<f64>,
    /// `β/γ` per mode.
    beta_over_gamma: Vec<f64>,
    /// `1 / (1 + vᵀB⁻¹u)` per mode.
    inv_denominator: Vec<f64>,
}

/// Per-thread buffers for the plane transforms.
pub(crate) struct PlaneWork {
    line: LineWork,
    /// Transposed plane, leading dimension [`padded`].
    plane: Vec<f64>,
    /// [`BLOCK`] transformed lines on their way into `plane`.
    block: Vec<f64>,
}

/// Lines transformed together before being written transposed (whole cache lines at a time).
const BLOCK: usize = 8;

/// Direct solver of `a·φ + b·L_h φ = f` (fast transforms in x and y, tridiagonal in z).
#[derive(Clone)]
pub struct SeparableSolver {
    cells: [usize; 3],
    kinds: [AxisKind; 3],
    spacing: [f64; 3],
    m: [usize; 3],
    tx: LineTransform,
    ty: LineTransform,
    /// x slot → index of its distinct eigenvalue (slots `s` and `n - s` of a periodic x share one).
    x_mode: Vec<usize>,
    /// Distinct x eigenvalues divided by `h_x²`.
    lambda_x: Vec<f64>,
    /// y eigenvalues per slot divided by `h_y²`.
    lambda_y: Vec<f64>,
    /// z operator rows (divided by `h_z²`).
    z_rows: AxisRows,
    /// `1 / (scale_x · scale_y)`.
    norm: f64,
    /// Neighbour tables `(low index, low coefficient, high index, high coefficient)` per axis and
    /// position, used by [`SeparableSolver::apply`].
    neighbours: [Vec<(usize, f64, usize, f64)>; 3],
    /// Most recently used first.
    cache: Vec<ZFactors>,
    /// The x slots whose z systems this solver factorises (all but on a rank of a slab
    /// decomposition: [`SeparableSolver::restrict_to_slots`]).
    slots: Range<usize>,
}

impl fmt::Debug for SeparableSolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SeparableSolver")
            .field("cells", &self.cells)
            .field("kinds", &self.kinds)
            .field("spacing", &self.spacing)
            .field("shape", &self.m)
            .field("cached_factorisations", &self.cache.len())
            .finish()
    }
}

impl SeparableSolver {
    /// Plans the x/y transforms and the z operator of `a·φ + b·L_h φ = f` for `cells` grid cells,
    /// boundary `kinds` and grid `spacing` per axis.
    pub fn new(cells: [usize; 3], kinds: [AxisKind; 3], spacing: [f64; 3]) -> Result<Self, String> {
        for axis in 0..3 {
            let (n, kind, h) = (cells[axis], kinds[axis], spacing[axis]);
            if n < kind.min_cells() {
                return Err(format!(
                    "axis {axis}: {kind:?} needs at least {} cells, got {n}",
                    kind.min_cells()
                ));
            }
            if !(h.is_finite() && h > 0.0) {
                return Err(format!(
                    "axis {axis}: spacing must be positive and finite, got {h}"
                ));
            }
        }
        let m = [0, 1, 2].map(|a| kinds[a].unknowns(cells[a]));
        m[0].checked_mul(m[1])
            .and_then(|p| p.checked_mul(m[2]))
            .ok_or_else(|| format!("grid {m:?} is too large"))?;

        let mut fft = RealFftPlanner::<f64>::new();
        let mut dct = DctPlanner::<f64>::new();
        let tx = LineTransform::plan(kinds[0], m[0], &mut fft, &mut dct);
        let ty = LineTransform::plan(kinds[1], m[1], &mut fft, &mut dct);

        // A dense transform stores its slots permuted: each stored slot takes the eigenvalue of the
        // transform index it holds.
        let (x_mode, lambda_x) = if kinds[0] == AxisKind::Periodic {
            let n = m[0];
            let modes = (0..n).map(|s| tx.slot(s)).map(|k| k.min(n - k)).collect();
            let lambdas = (0..=n / 2)
                .map(|s| kinds[0].eigenvalue(n, s) / (spacing[0] * spacing[0]))
                .collect();
            (modes, lambdas)
        } else {
            let modes = (0..m[0]).collect();
            let lambdas = (0..m[0])
                .map(|s| kinds[0].eigenvalue(cells[0], tx.slot(s)) / (spacing[0] * spacing[0]))
                .collect();
            (modes, lambdas)
        };
        let lambda_y = (0..m[1])
            .map(|s| kinds[1].eigenvalue(cells[1], ty.slot(s)) / (spacing[1] * spacing[1]))
            .collect();
        let z_rows = AxisRows::uniform(kinds[2], m[2], spacing[2]);
        let norm = 1.0
            / (LineTransform::scale(kinds[0], cells[0]) * LineTransform::scale(kinds[1], cells[1]));
        let neighbours = [0, 1, 2].map(|axis| neighbour_table(kinds[axis], m[axis]));

        Ok(SeparableSolver {
            cells,
            kinds,
            spacing,
            m,
            tx,
            ty,
            x_mode,
            lambda_x,
            lambda_y,
            z_rows,
            norm,
            neighbours,
            cache: Vec::new(),
            slots: 0..m[0],
        })
    }

    /// Keeps the z factorisations of the x slots `slots` only (a rank of a slab decomposition
    /// solves the z lines of its own slots: its share of the memory, not the whole grid's). The
    /// solver then serves [`Self::z_sweep`] of those slots only.
    pub(crate) fn restrict_to_slots(&mut self, slots: Range<usize>) {
        let mut used: Vec<usize> = self.x_mode[slots.clone()].to_vec();
        used.sort_unstable();
        used.dedup();
        self.lambda_x = used.iter().map(|&u| self.lambda_x[u]).collect();
        for i in slots.clone() {
            self.x_mode[i] = used
                .binary_search(&self.x_mode[i])
                .expect("a mode of the slots");
        }
        self.slots = slots;
        self.cache.clear();
    }

    /// Number of unknowns per axis `[m0, m1, m2]` (see [`AxisKind::unknowns`]).
    pub fn shape(&self) -> [usize; 3] {
        self.m
    }

    /// Grid cells per axis, as given to [`SeparableSolver::new`].
    pub fn cells(&self) -> [usize; 3] {
        self.cells
    }

    /// Boundary kinds per axis, as given to [`SeparableSolver::new`].
    pub fn kinds(&self) -> [AxisKind; 3] {
        self.kinds
    }

    /// Grid spacing per axis, as given to [`SeparableSolver::new`].
    pub fn spacing(&self) -> [f64; 3] {
        self.spacing
    }

    /// Total number of unknowns `m0·m1·m2`.
    pub fn len(&self) -> usize {
        self.m[0] * self.m[1] * self.m[2]
    }

    /// Always false (every axis has at least one unknown); provided for symmetry with `len`.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held between solves: eigenvalues, stencil tables and the cached z factorisations (the
    /// per-plane transform buffers live only during a solve).
    pub fn allocated_bytes(&self) -> usize {
        let f64s = |v: &Vec<f64>| v.capacity() * std::mem::size_of::<f64>();
        let factors: usize = self
            .cache
            .iter()
            .map(|f| {
                f64s(&f.lower)
                    + f64s(&f.upper)
                    + f64s(&f.inv_pivot)
                    + f.cyclic.as_ref().map_or(0, |c| {
                        f64s(&c.z) + f64s(&c.beta_over_gamma) + f64s(&c.inv_denominator)
                    })
            })
            .sum();
        factors
            + f64s(&self.lambda_x)
            + f64s(&self.lambda_y)
            + self.x_mode.capacity() * std::mem::size_of::<usize>()
    }

    /// Whether `a·φ + b·L_h φ` is singular (constants in its null space) for this `a`.
    pub fn is_singular(&self, a: f64) -> bool {
        a == 0.0 && self.kinds.iter().all(|k| k.has_zero_mode())
    }

    /// Solves `a·φ + b·L_h φ = f` in place: `field` holds `f` on entry and `φ` on exit.
    ///
    /// When the operator is singular (`a == 0` and every axis `Periodic` or `NeumannNeumann`), the
    /// mean of `f` is discarded (the equation solved is `b·L_h φ = f - mean(f)`) and the zero-mean
    /// solution is returned; the caller must make `f` compatible (mean-free) if it needs the equation
    /// to hold with its own `f`. For `a·b > 0` the operator may be singular or ill-conditioned; the
    /// intended uses are `a = 0` (Poisson) and `a > 0, b < 0` (Helmholtz). The z factorisations for
    /// the last [`FACTOR_CACHE_LEN`] distinct `(a, b)` pairs are cached.
    ///
    /// # Panics
    /// If `field.len()` differs from the product of [`SeparableSolver::shape`], or `a == b == 0`.
    pub fn solve(&mut self, a: f64, b: f64, field: &mut [f64]) {
        assert_eq!(
            field.len(),
            self.len(),
            "SeparableSolver::solve: field has {} values, shape {:?} needs {}",
            field.len(),
            self.m,
            self.len()
        );
        assert!(
            a != 0.0 || b != 0.0,
            "SeparableSolver::solve: a and b are both zero"
        );
        assert_eq!(
            self.slots,
            0..self.m[0],
            "SeparableSolver::solve: the solver keeps the factors of some x slots only"
        );
        let singular = self.is_singular(a);
        self.ensure_factors(a, b, singular);
        let factors = &self.cache[0];
        let [m0, m1, m2] = self.m;
        let plane_len = m0 * m1;

        // Forward transforms; spectral planes are stored transposed (y slot fastest).
        field.par_chunks_mut(plane_len).for_each_init(
            || self.plane_work(),
            |work, plane| self.forward_plane(plane, work),
        );

        // The singular (λ = 0) column is solved on its own after the sweep.
        let zero_column: Option<Vec<f64>> =
            singular.then(|| (0..m2).map(|k| field[k * plane_len]).collect());

        self.z_sweep(factors, field, 0..m0);

        if let Some(column) = zero_column {
            let phi = self.solve_zero_mode(b, column);
            for (k, v) in phi.into_iter().enumerate() {
                field[k * plane_len] = v;
            }
        }

        field.par_chunks_mut(plane_len).for_each_init(
            || self.plane_work(),
            |work, plane| self.inverse_plane(plane, work),
        );
    }

    /// Applies the operator: `out = a·φ + b·L_h φ` with the boundary treatment of each axis.
    ///
    /// # Panics
    /// If `phi` or `out` does not hold exactly `m0·m1·m2` values.
    pub fn apply(&self, a: f64, b: f64, phi: &[f64], out: &mut [f64]) {
        let len = self.len();
        assert_eq!(
            phi.len(),
            len,
            "SeparableSolver::apply: phi has {} values, shape {:?} needs {len}",
            phi.len(),
            self.m
        );
        assert_eq!(
            out.len(),
            len,
            "SeparableSolver::apply: out has {} values, shape {:?} needs {len}",
            out.len(),
            self.m
        );
        let [m0, m1, _] = self.m;
        let plane_len = m0 * m1;
        let inv_h2 = self.spacing.map(|h| 1.0 / (h * h));
        let [nx, ny, nz] = &self.neighbours;
        out.par_chunks_mut(plane_len)
            .enumerate()
            .for_each(|(k, out_plane)| {
                let (kl, ckl, kh, ckh) = nz[k];
                let centre = &phi[k * plane_len..(k + 1) * plane_len];
                let below = &phi[kl * plane_len..(kl + 1) * plane_len];
                let above = &phi[kh * plane_len..(kh + 1) * plane_len];
                for j in 0..m1 {
                    let (jl, cjl, jh, cjh) = ny[j];
                    let row = &centre[j * m0..(j + 1) * m0];
                    let south = &centre[jl * m0..(jl + 1) * m0];
                    let north = &centre[jh * m0..(jh + 1) * m0];
                    let below = &below[j * m0..(j + 1) * m0];
                    let above = &above[j * m0..(j + 1) * m0];
                    let out_row = &mut out_plane[j * m0..(j + 1) * m0];
                    for i in 0..m0 {
                        let (il, cil, ih, cih) = nx[i];
                        let v = row[i];
                        let dxx = cil * row[il] - 2.0 * v + cih * row[ih];
                        let dyy = cjl * south[i] - 2.0 * v + cjh * north[i];
                        let dzz = ckl * below[i] - 2.0 * v + ckh * above[i];
                        out_row[i] =
                            a * v + b * (dxx * inv_h2[0] + dyy * inv_h2[1] + dzz * inv_h2[2]);
                    }
                }
            });
    }

    pub(crate) fn plane_work(&self) -> PlaneWork {
        PlaneWork {
            line: LineWork::new(&[self.tx.work_sizes(), self.ty.work_sizes()]),
            plane: vec![0.0; padded(self.m[0]).max(padded(self.m[1])) * self.m[0].max(self.m[1])],
            block: vec![0.0; BLOCK * self.m[0].max(self.m[1])],
        }
    }

    /// Work buffers for the line transforms alone ([`Self::forward_x_lines`] and the others),
    /// without the transposed plane of [`Self::forward_plane`].
    pub(crate) fn line_work(&self) -> PlaneWork {
        PlaneWork {
            line: LineWork::new(&[self.tx.work_sizes(), self.ty.work_sizes()]),
            plane: Vec::new(),
            block: Vec::new(),
        }
    }

    /// x transform of each row (written transposed into the work plane), then y transform of each
    /// work-plane line written back to `plane`, which ends up in the spectral layout `j + m1·i`.
    pub(crate) fn forward_plane(&self, plane: &mut [f64], work: &mut PlaneWork) {
        let [m0, m1, _] = self.m;
        let ld = padded(m1);
        let PlaneWork {
            line,
            plane: tmp,
            block,
        } = work;
        for (jb, rows) in plane.chunks_mut(BLOCK * m0).enumerate() {
            let nb = rows.len() / m0;
            self.tx.forward_lines(m0, rows, m0, block, m0, nb, line);
            transpose_block(&block[..nb * m0], nb, m0, &mut tmp[jb * BLOCK..], ld);
        }
        self.ty.forward_lines(m1, tmp, ld, plane, m1, m0, line);
    }

    /// Inverse of [`Self::forward_plane`] (up to the normalisation applied in the z sweep).
    pub(crate) fn inverse_plane(&self, plane: &mut [f64], work: &mut PlaneWork) {
        let [m0, m1, _] = self.m;
        let ld = padded(m0);
        let PlaneWork {
            line,
            plane: tmp,
            block,
        } = work;
        for (ib, cols) in plane.chunks_mut(BLOCK * m1).enumerate() {
            let nb = cols.len() / m1;
            self.ty.inverse_lines(m1, cols, m1, block, m1, nb, line);
            transpose_block(&block[..nb * m1], nb, m1, &mut tmp[ib * BLOCK..], ld);
        }
        self.tx.inverse_lines(m0, tmp, ld, plane, m0, m1, line);
    }

    /// Forward transforms along `axis` (0: x, 1: y) of `count` whole lines `src[l·m..][..m]`
    /// (clobbered) into `dst[l·m..][..m]`, as [`Self::forward_plane`] transforms each row and
    /// column (a pencil rank's lines).
    pub(crate) fn forward_lines(
        &self,
        axis: usize,
        src: &mut [f64],
        dst: &mut [f64],
        count: usize,
        work: &mut PlaneWork,
    ) {
        let (m, transform) = self.line_transform(axis);
        transform.forward_lines(m, src, m, dst, m, count, &mut work.line);
    }

    /// Inverse transforms along `axis` of `count` spectral lines (clobbered) into `dst`, as
    /// [`Self::inverse_plane`] does.
    pub(crate) fn inverse_lines(
        &self,
        axis: usize,
        src: &mut [f64],
        dst: &mut [f64],
        count: usize,
        work: &mut PlaneWork,
    ) {
        let (m, transform) = self.line_transform(axis);
        transform.inverse_lines(m, src, m, dst, m, count, &mut work.line);
    }

    fn line_transform(&self, axis: usize) -> (usize, &LineTransform) {
        match axis {
            0 => (self.m[0], &self.tx),
            1 => (self.m[1], &self.ty),
            _ => panic!("line transforms along x and y only"),
        }
    }

    /// The factorisation made current by the last [`Self::ensure_factors`].
    pub(crate) fn current_factors(&self) -> &ZFactors {
        &self.cache[0]
    }

    /// Makes `self.cache[0]` the factorisation for `(a, b)`, building it if needed.
    pub(crate) fn ensure_factors(&mut self, a: f64, b: f64, singular: bool) {
        let key = (a.to_bits(), b.to_bits());
        if let Some(pos) = self.cache.iter().position(|f| f.key == key) {
            self.cache[..=pos].rotate_right(1);
            return;
        }
        let factors = self.build_factors(a, b, singular);
        if self.cache.len() == FACTOR_CACHE_LEN {
            self.cache.pop();
        }
        self.cache.insert(0, factors);
    }

    fn build_factors(&self, a: f64, b: f64, singular: bool) -> ZFactors {
        let m1 = self.m[1];
        let m2 = self.m[2];
        let modes = self.lambda_x.len() * m1;
        let rows = &self.z_rows;
        let lower: Vec<f64> = rows.lower.iter().map(|&l| b * l).collect();
        let upper: Vec<f64> = rows.upper.iter().map(|&u| b * u).collect();

        // Diagonal a + bλ_xy of every mode. The singular mode (λ = 0 with a = 0) gets a harmless
        // shift so that its factors stay finite; that column is re-solved by `solve_zero_mode`.
        let mut base = Vec::with_capacity(modes);
        for &lx in &self.lambda_x {
            for &ly in &self.lambda_y {
                base.push(a + b * (lx + ly));
            }
        }
        // The singular mode is x slot 0's (and y slot 0's): held where the slots start at 0.
        if singular && self.slots.start == 0 {
            base[0] -= b / (self.spacing[2] * self.spacing[2]);
        }
        let diag_at = |k: usize, u: usize| base[u] + b * rows.diag[k];

        let periodic = self.kinds[2] == AxisKind::Periodic;
        // Sherman–Morrison split for a periodic z: γ = -d_0, B = A - u vᵀ.
        let gamma: Vec<f64> = if periodic {
            (0..modes)
                .map(|u| {
                    let d0 = diag_at(0, u);
                    if d0 != 0.0 {
                        -d0
                    } else {
                        1.0
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        // Corners: α = A[m-1][0], β = A[0][m-1].
        let alpha = upper[m2 - 1];
        let beta = lower[0];
        let b_diag = |k: usize, u: usize| {
            let mut d = diag_at(k, u);
            if periodic {
                if k == 0 {
                    d -= gamma[u];
                }
                if k == m2 - 1 {
                    d -= alpha * beta / gamma[u];
                }
            }
            d
        };

        let mut inv_pivot = vec![0.0; m2 * modes];
        for u in 0..modes {
            inv_pivot[u] = 1.0 / b_diag(0, u);
        }
        for k in 1..m2 {
            let coupling = lower[k] * upper[k - 1];
            let (done, rest) = inv_pivot.split_at_mut(k * modes);
            let prev = &done[(k - 1) * modes..];
            for (u, (g, &gp)) in rest[..modes].iter_mut().zip(prev).enumerate() {
                *g = 1.0 / (b_diag(k, u) - coupling * gp);
            }
        }

        let cyclic = periodic.then(|| {
            // z = B⁻¹u with u = (γ, 0, .., α).
            let mut z = vec![0.0; m2 * modes];
            for u in 0..modes {
                z[u] = gamma[u] * inv_pivot[u];
            }
            for k in 1..m2 {
                let rhs_last = if k == m2 - 1 { alpha } else { 0.0 };
                let (done, rest) = z.split_at_mut(k * modes);
                let prev = &done[(k - 1) * modes..];
                let g = &inv_pivot[k * modes..(k + 1) * modes];
                for u in 0..modes {
                    rest[u] = (rhs_last - lower[k] * prev[u]) * g[u];
                }
            }
            for k in (0..m2 - 1).rev() {
                let (head, tail) = z.split_at_mut((k + 1) * modes);
                let cur = &mut head[k * modes..];
                let g = &inv_pivot[k * modes..(k + 1) * modes];
                for u in 0..modes {
                    cur[u] -= upper[k] * g[u] * tail[u];
                }
            }
            let beta_over_gamma: Vec<f64> = gamma.iter().map(|&g| beta / g).collect();
            let inv_denominator = (0..modes)
                .map(|u| 1.0 / (1.0 + z[u] + beta_over_gamma[u] * z[(m2 - 1) * modes + u]))
                .collect();
            CyclicFactors {
                z,
                beta_over_gamma,
                inv_denominator,
            }
        });

        ZFactors {
            key: (a.to_bits(), b.to_bits()),
            lower,
            upper,
            inv_pivot,
            cyclic,
        }
    }

    /// Tridiagonal solves along z for every (x slot, y slot) of the x slots `slots`, on the
    /// transposed spectral layout `j + m1·(i - slots.start + slots.len()·k)` (all x slots and the
    /// serial layout for `0..m0`; one block of x slots with every z plane in a slab decomposition);
    /// also applies the transform normalisation.
    pub(crate) fn z_sweep(&self, factors: &ZFactors, field: &mut [f64], slots: Range<usize>) {
        self.z_sweep_block(factors, field, slots, 0..self.m[1]);
    }

    /// [`Self::z_sweep`] of the y slots `y_slots` only, on the layout
    /// `(j - y_slots.start) + |y_slots|·(i - slots.start + |slots|·k)` (a rank of a pencil
    /// decomposition holds a block of x slots and a block of y slots with every z plane). Each
    /// value goes through the arithmetic of the whole sweep.
    pub(crate) fn z_sweep_block(
        &self,
        factors: &ZFactors,
        field: &mut [f64],
        slots: Range<usize>,
        y_slots: Range<usize>,
    ) {
        let [_, m1, m2] = self.m;
        let width = slots.len();
        let row = y_slots.len();
        assert!(y_slots.end <= m1, "z_sweep: y slots {y_slots:?} of {m1}");
        assert_eq!(
            field.len(),
            width * row * m2,
            "z_sweep: field and slots disagree"
        );
        assert!(
            self.slots.start <= slots.start && slots.end <= self.slots.end,
            "z_sweep: slots {slots:?} outside the factorised {:?}",
            self.slots
        );
        let modes = self.lambda_x.len() * m1;
        let norm = self.norm;
        // Rows of the y slots' values, grouped by x slot i, in k order.
        let mut groups: Vec<Vec<&mut [f64]>> = (0..width).map(|_| Vec::with_capacity(m2)).collect();
        for (r, values) in field.chunks_exact_mut(row).enumerate() {
            groups[r % width].push(values);
        }
        groups.par_iter_mut().enumerate().for_each_init(
            || vec![0.0; row],
            |t, (i, rows)| {
                let offset = self.x_mode[slots.start + i] * m1 + y_slots.start;
                let g_row = |k: usize| &factors.inv_pivot[k * modes + offset..][..row];
                // Forward elimination.
                for (v, &g) in rows[0].iter_mut().zip(g_row(0)) {
                    *v = *v * norm * g;
                }
                for k in 1..m2 {
                    let (head, tail) = rows.split_at_mut(k);
                    let prev: &[f64] = head[k - 1];
                    let lower = factors.lower[k];
                    for ((v, &p), &g) in tail[0].iter_mut().zip(prev).zip(g_row(k)) {
                        *v = (*v * norm - lower * p) * g;
                    }
                }
                // Back substitution.
                for k in (0..m2 - 1).rev() {
                    let (head, tail) = rows.split_at_mut(k + 1);
                    let next: &[f64] = tail[0];
                    let upper = factors.upper[k];
                    for ((v, &nx), &g) in head[k].iter_mut().zip(next).zip(g_row(k)) {
                        *v -= upper * g * nx;
                    }
                }
                // Sherman–Morrison correction: x = y - (vᵀy / (1 + vᵀz)) z.
                if let Some(cyc) = &factors.cyclic {
                    let bg = &cyc.beta_over_gamma[offset..][..row];
                    let inv_den = &cyc.inv_denominator[offset..][..row];
                    for j in 0..row {
                        t[j] = (rows[0][j] + bg[j] * rows[m2 - 1][j]) * inv_den[j];
                    }
                    for (k, values) in rows.iter_mut().enumerate() {
                        let z = &cyc.z[k * modes + offset..][..row];
                        for ((v, &zk), &tj) in values.iter_mut().zip(z).zip(t.iter()) {
                            *v -= tj * zk;
                        }
                    }
                }
            },
        );
    }

    /// Solves the singular λ_xy = 0 column (`a = 0`, z `Periodic` or `NeumannNeumann`): the
    /// right-hand side is made mean-free, φ_0 is pinned to zero while rows 1..m-1 are solved (row 0
    /// then holds by compatibility), and the mean of φ is removed.
    pub(crate) fn solve_zero_mode(&self, b: f64, column: Vec<f64>) -> Vec<f64> {
        let m2 = column.len();
        let mut rhs: Vec<f64> = column.into_iter().map(|v| v * self.norm).collect();
        let mean = rhs.iter().sum::<f64>() / m2 as f64;
        for v in &mut rhs {
            *v -= mean;
        }
        let rows = &self.z_rows;
        let mut phi = vec![0.0; m2];
        if m2 > 1 {
            // Rows 1..m-1 with couplings to φ_0 dropped (φ_0 = 0).
            let lower: Vec<f64> = (1..m2).map(|k| b * rows.lower[k]).collect();
            let diag: Vec<f64> = (1..m2).map(|k| b * rows.diag[k]).collect();
            let upper: Vec<f64> = (1..m2).map(|k| b * rows.upper[k]).collect();
            phi[1..].copy_from_slice(&rhs[1..]);
            thomas(&lower, &diag, &upper, &mut phi[1..]);
        }
        let mean = phi.iter().sum::<f64>() / m2 as f64;
        for v in &mut phi {
            *v -= mean;
        }
        phi
    }
}

/// Solves a tridiagonal system in place (`lower[0]` and `upper[n-1]` are ignored).
fn thomas(lower: &[f64], diag: &[f64], upper: &[f64], rhs: &mut [f64]) {
    let n = rhs.len();
    let mut c = vec![0.0; n];
    let mut pivot = diag[0];
    rhs[0] /= pivot;
    for k in 1..n {
        c[k - 1] = upper[k - 1] / pivot;
        pivot = diag[k] - lower[k] * c[k - 1];
        rhs[k] = (rhs[k] - lower[k] * rhs[k - 1]) / pivot;
    }
    for k in (0..n.saturating_sub(1)).rev() {
        rhs[k] -= c[k] * rhs[k + 1];
    }
}

/// Neighbour table of one axis: `(low index, low coefficient, high index, high coefficient)` so that
/// `φ_{p-1} = low coefficient · φ[low index]` (ghost relations included), likewise for `φ_{p+1}`.
pub(crate) fn neighbour_table(kind: AxisKind, m: usize) -> Vec<(usize, f64, usize, f64)> {
    let (glo, ghi) = kind.ghost_coefficients();
    (0..m)
        .map(|p| {
            let low = if p > 0 {
                (p - 1, 1.0)
            } else if kind == AxisKind::Periodic {
                (m - 1, 1.0)
            } else {
                (0, glo)
            };
            let high = if p + 1 < m {
                (p + 1, 1.0)
            } else if kind == AxisKind::Periodic {
                (0, 1.0)
            } else {
                (m - 1, ghi)
            };
            (low.0, low.1, high.0, high.1)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{max_abs, Lcg};
    use std::f64::consts::PI;

    /// Max |p - q|, NaN if any difference is NaN.
    fn max_diff(p: &[f64], q: &[f64]) -> f64 {
        let d: Vec<f64> = p.iter().zip(q).map(|(x, y)| x - y).collect();
        max_abs(&d)
    }

    fn mean(v: &[f64]) -> f64 {
        v.iter().sum::<f64>() / v.len() as f64
    }

    const SPACING: [f64; 3] = [0.1, 0.2, 0.15];

    /// Solves with random f and checks the residual; returns the max relative residual.
    fn check_solve(cells: [usize; 3], kinds: [AxisKind; 3], a: f64, b: f64, seed: u64) -> f64 {
        let mut solver = SeparableSolver::new(cells, kinds, SPACING).unwrap();
        let len = solver.len();
        let mut f = Lcg(seed).vec(len);
        let singular = solver.is_singular(a);
        if singular {
            let mu = mean(&f);
            f.iter_mut().for_each(|v| *v -= mu);
        }
        let mut phi = f.clone();
        solver.solve(a, b, &mut phi);
        let mut r = vec![0.0; len];
        solver.apply(a, b, &phi, &mut r);
        let res = max_diff(&r, &f) / max_abs(&f);
        assert!(
            res <= 1e-12,
            "residual {res:e} for cells {cells:?} kinds {kinds:?} a={a} b={b}"
        );
        if singular {
            let mu = mean(&phi);
            assert!(
                mu.abs() <= 1e-12 * max_abs(&phi),
                "mean {mu:e} of phi for {kinds:?}"
            );
        }
        res
    }

    #[test]
    fn unknowns_and_errors() {
        assert_eq!(AxisKind::Periodic.unknowns(8), 8);
        assert_eq!(AxisKind::DirichletNodes.unknowns(8), 7);
        let p = AxisKind::Periodic;
        assert!(SeparableSolver::new([1, 4, 4], [p; 3], [1.0; 3]).is_err());
        assert!(SeparableSolver::new([2, 2, 2], [p; 3], [1.0; 3]).is_ok());
        let nodes = [p, p, AxisKind::DirichletNodes];
        assert!(SeparableSolver::new([4, 4, 2], nodes, [1.0; 3]).is_err());
        assert_eq!(
            SeparableSolver::new([4, 5, 3], nodes, [1.0; 3])
                .unwrap()
                .shape(),
            [4, 5, 2]
        );
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(SeparableSolver::new([4, 4, 4], [p; 3], [1.0, bad, 1.0]).is_err());
        }
    }

    /// Analytic eigenpairs `(vector over p = 0..m, eigenvalue of φ_{p-1} - 2φ_p + φ_{p+1})` of an
    /// axis of `n` cells, written from the formulas in the `AxisKind` documentation.
    fn analytic_modes(kind: AxisKind, n: usize) -> Vec<(Vec<f64>, f64)> {
        let nf = n as f64;
        let m = kind.unknowns(n);
        let sample = |f: &dyn Fn(f64) -> f64| (0..m).map(|p| f(p as f64)).collect::<Vec<_>>();
        let mut modes = Vec::new();
        for k in 0..m {
            let kf = k as f64;
            match kind {
                AxisKind::Periodic => {
                    let lam = 2.0 * ((2.0 * PI * kf / nf).cos() - 1.0);
                    modes.push((sample(&|p| (2.0 * PI * kf * p / nf).cos()), lam));
                    modes.push((sample(&|p| (2.0 * PI * kf * p / nf).sin()), lam));
                }
                AxisKind::NeumannNeumann => modes.push((
                    sample(&|p| (PI * kf * (2.0 * p + 1.0) / (2.0 * nf)).cos()),
                    2.0 * ((PI * kf / nf).cos() - 1.0),
                )),
                AxisKind::DirichletDirichlet => modes.push((
                    sample(&|p| (PI * (kf + 1.0) * (2.0 * p + 1.0) / (2.0 * nf)).sin()),
                    2.0 * ((PI * (kf + 1.0) / nf).cos() - 1.0),
                )),
                AxisKind::NeumannDirichlet => modes.push((
                    sample(&|p| (PI * (2.0 * kf + 1.0) * (2.0 * p + 1.0) / (4.0 * nf)).cos()),
                    2.0 * ((PI * (2.0 * kf + 1.0) / (2.0 * nf)).cos() - 1.0),
                )),
                AxisKind::DirichletNeumann => modes.push((
                    sample(&|p| (PI * (2.0 * kf + 1.0) * (2.0 * p + 1.0) / (4.0 * nf)).sin()),
                    2.0 * ((PI * (2.0 * kf + 1.0) / (2.0 * nf)).cos() - 1.0),
                )),
                AxisKind::DirichletNodes => modes.push((
                    sample(&|p| (PI * (kf + 1.0) * (p + 1.0) / nf).sin()),
                    2.0 * ((PI * (kf + 1.0) / nf).cos() - 1.0),
                )),
            }
        }
        modes
    }

    /// Analytic eigenvectors applied through `apply`: checks the stencil (with its ghost relations)
    /// and the eigenvalue formulas used by the solver.
    #[test]
    fn eigenvalues_match_operator() {
        for kind in AxisKind::ALL {
            for n in [6usize, 7, 8, 9] {
                let modes = analytic_modes(kind, n);
                for axis in 0..3 {
                    let mut kinds = [AxisKind::Periodic; 3];
                    kinds[axis] = kind;
                    let mut cells = [3, 4, 5];
                    cells[axis] = n;
                    let solver = SeparableSolver::new(cells, kinds, SPACING).unwrap();
                    let shape = solver.shape();
                    let h2 = SPACING[axis] * SPACING[axis];
                    for (s, (basis, lam)) in modes.iter().enumerate() {
                        // Constant along the other (periodic) axes, whose eigenvalue is then 0.
                        let mut phi = vec![0.0; solver.len()];
                        for k in 0..shape[2] {
                            for j in 0..shape[1] {
                                for i in 0..shape[0] {
                                    phi[i + shape[0] * (j + shape[1] * k)] = basis[[i, j, k][axis]];
                                }
                            }
                        }
                        let mut out = vec![0.0; phi.len()];
                        solver.apply(0.0, 1.0, &phi, &mut out);
                        let expect: Vec<f64> = phi.iter().map(|v| lam / h2 * v).collect();
                        let err = max_diff(&out, &expect);
                        assert!(
                            err <= 1e-10 / h2,
                            "{kind:?} n={n} axis={axis} mode {s}: error {err:e}"
                        );
                        // The solver's eigenvalue table agrees: bounded kinds have one mode per
                        // slot, periodic ones two per wavenumber (slots k and n - k).
                        if kind != AxisKind::Periodic {
                            assert!((kind.eigenvalue(n, s) - lam).abs() < 1e-14);
                        } else {
                            let k = s / 2;
                            assert!((kind.eigenvalue(n, k) - lam).abs() < 1e-14);
                            assert!((kind.eigenvalue(n, (n - k) % n) - lam).abs() < 1e-14);
                        }
                    }
                }
            }
        }
    }

    /// `apply` against an independent ghost-padded 7-point stencil.
    #[test]
    fn apply_matches_padded_stencil() {
        use AxisKind::*;
        let mut rng = Lcg(7);
        for kind in AxisKind::ALL {
            let combos = [
                [kind, Periodic, NeumannNeumann],
                [Periodic, kind, DirichletDirichlet],
                [DirichletNeumann, NeumannDirichlet, kind],
                [kind, DirichletNodes, kind],
            ];
            for kinds in combos {
                let cells = [6, 7, 5];
                let solver = SeparableSolver::new(cells, kinds, SPACING).unwrap();
                let m = solver.shape();
                let phi = rng.vec(solver.len());
                // Padded array with one ghost layer on each side.
                let p = [m[0] + 2, m[1] + 2, m[2] + 2];
                let mut pad = vec![0.0; p[0] * p[1] * p[2]];
                let at = |i: usize, j: usize, k: usize| i + p[0] * (j + p[1] * k);
                for k in 0..m[2] {
                    for j in 0..m[1] {
                        for i in 0..m[0] {
                            pad[at(i + 1, j + 1, k + 1)] = phi[i + m[0] * (j + m[1] * k)];
                        }
                    }
                }
                // Ghost value for the ghost slot next to interior slot `inner` (padded indices),
                // given the slot on the far side for periodic wrap.
                let ghost = |kind: AxisKind, low: bool, inner: f64, wrap: f64| match (kind, low) {
                    (Periodic, _) => wrap,
                    (NeumannNeumann, _) | (NeumannDirichlet, true) | (DirichletNeumann, false) => {
                        inner
                    }
                    (DirichletDirichlet, _)
                    | (NeumannDirichlet, false)
                    | (DirichletNeumann, true) => -inner,
                    (DirichletNodes, _) => 0.0,
                };
                // Fill ghosts axis by axis (only face ghosts are used by the 7-point stencil).
                for k in 1..=m[2] {
                    for j in 1..=m[1] {
                        let (lo, hi) = (pad[at(1, j, k)], pad[at(m[0], j, k)]);
                        pad[at(0, j, k)] = ghost(kinds[0], true, lo, hi);
                        pad[at(m[0] + 1, j, k)] = ghost(kinds[0], false, hi, lo);
                    }
                }
                for k in 1..=m[2] {
                    for i in 1..=m[0] {
                        let (lo, hi) = (pad[at(i, 1, k)], pad[at(i, m[1], k)]);
                        pad[at(i, 0, k)] = ghost(kinds[1], true, lo, hi);
                        pad[at(i, m[1] + 1, k)] = ghost(kinds[1], false, hi, lo);
                    }
                }
                for j in 1..=m[1] {
                    for i in 1..=m[0] {
                        let (lo, hi) = (pad[at(i, j, 1)], pad[at(i, j, m[2])]);
                        pad[at(i, j, 0)] = ghost(kinds[2], true, lo, hi);
                        pad[at(i, j, m[2] + 1)] = ghost(kinds[2], false, hi, lo);
                    }
                }
                let (a, b) = (0.7, -1.3);
                let mut out = vec![0.0; solver.len()];
                solver.apply(a, b, &phi, &mut out);
                let mut err = 0.0f64;
                let mut scale = 0.0f64;
                for k in 1..=m[2] {
                    for j in 1..=m[1] {
                        for i in 1..=m[0] {
                            let c = pad[at(i, j, k)];
                            let lap = (pad[at(i - 1, j, k)] - 2.0 * c + pad[at(i + 1, j, k)])
                                / (SPACING[0] * SPACING[0])
                                + (pad[at(i, j - 1, k)] - 2.0 * c + pad[at(i, j + 1, k)])
                                    / (SPACING[1] * SPACING[1])
                                + (pad[at(i, j, k - 1)] - 2.0 * c + pad[at(i, j, k + 1)])
                                    / (SPACING[2] * SPACING[2]);
                            let expect = a * c + b * lap;
                            let got = out[(i - 1) + m[0] * ((j - 1) + m[1] * (k - 1))];
                            err = err.max((got - expect).abs());
                            scale = scale.max(expect.abs());
                        }
                    }
                }
                assert!(err <= 1e-13 * scale, "{kinds:?}: error {err:e}");
            }
        }
    }

    /// Forward transforms against their defining sums, and forward∘inverse = `scale`·identity, for
    /// small and large, odd and even lengths (the planners pick different algorithms by length),
    /// with work buffers that start out as NaN and are reused (stale scratch must not leak in).
    #[test]
    fn transforms_match_definitions_and_round_trip() {
        let mut fft = RealFftPlanner::<f64>::new();
        let mut dct = DctPlanner::<f64>::new();
        let mut rng = Lcg(3);
        let sizes = [
            3usize, 4, 5, 6, 7, 8, 9, 16, 17, 25, 26, 27, 30, 31, 64, 100, 127, 128, 129,
        ];
        for kind in AxisKind::ALL {
            for n in sizes {
                let m = kind.unknowns(n);
                let t = LineTransform::plan(kind, m, &mut fft, &mut dct);
                let mut work = LineWork::new(&[t.work_sizes()]);
                work.spectrum.fill(Complex::new(f64::NAN, f64::NAN));
                work.complex_scratch.fill(Complex::new(f64::NAN, f64::NAN));
                work.real_scratch.fill(f64::NAN);
                let nf = n as f64;
                for _ in 0..3 {
                    let x = rng.vec(m);
                    let mut y = x.clone();
                    t.forward(&mut y, &mut work);
                    for (stored, &ys) in y.iter().enumerate() {
                        let s = t.slot(stored);
                        let sf = s as f64;
                        let expect: f64 = x
                            .iter()
                            .enumerate()
                            .map(|(p, &xp)| {
                                let pf = p as f64;
                                xp * match kind {
                                    AxisKind::Periodic if s <= n / 2 => {
                                        (2.0 * PI * pf * sf / nf).cos()
                                    }
                                    AxisKind::Periodic => -(2.0 * PI * pf * (nf - sf) / nf).sin(),
                                    AxisKind::NeumannNeumann => {
                                        (PI * sf * (2.0 * pf + 1.0) / (2.0 * nf)).cos()
                                    }
                                    AxisKind::DirichletDirichlet => {
                                        (PI * (sf + 1.0) * (2.0 * pf + 1.0) / (2.0 * nf)).sin()
                                    }
                                    AxisKind::NeumannDirichlet => {
                                        (PI * (2.0 * sf + 1.0) * (2.0 * pf + 1.0) / (4.0 * nf))
                                            .cos()
                                    }
                                    AxisKind::DirichletNeumann => {
                                        (PI * (2.0 * sf + 1.0) * (2.0 * pf + 1.0) / (4.0 * nf))
                                            .sin()
                                    }
                                    AxisKind::DirichletNodes => {
                                        (PI * (sf + 1.0) * (pf + 1.0) / nf).sin()
                                    }
                                }
                            })
                            .sum();
                        assert!(
                            (ys - expect).abs() < 1e-12 * nf,
                            "{kind:?} n={n} slot {s}: {ys} vs {expect}"
                        );
                    }
                    t.inverse(&mut y, &mut work);
                    let scale = LineTransform::scale(kind, n);
                    for (xi, yi) in x.iter().zip(&y) {
                        assert!(
                            (yi / scale - xi).abs() < 1e-13,
                            "{kind:?} n={n}: round trip"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn residual_each_kind_on_each_axis() {
        let mut seed = 1;
        for axis in 0..3 {
            for kind in AxisKind::ALL {
                for n in [6usize, 7, 8, 9] {
                    let mut kinds = [AxisKind::Periodic; 3];
                    kinds[axis] = kind;
                    let mut cells = [7, 6, 5];
                    cells[axis] = n;
                    for (a, b) in [(0.0, 1.0), (1.0, -0.3)] {
                        seed += 1;
                        check_solve(cells, kinds, a, b, seed);
                    }
                }
            }
        }
    }

    #[test]
    fn residual_mixed_combinations() {
        use AxisKind::*;
        let combos = [
            [Periodic, Periodic, NeumannNeumann],
            [NeumannNeumann, NeumannDirichlet, DirichletNodes],
            [DirichletDirichlet, Periodic, DirichletNodes],
            [DirichletNodes, DirichletNodes, DirichletNodes],
            [NeumannNeumann, NeumannNeumann, NeumannNeumann],
            [Periodic, NeumannNeumann, Periodic],
            [DirichletNeumann, DirichletDirichlet, NeumannDirichlet],
            [NeumannDirichlet, DirichletNodes, DirichletNeumann],
            [Periodic, Periodic, Periodic],
            [Periodic, DirichletNodes, DirichletDirichlet],
        ];
        let mut seed = 100;
        for kinds in combos {
            for cells in [[6, 7, 8], [9, 8, 7], [7, 9, 6], [3, 2, 3], [2, 3, 2]] {
                if (0..3).any(|a| cells[a] < kinds[a].min_cells()) {
                    continue;
                }
                for (a, b) in [(0.0, 1.0), (1.0, -0.3)] {
                    seed += 1;
                    check_solve(cells, kinds, a, b, seed);
                }
            }
        }
    }

    /// Grids large enough for the planners to choose their FFT-based algorithms.
    #[test]
    fn residual_larger_grids() {
        use AxisKind::*;
        let combos = [
            [Periodic, Periodic, Periodic],
            [NeumannNeumann, DirichletDirichlet, NeumannNeumann],
            [NeumannDirichlet, DirichletNeumann, DirichletNodes],
            [DirichletNodes, Periodic, Periodic],
            [Periodic, DirichletNodes, NeumannDirichlet],
        ];
        let mut seed = 500;
        for kinds in combos {
            for cells in [[32, 30, 27], [27, 33, 26]] {
                for (a, b) in [(0.0, 1.0), (1.0, -0.3)] {
                    seed += 1;
                    check_solve(cells, kinds, a, b, seed);
                }
            }
        }
    }

    /// Axes long enough, with a large enough prime factor, for dense transforms (37 = prime, 43,
    /// 2·19 + 1 nodes = 38 cells → 37 unknowns): every kind on x and on y.
    #[test]
    fn residual_dense_axes() {
        use AxisKind::*;
        let mut seed = 900;
        for kind in AxisKind::ALL {
            for (cells, kinds) in [
                ([37, 6, 5], [kind, Periodic, NeumannNeumann]),
                ([5, 43, 6], [NeumannNeumann, kind, DirichletNodes]),
                ([74, 37, 4], [kind, kind, Periodic]),
            ] {
                let solver = SeparableSolver::new(cells, kinds, SPACING).unwrap();
                let dense = |t: &LineTransform| matches!(t, LineTransform::Dense(_));
                assert!(
                    dense(&solver.tx) || cells[0] < 37,
                    "{cells:?} {kinds:?}: dense x"
                );
                assert!(
                    dense(&solver.ty) || cells[1] < 37,
                    "{cells:?} {kinds:?}: dense y"
                );
                for (a, b) in [(0.0, 1.0), (1.0, -0.3)] {
                    seed += 1;
                    check_solve(cells, kinds, a, b, seed);
                }
            }
        }
    }

    /// Singular problems discard the mean of f: the result solves the equation with f - mean(f).
    #[test]
    fn singular_discards_mean() {
        use AxisKind::*;
        for kinds in [[Periodic; 3], [NeumannNeumann, Periodic, NeumannNeumann]] {
            let mut solver = SeparableSolver::new([6, 5, 7], kinds, SPACING).unwrap();
            let f: Vec<f64> = Lcg(11).vec(solver.len()).iter().map(|v| v + 3.0).collect();
            let mut phi = f.clone();
            solver.solve(0.0, 1.0, &mut phi);
            let mut r = vec![0.0; f.len()];
            solver.apply(0.0, 1.0, &phi, &mut r);
            let mu = mean(&f);
            let shifted: Vec<f64> = f.iter().map(|y| y - mu).collect();
            let err = max_diff(&r, &shifted);
            assert!(err <= 1e-12 * max_abs(&f), "{kinds:?}: {err:e}");
            assert!(mean(&phi).abs() <= 1e-12 * max_abs(&phi));
        }
    }

    /// Alternating (a, b) pairs through the cache gives the same bits as a fresh solver.
    #[test]
    fn factor_cache_is_transparent() {
        use AxisKind::*;
        let kinds = [Periodic, NeumannNeumann, Periodic];
        let cells = [8, 7, 6];
        let mut cached = SeparableSolver::new(cells, kinds, SPACING).unwrap();
        let f = Lcg(5).vec(cached.len());
        let pairs: Vec<(f64, f64)> = (0..9).map(|s| (1.0, -0.01 * (s + 1) as f64)).collect();
        for round in 0..2 {
            for &(a, b) in pairs.iter().chain([(0.0, 1.0)].iter()) {
                let mut x = f.clone();
                cached.solve(a, b, &mut x);
                let mut y = f.clone();
                SeparableSolver::new(cells, kinds, SPACING)
                    .unwrap()
                    .solve(a, b, &mut y);
                assert!(
                    x.iter().zip(&y).all(|(p, q)| p.to_bits() == q.to_bits()),
                    "round {round} a={a} b={b}"
                );
                assert!(cached.cache.len() <= FACTOR_CACHE_LEN);
            }
        }
    }

    #[test]
    fn bit_identical_across_thread_counts() {
        use AxisKind::*;
        let cases = [
            ([16, 12, 10], [Periodic, Periodic, Periodic]),
            (
                [9, 10, 11],
                [NeumannNeumann, DirichletNeumann, DirichletNodes],
            ),
            ([12, 9, 8], [Periodic, NeumannNeumann, NeumannNeumann]),
            ([37, 43, 7], [NeumannNeumann, Periodic, NeumannNeumann]),
            ([38, 37, 6], [DirichletNodes, DirichletDirichlet, Periodic]),
        ];
        for (cells, kinds) in cases {
            for (a, b) in [(0.0, 1.0), (1.0, -0.3)] {
                let run = |threads: usize| {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap();
                    pool.install(|| {
                        let mut solver = SeparableSolver::new(cells, kinds, SPACING).unwrap();
                        let mut x = Lcg(9).vec(solver.len());
                        solver.solve(a, b, &mut x);
                        let mut y = vec![0.0; x.len()];
                        solver.apply(a, b, &x, &mut y);
                        (x, y)
                    })
                };
                let (x1, y1) = run(1);
                let (x2, y2) = run(2);
                let same =
                    |p: &[f64], q: &[f64]| p.iter().zip(q).all(|(u, v)| u.to_bits() == v.to_bits());
                assert!(same(&x1, &x2), "solve differs: {kinds:?}");
                assert!(same(&y1, &y2), "apply differs: {kinds:?}");
            }
        }
    }

    /// Periodic Poisson with f = -3 sin x sin y sin z: second-order convergence to sin x sin y sin z.
    #[test]
    fn second_order_convergence() {
        let error = |n: usize| {
            let h = 2.0 * PI / n as f64;
            let mut solver = SeparableSolver::new([n; 3], [AxisKind::Periodic; 3], [h; 3]).unwrap();
            let x: Vec<f64> = (0..n).map(|i| (i as f64 + 0.5) * h).collect();
            let exact: Vec<f64> = (0..n * n * n)
                .map(|p| x[p % n].sin() * x[(p / n) % n].sin() * x[p / (n * n)].sin())
                .collect();
            let mut phi: Vec<f64> = exact.iter().map(|e| -3.0 * e).collect();
            solver.solve(0.0, 1.0, &mut phi);
            max_diff(&phi, &exact)
        };
        let (e16, e32) = (error(16), error(32));
        let ratio = e16 / e32;
        assert!(e16 < 0.02, "error at n = 16: {e16}");
        assert!(
            (3.8..4.2).contains(&ratio),
            "ratio {ratio} ({e16:e}, {e32:e})"
        );
    }

    /// Timing of 128³ solves (best and mean of 10 after a warm-up solve that builds the z
    /// factorisation); run with
    /// `cargo test --release -p silt-fluid timing_128 -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn timing_128() {
        use std::time::Instant;
        use AxisKind::*;
        let cases = [
            [Periodic, Periodic, Periodic],
            [Periodic, Periodic, NeumannNeumann],
            [Periodic, Periodic, DirichletNodes],
            [DirichletNodes, Periodic, NeumannNeumann],
            [Periodic, DirichletNodes, DirichletDirichlet],
            [NeumannNeumann, NeumannDirichlet, DirichletNodes],
        ];
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                for kinds in cases {
                    let h = 1.0 / 128.0;
                    let mut solver = SeparableSolver::new([128; 3], kinds, [h; 3]).unwrap();
                    let f = Lcg(1).vec(solver.len());
                    for (a, b) in [(0.0, 1.0), (1.0, -0.01)] {
                        let mut x = f.clone();
                        let t = Instant::now();
                        solver.solve(a, b, &mut x);
                        let first = t.elapsed().as_secs_f64() * 1e3;
                        let reps = 10;
                        let (mut best, mut total) = (f64::MAX, 0.0);
                        for _ in 0..reps {
                            x.copy_from_slice(&f);
                            let t = Instant::now();
                            solver.solve(a, b, &mut x);
                            let dt = t.elapsed().as_secs_f64() * 1e3;
                            best = best.min(dt);
                            total += dt;
                        }
                        let mut r = vec![0.0; x.len()];
                        solver.apply(a, b, &x, &mut r);
                        let mut fm = f.clone();
                        if solver.is_singular(a) {
                            let mu = mean(&fm);
                            fm.iter_mut().for_each(|v| *v -= mu);
                        }
                        let res = max_diff(&r, &fm) / max_abs(&fm);
                        assert!(res < 1e-12, "residual {res:e}");
                        println!(
                            "threads {threads} {kinds:?} a={a} b={b}: best {best:.1} ms, mean {:.1} \
                             ms (first, with factorisation: {first:.1} ms), residual {res:.1e}",
                            total / reps as f64
                        );
                    }
                }
            });
        }
    }
}
