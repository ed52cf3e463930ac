//! One time step of the constrained bead system (seed sec. 2.2.6), top to bottom:
//!
//! 1. known loads `F_0`: bending torques (eq. 2.32-2.35, with the rest curvature at time t), the
//!    external force per bead (buoyant weight, a uniform load);
//! 2. the ambient flow at the beads, `V_∞*`;
//! 3. the constraint rows `J`, `B` at the current positions and time;
//! 4. multipliers and velocities `Q' = M* (F_0 + Jᵀ λ) + V_∞*` (eq. 2.17);
//! 5. positions (and bead orientations) by third-order Adams–Bashforth (eq. 2.36), started by one
//!    Euler and one second-order step.

use glam::{DMat3, DQuat};
use silt_core::Vec3;

use crate::chain::Fibers;
use crate::constraints::{Constraint, ConstraintState, ConstraintSystem, JointLink};
use crate::elasticity::{Bending, Twist};
use crate::flows::AmbientFlow;
use crate::mobility::Mobility;
use silt_parallel::{Comm, SingleRank};

use crate::multipliers::{solve_constrained, Ambient, ConstrainedMotion, Loads, MultiplierSolver};

/// Largest step over the bending time `η (2a)⁴ / K_b` of the gears model: the Adams–Bashforth scheme
/// diverged in tests at 4 and ran stably at 2; the seed asks for less than 1.
pub const MAX_STEP_OVER_BENDING_TIME: f64 = 2.0;
/// Default step over the bending time (gears).
pub const DEFAULT_STEP_OVER_BENDING_TIME: f64 = 0.5;
/// The same two for the joint model, whose beads turn directly under the joint moments: stable in
/// tests at 0.45, diverging at 0.6.
pub const MAX_JOINT_STEP_OVER_BENDING_TIME: f64 = 0.4;
pub const DEFAULT_JOINT_STEP_OVER_BENDING_TIME: f64 = 0.2;
/// With twist, the step over the twist time `8π η a³ l / K_t`: stable in tests at 0.13, diverging
/// at 0.16.
pub const MAX_STEP_OVER_TWIST_TIME: f64 = 0.12;
pub const DEFAULT_STEP_OVER_TWIST_TIME: f64 = 0.06;

/// The farthest a bead may be from the origin, in radii: there a double's spacing is ~1e-5 of a
/// link of 2a (a run whose beads reach it has diverged).
pub const MAX_POSITION_RADII: f64 = 1e11;

/// Everything that moves the beads. Links drift from 2a at second order in the step under the
/// seed's scheme (a rotating chord lengthens); `restore_links` (on by default) puts them back after
/// each step and records the correction.
#[derive(Debug)]
pub struct FiberSystem {
    /// Bead centres, fiber by fiber.
    pub fibers: Fibers,
    /// Bead orientations (unit quaternions, body to world), integrated from `W_n`.
    pub orientations: Vec<DQuat>,
    pub mobility: Mobility,
    /// Kinematic constraints (gears or joint links, clamped/hinged/actuated ends, ...).
    pub constraints: Vec<Box<dyn Constraint>>,
    /// The joint-model links (empty under the gears model), also among `constraints`: bending acts
    /// on their arms and the drift correction closes them.
    pub joints: Vec<JointLink>,
    pub bending: Bending,
    /// Twist elasticity (rigidity 0: none) and each bead's spin angle about its tangent.
    pub twist: Twist,
    pub spins: Vec<f64>,
    /// External force on every bead (buoyant weight `W 2a`, a uniform load `q 2a`).
    pub bead_force: Vec3,
    /// Forces and torques on single beads (a pulled or twisted end).
    pub point_loads: Vec<PointLoad>,
    pub flow: AmbientFlow,
    /// How the multiplier system is solved.
    pub solver: MultiplierSolver,
    /// Put links back to length 2a after each step (drift control; the seed's scheme has none).
    pub restore_links: bool,
    /// Largest relative link-length error the last step's correction removed (0 without it).
    pub link_correction: f64,
    /// The last step's multipliers, to warm-start the next solve.
    pub last_multipliers: Vec<f64>,
    /// The multipliers of the step before (the warm start extrapolates from the last three).
    pub previous_multipliers: Vec<f64>,
    /// The multipliers of the step before that.
    pub older_multipliers: Vec<f64>,
    /// Time `t`.
    pub time: f64,
    /// The ranks that share the hydrodynamics (each holds the whole state and computes its rows of
    /// the mobility products); one rank by default.
    pub comm: Comm,
}

