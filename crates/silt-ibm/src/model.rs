//! Resolved spheres in a fluid as a [`Model`] of the run loop: fixed steps of the coupled algorithm,
//! one time series of the spheres (with their hydrodynamic loads) and the fluid (with the solid
//! fraction), global figures of both as diagnostics, profiles weighted by the solid fraction (seed
//! eq. 33) and the trajectories of tracked particles.

use crate::coupling::{coupled_step, CoupledParticles, WholeSpheres};
use crate::profiles::{fluid_profile_on, particle_profile, solid_fraction};
use crate::protocol::{BedProtocol, BedSample, BedState, Snapshot, BED_COLUMNS};
use crate::Vec3;
use silt_core::model::{
    Array, Clock, Frame, FrameContent, FrameTable, Horizon, Model, Series, StepFailure, Table,
};
use silt_dem::diagnostics::{contact_statistics, energies};
use silt_dem::model::particle_dataset;
use silt_dem::system::DemCheckpoint;
use silt_fluid::model::{bulk_axis, driving_gradient, fluid_image, AXIS_NAMES};
use silt_fluid::{FluidSolver, FluidState};

/// Columns of the diagnostics table.
pub const DIAGNOSTIC_COLUMNS: [&str; 18] = [
    "time",
    "step",
    "particle_kinetic_energy",
    "particle_rotational_energy",
    "fluid_kinetic_energy",
    "mean_particle_vx",
    "mean_particle_vy",
    "mean_particle_vz",
    "max_divergence",
    "cfl",
    "contacts",
    "wall_contacts",
    "sliding_contacts",
    "max_overlap_over_radius",
    "dry_contacts",
    "markers_disabled",
    "bulk_velocity",
    "driving_gradient",
];

/// Columns of a tracked particle's trajectory.
pub const TRACK_COLUMNS: [&str; 14] = [
    "time", "x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz", "fx", "fy", "fz", "contacts",
];

/// Everything needed to continue a coupled run bit for bit.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct CoupledCheckpoint {
    pub fluid: FluidState,
    pub particles: DemCheckpoint,
    /// The fluid momentum inside each sphere at the last stage (see [`CoupledParticles::inner`]).
    pub inner: Option<Vec<(Vec3, Vec3)>>,
    /// The sheared-bed protocol's phase, averages and unwritten samples (scenes with `[bed]`).
    #[serde(default)]
    pub bed: Option<BedState>,
}

/// What the output of a coupled run shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CoupledOutput {
    /// Write the spheres and the fluid images.
    pub particle_vtk: bool,
    pub fluid_vtk: bool,
    /// Add the vorticity to the fluid images.
    pub vorticity: bool,
    /// Axis of the profiles.
    pub profile_axis: usize,
    /// Particle indices written as `track_<id>.csv`.
    pub track: Vec<usize>,
}

/// A fluid and the spheres resolved on its grid, advanced with a fixed step.
pub struct CoupledModel {
    pub fluid: FluidSolver,
    pub particles: CoupledParticles,
    pub dt: f64,
    pub output: CoupledOutput,
    /// The seed's sheared-bed protocol and measures, when the scene has a `[bed]` table.
    pub bed: Option<BedProtocol>,
    /// Seconds spent sampling the bed's measures.
    pub bed_seconds: f64,
    work: Vec<f64>,
}

impl CoupledModel {
    pub fn new(
        fluid: FluidSolver,
        particles: CoupledParticles,
        dt: f64,
        output: CoupledOutput,
    ) -> Self {
        CoupledModel {
            fluid,
            particles,
            dt,
            output,
            bed: None,
            bed_seconds: 0.0,
            work: Vec::new(),
        }
    }

    /// The model with the sheared-bed protocol of `bed`.
    pub fn with_bed(mut self, bed: BedProtocol) -> Self {
        self.bed = Some(bed);
        self
    }

