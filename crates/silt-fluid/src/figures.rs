//! The global figures of the flow ([`crate::diagnostics`]) over the whole domain, on any number of
//! ranks: every rank gets the same numbers, and they are the serial solver's (per-row sums chained
//! along y within each plane, the planes' sums added in z order across the ranks, maxima exact).

use crate::boundary::Boundary;
use crate::diagnostics::{max_speed_sum, plane_sums_over, row_sums_over};
use crate::grid::Unknowns;
use crate::projection::max_divergence;
use crate::FluidSolver;

impl FluidSolver {
    /// Kinetic energy per unit mass over the domain ([`crate::diagnostics::kinetic_energy`]).
    pub fn kinetic_energy(&self) -> f64 {
        let mut total = 0.0;
        for c in 0..3 {
            let f = &self.state.velocity[c];
            let unknowns = self.velocity_unknowns(c);
            let rows = row_sums_over(f.dims, unknowns, |x| f.data[x] * f.data[x]);
            total += self.decomposition().sum_of_rows(&rows, unknowns.shape[2]);
        }
        0.5 * total * self.grid().cell_volume()
    }

    /// The largest |D u| over the domain's cells.
    pub fn max_divergence(&self, work: &mut Vec<f64>) -> f64 {
        let local = max_divergence(
            &self.state.velocity,
            self.cells(),
            self.grid().spacing,
            work,
        );
        self.decomposition().max(local)
    }

    /// The CFL number of a step of length `dt` ([`max_speed_sum`] over the domain, times dt / h).
    pub fn cfl(&self, dt: f64) -> f64 {
        self.decomposition()
            .max(max_speed_sum(&self.state.velocity))
            * dt
            / self.grid().spacing
    }

    /// The mean of velocity component `c` over its unknowns in the domain (the bulk velocity along a
    /// periodic axis).
    pub fn mean_velocity(&self, c: usize) -> f64 {
        let f = &self.state.velocity[c];
        let unknowns = self.velocity_unknowns(c);
        let rows = row_sums_over(f.dims, unknowns, |x| f.data[x]);
        self.decomposition().sum_of_rows(&rows, unknowns.shape[2]) / self.global_unknowns(c) as f64
    }

    /// [`crate::diagnostics::wall_shear_stress`] over the whole wall (a wall across z lies on one
    /// rank, one along it on all).
    pub fn wall_shear_stress(&self, axis: usize, side: usize, c: usize) -> Option<f64> {
        let Boundary::NoSlip { velocity: wall } = self.config.boundaries.faces[axis][side] else {
            return None;
        };
        if c == axis {
            return None;
        }
        let grid = self.grid();
        let own = self.decomposition().boundaries();
        // The layer of cells next to the wall, where this rank holds it.
        let holds = own.faces[axis][side] == self.config.boundaries.faces[axis][side];
        let f = &self.state.velocity[c];
        let (rows, planes) = if holds {
            let layer = if side == 0 { 1 } else { grid.cells[axis] };
            let plane = Unknowns::plane(grid.cells, axis, layer);
            let rows = row_sums_over(f.dims, &plane, |x| f.data[x]);
            (rows, plane.shape[2])
        } else if axis == 2 {
            // The ranks of a process-grid row hold the wall's plane, or none of it.
            (Vec::new(), 0)
        } else {
            (Vec::new(), grid.cells[2])
        };
        let global = self.config.grid.cells;
        let count: usize = (0..3).filter(|&a| a != axis).map(|a| global[a]).product();
        let mean = self.decomposition().sum_of_rows(&rows, planes) / count as f64;
        let gradient = (mean - wall[c]) / (0.5 * grid.spacing);
        Some(self.config.viscosity * gradient)
    }

