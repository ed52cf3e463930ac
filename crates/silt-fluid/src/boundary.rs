//! Boundary conditions on the six faces of the box, and the ghost values that impose them.
//!
//! A bounded axis carries the normal velocity on its boundary faces (index 0 and n); the tangential
//! components and the pressure are imposed through the ghost cells: no-slip u_ghost = 2 U_wall - u_1,
//! free-slip u_ghost = u_1 (zero shear), pressure dp/dn = 0 at walls (p_ghost = p_1).

use crate::grid::{Field, Grid, Unknowns};
use crate::poisson::AxisKind;

/// Condition on one face of the box.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Boundary {
    /// Periodic (both faces of the axis must be periodic).
    Periodic,
    /// Wall moving with `velocity` in its own plane (its normal component must be zero).
    NoSlip { velocity: [f64; 3] },
    /// Impermeable wall without shear stress.
    FreeSlip,
}

impl Boundary {
    /// A wall at rest.
    pub const WALL: Boundary = Boundary::NoSlip { velocity: [0.0; 3] };
}

/// Conditions of the faces `faces[axis][side]`, side 0 at the low end, 1 at the high end.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Boundaries {
    pub faces: [[Boundary; 2]; 3],
}

const AXIS_NAMES: [&str; 3] = ["x", "y", "z"];
const SIDE_NAMES: [&str; 2] = ["low", "high"];

impl Boundaries {
    /// Periodic in all three directions.
    pub fn periodic() -> Self {
        Boundaries {
            faces: [[Boundary::Periodic; 2]; 3],
        }
    }

    /// Periodic in x and z, walls at rest at both ends of y (plane channel).
    pub fn channel(wall_axis: usize) -> Self {
        let mut b = Self::periodic();
        b.faces[wall_axis] = [Boundary::WALL; 2];
        b
    }

    /// Checks that the combination is possible: an axis is periodic at both ends or at neither, and a
    /// wall does not move through itself.
    pub fn validate(&self) -> Result<(), String> {
        for axis in 0..3 {
            let [low, high] = self.faces[axis];
            let periodic = [low, high].map(|b| b == Boundary::Periodic);
            if periodic[0] != periodic[1] {
                return Err(format!(
                    "axis {} is periodic at one end only ({:?} at the low end, {:?} at the high end): \
                     a periodic axis needs both ends periodic",
                    AXIS_NAMES[axis], low, high
                ));
            }
            for (side, face) in [low, high].into_iter().enumerate() {
                if let Boundary::NoSlip { velocity } = face {
                    if velocity[axis] != 0.0 {
                        return Err(format!(
                            "the {} {} wall has a velocity component {} normal to itself; \
                             only tangential wall velocities are allowed",
                            SIDE_NAMES[side], AXIS_NAMES[axis], velocity[axis]
                        ));
                    }
                    if velocity.iter().any(|v| !v.is_finite()) {
                        return Err(format!(
                            "the {} {} wall velocity is not finite",
                            SIDE_NAMES[side], AXIS_NAMES[axis]
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    pub fn is_periodic(&self, axis: usize) -> bool {
        self.faces[axis][0] == Boundary::Periodic
    }

    /// The faces of velocity component `c` that the solver updates: all along a periodic axis, the interior
    /// faces along a bounded axis normal to them, all cells along the other axes.
    pub fn velocity_unknowns(&self, grid: &Grid, c: usize) -> Unknowns {
        let mut shape = grid.cells;
        if !self.is_periodic(c) {
            shape[c] -= 1;
        }
        Unknowns {
            start: [1; 3],
            shape,
        }
    }

    /// The pressure's unknowns: every cell.
    pub fn pressure_unknowns(&self, grid: &Grid) -> Unknowns {
        Unknowns {
            start: [1; 3],
            shape: grid.cells,
        }
    }

    /// How the second difference of velocity component `c` behaves at the ends of each axis, for the
    /// Helmholtz solve of its increment (boundary values held fixed over a stage).
    pub fn velocity_kinds(&self, c: usize) -> [AxisKind; 3] {
        std::array::from_fn(|axis| {
            if self.is_periodic(axis) {
                AxisKind::Periodic
            } else if axis == c {
                AxisKind::DirichletNodes
            } else {
                let dirichlet = self.faces[axis].map(|b| matches!(b, Boundary::NoSlip { .. }));
                match dirichlet {
                    [true, true] => AxisKind::DirichletDirichlet,
                    [false, false] => AxisKind::NeumannNeumann,
                    [true, false] => AxisKind::DirichletNeumann,
                    [false, true] => AxisKind::NeumannDirichlet,
                }
            }
        })
    }

    /// Pressure (and pressure correction) at the ends of each axis: zero normal gradient at walls.
    pub fn pressure_kinds(&self) -> [AxisKind; 3] {
        std::array::from_fn(|axis| {
            if self.is_periodic(axis) {
                AxisKind::Periodic
            } else {
                AxisKind::NeumannNeumann
            }
        })
    }

    /// Sets the ghost and boundary values of velocity component `c`. Axes are filled in turn over whole
    /// planes (ghosts of the other axes included), so edge and corner ghosts are consistent.
    pub fn fill_velocity_ghosts(&self, c: usize, u: &mut Field) {
        for axis in 0..3 {
            let n = u.dims[axis] - 2;
            if self.is_periodic(axis) {
                map_plane(u, axis, n, 0, |x| x);
                map_plane(u, axis, 1, n + 1, |x| x);
            } else if axis == c {
                // Boundary faces carry the (zero) normal velocity of the walls; the plane beyond is unused.
                for plane in [0, n, n + 1] {
                    map_plane(u, axis, plane, plane, |_| 0.0);
                }
            } else {
                for (side, ghost, inner) in [(0, 0, 1), (1, n + 1, n)] {
                    match self.faces[axis][side] {
                        Boundary::NoSlip { velocity } => {
                            let wall = velocity[c];
                            map_plane(u, axis, inner, ghost, |x| 2.0 * wall - x);
                        }
                        Boundary::FreeSlip => map_plane(u, axis, inner, ghost, |x| x),
                        Boundary::Periodic => unreachable!("validated: both ends periodic"),
                    }
                }
            }
        }
    }

    /// Sets the ghost values of a cell-centred scalar (pressure): periodic copies, zero normal gradient at
    /// walls.
    pub fn fill_scalar_ghosts(&self, p: &mut Field) {
        for axis in 0..3 {
            let n = p.dims[axis] - 2;
            if self.is_periodic(axis) {
                map_plane(p, axis, n, 0, |x| x);
                map_plane(p, axis, 1, n + 1, |x| x);
            } else {
                map_plane(p, axis, 1, 0, |x| x);
                map_plane(p, axis, n, n + 1, |x| x);
            }
        }
    }
}

/// Sets every point of plane `to` (normal to `axis`, ghosts of the other axes included) from the point
/// of plane `from` on the same line: `value(f[from])`.
fn map_plane(f: &mut Field, axis: usize, from: usize, to: usize, value: impl Fn(f64) -> f64) {
    let d = f.dims;
    let (u_axis, v_axis) = match axis {
        0 => (1, 2),
        1 => (0, 2),
        _ => (0, 1),
    };
    let (su, sv, s) = (f.stride(u_axis), f.stride(v_axis), f.stride(axis));
    for v in 0..d[v_axis] {
        for u in 0..d[u_axis] {
            let base = u * su + v * sv;
            f.data[base + to * s] = value(f.data[base + from * s]);
        }
    }
}
