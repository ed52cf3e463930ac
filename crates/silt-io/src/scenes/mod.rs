//! Scenes of every kind behind one type. A scene file is read (with a size cap) and parsed once into
//! the tables of every kind ([`SceneFile`]); its tables say its kind (particles, fluid, particles in a
//! fluid, fibers, rods) and that kind's module checks them, fills in the defaults and returns a checked
//! scene ([`Scene`]) or one [`SceneError`] naming the key. Each kind says how to build its [`Model`],
//! what `silt check` reports and what its run's output schedule is ([`SceneKind`]); the command line
//! has one `check` and one `run` path for all. A new kind is one module here and one arm in
//! [`Scene`].

pub mod coupled;
pub mod fibers;
pub mod fluid;
pub mod keys;
pub mod output;
pub mod overrides;
pub mod particles;
pub mod rods;

pub use keys::{Keys, SceneError};
pub use overrides::Override;

use crate::run::{RunError, RunSettings, Simulation};
use output::OutputSection;
use serde::Deserialize;
use silt_core::model::Model;
use silt_parallel::{Comm, SingleRank};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest scene file read (a scene is a few kilobytes; explicit particle lists may be long).
pub const MAX_SCENE_BYTES: u64 = 64 << 20;

/// Every table a scene file may hold, parsed once; which are present says the kind.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneFile {
    pub simulation: Option<particles::SimulationSection>,
    pub domain: Option<particles::DomainSection>,
    #[serde(rename = "material")]
    pub materials: Option<Vec<particles::MaterialSection>>,
    pub contact: Option<particles::ContactSection>,
    #[serde(rename = "wall")]
    pub walls: Option<Vec<particles::WallSection>>,
    #[serde(rename = "particles")]
    pub groups: Option<Vec<particles::ParticleGroup>>,
    pub output: Option<OutputSection>,
    pub fluid: Option<fluid::FluidSection>,
    pub coupling: Option<coupled::CouplingSection>,
    pub bed: Option<coupled::BedSection>,
    pub fibers: Option<fibers::FibersSection>,
    pub rods: Option<rods::RodsSection>,
}

impl SceneFile {
    /// The top-level tables present, in file-format order.
    fn tables(&self) -> Vec<&'static str> {
        [
            ("simulation", self.simulation.is_some()),
            ("domain", self.domain.is_some()),
            ("material", self.materials.is_some()),
            ("contact", self.contact.is_some()),
            ("wall", self.walls.is_some()),
            ("particles", self.groups.is_some()),
            ("output", self.output.is_some()),
            ("fluid", self.fluid.is_some()),
            ("coupling", self.coupling.is_some()),
            ("bed", self.bed.is_some()),
            ("fibers", self.fibers.is_some()),
            ("rods", self.rods.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, present)| present.then_some(name))
        .collect()
    }
}

/// A parsed and checked scene of any kind (one per run: the variants' sizes do not matter).
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Scene {
    Particles(particles::ParticleScene),
    Fluid(fluid::FluidScene),
    Coupled(Box<coupled::CoupledScene>),
    Fibers(fibers::FiberScene),
    Rods(rods::RodScene),
}

/// What a kind of scene provides to the run and check paths.
pub trait SceneKind {
    type Model: Model;

    /// The output schedule of the run.
    fn settings(&self) -> RunSettings;

    /// Sets up the model at its initial state.
    fn build(&self) -> Result<Self::Model, SceneError>;

    /// Sets up this rank's part of the model for a run on the ranks of `comm` (every rank calls it,
    /// as `mpirun -np N silt run` does): [`SceneKind::build`] on one rank; the kinds that cannot be
    /// split among ranks yet refuse more.
    fn build_on(&self, comm: &Comm) -> Result<Self::Model, SceneError> {
        if comm.size() > 1 {
            // Refused before building: a large model is not built only to be refused.
            return Err(SceneError {
                file: PathBuf::new(),
                key: String::new(),
                message: format!(
                    "this scene cannot run on {} ranks yet (distributed runs: fluid, particle, fiber \
                     and coupled scenes); run it on one rank, without mpirun",
                    comm.size()
                ),
            });
        }
        self.build()
    }

    /// The `silt check` report: derived quantities, limits, memory, warnings. It builds only what is
    /// quick to build (under a second for any scene accepted) and estimates the rest.
    fn check(&self) -> Result<String, SceneError>;

    /// One line saying what runs, for the start of a run.
    fn describe(&self, model: &Self::Model) -> String;
}

