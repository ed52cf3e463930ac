//! The seed's sheared-bed protocol (sec. 6, after Aussillous et al. 2013) as a rule of the run, and its
//! measurements sampled as the run goes ([`crate::bed`] defines each measure):
//!
//! 1. **settling**: the mobile spheres settle dry onto the fixed rough layer (gravity and buoyancy,
//!    contacts; no fluid, no lubrication) for `settling_time`;
//! 2. **mobilisation**: the fluid is switched on at `mobilisation_factor` times the target flow rate q_f
//!    (the seed's 8), which dilates the whole bed, until the clear-fluid height h_f falls to
//!    `target_clear_height + margin` (or `mobilisation_limit` has passed: the run says so);
//! 3. **transient**: the flow rate is q_f (eq. 32), for `transient` before the average starts (t_s);
//! 4. **averaging**: q_v (eq. 34) and the profiles are averaged (eq. 35), with a batch-means error.
//!
//! Every phase is sampled every `sample_every` steps (the first sample at the end of settling): h_f,
//! h_p, h_m, the Shields number (eq. 31), q_v, the held flow rate. All state lives in [`BedState`],
//! part of the run's checkpoint, so that a resumed run continues its averages.

use crate::bed::{
    bed_top, mobile_height, particle_flux, profile_bins, shields, TimeAverage, CLEAR_FLUID,
};
use crate::profiles::{FluidProfileRow, ParticleProfileRow};
use crate::Vec3;
use serde::{Deserialize, Serialize};

/// Batches of the batch-means error of the time averages.
pub const BATCHES: usize = 10;

/// The protocol's settings (the scene's `[bed]` table, checked).
#[derive(Clone, Debug, PartialEq)]
pub struct BedSettings {
    /// Target flow rate q_f per unit span (seed eq. 32).
    pub flow_rate: f64,
    pub settling_time: f64,
    pub mobilisation_factor: f64,
    pub target_clear_height: f64,
    /// Mobilisation ends when h_f <= target_clear_height + margin (negative: below the target).
    pub margin: f64,
    /// Longest mobilisation; the flow rate drops to q_f then in any case.
    pub mobilisation_limit: f64,
    pub transient: f64,
    /// Steps between samples.
    pub sample_every: u64,
    /// Streamwise (flow) axis and wall-normal axis.
    pub streamwise: usize,
    pub vertical: usize,
    /// The bottom and top walls along the vertical axis.
    pub floor: f64,
    pub ceiling: f64,
    /// Mean diameter of the mobile spheres, their density ratio rho_p / rho_f, |g| and nu_f, for the
    /// Shields number and the bins (R_p = diameter / 2).
    pub diameter: f64,
    pub density_ratio: f64,
    pub gravity: f64,
    pub viscosity: f64,
}

impl BedSettings {
    /// The bulk velocity (mean of (1 - phi) u over the box) that carries flow rate `q` per unit span.
    pub fn bulk_velocity(&self, q: f64) -> f64 {
        q / (self.ceiling - self.floor)
    }

    /// The Shields number (eq. 31) of the target flow rate at clear-fluid height `clear_height`.
    pub fn shields(&self, clear_height: f64) -> f64 {
        shields(
            self.flow_rate,
            self.viscosity,
            self.density_ratio,
            self.gravity,
            self.diameter,
            clear_height,
        )
    }

    /// Bin width of the particle profile, R_p.
    pub fn bin_width(&self) -> f64 {
        0.5 * self.diameter
    }
}

/// Where the protocol stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
    Settling,
    Mobilising,
    Transient,
    Averaging,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Settling => "settling",
            Phase::Mobilising => "mobilising",
            Phase::Transient => "transient",
            Phase::Averaging => "averaging",
        }
    }

    /// The phase's number in the time series (0-3).
    pub fn number(self) -> f64 {
        match self {
            Phase::Settling => 0.0,
            Phase::Mobilising => 1.0,
            Phase::Transient => 2.0,
            Phase::Averaging => 3.0,
        }
    }
}

