//! Interpolation from the staggered grid to the markers and spreading from the markers to the grid with
//! the regularised delta (seed sec. 2; Uhlmann 2005): U(X) = sum_x u(x) delta_h(x - X) h^3 and
//! f(x) = sum_l F_l delta_h(x - X_l) Delta V_l, each velocity component on its own face points.

use crate::delta::support;
use crate::Vec3;
use rayon::prelude::*;
use silt_fluid::boundary::Boundaries;
use silt_fluid::grid::{Field, Grid, Unknowns};

/// Where the unknowns of each velocity component lie, and which axes wrap around.
#[derive(Clone, Debug)]
pub struct GridLayout {
    pub grid: Grid,
    pub periodic: [bool; 3],
    pub unknowns: [Unknowns; 3],
    /// Dimensions of a field with its ghost layers.
    pub dims: [usize; 3],
}

/// The support of one marker for one velocity component: the three points along each axis (indices of
/// the field, ghosts included, each an unknown of the component) and their weights phi.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stencil {
    pub index: [[usize; 3]; 3],
    pub weight: [[f64; 3]; 3],
}

impl GridLayout {
    pub fn new(grid: Grid, boundaries: &Boundaries) -> Self {
        GridLayout {
            grid,
            periodic: std::array::from_fn(|a| boundaries.is_periodic(a)),
            unknowns: std::array::from_fn(|c| boundaries.velocity_unknowns(&grid, c)),
            dims: grid.field_dims(),
        }
    }

    /// Support of a marker at `x` for component `c`, or `None` where it reaches beyond the unknowns of
    /// the component (across or onto a wall): such a marker is disabled (seed Fig. 2).
    pub fn stencil(&self, c: usize, x: Vec3) -> Option<Stencil> {
        let mut stencil = Stencil::default();
        for a in 0..3 {
            // Field index i of a point of component c sits at origin + (i - 1/2) h off its own axis and
            // at origin + i h along it (silt_fluid::grid).
            let half = if a == c { 0.0 } else { 0.5 };
            let s = (x[a] - self.grid.origin[a]) / self.grid.spacing + half;
            if !s.is_finite() {
                return None;
            }
            let (first, weight) = support(s);
            for m in 0..3 {
                stencil.index[a][m] = self.unknown_index(c, a, first + m as isize)?;
            }
            stencil.weight[a] = weight;
        }
        Some(stencil)
    }

    /// b - a, along periodic axes the shortest of its images.
    pub fn separation(&self, a: Vec3, b: Vec3) -> Vec3 {
        let mut d = b - a;
        for axis in 0..3 {
            if self.periodic[axis] {
                let length = self.grid.cells[axis] as f64 * self.grid.spacing;
                d[axis] -= length * (d[axis] / length).round();
            }
        }
        d
    }

    /// The field index along `axis` of the unknown of component `c` at index `i` (any integer): wrapped
    /// into the domain along a periodic axis, `None` outside the unknowns along a bounded one.
    #[inline]
    pub fn unknown_index(&self, c: usize, axis: usize, i: isize) -> Option<usize> {
        let Unknowns { start, shape } = self.unknowns[c];
        let (start, count) = (start[axis] as isize, shape[axis] as isize);
        if self.periodic[axis] {
            Some(((i - start).rem_euclid(count) + start) as usize)
        } else {
            (start..start + count).contains(&i).then_some(i as usize)
        }
    }

    /// Linear index in a field of the point (i, j, k).
    #[inline]
    pub fn field_index(&self, [i, j, k]: [usize; 3]) -> usize {
        i + self.dims[0] * (j + self.dims[1] * k)
    }

    /// Index in the compact array of component c's unknowns of the point (i, j, k).
    #[inline]
    pub fn compact_index(&self, c: usize, [i, j, k]: [usize; 3]) -> usize {
        let Unknowns { start, shape } = self.unknowns[c];
        (i - start[0]) + shape[0] * ((j - start[1]) + shape[1] * (k - start[2]))
    }

    /// sum over the support of w (u + delta) for component c: the velocity u + delta interpolated to a
    /// marker (u a field with ghosts, delta the compact array of the unknowns).
    pub fn interpolate(&self, c: usize, stencil: &Stencil, u: &Field, delta: &[f64]) -> f64 {
        let mut value = 0.0;
        for (mz, &k) in stencil.index[2].iter().enumerate() {
            for (my, &j) in stencil.index[1].iter().enumerate() {
                let wyz = stencil.weight[2][mz] * stencil.weight[1][my];
                for (mx, &i) in stencil.index[0].iter().enumerate() {
                    let point = [i, j, k];
                    let w = wyz * stencil.weight[0][mx];
                    value +=
                        w * (u.data[self.field_index(point)] + delta[self.compact_index(c, point)]);
                }
            }
        }
        value
    }
}

