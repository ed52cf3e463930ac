//! `silt bench sheared-bed`: the A10 set-up of `validation/sheared-bed` (D/h = 8, 266 spheres) after its dry
//! settling, at the mobilisation's flow rate: wall time per step at 1 and 2 threads split into the fluid,
//! the forcing (marker placement, passes, inner-fluid integrals), the particles with the collision model,
//! the eq. 32 flow-rate weights and the bed's measures; the same fluid stepped alone on the same grid and
//! state; and the wall time per simulated second.

use crate::bench_dem::{machine, pool};
use crate::case::CaseFiles;
use silt_core::model::{Horizon, Model};
use silt_ibm::model::CoupledModel;
use silt_io::scenes::coupled::CoupledScene;
use silt_io::scenes::{Override, SceneKind};
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct BedBenchOptions {
    pub threads: Vec<usize>,
    /// Scene changes (the quick version shrinks the box).
    pub changes: Vec<Override>,
    /// Coupled steps after the settling before the timing, and timed.
    pub warmup_steps: u64,
    pub timed_steps: u64,
}

impl Default for BedBenchOptions {
    fn default() -> Self {
        BedBenchOptions {
            threads: vec![1, 2],
            changes: Vec::new(),
            warmup_steps: 20,
            timed_steps: 100,
        }
    }
}

impl BedBenchOptions {
    /// A small box at D/h = 6 (the validation's quick set-up), a few steps.
    pub fn quick() -> Self {
        BedBenchOptions {
            threads: vec![1, 2],
            changes: vec![
                Override::new("fluid.cells", vec![36i64, 24, 54]),
                Override::new("fluid.spacing", 0.0148),
                Override::new("particles.1.count", 32i64),
                Override::new(
                    "particles.1.region",
                    toml::Value::try_from(
                        toml::toml! { min = [0.0, 0.0, 0.16] max = [0.5328, 0.3552, 0.75] },
                    )
                    .expect("a table"),
                ),
                Override::new(
                    "particles.0.region",
                    toml::Value::try_from(
                        toml::toml! { min = [0.0, 0.0, 0.0444] max = [0.5328, 0.3552, 0.1332] },
                    )
                    .expect("a table"),
                ),
                Override::new("simulation.dt", 1e-3),
                Override::new("bed.settling_time", 0.3),
                Override::new("bed.target_clear_height", 0.55),
            ],
            warmup_steps: 2,
            timed_steps: 4,
        }
    }
}

#[derive(Clone, Debug)]
pub struct BedBenchRow {
    pub threads: usize,
    pub seconds_per_step: f64,
    /// Parts of a coupled step, seconds per step.
    pub fluid: f64,
    pub forcing: f64,
    pub placing: f64,
    pub passes: f64,
    pub inner: f64,
    pub particles: f64,
    pub weights: f64,
    pub bed: f64,
    /// The fluid alone on the same grid and state, seconds per step, and its parts: the explicit
    /// increment, the Crank–Nicolson solves, the pressure solve, the projection's correction.
    pub fluid_alone: f64,
    pub fluid_parts: [f64; 4],
    /// Helmholtz solves by Jacobi sweeps and by the direct solver, per step.
    pub jacobi_solves: f64,
    pub direct_solves: f64,
}

pub struct BedBenchReport {
    pub machine: String,
    pub cells: usize,
    pub spheres: usize,
    pub dt: f64,
    pub rows: Vec<BedBenchRow>,
}

impl BedBenchReport {
    pub fn table(&self) -> String {
        let mut s = format!(
            "Machine: {}\nA10 set-up: {} cells, {} spheres, dt = {:e} (mobilisation flow rate)\n\n",
            self.machine, self.cells, self.spheres, self.dt
        );
        s.push_str(
            "| threads | s/step | fluid | forcing (placing / passes / inner) | particles | weights (eq. 32) | bed measures | fluid alone | step / fluid alone | forcing + particles / fluid alone | wall s per simulated s |\n\
             |--------:|-------:|------:|------------------------------------|----------:|-----------------:|-------------:|------------:|----------:|----------:|------:|\n",
        );
        for r in &self.rows {
            s.push_str(&format!(
                "| {} | {:.4} | {:.4} | {:.4} ({:.4} / {:.4} / {:.4}) | {:.4} | {:.4} | {:.4} | {:.4} | {:.2} | {:.2} | {:.0} |\n",
                r.threads,
                r.seconds_per_step,
                r.fluid,
                r.forcing,
                r.placing,
                r.passes,
                r.inner,
                r.particles,
                r.weights,
                r.bed,
                r.fluid_alone,
                r.seconds_per_step / r.fluid_alone,
                (r.forcing + r.particles) / r.fluid_alone,
                r.seconds_per_step / self.dt,
            ));
        }
        s.push_str(
            "\nThe fluid alone, split (s/step):\n\n\
             | threads | explicit increment | Crank–Nicolson solves (Jacobi / direct per step) | pressure solve | correction |\n\
             |--------:|-------------------:|------------------------------------------------|---------------:|-----------:|\n",
        );
        for r in &self.rows {
            let [momentum, helmholtz, poisson, correction] = r.fluid_parts;
            s.push_str(&format!(
                "| {} | {momentum:.4} | {helmholtz:.4} ({:.0} / {:.0}) | {poisson:.4} | {correction:.4} |\n",
                r.threads, r.jacobi_solves, r.direct_solves,
            ));
        }
        s
    }
}

