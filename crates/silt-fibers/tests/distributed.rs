//! The fibers' hydrodynamics shared out by rows over ranks (ranks as threads: the code that runs under
//! `mpirun`) gives the serial numbers bit for bit: the RPY product, the direct and the conjugate-gradient
//! multiplier solves, whole steps, and the same error on every rank when the solve fails.

use glam::DQuat;
use silt_core::Vec3;
use silt_fibers::chain::Fibers;
use silt_fibers::constraints::{gears, ConstraintState, ConstraintSystem, PrescribedMotion};
use silt_fibers::dynamics::{AdamsBashforth, FiberSystem};
use silt_fibers::elasticity::Bending;
use silt_fibers::mobility::{Hydrodynamics, Mobility};
use silt_fibers::multipliers::{solve_constrained, Loads, MultiplierSolver};
use silt_fibers::rpy::RpyKernel;
use silt_parallel::{LocalGroup, SingleRank};

fn rpy(radius: f64) -> Mobility {
    Mobility {
        kernel: RpyKernel::new(radius, 0.9).unwrap(),
        hydrodynamics: Hydrodynamics::Rpy,
    }
}

/// Beads on a jittered lattice (some overlapping: both RPY branches), with loads on every one.
fn beads(n: usize) -> (Vec<Vec3>, Vec<Vec3>, Vec<Vec3>) {
    let at = |k: usize, c: f64| ((k as f64 * 12.9898 + c * 78.233).sin() * 43758.5453).fract();
    let positions = (0..n)
        .map(|k| {
            Vec3::new(
                (k % 5) as f64 * 0.9 + 0.3 * at(k, 1.0),
                (k / 5 % 5) as f64 * 0.9 + 0.3 * at(k, 2.0),
                (k / 25) as f64 * 0.9 + 0.3 * at(k, 3.0),
            )
        })
        .collect();
    let forces = (0..n)
        .map(|k| Vec3::new(at(k, 4.0), at(k, 5.0), at(k, 6.0)))
        .collect();
    let torques = (0..n)
        .map(|k| Vec3::new(at(k, 7.0), at(k, 8.0), at(k, 9.0)))
        .collect();
    (positions, forces, torques)
}

fn bits(values: &[Vec3]) -> Vec<[u64; 3]> {
    values
        .iter()
        .map(|v| v.to_array().map(f64::to_bits))
        .collect()
}

#[test]
fn the_rpy_product_by_rows_is_the_serial_product_on_one_to_four_ranks() {
    let mobility = rpy(0.5);
    // Fewer beads than ranks, odd and even counts, a count across several row tasks.
    for n in [1, 2, 3, 5, 16, 17, 70] {
        let (positions, forces, torques) = beads(n);
        let (mut v, mut w) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        mobility.apply(&positions, &forces, &torques, &mut v, &mut w);
        for ranks in 1..=4 {
            let results = LocalGroup::run(ranks, |comm| {
                let (mut v, mut w) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                mobility.apply_on(&*comm, &positions, &forces, &torques, &mut v, &mut w);
                (bits(&v), bits(&w))
            });
            for (rank, (rv, rw)) in results.into_iter().enumerate() {
                assert_eq!(
                    rv,
                    bits(&v),
                    "velocities, {n} beads, rank {rank} of {ranks}"
                );
                assert_eq!(
                    rw,
                    bits(&w),
                    "angular velocities, {n} beads, rank {rank} of {ranks}"
                );
            }
        }
    }
}

/// Fibers of odd and even bead counts, one hinged, under loads.
fn fibers() -> Fibers {
    let mut fibers = Fibers::new(0.5).unwrap();
    for (k, beads) in [7usize, 8, 5, 12, 9].into_iter().enumerate() {
        let shift = Vec3::new(0.4 * k as f64, 1.7 * k as f64, 0.3 * (k % 2) as f64);
        fibers
            .add(beads, move |s| {
                shift + Vec3::new(s, 0.3 * (0.5 * s + k as f64).sin(), 0.1 * s)
            })
            .unwrap();
    }
    fibers
}

