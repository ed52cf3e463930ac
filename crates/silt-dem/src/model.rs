//! Spheres and walls as a [`Model`] of the run loop: one step of [`DemSystem::step`] at a time, the
//! particles as points with their fields, energies and contact statistics as diagnostics, and the
//! trajectories of tracked particles.

use crate::diagnostics::{contact_statistics, energies};
use crate::particles::Particles;
use crate::system::{DemCheckpoint, DemSystem};
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
            frame.datasets.push(particle_dataset(
                &s.particles,
                &stats.per_particle,
                Vec::new(),
            ));
        }
        let p = &s.particles;
        let time = s.time();
        for &id in &self.track {
            let (x, u, w) = (p.position[id], p.velocity[id], p.angular_velocity[id]);
            frame.series.push(Series {
                file: format!("track_{id}.csv"),
                table: Table {
                    columns: TRACK_COLUMNS.iter().map(|c| c.to_string()).collect(),
                    rows: vec![vec![
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
                        stats.per_particle[id] as f64,
                    ]],
                },
            });
        }
        Ok(frame)
    }

    fn size(&self) -> (usize, &'static str) {
        (self.system.particles.len(), "particle")
    }
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
    }
}