/// A force and a torque on one bead.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointLoad {
    pub bead: usize,
    pub force: Vec3,
    pub torque: Vec3,
}

/// The rates of one step: bead velocities `V`, orientation rates `dq/dt`, spin rates `dψ/dt`.
pub type StepRates = (Vec<Vec3>, Vec<DQuat>, Vec<f64>);

/// Velocities of earlier steps, newest first, for the Adams–Bashforth steps.
#[derive(Clone, Debug, Default)]
pub struct AdamsBashforth {
    /// `(V, dq/dt)` of the last steps, newest first (at most 2 kept between steps).
    history: Vec<StepRates>,
}

impl AdamsBashforth {
    /// Steps taken so far, up to 3 (the order of the next step is `min(steps + 1, 3)`).
    pub fn order_of_next_step(&self) -> usize {
        self.history.len() + 1
    }

    /// The velocities `(V, dq/dt)` of the last steps, newest first (for checkpoints).
    pub fn history(&self) -> &[StepRates] {
        &self.history
    }

    /// Restores a history saved by [`AdamsBashforth::history`] (at most 2 entries).
    pub fn from_history(history: Vec<StepRates>) -> Result<Self, String> {
        if history.len() > 2 {
            return Err(format!(
                "an Adams–Bashforth history holds at most 2 earlier steps, got {}",
                history.len()
            ));
        }
        Ok(AdamsBashforth { history })
    }

    /// `Σ_k β_k x_k` with the Adams–Bashforth weights of the available order, newest first.
    fn combine<T: Copy + std::ops::Mul<f64, Output = T> + std::ops::Add<Output = T>>(
        values: &[T],
    ) -> T {
        match values {
            [v0] => *v0 * 1.0,
            [v0, v1] => *v0 * 1.5 + *v1 * -0.5,
            [v0, v1, v2, ..] => *v0 * (23.0 / 12.0) + *v1 * (-16.0 / 12.0) + *v2 * (5.0 / 12.0),
            [] => unreachable!("at least the current velocity"),
        }
    }
}

/// Per-step summary for the CSV diagnostics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Diagnostics {
    pub time: f64,
    /// Mean end-to-end distance of the fibers.
    pub end_to_end: f64,
    /// Mean bead velocity (centre-of-mass velocity of all fibers).
    pub mean_velocity: Vec3,
    /// Largest relative link-length error `| |Y_(n+1) - Y_n| - 2a | / 2a`.
    pub link_error: f64,
    /// Largest relative link-length error removed by the drift correction after the last step.
    pub link_correction: f64,
    /// Largest residual `|J Q' + B|` of the velocity constraints.
    pub constraint_residual: f64,
    /// Bending energy.
    pub bending_energy: f64,
    /// Twist energy.
    pub twist_energy: f64,
    /// Conjugate-gradient iterations of the multiplier solve (0: direct).
    pub solver_iterations: usize,
    /// The fibers' stresslets summed, [`FiberSystem::stresslets`] (over the box's volume, the
    /// particle stress of a periodic suspension).
    pub stresslet: DMat3,
}

impl FiberSystem {
    /// Fibers linked by the gears model, beads not rotated, no load, fluid at rest, the automatic
    /// multiplier solver: set the public fields for the rest.
    pub fn new(fibers: Fibers, mobility: Mobility, bending: Bending) -> Self {
        let constraints = crate::constraints::gears(&fibers);
        FiberSystem {
            orientations: vec![DQuat::IDENTITY; fibers.bead_count()],
            twist: Twist {
                rigidity: 0.0,
                rest: 0.0,
            },
            spins: vec![0.0; fibers.bead_count()],
            point_loads: Vec::new(),
            fibers,
            mobility,
            constraints,
            joints: Vec::new(),
            bending,
            bead_force: Vec3::ZERO,
            flow: AmbientFlow::Quiescent,
            solver: MultiplierSolver::Auto,
            restore_links: true,
            link_correction: 0.0,
            last_multipliers: Vec::new(),
            previous_multipliers: Vec::new(),
            older_multipliers: Vec::new(),
            time: 0.0,
            comm: SingleRank::comm(),
        }
    }

