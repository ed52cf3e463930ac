//! Stokes drag of a simple-cubic array of fixed spheres (issue 4): one sphere in a triply periodic box,
//! the fluid driven by a uniform body force G along x until steady. The force on the sphere F and the
//! superficial velocity U (the mean over the box) give the drag coefficient K = F / (6 pi mu a U), compared
//! with the Hasimoto/Sangani series for the same volume fraction (within 0.1 % of Zick & Homsy's exact
//! values for phi <= 0.125). Source and numbers: validation/stokes-array/.

use silt_fluid::boundary::Boundaries;
use silt_fluid::solver::FluidSolver;
use silt_ibm::forcing::{DirectForcing, RigidSphere};
use silt_ibm::Vec3;
use std::f64::consts::PI;

/// K(phi) of Hasimoto (1959) as extended by Sangani & Acrivos (1982).
pub fn reference_drag(phi: f64) -> f64 {
    let c = phi.cbrt();
    1.0 / (1.0 - 1.7601 * c + phi - 1.5593 * phi * phi + 3.9799 * c.powi(8) - 3.0734 * c.powi(10))
}

/// One drag computation.
#[derive(Clone, Copy, Debug)]
pub struct DragCase {
    /// Sphere diameter in cell sizes.
    pub d_over_h: f64,
    /// Target volume fraction; the box is the nearest whole number of cells.
    pub phi: f64,
    /// Marker retraction in cell sizes.
    pub retraction: f64,
    /// Forcing passes per stage.
    pub iterations: usize,
    /// nu dt / h^2.
    pub viscous_number: f64,
    /// Stop when K changes by less than this (relative) over 10 steps.
    pub tolerance: f64,
    pub max_steps: usize,
}

impl DragCase {
    /// The settings of the validation: markers retracted by 0.3 h (Breugem 2012), three forcing passes
    /// (Kempe & Froehlich 2012), nu dt / h^2 = 0.5, steady when K changes by less than 1e-6 in 10 steps.
    pub fn standard(d_over_h: f64, phi: f64) -> Self {
        DragCase {
            d_over_h,
            phi,
            retraction: 0.3,
            iterations: 3,
            viscous_number: 0.5,
            tolerance: 1e-6,
            max_steps: 20_000,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct DragResult {
    pub case: DragCase,
    pub cells: usize,
    pub phi: f64,
    pub drag: f64,
    pub reference: f64,
    pub error: f64,
    /// Sphere force over G L^3 (1 at steady state: the body force on the box is all taken by the sphere).
    pub force_balance: f64,
    pub steps: usize,
    /// Whether K settled within `max_steps`.
    pub converged: bool,
    pub markers: usize,
}

/// Runs `case` to steady state.
pub fn run(case: DragCase) -> Result<DragResult, String> {
    let h = 1.0;
    let radius = 0.5 * case.d_over_h * h;
    let sphere_volume = 4.0 / 3.0 * PI * radius.powi(3);
    let cells = (sphere_volume / case.phi).cbrt().round() as usize;
    let length = cells as f64 * h;
    let phi = sphere_volume / length.powi(3);
    let nu = 1.0;
    // A small force keeps the Reynolds number U a / nu near 1e-4 (Stokes flow).
    let body_force = 1e-4 * 6.0 * PI * nu * nu * reference_drag(phi) / length.powi(3);
    let config = crate::setup::crank_nicolson_fluid(
        [cells; 3],
        h,
        Boundaries::periodic(),
        nu,
        case.viscous_number * h * h / nu,
        [body_force, 0.0, 0.0],
    );
    let mut fluid = FluidSolver::new(config.clone())?;
    let centre = Vec3::splat(0.5 * length);
    let mut forcing = DirectForcing::new(
        config.grid,
        &config.boundaries,
        vec![RigidSphere::fixed(centre, radius)],
        case.iterations,
        case.retraction,
    );
    let markers = forcing.markers(0).len();
    let unknowns = *fluid.velocity_unknowns(0);
    let mut history = Vec::new();
    let mut steps = 0;
    let mut drag = 0.0;
    let mut converged = false;
    while steps < case.max_steps {
        fluid.step_with(&mut forcing).map_err(|e| e.to_string())?;
        steps += 1;
        let mean = silt_fluid::diagnostics::mean_over(&fluid.state.velocity[0], &unknowns);
        drag = forcing.step_force[0].x / (6.0 * PI * nu * radius * mean);
        history.push(drag);
        if steps > 10 && (drag - history[steps - 11]).abs() < case.tolerance * drag.abs() {
            converged = true;
            break;
        }
    }
    let reference = reference_drag(phi);
    Ok(DragResult {
        case,
        cells,
        phi,
        drag,
        reference,
        error: drag / reference - 1.0,
        force_balance: forcing.step_force[0].x / (body_force * length.powi(3)),
        steps,
        converged,
        markers,
    })
}
