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
//! Loads are applied in equal increments (load stepping for large deflections), each solved to a
//! relative residual `tolerance`; the step is halved when the residual grows.

use faer::linalg::solvers::Solve;
use faer::Mat;
use silt_core::Vec3;

use crate::dynamics::{Inertia, Loads};
use crate::hessian::{hessian, node_index, segment_index, unknowns};
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
    pub max_newton_steps: usize,
}

impl Default for StaticOptions {
    fn default() -> Self {
        StaticOptions {
            load_steps: 1,
            // Above the round-off floor of the residual (7e-10 of the load on the Timoshenko
            // cantilever at N = 100, reached by quadratic convergence).
            tolerance: 1e-8,
            max_newton_steps: 50,
        }
    }
}

fn tangent(p: Quat) -> [Quat; 3] {
    std::array::from_fn(|i| mul(p, pure(Vec3::AXES[i])).map(|c| 0.5 * c))
}

/// External node forces (gravity on the node masses, point forces) scaled by `factor`.
fn external_forces(rod: &Rod, inertia: &Inertia, loads: &Loads, factor: f64) -> Vec<Vec3> {
    let mut forces: Vec<Vec3> = inertia
        .node_masses
        .iter()
        .map(|m| *m * loads.gravity * factor)
        .collect();
    for (j, f) in &loads.node_forces {
        forces[*j] += *f * factor;
    }
    let _ = rod;
    forces
}

/// Reduced residual (free nodes' 3, then every segment's 3) and its norm scale.
fn reduced_residual(rod: &Rod, external: &[Vec3], free: &[usize]) -> Vec<f64> {
    let g = gradient(rod);
    let mut r = Vec::with_capacity(3 * free.len() + 3 * rod.segments());
    for &j in free {
        r.extend((g.nodes[j] - external[j]).to_array());
    }
    for (p, gp) in rod.orientations.iter().zip(&g.orientations) {
        for t in tangent(*p) {
            r.push(crate::quaternion::dot(t, *gp));
        }
    }
    r
}

/// Solves for the static equilibrium under `loads`, the nodes `fixed` held in place.
pub fn solve_static(
    rod: &mut Rod,
    inertia: &Inertia,
    loads: &Loads,
    fixed: &[usize],
    options: StaticOptions,
) -> Result<StaticReport, String> {
    let free: Vec<usize> = (0..rod.nodes.len())
        .filter(|j| !fixed.contains(j))
        .collect();
    let full_external = external_forces(rod, inertia, loads, 1.0);
    let load_scale = full_external
        .iter()
        .map(|f| f.length())
        .fold(0.0, f64::max)
        .max(1e-300);
    let mut newton_steps = 0;
    let mut residual = f64::INFINITY;
    for step in 1..=options.load_steps {
        let factor = step as f64 / options.load_steps as f64;
        let external = external_forces(rod, inertia, loads, factor);
        loop {
            let r = reduced_residual(rod, &external, &free);
            residual = r.iter().map(|x| x * x).sum::<f64>().sqrt() / load_scale;
            if residual < options.tolerance {
                break;
            }
            if newton_steps >= options.max_newton_steps {
                return Err(format!(
                    "the static solve did not converge in {newton_steps} Newton steps (residual \
                     {residual:e} at load {factor}); use more load steps"
                ));
            }
            newton_steps += 1;
            let delta = newton_direction(rod, &free, &r)?;
            // Halve the step while the residual grows (a simple line search).
            let mut length = 1.0;
            let start = rod.clone();
            loop {
                *rod = start.clone();
                apply(rod, &free, &delta, length);
                let trial = reduced_residual(rod, &external, &free);
                let trial_norm = trial.iter().map(|x| x * x).sum::<f64>().sqrt() / load_scale;
                if trial_norm < residual || length < 1e-4 {
                    break;
                }
                length *= 0.5;
            }
        }
    }
    Ok(StaticReport {
        newton_steps,
        load_steps: options.load_steps,
        residual,
    })
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

/// Solves the reduced Newton system `H Δ = -r`.
fn newton_direction(rod: &Rod, free: &[usize], r: &[f64]) -> Result<Vec<f64>, String> {
    let size = unknowns(rod);
    let mut full = vec![0.0; size * size];
    for &(i, j, v) in &hessian(rod).entries {
        full[i * size + j] += v;
    }
    let g = gradient(rod);
    // Columns of the reduction: free nodes' coordinates, then each segment's tangent T.
    let reduced = 3 * free.len() + 3 * rod.segments();
    let mut basis: Vec<Vec<(usize, f64)>> = Vec::with_capacity(reduced);
    for &j in free {
        for a in 0..3 {
            basis.push(vec![(node_index(j) + a, 1.0)]);
        }
    }
    for (s, p) in rod.orientations.iter().enumerate() {
        for t in tangent(*p) {
            basis.push((0..4).map(|c| (segment_index(s) + c, t[c])).collect());
        }
    }
    let h = Mat::<f64>::from_fn(reduced, reduced, |a, b| {
        let mut sum = 0.0;
        for &(i, x) in &basis[a] {
            for &(j, y) in &basis[b] {
                sum += x * full[i * size + j] * y;
            }
        }
        sum
    });
    let mut h = h;
    // The curvature of p(θ): -¼ (p · ∂V/∂p) on each segment's diagonal.
    let offset = 3 * free.len();
    for (s, (p, gp)) in rod.orientations.iter().zip(&g.orientations).enumerate() {
        let radial = crate::quaternion::dot(*p, *gp);
        for a in 0..3 {
            h[(offset + 3 * s + a, offset + 3 * s + a)] -= 0.25 * radial;
        }
    }
    let rhs = Mat::<f64>::from_fn(reduced, 1, |i, _| -r[i]);
    let lu = h.partial_piv_lu();
    let x = lu.solve(&rhs);
    let delta: Vec<f64> = (0..reduced).map(|i| x[(i, 0)]).collect();
    if delta.iter().any(|v| !v.is_finite()) {
        return Err("the Newton system is singular (is the rod held against rigid motion?)".into());
    }
    Ok(delta)
}
