//! Linear kinematic constraints on the beads' velocities, `J Q' + B = 0` (seed eq. 2.5), and the kinds
//! Silt knows: the gears model (seed sec. 2.2.3) and prescribed bead motion (clamped, hinged and actuated
//! ends, seed sec. 2.3.4).
//!
//! Every constraint is a small type implementing [`Constraint`]: it says how many rows it has (a
//! multiple of three) and fills its rows of `J`, as 3 × 6 blocks on the beads it involves, and of `B`.

use std::sync::Arc;

use glam::DMat3;
use silt_core::Vec3;

use crate::chain::Fibers;

/// Rows of `J` on one bead: `J_rows · (V_n, W_n) = translation · V_n + rotation · W_n`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JacobianBlock {
    /// First of the three rows.
    pub row: usize,
    /// The bead `n`.
    pub bead: usize,
    /// `∂σ/∂V_n`.
    pub translation: DMat3,
    /// `∂σ/∂W_n`.
    pub rotation: DMat3,
}

/// What a constraint may read when it fills its rows.
#[derive(Clone, Copy, Debug)]
pub struct ConstraintState<'a> {
    /// The fibers (radius, links) with their current bead positions.
    pub fibers: &'a Fibers,
    /// Bead orientations (body to world), for constraints on body-fixed points (joints).
    pub orientations: &'a [glam::DQuat],
    /// Time.
    pub time: f64,
}

/// One kind of linear velocity constraint.
pub trait Constraint: Send + Sync + std::fmt::Debug {
    /// Number of rows (a multiple of 3).
    fn rows(&self) -> usize;
    /// Appends its blocks of `J` (rows from `first_row`) and writes its rows of `B`
    /// (`offsets[0..self.rows()]`).
    fn fill(
        &self,
        state: &ConstraintState,
        first_row: usize,
        blocks: &mut Vec<JacobianBlock>,
        offsets: &mut [f64],
    );

    /// The bead whose position this constraint prescribes, if any: link-length corrections keep it
    /// where the time step put it.
    fn anchored_bead(&self) -> Option<usize> {
        None
    }
}

/// `[v]x`, the matrix of `w -> v × w`.
pub fn cross_matrix(v: Vec3) -> DMat3 {
    DMat3::from_cols(
        Vec3::new(0.0, v.z, -v.y),
        Vec3::new(-v.z, 0.0, v.x),
        Vec3::new(v.y, -v.x, 0.0),
    )
}

/// No slip at the contact point of beads `n` and `n + 1` (the gears model):
/// `V_n - V_(n+1) - a e × (W_n + W_(n+1)) = 0`, `e = (Y_(n+1) - Y_n) / |Y_(n+1) - Y_n|`, so that the
/// rigid-body velocities of both beads agree at `Y_n + a e` = `Y_(n+1) - a e` (seed eq. 2.18-2.24; the
/// extracted eq. 2.20 lost a sign, see `shared/notes/bead-model.md`: this is the form that every rigid
/// motion satisfies). `J` blocks `[I, -a[e]x]` on bead `n` and `[-I, -a[e]x]` on bead `n + 1`, `B = 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GearsLink {
    /// First bead of the link.
    pub bead: usize,
}

impl Constraint for GearsLink {
    fn rows(&self) -> usize {
        3
    }

    fn fill(
        &self,
        state: &ConstraintState,
        first_row: usize,
        blocks: &mut Vec<JacobianBlock>,
        offsets: &mut [f64],
    ) {
        let (n, positions) = (self.bead, &state.fibers.positions);
        let e = (positions[n + 1] - positions[n]).normalize_or_zero();
        let rotation = -state.fibers.radius() * cross_matrix(e);
        blocks.push(JacobianBlock {
            row: first_row,
            bead: n,
            translation: DMat3::IDENTITY,
            rotation,
        });
        blocks.push(JacobianBlock {
            row: first_row,
            bead: n + 1,
            translation: -DMat3::IDENTITY,
            rotation,
        });
        offsets[..3].fill(0.0);
    }
}

