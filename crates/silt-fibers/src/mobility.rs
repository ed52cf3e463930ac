//! The mobility problem `Q' = M* F` of all beads (seed eq. 2.4): translational and angular velocities from
//! forces and torques, matrix-free, or as a dense `6N × 6N` matrix for small systems and tests.
//!
//! Generalised vectors are ordered by bead, `(V_1, W_1, V_2, W_2, ...)` (and `(F_1, T_1, ...)`).

use std::f64::consts::PI;

use rayon::prelude::*;
use silt_core::lanes::{with_lanes, LaneWork, Lanes, Vec3Lanes, LANES};
use silt_core::Vec3;
use silt_parallel::{block, Communicator};

use crate::ewald::EwaldRpy;
use crate::rpy::{PairLanes, RpyKernel};
use crate::spectral::SpectralRpy;
use std::sync::Arc;

/// Beads whose velocities one parallel task computes.
const BEADS_PER_TASK: usize = 16;

/// Which hydrodynamic interactions the mobility carries.
#[derive(Clone)]
pub enum Hydrodynamics {
    /// No interaction: each bead feels only its own Stokes drag (diagonal mobility, seed sec. 2.3).
    FreeDrain,
    /// Rotne–Prager–Yamakawa with the overlap correction, all pairs ([`crate::rpy`]).
    Rpy,
    /// The periodic RPY mobility of a box (Beenakker's Ewald sum, zero mean velocity), to a
    /// tolerance, by the O(N log N) spectral product ([`crate::spectral`]), in a box sheared by the
    /// Lees–Edwards tilt.
    PeriodicRpy(Periodic),
}

/// The periodic mobility's product and the box's current Lees–Edwards tilt (the x shift of the
/// images across y; 0 in a box not sheared).
#[derive(Clone)]
pub struct Periodic {
    pub product: Arc<SpectralRpy>,
    pub tilt: f64,
}

impl Periodic {
    /// A box not sheared.
    pub fn new(product: SpectralRpy) -> Self {
        Periodic {
            product: Arc::new(product),
            tilt: 0.0,
        }
    }
}

/// The multipliers' relative residual by default, and its share of a periodic product's tolerance
/// (solving `J M Jᵀ λ = r` much more closely than `M` is known is wasted work: the error of a
/// periodic product is already 0.1-0.25 of its tolerance).
pub const MULTIPLIER_TOLERANCE: f64 = 1e-10;
pub const PERIODIC_MULTIPLIER_SHARE: f64 = 0.1;

impl Hydrodynamics {
    /// The relative residual the multipliers' conjugate gradients reach by default:
    /// [`MULTIPLIER_TOLERANCE`], or [`PERIODIC_MULTIPLIER_SHARE`] of a periodic product's tolerance.
    pub fn multiplier_tolerance(&self) -> f64 {
        match self {
            Hydrodynamics::PeriodicRpy(periodic) => {
                (PERIODIC_MULTIPLIER_SHARE * periodic.product.tolerance()).max(MULTIPLIER_TOLERANCE)
            }
            _ => MULTIPLIER_TOLERANCE,
        }
    }
}

impl PartialEq for Hydrodynamics {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Hydrodynamics::FreeDrain, Hydrodynamics::FreeDrain)
            | (Hydrodynamics::Rpy, Hydrodynamics::Rpy) => true,
            (Hydrodynamics::PeriodicRpy(a), Hydrodynamics::PeriodicRpy(b)) => {
                a.product.lengths() == b.product.lengths()
                    && a.product.parameters() == b.product.parameters()
                    && a.tilt == b.tilt
            }
            _ => false,
        }
    }
}

impl std::fmt::Debug for Hydrodynamics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Hydrodynamics::FreeDrain => write!(f, "FreeDrain"),
            Hydrodynamics::Rpy => write!(f, "Rpy"),
            Hydrodynamics::PeriodicRpy(p) => write!(
                f,
                "PeriodicRpy {{ box: {}, tilt: {}, {:?} }}",
                p.product.lengths(),
                p.tilt,
                p.product.parameters()
            ),
        }
    }
}

impl Hydrodynamics {
    /// Whether this is the periodic mobility of a box.
    pub fn is_periodic(&self) -> bool {
        matches!(self, Hydrodynamics::PeriodicRpy(_))
    }
}