/// One sample of the bed's measures.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BedSample {
    pub time: f64,
    pub phase: Phase,
    /// Clear-fluid height h_f, bed height h_p, mobile layer h_m.
    pub clear_height: f64,
    pub bed_height: f64,
    pub mobile_height: f64,
    pub shields: f64,
    /// Particle flux q_v (eq. 34).
    pub particle_flux: f64,
    /// The flow rate per unit span the fluid holds (eq. 32), and the one it is asked to hold.
    pub flow_rate: f64,
    pub target_flow_rate: f64,
    /// <q_v>_T so far (eq. 35) and its batch-means error (NaN before the average has samples, or
    /// enough of them).
    pub mean_particle_flux: f64,
    pub mean_error: f64,
}

/// Columns of `bed.csv`, one row per sample.
pub const BED_COLUMNS: [&str; 11] = [
    "time",
    "phase",
    "clear_height",
    "bed_height",
    "mobile_height",
    "shields",
    "particle_flux",
    "mean_particle_flux",
    "mean_error",
    "flow_rate",
    "target_flow_rate",
];

impl BedSample {
    /// The row of `bed.csv`.
    pub fn row(&self) -> Vec<f64> {
        vec![
            self.time,
            self.phase.number(),
            self.clear_height,
            self.bed_height,
            self.mobile_height,
            self.shields,
            self.particle_flux,
            self.mean_particle_flux,
            self.mean_error,
            self.flow_rate,
            self.target_flow_rate,
        ]
    }
}

/// Sums of the time-averaged profiles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileSums {
    /// Particle bins counted down from the bed top (bin 0 ends at h_p): sum of velocities, particles.
    pub particle_velocity: Vec<[f64; 3]>,
    pub particle_count: Vec<u64>,
    /// Per plane of cells: sums of the solid fraction and of the eq. 33 fluid velocity.
    pub solid_fraction: Vec<f64>,
    pub fluid_velocity: Vec<[f64; 3]>,
    /// The planes' positions.
    pub fluid_positions: Vec<f64>,
    pub samples: u64,
}

/// The protocol's state: the phase, its switch times, the time averages and the samples not yet
/// written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BedState {
    pub phase: Phase,
    /// When the mobilisation started and ended, and whether h_f reached its margin.
    pub mobilised_at: Option<f64>,
    pub switched_at: Option<f64>,
    pub reached_margin: bool,
    pub averaging_from: Option<f64>,
    /// Samples of the averaging phase: q_v, h_f, h_p, h_m.
    pub particle_flux: TimeAverage,
    pub clear_height: TimeAverage,
    pub bed_height: TimeAverage,
    pub mobile_height: TimeAverage,
    pub profiles: ProfileSums,
    /// The last sample, and those taken since the last output frame.
    pub last: Option<BedSample>,
    pub unwritten: Vec<BedSample>,
}

impl Default for BedState {
    fn default() -> Self {
        BedState {
            phase: Phase::Settling,
            mobilised_at: None,
            switched_at: None,
            reached_margin: false,
            averaging_from: None,
            particle_flux: TimeAverage::default(),
            clear_height: TimeAverage::default(),
            bed_height: TimeAverage::default(),
            mobile_height: TimeAverage::default(),
            profiles: ProfileSums::default(),
            last: None,
            unwritten: Vec::new(),
        }
    }
}

/// What the bed's measures are taken from at one sample.
pub struct Snapshot<'a> {
    pub time: f64,
    /// Plane profile of the fluid along the vertical axis (eq. 33, with the solid fraction).
    pub fluid: &'a [FluidProfileRow],
    /// Centres and velocities of the mobile spheres.
    pub positions: &'a [Vec3],
    pub velocities: &'a [Vec3],
    /// The flow rate per unit span the fluid holds (eq. 32).
    pub flow_rate: f64,
}

/// The protocol: settings and state.
#[derive(Clone, Debug, PartialEq)]
pub struct BedProtocol {
    pub settings: BedSettings,
    pub state: BedState,
}

impl BedProtocol {
    pub fn new(settings: BedSettings) -> Self {
        BedProtocol {
            settings,
            state: BedState::default(),
        }
    }

