//! Spheres on several ranks (issue 23): spatial decomposition into slabs along one axis, as LAMMPS
//! splits its box, with ghost spheres and migration.
//!
//! Each rank holds the spheres it *owns* (those whose centre lay in its slab at the last
//! distribution) and *ghost* copies of the spheres within the ghost layer of its slab, all in one set
//! of arrays sorted by global index. Sorting by global index is what makes the numbers the serial
//! run's: the pair loop takes each pair with its lower index first and sums every sphere's pairs in
//! ascending partner order ([`crate::forces`]), so a sphere's load is added up exactly as in the
//! serial run once its partners are present with the serial states; pairs out of reach add exact
//! zeros, which change no sum, so each rank's lists may hold other pairs than the serial one.
//!
//! * Before every evaluation of the loads the ghosts take their owners' positions and velocities
//!   ([`Halo::refresh`], point-to-point), so that both owners of a pair evaluate it from the same
//!   state and its contact memory evolves the same on both.
//! * At the start of a step, when some sphere has moved more than half the neighbour skin since the
//!   last distribution (the serial list's own rule, over all ranks), the spheres are distributed
//!   anew ([`crate::system::DemSystem::redistribute`]): each goes to the owner of its slab with its
//!   wall-contact memory and carried loads, the memory of its pairs goes with it, and the ghost
//!   layers are filled again (one all-to-all).
//! * The ghost layer is `2 r_max + range + 1.5 skin` thick: a pair within reach has both spheres in
//!   the layers of their owners as long as no sphere has moved more than 0.75 skin since the
//!   distribution ([`GHOST_ALLOWANCE`]), which is checked at every evaluation (a sphere moving a
//!   quarter skin within one step stops the run with a message, never a wrong answer).

use std::sync::atomic::{AtomicBool, Ordering};

use silt_parallel::Comm;

use crate::contact::ContactState;
use crate::domain::Domain;
use crate::forces::Loads;
use crate::geometry::MinimumImage;
use crate::neighbor::NeighborList;
use crate::particles::Particles;
use crate::system::{DemCheckpoint, DemSystem};
use crate::Vec3;

/// Slabs of the box along one axis, one per rank in order: equal, or blocks of a grid's cells; or
/// blocks of two such splits along two axes ([`Slabs::blocks`]: rank `a + count · b` holds slab `a`
/// of the first and slab `b` of the second).
#[derive(Clone, Debug, PartialEq)]
pub struct Slabs {
    pub axis: usize,
    pub min: f64,
    pub length: f64,
    pub periodic: bool,
    pub count: usize,
    /// Slabs of whole cells of this width instead of equal ones: rank `r` holds cells
    /// `first_cells[r]..first_cells[r + 1]` (the last entry is the number of cells).
    pub cells: Option<(f64, Vec<usize>)>,
    /// The split across a second axis, for blocks.
    pub across: Option<Box<Slabs>>,
}

impl Slabs {
    /// `count` slabs of `domain` along `axis`.
    pub fn new(domain: &Domain, axis: usize, count: usize) -> Self {
        Slabs {
            axis,
            min: domain.min[axis],
            length: domain.length()[axis],
            periodic: domain.periodic[axis],
            count,
            cells: None,
            across: None,
        }
    }

    /// Blocks of two splits along different axes: rank `a + first.count · b` holds slab `a` of
    /// `first` and slab `b` of `second` (the fluid's process grid: `first` along y, `second` along
    /// z).
    pub fn blocks(first: Slabs, second: Slabs) -> Self {
        assert!(
            first.across.is_none() && second.across.is_none() && first.axis != second.axis,
            "Slabs::blocks: two one-axis splits along different axes"
        );
        Slabs {
            across: Some(Box::new(second)),
            ..first
        }
    }

    /// The number of ranks (slabs, or blocks).
    pub fn ranks(&self) -> usize {
        self.count * self.across.as_ref().map_or(1, |a| a.count)
    }

    /// The slabs of a grid's cells of width `spacing` along `axis`, the first starting at `origin`, rank
    /// `r` holding `blocks[r]` (consecutive, from cell 0 to the last): a sphere belongs to the rank of
    /// the cell its centre lies in, as the fluid's ranks assign a resolved sphere.
    pub fn of_cells(
        domain: &Domain,
        axis: usize,
        (origin, spacing): (f64, f64),
        blocks: &[std::ops::Range<usize>],
    ) -> Self {
        let mut first_cells: Vec<usize> = blocks.iter().map(|b| b.start).collect();
        first_cells.push(blocks.last().map_or(0, |b| b.end));
        debug_assert!(blocks.windows(2).all(|w| w[0].end == w[1].start));
        Slabs {
            min: origin,
            cells: Some((spacing, first_cells)),
            ..Slabs::new(domain, axis, blocks.len())
        }
    }