/// Prescribed velocity and/or angular velocity of one bead: a clamped end (both zero), a hinged end
/// (velocity zero, rotation free) or an actuated end (a velocity that depends on time). Rows
/// `V_n - U(t) = 0` and/or `W_n - Ω(t) = 0`: `J` blocks of the identity, `B = -U(t)`, `-Ω(t)`.
#[derive(Clone)]
pub struct PrescribedMotion {
    /// The bead.
    pub bead: usize,
    /// `U(t)`, if the velocity is prescribed.
    pub velocity: Option<Prescription>,
    /// `Ω(t)`, if the angular velocity is prescribed.
    pub angular_velocity: Option<Prescription>,
}

/// A velocity as a function of time.
pub type Prescription = Arc<dyn Fn(f64) -> Vec3 + Send + Sync>;

impl std::fmt::Debug for PrescribedMotion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrescribedMotion")
            .field("bead", &self.bead)
            .field("velocity", &self.velocity.is_some())
            .field("angular_velocity", &self.angular_velocity.is_some())
            .finish()
    }
}

impl PrescribedMotion {
    /// Held in place and in orientation.
    pub fn clamped(bead: usize) -> Self {
        PrescribedMotion {
            bead,
            velocity: Some(Arc::new(|_| Vec3::ZERO)),
            angular_velocity: Some(Arc::new(|_| Vec3::ZERO)),
        }
    }

    /// Held in place, free to rotate.
    pub fn hinged(bead: usize) -> Self {
        PrescribedMotion {
            bead,
            velocity: Some(Arc::new(|_| Vec3::ZERO)),
            angular_velocity: None,
        }
    }
}

impl Constraint for PrescribedMotion {
    fn anchored_bead(&self) -> Option<usize> {
        self.velocity.as_ref().map(|_| self.bead)
    }

    fn rows(&self) -> usize {
        3 * (self.velocity.is_some() as usize + self.angular_velocity.is_some() as usize)
    }

    fn fill(
        &self,
        state: &ConstraintState,
        first_row: usize,
        blocks: &mut Vec<JacobianBlock>,
        offsets: &mut [f64],
    ) {
        let mut row = first_row;
        let mut rows = offsets.chunks_exact_mut(3);
        let parts = [
            (&self.velocity, DMat3::IDENTITY, DMat3::ZERO),
            (&self.angular_velocity, DMat3::ZERO, DMat3::IDENTITY),
        ];
        for (prescribed, translation, rotation) in parts {
            let Some(prescribed) = prescribed else {
                continue;
            };
            blocks.push(JacobianBlock {
                row,
                bead: self.bead,
                translation,
                rotation,
            });
            let target = prescribed(state.time);
            rows.next()
                .expect("PrescribedMotion::fill: offsets shorter than rows()")
                .copy_from_slice(&(-target).to_array());
            row += 3;
        }
    }
}

/// `J` and `B` of a set of constraints at one instant.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConstraintSystem {
    /// Number of rows.
    pub rows: usize,
    /// `J` as 3-row blocks (each row of `J` is the sum of its blocks).
    pub blocks: Vec<JacobianBlock>,
    /// `B`.
    pub offsets: Vec<f64>,
}

impl ConstraintSystem {
    /// Fills `J` and `B` from `constraints`, in order.
    pub fn assemble(constraints: &[Box<dyn Constraint>], state: &ConstraintState) -> Self {
        let rows: usize = constraints.iter().map(|c| c.rows()).sum();
        let mut system = ConstraintSystem {
            rows,
            blocks: Vec::with_capacity(2 * constraints.len()),
            offsets: vec![0.0; rows],
        };
        let mut first_row = 0;
        for constraint in constraints {
            let count = constraint.rows();
            constraint.fill(
                state,
                first_row,
                &mut system.blocks,
                &mut system.offsets[first_row..first_row + count],
            );
            first_row += count;
        }
        system
    }

