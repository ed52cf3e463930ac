//! The spheres, stored as parallel arrays (structure of arrays) addressed by particle index.

use crate::Vec3;
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// All spheres of a simulation. Fixed spheres keep their position and velocity.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Particles {
    pub position: Vec<Vec3>,
    pub velocity: Vec<Vec3>,
    pub angular_velocity: Vec<Vec3>,
    pub radius: Vec<f64>,
    pub mass: Vec<f64>,
    /// Moment of inertia of a solid sphere, 2/5 m R^2.
    pub inertia: Vec<f64>,
    pub material: Vec<usize>,
    pub fixed: Vec<bool>,
}

impl Particles {
    pub fn len(&self) -> usize {
        self.position.len()
    }

    pub fn is_empty(&self) -> bool {
        self.position.is_empty()
    }

    /// Appends a sphere of the given radius and density.
    pub fn push(
        &mut self,
        position: Vec3,
        velocity: Vec3,
        radius: f64,
        density: f64,
        material: usize,
        fixed: bool,
    ) {
        let mass = density * 4.0 / 3.0 * PI * radius.powi(3);
        self.position.push(position);
        self.velocity.push(velocity);
        self.angular_velocity.push(Vec3::ZERO);
        self.radius.push(radius);
        self.mass.push(mass);
        self.inertia.push(0.4 * mass * radius * radius);
        self.material.push(material);
        self.fixed.push(fixed);
    }

    pub fn max_radius(&self) -> f64 {
        self.radius.iter().copied().fold(0.0, f64::max)
    }
}
