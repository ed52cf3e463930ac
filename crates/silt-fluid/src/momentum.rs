//! The explicit part of one Runge–Kutta stage of the momentum equation (seed sec. 2, Rai & Moin 1991):
//!
//! H_k = -N(u^{k-1}) + f [+ nu L u^{k-1} when the viscous term is explicit]
//! du = dt (gamma_k H_k + zeta_k H_{k-1}) - 2 alpha_k dt G p^{k-1} [+ 2 alpha_k dt nu L u^{k-1} with
//! Crank–Nicolson]
//!
//! with N the convective term in divergence form and L the Laplacian, both second-order central differences
//! on the staggered grid.

use crate::grid::{for_each_row, Field, Unknowns};
use rayon::prelude::*;

/// Coefficients of one stage.
#[derive(Clone, Copy, Debug)]
pub struct Stage {
    pub gamma: f64,
    pub zeta: f64,
    pub alpha: f64,
    pub dt: f64,
}

/// What the momentum right-hand side contains besides convection.
#[derive(Clone, Copy, Debug)]
pub struct MomentumTerms {
    /// Kinematic viscosity nu.
    pub viscosity: f64,
    /// Viscous term in the explicit right-hand side (else Crank–Nicolson).
    pub explicit_viscous: bool,
    /// Uniform body force per unit mass (including a driving mean pressure gradient).
    pub body_force: [f64; 3],
}

/// Computes the explicit increment `delta` of the three velocity components over `stage` at their
/// unknowns, and stores the stage's right-hand side H_k in `previous_rhs` (which holds H_{k-1} on entry;
/// not read when zeta_k = 0).
///
/// The convective term N_c = div(u u_c) is in divergence form with the interpolations of the staggered
/// grid (seed sec. 2; Harlow & Welch 1965): along its own axis the flux of u_c is the square of its mean
/// over two neighbours; along another axis a it is the product of u_a interpolated to the edge and u_c
/// interpolated to the edge, e.g. for u: [v_{i+1/2,j} u_{i,j+1/2}]_{j-1/2}^{j+1/2} / h.
///
/// One parallel pass over z-planes; in each row one tight loop per component over contiguous slices of
/// equal length (bounds checks hoisted, so the compiler can vectorise).
#[allow(clippy::too_many_arguments)]
pub fn explicit_increments(
    u: &[Field; 3],
    p: &Field,
    unknowns: &[Unknowns; 3],
    spacing: f64,
    terms: &MomentumTerms,
    stage: &Stage,
    previous_rhs: &mut [Vec<f64>; 3],
    delta: &mut [Vec<f64>; 3],
) {
    let Stage {
        gamma,
        zeta,
        alpha,
        dt,
    } = *stage;
    let coefficients = RowCoefficients {
        inverse_h: 1.0 / spacing,
        inverse_h2: 1.0 / (spacing * spacing),
        gamma_dt: gamma * dt,
        zeta_dt: zeta * dt,
        explicit_nu: if terms.explicit_viscous {
            terms.viscosity
        } else {
            0.0
        },
        implicit_nu_dt: if terms.explicit_viscous {
            0.0
        } else {
            2.0 * alpha * dt * terms.viscosity
        },
        pressure_factor: 2.0 * alpha * dt / spacing,
    };
    // Per z-plane, the compact planes of H and delta of each component (None where it has no unknowns).
    type Outputs<'a> = [Option<(&'a mut [f64], &'a mut [f64])>; 3];
    let planes_count = unknowns.iter().map(|u| u.shape[2]).max().unwrap_or(0);
    let mut planes: Vec<Outputs> = (0..planes_count).map(|_| [None, None, None]).collect();
    for (c, (previous, delta)) in previous_rhs.iter_mut().zip(delta.iter_mut()).enumerate() {
        let plane_len = unknowns[c].plane_len();
        for (kc, slot) in previous
            .chunks_mut(plane_len)
            .zip(delta.chunks_mut(plane_len))
            .enumerate()
        {
            planes[kc][c] = Some(slot);
        }
    }
    planes
        .into_par_iter()
        .enumerate()
        .for_each(|(kc, mut outputs)| {
            for (c, output) in outputs.iter_mut().enumerate() {
                let Some((previous, delta)) = output else {
                    continue;
                };
                let m = unknowns[c].shape;
                let start = unknowns[c].start;
                for jc in 0..m[1] {
                    let first = p.index(start[0], jc + start[1], kc + start[2]);
                    let stencil = Stencil::new(u, p, c, first, m[0]);
                    let row = jc * m[0]..(jc + 1) * m[0];
                    stencil.row(
                        &coefficients,
                        terms.body_force[c],
                        &mut previous[row.clone()],
                        &mut delta[row],
                    );
                }
            }
        });
}