/// Reads a scene file: at most [`MAX_SCENE_BYTES`], UTF-8.
pub fn read_scene(path: &Path) -> Result<String, SceneError> {
    let keys = Keys::new(path);
    let cannot = |e: std::io::Error| keys.error("", format!("cannot read the scene file: {e}"));
    let file = std::fs::File::open(path).map_err(cannot)?;
    let mut bytes = Vec::new();
    file.take(MAX_SCENE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_SCENE_BYTES {
        return Err(keys.error(
            "",
            format!(
                "the file is larger than {} MiB; a scene file is a TOML text of a few kilobytes",
                MAX_SCENE_BYTES >> 20
            ),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        keys.error(
            "",
            format!(
                "the file is not UTF-8 text (invalid byte at offset {}); a scene file is TOML",
                e.utf8_error().valid_up_to()
            ),
        )
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
        let keys = Keys::new(source);
        let file: SceneFile = serde_path_to_error::deserialize(toml::Deserializer::new(text))
            .map_err(|e| keys::parse_error(text, source, e))?;
        let tables = file.tables();
        // A scene of one table ([fibers], [rods]) has nothing beside it.
        for (own, kind) in [("fibers", "a fiber"), ("rods", "a rod")] {
            if tables.contains(&own) {
                if let Some(other) = tables.iter().find(|&&t| t != own) {
                    return Err(keys.error(
                        *other,
                        format!(
                            "{kind} scene has only the [{own}] table and its sub-tables; [{other}] \
                             belongs to another kind of scene"
                        ),
                    ));
                }
            }
        }
        let particle_tables = tables
            .iter()
            .any(|t| !matches!(*t, "fluid" | "fibers" | "rods"));
        if file.fluid.is_none() {
            for table in ["coupling", "bed"] {
                if tables.contains(&table) {
                    return Err(keys.error(
                        table,
                        format!(
                            "[{table}] belongs to particles in a fluid; add a [fluid] table or \
                             remove it"
                        ),
                    ));
                }
            }
        }
        Ok(if file.fibers.is_some() {
            Scene::Fibers(fibers::FiberScene::new(file, keys)?)
        } else if file.rods.is_some() {
            Scene::Rods(rods::RodScene::new(file, keys)?)
        } else if file.fluid.is_some() && !particle_tables {
            Scene::Fluid(fluid::FluidScene::new(file, keys)?)
        } else if file.fluid.is_some() {
            Scene::Coupled(Box::new(coupled::CoupledScene::new(file, keys)?))
        } else if tables.is_empty() {
            return Err(keys.error(
                "",
                "the scene has no tables; a scene is one of: particles ([simulation], [[material]], \
                 [contact], [[particles]]), a fluid ([fluid]), particles in a fluid (both), fibers \
                 ([fibers]) or rods ([rods]); `silt default-scene` prints an example",
            ));
        } else {
            Scene::Particles(particles::ParticleScene::new(file, keys)?)
        })
    }
}

/// Parses `text` as a scene of one kind (`kind`, e.g. "fiber"): that kind's scene, or an error saying
/// which kind it is.
fn parse_kind<T>(
    text: &str,
    source: &Path,
    kind: &str,
    pick: impl FnOnce(Scene) -> Option<T>,
) -> Result<T, SceneError> {
    let scene = Scene::parse(text, source)?;
    let found = scene.kind();
    pick(scene).ok_or_else(|| {
        Keys::new(source).error("", format!("this is a {found} scene, not a {kind} scene"))
    })
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

/// Builds the scene's model and starts its run in `out_dir`, or resumes the run there from its
/// checkpoint.
pub fn simulation<K: SceneKind>(
    kind: &K,
    text: &str,
    out_dir: &Path,
    resume: bool,
) -> Result<Simulation<K::Model>, RunError> {
    simulation_on(kind, text, out_dir, resume, &SingleRank::comm())
}

/// [`simulation`] on the ranks of `comm` (every rank calls it): each rank builds its part of the
/// model ([`SceneKind::build_on`]) and the run writes one output folder (see [`Simulation::start_on`]).
pub fn simulation_on<K: SceneKind>(
    kind: &K,
    text: &str,
    out_dir: &Path,
    resume: bool,
    comm: &Comm,
) -> Result<Simulation<K::Model>, RunError> {
    let model = kind.build_on(comm).map_err(RunError::Scene)?;
    let (settings, print) = (kind.settings(), fingerprint(text));
    if resume {
        Simulation::resume_on(model, settings, text, print, out_dir, comm.clone())
    } else {
        Simulation::start_on(model, settings, text, print, out_dir, comm.clone())
    }
}
