//! A steel sphere driven towards a wall through a viscous fluid and let go one radius above it: the wet
//! collisions of Gondret, Lance & Petit (2002) at St = 27 and St = 152 (`shared/notes/validation-data.md`),
//! set up as in the seed (sec. 5.2, Table 1): the approach velocity is prescribed as
//! u = u_in (exp(-40 t) - 1) until the gap is R, then the sphere is free; lubrication slows it, the adaptive
//! normal contact makes it rebound, and the trajectory (gap against time) is compared with the digitised
//! rebound peaks of the experiment. The domain is periodic in x and z with no-slip walls at y = 0 and at the
//! top, reduced from the seed's (a resolution and domain study shows the effect). Source and numbers:
//! validation/gondret/.

use silt_dem::domain::Domain;
use silt_dem::integrator::Integrator;
use silt_dem::material::Material;
use silt_dem::particles::Particles;
use silt_dem::system::DemSystem;
use silt_dem::wall::Wall;
use silt_fluid::boundary::{Boundaries, Boundary};
use silt_fluid::solver::FluidSolver;
use silt_ibm::coupling::{ContactHydrodynamics, CoupledParticles};
use silt_ibm::Vec3;

/// One experiment: Stokes number, Reynolds number, rho_f (kg/m^3), mu (Pa s), D (m), u_in (m/s), and the
/// digitised rebound peaks (time after the first contact in s, gap in m).
#[derive(Clone, Copy, Debug)]
pub struct Experiment {
    pub stokes: f64,
    pub reynolds: f64,
    pub fluid_density: f64,
    pub viscosity: f64,
    pub diameter: f64,
    pub impact_velocity: f64,
    pub peaks: &'static [(f64, f64)],
}

pub const EXPERIMENTS: [Experiment; 2] = [
    Experiment {
        stokes: 27.0,
        reynolds: 30.0,
        fluid_density: 965.0,
        viscosity: 0.1,
        diameter: 0.006,
        impact_velocity: 0.518,
        peaks: &[(0.019, 1.97e-3)],
    },
    Experiment {
        stokes: 152.0,
        reynolds: 164.0,
        fluid_density: 935.0,
        viscosity: 0.01,
        diameter: 0.003,
        impact_velocity: 0.585,
        peaks: &[(0.038, 7.47e-3), (0.106, 2.23e-3), (0.14, 0.52e-3)],
    },
];
/// Steel (Gondret et al. 2002).
pub const PARTICLE_DENSITY: f64 = 7800.0;
pub const E_DRY: f64 = 0.97;
pub const GRAVITY: f64 = 9.81;
/// Rate of the seed's prescribed approach, u = u_in (exp(-RAMP_RATE t) - 1).
pub const RAMP_RATE: f64 = 40.0;

#[derive(Clone, Copy, Debug)]
pub struct GondretCase {
    /// Index into [`EXPERIMENTS`].
    pub experiment: usize,
    /// Cells per diameter.
    pub d_over_h: f64,
    /// Periodic width along x and z, in diameters.
    pub width: f64,
    /// Gap between the sphere and the wall at the start, in diameters.
    pub start_gap: f64,
    /// The start position is shifted down by this fraction of a cell from the one whose steps land on the
    /// release gap: the release, at the first step ending at or below it, falls at another point of a step
    /// (the seed's Fig. 5 study).
    pub start_shift: f64,
    /// Distance from the sphere's top at the start to the upper wall, in diameters.
    pub headroom: f64,
    /// Simulated time after the sphere would reach the wall at u_in.
    pub after_contact: f64,
    pub dt: f64,
    /// Particle sub-steps per RK stage ({8, 2, 5} in the seed; {1, 1, 1}: none).
    pub substeps: [u32; 3],
    /// Speed u_in the prescribed approach tends to (the experiment's, or another for the seed's Fig. 9).
    pub impact_velocity: f64,
    /// Rate of the prescribed approach, u = u_in (exp(-ramp_rate t) - 1).
    pub ramp_rate: f64,
    /// The sphere is let go when its gap falls to this many diameters (R: 0.5; at contact: 0).
    pub release_gap: f64,
    /// Hydrodynamic loads during contact: the seed's rule, or always on ("wet") or off ("dry", Fig. 9).
    pub in_contact: ContactHydrodynamics,
    /// Stop at the first rebound peak (or when the sphere nears the upper wall).
    pub stop_at_first_peak: bool,
}

