//! Multi-direct forcing inside each Runge–Kutta stage (Uhlmann 2005 with the iterations of Kempe &
//! Froehlich 2012 and Breugem 2012; notes/ibm.md). With the predicted velocity u~ = u + delta of a stage
//! of length dt_k = 2 alpha_k dt, each of `iterations` passes
//!
//! 1. interpolates u~ to the markers: U~_l = sum_x u~(x) delta_h(x - X_l) h^3,
//! 2. takes the marker force F_l = (U_d(X_l) - U~_l) / dt_k, U_d = u_p + omega_p x (X_l - x_p),
//! 3. spreads it, f(x) = sum_l F_l delta_h(x - X_l) Delta V_l, and adds dt_k f to u~,
//!
//! so that the forced velocity matches the rigid-body motion at the markers more closely with each
//! pass. The hydrodynamic force and torque on each sphere are the reactions, -rho_f sum_l F_l Delta V_l
//! and -rho_f sum_l (X_l - x_p) x F_l Delta V_l (per unit fluid density here), summed over the passes.

use crate::markers::SphereMarkers;
use crate::rank_block::BlockForcing;
use crate::transfer::{
    geometric_rounds, interpolate, spread, warm_block, GridLayout, MarkerBlock, SpreadGroups,
    Stencil, TILE,
};
use crate::Vec3;
use rayon::prelude::*;
use silt_core::simd::vectorized;
use silt_dem::domain::Domain;
use silt_dem::neighbor::CellGrid;
use silt_fluid::boundary::Boundaries;
use silt_fluid::decomposition::Decomposition;
use silt_fluid::grid::{Field, Grid, Unknowns};
use silt_fluid::solver::StageForcing;

/// A sphere whose surface velocity the forcing imposes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidSphere {
    pub centre: Vec3,
    pub radius: f64,
    pub velocity: Vec3,
    pub angular_velocity: Vec3,
}

impl RigidSphere {
    /// A sphere at rest.
    pub fn fixed(centre: Vec3, radius: f64) -> Self {
        RigidSphere {
            centre,
            radius,
            velocity: Vec3::ZERO,
            angular_velocity: Vec3::ZERO,
        }
    }
}

/// Which markers of a sphere close to another are disabled: the seed disables "overlapping markers
/// between two particles" (sec. 2, Fig. 2), as it disables markers whose supports overlap a wall.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CloseSphereMarkers {
    /// Markers whose support (3 h wide) overlaps the support of the other sphere's markers: within
    /// 3 h of its marker sphere (`notes/ibm.md`'s reading; the default).
    #[default]
    OverlappingSupports,
    /// Markers whose support reaches into the other sphere, as the wall rule reads: within 1.5 h of
    /// its surface. Fewer are disabled at coarse resolution (`validation/sheared-bed/README.md`).
    ReachingTheSurface,
}

impl CloseSphereMarkers {
    /// The distance from the other sphere's centre within which a marker is disabled, for the other
    /// sphere's `radius` and `marker_radius` on a grid of cell size `h`.
    pub fn reach(self, radius: f64, marker_radius: f64, h: f64) -> f64 {
        match self {
            CloseSphereMarkers::OverlappingSupports => marker_radius + 3.0 * h,
            CloseSphereMarkers::ReachingTheSurface => radius + 1.5 * h,
        }
    }
}

/// Direct forcing of the fluid by a set of rigid spheres, as a [`StageForcing`] of the fluid solver.
pub struct DirectForcing {
    pub layout: GridLayout,
    pub spheres: Vec<RigidSphere>,
    /// Forcing passes per stage (Kempe & Froehlich 2012 use 2-3; 1 is Uhlmann's original scheme).
    pub iterations: usize,
    /// Which markers of close spheres are disabled.
    pub close_sphere_markers: CloseSphereMarkers,
    /// The markers of each sphere, relative to its centre.
    markers: Vec<SphereMarkers>,
    /// How far the markers lie inside the surface, in cell sizes ([`SphereMarkers::new`]).
    retraction: f64,
    /// Hydrodynamic force and torque per unit fluid density on each sphere in the last stage.
    pub force: Vec<Vec3>,
    pub torque: Vec<Vec3>,
    /// Their averages over the stages of the last step, sum_k 2 alpha_k (force, torque)_k: the momentum
    /// the fluid exchanged with each sphere over the step, divided by dt.
    pub step_force: Vec<Vec3>,
    pub step_torque: Vec<Vec3>,
    /// Markers disabled in the last stage because their support crossed a wall, or overlapped the
    /// support of another sphere's markers (seed sec. 2, Fig. 2).
    pub disabled_at_walls: usize,
    pub disabled_between_spheres: usize,
    /// Seconds spent so far placing the markers (supports, disabling, ordering) and in the passes
    /// (with the predicted velocity and the increment): the split of the forcing's cost.
    pub placing_seconds: f64,
    pub passes_seconds: f64,
    /// The stage's marker supports and work arrays, kept between stages.
    work: Workspace,
    /// On a rank of a distributed run: its block's part ([`DirectForcing::split`]); `layout` stays the
    /// domain's.
    pub rank_block: Option<BlockForcing>,
}

