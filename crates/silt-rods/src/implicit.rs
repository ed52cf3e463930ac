//! The rod as a stiff first-order system for Radau IIA ([`crate::radau`]): the state vector, the
//! right-hand side of [`crate::dynamics`], and its analytic banded Jacobian.
//!
//! The unknowns are interleaved block by block, `(φ_j, v_j, p_j, Ω_j)` for j = 0..N-1 and then
//! `(φ_N, v_N)`: 13 N + 6 values, and every coupling is between neighbouring blocks, so the Jacobian
//! is banded (at most 20 sub- and 16 super-diagonals) and a Radau step costs O(N).
//!
//! Jacobian (on top of [`crate::jacobian`], the undamped elastic system):
//! - drag: `∂v'/∂v = -ν I`, `∂Ω'/∂Ω = -ν I`;
//! - inner damping, its dependence on the rates, exact: the viscous forces are `-G ẏ` with
//!   `G = Bᵀ diag(h C_Gᵛ, h̄ C_Kᵛ) B` ([`crate::hessian::strain_gram`]), `ẏ = (v, ½ p Ω)`. Their
//!   dependence on the configuration at fixed rates is left out: it is proportional to the strain
//!   rates, vanishes at rest, and only slows the simplified Newton iteration, not the accuracy
//!   (the iteration matrix of Radau IIA is an approximation by design);
//! - loads: follower forces and dead torques through [`crate::loads::Loads::derivatives`];
//! - held nodes: the rows and columns of their `φ` and `v` are zero (their motion is prescribed, at
//!   constant velocity, whatever the state holds).

use std::collections::BTreeMap;

use silt_core::Vec3;

use crate::band::BandMatrix;
use crate::dynamics::{accelerations, RodModel, RodMotion};
use crate::hessian::{strain_gram, unknowns};
use crate::jacobian::jacobian;
use crate::quaternion::{conj, mul, normalized, pure, Quat};
use crate::radau::{Radau5, RadauError, RadauOptions, RadauStats, StiffSystem};
use crate::rod::Rod;

/// Values per interior block.
const BLOCK: usize = 13;

/// Index of node j's position in the state.
pub fn position_slot(j: usize) -> usize {
    BLOCK * j
}

/// Index of node j's velocity.
pub fn velocity_slot(j: usize) -> usize {
    BLOCK * j + 3
}

/// Index of segment s's quaternion.
pub fn quaternion_slot(s: usize) -> usize {
    BLOCK * s + 6
}

/// Index of segment s's body angular velocity.
pub fn angular_slot(s: usize) -> usize {
    BLOCK * s + 10
}

/// Length of the state, 13 N + 6.
pub fn state_size(rod: &Rod) -> usize {
    BLOCK * rod.segments() + 6
}

const LOWER: usize = 20;
const UPPER: usize = 16;

/// The state vector of `rod` moving with `motion`.
pub fn pack(rod: &Rod, motion: &RodMotion) -> Vec<f64> {
    let mut y = vec![0.0; state_size(rod)];
    for (j, (x, v)) in rod.nodes.iter().zip(&motion.velocities).enumerate() {
        y[position_slot(j)..position_slot(j) + 3].copy_from_slice(&x.to_array());
        y[velocity_slot(j)..velocity_slot(j) + 3].copy_from_slice(&v.to_array());
    }
    for (s, (p, w)) in rod
        .orientations
        .iter()
        .zip(&motion.angular_velocities)
        .enumerate()
    {
        y[quaternion_slot(s)..quaternion_slot(s) + 4].copy_from_slice(p);
        y[angular_slot(s)..angular_slot(s) + 3].copy_from_slice(&w.to_array());
    }
    y
}

/// Reads the state vector into `rod` and `motion`.
pub fn unpack(y: &[f64], rod: &mut Rod, motion: &mut RodMotion) {
    for (j, (x, v)) in rod
        .nodes
        .iter_mut()
        .zip(motion.velocities.iter_mut())
        .enumerate()
    {
        *x = Vec3::from_slice(&y[position_slot(j)..]);
        *v = Vec3::from_slice(&y[velocity_slot(j)..]);
    }
    for (s, (p, w)) in rod
        .orientations
        .iter_mut()
        .zip(motion.angular_velocities.iter_mut())
        .enumerate()
    {
        p.copy_from_slice(&y[quaternion_slot(s)..quaternion_slot(s) + 4]);
        *w = Vec3::from_slice(&y[angular_slot(s)..]);
    }
}

