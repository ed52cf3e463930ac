//! Scenes of every kind behind one type: a scene file is read (with a size cap) and parsed once into a
//! [`Scene`], whose kind (particles, fluid, particles in a fluid, fibers, rods) follows from its tables.
//! Each kind says how to build its [`Model`], what its `silt check` report shows and what its run's
//! output schedule is ([`SceneKind`]); the command line has one `check` and one `run` path for all.

use crate::coupled_scene::CoupledScene;
use crate::fiber_scene::FiberScene;
use crate::fluid_scene::FluidScene;
use crate::rod_scene::{RodIntegrator, RodScene};
use crate::run::{RunError, RunSettings, Simulation};
use crate::scene::{Scene as ParticleScene, SceneError};
use silt_core::model::Model;
use silt_dem::model::DemModel;
use silt_fibers::model::FiberModel;
use silt_fluid::model::FluidModel;
use silt_ibm::model::{CoupledModel, CoupledOutput};
use silt_rods::model::{Integrator, Rods};
use std::io::Read;
use std::path::Path;

/// The largest scene file read (a scene is a few kilobytes; explicit particle lists may be long).
pub const MAX_SCENE_BYTES: u64 = 64 << 20;

/// A parsed and checked scene of any kind.
#[derive(Clone, Debug)]
pub enum Scene {
    Particles(ParticleScene),
    Fluid(FluidScene),
    Coupled(Box<CoupledScene>),
    Fibers(FiberScene),
    Rods(RodScene),
}

/// What a kind of scene provides to the run and check paths.
pub trait SceneKind {
    type Model: Model;

    /// The output schedule of the run.
    fn settings(&self) -> RunSettings;

    /// Sets up the model at its initial state.
    fn build(&self) -> Result<Self::Model, SceneError>;

    /// The `silt check` report of the built model: derived quantities, limits, memory, warnings.
    fn report(&self, model: &Self::Model) -> String;

    /// One line saying what runs, for the start of a run.
    fn describe(&self, model: &Self::Model) -> String;
}

/// Builds the scene's model and starts its run in `out_dir`, or resumes the run there from its
/// checkpoint.
pub fn simulation<K: SceneKind>(
    kind: &K,
    text: &str,
    out_dir: &Path,
    resume: bool,
) -> Result<Simulation<K::Model>, RunError> {
    let model = kind.build().map_err(RunError::Scene)?;
    let (settings, print) = (kind.settings(), fingerprint(text));
    if resume {
        Simulation::resume(model, settings, text, print, out_dir)
    } else {
        Simulation::start(model, settings, text, print, out_dir)
    }
}

