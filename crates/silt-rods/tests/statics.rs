//! Static solver (Newton with the analytic Hessian) on the known answers: the axial stretch
//! dx = F L / (E A) (within 0.1 %) and PyElastica's Timoshenko cantilever, 0.067770 (within 1 %), also
//! in the unshearable limit 0.044003 (shear stiffness raised a thousandfold).

use silt_core::Vec3;
use silt_rods::boundary::{Boundary, EndMotion, Support};
use silt_rods::dynamics::{Inertia, Loads, RodModel};
use silt_rods::loads::EndLoad;
use silt_rods::rod::{End, Rod, Stiffness};
use silt_rods::statics::{solve_static, StaticOptions};

/// The first end clamped, density 1000.
fn clamped(rod: &mut Rod, radius: f64, loads: Loads) -> RodModel {
    let clamp = Boundary::new(rod, End::First, Support::Clamped, EndMotion::default());
    RodModel {
        loads,
        boundaries: vec![clamp],
        ..RodModel::new(Inertia::circular(rod, radius, 1000.0))
    }
}

#[test]
fn axial_stretch_is_f_l_over_e_a() {
    let (radius, young) = (0.025, 1e4);
    let stiffness = Stiffness::circular(radius, young, young / 3.0, 1.0);
    let mut rod = Rod::straight(19, 1.0, Vec3::ZERO, Vec3::X, Vec3::Y, stiffness).unwrap();
    let model = clamped(
        &mut rod,
        radius,
        Loads {
            node_forces: vec![(19, Vec3::new(1.0, 0.0, 0.0))],
            ..Loads::default()
        },
    );
    let report = solve_static(&mut rod, &model, StaticOptions::default()).unwrap();
    let stretch = rod.nodes[19].x - 1.0;
    let expected = 1.0 / (young * std::f64::consts::PI * radius * radius);
    eprintln!("stretch {stretch} vs {expected}, {report:?}");
    assert!((stretch / expected - 1.0).abs() < 1e-3);
}

fn cantilever(shear_factor: f64) -> (f64, silt_rods::statics::StaticReport) {
    cantilever_with(100, shear_factor)
}

fn cantilever_at(segments: usize) -> (f64, silt_rods::statics::StaticReport) {
    cantilever_with(segments, 1.0)
}

fn cantilever_with(segments: usize, shear_factor: f64) -> (f64, silt_rods::statics::StaticReport) {
    let (length, radius) = (3.0, 0.25);
    let stiffness = Stiffness::circular(radius, 1e6, 1e4 * shear_factor, 27.0 / 28.0);
    let mut rod = Rod::straight(segments, length, Vec3::ZERO, Vec3::Z, Vec3::X, stiffness).unwrap();
    let model = clamped(
        &mut rod,
        radius,
        Loads {
            node_forces: vec![(segments, Vec3::new(-15.0, 0.0, 0.0))],
            ..Loads::default()
        },
    );
    let report = solve_static(&mut rod, &model, StaticOptions::default()).unwrap();
    (-rod.nodes[segments].x, report)
}

#[test]
fn timoshenko_cantilever_by_the_static_solver() {
    let (tip, report) = cantilever(1.0);
    let expected = 0.044003 + 0.023767;
    eprintln!(
        "tip {tip} vs {expected}: {:+.3} %, {report:?}",
        100.0 * (tip / expected - 1.0)
    );
    assert!((tip / expected - 1.0).abs() < 0.01);
    assert!(report.newton_steps <= 10, "{report:?}");
    let (tip, report) = cantilever(1000.0);
    let expected = 0.044003;
    eprintln!(
        "unshearable: tip {tip} vs {expected}: {:+.3} %, {report:?}",
        100.0 * (tip / expected - 1.0)
    );
    assert!((tip / expected - 1.0).abs() < 0.01);
}

