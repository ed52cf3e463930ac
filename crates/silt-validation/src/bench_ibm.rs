//! `silt bench ibm`: wall time per step of the coupled solver and its split (fluid, immersed-boundary
//! forcing, particles with the collision model), at 1 and 2 threads, on the two problems of issue 4:
//!
//! (a) ten Cate et al. (2002) case E3 at D/h = 16 (107 x 107 x 171 cells, one sphere), the first steps
//!     after release;
//! (b) 500 polydisperse spheres (Gaussian diameters, mean D = 8 h, sigma = 0.1 D, rho_p / rho_f = 2.5)
//!     in a 128 x 64 x 128 box, periodic in x and z with walls in y, under gravity along -y, placed at
//!     random without overlap, the fluid at rest.

use crate::bench_dem::{machine, pool};
use crate::case::CaseFiles;
use crate::ten_cate;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use silt_dem::domain::Domain;
use silt_dem::integrator::Integrator;
use silt_dem::material::Material;
use silt_dem::particles::Particles;
use silt_dem::system::DemSystem;
use silt_dem::wall::Wall;
use silt_fluid::boundary::Boundaries;
use silt_fluid::solver::FluidSolver;
use silt_ibm::coupling::coupled_step;
use silt_ibm::coupling::CoupledParticles;
use silt_ibm::Vec3;
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct IbmBenchOptions {
    pub threads: Vec<usize>,
    /// Cells per diameter of the ten Cate sphere.
    pub ten_cate_d_over_h: f64,
    /// Spheres, box (cells) and mean D/h of the suspension.
    pub spheres: usize,
    pub box_cells: [usize; 3],
    pub mean_d_over_h: f64,
    pub warmup_steps: usize,
    pub timed_steps: usize,
}

impl Default for IbmBenchOptions {
    fn default() -> Self {
        IbmBenchOptions {
            threads: vec![1, 2],
            ten_cate_d_over_h: 16.0,
            spheres: 500,
            box_cells: [128, 64, 128],
            mean_d_over_h: 8.0,
            warmup_steps: 2,
            timed_steps: 10,
        }
    }
}

impl IbmBenchOptions {
    pub fn quick() -> Self {
        IbmBenchOptions {
            threads: vec![1, 2],
            ten_cate_d_over_h: 6.0,
            spheres: 20,
            box_cells: [48, 32, 48],
            mean_d_over_h: 6.0,
            warmup_steps: 1,
            timed_steps: 2,
        }
    }
}

#[derive(Clone, Debug)]
pub struct IbmBenchRow {
    pub case: String,
    pub threads: usize,
    pub cells: usize,
    pub markers: usize,
    pub seconds_per_step: f64,
    pub fluid: f64,
    pub forcing: f64,
    /// Of the forcing: placing the markers, the passes, the inner-fluid integrals.
    pub placing: f64,
    pub passes: f64,
    pub inner: f64,
    pub particles: f64,
}

pub struct IbmBenchReport {
    pub machine: String,
    pub rows: Vec<IbmBenchRow>,
}

impl IbmBenchReport {
    pub fn table(&self) -> String {
        let mut s = format!("Machine: {}\n\n", self.machine);
        s.push_str(
            "| case | threads | cells | markers | s/step | fluid | forcing (placing / passes / inner) | particles | forcing + particles / fluid |\n\
             |------|--------:|------:|--------:|-------:|------:|--------:|----------:|----------:|\n",
        );
        for r in &self.rows {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {:.4} | {:.4} | {:.4} ({:.4} / {:.4} / {:.4}) | {:.4} | {:.2} |\n",
                r.case,
                r.threads,
                r.cells,
                r.markers,
                r.seconds_per_step,
                r.fluid,
                r.forcing,
                r.placing,
                r.passes,
                r.inner,
                r.particles,
                (r.forcing + r.particles) / r.fluid
            ));
        }
        s
    }
}

/// A coupled problem ready to step.
pub struct Problem {
    pub fluid: FluidSolver,
    pub coupled: CoupledParticles,
}

impl Problem {
    fn markers(&self) -> usize {
        (0..self.coupled.dem.particles.len())
            .map(|p| self.coupled.forcing.markers(p).len())
            .sum()
    }
}