/// Reads a scene file: at most [`MAX_SCENE_BYTES`], UTF-8.
pub fn read_scene(path: &Path) -> Result<String, SceneError> {
    let error = |message: String| SceneError {
        file: path.to_path_buf(),
        key: String::new(),
        message,
    };
    let file =
        std::fs::File::open(path).map_err(|e| error(format!("cannot read the scene file: {e}")))?;
    let mut bytes = Vec::new();
    file.take(MAX_SCENE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| error(format!("cannot read the scene file: {e}")))?;
    if bytes.len() as u64 > MAX_SCENE_BYTES {
        return Err(error(format!(
            "the file is larger than {} MiB; a scene file is a TOML text of a few kilobytes",
            MAX_SCENE_BYTES >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        error(format!(
            "the file is not UTF-8 text (invalid byte at offset {}); a scene file is TOML",
            e.utf8_error().valid_up_to()
        ))
    })
}

impl Scene {
    /// The kind of model the scene describes ([`Model::kind`]).
    pub fn kind(&self) -> &'static str {
        match self {
            Scene::Particles(_) => "particles",
            Scene::Fluid(_) => "fluid",
            Scene::Coupled(_) => "coupled",
            Scene::Fibers(_) => "fibers",
            Scene::Rods(_) => "rods",
        }
    }

    /// Parses and checks scene text of any kind; `source` names it in messages.
    pub fn parse(text: &str, source: &Path) -> Result<Scene, SceneError> {
        let tables: Vec<String> = toml::from_str::<toml::Table>(text)
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default();
        let only = |name: &str| tables.len() == 1 && tables[0] == name;
        Ok(if only("fluid") {
            Scene::Fluid(FluidScene::parse(text, source)?)
        } else if tables.iter().any(|t| t == "fluid") {
            Scene::Coupled(Box::new(CoupledScene::parse(text, source)?))
        } else if only("fibers") {
            Scene::Fibers(FiberScene::parse(text, source)?)
        } else if only("rods") {
            Scene::Rods(RodScene::parse(text, source)?)
        } else {
            Scene::Particles(ParticleScene::parse(text, source)?)
        })
    }
}

/// The scene's fingerprint, stored in checkpoints: a hash of its text without the end time and the
/// output settings (keys `end_time` and tables `output`), so that a run resumes only with the same
/// physics but may be extended or write other output.
pub fn fingerprint(text: &str) -> u64 {
    fn strip(table: &mut toml::Table) {
        table.remove("end_time");
        table.remove("output");
        for (_, value) in table.iter_mut() {
            match value {
                toml::Value::Table(t) => strip(t),
                toml::Value::Array(items) => items.iter_mut().for_each(|item| {
                    if let toml::Value::Table(t) = item {
                        strip(t)
                    }
                }),
                _ => {}
            }
        }
    }
    let canonical = match toml::from_str::<toml::Table>(text) {
        Ok(mut table) => {
            strip(&mut table);
            toml::to_string(&table).unwrap_or_else(|_| text.to_string())
        }
        Err(_) => text.to_string(),
    };
    // FNV-1a: stable across platforms and versions.
    canonical.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

impl SceneKind for ParticleScene {
    type Model = DemModel;

    fn settings(&self) -> RunSettings {
        let s = &self.simulation;
        RunSettings {
            end_time: s.end_time,
            interval: self.output.interval.unwrap_or(s.end_time / 100.0),
            checkpoint_interval: self.output.checkpoint_interval,
            vtk: self.output.vtk,
            vtk_every: 1,
            diagnostics_every: None,
        }
    }

    fn build(&self) -> Result<DemModel, SceneError> {
        Ok(DemModel {
            system: ParticleScene::build(self)?,
            track: self.output.track.clone(),
        })
    }

    fn report(&self, model: &DemModel) -> String {
        crate::derived::check_report(self, &model.system)
    }

    fn describe(&self, model: &DemModel) -> String {
        format!(
            "{} particles, dt {:e}",
            model.system.particles.len(),
            model.system.dt
        )
    }
}

impl SceneKind for FluidScene {
    type Model = FluidModel;

    fn settings(&self) -> RunSettings {
        let o = &self.output;
        RunSettings {
            end_time: self.end_time,
            interval: o.interval,
            checkpoint_interval: Some(o.checkpoint_interval),
            vtk: o.vtk,
            vtk_every: o.vtk_every,
            diagnostics_every: None,
        }
    }

    fn build(&self) -> Result<FluidModel, SceneError> {
        Ok(FluidModel::new(
            FluidScene::build(self)?,
            self.output.vorticity,
            self.output.profile_axis,
        ))
    }

    fn report(&self, model: &FluidModel) -> String {
        crate::fluid_scene::check_report(self, &model.solver)
    }

    fn describe(&self, model: &FluidModel) -> String {
        let c = model.solver.grid().cells;
        let step = match self.fixed_time_step() {
            Some(dt) => format!("dt {dt}"),
            None => format!("adaptive dt (initially {:.4e})", model.solver.next_dt()),
        };
        format!("fluid, {} x {} x {} cells, {step}", c[0], c[1], c[2])
    }
}

impl SceneKind for Box<CoupledScene> {
    type Model = CoupledModel;

    fn settings(&self) -> RunSettings {
        let o = &self.fluid.output;
        RunSettings {
            end_time: self.particles.simulation.end_time,
            interval: o.interval,
            checkpoint_interval: Some(o.checkpoint_interval),
            vtk: o.vtk || self.particles.output.vtk,
            vtk_every: o.vtk_every,
            diagnostics_every: None,
        }
    }

    fn build(&self) -> Result<CoupledModel, SceneError> {
        let (fluid, particles) = CoupledScene::build(self)?;
        let output = CoupledOutput {
            particle_vtk: self.particles.output.vtk,
            fluid_vtk: self.fluid.output.vtk,
            vorticity: self.fluid.output.vorticity,
            profile_axis: self.profile_axis,
            track: self.particles.output.track.clone(),
        };
        Ok(CoupledModel::new(
            fluid,
            particles,
            self.particles.simulation.dt,
            output,
        ))
    }

    fn report(&self, model: &CoupledModel) -> String {
        crate::coupled_scene::check_report(self, &model.fluid, &model.particles)
    }

    fn describe(&self, model: &CoupledModel) -> String {
        let c = model.fluid.grid().cells;
        format!(
            "{} particles in a fluid of {} x {} x {} cells, dt {:e}",
            model.particles.dem.particles.len(),
            c[0],
            c[1],
            c[2],
            model.dt
        )
    }
}

impl SceneKind for FiberScene {
    type Model = FiberModel;

    fn settings(&self) -> RunSettings {
        let s = &self.section;
        RunSettings {
            end_time: s.end_time,
            interval: s.output.interval.unwrap_or(s.end_time / 100.0),
            checkpoint_interval: s.output.checkpoint_interval,
            vtk: s.output.vtk,
            vtk_every: 1,
            diagnostics_every: Some(s.output.diagnostics_every),
        }
    }

    fn build(&self) -> Result<FiberModel, SceneError> {
        Ok(FiberModel::new(FiberScene::build(self)?, self.dt))
    }

    fn report(&self, model: &FiberModel) -> String {
        crate::fiber_scene::check_report(self, &model.system)
    }

    fn describe(&self, model: &FiberModel) -> String {
        format!(
            "{} fibers of {} beads in all, dt {:e} ({:.3} bending times)",
            model.system.fibers.fibers().len(),
            model.system.fibers.bead_count(),
            self.dt,
            self.dt / self.bending_time()
        )
    }
}

impl SceneKind for RodScene {
    type Model = Rods;

    fn settings(&self) -> RunSettings {
        let o = &self.section.output;
        let (end_time, interval) = match self.integrator {
            RodIntegrator::Static { .. } => (1.0, 1.0),
            _ => (self.end_time, o.interval.unwrap_or(self.end_time / 100.0)),
        };
        RunSettings {
            end_time,
            interval,
            checkpoint_interval: o.checkpoint_interval,
            vtk: o.vtk,
            vtk_every: 1,
            diagnostics_every: None,
        }
    }

    fn build(&self) -> Result<Rods, SceneError> {
        let rods = RodScene::build(self)?
            .into_iter()
            .map(|r| (r.rod, r.model))
            .collect();
        let integrator = match self.integrator {
            RodIntegrator::Radau(options) => Integrator::Radau(options),
            RodIntegrator::Verlet { dt } => Integrator::Verlet { dt },
            RodIntegrator::Static { load_steps } => Integrator::Static { load_steps },
        };
        Ok(Rods::new(rods, integrator))
    }

    fn report(&self, _: &Rods) -> String {
        match RodScene::build(self) {
            Ok(rods) => crate::rod_scene::check_report(self, &rods),
            Err(e) => format!("error: {e}\n"),
        }
    }

    fn describe(&self, model: &Rods) -> String {
        let integrator = match self.integrator {
            RodIntegrator::Radau(o) => format!(
                "Radau IIA (rtol {:e}, atol {:e})",
                o.relative_tolerance, o.absolute_tolerance
            ),
            RodIntegrator::Verlet { dt } => format!("position Verlet (dt {dt:e})"),
            RodIntegrator::Static { load_steps } => {
                format!("static equilibrium ({load_steps} load steps)")
            }
        };
        format!(
            "{} rod(s), {} segments, {integrator}",
            model.len(),
            model.size().0
        )
    }
}
