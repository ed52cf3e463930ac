//! Scene files (TOML). [`Scene::load`] parses and checks a file; [`Scene::build`] turns it into a
//! [`DemSystem`]. Every mistake is reported as one [`SceneError`] naming the file, the key, what was
//! wrong and what is allowed. The format is documented key by key in `docs/scene-format.md`.

use crate::placement::{lattice_positions, random_positions, DiameterDistribution};
use glam::DVec3 as Vec3;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use silt_dem::contact::hertz::HertzCoefficients;
use silt_dem::contact::lubrication::Lubrication;
use silt_dem::contact::{ContactModel, EnduringContact, NormalLaw, TangentialLaw};
use silt_dem::domain::Domain;
use silt_dem::integrator::Integrator;
use silt_dem::material::Material;
use silt_dem::particles::Particles;
use silt_dem::system::DemSystem;
use silt_dem::wall::Wall;
use std::path::{Path, PathBuf};

/// A scene that could not be read or is not physical.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneError {
    pub file: PathBuf,
    /// Dotted path of the offending key, e.g. `particles[0].diameter.std`.
    pub key: String,
    pub message: String,
}

impl std::fmt::Display for SceneError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(
                f,
                "{}: key `{}`: {}",
                self.file.display(),
                self.key,
                self.message
            )
        }
    }
}

impl std::error::Error for SceneError {}

/// The file of a scene being checked, for messages: one [`SceneError`] per mistake (shared by the particle
/// and fluid scene parsers).
pub(crate) struct KeyChecker<'a> {
    source: &'a Path,
}

impl<'a> KeyChecker<'a> {
    pub(crate) fn new(source: &'a Path) -> Self {
        KeyChecker { source }
    }

    pub(crate) fn error(&self, key: impl Into<String>, message: impl Into<String>) -> SceneError {
        SceneError {
            file: self.source.to_path_buf(),
            key: key.into(),
            message: message.into(),
        }
    }

    /// Checks a value against a condition, with the allowed range in the message.
    pub(crate) fn require(
        &self,
        ok: bool,
        key: &str,
        value: impl std::fmt::Display,
        allowed: &str,
    ) -> Result<(), SceneError> {
        if ok {
            Ok(())
        } else {
            Err(self.error(key, format!("{value} is not allowed; {allowed}")))
        }
    }
}

/// The text of a scene file, or a [`SceneError`] saying why it cannot be read.
pub(crate) fn read_scene_file(path: &Path) -> Result<String, SceneError> {
    std::fs::read_to_string(path).map_err(|e| SceneError {
        file: path.to_path_buf(),
        key: String::new(),
        message: format!("cannot read the scene file: {e}"),
    })
}