/// The beads' mobility.
#[derive(Clone, Debug, PartialEq)]
pub struct Mobility {
    /// Bead radius and fluid viscosity.
    pub kernel: RpyKernel,
    /// Free drain or RPY.
    pub hydrodynamics: Hydrodynamics,
}

impl Mobility {
    /// This mobility at `time` in `flow`: a periodic box in simple shear takes the Lees–Edwards
    /// tilt `γ̇ t L_y`, brought within half the box's x side (the lattice is the same); any other
    /// mobility is itself.
    ///
    /// # Panics
    /// If a sheared periodic box's product was not built for shear ([`SpectralRpy::new_sheared`]).
    pub fn in_flow(&self, flow: &crate::flows::AmbientFlow, time: f64) -> Mobility {
        let mut mobility = self.clone();
        if let (
            Hydrodynamics::PeriodicRpy(periodic),
            crate::flows::AmbientFlow::SimpleShear { shear_rate },
        ) = (&mut mobility.hydrodynamics, flow)
        {
            let lengths = periodic.product.lengths();
            let shift = shear_rate * time * lengths.y;
            periodic.tilt = shift - lengths.x * (shift / lengths.x).round();
            assert!(
                periodic.product.max_shear() > 0.0,
                "a sheared periodic box needs SpectralRpy::new_sheared"
            );
        }
        mobility
    }

    /// Velocities `V_i` and angular velocities `W_i` of beads at `positions` under `forces` and
    /// `torques` (seed eq. 2.4, `Q' = M* F`), without forming the matrix. Bead `i` takes the beads `j`
    /// four at a time (one per vector lane, [`RpyRows`]), each lane summing its beads in order and the
    /// lanes added at the end, so the result does not depend on the number of threads or on the
    /// processor.
    ///
    /// # Panics
    /// If the slices do not all have the same length.
    pub fn apply(
        &self,
        positions: &[Vec3],
        forces: &[Vec3],
        torques: &[Vec3],
        velocities: &mut [Vec3],
        angular_velocities: &mut [Vec3],
    ) {
        let n = positions.len();
        for (name, len) in [
            ("forces", forces.len()),
            ("torques", torques.len()),
            ("velocities", velocities.len()),
            ("angular velocities", angular_velocities.len()),
        ] {
            assert_eq!(
                len, n,
                "Mobility::apply: {name} has {len} beads, positions {n}"
            );
        }
        match self.hydrodynamics {
            Hydrodynamics::FreeDrain => {
                let (translation, rotation) =
                    (self.kernel.self_translation(), self.kernel.self_rotation());
                for i in 0..n {
                    velocities[i] = translation * forces[i];
                    angular_velocities[i] = rotation * torques[i];
                }
            }
            Hydrodynamics::Rpy => self.rpy_rows(
                positions,
                forces,
                torques,
                0,
                velocities,
                angular_velocities,
            ),
            Hydrodynamics::PeriodicRpy(ref periodic) => {
                let (v, w) =
                    periodic
                        .product
                        .sheared_product(positions, forces, torques, periodic.tilt);
                velocities.copy_from_slice(&v);
                angular_velocities.copy_from_slice(&w);
            }
        }
    }

    /// [`Mobility::apply`] on the ranks of `comm`, each computing the rows of its block of beads
    /// (`silt_parallel::block`) and all of them gathering the whole result: the `O(N²)` product
    /// split by rows. A row is summed in the same order whoever computes it, so the result is the
    /// serial product bit for bit on any number of ranks. Every rank calls it with the same inputs.
    pub fn apply_on(
        &self,
        comm: &dyn Communicator,
        positions: &[Vec3],
        forces: &[Vec3],
        torques: &[Vec3],
        velocities: &mut [Vec3],
        angular_velocities: &mut [Vec3],
    ) {
        // The periodic product is not shared out: every rank computes it whole (the same numbers).
        if comm.size() == 1 || !matches!(self.hydrodynamics, Hydrodynamics::Rpy) {
            return self.apply(positions, forces, torques, velocities, angular_velocities);
        }
        let n = positions.len();
        assert!(
            forces.len() == n
                && torques.len() == n
                && velocities.len() == n
                && angular_velocities.len() == n,
            "Mobility::apply_on: every slice needs {n} beads"
        );
        let mine = block(n, comm.size(), comm.rank());
        let mut v = vec![Vec3::ZERO; mine.len()];
        let mut w = vec![Vec3::ZERO; mine.len()];
        self.rpy_rows(positions, forces, torques, mine.start, &mut v, &mut w);
        let packed: Vec<f64> = v
            .iter()
            .zip(&w)
            .flat_map(|(v, w)| [v.x, v.y, v.z, w.x, w.y, w.z])
            .collect();
        let (all, _) = comm.all_gather_v(&packed);
        for ((bead, velocity), angular) in all
            .chunks_exact(6)
            .zip(velocities.iter_mut())
            .zip(angular_velocities.iter_mut())
        {
            *velocity = Vec3::new(bead[0], bead[1], bead[2]);
            *angular = Vec3::new(bead[3], bead[4], bead[5]);
        }
    }

