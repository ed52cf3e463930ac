//! The solver's contract: refusals with clear messages, a diverging run stops, results independent of
//! the thread count, restarts bit for bit, and the per-stage volume-force hook.

use silt_fluid::{
    Boundaries, Boundary, Driving, Field, FluidConfig, FluidSolver, Grid, HelmholtzMethod,
    StageForcing, TimeStep, Unknowns, Viscous,
};

fn config(cells: [usize; 3], boundaries: Boundaries, viscous: Viscous, dt: f64) -> FluidConfig {
    FluidConfig {
        grid: Grid {
            cells,
            spacing: 0.1,
            origin: [0.0; 3],
            offset: [0; 3],
        },
        boundaries,
        viscosity: 0.01,
        viscous,
        driving: Driving::None,
        body_force: silt_fluid::Signal::constants([0.0; 3]),
        time_step: TimeStep::Fixed(dt),
    }
}

fn refusal(config: FluidConfig) -> String {
    match FluidSolver::new(config) {
        Ok(_) => panic!("accepted"),
        Err(e) => e,
    }
}

#[test]
fn impossible_set_ups_are_refused_with_a_reason() {
    let mut b = Boundaries::periodic();
    b.faces[1][0] = Boundary::WALL;
    let e = refusal(config([8, 8, 8], b, Viscous::CrankNicolson, 1e-3));
    assert!(e.contains("periodic at one end only"), "{e}");

    let mut b = Boundaries::channel(1);
    b.faces[1][1] = Boundary::NoSlip {
        velocity: [0.0, 1.0, 0.0],
    };
    let e = refusal(config([8, 8, 8], b, Viscous::CrankNicolson, 1e-3));
    assert!(e.contains("normal to itself"), "{e}");

    let e = refusal(config(
        [8, 2, 8],
        Boundaries::channel(1),
        Viscous::CrankNicolson,
        1e-3,
    ));
    assert!(e.contains("at least 3"), "{e}");

    let e = refusal(config(
        [8, 8, 1],
        Boundaries::periodic(),
        Viscous::CrankNicolson,
        1e-3,
    ));
    assert!(e.contains("at least 2"), "{e}");

    // Explicit viscous terms: nu dt / h^2 = 0.5 is beyond the RK3 limit 2.51 / 12.
    let e = refusal(config(
        [8, 8, 8],
        Boundaries::periodic(),
        Viscous::Explicit,
        0.5,
    ));
    assert!(e.contains("viscous stability limit"), "{e}");

    let mut c = config([8, 8, 8], Boundaries::periodic(), Viscous::Explicit, 1e-3);
    c.time_step = TimeStep::Cfl { cfl: 2.0, max: 1.0 };
    let e = refusal(c);
    assert!(e.contains("CFL number must lie in"), "{e}");

    let mut c = config([8, 8, 8], Boundaries::channel(1), Viscous::Explicit, 1e-3);
    c.driving = Driving::FlowRate {
        axis: 1,
        bulk_velocity: 1.0.into(),
    };
    let e = refusal(c);
    assert!(e.contains("not periodic"), "{e}");
}

fn taylor_green(solver: &mut FluidSolver) {
    let l = solver.grid().lengths();
    let k = l.map(|l| 2.0 * std::f64::consts::PI / l);
    solver.set_velocity(|c, [x, y, z]| match c {
        0 => (k[0] * x).sin() * (k[1] * y).cos() * (k[2] * z).cos(),
        1 => -(k[0] * x).cos() * (k[1] * y).sin() * (k[2] * z).cos(),
        _ => 0.0,
    });
}

#[test]
fn a_run_beyond_the_cfl_limit_stops_with_a_message() {
    // Crank–Nicolson has no viscous limit; dt = 0.5 with |u| ~ 1 on h = 0.1 is a CFL number of ~10.
    let mut s = FluidSolver::new(config(
        [8, 8, 8],
        Boundaries::periodic(),
        Viscous::CrankNicolson,
        0.5,
    ))
    .unwrap();
    taylor_green(&mut s);
    let error = (0..20)
        .find_map(|_| s.step().err())
        .expect("the run must stop");
    let message = error.to_string();
    assert!(
        message.contains("CFL") || message.contains("finite"),
        "{message}"
    );
}

fn run(config: &FluidConfig, steps: u64) -> FluidSolver {
    let mut s = FluidSolver::new(config.clone()).unwrap();
    taylor_green(&mut s);
    for _ in 0..steps {
        s.step().unwrap();
    }
    s
}

fn bits(f: &Field) -> Vec<u64> {
    f.data.iter().map(|v| v.to_bits()).collect()
}

