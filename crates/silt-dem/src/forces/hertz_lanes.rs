//! The pair kernel of the LAMMPS law (Hertz normal force + shear history, no lubrication) on four near
//! pairs at once, in [lanes](silt_core::lanes).
//!
//! It is [`ContactModel::evaluate`](crate::contact::ContactModel::evaluate) with
//! [`sphere_pair`](crate::geometry::sphere_pair),
//! [`normal_force_magnitude`](crate::contact::hertz::normal_force_magnitude) and
//! [`shear_history_force`](crate::contact::tangential::shear_history_force) written operation by operation
//! on four lanes, so each lane gives the scalar kernel's bits (tested below): the pair loop may use either.
//! The contact memory is read and written per lane; everything between is lane-wise (one AVX2
//! instruction per operation on the four pairs where the processor has AVX2).

use super::{Body, NearPair, PairLoad};
use crate::contact::hertz::HertzCoefficients;
use crate::contact::{ContactState, Update};
use crate::geometry::MinimumImage;
use crate::Vec3;
use silt_core::lanes::{LaneWork, Lanes, Vec3Lanes, LANES};

/// Coefficients of the law for one evaluation.
#[derive(Clone, Copy, Debug)]
pub(super) struct HertzShearLaw {
    pub hertz: HertzCoefficients,
    pub update: Update,
}

/// Pass 1 of the pair loop over a run of near pairs, four at a time: `slots[n]` gets the loads of
/// `near_pairs[n]`, whose contact memory is `states[pairs[n] - first_pair]`. Returns how many pairs it
/// evaluated (all but the last `pairs.len() % 4`).
pub(super) struct LanePass<'a> {
    pub law: &'a HertzShearLaw,
    pub image: &'a MinimumImage,
    pub bodies: &'a [Body],
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
            let loads =
                four_pairs::<L>(maker, self.law, self.image, self.bodies, near_four, states);
            slots.copy_from_slice(&loads);
        }
        self.pairs.len() / LANES * LANES
    }
}

