//! Quick versions of the rod validation cases (`silt validate rod-*` runs them at full size).

use silt_validation::rod_cases::*;

/// The analytic localized helix for PyElastica's case (shortening 0.03 L, 27 turns, γ = 0.789/1.345)
/// has the end moment and tension its post-processing quotes (98.5415 and 2900.99, from MATLAB's
/// vpasolve), and meets both end conditions.
#[test]
fn analytic_helix_matches_the_quoted_loads() {
    let (m, t) = helix_loads(0.03, 27.0 * 2.0 * std::f64::consts::PI, 0.789 / 1.345).unwrap();
    eprintln!("m {m} t {t}");
    assert!((m / 98.541_496_171_190_74 - 1.0).abs() < 1e-9, "{m}");
    assert!((t / 2_900.993_205_792_131 - 1.0).abs() < 1e-9, "{t}");
}

/// Statics (quick `rod-statics`): axial stretch within 0.1 % by the static solver and a damped Radau
/// run; the Timoshenko tip and its unshearable limit within 1 %; second-order convergence in h.
#[test]
fn statics_meet_the_closed_forms() {
    let (static_ratio, dynamic_ratio) = axial_stretch(20).unwrap();
    assert!((static_ratio - 1.0).abs() < 1e-3, "{static_ratio}");
    assert!((dynamic_ratio - 1.0).abs() < 1e-3, "{dynamic_ratio}");
    let tip = timoshenko_static(100, 1.0).unwrap().tip;
    assert!((tip / TIMOSHENKO_TIP - 1.0).abs() < 0.01, "{tip}");
    let unshearable = timoshenko_static(100, 1e3).unwrap().tip;
    assert!(
        (unshearable / TIMOSHENKO_BENDING - 1.0).abs() < 0.01,
        "{unshearable}"
    );
    let tips: Vec<f64> = [10, 20, 40]
        .iter()
        .map(|&n| timoshenko_static(n, 1.0).unwrap().tip)
        .collect();
    let order = ((tips[0] - tips[1]) / (tips[1] - tips[2])).abs().log2();
    eprintln!("tips {tips:?}, order {order}");
    assert!((order - 2.0).abs() < 0.3, "order {order}");
}

/// Damped dynamics (quick `rod-cantilever-dynamics`): Radau IIA and position Verlet at PyElastica's
/// step settle within 1 % of the Timoshenko tip.
#[test]
fn damped_cantilever_settles_on_the_timoshenko_tip() {
    let radau = timoshenko_radau(100, 1.4, 40.0, 1.0, 1e-6).unwrap();
    let verlet = timoshenko_verlet(100, 1.4, 0.07 * 3.0 / 100.0, 40.0, 1.0);
    eprintln!(
        "radau {} settled {:?} in {} steps; verlet {} settled {:?}",
        radau.tip, radau.settled_time, radau.steps, verlet.tip, verlet.settled_time
    );
    for r in [&radau, &verlet] {
        assert!((r.tip / TIMOSHENKO_TIP - 1.0).abs() < 0.01, "{}", r.tip);
        assert!(
            r.settled_time.is_some_and(|t| t < 35.0),
            "{:?}",
            r.settled_time
        );
    }
}

/// Conservation (quick `rod-conservation`): a free spinning rod keeps its energy within Radau's
/// tolerance and its angular momentum; Verlet keeps a bounded energy band and the angular momentum
/// at second order in dt.
#[test]
fn free_rod_conserves_energy_and_angular_momentum() {
    let radau = conservation_radau(2.0, 40, 1e-8).unwrap();
    assert!(radau.energy_band < 1e-6, "{}", radau.energy_band);
    assert!(radau.momentum_error < 1e-8, "{}", radau.momentum_error);
    let coarse = conservation_verlet(2.0, 40, 1e-4);
    let fine = conservation_verlet(2.0, 40, 5e-5);
    let order = (coarse.momentum_error / fine.momentum_error).log2();
    eprintln!(
        "verlet band {:e} / {:e}, momentum {:e} / {:e} (order {order})",
        coarse.energy_band, fine.energy_band, coarse.momentum_error, fine.momentum_error
    );
    assert!(coarse.energy_band < 1e-4 && coarse.energy_drift < 0.5 * coarse.energy_band);
    assert!(coarse.momentum_error < 1e-6);
    assert!(order > 1.7, "order {order}");
}

/// Helical buckling (quick `rod-helical-buckling`: 100 segments, 10 turns, slack 10): the envelope
/// of the localized helix within 10 % of its analytic peak everywhere.
#[test]
fn twisted_rod_buckles_into_the_analytic_helix() {
    let r = helical_buckling(100, 10.0, 10.0, 500.0, 3000.0, 1e-3).unwrap();
    eprintln!(
        "peak ratio {}, largest difference {} of the peak, {} steps in {} s",
        r.peak_ratio, r.largest_difference, r.stats.accepted_steps, r.seconds
    );
    assert!(r.largest_difference < 0.1, "{}", r.largest_difference);
    assert!((r.peak_ratio - 1.0).abs() < 0.05, "{}", r.peak_ratio);
}
