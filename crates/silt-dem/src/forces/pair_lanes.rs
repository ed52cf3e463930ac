//! The pair kernel on four near pairs at once, in [lanes](silt_core::lanes), for the two standard
//! combinations of laws: the LAMMPS law (Hertz normal force + shear history) and the seed's model (ACTM +
//! spring with history, eq. 10-17), with or without lubrication.
//!
//! It is [`ContactModel::evaluate`](crate::contact::ContactModel::evaluate) with
//! [`sphere_pair`](crate::geometry::sphere_pair) and the laws written operation by operation on four lanes,
//! so each lane gives the scalar kernel's bits (tested below): the pair loop may use either. Lanes whose
//! pair needs what only the scalar kernel does (lubrication, at a positive gap within its range; the first
//! touch of an ACTM contact, which fixes its stiffness) are handed to the scalar kernel. The contact memory is read and written per lane; everything
//! between is lane-wise (one AVX2 instruction per operation on the four pairs where the processor has AVX2).

use super::{Body, ForceContext, NearPair, PairLoad};
use crate::contact::hertz::HertzCoefficients;
use crate::contact::{ContactModel, ContactState, NormalLaw, TangentialLaw, Update};
use crate::geometry::MinimumImage;
use crate::Vec3;
use silt_core::lanes::{LaneWork, Lanes, Vec3Lanes, LANES};

/// The combinations of laws that have a lane kernel.
#[derive(Clone, Copy, Debug)]
pub(super) enum LaneLaw {
    /// LAMMPS `gran/hertz/history`: [`NormalLaw::Hertz`] + [`TangentialLaw::ShearHistory`].
    HertzShear(HertzCoefficients),
    /// The seed's model: [`NormalLaw::Actm`] + [`TangentialLaw::SpringHistory`].
    ActmSpring,
}

impl LaneLaw {
    /// The lane kernel of `model`'s laws, if they have one.
    pub fn of(model: &ContactModel) -> Option<Self> {
        match (model.normal, model.tangential) {
            (NormalLaw::Hertz(h), TangentialLaw::ShearHistory) => Some(LaneLaw::HertzShear(h)),
            (NormalLaw::Actm, TangentialLaw::SpringHistory) => Some(LaneLaw::ActmSpring),
            _ => None,
        }
    }
}

/// What the kernel reads besides the pairs and their memories.
pub(super) struct Kernel<'a> {
    pub law: LaneLaw,
    pub ctx: &'a ForceContext<'a>,
    pub update: Update,
    pub image: &'a MinimumImage,
    pub bodies: &'a [Body],
}

/// Pass 1 of the pair loop over a run of near pairs, four at a time: `slots[n]` gets the loads of
/// `near_pairs[n]`, whose contact memory is `states[pairs[n] - first_pair]`. Returns how many pairs it
/// evaluated (all but the last `pairs.len() % 4`).
pub(super) struct LanePass<'a> {
    pub kernel: Kernel<'a>,
    pub pairs: &'a [u32],
    pub first_pair: usize,
    pub states: &'a mut [ContactState],
    pub near_pairs: &'a [NearPair],
    pub slots: &'a mut [PairLoad],
}

impl LaneWork for LanePass<'_> {
    type Output = usize;

    #[inline(always)]
    fn run<L: Lanes>(self, maker: L::Maker) -> usize {
        let fours = self
            .pairs
            .chunks_exact(LANES)
            .zip(self.slots.chunks_exact_mut(LANES));
        for ((four, slots), near_four) in fours.zip(self.near_pairs.chunks_exact(LANES)) {
            let memory = std::array::from_fn(|k| four[k] as usize - self.first_pair);
            let states = self
                .states
                .get_disjoint_mut(memory)
                .expect("distinct near pairs");
            let near_four = near_four.try_into().expect("four pairs");
            let loads = four_pairs::<L>(maker, &self.kernel, near_four, states);
            slots.copy_from_slice(&loads);
        }
        self.pairs.len() / LANES * LANES
    }
}

