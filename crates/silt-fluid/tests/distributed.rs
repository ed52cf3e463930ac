//! The fluid on several ranks (slabs of z planes and pencils of x lines, ranks as threads:
//! `silt_parallel::LocalGroup`) against the serial solver: every rank's fields, ghosts included, are
//! bit for bit the serial solver's after several steps, for periodic and bounded z, even and uneven slabs, flow-rate
//! driving with and without weights, and a CFL-chosen time step.

use silt_fluid::{
    Boundaries, Boundary, Driving, Field, FluidConfig, FluidSolver, Grid, HelmholtzMethod, Signal,
    TimeStep, Viscous,
};
use silt_parallel::LocalGroup;

fn config(cells: [usize; 3], boundaries: Boundaries, viscous: Viscous) -> FluidConfig {
    FluidConfig {
        grid: Grid {
            cells,
            spacing: 0.1,
            origin: [0.0, -0.3, 0.2],
            offset: [0; 3],
        },
        boundaries,
        viscosity: 0.02,
        viscous,
        driving: Driving::None,
        body_force: Signal::constants([0.0; 3]),
        time_step: TimeStep::Cfl {
            cfl: 0.5,
            max: 2e-2,
        },
    }
}

/// A smooth, fully three-dimensional start (divergence is removed by the first projection).
fn start(c: usize, x: [f64; 3]) -> f64 {
    let [a, b, z] = x;
    match c {
        0 => (2.1 * a).sin() * (1.3 * b).cos() * (0.9 * z).cos() + 0.3,
        1 => -(1.1 * a).cos() * (1.7 * b).sin() * (2.3 * z).cos(),
        _ => 0.4 * (0.7 * a).cos() * (1.9 * b).cos() * (2.9 * z).sin(),
    }
}

/// The solver's fields after `steps` steps, with `weights(position)` as flow-rate weights.
fn fields(
    solver: &mut FluidSolver,
    method: HelmholtzMethod,
    steps: usize,
    weighted: bool,
) -> Vec<Field> {
    solver.helmholtz_method = method;
    solver.set_velocity(start);
    solver.set_pressure(|x| x[0] * x[2]);
    if weighted {
        let axis = solver.config.driving.axis().unwrap();
        let grid = *solver.grid();
        let unknowns = *solver.velocity_unknowns(axis);
        let mut weights = Vec::with_capacity(unknowns.len());
        for k in 0..unknowns.shape[2] {
            for j in 0..unknowns.shape[1] {
                for i in 0..unknowns.shape[0] {
                    let index = [i, j, k].map(|a| a + 1);
                    let x = grid.point(silt_fluid::Location::Face(axis), index);
                    weights.push(1.0 - 0.4 * (3.0 * x[2]).sin().powi(2) * (x[0] * 7.0).cos().abs());
                }
            }
        }
        solver.set_flow_rate_weights(Some(weights)).unwrap();
    }
    for _ in 0..steps {
        solver.step().unwrap();
    }
    let s = &solver.state;
    vec![
        s.velocity[0].clone(),
        s.velocity[1].clone(),
        s.velocity[2].clone(),
        s.pressure.clone(),
    ]
}

/// Runs `config` serially and on 1-4 ranks and compares every rank's planes with the serial ones,
/// with the Crank–Nicolson systems solved directly and by Jacobi sweeps where they suffice.
fn same_on_every_rank_count(config: FluidConfig, steps: usize, weighted: bool) {
    for method in [HelmholtzMethod::Direct, HelmholtzMethod::Auto] {
        same_with(config.clone(), method, steps, weighted);
    }
}

fn same_with(config: FluidConfig, method: HelmholtzMethod, steps: usize, weighted: bool) {
    let mut serial = FluidSolver::new(config.clone()).unwrap();
    let expected = fields(&mut serial, method, steps, weighted);
    if method == HelmholtzMethod::Auto && config.viscous == Viscous::CrankNicolson {
        assert!(
            serial.times.jacobi_solves > 0,
            "the Jacobi sweeps are not exercised: {:?}",
            serial.times
        );
    }
    let serial_time = serial.state.time;
    // Slabs of z planes on 1-4 ranks, and pencils: blocks of y rows and z planes.
    let grids = [[1, 1], [1, 2], [1, 3], [1, 4], [2, 1], [3, 1], [2, 2]];
    for dims in grids {
        let ranks = dims[0] * dims[1];
        let results = LocalGroup::run(ranks, |comm| {
            let mut solver = FluidSolver::on_process_grid(config.clone(), comm, dims).unwrap();
            let block = [solver.decomposition().rows(), solver.decomposition().slab()];
            (
                block,
                fields(&mut solver, method, steps, weighted),
                solver.state.time,
            )
        });
        for (rank, ([rows, slab], local, time)) in results.into_iter().enumerate() {
            assert_eq!(time, serial_time, "rank {rank} of {dims:?}: the clock");
            for (f, (mine, whole)) in local.iter().zip(&expected).enumerate() {
                // Local rows and planes 0..=n+1 (ghosts included) are the global rows
                // rows.start..=rows.end + 1 of planes slab.start..=slab.end + 1.
                let row = whole.dims[0];
                let global: Vec<f64> = (slab.start..slab.end + 2)
                    .flat_map(|k| {
                        let first = whole.index(0, rows.start, k);
                        whole.data[first..first + row * (rows.len() + 2)].to_vec()
                    })
                    .collect();
                let worst = mine
                    .data
                    .iter()
                    .zip(&global)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                assert!(
                    mine.data == global,
                    "{:?} ({method:?}): field {f} on rank {rank} of {dims:?} (rows {rows:?}, \
                     planes {slab:?}) differs from the serial one by up to {worst:e}",
                    config.grid.cells
                );
            }
        }
    }
}

