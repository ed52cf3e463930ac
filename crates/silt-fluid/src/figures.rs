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
        // Per layer and quantity: the rows' sums of each plane (along y, each plane's one row).
        let lines: Vec<f64> = (1..=layers)
            .flat_map(|layer| layer_sums(layer, axis == 1).into_iter().flatten())
            .collect();
        let sums = decomposition.layer_sums(axis, &lines, 4);
        let global_layers = global.cells[axis];
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
