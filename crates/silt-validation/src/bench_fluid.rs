//! `silt bench fluid`: time steps of the fluid solver on the two problems the issue names, beside the
//! figures of CaNS (Costa 2018) measured on this machine, and a STREAM triad for the memory bandwidth.
//!
//! (a) Taylor–Green vortex, 128^3, triply periodic, Re = 1600 (u = sin x cos y cos z, ...,
//!     nu = 1/1600 on [0, 2 pi)^3);
//! (b) channel 128^3 with walls at z = 0 and 1 (h = 1/128), constant flow rate (bulk velocity 1,
//!     Re_b = 5600), started from the laminar profile with a few deterministic disturbances.
//!
//! Each is run with explicit and with Crank–Nicolson viscous terms, at 1 and 2 threads.

use crate::bench_dem::{machine, pool};
use rayon::prelude::*;
use silt_fluid::{Boundaries, Driving, FluidConfig, FluidSolver, Grid, TimeStep, Viscous};
use std::f64::consts::PI;
use std::time::Instant;

/// CaNS, -O3, explicit viscous terms, 55 steps without output (issue 3): seconds per step on 1 and 2
/// MPI ranks.
pub const CANS_TAYLOR_GREEN: [f64; 2] = [0.461, 0.238];
pub const CANS_CHANNEL: [f64; 2] = [0.405, 0.214];

/// What to run.
#[derive(Clone, Debug)]
pub struct FluidBenchOptions {
    pub cells: usize,
    pub threads: Vec<usize>,
    /// Untimed steps first (they build the solvers' factorisations).
    pub warmup_steps: u64,
    pub timed_steps: u64,
    /// Timed blocks of `timed_steps` per configuration, explicit and Crank–Nicolson alternating; the
    /// best block of each counts (the machine's speed drifts).
    pub rounds: usize,
}

impl Default for FluidBenchOptions {
    fn default() -> Self {
        FluidBenchOptions {
            cells: 128,
            threads: vec![1, 2],
            warmup_steps: 2,
            timed_steps: 20,
            rounds: 3,
        }
    }
}

impl FluidBenchOptions {
    /// A small version for a smoke test.
    pub fn quick() -> Self {
        FluidBenchOptions {
            cells: 32,
            threads: vec![1, 2],
            warmup_steps: 1,
            timed_steps: 3,
            rounds: 1,
        }
    }
}

/// One timed configuration.
#[derive(Clone, Debug)]
pub struct FluidBenchRow {
    pub case: &'static str,
    pub viscous: Viscous,
    pub threads: usize,
    pub seconds_per_step: f64,
    pub million_cell_steps_per_second: f64,
    /// Doubles held per cell by the solver (fields, stage arrays, solver tables).
    pub doubles_per_cell: f64,
    /// Seconds per step in: momentum right-hand side, Helmholtz (and velocity update), Poisson,
    /// correction (projection, pressure update, driving, ghosts).
    pub split: [f64; 4],
    /// CaNS's seconds per step for this case and thread count (explicit viscous terms), if measured.
    pub cans: Option<f64>,
}

/// STREAM triad a = b + s c over arrays far larger than the caches.
#[derive(Clone, Debug)]
pub struct TriadRow {
    pub threads: usize,
    pub gigabytes_per_second: f64,
}

#[derive(Clone, Debug)]
pub struct FluidBenchReport {
    pub machine: String,
    pub cells: usize,
    pub rows: Vec<FluidBenchRow>,
    pub triad: Vec<TriadRow>,
    pub rounds: usize,
    pub timed_steps: u64,
}

