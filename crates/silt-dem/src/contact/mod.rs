//! Contact laws. A [`ContactModel`] composes one normal law, one tangential law and, with a fluid,
//! lubrication; [`ContactModel::evaluate`] is the per-pair kernel that the pair loop calls.
//!
//! Force regimes (Biegert et al. 2017, eq. 5-6): gap > range: nothing; 0 < gap <= range: lubrication;
//! gap <= 0: normal + tangential contact.

pub mod actm;
pub mod hertz;
pub mod linear;
pub mod lubrication;
pub mod tangential;

use crate::geometry::ContactGeometry;
use crate::material::{Material, MaterialPair};
use crate::Vec3;
use actm::ActmShape;
use hertz::HertzCoefficients;
use lubrication::Lubrication;
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;
use tangential::{ShearHistoryCoefficients, SpringCoefficients};

/// Memory of one contact (pair or particle–wall), dropped when the surfaces separate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ContactState {
    /// The surfaces touched at the last evaluation of the actual (not predicted) state.
    pub touching: bool,
    /// Normal impact speed u_in recorded at the first (sub)step of the contact.
    pub impact_speed: f64,
    /// Normal stiffness k_n fixed for the whole contact (adaptive law).
    pub stiffness: f64,
    /// Normal damping d_n fixed for the whole contact (adaptive law).
    pub damping: f64,
    /// Tangential spring elongation zeta_t.
    pub spring: Vec3,
    pub sliding: bool,
}

impl ContactState {
    /// No memory: `*self == ContactState::default()`, without branches (every field compared, the results
    /// combined with `&`), so that the lane kernels can take it for four pairs at once.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        !self.touching
            & !self.sliding
            & (self.impact_speed == 0.0)
            & (self.stiffness == 0.0)
            & (self.damping == 0.0)
            & (self.spring.x == 0.0)
            & (self.spring.y == 0.0)
            & (self.spring.z == 0.0)
    }
}

/// Normal contact law, chosen by name in the scene.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum NormalLaw {
    /// Adaptive Collision Time Model (seed eq. 10-11): Hertzian spring and damper tuned per contact
    /// to last T_c with restitution e_dry.
    Actm,
    /// Linear spring–dashpot tuned to T_c and e_dry.
    Linear,
    /// Hertz with viscous damping, LAMMPS `gran/hertz/history` form.
    Hertz(HertzCoefficients),
}

impl NormalLaw {
    /// The law as a user names it: `actm`, `linear`, `hertz (k_n 2e5, gamma_n 50)`.
    pub fn name(&self) -> String {
        match self {
            NormalLaw::Actm => "actm (adaptive collision time)".into(),
            NormalLaw::Linear => "linear spring-dashpot".into(),
            NormalLaw::Hertz(c) => format!(
                "hertz (k_n {:e}, k_t {:e}, gamma_n {:e}, gamma_t {:e})",
                c.k_n, c.k_t, c.gamma_n, c.gamma_t
            ),
        }
    }
}

impl TangentialLaw {
    /// The law as a user names it.
    pub fn name(&self) -> &'static str {
        match self {
            TangentialLaw::Frictionless => "frictionless",
            TangentialLaw::SpringHistory => "spring with history (seed eq. 12-17)",
            TangentialLaw::ShearHistory => "shear history (LAMMPS)",
        }
    }
}

/// Tangential contact law, chosen by name in the scene.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum TangentialLaw {
    Frictionless,
    /// Seed's spring with history, Coulomb limit and static/kinetic switching (eq. 12-17).
    SpringHistory,
    /// LAMMPS shear history (k_t, gamma_t of the Hertz coefficients; Coulomb coefficient mu_k).
    ShearHistory,
}

/// How the impact speed floor u_in,crit of enduring contacts is set (seed sec. 4.5).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum EnduringContact {
    /// Dry runs: a fixed minimum impact speed.
    MinimumSpeed(f64),
    /// Wet runs: u_in,crit = 9 St_crit rho_f nu_f / (rho_p D_p) (eq. 24).
    Stokes {
        st_crit: f64,
        fluid_density: f64,
        kinematic_viscosity: f64,
    },
}

