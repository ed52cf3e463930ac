//! Four double-precision lanes for kernels that treat four independent items (pairs, particles) at once.
//!
//! A kernel is written once, generic over [`Lanes`], and [`with_lanes`] runs it with the best backend of
//! the processor: AVX2 instructions ([`Avx4`], one instruction per operation on four lanes) where the
//! processor has them, plain arrays ([`F64x4`]) otherwise. Every operation is the scalar IEEE operation on
//! each lane, in the order written (no fused multiply-add), so a kernel written with lanes gives the
//! same bits as the same kernel written with scalars, on either backend.

use crate::Vec3;
use std::array::from_fn;
use std::ops::{Add, BitAnd, BitOr, Div, Mul, Neg, Not, Sub};

/// Number of lanes.
pub const LANES: usize = 4;

/// Four f64 lanes with lane-wise IEEE arithmetic, comparisons and selection.
pub trait Lanes:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + Mul<Vec3Lanes<Self>, Output = Vec3Lanes<Self>>
{
    /// Four booleans.
    type Mask: Copy
        + BitAnd<Output = Self::Mask>
        + BitOr<Output = Self::Mask>
        + Not<Output = Self::Mask>;
    /// What makes lanes: a token that the instructions exist.
    type Maker: Copy;

    fn splat(maker: Self::Maker, value: f64) -> Self;
    fn from_array(maker: Self::Maker, values: [f64; LANES]) -> Self;
    fn to_array(self) -> [f64; LANES];
    fn sqrt(self) -> Self;
    fn abs(self) -> Self;
    /// Lane-wise round towards −∞.
    fn floor(self) -> Self;
    /// Each lane truncated to an integer (lanes from 0 to `i32::MAX`): table indices.
    fn to_indices(self) -> [u32; LANES];
    /// Each lane rounded to single precision (to nearest, ties to even).
    fn to_f32(self) -> [f32; LANES];
    /// Single-precision values widened (exactly).
    fn from_f32(maker: Self::Maker, values: [f32; LANES]) -> Self;
    /// Lane-wise `self > other`.
    fn gt(self, other: Self) -> Self::Mask;
    /// Lane-wise `self >= other`.
    fn ge(self, other: Self) -> Self::Mask;
    /// Lane k is `if mask[k] { a[k] } else { b[k] }`.
    fn select(mask: Self::Mask, a: Self, b: Self) -> Self;
    fn mask_from_array(maker: Self::Maker, values: [bool; LANES]) -> Self::Mask;
    fn mask_to_array(mask: Self::Mask) -> [bool; LANES];
    /// True when some lane of `mask` is set.
    fn any(mask: Self::Mask) -> bool;
    /// The columns of four rows of four numbers: lane k of column c is `rows[k][c]`.
    fn transpose(maker: Self::Maker, rows: [[f64; LANES]; LANES]) -> [Self; LANES];
    /// The rows of four columns (the inverse of [`Lanes::transpose`]).
    #[inline(always)]
    fn rows(columns: [Self; LANES], maker: Self::Maker) -> [[f64; LANES]; LANES] {
        Self::transpose(maker, columns.map(Self::to_array)).map(Self::to_array)
    }
}

/// Work generic over the lane backend, for [`with_lanes`].
pub trait LaneWork {
    type Output;
    fn run<L: Lanes>(self, maker: L::Maker) -> Self::Output;
}

/// Runs `work` with [`Avx4`] lanes, compiled for AVX2, when this processor has AVX2 (and FMA, which
/// the kernels do not use), and with the portable [`F64x4`] lanes otherwise.
#[inline(always)]
pub fn with_lanes<W: LaneWork>(work: W) -> W::Output {
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        return pulp::Simd::vectorize(simd, AvxWork(work, simd));
    }
    work.run::<F64x4>(())
}

#[cfg(target_arch = "x86_64")]
struct AvxWork<W>(W, pulp::x86::V3);

