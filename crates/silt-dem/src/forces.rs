//! The pair loop: contact and lubrication forces of all pairs and walls, plus gravity (seed eq. 7-8).
//!
//! Pass 1 evaluates each pair once, in parallel, into its own slot. Pass 2 sums, per particle and in
//! ascending partner order, the pair results and the wall contacts. No floating-point sum depends on the
//! thread count, so results are bit-identical for any number of threads.

use crate::contact::{ContactForce, ContactModel, ContactState, PairProperties, Side, Update};
use crate::domain::Domain;
use crate::geometry::{sphere_pair, sphere_wall, SphereState};
use crate::neighbor::NeighborList;
use crate::particles::Particles;
use crate::wall::Wall;
use crate::Vec3;
use rayon::prelude::*;

/// Resulting force and torque on every particle.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Loads {
    pub force: Vec<Vec3>,
    pub torque: Vec<Vec3>,
}

impl Loads {
    pub fn zeros(n: usize) -> Self {
        Loads {
            force: vec![Vec3::ZERO; n],
            torque: vec![Vec3::ZERO; n],
        }
    }
}

/// Velocities at which the loads are evaluated (the actual state or a predicted one).
#[derive(Clone, Copy)]
pub struct Kinematics<'a> {
    pub position: &'a [Vec3],
    pub velocity: &'a [Vec3],
    pub angular_velocity: &'a [Vec3],
}

/// Everything fixed during one evaluation.
pub struct ForceContext<'a> {
    pub model: &'a ContactModel,
    pub domain: &'a Domain,
    pub walls: &'a [Wall],
    pub gravity: Vec3,
    pub particles: &'a Particles,
    pub densities: &'a [f64],
}

impl ForceContext<'_> {
    #[inline]
    fn side(&self, i: usize) -> Side {
        let p = self.particles;
        Side {
            mass: p.mass[i],
            radius: p.radius[i],
            density: self.densities[p.material[i]],
            free: !p.fixed[i],
        }
    }

    #[inline]
    fn sphere(&self, k: &Kinematics, i: usize) -> SphereState {
        SphereState {
            velocity: k.velocity[i],
            angular_velocity: k.angular_velocity[i],
            radius: self.particles.radius[i],
        }
    }

    /// Kernel for pair (i, j) from the pair list.
    #[inline]
    fn pair(
        &self,
        k: &Kinematics,
        i: usize,
        j: usize,
        state: &mut ContactState,
        update: Update,
    ) -> Option<ContactForce> {
        let p = self.particles;
        if p.fixed[i] && p.fixed[j] {
            return None;
        }
        let separation = self.domain.separation(k.position[i], k.position[j]);
        let reach = p.radius[i] + p.radius[j] + self.model.interaction_range();
        if separation.length_squared() >= reach * reach && *state == ContactState::default() {
            return None;
        }
        let geometry = sphere_pair(separation, &self.sphere(k, i), &self.sphere(k, j));
        let effective_mass = match (p.fixed[i], p.fixed[j]) {
            (false, false) => p.mass[i] * p.mass[j] / (p.mass[i] + p.mass[j]),
            (true, _) => p.mass[j],
            (_, true) => p.mass[i],
        };
        let properties = PairProperties {
            effective_mass,
            effective_radius: p.radius[i] * p.radius[j] / (p.radius[i] + p.radius[j]),
            smaller_radius: p.radius[i].min(p.radius[j]),
            coefficients: self.model.coefficients(p.material[i], p.material[j]),
            sides: [self.side(i), self.side(j)],
        };
        self.model.evaluate(&geometry, &properties, state, update)
    }

    /// Kernel for particle i against wall w.
    #[inline]
    fn wall(
        &self,
        k: &Kinematics,
        i: usize,
        wall: &Wall,
        state: &mut ContactState,
        update: Update,
    ) -> Option<ContactForce> {
        let p = self.particles;
        let reach = p.radius[i] + self.model.interaction_range();
        if wall.distance(k.position[i]) >= reach && *state == ContactState::default() {
            return None;
        }
        let geometry = sphere_wall(k.position[i], &self.sphere(k, i), wall);
        let properties = PairProperties {
            effective_mass: p.mass[i],
            effective_radius: p.radius[i],
            smaller_radius: p.radius[i],
            coefficients: self.model.coefficients(p.material[i], wall.material),
            sides: [
                self.side(i),
                Side {
                    mass: 0.0,
                    radius: f64::INFINITY,
                    density: 0.0,
                    free: false,
                },
            ],
        };
        self.model.evaluate(&geometry, &properties, state, update)
    }
}

/// Computes contact, lubrication and gravity loads on all particles at state `k` (seed eq. 7-8).
/// `pair_results` is scratch space reused between calls.
pub fn compute_loads(
    ctx: &ForceContext,
    k: Kinematics,
    neighbors: &mut NeighborList,
    wall_states: &mut [ContactState],
    update: Update,
    pair_results: &mut Vec<Option<ContactForce>>,
    loads: &mut Loads,
) {
    let n = k.position.len();
    let wall_count = ctx.walls.len();

    // Pass 1: each pair once.
    let first = &neighbors.first;
    let second = &neighbors.second;
    neighbors
        .state
        .par_iter_mut()
        .enumerate()
        .map(|(pair, state)| {
            ctx.pair(
                &k,
                first[pair] as usize,
                second[pair] as usize,
                state,
                update,
            )
        })
        .collect_into_vec(pair_results);

    // Pass 2: per particle, incoming pairs (partners < i), then outgoing pairs (partners > i), walls, gravity.
    let results = &pair_results[..];
    let list = &*neighbors;
    loads.force.resize(n, Vec3::ZERO);
    loads.torque.resize(n, Vec3::ZERO);
    // One slot per particle even without walls, so that the zip below always lines up.
    debug_assert_eq!(wall_states.len(), n * wall_count.max(1));
    loads
        .force
        .par_iter_mut()
        .zip(loads.torque.par_iter_mut())
        .zip(wall_states.par_chunks_mut(wall_count.max(1)))
        .enumerate()
        .for_each(|(i, ((force, torque), my_wall_states))| {
            let mut f = Vec3::ZERO;
            let mut t = Vec3::ZERO;
            if !ctx.particles.fixed[i] {
                for &pair in &list.incoming[list.incoming_start[i]..list.incoming_start[i + 1]] {
                    if let Some(c) = &results[pair as usize] {
                        f -= c.force_on_p;
                        t += c.torque_on_q;
                    }
                }
                for c in results[list.row_start[i]..list.row_start[i + 1]]
                    .iter()
                    .flatten()
                {
                    f += c.force_on_p;
                    t += c.torque_on_p;
                }
                for (wall, state) in ctx.walls.iter().zip(my_wall_states.iter_mut()) {
                    if let Some(c) = ctx.wall(&k, i, wall, state, update) {
                        f += c.force_on_p;
                        t += c.torque_on_p;
                    }
                }
                f += ctx.particles.mass[i] * ctx.gravity;
            }
            *force = f;
            *torque = t;
        });
}
