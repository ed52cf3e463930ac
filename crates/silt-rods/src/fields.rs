//! Derived fields for output and diagnostics: strains, internal forces and moments, directors, and
//! the energies of a rod.

use silt_core::Vec3;

use crate::dynamics::{kinetic_energy, RodModel, RodMotion};
use crate::potential::energy;
use crate::quaternion::{to_world, Quat};
use crate::rod::{End, Rod};
use crate::strains::{clamp_curvature, curvature, shear_strain};

/// Per segment: `Γ` (body), the internal force `n = p (C_G Γ) p̄` (world) and the directors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SegmentFields {
    pub shear_strain: Vec3,
    pub internal_force: Vec3,
    pub directors: [Vec3; 3],
}

/// Per node: `K` (body frame of the segment before it; the clamp's at a clamped end, zero at a free
/// or hinged end) and the internal moment `C_K (K - K0)` in the world frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeFields {
    pub curvature: Vec3,
    pub internal_moment: Vec3,
}

/// The directors `d_k = p e_k p̄` of a unit quaternion.
pub fn directors(p: Quat) -> [Vec3; 3] {
    std::array::from_fn(|k| to_world(p, Vec3::AXES[k]))
}

pub fn segment_fields(rod: &Rod) -> Vec<SegmentFields> {
    (0..rod.segments())
        .map(|j| {
            let gamma = shear_strain(rod, j);
            let p = rod.orientations[j];
            SegmentFields {
                shear_strain: gamma,
                internal_force: to_world(p, rod.stiffness.shear_extension * gamma),
                directors: directors(p),
            }
        })
        .collect()
}

pub fn node_fields(rod: &Rod) -> Vec<NodeFields> {
    let n = rod.segments();
    let c_k = rod.stiffness.bending_torsion;
    let mut out = vec![
        NodeFields {
            curvature: Vec3::ZERO,
            internal_moment: Vec3::ZERO,
        };
        n + 1
    ];
    for (j, node) in out.iter_mut().enumerate().take(n).skip(1) {
        let k = curvature(rod, j);
        node.curvature = k;
        node.internal_moment = to_world(
            rod.orientations[j - 1],
            c_k * (k - rod.rest_curvature[j - 1]),
        );
    }
    for clamp in &rod.clamps {
        let (k, _) = clamp_curvature(rod, clamp);
        let (node, frame) = match clamp.end {
            End::First => (0, clamp.frame),
            End::Last => (n, rod.orientations[n - 1]),
        };
        out[node].curvature = k;
        out[node].internal_moment = to_world(frame, c_k * k);
    }
    out
}

/// Elastic and kinetic energy.
pub fn energies(rod: &Rod, motion: &RodMotion, model: &RodModel) -> (f64, f64) {
    (energy(rod), kinetic_energy(motion, &model.inertia))
}