impl FluidBenchReport {
    /// Markdown tables.
    pub fn table(&self) -> String {
        let n = self.cells;
        let mut out = format!(
            "{n}^3 cells, {}; seconds per step: the best of {} alternating blocks of {} steps\n\n| case | viscous | threads | s/step | M cell-steps/s | CaNS s/step | Silt / CaNS | doubles/cell | momentum | Helmholtz | Poisson | correction |\n\
             |------|---------|--------:|-------:|---------------:|------------:|------------:|-------------:|---------:|----------:|--------:|-----------:|\n",
            self.machine, self.rounds, self.timed_steps
        );
        for r in &self.rows {
            let (cans, ratio) = match r.cans {
                Some(c) => (format!("{c:.3}"), format!("{:.2}", r.seconds_per_step / c)),
                None => ("-".into(), "-".into()),
            };
            out += &format!(
                "| {} | {} | {} | {:.3} | {:.2} | {cans} | {ratio} | {:.1} | {:.3} | {:.3} | {:.3} | {:.3} |\n",
                r.case,
                match r.viscous {
                    Viscous::Explicit => "explicit",
                    Viscous::CrankNicolson => "Crank–Nicolson",
                },
                r.threads,
                r.seconds_per_step,
                r.million_cell_steps_per_second,
                r.doubles_per_cell,
                r.split[0],
                r.split[1],
                r.split[2],
                r.split[3],
            );
        }
        out += "\nImplicit / explicit cost per step:\n\n| case | threads | ratio |\n|------|--------:|------:|\n";
        for explicit in self.rows.iter().filter(|r| r.viscous == Viscous::Explicit) {
            if let Some(implicit) = self.rows.iter().find(|r| {
                r.case == explicit.case
                    && r.threads == explicit.threads
                    && r.viscous == Viscous::CrankNicolson
            }) {
                out += &format!(
                    "| {} | {} | {:.2} |\n",
                    explicit.case,
                    explicit.threads,
                    implicit.seconds_per_step / explicit.seconds_per_step
                );
            }
        }
        out +=
            "\nSTREAM triad (a = b + s c, 3 x 160 MB):\n\n| threads | GB/s |\n|--------:|-----:|\n";
        for t in &self.triad {
            out += &format!("| {} | {:.1} |\n", t.threads, t.gigabytes_per_second);
        }
        out
    }
}

/// The Taylor–Green problem (a) on n^3 cells: the validation's 3D vortex at nu = 1/1600, dt = 0.25 h.
pub fn taylor_green(n: usize, viscous: Viscous) -> Result<FluidSolver, String> {
    crate::taylor_green::solver(n, true, 1.0 / 1600.0, 0.25, viscous)
}

/// The channel problem (b) on n^3 cells: walls at z = 0 and 1.
pub fn channel(n: usize, viscous: Viscous) -> Result<FluidSolver, String> {
    let h = 1.0 / n as f64;
    let config = FluidConfig {
        grid: Grid {
            cells: [n; 3],
            spacing: h,
            origin: [0.0; 3],
            offset: [0; 3],
        },
        boundaries: Boundaries::channel(2),
        viscosity: 1.0 / 5600.0,
        viscous,
        driving: Driving::FlowRate {
            axis: 0,
            bulk_velocity: 1.0.into(),
        },
        body_force: silt_fluid::Signal::constants([0.0; 3]),
        time_step: TimeStep::Fixed(0.2 * h),
    };
    let mut s = FluidSolver::new(config)?;
    let k = 2.0 * PI;
    s.set_velocity(|c, [x, y, z]| {
        let wall = (PI * z).sin();
        match c {
            0 => 6.0 * z * (1.0 - z) + 0.1 * wall * (k * y).cos() * (2.0 * k * x).sin(),
            1 => 0.1 * wall * (k * x).cos() * (k * y).sin(),
            _ => 0.05 * wall * wall * (k * x).sin() * (k * y).cos(),
        }
    });
    Ok(s)
}

/// Builds a benchmark problem on n^3 cells.
type MakeSolver = fn(usize, Viscous) -> Result<FluidSolver, String>;

