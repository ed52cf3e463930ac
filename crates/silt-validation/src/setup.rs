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

/// The floor z = 0.
pub fn floor(material: usize) -> Wall {
    Wall {
        point: Vec3::ZERO,
        normal: Vec3::Z,
        material,
        velocity: Vec3::ZERO,
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

/// Runs a fluid solver until its time reaches `end_time` (to round-off).
pub fn run_to(solver: &mut silt_fluid::FluidSolver, end_time: f64) -> Result<(), String> {
    while solver.state.time < end_time * (1.0 - 1e-12) {
        solver.step().map_err(|e| e.to_string())?;
    }
    Ok(())
}
