//! Global diagnostics of a granular state: energies and contact statistics.

use crate::contact::ContactState;
use crate::system::DemSystem;

/// Contact statistics at the current positions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContactStatistics {
    /// Touching sphere pairs (gap <= 0).
    pub pair_contacts: usize,
    /// Touching sphere–wall contacts.
    pub wall_contacts: usize,
    /// Touching contacts whose tangential force sits on the Coulomb limit.
    pub sliding_contacts: usize,
    /// Largest overlap divided by the smaller radius of the pair (or the radius against a wall).
    pub max_overlap_over_radius: f64,
    /// Number of touching contacts of each particle (pairs and walls).
    pub per_particle: Vec<u32>,
}

/// Energies of the particles.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Energies {
    pub translational: f64,
    pub rotational: f64,
}

impl Energies {
    pub fn kinetic(&self) -> f64 {
        self.translational + self.rotational
    }
}

/// Kinetic energies (sequential sums: independent of the thread count). On a split system (a
/// collective) each rank's terms are gathered and added in the serial order of the spheres, so the
/// sums are the serial run's.
pub fn energies(system: &DemSystem) -> Energies {
    let p = &system.particles;
    let translational = |i: usize| 0.5 * p.mass[i] * p.velocity[i].length_squared();
    let rotational = |i: usize| 0.5 * p.inertia[i] * p.angular_velocity[i].length_squared();
    let mut e = Energies::default();
    let Some(halo) = &system.halo else {
        for i in 0..p.len() {
            e.translational += translational(i);
            e.rotational += rotational(i);
        }
        return e;
    };
    let mine: Vec<f64> = halo
        .owned_indices()
        .flat_map(|k| [halo.ids[k] as f64, translational(k), rotational(k)])
        .collect();
    let (all, _) = halo.comm.all_gather_v(&mine);
    let mut terms: Vec<&[f64]> = all.chunks_exact(3).collect();
    terms.sort_unstable_by(|a, b| a[0].total_cmp(&b[0]));
    for t in terms {
        e.translational += t[1];
        e.rotational += t[2];
    }
    e
}

/// Total linear momentum of the free particles.
pub fn momentum(system: &DemSystem) -> crate::Vec3 {
    let p = &system.particles;
    (0..p.len())
        .filter(|&i| !p.fixed[i])
        .map(|i| p.mass[i] * p.velocity[i])
        .sum()
}

/// Counts contacts and the largest overlap at the current positions. On a split system (a
/// collective) the counts and the largest overlap are those of all ranks, each pair counted by the
/// owner of its lower index, and `per_particle` is for the spheres this rank holds (right for those
/// it owns).
pub fn contact_statistics(system: &DemSystem) -> ContactStatistics {
    let mut stats = local_contact_statistics(system);
    if let Some(halo) = &system.halo {
        let comm = &halo.comm;
        let total = |n: usize| comm.sum_in_rank_order(n as f64) as usize;
        stats.pair_contacts = total(stats.pair_contacts);
        stats.wall_contacts = total(stats.wall_contacts);
        stats.sliding_contacts = total(stats.sliding_contacts);
        stats.max_overlap_over_radius = comm.max(stats.max_overlap_over_radius);
    }
    stats
}

/// [`contact_statistics`] of the pairs and walls this rank counts.
fn local_contact_statistics(system: &DemSystem) -> ContactStatistics {
    let p = &system.particles;
    let list = &system.neighbors;
    let owned = |i: usize| system.halo.as_ref().is_none_or(|h| h.owned[i]);
    let mut stats = ContactStatistics {
        per_particle: vec![0; p.len()],
        ..Default::default()
    };
    for pair in 0..list.pair_count() {
        let (i, j) = (list.first[pair] as usize, list.second[pair] as usize);
        // Two fixed spheres never interact (the pair loop skips them).
        if p.fixed[i] && p.fixed[j] {
            continue;
        }
        let distance = system
            .domain
            .separation(p.position[i], p.position[j])
            .length();
        let gap = distance - p.radius[i] - p.radius[j];
        if gap <= 0.0 {
            stats.per_particle[i] += 1;
            stats.per_particle[j] += 1;
            if !owned(i) {
                continue;
            }
            stats.pair_contacts += 1;
            count_sliding(&mut stats, &list.state[pair]);
            stats.max_overlap_over_radius = stats
                .max_overlap_over_radius
                .max(-gap / p.radius[i].min(p.radius[j]));
        }
    }
    let wall_count = system.walls.len();
    for i in (0..p.len()).filter(|&i| !p.fixed[i] && owned(i)) {
        for (w, wall) in system.walls.iter().enumerate() {
            let gap = wall.distance(p.position[i]) - p.radius[i];
            if gap <= 0.0 {
                stats.wall_contacts += 1;
                stats.per_particle[i] += 1;
                count_sliding(&mut stats, &system.wall_states[i * wall_count + w]);
                stats.max_overlap_over_radius =
                    stats.max_overlap_over_radius.max(-gap / p.radius[i]);
            }
        }
    }
    stats
}

fn count_sliding(stats: &mut ContactStatistics, state: &ContactState) {
    if state.sliding {
        stats.sliding_contacts += 1;
    }
}