/// Loads of the four near pairs `pairs`, their contact memories `states` updated as `pass.update` asks.
#[inline(always)]
fn four_pairs<L: Lanes>(
    maker: L::Maker,
    pass: &Kernel,
    pairs: &[NearPair; LANES],
    states: [&mut ContactState; LANES],
) -> [PairLoad; LANES] {
    let (ctx, update, bodies) = (pass.ctx, pass.update, pass.bodies);
    let splat = |value: f64| L::splat(maker, value);
    let per_pair =
        |value: &dyn Fn(&NearPair) -> f64| L::from_array(maker, pairs.each_ref().map(value));
    let p: [&Body; LANES] = std::array::from_fn(|k| &bodies[pairs[k].first as usize]);
    let q: [&Body; LANES] = std::array::from_fn(|k| &bodies[pairs[k].second as usize]);
    let both_fixed = L::mask_from_array(maker, std::array::from_fn(|k| p[k].fixed & q[k].fixed));
    let (position_p, velocity_p, spin_p, radius_p) = gather::<L>(maker, p);
    let (position_q, velocity_q, spin_q, radius_q) = gather::<L>(maker, q);

    // Minimum image, as `MinimumImage::separation`: the rounding only where some lane may need it.
    let mut separation = position_q - position_p;
    if pass.image.may_wrap(maker, &separation) {
        let wrapped = std::array::from_fn(|k| pass.image.separation(p[k].position, q[k].position));
        separation = Vec3Lanes::from_vectors(maker, wrapped);
    }

    // Out of reach without memory: nothing acts and nothing changes (`ForceContext::pair`).
    let reach = radius_p + radius_q + splat(ctx.model.interaction_range());
    let distance_squared = separation.length_squared();
    let far = distance_squared.ge(reach * reach);
    let empty = L::mask_from_array(maker, states.each_ref().map(|s| s.is_empty()));
    let untouched = both_fixed | (far & empty);

    // Pair geometry (`sphere_pair`, Appendix A).
    let distance = distance_squared.sqrt();
    let normal = separation.divided_by(distance);
    let gap = distance - radius_p - radius_q;
    let lever_p = radius_p + splat(0.5) * gap;
    let lever_q = radius_q + splat(0.5) * gap;
    let relative = velocity_p - velocity_q;
    let contact_point_velocity =
        relative + lever_p * spin_p.cross(normal) + lever_q * spin_q.cross(normal);
    let normal_speed = contact_point_velocity.dot(normal);
    let tangential_velocity = contact_point_velocity - normal_speed * normal;
    // Apart: nothing acts but lubrication, and the memory of a separated contact is dropped.
    let apart = gap.gt(splat(0.0));

    let effective_mass = per_pair(&|p| p.constants.effective_mass);
    let overlap = -gap;
    let (normal_force, tangential_force, shear, sliding, first_touch) = match pass.law {
        LaneLaw::HertzShear(h) => {
            let effective_radius = per_pair(&|p| p.constants.effective_radius);
            let friction = per_pair(&|p| p.constants.friction);
            let (normal_force, tangential_force, shear, sliding) = hertz_shear::<L>(
                maker,
                &h,
                update,
                [effective_mass, effective_radius, friction],
                overlap,
                normal,
                normal_speed,
                tangential_velocity,
                states.each_ref().map(|s| s.spring),
            );
            (
                normal_force,
                tangential_force,
                shear,
                sliding,
                [false; LANES],
            )
        }
        LaneLaw::ActmSpring => {
            // The first touch of a contact fixes its stiffness: the scalar kernel records it.
            let first_touch = states.each_ref().map(|s| !s.touching);
            let coefficients = pairs.each_ref().map(|pair| {
                let (a, b) = (
                    bodies[pair.first as usize].material,
                    bodies[pair.second as usize].material,
                );
                ctx.model.coefficients(a, b)
            });
            let (normal_force, tangential_force, shear, sliding) = actm_spring::<L>(
                maker,
                update,
                [
                    L::from_array(maker, states.each_ref().map(|s| s.stiffness)),
                    L::from_array(maker, states.each_ref().map(|s| s.damping)),
                    effective_mass
                        * L::from_array(
                            maker,
                            coefficients.map(|c| c.tangential_stiffness_per_mass),
                        ),
                    effective_mass
                        * L::from_array(maker, coefficients.map(|c| c.tangential_damping_per_mass)),
                    L::from_array(maker, coefficients.map(|c| c.materials.mu_s)),
                    L::from_array(maker, coefficients.map(|c| c.materials.mu_k)),
                ],
                overlap,
                normal,
                normal_speed,
                tangential_velocity,
                states.each_ref().map(|s| (s.spring, s.sliding)),
            );
            (normal_force, tangential_force, shear, sliding, first_touch)
        }
    };

    // Torques R_cp n x F_t on both sides (seed eq. 8), formed where they are summed.
    let arm = normal.cross(tangential_force);
    let force_on_p = -normal_force * normal + tangential_force;

    let loads = scatter(maker, force_on_p, arm, lever_p, lever_q);
    let untouched = L::mask_to_array(untouched);
    let apart = L::mask_to_array(apart);
    let normal_speed = normal_speed.to_array();
    let shear = shear.to_vectors();
    let lubricated = ctx.model.lubrication.is_some();
    let mut result = [PairLoad::default(); LANES];
    for (k, state) in states.into_iter().enumerate() {
        if untouched[k] {
            continue;
        }
        if apart[k] && !lubricated {
            if update.track_contacts && !state.is_empty() {
                // Separated: the memory is dropped.
                *state = ContactState::default();
            }
            continue;
        }
        if apart[k] || first_touch[k] {
            result[k] = ctx
                .pair(pass.image, p[k], q[k], &pairs[k].constants, state, update)
                .map_or(PairLoad::default(), PairLoad::from);
            continue;
        }
        if update.track_contacts && !state.touching {
            state.touching = true;
            state.impact_speed = normal_speed[k].abs();
        }
        if update.spring_increment.is_some() {
            state.spring = shear[k];
            state.sliding = sliding[k];
        }
        result[k] = loads[k];
    }
    result
}