impl DirectForcing {
    /// Forcing on `grid` with `boundaries` by `spheres`, with markers retracted by `retraction` cell sizes
    /// into each sphere (see [`SphereMarkers::new`]).
    pub fn new(
        grid: Grid,
        boundaries: &Boundaries,
        spheres: Vec<RigidSphere>,
        iterations: usize,
        retraction: f64,
    ) -> Self {
        let h = grid.spacing;
        let markers: Vec<SphereMarkers> = spheres
            .iter()
            .map(|s| SphereMarkers::new(s.radius, h, retraction))
            .collect();
        let n = spheres.len();
        DirectForcing {
            layout: GridLayout::new(grid, boundaries),
            spheres,
            iterations,
            close_sphere_markers: CloseSphereMarkers::default(),
            work: Workspace::new(&markers),
            markers,
            retraction,
            force: vec![Vec3::ZERO; n],
            torque: vec![Vec3::ZERO; n],
            step_force: vec![Vec3::ZERO; n],
            step_torque: vec![Vec3::ZERO; n],
            disabled_at_walls: 0,
            disabled_between_spheres: 0,
            placing_seconds: 0.0,
            passes_seconds: 0.0,
            rank_block: None,
        }
    }

    /// Forces only this rank's block of `decomposition` (the fluid solver's), with every sphere known
    /// (`crate::rank_block`). Collective: every rank calls it.
    pub fn split(&mut self, decomposition: &Decomposition) {
        self.split_with_reach(decomposition, 0.0);
    }

    /// [`DirectForcing::split`] for spheres that may lie up to `beyond` outside the block of the rank
    /// that owns them (a split sphere system owns them by where they were at its last distribution).
    pub fn split_with_reach(&mut self, decomposition: &Decomposition, beyond: f64) {
        if !decomposition.is_distributed() {
            self.rank_block = None;
            return;
        }
        let largest = self.spheres.iter().map(|s| s.radius).fold(0.0, f64::max);
        // The rows and planes an own sphere's supports can reach beyond the block: its radius, the support's
        // 1.5 cells and the staggering, rounded up generously.
        let margin = ((largest + beyond) / self.layout.grid.spacing).ceil() as usize + 6;
        self.rank_block = Some(BlockForcing::new(decomposition, &self.layout, margin));
    }

    /// Forces with `spheres` from now on (a rank's spheres after a distribution of a split sphere
    /// system), which this rank owns where `owned` says so: their markers are placed anew, and their
    /// loads are this rank's own sums (not gathered).
    pub fn reset_spheres(&mut self, spheres: Vec<RigidSphere>, owned: Vec<bool>) {
        let h = self.layout.grid.spacing;
        self.markers = spheres
            .iter()
            .map(|s| SphereMarkers::new(s.radius, h, self.retraction))
            .collect();
        self.work = Workspace::new(&self.markers);
        let n = spheres.len();
        self.spheres = spheres;
        for loads in [
            &mut self.force,
            &mut self.torque,
            &mut self.step_force,
            &mut self.step_torque,
        ] {
            *loads = vec![Vec3::ZERO; n];
        }
        if let Some(rank_block) = &mut self.rank_block {
            rank_block.owned = owned;
            rank_block.owners_given = true;
        }
    }

    /// The layout of the fluid solver's fields and compact arrays: the domain's, or this rank's block.
    pub fn own_layout(&self) -> &GridLayout {
        self.rank_block
            .as_ref()
            .map_or(&self.layout, |s| &s.own_layout)
    }

    /// The markers of sphere `p`.
    pub fn markers(&self, p: usize) -> &SphereMarkers {
        &self.markers[p]
    }

    /// delta -= u in the planes the last [`DirectForcing::force_in_place`] forced: the forced velocity
    /// it left there becomes the increment that carries u to it.
    pub fn restore_increment(&self, velocity: &[Field; 3], delta: &mut [Vec<f64>; 3]) {
        for c in 0..3 {
            self.own_layout().subtract_in_place(
                c,
                &velocity[c],
                &self.work.near_spheres[c],
                &mut delta[c],
            );
        }
    }
}

/// Why a marker does not force the fluid in a stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum MarkerState {
    #[default]
    Enabled,
    /// Its support crosses a wall.
    AtWall,
    /// Its support overlaps that of another sphere's markers.
    BetweenSpheres,
    /// Enabled, but forced by other ranks only (a distributed run).
    Elsewhere,
}

/// Tiles along y in a block of markers ([`MarkerBlock`]; one tile deep along z). With tiles 16 planes
/// deep, one component's rows of a block with the supports' margin (2 rows below, 1 above) are 19 x 19
/// rows, about 360 KB on a grid 128 cells wide: they stay in a 1 MB L2 cache, and the margin is 41 %
/// of the rows of the markers. Measured on the 500-sphere benchmark (3 December 2026): 6 % less time
/// in the passes than blocks of 4 x 1 tiles of 8^3 cells (50 % margin), which with the interpolation
/// component by component had taken 15 % less than blocks of one row of 8^3 tiles (125 % margin).
const BLOCK_TILES: usize = 2;

/// Cells per tile along x, y and z.
const TILE_SIZE: [usize; 3] = [TILE, TILE, 2 * TILE];

