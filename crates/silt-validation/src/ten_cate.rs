//! A sphere settling towards the bottom of a closed box: ten Cate et al. (2002), cases E1-E4
//! (`shared/notes/validation-data.md`): nylon sphere D = 15 mm, rho_p = 1120 kg/m^3, in silicone oil in a
//! box of 100 x 100 x 160 mm, released with its bottom 120 mm above the floor. The immersed boundary
//! coupling (`silt_ibm::coupling`) carries it through the fluid; lubrication, the adaptive contact and the
//! enduring-contact rule (seed eq. 22-26) bring it to rest on the floor. Source and numbers:
//! validation/ten-cate/.

use silt_dem::domain::Domain;
use silt_dem::integrator::Integrator;
use silt_dem::material::Material;
use silt_dem::particles::Particles;
use silt_dem::system::DemSystem;
use silt_dem::wall::Wall;
use silt_fluid::boundary::{Boundaries, Boundary};
use silt_fluid::solver::FluidSolver;
use silt_ibm::coupling::CoupledParticles;
use silt_ibm::Vec3;

/// The fluids of the four experiments: (name, rho_f, mu, Re, terminal velocity u_inf of the experiment).
pub const CASES: [(&str, f64, f64, f64, f64); 4] = [
    ("E1", 970.0, 0.373, 1.5, 0.038),
    ("E2", 965.0, 0.212, 4.1, 0.060),
    ("E3", 962.0, 0.113, 11.6, 0.091),
    ("E4", 960.0, 0.058, 31.9, 0.128),
];
/// The measured largest settling speed in the box over u_inf, per case (ten Cate et al. 2002, Table II,
/// "experimentally obtained u_max / u_inf"; quoted from the paper in rmuenste/FeatFloWer, tc-ref/README.md).
pub const MEASURED_PEAK_RATIO: [f64; 4] = [0.947, 0.953, 0.959, 0.955];

/// The measured largest settling speed in the box of case `case` (m/s): the reference of the plateau.
pub fn measured_peak(case: usize) -> f64 {
    MEASURED_PEAK_RATIO[case] * CASES[case].4
}
pub const DIAMETER: f64 = 0.015;
pub const PARTICLE_DENSITY: f64 = 1120.0;
pub const BOX: [f64; 3] = [0.1, 0.1, 0.16];
pub const START_GAP: f64 = 0.12;
pub const GRAVITY: f64 = 9.81;

#[derive(Clone, Copy, Debug)]
pub struct TenCateCase {
    /// Index into [`CASES`].
    pub case: usize,
    /// Cells per diameter (the box must hold a whole number of cells: 7.5, 15, ...).
    pub d_over_h: f64,
    /// Time step in s.
    pub dt: f64,
    /// Simulated time in s.
    pub duration: f64,
    pub iterations: usize,
    pub retraction: f64,
}

impl TenCateCase {
    /// The validation's settings: dt such that u_inf dt / h is about 0.2, T_c = 10 dt, and long enough
    /// to fall the start gap at 0.9 u_inf and settle (0.6 s more).
    pub fn standard(case: usize, d_over_h: f64) -> Self {
        let h = DIAMETER / d_over_h;
        let u_inf = CASES[case].4;
        TenCateCase {
            case,
            d_over_h,
            dt: 0.2 * h / u_inf,
            duration: START_GAP / (0.9 * u_inf) + 0.6,
            iterations: 3,
            retraction: 0.3,
        }
    }
}

#[derive(Clone, Debug)]
pub struct TenCateResult {
    /// (t in s, gap between sphere and floor over D, u_z in m/s) every step.
    pub history: Vec<(f64, f64, f64)>,
    /// Largest settling speed (the plateau), m/s.
    pub plateau: f64,
    /// Smallest gap over D (negative: overlap).
    pub smallest_gap: f64,
    /// Largest gap over D after the first contact (a rebound).
    pub rebound: f64,
    /// Time of the first contact, s (None: never touched).
    pub first_contact: Option<f64>,
    /// When the sphere, past its plateau, slowed below 5 % of it (ten Cate's "stops"), s.
    pub stop_time: Option<f64>,
    pub cells: [usize; 3],
    pub markers: usize,
    /// Wall time of the run, and the parts of it spent in the immersed-boundary forcing and in the
    /// particles' sub-steps (the rest is the fluid solver).
    pub seconds: f64,
    pub forcing_seconds: f64,
    pub particle_seconds: f64,
}

