//! Measurements of a sediment bed sheared by a laminar flow (seed sec. 6, Aussillous et al. 2013): the
//! heights of the bed and of the clear fluid above it, the mobile layer, the Shields number, the particle
//! velocity flux, and its time average with a statistical error by batch means.
//!
//! ```text
//! bed top y_i:     where the plane-averaged solid fraction falls below 0.05, scanning down from the top
//! h_p = y_i - y_floor,   h_f = y_ceiling - y_i                     (clear fluid above the bed)
//! u_p(y):          particle velocity binned by centre, bins of width R_p, the top bin ending at h_p
//! h_m:             the part of the bed above which u_p exceeds 1 % of its value at the interface
//! Sh = 6 Re_b / Ga^2 (D / h_f)^2                                  (seed eq. 31)
//! q_v = integral of u_p(y) dy                                      (seed eq. 34)
//! <q_v>_T = (1 / T) integral of q_v dt                             (seed eq. 35)
//! ```

use crate::profiles::{FluidProfileRow, ParticleProfileRow};

/// Solid fraction below which a plane is clear fluid (the seed's h_f).
pub const CLEAR_FLUID: f64 = 0.05;

/// Fraction of the interface's particle velocity that bounds the mobile layer (the seed's h_m).
pub const MOBILE: f64 = 0.01;

/// Height of the bed's top: scanning the planes from the top down, the first whose mean solid fraction
/// reaches `threshold`; the crossing interpolated linearly between it and the plane above. `None` when
/// no plane reaches it (no bed).
pub fn bed_top(profile: &[FluidProfileRow], threshold: f64) -> Option<f64> {
    let below = profile
        .iter()
        .rposition(|row| row.solid_fraction >= threshold)?;
    let row = profile[below];
    let Some(above) = profile.get(below + 1) else {
        return Some(row.position);
    };
    let t = (row.solid_fraction - threshold) / (row.solid_fraction - above.solid_fraction);
    Some(row.position + t * (above.position - row.position))
}

/// The bins of the particle velocity profile: width `radius`, the top one ending at `bed_top`, down
/// to `floor`: `(low, high, bins)` for [`crate::profiles::particle_profile`].
pub fn profile_bins(bed_top: f64, radius: f64, floor: f64) -> (f64, f64, usize) {
    let bins = ((bed_top - floor) / radius).ceil().max(1.0) as usize;
    (bed_top - bins as f64 * radius, bed_top, bins)
}

/// `q_v = ∫ u_p(y) dy` (seed eq. 34) of a binned profile (component `component`, bins of `width`);
/// empty bins count as still.
pub fn particle_flux(rows: &[ParticleProfileRow], width: f64, component: usize) -> f64 {
    rows.iter().map(|row| row.velocity[component] * width).sum()
}

/// Thickness of the mobile layer (the seed's h_m): from the top bin (the interface) down, the layer
/// above the highest bin whose velocity falls below `MOBILE` of the top bin's; the whole profile if none
/// does. Bins of `width`, component `component`.
pub fn mobile_height(rows: &[ParticleProfileRow], width: f64, component: usize) -> f64 {
    let Some(top) = rows.last() else {
        return 0.0;
    };
    let limit = MOBILE * top.velocity[component].abs();
    let mobile = rows
        .iter()
        .rev()
        .take_while(|row| row.velocity[component].abs() > limit)
        .count();
    mobile as f64 * width
}

/// Shields number `Sh = 6 Re_b / Ga² (D / h_f)²` (seed eq. 31), with `Re_b = q_f / ν` (eq. 30) and
/// `Ga = sqrt((ρ_p/ρ_f - 1) g D³) / ν` (eq. 29).
pub fn shields(
    flow_rate: f64,
    viscosity: f64,
    density_ratio: f64,
    gravity: f64,
    diameter: f64,
    fluid_height: f64,
) -> f64 {
    let reynolds = flow_rate / viscosity;
    let galileo = ((density_ratio - 1.0) * gravity * diameter.powi(3)).sqrt() / viscosity;
    6.0 * reynolds / (galileo * galileo) * (diameter / fluid_height).powi(2)
}

/// The running time average of a sampled series (seed eq. 35, samples at equal intervals) and its
/// statistical error by batch means: the series cut into `batches` consecutive batches, the error of
/// the mean is the standard deviation of the batch means over sqrt(batches). Batches much longer than
/// the series' correlation time make the batch means independent; the error is then honest for
/// correlated samples, where the naive sigma / sqrt(n) is not.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TimeAverage {
    samples: Vec<f64>,
}