#[cfg(target_arch = "x86_64")]
impl<W: LaneWork> pulp::WithSimd for AvxWork<W> {
    type Output = W::Output;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> W::Output {
        self.0.run::<Avx4>(self.1)
    }
}

/// Portable lanes: four f64 in an array (LLVM vectorizes some of it).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct F64x4(pub [f64; LANES]);

/// Four booleans, one per lane, for [`F64x4`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mask4(pub [bool; LANES]);

impl F64x4 {
    #[inline(always)]
    fn map(self, f: impl Fn(f64) -> f64) -> Self {
        F64x4(from_fn(|k| f(self.0[k])))
    }

    #[inline(always)]
    fn zip(self, other: Self, f: impl Fn(f64, f64) -> f64) -> Self {
        F64x4(from_fn(|k| f(self.0[k], other.0[k])))
    }
}

impl Lanes for F64x4 {
    type Mask = Mask4;
    type Maker = ();

    #[inline(always)]
    fn splat(_: (), value: f64) -> Self {
        F64x4([value; LANES])
    }
    #[inline(always)]
    fn from_array(_: (), values: [f64; LANES]) -> Self {
        F64x4(values)
    }
    #[inline(always)]
    fn to_array(self) -> [f64; LANES] {
        self.0
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        self.map(f64::sqrt)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        self.map(f64::abs)
    }
    #[inline(always)]
    fn floor(self) -> Self {
        self.map(f64::floor)
    }
    #[inline(always)]
    fn to_indices(self) -> [u32; LANES] {
        self.0.map(|v| v as i32 as u32)
    }
    #[inline(always)]
    fn to_f32(self) -> [f32; LANES] {
        self.0.map(|v| v as f32)
    }
    #[inline(always)]
    fn from_f32(_: (), values: [f32; LANES]) -> Self {
        F64x4(values.map(f64::from))
    }
    #[inline(always)]
    fn gt(self, other: Self) -> Mask4 {
        Mask4(from_fn(|k| self.0[k] > other.0[k]))
    }
    #[inline(always)]
    fn ge(self, other: Self) -> Mask4 {
        Mask4(from_fn(|k| self.0[k] >= other.0[k]))
    }
    #[inline(always)]
    fn select(mask: Mask4, a: Self, b: Self) -> Self {
        F64x4(from_fn(|k| if mask.0[k] { a.0[k] } else { b.0[k] }))
    }
    #[inline(always)]
    fn mask_from_array(_: (), values: [bool; LANES]) -> Mask4 {
        Mask4(values)
    }
    #[inline(always)]
    fn mask_to_array(mask: Mask4) -> [bool; LANES] {
        mask.0
    }
    #[inline(always)]
    fn any(mask: Mask4) -> bool {
        mask.0.iter().fold(false, |a, &b| a | b)
    }
    #[inline(always)]
    fn transpose(_: (), rows: [[f64; LANES]; LANES]) -> [Self; LANES] {
        from_fn(|c| F64x4(from_fn(|k| rows[k][c])))
    }
}

macro_rules! lane_operator {
    ($trait:ident, $method:ident, $op:tt) => {
        impl $trait for F64x4 {
            type Output = F64x4;
            #[inline(always)]
            fn $method(self, other: F64x4) -> F64x4 {
                self.zip(other, |a, b| a $op b)
            }
        }
    };
}
lane_operator!(Add, add, +);
lane_operator!(Sub, sub, -);
lane_operator!(Mul, mul, *);
lane_operator!(Div, div, /);

impl Neg for F64x4 {
    type Output = F64x4;
    #[inline(always)]
    fn neg(self) -> F64x4 {
        self.map(|a| -a)
    }
}

impl BitAnd for Mask4 {
    type Output = Mask4;
    #[inline(always)]
    fn bitand(self, other: Mask4) -> Mask4 {
        Mask4(from_fn(|k| self.0[k] & other.0[k]))
    }
}