impl GondretCase {
    /// The validation's settings: a 5 D wide periodic domain, a start gap long enough for the prescribed
    /// velocity to reach 99 % of u_in (exp(-40 t) < 0.01 after 0.115 s), dt = 0.25 h / u_in, T_c = 10 dt.
    pub fn standard(experiment: usize, d_over_h: f64) -> Self {
        let e = EXPERIMENTS[experiment];
        let h = e.diameter / d_over_h;
        let ramp_distance = e.impact_velocity * (0.115 - 0.99 / RAMP_RATE);
        let last_peak = e.peaks.iter().map(|p| p.0).fold(0.0, f64::max);
        let highest_peak = e.peaks.iter().map(|p| p.1).fold(0.0, f64::max);
        GondretCase {
            experiment,
            d_over_h,
            width: 5.0,
            start_gap: (ramp_distance / e.diameter).ceil() + 0.5,
            start_shift: 0.0,
            headroom: (highest_peak / e.diameter).max(1.0) + 1.0,
            after_contact: 1.3 * last_peak + 0.01,
            dt: 0.25 * h / e.impact_velocity,
            substeps: [8, 2, 5],
            impact_velocity: e.impact_velocity,
            ramp_rate: RAMP_RATE,
            release_gap: 0.5,
            in_contact: ContactHydrodynamics::Seed,
            stop_at_first_peak: false,
        }
    }

    /// The seed's Fig. 9: the St = 27 set-up with the sphere driven at the wall until it touches it, at the
    /// impact Stokes number `stokes` (set by the impact speed u_in = 0.518 St / 27 m/s; the ramp scaled
    /// with it, so that the approach is the same in units of D and D / u_in), with the hydrodynamic loads
    /// during contact on ("wet") or off ("dry"). The run ends at the first rebound peak.
    pub fn wall_collision(stokes: f64, d_over_h: f64, in_contact: ContactHydrodynamics) -> Self {
        let mut case = GondretCase::standard(0, d_over_h);
        let e = case.experiment();
        let speed = e.impact_velocity * stokes / e.stokes;
        case.impact_velocity = speed;
        case.ramp_rate = RAMP_RATE * speed / e.impact_velocity;
        case.dt = 0.25 * case.spacing() / speed;
        case.release_gap = 0.0;
        case.in_contact = in_contact;
        case.headroom = 6.0;
        case.after_contact = 0.1 * e.impact_velocity / speed + 0.02;
        case.stop_at_first_peak = true;
        case
    }

    /// Impact Stokes number St = rho_p u_in D / (9 rho_f nu).
    pub fn stokes(&self) -> f64 {
        let e = self.experiment();
        PARTICLE_DENSITY * self.impact_velocity * e.diameter / (9.0 * e.viscosity)
    }

    pub fn experiment(&self) -> Experiment {
        EXPERIMENTS[self.experiment]
    }

    pub fn spacing(&self) -> f64 {
        self.experiment().diameter / self.d_over_h
    }

    /// Cells along x, y (wall-normal) and z.
    pub fn cells(&self) -> [usize; 3] {
        let across = (self.width * self.d_over_h).round() as usize;
        let tall = ((self.start_gap + 1.0 + self.headroom) * self.d_over_h).ceil() as usize;
        [across, tall, across]
    }

    /// Prescribed velocity (along y) at time t.
    pub fn approach_velocity(&self, t: f64) -> f64 {
        self.impact_velocity * ((-self.ramp_rate * t).exp() - 1.0)
    }
}

