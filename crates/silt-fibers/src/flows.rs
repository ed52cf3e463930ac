//! Ambient flows `u_∞(x)` seen by the beads: a bead at `Y` is carried at `V_∞ = u_∞(Y)` and turned
//! at `W_∞ = ½ ∇ × u_∞(Y)` (seed eq. 2.16's `V_∞*`; the stresslet of a rigid bead in a strain is a
//! higher multipole the RPY level leaves out).

use silt_core::Vec3;

/// An imposed background flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AmbientFlow {
    /// Fluid at rest.
    Quiescent,
    /// `u = U`.
    Uniform { velocity: Vec3 },
    /// Simple shear `u = γ̇ y e_x` (vorticity `-γ̇ e_z`).
    SimpleShear { shear_rate: f64 },
    /// Planar extension `u = ε̇ (x, -y, 0)`; compression for `ε̇ < 0`.
    PlanarExtension { strain_rate: f64 },
    /// Plane Poiseuille flow along x between walls at `y = centre ± half_width` (walls not modelled):
    /// `u = U_max (1 - ((y - centre) / half_width)²) e_x`.
    Poiseuille {
        max_velocity: f64,
        centre: f64,
        half_width: f64,
    },
}

impl AmbientFlow {
    /// Checks the parameters (finite; the Poiseuille half-width positive).
    pub fn validate(&self) -> Result<(), String> {
        let finite = |name: &str, v: f64| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(format!("{name} must be finite, got {v}"))
            }
        };
        match *self {
            AmbientFlow::Quiescent => Ok(()),
            AmbientFlow::Uniform { velocity } => {
                if silt_core::is_finite3(velocity) {
                    Ok(())
                } else {
                    Err(format!("velocity must be finite, got {velocity}"))
                }
            }
            AmbientFlow::SimpleShear { shear_rate } => finite("shear_rate", shear_rate),
            AmbientFlow::PlanarExtension { strain_rate } => finite("strain_rate", strain_rate),
            AmbientFlow::Poiseuille {
                max_velocity,
                centre,
                half_width,
            } => {
                finite("max_velocity", max_velocity)?;
                finite("centre", centre)?;
                if half_width.is_finite() && half_width > 0.0 {
                    Ok(())
                } else {
                    Err(format!(
                        "half_width must be positive and finite, got {half_width}"
                    ))
                }
            }
        }
    }

    /// `(u_∞(x), ½ ∇ × u_∞(x))`.
    pub fn at(&self, x: Vec3) -> (Vec3, Vec3) {
        match *self {
            AmbientFlow::Quiescent => (Vec3::ZERO, Vec3::ZERO),
            AmbientFlow::Uniform { velocity } => (velocity, Vec3::ZERO),
            AmbientFlow::SimpleShear { shear_rate } => (
                Vec3::new(shear_rate * x.y, 0.0, 0.0),
                Vec3::new(0.0, 0.0, -0.5 * shear_rate),
            ),
            AmbientFlow::PlanarExtension { strain_rate } => (
                Vec3::new(strain_rate * x.x, -strain_rate * x.y, 0.0),
                Vec3::ZERO,
            ),
            AmbientFlow::Poiseuille {
                max_velocity,
                centre,
                half_width,
            } => {
                let eta = (x.y - centre) / half_width;
                // ω_z = -∂u/∂y = 2 U_max (y - c) / h².
                (
                    Vec3::new(max_velocity * (1.0 - eta * eta), 0.0, 0.0),
                    Vec3::new(0.0, 0.0, max_velocity * eta / half_width),
                )
            }
        }
    }

    /// The flow at every bead: `(V_∞, W_∞)`.
    pub fn at_beads(&self, positions: &[Vec3]) -> (Vec<Vec3>, Vec<Vec3>) {
        positions.iter().map(|&y| self.at(y)).unzip()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The angular velocity is half the curl of the velocity, by central differences.
    #[test]
    fn rotation_is_half_the_vorticity() {
        let flows = [
            AmbientFlow::Uniform {
                velocity: Vec3::new(1.0, -2.0, 0.5),
            },
            AmbientFlow::SimpleShear { shear_rate: 1.7 },
            AmbientFlow::PlanarExtension { strain_rate: -0.8 },
            AmbientFlow::Poiseuille {
                max_velocity: 2.0,
                centre: 0.3,
                half_width: 1.5,
            },
        ];
        let x = Vec3::new(0.4, -0.7, 1.1);
        let h = 1e-5;
        for flow in flows {
            flow.validate().unwrap();
            let d = |axis: Vec3| (flow.at(x + h * axis).0 - flow.at(x - h * axis).0) / (2.0 * h);
            let (dx, dy, dz) = (d(Vec3::X), d(Vec3::Y), d(Vec3::Z));
            let curl = Vec3::new(dy.z - dz.y, dz.x - dx.z, dx.y - dy.x);
            assert!((flow.at(x).1 - 0.5 * curl).length() < 1e-9, "{flow:?}");
            // Incompressible.
            assert!((dx.x + dy.y + dz.z).abs() < 1e-9, "{flow:?}");
        }
        assert!(AmbientFlow::Poiseuille {
            max_velocity: 1.0,
            centre: 0.0,
            half_width: 0.0
        }
        .validate()
        .is_err());
        assert!(AmbientFlow::SimpleShear {
            shear_rate: f64::NAN
        }
        .validate()
        .is_err());
    }
}
