//! Particle scenes: spheres and walls with the collision model of Biegert, Vowinckel & Meiburg (2017)
//! (`silt_dem`): `[simulation]`, `[domain]`, `[[material]]`, `[contact]`, `[[wall]]`, `[[particles]]`
//! and `[output]`. The format is documented key by key in `docs/scene-format.md`; the same tables are
//! the particle half of a coupled scene (`super::coupled`).

use super::keys::{mib, num, Keys, Range, SceneError};
use super::output::{fits_in_memory, fixed_steps, OutputSection};
use super::{SceneFile, SceneKind};
use crate::placement::{
    hexagonal_layer, hexagonal_sites, lattice_positions, random_positions, DiameterDistribution,
};
use crate::run::RunSettings;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use silt_core::Vec3;
use silt_dem::contact::hertz::HertzCoefficients;
use silt_dem::contact::lubrication::Lubrication;
use silt_dem::contact::{
    ContactModel, ContactState, EnduringContact, NormalLaw, TangentialLaw, DEFAULT_COLLISION_STEPS,
    DEFAULT_OVERLAP_BOUND, DEFAULT_ROUGHNESS, DEFAULT_ST_CRIT,
};
use silt_dem::domain::Domain;
use silt_dem::estimates::{contact_time, expected_overlap, impact_speed};
use silt_dem::integrator::Integrator;
use silt_dem::material::{Material, DEFAULT_POISSON};
use silt_dem::model::DemModel;
use silt_dem::neighbor::DEFAULT_SKIN_FRACTION;
use silt_dem::particles::Particles;
use silt_dem::system::{DemSystem, PrescribedVelocity, Release};
use silt_dem::wall::Wall;
use silt_fluid::Signal;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Estimated bytes per particle: its arrays, about eight neighbour pairs with their contact memory,
/// and the integrator's scratch.
const BYTES_PER_PARTICLE: f64 = 2048.0;
/// `silt check` places the particles (and checks overlaps, the domain and the time step on them) up to
/// this many; beyond it the placement is left to the run, which does the same checks.
const CHECK_PLACEMENT_LIMIT: usize = 200_000;
/// An expected overlap above this fraction of the radius means spheres pass through each other or a
/// wall: the scene is refused.
pub const LARGEST_OVERLAP: f64 = 0.5;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationSection {
    /// Time step dt (the fluid step in coupled runs).
    pub dt: f64,
    pub end_time: f64,
    #[serde(default)]
    pub gravity: [f64; 3],
    pub integrator: Option<String>,
    /// Sub-steps per RK stage for the predictor–corrector (default the seed's [8, 2, 5]).
    pub substeps: Option<Vec<u32>>,
    /// Seed of the random placement and velocities.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Neighbour-list skin as a fraction of the largest diameter.
    pub neighbor_skin: Option<f64>,
}