/// Coefficients that depend only on the two materials and T_c, precomputed once.
#[derive(Clone, Copy, Debug)]
pub struct PairCoefficients {
    pub materials: MaterialPair,
    pub actm: ActmShape,
    /// k_t / m_eff = kappa pi^2 / T_c^2 (eq. 15).
    pub tangential_stiffness_per_mass: f64,
    /// d_t / m_eff = 2 sqrt(k_t/m_eff) (-ln e) / sqrt(pi^2 + ln^2 e) (eq. 16).
    pub tangential_damping_per_mass: f64,
    pub linear_stiffness_per_mass: f64,
    pub linear_damping_per_mass: f64,
}

/// One side of a pair as the kernel needs it for the enduring-contact limits.
#[derive(Clone, Copy, Debug)]
pub struct Side {
    pub mass: f64,
    pub radius: f64,
    pub density: f64,
    /// False for fixed particles and walls, which need no support against gravity.
    pub free: bool,
}

/// Properties of one pair (or particle–wall contact) passed to the kernel.
#[derive(Clone, Copy, Debug)]
pub struct PairProperties<'a> {
    pub effective_mass: f64,
    pub effective_radius: f64,
    pub smaller_radius: f64,
    pub coefficients: &'a PairCoefficients,
    pub sides: [Side; 2],
}

/// What an evaluation may change in the contact memory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Update {
    /// Record the start (impact speed, stiffness) and the end (history dropped) of contacts.
    pub track_contacts: bool,
    /// Advance the tangential spring by this time times g_t,cp and store it.
    pub spring_increment: Option<f64>,
    /// Length of the (sub-)step the loads are integrated over: the limit of a stiff lubrication.
    pub substep: f64,
}

/// Result of the kernel for one pair: everything acting on p (q receives the opposite force).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactForce {
    pub force_on_p: Vec3,
    /// n x F_t, whose multiples by the levers are the torques (eq. 8).
    pub arm: Vec3,
    /// R_p,cp and R_q,cp (zero when no tangential force acts).
    pub lever_p: f64,
    pub lever_q: f64,
    pub touching: bool,
    pub sliding: bool,
}

impl ContactForce {
    /// Torque on p, T_p = R_p,cp n x F_t (eq. 8).
    #[inline(always)]
    pub fn torque_on_p(&self) -> Vec3 {
        self.lever_p * self.arm
    }

    /// Torque on q, T_q = R_q,cp n x F_t (eq. 8).
    #[inline(always)]
    pub fn torque_on_q(&self) -> Vec3 {
        self.lever_q * self.arm
    }
}

/// The seed's contact duration T_c in time steps (sec. 3.2: T_c = 10 dt).
pub const DEFAULT_COLLISION_STEPS: f64 = 10.0;
/// The seed's critical contact Stokes number St_crit of enduring contacts (eq. 22).
pub const DEFAULT_ST_CRIT: f64 = 5.0;
/// The seed's bound eps on the resting overlap under a particle's own weight, over its radius (eq. 26).
pub const DEFAULT_OVERLAP_BOUND: f64 = 1e-3;
/// The seed's surface roughness zeta_min of the lubrication, over the smaller radius (eq. 9).
pub const DEFAULT_ROUGHNESS: f64 = 3e-3;

/// A complete contact model: normal law, tangential law, enduring-contact rule and optional lubrication.
#[derive(Clone, Debug)]
pub struct ContactModel {
    pub normal: NormalLaw,
    pub tangential: TangentialLaw,
    /// Contact duration T_c.
    pub collision_time: f64,
    pub enduring: EnduringContact,
    /// Overlap bound eps of enduring contacts, as a fraction of the radius (eq. 26).
    pub overlap_bound: f64,
    /// |g|, for the gravity-based stiffness floor of enduring contacts.
    pub gravity: f64,
    pub lubrication: Option<Lubrication>,
    table: Vec<PairCoefficients>,
    material_count: usize,
}

