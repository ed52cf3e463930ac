//! Static equilibrium by Newton's method with the analytic Hessian, on the rotation manifold:
//! positions move by `Δφ`, each segment turns by a body rotation vector `Δθ` (`p ← p exp(Δθ)`), so
//! quaternions stay unit. With `T = ∂p/∂θ = ½ [p e_1, p e_2, p e_3]` and `∂²p/∂θ² = -¼ p I` at θ = 0,
//! the reduced residual and Hessian of `Π = V - Σ F·φ` are
//!
//! ```text
//! r_φ = ∂V/∂φ - F,   r_θ = Tᵀ ∂V/∂p
//! H_φφ,   H_φθ = H_φp T,   H_θθ = Tᵀ H_pp T - ¼ (p · ∂V/∂p) I
//! ```
//!
//! External loads enter as node forces F and body torques τ ([`crate::loads`]): `r_θ` gains `-τ`,
//! and configuration-dependent loads (follower forces, dead torques) add `-(∂F/∂p) T` and
//! `-(∂τ/∂p) T` to the (then unsymmetric) Newton matrix. Held nodes are those of the model's
//! supports.
//!
//! **Mixed Newton (stiff rods).** The shear and extension stresses `m` are carried as unknowns of
//! their own (Hellinger–Reissner: `h (Γ - Γ0 - C_G⁻¹ m) = 0` beside the equilibrium). Eliminated
//! segment by segment, the Newton step for the configuration is the displacement step above, but
//! with the geometric (second-derivative) terms taken at the carried `m`, and the stresses advance
//! to the linearised strains, `m ← C_G (Γ + ∂Γ Δ)`. The displacement method takes `m = C_G Γ` at the
//! new configuration instead, whose quadratic error `C_G |Δθ|² h` (nodes move along straight lines
//! while the frames turn) is huge for stiff rods (`EA/EI ~ 1e6/r²` for steel) and spoils the
//! tangent. Both have the same solutions; at `EA L²/EI = 1e12` (200 segments, `F L²/EI = 5`) the
//! mixed form converges in 11 Newton steps from one increment, the displacement form needs 64
//! increments (689 steps).
//!
//! **Load path.** Loads grow with the load factor λ from 0 to 1, and supports in prescribed motion
//! are placed where they are at time λ (an end displaced by its velocity, turned by its angular
//! velocity, at λ = 1). Each increment is solved to a relative residual `tolerance` by Newton with a
//! trust region on the rotations (see `Problem::newton` for why not a damping test); an increment
//! that fails is cut in half and retried from the last equilibrium, one that converges in a few
//! steps lets the next grow (automatic load-step control), so no user-chosen number of load steps
//! is needed. The stiff cantilever of issue 21 (`EA = GA = 1e7 EI / L²`, `F L²/EI = 10`) failed with
//! 20 equal load steps and needed 70; it now converges from one increment in 9 Newton steps.

use silt_core::Vec3;

use crate::band::{BandLu, BandMatrix};
use crate::dynamics::{RodModel, RodMotion};
use crate::hessian::hessian_with_stresses;
use crate::loads::ExternalForces;
use crate::potential::{gradient_with_stresses, segment_stresses};
use crate::quaternion::{conj, mul, normalized, pure, Quat};
use crate::rod::Rod;
use crate::strains::{shear_strain, strain_rates};
use crate::verlet::rotation_exp;

/// What the static solve did.
#[derive(Clone, Debug, PartialEq)]
pub struct StaticReport {
    pub newton_steps: usize,
    /// Load increments that converged.
    pub load_steps: usize,
    /// Increments that failed and were retried at half the size.
    pub rejected_steps: usize,
    /// Final relative residual.
    pub residual: f64,
}

/// Settings of the static solve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StaticOptions {
    /// The first load increment is `1 / load_steps`; later ones adapt.
    pub load_steps: usize,
    pub tolerance: f64,
    /// Newton steps allowed per load increment before it is cut.
    pub max_newton_steps: usize,
    /// The smallest load increment tried before the solve gives up.
    pub min_increment: f64,
}

impl Default for StaticOptions {
    fn default() -> Self {
        StaticOptions {
            load_steps: 1,
            // Above the round-off floor of the residual (7e-10 of the load on the Timoshenko
            // cantilever at N = 100, reached by quadratic convergence); a correction below 1e-12 of
            // the length also ends the iteration.
            tolerance: 1e-8,
            max_newton_steps: 25,
            min_increment: 1e-6,
        }
    }
}

