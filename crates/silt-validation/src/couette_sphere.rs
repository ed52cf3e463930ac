//! A sphere resting on the bottom wall of a Couette flow (seed sec. 5.3, Fig. 11), in units of the gap H and
//! the lid speed U: the sphere (D = 0.2 H) sits 1e-3 R above the wall in the linear shear profile, held
//! fixed until t U / H = 0.01, then free. The fluid forces act during its enduring contact with the wall
//! (its Stokes number is far below St_crit), so the shear drags and spins it; friction decides between
//! rolling without slip (u_p = -omega_z R_cp, the contact point at rest) and sliding. The seed finds
//! sliding at Re_H = U H / nu = 10 and rolling at 50. Its sphere density, gravity and friction (Table 2) are
//! lost in the text; here rho_p / rho_f = 2.5, g = 3 U^2 / H, mu_s = 0.8, mu_k = 0.15 (Joseph & Hunt 2004),
//! e_dry = 0.97, a gravity inside the window where the seed's two regimes appear at D/h = 6 and 10 (a scan in
//! validation/couette-sphere/). Source and numbers: validation/couette-sphere/.

use silt_dem::domain::Domain;
use silt_dem::integrator::Integrator;
use silt_dem::material::Material;
use silt_dem::particles::Particles;
use silt_dem::system::{DemSystem, Release};
use silt_dem::wall::Wall;
use silt_fluid::boundary::{Boundaries, Boundary};
use silt_fluid::solver::FluidSolver;
use silt_ibm::coupling::CoupledParticles;
use silt_ibm::Vec3;

pub const DIAMETER: f64 = 0.2;
pub const DENSITY_RATIO: f64 = 2.5;
pub const GRAVITY: f64 = 3.0;
pub const MU_S: f64 = 0.8;
pub const MU_K: f64 = 0.15;
/// Time the sphere is held, t U / H.
pub const HOLD: f64 = 0.01;

#[derive(Clone, Copy, Debug)]
pub struct CouetteCase {
    /// Re_H = U H / nu.
    pub reynolds: f64,
    /// Cells per diameter.
    pub d_over_h: f64,
    /// Periodic lengths along x (flow) and z, in diameters.
    pub length: f64,
    pub width: f64,
    pub dt: f64,
    /// Simulated time, in H / U.
    pub duration: f64,
    /// Gravity in U^2 / H.
    pub gravity: f64,
}

impl CouetteCase {
    /// dt = 0.25 h / U, within the coupling's nu dt / h^2 <= 1 at Re_H = 10 for D/h <= 10.
    pub fn standard(reynolds: f64, d_over_h: f64) -> Self {
        let h = DIAMETER / d_over_h;
        CouetteCase {
            reynolds,
            d_over_h,
            length: 6.0,
            width: 4.0,
            dt: 0.25 * h,
            duration: 8.0,
            gravity: GRAVITY,
        }
    }
}

#[derive(Clone, Debug)]
pub struct CouetteResult {
    /// (t, u_p, -omega_z R_cp, gap / D) every step; R_cp the distance from the centre to the wall.
    pub history: Vec<(f64, f64, f64, f64)>,
    /// Means over the last quarter of the run.
    pub velocity: f64,
    pub rolling_velocity: f64,
    /// (u_p - (-omega_z R_cp)) / u_p over the last quarter: 0 when rolling without slip.
    pub slip: f64,
    pub cells: [usize; 3],
    pub seconds: f64,
}

pub fn setup(case: CouetteCase) -> Result<(FluidSolver, CoupledParticles), String> {
    let nu = 1.0 / case.reynolds;
    let h = DIAMETER / case.d_over_h;
    let cells = [
        (case.length * case.d_over_h).round() as usize,
        (1.0 / h).round() as usize,
        (case.width * case.d_over_h).round() as usize,
    ];
    let mut faces = [[Boundary::Periodic; 2]; 3];
    faces[1] = [
        Boundary::WALL,
        Boundary::NoSlip {
            velocity: [1.0, 0.0, 0.0],
        },
    ];
    let boundaries = Boundaries { faces };
    let config = crate::setup::crank_nicolson_fluid(cells, h, boundaries, nu, case.dt, [0.0; 3]);
    let mut fluid = FluidSolver::new(config.clone())?;
    // The linear shear profile u = y / H (exact on the grid: the ghost values extrapolate linearly).
    fluid.set_velocity(|c, x| if c == 0 { x[1] } else { 0.0 });
    let materials = vec![Material {
        name: "sphere".into(),
        density: DENSITY_RATIO,
        e_dry: 0.97,
        poisson: 0.22,
        mu_s: MU_S,
        mu_k: MU_K,
    }];
    let model = crate::setup::wet_seed_model(&materials, case.dt, 1.0, nu, h, case.gravity);
    let radius = 0.5 * DIAMETER;
    let lengths = cells.map(|n| n as f64 * h);
    let start = Vec3::new(0.5 * lengths[0], radius * (1.0 + 1e-3), 0.5 * lengths[2]);
    let mut particles = Particles::default();
    particles.push(start, Vec3::ZERO, radius, DENSITY_RATIO, 0, true);
    let floor = Wall {
        point: Vec3::ZERO,
        normal: Vec3::Y,
        material: 0,
        velocity: Vec3::ZERO,
    };
    let mut dem = DemSystem::new(
        Domain {
            min: Vec3::ZERO,
            max: Vec3::from_array(lengths),
            periodic: [true, false, true],
        },
        Vec3::new(0.0, -case.gravity, 0.0),
        materials,
        model,
        particles,
        vec![floor],
        Integrator::SEED,
        case.dt,
        0.1 * radius,
    );
    dem.releases = vec![Release {
        time: HOLD,
        particles: 0..1,
    }];
    let coupled = CoupledParticles::new(dem, config.grid, &config.boundaries, 1.0, 3, 0.3);
    Ok((fluid, coupled))
}

pub fn run(case: CouetteCase) -> Result<CouetteResult, String> {
    let (mut fluid, mut coupled) = setup(case)?;
    let cells = fluid.grid().cells;
    let clock = std::time::Instant::now();
    let steps = (case.duration / case.dt).round() as usize;
    let mut history = Vec::with_capacity(steps);
    for _ in 0..steps {
        let dt = fluid.next_dt();
        silt_ibm::coupling::coupled_step(&mut fluid, &mut coupled, dt)
            .map_err(|e| e.to_string())?;
        let p = &coupled.dem.particles;
        let contact_radius = p.position[0].y;
        history.push((
            fluid.state.time,
            p.velocity[0].x,
            -p.angular_velocity[0].z * contact_radius,
            (p.position[0].y - p.radius[0]) / DIAMETER,
        ));
    }
    let tail = &history[3 * history.len() / 4..];
    let mean =
        |f: fn(&(f64, f64, f64, f64)) -> f64| tail.iter().map(f).sum::<f64>() / tail.len() as f64;
    let velocity = mean(|h| h.1);
    let rolling_velocity = mean(|h| h.2);
    Ok(CouetteResult {
        slip: (velocity - rolling_velocity) / velocity,
        velocity,
        rolling_velocity,
        history,
        cells,
        seconds: clock.elapsed().as_secs_f64(),
    })
}
