//! Neighbour search: a cell list (O(N)) builds a Verlet list of pairs within reach plus a skin, which is
//! rebuilt only when some particle has moved more than half the skin. Each pair carries its contact memory,
//! which survives rebuilds.
//!
//! Pairs are stored once (i < j) in rows sorted by partner index, so every per-particle sum visits its
//! partners in ascending order whatever the thread count or the rebuild history.

use crate::contact::ContactState;
use crate::domain::Domain;
use crate::Vec3;
use rayon::prelude::*;

/// Half neighbour list in compressed rows, with per-pair contact memory.
#[derive(Clone, Debug, Default)]
pub struct NeighborList {
    /// Extra reach beyond the interaction range, traded against rebuild frequency.
    pub skin: f64,
    /// Pairs of particle i are `row_start[i]..row_start[i + 1]`.
    pub row_start: Vec<usize>,
    /// First member i of each pair.
    pub first: Vec<u32>,
    /// Second member j > i of each pair.
    pub second: Vec<u32>,
    /// Contact memory of each pair.
    pub state: Vec<ContactState>,
    /// Pairs in which particle k is the second member: `incoming[incoming_start[k]..incoming_start[k + 1]]`,
    /// in ascending order of the first member.
    pub incoming_start: Vec<usize>,
    pub incoming: Vec<u32>,
    reference_position: Vec<Vec3>,
    /// Number of rebuilds so far (diagnostics).
    pub rebuilds: u64,
}

impl NeighborList {
    pub fn new(skin: f64) -> Self {
        NeighborList {
            skin,
            ..Default::default()
        }
    }

    pub fn pair_count(&self) -> usize {
        self.first.len()
    }

    /// True when the list was never built or a particle moved more than skin/2 since the last build.
    pub fn needs_rebuild(&self, domain: &Domain, position: &[Vec3]) -> bool {
        if self.reference_position.len() != position.len() {
            return true;
        }
        let limit = 0.25 * self.skin * self.skin;
        position
            .par_iter()
            .zip(self.reference_position.par_iter())
            .any(|(x, x0)| domain.separation(*x0, *x).length_squared() > limit)
    }

    /// Rebuilds the pair list for pairs with gap < range + skin, keeping the memory of pairs that persist.
    pub fn rebuild(&mut self, domain: &Domain, position: &[Vec3], radius: &[f64], range: f64) {
        let n = position.len();
        let max_radius = radius.iter().copied().fold(0.0, f64::max);
        let reach = range + self.skin;
        let grid = CellGrid::new(domain, 2.0 * max_radius + reach, position);

        let rows: Vec<Vec<u32>> = (0..n)
            .into_par_iter()
            .map(|i| {
                let mut partners = Vec::new();
                let cutoff_base = radius[i] + reach;
                grid.for_each_near(grid.cell_of(domain, position[i]), |j| {
                    if j > i {
                        let cutoff = cutoff_base + radius[j];
                        if domain.separation(position[i], position[j]).length_squared()
                            < cutoff * cutoff
                        {
                            partners.push(j as u32);
                        }
                    }
                });
                partners.sort_unstable();
                partners
            })
            .collect();

        let mut row_start = Vec::with_capacity(n + 1);
        row_start.push(0);
        for row in &rows {
            row_start.push(row_start.last().unwrap() + row.len());
        }
        let second: Vec<u32> = rows.into_iter().flatten().collect();
        let mut first = Vec::with_capacity(second.len());
        for i in 0..n {
            first.extend(std::iter::repeat(i as u32).take(row_start[i + 1] - row_start[i]));
        }
        let state = self.carry_over_states(&row_start, &second);

        // Incoming pairs per particle, in ascending order of the first member.
        let mut incoming_start = vec![0usize; n + 1];
        for &j in &second {
            incoming_start[j as usize + 1] += 1;
        }
        for k in 0..n {
            incoming_start[k + 1] += incoming_start[k];
        }
        let mut fill = incoming_start.clone();
        let mut incoming = vec![0u32; second.len()];
        for (pair, &j) in second.iter().enumerate() {
            incoming[fill[j as usize]] = pair as u32;
            fill[j as usize] += 1;
        }

        self.row_start = row_start;
        self.first = first;
        self.second = second;
        self.state = state;
        self.incoming_start = incoming_start;
        self.incoming = incoming;
        self.reference_position = position.to_vec();
        self.rebuilds += 1;
    }

    /// Copies the memory of pairs present in both the old and the new list (rows are sorted: a merge).
    fn carry_over_states(&self, row_start: &[usize], second: &[u32]) -> Vec<ContactState> {
        let n = row_start.len() - 1;
        let old_rows = self.row_start.len().saturating_sub(1);
        let per_row: Vec<Vec<ContactState>> = (0..n)
            .into_par_iter()
            .map(|i| {
                let new_row = &second[row_start[i]..row_start[i + 1]];
                let mut states = vec![ContactState::default(); new_row.len()];
                if i < old_rows {
                    let old = self.row_start[i]..self.row_start[i + 1];
                    let old_partners = &self.second[old.clone()];
                    let old_states = &self.state[old];
                    let mut o = 0;
                    for (slot, &j) in states.iter_mut().zip(new_row) {
                        while o < old_partners.len() && old_partners[o] < j {
                            o += 1;
                        }
                        if o < old_partners.len() && old_partners[o] == j {
                            *slot = old_states[o];
                        }
                    }
                }
                states
            })
            .collect();
        per_row.into_iter().flatten().collect()
    }