impl BitOr for Mask4 {
    type Output = Mask4;
    #[inline(always)]
    fn bitor(self, other: Mask4) -> Mask4 {
        Mask4(from_fn(|k| self.0[k] | other.0[k]))
    }
}

impl Not for Mask4 {
    type Output = Mask4;
    #[inline(always)]
    fn not(self) -> Mask4 {
        Mask4(from_fn(|k| !self.0[k]))
    }
}

#[cfg(target_arch = "x86_64")]
pub use avx::{Avx4, AvxMask};

#[cfg(target_arch = "x86_64")]
mod avx {
    use super::{Lanes, LANES};
    use pulp::bytemuck::cast;
    use pulp::x86::V3;
    use std::arch::x86_64::{__m256d, _CMP_GE_OQ, _CMP_GT_OQ};
    use std::ops::{Add, BitAnd, BitOr, Div, Mul, Neg, Not, Sub};

    /// AVX2 lanes: one 256-bit register, with the token that the instructions exist.
    #[derive(Clone, Copy, Debug)]
    pub struct Avx4 {
        simd: V3,
        value: __m256d,
    }

    /// Four lane masks (all bits set or clear) in one 256-bit register.
    #[derive(Clone, Copy, Debug)]
    pub struct AvxMask {
        simd: V3,
        value: __m256d,
    }

    impl Avx4 {
        #[inline(always)]
        fn with(self, value: __m256d) -> Self {
            Avx4 {
                simd: self.simd,
                value,
            }
        }
    }

    impl Lanes for Avx4 {
        type Mask = AvxMask;
        type Maker = V3;

        #[inline(always)]
        fn splat(simd: V3, value: f64) -> Self {
            Avx4 {
                simd,
                value: simd.avx._mm256_set1_pd(value),
            }
        }
        #[inline(always)]
        fn from_array(simd: V3, values: [f64; LANES]) -> Self {
            Avx4 {
                simd,
                value: cast(values),
            }
        }
        #[inline(always)]
        fn to_array(self) -> [f64; LANES] {
            cast(self.value)
        }
        #[inline(always)]
        fn sqrt(self) -> Self {
            self.with(self.simd.avx._mm256_sqrt_pd(self.value))
        }
        #[inline(always)]
        fn floor(self) -> Self {
            self.with(self.simd.avx._mm256_floor_pd(self.value))
        }
        #[inline(always)]
        fn to_indices(self) -> [u32; LANES] {
            let indices: [i32; LANES] = cast(self.simd.avx._mm256_cvttpd_epi32(self.value));
            indices.map(|i| i as u32)
        }
        #[inline(always)]
        fn to_f32(self) -> [f32; LANES] {
            cast(self.simd.avx._mm256_cvtpd_ps(self.value))
        }
        #[inline(always)]
        fn from_f32(simd: V3, values: [f32; LANES]) -> Self {
            Avx4 {
                simd,
                value: simd.avx._mm256_cvtps_pd(cast(values)),
            }
        }
        #[inline(always)]
        fn abs(self) -> Self {
            let magnitude_bits = self.simd.avx._mm256_set1_pd(f64::from_bits(!(1u64 << 63)));
            self.with(self.simd.avx._mm256_and_pd(self.value, magnitude_bits))
        }
        #[inline(always)]
        fn gt(self, other: Self) -> AvxMask {
            let value = self
                .simd
                .avx
                ._mm256_cmp_pd::<_CMP_GT_OQ>(self.value, other.value);
            AvxMask {
                simd: self.simd,
                value,
            }
        }
        #[inline(always)]
        fn ge(self, other: Self) -> AvxMask {
            let value = self
                .simd
                .avx
                ._mm256_cmp_pd::<_CMP_GE_OQ>(self.value, other.value);
            AvxMask {
                simd: self.simd,
                value,
            }
        }
        #[inline(always)]
        fn select(mask: AvxMask, a: Self, b: Self) -> Self {
            a.with(mask.simd.avx._mm256_blendv_pd(b.value, a.value, mask.value))
        }
        #[inline(always)]
        fn mask_from_array(simd: V3, values: [bool; LANES]) -> AvxMask {
            let bits: [u64; LANES] = values.map(|b| if b { u64::MAX } else { 0 });
            AvxMask {
                simd,
                value: cast(bits),
            }
        }
        #[inline(always)]
        fn mask_to_array(mask: AvxMask) -> [bool; LANES] {
            let bits = mask.simd.avx._mm256_movemask_pd(mask.value);
            std::array::from_fn(|k| bits & (1 << k) != 0)
        }
        #[inline(always)]
        fn any(mask: AvxMask) -> bool {
            mask.simd.avx._mm256_movemask_pd(mask.value) != 0
        }
        #[inline(always)]
        fn transpose(simd: V3, rows: [[f64; LANES]; LANES]) -> [Self; LANES] {
            let avx = simd.avx;
            let [r0, r1, r2, r3] = rows.map(cast::<_, __m256d>);
            // (r0[0], r1[0], r0[2], r1[2]), (r0[1], r1[1], r0[3], r1[3]), the same for r2, r3.
            let (low01, high01) = (
                avx._mm256_unpacklo_pd(r0, r1),
                avx._mm256_unpackhi_pd(r0, r1),
            );
            let (low23, high23) = (
                avx._mm256_unpacklo_pd(r2, r3),
                avx._mm256_unpackhi_pd(r2, r3),
            );
            [
                avx._mm256_permute2f128_pd::<0x20>(low01, low23),
                avx._mm256_permute2f128_pd::<0x20>(high01, high23),
                avx._mm256_permute2f128_pd::<0x31>(low01, low23),
                avx._mm256_permute2f128_pd::<0x31>(high01, high23),
            ]
            .map(|value| Avx4 { simd, value })
        }
    }