/// Hertz normal force sqrt(delta R_eff) (k_n delta + m_eff gamma_n g_cp.n) and the LAMMPS shear history:
/// advanced by the increment, projected on the tangent plane, capped at mu |F_n| (`hertz`,
/// `shear_history_force`). `pair` holds m_eff, R_eff and mu. Returns F_n, F_t, the new history and which
/// lanes slide.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn hertz_shear<L: Lanes>(
    maker: L::Maker,
    h: &HertzCoefficients,
    update: Update,
    [effective_mass, effective_radius, friction]: [L; 3],
    overlap: L,
    normal: Vec3Lanes<L>,
    normal_speed: L,
    tangential_velocity: Vec3Lanes<L>,
    stored: [Vec3; LANES],
) -> (L, Vec3Lanes<L>, Vec3Lanes<L>, [bool; LANES]) {
    let splat = |value: f64| L::splat(maker, value);
    let area_factor = (overlap * effective_radius).sqrt();
    let normal_force =
        area_factor * (splat(h.k_n) * overlap + effective_mass * splat(h.gamma_n) * normal_speed);
    let mut shear = Vec3Lanes::from_vectors(maker, stored);
    if let Some(increment) = update.spring_increment {
        shear = shear + splat(increment) * tangential_velocity;
    }
    shear = shear - shear.dot(normal) * normal;
    let damping = effective_mass * splat(h.gamma_t) * tangential_velocity;
    let k_t = splat(h.k_t);
    let mut tangential_force = -area_factor * (k_t * shear + damping);
    let limit = friction * normal_force.abs();
    let magnitude_squared = tangential_force.length_squared();
    let near_limit = magnitude_squared.ge(limit * limit * splat(1.0 - 1e-12));
    let mut sliding = [false; LANES];
    if L::any(near_limit) {
        let magnitude = magnitude_squared.sqrt();
        let slides = near_limit & magnitude.gt(limit);
        let zero = splat(0.0);
        let ratio = L::select(magnitude.gt(zero), limit / magnitude, zero);
        let damping_over_k = damping.divided_by(k_t);
        let capped_shear = ratio * (shear + damping_over_k) - damping_over_k;
        shear = Vec3Lanes::select(slides, capped_shear, shear);
        tangential_force = Vec3Lanes::select(slides, ratio * tangential_force, tangential_force);
        sliding = L::mask_to_array(slides);
    }
    (normal_force, tangential_force, shear, sliding)
}