#[derive(Clone, Debug)]
pub struct GondretResult {
    /// (t in s, gap over D, u_y in m/s) every step.
    pub history: Vec<(f64, f64, f64)>,
    /// When the prescribed motion ended (at the start of the step that reaches the release gap), and the
    /// speed then.
    pub release_time: f64,
    pub release_speed: f64,
    pub first_contact: Option<f64>,
    /// Rebound peaks after the first contact: (time after it in s, gap in m), in order.
    pub peaks: Vec<(f64, f64)>,
    /// Speed towards the wall at the first contact (the last step before it), m/s.
    pub contact_speed: f64,
    /// Largest speed away from the wall after the first contact (in contact or not), m/s.
    pub rebound_speed: f64,
    /// Speed away from the wall when the sphere leaves the wall after the first contact (at the first step
    /// with a gap again; 0 if it stays), m/s: over the contact speed, the effective restitution.
    pub separation_speed: f64,
    pub cells: [usize; 3],
    pub seconds: f64,
}

/// The gap at the start: about `start_gap` D, raised by less than a step's travel so that the prescribed
/// motion (a displacement dt u(t + dt / 2) per step) ends a step exactly at the release gap. The sphere is let
/// go there: free when it reaches the wall, without a prescribed step into an overlap, and (released at
/// contact) without lubrication slowing it before (the seed's Fig. 9). `start_shift` then lowers the start
/// (see [`setup`]), so that the release falls at another point of a step (the seed's Fig. 5).
pub fn landing_start_gap(case: GondretCase) -> f64 {
    let e = case.experiment();
    let nominal = case.start_gap * e.diameter;
    let target = case.release_gap * e.diameter;
    let mut travelled = 0.0;
    let mut step = 0u64;
    loop {
        let t = (step as f64 + 0.5) * case.dt;
        let next = travelled - case.dt * case.approach_velocity(t);
        if nominal - next <= target {
            // Steps 0..=step bring the sphere from target + next to the target.
            return target + next;
        }
        travelled = next;
        step += 1;
    }
}

/// The fluid and the coupled sphere of `case`, at rest at the start.
pub fn setup(case: GondretCase) -> Result<(FluidSolver, CoupledParticles), String> {
    let e = case.experiment();
    let nu = e.viscosity / e.fluid_density;
    let h = case.spacing();
    let cells = case.cells();
    let mut faces = [[Boundary::Periodic; 2]; 3];
    faces[1] = [Boundary::WALL; 2];
    let boundaries = Boundaries { faces };
    let config = crate::setup::crank_nicolson_fluid(cells, h, boundaries, nu, case.dt, [0.0; 3]);
    let fluid = FluidSolver::new(config.clone())?;
    let materials = vec![Material {
        name: "steel".into(),
        density: PARTICLE_DENSITY,
        e_dry: E_DRY,
        poisson: 0.3,
        mu_s: 0.15,
        mu_k: 0.15,
    }];
    let model = crate::setup::wet_seed_model(&materials, case.dt, e.fluid_density, nu, h, GRAVITY);
    let radius = 0.5 * e.diameter;
    let lengths = cells.map(|n| n as f64 * h);
    let start = Vec3::new(
        0.5 * lengths[0],
        radius + landing_start_gap(case) - case.start_shift * h,
        0.5 * lengths[2],
    );
    let mut particles = Particles::default();
    particles.push(start, Vec3::ZERO, radius, PARTICLE_DENSITY, 0, true);
    let floor = Wall {
        point: Vec3::ZERO,
        normal: Vec3::Y,
        material: 0,
        velocity: Vec3::ZERO,
    };
    let dem = DemSystem::new(
        Domain {
            min: Vec3::ZERO,
            max: Vec3::from_array(lengths),
            periodic: [true, false, true],
        },
        Vec3::new(0.0, -GRAVITY, 0.0),
        materials,
        model,
        particles,
        vec![floor],
        Integrator::PredictorCorrector {
            substeps: case.substeps,
        },
        case.dt,
        0.1 * radius,
    );
    let mut coupled = CoupledParticles::new(
        dem,
        config.grid,
        &config.boundaries,
        e.fluid_density,
        3,
        0.3,
    );
    coupled.in_contact = case.in_contact;
    Ok((fluid, coupled))
}

