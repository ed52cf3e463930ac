//! Oblique sphere–wall collisions against Walton's model with the glass parameters of Foerster et al. (1994):
//! e = 0.83, mu = 0.11, nu = 0.22 (seed sec. 5.1). psi = u_t,cp / u_n,in; sliding: psi_out = psi_in - 3.5 mu (1 + e);
//! sticking: psi_out = -beta_0 psi_in.

use crate::setup;
use silt_dem::geometry::{sphere_wall, SphereState};
use silt_dem::integrator::Integrator;
use silt_dem::particles::Particles;
use silt_dem::Vec3;

/// Glass of Foerster et al. (1994) as used by the seed.
pub const RESTITUTION: f64 = 0.83;
pub const FRICTION: f64 = 0.11;
pub const POISSON: f64 = 0.22;

/// Outcome of one oblique impact.
#[derive(Clone, Copy, Debug)]
pub struct ObliqueResult {
    pub psi_in: f64,
    pub psi_out: f64,
    /// Normal restitution measured in the same impact.
    pub restitution: f64,
}

/// Walton's sliding branch, psi_out = psi_in - 3.5 mu (1 + e).
pub fn walton_sliding(psi_in: f64, restitution: f64) -> f64 {
    psi_in - 3.5 * FRICTION * (1.0 + restitution)
}

/// Impacts a non-spinning sphere on the floor with normal speed 1 and tangential speed psi_in.
pub fn run(psi_in: f64, integrator: Integrator, steps_per_contact: f64) -> ObliqueResult {
    // Sphere of radius 1 at impact speed 1: T_c = 0.02 keeps the largest overlap near 0.5% of the radius,
    // as for glass beads at T_c = 10 dt of a typical fluid step.
    let collision_time = 0.02;
    let dt = collision_time / steps_per_contact;
    let materials = vec![setup::material(
        2.5,
        RESTITUTION,
        FRICTION,
        FRICTION,
        POISSON,
    )];
    let model = setup::seed_model(&materials, collision_time, 1e-9, 0.0);
    let mut particles = Particles::default();
    particles.push(
        Vec3::new(0.0, 0.0, 1.0 + 0.37 * dt),
        Vec3::new(psi_in, 0.0, -1.0),
        1.0,
        2.5,
        0,
        false,
    );
    let domain = setup::open_box(10.0, 10.0);
    let wall = setup::floor(0);
    let mut system = setup::collision_system(
        domain,
        materials,
        model,
        particles,
        vec![wall.clone()],
        integrator,
        dt,
    );
    let steps = (4.0 * steps_per_contact) as usize;
    for _ in 0..steps {
        system.step().expect("an isolated collision stays finite");
    }
    let p = &system.particles;
    let state = SphereState {
        velocity: p.velocity[0],
        angular_velocity: p.angular_velocity[0],
        radius: p.radius[0],
    };
    // Contact-point velocity as if touching (gap 0): u + R omega x n.
    let mut at_contact = p.position[0];
    at_contact.z = p.radius[0];
    let g = sphere_wall(at_contact, &state, &wall);
    ObliqueResult {
        psi_in,
        psi_out: g.tangential_velocity.x,
        restitution: p.velocity[0].z,
    }
}