fn channel_config(viscous: Viscous) -> FluidConfig {
    let mut c = config([12, 10, 8], Boundaries::channel(1), viscous, 0.01);
    c.boundaries.faces[2] = [Boundary::FreeSlip, Boundary::WALL];
    c.driving = Driving::FlowRate {
        axis: 0,
        bulk_velocity: 0.5.into(),
    };
    c
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    for config in [
        config([12, 10, 8], Boundaries::periodic(), Viscous::Explicit, 0.01),
        channel_config(Viscous::CrankNicolson),
    ] {
        let runs: Vec<FluidSolver> = [1, 2]
            .map(|threads| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(|| run(&config, 6))
            })
            .into();
        for c in 0..3 {
            assert_eq!(
                bits(&runs[0].state.velocity[c]),
                bits(&runs[1].state.velocity[c])
            );
        }
        assert_eq!(bits(&runs[0].state.pressure), bits(&runs[1].state.pressure));
    }
}

/// At small viscous numbers the Crank–Nicolson systems go to Jacobi sweeps, whose answer agrees with
/// the direct solver's to the sweeps' accuracy; at large ones the direct solver takes over.
#[test]
fn jacobi_and_direct_helmholtz_solves_agree() {
    let config = channel_config(Viscous::CrankNicolson);
    let mut auto = FluidSolver::new(config.clone()).unwrap();
    let mut direct = FluidSolver::new(config.clone()).unwrap();
    direct.helmholtz_method = HelmholtzMethod::Direct;
    for _ in 0..6 {
        auto.step().unwrap();
        direct.step().unwrap();
    }
    let plan = auto.helmholtz_plan(0.01).unwrap();
    assert!(
        plan.iter().all(|s| s.is_some_and(|n| (1..=8).contains(&n))),
        "{plan:?}"
    );
    assert_eq!(direct.helmholtz_plan(0.01), Some([None; 3]));
    assert_eq!(auto.times.jacobi_solves, 6 * 3 * 3);
    assert_eq!(auto.times.direct_solves, 0);
    assert_eq!(direct.times.jacobi_solves, 0);
    let mut largest = 0.0f64;
    let mut difference = 0.0f64;
    for c in 0..3 {
        for (p, q) in auto.state.velocity[c]
            .data
            .iter()
            .zip(&direct.state.velocity[c].data)
        {
            largest = largest.max(q.abs());
            difference = difference.max((p - q).abs());
        }
    }
    assert!(largest > 0.1, "the flow moves: {largest}");
    assert!(difference > 0.0, "two different solvers");
    assert!(difference < 1e-11 * largest, "difference {difference:e}");

    // A hundred times the viscosity: the viscous number asks for more sweeps than are worth making.
    let mut viscous = config;
    viscous.viscosity = 1.0;
    let mut s = FluidSolver::new(viscous).unwrap();
    assert_eq!(s.helmholtz_plan(0.01), Some([None; 3]));
    s.step().unwrap();
    assert_eq!(s.times.jacobi_solves, 0);
    assert_eq!(s.times.direct_solves, 9);
}

#[test]
fn a_restart_continues_bit_for_bit() {
    for viscous in [Viscous::Explicit, Viscous::CrankNicolson] {
        let config = channel_config(viscous);
        let continuous = run(&config, 8);
        let first_leg = run(&config, 3);
        let mut second_leg = FluidSolver::new(config.clone()).unwrap();
        second_leg.restore(first_leg.state.clone()).unwrap();
        for _ in 0..5 {
            second_leg.step().unwrap();
        }
        assert_eq!(continuous.state, second_leg.state, "{viscous:?}");
    }
}

/// A uniform force along x in every stage, through the hook.
struct UniformForce(f64);

impl StageForcing for UniformForce {
    fn add_force(
        &mut self,
        stage: usize,
        dt: f64,
        _velocity: &[Field; 3],
        _unknowns: &[Unknowns; 3],
        delta: &mut [Vec<f64>; 3],
    ) {
        let stage_length = silt_core::rk3::stage_fraction(stage) * dt;
        for d in &mut delta[0] {
            *d += self.0 * stage_length;
        }
    }
}

#[test]
fn the_stage_volume_force_accelerates_a_periodic_box_uniformly() {
    let mut s = FluidSolver::new(config(
        [8, 6, 4],
        Boundaries::periodic(),
        Viscous::CrankNicolson,
        0.05,
    ))
    .unwrap();
    let mut force = UniformForce(2.0);
    for _ in 0..10 {
        s.step_with(&mut force).unwrap();
    }
    let unknowns = *s.velocity_unknowns(0);
    let mean = silt_fluid::diagnostics::mean_over(&s.state.velocity[0], &unknowns);
    assert!((mean - 2.0 * 0.5).abs() < 1e-13, "mean u = {mean}");
}