    /// The RPY rows of beads `first .. first + velocities.len()` against all beads, in parallel
    /// tasks of [`BEADS_PER_TASK`] rows.
    fn rpy_rows(
        &self,
        positions: &[Vec3],
        forces: &[Vec3],
        torques: &[Vec3],
        first: usize,
        velocities: &mut [Vec3],
        angular_velocities: &mut [Vec3],
    ) {
        let columns = Columns::new(positions, forces, torques);
        velocities
            .par_chunks_mut(BEADS_PER_TASK)
            .zip(angular_velocities.par_chunks_mut(BEADS_PER_TASK))
            .enumerate()
            .for_each(|(task, (velocities, angular_velocities))| {
                with_lanes(RpyRows {
                    kernel: &self.kernel,
                    columns: &columns,
                    positions: &positions[first + task * BEADS_PER_TASK..],
                    velocities,
                    angular_velocities,
                })
            });
    }

    /// The dense `6N × 6N` mobility `M*` (row-major), rows and columns ordered `(V_1, W_1, ...)` and
    /// `(F_1, T_1, ...)`.
    pub fn dense(&self, positions: &[Vec3]) -> DenseMobility {
        let n = positions.len();
        let size = 6 * n;
        let mut values = vec![0.0; size * size];
        let (translation, rotation) = (self.kernel.self_translation(), self.kernel.self_rotation());
        // The periodic mobility's blocks by the direct Ewald sum (exact; small systems only).
        let ewald = match &self.hydrodynamics {
            Hydrodynamics::PeriodicRpy(p) => Some(
                EwaldRpy::sheared(self.kernel, p.product.lengths(), p.tilt, None)
                    .expect("a checked box"),
            ),
            _ => None,
        };
        for i in 0..n {
            for j in 0..n {
                // Blocks [[tt, tr], [rt, rr]] of bead i's rows and bead j's columns.
                let mut block = [[0.0; 6]; 6];
                if let Some(ewald) = &ewald {
                    let b = ewald.blocks(positions[i] - positions[j], i == j);
                    for a in 0..3 {
                        for c in 0..3 {
                            block[a][c] = b.tt.col(c)[a];
                            block[a][3 + c] = b.tr.col(c)[a];
                            block[3 + a][c] = b.tr.col(c)[a];
                            block[3 + a][3 + c] = b.rr.col(c)[a];
                        }
                    }
                } else if i == j {
                    for d in 0..3 {
                        block[d][d] = translation;
                        block[3 + d][3 + d] = rotation;
                    }
                } else if self.hydrodynamics == Hydrodynamics::Rpy {
                    let p = self.kernel.pair(positions[i] - positions[j]);
                    let e = p.direction.to_array();
                    // c T × r̂ = -c [r̂]x T, with [r̂]x v = r̂ × v.
                    let cross = [[0.0, -e[2], e[1]], [e[2], 0.0, -e[0]], [-e[1], e[0], 0.0]];
                    for a in 0..3 {
                        for b in 0..3 {
                            let identity = if a == b { 1.0 } else { 0.0 };
                            block[a][b] = p.tt_isotropic * identity + p.tt_along * e[a] * e[b];
                            block[3 + a][3 + b] =
                                p.rr_isotropic * identity + p.rr_along * e[a] * e[b];
                            block[a][3 + b] = -p.coupling * cross[a][b];
                            block[3 + a][b] = -p.coupling * cross[a][b];
                        }
                    }
                }
                for (a, row) in block.iter().enumerate() {
                    let start = (6 * i + a) * size + 6 * j;
                    values[start..start + 6].copy_from_slice(row);
                }
            }
        }
        DenseMobility { size, values }
    }
}

