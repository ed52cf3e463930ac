//! The projection of each stage (fractional step): L phi = D u* / (2 alpha_k dt),
//! u^k = u* - 2 alpha_k dt G phi, p^k = p^{k-1} + phi - alpha_k dt nu L phi (the last term with
//! Crank–Nicolson only; Brown, Cortez & Minion 2001), with D and G the staggered divergence and gradient.

use crate::grid::{for_each_row, Field, Unknowns};
use crate::momentum::laplacian;
use rayon::prelude::*;

/// `out` = scale * D u at the cells (compact array over `cells`, the pressure's unknowns).
pub fn divergence(u: &[Field; 3], cells: &Unknowns, spacing: f64, scale: f64, out: &mut [f64]) {
    let field = &u[0];
    let strides = [field.stride(0), field.stride(1), field.stride(2)];
    let factor = scale / spacing;
    let [m0, m1, _] = cells.shape;
    let start = cells.start;
    out.par_chunks_mut(cells.plane_len())
        .enumerate()
        .for_each(|(kc, out)| {
            let k = kc + start[2];
            for jc in 0..m1 {
                let first = field.index(start[0], jc + start[1], k);
                for ic in 0..m0 {
                    let x = first + ic;
                    let mut sum = 0.0;
                    for c in 0..3 {
                        sum += u[c].data[x] - u[c].data[x - strides[c]];
                    }
                    out[jc * m0 + ic] = factor * sum;
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
        for (i, value) in row.iter_mut().enumerate() {
            let x = first + i;
            *value -= factor * (phi.data[x + stride] - phi.data[x]);
        }
    });
}

/// p += phi - beta L phi at the cells (beta = alpha_k dt nu with Crank–Nicolson, 0 otherwise).
pub fn update_pressure(p: &mut Field, cells: &Unknowns, phi: &Field, spacing: f64, beta: f64) {
    let strides = [phi.stride(0), phi.stride(1), phi.stride(2)];
    let inverse_h2 = 1.0 / (spacing * spacing);
    for_each_row(p, cells, |row, first, _| {
        for (i, value) in row.iter_mut().enumerate() {
            let x = first + i;
            let mut change = phi.data[x];
            if beta != 0.0 {
                change -= beta * laplacian(&phi.data, x, strides, inverse_h2);
            }
            *value += change;
        }
    });
}
