//! Multi-direct forcing inside each Runge–Kutta stage (Uhlmann 2005 with the iterations of Kempe &
//! Froehlich 2012 and Breugem 2012; notes/ibm.md). With the predicted velocity u~ = u + delta of a stage
//! of length dt_k = 2 alpha_k dt, each of `iterations` passes
//!
//! 1. interpolates u~ to the markers: U~_l = sum_x u~(x) delta_h(x - X_l) h^3,
//! 2. takes the marker force F_l = (U_d(X_l) - U~_l) / dt_k, U_d = u_p + omega_p x (X_l - x_p),
//! 3. spreads it, f(x) = sum_l F_l delta_h(x - X_l) Delta V_l, and adds dt_k f to u~,
//!
//! so that the forced velocity matches the rigid-body motion at the markers more closely with each
//! pass. The hydrodynamic force and torque on each sphere are the reactions, -rho_f sum_l F_l Delta V_l
//! and -rho_f sum_l (X_l - x_p) x F_l Delta V_l (per unit fluid density here), summed over the passes.

use crate::markers::SphereMarkers;
use crate::transfer::{spread, GridLayout, PlaneLists, Stencil};
use crate::Vec3;
use rayon::prelude::*;
use silt_fluid::boundary::Boundaries;
use silt_fluid::grid::{Field, Grid, Unknowns};
use silt_fluid::solver::StageForcing;

/// A sphere whose surface velocity the forcing imposes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidSphere {
    pub centre: Vec3,
    pub radius: f64,
    pub velocity: Vec3,
    pub angular_velocity: Vec3,
}

impl RigidSphere {
    /// A sphere at rest.
    pub fn fixed(centre: Vec3, radius: f64) -> Self {
        RigidSphere {
            centre,
            radius,
            velocity: Vec3::ZERO,
            angular_velocity: Vec3::ZERO,
        }
    }
}

/// Direct forcing of the fluid by a set of rigid spheres, as a [`StageForcing`] of the fluid solver.
pub struct DirectForcing {
    pub layout: GridLayout,
    pub spheres: Vec<RigidSphere>,
    /// Forcing passes per stage (Kempe & Froehlich 2012 use 2-3; 1 is Uhlmann's original scheme).
    pub iterations: usize,
    /// The markers of each sphere, relative to its centre.
    markers: Vec<SphereMarkers>,
    /// Hydrodynamic force and torque per unit fluid density on each sphere in the last stage.
    pub force: Vec<Vec3>,
    pub torque: Vec<Vec3>,
    /// Their averages over the stages of the last step, sum_k 2 alpha_k (force, torque)_k: the momentum
    /// the fluid exchanged with each sphere over the step, divided by dt.
    pub step_force: Vec<Vec3>,
    pub step_torque: Vec<Vec3>,
    /// Markers disabled in the last stage because their support crossed a wall, or overlapped the
    /// support of another sphere's markers (seed sec. 2, Fig. 2).
    pub disabled_at_walls: usize,
    pub disabled_between_spheres: usize,
}

impl DirectForcing {
    /// Forcing on `grid` with `boundaries` by `spheres`, with markers retracted by `retraction` cell sizes
    /// into each sphere (see [`SphereMarkers::new`]).
    pub fn new(
        grid: Grid,
        boundaries: &Boundaries,
        spheres: Vec<RigidSphere>,
        iterations: usize,
        retraction: f64,
    ) -> Self {
        let h = grid.spacing;
        let markers = spheres
            .iter()
            .map(|s| SphereMarkers::new(s.radius, h, retraction))
            .collect();
        let n = spheres.len();
        DirectForcing {
            layout: GridLayout::new(grid, boundaries),
            spheres,
            iterations,
            markers,
            force: vec![Vec3::ZERO; n],
            torque: vec![Vec3::ZERO; n],
            step_force: vec![Vec3::ZERO; n],
            step_torque: vec![Vec3::ZERO; n],
            disabled_at_walls: 0,
            disabled_between_spheres: 0,
        }
    }

