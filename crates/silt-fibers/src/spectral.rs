//! The periodic RPY mobility product in O(N log N) (issue 25): Beenakker's Ewald splitting
//! ([`crate::ewald`]) with the real-space part summed over the pairs within a cutoff (a cell list)
//! and the wave-space part by the spectral Ewald method (Lindbo & Tornberg 2011, as in the positively
//! split Ewald of Fiore et al. 2017): forces and torques spread onto a uniform grid with truncated
//! Gaussians, a 3-D FFT, the wave kernels applied per mode, the inverse FFT, and the velocities
//! interpolated back with the same Gaussians. One tolerance sets the splitting, the cutoffs, the grid
//! and the Gaussians' support. Theory and checks: `docs/theory/periodic-rpy.md`.

use crate::ewald::{cross_matrix, outer, real_blocks, self_blocks};
use crate::rpy::RpyKernel;
use glam::DMat3;
use rayon::prelude::*;
use rustfft::num_complex::Complex64;
use rustfft::{Fft, FftPlanner};
use silt_core::Vec3;
use std::f64::consts::PI;
use std::sync::Arc;

/// The most memory the wave space's grids may take (six complex grids and the modes' values).
const MAX_GRID_BYTES: f64 = 8.0 * (1u64 << 30) as f64;

/// The smallest `x ≥ 0` with `bound(x) ≤ tolerance`, `bound` decreasing past its maximum (bisection).
fn cut_at(tolerance: f64, bound: impl Fn(f64) -> f64) -> f64 {
    let (mut low, mut high) = (1.0, 20.0);
    for _ in 0..100 {
        let middle = 0.5 * (low + high);
        if bound(middle) > tolerance {
            low = middle;
        } else {
            high = middle;
        }
    }
    high
}

/// The parameters the tolerance sets (see [`SpectralRpy::new`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpectralParameters {
    /// Ewald splitting parameter `ξ`.
    pub xi: f64,
    /// Real-space cutoff `r_c`.
    pub real_cutoff: f64,
    /// Wave cutoff `k_c` the grid resolves.
    pub wave_cutoff: f64,
    /// Grid points along each axis.
    pub grid: [usize; 3],
    /// Grid points of a Gaussian's support along each axis (at most).
    pub support: usize,
    /// The Gaussians' truncation, in standard deviations.
    pub truncation: f64,
    /// The Gaussians' share `η` of the wave kernel's decay (`0 < η < 1`).
    pub gaussian_share: f64,
}

/// The periodic RPY product of beads of one radius in an orthorhombic box.
pub struct SpectralRpy {
    kernel: RpyKernel,
    lengths: Vec3,
    parameters: SpectralParameters,
    /// Grid spacing along each axis.
    spacing: Vec3,
    forward: [Arc<dyn Fft<f64>>; 3],
    inverse: [Arc<dyn Fft<f64>>; 3],
}