/// Positions, forces and torques by component, padded to a multiple of [`LANES`] beads with beads at
/// the origin that carry no force or torque (their contributions are exactly zero).
struct Columns {
    position: [Vec<f64>; 3],
    force: [Vec<f64>; 3],
    torque: [Vec<f64>; 3],
}

impl Columns {
    fn new(positions: &[Vec3], forces: &[Vec3], torques: &[Vec3]) -> Self {
        let padded = positions.len().div_ceil(LANES) * LANES;
        let column = |values: &[Vec3], c: usize| {
            let mut out: Vec<f64> = values.iter().map(|v| v[c]).collect();
            out.resize(padded, 0.0);
            out
        };
        Columns {
            position: [0, 1, 2].map(|c| column(positions, c)),
            force: [0, 1, 2].map(|c| column(forces, c)),
            torque: [0, 1, 2].map(|c| column(torques, c)),
        }
    }

    fn lanes<L: Lanes>(maker: L::Maker, columns: &[Vec<f64>; 3], j: usize) -> Vec3Lanes<L> {
        let at = |c: usize| L::from_array(maker, columns[c][j..j + LANES].try_into().unwrap());
        Vec3Lanes {
            x: at(0),
            y: at(1),
            z: at(2),
        }
    }
}

/// The RPY rows of a run of beads `i`, four beads `j` at a time: the lane form of
/// [`RpyKernel::pair`] and [`crate::rpy::PairMobility::velocities`]. Both branches are evaluated and
/// the overlap branch selected for `r < 2a`; at `r = 0` (bead `i` itself) the overlap branch is exactly
/// the self mobility and the direction is zero.
struct RpyRows<'a> {
    kernel: &'a RpyKernel,
    columns: &'a Columns,
    positions: &'a [Vec3],
    velocities: &'a mut [Vec3],
    angular_velocities: &'a mut [Vec3],
}

impl LaneWork for RpyRows<'_> {
    type Output = ();

    #[inline(always)]
    fn run<L: Lanes>(self, maker: L::Maker) {
        let (a, eta) = (self.kernel.radius(), self.kernel.viscosity());
        let splat = |v: f64| L::splat(maker, v);
        let zero = splat(0.0);
        // Where the far-field form starts: 2a, or any distance above zero without the overlap
        // correction (bead i itself always takes the self terms).
        let contact = splat(self.kernel.far_from());
        let inverse_radius = splat(1.0 / a);
        // Far branch: 1/(8πη r) (1 + 2a²/(3r²)), 1/(8πη r) (1 - 2a²/r²), ∓1/(16πη r³), 1/(8πη r²).
        let far_translation = splat(1.0 / (8.0 * PI * eta));
        let far_rotation = splat(1.0 / (16.0 * PI * eta));
        let (one, three) = (splat(1.0), splat(3.0));
        let two_a2_over_3 = splat(2.0 * a * a / 3.0);
        let two_a2 = splat(2.0 * a * a);
        // Overlap branch (Wajnryb et al.), in s = r/a.
        let self_translation = splat(self.kernel.self_translation());
        let self_rotation = splat(self.kernel.self_rotation());
        let near_coupling = splat(1.0 / (16.0 * PI * eta * a * a));
        let c = |v: f64| splat(v);
        let padded = self.columns.position[0].len();
        for ((yi, velocity), angular) in self
            .positions
            .iter()
            .zip(self.velocities.iter_mut())
            .zip(self.angular_velocities.iter_mut())
        {
            let centre = Vec3Lanes {
                x: splat(yi.x),
                y: splat(yi.y),
                z: splat(yi.z),
            };
            let mut v = Vec3Lanes {
                x: zero,
                y: zero,
                z: zero,
            };
            let mut w = v;
            for j in (0..padded).step_by(LANES) {
                let separation = centre - Columns::lanes::<L>(maker, &self.columns.position, j);
                let force = Columns::lanes::<L>(maker, &self.columns.force, j);
                let torque = Columns::lanes::<L>(maker, &self.columns.torque, j);
                let r = separation.length_squared().sqrt();
                let apart = r.gt(zero);
                let inverse_r = L::select(apart, one / r, zero);
                let direction = Vec3Lanes {
                    x: separation.x * inverse_r,
                    y: separation.y * inverse_r,
                    z: separation.z * inverse_r,
                };
                // r ≥ 2a.
                let inverse_r2 = inverse_r * inverse_r;
                let translation = far_translation * inverse_r;
                let rotation = far_rotation * inverse_r2 * inverse_r;
                let far_tt_isotropic = translation * (one + two_a2_over_3 * inverse_r2);
                let far_tt_along = translation * (one - two_a2 * inverse_r2);
                let far_rr_isotropic = -rotation;
                let far_rr_along = three * rotation;
                let far_coupling = far_translation * inverse_r2;
                let far = r.ge(contact);
                let mut tt_isotropic = far_tt_isotropic;
                let mut tt_along = far_tt_along;
                let mut rr_isotropic = far_rr_isotropic;
                let mut rr_along = far_rr_along;
                let mut coupling = far_coupling;
                // r < 2a (bead i itself and its overlapping neighbours: few groups of four).
                if L::any(!far) {
                    let s = r * inverse_radius;
                    let s3 = s * s * s;
                    let near_tt_isotropic = self_translation * (one - c(9.0 / 32.0) * s);
                    let near_tt_along = self_translation * (c(3.0 / 32.0) * s);
                    let near_rr_isotropic =
                        self_rotation * (one - c(27.0 / 32.0) * s + c(5.0 / 64.0) * s3);
                    let near_rr_along = self_rotation * (c(9.0 / 32.0) * s - c(3.0 / 64.0) * s3);
                    let near_coupling = near_coupling * (s - c(3.0 / 8.0) * s * s);
                    tt_isotropic = L::select(far, tt_isotropic, near_tt_isotropic);
                    tt_along = L::select(far, tt_along, near_tt_along);
                    rr_isotropic = L::select(far, rr_isotropic, near_rr_isotropic);
                    rr_along = L::select(far, rr_along, near_rr_along);
                    coupling = L::select(far, coupling, near_coupling);
                }

                (v, w) = PairLanes {
                    tt_isotropic,
                    tt_along,
                    coupling,
                    rr_isotropic,
                    rr_along,
                    direction,
                }
                .add_velocities((v, w), force, torque);
            }
            let sum = |lanes: Vec3Lanes<L>| {
                let [l0, l1, l2, l3] = lanes.to_vectors();
                (l0 + l1) + (l2 + l3)
            };
            *velocity = sum(v);
            *angular = sum(w);
        }
    }
}

