//! Coupled scenes: the particle tables with a `[fluid]` table, run as resolved spheres in the fluid
//! (`silt_ibm`, seed sec. 2-4). The format is documented in `docs/scene-format.md` ("Coupled scenes").
//!
//! What the two halves share is said once:
//! - the time step and end time are `simulation.dt` and `simulation.end_time` (the fluid step is fixed,
//!   since the contact duration is T_c = collision_steps dt), the output schedule is `[output]`;
//! - the particles' domain is the fluid grid's box, periodic where the fluid is (`[domain]` may be left
//!   out, and must match if given);
//! - the walls of the particles are the fluid's no-slip and free-slip faces (a moving no-slip wall moves
//!   for the particles too), of material `coupling.wall_material`;
//! - lubrication (seed eq. 9-10) takes the fluid's density and viscosity and acts for gaps up to 2 h.
//!
//! Gravity acts on the particles (weight and buoyancy, seed eq. 3). Along a periodic axis nothing would
//! hold up the suspension's weight, so the fluid then gets the uniform body force that balances the free
//! particles' buoyant weight, as in a periodic settling box (the mean pressure gradient of a real
//! column).

use super::fluid::FluidScene;
use super::keys::{num, Keys, Range, SceneError};
use super::particles::{
    DomainSection, LubricationSection, ParticleScene, ParticleTables, WallSection,
};
use super::{SceneFile, SceneKind};
use crate::run::RunSettings;
use serde::Deserialize;
use silt_dem::system::DemSystem;
use silt_fluid::model::{AXIS_NAMES, FACE_NAMES};
use silt_fluid::Boundary;
use silt_ibm::coupling::{
    ContactHydrodynamics, CoupledParticles, DEFAULT_FORCING_ITERATIONS, DEFAULT_MARKER_RETRACTION,
    LUBRICATION_RANGE_CELLS,
};
use silt_ibm::forcing::CloseSphereMarkers;
use silt_ibm::markers::SphereMarkers;
use silt_ibm::model::{CoupledModel, CoupledOutput};
use silt_ibm::protocol::{BedProtocol, BedSettings};
use std::f64::consts::PI;
use std::fmt::Write as _;

/// Smallest sphere diameter, in cells, that the immersed boundary method resolves.
pub const MIN_CELLS_PER_DIAMETER: f64 = 4.0;
/// Largest viscous number nu dt / h^2 of a coupled run. The fluid alone is stable beyond it (Crank–Nicolson),
/// but the direct forcing is computed from the explicit prediction of each stage, and with it the coupled
/// run diverged in tests at 1.5 (a heavy sphere sinking at D/h = 5) and ran stably at 1.
pub const MAX_VISCOUS_NUMBER: f64 = 1.0;

/// The `[coupling]` table.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CouplingSection {
    /// Multi-direct forcing passes per Runge–Kutta stage (default 3).
    pub forcing_iterations: Option<usize>,
    /// Markers sit this many cells inside the surface (default 0.3, Breugem 2012; 0 is Uhlmann's).
    pub marker_retraction: Option<f64>,
    /// Which markers of close spheres are disabled: "overlapping-supports" (within 3 h of the other's
    /// markers; default) or "reaching-surface" (within 1.5 h of the other's surface).
    pub close_sphere_markers: Option<String>,
    /// Lubrication for gaps up to 2 h (seed eq. 9-10; default on).
    pub lubrication: Option<bool>,
    /// zeta_min of the lubrication as a fraction of the smaller radius (default the seed's 3e-3).
    pub roughness: Option<f64>,
    /// Material of the walls (the fluid's no-slip and free-slip faces); default the first material.
    pub wall_material: Option<String>,
    /// The hydrodynamic loads during a contact: "st-crit" (the seed's rule, eq. 22: off above St_crit;
    /// default), "on" or "off" (the wet and dry contacts of the seed's Fig. 9).
    pub fluid_forces_in_contact: Option<String>,
    /// How a prescribed flow rate (`fluid.driving`, type "flow-rate") is measured: "mean" (the mean streamwise velocity over the
    /// whole domain, spheres included; default) or "fluid-fraction" (the seed's eq. 32: the flux of
    /// (1 - phi) u, phi the spheres' volume fraction).
    pub flow_rate: Option<String>,
}

