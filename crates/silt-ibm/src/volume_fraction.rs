//! Solid volume fraction of the cells from the spheres' signed distance (seed eq. 32-33 need it on the
//! grid; Kempe & Froehlich 2012 use it for the fluid inside the particles): for a cell with corner
//! distances phi_m (negative inside), alpha = sum_m -phi_m H(-phi_m) / sum_m |phi_m| (Kempe & Froehlich
//! 2012, eq. 31), exact for a plane cutting the cell along a diagonal and second-order accurate in general.

use crate::Vec3;

/// Signed distance from `x` to the surface of a sphere (negative inside).
#[inline]
pub fn sphere_distance(x: Vec3, centre: Vec3, radius: f64) -> f64 {
    (x - centre).length() - radius
}

/// Fraction of the cube with low corner `low` and edge `h` inside the sphere, from the signed distances
/// at its eight corners.
pub fn cell_fraction(low: Vec3, h: f64, centre: Vec3, radius: f64) -> f64 {
    // Cells farther than half a diagonal from the surface are wholly inside or outside.
    let middle = low + Vec3::splat(0.5 * h);
    let d = sphere_distance(middle, centre, radius);
    let half_diagonal = 0.5 * 3f64.sqrt() * h;
    if d >= half_diagonal {
        return 0.0;
    }
    if d <= -half_diagonal {
        return 1.0;
    }
    corner_fraction(std::array::from_fn(|corner| {
        let offset = Vec3::new(
            (corner & 1) as f64,
            ((corner >> 1) & 1) as f64,
            ((corner >> 2) & 1) as f64,
        );
        sphere_distance(low + h * offset, centre, radius)
    }))
}

/// Kempe & Froehlich (2012) eq. 31: the fraction of a cell inside, from the signed distances `phi` at
/// its eight corners, sum_m -phi_m H(-phi_m) / sum_m |phi_m|.
#[inline]
pub fn corner_fraction(phi: [f64; 8]) -> f64 {
    let (mut inside, mut total) = (0.0, 0.0);
    for phi in phi {
        inside += (-phi).max(0.0);
        total += phi.abs();
    }
    if total == 0.0 {
        0.0
    } else {
        inside / total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    /// The fractions of all cells add up to the sphere volume, with an error falling at about second
    /// order in h / R.
    #[test]
    fn fractions_add_up_to_the_sphere_volume() {
        let centre = Vec3::new(0.31, -0.17, 0.44);
        let radius = 1.0;
        let mut errors = Vec::new();
        for cells_per_radius in [4, 8, 16] {
            let h = radius / cells_per_radius as f64;
            let n = 2 * cells_per_radius + 4;
            let origin = centre - Vec3::splat(0.5 * n as f64 * h) + Vec3::splat(0.123 * h);
            let mut volume = 0.0;
            for k in 0..n {
                for j in 0..n {
                    for i in 0..n {
                        let low = origin + h * Vec3::new(i as f64, j as f64, k as f64);
                        volume += cell_fraction(low, h, centre, radius) * h * h * h;
                    }
                }
            }
            errors.push((volume / (4.0 / 3.0 * PI) - 1.0).abs());
        }
        assert!(errors[2] < 2e-3, "errors {errors:?}");
        for pair in errors.windows(2) {
            assert!(pair[1] < 0.5 * pair[0], "errors {errors:?}");
        }
    }

    #[test]
    fn cells_far_from_the_surface_are_empty_or_full() {
        let c = Vec3::ZERO;
        assert_eq!(cell_fraction(Vec3::splat(-0.05), 0.1, c, 1.0), 1.0);
        assert_eq!(cell_fraction(Vec3::splat(2.0), 0.1, c, 1.0), 0.0);
        // A cell cut through its middle by a (locally) flat surface: about half.
        let half = cell_fraction(Vec3::new(-0.05, -0.05, 999.95), 0.1, Vec3::ZERO, 1000.0);
        assert!((half - 0.5).abs() < 1e-3, "{half}");
    }
}
