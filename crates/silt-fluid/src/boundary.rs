//! Boundary conditions on the six faces of the box, and the ghost values that impose them.
//!
//! A bounded axis carries the normal velocity on its boundary faces (index 0 and n); the tangential
//! components and the pressure are imposed through the ghost cells: no-slip and inflow
//! u_ghost = 2 U_face - u_1, free-slip and outflow u_ghost = u_1 (zero gradient), pressure dp/dn = 0
//! (p_ghost = p_1) except p = 0 on outflow faces (p_ghost = -p_1).

use crate::grid::{Field, Grid, Location, Unknowns};
use crate::poisson::AxisKind;
use rayon::prelude::*;

/// Condition on one face of the box.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Boundary {
    /// Periodic (both faces of the axis must be periodic).
    Periodic,
    /// Wall moving with `velocity` in its own plane (its normal component must be zero).
    NoSlip { velocity: [f64; 3] },
    /// Impermeable wall without shear stress.
    FreeSlip,
    /// Fluid enters with `velocity` (its mean over the face) distributed as `profile`; zero normal pressure
    /// gradient.
    Inflow {
        velocity: [f64; 3],
        profile: InflowProfile,
    },
    /// Convective outflow: the normal velocity on the face is carried out of the domain
    /// (du/dt + U_out du/dn = 0, U_out the mean outward velocity on the face) and corrected by the
    /// projection; zero normal gradient of the tangential velocity; pressure (correction) zero on the face.
    Outflow,
    /// The face between two ranks of a distributed run: its ghost values are the neighbouring rank's
    /// (halo exchange, [`crate::decomposition::Decomposition`]). Set by the decomposition on a rank's
    /// own boundaries, never given in a scene.
    Neighbour,
}

/// Shape of an inflow over its face.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum InflowProfile {
    Uniform,
    /// Fully developed laminar profile between the bounded transverse axes: the product over them of
    /// 6 s (1 - s) / (1 + (h/L)^2 / 2), s the position across the axis over its length L; the factor
    /// makes the mean over the face's cells exactly 1.
    Parabolic,
}