    /// Fibers linked by the joint model (seed sec. 2.2.1) with their current gap (`Fibers::with_gap`),
    /// arms along the current links; otherwise as [`FiberSystem::new`].
    pub fn with_joints(fibers: Fibers, mobility: Mobility, bending: Bending) -> Self {
        let mut system = FiberSystem::new(fibers, mobility, bending);
        system.joints = crate::constraints::joints(&system.fibers, &system.orientations);
        system.constraints = system
            .joints
            .iter()
            .map(|j| Box::new(*j) as Box<dyn Constraint>)
            .collect();
        system
    }

    /// Largest relative connectivity error: link lengths against `2 (a + ε_g)` under the gears
    /// model, joint separations `|Y_n + (a+ε_g) p_n - Y_(n+1) - (a+ε_g) p_(n+1)|` under the joint model.
    pub fn link_error(&self) -> f64 {
        if self.joints.is_empty() {
            return self.fibers.link_length_error();
        }
        let y = &self.fibers.positions;
        self.joints
            .iter()
            .map(|j| {
                let (p, q) = j.arms.world(&self.orientations);
                let n = j.arms.bead;
                (y[n] + j.reach * p - y[n + 1] - j.reach * q).length() / self.fibers.spacing()
            })
            .fold(0.0, f64::max)
    }

    /// Bending energy under the link model in use.
    pub fn bending_energy(&self) -> f64 {
        if self.joints.is_empty() {
            self.bending.energy(&self.fibers, self.time)
        } else {
            self.bending
                .joint_energy(&self.fibers, &self.joints, &self.orientations, self.time)
        }
    }

    /// Closes every joint again (drift control of the joint model), outwards from each fiber's
    /// anchor bead (else its first bead, keeping the centroid).
    fn close_joints(&mut self, anchors: &[Option<usize>]) {
        let owner = self.fibers.fiber_of_bead();
        let mut by_fiber: Vec<Vec<&JointLink>> = vec![Vec::new(); self.fibers.fibers().len()];
        for j in &self.joints {
            by_fiber[owner[j.arms.bead]].push(j);
        }
        for (fiber, links) in by_fiber.iter().enumerate() {
            let beads = self.fibers.fibers()[fiber].clone();
            let y = &mut self.fibers.positions;
            let centroid = y[beads.clone()].iter().sum::<Vec3>() / beads.len() as f64;
            let anchor = anchors[fiber].unwrap_or(beads.start);
            let gap = |j: &JointLink, o: &[DQuat]| {
                let (p, q) = j.arms.world(o);
                j.reach * (p - q)
            };
            for j in links.iter().filter(|j| j.arms.bead >= anchor) {
                let n = j.arms.bead;
                y[n + 1] = y[n] + gap(j, &self.orientations);
            }
            for j in links.iter().rev().filter(|j| j.arms.bead < anchor) {
                let n = j.arms.bead;
                y[n] = y[n + 1] - gap(j, &self.orientations);
            }
            if anchors[fiber].is_none() {
                let shift = centroid - y[beads.clone()].iter().sum::<Vec3>() / beads.len() as f64;
                y[beads].iter_mut().for_each(|p| *p += shift);
            }
        }
    }

    /// The known forces and torques `F_0` at the current state.
    pub fn known_loads(&self) -> (Vec<Vec3>, Vec<Vec3>) {
        let n = self.fibers.bead_count();
        let mut forces = vec![self.bead_force; n];
        let mut torques = vec![Vec3::ZERO; n];
        for load in &self.point_loads {
            forces[load.bead] += load.force;
            torques[load.bead] += load.torque;
        }
        self.twist
            .add_torques(&self.fibers, &self.spins, &mut torques);
        if self.joints.is_empty() {
            self.bending
                .add_torques(&self.fibers, self.time, &mut torques);
        } else {
            self.bending.add_joint_torques(
                &self.fibers,
                &self.joints,
                &self.orientations,
                self.time,
                &mut torques,
            );
        }
        (forces, torques)
    }