/// A clamped rod under an end couple M bends into a circular arc of radius R = EI/M. Here M rolls
/// it into a half circle (L/R = π, large rotations, in load steps), dead or follower (a couple about
/// the normal of the plane of bending turns with the tip, so both give the arc).
///
/// The discrete rod's exact answer is a polygon: the moment a bending node passes on is
/// `EI cos(Δθ/2) (2/h̄) sin(Δθ/2)`, so interior nodes turn by `Δθ = asin(M h / EI)` and the clamp's
/// half-length node by `asin(M h / (2 EI))`; no force, so no stretch. The solver must meet that
/// polygon to the Newton tolerance, and the polygon the continuum arc to O(h²).
#[test]
fn end_couple_rolls_the_rod_into_an_arc() {
    let (segments, length, radius, young) = (50, 1.0, 0.01, 1e7);
    let stiffness = Stiffness::circular(radius, young, young / 3.0, 0.9);
    let bending = stiffness.bending_torsion.x;
    let moment = std::f64::consts::PI * bending / length;
    let bending_radius = bending / moment;
    let h = length / segments as f64;
    let clamp_turn = (moment * h / (2.0 * bending)).asin();
    let node_turn = (moment * h / bending).asin();
    let polygon_tip: Vec3 = (0..segments)
        .map(|j| {
            let angle = clamp_turn + j as f64 * node_turn;
            h * Vec3::new(angle.cos(), 0.0, angle.sin())
        })
        .sum();
    let angle = length / bending_radius;
    let arc_tip = bending_radius * Vec3::new(angle.sin(), 0.0, 1.0 - angle.cos());
    // The rod along x, d1 = y: a couple about -d1 (world -y) bends it up in the xz plane.
    for follower in [false, true] {
        let mut rod =
            Rod::straight(segments, length, Vec3::ZERO, Vec3::X, Vec3::Y, stiffness).unwrap();
        let torque = if follower {
            Vec3::new(-moment, 0.0, 0.0)
        } else {
            Vec3::new(0.0, -moment, 0.0)
        };
        let model = clamped(
            &mut rod,
            radius,
            Loads {
                end_loads: vec![EndLoad {
                    end: End::Last,
                    force: Vec3::ZERO,
                    torque,
                    follower,
                }],
                ..Loads::default()
            },
        );
        let report = solve_static(
            &mut rod,
            &model,
            StaticOptions {
                load_steps: 16,
                ..StaticOptions::default()
            },
        )
        .unwrap();
        let tip = rod.nodes[segments];
        eprintln!(
            "follower {follower}: tip {tip}; from the discrete polygon {:e} R, from the arc {:e} R; {report:?}",
            (tip - polygon_tip).length() / bending_radius,
            (tip - arc_tip).length() / bending_radius
        );
        assert!(
            (tip - polygon_tip).length() < 1e-7 * bending_radius,
            "{tip} vs {polygon_tip}"
        );
        assert!(
            (tip - arc_tip).length() < 5e-3 * bending_radius,
            "{tip} vs {arc_tip}"
        );
    }
}

/// The banded Newton solve scales linearly: the Timoshenko cantilever at 2,000 segments converges
/// in the same few Newton steps, well within a second, and closer to the continuum (h² error).
#[test]
fn static_solver_scales_to_thousands_of_segments() {
    let start = std::time::Instant::now();
    let (tip, report) = cantilever_at(2000);
    let seconds = start.elapsed().as_secs_f64();
    eprintln!("2000 segments: tip {tip}, {report:?} in {seconds:.3} s");
    assert!(report.newton_steps <= 6, "{report:?}");
    // Against Richardson's limit of 25/50/100 (rod-statics): 0.06774842.
    assert!((tip - 0.067748_42).abs() < 1e-7, "{tip}");
}

