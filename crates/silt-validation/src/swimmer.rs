//! An active filament driven by a travelling wave of rest curvature, `κ_eq(s, t) = A sin(k s - ω t)`
//! (seed sec. 2.4, a sperm-like swimmer), with RPY hydrodynamics: a wave running from the first bead to
//! the last pushes the fluid backwards, so the filament swims towards its first bead, against the
//! wave (Taylor 1951; Lighthill 1976); reversing the wave reverses the swimming. Free drain (isotropic
//! bead drag) cannot swim (Purcell's scallop-free limit of resistive-force theory with equal drag
//! coefficients), which the case also checks. Source and numbers: validation/active-filament/.

use silt_core::Vec3;
use silt_fibers::chain::Fibers;
use silt_fibers::dynamics::{AdamsBashforth, FiberSystem};
use silt_fibers::elasticity::{Bending, RestCurvature};
use silt_fibers::mobility::{Hydrodynamics, Mobility};
use silt_fibers::rpy::RpyKernel;
use std::f64::consts::PI;

#[derive(Clone, Copy, Debug)]
pub struct SwimmerCase {
    pub beads: usize,
    /// Sperm number `Sp = L (ζ⊥ ω / K_b)^(1/4)`, `ζ⊥ = 4πη / ln(L/a)`.
    pub sperm_number: f64,
    /// Rest-curvature amplitude times the length, `A L`.
    pub amplitude: f64,
    /// Wavelengths along the filament.
    pub wavelengths: f64,
    /// `+1`: wave from the first bead to the last; `-1`: the other way.
    pub wave_direction: f64,
    pub hydrodynamics: Hydrodynamics,
    /// Beat periods simulated; the velocity is averaged over all but the first.
    pub periods: usize,
    /// Step over the bending time.
    pub step_ratio: f64,
    /// Link lengths put back to 2a after each step.
    pub restore_links: bool,
}

impl SwimmerCase {
    pub fn standard(beads: usize) -> Self {
        SwimmerCase {
            beads,
            sperm_number: 4.0,
            amplitude: 4.0,
            wavelengths: 1.0,
            wave_direction: 1.0,
            hydrodynamics: Hydrodynamics::Rpy,
            periods: 3,
            step_ratio: 1.0,
            restore_links: false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct SwimmerResult {
    /// Mean swimming velocity along the filament's mean axis (first bead minus last, unit), in
    /// lengths per period: positive means towards the first bead.
    pub speed: f64,
    /// `(t / T, displacement of the centre of mass along the initial axis / L)`.
    pub history: Vec<(f64, f64)>,
    /// Final bead positions (x, y) / L.
    pub shape: Vec<(f64, f64)>,
    pub link_error: f64,
    pub steps: usize,
    pub seconds: f64,
}

pub fn run(case: SwimmerCase) -> Result<SwimmerResult, String> {
    let (a, viscosity) = (0.5, 1.0);
    let length = 2.0 * a * case.beads as f64;
    let frequency = 1.0; // ω
    let drag = 4.0 * PI * viscosity / (length / a).ln();
    let rigidity = length.powi(4) * drag * frequency / case.sperm_number.powi(4);
    let mut fibers = Fibers::new(a)?;
    fibers.add_straight(case.beads, Vec3::ZERO, Vec3::X)?;
    let mobility = Mobility {
        kernel: RpyKernel::new(a, viscosity)?,
        hydrodynamics: case.hydrodynamics,
    };
    let mut bending = Bending::straight(rigidity, 1)?;
    bending.rest[0] = Some(RestCurvature::travelling_wave(
        case.amplitude / length,
        2.0 * PI * case.wavelengths / length,
        case.wave_direction * frequency,
        Vec3::Z,
    )?);
    let mut system = FiberSystem::new(fibers, mobility, bending);
    system.restore_links = case.restore_links;
    let period = 2.0 * PI / frequency;
    let steps_per_period =
        (period / (case.step_ratio * system.bending.bending_time(a, viscosity))).ceil() as usize;
    let dt = period / steps_per_period as f64;
    let centre =
        |s: &FiberSystem| s.fibers.positions.iter().sum::<Vec3>() / s.fibers.bead_count() as f64;
    let mut integrator = AdamsBashforth::default();
    let mut history = vec![(0.0, 0.0)];
    let mut link_error: f64 = 0.0;
    let start = std::time::Instant::now();
    let mut after_first = Vec3::ZERO;
    let mut axis = Vec3::ZERO;
    for step in 1..=case.periods * steps_per_period {
        let (_, diagnostics) = system.step(dt, &mut integrator)?;
        link_error = link_error.max(diagnostics.link_error);
        let y = &system.fibers.positions;
        if step > steps_per_period {
            axis += (y[0] - y[y.len() - 1]).normalize();
        }
        if step == steps_per_period {
            after_first = centre(&system);
        }
        if step % (steps_per_period / 50).max(1) == 0 {
            history.push((system.time / period, centre(&system).x / length));
        }
    }
    let axis = axis.normalize_or_zero();
    let travelled = (centre(&system) - after_first).dot(axis);
    let speed = travelled / length / (case.periods - 1) as f64;
    let shape = system
        .fibers
        .positions
        .iter()
        .map(|p| (p.x / length, p.y / length))
        .collect();
    Ok(SwimmerResult {
        speed,
        history,
        shape,
        link_error,
        steps: case.periods * steps_per_period,
        seconds: start.elapsed().as_secs_f64(),
    })
}