    /// Memory of the pair (i, j), if it is in the list.
    pub fn find(&self, i: usize, j: usize) -> Option<usize> {
        let (a, b) = if i < j { (i, j) } else { (j, i) };
        let row = *self.row_start.get(a)?..*self.row_start.get(a + 1)?;
        let offset = self.second[row.clone()].binary_search(&(b as u32)).ok()?;
        Some(row.start + offset)
    }

    /// Replaces the whole list and its memory (restart from a checkpoint).
    pub fn restore_states(&mut self, pairs: &[(u32, u32, ContactState)]) {
        for &(i, j, s) in pairs {
            if let Some(p) = self.find(i as usize, j as usize) {
                self.state[p] = s;
            }
        }
    }
}

/// Uniform grid of cells at least `cell_size` wide covering the domain.
struct CellGrid {
    dims: [usize; 3],
    periodic: [bool; 3],
    origin: Vec3,
    cell_length: Vec3,
    cell_start: Vec<usize>,
    members: Vec<u32>,
}

impl CellGrid {
    fn new(domain: &Domain, cell_size: f64, position: &[Vec3]) -> Self {
        let length = domain.length();
        let mut dims = [1usize; 3];
        let mut cell_length = Vec3::ZERO;
        // Cells no smaller than the reach, and not many more cells than particles (a few spheres in a
        // large box would otherwise pay for millions of empty cells at every rebuild).
        let max_cells = 8 * position.len() + 64;
        let mut size = cell_size;
        loop {
            for a in 0..3 {
                dims[a] = ((length[a] / size).floor() as usize).clamp(1, 1 << 10);
                cell_length[a] = length[a] / dims[a] as f64;
            }
            if dims.iter().product::<usize>() <= max_cells {
                break;
            }
            size *= 1.26;
        }
        let mut grid = CellGrid {
            dims,
            periodic: domain.periodic,
            origin: domain.min,
            cell_length,
            cell_start: vec![],
            members: vec![],
        };
        let cells: Vec<usize> = position.iter().map(|&x| grid.cell_of(domain, x)).collect();
        let count = dims[0] * dims[1] * dims[2];
        let mut start = vec![0usize; count + 1];
        for &c in &cells {
            start[c + 1] += 1;
        }
        for c in 0..count {
            start[c + 1] += start[c];
        }
        let mut fill = start.clone();
        let mut members = vec![0u32; cells.len()];
        for (i, &c) in cells.iter().enumerate() {
            members[fill[c]] = i as u32;
            fill[c] += 1;
        }
        grid.cell_start = start;
        grid.members = members;
        grid
    }

    fn cell_of(&self, domain: &Domain, x: Vec3) -> usize {
        let x = domain.wrap(x);
        let mut index = [0usize; 3];
        for a in 0..3 {
            let c = ((x[a] - self.origin[a]) / self.cell_length[a]).floor();
            index[a] = (c.max(0.0) as usize).min(self.dims[a] - 1);
        }
        (index[2] * self.dims[1] + index[1]) * self.dims[0] + index[0]
    }

    /// Calls `visit(j)` for every particle in the 27 cells around `cell` (each cell once).
    fn for_each_near(&self, cell: usize, mut visit: impl FnMut(usize)) {
        let centre = [
            cell % self.dims[0],
            (cell / self.dims[0]) % self.dims[1],
            cell / (self.dims[0] * self.dims[1]),
        ];
        let mut near = [usize::MAX; 27];
        let mut count = 0;
        for dz in -1i64..=1 {
            for dy in -1i64..=1 {
                for dx in -1i64..=1 {
                    let offset = [dx, dy, dz];
                    let mut index = [0usize; 3];
                    let mut inside = true;
                    for a in 0..3 {
                        let c = centre[a] as i64 + offset[a];
                        let d = self.dims[a] as i64;
                        if c < 0 || c >= d {
                            if self.periodic[a] {
                                index[a] = c.rem_euclid(d) as usize;
                            } else {
                                inside = false;
                            }
                        } else {
                            index[a] = c as usize;
                        }
                    }
                    if inside {
                        near[count] =
                            (index[2] * self.dims[1] + index[1]) * self.dims[0] + index[0];
                        count += 1;
                    }
                }
            }
        }
        let near = &mut near[..count];
        near.sort_unstable();
        let mut previous = usize::MAX;
        for &c in near.iter() {
            if c == previous {
                continue;
            }
            previous = c;
            for &j in &self.members[self.cell_start[c]..self.cell_start[c + 1]] {
                visit(j as usize);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_same_pairs_as_brute_force() {
        let domain = Domain {
            min: Vec3::ZERO,
            max: Vec3::new(5.0, 5.0, 8.0),
            periodic: [true, true, false],
        };
        // A deterministic scatter of points with a few periodic neighbours.
        let mut position = Vec::new();
        let mut radius = Vec::new();
        let mut s = 12345u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..400 {
            position.push(Vec3::new(5.0 * next(), 5.0 * next(), 8.0 * next()));
            radius.push(0.2 + 0.1 * next());
        }
        let mut list = NeighborList::new(0.1);
        list.rebuild(&domain, &position, &radius, 0.05);
        let mut expected = Vec::new();
        for i in 0..position.len() {
            for j in i + 1..position.len() {
                let cutoff = radius[i] + radius[j] + 0.15;
                if domain.separation(position[i], position[j]).length() < cutoff {
                    expected.push((i as u32, j as u32));
                }
            }
        }
        let found: Vec<(u32, u32)> = list
            .first
            .iter()
            .copied()
            .zip(list.second.iter().copied())
            .collect();
        assert_eq!(found, expected);
        // Incoming lists point back at the right pairs.
        for k in 0..position.len() {
            for &p in &list.incoming[list.incoming_start[k]..list.incoming_start[k + 1]] {
                assert_eq!(list.second[p as usize] as usize, k);
            }
        }
    }
}