/// For spreading: the markers whose support touches each z-plane of a component's unknowns, in marker
/// order, so that each plane is written by one task and each point sums its markers in the same order
/// for any thread count.
#[derive(Clone, Debug, Default)]
pub struct PlaneLists {
    /// Entries of plane kc: `entries[plane_start[kc]..plane_start[kc + 1]]`.
    plane_start: Vec<usize>,
    /// (marker, which of its three z-points lies in the plane).
    entries: Vec<(u32, u8)>,
}

impl PlaneLists {
    /// The lists of component c for the markers' stencils of that component.
    pub fn new(layout: &GridLayout, c: usize, stencils: &[Stencil]) -> Self {
        let planes = layout.unknowns[c].shape[2];
        let z0 = layout.unknowns[c].start[2];
        let mut plane_start = vec![0; planes + 1];
        for s in stencils {
            for &k in &s.index[2] {
                plane_start[k - z0 + 1] += 1;
            }
        }
        for kc in 0..planes {
            plane_start[kc + 1] += plane_start[kc];
        }
        let mut fill = plane_start.clone();
        let mut entries = vec![(0, 0); plane_start[planes]];
        for (l, s) in stencils.iter().enumerate() {
            for (mz, &k) in s.index[2].iter().enumerate() {
                let slot = &mut fill[k - z0];
                entries[*slot] = (l as u32, mz as u8);
                *slot += 1;
            }
        }
        PlaneLists {
            plane_start,
            entries,
        }
    }
}