fn tangent(p: Quat) -> [Quat; 3] {
    std::array::from_fn(|i| mul(p, pure(Vec3::AXES[i])).map(|c| 0.5 * c))
}

/// Reduced residual: the free nodes' force balance, then every segment's torque balance, with the
/// elastic stresses `m = C_G Γ` of the configuration.
fn reduced_residual(rod: &Rod, external: &ExternalForces, free: &[usize]) -> Vec<f64> {
    let stresses = segment_stresses(rod);
    reduced_gradient(rod, &stresses, external, free)
}

/// The reduced gradient of `Π` for given segment stresses.
fn reduced_gradient(
    rod: &Rod,
    stresses: &[Vec3],
    external: &ExternalForces,
    free: &[usize],
) -> Vec<f64> {
    let g = gradient_with_stresses(rod, stresses);
    let mut r = Vec::with_capacity(3 * free.len() + 3 * rod.segments());
    for &j in free {
        r.extend((g.nodes[j] - external.nodes[j]).to_array());
    }
    for ((p, gp), torque) in rod
        .orientations
        .iter()
        .zip(&g.orientations)
        .zip(&external.torques)
    {
        for (k, t) in tangent(*p).iter().enumerate() {
            r.push(crate::quaternion::dot(*t, *gp) - torque[k]);
        }
    }
    r
}

/// The state of the solve at a load factor: configuration and carried stresses.
#[derive(Clone)]
struct Equilibrium {
    rod: Rod,
    stresses: Vec<Vec3>,
    factor: f64,
    /// The load factor of the equilibrium this state was predicted from.
    factor_start: f64,
}

/// The largest turn of a segment in one Newton step (radians): the trust region.
const MAX_TURN: f64 = 0.5;

/// Why an increment failed.
enum Failure {
    /// Retry with a smaller increment.
    Diverged(String),
    /// Give up (singular system).
    Fatal(String),
}

/// The fixed parts of one solve.
struct Problem<'a> {
    model: &'a RodModel,
    free: Vec<usize>,
    fixed: Vec<usize>,
    slots: Vec<usize>,
    size: usize,
    length: f64,
    load_scale: f64,
    options: StaticOptions,
}

