//! A flexible fiber sedimenting broadside under its buoyant weight (RPY), for elasto-gravitational
//! numbers `B = W L³ / K_b` from 10 to 10⁴ (W the weight per length): it bends into a steady U whose
//! tip-to-middle deflection grows with B and saturates, while it settles faster than the straight
//! fiber (the seed's chapter; Li, Manikantan & Saintillan 2013, Fig. 2-3; Xu & Nadim 1994 for the
//! weakly flexible limit). Units: length L, time `T = η L / W`. Source: validation/sedimenting-fiber/.

use silt_core::Vec3;
use silt_fibers::chain::Fibers;
use silt_fibers::constraints::rigid_joints;
use silt_fibers::dynamics::{AdamsBashforth, FiberSystem};
use silt_fibers::elasticity::Bending;
use silt_fibers::mobility::{Hydrodynamics, Mobility};
use silt_fibers::rpy::RpyKernel;

#[derive(Clone, Copy, Debug)]
pub struct SedimentingCase {
    pub beads: usize,
    /// `B = W L³ / K_b`.
    pub elastogravitational: f64,
    /// Step over the bending time.
    pub step_ratio: f64,
    /// Stop when the deflection changes by less than this fraction over one settling time `T`.
    pub settle: f64,
}

impl SedimentingCase {
    pub fn standard(beads: usize, elastogravitational: f64) -> Self {
        SedimentingCase {
            beads,
            elastogravitational,
            step_ratio: 1.0,
            settle: 1e-4,
        }
    }
}

#[derive(Clone, Debug)]
pub struct SedimentingResult {
    pub elastogravitational: f64,
    /// Steady vertical distance from the middle bead to the ends' mean, over L.
    pub deflection: f64,
    /// Steady settling speed of the centre of mass, over W / η.
    pub speed: f64,
    /// Settling speed of the same chain held rigid (`rigid_joints`), over W / η.
    pub rigid_speed: f64,
    /// Final shape: (x, y - y_middle) / L.
    pub shape: Vec<(f64, f64)>,
    /// Simulated time in T.
    pub time: f64,
    pub link_error: f64,
    pub steps: usize,
    pub seconds: f64,
}

pub fn run(case: SedimentingCase) -> Result<SedimentingResult, String> {
    let a = 0.5;
    let viscosity = 1.0;
    let length = 2.0 * a * case.beads as f64;
    let weight = 1.0; // per length
    let rigidity = weight * length.powi(3) / case.elastogravitational;
    let settling_time = viscosity * length / weight;
    let mut fibers = Fibers::new(a)?;
    let half = a * (case.beads - 1) as f64;
    fibers.add_straight(case.beads, Vec3::new(-half, 0.0, 0.0), Vec3::X)?;
    let mobility = Mobility {
        kernel: RpyKernel::new(a, viscosity)?,
        hydrodynamics: Hydrodynamics::Rpy,
    };
    let mut system = FiberSystem::new(fibers, mobility, Bending::straight(rigidity, 1)?);
    system.bead_force = Vec3::new(0.0, -weight * 2.0 * a, 0.0);
    let rigid_speed = {
        let mut rigid =
            FiberSystem::new(system.fibers.clone(), mobility, Bending::straight(0.0, 1)?);
        rigid.bead_force = system.bead_force;
        let joints = rigid_joints(&rigid.fibers);
        rigid.constraints.extend(joints);
        let motion = rigid.motion()?;
        -motion.velocities.iter().map(|v| v.y).sum::<f64>() / case.beads as f64 * viscosity / weight
    };
    // The seed's scheme as published: the link drift is part of what this case measures.
    system.restore_links = false;
    let dt =
        (case.step_ratio * system.bending.bending_time(a, viscosity)).min(0.01 * settling_time);
    let middle = case.beads / 2;
    let deflection_of = |s: &FiberSystem| {
        let y = &s.fibers.positions;
        let ends = 0.5 * (y[0].y + y[y.len() - 1].y);
        if case.beads % 2 == 1 {
            (ends - y[middle].y) / length
        } else {
            (ends - 0.5 * (y[middle].y + y[middle - 1].y)) / length
        }
    };
    let mut integrator = AdamsBashforth::default();
    let start = std::time::Instant::now();
    let mut link_error: f64 = 0.0;
    let steps_per_check = (settling_time / dt).ceil() as usize;
    let mut last_deflection = f64::NAN;
    let mut steps = 0;
    let speed = loop {
        let mut mean_velocity = Vec3::ZERO;
        for _ in 0..steps_per_check {
            let (_, diagnostics) = system.step(dt, &mut integrator)?;
            steps += 1;
            link_error = link_error.max(diagnostics.link_error);
            mean_velocity = diagnostics.mean_velocity;
        }
        let deflection = deflection_of(&system);
        if (deflection - last_deflection).abs() < case.settle * deflection.abs().max(1e-3) {
            break -mean_velocity.y * viscosity / weight;
        }
        last_deflection = deflection;
        if system.time > 2000.0 * settling_time {
            return Err(format!(
                "B = {}: the fiber did not reach a steady shape in 2000 settling times",
                case.elastogravitational
            ));
        }
    };
    let y = &system.fibers.positions;
    let reference = y[middle].y;
    let shape = y
        .iter()
        .map(|p| (p.x / length, (p.y - reference) / length))
        .collect();
    Ok(SedimentingResult {
        elastogravitational: case.elastogravitational,
        deflection: deflection_of(&system),
        speed,
        rigid_speed,
        shape,
        time: system.time / settling_time,
        link_error,
        steps,
        seconds: start.elapsed().as_secs_f64(),
    })
}