/// Constants of the row loops.
struct RowCoefficients {
    inverse_h: f64,
    inverse_h2: f64,
    gamma_dt: f64,
    zeta_dt: f64,
    explicit_nu: f64,
    implicit_nu_dt: f64,
    pressure_factor: f64,
}

/// The neighbours of u_c along a transverse axis a, as rows aligned with the unknowns of a row of u_c:
/// u_a at x, x + e_c (the high edge) and x - e_a, x - e_a + e_c (the low edge); u_c at x +- e_a.
struct Transverse<'a> {
    high: [&'a [f64]; 2],
    low: [&'a [f64]; 2],
    own_high: &'a [f64],
    own_low: &'a [f64],
}

/// Everything a row of unknowns of component c reads, as slices of its length aligned with it.
struct Stencil<'a> {
    centre: &'a [f64],
    next: &'a [f64],
    previous: &'a [f64],
    pressure: &'a [f64],
    pressure_next: &'a [f64],
    transverse: [Transverse<'a>; 2],
}

impl<'a> Stencil<'a> {
    /// The stencil of the `len` unknowns of component `c` from linear index `first` on.
    fn new(u: &'a [Field; 3], p: &'a Field, c: usize, first: usize, len: usize) -> Self {
        let row = |f: &'a Field, offset: isize| {
            let start = first.wrapping_add_signed(offset);
            &f.data[start..start + len]
        };
        let stride = |axis: usize| u[0].stride(axis) as isize;
        let sc = stride(c);
        let others = [(c + 1) % 3, (c + 2) % 3];
        let transverse = others.map(|a| {
            let sa = stride(a);
            Transverse {
                high: [row(&u[a], 0), row(&u[a], sc)],
                low: [row(&u[a], -sa), row(&u[a], sc - sa)],
                own_high: row(&u[c], sa),
                own_low: row(&u[c], -sa),
            }
        });
        Stencil {
            centre: row(&u[c], 0),
            next: row(&u[c], sc),
            previous: row(&u[c], -sc),
            pressure: row(p, 0),
            pressure_next: row(p, sc),
            transverse,
        }
    }

    /// Stores H in `previous_rhs` and the increment in `delta` for the row.
    fn row(&self, k: &RowCoefficients, force: f64, previous_rhs: &mut [f64], delta: &mut [f64]) {
        let m = delta.len();
        let (centre, next, previous) = (&self.centre[..m], &self.next[..m], &self.previous[..m]);
        let (p, p_next) = (&self.pressure[..m], &self.pressure_next[..m]);
        let previous_rhs = &mut previous_rhs[..m];
        let [t0, t1] = &self.transverse;
        let (t0_high, t0_low) = (
            [&t0.high[0][..m], &t0.high[1][..m]],
            [&t0.low[0][..m], &t0.low[1][..m]],
        );
        let (t1_high, t1_low) = (
            [&t1.high[0][..m], &t1.high[1][..m]],
            [&t1.low[0][..m], &t1.low[1][..m]],
        );
        let (t0_own_high, t0_own_low) = (&t0.own_high[..m], &t0.own_low[..m]);
        let (t1_own_high, t1_own_low) = (&t1.own_high[..m], &t1.own_low[..m]);
        for i in 0..m {
            let uc = centre[i];
            let high = 0.5 * (uc + next[i]);
            let low = 0.5 * (previous[i] + uc);
            let own_flux = high * high - low * low;
            let flux_0 = 0.25
                * ((t0_high[0][i] + t0_high[1][i]) * (uc + t0_own_high[i])
                    - (t0_low[0][i] + t0_low[1][i]) * (t0_own_low[i] + uc));
            let flux_1 = 0.25
                * ((t1_high[0][i] + t1_high[1][i]) * (uc + t1_own_high[i])
                    - (t1_low[0][i] + t1_low[1][i]) * (t1_own_low[i] + uc));
            let twice = 2.0 * uc;
            let laplacian = ((next[i] - twice + previous[i])
                + (t0_own_high[i] - twice + t0_own_low[i])
                + (t1_own_high[i] - twice + t1_own_low[i]))
                * k.inverse_h2;
            let rhs =
                force - (own_flux + flux_0 + flux_1) * k.inverse_h + k.explicit_nu * laplacian;
            // zeta_1 = 0: the first stage multiplies last step's (finite) H by zero.
            let history = k.zeta_dt * previous_rhs[i];
            previous_rhs[i] = rhs;
            delta[i] = k.gamma_dt * rhs + history - k.pressure_factor * (p_next[i] - p[i])
                + k.implicit_nu_dt * laplacian;
        }
    }
}

/// Adds the compact array `delta` to the unknowns of `f`.
pub fn add_increment(f: &mut Field, unknowns: &Unknowns, delta: &[f64]) {
    for_each_row(f, unknowns, |row, _, compact| {
        let len = row.len();
        for (value, d) in row.iter_mut().zip(&delta[compact..compact + len]) {
            *value += d;
        }
    });
}
