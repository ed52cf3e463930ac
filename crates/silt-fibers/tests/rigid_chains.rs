//! Rigid fibers (`rigid_links` on top of the gears links) move as rigid bodies for any bead count: in
//! simple shear (RPY) every bead turns at the same angular velocity, the beads' velocities are those of
//! one rigid body, and that motion is the one of the same beads held rigid by the rigid-body
//! projection of the 6N mobility, u = (Kᵀ M⁻¹ K)⁻¹ Kᵀ M⁻¹ V∞ (force- and torque-free), computed here
//! independently of the constraint solver. Odd bead counts once failed this: their beads of even and
//! odd index spun apart.

use silt_core::Vec3;
use silt_fibers::chain::Fibers;
use silt_fibers::constraints::rigid_links;
use silt_fibers::dynamics::FiberSystem;
use silt_fibers::elasticity::Bending;
use silt_fibers::flows::AmbientFlow;
use silt_fibers::mobility::{Hydrodynamics, Mobility};
use silt_fibers::rpy::RpyKernel;

/// Solves `a x = b` (dense, row-major, n x n) by Gaussian elimination with partial pivoting.
fn solve(mut a: Vec<f64>, mut b: Vec<f64>, n: usize) -> Vec<f64> {
    for col in 0..n {
        let pivot = (col..n)
            .max_by(|&i, &j| a[i * n + col].abs().total_cmp(&a[j * n + col].abs()))
            .unwrap();
        for k in 0..n {
            a.swap(col * n + k, pivot * n + k);
        }
        b.swap(col, pivot);
        for row in col + 1..n {
            let factor = a[row * n + col] / a[col * n + col];
            for k in col..n {
                a[row * n + k] -= factor * a[col * n + k];
            }
            b[row] -= factor * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let sum: f64 = (row + 1..n).map(|k| a[row * n + k] * x[k]).sum();
        x[row] = (b[row] - sum) / a[row * n + row];
    }
    x
}

/// The rigid-body velocity (U at `centre`, Ω) of `positions` in simple shear by the projection of
/// the dense mobility.
fn rigid_body_motion(mobility: &Mobility, positions: &[Vec3], centre: Vec3) -> (Vec3, Vec3) {
    let n = positions.len();
    let size = 6 * n;
    let dense = mobility.dense(positions);
    let (flow_v, flow_w) = AmbientFlow::SimpleShear { shear_rate: 1.0 }.at_beads(positions);
    // K: 6N x 6, rows (V_i, W_i), columns (U, Ω): V_i = U + Ω × r_i, W_i = Ω.
    let mut k = vec![0.0; size * 6];
    for (i, &y) in positions.iter().enumerate() {
        let r = y - centre;
        for d in 0..3 {
            k[(6 * i + d) * 6 + d] = 1.0;
            k[(6 * i + 3 + d) * 6 + 3 + d] = 1.0;
        }
        // Ω × r = -[r]x Ω.
        let cross = [[0.0, r.z, -r.y], [-r.z, 0.0, r.x], [r.y, -r.x, 0.0]];
        for d in 0..3 {
            for e in 0..3 {
                k[(6 * i + d) * 6 + 3 + e] = cross[d][e];
            }
        }
    }
    // M⁻¹ K and M⁻¹ V∞, column by column.
    let column = |c: usize| (0..size).map(|row| k[row * 6 + c]).collect::<Vec<f64>>();
    let minv_k: Vec<Vec<f64>> = (0..6)
        .map(|c| solve(dense.values.clone(), column(c), size))
        .collect();
    let flow: Vec<f64> = (0..n)
        .flat_map(|i| flow_v[i].to_array().into_iter().chain(flow_w[i].to_array()))
        .collect();
    let minv_flow = solve(dense.values.clone(), flow, size);
    let mut resistance = vec![0.0; 36];
    let mut right = vec![0.0; 6];
    for a in 0..6 {
        let ka = column(a);
        for b in 0..6 {
            resistance[a * 6 + b] = ka.iter().zip(&minv_k[b]).map(|(x, y)| x * y).sum();
        }
        right[a] = ka.iter().zip(&minv_flow).map(|(x, y)| x * y).sum();
    }
    let u = solve(resistance, right, 6);
    (Vec3::new(u[0], u[1], u[2]), Vec3::new(u[3], u[4], u[5]))
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
        let mut system = FiberSystem::new(fibers, mobility, Bending::straight(0.0, 1).unwrap());
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
