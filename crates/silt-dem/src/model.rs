//! Spheres and walls as a [`Model`] of the run loop: one step of [`DemSystem::step`] at a time, the
//! particles as points with their fields, energies and contact statistics as diagnostics, and the
//! trajectories of tracked particles.

use crate::diagnostics::{contact_statistics, energies};
use crate::distributed::{merge_pieces, Halo};
use crate::particles::Particles;
use crate::system::{DemCheckpoint, DemSystem};
use crate::Vec3;
use silt_core::model::{
    Array, Clock, Dataset, Frame, FrameContent, Geometry, Horizon, Model, Series, StepFailure,
    Table,
};

/// Columns of the diagnostics table.
pub const DIAGNOSTIC_COLUMNS: [&str; 8] = [
    "time",
    "step",
    "kinetic_energy",
    "rotational_energy",
    "max_overlap_over_radius",
    "contacts",
    "wall_contacts",
    "sliding_contacts",
];

/// Columns of a tracked particle's trajectory.
pub const TRACK_COLUMNS: [&str; 11] = [
    "time", "x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz", "contacts",
];

/// A granular system with the particles whose trajectories are written.
pub struct DemModel {
    pub system: DemSystem,
    /// Particle indices written as `track_<id>.csv`.
    pub track: Vec<usize>,
}

impl Model for DemModel {
    type Checkpoint = DemCheckpoint;

    fn kind(&self) -> &'static str {
        "particles"
    }

    fn time(&self) -> f64 {
        self.system.time()
    }

    fn steps(&self) -> u64 {
        self.system.step_count
    }

    fn clock(&self) -> Clock {
        Clock::Fixed(self.system.dt)
    }

    fn advance(&mut self, _: Horizon) -> Result<(), StepFailure> {
        self.system
            .step()
            .map_err(|e| StepFailure::new(e.to_string()))
    }

    fn checkpoint(&mut self) -> DemCheckpoint {
        self.system.checkpoint()
    }

    fn restore(&mut self, checkpoint: DemCheckpoint) -> Result<(), String> {
        self.system.restore(checkpoint)
    }

    /// The pieces of a split run merged into the whole checkpoint (each rank then keeps its part).
    fn checkpoint_from_ranks(
        &self,
        ranks: usize,
        load: &mut dyn FnMut(usize) -> Result<DemCheckpoint, String>,
    ) -> Option<Result<DemCheckpoint, String>> {
        Some(
            (0..ranks)
                .map(load)
                .collect::<Result<Vec<_>, _>>()
                .and_then(merge_pieces),
        )
    }

    fn diagnostic_columns(&self) -> Vec<String> {
        DIAGNOSTIC_COLUMNS.iter().map(|c| c.to_string()).collect()
    }

    fn diagnostics(&mut self) -> Result<Vec<Vec<f64>>, StepFailure> {
        let s = &self.system;
        let stats = contact_statistics(s);
        let e = energies(s);
        Ok(vec![vec![
            s.time(),
            s.step_count as f64,
            e.kinetic(),
            e.rotational,
            stats.max_overlap_over_radius,
            stats.pair_contacts as f64,
            stats.wall_contacts as f64,
            stats.sliding_contacts as f64,
        ]])
    }

    fn frame(&mut self, content: FrameContent) -> Result<Frame, StepFailure> {
        let s = &self.system;
        let stats = contact_statistics(s);
        let mut frame = Frame::default();
        if content != FrameContent::NoDatasets {
            frame.datasets.push(match &s.halo {
                None => particle_dataset(&s.particles, &stats.per_particle, Vec::new()),
                Some(halo) => owned_dataset(s, halo, &stats.per_particle),
            });
        }
        let p = &s.particles;
        let time = s.time();
        let row = |k: usize| {
            let (x, u, w) = (p.position[k], p.velocity[k], p.angular_velocity[k]);
            vec![
                time,
                x.x,
                x.y,
                x.z,
                u.x,
                u.y,
                u.z,
                w.x,
                w.y,
                w.z,
                stats.per_particle[k] as f64,
            ]
        };
        // Each tracked sphere's row from the rank that owns it (a collective on a split system).
        let rows: Vec<Vec<f64>> = match &s.halo {
            None => self.track.iter().map(|&id| row(id)).collect(),
            Some(halo) => {
                let mine: Vec<f64> = self
                    .track
                    .iter()
                    .enumerate()
                    .filter_map(|(t, &id)| {
                        let k = halo.local(id as u32).filter(|&k| halo.owned[k])?;
                        Some(std::iter::once(t as f64).chain(row(k)))
                    })
                    .flatten()
                    .collect();
                let (all, _) = halo.comm.all_gather_v(&mine);
                let mut rows = vec![Vec::new(); self.track.len()];
                for r in all.chunks_exact(1 + TRACK_COLUMNS.len()) {
                    rows[r[0] as usize] = r[1..].to_vec();
                }
                rows
            }
        };
        for (&id, row) in self.track.iter().zip(rows) {
            frame.series.push(Series {
                file: format!("track_{id}.csv"),
                table: Table {
                    columns: TRACK_COLUMNS.iter().map(|c| c.to_string()).collect(),
                    rows: vec![row],
                },
            });
        }
        Ok(frame)
    }

    fn size(&self) -> (usize, &'static str) {
        let total = self
            .system
            .halo
            .as_ref()
            .map_or(self.system.particles.len(), |h| h.total);
        (total, "particle")
    }
}