/// Where an index of [`crate::jacobian`]'s ordering (`x` then `u`) sits in the state vector.
fn state_index(rod: &Rod, index: usize) -> usize {
    let nx = unknowns(rod);
    if index < nx {
        let (block, offset) = (index / 7, index % 7);
        if offset < 3 {
            position_slot(block) + offset
        } else {
            quaternion_slot(block) + offset - 3
        }
    } else {
        let (block, offset) = ((index - nx) / 6, (index - nx) % 6);
        if offset < 3 {
            velocity_slot(block) + offset
        } else {
            angular_slot(block) + offset - 3
        }
    }
}

/// The rod's equations of motion as a [`StiffSystem`].
pub struct RodSystem<'a> {
    pub model: &'a RodModel,
    rod: Rod,
    motion: RodMotion,
}

impl<'a> RodSystem<'a> {
    /// `rod` gives the reference state (lengths, stiffness, rest curvature, clamps).
    pub fn new(rod: &Rod, model: &'a RodModel) -> Self {
        RodSystem {
            model,
            rod: rod.clone(),
            motion: RodMotion::rest(rod),
        }
    }

    /// The configuration and motion in `y` at time t (supports applied).
    pub fn read(&mut self, t: f64, y: &[f64]) -> (&Rod, &RodMotion) {
        unpack(y, &mut self.rod, &mut self.motion);
        self.model
            .apply_boundaries(&mut self.rod, &mut self.motion, t);
        (&self.rod, &self.motion)
    }
}

impl StiffSystem for RodSystem<'_> {
    fn dimension(&self) -> usize {
        state_size(&self.rod)
    }

    fn bandwidths(&self) -> (usize, usize) {
        (LOWER, UPPER)
    }

    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
        self.read(t, y);
        let (rod, motion) = (&self.rod, &self.motion);
        let (a, alpha) = accelerations(rod, motion, self.model);
        for (j, (v, a)) in motion.velocities.iter().zip(&a).enumerate() {
            dy[position_slot(j)..position_slot(j) + 3].copy_from_slice(&v.to_array());
            dy[velocity_slot(j)..velocity_slot(j) + 3].copy_from_slice(&a.to_array());
        }
        for (s, ((p, w), alpha)) in rod
            .orientations
            .iter()
            .zip(&motion.angular_velocities)
            .zip(&alpha)
            .enumerate()
        {
            let rate = mul(*p, pure(*w)).map(|c| 0.5 * c);
            dy[quaternion_slot(s)..quaternion_slot(s) + 4].copy_from_slice(&rate);
            dy[angular_slot(s)..angular_slot(s) + 3].copy_from_slice(&alpha.to_array());
        }
    }

    fn jacobian(&mut self, t: f64, y: &[f64], out: &mut BandMatrix<f64>) {
        self.read(t, y);
        let (rod, motion, model) = (&self.rod, &self.motion, self.model);
        let inertia = &model.inertia;
        let n = rod.segments();
        let held: Vec<usize> = model.held_nodes(rod);
        let held_rows: Vec<usize> = held
            .iter()
            .flat_map(|&j| (0..3).flat_map(move |a| [position_slot(j) + a, velocity_slot(j) + a]))
            .collect();
        // The state's entries for held nodes are overwritten by their supports: zero rows and
        // columns.
        let mut add = |row: usize, col: usize, value: f64| {
            if !held_rows.contains(&row) && !held_rows.contains(&col) {
                out.add(row, col, value);
            }
        };
        for &(i, j, v) in &jacobian(rod, motion, inertia).entries {
            add(state_index(rod, i), state_index(rod, j), v);
        }
        if model.drag != 0.0 {
            for j in 0..=n {
                for a in 0..3 {
                    add(velocity_slot(j) + a, velocity_slot(j) + a, -model.drag);
                }
            }
            for s in 0..n {
                for a in 0..3 {
                    add(angular_slot(s) + a, angular_slot(s) + a, -model.drag);
                }
            }
        }
        if let Some(damping) = &model.damping {
            // ∂(-G ẏ)/∂u, ẏ = (v, ½ p Ω): rows in (φ, p), columns in u (state slots).
            let gram = strain_gram(rod, damping.shear_extension, damping.bending_torsion);
            let half_rates: Vec<[Quat; 3]> = rod
                .orientations
                .iter()
                .map(|p| std::array::from_fn(|k| mul(*p, pure(Vec3::AXES[k])).map(|c| 0.5 * c)))
                .collect();
            let mut rows: Vec<BTreeMap<usize, f64>> = vec![BTreeMap::new(); unknowns(rod)];
            for &(i, j, v) in &gram.entries {
                let (block, offset) = (j / 7, j % 7);
                if offset < 3 {
                    *rows[i].entry(velocity_slot(block) + offset).or_insert(0.0) -= v;
                } else {
                    for (k, rate) in half_rates[block].iter().enumerate() {
                        *rows[i].entry(angular_slot(block) + k).or_insert(0.0) -=
                            v * rate[offset - 3];
                    }
                }
            }
            for j in 0..=n {
                let m = inertia.node_masses[j];
                for a in 0..3 {
                    for (&col, &v) in &rows[7 * j + a] {
                        add(velocity_slot(j) + a, col, v / m);
                    }
                }
            }
            for s in 0..n {
                let p = rod.orientations[s];
                let mut columns: BTreeMap<usize, Quat> = BTreeMap::new();
                for c in 0..4 {
                    for (&col, &v) in &rows[7 * s + 3 + c] {
                        columns.entry(col).or_insert([0.0; 4])[c] += v;
                    }
                }
                let inertia_s = inertia.segment_inertias[s];
                for (col, force) in columns {
                    let torque = mul(conj(p), force);
                    for k in 0..3 {
                        add(angular_slot(s) + k, col, 0.5 * torque[k + 1] / inertia_s[k]);
                    }
                }
            }
        }
        let (force_terms, torque_terms) = model.loads.derivatives(rod);
        for (node, segment, derivative) in force_terms {
            let m = inertia.node_masses[node];
            for (c, d) in derivative.iter().enumerate() {
                for a in 0..3 {
                    add(
                        velocity_slot(node) + a,
                        quaternion_slot(segment) + c,
                        d[a] / m,
                    );
                }
            }
        }
        for (segment, derivative) in torque_terms {
            let inertia_s = inertia.segment_inertias[segment];
            for (c, d) in derivative.iter().enumerate() {
                for k in 0..3 {
                    add(
                        angular_slot(segment) + k,
                        quaternion_slot(segment) + c,
                        d[k] / inertia_s[k],
                    );
                }
            }
        }
    }

    /// Drift control: quaternions back to unit length; held nodes where their supports put them.
    fn project(&mut self, y: &mut [f64]) -> bool {
        for s in 0..self.rod.segments() {
            let slot = quaternion_slot(s);
            let p: Quat = [y[slot], y[slot + 1], y[slot + 2], y[slot + 3]];
            y[slot..slot + 4].copy_from_slice(&normalized(p));
        }
        true
    }
}