/// A cantilever of unit length and bending stiffness, shear and extension stiffness `ratio` (in
/// units of EI / L²), `segments` long, under a dead tip force `alpha` across it, from the options.
fn stiff_cantilever(
    ratio: f64,
    alpha: f64,
    segments: usize,
    options: StaticOptions,
) -> (Result<silt_rods::statics::StaticReport, String>, Vec3) {
    let stiffness = Stiffness {
        shear_extension: Vec3::splat(ratio),
        bending_torsion: Vec3::ONE,
    };
    let mut rod = Rod::straight(segments, 1.0, Vec3::ZERO, Vec3::X, Vec3::Y, stiffness).unwrap();
    let model = clamped(
        &mut rod,
        0.01,
        Loads {
            node_forces: vec![(segments, Vec3::new(0.0, -alpha, 0.0))],
            ..Loads::default()
        },
    );
    let report = solve_static(&mut rod, &model, options);
    (report, rod.nodes[segments])
}

/// Issue 21: stiff rods (EA L²/EI up to 1e12; steel is ~1e6 L²/r²) converge from one load
/// increment in a few Newton steps, and meet the inextensible elastica (Mattiasson 1981, Table 1:
/// (δ_h, δ_v)/L = (0.05643, 0.30172) at F L²/EI = 1, (0.38763, 0.71379) at 5, (0.55500, 0.81061) at
/// 10) to the discretisation error. Before the mixed Newton step and the trust region, 1e7 at
/// F L²/EI = 10 failed with 20 equal load steps.
#[test]
fn stiff_cantilevers_converge_from_one_increment() {
    let elastica = [
        (1.0, 0.05643, 0.30172),
        (5.0, 0.38763, 0.71379),
        (10.0, 0.55500, 0.81061),
    ];
    for ratio in [1e4, 1e7, 1e10, 1e12] {
        for (alpha, shortening, deflection) in elastica {
            let (report, tip) = stiff_cantilever(ratio, alpha, 100, StaticOptions::default());
            let report = report.unwrap_or_else(|e| panic!("EA/EI {ratio:e}, alpha {alpha}: {e}"));
            eprintln!("EA/EI {ratio:e}, alpha {alpha}: tip {tip}, {report:?}");
            assert_eq!(
                (report.load_steps, report.rejected_steps),
                (1, 0),
                "{report:?}"
            );
            assert!(report.newton_steps <= 12, "{report:?}");
            // Discretisation (h = 0.01): below 2e-4; extension and shear add about F/(k G A).
            let tolerance = 2e-4 + 1.5 * alpha / ratio;
            assert!((1.0 - tip.x - shortening).abs() < tolerance, "{tip}");
            assert!((-tip.y - deflection).abs() < tolerance, "{tip}");
        }
    }
}

/// The load-step control cuts an increment that fails and retries it; it gives up below the
/// smallest increment with a message that names the load factor reached.
#[test]
fn failed_increments_are_cut_and_the_last_failure_is_explained() {
    // Two Newton steps are not enough for the full load: the increments are cut until they are.
    let options = StaticOptions {
        max_newton_steps: 3,
        ..StaticOptions::default()
    };
    let (report, tip) = stiff_cantilever(1e7, 10.0, 50, options);
    let report = report.unwrap();
    eprintln!("at most 3 Newton steps per increment: {report:?}, tip {tip}");
    assert!(
        report.rejected_steps > 0 && report.load_steps > 1,
        "{report:?}"
    );
    assert!((-tip.y - 0.81061).abs() < 1e-3, "{tip}");
    // One Newton step per increment and no cut below a quarter of the load: it must give up.
    let options = StaticOptions {
        max_newton_steps: 1,
        min_increment: 0.25,
        ..StaticOptions::default()
    };
    let error = stiff_cantilever(1e7, 10.0, 50, options).0.unwrap_err();
    eprintln!("{error}");
    assert!(
        error.contains("could not pass load factor 0.000000"),
        "{error}"
    );
    assert!(error.contains("held against rigid motion"), "{error}");
}
