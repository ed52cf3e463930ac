//! The spheres, stored as parallel arrays (structure of arrays) addressed by particle index.

use crate::Vec3;
use rand::Rng;
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

    /// Random velocities of temperature `temperature` (k T in the units of the run) added to
    /// particles `first..`: uniform in each component, zero net momentum, rescaled so that
    /// sum m u^2 = 3 (N - 1) k T over the N particles, as LAMMPS `velocity create` does.
    pub fn add_thermal_velocities(&mut self, first: usize, temperature: f64, rng: &mut impl Rng) {
        let members = first..self.len();
        let n = members.len();
        if n < 2 || temperature == 0.0 {
            return;
        }
        let mut random: Vec<Vec3> = members
            .clone()
            .map(|_| {
                Vec3::new(
                    rng.gen::<f64>() - 0.5,
                    rng.gen::<f64>() - 0.5,
                    rng.gen::<f64>() - 0.5,
                )
            })
            .collect();
        let mass: f64 = members.clone().map(|i| self.mass[i]).sum();
        let momentum: Vec3 = members
            .clone()
            .zip(&random)
            .map(|(i, u)| self.mass[i] * *u)
            .sum();
        random.iter_mut().for_each(|u| *u -= momentum / mass);
        let energy: f64 = members
            .clone()
            .zip(&random)
            .map(|(i, u)| self.mass[i] * u.length_squared())
            .sum();
        let scale = (3.0 * (n - 1) as f64 * temperature / energy).sqrt();
        for (i, u) in members.zip(random) {
            self.velocity[i] += scale * u;
        }
    }

    pub fn max_radius(&self) -> f64 {
        self.radius.iter().copied().fold(0.0, f64::max)
    }
}
