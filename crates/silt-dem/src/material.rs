//! Material parameters of the spheres and walls, and the mixing of two materials in a contact.

use serde::{Deserialize, Serialize};

/// Poisson ratio of glass, the seed's default material (it sets k_t / k_n only).
pub const DEFAULT_POISSON: f64 = 0.22;

/// Mechanical properties of one material (Biegert et al. 2017, sec. 3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Material {
    pub name: String,
    /// Density rho_p.
    pub density: f64,
    /// Dry restitution coefficient e_dry in (0, 1].
    pub e_dry: f64,
    /// Poisson ratio nu, enters the tangential stiffness ratio kappa.
    pub poisson: f64,
    /// Static friction coefficient mu_s (>= mu_k).
    pub mu_s: f64,
    /// Kinetic friction coefficient mu_k.
    pub mu_k: f64,
}

/// The parameters of a contact between two materials: arithmetic means of the two sides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MaterialPair {
    pub e_dry: f64,
    pub poisson: f64,
    pub mu_s: f64,
    pub mu_k: f64,
}

impl MaterialPair {
    pub fn mix(a: &Material, b: &Material) -> Self {
        MaterialPair {
            e_dry: 0.5 * (a.e_dry + b.e_dry),
            poisson: 0.5 * (a.poisson + b.poisson),
            mu_s: 0.5 * (a.mu_s + b.mu_s),
            mu_k: 0.5 * (a.mu_k + b.mu_k),
        }
    }

    /// Ratio of tangential to normal stiffness kappa = 2(1 - nu)/(2 - nu) (Biegert et al. 2017, eq. 15).
    pub fn kappa(&self) -> f64 {
        2.0 * (1.0 - self.poisson) / (2.0 - self.poisson)
    }
}
