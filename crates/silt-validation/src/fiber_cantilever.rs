//! A clamped filament under a small uniform lateral load, free drain (no hydrodynamic interaction, so
//! the static balance is purely elastic): the tip deflection against the linear cantilever
//! `w = q L⁴ / (8 K_b)`. Source and numbers: validation/fiber-cantilever/.
//!
//! The chain has `M + 2` beads of radius a; the first two are held (`clamped_end`), the other `M`
//! carry `q 2a` each. Its bending joints sit at bead centres, each carrying the curvature of a length
//! 2a about it (midpoint rule), so the bending length runs from the contact point of the two held
//! beads to the far surface of the last bead: `L = 2a (M + 1)`, and the tip is `Y_last + a e_last`.
//! Under the joint model (seed sec. 2.2.1, gap ε_g, `l = 2 (a + ε_g)`) the first bead alone is
//! held; the joints between beads carry the bending, each for a length l about it, so the bending
//! length runs from the held bead's centre to the far joint point of the last bead:
//! `L = l (N - ½)` for N beads, and the tip is `Y_last - (a + ε_g) p_last`.
//! The relaxation time of the slowest mode, `τ₁ = ζ L⁴ / (K_b β₁⁴)` with `ζ = 3πη` (free-drain drag
//! per length) and `β₁ = 1.8751`, sets the run: it stops when the tip's remaining motion `|V_tip| τ₁`
//! is below `settle` times the deflection.

use silt_core::Vec3;
use silt_fibers::chain::Fibers;
use silt_fibers::constraints::{clamped_end, PrescribedMotion};
use silt_fibers::dynamics::{AdamsBashforth, FiberSystem};
use silt_fibers::elasticity::Bending;
use silt_fibers::mobility::{Hydrodynamics, Mobility};
use silt_fibers::rpy::RpyKernel;

/// First root of `1 + cos β cosh β = 0` (the clamped–free beam).
const BETA_1: f64 = 1.875_104_068_711_961;

/// How neighbouring beads are linked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Links {
    Gears,
    /// The joint model with gap ε_g over a.
    Joint {
        gap: f64,
    },
}

#[derive(Clone, Copy, Debug)]
pub struct CantileverCase {
    /// Free beads `M` (loaded beads: all but the held ones).
    pub free_beads: usize,
    pub links: Links,
    /// `w / L` of the linear formula (small: the linear theory holds to `O((w/L)²)`).
    pub deflection_ratio: f64,
    /// Step over the bending time `η (2a)⁴ / K_b`.
    pub step_ratio: f64,
    /// Stop when `|V_tip| τ₁ < settle · w`.
    pub settle: f64,
}

impl CantileverCase {
    pub fn standard(free_beads: usize) -> Self {
        CantileverCase {
            free_beads,
            links: Links::Gears,
            deflection_ratio: 0.01,
            step_ratio: 1.0,
            settle: 1e-4,
        }
    }
}

#[derive(Clone, Debug)]
pub struct CantileverResult {
    /// Tip deflection (at the far surface of the last bead) and `q L⁴ / (8 K_b)`.
    pub tip: f64,
    pub expected: f64,
    /// `(t / τ₁, tip / expected)` along the run.
    pub history: Vec<(f64, f64)>,
    /// Final shape: `(s / L, deflection / expected)` at bead centres from the clamp point.
    pub shape: Vec<(f64, f64)>,
    pub steps: usize,
    /// Simulated time (units of a = η = K_b = 1).
    pub time: f64,
    /// Largest relative link-length error over the run.
    pub link_error: f64,
    pub seconds: f64,
}

impl CantileverResult {
    pub fn error(&self) -> f64 {
        self.tip / self.expected - 1.0
    }
}

pub fn run(case: CantileverCase) -> Result<CantileverResult, String> {
    let (a, viscosity, rigidity) = (0.5, 1.0, 1.0);
    let m = case.free_beads;
    let mobility = Mobility {
        kernel: RpyKernel::new(a, viscosity)?,
        hydrodynamics: Hydrodynamics::FreeDrain,
    };
    let bending = Bending::straight(rigidity, 1)?;
    // Beads, bending length, held beads and the system for each link model.
    let (mut system, length, held) = match case.links {
        Links::Gears => {
            let mut fibers = Fibers::new(a)?;
            fibers.add_straight(m + 2, Vec3::ZERO, Vec3::X)?;
            let mut system = FiberSystem::new(fibers, mobility, bending);
            system.constraints.extend(clamped_end(0, 1));
            (system, 2.0 * a * (m + 1) as f64, 2)
        }
        Links::Joint { gap } => {
            let mut fibers = Fibers::with_gap(a, gap * a)?;
            fibers.add_straight(m + 1, Vec3::ZERO, Vec3::X)?;
            let spacing = fibers.spacing();
            let mut system = FiberSystem::with_joints(fibers, mobility, bending);
            system
                .constraints
                .push(Box::new(PrescribedMotion::clamped(0)));
            (system, spacing * (m as f64 + 0.5), 1)
        }
    };
    let spacing = system.fibers.spacing();
    let load = case.deflection_ratio * 8.0 * rigidity / length.powi(3);
    let expected = load * length.powi(4) / (8.0 * rigidity);
    system.bead_force = Vec3::new(0.0, load * spacing, 0.0);
    // The seed's scheme as published: the link drift is part of what this case measures.
    system.restore_links = false;
    let dt = case.step_ratio * system.bending.bending_time(a, viscosity);
    let relaxation = 3.0 * std::f64::consts::PI * viscosity * length.powi(4) * (2.0 * a / spacing)
        / (rigidity * BETA_1.powi(4));
    let tip_bead = system.fibers.bead_count() - 1;
    let tip_of = |s: &FiberSystem| {
        let y = &s.fibers.positions;
        match s.joints.last() {
            None => {
                let e = (y[tip_bead] - y[tip_bead - 1]).normalize();
                (y[tip_bead] + a * e).y
            }
            Some(joint) => {
                let (_, backward) = joint.arms.world(&s.orientations);
                (y[tip_bead] - joint.reach * backward).y
            }
        }
    };
    let mut integrator = AdamsBashforth::default();
    let mut history = Vec::new();
    let mut link_error: f64 = 0.0;
    let start = std::time::Instant::now();
    let max_steps = (40.0 * relaxation / dt) as usize;
    let mut steps = 0;
    loop {
        let (motion, diagnostics) = system.step(dt, &mut integrator)?;
        steps += 1;
        link_error = link_error.max(diagnostics.link_error);
        if steps % 200 == 0 {
            history.push((system.time / relaxation, tip_of(&system) / expected));
        }
        let remaining = motion.velocities[tip_bead].length() * relaxation;
        if steps > 10 && remaining < case.settle * expected {
            break;
        }
        if steps >= max_steps {
            return Err(format!(
                "the cantilever did not settle in {steps} steps (40 relaxation times)"
            ));
        }
    }
    let y = &system.fibers.positions;
    let clamp = if held == 2 { y[0].x + a } else { y[0].x };
    let shape = y[held - 1..]
        .iter()
        .map(|p| ((p.x - clamp) / length, p.y / expected))
        .collect();
    Ok(CantileverResult {
        tip: tip_of(&system),
        expected,
        history,
        shape,
        steps,
        time: system.time,
        link_error,
        seconds: start.elapsed().as_secs_f64(),
    })
}
