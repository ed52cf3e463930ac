//! The seed's sheared bed (sec. 6, Tables 3-5; issue 22): polydisperse glass beads over a rough fixed
//! layer sheared by a laminar flow, cases A1, A2, A9, A10 and the monodisperse A10M of Aussillous et al.
//! (2013), from `validation/sheared-bed/*.toml` run as a user runs them (`silt run`: the scene's `[bed]`
//! protocol, output and checkpoints in the report's folder, so that an interrupted validation resumes).
//! Judged: <q_v>_T / q_f (eq. 35 over eq. 34) inside the experimental range of each case, as the seed's
//! simulations were. Reported beside it: h_f / D and the Shields number against the experiment and the
//! seed, the batch-means error of the average, the particle velocity profiles in the seed's scaling
//! u / (q_f / h_f) against (y - h_p) / h_f (its Fig. 13), a resolution study on one case, and the wall
//! time per simulated second with the projected cost of the seed's resolution.

use crate::case::CaseFiles;
use crate::report::{case_dir, png, CaseReport};
use serde::Deserialize;
use silt_ibm::protocol::{BedProtocol, Phase};
use silt_io::scenes::coupled::CoupledScene;
use silt_io::scenes::Override;
use silt_report::{Axis, Plot, Series, Style, Table};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// `[tolerance]` of `validation/sheared-bed/reference.toml`.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Criteria {
    /// <q_v>_T / q_f inside the experimental range of each case.
    pub inside_experimental_range: bool,
    /// Quick version: the held flow rate against q_f after the switch.
    pub flow_rate_relative: f64,
}

/// One case's reference numbers (`[experiments.<case>]`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    pub name: String,
    pub reynolds: f64,
    /// h_f / D: experiment and the seed's simulation.
    pub clear_height: f64,
    pub seed_clear_height: f64,
    pub shields: f64,
    /// <q_v>_T / q_f: experimental mean and range, the seed's simulation.
    pub flux: f64,
    pub flux_range: [f64; 2],
    pub seed_flux: f64,
}

/// `[full]` / `[quick]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// The scenes run (file stems).
    pub cases: Vec<String>,
    pub end_time: f64,
    /// The case also run at `coarse_spacing` ("" for none).
    pub resolution_study: String,
    pub coarse_spacing: Option<f64>,
    pub seed_resolution: Option<f64>,
    pub seed_averaging: Option<f64>,
}

/// What one run measured.
#[derive(Clone, Debug)]
pub struct BedRun {
    pub case: String,
    /// D / h of the run.
    pub resolution: f64,
    pub diameter: f64,
    pub flow_rate: f64,
    /// Mean h_f, h_p, h_m over the average (lengths), Shields number at the mean h_f.
    pub clear_height: f64,
    pub bed_height: f64,
    pub mobile_height: f64,
    pub shields: f64,
    /// <q_v>_T / q_f and its batch-means error (None: too few samples).
    pub flux_ratio: f64,
    pub flux_error: Option<f64>,
    pub samples: usize,
    /// When the flow rate dropped to q_f, whether h_f had reached its margin, the averaging start.
    pub switched_at: Option<f64>,
    pub reached_margin: bool,
    pub averaging_from: Option<f64>,
    pub end_time: f64,
    /// The largest relative difference of the held flow rate from q_f after the switch.
    pub flow_rate_error: f64,
    /// <q_v> / q_f over the first and the second half of the average (a drift says the run has not
    /// reached its steady state), and the integrated autocorrelation time of q_v (simulated time).
    pub flux_halves: Option<(f64, f64)>,
    pub correlation_time: Option<f64>,
    /// q_v / q_f against time over the whole run (thinned), from bed.csv.
    pub flux_series: Vec<(f64, f64)>,
    /// The mean fraction of the markers disabled between close spheres and at walls over the
    /// average (they force neither the fluid nor the spheres: seed Fig. 2).
    pub disabled_markers: Option<f64>,
    /// Averaged particle profile in the seed's scaling: ((y - h_p) / h_f, u / (q_f / h_f)), bottom up.
    pub profile: Vec<(f64, f64)>,
    /// Wall time of the coupled phases (after the dry settling) over all legs of the run
    /// (`timing.csv`), the simulated time they covered, and the cells and spheres, for the cost.
    pub wall_seconds: f64,
    pub simulated_seconds: f64,
    pub cells: usize,
    pub particles: usize,
}