    /// The constraint rows at the current state.
    pub fn constraint_system(&self) -> ConstraintSystem {
        let state = ConstraintState {
            fibers: &self.fibers,
            orientations: &self.orientations,
            time: self.time,
        };
        ConstraintSystem::assemble(&self.constraints, &state)
    }

    /// Forces, multipliers and velocities at the current state (steps 1-4).
    pub fn motion(&self) -> Result<ConstrainedMotion, String> {
        self.solve_motion().map(|(motion, _)| motion)
    }

    /// [`FiberSystem::motion`] with the constraint rows it was solved with (reused by the
    /// diagnostics of a step instead of assembled again, and by [`FiberSystem::step_with`]).
    pub fn solve_motion(&self) -> Result<(ConstrainedMotion, ConstraintSystem), String> {
        let (forces, torques) = self.known_loads();
        let (flow_v, flow_w) = self.flow.at_beads(&self.fibers.positions);
        let ambient = (self.flow != AmbientFlow::Quiescent).then_some(Ambient {
            velocities: &flow_v,
            angular_velocities: &flow_w,
        });
        let system = self.constraint_system();
        // A sheared periodic box: the images' Lees–Edwards tilt at this time.
        let mobility = self.mobility.in_flow(&self.flow, self.time);
        let guess = self.multiplier_guess();
        solve_constrained(
            &*self.comm,
            &mobility,
            &self.fibers.positions,
            &system,
            Loads {
                forces: &forces,
                torques: &torques,
            },
            ambient,
            self.solver,
            Some(&guess),
        )
        .map(|motion| (motion, system))
    }

    /// The multipliers' starting guess: extrapolated from the last three steps' by the quadratic
    /// through them (`3 λ_n − 3 λ_(n−1) + λ_(n−2)`: the error O(Δt³); on 1,000 sedimenting fibers
    /// 4-5 conjugate-gradient iterations a step instead of 6-7 from the linear `2 λ_n − λ_(n−1)`),
    /// from the last two linearly, or the last step's alone.
    fn multiplier_guess(&self) -> Vec<f64> {
        let (last, previous) = (&self.last_multipliers, &self.previous_multipliers);
        let older = &self.older_multipliers;
        if previous.len() == last.len() && older.len() == last.len() {
            last.iter()
                .zip(previous)
                .zip(older)
                .map(|((l, p), o)| 3.0 * l - 3.0 * p + o)
                .collect()
        } else if previous.len() == last.len() {
            last.iter()
                .zip(previous)
                .map(|(l, p)| 2.0 * l - p)
                .collect()
        } else {
            last.clone()
        }
    }

    /// Advances by `dt` (steps 1-5) and returns the motion and diagnostics at the start of the step.
    /// The state is left unchanged when the solve fails or the new positions are not finite.
    pub fn step(
        &mut self,
        dt: f64,
        integrator: &mut AdamsBashforth,
    ) -> Result<(ConstrainedMotion, Diagnostics), String> {
        let solved = self.solve_motion()?;
        self.step_with(dt, integrator, solved)
    }