fn default_seed() -> u64 {
    1
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
    pub poisson: Option<f64>,
    pub mu_s: f64,
    pub mu_k: f64,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactSection {
    pub normal: Option<String>,
    pub tangential: Option<String>,
    /// Contact duration T_c in time steps (adaptive and linear laws).
    pub collision_steps: Option<f64>,
    /// u_in,crit of enduring contacts in dry runs.
    pub min_impact_velocity: Option<f64>,
    pub st_crit: Option<f64>,
    /// Overlap bound eps of enduring contacts (fraction of the radius).
    pub overlap_bound: Option<f64>,
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
    pub roughness: Option<f64>,
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
    /// Three numbers; for fixed spheres each may be a signal of time (`fluid::signal`).
    pub velocity: Option<[toml::Value; 3]>,
    /// Random velocities of this temperature k T added (LAMMPS `velocity create`: uniform, zero net
    /// momentum, rescaled to the temperature; per component <m u^2> = k T).
    pub temperature: Option<f64>,
    /// Explicit centres; with `diameters` (one each) or `diameter`.
    pub positions: Option<Vec<[f64; 3]>>,
    pub diameters: Option<Vec<f64>>,
    /// Number of spheres to place (with `placement`, `region`, `diameter`).
    pub count: Option<u64>,
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

/// The particle tables of a scene file (the particle half of a coupled one).
#[derive(Clone, Debug)]
pub struct ParticleTables {
    pub simulation: SimulationSection,
    pub domain: Option<DomainSection>,
    pub materials: Vec<MaterialSection>,
    pub contact: ContactSection,
    pub walls: Vec<WallSection>,
    pub groups: Vec<ParticleGroup>,
    pub output: OutputSection,
}

impl ParticleTables {
    /// The particle tables of `file`; `[simulation]` is required.
    pub fn of(file: SceneFile, keys: &Keys) -> Result<ParticleTables, SceneError> {
        let simulation = file.simulation.ok_or_else(|| {
            keys.missing(
                "simulation",
                "a particle scene needs a [simulation] table (dt, end_time, ...)",
            )
        })?;
        Ok(ParticleTables {
            simulation,
            domain: file.domain,
            materials: file.materials.unwrap_or_default(),
            contact: file.contact.unwrap_or_default(),
            walls: file.walls.unwrap_or_default(),
            groups: file.groups.unwrap_or_default(),
            output: file.output.unwrap_or_default(),
        })
    }
}

/// A group's spheres: explicit centres with their diameters (or a distribution), or a number placed.
#[derive(Clone, Debug)]
enum Spheres {
    Listed {
        positions: Vec<Vec3>,
        diameters: Result<Vec<f64>, DiameterDistribution>,
    },
    Placed {
        count: usize,
        distribution: DiameterDistribution,
        arrangement: Arrangement,
        region: (Vec3, Vec3),
    },
}

/// How placed spheres are arranged in their region.
#[derive(Clone, Copy, Debug)]
enum Arrangement {
    /// Random sequential addition without overlap.
    Random,
    /// A simple-cubic lattice of this spacing.
    Cubic(f64),
    /// One hexagonal layer of about this spacing at random heights ([`hexagonal_layer`]).
    Hexagonal(f64),
}

/// A checked particle scene: the model's parts, the groups to place and the run's schedule.
#[derive(Clone, Debug)]
pub struct ParticleScene {
    pub source: PathBuf,
    pub tables: ParticleTables,
    pub domain: Domain,
    pub materials: Vec<Material>,
    pub model: ContactModel,
    pub walls: Vec<Wall>,
    pub integrator: Integrator,
    pub settings: RunSettings,
    /// Spheres in all.
    pub count: usize,
    spheres: Vec<Spheres>,
}

impl ParticleScene {
    /// Parses and checks the text of a particle scene; `source` names it in messages.
    pub fn parse(text: &str, source: &std::path::Path) -> Result<ParticleScene, SceneError> {
        super::parse_kind(text, source, "particle", |scene| match scene {
            super::Scene::Particles(s) => Some(s),
            _ => None,
        })
    }

    /// Checks the particle tables of `file`.
    pub fn new(file: SceneFile, keys: Keys) -> Result<ParticleScene, SceneError> {
        let tables = ParticleTables::of(file, &keys)?;
        check_clock(&keys, &tables.simulation)?;
        tables
            .output
            .allow(&keys, "output", &["track"], "a particle scene")?;
        let settings = tables
            .output
            .settings(&keys, "output", tables.simulation.end_time)?;
        ParticleScene::check(tables, keys, settings)
    }

    /// Checks the tables (their domain given) for a run with the output schedule `settings`.
    pub fn check(
        tables: ParticleTables,
        keys: Keys,
        settings: RunSettings,
    ) -> Result<ParticleScene, SceneError> {
        let s = &tables.simulation;
        let dt = check_clock(&keys, s)?;
        keys.vector("simulation.gravity", s.gravity)?;
        let integrator = integrator(&keys, s)?;
        let skin = s.neighbor_skin.unwrap_or(DEFAULT_SKIN_FRACTION);
        keys.number_note(
            "simulation.neighbor_skin",
            skin,
            Range::OpenClosed(0.0, 2.0),
            "fraction of the largest diameter",
        )?;
        let d = tables.domain.as_ref().ok_or_else(|| {
            keys.missing(
                "domain",
                "the [domain] table (min, max, periodic) is required",
            )
        })?;
        keys.vector("domain.min", d.min)?;
        keys.vector("domain.max", d.max)?;
        keys.require(
            (0..3).all(|a| d.max[a] > d.min[a]),
            "domain.max",
            format!("{:?}", d.max),
            "each component must be larger than domain.min",
        )?;
        let domain = Domain {
            min: d.min.into(),
            max: d.max.into(),
            periodic: d.periodic,
        };
        let materials = check_materials(&keys, &tables.materials)?;
        let model = contact_model(&keys, &tables.contact, &materials, dt, s.gravity)?;
        let walls = tables
            .walls
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let key = |k: &str| format!("wall[{i}].{k}");
                Ok(Wall {
                    point: keys.vector(&key("point"), w.point)?,
                    normal: keys.direction(&key("normal"), w.normal)?,
                    material: material_index(
                        &keys,
                        &tables.materials,
                        &w.material,
                        &key("material"),
                    )?,
                    velocity: keys.vector(&key("velocity"), w.velocity)?,
                })
            })
            .collect::<Result<Vec<Wall>, SceneError>>()?;
        if tables.groups.is_empty() {
            return Err(keys.error("particles", "at least one [[particles]] group is required"));
        }
        let mut count = 0usize;
        let mut spheres = Vec::new();
        for (i, g) in tables.groups.iter().enumerate() {
            let group = check_group(&keys, &tables, i, g, &domain)?;
            count = count.saturating_add(match &group {
                Spheres::Listed { positions, .. } => positions.len(),
                Spheres::Placed { count, .. } => *count,
            });
            spheres.push(group);
        }
        fits_in_memory(
            &keys,
            "particles",
            count as f64 * BYTES_PER_PARTICLE,
            &format!("{count} particles"),
        )?;
        Ok(ParticleScene {
            source: keys.file.to_path_buf(),
            tables,
            domain,
            materials,
            model,
            walls,
            integrator,
            settings,
            count,
            spheres,
        })
    }

    fn keys(&self) -> Keys<'_> {
        Keys::new(&self.source)
    }

    /// Simulated time step.
    pub fn dt(&self) -> f64 {
        self.tables.simulation.dt
    }

    pub fn gravity(&self) -> Vec3 {
        Vec3::from(self.tables.simulation.gravity)
    }

    /// The groups with a `release_time`, as particle index ranges in build order.
    fn releases(&self) -> Vec<Release> {
        let mut first = 0;
        let mut releases = Vec::new();
        for (g, spheres) in self.tables.groups.iter().zip(&self.spheres) {
            let count = match spheres {
                Spheres::Listed { positions, .. } => positions.len(),
                Spheres::Placed { count, .. } => *count,
            };
            if let Some(time) = g.release_time {
                releases.push(Release {
                    time,
                    particles: first..first + count,
                });
            }
            first += count;
        }
        releases
    }

    /// Places the particles and builds the system; checks the initial state (no overlaps, everything
    /// inside the domain, the periodic lengths, the tracked ids, the time step against the contacts).
    pub fn system(&self) -> Result<DemSystem, SceneError> {
        let keys = self.keys();
        let domain = self.domain.clone();
        let mut rng = ChaCha8Rng::seed_from_u64(self.tables.simulation.seed);
        let mut particles = Particles::default();
        let mut origin = Vec::new();
        let mut prescribed = Vec::new();
        for (i, (group, spheres)) in self.tables.groups.iter().zip(&self.spheres).enumerate() {
            let key = |k: &str| format!("particles[{i}].{k}");
            let (positions, diameters) = match spheres {
                Spheres::Listed {
                    positions,
                    diameters,
                } => {
                    let d = match diameters {
                        Ok(d) => d.clone(),
                        Err(dist) => positions.iter().map(|_| dist.sample(&mut rng)).collect(),
                    };
                    (positions.clone(), d)
                }
                Spheres::Placed {
                    count,
                    distribution,
                    arrangement,
                    region,
                } => {
                    let mut d: Vec<f64> =
                        (0..*count).map(|_| distribution.sample(&mut rng)).collect();
                    let positions = match arrangement {
                        Arrangement::Hexagonal(spacing) => {
                            let mut sites = hexagonal_layer(*region, *spacing, &mut rng);
                            sites.truncate(*count);
                            sites
                        }
                        Arrangement::Cubic(spacing) => {
                            let sites = lattice_positions(*region, *spacing, *count);
                            keys.require(
                                sites.len() >= *count,
                                &key("count"),
                                count,
                                &format!(
                                    "the region holds only {} lattice sites of spacing {}; reduce the \
                                     count or enlarge the region",
                                    sites.len(),
                                    num(*spacing)
                                ),
                            )?;
                            sites
                        }
                        Arrangement::Random => {
                            // Larger spheres first: random sequential addition packs better that way.
                            d.sort_by(|a, b| b.total_cmp(a));
                            let existing: Vec<(Vec3, f64)> = particles
                                .position
                                .iter()
                                .copied()
                                .zip(particles.radius.iter().copied())
                                .collect();
                            let radii: Vec<f64> = d.iter().map(|d| 0.5 * d).collect();
                            random_positions(&domain, *region, &radii, &existing, &mut rng)
                                .map_err(|e| keys.error(key("count"), e.to_string()))?
                        }
                    };
                    (positions, d)
                }
            };
            let material = material_index(
                &keys,
                &self.tables.materials,
                &group.material,
                &key("material"),
            )?;
            let first = particles.len();
            let velocity = group_velocity(&keys, group, i)?;
            if velocity.iter().any(|s| s.constant().is_none()) {
                prescribed.push(PrescribedVelocity {
                    velocity: velocity.clone(),
                    particles: first..first + positions.len(),
                });
            }
            let initial_velocity = Vec3::from_array(velocity.each_ref().map(|s| s.at(0.0)));
            for (j, (&x, &d)) in positions.iter().zip(&diameters).enumerate() {
                keys.require(
                    domain.contains(x),
                    &key(&format!("positions[{j}]")),
                    x,
                    &format!(
                        "the centre lies outside the domain {} .. {}",
                        domain.min, domain.max
                    ),
                )?;
                particles.push(
                    domain.wrap(x),
                    initial_velocity,
                    0.5 * d,
                    self.materials[material].density,
                    material,
                    group.fixed,
                );
                origin.push((i, j));
            }
            if let Some(temperature) = group.temperature {
                particles.add_thermal_velocities(first, temperature, &mut rng);
            }
        }
        check_initial_overlaps(&keys, &domain, &self.walls, &particles, &origin)?;
        let max_diameter = 2.0 * particles.max_radius();
        let skin = self
            .tables
            .simulation
            .neighbor_skin
            .unwrap_or(DEFAULT_SKIN_FRACTION)
            * max_diameter;
        let reach = max_diameter + self.model.interaction_range() + skin;
        // A pair must not meet two images of each other (the minimum image holds one): the box is at
        // least twice the reach. A lone sphere (a periodic array, one sphere per box) has no pairs, and
        // must only not reach its own image.
        let (least, what) = if particles.len() == 1 {
            (
                max_diameter + self.model.interaction_range(),
                "the sphere's diameter plus the lubrication range (it would touch its own image)",
            )
        } else {
            (
                2.0 * reach,
                "twice the interaction reach (largest diameter + lubrication range + neighbour skin)",
            )
        };
        for a in 0..3 {
            keys.require(
                !(domain.periodic[a] && domain.length()[a] <= least),
                "domain.max",
                num(domain.length()[a]),
                &format!(
                    "the periodic length along axis {a} must exceed {}, {what}; enlarge the domain",
                    num(least)
                ),
            )?;
        }
        let track = self.tables.output.track.as_deref().unwrap_or(&[]);
        if let Some(&id) = track.iter().find(|&&id| id >= particles.len()) {
            return Err(keys.error(
                "output.track",
                format!(
                    "particle {id} does not exist; the scene has {} particles (0 .. {})",
                    particles.len(),
                    particles.len() - 1
                ),
            ));
        }
        let mut system = DemSystem::new(
            domain,
            self.gravity(),
            self.materials.clone(),
            self.model.clone(),
            particles,
            self.walls.clone(),
            self.integrator,
            self.dt(),
            skin,
        );
        system.releases = self.releases();
        system.prescribed = prescribed;
        self.check_contacts(&system)?;
        Ok(system)
    }

    /// Refuses a time step that cannot resolve a contact with at least 5 (sub)steps, and impacts that
    /// would drive spheres through each other or through a wall.
    fn check_contacts(&self, system: &DemSystem) -> Result<(), SceneError> {
        let keys = self.keys();
        let (contact_time, how) = contact_time_estimate(self, system);
        let resolution = contact_time / (self.dt() * system.integrator.smallest_substep_fraction());
        keys.require(
            resolution >= 5.0,
            "simulation.dt",
            num(self.dt()),
            &format!(
                "it is too large: the contact time {} ({}) is resolved with only {resolution:.1} \
                 (sub)steps; at least 5 are needed (20 or more recommended)",
                num(contact_time),
                how
            ),
        )?;
        let (speed, source) = impact_speed(system);
        let overlap = expected_overlap(system, speed);
        keys.require(
            overlap <= LARGEST_OVERLAP,
            if matches!(system.model.normal, NormalLaw::Hertz(_)) {
                "contact.hertz.k_n"
            } else {
                "contact.collision_steps"
            },
            match system.model.normal {
                NormalLaw::Hertz(c) => num(c.k_n),
                _ => num(self.tables.contact.collision_steps.unwrap_or(DEFAULT_COLLISION_STEPS)),
            },
            &format!(
                "an impact at {} m/s ({source}) would overlap by {} R, and spheres would pass through \
                 each other or a wall (at most {LARGEST_OVERLAP} R); make the contact stiffer (fewer \
                 collision_steps, a smaller dt or a larger k_n) or the impact slower",
                num(speed),
                num(overlap)
            ),
        )
    }
}

