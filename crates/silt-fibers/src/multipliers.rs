//! The Lagrange multipliers of the kinematic constraints (seed eq. 2.13-2.17):
//!
//! ```text
//! (J M* Jᵀ) λ = -B - J (M* F_0 + V_∞*),   F = F_0 + Jᵀ λ,   Q' = M* F + V_∞*.
//! ```
//!
//! `J M* Jᵀ` is assembled block by block from the pair mobilities (3 × 3 blocks of constraint rows,
//! [`assemble_multiplier_matrix`]) and solved by a Cholesky factorisation (faer): it is symmetric
//! positive definite when the constraints are independent.

use faer::linalg::solvers::Solve;
use faer::Mat;
use glam::DMat3;
use rayon::prelude::*;
use silt_core::Vec3;

use crate::constraints::{cross_matrix, ConstraintSystem, JacobianBlock};
use crate::mobility::{Hydrodynamics, Mobility};

/// A Cholesky pivot below this fraction of its diagonal entry (squared) marks dependent constraints.
const DEPENDENT_PIVOT: f64 = 1e-12;

/// Forces, multipliers and velocities of the beads once the constraints hold.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstrainedMotion {
    /// `λ`, one per constraint row.
    pub multipliers: Vec<f64>,
    /// Constraint forces and torques `Jᵀ λ` per bead.
    pub constraint_forces: Vec<Vec3>,
    pub constraint_torques: Vec<Vec3>,
    /// Total forces and torques `F_0 + Jᵀ λ`.
    pub forces: Vec<Vec3>,
    pub torques: Vec<Vec3>,
    /// `Q' = M* F + V_∞*`.
    pub velocities: Vec<Vec3>,
    pub angular_velocities: Vec<Vec3>,
}

/// The ambient flow at the bead centres, `V_∞*`: velocity and angular velocity (half the vorticity).
#[derive(Clone, Copy, Debug)]
pub struct Ambient<'a> {
    pub velocities: &'a [Vec3],
    pub angular_velocities: &'a [Vec3],
}

/// The 6 × 6 mobility block of bead `i` due to bead `j` as `[[tt, tr], [rt, rr]]`.
fn mobility_block(mobility: &Mobility, positions: &[Vec3], i: usize, j: usize) -> [DMat3; 4] {
    let kernel = &mobility.kernel;
    if i == j {
        let (t, r) = (kernel.self_translation(), kernel.self_rotation());
        return [
            DMat3::from_diagonal(Vec3::splat(t)),
            DMat3::ZERO,
            DMat3::ZERO,
            DMat3::from_diagonal(Vec3::splat(r)),
        ];
    }
    if mobility.hydrodynamics == Hydrodynamics::FreeDrain {
        return [DMat3::ZERO; 4];
    }
    let p = kernel.pair(positions[i] - positions[j]);
    let e = p.direction;
    let outer = DMat3::from_cols(e * e.x, e * e.y, e * e.z);
    let coupling = -p.coupling * cross_matrix(e);
    [
        p.tt_isotropic * DMat3::IDENTITY + p.tt_along * outer,
        coupling,
        coupling,
        p.rr_isotropic * DMat3::IDENTITY + p.rr_along * outer,
    ]
}

/// `J M* Jᵀ` (row-major, `rows × rows`): each pair of 3-row blocks `p` (bead i) and `q` (bead j) adds
/// `G_p M_ij G_qᵀ`, `G = [translation, rotation]`. Rows are filled in parallel, each summing its
/// blocks in a fixed order.
pub fn assemble_multiplier_matrix(
    mobility: &Mobility,
    positions: &[Vec3],
    system: &ConstraintSystem,
) -> Vec<f64> {
    let rows = system.rows;
    // Blocks grouped by their first row (each constraint's rows are filled by its own blocks).
    let mut by_row: Vec<Vec<&JacobianBlock>> = vec![Vec::new(); rows / 3];
    for b in &system.blocks {
        by_row[b.row / 3].push(b);
    }
    let mut matrix = vec![0.0; rows * rows];
    matrix
        .par_chunks_mut(3 * rows)
        .zip(by_row.par_iter())
        .for_each(|(out, row_blocks)| {
            for p in row_blocks {
                for q in &system.blocks {
                    let block = mobility_block(mobility, positions, p.bead, q.bead);
                    let [tt, tr, rt, rr] = block;
                    // G_p M G_qᵀ = T_p (tt T_qᵀ + tr R_qᵀ) + R_p (rt T_qᵀ + rr R_qᵀ).
                    let (tq, rq) = (q.translation.transpose(), q.rotation.transpose());
                    let product =
                        p.translation * (tt * tq + tr * rq) + p.rotation * (rt * tq + rr * rq);
                    for a in 0..3 {
                        for b in 0..3 {
                            out[a * rows + q.row + b] += product.col(b)[a];
                        }
                    }
                }
            }
        });
    matrix
}