/// The markers of all spheres in one flat list (sphere by sphere), their supports in the current stage,
/// and the work arrays of the passes. Kept between stages so that nothing is allocated per stage.
///
/// The enabled markers are taken tile by tile (blocks of [`TILE_SIZE`] cells, in z-major order, by the point
/// their support centres on), so that the passes sweep the grid rather than jump between spheres:
/// interpolation then finds its points in cache, and spreading (plane by plane) its stencils. The order
/// is a stable counting sort, the same for any thread count.
#[derive(Default)]
struct Workspace {
    owner: Vec<u32>,
    /// Position relative to the owner's centre.
    arm: Vec<Vec3>,
    volume: Vec<f64>,
    state: Vec<MarkerState>,
    /// Per marker: its tile (the sort key; meaningful for enabled markers).
    tile: Vec<u32>,
    /// The enabled markers in tile order, and their supports in that order.
    enabled: Vec<u32>,
    stencils: [Vec<Stencil>; 3],
    /// Markers per tile, then the first position of each tile in `enabled`.
    tile_start: Vec<usize>,
    /// The enabled markers' z-slabs of tiles (ranges of `enabled`), the groups that spread them.
    slabs: Vec<std::ops::Range<usize>>,
    /// The enabled markers by blocks of tiles ([`BLOCK_TILES`] high, one deep, the grid's width), with the
    /// rows and planes their supports reach: the tasks of the interpolation and the blocks of spreading.
    blocks: Vec<MarkerBlock>,
    groups: [SpreadGroups; 3],
    /// The z-planes near a sphere, which hold every point the markers' supports and the inner-fluid
    /// integrals reach: where the passes turn the increment into the predicted velocity and back.
    near_spheres: [Vec<bool>; 3],
    /// Per enabled marker (tile order): the velocity of the sphere at the marker, U_d = U + Omega x r.
    desired: Vec<Vec3>,
    /// Per enabled marker (tile order): its volume over the cell's, Delta V_l / h^3.
    spread_weight: Vec<f64>,
    /// Per enabled marker: U_d - U~ summed over the passes (dt_k times the force), the spread value of
    /// the pass.
    total: Vec<Vec3>,
    values: [Vec<f64>; 3],
}

impl Workspace {
    fn new(markers: &[SphereMarkers]) -> Self {
        let mut work = Workspace::default();
        for (p, sphere_markers) in markers.iter().enumerate() {
            for &arm in &sphere_markers.offsets {
                work.owner.push(p as u32);
                work.arm.push(arm);
                work.volume.push(sphere_markers.volume);
            }
        }
        let n = work.owner.len();
        work.state = vec![MarkerState::Enabled; n];
        work.tile = vec![0; n];
        work
    }