    /// The slab or block (rank) holding position `x` (the end slabs also hold what lies beyond the
    /// box).
    pub fn owner(&self, x: Vec3) -> usize {
        let own = self.owner_along(x);
        match &self.across {
            Some(across) => own + self.count * across.owner(x),
            None => own,
        }
    }

    /// The slab along this split's own axis holding position `x`.
    fn owner_along(&self, x: Vec3) -> usize {
        if let Some((spacing, first_cells)) = &self.cells {
            let cells = first_cells[self.count] as isize;
            let cell = ((x[self.axis] - self.min) / spacing).floor() as isize;
            let cell = if self.periodic {
                cell.rem_euclid(cells)
            } else {
                cell.clamp(0, cells - 1)
            } as usize;
            return first_cells[1..].partition_point(|&end| end <= cell);
        }
        let s = ((x[self.axis] - self.min) / self.length * self.count as f64).floor();
        if s.is_nan() || s < 0.0 {
            0
        } else {
            (s as usize).min(self.count - 1)
        }
    }

    /// Bounds of slab `r` along the axis.
    pub fn bounds(&self, r: usize) -> (f64, f64) {
        if let Some((spacing, first_cells)) = &self.cells {
            let at = |k: usize| self.min + spacing * first_cells[k] as f64;
            return (at(r), at(r + 1));
        }
        let at = |k: usize| self.min + self.length * k as f64 / self.count as f64;
        (at(r), at(r + 1))
    }

    /// Distance from `x` to slab or block `r`: along the axis (0 inside; through the periodic sides
    /// where that is shorter); for blocks the larger of the two axes' (at most the true distance, so
    /// a ghost layer of that thickness holds every sphere within it).
    pub fn distance(&self, r: usize, x: Vec3) -> f64 {
        match &self.across {
            Some(across) => self
                .distance_along(r % self.count, x)
                .max(across.distance(r / self.count, x)),
            None => self.distance_along(r, x),
        }
    }

    fn distance_along(&self, r: usize, x: Vec3) -> f64 {
        let (lo, hi) = self.bounds(r);
        let c = x[self.axis];
        if (lo..hi).contains(&c) {
            return 0.0;
        }
        let direct = (lo - c).max(c - hi).max(0.0);
        if !self.periodic {
            return direct;
        }
        let l = self.length;
        // How far up from c the slab begins, and how far down from c it ends, around the period.
        let up = (lo - c).rem_euclid(l);
        let down = (c - hi).rem_euclid(l);
        direct.min(up).min(down)
    }
}

/// This rank's part of a distributed sphere system: which of its spheres it owns, their global
/// indices, and the plan of the ghost exchange.
#[derive(Debug)]
pub struct Halo {
    pub comm: Comm,
    pub slabs: Slabs,
    /// Thickness of the ghost layer.
    pub layer: f64,
    /// How far a sphere may move after a distribution before the layer no longer covers its pairs.
    pub allowance: f64,
    /// Global index of each sphere held, ascending.
    pub ids: Vec<u32>,
    /// Whether this rank owns each sphere held (otherwise a ghost).
    pub owned: Vec<bool>,
    /// Spheres in the whole system.
    pub total: usize,
    /// Per rank: the owned spheres (local indices) whose state it receives at each refresh.
    pub(crate) sends: Vec<(usize, Vec<u32>)>,
    /// Per rank: the ghosts (local indices) it owns, in the order it sends them.
    pub(crate) receives: Vec<(usize, Vec<u32>)>,
    /// Positions at the last distribution.
    pub(crate) reference: Vec<Vec3>,
    /// Distributions so far.
    pub distributions: u64,
    /// Set when a sphere held has moved farther than the allowance (checked after the step).
    pub(crate) overrun: AtomicBool,
}

impl Clone for Halo {
    fn clone(&self) -> Self {
        Halo {
            comm: self.comm.clone(),
            slabs: self.slabs.clone(),
            layer: self.layer,
            allowance: self.allowance,
            ids: self.ids.clone(),
            owned: self.owned.clone(),
            total: self.total,
            sends: self.sends.clone(),
            receives: self.receives.clone(),
            reference: self.reference.clone(),
            distributions: self.distributions,
            overrun: AtomicBool::new(self.overrun.load(Ordering::Relaxed)),
        }
    }
}

/// How far, in neighbour skins, a sphere may move after a distribution before the ghost layers no
/// longer cover its pairs. A distribution follows a step that ends beyond half a skin, so a sphere
/// may move a quarter skin within one step (the LAMMPS bed moves about 0.02 of that per step).
pub const GHOST_ALLOWANCE: f64 = 0.75;

/// Values per sphere in a refresh: position, velocity, angular velocity.
const STATE_LEN: usize = 9;
/// Tag of the ghost refresh.
const REFRESH_TAG: u16 = 41;