/// The `[bed]` table: the seed's sheared-bed protocol (sec. 6) as a rule of the run, and its measures
/// ([`silt_ibm::protocol`]).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BedSection {
    /// Target flow rate q_f per unit span (seed eq. 32: the flux of (1 - phi) u over the channel
    /// height), along `streamwise`.
    pub flow_rate: f64,
    /// Streamwise axis ("x", "y" or "z", periodic; default "x").
    pub streamwise: Option<String>,
    /// Dry settling time before the fluid is switched on.
    pub settling_time: f64,
    /// Flow rate of the mobilisation over the target (default the seed's 8).
    pub mobilisation_factor: Option<f64>,
    /// The clear-fluid height h_f the mobilisation aims at.
    pub target_clear_height: f64,
    /// The mobilisation ends when h_f <= target_clear_height + margin (default 0).
    pub margin: Option<f64>,
    /// Longest mobilisation (default: until the end of the run).
    pub mobilisation_limit: Option<f64>,
    /// Time at the target flow rate before the averages start (default 0).
    pub transient: Option<f64>,
    /// Time between samples (default 10 dt; rounded to whole steps).
    pub sample_interval: Option<f64>,
}

/// A checked coupled scene.
#[derive(Clone, Debug)]
pub struct CoupledScene {
    /// The particle half, with the domain, walls and lubrication filled in from the fluid.
    pub particles: ParticleScene,
    /// The fluid half, with the time step, end time and output schedule of the particle half.
    pub fluid: FluidScene,
    pub forcing_iterations: usize,
    pub marker_retraction: f64,
    pub close_sphere_markers: CloseSphereMarkers,
    pub in_contact: ContactHydrodynamics,
    /// Hold the flow rate as the flux of the fluid fraction (seed eq. 32).
    pub fluid_fraction_flow_rate: bool,
    /// Fluid density rho_f.
    pub fluid_density: f64,
    /// Axis of the averaged profiles: `fluid.output.profile_axis`, else the axis gravity acts along
    /// (else z).
    pub profile_axis: usize,
    /// The sheared-bed protocol (`[bed]`), checked; the fluid's driving is its flow rate.
    pub bed: Option<BedSettings>,
}

impl CoupledScene {
    /// Parses and checks the text of a coupled scene; `source` names it in messages.
    pub fn parse(text: &str, source: &std::path::Path) -> Result<CoupledScene, SceneError> {
        super::parse_kind(text, source, "coupled", |scene| match scene {
            super::Scene::Coupled(s) => Some(*s),
            _ => None,
        })
    }