/// ACTM normal force k_n |zeta_n|^(3/2) + d_n g_cp.n with the contact's stored k_n, d_n (eq. 10), and the
/// seed's tangential spring (eq. 12-17, Appendix C): rotated onto the tangent plane keeping its length,
/// advanced by the increment, Coulomb-limited with static/kinetic switching, reset to the Coulomb force
/// while sliding (`actm::normal_force_magnitude`, `spring_history_force`). `coefficients` holds k_n, d_n,
/// k_t, d_t, mu_s and mu_k; `stored` the springs and sliding flags. Returns F_n, F_t, the new springs
/// and which lanes slide.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn actm_spring<L: Lanes>(
    maker: L::Maker,
    update: Update,
    [stiffness, damping, k_t, d_t, mu_static, mu_kinetic]: [L; 6],
    overlap: L,
    normal: Vec3Lanes<L>,
    normal_speed: L,
    tangential_velocity: Vec3Lanes<L>,
    stored: [(Vec3, bool); LANES],
) -> (L, Vec3Lanes<L>, Vec3Lanes<L>, [bool; LANES]) {
    let splat = |value: f64| L::splat(maker, value);
    let normal_force = stiffness * overlap * overlap.sqrt() + damping * normal_speed;

    let spring = Vec3Lanes::from_vectors(maker, stored.map(|(spring, _)| spring));
    let was_sliding = L::mask_from_array(maker, stored.map(|(_, sliding)| sliding));
    let projected = spring - spring.dot(normal) * normal;
    let length = projected.length_squared().sqrt();
    let zero = splat(0.0);
    let kept = (spring.length_squared().sqrt() / length) * projected;
    let mut spring = Vec3Lanes::select(length.gt(zero), kept, projected);
    if let Some(increment) = update.spring_increment {
        spring = spring + splat(increment) * tangential_velocity;
    }
    let trial = -k_t * spring - d_t * tangential_velocity;
    let trial_magnitude = trial.length_squared().sqrt();
    let limit_static = mu_static * normal_force.abs();
    let limit_kinetic = mu_kinetic * normal_force.abs();
    let sliding = (was_sliding & trial_magnitude.ge(limit_kinetic))
        | (!was_sliding & trial_magnitude.gt(limit_static));
    let capped = sliding & trial_magnitude.gt(zero);
    let mut tangential_force = trial;
    if L::any(capped) {
        let force = limit_kinetic * trial.divided_by(trial_magnitude);
        let reset = (-(force + d_t * tangential_velocity)).divided_by(k_t);
        spring = Vec3Lanes::select(capped, reset, spring);
        tangential_force = Vec3Lanes::select(capped, force, trial);
    }
    (
        normal_force,
        tangential_force,
        spring,
        L::mask_to_array(sliding),
    )
}

/// Position, velocity, angular velocity and radius of four bodies, by lane: each body's first twelve
/// numbers are loaded as three rows of four and transposed.
#[inline(always)]
fn gather<L: Lanes>(
    maker: L::Maker,
    bodies: [&Body; LANES],
) -> (Vec3Lanes<L>, Vec3Lanes<L>, Vec3Lanes<L>, L) {
    let rows = bodies.map(Body::rows);
    let [x, y, z, u] = L::transpose(maker, rows.map(|r| r[0]));
    let [v, w, a, b] = L::transpose(maker, rows.map(|r| r[1]));
    let [c, radius, _, _] = L::transpose(maker, rows.map(|r| r[2]));
    (
        Vec3Lanes { x, y, z },
        Vec3Lanes { x: u, y: v, z: w },
        Vec3Lanes { x: a, y: b, z: c },
        radius,
    )
}

