//! Lid-driven square cavity against Ghia, Ghia & Shin (1982), Tables I and II: u along the vertical
//! centreline x = 0.5 and v along the horizontal centreline y = 0.5 of the steady flow, Re = U L / nu.
//!
//! Unit cavity with walls at x = 0, 1 and y = 0, 1, the top wall moving at U = 1; two cells along a
//! periodic z keep the flow two-dimensional.

use crate::setup::run_to;
use silt_fluid::{
    Boundaries, Boundary, Driving, FluidConfig, FluidSolver, Grid, TimeStep, Viscous,
};

/// Positions along the centrelines (Ghia et al. 1982, Table I: y for u; Table II: x for v).
pub const GHIA_Y: [f64; 17] = [
    1.0, 0.9766, 0.9688, 0.9609, 0.9531, 0.8516, 0.7344, 0.6172, 0.5, 0.4531, 0.2813, 0.1719,
    0.1016, 0.0703, 0.0625, 0.0547, 0.0,
];
pub const GHIA_X: [f64; 17] = [
    1.0, 0.9688, 0.9609, 0.9531, 0.9453, 0.9063, 0.8594, 0.8047, 0.5, 0.2344, 0.2266, 0.1563,
    0.0938, 0.0781, 0.0703, 0.0625, 0.0,
];

/// Ghia's u(0.5, y) and v(x, 0.5) for a Reynolds number (100 or 1000).
pub fn ghia(reynolds: u32) -> Option<([f64; 17], [f64; 17])> {
    match reynolds {
        100 => Some((
            [
                1.0, 0.84123, 0.78871, 0.73722, 0.68717, 0.23151, 0.00332, -0.13641, -0.20581,
                -0.21090, -0.15662, -0.10150, -0.06434, -0.04775, -0.04192, -0.03717, 0.0,
            ],
            [
                0.0, -0.05906, -0.07391, -0.08864, -0.10313, -0.16914, -0.22445, -0.24533, 0.05454,
                0.17527, 0.17507, 0.16077, 0.12317, 0.10890, 0.10091, 0.09233, 0.0,
            ],
        )),
        1000 => Some((
            [
                1.0, 0.65928, 0.57492, 0.51117, 0.46604, 0.33304, 0.18719, 0.05702, -0.06080,
                -0.10648, -0.27805, -0.38289, -0.29730, -0.22220, -0.20196, -0.18109, 0.0,
            ],
            [
                0.0, -0.21388, -0.27669, -0.33714, -0.39188, -0.51550, -0.42665, -0.31966, 0.02526,
                0.32235, 0.33075, 0.37095, 0.32627, 0.30353, 0.29012, 0.27485, 0.0,
            ],
        )),
        _ => None,
    }
}

/// The cavity on n x n cells (n even) at Reynolds number `reynolds`, Crank–Nicolson, dt = cfl h / U.
pub fn cavity(n: usize, reynolds: f64, cfl: f64) -> Result<FluidSolver, String> {
    let h = 1.0 / n as f64;
    let mut boundaries = Boundaries::periodic();
    boundaries.faces[0] = [Boundary::WALL; 2];
    boundaries.faces[1] = [
        Boundary::WALL,
        Boundary::NoSlip {
            velocity: [1.0, 0.0, 0.0],
        },
    ];
    let config = FluidConfig {
        grid: Grid {
            cells: [n, n, 2],
            spacing: h,
            origin: [0.0; 3],
        },
        boundaries,
        viscosity: 1.0 / reynolds,
        viscous: Viscous::CrankNicolson,
        driving: Driving::None,
        body_force: silt_fluid::Signal::constants([0.0; 3]),
        time_step: TimeStep::Fixed(cfl * h),
    };
    FluidSolver::new(config)
}

/// Linear interpolation of the samples (ascending positions) at `x`.
fn interpolate(samples: &[(f64, f64)], x: f64) -> f64 {
    let k = samples
        .windows(2)
        .position(|w| x <= w[1].0)
        .unwrap_or(samples.len() - 2);
    let ((x0, y0), (x1, y1)) = (samples[k], samples[k + 1]);
    y0 + (y1 - y0) * (x - x0) / (x1 - x0)
}

/// Samples (position, value) along a line.
pub type Profile = Vec<(f64, f64)>;

/// u along x = 0.5 (faces i = n/2) against y, with the wall values, and v along y = 0.5 against x.
pub fn centrelines(s: &FluidSolver) -> (Profile, Profile) {
    let n = s.grid().cells[0];
    let h = s.grid().spacing;
    let (u, v) = (&s.state.velocity[0], &s.state.velocity[1]);
    let mut u_line = vec![(0.0, 0.0)];
    u_line.extend((1..=n).map(|j| ((j as f64 - 0.5) * h, u.at(n / 2, j, 1))));
    u_line.push((1.0, 1.0));
    let mut v_line = vec![(0.0, 0.0)];
    v_line.extend((1..=n).map(|i| ((i as f64 - 0.5) * h, v.at(i, n / 2, 1))));
    v_line.push((1.0, 0.0));
    (u_line, v_line)
}

/// Result of a cavity run.
#[derive(Clone, Debug)]
pub struct CavityResult {
    pub cells: usize,
    pub reynolds: u32,
    pub time: f64,
    /// Largest change of any velocity over the last time unit (steadiness).
    pub last_change: f64,
    /// Largest |u - u_Ghia| and |v - v_Ghia| over Ghia's points, in units of the lid velocity.
    pub u_error: f64,
    pub v_error: f64,
    pub u_line: Vec<(f64, f64)>,
    pub v_line: Vec<(f64, f64)>,
}

/// Runs the cavity from rest to `end_time` and compares with Ghia et al.
pub fn run(n: usize, reynolds: u32, end_time: f64) -> Result<CavityResult, String> {
    let (u_ghia, v_ghia) = ghia(reynolds).ok_or("no reference data for this Reynolds number")?;
    let mut s = cavity(n, reynolds as f64, 0.5)?;
    run_to(&mut s, end_time - 1.0)?;
    let before = s.state.velocity.clone();
    run_to(&mut s, end_time)?;
    let last_change = (0..3)
        .flat_map(|c| {
            s.state.velocity[c]
                .data
                .iter()
                .zip(&before[c].data)
                .map(|(a, b)| (a - b).abs())
        })
        .fold(0.0, f64::max);
    let (u_line, v_line) = centrelines(&s);
    let error = |line: &[(f64, f64)], at: &[f64; 17], reference: &[f64; 17]| {
        at.iter()
            .zip(reference)
            .map(|(&x, &r)| (interpolate(line, x) - r).abs())
            .fold(0.0, f64::max)
    };
    Ok(CavityResult {
        cells: n,
        reynolds,
        time: s.state.time,
        last_change,
        u_error: error(&u_line, &GHIA_Y, &u_ghia),
        v_error: error(&v_line, &GHIA_X, &v_ghia),
        u_line,
        v_line,
    })
}
