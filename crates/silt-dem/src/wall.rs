//! Planar walls of any orientation.

use crate::Vec3;
use serde::{Deserialize, Serialize};

/// An infinite plane through `point` whose unit `normal` points into the region the particles occupy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Wall {
    pub point: Vec3,
    pub normal: Vec3,
    /// Index into the material table.
    pub material: usize,
    /// Velocity of the wall surface (the plane itself does not move; a moving belt or Couette wall).
    pub velocity: Vec3,
}

impl Wall {
    /// Signed distance of `x` from the plane, positive on the particle side.
    #[inline]
    pub fn distance(&self, x: Vec3) -> f64 {
        (x - self.point).dot(self.normal)
    }
}