impl Halo {
    /// The local index of global sphere `id`, if held.
    pub fn local(&self, id: u32) -> Option<usize> {
        self.ids.binary_search(&id).ok()
    }

    /// Local indices of the owned spheres.
    pub fn owned_indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.owned
            .iter()
            .enumerate()
            .filter(|(_, &o)| o)
            .map(|(k, _)| k)
    }

    /// Gives every ghost its owner's position, velocity and angular velocity (a collective of the
    /// neighbouring ranks), and notes whether a sphere held moved beyond the allowance.
    pub fn refresh(&self, domain: &Domain, x: &mut [Vec3], u: &mut [Vec3], w: &mut [Vec3]) {
        let packed: Vec<Vec<f64>> = self
            .sends
            .iter()
            .map(|(_, locals)| {
                let mut values = Vec::with_capacity(STATE_LEN * locals.len());
                for &k in locals {
                    let k = k as usize;
                    values.extend(x[k].to_array());
                    values.extend(u[k].to_array());
                    values.extend(w[k].to_array());
                }
                values
            })
            .collect();
        let sends: Vec<(usize, u16, &[f64])> = self
            .sends
            .iter()
            .zip(&packed)
            .map(|((rank, _), values)| (*rank, REFRESH_TAG, &values[..]))
            .collect();
        let mut buffers: Vec<Vec<f64>> = self
            .receives
            .iter()
            .map(|(_, locals)| vec![0.0; STATE_LEN * locals.len()])
            .collect();
        {
            let mut receives: Vec<(usize, u16, &mut [f64])> = self
                .receives
                .iter()
                .zip(buffers.iter_mut())
                .map(|((rank, _), buffer)| (*rank, REFRESH_TAG, &mut buffer[..]))
                .collect();
            self.comm.exchange(&sends, &mut receives);
        }
        for ((_, locals), values) in self.receives.iter().zip(&buffers) {
            for (&k, v) in locals.iter().zip(values.chunks_exact(STATE_LEN)) {
                let k = k as usize;
                x[k] = Vec3::new(v[0], v[1], v[2]);
                u[k] = Vec3::new(v[3], v[4], v[5]);
                w[k] = Vec3::new(v[6], v[7], v[8]);
            }
        }
        if self.moved_farther(domain, x, self.allowance, false) {
            self.overrun.store(true, Ordering::Relaxed);
        }
    }

    /// Whether a sphere held (`owned_only`: an owned one) is farther than `distance` from where it was
    /// at the last distribution.
    pub(crate) fn moved_farther(
        &self,
        domain: &Domain,
        x: &[Vec3],
        distance: f64,
        owned_only: bool,
    ) -> bool {
        let image = MinimumImage::new(domain);
        let limit = distance * distance;
        x.iter()
            .zip(&self.reference)
            .zip(&self.owned)
            .any(|((x, x0), &owned)| {
                (owned || !owned_only) && image.separation(*x0, *x).length_squared() > limit
            })
    }
}

/// Values of one contact memory in a message.
pub(crate) const MEMORY_LEN: usize = 8;

pub(crate) fn encode_memory(s: &ContactState, out: &mut Vec<f64>) {
    out.extend([
        f64::from(u8::from(s.touching)),
        s.impact_speed,
        s.stiffness,
        s.damping,
        s.spring.x,
        s.spring.y,
        s.spring.z,
        f64::from(u8::from(s.sliding)),
    ]);
}

pub(crate) fn decode_memory(v: &[f64]) -> ContactState {
    ContactState {
        touching: v[0] != 0.0,
        impact_speed: v[1],
        stiffness: v[2],
        damping: v[3],
        spring: Vec3::new(v[4], v[5], v[6]),
        sliding: v[7] != 0.0,
    }
}

/// One sphere in a message: its state, its memory of the walls and its carried loads.
struct Record {
    id: u32,
    owned: bool,
    position: Vec3,
    velocity: Vec3,
    angular_velocity: Vec3,
    radius: f64,
    mass: f64,
    inertia: f64,
    material: usize,
    fixed: bool,
    walls: Vec<ContactState>,
    carried: Option<(Vec3, Vec3)>,
}

/// Values of a record before its wall memories and carried loads.
const RECORD_HEAD: usize = 16;

impl Record {
    fn of(system: &DemSystem, k: usize, id: u32, owned: bool) -> Self {
        let p = &system.particles;
        let slots = system.walls.len().max(1);
        Record {
            id,
            owned,
            position: p.position[k],
            velocity: p.velocity[k],
            angular_velocity: p.angular_velocity[k],
            radius: p.radius[k],
            mass: p.mass[k],
            inertia: p.inertia[k],
            material: p.material[k],
            fixed: p.fixed[k],
            walls: if owned {
                system.wall_states[k * slots..(k + 1) * slots].to_vec()
            } else {
                vec![ContactState::default(); slots]
            },
            carried: system.carried_loads.as_ref().map(|l| {
                if owned {
                    (l.force[k], l.torque[k])
                } else {
                    (Vec3::ZERO, Vec3::ZERO)
                }
            }),
        }
    }