/// The spheres a rank owns as its piece of the spheres' data set, with their global indices.
fn owned_dataset(s: &DemSystem, halo: &Halo, contacts_per_particle: &[u32]) -> Dataset {
    let owned: Vec<usize> = halo.owned_indices().collect();
    let p = &s.particles;
    let pick = |v: &[Vec3]| owned.iter().map(|&k| v[k]).collect::<Vec<_>>();
    let mine = Particles {
        position: pick(&p.position),
        velocity: pick(&p.velocity),
        angular_velocity: pick(&p.angular_velocity),
        radius: owned.iter().map(|&k| p.radius[k]).collect(),
        mass: owned.iter().map(|&k| p.mass[k]).collect(),
        inertia: owned.iter().map(|&k| p.inertia[k]).collect(),
        material: owned.iter().map(|&k| p.material[k]).collect(),
        fixed: owned.iter().map(|&k| p.fixed[k]).collect(),
    };
    let contacts: Vec<u32> = owned.iter().map(|&k| contacts_per_particle[k]).collect();
    let mut set = particle_dataset(&mine, &contacts, Vec::new());
    set.point_data[0] = Array::i32("id", owned.iter().map(|&k| halo.ids[k] as i32).collect());
    set.pieces = true;
    set
}

/// The spheres as points with `id`, `radius`, `diameter`, `velocity`, `angular_velocity`, `contacts`,
/// `fixed` and `material`, followed by the `extra` arrays.
pub fn particle_dataset(
    p: &Particles,
    contacts_per_particle: &[u32],
    extra: Vec<Array>,
) -> Dataset {
    let mut point_data = vec![
        Array::i32("id", (0..p.len() as i32).collect()),
        Array::f64("radius", p.radius.clone()),
        Array::f64("diameter", p.radius.iter().map(|r| 2.0 * r).collect()),
        Array::vec3("velocity", p.velocity.clone()),
        Array::vec3("angular_velocity", p.angular_velocity.clone()),
        Array::i32(
            "contacts",
            contacts_per_particle.iter().map(|&c| c as i32).collect(),
        ),
        Array::i32("fixed", p.fixed.iter().map(|&f| f as i32).collect()),
        Array::i32("material", p.material.iter().map(|&m| m as i32).collect()),
    ];
    point_data.extend(extra);
    Dataset {
        name: "particles",
        geometry: Geometry::Points(p.position.clone()),
        point_data,
        cell_data: Vec::new(),
        pieces: false,
    }
}
