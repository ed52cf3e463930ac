//! Neighbour search: a cell list (O(N)) builds a Verlet list of pairs within reach plus a skin, which is
//! rebuilt only when some particle has moved more than half the skin. Each pair carries its contact memory,
//! which survives rebuilds.
//!
//! Pairs are stored once (i < j) in rows sorted by partner index, so every per-particle sum visits its
//! partners in ascending order whatever the thread count or the rebuild history.
//!
//! A second, shorter list picks from it the pairs within reach plus a small skin (a quarter of the
//! skin), or with memory. It is rebuilt, by a pass over the pairs without the cell list, when some
//! particle has moved more than half that small skin: the pair loop then skips the many pairs of a
//! dense packing that are just out of reach.

/// Default neighbour-list skin as a fraction of the largest diameter.
pub const DEFAULT_SKIN_FRACTION: f64 = 0.1;

use crate::contact::ContactState;
use crate::domain::Domain;
use crate::geometry::MinimumImage;
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
    /// Contact memory of each pair. Edit it through [`NeighborList::restore_states`], which keeps the
    /// short list of pairs that may interact up to date.
    pub state: Vec<ContactState>,
    /// Pairs in which particle k is the second member: `incoming[incoming_start[k]..incoming_start[k + 1]]`,
    /// in ascending order of the first member.
    pub incoming_start: Vec<usize>,
    pub incoming: Vec<u32>,
    reference_position: Vec<Vec3>,
    /// Number of rebuilds so far (diagnostics).
    pub rebuilds: u64,
    /// The near pairs: those within reach plus the near skin, or with memory, when `near_reference` was
    /// taken (ascending pair indices), with their rows and incoming lists like those of the full list.
    pub(crate) near: NearPairs,
    near_reference: Vec<Vec3>,
    /// On a rank of a split system, which spheres it owns: pairs of two ghosts are left out (no
    /// owned sphere needs them). `None`: every pair.
    pub(crate) owned: Option<Vec<bool>>,
}

/// The near pairs, in compressed rows of positions in `pairs`.
#[derive(Clone, Debug, Default)]
pub(crate) struct NearPairs {
    /// Different for every build of near pairs in the process (0: never built), so that data kept per
    /// near pair elsewhere can tell whether it is still current.
    pub build: u64,
    /// Pair indices, ascending.
    pub pairs: Vec<u32>,
    /// Near pairs of particle i as first member: `pairs[row_start[i]..row_start[i + 1]]`.
    pub row_start: Vec<usize>,
    /// Positions in `pairs` of the near pairs of particle k as second member, in ascending order of the
    /// first member: `incoming[incoming_start[k]..incoming_start[k + 1]]`.
    pub incoming_start: Vec<usize>,
    pub incoming: Vec<u32>,
}

