//! Four-way coupling of resolved spheres and the fluid (seed sec. 2 and 4; notes/ibm.md); the step reads
//! top to bottom in [`coupled_step`]. Inside each Runge–Kutta stage of the fluid, after its explicit
//! increment,
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
//! The fluid then solves its Crank–Nicolson systems and projects.

use crate::forcing::{DirectForcing, RigidSphere};
use crate::transfer::{GridLayout, PlaneWindow};
use crate::Vec3;
use rayon::prelude::*;
use silt_core::rk3::ALPHA;
use silt_core::simd::vectorized;
use silt_dem::contact::EnduringContact;
use silt_dem::forces::Loads;
use silt_dem::system::{DemSystem, StepError};
use silt_fluid::boundary::Boundaries;
use silt_fluid::grid::{Field, Grid, Unknowns};
use silt_fluid::{FluidError, FluidSolver};
use std::f64::consts::PI;

/// The lubrication range of resolved spheres in cells (seed sec. 3.1: the grid resolves gaps above 2 h).
pub const LUBRICATION_RANGE_CELLS: f64 = 2.0;
/// Direct-forcing passes per stage (Kempe & Froehlich 2012 use 2-3).
pub const DEFAULT_FORCING_ITERATIONS: usize = 3;
/// Markers sit this many cells inside the surface (Breugem 2012).
pub const DEFAULT_MARKER_RETRACTION: f64 = 0.3;

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
    /// Seconds spent on the fluid-fraction weights of the flow rate (eq. 32).
    pub weights_seconds: f64,
    /// The solid fraction of the fixed spheres at rest, with their indices (kept between steps).
    still_solid: Option<(Vec<usize>, Vec<f64>)>,
    /// Hold a prescribed flow rate as the seed's eq. 32, the flux of the fluid fraction (1 - phi) u,
    /// phi from the spheres at the start of each step; otherwise as the plain mean of u.
    pub fluid_fraction_flow_rate: bool,
    /// On a rank of a split sphere system: the distribution of the spheres the forcing holds.
    forcing_distribution: Option<u64>,
    /// Forces and torques on each sphere (in global index order) added to the hydrodynamic loads of
    /// every stage: loads set by a program that drives the model (the Python package), not part of
    /// a scene or a checkpoint.
    pub external: Option<Loads>,
}

/// The spheres of the whole system in index order on every rank (gathered from their owners where
/// the system is split): what the outputs and the bed's measures read.
#[derive(Clone, Debug, Default)]
pub struct WholeSpheres {
    pub particles: silt_dem::particles::Particles,
    /// Contacts of each sphere, as the caller counted them.
    pub contacts: Vec<u32>,
    /// Hydrodynamic force and torque per unit fluid density over the last step
    /// ([`DirectForcing::step_force`]).
    pub step_force: Vec<Vec3>,
    pub step_torque: Vec<Vec3>,
}

/// Values per sphere in the gather of [`CoupledParticles::whole_spheres`].
const WHOLE_ROW: usize = 22;

