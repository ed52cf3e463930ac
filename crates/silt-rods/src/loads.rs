//! External loads on a rod: gravity, a distributed force per unit length, point forces on nodes, and
//! forces and torques at the ends, either dead (fixed in the world frame) or follower (fixed in the
//! end cross-section's body frame, turning with it).
//!
//! Forces act on nodes (world frame); torques act on segments and enter the equations of motion in
//! the body frame. For an end segment with quaternion p:
//!
//! ```text
//! dead force F:        on the end node, F
//! follower force F_b:  on the end node, p F_b p̄          (∂/∂p_c = Im(e_c F_b p̄ + p F_b ē_c))
//! dead torque T:       on the end segment, p̄ T p (body)   (∂/∂p_c = Im(ē_c T p + p̄ T e_c))
//! follower torque T_b: on the end segment, T_b (body)
//! ```

use silt_core::Vec3;

use crate::dynamics::Inertia;
use crate::quaternion::{conj, mul, pure, to_body, to_world, vector, Quat};
use crate::rod::{End, Rod};

/// A force and a torque at one end.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EndLoad {
    pub end: End,
    /// Force on the end node: world components (dead) or components along d1, d2, d3 (follower).
    pub force: Vec3,
    /// Torque on the end segment, world (dead) or body (follower) components.
    pub torque: Vec3,
    pub follower: bool,
}

/// All external loads on one rod.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Loads {
    /// Uniform acceleration on the node masses.
    pub gravity: Vec3,
    /// Dead point forces `(node, force)`.
    pub node_forces: Vec<(usize, Vec3)>,
    /// Dead force per unit reference length, lumped onto the nodes like the mass.
    pub distributed_force: Vec3,
    pub end_loads: Vec<EndLoad>,
}

/// Generalised external forces: world forces on nodes and body torques on segments.
#[derive(Clone, Debug, PartialEq)]
pub struct ExternalForces {
    pub nodes: Vec<Vec3>,
    pub torques: Vec<Vec3>,
}

/// The end node and end segment of `end`.
pub fn end_indices(rod: &Rod, end: End) -> (usize, usize) {
    match end {
        End::First => (0, 0),
        End::Last => (rod.segments(), rod.segments() - 1),
    }
}

impl Loads {
    /// Whether any load depends on the configuration (follower forces, dead torques).
    pub fn depends_on_configuration(&self) -> bool {
        self.end_loads.iter().any(|l| {
            (l.follower && l.force != Vec3::ZERO) || (!l.follower && l.torque != Vec3::ZERO)
        })
    }

    /// The external forces on `rod`, all scaled by `factor` (load stepping).
    pub fn forces(&self, rod: &Rod, inertia: &Inertia, factor: f64) -> ExternalForces {
        let mut out = ExternalForces {
            nodes: vec![Vec3::ZERO; rod.nodes.len()],
            torques: vec![Vec3::ZERO; rod.segments()],
        };
        self.add_forces(rod, inertia, factor, &mut out.nodes, &mut out.torques);
        out
    }

    /// Adds the external node forces and body torques into `nodes` and `torques`.
    pub fn add_forces(
        &self,
        rod: &Rod,
        inertia: &Inertia,
        factor: f64,
        nodes: &mut [Vec3],
        torques: &mut [Vec3],
    ) {
        if self.gravity != Vec3::ZERO {
            for (f, m) in nodes.iter_mut().zip(&inertia.node_masses) {
                *f += *m * self.gravity * factor;
            }
        }
        if self.distributed_force != Vec3::ZERO {
            for (j, h) in rod.lengths.iter().enumerate() {
                let half = 0.5 * h * factor * self.distributed_force;
                nodes[j] += half;
                nodes[j + 1] += half;
            }
        }
        for (j, f) in &self.node_forces {
            nodes[*j] += *f * factor;
        }
        for load in &self.end_loads {
            let (node, segment) = end_indices(rod, load.end);
            let p = rod.orientations[segment];
            if load.follower {
                nodes[node] += factor * to_world(p, load.force);
                torques[segment] += factor * load.torque;
            } else {
                nodes[node] += factor * load.force;
                torques[segment] += factor * to_body(p, load.torque);
            }
        }
    }