    /// A dry settling step (protocol phase 1): the particles' stages with gravity and buoyancy and the
    /// contacts, no fluid loads and no lubrication; the fluid stays at rest and only its clock moves.
    fn settle_step(&mut self) -> Result<(), StepFailure> {
        let dem = &mut self.particles.dem;
        dem.dt = self.dt;
        dem.begin_step();
        let rho = self.particles.fluid_density;
        let gravity = dem.gravity;
        let mut loads = silt_dem::forces::Loads::zeros(dem.particles.len());
        for (force, radius) in loads.force.iter_mut().zip(&dem.particles.radius) {
            *force = -rho * 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3) * gravity;
        }
        let lubrication = dem.model.lubrication.take();
        let mut result = Ok(());
        for stage in 0..3 {
            result = dem.step_stage(stage, &loads);
            if result.is_err() {
                break;
            }
        }
        dem.model.lubrication = lubrication;
        result.map_err(|e| StepFailure::new(e.to_string()))?;
        // What is measured after the step reads the ghosts too, and the forcing's arrays follow the
        // spheres held.
        dem.refresh_ghosts();
        self.particles.sync_forcing();
        self.fluid
            .finish_step(self.dt, 0.0)
            .map_err(|e| StepFailure::new(e.to_string()))
    }

    /// The flow rate per unit span the fluid holds now (eq. 32 with the fluid-fraction weights).
    fn held_flow_rate(&self, bed: &BedProtocol) -> f64 {
        self.fluid.held_flow_rate().unwrap_or(0.0) * (bed.settings.ceiling - bed.settings.floor)
    }

    /// Takes the protocol's sample after a step, and sets the flow rate its phase asks for.
    fn sample_bed(&mut self) {
        let Some(mut bed) = self.bed.take() else {
            return;
        };
        if bed.samples_at(self.fluid.state.steps) {
            let clock = std::time::Instant::now();
            // This rank's cells (all of them on one rank); the profile of the whole domain.
            let layout = self.particles.forcing.own_layout();
            let p = &self.particles.dem.particles;
            // The spheres held here cover this rank's cells.
            let spheres: Vec<(Vec3, f64)> =
                p.position.iter().copied().zip(p.radius.clone()).collect();
            let phi = solid_fraction(&self.particles.forcing.layout, &layout.grid, &spheres);
            let fluid = fluid_profile_on(
                layout,
                &self.fluid.state.velocity,
                &phi,
                bed.settings.vertical,
                Some(self.fluid.decomposition()),
            );
            let whole = self.particles.whole_spheres(&vec![0; p.len()]);
            let p = &whole.particles;
            let mobile: Vec<usize> = (0..p.len()).filter(|&i| !p.fixed[i]).collect();
            let positions: Vec<Vec3> = mobile.iter().map(|&i| p.position[i]).collect();
            let velocities: Vec<Vec3> = mobile.iter().map(|&i| p.velocity[i]).collect();
            let snapshot = Snapshot {
                time: self.fluid.state.time,
                fluid: &fluid,
                positions: &positions,
                velocities: &velocities,
                flow_rate: self.held_flow_rate(&bed),
            };
            bed.sample(&snapshot);
            self.bed_seconds += clock.elapsed().as_secs_f64();
        }
        self.bed = Some(bed);
    }

    /// Holds the flow rate of the protocol's phase.
    fn drive_bed(&mut self) {
        if let Some(bed) = &self.bed {
            if let silt_fluid::Driving::FlowRate { bulk_velocity, .. } =
                &mut self.fluid.config.driving
            {
                let wanted = bed.settings.bulk_velocity(bed.target_flow_rate());
                if bulk_velocity.constant() != Some(wanted) {
                    *bulk_velocity = silt_core::signal::Signal::Constant(wanted);
                }
            }
        }
    }

    /// The latest sample of the bed protocol.
    pub fn bed_sample(&self) -> Option<BedSample> {
        self.bed.as_ref().and_then(|b| b.state.last)
    }

    /// The hydrodynamic force and torque on each sphere of `whole` over the last step (rho_f times the
    /// forcing's reaction, averaged over the stages).
    fn hydrodynamic_loads(&self, whole: &WholeSpheres) -> (Vec<Vec3>, Vec<Vec3>) {
        let rho = self.particles.fluid_density;
        (
            whole.step_force.iter().map(|f| rho * *f).collect(),
            whole.step_torque.iter().map(|t| rho * *t).collect(),
        )
    }
}

impl Model for CoupledModel {
    type Checkpoint = CoupledCheckpoint;