/// A TOML or type error as a [`SceneError`]: the key path, and the line and column when known.
pub(crate) fn parse_error(
    text: &str,
    source: &Path,
    e: serde_path_to_error::Error<toml::de::Error>,
) -> SceneError {
    let key = e.path().to_string();
    let inner = e.into_inner();
    let mut message = inner.message().trim().replace('\n', "; ");
    if let Some(span) = inner.span() {
        let before = &text[..span.start.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        message = format!("line {line}, column {column}: {message}");
    }
    SceneError {
        file: source.to_path_buf(),
        key: if key == "." { String::new() } else { key },
        message,
    }
}

/// The whole scene file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scene {
    pub simulation: SimulationSection,
    /// Required in a particle scene; a coupled scene may leave it out (the fluid grid's box).
    pub domain: Option<DomainSection>,
    #[serde(rename = "material")]
    pub materials: Vec<MaterialSection>,
    pub contact: ContactSection,
    #[serde(default, rename = "wall")]
    pub walls: Vec<WallSection>,
    #[serde(rename = "particles")]
    pub groups: Vec<ParticleGroup>,
    #[serde(default)]
    pub output: OutputSection,
    /// The fluid of a coupled scene (see `crate::coupled_scene`); `None` in a particle scene.
    pub fluid: Option<crate::fluid_scene::FluidSection>,
    /// Coupling settings of a coupled scene.
    pub coupling: Option<crate::coupled_scene::CouplingSection>,
    /// Where the scene came from (for messages); not a key of the file.
    #[serde(skip)]
    pub source: PathBuf,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationSection {
    /// Time step dt (the fluid step in coupled runs).
    pub dt: f64,
    pub end_time: f64,
    #[serde(default)]
    pub gravity: [f64; 3],
    #[serde(default = "default_integrator")]
    pub integrator: String,
    /// Sub-steps per RK stage for the predictor–corrector.
    #[serde(default = "default_substeps")]
    pub substeps: [u32; 3],
    /// Seed of the random placement.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Neighbour-list skin as a fraction of the largest diameter.
    #[serde(default = "default_skin")]
    pub neighbor_skin: f64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DomainSection {
    pub min: [f64; 3],
    pub max: [f64; 3],
    #[serde(default)]
    pub periodic: [bool; 3],
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialSection {
    pub name: String,
    pub density: f64,
    pub e_dry: f64,
    #[serde(default = "default_poisson")]
    pub poisson: f64,
    pub mu_s: f64,
    pub mu_k: f64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactSection {
    #[serde(default = "default_normal")]
    pub normal: String,
    #[serde(default = "default_tangential")]
    pub tangential: String,
    /// Contact duration T_c in time steps (adaptive and linear laws).
    #[serde(default = "default_collision_steps")]
    pub collision_steps: f64,
    /// u_in,crit of enduring contacts in dry runs.
    pub min_impact_velocity: Option<f64>,
    #[serde(default = "default_st_crit")]
    pub st_crit: f64,
    /// Overlap bound eps of enduring contacts (fraction of the radius).
    #[serde(default = "default_overlap_bound")]
    pub overlap_bound: f64,
    pub hertz: Option<HertzSection>,
    pub lubrication: Option<LubricationSection>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HertzSection {
    pub k_n: f64,
    pub k_t: Option<f64>,
    pub gamma_n: f64,
    pub gamma_t: Option<f64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LubricationSection {
    pub fluid_density: f64,
    pub kinematic_viscosity: f64,
    /// Largest gap with lubrication (2h on a fluid grid).
    pub range: f64,
    /// zeta_min as a fraction of the smaller radius.
    #[serde(default = "default_roughness")]
    pub roughness: f64,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WallSection {
    pub point: [f64; 3],
    pub normal: [f64; 3],
    pub material: String,
    #[serde(default)]
    pub velocity: [f64; 3],
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParticleGroup {
    pub material: String,
    #[serde(default)]
    pub fixed: bool,
    /// Time at which fixed spheres become free (prescribed motion with `velocity` until then).
    pub release_time: Option<f64>,
    #[serde(default)]
    pub velocity: [f64; 3],
    /// Explicit centres; with `diameters` (one each) or `diameter`.
    pub positions: Option<Vec<[f64; 3]>>,
    pub diameters: Option<Vec<f64>>,
    /// Number of spheres to place (with `placement`, `region`, `diameter`).
    pub count: Option<usize>,
    pub placement: Option<String>,
    pub region: Option<RegionSection>,
    pub lattice_spacing: Option<f64>,
    pub diameter: Option<DiameterSection>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionSection {
    pub min: [f64; 3],
    pub max: [f64; 3],
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiameterSection {
    pub distribution: String,
    pub value: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
    pub std: Option<f64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSection {
    /// Simulated time between outputs (VTK frame, diagnostics row, trajectory rows).
    pub interval: Option<f64>,
    /// Simulated time between checkpoints (defaults to ten output intervals).
    pub checkpoint_interval: Option<f64>,
    /// Particle indices whose trajectories are written as CSV.
    #[serde(default)]
    pub track: Vec<usize>,
    #[serde(default = "default_true")]
    pub vtk: bool,
}

impl Default for OutputSection {
    fn default() -> Self {
        OutputSection {
            interval: None,
            checkpoint_interval: None,
            track: vec![],
            vtk: true,
        }
    }
}

fn default_integrator() -> String {
    "seed".into()
}
fn default_substeps() -> [u32; 3] {
    [8, 2, 5]
}
fn default_seed() -> u64 {
    1
}
fn default_skin() -> f64 {
    0.1
}
fn default_poisson() -> f64 {
    0.22
}
fn default_normal() -> String {
    "actm".into()
}
fn default_tangential() -> String {
    "spring-history".into()
}
fn default_collision_steps() -> f64 {
    10.0
}
fn default_st_crit() -> f64 {
    5.0
}
fn default_overlap_bound() -> f64 {
    1e-3
}
fn default_roughness() -> f64 {
    3e-3
}
fn default_true() -> bool {
    true
}

/// Allowed names, for messages.
pub const INTEGRATORS: &str = "\"seed\" (RK3 predictor-corrector with sub-steps), \"velocity-verlet\", \"euler-crank-nicolson\"";
pub const NORMAL_LAWS: &str = "\"actm\", \"linear\", \"hertz\"";
pub const TANGENTIAL_LAWS: &str = "\"spring-history\", \"shear-history\", \"frictionless\"";

/// A particle group after placement.
struct PlacedGroup {
    position: Vec<Vec3>,
    diameter: Vec<f64>,
}

impl Scene {
    /// Reads, parses and checks a scene file.
    pub fn load(path: &Path) -> Result<Scene, SceneError> {
        Scene::parse(&read_scene_file(path)?, path)
    }

    /// Parses and checks scene text; `source` names it in messages.
    pub fn parse(text: &str, source: &Path) -> Result<Scene, SceneError> {
        let scene = Scene::deserialize_text(text, source)?;
        if scene.fluid.is_some() || scene.coupling.is_some() {
            return Err(scene.error(
                if scene.fluid.is_some() { "fluid" } else { "coupling" },
                "a scene with a [fluid] table and particle tables is a coupled scene; read it with \
                 `CoupledScene::parse` (`silt run` and `silt check` tell the kinds apart)",
            ));
        }
        scene.check()?;
        Ok(scene)
    }

    /// The scene text as written, not checked.
    pub(crate) fn deserialize_text(text: &str, source: &Path) -> Result<Scene, SceneError> {
        let deserializer = toml::Deserializer::new(text);
        let mut scene: Scene = serde_path_to_error::deserialize(deserializer)
            .map_err(|e| parse_error(text, source, e))?;
        scene.source = source.to_path_buf();
        Ok(scene)
    }

    /// The `[domain]` table (always present once the scene is checked).
    fn domain_section(&self) -> Result<&DomainSection, SceneError> {
        self.domain.as_ref().ok_or_else(|| {
            self.error(
                "domain",
                "missing: the [domain] table (min, max, periodic) is required",
            )
        })
    }

    pub(crate) fn error(&self, key: impl Into<String>, message: impl Into<String>) -> SceneError {
        KeyChecker::new(&self.source).error(key, message)
    }

    /// Checks a value against a condition, with the allowed range in the message.
    pub(crate) fn require(
        &self,
        ok: bool,
        key: &str,
        value: impl std::fmt::Display,
        allowed: &str,
    ) -> Result<(), SceneError> {
        KeyChecker::new(&self.source).require(ok, key, value, allowed)
    }

    pub(crate) fn check(&self) -> Result<(), SceneError> {
        self.check_simulation()?;
        let d = self.domain_section()?;
        for a in 0..3 {
            self.require(
                d.min[a].is_finite() && d.max[a].is_finite() && d.max[a] > d.min[a],
                "domain.max",
                format!("{:?}", d.max),
                "each component must be finite and larger than domain.min",
            )?;
        }
        self.check_materials_and_contact()
    }

    /// The `[simulation]` table.
    pub(crate) fn check_simulation(&self) -> Result<(), SceneError> {
        let s = &self.simulation;
        self.require(
            s.dt.is_finite() && s.dt > 0.0,
            "simulation.dt",
            s.dt,
            "the time step must be > 0",
        )?;
        self.require(
            s.end_time.is_finite() && s.end_time > 0.0,
            "simulation.end_time",
            s.end_time,
            "must be > 0",
        )?;
        self.require(
            s.gravity.iter().all(|g| g.is_finite()),
            "simulation.gravity",
            format!("{:?}", s.gravity),
            "components must be finite",
        )?;
        self.integrator()?;
        self.require(
            s.substeps.iter().all(|&n| (1..=1000).contains(&n)),
            "simulation.substeps",
            format!("{:?}", s.substeps),
            "each stage needs 1 to 1000 sub-steps (the seed uses [8, 2, 5])",
        )?;
        self.require(
            s.neighbor_skin.is_finite() && s.neighbor_skin > 0.0 && s.neighbor_skin <= 2.0,
            "simulation.neighbor_skin",
            s.neighbor_skin,
            "must be in (0, 2] (fraction of the largest diameter)",
        )?;
        Ok(())
    }

    /// Materials, contact settings, walls, particle groups and output.
    fn check_materials_and_contact(&self) -> Result<(), SceneError> {
        if self.materials.is_empty() {
            return Err(self.error("material", "at least one [[material]] is required"));
        }
        for (i, m) in self.materials.iter().enumerate() {
            let key = |k: &str| format!("material[{i}].{k}");
            self.require(
                !m.name.is_empty(),
                &key("name"),
                "\"\"",
                "a material needs a name",
            )?;
            if self.materials[..i].iter().any(|o| o.name == m.name) {
                return Err(self.error(
                    key("name"),
                    format!("the name \"{}\" is used twice", m.name),
                ));
            }
            self.require(
                m.density.is_finite() && m.density > 0.0,
                &key("density"),
                m.density,
                "must be > 0",
            )?;
            self.require(
                m.e_dry > 0.0 && m.e_dry <= 1.0,
                &key("e_dry"),
                m.e_dry,
                "the restitution coefficient must lie in (0, 1]",
            )?;
            self.require(
                m.poisson >= 0.0 && m.poisson < 0.5,
                &key("poisson"),
                m.poisson,
                "the Poisson ratio must lie in [0, 0.5)",
            )?;
            self.require(
                m.mu_s.is_finite() && m.mu_s >= 0.0,
                &key("mu_s"),
                m.mu_s,
                "must be >= 0",
            )?;
            self.require(
                m.mu_k.is_finite() && m.mu_k >= 0.0,
                &key("mu_k"),
                m.mu_k,
                "must be >= 0",
            )?;
            self.require(
                m.mu_k <= m.mu_s,
                &key("mu_k"),
                m.mu_k,
                &format!(
                    "the kinetic friction coefficient must not exceed mu_s = {}",
                    m.mu_s
                ),
            )?;
        }

        let c = &self.contact;
        let normal = self.normal_law()?;
        self.tangential_law()?;
        self.require(
            c.collision_steps.is_finite() && c.collision_steps > 0.0,
            "contact.collision_steps",
            c.collision_steps,
            "T_c / dt must be > 0 (the seed uses 10)",
        )?;
        self.require(
            c.overlap_bound.is_finite() && c.overlap_bound > 0.0 && c.overlap_bound < 0.1,
            "contact.overlap_bound",
            c.overlap_bound,
            "must lie in (0, 0.1) (fraction of the radius; 1e-3 is typical)",
        )?;
        self.require(
            c.st_crit.is_finite() && c.st_crit > 0.0,
            "contact.st_crit",
            c.st_crit,
            "must be > 0 (the seed uses 5)",
        )?;
        if let Some(u) = c.min_impact_velocity {
            self.require(
                u.is_finite() && u > 0.0,
                "contact.min_impact_velocity",
                u,
                "must be > 0",
            )?;
        } else if matches!(normal, NormalLaw::Actm) && c.lubrication.is_none() {
            return Err(self.error(
                "contact.min_impact_velocity",
                "is required for dry runs with the \"actm\" law (the impact-speed floor u_in,crit of enduring \
                 contacts; a few percent of sqrt(g D) is typical)",
            ));
        }
        if let Some(l) = &c.lubrication {
            self.require(
                l.fluid_density > 0.0 && l.fluid_density.is_finite(),
                "contact.lubrication.fluid_density",
                l.fluid_density,
                "must be > 0",
            )?;
            self.require(
                l.kinematic_viscosity > 0.0 && l.kinematic_viscosity.is_finite(),
                "contact.lubrication.kinematic_viscosity",
                l.kinematic_viscosity,
                "must be > 0",
            )?;
            self.require(
                l.range > 0.0 && l.range.is_finite(),
                "contact.lubrication.range",
                l.range,
                "must be > 0 (2h on a fluid grid)",
            )?;
            self.require(
                l.roughness > 0.0 && l.roughness < 1.0,
                "contact.lubrication.roughness",
                l.roughness,
                "must lie in (0, 1) (3e-3 in the seed)",
            )?;
        }
        if let Some(h) = &c.hertz {
            self.require(
                h.k_n > 0.0 && h.k_n.is_finite(),
                "contact.hertz.k_n",
                h.k_n,
                "must be > 0",
            )?;
            self.require(
                h.gamma_n >= 0.0 && h.gamma_n.is_finite(),
                "contact.hertz.gamma_n",
                h.gamma_n,
                "must be >= 0",
            )?;
            if let Some(k) = h.k_t {
                self.require(
                    k > 0.0 && k.is_finite(),
                    "contact.hertz.k_t",
                    k,
                    "must be > 0",
                )?;
            }
            if let Some(g) = h.gamma_t {
                self.require(
                    g >= 0.0 && g.is_finite(),
                    "contact.hertz.gamma_t",
                    g,
                    "must be >= 0",
                )?;
            }
        }

        for (i, w) in self.walls.iter().enumerate() {
            self.material_index(&w.material, &format!("wall[{i}].material"))?;
            let n = Vec3::from(w.normal);
            self.require(
                n.is_finite() && n.length() > 0.0,
                &format!("wall[{i}].normal"),
                format!("{:?}", w.normal),
                "must be a non-zero vector",
            )?;
            self.require(
                Vec3::from(w.point).is_finite(),
                &format!("wall[{i}].point"),
                format!("{:?}", w.point),
                "must be finite",
            )?;
        }

        if self.groups.is_empty() {
            return Err(self.error("particles", "at least one [[particles]] group is required"));
        }
        for (i, g) in self.groups.iter().enumerate() {
            self.check_group(i, g)?;
        }
        if let Some(t) = self.output.interval {
            self.require(
                t.is_finite() && t > 0.0,
                "output.interval",
                t,
                "must be > 0",
            )?;
        }
        if let Some(t) = self.output.checkpoint_interval {
            self.require(
                t.is_finite() && t > 0.0,
                "output.checkpoint_interval",
                t,
                "must be > 0",
            )?;
        }
        Ok(())
    }

    fn check_group(&self, i: usize, g: &ParticleGroup) -> Result<(), SceneError> {
        let key = |k: &str| format!("particles[{i}].{k}");
        self.material_index(&g.material, &key("material"))?;
        if let Some(t) = g.release_time {
            self.require(
                t.is_finite() && t > 0.0,
                &key("release_time"),
                t,
                "must be > 0 (the time at which the group's spheres become free)",
            )?;
            if !g.fixed {
                return Err(self.error(
                    key("release_time"),
                    "applies to fixed spheres only: set `fixed = true` (and their prescribed `velocity`) \
                     so that they move at that velocity until the release time",
                ));
            }
        }
        self.require(
            Vec3::from(g.velocity).is_finite(),
            &key("velocity"),
            format!("{:?}", g.velocity),
            "must be finite",
        )?;
        match (&g.positions, g.count) {
            (Some(_), Some(_)) => {
                return Err(
                    self.error(key("count"), "give either `positions` or `count`, not both")
                );
            }
            (None, None) => {
                return Err(self.error(
                    key("count"),
                    "a group needs `positions` (an explicit list) or `count` (placed spheres)",
                ));
            }
            (Some(positions), None) => {
                if positions.is_empty() {
                    return Err(self.error(key("positions"), "the list is empty"));
                }
                match (&g.diameters, &g.diameter) {
                    (Some(d), None) => {
                        if d.len() != positions.len() {
                            return Err(self.error(
                                key("diameters"),
                                format!(
                                    "{} diameters for {} positions; give one per sphere",
                                    d.len(),
                                    positions.len()
                                ),
                            ));
                        }
                        for (j, &v) in d.iter().enumerate() {
                            self.require(
                                v.is_finite() && v > 0.0,
                                &format!("particles[{i}].diameters[{j}]"),
                                v,
                                "a diameter (twice the radius) must be > 0",
                            )?;
                        }
                    }
                    (None, Some(d)) => {
                        self.diameter_distribution(d, &key("diameter"))?;
                    }
                    _ => {
                        return Err(self.error(
                            key("diameters"),
                            "give either `diameters` (one per position) or `diameter`",
                        ))
                    }
                }
                for (j, p) in positions.iter().enumerate() {
                    self.require(
                        Vec3::from(*p).is_finite(),
                        &format!("particles[{i}].positions[{j}]"),
                        format!("{p:?}"),
                        "must be finite",
                    )?;
                }
                for k in ["placement", "region", "lattice_spacing"] {
                    let present = match k {
                        "placement" => g.placement.is_some(),
                        "region" => g.region.is_some(),
                        _ => g.lattice_spacing.is_some(),
                    };
                    if present {
                        return Err(
                            self.error(key(k), "only applies to groups placed with `count`")
                        );
                    }
                }
            }
            (None, Some(count)) => {
                self.require(count > 0, &key("count"), count, "must be at least 1")?;
                if g.diameters.is_some() {
                    return Err(self.error(
                        key("diameters"),
                        "only applies to explicit `positions`; use `diameter` with `count`",
                    ));
                }
                let d = g
                    .diameter
                    .as_ref()
                    .ok_or_else(|| self.error(key("diameter"), "is required with `count`"))?;
                self.diameter_distribution(d, &key("diameter"))?;
                let placement = g.placement.as_deref().unwrap_or("random");
                if !matches!(placement, "random" | "lattice") {
                    return Err(self.error(
                        key("placement"),
                        format!("\"{placement}\" is unknown; allowed: \"random\", \"lattice\""),
                    ));
                }
                if let Some(r) = &g.region {
                    let (lo, hi) = (Vec3::from(r.min), Vec3::from(r.max));
                    self.require(
                        lo.is_finite() && hi.is_finite() && (0..3).all(|a| hi[a] > lo[a]),
                        &key("region"),
                        format!("{:?} .. {:?}", r.min, r.max),
                        "max must exceed min in every direction",
                    )?;
                    let d = self.domain_section()?;
                    self.require(
                        (0..3).all(|a| lo[a] >= d.min[a] && hi[a] <= d.max[a]),
                        &key("region"),
                        format!("{:?} .. {:?}", r.min, r.max),
                        "the region must lie inside the domain",
                    )?;
                }
                if let Some(s) = g.lattice_spacing {
                    self.require(
                        s.is_finite() && s > 0.0,
                        &key("lattice_spacing"),
                        s,
                        "must be > 0",
                    )?;
                }
            }
        }
        Ok(())
    }

    fn diameter_distribution(
        &self,
        d: &DiameterSection,
        key: &str,
    ) -> Result<DiameterDistribution, SceneError> {
        let need = |v: Option<f64>, name: &str| -> Result<f64, SceneError> {
            let v = v.ok_or_else(|| {
                self.error(
                    format!("{key}.{name}"),
                    format!("is required for the \"{}\" distribution", d.distribution),
                )
            })?;
            if !v.is_finite() {
                return Err(self.error(format!("{key}.{name}"), format!("{v} is not finite")));
            }
            Ok(v)
        };
        let unused = |names: &[(&str, Option<f64>)]| -> Result<(), SceneError> {
            for (name, v) in names {
                if v.is_some() {
                    return Err(self.error(
                        format!("{key}.{name}"),
                        format!("does not apply to the \"{}\" distribution", d.distribution),
                    ));
                }
            }
            Ok(())
        };
        let positive = |v: f64, name: &str| {
            self.require(
                v > 0.0,
                &format!("{key}.{name}"),
                v,
                "a diameter (twice the radius) must be > 0",
            )
        };
        match d.distribution.as_str() {
            "fixed" => {
                unused(&[
                    ("min", d.min),
                    ("max", d.max),
                    ("mean", d.mean),
                    ("std", d.std),
                ])?;
                let v = need(d.value, "value")?;
                positive(v, "value")?;
                Ok(DiameterDistribution::Fixed(v))
            }
            "uniform" => {
                unused(&[("value", d.value), ("mean", d.mean), ("std", d.std)])?;
                let (min, max) = (need(d.min, "min")?, need(d.max, "max")?);
                positive(min, "min")?;
                self.require(
                    max >= min,
                    &format!("{key}.max"),
                    max,
                    &format!("must be >= min = {min}"),
                )?;
                Ok(DiameterDistribution::Uniform { min, max })
            }
            "gaussian" => {
                unused(&[("value", d.value), ("min", d.min), ("max", d.max)])?;
                let (mean, std) = (need(d.mean, "mean")?, need(d.std, "std")?);
                positive(mean, "mean")?;
                self.require(
                    std >= 0.0 && std <= 0.3 * mean,
                    &format!("{key}.std"),
                    std,
                    "must lie in [0, 0.3 mean] (the distribution is truncated at 3 std)",
                )?;
                Ok(DiameterDistribution::Gaussian { mean, std })
            }
            other => Err(self.error(
                format!("{key}.distribution"),
                format!("\"{other}\" is unknown; allowed: \"fixed\", \"uniform\", \"gaussian\""),
            )),
        }
    }

    pub(crate) fn material_index(&self, name: &str, key: &str) -> Result<usize, SceneError> {
        self.materials
            .iter()
            .position(|m| m.name == name)
            .ok_or_else(|| {
                let names: Vec<String> = self
                    .materials
                    .iter()
                    .map(|m| format!("\"{}\"", m.name))
                    .collect();
                self.error(
                    key,
                    format!(
                        "no material is named \"{name}\"; defined: {}",
                        names.join(", ")
                    ),
                )
            })
    }

    /// The particle integrator named in the scene.
    pub fn integrator(&self) -> Result<Integrator, SceneError> {
        let substeps = self.simulation.substeps;
        match self.simulation.integrator.as_str() {
            "seed" | "predictor-corrector" => Ok(Integrator::PredictorCorrector { substeps }),
            "velocity-verlet" => Ok(Integrator::VelocityVerlet),
            "euler-crank-nicolson" => Ok(Integrator::EulerCrankNicolson { substeps }),
            other => Err(self.error(
                "simulation.integrator",
                format!("\"{other}\" is unknown; allowed: {INTEGRATORS}"),
            )),
        }
    }

    /// The normal contact law named in the scene.
    pub fn normal_law(&self) -> Result<NormalLaw, SceneError> {
        let c = &self.contact;
        match c.normal.as_str() {
            "actm" => Ok(NormalLaw::Actm),
            "linear" => Ok(NormalLaw::Linear),
            "hertz" => {
                let h = c.hertz.as_ref().ok_or_else(|| {
                    self.error(
                        "contact.hertz",
                        "the \"hertz\" law needs a [contact.hertz] table with k_n and gamma_n",
                    )
                })?;
                Ok(NormalLaw::Hertz(HertzCoefficients {
                    k_n: h.k_n,
                    k_t: h.k_t.unwrap_or(2.0 / 7.0 * h.k_n),
                    gamma_n: h.gamma_n,
                    gamma_t: h.gamma_t.unwrap_or(0.5 * h.gamma_n),
                }))
            }
            other => Err(self.error(
                "contact.normal",
                format!("\"{other}\" is unknown; allowed: {NORMAL_LAWS}"),
            )),
        }
    }

    /// The tangential contact law named in the scene.
    pub fn tangential_law(&self) -> Result<TangentialLaw, SceneError> {
        match self.contact.tangential.as_str() {
            "spring-history" => Ok(TangentialLaw::SpringHistory),
            "shear-history" => Ok(TangentialLaw::ShearHistory),
            "frictionless" => Ok(TangentialLaw::Frictionless),
            other => Err(self.error(
                "contact.tangential",
                format!("\"{other}\" is unknown; allowed: {TANGENTIAL_LAWS}"),
            )),
        }
    }

    /// Contact duration T_c = collision_steps dt.
    pub fn collision_time(&self) -> f64 {
        self.contact.collision_steps * self.simulation.dt
    }

    pub fn gravity(&self) -> Vec3 {
        Vec3::from(self.simulation.gravity)
    }

    /// The domain (the scene must be checked: [`Scene::parse`] or `CoupledScene::parse`).
    pub fn domain(&self) -> Domain {
        let d = self.domain.as_ref().expect("a checked scene has a domain");
        Domain {
            min: d.min.into(),
            max: d.max.into(),
            periodic: d.periodic,
        }
    }

    /// The groups with a `release_time`, as particle index ranges in build order.
    pub fn releases(&self) -> Vec<silt_dem::system::Release> {
        let mut first = 0;
        let mut releases = Vec::new();
        for g in &self.groups {
            let count = g
                .positions
                .as_ref()
                .map_or(g.count.unwrap_or(0), |p| p.len());
            if let Some(time) = g.release_time {
                releases.push(silt_dem::system::Release {
                    time,
                    particles: first..first + count,
                });
            }
            first += count;
        }
        releases
    }

    fn walls(&self) -> Result<Vec<Wall>, SceneError> {
        self.walls
            .iter()
            .enumerate()
            .map(|(i, w)| {
                Ok(Wall {
                    point: w.point.into(),
                    normal: Vec3::from(w.normal).normalize(),
                    material: self.material_index(&w.material, &format!("wall[{i}].material"))?,
                    velocity: w.velocity.into(),
                })
            })
            .collect()
    }

    fn materials(&self) -> Vec<Material> {
        self.materials
            .iter()
            .map(|m| Material {
                name: m.name.clone(),
                density: m.density,
                e_dry: m.e_dry,
                poisson: m.poisson,
                mu_s: m.mu_s,
                mu_k: m.mu_k,
            })
            .collect()
    }

    fn contact_model(&self, materials: &[Material]) -> Result<ContactModel, SceneError> {
        let c = &self.contact;
        let lubrication = c.lubrication.as_ref().map(|l| Lubrication {
            fluid_density: l.fluid_density,
            kinematic_viscosity: l.kinematic_viscosity,
            range: l.range,
            roughness_ratio: l.roughness,
        });
        let enduring = match (c.min_impact_velocity, &lubrication) {
            (Some(u), _) => EnduringContact::MinimumSpeed(u),
            (None, Some(l)) => EnduringContact::Stokes {
                st_crit: c.st_crit,
                fluid_density: l.fluid_density,
                kinematic_viscosity: l.kinematic_viscosity,
            },
            (None, None) => EnduringContact::MinimumSpeed(0.0),
        };
        Ok(ContactModel::new(
            self.normal_law()?,
            self.tangential_law()?,
            materials,
            self.collision_time(),
            enduring,
            c.overlap_bound,
            self.gravity().length(),
            lubrication,
        ))
    }

    /// Places every group (explicit lists, random placement, lattices) in file order.
    fn place_groups(&self) -> Result<Vec<PlacedGroup>, SceneError> {
        let domain = self.domain();
        let mut rng = ChaCha8Rng::seed_from_u64(self.simulation.seed);
        let mut placed: Vec<PlacedGroup> = Vec::new();
        for (i, g) in self.groups.iter().enumerate() {
            let key = |k: &str| format!("particles[{i}].{k}");
            if let Some(positions) = &g.positions {
                let diameter = match (&g.diameters, &g.diameter) {
                    (Some(d), _) => d.clone(),
                    (None, Some(d)) => {
                        let dist = self.diameter_distribution(d, &key("diameter"))?;
                        positions.iter().map(|_| dist.sample(&mut rng)).collect()
                    }
                    _ => unreachable!("checked"),
                };
                placed.push(PlacedGroup {
                    position: positions.iter().map(|&p| p.into()).collect(),
                    diameter,
                });
                continue;
            }
            let count = g.count.expect("checked");
            let dist = self
                .diameter_distribution(g.diameter.as_ref().expect("checked"), &key("diameter"))?;
            let region = g
                .region
                .as_ref()
                .map(|r| (Vec3::from(r.min), Vec3::from(r.max)))
                .unwrap_or((domain.min, domain.max));
            let mut diameter: Vec<f64> = (0..count).map(|_| dist.sample(&mut rng)).collect();
            let position = match g.placement.as_deref().unwrap_or("random") {
                "lattice" => {
                    let spacing = g.lattice_spacing.unwrap_or(1.05 * dist.max());
                    let sites = lattice_positions(region, spacing, count);
                    if sites.len() < count {
                        return Err(self.error(
                            key("count"),
                            format!("the region holds only {} lattice sites of spacing {spacing:e}; reduce the count or enlarge the region", sites.len()),
                        ));
                    }
                    if spacing < dist.max() {
                        return Err(self.error(
                            key("lattice_spacing"),
                            format!(
                                "{spacing:e} is smaller than the largest diameter {:e}",
                                dist.max()
                            ),
                        ));
                    }
                    sites
                }
                _ => {
                    // Larger spheres first: random sequential addition packs better that way.
                    diameter.sort_by(|a, b| b.total_cmp(a));
                    let existing: Vec<(Vec3, f64)> = placed
                        .iter()
                        .flat_map(|p| {
                            p.position
                                .iter()
                                .copied()
                                .zip(p.diameter.iter().map(|d| 0.5 * d))
                        })
                        .collect();
                    let radii: Vec<f64> = diameter.iter().map(|d| 0.5 * d).collect();
                    random_positions(&domain, region, &radii, &existing, &mut rng)
                        .map_err(|e| self.error(key("count"), e.to_string()))?
                }
            };
            placed.push(PlacedGroup { position, diameter });
        }
        Ok(placed)
    }

    /// Builds the system: places the particles and checks the initial state (no overlaps, everything
    /// inside the domain, the time step resolves the contacts).
    pub fn build(&self) -> Result<DemSystem, SceneError> {
        let materials = self.materials();
        let model = self.contact_model(&materials)?;
        let domain = self.domain();
        let walls = self.walls()?;
        let groups = self.place_groups()?;

        let mut particles = Particles::default();
        let mut origin = Vec::new();
        for (i, (group, placed)) in self.groups.iter().zip(&groups).enumerate() {
            let material =
                self.material_index(&group.material, &format!("particles[{i}].material"))?;
            for (j, (&x, &d)) in placed.position.iter().zip(&placed.diameter).enumerate() {
                if !domain.contains(x) {
                    return Err(self.error(
                        format!("particles[{i}].positions[{j}]"),
                        format!(
                            "the centre {x} lies outside the domain {} .. {}",
                            domain.min, domain.max
                        ),
                    ));
                }
                particles.push(
                    domain.wrap(x),
                    group.velocity.into(),
                    0.5 * d,
                    materials[material].density,
                    material,
                    group.fixed,
                );
                origin.push((i, j));
            }
        }
        self.check_initial_overlaps(&domain, &walls, &particles, &origin)?;

        let max_diameter = 2.0 * particles.max_radius();
        let skin = self.simulation.neighbor_skin * max_diameter;
        let reach = max_diameter + model.interaction_range() + skin;
        for a in 0..3 {
            if domain.periodic[a] && domain.length()[a] < 2.0 * reach {
                return Err(self.error(
                    "domain.max",
                    format!(
                        "the periodic length along axis {a} is {:e}, shorter than twice the interaction reach {:e} \
                         (largest diameter + lubrication range + neighbour skin); enlarge the domain",
                        domain.length()[a],
                        2.0 * reach
                    ),
                ));
            }
        }
        if let Some(&id) = self.output.track.iter().find(|&&id| id >= particles.len()) {
            return Err(self.error(
                "output.track",
                format!(
                    "particle {id} does not exist; the scene has {} particles (0 .. {})",
                    particles.len(),
                    particles.len() - 1
                ),
            ));
        }
        let integrator = self.integrator()?;
        let mut system = DemSystem::new(
            domain,
            self.gravity(),
            materials,
            model,
            particles,
            walls,
            integrator,
            self.simulation.dt,
            skin,
        );
        system.releases = self.releases();
        self.check_time_step(&system)?;
        Ok(system)
    }

    fn check_initial_overlaps(
        &self,
        domain: &Domain,
        walls: &[Wall],
        p: &Particles,
        origin: &[(usize, usize)],
    ) -> Result<(), SceneError> {
        let describe = |k: usize| format!("particles[{}] sphere {}", origin[k].0, origin[k].1);
        for (w, wall) in walls.iter().enumerate() {
            for k in 0..p.len() {
                let gap = wall.distance(p.position[k]) - p.radius[k];
                if gap < 0.0 {
                    return Err(self.error(
                        format!("particles[{}]", origin[k].0),
                        format!("{} (particle {k}) overlaps wall[{w}] by {:e}; initial overlaps are not allowed", describe(k), -gap),
                    ));
                }
            }
        }
        let mut list = silt_dem::neighbor::NeighborList::new(1e-12 * (1.0 + p.max_radius()));
        list.rebuild(domain, &p.position, &p.radius, 0.0);
        for pair in 0..list.pair_count() {
            let (i, j) = (list.first[pair] as usize, list.second[pair] as usize);
            let gap = domain.separation(p.position[i], p.position[j]).length()
                - p.radius[i]
                - p.radius[j];
            if gap < 0.0 {
                return Err(self.error(
                    format!("particles[{}]", origin[j].0),
                    format!("{} (particle {i}) and {} (particle {j}) overlap by {:e}; initial overlaps are not allowed", describe(i), describe(j), -gap),
                ));
            }
        }
        Ok(())
    }

    /// Refuses a time step that cannot resolve a contact with at least 5 (sub)steps.
    fn check_time_step(&self, system: &DemSystem) -> Result<(), SceneError> {
        let estimate = crate::derived::contact_time_estimate(self, system);
        let resolution = estimate.contact_time
            / (self.simulation.dt * system.integrator.smallest_substep_fraction());
        if resolution < 5.0 {
            return Err(self.error(
                "simulation.dt",
                format!(
                    "{:e} is too large: the contact time {:e} ({}) is resolved with only {resolution:.1} (sub)steps; \
                     at least 5 are needed (20 or more recommended)",
                    self.simulation.dt, estimate.contact_time, estimate.how
                ),
            ));
        }
        Ok(())
    }
}