    /// Checks the particle and fluid tables of `file` and fills in what they share.
    pub fn new(file: SceneFile, keys: Keys) -> Result<CoupledScene, SceneError> {
        let mut fluid = file.fluid.clone().expect("a coupled scene has [fluid]");
        let coupling = file.coupling.clone().unwrap_or_default();
        let file_bed = file.bed.clone();
        let mut tables = ParticleTables::of(file, &keys)?;
        let s = &tables.simulation;
        let (dt, end_time) = (super::particles::check_clock(&keys, s)?, s.end_time);
        keys.forbid(
            s.integrator.as_deref() == Some("velocity-verlet"),
            "simulation.integrator",
            "\"velocity-verlet\" has no Runge–Kutta stages to sub-step in the fluid's; a coupled scene \
             needs \"seed\" (the RK3 predictor-corrector with sub-steps) or \"euler-crank-nicolson\"",
        )?;

        // What the particle half says for both.
        for (present, key, owner) in [
            (
                fluid.end_time.is_some(),
                "fluid.end_time",
                "simulation.end_time",
            ),
            (
                fluid.time_step.is_some(),
                "fluid.time_step",
                "simulation.dt",
            ),
            (
                fluid.cfl.is_some(),
                "fluid.cfl",
                "simulation.dt (a coupled run has a fixed step)",
            ),
            (
                fluid.max_time_step.is_some(),
                "fluid.max_time_step",
                "simulation.dt (a coupled run has a fixed step)",
            ),
            (
                fluid.output.interval.is_some(),
                "fluid.output.interval",
                "output.interval",
            ),
            (
                fluid.output.checkpoint_interval.is_some(),
                "fluid.output.checkpoint_interval",
                "output.checkpoint_interval",
            ),
        ] {
            keys.forbid(
                present,
                key,
                &format!("a coupled scene takes it from `{owner}`; remove it from [fluid]"),
            )?;
        }
        let fluid_density = fluid.density.take().ok_or_else(|| {
            keys.missing(
                "fluid.density",
                "a coupled scene needs the fluid density rho_f (e.g. 1000.0 for water in SI units; \
                 the particles' densities are their materials')",
            )
        })?;
        keys.number("fluid.density", fluid_density, Range::Positive)?;
        tables.output.allow(
            &keys,
            "output",
            &["track"],
            "the particle half of a coupled scene",
        )?;
        fluid.output.allow(
            &keys,
            "fluid.output",
            &["vtk_interval", "vorticity", "profile_axis"],
            "the fluid half of a coupled scene",
        )?;
        let mut settings = tables.output.settings(&keys, "output", end_time)?;
        // The fluid's images on their own schedule within the frames.
        let fluid_output = crate::scenes::output::OutputSection {
            interval: Some(settings.interval),
            ..fluid.output.clone()
        };
        let mut fluid_settings = fluid_output.settings(&keys, "fluid.output", end_time)?;
        fluid_settings.checkpoint_interval = settings.checkpoint_interval;
        settings.vtk_every = fluid_settings.vtk_every;
        let fluid = FluidScene::check(fluid, keys, end_time, fluid_settings, Some(dt))?;

        // The coupling's stability limit on the time step.
        let h = fluid.config.grid.spacing;
        let viscous_number = fluid.config.viscosity * dt / (h * h);
        keys.require(
            viscous_number <= MAX_VISCOUS_NUMBER,
            "simulation.dt",
            num(dt),
            &format!(
                "it is too large for the immersed boundary coupling: nu dt / h^2 = {viscous_number:.3} \
                 exceeds {MAX_VISCOUS_NUMBER} (the direct forcing uses each stage's explicit prediction \
                 and the coupled run diverges beyond it); allowed: dt <= {}",
                num(MAX_VISCOUS_NUMBER * h * h / fluid.config.viscosity)
            ),
        )?;

        // Coupling settings.
        let forcing_iterations = coupling
            .forcing_iterations
            .unwrap_or(DEFAULT_FORCING_ITERATIONS);
        keys.require(
            (1..=20).contains(&forcing_iterations),
            "coupling.forcing_iterations",
            forcing_iterations,
            "must lie in 1 ..= 20 (2-3 is typical)",
        )?;
        let marker_retraction = keys.number_note(
            "coupling.marker_retraction",
            coupling
                .marker_retraction
                .unwrap_or(DEFAULT_MARKER_RETRACTION),
            Range::Closed(0.0, 1.0),
            "cells; 0.3 is Breugem's choice, 0 puts the markers on the surface",
        )?;

        let close_sphere_markers = keys.choice(
            "coupling.close_sphere_markers",
            coupling
                .close_sphere_markers
                .as_deref()
                .unwrap_or("overlapping-supports"),
            &[
                (
                    "overlapping-supports",
                    CloseSphereMarkers::OverlappingSupports,
                ),
                ("reaching-surface", CloseSphereMarkers::ReachingTheSurface),
            ],
        )?;

        let in_contact = keys.choice(
            "coupling.fluid_forces_in_contact",
            coupling
                .fluid_forces_in_contact
                .as_deref()
                .unwrap_or("st-crit"),
            &[
                ("st-crit", ContactHydrodynamics::Seed),
                ("on", ContactHydrodynamics::Wet),
                ("off", ContactHydrodynamics::Dry),
            ],
        )?;

        let bed_section = file_bed;
        let fluid_fraction_flow_rate = keys.choice(
            "coupling.flow_rate",
            coupling
                .flow_rate
                .as_deref()
                .unwrap_or(if bed_section.is_some() {
                    "fluid-fraction"
                } else {
                    "mean"
                }),
            &[("mean", false), ("fluid-fraction", true)],
        )?;
        keys.forbid(
            bed_section.is_some() && !fluid_fraction_flow_rate,
            "coupling.flow_rate",
            "a [bed] holds its flow rate as the seed's eq. 32 (\"fluid-fraction\"); remove the key",
        )?;
        keys.forbid(
            bed_section.is_some() && fluid.section.driving.is_some(),
            "fluid.driving",
            "a [bed] drives the flow itself (bed.flow_rate, along bed.streamwise); remove \
             [fluid.driving]",
        )?;
        keys.forbid(
            fluid_fraction_flow_rate
                && bed_section.is_none()
                && !matches!(fluid.config.driving, silt_fluid::Driving::FlowRate { .. }),
            "coupling.flow_rate",
            "measures a prescribed flow rate: give fluid.driving a \"flow-rate\" type, or remove \
             this key",
        )?;

        // Boundaries the particles can live with.
        let boundaries = &fluid.config.boundaries;
        for a in 0..3 {
            for side in 0..2 {
                keys.forbid(
                    matches!(
                        boundaries.faces[a][side],
                        Boundary::Inflow { .. } | Boundary::Outflow
                    ),
                    &format!("fluid.boundaries.{}", FACE_NAMES[a][side]),
                    "inflow and outflow faces are not supported in coupled scenes (particles cannot \
                     enter or leave the domain); allowed: \"periodic\", \"no-slip\", \"free-slip\"",
                )?;
            }
        }

        // The domain is the grid's box.
        let grid = fluid.config.grid;
        let lengths = grid.lengths();
        let derived = DomainSection {
            min: grid.origin,
            max: [0, 1, 2].map(|a| grid.origin[a] + lengths[a]),
            periodic: [0, 1, 2].map(|a| boundaries.is_periodic(a)),
        };
        if let Some(given) = &tables.domain {
            let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * h;
            let matches = (0..3).all(|a| {
                close(given.min[a], derived.min[a])
                    && close(given.max[a], derived.max[a])
                    && given.periodic[a] == derived.periodic[a]
            });
            keys.forbid(
                !matches,
                "domain",
                &format!(
                    "min {:?}, max {:?}, periodic {:?} does not match the fluid grid: min {:?}, max \
                     {:?}, periodic {:?} (origin + cells x h, periodic where the fluid faces are); \
                     fix it or remove [domain], which a coupled scene takes from the grid",
                    given.min,
                    given.max,
                    given.periodic,
                    derived.min,
                    derived.max,
                    derived.periodic
                ),
            )?;
        }
        tables.domain = Some(derived);

        // The walls are the fluid's walls.
        keys.forbid(
            !tables.walls.is_empty(),
            "wall",
            "a coupled scene has no [[wall]] tables: its walls are the fluid's no-slip and free-slip \
             faces ([fluid.boundaries]); set their material with coupling.wall_material",
        )?;
        let wall_material = match &coupling.wall_material {
            Some(name) => {
                keys.require(
                    tables.materials.iter().any(|m| &m.name == name),
                    "coupling.wall_material",
                    format!("\"{name}\""),
                    "it must name a [[material]]",
                )?;
                name.clone()
            }
            None => tables
                .materials
                .first()
                .map(|m| m.name.clone())
                .ok_or_else(|| keys.error("material", "at least one [[material]] is required"))?,
        };
        for a in 0..3 {
            for side in 0..2 {
                let velocity = match boundaries.faces[a][side] {
                    Boundary::NoSlip { velocity } => velocity,
                    Boundary::FreeSlip => [0.0; 3],
                    _ => continue,
                };
                let mut point = grid.origin;
                let mut normal = [0.0; 3];
                if side == 0 {
                    normal[a] = 1.0;
                } else {
                    point[a] += lengths[a];
                    normal[a] = -1.0;
                }
                tables.walls.push(WallSection {
                    point,
                    normal,
                    material: wall_material.clone(),
                    velocity,
                });
            }
        }

        // Lubrication from the fluid.
        keys.forbid(
            tables.contact.lubrication.is_some(),
            "contact.lubrication",
            "a coupled scene derives the lubrication from the fluid (density, viscosity, range 2 h); \
             remove the table, and set coupling.roughness or coupling.lubrication = false instead",
        )?;
        if coupling.lubrication.unwrap_or(true) {
            tables.contact.lubrication = Some(LubricationSection {
                fluid_density,
                kinematic_viscosity: fluid.config.viscosity,
                range: LUBRICATION_RANGE_CELLS * h,
                roughness: coupling.roughness,
            });
        } else {
            keys.forbid(
                coupling.roughness.is_some(),
                "coupling.roughness",
                "belongs to the lubrication, which `coupling.lubrication = false` turns off",
            )?;
        }
        let particles = ParticleScene::check(tables, keys, settings)?;
        let gravity = particles.gravity();
        let profile_axis = fluid.profile_axis.unwrap_or_else(|| {
            if gravity.length() > 0.0 {
                (0..3)
                    .max_by(|&a, &b| gravity[a].abs().total_cmp(&gravity[b].abs()))
                    .unwrap_or(2)
            } else {
                2
            }
        });
        let bed = match &bed_section {
            Some(section) => Some(bed_settings(
                &keys_of(&particles),
                section,
                &particles,
                &fluid,
                fluid_density,
                dt,
                end_time,
            )?),
            None => None,
        };
        Ok(CoupledScene {
            bed,
            particles,
            fluid,
            forcing_iterations,
            marker_retraction,
            close_sphere_markers,
            in_contact,
            fluid_fraction_flow_rate,
            fluid_density,
            profile_axis,
        })
    }