    macro_rules! avx_operator {
        ($trait:ident, $method:ident, $intrinsic:ident) => {
            impl $trait for Avx4 {
                type Output = Avx4;
                #[inline(always)]
                fn $method(self, other: Avx4) -> Avx4 {
                    self.with(self.simd.avx.$intrinsic(self.value, other.value))
                }
            }
        };
    }
    avx_operator!(Add, add, _mm256_add_pd);
    avx_operator!(Sub, sub, _mm256_sub_pd);
    avx_operator!(Mul, mul, _mm256_mul_pd);
    avx_operator!(Div, div, _mm256_div_pd);

    impl Neg for Avx4 {
        type Output = Avx4;
        #[inline(always)]
        fn neg(self) -> Avx4 {
            let sign = self.simd.avx._mm256_set1_pd(-0.0);
            self.with(self.simd.avx._mm256_xor_pd(self.value, sign))
        }
    }

    macro_rules! mask_operator {
        ($trait:ident, $method:ident, $intrinsic:ident) => {
            impl $trait for AvxMask {
                type Output = AvxMask;
                #[inline(always)]
                fn $method(self, other: AvxMask) -> AvxMask {
                    let value = self.simd.avx.$intrinsic(self.value, other.value);
                    AvxMask {
                        simd: self.simd,
                        value,
                    }
                }
            }
        };
    }
    mask_operator!(BitAnd, bitand, _mm256_and_pd);
    mask_operator!(BitOr, bitor, _mm256_or_pd);

    impl Not for AvxMask {
        type Output = AvxMask;
        #[inline(always)]
        fn not(self) -> AvxMask {
            let ones = self.simd.avx._mm256_set1_pd(f64::from_bits(u64::MAX));
            let value = self.simd.avx._mm256_xor_pd(self.value, ones);
            AvxMask {
                simd: self.simd,
                value,
            }
        }
    }

