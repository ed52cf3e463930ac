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

use num_complex::Complex64;

use crate::band::{BandLu, BandMatrix, Scalar, Singular};
use crate::dynamics::{accelerations_into, RodModel, RodMotion, Workspace};
use crate::hessian::{strain_gram, unknowns};
use crate::jacobian::jacobian;
use crate::quaternion::{conj, mul, normalized, pure, Quat};
use crate::radau::{
    IterationMatrix, Radau5, RadauError, RadauMemory, RadauOptions, RadauStats, StiffSystem,
};
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

/// Bandwidth of the reduced matrix on the velocities (`v_j` at 6j, `Ω_s` at 6s + 3): a row couples
/// to the velocities of its own and the neighbouring blocks.
const REDUCED_BAND: usize = 8;

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
    /// The force evaluation's scratch space and constant factors, prepared once (f is evaluated
    /// about ten times per step).
    work: Workspace,
    accelerations: Vec<Vec3>,
    angular: Vec<Vec3>,
}

impl<'a> RodSystem<'a> {
    /// `rod` gives the reference state (lengths, stiffness, rest curvature, clamps).
    pub fn new(rod: &Rod, model: &'a RodModel) -> Self {
        let mut work = Workspace::default();
        work.prepare(rod, model);
        RodSystem {
            model,
            rod: rod.clone(),
            motion: RodMotion::rest(rod),
            work,
            accelerations: vec![Vec3::ZERO; rod.nodes.len()],
            angular: vec![Vec3::ZERO; rod.segments()],
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
    type Jacobian = RodJacobian;

    fn dimension(&self) -> usize {
        state_size(&self.rod)
    }

    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
        self.read(t, y);
        accelerations_into(
            &self.rod,
            &self.motion,
            self.model,
            &mut self.work,
            &mut self.accelerations,
            &mut self.angular,
        );
        let (rod, motion) = (&self.rod, &self.motion);
        let (a, alpha) = (&self.accelerations, &self.angular);
        for (j, (v, a)) in motion.velocities.iter().zip(a).enumerate() {
            dy[position_slot(j)..position_slot(j) + 3].copy_from_slice(&v.to_array());
            dy[velocity_slot(j)..velocity_slot(j) + 3].copy_from_slice(&a.to_array());
        }
        for (s, ((p, w), alpha)) in rod
            .orientations
            .iter()
            .zip(&motion.angular_velocities)
            .zip(alpha)
            .enumerate()
        {
            let rate = mul(*p, pure(*w)).map(|c| 0.5 * c);
            dy[quaternion_slot(s)..quaternion_slot(s) + 4].copy_from_slice(&rate);
            dy[angular_slot(s)..angular_slot(s) + 3].copy_from_slice(&alpha.to_array());
        }
    }

    fn jacobian(&mut self, t: f64, y: &[f64]) -> RodJacobian {
        self.read(t, y);
        let mut entries: Vec<(usize, usize, f64)> = Vec::new();
        let (rod, motion, model) = (&self.rod, &self.motion, self.model);
        let inertia = &model.inertia;
        let n = rod.segments();
        let held: Vec<usize> = model.held_nodes(rod);
        let mut held_slot = vec![false; state_size(rod)];
        for &j in &held {
            for a in 0..3 {
                held_slot[position_slot(j) + a] = true;
                held_slot[velocity_slot(j) + a] = true;
            }
        }
        // The state's entries for held nodes are overwritten by their supports: zero rows and
        // columns.
        let mut add = |row: usize, col: usize, value: f64| {
            if !held_slot[row] && !held_slot[col] {
                entries.push((row, col, value));
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
        let mut held_nodes = vec![false; n + 1];
        for j in held {
            held_nodes[j] = true;
        }
        RodJacobian::new(
            entries,
            rod.orientations.clone(),
            motion.angular_velocities.clone(),
            held_nodes,
        )
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

/// Where a state index points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Position(usize, usize),
    Velocity(usize, usize),
    Quaternion(usize, usize),
    Angular(usize, usize),
}

fn slot(index: usize) -> Slot {
    let (block, offset) = (index / BLOCK, index % BLOCK);
    match offset {
        0..=2 => Slot::Position(block, offset),
        3..=5 => Slot::Velocity(block, offset - 3),
        6..=9 => Slot::Quaternion(block, offset - 6),
        _ => Slot::Angular(block, offset - 10),
    }
}

/// Index of a velocity slot among the reduced unknowns u (`v_j` at 6j, `Ω_s` at 6s + 3).
fn reduced_index(s: Slot) -> usize {
    match s {
        Slot::Velocity(j, a) => 6 * j + a,
        Slot::Angular(j, a) => 6 * j + 3 + a,
        _ => unreachable!("not a velocity"),
    }
}

/// The rod's Jacobian in block form, and the factorisations of its iteration matrices reduced to
/// the velocities. With y = (x, u), x the positions and quaternions, u the velocities:
///
/// ```text
/// J = [[A, B], [C, D]],  A = ∂p'/∂p = ½ R(Ω) (block diagonal, zero on positions),
///                        B = ∂x'/∂u: I for φ' = v, ½ L(p) E for p' = ½ p Ω (block diagonal)
/// (c I - J) (Δx, Δu) = (r_x, r_u)  ⇔  Δx = M (r_x + B Δu),  M = (c I - A)⁻¹ (block diagonal),
///                                      (c I - D - C M B) Δu = r_u + C M r_x
/// ```
///
/// `(c - ½ R(Ω))⁻¹ = (c + ½ R(Ω)) / (c² + |Ω|²/4)` since `R(Ω)² = -|Ω|²` for a pure Ω. The reduced
/// matrix has 6N + 3 rows and 8 sub- and super-diagonals instead of 13N + 6 rows and about 20, so a
/// factorisation costs about a twelfth.
pub struct RodJacobian {
    /// All entries of J in state order (A and B are rebuilt from p and Ω).
    entries: Vec<(usize, usize, f64)>,
    orientations: Vec<Quat>,
    angular_velocities: Vec<Vec3>,
    held: Vec<bool>,
    /// C as (u row, configuration slot, value) and D as (u row, u column, value).
    coupling_to_configuration: Vec<(usize, Slot, f64)>,
    coupling_to_velocities: Vec<(usize, usize, f64)>,
    real: Option<(f64, BandLu<f64>)>,
    complex: Option<(Complex64, BandLu<Complex64>)>,
}

impl RodJacobian {
    fn new(
        entries: Vec<(usize, usize, f64)>,
        orientations: Vec<Quat>,
        angular_velocities: Vec<Vec3>,
        held: Vec<bool>,
    ) -> Self {
        let mut coupling_to_configuration = Vec::new();
        let mut coupling_to_velocities = Vec::new();
        for &(row, col, value) in &entries {
            let row_slot = slot(row);
            if matches!(row_slot, Slot::Position(..) | Slot::Quaternion(..)) {
                continue; // A and B: rebuilt from p and Ω.
            }
            let u_row = reduced_index(row_slot);
            match slot(col) {
                c @ (Slot::Position(..) | Slot::Quaternion(..)) => {
                    coupling_to_configuration.push((u_row, c, value))
                }
                c => coupling_to_velocities.push((u_row, reduced_index(c), value)),
            }
        }
        RodJacobian {
            entries,
            orientations,
            angular_velocities,
            held,
            coupling_to_configuration,
            coupling_to_velocities,
            real: None,
            complex: None,
        }
    }

    /// J in state order, dense (tests).
    pub fn to_dense(&self, size: usize) -> Vec<Vec<f64>> {
        let mut dense = vec![vec![0.0; size]; size];
        for &(i, j, v) in &self.entries {
            dense[i][j] += v;
        }
        dense
    }

    /// `M_s = (c I - ½ R(Ω_s))⁻¹` applied to a quaternion.
    fn turn_inverse<T: Scalar>(&self, segment: usize, shift: T, q: [T; 4]) -> [T; 4] {
        let w = self.angular_velocities[segment];
        // R(Ω) q = q Ω.
        let q_omega = times_pure(q, w);
        let scale = T::from_real(1.0) / (shift * shift + T::from_real(0.25 * w.length_squared()));
        std::array::from_fn(|k| (shift * q[k] + T::from_real(0.5) * q_omega[k]) * scale)
    }

    /// `M_s B_s` as 4 x 3 (column k: `M_s (½ p e_k)`).
    fn turn_rates<T: Scalar>(&self, segment: usize, shift: T) -> [[T; 3]; 4] {
        let p = self.orientations[segment];
        let mut out = [[T::ZERO; 3]; 4];
        for k in 0..3 {
            let column = mul(p, pure(Vec3::AXES[k])).map(|c| T::from_real(0.5 * c));
            let turned = self.turn_inverse(segment, shift, column);
            for r in 0..4 {
                out[r][k] = turned[r];
            }
        }
        out
    }

    /// The reduced matrix `c I - D - C M B` on u, factorised.
    fn reduced<T: Scalar>(&self, shift: T) -> Result<BandLu<T>, Singular> {
        let segments = self.orientations.len();
        let size = 6 * segments + 3;
        let mut s = BandMatrix::<T>::zeros(size, REDUCED_BAND, REDUCED_BAND);
        for i in 0..size {
            s.add(i, i, shift);
        }
        for &(i, k, v) in &self.coupling_to_velocities {
            s.add(i, k, T::from_real(-v));
        }
        let inverse_shift = T::from_real(1.0) / shift;
        let turn_rates: Vec<[[T; 3]; 4]> = (0..segments)
            .map(|seg| self.turn_rates(seg, shift))
            .collect();
        for &(i, column, v) in &self.coupling_to_configuration {
            match column {
                Slot::Position(j, a) => {
                    if !self.held[j] {
                        s.add(i, 6 * j + a, T::from_real(-v) * inverse_shift);
                    }
                }
                Slot::Quaternion(seg, r) => {
                    for m in 0..3 {
                        s.add(i, 6 * seg + 3 + m, T::from_real(-v) * turn_rates[seg][r][m]);
                    }
                }
                _ => unreachable!("configuration columns only"),
            }
        }
        BandLu::factor(s)
    }

    /// Solves `(c I - J) x = b` through the reduction, b in state order.
    fn solve_with<T: Scalar>(&self, shift: T, reduced: &BandLu<T>, b: &mut [T]) {
        let segments = self.orientations.len();
        let inverse_shift = T::from_real(1.0) / shift;
        // w = M r_x, in place on the configuration slots.
        for j in 0..=segments {
            for a in 0..3 {
                b[position_slot(j) + a] = b[position_slot(j) + a] * inverse_shift;
            }
        }
        for seg in 0..segments {
            let at = quaternion_slot(seg);
            let q = [b[at], b[at + 1], b[at + 2], b[at + 3]];
            b[at..at + 4].copy_from_slice(&self.turn_inverse(seg, shift, q));
        }
        // r_u + C w.
        let mut u = vec![T::ZERO; 6 * segments + 3];
        for j in 0..=segments {
            for a in 0..3 {
                u[6 * j + a] = b[velocity_slot(j) + a];
            }
        }
        for seg in 0..segments {
            for a in 0..3 {
                u[6 * seg + 3 + a] = b[angular_slot(seg) + a];
            }
        }
        for &(i, column, v) in &self.coupling_to_configuration {
            let w = match column {
                Slot::Position(j, a) => b[position_slot(j) + a],
                Slot::Quaternion(seg, r) => b[quaternion_slot(seg) + r],
                _ => unreachable!("configuration columns only"),
            };
            u[i] = u[i] + T::from_real(v) * w;
        }
        reduced.solve(&mut u);
        // Δx = w + M B Δu, and Δu, back into the state.
        for j in 0..=segments {
            for a in 0..3 {
                let du = u[6 * j + a];
                b[velocity_slot(j) + a] = du;
                if !self.held[j] {
                    b[position_slot(j) + a] = b[position_slot(j) + a] + du * inverse_shift;
                }
            }
        }
        for seg in 0..segments {
            let turn_rates = self.turn_rates(seg, shift);
            let d_omega = [u[6 * seg + 3], u[6 * seg + 4], u[6 * seg + 5]];
            for (r, rates) in turn_rates.iter().enumerate() {
                let mut sum = b[quaternion_slot(seg) + r];
                for m in 0..3 {
                    sum = sum + rates[m] * d_omega[m];
                }
                b[quaternion_slot(seg) + r] = sum;
            }
            for (a, value) in d_omega.iter().enumerate() {
                b[angular_slot(seg) + a] = *value;
            }
        }
    }
}

/// `q Ω` for a quaternion q with entries in T and a real pure quaternion Ω.
fn times_pure<T: Scalar>(q: [T; 4], w: Vec3) -> [T; 4] {
    let r = T::from_real;
    [
        T::ZERO - q[1] * r(w.x) - q[2] * r(w.y) - q[3] * r(w.z),
        q[0] * r(w.x) + q[2] * r(w.z) - q[3] * r(w.y),
        q[0] * r(w.y) - q[1] * r(w.z) + q[3] * r(w.x),
        q[0] * r(w.z) + q[1] * r(w.y) - q[2] * r(w.x),
    ]
}

impl IterationMatrix for RodJacobian {
    fn factor(&mut self, real_shift: f64, complex_shift: Complex64) -> Result<(), Singular> {
        self.real = Some((real_shift, self.reduced(real_shift)?));
        self.complex = Some((complex_shift, self.reduced(complex_shift)?));
        Ok(())
    }

    fn solve_real(&self, b: &mut [f64]) {
        let (shift, lu) = self.real.as_ref().expect("factored");
        self.solve_with(*shift, lu, b);
    }

    fn solve_complex(&self, b: &mut [Complex64]) {
        let (shift, lu) = self.complex.as_ref().expect("factored");
        self.solve_with(*shift, lu, b);
    }
}

/// A rod advanced by Radau IIA: its state vector, time and integrator.
pub struct ImplicitRod {
    pub model: RodModel,
    pub time: f64,
    reference: Rod,
    state: Vec<f64>,
    pub radau: Radau5<RodJacobian>,
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

    /// The state vector ([`pack`]'s layout).
    pub fn state_vector(&self) -> &[f64] {
        &self.state
    }

    /// Puts the rod at `time` in `state` with the integrator's `memory` (a checkpoint).
    pub fn restore(
        &mut self,
        time: f64,
        state: Vec<f64>,
        memory: RadauMemory,
    ) -> Result<(), String> {
        if state.len() != self.state.len() {
            return Err(format!(
                "the state holds {} values, the rod needs {}",
                state.len(),
                self.state.len()
            ));
        }
        self.time = time;
        self.state = state;
        let mut system = RodSystem::new(&self.reference, &self.model);
        self.radau.restore(memory, &mut system)
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
            EndMotion::constant(Vec3::ZERO, Vec3::new(0.5, 0.0, 0.0)),
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
            let jac = system.jacobian(t, &y);
            let dense = jac.to_dense(size);
            let scale = dense.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
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
                    let analytic = dense[row][col];
                    assert!(
                        (fd - analytic).abs() < 1e-6 * scale,
                        "damped {damped} ({row}, {col}): {fd} vs {analytic}"
                    );
                }
            }
        }
    }

    /// The reduced solves of `(c I - J) x = b` (real and complex shift) equal dense solves of the
    /// full matrix, with a held node, damping and configuration-dependent loads.
    #[test]
    fn reduced_solves_match_the_full_system() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        let (mut rod, motion) = deformed_moving_rod(&mut rng);
        let clamp = Boundary::new(&mut rod, End::First, Support::Clamped, EndMotion::default());
        let model = RodModel {
            drag: 0.2,
            damping: Some(Damping {
                shear_extension: Vec3::new(0.5, 0.6, 2.0),
                bending_torsion: Vec3::new(0.3, 0.2, 0.1),
            }),
            loads: Loads {
                end_loads: vec![EndLoad {
                    end: End::Last,
                    force: Vec3::new(0.5, -1.0, 2.0),
                    torque: Vec3::new(0.1, 0.2, -0.3),
                    follower: true,
                }],
                ..Loads::default()
            },
            boundaries: vec![clamp],
            ..RodModel::new(Inertia {
                node_masses: (0..6).map(|k| 1.0 + 0.1 * k as f64).collect(),
                segment_inertias: (0..5).map(|_| Vec3::new(0.2, 0.3, 0.4)).collect(),
            })
        };
        let mut system = RodSystem::new(&rod, &model);
        let y = pack(&rod, &motion);
        let size = y.len();
        let mut jac = system.jacobian(0.0, &y);
        let dense = jac.to_dense(size);
        let (real_shift, complex_shift) = (7.3, Complex64::new(4.1, 2.9));
        jac.factor(real_shift, complex_shift).unwrap();
        let b: Vec<f64> = (0..size).map(|i| ((i * 7) % 11) as f64 - 5.0).collect();
        for complex in [false, true] {
            let shift = if complex {
                complex_shift
            } else {
                Complex64::new(real_shift, 0.0)
            };
            let mut full = BandMatrix::<Complex64>::zeros(size, size - 1, size - 1);
            for i in 0..size {
                for j in 0..size {
                    let diagonal = if i == j { shift } else { Complex64::ZERO };
                    full.add(i, j, diagonal - Complex64::new(dense[i][j], 0.0));
                }
            }
            let mut expected: Vec<Complex64> =
                b.iter().map(|v| Complex64::new(*v, 0.5 * v)).collect();
            let rhs = expected.clone();
            BandLu::factor(full).unwrap().solve(&mut expected);
            let got: Vec<Complex64> = if complex {
                let mut x = rhs.clone();
                jac.solve_complex(&mut x);
                x
            } else {
                // Real shift: real and imaginary parts solve separately.
                let mut re: Vec<f64> = rhs.iter().map(|c| c.re).collect();
                let mut im: Vec<f64> = rhs.iter().map(|c| c.im).collect();
                jac.solve_real(&mut re);
                jac.solve_real(&mut im);
                re.iter()
                    .zip(&im)
                    .map(|(a, b)| Complex64::new(*a, *b))
                    .collect()
            };
            for (g, e) in got.iter().zip(&expected) {
                assert!(
                    (g - e).norm() < 1e-10 * (1.0 + e.norm()),
                    "complex {complex}: {g} vs {e}"
                );
            }
        }
    }
}