    fn keys(&self) -> Keys<'_> {
        Keys::new(&self.particles.source)
    }

    /// Cell size h.
    pub fn spacing(&self) -> f64 {
        self.fluid.config.grid.spacing
    }

    /// Places the particles, checks that the grid resolves them, and makes the fluid solver (with the
    /// body force of a periodic suspension) and the coupled particles.
    pub fn halves(&self) -> Result<(silt_fluid::FluidSolver, CoupledParticles), SceneError> {
        self.halves_on(&silt_parallel::SingleRank::comm())
    }

    /// This rank's part of [`CoupledScene::halves`] on the ranks of `comm`: its block of the fluid
    /// (`silt_ibm::model::coupled_process_grid`), the spheres near it and the forcing of its block
    /// (`silt_ibm::rank_block`).
    pub fn halves_on(
        &self,
        comm: &silt_parallel::Comm,
    ) -> Result<(silt_fluid::FluidSolver, CoupledParticles), SceneError> {
        let dem = self.particles.system()?;
        let h = self.spacing();
        let p = &dem.particles;
        if let Some(i) = (0..p.len()).find(|&i| 2.0 * p.radius[i] < MIN_CELLS_PER_DIAMETER * h) {
            return Err(self.keys().error(
                "fluid.spacing",
                format!(
                    "particle {i} has diameter {:e}, {:.2} cells of h = {h:e}; the immersed boundary \
                     needs at least {MIN_CELLS_PER_DIAMETER} cells per diameter (the seed uses 10-20): \
                     refine the grid or enlarge the spheres",
                    2.0 * p.radius[i],
                    2.0 * p.radius[i] / h
                ),
            ));
        }
        let mut fluid = self.fluid.clone();
        let force = self.suspension_body_force(&dem);
        for a in 0..3 {
            fluid.config.body_force[a] = fluid.config.body_force[a].shifted(force[a]);
        }
        if let Some(bed) = &self.bed {
            fluid.config.driving = silt_fluid::Driving::FlowRate {
                axis: bed.streamwise,
                bulk_velocity: silt_fluid::Signal::Constant(0.0),
            };
        }
        // Slabs while they fit, else pencils, by the rule a restart uses.
        let cells = fluid.config.grid.cells;
        let ranks = comm.size();
        let dims = silt_ibm::model::coupled_process_grid(ranks, cells).ok_or_else(|| {
            self.keys().error(
                "fluid.cells",
                format!(
                    "the fluid's {} x {} x {} cells cannot be split among {ranks} ranks: a rank \
                     needs at least 2 rows (y) and 2 planes (z) of cells, and p_y x p_z ranks at \
                     most {} x {}",
                    cells[0],
                    cells[1],
                    cells[2],
                    (cells[1] / 2).min(cells[0]),
                    (cells[2] / 2).min(cells[1]),
                ),
            )
        })?;
        let solver = fluid.solver_with(comm, dims)?;
        let mut coupled = CoupledParticles::new(
            dem,
            fluid.config.grid,
            &fluid.config.boundaries,
            self.fluid_density,
            self.forcing_iterations,
            self.marker_retraction,
        );
        coupled.forcing.close_sphere_markers = self.close_sphere_markers;
        coupled.in_contact = self.in_contact;
        coupled.fluid_fraction_flow_rate = self.fluid_fraction_flow_rate;
        // On ranks: the spheres split as the fluid's blocks split the cells.
        coupled.distribute(solver.decomposition());
        Ok((solver, coupled))
    }

    /// Body force per unit fluid mass that holds up the free particles' buoyant weight along periodic
    /// axes: f = -sum (rho_p / rho_f - 1) V_p g / V_box (zero along bounded axes, whose walls carry it).
    pub fn suspension_body_force(&self, dem: &DemSystem) -> [f64; 3] {
        let grid = self.fluid.config.grid;
        let box_volume: f64 = grid.lengths().iter().product();
        let p = &dem.particles;
        let excess: f64 = (0..p.len())
            .filter(|&i| !p.fixed[i])
            .map(|i| {
                let volume = 4.0 / 3.0 * PI * p.radius[i].powi(3);
                (p.mass[i] / volume / self.fluid_density - 1.0) * volume
            })
            .sum();
        let boundaries = &self.fluid.config.boundaries;
        let g = dem.gravity;
        [0, 1, 2].map(|a| {
            if boundaries.is_periodic(a) {
                -excess * g[a] / box_volume
            } else {
                0.0
            }
        })
    }
}

