//! Lagrangian markers evenly spread on a sphere surface (Uhlmann 2005, restated in notes/ibm.md).

use crate::Vec3;
use std::f64::consts::PI;

/// The markers of one sphere, relative to its centre, with the volume each stands for.
#[derive(Clone, Debug, PartialEq)]
pub struct SphereMarkers {
    /// Positions relative to the centre, on the sphere of radius `marker_radius`.
    pub offsets: Vec<Vec3>,
    /// Volume Delta V_l of each marker (all equal).
    pub volume: f64,
    /// Radius of the sphere the markers lie on (the particle radius less the retraction).
    pub marker_radius: f64,
}

impl SphereMarkers {
    /// Markers for a sphere of `radius` on a grid of cell size `h`, placed on the sphere of radius
    /// `radius - retraction h` (retraction 0: on the surface, Uhlmann 2005; about 0.3: Breugem 2012's
    /// correction of the effective radius). Their count makes each stand for about one cell:
    /// N_L = round(pi (12 R_m^2 + h^2) / (3 h^2)), and Delta V_l = pi h (12 R_m^2 + h^2) / (3 N_L), so that
    /// they add up to the shell of thickness h around the marker sphere (Uhlmann 2005).
    pub fn new(radius: f64, h: f64, retraction: f64) -> Self {
        let marker_radius = radius - retraction * h;
        let shell = PI * h * (12.0 * marker_radius * marker_radius + h * h) / 3.0;
        let count = ((shell / (h * h * h)).round() as usize).max(1);
        SphereMarkers {
            offsets: fibonacci_sphere(count)
                .into_iter()
                .map(|d| marker_radius * d)
                .collect(),
            volume: shell / count as f64,
            marker_radius,
        }
    }

    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }
}

/// `count` unit vectors spread evenly over the sphere: the Fibonacci (golden-angle spiral) lattice, each
/// point at the centre of a band of equal area, z_l = 1 - (2 l + 1) / N, successive longitudes a golden
/// angle apart.
pub fn fibonacci_sphere(count: usize) -> Vec<Vec3> {
    let golden_angle = PI * (3.0 - 5f64.sqrt());
    (0..count)
        .map(|l| {
            let z = 1.0 - (2 * l + 1) as f64 / count as f64;
            let ring = (1.0 - z * z).max(0.0).sqrt();
            let longitude = golden_angle * l as f64;
            Vec3::new(ring * longitude.cos(), ring * longitude.sin(), z)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_and_volume_follow_the_resolution() {
        for (d_over_h, expected) in [(8.0, 202), (16.0, 805), (32.0, 3218)] {
            let m = SphereMarkers::new(0.5 * d_over_h, 1.0, 0.0);
            assert_eq!(m.len(), expected, "D/h = {d_over_h}");
            let shell = PI / 3.0 * (12.0 * (0.5 * d_over_h).powi(2) + 1.0);
            assert!((m.volume * m.len() as f64 - shell).abs() < 1e-9 * shell);
            assert!((m.volume - 1.0).abs() < 0.01, "about one cell each");
        }
    }

    /// The points lie on the sphere, their centroid is the centre (to O(1/N)), and the nearest-neighbour
    /// spacing is even: between 0.8 and 1.2 of the mean spacing sqrt(4 pi R^2 / N) for every marker.
    #[test]
    fn markers_are_evenly_spread() {
        let m = SphereMarkers::new(8.0, 1.0, 0.3);
        let r = m.marker_radius;
        assert!((r - 7.7).abs() < 1e-12);
        let centroid = m.offsets.iter().sum::<Vec3>() / m.len() as f64;
        assert!(
            centroid.length() < 2.0 * r / m.len() as f64,
            "centroid {centroid}"
        );
        let mean_spacing = (4.0 * PI * r * r / m.len() as f64).sqrt();
        for (l, x) in m.offsets.iter().enumerate() {
            assert!((x.length() - r).abs() < 1e-12);
            let nearest = m
                .offsets
                .iter()
                .enumerate()
                .filter(|&(k, _)| k != l)
                .map(|(_, y)| x.distance(*y))
                .fold(f64::MAX, f64::min);
            let ratio = nearest / mean_spacing;
            assert!(
                (0.75..1.2).contains(&ratio),
                "marker {l}: spacing ratio {ratio}"
            );
        }
    }
}