impl SpectralRpy {
    /// The product for beads of `kernel` in a box of `lengths` to relative `tolerance` (1e-10 to
    /// 1e-2), with about `beads` beads (which balances the real-space and grid work):
    /// - the real-space cutoff `x_c = ξ r_c` where Beenakker's real-space kernel (terms up to
    ///   `x⁷ e^{−x²}`) falls below the tolerance, `r_c` about 30 beads' share of the volume, at most half
    ///   the shortest side (one image per pair);
    /// - Gaussians cut at `m` standard deviations (`erfc(m/√2) ≤ tolerance/10`), `s` grid spacings wide
    ///   (`exp(−π² s²/2) ≈ tolerance/10`: their samples sum to their integral);
    /// - the grid spacing `h` at most `π / k_c` (`k_c = 2ξ y_c`, where `Φ(k)` falls below the
    ///   tolerance) and fine enough that the wave kernel with the Gaussians' share `η = 4ξ²s²h²` divided
    ///   out, `Φ e^{−(1−η)q}`, has fallen below the tolerance at the Nyquist wave number (`η < 0.9`).
    ///
    /// Checked against the direct Ewald sum at 1e-3, 1e-5 and 1e-8 (errors 0.4-0.9 of the tolerance).
    pub fn new(
        kernel: RpyKernel,
        lengths: Vec3,
        tolerance: f64,
        beads: usize,
    ) -> Result<Self, String> {
        if !(lengths.is_finite() && lengths.min_element() > 0.0) {
            return Err(format!("box lengths must be positive, got {lengths}"));
        }
        if !(1e-10..=1e-2).contains(&tolerance) {
            return Err(format!(
                "tolerance {tolerance} is not allowed; from 1e-10 to 1e-2"
            ));
        }
        let volume = lengths.x * lengths.y * lengths.z;
        let root_pi = PI.sqrt();
        let x_c = cut_at(tolerance, |x| {
            libm::erfc(x)
                + (4.0 * x.powi(7) + 20.0 * x.powi(5) + 14.0 * x.powi(3) + 5.0 * x) * (-x * x).exp()
                    / root_pi
        });
        let y_c = cut_at(tolerance, |y| {
            (1.0 + y * y + 2.0 * y.powi(4)) * (-y * y).exp()
        });
        let share = (30.0 * volume / (beads.max(1) as f64 * 4.0 / 3.0 * PI)).cbrt();
        let real_cutoff = share
            .max(2.0 * kernel.radius())
            .min(0.5 * lengths.min_element());
        let xi = x_c / real_cutoff;
        let wave_cutoff = 2.0 * xi * y_c;
        // Gaussians cut at m standard deviations, of width s grid spacings (their samples' sum is
        // their integral to ~exp(-π² s² / 2)).
        let m = cut_at(0.1 * tolerance, |m| libm::erfc(m / 2f64.sqrt()));
        let s = (2.0 * (10.0 / tolerance).ln()).sqrt() / PI;
        // The spacing: fine enough that the kernel with the Gaussians' share divided out,
        // Φ e^{−(1−η) q}, has fallen below the tolerance at the grid's Nyquist wave number.
        let mut h = PI / wave_cutoff;
        let gaussian_share = loop {
            let share = 4.0 * xi * xi * s * s * h * h;
            let q = (PI / h).powi(2) / (4.0 * xi * xi);
            if share < 0.9 && (1.0 + q + 2.0 * q * q) * (-(1.0 - share) * q).exp() <= tolerance {
                break share;
            }
            h *= 0.95;
        };
        let grid: [usize; 3] =
            std::array::from_fn(|axis| fft_friendly(((lengths[axis] / h).ceil() as usize).max(8)));
        let points = grid.iter().map(|&n| n as f64).product::<f64>();
        let bytes = 12.0 * 16.0 * points;
        if bytes > MAX_GRID_BYTES {
            return Err(format!(
                "the wave-space grid of {} x {} x {} points would take {:.1} GiB (at most {:.0}); \
                 loosen the tolerance ({tolerance:e}) or use a smaller box",
                grid[0],
                grid[1],
                grid[2],
                bytes / (1u64 << 30) as f64,
                MAX_GRID_BYTES / (1u64 << 30) as f64
            ));
        }
        let spacing = lengths / Vec3::new(grid[0] as f64, grid[1] as f64, grid[2] as f64);
        let sigma = s * spacing.max_element();
        let gaussian_share = gaussian_share.max(4.0 * xi * xi * sigma * sigma);
        let support = ((2.0 * m * sigma / spacing.min_element()).floor() as usize + 2)
            .min(*grid.iter().min().unwrap());
        let mut planner = FftPlanner::new();
        let forward = grid.map(|n| planner.plan_fft_forward(n));
        let inverse = grid.map(|n| planner.plan_fft_inverse(n));
        Ok(SpectralRpy {
            kernel,
            lengths,
            parameters: SpectralParameters {
                xi,
                real_cutoff,
                wave_cutoff,
                grid,
                support,
                truncation: m,
                gaussian_share,
            },
            spacing,
            forward,
            inverse,
        })
    }

    /// The parameters the tolerance chose.
    pub fn parameters(&self) -> SpectralParameters {
        self.parameters
    }

    /// The velocities `V` and angular velocities `W` of beads at `positions` under `forces` and
    /// `torques`: real space + wave space + self (the same numbers for any thread count).
    pub fn product(
        &self,
        positions: &[Vec3],
        forces: &[Vec3],
        torques: &[Vec3],
    ) -> (Vec<Vec3>, Vec<Vec3>) {
        let (mut v, mut w) = self.real_space(positions, forces, torques);
        let (vw, ww) = self.wave_space(positions, forces, torques);
        let own = self_blocks(&self.kernel, self.parameters.xi);
        for i in 0..positions.len() {
            v[i] += vw[i] + own.tt * forces[i];
            w[i] += ww[i] + own.rr * torques[i];
        }
        (v, w)
    }