impl SceneKind for Box<CoupledScene> {
    type Model = CoupledModel;

    fn settings(&self) -> RunSettings {
        RunSettings {
            vtk: self.particles.settings.vtk || self.fluid.settings.vtk,
            ..self.particles.settings
        }
    }

    fn build(&self) -> Result<CoupledModel, SceneError> {
        self.build_on(&silt_parallel::SingleRank::comm())
    }

    /// This rank's block of the fluid with the spheres near it (the forcing of its block and the
    /// loads of the spheres it owns are its part: `silt_ibm::rank_block`).
    fn build_on(&self, comm: &silt_parallel::Comm) -> Result<CoupledModel, SceneError> {
        let (fluid, particles) = self.halves_on(comm)?;
        let output = CoupledOutput {
            particle_vtk: self.particles.settings.vtk,
            fluid_vtk: self.fluid.settings.vtk,
            vorticity: self.fluid.vorticity,
            profile_axis: self.profile_axis,
            track: self
                .particles
                .tables
                .output
                .track
                .clone()
                .unwrap_or_default(),
        };
        let model = CoupledModel::new(fluid, particles, self.particles.dt(), output);
        Ok(match &self.bed {
            Some(bed) => model.with_bed(BedProtocol::new(bed.clone())),
            None => model,
        })
    }