    /// The markers of sphere `p`.
    pub fn markers(&self, p: usize) -> &SphereMarkers {
        &self.markers[p]
    }
}

/// The enabled markers of all spheres in one flat list, in sphere order.
struct MarkerSet {
    owner: Vec<u32>,
    /// Position relative to the owner's centre.
    arm: Vec<Vec3>,
    volume: Vec<f64>,
    /// Rigid-body velocity at the marker, U_d.
    desired: Vec<Vec3>,
    stencils: [Vec<Stencil>; 3],
}

impl MarkerSet {
    /// The enabled markers, and how many were disabled at walls and between spheres.
    fn new(forcing: &DirectForcing) -> (Self, usize, usize) {
        let mut set = MarkerSet {
            owner: Vec::new(),
            arm: Vec::new(),
            volume: Vec::new(),
            desired: Vec::new(),
            stencils: [Vec::new(), Vec::new(), Vec::new()],
        };
        let h = forcing.layout.grid.spacing;
        let neighbours = close_spheres(forcing);
        let (mut at_walls, mut between) = (0, 0);
        for (p, (sphere, markers)) in forcing.spheres.iter().zip(&forcing.markers).enumerate() {
            for &arm in &markers.offsets {
                let x = sphere.centre + arm;
                // Supports (3 h wide) overlap when the marker is within 3 h of the other's marker sphere.
                let overlaps = neighbours[p].iter().any(|&q| {
                    let to_centre = forcing.layout.separation(forcing.spheres[q].centre, x);
                    to_centre.length() < forcing.markers[q].marker_radius + 3.0 * h
                });
                if overlaps {
                    between += 1;
                    continue;
                }
                let stencils: Option<Vec<Stencil>> =
                    (0..3).map(|c| forcing.layout.stencil(c, x)).collect();
                let Some(stencils) = stencils else {
                    at_walls += 1;
                    continue;
                };
                for c in 0..3 {
                    set.stencils[c].push(stencils[c]);
                }
                set.owner.push(p as u32);
                set.arm.push(arm);
                set.volume.push(markers.volume);
                set.desired
                    .push(sphere.velocity + sphere.angular_velocity.cross(arm));
            }
        }
        (set, at_walls, between)
    }
}

/// For each sphere, the others whose markers' supports may overlap its own: marker spheres closer than
/// 3 h (all pairs; the coupled runs hold hundreds of spheres).
fn close_spheres(forcing: &DirectForcing) -> Vec<Vec<usize>> {
    let h = forcing.layout.grid.spacing;
    let n = forcing.spheres.len();
    (0..n)
        .into_par_iter()
        .map(|p| {
            let (sp, rp) = (forcing.spheres[p].centre, forcing.markers[p].marker_radius);
            (0..n)
                .filter(|&q| {
                    q != p && {
                        let d = forcing.layout.separation(forcing.spheres[q].centre, sp);
                        d.length() < rp + forcing.markers[q].marker_radius + 3.0 * h
                    }
                })
                .collect()
        })
        .collect()
}

