//! The uniform staggered (MAC) grid and its fields.
//!
//! Every field is stored with one ghost layer on each side, x fastest: index (i, j, k) with i in
//! 0..=n0 + 1. Cell (i, j, k), i in 1..=n0, has its centre at x = origin + (i - 1/2) h. The velocity
//! component along axis c lives on the faces normal to c: index i along c is the face at x = origin + i h
//! (the high face of cell i), so faces 0 and n_c are the two boundary faces of a bounded axis. Along the
//! other axes a velocity component is cell-centred like the pressure.
//!
//! The solver's unknowns of a field are a box of its indices (see [`Unknowns`]); the linear solvers work
//! on compact arrays of exactly those values, in the same x-fastest order.

use rayon::prelude::*;

/// A uniform grid of cubic cells (the seed's h is the same in all directions).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Grid {
    /// Cells along x, y and z.
    pub cells: [usize; 3],
    /// Cell size h.
    pub spacing: f64,
    /// Low corner of the domain.
    pub origin: [f64; 3],
    /// Cells of the domain before this grid's first, per axis: a rank's slab of a distributed run
    /// ([`crate::decomposition::Decomposition`]) is the domain's grid with fewer cells and an
    /// offset, so that its points are computed as the whole grid's (the same numbers); 0 otherwise.
    pub offset: [usize; 3],
}

impl Grid {
    /// Low corner of this grid: the domain's origin moved by the offset.
    pub fn low_corner(&self) -> [f64; 3] {
        std::array::from_fn(|a| self.origin[a] + self.offset[a] as f64 * self.spacing)
    }

    /// Lengths n_c h of this grid (the domain's, but for a rank's slab).
    pub fn lengths(&self) -> [f64; 3] {
        self.cells.map(|n| n as f64 * self.spacing)
    }

    /// Number of cells.
    pub fn cell_count(&self) -> usize {
        self.cells.iter().product()
    }

    /// Dimensions of a field with its ghost layers.
    pub fn field_dims(&self) -> [usize; 3] {
        self.cells.map(|n| n + 2)
    }

    /// Cell volume h^3.
    pub fn cell_volume(&self) -> f64 {
        self.spacing.powi(3)
    }

    /// Position of the point with indices `index` of a field located as `location`.
    pub fn point(&self, location: Location, index: [usize; 3]) -> [f64; 3] {
        let mut x = [0.0; 3];
        for axis in 0..3 {
            let offset = match location {
                Location::Face(c) if c == axis => 0.0,
                _ => -0.5,
            };
            let global = (index[axis] + self.offset[axis]) as f64;
            x[axis] = self.origin[axis] + (global + offset) * self.spacing;
        }
        x
    }
}

/// Where a field's values sit in a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// Cell centres (pressure).
    Centre,
    /// Centres of the faces normal to the axis (velocity component along it).
    Face(usize),
}

/// A scalar field with one ghost layer on each side, x fastest.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Field {
    /// Dimensions including the ghost layers (cells + 2).
    pub dims: [usize; 3],
    pub data: Vec<f64>,
}

impl Field {
    /// A zero field on `grid`.
    pub fn zeros(grid: &Grid) -> Self {
        let dims = grid.field_dims();
        Field {
            dims,
            data: vec![0.0; dims.iter().product()],
        }
    }

    /// Linear index of (i, j, k).
    #[inline(always)]
    pub fn index(&self, i: usize, j: usize, k: usize) -> usize {
        i + self.dims[0] * (j + self.dims[1] * k)
    }

    /// Offset between neighbours along `axis`.
    #[inline(always)]
    pub fn stride(&self, axis: usize) -> usize {
        match axis {
            0 => 1,
            1 => self.dims[0],
            _ => self.dims[0] * self.dims[1],
        }
    }

    #[inline(always)]
    pub fn at(&self, i: usize, j: usize, k: usize) -> f64 {
        self.data[self.index(i, j, k)]
    }

    /// Length of one z-plane (with ghosts).
    pub fn plane_len(&self) -> usize {
        self.dims[0] * self.dims[1]
    }
}

/// Calls `update(row, first, compact)` for every row (along x) of the box `unknowns` of `f`, in parallel
/// over z-planes: `row` holds the row's values, `first` is the linear index of its first one in `f`, and
/// `compact` the position of that value in the compact array of the box. Each row is visited once, so
/// the result does not depend on the thread count.
pub fn for_each_row(
    f: &mut Field,
    unknowns: &Unknowns,
    update: impl Fn(&mut [f64], usize, usize) + Sync,
) {
    let [m0, m1, m2] = unknowns.shape;
    let start = unknowns.start;
    let row_len = f.dims[0];
    let plane_len = f.plane_len();
    f.data
        .par_chunks_mut(plane_len)
        .enumerate()
        .skip(start[2])
        .take(m2)
        .for_each(|(k, plane)| {
            for jc in 0..m1 {
                let first = (jc + start[1]) * row_len + start[0];
                let compact = ((k - start[2]) * m1 + jc) * m0;
                update(
                    &mut plane[first..first + m0],
                    k * plane_len + first,
                    compact,
                );
            }
        });
}

/// The box of indices of a field that the solver updates: `start[a]..start[a] + shape[a]` along axis a.
/// Their compact array has `shape` entries per axis, x fastest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unknowns {
    pub start: [usize; 3],
    pub shape: [usize; 3],
}

impl Unknowns {
    /// The plane of points with index `index` along `axis`, every cell along the other axes of a grid of
    /// `cells`.
    pub fn plane(cells: [usize; 3], axis: usize, index: usize) -> Self {
        let mut start = [1; 3];
        let mut shape = cells;
        start[axis] = index;
        shape[axis] = 1;
        Unknowns { start, shape }
    }

    /// Number of unknowns.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Length of one z-plane of the compact array.
    pub fn plane_len(&self) -> usize {
        self.shape[0] * self.shape[1]
    }
}
