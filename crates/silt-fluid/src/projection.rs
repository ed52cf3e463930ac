//! The projection of each stage (fractional step): L phi = D u* / (2 alpha_k dt),
//! u^k = u* - 2 alpha_k dt G phi, p^k = p^{k-1} + phi - alpha_k dt nu L phi (the last term with
//! Crank–Nicolson only; Brown, Cortez & Minion 2001), with D and G the staggered divergence and gradient.

use crate::grid::{for_each_row, Field, Unknowns};
use rayon::prelude::*;

/// `out` = scale * D u at the cells (compact array over `cells`, the pressure's unknowns).
pub fn divergence(u: &[Field; 3], cells: &Unknowns, spacing: f64, scale: f64, out: &mut [f64]) {
    let field = &u[0];
    let strides = [field.stride(0), field.stride(1), field.stride(2)];
    let factor = scale / spacing;
    let m0 = cells.shape[0];
    let start = cells.start;
    out.par_chunks_mut(cells.plane_len())
        .enumerate()
        .for_each(|(kc, out)| {
            let k = kc + start[2];
            for (jc, out) in out.chunks_exact_mut(m0).enumerate() {
                let first = field.index(start[0], jc + start[1], k);
                // Row slices (at x and x - stride of each component), so that the loop vectorises.
                let [here, behind] = [0, 1]
                    .map(|back| [0, 1, 2].map(|c| &u[c].data[first - back * strides[c]..][..m0]));
                for i in 0..m0 {
                    let mut sum = 0.0;
                    for c in 0..3 {
                        sum += here[c][i] - behind[c][i];
                    }
                    out[i] = factor * sum;
                }
            }
        });
}

/// Largest |D u| over the cells.
pub fn max_divergence(u: &[Field; 3], cells: &Unknowns, spacing: f64, work: &mut Vec<f64>) -> f64 {
    work.resize(cells.len(), 0.0);
    divergence(u, cells, spacing, 1.0, work);
    work.par_iter().map(|d| d.abs()).reduce(|| 0.0, f64::max)
}

/// Copies the compact array `values` into the unknowns of `f`.
pub fn scatter(values: &[f64], unknowns: &Unknowns, f: &mut Field) {
    for_each_row(f, unknowns, |row, _, compact| {
        row.copy_from_slice(&values[compact..compact + row.len()]);
    });
}

/// u_c -= factor * G_c phi at the unknowns of component `c` (factor = 2 alpha_k dt / h).
pub fn subtract_gradient(u: &mut Field, c: usize, unknowns: &Unknowns, phi: &Field, factor: f64) {
    let stride = phi.stride(c);
    for_each_row(u, unknowns, |row, first, _| {
        let n = row.len();
        let (here, ahead) = (&phi.data[first..][..n], &phi.data[first + stride..][..n]);
        for i in 0..n {
            row[i] -= factor * (ahead[i] - here[i]);
        }
    });
}

/// p += phi - beta L phi at the cells (beta = alpha_k dt nu with Crank–Nicolson, 0 otherwise).
pub fn update_pressure(p: &mut Field, cells: &Unknowns, phi: &Field, spacing: f64, beta: f64) {
    let [sx, sy, sz] = [phi.stride(0), phi.stride(1), phi.stride(2)];
    let inverse_h2 = 1.0 / (spacing * spacing);
    for_each_row(p, cells, |row, first, _| {
        let n = row.len();
        let at = |offset: usize| &phi.data[first + offset - sz..][..n];
        let centre = at(sz);
        if beta == 0.0 {
            for (value, change) in row.iter_mut().zip(centre) {
                *value += change;
            }
            return;
        }
        // Row slices of the neighbours, so that the loop vectorises (same arithmetic as `laplacian`).
        let (west, east) = (at(sz - sx), at(sz + sx));
        let (south, north) = (at(sz - sy), at(sz + sy));
        let (below, above) = (at(0), at(2 * sz));
        for i in 0..n {
            let c = centre[i];
            let mut sum = 0.0;
            sum += east[i] - 2.0 * c + west[i];
            sum += north[i] - 2.0 * c + south[i];
            sum += above[i] - 2.0 * c + below[i];
            row[i] += c - beta * (sum * inverse_h2);
        }
    });
}
