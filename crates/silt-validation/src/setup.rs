//! Small builders shared by the validation cases.

use silt_dem::contact::{ContactModel, EnduringContact, NormalLaw, TangentialLaw};
use silt_dem::domain::Domain;
use silt_dem::integrator::Integrator;
use silt_dem::material::Material;
use silt_dem::particles::Particles;
use silt_dem::system::DemSystem;
use silt_dem::wall::Wall;
use silt_dem::Vec3;

/// A material with the given restitution and friction.
pub fn material(density: f64, e_dry: f64, mu_s: f64, mu_k: f64, poisson: f64) -> Material {
    Material {
        name: "material".into(),
        density,
        e_dry,
        poisson,
        mu_s,
        mu_k,
    }
}

/// The seed's contact model (ACTM + spring with history), dry, with a tiny impact-speed floor.
pub fn seed_model(
    materials: &[Material],
    collision_time: f64,
    min_speed: f64,
    gravity: f64,
) -> ContactModel {
    ContactModel::new(
        NormalLaw::Actm,
        TangentialLaw::SpringHistory,
        materials,
        collision_time,
        EnduringContact::MinimumSpeed(min_speed),
        1e-3,
        gravity,
        None,
    )
}

/// A closed box without periodicity, large enough to hold the experiment.
pub fn open_box(half_width: f64, height: f64) -> Domain {
    Domain {
        min: Vec3::new(-half_width, -half_width, -half_width),
        max: Vec3::new(half_width, half_width, height),
        periodic: [false; 3],
    }
}

/// A system without gravity for isolated collisions.
pub fn collision_system(
    domain: Domain,
    materials: Vec<Material>,
    model: ContactModel,
    particles: Particles,
    walls: Vec<Wall>,
    integrator: Integrator,
    dt: f64,
) -> DemSystem {
    let skin = 0.1 * particles.max_radius();
    DemSystem::new(
        domain,
        Vec3::ZERO,
        materials,
        model,
        particles,
        walls,
        integrator,
        dt,
        skin,
    )
}

/// The seed's contact model for wet runs on a fluid grid of cell size `h` (seed sec. 2-5): ACTM + spring with
/// history, T_c = 10 dt, enduring contacts with St_crit = 5 (eq. 24), overlap bound 1e-3, lubrication for
/// gaps up to 2 h with zeta_min = 3e-3 R (eq. 9).
pub fn wet_seed_model(
    materials: &[Material],
    dt: f64,
    fluid_density: f64,
    kinematic_viscosity: f64,
    h: f64,
    gravity: f64,
) -> ContactModel {
    ContactModel::new(
        NormalLaw::Actm,
        TangentialLaw::SpringHistory,
        materials,
        10.0 * dt,
        EnduringContact::Stokes {
            st_crit: 5.0,
            fluid_density,
            kinematic_viscosity,
        },
        1e-3,
        gravity,
        Some(silt_dem::contact::lubrication::Lubrication {
            fluid_density,
            kinematic_viscosity,
            range: 2.0 * h,
            roughness_ratio: 3e-3,
        }),
    )
}

/// A Crank–Nicolson fluid of `cells` cubes of size `h` from the origin with a fixed time step and no
/// driving besides `body_force`.
pub fn crank_nicolson_fluid(
    cells: [usize; 3],
    h: f64,
    boundaries: silt_fluid::boundary::Boundaries,
    viscosity: f64,
    dt: f64,
    body_force: [f64; 3],
) -> silt_fluid::solver::FluidConfig {
    silt_fluid::solver::FluidConfig {
        grid: silt_fluid::grid::Grid {
            cells,
            spacing: h,
            origin: [0.0; 3],
            offset: [0; 3],
        },
        boundaries,
        viscosity,
        viscous: silt_fluid::solver::Viscous::CrankNicolson,
        driving: silt_fluid::solver::Driving::None,
        body_force: silt_fluid::Signal::constants(body_force),
        time_step: silt_fluid::solver::TimeStep::Fixed(dt),
    }
}
