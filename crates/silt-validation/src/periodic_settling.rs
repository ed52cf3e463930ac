//! A free sphere settling in a triply periodic box (the coupling of silt_ibm::coupling), compared with the
//! fixed array of the stokes-array case. The box's fluid carries a uniform body force that balances the
//! sphere's buoyant weight, f = (rho_p / rho_f - 1) V_p |g| / L^3 upwards, so that nothing accelerates the
//! whole system. At steady state the sphere's hydrodynamic force balances its buoyant weight, and seen from
//! the sphere the flow is the fixed array's (Stokes flow is Galilean invariant): the drag coefficient
//! K = F_h / (6 pi mu a U_s) with the superficial slip velocity U_s = <u>_box - u_p must equal the fixed
//! array's at the same D/h and box.

use silt_dem::contact::{ContactModel, EnduringContact, NormalLaw, TangentialLaw};
use silt_dem::domain::Domain;
use silt_dem::integrator::Integrator;
use silt_dem::material::Material;
use silt_dem::particles::Particles;
use silt_dem::system::DemSystem;
use silt_fluid::boundary::Boundaries;
use silt_fluid::solver::FluidSolver;
use silt_ibm::coupling::CoupledParticles;
use silt_ibm::Vec3;
use std::f64::consts::PI;

#[derive(Clone, Copy, Debug)]
pub struct SettlingCase {
    pub d_over_h: f64,
    pub cells: usize,
    /// rho_p / rho_f.
    pub density_ratio: f64,
    pub retraction: f64,
    pub iterations: usize,
    /// nu dt / h^2.
    pub viscous_number: f64,
    pub steps: usize,
}

#[derive(Clone, Debug)]
pub struct SettlingResult {
    /// Settling velocity u_p,z and slip <u_z> - u_p,z at the end.
    pub velocity: f64,
    pub slip: f64,
    /// Drag coefficient from the slip.
    pub drag: f64,
    /// rho_f F_h,z over the buoyant weight (rho_p - rho_f) V_p |g| (1 at steady state).
    pub force_balance: f64,
    /// Relative change of u_p over the last 10 % of the steps.
    pub unsteadiness: f64,
    /// (time, u_p,z) every step.
    pub history: Vec<(f64, f64)>,
}

impl SettlingCase {
    /// The settings of the validation (those of `DragCase::standard`), 400 steps (nu t / L^2 = 0.35).
    pub fn standard(d_over_h: f64, cells: usize, density_ratio: f64) -> Self {
        SettlingCase {
            d_over_h,
            cells,
            density_ratio,
            retraction: 0.3,
            iterations: 3,
            viscous_number: 0.5,
            steps: 400,
        }
    }

    /// Volume fraction of the sphere in the box.
    pub fn phi(&self) -> f64 {
        PI / 6.0 * self.d_over_h.powi(3) / (self.cells as f64).powi(3)
    }
}

/// Runs `case` for its number of steps.
pub fn run(case: SettlingCase) -> Result<SettlingResult, String> {
    let h = 1.0;
    let n = case.cells;
    let length = n as f64 * h;
    let radius = 0.5 * case.d_over_h * h;
    let volume = 4.0 / 3.0 * PI * radius.powi(3);
    let (nu, rho_f) = (1.0, 1.0);
    let rho_p = case.density_ratio * rho_f;
    // Gravity chosen for a settling Reynolds number u a / nu of about 1e-3.
    let target_speed = 1e-3 * nu / radius;
    let g = target_speed * 6.0 * PI * rho_f * nu * radius * 2.0 / ((rho_p - rho_f) * volume);
    let dt = case.viscous_number * h * h / nu;
    let config = crate::setup::crank_nicolson_fluid(
        [n; 3],
        h,
        Boundaries::periodic(),
        nu,
        dt,
        [
            0.0,
            0.0,
            (rho_p / rho_f - 1.0) * volume * g / length.powi(3),
        ],
    );
    let mut fluid = FluidSolver::new(config.clone())?;
    let materials = vec![Material {
        name: "sphere".into(),
        density: rho_p,
        e_dry: 0.9,
        poisson: 0.3,
        mu_s: 0.3,
        mu_k: 0.3,
    }];
    let model = ContactModel::new(
        NormalLaw::Actm,
        TangentialLaw::SpringHistory,
        &materials,
        10.0 * dt,
        EnduringContact::MinimumSpeed(0.01),
        1e-3,
        g,
        None,
    );
    let mut particles = Particles::default();
    particles.push(
        Vec3::splat(0.5 * length),
        Vec3::ZERO,
        radius,
        rho_p,
        0,
        false,
    );
    let dem = DemSystem::new(
        Domain {
            min: Vec3::ZERO,
            max: Vec3::splat(length),
            periodic: [true; 3],
        },
        Vec3::new(0.0, 0.0, -g),
        materials,
        model,
        particles,
        vec![],
        Integrator::SEED,
        dt,
        0.1 * radius,
    );
    let mut coupled = CoupledParticles::new(
        dem,
        config.grid,
        &config.boundaries,
        rho_f,
        case.iterations,
        case.retraction,
    );
    let unknowns = *fluid.velocity_unknowns(2);
    let mut history = Vec::with_capacity(case.steps);
    for _ in 0..case.steps {
        let dt = fluid.next_dt();
        silt_ibm::coupling::coupled_step(&mut fluid, &mut coupled, dt)
            .map_err(|e| e.to_string())?;
        history.push((fluid.state.time, coupled.dem.particles.velocity[0].z));
    }
    let velocity = coupled.dem.particles.velocity[0].z;
    let mean = silt_fluid::diagnostics::mean_over(&fluid.state.velocity[2], &unknowns);
    let slip = mean - velocity;
    let force = rho_f * coupled.forcing.step_force[0].z;
    let late = history[history.len() - history.len() / 10 - 1].1;
    Ok(SettlingResult {
        velocity,
        slip,
        drag: force / (6.0 * PI * rho_f * nu * radius * slip),
        force_balance: force / ((rho_p - rho_f) * volume * g),
        unsteadiness: (velocity - late).abs() / velocity.abs(),
        history,
    })
}