impl Problem<'_> {
    fn forces(&self, rod: &Rod, factor: f64) -> ExternalForces {
        self.model.loads.forces(rod, &self.model.inertia, factor)
    }

    /// Residuals in force units: torques divided by the rod's length.
    fn norm(&self, r: &[f64]) -> f64 {
        let (forces, torques) = r.split_at(3 * self.free.len());
        (forces.iter().map(|x| x * x).sum::<f64>()
            + torques.iter().map(|x| x * x).sum::<f64>() / (self.length * self.length))
            .sqrt()
    }

    /// Corrections in length units: rotations times the rod's length.
    fn step_norm(&self, d: &[f64]) -> f64 {
        let (moves, turns) = d.split_at(3 * self.free.len());
        (moves.iter().map(|x| x * x).sum::<f64>()
            + turns.iter().map(|x| x * x).sum::<f64>() * self.length * self.length)
            .sqrt()
    }

    /// Places the supports as at load factor `factor` (prescribed end motion along the path).
    fn place_supports(&self, rod: &mut Rod, factor: f64) {
        let mut motion = RodMotion::rest(rod);
        self.model.apply_boundaries(rod, &mut motion, factor);
    }

    /// Mixed Newton at one load factor from `state` (supports already placed), counting its steps
    /// into `steps`; the final relative residual.
    ///
    /// Globalised by a trust region on the rotations (no segment turns by more than
    /// [`MAX_TURN`] in one step) and by the contraction of successive corrections: two growing
    /// corrections in a row, or `max_newton_steps`, fail the increment (the caller cuts it). The
    /// classic damping tests do not work here: a step's residual, energy or simplified correction
    /// (old matrix, new residual) all carry the stiff `C_G |Δθ|²` error of the chord update, which
    /// turns into a large bending correction along the old chords (measured: 500 times the step at
    /// `EA L²/EI = 1e10`), so they reject good steps and Newton crawls.
    fn newton(&self, state: &mut Equilibrium, steps: &mut usize) -> Result<f64, Failure> {
        let factor = state.factor;
        let first = *steps;
        let mut last_correction = f64::INFINITY;
        let mut growing = 0;
        loop {
            let external = self.forces(&state.rod, factor);
            let r = reduced_residual(&state.rod, &external, &self.free);
            let residual = self.norm(&r) / self.load_scale;
            if !residual.is_finite() {
                return Err(Failure::Diverged("the residual is not finite".into()));
            }
            if residual < self.options.tolerance {
                return Ok(residual);
            }
            if *steps - first >= self.options.max_newton_steps {
                return Err(Failure::Diverged(format!(
                    "no convergence in {} Newton steps (residual {residual:.1e})",
                    self.options.max_newton_steps
                )));
            }
            *steps += 1;
            let matrix = newton_matrix(&state.rod, &state.stresses, self.model, factor, &self.free);
            let lu = BandLu::factor(matrix).map_err(|e| {
                let message = format!(
                    "the Newton system is singular at column {} (is the rod held against rigid \
                     motion?)",
                    e.column
                );
                // Singular at the unloaded start: rigid motion; anywhere else, a bad iterate.
                if factor == 0.0 || (state.factor_start == 0.0 && *steps - first == 1) {
                    Failure::Fatal(message)
                } else {
                    Failure::Diverged(message)
                }
            })?;
            // The right-hand side of the condensed mixed step is the displacement residual.
            let delta = match solve(&lu, &self.slots, self.size, &r) {
                Ok(delta) => delta,
                Err(message) => return Err(Failure::Diverged(message)),
            };
            let correction = self.step_norm(&delta);
            // A correction at round-off of the rod's length: converged, whatever the residual's
            // floor (it grows with the number of segments and with C_G: 8e-8 of the load at 2,000
            // segments, 1e-3 at EA L²/EI = 1e12). So is one below 1e-6 L that no longer shrinks
            // (Newton would halve it at least): the round-off of an ill-conditioned matrix, e.g.
            // next to a bifurcation, where corrections stall between 1e-11 and 5e-7 L (the
            // twisted rod of validation/rod-helical-buckling before its helix localizes).
            let stalled = correction <= 1e-6 * self.length && correction > 0.5 * last_correction;
            if correction <= 1e-12 * self.length || stalled {
                apply(&mut state.rod, &self.free, &delta, 1.0);
                return Ok(residual);
            }
            if correction > last_correction {
                growing += 1;
                if growing >= 2 {
                    return Err(Failure::Diverged(format!(
                        "the Newton corrections grew (residual {residual:.1e})"
                    )));
                }
            } else {
                growing = 0;
            }
            last_correction = correction;
            let largest_turn = delta[3 * self.free.len()..]
                .chunks(3)
                .map(|t| Vec3::from_slice(t).length())
                .fold(0.0, f64::max);
            let lambda = (MAX_TURN / largest_turn).min(1.0);
            let stress_change = self.stress_change(state, &delta);
            apply(&mut state.rod, &self.free, &delta, lambda);
            for (m, dm) in state.stresses.iter_mut().zip(&stress_change) {
                *m += lambda * *dm;
            }
        }
    }

    /// `Δm = C_G (Γ + ∂Γ Δ) - m`: the carried stresses' Newton update, from the linearised strains.
    fn stress_change(&self, state: &Equilibrium, delta: &[f64]) -> Vec<Vec3> {
        let rod = &state.rod;
        let mut velocities = vec![Vec3::ZERO; rod.nodes.len()];
        for (k, &j) in self.free.iter().enumerate() {
            velocities[j] = Vec3::from_slice(&delta[3 * k..3 * k + 3]);
        }
        let offset = 3 * self.free.len();
        let rates: Vec<Quat> = rod
            .orientations
            .iter()
            .enumerate()
            .map(|(s, p)| {
                let theta = Vec3::from_slice(&delta[offset + 3 * s..offset + 3 * s + 3]);
                mul(*p, pure(theta)).map(|c| 0.5 * c)
            })
            .collect();
        let (strain_change, _) = strain_rates(rod, &velocities, &rates);
        (0..rod.segments())
            .map(|j| {
                rod.stiffness.shear_extension * (shear_strain(rod, j) + strain_change[j])
                    - state.stresses[j]
            })
            .collect()
    }
}