    /// [`FiberSystem::step`] with the motion at the current state already solved
    /// ([`FiberSystem::solve_motion`], e.g. for the output of this state).
    pub fn step_with(
        &mut self,
        dt: f64,
        integrator: &mut AdamsBashforth,
        (motion, system): (ConstrainedMotion, ConstraintSystem),
    ) -> Result<(ConstrainedMotion, Diagnostics), String> {
        let diagnostics = self.diagnostics_with(&motion, &system);
        let spin_rates: Vec<DQuat> = self
            .orientations
            .iter()
            .zip(&motion.angular_velocities)
            .map(|(q, w)| DQuat::from_xyzw(w.x, w.y, w.z, 0.0) * *q * 0.5)
            .collect();
        // dψ/dt = W · t, the spin about each bead's tangent (twist).
        let tangents = Twist::tangents(&self.fibers);
        let twist_rates: Vec<f64> = motion
            .angular_velocities
            .iter()
            .zip(&tangents)
            .map(|(w, t)| w.dot(*t))
            .collect();
        integrator
            .history
            .insert(0, (motion.velocities.clone(), spin_rates, twist_rates));
        integrator.history.truncate(3);
        let history = &integrator.history;
        let n = self.fibers.bead_count();
        let mut positions = self.fibers.positions.clone();
        let mut orientations = self.orientations.clone();
        let mut spins = self.spins.clone();
        for i in 0..n {
            let twist_rates: Vec<f64> = history.iter().map(|h| h.2[i]).collect();
            spins[i] += dt * AdamsBashforth::combine(&twist_rates);
            let velocities: Vec<Vec3> = history.iter().map(|h| h.0[i]).collect();
            positions[i] += dt * AdamsBashforth::combine(&velocities);
            let rates: Vec<DQuat> = history.iter().map(|h| h.1[i]).collect();
            orientations[i] = (orientations[i] + AdamsBashforth::combine(&rates) * dt).normalize();
        }
        // Beyond MAX_POSITION_RADII from the origin doubles resolve a link of 2a to worse than 1e-5
        // of its length: the links are lost (and the next solve fails) while the numbers are finite.
        let limit = MAX_POSITION_RADII * self.fibers.radius();
        if let Some(i) = positions
            .iter()
            .position(|y| !silt_core::is_finite3(*y) || y.abs().max_element() > limit)
        {
            integrator.history.remove(0);
            let whither = if silt_core::is_finite3(positions[i]) {
                format!(
                    "reached {:.1e} radii from the origin (beyond {MAX_POSITION_RADII:e} the links \
                     are lost to rounding): the run diverged",
                    positions[i].abs().max_element() / self.fibers.radius()
                )
            } else {
                "left the finite range".to_string()
            };
            return Err(format!(
                "bead {i} {whither} at t = {}: the step dt = {dt} is probably too long, or the \
                 loads too large (bending time {:.3e}{})",
                silt_core::format_time(self.time),
                self.bending
                    .bending_time(self.fibers.radius(), self.mobility.kernel.viscosity()),
                if self.twist.rigidity > 0.0 {
                    format!(
                        ", twist time {:.3e}",
                        self.twist
                            .twist_time(&self.fibers, self.mobility.kernel.viscosity())
                    )
                } else {
                    String::new()
                }
            ));
        }
        integrator.history.truncate(2);
        self.older_multipliers = std::mem::take(&mut self.previous_multipliers);
        self.previous_multipliers = std::mem::take(&mut self.last_multipliers);
        self.last_multipliers.clone_from(&motion.multipliers);
        self.fibers.positions = positions;
        self.orientations = orientations;
        self.spins = spins;
        if self.restore_links {
            self.link_correction = self.link_error();
            let owner = self.fibers.fiber_of_bead();
            let mut anchors = vec![None; self.fibers.fibers().len()];
            for bead in self.constraints.iter().filter_map(|c| c.anchored_bead()) {
                anchors[owner[bead]].get_or_insert(bead);
            }
            if self.joints.is_empty() {
                self.fibers.restore_link_lengths(&anchors);
            } else {
                self.close_joints(&anchors);
            }
        }
        self.time += dt;
        Ok((motion, diagnostics))
    }

    /// The diagnostics of `motion`, the motion at the current state.
    pub fn diagnostics(&self, motion: &ConstrainedMotion) -> Diagnostics {
        self.diagnostics_with(motion, &self.constraint_system())
    }

    /// The diagnostics of `motion`, the motion at the current state solved with the rows `system`.
    pub fn diagnostics_with(
        &self,
        motion: &ConstrainedMotion,
        system: &ConstraintSystem,
    ) -> Diagnostics {
        let y = &self.fibers.positions;
        let fibers = self.fibers.fibers();
        let end_to_end = fibers
            .iter()
            .map(|f| (y[f.end - 1] - y[f.start]).length())
            .sum::<f64>()
            / fibers.len().max(1) as f64;
        let mean_velocity =
            motion.velocities.iter().sum::<Vec3>() / motion.velocities.len().max(1) as f64;
        let residual = system
            .residual(&motion.velocities, &motion.angular_velocities)
            .into_iter()
            .fold(0.0, |m: f64, r| m.max(r.abs()));
        Diagnostics {
            time: self.time,
            end_to_end,
            mean_velocity,
            link_error: self.link_error(),
            link_correction: self.link_correction,
            constraint_residual: residual,
            bending_energy: self.bending_energy(),
            twist_energy: self.twist.energy(&self.fibers, &self.spins),
            solver_iterations: motion.iterations,
            stresslet: self.stresslets(motion).iter().sum(),
        }
    }