/// The loads of the four lanes: their eight numbers transposed back to one row per pair.
#[inline(always)]
fn scatter<L: Lanes>(
    maker: L::Maker,
    force_on_p: Vec3Lanes<L>,
    arm: Vec3Lanes<L>,
    lever_p: L,
    lever_q: L,
) -> [PairLoad; LANES] {
    let first = L::rows([force_on_p.x, force_on_p.y, force_on_p.z, arm.x], maker);
    let second = L::rows([arm.y, arm.z, lever_p, lever_q], maker);
    std::array::from_fn(|k| {
        let ([a, b, c, d], [e, f, g, h]) = (first[k], second[k]);
        PairLoad {
            force_on_p: Vec3::new(a, b, c),
            arm: Vec3::new(d, e, f),
            lever_p: g,
            lever_q: h,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::lubrication::Lubrication;
    use crate::contact::{ContactModel, EnduringContact, NormalLaw, TangentialLaw};
    use crate::domain::Domain;
    use crate::forces::{ForceContext, PairConstants};
    use crate::material::Material;
    use crate::particles::Particles;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use silt_core::lanes::with_lanes;

    const HERTZ: HertzCoefficients = HertzCoefficients {
        k_n: 2e5,
        k_t: 2e5 * 2.0 / 7.0,
        gamma_n: 50.0,
        gamma_t: 25.0,
    };

    fn materials() -> Vec<Material> {
        let material = |mu: f64| Material {
            name: format!("mu {mu}"),
            density: 1.0,
            e_dry: 0.9,
            poisson: 0.3,
            mu_s: 1.4 * mu,
            mu_k: mu,
        };
        vec![material(0.5), material(0.1)]
    }

    /// Random pairs of spheres, a tenth of them across the periodic seam, about half overlapping, some
    /// fixed, with random contact memories (some empty, some touching, some pushed past the Coulomb limit);
    /// `packed`: all overlapping, all touching before (a settled bed).
    fn random_pairs(
        count: usize,
        seed: u64,
        packed: bool,
    ) -> (Vec<Body>, Vec<NearPair>, Vec<ContactState>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut bodies = Vec::new();
        let mut pairs = Vec::new();
        let mut states = Vec::new();
        let vector = |rng: &mut ChaCha8Rng, scale: f64| {
            scale
                * Vec3::new(
                    rng.gen_range(-1.0..1.0),
                    rng.gen_range(-1.0..1.0),
                    rng.gen_range(-1.0..1.0),
                )
        };
        for _ in 0..count {
            let radius = [rng.gen_range(0.4..0.5), rng.gen_range(0.4..0.5)];
            let first = Vec3::new(
                rng.gen_range(0.0..10.0),
                rng.gen_range(0.0..10.0),
                rng.gen_range(0.0..10.0),
            );
            let direction = vector(&mut rng, 1.0).normalize();
            let widest = if packed { 0.999 } else { 1.03 };
            let distance = (radius[0] + radius[1]) * rng.gen_range(0.96..widest);
            let mut first = first;
            if rng.gen_bool(0.2) {
                // Close to the seam along x, where the partner may sit across it.
                first.x = rng.gen_range(-1.0..1.0_f64).rem_euclid(10.0);
            }
            let mut second = first + distance * direction;
            second.x = second.x.rem_euclid(10.0);
            second.y = second.y.rem_euclid(10.0);
            for (k, position) in [first, second].into_iter().enumerate() {
                let material = rng.gen_range(0..2);
                bodies.push(Body {
                    position,
                    velocity: vector(&mut rng, 1.0),
                    angular_velocity: vector(&mut rng, 2.0),
                    radius: radius[k],
                    mass: 4.0 / 3.0 * std::f64::consts::PI * radius[k].powi(3),
                    density: 1.0,
                    material,
                    fixed: rng.gen_bool(0.05),
                });
            }
            let (p, q) = (&bodies[bodies.len() - 2], &bodies[bodies.len() - 1]);
            let mut constants = PairConstants {
                effective_mass: p.mass * q.mass / (p.mass + q.mass),
                effective_radius: p.radius * q.radius / (p.radius + q.radius),
                friction: 0.0,
            };
            constants.friction = if p.material == q.material {
                [0.5, 0.1][p.material]
            } else {
                0.3
            };
            pairs.push(NearPair {
                first: bodies.len() as u32 - 2,
                second: bodies.len() as u32 - 1,
                constants,
            });
            let kind = if packed {
                [1, 3][rng.gen_range(0..2)]
            } else {
                rng.gen_range(0..4)
            };
            let state = match kind {
                0 => ContactState::default(),
                1 => ContactState {
                    touching: true,
                    impact_speed: 0.3,
                    stiffness: rng.gen_range(1e6..1e8),
                    damping: rng.gen_range(1.0..100.0),
                    spring: vector(&mut rng, 1e-3),
                    ..ContactState::default()
                },
                2 => ContactState {
                    spring: vector(&mut rng, 1e-4),
                    ..ContactState::default()
                },
                _ => ContactState {
                    touching: true,
                    impact_speed: 1.0,
                    stiffness: rng.gen_range(1e6..1e8),
                    damping: rng.gen_range(1.0..100.0),
                    spring: vector(&mut rng, 0.1),
                    sliding: rng.gen_bool(0.5),
                },
            };
            states.push(state);
        }
        (bodies, pairs, states)
    }

    /// The LAMMPS law or the seed's model, with or without lubrication.
    fn model(seed_model: bool, lubrication: bool) -> ContactModel {
        let (normal, tangential) = if seed_model {
            (NormalLaw::Actm, TangentialLaw::SpringHistory)
        } else {
            (NormalLaw::Hertz(HERTZ), TangentialLaw::ShearHistory)
        };
        let lubrication = lubrication.then_some(Lubrication {
            fluid_density: 1.0,
            kinematic_viscosity: 0.01,
            range: 0.05,
            roughness_ratio: 3e-3,
        });
        ContactModel::new(
            normal,
            tangential,
            &materials(),
            1e-3,
            EnduringContact::MinimumSpeed(0.01),
            1e-3,
            10.0,
            lubrication,
        )
    }

    fn domain() -> Domain {
        Domain {
            min: Vec3::ZERO,
            max: Vec3::splat(10.0),
            periodic: [true, true, false],
        }
    }

    /// Runs `work` with a force context of `model` in the test box.
    fn in_context<R>(
        model: &ContactModel,
        work: impl FnOnce(&ForceContext, &MinimumImage) -> R,
    ) -> R {
        let domain = domain();
        let particles = Particles::default();
        let ctx = ForceContext {
            model,
            domain: &domain,
            walls: &[],
            gravity: Vec3::ZERO,
            particles: &particles,
            densities: &[1.0, 1.0],
            external: &crate::forces::Loads::default(),
            halo: None,
        };
        work(&ctx, &MinimumImage::new(&domain))
    }

    /// The scalar kernel on every pair: loads and updated memories.
    fn scalar(
        model: &ContactModel,
        bodies: &[Body],
        pairs: &[NearPair],
        states: &mut [ContactState],
        update: Update,
    ) -> Vec<PairLoad> {
        in_context(model, |ctx, image| {
            let per_pair = pairs.iter().zip(states);
            per_pair
                .map(|(pair, state)| {
                    let (p, q) = (&bodies[pair.first as usize], &bodies[pair.second as usize]);
                    ctx.pair(image, p, q, &pair.constants, state, update)
                        .map_or(PairLoad::default(), PairLoad::from)
                })
                .collect()
        })
    }

    /// The lane kernel (the best backend of this processor) on every run of four pairs.
    fn lanes(
        model: &ContactModel,
        bodies: &[Body],
        pairs: &[NearPair],
        states: &mut [ContactState],
        update: Update,
    ) -> Vec<PairLoad> {
        in_context(model, |ctx, image| {
            let mut loads = vec![PairLoad::default(); pairs.len()];
            let indices: Vec<u32> = (0..pairs.len() as u32).collect();
            let kernel = Kernel {
                law: LaneLaw::of(model).expect("a law with a lane kernel"),
                ctx,
                update,
                image,
                bodies,
            };
            let done = with_lanes(LanePass {
                kernel,
                pairs: &indices,
                first_pair: 0,
                states,
                near_pairs: pairs,
                slots: &mut loads,
            });
            assert_eq!(done, pairs.len() / LANES * LANES);
            loads
        })
    }

    fn bits(v: Vec3) -> [u64; 3] {
        v.to_array().map(f64::to_bits)
    }

    /// Both kernels on the same pairs, memories and update: loads and memories must agree bit for bit.
    fn compare(model: &ContactModel, seed: u64) {
        let (bodies, pairs, states) = random_pairs(4000, seed, false);
        let updates = [
            Update {
                track_contacts: true,
                spring_increment: Some(2e-4),
                substep: 2e-4,
            },
            Update {
                track_contacts: false,
                spring_increment: Some(1e-4),
                substep: 1e-4,
            },
            Update {
                track_contacts: true,
                spring_increment: None,
                substep: 2e-4,
            },
        ];
        for update in updates {
            let mut scalar_states = states.clone();
            let mut lane_states = states.clone();
            let expected = scalar(model, &bodies, &pairs, &mut scalar_states, update);
            let got = lanes(model, &bodies, &pairs, &mut lane_states, update);
            let mut acting = 0;
            for k in 0..pairs.len() {
                let (e, g) = (expected[k], got[k]);
                assert_eq!(
                    [
                        bits(e.force_on_p),
                        bits(e.torque_on_p()),
                        bits(e.torque_on_q())
                    ],
                    [
                        bits(g.force_on_p),
                        bits(g.torque_on_p()),
                        bits(g.torque_on_q())
                    ],
                    "pair {k}, {update:?}"
                );
                let (e, g) = (scalar_states[k], lane_states[k]);
                assert_eq!(e.touching, g.touching, "pair {k}");
                assert_eq!(e.sliding, g.sliding, "pair {k}");
                assert_eq!(
                    e.impact_speed.to_bits(),
                    g.impact_speed.to_bits(),
                    "pair {k}"
                );
                assert_eq!(e.stiffness.to_bits(), g.stiffness.to_bits(), "pair {k}");
                assert_eq!(bits(e.spring), bits(g.spring), "pair {k}");
                acting += (expected[k] != PairLoad::default()) as usize;
            }
            // The sample covers contacts, separations (some in the lubrication range), sticking and sliding.
            let most = if model.lubrication.is_some() {
                4000
            } else {
                3000
            };
            assert!(acting > 1500 && acting < most, "{acting} acting pairs");
            let sliding = lane_states.iter().filter(|s| s.sliding).count();
            assert!(sliding > 100 && sliding < 3000, "{sliding} sliding");
            assert!(lane_states.iter().filter(|s| s.is_empty()).count() > 100);
        }
    }

    #[test]
    fn four_lanes_give_the_scalar_kernel_bit_for_bit() {
        compare(&model(false, false), 7);
    }

    #[test]
    fn four_lanes_give_the_scalar_seed_model_bit_for_bit() {
        compare(&model(true, false), 8);
    }

    #[test]
    fn four_lanes_give_the_scalar_kernel_with_lubrication_bit_for_bit() {
        compare(&model(false, true), 9);
        compare(&model(true, true), 10);
    }

    #[test]
    #[ignore = "timing, run with --release --ignored --nocapture"]
    fn time_lanes_against_scalar() {
        // Packed: every pair touches and has touched before, as in a settled bed.
        let (bodies, pairs, states) = random_pairs(40_000, 11, true);
        let update = Update {
            track_contacts: true,
            spring_increment: Some(2e-4),
            substep: 2e-4,
        };
        for (name, model) in [
            ("LAMMPS law", model(false, false)),
            ("seed model", model(true, false)),
        ] {
            for kind in ["scalar", "lanes"] {
                let mut best = f64::INFINITY;
                for _ in 0..20 {
                    let mut s = states.clone();
                    let clock = std::time::Instant::now();
                    let loads = silt_core::simd::vectorized(
                        #[inline(always)]
                        || match kind {
                            "scalar" => scalar(&model, &bodies, &pairs, &mut s, update),
                            _ => lanes(&model, &bodies, &pairs, &mut s, update),
                        },
                    );
                    best = best.min(clock.elapsed().as_secs_f64());
                    std::hint::black_box(loads);
                }
                println!(
                    "{name}, {kind}: {:.1} ns per pair",
                    1e9 * best / pairs.len() as f64
                );
            }
        }
    }
}