/// The fluid and the coupled sphere of `case`, at release.
pub fn setup(case: TenCateCase) -> Result<(FluidSolver, CoupledParticles), String> {
    let (_, rho_f, mu, _, _) = CASES[case.case];
    let nu = mu / rho_f;
    let h = DIAMETER / case.d_over_h;
    let cells = BOX.map(|l| (l / h).round() as usize);
    let walls = Boundaries {
        faces: [[Boundary::WALL; 2]; 3],
    };
    let config = crate::setup::crank_nicolson_fluid(cells, h, walls, nu, case.dt, [0.0; 3]);
    let fluid = FluidSolver::new(config.clone())?;
    let materials = vec![Material {
        name: "nylon".into(),
        density: PARTICLE_DENSITY,
        e_dry: 0.97,
        poisson: 0.4,
        mu_s: 0.15,
        mu_k: 0.15,
    }];
    let model = crate::setup::wet_seed_model(&materials, case.dt, rho_f, nu, h, GRAVITY);
    let radius = 0.5 * DIAMETER;
    let start = Vec3::new(0.5 * BOX[0], 0.5 * BOX[1], START_GAP + radius);
    let mut particles = Particles::default();
    particles.push(start, Vec3::ZERO, radius, PARTICLE_DENSITY, 0, false);
    let floor = Wall {
        point: Vec3::ZERO,
        normal: Vec3::Z,
        material: 0,
        velocity: Vec3::ZERO,
    };
    let dem = DemSystem::new(
        Domain {
            min: Vec3::ZERO,
            max: Vec3::from_array(BOX),
            periodic: [false; 3],
        },
        Vec3::new(0.0, 0.0, -GRAVITY),
        materials,
        model,
        particles,
        vec![floor],
        Integrator::SEED,
        case.dt,
        0.1 * radius,
    );
    let coupled = CoupledParticles::new(
        dem,
        config.grid,
        &config.boundaries,
        rho_f,
        case.iterations,
        case.retraction,
    );
    Ok((fluid, coupled))
}

pub fn run(case: TenCateCase) -> Result<TenCateResult, String> {
    let radius = 0.5 * DIAMETER;
    let h = DIAMETER / case.d_over_h;
    let cells = BOX.map(|l| (l / h).round() as usize);
    let (mut fluid, mut coupled) = setup(case)?;
    let markers = coupled.forcing.markers(0).len();
    let steps = (case.duration / case.dt).round() as usize;
    let clock = std::time::Instant::now();
    let mut history = Vec::with_capacity(steps);
    for _ in 0..steps {
        let dt = fluid.next_dt();
        silt_ibm::coupling::coupled_step(&mut fluid, &mut coupled, dt)
            .map_err(|e| e.to_string())?;
        let p = &coupled.dem.particles;
        history.push((
            fluid.state.time,
            (p.position[0].z - radius) / DIAMETER,
            p.velocity[0].z,
        ));
    }
    let plateau = history.iter().map(|h| -h.2).fold(0.0, f64::max);
    let smallest_gap = history.iter().map(|h| h.1).fold(f64::MAX, f64::min);
    let first_contact = history.iter().find(|h| h.1 <= 0.0).map(|h| h.0);
    let rebound = match first_contact {
        Some(t0) => history
            .iter()
            .filter(|h| h.0 > t0)
            .map(|h| h.1)
            .fold(0.0, f64::max),
        None => 0.0,
    };
    let fastest = history.iter().position(|h| -h.2 == plateau).unwrap_or(0);
    let stop_time = history[fastest..]
        .iter()
        .find(|h| h.2.abs() < 0.05 * plateau)
        .map(|h| h.0);
    Ok(TenCateResult {
        history,
        plateau,
        smallest_gap,
        rebound,
        first_contact,
        stop_time,
        cells,
        markers,
        seconds: clock.elapsed().as_secs_f64(),
        forcing_seconds: coupled.forcing_seconds,
        particle_seconds: coupled.particle_seconds,
    })
}
