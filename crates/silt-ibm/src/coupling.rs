//! Four-way coupling of resolved spheres and the fluid (seed sec. 2 and 4; notes/ibm.md): inside each
//! Runge–Kutta stage of the fluid, after its explicit increment,
//!
//! 1. the multi-direct forcing imposes each sphere's rigid-body velocity at the start of the stage
//!    ([`DirectForcing`]) and gives the hydrodynamic force and torque of the stage;
//! 2. the rate of change of the fluid momentum inside each sphere is taken from the forced velocity,
//!    rho_f d/dt int_Vp u dV ~ rho_f (I^k - I^(k-1)) / dt_k, and likewise for the angular momentum
//!    (Kempe & Froehlich 2012), which keeps density ratios near 1 stable;
//! 3. the particles take the stage's sub-steps with the collision model ([`DemSystem::step_stage`]), the
//!    hydrodynamic loads and the buoyancy -rho_f V_p g held over them (the DEM adds the weight m_p g):
//!    rho_p V_p du_p/dt = rho_f (F_h + dI/dt) - rho_f V_p g + m_p g + F_c (seed eq. 3), and
//!    I_p domega_p/dt = rho_f (T_h + dJ/dt) + T_c (seed eq. 4).
//!
//! During a contact whose Stokes number exceeds St_crit the hydrodynamic loads on that particle are left
//! out (seed eq. 22; its markers still force the fluid), the buoyancy stays; the rule is applied with the
//! contacts as they are at the start of the stage.
//!
//! The fluid solver then solves its Crank–Nicolson systems and projects.

use crate::forcing::{DirectForcing, RigidSphere};
use crate::transfer::GridLayout;
use crate::volume_fraction::corner_fraction;
use crate::Vec3;
use rayon::prelude::*;
use silt_core::simd::vectorized;
use silt_dem::contact::EnduringContact;
use silt_dem::forces::Loads;
use silt_dem::system::{DemSystem, StepError};
use silt_fluid::boundary::Boundaries;
use silt_fluid::grid::{Field, Grid, Unknowns};
use silt_fluid::solver::StageForcing;
use std::f64::consts::PI;

/// Whether the hydrodynamic loads act on a particle while it touches a wall or another sphere.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ContactHydrodynamics {
    /// The seed's rule (eq. 22): off during a contact whose Stokes number exceeds St_crit (wet runs with
    /// `EnduringContact::Stokes`), on otherwise.
    #[default]
    Seed,
    /// Always on ("wet contact" of the seed's Fig. 9).
    Wet,
    /// Always off during contact ("dry contact" of the seed's Fig. 9).
    Dry,
}

/// Spheres of a [`DemSystem`] resolved on the fluid grid.
pub struct CoupledParticles {
    pub dem: DemSystem,
    pub forcing: DirectForcing,
    /// Fluid density rho_f (the particles' densities are their materials').
    pub fluid_density: f64,
    /// Fluid momentum and angular momentum (about the centre) inside each sphere at the last stage, per
    /// unit fluid density; `None` before the first. Part of a checkpoint (the next stage's rate of change
    /// starts from it).
    pub inner: Option<Vec<(Vec3, Vec3)>>,
    /// The first error of the particle integration, if any (the fluid's stage cannot return it).
    pub error: Option<StepError>,
    /// Particles whose hydrodynamic loads were left out in the last stage (seed eq. 22).
    pub dry_contacts: usize,
    /// The rule for the hydrodynamic loads during contact (the seed's by default).
    pub in_contact: ContactHydrodynamics,
    /// Seconds spent so far in the forcing (with the inner-fluid integrals) and in the particles'
    /// sub-steps (the collision model).
    pub forcing_seconds: f64,
    pub particle_seconds: f64,
    /// Of the forcing's seconds, those of the inner-fluid integrals.
    pub inner_seconds: f64,
}

impl CoupledParticles {
    /// Couples the spheres of `dem` (its time step is set to the fluid's each stage) to the fluid on
    /// `grid` with `boundaries`, with `iterations` forcing passes and markers retracted by `retraction` h.
    pub fn new(
        dem: DemSystem,
        grid: Grid,
        boundaries: &Boundaries,
        fluid_density: f64,
        iterations: usize,
        retraction: f64,
    ) -> Self {
        let spheres = rigid_spheres(&dem);
        CoupledParticles {
            forcing: DirectForcing::new(grid, boundaries, spheres, iterations, retraction),
            dem,
            fluid_density,
            inner: None,
            error: None,
            dry_contacts: 0,
            in_contact: ContactHydrodynamics::Seed,
            forcing_seconds: 0.0,
            particle_seconds: 0.0,
            inner_seconds: 0.0,
        }
    }
}