    fn check(&self) -> Result<String, SceneError> {
        let (solver, coupled) = self.halves()?;
        Ok(report(self, &solver, &coupled))
    }

    fn describe(&self, model: &CoupledModel) -> String {
        let c = model.fluid.config.grid.cells;
        format!(
            "{} particles in a fluid of {} x {} x {} cells, dt {:e}",
            model.particles.total(),
            c[0],
            c[1],
            c[2],
            model.dt
        )
    }
}

/// What `silt check` prints for a coupled scene: the particle and fluid reports and the coupling figures
/// (resolution D/h, markers per sphere, density ratios, lubrication range, body force).
fn report(
    scene: &CoupledScene,
    solver: &silt_fluid::FluidSolver,
    coupled: &CoupledParticles,
) -> String {
    let dem = &coupled.dem;
    let mut out = super::particles::report(&scene.particles, dem);
    out.push_str(&super::fluid::report(&scene.fluid, solver));
    let mut line = |label: &str, text: String| {
        let _ = writeln!(out, "{label:<16} {text}");
    };
    let h = scene.spacing();
    let p = &dem.particles;
    let (d_min, d_max) = p
        .radius
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), r| {
            (lo.min(2.0 * r), hi.max(2.0 * r))
        });
    let retraction = scene.marker_retraction;
    let markers = |d: f64| SphereMarkers::new(0.5 * d, h, retraction).len();
    line(
        "resolution",
        format!(
            "D/h from {:.2} to {:.2}; {} to {} markers per sphere (retraction {retraction} h)",
            d_min / h,
            d_max / h,
            markers(d_min),
            markers(d_max)
        ),
    );
    let total_markers: usize = p.radius.iter().map(|&r| markers(2.0 * r)).sum();
    line(
        "forcing",
        format!(
            "{} passes per stage over {total_markers} markers; disabled between close spheres: {}",
            scene.forcing_iterations,
            match scene.close_sphere_markers {
                CloseSphereMarkers::OverlappingSupports =>
                    "within 3 h of the other's markers (overlapping supports)",
                CloseSphereMarkers::ReachingTheSurface =>
                    "within 1.5 h of the other's surface (supports reaching it)",
            }
        ),
    );
    let (rho_min, rho_max) = p
        .mass
        .iter()
        .zip(&p.radius)
        .map(|(m, r)| m / (4.0 / 3.0 * PI * r.powi(3)) / scene.fluid_density)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), ratio| {
            (lo.min(ratio), hi.max(ratio))
        });
    line(
        "density ratio",
        format!(
            "rho_p / rho_f from {rho_min:.4} to {rho_max:.4} (rho_f = {})",
            scene.fluid_density
        ),
    );
    line(
        "lubrication",
        match &dem.model.lubrication {
            Some(l) => format!(
                "for gaps up to {:e} (2 h), zeta_min {} of the smaller radius",
                l.range, l.roughness_ratio
            ),
            None => "off".into(),
        },
    );
    let force = scene.suspension_body_force(dem);
    if force.iter().any(|&f| f != 0.0) {
        line(
            "body force",
            format!("{force:?} on the fluid: holds up the suspension along periodic axes"),
        );
    }
    line(
        "profiles",
        format!(
            "along {} (profiles/profile_NNNNNN.csv)",
            AXIS_NAMES[scene.profile_axis]
        ),
    );
    if let Some(bed) = &scene.bed {
        let reynolds = bed.flow_rate / bed.viscosity;
        let galileo =
            ((bed.density_ratio - 1.0) * bed.gravity * bed.diameter.powi(3)).sqrt() / bed.viscosity;
        let shields = bed.shields(bed.target_clear_height);
        let height = bed.ceiling - bed.floor;
        let mobilising = bed.mobilisation_factor * bed.flow_rate / height;
        let dt = scene.particles.dt();
        line(
            "sheared bed",
            format!(
                "q_f = {} along {} (Re_b = {reynolds:.3}, Ga = {galileo:.3}, Sh = {shields:.3} at the \
                 target h_f = {} = {:.2} D; mean D = {:.5}, rho_p/rho_f = {:.3})",
                bed.flow_rate,
                AXIS_NAMES[bed.streamwise],
                bed.target_clear_height,
                bed.target_clear_height / bed.diameter,
                bed.diameter,
                bed.density_ratio
            ),
        );
        line(
            "protocol",
            format!(
                "dry settling to t = {}; mobilisation at {} q_f (bulk velocity {mobilising:.3e}, \
                 laminar CFL {:.3}) until h_f <= {} or for {} at most; transient {}; then averages; \
                 a sample every {} steps (bed.csv, bed_particles/, bed_fluid/)",
                bed.settling_time,
                bed.mobilisation_factor,
                1.5 * mobilising * dt / h,
                bed.target_clear_height + bed.margin,
                bed.mobilisation_limit,
                bed.transient,
                bed.sample_every
            ),
        );
    }
    out
}

