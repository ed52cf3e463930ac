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
//! supports, placed where they are at `options.time` (prescribed motion: quasi-static paths).
//!
//! Loads are applied in equal increments (load stepping for large deflections), each solved to a
//! relative residual `tolerance`; the step is halved when the residual grows.

use silt_core::Vec3;

use crate::band::{BandLu, BandMatrix};
use crate::dynamics::{RodModel, RodMotion};
use crate::hessian::hessian;
use crate::loads::ExternalForces;
use crate::potential::gradient;
use crate::quaternion::{mul, normalized, pure, Quat};
use crate::rod::Rod;
use crate::verlet::rotation_exp;

/// What the static solve did.
#[derive(Clone, Debug, PartialEq)]
pub struct StaticReport {
    pub newton_steps: usize,
    pub load_steps: usize,
    /// Final relative residual.
    pub residual: f64,
}

/// Settings of the static solve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StaticOptions {
    pub load_steps: usize,
    pub tolerance: f64,
    /// Newton steps allowed per load step.
    pub max_newton_steps: usize,
    /// Time at which the supports are placed.
    pub time: f64,
}

impl Default for StaticOptions {
    fn default() -> Self {
        StaticOptions {
            load_steps: 1,
            // Above the round-off floor of the residual (7e-10 of the load on the Timoshenko
            // cantilever at N = 100, reached by quadratic convergence); a correction below 1e-12 of
            // the length also ends the iteration.
            tolerance: 1e-8,
            max_newton_steps: 50,
            time: 0.0,
        }
    }
}

fn tangent(p: Quat) -> [Quat; 3] {
    std::array::from_fn(|i| mul(p, pure(Vec3::AXES[i])).map(|c| 0.5 * c))
}

/// Reduced residual: the free nodes' force balance, then every segment's torque balance.
fn reduced_residual(rod: &Rod, external: &ExternalForces, free: &[usize]) -> Vec<f64> {
    let g = gradient(rod);
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

/// Solves for the static equilibrium of `rod` under the model's loads, its supports holding their
/// nodes (and clamp frames) as at `options.time`.
pub fn solve_static(
    rod: &mut Rod,
    model: &RodModel,
    options: StaticOptions,
) -> Result<StaticReport, String> {
    let mut motion = RodMotion::rest(rod);
    model.apply_boundaries(rod, &mut motion, options.time);
    let fixed = model.held_nodes(rod);
    let free: Vec<usize> = (0..rod.nodes.len())
        .filter(|j| !fixed.contains(j))
        .collect();
    let slots = slots(&free, rod.segments());
    let size = 6 * rod.segments() + 3;
    let forces = |rod: &Rod, factor: f64| model.loads.forces(rod, &model.inertia, factor);
    // Residuals in force units: torques divided by the rod's length.
    let length: f64 = rod.lengths.iter().sum();
    let norm = |r: &[f64]| -> f64 {
        let (forces, torques) = r.split_at(3 * free.len());
        (forces.iter().map(|x| x * x).sum::<f64>()
            + torques.iter().map(|x| x * x).sum::<f64>() / (length * length))
            .sqrt()
    };
    // Corrections in length units: rotations times the rod's length.
    let step_norm = |d: &[f64]| -> f64 {
        let (moves, turns) = d.split_at(3 * free.len());
        (moves.iter().map(|x| x * x).sum::<f64>()
            + turns.iter().map(|x| x * x).sum::<f64>() * length * length)
            .sqrt()
    };
    let full = forces(rod, 1.0);
    let load_scale = full
        .nodes
        .iter()
        .map(|f| f.length())
        .chain(full.torques.iter().map(|t| t.length() / length))
        .fold(0.0, f64::max)
        .max(1e-300);
    let mut newton_steps = 0;
    let mut residual = f64::INFINITY;
    let mut previous: Option<Rod> = None;
    for step in 1..=options.load_steps {
        let factor = step as f64 / options.load_steps as f64;
        // Secant predictor along the load path: the last increment repeated (positions added,
        // rotations composed), so Newton starts near the next equilibrium.
        let converged = rod.clone();
        if let Some(before) = previous.take() {
            for ((x, x_before), held) in rod.nodes.iter_mut().zip(&before.nodes).zip(0..) {
                if !fixed.contains(&held) {
                    *x += *x - *x_before;
                }
            }
            for (p, p_before) in rod.orientations.iter_mut().zip(&before.orientations) {
                *p = normalized(mul(*p, mul(crate::quaternion::conj(*p_before), *p)));
            }
        }
        previous = Some(converged);
        let mut steps_at_this_load = 0;
        loop {
            let r = reduced_residual(rod, &forces(rod, factor), &free);
            residual = norm(&r) / load_scale;
            if residual < options.tolerance {
                break;
            }
            if steps_at_this_load >= options.max_newton_steps {
                return Err(format!(
                    "the static solve did not converge in {steps_at_this_load} Newton steps \
                     (residual {residual:e} at load {factor}); use more load steps"
                ));
            }
            newton_steps += 1;
            steps_at_this_load += 1;
            let lu = BandLu::factor(newton_matrix(rod, model, factor, &free)).map_err(|e| {
                format!(
                    "the Newton system is singular at column {} (is the rod held against rigid \
                     motion?)",
                    e.column
                )
            })?;
            let delta = solve(&lu, &slots, size, &r)?;
            let delta_norm = step_norm(&delta);
            // A correction at round-off of the rod's length: converged, whatever the residual's
            // floor (it grows with the number of segments: 8e-8 of the load at 2,000).
            if delta_norm <= 1e-12 * length {
                apply(rod, &free, &delta, 1.0);
                break;
            }
            // Damped Newton with Deuflhard's natural monotonicity test: a step of length λ is
            // taken when the next simplified correction (same matrix) shrinks, |Δ̄| <= (1 - λ/4)
            // |Δ|. Unlike the residual, this measure does not mix stiff and soft directions.
            let mut lambda = 1.0;
            let start = rod.clone();
            loop {
                *rod = start.clone();
                apply(rod, &free, &delta, lambda);
                let trial = reduced_residual(rod, &forces(rod, factor), &free);
                let simplified = solve(&lu, &slots, size, &trial).map(|d| step_norm(&d));
                if matches!(simplified, Ok(n) if n <= (1.0 - 0.25 * lambda) * delta_norm) {
                    break;
                }
                if lambda < 1e-4 {
                    return Err(format!(
                        "the static solve stalled at load {factor} (residual {residual:e}); use \
                         more load steps"
                    ));
                }
                lambda *= 0.5;
            }
        }
    }
    Ok(StaticReport {
        newton_steps,
        load_steps: options.load_steps,
        residual,
    })
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
fn newton_matrix(rod: &Rod, model: &RodModel, factor: f64, free: &[usize]) -> BandMatrix<f64> {
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
    for &(i, j, v) in &hessian(rod).entries {
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
    let g = gradient(rod);
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
        let band = newton_matrix(&rod, &model, 1.0, &free);
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