    impl Mul<super::Vec3Lanes<Avx4>> for Avx4 {
        type Output = super::Vec3Lanes<Avx4>;
        #[inline(always)]
        fn mul(self, v: super::Vec3Lanes<Avx4>) -> super::Vec3Lanes<Avx4> {
            super::scale(self, v)
        }
    }
}

/// Four 3-vectors, one per lane, stored by component. The operations follow those of [`Vec3`]
/// (glam) term by term, so that each lane equals the scalar result bit for bit.
#[derive(Clone, Copy, Debug)]
pub struct Vec3Lanes<L> {
    pub x: L,
    pub y: L,
    pub z: L,
}

/// Portable 3-vector lanes.
pub type Vec3x4 = Vec3Lanes<F64x4>;

/// Scalar (per lane) times vector, as `f64 * Vec3`.
#[inline(always)]
fn scale<L: Lanes>(s: L, v: Vec3Lanes<L>) -> Vec3Lanes<L> {
    Vec3Lanes {
        x: s * v.x,
        y: s * v.y,
        z: s * v.z,
    }
}

impl Mul<Vec3x4> for F64x4 {
    type Output = Vec3x4;
    #[inline(always)]
    fn mul(self, v: Vec3x4) -> Vec3x4 {
        scale(self, v)
    }
}

impl<L: Lanes> Vec3Lanes<L> {
    /// Lane k is `vectors[k]`.
    #[inline(always)]
    pub fn from_vectors(maker: L::Maker, vectors: [Vec3; LANES]) -> Self {
        Vec3Lanes {
            x: L::from_array(maker, vectors.map(|v| v.x)),
            y: L::from_array(maker, vectors.map(|v| v.y)),
            z: L::from_array(maker, vectors.map(|v| v.z)),
        }
    }

    /// The vectors of the four lanes.
    #[inline(always)]
    pub fn to_vectors(self) -> [Vec3; LANES] {
        let (x, y, z) = (self.x.to_array(), self.y.to_array(), self.z.to_array());
        from_fn(|k| Vec3::new(x[k], y[k], z[k]))
    }

    /// (x x' + y y') + z z', as `Vec3::dot`.
    #[inline(always)]
    pub fn dot(self, other: Self) -> L {
        self.x * other.x + self.y * other.y + self.z * other.z
    }

    #[inline(always)]
    pub fn length_squared(self) -> L {
        self.dot(self)
    }

    /// As `Vec3::cross`.
    #[inline(always)]
    pub fn cross(self, other: Self) -> Self {
        Vec3Lanes {
            x: self.y * other.z - other.y * self.z,
            y: self.z * other.x - other.z * self.x,
            z: self.x * other.y - other.x * self.y,
        }
    }

    /// Each component divided by `divisor`, as `Vec3 / f64`.
    #[inline(always)]
    pub fn divided_by(self, divisor: L) -> Self {
        Vec3Lanes {
            x: self.x / divisor,
            y: self.y / divisor,
            z: self.z / divisor,
        }
    }

    /// Lane k is `if mask[k] { a[k] } else { b[k] }`.
    #[inline(always)]
    pub fn select(mask: L::Mask, a: Self, b: Self) -> Self {
        Vec3Lanes {
            x: L::select(mask, a.x, b.x),
            y: L::select(mask, a.y, b.y),
            z: L::select(mask, a.z, b.z),
        }
    }
}

impl<L: Lanes> Add for Vec3Lanes<L> {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Vec3Lanes {
            x: self.x + o.x,
            y: self.y + o.y,
            z: self.z + o.z,
        }
    }
}

impl<L: Lanes> Neg for Vec3Lanes<L> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Vec3Lanes {
            x: -self.x,
            y: -self.y,
            z: -self.z,
        }
    }
}