impl StageForcing for DirectForcing {
    fn add_force(
        &mut self,
        stage: usize,
        dt: f64,
        velocity: &[Field; 3],
        unknowns: &[Unknowns; 3],
        delta: &mut [Vec<f64>; 3],
    ) {
        debug_assert_eq!(unknowns, &self.layout.unknowns);
        let stage_length = silt_core::rk3::stage_fraction(stage) * dt;
        let (markers, at_walls, between) = MarkerSet::new(self);
        self.disabled_at_walls = at_walls;
        self.disabled_between_spheres = between;
        let lists: Vec<PlaneLists> = (0..3)
            .map(|c| PlaneLists::new(&self.layout, c, &markers.stencils[c]))
            .collect();
        let h3 = self.layout.grid.cell_volume();
        let mut total = vec![Vec3::ZERO; markers.owner.len()];
        let mut values = vec![0.0; markers.owner.len()];
        for _ in 0..self.iterations {
            // 1-2. The forced velocity at the markers and the force that brings it to U_d.
            let layout = &self.layout;
            let change: Vec<Vec3> = (0..markers.owner.len())
                .into_par_iter()
                .map(|l| {
                    let interpolated = Vec3::from_array(std::array::from_fn(|c| {
                        layout.interpolate(c, &markers.stencils[c][l], &velocity[c], &delta[c])
                    }));
                    (markers.desired[l] - interpolated) / stage_length
                })
                .collect();
            // 3. Spread dt_k F_l Delta V_l / h^3 (delta_h carries 1 / h^3) into the increment.
            for c in 0..3 {
                values
                    .par_iter_mut()
                    .zip(&change)
                    .zip(&markers.volume)
                    .for_each(|((v, f), dv)| *v = stage_length * f[c] * dv / h3);
                spread(
                    layout,
                    c,
                    &markers.stencils[c],
                    &lists[c],
                    &values,
                    &mut delta[c],
                );
            }
            for (t, f) in total.iter_mut().zip(&change) {
                *t += *f;
            }
        }
        // Reactions on the spheres, summed in marker order.
        self.force.iter_mut().for_each(|f| *f = Vec3::ZERO);
        self.torque.iter_mut().for_each(|t| *t = Vec3::ZERO);
        for l in 0..markers.owner.len() {
            let p = markers.owner[l] as usize;
            let f = total[l] * markers.volume[l];
            self.force[p] -= f;
            self.torque[p] -= markers.arm[l].cross(f);
        }
        let weight = silt_core::rk3::stage_fraction(stage);
        for p in 0..self.spheres.len() {
            if stage == 0 {
                self.step_force[p] = Vec3::ZERO;
                self.step_torque[p] = Vec3::ZERO;
            }
            self.step_force[p] += weight * self.force[p];
            self.step_torque[p] += weight * self.torque[p];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forcing(centres: [Vec3; 2]) -> DirectForcing {
        let grid = Grid {
            cells: [32, 24, 24],
            spacing: 1.0,
            origin: [0.0; 3],
        };
        let spheres = centres
            .iter()
            .zip([4.0, 3.0])
            .map(|(&c, r)| RigidSphere::fixed(c, r))
            .collect();
        DirectForcing::new(grid, &Boundaries::periodic(), spheres, 1, 0.3)
    }

    /// Two spheres 0.5 h apart across the periodic seam: the markers facing each other are disabled on
    /// both, none of the enabled ones has a support reaching the other's markers; far apart, none is.
    #[test]
    fn markers_between_close_spheres_are_disabled() {
        // Surfaces 0.5 apart across x = 0: centres at x = 1.5 and 32 - 6.0.
        let close = forcing([Vec3::new(1.5, 12.0, 12.0), Vec3::new(26.0, 12.0, 12.0)]);
        let (set, at_walls, between) = MarkerSet::new(&close);
        assert_eq!(at_walls, 0);
        assert!(between > 0);
        let total: usize = (0..2).map(|p| close.markers(p).len()).sum();
        assert_eq!(set.owner.len() + between, total);
        for (l, &p) in set.owner.iter().enumerate() {
            let q = 1 - p as usize;
            let x = close.spheres[p as usize].centre + set.arm[l];
            let d = close.layout.separation(close.spheres[q].centre, x).length();
            assert!(
                d >= close.markers(q).marker_radius + 3.0,
                "marker {l} of sphere {p}"
            );
        }
        // Both spheres lose markers.
        let kept: Vec<usize> = (0..2)
            .map(|p| set.owner.iter().filter(|&&o| o as usize == p).count())
            .collect();
        assert!(kept[0] < close.markers(0).len() && kept[1] < close.markers(1).len());

        let apart = forcing([Vec3::new(8.0, 12.0, 12.0), Vec3::new(20.0, 12.0, 12.0)]);
        let (_, _, between) = MarkerSet::new(&apart);
        assert_eq!(between, 0);
    }
}
