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
use crate::volume_fraction::cell_fraction;
use crate::Vec3;
use rayon::prelude::*;
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
        let layout = &self.forcing.layout;
        let forced = std::array::from_fn(|c| self.forcing.forced_velocity(c));
        let inner: Vec<(Vec3, Vec3)> = self
            .forcing
            .spheres
            .par_iter()
            .map(|s| inner_momentum(layout, s.centre, s.radius, forced))
            .collect();
        let previous = self.inner.replace(inner.clone());

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
/// 2012). Only control volumes within half a diagonal (0.87 h) of the surface are cut by it: the others
/// are wholly inside (fraction 1) or outside (0), which the squared distance tells without a root.
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
        // sum of u dV over the points and sum of (x - centre) u dV: the angular momentum of the
        // component is (sum of (x - centre) u dV) x e_c.
        let (mut total, mut moment) = (0.0, Vec3::ZERO);
        for &(dz, kz) in &axis_points[2] {
            let Some(kz) = kz else { continue };
            for &(dy, ky) in &axis_points[1] {
                let Some(ky) = ky else { continue };
                let row = dy * dy + dz * dz;
                if row >= outside {
                    continue;
                }
                for &(dx, kx) in &axis_points[0] {
                    let Some(kx) = kx else { continue };
                    let distance_squared = dx * dx + row;
                    let fraction = if distance_squared >= outside {
                        continue;
                    } else if distance_squared <= inside {
                        1.0
                    } else {
                        let point = centre + Vec3::new(dx, dy, dz);
                        cell_fraction(point - Vec3::splat(0.5 * h), h, centre, radius)
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