/// The time step (checked with the end time: at least one step, at most `MAX_STEPS`).
pub fn check_clock(keys: &Keys, s: &SimulationSection) -> Result<f64, SceneError> {
    let dt = keys.number("simulation.dt", s.dt, Range::Positive)?;
    let end_time = keys.number("simulation.end_time", s.end_time, Range::Positive)?;
    fixed_steps(keys, "simulation.dt", dt, end_time)?;
    Ok(dt)
}

const INTEGRATORS: [(&str, u8); 4] = [
    ("seed", 0),
    ("predictor-corrector", 0),
    ("velocity-verlet", 1),
    ("euler-crank-nicolson", 2),
];

fn integrator(keys: &Keys, s: &SimulationSection) -> Result<Integrator, SceneError> {
    let name = s.integrator.as_deref().unwrap_or("seed");
    let kind = keys.choice("simulation.integrator", name, &INTEGRATORS)?;
    let substeps = match &s.substeps {
        None => [8, 2, 5],
        Some(given) => {
            keys.require(
                given.len() == 3 && given.iter().all(|n| (1..=1000).contains(n)),
                "simulation.substeps",
                format!("{given:?}"),
                "three numbers, one per Runge–Kutta stage, each 1 to 1000 (the seed uses [8, 2, 5])",
            )?;
            keys.forbid(
                kind == 1,
                "simulation.substeps",
                "velocity Verlet has no stages to sub-step; remove it",
            )?;
            [given[0], given[1], given[2]]
        }
    };
    Ok(match kind {
        0 => Integrator::PredictorCorrector { substeps },
        1 => Integrator::VelocityVerlet,
        _ => Integrator::EulerCrankNicolson { substeps },
    })
}