    fn encode(&self, out: &mut Vec<f64>) {
        out.extend([self.id as f64, f64::from(u8::from(self.owned))]);
        out.extend(self.position.to_array());
        out.extend(self.velocity.to_array());
        out.extend(self.angular_velocity.to_array());
        out.extend([
            self.radius,
            self.mass,
            self.inertia,
            self.material as f64,
            f64::from(u8::from(self.fixed)),
        ]);
        for s in &self.walls {
            encode_memory(s, out);
        }
        if let Some((f, t)) = self.carried {
            out.extend(f.to_array());
            out.extend(t.to_array());
        }
    }

    /// Values of one record of a system with `slots` wall memories per sphere and (`carried`) loads.
    fn len(slots: usize, carried: bool) -> usize {
        RECORD_HEAD + MEMORY_LEN * slots + if carried { 6 } else { 0 }
    }

    fn decode(v: &[f64], slots: usize, carried: bool) -> Self {
        let vec3 = |at: usize| Vec3::new(v[at], v[at + 1], v[at + 2]);
        let walls = (0..slots)
            .map(|s| decode_memory(&v[RECORD_HEAD + MEMORY_LEN * s..]))
            .collect();
        let tail = RECORD_HEAD + MEMORY_LEN * slots;
        Record {
            id: v[0] as u32,
            owned: v[1] != 0.0,
            position: vec3(2),
            velocity: vec3(5),
            angular_velocity: vec3(8),
            radius: v[11],
            mass: v[12],
            inertia: v[13],
            material: v[14] as usize,
            fixed: v[15] != 0.0,
            walls,
            carried: carried.then(|| (vec3(tail), vec3(tail + 3))),
        }
    }
}

/// The whole checkpoint of the pieces written by the ranks of a split run (each sphere in one piece),
/// as the serial run writes it: to resume on another number of ranks. A whole checkpoint (a serial
/// run's) is returned as it is.
pub fn merge_pieces(pieces: Vec<DemCheckpoint>) -> Result<DemCheckpoint, String> {
    if pieces.len() == 1 && pieces[0].ids.is_empty() {
        return Ok(pieces.into_iter().next().expect("one piece"));
    }
    let total: usize = pieces.iter().map(|p| p.particles.len()).sum();
    let step_count = pieces.first().map_or(0, |p| p.step_count);
    let slots = pieces
        .iter()
        .find(|p| !p.particles.is_empty())
        .map_or(1, |p| p.wall_states.len() / p.particles.len());
    let carried = pieces.first().is_some_and(|p| p.carried_loads.is_some());
    // Where each sphere is: (piece, index in it), by global index.
    let mut at = vec![None; total];
    for (r, piece) in pieces.iter().enumerate() {
        if piece.step_count != step_count
            || piece.ids.len() != piece.particles.len()
            || piece.wall_states.len() != slots * piece.particles.len()
            || piece.carried_loads.is_some() != carried
        {
            return Err(format!("piece {r} does not match the others"));
        }
        for (k, &id) in piece.ids.iter().enumerate() {
            match at.get_mut(id as usize) {
                Some(slot @ None) => *slot = Some((r, k)),
                _ => return Err(format!("sphere {id} is missing or held twice")),
            }
        }
    }
    let mut whole = DemCheckpoint {
        step_count,
        particles: Particles::default(),
        pair_states: Vec::new(),
        wall_states: Vec::with_capacity(total * slots),
        carried_loads: carried.then(Loads::default),
        ids: Vec::new(),
    };
    for slot in at {
        let (r, k) = slot.ok_or("a sphere is in no piece")?;
        let (piece, p) = (&pieces[r], &pieces[r].particles);
        let w = &mut whole.particles;
        w.position.push(p.position[k]);
        w.velocity.push(p.velocity[k]);
        w.angular_velocity.push(p.angular_velocity[k]);
        w.radius.push(p.radius[k]);
        w.mass.push(p.mass[k]);
        w.inertia.push(p.inertia[k]);
        w.material.push(p.material[k]);
        w.fixed.push(p.fixed[k]);
        whole
            .wall_states
            .extend_from_slice(&piece.wall_states[k * slots..(k + 1) * slots]);
        if let (Some(all), Some(mine)) = (&mut whole.carried_loads, &piece.carried_loads) {
            all.force.push(mine.force[k]);
            all.torque.push(mine.torque[k]);
        }
    }
    // A pair of spheres of two pieces is in both, with the same memory.
    whole.pair_states = pieces.into_iter().flat_map(|p| p.pair_states).collect();
    whole.pair_states.sort_by_key(|&(a, b, _)| (a, b));
    whole.pair_states.dedup_by_key(|&mut (a, b, _)| (a, b));
    Ok(whole)
}