    /// The real-space sum over the pairs closer than the cutoff (minimum image), from a cell list.
    fn real_space(
        &self,
        positions: &[Vec3],
        forces: &[Vec3],
        torques: &[Vec3],
    ) -> (Vec<Vec3>, Vec<Vec3>) {
        let cutoff = self.parameters.real_cutoff;
        let cells: [usize; 3] =
            std::array::from_fn(|a| ((self.lengths[a] / cutoff).floor() as usize).max(1));
        let cell_of = |x: Vec3| -> [usize; 3] {
            std::array::from_fn(|a| {
                let s = (x[a] / self.lengths[a]).rem_euclid(1.0);
                ((s * cells[a] as f64) as usize).min(cells[a] - 1)
            })
        };
        let index = |c: [usize; 3]| c[0] + cells[0] * (c[1] + cells[1] * c[2]);
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); cells[0] * cells[1] * cells[2]];
        for (i, &x) in positions.iter().enumerate() {
            members[index(cell_of(x))].push(i);
        }
        // Each cell's neighbours (itself included), each once however few cells there are.
        let neighbours = |c: [usize; 3]| -> Vec<usize> {
            let mut list = Vec::with_capacity(27);
            for dz in -1i64..=1 {
                for dy in -1i64..=1 {
                    for dx in -1i64..=1 {
                        let d = [dx, dy, dz];
                        let n: [usize; 3] = std::array::from_fn(|a| {
                            (c[a] as i64 + d[a]).rem_euclid(cells[a] as i64) as usize
                        });
                        list.push(index(n));
                    }
                }
            }
            list.sort_unstable();
            list.dedup();
            list
        };
        let rc2 = cutoff * cutoff;
        positions
            .par_iter()
            .enumerate()
            .map(|(i, &x)| {
                let (mut v, mut w) = (Vec3::ZERO, Vec3::ZERO);
                for cell in neighbours(cell_of(x)) {
                    for &j in &members[cell] {
                        if j == i {
                            continue;
                        }
                        let r = x - positions[j];
                        let r = r - self.lengths * (r / self.lengths).round();
                        if r.length_squared() > rc2 {
                            continue;
                        }
                        let b = real_blocks(&self.kernel, self.parameters.xi, r);
                        v += b.tt * forces[j] + b.tr * torques[j];
                        w += b.tr * forces[j] + b.rr * torques[j];
                    }
                }
                (v, w)
            })
            .unzip()
    }

    /// The Gaussian weights of a bead at `x` along each axis: its support's first grid index
    /// (wrapped) and `P` weights per axis.
    fn weights(&self, x: Vec3) -> ([i64; 3], [Vec<f64>; 3]) {
        let p = self.parameters.support;
        let two_sigma2 = self.parameters.gaussian_share / (2.0 * self.parameters.xi.powi(2));
        let norm = (PI * two_sigma2).powf(-0.5);
        let mut first = [0i64; 3];
        let weights = std::array::from_fn(|a| {
            let h = self.spacing[a];
            // The grid points within m σ of x (at most P; the weights beyond are zero).
            let reach = self.parameters.truncation * (0.5 * two_sigma2).sqrt();
            let start = ((x[a] - reach) / h).ceil() as i64;
            first[a] = start;
            (0..p)
                .map(|q| {
                    let d = (start + q as i64) as f64 * h - x[a];
                    if d.abs() <= reach {
                        norm * (-d * d / two_sigma2).exp()
                    } else {
                        0.0
                    }
                })
                .collect()
        });
        (first, weights)
    }

    /// The wave-space sum by the spectral Ewald method.
    fn wave_space(
        &self,
        positions: &[Vec3],
        forces: &[Vec3],
        torques: &[Vec3],
    ) -> (Vec<Vec3>, Vec<Vec3>) {
        let [n0, n1, n2] = self.parameters.grid;
        let points = n0 * n1 * n2;
        let at = |i: i64, j: i64, k: i64| -> usize {
            (i.rem_euclid(n0 as i64) as usize)
                + n0 * ((j.rem_euclid(n1 as i64) as usize)
                    + n1 * (k.rem_euclid(n2 as i64) as usize))
        };
        // Spread the six components (bead by bead, in order: the same sums for any threads).
        let mut grids: Vec<Vec<Complex64>> = vec![vec![Complex64::default(); points]; 6];
        let bead_weights: Vec<_> = positions.par_iter().map(|&x| self.weights(x)).collect();
        for (b, (first, weight)) in bead_weights.iter().enumerate() {
            let sources = [forces[b], torques[b]];
            for (qz, wz) in weight[2].iter().enumerate() {
                for (qy, wy) in weight[1].iter().enumerate() {
                    for (qx, wx) in weight[0].iter().enumerate() {
                        let g = wx * wy * wz;
                        let m = at(
                            first[0] + qx as i64,
                            first[1] + qy as i64,
                            first[2] + qz as i64,
                        );
                        for c in 0..6 {
                            grids[c][m].re += g * sources[c / 3][c % 3];
                        }
                    }
                }
            }
        }
        for grid in grids.iter_mut() {
            self.transform(grid, &self.forward);
        }
        // The wave kernels per mode, with the two Gaussians' decay divided out.
        let (xi, eta) = (self.parameters.xi, self.kernel.viscosity());
        let a = self.kernel.radius();
        let volume = self.lengths.x * self.lengths.y * self.lengths.z;
        let cell = self.spacing.x * self.spacing.y * self.spacing.z;
        let share = self.parameters.gaussian_share;
        let wave = |index: usize, n: usize, length: f64| -> f64 {
            let signed = if index <= n / 2 {
                index as f64
            } else {
                index as f64 - n as f64
            };
            2.0 * PI * signed / length
        };
        let modes: Vec<[Complex64; 6]> = (0..points)
            .into_par_iter()
            .map(|m| {
                let (i, j, l) = (m % n0, (m / n0) % n1, m / (n0 * n1));
                let k = Vec3::new(
                    wave(i, n0, self.lengths.x),
                    wave(j, n1, self.lengths.y),
                    wave(l, n2, self.lengths.z),
                );
                let k2 = k.length_squared();
                let zero = Complex64::default();
                if k2 == 0.0 {
                    return [zero; 6];
                }
                let q = k2 / (4.0 * xi * xi);
                // Φ e^{η q}: the kernel's splitting with the Gaussians' share divided out.
                let splitting = (1.0 + q + 2.0 * q * q) * (-(1.0 - share) * q).exp();
                let transverse = DMat3::IDENTITY - outer(k) / k2;
                let scale = cell * splitting / (eta * volume);
                let tt = transverse * (scale * (1.0 - a * a * k2 / 3.0) / k2);
                let tr = cross_matrix(k) * (-scale / (2.0 * k2));
                let rr = transverse * (scale / 4.0);
                let f = [grids[0][m], grids[1][m], grids[2][m]];
                let t = [grids[3][m], grids[4][m], grids[5][m]];
                // cos terms multiply as they are; the odd sin kernel of M_tr as −i times it.
                let apply = |matrix: &DMat3, v: [Complex64; 3], row: usize| -> Complex64 {
                    let r = matrix.row(row);
                    v[0] * r.x + v[1] * r.y + v[2] * r.z
                };
                let minus_i = Complex64::new(0.0, -1.0);
                std::array::from_fn(|c| {
                    let row = c % 3;
                    if c < 3 {
                        apply(&tt, f, row) + minus_i * apply(&tr, t, row)
                    } else {
                        minus_i * apply(&tr, f, row) + apply(&rr, t, row)
                    }
                })
            })
            .collect();
        for (c, grid) in grids.iter_mut().enumerate() {
            for (value, mode) in grid.iter_mut().zip(&modes) {
                *value = mode[c];
            }
        }
        drop(modes);
        for grid in grids.iter_mut() {
            self.transform(grid, &self.inverse);
        }
        // Interpolate with the same Gaussians.
        bead_weights
            .par_iter()
            .map(|(first, weight)| {
                let mut out = [0.0; 6];
                for (qz, wz) in weight[2].iter().enumerate() {
                    for (qy, wy) in weight[1].iter().enumerate() {
                        for (qx, wx) in weight[0].iter().enumerate() {
                            let g = wx * wy * wz * cell;
                            let m = at(
                                first[0] + qx as i64,
                                first[1] + qy as i64,
                                first[2] + qz as i64,
                            );
                            for c in 0..6 {
                                out[c] += g * grids[c][m].re;
                            }
                        }
                    }
                }
                (
                    Vec3::new(out[0], out[1], out[2]),
                    Vec3::new(out[3], out[4], out[5]),
                )
            })
            .unzip()
    }

    /// A 3-D FFT of `grid` (x fastest) with one plan per axis, unnormalised.
    fn transform(&self, grid: &mut [Complex64], plans: &[Arc<dyn Fft<f64>>; 3]) {
        let [n0, n1, n2] = self.parameters.grid;
        grid.par_chunks_mut(n0)
            .for_each(|row| plans[0].process(row));
        // Along y, plane by plane; along z, for each (x, y) column.
        grid.par_chunks_mut(n0 * n1).for_each(|plane| {
            let mut line = vec![Complex64::default(); n1];
            for i in 0..n0 {
                for (j, value) in line.iter_mut().enumerate() {
                    *value = plane[i + n0 * j];
                }
                plans[1].process(&mut line);
                for (j, value) in line.iter().enumerate() {
                    plane[i + n0 * j] = *value;
                }
            }
        });
        let columns: Vec<Vec<Complex64>> = (0..n0 * n1)
            .into_par_iter()
            .map(|column| {
                let mut line: Vec<Complex64> =
                    (0..n2).map(|l| grid[column + n0 * n1 * l]).collect();
                plans[2].process(&mut line);
                line
            })
            .collect();
        for (column, line) in columns.iter().enumerate() {
            for (l, value) in line.iter().enumerate() {
                grid[column + n0 * n1 * l] = *value;
            }
        }
    }
}