    /// `J Q'` for bead velocities and angular velocities.
    pub fn times(&self, velocities: &[Vec3], angular_velocities: &[Vec3]) -> Vec<f64> {
        let mut out = vec![0.0; self.rows];
        for b in &self.blocks {
            let value =
                b.translation * velocities[b.bead] + b.rotation * angular_velocities[b.bead];
            for (o, v) in out[b.row..b.row + 3].iter_mut().zip(value.to_array()) {
                *o += v;
            }
        }
        out
    }

    /// `J Q' + B`, the constraint residual.
    pub fn residual(&self, velocities: &[Vec3], angular_velocities: &[Vec3]) -> Vec<f64> {
        let mut r = self.times(velocities, angular_velocities);
        r.iter_mut().zip(&self.offsets).for_each(|(r, b)| *r += b);
        r
    }

    /// `J^T λ` as forces and torques on `beads` beads (the constraint forces `F_c`, seed eq. 2.14).
    pub fn transpose_times(&self, lambda: &[f64], beads: usize) -> (Vec<Vec3>, Vec<Vec3>) {
        let mut forces = vec![Vec3::ZERO; beads];
        let mut torques = vec![Vec3::ZERO; beads];
        for b in &self.blocks {
            let l = Vec3::from_slice(&lambda[b.row..b.row + 3]);
            forces[b.bead] += b.translation.transpose() * l;
            torques[b.bead] += b.rotation.transpose() * l;
        }
        (forces, torques)
    }
}

/// The alternating spin of an elastic gears fiber held at zero: `Σ_n c_n W_n = 0` over its beads, with
/// `c_n = (-1)^n - m` and `m` the mean of `(-1)^n` (0 for an even number of beads, 1/N for an odd
/// one). The gears rows fix only `(W_n + W_(n+1))⊥` at each link, so `W_n = (-1)^n w` (any `w`, no
/// translation) passes them: of the 3N bead spins, N + 2 are left, the N - 1 turns of the links about
/// themselves and this pattern. Bending (computed from the positions) does not resist it and a
/// continuous filament has no such motion, but the hydrodynamics drives it (each bead spins towards
/// the local vorticity), and in shear it slowed the tumbling of odd chains (5 beads, stiff: 5.5 %).
/// `Σ c_n = 0`, so a rigid rotation (`W_n = Ω`) passes for any bead count, and the constraint
/// torques `c_n λ` carry no net torque; `c` is the same read from either end (up to sign), so a
/// fiber and its mirror image are constrained alike. `J` blocks `[0, c_n I]`, `B = 0`.
#[derive(Clone, Debug, PartialEq)]
pub struct AlternatingSpin {
    /// The fiber's beads.
    pub beads: std::ops::Range<usize>,
}

impl AlternatingSpin {
    /// `c_n` of the fiber's `k`-th bead.
    pub fn weight(&self, k: usize) -> f64 {
        let count = self.beads.len();
        let mean = if count % 2 == 1 {
            1.0 / count as f64
        } else {
            0.0
        };
        (if k.is_multiple_of(2) { 1.0 } else { -1.0 }) - mean
    }
}

impl Constraint for AlternatingSpin {
    fn rows(&self) -> usize {
        3
    }

    fn fill(
        &self,
        _state: &ConstraintState,
        first_row: usize,
        blocks: &mut Vec<JacobianBlock>,
        offsets: &mut [f64],
    ) {
        for (k, bead) in self.beads.clone().enumerate() {
            blocks.push(JacobianBlock {
                row: first_row,
                bead,
                translation: DMat3::ZERO,
                rotation: self.weight(k) * DMat3::IDENTITY,
            });
        }
        offsets[..3].fill(0.0);
    }
}

/// [`AlternatingSpin`] for every fiber of two or more beads but those in `held` (fibers whose end
/// prescribes an angular velocity, which holds the pattern already).
pub fn alternating_spins(fibers: &Fibers, held: &[usize]) -> Vec<Box<dyn Constraint>> {
    fibers
        .fibers()
        .iter()
        .enumerate()
        .filter(|(k, f)| f.len() >= 2 && !held.contains(k))
        .map(|(_, f)| Box::new(AlternatingSpin { beads: f.clone() }) as Box<dyn Constraint>)
        .collect()
}