fn check_materials(keys: &Keys, sections: &[MaterialSection]) -> Result<Vec<Material>, SceneError> {
    if sections.is_empty() {
        return Err(keys.error("material", "at least one [[material]] is required"));
    }
    let mut materials = Vec::new();
    for (i, m) in sections.iter().enumerate() {
        let key = |k: &str| format!("material[{i}].{k}");
        keys.require(
            !m.name.is_empty(),
            &key("name"),
            "\"\"",
            "a material needs a name",
        )?;
        keys.forbid(
            sections[..i].iter().any(|o| o.name == m.name),
            &key("name"),
            &format!("the name \"{}\" is used twice", m.name),
        )?;
        keys.number(&key("density"), m.density, Range::Positive)?;
        keys.number_note(
            &key("e_dry"),
            m.e_dry,
            Range::OpenClosed(0.0, 1.0),
            "the dry restitution coefficient",
        )?;
        let poisson = keys.number(
            &key("poisson"),
            m.poisson.unwrap_or(DEFAULT_POISSON),
            Range::ClosedOpen(0.0, 0.5),
        )?;
        keys.number(&key("mu_s"), m.mu_s, Range::NonNegative)?;
        keys.number(&key("mu_k"), m.mu_k, Range::NonNegative)?;
        keys.require(
            m.mu_k <= m.mu_s,
            &key("mu_k"),
            num(m.mu_k),
            &format!(
                "the kinetic friction coefficient must not exceed mu_s = {}",
                num(m.mu_s)
            ),
        )?;
        materials.push(Material {
            name: m.name.clone(),
            density: m.density,
            e_dry: m.e_dry,
            poisson,
            mu_s: m.mu_s,
            mu_k: m.mu_k,
        });
    }
    Ok(materials)
}

fn contact_model(
    keys: &Keys,
    c: &ContactSection,
    materials: &[Material],
    dt: f64,
    gravity: [f64; 3],
) -> Result<ContactModel, SceneError> {
    let name = c.normal.as_deref().unwrap_or("actm");
    let kind = keys.choice(
        "contact.normal",
        name,
        &[("actm", 0), ("linear", 1), ("hertz", 2)],
    )?;
    keys.forbid(
        c.hertz.is_some() && kind != 2,
        "contact.hertz",
        "only the \"hertz\" normal law takes [contact.hertz]; remove it",
    )?;
    let normal = match kind {
        0 => NormalLaw::Actm,
        1 => NormalLaw::Linear,
        _ => {
            let h = c.hertz.as_ref().ok_or_else(|| {
                keys.error(
                    "contact.hertz",
                    "the \"hertz\" law needs a [contact.hertz] table with k_n and gamma_n",
                )
            })?;
            NormalLaw::Hertz(HertzCoefficients::lammps(
                keys.number("contact.hertz.k_n", h.k_n, Range::Positive)?,
                keys.number("contact.hertz.gamma_n", h.gamma_n, Range::NonNegative)?,
                keys.optional("contact.hertz.k_t", h.k_t, Range::Positive)?,
                keys.optional("contact.hertz.gamma_t", h.gamma_t, Range::NonNegative)?,
            ))
        }
    };
    let tangential = keys.choice(
        "contact.tangential",
        c.tangential.as_deref().unwrap_or("spring-history"),
        &[
            ("spring-history", TangentialLaw::SpringHistory),
            ("shear-history", TangentialLaw::ShearHistory),
            ("frictionless", TangentialLaw::Frictionless),
        ],
    )?;
    let collision_steps = keys.number_note(
        "contact.collision_steps",
        c.collision_steps.unwrap_or(DEFAULT_COLLISION_STEPS),
        Range::Positive,
        "T_c / dt; the seed uses 10",
    )?;
    let overlap_bound = keys.number_note(
        "contact.overlap_bound",
        c.overlap_bound.unwrap_or(DEFAULT_OVERLAP_BOUND),
        Range::Open(0.0, 0.1),
        "fraction of the radius; 1e-3 is typical",
    )?;
    let st_crit = keys.number_note(
        "contact.st_crit",
        c.st_crit.unwrap_or(DEFAULT_ST_CRIT),
        Range::Positive,
        "the seed uses 5",
    )?;
    let lubrication = match &c.lubrication {
        None => None,
        Some(l) => Some(Lubrication {
            fluid_density: keys.number(
                "contact.lubrication.fluid_density",
                l.fluid_density,
                Range::Positive,
            )?,
            kinematic_viscosity: keys.number(
                "contact.lubrication.kinematic_viscosity",
                l.kinematic_viscosity,
                Range::Positive,
            )?,
            range: keys.number_note(
                "contact.lubrication.range",
                l.range,
                Range::Positive,
                "2h on a fluid grid",
            )?,
            roughness_ratio: keys.number_note(
                "contact.lubrication.roughness",
                l.roughness.unwrap_or(DEFAULT_ROUGHNESS),
                Range::Open(0.0, 1.0),
                "3e-3 in the seed",
            )?,
        }),
    };
    let enduring = match (c.min_impact_velocity, &lubrication) {
        (Some(u), _) => EnduringContact::MinimumSpeed(keys.number(
            "contact.min_impact_velocity",
            u,
            Range::Positive,
        )?),
        (None, Some(l)) => EnduringContact::Stokes {
            st_crit,
            fluid_density: l.fluid_density,
            kinematic_viscosity: l.kinematic_viscosity,
        },
        (None, None) if matches!(normal, NormalLaw::Actm) => return Err(keys.error(
            "contact.min_impact_velocity",
            "is required for dry runs with the \"actm\" law (the impact-speed floor u_in,crit of \
                 enduring contacts; a few percent of sqrt(g D) is typical)",
        )),
        (None, None) => EnduringContact::MinimumSpeed(0.0),
    };
    Ok(ContactModel::new(
        normal,
        tangential,
        materials,
        collision_steps * dt,
        enduring,
        overlap_bound,
        Vec3::from(gravity).length(),
        lubrication,
    ))
}