    /// The flow rate per unit span the fluid is asked to hold in the current phase (0 while settling).
    pub fn target_flow_rate(&self) -> f64 {
        let s = &self.settings;
        match self.state.phase {
            Phase::Settling => 0.0,
            Phase::Mobilising => s.mobilisation_factor * s.flow_rate,
            Phase::Transient | Phase::Averaging => s.flow_rate,
        }
    }

    /// Whether the step starting at `time` is a dry settling step; ends the settling when its time is
    /// up (the mobilisation starts with this step).
    pub fn settles_at(&mut self, time: f64, dt: f64) -> bool {
        if self.state.phase == Phase::Settling {
            if time + 0.5 * dt < self.settings.settling_time {
                return true;
            }
            self.state.phase = Phase::Mobilising;
            self.state.mobilised_at = Some(time);
        }
        false
    }

    /// Whether a sample is due after step `step`.
    pub fn samples_at(&self, step: u64) -> bool {
        self.state.phase != Phase::Settling && step.is_multiple_of(self.settings.sample_every)
    }

    /// Takes a sample; moves to the next phase where its rule says so. Returns whether the flow rate
    /// the fluid must hold changed.
    pub fn sample(&mut self, snapshot: &Snapshot) -> bool {
        let s = self.settings.clone();
        let width = s.bin_width();
        let top = bed_top(snapshot.fluid, CLEAR_FLUID).unwrap_or(s.floor);
        let (bed_height, clear_height) = (top - s.floor, s.ceiling - top);
        let (low, high, bins) = profile_bins(top, width, s.floor);
        let rows = crate::profiles::particle_profile(
            snapshot.positions,
            snapshot.velocities,
            s.vertical,
            (low, high),
            bins,
        );
        let flux = particle_flux(&rows, width, s.streamwise);
        let mobile = mobile_height(&rows, width, s.streamwise);
        let mut sample = BedSample {
            time: snapshot.time,
            phase: self.state.phase,
            clear_height,
            bed_height,
            mobile_height: mobile,
            shields: s.shields(clear_height),
            particle_flux: flux,
            flow_rate: snapshot.flow_rate,
            target_flow_rate: self.target_flow_rate(),
            mean_particle_flux: f64::NAN,
            mean_error: f64::NAN,
        };
        let state = &mut self.state;
        if state.phase == Phase::Averaging {
            state.particle_flux.push(flux);
            state.clear_height.push(clear_height);
            state.bed_height.push(bed_height);
            state.mobile_height.push(mobile);
            add_profiles(&mut state.profiles, &rows, snapshot.fluid);
            sample.mean_particle_flux = state.particle_flux.mean();
            sample.mean_error = state.particle_flux.batch_error(BATCHES).unwrap_or(f64::NAN);
        }
        state.last = Some(sample);
        state.unwritten.push(sample);

        // The phase rules.
        let time = snapshot.time;
        match state.phase {
            Phase::Mobilising => {
                let reached = clear_height <= s.target_clear_height + s.margin;
                let started = state.mobilised_at.unwrap_or(time);
                if reached || time - started >= s.mobilisation_limit {
                    state.phase = Phase::Transient;
                    state.switched_at = Some(time);
                    state.reached_margin = reached;
                    return true;
                }
            }
            Phase::Transient => {
                if time - state.switched_at.unwrap_or(time) >= s.transient {
                    state.phase = Phase::Averaging;
                    state.averaging_from = Some(time);
                }
            }
            Phase::Settling | Phase::Averaging => {}
        }
        false
    }

