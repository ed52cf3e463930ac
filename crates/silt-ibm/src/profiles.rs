//! The solid volume fraction on the grid and the averaged profiles the seed uses (sec. 6, eq. 32-33): the
//! fluid velocity averaged over planes normal to an axis, weighted by the fluid fraction 1 - phi, and the
//! particle velocity binned by the position of the centres.

use crate::transfer::GridLayout;
use crate::volume_fraction::cell_fraction;
use crate::Vec3;
use rayon::prelude::*;
use silt_fluid::decomposition::Decomposition;
use silt_fluid::grid::{Field, Grid};

/// Solid fraction phi of every cell of `block` (compact array, x fastest) covered by `spheres` (centre,
/// radius), from the signed distance (Kempe & Froehlich 2012); periodic axes wrap; capped at 1 where
/// spheres overlap. `block` is the domain's grid (`global.grid`) or a block of its cells (a grid whose
/// `offset` gives its first cell along each axis; its cells may run one layer past the domain's end
/// along a periodic axis, wrapped).
pub fn solid_fraction(global: &GridLayout, block: &Grid, spheres: &[(Vec3, f64)]) -> Vec<f64> {
    let [n0, n1, n2] = block.cells;
    let mut phi = vec![0.0; n0 * n1 * n2];
    add_solid_fraction(global, block, spheres, &mut phi);
    phi
}

/// Adds the solid fraction of `spheres` to `phi`, the cells of `block` (as [`solid_fraction`], capped
/// at 1): each cell's value is the one the whole grid's array holds there.
pub fn add_solid_fraction(
    global: &GridLayout,
    block: &Grid,
    spheres: &[(Vec3, f64)],
    phi: &mut [f64],
) {
    let [n0, n1, _] = block.cells;
    let cells = global.grid.cells;
    let h = global.grid.spacing;
    let origin = Vec3::from_array(global.grid.origin);
    // The block's index of the domain's cell i along axis a (any integer: wrapped along a periodic
    // axis), if the block holds it.
    let local = |i: isize, a: usize| -> Option<usize> {
        let n = cells[a] as isize;
        let from_first = i - block.offset[a] as isize;
        let l = if global.periodic[a] {
            from_first.rem_euclid(n)
        } else {
            from_first
        };
        (0..block.cells[a] as isize)
            .contains(&l)
            .then_some(l as usize)
    };
    phi.par_chunks_mut(n0 * n1)
        .enumerate()
        .for_each(|(k, plane)| {
            let z_low = origin.z + (block.offset[2] + k) as f64 * h;
            for &(centre, radius) in spheres {
                // The sphere's cells in this plane, from its nearest image along z.
                let dz = global
                    .separation(centre, Vec3::new(centre.x, centre.y, z_low + 0.5 * h))
                    .z;
                if dz.abs() > radius + h {
                    continue;
                }
                let reach = (radius / h).ceil() as isize + 1;
                let base = [0, 1].map(|a| ((centre[a] - origin[a]) / h).floor() as isize);
                for dj in -reach..=reach {
                    let j = base[1] + dj;
                    let Some(jj) = local(j, 1) else {
                        continue;
                    };
                    for di in -reach..=reach {
                        let i = base[0] + di;
                        let Some(ii) = local(i, 0) else {
                            continue;
                        };
                        // The cell in the sphere's frame: its unwrapped low corner.
                        let low = Vec3::new(
                            origin.x + i as f64 * h,
                            origin.y + j as f64 * h,
                            centre.z + dz - 0.5 * h,
                        );
                        let fraction = cell_fraction(low, h, centre, radius);
                        if fraction > 0.0 {
                            let value = &mut plane[ii + n0 * jj];
                            *value = (*value + fraction).min(1.0);
                        }
                    }
                }
            }
        });
}

/// The fluid fraction `1 - phi` at the faces normal to `axis`, in the compact order of that velocity
/// component's unknowns along a periodic axis (the high face of every cell, x fastest): the mean of
/// the two cells the face joins, `phi` from [`solid_fraction`] on a block of `cells`. The weights of
/// the seed's eq. 32 flow rate. With `extended`, the block holds one layer of cells along `axis` more
/// than the faces weighed (the cells beyond the last faces, a rank's neighbour's); else the last
/// faces join the first layer (the block holds the whole axis, wrapped).
pub fn face_fluid_fractions(
    cells: [usize; 3],
    phi: &[f64],
    axis: usize,
    extended: bool,
) -> Vec<f64> {
    let [n0, n1, _] = cells;
    let mut own = cells;
    own[axis] -= usize::from(extended);
    let index = |i: usize, j: usize, k: usize| i + n0 * (j + n1 * k);
    let mut weights = vec![0.0; own.iter().product()];
    weights
        .par_chunks_mut(own[0] * own[1])
        .enumerate()
        .for_each(|(k, plane)| {
            for j in 0..own[1] {
                for i in 0..own[0] {
                    let mut next = [i, j, k];
                    next[axis] += 1;
                    if next[axis] == cells[axis] {
                        next[axis] = 0;
                    }
                    let next = phi[index(next[0], next[1], next[2])];
                    plane[i + own[0] * j] = 1.0 - 0.5 * (phi[index(i, j, k)] + next);
                }
            }
        });
    weights
}