#[test]
fn inflow_needs_an_outflow_and_must_point_inwards() {
    let inflow = Boundary::Inflow {
        velocity: [1.0, 0.0, 0.0],
        profile: silt_fluid::boundary::InflowProfile::Uniform,
    };
    let mut b = Boundaries::channel(1);
    b.faces[0] = [inflow, Boundary::WALL];
    let e = refusal(config([8, 8, 4], b, Viscous::CrankNicolson, 1e-3));
    assert!(e.contains("needs an outflow"), "{e}");
    b.faces[0] = [Boundary::Outflow, inflow];
    let e = refusal(config([8, 8, 4], b, Viscous::CrankNicolson, 1e-3));
    assert!(e.contains("does not point into the domain"), "{e}");
}

/// Developing channel flow: parabolic inflow at x = 0, convective outflow at x = L, walls in y.
#[test]
fn inflow_and_outflow_carry_a_developed_channel_flow_through() {
    let mut b = Boundaries::channel(1);
    b.faces[0] = [
        Boundary::Inflow {
            velocity: [1.0, 0.0, 0.0],
            profile: silt_fluid::boundary::InflowProfile::Parabolic,
        },
        Boundary::Outflow,
    ];
    let ny = 16;
    let mut c = config([2 * ny, ny, 2], b, Viscous::CrankNicolson, 0.02);
    c.grid.spacing = 1.0 / ny as f64;
    c.viscosity = 0.1;
    let mut s = FluidSolver::new(c).unwrap();
    s.set_velocity(|c, [_, y, _]| if c == 0 { 6.0 * y * (1.0 - y) } else { 0.0 });
    for _ in 0..300 {
        s.step().unwrap();
    }
    let h = s.grid().spacing;
    let mut work = Vec::new();
    let divergence =
        silt_fluid::projection::max_divergence(&s.state.velocity, s.cells(), h, &mut work);
    assert!(divergence * h < 1e-12, "divergence {divergence:e}");
    // Mass balance: the flux through the outflow face equals the inflow's.
    let u = &s.state.velocity[0];
    let n = s.grid().cells[0];
    let flux = |i: usize| (1..=ny).map(|j| u.at(i, j, 1)).sum::<f64>() * h;
    assert!((flux(0) - 1.0).abs() < 1e-12, "inflow flux {}", flux(0));
    assert!(
        (flux(n) - flux(0)).abs() < 1e-12,
        "outflow flux {} ",
        flux(n)
    );
    // Near the outflow the profile is the developed parabola, to the discretisation error.
    let worst = (1..=ny)
        .map(|j| {
            let y = (j as f64 - 0.5) * h;
            (u.at(n - 1, j, 1) - 6.0 * y * (1.0 - y)).abs()
        })
        .fold(0.0, f64::max);
    eprintln!("outflow profile deviation {worst:e}");
    assert!(worst < 0.02, "outflow profile off by {worst}");
    let v_max = s.state.velocity[1]
        .data
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(v_max < 0.02, "cross-flow {v_max}");
}

/// The flow rate held as the seed's eq. 32 (the fluid fraction 1 - phi weighting the streamwise velocity
/// at each face): with weights that leave the lower third of the channel mostly solid, the weighted mean
/// is held at its target to round-off, explicit and Crank–Nicolson alike, while the plain mean then
/// exceeds it; without weights the plain mean is held as before. Wrong weights are refused.
#[test]
fn the_flow_rate_can_be_held_as_the_fluid_weighted_flux() {
    for viscous in [Viscous::Explicit, Viscous::CrankNicolson] {
        let config = channel_config(viscous);
        let mut s = FluidSolver::new(config.clone()).unwrap();
        let [n0, n1, n2] = config.grid.cells;
        // The unknowns of u_x (periodic x): n0 x n1 x n2, x fastest; y is the wall-normal axis.
        let weights: Vec<f64> = (0..n0 * n1 * n2)
            .map(|i| if (i / n0) % n1 < n1 / 3 { 0.2 } else { 1.0 })
            .collect();
        s.set_flow_rate_weights(Some(weights.clone())).unwrap();
        for _ in 0..20 {
            s.step().unwrap();
        }
        let held = s.held_flow_rate().unwrap();
        assert!((held - 0.5).abs() < 1e-12, "{viscous:?}: {held}");
        s.set_flow_rate_weights(None).unwrap();
        let plain = s.held_flow_rate().unwrap();
        assert!(plain > 0.5 + 1e-3, "{viscous:?}: plain mean {plain}");
        for _ in 0..5 {
            s.step().unwrap();
        }
        let plain = s.held_flow_rate().unwrap();
        assert!((plain - 0.5).abs() < 1e-12, "{viscous:?}: {plain}");
        let e = s.set_flow_rate_weights(Some(vec![1.0; 3])).unwrap_err();
        assert!(e.contains("3 flow-rate weights"), "{e}");
    }
    let mut still = FluidSolver::new(config(
        [8, 8, 8],
        Boundaries::periodic(),
        Viscous::Explicit,
        1e-3,
    ))
    .unwrap();
    assert!(still.set_flow_rate_weights(Some(vec![1.0; 512])).is_err());
    assert_eq!(still.held_flow_rate(), None);
}