/// Solves for the static equilibrium of `rod` under the model's loads, its supports holding their
/// nodes (and clamp frames) as they are at the end of the load path (λ = 1).
pub fn solve_static(
    rod: &mut Rod,
    model: &RodModel,
    options: StaticOptions,
) -> Result<StaticReport, String> {
    let fixed = model.held_nodes(rod);
    let free: Vec<usize> = (0..rod.nodes.len())
        .filter(|j| !fixed.contains(j))
        .collect();
    let length: f64 = rod.lengths.iter().sum();
    let full = model.loads.forces(rod, &model.inertia, 1.0);
    // The load's scale; prescribed end motion counts as the force that bends the rod by it,
    // `C_K (θ / L² + u / L³)` (a pure twist or displacement path has no load).
    let bending = rod.stiffness.bending_torsion.min_element();
    let motion_scale = model
        .boundaries
        .iter()
        .map(|b| {
            let travel = b.motion.duration.min(1.0);
            bending
                * (travel * b.motion.angular_velocity.length() / length.powi(2)
                    + travel * b.motion.velocity.length() / length.powi(3))
        })
        .fold(0.0, f64::max);
    let load_scale = full
        .nodes
        .iter()
        .map(|f| f.length())
        .chain(full.torques.iter().map(|t| t.length() / length))
        .fold(motion_scale, f64::max)
        .max(1e-300);
    let problem = Problem {
        model,
        slots: slots(&free, rod.segments()),
        size: 6 * rod.segments() + 3,
        free,
        fixed,
        length,
        load_scale,
        options,
    };
    problem.place_supports(rod, 0.0);
    let mut state = Equilibrium {
        stresses: segment_stresses(rod),
        rod: rod.clone(),
        factor: 0.0,
        factor_start: 0.0,
    };
    let mut previous: Option<Equilibrium> = None;
    // A prescribed end rotation is followed in turns of at most MAX_TURN per increment: a clamp
    // frame is only known up to whole turns, so a larger increment could lose the twist.
    let largest_increment = model
        .boundaries
        .iter()
        .map(|b| MAX_TURN / b.motion.angular_velocity.length())
        .fold(1.0, f64::min);
    let mut increment = (1.0 / options.load_steps.max(1) as f64).min(largest_increment);
    let mut report = StaticReport {
        newton_steps: 0,
        load_steps: 0,
        rejected_steps: 0,
        residual: 0.0,
    };
    while state.factor < 1.0 {
        let target = if state.factor + increment > 1.0 - 1e-12 {
            1.0
        } else {
            state.factor + increment
        };
        let mut trial = problem.predict(&state, previous.as_ref(), target);
        let before = report.newton_steps;
        match problem.newton(&mut trial, &mut report.newton_steps) {
            Ok(residual) => {
                let steps = report.newton_steps - before;
                report.load_steps += 1;
                report.residual = residual;
                previous = Some(std::mem::replace(&mut state, trial));
                // Easy convergence lets the next increment grow; a hard one keeps it.
                if steps <= 6 {
                    increment = (2.0 * increment).min(largest_increment);
                }
            }
            Err(Failure::Fatal(message)) => return Err(message),
            Err(Failure::Diverged(reason)) => {
                report.rejected_steps += 1;
                increment = 0.5 * (target - state.factor);
                if increment < options.min_increment {
                    *rod = state.rod;
                    // Stuck at the unloaded rod: no equilibrium nearby at all; further on: a limit
                    // point of the load path.
                    let cause = if state.factor == 0.0 {
                        "The loaded rod has no equilibrium near the unloaded one: is it held \
                         against rigid motion (a hinged end lets it swing about the hinge)?"
                    } else {
                        "The rod may buckle or snap through there, which a static solve cannot \
                         follow: run it dynamically with damping (integrator = \"radau\") or add \
                         an imperfection"
                    };
                    return Err(format!(
                        "the static solve could not pass load factor {:.6} (of 1): increments \
                         down to {:.1e} failed ({reason}). {cause}",
                        state.factor,
                        2.0 * increment
                    ));
                }
            }
        }
    }
    *rod = state.rod;
    Ok(report)
}

impl Problem<'_> {
    /// The start of the increment to `target`: the last equilibrium, its supports moved to
    /// `target`, continued along the secant of the last increment (positions added, rotations
    /// composed, stresses added, all scaled to the new increment's size).
    fn predict(
        &self,
        state: &Equilibrium,
        previous: Option<&Equilibrium>,
        target: f64,
    ) -> Equilibrium {
        let mut next = state.clone();
        next.factor = target;
        next.factor_start = state.factor;
        if let Some(before) = previous {
            let scale = (target - state.factor) / (state.factor - before.factor);
            for (j, (x, x_before)) in next.rod.nodes.iter_mut().zip(&before.rod.nodes).enumerate() {
                if !self.fixed.contains(&j) {
                    *x += scale * (*x - *x_before);
                }
            }
            for (p, p_before) in next
                .rod
                .orientations
                .iter_mut()
                .zip(&before.rod.orientations)
            {
                let turn = rotation_log(mul(conj(*p_before), *p));
                *p = normalized(mul(*p, rotation_exp(scale * turn)));
            }
            for (m, m_before) in next.stresses.iter_mut().zip(&before.stresses) {
                *m += scale * (*m - *m_before);
            }
        }
        self.place_supports(&mut next.rod, target);
        next
    }
}

