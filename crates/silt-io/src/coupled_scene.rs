//! Coupled scenes: a particle scene (`[simulation]`, `[[material]]`, `[contact]`, `[[particles]]`,
//! `[output]`) with a `[fluid]` table, run as resolved spheres in the fluid (`silt_ibm`, seed sec. 2-4).
//! [`CoupledScene::parse`] reads and checks one; [`CoupledScene::build`] makes the fluid solver and the
//! coupled particles. The format is documented in `docs/scene-format.md` ("Coupled scenes").
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

use crate::fluid_scene::{self, FluidScene, AXIS_NAMES, FACE_NAMES};
use crate::scene::{DomainSection, LubricationSection, Scene, SceneError, WallSection};
use serde::Deserialize;
use silt_dem::system::DemSystem;
use silt_fluid::{Boundary, FluidSolver};
use silt_ibm::coupling::CoupledParticles;
use silt_ibm::markers::SphereMarkers;
use std::f64::consts::PI;
use std::fmt::Write as _;
use std::path::Path;

/// Smallest sphere diameter, in cells, that the immersed boundary method resolves.
pub const MIN_CELLS_PER_DIAMETER: f64 = 4.0;
/// Largest viscous number nu dt / h^2 of a coupled run. The fluid alone is stable beyond it (Crank–Nicolson),
/// but the direct forcing is computed from the explicit prediction of each stage, and with it the coupled
/// run diverged in tests at 1.5 (a heavy sphere sinking at D/h = 5) and ran stably at 1.
pub const MAX_VISCOUS_NUMBER: f64 = 1.0;

/// Whether `text` is a coupled scene: a TOML document with a `[fluid]` table and other tables.
pub fn is_coupled_scene(text: &str) -> bool {
    toml::from_str::<toml::Table>(text).is_ok_and(|t| t.contains_key("fluid") && t.len() > 1)
}

/// The `[coupling]` table.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CouplingSection {
    /// Multi-direct forcing passes per Runge–Kutta stage (Kempe & Froehlich 2012 use 2-3).
    #[serde(default = "default_iterations")]
    pub forcing_iterations: usize,
    /// Markers sit this many cells inside the surface (Breugem 2012: 0.3; 0 is Uhlmann's original).
    #[serde(default = "default_retraction")]
    pub marker_retraction: f64,
    /// Lubrication for gaps up to 2 h (seed eq. 9-10).
    #[serde(default = "default_true")]
    pub lubrication: bool,
    /// zeta_min of the lubrication as a fraction of the smaller radius (seed: 3e-3).
    #[serde(default = "default_roughness")]
    pub roughness: f64,
    /// Material of the walls (the fluid's no-slip and free-slip faces); default the first material.
    pub wall_material: Option<String>,
}

impl Default for CouplingSection {
    fn default() -> Self {
        CouplingSection {
            forcing_iterations: default_iterations(),
            marker_retraction: default_retraction(),
            lubrication: true,
            roughness: default_roughness(),
            wall_material: None,
        }
    }
}

fn default_iterations() -> usize {
    3
}
fn default_retraction() -> f64 {
    0.3
}
fn default_true() -> bool {
    true
}
fn default_roughness() -> f64 {
    3e-3
}

/// A checked coupled scene.
#[derive(Clone, Debug)]
pub struct CoupledScene {
    /// The particle half, with the domain, walls and lubrication filled in from the fluid.
    pub particles: Scene,
    /// The fluid half, with the time step, end time and output schedule of the particle half.
    pub fluid: FluidScene,
    pub coupling: CouplingSection,
    /// Fluid density rho_f.
    pub fluid_density: f64,
    /// Axis of the averaged profiles: `fluid.output.profile_axis`, else the axis gravity acts along
    /// (else z).
    pub profile_axis: usize,
}

impl CoupledScene {
    /// Reads, parses and checks a coupled scene file.
    pub fn load(path: &Path) -> Result<CoupledScene, SceneError> {
        CoupledScene::parse(&crate::scene::read_scene_file(path)?, path)
    }