/// Loads of the four near pairs `pairs` (members in `bodies`), their contact memories `states` updated
/// as the law's `update` asks.
#[inline(always)]
pub(super) fn four_pairs<L: Lanes>(
    maker: L::Maker,
    law: &HertzShearLaw,
    image: &MinimumImage,
    bodies: &[Body],
    pairs: &[NearPair; LANES],
    states: [&mut ContactState; LANES],
) -> [PairLoad; LANES] {
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
    if image.may_wrap(maker, &separation) {
        let wrapped = std::array::from_fn(|k| image.separation(p[k].position, q[k].position));
        separation = Vec3Lanes::from_vectors(maker, wrapped);
    }

    // Out of reach without memory: nothing acts and nothing changes (`ForceContext::pair`).
    let reach = radius_p + radius_q;
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
    // `!(gap > 0)` rather than `gap <= 0`, so that a NaN gap is a contact, as in the scalar kernel.
    let contact = !untouched & !gap.gt(splat(0.0));

    // Hertz normal force sqrt(delta R_eff) (k_n delta + m_eff gamma_n g_cp.n).
    let h = &law.hertz;
    let effective_mass = per_pair(&|p| p.constants.effective_mass);
    let effective_radius = per_pair(&|p| p.constants.effective_radius);
    let overlap = -gap;
    let area_factor = (overlap * effective_radius).sqrt();
    let normal_force =
        area_factor * (splat(h.k_n) * overlap + effective_mass * splat(h.gamma_n) * normal_speed);

    // Shear history: advanced by the increment, projected on the tangent plane, capped at mu |F_n|.
    let mut shear = Vec3Lanes::from_vectors(maker, states.each_ref().map(|s| s.spring));
    if let Some(increment) = law.update.spring_increment {
        shear = shear + splat(increment) * tangential_velocity;
    }
    shear = shear - shear.dot(normal) * normal;
    let damping = effective_mass * splat(h.gamma_t) * tangential_velocity;
    let k_t = splat(h.k_t);
    let mut tangential_force = -area_factor * (k_t * shear + damping);
    let limit = per_pair(&|p| p.constants.friction) * normal_force.abs();
    let magnitude_squared = tangential_force.length_squared();
    let near_limit = contact & magnitude_squared.ge(limit * limit * splat(1.0 - 1e-12));
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

    // Torques R_cp n x F_t on both sides (seed eq. 8), formed where they are summed.
    let arm = normal.cross(tangential_force);
    let force_on_p = -normal_force * normal + tangential_force;

    let update = law.update;
    let loads = scatter(maker, force_on_p, arm, lever_p, lever_q);
    let contact = L::mask_to_array(contact);
    let untouched = L::mask_to_array(untouched);
    let normal_speed = normal_speed.to_array();
    let shear = shear.to_vectors();
    let mut result = [PairLoad::default(); LANES];
    for (k, state) in states.into_iter().enumerate() {
        if contact[k] {
            if update.track_contacts && !state.touching {
                state.touching = true;
                state.impact_speed = normal_speed[k].abs();
            }
            if update.spring_increment.is_some() {
                state.spring = shear[k];
                state.sliding = sliding[k];
            }
            result[k] = loads[k];
        } else if !untouched[k] && update.track_contacts && !state.is_empty() {
            // Separated: the memory is dropped.
            *state = ContactState::default();
        }
    }
    result
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
            mu_s: mu,
            mu_k: mu,
        };
        vec![material(0.5), material(0.1)]
    }

    /// Random pairs of spheres, a tenth of them across the periodic seam, about half overlapping, some
    /// fixed, with random contact memories (some empty, some touching, some pushed past the Coulomb limit).
    fn random_pairs(count: usize, seed: u64) -> (Vec<Body>, Vec<NearPair>, Vec<ContactState>) {
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
            let distance = (radius[0] + radius[1]) * rng.gen_range(0.96..1.03);
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
            let state = match rng.gen_range(0..4) {
                0 => ContactState::default(),
                1 => ContactState {
                    touching: true,
                    impact_speed: 0.3,
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
                    spring: vector(&mut rng, 0.1),
                    sliding: true,
                    ..ContactState::default()
                },
            };
            states.push(state);
        }
        (bodies, pairs, states)
    }

    fn model() -> ContactModel {
        ContactModel::new(
            NormalLaw::Hertz(HERTZ),
            TangentialLaw::ShearHistory,
            &materials(),
            1e-3,
            EnduringContact::MinimumSpeed(0.01),
            1e-3,
            10.0,
            None,
        )
    }

    fn domain() -> Domain {
        Domain {
            min: Vec3::ZERO,
            max: Vec3::splat(10.0),
            periodic: [true, true, false],
        }
    }

    /// The scalar kernel on every pair: loads and updated memories.
    fn scalar(
        model: &ContactModel,
        bodies: &[Body],
        pairs: &[NearPair],
        states: &mut [ContactState],
        update: Update,
    ) -> Vec<PairLoad> {
        let domain = domain();
        let particles = Particles::default();
        let ctx = ForceContext {
            model,
            domain: &domain,
            walls: &[],
            gravity: Vec3::ZERO,
            particles: &particles,
            densities: &[1.0, 1.0],
        };
        let image = MinimumImage::new(&domain);
        pairs
            .iter()
            .zip(states)
            .map(|(pair, state)| {
                let (p, q) = (&bodies[pair.first as usize], &bodies[pair.second as usize]);
                ctx.pair(&image, p, q, &pair.constants, state, update)
                    .map_or(PairLoad::default(), PairLoad::from)
            })
            .collect()
    }

    /// The lane kernel (the best backend of this processor) on every run of four pairs.
    fn lanes(
        bodies: &[Body],
        pairs: &[NearPair],
        states: &mut [ContactState],
        update: Update,
    ) -> Vec<PairLoad> {
        let law = HertzShearLaw {
            hertz: HERTZ,
            update,
        };
        let image = MinimumImage::new(&domain());
        let mut loads = vec![PairLoad::default(); pairs.len()];
        let indices: Vec<u32> = (0..pairs.len() as u32).collect();
        let done = with_lanes(LanePass {
            law: &law,
            image: &image,
            bodies,
            pairs: &indices,
            first_pair: 0,
            states,
            near_pairs: pairs,
            slots: &mut loads,
        });
        assert_eq!(done, pairs.len() / LANES * LANES);
        loads
    }

    fn bits(v: Vec3) -> [u64; 3] {
        v.to_array().map(f64::to_bits)
    }

    #[test]
    fn four_lanes_give_the_scalar_kernel_bit_for_bit() {
        let model = model();
        let (bodies, pairs, states) = random_pairs(4000, 7);
        let updates = [
            Update {
                track_contacts: true,
                spring_increment: Some(2e-4),
            },
            Update {
                track_contacts: false,
                spring_increment: Some(1e-4),
            },
            Update {
                track_contacts: true,
                spring_increment: None,
            },
        ];
        for update in updates {
            let mut scalar_states = states.clone();
            let mut lane_states = states.clone();
            let expected = scalar(&model, &bodies, &pairs, &mut scalar_states, update);
            let got = lanes(&bodies, &pairs, &mut lane_states, update);
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
                assert_eq!(bits(e.spring), bits(g.spring), "pair {k}");
                acting += (expected[k] != PairLoad::default()) as usize;
            }
            // The sample covers contacts, separations and sliding.
            assert!(acting > 1000 && acting < 3000, "{acting} acting pairs");
            assert!(lane_states.iter().filter(|s| s.sliding).count() > 100);
            assert!(lane_states.iter().filter(|s| s.is_empty()).count() > 100);
        }
    }

    #[test]
    #[ignore = "timing, run with --release --ignored --nocapture"]
    fn time_lanes_against_scalar() {
        let model = model();
        let (bodies, pairs, states) = random_pairs(40_000, 11);
        let update = Update {
            track_contacts: true,
            spring_increment: Some(2e-4),
        };
        for round in 0..3 {
            for kind in ["scalar", "lanes"] {
                let mut best = f64::INFINITY;
                for _ in 0..20 {
                    let mut s = states.clone();
                    let clock = std::time::Instant::now();
                    let loads = silt_core::simd::vectorized(
                        #[inline(always)]
                        || match kind {
                            "scalar" => scalar(&model, &bodies, &pairs, &mut s, update),
                            _ => lanes(&bodies, &pairs, &mut s, update),
                        },
                    );
                    best = best.min(clock.elapsed().as_secs_f64());
                    std::hint::black_box(loads);
                }
                println!(
                    "round {round} {kind}: {:.1} ns per pair",
                    1e9 * best / pairs.len() as f64
                );
            }
        }
    }
}