impl CoupledParticles {
    /// For each particle, whether its hydrodynamic loads are left out in this stage (see
    /// [`ContactHydrodynamics`]), judged with the contacts as they are at the start of the stage.
    fn dry_during_contact(&self) -> Vec<bool> {
        let n = self.dem.particles.len();
        let stokes = |fluid_density, kinematic_viscosity| {
            self.dem
                .contact_stokes_numbers(fluid_density, kinematic_viscosity)
        };
        match (self.in_contact, self.dem.model.enduring) {
            (ContactHydrodynamics::Wet, _) => vec![false; n],
            (ContactHydrodynamics::Dry, _) => self.dem.touching(),
            (
                ContactHydrodynamics::Seed,
                EnduringContact::Stokes {
                    st_crit,
                    fluid_density,
                    kinematic_viscosity,
                },
            ) => stokes(fluid_density, kinematic_viscosity)
                .into_iter()
                .map(|st| st > st_crit)
                .collect(),
            (ContactHydrodynamics::Seed, EnduringContact::MinimumSpeed(_)) => vec![false; n],
        }
    }
}

/// The spheres' current rigid-body states.
fn rigid_spheres(dem: &DemSystem) -> Vec<RigidSphere> {
    let p = &dem.particles;
    (0..p.len())
        .map(|i| RigidSphere {
            centre: p.position[i],
            radius: p.radius[i],
            velocity: p.velocity[i],
            angular_velocity: p.angular_velocity[i],
        })
        .collect()
}

impl StageForcing for CoupledParticles {
    fn add_force(
        &mut self,
        stage: usize,
        dt: f64,
        velocity: &[Field; 3],
        unknowns: &[Unknowns; 3],
        delta: &mut [Vec<f64>; 3],
    ) {
        if self.error.is_some() {
            return;
        }
        // 1. Forcing with the spheres where they are at the start of the stage.
        let clock = std::time::Instant::now();
        let spheres = rigid_spheres(&self.dem);
        for (forced, sphere) in self.forcing.spheres.iter_mut().zip(spheres) {
            *forced = sphere;
        }
        self.forcing.add_force(stage, dt, velocity, unknowns, delta);

        // 2. Momentum of the forced fluid inside each sphere, and its rate of change over the stage.
        let stage_length = silt_core::rk3::stage_fraction(stage) * dt;
        let inner_clock = std::time::Instant::now();
        let layout = &self.forcing.layout;
        let forced = std::array::from_fn(|c| self.forcing.forced_velocity(c));
        // Spheres taken by position (z, then y, then x, in 8-cell slabs), so that each thread's run of
        // spheres finds the rows its neighbours brought into the cache.
        let spheres = &self.forcing.spheres;
        let slab = |x: f64, a: usize| {
            ((x - layout.grid.origin[a]) / (8.0 * layout.grid.spacing)).floor() as i64
        };
        let mut order: Vec<usize> = (0..spheres.len()).collect();
        order.sort_by_key(|&p| {
            let c = spheres[p].centre;
            (slab(c.z, 2), slab(c.y, 1), slab(c.x, 0), p)
        });
        let by_position: Vec<(Vec3, Vec3)> = order
            .par_iter()
            .map(|&p| {
                let s = &spheres[p];
                vectorized(
                    #[inline(always)]
                    || inner_momentum(layout, s.centre, s.radius, forced),
                )
            })
            .collect();
        let mut inner = vec![(Vec3::ZERO, Vec3::ZERO); spheres.len()];
        for (&p, integrals) in order.iter().zip(by_position) {
            inner[p] = integrals;
        }
        let previous = self.inner.replace(inner.clone());
        self.inner_seconds += inner_clock.elapsed().as_secs_f64();

        self.forcing_seconds += clock.elapsed().as_secs_f64();

        // 3. The particles' sub-steps with the hydrodynamic loads held over the stage.
        let clock = std::time::Instant::now();
        let rho = self.fluid_density;
        let gravity = self.dem.gravity;
        // Eq. (22): hydrodynamic loads off during contacts above St_crit (wet runs only).
        let dry = self.dry_during_contact();
        self.dry_contacts = dry.iter().filter(|&&d| d).count();
        let p = &self.dem.particles;
        let n = p.len();
        let mut external = Loads::zeros(n);
        for i in 0..n {
            let (rate, angular_rate) = match &previous {
                Some(previous) => (
                    (inner[i].0 - previous[i].0) / stage_length,
                    (inner[i].1 - previous[i].1) / stage_length,
                ),
                None => (Vec3::ZERO, Vec3::ZERO),
            };
            let volume = 4.0 / 3.0 * PI * p.radius[i].powi(3);
            let buoyancy = -rho * volume * gravity;
            if dry[i] {
                external.force[i] = buoyancy;
            } else {
                external.force[i] = rho * (self.forcing.force[i] + rate) + buoyancy;
                external.torque[i] = rho * (self.forcing.torque[i] + angular_rate);
            }
        }
        self.dem.external = external;
        self.dem.dt = dt;
        if let Err(e) = self.dem.step_stage(stage) {
            self.error = Some(e);
        }
        self.particle_seconds += clock.elapsed().as_secs_f64();
    }
}