    fn kind(&self) -> &'static str {
        "coupled"
    }

    fn time(&self) -> f64 {
        self.fluid.state.time
    }

    fn steps(&self) -> u64 {
        self.fluid.state.steps
    }

    fn clock(&self) -> Clock {
        Clock::Fixed(self.dt)
    }

    fn advance(&mut self, _: Horizon) -> Result<(), StepFailure> {
        let time = self.time();
        if let Some(bed) = &mut self.bed {
            let settling = bed.state.phase == crate::protocol::Phase::Settling;
            if bed.settles_at(time, self.dt) {
                return self.settle_step();
            }
            if settling {
                // The settling ran without lubrication: its pair lists reach the contacts only.
                self.particles.dem.rebuild_pair_lists();
            }
        }
        self.drive_bed();
        coupled_step(&mut self.fluid, &mut self.particles, self.dt)
            .map_err(|e| StepFailure::new(e.to_string()))?;
        self.sample_bed();
        Ok(())
    }

    fn checkpoint(&mut self) -> CoupledCheckpoint {
        CoupledCheckpoint {
            fluid: self.fluid.state.clone(),
            particles: self.particles.dem.checkpoint(),
            inner: self.particles.inner.clone(),
            bed: self.bed.as_ref().map(|b| b.state.clone()),
        }
    }

    fn restore(&mut self, c: CoupledCheckpoint) -> Result<(), String> {
        let n = self.particles.total();
        if let Some(inner) = &c.inner {
            if inner.len() != n {
                return Err(format!("{} inner momenta for {n} particles", inner.len()));
            }
        }
        match (&self.bed, &c.bed) {
            (Some(_), None) => return Err("the checkpoint has no sheared-bed state".into()),
            (None, Some(_)) => return Err("the checkpoint has a sheared-bed state".into()),
            _ => {}
        }
        self.fluid.restore(c.fluid)?;
        self.particles.dem.restore(c.particles)?;
        self.particles.forget_forcing_spheres();
        self.particles.inner = c.inner;
        if let (Some(bed), Some(state)) = (&mut self.bed, c.bed) {
            bed.state = state;
        }
        self.drive_bed();
        Ok(())
    }

    /// This rank's checkpoint cut from those of a run on `ranks` ranks (its process grid from
    /// [`coupled_process_grid`]): the cells of its block of the fluid from the pieces that hold them; the spheres merged from every rank's piece (each holds
    /// the spheres it owned; `silt_dem::distributed::merge_pieces`), their inner momenta and the bed's
    /// state from rank 0's (the same on every rank).
    fn checkpoint_from_ranks(
        &self,
        ranks: usize,
        load: &mut dyn FnMut(usize) -> Result<CoupledCheckpoint, String>,
    ) -> Option<Result<CoupledCheckpoint, String>> {
        let mut spheres: Vec<Option<DemCheckpoint>> = vec![None; ranks];
        let mut first = None;
        let cells = self.fluid.config.grid.cells;
        let Some(dims) = coupled_process_grid(ranks, cells) else {
            return Some(Err(format!(
                "no process grid of {ranks} ranks fits the grid of {cells:?} cells"
            )));
        };
        let fluid = silt_fluid::model::block_from_ranks(&self.fluid, dims, &mut |rank| {
            let piece = load(rank)?;
            let fluid = piece.fluid.clone();
            spheres[rank] = Some(piece.particles.clone());
            if rank == 0 {
                first = Some(piece);
            }
            Ok(fluid)
        });
        Some(fluid.and_then(|fluid| {
            let mut rest = match first {
                Some(piece) => piece,
                None => load(0)?,
            };
            let particles = if rest.particles.ids.is_empty() {
                // A run that held every sphere on every rank (or a serial one).
                rest.particles.clone()
            } else {
                let mut pieces = Vec::with_capacity(ranks);
                for (rank, piece) in spheres.into_iter().enumerate() {
                    pieces.push(match piece {
                        Some(piece) => piece,
                        None if rank == 0 => rest.particles.clone(),
                        None => load(rank)?.particles,
                    });
                }
                silt_dem::distributed::merge_pieces(pieces)?
            };
            rest.particles = particles;
            Ok(CoupledCheckpoint { fluid, ..rest })
        }))
    }

    fn diagnostic_columns(&self) -> Vec<String> {
        DIAGNOSTIC_COLUMNS.iter().map(|c| c.to_string()).collect()
    }

    /// The figures of the whole domain (the same row on every rank of a distributed run).
    fn diagnostics(&mut self) -> Result<Vec<Vec<f64>>, StepFailure> {
        let dem = &self.particles.dem;
        let state = &self.fluid.state;
        let stats = contact_statistics(dem);
        let e = energies(dem);
        let whole = self.particles.whole_spheres(&stats.per_particle);
        let p = &whole.particles;
        let free: Vec<usize> = (0..p.len()).filter(|&i| !p.fixed[i]).collect();
        let mean_velocity = if free.is_empty() {
            Vec3::ZERO
        } else {
            free.iter().map(|&i| p.velocity[i]).sum::<Vec3>() / free.len() as f64
        };
        let forcing = &self.particles.forcing;
        let axis = bulk_axis(&self.fluid);
        Ok(vec![vec![
            state.time,
            state.steps as f64,
            e.kinetic(),
            e.rotational,
            self.particles.fluid_density * self.fluid.kinetic_energy(),
            mean_velocity.x,
            mean_velocity.y,
            mean_velocity.z,
            self.fluid.max_divergence(&mut self.work),
            self.fluid.cfl(self.dt),
            stats.pair_contacts as f64,
            stats.wall_contacts as f64,
            stats.sliding_contacts as f64,
            stats.max_overlap_over_radius,
            self.particles.dry_contacts as f64,
            (forcing.disabled_at_walls + forcing.disabled_between_spheres) as f64,
            self.fluid.mean_velocity(axis),
            driving_gradient(&self.fluid),
        ]])
    }

    fn frame(&mut self, content: FrameContent) -> Result<Frame, StepFailure> {
        let dem = &self.particles.dem;
        let p = &dem.particles;
        // The domain's grid, and this rank's cells (all of them on one rank).
        let grid = self.particles.forcing.layout.grid;
        let own = self.particles.forcing.own_layout();
        let state = &self.fluid.state;
        let time = state.time;
        let stats = contact_statistics(dem);
        // The spheres held here cover this rank's cells; the outputs show every sphere.
        let spheres: Vec<(Vec3, f64)> = p.position.iter().copied().zip(p.radius.clone()).collect();
        let phi = solid_fraction(&self.particles.forcing.layout, &own.grid, &spheres);
        let whole = self.particles.whole_spheres(&stats.per_particle);
        let p = &whole.particles;
        let (force, torque) = self.hydrodynamic_loads(&whole);
        let mut frame = Frame::default();
        if content != FrameContent::NoDatasets && self.output.particle_vtk {
            frame.datasets.push(particle_dataset(
                p,
                &whole.contacts,
                vec![
                    Array::vec3("hydrodynamic_force", force.clone()),
                    Array::vec3("hydrodynamic_torque", torque),
                ],
            ));
        }
        if content == FrameContent::All && self.output.fluid_vtk {
            frame.datasets.push(fluid_image(
                &own.grid,
                state,
                self.output.vorticity,
                vec![Array::f64("solid_fraction", phi.clone())],
            ));
        }

        // Profiles along the profile axis: one row per plane of cells.
        let axis = self.output.profile_axis;
        let fluid_rows = fluid_profile_on(
            own,
            &state.velocity,
            &phi,
            axis,
            Some(self.fluid.decomposition()),
        );
        let low = grid.origin[axis];
        let high = low + grid.lengths()[axis];
        let particle_rows = particle_profile(
            &p.position,
            &p.velocity,
            axis,
            (low, high),
            grid.cells[axis],
        );
        let rows = fluid_rows
            .iter()
            .zip(&particle_rows)
            .map(|(f, q)| {
                vec![
                    time,
                    f.position,
                    f.solid_fraction,
                    f.velocity[0],
                    f.velocity[1],
                    f.velocity[2],
                    q.count as f64,
                    q.velocity[0],
                    q.velocity[1],
                    q.velocity[2],
                ]
            })
            .collect();
        let columns = [
            "time",
            AXIS_NAMES[axis],
            "solid_fraction",
            "fluid_u",
            "fluid_v",
            "fluid_w",
            "particles",
            "particle_u",
            "particle_v",
            "particle_w",
        ];
        frame.tables.push(FrameTable {
            folder: "profiles",
            table: Table {
                columns: columns.map(String::from).to_vec(),
                rows,
            },
        });

        if let Some(bed) = &mut self.bed {
            let rows = bed.state.unwritten.drain(..).map(|s| s.row()).collect();
            frame.series.push(Series {
                file: "bed.csv".into(),
                table: Table {
                    columns: BED_COLUMNS.iter().map(|c| c.to_string()).collect(),
                    rows,
                },
            });
            if !bed.state.particle_flux.is_empty() {
                frame
                    .tables
                    .extend(bed_profile_tables(bed, AXIS_NAMES[axis]));
            }
        }

        for &i in &self.output.track {
            let (x, u, w, f) = (
                p.position[i],
                p.velocity[i],
                p.angular_velocity[i],
                force[i],
            );
            frame.series.push(Series {
                file: format!("track_{i}.csv"),
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
                        f.x,
                        f.y,
                        f.z,
                        whole.contacts[i] as f64,
                    ]],
                },
            });
        }
        Ok(frame)
    }

    fn size(&self) -> (usize, &'static str) {
        (self.fluid.config.grid.cell_count(), "cell")
    }

    fn status(&self) -> Option<String> {
        let bed = self.bed.as_ref()?;
        let phase = bed.state.phase.name();
        let Some(sample) = bed.state.last else {
            return Some(phase.to_string());
        };
        // In the units the experiments are compared in: q_v / q_f (q_f the scene's flow rate) and h_f / D.
        let (flow_rate, diameter) = (bed.settings.flow_rate, bed.settings.diameter);
        let mean = match bed.mean_particle_flux() {
            Some((mean, Some(error))) => format!(
                ", <q_v>/q_f {:.3e} +- {:.1e}",
                mean / flow_rate,
                error / flow_rate
            ),
            Some((mean, None)) => format!(", <q_v>/q_f {:.3e}", mean / flow_rate),
            None => String::new(),
        };
        Some(format!(
            "{phase}: q_v/q_f {:.3e}{mean}, h_f/D {:.2}",
            sample.particle_flux / flow_rate,
            sample.clear_height / diameter
        ))
    }

    fn timers(&self) -> Vec<(&'static str, f64)> {
        let mut timers = vec![
            ("forcing", self.particles.forcing_seconds),
            ("particles", self.particles.particle_seconds),
        ];
        if self.particles.fluid_fraction_flow_rate {
            timers.push(("flow-rate weights", self.particles.weights_seconds));
        }
        if self.bed.is_some() {
            timers.push(("bed measures", self.bed_seconds));
        }
        timers
    }
}

