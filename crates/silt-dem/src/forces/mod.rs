//! The pair loop: contact and lubrication forces of all pairs and walls, plus gravity (seed eq. 7-8).
//!
//! Pass 0 gathers what the kernels read of each particle. Pass 1 evaluates each near pair (the pairs that
//! may interact, see [`NeighborList`]) once, in parallel, into its own slot. Pass 2 sums, per particle and
//! in ascending partner order, the pair results and the wall contacts. No floating-point sum depends on
//! the thread count, so results are bit-identical for any number of threads.
//!
//! An integrator can hand per-particle work to passes 0 and 2 ([`ParticleHooks`]), so that a time step
//! sweeps the particles twice instead of once more per update.

mod pair_lanes;

use crate::contact::{ContactForce, ContactModel, ContactState, PairProperties, Side, Update};
use crate::distributed::Halo;
use crate::domain::Domain;
use crate::geometry::{sphere_pair, sphere_wall, MinimumImage, SphereState};
use crate::neighbor::NeighborList;
use crate::particles::Particles;
use crate::wall::Wall;
use crate::Vec3;
use pair_lanes::{Kernel, LaneLaw, LanePass};
use rayon::prelude::*;
use silt_core::lanes::with_lanes;
use silt_core::simd::vectorized;

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

/// What pass 1 keeps of one pair (first member p, second q): the force on p (q receives the opposite),
/// the torque arm n x F_t and the two levers, whose products are the torques (pass 2 forms them); zero when
/// nothing acts. Eight numbers in one cache line (aligned), so that pass 2 reads each slot from one line.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(64))]
struct PairLoad {
    force_on_p: Vec3,
    arm: Vec3,
    lever_p: f64,
    lever_q: f64,
}

impl PairLoad {
    #[inline(always)]
    fn torque_on_p(&self) -> Vec3 {
        self.lever_p * self.arm
    }

    #[inline(always)]
    fn torque_on_q(&self) -> Vec3 {
        self.lever_q * self.arm
    }
}

impl From<ContactForce> for PairLoad {
    #[inline]
    fn from(c: ContactForce) -> Self {
        PairLoad {
            force_on_p: c.force_on_p,
            arm: c.arm,
            lever_p: c.lever_p,
            lever_q: c.lever_q,
        }
    }
}

/// The state at which the loads are evaluated (the actual state or a predicted one); the
/// [hooks](ParticleHooks) may update it.
pub struct Kinematics<'a> {
    pub position: &'a mut [Vec3],
    pub velocity: &'a mut [Vec3],
    pub angular_velocity: &'a mut [Vec3],
}

/// Per-particle work done within the per-particle passes of [`compute_loads`], each call for particle i
/// touching only particle i (so the results do not depend on the thread count).
pub trait ParticleHooks: Sync {
    /// What [`ParticleHooks::after_loads`] may report; [`compute_loads`] returns that of the lowest index.
    type Problem: Send;

    /// Pass 0, before particle i is gathered for the kernels: may move it (a half kick and drift).
    #[inline]
    fn before_loads(
        &self,
        _ctx: &ForceContext,
        _i: usize,
        _x: &mut Vec3,
        _u: &mut Vec3,
        _w: &mut Vec3,
    ) {
    }

    /// Pass 2, once the load on particle i (`force`, `torque`) is summed: may update it (a half kick,
    /// folding into the box) and report a problem. Pass 1 has read the state already.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn after_loads(
        &self,
        _ctx: &ForceContext,
        _i: usize,
        _force: Vec3,
        _torque: Vec3,
        _x: &mut Vec3,
        _u: &mut Vec3,
        _w: &mut Vec3,
    ) -> Option<Self::Problem> {
        None
    }
}

/// Loads only: no per-particle work besides.
pub struct NoHooks;

impl ParticleHooks for NoHooks {
    type Problem = std::convert::Infallible;
}

/// Everything fixed during one evaluation.
pub struct ForceContext<'a> {
    pub model: &'a ContactModel,
    pub domain: &'a Domain,
    pub walls: &'a [Wall],
    pub gravity: Vec3,
    pub particles: &'a Particles,
    pub densities: &'a [f64],
    /// Loads from outside the contact model (the fluid's), per particle, added to every particle's
    /// sum before the integrator's per-particle work; empty for none.
    pub external: &'a Loads,
    /// This rank's part of a split system: the ghosts take their owners' state after pass 0.
    pub halo: Option<&'a Halo>,
}