/// Width of the near skin as a fraction of the skin.
const NEAR_SKIN_FRACTION: f64 = 0.25;
/// Rows built (or carried over) at a time by one thread in a rebuild.
const ROWS_PER_BLOCK: usize = 256;

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

    /// Makes the next evaluation rebuild the list (and its near pairs) whatever the spheres did.
    pub(crate) fn invalidate(&mut self) {
        self.reference_position.clear();
        self.near_reference.clear();
    }

    /// True when the list was never built or a particle moved more than skin/2 since the last build.
    pub fn needs_rebuild(&self, domain: &Domain, position: &[Vec3]) -> bool {
        self.reference_position.len() != position.len()
            || moved_farther(
                &MinimumImage::new(domain),
                position,
                &self.reference_position,
                0.5 * self.skin,
            )
    }

    /// Rebuilds the pair list for pairs with gap < range + skin, keeping the memory of pairs that persist.
    pub fn rebuild(&mut self, domain: &Domain, position: &[Vec3], radius: &[f64], range: f64) {
        let n = position.len();
        let max_radius = radius.iter().copied().fold(0.0, f64::max);
        let reach = range + self.skin;
        let grid = CellGrid::new(domain, 2.0 * max_radius + reach, position);
        let image = MinimumImage::new(domain);
        let owned = self.owned.as_deref();

        // The rows of blocks of particles, each block one piece of work (and one allocation).
        let blocks: Vec<(Vec<u32>, Vec<usize>)> = (0..n.div_ceil(ROWS_PER_BLOCK))
            .into_par_iter()
            .map(|block| {
                let rows = block * ROWS_PER_BLOCK..n.min((block + 1) * ROWS_PER_BLOCK);
                let mut partners = Vec::new();
                let mut lengths = Vec::with_capacity(rows.len());
                for i in rows {
                    let row_start = partners.len();
                    let cutoff_base = radius[i] + reach;
                    let ghost_i = owned.is_some_and(|o| !o[i]);
                    grid.for_each_near(grid.cell_of(domain, position[i]), |j| {
                        if j > i && !(ghost_i && owned.is_some_and(|o| !o[j])) {
                            let cutoff = cutoff_base + radius[j];
                            if image.separation(position[i], position[j]).length_squared()
                                < cutoff * cutoff
                            {
                                partners.push(j as u32);
                            }
                        }
                    });
                    partners[row_start..].sort_unstable();
                    lengths.push(partners.len() - row_start);
                }
                (partners, lengths)
            })
            .collect();

        let mut row_start = Vec::with_capacity(n + 1);
        row_start.push(0);
        for length in blocks.iter().flat_map(|(_, lengths)| lengths) {
            row_start.push(row_start.last().unwrap() + length);
        }
        let second: Vec<u32> = blocks
            .into_iter()
            .flat_map(|(partners, _)| partners)
            .collect();
        let mut first = Vec::with_capacity(second.len());
        for i in 0..n {
            first.extend(std::iter::repeat_n(
                i as u32,
                row_start[i + 1] - row_start[i],
            ));
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
        self.near_reference.clear();
    }

    /// Copies the memory of pairs present in both the old and the new list (rows are sorted: a merge).
    fn carry_over_states(&self, row_start: &[usize], second: &[u32]) -> Vec<ContactState> {
        let n = row_start.len() - 1;
        let old_rows = self.row_start.len().saturating_sub(1);
        let mut state = vec![ContactState::default(); second.len()];
        let blocks = (0..n).step_by(ROWS_PER_BLOCK).map(|first_row| {
            let rows = first_row..n.min(first_row + ROWS_PER_BLOCK);
            (rows.clone(), row_start[rows.start]..row_start[rows.end])
        });
        let mut slices = Vec::new();
        let mut rest = &mut state[..];
        for (rows, pairs) in blocks {
            let (slice, tail) = std::mem::take(&mut rest).split_at_mut(pairs.len());
            rest = tail;
            slices.push((rows, pairs.start, slice));
        }
        slices
            .into_par_iter()
            .for_each(|(rows, first_pair, block_states)| {
                for i in rows {
                    let new_row = &second[row_start[i]..row_start[i + 1]];
                    let states =
                        &mut block_states[row_start[i] - first_pair..row_start[i + 1] - first_pair];
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
                }
            });
        state
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
        self.near_reference.clear();
    }

    /// True when particle i at `x` is farther than half the near skin from where it was when the near
    /// pairs were built (or when they never were for it).
    #[inline]
    pub(crate) fn left_near(&self, image: &MinimumImage, i: usize, x: Vec3) -> bool {
        let limit = 0.5 * NEAR_SKIN_FRACTION * self.skin;
        match self.near_reference.get(i) {
            Some(&x0) => image.separation(x0, x).length_squared() > limit * limit,
            None => true,
        }
    }

    /// Makes the lists hold every pair that may interact at `position` (within reach, `range` beyond
    /// contact, or with memory), given whether some particle [left](NeighborList::left_near) the near
    /// pairs' reference. Only then are the near pairs rebuilt, and the full list checked: a pair within
    /// reach now was within reach plus the near skin then.
    pub(crate) fn prepare(
        &mut self,
        domain: &Domain,
        position: &[Vec3],
        radius: &[f64],
        range: f64,
        some_left: bool,
    ) {
        if !some_left && self.near_reference.len() == position.len() {
            return;
        }
        let image = MinimumImage::new(domain);
        let near_skin = NEAR_SKIN_FRACTION * self.skin;
        if self.needs_rebuild(domain, position) {
            self.rebuild(domain, position, radius, range);
        }
        let (first, second, state) = (&self.first, &self.second, &self.state);
        let pairs: Vec<u32> = (0..self.pair_count() as u32)
            .into_par_iter()
            .with_min_len(1024)
            .filter(|&pair| {
                let (i, j) = (
                    first[pair as usize] as usize,
                    second[pair as usize] as usize,
                );
                let cutoff = radius[i] + radius[j] + range + near_skin;
                image.separation(position[i], position[j]).length_squared() < cutoff * cutoff
                    || !state[pair as usize].is_empty()
            })
            .collect();
        let n = position.len();
        let row_start = compressed_rows(n, pairs.iter().map(|&p| first[p as usize]));
        let incoming_start = compressed_rows(n, pairs.iter().map(|&p| second[p as usize]));
        let mut fill = incoming_start.clone();
        let mut incoming = vec![0u32; pairs.len()];
        for (position, &pair) in pairs.iter().enumerate() {
            let k = second[pair as usize] as usize;
            incoming[fill[k]] = position as u32;
            fill[k] += 1;
        }
        static BUILDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        self.near = NearPairs {
            build: BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            pairs,
            row_start,
            incoming_start,
            incoming,
        };
        self.near_reference.clear();
        self.near_reference.extend_from_slice(position);
    }
}