/// The time-averaged profiles of the sheared bed so far: the particle bins (R_p wide, counted down from
/// the bed top h_p) and the fluid planes (eq. 33), each with the seed's scaled height (y - h_p) / h_f
/// from the mean h_p and h_f of the average.
/// The process grid `[p_y, p_z]` of a coupled scene on `ranks` ranks with a fluid of `cells`: the
/// fluid scenes' rule (slabs of z planes while every rank keeps
/// `silt_fluid::decomposition::MIN_SLAB_PLANES` planes, else the most even pencils that fit); `None`
/// if none fits. A restart cuts the pieces of an earlier run by the same rule. (Pencils across
/// gravity, N x 1, so that each rank holds a share of a settled bed, were measured slower on the
/// sheared bed A10 on 2 ranks, 0.141 s/step against 0.122 in slabs: a rank forces the markers of
/// every sphere whose supports touch its rows, about 78 % of them, and the x-to-y transposes cost
/// more than the slabs' one; docs/parallel.md.)
pub fn coupled_process_grid(ranks: usize, cells: [usize; 3]) -> Option<[usize; 2]> {
    silt_fluid::decomposition::Decomposition::process_grid(
        ranks,
        cells,
        silt_fluid::decomposition::MIN_SLAB_PLANES,
    )
}