fn material_index(
    keys: &Keys,
    materials: &[MaterialSection],
    name: &str,
    key: &str,
) -> Result<usize, SceneError> {
    materials
        .iter()
        .position(|m| m.name == name)
        .ok_or_else(|| {
            let names: Vec<String> = materials
                .iter()
                .map(|m| format!("\"{}\"", m.name))
                .collect();
            keys.error(
                key,
                format!(
                    "no material is named \"{name}\"; defined: {}",
                    names.join(", ")
                ),
            )
        })
}

/// The velocity of group `i`: three numbers (default 0), or for fixed spheres signals of time (a
/// prescribed motion, e.g. the seed's approach `{ from = 0, to = -u_in, rate = 40 }`).
fn group_velocity(keys: &Keys, g: &ParticleGroup, i: usize) -> Result<[Signal; 3], SceneError> {
    let Some(components) = &g.velocity else {
        return Ok(Signal::constants([0.0; 3]));
    };
    let mut velocity = Signal::constants([0.0; 3]);
    for (k, value) in components.iter().enumerate() {
        let key = format!("particles[{i}].velocity[{k}]");
        let signal = super::fluid::signal(keys, &key, value)?;
        keys.forbid(
            !g.fixed && signal.constant().is_none(),
            &key,
            "a velocity that changes in time is a prescribed motion: it applies to fixed spheres \
             (`fixed = true`, with a `release_time` to let them go); free spheres take a number",
        )?;
        velocity[k] = signal;
    }
    Ok(velocity)
}

/// Checks one group and says how its spheres are made.
fn check_group(
    keys: &Keys,
    tables: &ParticleTables,
    i: usize,
    g: &ParticleGroup,
    domain: &Domain,
) -> Result<Spheres, SceneError> {
    let key = |k: &str| format!("particles[{i}].{k}");
    material_index(keys, &tables.materials, &g.material, &key("material"))?;
    if let Some(t) = g.release_time {
        keys.number_note(
            &key("release_time"),
            t,
            Range::Positive,
            "the time at which the group's spheres become free",
        )?;
        keys.forbid(
            !g.fixed,
            &key("release_time"),
            "applies to fixed spheres only: set `fixed = true` (and their prescribed `velocity`) so \
             that they move at that velocity until the release time",
        )?;
    }
    group_velocity(keys, g, i)?;
    if let Some(t) = g.temperature {
        keys.number(&key("temperature"), t, Range::NonNegative)?;
        keys.forbid(
            g.fixed,
            &key("temperature"),
            "fixed spheres move at their prescribed `velocity`; random velocities apply to free ones",
        )?;
    }
    let distribution = |d: &DiameterSection| diameter_distribution(keys, d, &key("diameter"));
    match (&g.positions, g.count) {
        (Some(_), Some(_)) => {
            Err(keys.error(key("count"), "give either `positions` or `count`, not both"))
        }
        (Some(positions), None) => {
            if positions.is_empty() {
                return Err(keys.error(key("positions"), "the list is empty"));
            }
            let diameters = match (&g.diameters, &g.diameter) {
                (Some(d), None) => {
                    keys.require(
                        d.len() == positions.len(),
                        &key("diameters"),
                        format!("{} diameters", d.len()),
                        &format!("give one per sphere ({} positions)", positions.len()),
                    )?;
                    for (j, &v) in d.iter().enumerate() {
                        keys.number_note(
                            &format!("particles[{i}].diameters[{j}]"),
                            v,
                            Range::Positive,
                            "a diameter, twice the radius",
                        )?;
                    }
                    Ok(d.clone())
                }
                (None, Some(d)) => Err(distribution(d)?),
                _ => {
                    return Err(keys.error(
                        key("diameters"),
                        "give either `diameters` (one per position) or `diameter`",
                    ))
                }
            };
            let positions = positions
                .iter()
                .enumerate()
                .map(|(j, p)| keys.vector(&format!("particles[{i}].positions[{j}]"), *p))
                .collect::<Result<Vec<Vec3>, SceneError>>()?;
            for (k, present) in [
                ("placement", g.placement.is_some()),
                ("region", g.region.is_some()),
                ("lattice_spacing", g.lattice_spacing.is_some()),
            ] {
                keys.forbid(
                    present,
                    &key(k),
                    "only applies to groups placed with `count`",
                )?;
            }
            Ok(Spheres::Listed {
                positions,
                diameters,
            })
        }
        (None, count) => {
            let placement = g.placement.as_deref().unwrap_or("random");
            let kind = keys.choice(
                &key("placement"),
                placement,
                &[("random", 0), ("lattice", 1), ("hexagonal", 2)],
            )?;
            keys.forbid(
                g.diameters.is_some(),
                &key("diameters"),
                "only applies to explicit `positions`; use `diameter` with `count`",
            )?;
            let d = g.diameter.as_ref().ok_or_else(|| {
                keys.error(
                    key("diameter"),
                    "is required for placed spheres (with `count`)",
                )
            })?;
            let distribution = distribution(d)?;
            let region = match &g.region {
                None => (domain.min, domain.max),
                Some(r) => {
                    let (lo, hi) = (Vec3::from(r.min), Vec3::from(r.max));
                    let text = format!("{:?} .. {:?}", r.min, r.max);
                    keys.require(
                        lo.is_finite() && hi.is_finite() && (0..3).all(|a| hi[a] > lo[a]),
                        &key("region"),
                        &text,
                        "max must exceed min in every direction",
                    )?;
                    keys.require(
                        (0..3).all(|a| lo[a] >= domain.min[a] && hi[a] <= domain.max[a]),
                        &key("region"),
                        &text,
                        "the region must lie inside the domain",
                    )?;
                    (lo, hi)
                }
            };
            let spacing = match (g.lattice_spacing, kind) {
                (Some(s), 1 | 2) => {
                    keys.number(&key("lattice_spacing"), s, Range::Positive)?;
                    keys.require(
                        s >= distribution.max(),
                        &key("lattice_spacing"),
                        num(s),
                        &format!(
                            "it is smaller than the largest diameter {}",
                            num(distribution.max())
                        ),
                    )?;
                    s
                }
                (None, 1) => 1.05 * distribution.max(),
                (None, _) => distribution.max(),
                (Some(_), _) => {
                    return Err(keys.error(
                        key("lattice_spacing"),
                        "only applies to placement = \"lattice\" or \"hexagonal\"",
                    ))
                }
            };
            let arrangement = match kind {
                0 => Arrangement::Random,
                1 => Arrangement::Cubic(spacing),
                _ => Arrangement::Hexagonal(spacing),
            };
            // A hexagonal layer fills its region unless a count is given.
            let count =
                match (arrangement, count) {
                    (Arrangement::Hexagonal(s), None) => hexagonal_sites(region, s) as u64,
                    (Arrangement::Hexagonal(s), Some(c)) => {
                        let sites = hexagonal_sites(region, s);
                        keys.require(
                            c as usize <= sites,
                            &key("count"),
                            c,
                            &format!(
                            "the region holds {sites} hexagonal sites of spacing {}; give at most \
                             that many, or leave `count` out to fill the layer",
                            num(s)
                        ),
                        )?;
                        c
                    }
                    (_, Some(c)) => c,
                    (_, None) => return Err(keys.error(
                        key("count"),
                        "a group needs `positions` (an explicit list) or `count` (placed spheres; \
                         a \"hexagonal\" layer may leave it out to fill its region)",
                    )),
                };
            keys.require(count > 0, &key("count"), count, "must be at least 1")?;
            fits_in_memory(
                keys,
                &key("count"),
                count as f64 * BYTES_PER_PARTICLE,
                &format!("{count} particles"),
            )?;
            Ok(Spheres::Placed {
                count: count as usize,
                distribution,
                arrangement,
                region,
            })
        }
    }
}

