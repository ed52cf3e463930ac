//! Global figures of the flow: kinetic energy, divergence, CFL number, flow rate, wall shear stress, and
//! plane-averaged profiles. Sums are taken per z-plane and the plane sums added in order, so they do not
//! depend on the thread count.

use crate::boundary::{Boundaries, Boundary};
use crate::grid::{Field, Grid, Unknowns};
use rayon::prelude::*;

/// Sum of `value(x)` over the unknowns of a field with dims `dims`, plane by plane in a fixed order.
fn sum_over(dims: [usize; 3], unknowns: &Unknowns, value: impl Fn(usize) -> f64 + Sync) -> f64 {
    plane_sums_over(dims, unknowns, value).iter().sum()
}

/// The sums of `value(x)` over each z plane of the unknowns of a field with dims `dims`, in z order
/// (added in order they are [`sum_over`]; gathered from the ranks of a distributed run in order,
/// the same number).
pub(crate) fn plane_sums_over(
    dims: [usize; 3],
    unknowns: &Unknowns,
    value: impl Fn(usize) -> f64 + Sync,
) -> Vec<f64> {
    let [m0, m1, m2] = unknowns.shape;
    let start = unknowns.start;
    (start[2]..start[2] + m2)
        .into_par_iter()
        .map(|k| {
            let mut sum = 0.0;
            for j in start[1]..start[1] + m1 {
                let first = start[0] + dims[0] * (j + dims[1] * k);
                sum += row_sum(m0, |i| value(first + i));
            }
            sum
        })
        .collect()
}

/// The sums of `value(x)` over each row (along x) of the unknowns of a field with dims `dims`, in y
/// then z order: chained along y within each plane they are [`plane_sums_over`] (a rank of a
/// pencil decomposition holds some of the rows of a plane: `Decomposition::sum_of_rows`).
pub(crate) fn row_sums_over(
    dims: [usize; 3],
    unknowns: &Unknowns,
    value: impl Fn(usize) -> f64 + Sync,
) -> Vec<f64> {
    let [m0, m1, m2] = unknowns.shape;
    let start = unknowns.start;
    let value = &value;
    (start[2]..start[2] + m2)
        .into_par_iter()
        .flat_map_iter(|k| {
            (start[1]..start[1] + m1).map(move |j| {
                let first = start[0] + dims[0] * (j + dims[1] * k);
                row_sum(m0, |i| value(first + i))
            })
        })
        .collect()
}

/// Sum of `value(i)` for i in 0..len in eight interleaved partial sums, combined in a fixed order (eight
/// independent additions in flight instead of one chain; the same numbers on any machine).
#[inline(always)]
pub(crate) fn row_sum(len: usize, value: impl Fn(usize) -> f64) -> f64 {
    let mut lanes = [0.0; 8];
    let whole = len - len % 8;
    for first in (0..whole).step_by(8) {
        for (lane, sum) in lanes.iter_mut().enumerate() {
            *sum += value(first + lane);
        }
    }
    let mut sum = ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5]))
        + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
    for i in whole..len {
        sum += value(i);
    }
    sum
}

/// Mean of a compact array, summed in blocks in a fixed order.
pub fn mean_of(values: &[f64]) -> f64 {
    let sums: Vec<f64> = values
        .par_chunks(4096)
        .map(|c| c.iter().sum::<f64>())
        .collect();
    sums.iter().sum::<f64>() / values.len() as f64
}

/// Mean of a field over its unknowns.
pub fn mean_over(field: &Field, unknowns: &Unknowns) -> f64 {
    sum_over(field.dims, unknowns, |x| field.data[x]) / unknowns.len() as f64
}

/// Largest over the cells of sum_c max(|u_c| on the cell's two faces normal to c): the CFL number is this
/// times dt / h. Ghost values (e.g. 2 U_wall - u_1 beside a moving wall) do not count. NaN if any
/// velocity is NaN.
pub fn max_speed_sum(velocity: &[Field; 3]) -> f64 {
    let dims = velocity[0].dims;
    let strides = [
        velocity[0].stride(0),
        velocity[0].stride(1),
        velocity[0].stride(2),
    ];
    let plane_maxima: Vec<f64> = (1..dims[2] - 1)
        .into_par_iter()
        .map(|k| {
            let mut largest: f64 = 0.0;
            for j in 1..dims[1] - 1 {
                let first = dims[0] * (j + dims[1] * k);
                for x in first + 1..first + dims[0] - 1 {
                    let mut sum = 0.0;
                    for c in 0..3 {
                        let u = &velocity[c].data;
                        sum += u[x].abs().max(u[x - strides[c]].abs());
                    }
                    if sum.is_nan() {
                        return f64::NAN;
                    }
                    largest = largest.max(sum);
                }
            }
            largest
        })
        .collect();
    plane_maxima.iter().fold(0.0, |a, &b| {
        if a.is_nan() || b.is_nan() {
            f64::NAN
        } else {
            a.max(b)
        }
    })
}

/// Kinetic energy per unit mass, 1/2 sum over the unknown faces of u_c^2 h^3 (the energy the discrete
/// equations conserve without viscosity).
pub fn kinetic_energy(grid: &Grid, velocity: &[Field; 3], unknowns: &[Unknowns; 3]) -> f64 {
    let mut total = 0.0;
    for c in 0..3 {
        let f = &velocity[c];
        total += sum_over(f.dims, &unknowns[c], |x| f.data[x] * f.data[x]);
    }
    0.5 * total * grid.cell_volume()
}

/// Mean shear stress nu du_c/dn on the wall at `side` (0 low, 1 high) of `axis`, for the tangential
/// component `c`, taken as nu (u_1 - U_wall) / (h / 2) towards the fluid; None unless the face is a no-slip
/// wall.
pub fn wall_shear_stress(
    grid: &Grid,
    boundaries: &Boundaries,
    velocity: &[Field; 3],
    viscosity: f64,
    axis: usize,
    side: usize,
    c: usize,
) -> Option<f64> {
    let Boundary::NoSlip { velocity: wall } = boundaries.faces[axis][side] else {
        return None;
    };
    if c == axis {
        return None;
    }
    let f = &velocity[c];
    let plane = Unknowns::plane(
        grid.cells,
        axis,
        if side == 0 { 1 } else { grid.cells[axis] },
    );
    let mean = sum_over(f.dims, &plane, |x| f.data[x]) / plane.len() as f64;
    let gradient = (mean - wall[c]) / (0.5 * grid.spacing);
    // Positive when the fluid moves faster than the wall in +c, whichever side the wall is on.
    Some(viscosity * gradient)
}

/// Plane averages along `axis` of the cell-centred velocity components and of `pressure`: one row per
/// cell layer, [position, u, v, w, p].
pub fn profiles(
    grid: &Grid,
    velocity: &[Field; 3],
    pressure: &Field,
    axis: usize,
) -> Vec<[f64; 5]> {
    let n = grid.cells[axis];
    (1..=n)
        .map(|layer| {
            let plane = Unknowns::plane(grid.cells, axis, layer);
            let count = plane.len() as f64;
            let mut row = [0.0; 5];
            row[0] = grid.origin[axis] + (layer as f64 - 0.5) * grid.spacing;
            for c in 0..3 {
                let f = &velocity[c];
                let s = f.stride(c);
                row[1 + c] =
                    sum_over(f.dims, &plane, |x| 0.5 * (f.data[x] + f.data[x - s])) / count;
            }
            row[4] = sum_over(pressure.dims, &plane, |x| pressure.data[x]) / count;
            row
        })
        .collect()
}