/// A rigid link between beads `n` and `n + 1` of a gears chain: `W_n - W_(n+1) = 0`. With the gears
/// row of the link, `V_n - V_(n+1) = 2a e × W_n`: the pair moves as one rigid body, and with every
/// link so held the whole chain does (6 (N - 1) rows leave the 6 rigid-body motions). Holding only
/// `W_(n-1) = W_(n+1)` at interior beads, as an earlier version did, leaves the beads of even and odd
/// index free to spin apart (`(W_n + W_(n+1))⊥` is all the gears rows see): an alternating spin mode
/// that shear excites in chains of an odd number of beads, which then tumbled up to 8 % slower than
/// rigid bodies. `J` blocks `[0, I]` on bead `n`, `[0, -I]` on bead `n + 1`, `B = 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RigidLink {
    /// The first bead of the link.
    pub bead: usize,
}

impl Constraint for RigidLink {
    fn rows(&self) -> usize {
        3
    }

    fn fill(
        &self,
        _state: &ConstraintState,
        first_row: usize,
        blocks: &mut Vec<JacobianBlock>,
        offsets: &mut [f64],
    ) {
        for (bead, sign) in [(self.bead, 1.0), (self.bead + 1, -1.0)] {
            blocks.push(JacobianBlock {
                row: first_row,
                bead,
                translation: DMat3::ZERO,
                rotation: sign * DMat3::IDENTITY,
            });
        }
        offsets[..3].fill(0.0);
    }
}

/// The body-fixed arms of one joint-model link: bead `bead` reaches the joint at
/// `Y_n + (a + ε_g) p_n`, bead `bead + 1` at `Y_(n+1) + (a + ε_g) p_(n+1)`, with `p = R q_body`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointArms {
    /// First bead of the link.
    pub bead: usize,
    /// `p_n` in the body frame of bead n (unit).
    pub forward: Vec3,
    /// `p_(n+1)` in the body frame of bead n + 1 (unit).
    pub backward: Vec3,
}

impl JointArms {
    /// The arms in the world frame, `(p_n, p_(n+1))`.
    pub fn world(&self, orientations: &[glam::DQuat]) -> (Vec3, Vec3) {
        (
            orientations[self.bead] * self.forward,
            orientations[self.bead + 1] * self.backward,
        )
    }
}

/// The joint model of seed sec. 2.2.1 (ball-and-socket joints a gap ε_g beyond the bead surfaces):
/// the joint point moves with both beads, `V_n - (a + ε_g) p_n × W_n - V_(n+1) + (a + ε_g) p_(n+1) × W_(n+1) = 0`
/// (seed eq. 2.3, the time derivative of the connectivity eq. 2.2). `J` blocks `[I, -(a+ε_g)[p_n]x]`
/// on bead n and `[-I, (a+ε_g)[p_(n+1)]x]` on bead n + 1, `B = 0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointLink {
    pub arms: JointArms,
    /// `a + ε_g`.
    pub reach: f64,
}

impl Constraint for JointLink {
    fn rows(&self) -> usize {
        3
    }

    fn fill(
        &self,
        state: &ConstraintState,
        first_row: usize,
        blocks: &mut Vec<JacobianBlock>,
        offsets: &mut [f64],
    ) {
        let (forward, backward) = self.arms.world(state.orientations);
        blocks.push(JacobianBlock {
            row: first_row,
            bead: self.arms.bead,
            translation: DMat3::IDENTITY,
            rotation: -self.reach * cross_matrix(forward),
        });
        blocks.push(JacobianBlock {
            row: first_row,
            bead: self.arms.bead + 1,
            translation: -DMat3::IDENTITY,
            rotation: self.reach * cross_matrix(backward),
        });
        offsets[..3].fill(0.0);
    }
}