    /// Each fiber's stresslet, the symmetric part of `S = −Σ_i (Y_i − Y_c) ⊗ F_i` over its beads with
    /// `F_i` the constraint forces `Jᵀλ` (the forces one bead passes to the next: the gears links
    /// carry the elastic loads too; external forces left out) and `Y_c` the fiber's centroid: the
    /// Kramers–Kirkwood particle stress of the bead model, `σ_p = Σ S / V` in a periodic box of
    /// volume V (the beads' own stresslets, absent from the RPY model, left out; Batchelor 1970).
    pub fn stresslets(&self, motion: &ConstrainedMotion) -> Vec<DMat3> {
        let y = &self.fibers.positions;
        self.fibers
            .fibers()
            .iter()
            .map(|f| {
                let centroid = y[f.clone()].iter().sum::<Vec3>() / f.len() as f64;
                let moment: DMat3 = f
                    .clone()
                    .map(|i| {
                        let r = y[i] - centroid;
                        let force = motion.constraint_forces[i];
                        // −r ⊗ F (column j holds r F_j).
                        -DMat3::from_cols(r * force.x, r * force.y, r * force.z)
                    })
                    .sum();
                (moment + moment.transpose()) * 0.5
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constraints::clamped_end;
    use crate::mobility::Hydrodynamics;
    use crate::rpy::RpyKernel;

    /// A straight filament clamped at one end under a torque T about its axis at the other (free
    /// drain): the spins settle to a uniform twist rate T / K_t, so the tip turns by T L / K_t with
    /// L = (N - 2) l from the held neighbour; the bead orientations turn with the spins.
    fn torsion(dt_over_twist_time: f64, steps: usize) -> Result<(f64, f64, FiberSystem), String> {
        let (a, beads) = (0.5, 10);
        let mut fibers = Fibers::new(a)?;
        fibers.add_straight(beads, Vec3::ZERO, Vec3::X)?;
        let mobility = Mobility {
            kernel: RpyKernel::new(a, 1.0)?,
            hydrodynamics: Hydrodynamics::FreeDrain,
        };
        let mut system = FiberSystem::new(fibers, mobility, Bending::straight(1.0, 1)?);
        system.constraints.extend(clamped_end(0, 1));
        system.twist = Twist {
            rigidity: 1.0,
            rest: 0.0,
        };
        let torque = 0.01;
        system.point_loads.push(PointLoad {
            bead: beads - 1,
            force: Vec3::ZERO,
            torque: torque * Vec3::X,
        });
        let l = system.fibers.spacing();
        let twist_time = system.twist.twist_time(&system.fibers, 1.0);
        let mut integrator = AdamsBashforth::default();
        for _ in 0..steps {
            system.step(dt_over_twist_time * twist_time, &mut integrator)?;
        }
        let expected = torque * (beads - 2) as f64 * l;
        Ok((system.spins[beads - 1] - system.spins[1], expected, system))
    }

    #[test]
    fn an_end_torque_twists_a_clamped_filament_by_t_l_over_k_t() {
        let (angle, expected, system) = torsion(0.1, 8000).unwrap();
        assert!(
            (angle / expected - 1.0).abs() < 1e-6,
            "tip twist {angle} vs {expected}"
        );
        // The bead frames turned by the same angles about the axis.
        let turned = system.orientations[9].to_scaled_axis().x;
        assert!(
            (turned - system.spins[9]).abs() < 1e-9,
            "{turned} vs {}",
            system.spins[9]
        );
        assert!(system.fibers.link_length_error() < 1e-12);
        let energy = system.twist.energy(&system.fibers, &system.spins);
        assert!((energy - 0.5 * 0.01 * expected).abs() < 1e-6 * energy);
    }
}