impl ContactModel {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        normal: NormalLaw,
        tangential: TangentialLaw,
        materials: &[Material],
        collision_time: f64,
        enduring: EnduringContact,
        overlap_bound: f64,
        gravity: f64,
        lubrication: Option<Lubrication>,
    ) -> Self {
        let mut table = Vec::with_capacity(materials.len() * materials.len());
        for a in materials {
            for b in materials {
                table.push(pair_coefficients(MaterialPair::mix(a, b), collision_time));
            }
        }
        ContactModel {
            normal,
            tangential,
            collision_time,
            enduring,
            overlap_bound,
            gravity,
            lubrication,
            table,
            material_count: materials.len(),
        }
    }

    /// Precomputed coefficients for materials `a` and `b`.
    #[inline]
    pub fn coefficients(&self, a: usize, b: usize) -> &PairCoefficients {
        &self.table[a * self.material_count + b]
    }

    /// Gap beyond contact at which forces still act (the lubrication range, or zero).
    pub fn interaction_range(&self) -> f64 {
        self.lubrication.map_or(0.0, |l| l.range)
    }

    /// u_in,crit for a pair: the larger of the two sides' values (seed eq. 24).
    pub fn critical_impact_speed(&self, sides: &[Side; 2]) -> f64 {
        match self.enduring {
            EnduringContact::MinimumSpeed(speed) => speed,
            EnduringContact::Stokes {
                st_crit,
                fluid_density,
                kinematic_viscosity,
            } => sides
                .iter()
                .filter(|s| s.free)
                .map(|s| {
                    9.0 * st_crit * fluid_density * kinematic_viscosity
                        / (s.density * 2.0 * s.radius)
                })
                .fold(0.0, f64::max),
        }
    }

    /// Stiffness floor k_n,grav = max(m g (eps R)^(-3/2)) over the free sides (seed eq. 26).
    pub fn weight_stiffness(&self, sides: &[Side; 2]) -> f64 {
        sides
            .iter()
            .filter(|s| s.free)
            .map(|s| s.mass * self.gravity * (self.overlap_bound * s.radius).powf(-1.5))
            .fold(0.0, f64::max)
    }

    /// ACTM coefficients for an impact at `impact_speed`, with the enduring-contact limits of seed eq. 24-26.
    pub fn actm_coefficients(&self, pair: &PairProperties, impact_speed: f64) -> (f64, f64) {
        let shape = &pair.coefficients.actm;
        let damping = shape.damping(pair.effective_mass);
        let critical = self.critical_impact_speed(&pair.sides);
        if impact_speed >= critical && impact_speed > 0.0 {
            (shape.stiffness(pair.effective_mass, impact_speed), damping)
        } else {
            let stiffness = shape
                .stiffness(pair.effective_mass, critical)
                .max(self.weight_stiffness(&pair.sides));
            (stiffness, damping)
        }
    }

    /// The per-pair kernel: force on p and torques on p and q for geometry `g` (eq. 5-17).
    /// Returns `None` when nothing acts.
    #[inline(always)]
    pub fn evaluate(
        &self,
        g: &ContactGeometry,
        pair: &PairProperties,
        state: &mut ContactState,
        update: Update,
    ) -> Option<ContactForce> {
        if g.gap > 0.0 {
            if update.track_contacts && !state.is_empty() {
                *state = ContactState::default();
            }
            let lubrication = self.lubrication.filter(|l| l.acts_at(g.gap))?;
            let magnitude = lubrication.force_magnitude(
                g.gap,
                g.normal_speed,
                pair.effective_radius,
                pair.smaller_radius,
                pair.effective_mass,
                update.substep,
            );
            return Some(ContactForce {
                force_on_p: -magnitude * g.normal,
                ..ContactForce::default()
            });
        }

        let m_eff = pair.effective_mass;
        let c = pair.coefficients;
        let normal_magnitude = match self.normal {
            NormalLaw::Actm => {
                let (stiffness, damping) = if state.touching {
                    (state.stiffness, state.damping)
                } else {
                    let impact_speed = g.normal_speed.abs();
                    let (stiffness, damping) = self.actm_coefficients(pair, impact_speed);
                    if update.track_contacts {
                        state.impact_speed = impact_speed;
                        state.stiffness = stiffness;
                        state.damping = damping;
                    }
                    (stiffness, damping)
                };
                actm::normal_force_magnitude(stiffness, damping, g.gap, g.normal_speed)
            }
            NormalLaw::Linear => linear::normal_force_magnitude(
                m_eff * c.linear_stiffness_per_mass,
                m_eff * c.linear_damping_per_mass,
                g.gap,
                g.normal_speed,
            ),
            NormalLaw::Hertz(h) => hertz::normal_force_magnitude(
                &h,
                g.gap,
                g.normal_speed,
                m_eff,
                pair.effective_radius,
            ),
        };
        if update.track_contacts && !state.touching {
            state.touching = true;
            if !matches!(self.normal, NormalLaw::Actm) {
                state.impact_speed = g.normal_speed.abs();
            }
        }

        let (tangential_force, sliding) = match self.tangential {
            TangentialLaw::Frictionless => (Vec3::ZERO, false),
            TangentialLaw::SpringHistory => {
                let spring = SpringCoefficients {
                    stiffness: m_eff * c.tangential_stiffness_per_mass,
                    damping: m_eff * c.tangential_damping_per_mass,
                    mu_static: c.materials.mu_s,
                    mu_kinetic: c.materials.mu_k,
                };
                tangential::spring_history_force(
                    &spring,
                    g,
                    normal_magnitude,
                    state,
                    update.spring_increment,
                )
            }
            TangentialLaw::ShearHistory => {
                let (k_t, gamma_t, area_factor) = match self.normal {
                    NormalLaw::Hertz(h) => (
                        h.k_t,
                        h.gamma_t,
                        hertz::hertz_factor(g.gap, pair.effective_radius),
                    ),
                    _ => (
                        m_eff * c.tangential_stiffness_per_mass,
                        c.tangential_damping_per_mass,
                        1.0,
                    ),
                };
                let shear = ShearHistoryCoefficients {
                    k_t,
                    gamma_t,
                    mu: c.materials.mu_k,
                    effective_mass: m_eff,
                    area_factor,
                };
                tangential::shear_history_force(
                    &shear,
                    g,
                    normal_magnitude,
                    state,
                    update.spring_increment,
                )
            }
        };

        // Torques T = R_cp n x F_t on both sides (seed eq. 8), formed where they are summed.
        let arm = g.normal.cross(tangential_force);
        Some(ContactForce {
            force_on_p: -normal_magnitude * g.normal + tangential_force,
            arm,
            lever_p: g.lever_p,
            lever_q: g.lever_q,
            touching: true,
            sliding,
        })
    }
}

