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
use silt_parallel::{block, Communicator};
use std::ops::Range;

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
    /// Conjugate-gradient iterations taken (0 for the direct solve).
    pub iterations: usize,
}

/// The ambient flow at the bead centres, `V_∞*`: velocity and angular velocity (half the vorticity).
#[derive(Clone, Copy, Debug)]
pub struct Ambient<'a> {
    pub velocities: &'a [Vec3],
    pub angular_velocities: &'a [Vec3],
}

/// The 6 × 6 mobility block of bead `i` due to bead `j` as `[[tt, tr], [rt, rr]]`: the unbounded RPY
/// block for a periodic mobility too (only the conjugate gradients' per-fiber preconditioner takes
/// blocks of it: an approximation there; the direct solve is refused with a periodic mobility).
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

/// Systems of at most this many beads have their mobility blocks evaluated once each before the
/// assembly (at most 2.6 MB of blocks).
const MAX_CACHED_BEADS: usize = 96;

/// `J M* Jᵀ` (row-major, `rows × rows`): each pair of 3-row blocks `p` (bead i) and `q` (bead j) adds
/// `G_p M_ij G_qᵀ`, `G = [translation, rotation]`. Rows are filled in parallel, each summing its
/// blocks in a fixed order.
pub fn assemble_multiplier_matrix(
    mobility: &Mobility,
    positions: &[Vec3],
    system: &ConstraintSystem,
) -> Vec<f64> {
    assemble_rows(mobility, positions, system, 0..system.rows / 3)
}

/// [`assemble_multiplier_matrix`] on the ranks of `comm`: each fills the rows of its block of
/// constraints and all gather the whole matrix (each entry computed as in the serial assembly).
pub fn assemble_multiplier_matrix_on(
    comm: &dyn Communicator,
    mobility: &Mobility,
    positions: &[Vec3],
    system: &ConstraintSystem,
) -> Vec<f64> {
    if comm.size() == 1 {
        return assemble_multiplier_matrix(mobility, positions, system);
    }
    let mine = block(system.rows / 3, comm.size(), comm.rank());
    comm.all_gather_v(&assemble_rows(mobility, positions, system, mine))
        .0
}