/// Where a distribution sends a sphere: its owner, and the ranks whose ghost layer holds it.
fn destinations(slabs: &Slabs, layer: f64, x: Vec3) -> (usize, impl Iterator<Item = usize> + '_) {
    let owner = slabs.owner(x);
    let ghosts = (0..slabs.ranks()).filter(move |&r| r != owner && slabs.distance(r, x) < layer);
    (owner, ghosts)
}

impl DemSystem {
    /// Thickness of the ghost layer: a pair within reach of a sphere that has moved at most a skin
    /// since the distribution lies within it (module docs).
    fn ghost_layer(&self) -> f64 {
        2.0 * self.particles.max_radius()
            + self.model.interaction_range()
            + 2.0 * GHOST_ALLOWANCE * self.neighbors.skin
    }

    /// Splits a system that every rank of `comm` has built whole (the same on all) into slabs along
    /// `axis`: this rank keeps the spheres of its slab and ghosts of those near it, with their
    /// memories. On one rank the system stays whole.
    pub fn distribute(&mut self, comm: Comm, axis: usize) {
        let slabs = Slabs::new(&self.domain, axis, comm.size());
        self.distribute_on(comm, slabs, 0.0);
    }

    /// [`DemSystem::distribute`] into the given `slabs` (one per rank of `comm`), with ghost layers
    /// at least `least_layer` thick (a coupled run's spheres reach farther than their contacts:
    /// their markers and the supports of the fluid's points).
    pub fn distribute_on(&mut self, comm: Comm, slabs: Slabs, least_layer: f64) {
        if comm.size() == 1 {
            return;
        }
        assert!(self.halo.is_none(), "DemSystem::distribute: already split");
        assert_eq!(
            slabs.ranks(),
            comm.size(),
            "DemSystem::distribute: a slab or block per rank"
        );
        let layer = self.ghost_layer().max(least_layer);
        let me = comm.rank();
        let total = self.particles.len();
        let records = (0..total)
            .filter_map(|i| {
                let x = self.particles.position[i];
                let (owner, mut ghosts) = destinations(&slabs, layer, x);
                if owner == me {
                    Some(Record::of(self, i, i as u32, true))
                } else if ghosts.any(|r| r == me) {
                    Some(Record::of(self, i, i as u32, false))
                } else {
                    None
                }
            })
            .collect();
        let list = &self.neighbors;
        let memories = (0..list.pair_count())
            .filter(|&p| !list.state[p].is_empty())
            .map(|p| (list.first[p], list.second[p], list.state[p]))
            .collect();
        let halo = Halo {
            comm,
            slabs,
            layer,
            allowance: GHOST_ALLOWANCE * self.neighbors.skin,
            ids: Vec::new(),
            owned: Vec::new(),
            total,
            sends: Vec::new(),
            receives: Vec::new(),
            reference: Vec::new(),
            distributions: 0,
            overrun: AtomicBool::new(false),
        };
        self.assemble(halo, records, memories);
    }

    /// Gives every ghost its owner's position, velocity and angular velocity now (a collective of the
    /// neighbouring ranks; nothing on a whole system): a coupled step forces the fluid with the
    /// spheres as they are at the start of each stage, ghosts included.
    pub fn refresh_ghosts(&mut self) {
        if let Some(halo) = &self.halo {
            let p = &mut self.particles;
            halo.refresh(
                &self.domain,
                &mut p.position,
                &mut p.velocity,
                &mut p.angular_velocity,
            );
        }
    }

    /// Distributes the spheres anew when one has moved more than half the skin since the last
    /// distribution on any rank (a collective).
    pub(crate) fn redistribute_if_needed(&mut self) {
        let halo = self.halo.as_ref().expect("a split system");
        let moved = halo.moved_farther(
            &self.domain,
            &self.particles.position,
            0.5 * self.neighbors.skin,
            true,
        );
        if halo.comm.max(f64::from(u8::from(moved))) > 0.0 {
            self.redistribute();
        }
    }

    /// Sends every owned sphere to the owner of the slab it is in now and to the ranks whose ghost
    /// layers hold it, with its memories (one all-to-all), and rebuilds this rank's part.
    pub fn redistribute(&mut self) {
        let halo = self.halo.as_ref().expect("a split system");
        let list = &self.neighbors;
        let memories = (0..list.pair_count())
            .filter(|&p| !list.state[p].is_empty())
            .map(|p| {
                let (a, b) = (list.first[p] as usize, list.second[p] as usize);
                (halo.ids[a], halo.ids[b], list.state[p])
            })
            .collect();
        self.route(memories);
    }

