//! The global figures of the flow ([`crate::diagnostics`]) over the whole domain, on any number of
//! ranks: every rank gets the same numbers, and they are the serial solver's (per-plane sums added in
//! z order across the ranks, maxima exact).

use crate::boundary::Boundary;
use crate::diagnostics::{max_speed_sum, plane_sums_over};
use crate::grid::Unknowns;
use crate::projection::max_divergence;
use crate::FluidSolver;

impl FluidSolver {
    /// Kinetic energy per unit mass over the domain ([`crate::diagnostics::kinetic_energy`]).
    pub fn kinetic_energy(&self) -> f64 {
        let mut total = 0.0;
        for c in 0..3 {
            let f = &self.state.velocity[c];
            let sums =
                plane_sums_over(f.dims, self.velocity_unknowns(c), |x| f.data[x] * f.data[x]);
            total += self.decomposition().sum_of_planes(&sums);
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
        let sums = plane_sums_over(f.dims, self.velocity_unknowns(c), |x| f.data[x]);
        self.decomposition().sum_of_planes(&sums) / self.global_unknowns(c) as f64
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
        let sums = if holds {
            let layer = if side == 0 { 1 } else { grid.cells[axis] };
            plane_sums_over(f.dims, &Unknowns::plane(grid.cells, axis, layer), |x| {
                f.data[x]
            })
        } else {
            Vec::new()
        };
        let global = self.config.grid.cells;
        let count: usize = (0..3).filter(|&a| a != axis).map(|a| global[a]).product();
        let mean = self.decomposition().sum_of_planes(&sums) / count as f64;
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
        // Per layer of this rank, the z-plane sums of the four quantities.
        let layer_sums = |layer: usize| -> [Vec<f64>; 4] {
            let plane = Unknowns::plane(grid.cells, axis, layer);
            let mut sums: [Vec<f64>; 4] = Default::default();
            for c in 0..3 {
                let f = &velocity[c];
                let s = f.stride(c);
                sums[c] = plane_sums_over(f.dims, &plane, |x| 0.5 * (f.data[x] + f.data[x - s]));
            }
            sums[3] = plane_sums_over(pressure.dims, &plane, |x| pressure.data[x]);
            sums
        };
        let position = |global_layer: usize| {
            global.origin[axis] + (global_layer as f64 - 0.5) * global.spacing
        };
        if axis == 2 {
            // Each rank's layers are whole: gather the rows in z order.
            let count = (global.cells[0] * global.cells[1]) as f64;
            let mut local = Vec::with_capacity(5 * grid.cells[2]);
            for layer in 1..=grid.cells[2] {
                local.push(position(layer + grid.offset[2]));
                for sums in layer_sums(layer) {
                    local.push(sums.iter().sum::<f64>() / count);
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
        // Layers across x or y: every rank holds a part of each: its z-plane sums, all gathered at
        // once ([layer][quantity][plane] on each rank), then added rank by rank, plane by plane.
        let count = (0..3)
            .filter(|&a| a != axis)
            .map(|a| global.cells[a])
            .product::<usize>() as f64;
        let layers = grid.cells[axis];
        let local: Vec<f64> = (1..=layers)
            .flat_map(|layer| layer_sums(layer).into_iter().flatten())
            .collect();
        let (all, counts) = if decomposition.is_distributed() {
            decomposition.comm().all_gather_v(&local)
        } else {
            let n = local.len();
            (local, vec![n])
        };
        let mut rows: Vec<[f64; 5]> = (1..=layers)
            .map(|l| [position(l), 0.0, 0.0, 0.0, 0.0])
            .collect();
        let mut sums = vec![Vec::new(); 4 * layers];
        let mut offset = 0;
        for &n in &counts {
            let planes = n / (4 * layers);
            for (slot, chunk) in all[offset..offset + n]
                .chunks_exact(planes.max(1))
                .enumerate()
            {
                if planes > 0 {
                    sums[slot].extend_from_slice(chunk);
                }
            }
            offset += n;
        }
        for (slot, plane_sums) in sums.iter().enumerate() {
            rows[slot / 4][1 + slot % 4] = plane_sums.iter().sum::<f64>() / count;
        }
        rows
    }
}