/// The suspension of problem (b).
pub fn suspension(options: &IbmBenchOptions) -> Result<Problem, String> {
    let h = 1.0;
    let cells = options.box_cells;
    let lengths = cells.map(|n| n as f64 * h);
    let (rho_f, nu, g) = (1.0, 0.05, 1e-3);
    let dt = 0.5;
    let boundaries = Boundaries::channel(1);
    let config = crate::setup::crank_nicolson_fluid(cells, h, boundaries, nu, dt, [0.0; 3]);
    let fluid = FluidSolver::new(config.clone())?;
    let materials = vec![Material {
        name: "grain".into(),
        density: 2.5,
        e_dry: 0.97,
        poisson: 0.3,
        mu_s: 0.3,
        mu_k: 0.3,
    }];
    let model = crate::setup::wet_seed_model(&materials, dt, rho_f, nu, h, g);
    // Random sequential placement, clear of the walls by 2 h and of each other by h.
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mean = options.mean_d_over_h * h;
    let mut particles = Particles::default();
    let mut attempts = 0;
    while particles.len() < options.spheres {
        attempts += 1;
        if attempts > 1_000_000 {
            return Err("could not place the spheres".into());
        }
        let gaussian: f64 = (0..12).map(|_| rng.gen::<f64>()).sum::<f64>() - 6.0;
        let radius = 0.5 * mean * (1.0 + 0.1 * gaussian.clamp(-2.0, 2.0));
        let y_margin = radius + 2.0 * h;
        let x = Vec3::new(
            rng.gen::<f64>() * lengths[0],
            y_margin + rng.gen::<f64>() * (lengths[1] - 2.0 * y_margin),
            rng.gen::<f64>() * lengths[2],
        );
        let clear = (0..particles.len()).all(|q| {
            let mut d = particles.position[q] - x;
            for a in [0, 2] {
                d[a] -= lengths[a] * (d[a] / lengths[a]).round();
            }
            d.length() > particles.radius[q] + radius + h
        });
        if clear {
            particles.push(x, Vec3::ZERO, radius, 2.5, 0, false);
        }
    }
    let wall = |y: f64, normal: f64| Wall {
        point: Vec3::new(0.0, y, 0.0),
        normal: Vec3::new(0.0, normal, 0.0),
        material: 0,
        velocity: Vec3::ZERO,
    };
    let dem = DemSystem::new(
        Domain {
            min: Vec3::ZERO,
            max: Vec3::from_array(lengths),
            periodic: [true, false, true],
        },
        Vec3::new(0.0, -g, 0.0),
        materials,
        model,
        particles,
        vec![wall(0.0, 1.0), wall(lengths[1], -1.0)],
        Integrator::SEED,
        dt,
        0.1 * mean,
    );
    let coupled = CoupledParticles::new(dem, config.grid, &config.boundaries, rho_f, 3, 0.3);
    Ok(Problem { fluid, coupled })
}

/// Times `timed_steps` steps after `warmup_steps`, in a pool of `threads`.
fn time_problem(
    case: &str,
    make: &(dyn Fn() -> Result<Problem, String> + Sync),
    threads: usize,
    options: &IbmBenchOptions,
) -> Result<IbmBenchRow, String> {
    pool(threads).install(|| {
        let mut problem = make()?;
        for _ in 0..options.warmup_steps {
            let dt = problem.fluid.next_dt();
            coupled_step(&mut problem.fluid, &mut problem.coupled, dt)
                .map_err(|e| e.to_string())?;
        }
        let split = |p: &Problem| {
            [
                p.coupled.forcing_seconds,
                p.coupled.particle_seconds,
                p.coupled.forcing.placing_seconds,
                p.coupled.forcing.passes_seconds,
                p.coupled.inner_seconds,
            ]
        };
        let before = split(&problem);
        let clock = Instant::now();
        for _ in 0..options.timed_steps {
            let dt = problem.fluid.next_dt();
            coupled_step(&mut problem.fluid, &mut problem.coupled, dt)
                .map_err(|e| e.to_string())?;
        }
        let steps = options.timed_steps as f64;
        let total = clock.elapsed().as_secs_f64() / steps;
        let after = split(&problem);
        let per_step: Vec<f64> = after
            .iter()
            .zip(before)
            .map(|(a, b)| (a - b) / steps)
            .collect();
        let (forcing, particles) = (per_step[0], per_step[1]);
        Ok(IbmBenchRow {
            case: case.to_string(),
            threads,
            cells: problem.fluid.config.grid.cell_count(),
            markers: problem.markers(),
            seconds_per_step: total,
            fluid: total - forcing - particles,
            forcing,
            placing: per_step[2],
            passes: per_step[3],
            inner: per_step[4],
            particles,
        })
    })
}

pub fn run(
    options: &IbmBenchOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<IbmBenchReport, String> {
    let ten_cate_problem = || -> Result<Problem, String> {
        // The case's scene (validation/ten-cate/settling.toml) at the bench's resolution.
        let case = CaseFiles::open("ten-cate", false)?;
        let parameters = ten_cate::Parameters {
            d_over_h: options.ten_cate_d_over_h,
            ..case.parameters()?
        };
        let (model, _) = ten_cate::model(&case, "E3", &parameters)?;
        Ok(Problem {
            fluid: model.fluid,
            coupled: model.particles,
        })
    };
    let suspension_problem = || suspension(options);
    let mut rows = Vec::new();
    for &threads in &options.threads {
        let name = format!("ten Cate E3, D/h = {}", options.ten_cate_d_over_h);
        progress(&format!("{name} on {threads} thread(s)"));
        rows.push(time_problem(&name, &ten_cate_problem, threads, options)?);
        let name = format!(
            "{} spheres, D/h = {} (sigma 0.1 D), {} x {} x {}",
            options.spheres,
            options.mean_d_over_h,
            options.box_cells[0],
            options.box_cells[1],
            options.box_cells[2]
        );
        progress(&format!("{name} on {threads} thread(s)"));
        rows.push(time_problem(&name, &suspension_problem, threads, options)?);
    }
    Ok(IbmBenchReport {
        machine: machine(),
        rows,
    })
}
