//! The pair loop: contact and lubrication forces of all pairs and walls, plus gravity (seed eq. 7-8).
//!
//! Pass 0 gathers what the kernels read of each particle. Pass 1 evaluates each near pair (the pairs that
//! may interact, see [`NeighborList`]) once, in parallel, into its own slot. Pass 2 sums, per particle and
//! in ascending partner order, the pair results and the wall contacts. No floating-point sum depends on
//! the thread count, so results are bit-identical for any number of threads.

use crate::contact::{ContactForce, ContactModel, ContactState, PairProperties, Side, Update};
use crate::domain::Domain;
use crate::geometry::{sphere_pair, sphere_wall, MinimumImage, SphereState};
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

/// What pass 1 keeps of one pair (first member p, second q): the force on p (q receives the opposite) and
/// the torques on both; zero when nothing acts. Three vectors instead of an `Option<ContactForce>`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct PairLoad {
    force_on_p: Vec3,
    torque_on_p: Vec3,
    torque_on_q: Vec3,
}

impl From<ContactForce> for PairLoad {
    #[inline]
    fn from(c: ContactForce) -> Self {
        PairLoad {
            force_on_p: c.force_on_p,
            torque_on_p: c.torque_on_p,
            torque_on_q: c.torque_on_q,
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

/// What the kernels read of one particle, gathered from the particle arrays once per evaluation so that a
/// pair loads each member once instead of once per array.
#[derive(Clone, Copy, Debug, Default)]
struct Body {
    position: Vec3,
    velocity: Vec3,
    angular_velocity: Vec3,
    radius: f64,
    mass: f64,
    density: f64,
    material: usize,
    fixed: bool,
}

impl Body {
    #[inline]
    fn side(&self) -> Side {
        Side {
            mass: self.mass,
            radius: self.radius,
            density: self.density,
            free: !self.fixed,
        }
    }

    #[inline]
    fn sphere(&self) -> SphereState {
        SphereState {
            velocity: self.velocity,
            angular_velocity: self.angular_velocity,
            radius: self.radius,
        }
    }
}

impl ForceContext<'_> {
    /// Particle i at state `k`.
    #[inline]
    fn body(&self, k: &Kinematics, i: usize) -> Body {
        let p = self.particles;
        Body {
            position: k.position[i],
            velocity: k.velocity[i],
            angular_velocity: k.angular_velocity[i],
            radius: p.radius[i],
            mass: p.mass[i],
            density: self.densities[p.material[i]],
            material: p.material[i],
            fixed: p.fixed[i],
        }
    }

    /// Effective mass and radius of the pair (p, q); a fixed sphere lends the other one its whole mass.
    #[inline]
    fn pair_constants(p: &Body, q: &Body) -> PairConstants {
        PairConstants {
            effective_mass: match (p.fixed, q.fixed) {
                (false, false) => p.mass * q.mass / (p.mass + q.mass),
                (true, _) => q.mass,
                (_, true) => p.mass,
            },
            effective_radius: p.radius * q.radius / (p.radius + q.radius),
        }
    }

    /// Kernel for the pair (p, q) from the pair list, with its constants `c`.
    #[inline]
    fn pair(
        &self,
        image: &MinimumImage,
        p: &Body,
        q: &Body,
        c: &PairConstants,
        state: &mut ContactState,
        update: Update,
    ) -> Option<ContactForce> {
        if p.fixed && q.fixed {
            return None;
        }
        let separation = image.separation(p.position, q.position);
        let reach = p.radius + q.radius + self.model.interaction_range();
        if separation.length_squared() >= reach * reach && *state == ContactState::default() {
            return None;
        }
        let geometry = sphere_pair(separation, &p.sphere(), &q.sphere());
        let properties = PairProperties {
            effective_mass: c.effective_mass,
            effective_radius: c.effective_radius,
            smaller_radius: p.radius.min(q.radius),
            coefficients: self.model.coefficients(p.material, q.material),
            sides: [p.side(), q.side()],
        };
        self.model.evaluate(&geometry, &properties, state, update)
    }

    /// Kernel for particle p against a wall.
    #[inline]
    fn wall(
        &self,
        p: &Body,
        wall: &Wall,
        state: &mut ContactState,
        update: Update,
    ) -> Option<ContactForce> {
        let reach = p.radius + self.model.interaction_range();
        if wall.distance(p.position) >= reach && *state == ContactState::default() {
            return None;
        }
        let geometry = sphere_wall(p.position, &p.sphere(), wall);
        let properties = PairProperties {
            effective_mass: p.mass,
            effective_radius: p.radius,
            smaller_radius: p.radius,
            coefficients: self.model.coefficients(p.material, wall.material),
            sides: [
                p.side(),
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

/// Effective mass and radius of a near pair, computed when the near pairs are rebuilt rather than at every
/// evaluation (two divisions fewer per contact; masses and radii are constant, as the pair lists assume).
#[derive(Clone, Copy, Debug, Default)]
struct PairConstants {
    effective_mass: f64,
    effective_radius: f64,
}

/// Scratch space of [`compute_loads`], kept between calls to avoid allocations.
#[derive(Clone, Debug, Default)]
pub struct LoadScratch {
    bodies: Vec<Body>,
    /// One slot per near pair.
    pair_loads: Vec<PairLoad>,
    /// Constants of the near pairs of build `constants_of`.
    pair_constants: Vec<PairConstants>,
    constants_of: u64,
}

/// Computes contact, lubrication and gravity loads on all particles at state `k` (seed eq. 7-8).
pub fn compute_loads(
    ctx: &ForceContext,
    k: Kinematics,
    neighbors: &mut NeighborList,
    wall_states: &mut [ContactState],
    update: Update,
    scratch: &mut LoadScratch,
    loads: &mut Loads,
) {
    let n = k.position.len();
    let wall_count = ctx.walls.len();
    let LoadScratch {
        bodies,
        pair_loads,
        pair_constants,
        constants_of,
    } = scratch;

    // Pass 0: the particles as the kernels read them, and whether one has moved far enough for the near
    // pairs to be rebuilt.
    let image = MinimumImage::new(ctx.domain);
    bodies.resize(n, Body::default());
    let list = &*neighbors;
    let some_left = bodies
        .par_chunks_mut(PARTICLES_PER_TASK)
        .enumerate()
        .map(|(chunk, bodies)| {
            let mut left = false;
            for (i, body) in (chunk * PARTICLES_PER_TASK..).zip(bodies) {
                *body = ctx.body(&k, i);
                left |= list.left_near(&image, i, body.position);
            }
            left
        })
        .reduce(|| false, |a, b| a | b);
    let bodies = &bodies[..];

    // Pass 1: each near pair (the pairs that may interact, see `NeighborList`) once, into its own slot.
    neighbors.prepare(
        ctx.domain,
        k.position,
        &ctx.particles.radius,
        ctx.model.interaction_range(),
        some_left,
    );
    let near = &neighbors.near;
    let (first, second) = (&neighbors.first, &neighbors.second);
    if *constants_of != near.build {
        near.pairs
            .par_iter()
            .map(|&pair| {
                let (i, j) = (
                    first[pair as usize] as usize,
                    second[pair as usize] as usize,
                );
                ForceContext::pair_constants(&bodies[i], &bodies[j])
            })
            .collect_into_vec(pair_constants);
        *constants_of = near.build;
    }
    pair_loads.resize(near.pairs.len(), PairLoad::default());
    near_tasks(&near.pairs, &mut neighbors.state)
        .into_par_iter()
        .zip(pair_loads.par_chunks_mut(PAIRS_PER_TASK))
        .zip(pair_constants.par_chunks(PAIRS_PER_TASK))
        .for_each(|((task, slots), constants)| {
            for ((&pair, slot), c) in task.pairs.iter().zip(slots).zip(constants) {
                let pair = pair as usize;
                let (i, j) = (first[pair] as usize, second[pair] as usize);
                let state = &mut task.states[pair - task.first_pair];
                *slot = ctx
                    .pair(&image, &bodies[i], &bodies[j], c, state, update)
                    .map_or(PairLoad::default(), PairLoad::from);
            }
        });

    // Pass 2: per particle, its near pairs with partners p < i (in ascending order of p), then those with
    // partners q > i (in ascending order of q), the walls and gravity.
    let slots = &pair_loads[..];
    loads.force.resize(n, Vec3::ZERO);
    loads.torque.resize(n, Vec3::ZERO);
    // One slot per particle even without walls, so that the zip below always lines up.
    debug_assert_eq!(wall_states.len(), n * wall_count.max(1));
    let wall_slots = wall_count.max(1);
    loads
        .force
        .par_chunks_mut(PARTICLES_PER_TASK)
        .zip(loads.torque.par_chunks_mut(PARTICLES_PER_TASK))
        .zip(wall_states.par_chunks_mut(PARTICLES_PER_TASK * wall_slots))
        .enumerate()
        .for_each(|(chunk, ((forces, torques), chunk_wall_states))| {
            let particles = chunk * PARTICLES_PER_TASK..;
            let per_particle = forces
                .iter_mut()
                .zip(torques)
                .zip(chunk_wall_states.chunks_mut(wall_slots));
            for (i, ((force, torque), my_wall_states)) in particles.zip(per_particle) {
                let mut f = Vec3::ZERO;
                let mut t = Vec3::ZERO;
                if !bodies[i].fixed {
                    for &slot in &near.incoming[near.incoming_start[i]..near.incoming_start[i + 1]]
                    {
                        let c = &slots[slot as usize];
                        f -= c.force_on_p;
                        t += c.torque_on_q;
                    }
                    for c in &slots[near.row_start[i]..near.row_start[i + 1]] {
                        f += c.force_on_p;
                        t += c.torque_on_p;
                    }
                    for (wall, state) in ctx.walls.iter().zip(my_wall_states.iter_mut()) {
                        if let Some(c) = ctx.wall(&bodies[i], wall, state, update) {
                            f += c.force_on_p;
                            t += c.torque_on_p;
                        }
                    }
                    f += bodies[i].mass * ctx.gravity;
                }
                *force = f;
                *torque = t;
            }
        });
}

/// Pieces of work handed to a thread: enough to amortise the scheduling, small enough to balance the load.
/// Each is a plain loop, into which the kernels are inlined.
const PAIRS_PER_TASK: usize = 1024;
const PARTICLES_PER_TASK: usize = 256;

/// A run of [`PAIRS_PER_TASK`] near pairs with the slice of the contact memories that holds them.
struct NearTask<'a> {
    pairs: &'a [u32],
    first_pair: usize,
    states: &'a mut [ContactState],
}

/// Splits the near pairs into runs of [`PAIRS_PER_TASK`], and the contact memories accordingly.
fn near_tasks<'a>(near: &'a [u32], mut states: &'a mut [ContactState]) -> Vec<NearTask<'a>> {
    let mut tasks = Vec::with_capacity(near.len().div_ceil(PAIRS_PER_TASK));
    let mut first_pair = 0;
    for pairs in near.chunks(PAIRS_PER_TASK) {
        let end = pairs[pairs.len() - 1] as usize + 1;
        let (task_states, rest) = std::mem::take(&mut states).split_at_mut(end - first_pair);
        states = rest;
        tasks.push(NearTask {
            pairs,
            first_pair,
            states: task_states,
        });
        first_pair = end;
    }
    tasks
}