/// A dense mobility matrix, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct DenseMobility {
    /// Number of rows and columns, `6N`.
    pub size: usize,
    /// `values[row * size + column]`.
    pub values: Vec<f64>,
}

impl DenseMobility {
    /// Entry at `row`, `column`.
    pub fn get(&self, row: usize, column: usize) -> f64 {
        self.values[row * self.size + column]
    }

    /// `M x`.
    pub fn times(&self, x: &[f64]) -> Vec<f64> {
        self.values
            .chunks_exact(self.size)
            .map(|row| row.iter().zip(x).map(|(m, v)| m * v).sum())
            .collect()
    }
}

impl DenseMobility {
    /// The rigid-body motion of the beads at `positions` (their mobility `self`) in an ambient flow
    /// with velocities `flow_velocities` and angular velocities `flow_spins` at the beads, free of
    /// force and torque: V_i = U + Ω × (Y_i - centre), W_i = Ω, with (U, Ω) from
    /// (Kᵀ M⁻¹ K) (U, Ω) = Kᵀ M⁻¹ V∞ (the projection of the 6N mobility onto rigid motions, independent
    /// of the constraint solver; the reference of rigid fibers). `Err` if M is singular.
    pub fn rigid_body_motion(
        &self,
        positions: &[Vec3],
        centre: Vec3,
        flow_velocities: &[Vec3],
        flow_spins: &[Vec3],
    ) -> Result<(Vec3, Vec3), String> {
        let size = self.size;
        // K: size x 6, rows (V_i, W_i), columns (U, Ω); Ω × r = -[r]x Ω.
        let mut k = vec![[0.0; 6]; size];
        for (i, &y) in positions.iter().enumerate() {
            let r = y - centre;
            let cross = [[0.0, r.z, -r.y], [-r.z, 0.0, r.x], [r.y, -r.x, 0.0]];
            for d in 0..3 {
                k[6 * i + d][d] = 1.0;
                k[6 * i + 3 + d][3 + d] = 1.0;
                k[6 * i + d][3..6].copy_from_slice(&cross[d]);
            }
        }
        let mut right_sides: Vec<Vec<f64>> = (0..6)
            .map(|c| k.iter().map(|row| row[c]).collect())
            .collect();
        right_sides.push(
            flow_velocities
                .iter()
                .zip(flow_spins)
                .flat_map(|(v, w)| v.to_array().into_iter().chain(w.to_array()))
                .collect(),
        );
        let solved = lu_solve(self.values.clone(), size, right_sides)?;
        // Kᵀ M⁻¹ K and Kᵀ M⁻¹ V∞.
        let mut resistance = vec![0.0; 36];
        let mut drive = vec![0.0; 6];
        for a in 0..6 {
            for b in 0..6 {
                resistance[a * 6 + b] = (0..size).map(|r| k[r][a] * solved[b][r]).sum();
            }
            drive[a] = (0..size).map(|r| k[r][a] * solved[6][r]).sum();
        }
        let u = lu_solve(resistance, 6, vec![drive])?.remove(0);
        Ok((Vec3::new(u[0], u[1], u[2]), Vec3::new(u[3], u[4], u[5])))
    }
}

