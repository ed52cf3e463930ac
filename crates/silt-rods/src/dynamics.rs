//! Equations of motion of the discrete rod as a first-order system `y' = f(y)`, `y = (φ, p, v, Ω)`:
//!
//! ```text
//! φ' = v                                    node velocities
//! p' = ½ p Ω                                 Ω the body angular velocity of each segment
//! m v' = -∂V/∂φ + F_damping + F_external
//! J Ω' = τ - Ω × J Ω,   τ = ½ Im(p̄ (-∂V/∂p + F_damping,p))
//! ```
//!
//! `|p|` is an invariant of the exact flow (`d|p|²/dt = |p|² Re(Ω) = 0` for pure Ω), so the
//! unit-quaternion constraint needs no multiplier here: the system is already an ODE (index 0);
//! integrators project `p` back to unit length to control drift. The couple follows from the power
//! of the generalised quaternion force g against `ṗ = ½ p Ω`: `⟨g, ½ p Ω⟩ = ½ Im(p̄ g) · Ω`.
//! Every term is polynomial in (φ, p, v, Ω): the seed's cheap right-hand side.
//!
//! Masses (lumped): node j carries `ρ A (h_(j-½) + h_(j+½)) / 2` (half a segment at each end);
//! segment j has the rotational inertia `ρ h diag(I_1, I_2, J)`.

use silt_core::Vec3;

use crate::boundary::Boundary;
use crate::dissipation::Damping;
use crate::potential::{add_elastic_loads, add_inner_loads, strain_scales};
use crate::quaternion::{mul, mul_pure, pure, Quat};
use crate::rod::Rod;

/// Lumped masses and rotational inertias.
#[derive(Clone, Debug, PartialEq)]
pub struct Inertia {
    pub node_masses: Vec<f64>,
    /// Body-frame principal inertias of each segment.
    pub segment_inertias: Vec<Vec3>,
}

impl Inertia {
    /// A circular cross-section of radius r and density ρ.
    pub fn circular(rod: &Rod, radius: f64, density: f64) -> Self {
        let area = std::f64::consts::PI * radius * radius;
        let moment = 0.25 * std::f64::consts::PI * radius.powi(4);
        let n = rod.segments();
        let mut node_masses = vec![0.0; n + 1];
        for (j, h) in rod.lengths.iter().enumerate() {
            node_masses[j] += 0.5 * density * area * h;
            node_masses[j + 1] += 0.5 * density * area * h;
        }
        let segment_inertias = rod
            .lengths
            .iter()
            .map(|h| density * h * Vec3::new(moment, moment, 2.0 * moment))
            .collect();
        Inertia {
            node_masses,
            segment_inertias,
        }
    }
}

/// Velocities of the rod's unknowns.
#[derive(Clone, Debug, PartialEq)]
pub struct RodMotion {
    /// `v_j = φ_j'`.
    pub velocities: Vec<Vec3>,
    /// `Ω` of each segment, body frame.
    pub angular_velocities: Vec<Vec3>,
}

impl RodMotion {
    /// At rest.
    pub fn rest(rod: &Rod) -> Self {
        RodMotion {
            velocities: vec![Vec3::ZERO; rod.nodes.len()],
            angular_velocities: vec![Vec3::ZERO; rod.segments()],
        }
    }

    /// `ṗ = ½ p Ω` for each segment.
    pub fn quaternion_rates(&self, rod: &Rod) -> Vec<Quat> {
        rod.orientations
            .iter()
            .zip(&self.angular_velocities)
            .map(|(p, w)| mul(*p, pure(*w)).map(|c| 0.5 * c))
            .collect()
    }
}

pub use crate::loads::Loads;

/// Everything but the configuration: inertia, inner and outer damping, loads and supports.
#[derive(Clone, Debug, PartialEq)]
pub struct RodModel {
    pub inertia: Inertia,
    /// Antman's inner (Kelvin–Voigt) dissipation.
    pub damping: Option<Damping>,
    /// Linear drag rate ν (1/s) of a surrounding medium: `F = -ν m v`, `τ = -ν J Ω`.
    pub drag: f64,
    pub loads: Loads,
    pub boundaries: Vec<Boundary>,
}

impl RodModel {
    /// No damping, loads or supports.
    pub fn new(inertia: Inertia) -> Self {
        RodModel {
            inertia,
            damping: None,
            drag: 0.0,
            loads: Loads::default(),
            boundaries: Vec::new(),
        }
    }

    /// The nodes held by supports.
    pub fn held_nodes(&self, rod: &Rod) -> Vec<usize> {
        self.boundaries
            .iter()
            .filter_map(|b| b.held_node(rod))
            .collect()
    }

    /// Puts held nodes, their velocities and clamp frames where the supports have them at time t.
    pub fn apply_boundaries(&self, rod: &mut Rod, motion: &mut RodMotion, t: f64) {
        for boundary in &self.boundaries {
            boundary.apply(rod, t);
            if let Some(node) = boundary.held_node(rod) {
                motion.velocities[node] = boundary.motion.velocity_at(t);
            }
        }
    }
}

/// Scratch buffers of the force evaluation, reused from step to step.
#[derive(Clone, Debug, Default)]
pub struct Workspace {
    /// Node forces (world) and segment couples (body), all contributions.
    forces: Vec<Vec3>,
    torques: Vec<Vec3>,
    /// Viscous stresses and moments.
    stresses: Vec<Vec3>,
    moments: Vec<Vec3>,
    rates: Vec<Quat>,
    /// Constant factors: `1/h`, `2/h̄`, `1/m`, `1/J` (see [`Workspace::prepare`]).
    inverse_lengths: Vec<f64>,
    curvature_scales: Vec<f64>,
    inverse_masses: Vec<f64>,
    inverse_inertias: Vec<Vec3>,
}