impl TimeAverage {
    pub fn push(&mut self, value: f64) {
        self.samples.push(value);
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The mean of the samples (NaN with none).
    pub fn mean(&self) -> f64 {
        self.samples.iter().sum::<f64>() / self.samples.len() as f64
    }

    /// The standard error of the mean by `batches` batch means (the last samples that do not fill a
    /// batch are left out of it); `None` with fewer than two batches or fewer samples than batches.
    pub fn batch_error(&self, batches: usize) -> Option<f64> {
        if batches < 2 || self.samples.len() < batches {
            return None;
        }
        let size = self.samples.len() / batches;
        let means: Vec<f64> = self
            .samples
            .chunks_exact(size)
            .take(batches)
            .map(|batch| batch.iter().sum::<f64>() / size as f64)
            .collect();
        let mean = means.iter().sum::<f64>() / batches as f64;
        let variance = means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (batches - 1) as f64;
        Some((variance / batches as f64).sqrt())
    }

    /// The means of the first and the second half of the samples (a drift between them says the
    /// series has not reached its steady state); `None` with fewer than two samples.
    pub fn halves(&self) -> Option<(f64, f64)> {
        let half = self.samples.len() / 2;
        (half > 0).then(|| {
            let (first, second) = self.samples.split_at(half);
            let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
            (mean(first), mean(second))
        })
    }

    /// The integrated autocorrelation time in samples, tau = 1/2 + sum_k rho(k), summed up to the
    /// first lag k >= 5 tau (Sokal's window; 1/2 for independent samples): batches of 10 tau and
    /// more have nearly independent means. `None` with fewer than 4 samples or a constant series.
    pub fn correlation_time(&self) -> Option<f64> {
        let n = self.samples.len();
        if n < 4 {
            return None;
        }
        let mean = self.mean();
        let deviation: Vec<f64> = self.samples.iter().map(|v| v - mean).collect();
        let variance = deviation.iter().map(|d| d * d).sum::<f64>() / n as f64;
        if variance <= 0.0 {
            return None;
        }
        let mut tau = 0.5;
        for lag in 1..n {
            let covariance = deviation[..n - lag]
                .iter()
                .zip(&deviation[lag..])
                .map(|(a, b)| a * b)
                .sum::<f64>()
                / n as f64;
            tau += covariance / variance;
            if lag as f64 >= 5.0 * tau {
                break;
            }
        }
        Some(tau.max(0.5))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plane(position: f64, solid_fraction: f64) -> FluidProfileRow {
        FluidProfileRow {
            position,
            solid_fraction,
            velocity: [0.0; 3],
        }
    }

    fn bin(position: f64, u: f64) -> ParticleProfileRow {
        ParticleProfileRow {
            position,
            count: 1,
            velocity: [u, 0.0, 0.0],
        }
    }

    /// The bed top is the 0.05 crossing nearest the top, interpolated; a gap in the bed below it does
    /// not move it; no bed, no top.
    #[test]
    fn bed_top_is_the_highest_crossing_of_the_clear_fluid_fraction() {
        let profile = [
            plane(0.5, 0.6),
            plane(1.5, 0.01), // a gap inside the bed
            plane(2.5, 0.6),
            plane(3.5, 0.3),
            plane(4.5, 0.04),
            plane(5.5, 0.0),
        ];
        let top = bed_top(&profile, CLEAR_FLUID).unwrap();
        // Between 3.5 (0.3) and 4.5 (0.04): 0.05 is at 3.5 + 0.25 / 0.26.
        assert!((top - (3.5 + 0.25 / 0.26)).abs() < 1e-12, "{top}");
        assert_eq!(
            bed_top(&[plane(0.5, 0.0), plane(1.5, 0.01)], CLEAR_FLUID),
            None
        );
        // A bed up to the top plane.
        assert_eq!(
            bed_top(&[plane(0.5, 0.2), plane(1.5, 0.1)], CLEAR_FLUID),
            Some(1.5)
        );
    }

    /// Bins of R_p end exactly at the bed top and cover the floor.
    #[test]
    fn profile_bins_end_at_the_bed_top() {
        let (low, high, bins) = profile_bins(3.3, 0.5, 0.0);
        assert_eq!((high, bins), (3.3, 7));
        assert!((low - (3.3 - 3.5)).abs() < 1e-12 && low <= 0.0);
    }

    /// q_v of a linear profile is its integral; the mobile layer ends where the velocity drops below 1 %
    /// of the interface's; Shields' number from Table 3 of the seed (case A10).
    #[test]
    fn flux_mobile_layer_and_shields_number() {
        // u = y over [0, 2] in bins of 0.5: centres 0.25 .. 1.75; the integral is 2.
        let rows: Vec<_> = (0..4)
            .map(|b| bin(0.25 + 0.5 * b as f64, 0.25 + 0.5 * b as f64))
            .collect();
        assert!((particle_flux(&rows, 0.5, 0) - 2.0).abs() < 1e-12);
        // Exponential decay from the interface: 1, 0.1, 0.02, 0.005, 0.001 (top to bottom).
        let decaying: Vec<_> = [0.001, 0.005, 0.02, 0.1, 1.0]
            .iter()
            .enumerate()
            .map(|(b, &u)| bin(b as f64, u))
            .collect();
        assert!((mobile_height(&decaying, 0.5, 0) - 3.0 * 0.5).abs() < 1e-12);
        let still: Vec<_> = (0..3).map(|b| bin(b as f64, 0.0)).collect();
        assert_eq!(mobile_height(&still, 0.5, 0), 0.0);
        // Case A10: Re_b = 1.15, Ga = 0.397, h_f / D = 11.27 -> Sh = 6 * 1.15 / 0.397^2 / 11.27^2 = 0.345.
        let (nu, d): (f64, f64) = (1e-4, 1.1e-3);
        let g = (0.397 * nu).powi(2) / ((2.1 - 1.0) * d.powi(3));
        let sh = shields(1.15 * nu, nu, 2.1, g, d, 11.27 * d);
        assert!(
            (sh - 6.0 * 1.15 / 0.397f64.powi(2) / 11.27f64.powi(2)).abs() < 1e-12,
            "{sh}"
        );
        assert!((sh - 0.345).abs() < 0.005, "{sh}");
    }

    /// Batch means: the mean of the samples; for independent samples the error matches sigma / sqrt(n)
    /// within its own scatter, for a strongly correlated series it is far larger than the naive one.
    #[test]
    fn batch_means_give_an_honest_error_for_correlated_samples() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut white = TimeAverage::default();
        let mut red = TimeAverage::default();
        let mut level = 0.0;
        for _ in 0..20_000 {
            let x: f64 = rng.gen_range(-1.0..1.0);
            white.push(x);
            // AR(1) with correlation 0.99: correlation time ~100 samples.
            level = 0.99 * level + x;
            red.push(level);
        }
        let sigma_white = (1.0f64 / 3.0).sqrt();
        let naive = sigma_white / (20_000f64).sqrt();
        let white_error = white.batch_error(20).unwrap();
        assert!(
            (white_error / naive - 1.0).abs() < 0.5,
            "{white_error} vs {naive}"
        );
        assert!(white.mean().abs() < 4.0 * naive);
        // The AR(1) series' naive error underestimates by sqrt((1 + 0.99)/(1 - 0.99)) ~ 14.
        let n = red.len() as f64;
        let mean = red.mean();
        let sd = (red.samples.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
        let red_error = red.batch_error(20).unwrap();
        assert!(
            red_error > 5.0 * sd / n.sqrt(),
            "{red_error} vs {}",
            sd / n.sqrt()
        );
        assert_eq!(TimeAverage::default().batch_error(10), None);
        assert_eq!(white.batch_error(1), None);

        // Correlation times: 1/2 for white noise, (1 + 0.99) / (2 (1 - 0.99)) = 99.5 for the AR(1).
        let white_tau = white.correlation_time().unwrap();
        assert!((white_tau - 0.5).abs() < 0.1, "{white_tau}");
        let red_tau = red.correlation_time().unwrap();
        assert!((red_tau / 99.5 - 1.0).abs() < 0.35, "{red_tau}");
        let mut constant = TimeAverage::default();
        (0..10).for_each(|_| constant.push(1.0));
        assert_eq!(constant.correlation_time(), None);
        assert_eq!(constant.halves(), Some((1.0, 1.0)));
    }

    /// A series that relaxes to its steady state shows it in its halves.
    #[test]
    fn halves_show_a_drift() {
        let mut relaxing = TimeAverage::default();
        (0..1000).for_each(|i| relaxing.push(1.0 + (-(i as f64) / 200.0).exp()));
        let (first, second) = relaxing.halves().unwrap();
        assert!(first > second + 0.1, "{first} {second}");
        assert_eq!(TimeAverage::default().halves(), None);
    }
}