    /// The supports of the markers where the spheres are now, and which markers are disabled at walls
    /// and between spheres (parallel over markers); the enabled ones sorted by tile.
    fn place_markers(&mut self, forcing: &DirectForcing) {
        let h = forcing.layout.grid.spacing;
        let layout = &forcing.layout;
        // On a rank of a distributed run, the spheres whose markers it may force with; the others'
        // markers are not placed.
        let near = forcing.rank_block.as_ref().map(|b| &b.near[..]);
        let neighbours = close_spheres(forcing, near);
        // Tiles of the x-component's unknowns, by its support's middle point.
        let shape = layout.unknowns[0].shape;
        let tiles: [usize; 3] = std::array::from_fn(|a| shape[a].div_ceil(TILE_SIZE[a]));
        // A marker is disabled within `reach` of the other sphere's centre (by default 3 h from its
        // marker sphere, where the 3 h wide supports overlap): |r + e|^2 < reach^2 for the marker's
        // arm r and e the separation of the centres, i.e. |r|^2 + 2 r.e + (|e|^2 - reach^2) < 0. Per
        // sphere, its neighbours' 2 e and |e|^2 - reach^2.
        let rule = forcing.close_sphere_markers;
        let close: Vec<Vec<(Vec3, f64)>> = neighbours
            .par_iter()
            .enumerate()
            .map(|(p, list)| {
                list.iter()
                    .map(|&q| {
                        let e =
                            layout.separation(forcing.spheres[q].centre, forcing.spheres[p].centre);
                        let other = &forcing.markers[q];
                        let reach = rule.reach(forcing.spheres[q].radius, other.marker_radius, h);
                        (2.0 * e, e.length_squared() - reach * reach)
                    })
                    .collect()
            })
            .collect();
        let (owner, arm) = (&self.owner, &self.arm);
        // On a rank of a distributed run, the enabled markers it does not force with.
        let rank_block = forcing.rank_block.as_ref();
        let reach_across = [layout.support_reach(1), layout.support_reach(2)];
        self.state
            .par_iter_mut()
            .zip(self.tile.par_iter_mut())
            .enumerate()
            .for_each(|(l, (state, tile))| {
                let p = owner[l] as usize;
                if near.is_some_and(|near| !near[p]) {
                    *state = MarkerState::Elsewhere;
                    return;
                }
                let r = arm[l];
                let x = forcing.spheres[p].centre + r;
                let r2 = r.length_squared();
                let overlaps = close[p]
                    .iter()
                    .any(|&(two_e, rest)| r2 + r.dot(two_e) + rest < 0.0);
                *state = if overlaps {
                    MarkerState::BetweenSpheres
                } else {
                    match layout.support_centres(x) {
                        Some(point) => {
                            let t: [usize; 3] = std::array::from_fn(|a| point[a] / TILE_SIZE[a]);
                            *tile = (t[0] + tiles[0] * (t[1] + tiles[1] * t[2])) as u32;
                            match rank_block {
                                Some(b) if !b.keeps(b.owned[p], point, reach_across) => {
                                    MarkerState::Elsewhere
                                }
                                _ => MarkerState::Enabled,
                            }
                        }
                        _ => MarkerState::AtWall,
                    }
                };
            });
        // Stable counting sort of the enabled markers by tile.
        let tile_count = tiles.iter().product::<usize>();
        self.tile_start.clear();
        self.tile_start.resize(tile_count + 1, 0);
        for (state, &tile) in self.state.iter().zip(&self.tile) {
            if *state == MarkerState::Enabled {
                self.tile_start[tile as usize + 1] += 1;
            }
        }
        for t in 0..tile_count {
            self.tile_start[t + 1] += self.tile_start[t];
        }
        let enabled_count = self.tile_start[tile_count];
        let per_slab = tiles[0] * tiles[1];
        self.slabs.clear();
        self.slabs.extend(
            (0..tiles[2]).map(|slab| {
                self.tile_start[slab * per_slab]..self.tile_start[(slab + 1) * per_slab]
            }),
        );
        self.blocks.clear();
        let tile = TILE_SIZE.map(|n| n as isize);
        // Rows and planes are unwrapped indices: from `below` under a block's first to `above` past
        // its last (tile - 1 past the first of its last tile), the range's end one further.
        let reach: [(isize, isize); 3] = std::array::from_fn(|a| layout.support_reach(a));
        for tz in 0..tiles[2] {
            for ty in (0..tiles[1]).step_by(BLOCK_TILES) {
                let high = (ty + BLOCK_TILES).min(tiles[1]);
                let row_of_tiles = |ty: usize| ty + tiles[1] * tz;
                let markers = self.tile_start[row_of_tiles(ty) * tiles[0]]
                    ..self.tile_start[row_of_tiles(high) * tiles[0]];
                if markers.is_empty() {
                    continue;
                }
                let (ty, high, tz) = (ty as isize, high as isize, tz as isize);
                self.blocks.push(MarkerBlock {
                    markers,
                    rows: ty * tile[1] - reach[1].0..high * tile[1] + reach[1].1,
                    planes: tz * tile[2] - reach[2].0..(tz + 1) * tile[2] + reach[2].1,
                });
            }
        }
        self.enabled.clear();
        self.enabled.resize(enabled_count, 0);
        for (l, (state, &tile)) in self.state.iter().zip(&self.tile).enumerate() {
            if *state == MarkerState::Enabled {
                let slot = &mut self.tile_start[tile as usize];
                self.enabled[*slot] = l as u32;
                *slot += 1;
            }
        }
        mark_planes_near_spheres(forcing, &mut self.near_spheres);
        if let Some(rank_block) = rank_block {
            // This rank's own planes of them.
            for (c, near) in self.near_spheres.iter_mut().enumerate() {
                let own = rank_block.own_planes(c);
                near.truncate(own.end);
                near.drain(..own.start);
            }
        }
        let (owner, arm) = (&self.owner, &self.arm);
        // The supports and the sphere's velocity at each marker, computed in the tile order the passes
        // read them in.
        let [sx, sy, sz] = &mut self.stencils;
        for stencils in [&mut *sx, &mut *sy, &mut *sz] {
            stencils.resize(enabled_count, Stencil::default());
        }
        self.desired.resize(enabled_count, Vec3::ZERO);
        self.spread_weight.resize(enabled_count, 0.0);
        let h3 = layout.grid.cell_volume();
        let volume = &self.volume;
        self.enabled
            .par_iter()
            .zip(sx.par_iter_mut().zip(sy.par_iter_mut()).zip(sz))
            .zip(
                self.desired
                    .par_iter_mut()
                    .zip(self.spread_weight.par_iter_mut()),
            )
            .for_each(|((&l, ((sx, sy), sz)), (desired, spread_weight))| {
                *spread_weight = volume[l as usize] / h3;
                let sphere = &forcing.spheres[owner[l as usize] as usize];
                let arm = arm[l as usize];
                let x = sphere.centre + arm;
                // Enabled markers have all three supports.
                [*sx, *sy, *sz] = layout.stencils(x).unwrap_or_default();
                *desired = sphere.velocity + sphere.angular_velocity.cross(arm);
            });
        // Spreading in rounds of tile slabs that follow from the grid alone: the same order of a
        // point's markers on every rank of a distributed run.
        let depth = TILE_SIZE[2] as isize;
        let planes = shape[2] as isize;
        let slab_reach: Vec<_> = (0..tiles[2] as isize)
            .map(|tz| tz * depth - reach[2].0..=((tz + 1) * depth).min(planes) - 1 + reach[2].1)
            .collect();
        let rounds = geometric_rounds(&slab_reach, shape[2], layout.periodic[2]);
        let mut arrays = layout;
        if let Some(rank_block) = rank_block {
            // The supports' rows and planes in this rank's window arrays, and the marker blocks'
            // rows and planes there.
            for (c, stencils) in self.stencils.iter_mut().enumerate() {
                let [rows, planes] = rank_block.window(c);
                let row_len = layout.unknowns[c].shape[0] as u32;
                let held = "a rank's window holds the supports it forces with";
                stencils.par_iter_mut().for_each(|s| {
                    for row in &mut s.offset[1] {
                        *row = rows.local((*row / row_len) as usize).expect(held) as u32 * row_len;
                    }
                    for plane in &mut s.offset[2] {
                        *plane = planes.local(*plane as usize).expect(held) as u32;
                    }
                });
            }
            for block in &mut self.blocks {
                let (mut low, mut high) = ([u32::MAX; 2], [0; 2]);
                for (c, stencils) in self.stencils.iter().enumerate() {
                    let row_len = layout.unknowns[c].shape[0] as u32;
                    for s in &stencils[block.markers.clone()] {
                        low[0] = low[0].min(s.offset[1][0] / row_len);
                        high[0] = high[0].max(s.offset[1][2] / row_len);
                        low[1] = low[1].min(s.offset[2][0]);
                        high[1] = high[1].max(s.offset[2][2]);
                    }
                }
                block.rows = low[0] as isize..high[0] as isize + 1;
                block.planes = low[1] as isize..high[1] as isize + 1;
            }
            arrays = &rank_block.window_layout;
        }
        for c in 0..3 {
            self.groups[c] =
                SpreadGroups::with_rounds(arrays, c, &self.stencils[c], &self.slabs, &rounds);
        }
    }