/// Runs the approach (prescribed), the release at gap R and the rebounds.
pub fn run(case: GondretCase) -> Result<GondretResult, String> {
    let e = case.experiment();
    let radius = 0.5 * e.diameter;
    let (mut fluid, mut coupled) = setup(case)?;
    let clock = std::time::Instant::now();
    let mut history = Vec::new();
    let mut release: Option<(f64, f64)> = None;
    let mut end_time = f64::INFINITY;
    while fluid.state.time < end_time {
        let time = fluid.state.time;
        if release.is_none() {
            // The velocity of the step, at its middle.
            let u = case.approach_velocity(time + 0.5 * case.dt);
            coupled.dem.particles.velocity[0] = Vec3::new(0.0, u, 0.0);
        }
        let dt = fluid.next_dt();
        silt_ibm::coupling::coupled_step(&mut fluid, &mut coupled, dt)
            .map_err(|e| e.to_string())?;
        let p = &coupled.dem.particles;
        let gap = p.position[0].y - radius;
        let velocity = p.velocity[0].y;
        history.push((fluid.state.time, gap / e.diameter, velocity));
        // The start height makes a step end exactly at the release gap (to round-off).
        if release.is_none() && gap <= (case.release_gap + 1e-9) * e.diameter {
            release = Some((fluid.state.time, -velocity));
            coupled.dem.particles.fixed[0] = false;
            end_time = fluid.state.time
                + case.release_gap * e.diameter / case.impact_velocity
                + case.after_contact;
        }
        if case.stop_at_first_peak {
            let touched = history.iter().any(|h| h.1 <= 0.0);
            let ceiling = (case.cells()[1] as f64 * case.spacing() - 1.5 * e.diameter) / e.diameter;
            let falling_again = touched
                && velocity < 0.0
                && history.iter().rev().nth(1).is_some_and(|h| h.2 >= 0.0);
            if falling_again || gap / e.diameter > ceiling {
                break;
            }
        }
        if history.len() > 10_000_000 {
            return Err("the sphere never reached the wall".into());
        }
    }
    let (release_time, release_speed) = release.ok_or("the sphere never reached gap R")?;
    let contact_step = history.iter().position(|h| h.1 <= 0.0);
    let first_contact = contact_step.map(|k| history[k].0);
    let contact_speed = contact_step.map_or(0.0, |k| -history[k.saturating_sub(1)].2);
    let rebound_speed = contact_step.map_or(0.0, |k| {
        history[k..].iter().map(|h| h.2).fold(0.0, f64::max)
    });
    let separation_speed = contact_step
        .and_then(|k| history[k..].iter().find(|h| h.1 > 0.0))
        .map_or(0.0, |h| h.2.max(0.0));
    let mut peaks = Vec::new();
    if let Some(t0) = first_contact {
        // Local maxima of the gap in flight (above the contact) after the first contact.
        let after: Vec<&(f64, f64, f64)> = history.iter().filter(|h| h.0 > t0).collect();
        for w in after.windows(3) {
            if w[1].1 > 0.0 && w[1].1 >= w[0].1 && w[1].1 > w[2].1 {
                peaks.push((w[1].0 - t0, w[1].1 * e.diameter));
            }
        }
        // A run stopped at its first peak ends on it or just past it.
        if case.stop_at_first_peak && peaks.is_empty() {
            if let Some(top) = after.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
                if top.1 > 0.0 {
                    peaks.push((top.0 - t0, top.1 * e.diameter));
                }
            }
        }
    }
    Ok(GondretResult {
        history,
        release_time,
        release_speed,
        first_contact,
        peaks,
        contact_speed,
        rebound_speed,
        separation_speed,
        cells: case.cells(),
        seconds: clock.elapsed().as_secs_f64(),
    })
}