impl CoupledParticles {
    /// The fluid fraction at the faces normal to `axis` (periodic), from the spheres now (seed eq. 32),
    /// at this rank's faces (all of them on one rank). The solid fraction of the fixed spheres at rest
    /// (a rough bed's floor) is kept between calls.
    pub fn face_fluid_fractions(&mut self, axis: usize) -> Vec<f64> {
        let p = &self.dem.particles;
        let global = &self.forcing.layout;
        // This rank's cells and, where its block does not hold the whole axis, the layer beyond its
        // last faces (its neighbour's cells, computed here as their owner does: the spheres held here
        // cover them).
        let mut block = self.forcing.own_layout().grid;
        let extended = block.cells[axis] < global.grid.cells[axis];
        block.cells[axis] += usize::from(extended);
        let at_rest = |i: usize| {
            p.fixed[i] && p.velocity[i] == Vec3::ZERO && p.angular_velocity[i] == Vec3::ZERO
        };
        let still: Vec<usize> = (0..p.len()).filter(|&i| at_rest(i)).collect();
        let sphere = |i: usize| (p.position[i], p.radius[i]);
        // Kept by the spheres' global indices (a split system's local ones change as it distributes)
        // and the axis.
        let mut still_ids: Vec<usize> = still.iter().map(|&i| self.dem.global_index(i)).collect();
        still_ids.push(axis);
        if self.still_solid.as_ref().map(|(which, _)| which) != Some(&still_ids) {
            let spheres: Vec<(Vec3, f64)> = still.iter().map(|&i| sphere(i)).collect();
            let phi = crate::profiles::solid_fraction(global, &block, &spheres);
            self.still_solid = Some((still_ids, phi));
        }
        let (_, still_phi) = self.still_solid.as_ref().expect("set above");
        let moving: Vec<(Vec3, f64)> = (0..p.len()).filter(|&i| !at_rest(i)).map(sphere).collect();
        let mut phi = still_phi.clone();
        crate::profiles::add_solid_fraction(global, &block, &moving, &mut phi);
        crate::profiles::face_fluid_fractions(block.cells, &phi, axis, extended)
    }

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
            dry_contacts: 0,
            in_contact: ContactHydrodynamics::Seed,
            forcing_seconds: 0.0,
            particle_seconds: 0.0,
            inner_seconds: 0.0,
            weights_seconds: 0.0,
            still_solid: None,
            fluid_fraction_flow_rate: false,
            forcing_distribution: None,
            external: None,
        }
    }

    /// Splits the spheres among the ranks of the fluid's `decomposition` as its blocks split the cells
    /// (each sphere owned by the rank of its centre's cell, with ghosts as far as its markers and
    /// their neighbours reach), and the forcing with them. Nothing on one rank. Collective.
    pub fn distribute(&mut self, decomposition: &silt_fluid::decomposition::Decomposition) {
        if !decomposition.is_distributed() {
            self.forcing.split(decomposition);
            return;
        }
        let grid = self.forcing.layout.grid;
        let h = grid.spacing;
        let dem = &mut self.dem;
        // The fluid's blocks of cells: rank a + p_y b holds rows block a and planes block b.
        let [py, pz] = decomposition.dims();
        let along = |axis: usize, blocks: Vec<std::ops::Range<usize>>| {
            silt_dem::distributed::Slabs::of_cells(
                &dem.domain,
                axis,
                (grid.origin[axis], h),
                &blocks,
            )
        };
        let planes = along(
            2,
            (0..pz)
                .map(|b| decomposition.all_slabs()[py * b].clone())
                .collect(),
        );
        let slabs = if py == 1 {
            planes
        } else {
            let rows = along(1, decomposition.all_rows()[..py].to_vec());
            silt_dem::distributed::Slabs::blocks(rows, planes)
        };
        // A sphere may move this far from its block before the next distribution.
        let allowance = silt_dem::distributed::GHOST_ALLOWANCE * dem.neighbors.skin;
        // A rank forces with the markers of the spheres within R + 6 h of its block, each disabled
        // where it comes within R + R' + 3 h of another's: both spheres must be among its ghosts.
        let largest = dem.particles.max_radius();
        let reach = 3.0 * largest + 10.0 * h + 2.0 * allowance;
        dem.distribute_on(decomposition.comm().clone(), slabs, reach);
        self.forcing.split_with_reach(decomposition, allowance);
        self.sync_forcing();
    }

    /// On a split system, gives the forcing this rank's spheres after a distribution.
    pub(crate) fn sync_forcing(&mut self) {
        let Some(halo) = &self.dem.halo else {
            return;
        };
        if self.forcing_distribution != Some(halo.distributions) {
            let owned = halo.owned.clone();
            self.forcing_distribution = Some(halo.distributions);
            self.forcing.reset_spheres(rigid_spheres(&self.dem), owned);
        }
    }

    /// The forcing must take the spheres anew (after a restore).
    pub fn forget_forcing_spheres(&mut self) {
        self.forcing_distribution = None;
        self.sync_forcing();
    }

    /// Spheres in the whole system.
    pub fn total(&self) -> usize {
        self.dem
            .halo
            .as_ref()
            .map_or(self.dem.particles.len(), |h| h.total)
    }

    /// Each sphere of the whole system with its loads over the last step and its `contacts` (one per
    /// sphere held); on a split system gathered from the owners (a collective).
    pub fn whole_spheres(&self, contacts: &[u32]) -> WholeSpheres {
        let p = &self.dem.particles;
        let forcing = &self.forcing;
        let Some(halo) = &self.dem.halo else {
            return WholeSpheres {
                particles: p.clone(),
                contacts: contacts.to_vec(),
                step_force: forcing.step_force.clone(),
                step_torque: forcing.step_torque.clone(),
            };
        };
        let mut rows = Vec::new();
        for k in halo.owned_indices() {
            let (x, u, w) = (p.position[k], p.velocity[k], p.angular_velocity[k]);
            let (f, t) = (forcing.step_force[k], forcing.step_torque[k]);
            rows.extend([
                halo.ids[k] as f64,
                x.x,
                x.y,
                x.z,
                u.x,
                u.y,
                u.z,
                w.x,
                w.y,
                w.z,
            ]);
            rows.extend([p.radius[k], p.mass[k], p.inertia[k], p.material[k] as f64]);
            rows.extend([f64::from(u8::from(p.fixed[k])), f64::from(contacts[k])]);
            rows.extend([f.x, f.y, f.z, t.x, t.y, t.z]);
        }
        let (all, _) = halo.comm.all_gather_v(&rows);
        let n = halo.total;
        let mut whole = WholeSpheres {
            particles: silt_dem::particles::Particles {
                position: vec![Vec3::ZERO; n],
                velocity: vec![Vec3::ZERO; n],
                angular_velocity: vec![Vec3::ZERO; n],
                radius: vec![0.0; n],
                mass: vec![0.0; n],
                inertia: vec![0.0; n],
                material: vec![0; n],
                fixed: vec![false; n],
            },
            contacts: vec![0; n],
            step_force: vec![Vec3::ZERO; n],
            step_torque: vec![Vec3::ZERO; n],
        };
        let v3 = |r: &[f64]| Vec3::new(r[0], r[1], r[2]);
        for r in all.chunks_exact(WHOLE_ROW) {
            let i = r[0] as usize;
            let q = &mut whole.particles;
            (q.position[i], q.velocity[i], q.angular_velocity[i]) =
                (v3(&r[1..]), v3(&r[4..]), v3(&r[7..]));
            (q.radius[i], q.mass[i], q.inertia[i]) = (r[10], r[11], r[12]);
            q.material[i] = r[13] as usize;
            q.fixed[i] = r[14] != 0.0;
            whole.contacts[i] = r[15] as u32;
            whole.step_force[i] = v3(&r[16..]);
            whole.step_torque[i] = v3(&r[19..]);
        }
        whole
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

/// One time step of length `dt` of the fluid with the resolved spheres (seed sec. 2 and 4): the releases
/// and prescribed velocities due at its start ([`DemSystem::begin_step`]), then stage by stage of the
/// Runge–Kutta scheme:
///
/// 1. the fluid's explicit increment (convection, the explicit viscous part, body force and driving,
///    the pressure gradient of the previous stage);
/// 2. the direct forcing of the fluid at the spheres as they are at the start of the stage, which gives
///    the hydrodynamic loads, and the rate of change of the fluid momentum inside each sphere
///    ([`CoupledParticles::force_fluid`]);
/// 3. the particles' sub-steps with the collision model, those loads held over the stage;
/// 4. the fluid's Crank–Nicolson solve of the increment;
/// 5. the projection and the pressure update.
pub fn coupled_step(
    fluid: &mut FluidSolver,
    particles: &mut CoupledParticles,
    dt: f64,
) -> Result<(), CoupledStepError> {
    particles.dem.dt = dt;
    // Releases and prescribed velocities due now, before the forcing uses the spheres' motion; on a
    // split system the ghosts as their owners left them (the weights below read them).
    particles.dem.begin_step();
    particles.dem.refresh_ghosts();
    if particles.fluid_fraction_flow_rate {
        if let silt_fluid::Driving::FlowRate { axis, .. } = fluid.config.driving {
            let clock = std::time::Instant::now();
            let weights = particles.face_fluid_fractions(axis);
            fluid
                .set_flow_rate_weights(Some(weights))
                .expect("the weights of the driving component's faces");
            particles.weights_seconds += clock.elapsed().as_secs_f64();
        }
    }
    let mut driving_gradient = 0.0;
    for stage in 0..3 {
        fluid.explicit_increment(stage, dt);
        let (velocity, _, increment) = fluid.stage_increment();
        let loads = particles.force_fluid(stage, dt, velocity, increment);
        let clock = std::time::Instant::now();
        let moved = particles.dem.step_stage(stage, &loads);
        particles.particle_seconds += clock.elapsed().as_secs_f64();
        moved.map_err(CoupledStepError::Particles)?;
        fluid.solve_helmholtz(stage, dt);
        driving_gradient += fluid.project(stage, dt) * 2.0 * ALPHA[stage];
    }
    // What is measured after the step reads the ghosts too.
    particles.dem.refresh_ghosts();
    fluid
        .finish_step(dt, driving_gradient)
        .map_err(CoupledStepError::Fluid)
}

/// Why a coupled step failed.
#[derive(Clone, Debug, PartialEq)]
pub enum CoupledStepError {
    /// The flow diverged.
    Fluid(FluidError),
    /// The particles diverged or left the domain.
    Particles(StepError),
}

impl std::fmt::Display for CoupledStepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CoupledStepError::Fluid(e) => write!(f, "{e}"),
            CoupledStepError::Particles(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for CoupledStepError {}

impl CoupledParticles {
    /// Step 2 of stage `stage` of a step of length `dt`: forces the fluid (`increment`, the stage's
    /// velocity increment at the unknowns, on `velocity`) so that it moves with each sphere as the
    /// sphere is at the start of the stage, measures the momentum of the forced fluid inside each
    /// sphere, and returns the loads on the particles to hold over the stage: rho_f (F_h + dI/dt) plus
    /// the buoyancy -rho_f V_p g, and rho_f (T_h + dJ/dt) (seed eq. 3-4), the hydrodynamic part left
    /// out during a contact above St_crit (eq. 22).
    pub fn force_fluid(
        &mut self,
        stage: usize,
        dt: f64,
        velocity: &[Field; 3],
        increment: &mut [Vec<f64>; 3],
    ) -> Loads {
        // Forcing with the spheres where they are at the start of the stage (on a split system, the
        // ghosts given their owners' states, and after a distribution the forcing given this rank's
        // spheres).
        let clock = std::time::Instant::now();
        self.dem.refresh_ghosts();
        self.sync_forcing();
        let spheres = rigid_spheres(&self.dem);
        for (forced, sphere) in self.forcing.spheres.iter_mut().zip(spheres) {
            *forced = sphere;
        }
        // `increment` holds the forced velocity near the spheres until `restore_increment` below.
        self.forcing.force_in_place(stage, dt, velocity, increment);

        // Momentum of the forced fluid inside each sphere, and its rate of change over the stage.
        let stage_length = silt_core::rk3::stage_fraction(stage) * dt;
        let inner_clock = std::time::Instant::now();
        let layout = &self.forcing.layout;
        // On a rank of a distributed run: its own spheres, from its window arrays of the forced
        // velocity (they hold every point inside its spheres), gathered below.
        let rank_block = self.forcing.rank_block.as_ref();
        let forced: [&[f64]; 3] = std::array::from_fn(|c| match rank_block {
            Some(rank_block) => rank_block.values[c].as_slice(),
            None => increment[c].as_slice(),
        });
        let windows = rank_block.map(|b| std::array::from_fn(|c| b.window(c)));
        // Spheres taken by position (z, then y, then x, in 8-cell slabs), so that each thread's run of
        // spheres finds the rows its neighbours brought into the cache.
        let spheres = &self.forcing.spheres;
        let slab = |x: f64, a: usize| {
            ((x - layout.grid.origin[a]) / (8.0 * layout.grid.spacing)).floor() as i64
        };
        // A fixed sphere at rest takes no loads (and its inner fluid stays at rest): left out, zero.
        let particles = &self.dem.particles;
        let moving = |p: usize| {
            !particles.fixed[p]
                || particles.velocity[p] != Vec3::ZERO
                || particles.angular_velocity[p] != Vec3::ZERO
        };
        let owns = |p: usize| rank_block.is_none_or(|b| b.owned[p]);
        let mut order: Vec<usize> = (0..spheres.len())
            .filter(|&p| moving(p) && owns(p))
            .collect();
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
                    || inner_momentum(layout, s.centre, s.radius, forced, windows),
                )
            })
            .collect();
        // Kept by global index on every rank (the owner of a sphere may change before the next stage).
        let total = self.total();
        let global = |p: usize| self.dem.global_index(p);
        let mut inner = vec![(Vec3::ZERO, Vec3::ZERO); total];
        for (&p, integrals) in order.iter().zip(by_position) {
            inner[global(p)] = integrals;
        }
        if let Some(halo) = &self.dem.halo {
            // Each owner's rows, gathered.
            let rows: Vec<f64> = order
                .iter()
                .flat_map(|&p| {
                    let (m, a) = inner[global(p)];
                    [global(p) as f64, m.x, m.y, m.z, a.x, a.y, a.z]
                })
                .collect();
            let (all, _) = halo.comm.all_gather_v(&rows);
            for row in all.chunks_exact(7) {
                inner[row[0] as usize] = (
                    Vec3::new(row[1], row[2], row[3]),
                    Vec3::new(row[4], row[5], row[6]),
                );
            }
        } else if let Some(rank_block) = rank_block {
            let mut rows: Vec<[f64; 6]> = inner
                .iter()
                .map(|(m, a)| [m.x, m.y, m.z, a.x, a.y, a.z])
                .collect();
            rank_block.gather_owned(&mut rows);
            for (integrals, row) in inner.iter_mut().zip(&rows) {
                *integrals = (
                    Vec3::new(row[0], row[1], row[2]),
                    Vec3::new(row[3], row[4], row[5]),
                );
            }
        }
        let previous = self.inner.replace(inner.clone());
        self.inner_seconds += inner_clock.elapsed().as_secs_f64();
        let restore_clock = std::time::Instant::now();
        self.forcing.restore_increment(velocity, increment);
        self.forcing.passes_seconds += restore_clock.elapsed().as_secs_f64();
        self.forcing_seconds += clock.elapsed().as_secs_f64();

        // The loads held over the stage. Eq. (22): hydrodynamic loads off during contacts above
        // St_crit (wet runs only).
        let rho = self.fluid_density;
        let gravity = self.dem.gravity;
        let dry = self.dry_during_contact();
        self.dry_contacts = match &self.dem.halo {
            None => dry.iter().filter(|&&d| d).count(),
            Some(halo) => {
                let mine = halo.owned_indices().filter(|&k| dry[k]).count();
                halo.comm.sum_in_rank_order(mine as f64) as usize
            }
        };
        let p = &self.dem.particles;
        let n = p.len();
        let mut loads = Loads::zeros(n);
        for i in 0..n {
            let g = self.dem.global_index(i);
            let (rate, angular_rate) = match &previous {
                Some(previous) => (
                    (inner[g].0 - previous[g].0) / stage_length,
                    (inner[g].1 - previous[g].1) / stage_length,
                ),
                None => (Vec3::ZERO, Vec3::ZERO),
            };
            let volume = 4.0 / 3.0 * PI * p.radius[i].powi(3);
            let buoyancy = -rho * volume * gravity;
            if dry[i] {
                loads.force[i] = buoyancy;
            } else {
                loads.force[i] = rho * (self.forcing.force[i] + rate) + buoyancy;
                loads.torque[i] = rho * (self.forcing.torque[i] + angular_rate);
            }
            if let Some(external) = &self.external {
                loads.force[i] += external.force[g];
                loads.torque[i] += external.torque[g];
            }
        }
        loads
    }
}

