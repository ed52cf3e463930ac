//! The velocity and length scales of a flow set-up, for the checks and reports of a scene: its
//! Reynolds number and the largest speed its first steps will see.

use crate::initial::InitialCondition;
use crate::model::{AXIS_NAMES, FACE_NAMES};
use crate::{Boundary, Driving, FluidConfig, FluidSolver};
use std::f64::consts::PI;

/// The largest speed sum |u| + |v| + |w| the first steps will see, and what sets it: the initial
/// field, a moving wall, an inflow or the bulk velocity of the driving (a lid moves the fluid beside
/// it at its own speed from the first step on).
pub fn speed_scale(solver: &FluidSolver) -> (f64, String) {
    let config = &solver.config;
    let mut best = (
        solver
            .decomposition()
            .max(crate::diagnostics::max_speed_sum(&solver.state.velocity)),
        "the initial flow".to_string(),
    );
    let sum = |v: [f64; 3]| v.iter().map(|x| x.abs()).sum::<f64>();
    for a in 0..3 {
        for s in 0..2 {
            if let Boundary::NoSlip { velocity } | Boundary::Inflow { velocity, .. } =
                config.boundaries.faces[a][s]
            {
                if sum(velocity) > best.0 {
                    best = (
                        sum(velocity),
                        format!("the {} face's speed", FACE_NAMES[a][s]),
                    );
                }
            }
        }
    }
    if let Driving::FlowRate { bulk_velocity, .. } = &config.driving {
        if bulk_velocity.max_abs() > best.0 {
            best = (
                bulk_velocity.max_abs(),
                "the driving's bulk velocity".into(),
            );
        }
    }
    best
}

/// The velocity scale of the flow, the length it is measured over, and how they were chosen.
pub struct ReynoldsNumber {
    pub velocity: f64,
    pub velocity_from: String,
    pub length: f64,
    pub length_from: String,
}

impl ReynoldsNumber {
    pub fn value(&self, viscosity: f64) -> f64 {
        self.velocity * self.length / viscosity
    }
}

/// Reynolds number U L / nu of a flow (`config` started from `initial`): U the largest of the wall speeds, the driving's bulk (or laminar
/// centreline) velocity and the initial flow's amplitude; L 1/k of a Taylor–Green vortex, else the
/// distance between the walls (those of a moving wall first), else the box length along x.
pub fn reynolds_number(config: &FluidConfig, initial: &InitialCondition) -> ReynoldsNumber {
    let c = config;
    let lengths = c.grid.lengths();
    let speed = |v: [f64; 3]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let mut candidates: Vec<(f64, String)> = Vec::new();
    let mut moving_axis = None;
    for a in 0..3 {
        for s in 0..2 {
            match c.boundaries.faces[a][s] {
                Boundary::NoSlip { velocity } if speed(velocity) > 0.0 => {
                    moving_axis.get_or_insert(a);
                    candidates.push((
                        speed(velocity),
                        format!("speed of the {} wall", FACE_NAMES[a][s]),
                    ));
                }
                Boundary::Inflow { velocity, .. } => candidates.push((
                    speed(velocity),
                    format!("mean inflow speed at {}", FACE_NAMES[a][s]),
                )),
                _ => {}
            }
        }
    }
    let is_wall = |f: &Boundary| matches!(f, Boundary::NoSlip { .. } | Boundary::FreeSlip);
    let bounded: Vec<usize> = (0..3)
        .filter(|&a| c.boundaries.faces[a].iter().all(is_wall))
        .collect();
    match &c.driving {
        Driving::FlowRate { bulk_velocity, .. } => candidates.push((
            bulk_velocity.max_abs(),
            "bulk velocity of the driving".into(),
        )),
        &Driving::PressureGradient { axis, ref gradient } if bounded.len() == 1 => {
            let h = lengths[bounded[0]];
            let g = gradient.max_abs() + c.body_force[axis].max_abs();
            candidates.push((
                g * h * h / (8.0 * c.viscosity),
                "centreline speed G H^2 / (8 nu) of the laminar Poiseuille flow".into(),
            ));
        }
        _ => {}
    }
    match *initial {
        InitialCondition::TaylorGreen2d { amplitude }
        | InitialCondition::TaylorGreen3d { amplitude } => {
            candidates.push((amplitude.abs(), "Taylor–Green amplitude".into()))
        }
        InitialCondition::Uniform(v) => candidates.push((speed(v), "initial uniform speed".into())),
        InitialCondition::Poiseuille { wall_axis } => {
            let mut max: f64 = 0.0;
            for comp in (0..3).filter(|&x| x != wall_axis) {
                for k in 0..=20 {
                    let mut x = c.grid.origin;
                    x[wall_axis] += lengths[wall_axis] * k as f64 / 20.0;
                    max = max.max(initial.velocity(c, comp, x).abs());
                }
            }
            candidates.push((max, "largest speed of the initial channel profile".into()));
        }
        InitialCondition::Rest => {}
    }
    let (velocity, velocity_from) = candidates.into_iter().fold(
        (0.0, "nothing moves or drives the flow".to_string()),
        |best, c| if c.0 > best.0 { c } else { best },
    );
    let (length, length_from) = if matches!(
        initial,
        InitialCondition::TaylorGreen2d { .. } | InitialCondition::TaylorGreen3d { .. }
    ) {
        (
            lengths[0] / (2.0 * PI),
            "1/k = length / (2 pi) of the vortex".to_string(),
        )
    } else if let Some(a) = moving_axis.or(bounded.first().copied()) {
        (
            lengths[a],
            format!("distance between the {} walls", AXIS_NAMES[a]),
        )
    } else {
        (lengths[0], "box length along x".to_string())
    };
    ReynoldsNumber {
        velocity,
        velocity_from,
        length,
        length_from,
    }
}