impl<L: Lanes> Sub for Vec3Lanes<L> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Vec3Lanes {
            x: self.x - o.x,
            y: self.y - o.y,
            z: self.z - o.z,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(seed: f64) -> Vec3 {
        Vec3::new(
            (seed * 1.3).sin(),
            (seed * 2.7).cos() * 3.0,
            (seed * 0.37).sin() * 1e-3,
        )
    }

    /// Every operation of the backend `L` against the scalar one.
    struct Check;

    impl LaneWork for Check {
        type Output = ();
        fn run<L: Lanes>(self, maker: L::Maker) {
            let a = Vec3Lanes::<L>::from_vectors(maker, from_fn(|k| sample(k as f64 + 0.1)));
            let b = Vec3Lanes::<L>::from_vectors(maker, from_fn(|k| sample(k as f64 * 7.0 + 0.3)));
            let s = L::from_array(maker, from_fn(|k| 0.3 + k as f64 - 1.5));
            let (va, vb, vs) = (a.to_vectors(), b.to_vectors(), s.to_array());
            let bits = |v: Vec3| v.to_array().map(f64::to_bits);
            for k in 0..LANES {
                assert_eq!(a.dot(b).to_array()[k].to_bits(), va[k].dot(vb[k]).to_bits());
                assert_eq!(bits(a.cross(b).to_vectors()[k]), bits(va[k].cross(vb[k])));
                assert_eq!(bits((s * a).to_vectors()[k]), bits(vs[k] * va[k]));
                assert_eq!(bits(a.divided_by(s).to_vectors()[k]), bits(va[k] / vs[k]));
                assert_eq!(
                    bits((a - b + a).to_vectors()[k]),
                    bits(va[k] - vb[k] + va[k])
                );
                assert_eq!(a.length_squared().sqrt().to_array()[k], va[k].length());
                assert_eq!((-s).abs().to_array()[k], vs[k].abs());
                assert_eq!(s.floor().to_array()[k].to_bits(), vs[k].floor().to_bits());
                let narrow = (s * s).to_f32()[k];
                assert_eq!(narrow.to_bits(), ((vs[k] * vs[k]) as f32).to_bits());
                let wide = L::from_f32(maker, (s * s).to_f32()).to_array()[k];
                assert_eq!(wide.to_bits(), f64::from(narrow).to_bits());
            }
            let places = L::from_array(maker, [0.0, 2.999, 7.5, 1e6]).to_indices();
            assert_eq!(places, [0, 2, 7, 1_000_000]);
            let x = L::from_array(maker, [1.0, 2.0, 3.0, f64::NAN]);
            let half = L::splat(maker, 2.5);
            let m = x.gt(half);
            assert_eq!(L::mask_to_array(m), [false, false, true, false]);
            assert_eq!(L::mask_to_array(!m), [true, true, false, true]);
            let picked = L::select(m, x, half).to_array();
            assert_eq!(picked, [2.5, 2.5, 3.0, 2.5]);
            assert!(L::any(m) && !L::any(m & !m));
            let ge = x.ge(L::splat(maker, 2.0)) | m;
            assert_eq!(L::mask_to_array(ge), [false, true, true, false]);
            let set = L::mask_from_array(maker, [true, false, false, true]);
            assert_eq!(L::mask_to_array(set & ge), [false, false, false, false]);
            assert_eq!(L::mask_to_array(set | m), [true, false, true, true]);
            let rows: [[f64; LANES]; LANES] = from_fn(|r| from_fn(|c| (10 * r + c) as f64));
            let columns = L::transpose(maker, rows);
            for c in 0..LANES {
                assert_eq!(columns[c].to_array(), from_fn(|k| rows[k][c]));
            }
            assert_eq!(L::rows(columns, maker), rows);
        }
    }

    #[test]
    fn portable_lanes_equal_the_scalar_operations() {
        Check.run::<F64x4>(());
    }

    #[test]
    fn the_best_lanes_of_this_processor_equal_the_scalar_operations() {
        with_lanes(Check);
    }
}