/// int u dV and int (x - centre) x u dV over the sphere, per unit density, from the forced velocity
/// (`forced[c]`: component c at its unknowns, compact order) at the velocity points of each component,
/// weighted by the solid fraction of the cell-sized control volume around each point (Kempe & Froehlich
/// 2012, eq. 31 from the signed distances at the corners).
///
/// Per component, on the box of points within R + h sqrt(3)/2 of the centre: the signed distance at
/// every corner of the box's control volumes (a lattice one larger than the points along each axis);
/// the sums over each control volume's eight corners of -phi H(-phi) and of |phi| as box sums of the
/// lattice, one axis after the other (each corner is shared by eight control volumes); the fraction
/// their ratio, exactly 1 wholly inside and 0 wholly outside; then rows of fraction times velocity.
/// Every loop runs over whole rows without branches, so that it is vectorized. With `windows`, `forced`
/// holds each component's rows and planes of a window (a rank of a distributed run).
#[inline(always)]
fn inner_momentum(
    layout: &GridLayout,
    centre: Vec3,
    radius: f64,
    forced: [&[f64]; 3],
    windows: Option<[[PlaneWindow; 2]; 3]>,
) -> (Vec3, Vec3) {
    let h = layout.grid.spacing;
    let h3 = h * h * h;
    let half_diagonal = 0.5 * 3f64.sqrt() * h;
    let outside = (radius + half_diagonal).powi(2);
    let (mut momentum, mut angular) = (Vec3::ZERO, Vec3::ZERO);
    let (mut inside_part, mut total_part) = (Vec::new(), Vec::new());
    let mut scratch = Vec::new();
    let mut row_values = Vec::new();
    for c in 0..3 {
        let Unknowns { start, shape } = layout.unknowns[c];
        // The rows of a plane of `forced[c]`: the domain's, or the window's.
        let rows = windows.map_or(shape[1], |w| w[c][0].count);
        let strides = [1, shape[0], shape[0] * rows];
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
                    let offset = layout.unknown_index(c, a, i).and_then(|wrapped| {
                        let k = wrapped - start[a];
                        match windows {
                            Some(windows) if a > 0 => windows[c][a - 1].local(k),
                            _ => Some(k),
                        }
                        .map(|k| k * strides[a])
                    });
                    (x - centre[a], offset)
                })
                .collect()
        });
        // Touch the first and last point of every row within reach first: the rows' loads then overlap
        // (and the corner lattice below is computed while they arrive) instead of each waiting on
        // memory in turn in the sums (a prefetch with plain loads; 0.075 to 0.054 s per step in the
        // 500-sphere benchmark when this was measured).
        let row_ends = (
            axis_points[0].iter().find_map(|p| p.1),
            axis_points[0].iter().rev().find_map(|p| p.1),
        );
        if let (Some(first), Some(last)) = row_ends {
            let mut touched = 0.0;
            for &(dz, kz) in &axis_points[2] {
                for &(dy, ky) in &axis_points[1] {
                    if let (Some(kz), Some(ky)) = (kz, ky) {
                        if dy * dy + dz * dz < outside {
                            touched += forced[c][first + ky + kz] + forced[c][last + ky + kz];
                        }
                    }
                }
            }
            std::hint::black_box(touched);
        }
        let points = axis_points.each_ref().map(|p| p.len());
        // The corner lattice: corner i along an axis lies half a cell below point i.
        let corners = points.map(|n| n + 1);
        let corner_offset = |a: usize, i: usize| axis_points[a][0].0 + (i as f64 - 0.5) * h;
        let corner_x: Vec<f64> = (0..corners[0]).map(|i| corner_offset(0, i)).collect();
        let lattice = corners[0] * corners[1] * corners[2];
        inside_part.resize(lattice, 0.0);
        total_part.resize(lattice, 0.0);
        for (cz, (inside_plane, total_plane)) in inside_part
            .chunks_exact_mut(corners[0] * corners[1])
            .zip(total_part.chunks_exact_mut(corners[0] * corners[1]))
            .enumerate()
        {
            let z = corner_offset(2, cz);
            for (cy, (inside_row, total_row)) in inside_plane
                .chunks_exact_mut(corners[0])
                .zip(total_plane.chunks_exact_mut(corners[0]))
                .enumerate()
            {
                let y = corner_offset(1, cy);
                let yz = y * y + z * z;
                for ((inside, total), &x) in inside_row.iter_mut().zip(total_row).zip(&corner_x) {
                    let phi = (x * x + yz).sqrt() - radius;
                    *inside = (-phi).max(0.0);
                    *total = phi.abs();
                }
            }
        }
        // Box sums over the eight corners of each control volume, axis by axis: x, then y, then z.
        for part in [&mut inside_part, &mut total_part] {
            box_sums(part, corners, &mut scratch);
        }
        // sum of u dV over the points and sum of (x - centre) u dV: the angular momentum of the
        // component is (sum of (x - centre) u dV) x e_c.
        let x_offsets: Vec<f64> = axis_points[0].iter().map(|p| p.0).collect();
        // The compact offsets along x, when they are consecutive and all unknowns (no periodic seam
        // or wall within the box): a row is then one slice of the array.
        let x_first = axis_points[0][0].1;
        let x_consecutive = axis_points[0]
            .iter()
            .enumerate()
            .all(|(i, p)| matches!((p.1, x_first), (Some(k), Some(f)) if k == f + i));
        let (mut total, mut moment) = (0.0, Vec3::ZERO);
        for (iz, &(dz, kz)) in axis_points[2].iter().enumerate() {
            let Some(kz) = kz else { continue };
            for (iy, &(dy, ky)) in axis_points[1].iter().enumerate() {
                let Some(ky) = ky else { continue };
                if dy * dy + dz * dz >= outside {
                    continue;
                }
                let base = points[0] * (iy + points[1] * iz);
                let inside_row = &inside_part[base..base + points[0]];
                let total_row = &total_part[base..base + points[0]];
                // sum of fraction u and of fraction u (x - centre) along the row.
                let (mut sum, mut first_moment) = (0.0, 0.0);
                let mut add = |inside: f64, total: f64, u: f64, dx: f64| {
                    let fraction = if total > 0.0 { inside / total } else { 0.0 };
                    sum += fraction * u;
                    first_moment += fraction * u * dx;
                };
                match (x_consecutive, x_first) {
                    (true, Some(first)) => {
                        let u_row = &forced[c][first + ky + kz..first + ky + kz + points[0]];
                        for (((&inside, &total), &u), &dx) in
                            inside_row.iter().zip(total_row).zip(u_row).zip(&x_offsets)
                        {
                            add(inside, total, u, dx);
                        }
                    }
                    _ => {
                        row_values.clear();
                        row_values.extend(
                            axis_points[0]
                                .iter()
                                .map(|p| p.1.map_or(0.0, |kx| forced[c][kx + ky + kz])),
                        );
                        for (((&inside, &total), &u), &dx) in inside_row
                            .iter()
                            .zip(total_row)
                            .zip(&row_values)
                            .zip(&x_offsets)
                        {
                            add(inside, total, u, dx);
                        }
                    }
                }
                total += h3 * sum;
                moment += h3 * Vec3::new(first_moment, dy * sum, dz * sum);
            }
        }
        momentum[c] = total;
        angular += moment.cross(Vec3::AXES[c]);
    }
    (momentum, angular)
}