/// int u dV and int (x - centre) x u dV over the sphere, per unit density, from the forced velocity
/// (`forced[c]`: component c at its unknowns, compact order) at the velocity points of each component,
/// weighted by the solid fraction of the cell-sized control volume around each point (Kempe & Froehlich
/// 2012, eq. 31 from the signed distances at the corners). Only control volumes within half a diagonal
/// (0.87 h) of the surface are cut by it: the others are wholly inside (fraction 1) or outside (0), which
/// the squared distance tells without a root; the cut ones share their corners' distances.
#[inline(always)]
fn inner_momentum(
    layout: &GridLayout,
    centre: Vec3,
    radius: f64,
    forced: [&[f64]; 3],
) -> (Vec3, Vec3) {
    let h = layout.grid.spacing;
    let h3 = h * h * h;
    let half_diagonal = 0.5 * 3f64.sqrt() * h;
    let outside = (radius + half_diagonal).powi(2);
    let inside = (radius - half_diagonal).max(0.0).powi(2);
    let (mut momentum, mut angular) = (Vec3::ZERO, Vec3::ZERO);
    let mut corners = Vec::new();
    for c in 0..3 {
        let Unknowns { start, shape } = layout.unknowns[c];
        let strides = [1, shape[0], shape[0] * shape[1]];
        // Along each axis, the points of component c that can hold solid: their offset from the centre
        // and their offset in the compact array (wrapped on periodic axes; None outside the unknowns
        // along a bounded axis).
        let axis_points: [Vec<(f64, Option<usize>)>; 3] = std::array::from_fn(|a| {
            let half = if a == c { 0.0 } else { 0.5 };
            let s = |x: f64| (x - layout.grid.origin[a]) / h + half;
            let reach = radius + half_diagonal;
            let (low, high) = (
                s(centre[a] - reach).floor() as isize,
                s(centre[a] + reach).ceil() as isize,
            );
            (low..=high)
                .map(|i| {
                    let x = layout.grid.origin[a] + (i as f64 - half) * h;
                    let offset = layout
                        .unknown_index(c, a, i)
                        .map(|wrapped| (wrapped - start[a]) * strides[a]);
                    (x - centre[a], offset)
                })
                .collect()
        });
        // Signed distances at the corners of the control volumes, on the lattice of corners (corner
        // (a, b, c) half a cell below point (a, b, c) along each axis). A cut control volume has its
        // corners within 2 h of the surface: only those take a root, the others are NaN (never read).
        let counts = axis_points.each_ref().map(|points| points.len() + 1);
        let corner_offset = |a: usize, i: usize| axis_points[a][0].0 + (i as f64 - 0.5) * h;
        let band = (
            (radius - 2.0 * h).max(0.0).powi(2),
            (radius + 2.0 * h).powi(2),
        );
        let corner_x: Vec<f64> = (0..counts[0]).map(|i| corner_offset(0, i)).collect();
        corners.clear();
        corners.resize(counts[0] * counts[1] * counts[2], 0.0);
        for (cz, plane) in corners.chunks_exact_mut(counts[0] * counts[1]).enumerate() {
            let z = corner_offset(2, cz);
            for (cy, row) in plane.chunks_exact_mut(counts[0]).enumerate() {
                let y = corner_offset(1, cy);
                let yz = y * y + z * z;
                for (slot, &x) in row.iter_mut().zip(&corner_x) {
                    let d2 = x * x + yz;
                    // A root for every corner (no branch to mispredict), NaN outside the band.
                    let distance = d2.sqrt() - radius;
                    let in_band = (d2 > band.0) & (d2 < band.1);
                    *slot = if in_band { distance } else { f64::NAN };
                }
            }
        }
        let corner_strides = [1, counts[0], counts[0] * counts[1]];
        // Touch the first and last point of every row first: the rows' loads then overlap instead of
        // each waiting on memory in turn inside the sums below (a prefetch with plain loads).
        let row_ends = (
            axis_points[0].iter().find_map(|p| p.1),
            axis_points[0].iter().rev().find_map(|p| p.1),
        );
        if let (Some(first), Some(last)) = row_ends {
            let mut touched = 0.0;
            for &(_, kz) in &axis_points[2] {
                for &(_, ky) in &axis_points[1] {
                    if let (Some(kz), Some(ky)) = (kz, ky) {
                        touched += forced[c][first + ky + kz] + forced[c][last + ky + kz];
                    }
                }
            }
            std::hint::black_box(touched);
        }
        // sum of u dV over the points and sum of (x - centre) u dV: the angular momentum of the
        // component is (sum of (x - centre) u dV) x e_c.
        let (mut total, mut moment) = (0.0, Vec3::ZERO);
        for (iz, &(dz, kz)) in axis_points[2].iter().enumerate() {
            let Some(kz) = kz else { continue };
            for (iy, &(dy, ky)) in axis_points[1].iter().enumerate() {
                let Some(ky) = ky else { continue };
                let row = dy * dy + dz * dz;
                if row >= outside {
                    continue;
                }
                // The points of the row within reach: |dx| < sqrt(outside - row).
                let half_width = (outside - row).sqrt();
                let x0 = axis_points[0][0].0;
                let last = axis_points[0].len() - 1;
                let first_x = (((-half_width - x0) / h).floor().max(0.0) as usize).min(last);
                let last_x = (((half_width - x0) / h).ceil().max(0.0) as usize).min(last);
                for (ix, &(dx, kx)) in axis_points[0]
                    .iter()
                    .enumerate()
                    .take(last_x + 1)
                    .skip(first_x)
                {
                    let Some(kx) = kx else { continue };
                    let distance_squared = dx * dx + row;
                    let fraction = if distance_squared >= outside {
                        continue;
                    } else if distance_squared <= inside {
                        1.0
                    } else {
                        let base = ix + corner_strides[1] * iy + corner_strides[2] * iz;
                        corner_fraction(std::array::from_fn(|corner| {
                            corners[base
                                + (corner & 1)
                                + corner_strides[1] * ((corner >> 1) & 1)
                                + corner_strides[2] * ((corner >> 2) & 1)]
                        }))
                    };
                    let weight = fraction * h3 * forced[c][kx + ky + kz];
                    total += weight;
                    moment += weight * Vec3::new(dx, dy, dz);
                }
            }
        }
        momentum[c] = total;
        angular += moment.cross(Vec3::AXES[c]);
    }
    (momentum, angular)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Relative errors of the momentum and angular momentum of the fluid inside a sphere of radius 2
    /// moving rigidly, on a grid of spacing h, against V u and (8 pi / 15) R^5 omega.
    fn rigid_motion_errors(h: f64) -> (f64, f64) {
        let cells = [12.0, 10.0, 11.0].map(|length: f64| (length / h).round() as usize);
        let grid = Grid {
            cells,
            spacing: h,
            origin: [0.0, 0.0, 0.0],
        };
        let layout = GridLayout::new(grid, &Boundaries::periodic());
        let (centre, radius) = (Vec3::new(0.3, 5.1, 10.7), 2.0);
        let (velocity, spin) = (Vec3::new(0.3, -0.2, 0.5), Vec3::new(0.4, 0.1, -0.7));
        let forced: [Vec<f64>; 3] = std::array::from_fn(|c| {
            let Unknowns { start, shape } = layout.unknowns[c];
            let mut values = Vec::with_capacity(shape.iter().product());
            for k in 0..shape[2] {
                for j in 0..shape[1] {
                    for i in 0..shape[0] {
                        let index = [start[0] + i, start[1] + j, start[2] + k];
                        let point = Vec3::from_array(
                            grid.point(silt_fluid::grid::Location::Face(c), index),
                        );
                        let arm = layout.separation(centre, point);
                        values.push((velocity + spin.cross(arm))[c]);
                    }
                }
            }
            values
        });
        let (momentum, angular) = inner_momentum(
            &layout,
            centre,
            radius,
            std::array::from_fn(|c| forced[c].as_slice()),
        );
        let volume = 4.0 / 3.0 * PI * radius.powi(3);
        let inertia = 8.0 * PI / 15.0 * radius.powi(5);
        (
            (momentum - volume * velocity).length() / (volume * velocity.length()),
            (angular - inertia * spin).length() / (inertia * spin.length()),
        )
    }

    /// The fluid inside a sphere moving rigidly (translation plus rotation, on every component's
    /// points, the sphere across the periodic seam) carries the sphere's momentum and angular momentum
    /// within the error of the cut-cell fractions, which falls at about second order with R / h.
    #[test]
    fn inner_momentum_of_a_rigid_motion() {
        let coarse = rigid_motion_errors(0.5);
        let fine = rigid_motion_errors(0.25);
        assert!(
            coarse.0 < 0.03 && coarse.1 < 0.005,
            "R/h = 4: errors {coarse:?}"
        );
        assert!(fine.0 < 0.35 * coarse.0, "errors {coarse:?} then {fine:?}");
        assert!(fine.1 < 0.35 * coarse.1, "errors {coarse:?} then {fine:?}");
    }
}