fn keys_of(particles: &ParticleScene) -> Keys<'_> {
    Keys::new(&particles.source)
}

/// Checks the `[bed]` table against the rest of the scene: the streamwise axis periodic, gravity along
/// one axis with no-slip walls at both of its ends (the floor and the lid), mobile spheres to measure.
fn bed_settings(
    keys: &Keys,
    section: &BedSection,
    particles: &ParticleScene,
    fluid: &FluidScene,
    fluid_density: f64,
    dt: f64,
    end_time: f64,
) -> Result<BedSettings, SceneError> {
    let streamwise = keys.choice(
        "bed.streamwise",
        section.streamwise.as_deref().unwrap_or("x"),
        &[("x", 0), ("y", 1), ("z", 2)],
    )?;
    let boundaries = &fluid.config.boundaries;
    keys.require(
        boundaries.is_periodic(streamwise),
        "bed.streamwise",
        format!("\"{}\"", AXIS_NAMES[streamwise]),
        "the flow needs a periodic streamwise axis; make its fluid faces \"periodic\"",
    )?;
    let gravity = particles.gravity();
    let vertical = (0..3)
        .find(|&a| gravity[a] != 0.0 && (0..3).all(|b| b == a || gravity[b] == 0.0))
        .ok_or_else(|| {
            keys.error(
                "simulation.gravity",
                "a [bed] needs gravity along one axis (the wall-normal axis of the bed), pointing at \
                 the floor",
            )
        })?;
    keys.require(
        gravity[vertical] < 0.0,
        "simulation.gravity",
        format!("{:?}", <[f64; 3]>::from(gravity)),
        "a [bed] settles on the low wall of its axis: gravity must point towards it (negative)",
    )?;
    keys.require(
        vertical != streamwise,
        "bed.streamwise",
        format!("\"{}\"", AXIS_NAMES[streamwise]),
        "the flow runs across gravity, along a horizontal axis",
    )?;
    for side in 0..2 {
        keys.require(
            matches!(
                boundaries.faces[vertical][side],
                Boundary::NoSlip { velocity } if velocity == [0.0; 3]
            ),
            &format!("fluid.boundaries.{}", FACE_NAMES[vertical][side]),
            "not a wall at rest",
            "a [bed] lies between no-slip walls at rest (the seed's closed channel)",
        )?;
    }
    let grid = fluid.config.grid;
    let floor = grid.origin[vertical];
    let ceiling = floor + grid.lengths()[vertical];
    let height = ceiling - floor;

    let flow_rate = keys.number_note(
        "bed.flow_rate",
        section.flow_rate,
        Range::Positive,
        "q_f, the flux of (1 - phi) u per unit span (seed eq. 32; Re_b = q_f / nu)",
    )?;
    let settling_time = keys.number(
        "bed.settling_time",
        section.settling_time,
        Range::NonNegative,
    )?;
    let mobilisation_factor = keys.number_note(
        "bed.mobilisation_factor",
        section.mobilisation_factor.unwrap_or(8.0),
        Range::Closed(1.0, 100.0),
        "the seed mobilised its beds at 8 times the target flow rate",
    )?;
    let target_clear_height = keys.number_note(
        "bed.target_clear_height",
        section.target_clear_height,
        Range::Open(0.0, height),
        "the clear-fluid height h_f, between the bed and the lid",
    )?;
    let margin = keys.number_note(
        "bed.margin",
        section.margin.unwrap_or(0.0),
        Range::Open(-target_clear_height, height - target_clear_height),
        "the mobilisation ends at h_f <= target_clear_height + margin",
    )?;
    let mobilisation_limit = keys.number(
        "bed.mobilisation_limit",
        section.mobilisation_limit.unwrap_or(end_time),
        Range::Positive,
    )?;
    let transient = keys.number(
        "bed.transient",
        section.transient.unwrap_or(0.0),
        Range::NonNegative,
    )?;
    let sample_interval = keys.number_note(
        "bed.sample_interval",
        section.sample_interval.unwrap_or(10.0 * dt),
        Range::Positive,
        "at least the time step",
    )?;
    keys.require(
        sample_interval >= 0.5 * dt,
        "bed.sample_interval",
        num(sample_interval),
        &format!("at least the time step {}", num(dt)),
    )?;

    let system = particles.system()?;
    let p = &system.particles;
    let mobile: Vec<usize> = (0..p.len()).filter(|&i| !p.fixed[i]).collect();
    keys.require(
        !mobile.is_empty(),
        "particles",
        "no mobile spheres",
        "a [bed] measures mobile spheres: give a group without `fixed = true`",
    )?;
    // The dry settling falls freely under the buoyant weight: the contacts must hold such impacts.
    let highest = mobile
        .iter()
        .map(|&i| p.position[i][vertical] - floor)
        .fold(0.0, f64::max);
    let lightest_density = mobile
        .iter()
        .map(|&i| p.mass[i] / (4.0 / 3.0 * PI * p.radius[i].powi(3)))
        .fold(f64::INFINITY, f64::min);
    let buoyant_gravity = gravity.length() * (1.0 - fluid_density / lightest_density).max(0.0);
    let fall_speed = (2.0 * buoyant_gravity * highest).sqrt();
    let overlap = silt_dem::estimates::expected_overlap(&system, fall_speed);
    keys.require(
        overlap <= super::particles::LARGEST_OVERLAP,
        "contact.collision_steps",
        num(particles
            .tables
            .contact
            .collision_steps
            .unwrap_or(silt_dem::contact::DEFAULT_COLLISION_STEPS)),
        &format!(
            "the dry settling of [bed] drops the highest sphere from {} above the floor at up to {} \
             (free fall under its buoyant weight), which would overlap by {} R (at most {} R); make \
             the contact stiffer (fewer collision_steps or a smaller dt) or place the spheres lower",
            num(highest),
            num(fall_speed),
            num(overlap),
            super::particles::LARGEST_OVERLAP
        ),
    )?;
    let n = mobile.len() as f64;
    let diameter = mobile.iter().map(|&i| 2.0 * p.radius[i]).sum::<f64>() / n;
    let density_ratio = mobile
        .iter()
        .map(|&i| p.mass[i] / (4.0 / 3.0 * PI * p.radius[i].powi(3)) / fluid_density)
        .sum::<f64>()
        / n;
    Ok(BedSettings {
        flow_rate,
        settling_time,
        mobilisation_factor,
        target_clear_height,
        margin,
        mobilisation_limit,
        transient,
        sample_every: ((sample_interval / dt).round() as u64).max(1),
        streamwise,
        vertical,
        floor,
        ceiling,
        diameter,
        density_ratio,
        gravity: gravity.length(),
        viscosity: fluid.config.viscosity,
    })
}