fn diameter_distribution(
    keys: &Keys,
    d: &DiameterSection,
    key: &str,
) -> Result<DiameterDistribution, SceneError> {
    let kind = keys.choice(
        &format!("{key}.distribution"),
        &d.distribution,
        &[("fixed", 0), ("uniform", 1), ("gaussian", 2)],
    )?;
    let values = [
        ("value", d.value, kind == 0),
        ("min", d.min, kind == 1),
        ("max", d.max, kind == 1),
        ("mean", d.mean, kind == 2),
        ("std", d.std, kind == 2),
    ];
    for (name, value, used) in values {
        keys.forbid(
            value.is_some() && !used,
            &format!("{key}.{name}"),
            &format!("does not apply to the \"{}\" distribution", d.distribution),
        )?;
        if used && value.is_none() {
            return Err(keys.error(
                format!("{key}.{name}"),
                format!("is required for the \"{}\" distribution", d.distribution),
            ));
        }
    }
    let diameter = |name: &str, v: Option<f64>| {
        keys.number_note(
            &format!("{key}.{name}"),
            v.unwrap_or(f64::NAN),
            Range::Positive,
            "a diameter, twice the radius",
        )
    };
    Ok(match kind {
        0 => DiameterDistribution::Fixed(diameter("value", d.value)?),
        1 => {
            let (min, max) = (diameter("min", d.min)?, diameter("max", d.max)?);
            keys.require(
                max >= min,
                &format!("{key}.max"),
                num(max),
                &format!("must be >= min = {}", num(min)),
            )?;
            DiameterDistribution::Uniform { min, max }
        }
        _ => {
            let mean = diameter("mean", d.mean)?;
            let std = keys.number_note(
                &format!("{key}.std"),
                d.std.unwrap_or(f64::NAN),
                Range::Closed(0.0, 0.3 * mean),
                "[0, 0.3 mean]: the distribution is truncated at 3 std",
            )?;
            DiameterDistribution::Gaussian { mean, std }
        }
    })
}

fn check_initial_overlaps(
    keys: &Keys,
    domain: &Domain,
    walls: &[Wall],
    p: &Particles,
    origin: &[(usize, usize)],
) -> Result<(), SceneError> {
    let describe = |k: usize| format!("particles[{}] sphere {}", origin[k].0, origin[k].1);
    // Fixed spheres may sink into walls and into each other (a rough bed on the floor, seed sec. 6).
    for (w, wall) in walls.iter().enumerate() {
        for k in (0..p.len()).filter(|&k| !p.fixed[k]) {
            let gap = wall.distance(p.position[k]) - p.radius[k];
            if gap < 0.0 {
                return Err(keys.error(
                    format!("particles[{}]", origin[k].0),
                    format!(
                        "{} (particle {k}) overlaps wall[{w}] by {:e}; initial overlaps are not allowed",
                        describe(k),
                        -gap
                    ),
                ));
            }
        }
    }
    let mut list = silt_dem::neighbor::NeighborList::new(1e-12 * (1.0 + p.max_radius()));
    list.rebuild(domain, &p.position, &p.radius, 0.0);
    for pair in 0..list.pair_count() {
        let (i, j) = (list.first[pair] as usize, list.second[pair] as usize);
        let gap =
            domain.separation(p.position[i], p.position[j]).length() - p.radius[i] - p.radius[j];
        if gap < 0.0 && !(p.fixed[i] && p.fixed[j]) {
            return Err(keys.error(
                format!("particles[{}]", origin[j].0),
                format!(
                    "{} (particle {i}) and {} (particle {j}) overlap by {:e}; initial overlaps are not \
                     allowed",
                    describe(i),
                    describe(j),
                    -gap
                ),
            ));
        }
    }
    Ok(())
}