/// The rows of constraints `constraints` (3 rows each) of `J M* Jᵀ`.
fn assemble_rows(
    mobility: &Mobility,
    positions: &[Vec3],
    system: &ConstraintSystem,
    constraints: Range<usize>,
) -> Vec<f64> {
    let rows = system.rows;
    // Blocks grouped by their first row (each constraint's rows are filled by its own blocks).
    let mut by_row: Vec<Vec<&JacobianBlock>> = vec![Vec::new(); rows / 3];
    for b in &system.blocks {
        by_row[b.row / 3].push(b);
    }
    // A small system (a fiber's group in the preconditioner) evaluates each bead pair's block once
    // (a constraint's two blocks and its neighbours' share beads); a large one as it goes.
    let mut beads: Vec<usize> = system.blocks.iter().map(|b| b.bead).collect();
    beads.sort_unstable();
    beads.dedup();
    let cached: Option<Vec<[DMat3; 4]>> = (beads.len() <= MAX_CACHED_BEADS).then(|| {
        beads
            .par_iter()
            .flat_map_iter(|&i| {
                beads
                    .iter()
                    .map(move |&j| mobility_block(mobility, positions, i, j))
            })
            .collect()
    });
    let place = |b: usize| beads.binary_search(&b).expect("a bead of the system");
    // Each block's bead among `beads`, and its transposed Jacobian blocks.
    let columns: Vec<(usize, DMat3, DMat3)> = system
        .blocks
        .iter()
        .map(|q| {
            (
                place(q.bead),
                q.translation.transpose(),
                q.rotation.transpose(),
            )
        })
        .collect();
    let mut matrix = vec![0.0; 3 * constraints.len() * rows];
    matrix
        .par_chunks_mut(3 * rows)
        .zip(by_row[constraints].par_iter())
        .for_each(|(out, row_blocks)| {
            for p in row_blocks {
                let row_bead = place(p.bead);
                for (q, &(column_bead, tq, rq)) in system.blocks.iter().zip(&columns) {
                    let block = match &cached {
                        Some(blocks) => blocks[row_bead * beads.len() + column_bead],
                        None => mobility_block(mobility, positions, p.bead, q.bead),
                    };
                    let [tt, tr, rt, rr] = block;
                    // G_p M G_qᵀ = T_p (tt T_qᵀ + tr R_qᵀ) + R_p (rt T_qᵀ + rr R_qᵀ).
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

/// How `(J M* Jᵀ) λ = r` is solved.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum MultiplierSolver {
    /// Dense Cholesky factorisation of the whole matrix (`O(rows³)`: one or a few fibers).
    Direct,
    /// Conjugate gradients, `J M* Jᵀ` applied matrix-free (two sparse products around the parallel
    /// mobility product), preconditioned by the exact inverse of each fiber's own block (the
    /// constraints coupled through shared beads, with the hydrodynamics inside the fiber).
    /// Stops when `|r - A λ| <= tolerance |r|`.
    ConjugateGradient {
        tolerance: f64,
        max_iterations: usize,
    },
    /// `Direct` up to [`AUTO_DIRECT_ROWS`] rows, conjugate gradients above (and always with a periodic
    /// mobility), to the tolerance [`Hydrodynamics::multiplier_tolerance`]: 1e-10, or a tenth of a
    /// periodic product's own tolerance.
    #[default]
    Auto,
}

/// Largest system `MultiplierSolver::Auto` factorises whole.
pub const AUTO_DIRECT_ROWS: usize = 600;

/// Dense Cholesky solve of the row-major `rows × rows` matrix, with the dependent-pivot check.
fn cholesky(matrix: &[f64], rows: usize) -> Result<faer::linalg::solvers::Llt<f64>, String> {
    let a = Mat::<f64>::from_fn(rows, rows, |i, j| matrix[i * rows + j]);
    let cholesky = a.llt(faer::Side::Lower).map_err(|e| {
        let faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot { index } = e;
        format!(
            "the constraint matrix J M Jᵀ ({rows} rows) is not positive definite (its pivot {index} \
             is not positive): some constraints are redundant or contradict each other"
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
    Ok(cholesky)
}

fn cholesky_solve(factor: &faer::linalg::solvers::Llt<f64>, rhs: &[f64]) -> Vec<f64> {
    let b = Mat::<f64>::from_fn(rhs.len(), 1, |i, _| rhs[i]);
    let x = factor.solve(&b);
    (0..rhs.len()).map(|i| x[(i, 0)]).collect()
}

/// The 3-row groups of `J` coupled through shared beads (union–find), each sorted, in the order of
/// their first group: one per fiber for the gears links and end conditions of separate fibers.
fn coupled_groups(system: &ConstraintSystem) -> Vec<Vec<usize>> {
    let groups = system.rows / 3;
    let mut parent: Vec<usize> = (0..groups).collect();
    fn root(parent: &mut [usize], mut g: usize) -> usize {
        while parent[g] != g {
            parent[g] = parent[parent[g]];
            g = parent[g];
        }
        g
    }
    let mut first_group_of_bead = std::collections::HashMap::new();
    for b in &system.blocks {
        let g = b.row / 3;
        let other = *first_group_of_bead.entry(b.bead).or_insert(g);
        let (ra, rb) = (root(&mut parent, g), root(&mut parent, other));
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); groups];
    for g in 0..groups {
        let r = root(&mut parent, g);
        members[r].push(g);
    }
    members.into_iter().filter(|m| !m.is_empty()).collect()
}

/// What one multiplier solve of `system` under `solver` (with the `periodic` mobility: conjugate
/// gradients whatever the size) costs: the bytes of its dense matrices (the
/// whole `J M* Jᵀ` and its factor for the direct solve; each coupled group's for the conjugate
/// gradients' preconditioner) and the flops of their Cholesky factorisations (`rows³ / 3` each).
pub fn solve_cost(
    system: &ConstraintSystem,
    solver: MultiplierSolver,
    periodic: bool,
) -> (f64, f64) {
    let dense = |rows: f64| (16.0 * rows * rows, rows * rows * rows / 3.0);
    let rows = system.rows;
    let direct = match solver {
        MultiplierSolver::Direct => true,
        MultiplierSolver::Auto => rows <= AUTO_DIRECT_ROWS && !periodic,
        MultiplierSolver::ConjugateGradient { .. } => false,
    };
    if direct {
        return dense(rows as f64);
    }
    coupled_groups(system)
        .iter()
        .map(|g| dense(3.0 * g.len() as f64))
        .fold((0.0, 0.0), |(b, f), (gb, gf)| (b + gb, f + gf))
}

/// Block-diagonal preconditioner: the Cholesky factors of each coupled group's own `J M* Jᵀ`. On
/// several ranks each rank factorises and applies its block of the groups (`silt_parallel::block`)
/// and all gather the result, each group solved as in the serial run.
struct GroupPreconditioner<'a> {
    comm: &'a dyn Communicator,
    /// Every coupled group, in order.
    groups: Vec<Vec<usize>>,
    /// The groups this rank solves, and their factors.
    mine: Range<usize>,
    factors: Vec<faer::linalg::solvers::Llt<f64>>,
}

impl<'a> GroupPreconditioner<'a> {
    fn new(
        comm: &'a dyn Communicator,
        mobility: &Mobility,
        positions: &[Vec3],
        system: &ConstraintSystem,
    ) -> Result<Self, String> {
        let groups = coupled_groups(system);
        let mut blocks_of_group: Vec<Vec<JacobianBlock>> = vec![Vec::new(); system.rows / 3];
        for b in &system.blocks {
            blocks_of_group[b.row / 3].push(*b);
        }
        let factorise = |members: &[usize]| {
            let mut local = ConstraintSystem {
                rows: 3 * members.len(),
                blocks: Vec::new(),
                offsets: vec![0.0; 3 * members.len()],
            };
            for (k, &g) in members.iter().enumerate() {
                local.blocks.extend(
                    blocks_of_group[g]
                        .iter()
                        .map(|b| JacobianBlock { row: 3 * k, ..*b }),
                );
            }
            let matrix = assemble_multiplier_matrix(mobility, positions, &local);
            cholesky(&matrix, local.rows)
        };
        let mine = block(groups.len(), comm.size(), comm.rank());
        let factored: Vec<Result<_, String>> = groups[mine.clone()]
            .par_iter()
            .map(|members| factorise(members))
            .collect();
        // A group that fails on one rank fails on all: the first failing group (the same on every
        // rank) names the error, its factorisation repeated where another rank held it.
        let first_failure = factored
            .iter()
            .position(Result::is_err)
            .map_or(f64::INFINITY, |k| (mine.start + k) as f64);
        let failed = if comm.size() == 1 {
            first_failure
        } else {
            -comm.max(-first_failure)
        };
        if failed.is_finite() {
            let g = failed as usize;
            return Err(match factorise(&groups[g]) {
                Err(message) => message,
                Ok(_) => format!("the preconditioner of coupled constraint group {g} failed"),
            });
        }
        let factors = factored.into_iter().map(|f| f.expect("checked")).collect();
        Ok(GroupPreconditioner {
            comm,
            groups,
            mine,
            factors,
        })
    }

    fn apply(&self, residual: &[f64]) -> Vec<f64> {
        let solved: Vec<Vec<f64>> = self.groups[self.mine.clone()]
            .par_iter()
            .zip(&self.factors)
            .map(|(members, factor)| {
                let local: Vec<f64> = members
                    .iter()
                    .flat_map(|&g| residual[3 * g..3 * g + 3].iter().copied())
                    .collect();
                cholesky_solve(factor, &local)
            })
            .collect();
        let solved: Vec<f64> = solved.concat();
        let solved = if self.comm.size() == 1 {
            solved
        } else {
            self.comm.all_gather_v(&solved).0
        };
        // Every group's values, in group order.
        let mut out = vec![0.0; residual.len()];
        let mut values = solved.chunks_exact(3);
        for members in &self.groups {
            for &g in members {
                out[3 * g..3 * g + 3].copy_from_slice(values.next().expect("a value per row"));
            }
        }
        out
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// What the conjugate gradients return: λ, the iterations taken, and `M* Jᵀ λ` (kept up to date
/// through the iterations from the products they take anyway, so the constrained velocities need no
/// further product).
struct Solution {
    multipliers: Vec<f64>,
    iterations: usize,
    velocities: Vec<Vec3>,
    angular_velocities: Vec<Vec3>,
}

/// Preconditioned conjugate gradients on `(J M* Jᵀ) λ = rhs`.
/// On several ranks every rank iterates on the whole vectors (the same on all) and shares out the
/// mobility product and the preconditioner.
#[allow(clippy::too_many_arguments)]
fn conjugate_gradient(
    comm: &dyn Communicator,
    mobility: &Mobility,
    positions: &[Vec3],
    system: &ConstraintSystem,
    rhs: &[f64],
    tolerance: f64,
    max_iterations: usize,
    initial: Option<&[f64]>,
) -> Result<Solution, String> {
    let n = positions.len();
    // J M* Jᵀ x, and M* Jᵀ x on the way.
    let operator = |x: &[f64]| {
        let (f, t) = system.transpose_times(x, n);
        let mut v = vec![Vec3::ZERO; n];
        let mut w = vec![Vec3::ZERO; n];
        mobility.apply_on(comm, positions, &f, &t, &mut v, &mut w);
        (system.times(&v, &w), v, w)
    };
    let preconditioner = GroupPreconditioner::new(comm, mobility, positions, system)?;
    let target = tolerance * dot(rhs, rhs).sqrt();
    // Warm start from the last step's multipliers when they fit (one more product, fewer iterations).
    let (mut x, mut r, mut v, mut w) = match initial {
        Some(x0) if x0.len() == rhs.len() => {
            let (ax, v, w) = operator(x0);
            let r = rhs.iter().zip(&ax).map(|(b, a)| b - a).collect();
            (x0.to_vec(), r, v, w)
        }
        _ => (
            vec![0.0; rhs.len()],
            rhs.to_vec(),
            vec![Vec3::ZERO; n],
            vec![Vec3::ZERO; n],
        ),
    };
    let solution = |multipliers, iterations, velocities, angular_velocities| Solution {
        multipliers,
        iterations,
        velocities,
        angular_velocities,
    };
    if dot(&r, &r).sqrt() <= target {
        return Ok(solution(x, 0, v, w));
    }
    let mut z = preconditioner.apply(&r);
    let mut p = z.clone();
    let mut rz = dot(&r, &z);
    for iteration in 1..=max_iterations {
        let (ap, vp, wp) = operator(&p);
        let curvature = dot(&p, &ap);
        if curvature.is_nan() || curvature <= 0.0 {
            return Err(format!(
                "conjugate gradients on J M Jᵀ broke down at iteration {iteration} (pᵀAp = \
                 {curvature:e}): some constraints are redundant or contradict each other"
            ));
        }
        let alpha = rz / curvature;
        x.iter_mut().zip(&p).for_each(|(x, p)| *x += alpha * p);
        v.iter_mut().zip(&vp).for_each(|(v, d)| *v += alpha * *d);
        w.iter_mut().zip(&wp).for_each(|(w, d)| *w += alpha * *d);
        r.iter_mut().zip(&ap).for_each(|(r, a)| *r -= alpha * a);
        if dot(&r, &r).sqrt() <= target {
            return Ok(solution(x, iteration, v, w));
        }
        z = preconditioner.apply(&r);
        let rz_next = dot(&r, &z);
        let beta = rz_next / rz;
        rz = rz_next;
        p.iter_mut().zip(&z).for_each(|(p, z)| *p = z + beta * *p);
    }
    Err(format!(
        "conjugate gradients on J M Jᵀ ({} rows) did not reach the relative residual {tolerance:e} \
         in {max_iterations} iterations (now {:e})",
        rhs.len(),
        dot(&r, &r).sqrt() / (target / tolerance)
    ))
}

/// The known forces and torques `F_0` on the beads (elastic, active, external).
#[derive(Clone, Copy, Debug)]
pub struct Loads<'a> {
    pub forces: &'a [Vec3],
    pub torques: &'a [Vec3],
}

/// Solves for the multipliers and the constrained motion of beads at `positions` under the known
/// loads and an optional ambient flow. `initial` multipliers (the last step's) warm-start the
/// conjugate gradients; the direct solve ignores them. Every rank of `comm` calls it with the same
/// inputs and gets the serial result, the mobility products and the assembly shared out by rows.
#[allow(clippy::too_many_arguments)]
pub fn solve_constrained(
    comm: &dyn Communicator,
    mobility: &Mobility,
    positions: &[Vec3],
    system: &ConstraintSystem,
    loads: Loads,
    ambient: Option<Ambient>,
    solver: MultiplierSolver,
    initial: Option<&[f64]>,
) -> Result<ConstrainedMotion, String> {
    let Loads { forces, torques } = loads;
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
    mobility.apply_on(comm, positions, forces, torques, &mut free_v, &mut free_w);
    add_ambient(&mut free_v, &mut free_w);

    let mut iterations = 0;
    // M* Jᵀ λ when the conjugate gradients kept it.
    let mut constraint_motion = None;
    let multipliers = if system.rows == 0 {
        Vec::new()
    } else {
        let rhs: Vec<f64> = system
            .residual(&free_v, &free_w)
            .into_iter()
            .map(|r| -r)
            .collect();
        let rows = system.rows;
        let periodic = mobility.hydrodynamics.is_periodic();
        if periodic && solver == MultiplierSolver::Direct {
            return Err(
                "the direct multiplier solve assembles the mobility pair by pair; the \
                        periodic mobility is a product only: use conjugate gradients"
                    .into(),
            );
        }
        let solver = match solver {
            MultiplierSolver::Auto if rows <= AUTO_DIRECT_ROWS && !periodic => {
                MultiplierSolver::Direct
            }
            MultiplierSolver::Auto => MultiplierSolver::ConjugateGradient {
                tolerance: mobility.hydrodynamics.multiplier_tolerance(),
                max_iterations: 1000,
            },
            chosen => chosen,
        };
        match solver {
            MultiplierSolver::ConjugateGradient {
                tolerance,
                max_iterations,
            } => {
                let solution = conjugate_gradient(
                    comm,
                    mobility,
                    positions,
                    system,
                    &rhs,
                    tolerance,
                    max_iterations,
                    initial,
                )?;
                iterations = solution.iterations;
                constraint_motion = Some((solution.velocities, solution.angular_velocities));
                solution.multipliers
            }
            _ => {
                let matrix = assemble_multiplier_matrix_on(comm, mobility, positions, system);
                cholesky_solve(&cholesky(&matrix, rows)?, &rhs)
            }
        }
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
    // Q' = M* (F_0 + Jᵀ λ) + V_∞* = (M* F_0 + V_∞*) + M* Jᵀ λ.
    let (velocities, angular_velocities) = match constraint_motion {
        Some((v, w)) => (
            free_v.iter().zip(&v).map(|(a, b)| *a + *b).collect(),
            free_w.iter().zip(&w).map(|(a, b)| *a + *b).collect(),
        ),
        None => {
            let mut velocities = vec![Vec3::ZERO; n];
            let mut angular_velocities = vec![Vec3::ZERO; n];
            mobility.apply_on(
                comm,
                positions,
                &total_f,
                &total_t,
                &mut velocities,
                &mut angular_velocities,
            );
            add_ambient(&mut velocities, &mut angular_velocities);
            (velocities, angular_velocities)
        }
    };
    Ok(ConstrainedMotion {
        multipliers,
        constraint_forces,
        constraint_torques,
        forces: total_f,
        torques: total_t,
        velocities,
        angular_velocities,
        iterations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::Fibers;
    use crate::constraints::{gears, Constraint, ConstraintState, PrescribedMotion};
    use crate::rpy::RpyKernel;
    use silt_parallel::SingleRank;
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
            orientations: &[],
            time: 0.0,
        };
        let system = ConstraintSystem::assemble(&gears(&fibers), &state);
        let torque = Vec3::new(0.0, 0.4, -1.0);
        let forces = vec![Vec3::ZERO; 2];
        let torques = vec![torque, Vec3::ZERO];
        let motion = solve_constrained(
            &SingleRank,
            &m,
            &fibers.positions,
            &system,
            Loads {
                forces: &forces,
                torques: &torques,
            },
            None,
            MultiplierSolver::Direct,
            None,
        )
        .unwrap();
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
            let m = mobility(hydrodynamics.clone(), a);
            let state = ConstraintState {
                fibers: &fibers,
                orientations: &[],
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
            let motion = solve_constrained(
                &SingleRank,
                &m,
                &fibers.positions,
                &system,
                Loads {
                    forces: &forces,
                    torques: &torques,
                },
                None,
                MultiplierSolver::Direct,
                None,
            )
            .unwrap();
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
            orientations: &[],
            time: 0.0,
        };
        let mut constraints = gears(&fibers);
        constraints.push(Box::new(PrescribedMotion::clamped(0)));
        constraints.push(Box::new(PrescribedMotion::clamped(1)));
        let system = ConstraintSystem::assemble(&constraints, &state);
        let zeros = vec![Vec3::ZERO; 2];
        let err = solve_constrained(
            &SingleRank,
            &mobility(Hydrodynamics::Rpy, a),
            &fibers.positions,
            &system,
            Loads {
                forces: &zeros,
                torques: &zeros,
            },
            None,
            MultiplierSolver::Direct,
            None,
        )
        .unwrap_err();
        assert!(err.contains("redundant"), "{err}");
    }

    /// Conjugate gradients with the per-fiber preconditioner reach the direct solution; the groups
    /// are the fibers (with their end conditions).
    #[test]
    fn conjugate_gradients_agree_with_the_direct_solve() {
        let a = 0.5;
        let mut fibers = Fibers::new(a).unwrap();
        for k in 0..5 {
            let shift = Vec3::new(0.3 * k as f64, 1.6 * k as f64, 0.4 * (k % 2) as f64);
            fibers
                .add(8, move |s| {
                    shift + Vec3::new(s, 0.3 * (0.5 * s + k as f64).sin(), 0.1 * s)
                })
                .unwrap();
        }
        let state = ConstraintState {
            fibers: &fibers,
            orientations: &[],
            time: 0.0,
        };
        let mut constraints = gears(&fibers);
        constraints.push(Box::new(PrescribedMotion::hinged(8)));
        let system = ConstraintSystem::assemble(&constraints, &state);
        let groups = coupled_groups(&system);
        assert_eq!(groups.len(), 5);
        assert_eq!(groups[1].len(), 8, "7 links and the hinge of fiber 1");
        let n = fibers.bead_count();
        let forces: Vec<Vec3> = (0..n)
            .map(|k| Vec3::new((k % 3) as f64 - 1.0, -1.0, 0.1 * (k % 5) as f64))
            .collect();
        let torques: Vec<Vec3> = (0..n).map(|k| Vec3::splat(0.05 * (k % 4) as f64)).collect();
        let m = mobility(Hydrodynamics::Rpy, a);
        let solve = |solver| {
            solve_constrained(
                &SingleRank,
                &m,
                &fibers.positions,
                &system,
                Loads {
                    forces: &forces,
                    torques: &torques,
                },
                None,
                solver,
                None,
            )
            .unwrap()
        };
        let direct = solve(MultiplierSolver::Direct);
        let iterative = solve(MultiplierSolver::ConjugateGradient {
            tolerance: 1e-12,
            max_iterations: 200,
        });
        let size = direct
            .multipliers
            .iter()
            .fold(0.0f64, |m, x| m.max(x.abs()));
        for (d, i) in direct.multipliers.iter().zip(&iterative.multipliers) {
            assert!((d - i).abs() < 1e-9 * size, "{d} vs {i}");
        }
        // The velocities the iterations kept (no final product) are those of the multipliers.
        let speed = direct
            .velocities
            .iter()
            .fold(0.0f64, |m, v| m.max(v.length()));
        for (d, i) in direct.velocities.iter().zip(&iterative.velocities) {
            assert!((*d - *i).length() < 1e-9 * speed, "{d} vs {i}");
        }
        let spin = direct
            .angular_velocities
            .iter()
            .fold(0.0f64, |m, v| m.max(v.length()));
        for (d, i) in direct
            .angular_velocities
            .iter()
            .zip(&iterative.angular_velocities)
        {
            assert!((*d - *i).length() < 1e-9 * spin, "{d} vs {i}");
        }
        // The fibers interact only through the fluid between them: a few iterations suffice.
        let (mut free_v, mut free_w) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        m.apply(
            &fibers.positions,
            &forces,
            &torques,
            &mut free_v,
            &mut free_w,
        );
        let rhs: Vec<f64> = system
            .residual(&free_v, &free_w)
            .iter()
            .map(|r| -r)
            .collect();
        let iterations = conjugate_gradient(
            &SingleRank,
            &m,
            &fibers.positions,
            &system,
            &rhs,
            1e-10,
            200,
            None,
        )
        .unwrap()
        .iterations;
        assert!(iterations <= 30, "{iterations} iterations");
    }
}