/// Joint-model links of every link of `fibers`, with arms along the current links: bead n's arm
/// points to bead n + 1 and back (`p_(n+1) = -p_n`) in the beads' current frames.
pub fn joints(fibers: &Fibers, orientations: &[glam::DQuat]) -> Vec<JointLink> {
    let y = &fibers.positions;
    let reach = 0.5 * fibers.spacing();
    fibers
        .links()
        .map(|n| {
            let e = (y[n + 1] - y[n]).normalize();
            JointLink {
                arms: JointArms {
                    bead: n,
                    forward: orientations[n].inverse() * e,
                    backward: orientations[n + 1].inverse() * -e,
                },
                reach,
            }
        })
        .collect()
}

/// Rigid links at every link of `fibers` (together with [`gears`]: rigid fibers, for any number of
/// beads), but those whose first bead is in `held`: links whose two angular velocities are prescribed
/// already (a clamped or actuated end and its neighbour), where the link's rows would repeat them.
pub fn rigid_links(fibers: &Fibers, held: &[usize]) -> Vec<Box<dyn Constraint>> {
    fibers
        .fibers()
        .iter()
        .flat_map(|f| f.start..f.end - 1)
        .filter(|bead| !held.contains(bead))
        .map(|bead| Box::new(RigidLink { bead }) as Box<dyn Constraint>)
        .collect()
}

/// A clamped end at bead `end` whose neighbour is `next`: `end` held in place and orientation, and
/// `next` kept from rotating. Holding one bead is not enough under the gears model: its neighbour can
/// still roll around it (`V_next = 2a Ω × e`, `W_next = 2 Ω`), a hinge. With both angular velocities
/// zero the gears rows of the link fix `V_next = 0` too, so the first link keeps its direction.
pub fn clamped_end(end: usize, next: usize) -> Vec<Box<dyn Constraint>> {
    vec![
        Box::new(PrescribedMotion::clamped(end)),
        Box::new(PrescribedMotion {
            bead: next,
            velocity: None,
            angular_velocity: Some(Arc::new(|_| Vec3::ZERO)),
        }),
    ]
}

/// An actuated end at bead `end` whose neighbour is `next` (gears): the pair moves rigidly with the
/// prescribed velocity `U(t)` of the end bead and angular velocity `Ω(t)`, as a clamped end carried
/// by a moving base (`W_end = W_next = Ω`, `V_end = U`; the gears rows give `V_next = U + Ω × 2a e`).
pub fn actuated_end(
    end: usize,
    next: usize,
    velocity: Prescription,
    angular_velocity: Prescription,
) -> Vec<Box<dyn Constraint>> {
    vec![
        Box::new(PrescribedMotion {
            bead: end,
            velocity: Some(velocity),
            angular_velocity: Some(angular_velocity.clone()),
        }),
        Box::new(PrescribedMotion {
            bead: next,
            velocity: None,
            angular_velocity: Some(angular_velocity),
        }),
    ]
}