impl Boundary {
    /// Whether the tangential velocity takes a prescribed value on this face (else a zero gradient).
    fn tangential_dirichlet(self) -> bool {
        matches!(self, Boundary::NoSlip { .. } | Boundary::Inflow { .. })
    }
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
                    "axis {} is periodic at one end only: a periodic axis needs both ends periodic",
                    AXIS_NAMES[axis]
                ));
            }
            for (side, face) in [low, high].into_iter().enumerate() {
                if let Boundary::Inflow { velocity, .. } = face {
                    if velocity.iter().any(|v| !v.is_finite()) {
                        return Err(format!(
                            "the {} {} inflow velocity is not finite",
                            SIDE_NAMES[side], AXIS_NAMES[axis]
                        ));
                    }
                    let inward = if side == 0 {
                        velocity[axis]
                    } else {
                        -velocity[axis]
                    };
                    if inward <= 0.0 {
                        return Err(format!(
                            "the {} {} inflow velocity {:?} does not point into the domain: its {} component \
                             must be {} zero",
                            SIDE_NAMES[side],
                            AXIS_NAMES[axis],
                            velocity,
                            AXIS_NAMES[axis],
                            if side == 0 { "above" } else { "below" }
                        ));
                    }
                }
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
        let faces = || self.faces.iter().flatten();
        if faces().any(|f| matches!(f, Boundary::Inflow { .. }))
            && !faces().any(|f| *f == Boundary::Outflow)
        {
            return Err(
                "an inflow face needs an outflow face somewhere: otherwise the fluid cannot leave and \
                 the pressure equation has no solution"
                    .into(),
            );
        }
        Ok(())
    }

    pub fn is_periodic(&self, axis: usize) -> bool {
        self.faces[axis][0] == Boundary::Periodic
    }

    /// Whether the face is a boundary of the domain (not periodic, not a neighbouring rank's).
    fn is_bounded(&self, axis: usize, side: usize) -> bool {
        !matches!(
            self.faces[axis][side],
            Boundary::Periodic | Boundary::Neighbour
        )
    }

    /// The faces of velocity component `c` that the solver updates: all along a periodic axis, the interior
    /// faces along a bounded axis normal to them, all cells along the other axes. A rank of a
    /// distributed run updates the high faces of its cells (1..=n), but not a bounded high face.
    pub fn velocity_unknowns(&self, grid: &Grid, c: usize) -> Unknowns {
        let mut shape = grid.cells;
        if self.is_bounded(c, 1) {
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
                kind(self.faces[axis].map(Boundary::tangential_dirichlet))
            }
        })
    }

    /// Pressure (and pressure correction) at the ends of each axis: zero normal gradient at walls and
    /// inflows, zero value at outflows.
    pub fn pressure_kinds(&self) -> [AxisKind; 3] {
        std::array::from_fn(|axis| {
            if self.is_periodic(axis) {
                AxisKind::Periodic
            } else {
                kind(self.faces[axis].map(|b| b == Boundary::Outflow))
            }
        })
    }

    /// The boundary planes of the normal velocity component `c` that the solver updates (outflow faces):
    /// index 0 or n along c, all cells along the other axes.
    pub fn outflow_planes(&self, grid: &Grid, c: usize) -> Vec<Unknowns> {
        (0..2)
            .filter(|&side| self.faces[c][side] == Boundary::Outflow)
            .map(|side| Unknowns::plane(grid.cells, c, if side == 0 { 0 } else { grid.cells[c] }))
            .collect()
    }

    /// Convective outflow over a stage of length `stage_length`: every outflow face of the normal
    /// component `u` (along `c`) moves as du/dt + U_out du/dn = 0, upwind, with U_out the mean outward
    /// velocity on the face (at least zero).
    pub fn advect_outflow(&self, grid: &Grid, c: usize, u: &mut Field, stage_length: f64) {
        let n = grid.cells[c];
        for side in 0..2 {
            if self.faces[c][side] != Boundary::Outflow {
                continue;
            }
            let (face, inner, outward) = if side == 0 {
                (0, 1, -1.0)
            } else {
                (n, n - 1, 1.0)
            };
            let plane = Unknowns::plane(grid.cells, c, face);
            let mut sum = 0.0;
            for_each_point(u.dims, &plane, |x| sum += u.data[x]);
            let speed = (outward * sum / plane.len() as f64).max(0.0);
            let courant = stage_length * speed / grid.spacing;
            let offset = (inner as isize - face as isize) * u.stride(c) as isize;
            for_each_point(u.dims, &plane, |x| {
                let inside = u.data[x.wrapping_add_signed(offset)];
                u.data[x] -= courant * (u.data[x] - inside);
            });
        }
    }

    /// Sets the ghost and boundary values of velocity component `c` on `grid`. Axes are filled in turn over
    /// whole planes (ghosts of the other axes included), so edge and corner ghosts are consistent. Outflow
    /// faces of the normal component keep their values (see [`Boundaries::advect_outflow`]).
    pub fn fill_velocity_ghosts(&self, grid: &Grid, c: usize, u: &mut Field) {
        for axis in 0..3 {
            let n = u.dims[axis] - 2;
            if self.is_periodic(axis) {
                map_plane(u, axis, n, 0, |_, x| x);
                map_plane(u, axis, 1, n + 1, |_, x| x);
                continue;
            }
            for (side, ghost, inner) in [(0, 0, 1), (1, n + 1, n)] {
                let face = self.faces[axis][side];
                if face == Boundary::Neighbour {
                    continue;
                }
                let prescribed = |index: [usize; 3]| -> f64 {
                    match face {
                        Boundary::NoSlip { velocity } => velocity[c],
                        Boundary::Inflow { velocity, profile } => {
                            velocity[c] * self.profile_factor(grid, axis, profile, index, c)
                        }
                        _ => 0.0,
                    }
                };
                if axis == c {
                    // The normal component sits on the boundary face itself (index 0 or n); the plane
                    // beyond the high face is unused and copies it.
                    let boundary_face = if side == 0 { 0 } else { n };
                    if face != Boundary::Outflow {
                        map_plane(u, axis, boundary_face, boundary_face, |index, _| {
                            prescribed(index)
                        });
                    }
                    if side == 1 {
                        map_plane(u, axis, n, n + 1, |_, x| x);
                    }
                } else if face.tangential_dirichlet() {
                    map_plane(u, axis, inner, ghost, |index, x| {
                        2.0 * prescribed(index) - x
                    });
                } else {
                    map_plane(u, axis, inner, ghost, |_, x| x);
                }
            }
        }
    }

    /// Profile of an inflow on the face normal to `axis` at the point `index` of component `c`.
    fn profile_factor(
        &self,
        grid: &Grid,
        axis: usize,
        profile: InflowProfile,
        index: [usize; 3],
        c: usize,
    ) -> f64 {
        match profile {
            InflowProfile::Uniform => 1.0,
            InflowProfile::Parabolic => {
                let point = grid.point(Location::Face(c), index);
                let lengths = grid.lengths();
                (0..3)
                    .filter(|&b| b != axis && !self.is_periodic(b))
                    .map(|b| {
                        // Scaled so that the midpoint sum over the face's cells is exactly its mean.
                        let s = ((point[b] - grid.origin[b]) / lengths[b]).clamp(0.0, 1.0);
                        let cell = grid.spacing / lengths[b];
                        6.0 * s * (1.0 - s) / (1.0 + 0.5 * cell * cell)
                    })
                    .product()
            }
        }
    }

    /// Sets the ghost values of a cell-centred scalar (pressure): periodic copies, zero normal gradient at
    /// walls and inflows, zero value on outflow faces.
    pub fn fill_scalar_ghosts(&self, p: &mut Field) {
        for axis in 0..3 {
            let n = p.dims[axis] - 2;
            if self.is_periodic(axis) {
                map_plane(p, axis, n, 0, |_, x| x);
                map_plane(p, axis, 1, n + 1, |_, x| x);
                continue;
            }
            for (side, ghost, inner) in [(0, 0, 1), (1, n + 1, n)] {
                if self.faces[axis][side] == Boundary::Neighbour {
                    continue;
                }
                if self.faces[axis][side] == Boundary::Outflow {
                    map_plane(p, axis, inner, ghost, |_, x| -x);
                } else {
                    map_plane(p, axis, inner, ghost, |_, x| x);
                }
            }
        }
    }
}