    /// The markers in `state` (of the spheres marked in `of` only, where given).
    fn count(&self, state: MarkerState, of: Option<&[bool]>) -> usize {
        self.state
            .iter()
            .zip(&self.owner)
            .filter(|&(&s, &p)| s == state && of.is_none_or(|of| of[p as usize]))
            .count()
    }
}

/// `values` cut into the consecutive pieces of the `blocks`' marker ranges (which start at 0 and cover
/// `values` without gaps).
fn split_by_blocks<'a, T>(mut values: &'a mut [T], blocks: &[MarkerBlock]) -> Vec<&'a mut [T]> {
    let mut pieces = Vec::with_capacity(blocks.len());
    for block in blocks {
        let (piece, rest) = values.split_at_mut(block.markers.len());
        pieces.push(piece);
        values = rest;
    }
    debug_assert!(values.is_empty());
    pieces
}

/// For each component, the z-planes of its unknowns within R + 3 h of a sphere's centre (along z): the
/// markers' supports (1.5 h around markers inside the surface) and the inner-fluid integrals (R + 2 h)
/// stay within them.
fn mark_planes_near_spheres(forcing: &DirectForcing, near: &mut [Vec<bool>; 3]) {
    let layout = &forcing.layout;
    let h = layout.grid.spacing;
    for (c, near) in near.iter_mut().enumerate() {
        let Unknowns { start, shape } = layout.unknowns[c];
        near.clear();
        near.resize(shape[2], false);
        let half = if c == 2 { 0.0 } else { 0.5 };
        let s = |z: f64| (z - layout.grid.origin[2]) / h + half;
        for sphere in &forcing.spheres {
            let reach = sphere.radius + 3.0 * h;
            let (low, high) = (
                s(sphere.centre.z - reach).floor() as isize,
                s(sphere.centre.z + reach).ceil() as isize,
            );
            if high - low >= shape[2] as isize {
                near.iter_mut().for_each(|n| *n = true);
                break;
            }
            for k in low..=high {
                if let Some(k) = layout.unknown_index(c, 2, k) {
                    near[k - start[2]] = true;
                }
            }
        }
    }
}

/// For each sphere, the others whose markers' supports may overlap its own: marker spheres closer than
/// 3 h, in increasing order; the candidates from a cell list of the centres (cells as wide as the
/// largest such distance). With `only`, the spheres not marked there get an empty list.
fn close_spheres(forcing: &DirectForcing, only: Option<&[bool]>) -> Vec<Vec<usize>> {
    let layout = &forcing.layout;
    let h = layout.grid.spacing;
    let largest = forcing
        .markers
        .iter()
        .map(|m| m.marker_radius)
        .fold(0.0, f64::max);
    let origin = Vec3::from_array(layout.grid.origin);
    let domain = Domain {
        min: origin,
        max: origin + h * Vec3::from_array(layout.grid.cells.map(|n| n as f64)),
        periodic: layout.periodic,
    };
    let centres: Vec<Vec3> = forcing.spheres.iter().map(|s| s.centre).collect();
    let cells = CellGrid::new(&domain, 2.0 * largest + 3.0 * h, &centres);
    (0..centres.len())
        .into_par_iter()
        .map(|p| {
            let radius = forcing.markers[p].marker_radius;
            let mut close = Vec::new();
            if only.is_some_and(|only| !only[p]) {
                return close;
            }
            cells.for_each_near(cells.cell_of(&domain, centres[p]), |q| {
                let d = layout.separation(centres[q], centres[p]);
                let limit = radius + forcing.markers[q].marker_radius + 3.0 * h;
                if q != p && d.length_squared() < limit * limit {
                    close.push(q);
                }
            });
            close.sort_unstable();
            close
        })
        .collect()
}