/// What the kernels read of one particle, gathered from the particle arrays once per evaluation so that a
/// pair loads each member once instead of once per array.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
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
    /// Position, velocity, angular velocity, radius, mass and density as three rows of four numbers
    /// (consecutive in memory, so that the lane kernels load them whole and transpose them).
    #[inline(always)]
    fn rows(&self) -> [[f64; 4]; 3] {
        let (x, u, w) = (self.position, self.velocity, self.angular_velocity);
        [
            [x.x, x.y, x.z, u.x],
            [u.y, u.z, w.x, w.y],
            [w.z, self.radius, self.mass, self.density],
        ]
    }

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
    /// Particle i at position x, velocity u and angular velocity w.
    #[inline]
    fn body(&self, i: usize, x: Vec3, u: Vec3, w: Vec3) -> Body {
        let p = self.particles;
        Body {
            position: x,
            velocity: u,
            angular_velocity: w,
            radius: p.radius[i],
            mass: p.mass[i],
            density: self.densities[p.material[i]],
            material: p.material[i],
            fixed: p.fixed[i],
        }
    }

    /// The contact and lubrication loads of spheres `i` and `j` of `particles` on each other, at
    /// positions `x` and velocities `u`, `w` (indexed like `particles`), with the pair's memory
    /// `state`: the kernel every step runs for each near pair (seed eq. 7-8 and 10-21), for one pair.
    /// None where they are out of reach with no memory.
    pub fn pair_contact(
        &self,
        (i, j): (usize, usize),
        (x, u, w): (&[Vec3], &[Vec3], &[Vec3]),
        state: &mut ContactState,
        update: Update,
    ) -> Option<ContactForce> {
        let p = self.body(i, x[i], u[i], w[i]);
        let q = self.body(j, x[j], u[j], w[j]);
        let constants = self.pair_constants(&p, &q);
        self.pair(
            &MinimumImage::new(self.domain),
            &p,
            &q,
            &constants,
            state,
            update,
        )
    }

    /// Effective mass and radius of the pair (p, q); a fixed sphere lends the other one its whole mass.
    #[inline]
    fn pair_constants(&self, p: &Body, q: &Body) -> PairConstants {
        PairConstants {
            friction: self
                .model
                .coefficients(p.material, q.material)
                .materials
                .mu_k,
            effective_mass: match (p.fixed, q.fixed) {
                (false, false) => p.mass * q.mass / (p.mass + q.mass),
                (true, _) => q.mass,
                (_, true) => p.mass,
            },
            effective_radius: p.radius * q.radius / (p.radius + q.radius),
        }
    }

    /// Kernel for the pair (p, q) from the pair list, with its constants `c`.
    #[inline(always)]
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
        if separation.length_squared() >= reach * reach && state.is_empty() {
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
    #[inline(always)]
    fn wall(
        &self,
        p: &Body,
        wall: &Wall,
        state: &mut ContactState,
        update: Update,
    ) -> Option<ContactForce> {
        let reach = p.radius + self.model.interaction_range();
        if wall.distance(p.position) >= reach && state.is_empty() {
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
    /// Coulomb coefficient mu_k of the two materials (read by the lane kernel).
    friction: f64,
}

/// What pass 1 reads of a near pair besides the particles and the contact memory: its members and
/// constants, in one record per near pair in their order, so that the pass streams through one array
/// instead of looking up the members in the full list (about 4 % of an evaluation).
#[derive(Clone, Copy, Debug, Default)]
struct NearPair {
    first: u32,
    second: u32,
    constants: PairConstants,
}

/// Scratch space of [`compute_loads`], kept between calls to avoid allocations.
#[derive(Clone, Debug, Default)]
pub struct LoadScratch {
    bodies: Vec<Body>,
    /// One slot per near pair.
    pair_loads: Vec<PairLoad>,
    /// The near pairs of build `near_of`.
    near_pairs: Vec<NearPair>,
    near_of: u64,
}

impl LoadScratch {
    /// Drops the near pairs' constants, so that the next evaluation recomputes them: a sphere was
    /// released (a fixed sphere lends its partner its whole mass, a free one does not).
    pub fn forget_pair_constants(&mut self) {
        self.near_of = u64::MAX;
    }
}

/// Computes contact, lubrication, gravity and external loads on all particles at state `k` (seed eq.
/// 7-8), with the per-particle work of `hooks` in passes 0 and 2; returns the problem of the lowest particle index that
/// [`ParticleHooks::after_loads`] reported, if any.
#[allow(clippy::too_many_arguments)]
pub fn compute_loads<H: ParticleHooks>(
    ctx: &ForceContext,
    k: Kinematics,
    neighbors: &mut NeighborList,
    wall_states: &mut [ContactState],
    update: Update,
    scratch: &mut LoadScratch,
    loads: &mut Loads,
    hooks: &H,
) -> Option<H::Problem> {
    let n = k.position.len();
    let wall_count = ctx.walls.len();
    let LoadScratch {
        bodies,
        pair_loads,
        near_pairs,
        near_of,
    } = scratch;
    let Kinematics {
        position,
        velocity,
        angular_velocity,
    } = k;

    // Pass 0: the hooks' updates, the particles as the kernels read them, and whether one has moved far
    // enough for the near pairs to be rebuilt.
    let image = MinimumImage::new(ctx.domain);
    bodies.resize(n, Body::default());
    let list = &*neighbors;
    let some_left = bodies
        .par_chunks_mut(PARTICLES_PER_TASK)
        .zip(position.par_chunks_mut(PARTICLES_PER_TASK))
        .zip(velocity.par_chunks_mut(PARTICLES_PER_TASK))
        .zip(angular_velocity.par_chunks_mut(PARTICLES_PER_TASK))
        .enumerate()
        .map(|(chunk, (((bodies, x), u), w))| {
            let mut left = false;
            let per_particle = bodies.iter_mut().zip(x.iter_mut().zip(u).zip(w));
            for (i, (body, ((x, u), w))) in (chunk * PARTICLES_PER_TASK..).zip(per_particle) {
                hooks.before_loads(ctx, i, x, u, w);
                *body = ctx.body(i, *x, *u, *w);
                left |= list.left_near(&image, i, body.position);
            }
            left
        })
        .reduce(|| false, |a, b| a | b);
    // A split system: the ghosts as their owners left them after pass 0 (the hooks moved the ghosts
    // from their own, incomplete loads).
    let mut some_left = some_left;
    if let Some(halo) = ctx.halo {
        halo.refresh(ctx.domain, position, velocity, angular_velocity);
        for (k, &owned) in halo.owned.iter().enumerate() {
            if !owned {
                bodies[k] = ctx.body(k, position[k], velocity[k], angular_velocity[k]);
                some_left |= list.left_near(&image, k, bodies[k].position);
            }
        }
    }
    let bodies = &bodies[..];

    // Pass 1: each near pair (the pairs that may interact, see `NeighborList`) once, into its own slot.
    neighbors.prepare(
        ctx.domain,
        position,
        &ctx.particles.radius,
        ctx.model.interaction_range(),
        some_left,
    );
    let near = &neighbors.near;
    let (first, second) = (&neighbors.first, &neighbors.second);
    if *near_of != near.build {
        near.pairs
            .par_iter()
            .map(|&pair| {
                let (i, j) = (first[pair as usize], second[pair as usize]);
                NearPair {
                    first: i,
                    second: j,
                    constants: ctx.pair_constants(&bodies[i as usize], &bodies[j as usize]),
                }
            })
            .collect_into_vec(near_pairs);
        *near_of = near.build;
    }
    pair_loads.resize(near.pairs.len(), PairLoad::default());
    let lane_law = LaneLaw::of(ctx.model);
    near_tasks(&near.pairs, &mut neighbors.state)
        .into_par_iter()
        .zip(pair_loads.par_chunks_mut(PAIRS_PER_TASK))
        .zip(near_pairs.par_chunks(PAIRS_PER_TASK))
        .for_each(|((task, slots), near_pairs)| {
            // Four pairs at a time where the law has a lane kernel, the rest one by one.
            let done = match lane_law {
                Some(law) => with_lanes(LanePass {
                    kernel: Kernel {
                        law,
                        ctx,
                        update,
                        image: &image,
                        bodies,
                    },
                    pairs: task.pairs,
                    first_pair: task.first_pair,
                    states: &mut *task.states,
                    near_pairs,
                    slots: &mut *slots,
                }),
                None => 0,
            };
            // The rest compiled for the processor's widest instructions: 2-6 % faster with AVX2.
            // (The per-particle passes got slower that way, so they stay in the baseline build.)
            vectorized(
                #[inline(always)]
                || {
                    let rest = task.pairs[done..].iter().zip(&mut slots[done..]);
                    for ((&pair, slot), p) in rest.zip(&near_pairs[done..]) {
                        let (i, j) = (p.first as usize, p.second as usize);
                        let state = &mut task.states[pair as usize - task.first_pair];
                        *slot = ctx
                            .pair(&image, &bodies[i], &bodies[j], &p.constants, state, update)
                            .map_or(PairLoad::default(), PairLoad::from);
                    }
                },
            );
        });

    // Pass 2: per particle, its near pairs with partners p < i (in ascending order of p), then those with
    // partners q > i (in ascending order of q), the walls, gravity and the external load; then the
    // hooks' updates (which see the whole load: a Verlet half kick with the fluid's force).
    // After the slot of each near pair, one that is zero (see `visit_slots`).
    pair_loads.push(PairLoad::default());
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
        .zip(position.par_chunks_mut(PARTICLES_PER_TASK))
        .zip(velocity.par_chunks_mut(PARTICLES_PER_TASK))
        .zip(angular_velocity.par_chunks_mut(PARTICLES_PER_TASK))
        .enumerate()
        .map(
            |(chunk, (((((forces, torques), chunk_wall_states), x), u), w))| {
                let mut first_problem = None;
                let particles = chunk * PARTICLES_PER_TASK..;
                let per_particle = forces
                    .iter_mut()
                    .zip(torques)
                    .zip(chunk_wall_states.chunks_mut(wall_slots))
                    .zip(x.iter_mut().zip(u).zip(w));
                for (i, (((force, torque), my_wall_states), ((x, u), w))) in
                    particles.zip(per_particle)
                {
                    let mut f = Vec3::ZERO;
                    let mut t = Vec3::ZERO;
                    // A ghost's load is its owner's to sum (the ghost is refreshed before it is read).
                    let own = ctx.halo.is_none_or(|h| h.owned[i]);
                    if !bodies[i].fixed && own {
                        let incoming = near.incoming_start[i];
                        let count = near.incoming_start[i + 1] - incoming;
                        let slot =
                            |k: usize| near.incoming.get(incoming + k).map_or(0, |&s| s as usize);
                        visit_slots(slots, count, slot, |c| {
                            f -= c.force_on_p;
                            t += c.torque_on_q();
                        });
                        let row = near.row_start[i];
                        let count = near.row_start[i + 1] - row;
                        visit_slots(
                            slots,
                            count,
                            |k| row + k,
                            |c| {
                                f += c.force_on_p;
                                t += c.torque_on_p();
                            },
                        );
                        for (wall, state) in ctx.walls.iter().zip(my_wall_states.iter_mut()) {
                            if let Some(c) = ctx.wall(&bodies[i], wall, state, update) {
                                f += c.force_on_p;
                                t += c.torque_on_p();
                            }
                        }
                        f += bodies[i].mass * ctx.gravity;
                    }
                    if let (Some(ef), Some(et)) =
                        (ctx.external.force.get(i), ctx.external.torque.get(i))
                    {
                        f += *ef;
                        t += *et;
                    }
                    *force = f;
                    *torque = t;
                    let problem = hooks.after_loads(ctx, i, f, t, x, u, w);
                    first_problem = first_problem.or(problem);
                }
                first_problem
            },
        )
        .reduce(|| None, Option::or)
}

/// Pair slots per particle and side (incoming, own row) that [`visit_slots`] visits without a branch.
const UNROLLED: usize = 4;

/// Calls `add(&slots[slot(k)])` for k in 0..count, in order. The first [`UNROLLED`] calls are made whatever
/// the count, those past it with the last slot, which is zero: that adds +0, which changes no sum that
/// starts at +0 (an IEEE sum of such terms is never -0). A loop over just `count` slots would end with a
/// mispredicted branch at most particles, as their counts vary at random.
#[inline(always)]
fn visit_slots(
    slots: &[PairLoad],
    count: usize,
    slot: impl Fn(usize) -> usize,
    mut add: impl FnMut(&PairLoad),
) {
    let zero = slots.len() - 1;
    for k in 0..UNROLLED {
        add(&slots[if k < count { slot(k) } else { zero }]);
    }
    for k in UNROLLED..count {
        add(&slots[slot(k)]);
    }
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