/// One plane of the fluid profile.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FluidProfileRow {
    /// Position of the plane's cell centres along the axis.
    pub position: f64,
    /// Mean solid fraction of the plane.
    pub solid_fraction: f64,
    /// sum (1 - phi) u / sum (1 - phi) over the plane's cells, velocity at the cell centres (seed eq. 33).
    pub velocity: [f64; 3],
}

/// The fluid velocity averaged over the planes normal to `axis`, weighted by the fluid fraction (seed eq.
/// 33), with `phi` from [`solid_fraction`].
pub fn fluid_profile(
    layout: &GridLayout,
    velocity: &[Field; 3],
    phi: &[f64],
    axis: usize,
) -> Vec<FluidProfileRow> {
    fluid_profile_on(layout, velocity, phi, axis, None)
}

/// [`fluid_profile`] on a rank of a distributed run (`layout` this rank's block, `phi` of its cells):
/// the same rows on every rank, the serial ones. Each row's sums are those of its x lines (or cells),
/// chained along y within each plane and the planes' sums added along z
/// ([`Decomposition::layer_sums`]), on any process grid.
pub fn fluid_profile_on(
    layout: &GridLayout,
    velocity: &[Field; 3],
    phi: &[f64],
    axis: usize,
    decomposition: Option<&Decomposition>,
) -> Vec<FluidProfileRow> {
    let grid = layout.grid;
    let [n0, n1, n2] = grid.cells;
    let serial;
    let decomposition = match decomposition {
        Some(d) => d,
        None => {
            serial = Decomposition::serial(grid, silt_fluid::boundary::Boundaries::periodic());
            &serial
        }
    };
    let global = *decomposition.global_grid();
    // Per layer of this block along the axis: per quantity (fluid weight, solid, weighted u, v, w),
    // the sums of the layer's lines (x lines, or single cells across x), plane by plane, row by row.
    let lines: Vec<f64> = (0..grid.cells[axis])
        .into_par_iter()
        .flat_map_iter(|layer| {
            let range = |a: usize, n: usize| if a == axis { layer..layer + 1 } else { 0..n };
            let lines: Vec<(usize, usize)> = range(2, n2)
                .flat_map(|k| range(1, n1).map(move |j| (j, k)))
                .collect();
            let mut sums = vec![0.0; 5 * lines.len()];
            for (line, &(j, k)) in lines.iter().enumerate() {
                let mut line_sums = [0.0; 5];
                for i in range(0, n0) {
                    let fraction = phi[i + n0 * (j + n1 * k)];
                    let fluid = 1.0 - fraction;
                    line_sums[1] += fraction;
                    line_sums[0] += fluid;
                    for c in 0..3 {
                        // Cell centre: mean of the component's two faces (field indices + 1).
                        let f = &velocity[c];
                        let high = f.index(i + 1, j + 1, k + 1);
                        let low = high - f.stride(c);
                        line_sums[2 + c] += fluid * 0.5 * (f.data[high] + f.data[low]);
                    }
                }
                for (q, value) in line_sums.into_iter().enumerate() {
                    sums[q * lines.len() + line] = value;
                }
            }
            sums
        })
        .collect();
    let sums = decomposition.layer_sums(axis, &lines, 5);
    let cells = global.cell_count() as f64 / global.cells[axis] as f64;
    sums.chunks_exact(5)
        .enumerate()
        .map(|(r, sums)| {
            let weight = sums[0];
            FluidProfileRow {
                position: global.origin[axis] + (r as f64 + 0.5) * global.spacing,
                solid_fraction: sums[1] / cells,
                velocity: [2, 3, 4].map(|c| if weight > 0.0 { sums[c] / weight } else { 0.0 }),
            }
        })
        .collect()
}