/// A rod advanced by Radau IIA: its state vector, time and integrator.
pub struct ImplicitRod {
    pub model: RodModel,
    pub time: f64,
    reference: Rod,
    state: Vec<f64>,
    pub radau: Radau5,
}

impl ImplicitRod {
    pub fn new(rod: &Rod, motion: &RodMotion, model: RodModel, options: RadauOptions) -> Self {
        ImplicitRod {
            model,
            time: 0.0,
            reference: rod.clone(),
            state: pack(rod, motion),
            radau: Radau5::new(options),
        }
    }

    /// Integrates to `t_end`.
    pub fn advance_to(&mut self, t_end: f64) -> Result<(), RadauError> {
        let mut system = RodSystem::new(&self.reference, &self.model);
        self.radau
            .integrate(&mut system, &mut self.time, &mut self.state, t_end)
    }

    /// The current configuration and motion.
    pub fn state(&self) -> (Rod, RodMotion) {
        let mut rod = self.reference.clone();
        let mut motion = RodMotion::rest(&rod);
        unpack(&self.state, &mut rod, &mut motion);
        self.model
            .apply_boundaries(&mut rod, &mut motion, self.time);
        (rod, motion)
    }

    pub fn stats(&self) -> RadauStats {
        self.radau.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::{Boundary, EndMotion, Support};
    use crate::dissipation::Damping;
    use crate::dynamics::Inertia;
    use crate::loads::{EndLoad, Loads};
    use crate::rod::{End, Stiffness};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn deformed_moving_rod(rng: &mut ChaCha8Rng) -> (Rod, RodMotion) {
        let stiffness = Stiffness {
            shear_extension: Vec3::new(3.0, 4.0, 20.0),
            bending_torsion: Vec3::new(1.5, 2.5, 0.7),
        };
        let mut rod = Rod::straight(5, 2.0, Vec3::ZERO, Vec3::X, Vec3::Y, stiffness).unwrap();
        let mut r = |s: f64| rng.gen_range(-s..s);
        for node in rod.nodes.iter_mut() {
            *node += Vec3::new(r(0.1), r(0.1), r(0.1));
        }
        for p in rod.orientations.iter_mut() {
            *p = normalized([p[0] + r(0.2), p[1] + r(0.2), p[2] + r(0.2), p[3] + r(0.2)]);
        }
        let motion = RodMotion {
            velocities: (0..6).map(|_| Vec3::new(r(1.0), r(1.0), r(1.0))).collect(),
            angular_velocities: (0..5).map(|_| Vec3::new(r(1.0), r(1.0), r(1.0))).collect(),
        };
        (rod, motion)
    }

    /// Columns of the analytic Jacobian against central differences of f: every column for a model
    /// with drag, loads (follower force, dead torque) and a clamped, twisting end; the velocity
    /// columns also with inner damping (whose configuration dependence is left out by design).
    #[test]
    fn jacobian_matches_differences_of_the_right_hand_side() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let (mut rod, motion) = deformed_moving_rod(&mut rng);
        let clamp = Boundary::new(
            &mut rod,
            End::First,
            Support::Clamped,
            EndMotion {
                velocity: Vec3::ZERO,
                angular_velocity: Vec3::new(0.5, 0.0, 0.0),
            },
        );
        let inertia = Inertia {
            node_masses: (0..6).map(|k| 1.0 + 0.1 * k as f64).collect(),
            segment_inertias: (0..5)
                .map(|k| Vec3::new(0.2, 0.3 + 0.01 * k as f64, 0.4))
                .collect(),
        };
        let mut model = RodModel {
            drag: 0.3,
            loads: Loads {
                gravity: Vec3::new(0.0, -1.0, 0.0),
                end_loads: vec![
                    EndLoad {
                        end: End::Last,
                        force: Vec3::new(0.5, -1.0, 2.0),
                        torque: Vec3::new(0.1, 0.2, -0.3),
                        follower: true,
                    },
                    EndLoad {
                        end: End::Last,
                        force: Vec3::new(0.0, 1.0, 0.0),
                        torque: Vec3::new(0.4, -0.6, 0.2),
                        follower: false,
                    },
                ],
                ..Loads::default()
            },
            boundaries: vec![clamp],
            ..RodModel::new(inertia)
        };
        for damped in [false, true] {
            if damped {
                model.damping = Some(Damping {
                    shear_extension: Vec3::new(0.5, 0.6, 2.0),
                    bending_torsion: Vec3::new(0.3, 0.2, 0.1),
                });
            }
            let mut system = RodSystem::new(&rod, &model);
            let y = pack(&rod, &motion);
            let size = y.len();
            let t = 0.7;
            let mut jac = BandMatrix::zeros(size, LOWER, UPPER);
            system.jacobian(t, &y, &mut jac);
            let mut scale: f64 = 0.0;
            for i in 0..size {
                for j in 0..size {
                    if jac.in_band(i, j) {
                        scale = scale.max(jac.get(i, j).abs());
                    }
                }
            }
            let eps = 1e-6;
            for col in 0..size {
                let is_velocity = (0..=5)
                    .any(|j| (velocity_slot(j)..velocity_slot(j) + 3).contains(&col))
                    || (0..5).any(|s| (angular_slot(s)..angular_slot(s) + 3).contains(&col));
                if damped && !is_velocity {
                    continue;
                }
                let mut f = |shift: f64| {
                    let mut shifted = y.clone();
                    shifted[col] += shift;
                    let mut dy = vec![0.0; size];
                    system.rhs(t, &shifted, &mut dy);
                    dy
                };
                let (plus, minus) = (f(eps), f(-eps));
                for row in 0..size {
                    let fd = (plus[row] - minus[row]) / (2.0 * eps);
                    let analytic = if jac.in_band(row, col) {
                        jac.get(row, col)
                    } else {
                        0.0
                    };
                    assert!(
                        (fd - analytic).abs() < 1e-6 * scale,
                        "damped {damped} ({row}, {col}): {fd} vs {analytic}"
                    );
                }
            }
        }
    }
}