    /// Parses and checks coupled scene text; `source` names it in messages.
    pub fn parse(text: &str, source: &Path) -> Result<CoupledScene, SceneError> {
        let mut scene = Scene::deserialize_text(text, source)?;
        let mut fluid = scene.fluid.take().ok_or_else(|| {
            scene.error("fluid", "missing: a coupled scene needs a [fluid] table")
        })?;
        let coupling = scene.coupling.take().unwrap_or_default();
        scene.check_simulation()?;
        if scene.simulation.integrator == "velocity-verlet" {
            return Err(scene.error(
                "simulation.integrator",
                "\"velocity-verlet\" has no Runge–Kutta stages to sub-step in the fluid's; a coupled \
                 scene needs \"seed\" (the RK3 predictor-corrector with sub-steps) or \
                 \"euler-crank-nicolson\"",
            ));
        }
        let (dt, end_time) = (scene.simulation.dt, scene.simulation.end_time);

        // What the particle half says for both.
        let owned = [
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
        ];
        if let Some((_, key, owner)) = owned.iter().find(|(present, _, _)| *present) {
            return Err(scene.error(
                *key,
                format!("a coupled scene takes it from `{owner}`; remove it from [fluid]"),
            ));
        }
        let fluid_density = fluid.density.take().ok_or_else(|| {
            scene.error(
                "fluid.density",
                "missing: a coupled scene needs the fluid density rho_f (e.g. 1000.0 for water in SI \
                 units; the particles' densities are their materials')",
            )
        })?;
        scene.require(
            fluid_density.is_finite() && fluid_density > 0.0,
            "fluid.density",
            fluid_density,
            "must be > 0",
        )?;
        fluid.end_time = Some(end_time);
        fluid.time_step = Some(dt);
        let interval = scene.output.interval.unwrap_or(end_time / 100.0);
        fluid.output.interval = Some(interval);
        fluid.output.checkpoint_interval =
            Some(scene.output.checkpoint_interval.unwrap_or(10.0 * interval));
        let fluid = fluid_scene::check(fluid, source)?;

        // The coupling's stability limit on the time step.
        let h = fluid.config.grid.spacing;
        let viscous_number = fluid.config.viscosity * dt / (h * h);
        if viscous_number > MAX_VISCOUS_NUMBER {
            return Err(scene.error(
                "simulation.dt",
                format!(
                    "{dt:e} is too large for the immersed boundary coupling: nu dt / h^2 = {viscous_number:.3} \
                     exceeds {MAX_VISCOUS_NUMBER} (the direct forcing uses each stage's explicit prediction and \
                     the coupled run diverges beyond it); allowed: dt <= {:e}",
                    MAX_VISCOUS_NUMBER * h * h / fluid.config.viscosity
                ),
            ));
        }

        // Coupling settings.
        scene.require(
            (1..=20).contains(&coupling.forcing_iterations),
            "coupling.forcing_iterations",
            coupling.forcing_iterations,
            "must lie in 1 ..= 20 (2-3 is typical)",
        )?;
        scene.require(
            (0.0..=1.0).contains(&coupling.marker_retraction),
            "coupling.marker_retraction",
            coupling.marker_retraction,
            "must lie in [0, 1] cells (0.3 is Breugem's choice, 0 puts the markers on the surface)",
        )?;
        scene.require(
            coupling.roughness > 0.0 && coupling.roughness < 1.0,
            "coupling.roughness",
            coupling.roughness,
            "must lie in (0, 1) (3e-3 in the seed)",
        )?;

        // Boundaries the particles can live with.
        let boundaries = &fluid.config.boundaries;
        for a in 0..3 {
            for side in 0..2 {
                if matches!(
                    boundaries.faces[a][side],
                    Boundary::Inflow { .. } | Boundary::Outflow
                ) {
                    return Err(scene.error(
                        format!("fluid.boundaries.{}", FACE_NAMES[a][side]),
                        "inflow and outflow faces are not supported in coupled scenes (particles cannot \
                         enter or leave the domain); allowed: \"periodic\", \"no-slip\", \"free-slip\"",
                    ));
                }
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
        match &scene.domain {
            None => scene.domain = Some(derived),
            Some(given) => {
                let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * h;
                let matches = (0..3).all(|a| {
                    close(given.min[a], derived.min[a])
                        && close(given.max[a], derived.max[a])
                        && given.periodic[a] == derived.periodic[a]
                });
                if !matches {
                    return Err(scene.error(
                        "domain",
                        format!(
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
                    ));
                }
            }
        }

        // The walls are the fluid's walls.
        if !scene.walls.is_empty() {
            return Err(scene.error(
                "wall",
                "a coupled scene has no [[wall]] tables: its walls are the fluid's no-slip and free-slip \
                 faces ([fluid.boundaries]); set their material with coupling.wall_material",
            ));
        }
        let wall_material = match &coupling.wall_material {
            Some(name) => {
                scene.material_index(name, "coupling.wall_material")?;
                name.clone()
            }
            None => match scene.materials.first() {
                Some(m) => m.name.clone(),
                None => {
                    return Err(scene.error("material", "at least one [[material]] is required"))
                }
            },
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
                scene.walls.push(WallSection {
                    point,
                    normal,
                    material: wall_material.clone(),
                    velocity,
                });
            }
        }

        // Lubrication from the fluid.
        if scene.contact.lubrication.is_some() {
            return Err(scene.error(
                "contact.lubrication",
                "a coupled scene derives the lubrication from the fluid (density, viscosity, range 2 h); \
                 remove the table, and set coupling.roughness or coupling.lubrication = false instead",
            ));
        }
        if coupling.lubrication {
            scene.contact.lubrication = Some(LubricationSection {
                fluid_density,
                kinematic_viscosity: fluid.config.viscosity,
                range: 2.0 * h,
                roughness: coupling.roughness,
            });
        }

        scene.check()?;
        let gravity = scene.gravity();
        let profile_axis = fluid.output.profile_axis.unwrap_or_else(|| {
            if gravity.length() > 0.0 {
                (0..3)
                    .max_by(|&a, &b| gravity[a].abs().total_cmp(&gravity[b].abs()))
                    .unwrap_or(2)
            } else {
                2
            }
        });
        Ok(CoupledScene {
            particles: scene,
            fluid,
            coupling,
            fluid_density,
            profile_axis,
        })
    }

    /// Cell size h.
    pub fn spacing(&self) -> f64 {
        self.fluid.config.grid.spacing
    }

    /// Places the particles, checks that the grid resolves them, and makes the fluid solver (with the
    /// body force of a periodic suspension) and the coupled particles.
    pub fn build(&self) -> Result<(FluidSolver, CoupledParticles), SceneError> {
        let scene = &self.particles;
        let dem = scene.build()?;
        let h = self.spacing();
        let p = &dem.particles;
        if let Some(i) = (0..p.len()).find(|&i| 2.0 * p.radius[i] < MIN_CELLS_PER_DIAMETER * h) {
            return Err(scene.error(
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
            fluid.config.body_force[a] += force[a];
        }
        let solver = fluid.build()?;
        let coupled = CoupledParticles::new(
            dem,
            fluid.config.grid,
            &fluid.config.boundaries,
            self.fluid_density,
            self.coupling.forcing_iterations,
            self.coupling.marker_retraction,
        );
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

/// What `silt check` prints for a coupled scene: the particle and fluid reports and the coupling figures
/// (resolution D/h, markers per sphere, density ratios, lubrication range, body force).
pub fn check_report(
    scene: &CoupledScene,
    solver: &FluidSolver,
    coupled: &CoupledParticles,
) -> String {
    let dem = &coupled.dem;
    let mut out = crate::derived::check_report(&scene.particles, dem);
    out.push_str(&fluid_scene::check_report(&scene.fluid, solver));
    let h = scene.spacing();
    let p = &dem.particles;
    let (d_min, d_max) = p
        .radius
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), r| {
            (lo.min(2.0 * r), hi.max(2.0 * r))
        });
    let retraction = scene.coupling.marker_retraction;
    let markers = |d: f64| SphereMarkers::new(0.5 * d, h, retraction).len();
    let _ = writeln!(
        out,
        "resolution       D/h from {:.2} to {:.2}; {} to {} markers per sphere (retraction {retraction} h)",
        d_min / h,
        d_max / h,
        markers(d_min),
        markers(d_max)
    );
    let total_markers: usize = p.radius.iter().map(|&r| markers(2.0 * r)).sum();
    let _ = writeln!(
        out,
        "forcing          {} passes per stage over {total_markers} markers",
        scene.coupling.forcing_iterations
    );
    let (rho_min, rho_max) = p
        .mass
        .iter()
        .zip(&p.radius)
        .map(|(m, r)| m / (4.0 / 3.0 * PI * r.powi(3)) / scene.fluid_density)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), ratio| {
            (lo.min(ratio), hi.max(ratio))
        });
    let _ = writeln!(
        out,
        "density ratio    rho_p / rho_f from {rho_min:.4} to {rho_max:.4} (rho_f = {})",
        scene.fluid_density
    );
    match &dem.model.lubrication {
        Some(l) => {
            let _ = writeln!(
                out,
                "lubrication      for gaps up to {:e} (2 h), zeta_min {} of the smaller radius",
                l.range, l.roughness_ratio
            );
        }
        None => {
            let _ = writeln!(out, "lubrication      off");
        }
    }
    let force = scene.suspension_body_force(dem);
    if force.iter().any(|&f| f != 0.0) {
        let _ = writeln!(
            out,
            "body force       {force:?} on the fluid: holds up the suspension along periodic axes"
        );
    }
    let _ = writeln!(
        out,
        "profiles         along {} (profiles/profile_NNNNNN.csv)",
        AXIS_NAMES[scene.profile_axis]
    );
    out
}