    /// The distribution of [`DemSystem::redistribute`], with the pair `memories` (global indices)
    /// this rank knows: each goes to the new owners of its members that this rank owns.
    fn route(&mut self, memories_held: Vec<(u32, u32, ContactState)>) {
        let halo = self.halo.take().expect("a split system");
        let size = halo.comm.size();
        let (slabs, layer) = (&halo.slabs, halo.layer);
        let mut records = vec![Vec::new(); size];
        let mut counts = vec![0usize; size];
        let position = &self.particles.position;
        for k in halo.owned_indices() {
            let (owner, ghosts) = destinations(slabs, layer, position[k]);
            let id = halo.ids[k];
            Record::of(self, k, id, true).encode(&mut records[owner]);
            counts[owner] += 1;
            for r in ghosts {
                Record::of(self, k, id, false).encode(&mut records[r]);
                counts[r] += 1;
            }
        }
        // The memory of each pair goes to the new owners of the members this rank owned (it
        // evaluated the pair from its owners' states, as they did).
        let mut memories = vec![Vec::new(); size];
        for (a, b, state) in &memories_held {
            let mut sent_to = None;
            for member in [*a, *b] {
                let Some(k) = halo.local(member).filter(|&k| halo.owned[k]) else {
                    continue;
                };
                let to = slabs.owner(position[k]);
                if sent_to != Some(to) {
                    let out: &mut Vec<f64> = &mut memories[to];
                    out.extend([*a as f64, *b as f64]);
                    encode_memory(state, out);
                    sent_to = Some(to);
                }
            }
        }
        let outgoing: Vec<Vec<f64>> = (0..size)
            .map(|r| {
                let mut message = vec![counts[r] as f64];
                message.extend_from_slice(&records[r]);
                message.extend_from_slice(&memories[r]);
                message
            })
            .collect();
        let incoming = silt_parallel::all_to_all_vecs(&*halo.comm, &outgoing);
        let slots = self.walls.len().max(1);
        let carried = self.carried_loads.is_some();
        let record_len = Record::len(slots, carried);
        let mut received = Vec::new();
        let mut pair_memories = Vec::new();
        for message in &incoming {
            let count = message[0] as usize;
            let (body, rest) = message[1..].split_at(count * record_len);
            received.extend(
                body.chunks_exact(record_len)
                    .map(|v| Record::decode(v, slots, carried)),
            );
            pair_memories.extend(
                rest.chunks_exact(2 + MEMORY_LEN)
                    .map(|v| (v[0] as u32, v[1] as u32, decode_memory(&v[2..]))),
            );
        }
        self.assemble(halo, received, pair_memories);
    }

    /// This rank's piece of a checkpoint: its owned spheres with their global indices, the memory of
    /// the pairs they belong to (global indices), their wall memories and carried loads.
    pub(crate) fn checkpoint_piece(&self) -> DemCheckpoint {
        let halo = self.halo.as_ref().expect("a split system");
        let owned: Vec<usize> = halo.owned_indices().collect();
        let p = &self.particles;
        let pick = |v: &[Vec3]| owned.iter().map(|&k| v[k]).collect::<Vec<_>>();
        let particles = Particles {
            position: pick(&p.position),
            velocity: pick(&p.velocity),
            angular_velocity: pick(&p.angular_velocity),
            radius: owned.iter().map(|&k| p.radius[k]).collect(),
            mass: owned.iter().map(|&k| p.mass[k]).collect(),
            inertia: owned.iter().map(|&k| p.inertia[k]).collect(),
            material: owned.iter().map(|&k| p.material[k]).collect(),
            fixed: owned.iter().map(|&k| p.fixed[k]).collect(),
        };
        let slots = self.walls.len().max(1);
        let list = &self.neighbors;
        let pair_states = (0..list.pair_count())
            .filter(|&q| !list.state[q].is_empty())
            .filter_map(|q| {
                let (a, b) = (list.first[q] as usize, list.second[q] as usize);
                (halo.owned[a] || halo.owned[b]).then(|| (halo.ids[a], halo.ids[b], list.state[q]))
            })
            .collect();
        DemCheckpoint {
            step_count: self.step_count,
            particles,
            pair_states,
            wall_states: owned
                .iter()
                .flat_map(|&k| self.wall_states[k * slots..(k + 1) * slots].iter().copied())
                .collect(),
            carried_loads: self.carried_loads.as_ref().map(|l| Loads {
                force: pick(&l.force),
                torque: pick(&l.torque),
            }),
            ids: owned.iter().map(|&k| halo.ids[k]).collect(),
        }
    }