/// Solves for the multipliers and the constrained motion of beads at `positions` under the known
/// forces and torques `F_0` (elastic, active, external) and an optional ambient flow.
pub fn solve_constrained(
    mobility: &Mobility,
    positions: &[Vec3],
    system: &ConstraintSystem,
    forces: &[Vec3],
    torques: &[Vec3],
    ambient: Option<Ambient>,
) -> Result<ConstrainedMotion, String> {
    let n = positions.len();
    let add_ambient = |v: &mut [Vec3], w: &mut [Vec3]| {
        if let Some(flow) = ambient {
            v.iter_mut()
                .zip(flow.velocities)
                .for_each(|(v, u)| *v += *u);
            w.iter_mut()
                .zip(flow.angular_velocities)
                .for_each(|(w, o)| *w += *o);
        }
    };
    // Unconstrained motion M* F_0 + V_∞*.
    let mut free_v = vec![Vec3::ZERO; n];
    let mut free_w = vec![Vec3::ZERO; n];
    mobility.apply(positions, forces, torques, &mut free_v, &mut free_w);
    add_ambient(&mut free_v, &mut free_w);

    let multipliers = if system.rows == 0 {
        Vec::new()
    } else {
        let rhs: Vec<f64> = system
            .residual(&free_v, &free_w)
            .into_iter()
            .map(|r| -r)
            .collect();
        let rows = system.rows;
        let matrix = assemble_multiplier_matrix(mobility, positions, system);
        let a = Mat::<f64>::from_fn(rows, rows, |i, j| matrix[i * rows + j]);
        let cholesky = a.llt(faer::Side::Lower).map_err(|e| {
            format!(
                "the constraint matrix J M Jᵀ ({rows} rows) is not positive definite ({e:?}): \
                 some constraints are redundant or contradict each other"
            )
        })?;
        // Independent constraints keep every pivot a fair fraction of its diagonal entry; a
        // dependent set leaves a pivot at round-off level, whatever its sign came out as.
        let factor = cholesky.L();
        if let Some(row) = (0..rows).find(|&i| {
            let pivot = factor[(i, i)];
            pivot * pivot <= DEPENDENT_PIVOT * matrix[i * rows + i]
        }) {
            return Err(format!(
                "the constraint matrix J M Jᵀ ({rows} rows) is singular at row {row}: \
                 some constraints are redundant or contradict each other"
            ));
        }
        let b = Mat::<f64>::from_fn(rows, 1, |i, _| rhs[i]);
        let x = cholesky.solve(&b);
        (0..rows).map(|i| x[(i, 0)]).collect::<Vec<f64>>()
    };
    let (constraint_forces, constraint_torques) = system.transpose_times(&multipliers, n);
    let total_f: Vec<Vec3> = forces
        .iter()
        .zip(&constraint_forces)
        .map(|(a, b)| *a + *b)
        .collect();
    let total_t: Vec<Vec3> = torques
        .iter()
        .zip(&constraint_torques)
        .map(|(a, b)| *a + *b)
        .collect();
    let mut velocities = vec![Vec3::ZERO; n];
    let mut angular_velocities = vec![Vec3::ZERO; n];
    mobility.apply(
        positions,
        &total_f,
        &total_t,
        &mut velocities,
        &mut angular_velocities,
    );
    add_ambient(&mut velocities, &mut angular_velocities);
    Ok(ConstrainedMotion {
        multipliers,
        constraint_forces,
        constraint_torques,
        forces: total_f,
        torques: total_t,
        velocities,
        angular_velocities,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::Fibers;
    use crate::constraints::{gears, Constraint, ConstraintState, PrescribedMotion};
    use crate::rpy::RpyKernel;
    use std::f64::consts::PI;

    fn mobility(hydrodynamics: Hydrodynamics, radius: f64) -> Mobility {
        Mobility {
            kernel: RpyKernel::new(radius, 1.3).unwrap(),
            hydrodynamics,
        }
    }

    fn wavy_fibers(radius: f64) -> Fibers {
        let mut fibers = Fibers::new(radius).unwrap();
        fibers
            .add(12, |s| Vec3::new(s, 0.2 * (s * 0.7).sin(), 0.1 * s))
            .unwrap();
        fibers
            .add_straight(8, Vec3::new(0.0, 3.0, 0.5), Vec3::new(1.0, 0.2, -0.1))
            .unwrap();
        fibers
    }

    /// Two beads under free drain, a torque T ⊥ e on the first: the gears constraint gives
    /// λ = a μ_r (e × T) / (2 μ_t + 2 a² μ_r) (worked out from Q' = M(F_0 + Jᵀλ), J Q' = 0).
    #[test]
    fn two_beads_under_a_torque_match_the_closed_form() {
        let a = 0.5;
        let mut fibers = Fibers::new(a).unwrap();
        fibers.add_straight(2, Vec3::ZERO, Vec3::X).unwrap();
        let m = mobility(Hydrodynamics::FreeDrain, a);
        let state = ConstraintState {
            fibers: &fibers,
            time: 0.0,
        };
        let system = ConstraintSystem::assemble(&gears(&fibers), &state);
        let torque = Vec3::new(0.0, 0.4, -1.0);
        let forces = vec![Vec3::ZERO; 2];
        let torques = vec![torque, Vec3::ZERO];
        let motion =
            solve_constrained(&m, &fibers.positions, &system, &forces, &torques, None).unwrap();
        let (mu_t, mu_r) = (
            1.0 / (6.0 * PI * 1.3 * a),
            1.0 / (8.0 * PI * 1.3 * a.powi(3)),
        );
        let expect = a * mu_r * Vec3::X.cross(torque) / (2.0 * mu_t + 2.0 * a * a * mu_r);
        let got = Vec3::from_slice(&motion.multipliers);
        assert!(
            (got - expect).length() < 1e-14 * expect.length(),
            "{got} vs {expect}"
        );
    }

    /// With RPY, after the solve the velocities satisfy J Q' + B = 0, the constraint forces and
    /// torques have no net force or torque, and the link lengths do not change at first order.
    #[test]
    fn constrained_velocities_satisfy_the_constraints() {
        for hydrodynamics in [Hydrodynamics::Rpy, Hydrodynamics::FreeDrain] {
            let a = 0.5;
            let fibers = wavy_fibers(a);
            let m = mobility(hydrodynamics, a);
            let state = ConstraintState {
                fibers: &fibers,
                time: 0.0,
            };
            let mut constraints = gears(&fibers);
            constraints.push(Box::new(PrescribedMotion::hinged(0)) as Box<dyn Constraint>);
            let system = ConstraintSystem::assemble(&constraints, &state);
            let n = fibers.bead_count();
            let forces: Vec<Vec3> = (0..n)
                .map(|k| Vec3::new((k % 3) as f64 - 1.0, -1.0, 0.1 * k as f64))
                .collect();
            let torques: Vec<Vec3> = (0..n).map(|k| Vec3::splat(0.05 * (k % 4) as f64)).collect();
            let motion =
                solve_constrained(&m, &fibers.positions, &system, &forces, &torques, None).unwrap();
            let scale = motion
                .velocities
                .iter()
                .map(|v| v.length())
                .fold(0.0, f64::max);
            let residual = system.residual(&motion.velocities, &motion.angular_velocities);
            let worst = residual.iter().fold(0.0f64, |m, r| m.max(r.abs()));
            assert!(
                worst < 1e-12 * scale,
                "{hydrodynamics:?}: residual {worst:e}"
            );
            // Only the gears rows (not the hinge) must be free of net force and torque.
            let gears_only = ConstraintSystem::assemble(&gears(&fibers), &state);
            let gears_rows = gears_only.rows;
            let (f, t) = gears_only.transpose_times(&motion.multipliers[..gears_rows], n);
            let net_force: Vec3 = f.iter().sum();
            let net_torque: Vec3 = (0..n).map(|k| t[k] + fibers.positions[k].cross(f[k])).sum();
            let size = f.iter().map(|v| v.length()).fold(0.0, f64::max);
            assert!(
                net_force.length() < 1e-12 * size,
                "{hydrodynamics:?}: {net_force}"
            );
            assert!(
                net_torque.length() < 1e-11 * size,
                "{hydrodynamics:?}: {net_torque}"
            );
            for link in fibers.links() {
                let e = fibers.positions[link + 1] - fibers.positions[link];
                let stretch = (motion.velocities[link + 1] - motion.velocities[link]).dot(e);
                assert!(stretch.abs() < 1e-12 * scale, "link {link}: {stretch:e}");
            }
        }
    }

    /// Redundant constraints (a clamp on a bead whose every motion is already fixed by its clamped
    /// neighbour and the gears link) give a clear error, not a panic.
    #[test]
    fn redundant_constraints_are_reported() {
        let a = 0.5;
        let mut fibers = Fibers::new(a).unwrap();
        fibers.add_straight(2, Vec3::ZERO, Vec3::X).unwrap();
        let state = ConstraintState {
            fibers: &fibers,
            time: 0.0,
        };
        let mut constraints = gears(&fibers);
        constraints.push(Box::new(PrescribedMotion::clamped(0)));
        constraints.push(Box::new(PrescribedMotion::clamped(1)));
        let system = ConstraintSystem::assemble(&constraints, &state);
        let zeros = vec![Vec3::ZERO; 2];
        let err = solve_constrained(
            &mobility(Hydrodynamics::Rpy, a),
            &fibers.positions,
            &system,
            &zeros,
            &zeros,
            None,
        )
        .unwrap_err();
        assert!(err.contains("redundant"), "{err}");
    }
}