/// The gears constraints of every link of `fibers`.
pub fn gears(fibers: &Fibers) -> Vec<Box<dyn Constraint>> {
    fibers
        .links()
        .map(|bead| Box::new(GearsLink { bead }) as Box<dyn Constraint>)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bent_chain() -> Fibers {
        let mut fibers = Fibers::new(0.4).unwrap();
        // A helix-like chain with exact link lengths 2a.
        fibers
            .add(7, |s| Vec3::new(s.cos(), s.sin(), 0.3 * s))
            .unwrap();
        let a = fibers.radius();
        let mut p = fibers.positions.clone();
        for n in 1..p.len() {
            let e = (p[n] - p[n - 1]).normalize();
            p[n] = p[n - 1] + 2.0 * a * e;
        }
        fibers.positions = p;
        fibers
    }

    /// Every rigid motion V_n = U + Ω × Y_n, W_n = Ω satisfies the gears constraints.
    #[test]
    fn rigid_motion_satisfies_the_gears_model() {
        let fibers = bent_chain();
        let state = ConstraintState {
            fibers: &fibers,
            orientations: &[],
            time: 0.0,
        };
        let system = ConstraintSystem::assemble(&gears(&fibers), &state);
        assert_eq!(system.rows, 18);
        let (u, omega) = (Vec3::new(0.3, -1.0, 2.0), Vec3::new(-0.7, 0.2, 1.1));
        let v: Vec<Vec3> = fibers
            .positions
            .iter()
            .map(|&y| u + omega.cross(y))
            .collect();
        let w = vec![omega; v.len()];
        let r = system.residual(&v, &w);
        assert!(r.iter().all(|x| x.abs() < 1e-14), "{r:?}");
        // And a relative rotation of two beads about their link does not.
        let mut w_bad = w.clone();
        w_bad[3] += Vec3::Z;
        assert!(system.residual(&v, &w_bad).iter().any(|x| x.abs() > 0.1));
    }

    /// The joint model: arms from a bent chain with a gap and rotated beads close every joint; rigid
    /// motions satisfy the constraint, a bead turning alone about a perpendicular axis does not,
    /// and the constraint forces have no net force or torque.
    #[test]
    fn rigid_motion_satisfies_the_joint_model() {
        let mut fibers = Fibers::with_gap(0.4, 0.05).unwrap();
        fibers
            .add(6, |s| Vec3::new(s.cos(), s.sin(), 0.3 * s))
            .unwrap();
        assert!(fibers.link_length_error() < 1e-12);
        let orientations: Vec<glam::DQuat> = (0..6)
            .map(|k| glam::DQuat::from_scaled_axis(Vec3::new(0.3 * k as f64, -0.2, 0.1 * k as f64)))
            .collect();
        let links = joints(&fibers, &orientations);
        for j in &links {
            let (p, q) = j.arms.world(&orientations);
            let y = &fibers.positions;
            let gap = y[j.arms.bead] + j.reach * p - y[j.arms.bead + 1] - j.reach * q;
            assert!(gap.length() < 1e-12);
            assert!((j.reach - 0.45).abs() < 1e-15);
        }
        let boxed: Vec<Box<dyn Constraint>> = links
            .iter()
            .map(|j| Box::new(*j) as Box<dyn Constraint>)
            .collect();
        let state = ConstraintState {
            fibers: &fibers,
            orientations: &orientations,
            time: 0.0,
        };
        let system = ConstraintSystem::assemble(&boxed, &state);
        let (u, omega) = (Vec3::new(0.3, -1.0, 2.0), Vec3::new(-0.7, 0.2, 1.1));
        let v: Vec<Vec3> = fibers
            .positions
            .iter()
            .map(|&y| u + omega.cross(y))
            .collect();
        let w = vec![omega; v.len()];
        assert!(system.residual(&v, &w).iter().all(|x| x.abs() < 1e-14));
        let mut w_bad = w.clone();
        let e = (fibers.positions[3] - fibers.positions[2]).normalize();
        w_bad[2] += e.any_orthonormal_vector();
        assert!(system.residual(&v, &w_bad).iter().any(|x| x.abs() > 0.1));
        let lambda: Vec<f64> = (0..system.rows).map(|k| (k as f64 * 0.37).sin()).collect();
        let (f, t) = system.transpose_times(&lambda, 6);
        let net_force: Vec3 = f.iter().sum();
        let net_torque: Vec3 = (0..6).map(|k| t[k] + fibers.positions[k].cross(f[k])).sum();
        assert!(net_force.length() < 1e-14 && net_torque.length() < 1e-13);
    }

    /// Constraint forces and torques J^T λ have zero net force and zero net torque about the origin.
    #[test]
    fn gears_forces_have_no_net_force_or_torque() {
        let fibers = bent_chain();
        let state = ConstraintState {
            fibers: &fibers,
            orientations: &[],
            time: 0.0,
        };
        let system = ConstraintSystem::assemble(&gears(&fibers), &state);
        let lambda: Vec<f64> = (0..system.rows)
            .map(|k| ((k * 7) % 5) as f64 - 2.0)
            .collect();
        let (f, t) = system.transpose_times(&lambda, fibers.bead_count());
        let net_force: Vec3 = f.iter().sum();
        let net_torque: Vec3 = (0..f.len())
            .map(|n| t[n] + fibers.positions[n].cross(f[n]))
            .sum();
        assert!(net_force.length() < 1e-14, "{net_force}");
        assert!(net_torque.length() < 1e-13, "{net_torque}");
    }

    #[test]
    fn prescribed_motion_rows() {
        let fibers = bent_chain();
        let state = ConstraintState {
            fibers: &fibers,
            orientations: &[],
            time: 2.0,
        };
        let actuated = PrescribedMotion {
            bead: 0,
            velocity: Some(Arc::new(|t| Vec3::new(t, 0.0, 0.0))),
            angular_velocity: None,
        };
        let constraints: Vec<Box<dyn Constraint>> = vec![
            Box::new(actuated),
            Box::new(PrescribedMotion::clamped(6)),
            Box::new(PrescribedMotion::hinged(3)),
        ];
        let system = ConstraintSystem::assemble(&constraints, &state);
        assert_eq!(system.rows, 3 + 6 + 3);
        let mut v = vec![Vec3::ZERO; 7];
        let w = vec![Vec3::ZERO; 7];
        v[0] = Vec3::new(2.0, 0.0, 0.0);
        assert!(system.residual(&v, &w).iter().all(|x| *x == 0.0));
        v[3] = Vec3::Y;
        assert_eq!(system.residual(&v, &w)[10], 1.0);
    }

    #[test]
    fn cross_matrix_is_the_cross_product() {
        let (a, b) = (Vec3::new(1.0, -2.0, 0.5), Vec3::new(0.3, 4.0, -1.0));
        assert!((cross_matrix(a) * b - a.cross(b)).length() < 1e-15);
    }

    /// The alternating spin constraint passes rigid rotations and blocks `W_n = (-1)^n w`, for odd and
    /// even bead counts; its torques `J^T λ` carry no net torque; the gears rows alone pass the pattern.
    #[test]
    fn alternating_spin_blocks_the_gears_null_pattern_and_passes_rigid_rotations() {
        for beads in [2, 3, 4, 5, 8, 9] {
            let mut fibers = Fibers::new(0.5).unwrap();
            fibers
                .add(beads, |s| Vec3::new(s, 0.1 * s * s, 0.0))
                .unwrap();
            let orientations = vec![glam::DQuat::IDENTITY; beads];
            let state = ConstraintState {
                fibers: &fibers,
                orientations: &orientations,
                time: 0.0,
            };
            let spin = AlternatingSpin { beads: 0..beads };
            let system = ConstraintSystem::assemble(&[Box::new(spin.clone())], &state);
            let gears_only = ConstraintSystem::assemble(&gears(&fibers), &state);
            let w = Vec3::new(0.3, -0.7, 0.2);
            let still = vec![Vec3::ZERO; beads];
            let alternating: Vec<Vec3> = (0..beads)
                .map(|n| if n % 2 == 0 { w } else { -w })
                .collect();
            let gears_residual = gears_only.times(&still, &alternating);
            assert!(gears_residual.iter().all(|r| r.abs() < 1e-15), "{beads}");
            let blocked = system.times(&still, &alternating);
            assert!(
                Vec3::from_slice(&blocked).length() > 0.5 * w.length(),
                "{beads}: {blocked:?}"
            );
            let rotation = vec![w; beads];
            let passed = system.times(&still, &rotation);
            assert!(
                Vec3::from_slice(&passed).length() < 1e-15,
                "{beads}: {passed:?}"
            );
            let (forces, torques) = system.transpose_times(&[1.0, -2.0, 0.5], beads);
            let net: Vec3 = torques.iter().sum();
            assert!(net.length() < 1e-14 && forces.iter().all(|f| *f == Vec3::ZERO));
            // Read from the other end, the weights are the same up to sign.
            let mirrored: Vec<f64> = (0..beads).map(|k| spin.weight(beads - 1 - k)).collect();
            let sign = mirrored[0] / spin.weight(0);
            assert!((0..beads).all(|k| (mirrored[k] - sign * spin.weight(k)).abs() < 1e-15));
        }
    }
}