    /// Restores a split system from this rank's piece of a checkpoint of as many ranks, or from a
    /// whole checkpoint (a serial run's, or the pieces of another number of ranks merged by
    /// [`merge_pieces`]); the spheres are distributed anew (a collective).
    pub(crate) fn restore_split(&mut self, c: DemCheckpoint) -> Result<(), String> {
        let mut halo = self.halo.take().expect("a split system");
        let slots = self.walls.len().max(1);
        if c.wall_states.len() != c.particles.len() * slots {
            self.halo = Some(halo);
            return Err(
                "the checkpoint was written for a scene with a different number of walls".into(),
            );
        }
        if c.ids.is_empty() {
            if c.particles.len() != halo.total {
                let total = halo.total;
                self.halo = Some(halo);
                return Err(format!(
                    "the checkpoint holds {} particles but the scene defines {total}",
                    c.particles.len()
                ));
            }
            // Whole: every rank keeps its slab's spheres and ghosts, as at the start.
            self.particles = c.particles.clone();
            self.wall_states = c.wall_states.clone();
            self.carried_loads = c.carried_loads.clone();
            let (comm, slabs, layer) = (halo.comm.clone(), halo.slabs.clone(), halo.layer);
            self.neighbors = NeighborList::new(self.neighbors.skin);
            self.restore(c)?;
            self.distribute_on(comm, slabs, layer);
            return Ok(());
        }
        if c.ids.len() != c.particles.len() {
            self.halo = Some(halo);
            return Err("the checkpoint piece does not name each of its spheres".into());
        }
        self.step_count = c.step_count;
        self.particles = c.particles;
        self.wall_states = c.wall_states;
        self.carried_loads = c.carried_loads;
        halo.owned = vec![true; c.ids.len()];
        halo.ids = c.ids;
        self.halo = Some(halo);
        self.route(c.pair_states);
        Ok(())
    }