    /// The configuration-dependent parts' derivatives with respect to the end segments' quaternion
    /// components: `(node, segment, ∂F_node/∂p_c for c = 0..4)` and `(segment, ∂τ/∂p_c)`.
    #[allow(clippy::type_complexity)]
    pub fn derivatives(
        &self,
        rod: &Rod,
    ) -> (Vec<(usize, usize, [Vec3; 4])>, Vec<(usize, [Vec3; 4])>) {
        let mut force_terms = Vec::new();
        let mut torque_terms = Vec::new();
        for load in &self.end_loads {
            let (node, segment) = end_indices(rod, load.end);
            let p = rod.orientations[segment];
            let unit = |c: usize| -> Quat {
                let mut e = [0.0; 4];
                e[c] = 1.0;
                e
            };
            if load.follower && load.force != Vec3::ZERO {
                let f = pure(load.force);
                let d = std::array::from_fn(|c| {
                    vector(mul(mul(unit(c), f), conj(p))) + vector(mul(mul(p, f), conj(unit(c))))
                });
                force_terms.push((node, segment, d));
            }
            if !load.follower && load.torque != Vec3::ZERO {
                let t = pure(load.torque);
                let d = std::array::from_fn(|c| {
                    vector(mul(mul(conj(unit(c)), t), p)) + vector(mul(mul(conj(p), t), unit(c)))
                });
                torque_terms.push((segment, d));
            }
        }
        (force_terms, torque_terms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rod::{rotation, Stiffness};

    /// The derivatives of follower forces and dead torques equal central differences, also for
    /// non-unit quaternions; the distributed force and gravity add up to their totals.
    #[test]
    fn load_derivatives_match_differences() {
        let stiffness = Stiffness::circular(0.1, 1.0, 0.4, 1.0);
        let mut rod = Rod::straight(3, 1.5, Vec3::ZERO, Vec3::X, Vec3::Y, stiffness).unwrap();
        rod.orientations[2] = mul(
            rotation(Vec3::new(0.3, -1.0, 0.4), 0.8),
            rod.orientations[2],
        )
        .map(|c| 1.1 * c);
        let inertia = Inertia::circular(&rod, 0.1, 100.0);
        let loads = Loads {
            gravity: Vec3::new(0.0, 0.0, -9.81),
            distributed_force: Vec3::new(1.0, 2.0, 0.0),
            end_loads: vec![
                EndLoad {
                    end: End::Last,
                    force: Vec3::new(0.3, -0.2, 1.0),
                    torque: Vec3::new(0.5, 0.1, -0.7),
                    follower: true,
                },
                EndLoad {
                    end: End::Last,
                    force: Vec3::new(1.0, 0.0, 0.0),
                    torque: Vec3::new(-0.2, 0.9, 0.4),
                    follower: false,
                },
            ],
            ..Loads::default()
        };
        let total: Vec3 = loads.forces(&rod, &inertia, 1.0).nodes.iter().sum::<Vec3>()
            - to_world(rod.orientations[2], loads.end_loads[0].force)
            - loads.end_loads[1].force;
        let mass: f64 = inertia.node_masses.iter().sum();
        let expected = mass * loads.gravity + 1.5 * loads.distributed_force;
        assert!((total - expected).length() < 1e-12, "{total} vs {expected}");

        let (force_terms, torque_terms) = loads.derivatives(&rod);
        assert_eq!((force_terms.len(), torque_terms.len()), (1, 1));
        let eps = 1e-6;
        for c in 0..4 {
            let shifted = |s: f64| {
                let mut r = rod.clone();
                r.orientations[2][c] += s;
                loads.forces(&r, &inertia, 1.0)
            };
            let (plus, minus) = (shifted(eps), shifted(-eps));
            let df = (plus.nodes[3] - minus.nodes[3]) / (2.0 * eps);
            let dt = (plus.torques[2] - minus.torques[2]) / (2.0 * eps);
            assert!(
                (df - force_terms[0].2[c]).length() < 1e-8,
                "{df} vs {}",
                force_terms[0].2[c]
            );
            assert!(
                (dt - torque_terms[0].1[c]).length() < 1e-8,
                "{dt} vs {}",
                torque_terms[0].1[c]
            );
        }
    }
}