impl SceneKind for ParticleScene {
    type Model = DemModel;

    fn settings(&self) -> RunSettings {
        self.settings
    }

    fn build(&self) -> Result<DemModel, SceneError> {
        Ok(DemModel {
            system: self.system()?,
            track: self.tables.output.track.clone().unwrap_or_default(),
        })
    }

    /// Every rank builds the whole system (the same on all) and keeps its block's spheres and their
    /// ghosts ([`silt_dem::distributed`]), split as [`split_blocks`] says.
    fn build_on(&self, comm: &silt_parallel::Comm) -> Result<DemModel, SceneError> {
        let mut model = self.build()?;
        let blocks = split_blocks(&model.system.domain, model.system.gravity, comm.size());
        model.system.distribute_on(comm.clone(), blocks, 0.0);
        Ok(model)
    }

    fn check(&self) -> Result<String, SceneError> {
        if self.count > CHECK_PLACEMENT_LIMIT {
            return Ok(format!(
                "scene            {}\nparticles        {} in {} group(s); placing them and checking the \
                 initial state (overlaps, the time step against the contacts) is left to `silt run` \
                 above {CHECK_PLACEMENT_LIMIT} particles\nmemory           about {} MiB\n",
                self.source.display(),
                self.count,
                self.tables.groups.len(),
                mib(self.count as f64 * BYTES_PER_PARTICLE)
            ));
        }
        Ok(report(self, &self.system()?))
    }

    fn describe(&self, model: &DemModel) -> String {
        let split = model.system.halo.as_ref().map_or(String::new(), |h| {
            let axis = |a: usize| ["x", "y", "z"][a];
            match &h.slabs.across {
                None => format!(
                    ", split along {} into {} slabs",
                    axis(h.slabs.axis),
                    h.slabs.count
                ),
                Some(across) => format!(
                    ", split into {} x {} blocks along {} and {}",
                    h.slabs.count,
                    across.count,
                    axis(h.slabs.axis),
                    axis(across.axis)
                ),
            }
        });
        format!(
            "{} particles, dt {:e}{split}",
            silt_core::model::Model::size(model).0,
            model.system.dt
        )
    }
}

/// The axes a particle scene is split along on several ranks: those across gravity (a bed settles
/// along gravity, so blocks across it stay balanced), or all three without gravity, longest first.
pub fn split_axes(domain: &silt_dem::domain::Domain, gravity: silt_dem::Vec3) -> Vec<usize> {
    let length = domain.length();
    let across: Vec<usize> = (0..3).filter(|&a| gravity[a] == 0.0).collect();
    let mut candidates = if across.is_empty() || gravity == silt_dem::Vec3::ZERO {
        vec![0, 1, 2]
    } else {
        across
    };
    // Longest first; equal lengths in axis order.
    candidates.sort_by(|&a, &b| length[b].total_cmp(&length[a]).then(a.cmp(&b)));
    candidates
}

/// How a particle scene is split on `ranks` ranks: slabs along the longest axis across gravity, or
/// blocks along the two longest (`a x b = ranks`), whichever makes the longest side of a piece the
/// shortest (the most compact pieces: the fewest ghosts); slabs on a tie.
pub fn split_blocks(
    domain: &silt_dem::domain::Domain,
    gravity: silt_dem::Vec3,
    ranks: usize,
) -> silt_dem::distributed::Slabs {
    use silt_dem::distributed::Slabs;
    let axes = split_axes(domain, gravity);
    let length = domain.length();
    let first = axes[0];
    let Some(&second) = axes.get(1) else {
        return Slabs::new(domain, first, ranks);
    };
    let longest_side =
        |a: usize, b: usize| (length[first] / a as f64).max(length[second] / b as f64);
    let mut best = (ranks, 1);
    for a in (1..=ranks).filter(|a| ranks.is_multiple_of(*a)) {
        let b = ranks / a;
        if longest_side(a, b) < longest_side(best.0, best.1) {
            best = (a, b);
        }
    }
    match best {
        (a, 1) => Slabs::new(domain, first, a),
        (a, b) => Slabs::blocks(Slabs::new(domain, first, a), Slabs::new(domain, second, b)),
    }
}

/// Contact duration and how it was obtained (see [`contact_time`]).
fn contact_time_estimate(scene: &ParticleScene, system: &DemSystem) -> (f64, String) {
    let how = match system.model.normal {
        NormalLaw::Hertz(_) => format!(
            "Hertz estimate for the lightest pair at {:.3e}",
            impact_speed(system).0
        ),
        _ => format!(
            "T_c = contact.collision_steps x dt = {} x {:e}",
            scene
                .tables
                .contact
                .collision_steps
                .unwrap_or(DEFAULT_COLLISION_STEPS),
            scene.dt()
        ),
    };
    (contact_time(system), how)
}

