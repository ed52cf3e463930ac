//! The projection of each stage (fractional step): L phi = D u* / (2 alpha_k dt),
//! u^k = u* - 2 alpha_k dt G phi, p^k = p^{k-1} + phi - alpha_k dt nu L phi (the last term with
//! Crank–Nicolson only; Brown, Cortez & Minion 2001), with D and G the staggered divergence and gradient.

use crate::grid::{for_each_row, Field, Unknowns};
use rayon::prelude::*;

/// `out` = scale * D u at the cells (compact array over `cells`, the pressure's unknowns).
pub fn divergence(u: &[Field; 3], cells: &Unknowns, spacing: f64, scale: f64, out: &mut [f64]) {
    divergence_and_row_sums(u, cells, spacing, scale, out, None);
}

/// [`divergence`], and, with `sum_of = Some(c)` for a periodic axis c, the sums of u_c over each
/// row of its unknowns, in y then z order (read in the same pass; chained along y within each plane,
/// the planes' sums added in order and divided by their count, the same number as
/// `diagnostics::mean_over`).
pub fn divergence_and_row_sums(
    u: &[Field; 3],
    cells: &Unknowns,
    spacing: f64,
    scale: f64,
    out: &mut [f64],
    sum_of: Option<usize>,
) -> Option<Vec<f64>> {
    let field = &u[0];
    let strides = [field.stride(0), field.stride(1), field.stride(2)];
    let factor = scale / spacing;
    let m0 = cells.shape[0];
    let start = cells.start;
    let row_sums: Vec<Vec<f64>> = out
        .par_chunks_mut(cells.plane_len())
        .enumerate()
        .map(|(kc, out)| {
            let k = kc + start[2];
            let mut row_sums = Vec::new();
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
                // Along a periodic axis the faces "here" of the cells are the unknowns of u_c.
                if let Some(c) = sum_of {
                    row_sums.push(crate::diagnostics::row_sum(m0, |i| here[c][i]));
                }
            }
            row_sums
        })
        .collect();
    sum_of.map(|_| row_sums.concat())
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

/// The flow-rate driving's addition to the streamwise velocity: `force` times the response to a unit
/// uniform force, per unknown (compact array) or the same everywhere.
#[derive(Clone, Copy, Debug)]
pub enum FlowRateAddition<'a> {
    Response { force: f64, response: &'a [f64] },
    Uniform(f64),
}

/// u_c = (u_c + driving) - factor * G_c phi: [`subtract_gradient`] that also adds the flow-rate driving,
/// in the same pass (the driving is uniform along the periodic axis c, so it adds no divergence).
pub fn drive_and_subtract_gradient(
    u: &mut Field,
    c: usize,
    unknowns: &Unknowns,
    phi: &Field,
    factor: f64,
    driving: FlowRateAddition,
) {
    let stride = phi.stride(c);
    for_each_row(u, unknowns, |row, first, compact| {
        let n = row.len();
        let (here, ahead) = (&phi.data[first..][..n], &phi.data[first + stride..][..n]);
        match driving {
            FlowRateAddition::Response { force, response } => {
                let response = &response[compact..][..n];
                for i in 0..n {
                    row[i] = (row[i] + force * response[i]) - factor * (ahead[i] - here[i]);
                }
            }
            FlowRateAddition::Uniform(shift) => {
                for i in 0..n {
                    row[i] = (row[i] + shift) - factor * (ahead[i] - here[i]);
                }
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;
    use crate::test_support::Lcg;

    /// The mean read during the divergence pass is the number `diagnostics::mean_over` gives, for each
    /// axis (all periodic), and the divergence itself is unchanged by reading it.
    #[test]
    fn divergence_pass_mean_matches_mean_over() {
        // Rows of 13 cells: one whole group of eight partial sums and a remainder.
        let grid = Grid {
            cells: [13, 6, 5],
            spacing: 0.1,
            origin: [0.0; 3],
            offset: [0; 3],
        };
        let mut random = Lcg(7);
        let u = [0, 1, 2].map(|_| {
            let mut f = Field::zeros(&grid);
            f.data = random.vec(f.data.len());
            f
        });
        let cells = Unknowns {
            start: [1; 3],
            shape: grid.cells,
        };
        let mut plain = vec![0.0; cells.len()];
        divergence(&u, &cells, grid.spacing, 2.0, &mut plain);
        for axis in 0..3 {
            let mut out = vec![0.0; cells.len()];
            let rows = divergence_and_row_sums(&u, &cells, grid.spacing, 2.0, &mut out, Some(axis))
                .unwrap();
            let planes = rows
                .chunks(cells.shape[1])
                .map(|plane| plane.iter().fold(0.0, |sum, r| sum + r));
            let mean = planes.sum::<f64>() / cells.len() as f64;
            assert_eq!(mean, crate::diagnostics::mean_over(&u[axis], &cells));
            assert_eq!(out, plain);
        }
        let sums = divergence_and_row_sums(&u, &cells, grid.spacing, 2.0, &mut plain, None);
        assert_eq!(sums, None);
    }
}