/// delta += sum_l value_l w_l(x) at the unknowns of component c (compact array): the spread of the
/// per-marker `values` (already multiplied by whatever factor the caller needs) with the weights of the
/// markers' `stencils`; parallel over z-planes, each point summing its markers in marker order.
pub fn spread(
    layout: &GridLayout,
    c: usize,
    stencils: &[Stencil],
    lists: &PlaneLists,
    values: &[f64],
    delta: &mut [f64],
) {
    let Unknowns { start, shape } = layout.unknowns[c];
    let plane_len = shape[0] * shape[1];
    delta
        .par_chunks_mut(plane_len)
        .enumerate()
        .for_each(|(kc, plane)| {
            let entries = &lists.entries[lists.plane_start[kc]..lists.plane_start[kc + 1]];
            for &(l, mz) in entries {
                let s = &stencils[l as usize];
                let value = values[l as usize] * s.weight[2][mz as usize];
                for (my, &j) in s.index[1].iter().enumerate() {
                    let row = shape[0] * (j - start[1]);
                    let wy = value * s.weight[1][my];
                    for (mx, &i) in s.index[0].iter().enumerate() {
                        plane[row + i - start[0]] += wy * s.weight[0][mx];
                    }
                }
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use silt_fluid::boundary::Boundaries;

    fn layout(cells: [usize; 3], boundaries: &Boundaries) -> GridLayout {
        GridLayout::new(
            Grid {
                cells,
                spacing: 0.5,
                origin: [-1.0, 0.0, 2.0],
            },
            boundaries,
        )
    }

    /// A linear field is interpolated exactly (the kernel's first moment vanishes), on every component,
    /// across the periodic seam as well.
    #[test]
    fn interpolates_linear_fields_exactly() {
        let layout = layout([8, 7, 9], &Boundaries::periodic());
        let grid = layout.grid;
        for c in 0..3 {
            let mut u = Field::zeros(&grid);
            let delta = vec![0.0; layout.unknowns[c].len()];
            let f = |x: [f64; 3]| 0.3 + 0.7 * x[0] - 0.2 * x[1] + 0.45 * x[2];
            for k in 0..u.dims[2] {
                for j in 0..u.dims[1] {
                    for i in 0..u.dims[0] {
                        let idx = u.index(i, j, k);
                        u.data[idx] = f(grid.point(silt_fluid::grid::Location::Face(c), [i, j, k]));
                    }
                }
            }
            // Away from the seam: exact for a linear field.
            let x = Vec3::new(0.37, 1.61, 4.02);
            let s = layout.stencil(c, x).unwrap();
            let value = layout.interpolate(c, &s, &u, &delta);
            assert!(
                (value - f(x.to_array())).abs() < 1e-13,
                "component {c}: {value}"
            );
            // Constant field: 1 everywhere, also across the seam.
            u.data.iter_mut().for_each(|v| *v = 1.0);
            let s = layout.stencil(c, Vec3::new(-0.98, 0.02, 2.1)).unwrap();
            assert!((layout.interpolate(c, &s, &u, &delta) - 1.0).abs() < 1e-14);
        }
    }

    /// Spreading conserves the total (sum of w = 1 per marker) and is the adjoint of interpolation:
    /// sum_x g(x) (S F)(x) = sum_l F_l (I g)_l for any g.
    #[test]
    fn spreading_conserves_and_is_adjoint_to_interpolation() {
        let boundaries = Boundaries::channel(1);
        let layout = layout([8, 9, 7], &boundaries);
        let grid = layout.grid;
        let markers: Vec<Vec3> = crate::markers::fibonacci_sphere(60)
            .into_iter()
            .map(|d| Vec3::new(1.0, 2.2, 3.7) + 1.1 * d)
            .collect();
        for c in 0..3 {
            let stencils: Vec<Stencil> = markers
                .iter()
                .map(|&x| layout.stencil(c, x).unwrap())
                .collect();
            let lists = PlaneLists::new(&layout, c, &stencils);
            let values: Vec<f64> = (0..markers.len())
                .map(|l| (l as f64 * 0.37).sin())
                .collect();
            let mut spread_field = vec![0.0; layout.unknowns[c].len()];
            spread(&layout, c, &stencils, &lists, &values, &mut spread_field);
            let total: f64 = spread_field.iter().sum();
            let expected: f64 = values.iter().sum();
            assert!((total - expected).abs() < 1e-12, "component {c}");
            // Adjointness with a test function g at the unknowns.
            let g: Vec<f64> = (0..spread_field.len())
                .map(|x| (x as f64 * 0.11).cos())
                .collect();
            let lhs: f64 = g.iter().zip(&spread_field).map(|(a, b)| a * b).sum();
            let zero = Field::zeros(&grid);
            let rhs: f64 = stencils
                .iter()
                .zip(&values)
                .map(|(s, v)| v * layout.interpolate(c, s, &zero, &g))
                .sum();
            assert!((lhs - rhs).abs() < 1e-12, "component {c}: {lhs} vs {rhs}");
        }
    }

    /// A support that reaches a wall is refused. At 1.2 h from the wall y = 0 the cell-centred points of
    /// u are all unknowns (0.5 h, 1.5 h, 2.5 h), but v's support holds the wall face y = 0: the marker's
    /// support crosses the wall and `forcing` disables it. Periodic axes wrap instead.
    #[test]
    fn supports_reaching_a_wall_are_refused() {
        let walls = layout([8, 8, 8], &Boundaries::channel(1));
        let periodic = layout([8, 8, 8], &Boundaries::periodic());
        let near = Vec3::new(0.5, 0.6, 4.0);
        assert!(walls.stencil(0, near).is_some());
        assert!(walls.stencil(1, near).is_none());
        for c in 0..3 {
            assert!(periodic.stencil(c, near).is_some(), "component {c}");
        }
        // 1.5 h away the support only touches the wall.
        let clear = Vec3::new(0.5, 0.75, 4.0);
        for c in 0..3 {
            assert!(walls.stencil(c, clear).is_some(), "component {c}");
        }
    }

    /// The spread gives the same bits for any thread count.
    #[test]
    fn spreading_is_independent_of_the_thread_count() {
        let layout = layout([12, 10, 16], &Boundaries::periodic());
        let markers: Vec<Vec3> = crate::markers::fibonacci_sphere(400)
            .into_iter()
            .map(|d| Vec3::new(1.0, 2.0, 5.0) + 1.9 * d)
            .collect();
        let stencils: Vec<Stencil> = markers
            .iter()
            .map(|&x| layout.stencil(2, x).unwrap())
            .collect();
        let lists = PlaneLists::new(&layout, 2, &stencils);
        let values: Vec<f64> = (0..markers.len()).map(|l| 1.0 / (1.0 + l as f64)).collect();
        let run = |threads| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut out = vec![0.0; layout.unknowns[2].len()];
            pool.install(|| spread(&layout, 2, &stencils, &lists, &values, &mut out));
            out
        };
        assert_eq!(run(1), run(2));
    }
}