/// The report of `silt check` for a particle scene.
pub fn report(scene: &ParticleScene, system: &DemSystem) -> String {
    let p = &system.particles;
    let n = p.len();
    let fixed = p.fixed.iter().filter(|&&f| f).count();
    let dt = scene.dt();
    let end_time = scene.tables.simulation.end_time;
    let diameters: Vec<f64> = p.radius.iter().map(|r| 2.0 * r).collect();
    let d_min = diameters.iter().copied().fold(f64::INFINITY, f64::min);
    let d_max = diameters.iter().copied().fold(0.0, f64::max);
    let d_mean = diameters.iter().sum::<f64>() / n as f64;
    let mut out = String::new();
    let mut line = |label: &str, text: String| {
        let _ = writeln!(out, "{label:<16} {text}");
    };
    line("scene", scene.source.display().to_string());
    line(
        "particles",
        format!(
            "{n} ({} free, {fixed} fixed), {} materials, {} walls",
            n - fixed,
            system.materials.len(),
            system.walls.len()
        ),
    );
    line(
        "diameters",
        format!("min {d_min:.4e}, mean {d_mean:.4e}, max {d_max:.4e}"),
    );
    line(
        "domain",
        format!(
            "{} .. {} periodic {:?}",
            system.domain.min, system.domain.max, system.domain.periodic
        ),
    );
    let solid: f64 = p
        .radius
        .iter()
        .map(|r| 4.0 / 3.0 * std::f64::consts::PI * r.powi(3))
        .sum();
    let l = system.domain.length();
    line(
        "solid fraction",
        format!("{:.4} of the domain volume", solid / (l.x * l.y * l.z)),
    );
    line(
        "time",
        format!(
            "dt {dt:e}, end {end_time:e}, {} steps, integrator {} ({} force evaluation(s) per step)",
            (end_time / dt).round(),
            system.integrator.describe(),
            system.integrator.evaluations_per_step()
        ),
    );
    let (contact_time, how) = contact_time_estimate(scene, system);
    let resolution = contact_time / (dt * system.integrator.smallest_substep_fraction());
    line(
        "contact",
        format!(
            "{} + {}; contact time {:.3e} ({}), resolved by {resolution:.1} (sub)steps{}",
            system.model.normal.name(),
            system.model.tangential.name(),
            contact_time,
            how,
            if resolution < 20.0 {
                "  [warning: fewer than 20]"
            } else {
                ""
            }
        ),
    );
    let (v, source) = impact_speed(system);
    line("impact speed", format!("up to {v:.3e} ({source})"));
    let overlap = expected_overlap(system, v);
    line(
        "overlap",
        format!(
            "about {overlap:.3e} R at that speed for the lightest sphere on a wall{}",
            if overlap > 0.05 {
                "  [warning: above 0.05 R: soft contacts for this (worst-case) speed]"
            } else {
                ""
            }
        ),
    );
    let actm = matches!(system.model.normal, NormalLaw::Actm);
    line(
        "Stokes number",
        match system.model.enduring {
            EnduringContact::MinimumSpeed(u) => format!(
                "dry run (no fluid): St is infinite{}",
                if actm {
                    format!(
                        "; enduring-contact floor u_in,crit = {u:e}, resting overlap bound eps = {:e} R \
                         per particle weight",
                        system.model.overlap_bound
                    )
                } else {
                    String::new()
                }
            ),
            EnduringContact::Stokes {
                st_crit,
                fluid_density,
                kinematic_viscosity,
            } => {
                let density = system.materials[p.material[0]].density;
                let st = |d: f64| density * v * d / (9.0 * fluid_density * kinematic_viscosity);
                format!(
                    "St = rho_p u D / (9 rho_f nu_f) at the impact speed: {:.3e} (smallest) .. {:.3e} \
                     (largest); St_crit = {st_crit}",
                    st(d_min),
                    st(d_max)
                )
            }
        },
    );
    // Memory: per-particle arrays and about eight list pairs per particle with a 10% skin.
    let per_particle = 9 * 24 + 5 * 8 + 3 * 2 * 24;
    let per_pair = std::mem::size_of::<ContactState>() + 96 + 12;
    let bytes = n * per_particle
        + 8 * n * per_pair
        + system.wall_states.len() * std::mem::size_of::<ContactState>();
    line("memory", format!("about {} MiB", mib(bytes as f64)));
    let interval = scene.settings.interval;
    let frames = (end_time / interval).floor() as u64 + 1;
    let frame_bytes = n as f64 * 12.0 * 8.0 * 4.0 / 3.0;
    line(
        "output",
        format!(
            "{frames} frames every {interval:e}, about {} MiB of VTK",
            mib(frames as f64 * frame_bytes)
        ),
    );
    out
}

#[cfg(test)]
mod split_tests {
    use super::split_blocks;
    use silt_dem::domain::Domain;
    use silt_dem::Vec3;

    fn box_of(max: [f64; 3]) -> Domain {
        Domain {
            min: Vec3::ZERO,
            max: Vec3::new(max[0], max[1], max[2]),
            periodic: [true, true, false],
        }
    }

    #[test]
    fn a_bed_is_split_across_gravity_into_the_most_compact_pieces() {
        let down = Vec3::new(0.0, 0.0, -9.81);
        // A square column: slabs on 2 and 3 ranks (a tie goes to slabs), 2 x 2 blocks on 4.
        let square = box_of([7.0, 7.0, 14.0]);
        let two = split_blocks(&square, down, 2);
        assert_eq!((two.axis, two.count, two.across.is_none()), (0, 2, true));
        assert!(split_blocks(&square, down, 3).across.is_none());
        let four = split_blocks(&square, down, 4);
        let across = four.across.as_ref().expect("blocks");
        assert_eq!(
            (four.axis, four.count, across.axis, across.count),
            (0, 2, 1, 2)
        );
        assert_eq!(four.ranks(), 4);
        // A long bed along y: slabs along y until the pieces would be longer across.
        let long = box_of([4.0, 32.0, 3.0]);
        let eight = split_blocks(&long, down, 8);
        assert_eq!(
            (eight.axis, eight.count, eight.across.is_none()),
            (1, 8, true)
        );
        // 16 ranks: 16 x 1 (pieces 2 x 4) ties with 8 x 2 (4 x 2); 32: 16 x 2 (2 x 2).
        assert!(split_blocks(&long, down, 16).across.is_none());
        let many = split_blocks(&long, down, 32);
        let across = many.across.as_ref().expect("blocks");
        assert_eq!((many.count, across.axis, across.count), (16, 0, 2));
        // Gravity along x: slabs along z (the longer across it) on 4 ranks, 4 x 2 blocks of z and y
        // on 8.
        let sideways = |ranks| split_blocks(&square, Vec3::new(-9.81, 0.0, 0.0), ranks);
        assert_eq!((sideways(4).axis, sideways(4).across.is_none()), (2, true));
        let eight = sideways(8);
        assert_eq!(eight.axis, 2);
        assert_eq!(
            eight.across.as_ref().map(|a| (a.axis, a.count)),
            Some((1, 2))
        );
    }
}
