//! Normal collisions with the adaptive collision-time model (seed sec. 3.2, 4.2; Fig. 4).
//!
//! A sphere hits a wall, or two spheres (equal or unequal radii) hit head-on, without gravity or fluid.
//! The measured restitution is compared with the exact solution of the contact ODE with the same
//! k_n and d_n, and the contact duration with T_c.

use crate::setup;
use silt_dem::contact::actm::{exact_collision, ExactCollision};
use silt_dem::integrator::Integrator;
use silt_dem::particles::Particles;
use silt_dem::Vec3;

/// Partner of the moving sphere.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Partner {
    Wall,
    /// A free sphere of this radius (relative to the first one's radius 1).
    Sphere(f64),
}

/// One collision experiment.
#[derive(Clone, Copy, Debug)]
pub struct Collision {
    pub e_dry: f64,
    pub partner: Partner,
    /// T_c / dt.
    pub steps_per_contact: f64,
    pub integrator: Integrator,
}

/// What the experiment measured.
#[derive(Clone, Debug)]
pub struct CollisionResult {
    pub restitution: f64,
    pub duration: f64,
    pub collision_time: f64,
    pub exact: ExactCollision,
    /// Normal contact force magnitude against time since first touch, sampled once per time step.
    pub force_history: Vec<(f64, f64)>,
}

impl CollisionResult {
    /// Relative error of the rebound against the exact ODE with the same coefficients.
    pub fn restitution_error(&self) -> f64 {
        self.restitution / self.exact.restitution - 1.0
    }

    pub fn duration_error(&self) -> f64 {
        self.duration / self.collision_time - 1.0
    }
}

