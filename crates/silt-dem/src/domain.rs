//! The simulation box: its bounds and which directions are periodic.

use crate::Vec3;
use serde::{Deserialize, Serialize};

/// Axis-aligned box; periodic directions wrap positions and use the minimum-image convention.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Domain {
    pub min: Vec3,
    pub max: Vec3,
    pub periodic: [bool; 3],
}

impl Domain {
    pub fn length(&self) -> Vec3 {
        self.max - self.min
    }

    /// Separation vector `b - a` under the minimum-image convention in periodic directions.
    #[inline]
    pub fn separation(&self, a: Vec3, b: Vec3) -> Vec3 {
        let mut d = b - a;
        let l = self.length();
        for axis in 0..3 {
            if self.periodic[axis] {
                d[axis] -= l[axis] * (d[axis] / l[axis]).round();
            }
        }
        d
    }

    /// Maps a position back into the box along periodic directions.
    #[inline]
    pub fn wrap(&self, mut x: Vec3) -> Vec3 {
        let l = self.length();
        for axis in 0..3 {
            if self.periodic[axis] {
                let mut v = x[axis];
                if v < self.min[axis] || v >= self.max[axis] {
                    v -= l[axis] * ((v - self.min[axis]) / l[axis]).floor();
                    // Round-off can land exactly on max; fold it back to min.
                    if v >= self.max[axis] {
                        v = self.min[axis];
                    }
                }
                x[axis] = v;
            }
        }
        x
    }

    /// True when `x` lies inside the box in the non-periodic directions.
    pub fn contains(&self, x: Vec3) -> bool {
        (0..3).all(|a| self.periodic[a] || (x[a] >= self.min[a] && x[a] <= self.max[a]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn periodic_box() -> Domain {
        Domain {
            min: Vec3::ZERO,
            max: Vec3::new(10.0, 10.0, 10.0),
            periodic: [true, true, false],
        }
    }

    #[test]
    fn minimum_image_picks_the_nearest_copy() {
        let d = periodic_box();
        let s = d.separation(Vec3::new(0.5, 5.0, 1.0), Vec3::new(9.5, 5.0, 9.0));
        assert!((s - Vec3::new(-1.0, 0.0, 8.0)).length() < 1e-12);
    }

    #[test]
    fn wrap_stays_inside() {
        let d = periodic_box();
        let w = d.wrap(Vec3::new(-0.25, 10.0, 3.0));
        assert!((w - Vec3::new(9.75, 0.0, 3.0)).length() < 1e-12);
        assert!(d.contains(w));
    }
}