/// The smallest `n' ≥ n` with no prime factor above 7 (fast FFT lengths).
fn fft_friendly(n: usize) -> usize {
    (n..)
        .find(|&m| {
            let mut r = m;
            for p in [2, 3, 5, 7] {
                while r % p == 0 {
                    r /= p;
                }
            }
            r == 1
        })
        .expect("a smooth number exists")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ewald::EwaldRpy;
    use rand::{Rng, SeedableRng};

    /// Random beads (overlaps allowed), forces and torques in a box.
    fn cloud(n: usize, lengths: Vec3, seed: u64) -> (Vec<Vec3>, Vec<Vec3>, Vec<Vec3>) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut vector = |scale: Vec3, shift: f64| {
            Vec3::new(
                scale.x * (rng.gen::<f64>() - shift),
                scale.y * (rng.gen::<f64>() - shift),
                scale.z * (rng.gen::<f64>() - shift),
            )
        };
        let x = (0..n).map(|_| vector(lengths, 0.0)).collect();
        let f = (0..n).map(|_| vector(Vec3::ONE, 0.5)).collect();
        let t = (0..n).map(|_| vector(Vec3::ONE, 0.5)).collect();
        (x, f, t)
    }

    fn relative_error(a: &[Vec3], b: &[Vec3]) -> f64 {
        let difference: f64 = a
            .iter()
            .zip(b)
            .map(|(p, q)| (*p - *q).length_squared())
            .sum();
        let size: f64 = b.iter().map(|q| q.length_squared()).sum();
        (difference / size).sqrt()
    }

    /// Bad parameters and grids beyond the memory limit are refused with a message, not a crash.
    #[test]
    fn impossible_requests_are_refused() {
        let kernel = RpyKernel::new(1.0, 1.0).unwrap();
        // Ten million beads in a box 5,000 radii wide at 1e-8: a grid of billions of points.
        let huge = SpectralRpy::new(kernel, Vec3::splat(5000.0), 1e-8, 10_000_000)
            .err()
            .unwrap();
        assert!(
            huge.contains("GiB") && huge.contains("loosen the tolerance"),
            "{huge}"
        );
        let tolerance = SpectralRpy::new(kernel, Vec3::splat(10.0), 0.5, 10)
            .err()
            .unwrap();
        assert!(tolerance.contains("from 1e-10 to 1e-2"), "{tolerance}");
        let length = SpectralRpy::new(kernel, Vec3::new(10.0, 0.0, 10.0), 1e-4, 10)
            .err()
            .unwrap();
        assert!(length.contains("box lengths"), "{length}");
    }

    /// Against the direct Ewald sum, for random beads with overlaps, in a cubic and an orthorhombic
    /// box, the error within the tolerance asked for.
    #[test]
    fn the_product_meets_its_tolerance_against_the_direct_ewald_sum() {
        let kernel = RpyKernel::new(1.0, 1.0).unwrap();
        for (lengths, n) in [(Vec3::splat(12.0), 40), (Vec3::new(10.0, 13.0, 16.0), 60)] {
            let (x, f, t) = cloud(n, lengths, 7);
            let reference = EwaldRpy::new(kernel, lengths, None).unwrap();
            let (v_ref, w_ref) = reference.product(&x, &f, &t);
            for tolerance in [1e-3, 1e-5, 1e-8] {
                let spectral = SpectralRpy::new(kernel, lengths, tolerance, n).unwrap();
                let (v, w) = spectral.product(&x, &f, &t);
                let (ev, ew) = (relative_error(&v, &v_ref), relative_error(&w, &w_ref));
                println!(
                    "{lengths} N = {n} tolerance {tolerance:e}: V {ev:.2e}, W {ew:.2e}, {:?}",
                    spectral.parameters()
                );
                assert!(ev <= tolerance && ew <= tolerance, "{ev:e} {ew:e}");
            }
        }
    }
}