/// The timers of the coupled model: forcing, placing, passes, inner, particles, weights, bed.
fn timers(model: &CoupledModel) -> [f64; 7] {
    let p = &model.particles;
    [
        p.forcing_seconds,
        p.forcing.placing_seconds,
        p.forcing.passes_seconds,
        p.inner_seconds,
        p.particle_seconds,
        p.weights_seconds,
        model.bed_seconds,
    ]
}

pub fn run(options: &BedBenchOptions, log: &mut dyn FnMut(&str)) -> Result<BedBenchReport, String> {
    let case = CaseFiles::open("sheared-bed", false)?;
    let scene = case.scene("a10.toml", &options.changes, CoupledScene::parse)?;
    let scene = Box::new(scene);
    let settling = scene.bed.as_ref().map_or(0.0, |b| b.settling_time);
    let mut model = scene.build().map_err(|e| e.to_string())?;
    let dt = model.dt;
    log(&format!("settling dry to t = {settling} ..."));
    while model.time() + 0.5 * dt < settling {
        model
            .advance(Horizon::Steps(1))
            .map_err(|e| e.to_string())?;
    }
    for _ in 0..options.warmup_steps {
        model
            .advance(Horizon::Steps(1))
            .map_err(|e| e.to_string())?;
    }
    let start = model.checkpoint();
    let mut rows = Vec::new();
    for &threads in &options.threads {
        model.restore(start.clone())?;
        let before = timers(&model);
        let clock = Instant::now();
        pool(threads).install(|| -> Result<(), String> {
            for _ in 0..options.timed_steps {
                model
                    .advance(Horizon::Steps(1))
                    .map_err(|e| e.to_string())?;
            }
            Ok(())
        })?;
        let total = clock.elapsed().as_secs_f64();
        let after = timers(&model);
        let per_step: Vec<f64> = (0..7)
            .map(|i| (after[i] - before[i]) / options.timed_steps as f64)
            .collect();
        let seconds_per_step = total / options.timed_steps as f64;

        // The fluid alone: the same solver, state and driving, without the spheres.
        let (mut fluid, _) = scene.halves().map_err(|e| e.to_string())?;
        fluid.config.driving = model.fluid.config.driving.clone();
        fluid.restore(start.fluid.clone())?;
        let times_before = fluid.times;
        let clock = Instant::now();
        pool(threads).install(|| -> Result<(), String> {
            for _ in 0..options.timed_steps {
                fluid
                    .step_by(dt, &mut silt_fluid::solver::NoForcing)
                    .map_err(|e| e.to_string())?;
            }
            Ok(())
        })?;
        let fluid_alone = clock.elapsed().as_secs_f64() / options.timed_steps as f64;
        let (t, t0, steps) = (&fluid.times, &times_before, options.timed_steps as f64);
        let fluid_parts = [
            t.momentum - t0.momentum,
            t.helmholtz - t0.helmholtz,
            t.poisson - t0.poisson,
            t.correction - t0.correction,
        ]
        .map(|x| x / steps);
        let jacobi_solves = (t.jacobi_solves - t0.jacobi_solves) as f64 / steps;
        let direct_solves = (t.direct_solves - t0.direct_solves) as f64 / steps;
        let parts: f64 = per_step[0] + per_step[4] + per_step[5] + per_step[6];
        let row = BedBenchRow {
            threads,
            seconds_per_step,
            fluid: seconds_per_step - parts,
            forcing: per_step[0],
            placing: per_step[1],
            passes: per_step[2],
            inner: per_step[3],
            particles: per_step[4],
            weights: per_step[5],
            bed: per_step[6],
            fluid_alone,
            fluid_parts,
            jacobi_solves,
            direct_solves,
        };
        log(&format!(
            "{threads} threads: {seconds_per_step:.4} s/step, fluid alone {fluid_alone:.4}"
        ));
        rows.push(row);
    }
    Ok(BedBenchReport {
        machine: machine(),
        cells: model.fluid.grid().cell_count(),
        spheres: model.particles.dem.particles.len(),
        dt,
        rows,
    })
}
