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
use crate::potential::gradient;
use crate::quaternion::{conj, mul, pure, vector, Quat};
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
                motion.velocities[node] = boundary.motion.velocity;
            }
        }
    }
}

/// The accelerations `(v', Ω')` of the rod in `motion` (held nodes do not accelerate: their motion
/// is prescribed at constant velocity).
pub fn accelerations(rod: &Rod, motion: &RodMotion, model: &RodModel) -> (Vec<Vec3>, Vec<Vec3>) {
    let inertia = &model.inertia;
    let elastic = gradient(rod);
    let mut node_forces: Vec<Vec3> = elastic.nodes.iter().map(|g| -*g).collect();
    let mut quaternion_forces: Vec<Quat> =
        elastic.orientations.iter().map(|g| g.map(|c| -c)).collect();
    if let Some(damping) = &model.damping {
        let rates = motion.quaternion_rates(rod);
        let viscous = damping.forces(rod, &motion.velocities, &rates);
        for (f, v) in node_forces.iter_mut().zip(&viscous.nodes) {
            *f += *v;
        }
        for (f, v) in quaternion_forces.iter_mut().zip(&viscous.orientations) {
            for c in 0..4 {
                f[c] += v[c];
            }
        }
    }
    let external = model.loads.forces(rod, inertia, 1.0);
    let mut accelerations: Vec<Vec3> = node_forces
        .iter()
        .zip(&external.nodes)
        .zip(motion.velocities.iter().zip(&inertia.node_masses))
        .map(|((f, e), (v, m))| (*f + *e) / *m - model.drag * *v)
        .collect();
    for node in model.held_nodes(rod) {
        accelerations[node] = Vec3::ZERO;
    }
    let angular = rod
        .orientations
        .iter()
        .zip(quaternion_forces.iter().zip(&external.torques))
        .zip(
            motion
                .angular_velocities
                .iter()
                .zip(&inertia.segment_inertias),
        )
        .map(|((p, (g, external)), (w, j))| {
            let torque = 0.5 * vector(mul(conj(*p), *g)) + *external;
            (torque - w.cross(*j * *w)) / *j - model.drag * *w
        })
        .collect();
    (accelerations, angular)
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