    /// The averaged profiles so far: particle bins from the bed top down, fluid planes bottom up.
    pub fn averaged_profiles(&self) -> (Vec<ParticleProfileRow>, Vec<FluidProfileRow>) {
        let sums = &self.state.profiles;
        let width = self.settings.bin_width();
        let top = self.state.bed_height.mean() + self.settings.floor;
        let particles = sums
            .particle_velocity
            .iter()
            .zip(&sums.particle_count)
            .enumerate()
            .map(|(k, (velocity, &count))| ParticleProfileRow {
                position: top - (k as f64 + 0.5) * width,
                count: count as usize,
                velocity: velocity.map(|v| if count > 0 { v / count as f64 } else { 0.0 }),
            })
            .collect();
        let n = sums.samples.max(1) as f64;
        let fluid = sums
            .solid_fraction
            .iter()
            .zip(&sums.fluid_velocity)
            .enumerate()
            .map(|(j, (phi, velocity))| FluidProfileRow {
                position: self.fluid_plane(j),
                solid_fraction: phi / n,
                velocity: velocity.map(|v| v / n),
            })
            .collect();
        (particles, fluid)
    }

    /// Position of plane `j` of the fluid profile (recorded with the first sample).
    fn fluid_plane(&self, j: usize) -> f64 {
        self.state
            .profiles
            .fluid_positions
            .get(j)
            .copied()
            .unwrap_or(f64::NAN)
    }

    /// <q_v>_T (eq. 35) and its batch-means error, when averaging has started.
    pub fn mean_particle_flux(&self) -> Option<(f64, Option<f64>)> {
        let average = &self.state.particle_flux;
        (!average.is_empty()).then(|| (average.mean(), average.batch_error(BATCHES)))
    }
}