/// One bin of the particle profile.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParticleProfileRow {
    /// Centre of the bin along the axis.
    pub position: f64,
    /// Particles whose centres lie in the bin.
    pub count: usize,
    /// Their mean velocity (0 if none).
    pub velocity: [f64; 3],
}

/// Particle velocities binned by the position of the centres along `axis`, `bins` bins over [low, high).
pub fn particle_profile(
    positions: &[Vec3],
    velocities: &[Vec3],
    axis: usize,
    (low, high): (f64, f64),
    bins: usize,
) -> Vec<ParticleProfileRow> {
    let width = (high - low) / bins as f64;
    let mut rows: Vec<ParticleProfileRow> = (0..bins)
        .map(|b| ParticleProfileRow {
            position: low + (b as f64 + 0.5) * width,
            count: 0,
            velocity: [0.0; 3],
        })
        .collect();
    for (x, u) in positions.iter().zip(velocities) {
        let b = ((x[axis] - low) / width).floor();
        if b >= 0.0 && (b as usize) < bins {
            let row = &mut rows[b as usize];
            row.count += 1;
            for c in 0..3 {
                row.velocity[c] += u[c];
            }
        }
    }
    for row in &mut rows {
        if row.count > 0 {
            row.velocity = row.velocity.map(|v| v / row.count as f64);
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use silt_fluid::boundary::Boundaries;
    use silt_fluid::grid::Grid;
    use std::f64::consts::PI;

    fn layout(boundaries: &Boundaries) -> GridLayout {
        GridLayout::new(
            Grid {
                cells: [20, 16, 24],
                spacing: 0.5,
                origin: [0.0, 0.0, 0.0],
                offset: [0; 3],
            },
            boundaries,
        )
    }

    /// The fractions add up to the spheres' volume (to the level-set formula's accuracy at 6-8 cells per
    /// radius), also for a sphere cut by the periodic seams.
    #[test]
    fn solid_fraction_holds_the_sphere_volumes() {
        let layout = GridLayout::new(
            Grid {
                cells: [40, 32, 48],
                spacing: 0.25,
                origin: [0.0; 3],
                offset: [0; 3],
            },
            &Boundaries::periodic(),
        );
        let spheres = [
            (Vec3::new(0.2, 7.9, 11.8), 2.0),
            (Vec3::new(5.0, 4.0, 6.0), 1.5),
        ];
        let phi = solid_fraction(&layout, &layout.grid, &spheres);
        let volume: f64 = phi.iter().sum::<f64>() * 0.25f64.powi(3);
        let exact: f64 = spheres.iter().map(|s| 4.0 / 3.0 * PI * s.1.powi(3)).sum();
        // -0.6 % here (second order: -2.7 % at twice the cell size); a lost wrap would cost 10 % or more.
        assert!((volume / exact - 1.0).abs() < 1e-2, "{volume} vs {exact}");
        assert!(phi.iter().all(|&p| (0.0..=1.0).contains(&p)));
    }

    /// A uniform flow gives its value in every plane whatever the solid fraction; the particle bins
    /// average the centres they hold.
    #[test]
    fn profiles_of_uniform_states() {
        let layout = layout(&Boundaries::channel(2));
        let grid = layout.grid;
        let velocity = [0.3, -0.1, 0.0].map(|v| {
            let mut f = Field::zeros(&grid);
            f.data.iter_mut().for_each(|x| *x = v);
            f
        });
        let phi = solid_fraction(&layout, &layout.grid, &[(Vec3::new(5.0, 4.0, 6.0), 2.0)]);
        let profile = fluid_profile(&layout, &velocity, &phi, 2);
        assert_eq!(profile.len(), 24);
        for row in &profile {
            assert!((row.velocity[0] - 0.3).abs() < 1e-14 && (row.velocity[1] + 0.1).abs() < 1e-14);
        }
        let middle = profile
            .iter()
            .find(|r| (r.position - 6.25).abs() < 1e-12)
            .unwrap();
        assert!(middle.solid_fraction > 0.1);
        let bins = particle_profile(
            &[
                Vec3::new(0.0, 0.0, 1.0),
                Vec3::new(0.0, 0.0, 1.2),
                Vec3::new(0.0, 0.0, 5.0),
            ],
            &[Vec3::X, Vec3::Y, Vec3::Z],
            2,
            (0.0, 6.0),
            3,
        );
        assert_eq!(bins[0].count, 2);
        assert_eq!(bins[0].velocity, [0.5, 0.5, 0.0]);
        assert_eq!(bins[1].count, 0);
        assert_eq!(bins[2].velocity, [0.0, 0.0, 1.0]);
    }
}