    /// Makes `records` (owned spheres and ghosts, each once) this rank's arrays, in ascending global
    /// index, with the ghost exchange's plan, the pair lists and the `memories` of their pairs.
    fn assemble(
        &mut self,
        mut halo: Halo,
        mut records: Vec<Record>,
        memories: Vec<(u32, u32, ContactState)>,
    ) {
        records.sort_unstable_by_key(|r| r.id);
        let carried = self.carried_loads.is_some();
        let mut particles = Particles::default();
        let mut wall_states = Vec::with_capacity(records.len() * self.walls.len().max(1));
        let mut loads = Loads::default();
        halo.ids.clear();
        halo.owned.clear();
        for r in records {
            let p = &mut particles;
            p.position.push(r.position);
            p.velocity.push(r.velocity);
            p.angular_velocity.push(r.angular_velocity);
            p.radius.push(r.radius);
            p.mass.push(r.mass);
            p.inertia.push(r.inertia);
            p.material.push(r.material);
            p.fixed.push(r.fixed);
            wall_states.extend(r.walls);
            if let Some((f, t)) = r.carried {
                loads.force.push(f);
                loads.torque.push(t);
            }
            halo.ids.push(r.id);
            halo.owned.push(r.owned);
        }
        // Ghost exchange: each owned sphere to the ranks whose layer holds it, each ghost from its
        // owner, both in ascending global index.
        let (me, size) = (halo.comm.rank(), halo.comm.size());
        let mut sends = vec![Vec::new(); size];
        let mut receives = vec![Vec::new(); size];
        for (k, &x) in particles.position.iter().enumerate() {
            let (owner, ghosts) = destinations(&halo.slabs, halo.layer, x);
            if halo.owned[k] {
                debug_assert_eq!(owner, me, "an owned sphere lies in this rank's slab");
                for r in ghosts {
                    sends[r].push(k as u32);
                }
            } else {
                receives[owner].push(k as u32);
            }
        }
        let plan = |lists: Vec<Vec<u32>>| -> Vec<(usize, Vec<u32>)> {
            lists
                .into_iter()
                .enumerate()
                .filter(|(_, l)| !l.is_empty())
                .collect()
        };
        halo.sends = plan(sends);
        halo.receives = plan(receives);
        halo.reference = particles.position.clone();
        halo.distributions += 1;
        halo.overrun.store(false, Ordering::Relaxed);

        let rebuilds = self.neighbors.rebuilds;
        self.neighbors = NeighborList::new(self.neighbors.skin);
        self.neighbors.owned = Some(halo.owned.clone());
        self.neighbors.rebuild(
            &self.domain,
            &particles.position,
            &particles.radius,
            self.model.interaction_range(),
        );
        self.neighbors.rebuilds += rebuilds;
        let local: Vec<(u32, u32, ContactState)> = memories
            .into_iter()
            .filter_map(|(a, b, s)| {
                let (a, b) = (halo.local(a)?, halo.local(b)?);
                Some((a as u32, b as u32, s))
            })
            .collect();
        self.neighbors.restore_states(&local);
        self.particles = particles;
        self.wall_states = wall_states;
        self.carried_loads = carried.then_some(loads);
        self.scratch = Default::default();
        self.halo = Some(halo);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn domain(periodic: bool) -> Domain {
        Domain {
            min: Vec3::new(0.0, 0.0, -1.0),
            max: Vec3::new(1.0, 1.0, 9.0),
            periodic: [false, false, periodic],
        }
    }

    #[test]
    fn slabs_own_every_position_once_and_measure_distances_around_the_period() {
        let slabs = Slabs::new(&domain(true), 2, 4);
        assert_eq!(slabs.bounds(1), (1.5, 4.0));
        for (z, owner) in [
            (-1.0, 0),
            (1.49, 0),
            (1.5, 1),
            (8.99, 3),
            (9.0, 3),
            (-3.0, 0),
        ] {
            assert_eq!(slabs.owner(Vec3::new(0.5, 0.5, z)), owner, "z = {z}");
        }
        let at = |z: f64| Vec3::new(0.0, 0.0, z);
        assert_eq!(slabs.distance(1, at(2.0)), 0.0);
        assert!((slabs.distance(1, at(4.5)) - 0.5).abs() < 1e-12);
        // The top of the box is next to the bottom slab through the periodic sides.
        assert!((slabs.distance(0, at(8.75)) - 0.25).abs() < 1e-12);
        assert!((slabs.distance(3, at(-0.5)) - 0.5).abs() < 1e-12);
        let walled = Slabs::new(&domain(false), 2, 4);
        assert!((walled.distance(0, at(8.75)) - 7.25).abs() < 1e-12);
    }

    #[test]
    fn blocks_number_their_ranks_first_along_the_first_axis_and_measure_the_larger_distance() {
        // The box of `domain` along x and z, 2 x 4 blocks.
        let d = domain(true);
        let blocks = Slabs::blocks(Slabs::new(&d, 0, 2), Slabs::new(&d, 2, 4));
        assert_eq!(blocks.ranks(), 8);
        let length = d.length();
        let x_half = d.min[0] + 0.5 * length[0];
        // Below the middle of x and in the second z slab: rank 0 + 2 x 1.
        let inside = Vec3::new(x_half - 0.1, 0.5, 2.0);
        assert_eq!(blocks.owner(inside), 2);
        assert_eq!(blocks.owner(Vec3::new(x_half + 0.1, 0.5, 2.0)), 3);
        assert_eq!(blocks.distance(2, inside), 0.0);
        // Block 3 (the other x half, the same z slab) is 0.1 away; block 0 (the same x half, the
        // first z slab) 0.5; block 1 (diagonal) the larger of the two.
        assert!((blocks.distance(3, inside) - 0.1).abs() < 1e-12);
        assert!((blocks.distance(0, inside) - 0.5).abs() < 1e-12);
        assert!((blocks.distance(1, inside) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn slabs_of_cells_own_a_sphere_by_the_cell_of_its_centre() {
        // 10 cells of 1 (z from -1 to 9) in blocks of 3, 4 and 3 cells.
        for periodic in [true, false] {
            let slabs = Slabs::of_cells(&domain(periodic), 2, (-1.0, 1.0), &[0..3, 3..7, 7..10]);
            assert_eq!(slabs.bounds(1), (2.0, 6.0));
            for (z, owner) in [
                (-1.0, 0),
                (1.999, 0),
                (2.0, 1),
                (5.999, 1),
                (6.0, 2),
                (8.99, 2),
            ] {
                assert_eq!(slabs.owner(Vec3::new(0.5, 0.5, z)), owner, "z = {z}");
            }
            // Beyond the box: wrapped when periodic, to the end slabs otherwise.
            let beyond = [
                (9.5, if periodic { 0 } else { 2 }),
                (-1.5, 2 * usize::from(periodic)),
            ];
            for (z, owner) in beyond {
                assert_eq!(slabs.owner(Vec3::new(0.5, 0.5, z)), owner, "z = {z}");
            }
            let at = |z: f64| Vec3::new(0.0, 0.0, z);
            assert!((slabs.distance(1, at(7.5)) - 1.5).abs() < 1e-12);
        }
        let periodic = Slabs::of_cells(&domain(true), 2, (-1.0, 1.0), &[0..3, 3..7, 7..10]);
        assert!((periodic.distance(0, Vec3::new(0.0, 0.0, 8.5)) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn memories_survive_a_message() {
        let s = ContactState {
            touching: true,
            impact_speed: -0.25,
            stiffness: 3.0e5,
            damping: 1.5,
            spring: Vec3::new(1e-9, -2e-9, 0.0),
            sliding: false,
        };
        let mut v = Vec::new();
        encode_memory(&s, &mut v);
        assert_eq!(v.len(), MEMORY_LEN);
        assert_eq!(decode_memory(&v), s);
    }
}