/// Runs one collision: sphere of radius 1 and density 2 at impact speed 1, T_c = steps_per_contact dt.
pub fn run(c: &Collision) -> CollisionResult {
    // Sphere of radius 1 at impact speed 1: T_c = 0.02 keeps the largest overlap near 0.5% of the radius.
    let collision_time = 0.02;
    let dt = collision_time / c.steps_per_contact;
    let impact_speed = 1.0;
    let materials = vec![setup::material(2.0, c.e_dry, 0.5, 0.4, 0.22)];
    let model = setup::seed_model(&materials, collision_time, 1e-9, 0.0);
    let mut particles = Particles::default();
    // Start a fraction of a step before touching so that the first contact step is generic.
    let start_gap = 0.37 * impact_speed * dt;
    let (walls, effective_mass) = match c.partner {
        Partner::Wall => {
            particles.push(
                Vec3::new(0.0, 0.0, 1.0 + start_gap),
                Vec3::new(0.0, 0.0, -impact_speed),
                1.0,
                2.0,
                0,
                false,
            );
            (vec![setup::floor(0)], particles.mass[0])
        }
        Partner::Sphere(radius) => {
            // Total momentum zero; relative speed = impact_speed.
            particles.push(Vec3::ZERO, Vec3::ZERO, 1.0, 2.0, 0, false);
            particles.push(
                Vec3::new(0.0, 0.0, 1.0 + radius + start_gap),
                Vec3::ZERO,
                radius,
                2.0,
                0,
                false,
            );
            let (m1, m2) = (particles.mass[0], particles.mass[1]);
            particles.velocity[0] = Vec3::new(0.0, 0.0, impact_speed * m2 / (m1 + m2));
            particles.velocity[1] = Vec3::new(0.0, 0.0, -impact_speed * m1 / (m1 + m2));
            (vec![], m1 * m2 / (m1 + m2))
        }
    };
    let domain = setup::open_box(5.0, 5.0);
    let mut system =
        setup::collision_system(domain, materials, model, particles, walls, c.integrator, dt);

    let gap = |s: &silt_dem::system::DemSystem| match c.partner {
        Partner::Wall => s.particles.position[0].z - s.particles.radius[0],
        Partner::Sphere(_) => {
            (s.particles.position[1] - s.particles.position[0]).length()
                - s.particles.radius[0]
                - s.particles.radius[1]
        }
    };
    let normal_speed = |s: &silt_dem::system::DemSystem| match c.partner {
        Partner::Wall => -s.particles.velocity[0].z,
        Partner::Sphere(_) => s.particles.velocity[0].z - s.particles.velocity[1].z,
    };
    let contact_state = |s: &silt_dem::system::DemSystem| match c.partner {
        Partner::Wall => s.wall_states[0],
        Partner::Sphere(_) => s
            .neighbors
            .find(0, 1)
            .map(|p| s.neighbors.state[p])
            .unwrap_or_default(),
    };

    let mut previous_gap = gap(&system);
    let mut touch_time = None;
    let mut release_time = None;
    let mut coefficients = (0.0, 0.0);
    let mut recorded_impact_speed = impact_speed;
    let mut force_history = vec![(0.0, 0.0)];
    let max_steps = (10.0 * c.steps_per_contact) as usize + 10;
    for _ in 0..max_steps {
        let t_before = system.time();
        system.step().expect("an isolated collision stays finite");
        let g = gap(&system);
        let t = system.time();
        if touch_time.is_none() && g <= 0.0 {
            touch_time = Some(t_before + dt * previous_gap / (previous_gap - g));
        }
        let state = contact_state(&system);
        if state.touching {
            coefficients = (state.stiffness, state.damping);
            recorded_impact_speed = state.impact_speed;
        }
        if let Some(t0) = touch_time {
            if release_time.is_none() {
                let overlap = (-g).max(0.0);
                let (k, d) = coefficients;
                let force = if g <= 0.0 {
                    (k * overlap * overlap.sqrt() + d * normal_speed(&system)).abs()
                } else {
                    0.0
                };
                force_history.push((t - t0, force));
                if g > 0.0 {
                    release_time = Some(t_before + dt * previous_gap / (previous_gap - g));
                }
            } else if let Some(release) = release_time {
                if t - release > collision_time {
                    break;
                }
            }
        }
        previous_gap = g;
    }
    let (k, d) = coefficients;
    // The ODE started at the recorded u_in with the k_n tuned to it is the model's ideal collision; its
    // restitution does not depend on u_in (the ACTM is scale-free), so it is the reference for u_out / u_in.
    let exact = exact_collision(k, d, effective_mass, recorded_impact_speed, collision_time);
    let restitution = -normal_speed(&system) / impact_speed;
    let duration = release_time.unwrap_or(f64::INFINITY) - touch_time.unwrap_or(0.0);
    CollisionResult {
        restitution,
        duration,
        collision_time,
        exact,
        force_history,
    }
}

/// Exact force history of the contact ODE with the coefficients of `result`'s contact, for plots.
pub fn exact_force_history(
    k: f64,
    d: f64,
    mass: f64,
    impact_speed: f64,
    duration: f64,
    samples: usize,
) -> Vec<(f64, f64)> {
    let h = duration / (samples as f64 * 200.0);
    let (mut z, mut v, mut t) = (0.0f64, -impact_speed, 0.0);
    let mut out = vec![(0.0, 0.0)];
    let rhs = |z: f64, v: f64| {
        let overlap = (-z).max(0.0);
        (k * overlap * overlap.sqrt() - d * v) / mass
    };
    for step in 1..=samples * 200 {
        let (k1z, k1v) = (v, rhs(z, v));
        let (k2z, k2v) = (v + 0.5 * h * k1v, rhs(z + 0.5 * h * k1z, v + 0.5 * h * k1v));
        let (k3z, k3v) = (v + 0.5 * h * k2v, rhs(z + 0.5 * h * k2z, v + 0.5 * h * k2v));
        let (k4z, k4v) = (v + h * k3v, rhs(z + h * k3z, v + h * k3v));
        z += h / 6.0 * (k1z + 2.0 * k2z + 2.0 * k3z + k4z);
        v += h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
        t += h;
        if z > 0.0 {
            out.push((t, 0.0));
            break;
        }
        if step % 200 == 0 {
            let overlap = -z;
            out.push((t, (k * overlap * overlap.sqrt() - d * v).abs()));
        }
    }
    out
}