/// Start offsets of the rows of `n` particles in a list where particle `member` appears once per entry.
fn compressed_rows(n: usize, members: impl Iterator<Item = u32>) -> Vec<usize> {
    let mut start = vec![0usize; n + 1];
    for k in members {
        start[k as usize + 1] += 1;
    }
    for k in 0..n {
        start[k + 1] += start[k];
    }
    start
}

/// True when some particle is farther than `distance` from its reference position.
fn moved_farther(
    image: &MinimumImage,
    position: &[Vec3],
    reference: &[Vec3],
    distance: f64,
) -> bool {
    let limit = distance * distance;
    position
        .par_chunks(1024)
        .zip(reference.par_chunks(1024))
        .any(|(x, x0)| {
            x.iter()
                .zip(x0)
                .any(|(x, x0)| image.separation(*x0, *x).length_squared() > limit)
        })
}

/// Uniform grid of cells at least `cell_size` wide covering the domain, with the points in each cell (a
/// cell list): every point within `cell_size` of a point lies in the 27 cells around its own.
pub struct CellGrid {
    dims: [usize; 3],
    periodic: [bool; 3],
    origin: Vec3,
    cell_length: Vec3,
    cell_start: Vec<usize>,
    members: Vec<u32>,
    /// Some neighbour cells coincide (fewer than 3 cells along a periodic axis).
    may_repeat: bool,
}

impl CellGrid {
    /// The cells of `domain`, at least `cell_size` wide, holding the points `position`.
    pub fn new(domain: &Domain, cell_size: f64, position: &[Vec3]) -> Self {
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
            may_repeat: (0..3).any(|a| domain.periodic[a] && dims[a] < 3),
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

    /// The cell holding `x` (wrapped on periodic axes, clamped on bounded ones).
    pub fn cell_of(&self, domain: &Domain, x: Vec3) -> usize {
        let x = domain.wrap(x);
        let mut index = [0usize; 3];
        for a in 0..3 {
            let c = ((x[a] - self.origin[a]) / self.cell_length[a]).floor();
            index[a] = (c.max(0.0) as usize).min(self.dims[a] - 1);
        }
        (index[2] * self.dims[1] + index[1]) * self.dims[0] + index[0]
    }

    /// Calls `visit(j)` for every particle in the 27 cells around `cell` (each cell once).
    pub fn for_each_near(&self, cell: usize, mut visit: impl FnMut(usize)) {
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
        // With fewer than 3 cells along a periodic axis, two offsets can reach the same cell.
        if self.may_repeat {
            near.sort_unstable();
        }
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

    #[test]
    fn near_pairs_hold_every_pair_within_reach_as_particles_move() {
        let domain = Domain {
            min: Vec3::ZERO,
            max: Vec3::new(4.0, 4.0, 6.0),
            periodic: [true, true, false],
        };
        let mut s = 987654321u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut position: Vec<Vec3> = (0..300)
            .map(|_| Vec3::new(4.0 * next(), 4.0 * next(), 6.0 * next()))
            .collect();
        let radius: Vec<f64> = (0..300).map(|_| 0.2 + 0.05 * next()).collect();
        let (range, skin) = (0.01, 0.2);
        let mut list = NeighborList::new(skin);
        for _ in 0..60 {
            // Small random moves: the near pairs are rebuilt every few of them, the full list more rarely.
            for x in &mut position {
                *x = domain.wrap(*x + 0.02 * Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5));
            }
            let image = MinimumImage::new(&domain);
            let some_left = (0..position.len()).any(|i| list.left_near(&image, i, position[i]));
            list.prepare(&domain, &position, &radius, range, some_left);
            let near: std::collections::HashSet<(u32, u32)> = list
                .near
                .pairs
                .iter()
                .map(|&p| (list.first[p as usize], list.second[p as usize]))
                .collect();
            for i in 0..position.len() {
                for j in i + 1..position.len() {
                    let reach = radius[i] + radius[j] + range;
                    if domain.separation(position[i], position[j]).length() < reach {
                        assert!(
                            near.contains(&(i as u32, j as u32)),
                            "pair ({i}, {j}) missing"
                        );
                    }
                }
            }
            // Rows and incoming lists of the near pairs point back at them.
            for i in 0..position.len() {
                for &p in &list.near.pairs[list.near.row_start[i]..list.near.row_start[i + 1]] {
                    assert_eq!(list.first[p as usize] as usize, i);
                }
                let incoming = &list.near.incoming
                    [list.near.incoming_start[i]..list.near.incoming_start[i + 1]];
                for &k in incoming {
                    assert_eq!(
                        list.second[list.near.pairs[k as usize] as usize] as usize,
                        i
                    );
                }
            }
        }
        assert!(list.rebuilds >= 3, "{} rebuilds", list.rebuilds);
    }
}