/// Adds one sample's particle bins (bottom up, the top bin ending at h_p) and fluid planes to the
/// sums.
fn add_profiles(sums: &mut ProfileSums, rows: &[ParticleProfileRow], fluid: &[FluidProfileRow]) {
    let bins = rows.len();
    if sums.particle_velocity.len() < bins {
        sums.particle_velocity.resize(bins, [0.0; 3]);
        sums.particle_count.resize(bins, 0);
    }
    // Bin k counted down from the top.
    for (k, row) in rows.iter().rev().enumerate() {
        let count = row.count as u64;
        sums.particle_count[k] += count;
        for c in 0..3 {
            sums.particle_velocity[k][c] += row.velocity[c] * row.count as f64;
        }
    }
    if sums.solid_fraction.is_empty() {
        sums.solid_fraction = vec![0.0; fluid.len()];
        sums.fluid_velocity = vec![[0.0; 3]; fluid.len()];
        sums.fluid_positions = fluid.iter().map(|row| row.position).collect();
    }
    for (j, row) in fluid.iter().enumerate() {
        sums.solid_fraction[j] += row.solid_fraction;
        for c in 0..3 {
            sums.fluid_velocity[j][c] += row.velocity[c];
        }
    }
    sums.samples += 1;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> BedSettings {
        BedSettings {
            flow_rate: 0.25,
            settling_time: 1.0,
            mobilisation_factor: 8.0,
            target_clear_height: 1.0,
            margin: -0.05,
            mobilisation_limit: 5.0,
            transient: 0.5,
            sample_every: 2,
            streamwise: 0,
            vertical: 2,
            floor: 0.0,
            ceiling: 1.5,
            diameter: 0.1,
            density_ratio: 2.1,
            gravity: 9.81,
            viscosity: 0.2,
        }
    }

    /// Planes 0.05 apart with solid fraction 0.6 below `top` and none above.
    fn planes(top: f64) -> Vec<FluidProfileRow> {
        (0..30)
            .map(|j| {
                let position = 0.025 + 0.05 * j as f64;
                FluidProfileRow {
                    position,
                    solid_fraction: if position < top { 0.6 } else { 0.0 },
                    velocity: [0.1, 0.0, 0.0],
                }
            })
            .collect()
    }

    /// The phases follow their rules: settling until its time, the mobilisation at 8 q_f until h_f
    /// reaches the target plus the margin, the transient, then the averages; each sample is kept for
    /// the output, the averages only in the last phase.
    #[test]
    fn the_protocol_moves_through_its_phases_by_its_rules() {
        let mut bed = BedProtocol::new(settings());
        let dt = 0.1;
        assert!(bed.settles_at(0.0, dt) && bed.settles_at(0.8, dt));
        assert_eq!(bed.target_flow_rate(), 0.0);
        assert!(!bed.samples_at(2));
        assert!(!bed.settles_at(1.0, dt));
        assert_eq!(bed.state.phase, Phase::Mobilising);
        assert_eq!(bed.target_flow_rate(), 8.0 * 0.25);
        assert!(bed.samples_at(12) && !bed.samples_at(13));

        let positions = [Vec3::new(0.0, 0.0, 0.37), Vec3::new(0.0, 0.0, 0.1)];
        let velocities = [Vec3::new(0.02, 0.0, 0.0), Vec3::ZERO];
        let sample = |bed: &mut BedProtocol, time: f64, top: f64| {
            let fluid = planes(top);
            bed.sample(&Snapshot {
                time,
                fluid: &fluid,
                positions: &positions,
                velocities: &velocities,
                flow_rate: 2.0,
            })
        };
        // The bed top interpolated between the last plane at 0.6 and the first at 0: 0.55 / 0.6 of the
        // plane spacing above the last solid plane's centre.
        let top_of = |last_centre: f64| last_centre + 0.05 * 0.55 / 0.6;
        // A compact bed: h_f = 1.5 - 0.421 = 1.079 > 0.95; the bed dilates to h_f = 0.879.
        assert!(!sample(&mut bed, 1.2, 0.4));
        assert_eq!(bed.state.phase, Phase::Mobilising);
        let last = bed.state.last.unwrap();
        assert!(
            (last.clear_height - (1.5 - top_of(0.375))).abs() < 1e-12,
            "{last:?}"
        );
        assert!(sample(&mut bed, 1.4, 0.6), "the flow rate drops to q_f");
        assert_eq!(bed.state.phase, Phase::Transient);
        assert!(bed.state.reached_margin);
        assert_eq!(bed.target_flow_rate(), 0.25);
        assert!(!sample(&mut bed, 1.6, 0.55));
        assert_eq!(bed.state.phase, Phase::Transient);
        assert!(bed.state.particle_flux.is_empty());
        sample(&mut bed, 1.9, 0.55);
        assert_eq!(bed.state.phase, Phase::Averaging);
        // Averaging: the bed top at 0.571 (h_p), bins of R_p = 0.05 down from it: the moving sphere at
        // 0.37 lies in the fifth, q_v = 0.02 x 0.05.
        sample(&mut bed, 2.1, 0.55);
        sample(&mut bed, 2.3, 0.55);
        assert_eq!(bed.state.particle_flux.len(), 2);
        let (mean, _) = bed.mean_particle_flux().unwrap();
        assert!((mean - 0.02 * 0.05).abs() < 1e-15, "{mean}");
        assert_eq!(bed.state.unwritten.len(), 6);
        let (particles, fluid) = bed.averaged_profiles();
        let moving = particles.iter().find(|r| r.count == 2).unwrap();
        assert!(
            (moving.position - (top_of(0.525) - 4.5 * 0.05)).abs() < 1e-12,
            "{moving:?}"
        );
        assert!((moving.velocity[0] - 0.02).abs() < 1e-15);
        assert_eq!(fluid.len(), 30);
        assert!((fluid[0].solid_fraction - 0.6).abs() < 1e-15);
        // Shields number of eq. 31 at the sampled h_f.
        let last = bed.state.last.unwrap();
        let expected = shields(0.25, 0.2, 2.1, 9.81, 0.1, last.clear_height);
        assert_eq!(last.shields, expected);
    }

    /// A bed that never dilates enough is switched to q_f at the mobilisation limit, and says so.
    #[test]
    fn the_mobilisation_ends_at_its_limit() {
        let mut bed = BedProtocol::new(settings());
        assert!(!bed.settles_at(1.0, 0.1));
        let fluid = planes(0.3);
        let snapshot = |time| Snapshot {
            time,
            fluid: &fluid,
            positions: &[],
            velocities: &[],
            flow_rate: 2.0,
        };
        assert!(!bed.sample(&snapshot(3.0)));
        assert!(bed.sample(&snapshot(6.0)));
        assert_eq!(bed.state.phase, Phase::Transient);
        assert!(!bed.state.reached_margin);
        assert_eq!(bed.state.switched_at, Some(6.0));
    }
}