fn bed_profile_tables(bed: &BedProtocol, axis_name: &str) -> Vec<FrameTable> {
    let (particles, fluid) = bed.averaged_profiles();
    let state = &bed.state;
    let (h_p, h_f) = (state.bed_height.mean(), state.clear_height.mean());
    let floor = bed.settings.floor;
    let scaled = |position: f64| (position - floor - h_p) / h_f;
    let particle_rows = particles
        .iter()
        .rev()
        .map(|row| {
            vec![
                row.position,
                scaled(row.position),
                row.count as f64,
                row.velocity[0],
                row.velocity[1],
                row.velocity[2],
            ]
        })
        .collect();
    let fluid_rows = fluid
        .iter()
        .map(|row| {
            vec![
                row.position,
                scaled(row.position),
                row.solid_fraction,
                row.velocity[0],
                row.velocity[1],
                row.velocity[2],
            ]
        })
        .collect();
    let columns = |kind: &str| {
        vec![
            axis_name.to_string(),
            "scaled_height".to_string(),
            if kind == "particles" {
                "particles".to_string()
            } else {
                "solid_fraction".to_string()
            },
            "u".to_string(),
            "v".to_string(),
            "w".to_string(),
        ]
    };
    vec![
        FrameTable {
            folder: "bed_particles",
            table: Table {
                columns: columns("particles"),
                rows: particle_rows,
            },
        },
        FrameTable {
            folder: "bed_fluid",
            table: Table {
                columns: columns("fluid"),
                rows: fluid_rows,
            },
        },
    ]
}