    /// [`crate::diagnostics::profiles`] over the whole domain, on every rank: plane averages along
    /// `axis` of the cell-centred velocity and the pressure, one row per layer of cells,
    /// [position, u, v, w, p].
    pub fn profiles(&self, axis: usize) -> Vec<[f64; 5]> {
        let grid = *self.grid();
        let global = self.config.grid;
        let decomposition = self.decomposition();
        let (velocity, pressure) = (&self.state.velocity, &self.state.pressure);
        // The four quantities at the cells of a layer: the rows' sums (or, with `by_plane`, the
        // z planes' sums, for layers whose planes hold one row each).
        let layer_sums = |layer: usize, by_plane: bool| -> [Vec<f64>; 4] {
            let plane = Unknowns::plane(grid.cells, axis, layer);
            let sums_over = |dims: [usize; 3], value: &(dyn Fn(usize) -> f64 + Sync)| {
                if by_plane {
                    plane_sums_over(dims, &plane, value)
                } else {
                    row_sums_over(dims, &plane, value)
                }
            };
            let mut sums: [Vec<f64>; 4] = Default::default();
            for c in 0..3 {
                let f = &velocity[c];
                let s = f.stride(c);
                sums[c] = sums_over(f.dims, &|x| 0.5 * (f.data[x] + f.data[x - s]));
            }
            sums[3] = sums_over(pressure.dims, &|x| pressure.data[x]);
            sums
        };
        let position = |global_layer: usize| {
            global.origin[axis] + (global_layer as f64 - 0.5) * global.spacing
        };
        let count = (0..3)
            .filter(|&a| a != axis)
            .map(|a| global.cells[a])
            .product::<usize>() as f64;
        let layers = grid.cells[axis];
        let [py, _] = decomposition.dims();
        let first_of_row = decomposition.comm().rank().is_multiple_of(py);
        if axis == 2 {
            // Each layer is a plane of this rank's process-grid row: its rows' sums chained
            // across the row's blocks, the planes gathered in z order from one rank per row.
            let rows: Vec<f64> = (1..=layers)
                .flat_map(|layer| layer_sums(layer, false).into_iter().flatten())
                .collect();
            let sums = decomposition.plane_sums_of_rows(&rows, 1, 4 * layers);
            let mut local = Vec::with_capacity(5 * layers);
            if first_of_row {
                for (layer, sums) in sums.chunks_exact(4).enumerate() {
                    local.push(position(layer + 1 + grid.offset[2]));
                    local.extend(sums.iter().map(|s| s / count));
                }
            }
            let all = if decomposition.is_distributed() {
                decomposition.comm().all_gather_v(&local).0
            } else {
                local
            };
            return all
                .chunks_exact(5)
                .map(|r| [r[0], r[1], r[2], r[3], r[4]])
                .collect();
        }
        // Layers across x or y: per layer and quantity, the sums of this rank's z planes (along x:
        // chained across the blocks of the process-grid row; along y a layer's plane is one row),
        // gathered, and added block by block along z, plane by plane.
        let planes = grid.cells[2];
        let local: Vec<f64> = if axis == 0 {
            let rows: Vec<f64> = (1..=layers)
                .flat_map(|layer| layer_sums(layer, false).into_iter().flatten())
                .collect();
            let sums = decomposition.plane_sums_of_rows(&rows, planes, 4 * layers);
            if first_of_row {
                sums
            } else {
                Vec::new()
            }
        } else {
            (1..=layers)
                .flat_map(|layer| layer_sums(layer, true).into_iter().flatten())
                .collect()
        };
        let (all, counts) = if decomposition.is_distributed() {
            decomposition.comm().all_gather_v(&local)
        } else {
            let n = local.len();
            (local, vec![n])
        };
        // Each rank's sums, [layer][quantity][plane], and the global layers they belong to.
        let global_layers = global.cells[axis];
        let mut sums = vec![0.0; 4 * global_layers];
        let mut offset = 0;
        for (rank, &n) in counts.iter().enumerate() {
            let chunk = &all[offset..offset + n];
            offset += n;
            if n == 0 {
                continue;
            }
            let first_layer = if axis == 1 {
                decomposition.all_rows()[rank].start
            } else {
                0
            };
            let rank_planes = decomposition.all_slabs()[rank].len();
            for (slot, plane_sums) in chunk.chunks_exact(rank_planes).enumerate() {
                let at = 4 * first_layer + slot;
                for &p in plane_sums {
                    sums[at] += p;
                }
            }
        }
        (0..global_layers)
            .map(|l| {
                let s = &sums[4 * l..4 * l + 4];
                [
                    position(l + 1),
                    s[0] / count,
                    s[1] / count,
                    s[2] / count,
                    s[3] / count,
                ]
            })
            .collect()
    }
}