/// Axis kind from whether each end holds a prescribed value (Dirichlet) or a zero gradient (Neumann).
fn kind(dirichlet: [bool; 2]) -> AxisKind {
    match dirichlet {
        [true, true] => AxisKind::DirichletDirichlet,
        [false, false] => AxisKind::NeumannNeumann,
        [true, false] => AxisKind::DirichletNeumann,
        [false, true] => AxisKind::NeumannDirichlet,
    }
}

/// Calls `visit(linear index)` for every point of the box `points` of a field with dims `dims`.
pub(crate) fn for_each_point(dims: [usize; 3], points: &Unknowns, mut visit: impl FnMut(usize)) {
    for k in points.start[2]..points.start[2] + points.shape[2] {
        for j in points.start[1]..points.start[1] + points.shape[1] {
            let first = dims[0] * (j + dims[1] * k);
            for i in points.start[0]..points.start[0] + points.shape[0] {
                visit(first + i);
            }
        }
    }
}

/// Sets every point of plane `to` (normal to `axis`, ghosts of the other axes included) from the point
/// of plane `from` on the same line: `value(index of the point set, f[from])`. Planes normal to x and y
/// are handled z-plane by z-plane in parallel; a plane normal to z is one contiguous block.
fn map_plane(
    f: &mut Field,
    axis: usize,
    from: usize,
    to: usize,
    value: impl Fn([usize; 3], f64) -> f64 + Sync,
) {
    let [d0, d1, _] = f.dims;
    let plane_len = d0 * d1;
    match axis {
        0 | 1 => f
            .data
            .par_chunks_mut(plane_len)
            .enumerate()
            .for_each(|(k, plane)| {
                if axis == 0 {
                    for (j, row) in plane.chunks_mut(d0).enumerate() {
                        row[to] = value([to, j, k], row[from]);
                    }
                } else {
                    for i in 0..d0 {
                        plane[to * d0 + i] = value([i, to, k], plane[from * d0 + i]);
                    }
                }
            }),
        _ => {
            let update = |target: &mut [f64], source: Option<&[f64]>| {
                target
                    .par_chunks_mut(d0)
                    .enumerate()
                    .for_each(|(j, target)| {
                        for (i, t) in target.iter_mut().enumerate() {
                            let s = source.map_or(*t, |s| s[j * d0 + i]);
                            *t = value([i, j, to], s);
                        }
                    });
            };
            let plane = |k: usize| k * plane_len..(k + 1) * plane_len;
            if from == to {
                update(&mut f.data[plane(to)], None);
            } else if from < to {
                let (low, high) = f.data.split_at_mut(to * plane_len);
                update(&mut high[..plane_len], Some(&low[plane(from)]));
            } else {
                let (low, high) = f.data.split_at_mut(from * plane_len);
                update(&mut low[plane(to)], Some(&high[..plane_len]));
            }
        }
    }
}