/// The gears links, a hinge, and (`redundant`) both beads of the last fiber clamped, which the link
/// between them already implies.
fn constraint_system(fibers: &Fibers, redundant: bool) -> ConstraintSystem {
    let state = ConstraintState {
        fibers,
        orientations: &[],
        time: 0.0,
    };
    let mut constraints = gears(fibers);
    constraints.push(Box::new(PrescribedMotion::hinged(7)));
    if redundant {
        let last = fibers.bead_count() - 1;
        constraints.push(Box::new(PrescribedMotion::clamped(last - 1)));
        constraints.push(Box::new(PrescribedMotion::clamped(last)));
    }
    ConstraintSystem::assemble(&constraints, &state)
}

#[test]
fn the_multiplier_solves_by_rows_are_the_serial_solves() {
    let fibers = fibers();
    let system = constraint_system(&fibers, false);
    let n = fibers.bead_count();
    let (_, forces, torques) = beads(n);
    let mobility = rpy(0.5);
    let solvers = [
        MultiplierSolver::Direct,
        MultiplierSolver::ConjugateGradient {
            tolerance: 1e-11,
            max_iterations: 300,
        },
    ];
    for solver in solvers {
        let solve = |comm: &dyn silt_parallel::Communicator| {
            let motion = solve_constrained(
                comm,
                &mobility,
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
            .unwrap();
            (
                motion
                    .multipliers
                    .iter()
                    .map(|x| x.to_bits())
                    .collect::<Vec<_>>(),
                bits(&motion.velocities),
                bits(&motion.angular_velocities),
                motion.iterations,
            )
        };
        let serial = solve(&SingleRank);
        for ranks in 2..=4 {
            for (rank, result) in LocalGroup::run(ranks, |comm| solve(&*comm))
                .into_iter()
                .enumerate()
            {
                assert_eq!(result, serial, "{solver:?}, rank {rank} of {ranks}");
            }
        }
    }
}

#[test]
fn a_failed_solve_fails_on_every_rank_with_the_same_message() {
    let mut fibers = fibers();
    fibers
        .add_straight(2, Vec3::new(0.0, -4.0, 0.0), Vec3::X)
        .unwrap();
    assert_eq!(fibers.bead_count(), 43);
    let system = constraint_system(&fibers, true);
    let n = fibers.bead_count();
    let (_, forces, torques) = beads(n);
    let mobility = rpy(0.5);
    let solve = |comm: &dyn silt_parallel::Communicator| {
        solve_constrained(
            comm,
            &mobility,
            &fibers.positions,
            &system,
            Loads {
                forces: &forces,
                torques: &torques,
            },
            None,
            MultiplierSolver::ConjugateGradient {
                tolerance: 1e-11,
                max_iterations: 300,
            },
            None,
        )
        .map(|m| m.multipliers.len())
    };
    let serial = solve(&SingleRank).unwrap_err();
    assert!(serial.contains("redundant"), "{serial}");
    for ranks in 2..=4 {
        for (rank, result) in LocalGroup::run(ranks, |comm| solve(&*comm))
            .into_iter()
            .enumerate()
        {
            assert_eq!(result, Err(serial.clone()), "rank {rank} of {ranks}");
        }
    }
}

#[test]
fn steps_by_rows_follow_the_serial_run() {
    let run = |comm: silt_parallel::Comm| {
        let fibers = fibers();
        let n = fibers.bead_count();
        let mut system = FiberSystem::new(fibers, rpy(0.5), Bending::straight(2.0, 5).unwrap());
        system.comm = comm;
        system.bead_force = Vec3::new(0.0, 0.0, -1.0);
        system.solver = MultiplierSolver::ConjugateGradient {
            tolerance: 1e-12,
            max_iterations: 300,
        };
        assert_eq!(system.orientations, vec![DQuat::IDENTITY; n]);
        let mut integrator = AdamsBashforth::default();
        for _ in 0..4 {
            system.step(1e-3, &mut integrator).unwrap();
        }
        bits(&system.fibers.positions)
    };
    let serial = run(SingleRank::comm());
    for ranks in [2, 3] {
        for (rank, positions) in LocalGroup::run(ranks, run).into_iter().enumerate() {
            assert_eq!(positions, serial, "rank {rank} of {ranks}");
        }
    }
}