impl StageForcing for DirectForcing {
    fn add_force(
        &mut self,
        stage: usize,
        dt: f64,
        velocity: &[Field; 3],
        unknowns: &[Unknowns; 3],
        delta: &mut [Vec<f64>; 3],
    ) {
        debug_assert_eq!(unknowns, &self.own_layout().unknowns);
        self.force_in_place(stage, dt, velocity, delta);
        let clock = std::time::Instant::now();
        self.restore_increment(velocity, delta);
        self.passes_seconds += clock.elapsed().as_secs_f64();
    }
}

impl DirectForcing {
    /// The passes of stage `stage`, in place: in the z-planes near the spheres, `delta` (the stage's
    /// increment at the unknowns of each component, compact order) becomes the predicted velocity
    /// u~ = u + delta and then the forced velocity u~ + dt_k f (one array less than a separate copy,
    /// and one read of u and delta less per stage); the loads on the spheres are set.
    /// [`DirectForcing::restore_increment`] turns it back into the increment.
    pub fn force_in_place(
        &mut self,
        stage: usize,
        dt: f64,
        velocity: &[Field; 3],
        delta: &mut [Vec<f64>; 3],
    ) {
        let stage_length = silt_core::rk3::stage_fraction(stage) * dt;
        let clock = std::time::Instant::now();
        let mut work = std::mem::take(&mut self.work);
        if let Some(rank_block) = &mut self.rank_block {
            if !rank_block.owners_given {
                rank_block.set_owners(&self.spheres, &self.layout);
            }
            let reach: Vec<f64> = self.markers.iter().map(|m| m.marker_radius).collect();
            rank_block.set_near(&self.spheres, &reach, &self.layout);
            rank_block.set_needed(&self.spheres, &self.layout);
        }
        work.place_markers(self);
        self.placing_seconds += clock.elapsed().as_secs_f64();
        let clock = std::time::Instant::now();
        // On ranks: each counts the markers of its own spheres (it places them all), summed.
        let owned = self.rank_block.as_ref().map(|b| &b.owned[..]);
        let counted = |state| work.count(state, owned);
        (self.disabled_at_walls, self.disabled_between_spheres) = match self.rank_block.as_ref() {
            Some(b) => (
                b.sum_over_ranks(counted(MarkerState::AtWall)),
                b.sum_over_ranks(counted(MarkerState::BetweenSpheres)),
            ),
            None => (
                counted(MarkerState::AtWall),
                counted(MarkerState::BetweenSpheres),
            ),
        };
        for c in 0..3 {
            self.own_layout()
                .add_in_place(c, &velocity[c], &work.near_spheres[c], &mut delta[c]);
        }
        // On a rank of a distributed run the passes work on its window arrays (its block and its
        // neighbours' rows and planes), loaded here and refreshed after every pass.
        let mut rank_block = self.rank_block.take();
        if let Some(rank_block) = &mut rank_block {
            rank_block.load(delta);
        }
        let window_layout = rank_block.as_ref().map(|s| s.window_layout.clone());
        let layout = window_layout.as_ref().unwrap_or(&self.layout);
        let enabled_count = work.enabled.len();
        work.total.clear();
        work.total.resize(enabled_count, Vec3::ZERO);
        for _ in 0..self.iterations {
            let predicted: &mut [Vec<f64>; 3] = match &mut rank_block {
                Some(rank_block) => &mut rank_block.values,
                None => &mut *delta,
            };
            // 1-2. The forced velocity at the markers and the force that brings it to U_d.
            let Workspace {
                stencils,
                desired,
                spread_weight,
                groups,
                total,
                values,
                blocks,
                ..
            } = &mut work;
            let plane_len = layout.unknowns.map(|u| u.shape[0] * u.shape[1]);
            // By blocks of markers, each compiled for the processor's widest vector instructions.
            for values in values.iter_mut() {
                values.resize(desired.len(), 0.0);
            }
            let [vx, vy, vz] = values;
            split_by_blocks(total, blocks)
                .into_par_iter()
                .zip(
                    split_by_blocks(vx, blocks)
                        .into_par_iter()
                        .zip(split_by_blocks(vy, blocks))
                        .zip(split_by_blocks(vz, blocks)),
                )
                .zip(blocks.par_iter())
                .for_each(|((total, ((vx, vy), vz)), block)| {
                    vectorized(
                        #[inline(always)]
                        || {
                            // Component by component, so that one component's rows of the block
                            // stay in the cache between reading them ahead and interpolating.
                            let mut warmed = 0.0;
                            for (c, values) in [vx, vy, vz].into_iter().enumerate() {
                                warmed += warm_block(layout, c, &predicted[c], block);
                                let markers = block.markers.clone();
                                for (k, e) in markers.enumerate() {
                                    let interpolated =
                                        interpolate(&stencils[c][e], &predicted[c], plane_len[c]);
                                    // U_d - U~ = dt_k F_l (the force is taken from the sum over
                                    // the passes at the end, without a division per marker here).
                                    let shortfall = desired[e][c] - interpolated;
                                    total[k][c] += shortfall;
                                    // 3. What spreading adds: dt_k F_l Delta V_l / h^3 (delta_h
                                    // carries 1 / h^3).
                                    values[k] = shortfall * spread_weight[e];
                                }
                            }
                            std::hint::black_box(warmed);
                        },
                    )
                });
            // 3. Spread into the predicted velocity.
            for c in 0..3 {
                spread(
                    layout,
                    c,
                    &stencils[c],
                    &groups[c],
                    &values[c],
                    &mut predicted[c],
                    blocks,
                );
            }
            if let Some(rank_block) = &mut rank_block {
                rank_block.refresh();
            }
        }
        if let Some(rank_block) = &rank_block {
            rank_block.store(delta);
        }
        self.passes_seconds += clock.elapsed().as_secs_f64();
        // Reactions on the spheres, summed in the markers' (tile) order; on a rank of a distributed
        // run, those of its own spheres (it holds all their markers), then gathered.
        self.force.iter_mut().for_each(|f| *f = Vec3::ZERO);
        self.torque.iter_mut().for_each(|t| *t = Vec3::ZERO);
        let owns = |p: usize| rank_block.as_ref().is_none_or(|s| s.owned[p]);
        for (&l, total) in work.enabled.iter().zip(&work.total) {
            let l = l as usize;
            let p = work.owner[l] as usize;
            if !owns(p) {
                continue;
            }
            let f = *total / stage_length * work.volume[l];
            self.force[p] -= f;
            self.torque[p] -= work.arm[l].cross(f);
        }
        if let Some(b) = rank_block.as_ref().filter(|s| !s.owners_given) {
            let mut loads: Vec<[f64; 6]> = (self.force.iter().zip(&self.torque))
                .map(|(f, t)| [f.x, f.y, f.z, t.x, t.y, t.z])
                .collect();
            b.gather_owned(&mut loads);
            for ((f, t), row) in self.force.iter_mut().zip(&mut self.torque).zip(&loads) {
                *f = Vec3::new(row[0], row[1], row[2]);
                *t = Vec3::new(row[3], row[4], row[5]);
            }
        }
        self.rank_block = rank_block;
        let weight = silt_core::rk3::stage_fraction(stage);
        for p in 0..self.spheres.len() {
            if stage == 0 {
                self.step_force[p] = Vec3::ZERO;
                self.step_torque[p] = Vec3::ZERO;
            }
            self.step_force[p] += weight * self.force[p];
            self.step_torque[p] += weight * self.torque[p];
        }
        self.work = work;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn forcing(centres: [Vec3; 2]) -> DirectForcing {
        let grid = Grid {
            cells: [32, 24, 24],
            spacing: 1.0,
            origin: [0.0; 3],
            offset: [0; 3],
        };
        let spheres = centres
            .iter()
            .zip([4.0, 3.0])
            .map(|(&c, r)| RigidSphere::fixed(c, r))
            .collect();
        DirectForcing::new(grid, &Boundaries::periodic(), spheres, 1, 0.3)
    }

    /// Two spheres 0.5 h apart across the periodic seam: the markers facing each other are disabled on
    /// both, none of the enabled ones has a support reaching the other's markers; far apart, none is.
    #[test]
    fn markers_between_close_spheres_are_disabled() {
        // Surfaces 0.5 apart across x = 0: centres at x = 1.5 and 32 - 6.0.
        let close = forcing([Vec3::new(1.5, 12.0, 12.0), Vec3::new(26.0, 12.0, 12.0)]);
        let mut set = Workspace::new(&close.markers);
        set.place_markers(&close);
        let (at_walls, between) = (
            set.count(MarkerState::AtWall, None),
            set.count(MarkerState::BetweenSpheres, None),
        );
        assert_eq!(at_walls, 0);
        assert!(between > 0);
        let total: usize = (0..2).map(|p| close.markers(p).len()).sum();
        assert_eq!(set.enabled.len() + between, total);
        for &l in &set.enabled {
            let (p, l) = (set.owner[l as usize], l as usize);
            let q = 1 - p as usize;
            let x = close.spheres[p as usize].centre + set.arm[l];
            let d = close.layout.separation(close.spheres[q].centre, x).length();
            assert!(
                d >= close.markers(q).marker_radius + 3.0,
                "marker {l} of sphere {p}"
            );
        }
        // Both spheres lose markers.
        let kept: Vec<usize> = (0..2)
            .map(|p| {
                set.enabled
                    .iter()
                    .filter(|&&l| set.owner[l as usize] as usize == p)
                    .count()
            })
            .collect();
        assert!(kept[0] < close.markers(0).len() && kept[1] < close.markers(1).len());

        let apart = forcing([Vec3::new(8.0, 12.0, 12.0), Vec3::new(20.0, 12.0, 12.0)]);
        let mut set = Workspace::new(&apart.markers);
        set.place_markers(&apart);
        assert_eq!(set.count(MarkerState::BetweenSpheres, None), 0);
    }

    /// Read as the wall rule (supports reaching the other sphere), the rule disables exactly the
    /// markers within 1.5 h of the other sphere's surface, on both spheres, and fewer than the
    /// overlapping supports do.
    #[test]
    fn reaching_the_surface_disables_the_markers_within_its_reach() {
        let mut close = forcing([Vec3::new(1.5, 12.0, 12.0), Vec3::new(26.0, 12.0, 12.0)]);
        let mut set = Workspace::new(&close.markers);
        set.place_markers(&close);
        let overlapping = set.count(MarkerState::BetweenSpheres, None);

        close.close_sphere_markers = CloseSphereMarkers::ReachingTheSurface;
        let mut set = Workspace::new(&close.markers);
        set.place_markers(&close);
        let reaching = set.count(MarkerState::BetweenSpheres, None);
        assert!(
            0 < reaching && reaching < overlapping,
            "{reaching} of {overlapping}"
        );
        let mut disabled_on = [0; 2];
        for l in 0..set.state.len() {
            let p = set.owner[l] as usize;
            let q = 1 - p;
            let x = close.spheres[p].centre + set.arm[l];
            let d = close.layout.separation(close.spheres[q].centre, x).length();
            let within = d < close.spheres[q].radius + 1.5;
            assert_eq!(
                set.state[l] == MarkerState::BetweenSpheres,
                within,
                "marker {l} of sphere {p}, {d} from the other's centre"
            );
            disabled_on[p] += usize::from(within);
        }
        assert!(disabled_on[0] > 0 && disabled_on[1] > 0, "{disabled_on:?}");
    }

    /// A sphere moving across the periodic seam in z, in fluid at rest: the forcing touches only the
    /// planes near it (on both sides of the seam), and its passes bring the velocity at the markers to
    /// the sphere's (the residual falls pass by pass), which fails if a plane the supports reach across
    /// the seam were left out of the predicted velocity.
    #[test]
    fn passes_converge_on_a_sphere_across_the_seam() {
        let grid = Grid {
            cells: [16, 16, 32],
            spacing: 1.0,
            origin: [0.0; 3],
            offset: [0; 3],
        };
        let velocity: [Field; 3] = std::array::from_fn(|_| Field::zeros(&grid));
        let sphere = RigidSphere {
            centre: Vec3::new(8.0, 8.0, 0.7),
            radius: 3.0,
            velocity: Vec3::new(0.2, -0.1, 0.3),
            angular_velocity: Vec3::ZERO,
        };
        let residual = |iterations| {
            let mut forcing =
                DirectForcing::new(grid, &Boundaries::periodic(), vec![sphere], iterations, 0.3);
            let unknowns = forcing.layout.unknowns;
            let mut delta: [Vec<f64>; 3] = std::array::from_fn(|c| vec![0.0; unknowns[c].len()]);
            forcing.add_force(0, 1.0, &velocity, &unknowns, &mut delta);
            // Untouched far from the sphere: planes more than R + 3 h away along z.
            for c in 0..3 {
                let plane = unknowns[c].shape[0] * unknowns[c].shape[1];
                assert!(delta[c][8 * plane..24 * plane].iter().all(|&d| d == 0.0));
                assert!(delta[c][..3 * plane].iter().any(|&d| d != 0.0));
                assert!(delta[c][29 * plane..].iter().any(|&d| d != 0.0));
            }
            // The velocity u + delta at the markers against the sphere's.
            let mut work = Workspace::new(&forcing.markers);
            work.place_markers(&forcing);
            let all = vec![true; 32];
            let mut worst: f64 = 0.0;
            for c in 0..3 {
                let mut u = delta[c].clone();
                forcing.layout.add_in_place(c, &velocity[c], &all, &mut u);
                for s in &work.stencils[c] {
                    let plane_len = unknowns[c].shape[0] * unknowns[c].shape[1];
                    worst = worst.max((interpolate(s, &u, plane_len) - sphere.velocity[c]).abs());
                }
            }
            worst
        };
        let (one, three) = (residual(1), residual(3));
        assert!(
            one < 0.3 && three < 0.3 * one,
            "residuals {one} and {three}"
        );
    }

    /// The cell-list search finds the same close pairs as a search of all pairs, across periodic seams
    /// and beside walls, for spheres of different sizes, and on a grid too short for three cells.
    #[test]
    fn close_spheres_match_all_pairs() {
        for (cells, boundaries) in [
            ([64, 40, 56], Boundaries::channel(1)),
            ([64, 12, 56], Boundaries::periodic()),
        ] {
            let grid = Grid {
                cells,
                spacing: 1.0,
                origin: [0.0, 0.0, 0.0],
                offset: [0; 3],
            };
            let mut rng = ChaCha8Rng::seed_from_u64(3);
            let mut random = || rng.gen::<f64>();
            let spheres: Vec<RigidSphere> = (0..150)
                .map(|_| {
                    let centre = Vec3::new(
                        random() * cells[0] as f64,
                        random() * cells[1] as f64,
                        random() * cells[2] as f64,
                    );
                    RigidSphere::fixed(centre, 2.0 + 2.0 * random())
                })
                .collect();
            let forcing = DirectForcing::new(grid, &boundaries, spheres, 1, 0.3);
            let binned = close_spheres(&forcing, None);
            let mut pairs = 0;
            for p in 0..forcing.spheres.len() {
                let all: Vec<usize> = (0..forcing.spheres.len())
                    .filter(|&q| {
                        let d = forcing
                            .layout
                            .separation(forcing.spheres[q].centre, forcing.spheres[p].centre);
                        let limit = forcing.markers[p].marker_radius
                            + forcing.markers[q].marker_radius
                            + 3.0;
                        q != p && d.length() < limit
                    })
                    .collect();
                pairs += all.len();
                assert_eq!(binned[p], all, "sphere {p}");
            }
            assert!(pairs > 50, "{pairs} close pairs");
        }
    }
}