fn pair_coefficients(materials: MaterialPair, collision_time: f64) -> PairCoefficients {
    let ln_e = materials.e_dry.ln();
    let tangential_stiffness_per_mass =
        materials.kappa() * PI * PI / (collision_time * collision_time);
    PairCoefficients {
        materials,
        actm: ActmShape::new(materials.e_dry, collision_time),
        tangential_stiffness_per_mass,
        tangential_damping_per_mass: 2.0 * tangential_stiffness_per_mass.sqrt() * (-ln_e)
            / (PI * PI + ln_e * ln_e).sqrt(),
        linear_stiffness_per_mass: linear::stiffness(1.0, materials.e_dry, collision_time),
        linear_damping_per_mass: linear::damping(1.0, materials.e_dry, collision_time),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_memory_is_the_default_one() {
        let empty = ContactState::default();
        assert!(empty.is_empty());
        // Each field on its own makes a memory, -0 springs (equal to +0) do not.
        let variants = [
            ContactState {
                touching: true,
                ..empty
            },
            ContactState {
                sliding: true,
                ..empty
            },
            ContactState {
                impact_speed: 1e-300,
                ..empty
            },
            ContactState {
                stiffness: 2.0,
                ..empty
            },
            ContactState {
                damping: -1.0,
                ..empty
            },
            ContactState {
                spring: Vec3::new(0.0, 0.0, 1e-20),
                ..empty
            },
            ContactState {
                spring: Vec3::new(-0.0, 0.0, 0.0),
                ..empty
            },
            ContactState {
                spring: Vec3::new(f64::NAN, 0.0, 0.0),
                ..empty
            },
        ];
        for state in variants {
            assert_eq!(
                state.is_empty(),
                state == ContactState::default(),
                "{state:?}"
            );
        }
    }
}
