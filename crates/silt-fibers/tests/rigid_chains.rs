//! Rigid fibers (`rigid_links` on top of the gears links) move as rigid bodies for any bead count: in
//! simple shear (RPY) every bead turns at the same angular velocity, the beads' velocities are those of
//! one rigid body, and that motion is the one of the same beads held rigid by the rigid-body
//! projection of the 6N mobility, u = (Kᵀ M⁻¹ K)⁻¹ Kᵀ M⁻¹ V∞ (force- and torque-free,
//! `DenseMobility::rigid_body_motion`), which does not use the constraint solver. Odd bead counts once failed this: their beads of even and
//! odd index spun apart.

use silt_core::Vec3;
use silt_fibers::chain::Fibers;
use silt_fibers::constraints::rigid_links;
use silt_fibers::dynamics::FiberSystem;
use silt_fibers::elasticity::Bending;
use silt_fibers::flows::AmbientFlow;
use silt_fibers::mobility::{Hydrodynamics, Mobility};
use silt_fibers::rpy::RpyKernel;

/// The rigid-body velocity (U at `centre`, Ω) of `positions` in simple shear by the projection of
/// the dense mobility.
fn rigid_body_motion(mobility: &Mobility, positions: &[Vec3], centre: Vec3) -> (Vec3, Vec3) {
    let (flow_v, flow_w) = AmbientFlow::SimpleShear { shear_rate: 1.0 }.at_beads(positions);
    mobility
        .dense(positions)
        .rigid_body_motion(positions, centre, &flow_v, &flow_w)
        .unwrap()
}

#[test]
fn rigid_chains_of_any_bead_count_move_as_rigid_bodies() {
    let a = 0.5;
    for beads in [2, 3, 4, 5, 6, 7, 8, 9, 21] {
        // Tilted out of the shear plane, so that every component of the motion is exercised.
        let direction = Vec3::new(0.6, 0.7, 0.39).normalize();
        let mut fibers = Fibers::new(a).unwrap();
        fibers.add_straight(beads, Vec3::ZERO, direction).unwrap();
        let mobility = Mobility {
            kernel: RpyKernel::new(a, 1.0).unwrap(),
            hydrodynamics: Hydrodynamics::Rpy,
        };
        let mut system =
            FiberSystem::new(fibers, mobility.clone(), Bending::straight(0.0, 1).unwrap());
        let links = rigid_links(&system.fibers, &[]);
        system.constraints.extend(links);
        system.flow = AmbientFlow::SimpleShear { shear_rate: 1.0 };
        let motion = system.motion().unwrap();
        let positions = &system.fibers.positions;
        let centre = positions.iter().sum::<Vec3>() / beads as f64;
        let (u, omega) = rigid_body_motion(&mobility, positions, centre);
        let scale = omega.length() + u.length();
        for (i, &y) in positions.iter().enumerate() {
            let spin_error = (motion.angular_velocities[i] - omega).length() / scale;
            let velocity_error =
                (motion.velocities[i] - (u + omega.cross(y - centre))).length() / scale;
            assert!(
                spin_error < 1e-9 && velocity_error < 1e-9,
                "{beads} beads, bead {i}: W {} against the rigid body's {omega} ({spin_error:e}), \
                 V {} against {} ({velocity_error:e})",
                motion.angular_velocities[i],
                motion.velocities[i],
                u + omega.cross(y - centre)
            );
        }
    }
}
