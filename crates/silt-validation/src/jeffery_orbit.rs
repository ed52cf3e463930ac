//! A rigid straight fiber in simple shear `u = γ̇ y e_x` (RPY) tumbles in Jeffery orbits: with the
//! equivalent aspect ratio `r_e = sqrt(ω(90°) / ω(0°))` from the same chain's rotation rates aligned
//! with the gradient and with the flow, the period is `T = 2π (r_e + 1/r_e) / γ̇` (Jeffery 1922;
//! Bretherton 1962 for any body of revolution). The chain is made rigid by [`rigid_joints`] on top of
//! the gears links (the limit of a very stiff fiber without the bending-time step), or, for the
//! elastic variant, by a large bending rigidity. Source and numbers: validation/jeffery-orbit/.

use silt_core::Vec3;
use silt_fibers::chain::Fibers;
use silt_fibers::constraints::rigid_joints;
use silt_fibers::dynamics::{AdamsBashforth, FiberSystem};
use silt_fibers::elasticity::Bending;
use silt_fibers::flows::AmbientFlow;
use silt_fibers::mobility::{Hydrodynamics, Mobility};
use silt_fibers::rpy::RpyKernel;
use std::f64::consts::PI;

#[derive(Clone, Copy, Debug)]
pub struct JefferyCase {
    pub beads: usize,
    /// `None`: rigid joints; `Some(K_b / (η γ̇ L⁴))`: an elastic fiber that stiff.
    pub stiffness: Option<f64>,
    /// `γ̇ dt` (the elastic fiber takes the smaller of this and the bending time).
    pub shear_step: f64,
}

#[derive(Clone, Debug)]
pub struct JefferyResult {
    /// Rotation rates at 0° and 90°, over γ̇.
    pub rate_aligned: f64,
    pub rate_across: f64,
    pub aspect_ratio: f64,
    /// Jeffery's period and the measured one, in 1/γ̇.
    pub period_jeffery: f64,
    pub period: f64,
    /// `(γ̇ t, φ)` along the run, φ the in-plane angle from the flow direction (unwrapped).
    pub history: Vec<(f64, f64)>,
    /// `(γ̇ t, φ)` from integrating Jeffery's equation with the same `r_e`.
    pub jeffery_curve: Vec<(f64, f64)>,
    pub steps: usize,
    pub seconds: f64,
}

impl JefferyResult {
    pub fn error(&self) -> f64 {
        self.period / self.period_jeffery - 1.0
    }
}

fn system(case: JefferyCase, angle: f64) -> Result<FiberSystem, String> {
    let (a, viscosity, shear_rate) = (0.5, 1.0, 1.0);
    let mut fibers = Fibers::new(a)?;
    let direction = Vec3::new(angle.cos(), angle.sin(), 0.0);
    let half = a * (case.beads - 1) as f64;
    fibers.add_straight(case.beads, -half * direction, direction)?;
    let length = 2.0 * a * case.beads as f64;
    let rigidity = case
        .stiffness
        .map_or(0.0, |k| k * viscosity * shear_rate * length.powi(4));
    let mobility = Mobility {
        kernel: RpyKernel::new(a, viscosity)?,
        hydrodynamics: Hydrodynamics::Rpy,
    };
    let mut system = FiberSystem::new(fibers, mobility, Bending::straight(rigidity, 1)?);
    if case.stiffness.is_none() {
        let joints = rigid_joints(&system.fibers);
        system.constraints.extend(joints);
    }
    system.flow = AmbientFlow::SimpleShear { shear_rate };
    // The seed's scheme as published: the link drift is part of what this case measures.
    system.restore_links = false;
    Ok(system)
}

/// In-plane angle of the end-to-end vector from the x axis.
fn angle_of(system: &FiberSystem) -> f64 {
    let y = &system.fibers.positions;
    let d = y[y.len() - 1] - y[0];
    d.y.atan2(d.x)
}

/// Rotation rate `dφ/dt` of the chain held rigid at angle `angle`. (A straight elastic chain has no
/// bending moment to resist the first instant's deformation, so only the rigid chain's rates define
/// its equivalent aspect ratio.)
fn rotation_rate(case: JefferyCase, angle: f64) -> Result<f64, String> {
    let rigid = JefferyCase {
        stiffness: None,
        ..case
    };
    let system = system(rigid, angle)?;
    let motion = system.motion()?;
    let y = &system.fibers.positions;
    let n = y.len() - 1;
    let d = y[n] - y[0];
    let dv = motion.velocities[n] - motion.velocities[0];
    Ok(d.cross(dv).z / d.length_squared())
}

pub fn run(case: JefferyCase) -> Result<JefferyResult, String> {
    let rate_aligned = rotation_rate(case, 0.0)?;
    let rate_across = rotation_rate(case, 0.5 * PI)?;
    // Both are clockwise (negative) in this shear.
    let aspect_ratio = (rate_across / rate_aligned).sqrt();
    let period_jeffery = 2.0 * PI * (aspect_ratio + 1.0 / aspect_ratio);

    let mut system = system(case, 0.0)?;
    let mut dt = case.shear_step;
    if system.bending.rigidity > 0.0 {
        dt = dt.min(system.bending.bending_time(0.5, 1.0));
    }
    let mut integrator = AdamsBashforth::default();
    let mut history = vec![(0.0, 0.0)];
    let mut unwrapped = 0.0;
    let mut previous = angle_of(&system);
    let start = std::time::Instant::now();
    let mut steps = 0;
    // Half a period: φ from 0 to -π (the director comes back to itself).
    let half_period = loop {
        system.step(dt, &mut integrator)?;
        steps += 1;
        let now = angle_of(&system);
        let mut change = now - previous;
        if change > PI {
            change -= 2.0 * PI;
        } else if change < -PI {
            change += 2.0 * PI;
        }
        previous = now;
        let before = unwrapped;
        unwrapped += change;
        if steps % 10 == 0 {
            history.push((system.time, unwrapped));
        }
        if unwrapped <= -PI {
            // Linear interpolation of the crossing inside the last step.
            let fraction = (-PI - before) / (unwrapped - before);
            break system.time - dt + fraction * dt;
        }
        if system.time > 4.0 * period_jeffery {
            return Err(format!(
                "the fiber did not turn by π in {:.1} shear times (Jeffery's period {period_jeffery:.1})",
                system.time
            ));
        }
    };
    history.push((system.time, unwrapped));
    // Jeffery's equation dφ/dt = -γ̇ (r_e² sin²φ + cos²φ) / (r_e² + 1), by RK4 at the same step.
    let rhs = |phi: f64| {
        -(aspect_ratio.powi(2) * phi.sin().powi(2) + phi.cos().powi(2))
            / (aspect_ratio.powi(2) + 1.0)
    };
    let mut jeffery_curve = vec![(0.0, 0.0)];
    let (mut t, mut phi) = (0.0, 0.0);
    let h = 0.01;
    while t < 2.0 * half_period {
        let k1 = rhs(phi);
        let k2 = rhs(phi + 0.5 * h * k1);
        let k3 = rhs(phi + 0.5 * h * k2);
        let k4 = rhs(phi + h * k3);
        phi += h * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0;
        t += h;
        jeffery_curve.push((t, phi));
    }
    Ok(JefferyResult {
        rate_aligned,
        rate_across,
        aspect_ratio,
        period_jeffery,
        period: 2.0 * half_period,
        history,
        jeffery_curve,
        steps,
        seconds: start.elapsed().as_secs_f64(),
    })
}