/// Times the steps of fresh solvers built by `make` with explicit and with Crank–Nicolson viscous terms,
/// in a pool of `threads` threads: `rounds` blocks of each, alternating, the best block of each reported.
fn time_case(
    case: &'static str,
    make: MakeSolver,
    cans: [f64; 2],
    threads: usize,
    options: &FluidBenchOptions,
) -> Result<[FluidBenchRow; 2], String> {
    pool(threads).install(|| {
        let viscous = [Viscous::Explicit, Viscous::CrankNicolson];
        let mut solvers = Vec::new();
        for v in viscous {
            let mut s = make(options.cells, v)?;
            for _ in 0..options.warmup_steps {
                s.step().map_err(|e| e.to_string())?;
            }
            solvers.push(s);
        }
        let steps = options.timed_steps as f64;
        let mut best = [(f64::INFINITY, [0.0; 4]); 2];
        for _ in 0..options.rounds.max(1) {
            for (s, best) in solvers.iter_mut().zip(&mut best) {
                s.times = Default::default();
                let clock = Instant::now();
                for _ in 0..options.timed_steps {
                    s.step().map_err(|e| e.to_string())?;
                }
                let seconds = clock.elapsed().as_secs_f64() / steps;
                if seconds < best.0 {
                    let t = s.times;
                    *best = (
                        seconds,
                        [t.momentum, t.helmholtz, t.poisson, t.correction].map(|x| x / steps),
                    );
                }
            }
        }
        let row = |k: usize| {
            let s = &solvers[k];
            let cells = s.grid().cell_count() as f64;
            let (seconds, split) = best[k];
            FluidBenchRow {
                case,
                viscous: viscous[k],
                threads,
                seconds_per_step: seconds,
                million_cell_steps_per_second: cells / seconds / 1e6,
                doubles_per_cell: s.allocated_bytes() as f64 / 8.0 / cells,
                split,
                cans: (options.cells == 128 && viscous[k] == Viscous::Explicit && threads <= 2)
                    .then(|| cans[threads - 1]),
            }
        };
        Ok([row(0), row(1)])
    })
}

/// STREAM triad over three arrays of 20 million doubles, best of five.
pub fn stream_triad(threads: usize) -> TriadRow {
    const LEN: usize = 20_000_000;
    let b = vec![1.0f64; LEN];
    let c = vec![2.0f64; LEN];
    let mut a = vec![0.0f64; LEN];
    let best = pool(threads).install(|| {
        (0..5)
            .map(|_| {
                let clock = Instant::now();
                a.par_chunks_mut(1 << 16)
                    .zip(b.par_chunks(1 << 16))
                    .zip(c.par_chunks(1 << 16))
                    .for_each(|((a, b), c)| {
                        for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
                            *a = b + 3.0 * c;
                        }
                    });
                clock.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    });
    std::hint::black_box(&a);
    TriadRow {
        threads,
        gigabytes_per_second: 3.0 * 8.0 * LEN as f64 / best / 1e9,
    }
}

/// Runs the benchmark, reporting progress through `progress`.
pub fn run(
    options: &FluidBenchOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<FluidBenchReport, String> {
    let mut rows = Vec::new();
    let cases: [(&'static str, MakeSolver, [f64; 2]); 2] = [
        ("Taylor–Green", taylor_green, CANS_TAYLOR_GREEN),
        ("channel", channel, CANS_CHANNEL),
    ];
    for (case, make, cans) in cases {
        let mut by_viscous = [Vec::new(), Vec::new()];
        for &threads in &options.threads {
            progress(&format!(
                "{case} {}^3, explicit and Crank–Nicolson alternating, {threads} thread(s)...",
                options.cells
            ));
            let [explicit, implicit] = time_case(case, make, cans, threads, options)?;
            by_viscous[0].push(explicit);
            by_viscous[1].push(implicit);
        }
        rows.extend(by_viscous.into_iter().flatten());
    }
    progress("STREAM triad...");
    let triad = options.threads.iter().map(|&t| stream_triad(t)).collect();
    Ok(FluidBenchReport {
        machine: machine(),
        cells: options.cells,
        rows,
        triad,
        rounds: options.rounds.max(1),
        timed_steps: options.timed_steps,
    })
}