impl Workspace {
    /// Node forces of the last [`loads_into`].
    pub fn forces(&self) -> &[Vec3] {
        &self.forces
    }

    /// Segment couples (body frame) of the last [`loads_into`].
    pub fn torques(&self) -> &[Vec3] {
        &self.torques
    }

    /// `1/m` per node.
    pub fn inverse_masses(&self) -> &[f64] {
        &self.inverse_masses
    }

    /// `1/J` per segment.
    pub fn inverse_inertias(&self) -> &[Vec3] {
        &self.inverse_inertias
    }

    /// Computes the constant factors of `rod` and `model`; call again whenever their reference
    /// lengths, masses or inertias change.
    pub fn prepare(&mut self, rod: &Rod, model: &RodModel) {
        let (inverse_lengths, curvature_scales) = strain_scales(rod);
        self.inverse_lengths = inverse_lengths;
        self.curvature_scales = curvature_scales;
        self.inverse_masses = model.inertia.node_masses.iter().map(|m| 1.0 / m).collect();
        self.inverse_inertias = model
            .inertia
            .segment_inertias
            .iter()
            .map(|j| j.recip())
            .collect();
    }
}

/// The accelerations `(v', Ω')` of the rod in `motion` (held nodes do not accelerate: their motion
/// is prescribed at constant velocity).
pub fn accelerations(rod: &Rod, motion: &RodMotion, model: &RodModel) -> (Vec<Vec3>, Vec<Vec3>) {
    let mut accelerations = vec![Vec3::ZERO; rod.nodes.len()];
    let mut angular = vec![Vec3::ZERO; rod.segments()];
    let mut work = Workspace::default();
    work.prepare(rod, model);
    accelerations_into(
        rod,
        motion,
        model,
        &mut work,
        &mut accelerations,
        &mut angular,
    );
    (accelerations, angular)
}

/// [`accelerations`] into `accelerations` and `angular`, with scratch space `work` (prepared for this
/// rod and model; no allocation once the buffers have their sizes).
pub fn accelerations_into(
    rod: &Rod,
    motion: &RodMotion,
    model: &RodModel,
    work: &mut Workspace,
    accelerations: &mut [Vec3],
    angular: &mut [Vec3],
) {
    loads_into(rod, motion, model, work);
    let n = rod.segments();
    for j in 0..=n {
        accelerations[j] =
            work.forces[j] * work.inverse_masses[j] - model.drag * motion.velocities[j];
    }
    for boundary in &model.boundaries {
        if let Some(node) = boundary.held_node(rod) {
            accelerations[node] = Vec3::ZERO;
        }
    }
    for s in 0..n {
        let (w, j) = (
            motion.angular_velocities[s],
            model.inertia.segment_inertias[s],
        );
        angular[s] = (work.torques[s] - w.cross(j * w)) * work.inverse_inertias[s] - model.drag * w;
    }
}

/// All loads on the rod, into `work`: node forces (world) and segment couples (body), elastic,
/// viscous and external (read them with [`Workspace::forces`] and [`Workspace::torques`]).
pub fn loads_into(rod: &Rod, motion: &RodMotion, model: &RodModel, work: &mut Workspace) {
    let n = rod.segments();
    let forces = &mut work.forces;
    let torques = &mut work.torques;
    forces.clear();
    forces.resize(n + 1, Vec3::ZERO);
    torques.clear();
    torques.resize(n, Vec3::ZERO);
    add_elastic_loads(
        rod,
        (&work.inverse_lengths, &work.curvature_scales),
        forces,
        torques,
    );
    if let Some(damping) = &model.damping {
        work.rates.clear();
        work.rates.extend(
            rod.orientations
                .iter()
                .zip(&motion.angular_velocities)
                .map(|(p, w)| mul_pure(*p, *w).map(|c| 0.5 * c)),
        );
        work.stresses.resize(n, Vec3::ZERO);
        work.moments.resize(n.saturating_sub(1), Vec3::ZERO);
        damping.viscous_stresses(
            rod,
            &motion.velocities,
            &work.rates,
            &mut work.stresses,
            &mut work.moments,
        );
        add_inner_loads(rod, &work.stresses, &work.moments, forces, torques);
    }
    model
        .loads
        .add_forces(rod, &model.inertia, 1.0, forces, torques);
}

/// Kinetic energy `Σ ½ m v² + Σ ½ Ωᵀ J Ω`.
pub fn kinetic_energy(motion: &RodMotion, inertia: &Inertia) -> f64 {
    let translation: f64 = motion
        .velocities
        .iter()
        .zip(&inertia.node_masses)
        .map(|(v, m)| 0.5 * m * v.length_squared())
        .sum();
    let rotation: f64 = motion
        .angular_velocities
        .iter()
        .zip(&inertia.segment_inertias)
        .map(|(w, j)| 0.5 * w.dot(*j * *w))
        .sum();
    translation + rotation
}

/// Angular momentum about the origin: `Σ m φ × v + Σ R (J Ω)`.
pub fn angular_momentum(rod: &Rod, motion: &RodMotion, inertia: &Inertia) -> Vec3 {
    let orbital: Vec3 = rod
        .nodes
        .iter()
        .zip(&motion.velocities)
        .zip(&inertia.node_masses)
        .map(|((x, v), m)| *m * x.cross(*v))
        .sum();
    let spin: Vec3 = rod
        .orientations
        .iter()
        .zip(&motion.angular_velocities)
        .zip(&inertia.segment_inertias)
        .map(|((p, w), j)| crate::quaternion::to_world(*p, *j * *w))
        .sum();
    orbital + spin
}