/// Replaces the values on a lattice of `corners` points per axis (x fastest) by the sums over the eight
/// corners of each cell between them, (corners - 1) per axis, in the same layout with the cells'
/// count: pairs along x, then along y, then along z.
#[inline(always)]
fn box_sums(values: &mut Vec<f64>, corners: [usize; 3], scratch: &mut Vec<f64>) {
    let [nx, ny, nz] = corners;
    let (cx, cy, cz) = (nx - 1, ny - 1, nz - 1);
    // Along x: cx x ny x nz.
    scratch.resize(cx * ny * nz, 0.0);
    for (out, row) in scratch.chunks_exact_mut(cx).zip(values.chunks_exact(nx)) {
        for ((o, &a), &b) in out.iter_mut().zip(&row[..cx]).zip(&row[1..]) {
            *o = a + b;
        }
    }
    // Along y: cx x cy x nz.
    values.resize(cx * cy * nz, 0.0);
    for (out_plane, plane) in values
        .chunks_exact_mut(cx * cy)
        .zip(scratch.chunks_exact(cx * ny))
    {
        for (j, out) in out_plane.chunks_exact_mut(cx).enumerate() {
            let (low, high) = (
                &plane[j * cx..(j + 1) * cx],
                &plane[(j + 1) * cx..(j + 2) * cx],
            );
            for ((o, &a), &b) in out.iter_mut().zip(low).zip(high) {
                *o = a + b;
            }
        }
    }
    // Along z: cx x cy x cz.
    let plane_len = cx * cy;
    scratch.resize(plane_len * cz, 0.0);
    for (k, out) in scratch.chunks_exact_mut(plane_len).enumerate() {
        let (low, high) = (
            &values[k * plane_len..(k + 1) * plane_len],
            &values[(k + 1) * plane_len..(k + 2) * plane_len],
        );
        for ((o, &a), &b) in out.iter_mut().zip(low).zip(high) {
            *o = a + b;
        }
    }
    std::mem::swap(values, scratch);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::volume_fraction::cell_fraction;

    /// visit(field index, position relative to `centre` (nearest image)) for every unknown of component
    /// c, in the compact order.
    fn for_each_unknown(
        layout: &GridLayout,
        c: usize,
        centre: Vec3,
        mut visit: impl FnMut([usize; 3], Vec3),
    ) {
        let Unknowns { start, shape } = layout.unknowns[c];
        for k in 0..shape[2] {
            for j in 0..shape[1] {
                for i in 0..shape[0] {
                    let index = [start[0] + i, start[1] + j, start[2] + k];
                    let point = Vec3::from_array(
                        layout
                            .grid
                            .point(silt_fluid::grid::Location::Face(c), index),
                    );
                    visit(index, layout.separation(centre, point));
                }
            }
        }
    }

    /// Relative errors of the momentum and angular momentum of the fluid inside a sphere of radius 2
    /// moving rigidly, on a grid of spacing h, against V u and (8 pi / 15) R^5 omega.
    fn rigid_motion_errors(h: f64) -> (f64, f64) {
        let cells = [12.0, 10.0, 11.0].map(|length: f64| (length / h).round() as usize);
        let grid = Grid {
            cells,
            spacing: h,
            origin: [0.0, 0.0, 0.0],
            offset: [0; 3],
        };
        let layout = GridLayout::new(grid, &Boundaries::periodic());
        let (centre, radius) = (Vec3::new(0.3, 5.1, 10.7), 2.0);
        let (velocity, spin) = (Vec3::new(0.3, -0.2, 0.5), Vec3::new(0.4, 0.1, -0.7));
        let forced: [Vec<f64>; 3] = std::array::from_fn(|c| {
            let mut values = Vec::with_capacity(layout.unknowns[c].len());
            for_each_unknown(&layout, c, centre, |_, arm| {
                values.push((velocity + spin.cross(arm))[c]);
            });
            values
        });
        let (momentum, angular) = inner_momentum(
            &layout,
            centre,
            radius,
            std::array::from_fn(|c| forced[c].as_slice()),
            None,
        );
        let volume = 4.0 / 3.0 * PI * radius.powi(3);
        let inertia = 8.0 * PI / 15.0 * radius.powi(5);
        (
            (momentum - volume * velocity).length() / (volume * velocity.length()),
            (angular - inertia * spin).length() / (inertia * spin.length()),
        )
    }

    /// The box-sum evaluation equals a point-by-point one (each control volume's fraction from its own
    /// eight corners, `cell_fraction`), for spheres across periodic seams in x and z, beside the walls
    /// of a channel and with a part of the box beyond them, on a field that varies from point to point.
    #[test]
    fn inner_momentum_equals_point_by_point_sums() {
        let h = 0.5;
        let grid = Grid {
            cells: [24, 20, 22],
            spacing: h,
            origin: [0.0, 0.0, 0.0],
            offset: [0; 3],
        };
        for (boundaries, centre, radius) in [
            (Boundaries::periodic(), Vec3::new(0.3, 5.1, 10.7), 2.0),
            (Boundaries::periodic(), Vec3::new(6.1, 4.9, 5.3), 1.7),
            (Boundaries::channel(1), Vec3::new(11.8, 0.9, 0.2), 1.3),
            (Boundaries::channel(0), Vec3::new(0.8, 5.0, 5.2), 1.6),
        ] {
            let layout = GridLayout::new(grid, &boundaries);
            let forced: [Vec<f64>; 3] = std::array::from_fn(|c| {
                (0..layout.unknowns[c].len())
                    .map(|n| ((n * 7919 + 13 * c) % 1009) as f64 / 1009.0 - 0.4)
                    .collect()
            });
            let (momentum, angular) = inner_momentum(
                &layout,
                centre,
                radius,
                std::array::from_fn(|c| forced[c].as_slice()),
                None,
            );
            let (mut expected, mut expected_angular) = (Vec3::ZERO, Vec3::ZERO);
            for c in 0..3 {
                for_each_unknown(&layout, c, centre, |index, arm| {
                    let low = centre + arm - Vec3::splat(0.5 * h);
                    let fraction = cell_fraction(low, h, centre, radius);
                    let u = forced[c][layout.compact_index(c, index)];
                    let volume_weight = fraction * h * h * h * u;
                    expected[c] += volume_weight;
                    expected_angular += (volume_weight * arm).cross(Vec3::AXES[c]);
                });
            }
            assert!(
                (momentum - expected).length() < 1e-12 * expected.length(),
                "{momentum} against {expected}"
            );
            assert!(
                (angular - expected_angular).length() < 1e-12 * expected_angular.length(),
                "{angular} against {expected_angular}"
            );
        }
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