impl BedRun {
    /// Wall seconds per simulated second of the coupled phases.
    pub fn wall_per_simulated_second(&self) -> f64 {
        self.wall_seconds / self.simulated_seconds.max(1e-300)
    }
}

/// Runs scene `file` with `changes` to `end_time` through the run path of `silt run` into
/// `dir/<label>`, resuming from a checkpoint there when one of the same scene exists.
pub fn run_case(
    case: &CaseFiles,
    file: &str,
    label: &str,
    changes: &[Override],
    end_time: f64,
    dir: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<BedRun, String> {
    let mut all = changes.to_vec();
    all.push(Override::new("simulation.end_time", end_time));
    let (text, path) = case.scene_text(file, &all)?;
    let scene = CoupledScene::parse(&text, &path).map_err(|e| e.to_string())?;
    let scene = Box::new(scene);
    let out = dir.join(label);
    // A checkpoint that cannot be resumed stops the validation rather than starting the run afresh
    // over hours of output: the user decides.
    let resumed = out.join("checkpoint.bin").exists();
    let mut sim = silt_io::scenes::simulation(&scene, &text, &out, resumed).map_err(|e| {
        if resumed {
            format!(
                "{label}: cannot resume from the checkpoint in {}: {e} (remove the folder to run the \
                 case afresh)",
                out.display()
            )
        } else {
            format!("{label}: {e}")
        }
    })?;
    // The wall time of earlier legs of this run (a validation of many hours runs in legs).
    let mut legs = if resumed {
        Legs::read(&out)?
    } else {
        Legs::default()
    };
    let mut last_report = Instant::now();
    let mut report = |p: &silt_io::run::Progress| {
        if last_report.elapsed().as_secs_f64() > 60.0 {
            last_report = Instant::now();
            progress(&format!(
                "{label}: t = {:.2} of {end_time}, {}",
                p.time,
                p.status.clone().unwrap_or_default()
            ));
            true
        } else {
            false
        }
    };
    // The dry settling first (cheap: no fluid), then the coupled phases, timed on their own.
    let settling_time = scene.bed.as_ref().map_or(0.0, |b| b.settling_time);
    let now = silt_core::model::Model::time(&sim.model);
    if now < settling_time {
        sim.run(Some(settling_time), &mut |p| {
            report(&p);
        })
        .map_err(|e| format!("{label}: {e}"))?;
    }
    let first_time = silt_core::model::Model::time(&sim.model);
    let clock = Instant::now();
    let leg = legs.rows.len();
    legs.rows.push(Leg {
        from: first_time,
        to: first_time,
        wall_seconds: 0.0,
    });
    // The ledger follows the leg as it goes, so that a leg cut short still counts.
    let mut ledger_error = None;
    sim.run(None, &mut |p| {
        if report(&p) {
            legs.rows[leg].to = p.time;
            legs.rows[leg].wall_seconds = clock.elapsed().as_secs_f64();
            if let Err(e) = legs.write(&out) {
                ledger_error.get_or_insert(e);
            }
        }
    })
    .map_err(|e| format!("{label}: {e}"))?;
    if let Some(e) = ledger_error {
        return Err(e);
    }
    legs.rows[leg].to = silt_core::model::Model::time(&sim.model);
    legs.rows[leg].wall_seconds = clock.elapsed().as_secs_f64();
    legs.write(&out)?;
    let model = &sim.model;
    let bed: &BedProtocol = model
        .bed
        .as_ref()
        .ok_or_else(|| format!("{file} has no [bed] table"))?;
    let s = &bed.settings;
    let state = &bed.state;
    let grid = model.fluid.grid();
    let (flux_ratio, flux_error) = match bed.mean_particle_flux() {
        Some((mean, error)) => (mean / s.flow_rate, error.map(|e| e / s.flow_rate)),
        None => (f64::NAN, None),
    };
    let clear_height = state.clear_height.mean();
    let bed_height = state.bed_height.mean();
    let (particles, _) = bed.averaged_profiles();
    let velocity_scale = s.flow_rate / clear_height;
    let profile = particles
        .iter()
        .rev()
        .filter(|row| row.count > 0)
        .map(|row| {
            (
                (row.position - s.floor - bed_height) / clear_height,
                row.velocity[s.streamwise] / velocity_scale,
            )
        })
        .collect();
    let (flow_rate_error, flux_series) = read_series(&out, s.flow_rate, 2000)?;
    let average = &state.particle_flux;
    let flux_halves = average
        .halves()
        .map(|(first, second)| (first / s.flow_rate, second / s.flow_rate));
    let sample_interval = s.sample_every as f64 * model.dt;
    let forcing = &model.particles.forcing;
    let markers: usize = (0..forcing.spheres.len())
        .map(|p| forcing.markers(p).offsets.len())
        .sum();
    let disabled_markers = state
        .averaging_from
        .map(|from| mean_after(&out.join("diagnostics.csv"), "markers_disabled", from))
        .transpose()?
        .flatten()
        .map(|disabled| disabled / markers as f64);
    let correlation_time = average.correlation_time().map(|tau| tau * sample_interval);
    Ok(BedRun {
        case: label.to_string(),
        resolution: s.diameter / grid.spacing,
        diameter: s.diameter,
        flow_rate: s.flow_rate,
        clear_height,
        bed_height,
        mobile_height: state.mobile_height.mean(),
        shields: s.shields(clear_height),
        flux_ratio,
        flux_error,
        samples: state.particle_flux.len(),
        switched_at: state.switched_at,
        reached_margin: state.reached_margin,
        averaging_from: state.averaging_from,
        end_time: silt_core::model::Model::time(&sim.model),
        flow_rate_error,
        flux_halves,
        correlation_time,
        flux_series,
        disabled_markers,
        profile,
        wall_seconds: legs.rows.iter().map(|l| l.wall_seconds).sum(),
        simulated_seconds: legs.rows.iter().map(|l| l.to - l.from).sum(),
        cells: grid.cell_count(),
        particles: model.particles.dem.particles.len(),
    })
}

/// The legs of a run of many hours, in `timing.csv` beside its checkpoint: where each leg started and
/// stopped (simulated time of the coupled phases) and the wall time it took. A leg cut short before
/// its last checkpoint counts its redone stretch twice, in both columns, so the ratio holds.
#[derive(Clone, Debug, Default)]
struct Legs {
    rows: Vec<Leg>,
}

#[derive(Clone, Copy, Debug)]
struct Leg {
    from: f64,
    to: f64,
    wall_seconds: f64,
}

impl Legs {
    const FILE: &'static str = "timing.csv";

    /// The ledger in `out` (none yet: no legs).
    fn read(out: &Path) -> Result<Legs, String> {
        let path = out.join(Self::FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Legs::default()),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let rows = csv_columns(&path, &text, &["from", "to", "wall_seconds"])?
            .into_iter()
            .map(|row| Leg {
                from: row[0],
                to: row[1],
                wall_seconds: row[2],
            })
            .collect();
        Ok(Legs { rows })
    }

    /// Writes the ledger whole or not at all.
    fn write(&self, out: &Path) -> Result<(), String> {
        let mut text = String::from("from,to,wall_seconds\n");
        for leg in &self.rows {
            text.push_str(&format!("{},{},{}\n", leg.from, leg.to, leg.wall_seconds));
        }
        let path = out.join(Self::FILE);
        silt_io::atomic::write_atomic(&path, text.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// What the report reads back from a run's `bed.csv`: the largest relative difference between the
/// held flow rate and q_f once the protocol holds q_f (phases transient and averaging, after the
/// switching sample), and q_v / q_f against time (at most `points` of them, evenly thinned).
fn read_series(
    out: &Path,
    flow_rate: f64,
    points: usize,
) -> Result<(f64, Vec<(f64, f64)>), String> {
    let path = out.join("bed.csv");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let rows = csv_columns(
        &path,
        &text,
        &[
            "time",
            "phase",
            "particle_flux",
            "flow_rate",
            "target_flow_rate",
        ],
    )?;
    let mut worst: f64 = 0.0;
    let mut series = Vec::new();
    for row in rows {
        let [time, phase, flux, held, target] = row[..] else {
            unreachable!("five columns asked for")
        };
        // The switching sample was taken at the mobilisation's rate; its successors at q_f.
        if phase >= Phase::Transient.number() - 0.5 && target == flow_rate {
            worst = worst.max((held / flow_rate - 1.0).abs());
        }
        series.push((time, flux / flow_rate));
    }
    let stride = series.len().div_ceil(points.max(1)).max(1);
    let thinned = series.into_iter().step_by(stride).collect();
    Ok((worst, thinned))
}

/// The mean of column `name` of the CSV file `path` over its rows at times from `from` on (`None`
/// without such rows).
fn mean_after(path: &Path, name: &str, from: f64) -> Result<Option<f64>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let values: Vec<f64> = csv_columns(path, &text, &["time", name])?
        .into_iter()
        .filter(|row| row[0] >= from)
        .map(|row| row[1])
        .collect();
    Ok((!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64))
}

/// The columns `names` of the CSV text `text` (of file `path`, for the messages), row by row.
fn csv_columns(path: &Path, text: &str, names: &[&str]) -> Result<Vec<Vec<f64>>, String> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let columns = names
        .iter()
        .map(|name| {
            header
                .iter()
                .position(|c| c.trim() == *name)
                .ok_or_else(|| format!("{}: no column {name}", path.display()))
        })
        .collect::<Result<Vec<usize>, String>>()?;
    lines
        .enumerate()
        .map(|(number, line)| {
            let values: Vec<&str> = line.split(',').collect();
            columns
                .iter()
                .map(|&c| {
                    values
                        .get(c)
                        .and_then(|v| v.trim().parse::<f64>().ok())
                        .ok_or_else(|| format!("{} line {}: {line}", path.display(), number + 2))
                })
                .collect()
        })
        .collect()
}

/// The case report.
pub fn report(out: &Path, quick: bool) -> Result<CaseReport, String> {
    report_runs(out, quick, None)
}

/// The labels of the validation's runs: its cases, then the resolution study's run.
pub fn run_labels(quick: bool) -> Result<Vec<String>, String> {
    let case = CaseFiles::open("sheared-bed", quick)?;
    let options: Options = case.parameters()?;
    let mut labels = options.cases.clone();
    if !options.resolution_study.is_empty() {
        labels.push(format!("{}-coarse", options.resolution_study));
    }
    Ok(labels)
}

/// [`report`] of the runs labelled in `only` (`a1` ... `a10m`, and `a10-coarse` for the resolution
/// study's run; all when `None`): a validation of many hours run in parts (`silt validate sheared-bed
/// --runs a9`), each part's report of its runs.
pub fn report_runs(out: &Path, quick: bool, only: Option<&[String]>) -> Result<CaseReport, String> {
    let case = CaseFiles::open("sheared-bed", quick)?;
    let criteria: Criteria = case.tolerances()?;
    let mut options: Options = case.parameters()?;
    let experiments: BTreeMap<String, Experiment> = case.table("experiments")?;
    if let Some(only) = only {
        let labels = run_labels(quick)?;
        if let Some(bad) = only.iter().find(|l| !labels.contains(l)) {
            return Err(format!(
                "--runs: no run of the sheared-bed validation is labelled \"{bad}\"; the runs: {}",
                labels.join(", ")
            ));
        }
        let coarse = format!("{}-coarse", options.resolution_study);
        options.cases.retain(|c| only.contains(c));
        if !only.contains(&coarse) {
            options.resolution_study.clear();
        }
    }
    let dir = case_dir(out, case.name)?;
    let mut progress = |line: &str| eprintln!("sheared-bed: {line}");

    let mut runs = Vec::new();
    for name in &options.cases {
        let file = format!("{name}.toml");
        runs.push(run_case(
            &case,
            &file,
            name,
            &[],
            options.end_time,
            &dir,
            &mut progress,
        )?);
        progress(&summary_line(runs.last().expect("a run")));
    }
    let mut coarse = None;
    if !options.resolution_study.is_empty() {
        let name = &options.resolution_study;
        let file = format!("{name}.toml");
        let spacing = options
            .coarse_spacing
            .ok_or("[full] needs coarse_spacing for the resolution study")?;
        let grid = case.grid_at(&file, spacing)?;
        let run = run_case(
            &case,
            &file,
            &format!("{name}-coarse"),
            &grid,
            options.end_time,
            &dir,
            &mut progress,
        )?;
        progress(&summary_line(&run));
        coarse = Some(run);
    }

    // The comparison with the experiments and the seed.
    let mut table = Table::new(
        [
            "case",
            "Re_b",
            "h_f/D exp / seed / Silt",
            "Sh exp / Silt",
            "<q_v>/q_f exp [range]",
            "seed",
            "Silt (batch-means error)",
            "inside the range",
        ]
        .map(String::from)
        .to_vec(),
    );
    let mut all_inside = true;
    for run in &runs {
        let e = experiments
            .get(&run.case)
            .ok_or_else(|| format!("no [experiments.{}] in reference.toml", run.case))?;
        let inside = run.flux_ratio >= e.flux_range[0] && run.flux_ratio <= e.flux_range[1];
        all_inside &= inside;
        table.push_row(vec![
            e.name.clone(),
            format!("{}", e.reynolds),
            format!(
                "{} / {} / {:.2}",
                e.clear_height,
                e.seed_clear_height,
                run.clear_height / run.diameter
            ),
            format!("{} / {:.3}", e.shields, run.shields),
            format!(
                "{:.2e} [{:.2e}, {:.2e}]",
                e.flux, e.flux_range[0], e.flux_range[1]
            ),
            format!("{:.2e}", e.seed_flux),
            match run.flux_error {
                Some(error) => format!("{:.2e} (+- {:.1e})", run.flux_ratio, error),
                None => format!("{:.2e}", run.flux_ratio),
            },
            String::from(if inside { "yes" } else { "NO" }),
        ]);
    }

    // The protocol and the cost of each run.
    let mut runs_table = Table::new(
        [
            "run",
            "D/h",
            "cells",
            "spheres",
            "switched to q_f at",
            "h_f reached its margin",
            "averaged over",
            "samples",
            "h_p/D, h_m/D",
            "flow rate error after the switch",
            "<q_v>/q_f first / second half",
            "correlation time of q_v",
            "markers disabled",
            "wall s per simulated s",
        ]
        .map(String::from)
        .to_vec(),
    );
    for run in runs.iter().chain(coarse.iter()) {
        runs_table.push_row(vec![
            run.case.clone(),
            format!("{:.1}", run.resolution),
            run.cells.to_string(),
            run.particles.to_string(),
            run.switched_at
                .map_or("never".into(), |t| format!("{t:.2}")),
            String::from(if run.reached_margin {
                "yes"
            } else {
                "no (limit)"
            }),
            run.averaging_from
                .map_or("-".into(), |t| format!("{:.2} .. {:.2}", t, run.end_time)),
            run.samples.to_string(),
            format!(
                "{:.2}, {:.2}",
                run.bed_height / run.diameter,
                run.mobile_height / run.diameter
            ),
            format!("{:.1e}", run.flow_rate_error),
            run.flux_halves
                .map_or("-".into(), |(a, b)| format!("{a:.2e} / {b:.2e}")),
            run.correlation_time
                .map_or("-".into(), |t| format!("{t:.2}")),
            run.disabled_markers
                .map_or("-".into(), |f| format!("{:.0} %", 100.0 * f)),
            format!("{:.0}", run.wall_per_simulated_second()),
        ]);
    }

    let mut notes = vec![
        "Source: the seed's sec. 6 and Tables 3-5 (Aussillous et al. 2013); scenes, protocol and set-up: validation/sheared-bed/. Judged: <q_v>_T / q_f inside the experimental range of every case.".to_string(),
    ];
    if let (Some(coarse), Some(fine)) = (
        &coarse,
        runs.iter().find(|r| r.case == options.resolution_study),
    ) {
        notes.push(format!(
            "Resolution study ({}): D/h = {:.1}: <q_v>/q_f = {:.3e}, h_f/D = {:.2}; D/h = {:.1}: {:.3e}, {:.2}.",
            fine.case,
            coarse.resolution,
            coarse.flux_ratio,
            coarse.clear_height / coarse.diameter,
            fine.resolution,
            fine.flux_ratio,
            fine.clear_height / fine.diameter
        ));
    }
    if let (Some(resolution), Some(averaging), Some(run)) = (
        options.seed_resolution,
        options.seed_averaging,
        runs.iter().find(|r| r.case == "a10"),
    ) {
        // Cells grow as (D/h)^3 and the steps as (D/h)^2 (the coupling's viscous limit nu dt/h^2 <= 1).
        let factor = (resolution / run.resolution).powi(5);
        let hours = run.wall_per_simulated_second() * factor * (averaging + 10.0) / 3600.0;
        notes.push(format!(
            "Cost: A10 at D/h = {:.1} takes {:.0} wall s per simulated second on this machine; the seed's D/h = {resolution} ({:.0}x the cells, {:.0}x the steps at nu dt/h^2 <= 1) over {averaging} s of average plus 10 s of protocol would take about {hours:.0} hours here.",
            run.resolution,
            run.wall_per_simulated_second(),
            (resolution / run.resolution).powi(3),
            (resolution / run.resolution).powi(2),
        ));
    }

    let passed = if quick {
        // The quick version runs the protocol through on a small box: it switches, averages, holds q_f.
        runs.iter().all(|r| {
            r.switched_at.is_some()
                && r.samples >= silt_ibm::protocol::BATCHES
                && r.flux_ratio.is_finite()
                && r.flux_ratio > 0.0
                && r.flow_rate_error <= criteria.flow_rate_relative
        })
    } else {
        !criteria.inside_experimental_range || all_inside
    };

    let mut series: Vec<Series> = runs
        .iter()
        .chain(coarse.iter())
        .map(|r| {
            Series::new(
                format!("{} (D/h = {:.0})", r.case.to_uppercase(), r.resolution),
                r.profile.iter().map(|&(y, u)| (u, y)).collect(),
                Style::LineMarkers,
            )
        })
        .collect();
    series.retain(|s| !s.points.is_empty());
    let flux_series: Vec<Series> = runs
        .iter()
        .chain(coarse.iter())
        .map(|r| {
            Series::new(
                format!("{} (D/h = {:.0})", r.case.to_uppercase(), r.resolution),
                // From the switch to q_f on: the mobilisation's flux is orders of magnitude larger.
                r.flux_series
                    .iter()
                    .copied()
                    .filter(|&(t, _)| r.switched_at.is_some_and(|s| t > s))
                    .collect(),
                Style::Line,
            )
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let figures = vec![
        png(
            &dir,
            "particle-profiles.png",
            &Plot {
                title: "Particle velocity near the bed top (seed Fig. 13 scaling)".into(),
                x: Axis::linear("u / (q_f / h_f)"),
                y: Axis::linear("(y - h_p) / h_f"),
                series,
            },
        )?,
        png(
            &dir,
            "particle-flux.png",
            &Plot {
                title: "Particle flux q_v / q_f (eq. 34) after the switch to q_f".into(),
                x: Axis::linear("t"),
                y: Axis::linear("q_v / q_f"),
                series: flux_series,
            },
        )?,
    ];
    let report = CaseReport {
        name: case.name.into(),
        passed,
        tables: vec![
            (
                "Particle flux against the experiments and the seed".into(),
                table,
            ),
            ("Runs".into(), runs_table),
        ],
        figures,
        notes,
        runs: case.runs(),
    };
    report.write(&dir)?;
    Ok(report)
}

fn summary_line(run: &BedRun) -> String {
    format!(
        "{}: <q_v>/q_f = {:.3e} (+- {}), h_f/D = {:.2}, Sh = {:.3}, {} samples, {:.0} wall s per simulated s",
        run.case,
        run.flux_ratio,
        run.flux_error.map_or("-".into(), |e| format!("{e:.1e}")),
        run.clear_height / run.diameter,
        run.shields,
        run.samples,
        run.wall_per_simulated_second()
    )
}