#[test]
fn a_periodic_box_is_the_same_on_one_to_four_ranks() {
    same_on_every_rank_count(
        config([12, 10, 11], Boundaries::periodic(), Viscous::CrankNicolson),
        4,
        false,
    );
}

#[test]
fn a_channel_held_at_its_flow_rate_is_the_same_on_one_to_four_ranks() {
    // Walls across z (the split axis), flow-rate driving along x; weighted as a sheared bed's eq. 32.
    let mut c = config([10, 8, 13], Boundaries::channel(2), Viscous::CrankNicolson);
    c.driving = Driving::FlowRate {
        axis: 0,
        bulk_velocity: Signal::Constant(0.7),
    };
    same_on_every_rank_count(c.clone(), 4, false);
    same_on_every_rank_count(c, 3, true);
}

#[test]
fn moving_and_free_slip_walls_with_explicit_viscosity_are_the_same_on_one_to_four_ranks() {
    let mut b = Boundaries::channel(2);
    b.faces[2][0] = Boundary::FreeSlip;
    b.faces[2][1] = Boundary::NoSlip {
        velocity: [0.5, -0.2, 0.0],
    };
    // Walls across y as well (a duct), and a body force.
    b.faces[1] = [Boundary::WALL; 2];
    let mut c = config([9, 8, 12], b, Viscous::Explicit);
    c.body_force = Signal::constants([0.3, 0.0, -0.1]);
    same_on_every_rank_count(c, 5, false);
}

#[test]
fn too_many_ranks_and_open_boundaries_are_refused_with_the_limit() {
    let c = config([12, 10, 5], Boundaries::periodic(), Viscous::CrankNicolson);
    let errors = LocalGroup::run(3, |comm| match FluidSolver::distributed(c.clone(), comm) {
        Ok(_) => String::new(),
        Err(e) => e,
    });
    assert!(errors[0].contains("use at most 2 ranks"), "{}", errors[0]);

    let mut b = Boundaries::channel(2);
    b.faces[0] = [
        Boundary::Inflow {
            velocity: [1.0, 0.0, 0.0],
            profile: silt_fluid::boundary::InflowProfile::Uniform,
        },
        Boundary::Outflow,
    ];
    let c = config([12, 10, 8], b, Viscous::CrankNicolson);
    let errors = LocalGroup::run(2, |comm| match FluidSolver::distributed(c.clone(), comm) {
        Ok(_) => String::new(),
        Err(e) => e,
    });
    assert!(errors[1].contains("inflow and outflow"), "{}", errors[1]);
    // One rank runs them.
    assert!(LocalGroup::run(1, |comm| FluidSolver::distributed(c.clone(), comm).is_ok())[0]);
}

/// The figures of the flow (kinetic energy, means, wall stress, divergence, CFL and the profiles
/// along each axis) of a channel with walls across z and across y, on slabs and pencils: the serial
/// solver's numbers, bit for bit, on every rank.
#[test]
fn the_flows_figures_are_the_serial_ones_on_slabs_and_pencils() {
    let mut b = Boundaries::channel(2);
    b.faces[1] = [
        Boundary::WALL,
        Boundary::NoSlip {
            velocity: [0.3, 0.0, 0.1],
        },
    ];
    let mut c = config([9, 10, 12], b, Viscous::CrankNicolson);
    c.driving = Driving::FlowRate {
        axis: 0,
        bulk_velocity: Signal::Constant(0.7),
    };
    type Figures = (Vec<f64>, Vec<Vec<[f64; 5]>>);
    let figures = |solver: &mut FluidSolver| -> Figures {
        fields(solver, HelmholtzMethod::Auto, 3, false);
        let mut work = Vec::new();
        let mut scalars = vec![
            solver.kinetic_energy(),
            solver.mean_velocity(0),
            solver.mean_velocity(1),
            solver.max_divergence(&mut work),
            solver.cfl(0.01),
            solver.held_flow_rate().unwrap(),
        ];
        for (axis, side) in [(2, 0), (2, 1), (1, 0), (1, 1)] {
            for c in 0..3 {
                scalars.extend(solver.wall_shear_stress(axis, side, c));
            }
        }
        let profiles = (0..3).map(|axis| solver.profiles(axis)).collect();
        (scalars, profiles)
    };
    let mut serial = FluidSolver::new(c.clone()).unwrap();
    let expected = figures(&mut serial);
    assert_eq!(expected.0.len(), 6 + 8, "every wall's stresses");
    for dims in [[1, 3], [2, 1], [3, 1], [2, 2], [4, 1]] {
        let results = LocalGroup::run(dims[0] * dims[1], |comm| {
            let mut solver = FluidSolver::on_process_grid(c.clone(), comm, dims).unwrap();
            figures(&mut solver)
        });
        for (rank, got) in results.into_iter().enumerate() {
            assert!(
                got == expected,
                "rank {rank} of {dims:?}: the figures {:?} differ from the serial {:?}",
                got.0,
                expected.0
            );
        }
    }
}