/// The rotation vector θ of a unit quaternion, `q = exp(θ)` with |θ| <= π.
fn rotation_log(q: Quat) -> Vec3 {
    let q = if q[0] < 0.0 { q.map(|c| -c) } else { q };
    let v = crate::quaternion::vector(q);
    let s = v.length();
    if s < 1e-300 {
        return Vec3::ZERO;
    }
    2.0 * s.atan2(q[0]) / s * v
}

/// `H⁻¹ (-r)` with the factorised Newton matrix, r and the result in the reduced order.
fn solve(lu: &BandLu<f64>, slots: &[usize], size: usize, r: &[f64]) -> Result<Vec<f64>, String> {
    let mut b = vec![0.0; size];
    for (k, &slot) in slots.iter().enumerate() {
        b[slot] = -r[k];
    }
    lu.solve(&mut b);
    let delta: Vec<f64> = slots.iter().map(|&slot| b[slot]).collect();
    if delta.iter().any(|v| !v.is_finite()) {
        return Err("the Newton system is singular (is the rod held against rigid motion?)".into());
    }
    Ok(delta)
}

fn apply(rod: &mut Rod, free: &[usize], delta: &[f64], length: f64) {
    for (k, &j) in free.iter().enumerate() {
        rod.nodes[j] += length * Vec3::from_slice(&delta[3 * k..3 * k + 3]);
    }
    let offset = 3 * free.len();
    for (s, p) in rod.orientations.iter_mut().enumerate() {
        let theta = length * Vec3::from_slice(&delta[offset + 3 * s..offset + 3 * s + 3]);
        *p = normalized(mul(*p, rotation_exp(theta)));
    }
}

/// Where each reduced unknown (free nodes' coordinates, then every segment's rotation) sits in the
/// interleaved layout of the banded Newton matrix: node j at 6j, segment s at 6s + 3 (held nodes keep
/// their slots with an identity row, so the band is 8 wide on each side).
fn slots(free: &[usize], segments: usize) -> Vec<usize> {
    free.iter()
        .flat_map(|&j| (0..3).map(move |a| 6 * j + a))
        .chain((0..segments).flat_map(|s| (0..3).map(move |m| 6 * s + 3 + m)))
        .collect()
}

const NEWTON_BAND: usize = 8;