/// Solves `a x = b` for each `b` of `right_sides` (a: n x n, row-major) by LU with partial pivoting.
fn lu_solve(
    mut a: Vec<f64>,
    n: usize,
    mut right_sides: Vec<Vec<f64>>,
) -> Result<Vec<Vec<f64>>, String> {
    for col in 0..n {
        let pivot = (col..n)
            .max_by(|&i, &j| a[i * n + col].abs().total_cmp(&a[j * n + col].abs()))
            .unwrap_or(col);
        if a[pivot * n + col] == 0.0 || !a[pivot * n + col].is_finite() {
            return Err(format!("the matrix is singular at column {col}"));
        }
        if pivot != col {
            for k in 0..n {
                a.swap(col * n + k, pivot * n + k);
            }
            for b in right_sides.iter_mut() {
                b.swap(col, pivot);
            }
        }
        for row in col + 1..n {
            let factor = a[row * n + col] / a[col * n + col];
            if factor != 0.0 {
                for k in col..n {
                    a[row * n + k] -= factor * a[col * n + k];
                }
                for b in right_sides.iter_mut() {
                    b[row] -= factor * b[col];
                }
            }
        }
    }
    for b in right_sides.iter_mut() {
        for row in (0..n).rev() {
            let sum: f64 = (row + 1..n).map(|k| a[row * n + k] * b[k]).sum();
            b[row] = (b[row] - sum) / a[row * n + row];
        }
    }
    Ok(right_sides)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random_beads(n: usize, box_size: f64, seed: u64) -> Vec<Vec3> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                Vec3::new(
                    rng.gen_range(0.0..box_size),
                    rng.gen_range(0.0..box_size),
                    rng.gen_range(0.0..box_size),
                )
            })
            .collect()
    }

    fn random_vectors(n: usize, seed: u64) -> Vec<Vec3> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                Vec3::new(
                    rng.gen_range(-1.0..1.0),
                    rng.gen_range(-1.0..1.0),
                    rng.gen_range(-1.0..1.0),
                )
            })
            .collect()
    }

    fn rpy(radius: f64) -> Mobility {
        Mobility {
            kernel: RpyKernel::new(radius, 0.7).unwrap(),
            hydrodynamics: Hydrodynamics::Rpy,
        }
    }

    /// Lower Cholesky factor of a symmetric matrix, `None` if it is not positive definite.
    fn cholesky(m: &DenseMobility) -> Option<Vec<f64>> {
        let n = m.size;
        let mut l = vec![0.0; n * n];
        for j in 0..n {
            let d = m.get(j, j) - (0..j).map(|k| l[j * n + k] * l[j * n + k]).sum::<f64>();
            if d <= 0.0 || !d.is_finite() {
                return None;
            }
            let djj = d.sqrt();
            l[j * n + j] = djj;
            for i in j + 1..n {
                let s = m.get(i, j) - (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum::<f64>();
                l[i * n + j] = s / djj;
            }
        }
        Some(l)
    }

    /// Smallest eigenvalue of `m` by inverse iteration with its Cholesky factor `l`.
    fn smallest_eigenvalue(m: &DenseMobility, l: &[f64]) -> f64 {
        let n = m.size;
        let mut x: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64).collect();
        let mut lambda = 0.0;
        for _ in 0..200 {
            let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
            x.iter_mut().for_each(|v| *v /= norm);
            // Solve L L^T y = x.
            let mut y = x.clone();
            for i in 0..n {
                y[i] = (y[i] - (0..i).map(|k| l[i * n + k] * y[k]).sum::<f64>()) / l[i * n + i];
            }
            for i in (0..n).rev() {
                y[i] = (y[i] - (i + 1..n).map(|k| l[k * n + i] * y[k]).sum::<f64>()) / l[i * n + i];
            }
            let mx = m.times(&x);
            lambda = x.iter().zip(&mx).map(|(a, b)| a * b).sum::<f64>();
            x = y;
        }
        lambda
    }

    /// The full mobility is symmetric and positive definite for random configurations with many
    /// overlapping beads (Cholesky succeeds, smallest eigenvalue > 0).
    #[test]
    fn rpy_mobility_is_symmetric_positive_definite_with_overlaps() {
        for (seed, n, box_size) in [(1, 30, 3.0), (2, 40, 5.0), (3, 12, 1.0)] {
            let positions = random_beads(n, box_size, seed);
            let overlaps = (0..n)
                .flat_map(|i| (0..i).map(move |j| (i, j)))
                .filter(|&(i, j)| positions[i].distance(positions[j]) < 2.0 * 0.5)
                .count();
            assert!(
                overlaps > 0,
                "seed {seed}: the test needs overlapping beads"
            );
            let m = rpy(0.5).dense(&positions);
            for r in 0..m.size {
                for c in 0..r {
                    let (x, y) = (m.get(r, c), m.get(c, r));
                    assert!(
                        (x - y).abs() <= 1e-15 * m.get(r, r),
                        "({r}, {c}): {x} vs {y}"
                    );
                }
            }
            let l = cholesky(&m).unwrap_or_else(|| panic!("seed {seed}: Cholesky fails"));
            let smallest = smallest_eigenvalue(&m, &l);
            assert!(
                smallest > 0.0,
                "seed {seed}: smallest eigenvalue {smallest}"
            );
        }
    }

    /// The matrix-free product equals the dense matrix times the generalised force.
    #[test]
    fn matrix_free_product_matches_the_dense_matrix() {
        let n = 25;
        let positions = random_beads(n, 4.0, 7);
        let forces = random_vectors(n, 8);
        let torques = random_vectors(n, 9);
        for mobility in [
            rpy(0.5),
            Mobility {
                hydrodynamics: Hydrodynamics::FreeDrain,
                ..rpy(0.5)
            },
            // The far-field form for the overlapping pairs too.
            Mobility {
                kernel: rpy(0.5).kernel.without_overlap_correction(),
                ..rpy(0.5)
            },
        ] {
            let mut v = vec![Vec3::ZERO; n];
            let mut w = vec![Vec3::ZERO; n];
            mobility.apply(&positions, &forces, &torques, &mut v, &mut w);
            let generalised: Vec<f64> = (0..n)
                .flat_map(|i| {
                    forces[i]
                        .to_array()
                        .into_iter()
                        .chain(torques[i].to_array())
                })
                .collect();
            let dense = mobility.dense(&positions).times(&generalised);
            let scale = dense.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            for i in 0..n {
                let got = v[i].to_array().into_iter().chain(w[i].to_array());
                for (k, g) in got.enumerate() {
                    let want = dense[6 * i + k];
                    assert!((g - want).abs() <= 1e-13 * scale, "bead {i} entry {k}");
                }
            }
        }
    }

    #[test]
    fn product_does_not_depend_on_the_thread_count() {
        let n = 64;
        let positions = random_beads(n, 6.0, 11);
        let forces = random_vectors(n, 12);
        let torques = random_vectors(n, 13);
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut v = vec![Vec3::ZERO; n];
                let mut w = vec![Vec3::ZERO; n];
                rpy(0.5).apply(&positions, &forces, &torques, &mut v, &mut w);
                (v, w)
            })
        };
        let bits = |x: &[Vec3]| {
            x.iter()
                .flat_map(|v| v.to_array().map(f64::to_bits))
                .collect::<Vec<_>>()
        };
        let (v1, w1) = run(1);
        let (v2, w2) = run(2);
        assert_eq!(bits(&v1), bits(&v2));
        assert_eq!(bits(&w1), bits(&w2));
    }

    /// The lane kernel gives the same bits with portable lanes as with this processor's best ones.
    #[test]
    fn product_is_the_same_on_every_instruction_set() {
        let n = 37;
        let positions = random_beads(n, 3.0, 21);
        let forces = random_vectors(n, 22);
        let torques = random_vectors(n, 23);
        let columns = Columns::new(&positions, &forces, &torques);
        let kernel = RpyKernel::new(0.5, 0.7).unwrap();
        let run = |portable: bool| {
            let mut v = vec![Vec3::ZERO; n];
            let mut w = vec![Vec3::ZERO; n];
            let rows = RpyRows {
                kernel: &kernel,
                columns: &columns,
                positions: &positions,
                velocities: &mut v,
                angular_velocities: &mut w,
            };
            if portable {
                rows.run::<silt_core::lanes::F64x4>(());
            } else {
                with_lanes(rows);
            }
            (v, w)
        };
        let bits = |x: &[Vec3]| {
            x.iter()
                .flat_map(|v| v.to_array().map(f64::to_bits))
                .collect::<Vec<_>>()
        };
        let (v_portable, w_portable) = run(true);
        let (v_best, w_best) = run(false);
        assert_eq!(bits(&v_portable), bits(&v_best));
        assert_eq!(bits(&w_portable), bits(&w_best));
    }

    /// Free drain: every bead moves with its own Stokes drag only.
    #[test]
    fn free_drain_is_diagonal() {
        let positions = random_beads(5, 1.0, 3);
        let m = Mobility {
            hydrodynamics: Hydrodynamics::FreeDrain,
            ..rpy(0.25)
        }
        .dense(&positions);
        let kernel = RpyKernel::new(0.25, 0.7).unwrap();
        for r in 0..m.size {
            for c in 0..m.size {
                let expect = match (r == c, r % 6 < 3) {
                    (false, _) => 0.0,
                    (true, true) => kernel.self_translation(),
                    (true, false) => kernel.self_rotation(),
                };
                assert_eq!(m.get(r, c), expect, "({r}, {c})");
            }
        }
    }

    /// The periodic mobility: its product (spectral, to 1e-6) equals its dense matrix (the direct
    /// Ewald sum) times the same loads, and the dense matrix is symmetric positive definite with
    /// overlapping beads, as the unbounded one.
    #[test]
    fn the_periodic_product_equals_its_dense_matrix() {
        let lengths = Vec3::new(6.0, 7.0, 8.0);
        let positions: Vec<Vec3> = random_beads(24, 5.0, 9)
            .into_iter()
            .map(|x| x + Vec3::splat(1.0))
            .collect();
        let kernel = RpyKernel::new(0.5, 1.0).unwrap();
        let mobility = Mobility {
            kernel,
            hydrodynamics: Hydrodynamics::PeriodicRpy(Periodic::new(
                SpectralRpy::new(kernel, lengths, 1e-6, positions.len()).unwrap(),
            )),
        };
        let n = positions.len();
        let forces: Vec<Vec3> = (0..n)
            .map(|i| Vec3::new(1.0, -0.5, (i % 3) as f64))
            .collect();
        let torques: Vec<Vec3> = (0..n)
            .map(|i| Vec3::new(0.2, (i % 5) as f64, 0.1))
            .collect();
        let (mut v, mut w) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        mobility.apply(&positions, &forces, &torques, &mut v, &mut w);
        let dense = mobility.dense(&positions);
        let loads: Vec<f64> = (0..n)
            .flat_map(|i| [forces[i].to_array(), torques[i].to_array()].concat())
            .collect();
        let exact = dense.times(&loads);
        let product: Vec<f64> = (0..n)
            .flat_map(|i| [v[i].to_array(), w[i].to_array()].concat())
            .collect();
        let difference = exact
            .iter()
            .zip(&product)
            .map(|(a, b)| (a - b).powi(2))
            .sum::<f64>();
        let size = exact.iter().map(|a| a * a).sum::<f64>();
        assert!(
            (difference / size).sqrt() < 1e-6,
            "{}",
            (difference / size).sqrt()
        );
        let l = cholesky(&dense).expect("positive definite");
        assert!(smallest_eigenvalue(&dense, &l) > 0.0);
    }
}
