//! Pair geometry and contact-point kinematics for unequal radii and for walls
//! (Biegert et al. 2017, Appendix A).

use crate::domain::Domain;
use crate::wall::Wall;
use crate::Vec3;
use silt_core::lanes::{Lanes, Vec3Lanes};

/// [`Domain::separation`] for the pair loops, set up once per loop: the same minimum image, but the
/// division and the rounding (a libm call on baseline x86-64) only run when `b - a` may not be the nearest
/// image already, that is when |d| comes within round-off of half the period.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MinimumImage {
    period: Vec3,
    /// Just below half the period along periodic axes, infinite along the others.
    threshold: Vec3,
}

impl MinimumImage {
    pub(crate) fn new(domain: &Domain) -> Self {
        let period = domain.length();
        let threshold = Vec3::from_array(std::array::from_fn(|axis| {
            if domain.periodic[axis] {
                (0.5 - 1e-12) * period[axis]
            } else {
                f64::INFINITY
            }
        }));
        MinimumImage { period, threshold }
    }

    /// `b - a` under the minimum-image convention.
    #[inline]
    pub(crate) fn separation(&self, a: Vec3, b: Vec3) -> Vec3 {
        let mut d = b - a;
        for axis in 0..3 {
            if d[axis].abs() > self.threshold[axis] {
                d[axis] -= self.period[axis] * (d[axis] / self.period[axis]).round();
            }
        }
        d
    }

    /// Whether [`MinimumImage::separation`] may round any of the four lanes of `d = b - a`.
    #[inline(always)]
    pub(crate) fn may_wrap<L: Lanes>(&self, maker: L::Maker, d: &Vec3Lanes<L>) -> bool {
        let beyond = |d: L, threshold: f64| d.abs().gt(L::splat(maker, threshold));
        L::any(
            beyond(d.x, self.threshold.x)
                | beyond(d.y, self.threshold.y)
                | beyond(d.z, self.threshold.z),
        )
    }
}

/// Geometry of one sphere–sphere or sphere–wall pair, seen from particle p.
#[derive(Clone, Copy, Debug)]
pub struct ContactGeometry {
    /// Unit vector from the centre of p towards q (or towards the wall).
    pub normal: Vec3,
    /// Surface gap zeta_n; negative when the surfaces overlap.
    pub gap: f64,
    /// Distance from the centre of p to the contact point, R_p,cp = R_p + zeta_n/2.
    pub lever_p: f64,
    /// Distance from the centre of q to the contact point (zero for a wall).
    pub lever_q: f64,
    /// Relative velocity of the surfaces at the contact point, g_cp (eq. A.5).
    pub contact_point_velocity: Vec3,
    /// Normal component g_cp . n (positive while approaching).
    pub normal_speed: f64,
    /// Tangential part g_t,cp = g_cp - (g_cp . n) n.
    pub tangential_velocity: Vec3,
}

/// Kinematic state of one sphere as seen by a pair kernel.
#[derive(Clone, Copy, Debug)]
pub struct SphereState {
    pub velocity: Vec3,
    pub angular_velocity: Vec3,
    pub radius: f64,
}

/// Pair geometry of spheres p and q with `separation` = x_q - x_p (minimum image) (Appendix A).
#[inline]
pub fn sphere_pair(separation: Vec3, p: &SphereState, q: &SphereState) -> ContactGeometry {
    let distance = separation.length();
    let normal = separation / distance;
    let gap = distance - p.radius - q.radius;
    let lever_p = p.radius + 0.5 * gap;
    let lever_q = q.radius + 0.5 * gap;
    let relative = p.velocity - q.velocity;
    let contact_point_velocity = relative
        + lever_p * p.angular_velocity.cross(normal)
        + lever_q * q.angular_velocity.cross(normal);
    finish(normal, gap, lever_p, lever_q, contact_point_velocity)
}

/// Geometry of sphere p against a planar wall; the wall plays q with infinite radius (Appendix A).
#[inline]
pub fn sphere_wall(position: Vec3, p: &SphereState, wall: &Wall) -> ContactGeometry {
    let normal = -wall.normal;
    let gap = wall.distance(position) - p.radius;
    let lever_p = p.radius + 0.5 * gap;
    let relative = p.velocity - wall.velocity;
    let contact_point_velocity = relative + lever_p * p.angular_velocity.cross(normal);
    finish(normal, gap, lever_p, 0.0, contact_point_velocity)
}

#[inline]
fn finish(
    normal: Vec3,
    gap: f64,
    lever_p: f64,
    lever_q: f64,
    contact_point_velocity: Vec3,
) -> ContactGeometry {
    let normal_speed = contact_point_velocity.dot(normal);
    ContactGeometry {
        normal,
        gap,
        lever_p,
        lever_q,
        contact_point_velocity,
        normal_speed,
        tangential_velocity: contact_point_velocity - normal_speed * normal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rolling_without_slip_has_no_contact_point_velocity() {
        // A sphere of radius 1 rolling on a floor at speed 1: omega x (-R e_z) = -u.
        let wall = Wall {
            point: Vec3::ZERO,
            normal: Vec3::Z,
            material: 0,
            velocity: Vec3::ZERO,
        };
        let p = SphereState {
            velocity: Vec3::X,
            angular_velocity: Vec3::new(0.0, 1.0, 0.0),
            radius: 1.0,
        };
        let g = sphere_wall(Vec3::new(0.0, 0.0, 1.0), &p, &wall);
        assert!(g.contact_point_velocity.length() < 1e-15);
        assert_eq!(g.gap, 0.0);
    }

    #[test]
    fn unequal_radii_levers_meet_at_the_contact_point() {
        let p = SphereState {
            velocity: Vec3::ZERO,
            angular_velocity: Vec3::ZERO,
            radius: 1.0,
        };
        let q = SphereState {
            velocity: Vec3::ZERO,
            angular_velocity: Vec3::ZERO,
            radius: 0.5,
        };
        let g = sphere_pair(Vec3::new(1.4, 0.0, 0.0), &p, &q);
        assert!((g.gap + 0.1).abs() < 1e-15);
        assert!((g.lever_p + g.lever_q - 1.4).abs() < 1e-15);
    }
}