/// `∂r/∂(φ_free, θ)` as a band matrix in the interleaved layout of [`slots`].
fn newton_matrix(
    rod: &Rod,
    stresses: &[Vec3],
    model: &RodModel,
    factor: f64,
    free: &[usize],
) -> BandMatrix<f64> {
    let n = rod.segments();
    let size = 6 * n + 3;
    let mut h = BandMatrix::<f64>::zeros(size, NEWTON_BAND, NEWTON_BAND);
    let mut is_free = vec![false; n + 1];
    for &j in free {
        is_free[j] = true;
    }
    for (j, free) in is_free.iter().enumerate() {
        if !free {
            for a in 0..3 {
                h.add(6 * j + a, 6 * j + a, 1.0);
            }
        }
    }
    // B^T H B, entry by entry: an unknown of the Hessian maps to a free node's coordinate (1) or to
    // its segment's three rotations (the columns of T).
    let tangents: Vec<[Quat; 3]> = rod.orientations.iter().map(|p| tangent(*p)).collect();
    let basis = |index: usize| -> [(usize, f64); 3] {
        let (block, offset) = (index / 7, index % 7);
        if offset < 3 {
            if is_free[block] {
                [
                    (6 * block + offset, 1.0),
                    (usize::MAX, 0.0),
                    (usize::MAX, 0.0),
                ]
            } else {
                [(usize::MAX, 0.0); 3]
            }
        } else {
            let t = &tangents[block];
            std::array::from_fn(|m| (6 * block + 3 + m, t[m][offset - 3]))
        }
    };
    for &(i, j, v) in &hessian_with_stresses(rod, stresses).entries {
        for (a, x) in basis(i) {
            if a == usize::MAX {
                continue;
            }
            for (b, y) in basis(j) {
                if b != usize::MAX {
                    h.add(a, b, x * v * y);
                }
            }
        }
    }
    let g = gradient_with_stresses(rod, stresses);
    // The turning of T = ½ p e_k with θ: ∂(Tᵀ g)_k/∂θ_m gains ¼ ⟨p e_m e_k, g⟩ =
    // -¼ δ_mk (p · g) + ½ ε_mkl (Tᵀ g)_l.
    for (s, (t, gp)) in tangents.iter().zip(&g.orientations).enumerate() {
        let radial = crate::quaternion::dot(rod.orientations[s], *gp);
        let moment: Vec<f64> = t.iter().map(|t| crate::quaternion::dot(*t, *gp)).collect();
        let at = 6 * s + 3;
        for k in 0..3 {
            h.add(at + k, at + k, -0.25 * radial);
            // ε_mkl with m = k+1, l = k+2 (cyclic) is -1; with m = k+2, l = k+1 it is +1.
            let (next, after) = ((k + 1) % 3, (k + 2) % 3);
            h.add(at + k, at + next, -0.5 * moment[after]);
            h.add(at + k, at + after, 0.5 * moment[next]);
        }
    }
    // Configuration-dependent loads: -(∂F/∂p) T on free nodes' rows, -(∂τ/∂p) T on the segment's.
    let (force_terms, torque_terms) = model.loads.derivatives(rod);
    for (node, segment, derivative) in force_terms {
        if is_free[node] {
            for a in 0..3 {
                for (m, tm) in tangents[segment].iter().enumerate() {
                    let d: f64 = (0..4).map(|c| derivative[c][a] * tm[c]).sum();
                    h.add(6 * node + a, 6 * segment + 3 + m, -factor * d);
                }
            }
        }
    }
    for (segment, derivative) in torque_terms {
        for a in 0..3 {
            for (m, tm) in tangents[segment].iter().enumerate() {
                let d: f64 = (0..4).map(|c| derivative[c][a] * tm[c]).sum();
                h.add(6 * segment + 3 + a, 6 * segment + 3 + m, -factor * d);
            }
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::{Boundary, EndMotion, Support};
    use crate::dynamics::Inertia;
    use crate::loads::{EndLoad, Loads};
    use crate::rod::{rotation, End, Stiffness};

    /// The Newton matrix equals differences of the reduced residual, for a bent rod under an end
    /// force and a dead couple, away from equilibrium.
    #[test]
    fn newton_matrix_matches_differences_of_the_residual() {
        let stiffness = Stiffness::circular(0.05, 1e3, 4e2, 0.9);
        let mut rod = Rod::straight(6, 1.0, Vec3::ZERO, Vec3::X, Vec3::Y, stiffness).unwrap();
        let clamp = Boundary::new(&mut rod, End::First, Support::Clamped, EndMotion::default());
        let model = RodModel {
            loads: Loads {
                end_loads: vec![EndLoad {
                    end: End::Last,
                    force: Vec3::new(0.01, 0.02, -0.01),
                    torque: Vec3::new(0.003, -0.002, 0.001),
                    follower: false,
                }],
                ..Loads::default()
            },
            boundaries: vec![clamp],
            ..RodModel::new(Inertia::circular(&rod, 0.05, 1000.0))
        };
        for (j, p) in rod.orientations.iter_mut().enumerate() {
            *p = mul(rotation(Vec3::new(0.2, 1.0, 0.3), 0.01 * j as f64), *p);
        }
        let free: Vec<usize> = (1..7).collect();
        let band = newton_matrix(&rod, &segment_stresses(&rod), &model, 1.0, &free);
        let slot = slots(&free, rod.segments());
        let h = |row: usize, col: usize| {
            if band.in_band(slot[row], slot[col]) {
                band.get(slot[row], slot[col])
            } else {
                0.0
            }
        };
        let residual = |delta: &[f64]| {
            let mut r = rod.clone();
            apply(&mut r, &free, delta, 1.0);
            reduced_residual(&r, &model.loads.forces(&r, &model.inertia, 1.0), &free)
        };
        let size = 3 * free.len() + 3 * rod.segments();
        let eps = 1e-6;
        let mut worst: f64 = 0.0;
        for col in 0..size {
            let mut delta = vec![0.0; size];
            delta[col] = eps;
            let plus = residual(&delta);
            delta[col] = -eps;
            let minus = residual(&delta);
            for row in 0..size {
                let fd = (plus[row] - minus[row]) / (2.0 * eps);
                worst = worst.max((fd - h(row, col)).abs());
            }
        }
        assert!(worst < 1e-4, "{worst}");
    }
}
