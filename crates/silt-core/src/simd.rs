//! Run-time dispatch of hot loops to the widest vector instructions of the processor (`pulp`).
//!
//! The body is compiled once per instruction set and the best one the processor has is chosen when it
//! runs. Rust never fuses a multiply and an add nor reorders floating-point sums, so every value is the
//! same IEEE result as in the baseline x86-64 build: results do not depend on the processor.

/// Runs `work` compiled for the widest vector instructions of this processor. `work` must be an
/// `#[inline(always)]` closure, or its body is compiled for the baseline only.
#[inline(always)]
pub fn vectorized<R>(work: impl FnOnce() -> R) -> R {
    pulp::Arch::new().dispatch(Work(work))
}

/// Runs `work` as the baseline build has it (to test that [`vectorized`] gives the same numbers).
#[inline(always)]
pub fn baseline<R>(work: impl FnOnce() -> R) -> R {
    pulp::Simd::vectorize(pulp::Scalar::new(), Work(work))
}

struct Work<F>(F);

impl<R, F: FnOnce() -> R> pulp::WithSimd for Work<F> {
    type Output = R;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> R {
        (self.0)()
    }
}
